/* The fast routes of the engine's other clients keep their printed bounds
 * on the randomised family of hard cases of test_guarantee.c (tight
 * clusters, far outliers, far frequencies, radii and bandwidths from tiny
 * to huge, tol 1e-10, 1e-6 and 1e-3), against brute-force sums or the
 * clients' own direct routes:
 *   - the empirical cf (gfi_ecf): error <= bound and <= tol of sum |w| plus
 *     the phases' rounding that any double computation has;
 *   - the fast LSCV and LOO-CV criteria (gfi_lscv, gfi_loocv): |fast -
 *     direct| <= the bound they report, and LOO-CV's bound within what
 *     fitted values within tol max |y| allow;
 *   - the Monte-Carlo ISE by Plancherel (gfi_mise_mc): every replication's
 *     |fast - direct| <= ise_err_bound;
 *   - the Gaussian selectors: the 2-D LSCV through the cf within tol of its
 *     stated scale (bl_cf2_tol), the plug-in's functionals within their
 *     bound, which is within tol of the largest. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "gfi/gfi.h"
#include "check.h"
#include "hard_cases.h"
#include "select_internal.h"

static const double TOLS[3] = {1e-10, 1e-6, 1e-3};

/* log-uniform on [a, b] */
static double logu(gsl_rng *r, double a, double b) { return exp(log(a) + gsl_rng_uniform(r) * (log(b) - log(a))); }

static void fill(gsl_rng *r, size_t N, size_t D, double far, double off, double *x) {
  double s1 = 0.05 + 0.5 * gsl_rng_uniform(r);
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < D; j++) x[i * D + j] = off + draw(r, 0, 3, s1, 0.7, far);
}

static void check_ecf(gsl_rng *r, int ncase) {
  double worst = 0;
  int ran = 0;
  for (int cs = 0; cs < ncase; cs++) {
    const size_t D = 1 + (size_t)(cs % 3), N = 300, K = 40;
    const double T = logu(r, 0.5, D == 1 ? 200.0 : 30.0), tol = TOLS[cs % 3];
    const double far = cs % 4 == 0 ? 0 : pow(10.0, D == 1 ? 1 + 2 * gsl_rng_uniform(r) : 1) / T;
    const double off = cs % 5 == 0 ? 1000.0 : 0.0;
    double *x = malloc(N * D * sizeof *x), *w = malloc(N * sizeof *w), *t = malloc(K * D * sizeof *t);
    double *out = malloc(2 * K * sizeof *out);
    fill(r, N, D, far, off, x);
    for (size_t i = 0; i < N; i++) w[i] = cs % 2 ? 0.1 + gsl_rng_uniform(r) : 1.0;
    for (size_t k = 0; k < K; k++)
      for (size_t j = 0; j < D; j++) t[k * D + j] = k + 2 >= K ? (k % 2 ? -1 : 1) * 20 * T : gsl_ran_flat(r, -T, T);
    gfi_opts o;
    gfi_default_opts(&o);
    o.method = GFI_METHOD_FAST;
    o.tol = tol;
    gfi_fast_info info;
    int st = gfi_ecf(N, D, x, cs % 2 ? w : NULL, K, t, &o, out, &info);
    if (st == GFI_ERANGE) { /* too large a NUFFT grid: refused, not wrong */
      free(x), free(w), free(t), free(out);
      continue;
    }
    CHECK(st == GFI_OK, "ecf case %d: %s", cs, gfi_strerror(st));
    if (!st) {
      ran++;
      long double ws = 0;
      for (size_t i = 0; i < N; i++) ws += cs % 2 ? w[i] : 1.0;
      /* the phases' share of any double computation: 16 eps (Theta + sqrt K),
       * Theta = sum_j max |t_j| max |x_j - centre_j| */
      double th = 0;
      for (size_t j = 0; j < D; j++) {
        double lo = x[j], hi = x[j], ta = 0;
        for (size_t i = 0; i < N; i++) lo = fmin(lo, x[i * D + j]), hi = fmax(hi, x[i * D + j]);
        for (size_t k = 0; k < K; k++) ta = fmax(ta, fabs(t[k * D + j]));
        th += ta * 0.5 * (hi - lo);
      }
      double err = 0;
      for (size_t k = 0; k < K; k++) {
        long double re = 0, im = 0;
        for (size_t i = 0; i < N; i++) {
          long double ph = 0;
          for (size_t j = 0; j < D; j++) ph += (long double)t[k * D + j] * x[i * D + j];
          long double wi = (cs % 2 ? w[i] : 1.0) / ws;
          re += wi * cosl(ph);
          im += wi * sinl(ph);
        }
        err = fmax(err, hypot(out[2 * k] - (double)re, out[2 * k + 1] - (double)im));
      }
      const double rnd = 16 * DBL_EPSILON * (th + sqrt((double)K));
      CHECK(err <= info.bound_abs + 1e-15, "ecf case %d (D=%zu T=%g far=%g off=%g tol=%g): error %.3g > bound %.3g",
            cs, D, T, far, off, tol, err, info.bound_abs);
      CHECK(err <= tol + rnd, "ecf case %d: error %.3g > tol %.3g + rounding %.3g", cs, err, tol, rnd);
      if (info.bound_abs > 0) worst = fmax(worst, err / info.bound_abs);
    }
    free(x), free(w), free(t), free(out);
  }
  printf("ecf: %d of %d cases ran; worst error/bound %.3g\n", ran, ncase, worst);
  CHECK(ran >= ncase / 2, "most ecf cases ran (%d)", ran);
}

static void check_criteria(gsl_rng *r, int ncase) {
  double worst_l = 0, worst_c = 0;
  int ran_l = 0, ran_c = 0;
  for (int cs = 0; cs < ncase; cs++) {
    const size_t D = 1 + (size_t)(cs % 2), N = D == 1 ? 200 : 120, V = 1;
    double R = logu(r, 0.5, D == 1 ? 60.0 : 8.0);
    const double tol = TOLS[cs % 3];
    const double far = cs % 4 == 0 ? 0 : pow(10.0, D == 1 ? 1 + 1.5 * gsl_rng_uniform(r) : 1) / R;
    const double off = cs % 5 == 0 ? 1000.0 : 0.0;
    gfi_kernel k;
    if (cs % 6 == 5) {
      const double a[5] = {0, 0.5, 0.2, 0, 1};
      gfi_kernel_poly(&k, 4, a);
    } else {
      gfi_kernel_pow(&k, 1 + (int)gsl_rng_uniform_int(r, 8));
    }
    double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), Rv[2] = {R, 1.3 * R};
    fill(r, N, D, far, off, x);
    for (size_t i = 0; i < N; i++) y[i] = 5 * sin(3 * x[i * D]) + gsl_ran_gaussian(r, 0.1);
    gfi_opts o;
    gfi_default_opts(&o);
    o.tol = tol;
    double vd, vf, bd, bf;
    gfi_method rt;
    o.method = GFI_METHOD_DIRECT;
    int st = gfi_lscv(&k, N, D, x, Rv, &o, &vd, &bd, &rt);
    CHECK(st == GFI_OK, "lscv case %d direct: %s", cs, gfi_strerror(st));
    o.method = GFI_METHOD_FAST;
    int sf = gfi_lscv(&k, N, D, x, Rv, &o, &vf, &bf, &rt);
    if (!st && !sf) {
      ran_l++;
      const double e = fabs(vf - vd), allowed = bf + 1e-13 * fabs(vd);
      CHECK(e <= allowed, "lscv case %d (D=%zu l=%d R=%g far=%g off=%g tol=%g): |fast - direct| %.3g > bound %.3g",
            cs, D, k.l, R, far, off, tol, e, bf);
      worst_l = fmax(worst_l, e / allowed);
    } else {
      CHECK(sf == GFI_ERANGE || st, "lscv case %d fast: %s", cs, gfi_strerror(sf));
    }
    size_t nfd = 0, nff = 0;
    o.method = GFI_METHOD_DIRECT;
    st = gfi_loocv(&k, N, D, V, x, y, Rv, &o, 0, &vd, &nfd, &bd, &rt);
    o.method = GFI_METHOD_FAST;
    sf = gfi_loocv(&k, N, D, V, x, y, Rv, &o, 0, &vf, &nff, &bf, &rt);
    if (!st && !sf && nfd == nff) {
      ran_c++;
      const double e = fabs(vf - vd), allowed = bf + 1e-13 * fabs(vd);
      CHECK(e <= allowed, "loocv case %d (D=%zu l=%d R=%g far=%g off=%g tol=%g): |fast - direct| %.3g > bound %.3g",
            cs, D, k.l, R, far, off, tol, e, bf);
      worst_c = fmax(worst_c, e / allowed);
      /* every fitted value it kept is within tol max |y| (the rows it could
       * not settle were summed directly), so the mean squared residual is
       * within (2 sqrt(value) + tol max|y|) tol max|y| */
      double ymax = 0;
      for (size_t i = 0; i < N; i++) ymax = fmax(ymax, fabs(y[i]));
      const double w = tol * ymax;
      CHECK(bf <= (2 * sqrt(vf) + w) * w * (double)V * (1 + 1e-9),
            "loocv case %d: bound %.3g above (2 sqrt(value) + tol max|y|) tol max|y| = %.3g", cs, bf,
            (2 * sqrt(vf) + w) * w);
    } else if (!st && !sf) {
      /* a row settled on one side of the denominator test and not the
       * other: not comparable as one number; the rows' values are checked
       * by test_guarantee's NW rows */
    } else {
      CHECK((st == GFI_EDENOM || sf == GFI_EDENOM || sf == GFI_ERANGE), "loocv case %d: %s / %s", cs,
            gfi_strerror(st), gfi_strerror(sf));
    }
    free(x), free(y);
  }
  printf("criteria: LSCV %d, LOO-CV %d of %d cases compared; worst |fast - direct| / bound: %.3g, %.3g\n", ran_l,
         ran_c, ncase, worst_l, worst_c);
  CHECK(ran_l >= ncase / 2 && ran_c >= ncase / 3, "most criteria cases ran (%d, %d)", ran_l, ran_c);
}

static void check_ise(int ncase) {
  static const struct {
    const char *spec;
    size_t D, N;
    double R;
  } c[] = {{"mw:6", 1, 400, 8},   {"cauchy", 1, 300, 3},   {"t:3", 1, 300, 40}, {"mw:10", 1, 200, 0.5},
           {"laplace", 2, 150, 2}, {"t:5", 2, 120, 1.5}};
  const int nc = (int)(sizeof c / sizeof c[0]);
  double worst = 0;
  int ran = 0;
  for (int cs = 0; cs < ncase; cs++) {
    const int i = cs % nc;
    const double tol = TOLS[cs % 3];
    gfi_model *m = NULL;
    gfi_errinfo err;
    if (gfi_model_parse(&m, c[i].spec, c[i].D, &err)) {
      CHECK(0, "model %s: %s", c[i].spec, err.msg);
      continue;
    }
    gfi_mise_opts o;
    gfi_mise_default_opts(&o);
    o.ise = GFI_ISE_PLANCHEREL;
    o.parts = 0;
    o.base.seed = 100 + (unsigned long)cs;
    o.base.tol = tol;
    double R[2] = {c[i].R, 0.8 * c[i].R}, id[3], iff[3];
    gfi_mise_result rd, rf;
    gfi_kernel k;
    gfi_kernel_pow(&k, 1 + cs % 4);
    o.base.method = GFI_METHOD_DIRECT;
    int st = gfi_mise_mc(m, &k, c[i].N, R, 3, &o, &rd, id);
    o.base.method = GFI_METHOD_FAST;
    int sf = gfi_mise_mc(m, &k, c[i].N, R, 3, &o, &rf, iff);
    if (!st && !sf) {
      ran++;
      for (int r = 0; r < 3; r++) {
        const double e = fabs(iff[r] - id[r]), allowed = rf.ise_err_bound + 1e-12 * id[r];
        CHECK(e <= allowed, "ise case %d (%s N=%zu R=%g l=%d tol=%g) rep %d: |fast - direct| %.3g > bound %.3g", cs,
              c[i].spec, c[i].N, c[i].R, k.l, tol, r, e, rf.ise_err_bound);
        worst = fmax(worst, e / allowed);
      }
    } else {
      CHECK(st == GFI_EUNSUPPORTED || sf == GFI_EUNSUPPORTED || sf == GFI_ERANGE, "ise case %d (%s): %s / %s", cs,
            c[i].spec, gfi_strerror(st), gfi_strerror(sf));
    }
    gfi_model_free(m);
  }
  printf("ISE (Plancherel): %d of %d cases compared; worst |fast - direct| / bound %.3g\n", ran, ncase, worst);
  CHECK(ran >= ncase / 2, "most ISE cases ran (%d)", ran);
}

static void check_gauss(gsl_rng *r, int ncase) {
  double worst_l = 0, worst_p = 0;
  int ran_p = 0;
  for (int cs = 0; cs < ncase; cs++) {
    const size_t N = 150;
    const double tol = TOLS[cs % 3], far = cs % 4 == 0 ? 0 : 5 + 20 * gsl_rng_uniform(r);
    const double off = cs % 5 == 0 ? 1000.0 : 0.0;
    double *x = malloc(N * 2 * sizeof *x);
    fill(r, N, 2, far, off, x);
    /* LSCV through the cf at bandwidths from a tenth to ten times the
     * clusters' widths, correlated or not */
    double H[3][4];
    for (int h = 0; h < 3; h++) {
      double a = logu(r, 0.02, 2.0), b = logu(r, 0.02, 2.0), rho = 0.9 * (2 * gsl_rng_uniform(r) - 1);
      H[h][0] = a * a, H[h][3] = b * b, H[h][1] = H[h][2] = rho * a * b;
    }
    gfi_opts o;
    gfi_default_opts(&o);
    o.tol = tol;
    double vf[3];
    int st = sel_gauss_lscv2_ecf(N, x, &o, 3, &H[0][0], vf);
    CHECK(st == GFI_OK || st == GFI_ERANGE, "gauss lscv case %d: %s", cs, gfi_strerror(st));
    for (int h = 0; !st && h < 3; h++) {
      double vd;
      CHECK_STATUS(gfi_gauss_lscv(N, 2, x, H[h], &o, &vd), GFI_OK);
      /* the stated scale: (2 pi)^-2 int [e^{-w'Hw} + 2N/(N-1) e^{-w'Hw/2}] dw */
      const double det = H[h][0] * H[h][3] - H[h][1] * H[h][2];
      const double W = (1 + 4.0 * N / (N - 1.0)) / (4 * M_PI * sqrt(det));
      const double e = fabs(vf[h] - vd), allowed = tol * W + 1e-13 * fabs(vd);
      CHECK(e <= allowed, "gauss lscv case %d H %d (far=%g off=%g tol=%g): error %.3g > tol x scale %.3g", cs, h, far,
            off, tol, e, tol * W);
      worst_l = fmax(worst_l, e / allowed);
    }
    /* the plug-in's functionals: the fast route's bound is within tol of
     * the largest functional and holds against the pair sums */
    gfi_hpi_info id, ifa;
    double Hd[4], Hf[4];
    o.method = GFI_METHOD_DIRECT;
    st = gfi_bw_hpi(N, 2, x, &o, Hd, &id);
    o.method = GFI_METHOD_FAST;
    int sf = gfi_bw_hpi(N, 2, x, &o, Hf, &ifa);
    if (!st && !sf && fabs(ifa.g4 - id.g4) <= 1e-6 * id.g4) {
      ran_p++;
      double ep = 0, mx = 0;
      for (int i = 0; i < 5; i++) ep = fmax(ep, fabs(ifa.psi4[i] - id.psi4[i])), mx = fmax(mx, fabs(id.psi4[i]));
      const double allowed = ifa.bound * mx * 1.0000001 + 1e-13 * mx;
      CHECK(ep <= allowed, "hpi case %d (far=%g off=%g tol=%g): psi4 error %.3g > bound %.3g", cs, far, off, tol, ep,
            ifa.bound * mx);
      CHECK(ifa.bound <= tol || ifa.bound * mx <= 1e-13 * mx, "hpi case %d: bound %.3g above tol %.3g", cs, ifa.bound,
            tol);
      worst_p = fmax(worst_p, ep / allowed);
    } else if (st || sf) {
      CHECK(st == sf || sf == GFI_ERANGE, "hpi case %d: %s / %s", cs, gfi_strerror(st), gfi_strerror(sf));
    }
    free(x);
  }
  printf("Gaussian selectors: worst LSCV error / (tol x scale) %.3g; plug-in %d cases, worst psi4 error / bound "
         "%.3g\n",
         worst_l, ran_p, worst_p);
}

int main(void) {
  gsl_set_error_handler_off();
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  /* GFI_GUARANTEE_CASES scales the family down (the sanitizer run) */
  const char *nc_env = getenv("GFI_GUARANTEE_CASES");
  const int n = nc_env && atoi(nc_env) > 0 ? atoi(nc_env) : 24;
  check_ecf(r, n);
  check_criteria(r, n);
  check_ise(n / 2 > 3 ? n / 2 : 3);
  check_gauss(r, n / 2 > 3 ? n / 2 : 3);
  gsl_rng_free(r);
  return check_summary("guarantee-clients");
}
