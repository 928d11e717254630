/* Leave-one-out CV of Fourier Nadaraya-Watson through the fast route, with
 * and without its second pass, on Figure 2's data (2-D correlated normal
 * design, f(x) = x1 - 0.5 x1^2 + 0.2 x1^3, noise sd 0.5, phi = z^4,
 * tolerance 1e-6): at each radius the rows the first pass leaves, the rows
 * left to the direct sum, wall and CPU seconds of both ways and their ratio,
 * and |difference| against the two bounds.
 *
 * Usage: bench_loocv [--n N] [--threads T]   (default N = 90000, Figure 2's)
 * Prints "key value" lines and a table; exit status 1 when the two ways
 * differ by more than the sum of their bounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "gfi/gfi.h"
#include "select_internal.h"

int main(int argc, char **argv) {
  size_t N = 90000;
  int nt = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--n") && a + 1 < argc) N = (size_t)atof(argv[++a]);
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc) nt = atoi(argv[++a]);
    else {
      fprintf(stderr, "usage: bench_loocv [--n N] [--threads T]\n");
      return 2;
    }
  }
  if (N < 2) {
    fprintf(stderr, "bench_loocv: --n must be at least 2\n");
    return 2;
  }
  const size_t D = 2;
  gfi_model *m = NULL;
  gfi_regfun *f = NULL;
  gfi_noise noise;
  double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y);
  gsl_rng *g = gfi_rng_stream(1, 0);
  if (!x || !y || !g || gfi_model_parse(&m, "normal:cov=1,0.5,0.5,1", D, NULL) ||
      gfi_regfun_parse(&f, "poly:0,1,-0.5,0.2", D, NULL) || gfi_noise_parse(&noise, "gauss:0.5", NULL) ||
      gfi_regress_sample(m, f, &noise, g, N, x, y)) {
    fprintf(stderr, "bench_loocv: cannot draw the data\n");
    return 1;
  }
  char load[64], cpu[256];
  bu_loadavg(load, sizeof load);
  bu_cpu_model(cpu, sizeof cpu);
  printf("# bench_loocv (gfi %s): leave-one-out CV of Nadaraya-Watson, phi = z^4, N = %zu, 2-D, tol 1e-6\n",
         GFI_VERSION, N);
  printf("cpu %s\nloadavg_start %s\n", cpu, load);
  printf("# R rows_left_first rows_direct_one_pass rows_direct_two_pass wall_one wall_two cpu_one cpu_two "
         "ratio_cpu diff bound_one bound_two\n");
  const double Rs[] = {2, 4.6, 10, 32};
  int bad = 0;
  double tot1 = 0, tot2 = 0;
  for (size_t r = 0; r < sizeof Rs / sizeof *Rs; r++) {
    double R[2] = {Rs[r], Rs[r]}, v1, v2, b1, b2;
    size_t l1[2], l2[2];
    double w0 = bu_now(), c0 = bu_cpu();
    int s1 = sel_loocv_fast(4, N, D, 1, x, y, R, GFI_NW_DENOM_TOL, 1e-6, nt, 0, &v1, &b1, l1);
    double w1 = bu_now(), c1 = bu_cpu();
    int s2 = sel_loocv_fast(4, N, D, 1, x, y, R, GFI_NW_DENOM_TOL, 1e-6, nt, -1, &v2, &b2, l2);
    double w2 = bu_now(), c2 = bu_cpu();
    if (s1 || s2) {
      fprintf(stderr, "bench_loocv: R = %g: %s\n", Rs[r], gfi_strerror(s1 ? s1 : s2));
      return 1;
    }
    tot1 += c1 - c0;
    tot2 += c2 - c1;
    printf("%g %zu %zu %zu %.3f %.3f %.3f %.3f %.2f %.3g %.3g %.3g\n", Rs[r], l1[0], l1[1], l2[1], w1 - w0, w2 - w1,
           c1 - c0, c2 - c1, (c1 - c0) / (c2 - c1), fabs(v1 - v2), b1, b2);
    if (!(fabs(v1 - v2) <= b1 + b2)) bad = 1;
  }
  bu_loadavg(load, sizeof load);
  printf("cpu_one_pass %.3f\ncpu_two_pass %.3f\nratio_cpu %.2f\nloadavg_end %s\n", tot1, tot2, tot1 / tot2, load);
  gsl_rng_free(g);
  gfi_model_free(m);
  gfi_regfun_free(f);
  free(x);
  free(y);
  return bad;
}
