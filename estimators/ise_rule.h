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

/* Largest number of (node, data point) products in one CPU Plancherel ISE. */
#define ISE_PL_MAX_WORK_CPU ((double)(1ULL << 32))

/* What a Plancherel ISE of (model, l, R) needs beyond the data: |psi|^2's
 * scales and int_outside-the-box |psi|^2 (not yet scaled by (2 pi)^-D). */
typedef struct ise_pl_rule {
  size_t D;
  int l;
  double R[2];
  psi_info pi;
  double bias_out;
} ise_pl_rule;

/* D <= 2 (else GFI_EUNSUPPORTED); errors of psi_info_init and
 * mise_integrals_compute. */
int ise_pl_init(const gfi_model *m, int l, const double *R, double res, int nthreads,
                ise_pl_rule *r);

/* The node axes for N points whose largest |x_j| is xabs[j] (j < D): cells
 * resolve the highest frequency of |phi_N Kbar - psi|^2 (the data's, the
 * model's centre's and, for mixtures, the means' extent). GFI_EUNSUPPORTED
 * when N times the number of nodes would exceed max_work. ax[1] is left
 * empty (n = 0) for D = 1. */
int ise_pl_axes(const ise_pl_rule *r, size_t N, const double *xabs, double res, double max_work,
                axis_nodes ax[2]);

/* psi(t) at the n1 nodes (ax[0].t[i0], ax[1].t[i1]) of row i0 (n1 = 1 for
 * D = 1) into re, im; t: scratch of n1 * D doubles. */
int ise_pl_cf_row(const gfi_model *m, const ise_pl_rule *r, const axis_nodes *ax, size_t i0,
                  double *t, double *re, double *im);

/* kappa_l(t / R) and the weight on axis j into k[n], w[n] (ones for an
 * absent axis, n = 1). */
void ise_pl_axis_factors(const ise_pl_rule *r, const axis_nodes *ax, size_t j, double *k, double *w);

/* ISE from s = sum over nodes of W |phi_N K - psi|^2:
 * (2 pi)^-D (2 s + bias_out); GFI_EQUAD when not finite. */
int ise_pl_finish(const ise_pl_rule *r, double s, double *ise);

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
