/* Validation helpers used at every API boundary. All return a gfi_status. */
#ifndef GFI_VALIDATE_H
#define GFI_VALIDATE_H

#include "export.h"
#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest dimension accepted by the estimators. */
#define GFI_MAX_DIM 4096

/* GFI_ENONFINITE if some x[i] is NaN or Inf; *bad (if non-NULL) gets its index. */
GFI_EXPORT int gfi_check_finite(const double *x, size_t n, size_t *bad);
/* GFI_ERADIUS unless every R[j] is finite and > 0; *bad gets the axis. */
GFI_EXPORT int gfi_check_radii(const double *R, size_t D, size_t *bad);
/* GFI_EORDER unless 1 <= l <= 8. */
GFI_EXPORT int gfi_check_order(int l);
/* GFI_EDIM unless 1 <= D <= GFI_MAX_DIM. */
GFI_EXPORT int gfi_check_dim(size_t D);
/* GFI_EWEIGHT unless all w finite and sum > 0; *sum gets the sum. */
GFI_EXPORT int gfi_check_weights(const double *w, size_t n, double *sum);

#ifdef __cplusplus
}
#endif
#endif
