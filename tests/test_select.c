/* Data-driven radius selection (gfi/select.h): the LSCV and leave-one-out
 * criteria against independent direct computations, the fast route against
 * the direct one, the search, thread invariance and the error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>
#include "check.h"
#include "gfi/gfi.h"
#include "select_internal.h"
#include "bandlimited.h"

static double *normal_data(size_t N, size_t D, unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  gfi_model *m;
  gfi_model_normal(&m, D, NULL, NULL);
  double *x = malloc(N * D * sizeof *x);
  gfi_model_sample(m, r, N, x);
  gfi_model_free(m);
  gsl_rng_free(r);
  return x;
}

/* G_l against a 400-point Gauss-Legendre rule on every piece. */
static void test_pair(void) {
  double gx[400], gw[400];
  bl_gauss_legendre(400, gx, gw);
  for (int l = 1; l <= 8; l++) {
    sel_pair p;
    sel_pair_init(&p, KPOW(l));
    double worst = 0;
    for (double v = 1e-3; v < 60; v *= 1.07) {
      long double s = 0;
      for (int j = 0; j < l; j++)
        for (int q = 0; q < 400; q++) {
          double t = -l + 2 * j + 1 + gx[q], k = gfi_kappa(l, t);
          s += (long double)gw[q] * k * k * cosl((long double)v * t);
        }
      worst = fmax(worst, fabs(sel_pair_G(&p, v) - (double)s));
      worst = fmax(worst, fabs(sel_pair_G(&p, -v) - (double)s));
    }
    CHECK(worst < 1e-13, "l = %d: G_l off by %.3g", l, worst);
    CHECK_CLOSE(sel_pair_G(&p, 0), gfi_kappa_sq_integral(KPOW(l)), 1e-14, 0);
  }
  /* polynomial phi: G against the same rule on every unit piece of kappa */
  static const double polys[][GFI_PHI_MAXPOW + 1] = {
      {0, 0, 1, 0, 0.5}, {0, 0.3, 0, 2}, {0, 0, 0, 1, 0, 0, 0, 0, 0.25}, {0, 1, 1, 1, 1, 1, 1, 1, 1}};
  static const int pdeg[] = {4, 3, 8, 8};
  for (int c = 0; c < 4; c++) {
    gfi_kernel k;
    CHECK_STATUS(gfi_kernel_poly(&k, pdeg[c], polys[c]), GFI_OK);
    const int l = pdeg[c];
    sel_pair p;
    sel_pair_init(&p, &k);
    double worst = 0;
    for (double v = 1e-3; v < 60; v *= 1.07) {
      long double s = 0;
      for (int j = 0; j < 2 * l; j++)
        for (int q = 0; q < 400; q++) {
          double t = -l + j + 0.5 + 0.5 * gx[q], kk = gfi_kernel_kappa(&k, t);
          s += (long double)(0.5 * gw[q]) * kk * kk * cosl((long double)v * t);
        }
      worst = fmax(worst, fabs(sel_pair_G(&p, v) - (double)s));
    }
    CHECK(worst < 1e-13, "poly %d: G off by %.3g", c, worst);
    CHECK_CLOSE(sel_pair_G(&p, 0), gfi_kappa_sq_integral(&k), 1e-14, 0);
  }
}

/* LSCV from scratch: int p_hat^2 by Plancherel with plain sums of the
 * empirical cf on a fine rule (panels between the
 * knots of kappa, h span <= 3, 24 points each: exact to rounding), and the leave-one-out term from the
 * direct density estimate at the data points. D = 1 or 2. */
static double lscv_independent(const gfi_kernel *kp, size_t N, size_t D, const double *x,
                               const double *R) {
  const gfi_kernel k = *kp;
  const int l = k.l;
  double gx[24], gw[24];
  bl_gauss_legendre(24, gx, gw);
  double *t[2] = {NULL, NULL}, *wt[2] = {NULL, NULL};
  size_t n[2] = {1, 1};
  for (size_t j = 0; j < D; j++) {
    double lo = x[j], hi = x[j];
    for (size_t i = 0; i < N; i++) {
      lo = fmin(lo, x[i * D + j]);
      hi = fmax(hi, x[i * D + j]);
    }
    double S = hi - lo;
    size_t per = (size_t)ceil(R[j] * S / 3) + 1; /* h S / 2 <= 1.5 with 24 points */
    n[j] = (size_t)(2 * l) * per * 24;
    t[j] = malloc(n[j] * sizeof(double));
    wt[j] = malloc(n[j] * sizeof(double));
    size_t at = 0;
    for (int s = 0; s < 2 * l; s++) {
      double a = (-l + s) * R[j], h = R[j] / (double)per;
      for (size_t p = 0; p < per; p++)
        for (int q = 0; q < 24; q++) {
          double w = a + ((double)p + 0.5) * h + 0.5 * h * gx[q], kk = gfi_kernel_kappa(&k, w / R[j]);
          t[j][at] = w;
          wt[j][at] = 0.5 * h * gw[q] * kk * kk / (2 * M_PI);
          at++;
        }
    }
  }
  long double ip2 = 0;
  for (size_t a = 0; a < n[0]; a++)
    for (size_t b = 0; b < n[1]; b++) {
      double cr = 0, ci = 0;
      for (size_t i = 0; i < N; i++) {
        double ph = t[0][a] * x[i * D] + (D > 1 ? t[1][b] * x[i * D + 1] : 0);
        cr += cos(ph);
        ci += sin(ph);
      }
      cr /= (double)N;
      ci /= (double)N;
      ip2 += (long double)wt[0][a] * (D > 1 ? wt[1][b] : 1) * (cr * cr + ci * ci);
    }
  for (size_t j = 0; j < D; j++) {
    free(t[j]);
    free(wt[j]);
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.method = GFI_METHOD_DIRECT;
  gfi_density_plan *p;
  gfi_density_plan_fourier(&p, &k, N, D, x, NULL, R, &o);
  double *ph = malloc(N * sizeof *ph);
  gfi_density_eval(p, N, x, ph);
  gfi_density_destroy(p);
  double s = 0, K0 = 1;
  for (size_t i = 0; i < N; i++) s += ph[i];
  free(ph);
  for (size_t j = 0; j < D; j++) K0 *= R[j] * gfi_kernel_eval(&k, 0) / k.A; /* phi(1) R / A */
  /* sum_{i != k} K = N sum_i p_hat(x_i) - N K0 */
  double n_ = (double)N;
  return (double)ip2 - 2.0 / (n_ * (n_ - 1)) * (n_ * s - n_ * K0);
}

static void test_lscv_values(void) {
  struct {
    size_t N, D;
    int l;
    double R[3];
  } cs[] = {{150, 1, 4, {2}},   {150, 1, 1, {3}},      {150, 1, 2, {5}},    {150, 1, 7, {9}},
            {80, 2, 2, {1.5, 2.5}}, {80, 2, 4, {2, 1}}, {120, 1, 3, {0.4}}};
  gfi_kernel k;
  gfi_opts od, of;
  gfi_default_opts(&od);
  od.method = GFI_METHOD_DIRECT;
  gfi_default_opts(&of);
  of.method = GFI_METHOD_FAST;
  for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
    double *x = normal_data(cs[c].N, cs[c].D, 10 + c);
    gfi_kernel_pow(&k, cs[c].l);
    double vd, vf, b, vi = lscv_independent(&k, cs[c].N, cs[c].D, x, cs[c].R);
    gfi_method rt;
    CHECK_STATUS(gfi_lscv(&k, cs[c].N, cs[c].D, x, cs[c].R, &od, &vd, &b, &rt), GFI_OK);
    CHECK(rt == GFI_METHOD_DIRECT && b == 0, "direct route");
    CHECK_STATUS(gfi_lscv(&k, cs[c].N, cs[c].D, x, cs[c].R, &of, &vf, &b, &rt), GFI_OK);
    CHECK(rt == GFI_METHOD_FAST, "fast route");
    CHECK_CLOSE(vd, vi, 1e-9, 0);
    CHECK_CLOSE(vf, vd, 1e-9, 0);
    CHECK(fabs(vf - vd) <= b, "case %zu: fast error %.3g above its bound %.3g", c, fabs(vf - vd), b);
    free(x);
  }
  /* polynomial phi (both parities, gaps, a low power): direct and fast
   * against the independent LSCV */
  {
    struct {
      size_t N, D;
      int deg;
      double a[GFI_PHI_MAXPOW + 1], R[2];
    } ps[] = {{150, 1, 4, {0, 0, 1, 0, 0.5}, {3}},
              {150, 1, 3, {0, 0.3, 0, 2}, {2.5}},
              {120, 1, 6, {0, 0, 0, 1, 0, 0, 0.25}, {4}},
              {80, 2, 4, {0, 0, 0.5, 0.5, 1}, {1.5, 2}}};
    for (size_t c = 0; c < sizeof ps / sizeof ps[0]; c++) {
      double *xp = normal_data(ps[c].N, ps[c].D, 40 + c), vd, vf, b, vi;
      CHECK_STATUS(gfi_kernel_poly(&k, ps[c].deg, ps[c].a), GFI_OK);
      vi = lscv_independent(&k, ps[c].N, ps[c].D, xp, ps[c].R);
      gfi_method rt;
      CHECK_STATUS(gfi_lscv(&k, ps[c].N, ps[c].D, xp, ps[c].R, &od, &vd, &b, &rt), GFI_OK);
      CHECK(rt == GFI_METHOD_DIRECT, "poly %zu: direct route", c);
      CHECK_STATUS(gfi_lscv(&k, ps[c].N, ps[c].D, xp, ps[c].R, &of, &vf, &b, &rt), GFI_OK);
      CHECK(rt == GFI_METHOD_FAST, "poly %zu: fast route", c);
      CHECK_CLOSE(vd, vi, 1e-9, 0);
      CHECK_CLOSE(vf, vd, 1e-9, 0);
      CHECK(fabs(vf - vd) <= b, "poly %zu: fast error %.3g above its bound %.3g", c, fabs(vf - vd), b);
      free(xp);
    }
  }
  /* D = 3, and a wide outlier (long span) on the fast route */
  double *x = normal_data(200, 3, 3);
  double R3[3] = {1, 1.5, 0.7}, vd, vf;
  gfi_kernel_pow(&k, 2);
  CHECK_STATUS(gfi_lscv(&k, 200, 3, x, R3, &od, &vd, NULL, NULL), GFI_OK);
  CHECK_STATUS(gfi_lscv(&k, 200, 3, x, R3, &of, &vf, NULL, NULL), GFI_OK);
  CHECK_CLOSE(vf, vd, 1e-9, 0);
  free(x);
  x = normal_data(400, 1, 4);
  x[7] = 60;
  double R1 = 3;
  gfi_kernel_pow(&k, 4);
  CHECK_STATUS(gfi_lscv(&k, 400, 1, x, &R1, &od, &vd, NULL, NULL), GFI_OK);
  CHECK_STATUS(gfi_lscv(&k, 400, 1, x, &R1, &of, &vf, NULL, NULL), GFI_OK);
  CHECK_CLOSE(vf, vd, 1e-9, 0);
  /* D = 5: direct only; the fast route is unsupported */
  free(x);
  x = normal_data(60, 5, 5);
  double R5[5] = {1, 1, 1, 1, 1};
  CHECK_STATUS(gfi_lscv(&k, 60, 5, x, R5, &od, &vd, NULL, NULL), GFI_OK);
  CHECK(isfinite(vd), "D = 5 value");
  CHECK_STATUS(gfi_lscv(&k, 60, 5, x, R5, &of, &vf, NULL, NULL), GFI_EUNSUPPORTED);
  free(x);
}

/* Leave-one-out CV against N plans of N - 1 points. */
static void test_loocv_values(void) {
  const size_t N = 70, V = 2;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  /* powers 1 and 4, and polynomials with odd (1, 3) and even (2, 4) powers */
  static const double pa[2][GFI_PHI_MAXPOW + 1] = {{0, 0.3, 0, 2}, {0, 0, 1, 0, 0.5}};
  for (size_t D = 1; D <= 2; D++)
    for (int kc = 0; kc < 4; kc++) {
      double *x = malloc(N * D * sizeof *x), *y = malloc(N * V * sizeof *y);
      for (size_t i = 0; i < N * D; i++) x[i] = 4 * gsl_rng_uniform(r) - 2;
      for (size_t i = 0; i < N; i++) {
        y[i * V] = sin(2 * x[i * D]) + 0.2 * gsl_rng_uniform(r);
        y[i * V + 1] = x[i * D] * x[i * D];
      }
      double R[2] = {2.5, 1.5};
      gfi_kernel k;
      if (kc < 2) CHECK_STATUS(gfi_kernel_pow(&k, kc ? 4 : 1), GFI_OK);
      else CHECK_STATUS(gfi_kernel_poly(&k, kc == 2 ? 3 : 4, pa[kc - 2]), GFI_OK);
      gfi_opts od;
      gfi_default_opts(&od);
      od.method = GFI_METHOD_DIRECT;
      double *xs = malloc((N - 1) * D * sizeof *xs), *ys = malloc((N - 1) * V * sizeof *ys);
      long double sum = 0;
      size_t used = 0;
      for (size_t i = 0; i < N; i++) {
        size_t a = 0;
        for (size_t k2 = 0; k2 < N; k2++) {
          if (k2 == i) continue;
          memcpy(xs + a * D, x + k2 * D, D * sizeof *xs);
          memcpy(ys + a * V, y + k2 * V, V * sizeof *ys);
          a++;
        }
        gfi_nw_plan *p;
        gfi_nw_plan_fourier(&p, &k, N - 1, D, V, xs, ys, R, &od);
        double m[2];
        size_t nf = 0;
        int st = gfi_nw_eval(p, 1, x + i * D, m, &nf);
        gfi_nw_destroy(p);
        if (st == GFI_OK) {
          for (size_t v = 0; v < V; v++) sum += (y[i * V + v] - m[v]) * (y[i * V + v] - m[v]);
          used++;
        }
      }
      double want = (double)(sum / used), vd, vf, b;
      size_t nfd, nff;
      CHECK_STATUS(gfi_loocv(&k, N, D, V, x, y, R, &od, 0, &vd, &nfd, NULL, NULL), GFI_OK);
      CHECK_CLOSE(vd, want, 1e-10, 0);
      CHECK(nfd == N - used, "flag count %zu, brute force %zu", nfd, N - used);
      gfi_opts of = od;
      of.method = GFI_METHOD_FAST;
      CHECK_STATUS(gfi_loocv(&k, N, D, V, x, y, R, &of, 0, &vf, &nff, &b, NULL), GFI_OK);
      CHECK_CLOSE(vf, vd, 1e-9, 0);
      CHECK(nff == nfd, "fast flags %zu vs %zu", nff, nfd);
      free(x);
      free(y);
      free(xs);
      free(ys);
    }
  /* a negative leave-one-out denominator (l = 1: sinc < 0 at distances in
   * (pi, 2 pi)): the point at 4.5 sees only negative weights; its row is
   * left out and counted, never NaN, on both routes */
  double x[5] = {0, 0.01, 0.02, 0.03, 4.5}, y[5] = {1, 2, 3, 4, 5}, R = 1, v, vf2;
  size_t nf, nf2;
  gfi_kernel k;
  gfi_kernel_pow(&k, 1);
  gfi_opts o;
  gfi_default_opts(&o);
  o.method = GFI_METHOD_DIRECT;
  CHECK_STATUS(gfi_loocv(&k, 5, 1, 1, x, y, &R, &o, 0, &v, &nf, NULL, NULL), GFI_OK);
  CHECK(isfinite(v) && nf == 1, "value %g, %zu rows left out", v, nf);
  o.method = GFI_METHOD_FAST;
  CHECK_STATUS(gfi_loocv(&k, 5, 1, 1, x, y, &R, &o, 0, &vf2, &nf2, NULL, NULL), GFI_OK);
  CHECK(nf2 == 1, "fast: %zu rows left out", nf2);
  CHECK_CLOSE(vf2, v, 1e-9, 0);
  gsl_rng_free(r);
}

/* The fast route's second pass: at a large radius in 2-D many leave-one-out
 * denominators are small against the first pass's global bound; the tighter
 * pass over those rows must settle most of them, agree with the direct sum
 * within the reported bound, and give the same bits for 1 and 3 threads. */
/* The auto route of LOO-CV weighs the fast route's node count (from R and
 * the data's span) against the N^2 pairs: 300 rows in 2-D at R = 8 go
 * direct (about 10x cheaper there; an N-only rule sent them fast), 2000
 * rows in 1-D at R = 2 go fast; either way the value is the direct one
 * within the bound. */
static void test_loocv_route(void) {
  struct { size_t N, D; double R; gfi_method want; } cs[] = {{300, 2, 8, GFI_METHOD_DIRECT},
                                                          {2000, 1, 2, GFI_METHOD_FAST}};
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  for (int c = 0; c < 2; c++) {
    size_t N = cs[c].N, D = cs[c].D;
    double *x = normal_data(N, D, 40 + c), *y = malloc(N * sizeof *y), R[2] = {cs[c].R, cs[c].R};
    for (size_t i = 0; i < N; i++) y[i] = sin(x[i * D]) + 0.1 * cos(17.0 * (double)i);
    gfi_opts o;
    gfi_default_opts(&o);
    o.tol = 1e-8;
    double va, vd, b = 0;
    gfi_method route = GFI_METHOD_AUTO;
    CHECK_STATUS(gfi_loocv(&k, N, D, 1, x, y, R, &o, 0, &va, NULL, &b, &route), GFI_OK);
    CHECK(route == cs[c].want, "N = %zu, D = %zu, R = %g: auto took route %d, expected %d", N, D, cs[c].R,
          (int)route, (int)cs[c].want);
    o.method = GFI_METHOD_DIRECT;
    CHECK_STATUS(gfi_loocv(&k, N, D, 1, x, y, R, &o, 0, &vd, NULL, NULL, NULL), GFI_OK);
    CHECK(fabs(va - vd) <= b + 1e-13 * fabs(vd), "N = %zu: auto %.17g direct %.17g bound %.3g", N, va, vd, b);
    free(x);
    free(y);
  }
}

/* A radius search under auto takes one route at every radius: here (LOO-CV,
 * 300 rows in 2-D, radii 0.05..50) the route auto would take at each
 * radius on its own changes within the scan, and every value of the
 * search's curve is the criterion on the search's route, bit for bit. */
static void test_search_route(void) {
  const size_t N = 300, D = 2, ns = 16;
  double *x = normal_data(N, D, 44), *y = malloc(N * sizeof *y), *curve = malloc(2 * ns * sizeof *curve);
  for (size_t i = 0; i < N; i++) y[i] = sin(x[i * D]) + 0.1 * cos(17.0 * (double)i);
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  gfi_select_opts o;
  gfi_select_default_opts(&o);
  o.R_lo = 0.05;
  o.R_hi = 50;
  o.nscan = ns;
  o.base.tol = 1e-8;
  int seen[2] = {0, 0};
  for (size_t s = 0; s < ns; s++) {
    double r = 0.05 * pow(1000.0, (double)s / (double)(ns - 1)), R[2] = {r, r}, v;
    gfi_method rt = GFI_METHOD_AUTO;
    CHECK_STATUS(gfi_loocv(&k, N, D, 1, x, y, R, &o.base, 0, &v, NULL, NULL, &rt), GFI_OK);
    seen[rt == GFI_METHOD_FAST]++;
  }
  CHECK(seen[0] && seen[1], "the per-radius auto route should change within the scan (direct %d, fast %d)",
        seen[0], seen[1]);
  gfi_select_result r;
  CHECK_STATUS(gfi_select_loocv(&k, N, D, 1, x, y, &o, &r, curve), GFI_OK);
  gfi_opts fixed = o.base;
  fixed.method = r.route;
  for (size_t s = 0; s < ns; s++) {
    double R[2] = {curve[2 * s], curve[2 * s]}, v;
    CHECK_STATUS(gfi_loocv(&k, N, D, 1, x, y, R, &fixed, 0, &v, NULL, NULL, NULL), GFI_OK);
    CHECK(v == curve[2 * s + 1], "R = %g: the search's value %.17g, on its route %.17g", R[0],
          curve[2 * s + 1], v);
  }
  free(x);
  free(y);
  free(curve);
}

static void test_loocv_second_pass(void) {
  const size_t N = 3000, D = 2;
  double *x = normal_data(N, D, 31), *y = malloc(N * sizeof *y);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 32);
  for (size_t i = 0; i < N; i++) y[i] = x[i * D] - 0.5 * x[i * D] * x[i * D] + 0.3 * gsl_rng_uniform(r);
  gsl_rng_free(r);
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  const double R[2] = {12, 9}, tol = 1e-6;
  gfi_opts od;
  gfi_default_opts(&od);
  od.method = GFI_METHOD_DIRECT;
  double vd, v1, v3, b1, b3, v0, b0;
  size_t nfd, left1[2], left3[2], left0[2];
  CHECK_STATUS(gfi_loocv(&k, N, D, 1, x, y, R, &od, 0, &vd, &nfd, NULL, NULL), GFI_OK);
  CHECK_STATUS(sel_loocv_fast(4, N, D, 1, x, y, R, GFI_NW_DENOM_TOL, tol, 1, 1, &v1, &b1, left1), GFI_OK);
  CHECK_STATUS(sel_loocv_fast(4, N, D, 1, x, y, R, GFI_NW_DENOM_TOL, tol, 3, 1, &v3, &b3, left3), GFI_OK);
  /* without the second pass (at this N the cost model skips it): the
   * first pass's rows go to the direct sum, the same value to the bound */
  CHECK_STATUS(sel_loocv_fast(4, N, D, 1, x, y, R, GFI_NW_DENOM_TOL, tol, 2, 0, &v0, &b0, left0), GFI_OK);
  CHECK(left0[0] == left1[0] && left0[1] == left0[0], "no second pass: rows %zu, %zu", left0[0], left0[1]);
  CHECK(fabs(v0 - vd) <= b0, "first pass only %.17g direct %.17g bound %g", v0, vd, b0);
  CHECK(left1[0] >= 100, "first pass left %zu rows (the case needs many)", left1[0]);
  CHECK(left1[1] * 10 <= left1[0], "second pass left %zu of %zu rows", left1[1], left1[0]);
  CHECK(nfd == 0, "direct flags %zu", nfd);
  CHECK(b1 > 0 && b1 < 1e-4 * vd, "bound %g vs value %g", b1, vd);
  CHECK(fabs(v1 - vd) <= b1, "fast %.17g direct %.17g bound %g", v1, vd, b1);
  CHECK(v1 == v3 && b1 == b3 && left1[0] == left3[0] && left1[1] == left3[1],
        "threads 1 vs 3: %.17g vs %.17g, rows %zu/%zu vs %zu/%zu", v1, v3, left1[0], left1[1], left3[0],
        left3[1]);
  free(x);
  free(y);
}

/* sel_search on criteria with known minima, in t = log R: a bowl with
 * narrow dips. (a) two minima inside one bracket of the coarse scan, the
 * deeper one off the scan's points (LOO-CV of a 1-D sample once returned
 * R = 14.60 where 14.22 was lower, both between the scan points 13.65 and
 * 14.64); (b) the deeper of two separate minima scans higher than the
 * other (its dip falls between scan points); (c) a unimodal bowl. */
typedef struct {
  double k, c, dips[3][3]; /* the bowl k (t - c)^2; dips: centre, depth, width (in t) */
  int ndips;
  size_t evals;
} syn_crit;
static int syn_f(void *vc, const double *R, double *v) {
  syn_crit *c = vc;
  double t = log(R[0]), f = c->k * (t - c->c) * (t - c->c);
  for (int k = 0; k < c->ndips; k++) {
    double z = (t - c->dips[k][0]) / c->dips[k][2];
    f -= c->dips[k][1] * exp(-z * z);
  }
  *v = f;
  c->evals++;
  return GFI_OK;
}
static void test_search_synthetic(void) {
  const double lo = 0.05, hi = 500;
  const size_t n = 100;
  const double h = log(hi / lo) / (double)(n - 1); /* scan step in t */
  const double t0 = log(lo) + 40 * h;              /* a scan point */
  gfi_select_result r;
  /* (a) a wide dip at the scan point t0 and a deeper narrow one at t0 + 0.4 h */
  syn_crit a = {.k = 0.01, .c = t0, .dips = {{t0, 0.010, 2 * h}, {t0 + 0.4 * h, 0.011, 0.06 * h}}, .ndips = 2};
  CHECK_STATUS(sel_search(syn_f, &a, 1, lo, hi, n, 0, &r, NULL), GFI_OK);
  CHECK(fabs(log(r.R[0]) - (t0 + 0.4 * h)) < 0.02 * h, "(a) found t = %.6f, the deeper minimum is at %.6f",
        log(r.R[0]), t0 + 0.4 * h);
  CHECK(r.evals == a.evals, "(a) evals %zu counted %zu", r.evals, a.evals);
  /* (b) a dip at a scan point and a deeper, narrow one, far away, half-way
   * between two points (where it scans at -0.0023 against -0.02): found by
   * the doubled scan */
  double t1 = log(lo) + 70.5 * h;
  syn_crit b = {.k = 1e-4, .c = t0, .dips = {{t0, 0.02, 0.5 * h}, {t1, 0.05, 0.3 * h}}, .ndips = 2};
  CHECK_STATUS(sel_search(syn_f, &b, 1, lo, hi, n, 0, &r, NULL), GFI_OK);
  CHECK(fabs(log(r.R[0]) - t1) < 0.05 * h, "(b) found t = %.6f, the deeper minimum is at %.6f", log(r.R[0]), t1);
  CHECK(r.nlocal >= 2, "(b) nlocal %zu", r.nlocal);
  /* (c) unimodal: the minimum to the golden section's tolerance, no doubling */
  syn_crit c = {.k = 0.01, .c = t0 + 0.3 * h, .ndips = 0};
  CHECK_STATUS(sel_search(syn_f, &c, 1, lo, hi, n, 0, &r, NULL), GFI_OK);
  CHECK(fabs(log(r.R[0]) - c.c) < 1e-4, "(c) found t = %.6f, minimum at %.6f", log(r.R[0]), c.c);
  CHECK(r.nlocal == 1 && r.evals < n + 60, "(c) nlocal %zu, evals %zu", r.nlocal, r.evals);
}

/* The public search of one radius (gfi_minimize_radius) is sel_search:
 * the same radius, value and evaluations on case (b) above; a criterion's
 * failure is returned; no finite value is GFI_EDENOM; bad ranges EINVAL. */
static int syn_r(void *vc, double r, double *v) { return syn_f(vc, &r, v); }
typedef struct {
  double fail_above;
  int inf;
} odd_crit;
static int odd_r(void *vc, double r, double *v) {
  const odd_crit *c = vc;
  *v = c->inf ? INFINITY : (log(r) - 1) * (log(r) - 1);
  return r > c->fail_above ? GFI_ENOMEM : GFI_OK;
}
static void test_minimize_radius(void) {
  const double lo = 0.05, hi = 500;
  const size_t n = 100;
  const double h = log(hi / lo) / (double)(n - 1), t0 = log(lo) + 40 * h, t1 = log(lo) + 70.5 * h;
  syn_crit b = {.k = 1e-4, .c = t0, .dips = {{t0, 0.02, 0.5 * h}, {t1, 0.05, 0.3 * h}}, .ndips = 2};
  syn_crit b2 = b;
  gfi_select_result r1, r2;
  CHECK_STATUS(sel_search(syn_f, &b, 1, lo, hi, n, 0, &r1, NULL), GFI_OK);
  CHECK_STATUS(gfi_minimize_radius(syn_r, &b2, lo, hi, n, &r2), GFI_OK);
  CHECK(r1.R[0] == r2.R[0] && r1.value == r2.value && r1.evals == r2.evals && r2.evals == b2.evals,
        "public search: R %.17g vs %.17g, evals %zu vs %zu", r2.R[0], r1.R[0], r2.evals, r1.evals);
  CHECK(fabs(log(r2.R[0]) - t1) < 0.05 * h, "public search found t = %.6f, minimum at %.6f", log(r2.R[0]), t1);
  odd_crit ok = {INFINITY, 0}, fail = {10, 0}, inf = {INFINITY, 1};
  CHECK_STATUS(gfi_minimize_radius(odd_r, &ok, 0.1, 100, 12, &r2), GFI_OK);
  CHECK(fabs(log(r2.R[0]) - 1) < 1e-4 && r2.nlocal == 1 && !r2.at_edge, "bowl: R = %.9g (e), nlocal %zu",
        r2.R[0], r2.nlocal);
  CHECK_STATUS(gfi_minimize_radius(odd_r, &fail, 0.1, 100, 12, &r2), GFI_ENOMEM);
  CHECK_STATUS(gfi_minimize_radius(odd_r, &inf, 0.1, 100, 12, &r2), GFI_EDENOM);
  CHECK_STATUS(gfi_minimize_radius(odd_r, &ok, 0, 100, 12, &r2), GFI_EINVAL);
  CHECK_STATUS(gfi_minimize_radius(odd_r, &ok, 2, 1, 12, &r2), GFI_EINVAL);
  CHECK_STATUS(gfi_minimize_radius(odd_r, &ok, 0.1, 100, 2, &r2), GFI_EINVAL);
  CHECK_STATUS(gfi_minimize_radius(NULL, &ok, 0.1, 100, 12, &r2), GFI_EINVAL);
}

static void test_search(void) {
  const size_t N = 400;
  double *x = normal_data(N, 1, 21);
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  gfi_select_opts o;
  gfi_select_default_opts(&o);
  o.base.method = GFI_METHOD_FAST;
  o.nscan = 60;
  gfi_select_result r;
  double *curve = malloc(2 * 60 * sizeof *curve);
  CHECK_STATUS(gfi_select_lscv(&k, N, 1, x, &o, &r, curve), GFI_OK);
  double cmin = INFINITY;
  for (size_t s = 0; s < 60; s++) cmin = fmin(cmin, curve[2 * s + 1]);
  CHECK(r.value <= cmin, "refined %.17g above the scan's %.17g", r.value, cmin);
  CHECK(r.R[0] > 0.5 && r.R[0] < 10, "R = %g for N(0,1), N = 400, l = 4", r.R[0]);
  /* the value is the criterion at R */
  double v;
  CHECK_STATUS(gfi_lscv(&k, N, 1, x, r.R, &o.base, &v, NULL, NULL), GFI_OK);
  CHECK(v == r.value, "value %.17g vs %.17g", v, r.value);
  /* a nearby radius is not better */
  double Rp = r.R[0] * 1.01, Rm = r.R[0] / 1.01, vp, vm;
  gfi_lscv(&k, N, 1, x, &Rp, &o.base, &vp, NULL, NULL);
  gfi_lscv(&k, N, 1, x, &Rm, &o.base, &vm, NULL, NULL);
  CHECK(vp >= r.value && vm >= r.value, "not a minimum");
  /* thread invariance, bit for bit */
  gfi_select_result r1, r3;
  o.base.nthreads = 1;
  CHECK_STATUS(gfi_select_lscv(&k, N, 1, x, &o, &r1, NULL), GFI_OK);
  o.base.nthreads = 3;
  CHECK_STATUS(gfi_select_lscv(&k, N, 1, x, &o, &r3, NULL), GFI_OK);
  CHECK(r1.R[0] == r3.R[0] && r1.value == r3.value, "threads change the result");
  o.base.method = GFI_METHOD_DIRECT;
  o.base.nthreads = 1;
  CHECK_STATUS(gfi_select_lscv(&k, 200, 1, x, &o, &r1, NULL), GFI_OK);
  o.base.nthreads = 3;
  CHECK_STATUS(gfi_select_lscv(&k, 200, 1, x, &o, &r3, NULL), GFI_OK);
  CHECK(r1.R[0] == r3.R[0] && r1.value == r3.value, "threads change the direct result");
  free(x);
  /* per axis: scales 1 and 4 give radii in about that ratio (sanitized: fewer points) */
  const size_t N2 = CHECK_SANITIZED ? 300 : 600;
  x = normal_data(N2, 2, 22);
  for (size_t i = 0; i < N2; i++) x[2 * i + 1] *= 4;
  gfi_select_default_opts(&o);
  o.per_axis = 1;
  o.nscan = 40;
  CHECK_STATUS(gfi_select_lscv(&k, N2, 2, x, &o, &r, NULL), GFI_OK);
  CHECK(r.R[0] / r.R[1] > 2 && r.R[0] / r.R[1] < 8, "per-axis radii %g %g", r.R[0], r.R[1]);
  gfi_select_result ri;
  o.per_axis = 0;
  CHECK_STATUS(gfi_select_lscv(&k, N2, 2, x, &o, &ri, NULL), GFI_OK);
  CHECK(r.value <= ri.value, "per-axis %.17g worse than isotropic %.17g", r.value, ri.value);
  free(x);
  /* NW: the CV radius of a smooth curve */
  x = normal_data(300, 1, 23);
  double *y = malloc(300 * sizeof *y);
  for (size_t i = 0; i < 300; i++) y[i] = sin(x[i]) + 0.1 * cos(37.0 * (double)i);
  gfi_select_default_opts(&o);
  o.nscan = 40;
  CHECK_STATUS(gfi_select_loocv(&k, 300, 1, 1, x, y, &o, &r, curve), GFI_OK);
  CHECK(r.R[0] > 0.2 && r.R[0] < 50 && r.value < 0.05, "NW R %g cv %g", r.R[0], r.value);
  free(y);
  free(x);
  free(curve);
}

static double phi_sq(double z, void *c) {
  (void)c;
  return z * z;
}

static void test_errors(void) {
  double x[4] = {0, 1, 2, 3}, y[4] = {1, 2, 3, 4}, R = 1, v;
  gfi_kernel k, kc;
  gfi_kernel_pow(&k, 2);
  gfi_kernel_custom(&kc, phi_sq, NULL);
  CHECK_STATUS(gfi_lscv(NULL, 4, 1, x, &R, NULL, &v, NULL, NULL), GFI_EINVAL);
  CHECK_STATUS(gfi_lscv(&k, 4, 1, x, &R, NULL, NULL, NULL, NULL), GFI_EINVAL);
  CHECK_STATUS(gfi_lscv(&k, 1, 1, x, &R, NULL, &v, NULL, NULL), GFI_EEMPTY);
  CHECK_STATUS(gfi_lscv(&k, 4, 0, x, &R, NULL, &v, NULL, NULL), GFI_EDIM);
  CHECK_STATUS(gfi_lscv(&kc, 4, 1, x, &R, NULL, &v, NULL, NULL), GFI_EUNSUPPORTED);
  double Rb = -1, xn[4] = {0, NAN, 1, 2};
  CHECK_STATUS(gfi_lscv(&k, 4, 1, x, &Rb, NULL, &v, NULL, NULL), GFI_ERADIUS);
  CHECK_STATUS(gfi_lscv(&k, 4, 1, xn, &R, NULL, &v, NULL, NULL), GFI_ENONFINITE);
  gfi_opts bad;
  gfi_default_opts(&bad);
  bad.tol = 2;
  CHECK_STATUS(gfi_lscv(&k, 4, 1, x, &R, &bad, &v, NULL, NULL), GFI_EINVAL);
  CHECK_STATUS(gfi_loocv(&k, 4, 1, 0, x, y, &R, NULL, 0, &v, NULL, NULL, NULL), GFI_EINVAL);
  CHECK_STATUS(gfi_loocv(&k, 4, 1, 1, x, y, &R, NULL, 2, &v, NULL, NULL, NULL), GFI_EINVAL);
  double yn[4] = {1, INFINITY, 0, 0};
  CHECK_STATUS(gfi_loocv(&k, 4, 1, 1, x, yn, &R, NULL, 0, &v, NULL, NULL, NULL), GFI_ENONFINITE);
  /* every row left out */
  double xf[2] = {0, 4.5}, yf[2] = {0, 1};
  size_t nf;
  gfi_kernel k1;
  gfi_kernel_pow(&k1, 1);
  CHECK_STATUS(gfi_loocv(&k1, 2, 1, 1, xf, yf, &R, NULL, 0, &v, &nf, NULL, NULL), GFI_EDENOM);
  CHECK(isnan(v) && nf == 2, "all rows left out");
  gfi_select_opts o;
  gfi_select_result r;
  gfi_select_default_opts(&o);
  o.nscan = 2;
  CHECK_STATUS(gfi_select_lscv(&k, 4, 1, x, &o, &r, NULL), GFI_EINVAL);
  gfi_select_default_opts(&o);
  o.R_lo = 5;
  o.R_hi = 1;
  CHECK_STATUS(gfi_select_lscv(&k, 4, 1, x, &o, &r, NULL), GFI_ERADIUS);
  gfi_select_default_opts(&o);
  o.per_axis = 1;
  double x4[16] = {0};
  for (int i = 0; i < 16; i++) x4[i] = i * 0.37;
  CHECK_STATUS(gfi_select_lscv(&k, 4, 4, x4, &o, &r, NULL), GFI_EUNSUPPORTED);
  CHECK_STATUS(gfi_select_lscv(&k, 4, 1, x, NULL, NULL, NULL), GFI_EINVAL);
}

int main(void) {
  CHECK_TIMED(test_pair);
  CHECK_TIMED(test_lscv_values);
  CHECK_TIMED(test_search_route);
  CHECK_TIMED(test_loocv_values);
  CHECK_TIMED(test_loocv_route);
  CHECK_TIMED(test_loocv_second_pass);
  CHECK_TIMED(test_search);
  CHECK_TIMED(test_search_synthetic);
  CHECK_TIMED(test_minimize_radius);
  CHECK_TIMED(test_errors);
  return check_summary("select");
}
