/* Validation helpers used at every API boundary. All return a gfi_status. */
#ifndef GFI_VALIDATE_H
#define GFI_VALIDATE_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>
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
/* A digest of n doubles by their bit patterns b_i (unsigned 64-bit):
 * digest[0] = sum_i b_i and digest[1] = sum_{i >= 1} (b_i XOR s(b_{i-1})),
 * s swapping the two 32-bit halves, both modulo 2^64. Changing one value
 * always changes digest[0]; swapping or negating values changes digest[1]
 * but in rare coincidences. Exact integer sums: the same bits in any order
 * of summation, so the plans' check of the data computes the same digest on
 * the way (gfi_density_data_digest, gfi_nw_data_digest): whether an array
 * still holds the data a plan was made from is one comparison. GFI_EINVAL
 * when digest is NULL, or x is NULL with n > 0. */
GFI_EXPORT int gfi_digest(const double *x, size_t n, uint64_t digest[2]);

#ifdef __cplusplus
}
#endif
#endif
