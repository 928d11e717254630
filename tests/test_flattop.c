/* The flat-top kernel family (gfi_kernel_flattop, spec flattop:c) end to end:
 * its facts (the transform's inverse, int K = 1, int kappa^2, the LSCV pair
 * function) against independent quadratures; the density on the direct, fast
 * and binned routes against a brute force in long double written from the
 * definition (cos(c u) - cos(u)) / (pi (1 - c) u^2) on hard data (clusters,
 * far outliers, far queries, an offset), every error within the printed
 * bound; the exact MISE against Monte Carlo (fixed seed, 4 standard errors);
 * LSCV direct against fast, and the radius LSCV picks against the exact
 * MISE's optimum; the text form and its refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include "gfi/gfi.h"
#include "check.h"
#include "select_internal.h"

#define PI_L 3.141592653589793238462643383279502884L

/* K(u) from its definition, in long double: the difference of cosines for
 * |u| >= 0.01 (it loses at most 5 of long double's 19 digits there), its
 * Taylor series (1 / (pi (1 - c))) sum_k (-1)^(k+1) (1 - c^2k) u^(2k-2) / (2k)!
 * below. No sinc, no product form: independent of the library's. */
static long double K_def(long double c, long double u) {
  u = fabsl(u);
  if (u >= 0.01L) return (cosl(c * u) - cosl(u)) / (PI_L * (1 - c) * u * u);
  long double s = 0, f = 1, u2k = 1; /* f = (2k)!, u2k = u^(2k-2) */
  for (int k = 1; k <= 8; k++) {
    f *= (2.0L * k - 1) * (2.0L * k);
    long double t = (1 - powl(c, 2 * k)) * u2k / f;
    s += (k % 2) ? t : -t;
    u2k *= u * u;
  }
  return s / (PI_L * (1 - c));
}

/* p(y) = (1/N) sum_i prod_j R_j K(R_j (y_j - x_ij)), the difference first. */
static long double brute(long double c, size_t N, size_t D, const double *x, const double *R, const double *y) {
  long double s = 0;
  for (size_t i = 0; i < N; i++) {
    long double t = 1;
    for (size_t j = 0; j < D; j++) t *= R[j] * K_def(c, (long double)R[j] * ((long double)y[j] - x[i * D + j]));
    s += t;
  }
  return s / (long double)N;
}

typedef struct {
  const gfi_kernel *k;
  double x;
  int sq;
} q_ctx;

/* (A / 2 pi) kappa(u) cos(u x) (its integral is gfi_kernel_eval(x)), or
 * kappa(u)^2 cos(u x) (the LSCV pair function) */
static double q_integrand(double u, void *vp) {
  const q_ctx *c = vp;
  double kp = gfi_kernel_kappa(c->k, u);
  return (c->sq ? kp * kp : c->k->A / (2 * M_PI) * kp) * cos(u * c->x);
}

static double pieces(const gfi_kernel *k, double x, int sq, gsl_integration_workspace *ws) {
  const double c = k->coef[0], kn[4] = {-1, -c, c, 1};
  q_ctx qc = {k, x, sq};
  gsl_function F = {q_integrand, &qc};
  double tot = 0, r, e;
  for (int q = 0; q < 3; q++) {
    gsl_integration_qag(&F, kn[q], kn[q + 1], 1e-15, 1e-13, 200, GSL_INTEG_GAUSS61, ws, &r, &e);
    tot += r;
  }
  return tot;
}

static void test_facts(void) {
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(200);
  const double cs[3] = {0.1, 0.5, 0.9};
  for (int ci = 0; ci < 3; ci++) {
    const double c = cs[ci];
    gfi_kernel k;
    CHECK_STATUS(gfi_kernel_flattop(&k, c), GFI_OK);
    CHECK(k.kind == GFI_PHI_FLATTOP && k.l == 1 && k.A_finite && k.coef[0] == c, "flattop fields");
    CHECK_STATUS(gfi_kernel_check_band(&k), GFI_OK);
    /* the transform: 1 on the flat part, linear to 0 at 1 */
    CHECK(gfi_kernel_kappa(&k, 0) == 1 && gfi_kernel_kappa(&k, -c) == 1 && gfi_kernel_kappa(&k, 1) == 0 &&
              gfi_kernel_kappa(&k, 1.5) == 0,
          "kappa's values at 0, -c, 1, 1.5");
    CHECK_CLOSE(gfi_kernel_kappa(&k, 0.5 * (1 + c)), 0.5, 4e-15, 0);
    /* the kernel against its transform's inverse and against its definition;
     * K(0) = (1 + c) / 2 pi, so that K integrates to kappa(0) = 1 */
    CHECK_CLOSE(gfi_kernel_eval(&k, 0) / k.A, (1 + c) / (2 * M_PI), 1e-15, 0);
    for (double x = 0; x <= 40; x += x < 1 ? 0.013 : 0.77) {
      CHECK_CLOSE(gfi_kernel_eval(&k, x), pieces(&k, x, 0, ws), 1e-11, 1e-13);
      CHECK_CLOSE(gfi_kernel_eval(&k, x) / k.A, (double)K_def(c, x), 1e-13, 1e-16);
    }
    /* int kappa^2, and the pair function G(v) = int kappa^2 e^{i v w} dw
     * (the closed form and its series) against quadrature */
    CHECK_CLOSE(gfi_kappa_sq_integral(&k), pieces(&k, 0, 1, ws), 1e-13, 0);
    sel_pair pr;
    sel_pair_init(&pr, &k);
    double worst = 0;
    for (double v = 0; v <= 300; v += v < 10 ? 0.0137 : 1.37) {
      double ref = pieces(&k, v, 1, ws);
      worst = fmax(worst, fabs(sel_pair_G(&pr, v) - ref));
      worst = fmax(worst, fabs(sel_pair_G(&pr, -v) - ref));
    }
    CHECK(worst <= 1e-13, "c = %g: pair function off by %.3g", c, worst);
  }
  gsl_integration_workspace_free(ws);
  gfi_kernel k;
  CHECK_STATUS(gfi_kernel_flattop(&k, 0), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_flattop(&k, 1), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_flattop(&k, NAN), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_flattop(NULL, 0.5), GFI_EINVAL);
}

static void test_parse(void) {
  gfi_kernel k, want;
  gfi_errinfo err;
  CHECK_STATUS(gfi_kernel_parse(&k, "flattop:0.5", &err), GFI_OK);
  CHECK_STATUS(gfi_kernel_flattop(&want, 0.5), GFI_OK);
  CHECK(k.kind == want.kind && k.l == want.l && k.A == want.A && k.A_finite == want.A_finite &&
            memcmp(k.coef, want.coef, sizeof k.coef) == 0,
        "flattop:0.5 is gfi_kernel_flattop(0.5)");
  static const char *bad[] = {"flattop:0", "flattop:1", "flattop:1.5", "flattop:-0.2", "flattop:nan",
                              "flattop:", "flattop:x", "flattop:0.5x", "flattop:1e999"};
  gfi_kernel keep;
  CHECK_STATUS(gfi_kernel_pow(&keep, 2), GFI_OK);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    k = keep;
    CHECK_STATUS(gfi_kernel_parse(&k, bad[i], &err), GFI_EINVAL);
    CHECK(strstr(err.msg, "c ") != NULL && strstr(err.msg, "(0, 1)") != NULL,
          "'%s': the message '%s' names c and its range", bad[i], err.msg);
    CHECK(err.column == 9, "'%s': column %zu", bad[i], err.column);
    CHECK(k.kind == keep.kind && k.l == keep.l && k.A == keep.A, "'%s' changed the kernel", bad[i]);
  }
  /* the regression and attention estimators take the sinc families only */
  gfi_nw_plan *np = NULL;
  double x[4] = {0, 1, 2, 3}, y[4] = {1, 2, 3, 4}, R = 1;
  CHECK_STATUS(gfi_nw_plan_fourier(&np, &want, 4, 1, 1, x, y, &R, NULL), GFI_EUNSUPPORTED);
  double v;
  CHECK_STATUS(gfi_loocv(&want, 4, 1, 1, x, y, &R, NULL, 0, &v, NULL, NULL, NULL), GFI_EUNSUPPORTED);
}

/* A cluster, a wide component and far outliers (far kernel widths away). */
static double draw(gsl_rng *r, double far) {
  double u = gsl_rng_uniform(r);
  if (u < 0.5) return 0.3 + gsl_ran_gaussian(r, 0.02);
  if (u < 0.97 || far == 0) return gsl_ran_gaussian(r, 1.0);
  return (gsl_rng_uniform(r) < 0.5 ? -1 : 1) * far * (1 + gsl_rng_uniform(r));
}

/* Direct and fast routes at points, and the binned route on a grid, on
 * randomised hard cases: every error within the route's bound. */
static void test_density(gsl_rng *r) {
  int ran = 0, skipped = 0;
  double worst_direct = 0, worst_ratio = 0;
  /* case 12: outliers R |x| ~ 1.5e6 away, beyond the direct route's inline
   * sincos (its blocks take the libm path) */
  for (int cs = 0; cs < 13; cs++) {
    const size_t D = cs == 12 ? 1 : 1 + (size_t)(cs % 3);
    if (CHECK_SANITIZED && D == 3 && cs != 2) continue; /* the same paths, one 3-D case (memory, not statistics) */
    const size_t N = D == 3 ? 80 : 200, M = 24;
    const double c = 0.05 + 0.9 * gsl_rng_uniform(r);
    double Rv[3];
    /* the 2-D and 3-D node counts grow as the span's square and cube: smaller radii there */
    for (size_t j = 0; j < D; j++) Rv[j] = exp(log(0.5) + gsl_rng_uniform(r) * log((D == 1 ? 200.0 : D == 2 ? 20.0 : 1.2) / 0.5));
    if (cs == 12) Rv[0] = 50;
    const double far = cs == 12 ? 3e4 : cs % 4 == 0 ? 0 : (D == 1 ? 300.0 : D == 2 ? 10.0 : 2.0) / Rv[0];
    const double off = cs % 5 == 2 ? 1e4 : 0;
    gfi_kernel k;
    CHECK_STATUS(gfi_kernel_flattop(&k, c), GFI_OK);
    double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q), *out = malloc(M * sizeof *out);
    for (size_t i = 0; i < N * D; i++) x[i] = off + draw(r, far);
    for (size_t t = 0; t < M; t++)
      for (size_t j = 0; j < D; j++)
        q[t * D + j] = off + (t >= M - 2 ? 50.0 * (t == M - 1 ? 1 : -1) : gsl_ran_flat(r, -1.5, 1.5)); /* far queries */
    long double *ref = malloc(M * sizeof *ref);
    double m = 0;
    for (size_t t = 0; t < M; t++) {
      ref[t] = brute(c, N, D, x, Rv, q + t * D);
      m = fmax(m, fabs((double)ref[t]));
    }
    for (int route = 0; route < 2; route++) {
      const double tol = cs % 2 ? 1e-6 : 1e-10;
      gfi_opts o;
      gfi_default_opts(&o);
      o.method = route ? GFI_METHOD_FAST : GFI_METHOD_DIRECT;
      o.tol = tol;
      gfi_density_plan *p = NULL;
      gfi_fast_info info;
      int st = gfi_density_plan_fourier(&p, &k, N, D, x, NULL, Rv, &o);
      if (!st) st = gfi_density_eval_info(p, M, q, out, &info);
      gfi_density_destroy(p);
      if (st == GFI_ERANGE && route) {
        skipped++;
        continue;
      }
      CHECK(st == GFI_OK, "case %d route %d: %s", cs, route, gfi_strerror(st));
      if (st) continue;
      double err = 0;
      for (size_t t = 0; t < M; t++) err = fmax(err, fabs(out[t] - (double)ref[t]));
      if (!route) {
        CHECK(err <= 1e-13 * m, "case %d (D=%zu c=%.3g R=%.3g far=%.3g off=%g): direct error %.3g of %.3g", cs, D,
              c, Rv[0], far, off, err, m);
        worst_direct = fmax(worst_direct, err / m);
      } else {
        ran++;
        CHECK(info.route == GFI_METHOD_FAST, "case %d: the fast route ran", cs);
        CHECK(err <= info.bound_abs + 1e-14 * m,
              "case %d (D=%zu c=%.3g R=%.3g far=%.3g off=%g): fast error %.3g > bound %.3g", cs, D, c, Rv[0], far,
              off, err, info.bound_abs);
        if (info.bound_abs > 0) worst_ratio = fmax(worst_ratio, err / info.bound_abs);
      }
    }
    free(x), free(q), free(out), free(ref);
  }
  CHECK(ran >= (CHECK_SANITIZED ? 6 : 8), "the fast route ran in %d of 13 cases (%d refused)", ran, skipped);
  printf("flattop density: direct worst %.3g relative; fast %d cases, worst error / bound %.3g\n", worst_direct, ran,
         worst_ratio);
}

/* The binned route of a grid: a loose tol on a large grid takes it; every
 * value within its bound against the direct route. 1-D and 2-D. */
static void test_binned(gsl_rng *r) {
  for (size_t D = 1; D <= 2; D++) {
    const size_t N = D == 1 ? 200000 : 40000, G = D == 1 ? 2048 : 96,
                 stride = (D == 1 ? 16 : 13) * (CHECK_SANITIZED ? 4 : 1); /* the direct reference's points */
    double *x = malloc(N * D * sizeof *x);
    for (size_t i = 0; i < N * D; i++) x[i] = draw(r, 0);
    gfi_kernel k;
    CHECK_STATUS(gfi_kernel_flattop(&k, 0.5), GFI_OK);
    double R[2] = {12.6, 9.0}, lo[2] = {-4, -3}, hi[2] = {4, 3.5};
    size_t n[2] = {G, G}, tot = D == 1 ? G : G * G;
    double *f = malloc(tot * sizeof *f);
    gfi_opts o;
    gfi_default_opts(&o);
    o.tol = 1e-4;
    gfi_density_plan *p = NULL;
    gfi_fast_info info;
    int st = gfi_density_plan_fourier(&p, &k, N, D, x, NULL, R, &o);
    if (!st) st = gfi_density_eval_grid(p, lo, hi, n, f, &info);
    gfi_density_destroy(p);
    CHECK(st == GFI_OK, "grid D=%zu: %s", D, gfi_strerror(st));
    CHECK(info.route == GFI_METHOD_FAST && info.bins[0] > 0, "grid D=%zu at tol 1e-4: route %d, bins %zu", D,
          (int)info.route, info.bins[0]);
    /* the direct route at every stride-th grid point */
    size_t Ms = (tot + stride - 1) / stride;
    double *qs = malloc(Ms * D * sizeof *qs), *ref = malloc(Ms * sizeof *ref);
    for (size_t t = 0; t < Ms; t++) {
      size_t g = t * stride, idx[2] = {D == 1 ? g : g / G, g % G};
      for (size_t j = 0; j < D; j++) qs[t * D + j] = lo[j] + (hi[j] - lo[j]) * (double)idx[j] / (double)(G - 1);
    }
    o.method = GFI_METHOD_DIRECT;
    st = gfi_density_plan_fourier(&p, &k, N, D, x, NULL, R, &o);
    if (!st) st = gfi_density_eval(p, Ms, qs, ref);
    gfi_density_destroy(p);
    CHECK(st == GFI_OK, "grid D=%zu, direct: %s", D, gfi_strerror(st));
    double err = 0, m = 0, neg = 0;
    for (size_t t = 0; t < Ms; t++) {
      err = fmax(err, fabs(f[t * stride] - ref[t]));
      m = fmax(m, fabs(ref[t]));
      neg = fmin(neg, ref[t]);
    }
    CHECK(err <= info.bound_abs && err <= 1e-4 * m, "grid D=%zu: error %.3g, bound %.3g, max %.3g", D, err,
          info.bound_abs, m);
    printf("flattop binned D=%zu: %zu cells on axis 0 (order %d), error %.3g, bound %.3g relative to max %.3g "
           "(least value %.3g)\n", D, info.bins[0], info.bin_order, err / m, info.bound_abs / m, m, neg);
    free(x), free(f), free(qs), free(ref);
  }
}

/* The exact MISE against the Monte-Carlo MISE (fixed seed, 4 standard
 * errors), normal and bimodal truths, 1-D and 2-D. */
static void test_mise(void) {
  gfi_kernel k;
  CHECK_STATUS(gfi_kernel_flattop(&k, 0.5), GFI_OK);
  const char *specs[3] = {"normal", "mw:6", "normal"};
  const size_t dims[3] = {1, 1, 2};
  for (int s = 0; s < 3; s++) {
    gfi_model *m = NULL;
    gfi_errinfo err;
    CHECK_STATUS(gfi_model_parse(&m, specs[s], dims[s], &err), GFI_OK);
    if (!m) continue;
    double R[2] = {3.0, 2.5};
    gfi_mise_result ex, mc;
    CHECK_STATUS(gfi_mise_exact(m, &k, 500, R, NULL, &ex), GFI_OK);
    gfi_mise_opts o;
    gfi_mise_default_opts(&o);
    o.base.seed = 17;
    CHECK_STATUS(gfi_mise_mc(m, &k, 500, R, CHECK_SANITIZED ? 100 : 400, &o, &mc, NULL), GFI_OK);
    CHECK(fabs(ex.mise - mc.mise) <= 4 * mc.se, "%s D=%zu: exact %.6g, MC %.6g +- %.2g", specs[s], dims[s],
          ex.mise, mc.mise, mc.se);
    printf("flattop MISE %s D=%zu R=%g: exact %.6g, MC %.6g +- %.2g\n", specs[s], dims[s], R[0], ex.mise, mc.mise,
           mc.se);
    gfi_model_free(m);
  }
}

/* LSCV: the direct sum (the pair function) against the fast route (kappa^2
 * in frequency) within the fast bound; the radius it picks on 4000 normal
 * points against the exact MISE's optimum. */
static void test_lscv(gsl_rng *r) {
  gfi_kernel k;
  CHECK_STATUS(gfi_kernel_flattop(&k, 0.5), GFI_OK);
  for (size_t D = 1; D <= 2; D++) {
    const size_t N = 400;
    double *x = malloc(N * D * sizeof *x);
    for (size_t i = 0; i < N * D; i++) x[i] = draw(r, 20.0);
    const double Rs[3] = {0.7, 3.0, 15.0};
    for (int ri = 0; ri < 3; ri++) {
      double R[2] = {Rs[ri], 1.3 * Rs[ri]}, vd = NAN, vf = NAN, bf = NAN;
      gfi_opts o;
      gfi_default_opts(&o);
      o.method = GFI_METHOD_DIRECT;
      CHECK_STATUS(gfi_lscv(&k, N, D, x, R, &o, &vd, NULL, NULL), GFI_OK);
      o.method = GFI_METHOD_FAST;
      o.tol = 1e-8;
      CHECK_STATUS(gfi_lscv(&k, N, D, x, R, &o, &vf, &bf, NULL), GFI_OK);
      CHECK(fabs(vd - vf) <= bf + 1e-12 * fabs(vd), "LSCV D=%zu R=%g: direct %.12g, fast %.12g, bound %.3g", D,
            R[0], vd, vf, bf);
    }
    free(x);
  }
  gfi_model *m = NULL;
  gfi_errinfo err;
  CHECK_STATUS(gfi_model_parse(&m, "normal", 1, &err), GFI_OK);
  const size_t N = CHECK_SANITIZED ? 1000 : 4000;
  double *x = malloc(N * sizeof *x);
  for (size_t i = 0; i < N; i++) x[i] = gsl_ran_gaussian(r, 1.0);
  gfi_select_result res;
  CHECK_STATUS(gfi_select_lscv(&k, N, 1, x, NULL, &res, NULL), GFI_OK);
  double ropt = NAN;
  gfi_mise_result at, atsel;
  CHECK_STATUS(gfi_ropt(m, &k, N, NULL, NULL, &ropt, &at), GFI_OK);
  CHECK_STATUS(gfi_mise_exact(m, &k, N, res.R, NULL, &atsel), GFI_OK);
  CHECK(res.R[0] > ropt / 2 && res.R[0] < ropt * 2, "LSCV radius %.4g against the MISE optimum %.4g", res.R[0],
        ropt);
  CHECK(atsel.mise <= 3 * at.mise, "MISE at the LSCV radius %.4g against %.4g at the optimum", atsel.mise, at.mise);
  printf("flattop LSCV: N = %zu normal, R = %.4g (MISE %.4g); exact optimum R = %.4g (MISE %.4g)\n", N, res.R[0],
         atsel.mise, ropt, at.mise);
  free(x);
  gfi_model_free(m);
}

int main(void) {
  gsl_set_error_handler_off();
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 20261129);
  test_facts();
  test_parse();
  test_density(r);
  test_binned(r);
  test_mise();
  test_lscv(r);
  gsl_rng_free(r);
  return check_summary("flattop");
}
