/* Private pieces shared by the MISE files (the quadrature and the exact
 * route's integrals are in plancherel.h). */
#ifndef GFI_MISE_INTERNAL_H
#define GFI_MISE_INTERNAL_H

#include <stddef.h>
#include "gfi/mise.h"
#include "plancherel.h"
#include "kernel_internal.h"

/* The measurements' options, checked at every entry point that takes them:
 * gfi_opts_check on base, then ise, resolution, grid_halfwidth, max_points
 * (the field at fault named: gfi_error_param). */
int mise_opts_check(const gfi_mise_opts *o);

#endif
