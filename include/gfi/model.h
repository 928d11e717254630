/* Truth models: samplers, densities and characteristic functions.
 *
 * A gfi_model is an immutable object describing a probability distribution
 * on R^D. All functions taking a const model are thread-safe. Points are
 * row-major: x[i*D + j] is coordinate j of point i. */
#ifndef GFI_MODEL_H
#define GFI_MODEL_H

#include "export.h"
#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gfi_model gfi_model;

typedef enum {
  GFI_MODEL_MIXTURE = 0,   /* normal mixture (a single normal is K = 1) */
  GFI_MODEL_LAPLACE,       /* 1-D Laplace(mu, b) */
  GFI_MODEL_CAUCHY,        /* 1-D Cauchy(x0, gamma) */
  GFI_MODEL_STUDENT_T,     /* 1-D Student-t(nu), location 0, scale 1 */
  GFI_MODEL_UNIFORM,       /* 1-D Uniform(a, b) */
  GFI_MODEL_BETA,          /* 1-D Beta(a, b) on [0, 1] */
  GFI_MODEL_PRODUCT        /* product of 1-D models, one per axis */
} gfi_model_kind;

/* Normal N(mean, cov) in D dimensions. mean may be NULL (zero); cov is a
 * row-major D x D symmetric positive-definite matrix, or NULL for identity.
 * GFI_ENOTPD when cov is not symmetric positive definite. */
GFI_EXPORT int gfi_model_normal(gfi_model **out, size_t D, const double *mean, const double *cov);

/* Normal mixture sum_a w[a] N(means[a*D..], covs[a*D*D..]); weights must be
 * positive and are normalised to sum 1. */
GFI_EXPORT int gfi_model_mixture(gfi_model **out, size_t D, size_t K, const double *w,
                      const double *means, const double *covs);

/* Marron & Wand (1992) density k = 1..15 (1-D normal mixtures). */
GFI_EXPORT int gfi_model_marron_wand(gfi_model **out, int k);
/* Name of Marron-Wand density k ("claw", ...), NULL when out of range. */
GFI_EXPORT const char *gfi_marron_wand_name(int k);

GFI_EXPORT int gfi_model_laplace(gfi_model **out, double mu, double b);
GFI_EXPORT int gfi_model_cauchy(gfi_model **out, double x0, double gamma);
GFI_EXPORT int gfi_model_student_t(gfi_model **out, double nu);
GFI_EXPORT int gfi_model_uniform(gfi_model **out, double a, double b);
GFI_EXPORT int gfi_model_beta(gfi_model **out, double a, double b);

/* Product of D one-dimensional models (copied; the caller keeps ownership of
 * the factors). GFI_EDIM if a factor is not 1-D. */
GFI_EXPORT int gfi_model_product(gfi_model **out, size_t D, const gfi_model *const *factors);

/* Parse a model specification for dimension D (the CLI's --model):
 *   normal                     standard normal in D dimensions
 *   normal:cov=c11,c12,...     N(0, C), C row-major D x D
 *   normal:mean=m1,..[;cov=..] with a mean (';' separates keys)
 *   mix:W1*NORMAL|W2*NORMAL|.. normal mixture, NORMAL one of the normal forms
 *                              above, weights W > 0 normalised to sum 1
 *   mw:K                       Marron-Wand K = 1..15 (D = 1)
 *   laplace[:mu,b]  cauchy[:x0,gamma]  t:NU  uniform[:a,b]  beta:A,B
 *   1-D families given with D > 1 mean the i.i.d. product over D axes.
 * Parameters must keep the sampler and the density finite: locations and
 * scales (mean, covariance entries, mu, b, x0, gamma, a, b) at most
 * GFI_MODEL_MAX_PARAM in magnitude, scales (b, gamma, b - a, covariance
 * diagonal) at least GFI_MODEL_MIN_SCALE, t's NU in [GFI_MODEL_MIN_NU,
 * GFI_MODEL_MAX_NU] and beta's shapes in [GFI_MODEL_MIN_SHAPE,
 * GFI_MODEL_MAX_SHAPE]; a specification outside is GFI_EMODEL naming the
 * parameter and the limit.
 * On failure returns GFI_EMODEL (or GFI_ENOTPD, GFI_EDIM) and writes a
 * message to err (may be NULL). */
#define GFI_MODEL_MAX_PARAM 1e100
#define GFI_MODEL_MIN_SCALE 1e-100
#define GFI_MODEL_MIN_NU 0.1
#define GFI_MODEL_MAX_NU 1e8
#define GFI_MODEL_MIN_SHAPE 1e-2
#define GFI_MODEL_MAX_SHAPE 1e6
GFI_EXPORT int gfi_model_parse(gfi_model **out, const char *spec, size_t D, gfi_errinfo *err);

GFI_EXPORT void gfi_model_free(gfi_model *m);

GFI_EXPORT size_t gfi_model_dim(const gfi_model *m);
GFI_EXPORT gfi_model_kind gfi_model_get_kind(const gfi_model *m);
/* Canonical text description, e.g. "mixture(K=2,D=1)"; never NULL. */
GFI_EXPORT const char *gfi_model_describe(const gfi_model *m);

/* Draw n points into x (n x D, row-major). */
GFI_EXPORT int gfi_model_sample(const gfi_model *m, gsl_rng *r, size_t n, double *x);

/* Density at n points (n x D) into p. */
GFI_EXPORT int gfi_model_pdf(const gfi_model *m, size_t n, const double *x, double *p);

/* 1 when the characteristic function is available (all kinds above). */
GFI_EXPORT int gfi_model_has_cf(const gfi_model *m);

/* Characteristic function psi(t) = E exp(i t.X) at n frequencies t (n x D):
 * real parts into re, imaginary parts into im. */
GFI_EXPORT int gfi_model_cf(const gfi_model *m, size_t n, const double *t, double *re, double *im);

/* For normal mixtures (including single normals and Marron-Wand): the
 * components. Pointers stay valid while the model lives. GFI_EUNSUPPORTED for
 * other kinds. covs are K row-major D x D matrices. */
GFI_EXPORT int gfi_model_mixture_parts(const gfi_model *m, size_t *K, const double **w,
                            const double **means, const double **covs);

/* For products: the D factors (borrowed). GFI_EUNSUPPORTED otherwise. */
GFI_EXPORT int gfi_model_product_factors(const gfi_model *m, size_t *D, const gfi_model *const **factors);

/* ---- smoothness (the hypotheses of FourierFormer's rate theorems; the theorems and rate
 * checks themselves are experiment code, experiments/gfi_exp/theorems.h) ---- */

typedef enum { GFI_SUPERSMOOTH = 1, GFI_ORDINARY_SMOOTH = 2 } gfi_smooth_class;

/* Smoothness of a truth (FourierFormer Def. 3): normal mixtures are
 * supersmooth with alpha = 2, Cauchy and Student-t supersmooth with alpha = 1
 * (|psi| ~ exp(-c|t|)), Laplace ordinary smooth with beta = 2. Products take
 * the weakest factor. GFI_EUNSUPPORTED for other kinds. */
GFI_EXPORT int gfi_model_smoothness(const gfi_model *m, gfi_smooth_class *cls, double *order);

/* 1 when the truth's density has two continuous derivatives on R^D
 * (Theorem 1's hypothesis): normal mixtures, Cauchy, Student-t; not Laplace
 * (a kink) or uniform (jumps); Beta is reported as not C^2 (it is only for
 * a, b > 3, and the exact MISE does not cover Beta truths); products when
 * every factor is. */
GFI_EXPORT int gfi_model_is_c2(const gfi_model *m);

#ifdef __cplusplus
}
#endif
#endif
