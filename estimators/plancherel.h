/* The Plancherel quadrature (internal, not installed): what a Gauss-Legendre
 * rule in frequency needs to know about a truth's characteristic function
 * psi, the node lists on each axis, and the node rule of a Plancherel ISE
 *
 *   ISE = (2 pi)^-D [ int_box |phi_N(t) Kbar(t) - psi(t)|^2 dt + int_outside |psi|^2 dt ].
 *
 * Used by the exact MISE (mise_exact.c), the ISE of one estimate and the
 * Monte-Carlo MISE (mise_mc.c, mise_fast.c) and libgfi_cuda's Monte-Carlo
 * MISE (cuda/mise.cu, through ise_rule.h), so that every route integrates on
 * the same nodes with the same weights. Pure functions of their arguments:
 * thread-safe and deterministic. */
#ifndef GFI_PLANCHEREL_H
#define GFI_PLANCHEREL_H

#include <stddef.h>
#include "gfi/model.h"
#include "gfi/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MISE_MAXD 3
/* Gauss-Legendre points per cell. */
#define MISE_GL 16
/* Largest tensor grid accepted by the exact route (nodes). */
#define PL_MAX_NODES ((size_t)1 << 31)

/* ---- psi: what the quadrature knows about a truth ------------------------ */

typedef enum { PSI_MIXTURE = 1, PSI_PRODUCT = 2 } psi_route;

/* |psi|^2 of a truth, for the quadrature. */
typedef struct psi_info {
  psi_route route;
  size_t D;
  /* mixture: components (borrowed from the model) */
  size_t K;
  const double *w, *mu, *S;
  /* product: one 1-D factor per axis (borrowed) */
  const gfi_model *fac[MISE_MAXD];
  double h[MISE_MAXD];     /* cell width at the origin (scale of |psi|^2) */
  double osc[MISE_MAXD];   /* largest cell width allowed by oscillation (INFINITY: none) */
  double T[MISE_MAXD];     /* |psi|^2 negligible (< e^-45 of its peak) beyond |t_j| > T (INFINITY: heavy) */
  int graded[MISE_MAXD];   /* cells may grow like |t| (non-Gaussian tails) */
  double centre[MISE_MAXD], scale[MISE_MAXD]; /* of the density, for automatic boxes */
} psi_info;

/* GFI_EUNSUPPORTED for truths outside the exact route's classes (gfi/mise.h). */
int psi_info_init(const gfi_model *m, psi_info *pi);

/* psi(t) at one frequency (mixture route only). */
void psi_mixture_eval(const psi_info *pi, const double *t, double *re, double *im);

/* |psi_f(t)|^2 of a 1-D model (NaN when its cf fails). */
double psi_amp2_1d(const gfi_model *f, double t);

/* ---- node lists on one axis ------------------------------------------------ */

typedef struct axis_nodes {
  size_t n;
  double *t, *w;
} axis_nodes;

/* Node list on [a, b] (MISE_GL Gauss-Legendre points per cell). Breakpoints:
 * the kernel's knots k R inside (a, b) (kernel_knots); cells of width
 * <= min(h, osc)/res (or growing like grade*|t| when graded). */
int axis_build(double a, double b, const gfi_kernel *k, double R, double h, double osc, int graded,
               double res, axis_nodes *ax);
void axis_free(axis_nodes *ax);
/* The node count axis_build would return, without building anything
 * (SIZE_MAX when it would fail). */
size_t axis_count(double a, double b, const gfi_kernel *k, double R, double h, double osc, int graded,
                  double res);

/* ---- the exact route's integrals -------------------------------------------- */

/* The exact MISE's integrals (not yet scaled by (2 pi)^-D):
 *   bias_in  = int_box |psi|^2 (1 - Kbar)^2     bias_out = int_outside |psi|^2
 *   k2       = int |psi|^2 Kbar^2               psi_box  = int_box |psi|^2 */
typedef struct mise_integrals {
  double bias_in, bias_out, k2, psi_box;
  size_t nodes[3]; /* the quadrature's nodes per axis (also on GFI_ERANGE) */
} mise_integrals;

/* On the axes of axis_build (a mixture: the half-space t_1 >= 0 of the
 * tensor rule; a product: per axis, the tails outside the box by adaptive
 * quadrature). GFI_ERANGE, before anything is built, when the node counts
 * exceed GFI_MISE_EXACT_MAX_AXIS per axis or GFI_MISE_EXACT_MAX_NODES. */
int mise_integrals_compute(const psi_info *pi, const gfi_kernel *k, const double *R, double res, int nthreads,
                           mise_integrals *I);

/* ---- the node rule of a Plancherel ISE --------------------------------------- */

/* What a Plancherel ISE of (model, kernel, R) needs beyond the data: |psi|^2's
 * scales and int_outside-the-box |psi|^2 (not yet scaled by (2 pi)^-D). */
typedef struct ise_pl_rule {
  size_t D;
  gfi_kernel k; /* band-limited (gfi_kernel_check_band) */
  double R[MISE_MAXD];
  psi_info pi;
  double bias_out;
} ise_pl_rule;

/* D <= 3 (else GFI_EUNSUPPORTED); errors of psi_info_init and
 * mise_integrals_compute. */
int ise_pl_init(const gfi_model *m, const gfi_kernel *k, const double *R, double res, int nthreads,
                ise_pl_rule *r);

/* The node axes for N points whose largest |x_j| is xabs[j] (j < D): cells
 * resolve the highest frequency of |phi_N Kbar - psi|^2 (the data's, the
 * model's centre's and, for mixtures, the means' extent). Axis 0 covers
 * [0, l R_0] (the integrand is even), the others [-l R_j, l R_j], l the
 * kernel's highest sinc power.
 * GFI_EUNSUPPORTED when N times the number of nodes would exceed max_work.
 * Axes j >= D are left empty (n = 0). */
int ise_pl_axes(const ise_pl_rule *r, size_t N, const double *xabs, double res, double max_work,
                axis_nodes ax[MISE_MAXD]);

/* The nodes are the tensor product of the axes, axis 0 slowest: row i0 holds
 * the ise_pl_row(r, ax) nodes (ax[0].t[i0], ax[1].t[i1], ax[2].t[i2]) with
 * i2 fastest (1 node for D = 1). */
size_t ise_pl_row(const ise_pl_rule *r, const axis_nodes *ax);

/* psi(t) at the nodes of row i0 into re, im; t: scratch of
 * ise_pl_row(r, ax) * D doubles. */
int ise_pl_cf_row(const gfi_model *m, const ise_pl_rule *r, const axis_nodes *ax, size_t i0,
                  double *t, double *re, double *im);

/* kappa_l(t / R) and the weight on axis j into k[n], w[n] (ones for an
 * absent axis, n = 1). */
void ise_pl_axis_factors(const ise_pl_rule *r, const axis_nodes *ax, size_t j, double *k, double *w);

/* The product of the kappa factors and of the weights of axes 1..D-1 at the
 * nodes of a row (ise_pl_row values each; one 1 for D = 1). */
void ise_pl_row_factors(const ise_pl_rule *r, const axis_nodes *ax, double *k, double *w);

/* Data points per block of the direct empirical cf (a chunk of a streamed
 * sample that is a multiple of it gives the bits of one call on all points). */
#define PL_PBLOCK 256

/* Adds the raw sums sum_i exp(i t.x_i) of N points x (N x D) at the nodes
 * to pr, pim (n0 x ise_pl_row values, row-major), by direct sums of sines
 * and cosines, separable over the axes. Every entry sums the points in a
 * fixed order (blocks of PL_PBLOCK), so the bits do not depend on nt. */
int ise_pl_ecf_accum(const ise_pl_rule *r, const axis_nodes *ax, size_t N, const double *x, int nt,
                     double *pr, double *pim);

/* ISE from s = sum over nodes of W |phi_N K - psi|^2:
 * (2 pi)^-D (2 s + bias_out); GFI_EQUAD when not finite. */
int ise_pl_finish(const ise_pl_rule *r, double s, double *ise);

#ifdef __cplusplus
}
#endif
#endif
