/* Inner loops of the generalized Fourier Nadaraya-Watson estimator.
 *
 * As for the density (density_fourier.c) no sin is evaluated in the loop:
 * sin(R x - R k) = sin(R x) cos(R k) - cos(R x) sin(R k) from precomputed
 * sines and cosines, with the Taylor series of sinc for |u| < 0.5. Both
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
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* as in attention_fourier.c: selects, not branches */
#endif
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "regression_internal.h"
#include "simd_math.h"
#include "sinc_series.h"
#include "kernel_internal.h"

#define SERIES_CUT GFI_SINC_CUT

#define RENORM_LO 0x1p-500
#define RENORM_UP 0x1p+500

/* u = (rx - rk) + (rxl - rkl): the phases' two parts (engine_phase). */
static inline double sinc_factor(double rx, double rxl, double sx, double cx, double rk, double rkl,
                                 double sk, double ck) {
  double u = (rx - rk) + (rxl - rkl);
  double sn = sx * ck - cx * sk; /* sin(u) */
  double q = sn / u;
  double u2 = u * u;
  double ser = GFI_SINC_SERIES(double, u2);
  return fabs(u) < SERIES_CUT ? ser : q;
}

/* Per query: qrx holds the D hi parts of the phases, then the D lo parts
 * (2 D values); qsx, qcx their sines and cosines (D values). */
static void setup_queries(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                          double *qrx, double *qsx, double *qcx) {
  const size_t D = p->D;
  for (size_t q = 0; q < q1 - q0; q++) {
    const double *x = queries + (q0 + q) * D;
    for (size_t j = 0; j < D; j++)
      engine_phase(p->R[j], x[j], qrx + 2 * q * D + j, qrx + 2 * q * D + D + j, qsx + q * D + j,
                   qcx + q * D + j);
  }
}

/* Numerator and denominator of one factor: (sin u, u), or (series, 1) for
 * |u| < 0.5, so that a product over axes needs one division. */
static inline void sinc_parts(double rx, double rxl, double sx, double cx, double rk, double rkl,
                              double sk, double ck, double *num, double *den) {
  double u = (rx - rk) + (rxl - rkl);
  double sn = sx * ck - cx * sk;
  double u2 = u * u;
  double ser = GFI_SINC_SERIES(double, u2);
  int small = fabs(u) < SERIES_CUT;
  *num = small ? ser : sn;
  *den = small ? 1.0 : u;
}

/* prod[0..B) = prod_j sinc(u_ij) for one query, data block starting at b,
 * as (prod_j sin u_ij) / (prod_j u_ij) with one division (plain path only:
 * |u| >= 0.5 in the denominator, so it cannot underflow for D*l <= 64, and
 * an overflow to infinity means a term below 2^-1022, which the plain path
 * may drop). den is workspace. */
static void block_product(const gfi_nw_plan *p, const double *qrx, const double *qsx,
                          const double *qcx, size_t b, double *restrict prod, double *restrict den) {
  const size_t D = p->D, Np = p->lay.Np, B = p->lay.dblock;
  {
    const double *restrict rk = p->rk + b, *restrict rl = p->rl + b, *restrict sk = p->sk + b,
                           *restrict ck = p->ck + b;
    const double rx = qrx[0], rxl = qrx[D], sx = qsx[0], cx = qcx[0];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n, d;
      sinc_parts(rx, rxl, sx, cx, rk[i], rl[i], sk[i], ck[i], &n, &d);
      prod[i] = n;
      den[i] = d;
    }
  }
  for (size_t j = 1; j < D; j++) {
    const double *restrict rk = p->rk + j * Np + b, *restrict rl = p->rl + j * Np + b,
                           *restrict sk = p->sk + j * Np + b, *restrict ck = p->ck + j * Np + b;
    const double rx = qrx[j], rxl = qrx[D + j], sx = qsx[j], cx = qcx[j];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n, d;
      sinc_parts(rx, rxl, sx, cx, rk[i], rl[i], sk[i], ck[i], &n, &d);
      prod[i] *= n;
      den[i] *= d;
    }
  }
#pragma omp simd
  for (size_t i = 0; i < B; i++) prod[i] /= den[i];
}

/* The same with renormalisation, again as numerator and denominator:
 * (num / den) * 2^(-500 cnt) is the true product. The numerator (|num| <= 1)
 * is scaled up by 2^500 when it falls below 2^-500; the denominator (each
 * factor 1 or |u| >= 0.5) is scaled back into [2^-500, 2^500] either way. */
static void block_product_scaled(const gfi_nw_plan *p, const double *qrx, const double *qsx,
                                 const double *qcx, size_t b, double *restrict num,
                                 double *restrict den, double *restrict cnt) {
  const size_t D = p->D, Np = p->lay.Np, B = p->lay.dblock;
  {
    const double *restrict rk = p->rk + b, *restrict rl = p->rl + b, *restrict sk = p->sk + b,
                           *restrict ck = p->ck + b;
    const double rx = qrx[0], rxl = qrx[D], sx = qsx[0], cx = qcx[0];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n, d;
      sinc_parts(rx, rxl, sx, cx, rk[i], rl[i], sk[i], ck[i], &n, &d);
      num[i] = n;
      den[i] = d;
      cnt[i] = 0;
    }
  }
  for (size_t j = 1; j < D; j++) {
    const double *restrict rk = p->rk + j * Np + b, *restrict rl = p->rl + j * Np + b,
                           *restrict sk = p->sk + j * Np + b, *restrict ck = p->ck + j * Np + b;
    const double rx = qrx[j], rxl = qrx[D + j], sx = qsx[j], cx = qcx[j];
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n, d;
      sinc_parts(rx, rxl, sx, cx, rk[i], rl[i], sk[i], ck[i], &n, &d);
      n *= num[i];
      d *= den[i];
      double an = fabs(n), ad = fabs(d);
      int ns = an < RENORM_LO, dl = ad > RENORM_UP, ds = ad < RENORM_LO;
      num[i] = ns ? n * RENORM_UP : n;
      den[i] = dl ? d * RENORM_LO : (ds ? d * RENORM_UP : d);
      cnt[i] += (ns ? 1.0 : 0.0) + (dl ? 1.0 : 0.0) - (ds ? 1.0 : 0.0);
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


/* Add terms t[i] (i < B) to an accumulator (S, A, num[V]) at scale 1. */
static void add_terms(const gfi_nw_plan *p, const double *restrict t, size_t b, int odd, double *acc) {
  const size_t B = p->lay.dblock, V = p->V, Np = p->lay.Np;
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

GFI_CLONES void nw_fourier_plain_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                           size_t i0, size_t i1, double *acc, double *ws) {
  const size_t D = p->D, nq = q1 - q0, B = p->lay.dblock, W = NW_ACC(p->V);
  const int l = p->kernel.l, odd = l & 1;
  double *qrx = ws, *qsx = ws + 2 * p->lay.qtile * D, *qcx = ws + 3 * p->lay.qtile * D;
  double *prod = ws + 4 * p->lay.qtile * D, *t = prod + B, *den = t + B;
  setup_queries(p, queries, q0, q1, qrx, qsx, qcx);
  for (size_t q = 0; q < nq; q++) {
    acc[q * W] = 0; /* plain sums are at scale 2^0 */
    for (size_t c = 1; c < W; c++) acc[q * W + c] = 0;
  }
  for (size_t b = i0; b < i1; b += B)
    for (size_t q = 0; q < nq; q++) {
      block_product(p, qrx + 2 * q * D, qsx + q * D, qcx + q * D, b, prod, den);
      block_pow(l, prod, t, B);
      add_terms(p, t, b, odd, acc + q * W);
    }
}

/* Custom phi: a call per factor (no SIMD), renormalised both ways since phi
 * may exceed 1. */
static void block_custom_scaled(const gfi_nw_plan *p, const double *qrx, const double *qsx,
                                const double *qcx, size_t b, double *prod, double *cnt) {
  const size_t D = p->D, Np = p->lay.Np, B = p->lay.dblock;
  const gfi_kernel *k = &p->kernel;
  for (size_t i = 0; i < B; i++) {
    double t = 1, c = 0;
    if (b + i >= p->N) t = 0;
    for (size_t j = 0; j < D && t != 0; j++) {
      size_t at = j * Np + b + i;
      t *= kernel_phi(k, sinc_factor(qrx[j], qrx[D + j], qsx[j], qcx[j], p->rk[at], p->rl[at],
                                     p->sk[at], p->ck[at]));
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

GFI_CLONES void nw_fourier_scaled_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                            size_t i0, size_t i1, double *acc, double *ws) {
  const size_t D = p->D, nq = q1 - q0, B = p->lay.dblock, V = p->V, Np = p->lay.Np, W = NW_ACC(V);
  const int custom = p->kernel.kind != GFI_PHI_POW; /* a call of phi per factor */
  const int l = custom ? 1 : p->kernel.l;
  double *qrx = ws, *qsx = ws + 2 * p->lay.qtile * D, *qcx = ws + 3 * p->lay.qtile * D;
  double *prod = ws + 4 * p->lay.qtile * D, *cnt = prod + B, *t = cnt + B, *ex = t + B, *den = ex + B;
  setup_queries(p, queries, q0, q1, qrx, qsx, qcx);
  for (size_t q = 0; q < nq; q++) {
    acc[q * W] = -INFINITY;
    for (size_t c = 1; c < W; c++) acc[q * W + c] = 0;
  }
  for (size_t b = i0; b < i1; b += B)
    for (size_t q = 0; q < nq; q++) {
      double *a = acc + q * W;
      if (custom) {
        block_custom_scaled(p, qrx + 2 * q * D, qsx + q * D, qcx + q * D, b, prod, cnt);
        for (size_t i = 0; i < B; i++) den[i] = 1;
      } else {
        block_product_scaled(p, qrx + 2 * q * D, qsx + q * D, qcx + q * D, b, prod, den, cnt);
      }
      /* split into mantissa^l and a binary exponent (bit fields, so that
       * the loop vectorises); the block's largest exponent */
      double emax = -INFINITY;
#pragma omp simd reduction(max : emax)
      for (size_t i = 0; i < B; i++) {
        double n = prod[i], d = den[i];
        int ok = n != 0 && fabs(d) <= DBL_MAX;
        uint64_t bn, bd;
        memcpy(&bn, &n, 8);
        memcpy(&bd, &d, 8);
        int64_t en = (int64_t)((bn >> 52) & 0x7ff), ed = (int64_t)((bd >> 52) & 0x7ff);
        bn = (bn & 0x800fffffffffffffULL) | 0x3ff0000000000000ULL; /* mantissa in [1, 2) */
        bd = (bd & 0x800fffffffffffffULL) | 0x3ff0000000000000ULL;
        double mn, md;
        memcpy(&mn, &bn, 8);
        memcpy(&md, &bd, 8);
        double m = mn / md, m2 = m * m, m4 = m2 * m2, v;
        switch (l) { /* l is the same for every i: the branch is hoisted */
          case 1: v = m; break;
          case 2: v = m2; break;
          case 3: v = m2 * m; break;
          case 4: v = m4; break;
          case 5: v = m4 * m; break;
          case 6: v = m4 * m2; break;
          case 7: v = m4 * m2 * m; break;
          default: v = m4 * m4; break;
        }
        double e = (double)l * ((double)(en - ed) - NW_RENORM_BITS * cnt[i]);
        t[i] = ok ? v : 0.0;
        ex[i] = ok ? e : -INFINITY;
        emax = ex[i] > emax ? ex[i] : emax;
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
#pragma omp simd reduction(+ : s, sa)
      for (size_t i = 0; i < B; i++) {
        /* t * 2^(ex - E) with 2^k built from its bits; k < -1000 gives 0
         * (a term that small relative to the largest cannot matter) */
        double k = ex[i] - E;
        int keep = k >= -1000.0;
        int64_t kb = keep ? (int64_t)k + 1023 : 0;
        uint64_t bits = (uint64_t)kb << 52;
        double f;
        memcpy(&f, &bits, 8);
        double v = keep ? t[i] * f : 0.0;
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
