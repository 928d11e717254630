/* Fourier attention with a polynomial phi (gfi/attention.h): forward values
 * and every gradient (dQ, dK, dV, dR per axis and summed) against a brute-
 * force sum in long double, the gradients also by central differences of
 * the engine's own forward; a polynomial equal to z^l against the power
 * engine; a polynomial with a negative coefficient (weights and
 * denominators of either sign: flags as documented); the batched interface
 * with heads, key padding, a general mask, causal offset, eps, dropout, the
 * (L, B, H, W) layout and float32 storage; thread-count independence; and
 * the kernels attention refuses, by name. */
#include <stdint.h>
#include <string.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include <gfi/gfi.h>
#include "check.h"

typedef long double ld;

/* sinc and sinc' in long double: series below 1/2 (12 terms), else the
 * closed forms. */
static void bsinc(ld u, ld *s, ld *ds) {
  if (fabsl(u) < 0.5L) {
    ld u2 = u * u, t = 1, a = 0, b = 0, f = 1; /* t = u^(2n) / (2n+1)! */
    for (int n = 0; n < 14; n++) {
      if (n > 0) {
        f *= -(ld)1 / ((2 * n) * (2 * n + 1));
        t = f;
      }
      ld p = 1;
      for (int m = 0; m < n; m++) p *= u2;
      a += t * p;
      if (n > 0) b += t * 2 * n * p / u;
    }
    *s = a;
    *ds = u == 0 ? 0 : b;
    return;
  }
  *s = sinl(u) / u;
  *ds = (cosl(u) - *s) / u;
}
static void bphi(const double *a, int deg, ld s, ld *f, ld *df) {
  ld F = 0, dF = 0, p = 1;
  for (int j = 1; j <= deg; j++) {
    dF += j * (ld)a[j] * p; /* p = s^(j-1) */
    p *= s;
    F += (ld)a[j] * p;
  }
  *f = F;
  *df = dF;
}

/* One head, rows in (L, W) order. vis(i, j) from kp (Lk), mk (Lq x Lk)
 * and causal (offset Lk - Lq); z(i, j) the dropout factor. Writes H, S, A
 * (per row), and, with dH, dq, dk, dv and dR (D, per axis, added to). Rows
 * with flag[i] get no gradient (dq NaN). */
typedef struct {
  size_t Lq, Lk, D, Dv;
  const double *q, *k, *v, *R;
  const unsigned char *kp, *mk;
  int causal;
  double eps, p;
  uint64_t seed;
  size_t bh;
  const double *a;
  int deg;
} bcase;

static int bvis(const bcase *c, size_t i, size_t j) {
  if (c->causal && j > i + c->Lk - c->Lq) return 0;
  if (c->causal && i + c->Lk < c->Lq) return 0;
  if (c->kp && c->kp[j]) return 0;
  if (c->mk && c->mk[i * c->Lk + j]) return 0;
  return 1;
}
static ld bz(const bcase *c, size_t i, size_t j) {
  if (!(c->p > 0)) return 1;
  double t = ceil(c->p * 4294967296.0);
  uint32_t thr = t >= 4294967295.0 ? 0xffffffffu : (uint32_t)(t < 1 ? 1 : t);
  const uint32_t key[2] = {(uint32_t)c->seed, (uint32_t)(c->seed >> 32)};
  const uint32_t ctr[4] = {(uint32_t)(j / 4), (uint32_t)i, (uint32_t)c->bh, (uint32_t)((uint64_t)c->bh >> 32)};
  uint32_t out[4];
  gfi_philox4x32_10(ctr, key, out);
  return out[j % 4] >= thr ? 1 / (1 - (ld)c->p) : 0;
}
/* w and dw/du_d (d = 0..D-1) of a pair, the product of the other factors
 * formed directly. */
static ld bpair(const bcase *c, const double *q, const double *k, ld *g) {
  const size_t D = c->D;
  ld f[64], df[64], w = 1;
  for (size_t d = 0; d < D; d++) {
    ld s, ds, F, dF;
    bsinc((ld)c->R[d] * ((ld)q[d] - (ld)k[d]), &s, &ds);
    bphi(c->a, c->deg, s, &F, &dF);
    f[d] = F;
    df[d] = dF * ds;
    w *= F;
  }
  if (g)
    for (size_t d = 0; d < D; d++) {
      ld o = 1;
      for (size_t e = 0; e < D; e++)
        if (e != d) o *= f[e];
      g[d] = df[d] * o;
    }
  return w;
}
static void brute(const bcase *c, const unsigned char *flag, const double *dH, double *H, double *S, double *A,
                  double *dq, double *dk, double *dv, double *dR) {
  const size_t Lq = c->Lq, Lk = c->Lk, D = c->D, Dv = c->Dv;
  ld g[64];
  for (size_t i = 0; i < Lq; i++) {
    ld s = 0, aa = 0, n[64] = {0};
    for (size_t j = 0; j < Lk; j++) {
      if (!bvis(c, i, j)) continue;
      ld w = bpair(c, c->q + i * D, c->k + j * D, NULL);
      s += w;
      aa += fabsl(w);
      for (size_t b = 0; b < Dv; b++) n[b] += w * bz(c, i, j) * c->v[j * Dv + b];
    }
    S[i] = (double)s;
    A[i] = (double)aa;
    for (size_t b = 0; b < Dv; b++) H[i * Dv + b] = (double)(n[b] / (s + c->eps));
  }
  if (!dH) return;
  for (size_t a = 0; a < Lq * D; a++) dq[a] = 0;
  for (size_t a = 0; a < Lk * D; a++) dk[a] = 0;
  for (size_t a = 0; a < Lk * Dv; a++) dv[a] = 0;
  for (size_t i = 0; i < Lq; i++) {
    if (flag[i]) {
      for (size_t d = 0; d < D; d++) dq[i * D + d] = NAN;
      continue;
    }
    ld T = (ld)S[i] + c->eps, P = 0;
    /* H again in long double for P = dH . H */
    ld h[64] = {0};
    for (size_t j = 0; j < Lk; j++) {
      if (!bvis(c, i, j)) continue;
      ld w = bpair(c, c->q + i * D, c->k + j * D, NULL);
      for (size_t b = 0; b < Dv; b++) h[b] += w * bz(c, i, j) * c->v[j * Dv + b] / T;
    }
    for (size_t b = 0; b < Dv; b++) P += (ld)dH[i * Dv + b] * h[b];
    ld gq[64] = {0};
    for (size_t j = 0; j < Lk; j++) {
      if (!bvis(c, i, j)) continue;
      ld z = bz(c, i, j), dot = 0;
      for (size_t b = 0; b < Dv; b++) dot += (ld)dH[i * Dv + b] * c->v[j * Dv + b];
      ld w = bpair(c, c->q + i * D, c->k + j * D, g), cf = (z * dot - P) / T;
      for (size_t d = 0; d < D; d++) {
        gq[d] += cf * g[d] * c->R[d];
        dk[j * D + d] -= (double)(cf * g[d] * c->R[d]);
        dR[d] += (double)(cf * g[d] * ((ld)c->q[i * D + d] - c->k[j * D + d]));
      }
      for (size_t b = 0; b < Dv; b++) dv[j * Dv + b] += (double)(w * z / T * dH[i * Dv + b]);
    }
    for (size_t d = 0; d < D; d++) dq[i * D + d] = (double)gq[d];
  }
}

static double amax(const double *x, size_t n) {
  double m = 0;
  for (size_t a = 0; a < n; a++)
    if (isfinite(x[a])) m = fmax(m, fabs(x[a]));
  return m;
}
/* max |x - y| / (max |y|) over entries where y is finite; NaN positions
 * must agree. */
static double rdiff(const double *x, const double *y, size_t n) {
  double m = amax(y, n), e = 0;
  for (size_t a = 0; a < n; a++) {
    if (isnan(y[a]) != isnan(x[a])) return INFINITY;
    if (!isnan(y[a])) e = fmax(e, fabs(x[a] - y[a]));
  }
  return m > 0 ? e / m : e;
}

static gfi_kernel poly_kernel(int deg, const double *a) {
  gfi_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = GFI_PHI_POLY;
  k.l = deg;
  for (int j = 0; j <= deg; j++) k.coef[j] = a[j];
  k.A = NAN;
  return k;
}

static void fill(gsl_rng *r, double *x, size_t n, double sd) {
  for (size_t a = 0; a < n; a++) x[a] = sd * gsl_ran_gaussian(r, 1.0);
}

/* ---- single-sequence interface against brute force and differences ---- */
/* Returns the number of flagged rows. */
static size_t single_case(gsl_rng *rng, int deg, const double *a, size_t L, size_t D, size_t Dv, int per_axis,
                        int causal, double rsc, int fd) {
  static double q[64 * 64], k[64 * 64], v[64 * 8], dH[64 * 8], R[64], H[64 * 8], sv[128];
  static double Hb[64 * 8], S[64], A[64], dq[64 * 64], dk[64 * 64], dv[64 * 8], dR[64];
  static double bq[64 * 64], bk[64 * 64], bv[64 * 8], bR[64];
  memset(bR, 0, sizeof bR);
  fill(rng, q, L * D, 0.7);
  fill(rng, k, L * D, 0.7);
  fill(rng, v, L * Dv, 1.0);
  fill(rng, dH, L * Dv, 1.0);
  k[1 * D] = q[2 * D] + M_PI / rsc; /* a factor at a zero of sinc (scalar R = rsc) */
  for (size_t d = 0; d < D; d++) R[d] = per_axis ? rsc * (0.6 + 0.2 * d) : rsc;
  gfi_attn_spec sp;
  gfi_attn_default_spec(&sp);
  sp.kernel = poly_kernel(deg, a);
  sp.per_axis_R = per_axis;
  sp.causal = causal;
  gfi_attn_plan *p = NULL;
  CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
  if (!p) return 0;
  gfi_attn_info inf;
  int st = gfi_attn_forward(p, q, k, v, R, H, sv, &inf);
  CHECK(st == GFI_OK || st == GFI_EDENOM, "forward status %d", st);
  bcase c = {L, L, D, Dv, q, k, v, R, NULL, NULL, causal, 0, 0, 0, 0, a, deg};
  unsigned char flag[64];
  size_t nf = 0;
  for (size_t i = 0; i < L; i++) {
    flag[i] = isnan(sv[2 * i + 1]) ? 1 : 0;
    nf += flag[i];
  }
  CHECK(nf == inf.nflagged && (st == GFI_EDENOM) == (nf > 0), "flag count %zu vs info %zu", nf, inf.nflagged);
  brute(&c, flag, dH, Hb, S, A, bq, bk, bv, bR);
  double cond = 1;
  for (size_t i = 0; i < L; i++) {
    /* flagged exactly where S <= 1e-8 A (away from the threshold) */
    if (flag[i])
      CHECK(S[i] <= 2e-8 * A[i], "row %zu flagged with S/A = %g", i, S[i] / A[i]);
    else {
      CHECK(S[i] >= 0.5e-8 * A[i], "row %zu not flagged with S/A = %g", i, S[i] / A[i]);
      cond = fmax(cond, A[i] / S[i]);
    }
  }
  if (cond > 1e4) cond = 1e4;
  for (size_t i = 0; i < L; i++)
    if (flag[i])
      for (size_t b = 0; b < Dv; b++) Hb[i * Dv + b] = NAN;
  double eh = rdiff(H, Hb, L * Dv);
  CHECK(eh <= 1e-13 * cond, "poly deg %d L %zu D %zu: H rel err %.3g (cond %.3g)", deg, L, D, eh, cond);
  const size_t np = per_axis ? D : 1;
  st = gfi_attn_backward(p, q, k, v, R, H, sv, dH, dq, dk, dv, dR, NULL);
  CHECK(st == (nf ? GFI_EDENOM : GFI_OK), "backward status %d", st);
  if (!per_axis) {
    double s = 0;
    for (size_t d = 0; d < D; d++) s += bR[d];
    bR[0] = s;
  }
  double e1 = rdiff(dq, bq, L * D), e2 = rdiff(dk, bk, L * D), e3 = rdiff(dv, bv, L * Dv), e4 = rdiff(dR, bR, np);
  const double gt = 1e-11 * cond * cond;
  CHECK(e1 <= gt && e2 <= gt && e3 <= gt && e4 <= gt, "poly deg %d: gradient rel err dQ %.3g dK %.3g dV %.3g dR %.3g",
        deg, e1, e2, e3, e4);
  if (fd && nf == 0) {
    /* central differences of L = sum dH . H through the engine's forward */
    double *xs[4] = {q, k, v, R}, *gs[4] = {dq, dk, dv, dR};
    const size_t ns[4] = {L * D, L * D, L * Dv, np};
    double worst = 0;
    for (int w = 0; w < 4; w++) {
      const double gm = amax(gs[w], ns[w]);
      for (size_t e = 0; e < ns[w]; e += (ns[w] > 12 ? 5 : 1)) {
        double x0 = xs[w][e], h = 1e-6 * fmax(1.0, fabs(x0)), lp = 0, lm = 0;
        xs[w][e] = x0 + h;
        gfi_attn_forward(p, q, k, v, R, Hb, NULL, NULL);
        for (size_t a2 = 0; a2 < L * Dv; a2++) lp += dH[a2] * Hb[a2];
        xs[w][e] = x0 - h;
        gfi_attn_forward(p, q, k, v, R, Hb, NULL, NULL);
        for (size_t a2 = 0; a2 < L * Dv; a2++) lm += dH[a2] * Hb[a2];
        xs[w][e] = x0;
        worst = fmax(worst, fabs((lp - lm) / (2 * h) - gs[w][e]) / (gm + 1e-300));
      }
    }
    CHECK(worst <= 1e-6 * cond, "poly deg %d: finite differences rel err %.3g", deg, worst);
  }
  gfi_attn_destroy(p);
  return nf;
}

/* ---- a polynomial equal to z^l against the power engine ---- */
static void power_match(gsl_rng *rng, int l) {
  const size_t L = 37, D = 5, Dv = 3;
  double q[37 * 5], k[37 * 5], v[37 * 3], dH[37 * 3], R[5], H1[37 * 3], H2[37 * 3], s1[74], s2[74];
  double g1[3][37 * 5], g2[3][37 * 5], r1[5], r2[5];
  fill(rng, q, L * D, 0.8);
  fill(rng, k, L * D, 0.8);
  fill(rng, v, L * Dv, 1.0);
  fill(rng, dH, L * Dv, 1.0);
  for (size_t d = 0; d < D; d++) R[d] = 0.7 + 0.3 * d;
  double a[9] = {0};
  a[l] = 1;
  gfi_attn_spec sp;
  gfi_attn_default_spec(&sp);
  sp.per_axis_R = 1;
  sp.causal = 1;
  gfi_kernel_pow(&sp.kernel, l);
  gfi_attn_plan *pw = NULL, *pp = NULL;
  CHECK_STATUS(gfi_attn_plan_create(&pw, &sp, L, D, Dv, NULL), GFI_OK);
  sp.kernel = poly_kernel(l, a);
  CHECK_STATUS(gfi_attn_plan_create(&pp, &sp, L, D, Dv, NULL), GFI_OK);
  if (!pw || !pp) return;
  int a1 = gfi_attn_forward(pw, q, k, v, R, H1, s1, NULL), a2 = gfi_attn_forward(pp, q, k, v, R, H2, s2, NULL);
  CHECK(a1 == a2, "power l = %d: status %d (power) vs %d (poly)", l, a1, a2);
  double eh = rdiff(H2, H1, L * Dv);
  CHECK(eh <= 1e-14 * (l % 2 ? 10 : 1), "poly z^%d vs pow:%d: H rel err %.3g", l, l, eh);
  CHECK(gfi_attn_backward(pw, q, k, v, R, H1, s1, dH, g1[0], g1[1], g1[2], r1, NULL) == a1, "backward");
  CHECK(gfi_attn_backward(pp, q, k, v, R, H2, s2, dH, g2[0], g2[1], g2[2], r2, NULL) == a2, "backward");
  double e = fmax(fmax(rdiff(g2[0], g1[0], L * D), rdiff(g2[1], g1[1], L * D)),
                  fmax(rdiff(g2[2], g1[2], L * Dv), rdiff(r2, r1, D)));
  CHECK(e <= 1e-13 * (l % 2 ? 10 : 1), "poly z^%d vs pow:%d: gradient rel err %.3g", l, l, e);
  gfi_attn_destroy(pw);
  gfi_attn_destroy(pp);
}

/* ---- the batched interface: heads, masks, causal offset, eps, dropout,
 * layouts, float32, threads ---- */
#define BB 2
#define HH 3
#define LQ 6
#define LK 9
#define DD 4
#define DV 3
static void batch_case(gsl_rng *rng, int deg, const double *a, int causal, double eps, double drop) {
  static double Q[BB * HH * LQ * DD], K[BB * HH * LK * DD], V[BB * HH * LK * DV], dH[BB * HH * LQ * DV];
  static double R[HH * DD], Ho[BB * HH * LQ * DV], sv[2 * BB * HH * LQ], Hb[BB * HH * LQ * DV];
  static double dQ[BB * HH * LQ * DD], dK[BB * HH * LK * DD], dV[BB * HH * LK * DV], dR[HH * DD];
  static double bQ[BB * HH * LQ * DD], bK[BB * HH * LK * DD], bV[BB * HH * LK * DV], bR[HH * DD];
  unsigned char kp[BB * LK] = {0}, mk[BB * LQ * LK] = {0};
  fill(rng, Q, sizeof Q / sizeof *Q, 0.6);
  fill(rng, K, sizeof K / sizeof *K, 0.6);
  fill(rng, V, sizeof V / sizeof *V, 1.0);
  fill(rng, dH, sizeof dH / sizeof *dH, 1.0);
  for (size_t x = 0; x < HH * DD; x++) R[x] = 0.8 + 0.1 * (double)(x % 7);
  kp[2] = kp[LK + 5] = 1;
  for (size_t x = 0; x < BB * LQ * LK; x++) mk[x] = gsl_rng_uniform(rng) < 0.15;
  gfi_attn_batch_spec s;
  gfi_attn_batch_default_spec(&s);
  s.kernel = poly_kernel(deg, a);
  s.rmode = GFI_ATTN_R_HEAD_AXIS;
  s.causal = causal;
  s.eps = eps;
  s.dropout = drop;
  s.seed = 12345;
  s.mask_batch = BB;
  s.empty_zero = 1;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 3;
  gfi_attn_info inf;
  int st = gfi_attn_batch_forward(&s, BB, HH, LQ, LK, DD, DV, Q, K, V, R, kp, mk, &o, Ho, sv, &inf);
  CHECK(st == GFI_OK || st == GFI_EDENOM, "batch forward status %d", st);
  int bst = gfi_attn_batch_backward(&s, BB, HH, LQ, LK, DD, DV, Q, K, V, R, kp, mk, &o, Ho, sv, dH, dQ, dK, dV, dR,
                                    NULL);
  CHECK(bst == st, "batch backward status %d vs forward %d", bst, st);
  memset(bR, 0, sizeof bR);
  double cond = 1;
  for (size_t b = 0; b < BB; b++)
    for (size_t h = 0; h < HH; h++) {
      const size_t bh = b * HH + h;
      bcase c = {LQ, LK, DD, DV, Q + bh * LQ * DD, K + bh * LK * DD, V + bh * LK * DV, R + h * DD, kp + b * LK,
                 mk + b * LQ * LK, causal, eps, drop, s.seed, bh, a, deg};
      unsigned char flag[LQ];
      double S[LQ], A[LQ];
      for (size_t i = 0; i < LQ; i++) flag[i] = isnan(sv[2 * (bh * LQ + i) + 1]) ? 1 : 0;
      brute(&c, flag, dH + bh * LQ * DV, Hb + bh * LQ * DV, S, A, bQ + bh * LQ * DD, bK + bh * LK * DD,
            bV + bh * LK * DV, bR + h * DD);
      for (size_t i = 0; i < LQ; i++) {
        size_t nv = 0;
        for (size_t j = 0; j < LK; j++) nv += bvis(&c, i, j);
        double *hb = Hb + (bh * LQ + i) * DV;
        if (nv == 0) { /* empty row, written as zeros (empty_zero) with zero dQ */
          CHECK(sv[2 * (bh * LQ + i)] == -INFINITY, "empty row %zu of head %zu", i, bh);
          for (size_t x = 0; x < DV; x++) hb[x] = 0;
          for (size_t d = 0; d < DD; d++) bQ[(bh * LQ + i) * DD + d] = 0;
          continue;
        }
        if (flag[i]) {
          CHECK(S[i] + eps <= 2e-8 * A[i], "flagged row with (S + eps)/A = %g", (S[i] + eps) / A[i]);
          for (size_t x = 0; x < DV; x++) hb[x] = NAN;
        } else {
          CHECK(S[i] + eps >= 0.5e-8 * A[i], "unflagged row with (S + eps)/A = %g", (S[i] + eps) / A[i]);
          if (A[i] > 0) cond = fmax(cond, A[i] / fabs(S[i] + eps));
        }
      }
    }
  if (cond > 1e4) cond = 1e4;
  const size_t nq = BB * HH * LQ * DD, nk = BB * HH * LK * DD, nv = BB * HH * LK * DV, nh = BB * HH * LQ * DV;
  double eh = rdiff(Ho, Hb, nh);
  CHECK(eh <= 1e-13 * cond, "batch deg %d causal %d eps %g drop %g: H rel err %.3g", deg, causal, eps, drop, eh);
  double e1 = rdiff(dQ, bQ, nq), e2 = rdiff(dK, bK, nk), e3 = rdiff(dV, bV, nv), e4 = rdiff(dR, bR, HH * DD);
  const double gt = 1e-11 * cond * cond;
  CHECK(e1 <= gt && e2 <= gt && e3 <= gt && e4 <= gt,
        "batch deg %d causal %d: gradient rel err dQ %.3g dK %.3g dV %.3g dR %.3g", deg, causal, e1, e2, e3, e4);

  /* one thread: the same bits */
  static double H1[BB * HH * LQ * DV], s1[2 * BB * HH * LQ], q1[BB * HH * LQ * DD], k1[BB * HH * LK * DD],
      v1[BB * HH * LK * DV], r1[HH * DD];
  o.nthreads = 1;
  gfi_attn_batch_forward(&s, BB, HH, LQ, LK, DD, DV, Q, K, V, R, kp, mk, &o, H1, s1, NULL);
  gfi_attn_batch_backward(&s, BB, HH, LQ, LK, DD, DV, Q, K, V, R, kp, mk, &o, H1, s1, dH, q1, k1, v1, r1, NULL);
  CHECK(memcmp(H1, Ho, sizeof H1) == 0 && memcmp(q1, dQ, sizeof q1) == 0 && memcmp(k1, dK, sizeof k1) == 0 &&
            memcmp(v1, dV, sizeof v1) == 0 && memcmp(r1, dR, sizeof r1) == 0,
        "1 and 3 threads give different bits");

  /* (L, B, H, W) layout: the same values, transposed */
  static double Ql[BB * HH * LQ * DD], Kl[BB * HH * LK * DD], Vl[BB * HH * LK * DV], dHl[BB * HH * LQ * DV];
  static double Hl[BB * HH * LQ * DV], sl[2 * BB * HH * LQ], ql[BB * HH * LQ * DD], kl[BB * HH * LK * DD],
      vl[BB * HH * LK * DV], rl[HH * DD];
#define TO_L(src, dst, L, W)                                                                          \
  for (size_t bh = 0; bh < BB * HH; bh++)                                                             \
    for (size_t i = 0; i < (L); i++)                                                                  \
      for (size_t w = 0; w < (W); w++) (dst)[(i * BB * HH + bh) * (W) + w] = (src)[(bh * (L) + i) * (W) + w];
  TO_L(Q, Ql, LQ, DD) TO_L(K, Kl, LK, DD) TO_L(V, Vl, LK, DV) TO_L(dH, dHl, LQ, DV)
  gfi_attn_batch_spec sL = s;
  sL.layout = GFI_ATTN_LAYOUT_LBHD;
  gfi_attn_batch_forward(&sL, BB, HH, LQ, LK, DD, DV, Ql, Kl, Vl, R, kp, mk, &o, Hl, sl, NULL);
  gfi_attn_batch_backward(&sL, BB, HH, LQ, LK, DD, DV, Ql, Kl, Vl, R, kp, mk, &o, Hl, sl, dHl, ql, kl, vl, rl, NULL);
  static double T1[BB * HH * LQ * DV], T2[BB * HH * LQ * DD], T3[BB * HH * LK * DD], T4[BB * HH * LK * DV];
  TO_L(Ho, T1, LQ, DV) TO_L(dQ, T2, LQ, DD) TO_L(dK, T3, LK, DD) TO_L(dV, T4, LK, DV)
  CHECK(rdiff(Hl, T1, nh) == 0 && rdiff(ql, T2, nq) == 0 && rdiff(kl, T3, nk) == 0 && rdiff(vl, T4, nv) == 0 &&
            memcmp(sl, sv, sizeof sl) == 0 && rdiff(rl, dR, HH * DD) == 0,
        "lbhd layout differs from bhld");

  /* float32 storage: the float64 values on the float-rounded inputs, within
   * the stated float32 bound (H: l D 2^-20 of the row scale; gradients
   * 4 l D 2^-20 of each array's largest entry, times (A/S)^2) */
  static float Qf[BB * HH * LQ * DD], Kf[BB * HH * LK * DD], Vf[BB * HH * LK * DV], dHf[BB * HH * LQ * DV];
  static float Rf[HH * DD], Hf[BB * HH * LQ * DV], dQf[BB * HH * LQ * DD], dKf[BB * HH * LK * DD],
      dVf[BB * HH * LK * DV], dRf[HH * DD];
  static double Qr[BB * HH * LQ * DD], Kr[BB * HH * LK * DD], Vr[BB * HH * LK * DV], dHr[BB * HH * LQ * DV],
      Rr[HH * DD], s32[2 * BB * HH * LQ], s64[2 * BB * HH * LQ];
#define ROUND(src, f, d, n)                \
  for (size_t x = 0; x < (n); x++) {       \
    (f)[x] = (float)(src)[x];              \
    (d)[x] = (f)[x];                       \
  }
  ROUND(Q, Qf, Qr, nq) ROUND(K, Kf, Kr, nk) ROUND(V, Vf, Vr, nv) ROUND(dH, dHf, dHr, nh) ROUND(R, Rf, Rr, HH * DD)
  gfi_attn_batch_spec s3 = s;
  s3.dtype = GFI_ATTN_F32;
  int f3 = gfi_attn_batch_forward(&s3, BB, HH, LQ, LK, DD, DV, Qf, Kf, Vf, Rf, kp, mk, &o, Hf, s32, NULL);
  int f6 = gfi_attn_batch_forward(&s, BB, HH, LQ, LK, DD, DV, Qr, Kr, Vr, Rr, kp, mk, &o, H1, s64, NULL);
  CHECK(f3 == f6, "float32 status %d vs float64 %d", f3, f6);
  int b3 = gfi_attn_batch_backward(&s3, BB, HH, LQ, LK, DD, DV, Qf, Kf, Vf, Rf, kp, mk, &o, Hf, s32, dHf, dQf, dKf,
                                   dVf, dRf, NULL);
  gfi_attn_batch_backward(&s, BB, HH, LQ, LK, DD, DV, Qr, Kr, Vr, Rr, kp, mk, &o, H1, s64, dHr, q1, k1, v1, r1, NULL);
  CHECK(b3 == f3, "float32 backward status %d", b3);
  static double Hd[BB * HH * LQ * DV], qd[BB * HH * LQ * DD], kd[BB * HH * LK * DD], vd[BB * HH * LK * DV], rd[HH * DD];
  for (size_t x = 0; x < nh; x++) Hd[x] = Hf[x];
  for (size_t x = 0; x < nq; x++) qd[x] = dQf[x];
  for (size_t x = 0; x < nk; x++) kd[x] = dKf[x];
  for (size_t x = 0; x < nv; x++) vd[x] = dVf[x];
  for (size_t x = 0; x < HH * DD; x++) rd[x] = dRf[x];
  const double b32 = deg * DD * 0x1p-20;
  double f1 = rdiff(Hd, H1, nh), f2 = fmax(fmax(rdiff(qd, q1, nq), rdiff(kd, k1, nk)), fmax(rdiff(vd, v1, nv), rdiff(rd, r1, HH * DD)));
  CHECK(f1 <= b32 * cond && f2 <= 4 * b32 * cond * cond, "float32 deg %d: H rel err %.3g, gradients %.3g (bound %.3g)",
        deg, f1, f2, b32);
  /* the float32 outputs are the float64 values rounded to float */
  CHECK(f1 <= 0x1p-23, "float32 H is not the rounded float64 value: %.3g", f1);
}

static void refusals(void) {
  gfi_attn_batch_spec s;
  gfi_attn_batch_default_spec(&s);
  double Q[8] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, R = 1, H[8], sv[4];
  const double a2[3] = {0, 1, 1};
  gfi_attn_batch_spec b = s;
  gfi_kernel_flattop(&b.kernel, 0.5);
  CHECK_STATUS(gfi_attn_batch_forward(&b, 1, 1, 2, 2, 2, 2, Q, Q, Q, &R, NULL, NULL, NULL, H, sv, NULL),
               GFI_EUNSUPPORTED);
  CHECK(strcmp(gfi_error_param(GFI_EUNSUPPORTED), "kernel") == 0, "flat-top refused by the name 'kernel'");
  b = s;
  b.kernel = poly_kernel(2, a2);
  b.kernel.coef[0] = 1;
  CHECK_STATUS(gfi_attn_batch_forward(&b, 1, 1, 2, 2, 2, 2, Q, Q, Q, &R, NULL, NULL, NULL, H, sv, NULL), GFI_EINVAL);
  b.kernel = poly_kernel(2, a2);
  b.kernel.coef[2] = 0; /* a_deg = 0 */
  CHECK_STATUS(gfi_attn_batch_forward(&b, 1, 1, 2, 2, 2, 2, Q, Q, Q, &R, NULL, NULL, NULL, H, sv, NULL), GFI_EINVAL);
  b.kernel = poly_kernel(2, a2);
  b.kernel.coef[1] = NAN;
  CHECK_STATUS(gfi_attn_batch_forward(&b, 1, 1, 2, 2, 2, 2, Q, Q, Q, &R, NULL, NULL, NULL, H, sv, NULL),
               GFI_ENONFINITE);
  b.kernel = poly_kernel(2, a2);
  b.kernel.l = 9;
  CHECK_STATUS(gfi_attn_batch_forward(&b, 1, 1, 2, 2, 2, 2, Q, Q, Q, &R, NULL, NULL, NULL, H, sv, NULL), GFI_EORDER);
  CHECK(strcmp(gfi_error_param(GFI_EORDER), "kernel") == 0, "order refused by the name 'kernel'");
  /* a polynomial from gfi_kernel_parse is accepted as is */
  b = s;
  CHECK_STATUS(gfi_kernel_parse(&b.kernel, "poly:0.5,0,1", NULL), GFI_OK);
  CHECK_STATUS(gfi_attn_batch_forward(&b, 1, 1, 2, 2, 2, 2, Q, Q, Q, &R, NULL, NULL, NULL, H, sv, NULL), GFI_OK);
}

int main(void) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20261129);
  const double p13[4] = {0, 0.5, 0, 1};          /* 0.5 z + z^3 */
  const double pneg[5] = {0, 1, -0.6, 0, 0.3};    /* z - 0.6 z^2 + 0.3 z^4: a negative coefficient */
  const double pzero[3] = {0, 1, -1};            /* z - z^2: phi(1) = 0, so w = 0 at q = k */
  const double p8[9] = {0, 0.1, 0.2, 0, 0.3, 0, 0.1, 0, 1};
  single_case(rng, 3, p13, 23, 3, 2, 0, 0, 1.3, 1);
  single_case(rng, 3, p13, 29, 4, 3, 1, 1, 0.9, 1);
  single_case(rng, 4, pneg, 31, 3, 2, 1, 0, 1.1, 1);
  single_case(rng, 4, pneg, 17, 6, 2, 0, 1, 2.5, 1);
  single_case(rng, 2, pzero, 19, 2, 3, 1, 0, 0.8, 1);
  single_case(rng, 8, p8, 21, 7, 2, 1, 1, 1.7, 0);
  single_case(rng, 4, pneg, 40, 40, 2, 0, 0, 0.3, 0); /* D = 40: products far from 1, scaled */
  /* -z^2 on 3 axes: every weight <= 0, every row flagged (S <= 0) */
  const double pm2[3] = {0, 0, -1};
  size_t nf = single_case(rng, 2, pm2, 15, 3, 2, 0, 0, 1.0, 0);
  CHECK(nf == 15, "-z^2 on 3 axes: %zu of 15 rows flagged", nf);
  /* z - z^2 (negative for z < 0) on 3 axes: weights of either sign, some rows flagged */
  nf = single_case(rng, 2, pzero, 40, 3, 2, 0, 0, 3.0, 1);
  CHECK(nf > 0 && nf < 40, "z - z^2: %zu of 40 rows flagged", nf);
  for (int l = 1; l <= 8; l++) power_match(rng, l);
  batch_case(rng, 3, p13, 0, 0, 0);
  batch_case(rng, 4, pneg, 1, 0, 0);
  batch_case(rng, 4, pneg, 1, 1e-3, 0.3);
  batch_case(rng, 2, pzero, 0, 0, 0.2);
  refusals();
  gsl_rng_free(rng);
  return check_summary("attention-poly");
}
