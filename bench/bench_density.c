/* bench_density: pair evaluations per second of gfi's density sums.
 *
 * For D = 1, 2, 8 and M = 10^3, 10^4 query points against N = 10^5 data
 * points (standard normal, gfi Philox streams), it times gfi_density_eval for
 *   - the generalized Fourier estimator, phi = z^4 (l = 4), R = 2 on every axis;
 *   - gfi's own Gaussian KDE (same plan/evaluate loop structure), Scott bandwidth;
 * with 1 and 2 threads, and in the same run scipy.stats.gaussian_kde (Scott
 * bandwidth, Debian's /usr/bin/python3) on the same data and queries through
 * bench/scipy_kde.py. scipy's densities are checked against gfi's Gaussian KDE
 * (relative 1e-8) so that the two time the same computation.
 *
 * Rate = N * M / (wall seconds of one evaluate call). Each measurement repeats
 * the call until at least --min-seconds (0.5) have passed; the best of
 * --repeats (3) measurements is kept, fewer when a configuration has already
 * used --max-seconds (a cap that keeps the full run to a few minutes; the
 * number of measurements is printed).
 *
 * Shared machines: each timing also records the cores it kept busy (process
 * CPU seconds / wall seconds). When the best measurement of a timing kept
 * fewer than 85% of the cores it asked for busy (other load on the machine),
 * up to --retries (4) more measurements are taken for it, out of a budget of
 * --retry-seconds (240) for the whole run; timings still contended after that
 * are marked with * and a warning.
 *
 * Benchmarks are not tests: the program prints the numbers, the ratios and a
 * verdict per goal, and exits 0 whether or not a goal is met (non-zero only
 * when something failed to run).
 *
 * Usage: bench_density [--quick] [--out FILE] [--no-scipy] [--python PATH]
 *                      [--min-seconds S] [--repeats K] [--max-seconds S]
 *                      [--retries K] [--retry-seconds S]
 *   --quick   N = 2*10^4, M = 10^3 only.
 *   --out     also write the table as a gnuplot-style .dat file.
 * Environment: GFI_SOURCE_ROOT (where bench/scipy_kde.py lives; default: the
 * source tree the program was built from), GFI_PYTHON (default
 * /usr/bin/python3). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "gfi/gfi.h"
#include "gfi_version.h"

#ifndef GFI_SOURCE_ROOT
#define GFI_SOURCE_ROOT "."
#endif
#ifndef GFI_BUILDTYPE
#define GFI_BUILDTYPE "unknown"
#endif
#ifndef GFI_OPTIMIZATION
#define GFI_OPTIMIZATION "?"
#endif
#ifndef GFI_NATIVE
#define GFI_NATIVE 0
#endif
#ifndef GFI_CC_ID
#define GFI_CC_ID "unknown"
#endif
#ifndef GFI_EXTRA_CFLAGS
#define GFI_EXTRA_CFLAGS ""
#endif

#define DEFAULT_PYTHON "/usr/bin/python3"
#define KERNEL_L 4
#define RADIUS 2.0
#define SEED 20240521u
#define AGREE_TOL 1e-8
#define GOAL_SCIPY 10.0
#define GOAL_SINC 0.6

static const size_t DIMS[] = {1, 2, 8};
#define NDIMS (sizeof DIMS / sizeof DIMS[0])
static const int THREADS[] = {1, 2};
#define NTHREADS (sizeof THREADS / sizeof THREADS[0])

typedef struct {
  double min_s, max_s;
  int repeats;
  int retries;      /* extra measurements for a contended timing */
  double retry_s;   /* budget left for them, whole run */
} timing_opts;

typedef struct {
  double rate;   /* best pairs per second */
  double best_s; /* seconds per call in the best measurement */
  int meas;      /* measurements taken */
  long calls;    /* evaluate calls in all */
  double util;   /* process CPU seconds / wall seconds in the best measurement */
} timing;

typedef struct {
  int ok;          /* 1 when the peer ran and reported a rate */
  double rate;     /* pairs per second */
  double best_s;
  int meas;
  double util;     /* CPU / wall seconds of the peer's best measurement */
  double max_rel;  /* max relative difference from gfi's Gaussian KDE */
  char note[8448]; /* why it was skipped / failed */
} scipy_result;

typedef struct {
  size_t D, M;
  int threads;
  double fourier, gauss, scipy;
  int scipy_agrees;
  int contended; /* a timing ran with fewer cores busy than it asked for */
} row;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return NAN;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The three load averages from /proc/loadavg, as text. */
static void loadavg(char *buf, size_t n) {
  snprintf(buf, n, "?");
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  double a, b, c;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
}

/* A timing counts as contended when the process kept fewer than this share
 * of the cores it asked for busy (other load on the machine). */
#define BUSY_MIN 0.85

static void die(const char *what, int st) {
  fprintf(stderr, "bench_density: %s: %s\n", what, st ? gfi_strerror(st) : strerror(errno));
  exit(2);
}

/* One measurement of gfi_density_eval(plan, M, q, out): calls repeated until
 * min_s have passed; folded into t (best rate kept). Returns the seconds spent. */
static double measure(const gfi_density_plan *plan, size_t N, size_t M, const double *q,
                      double *out, const timing_opts *to, timing *t) {
  long k = 0;
  double c0 = cpu_s(), t0 = now_s(), el;
  do {
    int st = gfi_density_eval(plan, M, q, out);
    if (st) die("gfi_density_eval", st);
    k++;
    el = now_s() - t0;
  } while (el < to->min_s);
  double c1 = cpu_s();
  t->calls += k;
  t->meas++;
  double rate = (double)N * (double)M * (double)k / el;
  if (rate > t->rate) {
    t->rate = rate;
    t->best_s = el / (double)k;
    t->util = (c1 - c0) / el;
  }
  return el;
}

static void cpu_info(char *model, size_t nmodel, char *isa, size_t nisa) {
  snprintf(model, nmodel, "unknown");
  snprintf(isa, nisa, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[8192];
  int got_model = 0, got_flags = 0;
  while (fgets(line, sizeof line, f) && !(got_model && got_flags)) {
    char *colon = strchr(line, ':');
    if (!colon) continue;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = 0;
    if (!got_model && strncmp(line, "model name", 10) == 0) {
      snprintf(model, nmodel, "%s", v);
      got_model = 1;
    } else if (!got_flags && strncmp(line, "flags", 5) == 0) {
      /* The SIMD extensions that matter for these loops. */
      static const char *want[] = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", NULL};
      char padded[sizeof line + 2];
      snprintf(padded, sizeof padded, " %s ", v);
      size_t n = 0;
      isa[0] = 0;
      for (int i = 0; want[i] && n < nisa; i++) {
        char pat[32];
        snprintf(pat, sizeof pat, " %s ", want[i]);
        if (strstr(padded, pat)) n += (size_t)snprintf(isa + n, nisa - n, "%s%s", n ? " " : "", want[i]);
      }
      if (!isa[0]) snprintf(isa, nisa, "none of sse4_2/avx/avx2/fma/avx512f");
      got_flags = 1;
    }
  }
  fclose(f);
}

/* The x86-64 micro-architecture level of this CPU: the engines' load-time
 * clones (default / v3 = AVX2+FMA / v4 = AVX-512) pick the best one it runs. */
static const char *x86_level(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
  if (__builtin_cpu_supports("x86-64-v2")) return "x86-64-v2";
  return "x86-64";
#else
  return "unknown";
#endif
}

static double *normal_points(size_t n, size_t D, uint64_t stream) {
  gsl_rng *r = gfi_rng_stream(SEED, stream);
  if (!r) die("gfi_rng_stream", GFI_ENOMEM);
  double *x = malloc(n * D * sizeof *x);
  if (!x) die("malloc", GFI_ENOMEM);
  for (size_t i = 0; i < n * D; i++) x[i] = gsl_ran_gaussian(r, 1.0);
  gsl_rng_free(r);
  return x;
}

static int write_points(const char *path, const double *x, size_t n, size_t D) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < D; j++) fprintf(f, "%.17g%c", x[i * D + j], j + 1 < D ? ' ' : '\n');
  return fclose(f);
}

/* Run argv (argv[0] a full path) with stdout to a pipe; the output (at most
 * cap - 1 bytes) goes to buf. Returns the exit status, or -1 (could not run). */
static int run_capture(char *const argv[], char *buf, size_t cap) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  for (;;) {
    char tmp[4096];
    ssize_t got = read(fd[0], tmp, sizeof tmp);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    size_t take = (size_t)got;
    if (n + take > cap - 1) take = cap - 1 - n;
    memcpy(buf + n, tmp, take);
    n += take;
  }
  buf[n] = 0;
  close(fd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Value of "key value" line in the peer's output; NAN when absent. */
static double kv(const char *out, const char *key) {
  size_t L = strlen(key);
  for (const char *p = out; p && *p;) {
    if (strncmp(p, key, L) == 0 && p[L] == ' ') return strtod(p + L + 1, NULL);
    p = strchr(p, '\n');
    if (p) p++;
  }
  return NAN;
}

static void kv_str(const char *out, const char *key, char *dst, size_t n) {
  size_t L = strlen(key);
  snprintf(dst, n, "?");
  for (const char *p = out; p && *p;) {
    if (strncmp(p, key, L) == 0 && p[L] == ' ') {
      const char *v = p + L + 1;
      size_t len = strcspn(v, "\n");
      if (len >= n) len = n - 1;
      memcpy(dst, v, len);
      dst[len] = 0;
      return;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
}

static char g_scipy_version[256] = "";

static scipy_result run_scipy(const char *python, const char *script, const char *dir,
                              const char *data_path, const double *queries, size_t M, size_t D,
                              const double *gauss, timing_opts *to) {
  scipy_result r;
  memset(&r, 0, sizeof r);
  r.max_rel = NAN;
  char qpath[4096], dpath[4096], smin[32], smax[32], srep[32];
  snprintf(qpath, sizeof qpath, "%s/queries_D%zu_M%zu.txt", dir, D, M);
  snprintf(dpath, sizeof dpath, "%s/scipy_D%zu_M%zu.txt", dir, D, M);
  if (write_points(qpath, queries, M, D) != 0) {
    snprintf(r.note, sizeof r.note, "could not write %s: %s", qpath, strerror(errno));
    return r;
  }
  snprintf(smin, sizeof smin, "%g", to->min_s);
  snprintf(smax, sizeof smax, "%g", to->max_s);
  snprintf(srep, sizeof srep, "%d", to->repeats);
  char sret[32], sretsec[32];
  snprintf(sret, sizeof sret, "%d", to->retries);
  snprintf(sretsec, sizeof sretsec, "%g", to->retry_s);
  char *argv[] = {(char *)python, (char *)script, (char *)data_path, qpath,
                  "--out", dpath, "--min-seconds", smin, "--max-seconds", smax,
                  "--repeats", srep, "--retries", sret, "--retry-seconds", sretsec, NULL};
  static char out[16384];
  int rc = run_capture(argv, out, sizeof out);
  remove(qpath);
  if (rc != 0) remove(dpath);
  if (rc == 3) {
    snprintf(r.note, sizeof r.note,
             "scipy peer skipped: %s has no scipy/numpy (install: apt-get install python3-scipy)",
             python);
    return r;
  }
  if (rc != 0) {
    snprintf(r.note, sizeof r.note, "scipy peer failed (%s %s exited with %d)%s", python, script,
             rc, rc == 127 ? ": cannot run the interpreter" : "");
    return r;
  }
  r.rate = kv(out, "pairs_per_s");
  r.best_s = kv(out, "best_seconds");
  r.meas = (int)kv(out, "measurements");
  r.util = kv(out, "cpu_util");
  double used = kv(out, "retry_seconds");
  if (used > 0) to->retry_s -= used;
  if (!g_scipy_version[0]) {
    char sv[64], nv[64], pv[64];
    kv_str(out, "scipy_version", sv, sizeof sv);
    kv_str(out, "numpy_version", nv, sizeof nv);
    kv_str(out, "python_version", pv, sizeof pv);
    snprintf(g_scipy_version, sizeof g_scipy_version, "scipy %s, numpy %s, python %s", sv, nv, pv);
  }
  if (!(r.rate > 0)) {
    remove(dpath);
    snprintf(r.note, sizeof r.note, "scipy peer printed no rate");
    return r;
  }
  FILE *f = fopen(dpath, "r");
  if (f) remove(dpath); /* the open stream stays readable */
  if (!f) {
    snprintf(r.note, sizeof r.note, "scipy peer wrote no densities (%s)", dpath);
    return r;
  }
  double mx = 0;
  size_t i = 0;
  for (; i < M; i++) {
    double v;
    if (fscanf(f, "%lf", &v) != 1) break;
    double ref = gauss[i];
    double rel = fabs(v - ref) / (fabs(ref) > 0 ? fabs(ref) : 1.0);
    if (!(rel <= mx)) mx = rel; /* NaN propagates */
  }
  fclose(f);
  if (i != M) {
    snprintf(r.note, sizeof r.note, "scipy peer wrote %zu of %zu densities", i, M);
    return r;
  }
  r.max_rel = mx;
  r.ok = 1;
  return r;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench_density [--quick] [--out FILE] [--no-scipy] [--python PATH]\n"
          "                     [--min-seconds S] [--repeats K] [--max-seconds S]\n"
          "                     [--retries K] [--retry-seconds S]\n");
}

int main(int argc, char **argv) {
  int quick = 0, use_scipy = 1;
  const char *out_path = NULL;
  const char *python = getenv("GFI_PYTHON");
  if (!python || !*python) python = DEFAULT_PYTHON;
  timing_opts to = {0.5, 10.0, 3, 4, 240.0};
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--quick")) quick = 1;
    else if (!strcmp(argv[a], "--no-scipy")) use_scipy = 0;
    else if (!strcmp(argv[a], "--out") && a + 1 < argc) out_path = argv[++a];
    else if (!strcmp(argv[a], "--python") && a + 1 < argc) python = argv[++a];
    else if (!strcmp(argv[a], "--min-seconds") && a + 1 < argc) to.min_s = atof(argv[++a]);
    else if (!strcmp(argv[a], "--max-seconds") && a + 1 < argc) to.max_s = atof(argv[++a]);
    else if (!strcmp(argv[a], "--repeats") && a + 1 < argc) to.repeats = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--retries") && a + 1 < argc) to.retries = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--retry-seconds") && a + 1 < argc) to.retry_s = atof(argv[++a]);
    else if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (to.repeats < 1) to.repeats = 1;
  if (to.retries < 0) to.retries = 0;
  const double retry_total = to.retry_s;
  if (!(to.min_s >= 0)) to.min_s = 0;

  const size_t N = quick ? 20000 : 100000;
  const size_t Ms_full[] = {1000, 10000}, Ms_quick[] = {1000};
  const size_t *Ms = quick ? Ms_quick : Ms_full;
  const size_t nM = quick ? 1 : 2, Mmax = Ms[nM - 1];

  /* Where the scipy peer lives. */
  const char *root = getenv("GFI_SOURCE_ROOT");
  if (!root || !*root) root = GFI_SOURCE_ROOT;
  char script[4096];
  snprintf(script, sizeof script, "%s/bench/scipy_kde.py", root);
  char skip_note[8448] = "";
  if (!use_scipy) {
    snprintf(skip_note, sizeof skip_note, "scipy peer skipped (--no-scipy)");
  } else if (access(script, R_OK) != 0) {
    snprintf(skip_note, sizeof skip_note,
             "scipy peer skipped: %s not found (set GFI_SOURCE_ROOT to the gfi source tree)", script);
    use_scipy = 0;
  } else if (access(python, X_OK) != 0) {
    snprintf(skip_note, sizeof skip_note,
             "scipy peer skipped: %s not found (install: apt-get install python3-scipy)", python);
    use_scipy = 0;
  }
  char dir[] = "/tmp/gfi-bench-XXXXXX";
  int have_dir = 0;
  if (use_scipy) {
    if (!mkdtemp(dir)) die("mkdtemp", 0);
    have_dir = 1;
  }

  /* Machine and build. */
  char model[256], isa[256], host[256] = "?";
  cpu_info(model, sizeof model, isa, sizeof isa);
  gethostname(host, sizeof host);
  host[sizeof host - 1] = 0;
  time_t tnow = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tnow));
  char load0[64];
  loadavg(load0, sizeof load0);
  char hdr[4096];
  snprintf(hdr, sizeof hdr,
           "gfi bench_density  (gfi %s, revision %s)\n"
           "date      %s, host %s\n"
           "cpu       %s; SIMD: %s; level %s\n"
           "cores     %ld online; gfi threads available %d; OpenMP %s; load average at start %s\n"
           "compiler  %s (%s); buildtype %s, optimization -O%s, native %s%s%s\n"
           "problem   N = %zu standard-normal points, M = %s standard-normal queries, D = 1, 2, 8\n"
           "          Fourier: phi = z^%d, R = %g on every axis; Gauss: gfi_density_plan_gauss, "
           "Scott bandwidth\n"
           "timing    pairs/s = N*M/(seconds per gfi_density_eval call); calls repeated to >= %g s, "
           "best of %d (at most %g s per configuration; up to %d retries, %g s in all, "
           "for contended timings)\n",
           GFI_VERSION, GFI_GIT_REVISION, date, host, model, isa, x86_level(), sysconf(_SC_NPROCESSORS_ONLN),
           gfi_threads_available(), gfi_have_openmp() ? "yes" : "no", load0, GFI_CC_ID, __VERSION__,
           GFI_BUILDTYPE, GFI_OPTIMIZATION, GFI_NATIVE ? "yes (-march=native)" : "no",
           GFI_EXTRA_CFLAGS[0] ? ", c_args " : "", GFI_EXTRA_CFLAGS, N,
           quick ? "1000" : "1000, 10000", KERNEL_L, RADIUS, to.min_s, to.repeats, to.max_s,
           to.retries, to.retry_s);
  fputs(hdr, stdout);
  if (quick) printf("mode      --quick\n");
  if (use_scipy)
    printf("peer      scipy.stats.gaussian_kde via %s %s (single-threaded; same data and queries)\n",
           python, script);
  else
    printf("peer      %s\n", skip_note);
  printf("\n");
  fflush(stdout);

  gfi_kernel k;
  int st = gfi_kernel_pow(&k, KERNEL_L);
  if (st) die("gfi_kernel_pow", st);

  row rows[NDIMS * 2 * NTHREADS];
  size_t nrows = 0;
  int any_disagree = 0, any_thread_mismatch = 0, scipy_any = 0, any_contended = 0;
  char scipy_notes[4][8448];
  int nnotes = 0;
  double t_start = now_s();

  printf("%3s %6s %7s %19s %17s %10s %17s %13s %12s\n", "D", "M", "threads",
         "fourier_pairs_per_s", "gauss_pairs_per_s", "sinc/gauss", "scipy_pairs_per_s",
         "fourier/scipy", "gauss/scipy");
  fflush(stdout);

  for (size_t di = 0; di < NDIMS; di++) {
    const size_t D = DIMS[di];
    double *data = normal_points(N, D, 2 * D);
    double *queries = normal_points(Mmax, D, 2 * D + 1);
    double *R = malloc(D * sizeof *R), *H = malloc(D * D * sizeof *H);
    if (!R || !H) die("malloc", GFI_ENOMEM);
    for (size_t j = 0; j < D; j++) R[j] = RADIUS;
    st = gfi_bandwidth_rule("scott", N, D, data, NULL, H);
    if (st) die("gfi_bandwidth_rule", st);

    gfi_density_plan *pf[NTHREADS], *pg[NTHREADS];
    for (size_t t = 0; t < NTHREADS; t++) {
      gfi_opts o;
      gfi_default_opts(&o);
      o.nthreads = THREADS[t];
      st = gfi_density_plan_fourier(&pf[t], &k, N, D, data, NULL, R, &o);
      if (st) die("gfi_density_plan_fourier", st);
      st = gfi_density_plan_gauss(&pg[t], N, D, data, NULL, H, &o);
      if (st) die("gfi_density_plan_gauss", st);
    }

    char data_path[4096] = "";
    if (use_scipy) {
      snprintf(data_path, sizeof data_path, "%s/data_D%zu.txt", dir, D);
      if (write_points(data_path, data, N, D) != 0) die("writing the data file", 0);
    }

    double *fv[NTHREADS], *gv[NTHREADS];
    for (size_t t = 0; t < NTHREADS; t++) {
      fv[t] = malloc(Mmax * sizeof(double));
      gv[t] = malloc(Mmax * sizeof(double));
      if (!fv[t] || !gv[t]) die("malloc", GFI_ENOMEM);
    }

    for (size_t mi = 0; mi < nM; mi++) {
      const size_t M = Ms[mi];
      /* Rounds of one measurement per (engine, threads), interleaved so that
       * load that comes and goes hits the engines alike; best of the rounds,
       * each timing dropping out once it has used max_s. */
      timing tf[NTHREADS], tg[NTHREADS];
      double spent_f[NTHREADS], spent_g[NTHREADS];
      for (size_t t = 0; t < NTHREADS; t++) {
        tf[t] = tg[t] = (timing){0, 0, 0, 0, NAN};
        spent_f[t] = spent_g[t] = 0;
      }
      for (int round = 0; round < to.repeats; round++)
        for (size_t t = 0; t < NTHREADS; t++) {
          if (spent_f[t] < to.max_s) spent_f[t] += measure(pf[t], N, M, queries, fv[t], &to, &tf[t]);
          if (spent_g[t] < to.max_s) spent_g[t] += measure(pg[t], N, M, queries, gv[t], &to, &tg[t]);
        }
      /* Retries for timings whose best measurement shared its cores. */
      for (int extra = 0; extra < to.retries; extra++) {
        int any = 0;
        for (size_t t = 0; t < NTHREADS; t++) {
          const double want = BUSY_MIN * THREADS[t];
          if (tf[t].util < want && to.retry_s > 0) {
            to.retry_s -= measure(pf[t], N, M, queries, fv[t], &to, &tf[t]);
            any = 1;
          }
          if (tg[t].util < want && to.retry_s > 0) {
            to.retry_s -= measure(pg[t], N, M, queries, gv[t], &to, &tg[t]);
            any = 1;
          }
        }
        if (!any) break;
      }
      /* Results must not depend on the thread count (density.h promises bits). */
      for (size_t t = 1; t < NTHREADS; t++)
        if (memcmp(fv[0], fv[t], M * sizeof(double)) || memcmp(gv[0], gv[t], M * sizeof(double)))
          any_thread_mismatch = 1;

      scipy_result sr;
      memset(&sr, 0, sizeof sr);
      if (use_scipy) {
        sr = run_scipy(python, script, dir, data_path, queries, M, D, gv[0], &to);
        if (sr.ok) {
          scipy_any = 1;
          if (!(sr.max_rel <= AGREE_TOL)) any_disagree = 1;
        } else {
          if (nnotes < 4) snprintf(scipy_notes[nnotes++], sizeof scipy_notes[0], "%s", sr.note);
          if (strstr(sr.note, "skipped")) use_scipy = 0; /* no scipy: do not retry */
        }
      }
      for (size_t t = 0; t < NTHREADS; t++) {
        row *r = &rows[nrows++];
        r->D = D;
        r->M = M;
        r->threads = THREADS[t];
        r->fourier = tf[t].rate;
        r->gauss = tg[t].rate;
        r->scipy = sr.ok ? sr.rate : NAN;
        r->scipy_agrees = sr.ok && sr.max_rel <= AGREE_TOL;
        r->contended = tf[t].util < BUSY_MIN * THREADS[t] || tg[t].util < BUSY_MIN * THREADS[t] ||
                       (sr.ok && sr.util < BUSY_MIN);
        any_contended |= r->contended;
        printf("%3zu %6zu %7d %19.4e %17.4e %10.3f %17.4e %13.2f %12.2f%s\n", D, M, THREADS[t],
               r->fourier, r->gauss, r->fourier / r->gauss, r->scipy, r->fourier / r->scipy,
               r->gauss / r->scipy, r->contended ? "  *" : "");
      }
      printf("    # D=%zu M=%zu, 1/2 threads: s/call fourier %.3g/%.3g, gauss %.3g/%.3g; "
             "measurements %d/%d, %d/%d; cores busy %.2f/%.2f, %.2f/%.2f",
             D, M, tf[0].best_s, tf[NTHREADS - 1].best_s, tg[0].best_s, tg[NTHREADS - 1].best_s,
             tf[0].meas, tf[NTHREADS - 1].meas, tg[0].meas, tg[NTHREADS - 1].meas, tf[0].util,
             tf[NTHREADS - 1].util, tg[0].util, tg[NTHREADS - 1].util);
      if (sr.ok)
        printf("\n    # scipy: %.3g s/call, %d meas., cores busy %.2f; max rel diff vs gfi gauss "
               "%.2e%s", sr.best_s, sr.meas, sr.util, sr.max_rel,
               sr.max_rel <= AGREE_TOL ? "" : "  DISAGREE");
      printf("\n");
      fflush(stdout);
    }

    for (size_t t = 0; t < NTHREADS; t++) {
      gfi_density_destroy(pf[t]);
      gfi_density_destroy(pg[t]);
      free(fv[t]);
      free(gv[t]);
    }
    if (data_path[0]) remove(data_path);
    free(data);
    free(queries);
    free(R);
    free(H);
  }
  if (have_dir) rmdir(dir);

  printf("\n");
  if (scipy_any) printf("scipy     %s\n", g_scipy_version);
  for (int i = 0; i < nnotes; i++) printf("note      %s\n", scipy_notes[i]);
  if (!scipy_any && !nnotes) printf("note      %s\n", skip_note);
  if (any_thread_mismatch)
    printf("WARNING   densities differ between 1 and 2 threads (density.h promises identical bits)\n");
  else
    printf("check     densities bit-identical for 1 and 2 threads (Fourier and Gauss)\n");
  if (scipy_any)
    printf("check     scipy densities %s gfi's Gaussian KDE within relative %.0e%s\n",
           any_disagree ? "DO NOT agree with" : "agree with", AGREE_TOL,
           any_disagree ? " (the scipy comparison is doubtful)" : "");

  /* Verdicts: NOT MET when a clean (uncontended) row misses the goal; MET when
   * every row, contended ones included, reaches it; UNDETERMINED when only
   * contended rows (marked *) miss it. */
  /* Goal (a): Fourier at D = 2 on 2 threads >= 10x scipy, every M. */
  {
    const row *w = NULL, *wc = NULL;
    double worst = INFINITY, worstc = INFINITY;
    int agree = 1, ncont = 0;
    for (size_t i = 0; i < nrows; i++) {
      const row *r = &rows[i];
      if (r->D != 2 || r->threads != 2 || !isfinite(r->scipy)) continue;
      double ratio = r->fourier / r->scipy;
      agree &= r->scipy_agrees;
      if (r->contended) {
        ncont++;
        if (ratio < worstc) worstc = ratio, wc = r;
      } else if (ratio < worst) {
        worst = ratio, w = r;
      }
    }
    char what[128];
    snprintf(what, sizeof what, "Fourier pair rate at D=2, 2 threads >= %gx scipy's", GOAL_SCIPY);
    if (!w && !wc)
      printf("goal (a)  NOT EVALUATED: %s (scipy peer skipped)\n", what);
    else if (!w)
      printf("goal (a)  UNDETERMINED: %s: every such row contended; worst contended ratio %.2fx "
             "(M=%zu)%s\n", what, worstc, wc->M, agree ? "" : " [scipy densities disagree]");
    else {
      printf("goal (a)  %s: %s: worst ratio %.2fx (M=%zu)",
             worst < GOAL_SCIPY ? "NOT MET" : (worstc < GOAL_SCIPY ? "UNDETERMINED" : "MET"), what,
             worst, w->M);
      if (ncont) printf("; %d contended row%s, worst %.2fx", ncont, ncont > 1 ? "s" : "", worstc);
      printf("%s\n", agree ? "" : " [scipy densities disagree: doubtful]");
    }
  }
  /* Goal (b): sinc rate >= 60% of the Gaussian rate, every configuration. */
  {
    const row *w = NULL, *wc = NULL;
    double worst = INFINITY, worstc = INFINITY;
    int ncont = 0;
    for (size_t i = 0; i < nrows; i++) {
      const row *r = &rows[i];
      double ratio = r->fourier / r->gauss;
      if (r->contended) {
        ncont++;
        if (ratio < worstc) worstc = ratio, wc = r;
      } else if (ratio < worst) {
        worst = ratio, w = r;
      }
    }
    char what[128];
    snprintf(what, sizeof what, "sinc pair rate >= %.0f%% of gfi's Gaussian KDE rate", 100 * GOAL_SINC);
    if (w) {
      printf("goal (b)  %s: %s: worst ratio %.3f (D=%zu, M=%zu, %d thread%s)",
             worst < GOAL_SINC ? "NOT MET" : (worstc < GOAL_SINC ? "UNDETERMINED" : "MET"), what,
             worst, w->D, w->M, w->threads, w->threads == 1 ? "" : "s");
      if (ncont)
        printf("; %d contended row%s, worst %.3f (D=%zu)", ncont, ncont > 1 ? "s" : "", worstc, wc->D);
      printf("\n");
    } else if (wc) {
      printf("goal (b)  UNDETERMINED: %s: every row contended; worst contended ratio %.3f\n", what,
             worstc);
    }
    /* Per dimension, for the record. */
    printf("          sinc/gauss by D (clean rows, min..max):");
    for (size_t di = 0; di < NDIMS; di++) {
      double lo = INFINITY, hi = -INFINITY;
      for (size_t i = 0; i < nrows; i++)
        if (rows[i].D == DIMS[di] && !rows[i].contended) {
          double ratio = rows[i].fourier / rows[i].gauss;
          if (ratio < lo) lo = ratio;
          if (ratio > hi) hi = ratio;
        }
      if (hi >= lo) printf("  D=%zu %.2f..%.2f", DIMS[di], lo, hi);
      else printf("  D=%zu -", DIMS[di]);
    }
    printf("\n");
  }
  char load1[64];
  loadavg(load1, sizeof load1);
  if (any_contended)
    printf("WARNING   rows marked * had a timing that kept fewer than %.0f%% of its threads' cores "
           "busy (other load on the machine: load average now %s); treat them as lower bounds "
           "and rerun on a quiet machine\n", 100 * BUSY_MIN, load1);
  printf("elapsed   %.1f s (%.0f s of it retrying contended timings); load average at end %s\n",
         now_s() - t_start, retry_total - (to.retry_s > 0 ? to.retry_s : 0), load1);

  if (out_path) {
    FILE *f = fopen(out_path, "w");
    if (!f) die(out_path, 0);
    for (char *line = hdr; *line;) {
      size_t L = strcspn(line, "\n");
      fprintf(f, "# %.*s\n", (int)L, line);
      line += L + (line[L] == '\n');
    }
    if (scipy_any) fprintf(f, "# scipy     %s\n", g_scipy_version);
    fprintf(f, "# D M threads fourier_pairs_per_s gauss_pairs_per_s sinc_over_gauss "
               "scipy_pairs_per_s fourier_over_scipy gauss_over_scipy contended\n");
    for (size_t i = 0; i < nrows; i++) {
      const row *r = &rows[i];
      fprintf(f, "%zu %zu %d %.6e %.6e %.6f %.6e %.6f %.6f %d\n", r->D, r->M, r->threads,
              r->fourier, r->gauss, r->fourier / r->gauss, r->scipy, r->fourier / r->scipy,
              r->gauss / r->scipy, r->contended);
    }
    if (fclose(f) != 0) die(out_path, 0);
    printf("table     written to %s\n", out_path);
  }
  return 0;
}
