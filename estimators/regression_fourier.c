/* Inner loops of the generalized Fourier Nadaraya-Watson estimator.
 *
 * As for the density (density_fourier.c) no sin is evaluated in the loop:
 * sin(R x - R k) = sin(R x) cos(R k) - cos(R x) sin(R k) from precomputed
 * sines and cosines, with the Taylor series of sinc for |u| < 0.1. Both
 * branches are computed and one selected, so the loops vectorise.
 *
 * Plain path: K_i = (prod_j sinc(u_ij))^l, every factor in [-0.22, 1], so
 * nothing overflows; the driver re-runs a query on the scaled path when its
 * sum of |K_i| is below 2^-600 (where underflow could matter).
 *
 * Scaled path: the running product is multiplied by 2^500 whenever its
 * magnitude drops below 2^-500 (a compare and a select per factor, still
 * vectorised), counting the renormalisations. After the last axis each term
 * is split as mantissa * 2^e (frexp), raised to the power l as m^l * 2^(l e),
 * and the block's terms are summed relative to the largest exponent seen so
 * far for that query. Per data point this costs O(1) beyond the O(D)
 * product, so for large D the overhead is small (measured in bench_regress). */
#include <math.h>
#include "regression_internal.h"

#define SERIES_CUT 0.1
#define RENORM_LO 0x1p-500
#define RENORM_UP 0x1p+500

static inline double sinc_factor(double rx, double sx, double cx, double rk, double sk, double ck) {
  double u = rx - rk;
  double sn = sx * ck - cx * sk; /* sin(u) */
  double q = sn / u;
  double u2 = u * u;
  double ser = 1.0 + u2 * (-1.0 / 6 + u2 * (1.0 / 120 + u2 * (-1.0 / 5040 + u2 * (1.0 / 362880))));
  return fabs(u) < SERIES_CUT ? ser : q;
}

static void setup_queries(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                          double *qrx, double *qsx, double *qcx) {
  const size_t D = p->D;
  for (size_t q = 0; q < q1 - q0; q++) {
    const double *x = queries + (q0 + q) * D;
    for (size_t j = 0; j < D; j++) {
      double a = p->R[j] * x[j];
      qrx[q * D + j] = a;
      qsx[q * D + j] = sin(a);
      qcx[q * D + j] = cos(a);
    }
  }
}

/* prod[0..B) = prod_j sinc(u_ij) for one query, data block starting at b. */
static void block_product(const gfi_nw_plan *p, const double *qrx, const double *qsx,
                          const double *qcx, size_t b, double *restrict prod) {
  const size_t D = p->D, Np = p->Np, B = p->dblock;
  {
    const double *restrict rk = p->rk + b, *restrict sk = p->sk + b, *restrict ck = p->ck + b;
    const double rx = qrx[0], sx = qsx[0], cx = qcx[0];
#pragma omp simd
    for (size_t i = 0; i < B; i++) prod[i] = sinc_factor(rx, sx, cx, rk[i], sk[i], ck[i]);
  }
  for (size_t j = 1; j < D; j++) {
    const double *restrict rk = p->rk + j * Np + b, *restrict sk = p->sk + j * Np + b,
                           *restrict ck = p->ck + j * Np + b;
    const double rx = qrx[j], sx = qsx[j], cx = qcx[j];
#pragma omp simd
    for (size_t i = 0; i < B; i++) prod[i] *= sinc_factor(rx, sx, cx, rk[i], sk[i], ck[i]);
  }
}

/* The same with renormalisation: prod * 2^(-500 cnt) is the true product. */
static void block_product_scaled(const gfi_nw_plan *p, const double *qrx, const double *qsx,
                                 const double *qcx, size_t b, double *restrict prod,
                                 double *restrict cnt) {
  const size_t D = p->D, Np = p->Np, B = p->dblock;
  {
    const double *restrict rk = p->rk + b, *restrict sk = p->sk + b, *restrict ck = p->ck + b;
    const double rx = qrx[0], sx = qsx[0], cx = qcx[0];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      prod[i] = sinc_factor(rx, sx, cx, rk[i], sk[i], ck[i]);
      cnt[i] = 0;
    }
  }
  for (size_t j = 1; j < D; j++) {
    const double *restrict rk = p->rk + j * Np + b, *restrict sk = p->sk + j * Np + b,
                           *restrict ck = p->ck + j * Np + b;
    const double rx = qrx[j], sx = qsx[j], cx = qcx[j];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double t = prod[i] * sinc_factor(rx, sx, cx, rk[i], sk[i], ck[i]);
      int small = fabs(t) < RENORM_LO;
      prod[i] = small ? t * RENORM_UP : t;
      cnt[i] += small ? 1.0 : 0.0;
    }
  }
}

/* t[i] = prod[i]^l, one loop per power so that each vectorises. */
#define POW_CASE(L, EXPR)                                       \
  case L:                                                       \
    _Pragma("omp simd") for (size_t i = 0; i < B; i++) {        \
      double x = prod[i];                                       \
      t[i] = (EXPR);                                            \
    }                                                           \
    break;

static void block_pow(int l, const double *restrict prod, double *restrict t, size_t B) {
  switch (l) {
    POW_CASE(1, x)
    POW_CASE(2, x * x)
    POW_CASE(3, x * x * x)
    POW_CASE(4, (x * x) * (x * x))
    POW_CASE(5, (x * x) * (x * x) * x)
    POW_CASE(6, (x * x) * (x * x) * (x * x))
    POW_CASE(7, (x * x) * (x * x) * (x * x) * x)
    POW_CASE(8, ((x * x) * (x * x)) * ((x * x) * (x * x)))
    default: break;
  }
}

static inline double ipow(double m, int l) {
  double r = 1;
  for (int k = 0; k < l; k++) r *= m;
  return r;
}

/* Add terms t[i] (i < B) to an accumulator (S, A, num[V]) at scale 1. */
static void add_terms(const gfi_nw_plan *p, const double *restrict t, size_t b, int odd, double *acc) {
  const size_t B = p->dblock, V = p->V, Np = p->Np;
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (size_t i = 0; i < B; i++) s += t[i];
  acc[1] += s;
  if (odd) {
    double a = 0;
#pragma omp simd reduction(+ : a)
    for (size_t i = 0; i < B; i++) a += fabs(t[i]);
    acc[2] += a;
  } else {
    acc[2] += s;
  }
  for (size_t v = 0; v < V; v++) {
    const double *restrict y = p->y + v * Np + b;
    double n = 0;
#pragma omp simd reduction(+ : n)
    for (size_t i = 0; i < B; i++) n += t[i] * y[i];
    acc[3 + v] += n;
  }
}

void nw_fourier_plain_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                           size_t i0, size_t i1, double *acc, double *ws) {
  const size_t D = p->D, nq = q1 - q0, B = p->dblock, W = NW_ACC(p->V);
  const int l = p->kernel.l, odd = l & 1;
  double *qrx = ws, *qsx = ws + p->qtile * D, *qcx = ws + 2 * p->qtile * D;
  double *prod = ws + 3 * p->qtile * D, *t = prod + B;
  setup_queries(p, queries, q0, q1, qrx, qsx, qcx);
  for (size_t q = 0; q < nq; q++) {
    acc[q * W] = 0; /* plain sums are at scale 2^0 */
    for (size_t c = 1; c < W; c++) acc[q * W + c] = 0;
  }
  for (size_t b = i0; b < i1; b += B)
    for (size_t q = 0; q < nq; q++) {
      block_product(p, qrx + q * D, qsx + q * D, qcx + q * D, b, prod);
      block_pow(l, prod, t, B);
      add_terms(p, t, b, odd, acc + q * W);
    }
}

/* Custom phi: a call per factor (no SIMD), renormalised both ways since phi
 * may exceed 1. */
static void block_custom_scaled(const gfi_nw_plan *p, const double *qrx, const double *qsx,
                                const double *qcx, size_t b, double *prod, double *cnt) {
  const size_t D = p->D, Np = p->Np, B = p->dblock;
  const gfi_kernel *k = &p->kernel;
  for (size_t i = 0; i < B; i++) {
    double t = 1, c = 0;
    if (b + i >= p->N) t = 0;
    for (size_t j = 0; j < D && t != 0; j++) {
      size_t at = j * Np + b + i;
      t *= k->fn(sinc_factor(qrx[j], qsx[j], qcx[j], p->rk[at], p->sk[at], p->ck[at]), k->ctx);
      if (fabs(t) < RENORM_LO) {
        t *= RENORM_UP;
        c += 1;
      } else if (fabs(t) > RENORM_UP) {
        t *= RENORM_LO;
        c -= 1;
      }
    }
    prod[i] = isfinite(t) ? t : 0.0;
    cnt[i] = c;
  }
}

void nw_fourier_scaled_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                            size_t i0, size_t i1, double *acc, double *ws) {
  const size_t D = p->D, nq = q1 - q0, B = p->dblock, V = p->V, Np = p->Np, W = NW_ACC(V);
  const int custom = p->kernel.kind == GFI_PHI_CUSTOM;
  const int l = custom ? 1 : p->kernel.l;
  double *qrx = ws, *qsx = ws + p->qtile * D, *qcx = ws + 2 * p->qtile * D;
  double *prod = ws + 3 * p->qtile * D, *cnt = prod + B, *t = cnt + B, *ex = t + B;
  setup_queries(p, queries, q0, q1, qrx, qsx, qcx);
  for (size_t q = 0; q < nq; q++) {
    acc[q * W] = -INFINITY;
    for (size_t c = 1; c < W; c++) acc[q * W + c] = 0;
  }
  for (size_t b = i0; b < i1; b += B)
    for (size_t q = 0; q < nq; q++) {
      double *a = acc + q * W;
      if (custom)
        block_custom_scaled(p, qrx + q * D, qsx + q * D, qcx + q * D, b, prod, cnt);
      else
        block_product_scaled(p, qrx + q * D, qsx + q * D, qcx + q * D, b, prod, cnt);
      /* split into mantissa^l and a binary exponent; the block's largest */
      double emax = -INFINITY;
      for (size_t i = 0; i < B; i++) {
        if (prod[i] == 0) {
          t[i] = 0;
          ex[i] = -INFINITY;
          continue;
        }
        int e;
        double m = frexp(prod[i], &e);
        t[i] = ipow(m, l);
        ex[i] = (double)l * ((double)e - NW_RENORM_BITS * cnt[i]);
        if (ex[i] > emax) emax = ex[i];
      }
      if (emax == -INFINITY) continue;
      if (emax > a[0]) {
        if (a[0] != -INFINITY) {
          double d = a[0] - emax, f = d < -2000 ? 0.0 : ldexp(1.0, (int)d);
          for (size_t c = 1; c < W; c++) a[c] *= f;
        }
        a[0] = emax;
      }
      const double E = a[0];
      double s = 0, sa = 0;
      for (size_t i = 0; i < B; i++) {
        double d = ex[i] - E;
        double v = d < -2000 ? 0.0 : ldexp(t[i], (int)d);
        t[i] = v;
        s += v;
        sa += fabs(v);
      }
      a[1] += s;
      a[2] += sa;
      for (size_t v = 0; v < V; v++) {
        const double *restrict y = p->y + v * Np + b;
        double n = 0;
#pragma omp simd reduction(+ : n)
        for (size_t i = 0; i < B; i++) n += t[i] * y[i];
        a[3 + v] += n;
      }
    }
}
