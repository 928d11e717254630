/* NUFFT benchmark, every number measured in this run:
 *  1. type 3 in D = 1, 2 against the direct O(N K) sum (lib/nufft_direct.c)
 *     at N = 1e5 sources, K = 1e3 and 1e4 targets, tol 1e-6 and 1e-12: times,
 *     the ratio, and the error of the fast result against the direct one
 *     (max |f - f_direct| / sum |c|). The direct sum is timed on the first
 *     1000 targets and scaled by K / 1000 (its cost is linear in K);
 *  2. spreading throughput at N = 1e7 (type 3 sources added to a plan; the
 *     points per second include the phase and rescaling of each source) and
 *     the time of the whole type-3 transform;
 *  3. threads: 1 against 2 threads at N = 1e7 (1-D) for the type 1
 *     (10^6 modes) and for a type-3 plan of K = 4096 targets with real
 *     sources (as the density uses it): wall seconds (best of the repeats),
 *     process CPU seconds and minor page faults per call (getrusage), and
 *     the ratios t(1 thread) / t(2 threads). On a loaded machine the wall
 *     ratio is unreliable; CPU seconds and faults are not. FINUFFT's type 1
 *     on the same data is timed by bench/finufft_peer.py when a Python with
 *     finufft is found (GFI_FINUFFT_PYTHON, else python3), else skipped.
 * usage: bench_nufft [--quick] [--threads T] [--scaling] (--scaling: part 3 only) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gfi/gfi.h"
#include "gfi_version.h"
#include "nufft.h"

static void die(const char *what, int st) {
  fprintf(stderr, "bench_nufft: %s: %s\n", what, gfi_strerror(st));
  exit(1);
}

static uint64_t rs = 12345;
static double unif(double a, double b) {
  uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return a + (b - a) * ((double)(z >> 11) * 0x1.0p-53);
}

/* process CPU seconds (all threads): with the wall time it shows how much of
 * the machine a timing had (shared machines) */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void machine(int nt) {
  char host[256] = "?", cpu[256] = "?", line[512];
  gethostname(host, sizeof host);
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "model name", 10)) {
        char *c = strchr(line, ':');
        if (c) snprintf(cpu, sizeof cpu, "%s", c + 2);
        cpu[strcspn(cpu, "\n")] = 0;
        break;
      }
    fclose(f);
  }
  double la[3] = {0, 0, 0};
  if (getloadavg(la, 3) < 0) la[0] = NAN;
  printf("# bench_nufft (gfi %s, git %s)\n# machine: %s, %s, %d threads available (openmp %s), "
         "running on %d, load average %.2f\n",
         GFI_VERSION, GFI_GIT_REVISION, host, cpu, gfi_threads_available(),
         gfi_have_openmp() ? "on" : "off", nt, la[0]);
}

/* minor page faults and system (kernel) CPU seconds of the process so far */
static long minflt_now(double *sys) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *sys = ru.ru_stime.tv_sec + 1e-6 * ru.ru_stime.tv_usec;
  return ru.ru_minflt;
}

/* One measured configuration: best wall and CPU over reps; faults and kernel
 * CPU seconds as the mean per call; faults of the first call on its own. */
typedef struct {
  double wall, cpu, flt, sys, flt_first;
} meas;

typedef struct {
  int kind; /* 0: nufft1 one-shot, 1: nufft1 on a kept plan, 2: type 3 plan made per call,
               3: type 3 on a kept plan (reset, add, exec) */
  size_t N, K;
  const double *x, *c, *s;
  double *f;
  size_t ms;
  nufft_opts o;
  nufft_plan *p1;
  nufft3_plan *p3;
} scase;

static void scase_run(scase *sc) {
  int st = 0;
  double lo = -3.0, hi = 3.0;
  switch (sc->kind) {
  case 0:
    st = nufft1(1, sc->N, sc->x, sc->c, 1, &sc->ms, sc->f, &sc->o);
    break;
  case 1:
    st = nufft_plan_exec1(sc->p1, sc->N, sc->x, sc->c, sc->f);
    break;
  case 2: {
    nufft3_plan *p;
    st = nufft3_plan_make(&p, 1, &lo, &hi, -1, sc->K, sc->s, &sc->o);
    if (!st) st = nufft3_add_real(p, sc->N, sc->x, NULL, 1.0);
    if (!st) st = nufft3_exec(p, sc->f);
    nufft3_destroy(p);
    break;
  }
  default:
    nufft3_reset(sc->p3);
    st = nufft3_add_real(sc->p3, sc->N, sc->x, NULL, 1.0);
    if (!st) st = nufft3_exec(sc->p3, sc->f);
  }
  if (st) die("threads section", st);
}

static meas measure(scase *sc, int reps) {
  meas m = {INFINITY, INFINITY, 0, 0, 0};
  double s0, s1;
  long f0 = minflt_now(&s0);
  scase_run(sc); /* warm-up: a kept plan's buffers are faulted in here */
  m.flt_first = (double)(minflt_now(&s1) - f0);
  f0 = minflt_now(&s0);
  for (int r = 0; r < reps; r++) {
    double t0 = gfi_now(), c0 = cpu_now();
    scase_run(sc);
    double t = gfi_now() - t0, c = cpu_now() - c0;
    if (t < m.wall) m.wall = t;
    if (c < m.cpu) m.cpu = c;
  }
  m.flt = (double)(minflt_now(&s1) - f0) / reps;
  m.sys = (s1 - s0) / reps;
  return m;
}

/* 3. 1 against 2 threads (see the header). */
static void threads_section(int quick) {
  const size_t N = quick ? 1000000 : 10000000, K = 4096, ms = quick ? 100000 : 1000000;
  const int reps = quick ? 3 : 5;
  const double tol = 1e-6;
  double *x = malloc(N * sizeof *x), *c = malloc(2 * N * sizeof *c);
  double *x3 = malloc(N * sizeof *x3), *s = malloc(K * sizeof *s);
  double *f = malloc(2 * (ms > K ? ms : K) * sizeof *f);
  if (!x || !c || !x3 || !s || !f) die("allocation", GFI_ENOMEM);
  for (size_t j = 0; j < N; j++) x[j] = unif(-M_PI, M_PI);
  for (size_t j = 0; j < 2 * N; j++) c[j] = unif(-1, 1);
  for (size_t j = 0; j < N; j++) x3[j] = 0.5 * (unif(-1, 1) + unif(-1, 1)) * 3.0;
  for (size_t k = 0; k < K; k++) s[k] = 60.0 * (double)k / (double)(K - 1); /* nodes on [0, 60] */
  printf("# threads: 1-D, N = %zu, tol %.0e; type 1 with %zu modes (x uniform in [-pi, pi), "
         "complex c); type 3 with real sources (x in [-3, 3], strengths 1) and K = %zu targets "
         "on [0, 60] (real_sources, as the density)\n", N, tol, ms, K);
  printf("# per call: wall s (best of %d after a first call), CPU s (process, all threads; "
         "best), sys = kernel CPU s and faults = minor page faults (means over the %d calls), "
         "first = faults of the first call; ratio = 1-thread wall / 2-thread wall, cpu_growth = "
         "2-thread CPU / 1-thread CPU\n", reps, reps);
  printf("# case wall_1t cpu_1t sys_1t faults_1t first_1t wall_2t cpu_2t sys_2t faults_2t "
         "first_2t ratio cpu_growth\n");
  const char *names[4] = {"nufft1_oneshot", "nufft1_plan", "nufft3_plan_per_call",
                          "nufft3_plan_kept"};
  for (int kind = 0; kind < 4; kind++) {
    meas m[2];
    for (int ti = 0; ti < 2; ti++) {
      scase sc = {kind, N, K, kind < 2 ? x : x3, c, s, f, ms, {0, 0, 0, 0, 0}, NULL, NULL};
      nufft_default_opts(&sc.o);
      sc.o.tol = tol;
      sc.o.nthreads = ti + 1;
      sc.o.real_sources = kind >= 2;
      double lo = -3.0, hi = 3.0;
      int st = kind == 1 ? nufft_plan_make(&sc.p1, 1, 1, &ms, 1, &sc.o)
               : kind == 3 ? nufft3_plan_make(&sc.p3, 1, &lo, &hi, -1, K, s, &sc.o)
                           : 0;
      if (st) die("plan", st);
      m[ti] = measure(&sc, reps);
      nufft_plan_destroy(sc.p1);
      nufft3_destroy(sc.p3);
    }
    printf("%s %.4f %.4f %.4f %.0f %.0f %.4f %.4f %.4f %.0f %.0f %.2f %.2f\n", names[kind],
           m[0].wall, m[0].cpu, m[0].sys, m[0].flt, m[0].flt_first, m[1].wall, m[1].cpu,
           m[1].sys, m[1].flt, m[1].flt_first, m[0].wall / m[1].wall, m[1].cpu / m[0].cpu);
    fflush(stdout);
  }
  free(x); free(c); free(x3); free(s); free(f);
  /* the peer: FINUFFT's type 1 on the same problem, timed by its own script */
  const char *py = getenv("GFI_FINUFFT_PYTHON");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s/finufft_peer.py --n %zu --modes %zu --tol %g --reps %d",
           py && *py ? py : "python3", GFI_BENCH_DIR, N, ms, tol, reps);
  printf("# peer: %s\n", cmd);
  fflush(stdout);
  int rc = system(cmd);
  if (rc != 0)
    printf("# peer: FINUFFT not run (exit status %d): set GFI_FINUFFT_PYTHON to a Python "
           "with finufft and numpy\n", rc > 0 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
}

int main(int argc, char **argv) {
  int quick = 0, nt = 0, scaling = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--scaling"))
      scaling = 1;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      nt = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_nufft [--quick] [--threads T] [--scaling]\n");
      return 2;
    }
  }
  if (nt <= 0) nt = gfi_threads_available();
  machine(nt);
  if (scaling) {
    threads_section(quick);
    return 0;
  }

  /* 1. type 3 against the direct sum */
  printf("# type 3 vs direct: sources uniform in [-1, 1]^D, targets uniform in [-S, S]^D\n");
  printf("# times are wall seconds; cpu_* are process CPU seconds of the same run (all threads)\n");
  printf("# D N K S tol nf width t_nufft_s t_direct_s ratio err_inf cpu_nufft_s cpu_direct_s\n");
  const size_t N = quick ? 20000 : 100000;
  const size_t Ks[2] = {1000, 10000};
  const double tols[2] = {1e-6, 1e-12};
  for (int D = 1; D <= 2; D++) {
    double S = D == 1 ? 300 : 40;
    double *x = malloc(N * D * sizeof *x), *c = malloc(2 * N * sizeof *c);
    double *s = malloc(Ks[1] * D * sizeof *s), *f = malloc(2 * Ks[1] * sizeof *f);
    double *ref = malloc(2 * 1000 * sizeof *ref);
    if (!x || !c || !s || !f || !ref) die("allocation", GFI_ENOMEM);
    for (size_t j = 0; j < N * D; j++) x[j] = unif(-1, 1);
    for (size_t j = 0; j < 2 * N; j++) c[j] = unif(-1, 1);
    for (size_t k = 0; k < Ks[1] * D; k++) s[k] = unif(-S, S);
    double sumc = 0;
    for (size_t j = 0; j < N; j++) sumc += hypot(c[2 * j], c[2 * j + 1]);
    for (int ki = 0; ki < 2; ki++) {
      size_t K = Ks[ki], Kd = K < 1000 ? K : 1000;
      double t0 = gfi_now(), c0 = cpu_now();
      int st = nufft3_direct(D, N, x, c, 1, Kd, s, ref, nt);
      double td = (gfi_now() - t0) * (double)K / (double)Kd;
      double cd = (cpu_now() - c0) * (double)K / (double)Kd;
      if (st) die("direct", st);
      for (int ti = 0; ti < 2; ti++) {
        nufft_opts o;
        nufft_default_opts(&o);
        o.tol = tols[ti];
        o.nthreads = nt;
        double best = INFINITY, cbest = INFINITY;
        for (int rep = 0; rep < 3; rep++) {
          t0 = gfi_now();
          double c1 = cpu_now();
          st = nufft3(D, N, x, c, 1, K, s, f, &o);
          double t = gfi_now() - t0, ct = cpu_now() - c1;
          if (st) die("nufft3", st);
          if (t < best) best = t;
          if (ct < cbest) cbest = ct;
        }
        double err = 0;
        for (size_t k = 0; k < Kd; k++) {
          double e = hypot(f[2 * k] - ref[2 * k], f[2 * k + 1] - ref[2 * k + 1]);
          if (e > err) err = e;
        }
        double X[3] = {1, 1, 1}, Sv[3] = {S, S, S};
        size_t nf[3];
        nufft3_grid_size(D, X, Sv, &o, nf);
        nufft3_plan *p;
        int w = 0;
        double lo[2] = {-1, -1}, hi[2] = {1, 1};
        if (!nufft3_plan_make(&p, D, lo, hi, 1, 1, s, &o)) {
          nufft3_info(p, NULL, &w);
          nufft3_destroy(p);
        }
        printf("%d %zu %zu %g %.0e %zu %d %.4f %.4f %.1f %.2e %.4f %.4f\n", D, N, K, S, tols[ti],
               nf[0], w, best, td, td / best, err / sumc, cbest, cd);
        fflush(stdout);
      }
    }
    free(x); free(c); free(s); free(f); free(ref);
  }

  /* 2. spreading throughput */
  const size_t NT = quick ? 1000000 : 10000000, K = 10000;
  printf("# spreading throughput: N = %zu sources uniform in [-1, 1]^D added to a type-3 plan "
         "(targets in [-S, S]^D, S = 300 / 40 / 12 for D = 1 / 2 / 3)\n", NT);
  printf("# D N tol nf width t_add_s points_per_s t_exec_s t_total_s cpu_add_s\n");
  for (int D = 1; D <= 3; D++) {
    double S = D == 1 ? 300 : D == 2 ? 40 : 12;
    double *x = malloc(NT * D * sizeof *x), *c = malloc(2 * NT * sizeof *c);
    double *s = malloc(K * D * sizeof *s), *f = malloc(2 * K * sizeof *f);
    if (!x || !c || !s || !f) die("allocation", GFI_ENOMEM);
    for (size_t j = 0; j < NT * D; j++) x[j] = unif(-1, 1);
    for (size_t j = 0; j < 2 * NT; j++) c[j] = unif(-1, 1);
    for (size_t k = 0; k < K * D; k++) s[k] = unif(-S, S);
    double lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    for (int ti = 0; ti < 2; ti++) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = tols[ti];
      o.nthreads = nt;
      nufft3_plan *p;
      int st = nufft3_plan_make(&p, D, lo, hi, 1, K, s, &o);
      if (st) die("plan", st);
      double t0 = gfi_now(), c0 = cpu_now();
      st = nufft3_add(p, NT, x, c);
      double ta = gfi_now() - t0, ca = cpu_now() - c0;
      if (st) die("add", st);
      t0 = gfi_now();
      st = nufft3_exec(p, f);
      double te = gfi_now() - t0;
      if (st) die("exec", st);
      size_t nf[3];
      int w;
      nufft3_info(p, nf, &w);
      nufft3_destroy(p);
      printf("%d %zu %.0e %zu %d %.3f %.3g %.4f %.3f %.3f\n", D, NT, tols[ti], nf[0], w, ta,
             (double)NT / ta, te, ta + te, ca);
      fflush(stdout);
    }
    free(x); free(c); free(s); free(f);
  }
  threads_section(quick);
  return 0;
}
