/* The C side of bench/python_bench.py: the same library calls as gfi's Python
 * FourierKDE(R, phi=z^l).fit(data).evaluate_grid(n, lo, hi) on the same data,
 * timed in C, so that the Python script can print the Python / C ratio.
 *
 *   bench_python_peer DATA.npy R L LO HI NGRID REPEATS THREADS
 *
 * DATA.npy: N x 1 (or N,) float64. Prints "seconds S" (best over REPEATS of
 * plan + grid evaluation, wall clock), "cpu_seconds C" (the least process
 * CPU time of a round, all threads), "minflt F" (the minor page faults of
 * that round: memory the allocator had to take from the system afresh) and
 * "checksum C" (the sum of the grid values, to compare with Python's). Exit 1 on a library error, 2 on bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "gfi/gfi.h"

static double clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }
static long minflt(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_minflt;
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: bench_python_peer DATA.npy R L LO HI NGRID REPEATS THREADS\n");
    return 2;
  }
  double R = atof(argv[2]), lo = atof(argv[4]), hi = atof(argv[5]);
  int l = atoi(argv[3]), reps = atoi(argv[7]), threads = atoi(argv[8]);
  size_t n = (size_t)atol(argv[6]), N = 0, cols = 0;
  double *data = NULL;
  gfi_errinfo err;
  int st = gfi_npy_read(argv[1], 0, &N, &cols, &data, &err);
  if (st || cols != 1) {
    fprintf(stderr, "bench_python_peer: %s: %s\n", argv[1], st ? err.msg : "expected one column");
    return 1;
  }
  if (!(R > 0) || n < 1 || reps < 1) return 2;
  gfi_kernel k;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = threads;
  if ((st = gfi_kernel_pow(&k, l))) return 1;
  double *p = malloc(n * sizeof *p), best = 1e300, best_cpu = 1e300, sum = 0;
  long best_flt = 0;
  if (!p) return 1;
  for (int r = 0; r < reps; r++) {
    long f0 = minflt();
    double t0 = now(), c0 = cpu_now();
    gfi_density_plan *plan = NULL;
    st = gfi_density_plan_fourier(&plan, &k, N, 1, data, NULL, &R, &o);
    if (!st) st = gfi_density_eval_grid(plan, &lo, &hi, &n, p, NULL);
    gfi_density_destroy(plan);
    double t = now() - t0, c = cpu_now() - c0;
    if (st) {
      fprintf(stderr, "bench_python_peer: %s\n", gfi_strerror(st));
      return 1;
    }
    if (t < best) best = t;
    if (c < best_cpu) best_cpu = c, best_flt = minflt() - f0;
  }
  for (size_t i = 0; i < n; i++) sum += p[i];
  printf("seconds %.9g\ncpu_seconds %.9g\nminflt %ld\nchecksum %.17g\n", best, best_cpu, best_flt, sum);
  free(p);
  free(data);
  return 0;
}
