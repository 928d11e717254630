/* bench_fast_route: the band-limited route against the direct sum, configuration by configuration.
 *
 * For each configuration (D, l, R, N = M) it plans and evaluates the Fourier
 * density at M standard-normal queries against N standard-normal points with
 * opts.method DIRECT, FAST and AUTO, and prints the CPU seconds of plan +
 * evaluate (all threads together), the speed-up, the frequency nodes per axis, the error bound the
 * fast route reports, the error it makes against the direct sum (relative to
 * the largest |value|) and the route auto took. The same for Nadaraya-Watson
 * (V = 1) and for a density grid of M points.
 *
 * Usage: bench_fast_route [--quick] [--threads T]   (default 1; 0 = all cores)
 * Benchmarks are not tests: exit status 0 unless something failed to run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gfi/gfi.h"
#include "bench_util.h"

static uint64_t rs = 0x9E3779B97F4A7C15ULL;
static double nrand(void) { return bu_nrand(&rs); }

static const char *route_name(const gfi_fast_info *i) {
  return i->route == GFI_METHOD_FAST ? "fast" : "direct";
}

/* kind 0: density at points, 1: density on a grid, 2: NW at points */
static int run(int kind, size_t D, int l, double R, size_t N, size_t M, int nt) {
  double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), *q = malloc(M * D * sizeof *q);
  double *o[3];
  for (int k = 0; k < 3; k++) o[k] = malloc(M * sizeof(double) * 2);
  for (size_t i = 0; i < N * D; i++) x[i] = nrand();
  for (size_t i = 0; i < N; i++) y[i] = sin(2 * x[i * D]) + 0.1 * nrand();
  for (size_t i = 0; i < M * D; i++) q[i] = nrand();
  size_t n[3] = {1, 1, 1};
  double lo[3] = {-3, -3, -3}, hi[3] = {3, 3, 3};
  if (kind == 1) {
    size_t per = (size_t)llround(pow((double)M, 1.0 / (double)D));
    M = 1;
    for (size_t j = 0; j < D; j++) {
      n[j] = per;
      M *= per;
    }
  }
  gfi_kernel k;
  gfi_kernel_pow(&k, l);
  double Rv[3] = {R, R, R}, t[3];
  gfi_fast_info info[3];
  const gfi_method meth[3] = {GFI_METHOD_DIRECT, GFI_METHOD_FAST, GFI_METHOD_AUTO};
  for (int m = 0; m < 3; m++) {
    gfi_opts op;
    gfi_default_opts(&op);
    op.method = meth[m];
    op.nthreads = nt;
    double t0 = bu_cpu();
    int st;
    if (kind == 2) {
      gfi_nw_plan *p;
      st = gfi_nw_plan_fourier(&p, &k, N, D, 1, x, y, Rv, &op);
      if (!st) {
        st = gfi_nw_eval_ex(p, M, q, o[m], NULL, NULL, NULL, &info[m]);
        if (st == GFI_EDENOM) st = GFI_OK;
      }
      gfi_nw_destroy(p);
    } else {
      gfi_density_plan *p;
      st = gfi_density_plan_fourier(&p, &k, N, D, x, NULL, Rv, &op);
      if (!st)
        st = kind == 1 ? gfi_density_eval_grid(p, lo, hi, n, o[m], &info[m])
                       : gfi_density_eval_info(p, M, q, o[m], &info[m]);
      gfi_density_destroy(p);
    }
    t[m] = bu_cpu() - t0;
    if (st) {
      printf("# %s failed: %s\n", m == 0 ? "direct" : (m == 1 ? "fast" : "auto"), gfi_strerror(st));
      return 1;
    }
  }
  double e = 0, mx = 0;
  for (size_t i = 0; i < M; i++) {
    if (isnan(o[0][i]) || isnan(o[1][i])) continue;
    e = fmax(e, fabs(o[0][i] - o[1][i]));
    mx = fmax(mx, fabs(o[0][i]));
  }
  const char *kn = kind == 0 ? "density" : (kind == 1 ? "grid" : "nw");
  printf("%-8s %zu %d %6.2f %8zu %8zu %9.4f %9.4f %7.1f %6zu %9.2e %9.2e %-6s %8.4f\n", kn, D, l, R,
         N, M, t[0], t[1], t[0] / t[1], info[1].nodes[0], info[1].bound, e / mx,
         route_name(&info[2]), t[2]);
  free(x);
  free(y);
  free(q);
  for (int k2 = 0; k2 < 3; k2++) free(o[k2]);
  return 0;
}

int main(int argc, char **argv) {
  int quick = 0, nt = 1;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--quick")) quick = 1;
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc) nt = atoi(argv[++a]);
    else {
      fprintf(stderr, "usage: bench_fast [--quick] [--threads T]\n");
      return 2;
    }
  }
  printf("# threads %d (0 = all: %d)\n", nt, gfi_threads_available());
  printf("# kind    D l      R        N        M  direct_cpu  fast_cpu speedup nodes0"
         "  bound_rel  err_rel auto   auto_cpu\n");
  int bad = 0;
  size_t sizes[3] = {10000, 100000, 1000000};
  int ns = quick ? 1 : 3;
  for (int s = 0; s < ns; s++) {
    size_t N = sizes[s];
    if (N >= 1000000 && !quick) {
      /* the direct sum at 10^12 pairs is too slow to time: M = 10^4 */
      bad |= run(0, 1, 4, 2, N, 10000, nt);
      continue;
    }
    bad |= run(0, 1, 4, 2, N, N, nt);
    bad |= run(0, 1, 1, 5, N, N, nt);
    bad |= run(0, 1, 2, 20, N, N, nt);
    bad |= run(1, 1, 4, 2, N, N, nt);
    bad |= run(2, 1, 4, 2, N, N, nt);
    bad |= run(0, 2, 4, 2, N, N, nt);
    bad |= run(1, 2, 4, 2, N, N, nt);
    bad |= run(2, 2, 2, 2, N, N, nt);
    bad |= run(0, 3, 2, 1, N, N, nt);
  }
  return bad;
}
