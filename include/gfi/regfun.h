/* Regression truths: a function f on R^D, a noise law, and the sampler of
 * (x_i, y_i) pairs with x_i from a truth model (the design) and
 * y_i = f(x_i) + sd(x_i) eps_i, eps_i standard normal.
 *
 * Specifications (the CLI's --truth), for dimension D:
 *   poly:c0,c1,...,cp          f(x) = sum_k c_k x_1^k   (a polynomial of the first axis;
 *                              poly:0,1,-0.5,0.2 is a cubic)
 *   poly:c0,...,cp;axis=J      the same polynomial of axis J (1-based)
 *   polysum:c0,c1,...,cp       f(x) = sum_j sum_k c_k x_j^k (every axis; the
 *                              constant c0 counted once per axis)
 *   sin[:w]                    f(x) = sin(w (x_1 + ... + x_D)), w = 1 by default
 *   prod-sin[:w]               f(x) = prod_j sin(w x_j)
 * Noise specifications (--noise):
 *   none | gauss:S (sd = S) | hetero:S0,S1 (sd(x) = S0 + S1 |x_1|)
 * Objects are immutable; evaluation is thread-safe. */
#ifndef GFI_REGFUN_H
#define GFI_REGFUN_H

#include "export.h"
#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "status.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gfi_regfun gfi_regfun;

/* Parse a truth specification for dimension D. GFI_EMODEL (message in err,
 * err->column at the offending character) or GFI_EDIM (axis out of range).
 * Coefficients, frequencies and noise sds are limited to
 * GFI_REGFUN_MAX_PARAM in magnitude (GFI_EMODEL naming the limit); a truth
 * can still overflow at far design points, which callers check. */
#define GFI_REGFUN_MAX_PARAM 1e100
GFI_EXPORT int gfi_regfun_parse(gfi_regfun **out, const char *spec, size_t D, gfi_errinfo *err);
/* f at n points (n x D) into y[n]. */
GFI_EXPORT int gfi_regfun_eval(const gfi_regfun *f, size_t n, const double *x, double *y);
GFI_EXPORT size_t gfi_regfun_dim(const gfi_regfun *f);
/* Canonical text, e.g. "poly(axis 1; 0,1,-0.5,0.2)"; never NULL. */
GFI_EXPORT const char *gfi_regfun_describe(const gfi_regfun *f);
GFI_EXPORT void gfi_regfun_free(gfi_regfun *f);

typedef enum { GFI_NOISE_NONE = 0, GFI_NOISE_GAUSS = 1, GFI_NOISE_HETERO = 2 } gfi_noise_kind;
typedef struct gfi_noise {
  gfi_noise_kind kind;
  double s0, s1;
} gfi_noise;

/* Parse a noise specification (NULL or "none": no noise). GFI_EMODEL with a
 * message on failure (negative or non-finite sd). */
GFI_EXPORT int gfi_noise_parse(gfi_noise *n, const char *spec, gfi_errinfo *err);
/* Standard deviation of the noise at x (D coordinates). */
GFI_EXPORT double gfi_noise_sd(const gfi_noise *n, const double *x);
/* Canonical text, e.g. "gauss:0.5"; writes at most size bytes. */
GFI_EXPORT void gfi_noise_describe(const gfi_noise *n, char *buf, size_t size);

/* Draw n pairs: x (n x D) from the design (gfi_model_sample, n points), then
 * the n noises in order. noise may be NULL (none). */
GFI_EXPORT int gfi_regress_sample(const gfi_model *design, const gfi_regfun *f, const gfi_noise *noise,
                       gsl_rng *r, size_t n, double *x, double *y);

#ifdef __cplusplus
}
#endif
#endif
