/* gfi leaves GSL's error handler to the program: a program's own handler is
 * still installed after gfi calls that use GSL routines whose error reports
 * are part of their normal operation (adaptive quadrature, Brent's method;
 * good and bad input, from several threads at once), it is never called by
 * them, and bad input comes back as a gfi status instead of a GSL abort. */
#include <math.h>
#include <stdio.h>
#include <gsl/gsl_errno.h>
#include "gfi/gfi.h"
#include "check.h"

static int handler_calls = 0;

static void program_handler(const char *reason, const char *file, int line, int gsl_errno) {
  handler_calls++;
  fprintf(stderr, "program's GSL handler: error %d (%s) at %s:%d\n", gsl_errno, reason, file, line);
}

static double pow4_phi(double z, void *ctx) {
  (void)ctx;
  return z * z * z * z;
}
static double abs_phi(double z, void *ctx) {
  (void)ctx;
  return fabs(z);
}
static double nan_phi(double z, void *ctx) {
  (void)ctx;
  return z > 0.5 ? NAN : 1.0;
}

static gfi_model *model(const char *spec, size_t D) {
  gfi_model *m = NULL;
  CHECK_STATUS(gfi_model_parse(&m, spec, D, NULL), GFI_OK);
  return m;
}

/* Still the program's handler? Puts it back either way. */
static void check_handler(const char *after) {
  gsl_error_handler_t *h = gsl_set_error_handler(program_handler);
  CHECK(h == program_handler, "GSL's error handler changed by %s", after);
}

static void test_quadrature(void) {
  double A, err;
  CHECK_STATUS(gfi_phi_integral(pow4_phi, NULL, &A, &err), GFI_OK);
  CHECK_CLOSE(A, 2 * M_PI / 3, 1e-9, 0);
  CHECK_STATUS(gfi_phi_integral(abs_phi, NULL, &A, NULL), GFI_EINFINITE_A);
  CHECK_STATUS(gfi_phi_integral(nan_phi, NULL, &A, NULL), GFI_ENONFINITE);
  check_handler("gfi_phi_integral");

  double x[5] = {1, 2, 3, 4, 5}, y[5] = {2.1, 3.9, 6.2, 7.8, 10.1};
  gfi_linfit fit;
  CHECK_STATUS(gfi_fit_line(x, y, NULL, 0, 5, 1, &fit), GFI_OK);
  check_handler("gfi_fit_line");
}

static void test_cholesky(void) {
  /* Not positive definite: a status, not GSL's "matrix is not positive definite". */
  double Hbad[4] = {1, 2, 2, 1}, Hok[4] = {1, 0.3, 0.3, 2};
  double data[6] = {0, 0, 1, 0.5, -0.5, 1};
  gfi_density_plan *p = NULL;
  CHECK_STATUS(gfi_density_plan_gauss(&p, 3, 2, data, NULL, Hbad, NULL), GFI_EBANDWIDTH);
  CHECK_STATUS(gfi_density_plan_gauss(&p, 3, 2, data, NULL, Hok, NULL), GFI_OK);
  double q[2] = {0.2, 0.1}, v = 0;
  CHECK_STATUS(gfi_density_eval(p, 1, q, &v), GFI_OK);
  CHECK(v > 0 && isfinite(v), "density %g", v);
  gfi_density_destroy(p);
  check_handler("gfi_density_plan_gauss");

  gfi_model *m = model("normal", 2);
  gfi_mise_result r;
  CHECK(gfi_mise_gauss_exact(m, 100, Hbad, &r) != GFI_OK, "non-SPD H accepted");
  CHECK_STATUS(gfi_mise_gauss_exact(m, 100, Hok, &r), GFI_OK);
  CHECK(r.mise > 0 && isfinite(r.mise), "Gaussian MISE %g", r.mise);
  gfi_model_free(m);
  check_handler("gfi_mise_gauss_exact");
}

/* Exact MISE of a product truth (1-D tails by adaptive quadrature) and the
 * optimal radius (Brent), serially and from several threads at once. */
static void test_mise(void) {
  gfi_model *m = model("laplace", 2);
  gfi_mise_result r;
  double R[2] = {2, 2}, ropt = 0;
  CHECK_STATUS(gfi_mise_exact(m, KPOW(4), 1000, R, NULL, &r), GFI_OK);
  CHECK(r.mise > 0 && isfinite(r.mise), "MISE %g", r.mise);
  check_handler("gfi_mise_exact");
  CHECK_STATUS(gfi_ropt(m, KPOW(4), 1000, NULL, NULL, &ropt, &r), GFI_OK);
  CHECK(ropt > 0 && isfinite(ropt), "r_opt %g", ropt);
  check_handler("gfi_ropt");

  enum { NT = 6 };
  double got[NT];
  int st[NT];
#ifdef _OPENMP
#pragma omp parallel for num_threads(3) schedule(dynamic, 1)
#endif
  for (int t = 0; t < NT; t++) {
    gfi_mise_result rt;
    double Rt[2] = {1.5 + 0.25 * t, 2.0};
    double A;
    if (t % 2) {
      st[t] = gfi_mise_exact(m, KPOW(4), 500, Rt, NULL, &rt);
      got[t] = rt.mise;
    } else {
      st[t] = gfi_phi_integral(pow4_phi, NULL, &A, NULL);
      got[t] = A;
    }
  }
  for (int t = 0; t < NT; t++) {
    CHECK_STATUS(st[t], GFI_OK);
    CHECK(got[t] > 0 && isfinite(got[t]), "thread task %d: %g", t, got[t]);
  }
  check_handler("gfi calls from several threads");
  gfi_model_free(m);
}

int main(void) {
  gsl_set_error_handler(program_handler);
  test_quadrature();
  test_cholesky();
  test_mise();
  CHECK(handler_calls == 0, "%d calls of the program's GSL handler from inside gfi", handler_calls);
  return check_summary("gsl-handler");
}
