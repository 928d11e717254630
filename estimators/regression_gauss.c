/* Inner loop of the Gaussian Nadaraya-Watson baseline: inputs are whitened by
 * the inverse Cholesky factor of H, so K_i = exp(-|z - z_i|^2 / 2). The sums
 * are kept relative to the largest kernel value seen so far for the query
 * (a streaming log-sum-exp), so they never underflow to 0/0 however far the
 * query is from the data; kernel values below exp(-708) relative to that
 * largest one count as 0 (gfi_exp_simd, simd_math.h, vectorises). */
#include <math.h>
#include "regression_internal.h"
#include "simd_math.h"
#include "gauss_block.h"


GFI_CLONES void nw_gauss_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1, size_t i0,
                   size_t i1, double *acc, double *ws) {
  const size_t D = p->D, Np = p->lay.Np, nq = q1 - q0, B = p->lay.dblock, V = p->V, W = NW_ACC(V);
  const double lo = p->exp_floor;
  double *qz = ws, *d2 = ws + 3 * p->lay.qtile * D, *t = d2 + B;
  gauss_whiten_tile(D, p->Linv, queries, q0, nq, qz);
  for (size_t q = 0; q < nq; q++) {
    acc[q * W] = -INFINITY;
    for (size_t c = 1; c < W; c++) acc[q * W + c] = 0;
  }
  for (size_t b = i0; b < i1; b += B)
    for (size_t q = 0; q < nq; q++) {
      double *a = acc + q * W;
      gauss_block_d2(D, Np, p->z, b, B, qz + q * D, d2);
      double mn = INFINITY;
#pragma omp simd reduction(min : mn)
      for (size_t i = 0; i < B; i++) mn = d2[i] < mn ? d2[i] : mn;
      double eb = -0.5 * mn;
      if (!(eb > -INFINITY)) continue; /* only padding in this block */
      if (eb > a[0]) {
        if (a[0] != -INFINITY) {
          double f = exp(a[0] - eb);
          for (size_t c = 1; c < W; c++) a[c] *= f;
        }
        a[0] = eb;
      }
      const double E = a[0];
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (size_t i = 0; i < B; i++) {
        t[i] = gfi_exp_simd(-0.5 * d2[i] - E, lo);
        s += t[i];
      }
      a[1] += s;
      a[2] += s;
      for (size_t v = 0; v < V; v++) {
        const double *restrict y = p->y + v * Np + b;
        double n = 0;
#pragma omp simd reduction(+ : n)
        for (size_t i = 0; i < B; i++) n += t[i] * y[i];
        a[3 + v] += n;
      }
    }
}
