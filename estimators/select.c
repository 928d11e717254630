/* Least-squares cross-validation of the Fourier density estimator and
 * leave-one-out cross-validation of Fourier Nadaraya-Watson, direct and
 * through the band-limited engine, and the radius search (gfi/select.h;
 * maths in docs/theory.md section 7).
 *
 * The pair function of int p_hat^2. With K_R(u) = (R/A_l) sinc(R u)^l per
 * axis, (K_R * K_R)(u) = (R / 2 pi) G_l(R u), G_l(v) = int g(w) e^{i v w} dw,
 * g = kappa_l^2: a piecewise polynomial of degree 2l - 2 on [-l, l] with
 * knots t_j = -l + 2j. kappa_l = P / P(0), P(w) = sum_{k <= j} (-1)^k C(l,k)
 * (w + l - 2k)^(l-1) on piece j, so every derivative of P at a knot is an
 * integer (exact in long double). Integrating by parts on every piece,
 *
 *   G_l(v) = Re sum_{m} i^(m+1) v^-(m+1) sum_j [g^(m)]_{t_j} e^{i v t_j},
 *
 * [.] the jump at the knot (zero for m < l - 1: kappa_l is C^(l-2)). For
 * small |v| the terms cancel (they grow like v^-(2l-1)); there the Taylor
 * series G_l(v) = sum_n (-1)^n mu_2n v^2n / (2n)! with the exact moments
 * mu_2n = int w^2n g(w) dw is used instead. The switch |v| = vc(l) is where
 * both lose about the same (few) digits; tests/test_select.c checks G_l
 * against a fine quadrature to 1e-13. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/select.h"
#include "gfi/regression.h"
#include "gfi/validate.h"
#include "gfi/mise.h"
#include "bandlimited.h"
#include "engine.h"
#include "fail.h"
#include "freq_axis.h"
#include "kernel_internal.h"
#include "select_internal.h"
#include "../lib/nufft.h"
#include "par.h"
#include "sinc_series.h"


/* ---- the pair function G_l ------------------------------------------------- */


/* r-th derivative at t of the unnormalised B-spline of sinc^l (the density
 * of a sum of l Uniform(-1, 1) times 2^l (l-1)!) on the piece whose knots
 * -l + 2k lie at or left of kl: terms k with -l + 2k <= kl. 0 outside the
 * support [-l, l]. */
static long double bs_piece(int l, int kl, int r, long double t) {
  if (kl < -l || kl >= l) return 0;
  if (r > l - 1) return 0;
  long double ff = 1;
  for (int i = 0; i < r; i++) ff *= (long double)(l - 1 - i);
  long double s = 0;
  for (int k = 0; -l + 2 * k <= kl; k++) {
    long double b = t + l - 2 * k, p = 1;
    for (int e = 0; e < l - 1 - r; e++) p *= b;
    s += ((k % 2) ? -1 : 1) * (long double)kernel_binom(l, k) * ff * p;
  }
  return s;
}

/* kappa's r-th derivative at t on the piece with knots at or left of kl,
 * as sum_j u[j] bs_piece(j, ...) (u: the kernel's weights over P0_j). */
static long double kap_piece(const long double *u, int L, int kl, int r, long double t) {
  long double s = 0;
  for (int j = 1; j <= L; j++)
    if (u[j] != 0) s += u[j] * bs_piece(j, kl, r, t);
  return s;
}

void sel_pair_init(sel_pair *p, const gfi_kernel *kern) {
  memset(p, 0, sizeof *p);
  if (!kernel_is_sinc(kern)) { /* the family's own pair function (kernel_internal.h) */
    p->family = *kern;
    p->by_family = 1;
    return;
  }
  const int l = kern->l, d = 2 * l - 2, poly = kern->kind == GFI_PHI_POLY;
  p->l = l;
  /* kappa = sum_j u_j B_j with B_j the unnormalised B-spline: a power has
   * u_l = 1 and the square's scale c = 1 / P0^2; a polynomial u_j =
   * a_j A_j / (A P0_j) and c = 1 */
  long double u[SEL_MAXL + 1] = {0}, c = 1;
  int jmin = l;
  if (poly) {
    for (int j = 1; j <= l; j++)
      if (kern->coef[j] != 0) {
        u[j] = (long double)kern->coef[j] * gfi_pow_A(j) / kern->A / bs_piece(j, 0, 0, 0);
        if (j < jmin) jmin = j;
      }
  } else {
    long double P0 = bs_piece(l, 0, 0, 0);
    u[l] = 1;
    c = 1.0L / (P0 * P0);
  }
  p->jmin = jmin;
  p->t0 = -l;
  p->step = poly ? 1 : 2;
  p->nk = poly ? 2 * l + 1 : l + 1;
  for (int j = 0; j < p->nk; j++) {
    int t = p->t0 + p->step * j;
    long double L[SEL_MAXDEG + 1], Rr[SEL_MAXDEG + 1];
    for (int r = 0; r <= d; r++) {
      L[r] = kap_piece(u, l, t - 1, r, t);
      Rr[r] = kap_piece(u, l, t, r, t);
    }
    for (int m = 0; m <= d; m++) {
      if (m < jmin - 1) { /* kappa is C^(jmin - 2): no jump */
        p->jump[j][m] = 0;
        continue;
      }
      long double s = 0;
      for (int r = 0; r <= m; r++) s += (long double)kernel_binom(m, r) * (Rr[r] * Rr[m - r] - L[r] * L[m - r]);
      p->jump[j][m] = (double)(c * s);
    }
  }
  /* moments by Gauss-Legendre on each piece (exact: degree <= 2 SEL_NT + d) */
  enum { NG = SEL_NT + SEL_MAXDEG / 2 + 2 };
  double gx[NG], gw[NG];
  bl_gauss_legendre(NG, gx, gw);
  long double mu[SEL_NT];
  for (int n = 0; n < SEL_NT; n++) mu[n] = 0;
  const int npiece = poly ? 2 * l : l;
  const double hw = poly ? 0.5 : 1.0;
  for (int j = 0; j < npiece; j++) {
    int kl = -l + (poly ? 1 : 2) * j;
    double cm = kl + hw;
    for (int q = 0; q < NG; q++) {
      double w = cm + hw * gx[q];
      long double pv = kap_piece(u, l, kl, 0, w), g = (long double)(hw * gw[q]) * c * pv * pv, wp = 1;
      for (int n = 0; n < SEL_NT; n++) {
        mu[n] += g * wp;
        wp *= (long double)w * w;
      }
    }
  }
  long double fact = 1;
  for (int n = 0; n < SEL_NT; n++) {
    if (n > 0) fact *= (2.0L * n - 1) * (2.0L * n);
    p->taylor[n] = (double)(mu[n] / fact) * ((n % 2) ? -1 : 1);
  }
  /* switch: measured against a 400-point rule per piece, both forms are
   * within 1e-15 of G_l(0) on 1.2 <= |v| <= 2 for every l = 1..8 */
  p->vc = 1.6;
}

double sel_pair_G(const sel_pair *p, double v) {
  if (p->by_family) return kernel_pair(&p->family, v);
  v = fabs(v);
  const int l = p->l, d = 2 * l - 2;
  if (v < p->vc) {
    double v2 = v * v, s = 0;
    for (int n = SEL_NT - 1; n >= 0; n--) s = s * v2 + p->taylor[n];
    return s;
  }
  /* e^{i v t_j}, t_j = -l + step j */
  double cv = cos(v), sv = sin(v);
  double er[2 * SEL_MAXL + 1], ei[2 * SEL_MAXL + 1];
  double c2 = p->step == 2 ? cv * cv - sv * sv : cv, s2 = p->step == 2 ? 2 * sv * cv : sv;
  /* z^-l */
  double zr = 1, zi = 0;
  for (int k = 0; k < l; k++) {
    double nr = zr * cv + zi * sv, ni = zi * cv - zr * sv;
    zr = nr;
    zi = ni;
  }
  for (int j = 0; j < p->nk; j++) {
    er[j] = zr;
    ei[j] = zi;
    double nr = zr * c2 - zi * s2, ni = zr * s2 + zi * c2;
    zr = nr;
    zi = ni;
  }
  double inv = 1 / v, pw = 1, G = 0;
  for (int m = 0; m <= d; m++) {
    pw *= inv;
    if (m < p->jmin - 1) continue;
    double br = 0, bi = 0;
    for (int j = 0; j < p->nk; j++) {
      br += p->jump[j][m] * er[j];
      bi += p->jump[j][m] * ei[j];
    }
    /* Re(i^(m+1) (br + i bi)) */
    double re;
    switch ((m + 1) % 4) {
      case 0: re = br; break;
      case 1: re = -bi; break;
      case 2: re = -br; break;
      default: re = bi; break;
    }
    G += pw * re;
  }
  return G;
}

/* ---- checks ------------------------------------------------------------------ */


/* LSCV takes powers, polynomials and the flat-top (band-limited kernels);
 * LOO-CV, a regression criterion, the sinc families only (as gfi_nw_plan). */
static int check_band(const gfi_kernel *k) { return k ? gfi_kernel_check_band(k) : GFI_EINVAL; }
static int check_band_nw(const gfi_kernel *k) {
  return k && k->kind != GFI_PHI_CUSTOM && !kernel_is_sinc(k) ? GFI_EUNSUPPORTED : check_band(k);
}

/* ---- LSCV, direct --------------------------------------------------------------- */

typedef struct {
  size_t N, D;
  const gfi_kernel *k;
  const double *x, *R;
  const sel_pair *pr;
  double *slots; /* 2 per row: sum_{k > i} K, sum_{k > i} C (unscaled products) */
} lscv_ctx;

static int lscv_row(void *vc, size_t i, void *ws) {
  (void)ws;
  const lscv_ctx *c = vc;
  const size_t D = c->D;
  const gfi_kernel *kern = c->k;
  double sk = 0, sc = 0;
  const double *xi = c->x + i * D;
  for (size_t k = i + 1; k < c->N; k++) {
    const double *xk = c->x + k * D;
    double pk = 1, pc = 1;
    for (size_t j = 0; j < D; j++) {
      double u = c->R[j] * (xi[j] - xk[j]);
      pk *= kernel_spatial(kern, u);
      pc *= sel_pair_G(c->pr, u);
    }
    sk += pk;
    sc += pc;
  }
  c->slots[2 * i] = sk;
  c->slots[2 * i + 1] = sc;
  return GFI_OK;
}

static int lscv_direct(const gfi_kernel *kl, size_t N, size_t D, const double *x, const double *R,
                       int nt, double *value) {
  sel_pair pr;
  sel_pair_init(&pr, kl);
  double *slots = malloc(2 * N * sizeof *slots);
  if (!slots) return GFI_ENOMEM;
  lscv_ctx c = {N, D, kl, x, R, &pr, slots};
  int st = par_for(N, sel_pair_threads(nt, N), 16, lscv_row, &c);
  if (st) {
    free(slots);
    return st;
  }
  double s[2];
  par_sum(slots, N, 2, s);
  free(slots);
  const double A = kl->A, G0 = gfi_kappa_sq_integral(kl);
  double fk = 1, fc = 1, c0 = 1;
  for (size_t j = 0; j < D; j++) {
    fk *= R[j] / A;
    fc *= R[j] / (2 * M_PI);
    c0 *= R[j] / (2 * M_PI) * G0;
  }
  const double n = (double)N;
  double ip2 = (n * c0 + 2 * fc * s[1]) / (n * n);
  *value = ip2 - 4 * fk * s[0] / (n * (n - 1));
  return GFI_OK;
}

/* ---- LSCV, fast ------------------------------------------------------------------ */

#define SEL_NODES_MAX ((size_t)1 << 24)

/* |F(w_q)|^2 at the tensor nodes of ax (last axis fastest), F = (1/N) sum e^{-i w.x}. */
static int sel_F2(size_t N, size_t D, const double *xc, const double *lo, const double *hi,
                  const fa_axis *ax, double ntol, int nt, double *F2) {
  size_t Q = 1;
  for (size_t j = 0; j < D; j++) Q *= ax[j].n;
  double *nodes = malloc(Q * D * sizeof *nodes), *c = malloc(2 * N * sizeof *c);
  double *F = malloc(2 * Q * sizeof *F);
  int st = GFI_OK;
  if (!nodes || !c || !F) st = GFI_ENOMEM;
  if (!st) {
    for (size_t q = 0; q < Q; q++) {
      size_t rem = q;
      for (size_t j = D; j-- > 0;) {
        nodes[q * D + j] = ax[j].w[rem % ax[j].n];
        rem /= ax[j].n;
      }
    }
    for (size_t i = 0; i < N; i++) {
      c[2 * i] = 1.0 / (double)N;
      c[2 * i + 1] = 0;
    }
    nufft_opts o;
    nufft_default_opts(&o);
    o.tol = ntol;
    o.nthreads = nt;
    nufft3_plan *p = NULL;
    st = nufft3_plan_make(&p, (int)D, lo, hi, -1, Q, nodes, &o);
    if (!st) st = nufft3_add(p, N, xc, c);
    if (!st) st = nufft3_exec(p, F);
    nufft3_destroy(p);
  }
  if (!st)
    for (size_t q = 0; q < Q; q++) F2[q] = F[2 * q] * F[2 * q] + F[2 * q + 1] * F[2 * q + 1];
  free(nodes);
  free(c);
  free(F);
  return st;
}

/* Data centred at the middle of their box: xc (N x D), lo, hi, S. */
static double *centre(size_t N, size_t D, const double *x, double *lo, double *hi, double *S) {
  double *xc = malloc(N * D * sizeof *xc);
  if (!xc) return NULL;
  for (size_t j = 0; j < D; j++) {
    double a = x[j], b = x[j];
    for (size_t i = 0; i < N; i++) {
      a = fmin(a, x[i * D + j]);
      b = fmax(b, x[i * D + j]);
    }
    double m = 0.5 * (a + b);
    lo[j] = a - m;
    hi[j] = b - m;
    for (size_t i = 0; i < N; i++) {
      double v = x[i * D + j] - m;
      xc[i * D + j] = v;
      lo[j] = fmin(lo[j], v);
      hi[j] = fmax(hi[j], v);
    }
    S[j] = hi[j] - lo[j];
  }
  return xc;
}

/* |LSCV| against the scale of its bound (the rule's prod R_j and the
 * transforms' sum over nodes): taken as 1/25 a priori, which with the
 * engine's rule gives NUFFT and quadrature targets of 1e-3 tol. */
#define LSCV_RHO 0.04

static int lscv_fast(const gfi_kernel *kern, size_t N, size_t D, const double *x, const double *R,
                     double tol, int nt, double *value, double *bound) {
  const int deg = 2 * kernel_piece_degree(kern); /* kappa^2's, on each piece */
  if (D > BL_MAX_DIM) return GFI_EUNSUPPORTED;
  double lo[3], hi[3], S[3];
  double *xc = centre(N, D, x, lo, hi, S);
  if (!xc) return GFI_ENOMEM;
  fa_axis ax[3];
  memset(ax, 0, sizeof ax);
  int st = GFI_OK;
  size_t Q = 1;
  /* the scale of |LSCV| is about int p^2 >= 1 / (box volume); the rule's
   * relative target is tol times that scale over the rule's own (prod l R) */
  double e = LSCV_RHO / (4 * BL_NUFFT_SAFETY) * tol;
  if (e < 1e-17) e = 1e-17;
  for (size_t j = 0; j < D && !st; j++) {
    /* int g(w) |F(w)|^2 dw / 2pi, g of degree deg on each knot interval and
     * |g| <= 3 (kappa^2 - 2N/(N-1) kappa); the target relative to R */
    const fa_gl_spec sp = {deg, 3.0, (size_t)(deg / 2 + 2), R[j]};
    st = fa_gl_axis(kern, R[j], S[j] > 0 ? S[j] : 1e-300, j == 0, e / (double)D, &sp, &ax[j]);
    if (!st && ax[j].n > SEL_NODES_MAX / Q) st = GFI_ERANGE;
    if (!st) Q *= ax[j].n;
  }
  /* the engine's rule (bl_ntol) with rho = LSCV_RHO: the same a-priori
   * scale as the rule's target e above */
  double ntol = bl_ntol(tol, LSCV_RHO, 2);
  double *F2 = NULL;
  if (!st) {
    F2 = malloc(Q * sizeof *F2);
    if (!F2) st = GFI_ENOMEM;
  }
  if (!st) st = sel_F2(N, D, xc, lo, hi, ax, ntol, nt, F2);
  if (!st) {
    const double n = (double)N, cc = 2 * n / (n - 1);
    double t1 = 0, t2 = 0, sabs = 0;
    for (size_t q = 0; q < Q; q++) {
      size_t rem = q;
      double wk = 1, wk2 = 1;
      for (size_t j = D; j-- > 0;) {
        size_t i = rem % ax[j].n;
        rem /= ax[j].n;
        wk *= ax[j].gw[i] * ax[j].kap[i];
        wk2 *= ax[j].gw[i] * ax[j].kap[i] * ax[j].kap[i];
      }
      t1 += wk2 * F2[q];
      t2 += wk * F2[q];
      sabs += (fabs(wk2) + cc * fabs(wk)) * sqrt(F2[q]);
    }
    /* K0 = K(0): the kernel's peak phi(1) R_j / A per axis */
    const double A = kern->A, p1 = kernel_peak(kern);
    double K0 = 1, scale = 1;
    for (size_t j = 0; j < D; j++) {
      K0 *= p1 * R[j] / A;
      scale *= R[j] * (1 + ax[j].err);
    }
    *value = t1 - cc * t2 + 2 * K0 / (n - 1);
    double qb = 0;
    for (size_t j = 0; j < D; j++) qb += ax[j].err;
    double dF = BL_NUFFT_SAFETY * ntol;
    if (bound) *bound = qb * scale + 2 * dF * sabs + 3 * dF * dF * scale;
  }
  free(F2);
  free(xc);
  for (size_t j = 0; j < D; j++) fa_axis_free(&ax[j]);
  return st;
}

/* The data's span on each axis (D <= 3). */
static void data_spans(size_t N, size_t D, const double *x, double *S) {
  for (size_t j = 0; j < D; j++) {
    double lo = x[j], hi = x[j];
    for (size_t i = 1; i < N; i++) {
      lo = fmin(lo, x[i * D + j]);
      hi = fmax(hi, x[i * D + j]);
    }
    S[j] = hi - lo;
  }
}

/* The cost model of the criteria's auto routes, in bl's units. The direct
 * sum costs about 20 D units per ordered pair (loo_second_pays); LSCV sums
 * each pair once. The fast route: the transforms between the data and the
 * nodes that R and the data's span S need (bl_fast_estimate), one for
 * LSCV, two per column (ncol) for LOO-CV. *fast_ok 0 when the fast route
 * cannot run (its rule would exceed the node limits). At N = 300 in 2-D
 * with R from 0.5 to 32 the direct LOO-CV sum is about 10x cheaper, which
 * an N-only rule missed. */
static double crit_fast_cost(int loo, const gfi_kernel *k, size_t N, size_t D, size_t ncol, const double *S,
                             const double *R, double tol, int *fast_ok) {
  int explode;
  /* the estimate takes the NUFFT tolerance the route will run at (the
   * engine's rule, with the a-priori scale of lscv_fast), not tol itself */
  double cf = bl_fast_estimate((int)D, k, R, S, N, loo ? N : 0, ncol, bl_ntol(tol, LSCV_RHO, 2), &explode);
  *fast_ok = !explode;
  return cf;
}
static double crit_direct_cost(int loo, size_t N, size_t D) {
  return (loo ? 20.0 : 10.0) * (double)D * (double)N * (double)N;
}

/* Auto at one radius vector R. */
static gfi_method crit_route(gfi_method m, int loo, const gfi_kernel *k, size_t N, size_t D, size_t ncol,
                             const double *x, const double *R, double tol) {
  if (m != GFI_METHOD_AUTO) return m;
  bl_cost c = {crit_direct_cost(loo, N, D), 0, 0, 1, D > BL_MAX_DIM ? GFI_ROUTE_DIM : 0};
  if (!c.fast_why) {
    double S[3];
    data_spans(N, D, x, S);
    int ok;
    c.fast = crit_fast_cost(loo, k, N, D, ncol, S, R, tol, &ok);
    if (!ok) c.fast_why = GFI_ROUTE_NODES;
  }
  gfi_method r = GFI_METHOD_DIRECT;
  (void)bl_decide(m, &c, &r, NULL); /* auto with the direct route open: cannot fail */
  return r;
}

/* The estimator's scale prod_j R_j / A beyond e^700: its products overflow
 * (LSCV with R = 1e308 in 2-D gave NaN), as the density plans refuse. */
static int radii_overflow(const gfi_kernel *k, size_t D, const double *R) {
  double logC = 0;
  for (size_t j = 0; j < D; j++) logC += log(R[j] / k->A);
  return !(logC <= 700);
}

int gfi_lscv(const gfi_kernel *k, size_t N, size_t D, const double *data, const double *R,
             const gfi_opts *opts, double *value, double *bound, gfi_method *route) {
  if (!value) return GFI_EINVAL;
  int st = fail_named(check_band(k), "k");
  if (st) return st;
  st = fail_named(sel_check_data(N, D, data), "data");
  if (st) return st;
  if (!R) return GFI_EINVAL;
  st = fail_named(gfi_check_radii(R, D, NULL), "R");
  if (st) return st;
  if (radii_overflow(k, D, R)) return fail_param(GFI_ERANGE, "R");
  double tol;
  gfi_method m;
  st = bl_check_opts(opts, &tol, &m);
  if (st) return st;
  int nt = opts ? opts->nthreads : 0;
  m = crit_route(m, 0, k, N, D, 1, data, R, tol);
  if (m == GFI_METHOD_FAST && D > BL_MAX_DIM) return GFI_EUNSUPPORTED;
  if (bound) *bound = 0;
  if (route) *route = m;
  if (m == GFI_METHOD_DIRECT) return lscv_direct(k, N, D, data, R, nt, value);
  st = lscv_fast(k, N, D, data, R, tol, nt, value, bound);
  if (st == GFI_ERANGE && opts && opts->method == GFI_METHOD_AUTO) {
    if (route) *route = GFI_METHOD_DIRECT;
    if (bound) *bound = 0;
    return lscv_direct(k, N, D, data, R, nt, value);
  }
  return st;
}

/* ---- leave-one-out CV of NW ----------------------------------------------------- */

typedef struct {
  size_t N, D, V;
  const gfi_kernel *k;
  int odd; /* some odd sinc power: K_ik of both signs */
  const double *x, *y, *R;
  double dtol;
  double *slots; /* per row: squared residual, flagged (1/0) */
  /* N x D each, or NULL: R_j x_ij as hi + lo parts and the sine and cosine
   * of the exact product (engine_phase, loo_tables), so that a pair's sinc
   * needs no sin: as the NW engine, sin(u) by angle subtraction beyond
   * |u| = GFI_SINC_CUT, the series below (absolute error about 1e-16 / |u|;
   * lib/sinc_series.h), u = (rx_i - rx_k) + (rl_i - rl_k) exact to a few
   * ulps of u for any |R x| <= 2^52 (data far from the origin) */
  const double *rx, *rl, *sx, *cx;
} loo_ctx;

/* The phase tables of c (freed with *buf). */
static int loo_tables(loo_ctx *c, double **buf) {
  const size_t N = c->N, D = c->D;
  *buf = NULL;
  if (N > SIZE_MAX / D / 4 / sizeof(double)) return GFI_ENOMEM;
  double *t = malloc(4 * N * D * sizeof *t);
  if (!t) return GFI_ENOMEM;
  for (size_t i = 0; i < N * D; i++)
    engine_phase(c->R[i % D], c->x[i], t + i, t + 3 * N * D + i, t + N * D + i, t + 2 * N * D + i);
  c->rx = t, c->sx = t + N * D, c->cx = t + 2 * N * D, c->rl = t + 3 * N * D;
  *buf = t;
  return GFI_OK;
}

/* sinc(R_j (x_ij - x_kj)) from the tables */
static inline double loo_sinc(const loo_ctx *c, size_t i, size_t k) {
  double u = (c->rx[i] - c->rx[k]) + (c->rl[i] - c->rl[k]);
  if (fabs(u) < GFI_SINC_CUT) return gfi_sinc_series(u);
  return (c->sx[i] * c->cx[k] - c->cx[i] * c->sx[k]) / u;
}

/* Row i by the direct sum: residual^2 into *r2, 1 when flagged. */
static int loo_row_direct(const loo_ctx *c, size_t i, double *num, double *r2) {
  const size_t D = c->D, V = c->V;
  double S = 0, Aa = 0;
  for (size_t v = 0; v < V; v++) num[v] = 0;
  const double *xi = c->x + i * D;
  for (size_t k = 0; k < c->N; k++) {
    if (k == i) continue;
    const double *xk = c->x + k * D;
    double K = 1;
    for (size_t j = 0; j < D; j++) {
      double s = c->rx ? loo_sinc(c, i * D + j, k * D + j) : gfi_sinc(c->R[j] * (xi[j] - xk[j]));
      K *= kernel_phi(c->k, s);
    }
    S += K;
    Aa += fabs(K);
    for (size_t v = 0; v < V; v++) num[v] += c->y[k * V + v] * K;
  }
  if (Aa == 0 || S <= c->dtol * Aa) {
    *r2 = 0;
    return 1;
  }
  double r = 0;
  for (size_t v = 0; v < V; v++) {
    double d = c->y[i * V + v] - num[v] / S;
    r += d * d;
  }
  *r2 = r;
  return 0;
}

static int loo_task(void *vc, size_t i, void *ws) {
  const loo_ctx *c = vc;
  double r2;
  int f = loo_row_direct(c, i, ws, &r2);
  c->slots[2 * i] = r2;
  c->slots[2 * i + 1] = f;
  return GFI_OK;
}

static int loo_finish(const double *slots, size_t N, double *value, size_t *nflag) {
  double s[2];
  par_sum(slots, N, 2, s);
  size_t nf = (size_t)s[1];
  if (nflag) *nflag = nf;
  if (nf >= N) {
    *value = NAN;
    return GFI_EDENOM;
  }
  *value = s[0] / (double)(N - nf);
  return GFI_OK;
}

typedef struct {
  const loo_ctx *c;
  const size_t *rows;
} loo_redo_ctx;

static int loo_redo(void *vc, size_t t, void *ws) {
  const loo_redo_ctx *r = vc;
  size_t i = r->rows[t];
  double r2;
  int f = loo_row_direct(r->c, i, ws, &r2);
  r->c->slots[2 * i] = r2;
  r->c->slots[2 * i + 1] = f;
  return GFI_OK;
}

/* Rows settled by a fast evaluation: out (n x (V + 1), row t for data row
 * rows[t], or t when rows is NULL) holds the sums over all k of K_ik and
 * K_ik y_k, self term included, with the absolute bounds babs. A row is
 * settled when its denominator is clear of the flag threshold and of zero by
 * more than the bound and its fit's bound is within lim; the others go to
 * redo. *worst: the largest fit bound of a settled row. */
/* fneed (may be NULL): the smallest factor by which the bounds must shrink
 * for an unsettled row to settle (as NW's nw_need, regression.c; 0 for a
 * denominator within its bound of 0), left as it is when no row can. */
static void loo_settle(const loo_ctx *c, const double *out, const double *babs, double K0,
                       const size_t *rows, size_t n, double lim, double *worst, size_t *redo,
                       size_t *nr, double *fneed) {
  const size_t N = c->N, V = c->V, nc = V + 1;
  /* sum_{k != i} |K_ik| (R/A units) is at most (N - 1) K0 */
  const double Abound = (double)(N - 1) * K0;
  size_t m = 0;
  for (size_t t = 0; t < n; t++) {
    const size_t i = rows ? rows[t] : t;
    double den = out[t * nc] - K0, eden = babs[0];
    int ok = den - eden > c->dtol * (c->odd ? Abound : den + eden) && den - eden > 0;
    double r2 = 0, eb = 0;
    if (ok)
      for (size_t v = 0; v < V; v++) {
        double num = out[t * nc + v + 1] - K0 * c->y[i * V + v];
        double mv = num / den;
        double d = c->y[i * V + v] - mv;
        r2 += d * d;
        double em = (babs[v + 1] + fabs(mv) * eden) / (den - eden);
        eb = fmax(eb, em);
      }
    if (ok && eb <= lim) {
      c->slots[2 * i] = r2;
      c->slots[2 * i + 1] = 0;
      *worst = fmax(*worst, eb);
    } else {
      redo[m++] = i;
      if (fneed && !(den > eden)) {
        if (den > -eden) *fneed = 0; /* the sign unsettled: the tightest pass */
      } else if (fneed) {
        double fm = 0, eN = 0;
        for (size_t v = 0; v < V; v++) {
          fm = fmax(fm, fabs((out[t * nc + v + 1] - K0 * c->y[i * V + v]) / den));
          eN = fmax(eN, babs[v + 1]);
        }
        *fneed = fmin(*fneed, lim * den / (eN + fm * eden + lim * eden));
      }
    }
  }
  *nr = m;
}

/* The band-limited sums of the LOO fit (columns 1 and y) over all data at
 * tolerance tol, evaluated at the M rows listed (all rows when rows is NULL);
 * out: M x (V + 1), babs: the columns' bounds, *K0: the kernel's peak. */
static int loo_sums(const loo_ctx *c, const double *cf, double tol, int nt, const size_t *rows,
                    size_t M, double *out, double *babs, double *K0, double *cost) {
  const size_t N = c->N, D = c->D, nc = c->V + 1;
  gfi_opts o;
  gfi_default_opts(&o);
  o.method = GFI_METHOD_FAST;
  o.tol = tol;
  o.nthreads = nt;
  double *q = NULL;
  bl_sum *s = NULL;
  if (rows) {
    q = malloc(M * D * sizeof *q);
    if (!q) return GFI_ENOMEM;
    for (size_t t = 0; t < M; t++) memcpy(q + t * D, c->x + rows[t] * D, D * sizeof *q);
  }
  const double *qx = rows ? q : c->x;
  int st = bl_sum_make(&s, (int)D, c->k, N, c->x, nc, cf, c->R, &o, 1.0);
  gfi_fast_info info;
  gfi_method route;
  bl_target t = {M, qx, NULL, NULL, NULL};
  if (!st) st = bl_run(s, &t, 1.0, NULL, NULL, &out, babs, &info, &route);
  if (!st) *K0 = s->K0;
  /* the pass's cost in the cost model's units: the forward transform of the
   * data onto the rule (the backward one to the rows is of the same order) */
  if (!st && cost) *cost = 2 * (double)nc * bl_nufft_cost((int)D, N, s->r0.Q, s->gf0, s->ntol);
  bl_sum_free(s);
  free(q);
  return st;
}

/* The second pass's tolerance: the engine's tighten policy, BL_TIGHTEN_MARGIN
 * times the factor that settles every row left that a tighter pass can
 * settle (the sums' bounds scale with tol down to the NUFFT's floor BL_NTOL_MIN;
 * it was the first's over 10^6 whatever the rows needed). It runs when
 * the rows left would cost the direct sum more than twice the first pass (a
 * tighter pass costs up to about twice as much): nr N pairs at about 20 D
 * units of the cost model each (a row's pair is D sinc^l factors; measured
 * 55 ns of CPU per pair in 2-D with a sin per factor, about 21 ns with the
 * phase tables of loo_tables, against 0.7 to 1.4 ns per unit of a fast
 * pass). force: 1 always, 0 never, -1 by that rule. */
static int loo_second_pays(size_t nr, size_t N, size_t D, double cost1, int force) {
  if (force >= 0) return force && nr > 0;
  bl_cost c = {20.0 * (double)D * (double)N * (double)nr, 2 * cost1, 0, 1, 0};
  gfi_method r = GFI_METHOD_DIRECT;
  (void)bl_decide(GFI_METHOD_AUTO, &c, &r, NULL); /* cannot fail: both routes open */
  return r == GFI_METHOD_FAST;
}

static int loo_fast(loo_ctx *c, double tol, int nt, int force, double *bound, size_t *left) {
  const size_t N = c->N, D = c->D, V = c->V, nc = V + 1;
  if (D > BL_MAX_DIM) return GFI_EUNSUPPORTED;
  if (N > SIZE_MAX / sizeof(double) / nc) return GFI_ENOMEM;
  double *cf = malloc(N * nc * sizeof *cf), *out = malloc(N * nc * sizeof *out);
  double *babs = malloc(nc * sizeof *babs);
  size_t *redo = malloc(N * sizeof *redo), *redo2 = NULL;
  int st = (!cf || !out || !babs || !redo) ? GFI_ENOMEM : GFI_OK;
  if (!st) {
    for (size_t i = 0; i < N; i++) {
      cf[i] = 1;
      for (size_t v = 0; v < V; v++) cf[(v + 1) * N + i] = c->y[i * V + v];
    }
  }
  double K0 = 0, cost1 = 0;
  if (!st) st = loo_sums(c, cf, tol, nt, NULL, N, out, babs, &K0, &cost1);
  size_t nr = 0;
  double ymax = 0, worst = 0;
  for (size_t i = 0; !st && i < N * V; i++) ymax = fmax(ymax, fabs(c->y[i]));
  const double lim = tol * fmax(ymax, 1e-300);
  double fneed = 1;
  if (!st) loo_settle(c, out, babs, K0, NULL, N, lim, &worst, redo, &nr, &fneed);
  if (left) left[0] = nr;
  /* The rows left have small denominators, which the first pass's global
   * bound cannot resolve: a second pass over all data at a tighter
   * tolerance, evaluated at those rows only, settles most of them. */
  if (!st && loo_second_pays(nr, N, D, cost1, force)) {
    redo2 = malloc(nr * sizeof *redo2);
    if (!redo2) st = GFI_ENOMEM;
    /* not below 1e-16 (the NUFFTs stop at BL_NTOL_MIN; the quadrature's
     * node count grows with the target) */
    double tol2 = fmax(tol * BL_TIGHTEN_MARGIN * fmin(fneed, 1.0), 1e-16);
    int s2 = st ? st : loo_sums(c, cf, tol2, nt, redo, nr, out, babs, &K0, NULL);
    if (s2 == GFI_ENOMEM) st = s2;
    else if (!s2) {
      size_t nr2 = 0;
      loo_settle(c, out, babs, K0, redo, nr, lim, &worst, redo2, &nr2, NULL);
      memcpy(redo, redo2, nr2 * sizeof *redo);
      nr = nr2;
    }
    /* any other failure (a rule too large at tol2): the direct sum below */
  }
  if (!st && nr) {
    loo_redo_ctx rc = {c, redo};
    par_spec sp = {nr, par_threads(nt), V * sizeof(double), 1, NULL, NULL};
    st = par_run(&sp, loo_redo, &rc);
  }
  if (bound) {
    /* |sum r2| error: per row 2 |resid| em + em^2, summed over V */
    *bound = 0;
    if (!st) {
      double b = 0;
      for (size_t i = 0; i < N; i++)
        if (c->slots[2 * i + 1] == 0) b += (2 * sqrt(c->slots[2 * i]) + worst) * worst * (double)V;
      *bound = b / (double)N;
    }
  }
  if (left) left[1] = nr;
  free(cf);
  free(out);
  free(babs);
  free(redo);
  free(redo2);
  return st;
}

/* Whether a band-limited kernel carries an odd sinc power (weights of both signs). */
static int kernel_odd(const gfi_kernel *k) {
  if (k->kind == GFI_PHI_POW) return k->l % 2;
  for (int j = 1; j <= k->l; j += 2)
    if (k->coef[j] != 0) return 1;
  return 0;
}

int sel_loocv_fast(int l, size_t N, size_t D, size_t V, const double *x, const double *y,
                   const double *R, double denom_tol, double tol, int nthreads, int second,
                   double *value, double *bound, size_t left[2]) {
  gfi_kernel kl;
  int st = gfi_kernel_pow(&kl, l);
  if (st) return st;
  double *slots = malloc(2 * N * sizeof *slots);
  if (!slots) return GFI_ENOMEM;
  loo_ctx c = {N, D, V, &kl, l % 2, x, y, R, denom_tol, slots, NULL, NULL, NULL, NULL};
  double *tab;
  st = loo_tables(&c, &tab);
  if (!st) st = loo_fast(&c, tol, nthreads, second, bound, left);
  if (!st) st = loo_finish(slots, N, value, NULL);
  free(tab);
  free(slots);
  return st;
}

int gfi_loocv(const gfi_kernel *k, size_t N, size_t D, size_t V, const double *x, const double *y,
              const double *R, const gfi_opts *opts, double denom_tol, double *value,
              size_t *nflagged, double *bound, gfi_method *route) {
  if (!value || !y || V == 0) return GFI_EINVAL;
  int st = fail_named(check_band_nw(k), "k");
  if (st) return st;
  st = fail_named(sel_check_data(N, D, x), "x");
  if (st) return st;
  if (N > SIZE_MAX / V / sizeof(double)) return GFI_ENOMEM;
  st = fail_named(gfi_check_finite(y, N * V, NULL), "y");
  if (st) return st;
  if (!R) return GFI_EINVAL;
  st = fail_named(gfi_check_radii(R, D, NULL), "R");
  if (st) return st;
  if (radii_overflow(k, D, R)) return fail_param(GFI_ERANGE, "R");
  if (!(denom_tol >= 0 && denom_tol < 1)) return fail_param(GFI_EINVAL, "denom_tol");
  if (denom_tol == 0) denom_tol = GFI_NW_DENOM_TOL;
  double tol;
  gfi_method m;
  st = bl_check_opts(opts, &tol, &m);
  if (st) return st;
  int nt = opts ? opts->nthreads : 0;
  m = crit_route(m, 1, k, N, D, V + 1, x, R, tol);
  if (m == GFI_METHOD_FAST && D > BL_MAX_DIM) return GFI_EUNSUPPORTED;
  double *slots = malloc(2 * N * sizeof *slots);
  if (!slots) return GFI_ENOMEM;
  loo_ctx c = {N, D, V, k, kernel_odd(k), x, y, R, denom_tol, slots, NULL, NULL, NULL, NULL};
  double *tab;
  if ((st = loo_tables(&c, &tab))) {
    free(slots);
    return st;
  }
  if (bound) *bound = 0;
  if (m == GFI_METHOD_FAST) {
    st = loo_fast(&c, tol, nt, -1, bound, NULL);
    if (st == GFI_ERANGE && opts && opts->method == GFI_METHOD_AUTO) m = GFI_METHOD_DIRECT;
    else if (st) {
      free(tab);
      free(slots);
      return st;
    }
  }
  if (m == GFI_METHOD_DIRECT) {
    par_spec sp = {N, sel_pair_threads(nt, N), V * sizeof(double), 16, NULL, NULL};
    st = par_run(&sp, loo_task, &c);
    if (st) {
      free(tab);
      free(slots);
      return st;
    }
  }
  if (route) *route = m;
  st = loo_finish(slots, N, value, nflagged);
  free(tab);
  free(slots);
  return st;
}

/* ---- the search ------------------------------------------------------------------ */

void gfi_select_default_opts(gfi_select_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  gfi_default_opts(&o->base);
}

/* Shared with select_gauss.c and select_hpi.c (select_internal.h), here so
 * that select.c needs nothing of theirs. */
int sel_pair_threads(int n, size_t N) { return (double)N * (double)N < 8388608.0 ? 1 : par_threads(n); }

int sel_check_data(size_t N, size_t D, const double *x) {
  if (!x) return GFI_EINVAL;
  if (N < 2) return GFI_EEMPTY;
  int st = gfi_check_dim(D);
  if (st) return st;
  if (N > ((size_t)1 << 52) / D) return GFI_EDIM;
  return gfi_check_finite(x, N * D, NULL);
}

double sel_robust_scale(size_t N, size_t D, const double *x, size_t j) {
  double *v = malloc(N * sizeof *v);
  if (!v) return NAN;
  double m = 0, ss = 0;
  for (size_t i = 0; i < N; i++) {
    v[i] = x[i * D + j];
    m += v[i];
  }
  m /= (double)N;
  for (size_t i = 0; i < N; i++) ss += (v[i] - m) * (v[i] - m);
  double sd = sqrt(ss / (double)(N - 1));
  double q1 = sel_quantile(v, N, 0.25), q3 = sel_quantile(v, N, 0.75);
  free(v);
  double iqr = (q3 - q1) / 1.349;
  double s = fmin(sd, iqr);
  if (!(s > 0)) s = sd > 0 ? sd : 1;
  return s;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Type-7 quantile (R's default); sorts v. */
double sel_quantile(double *v, size_t n, double p) {
  qsort(v, n, sizeof *v, cmpd);
  double h = (double)(n - 1) * p;
  size_t lo = (size_t)floor(h);
  if (lo + 1 >= n) return v[n - 1];
  return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

/* f at log radius t, written to R[j0..j1) (the other entries as they are). */
static int sel_eval(sel_crit f, void *ctx, double *R, size_t j0, size_t j1, double t, double *v,
                    size_t *evals) {
  for (size_t j = j0; j < j1; j++) R[j] = exp(t);
  (*evals)++;
  return f(ctx, R, v);
}

/* Brent's minimisation (parabolic interpolation with golden-section steps;
 * Brent 1973, ch. 5) of f on log r in [a, b] from the bracketing triple
 * w < x < v inside it, with f(x) below f(w) and f(v) (known values: the
 * first step is the parabola through the three). Ends when the minimiser
 * is located within SEL_TOL in log r. The lowest value seen and its t. */
#define SEL_TOL 1e-5
static int sel_brent(sel_crit f, void *ctx, double *R, size_t j0, size_t j1, double a, double b, double x,
                     double fx, double w, double fw, double v, double fv, double *bt, double *bv,
                     size_t *evals) {
  const double cg = 0.5 * (3 - sqrt(5.0));
  double d = 0, e = b - a; /* e large: the first step may be parabolic */
  int st = GFI_OK;
  for (int it = 0; it < 100; it++) {
    double xm = 0.5 * (a + b), tol1 = 1e-12 * fabs(x) + SEL_TOL / 3, tol2 = 2 * tol1;
    if (fabs(x - xm) <= tol2 - 0.5 * (b - a)) break;
    int golden = 1;
    if (fabs(e) > tol1) {
      double r = (x - w) * (fx - fv), q = (x - v) * (fx - fw), p = (x - v) * q - (x - w) * r;
      q = 2 * (q - r);
      if (q > 0) p = -p;
      else q = -q;
      double etemp = e;
      e = d;
      if (fabs(p) < fabs(0.5 * q * etemp) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        double u = x + d;
        if (u - a < tol2 || b - u < tol2) d = xm >= x ? tol1 : -tol1;
        golden = 0;
      }
    }
    if (golden) {
      e = x >= xm ? a - x : b - x;
      d = cg * e;
    }
    double u = x + (fabs(d) >= tol1 ? d : (d > 0 ? tol1 : -tol1)), fu;
    st = sel_eval(f, ctx, R, j0, j1, u, &fu, evals);
    if (st) break;
    if (fu <= fx) {
      if (u >= x) a = x;
      else b = x;
      v = w, fv = fw;
      w = x, fw = fx;
      x = u, fx = fu;
    } else {
      if (u < x) a = u;
      else b = u;
      if (fu <= fw || w == x) {
        v = w, fv = fw;
        w = u, fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u, fv = fu;
      }
    }
  }
  *bt = x;
  *bv = fx;
  return st;
}

/* The interval [a, b] of log r refined: a scan of SEL_SUB + 1 radii across
 * it, then Brent's method on its lowest point and that point's neighbours
 * (two minima close together in one bracket of the coarse scan are told
 * apart at 1/SEL_SUB of its width). known[k] (k = 0, 1, 2; NULL: none)
 * gives the value at the scan's points 0, SEL_SUB / 2 and SEL_SUB where it
 * is known (NaN: not known), at the radius kr[k], which is not evaluated
 * again. A lowest point at an end of the scan is compared with the middle
 * of its interval. The lowest value seen and the radius it was seen at. */
#define SEL_SUB 16
static int sel_refine(sel_crit f, void *ctx, double *R, size_t j0, size_t j1, double a, double b,
                      const double *kr, const double *known, double *br, double *bv, size_t *evals) {
  double v[SEL_SUB + 1], t[SEL_SUB + 1], r[SEL_SUB + 1];
  size_t bi = 0;
  for (size_t k = 0; k <= SEL_SUB; k++) {
    size_t kk = k == 0 ? 0 : (k == SEL_SUB / 2 ? 1 : (k == SEL_SUB ? 2 : 3));
    if (known && kk < 3 && known[kk] == known[kk]) {
      r[k] = kr[kk];
      t[k] = log(r[k]);
      v[k] = known[kk];
    } else {
      t[k] = a + (b - a) * (double)k / SEL_SUB;
      r[k] = exp(t[k]);
      int st = sel_eval(f, ctx, R, j0, j1, t[k], &v[k], evals);
      if (st) return st;
    }
    if (v[k] < v[bi] || !(v[bi] == v[bi])) bi = k;
  }
  double gt = t[bi], gv = v[bi];
  int st = GFI_OK;
  if (bi == 0 || bi == SEL_SUB) {
    /* the lowest point at an end: the middle of its interval decides */
    size_t nb = bi == 0 ? 1 : SEL_SUB - 1;
    double tm = 0.5 * (t[bi] + t[nb]), fm;
    st = sel_eval(f, ctx, R, j0, j1, tm, &fm, evals);
    if (!st && fm < gv) {
      size_t il = bi < nb ? bi : nb, ih = bi < nb ? nb : bi;
      st = sel_brent(f, ctx, R, j0, j1, t[il], t[ih], tm, fm, t[il], v[il], t[ih], v[ih], &gt, &gv, evals);
    }
  } else if (v[bi] < v[bi - 1] && v[bi] < v[bi + 1]) {
    st = sel_brent(f, ctx, R, j0, j1, t[bi - 1], t[bi + 1], t[bi], v[bi], t[bi - 1], v[bi - 1], t[bi + 1],
                   v[bi + 1], &gt, &gv, evals);
  }
  if (st) return st;
  /* Brent's x moves only to points it evaluated at exp(x) */
  *br = gt == t[bi] && gv == v[bi] ? r[bi] : exp(gt);
  *bv = gv;
  return GFI_OK;
}

/* Local minima of the scan v[0..n) refined in one round (edges count). */
#define SEL_REFINE 4
/* Doublings of the scan after the first: at most this many. */
#define SEL_ROUNDS 3

int sel_search(sel_crit f, void *ctx, size_t D, double lo, double hi, size_t nscan, int per_axis,
               gfi_select_result *res, double *curve) {
  memset(res, 0, sizeof *res);
  res->D = D;
  res->R_lo = lo;
  res->R_hi = hi;
  res->nscan = nscan;
  /* The isotropic search. A log scan of nscan radii, then refinement
   * (sel_refine: a finer scan of the bracket, reusing the scan's three
   * values in it, then Brent's method) of the lowest local minima of the scan (up to SEL_REFINE;
   * not only of the lowest point: a rough criterion such as LOO-CV can hold
   * its minimum in the bracket of a point that scanned slightly higher),
   * then the scan doubled (midpoints added) and its minima refined again,
   * until two successive rounds agree on the minimiser (log R within 1e-4),
   * at most SEL_ROUNDS doublings; a scan with one local minimum is not
   * doubled (its bracket's finer scan is the check). A minimum is refined only when its scan
   * value is within 4 gains of the best value so far (a gain: how much the
   * first refinement lowered the best scan value; refinement cannot lower a
   * bracket by much more than its neighbour's) and its bracket does not
   * hold the best radius already. */
  if (nscan > SIZE_MAX / (4 * sizeof(double)) / ((size_t)1 << SEL_ROUNDS)) return GFI_ENOMEM;
  size_t nmax = (nscan - 1) * ((size_t)1 << SEL_ROUNDS) + 1;
  double *val = malloc(4 * nmax * sizeof *val), R[3];
  if (!val) return GFI_ENOMEM;
  /* rad: the radius each scan value was computed at */
  double *tmp = val + nmax, *rad = val + 2 * nmax, *tmpr = val + 3 * nmax;
  const size_t Dr = D > 3 ? 1 : D;
  const double L0 = log(lo), LW = log(hi / lo);
  int st = GFI_OK;
  for (size_t s = 0; s < nscan && !st; s++) {
    double r = lo * pow(hi / lo, (double)s / (double)(nscan - 1));
    for (size_t j = 0; j < Dr; j++) R[j] = r;
    st = f(ctx, R, &val[s]);
    rad[s] = r;
    res->evals++;
    if (curve) {
      curve[2 * s] = r;
      curve[2 * s + 1] = val[s];
    }
  }
  size_t n = nscan, best = 0;
  double bestv = INFINITY, bestr = lo, prevr = 0, gain = -1;
  for (int round = 0; !st; round++) {
    /* the scan's local minima, lowest first (insertion into SEL_REFINE slots) */
    size_t cand[SEL_REFINE], nc = 0, nloc = 0, sbest = 0;
    for (size_t s = 0; s < n; s++) {
      if (val[s] < val[sbest] || !(val[sbest] == val[sbest])) sbest = s;
      double a = s > 0 ? val[s - 1] : INFINITY, b = s + 1 < n ? val[s + 1] : INFINITY;
      if (!(val[s] < a && val[s] <= b)) continue;
      nloc++;
      size_t k = nc < SEL_REFINE ? nc++ : SEL_REFINE;
      if (k == SEL_REFINE && !(val[s] < val[cand[SEL_REFINE - 1]])) continue;
      if (k == SEL_REFINE) k = SEL_REFINE - 1;
      while (k > 0 && val[s] < val[cand[k - 1]]) {
        cand[k] = cand[k - 1];
        k--;
      }
      cand[k] = s;
    }
    if (round == 0) res->nlocal = nloc;
    if (nc == 0) cand[nc++] = sbest; /* no strict local minimum (NaN or flat): the lowest point */
    if (val[sbest] < bestv) {
      bestv = val[sbest];
      bestr = rad[sbest];
      best = sbest * (nmax - 1) / (n - 1);
    }
    for (size_t c = 0; c < nc && !st; c++) {
      size_t s = cand[c];
      double a = L0 + LW * (double)(s > 0 ? s - 1 : 0) / (double)(n - 1);
      double b = L0 + LW * (double)(s + 1 < n ? s + 1 : s) / (double)(n - 1);
      if (gain >= 0 && (!(val[s] - 4 * gain < bestv) || (log(bestr) >= a && log(bestr) <= b))) continue;
      double gr_, gv, before = bestv;
      /* the scan's values at the bracket's ends and middle are reused */
      size_t s0 = s > 0 ? s - 1 : 0, s1 = s + 1 < n ? s + 1 : s;
      double kr[3] = {rad[s0], rad[s], rad[s1]}, kv[3] = {val[s0], s0 < s && s < s1 ? val[s] : NAN, val[s1]};
      st = sel_refine(f, ctx, R, 0, Dr, a, b, kr, kv, &gr_, &gv, &res->evals);
      if (!st && gain < 0) gain = fmax(before - gv, 0.0);
      if (!st && gv < bestv) {
        bestv = gv;
        bestr = gr_;
        best = s * (nmax - 1) / (n - 1);
      }
    }
    if (st) break;
    if (round == 0 && res->nlocal <= 1) break; /* a unimodal scan: its one bracket was refined */
    if (round > 0 && fabs(log(bestr / prevr)) <= 1e-4) break; /* two rounds agree */
    if (round == SEL_ROUNDS) break;
    prevr = bestr;
    /* double the scan: old values at even positions, midpoints evaluated */
    size_t n2 = 2 * n - 1;
    for (size_t s = 0; s < n; s++) tmp[2 * s] = val[s], tmpr[2 * s] = rad[s];
    for (size_t s = 1; s < n2 && !st; s += 2) {
      double r = exp(L0 + LW * (double)s / (double)(n2 - 1));
      for (size_t j = 0; j < Dr; j++) R[j] = r;
      st = f(ctx, R, &tmp[s]);
      tmpr[s] = r;
      res->evals++;
    }
    memcpy(val, tmp, n2 * sizeof *val);
    memcpy(rad, tmpr, n2 * sizeof *rad);
    n = n2;
  }
  free(val);
  if (st) return st;
  res->at_edge = best == 0 || best == nmax - 1;
  for (size_t j = 0; j < Dr; j++) res->R[j] = bestr;
  res->value = bestv;
  if (!per_axis || D == 1) return GFI_OK;
  /* per axis: a local scan and Brent's method per axis (sel_refine over
   * [R_j / 4, 4 R_j], whose middle is the current value), in sweeps */
  for (int sweep = 0; sweep < 6; sweep++) {
    double moved = 0;
    for (size_t j = 0; j < D; j++) {
      double Rj0 = res->R[j], br, bv;
      for (size_t k = 0; k < D; k++) R[k] = res->R[k];
      double kr[3] = {NAN, Rj0, NAN}, kv[3] = {NAN, res->value, NAN};
      st = sel_refine(f, ctx, R, j, j + 1, log(Rj0 / 4), log(Rj0 * 4), kr, kv, &br, &bv, &res->evals);
      if (st) return st;
      if (bv < res->value) {
        moved = fmax(moved, fabs(br / Rj0 - 1));
        res->R[j] = br;
        res->value = bv;
      }
    }
    if (moved < 1e-3) break;
  }
  return GFI_OK;
}

/* gfi_minimize_radius: the user's criterion of one radius as a sel_crit. */
typedef struct {
  gfi_radius_fn f;
  void *ctx;
} radius_ctx;

static int crit_radius(void *vc, const double *R, double *v) {
  const radius_ctx *c = vc;
  return c->f(c->ctx, R[0], v);
}

int gfi_minimize_radius(gfi_radius_fn f, void *ctx, double lo, double hi, size_t nscan, gfi_select_result *res) {
  if (!f || !res) return GFI_EINVAL;
  if (!(lo > 0) || !(hi > lo) || !isfinite(hi)) return fail_param(GFI_EINVAL, !(lo > 0) ? "lo" : "hi");
  if (nscan < 3 || nscan > GFI_SELECT_NSCAN_MAX) return fail_param(GFI_EINVAL, "nscan");
  radius_ctx c = {f, ctx};
  int st = sel_search(crit_radius, &c, 1, lo, hi, nscan, 0, res, NULL);
  if (!st && !isfinite(res->value)) st = GFI_EDENOM;
  return st;
}

typedef struct {
  const gfi_kernel *k;
  size_t N, D, V;
  const double *x, *y;
  const gfi_opts *o; /* the caller's options, with the search's route (search_route) */
  int fallback;      /* auto chose fast: a radius the fast route cannot take goes direct */
  double dtol;
  double bound;
  size_t nflag;
  gfi_method route;
} crit_ctx;

/* The route of a whole radius search under auto, chosen once: a criterion
 * that changed route between radii would compare values computed two ways.
 * The fast route's cost is estimated at each radius of the scan (its nodes
 * grow with R) and summed; the direct sum costs the same at every radius,
 * about 20 D units per ordered pair (LOO-CV) or per pair (LSCV). The fast
 * route wins only when it can run at every scanned radius. */
static gfi_method search_route(const gfi_kernel *k, size_t N, size_t D, size_t ncol, int loo,
                               const double *x, double lo, double hi, size_t nscan, double tol) {
  bl_cost c = {crit_direct_cost(loo, N, D) * (double)nscan, 0, 0, 1, D > BL_MAX_DIM ? GFI_ROUTE_DIM : 0};
  double S[3];
  if (!c.fast_why) data_spans(N, D, x, S);
  for (size_t s = 0; s < nscan && !c.fast_why; s++) {
    double r = lo * pow(hi / lo, (double)s / (double)(nscan - 1)), R[3] = {r, r, r};
    int ok;
    c.fast += crit_fast_cost(loo, k, N, D, ncol, S, R, tol, &ok);
    if (!ok) c.fast_why = GFI_ROUTE_NODES;
  }
  gfi_method route = GFI_METHOD_DIRECT;
  (void)bl_decide(GFI_METHOD_AUTO, &c, &route, NULL); /* the direct route open: cannot fail */
  return route;
}

static void fill_R(const crit_ctx *c, const double *R, double *Rf) {
  for (size_t j = 0; j < c->D; j++) Rf[j] = c->D > 3 ? R[0] : R[j];
}

static int crit_lscv(void *vc, const double *R, double *v) {
  crit_ctx *c = vc;
  double Rs[3] = {0, 0, 0}, *Rf = c->D > 3 ? malloc(c->D * sizeof *Rf) : Rs;
  if (!Rf) return GFI_ENOMEM;
  fill_R(c, R, Rf);
  int st = gfi_lscv(c->k, c->N, c->D, c->x, Rf, c->o, v, &c->bound, &c->route);
  if (st == GFI_ERANGE && c->fallback) {
    gfi_opts d = *c->o;
    d.method = GFI_METHOD_DIRECT;
    st = gfi_lscv(c->k, c->N, c->D, c->x, Rf, &d, v, &c->bound, &c->route);
  }
  if (Rf != Rs) free(Rf);
  return st;
}

static int crit_loocv(void *vc, const double *R, double *v) {
  crit_ctx *c = vc;
  double Rs[3] = {0, 0, 0}, *Rf = c->D > 3 ? malloc(c->D * sizeof *Rf) : Rs;
  if (!Rf) return GFI_ENOMEM;
  fill_R(c, R, Rf);
  int st = gfi_loocv(c->k, c->N, c->D, c->V, c->x, c->y, Rf, c->o, c->dtol, v, &c->nflag, &c->bound,
                     &c->route);
  if (st == GFI_ERANGE && c->fallback) {
    gfi_opts d = *c->o;
    d.method = GFI_METHOD_DIRECT;
    st = gfi_loocv(c->k, c->N, c->D, c->V, c->x, c->y, Rf, &d, c->dtol, v, &c->nflag, &c->bound,
                   &c->route);
  }
  if (Rf != Rs) free(Rf);
  if (st == GFI_EDENOM) {
    *v = INFINITY;
    st = GFI_OK;
  }
  return st;
}

static int range_of(const gfi_select_opts *o, size_t N, size_t D, const double *x, double *lo,
                    double *hi, size_t *nscan) {
  double s = INFINITY;
  for (size_t j = 0; j < D; j++) {
    double sj = sel_robust_scale(N, D, x, j);
    if (!(sj == sj)) return GFI_ENOMEM;
    s = fmin(s, sj);
  }
  *lo = o->R_lo > 0 ? o->R_lo : 0.05 / s;
  *hi = o->R_hi > 0 ? o->R_hi : 10 * fmax(5, pow((double)N, 0.2)) / s;
  if (!(*lo > 0) || !(*hi > *lo) || !isfinite(*hi)) return fail_param(GFI_ERADIUS, o->R_hi > 0 ? "R_hi" : "R_lo");
  *nscan = o->nscan ? o->nscan : 100;
  if (*nscan < 3 || *nscan > GFI_SELECT_NSCAN_MAX) return fail_param(GFI_EINVAL, "nscan");
  return GFI_OK;
}

static int select_common(const gfi_select_opts *opts, size_t D, gfi_select_opts *o) {
  gfi_select_default_opts(o);
  if (opts) *o = *opts;
  if (o->per_axis && D > 3) return fail_param(GFI_EUNSUPPORTED, "per_axis");
  if (o->R_lo < 0 || !isfinite(o->R_lo)) return fail_param(GFI_ERADIUS, "R_lo");
  if (o->R_hi < 0 || !isfinite(o->R_hi)) return fail_param(GFI_ERADIUS, "R_hi");
  return GFI_OK;
}

int gfi_select_lscv(const gfi_kernel *k, size_t N, size_t D, const double *data,
                    const gfi_select_opts *opts, gfi_select_result *res, double *curve) {
  if (!res) return GFI_EINVAL;
  int st = fail_named(check_band(k), "k");
  if (st) return st;
  st = fail_named(sel_check_data(N, D, data), "data");
  if (st) return st;
  gfi_select_opts o;
  st = select_common(opts, D, &o);
  if (st) return st;
  double lo, hi;
  size_t ns;
  st = range_of(&o, N, D, data, &lo, &hi, &ns);
  if (st) return st;
  gfi_opts run = o.base;
  crit_ctx c = {k, N, D, 0, data, NULL, &run, 0, 0, 0, 0, GFI_METHOD_DIRECT};
  if (run.method == GFI_METHOD_AUTO) {
    double tol;
    gfi_method m;
    st = bl_check_opts(&run, &tol, &m);
    if (st) return st;
    run.method = search_route(k, N, D, 1, 0, data, lo, hi, ns, tol);
    c.fallback = run.method == GFI_METHOD_FAST;
  }
  st = sel_search(crit_lscv, &c, D, lo, hi, ns, o.per_axis, res, curve);
  if (st) return st;
  /* the bound and route at the chosen radius */
  double v;
  crit_ctx c2 = c;
  st = crit_lscv(&c2, res->R, &v);
  if (st) return st;
  res->bound = c2.bound;
  res->route = c2.route;
  return GFI_OK;
}

int gfi_select_loocv(const gfi_kernel *k, size_t N, size_t D, size_t V, const double *x,
                     const double *y, const gfi_select_opts *opts, gfi_select_result *res,
                     double *curve) {
  if (!res || !y || V == 0) return GFI_EINVAL;
  int st = fail_named(check_band_nw(k), "k");
  if (st) return st;
  st = fail_named(sel_check_data(N, D, x), "x");
  if (st) return st;
  gfi_select_opts o;
  st = select_common(opts, D, &o);
  if (st) return st;
  if (!(o.denom_tol >= 0 && o.denom_tol < 1)) return fail_param(GFI_EINVAL, "denom_tol");
  double lo, hi;
  size_t ns;
  st = range_of(&o, N, D, x, &lo, &hi, &ns);
  if (st) return st;
  gfi_opts run = o.base;
  crit_ctx c = {k, N, D, V, x, y, &run, 0, o.denom_tol, 0, 0, GFI_METHOD_DIRECT};
  if (run.method == GFI_METHOD_AUTO) {
    double tol;
    gfi_method m;
    st = bl_check_opts(&run, &tol, &m);
    if (st) return st;
    run.method = search_route(k, N, D, V + 1, 1, x, lo, hi, ns, tol);
    c.fallback = run.method == GFI_METHOD_FAST;
  }
  st = sel_search(crit_loocv, &c, D, lo, hi, ns, o.per_axis, res, curve);
  if (st) return st;
  double v;
  crit_ctx c2 = c;
  st = crit_loocv(&c2, res->R, &v);
  if (st) return st;
  if (!isfinite(res->value)) return GFI_EDENOM;
  res->bound = c2.bound;
  res->route = c2.route;
  res->nflagged = c2.nflag;
  return GFI_OK;
}
