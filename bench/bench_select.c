/* Data-driven radius: what LSCV costs.
 *
 *  1. LSCV of the Fourier density estimator (phi = z^4, 1-D, normal data)
 *     through the band-limited route at N = 1e6: the radius search of
 *     gfi_select_lscv (a scan of 100 log-spaced radii over the automatic
 *     range, then golden-section refinement), wall time and evaluations.
 *  2. At N = 1e4, the fast route against the direct O(N^2) pair sums at
 *     the same radii: wall time of each, their ratio, and the largest
 *     |fast - direct| against the fast route's own error bound.
 *
 * Usage: bench_select [--n N] [--n-direct N] [--threads T]
 * Prints "key value" lines, wall and CPU seconds (CPU time summed over
 * threads); the wall times depend on the machine's load, which it prints
 * beside them. Exit status 1 when the fast route leaves its error bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "gfi/gfi.h"

static double *normal_sample(size_t N, uint64_t stream) {
  gfi_model *m = NULL;
  double *x = malloc(N * sizeof *x);
  gsl_rng *g = gfi_rng_stream(7, stream);
  if (!x || !g || gfi_model_parse(&m, "normal", 1, NULL) || gfi_model_sample(m, g, N, x)) {
    free(x);
    x = NULL;
  }
  if (g) gsl_rng_free(g);
  gfi_model_free(m);
  return x;
}

int main(int argc, char **argv) {
  size_t Nbig = 1000000, Nd = 10000;
  int nt = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--n") && a + 1 < argc) Nbig = (size_t)atof(argv[++a]);
    else if (!strcmp(argv[a], "--n-direct") && a + 1 < argc) Nd = (size_t)atof(argv[++a]);
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc) nt = atoi(argv[++a]);
    else {
      fprintf(stderr, "usage: bench_select [--n N] [--n-direct N] [--threads T]\n");
      return 2;
    }
  }
  if (Nbig < 2 || Nd < 2) {
    fprintf(stderr, "bench_select: --n and --n-direct must be at least 2\n");
    return 2;
  }
  char load[64], cpu[256];
  bu_loadavg(load, sizeof load);
  bu_cpu_model(cpu, sizeof cpu);
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  printf("# bench_select (gfi %s): LSCV of the Fourier density estimator, phi = z^4, 1-D normal data\n", GFI_VERSION);
  printf("cpu %s\n", cpu);
  printf("loadavg_start %s\n", load);

  /* 1. the radius search at N = Nbig through the fast route */
  double *x = normal_sample(Nbig, 0);
  if (!x) {
    fprintf(stderr, "bench_select: out of memory for N = %zu\n", Nbig);
    return 1;
  }
  gfi_select_opts so;
  gfi_select_default_opts(&so);
  so.base.nthreads = nt;
  so.base.method = GFI_METHOD_FAST;
  so.nscan = 100;
  gfi_select_result sr;
  double t0 = bu_now(), c0 = bu_cpu();
  int st = gfi_select_lscv(&k, Nbig, 1, x, &so, &sr, NULL);
  double wall = bu_now() - t0, cpus = bu_cpu() - c0;
  free(x);
  if (st) {
    fprintf(stderr, "bench_select: gfi_select_lscv: %s\n", gfi_strerror(st));
    return 1;
  }
  printf("search_n %zu\nsearch_scan %zu\nsearch_range %.6g %.6g\nsearch_evals %zu\n", Nbig, sr.nscan, sr.R_lo,
         sr.R_hi, sr.evals);
  printf("search_R_opt %.10g\nsearch_lscv %.10g\nsearch_bound %.3g\n", sr.R[0], sr.value, sr.bound);
  printf("search_wall_s %.3f\nsearch_cpu_s %.3f\nsearch_s_per_eval %.4f\n", wall, cpus, wall / (double)sr.evals);

  /* 2. fast against direct at N = Nd, 8 radii around the LSCV choice */
  x = normal_sample(Nd, 1);
  if (!x) {
    fprintf(stderr, "bench_select: out of memory for N = %zu\n", Nd);
    return 1;
  }
  enum { NR = 8 };
  double Rs[NR], vd[NR], vf[NR], bf[NR];
  for (int i = 0; i < NR; i++) Rs[i] = 0.5 * pow(40.0, (double)i / (NR - 1)); /* 0.5 .. 20 */
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nt;
  double td = 0, tf = 0, cd = 0, cf = 0, maxerr = 0, maxratio = 0;
  for (int i = 0; i < NR; i++) {
    o.method = GFI_METHOD_DIRECT;
    t0 = bu_now(), c0 = bu_cpu();
    st = gfi_lscv(&k, Nd, 1, x, Rs + i, &o, vd + i, NULL, NULL);
    td += bu_now() - t0, cd += bu_cpu() - c0;
    if (st) break;
    o.method = GFI_METHOD_FAST;
    t0 = bu_now(), c0 = bu_cpu();
    st = gfi_lscv(&k, Nd, 1, x, Rs + i, &o, vf + i, bf + i, NULL);
    tf += bu_now() - t0, cf += bu_cpu() - c0;
    if (st) break;
    double e = fabs(vf[i] - vd[i]);
    maxerr = fmax(maxerr, e);
    if (bf[i] > 0) maxratio = fmax(maxratio, e / bf[i]);
  }
  free(x);
  if (st) {
    fprintf(stderr, "bench_select: gfi_lscv: %s\n", gfi_strerror(st));
    return 1;
  }
  printf("compare_n %zu\ncompare_radii %d\n", Nd, NR);
  printf("direct_s %.4f\nfast_s %.4f\nratio_direct_over_fast %.1f\n", td, tf, td / tf);
  printf("direct_cpu_s %.4f\nfast_cpu_s %.4f\nratio_cpu_direct_over_fast %.1f\n", cd, cf, cd / cf);
  printf("max_abs_fast_minus_direct %.3g\nmax_err_over_bound %.3g\n", maxerr, maxratio);
  bu_loadavg(load, sizeof load);
  printf("loadavg_end %s\n", load);
  /* the fast route must stay within its bound (a failed bench, not a slow one) */
  return maxratio <= 1 ? 0 : 1;
}
