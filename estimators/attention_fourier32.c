/* Fourier attention engine in float32 (gfi_attn_batch_* with GFI_ATTN_F32;
 * the contract is in gfi/attention.h). The same algorithm as the float64
 * engine (attention_fourier.c): per-row scaled products kept as a mantissa
 * and a binary exponent, the row's common factor 2^(l E_i) kept current
 * online, the exact backward by recomputation with prefix/suffix products;
 * the tasks are one source with it (attention_fourier_body.h), this file
 * gives them the float32 factors.
 * What is float and what is double:
 *
 *   float:  the pair loop over axes: the phase u = R_d (q_id - k_jd), sinc u
 *           and sinc' u, their running product, the weight w~ = (prod 2^-E)^l
 *           and, in the backward, every dw~/du_d and its product with the
 *           pair's coefficient; a row's dq_d and dR_d terms summed per
 *           lane (16 keys a block) over at most 8 blocks;
 *   double: every sum over keys or queries: the row sums S_i, A_i and the
 *           numerator N_i (forward), P_i = dH_i . H_i and the coefficient
 *           dH_i . v_j - P_i of a pair, dq and dR across blocks, dK and dV
 *           across query rows; the saved statistics.
 *
 * Difference-first phase. The float64 engine forms sin(a - b) from tables of
 * sin and cos of a = R q and b = R k; in float the rounding of a and b alone
 * is an absolute phase error 2^-24 (|a| + |b|), which for |R q| ~ 100 moves
 * sinc by up to 3e-6. Here u = R (q - k) is formed first (two roundings: a
 * relative error below 2^-23 of u) and reduced by n = round(2u/pi):
 * u = n pi/2 + r, |r| <= pi/4, with pi/2 in three parts. sin r / r and
 * cos r come from Taylor polynomials (truncation below 3e-9 and 1e-10 on
 * |r| <= pi/4), sinc u = sin(r)/r itself when n = 0 (no division, relative
 * accuracy near the peak) and +-(sin r or cos r) / u otherwise. Error of one
 * factor: the phase's relative error 2^-23 moves sinc by at most
 * |u sinc'(u)| 2^-23 <= 2^-23 (|u sinc'| <= 1 for every u), the reduction's
 * roundings |n| 2^-24 pi/2 ~ |u| 2^-24 divided by |u| add 2^-24, the
 * polynomials and the division a few ulp: an absolute error below about
 * 2^-21 (5e-7) for every u, and a relative error of a few ulp for |u| < pi/4
 * (where |u sinc'/sinc| < 0.22). A factor |sinc| < 2^-20 is kept as
 * sinc 2^40 with -40 added to the pair's exponent (forward: the running
 * exponent; backward: a shift per axis, so each y_d gets the shifts of the
 * other factors), never flushed: one key at u = pi has sinc = -2.8e-8, and
 * a row whose every weight holds such a factor would otherwise sum to 0
 * (NaN, or 0 with eps) where its value is defined. The kept factors lie in
 * [2^-20, 2^20), so a mantissa times six of them (a prefix times a suffix
 * between renormalisations every CHUNK axes) stays inside float's range
 * (2^-120 .. 2^123). Only |sinc| < 2^-60 and |u| > 2^20 (beyond the
 * reduction's reach) are set to 0; a row that then sums to 0 has its head
 * computed again in float64 (attention_batch.c).
 *
 * The forward by the angle-difference identity. The tables hold, besides the
 * coordinates, sin a and cos a of the phase a = R_d x (the product of two
 * floats, exact in double), reduced and evaluated in double and rounded to
 * float (error 2^-25 each; a fast reduction for |a| <= 2^20, libm's sin and
 * cos beyond, so the tables hold for every phase), for the keys and for each
 * query row. A pair's factor is then sin u = sin a cos b - cos a sin b (two
 * multiply-adds) divided by u = R (q - k), formed difference-first as above,
 * for |u| >= 1, and the series of sin u / u to u^10 (truncation below 2e-10)
 * for |u| < 1. Error of one factor: sin u from four values off by 2^-25 and
 * two roundings, below 2^-22.7, over |u| >= 1; u's relative error 2^-23
 * (the division's, 2^-24, apart) moves sinc by at most 2^-23 |sinc|: below
 * 2^-21 in all, the stated bound, for every u and every |R q|, |R k|; for
 * |u| < 1 the series as the difference-first form (a few ulp relative). The
 * tiny, flushed and far (|u| > 2^20) factors are treated as above. The
 * backward keeps the difference-first form (it needs cos u as well).
 * sinc'(u) = (cos u - sinc u)/u for n != 0, its Taylor series (truncation
 * below 1e-10) for n = 0: absolute error below 2^-22 / max(|u|, pi/4).
 *
 * Weights more than 2^-120 below the row's largest are set to 0 (a relative
 * change of a row below L 2^-120), so no subnormal float is formed.
 *
 * Every loop over a block of keys is branch-free (selections, bit
 * operations): gcc vectorises them (8 floats with AVX2; the tasks are
 * compiled for x86-64 levels by GFI_CLONES). The sums are in an order fixed
 * by the shapes, so the results are the same bits for any thread count.
 *
 * Multiply-adds are fused where the level has FMA (fp-contract=fast, below;
 * ISO C mode turns it off): the polynomials, the reduction u - n pi/2 and the
 * sums then round once per multiply-add instead of twice, so every error
 * bound above holds as it stands; the difference-first forward loop (AVX-512
 * clone) ran 44 vector instructions per 16 lanes, 13 of them fused, instead
 * of 52.
 * No step relies on a product being
 * rounded apart from its sum (the exact steps are bit operations, the sums
 * of integer-valued exponents and the exact reduction parts). Bits differ
 * between the SSE2 clone and the AVX2/AVX-512 ones (as lib/clones.h says),
 * never between thread counts. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "fp-contract=fast")
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "attention_internal.h"
#include "par.h"
#include "alloc.h"
#include "../lib/clones.h"

#define FB 64      /* keys per block in the forward */
#define BB 16      /* lanes (keys) per block in the backward */
#define CHUNK 4    /* axes between renormalisations of a running product */
#define ROW_TILE 16
#define FLUSHF 0x1p-60f /* |sinc| below this is 0 (see the top) */
#define TINYF 0x1p-20f  /* |sinc| below this is kept as sinc 2^TSHIFT, its exponent apart */
#define TSHIFT 40.0f
#define TSCALE 0x1p40f
#define BIGU 0x1p20f
#define ZEXP (-1.0e6f) /* exponent of an exact zero product */
#define WCUT (-120.0f) /* l (e - E) below this: weight 0 */

#define AF_REAL float
#define AF_UINT uint32_t
#define AF_EXP_BITS 0x7f800000u
#define AF_SIGN_FRAC 0x807fffffu
#define AF_ONE_BITS 0x3f800000u
#define AF_FABS fabsf
#define AF_SHIFT 1
#define AF_TSHIFT TSHIFT
#define AF_WCUT WCUT
#define AF_NTAB 3 /* the coordinates, transposed; sin and cos of R_d x (the forward) */
#define AF_NQ 3
#define AF_LANE_SUMS 1
#define LANE_BLOCKS 8 /* blocks (BB keys each) per lane sum: up to 8 float terms a lane */
#define AF_TASK GFI_CLONES
#define AF_Q(J) ((J)->Qf)
#define AF_K(J) ((J)->Kf)
#define AF_V(J) ((J)->Vf)
#define AF_RAD(J) ((J)->Rf)

static inline uint32_t r2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float u2r(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
/* The binary exponent of x (see mant); 0 for 0. */
static inline float expo(float x) {
  int32_t be = (int32_t)((r2u(x) >> 23) & 0xff);
  return be != 0 ? (float)(be - 127) : 0.0f;
}
/* 2^k for integer-valued k: 0 below -126, 2^125 above 125 (so that a
 * gradient term, at most 4 times it, stays finite). */
static inline float pow2(float k) {
  k = k < -127.0f ? -127.0f : (k > 125.0f ? 125.0f : k);
  return u2r((uint32_t)(int32_t)(k + 127.0f) << 23);
}
static inline float scaled(float m, float k, float wcut) { return k < wcut ? 0.0f : m * pow2(k); }
static inline double rescale(int l, double E, float emax) {
  return E == -INFINITY ? 0.0 : ldexp(1.0, (int)(l * (E - emax)));
}
static inline float cut2(float k) { return k < WCUT ? 0.0f : pow2(k); }
static inline double dot(const float *a, const float *b, size_t n) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (size_t c = 0; c < n; c++) s += (double)a[c] * (double)b[c];
  return s;
}

/* Reduction u = n pi/2 + r (see the top): n, r and the quadrant n mod 4. */
#define RED_SHIFT 12582912.0f /* 1.5 * 2^23: t - RED_SHIFT = round(t) */
#define TWO_OVER_PI 0.636619772367581343f
#define PIO2_1 1.5703125f
#define PIO2_2 4.837512969970703125e-4f
#define PIO2_3 7.549789948768648e-8f
/* sin(r)/r and cos(r) on |r| <= pi/4 (Taylor) */
#define SINR(r2) \
  (1.0f + (r2) * (-1.0f / 6 + (r2) * (1.0f / 120 + (r2) * (-1.0f / 5040 + (r2) * (1.0f / 362880)))))
#define COSR(r2)                                                                                  \
  (1.0f + (r2) * (-0.5f + (r2) * (1.0f / 24 + (r2) * (-1.0f / 720 + (r2) * (1.0f / 40320 +      \
                                                                            (r2) * (-1.0f / 3628800))))))
/* sinc'(u) on |u| <= pi/4: u sum_{k=1..6} (-1)^k 2k u^(2k-2) / (2k+1)! */
#define DSER(u, u2)                                                                          \
  ((u) * (-2.0f / 6 + (u2) * (4.0f / 120 + (u2) * (-6.0f / 5040 + (u2) * (8.0f / 362880 +  \
                                                                         (u2) * (-10.0f / 39916800 + (u2) * (12.0f / 6227020800.0f)))))))

static inline float sinc32(float u) {
  float t = u * TWO_OVER_PI + RED_SHIFT;
  float n = t - RED_SHIFT;
  uint32_t q = r2u(t) & 3u;
  float r = ((u - n * PIO2_1) - n * PIO2_2) - n * PIO2_3;
  float r2 = r * r;
  float sr = SINR(r2), cr = COSR(r2);
  float sv = (q & 1u) ? cr : r * sr;
  sv = (q & 2u) ? -sv : sv;
  float s = n == 0.0f ? sr : sv * (1.0f / u);
  return (fabsf(s) < FLUSHF || !(fabsf(u) <= BIGU)) ? 0.0f : s;
}

static inline void sinc32_both(float u, float *s, float *ds) {
  float t = u * TWO_OVER_PI + RED_SHIFT;
  float n = t - RED_SHIFT;
  uint32_t q = r2u(t) & 3u;
  float r = ((u - n * PIO2_1) - n * PIO2_2) - n * PIO2_3;
  float r2 = r * r;
  float sr = SINR(r2), cr = COSR(r2), rs = r * sr;
  float sv = (q & 1u) ? cr : rs, cv = (q & 1u) ? rs : cr;
  sv = (q & 2u) ? -sv : sv;
  cv = ((q + 1u) & 2u) ? -cv : cv;
  float iu = 1.0f / u;
  float sn = n == 0.0f ? sr : sv * iu;
  int out = fabsf(sn) < FLUSHF || !(fabsf(u) <= BIGU);
  sn = out ? 0.0f : sn;
  float d = n == 0.0f ? DSER(u, r2) : (cv - sn) * iu; /* n = 0: r = u */
  *s = sn;
  *ds = !(fabsf(u) <= BIGU) ? 0.0f : d;
}

/* sin and cos of the phase a = R x, exact in double (R and x are floats),
 * rounded to float: Cody-Waite reduction a = n pi/2 + r with pi/2 in 33 + 33
 * + 53 bits (n pi/2's first two parts exact for |n| < 2^20) and Taylor
 * polynomials on |r| <= pi/4 (truncation below 1e-11) for |a| <= PHASE_TAB;
 * libm's sin and cos beyond. Error of each value: its rounding to float,
 * 2^-25, and below 1e-11. Branch-free in the first pass (it vectorises). */
#define PHASE_TAB 0x1p20
#define PIO2D_1 1.57079632673412561417e+00
#define PIO2D_2 6.07710050630396597660e-11
#define PIO2D_3 2.02226624879595063154e-21
static void phase_sc(const float *x, size_t n, double R, float *sn, float *cs) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    double a = R * (double)x[i];
    double ac = fabs(a) <= PHASE_TAB ? a : 0.0;
    double t = ac * 0.636619772367581343076 + 6755399441055744.0; /* 1.5 2^52 */
    double nn = t - 6755399441055744.0;
    int64_t ti;
    memcpy(&ti, &t, sizeof ti);
    unsigned q = (unsigned)ti & 3u;
    double r = ((ac - nn * PIO2D_1) - nn * PIO2D_2) - nn * PIO2D_3, r2 = r * r;
    double sr = r * (1.0 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880 +
                                                                                      r2 * (-1.0 / 39916800))))));
    double cr = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 +
                                                                              r2 * (-1.0 / 3628800 + r2 * (1.0 / 479001600))))));
    double sv = (q & 1u) ? cr : sr, cv = (q & 1u) ? sr : cr;
    sv = (q & 2u) ? -sv : sv;
    cv = ((q + 1u) & 2u) ? -cv : cv;
    sn[i] = (float)sv;
    cs[i] = (float)cv;
  }
  for (size_t i = 0; i < n; i++) {
    double a = R * (double)x[i];
    if (!(fabs(a) <= PHASE_TAB)) {
      sn[i] = (float)sin(a);
      cs[i] = (float)cos(a);
    }
  }
}

/* The coordinates of one head transposed, D x Lp (the padding zero), and
 * sin and cos of R_d times them (tables 1 and 2, n apart). */
static void fill_head(const float *X, size_t rs, size_t L, size_t Lp, size_t D, const double *Rd, float *x,
                      size_t n) {
  for (size_t d = 0; d < D; d++) {
    for (size_t i = 0; i < L; i++) x[d * Lp + i] = X[i * rs + d];
    for (size_t i = L; i < Lp; i++) x[d * Lp + i] = 0;
    phase_sc(x + d * Lp, Lp, Rd[d], x + n + d * Lp, x + 2 * n + d * Lp);
  }
}
/* A query row: per axis q_d, sin and cos of R_d q_d. */
static inline void query_row(const float *Q, size_t D, const double *Rd, float *q) {
  for (size_t d = 0; d < D; d++) {
    float s, c;
    phase_sc(Q + d, 1, Rd[d], &s, &c);
    q[3 * d] = Q[d];
    q[3 * d + 1] = s;
    q[3 * d + 2] = c;
  }
}
/* sin(u)/u on |u| < 1: Taylor to u^10 (truncation below 2e-10). */
#define SINC1(u2)                                                                                   \
  (1.0f + (u2) * (-1.0f / 6 + (u2) * (1.0f / 120 + (u2) * (-1.0f / 5040 + (u2) * (1.0f / 362880 +     \
                                                                              (u2) * (-1.0f / 39916800))))))
/* Forward factors by the angle-difference identity (see the top):
 * sin u = sin a cos b - cos a sin b from the tables, divided by u = R (q - k)
 * for |u| >= 1; the series for |u| < 1. */
static inline void fwd_axis(const float *kt, size_t n, float rd, const float *q, size_t nb, float *m, float *e) {
  const float *restrict k = kt, *restrict sk = kt + n, *restrict ck = kt + 2 * n;
  const float qd = q[0], sq = q[1], cq = q[2];
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    float u = rd * (qd - k[b]);
    float su = sq * ck[b] - cq * sk[b];
    float sv = fabsf(u) < 1.0f ? SINC1(u * u) : su / u;
    sv = (fabsf(sv) < FLUSHF || !(fabsf(u) <= BIGU)) ? 0.0f : sv;
    int tiny = fabsf(sv) < TINYF;
    m[b] *= tiny ? sv * TSCALE : sv;
    e[b] -= tiny ? TSHIFT : 0.0f;
  }
}
static inline void bwd_axis(const float *qt, size_t nq, const float *kt, size_t nk, float rd, size_t nb,
                            float *restrict s, float *restrict ds, float *restrict u, float *restrict tt) {
  (void)nq;
  (void)nk;
  const float *restrict k = kt;
  const float qd = qt[0];
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    float uu = rd * (qd - k[b]), sv;
    sinc32_both(uu, &sv, &ds[b]);
    int tiny = fabsf(sv) < TINYF; /* as the forward: kept scaled, its exponent in t */
    s[b] = tiny ? sv * TSCALE : sv;
    tt[b] = tiny ? TSHIFT : 0.0f;
    u[b] = uu;
  }
}

#include "attention_fourier_body.h"

int attn_fjob_forward32(const attn_fjob *J, float *Hout, double *stat, double *ratio) {
  return engine_forward(J, Hout, stat, ratio);
}

int attn_fjob_backward32(const attn_fjob *J, const float *H, const double *stat, float *dQ, float *dK,
                         float *dV, double *dRrow) {
  return engine_backward(J, H, stat, J->dHf, dQ, dK, dV, dRrow);
}
