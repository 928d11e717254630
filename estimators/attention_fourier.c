/* Fourier attention engine: forward with per-row scaled products and the
 * exact backward by recomputation (see gfi/attention.h for the contract).
 *
 * One factor: u = a - b with a = R_d q_id, b = R_d k_jd and
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

/* Sine/cosine tables in structure-of-arrays form, D x Lp. */
static void fill_tables(const gfi_attn_plan *p, const double *X, const double *Rd, double *r,
                        double *s, double *c) {
  const size_t L = p->L, D = p->D, Lp = p->Lp;
  for (size_t d = 0; d < D; d++) {
    for (size_t i = 0; i < L; i++) {
      double a = Rd[d] * X[i * D + d];
      r[d * Lp + i] = a;
      s[d * Lp + i] = sin(a);
      c[d * Lp + i] = cos(a);
    }
    for (size_t i = L; i < Lp; i++) r[d * Lp + i] = s[d * Lp + i] = c[d * Lp + i] = 0;
  }
}

/* ---------------------------------------------------------------- forward */

typedef struct {
  const gfi_attn_plan *p;
  const double *Q, *K, *V, *Rd, *H, *stat, *dH, *P, *invS;
  const double *rq, *sq, *cq, *rk, *sk, *ck;
  double *Hout, *statout, *ratio, *dQ, *dK, *dV, *dRrow;
} fctx;

/* Forward, query row i; ws: 3 D (query row) + 3 FWD_BLOCK (block) + Dv (numerator). */
static int fwd_row(void *vc, size_t i, void *vws) {
  const fctx *f = vc;
  const gfi_attn_plan *p = f->p;
  const size_t D = p->D, Dv = p->Dv, Lp = p->Lp;
  const int l = p->l;
  const double *Q = f->Q, *V = f->V, *Rd = f->Rd, *rk = f->rk, *sk = f->sk, *ck = f->ck;
  double *ws = vws;
  double *qr = ws, *qs = ws + D, *qc = ws + 2 * D;
  double *m = ws + 3 * D, *e = m + FWD_BLOCK, *w = e + FWD_BLOCK, *N = w + FWD_BLOCK;
  for (size_t d = 0; d < D; d++) {
    double a = Rd[d] * Q[i * D + d];
    qr[d] = a;
    qs[d] = sin(a);
    qc[d] = cos(a);
  }
  for (size_t c = 0; c < Dv; c++) N[c] = 0;
  double E = -INFINITY, S = 0, A = 0;
  const size_t jend = attn_key_end(p, i);
  for (size_t j0 = 0; j0 < jend; j0 += FWD_BLOCK) {
    const size_t nb = jend - j0 < FWD_BLOCK ? jend - j0 : FWD_BLOCK;
    for (size_t b = 0; b < nb; b++) {
      m[b] = 1.0;
      e[b] = 0.0;
    }
    for (size_t d = 0; d < D; d++) {
      const double *restrict kr = rk + d * Lp + j0, *restrict ks = sk + d * Lp + j0,
                             *restrict kc = ck + d * Lp + j0;
      const double a = qr[d], sa = qs[d], ca = qc[d];
#pragma omp simd
      for (size_t b = 0; b < nb; b++) m[b] *= sinc_of(a - kr[b], sa * kc[b] - ca * ks[b]);
      if ((d + 1) % CHUNK == 0 || d + 1 == D) {
#pragma omp simd
        for (size_t b = 0; b < nb; b++) {
          e[b] += expo(m[b]);
          m[b] = mant(m[b]);
        }
      }
    }
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
    for (size_t b = 0; b < nb; b++) {
      const double wb = w[b], *restrict v = V + (j0 + b) * Dv;
#pragma omp simd
      for (size_t c = 0; c < Dv; c++) N[c] += wb * v[c];
    }
  }
  attn_finish_row(p, i, E, S, A, N, f->Hout, f->statout, f->ratio);
  return GFI_OK;
}

int attn_fourier_forward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                         const double *Rd, double *H, double *stat, double *ratio) {
  const size_t L = p->L, D = p->D, Dv = p->Dv, Lp = p->Lp;
  double *tab = gfi_malloc4(3, D, Lp, sizeof *tab);
  if (!tab) return GFI_ENOMEM;
  double *rk = tab, *sk = tab + D * Lp, *ck = tab + 2 * D * Lp;
  fill_tables(p, K, Rd, rk, sk, ck);
  fctx f = {.p = p, .Q = Q, .V = V, .Rd = Rd, .rk = rk, .sk = sk, .ck = ck, .Hout = H,
            .statout = stat, .ratio = ratio};
  par_spec sp = {L, p->nthreads, (3 * D + 3 * FWD_BLOCK + Dv) * sizeof(double), 4, NULL, NULL};
  int st = par_run(&sp, fwd_row, &f);
  free(tab);
  return st;
}

/* --------------------------------------------------------------- backward */

/* Per-block gradient workspace, each D x BWD_BLOCK: s, s', u (= R_d (q - k)),
 * and prefix products that are overwritten by the gradients G; pe holds the
 * prefix exponent per chunk. */
typedef struct {
  double *s, *ds, *u, *G, *pe;
  double run[BWD_BLOCK], rexp[BWD_BLOCK];
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
  /* the full product, exactly as the forward forms it */
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    double e = rexp[b] + expo(run[b]), m = mant(run[b]);
    wt[b] = ipow(m * pow2(e - Eb[b]), l); /* m = 0: 0 */
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
    if ((D - 1 - dd) % CHUNK == 0) {
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        rexp[b] += expo(run[b]);
        run[b] = mant(run[b]);
      }
    }
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
      double y = (G[b] * run[b]) * pow2(pe[b] + rexp[b] - Eb[b]);
      double sy = s[b] * y;
      double gr = l * ipow(sy, l - 1) * (ds[b] * y);
      /* s_d = 0: (s y)^(l-1) = 0 exactly for l >= 2; y is finite (pow2 is
       * clamped), so gr is already 0 there and exact for l = 1 */
      G[b] = gr;
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

/* Backward pass 1, query row i: dQ and the row's dR partials; ws: gblock,
 * then 3 B + 2 D doubles. */
static int bwd_row(void *vc, size_t i, void *vws) {
  const fctx *f = vc;
  const gfi_attn_plan *p = f->p;
  const size_t D = p->D, Dv = p->Dv, Lp = p->Lp, B = BWD_BLOCK;
  const int l = p->l, per_axis = p->spec.per_axis_R;
  const double *V = f->V, *Rd = f->Rd, *stat = f->stat, *dH = f->dH, *P = f->P, *invS = f->invS;
  const double *rq = f->rq, *sq = f->sq, *cq = f->cq, *rk = f->rk, *sk = f->sk, *ck = f->ck;
  double *dQ = f->dQ, *dRrow = f->dRrow;
  gblock g;
  gblock_carve(&g, D, vws);
  double *ws = (double *)vws + gblock_doubles(D);
  double *coef = ws, *wt = ws + B, *Eb = ws + 2 * B, *dq = ws + 3 * B, *dr = dq + D;
  if (invS[i] == 0) { /* flagged row */
    for (size_t d = 0; d < D; d++) dQ[i * D + d] = NAN;
    for (size_t k = 0; k < p->nparam; k++) dRrow[i * p->nparam + k] = 0;
    return GFI_OK;
  }
  for (size_t d = 0; d < D; d++) dq[d] = dr[d] = 0;
  for (size_t b = 0; b < B; b++) Eb[b] = stat[2 * i];
  const double *dh = dH + i * Dv;
  const size_t jend = attn_key_end(p, i);
  for (size_t j0 = 0; j0 < jend; j0 += B) {
    const size_t nb = jend - j0 < B ? jend - j0 : B;
    for (size_t b = 0; b < nb; b++)
      coef[b] = (attn_dot(dh, V + (j0 + b) * Dv, Dv) - P[i]) * invS[i];
    for (size_t d = 0; d < D; d++) {
      const double *restrict kr = rk + d * Lp + j0, *restrict ks = sk + d * Lp + j0,
                             *restrict kc = ck + d * Lp + j0;
      const double a = rq[d * Lp + i], sa = sq[d * Lp + i], ca = cq[d * Lp + i];
      double *restrict s = g.s + d * B, *restrict ds = g.ds + d * B, *restrict u = g.u + d * B;
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        double uu = a - kr[b];
        sinc_both(uu, sa * kc[b] - ca * ks[b], ca * kc[b] + sa * ks[b], &s[b], &ds[b]);
        u[b] = uu;
      }
    }
    grad_block(D, l, nb, Eb, &g, wt);
    for (size_t d = 0; d < D; d++) {
      const double *restrict G = g.G + d * B, *restrict u = g.u + d * B;
      double acc = 0, accr = 0;
#pragma omp simd reduction(+ : acc, accr)
      for (size_t b = 0; b < nb; b++) {
        double t = coef[b] * G[b];
        acc += t;
        accr += t * u[b];
      }
      dq[d] += acc;
      dr[d] += accr;
    }
  }
  double rs = 0;
  for (size_t d = 0; d < D; d++) {
    dQ[i * D + d] = Rd[d] * dq[d];
    double t = dr[d] / Rd[d]; /* du_d/dR_d = q_id - k_jd = u_d / R_d */
    if (per_axis)
      dRrow[i * D + d] = t;
    else
      rs += t;
  }
  if (!per_axis) dRrow[i] = rs;
  return GFI_OK;
}

/* Backward pass 2, key j: dK and dV over query lanes i in [begin, L); ws:
 * gblock, then 4 B + D doubles. */
static int bwd_key(void *vc, size_t j, void *vws) {
  const fctx *f = vc;
  const gfi_attn_plan *p = f->p;
  const size_t L = p->L, D = p->D, Dv = p->Dv, Lp = p->Lp, B = BWD_BLOCK;
  const int l = p->l;
  const double *V = f->V, *Rd = f->Rd, *stat = f->stat, *dH = f->dH, *P = f->P, *invS = f->invS;
  const double *rq = f->rq, *sq = f->sq, *cq = f->cq, *rk = f->rk, *sk = f->sk, *ck = f->ck;
  gblock g;
  gblock_carve(&g, D, vws);
  double *ws = (double *)vws + gblock_doubles(D);
  double *coef = ws, *wt = ws + B, *Eb = ws + 2 * B, *dk = ws + 4 * B;
  double *dv = f->dV + j * Dv;
  for (size_t d = 0; d < D; d++) dk[d] = 0;
  for (size_t c = 0; c < Dv; c++) dv[c] = 0;
  const double *vj = V + j * Dv;
  for (size_t i0 = attn_query_begin(p, j); i0 < L; i0 += B) {
    const size_t nb = L - i0 < B ? L - i0 : B;
    for (size_t b = 0; b < nb; b++) {
      size_t i = i0 + b;
      int ok = invS[i] != 0;
      /* a flagged lane gets scale 1 and zero coefficients */
      Eb[b] = ok ? stat[2 * i] : 0.0;
      coef[b] = ok ? (attn_dot(dH + i * Dv, vj, Dv) - P[i]) * invS[i] : 0.0;
    }
    for (size_t d = 0; d < D; d++) {
      const double *restrict qr = rq + d * Lp + i0, *restrict qs = sq + d * Lp + i0,
                             *restrict qc = cq + d * Lp + i0;
      const double bk = rk[d * Lp + j], sb = sk[d * Lp + j], cb = ck[d * Lp + j];
      double *restrict s = g.s + d * B, *restrict ds = g.ds + d * B;
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        sinc_both(qr[b] - bk, qs[b] * cb - qc[b] * sb, qc[b] * cb + qs[b] * sb, &s[b], &ds[b]);
      }
    }
    grad_block(D, l, nb, Eb, &g, wt);
    for (size_t d = 0; d < D; d++) {
      const double *restrict G = g.G + d * B;
      double acc = 0;
#pragma omp simd reduction(+ : acc)
      for (size_t b = 0; b < nb; b++) acc += coef[b] * G[b];
      dk[d] -= acc;
    }
    for (size_t b = 0; b < nb; b++) {
      size_t i = i0 + b;
      const double a = wt[b] * invS[i], *restrict dh = dH + i * Dv;
      if (a == 0) continue;
#pragma omp simd
      for (size_t c = 0; c < Dv; c++) dv[c] += a * dh[c];
    }
  }
  for (size_t d = 0; d < D; d++) f->dK[j * D + d] = Rd[d] * dk[d];
  return GFI_OK;
}

int attn_fourier_backward(const gfi_attn_plan *p, const double *Q, const double *K,
                          const double *V, const double *Rd, const double *H, const double *stat,
                          const double *dH, double *dQ, double *dK, double *dV, double *dRrow) {
  const size_t L = p->L, D = p->D, Dv = p->Dv, Lp = p->Lp, B = BWD_BLOCK;
  double *tab = gfi_malloc2((6 * D * Lp + 2 * L), sizeof *tab);
  if (!tab) return GFI_ENOMEM;
  double *rq = tab, *sq = rq + D * Lp, *cq = sq + D * Lp;
  double *rk = cq + D * Lp, *sk = rk + D * Lp, *ck = sk + D * Lp;
  double *P = ck + D * Lp, *invS = P + L;
  fill_tables(p, Q, Rd, rq, sq, cq);
  fill_tables(p, K, Rd, rk, sk, ck);
  for (size_t i = 0; i < L; i++) {
    double S = stat[2 * i + 1];
    int ok = isfinite(S);
    P[i] = ok ? attn_dot(dH + i * Dv, H + i * Dv, Dv) : 0.0;
    invS[i] = ok ? 1.0 / S : 0.0;
  }
  fctx f = {.p = p, .V = V, .Rd = Rd, .stat = stat, .dH = dH, .P = P, .invS = invS, .rq = rq,
            .sq = sq, .cq = cq, .rk = rk, .sk = sk, .ck = ck, .dQ = dQ, .dK = dK, .dV = dV,
            .dRrow = dRrow};
  /* Pass 1, over query rows: dQ and the per-row dR partials. */
  par_spec sp1 = {L, p->nthreads, BWD_WS(D, 3 * B + 2 * D), 4, NULL, NULL};
  int st = par_run(&sp1, bwd_row, &f);
  /* Pass 2, over keys: dK and dV. */
  par_spec sp2 = {L, p->nthreads, BWD_WS(D, 4 * B + D), 4, NULL, NULL};
  if (!st) st = par_run(&sp2, bwd_key, &f);
  free(tab);
  return st;
}
