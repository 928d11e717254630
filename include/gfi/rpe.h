/* Relative positional encodings (RPE) with closed-form Fourier pairs, and
 * proposal distributions for FLT's random features (docs/theory.md section 5).
 *
 * Convention (FLT): g(xi) = int f(x) exp(-2 pi i x.xi) dx over R^ell,
 *                   f(x)  = int g(xi) exp(+2 pi i x.xi) dxi.
 * Every family here has a real g; f is real except for Gaussian mixtures
 * with non-zero (unsymmetric) means and the paper's printed higher-order
 * local form with even k (then f is imaginary).
 *
 * Families (ell = 1..3 unless said otherwise):
 *   mixture   g(xi) = sum_t w_t exp(-|xi - mu_t|^2 / (2 s_t^2))  (FLT 4.3;
 *             weights of either sign; f(x) = sum_t w_t (sqrt(2 pi) s_t)^ell
 *             exp(-2 pi^2 s_t^2 |x|^2) exp(2 pi i mu_t.x))
 *   gauss     f(x) = exp(-|x|^2 / (2 s^2)),  g = (sqrt(2 pi) s)^ell exp(-2 pi^2 s^2 |xi|^2)
 *   gbf       Gaussian basis functions (FLT 5.3):
 *             f(r) = sum_t w_t (sqrt(2 pi) s_t)^-ell exp(-|r|^2/(2 s_t^2)),
 *             g(xi) = sum_t w_t exp(-2 pi^2 s_t^2 |xi|^2)
 *   local     f(x) = C prod_j B_k(x_j), B_k the k-fold self-convolution of
 *             1{|x| <= v_j} (k = 1: the box of FLT eq. 4), supported on
 *             |x_j| <= k v_j;  g(xi) = C prod_j (sin(2 pi v_j xi_j)/(pi xi_j))^k
 *             (the corrected higher-order transform, docs/theory.md section 5)
 *             k may differ per axis (k_j): g = C prod_j (sin(2 pi v_j xi_j)/(pi xi_j))^k_j
 *   boxes     sums of boxes (FLT eq. 20-21 with per-axis orders):
 *             f(x) = sum_b C_b prod_j B_{k_j}(x_j; v_bj),
 *             g(xi) = sum_b C_b prod_j (sin(2 pi v_bj xi_j)/(pi xi_j))^k_j
 *   local-paper  the paper's printed g = C prod_j sin^k(2 pi v_j xi_j)/(pi xi_j),
 *             with its exact inverse (piecewise constant: boxes for odd k,
 *             imaginary sign steps for even k) — not a continuous bump
 *   exp       f(x) = exp(-|x|/s) (Laplace/exponential kernel = Matern-1/2),
 *             g = multivariate Student-t density, nu = 1, scale 1/(2 pi s)
 *   matern32  f(x) = (1 + sqrt(3)|x|/s) exp(-sqrt(3)|x|/s), g = t density, nu = 3
 *   laplace   f(x) = exp(-sum_j |x_j| / s) (the L1 form), g = prod_j 2s/(1 + 4 pi^2 s^2 xi_j^2)
 *
 * Objects are immutable; functions on a const object are thread-safe. */
#ifndef GFI_RPE_H
#define GFI_RPE_H

#include "export.h"
#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GFI_RPE_MAX_ELL 3

typedef enum {
  GFI_RPE_MIXTURE = 0,
  GFI_RPE_GAUSS,
  GFI_RPE_GBF,
  GFI_RPE_LOCAL,
  GFI_RPE_LOCAL_PAPER,
  GFI_RPE_EXP,
  GFI_RPE_MATERN32,
  GFI_RPE_LAPLACE,
  GFI_RPE_BOXES
} gfi_rpe_kind;

#define GFI_RPE_MAX_BOXES 8

typedef struct gfi_rpe gfi_rpe;

/* T components; mu is T x ell (NULL: all zero); s_t > 0; w_t finite, not all 0. */
GFI_EXPORT int gfi_rpe_mixture(gfi_rpe **out, size_t ell, size_t T, const double *w, const double *mu,
                    const double *s);
GFI_EXPORT int gfi_rpe_gauss(gfi_rpe **out, size_t ell, double s);
GFI_EXPORT int gfi_rpe_gbf(gfi_rpe **out, size_t ell, size_t T, const double *w, const double *s);
/* v: ell half-widths > 0 (NULL: all 1); k = 1..8 (GFI_EORDER otherwise); C != 0.
 * paper_form = 1 gives the printed (incorrect) transform. */
GFI_EXPORT int gfi_rpe_local(gfi_rpe **out, size_t ell, const double *v, int k, double C, int paper_form);
/* Sums of nb boxes (1..GFI_RPE_MAX_BOXES) with per-axis orders k[j] = 1..8:
 * C: nb amplitudes (finite, non-zero), v: nb x ell half-widths > 0. One box
 * gives the local family (kind GFI_RPE_LOCAL) with per-axis k. */
GFI_EXPORT int gfi_rpe_boxes(gfi_rpe **out, size_t ell, size_t nb, const double *C, const double *v, const int *k);
/* kind GFI_RPE_EXP, GFI_RPE_MATERN32 or GFI_RPE_LAPLACE, scale s > 0. */
GFI_EXPORT int gfi_rpe_kernel(gfi_rpe **out, gfi_rpe_kind kind, size_t ell, double s);

/* Parse a family specification for dimension ell:
 *   gauss:s=S   box:v=V[,C=..]   local:v=V,k=K[,C=..]   local-paper:v=V,k=K[,C=..]
 *   (local: K one order or ell orders k_1..k_ell)
 *   boxes:C=C1,..;v=..;k=K     nb boxes: nb amplitudes, nb x ell half-widths
 *                               (row-major), one or ell orders
 *   exp:s=S (aliases matern12:s=S)   matern32:s=S   laplace:s=S
 *   gbf:w=W1,..;s=S1,..             mixture:FILE (rows: w mu_1..mu_ell s)
 *   mixture:w=..;mu=..;s=..          (mu flattened, ell numbers per component)
 * Keys are separated by ',' or ';'; a token without '=' continues the previous
 * key's list, so v may be one value or ell values ("local:v=1,2,k=2" in 2-D).
 * GFI_EMODEL / GFI_EIO / GFI_EPARSE with a message (file:line:column for files). */
GFI_EXPORT int gfi_rpe_parse(gfi_rpe **out, const char *spec, size_t ell, gfi_errinfo *err);

GFI_EXPORT void gfi_rpe_free(gfi_rpe *rpe);
GFI_EXPORT gfi_rpe_kind gfi_rpe_get_kind(const gfi_rpe *rpe);
GFI_EXPORT size_t gfi_rpe_dim(const gfi_rpe *rpe);
/* Canonical text, e.g. "local(ell=1,v=2,k=2,C=1)"; never NULL. */
GFI_EXPORT const char *gfi_rpe_describe(const gfi_rpe *rpe);
/* 1 when f is real for every x (g even). */
GFI_EXPORT int gfi_rpe_f_is_real(const gfi_rpe *rpe);
/* 1 when g >= 0 everywhere (then int g = f(0) and p = g / f(0) is a density). */
GFI_EXPORT int gfi_rpe_g_nonneg(const gfi_rpe *rpe);

/* f at n points (n x ell): real parts into re, imaginary parts into im (im may be NULL). */
GFI_EXPORT int gfi_rpe_f(const gfi_rpe *rpe, size_t n, const double *x, double *re, double *im);
/* g at n frequencies (n x ell). */
GFI_EXPORT int gfi_rpe_g(const gfi_rpe *rpe, size_t n, const double *xi, double *g);
/* log|g| and sign(g) (sign 0 where g = 0; log -inf there). sign may be NULL. */
GFI_EXPORT int gfi_rpe_log_abs_g(const gfi_rpe *rpe, size_t n, const double *xi, double *logabs, int *sign);

/* ---- proposals p for xi ---- */
typedef struct gfi_proposal gfi_proposal;

typedef enum { GFI_PROP_GAUSS = 0, GFI_PROP_T, GFI_PROP_OPTIMAL } gfi_proposal_kind;

/* N(0, tau^2 I) in ell dimensions, tau > 0. */
GFI_EXPORT int gfi_proposal_gauss(gfi_proposal **out, size_t ell, double tau);
/* Multivariate Student-t, nu > 0 degrees of freedom, scale tau (nu = 1: Cauchy). */
GFI_EXPORT int gfi_proposal_t(gfi_proposal **out, size_t ell, double nu, double tau);
/* p proportional to |g| for families with g >= 0 (p = g / f(0)); the proposal
 * keeps its own copy of the family. GFI_EUNSUPPORTED when g changes sign. */
GFI_EXPORT int gfi_proposal_optimal(gfi_proposal **out, const gfi_rpe *rpe);
/* gauss:tau=T | t:nu=NU[,tau=T] | cauchy[:tau=T] | optimal */
GFI_EXPORT int gfi_proposal_parse(gfi_proposal **out, const char *spec, const gfi_rpe *rpe, gfi_errinfo *err);
GFI_EXPORT void gfi_proposal_free(gfi_proposal *p);
GFI_EXPORT size_t gfi_proposal_dim(const gfi_proposal *p);
GFI_EXPORT gfi_proposal_kind gfi_proposal_get_kind(const gfi_proposal *p);
GFI_EXPORT const char *gfi_proposal_describe(const gfi_proposal *p);
/* n draws (n x ell) from r. */
GFI_EXPORT int gfi_proposal_sample(const gfi_proposal *p, gsl_rng *r, size_t n, double *xi);
GFI_EXPORT int gfi_proposal_log_pdf(const gfi_proposal *p, size_t n, const double *xi, double *logp);

/* c = sup_xi |g(xi)| / p(xi). *c = INFINITY when the tails make the ratio
 * unbounded (decided from the tail classes of g and p, never from a finite
 * search); otherwise the supremum found by a radial scan over many directions
 * refined by local maximisation (for p = optimal: exactly f(0)).
 * GFI_EDIM when the dimensions differ. */
GFI_EXPORT int gfi_rpe_c(const gfi_rpe *rpe, const gfi_proposal *p, double *c);

#ifdef __cplusplus
}
#endif
#endif
