/* Internal layout of RPE families and proposals (lib/rpe*.c only). */
#ifndef GFI_RPE_INTERNAL_H
#define GFI_RPE_INTERNAL_H
#include "gfi/rpe.h"

struct gfi_rpe {
  gfi_rpe_kind kind;
  size_t ell;
  /* Gaussian kinds: frequency-domain mixture sum_t w_t exp(-|xi - mu_t|^2/(2 sig_t^2)) */
  size_t T;
  double *w, *mu, *sig;
  double s;                     /* gauss / kernel scale */
  double nu;                    /* Student-t degrees of freedom of g (exp: 1, matern32: 3) */
  double v[GFI_RPE_MAX_ELL];    /* local half-widths */
  int k;                        /* local order (the largest k_j) */
  double C;                     /* local amplitude */
  /* local and boxes: order per axis, and the boxes' amplitudes and
   * half-widths (nb boxes; local: one, bC[0] = C, bv = v) */
  int kj[GFI_RPE_MAX_ELL];
  size_t nb;
  double bC[GFI_RPE_MAX_BOXES], bv[GFI_RPE_MAX_BOXES * GFI_RPE_MAX_ELL];
  char desc[160];
};

struct gfi_proposal {
  gfi_proposal_kind kind;
  size_t ell;
  double tau, nu;
  gfi_rpe *rpe;                 /* optimal: own copy of the family */
  double logf0;                 /* optimal: log f(0) = log int g */
  double *cum;                  /* optimal mixture: cumulative component masses */
  char desc[200];
};

gfi_rpe *gfi_rpe_clone_(const gfi_rpe *src);
double gfi_rpe_f0_(const gfi_rpe *rpe);
#endif
