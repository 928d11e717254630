/* Gaussian-kernel attention engine (FourierFormer eq. 6; softmax attention for
 * keys of equal norm, eq. 7-8): w_ij = exp(-|q_i - k_j|^2 / (2 sigma^2)).
 *
 * Each row is kept in the scale exp(-E_i), E_i = max_j log w_ij, updated
 * online over key blocks (a max-shifted softmax), so no weight overflows and
 * the largest scaled weight is 1. The squared distance is summed axis by axis
 * (no |q|^2 + |k|^2 - 2 q.k cancellation). The backward recomputes the weights
 * from the saved E_i and S~_i:
 *   dw~/dq_i = -w~ (q_i - k_j) / sigma^2,  dw~/dk_j = -dw~/dq_i,
 *   dw~/dsigma = w~ |q_i - k_j|^2 / sigma^3. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* as in attention_fourier.c */
#endif
#include <math.h>
#include <stdlib.h>
#include "attention_internal.h"
#include "par.h"
#include "alloc.h"

#define FWD_BLOCK 64
#define BWD_BLOCK 32

/* Transposed copy, D x Lp (padding 0). */
static void transpose(const gfi_attn_plan *p, const double *X, double *T) {
  const size_t L = p->L, D = p->D, Lp = p->Lp;
  for (size_t d = 0; d < D; d++) {
    for (size_t i = 0; i < L; i++) T[d * Lp + i] = X[i * D + d];
    for (size_t i = L; i < Lp; i++) T[d * Lp + i] = 0;
  }
}

/* d2[b] = |x - Y_b|^2 for lanes b of the transposed table Y (offset y0). */
static void sqdist(size_t D, size_t Lp, const double *x, const double *Y, size_t y0, size_t nb,
                   double *restrict d2) {
  for (size_t b = 0; b < nb; b++) d2[b] = 0;
  for (size_t d = 0; d < D; d++) {
    const double *restrict y = Y + d * Lp + y0;
    const double xd = x[d];
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
      double t = xd - y[b];
      d2[b] += t * t;
    }
  }
}

typedef struct {
  const gfi_attn_plan *p;
  const double *Q, *K, *V, *kT, *qT, *H, *stat, *dH, *P, *invS;
  double c, is2, is3;
  double *Hout, *statout, *ratio, *dQ, *dK, *dV, *dsrow;
} gctx;

/* Forward, query row i; ws: 2 FWD_BLOCK + Dv doubles. */
static int fwd_row(void *vc, size_t i, void *vws) {
  const gctx *g = vc;
  const gfi_attn_plan *p = g->p;
  const size_t D = p->D, Dv = p->Dv, Lp = p->Lp;
  const double c = g->c, *Q = g->Q, *V = g->V, *kT = g->kT;
  double *ws = vws;
  double *lw = ws, *w = ws + FWD_BLOCK, *N = ws + 2 * FWD_BLOCK;
  for (size_t cc = 0; cc < Dv; cc++) N[cc] = 0;
  double E = -INFINITY, S = 0;
  const size_t jend = attn_key_end(p, i);
  for (size_t j0 = 0; j0 < jend; j0 += FWD_BLOCK) {
    const size_t nb = jend - j0 < FWD_BLOCK ? jend - j0 : FWD_BLOCK;
    sqdist(D, Lp, Q + i * D, kT, j0, nb, lw);
    double bmax = -INFINITY;
    for (size_t b = 0; b < nb; b++) {
      lw[b] *= -c;
      if (lw[b] > bmax) bmax = lw[b];
    }
    if (bmax > E) {
      double sc = exp(E - bmax); /* 0 on the first block */
      S *= sc;
      for (size_t cc = 0; cc < Dv; cc++) N[cc] *= sc;
      E = bmax;
    }
    double bs = 0;
    for (size_t b = 0; b < nb; b++) {
      w[b] = exp(lw[b] - E);
      bs += w[b];
    }
    S += bs;
    for (size_t b = 0; b < nb; b++) {
      const double wb = w[b], *restrict v = V + (j0 + b) * Dv;
#pragma omp simd
      for (size_t cc = 0; cc < Dv; cc++) N[cc] += wb * v[cc];
    }
  }
  attn_finish_row(p, i, E, S, S, N, g->Hout, g->statout, g->ratio);
  return GFI_OK;
}

int attn_gauss_forward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                       double sigma, double *H, double *stat, double *ratio) {
  const size_t L = p->L, D = p->D, Dv = p->Dv, Lp = p->Lp;
  double *kT = gfi_malloc3(D, Lp, sizeof *kT);
  if (!kT) return GFI_ENOMEM;
  transpose(p, K, kT);
  gctx g = {.p = p, .Q = Q, .V = V, .kT = kT, .c = 0.5 / (sigma * sigma),
            .Hout = H, .statout = stat, .ratio = ratio};
  par_spec sp = {L, p->nthreads, (2 * FWD_BLOCK + Dv) * sizeof(double), 4, NULL, NULL};
  int st = par_run(&sp, fwd_row, &g);
  free(kT);
  return st;
}

/* Backward pass 1, query row i: dQ and the row's dsigma partial; ws: 2 B + D doubles. */
static int bwd_row(void *vc, size_t i, void *vws) {
  const gctx *g = vc;
  const gfi_attn_plan *p = g->p;
  const size_t D = p->D, Dv = p->Dv, Lp = p->Lp, B = BWD_BLOCK;
  const double c = g->c, *Q = g->Q, *V = g->V, *kT = g->kT, *stat = g->stat, *dH = g->dH;
  const double *P = g->P, *invS = g->invS;
  double *dQ = g->dQ, *dsrow = g->dsrow;
  double *ws = vws;
  double *t = ws, *d2 = ws + B, *dq = ws + 2 * B;
  if (invS[i] == 0) {
    for (size_t d = 0; d < D; d++) dQ[i * D + d] = NAN;
    dsrow[i] = 0;
    return GFI_OK;
  }
  for (size_t d = 0; d < D; d++) dq[d] = 0;
  double ds = 0;
  const double *q = Q + i * D, *dh = dH + i * Dv, E = stat[2 * i];
  const size_t jend = attn_key_end(p, i);
  for (size_t j0 = 0; j0 < jend; j0 += B) {
    const size_t nb = jend - j0 < B ? jend - j0 : B;
    sqdist(D, Lp, q, kT, j0, nb, d2);
    for (size_t b = 0; b < nb; b++) {
      double w = exp(-c * d2[b] - E);
      t[b] = (attn_dot(dh, V + (j0 + b) * Dv, Dv) - P[i]) * invS[i] * w;
      ds += t[b] * d2[b];
    }
    for (size_t d = 0; d < D; d++) {
      const double *restrict k = kT + d * Lp + j0, qd = q[d];
      double acc = 0;
#pragma omp simd reduction(+ : acc)
      for (size_t b = 0; b < nb; b++) acc += t[b] * (qd - k[b]);
      dq[d] -= acc;
    }
  }
  for (size_t d = 0; d < D; d++) dQ[i * D + d] = dq[d] * g->is2;
  dsrow[i] = ds * g->is3;
  return GFI_OK;
}

/* Backward pass 2, key j: dK and dV; ws: 3 B + D doubles. */
static int bwd_key(void *vc, size_t j, void *vws) {
  const gctx *g = vc;
  const gfi_attn_plan *p = g->p;
  const size_t L = p->L, D = p->D, Dv = p->Dv, Lp = p->Lp, B = BWD_BLOCK;
  const double c = g->c, *K = g->K, *V = g->V, *qT = g->qT, *stat = g->stat, *dH = g->dH;
  const double *P = g->P, *invS = g->invS;
  double *ws = vws;
  double *t = ws, *d2 = ws + B, *a = ws + 2 * B, *dk = ws + 3 * B;
  const double *k = K + j * D, *vj = V + j * Dv;
  double *dv = g->dV + j * Dv;
  for (size_t d = 0; d < D; d++) dk[d] = 0;
  for (size_t cc = 0; cc < Dv; cc++) dv[cc] = 0;
  for (size_t i0 = attn_query_begin(p, j); i0 < L; i0 += B) {
    const size_t nb = L - i0 < B ? L - i0 : B;
    sqdist(D, Lp, k, qT, i0, nb, d2);
    for (size_t b = 0; b < nb; b++) {
      size_t i = i0 + b;
      double w = invS[i] != 0 ? exp(-c * d2[b] - stat[2 * i]) : 0.0;
      a[b] = w * invS[i];
      t[b] = invS[i] != 0 ? (attn_dot(dH + i * Dv, vj, Dv) - P[i]) * invS[i] * w : 0.0;
    }
    for (size_t d = 0; d < D; d++) {
      const double *restrict q = qT + d * Lp + i0, kd = k[d];
      double acc = 0;
#pragma omp simd reduction(+ : acc)
      for (size_t b = 0; b < nb; b++) acc += t[b] * (q[b] - kd);
      dk[d] += acc;
    }
    for (size_t b = 0; b < nb; b++) {
      const double ab = a[b], *restrict dh = dH + (i0 + b) * Dv;
      if (ab == 0) continue;
#pragma omp simd
      for (size_t cc = 0; cc < Dv; cc++) dv[cc] += ab * dh[cc];
    }
  }
  for (size_t d = 0; d < D; d++) g->dK[j * D + d] = dk[d] * g->is2;
  return GFI_OK;
}

int attn_gauss_backward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                        double sigma, const double *H, const double *stat, const double *dH,
                        double *dQ, double *dK, double *dV, double *dsrow) {
  const size_t L = p->L, D = p->D, Dv = p->Dv, Lp = p->Lp, B = BWD_BLOCK;
  const double is2 = 1.0 / (sigma * sigma);
  double *tab = gfi_malloc2((2 * D * Lp + 2 * L), sizeof *tab);
  if (!tab) return GFI_ENOMEM;
  double *qT = tab, *kT = tab + D * Lp, *P = kT + D * Lp, *invS = P + L;
  transpose(p, Q, qT);
  transpose(p, K, kT);
  for (size_t i = 0; i < L; i++) {
    double S = stat[2 * i + 1];
    int ok = isfinite(S);
    P[i] = ok ? attn_dot(dH + i * Dv, H + i * Dv, Dv) : 0.0;
    invS[i] = ok ? 1.0 / S : 0.0;
  }
  gctx g = {.p = p, .Q = Q, .K = K, .V = V, .kT = kT, .qT = qT, .stat = stat, .dH = dH, .P = P,
            .invS = invS, .c = 0.5 / (sigma * sigma), .is2 = is2, .is3 = is2 / sigma, .dQ = dQ,
            .dK = dK, .dV = dV, .dsrow = dsrow};
  /* Pass 1, over query rows: dQ and the per-row dsigma partials. */
  par_spec sp1 = {L, p->nthreads, (2 * B + D) * sizeof(double), 4, NULL, NULL};
  int st = par_run(&sp1, bwd_row, &g);
  /* Pass 2, over keys: dK and dV. */
  par_spec sp2 = {L, p->nthreads, (3 * B + D) * sizeof(double), 4, NULL, NULL};
  if (!st) st = par_run(&sp2, bwd_key, &g);
  free(tab);
  return st;
}
