/* MISE benchmark: the exact 2-D MISE (default quadrature) against the same
 * integral on a 4x refined rule (the brute-force peer), and Monte-Carlo
 * replications per second on 1 and 2 threads. Prints the machine. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gfi/gfi.h"

static double best_exact(const gfi_model *m, int l, const double *R, double res, int nt, double *val) {
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.resolution = res;
  o.base.nthreads = nt;
  double best = 1e300;
  for (int k = 0; k < 3; k++) {
    gfi_mise_result r;
    double t0 = gfi_now();
    gfi_kernel kp;
    gfi_kernel_pow(&kp, l);
    if (gfi_mise_exact(m, &kp, 1e4, R, &o, &r)) exit(1);
    double t = gfi_now() - t0;
    if (t < best) best = t;
    *val = r.mise;
  }
  return best;
}

int main(void) {
  char host[256] = "unknown";
  gethostname(host, sizeof host);
  printf("# mise_bench on %s, %d cores available (openmp %s)\n", host, gfi_threads_available(),
         gfi_have_openmp() ? "on" : "off");
  gfi_model *m;
  gfi_errinfo e;
  if (gfi_model_parse(&m, "normal:cov=1,0.6,0.6,0.8", 2, &e)) return 1;
  double R[2] = {3, 3};
  printf("# exact MISE, D = 2 correlated normal, N = 1e4, R = 3, 2 threads\n");
  printf("# l seconds peer_seconds(4x refined) speedup rel_diff\n");
  for (int l = 1; l <= 4; l++) {
    double v, vp;
    double t = best_exact(m, l, R, 1, 2, &v), tp = best_exact(m, l, R, 4, 2, &vp);
    printf("%d %.4f %.4f %.1f %.2e\n", l, t, tp, tp / t, (v - vp) / vp);
  }
  printf("# Monte-Carlo MISE (Plancherel ISE), D = 2, N = 500, l = 4, R = 2, 40 replications\n");
  printf("# threads reps_per_second ratio_to_1_thread\n");
  double r1 = 0;
  for (int nt = 1; nt <= 2; nt++) {
    gfi_mise_opts o;
    gfi_mise_default_opts(&o);
    o.base.nthreads = nt;
    o.parts = 0;
    gfi_mise_result r;
    double R2[2] = {2, 2};
    double t0 = gfi_now();
    gfi_kernel k4;
    gfi_kernel_pow(&k4, 4);
    if (gfi_mise_mc(m, &k4, 500, R2, 40, &o, &r, NULL)) return 1;
    double rate = 40 / (gfi_now() - t0);
    if (nt == 1) r1 = rate;
    printf("%d %.2f %.2f\n", nt, rate, rate / r1);
  }
  gfi_model_free(m);
  return 0;
}
