/* Fourier attention engine: forward with per-row scaled products and the
 * exact backward by recomputation (see gfi/attention.h for the contract).
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
#include <stdlib.h>
#include <string.h>
#include "attention_internal.h"
#include "par.h"
#include "sinc_series.h"
#include "alloc.h"
#include "engine.h"

#define FWD_BLOCK 64  /* keys per block in the forward */
#define BWD_BLOCK 16  /* lanes (keys or queries) per block in the backward */
#define CHUNK 4       /* axes between renormalisations of a running product */
#define SERIES_CUT GFI_SINC_CUT
#define FLUSH 0x1p-64
#define ZERO_EXP (-1.0e6) /* exponent of an exact zero product: below every other */
#define MAGIC 4503599627370496.0 /* 2^52 */

static inline uint64_t d2u(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}
static inline double u2d(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}
/* x = mant(x) 2^expo(x), |mant| in [1, 2); 0 (and subnormals, which never
 * occur here) give mant 0 and expo 0. Bit operations only, so that the loops
 * vectorise. */
static inline double mant(double x) {
  uint64_t b = d2u(x);
  uint64_t keep = (uint64_t)0 - (uint64_t)((b & 0x7ff0000000000000ULL) != 0);
  return u2d(((b & 0x800fffffffffffffULL) | 0x3ff0000000000000ULL) & keep);
}
static inline double expo(double x) {
  uint64_t b = d2u(x);
  uint64_t be = (b >> 52) & 0x7ff;
  uint64_t keep = (uint64_t)0 - (uint64_t)(be != 0);
  double e = u2d(be | 0x4330000000000000ULL) - MAGIC - 1023.0;
  return u2d(d2u(e) & keep);
}
/* 2^k for integer-valued k, k < -1022 giving 0 and k > 1023 giving 2^1023. */
static inline double pow2(double k) {
  k = k < -1023.0 ? -1023.0 : (k > 1023.0 ? 1023.0 : k);
  return u2d(d2u(k + 1023.0 + MAGIC) << 52);
}

/* t^l for 0 <= l <= 15 from the binary digits of l: no branch on l. */
static inline double ipow(double t, int l) {
  double t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
  double a = (l & 1) ? t : 1.0, b = (l & 2) ? t2 : 1.0;
  double c = (l & 4) ? t4 : 1.0, d = (l & 8) ? t8 : 1.0;
  return (a * b) * (c * d);
}

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


/* Sine/cosine tables of one head in structure-of-arrays form, D x Lp (Lp: L
 * rounded up to a multiple of 8, the padding zero). */
static void fill_tables(size_t L, size_t Lp, size_t D, size_t rs, const double *X, const double *Rd, double *r,
                        double *rl, double *s, double *c) {
  for (size_t d = 0; d < D; d++) {
    for (size_t i = 0; i < L; i++)
      engine_phase(Rd[d], X[i * rs + d], r + d * Lp + i, rl + d * Lp + i, s + d * Lp + i, c + d * Lp + i);
    for (size_t i = L; i < Lp; i++) r[d * Lp + i] = rl[d * Lp + i] = s[d * Lp + i] = c[d * Lp + i] = 0;
  }
}

ATTN_DEFINE_MASK_LANES(mask_lanes, double)
ATTN_DEFINE_DROP_LANES(drop_lanes, double)

#define ROW_TILE 16 /* query rows per forward task */

typedef struct {
  const attn_fjob *J;
  size_t Lqp, Lkp, ntq, nchunk, chunklen;
  double *rq, *lq, *sq, *cq, *rk, *lk, *sk, *ck; /* head bh at bh D Lp; l*: the phases' lo parts */
  const double *stat, *dH, *P, *invS;
  double *Hout, *statout, *ratio, *dQ, *dK, *dV, *dRrow, *part;
} fctx;

/* Table task t: keys of head t (t < BH), else queries of head t - BH. */
static int fill_task(void *vc, size_t t, void *ws) {
  (void)ws;
  const fctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D;
  int keys = t < BH;
  size_t bh = keys ? t : t - BH, L = keys ? J->Lk : J->Lq, Lp = keys ? f->Lkp : f->Lqp;
  const size_t *xs = keys ? J->ks : J->qs, rs = xs[2]; /* rs: the row step in elements */
  const double *X = (keys ? J->K : J->Q) + attn_fjob_xoff(J, xs, bh);
  double *r = (keys ? f->rk : f->rq) + bh * D * Lp, *rl = (keys ? f->lk : f->lq) + bh * D * Lp,
         *s = (keys ? f->sk : f->sq) + bh * D * Lp, *c = (keys ? f->ck : f->cq) + bh * D * Lp;
  fill_tables(L, Lp, D, rs, X, J->Rd + (bh % J->H) * D, r, rl, s, c);
  return GFI_OK;
}

/* H row, saved statistics and ratio of a finished row (see attn_fjob_forward). */
static void finish_row(const attn_fjob *J, size_t nvis, double E, double S, double A, const double *N,
                       double *h, double *st, double *ratio) {
  const size_t Dv = J->Dv;
  double inv = 0;
  int k = attn_fjob_row_stats(J, nvis, E, S, A, st, ratio, &inv);
  for (size_t c = 0; c < Dv; c++) h[c] = k == 2 ? N[c] * inv : k == 0 && J->empty_zero ? 0.0 : NAN;
}

/* Forward, query row i of head bh; ws: 4 D (query row) + 4 FWD_BLOCK + Dv. */
static void fwd_row(const fctx *f, size_t bh, size_t i, double *ws) {
  const attn_fjob *J = f->J;
  const size_t D = J->D, Dv = J->Dv, Lq = J->Lq, Lp = f->Lkp;
  const int l = J->l;
  const double *Q = J->Q + attn_fjob_xoff(J, J->qs, bh) + i * J->qs[2], *V = J->V + attn_fjob_xoff(J, J->vs, bh),
               *Rd = J->Rd + (bh % J->H) * D;
  const double *rk = f->rk + bh * D * Lp, *lk = f->lk + bh * D * Lp, *sk = f->sk + bh * D * Lp,
               *ck = f->ck + bh * D * Lp;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh), *mr = attn_fjob_mask_row(J, bh, i);
  double *qr = ws, *ql = ws + D, *qs = ws + 2 * D, *qc = ws + 3 * D;
  double *m = ws + 4 * D, *e = m + FWD_BLOCK, *w = e + FWD_BLOCK, *mk = w + FWD_BLOCK, *N = mk + FWD_BLOCK;
  for (size_t d = 0; d < D; d++) engine_phase(Rd[d], Q[d], qr + d, ql + d, qs + d, qc + d);
  for (size_t c = 0; c < Dv; c++) N[c] = 0;
  double E = -INFINITY, S = 0, A = 0;
  size_t nvis = 0;
  const size_t jend = attn_fjob_key_end(J, i);
  for (size_t j0 = 0; j0 < jend; j0 += FWD_BLOCK) {
    const size_t nb = jend - j0 < FWD_BLOCK ? jend - j0 : FWD_BLOCK;
    size_t nv = nb;
    if (kp || mr) {
      nv = mask_lanes(kp, mr, j0, nb, mk);
      if (nv == 0) continue;
    }
    nvis += nv;
    for (size_t b = 0; b < nb; b++) {
      m[b] = 1.0;
      e[b] = 0.0;
    }
    for (size_t d = 0; d < D; d++) {
      const double *restrict kr = rk + d * Lp + j0, *restrict kl = lk + d * Lp + j0,
                             *restrict ks = sk + d * Lp + j0, *restrict kc = ck + d * Lp + j0;
      const double a = qr[d], al = ql[d], sa = qs[d], ca = qc[d];
#pragma omp simd
      for (size_t b = 0; b < nb; b++) m[b] *= sinc_of((a - kr[b]) + (al - kl[b]), sa * kc[b] - ca * ks[b]);
      if ((d + 1) % CHUNK == 0 || d + 1 == D) {
#pragma omp simd
        for (size_t b = 0; b < nb; b++) {
          e[b] += expo(m[b]);
          m[b] = mant(m[b]);
        }
      }
    }
    if (nv < nb)
      for (size_t b = 0; b < nb; b++) m[b] *= mk[b];
    double emax = ZERO_EXP;
    for (size_t b = 0; b < nb; b++) {
      if (m[b] == 0) e[b] = ZERO_EXP;
      if (e[b] > emax) emax = e[b];
    }
    if (emax > E) {
      double sc = pow2(l * (E - emax)); /* 0 on the first block (E = -inf) */
      S *= sc;
      A *= sc;
      for (size_t c = 0; c < Dv; c++) N[c] *= sc;
      E = emax;
    }
    double bs = 0, ba = 0;
#pragma omp simd reduction(+ : bs, ba)
    for (size_t b = 0; b < nb; b++) {
      double t = ipow(m[b] * pow2(e[b] - E), l);
      w[b] = t;
      bs += t;
      ba += fabs(t);
    }
    S += bs;
    A += ba;
    if (J->drop_thr) { /* dropout: the numerator only (the weights are normalised without it) */
      drop_lanes(J, bh, i, j0, nb, mk);
      for (size_t b = 0; b < nb; b++) w[b] *= mk[b];
    }
    for (size_t b = 0; b < nb; b++) {
      const double wb = w[b], *restrict v = V + (j0 + b) * J->vs[2];
      if (wb == 0) continue;
#pragma omp simd
      for (size_t c = 0; c < Dv; c++) N[c] += wb * v[c];
    }
  }
  const size_t row = bh * Lq + i;
  finish_row(J, nvis, E, S, A, N, f->Hout + attn_fjob_qrow(J, row) * Dv, f->statout + 2 * row, f->ratio + row);
}

static int fwd_task(void *vc, size_t t, void *ws) {
  const fctx *f = vc;
  size_t bh = t / f->ntq, i0 = (t % f->ntq) * ROW_TILE, Lq = f->J->Lq;
  size_t i1 = i0 + ROW_TILE < Lq ? i0 + ROW_TILE : Lq;
  for (size_t i = i0; i < i1; i++) fwd_row(f, bh, i, ws);
  return GFI_OK;
}

int attn_fjob_forward(const attn_fjob *J, double *Hout, double *stat, double *ratio) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lkp = attn_round8(J->Lk);
  double *tab = gfi_malloc4(4 * BH, D, Lkp, sizeof *tab);
  if (!tab) return GFI_ENOMEM;
  const size_t n = BH * D * Lkp;
  fctx f = {.J = J, .Lkp = Lkp, .ntq = (J->Lq + ROW_TILE - 1) / ROW_TILE, .rk = tab, .sk = tab + n,
            .ck = tab + 2 * n, .lk = tab + 3 * n, .Hout = Hout, .statout = stat, .ratio = ratio};
  par_spec sp0 = {BH, J->nthreads, 0, 1, NULL, NULL};
  int st = par_run(&sp0, fill_task, &f);
  par_spec sp = {BH * f.ntq, J->nthreads, (4 * D + 4 * FWD_BLOCK + Dv) * sizeof(double), 1, NULL, NULL};
  if (!st) st = par_run(&sp, fwd_task, &f);
  free(tab);
  return st;
}

/* --------------------------------------------------------------- backward */

/* Per-block gradient workspace, each D x BWD_BLOCK: s, s', u (= R_d (q - k)),
 * and prefix products that are overwritten by the gradients G; pe holds the
 * prefix exponent per chunk. */
typedef struct {
  double *s, *ds, *u, *G, *pe;
  double run[BWD_BLOCK], rexp[BWD_BLOCK], lp[BWD_BLOCK], sc[BWD_BLOCK];
} gblock;

/* From s, s' (filled for nb lanes) compute G[d][b] = dw~_b/du_d in the scale
 * 2^(-l Eb[b]) of each lane, and the scaled weights wt[b]. */
static void grad_block(size_t D, int l, size_t nb, const double *Eb, gblock *g, double *wt) {
  const size_t B = BWD_BLOCK;
  double *restrict run = g->run, *restrict rexp = g->rexp;
  for (size_t b = 0; b < nb; b++) {
    run[b] = 1.0;
    rexp[b] = 0.0;
  }
  /* prefix: G[d] = prod_{e<d} s_e relative to 2^pe[d / CHUNK] */
  for (size_t d = 0; d < D; d++) {
    const double *restrict s = g->s + d * B;
    double *restrict pm = g->G + d * B;
    if (d % CHUNK == 0) {
      double *restrict pe = g->pe + (d / CHUNK) * B;
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        rexp[b] += expo(run[b]);
        run[b] = mant(run[b]);
        pe[b] = rexp[b];
      }
    }
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
      pm[b] = run[b];
      run[b] *= s[b];
    }
  }
  /* the full product, exactly as the forward forms it, and l times its
   * (l-1)-th power: s_d y_d is the full product for every d, so the factor
   * l (s_d y_d)^(l-1) of the gradient is one number per lane (0 for l >= 2
   * when some factor is 0, as then every dw~/du_d is; 1 for l = 1) */
  double *restrict lp = g->lp, *restrict sc = g->sc;
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    double e = rexp[b] + expo(run[b]), m = mant(run[b]);
    double x = m * pow2(e - Eb[b]);
    wt[b] = ipow(x, l); /* m = 0: 0 */
    lp[b] = l * ipow(x, l - 1);
  }
  /* suffix, combined with the prefix into y_d and the gradient */
  for (size_t b = 0; b < nb; b++) {
    run[b] = 1.0;
    rexp[b] = 0.0;
  }
  for (size_t dd = D; dd-- > 0;) {
    const double *restrict s = g->s + dd * B, *restrict ds = g->ds + dd * B;
    const double *restrict pe = g->pe + (dd / CHUNK) * B;
    double *restrict G = g->G + dd * B;
    const int new_suffix = (D - 1 - dd) % CHUNK == 0;
    if (new_suffix) {
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        rexp[b] += expo(run[b]);
        run[b] = mant(run[b]);
      }
    }
    /* the scale 2^(pe + rexp - E) changes only where the prefix chunk or the
     * suffix exponent does */
    if (new_suffix || dd % CHUNK == CHUNK - 1 || dd + 1 == D) {
#pragma omp simd
      for (size_t b = 0; b < nb; b++) sc[b] = pow2(pe[b] + rexp[b] - Eb[b]);
    }
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
      double y = (G[b] * run[b]) * sc[b];
      /* y is finite (pow2 is clamped); lp = 0 makes gr exactly 0 */
      G[b] = lp[b] * (ds[b] * y);
      run[b] *= s[b];
    }
  }
}

/* Doubles of a gblock's arrays, and their place at the start of `base`. */
static size_t gblock_doubles(size_t D) {
  return (4 * D + (D + CHUNK - 1) / CHUNK) * BWD_BLOCK;
}
static void gblock_carve(gblock *g, size_t D, double *base) {
  g->s = base;
  g->ds = g->s + D * BWD_BLOCK;
  g->u = g->ds + D * BWD_BLOCK;
  g->G = g->u + D * BWD_BLOCK;
  g->pe = g->G + D * BWD_BLOCK;
}
/* Per-thread scratch of a backward pass: the gblock first, then `extra`
 * doubles (BWD_BLOCK is a multiple of 8, so both start on a cache line). */
#define BWD_WS(D, extra) ((gblock_doubles(D) + (extra)) * sizeof(double))

/* Backward, one task: head bh, keys [k0, k1) (chunk c), over every query row
 * that sees them. For each pair block the factors, their derivatives and the
 * prefix/suffix products are formed once and give all three gradients: the
 * query row's dq and dR partials (to part, this chunk's slot; summed over the
 * chunks in chunk order afterwards), and dK, dV of the chunk's keys (owned by
 * this task, summed over query rows in row order). ws: gblock, then 4 B + 2 D
 * + D chunklen doubles. */
static int bwd_task(void *vc, size_t t, void *vws) {
  const fctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk, B = BWD_BLOCK;
  const size_t Lqp = f->Lqp, Lkp = f->Lkp, CL = f->chunklen;
  const int l = J->l;
  const size_t bh = t / f->nchunk, c = t % f->nchunk;
  const size_t k0 = c * CL, k1 = k0 + CL < Lk ? k0 + CL : Lk;
  const size_t PW = D + (J->per_axis ? D : 1); /* a row's partials: dq (D), dR (D or 1) */
  double *part = f->part + (c * BH + bh) * Lq * PW;
  memset(part, 0, Lq * PW * sizeof *part);
  if (k0 >= k1) return GFI_OK;
  const size_t rs = attn_fjob_rs(J);
  const double *V = J->V + attn_fjob_xoff(J, J->vs, bh), *Rd = J->Rd + (bh % J->H) * D;
  const double *rq = f->rq + bh * D * Lqp, *lq = f->lq + bh * D * Lqp, *sq = f->sq + bh * D * Lqp,
               *cq = f->cq + bh * D * Lqp;
  const double *rk = f->rk + bh * D * Lkp, *lk = f->lk + bh * D * Lkp, *sk = f->sk + bh * D * Lkp,
               *ck = f->ck + bh * D * Lkp;
  const double *stat = f->stat + 2 * bh * Lq, *dH = f->dH + attn_fjob_hoff(J, bh, Lq) * Dv, *P = f->P + bh * Lq,
               *invS = f->invS + bh * Lq;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  gblock g;
  gblock_carve(&g, D, vws);
  double *ws = (double *)vws + gblock_doubles(D);
  double *coef = ws, *wt = ws + B, *Eb = ws + 2 * B, *mk = ws + 3 * B, *z = ws + 4 * B, *dq = ws + 5 * B, *dr = dq + D,
         *dkT = dr + D;
  double *dv = f->dV + (attn_fjob_hoff(J, bh, Lk) + k0 * rs) * Dv;
  memset(dkT, 0, D * CL * sizeof *dkT);
  for (size_t j = k0; j < k1; j++) memset(dv + (j - k0) * rs * Dv, 0, Dv * sizeof *dv);
  for (size_t i = attn_fjob_query_begin(J, k0); i < Lq; i++) {
    if (invS[i] == 0) continue; /* flagged, empty or underflowed row: no gradient */
    const size_t je = attn_fjob_key_end(J, i), jend = je < k1 ? je : k1;
    if (jend <= k0) continue;
    const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
    const double *dh = dH + i * rs * Dv, Pi = P[i], iS = invS[i];
    for (size_t b = 0; b < B; b++) Eb[b] = stat[2 * i];
    for (size_t d = 0; d < D; d++) dq[d] = dr[d] = 0;
    for (size_t j0 = k0; j0 < jend; j0 += B) {
      const size_t nb = jend - j0 < B ? jend - j0 : B;
      size_t nv = nb;
      if (kp || mr) {
        nv = mask_lanes(kp, mr, j0, nb, mk);
        if (nv == 0) continue;
      }
      /* dL/dw_ij = (z_ij dH_i . v_j - P_i) / T_i, z_ij the dropout factor (1 without) */
      if (J->drop_thr)
        drop_lanes(J, bh, i, j0, nb, z);
      else
        for (size_t b = 0; b < nb; b++) z[b] = 1.0;
      for (size_t b = 0; b < nb; b++) coef[b] = (z[b] * attn_dot(dh, V + (j0 + b) * J->vs[2], Dv) - Pi) * iS;
      for (size_t d = 0; d < D; d++) {
        const double *restrict kr = rk + d * Lkp + j0, *restrict kl = lk + d * Lkp + j0,
                               *restrict ks = sk + d * Lkp + j0, *restrict kc = ck + d * Lkp + j0;
        const double a = rq[d * Lqp + i], al = lq[d * Lqp + i], sa = sq[d * Lqp + i], ca = cq[d * Lqp + i];
        double *restrict s = g.s + d * B, *restrict ds = g.ds + d * B, *restrict u = g.u + d * B;
#pragma omp simd
        for (size_t b = 0; b < nb; b++) {
          double uu = (a - kr[b]) + (al - kl[b]);
          sinc_both(uu, sa * kc[b] - ca * ks[b], ca * kc[b] + sa * ks[b], &s[b], &ds[b]);
          u[b] = uu;
        }
        if (nv < nb)
          for (size_t b = 0; b < nb; b++) {
            s[b] *= mk[b]; /* an excluded key: weight and gradient exactly 0 */
            ds[b] *= mk[b];
          }
      }
      if (nv < nb)
        for (size_t b = 0; b < nb; b++) coef[b] *= mk[b];
      grad_block(D, l, nb, Eb, &g, wt);
      double *dk0 = dkT + (j0 - k0);
      for (size_t d = 0; d < D; d++) {
        const double *restrict G = g.G + d * B, *restrict u = g.u + d * B;
        double *restrict dk = dk0 + d * CL;
        double acc = 0, accr = 0;
#pragma omp simd reduction(+ : acc, accr)
        for (size_t b = 0; b < nb; b++) {
          double tt = coef[b] * G[b];
          acc += tt;
          accr += tt * u[b];
          dk[b] -= tt;
        }
        dq[d] += acc;
        dr[d] += accr;
      }
      for (size_t b = 0; b < nb; b++) {
        const double a = wt[b] * iS * z[b];
        if (a == 0) continue;
        double *restrict dvj = dv + (j0 + b - k0) * rs * Dv;
#pragma omp simd
        for (size_t cc = 0; cc < Dv; cc++) dvj[cc] += a * dh[cc];
      }
    }
    /* du_d/dR_d = q_id - k_jd = u_d / R_d */
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
  double *dK = f->dK + attn_fjob_hoff(J, bh, Lk) * D;
  for (size_t j = k0; j < k1; j++)
    for (size_t d = 0; d < D; d++) dK[j * rs * D + d] = Rd[d] * dkT[d * CL + (j - k0)];
  return GFI_OK;
}

/* dQ and the per-row dR partials of a tile of rows: the chunk partials summed
 * in chunk order. */
static int bwd_reduce(void *vc, size_t t, void *ws) {
  (void)ws;
  const fctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D, Lq = J->Lq, np = J->per_axis ? D : 1;
  size_t bh = t / f->ntq, i0 = (t % f->ntq) * ROW_TILE;
  size_t i1 = i0 + ROW_TILE < Lq ? i0 + ROW_TILE : Lq;
  const double *Rd = J->Rd + (bh % J->H) * D;
  for (size_t i = i0; i < i1; i++) {
    const size_t row = bh * Lq + i;
    double *dq = f->dQ + attn_fjob_qrow(J, row) * D, *drow = f->dRrow + row * np;
    for (size_t k = 0; k < np; k++) drow[k] = 0;
    if (isnan(f->stat[2 * row + 1])) { /* flagged row */
      for (size_t d = 0; d < D; d++) dq[d] = NAN;
      continue;
    }
    const size_t PW = D + np;
    for (size_t d = 0; d < PW; d++) {
      double a = 0;
      for (size_t c = 0; c < f->nchunk; c++) a += f->part[((c * BH + bh) * Lq + i) * PW + d];
      if (d < D)
        dq[d] = Rd[d] * a;
      else
        drow[d - D] = a;
    }
  }
  return GFI_OK;
}

/* Key chunks per head: fixed by the shape alone (never by the thread count),
 * so the sums are the same bits for any number of threads; several chunks
 * when there are few heads, so that threads have work. */
static size_t key_chunks(size_t BH, size_t Lk) {
  size_t n = BH >= 64 ? 1 : (64 + BH - 1) / BH;
  size_t by_len = (Lk + 255) / 256;
  if (n > by_len) n = by_len;
  if (n > 8) n = 8;
  return n ? n : 1;
}

size_t attn_fjob_key_chunks(size_t BH, size_t Lk) { return key_chunks(BH, Lk); }

int attn_fjob_backward(const attn_fjob *J, const double *H, const double *stat, const double *dH,
                       double *dQ, double *dK, double *dV, double *dRrow) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk, B = BWD_BLOCK;
  const size_t Lqp = attn_round8(Lq), Lkp = attn_round8(Lk), nq = BH * D * Lqp, nk = BH * D * Lkp;
  const size_t nchunk = key_chunks(BH, Lk);
  size_t chunklen = (Lk + nchunk - 1) / nchunk;
  chunklen = (chunklen + B - 1) / B * B;
  /* tables (4 per side), P and 1/T per row, chunk partials of dq and dR */
  size_t ntab = 0, npart = 0;
  if (gfi_size_prod(&ntab, 4 * BH, D, Lqp + Lkp, 1) || gfi_size_prod(&npart, nchunk, BH, Lq, D + (J->per_axis ? D : 1) + 2) ||
      ntab > SIZE_MAX / 16 || npart > SIZE_MAX / 16)
    return GFI_ENOMEM;
  double *tab = gfi_malloc2(ntab + npart, sizeof *tab);
  if (!tab) return GFI_ENOMEM;
  double *rq = tab, *sq = rq + nq, *cq = sq + nq, *lq = cq + nq, *rk = lq + nq, *sk = rk + nk, *ck = sk + nk,
         *lk = ck + nk;
  double *P = lk + nk, *invS = P + BH * Lq, *part = invS + BH * Lq; /* npart >= 2 BH Lq + the partials */
  for (size_t r = 0; r < BH * Lq; r++) {
    double T = stat[2 * r + 1];
    int ok = isfinite(T);
    const size_t m = attn_fjob_qrow(J, r);
    P[r] = ok ? attn_dot(dH + m * Dv, H + m * Dv, Dv) : 0.0;
    invS[r] = ok ? 1.0 / T : 0.0;
  }
  fctx f = {.J = J, .Lqp = Lqp, .Lkp = Lkp, .ntq = (Lq + ROW_TILE - 1) / ROW_TILE, .nchunk = nchunk,
            .chunklen = chunklen, .rq = rq, .lq = lq, .sq = sq, .cq = cq, .rk = rk, .lk = lk, .sk = sk,
            .ck = ck,
            .stat = stat, .dH = dH, .P = P, .invS = invS, .dQ = dQ, .dK = dK, .dV = dV,
            .dRrow = dRrow, .part = part};
  par_spec sp0 = {2 * BH, J->nthreads, 0, 1, NULL, NULL};
  int st = par_run(&sp0, fill_task, &f);
  par_spec sp1 = {BH * nchunk, J->nthreads, BWD_WS(D, 5 * B + 2 * D + D * chunklen), 1, NULL, NULL};
  if (!st) st = par_run(&sp1, bwd_task, &f);
  par_spec sp2 = {BH * f.ntq, J->nthreads, 0, 4, NULL, NULL};
  if (!st) st = par_run(&sp2, bwd_reduce, &f);
  free(tab);
  return st;
}
