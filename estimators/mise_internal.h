/* Private pieces shared by the MISE files: the exact route's integrals (the
 * quadrature itself is in plancherel.h). */
#ifndef GFI_MISE_INTERNAL_H
#define GFI_MISE_INTERNAL_H

#include <stddef.h>
#include "gfi/mise.h"
#include "plancherel.h"
#include "kernel_internal.h"

/* The exact route's integrals (not yet scaled by (2 pi)^-D):
 *   bias_in  = int_box |psi|^2 (1 - Kbar)^2     bias_out = int_outside |psi|^2
 *   k2       = int |psi|^2 Kbar^2               psi_box  = int_box |psi|^2 */
typedef struct mise_integrals {
  double bias_in, bias_out, k2, psi_box;
  size_t nodes[3]; /* the quadrature's nodes per axis (also on GFI_ERANGE) */
} mise_integrals;

/* The measurements' options, checked at every entry point that takes them:
 * gfi_opts_check on base, then ise, resolution, grid_halfwidth, max_points
 * (the field at fault named: gfi_error_param). */
int mise_opts_check(const gfi_mise_opts *o);

int mise_integrals_compute(const psi_info *pi, const gfi_kernel *k, const double *R, double res, int nthreads,
                           mise_integrals *I);


#endif
