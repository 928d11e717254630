/* Prints the layout of the experiments layer's structs that gfi.rate_checks
 * mirrors with ctypes (python/gfi/rate_checks.py): one line "STRUCT FIELD
 * OFFSET" per field and "STRUCT sizeof SIZE"; test_rate_checks.py compares
 * them with the ctypes structures. */
#include <stddef.h>
#include <stdio.h>
#include "gfi_exp/rate_checks.h"

#define F(T, f) printf("%s %s %zu\n", #T, #f, offsetof(T, f))
#define S(T) printf("%s sizeof %zu\n", #T, sizeof(T))

int main(void) {
  F(gfi_exp_rate_row, name); F(gfi_exp_rate_row, theorem); F(gfi_exp_rate_row, th);
  F(gfi_exp_rate_row, setting); F(gfi_exp_rate_row, truth); F(gfi_exp_rate_row, rule);
  F(gfi_exp_rate_row, D); F(gfi_exp_rate_row, l); F(gfi_exp_rate_row, cls); F(gfi_exp_rate_row, order);
  F(gfi_exp_rate_row, N_min); F(gfi_exp_rate_row, N_max); F(gfi_exp_rate_row, n_fit);
  F(gfi_exp_rate_row, claimed); F(gfi_exp_rate_row, classical); F(gfi_exp_rate_row, observed);
  F(gfi_exp_rate_row, lo95); F(gfi_exp_rate_row, hi95); F(gfi_exp_rate_row, claimed_R);
  F(gfi_exp_rate_row, observed_R); F(gfi_exp_rate_row, chi2_dof); F(gfi_exp_rate_row, flagged_frac);
  F(gfi_exp_rate_row, mc_points); F(gfi_exp_rate_row, mc_max_z); F(gfi_exp_rate_row, verdict);
  F(gfi_exp_rate_row, condition); F(gfi_exp_rate_row, point_x); F(gfi_exp_rate_row, point_p);
  F(gfi_exp_rate_row, point_C); F(gfi_exp_rate_row, point_gamma);
  S(gfi_exp_rate_row);

  F(gfi_exp_drates_params, full); F(gfi_exp_drates_params, theorems); F(gfi_exp_drates_params, ntheorems);
  F(gfi_exp_drates_params, l1); F(gfi_exp_drates_params, nl1); F(gfi_exp_drates_params, models);
  F(gfi_exp_drates_params, nmodels); F(gfi_exp_drates_params, D); F(gfi_exp_drates_params, nmin);
  F(gfi_exp_drates_params, nmax); F(gfi_exp_drates_params, per_decade); F(gfi_exp_drates_params, fit_decades);
  F(gfi_exp_drates_params, mc_reps); F(gfi_exp_drates_params, mc_nmax); F(gfi_exp_drates_params, seed);
  F(gfi_exp_drates_params, slack); F(gfi_exp_drates_params, outdir);
  S(gfi_exp_drates_params);

  F(gfi_exp_rrates_params, size); F(gfi_exp_rrates_params, reps); F(gfi_exp_rrates_params, points);
  F(gfi_exp_rrates_params, rows); F(gfi_exp_rrates_params, defines); F(gfi_exp_rrates_params, ndefines);
  F(gfi_exp_rrates_params, seed); F(gfi_exp_rrates_params, outdir);
  S(gfi_exp_rrates_params);

  F(gfi_exp_ctx, program); F(gfi_exp_ctx, argc); F(gfi_exp_ctx, argv); F(gfi_exp_ctx, nthreads);
  F(gfi_exp_ctx, progress); F(gfi_exp_ctx, header); F(gfi_exp_ctx, header_arg); F(gfi_exp_ctx, live);
  S(gfi_exp_ctx);

  F(gfi_exp_err, status); F(gfi_exp_err, step); F(gfi_exp_err, param); F(gfi_exp_err, msg);
  S(gfi_exp_err);

  /* gfi.rate_checks reads only the first fields of a theorem */
  F(gfi_exp_theorem, id); F(gfi_exp_theorem, name); F(gfi_exp_theorem, regression);
  return ferror(stdout) ? 1 : 0;
}
