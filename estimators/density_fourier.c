/* Inner loops of the generalized Fourier density estimator.
 *
 * For a query x and data point k the kernel is prod_j (R_j/A) phi(sinc(u_j)),
 * u_j = R_j x_j - R_j k_j. No sin is evaluated in the loop: with the sines and
 * cosines of R_j x_j (per query) and R_j k_j (per plan),
 *     sin(u) = sin(R x) cos(R k) - cos(R x) sin(R k),
 * and sinc = sin(u)/u, switching to the Taylor series for |u| < 0.1 where the
 * identity would lose relative accuracy. Both branches are computed and one
 * selected, so the loop vectorises. For phi = z^l the scale (R_j/A)^(1/l) is
 * folded into every factor: the running product over axes is the l-th root of
 * the true term, which cannot underflow or overflow for any realistic D. */
#include <math.h>
#include "density_internal.h"

#define SERIES_CUT 0.1

static inline double sinc_factor(double rx, double sx, double cx, double rk, double sk,
                                 double ck, double g) {
  double u = rx - rk;
  double sn = sx * ck - cx * sk; /* g sin(u) */
  double q = sn / u;
  double u2 = u * u;
  double ser = g * (1.0 + u2 * (-1.0 / 6 + u2 * (1.0 / 120 + u2 * (-1.0 / 5040 + u2 * (1.0 / 362880)))));
  return fabs(u) < SERIES_CUT ? ser : q;
}

/* Fill prod[0..B) with prod_j g_j sinc(u_j) for one query. */
static void block_product(const gfi_density_plan *p, const double *qrx, const double *qsx,
                          const double *qcx, size_t b, double *restrict prod) {
  const size_t D = p->D, Np = p->Np, B = p->dblock;
  {
    const double *restrict rk = p->rk + b, *restrict sk = p->sk + b, *restrict ck = p->ck + b;
    const double rx = qrx[0], sx = qsx[0], cx = qcx[0], g = p->g[0];
#pragma omp simd
    for (size_t i = 0; i < B; i++) prod[i] = sinc_factor(rx, sx, cx, rk[i], sk[i], ck[i], g);
  }
  for (size_t j = 1; j < D; j++) {
    const double *restrict rk = p->rk + j * Np + b, *restrict sk = p->sk + j * Np + b,
                           *restrict ck = p->ck + j * Np + b;
    const double rx = qrx[j], sx = qsx[j], cx = qcx[j], g = p->g[j];
#pragma omp simd
    for (size_t i = 0; i < B; i++) prod[i] *= sinc_factor(rx, sx, cx, rk[i], sk[i], ck[i], g);
  }
}

/* sum_i w_i prod_i^L (w = NULL: weight 1), one loop per power so that each
 * vectorises with a fixed multiplication chain. */
#define POW_SUM(L, EXPR)                                                           \
  case L: {                                                                        \
    if (w) {                                                                       \
      _Pragma("omp simd reduction(+ : s)") for (size_t i = 0; i < B; i++) {        \
        double x = prod[i];                                                        \
        s += w[i] * (EXPR);                                                        \
      }                                                                            \
    } else {                                                                       \
      _Pragma("omp simd reduction(+ : s)") for (size_t i = 0; i < B; i++) {        \
        double x = prod[i];                                                        \
        s += (EXPR);                                                               \
      }                                                                            \
    }                                                                              \
    break;                                                                         \
  }

static double block_pow_sum(int l, const double *restrict prod, const double *restrict w, size_t B) {
  double s = 0;
  switch (l) {
    POW_SUM(1, x)
    POW_SUM(2, x * x)
    POW_SUM(3, x * x * x)
    POW_SUM(4, (x * x) * (x * x))
    POW_SUM(5, (x * x) * (x * x) * x)
    POW_SUM(6, (x * x) * (x * x) * (x * x))
    POW_SUM(7, (x * x) * (x * x) * (x * x) * x)
    POW_SUM(8, ((x * x) * (x * x)) * ((x * x) * (x * x)))
    default: break;
  }
  return s;
}

/* Custom phi: a call per factor, so no SIMD; correctness over speed. */
static double block_custom(const gfi_density_plan *p, const double *qrx, const double *qsx,
                           const double *qcx, size_t b, const double *w) {
  const size_t D = p->D, Np = p->Np, B = p->dblock;
  const gfi_kernel *k = &p->kernel;
  double s = 0;
  for (size_t i = 0; i < B; i++) {
    if (b + i >= p->N) break;
    double t = 1;
    for (size_t j = 0; j < D && t != 0; j++) {
      size_t at = j * Np + b + i;
      double sinc = sinc_factor(qrx[j], qsx[j], qcx[j], p->rk[at], p->sk[at], p->ck[at], 1.0);
      t *= p->g[j] * k->fn(sinc, k->ctx);
    }
    s += (w ? w[i] : 1.0) * t;
  }
  return s;
}

void density_fourier_task(const gfi_density_plan *p, const double *queries, size_t q0, size_t q1,
                          size_t i0, size_t i1, double *part, double *ws) {
  const size_t D = p->D, nq = q1 - q0, B = p->dblock;
  const int custom = p->kernel.kind == GFI_PHI_CUSTOM;
  double *qrx = ws, *qsx = ws + nq * D, *qcx = ws + 2 * nq * D, *prod = ws + 3 * nq * D;
  for (size_t q = 0; q < nq; q++) {
    const double *x = queries + (q0 + q) * D;
    for (size_t j = 0; j < D; j++) {
      double a = p->R[j] * x[j];
      double g = custom ? 1.0 : p->g[j];
      qrx[q * D + j] = a;
      qsx[q * D + j] = g * sin(a);
      qcx[q * D + j] = g * cos(a);
    }
    part[q] = 0;
  }
  for (size_t b = i0; b < i1; b += B) {
    const double *w = p->w ? p->w + b : NULL;
    for (size_t q = 0; q < nq; q++) {
      const double *rx = qrx + q * D, *sx = qsx + q * D, *cx = qcx + q * D;
      if (custom) {
        part[q] += block_custom(p, rx, sx, cx, b, w);
      } else {
        block_product(p, rx, sx, cx, b, prod);
        part[q] += block_pow_sum(p->kernel.l, prod, w, B);
      }
    }
  }
}
