/* Gaussian baselines of the data-driven choice (gfi/select.h): LSCV of the
 * Gaussian KDE (direct in any D; in 1-D also through the empirical cf, one
 * transform for every h), the direct plug-in of KernSmooth::dpik, the normal
 * reference, and leave-one-out CV of Gaussian Nadaraya-Watson.
 *
 * Through the empirical cf (1-D): with phi_N(t) = (1/N) sum_i e^{i t x_i},
 *   (1/N^2) sum_{i,k} f(x_i - x_k) = (1/pi) int_0^inf f^(t) |phi_N(t)|^2 dt
 * for even f, f^ its Fourier transform: e^{-h^2 t^2} for N(0, 2h^2),
 * e^{-h^2 t^2 / 2} for N(0, h^2), (-1)^(r/2) t^r e^{-g^2 t^2 / 2} for the r-th
 * derivative of N(0, g^2). |phi_N|^2 is a trigonometric sum of frequencies up
 * to the data span S, so Gauss-Legendre panels of width 16/S with 28 points
 * integrate it to rounding (the bound of bandlimited.c: (e a / 4n)^2n with
 * a = 8); the integrals stop where the Gaussian factor is below e^-45. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/select.h"
#include "gfi/density.h"
#include "gfi/validate.h"
#include "bandlimited.h"
#include "alloc.h"
#include "chol.h"
#include "par.h"
#include "select_internal.h"

/* The Cholesky factor *L of H (D x D) and nslot * N slots for a pair sum:
 * GFI_ENOMEM, or GFI_EBANDWIDTH when H is not SPD (nothing left allocated). */
static int chol_and_slots(size_t D, const double *H, size_t N, size_t nslot, double **L, double **slots) {
  *L = gfi_malloc3(D, D, sizeof **L);
  *slots = gfi_malloc3(N, nslot, sizeof **slots);
  int st = !*L || !*slots ? GFI_ENOMEM : chol_lower(D, H, *L) ? GFI_EBANDWIDTH : GFI_OK;
  if (st) {
    free(*L);
    free(*slots);
    *L = *slots = NULL;
  }
  return st;
}

/* ---- direct Gaussian LSCV ---------------------------------------------------- */

typedef struct {
  size_t N, D;
  const double *x, *L; /* L: Cholesky factor of H */
  double *slots;       /* per row: sum_{k>i} e^{-q/4}, sum_{k>i} e^{-q/2} */
} glscv_ctx;

/* q = d' H^-1 d by forward substitution with L (D <= 64 on the stack). */
static double quad_form(size_t D, const double *L, const double *d, double *z) {
  double q = 0;
  for (size_t j = 0; j < D; j++) {
    double s = d[j];
    for (size_t k = 0; k < j; k++) s -= L[j * D + k] * z[k];
    z[j] = s / L[j * D + j];
    q += z[j] * z[j];
  }
  return q;
}

static int glscv_row(void *vc, size_t i, void *ws) {
  const glscv_ctx *c = vc;
  const size_t D = c->D;
  double *d = ws, *z = d + D;
  double s2 = 0, s1 = 0;
  for (size_t k = i + 1; k < c->N; k++) {
    for (size_t j = 0; j < D; j++) d[j] = c->x[i * D + j] - c->x[k * D + j];
    double q = quad_form(D, c->L, d, z);
    s2 += exp(-0.25 * q);
    s1 += exp(-0.5 * q);
  }
  c->slots[2 * i] = s2;
  c->slots[2 * i + 1] = s1;
  return GFI_OK;
}

int gfi_gauss_lscv(size_t N, size_t D, const double *data, const double *H, const gfi_opts *opts,
                   double *value) {
  if (!value || !H) return GFI_EINVAL;
  int st = sel_check_data(N, D, data);
  if (st) return st;
  if (D > 64) return GFI_EDIM;
  st = gfi_check_finite(H, D * D, NULL);
  if (st) return st;
  double *L, *slots;
  st = chol_and_slots(D, H, N, 2, &L, &slots);
  if (st) return st;
  double ldet = 0;
  for (size_t j = 0; j < D; j++) ldet += log(L[j * D + j]);
  glscv_ctx c = {N, D, data, L, slots};
  par_spec sp = {N, sel_pair_threads(opts ? opts->nthreads : 0, N), 2 * D * sizeof(double), 16, NULL, NULL};
  st = par_run(&sp, glscv_row, &c);
  double s[2] = {0, 0};
  if (!st) par_sum(slots, N, 2, s);
  free(L);
  free(slots);
  if (st) return st;
  /* N(0; H) = (2 pi)^-D/2 |H|^-1/2, N(0; 2H) = that times 2^-D/2 */
  const double n = (double)N, c1 = exp(-0.5 * (double)D * log(2 * M_PI) - ldet);
  const double c2 = c1 * pow(2.0, -0.5 * (double)D);
  *value = (n * c2 + 2 * c2 * s[0]) / (n * n) - 4 * c1 * s[1] / (n * (n - 1));
  return GFI_OK;
}

int gfi_bw_normal_ref(size_t N, size_t D, const double *data, double *H) {
  if (!H) return GFI_EINVAL;
  int st = sel_check_data(N, D, data);
  if (st) return st;
  if (D > 64) return GFI_EDIM;
  double *m = calloc(D, sizeof *m);
  if (!m) return GFI_ENOMEM;
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < D; j++) m[j] += data[i * D + j];
  for (size_t j = 0; j < D; j++) m[j] /= (double)N;
  const double f = pow(4.0 / ((double)D + 2), 2.0 / ((double)D + 4)) * pow((double)N, -2.0 / ((double)D + 4));
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < D; b++) {
      double s = 0;
      for (size_t i = 0; i < N; i++) s += (data[i * D + a] - m[a]) * (data[i * D + b] - m[b]);
      H[a * D + b] = f * s / (double)(N - 1);
    }
  free(m);
  if (!(H[0] > 0)) return GFI_EBANDWIDTH;
  return GFI_OK;
}

/* ---- 1-D functionals through the empirical cf ------------------------------- */

typedef struct {
  size_t K;
  double *t, *w, *p2; /* nodes on [0, T], weights / pi, |phi_N|^2 */
} ecf_rule;

static void ecf_rule_free(ecf_rule *r) {
  free(r->t);
  free(r->w);
  free(r->p2);
  memset(r, 0, sizeof *r);
}

#define ECF_GL 28
#define ECF_PANEL_A 8.0

/* The nodes of the rule on [0, T] for data of span S (as ecf_rule_make
 * places them); 0 when they exceed the rule's limit. */
static size_t ecf_rule_nodes(double S, double T) {
  if (!(S > 0)) S = 1e-300;
  double np = ceil(T / (2 * ECF_PANEL_A / S));
  if (!(np >= 1)) np = 1;
  return np > 1e6 ? 0 : (size_t)np * ECF_GL;
}

/* tol: the criterion's accuracy (bl_cf2_tol: every |phi_N|^2 within tol) */
static int ecf_rule_make(size_t N, const double *x, double T, int nt, double tol, ecf_rule *r) {
  memset(r, 0, sizeof *r);
  double lo = x[0], hi = x[0];
  for (size_t i = 0; i < N; i++) {
    lo = fmin(lo, x[i]);
    hi = fmax(hi, x[i]);
  }
  double S = hi - lo;
  if (!(S > 0)) S = 1e-300;
  double pw = 2 * ECF_PANEL_A / S;
  double np = ceil(T / pw);
  if (!(np >= 1)) np = 1;
  if (np > 1e6) return GFI_ERANGE;
  size_t P = (size_t)np, K = P * ECF_GL;
  pw = T / (double)P;
  r->t = malloc(K * sizeof *r->t);
  r->w = malloc(K * sizeof *r->w);
  r->p2 = malloc(K * sizeof *r->p2);
  double *out = malloc(2 * K * sizeof *out), *xc = malloc(N * sizeof *xc);
  if (!r->t || !r->w || !r->p2 || !out || !xc) {
    free(out);
    free(xc);
    ecf_rule_free(r);
    return GFI_ENOMEM;
  }
  double gx[ECF_GL], gw[ECF_GL];
  bl_gauss_legendre(ECF_GL, gx, gw);
  for (size_t p = 0; p < P; p++)
    for (int q = 0; q < ECF_GL; q++) {
      r->t[p * ECF_GL + q] = pw * ((double)p + 0.5 + 0.5 * gx[q]);
      r->w[p * ECF_GL + q] = 0.5 * pw * gw[q] / M_PI;
    }
  double c = 0.5 * (lo + hi);
  for (size_t i = 0; i < N; i++) xc[i] = x[i] - c;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nt;
  o.tol = bl_cf2_tol(tol);
  int st = gfi_ecf(N, 1, xc, NULL, K, r->t, &o, out, NULL);
  if (!st)
    for (size_t k = 0; k < K; k++) r->p2[k] = out[2 * k] * out[2 * k] + out[2 * k + 1] * out[2 * k + 1];
  free(out);
  free(xc);
  if (st) {
    ecf_rule_free(r);
    return st;
  }
  r->K = K;
  return GFI_OK;
}

/* (1/pi) int_0^T t^r e^{-a t^2} |phi_N|^2 dt */
static double ecf_int(const ecf_rule *r, int pw, double a) {
  double s = 0;
  for (size_t k = 0; k < r->K; k++) {
    double t = r->t[k], e = exp(-a * t * t);
    if (e == 0) continue;
    s += r->w[k] * pow(t, pw) * e * r->p2[k];
  }
  return s;
}

static double lscv_ecf(const ecf_rule *r, size_t N, double h) {
  const double n = (double)N;
  double t1 = ecf_int(r, 0, h * h), t2 = ecf_int(r, 0, 0.5 * h * h);
  return t1 - 2 * n / (n - 1) * t2 + 2 / ((n - 1) * sqrt(2 * M_PI) * h);
}

/* ---- 1-D LSCV search ---------------------------------------------------------- */

typedef struct {
  size_t N;
  const double *x;
  const gfi_opts *o;
  const ecf_rule *r;
} h1_ctx;

static int crit_h1(void *vc, const double *h, double *v) {
  const h1_ctx *c = vc;
  if (c->r) {
    *v = lscv_ecf(c->r, c->N, h[0]);
    return GFI_OK;
  }
  double H = h[0] * h[0];
  return gfi_gauss_lscv(c->N, 1, c->x, &H, c->o, v);
}

/* ---- 2-D LSCV: Nelder-Mead on the Cholesky factor ---------------------------- */

static void H_of(const double *p, double *H) {
  double a = exp(p[0]), b = p[1], c = exp(p[2]);
  H[0] = a * a;
  H[1] = H[2] = a * b;
  H[3] = b * b + c * c;
}

/* LSCV(H) in 2-D through the empirical cf, as lscv_ecf in 1-D:
 *   LSCV(H) = (2 pi)^-2 int [e^{-w'Hw} - 2N/(N-1) e^{-w'Hw/2}] |phi_N(w)|^2 dw
 *             + 2 N(0; H) / (N - 1),
 * on the half plane w_0 >= 0 (the integrand is even) by the trapezoid rule
 * of step d_j = 2 pi / (S_j + M_j) truncated at |w_j| <= T (S_j the data's
 * range). For a given H the rule is exact up to e^{-72}-small terms when
 * T >= 12 / sqrt(lambda_min(H)) (the tails of e^{-w'Hw/2}) and M_j >=
 * 12 sqrt(2 H_jj) (the aliases of N(.; 2H), the wider kernel, lie M_j
 * beyond every pair difference). |phi_N|^2 on the nodes is one type-3 NUFFT,
 * each within tol (bl_cf2_tol of opts.tol): the criterion within tol of its
 * scale (2 pi)^-2 int [e^{-w'Hw} + 2N/(N-1) e^{-w'Hw/2}] dw; an H outside the rule's cover rebuilds it, 1.25 times
 * wider than needed, so that a search rebuilds a few times. */
#define L2_QMAX ((size_t)4000000)

typedef struct {
  size_t N;
  const double *x;
  const gfi_opts *o;
  int fast;
  double *xc, S[2], T, M[2], d[2];
  size_t n0, n1;
  double *p2; /* n0 x n1: |phi_N|^2 at (k0 d0, (k1 - (n1 - 1) / 2) d1) */
} l2_ctx;

static void l2_free(l2_ctx *c) {
  free(c->xc);
  free(c->p2);
  c->xc = c->p2 = NULL;
}

static int l2_init(l2_ctx *c, size_t N, const double *x, const gfi_opts *o, int fast) {
  memset(c, 0, sizeof *c);
  c->N = N, c->x = x, c->o = o, c->fast = fast;
  if (!fast) return GFI_OK;
  double lo[2] = {x[0], x[1]}, hi[2] = {x[0], x[1]};
  for (size_t i = 0; i < N; i++)
    for (int j = 0; j < 2; j++) lo[j] = fmin(lo[j], x[2 * i + j]), hi[j] = fmax(hi[j], x[2 * i + j]);
  c->xc = gfi_malloc3(N, 2, sizeof *c->xc);
  if (!c->xc) return GFI_ENOMEM;
  for (int j = 0; j < 2; j++) c->S[j] = hi[j] - lo[j];
  for (size_t i = 0; i < N; i++)
    for (int j = 0; j < 2; j++) c->xc[2 * i + j] = x[2 * i + j] - 0.5 * (lo[j] + hi[j]);
  return GFI_OK;
}

int sel_ecf2_halfplane(size_t N, const double *xc, const double *d, double T, size_t qmax, int nt,
                       double cftol, double *cf_err, size_t *n0_out, size_t *n1_out, double **p2_out) {
  size_t K[2];
  for (int j = 0; j < 2; j++) {
    double k = ceil(T / d[j]);
    if (!(k >= 1 && k < 1e7)) return GFI_ERANGE;
    K[j] = (size_t)k;
  }
  const size_t n0 = K[0] + 1, n1 = 2 * K[1] + 1;
  if (n0 > qmax / n1) return GFI_ERANGE;
  const size_t Q = n0 * n1;
  double *w = gfi_malloc3(Q, 2, sizeof *w), *out = gfi_malloc3(Q, 2, sizeof *out);
  double *p2 = gfi_malloc2(Q, sizeof *p2);
  int st = w && out && p2 ? GFI_OK : GFI_ENOMEM;
  if (!st) {
    for (size_t a = 0; a < n0; a++)
      for (size_t b = 0; b < n1; b++) {
        w[2 * (a * n1 + b)] = (double)a * d[0];
        w[2 * (a * n1 + b) + 1] = ((double)b - (double)K[1]) * d[1];
      }
    gfi_opts o;
    gfi_default_opts(&o);
    o.nthreads = nt;
    o.tol = cftol;
    gfi_fast_info info;
    st = gfi_ecf(N, 2, xc, NULL, Q, w, &o, out, &info);
    /* the bound it reports holds the phases' rounding besides the NUFFT's share */
    if (cf_err) *cf_err = fmax(cftol, info.route == GFI_METHOD_FAST ? info.bound_abs : 0.0);
  }
  if (!st) {
    for (size_t q = 0; q < Q; q++) p2[q] = out[2 * q] * out[2 * q] + out[2 * q + 1] * out[2 * q + 1];
    *n0_out = n0, *n1_out = n1, *p2_out = p2;
    p2 = NULL;
  }
  free(w), free(out), free(p2);
  return st;
}

/* the rule for cover (T, M): |phi_N|^2 on its nodes */
static int l2_build(l2_ctx *c, double T, const double *M) {
  double d[2] = {2 * M_PI / (c->S[0] + M[0]), 2 * M_PI / (c->S[1] + M[1])}, *p2 = NULL;
  size_t n0, n1;
  double tol = GFI_FAST_TOL_DEFAULT;
  (void)bl_check_opts(c->o, &tol, NULL); /* checked by the callers */
  int st = sel_ecf2_halfplane(c->N, c->xc, d, T, L2_QMAX, c->o ? c->o->nthreads : 0, bl_cf2_tol(tol), NULL, &n0, &n1,
                              &p2);
  if (st) return st;
  free(c->p2);
  c->p2 = p2;
  c->T = T, c->M[0] = M[0], c->M[1] = M[1], c->d[0] = d[0], c->d[1] = d[1];
  c->n0 = n0, c->n1 = n1;
  return GFI_OK;
}

static int l2_eval(l2_ctx *c, const double *H, double *v) {
  if (!c->fast) return gfi_gauss_lscv(c->N, 2, c->x, H, c->o, v);
  const double a = H[0], b = 0.5 * (H[1] + H[2]), cc = H[3], det = a * cc - b * b;
  double lmin = 0.5 * (a + cc) - sqrt(0.25 * (a - cc) * (a - cc) + b * b);
  if (!(a > 0 && det > 0 && lmin > 0)) return GFI_ENOTPD;
  double T = 12 / sqrt(lmin), M[2] = {12 * sqrt(2 * a), 12 * sqrt(2 * cc)};
  if (!c->p2 || T > c->T || M[0] > c->M[0] || M[1] > c->M[1]) {
    /* the union of the old cover and 1.25 times this H's need; where that
     * is too many nodes, this H's need with the margin, then without */
    double Tn = fmax(1.25 * T, c->p2 ? c->T : 0);
    double Mn[2] = {fmax(1.25 * M[0], c->p2 ? c->M[0] : 0), fmax(1.25 * M[1], c->p2 ? c->M[1] : 0)};
    int st = l2_build(c, Tn, Mn);
    if (st == GFI_ERANGE) {
      double M1[2] = {1.25 * M[0], 1.25 * M[1]};
      st = l2_build(c, 1.25 * T, M1);
    }
    if (st == GFI_ERANGE) st = l2_build(c, T, M);
    if (st) return st;
  }
  const size_t K1 = (c->n1 - 1) / 2;
  double t1 = 0, t2 = 0;
  for (size_t k0 = 0; k0 < c->n0; k0++) {
    const double u = (double)k0 * c->d[0], W = c->d[0] * c->d[1] * (k0 ? 2.0 : 1.0);
    double s1 = 0, s2 = 0;
    for (size_t k1 = 0; k1 < c->n1; k1++) {
      double vv = ((double)k1 - (double)K1) * c->d[1];
      double e = exp(-0.5 * (a * u * u + 2 * b * u * vv + cc * vv * vv)), p = c->p2[k0 * c->n1 + k1];
      s1 += e * e * p;
      s2 += e * p;
    }
    t1 += W * s1;
    t2 += W * s2;
  }
  const double n = (double)c->N;
  *v = (t1 - 2 * n / (n - 1) * t2) / (4 * M_PI * M_PI) + 2 / ((n - 1) * 2 * M_PI * sqrt(det));
  return GFI_OK;
}

int sel_gauss_lscv2_ecf(size_t N, const double *x, const gfi_opts *o, size_t nH, const double *H,
                        double *v) {
  l2_ctx c;
  int st = l2_init(&c, N, x, o, 1);
  for (size_t k = 0; !st && k < nH; k++) st = l2_eval(&c, H + 4 * k, v + k);
  l2_free(&c);
  return st;
}

static int nm2(l2_ctx *c, const double *H0, double *H) {
  double p[4][3], f[4];
  double L11 = sqrt(H0[0]), L21 = H0[2] / L11, L22 = sqrt(H0[3] - L21 * L21);
  double base[3] = {log(L11), L21, log(L22)};
  for (int v = 0; v < 4; v++) {
    memcpy(p[v], base, sizeof base);
    if (v > 0) p[v][v - 1] += v == 2 ? 0.3 * L11 : 0.3;
    double Hv[4];
    H_of(p[v], Hv);
    int st = l2_eval(c, Hv, &f[v]);
    if (st) return st;
  }
  for (int it = 0; it < 400; it++) {
    /* order */
    for (int a = 0; a < 4; a++)
      for (int b = a + 1; b < 4; b++)
        if (f[b] < f[a]) {
          double t = f[a];
          f[a] = f[b];
          f[b] = t;
          for (int j = 0; j < 3; j++) {
            t = p[a][j];
            p[a][j] = p[b][j];
            p[b][j] = t;
          }
        }
    double spread = 0;
    for (int v = 1; v < 4; v++)
      for (int j = 0; j < 3; j++) spread = fmax(spread, fabs(p[v][j] - p[0][j]));
    if (spread < 1e-7) break;
    double cen[3] = {0, 0, 0};
    for (int v = 0; v < 3; v++)
      for (int j = 0; j < 3; j++) cen[j] += p[v][j] / 3;
    double pr[3], fr, Hr[4];
    for (int j = 0; j < 3; j++) pr[j] = cen[j] + (cen[j] - p[3][j]);
    H_of(pr, Hr);
    int st = l2_eval(c, Hr, &fr);
    if (st) return st;
    if (fr < f[0]) {
      double pe[3], fe, He[4];
      for (int j = 0; j < 3; j++) pe[j] = cen[j] + 2 * (cen[j] - p[3][j]);
      H_of(pe, He);
      st = l2_eval(c, He, &fe);
      if (st) return st;
      if (fe < fr) {
        memcpy(p[3], pe, sizeof pe);
        f[3] = fe;
      } else {
        memcpy(p[3], pr, sizeof pr);
        f[3] = fr;
      }
    } else if (fr < f[2]) {
      memcpy(p[3], pr, sizeof pr);
      f[3] = fr;
    } else {
      double pc[3], fc, Hc[4];
      for (int j = 0; j < 3; j++) pc[j] = cen[j] + 0.5 * (p[3][j] - cen[j]);
      H_of(pc, Hc);
      st = l2_eval(c, Hc, &fc);
      if (st) return st;
      if (fc < f[3]) {
        memcpy(p[3], pc, sizeof pc);
        f[3] = fc;
      } else
        for (int v = 1; v < 4; v++) {
          for (int j = 0; j < 3; j++) p[v][j] = p[0][j] + 0.5 * (p[v][j] - p[0][j]);
          double Hs[4];
          H_of(p[v], Hs);
          st = l2_eval(c, Hs, &f[v]);
          if (st) return st;
        }
    }
  }
  int best = 0;
  for (int v = 1; v < 4; v++)
    if (f[v] < f[best]) best = v;
  H_of(p[best], H);
  return GFI_OK;
}

/* ---- the selectors' cost models (compared by bl_decide) ---------------------- */

/* Nanoseconds of one core, measured at N = 1000 and 3000 on normal data
 * (tol 1e-14): a pair of the direct Gaussian LSCV (two exponentials) 11.6
 * in 1-D, 15.7 in 2-D; a node of the cf's LSCV integral per evaluation
 * about 12; gfi_ecf's fast route 80-280 per point and node (150 taken)
 * above a floor of 1e5; a pair of a direct psi_r sum 5.6 (1-D, dpik's
 * functionals); a 1-D search evaluates the criterion about 195 times, the
 * 2-D Nelder-Mead search 170. With these, auto takes the cf from about
 * N = 150 (1-D LSCV; 24x faster at N = 1000, where N > 1000 kept the
 * pairs) and N = 250 (dpik; 7x at N = 1000, where N > 4000 kept them). */
#define GS_PAIR_NS(D) ((D) == 1 ? 11.6 : 15.7)
#define GS_NODE_NS 12.0
#define GS_ECF_NS 150.0
#define GS_ECF_FIXED_NS 1e5
#define GS_PSI_PAIR_NS 5.6
#define GS_PSI_NODE_NS 20.0
#define GS_EVALS(D) ((D) == 1 ? 195.0 : 170.0)

/* The LSCV search's two routes for N points in D = 1, 2 with the normal
 * reference Hn: the pairs at every evaluation, or the cf once on the nodes
 * Hn's rule needs (1-D: h down to hn / 50; 2-D: the cover of Hn, which the
 * search widens as it goes) and a pass over them per evaluation. */
static void gs_costs(size_t N, size_t D, const double *x, const double *Hn, bl_cost *c) {
  double lo[2] = {x[0], D > 1 ? x[1] : 0}, hi[2] = {x[0], D > 1 ? x[1] : 0}, n = (double)N, Q;
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < D; j++) lo[j] = fmin(lo[j], x[i * D + j]), hi[j] = fmax(hi[j], x[i * D + j]);
  memset(c, 0, sizeof *c);
  c->direct_ok = 1;
  if (D == 1) {
    Q = (double)ecf_rule_nodes(hi[0] - lo[0], sqrt(90.0) / (sqrt(Hn[0]) / 50));
  } else {
    double tr = Hn[0] + Hn[3], det = Hn[0] * Hn[3] - Hn[1] * Hn[2];
    double lmin = 0.5 * tr - sqrt(fmax(0.25 * tr * tr - det, 0)), T = 12 / sqrt(lmin), k[2];
    for (int j = 0; j < 2; j++) k[j] = ceil(T * (hi[j] - lo[j] + 12 * sqrt(2 * Hn[3 * j])) / (2 * M_PI));
    Q = (k[0] + 1) * (2 * k[1] + 1);
    if (!(Q <= (double)L2_QMAX)) Q = 0;
  }
  c->direct = GS_EVALS(D) * GS_PAIR_NS(D) * 0.5 * n * n;
  c->fast = GS_ECF_FIXED_NS + GS_ECF_NS * (n + Q) + GS_EVALS(D) * GS_NODE_NS * Q;
  if (!(Q > 0)) c->fast_why = GFI_ROUTE_NODES;
}

int gfi_bw_lscv(size_t N, size_t D, const double *data, const gfi_opts *opts, double *H) {
  if (!H) return GFI_EINVAL;
  int st = sel_check_data(N, D, data);
  if (st) return st;
  if (D > 2) return GFI_EUNSUPPORTED;
  gfi_method m;
  double tol;
  st = bl_check_opts(opts, &tol, &m);
  if (st) return st;
  double Hn[4];
  st = gfi_bw_normal_ref(N, D, data, Hn);
  if (st) return st;
  if (D == 2) {
    /* AUTO: bl_decide on the cost model at the normal reference (the pairs
     * also where the cf's nodes explode later in the search) */
    if (m == GFI_METHOD_AUTO) {
      bl_cost bc;
      gs_costs(N, 2, data, Hn, &bc);
      st = bl_decide(m, &bc, &m, NULL);
      if (st) return st;
    }
    int fast = m == GFI_METHOD_FAST;
    l2_ctx c;
    st = l2_init(&c, N, data, opts, fast);
    if (!st) st = nm2(&c, Hn, H);
    l2_free(&c);
    if (st == GFI_ERANGE && m == GFI_METHOD_AUTO) {
      l2_init(&c, N, data, opts, 0);
      st = nm2(&c, Hn, H);
    }
    return st;
  }
  double hn = sqrt(Hn[0]), lo = hn / 50, hi = 4 * hn;
  if (m == GFI_METHOD_AUTO) {
    bl_cost bc;
    gs_costs(N, 1, data, Hn, &bc);
    st = bl_decide(m, &bc, &m, NULL);
    if (st) return st;
  }
  ecf_rule r;
  memset(&r, 0, sizeof r);
  if (m == GFI_METHOD_FAST) {
    st = ecf_rule_make(N, data, sqrt(90.0) / lo, opts ? opts->nthreads : 0, tol, &r);
    if (st) return st;
  }
  h1_ctx c = {N, data, opts, m == GFI_METHOD_FAST ? &r : NULL};
  gfi_select_result res;
  st = sel_search(crit_h1, &c, 1, lo, hi, 100, 0, &res, NULL);
  ecf_rule_free(&r);
  if (st) return st;
  H[0] = res.R[0] * res.R[0];
  return GFI_OK;
}

/* ---- direct plug-in (KernSmooth::dpik, level 2) ------------------------------ */

typedef struct {
  size_t N;
  const double *x;
  double g;
  int r;
  double *slots;
} psi_ctx;

static int psi_row(void *vc, size_t i, void *ws) {
  (void)ws;
  const psi_ctx *c = vc;
  double s = 0;
  for (size_t k = i + 1; k < c->N; k++) {
    double z = (c->x[i] - c->x[k]) / c->g, z2 = z * z;
    double he = c->r == 4 ? (z2 - 6) * z2 + 3 : ((z2 - 15) * z2 + 45) * z2 - 15;
    s += he * exp(-0.5 * z2);
  }
  c->slots[i] = s;
  return GFI_OK;
}

/* psi_r(g) = (1/N^2) sum_{i,k} phi_g^(r)(x_i - x_k), r = 4 or 6 */
static int psi_direct(size_t N, const double *x, int r, double g, int nt, double *out) {
  double *slots = malloc(N * sizeof *slots);
  if (!slots) return GFI_ENOMEM;
  psi_ctx c = {N, x, g, r, slots};
  int st = par_for(N, sel_pair_threads(nt, N), 16, psi_row, &c);
  double s = 0;
  if (!st) par_sum(slots, N, 1, &s);
  free(slots);
  if (st) return st;
  double he0 = r == 4 ? 3 : -15, n = (double)N;
  *out = (n * he0 + 2 * s) / (n * n) / (sqrt(2 * M_PI) * pow(g, r + 1));
  return GFI_OK;
}

int gfi_bw_dpi(size_t N, const double *data, const gfi_opts *opts, double *h) {
  if (!h) return GFI_EINVAL;
  int st = sel_check_data(N, 1, data);
  if (st) return st;
  gfi_method m;
  double tol;
  st = bl_check_opts(opts, &tol, &m);
  if (st) return st;
  int nt = opts ? opts->nthreads : 0;
  double s = sel_robust_scale(N, 1, data, 0), mean = 0;
  if (!(s == s)) return GFI_ENOMEM;
  for (size_t i = 0; i < N; i++) mean += data[i];
  mean /= (double)N;
  double *sx = malloc(N * sizeof *sx);
  if (!sx) return GFI_ENOMEM;
  for (size_t i = 0; i < N; i++) sx[i] = (data[i] - mean) / s;
  const double n = (double)N;
  double a6 = pow(2 * pow(sqrt(2.0), 9) / (7 * n), 1.0 / 9), psi6 = 0, psi4 = 0;
  if (m == GFI_METHOD_AUTO) {
    /* two functionals: N^2 / 2 pairs each, or the cf's nodes on [0, 14 / a6] */
    double lo = sx[0], hi = sx[0];
    for (size_t i = 0; i < N; i++) lo = fmin(lo, sx[i]), hi = fmax(hi, sx[i]);
    size_t K = ecf_rule_nodes(hi - lo, 14.0 / a6);
    bl_cost bc = {2 * GS_PSI_PAIR_NS * 0.5 * n * n,
                  2 * (GS_ECF_FIXED_NS + GS_ECF_NS * (n + (double)K) + GS_PSI_NODE_NS * (double)K), 0, 1,
                  K ? 0 : GFI_ROUTE_NODES};
    st = bl_decide(m, &bc, &m, NULL);
    if (st) {
      free(sx);
      return st;
    }
  }
  ecf_rule r;
  memset(&r, 0, sizeof r);
  if (m == GFI_METHOD_FAST) {
    st = ecf_rule_make(N, sx, 14.0 / a6, nt, tol, &r);
    if (!st) psi6 = -ecf_int(&r, 6, 0.5 * a6 * a6);
  } else
    st = psi_direct(N, sx, 6, a6, nt, &psi6);
  if (!st && !(psi6 < 0)) st = GFI_EQUAD;
  if (!st) {
    double a4 = pow(-3 * sqrt(2 / M_PI) / (psi6 * n), 1.0 / 7);
    if (m == GFI_METHOD_FAST) {
      if (14.0 / a4 > r.t[r.K - 1] * 1.0000001) {
        ecf_rule_free(&r);
        st = ecf_rule_make(N, sx, 14.0 / a4, nt, tol, &r);
      }
      if (!st) psi4 = ecf_int(&r, 4, 0.5 * a4 * a4);
    } else
      st = psi_direct(N, sx, 4, a4, nt, &psi4);
  }
  ecf_rule_free(&r);
  free(sx);
  if (st) return st;
  if (!(psi4 > 0)) return GFI_EQUAD;
  *h = s * pow(4 * M_PI, -0.1) * pow(1 / (psi4 * n), 0.2);
  return GFI_OK;
}

/* ---- leave-one-out CV of Gaussian NW ------------------------------------------ */

typedef struct {
  size_t N, D, V;
  const double *x, *y, *L;
  double *slots;
} gnw_ctx;

static int gnw_row(void *vc, size_t i, void *ws) {
  const gnw_ctx *c = vc;
  const size_t D = c->D, V = c->V, N = c->N;
  double *d = ws, *z = d + D, *num = z + D;
  /* shift by the smallest q so that the nearest neighbour has weight 1 */
  double qmin = INFINITY;
  for (size_t k = 0; k < N; k++) {
    if (k == i) continue;
    for (size_t j = 0; j < D; j++) d[j] = c->x[i * D + j] - c->x[k * D + j];
    qmin = fmin(qmin, quad_form(D, c->L, d, z));
  }
  double S = 0;
  for (size_t v = 0; v < V; v++) num[v] = 0;
  for (size_t k = 0; k < N; k++) {
    if (k == i) continue;
    for (size_t j = 0; j < D; j++) d[j] = c->x[i * D + j] - c->x[k * D + j];
    double K = exp(-0.5 * (quad_form(D, c->L, d, z) - qmin));
    S += K;
    for (size_t v = 0; v < V; v++) num[v] += K * c->y[k * V + v];
  }
  double r2 = 0;
  int flag = !(S > 0) || !isfinite(qmin);
  if (!flag)
    for (size_t v = 0; v < V; v++) {
      double e = c->y[i * V + v] - num[v] / S;
      r2 += e * e;
    }
  c->slots[2 * i] = flag ? 0 : r2;
  c->slots[2 * i + 1] = flag;
  return GFI_OK;
}

int gfi_gauss_nw_loocv(size_t N, size_t D, size_t V, const double *x, const double *y, const double *H,
                       const gfi_opts *opts, double *value, size_t *nflagged) {
  if (!value || !y || !H || V == 0) return GFI_EINVAL;
  int st = sel_check_data(N, D, x);
  if (st) return st;
  if (D > 64) return GFI_EDIM;
  st = gfi_check_finite(y, N * V, NULL);
  if (st) return st;
  double *L, *slots;
  st = chol_and_slots(D, H, N, 2, &L, &slots);
  if (st) return st;
  gnw_ctx c = {N, D, V, x, y, L, slots};
  par_spec sp = {N, sel_pair_threads(opts ? opts->nthreads : 0, N), (2 * D + V) * sizeof(double), 16, NULL, NULL};
  st = par_run(&sp, gnw_row, &c);
  double s[2] = {0, 0};
  if (!st) par_sum(slots, N, 2, s);
  free(L);
  free(slots);
  if (st) return st;
  size_t nf = (size_t)s[1];
  if (nflagged) *nflagged = nf;
  if (nf >= N) {
    *value = NAN;
    return GFI_EDENOM;
  }
  *value = s[0] / (double)(N - nf);
  return GFI_OK;
}

typedef struct {
  size_t N, D, V;
  const double *x, *y;
  const gfi_opts *o;
} gnw_sel;

static int crit_gnw(void *vc, const double *h, double *v) {
  const gnw_sel *c = vc;
  double *H = calloc(c->D * c->D, sizeof *H);
  if (!H) return GFI_ENOMEM;
  for (size_t j = 0; j < c->D; j++) H[j * c->D + j] = h[0] * h[0];
  int st = gfi_gauss_nw_loocv(c->N, c->D, c->V, c->x, c->y, H, c->o, v, NULL);
  free(H);
  if (st == GFI_EDENOM) {
    *v = INFINITY;
    st = GFI_OK;
  }
  return st;
}

int gfi_bw_nw_loocv(size_t N, size_t D, size_t V, const double *x, const double *y, const gfi_opts *opts,
                    double *h, double *value) {
  if (!h || !y || V == 0) return GFI_EINVAL;
  int st = sel_check_data(N, D, x);
  if (st) return st;
  if (D > 64) return GFI_EDIM;
  double s = INFINITY;
  for (size_t j = 0; j < D; j++) s = fmin(s, sel_robust_scale(N, D, x, j));
  if (!(s == s)) return GFI_ENOMEM;
  gnw_sel c = {N, D, V, x, y, opts};
  gfi_select_result r;
  st = sel_search(crit_gnw, &c, 1, s / 200, 2 * s, 60, 0, &r, NULL);
  if (st) return st;
  *h = r.R[0];
  if (value) *value = r.value;
  return GFI_OK;
}
