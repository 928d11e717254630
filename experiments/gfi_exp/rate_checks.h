/* gfi's rate checks of FourierFormer's theorems (gfi_exp/theorems.h):
 *
 *  density     Theorems 1, 3a, 3b against the exact MISE at the optimal
 *              radius R*(N) (Plancherel, gfi_ropt) over decades of N, with a
 *              Monte-Carlo check at small N and a Gaussian-KDE baseline for
 *              normal-mixture truths (what `gfi rates` prints);
 *  regression  Theorems 2 and 4 by Monte Carlo: the design-weighted
 *              integrated MSE over replications at N = N0 2^k, with a
 *              Gaussian Nadaraya-Watson baseline (what `gfi regress-rates`
 *              prints).
 *
 * Both give their results as gfi_exp_rate_row values with the shared
 * verdict vocabulary and condition field, print their table to a stream
 * the caller passes (may be NULL) and, with an output folder, write the
 * table and the per-size series there. */
#ifndef GFI_EXP_RATE_CHECKS_H
#define GFI_EXP_RATE_CHECKS_H

#include <stdint.h>
#include "gfi_exp/exp.h"
#include "gfi_exp/theorems.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of a rate check. */
typedef struct gfi_exp_rate_row {
  char name[32];        /* density: the theorem ("1", "3a", ...) or "gauss-kde"; regression: the row */
  char theorem[16];     /* regression: "Thm2", "Thm4", "Thm4*" (outside the setting), "classical" */
  const gfi_exp_theorem *th; /* NULL for baselines */
  char setting[128];    /* the truth (density) or the design (regression) */
  char truth[64];       /* regression: the regression function */
  char rule[64];        /* regression: the radius or bandwidth rule */
  size_t D;
  int l;                /* 0: Gaussian kernel */
  gfi_smooth_class cls;
  double order;
  size_t N_min, N_max, n_fit;
  double claimed, classical, observed, lo95, hi95;
  double claimed_R, observed_R;       /* density */
  double chi2_dof, flagged_frac;      /* regression */
  size_t mc_points;                   /* density: Monte-Carlo checks made */
  double mc_max_z;                    /* density: largest |MC - exact| / se */
  gfi_exp_verdict verdict;
  char condition[48];   /* "met", what fails (e.g. "not-C2"), or "-" for baselines */
  /* regression rows measured at a fixed point (NAME@x; NaN otherwise): the
   * point, the design density there, C(x) = the geometric mean over N of
   * MSE(N, x) / claimed rate(N), and gamma, the slope of log C(x) on
   * log(1/p(x)) over the row's points (Theorem 2's bound: gamma <= 2) */
  double point_x[3], point_p, point_C, point_gamma;
} gfi_exp_rate_row;

/* Free the rows a rate check returned (NULL is fine): for callers that do
 * not share this library's allocator (the Python package). */
void gfi_exp_rate_rows_free(gfi_exp_rate_row *rows);

/* ---- density (Theorems 1, 3a, 3b) ---- */

#define GFI_EXP_DRATES_MAXMODELS 16
#define GFI_EXP_DRATES_MAXL 8

typedef struct gfi_exp_drates_params {
  int full;                   /* sizes: 0 quick (N = 1e2..1e6, 1 per decade, fit on 3 decades,
                                 MC 40 reps at N <= 1e2), 1 full (N = 1e2..1e9, 2 per decade,
                                 fit on 4 decades, MC at N <= 1e7: 100 reps up to N = 316,
                                 then 100 sqrt(316 / N), at least 8) */
  gfi_exp_theorem_id theorems[3];
  size_t ntheorems;           /* 0: 1, 3a, 3b */
  int l1[GFI_EXP_DRATES_MAXL]; /* kernel powers Theorem 1 is checked with, one row each (--l1) */
  size_t nl1;                 /* 0: the theorem's l = 4 */
  const char *models[GFI_EXP_DRATES_MAXMODELS]; /* truth specs (--model) */
  size_t nmodels;             /* 0: normal, cauchy, laplace and, in 1-D, mw:6 */
  size_t D;                   /* --dim, 1..3 */
  double nmin, nmax, per_decade, fit_decades; /* < 0: the size's value */
  long mc_reps;               /* < 0: the size's value; 0: no Monte-Carlo check */
  double mc_nmax;             /* < 0: the size's value */
  uint64_t seed;
  double slack;               /* allowance in the verdict (0.02) */
  const char *outdir;         /* NULL: no files; else DIR/rates_table.dat and DIR/rates_<th>_<k>.dat */
  /* Theorem 1 rows with a kernel given by its text (--phi1, gfi_kernel_parse:
   * "poly:a1,..,ad" or "pow:L"), after those of l1, one row each, named 1p1,
   * 1p2, ...: a polynomial phi is checked against the theorem's hypotheses
   * through its powers (gfi_exp_density_condition). Appended last: the fields
   * above keep their offsets. */
  const char *phi1[GFI_EXP_DRATES_MAXL];
  size_t nphi1;
} gfi_exp_drates_params;

void gfi_exp_drates_default(gfi_exp_drates_params *p);

/* Run the density rate checks: the table to `table` (may be NULL), files
 * into p->outdir, and the rows in *rows (malloc'ed, *nrows of them; rows
 * may be NULL). Invalid settings: GFI_EINVAL or GFI_EMODEL with e->param
 * naming the option. */
int gfi_exp_density_rates(const gfi_exp_drates_params *p, const gfi_exp_ctx *ctx, FILE *table,
                          gfi_exp_rate_row **rows, size_t *nrows, gfi_exp_err *e);

/* ---- regression (Theorems 2 and 4) ---- */

typedef struct gfi_exp_rrates_params {
  const char *size;   /* "small", "medium" (default) or "large" */
  size_t reps;        /* 0: the size's value */
  size_t points;      /* 0: the size's value */
  const char *rows;   /* comma-separated subset of the rows (NULL: all built-in rows,
                         or only the defined ones when there are some) */
  /* Rows defined by the caller (--define), at most 16:
   *   NAME:thm=2|4|gauss[;dim=D][;l=L][;c=C][;design=SPEC][;truth=SPEC][;box=B][;at=x/x/...]
   * thm=2: phi = z^l (l = 6 by default), R = c N^(1/(D+4)) (c = 1);
   * thm=4: l = 1, R = sqrt(log N / (2c)) (c = C of the design, 0.25), a
   * supersmooth design; thm=gauss: h = c N^(-1/(D+4)) (c = 0.5). design
   * defaults to normal, truth to poly:0,1,-0.5,0.2; box restricts the
   * design points to |x_j| <= B; at= measures the MSE at fixed points
   * instead (coordinates of one point separated by ','), one rate row per
   * point NAME@x. */
  const char *const *defines;
  size_t ndefines;
  uint64_t seed;
  const char *outdir; /* NULL: no files; else DIR/regress_rates.dat and DIR/regress_rates_table.dat */
} gfi_exp_rrates_params;

void gfi_exp_rrates_default(gfi_exp_rrates_params *p);

/* The rows gfi can run: name, theorem and description (i < count). */
size_t gfi_exp_rrates_nrows(void);
const char *gfi_exp_rrates_row_name(size_t i);

/* Run the regression rate checks, as gfi_exp_density_rates. */
int gfi_exp_regress_rates(const gfi_exp_rrates_params *p, const gfi_exp_ctx *ctx, FILE *table,
                          gfi_exp_rate_row **rows, size_t *nrows, gfi_exp_err *e);

#ifdef __cplusplus
}
#endif
#endif
