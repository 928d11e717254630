/* Memory of the grid routes: a 10^7-point 1-D density grid under auto
 * stays under 1 GB of resident memory (measured by getrusage's maximum
 * resident set in a child process, so that nothing else this program
 * allocated counts), and its values, and those of a grid whose last product
 * runs block by block in 2-D with two columns (Nadaraya-Watson), are within
 * the reported bound of the direct sum. No timing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gfi/gfi.h"
#include "alloc.h"
#include "check.h"

static uint64_t rs = 0x2545F4914F6CDD1DULL;
static double nrand(void) {
  double u[2];
  for (int k = 0; k < 2; k++) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    u[k] = ((double)(rs >> 11) + 0.5) * 0x1p-53;
  }
  return sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]);
}

/* Grid point k of lo:hi:n, as the library computes it. */
static double grid_at(double lo, double hi, size_t n, size_t k) {
  return n > 1 ? lo + (hi - lo) * (double)k / (double)(n - 1) : lo;
}

/* In the child: 0 when the grid ran within the bound; its max RSS in KB
 * goes through the pipe. */
static int child_grid(int fd) {
  /* the sanitized build runs a fifth of the grid: the same blocks, in
   * under a minute there */
  const size_t N = CHECK_SANITIZED ? 20000 : 100000, G = CHECK_SANITIZED ? 2000000 : 10000000;
  double *x = malloc(N * sizeof *x), *out = malloc(G * sizeof *out);
  if (!x || !out) return 3;
  for (size_t i = 0; i < N; i++) x[i] = nrand();
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 2;
  double R = 2, lo = -3, hi = 3;
  gfi_density_plan *p = NULL, *pd = NULL;
  gfi_fast_info info;
  int st = gfi_density_plan_fourier(&p, KPOW(4), N, 1, x, NULL, &R, &o);
  if (!st) st = gfi_density_eval_grid(p, &lo, &hi, &G, out, &info);
  int bad = st ? 4 : 0;
  /* a few grid points against the direct sum */
  o.method = GFI_METHOD_DIRECT;
  if (!bad && gfi_density_plan_fourier(&pd, KPOW(4), N, 1, x, NULL, &R, &o)) bad = 5;
  const size_t ks[] = {0, 1, G / 2 - 1, G / 2, G / 3 * 2 + 7, G - 2, G - 1};
  for (size_t a = 0; !bad && a < sizeof ks / sizeof *ks; a++) {
    double q = grid_at(lo, hi, G, ks[a]), v;
    if (gfi_density_eval(pd, 1, &q, &v)) bad = 6;
    else if (!(fabs(v - out[ks[a]]) <= (info.route == GFI_METHOD_FAST ? info.bound_abs : 1e-14 * fabs(v))))
      bad = 7;
  }
  gfi_density_destroy(p);
  gfi_density_destroy(pd);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  long kb = ru.ru_maxrss;
  if (write(fd, &kb, sizeof kb) != (ssize_t)sizeof kb) bad = 8;
  free(x);
  free(out);
  return bad;
}

static void grid_1e7(void) {
  int fds[2];
  if (pipe(fds)) {
    CHECK(0, "pipe");
    return;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    CHECK(0, "fork");
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    _exit(child_grid(fds[1]));
  }
  close(fds[1]);
  long kb = -1;
  if (read(fds[0], &kb, sizeof kb) != (ssize_t)sizeof kb) kb = -1;
  close(fds[0]);
  int ws = 0;
  CHECK(waitpid(pid, &ws, 0) == pid, "waitpid");
  CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the 1e7-point grid: child status %d (4: eval failed, 7: "
        "a value outside the bound)", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
  /* the output alone is 80 MB */
  CHECK(kb > 0 && kb < 1024L * 1024L, "the 1e7-point grid under auto: max RSS %ld KB (< 1 GB)", kb);
  printf("%s-point 1-D grid under auto: max RSS %.1f MB\n", CHECK_SANITIZED ? "2e6" : "1e7", kb / 1024.0);
}

/* NW on a 2-D grid whose first axis is long: the last product runs over
 * blocks of its rows, each block's phases serving both columns. */
static void nw_blocks(void) {
  const size_t N = 3000, n[2] = {CHECK_SANITIZED ? 150000 : 400000, 3};
  const size_t G = n[0] * n[1];
  double *x = malloc(2 * N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(G * sizeof *out);
  if (!x || !y || !out) {
    CHECK(0, "out of memory");
    return;
  }
  for (size_t i = 0; i < N; i++) {
    x[2 * i] = nrand();
    x[2 * i + 1] = nrand();
    y[i] = sin(2 * x[2 * i]) + x[2 * i + 1];
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 2;
  o.method = GFI_METHOD_FAST;
  double R[2] = {1.5, 1.5}, lo[2] = {-2, -1}, hi[2] = {2, 1};
  gfi_nw_plan *p = NULL, *pd = NULL;
  gfi_fast_info info;
  size_t nf = 0;
  CHECK_STATUS(gfi_nw_plan_fourier(&p, KPOW(2), N, 2, 1, x, y, R, &o), GFI_OK);
  int st = gfi_nw_eval_grid(p, lo, hi, n, out, &nf, &info);
  CHECK(st == GFI_OK || st == GFI_EDENOM, "nw grid: %s", gfi_strerror(st));
  CHECK(info.route == GFI_METHOD_FAST && info.bins[0] == 0 && info.nodes_total > 0,
        "nw grid: the NUFFT grid route (route %d, bins %zu)", info.route, info.bins[0]);
  o.method = GFI_METHOD_DIRECT;
  CHECK_STATUS(gfi_nw_plan_fourier(&pd, KPOW(2), N, 2, 1, x, y, R, &o), GFI_OK);
  double ymax = 0, worst = 0;
  for (size_t i = 0; i < N; i++) ymax = fmax(ymax, fabs(y[i]));
  for (size_t k0 = 0; k0 < n[0]; k0 += 9973)
    for (size_t k1 = 0; k1 < n[1]; k1++) {
      double q[2] = {grid_at(lo[0], hi[0], n[0], k0), grid_at(lo[1], hi[1], n[1], k1)}, v;
      size_t f = 0;
      if (gfi_nw_eval(pd, 1, q, &v, &f) || f) continue;
      double e = fabs(v - out[k0 * n[1] + k1]) / ymax;
      worst = fmax(worst, e);
    }
  CHECK(worst <= info.tol, "nw grid in blocks: error %.3g relative to max |y| (tol %.3g)", worst, info.tol);
  printf("nw 2-D grid %zu x %zu in blocks: error %.3g (tol %.3g)\n", n[0], n[1], worst, info.tol);
  gfi_nw_destroy(p);
  gfi_nw_destroy(pd);
  free(x);
  free(y);
  free(out);
}

/* lib/alloc.h: blocks of 4 MB or more are 2 MB-aligned on Linux (marked
 * for huge pages), hold what is written, and realloc and free as any. */
static void big_blocks(void) {
  const size_t n = (5u << 20) / sizeof(double);
  double *a = gfi_malloc2(n, sizeof *a);
  CHECK(a != NULL, "a 5 MB block");
  if (!a) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  CHECK(((uintptr_t)a & (GFI_HUGE_PAGE - 1)) == 0, "a 5 MB block at %p: 2 MB-aligned", (void *)a);
#endif
  for (size_t i = 0; i < n; i++) a[i] = (double)i;
  double *b = gfi_realloc2(a, 2 * n, sizeof *b);
  CHECK(b != NULL, "realloc to 10 MB");
  if (!b) {
    free(a);
    return;
  }
  int same = 1;
  for (size_t i = 0; i < n; i++) same &= b[i] == (double)i;
  CHECK(same, "realloc keeps the contents");
  free(b);
  CHECK(gfi_malloc2(SIZE_MAX / 2, 4) == NULL, "an overflowing product is NULL");
}

int main(void) {
  big_blocks();
  grid_1e7();
  nw_blocks();
  return check_summary("memory");
}
