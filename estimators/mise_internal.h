/* Private pieces shared by the MISE files: what the quadrature knows about
 * |psi|^2 of a truth, axis node lists, and the exact route's integrals. */
#ifndef GFI_MISE_INTERNAL_H
#define GFI_MISE_INTERNAL_H

#include <stddef.h>
#include "gfi/mise.h"

#define MISE_MAXD 3
/* Gauss-Legendre points per cell. */
#define MISE_GL 16

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

int psi_info_init(const gfi_model *m, psi_info *pi);

/* psi(t) at one frequency (mixture route only). */
void psi_mixture_eval(const psi_info *pi, const double *t, double *re, double *im);

/* Node list on [a, b] whose cells break at the given points. */
typedef struct axis_nodes {
  size_t n;
  double *t, *w;
} axis_nodes;

/* Breakpoints: the kernel knots k R (k = -l, -l+2, .., l) inside (a, b);
 * cells of width <= min(h, osc)/res (or growing like grade*|t| when graded). */
int axis_build(double a, double b, int l, double R, double h, double osc, int graded,
               double res, axis_nodes *ax);
void axis_free(axis_nodes *ax);

/* The exact route's integrals (not yet scaled by (2 pi)^-D):
 *   bias_in  = int_box |psi|^2 (1 - Kbar)^2     bias_out = int_outside |psi|^2
 *   k2       = int |psi|^2 Kbar^2               psi_box  = int_box |psi|^2 */
typedef struct mise_integrals {
  double bias_in, bias_out, k2, psi_box;
} mise_integrals;

int mise_integrals_compute(const psi_info *pi, int l, const double *R, double res, int nthreads,
                           mise_integrals *I);

/* M_l(0), the B-spline density of a sum of l Uniform(-1,1) at 0 (l <= 16). */
double mise_bspline0(int l);

#endif
