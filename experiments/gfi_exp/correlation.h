/* The correlation claim of FourierFormer (section 3.1): the generalized
 * Fourier density estimator needs no covariance tuning. For the correlated
 * 2-D normal N(0, [[1, rho], [rho, 1]]) it compares, each at its
 * MISE-optimal parameters and by the exact MISE,
 *
 *   fourier     phi = z^l with one radius R for both axes (gfi_ropt),
 *   gauss-iso   the Gaussian KDE with H = h^2 I (gfi_mise_gauss_hopt),
 *   gauss-full  the Gaussian KDE with a full bandwidth matrix H, minimised
 *               over H = L L' (Nelder-Mead on log L11, L21, log L22 of the
 *               log MISE, started from h_iso^2 I), the estimator that tunes
 *               the covariance.
 *
 * For a single normal truth the full-H optimum is known in closed form:
 * the Gaussian KDE is affine equivariant, so H* = h0^2 Sigma and
 * MISE*(rho) = MISE*(0) / sqrt(1 - rho^2), h0 the isotropic optimum at
 * rho = 0 (tests check the minimiser against it). What `gfi correlation`
 * runs (docs/experiments.md). */
#ifndef GFI_EXP_CORRELATION_H
#define GFI_EXP_CORRELATION_H

#include "gfi_exp/exp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GFI_EXP_CORR_MAX 16

typedef struct gfi_exp_corr_params {
  double rho[GFI_EXP_CORR_MAX]; /* correlations in (-1, 1) */
  size_t nrho;                  /* 0: 0, 0.5, 0.9, 0.99 */
  double N[GFI_EXP_CORR_MAX];   /* sample sizes >= 2 */
  size_t nN;                    /* 0: 1e3, 1e4, 1e5 */
  int l;                        /* phi = z^l, 1..8 (0: 4) */
  const char *outdir;           /* NULL: no files; else DIR/correlation.dat */
} gfi_exp_corr_params;

void gfi_exp_corr_default(gfi_exp_corr_params *p);

typedef struct gfi_exp_corr_row {
  double rho, N;
  double R, mise_fourier;  /* isotropic Fourier: R* and MISE* */
  double h, mise_iso;      /* Gaussian KDE, H = h^2 I */
  double H[4], mise_full;  /* Gaussian KDE, full H (row-major 2 x 2) */
} gfi_exp_corr_row;

/* Minimise the exact Gaussian-KDE MISE over full bandwidth matrices H
 * (D = 1..3) for a normal-mixture truth, from H0 (D x D SPD; NULL: the
 * isotropic optimum). H gets the minimiser, *mise the MISE there.
 * GFI_EUNSUPPORTED for other truths; GFI_EQUAD when the minimiser does
 * not converge. */
int gfi_exp_gauss_full_hopt(const gfi_model *m, double N, const double *H0, double *H, double *mise);

/* Run the comparison: the table to `table` (may be NULL), the rows in
 * *rows (malloc'ed, *nrows = nrho * nN, rho-major; rows may be NULL),
 * DIR/correlation.dat with an output folder. Invalid settings: GFI_EINVAL
 * with e->param naming the option (--rho, --n, --l). */
int gfi_exp_correlation(const gfi_exp_corr_params *p, const gfi_exp_ctx *ctx, FILE *table,
                        gfi_exp_corr_row **rows, size_t *nrows, gfi_exp_err *e);

#ifdef __cplusplus
}
#endif
#endif
