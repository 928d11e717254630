/* Kernels: sinc and its derivative, A_l (closed form, listed fractions and
 * quadrature), divergent A for |z|, ReLU and sigmoid, kappa_l against closed
 * forms and a numerical Fourier transform. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include "check.h"
#include "gfi/gfi.h"

static double pow_phi(double z, void *ctx) {
  int l = *(int *)ctx;
  double r = 1;
  for (int i = 0; i < l; i++) r *= z;
  return r;
}
static double abs_phi(double z, void *ctx) { (void)ctx; return fabs(z); }
static double relu_phi(double z, void *ctx) { (void)ctx; return z > 0 ? z : 0; }
static double sigmoid_phi(double z, void *ctx) { (void)ctx; return 1 / (1 + exp(-z)); }
static double nan_phi(double z, void *ctx) { (void)ctx; return z < 0 ? NAN : z * z; }
static double zero_phi(double z, void *ctx) { (void)ctx; (void)z; return 0; }

typedef struct { int l; } ft_ctx;
static double sinc_pow(double x, void *vp) {
  ft_ctx *c = vp;
  double s = gfi_sinc(x), r = 1;
  for (int i = 0; i < c->l; i++) r *= s;
  return r;
}

/* kappa_l(u) = (2/A_l) int_0^inf sinc(x)^l cos(u x) dx by QAWF. */
static double kappa_numeric(int l, double u, double *err) {
  gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
  gsl_integration_workspace *cw = gsl_integration_workspace_alloc(2000);
  gsl_integration_qawo_table *t = gsl_integration_qawo_table_alloc(u, 1.0, GSL_INTEG_COSINE, 30);
  ft_ctx c = {l};
  gsl_function F = {sinc_pow, &c};
  double r = NAN, e = NAN;
  gsl_integration_qawf(&F, 0.0, 1e-13, 2000, w, cw, t, &r, &e);
  gsl_integration_qawo_table_free(t);
  gsl_integration_workspace_free(cw);
  gsl_integration_workspace_free(w);
  *err = 2 * e / gfi_pow_A(l);
  return 2 * r / gfi_pow_A(l);
}

int main(void) {
  gsl_set_error_handler_off();
  /* sinc and derivative: series region against long double, direct region. */
  for (double x = -3; x <= 3; x += 0.0137) {
    long double lx = x;
    long double s = (x == 0) ? 1.0L : sinl(lx) / lx;
    CHECK_CLOSE(gfi_sinc(x), (double)s, 4e-16, 1e-300);
    if (fabs(x) > 1e-3) {
      long double d = (cosl(lx) - sinl(lx) / lx) / lx;
      CHECK_CLOSE(gfi_sinc_deriv(x), (double)d, 1e-14, 1e-17);
    }
  }
  CHECK(gfi_sinc(0) == 1.0, "sinc(0)");
  CHECK(gfi_sinc_deriv(0) == 0.0, "sinc'(0)");
  CHECK_CLOSE(gfi_sinc_deriv(1e-8), -1e-8 / 3, 1e-15, 0);

  /* A_l: closed form against the fractions of docs/theory.md. */
  const double frac[9] = {0, 1, 1, 3.0 / 4, 2.0 / 3, 115.0 / 192, 11.0 / 20, 5887.0 / 11520, 151.0 / 315};
  for (int l = 1; l <= 8; l++) CHECK_CLOSE(gfi_pow_A(l), M_PI * frac[l], 1e-15, 0);
  CHECK(isnan(gfi_pow_A(0)) && isnan(gfi_pow_A(9)), "A out of range is NaN");

  /* A_l by quadrature through the custom-phi path. */
  for (int l = 1; l <= 8; l++) {
    int lc = l;
    double A, err;
    CHECK_STATUS(gfi_phi_integral(pow_phi, &lc, &A, &err), GFI_OK);
    CHECK_CLOSE(A, gfi_pow_A(l), 1e-9, 0);
    CHECK(err < 1e-6 * A, "l=%d error estimate %g", l, err);
    gfi_kernel k;
    CHECK_STATUS(gfi_kernel_custom(&k, pow_phi, &lc), GFI_OK);
    CHECK(k.A_finite == 1, "custom pow kernel has finite A");
  }
  /* Divergent A: an error, never a number. */
  double A = 0;
  CHECK_STATUS(gfi_phi_integral(abs_phi, NULL, &A, NULL), GFI_EINFINITE_A);
  CHECK(isinf(A), "A(|z|) = %g", A);
  CHECK_STATUS(gfi_phi_integral(relu_phi, NULL, &A, NULL), GFI_EINFINITE_A);
  CHECK_STATUS(gfi_phi_integral(sigmoid_phi, NULL, &A, NULL), GFI_EINFINITE_A);
  CHECK_STATUS(gfi_phi_integral(zero_phi, NULL, &A, NULL), GFI_EINFINITE_A);
  CHECK_STATUS(gfi_phi_integral(nan_phi, NULL, &A, NULL), GFI_ENONFINITE);
  CHECK_STATUS(gfi_phi_integral(NULL, NULL, &A, NULL), GFI_EINVAL);
  gfi_kernel k;
  CHECK_STATUS(gfi_kernel_custom(&k, abs_phi, NULL), GFI_OK);
  CHECK(k.A_finite == 0 && isinf(k.A), "|z| kernel usable for regression only");
  CHECK_STATUS(gfi_kernel_pow(&k, 0), GFI_EORDER);
  CHECK_STATUS(gfi_kernel_pow(&k, 9), GFI_EORDER);
  CHECK_STATUS(gfi_kernel_pow(NULL, 4), GFI_EINVAL);
  CHECK_STATUS(gfi_kernel_pow(&k, 4), GFI_OK);
  CHECK_CLOSE(gfi_kernel_eval(&k, 0.7), pow(sin(0.7) / 0.7, 4), 1e-15, 0);

  /* kappa: closed forms, symmetry, support. */
  for (double u = -3; u <= 3; u += 0.01) {
    double au = fabs(u);
    if (fabs(au - 1) > 1e-9) CHECK(gfi_kappa(1, u) == (au < 1 ? 1.0 : 0.0), "kappa_1(%g)", u);
    CHECK_CLOSE(gfi_kappa(2, u), au < 2 ? 1 - au / 2 : 0, 1e-14, 1e-15);
    for (int l = 1; l <= 8; l++) CHECK(gfi_kappa(l, u) == gfi_kappa(l, -u), "kappa even");
  }
  CHECK(gfi_kappa(1, 1.0) == 0.5, "kappa_1 at the jump");
  for (int l = 1; l <= 8; l++) {
    CHECK_CLOSE(gfi_kappa(l, 0), 1.0, 1e-15, 0);
    CHECK((l == 1 || gfi_kappa(l, l) == 0) && gfi_kappa(l, l + 0.5) == 0, "support of kappa_%d", l);
    /* kappa_3 closed form: (3 - u^2)/3 for |u| <= 1 */
    if (l == 3) CHECK_CLOSE(gfi_kappa(3, 0.5), (3 - 0.25) / 3, 1e-14, 0);
  }
  /* kappa against a numerical Fourier transform of sinc^l / A_l. */
  const double us[] = {0.25, 0.8, 1.3, 1.9, 2.6, 3.4, 4.5, 5.5, 7.2};
  for (int l = 1; l <= 8; l++)
    for (size_t a = 0; a < sizeof us / sizeof us[0]; a++) {
      double u = us[a];
      if (u > l + 1) continue;
      double err;
      double num = kappa_numeric(l, u, &err);
      CHECK(fabs(gfi_kappa(l, u) - num) <= 1e-8 + 10 * err, "kappa_%d(%g) = %.15g, numerical %.15g +- %.2g", l, u, gfi_kappa(l, u), num, err);
    }
  return check_summary("kernel");
}
