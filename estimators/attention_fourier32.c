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
 *           lane (16 keys a block) over at most 8 blocks; a key's dK_d
 *           terms of the fused blocks summed over at most 8 query rows;
 *   double: every sum over keys or queries: the row sums S_i, A_i and the
 *           numerator N_i (forward), P_i = dH_i . H_i and the coefficient
 *           dH_i . v_j - P_i of a pair, dq and dR across blocks, dK and dV
 *           across query rows; the saved statistics.
 *
 * The phase u = R (q - k) is formed difference first (two roundings: a
 * relative error below 2^-23 of u however large R q and R k are); sin u and
 * cos u are never formed from it: they come from the angle-difference
 * identity over tables (below). A factor |sinc| < 2^-20 is kept as
 * sinc 2^40 with -40 added to the pair's exponent (forward: the running
 * exponent; backward: a shift per axis, so each y_d gets the shifts of the
 * other factors), never flushed: one key at u = pi has sinc = -2.8e-8, and
 * a row whose every weight holds such a factor would otherwise sum to 0
 * (NaN, or 0 with eps) where its value is defined. The kept factors lie in
 * [2^-20, 2^20), so a mantissa times six of them (a prefix times a suffix
 * between renormalisations every CHUNK axes) stays inside float's range
 * (2^-120 .. 2^123). Only |sinc| < 2^-60 and |u| > 2^20 are set to 0; a
 * row that then sums to 0 has its head computed again in float64
 * (attention_batch.c).
 *
 * The angle-difference identity. The tables hold, besides the coordinates,
 * sin a and cos a of the phase a = R_d x (the product of two floats, exact
 * in double), reduced and evaluated in double and rounded to float (error
 * 2^-25 each; a fast reduction for |a| <= 2^20, libm's sin and cos beyond,
 * so the tables hold for every phase), for the keys and for each query row.
 * A pair's sin u = sin a cos b - cos a sin b and cos u = cos a cos b +
 * sin a sin b are two multiply-adds each, off by at most 2^-25 (|sin a| +
 * |cos a| + |sin b| + |cos b|) + two roundings <= 2^-22.7 for every |R q|,
 * |R k|.
 *   sinc u: sin u / u for |u| >= 1 (the forward divides, the backward
 * multiplies by 1/u, which it needs again: one more rounding, 2^-24 |s|),
 * the series of sin u / u to u^10 for |u| < 1 (truncation below 2e-10, a
 * few ulp relative). For |u| >= 1: 2^-22.7 / |u| from sin u, 2^-23 |s| from
 * u's relative error, 2^-24 |s| per rounding: below 2^-21.3, the stated
 * 2^-21 (5e-7) per factor, for every u.
 *   sinc' u (backward): (cos u - sinc u) / u for |u| >= 2, its series to
 * u^15 for |u| < 2 (truncation below 2e-11 at |u| = 2; alternating terms
 * up to 0.67, rounding about 1e-7; u's error moves it by |u sinc''| 2^-23
 * <= 1e-7). For |u| >= 2: (2^-22.7 + 1.8e-7) / |u| from cos u and sinc u,
 * |sinc'| (2^-23 + 2 2^-24) from u's error and two roundings (|sinc'| <=
 * 0.44 there): below 2.7e-7 < 2^-21. (At |u| = 1 the same terms reach
 * 5.6e-7, above 2^-21: hence the switch at 2.)
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
 * ISO C mode turns it off): the polynomials, the identity's products, the
 * phase reduction of the tables and the sums then round once per multiply-add instead of twice, so every error
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
#define AF_COEF_T 1
#define LANE_BLOCKS 8 /* blocks (BB keys each) per lane sum: up to 8 float terms a lane */
#define DK_ROWS 8     /* query rows per float dK sum of the fused blocks: up to 8 terms a key and axis */
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
/* sinc'(u) on |u| < 2: u sum_{k=1..8} (-1)^k 2k u^(2k-2) / (2k+1)!
 * (alternating, decreasing terms: truncation below 2e-11 at |u| = 2). */
#define DSER2(u, u2)                                                                                         \
  ((u) * (-2.0f / 6 +                                                                                        \
          (u2) * (4.0f / 120 +                                                                               \
                  (u2) * (-6.0f / 5040 +                                                                     \
                          (u2) * (8.0f / 362880 +                                                            \
                                  (u2) * (-10.0f / 39916800 +                                                \
                                          (u2) * (12.0f / 6227020800.0f +                                    \
                                                  (u2) * (-14.0f / 1307674368000.0f +                        \
                                                          (u2) * (16.0f / 355687428096000.0f)))))))))
/* Backward factors by the same identity (see the top), from u = R (q - k)
 * and sin u, cos u of the tables: s = sinc u as fwd_axis forms it (times
 * 1/u instead of divided by u: one division for both), sinc' u =
 * (cos u - sinc u) / u for |u| >= 2 and its series for |u| < 2; a factor
 * below TINYF kept scaled by 2^TSHIFT with the shift in t. */
static inline void bwd_factor(float uu, float su, float cu, float *s, float *ds, float *t) {
  float u2 = uu * uu, iu = 1.0f / uu;
  float sv = fabsf(uu) < 1.0f ? SINC1(u2) : su * iu;
  int far = !(fabsf(uu) <= BIGU);
  sv = (fabsf(sv) < FLUSHF || far) ? 0.0f : sv;
  float dv = fabsf(uu) < 2.0f ? DSER2(uu, u2) : (cu - sv) * iu;
  int tiny = fabsf(sv) < TINYF;
  *s = tiny ? sv * TSCALE : sv;
  *t = tiny ? TSHIFT : 0.0f;
  *ds = far ? 0.0f : dv;
}
static inline void bwd_axis(const float *qt, size_t nq, const float *kt, size_t nk, float rd, size_t nb,
                            float *restrict s, float *restrict ds, float *restrict u, float *restrict tt) {
  const float *restrict k = kt, *restrict sk = kt + nk, *restrict ck = kt + 2 * nk;
  const float qd = qt[0], sq = qt[nq], cq = qt[2 * nq];
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    float uu = rd * (qd - k[b]), sv, dv, td;
    bwd_factor(uu, sq * ck[b] - cq * sk[b], cq * ck[b] + sq * sk[b], &sv, &dv, &td);
    s[b] = sv;
    ds[b] = dv;
    tt[b] = td;
    u[b] = uu;
  }
}

/* One backward block of BB lanes: bwd_axis, grad_block
 * and the lane sums of the body, the same arithmetic lane for lane, in two
 * passes over the axes instead of four, one loop over the BB lanes per
 * CHUNK axes (D a multiple of CHUNK): ascending, the factors and the prefix
 * products; descending, the suffix products, the gradients and the lane
 * sums. In the generic path the running product, exponent and shift of each
 * lane go through memory from one short loop to the next (a store and a
 * reload per axis on the critical path); here they stay in registers over
 * a chunk of axes, beside the factor arithmetic.
 * qt, kt: the query's and the block's entries of table 0 (axis d at d Lqp,
 * d Lkp; tables nq, nk apart); lq, lr the row's lane sums; dk0 the chunk's
 * float dK^T sums at the block (axis d at d CL; the body adds them into
 * double every DK_ROWS rows). lm: NULL when every lane is a key of the row;
 * else 0 or 1 per lane, and a lane of 0 (past the row's last key, padded or
 * masked; its coef 0) has its factors and derivatives multiplied by 0 as
 * the generic path does, so that its weight and gradient terms are exactly
 * 0 (unmasked, a hidden key near the query would have a product far above
 * the row's scale, overflowing float). */
#define AF_BWD_BLOCK 1
#define BWD_BLOCK_ARGS                                                                                          \
  size_t D, int l, float Eb, const float *qt, size_t nq, size_t Lqp, const float *kt, size_t nk, size_t Lkp, \
      const float *R, const float *coef, const float *lm, float *gs, float *gds, float *gu, float *gG,       \
      float *gt, float *gpe, float *grun, float *grexp, float *glp, float *gtsum, float *wt, float *lq,     \
      float *lr, float *dk0, size_t CL

static inline void bwd_block(BWD_BLOCK_ARGS);

#include "attention_fourier_body.h"

/* Axes d0 .. d0 + CHUNK - 1 of the ascending pass (d0 a multiple of CHUNK:
 * the running product's mantissa and exponent are split first, as in
 * grad_block): factors, their shifts and the prefix products. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void blk_up(size_t d0, const float *qt, size_t nq, size_t Lqp, const float *kt, size_t nk, size_t Lkp,
                          const float *R, const float *restrict lm, int masked, float *restrict gs,
                          float *restrict gds, float *restrict gu, float *restrict gG, float *restrict gt,
                          float *restrict pe, float *restrict run, float *restrict rexp, float *restrict tsum) {
  float qd[CHUNK], sq[CHUNK], cq[CHUNK], rd[CHUNK];
  for (size_t a = 0; a < CHUNK; a++) {
    const float *q = qt + (d0 + a) * Lqp;
    qd[a] = q[0];
    sq[a] = q[nq];
    cq[a] = q[2 * nq];
    rd[a] = R[d0 + a];
  }
  const float *restrict kb = kt + d0 * Lkp;
#pragma omp simd
  for (size_t b = 0; b < BB; b++) {
    float e = rexp[b] + expo(run[b]), r = mant(run[b]), ts = tsum[b];
    const float m = masked ? lm[b] : 1.0f;
    rexp[b] = e;
    pe[b] = e;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 4 /* CHUNK: unrolled whole, so that the lane loop vectorises */
#endif
    for (size_t a = 0; a < CHUNK; a++) {
      const float *k = kb + a * Lkp;
      const size_t o = (d0 + a) * BB + b;
      float uu = rd[a] * (qd[a] - k[b]), sd, dv, td;
      bwd_factor(uu, sq[a] * k[2 * nk + b] - cq[a] * k[nk + b], cq[a] * k[2 * nk + b] + sq[a] * k[nk + b], &sd,
                 &dv, &td);
      if (masked) { /* an excluded lane: weight and gradient exactly 0, as in the generic path */
        sd *= m;
        dv *= m;
      }
      gs[o] = sd;
      gds[o] = dv;
      gt[o] = td;
      gu[o] = uu;
      gG[o] = r;
      r *= sd;
      ts += td;
    }
    run[b] = r;
    tsum[b] = ts;
  }
}

/* Axes d0 + CHUNK - 1 down to d0 of the descending pass (a new suffix chunk
 * starts at the top one, and with it the scale): suffix products, the
 * gradients and the lane sums. */
static inline void blk_down(size_t d0, float Eb, const float *restrict gs, const float *restrict gds,
                            const float *restrict gu, const float *restrict gG, const float *restrict gt,
                            const float *restrict pe, float *restrict run, float *restrict rexp,
                            const float *restrict lp, const float *restrict tsum, const float *restrict coef,
                            float *restrict lq, float *restrict lr, float *restrict dk0, size_t CL) {
#pragma omp simd
  for (size_t b = 0; b < BB; b++) {
    float e = rexp[b] + expo(run[b]), r = mant(run[b]);
    rexp[b] = e;
    float k = pe[b] + e - Eb;
    k -= tsum[b];
    const float sc2 = cut2(k + TSHIFT), sc = cut2(k), l1 = lp[b], cf = coef[b];
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 4
#endif
    for (size_t a = CHUNK; a-- > 0;) {
      const size_t o = (d0 + a) * BB + b;
      float y = (gG[o] * r) * (gt[o] != 0 ? sc2 : sc);
      float g = l1 * (gds[o] * y);
      r *= gs[o];
      float tt = cf * g;
      lq[o] += tt;
      lr[o] += tt * gu[o];
      dk0[(d0 + a) * CL + b] += tt;
    }
    run[b] = r;
  }
}

static inline void bwd_block(BWD_BLOCK_ARGS) {
  const float wcut = WCUT / (float)l;
  for (size_t b = 0; b < BB; b++) {
    grun[b] = 1;
    grexp[b] = 0;
    gtsum[b] = 0;
  }
  if (lm)
    for (size_t d0 = 0; d0 < D; d0 += CHUNK)
      blk_up(d0, qt, nq, Lqp, kt, nk, Lkp, R, lm, 1, gs, gds, gu, gG, gt, gpe + (d0 / CHUNK) * BB, grun, grexp, gtsum);
  else
    for (size_t d0 = 0; d0 < D; d0 += CHUNK)
      blk_up(d0, qt, nq, Lqp, kt, nk, Lkp, R, NULL, 0, gs, gds, gu, gG, gt, gpe + (d0 / CHUNK) * BB, grun, grexp,
             gtsum);
#pragma omp simd
  for (size_t b = 0; b < BB; b++) {
    float k = grexp[b] + expo(grun[b]) - Eb, m = mant(grun[b]);
    k -= gtsum[b];
    float x = scaled(m, k, wcut);
    wt[b] = ipow(x, l);
    glp[b] = (float)l * ipow(x, l - 1);
  }
  for (size_t b = 0; b < BB; b++) {
    grun[b] = 1;
    grexp[b] = 0;
  }
  for (size_t d0 = D; d0 > 0;) {
    d0 -= CHUNK;
    blk_down(d0, Eb, gs, gds, gu, gG, gt, gpe + (d0 / CHUNK) * BB, grun, grexp, glp, gtsum, coef, lq, lr, dk0, CL);
  }
}

int attn_fjob_forward32(const attn_fjob *J, float *Hout, double *stat, double *ratio) {
  return engine_forward(J, Hout, stat, ratio);
}

int attn_fjob_backward32(const attn_fjob *J, const float *H, const double *stat, float *dQ, float *dK,
                         float *dV, double *dRrow) {
  return engine_backward(J, H, stat, J->dHf, dQ, dK, dV, dRrow);
}
