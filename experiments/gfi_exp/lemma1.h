/* Lemma 1 of FourierFormer (Bernstein concentration of the density
 * estimator at a point) checked by Monte Carlo: over many replications of
 * N draws, the empirical tail probability P(|p_hat(x) - E p_hat(x)| >= t)
 * against Bernstein's bound
 *
 *     P(|p_hat(x) - E p_hat(x)| >= t) <= 2 exp(-N t^2 / (2 sigma^2 + 2 b t / 3))
 *
 * with Y = prod_j (R/A_l) sinc(R (x_j - X_j))^l, sigma^2 = Var Y and
 * |Y - E Y| <= b = (R/A_l)^D (even l; 2 (R/A_l)^D for odd l). Inverted: with
 * probability at least 1 - delta,
 *
 *     |p_hat(x) - E p_hat(x)| <= t(delta) = b L/(3N) + sqrt((b L/(3N))^2 + 2 sigma^2 L/N),
 *     L = log(2/delta)  (<= sqrt(2 sigma^2 L/N) + 2 b L/(3N), the usual form).
 *
 * E Y and E Y^2 come from quadrature of the kernel against the model's
 * density (D = 1), so the bound is evaluated with the exact variance; a
 * second curve uses the density-free variance bound sigma^2 <= ||p||_inf R
 * A_2l / A_l^2 (l <= 4), the form a proof uses. The estimator is gfi's
 * (gfi_density_plan_fourier, direct sums). */
#ifndef GFI_EXP_LEMMA1_H
#define GFI_EXP_LEMMA1_H

#include <stdint.h>
#include "gfi_exp/exp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GFI_EXP_LEMMA1_MAXPTS 8

typedef struct gfi_exp_lemma1_params {
  const char *model;  /* 1-D truth (default "normal") */
  double at[GFI_EXP_LEMMA1_MAXPTS];
  size_t nat;         /* 0: x = 0 and 1.5 */
  int l;              /* phi = z^l (default 4) */
  size_t N;           /* sample size (default 500) */
  double R;           /* radius; 0: N^(1/3) */
  size_t reps;        /* replications (default 20000) */
  uint64_t seed;
  const char *outdir; /* NULL: no files; else DIR/lemma1.dat, DIR/lemma1_delta.dat */
} gfi_exp_lemma1_params;

void gfi_exp_lemma1_default(gfi_exp_lemma1_params *p);

/* One point's result. */
typedef struct gfi_exp_lemma1_point {
  double x, mean_exact, mean_mc, mean_z, sigma2, sigma2_sup, b, sd_mc;
  double delta[4], t_delta[4], freq[4]; /* delta = 0.1, 0.05, 0.01, 0.001 */
  size_t violations;                    /* t on the grid where the empirical tail exceeds the bound by > 3 s.e. */
} gfi_exp_lemma1_point;

/* Run: the table (one line per point and delta) to `table` (may be NULL),
 * files into p->outdir, results in pts[0..nat) (may be NULL; p->nat or 2
 * entries). Invalid settings: GFI_EINVAL / GFI_EMODEL with e->param set. */
int gfi_exp_lemma1(const gfi_exp_lemma1_params *p, const gfi_exp_ctx *ctx, FILE *table,
                   gfi_exp_lemma1_point *pts, gfi_exp_err *e);

#ifdef __cplusplus
}
#endif
#endif
