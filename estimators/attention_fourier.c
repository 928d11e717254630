/* Fourier attention engine: forward with per-row scaled products and the
 * exact backward by recomputation (see gfi/attention.h for the contract).
 * The tasks are attention_fourier_body.h, shared with the float32 engine
 * (attention_fourier32.c); this file gives it the float64 factors below.
 *
 * One factor: u = a - b with a = R_d q_id, b = R_d k_jd, each phase held
 * in two parts, a = a_hi + a_lo with a_lo = fma(R_d, q_id, -a_hi) the exact
 * rounding error of the product, sin a and cos a of the exact product
 * (engine_phase), and u = (a_hi - b_hi) + (a_lo - b_lo): for close q and k
 * far from 0 the hi parts subtract exactly (Sterbenz), so u is right to
 * about ulp(u) instead of ulp(R q) (q, k near 1e6 with R = 100 lost 1e-8);
 *     sin u = sin a cos b - cos a sin b,   cos u = cos a cos b + sin a sin b,
 *     s = sinc u = sin u / u,   s' = (cos u - s) / u,
 * both from their Taylor series for |u| < 0.5 (sinc_series.h),
 * so no sin is evaluated per pair. |s| < 2^-64 (5e-20) is set to 0: s carries
 * an absolute error ~2e-16 from the identity, so such a value is rounding
 * noise around a zero of sinc, and the flush bounds every nonzero factor
 * below: a normalised mantissa times up to six factors (a prefix times a
 * suffix between renormalisations) stays above 2^-384, and y_d below stays
 * within 2^450 of its mantissa, so one power of two scales it.
 *
 * Scaled products: the running product over axes is split into a mantissa in
 * [1, 2) and a binary exponent (bit operations, exact) after every CHUNK
 * axes, so prod_d s_d = m 2^e for any D. The row's common factor is 2^(l E_i),
 * E_i = max_j e_j, kept current online over key blocks (flash-attention
 * style): when a block raises E_i the running sums are multiplied by
 * 2^(l (E_old - E_new)), an exact power of two.
 *
 * Gradient of one weight in the row's scale, w~ = (prod_d s_d 2^-E)^l:
 *     dw~/du_d = l (s_d y_d)^(l-1) s'_d y_d,   y_d = prod_{e != d} s_e 2^-E,
 * where s_d y_d = prod_e s_e 2^-E is the same for every d (taken once per
 * pair from the full product),
 * with y_d from prefix and suffix products in the same mantissa/exponent
 * form; s_d y_d = prod_e s_e 2^-E is at most 2, so no power overflows, and a
 * factor s_d = 0 gives exactly 0 for l >= 2 and s'_d y_d for l = 1. */
/* GCC does not if-convert the series/identity selections below while it must
 * preserve floating-point traps (-ftrapping-math, its default), which leaves
 * every inner loop scalar; gfi never reads the FP exception flags. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "attention_internal.h"
#include "par.h"
#include "sinc_series.h"
#include "alloc.h"
#include "engine.h"

#define FB 64       /* keys per block in the forward */
#define BB 16       /* lanes (keys) per block in the backward */
#define CHUNK 4     /* axes between renormalisations of a running product */
#define ROW_TILE 16 /* query rows per forward task */
#define SERIES_CUT GFI_SINC_CUT
#define FLUSH 0x1p-64
#define ZEXP (-1.0e6) /* exponent of an exact zero product: below every other */
#define MAGIC 4503599627370496.0 /* 2^52 */

#define AF_REAL double
#define AF_UINT uint64_t
#define AF_EXP_BITS 0x7ff0000000000000ULL
#define AF_SIGN_FRAC 0x800fffffffffffffULL
#define AF_ONE_BITS 0x3ff0000000000000ULL
#define AF_FABS fabs
#define AF_SHIFT 0
#define AF_WCUT (-INFINITY) /* no cut: pow2 gives 0 below 2^-1022 */
#define AF_NTAB 4 /* tables per side: R x = hi + lo, sin, cos (engine_phase) */
#define AF_NQ 4
#define AF_LANE_SUMS 0
#define AF_TASK
#define AF_Q(J) ((J)->Q)
#define AF_K(J) ((J)->K)
#define AF_V(J) ((J)->V)
#define AF_RAD(J) ((J)->Rd)

static inline uint64_t r2u(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}
static inline double u2r(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}
/* The binary exponent of x (see mant); 0 for 0. Bit operations only. */
static inline double expo(double x) {
  uint64_t b = r2u(x);
  uint64_t be = (b >> 52) & 0x7ff;
  uint64_t keep = (uint64_t)0 - (uint64_t)(be != 0);
  double e = u2r(be | 0x4330000000000000ULL) - MAGIC - 1023.0;
  return u2r(r2u(e) & keep);
}
/* 2^k for integer-valued k, k < -1022 giving 0 and k > 1023 giving 2^1023. */
static inline double pow2(double k) {
  k = k < -1023.0 ? -1023.0 : (k > 1023.0 ? 1023.0 : k);
  return u2r(r2u(k + 1023.0 + MAGIC) << 52);
}
static inline double scaled(double m, double k, double wcut) {
  (void)wcut;
  return m * pow2(k);
}
static inline double rescale(int l, double E, double emax) { return pow2(l * (E - emax)); }
static inline double cut2(double k) { return pow2(k); }
static inline double dot(const double *a, const double *b, size_t n) { return attn_dot(a, b, n); }

static inline double sinc_of(double u, double sn) {
  double u2 = u * u;
  double ser = GFI_SINC_SERIES(double, u2);
  double q = sn * (1.0 / u);
  double s = fabs(u) < SERIES_CUT ? ser : q;
  return fabs(s) < FLUSH ? 0.0 : s;
}

/* sinc and its derivative together, one division. */
static inline void sinc_both(double u, double sn, double cs, double *s, double *ds) {
  double u2 = u * u;
  double ser = GFI_SINC_SERIES(double, u2);
  double dser = GFI_SINC_DSERIES(double, u, u2);
  double iu = 1.0 / u;
  double q = sn * iu; /* as sinc_of: forward and backward form the same factors */
  double sv = fabs(u) < SERIES_CUT ? ser : q;
  sv = fabs(sv) < FLUSH ? 0.0 : sv;
  double dq = (cs - sv) * iu;
  *s = sv;
  *ds = fabs(u) < SERIES_CUT ? dser : dq;
}

/* The four tables of one head in structure-of-arrays form (table t at tab +
 * t n: hi and lo parts of R_d x, sin, cos), D x Lp each (Lp: L rounded up to
 * a multiple of 8, the padding zero). */
static void fill_head(const double *X, size_t rs, size_t L, size_t Lp, size_t D, const double *Rd, double *tab,
                      size_t n) {
  double *r = tab, *rl = tab + n, *s = tab + 2 * n, *c = tab + 3 * n;
  for (size_t d = 0; d < D; d++) {
    for (size_t i = 0; i < L; i++)
      engine_phase(Rd[d], X[i * rs + d], r + d * Lp + i, rl + d * Lp + i, s + d * Lp + i, c + d * Lp + i);
    for (size_t i = L; i < Lp; i++) r[d * Lp + i] = rl[d * Lp + i] = s[d * Lp + i] = c[d * Lp + i] = 0;
  }
}
/* A query row's phases, per axis (hi, lo, sin, cos). */
static inline void query_row(const double *Q, size_t D, const double *Rd, double *q) {
  for (size_t d = 0; d < D; d++) engine_phase(Rd[d], Q[d], q + 4 * d, q + 4 * d + 1, q + 4 * d + 2, q + 4 * d + 3);
}
static inline void fwd_axis(const double *kt, size_t n, double rd, const double *q, size_t nb, double *m,
                            double *e) {
  (void)rd;
  (void)e;
  const double *restrict kr = kt, *restrict kl = kt + n, *restrict ks = kt + 2 * n, *restrict kc = kt + 3 * n;
  const double a = q[0], al = q[1], sa = q[2], ca = q[3];
#pragma omp simd
  for (size_t b = 0; b < nb; b++) m[b] *= sinc_of((a - kr[b]) + (al - kl[b]), sa * kc[b] - ca * ks[b]);
}
static inline void bwd_axis(const double *qt, size_t nq, const double *kt, size_t nk, double rd, size_t nb,
                            double *restrict s, double *restrict ds, double *restrict u, double *t) {
  (void)rd;
  (void)t;
  const double *restrict kr = kt, *restrict kl = kt + nk, *restrict ks = kt + 2 * nk, *restrict kc = kt + 3 * nk;
  const double a = qt[0], al = qt[nq], sa = qt[2 * nq], ca = qt[3 * nq];
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    double uu = (a - kr[b]) + (al - kl[b]);
    sinc_both(uu, sa * kc[b] - ca * ks[b], ca * kc[b] + sa * ks[b], &s[b], &ds[b]);
    u[b] = uu;
  }
}

#include "attention_fourier_body.h"

int attn_fjob_forward(const attn_fjob *J, double *Hout, double *stat, double *ratio) {
  if (attn_fjob_poly(J)) return attn_fjob_forward_poly(J, Hout, stat, ratio);
  return engine_forward(J, Hout, stat, ratio);
}

/* Key chunks per head: fixed by the shape alone (never by the thread count),
 * so the sums are the same bits for any number of threads; several chunks
 * when there are few heads, so that threads have work. */
size_t attn_fjob_key_chunks(size_t BH, size_t Lk) {
  size_t n = BH >= 64 ? 1 : (64 + BH - 1) / BH;
  size_t by_len = (Lk + 255) / 256;
  if (n > by_len) n = by_len;
  if (n > 8) n = 8;
  return n ? n : 1;
}

int attn_fjob_backward(const attn_fjob *J, const double *H, const double *stat, const double *dH,
                       double *dQ, double *dK, double *dV, double *dRrow) {
  if (attn_fjob_poly(J)) return attn_fjob_backward_poly(J, H, stat, dH, dQ, dK, dV, dRrow);
  return engine_backward(J, H, stat, dH, dQ, dK, dV, dRrow);
}
