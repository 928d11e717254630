/* bench_fast: the band-limited fast route (gfi_opts.method = GFI_METHOD_FAST)
 * against the direct sum and against KDEpy / fastKDE, in four parts:
 *
 *   scatter  N = 10^6 standard-normal points, M = 3*10^4 scattered queries,
 *            D = 1 and 2: fast (plan + evaluate) against direct. The direct
 *            sum at this size takes minutes, so it is timed on an evenly
 *            spread subset of the queries (enough for ~--direct-seconds) and
 *            scaled by M / subset (its cost is linear in M; the output says
 *            so). Error: max |fast - direct| / max |direct| over the subset.
 *            Goal: fast >= 50x direct.
 *   grid     density on a regular grid, N = 10^6: 1024 points in 1-D, 256^2 in
 *            2-D, the grid [-L, L]^D holding every data point. gfi fast and
 *            direct (subset as above) in this process; KDEpy's FFTKDE
 *            (Gaussian kernel, its default linear binning) and fastKDE through
 *            bench/kdepy_peer.py on the same .npy data file: the computation
 *            alone, and the whole process (start, load the .npy, compute,
 *            write the grid as .npy, exit) for `gfi density --method fast
 *            --grid` and the peer. Each tool's error is against ITS OWN exact
 *            direct sum: KDEpy vs the exact Gaussian KDE on the grid (computed
 *            by the peer), gfi fast vs gfi direct. Goal: gfi's whole process
 *            >= 1.5x faster than KDEpy's with error < 1e-10.
 *   scaling  time against N on the 1-D grid of 1024 points (fixed radius):
 *            direct for N <= 10^6 (subset-scaled), fast for N up to --nmax
 *            (default 10^8), KDEpy (computation alone) for N <= 10^7; the
 *            log-log slope of each.
 *   tol      error against the requested tolerance, tol = 1e-3 .. 1e-13, at
 *            N = 10^5, M = 10^3 scattered queries, D = 1 and 2.
 *
 * The Fourier estimator throughout: phi = z^4 (Jackson), radius R on every
 * axis the MISE-optimal one for the standard-normal truth at that N
 * (gfi_ropt); KDEpy's Gaussian bandwidth is the MISE-optimal h
 * (gfi_mise_gauss_hopt). Seconds are wall-clock, best of --repeats
 * measurements of at least --min-seconds each (two calls when a call takes
 * longer than 2 s: the first call at a large N also pays for the first
 * touch of its memory, which the scaling table records apart as
 * fast_first_s); "cores busy" = process CPU / wall seconds.
 *
 * Writes fast_scatter.dat, fast_grid.dat, fast_scaling.dat and fast_tol.dat
 * into --outdir (plots/fast_*.gp draw them). Benchmarks are not tests: exits
 * 0 whether or not a goal is met, non-zero only when something failed to run.
 *
 * Usage: bench_fast [--quick | --smoke] [--parts LIST] [--outdir DIR]
 *                   [--nmax N] [--python PATH] [--gfi PATH] [--threads T]
 *                   [--min-seconds S] [--repeats K] [--direct-seconds S]
 *   --parts    comma-separated subset of scatter,grid,scaling,tol (default all)
 *   --quick    N = 10^5 (scatter, grid), scaling to 10^6, tol at N = 2*10^4
 *   --smoke    tiny sizes, every step once (the test suite runs this)
 * Environment: GFI_PEER_PYTHON (a python with KDEpy and fastkde; tools/bench.sh
 * makes one), GFI_CLI (the gfi program), GFI_SOURCE_ROOT. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "gfi/gfi.h"
#include "gfi_version.h"
#include "bench_util.h"

/* The fast route's report (gfi/fast.h: gfi_density_eval_info and
 * gfi_density_eval_grid); without it the grid part evaluates the grid's
 * points as scattered queries. */
#if defined(__has_include)
#if __has_include("gfi/fast.h")
#define GFI_HAVE_FAST_INFO 1
#endif
#endif
#ifndef GFI_HAVE_FAST_INFO
#define GFI_HAVE_FAST_INFO 0
#endif

#ifndef GFI_SOURCE_ROOT
#define GFI_SOURCE_ROOT "."
#endif
#ifndef GFI_BUILD_ROOT
#define GFI_BUILD_ROOT "build"
#endif
#ifndef GFI_BUILDTYPE
#define GFI_BUILDTYPE "unknown"
#endif
#ifndef GFI_CC_ID
#define GFI_CC_ID "unknown"
#endif

#define KERNEL_L 4
#define SEED 20261123u
#define TOL_MAIN 1e-10
#define GOAL_SCATTER 50.0
#define GOAL_WHOLE 1.5
#define GOAL_ERR 1e-10

typedef struct {
  double min_s;
  int repeats;
  double direct_s; /* target seconds of a subset-scaled direct timing */
  int nthreads;
} topts;

static topts g_to = {0.3, 3, 4.0, 0};
static gfi_kernel g_k;


static void die(const char *what, int st) {
  fprintf(stderr, "bench_fast: %s: %s\n", what, st ? gfi_strerror(st) : strerror(errno));
  exit(2);
}

static void *xmalloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) die("size overflow", GFI_ENOMEM);
  void *p = malloc(n && size ? n * size : 1);
  if (!p) die("malloc", GFI_ENOMEM);
  return p;
}

static double *normal_points(size_t n, size_t D, uint64_t stream) {
  gsl_rng *r = gfi_rng_stream(SEED, stream);
  if (!r) die("gfi_rng_stream", GFI_ENOMEM);
  double *x = xmalloc(n, D * sizeof *x);
  for (size_t i = 0; i < n * D; i++) x[i] = gsl_ran_gaussian_ziggurat(r, 1.0);
  gsl_rng_free(r);
  return x;
}

static double max_abs(size_t n, const double *x) {
  double m = 0;
  for (size_t i = 0; i < n; i++)
    if (!(fabs(x[i]) <= m)) m = fabs(x[i]);
  return m;
}

/* max |a - b| / max |b|, NaN-propagating. */
static double rel_err(size_t n, const double *a, const double *b) {
  double e = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]);
    if (!(d <= e)) e = d;
  }
  return e / max_abs(n, b);
}

/* The MISE-optimal radius (l = 4) and Gaussian bandwidth for N(0, I_D). */
static void smoothing(size_t D, double N, double *R, double *h) {
  gfi_model *m;
  int st = gfi_model_normal(&m, D, NULL, NULL);
  if (st) die("gfi_model_normal", st);
  gfi_mise_opts mo;
  gfi_mise_default_opts(&mo);
  gfi_mise_result res;
  if (R) {
    gfi_kernel kp;
    gfi_kernel_pow(&kp, KERNEL_L);
    st = gfi_ropt(m, &kp, N, NULL, &mo, R, &res);
    if (st) die("gfi_ropt", st);
  }
  if (h) {
    st = gfi_mise_gauss_hopt(m, N, h, &res);
    if (st) die("gfi_mise_gauss_hopt", st);
  }
  gfi_model_free(m);
}

/* A regular grid lo..hi with n points on every axis (last axis fastest), or
 * none (NULL): the queries are then the M points given. */
typedef struct {
  double lo, hi;
  size_t n;
} gridspec;

/* What the last fast-route evaluation reported (route, nodes, error bound). */
#if GFI_HAVE_FAST_INFO
static gfi_fast_info g_info;
#endif
static int g_info_ok __attribute__((unused)) = 0;

static const char *route_name(void) {
#if GFI_HAVE_FAST_INFO
  if (g_info_ok) return g_info.route == GFI_METHOD_FAST ? "fast" : "DIRECT";
#endif
  return "?";
}

static size_t info_nodes(void) {
#if GFI_HAVE_FAST_INFO
  if (g_info_ok) return g_info.nodes_total;
#endif
  return 0;
}

/* Lattice cells on axis 0 when the binned route ran, else 0. */
static size_t info_cells(void) {
#if GFI_HAVE_FAST_INFO && defined(GFI_FAST_INFO_BINS)
  if (g_info_ok) return g_info.bins[0];
#endif
  return 0;
}

static double info_bound(void) {
#if GFI_HAVE_FAST_INFO
  if (g_info_ok) return g_info.bound;
#endif
  return NAN;
}

/* "route fast, 1234 nodes, bound 3e-11" for the last fast evaluation. */
static void route_text(char *buf, size_t n) {
  snprintf(buf, n, "route not reported (this gfi has no gfi_density_eval_info)");
#if GFI_HAVE_FAST_INFO
  if (g_info_ok)
    snprintf(buf, n, "route %s, %zu frequency nodes, %zu binned cells on axis 0, error bound %.2g relative to max |value|%s",
             route_name(), g_info.nodes_total, info_cells(), g_info.bound,
             g_info.route == GFI_METHOD_FAST ? "" : "  (WARNING: the fast route did not run)");
#endif
}

/* Plan and evaluate once; returns wall seconds, *util the cores kept busy.
 * With gs, out receives the grid's n^D values (q unused). */
static double plan_eval(size_t N, size_t D, const double *data, double R, gfi_method method,
                        double tol, int nthreads, size_t M, const double *q, const gridspec *gs,
                        double *out, double *util) {
  double Rv[3] = {R, R, R};
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  o.method = method;
  o.tol = tol;
  double c0 = bu_cpu(), t0 = bu_now();
  gfi_density_plan *p;
  int st = gfi_density_plan_fourier(&p, &g_k, N, D, data, NULL, Rv, &o);
  if (st) die("gfi_density_plan_fourier", st);
#if GFI_HAVE_FAST_INFO
  gfi_fast_info info;
  if (gs) {
    double lo[3] = {gs->lo, gs->lo, gs->lo}, hi[3] = {gs->hi, gs->hi, gs->hi};
    size_t nn[3] = {gs->n, gs->n, gs->n};
    st = gfi_density_eval_grid(p, lo, hi, nn, out, &info);
  } else {
    st = gfi_density_eval_info(p, M, q, out, &info);
  }
  if (st) die(gs ? "gfi_density_eval_grid" : "gfi_density_eval_info", st);
  if (method == GFI_METHOD_FAST) g_info = info, g_info_ok = 1;
#else
  if (gs) die("grid evaluation needs gfi_density_eval_grid", GFI_EUNSUPPORTED);
  st = gfi_density_eval(p, M, q, out);
  if (st) die("gfi_density_eval", st);
#endif
  gfi_density_destroy(p);
  double el = bu_now() - t0;
  if (util) *util = (bu_cpu() - c0) / el;
  return el;
}

/* Best seconds of plan + evaluate (fast or direct on all M queries or the grid). */
/* The first call's seconds of the last time_full: it also pays for the
 * first touch of the plan's memory, which a later call finds mapped. */
static double g_first_s = NAN;

static double time_full(size_t N, size_t D, const double *data, double R, gfi_method method,
                        double tol, int nthreads, size_t M, const double *q, const gridspec *gs,
                        double *out, double *util) {
  double best = INFINITY, bu = NAN;
  g_first_s = NAN;
  for (int r = 0; r < g_to.repeats; r++) {
    int k = 0;
    double t0 = bu_now(), u, one = INFINITY, el;
    do {
      double s = plan_eval(N, D, data, R, method, tol, nthreads, M, q, gs, out, &u);
      if (isnan(g_first_s)) g_first_s = s;
      if (s < one) one = s;
      k++;
      el = bu_now() - t0;
    } while (el < g_to.min_s);
    if (one < best) best = one, bu = u;
    if (one > 2.0 && r >= 1) break; /* long calls: two measurements */
  }
  if (util) *util = bu;
  return best;
}

/* The Gaussian KDE (H = h^2 I) on the grid gs by the fast route, plan +
 * evaluate, best of the repeats; NaN when this gfi has no such route. The
 * direct Gaussian KDE at the nq points q goes to ref (NULL: skipped). */
static double gauss_grid(size_t N, size_t D, const double *data, double h, const gridspec *gs,
                         double *out, size_t nq, const double *q, double *ref,
                         gfi_fast_info *info) {
  double H[9] = {0};
  for (size_t j = 0; j < D; j++) H[j * D + j] = h * h;
  double lo[3] = {gs->lo, gs->lo, gs->lo}, hi[3] = {gs->hi, gs->hi, gs->hi};
  size_t nn[3] = {gs->n, gs->n, gs->n};
  double best = INFINITY;
  for (int r = 0; r < g_to.repeats; r++) {
    gfi_opts o;
    gfi_default_opts(&o);
    o.nthreads = g_to.nthreads;
    o.method = GFI_METHOD_FAST;
    o.tol = TOL_MAIN;
    double t0 = bu_now();
    gfi_density_plan *p = NULL;
    int st = gfi_density_plan_gauss(&p, N, D, data, NULL, H, &o);
    if (st == GFI_EUNSUPPORTED) return NAN;
    if (st) die("gfi_density_plan_gauss (fast)", st);
    st = gfi_density_eval_grid(p, lo, hi, nn, out, info);
    if (st) die("gfi_density_eval_grid (gauss)", st);
    gfi_density_destroy(p);
    double el = bu_now() - t0;
    if (el < best) best = el;
    if (el > 2.0) break;
  }
  if (ref) {
    gfi_opts o;
    gfi_default_opts(&o);
    o.nthreads = g_to.nthreads;
    o.method = GFI_METHOD_DIRECT;
    gfi_density_plan *p = NULL;
    int st = gfi_density_plan_gauss(&p, N, D, data, NULL, H, &o);
    if (!st) st = gfi_density_eval(p, nq, q, ref);
    if (st) die("gfi_density_plan_gauss (direct)", st);
    gfi_density_destroy(p);
  }
  return best;
}

/* The direct sum timed on an evenly spread subset of the M queries and scaled
 * to M. sub receives the subset's indices (M entries of room), ref its direct
 * values; returns the scaled seconds, *msub the subset size. */
static double time_direct_scaled(size_t N, size_t D, const double *data, double R, size_t M,
                                 const double *q, size_t *idx, double *ref, size_t *msub,
                                 double *util) {
  /* Plan cost apart: O(N D), measured once. */
  double Rv[3] = {R, R, R};
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = g_to.nthreads;
  o.method = GFI_METHOD_DIRECT;
  double t0 = bu_now();
  gfi_density_plan *p;
  int st = gfi_density_plan_fourier(&p, &g_k, N, D, data, NULL, Rv, &o);
  if (st) die("gfi_density_plan_fourier (direct)", st);
  double t_plan = bu_now() - t0;
  double *qs = xmalloc(M, D * sizeof *qs);
  size_t m = M < 16 ? M : 16, mprev = 0;
  double t_sub = 0, c_sub = 0;
  for (;;) {
    for (size_t i = 0; i < m; i++) {
      idx[i] = (size_t)(((double)i + 0.5) * (double)M / (double)m);
      if (idx[i] >= M) idx[i] = M - 1;
      memcpy(qs + i * D, q + idx[i] * D, D * sizeof *qs);
    }
    double c0 = bu_cpu();
    t0 = bu_now();
    st = gfi_density_eval(p, m, qs, ref);
    if (st) die("gfi_density_eval (direct)", st);
    t_sub = bu_now() - t0;
    c_sub = bu_cpu() - c0;
    if (m == M || t_sub >= 0.5 * g_to.direct_s || m == mprev) break;
    /* Enough queries for about direct_s seconds. */
    double per = t_sub / (double)m;
    double want = per > 0 ? g_to.direct_s / per : (double)M;
    mprev = m;
    m = want >= (double)M ? M : (size_t)want;
    if (m < 2 * mprev) m = 2 * mprev < M ? 2 * mprev : M;
  }
  gfi_density_destroy(p);
  free(qs);
  *msub = m;
  if (util) *util = c_sub / t_sub;
  return t_plan + t_sub * (double)M / (double)m;
}

/* ---------------------------------------------------------------- peers */

static char g_python[4096], g_peer[4096], g_gfi[4096];
static int g_have_peer = 1;
static char g_peer_note[8800] = "";
static char g_peer_versions[512] = "";

/* Runs the peer in timing mode; returns 0 and fills sec, err, util. */
static int peer_time(const char *tool, const char *npy, const char *grid, double bw, int exact,
                     double *sec, double *err, double *util, long *points) {
  if (!g_have_peer) return -1;
  char sbw[64], smin[32], srep[32], sgrid[128];
  snprintf(sbw, sizeof sbw, "%.17g", bw);
  snprintf(smin, sizeof smin, "%g", g_to.min_s);
  snprintf(srep, sizeof srep, "%d", g_to.repeats);
  snprintf(sgrid, sizeof sgrid, "--grid=%s", grid);
  char *argv[16];
  int a = 0;
  argv[a++] = g_python;
  argv[a++] = g_peer;
  argv[a++] = (char *)npy;
  argv[a++] = sgrid;
  argv[a++] = "--tool";
  argv[a++] = (char *)tool;
  if (bw > 0) argv[a++] = "--bw", argv[a++] = sbw;
  argv[a++] = "--min-seconds", argv[a++] = smin;
  argv[a++] = "--repeats", argv[a++] = srep;
  if (!exact) argv[a++] = "--no-exact";
  argv[a] = NULL;
  static char out[8192];
  bu_proc r = bu_run(argv, out, sizeof out, 0);
  if (r.rc == 3 || r.rc == 127) {
    snprintf(g_peer_note, sizeof g_peer_note,
             "peers skipped: %s cannot import KDEpy/fastkde (tools/bench.sh fast sets up a "
             "virtual environment with them; or set GFI_PEER_PYTHON)", g_python);
    g_have_peer = 0;
    return -1;
  }
  if (r.rc != 0) {
    printf("  note: peer %s failed (exit %d)\n", tool, r.rc);
    return -1;
  }
  *sec = bu_kv(out, "seconds");
  *err = bu_kv(out, "rel_err");
  *util = bu_kv(out, "cpu_util");
  *points = (long)bu_kv(out, "points");
  char v[64], nv[64], pv[64];
  if (!strcmp(tool, "kdepy")) {
    bu_kv_str(out, "kdepy_version", v, sizeof v);
    bu_kv_str(out, "numpy_version", nv, sizeof nv);
    bu_kv_str(out, "python_version", pv, sizeof pv);
    if (!g_peer_versions[0])
      snprintf(g_peer_versions, sizeof g_peer_versions, "KDEpy %s, numpy %s, python %s", v, nv, pv);
  } else if (!strstr(g_peer_versions, "fastKDE")) {
    bu_kv_str(out, "fastkde_version", v, sizeof v);
    size_t L = strlen(g_peer_versions);
    snprintf(g_peer_versions + L, sizeof g_peer_versions - L, ", fastKDE %s", v);
  }
  return isfinite(*sec) ? 0 : -1;
}

/* Whole process, best of `repeats` runs: wall seconds, its CPU seconds (user
 * + system) and peak RSS (MiB). */
static int whole(char *const argv[], double *sec, double *cpu, double *rss) {
  *sec = INFINITY;
  *cpu = *rss = NAN;
  for (int r = 0; r < g_to.repeats; r++) {
    static char out[4096];
    bu_proc p = bu_run(argv, out, sizeof out, 1);
    if (p.rc != 0) {
      printf("  note: %s exited with %d: %.300s\n", argv[0], p.rc, out);
      return -1;
    }
    if (p.wall < *sec) *sec = p.wall, *cpu = p.cpu, *rss = p.rss_mib;
  }
  return 0;
}

/* Does `gfi density --help` mention every option in opts (NULL-ended)? */
static int cli_has(const char *cmd, const char *const *opts) {
  char *argv[] = {g_gfi, (char *)cmd, "--help", NULL};
  static char out[32768];
  bu_proc p = bu_run(argv, out, sizeof out, 1);
  if (p.rc != 0) return 0;
  for (int i = 0; opts[i]; i++)
    if (!strstr(out, opts[i])) return 0;
  return 1;
}

/* ---------------------------------------------------------------- parts */

static char g_hdr[4096];

static FILE *open_dat(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) die(path, 0);
  for (char *line = g_hdr; *line;) {
    size_t L = strcspn(line, "\n");
    fprintf(f, "# %.*s\n", (int)L, line);
    line += L + (line[L] == '\n');
  }
  printf("  (table %s)\n", path);
  return f;
}

/* Correctness failures (not goals): bits that depend on the thread count, an
 * error above the requested tolerance, a whole process whose grid differs
 * from this process's. --smoke exits 1 on any of them. */
static int g_mismatch = 0, g_wrong = 0;

static void part_scatter(const char *outdir, size_t N, size_t M, int *goal_met, double *worst) {
  printf("\n== scatter: fast vs direct, N = %zu, M = %zu scattered standard-normal queries, "
         "tol %.0e\n", N, M, TOL_MAIN);
  FILE *f = open_dat(outdir, "fast_scatter.dat");
  fprintf(f, "# D N M R tol fast_s direct_s direct_subset speedup rel_err fast_busy direct_busy\n");
  printf("%2s %9s %7s %8s %10s %12s %8s %9s %10s  %s\n", "D", "N", "M", "R", "fast_s",
         "direct_s", "subset", "speedup", "rel_err", "cores busy fast/direct");
  *goal_met = 1;
  *worst = INFINITY;
  for (size_t D = 1; D <= 2; D++) {
    double R;
    smoothing(D, (double)N, &R, NULL);
    double *x = normal_points(N, D, 10 + D), *q = normal_points(M, D, 20 + D);
    double *fast = xmalloc(M, sizeof *fast), *ref = xmalloc(M, sizeof *ref);
    size_t *idx = xmalloc(M, sizeof *idx), msub;
    double uf, ud;
    double tf = time_full(N, D, x, R, GFI_METHOD_FAST, TOL_MAIN, g_to.nthreads, M, q, NULL, fast, &uf);
    /* Bits must not depend on the thread count. */
    if (D == 1) {
      double *one = xmalloc(M, sizeof *one);
      plan_eval(N, D, x, R, GFI_METHOD_FAST, TOL_MAIN, 1, M, q, NULL, one, NULL);
      if (memcmp(one, fast, M * sizeof *one)) g_mismatch = 1;
      free(one);
    }
    double td = time_direct_scaled(N, D, x, R, M, q, idx, ref, &msub, &ud);
    double *fs = xmalloc(msub, sizeof *fs);
    for (size_t i = 0; i < msub; i++) fs[i] = fast[idx[i]];
    double e = rel_err(msub, fs, ref), sp = td / tf;
    printf("%2zu %9zu %7zu %8.4g %10.4g %12.4g %8zu %8.1fx %10.2e  %.2f/%.2f\n", D, N, M, R, tf,
           td, msub, sp, e, uf, ud);
    fprintf(f, "%zu %zu %zu %.6g %.1e %.6e %.6e %zu %.6g %.6e %.3f %.3f\n", D, N, M, R, TOL_MAIN,
            tf, td, msub, sp, e, uf, ud);
    char rt[256];
    route_text(rt, sizeof rt);
    printf("   D = %zu: %s\n", D, rt);
    if (!(e <= TOL_MAIN)) g_wrong = 1;
    if (!(sp >= GOAL_SCATTER)) *goal_met = 0;
    if (sp < *worst) *worst = sp;
    free(fs);
    free(x), free(q), free(fast), free(ref), free(idx);
  }
  printf("  direct_s: the direct sum timed on an evenly spread subset of 'subset' queries and "
         "scaled by M/subset (plan time added once); rel_err = max |fast - direct| / max |direct| "
         "over that subset\n");
  fclose(f);
}

/* max relative difference of a whole process's .npy grid (G values, or G rows
 * x1..xD density) from this process's fast values; NAN when unreadable. */
static double out_vs(const char *path, size_t G, size_t D, const double *fast) {
  size_t nv = 0;
  double e = NAN, *v = bu_read_npy(path, &nv);
  if (v && nv == G) {
    e = rel_err(G, v, fast);
  } else if (v && nv == G * (D + 1)) {
    for (size_t i = 0; i < G; i++) v[i] = v[i * (D + 1) + D];
    e = rel_err(G, v, fast);
  }
  free(v);
  return e;
}

typedef struct {
  double fast_s, direct_s, err, kdepy_s, kdepy_err, fastkde_s;
  double gfi_whole, kdepy_whole, fastkde_whole, gfi_rss, kdepy_rss, fastkde_rss;
  double gfi_cpu, kdepy_cpu, fastkde_cpu;
  double cli_vs_lib;
  double gauss_s, gauss_err, gauss_whole, gauss_cpu, gauss_rss; /* gfi's Gaussian KDE, fast route */
} grid_row;

/* tol buys speed on the grid case, and gfi at KDEpy's accuracy: the fast
 * route at tol 1e-3 .. 1e-13 (compute time, error against the direct sum on
 * the subset idx, the reported bound, the NUFFT tolerance), then at tol =
 * KDEpy's own measured error, with the ratios to KDEpy's computation time. */
static void grid_tol_curve(FILE *fc, size_t D, size_t N, const double *x, double R, size_t G,
                           const double *g, const gridspec *gs, const size_t *idx, size_t msub,
                           const double *ref, double kdepy_s, double kdepy_err) {
  static const double tols[] = {1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13};
  double *fast = xmalloc(G, sizeof *fast), *fs = xmalloc(msub ? msub : 1, sizeof *fs);
  printf("    tol curve          %8s %10s %10s %10s %10s %8s %8s\n", "tol", "fast_s", "rel_err", "bound",
         "nufft_tol", "nodes", "cells");
  double t10 = NAN, t3 = NAN;
  for (size_t t = 0; t < sizeof tols / sizeof tols[0]; t++) {
    double s = time_full(N, D, x, R, GFI_METHOD_FAST, tols[t], g_to.nthreads, G, g,
                         GFI_HAVE_FAST_INFO ? gs : NULL, fast, NULL);
    for (size_t i = 0; i < msub; i++) fs[i] = fast[idx[i]];
    double e = rel_err(msub, fs, ref), nt = NAN;
#if GFI_HAVE_FAST_INFO
    if (g_info_ok) nt = g_info.nufft_tol;
#endif
    if (!(e <= tols[t])) g_wrong = 1;
    if (tols[t] == 1e-10) t10 = s;
    if (tols[t] == 1e-3) t3 = s;
    printf("                       %8.0e %10.4g %10.2e %10.2e %10.2e %8zu %8zu%s\n", tols[t], s, e,
           info_bound(), nt, info_nodes(), info_cells(), e <= tols[t] ? "" : "  ERROR ABOVE TOL");
    fprintf(fc, "%zu %zu %.1e %.6e %.6e %.6e %.6e %zu %zu\n", D, N, tols[t], s, e, info_bound(), nt,
            info_nodes(), info_cells());
  }
  printf("    tol buys speed     time at tol 1e-3 / time at 1e-10: %.2f\n", t3 / t10);
  if (isfinite(kdepy_err) && kdepy_err > 0 && kdepy_err < 1) {
    double s = time_full(N, D, x, R, GFI_METHOD_FAST, kdepy_err, g_to.nthreads, G, g,
                         GFI_HAVE_FAST_INFO ? gs : NULL, fast, NULL);
    for (size_t i = 0; i < msub; i++) fs[i] = fast[idx[i]];
    double e = rel_err(msub, fs, ref);
    printf("    matched accuracy   gfi at tol = KDEpy's error %.2e: %.4g s (error %.2e); KDEpy "
           "%.4g s: gfi/KDEpy %.2f (goal < 1); at tol 1e-10 gfi/KDEpy %.2f (goal <= 3)\n",
           kdepy_err, s, e, kdepy_s, s / kdepy_s, t10 / kdepy_s);
    fprintf(fc, "# matched D %zu: kdepy_err %.3e gfi_s %.6e gfi_err %.3e kdepy_s %.6e ratio %.4f "
                "ratio_1e-10 %.4f\n", D, kdepy_err, s, e, kdepy_s, s / kdepy_s, t10 / kdepy_s);
  } else {
    printf("    matched accuracy   (no KDEpy in this run)\n");
  }
  fprintf(fc, "\n\n");
  free(fast), free(fs);
}

static void part_grid(const char *outdir, size_t N, int *goal_met, double *worst_ratio,
                      double *worst_err) {
  printf("\n== grid: density on a regular grid, N = %zu standard-normal points, tol %.0e\n", N,
         TOL_MAIN);
  static const char *const need[] = {"--grid", "--method", "--tol", NULL};
  int cli_ok = cli_has("density", need);
  int cli_out = 0;
  if (cli_ok) {
    static const char *const out_opt[] = {"--out", NULL};
    cli_out = cli_has("density", out_opt);
  } else if (GFI_HAVE_FAST_INFO) {
    printf("  note: %s density has no --grid/--method/--tol: gfi's whole process is timed as "
           "`bench_fast --whole-grid` (start, load the .npy, plan + gfi_density_eval_grid, write "
           "the .npy, exit)\n", g_gfi);
  } else {
    printf("  note: %s density has no --grid/--method/--tol: gfi's whole-process timing "
           "skipped\n", g_gfi);
  }
  FILE *f = open_dat(outdir, "fast_grid.dat");
  fprintf(f, "# D N grid_points R h fast_s direct_s rel_err kdepy_s kdepy_rel_err fastkde_s "
             "gfi_whole_s kdepy_whole_s fastkde_whole_s gfi_rss_mib kdepy_rss_mib "
             "fastkde_rss_mib gfi_whole_cpu_s kdepy_whole_cpu_s fastkde_whole_cpu_s "
             "gauss_fast_s gauss_rel_err gauss_whole_s gauss_whole_cpu_s gauss_rss_mib\n");
  FILE *fc = open_dat(outdir, "fast_grid_tol.dat");
  fprintf(fc, "# D N tol fast_s rel_err bound nufft_tol nodes cells   (cells: the binned route's lattice on axis 0, 0 for the NUFFT route; rel_err = max |fast - direct| / "
              "max |direct| on a subset of the grid; '# matched' lines: gfi at tol = KDEpy's error)\n");
  *goal_met = 1;
  *worst_ratio = INFINITY;
  *worst_err = 0;
  char dir[] = "/tmp/gfi-bench-fast-XXXXXX";
  if (!mkdtemp(dir)) die("mkdtemp", 0);
  for (size_t D = 1; D <= 2; D++) {
    size_t n = D == 1 ? 1024 : 256, G = D == 1 ? n : n * n;
    if (N < 100000 && D == 2) n = 64, G = n * n;
    double R, h;
    smoothing(D, (double)N, &R, &h);
    double *x = normal_points(N, D, 30 + D);
    double L = ceil(2.0 * max_abs(N * D, x)) / 2.0 + 0.5;
    char grid[128];
    snprintf(grid, sizeof grid, "%.17g:%.17g:%zu", -L, L, n);
    double *g = xmalloc(G, D * sizeof *g);
    for (size_t i = 0; i < G; i++) {
      size_t a = D == 1 ? i : i / n, b = i % n;
      g[i * D] = -L + 2.0 * L * (double)a / (double)(n - 1);
      if (D == 2) g[i * D + 1] = -L + 2.0 * L * (double)b / (double)(n - 1);
    }
    const gridspec gs = {-L, L, n};
    grid_row r;
    for (double *p = &r.fast_s; p <= &r.gauss_rss; p++) *p = NAN;
    double *fast = xmalloc(G, sizeof *fast), *ref = xmalloc(G, sizeof *ref);
    size_t *idx = xmalloc(G, sizeof *idx), msub;
    double uf, ud;
    r.fast_s = time_full(N, D, x, R, GFI_METHOD_FAST, TOL_MAIN, g_to.nthreads, G, g,
                         GFI_HAVE_FAST_INFO ? &gs : NULL, fast, &uf);
    r.direct_s = time_direct_scaled(N, D, x, R, G, g, idx, ref, &msub, &ud);
    {
      double *fs = xmalloc(msub, sizeof *fs);
      for (size_t i = 0; i < msub; i++) fs[i] = fast[idx[i]];
      r.err = rel_err(msub, fs, ref);
      free(fs);
    }
    /* gfi's Gaussian KDE with KDEpy's bandwidth: like for like with FFTKDE */
    gfi_fast_info ginfo;
    memset(&ginfo, 0, sizeof ginfo);
    {
      double *qs = xmalloc(msub, D * sizeof *qs), *gref = xmalloc(msub, sizeof *gref);
      double *gf = xmalloc(G, sizeof *gf), *fs = xmalloc(msub, sizeof *fs);
      for (size_t i = 0; i < msub; i++) memcpy(qs + i * D, g + idx[i] * D, D * sizeof *qs);
      r.gauss_s = gauss_grid(N, D, x, h, &gs, gf, msub, qs, gref, &ginfo);
      for (size_t i = 0; i < msub; i++) fs[i] = gf[idx[i]];
      if (isfinite(r.gauss_s)) r.gauss_err = rel_err(msub, fs, gref);
      free(qs), free(gref), free(gf), free(fs);
    }
    char npy[4200], out_gfi[4200], out_peer[4200];
    snprintf(npy, sizeof npy, "%s/data_D%zu.npy", dir, D);
    snprintf(out_gfi, sizeof out_gfi, "%s/gfi_D%zu.npy", dir, D);
    snprintf(out_peer, sizeof out_peer, "%s/peer_D%zu.npy", dir, D);
    if (bu_write_npy(npy, x, N, D) != 0) die(npy, 0);
    double u;
    long pts = 0;
    peer_time("kdepy", npy, grid, h, 1, &r.kdepy_s, &r.kdepy_err, &u, &pts);
    long fk_pts = 0;
    peer_time("fastkde", npy, grid, 0, 0, &r.fastkde_s, &u, &u, &fk_pts);
    /* Whole processes. */
    char sR[64], sD[16], stol[32], sgrid[160], sgfi_grid[160];
    snprintf(sR, sizeof sR, "%.17g", R);
    snprintf(sD, sizeof sD, "%zu", D);
    snprintf(stol, sizeof stol, "%g", TOL_MAIN);
    snprintf(sgrid, sizeof sgrid, "--grid=%s", grid);
    snprintf(sgfi_grid, sizeof sgfi_grid, "--grid=%s", grid);
    if (cli_ok) {
      char *argv[24];
      int a = 0;
      argv[a++] = g_gfi, argv[a++] = "density", argv[a++] = "--data", argv[a++] = npy;
      argv[a++] = "--dim", argv[a++] = sD, argv[a++] = "--phi", argv[a++] = "pow:4";
      argv[a++] = "--R", argv[a++] = sR, argv[a++] = sgfi_grid;
      argv[a++] = "--method", argv[a++] = "fast", argv[a++] = "--tol", argv[a++] = stol;
      if (cli_out) argv[a++] = "--out", argv[a++] = out_gfi;
      argv[a] = NULL;
      if (whole(argv, &r.gfi_whole, &r.gfi_cpu, &r.gfi_rss) == 0 && cli_out) {
        r.cli_vs_lib = out_vs(out_gfi, G, D, fast);
      }
      if (isfinite(r.gauss_s)) {
        char sh[64];
        snprintf(sh, sizeof sh, "%.17g", h);
        a = 0;
        argv[a++] = g_gfi, argv[a++] = "density", argv[a++] = "--data", argv[a++] = npy;
        argv[a++] = "--dim", argv[a++] = sD, argv[a++] = "--kernel", argv[a++] = "gauss";
        argv[a++] = "--bandwidth", argv[a++] = sh, argv[a++] = sgfi_grid;
        argv[a++] = "--method", argv[a++] = "fast", argv[a++] = "--tol", argv[a++] = stol;
        if (cli_out) argv[a++] = "--out", argv[a++] = out_gfi;
        argv[a] = NULL;
        whole(argv, &r.gauss_whole, &r.gauss_cpu, &r.gauss_rss);
      }
    } else if (GFI_HAVE_FAST_INFO) {
      char self[4096], sn[32], slo[64], shi[64];
      ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
      if (len <= 0) die("readlink /proc/self/exe", 0);
      self[len] = 0;
      snprintf(sn, sizeof sn, "%zu", n);
      snprintf(slo, sizeof slo, "%.17g", -L);
      snprintf(shi, sizeof shi, "%.17g", L);
      char *argv[] = {self, "--whole-grid", npy, sD, sR, slo, shi, sn, out_gfi, NULL};
      if (whole(argv, &r.gfi_whole, &r.gfi_cpu, &r.gfi_rss) == 0) {
        r.cli_vs_lib = out_vs(out_gfi, G, D, fast);
      }
    }
    if (g_have_peer) {
      char *argv[] = {g_python, g_peer, npy, sgrid, "--tool", "kdepy", "--bw", NULL, "--once",
                      "--out", out_peer, NULL};
      char sbw[64];
      snprintf(sbw, sizeof sbw, "%.17g", h);
      argv[7] = sbw;
      whole(argv, &r.kdepy_whole, &r.kdepy_cpu, &r.kdepy_rss);
      char *argv2[] = {g_python, g_peer, npy, sgrid, "--tool", "fastkde", "--once", "--out",
                       out_peer, NULL};
      whole(argv2, &r.fastkde_whole, &r.fastkde_cpu, &r.fastkde_rss);
    }
    remove(npy), remove(out_gfi), remove(out_peer);

    printf("  D = %zu: grid %zu^%zu on [-%g, %g], R = %.4g (phi = z^4), KDEpy/fastKDE data: same "
           ".npy file; Gaussian h = %.4g\n", D, n, D, L, L, R, h);
    char rt[256];
    route_text(rt, sizeof rt);
    printf("    gfi fast           %s%s\n", rt,
           GFI_HAVE_FAST_INFO ? "; gfi_density_eval_grid" : "; grid points as scattered queries");
    printf("    computation alone  gfi fast %.4g s, gfi direct %.4g s (subset %zu of %zu grid "
           "points, scaled), KDEpy %.4g s, fastKDE %.4g s (its own grid: %ld points)\n",
           r.fast_s, r.direct_s, msub, G, r.kdepy_s, r.fastkde_s, fk_pts);
    printf("    ratios             KDEpy/gfi-fast %.2f, direct/fast %.1f, fastKDE/gfi-fast %.2f\n",
           r.kdepy_s / r.fast_s, r.direct_s / r.fast_s, r.fastkde_s / r.fast_s);
    printf("    whole process      gfi %.4g s (%.0f MiB), KDEpy %.4g s (%.0f MiB), fastKDE %.4g s "
           "(%.0f MiB); KDEpy/gfi %.2f\n", r.gfi_whole, r.gfi_rss, r.kdepy_whole, r.kdepy_rss,
           r.fastkde_whole, r.fastkde_rss, r.kdepy_whole / r.gfi_whole);
    printf("    whole process CPU  gfi %.4g s, KDEpy %.4g s, fastKDE %.4g s (user + system of the "
           "same runs; less sensitive to other load than wall time); KDEpy/gfi %.2f\n",
           r.gfi_cpu, r.kdepy_cpu, r.fastkde_cpu, r.kdepy_cpu / r.gfi_cpu);
    printf("    error vs own exact gfi fast %.2e (vs gfi direct, subset), KDEpy %.2e (vs the exact "
           "Gaussian KDE, full grid)%s\n", r.err, r.kdepy_err,
           isfinite(r.cli_vs_lib) ? "" : "");
    if (isfinite(r.cli_vs_lib))
      printf("    check              gfi whole process's grid vs this process's fast values: max "
             "rel diff %.2e\n", r.cli_vs_lib);
    if (isfinite(r.gauss_s)) {
      printf("    gfi Gaussian KDE   (h = %.4g as KDEpy, fast route: %zu frequency nodes, bound %.2g) "
             "computation %.4g s (KDEpy/gfi %.2f), whole process %.4g s, CPU %.4g s, %.0f MiB "
             "(KDEpy/gfi wall %.2f, CPU %.2f); error vs the exact Gaussian KDE: gfi %.2e, KDEpy "
             "%.2e\n", h, ginfo.nodes_total, ginfo.bound, r.gauss_s, r.kdepy_s / r.gauss_s,
             r.gauss_whole, r.gauss_cpu, r.gauss_rss, r.kdepy_whole / r.gauss_whole,
             r.kdepy_cpu / r.gauss_cpu, r.gauss_err, r.kdepy_err);
      if (!(r.gauss_err <= TOL_MAIN)) g_wrong = 1;
    }
    fprintf(f, "%zu %zu %zu %.6g %.6g %.6e %.6e %.6e %.6e %.6e %.6e %.6e %.6e %.6e %.1f %.1f "
               "%.1f %.6e %.6e %.6e %.6e %.6e %.6e %.6e %.1f\n", D, N, G, R, h, r.fast_s,
            r.direct_s, r.err, r.kdepy_s, r.kdepy_err, r.fastkde_s, r.gfi_whole, r.kdepy_whole,
            r.fastkde_whole, r.gfi_rss, r.kdepy_rss, r.fastkde_rss, r.gfi_cpu, r.kdepy_cpu,
            r.fastkde_cpu, r.gauss_s, r.gauss_err, r.gauss_whole, r.gauss_cpu, r.gauss_rss);
    grid_tol_curve(fc, D, N, x, R, G, g, &gs, idx, msub, ref, r.kdepy_s, r.kdepy_err);
    if (!(r.err <= TOL_MAIN) || (isfinite(r.cli_vs_lib) && r.cli_vs_lib > 1e-12)) g_wrong = 1;
    double ratio = r.kdepy_whole / r.gfi_whole;
    if (!(ratio >= GOAL_WHOLE) || !(r.err < GOAL_ERR)) *goal_met = 0;
    if (!(ratio >= *worst_ratio)) *worst_ratio = ratio;
    if (!(r.err <= *worst_err)) *worst_err = r.err;
    free(x), free(g), free(fast), free(ref), free(idx);
  }
  rmdir(dir);
  fclose(f);
  fclose(fc);
}

static void part_scaling(const char *outdir, size_t nmax, size_t ndirect, size_t npeer) {
  const size_t G = 1024;
  double R, h;
  smoothing(1, 1e6, &R, &h);
  const double L = 7.0;
  printf("\n== scaling: 1-D grid of %zu points on [-%g, %g], R = %.4g fixed (the MISE-optimal "
         "radius at N = 10^6), tol %.0e; KDEpy h = %.4g\n", G, L, L, R, TOL_MAIN, h);
  FILE *f = open_dat(outdir, "fast_scaling.dat");
  fprintf(f, "# N fast_s direct_s kdepy_s fast_first_s   (NaN: not run at this N; direct_s "
             "subset-scaled; fast_first_s: the first of the fast calls at this N)\n");
  double *g = xmalloc(G, sizeof *g);
  for (size_t i = 0; i < G; i++) g[i] = -L + 2.0 * L * (double)i / (double)(G - 1);
  const gridspec gs = {-L, L, G};
  double *out = xmalloc(G, sizeof *out), *ref = xmalloc(G, sizeof *ref);
  size_t *idx = xmalloc(G, sizeof *idx);
  double Ns[16], tf[16], td[16], tk[16];
  size_t nn = 0;
  char dir[] = "/tmp/gfi-bench-fast-XXXXXX";
  if (!mkdtemp(dir)) die("mkdtemp", 0);
  printf("%11s %11s %11s %11s %11s\n", "N", "fast_s", "direct_s", "kdepy_s", "fast_first");
  for (size_t N = 1000; N <= nmax && nn < 16; N *= 10) {
    double *x = normal_points(N, 1, 40);
    for (size_t i = 0; i < N; i++) /* KDEpy needs the grid to hold the data */
      if (fabs(x[i]) > L - 0.5) x[i] = copysign(L - 0.5, x[i]);
    Ns[nn] = (double)N;
    tf[nn] = time_full(N, 1, x, R, GFI_METHOD_FAST, TOL_MAIN, g_to.nthreads, G, g,
                       GFI_HAVE_FAST_INFO ? &gs : NULL, out, NULL);
    double first = g_first_s;
    td[nn] = tk[nn] = NAN;
    if (N <= ndirect) {
      size_t msub;
      td[nn] = time_direct_scaled(N, 1, x, R, G, g, idx, ref, &msub, NULL);
    }
    if (N <= npeer && g_have_peer) {
      char npy[4200], grid[128];
      snprintf(npy, sizeof npy, "%s/data.npy", dir);
      snprintf(grid, sizeof grid, "%g:%g:%zu", -L, L, G);
      if (bu_write_npy(npy, x, N, 1) != 0) die(npy, 0);
      double e, u;
      long pts;
      if (peer_time("kdepy", npy, grid, h, 0, &tk[nn], &e, &u, &pts) != 0) tk[nn] = NAN;
      remove(npy);
    }
    char rt[256];
    route_text(rt, sizeof rt);
    printf("%11zu %11.4g %11.4g %11.4g %11.4g   %s\n", N, tf[nn], td[nn], tk[nn], first, rt);
    fprintf(f, "%zu %.6e %.6e %.6e %.6e\n", N, tf[nn], td[nn], tk[nn], first);
    fflush(f);
    nn++;
    free(x);
    if (N > SIZE_MAX / 10) break;
  }
  rmdir(dir);
  double sf = bu_loglog_slope(nn, Ns, tf, 1e5), sd = bu_loglog_slope(nn, Ns, td, 1e4),
         sk = bu_loglog_slope(nn, Ns, tk, 1e5);
  printf("  slope of log time against log N: fast %.3f (N >= 1e5), direct %.3f (N >= 1e4), "
         "KDEpy %.3f (N >= 1e5)\n", sf, sd, sk);
  fprintf(f, "# slope fast %.4f (N >= 1e5) direct %.4f (N >= 1e4) kdepy %.4f (N >= 1e5)\n", sf, sd,
          sk);
  fclose(f);
  free(g), free(out), free(ref), free(idx);
}

static void part_tol(const char *outdir, size_t N, size_t M, size_t Dmax) {
  static const double tols[] = {1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12,
                                1e-13};
  const size_t nt = sizeof tols / sizeof tols[0];
  printf("\n== tol: error against the requested tolerance, N = %zu, M = %zu scattered queries\n",
         N, M);
  FILE *f = open_dat(outdir, "fast_tol.dat");
  fprintf(f, "# D tol rel_err fast_s nodes bound   (rel_err = max |fast - direct| / max |direct| "
             "over all M; nodes and bound: what the route reported, 0 and nan when it did not)\n");
  printf("%2s %8s %10s %10s %10s %7s %8s %10s\n", "D", "tol", "rel_err", "err/tol", "fast_s", "route",
         "nodes", "bound");
  int bad = 0;
  for (size_t D = 1; D <= Dmax; D++) {
    double R;
    smoothing(D, (double)N, &R, NULL);
    double *x = normal_points(N, D, 50 + D), *q = normal_points(M, D, 60 + D);
    double *ref = xmalloc(M, sizeof *ref), *fast = xmalloc(M, sizeof *fast);
    plan_eval(N, D, x, R, GFI_METHOD_DIRECT, 0, g_to.nthreads, M, q, NULL, ref, NULL);
    for (size_t t = 0; t < nt; t++) {
      double s = time_full(N, D, x, R, GFI_METHOD_FAST, tols[t], g_to.nthreads, M, q, NULL, fast,
                               NULL);
      double e = rel_err(M, fast, ref);
      int over = !(e <= tols[t]);
      bad |= over;
      g_wrong |= over;
      printf("%2zu %8.0e %10.2e %10.3f %10.4g %7s %8zu %10.2e %s\n", D, tols[t], e, e / tols[t], s,
             route_name(), info_nodes(), info_bound(), over ? "ERROR ABOVE TOL" : "");
      fprintf(f, "%zu %.1e %.6e %.6e %zu %.6e\n", D, tols[t], e, s, info_nodes(), info_bound());
    }
    fprintf(f, "\n\n");
    free(x), free(q), free(ref), free(fast);
  }
  printf("  %s\n", bad ? "WARNING: some errors exceed the requested tolerance"
                       : "every error is within its requested tolerance");
  fclose(f);
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f) {
  fprintf(f, "usage: bench_fast [--quick | --smoke] [--parts scatter,grid,scaling,tol] "
             "[--outdir DIR]\n"
             "                  [--nmax N] [--python PATH] [--gfi PATH] [--threads T]\n"
             "                  [--min-seconds S] [--repeats K] [--direct-seconds S]\n");
}

/* bench_fast --whole-grid DATA.npy D R LO HI n OUT.npy: one gfi process that
 * loads the data, evaluates the fast route (tol 1e-10, phi = z^4) on the grid
 * and writes the n^D values; what the grid part times as gfi's whole process
 * while the CLI has no --grid. */
static int whole_grid(char **a) {
#if GFI_HAVE_FAST_INFO
  size_t nv, D = (size_t)atoi(a[1]), n = (size_t)atoi(a[5]);
  double R = atof(a[2]), lo = atof(a[3]), hi = atof(a[4]);
  if (D < 1 || D > 3 || n < 1) return 2;
  double *x = bu_read_npy(a[0], &nv);
  if (!x || nv % D) return 2;
  size_t G = 1;
  for (size_t j = 0; j < D; j++) {
    if (G > SIZE_MAX / n) return 2;
    G *= n;
  }
  double *out = xmalloc(G, sizeof *out);
  const gridspec gs = {lo, hi, n};
  plan_eval(nv / D, D, x, R, GFI_METHOD_FAST, TOL_MAIN, g_to.nthreads, 0, NULL, &gs, out, NULL);
  if (bu_write_npy(a[6], out, G, 0) != 0) return 2;
  free(x);
  free(out);
  return 0;
#else
  (void)a;
  return 2;
#endif
}

int main(int argc, char **argv) {
  if (argc == 9 && !strcmp(argv[1], "--whole-grid")) {
    int st = gfi_kernel_pow(&g_k, KERNEL_L);
    if (st) die("gfi_kernel_pow", st);
    return whole_grid(argv + 2);
  }
  int quick = 0, smoke = 0;
  const char *parts = "scatter,grid,scaling,tol", *outdir = ".";
  double nmax = 0;
  const char *py = getenv("GFI_PEER_PYTHON"), *cli = getenv("GFI_CLI");
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--quick")) quick = 1;
    else if (!strcmp(argv[a], "--smoke")) smoke = 1;
    else if (!strcmp(argv[a], "--parts") && a + 1 < argc) parts = argv[++a];
    else if (!strcmp(argv[a], "--outdir") && a + 1 < argc) outdir = argv[++a];
    else if (!strcmp(argv[a], "--nmax") && a + 1 < argc) nmax = atof(argv[++a]);
    else if (!strcmp(argv[a], "--python") && a + 1 < argc) py = argv[++a];
    else if (!strcmp(argv[a], "--gfi") && a + 1 < argc) cli = argv[++a];
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc) g_to.nthreads = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--min-seconds") && a + 1 < argc) g_to.min_s = atof(argv[++a]);
    else if (!strcmp(argv[a], "--repeats") && a + 1 < argc) g_to.repeats = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--direct-seconds") && a + 1 < argc) g_to.direct_s = atof(argv[++a]);
    else if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (g_to.repeats < 1) g_to.repeats = 1;
  if (smoke) g_to.min_s = 0, g_to.repeats = 1, g_to.direct_s = 0.05;
  const char *root = getenv("GFI_SOURCE_ROOT");
  if (!root || !*root) root = GFI_SOURCE_ROOT;
  snprintf(g_python, sizeof g_python, "%s", py && *py ? py : "/usr/bin/python3");
  snprintf(g_peer, sizeof g_peer, "%s/bench/kdepy_peer.py", root);
  snprintf(g_gfi, sizeof g_gfi, "%s", cli && *cli ? cli : GFI_BUILD_ROOT "/cli/gfi");
  if (access(g_python, X_OK) != 0 || access(g_peer, R_OK) != 0) {
    snprintf(g_peer_note, sizeof g_peer_note, "peers skipped: %s or %s not found", g_python,
             g_peer);
    g_have_peer = 0;
  }
  mkdir(outdir, 0777);
  int st = gfi_kernel_pow(&g_k, KERNEL_L);
  if (st) die("gfi_kernel_pow", st);

  const size_t N = smoke ? 3000 : quick ? 100000 : 1000000;
  const size_t M = smoke ? 200 : quick ? 3000 : 30000;
  size_t nm = nmax >= 1000 ? (size_t)nmax : smoke ? 10000 : quick ? 1000000 : 100000000;

  char model[256], host[256] = "?", load0[64], date[64];
  bu_cpu_model(model, sizeof model);
  gethostname(host, sizeof host);
  host[sizeof host - 1] = 0;
  bu_loadavg(load0, sizeof load0);
  time_t tnow = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tnow));
  snprintf(g_hdr, sizeof g_hdr,
           "gfi bench_fast  (gfi %s, revision %s)\n"
           "date      %s, host %s\n"
           "cpu       %s; %ld cores online, %.1f GiB; gfi threads %d (OpenMP %s); load average "
           "at start %s\n"
           "compiler  %s; buildtype %s\n"
           "estimator phi = z^4 (Jackson), radius the MISE-optimal one for N(0, I) at each N; "
           "fast route tol %.0e unless stated\n"
           "timing    wall seconds of plan + evaluate, best of %d measurements of >= %g s "
           "(two calls when a call takes > 2 s)%s\n",
           GFI_VERSION, GFI_GIT_REVISION, date, host, model, sysconf(_SC_NPROCESSORS_ONLN),
           bu_mem_gib(), g_to.nthreads ? g_to.nthreads : gfi_threads_available(),
           gfi_have_openmp() ? "yes" : "no", load0, GFI_CC_ID, GFI_BUILDTYPE, TOL_MAIN,
           g_to.repeats, g_to.min_s, smoke ? "; --smoke" : quick ? "; --quick" : "");
  fputs(g_hdr, stdout);
  printf("peers     %s\n", g_have_peer ? g_python : g_peer_note);
  printf("gfi CLI   %s\n", g_gfi);
  fflush(stdout);
  double t0 = bu_now();

  int scatter_met = -1, grid_met = -1;
  double scatter_worst = NAN, grid_ratio = NAN, grid_err = NAN;
  if (strstr(parts, "scatter")) part_scatter(outdir, N, M, &scatter_met, &scatter_worst);
  if (strstr(parts, "grid")) part_grid(outdir, N, &grid_met, &grid_ratio, &grid_err);
  if (strstr(parts, "scaling"))
    part_scaling(outdir, nm, smoke ? 10000 : 1000000, smoke ? 10000 : quick ? 1000000 : 10000000);
  if (strstr(parts, "tol")) part_tol(outdir, smoke ? 2000 : quick ? 20000 : 100000,
                                     smoke ? 100 : 1000, smoke || quick ? 1 : 2);

  char load1[64];
  bu_loadavg(load1, sizeof load1);
  printf("\n");
  if (g_peer_versions[0]) printf("peers     %s\n", g_peer_versions);
  if (g_peer_note[0]) printf("note      %s\n", g_peer_note);
  if (strstr(parts, "scatter"))
    printf("check     fast route bits %s for 1 and %d threads (D = 1)\n",
           g_mismatch ? "DIFFER" : "identical", gfi_threads_resolve(NULL));
  if (scatter_met >= 0)
    printf("goal      fast >= %gx direct at N = %zu, M = %zu: %s (worst %.1fx)\n", GOAL_SCATTER, N,
           M, scatter_met ? "MET" : "NOT MET", scatter_worst);
  if (grid_met >= 0) {
    if (isfinite(grid_ratio))
      printf("goal      gfi fast whole process >= %gx KDEpy's with error < %.0e: %s (worst ratio "
             "%.2fx, worst gfi error %.2e)\n", GOAL_WHOLE, GOAL_ERR, grid_met ? "MET" : "NOT MET",
             grid_ratio, grid_err);
    else
      printf("goal      gfi fast whole process >= %gx KDEpy's: NOT EVALUATED (a whole-process "
             "timing is missing; see the notes above)\n", GOAL_WHOLE);
  }
  printf("elapsed   %.1f s; load average at start %s, at end %s\n", bu_now() - t0, load0, load1);
  if (g_mismatch || g_wrong)
    printf("FAILED    %s\n", g_mismatch ? "fast route bits depend on the thread count"
                                        : "an error above its tolerance, or a whole process's "
                                          "grid differs from this process's (see above)");
  return smoke && (g_mismatch || g_wrong) ? 1 : 0;
}
