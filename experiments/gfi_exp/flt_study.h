/* The FLT study: every table behind the FLT figures, written to
 * OUT/flt_*.dat (full metadata) and summarised in OUT/flt_summary.md;
 * plots/flt_study.gp draws them.
 *
 *   flt_err_vs_r.dat      max-norm error (mean, quantiles) vs r, with c/sqrt(r) and Thm 4.2's eps
 *   flt_err_slopes.dat    slope of log mean error on log r per case, with its s.e. (-1/2 where c < inf)
 *   flt_rstar.dat         r*(eps, delta) vs L against Theorem 4.2
 *   flt_err_vs_tau.dat    error vs Gaussian proposal scale, c (infinite below 1/(2 pi s))
 *   flt_moments.dat       unbiasedness, Thm A.3 variance bound and the exact variance
 *                         (M2 - |f|^2)/r, M2 = int g^2/p by quadrature, per case
 *   flt_shapes_1d.dat     local RPE shapes by inverse FFT vs closed forms (corrected and printed)
 *   flt_shape2d_*.dat     FLT Figure 4 surfaces (2-D, inverse FFT)
 *   flt_attention_error.dat  FLT attention vs exact RPE attention, vs r and m
 *   flt_attention_scaling.dat  time and accounted memory vs L: FLT, FAVOR+, exact
 *   flt_paper.dat         FLT's own configurations: L = 512 with a N(0, 1) proposal and
 *                         r = 16, 32, 64 ..; GBF RPEs on 3-D point clouds; sums of boxes
 *                         with per-axis k_j; c and Theorem 4.2's eps (void where c = inf)
 *
 * Quick mode runs in seconds (the smoke test and gfi reproduce use it). */
#ifndef GFI_EXP_FLT_STUDY_H
#define GFI_EXP_FLT_STUDY_H

#include <stdint.h>
#include "gfi_exp/exp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gfi_exp_flt_params {
  const char *outdir; /* created when missing */
  int quick;
  uint64_t seed;
  const char *only;   /* NULL, or the parts to run (names contained in the string):
                         error rstar tau moments shapes attention scaling paper */
} gfi_exp_flt_params;

void gfi_exp_flt_default(gfi_exp_flt_params *p);

/* Run the study. ctx->progress gets one line per part ("flt_study: NAME
 * SECONDS s"); the tables' headers name ctx's program and command line. */
int gfi_exp_flt_study(const gfi_exp_flt_params *p, const gfi_exp_ctx *ctx, gfi_exp_err *e);

#ifdef __cplusplus
}
#endif
#endif
