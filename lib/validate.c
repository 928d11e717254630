/* Validation helpers used at every API boundary. */
#include <math.h>
#include "gfi/validate.h"
#include "digest.h"

int gfi_check_finite(const double *x, size_t n, size_t *bad) {
  if (n > 0 && !x) return GFI_EINVAL;
  /* blocks without an early exit (they vectorise); the first bad value is
   * looked for only inside a block that holds one */
  for (size_t i0 = 0; i0 < n; i0 += 1024) {
    size_t i1 = n - i0 < 1024 ? n : i0 + 1024;
    double z = 0; /* 0 x = 0 for finite x, NaN for NaN and +-Inf */
#pragma omp simd reduction(+ : z)
    for (size_t i = i0; i < i1; i++) z += 0.0 * x[i];
    if (z != 0)
      for (size_t i = i0; i < i1; i++)
        if (!isfinite(x[i])) {
          if (bad) *bad = i;
          return GFI_ENONFINITE;
        }
  }
  return GFI_OK;
}

int gfi_check_radii(const double *R, size_t D, size_t *bad) {
  if (!R) return GFI_EINVAL;
  for (size_t j = 0; j < D; j++)
    if (!(isfinite(R[j]) && R[j] > 0)) {
      if (bad) *bad = j;
      return GFI_ERADIUS;
    }
  return GFI_OK;
}

int gfi_check_order(int l) { return (l >= 1 && l <= 8) ? GFI_OK : GFI_EORDER; }

int gfi_check_dim(size_t D) { return (D >= 1 && D <= GFI_MAX_DIM) ? GFI_OK : GFI_EDIM; }

int gfi_check_weights(const double *w, size_t n, double *sum) {
  if (n > 0 && !w) return GFI_EINVAL;
  double s = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(w[i])) return GFI_EWEIGHT;
    s += w[i];
  }
  if (!(s > 0) || !isfinite(s)) return GFI_EWEIGHT;
  if (sum) *sum = s;
  return GFI_OK;
}

int gfi_digest(const double *x, size_t n, uint64_t digest[2]) {
  if (!digest || (n > 0 && !x)) return GFI_EINVAL;
  uint64_t h0 = 0, h1 = 0;
  if (n > 0) h0 = digest_bits(x[0]);
#pragma omp simd reduction(+ : h0, h1)
  for (size_t i = 1; i < n; i++) {
    const uint64_t b = digest_bits(x[i]);
    h0 += b;
    h1 += digest_pair(b, digest_bits(x[i - 1]));
  }
  digest[0] = h0;
  digest[1] = h1;
  return GFI_OK;
}
