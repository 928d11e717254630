/* Exact MISE against closed forms, refinement and invariances; exact against
 * Monte Carlo (exact-ISE route) in standard errors; thread-count
 * determinism; ISE routes against each other; optimal radius; error codes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_integration.h>
#include "check.h"
#include "gfi/gfi.h"

static gfi_model *model(const char *spec, size_t D) {
  gfi_model *m = NULL;
  gfi_errinfo e;
  int st = gfi_model_parse(&m, spec, D, &e);
  if (st) {
    fprintf(stderr, "cannot parse %s: %s\n", spec, e.msg);
    exit(1);
  }
  return m;
}

static double exact(const gfi_model *m, int l, double N, const double *R, double res) {
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.resolution = res;
  gfi_mise_result r;
  int st = gfi_mise_exact(m, KPOW(l), N, R, &o, &r);
  CHECK(st == GFI_OK, "exact MISE failed: %s", gfi_strerror(st));
  CHECK_CLOSE(r.mise, r.bias2 + r.var, 1e-15, 0);
  return r.mise;
}

/* l = 1, N(0, s^2): |psi|^2 = exp(-s^2 t^2), Kbar = 1{|t| <= R} */
static void test_closed_form_l1(void) {
  double s2[] = {1.0, 4.0, 0.25};
  const char *spec[] = {"normal", "normal:cov=4", "normal:cov=0.25"};
  double Rs[] = {0.3, 1, 2.5, 4, 7};
  double Ns[] = {10, 1e3, 1e9};
  for (int a = 0; a < 3; a++) {
    gfi_model *m = model(spec[a], 1);
    double s = sqrt(s2[a]);
    for (int i = 0; i < 5; i++)
      for (int k = 0; k < 3; k++) {
        double R = Rs[i], N = Ns[k];
        double cf = (sqrt(M_PI) / s * erfc(s * R) + (2 * R - sqrt(M_PI) / s * erf(s * R)) / N) / (2 * M_PI);
        CHECK_CLOSE(exact(m, 1, N, &R, 1), cf, 1e-11, 0);
      }
    gfi_model_free(m);
  }
}

static void test_refinement(void) {
  const char *spec[] = {"mw:10", "laplace", "cauchy", "t:3", "normal:cov=1,0.6,0.6,0.8", "laplace", "cauchy"};
  size_t dims[] = {1, 1, 1, 1, 2, 2, 2};
  int ls[] = {1, 2, 3, 4, 8};
  for (int a = 0; a < 7; a++) {
    gfi_model *m = model(spec[a], dims[a]);
    for (int i = 0; i < 5; i++) {
      double R[2] = {2.5, 1.7};
      double v1 = exact(m, ls[i], 500, R, 1), v2 = exact(m, ls[i], 500, R, 2.5);
      CHECK(fabs(v1 - v2) <= 1e-11 * v2, "%s D=%zu l=%d: %.17g vs refined %.17g", spec[a], dims[a],
            ls[i], v1, v2);
    }
    gfi_model_free(m);
  }
  /* huge N and R: no cancellation, bias and variance both resolved */
  gfi_model *m = model("normal", 1);
  double R = 1500;
  double v1 = exact(m, 2, 1e9, &R, 1), v2 = exact(m, 2, 1e9, &R, 3);
  CHECK_CLOSE(v1, v2, 1e-11, 0);
  gfi_model_free(m);
}

/* X -> s X and R -> R/s: MISE -> MISE / s^D */
static void test_scaling(void) {
  double s = 2.5;
  {
    gfi_model *a = model("laplace", 1), *b = model("laplace:0,2.5", 1);
    /* l = 7, 8: a graded Laplace axis with the most knots (its breakpoints once overran a fixed array) */
    for (int l = 1; l <= 8; l += l == 4 ? 3 : 1) {
      double R = 3, Rs = R / s;
      CHECK_CLOSE(exact(b, l, 700, &Rs, 1), exact(a, l, 700, &R, 1) / s, 1e-11, 0);
    }
    gfi_model_free(a);
    gfi_model_free(b);
  }
  {
    gfi_model *a = model("normal:cov=1,0.5,0.5,2", 2), *b = model("normal:cov=6.25,3.125,3.125,12.5", 2);
    for (int l = 1; l <= 4; l++) {
      double R[2] = {2, 3}, Rs[2] = {2 / s, 3 / s};
      CHECK_CLOSE(exact(b, l, 300, Rs, 1), exact(a, l, 300, R, 1) / (s * s), 1e-11, 0);
    }
    gfi_model_free(a);
    gfi_model_free(b);
  }
  {
    /* a shift changes nothing */
    gfi_model *a = model("normal:cov=1,0.5,0.5,2", 2), *b = model("normal:mean=3,-1;cov=1,0.5,0.5,2", 2);
    double R[2] = {2, 3};
    CHECK_CLOSE(exact(a, 2, 300, R, 1), exact(b, 2, 300, R, 1), 1e-12, 0);
    gfi_model_free(a);
    gfi_model_free(b);
  }
}

static void test_mc_agreement(void) {
  struct {
    const char *spec;
    size_t D;
    int l;
    size_t N;
    double R;
  } c[] = {
    {"normal", 1, 4, 200, 3},       {"mw:6", 1, 1, 300, 4},  {"laplace", 1, 2, 200, 2},
    {"normal:cov=1,0.6,0.6,0.8", 2, 2, 200, 1.5}, {"normal:cov=1,0.6,0.6,0.8", 2, 1, 150, 1.2},
    {"t:5", 1, 1, 200, 2},          {"mw:10", 1, 4, 400, 8},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    gfi_model *m = model(c[i].spec, c[i].D);
    double R[2] = {c[i].R, c[i].R};
    gfi_mise_opts o;
    gfi_mise_default_opts(&o);
    o.base.seed = 11 + i;
    gfi_mise_result ex, mc;
    CHECK_STATUS(gfi_mise_exact(m, KPOW(c[i].l), (double)c[i].N, R, &o, &ex), GFI_OK);
    CHECK_STATUS(gfi_mise_mc(m, KPOW(c[i].l), c[i].N, R, 120, &o, &mc, NULL), GFI_OK);
    double z = (mc.mise - ex.mise) / mc.se;
    CHECK(fabs(z) < 4, "%s D=%zu l=%d N=%zu R=%g: exact %.6g, MC %.6g +- %.3g (z = %.2f)", c[i].spec,
          c[i].D, c[i].l, c[i].N, c[i].R, ex.mise, mc.mise, mc.se, z);
    CHECK(mc.lo95 < mc.mise && mc.mise < mc.hi95, "interval");
    /* the pooled-sample parts are estimates of the exact ones */
    CHECK(fabs(mc.var - ex.var) < 0.25 * ex.var + 4 * mc.se, "%s: variance part %.4g vs exact %.4g",
          c[i].spec, mc.var, ex.var);
    gfi_model_free(m);
  }
}

static void test_threads(void) {
  gfi_model *m = model("normal:cov=1,0.6,0.6,0.8", 2);
  double R[2] = {1.5, 2};
  double a[20], b[20];
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.seed = 5;
  o.base.nthreads = 1;
  gfi_mise_result ra, rb;
  CHECK_STATUS(gfi_mise_mc(m, KPOW(2), 100, R, 20, &o, &ra, a), GFI_OK);
  o.base.nthreads = 2;
  CHECK_STATUS(gfi_mise_mc(m, KPOW(2), 100, R, 20, &o, &rb, b), GFI_OK);
  CHECK(memcmp(a, b, sizeof a) == 0, "replications differ between 1 and 2 threads");
  CHECK(memcmp(&ra.mise, &rb.mise, sizeof ra.mise) == 0 && memcmp(&ra.var, &rb.var, sizeof ra.var) == 0,
        "summary differs between thread counts");
  double e1, e2;
  o.base.nthreads = 1;
  CHECK_STATUS(gfi_mise_exact(m, KPOW(4), 100, R, &o, &(gfi_mise_result){0}), GFI_OK);
  gfi_mise_result x1, x2;
  gfi_mise_exact(m, KPOW(4), 100, R, &o, &x1);
  o.base.nthreads = 2;
  gfi_mise_exact(m, KPOW(4), 100, R, &o, &x2);
  e1 = x1.mise, e2 = x2.mise;
  CHECK(memcmp(&e1, &e2, sizeof e1) == 0, "exact MISE differs between thread counts");
  gfi_model_free(m);
}

/* one sample: the exact ISE lies in [grid ISE, grid ISE + tail bound] */
static void test_ise_routes(void) {
  const char *spec[] = {"normal", "mw:6", "normal:cov=1,0.3,0.3,1"};
  size_t dims[] = {1, 1, 2};
  for (int a = 0; a < 3; a++)
    for (int l = 1; l <= 4; l += (l == 2 ? 2 : 1)) {
      gfi_model *m = model(spec[a], dims[a]);
      size_t N = 300, D = dims[a];
      double *x = malloc(N * D * sizeof *x);
      gsl_rng *r = gfi_rng_stream(3, 0);
      gfi_model_sample(m, r, N, x);
      gsl_rng_free(r);
      double R[2] = {2.5, 2.5}, ip, ig, tb;
      gfi_kernel k;
      gfi_kernel_pow(&k, l);
      CHECK_STATUS(gfi_ise_plancherel(m, KPOW(l), N, x, R, NULL, &ip), GFI_OK);
      CHECK_STATUS(gfi_ise_grid(m, &k, N, x, R, NULL, NULL, NULL, &ig, &tb), GFI_OK);
      CHECK(isfinite(tb) && tb >= 0, "tail bound %g", tb);
      CHECK(ip >= ig * (1 - 1e-7) && ip <= (ig + tb) * (1 + 1e-7),
            "%s l=%d: Plancherel %.10g outside grid [%.10g, %.10g]", spec[a], l, ip, ig, ig + tb);
      if (l >= 4) CHECK_CLOSE(ip, ig, 1e-6, 0);
      /* MSE at uniform points in the box times its volume estimates the box ISE */
      double lo[2] = {-6, -6}, hi[2] = {6, 6}, mse, se, ib;
      gfi_mise_opts o;
      gfi_mise_default_opts(&o);
      o.base.seed = 9;
      CHECK_STATUS(gfi_mse_box(m, &k, N, x, R, lo, hi, 20000, &o, &mse, &se), GFI_OK);
      CHECK_STATUS(gfi_ise_grid(m, &k, N, x, R, lo, hi, NULL, &ib, NULL), GFI_OK);
      double vol = pow(12.0, (double)D);
      CHECK(fabs(mse * vol - ib) < 4 * se * vol, "%s l=%d: MSE x volume %.6g +- %.3g vs box ISE %.6g",
            spec[a], l, mse * vol, se * vol, ib);
      free(x);
      gfi_model_free(m);
    }
}

static double gauss_diff2(double x, void *p) {
  double *h = p, v = 1 + h[0] * h[0];
  double a = exp(-0.5 * x * x / v) / sqrt(2 * M_PI * v) - exp(-0.5 * x * x) / sqrt(2 * M_PI);
  return a * a;
}

/* heavy tails: Cauchy samples with far points (they set the highest
 * frequency of |phi_N Kbar - psi|^2, so the cell width): the Plancherel ISE
 * with the default cells equals the one with cells four times narrower,
 * on the direct sums and through the NUFFT; few points, so that the far
 * ones weigh enough for a too coarse rule to show */
static void test_ise_far_points(void) {
  const double far[] = {0.0, 1e3, -5e3};
  for (int f = 0; f < 3; f++)
    for (int l = 1; l <= 2; l++) {
      gfi_model *m = model("cauchy", 1);
      size_t N = 12; /* few points: each far one weighs 1/12 of phi_N */
      double *x = malloc(N * sizeof *x);
      gsl_rng *r = gfi_rng_stream(11, (uint64_t)f);
      gfi_model_sample(m, r, N, x);
      gsl_rng_free(r);
      if (far[f] != 0) x[7] = far[f], x[3] = -0.37 * far[f], x[9] = 0.61 * far[f];
      double R = 3.0, ise[2][2];
      for (int e = 0; e < 2; e++)
        for (int res = 0; res < 2; res++) {
          gfi_mise_opts o;
          gfi_mise_default_opts(&o);
          o.resolution = res ? 4 : 1;
          o.base.method = e ? GFI_METHOD_FAST : GFI_METHOD_DIRECT;
          o.base.tol = 1e-14;
          CHECK_STATUS(gfi_ise_plancherel(m, KPOW(l), N, x, &R, &o, &ise[e][res]), GFI_OK);
        }
      /* the direct sums' own rounding (phases up to 3e4 here) is about
       * 3e-14; cells of phase 40 instead of 8 miss by 4e-13 */
      CHECK_CLOSE(ise[0][0], ise[0][1], 2e-13, 0);
      CHECK_CLOSE(ise[1][0], ise[1][1], 1e-11, 0);
      CHECK_CLOSE(ise[0][0], ise[1][0], 1e-11, 0);
      free(x);
      gfi_model_free(m);
    }
}

static void test_gauss(void) {
  gfi_model *m = model("normal", 1);
  double h = 0.4, N = 250, H = h * h;
  gfi_mise_result r;
  CHECK_STATUS(gfi_mise_gauss_exact(m, N, &H, &r), GFI_OK);
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(200);
  gsl_function F = {gauss_diff2, &h};
  double b2, err;
  gsl_integration_qagi(&F, 0, 1e-13, 200, ws, &b2, &err);
  gsl_integration_workspace_free(ws);
  /* integrated variance: (int K_h^2 - int f_h^2)/N */
  double var = (1 / (2 * sqrt(M_PI) * h) - 1 / (2 * sqrt(M_PI * (1 + h * h)))) / N;
  CHECK_CLOSE(r.bias2, b2, 1e-9, 0);
  CHECK_CLOSE(r.var, var, 1e-12, 0);
  double hopt;
  gfi_mise_result ro, rp, rm;
  CHECK_STATUS(gfi_mise_gauss_hopt(m, N, &hopt, &ro), GFI_OK);
  double Hp = hopt * hopt * 1.0201, Hm = hopt * hopt / 1.0201;
  gfi_mise_gauss_exact(m, N, &Hp, &rp);
  gfi_mise_gauss_exact(m, N, &Hm, &rm);
  CHECK(ro.mise < rp.mise && ro.mise < rm.mise, "h* = %g is not a minimum", hopt);
  gfi_model_free(m);
}

/* The Gaussian KDE's closed-form ISE of one sample against the ISE of the
 * estimate summed point by point on a fine grid; its Monte Carlo against
 * the exact MISE within standard errors and independent of the thread
 * count. */
static void test_gauss_ise_mc(void) {
  gfi_model *m = model("mw:2", 1);
  gsl_rng *g = gfi_rng_stream(11, 0);
  size_t N = 40;
  double x[40], h = 0.35, H = h * h, ise;
  CHECK_STATUS(gfi_model_sample(m, g, N, x), GFI_OK);
  CHECK_STATUS(gfi_ise_gauss(m, N, x, &H, &ise), GFI_OK);
  /* brute force: p_hat and p summed at every grid point, Simpson on [-12, 12] */
  size_t G = 24001;
  double a = -12, step = 24.0 / (double)(G - 1), bf = 0;
  for (size_t q = 0; q < G; q++) {
    double t = a + step * (double)q, ph = 0, p;
    for (size_t i = 0; i < N; i++) ph += exp(-0.5 * (t - x[i]) * (t - x[i]) / H) / sqrt(2 * M_PI * H);
    ph /= (double)N;
    gfi_model_pdf(m, 1, &t, &p);
    double wq = (q == 0 || q == G - 1) ? 1 : (q % 2 ? 4 : 2);
    bf += wq * (ph - p) * (ph - p);
  }
  bf *= step / 3;
  CHECK_CLOSE(ise, bf, 1e-9, 0);
  /* 2-D correlated normal: Monte Carlo within 4 se of the exact value; threads do not change the bits */
  gfi_model *m2 = model("normal:cov=1,0.7,0.7,2", 2);
  double H2[4] = {0.2, 0.05, 0.05, 0.3};
  gfi_mise_result ex, mc1, mc2;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.seed = 5;
  o.base.nthreads = 1;
  CHECK_STATUS(gfi_mise_gauss_exact(m2, 200, H2, &ex), GFI_OK);
  CHECK_STATUS(gfi_mise_gauss_mc(m2, 200, H2, 400, &o, &mc1, NULL), GFI_OK);
  o.base.nthreads = 3;
  CHECK_STATUS(gfi_mise_gauss_mc(m2, 200, H2, 400, &o, &mc2, NULL), GFI_OK);
  CHECK(fabs(mc1.mise - ex.mise) < 4 * mc1.se, "gauss MC %g +- %g vs exact %g", mc1.mise, mc1.se, ex.mise);
  CHECK(mc1.mise == mc2.mise && mc1.se == mc2.se, "gauss MC depends on the thread count");
  CHECK(mc1.nreps == 400 && isnan(mc1.bias2), "gauss MC fields");
  double Hbad[4] = {1, 2, 2, 1};
  CHECK_STATUS(gfi_mise_gauss_mc(m2, 200, Hbad, 4, &o, &mc1, NULL), GFI_EBANDWIDTH);
  CHECK_STATUS(gfi_mise_gauss_mc(m2, 200, H2, 1, &o, &mc1, NULL), GFI_EINVAL);
  gfi_model *lap = model("laplace", 1);
  CHECK_STATUS(gfi_ise_gauss(lap, N, x, &H, &ise), GFI_EUNSUPPORTED);
  gfi_model_free(lap);
  gfi_model_free(m2);
  gfi_model_free(m);
  gsl_rng_free(g);
}

static void test_ropt(void) {
  const char *spec[] = {"normal", "cauchy", "laplace", "mw:6", "normal:cov=1,0.5,0.5,1"};
  size_t dims[] = {1, 1, 1, 1, 2};
  for (int a = 0; a < 5; a++)
    for (int l = 1; l <= 4; l *= 2) {
      gfi_model *m = model(spec[a], dims[a]);
      double N = a == 4 ? 1e4 : 1e7, r;
      gfi_mise_result res;
      int st = gfi_ropt(m, KPOW(l), N, NULL, NULL, &r, &res);
      CHECK(st == GFI_OK, "%s l=%d: %s", spec[a], l, gfi_strerror(st));
      double Rp[2] = {r * 1.01, r * 1.01}, Rm[2] = {r / 1.01, r / 1.01};
      double fp = exact(m, l, N, Rp, 1), fm = exact(m, l, N, Rm, 1);
      CHECK(res.mise <= fp && res.mise <= fm, "%s l=%d: R* = %g not a minimum (%g, %g, %g)", spec[a], l,
            r, fm, res.mise, fp);
      gfi_model_free(m);
    }
}

/* The smoothness hypotheses of the rate theorems (the checks themselves are
 * in test_experiments.c). */
static void test_rates(void) {
  gfi_model *lap = NULL, *nor = NULL, *pr = NULL;
  gfi_model_laplace(&lap, 0, 1);
  gfi_model_normal(&nor, 1, NULL, NULL);
  const gfi_model *fs[2] = {nor, lap};
  gfi_model_product(&pr, 2, fs);
  CHECK(gfi_model_is_c2(nor) && !gfi_model_is_c2(lap) && !gfi_model_is_c2(pr), "C^2 classification");
  gfi_smooth_class c;
  double o;
  CHECK_STATUS(gfi_model_smoothness(pr, &c, &o), GFI_OK);
  CHECK(c == GFI_ORDINARY_SMOOTH && o == 2, "a product takes its weakest factor: class %d order %g", (int)c, o);
  gfi_model_free(lap);
  gfi_model_free(nor);
  gfi_model_free(pr);
}

static void test_errors(void) {
  gfi_model *m = model("normal", 1), *u = model("uniform", 1), *n4 = model("normal", 4);
  double R = 1, Rbad = -1, x[3] = {0, 1, 2};
  gfi_mise_result r;
  CHECK_STATUS(gfi_mise_exact(m, KPOW(9), 10, &R, NULL, &r), GFI_EORDER);
  CHECK_STATUS(gfi_mise_exact(m, KPOW(2), 10, &Rbad, NULL, &r), GFI_ERADIUS);
  CHECK_STATUS(gfi_mise_exact(m, KPOW(2), 0, &R, NULL, &r), GFI_EEMPTY);
  CHECK_STATUS(gfi_mise_exact(u, KPOW(2), 10, &R, NULL, &r), GFI_EUNSUPPORTED);
  double R4[4] = {1, 1, 1, 1};
  CHECK_STATUS(gfi_mise_exact(n4, KPOW(2), 10, R4, NULL, &r), GFI_EUNSUPPORTED);
  CHECK_STATUS(gfi_mise_exact(NULL, KPOW(2), 10, &R, NULL, &r), GFI_EINVAL);
  CHECK_STATUS(gfi_mise_mc(m, KPOW(2), 10, &R, 1, NULL, &r, NULL), GFI_EINVAL);
  CHECK_STATUS(gfi_mise_gauss_exact(u, 10, &R, &r), GFI_EUNSUPPORTED);
  CHECK_STATUS(gfi_mise_gauss_exact(m, 10, &Rbad, &r), GFI_EBANDWIDTH);
  double ise;
  CHECK_STATUS(gfi_ise_plancherel(m, KPOW(2), 0, x, &R, NULL, &ise), GFI_EEMPTY);
  x[1] = NAN;
  CHECK_STATUS(gfi_ise_plancherel(m, KPOW(2), 3, x, &R, NULL, &ise), GFI_ENONFINITE);
  CHECK(isnan(gfi_kappa_sq_integral(KPOW(0))), "kappa^2 integral outside 1..8");
  CHECK_CLOSE(gfi_kappa_sq_integral(KPOW(2)), 4.0 / 3, 1e-15, 0);
  gfi_model_free(m);
  gfi_model_free(u);
  gfi_model_free(n4);
}

int main(void) {
  CHECK_TIMED(test_closed_form_l1);
  CHECK_TIMED(test_refinement);
  CHECK_TIMED(test_scaling);
  CHECK_TIMED(test_mc_agreement);
  CHECK_TIMED(test_threads);
  CHECK_TIMED(test_ise_routes);
  CHECK_TIMED(test_ise_far_points);
  CHECK_TIMED(test_gauss);
  CHECK_TIMED(test_gauss_ise_mc);
  CHECK_TIMED(test_ropt);
  CHECK_TIMED(test_rates);
  CHECK_TIMED(test_errors);
  return check_summary("mise");
}
