#ifndef GFI_GAUSS_BLOCK_H
#define GFI_GAUSS_BLOCK_H

#include <stddef.h>

/* The inner steps the Gaussian density and Nadaraya-Watson engines share
 * (density_gauss.c, regression_gauss.c; inlined into their kernel clones):
 * qz (nq x D) = Linv x for the queries [q0, q0 + nq) (x: rows of D), and
 * d2[i] = |zq - z_(b+i)|^2 for the block of B points at b of the whitened
 * table z (D x Np). */
static inline void gauss_whiten_tile(size_t D, const double *Linv, const double *x, size_t q0, size_t nq,
                                      double *qz) {
  for (size_t q = 0; q < nq; q++) {
    const double *xq = x + (q0 + q) * D;
    for (size_t a = 0; a < D; a++) {
      double s = 0;
      for (size_t b = 0; b <= a; b++) s += Linv[a * D + b] * xq[b];
      qz[q * D + a] = s;
    }
  }
}
static inline void gauss_block_d2(size_t D, size_t Np, const double *z, size_t b, size_t B, const double *zq,
                                   double *restrict d2) {
  {
    const double *restrict zb = z + b;
    const double z0 = zq[0];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double d = z0 - zb[i];
      d2[i] = d * d;
    }
  }
  for (size_t a = 1; a < D; a++) {
    const double *restrict zb = z + a * Np + b;
    const double za = zq[a];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double d = za - zb[i];
      d2[i] += d * d;
    }
  }
}

#endif
