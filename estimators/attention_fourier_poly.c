/* Fourier attention with a polynomial phi(z) = sum_j a_j z^j (j = 1..deg,
 * coefficients of either sign): forward and exact backward, one pair at a
 * time in float64 (gfi/attention.h for the contract; the float32 API runs
 * it on its float inputs and rounds the outputs).
 *
 * The weight of pair (i, j) is w_ij = prod_d phi(s_d), s_d = sinc(u_d),
 * u_d = R_d (q_id - k_jd) (the difference first: for close q and k far from
 * 0 it is exact, and the product by R_d adds one rounding). sin u and cos u
 * come from libm once per factor, s and s' = (cos u - s) / u from them, or
 * from their Taylor series for |u| < GFI_SINC_CUT (sinc_series.h).
 *
 * Scaled products. phi may be 0 or negative and its values need not lie in
 * [-1, 1], so the running product over axes is renormalised after every
 * factor (frexp: a mantissa in [1/2, 1) and an integer exponent, exact):
 * w_ij = m_ij 2^e_ij for any D. Row i's common factor is 2^E_i, E_i the
 * largest e_ij over its nonzero weights (0 when every weight is 0); the
 * saved statistics are E_i and T~_i = sum_j w_ij 2^-E_i + eps 2^-E_i, as for
 * the powers with l = 1 (attn_fjob_row_stats: the flags and eps are the same
 * rules). A weight more than 2^-1074 below the row's largest becomes 0.
 *
 * Gradient. dw_ij/du_d = phi'(s_d) s'_d prod_{e != d} phi(s_e): the product
 * of the other factors from prefix and suffix products in the same
 * mantissa/exponent form, never a quotient by phi(s_d), which may be 0. With
 * c_ij = (z_ij dH_i . v_j - P_i) / T~_i (P_i = dH_i . H_i, z_ij the dropout
 * factor): dq_id = R_d sum_j c_ij dw~_ij/du_d, dk_jd = -R_d sum_i (same),
 * dR_d = sum_ij c_ij dw~_ij/du_d (q_id - k_jd), dv_j = sum_i w~_ij z_ij dH_i
 * / T~_i. A term whose scale passes 2^1023 is an infinity, which the API
 * reports as GFI_ERANGE.
 *
 * Threads: the forward over heads x tiles of query rows; the backward in two
 * passes over the pairs, one over heads x query tiles (dQ and the row
 * partials of dR) and one over heads x key tiles (dK and dV), so that every
 * output is a sum in a fixed order (keys, resp. queries, ascending): the same
 * bits for any thread count, no atomics, no partial buffers. It costs about
 * twice the forward per pass; no O(Lq Lk) memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "attention_internal.h"
#include "par.h"
#include "sinc_series.h"
#include "alloc.h"

#define TILE 16 /* query (or key) rows per task */

ATTN_DEFINE_MASK_LANES(mask_lanes, double)
ATTN_DEFINE_DROP_LANES(drop_lanes, double)

/* sinc u and sinc' u. */
static inline void sinc_pair(double u, double *s, double *ds) {
  if (fabs(u) < GFI_SINC_CUT) {
    *s = gfi_sinc_series(u);
    *ds = gfi_sinc_dseries(u);
    return;
  }
  const double sn = sin(u), cs = cos(u), sv = sn / u;
  *s = sv;
  *ds = (cs - sv) / u;
}

/* phi(s) and phi'(s) by Horner: phi = s p(s), p = sum_j a_j s^(j-1). */
static inline void phi_pair(const gfi_kernel *k, double s, double *f, double *df) {
  double p = 0, dp = 0;
  for (int j = k->l; j >= 1; j--) {
    dp = dp * s + p;
    p = p * s + k->coef[j];
  }
  *f = p * s;
  *df = p + s * dp;
}

/* Axis values of head bh's row i of an input of strides xs. */
static inline const double *in_row(const attn_fjob *J, const double *X, const size_t *xs, size_t bh, size_t i) {
  return X + attn_fjob_xoff(J, xs, bh) + i * xs[2];
}

/* w = m 2^e of the pair (q, k) (m = 0 and e = 0 for a zero weight). */
static inline void pair_weight(const gfi_kernel *kn, size_t D, const double *R, const double *q, const double *k,
                               double *m, int *e) {
  double mm = 1;
  int ee = 0;
  for (size_t d = 0; d < D; d++) {
    double s, ds, f, df;
    sinc_pair(R[d] * (q[d] - k[d]), &s, &ds);
    phi_pair(kn, s, &f, &df);
    int x;
    mm = frexp(mm * f, &x);
    ee += x;
    if (mm == 0) break;
  }
  *m = mm;
  *e = mm == 0 ? 0 : ee;
}

/* The scaled weight w~ = w 2^-E and G[d] = dw~/du_d of the pair. ws: 4 D
 * doubles and D ints (factors, derivatives, prefix mantissas; prefix
 * exponents). */
static double pair_grad(const gfi_kernel *kn, size_t D, const double *R, const double *q, const double *k, int E,
                        double *G, double *ws, int *pe) {
  double *f = ws, *g = ws + D, *pm = ws + 2 * D;
  double run = 1;
  int rexp = 0;
  for (size_t d = 0; d < D; d++) {
    double s, ds, df;
    sinc_pair(R[d] * (q[d] - k[d]), &s, &ds);
    phi_pair(kn, s, &f[d], &df);
    g[d] = df * ds;
    pm[d] = run; /* prod_{e<d} f_e = pm 2^pe */
    pe[d] = rexp;
    int x;
    run = frexp(run * f[d], &x);
    rexp += x;
  }
  const double w = run == 0 ? 0.0 : ldexp(run, rexp - E);
  double sm = 1; /* prod_{e>d} f_e = sm 2^se */
  int se = 0;
  for (size_t dd = D; dd-- > 0;) {
    G[dd] = ldexp((pm[dd] * sm) * g[dd], pe[dd] + se - E);
    int x;
    sm = frexp(sm * f[dd], &x);
    se += x;
  }
  return w;
}

typedef struct pctx {
  const attn_fjob *J;
  size_t ntq, ntk;
  double *Hout, *statout, *ratio;          /* forward */
  const double *H, *dH, *stat, *P, *invT;  /* backward */
  double *dQ, *dK, *dV, *dRrow;
} pctx;

/* Forward of a tile of rows. ws: Lk mantissas, Lk dropout factors, Dv
 * doubles (numerator), Lk ints (exponents), Lk bytes (visible). */
static int fwd_task(void *vc, size_t t, void *vws) {
  const pctx *c = vc;
  const attn_fjob *J = c->J;
  const size_t D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk;
  const size_t bh = t / c->ntq, i0 = (t % c->ntq) * TILE, i1 = i0 + TILE < Lq ? i0 + TILE : Lq;
  const double *R = J->Rd + (bh % J->H) * D;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  double *wm = vws, *z = wm + Lk, *N = z + Lk, *mk = N + Dv;
  int *we = (int *)(mk + Lk);
  for (size_t i = i0; i < i1; i++) {
    const double *q = in_row(J, J->Q, J->qs, bh, i);
    const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
    const size_t jend = attn_fjob_key_end(J, i);
    size_t nvis = jend ? mask_lanes(kp, mr, 0, jend, mk) : 0;
    int E = INT32_MIN;
    for (size_t j = 0; j < jend; j++) {
      if (mk[j] == 0) continue;
      pair_weight(J->kern, D, R, q, in_row(J, J->K, J->ks, bh, j), &wm[j], &we[j]);
      if (wm[j] != 0 && we[j] > E) E = we[j];
    }
    if (E == INT32_MIN) E = 0; /* no nonzero weight */
    if (J->drop_thr && jend)
      drop_lanes(J, bh, i, 0, jend, z);
    double S = 0, A = 0;
    for (size_t a = 0; a < Dv; a++) N[a] = 0;
    for (size_t j = 0; j < jend; j++) {
      if (mk[j] == 0 || wm[j] == 0) continue;
      const double w = ldexp(wm[j], we[j] - E);
      S += w;
      A += fabs(w);
      const double wz = J->drop_thr ? w * z[j] : w;
      if (wz == 0) continue;
      const double *v = in_row(J, J->V, J->vs, bh, j);
      for (size_t a = 0; a < Dv; a++) N[a] += wz * v[a];
    }
    const size_t row = bh * Lq + i;
    double *h = c->Hout + attn_fjob_qrow(J, row) * Dv, *st = c->statout + 2 * row, inv = 0;
    int k = attn_fjob_row_stats(J, nvis, nvis ? (double)E : -INFINITY, S, A, st, c->ratio + row, &inv);
    for (size_t a = 0; a < Dv; a++) h[a] = k == 2 ? N[a] * inv : k == 0 && J->empty_zero ? 0.0 : NAN;
  }
  return GFI_OK;
}

int attn_fjob_forward_poly(const attn_fjob *J, double *Hout, double *stat, double *ratio) {
  const size_t BH = J->B * J->H, Lk = J->Lk, Dv = J->Dv;
  pctx c = {.J = J, .ntq = (J->Lq + TILE - 1) / TILE, .Hout = Hout, .statout = stat, .ratio = ratio};
  size_t ws;
  if (gfi_size_prod(&ws, 3 * Lk + Dv, sizeof(double), 1, 1) || ws > SIZE_MAX / 2) return GFI_ENOMEM;
  ws += Lk * sizeof(int);
  par_spec sp = {BH * c.ntq, J->nthreads, ws, 1, NULL, NULL};
  return par_run(&sp, fwd_task, &c);
}

/* dL/dw~ of pair (i, j) of head bh: (z dH_i . v_j - P_i) / T~_i. */
static inline double pair_coef(const pctx *c, size_t bh, size_t i, size_t j, double *z) {
  const attn_fjob *J = c->J;
  const size_t Dv = J->Dv, row = bh * J->Lq + i;
  const double *dh = c->dH + attn_fjob_qrow(J, row) * Dv, *v = in_row(J, J->V, J->vs, bh, j);
  *z = 1;
  if (J->drop_thr) drop_lanes(J, bh, i, j, 1, z);
  return (*z * attn_dot(dh, v, Dv) - c->P[row]) * c->invT[row];
}

/* dQ and the dR partials of a tile of query rows. ws: 5 D doubles, D ints. */
static int bwdq_task(void *vc, size_t t, void *vws) {
  const pctx *c = vc;
  const attn_fjob *J = c->J;
  const size_t D = J->D, Lq = J->Lq, np = J->per_axis ? D : 1;
  const size_t bh = t / c->ntq, i0 = (t % c->ntq) * TILE, i1 = i0 + TILE < Lq ? i0 + TILE : Lq;
  const double *R = J->Rd + (bh % J->H) * D;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  double *G = vws, *pws = G + D, *dr = pws + 3 * D;
  int *pe = (int *)(dr + D);
  for (size_t i = i0; i < i1; i++) {
    const size_t row = bh * Lq + i;
    double *dq = c->dQ + attn_fjob_qrow(J, row) * D, *drow = c->dRrow + row * np;
    for (size_t k = 0; k < np; k++) drow[k] = 0;
    if (isnan(c->stat[2 * row + 1])) { /* flagged row */
      for (size_t d = 0; d < D; d++) dq[d] = NAN;
      continue;
    }
    for (size_t d = 0; d < D; d++) dq[d] = dr[d] = 0;
    if (c->invT[row] != 0) {
      const double *q = in_row(J, J->Q, J->qs, bh, i);
      const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
      const int E = (int)c->stat[2 * row];
      const size_t jend = attn_fjob_key_end(J, i);
      for (size_t j = 0; j < jend; j++) {
        if ((kp && kp[j]) || (mr && mr[j])) continue;
        const double *k = in_row(J, J->K, J->ks, bh, j);
        double z, cf = pair_coef(c, bh, i, j, &z);
        if (cf == 0) continue;
        pair_grad(J->kern, D, R, q, k, E, G, pws, pe);
        for (size_t d = 0; d < D; d++) {
          dq[d] += cf * G[d];
          dr[d] += cf * G[d] * (q[d] - k[d]);
        }
      }
    }
    double rsum = 0;
    for (size_t d = 0; d < D; d++) {
      dq[d] *= R[d];
      if (J->per_axis)
        drow[d] = dr[d];
      else
        rsum += dr[d];
    }
    if (!J->per_axis) drow[0] = rsum;
  }
  return GFI_OK;
}

/* dK and dV of a tile of keys. ws: 4 D doubles, D ints. */
static int bwdk_task(void *vc, size_t t, void *vws) {
  const pctx *c = vc;
  const attn_fjob *J = c->J;
  const size_t D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk, rs = attn_fjob_rs(J);
  const size_t bh = t / c->ntk, j0 = (t % c->ntk) * TILE, j1 = j0 + TILE < Lk ? j0 + TILE : Lk;
  const double *R = J->Rd + (bh % J->H) * D;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  double *G = vws, *pws = G + D;
  int *pe = (int *)(pws + 3 * D);
  for (size_t j = j0; j < j1; j++) {
    const size_t m = attn_fjob_hoff(J, bh, Lk) + j * rs;
    double *dk = c->dK + m * D, *dv = c->dV + m * Dv;
    for (size_t d = 0; d < D; d++) dk[d] = 0;
    for (size_t a = 0; a < Dv; a++) dv[a] = 0;
    if (kp && kp[j]) continue;
    const double *k = in_row(J, J->K, J->ks, bh, j);
    for (size_t i = attn_fjob_query_begin(J, j); i < Lq; i++) {
      const size_t row = bh * Lq + i;
      if (c->invT[row] == 0) continue; /* flagged, empty or underflowed row: no gradient */
      const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
      if (mr && mr[j]) continue;
      const double *q = in_row(J, J->Q, J->qs, bh, i);
      double z, cf = pair_coef(c, bh, i, j, &z);
      const double w = pair_grad(J->kern, D, R, q, k, (int)c->stat[2 * row], G, pws, pe);
      if (cf != 0)
        for (size_t d = 0; d < D; d++) dk[d] -= cf * G[d];
      const double a = w * z * c->invT[row];
      if (a == 0) continue;
      const double *dh = c->dH + attn_fjob_qrow(J, row) * Dv;
      for (size_t b = 0; b < Dv; b++) dv[b] += a * dh[b];
    }
    for (size_t d = 0; d < D; d++) dk[d] *= R[d];
  }
  return GFI_OK;
}

int attn_fjob_backward_poly(const attn_fjob *J, const double *H, const double *stat, const double *dH,
                            double *dQ, double *dK, double *dV, double *dRrow) {
  const size_t BH = J->B * J->H, Lq = J->Lq, Dv = J->Dv, D = J->D;
  double *P = gfi_malloc4(2, BH, Lq, sizeof *P);
  if (!P) return GFI_ENOMEM;
  double *invT = P + BH * Lq;
  for (size_t r = 0; r < BH * Lq; r++) {
    const double T = stat[2 * r + 1];
    const int ok = isfinite(T);
    double p = 0;
    if (ok) p = attn_dot(dH + attn_fjob_qrow(J, r) * Dv, H + attn_fjob_qrow(J, r) * Dv, Dv);
    P[r] = p;
    invT[r] = ok ? 1.0 / T : 0.0;
  }
  pctx c = {.J = J, .ntq = (Lq + TILE - 1) / TILE, .ntk = (J->Lk + TILE - 1) / TILE, .H = H, .dH = dH,
            .stat = stat, .P = P, .invT = invT, .dQ = dQ, .dK = dK, .dV = dV, .dRrow = dRrow};
  const size_t ws = 5 * D * sizeof(double) + D * sizeof(int);
  par_spec sq = {BH * c.ntq, J->nthreads, ws, 1, NULL, NULL};
  int st = par_run(&sq, bwdq_task, &c);
  par_spec sk = {BH * c.ntk, J->nthreads, ws, 1, NULL, NULL};
  if (!st) st = par_run(&sk, bwdk_task, &c);
  free(P);
  return st;
}
