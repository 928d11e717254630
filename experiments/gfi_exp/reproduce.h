/* FourierFormer's synthetic experiments (appendix E.4, Figures 1 and 2)
 * reproduced end to end: for each figure an oracle radius and a fixed one,
 * K seeds over a grid of radii and test boxes (gfi_exp/repro.h), the
 * estimates of seed 1 on a grid, the sensitivity tables, the density and
 * regression rate checks (gfi_exp/rate_checks.h), the FLT study
 * (gfi_exp/flt_study.h), every figure (gnuplot, found on PATH, draws the
 * scripts of plots/), and DIR/summary.md and DIR/summary.dat beside the
 * paper's numbers. What `gfi reproduce` runs; docs/experiments.md lists
 * the files. */
#ifndef GFI_EXP_REPRODUCE_H
#define GFI_EXP_REPRODUCE_H

#include <stdint.h>
#include "gfi_exp/exp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gfi_exp_repro_params {
  const char *out;        /* output folder (no spaces, quotes or backslashes: the plot scripts need that) */
  int quick;              /* small sizes; changes the defaults marked "quick" */
  size_t seeds;           /* replications, >= 2 (0: 5; quick 3) */
  uint64_t seed;          /* base seed */
  size_t n_density;       /* N of Figures 1A and 1B (0: 100000; quick 10000) */
  size_t n_regress;       /* N of Figure 2 (0: 90000; quick 9000) */
  size_t points;          /* test points per box (0: 1000; quick 300) */
  int l;                  /* phi(z) = z^l */
  double R;               /* the fixed radius */
  const char *model_1d;   /* Figure 1A truth (--model-1d) */
  const char *model_2d;   /* Figure 1B truth (--model-2d) */
  const char *design;     /* Figure 2 design, 2-D (--design) */
  const char *truth;      /* Figure 2 regression function (--truth) */
  const char *noise;      /* Figure 2 noise (--noise) */
  double box;             /* density test box [-box, box]^D */
  double regress_box;     /* regression test box */
  const double *sens_R;   /* radii of the sensitivity table (the fixed and oracle radii are added) */
  size_t nsens_R;
  const double *sens_box; /* density boxes of the sensitivity table */
  size_t nsens_box;
  const double *sens_regress_box; /* regression boxes */
  size_t nsens_regress_box;
  size_t pilot_reps;      /* pilot replications of the regression oracle (0: 3; quick 2) */
  const char *flt;        /* "full", "quick" or "none" (NULL: full; quick with quick) */
  const char *rates;      /* "full", "quick" or "none" (NULL: full; quick with quick) */
  const char *plots_dirs[4]; /* folders to look for the plot scripts in, in order (NULL entries skipped) */
  int full;               /* the long variant of the rate checks and the FLT study (--full): Monte-Carlo
                             points of the density checks to N = 1e7 (default 1e6), 200 replications of
                             the regression checks (default 100) */
} gfi_exp_repro_params;

/* The full run's defaults (out "results", seed 1, phi z^4, R = 2, the
 * paper's truths, boxes 3 and 2, sensitivity lists 1,2,3,5,8,13 / 2,3,5,10 /
 * 1,2,3,5); no plot folders. */
void gfi_exp_repro_default(gfi_exp_repro_params *p);

/* Check the settings without running anything: GFI_EINVAL, GFI_EMODEL or
 * GFI_EUNSUPPORTED with e->param naming the option at fault. */
int gfi_exp_repro_check(const gfi_exp_repro_params *p, gfi_exp_err *e);

/* Run everything. ctx->progress (NULL: quiet) gets one line per step,
 * "[k/n] NAME ... S s", and a last line naming summary.md. Errors: invalid
 * settings as gfi_exp_repro_check; missing gnuplot or plot scripts before
 * any work, with e->step empty; otherwise e->step names the step that
 * failed ("setting up the output folder" before the first one). The output
 * files' headers name ctx's program and command line. */
int gfi_exp_reproduce(const gfi_exp_repro_params *p, const gfi_exp_ctx *ctx, gfi_exp_err *e);

#ifdef __cplusplus
}
#endif
#endif
