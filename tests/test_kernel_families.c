/* Kernel objects end to end: the polynomial family phi(z) = sum_j a_j z^j
 * (its A, transform and int kappa^2 against independent quadratures; the
 * density and Nadaraya-Watson estimates on both routes against a brute-force
 * sum; the exact MISE against Monte Carlo), and the direct route on data far
 * from the origin (the phases' two parts) against a difference-first brute
 * force. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include "gfi/gfi.h"
#include "check.h"

/* The brute force: u = R (y - x) from the coordinates (exact for close
 * pairs), sinc by gfi_sinc, phi by gfi_kernel_eval's definition. */
static double brute(const gfi_kernel *k, size_t N, size_t D, const double *x, const double *w,
                    const double *R, const double *y, double *abs_sum) {
  double s = 0, sa = 0;
  for (size_t i = 0; i < N; i++) {
    double t = 1;
    for (size_t j = 0; j < D; j++) t *= R[j] / k->A * gfi_kernel_eval(k, R[j] * (y[j] - x[i * D + j]));
    double wi = w ? w[i] : 1.0 / (double)N;
    s += wi * t;
    sa += fabs(wi * t);
  }
  if (abs_sum) *abs_sum = sa;
  return s;
}

typedef struct {
  const gfi_kernel *k;
  double x;
} inv_ctx;

/* (A / 2 pi) kappa(u) cos(u x): its integral over u is phi(sinc(x)). */
static double inv_integrand(double u, void *vp) {
  const inv_ctx *c = vp;
  return c->k->A / (2 * M_PI) * gfi_kernel_kappa(c->k, u) * cos(u * c->x);
}

static double kappa2_integrand(double u, void *vp) {
  double v = gfi_kernel_kappa(vp, u);
  return v * v;
}

static double poly_fn(double z, void *ctx) {
  const double *a = ctx;
  return a[1] * z + a[2] * z * z + a[4] * z * z * z * z;
}

static void test_poly_facts(void) {
  gfi_kernel k;
  const double a[5] = {0, 0.5, 1, 0, 0.25};
  CHECK_STATUS(gfi_kernel_poly(&k, 4, a), GFI_OK);
  CHECK(k.kind == GFI_PHI_POLY && k.l == 4 && k.A_finite, "poly kernel fields");
  /* A against the quadrature of a custom phi with the same values (without
   * the z^1 term, whose integral converges too slowly for the quadrature) */
  const double a24[5] = {0, 0, 1, 0, 0.25};
  gfi_kernel k24;
  double A = NAN;
  CHECK_STATUS(gfi_kernel_poly(&k24, 4, a24), GFI_OK);
  CHECK_STATUS(gfi_phi_integral(poly_fn, (void *)a24, &A, NULL), GFI_OK);
  CHECK_CLOSE(k24.A, A, 1e-9, 0);
  /* the transform, through its inverse: phi(sinc x) at several x */
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(200);
  for (double x = 0; x <= 7; x += 0.7) {
    inv_ctx c = {&k, x};
    gsl_function F = {inv_integrand, &c};
    double r = 0, e = 0, tot = 0;
    /* piece by piece between the knots -4..4 (kappa is a polynomial there) */
    for (int q = -4; q < 4; q++) {
      gsl_integration_qag(&F, q, q + 1, 1e-15, 1e-13, 200, GSL_INTEG_GAUSS61, ws, &r, &e);
      tot += r;
    }
    CHECK_CLOSE(tot, gfi_kernel_eval(&k, x), 1e-11, 1e-13);
  }
  /* int kappa^2 against the quadrature of kappa^2 */
  gsl_function F2 = {kappa2_integrand, &k};
  double tot = 0, r, e;
  for (int q = -4; q < 4; q++) {
    gsl_integration_qag(&F2, q, q + 1, 1e-15, 1e-13, 200, GSL_INTEG_GAUSS61, ws, &r, &e);
    tot += r;
  }
  CHECK_CLOSE(gfi_kappa_sq_integral(&k), tot, 1e-11, 0);
  gsl_integration_workspace_free(ws);
  /* a power written as a polynomial is the power */
  gfi_kernel p4, q4;
  const double a4[5] = {0, 0, 0, 0, 1};
  CHECK_STATUS(gfi_kernel_pow(&p4, 4), GFI_OK);
  CHECK_STATUS(gfi_kernel_poly(&q4, 4, a4), GFI_OK);
  CHECK_CLOSE(q4.A, p4.A, 1e-15, 0);
  for (double u = -4.5; u <= 4.5; u += 0.37) CHECK_CLOSE(gfi_kernel_kappa(&q4, u), gfi_kappa(4, u), 1e-14, 1e-16);
  CHECK_CLOSE(gfi_kappa_sq_integral(&q4), gfi_kappa_sq_integral(&p4), 1e-14, 0);
  /* refusals */
  const double neg[3] = {0, 1, -0.5}, c0[3] = {1, 1, 1}, top0[3] = {0, 1, 0}, nan3[3] = {0, NAN, 1};
  CHECK_STATUS(gfi_kernel_poly(&k, 2, neg), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_poly(&k, 2, c0), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_poly(&k, 2, top0), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_poly(&k, 2, nan3), GFI_ENONFINITE);
  CHECK_STATUS(gfi_kernel_poly(&k, 9, a), GFI_EORDER);
  CHECK_STATUS(gfi_kernel_poly(&k, 0, a), GFI_EORDER);
  CHECK_STATUS(gfi_kernel_poly(NULL, 2, a), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_poly(&k, 2, NULL), GFI_EINVAL);
  /* kernels the band-limited routes refuse */
  gfi_kernel cu;
  CHECK_STATUS(gfi_kernel_custom(&cu, poly_fn, (void *)a24), GFI_OK);
  CHECK_STATUS(gfi_kernel_check_band(&cu), GFI_EUNSUPPORTED);
  CHECK_STATUS(gfi_kernel_check_band(NULL), GFI_EINVAL);
  CHECK(isnan(gfi_kernel_kappa(&cu, 0.5)), "custom phi has no kappa");
}

/* Density and NW with a polynomial phi, both routes, against the brute force. */
static void test_poly_estimators(gsl_rng *r) {
  gfi_kernel k;
  const double a[4] = {0, 0.3, 0, 1}; /* odd powers: weights of both signs */
  CHECK_STATUS(gfi_kernel_poly(&k, 3, a), GFI_OK);
  for (size_t D = 1; D <= 2; D++) {
    const size_t N = 600, M = 40;
    double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), *q = malloc(M * D * sizeof *q);
    double *out = malloc(M * sizeof *out);
    for (size_t i = 0; i < N * D; i++) x[i] = gsl_ran_gaussian(r, 1.0) + (i % 3 == 0 ? 3 : 0);
    for (size_t i = 0; i < N; i++) y[i] = sin(2 * x[i * D]) + 0.1 * gsl_ran_gaussian(r, 1.0);
    for (size_t i = 0; i < M * D; i++) q[i] = gsl_ran_flat(r, -3, 5);
    double R[2] = {1.7, 2.3};
    for (int m = 0; m < 2; m++) {
      gfi_opts o;
      gfi_default_opts(&o);
      o.method = m ? GFI_METHOD_FAST : GFI_METHOD_DIRECT;
      o.tol = 1e-10;
      gfi_density_plan *p = NULL;
      CHECK_STATUS(gfi_density_plan_fourier(&p, &k, N, D, x, NULL, R, &o), GFI_OK);
      CHECK_STATUS(gfi_density_eval(p, M, q, out), GFI_OK);
      double worst = 0, scale = 0;
      for (size_t t = 0; t < M; t++) {
        double sa, b = brute(&k, N, D, x, NULL, R, q + t * D, &sa);
        worst = fmax(worst, fabs(out[t] - b));
        scale = fmax(scale, fabs(b));
      }
      CHECK(worst <= (m ? 1e-10 : 1e-13) * scale, "poly density D=%zu %s: error %.3g of %.3g", D,
            m ? "fast" : "direct", worst, scale);
      gfi_density_destroy(p);
      /* Nadaraya-Watson: numerator over denominator */
      gfi_nw_plan *np = NULL;
      CHECK_STATUS(gfi_nw_plan_fourier(&np, &k, N, D, 1, x, y, R, &o), GFI_OK);
      size_t nfl = 0;
      int st = gfi_nw_eval(np, M, q, out, &nfl);
      CHECK(st == GFI_OK || st == GFI_EDENOM, "nw eval: %s", gfi_strerror(st));
      double werr = 0;
      size_t nchk = 0;
      for (size_t t = 0; t < M; t++) {
        double num = 0, den = 0;
        for (size_t i = 0; i < N; i++) {
          double kt = 1;
          for (size_t j = 0; j < D; j++) kt *= gfi_kernel_eval(&k, R[j] * (q[t * D + j] - x[i * D + j]));
          num += kt * y[i];
          den += kt;
        }
        if (isnan(out[t])) continue; /* flagged: a cancelling denominator */
        nchk++;
        werr = fmax(werr, fabs(out[t] - num / den));
      }
      CHECK(nchk > M / 2, "most NW rows evaluated (%zu of %zu)", nchk, M);
      CHECK(werr <= (m ? 1e-9 : 1e-12), "poly NW D=%zu %s: error %.3g", D, m ? "fast" : "direct", werr);
      gfi_nw_destroy(np);
    }
    free(x);
    free(y);
    free(q);
    free(out);
  }
}

/* The exact MISE of a polynomial kernel against the Monte-Carlo MISE (4
 * standard errors) for a normal and a mixture truth. */
static void test_poly_mise(void) {
  gfi_kernel k;
  const double a[5] = {0, 0, 1, 0, 0.5};
  CHECK_STATUS(gfi_kernel_poly(&k, 4, a), GFI_OK);
  const char *specs[2] = {"normal", "mw:2"};
  for (int s = 0; s < 2; s++) {
    gfi_model *m = NULL;
    gfi_errinfo err;
    CHECK_STATUS(gfi_model_parse(&m, specs[s], 1, &err), GFI_OK);
    if (!m) continue;
    double R = 2.5;
    gfi_mise_result ex, mc;
    CHECK_STATUS(gfi_mise_exact(m, &k, 500, &R, NULL, &ex), GFI_OK);
    gfi_mise_opts o;
    gfi_mise_default_opts(&o);
    o.base.seed = 11;
    CHECK_STATUS(gfi_mise_mc(m, &k, 500, &R, 400, &o, &mc, NULL), GFI_OK);
    CHECK(fabs(ex.mise - mc.mise) <= 4 * mc.se, "%s: exact %.6g, MC %.6g +- %.2g", specs[s], ex.mise, mc.mise,
          mc.se);
    double ropt = NAN;
    gfi_mise_result at;
    CHECK_STATUS(gfi_ropt(m, &k, 500, NULL, NULL, &ropt, &at), GFI_OK);
    CHECK(at.mise <= ex.mise * (1 + 1e-12), "the optimal radius does at least as well as R = 2.5");
    gfi_model_free(m);
  }
}

/* The direct route on data at 1e12 + N(0, 0.01) and similar offsets: R |x|
 * up to 1e14, within the documented 2^52. */
static void test_offset_direct(gsl_rng *r) {
  const double offs[3] = {1e6, 1e10, 1e12};
  for (int o_i = 0; o_i < 3; o_i++) {
    const size_t N = 200, M = 20, D = 1;
    double x[200], y[200], q[20], out[20], R = 100;
    for (size_t i = 0; i < N; i++) {
      x[i] = offs[o_i] + gsl_ran_gaussian(r, 0.01);
      y[i] = cos(300 * (x[i] - offs[o_i]));
    }
    for (size_t t = 0; t < M; t++) q[t] = offs[o_i] + gsl_ran_flat(r, -0.03, 0.03);
    gfi_kernel k;
    gfi_kernel_pow(&k, 4);
    gfi_opts o;
    gfi_default_opts(&o);
    o.method = GFI_METHOD_DIRECT;
    gfi_density_plan *p = NULL;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &k, N, D, x, NULL, &R, &o), GFI_OK);
    CHECK_STATUS(gfi_density_eval(p, M, q, out), GFI_OK);
    double worst = 0, scale = 0;
    for (size_t t = 0; t < M; t++) {
      double b = brute(&k, N, D, x, NULL, &R, q + t, NULL);
      worst = fmax(worst, fabs(out[t] - b));
      scale = fmax(scale, fabs(b));
    }
    CHECK(worst <= 1e-13 * scale, "density at offset %g: error %.3g of %.3g", offs[o_i], worst, scale);
    gfi_density_destroy(p);
    gfi_nw_plan *np = NULL;
    CHECK_STATUS(gfi_nw_plan_fourier(&np, &k, N, D, 1, x, y, &R, &o), GFI_OK);
    size_t nfl = 0;
    CHECK_STATUS(gfi_nw_eval(np, M, q, out, &nfl), GFI_OK);
    double werr = 0;
    for (size_t t = 0; t < M; t++) {
      double num = 0, den = 0;
      for (size_t i = 0; i < N; i++) {
        double kt = gfi_kernel_eval(&k, R * (q[t] - x[i]));
        num += kt * y[i];
        den += kt;
      }
      werr = fmax(werr, fabs(out[t] - num / den));
    }
    CHECK(werr <= 1e-12, "NW at offset %g: error %.3g", offs[o_i], werr);
    gfi_nw_destroy(np);
  }
}

/* Translation invariance of the leave-one-out CV and LSCV criteria on the
 * direct route: the data at 0 and at 1e8 (R x up to 1e10) give the same
 * value to 1e-12 relative. */
static void test_offset_criteria(gsl_rng *r) {
  const size_t N = 300, D = 2;
  double x0[600], x1[600], y[300];
  for (size_t i = 0; i < N * D; i++) x0[i] = gsl_ran_gaussian(r, 1.0);
  for (size_t i = 0; i < N * D; i++) x1[i] = x0[i] + 1e8;
  for (size_t i = 0; i < N; i++) y[i] = sin(x0[2 * i]) + 0.1 * gsl_ran_gaussian(r, 1.0);
  /* exact translations: x0 + 1e8 - 1e8 == x0 needs |x0| < 1 ulp-free, so
   * the reference is the shifted copy's own difference */
  for (size_t i = 0; i < N * D; i++) x0[i] = x1[i] - 1e8;
  gfi_kernel k;
  gfi_kernel_pow(&k, 2);
  gfi_opts o;
  gfi_default_opts(&o);
  o.method = GFI_METHOD_DIRECT;
  double R[2] = {50, 80}, v0 = NAN, v1 = NAN;
  size_t nf0 = 0, nf1 = 0;
  CHECK_STATUS(gfi_loocv(&k, N, D, 1, x0, y, R, &o, 0, &v0, &nf0, NULL, NULL), GFI_OK);
  CHECK_STATUS(gfi_loocv(&k, N, D, 1, x1, y, R, &o, 0, &v1, &nf1, NULL, NULL), GFI_OK);
  CHECK(nf0 == nf1, "LOO-CV flags at 0 and at 1e8: %zu, %zu", nf0, nf1);
  CHECK_CLOSE(v1, v0, 1e-12, 0);
  double l0 = NAN, l1 = NAN;
  CHECK_STATUS(gfi_lscv(&k, N, D, x0, R, &o, &l0, NULL, NULL), GFI_OK);
  CHECK_STATUS(gfi_lscv(&k, N, D, x1, R, &o, &l1, NULL, NULL), GFI_OK);
  CHECK_CLOSE(l1, l0, 1e-10, 0);
}

/* gfi_kernel_parse: the text form of --phi gives the kernels of
 * gfi_kernel_pow and gfi_kernel_poly, field for field, and refuses malformed
 * text with the status and a message naming the culprit, leaving *k as it was. */
static void test_kernel_parse(void) {
  gfi_kernel k, want;
  gfi_errinfo err;
  CHECK_STATUS(gfi_kernel_parse(&k, "pow:4", &err), GFI_OK);
  CHECK_STATUS(gfi_kernel_pow(&want, 4), GFI_OK);
  CHECK(k.kind == want.kind && k.l == 4 && k.A == want.A && k.coef[4] == 1, "pow:4 is z^4");
  const double a[5] = {0, 0, 0.5, 0, 0.5};
  CHECK_STATUS(gfi_kernel_parse(&k, "poly:0,0.5,0,0.5,0,0", NULL), GFI_OK); /* trailing zeros dropped */
  CHECK_STATUS(gfi_kernel_poly(&want, 4, a), GFI_OK);
  CHECK(k.kind == GFI_PHI_POLY && k.l == 4 && k.A == want.A, "poly:0,0.5,0,0.5 is gfi_kernel_poly's");
  for (int j = 0; j <= GFI_PHI_MAXPOW; j++) CHECK(k.coef[j] == want.coef[j], "coef[%d]", j);
  CHECK_STATUS(gfi_kernel_parse(&k, "poly:1e-1,2", &err), GFI_OK);
  CHECK(k.l == 2 && k.coef[1] == 0.1 && k.coef[2] == 2, "poly:1e-1,2");
  static const struct { const char *spec; int status; const char *msg; } bad[] = {
    {"pow:9", GFI_EORDER, "1..8, got 9"},
    {"pow:0", GFI_EORDER, "got 0"},
    {"pow:", GFI_EINVAL, "integer L"},
    {"pow:4x", GFI_EINVAL, "integer L"},
    {"pow:99999999999999999999", GFI_EINVAL, "integer L"},
    {"relu", GFI_EINVAL, "unknown phi 'relu'"},
    {"", GFI_EINVAL, "unknown phi"},
    {"poly:", GFI_EINVAL, "coefficient 1"},
    {"poly:0,x", GFI_EINVAL, "coefficient 2 ('x')"},
    {"poly:1,", GFI_EINVAL, "coefficient 2"},
    {"poly:0,0,0", GFI_EINVAL, "every coefficient"},
    {"poly:1,-0.5", GFI_EINVAL, "negative"},
    {"poly:1,nan", GFI_ENONFINITE, "coefficient 2"},
    {"poly:1e999", GFI_ENONFINITE, "out of range"},
    {"poly:1,1e-400", GFI_ERANGE, "out of range"},
    {"poly:1,1,1,1,1,1,1,1,1", GFI_EORDER, "at most 8"},
  };
  gfi_kernel keep;
  CHECK_STATUS(gfi_kernel_pow(&keep, 3), GFI_OK);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    k = keep;
    CHECK_STATUS(gfi_kernel_parse(&k, bad[i].spec, &err), bad[i].status);
    CHECK(strstr(err.msg, bad[i].msg) != NULL, "'%s': message '%s' lacks '%s'", bad[i].spec, err.msg, bad[i].msg);
    CHECK(memcmp(&k, &keep, sizeof k) == 0, "'%s' changed the kernel", bad[i].spec);
    CHECK_STATUS(gfi_kernel_parse(&k, bad[i].spec, NULL), bad[i].status);
  }
  CHECK_STATUS(gfi_kernel_parse(&k, "poly:0,x", &err), GFI_EINVAL);
  CHECK(err.column == 8, "the culprit's column, got %zu", err.column);
  CHECK_STATUS(gfi_kernel_parse(NULL, "pow:4", &err), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_parse(&k, NULL, &err), GFI_EINVAL);
}

int main(void) {
  gsl_set_error_handler_off();
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 20261125);
  test_poly_facts();
  test_kernel_parse();
  test_poly_estimators(r);
  test_poly_mise();
  test_offset_direct(r);
  test_offset_criteria(r);
  gsl_rng_free(r);
  return check_summary("kernel-families");
}
