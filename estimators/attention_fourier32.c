/* Fourier attention engine in float32 (gfi_attn_batch_* with GFI_ATTN_F32;
 * the contract is in gfi/attention.h). The same algorithm as the float64
 * engine (attention_fourier.c): per-row scaled products kept as a mantissa
 * and a binary exponent, the row's common factor 2^(l E_i) kept current
 * online, the exact backward by recomputation with prefix/suffix products.
 * What is float and what is double:
 *
 *   float:  the pair loop over axes: the phase u = R_d (q_id - k_jd), sinc u
 *           and sinc' u, their running product, the weight w~ = (prod 2^-E)^l
 *           and, in the backward, every dw~/du_d and its product with the
 *           pair's coefficient; the partial sums over one block of keys
 *           (32 lanes) of a row's dq_d and dR_d terms;
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
 * sinc'(u) = (cos u - sinc u)/u for n != 0, its Taylor series (truncation
 * below 1e-10) for n = 0: absolute error below 2^-22 / max(|u|, pi/4).
 *
 * Weights more than 2^-120 below the row's largest are set to 0 (a relative
 * change of a row below L 2^-120), so no subnormal float is formed.
 *
 * Every loop over a block of keys is branch-free (selections, bit
 * operations): gcc vectorises them (8 floats with AVX2; the tasks are
 * compiled for x86-64 levels by GFI_CLONES). The sums are in an order fixed
 * by the shapes, so the results are the same bits for any thread count. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
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
#define BB 32      /* lanes (keys) per block in the backward */
#define CHUNK 4    /* axes between renormalisations of a running product */
#define FLUSHF 0x1p-60f /* |sinc| below this is 0 (see the top) */
#define TINYF 0x1p-20f  /* |sinc| below this is kept as sinc 2^TSHIFT, its exponent apart */
#define TSHIFT 40.0f
#define TSCALE 0x1p40f
#define BIGU 0x1p20f
#define ZEXP (-1.0e6f) /* exponent of an exact zero product */
#define WCUT (-120.0f) /* l (e - E) below this: weight 0 */
#define ROW_TILE 16

static inline uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
/* x = mantf(x) 2^expof(x), |mant| in [1, 2); 0 gives 0 and 0. */
static inline float mantf(float x) {
  uint32_t b = f2u(x);
  uint32_t keep = (uint32_t)0 - (uint32_t)((b & 0x7f800000u) != 0);
  return u2f(((b & 0x807fffffu) | 0x3f800000u) & keep);
}
static inline float expof(float x) {
  int32_t be = (int32_t)((f2u(x) >> 23) & 0xff);
  return be != 0 ? (float)(be - 127) : 0.0f;
}
/* 2^k for integer-valued k: 0 below -126, 2^125 above 125 (so that a
 * gradient term, at most 4 times it, stays finite). */
static inline float pow2f(float k) {
  k = k < -127.0f ? -127.0f : (k > 125.0f ? 125.0f : k);
  return u2f((uint32_t)(int32_t)(k + 127.0f) << 23);
}
static inline float ipowf(float t, int l) {
  float t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
  float a = (l & 1) ? t : 1.0f, b = (l & 2) ? t2 : 1.0f;
  float c = (l & 4) ? t4 : 1.0f, d = (l & 8) ? t8 : 1.0f;
  return (a * b) * (c * d);
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
  uint32_t q = f2u(t) & 3u;
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
  uint32_t q = f2u(t) & 3u;
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

ATTN_DEFINE_MASK_LANES(mask_lanes, float)
ATTN_DEFINE_DROP_LANES(drop_lanes, float)

typedef struct {
  const attn_fjob *J;
  size_t Lqp, Lkp, ntq, nchunk, chunklen;
  float *kt, *qt; /* head bh's keys (queries) transposed: D x Lkp (Lqp) at bh D Lp */
  const double *stat, *P, *invS;
  float *Hout;
  double *statout, *ratio, *part, *dRrow;
  float *dQ, *dK, *dV;
} gctx;

/* Transposed table of head t's keys (t < BH) or queries (t - BH). */
static int fill_task(void *vc, size_t t, void *ws) {
  (void)ws;
  const gctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D;
  int keys = t < BH;
  size_t bh = keys ? t : t - BH, L = keys ? J->Lk : J->Lq, Lp = keys ? f->Lkp : f->Lqp;
  const size_t *xs = keys ? J->ks : J->qs, rs = xs[2]; /* rs: the row step in elements */
  const float *X = (keys ? J->Kf : J->Qf) + attn_fjob_xoff(J, xs, bh);
  float *x = (keys ? f->kt : f->qt) + bh * D * Lp;
  for (size_t d = 0; d < D; d++) {
    for (size_t i = 0; i < L; i++) x[d * Lp + i] = X[i * rs + d];
    for (size_t i = L; i < Lp; i++) x[d * Lp + i] = 0;
  }
  return GFI_OK;
}

static void finish_row(const attn_fjob *J, size_t nvis, double E, double S, double A, const double *N,
                       float *h, double *st, double *ratio) {
  const size_t Dv = J->Dv;
  double inv = 0;
  int k = attn_fjob_row_stats(J, nvis, E, S, A, st, ratio, &inv);
  for (size_t c = 0; c < Dv; c++) h[c] = k == 2 ? (float)(N[c] * inv) : k == 0 && J->empty_zero ? 0.0f : NAN;
}

/* Forward of a tile of query rows; ws: 4 FB floats, Dv doubles. */
GFI_CLONES static int fwd_task(void *vc, size_t t, void *vws) {
  const gctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t D = J->D, Dv = J->Dv, Lq = J->Lq, Lp = f->Lkp;
  const int l = J->l;
  const float wcut = WCUT / (float)l;
  size_t bh = t / f->ntq, i0 = (t % f->ntq) * ROW_TILE;
  size_t i1 = i0 + ROW_TILE < Lq ? i0 + ROW_TILE : Lq;
  const float *V = J->Vf + attn_fjob_xoff(J, J->vs, bh), *Rd = J->Rf + (bh % J->H) * D, *kt = f->kt + bh * D * Lp;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  double *N = vws;
  float *m = (float *)(N + Dv), *e = m + FB, *w = e + FB, *mk = w + FB;
  for (size_t i = i0; i < i1; i++) {
    const float *Q = J->Qf + attn_fjob_xoff(J, J->qs, bh) + i * J->qs[2];
    const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
    for (size_t c = 0; c < Dv; c++) N[c] = 0;
    double E = -INFINITY, S = 0, A = 0;
    size_t nvis = 0;
    const size_t jend = attn_fjob_key_end(J, i);
    for (size_t j0 = 0; j0 < jend; j0 += FB) {
      const size_t nb = jend - j0 < FB ? jend - j0 : FB;
      size_t nv = nb;
      if (kp || mr) {
        nv = mask_lanes(kp, mr, j0, nb, mk);
        if (nv == 0) continue;
      }
      nvis += nv;
      for (size_t b = 0; b < FB; b++) {
        m[b] = 1.0f;
        e[b] = 0.0f;
      }
      for (size_t d = 0; d < D; d++) {
        const float *restrict k = kt + d * Lp + j0;
        const float qd = Q[d], rd = Rd[d];
#pragma omp simd
        for (size_t b = 0; b < nb; b++) {
          float sv = sinc32(rd * (qd - k[b]));
          int tiny = fabsf(sv) < TINYF;
          m[b] *= tiny ? sv * TSCALE : sv;
          e[b] -= tiny ? TSHIFT : 0.0f;
        }
        if ((d + 1) % CHUNK == 0 || d + 1 == D) {
#pragma omp simd
          for (size_t b = 0; b < nb; b++) {
            e[b] += expof(m[b]);
            m[b] = mantf(m[b]);
          }
        }
      }
      if (nv < nb)
        for (size_t b = 0; b < nb; b++) m[b] *= mk[b];
      float emax = ZEXP;
      for (size_t b = 0; b < nb; b++) {
        e[b] = m[b] == 0.0f ? ZEXP : e[b];
        emax = e[b] > emax ? e[b] : emax;
      }
      if ((double)emax > E) {
        double sc = E == -INFINITY ? 0.0 : ldexp(1.0, (int)(l * (E - emax)));
        S *= sc;
        A *= sc;
        for (size_t c = 0; c < Dv; c++) N[c] *= sc;
        E = emax;
      }
      const float Ef = (float)E;
      double bs = 0, ba = 0;
#pragma omp simd reduction(+ : bs, ba)
      for (size_t b = 0; b < nb; b++) {
        float k = e[b] - Ef;
        float x = k < wcut ? 0.0f : m[b] * pow2f(k);
        float tt = ipowf(x, l);
        w[b] = tt;
        bs += (double)tt;
        ba += (double)fabsf(tt);
      }
      S += bs;
      A += ba;
      if (J->drop_thr) { /* dropout: the numerator only */
        drop_lanes(J, bh, i, j0, nb, mk);
        for (size_t b = 0; b < nb; b++) w[b] *= mk[b];
      }
      for (size_t b = 0; b < nb; b++) {
        const double wb = w[b];
        const float *restrict v = V + (j0 + b) * J->vs[2];
        if (wb == 0) continue;
#pragma omp simd
        for (size_t c = 0; c < Dv; c++) N[c] += wb * (double)v[c];
      }
    }
    const size_t row = bh * Lq + i;
    finish_row(J, nvis, E, S, A, N, f->Hout + attn_fjob_qrow(J, row) * Dv, f->statout + 2 * row, f->ratio + row);
  }
  return GFI_OK;
}

int attn_fjob_forward32(const attn_fjob *J, float *Hout, double *stat, double *ratio) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lkp = attn_round8(J->Lk);
  float *tab = gfi_malloc4(BH, D, Lkp, sizeof *tab);
  if (!tab) return GFI_ENOMEM;
  gctx f = {.J = J, .Lkp = Lkp, .ntq = (J->Lq + ROW_TILE - 1) / ROW_TILE, .kt = tab, .Hout = Hout,
            .statout = stat, .ratio = ratio};
  par_spec sp0 = {BH, J->nthreads, 0, 1, NULL, NULL};
  int st = par_run(&sp0, fill_task, &f);
  par_spec sp = {BH * f.ntq, J->nthreads, Dv * sizeof(double) + 4 * FB * sizeof(float), 1, NULL, NULL};
  if (!st) st = par_run(&sp, fwd_task, &f);
  free(tab);
  return st;
}

/* --------------------------------------------------------------- backward */

typedef struct {
  float *s, *ds, *u, *G, *t, *pe; /* D x BB each (pe: one row per chunk of axes); t: factor d's shift */
  float run[BB], rexp[BB], lp[BB], sc[BB], sc2[BB], tsum[BB];
} gblock;

/* As the float64 engine's grad_block: G[d][b] = dw~_b/du_d in the row's
 * scale 2^(-l Eb) and the scaled weights wt[b]. */
static inline void grad_block(size_t D, int l, size_t nb, float Eb, gblock *g, float *wt) {
  float *restrict run = g->run, *restrict rexp = g->rexp;
  const float wcut = WCUT / (float)l;
  float *restrict tsum = g->tsum;
  for (size_t b = 0; b < BB; b++) {
    run[b] = 1.0f;
    rexp[b] = 0.0f;
    tsum[b] = 0.0f;
  }
  for (size_t d = 0; d < D; d++) {
    const float *restrict s = g->s + d * BB, *restrict t = g->t + d * BB;
    float *restrict pm = g->G + d * BB;
    if (d % CHUNK == 0) {
      float *restrict pe = g->pe + (d / CHUNK) * BB;
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        rexp[b] += expof(run[b]);
        run[b] = mantf(run[b]);
        pe[b] = rexp[b];
      }
    }
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
      pm[b] = run[b];
      run[b] *= s[b];
      tsum[b] += t[b];
    }
  }
  float *restrict lp = g->lp, *restrict sc = g->sc;
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    float k = rexp[b] + expof(run[b]) - Eb - tsum[b], m = mantf(run[b]);
    float x = k < wcut ? 0.0f : m * pow2f(k);
    wt[b] = ipowf(x, l);
    lp[b] = (float)l * ipowf(x, l - 1);
  }
  for (size_t b = 0; b < BB; b++) {
    run[b] = 1.0f;
    rexp[b] = 0.0f;
  }
  for (size_t dd = D; dd-- > 0;) {
    const float *restrict s = g->s + dd * BB, *restrict ds = g->ds + dd * BB;
    const float *restrict pe = g->pe + (dd / CHUNK) * BB, *restrict t = g->t + dd * BB;
    float *restrict G = g->G + dd * BB;
    const int new_suffix = (D - 1 - dd) % CHUNK == 0;
    if (new_suffix) {
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        rexp[b] += expof(run[b]);
        run[b] = mantf(run[b]);
      }
    }
    /* y_dd's scale: the prefix's and suffix's exponents less the shifts of
     * the factors other than dd: sc when factor dd is not shifted, sc2 when
     * it is (both renewed with the exponents) */
    if (new_suffix || dd % CHUNK == CHUNK - 1 || dd + 1 == D) {
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        float k = pe[b] + rexp[b] - Eb - tsum[b], k2 = k + TSHIFT;
        sc[b] = k < WCUT ? 0.0f : pow2f(k);
        g->sc2[b] = k2 < WCUT ? 0.0f : pow2f(k2);
      }
    }
    const float *restrict sc2 = g->sc2;
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
      float y = (G[b] * run[b]) * (t[b] != 0.0f ? sc2[b] : sc[b]);
      G[b] = lp[b] * (ds[b] * y);
      run[b] *= s[b];
    }
  }
}

static size_t gblock_floats(size_t D) { return (5 * D + (D + CHUNK - 1) / CHUNK) * BB; }

/* Backward, one task: head bh, key chunk c (see attention_fourier.c). ws:
 * gblock floats, 3 BB floats, then doubles: 2 D (dq, dR of a row), D CL
 * (dK^T of the chunk), CL Dv (dV of the chunk). */
GFI_CLONES static int bwd_task(void *vc, size_t t, void *vws) {
  const gctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk;
  const size_t Lqp = f->Lqp, Lkp = f->Lkp, CL = f->chunklen;
  const int l = J->l;
  const size_t bh = t / f->nchunk, c = t % f->nchunk;
  const size_t k0 = c * CL, k1 = k0 + CL < Lk ? k0 + CL : Lk;
  const size_t PW = D + (J->per_axis ? D : 1);
  double *part = f->part + (c * BH + bh) * Lq * PW;
  memset(part, 0, Lq * PW * sizeof *part);
  if (k0 >= k1) return GFI_OK;
  const size_t rs = attn_fjob_rs(J);
  const float *V = J->Vf + attn_fjob_xoff(J, J->vs, bh), *Rf = J->Rf + (bh % J->H) * D;
  const double *Rd = J->Rd + (bh % J->H) * D;
  const float *qt = f->qt + bh * D * Lqp, *kt = f->kt + bh * D * Lkp;
  const float *dH = J->dHf + attn_fjob_hoff(J, bh, Lq) * Dv;
  const double *stat = f->stat + 2 * bh * Lq, *P = f->P + bh * Lq, *invS = f->invS + bh * Lq;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  gblock g;
  float *fw = vws;
  g.s = fw;
  g.ds = g.s + D * BB;
  g.u = g.ds + D * BB;
  g.G = g.u + D * BB;
  g.t = g.G + D * BB;
  g.pe = g.t + D * BB;
  float *coef = fw + gblock_floats(D), *wt = coef + BB, *mk = wt + BB, *z = mk + BB;
  double *dq = (double *)(z + BB), *dr = dq + D, *dkT = dr + D, *dv = dkT + D * CL;
  memset(dkT, 0, D * CL * sizeof *dkT);
  memset(dv, 0, CL * Dv * sizeof *dv);
  for (size_t i = attn_fjob_query_begin(J, k0); i < Lq; i++) {
    if (invS[i] == 0) continue;
    const size_t je = attn_fjob_key_end(J, i), jend = je < k1 ? je : k1;
    if (jend <= k0) continue;
    const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
    const float *dh = dH + i * rs * Dv;
    const double Pi = P[i], iS = invS[i];
    const float Eb = (float)stat[2 * i];
    for (size_t d = 0; d < D; d++) dq[d] = dr[d] = 0;
    for (size_t j0 = k0; j0 < jend; j0 += BB) {
      const size_t nb = jend - j0 < BB ? jend - j0 : BB;
      size_t nv = nb;
      if (kp || mr) {
        nv = mask_lanes(kp, mr, j0, nb, mk);
        if (nv == 0) continue;
      }
      if (J->drop_thr)
        drop_lanes(J, bh, i, j0, nb, z);
      else
        for (size_t b = 0; b < nb; b++) z[b] = 1.0f;
      for (size_t b = 0; b < nb; b++) {
        const float *v = V + (j0 + b) * J->vs[2];
        double a = 0;
#pragma omp simd reduction(+ : a)
        for (size_t cc = 0; cc < Dv; cc++) a += (double)dh[cc] * (double)v[cc];
        coef[b] = (float)(((double)z[b] * a - Pi) * iS);
      }
      for (size_t d = 0; d < D; d++) {
        const float *restrict k = kt + d * Lkp + j0;
        const float qd = qt[d * Lqp + i], rd = Rf[d];
        float *restrict s = g.s + d * BB, *restrict ds = g.ds + d * BB, *restrict u = g.u + d * BB;
        float *restrict tt = g.t + d * BB;
#pragma omp simd
        for (size_t b = 0; b < nb; b++) {
          float uu = rd * (qd - k[b]), sv;
          sinc32_both(uu, &sv, &ds[b]);
          int tiny = fabsf(sv) < TINYF; /* as the forward: kept scaled, its exponent in t */
          s[b] = tiny ? sv * TSCALE : sv;
          tt[b] = tiny ? TSHIFT : 0.0f;
          u[b] = uu;
        }
        if (nv < nb)
          for (size_t b = 0; b < nb; b++) {
            s[b] *= mk[b];
            ds[b] *= mk[b];
          }
      }
      if (nv < nb)
        for (size_t b = 0; b < nb; b++) coef[b] *= mk[b];
      grad_block(D, l, nb, Eb, &g, wt);
      double *dk0 = dkT + (j0 - k0);
      for (size_t d = 0; d < D; d++) {
        const float *restrict G = g.G + d * BB, *restrict u = g.u + d * BB;
        double *restrict dk = dk0 + d * CL;
        float acc = 0, accr = 0;
#pragma omp simd reduction(+ : acc, accr)
        for (size_t b = 0; b < nb; b++) {
          float tt = coef[b] * G[b];
          acc += tt;
          accr += tt * u[b];
          dk[b] -= (double)tt;
        }
        dq[d] += acc;
        dr[d] += accr;
      }
      for (size_t b = 0; b < nb; b++) {
        const double a = (double)wt[b] * iS * (double)z[b];
        if (a == 0) continue;
        double *restrict dvj = dv + (j0 + b - k0) * Dv;
#pragma omp simd
        for (size_t cc = 0; cc < Dv; cc++) dvj[cc] += a * (double)dh[cc];
      }
    }
    double rs = 0;
    for (size_t d = 0; d < D; d++) {
      part[i * PW + d] = dq[d];
      if (J->per_axis)
        part[i * PW + D + d] = dr[d] / Rd[d];
      else
        rs += dr[d] / Rd[d];
    }
    if (!J->per_axis) part[i * PW + D] = rs;
  }
  float *dK = f->dK + attn_fjob_hoff(J, bh, Lk) * D, *dV = f->dV + attn_fjob_hoff(J, bh, Lk) * Dv;
  for (size_t j = k0; j < k1; j++) {
    for (size_t d = 0; d < D; d++) dK[j * rs * D + d] = (float)(Rd[d] * dkT[d * CL + (j - k0)]);
    for (size_t cc = 0; cc < Dv; cc++) dV[j * rs * Dv + cc] = (float)dv[(j - k0) * Dv + cc];
  }
  return GFI_OK;
}

static int bwd_reduce(void *vc, size_t t, void *ws) {
  (void)ws;
  const gctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D, Lq = J->Lq, np = J->per_axis ? D : 1;
  size_t bh = t / f->ntq, i0 = (t % f->ntq) * ROW_TILE;
  size_t i1 = i0 + ROW_TILE < Lq ? i0 + ROW_TILE : Lq;
  const double *Rd = J->Rd + (bh % J->H) * D;
  for (size_t i = i0; i < i1; i++) {
    const size_t row = bh * Lq + i;
    float *dq = f->dQ + attn_fjob_qrow(J, row) * D;
    double *drow = f->dRrow + row * np;
    for (size_t k = 0; k < np; k++) drow[k] = 0;
    if (isnan(f->stat[2 * row + 1])) {
      for (size_t d = 0; d < D; d++) dq[d] = NAN;
      continue;
    }
    const size_t PW = D + np;
    for (size_t d = 0; d < PW; d++) {
      double a = 0;
      for (size_t c = 0; c < f->nchunk; c++) a += f->part[((c * BH + bh) * Lq + i) * PW + d];
      if (d < D)
        dq[d] = (float)(Rd[d] * a);
      else
        drow[d - D] = a;
    }
  }
  return GFI_OK;
}

int attn_fjob_backward32(const attn_fjob *J, const float *H, const double *stat, float *dQ, float *dK,
                         float *dV, double *dRrow) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk;
  const size_t Lqp = attn_round8(Lq), Lkp = attn_round8(Lk);
  const size_t nchunk = attn_fjob_key_chunks(BH, Lk);
  size_t chunklen = (Lk + nchunk - 1) / nchunk;
  chunklen = (chunklen + BB - 1) / BB * BB;
  size_t ntab = 0, npart = 0;
  if (gfi_size_prod(&ntab, BH, D, Lqp + Lkp, 1) ||
      gfi_size_prod(&npart, nchunk, BH, Lq, D + (J->per_axis ? D : 1) + 2) || ntab > SIZE_MAX / 16 ||
      npart > SIZE_MAX / 16)
    return GFI_ENOMEM;
  float *tab = gfi_malloc2(ntab ? ntab : 1, sizeof *tab);
  double *dtab = gfi_malloc2(npart, sizeof *dtab);
  if (!tab || !dtab) {
    free(tab);
    free(dtab);
    return GFI_ENOMEM;
  }
  double *P = dtab, *invS = P + BH * Lq, *part = invS + BH * Lq;
  for (size_t r = 0; r < BH * Lq; r++) {
    double T = stat[2 * r + 1];
    int ok = isfinite(T);
    double p = 0;
    if (ok)
      for (size_t c = 0; c < Dv; c++) {
        const size_t m = attn_fjob_qrow(J, r) * Dv + c;
        p += (double)J->dHf[m] * (double)H[m];
      }
    P[r] = p;
    invS[r] = ok ? 1.0 / T : 0.0;
  }
  gctx f = {.J = J, .Lqp = Lqp, .Lkp = Lkp, .ntq = (Lq + ROW_TILE - 1) / ROW_TILE, .nchunk = nchunk,
            .chunklen = chunklen, .kt = tab, .qt = tab + BH * D * Lkp, .stat = stat, .P = P,
            .invS = invS, .part = part, .dRrow = dRrow, .dQ = dQ, .dK = dK, .dV = dV};
  par_spec sp0 = {2 * BH, J->nthreads, 0, 1, NULL, NULL};
  int st = par_run(&sp0, fill_task, &f);
  size_t ws = (gblock_floats(D) + 4 * BB) * sizeof(float) + (2 * D + D * chunklen + chunklen * Dv) * sizeof(double);
  par_spec sp1 = {BH * nchunk, J->nthreads, ws, 1, NULL, NULL};
  if (!st) st = par_run(&sp1, bwd_task, &f);
  par_spec sp2 = {BH * f.ntq, J->nthreads, 0, 4, NULL, NULL};
  if (!st) st = par_run(&sp2, bwd_reduce, &f);
  free(tab);
  free(dtab);
  return st;
}
