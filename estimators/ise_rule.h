/* The quadrature rules of the ISE measurements (gfi_ise_plancherel,
 * gfi_ise_grid) and the summary of a Monte-Carlo MISE, shared with
 * libgfi_cuda's Monte-Carlo MISE (cuda/mise.cu) so that a replication
 * measured on the GPU uses the nodes, weights and formulas of the CPU path.
 * Internal: not installed. */
#ifndef GFI_ISE_RULE_H
#define GFI_ISE_RULE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "mise_internal.h"
#include "plancherel.h"

/* Largest number of (node, data point) products in one CPU Plancherel ISE. */
#define ISE_PL_MAX_WORK_CPU ((double)(1ULL << 32))

/* The grid ISE's box: automatic (opts->grid_halfwidth around the model's
 * centre) as gfi_ise_grid and gfi_mise_mc use it. */
int ise_grid_auto_box(const gfi_model *m, const gfi_mise_opts *o, double *lo, double *hi);

/* The grid ISE's tensor Gauss-Legendre rule on [lo, hi]: *M points (M x D,
 * row-major, last axis fastest) and their weights, malloc'ed. */
int ise_grid_rule(const gfi_model *m, const double *R, const double *lo, const double *hi,
                  const gfi_mise_opts *o, size_t *M, double **pts, double **W);

/* Mean, se and 95% interval of nreps ISE values into res (parts NaN). */
int mise_mc_summarize(const double *ise, size_t nreps, gfi_mise_result *res);
/* bias2 and var from the pooled estimator's ISE ip (see gfi_mise_mc). */
void mise_mc_parts(gfi_mise_result *res, double ip);

#ifdef __cplusplus
}
#endif
#endif
