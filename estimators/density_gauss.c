/* Inner loop of the Gaussian KDE baseline: data and queries are whitened by
 * the inverse Cholesky factor of H, so the kernel is exp(lognorm - |z - z_i|^2/2)
 * with the normalising constant inside the exponent (no overflow of the
 * constant, no underflow of a kernel value that matters). */
#include <math.h>
#include "density_internal.h"
#include "simd_math.h"
#include "gauss_block.h"

GFI_CLONES void density_gauss_task(const gfi_density_plan *p, const double *queries, size_t q0, size_t q1,
                        size_t i0, size_t i1, double *part, double *ws) {
  const size_t D = p->D, Np = p->lay.Np, nq = q1 - q0, B = p->lay.dblock;
  double *qz = ws, *d2 = ws + 3 * nq * D;
  gauss_whiten_tile(D, p->Linv, queries, q0, nq, qz);
  for (size_t q = 0; q < nq; q++) part[q] = 0;
  const double ln = p->lognorm, lo = p->exp_floor;
  for (size_t b = i0; b < i1; b += B) {
    const double *restrict w = p->w ? p->w + b : NULL;
    for (size_t q = 0; q < nq; q++) {
      gauss_block_d2(D, Np, p->z, b, B, qz + q * D, d2);
      double s = 0;
      if (w) {
#pragma omp simd reduction(+ : s)
        for (size_t i = 0; i < B; i++) s += w[i] * gfi_exp_simd(ln - 0.5 * d2[i], lo);
      } else {
#pragma omp simd reduction(+ : s)
        for (size_t i = 0; i < B; i++) s += gfi_exp_simd(ln - 0.5 * d2[i], lo);
      }
      part[q] += s;
    }
  }
}
