/* A program outside gfi's tree: it sees gfi only through pkg-config
 * (tests/consumer/consumer_test.sh builds it against the build tree and
 * against an installed copy) and only its public headers. */
#include <math.h>
#include <stdio.h>
#include <gsl/gsl_errno.h>
#include <gfi/gfi.h>

#define PI 3.14159265358979323846

static int handler_calls = 0;
static void my_handler(const char *reason, const char *file, int line, int gsl_errno) {
  (void)reason, (void)file, (void)line, (void)gsl_errno;
  handler_calls++;
}

static double phi4(double z, void *ctx) {
  (void)ctx;
  return z * z * z * z;
}

static double sinc(double x) { return x == 0 ? 1.0 : sin(x) / x; }

int main(void) {
  int fails = 0;
  gsl_set_error_handler(my_handler);

  /* The Fourier density estimate against its sum written out. */
  enum { N = 5, D = 2 };
  const double data[N * D] = {0, 0, 0.5, -0.2, -1, 0.3, 0.25, 1.1, 2, -0.7};
  const double R[D] = {1.5, 2.0}, x[D] = {0.1, 0.2};
  gfi_kernel k;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 1;
  gfi_density_plan *p = NULL;
  double est = NAN;
  int st = gfi_kernel_pow(&k, 4);
  if (!st) st = gfi_density_plan_fourier(&p, &k, N, D, data, NULL, R, &o);
  if (!st) st = gfi_density_eval(p, 1, x, &est);
  gfi_density_destroy(p);
  double A = 2 * PI / 3, want = 0;
  for (int i = 0; i < N; i++) {
    double t = 1.0 / N;
    for (int j = 0; j < D; j++) t *= R[j] / A * pow(sinc(R[j] * (x[j] - data[i * D + j])), 4);
    want += t;
  }
  if (st || !(fabs(est - want) <= 1e-12 * fabs(want))) {
    fprintf(stderr, "consumer: density %.17g (status %s), brute force %.17g\n", est, gfi_strerror(st), want);
    fails++;
  }

  /* A GSL quadrature inside gfi leaves the program's GSL handler alone. */
  double Aq = 0;
  st = gfi_phi_integral(phi4, NULL, &Aq, NULL);
  if (st || !(fabs(Aq - A) <= 1e-9 * A)) {
    fprintf(stderr, "consumer: A_4 = %.17g (status %s), want %.17g\n", Aq, gfi_strerror(st), A);
    fails++;
  }
  gsl_error_handler_t *h = gsl_set_error_handler(NULL);
  if (h != my_handler || handler_calls) {
    fprintf(stderr, "consumer: GSL's handler changed (%d calls)\n", handler_calls);
    fails++;
  }
  printf("consumer: gfi %s, OpenMP %d, density %.6g, %s\n", GFI_VERSION, gfi_have_openmp(), est,
         fails ? "FAILED" : "ok");
  return fails ? 1 : 0;
}
