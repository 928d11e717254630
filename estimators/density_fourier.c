/* Inner loops of the generalized Fourier density estimator.
 *
 * For a query x and data point k the kernel is prod_j (R_j/A) phi(sinc(u_j)),
 * u_j = R_j x_j - R_j k_j. No sin is evaluated in the loop: with the sines and
 * cosines of R_j x_j (per query) and R_j k_j (per plan),
 *     sin(u) = sin(R x) cos(R k) - cos(R x) sin(R k),
 * and sinc = sin(u)/u, switching to the Taylor series for |u| < 0.5 where the
 * identity would lose relative accuracy. Both branches are computed and one
 * selected, so the loop vectorises. Factors are kept as numerator and
 * denominator over groups of up to 4 axes, so a division is paid once per
 * group (each denominator is |u| >= 0.5 or 1/g > 0: never 0/0). For phi = z^l the scale (R_j/A)^(1/l) is
 * folded into every factor: the running product over axes is the l-th root of
 * the true term, which cannot underflow or overflow for any realistic D. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* as in attention_fourier.c: selects, not branches */
#endif
#include <math.h>
#include "density_internal.h"
#include "simd_math.h"
#include "sinc_series.h"
#include "engine.h"
#include "kernel_internal.h"
#include "../lib/simd_sincos.h"

#define SERIES_CUT GFI_SINC_CUT

/* Numerator and denominator of g sinc(u): (g sin u, u), or (series(u), 1/g)
 * for |u| < SERIES_CUT, so that g enters the series branch without a
 * multiplication. Both are computed and one selected (vectorised with
 * -fno-trapping-math, above). The series' coefficients are constants shared
 * by every axis (sinc_series.h); a table of g times them per axis would not
 * fit in the vector registers for a group of 4 axes. ig = 1/g. */
static inline void sinc_parts(double rx, double rxl, double sx, double cx, double rk, double rkl,
                              double sk, double ck, double ig, double *num, double *den) {
  double u = (rx - rk) + (rxl - rkl); /* the phases' two parts (engine_phase) */
  double sn = sx * ck - cx * sk; /* g sin(u) */
  double u2 = u * u;
  double ser = GFI_SINC_SERIES(double, u2);
  int small = u2 < SERIES_CUT * SERIES_CUT;
  *num = small ? ser : sn;
  *den = small ? ig : u; /* series / (1 / g): g sinc(u) without a multiplication */
}

/* Single factor g sinc(u) (custom phi path, g = 1 there). */
static inline double sinc_factor(double rx, double rxl, double sx, double cx, double rk, double rkl,
                                 double sk, double ck, double ig) {
  double n, d;
  sinc_parts(rx, rxl, sx, cx, rk, rkl, sk, ck, ig, &n, &d);
  return n / d;
}

/* Pointers and query values of axis j0 + a, for the group loops. */
typedef struct {
  const double *rk, *rl, *sk, *ck;
  double rx, rxl, sx, cx;
  double ig; /* 1/g_j, by value: loop-invariant for the vectoriser */
} axis_view;

static inline axis_view view(const gfi_density_plan *p, const double *qrx, const double *qsx,
                             const double *qcx, size_t j, size_t b) {
  /* qrx holds the query's hi parts, and its lo parts D values further on */
  const size_t o = j * p->lay.Np + b;
  axis_view v = {p->rk + o, p->rl + o, p->sk + o, p->ck + o, qrx[j], qrx[p->D + j], qsx[j], qcx[j],
                 1.0 / p->g[j]};
  return v;
}

#define PART(v, i, n, d) \
  sinc_parts(v.rx, v.rxl, v.sx, v.cx, v.rk[i], v.rl[i], v.sk[i], v.ck[i], v.ig, &n, &d)

/* prod[i] = (or *=) the product of g_j sinc(u_ij) over a group of 1, 2 or 4
 * axes, one division per group. Written out per group size: an inner loop
 * over the group's axes keeps gcc from vectorising over i. */
static void group1(const axis_view a, size_t B, double *restrict prod, int first) {
  if (first) {
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n0, d0;
      PART(a, i, n0, d0);
      prod[i] = n0 / d0;
    }
  } else {
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n0, d0;
      PART(a, i, n0, d0);
      prod[i] *= n0 / d0;
    }
  }
}

static void group2(const axis_view a, const axis_view b, size_t B, double *restrict prod, int first) {
  if (first) {
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n0, d0, n1, d1;
      PART(a, i, n0, d0);
      PART(b, i, n1, d1);
      prod[i] = (n0 * n1) / (d0 * d1);
    }
  } else {
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n0, d0, n1, d1;
      PART(a, i, n0, d0);
      PART(b, i, n1, d1);
      prod[i] *= (n0 * n1) / (d0 * d1);
    }
  }
}

static void group4(const axis_view a, const axis_view b, const axis_view c, const axis_view d,
                   size_t B, double *restrict prod, int first) {
  if (first) {
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n0, d0, n1, d1, n2, d2, n3, d3;
      PART(a, i, n0, d0);
      PART(b, i, n1, d1);
      PART(c, i, n2, d2);
      PART(d, i, n3, d3);
      prod[i] = ((n0 * n1) * (n2 * n3)) / ((d0 * d1) * (d2 * d3));
    }
  } else {
#pragma omp simd
    for (size_t i = 0; i < B; i++) {
      double n0, d0, n1, d1, n2, d2, n3, d3;
      PART(a, i, n0, d0);
      PART(b, i, n1, d1);
      PART(c, i, n2, d2);
      PART(d, i, n3, d3);
      prod[i] *= ((n0 * n1) * (n2 * n3)) / ((d0 * d1) * (d2 * d3));
    }
  }
}

/* Fill prod[0..B) with prod_j g_j sinc(u_j) for one query. */
static void block_product(const gfi_density_plan *p, const double *qrx, const double *qsx,
                          const double *qcx, size_t b, double *restrict prod) {
  const size_t D = p->D, B = p->lay.dblock;
  size_t j = 0;
  for (; j + 4 <= D; j += 4)
    group4(view(p, qrx, qsx, qcx, j, b), view(p, qrx, qsx, qcx, j + 1, b),
           view(p, qrx, qsx, qcx, j + 2, b), view(p, qrx, qsx, qcx, j + 3, b), B, prod, j == 0);
  if (j + 2 <= D) {
    group2(view(p, qrx, qsx, qcx, j, b), view(p, qrx, qsx, qcx, j + 1, b), B, prod, j == 0);
    j += 2;
  }
  if (j < D) group1(view(p, qrx, qsx, qcx, j, b), B, prod, j == 0);
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

/* Custom phi: a call per factor, so no SIMD; correctness over speed. A
 * family that is not a function of sinc (flat-top) takes the phase
 * difference u itself (kernel_spatial). */
static double block_custom(const gfi_density_plan *p, const double *qrx, const double *qsx,
                           const double *qcx, size_t b, const double *w) {
  const size_t D = p->D, Np = p->lay.Np, B = p->lay.dblock;
  const gfi_kernel *k = &p->kernel;
  const int spatial = k->kind != GFI_PHI_CUSTOM && !kernel_is_sinc(k);
  double s = 0;
  for (size_t i = 0; i < B; i++) {
    if (b + i >= p->N) break;
    double t = 1;
    for (size_t j = 0; j < D && t != 0; j++) {
      size_t at = j * Np + b + i;
      if (spatial) {
        t *= p->g[j] * kernel_spatial(k, (qrx[j] - p->rk[at]) + (qrx[D + j] - p->rl[at]));
        continue;
      }
      double sinc = sinc_factor(qrx[j], qrx[D + j], qsx[j], qcx[j], p->rk[at], p->rl[at], p->sk[at],
                                p->ck[at], 1.0);
      t *= p->g[j] * kernel_phi(k, sinc);
    }
    s += (w ? w[i] : 1.0) * t;
  }
  return s;
}

/* The flat-top factor g sinc(a u) sinc(b u), a = (1 + c) / 2, b = (1 - c) / 2
 * (kernel_flattop_spatial), by the inline sincos and the sinc series below
 * GFI_SINC_CUT, both computed and one selected (vectorised). |a u| <= GFI_SINCOS_SIMD_MAX. */
static inline double flattop_factor(double u, double a, double b, double g) {
  double ua = a * u, ub = b * u, sa, ca, sb, cb;
  gfi_sincos_simd(ua, &sa, &ca);
  gfi_sincos_simd(ub, &sb, &cb);
  double za = ua * ua, zb = ub * ub;
  int sma = za < SERIES_CUT * SERIES_CUT, smb = zb < SERIES_CUT * SERIES_CUT;
  double na = sma ? GFI_SINC_SERIES(double, za) : sa, da = sma ? 1.0 : ua;
  double nb = smb ? GFI_SINC_SERIES(double, zb) : sb, db = smb ? 1.0 : ub;
  return g * (na * nb) / (da * db);
}

/* sum_i w_i prod_j g_j K_j for the flat-top family over the block's real
 * points (the padding is never read), vectorised over the points; 0 (and
 * nothing summed) when some |a u| of the block is beyond the inline sincos'
 * range: then block_custom's libm path takes the block. */
static int block_flattop(const gfi_density_plan *p, const double *qrx, size_t b, const double *w,
                         double *restrict prod, double *sum) {
  const size_t D = p->D, Np = p->lay.Np, n = p->N - b < p->lay.dblock ? p->N - b : p->lay.dblock;
  const double c = kernel_flattop_c(&p->kernel), a = 0.5 * (1 + c), bh = 0.5 * (1 - c);
  for (size_t j = 0; j < D; j++) {
    const double *rk = p->rk + j * Np + b, *rl = p->rl + j * Np + b;
    const double rx = qrx[j], rxl = qrx[D + j], g = p->g[j];
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((rx - rk[i]) + (rxl - rl[i])));
    if (!(a * m <= 0.5 * GFI_SINCOS_SIMD_MAX)) return 0;
    if (j == 0) {
#pragma omp simd
      for (size_t i = 0; i < n; i++) prod[i] = flattop_factor((rx - rk[i]) + (rxl - rl[i]), a, bh, g);
    } else {
#pragma omp simd
      for (size_t i = 0; i < n; i++) prod[i] *= flattop_factor((rx - rk[i]) + (rxl - rl[i]), a, bh, g);
    }
  }
  double s = 0;
  if (w) {
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < n; i++) s += w[i] * prod[i];
  } else {
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < n; i++) s += prod[i];
  }
  *sum = s;
  return 1;
}

GFI_CLONES void density_fourier_task(const gfi_density_plan *p, const double *queries, size_t q0, size_t q1,
                          size_t i0, size_t i1, double *part, double *ws) {
  const size_t D = p->D, nq = q1 - q0, B = p->lay.dblock;
  const int custom = p->kernel.kind != GFI_PHI_POW; /* a call of phi per factor */
  const int flattop = p->kernel.kind == GFI_PHI_FLATTOP;
  /* per query: D hi parts, then D lo parts of the phases (2 D values) */
  double *qrx = ws, *qsx = ws + 2 * nq * D, *qcx = ws + 3 * nq * D, *prod = ws + 4 * nq * D;
  for (size_t q = 0; q < nq; q++) {
    const double *x = queries + (q0 + q) * D;
    for (size_t j = 0; j < D; j++) {
      double hi, lo, sa, ca;
      engine_phase(p->R[j], x[j], &hi, &lo, &sa, &ca);
      double g = custom ? 1.0 : p->g[j];
      qrx[2 * q * D + j] = hi;
      qrx[2 * q * D + D + j] = lo;
      qsx[q * D + j] = g * sa;
      qcx[q * D + j] = g * ca;
    }
    part[q] = 0;
  }
  for (size_t b = i0; b < i1; b += B) {
    const double *w = p->w ? p->w + b : NULL;
    for (size_t q = 0; q < nq; q++) {
      const double *rx = qrx + 2 * q * D, *sx = qsx + q * D, *cx = qcx + q * D;
      double fs;
      if (flattop && block_flattop(p, rx, b, w, prod, &fs)) {
        part[q] += fs;
      } else if (custom) {
        part[q] += block_custom(p, rx, sx, cx, b, w);
      } else {
        block_product(p, rx, sx, cx, b, prod);
        part[q] += block_pow_sum(p->kernel.l, prod, w, B);
      }
    }
  }
}
