/* gfi reproduce as a function (gfi_exp/reproduce.h): FourierFormer's
 * synthetic density and regression figures (appendix E.4, Figures 1 and 2)
 * for two radius policies over several seeds, a sensitivity table over R and
 * the test box, the density and regression rate checks, the FLT study and
 * every figure, with a summary beside the paper's numbers. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/resource.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gsl/gsl_cdf.h>
#include "gfi_exp/correlation.h"
#include "gfi_exp/flt_study.h"
#include "gfi_exp/rate_checks.h"
#include "gfi_exp/repro.h"
#include "gfi_exp/reproduce.h"
#include "gfi_exp/lemma1.h"

extern char **environ;

static const double SENS_R[] = {1, 2, 3, 5, 8, 13}, SENS_BOX[] = {2, 3, 5, 10}, SENS_RBOX[] = {1, 2, 3, 5};

void gfi_exp_repro_default(gfi_exp_repro_params *p) {
  memset(p, 0, sizeof *p);
  p->out = "results";
  p->seed = 1;
  p->l = 4;
  p->R = 2;
  p->model_1d = "normal";
  p->model_2d = "normal:cov=1,0.5,0.5,1";
  p->design = "normal:cov=1,0.5,0.5,1";
  p->truth = "poly:0,1,-0.5,0.2";
  p->noise = "gauss:0.5";
  p->box = 3;
  p->regress_box = 2;
  p->sens_R = SENS_R, p->nsens_R = 6;
  p->sens_box = SENS_BOX, p->nsens_box = 4;
  p->sens_regress_box = SENS_RBOX, p->nsens_regress_box = 4;
}

/* ---- one experiment (a figure) ------------------------------------------------ */

typedef struct {
  const char *key, *title, *what, *spec;
  int regress;
  size_t D, N;
  double paper;
  gfi_model *m;
  gfi_regfun *f;
  gfi_noise noise;
  double box;           /* default box */
  double *R, *boxes;    /* sensitivity lists (isotropic radii, half-widths), ascending */
  size_t nR, nbox, iFixed, iOracle, iBox;
  double Rstar, Rstar_crit;
  double fix_bias2, fix_var; /* density: exact MISE parts at the fixed radius */
  char Rstar_method[256];
  double *mse, *pmse;   /* seeds x nR x nbox */
  size_t nflagged;
  /* data-driven policy: per seed the radius chosen on that sample (LSCV or
   * leave-one-out CV) and the MSE there in the default box */
  double *Rdd, *mse_dd, *pmse_dd;
} experiment;

static void experiment_free(experiment *x) {
  gfi_model_free(x->m);
  gfi_regfun_free(x->f);
  free(x->R), free(x->boxes), free(x->mse), free(x->pmse);
  free(x->Rdd), free(x->mse_dd), free(x->pmse_dd);
  memset(x, 0, sizeof *x);
}

/* ---- the run: settings, steps, tools ------------------------------------------ */

/* The default run's budgets of the rate checks (--full: the sizes' own) */
#define REPRO_MC_NMAX 1e6
#define REPRO_RREPS 100

typedef struct {
  gfi_exp_repro_params S; /* resolved settings */
  const gfi_exp_ctx *ctx;
  gfi_exp_err *e;
  FILE *progress;
  FILE *live; /* progress within a step (count, rate, ETA): ctx->live, NULL when not a terminal */
  gfi_kernel K;
  gfi_opts opts;
  int step_no, step_total;
  char step_name[160];
  double step_t0, run_t0, step_cpu0;
  char *gnuplot, plots_dir[4096];
  experiment ex[3];
  gfi_exp_rate_row *drows, *rrows;
  size_t ndrows, nrrows;
  gfi_exp_lemma1_point l1[2]; /* Lemma 1 at x = 0 and 1.5 */
  gfi_exp_lemma1_params l1p;
  int have_l1;
  /* the density checks in depth: D = 2 and 3, Theorem 1's kernel powers, the correlation claim */
  gfi_exp_rate_row *hrows[3];  /* D = 2, D = 3, Theorem 1 for l = 3, 4, 6, 8 (1-D) */
  size_t nhrows[3];
  gfi_exp_corr_row *corr;
  size_t ncorr;
} run;

/* CPU seconds of the process (every thread), user and system */
static double cpu_now(void) {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u)) return NAN;
  return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_sec +
         1e-6 * (double)u.ru_stime.tv_usec;
}

static void step_begin(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step_begin(run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->step_name, sizeof r->step_name, fmt, ap);
  va_end(ap);
  r->step_no++;
  if (r->progress) {
    /* on a terminal the step's own progress line follows, so the name
     * stands on its own line; in a log one line per step */
    fprintf(r->progress, "[%d/%d] %s ...%s", r->step_no, r->step_total, r->step_name, r->live ? "\n" : " ");
    fflush(r->progress);
  }
  r->step_t0 = gfi_now();
  r->step_cpu0 = cpu_now();
}

/* The step's wall time and, on a machine shared with other work where the
 * wall time says little, its CPU time */
static void step_end(run *r) {
  if (!r->progress) return;
  double t = gfi_now() - r->step_t0, c = cpu_now() - r->step_cpu0;
  if (r->live)
    fprintf(r->progress, "[%d/%d] done in %.1f s, CPU %.1f s (%.0f s since the start)\n", r->step_no,
            r->step_total, t, c, gfi_now() - r->run_t0);
  else
    fprintf(r->progress, "%.1f s (CPU %.1f s)\n", t, c);
}

/* The step fails: the reason into e (with the step's name), the open
 * "[k/n] step ..." line ended; returns st. */
static int step_fail(run *r, int st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int step_fail(run *r, int st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gfi_exp_vfail(r->e, st, fmt, ap);
  va_end(ap);
  if (r->e) snprintf(r->e->step, sizeof r->e->step, "%s", r->step_name);
  if (r->progress && r->step_no > 0) fputc('\n', r->progress);
  return st;
}

/* A sub-study failed with its own message in e: name the step. */
static int step_fail_sub(run *r, int st) {
  if (r->e) {
    r->e->status = st;
    snprintf(r->e->step, sizeof r->e->step, "%s", r->step_name);
  }
  if (r->progress && r->step_no > 0) fputc('\n', r->progress);
  return st;
}

#define CHK(call, what)                                                             \
  do {                                                                              \
    int st_ = (call);                                                               \
    if (st_) return step_fail(r, st_, "%s: %s", (what), gfi_strerror(st_));         \
  } while (0)
#define CHKG(call, what)                                                            \
  do {                                                                              \
    int st_ = (call);                                                               \
    if (st_) {                                                                      \
      st = step_fail(r, st_, "%s: %s", (what), gfi_strerror(st_));                  \
      goto done;                                                                    \
    }                                                                               \
  } while (0)
#define NEEDG(ptr)                                                                  \
  do {                                                                              \
    if (!(ptr)) {                                                                   \
      st = step_fail(r, GFI_ENOMEM, "out of memory");                               \
      goto done;                                                                    \
    }                                                                               \
  } while (0)

static int path_of(run *r, char *buf, size_t n, const char *name) {
  if ((size_t)snprintf(buf, n, "%s/%s", r->S.out, name) >= n)
    return step_fail(r, GFI_EINVAL, "path too long: %s/%s", r->S.out, name);
  return GFI_OK;
}

static int out_open(run *r, FILE **f, const char *name, const char *what) {
  char path[4096];
  int st = path_of(r, path, sizeof path, name);
  if (st) return st;
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  if ((st = gfi_exp_fopen(f, path, &e))) return step_fail(r, st, "%s", e.msg);
  gfi_exp_header(*f, r->ctx);
  if (what) gfi_dat_meta(*f, "table", "%s", what);
  return GFI_OK;
}

static int out_close(run *r, FILE *f, const char *name) {
  char path[4096];
  int st = path_of(r, path, sizeof path, name);
  if (st) {
    gfi_exp_fdiscard(f);
    return st;
  }
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  if ((st = gfi_exp_fclose(f, path, &e))) return step_fail(r, st, "%s", e.msg);
  return GFI_OK;
}

static int make_dir(run *r, const char *path) {
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    return step_fail(r, GFI_EIO, "cannot create %s: %s", path, strerror(errno));
  return GFI_OK;
}

/* The last non-empty line of a log file (for failure messages). */
static void last_line(const char *path, char *buf, size_t n) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (!line[0]) continue;
    size_t L = strlen(line) < n - 1 ? strlen(line) : n - 1;
    memcpy(buf, line, L);
    buf[L] = '\0';
  }
  fclose(f);
}

/* Run argv[0] (a path) with stdin from /dev/null and stdout and stderr into
 * log; fail the step on a non-zero exit, naming the program and the log's
 * last line. */
static int run_child(run *r, char *const argv[], const char *log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) return step_fail(r, GFI_EIO, "cannot run %s: %s", argv[0], strerror(rc));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return step_fail(r, GFI_EIO, "waiting for %s: %s", argv[0], strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return GFI_OK;
  char tail[512];
  last_line(log, tail, sizeof tail);
  if (WIFEXITED(status))
    return step_fail(r, GFI_EIO, "%s exited with status %d (log %s): %s", argv[0], WEXITSTATUS(status), log, tail);
  return step_fail(r, GFI_EIO, "%s killed by signal %d (log %s)", argv[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                   log);
}

/* prog on PATH (malloc'ed), or NULL. */
static char *find_on_path(const char *prog) {
  const char *path = getenv("PATH");
  if (!path) return NULL;
  char *copy = strdup(path), *save = NULL, *found = NULL;
  if (!copy) return NULL;
  for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", *d ? d : ".", prog);
    struct stat sb;
    if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) && access(buf, X_OK) == 0) found = strdup(buf);
  }
  free(copy);
  return found;
}

static int has_script(const char *dir) {
  char p[4200];
  if (!dir || !*dir) return 0;
  snprintf(p, sizeof p, "%s/fourierformer_fig1a.gp", dir);
  return access(p, R_OK) == 0;
}

static int locate_tools(run *r) {
  r->gnuplot = find_on_path("gnuplot");
  if (!r->gnuplot)
    return gfi_exp_fail(r->e, GFI_EIO, "gnuplot not found on PATH: the figures need it "
                        "(Debian: apt-get install gnuplot-nox; tools/main.sh installs it)");
  char looked[2048] = "";
  for (int i = 0; i < 4; i++) {
    const char *d = r->S.plots_dirs[i];
    if (!d || !*d) continue;
    if (has_script(d)) {
      snprintf(r->plots_dir, sizeof r->plots_dir, "%s", d);
      return GFI_OK;
    }
    size_t L = strlen(looked);
    snprintf(looked + L, sizeof looked - L, "%s'%s'", L ? ", " : "", d);
  }
  return gfi_exp_fail(r->e, GFI_EIO, "plot scripts not found (set GFI_PLOTS_DIR to gfi's plots/ directory; "
                      "looked in %s)", looked[0] ? looked : "no folder");
}

/* A gnuplot string literal: single quotes, inner quotes doubled. */
static void gp_str(char *buf, size_t n, const char *s) {
  size_t k = 0;
  buf[k++] = '\'';
  for (; *s && k + 4 <= n; s++) {
    if (*s == '\'') buf[k++] = '\'';
    buf[k++] = *s;
  }
  buf[k++] = '\'';
  buf[k] = '\0';
}

/* Draw one figure: gnuplot -e "dir='OUT'; VARS" PLOTS/script. */
static int draw(run *r, const char *script, const char *vars) {
  char dir[8300], e[16384], sp[4200], log[4200];
  gp_str(dir, sizeof dir, r->S.out);
  snprintf(e, sizeof e, "dir=%s; %s", dir, vars ? vars : "");
  snprintf(sp, sizeof sp, "%s/%s", r->plots_dir, script);
  snprintf(log, sizeof log, "%s/logs/gnuplot_%s.log", r->S.out, script);
  char *argv[] = {r->gnuplot, "-e", e, sp, NULL};
  return run_child(r, argv, log);
}

/* ---- the experiments ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorted union of list and extra values (malloc'ed; NULL when out of
 * memory); indices of the extras. */
static double *merge(const double *list, size_t n, const double *extra, size_t ne, size_t *nout, size_t *idx) {
  double *v = malloc((n + ne) * sizeof *v);
  if (!v) return NULL;
  memcpy(v, list, n * sizeof *v);
  memcpy(v + n, extra, ne * sizeof *v);
  qsort(v, n + ne, sizeof *v, cmp_double);
  size_t k = 0;
  for (size_t i = 0; i < n + ne; i++)
    if (k == 0 || v[i] != v[k - 1]) v[k++] = v[i];
  for (size_t j = 0; j < ne; j++)
    for (size_t i = 0; i < k; i++)
      if (v[i] == extra[j]) idx[j] = i;
  *nout = k;
  return v;
}

/* Mean, sd and the 95% Student-t interval of x[0], x[stride], ... (n >= 2). */
typedef struct {
  double mean, sd, lo, hi;
} interval;

static interval over_seeds(const double *x, size_t n, size_t stride) {
  interval s = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) s.mean += x[i * stride];
  s.mean /= (double)n;
  for (size_t i = 0; i < n; i++) s.sd += (x[i * stride] - s.mean) * (x[i * stride] - s.mean);
  s.sd = sqrt(s.sd / (double)(n - 1));
  double t = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * s.sd / sqrt((double)n);
  s.lo = s.mean - t;
  s.hi = s.mean + t;
  return s;
}

static int oracle_density(run *r, experiment *x) {
  gfi_mise_opts mo;
  gfi_mise_default_opts(&mo);
  mo.base.nthreads = r->ctx->nthreads;
  gfi_mise_result res;
  CHK(gfi_ropt(x->m, &r->K, (double)x->N, NULL, &mo, &x->Rstar, &res), "optimal radius (gfi_ropt)");
  x->Rstar_crit = res.mise;
  double Rf[2] = {r->S.R, r->S.R};
  CHK(gfi_mise_exact(x->m, &r->K, (double)x->N, Rf, &mo, &res), "exact MISE at the fixed radius");
  x->fix_bias2 = res.bias2, x->fix_var = res.var;
  snprintf(x->Rstar_method, sizeof x->Rstar_method,
           "R* minimises the exact MISE over R^%zu (Plancherel, gfi_ropt), MISE(R*) = %.3g", x->D, res.mise);
  return GFI_OK;
}

static int oracle_regress(run *r, experiment *x) {
  const gfi_exp_repro_params *S = &r->S;
  size_t nev = 0, nscan = S->quick ? 7 : 13;
  double mse;
  CHK(gfi_repro_regress_ropt(x->m, x->f, &x->noise, &r->K, x->N, S->points, x->box, S->pilot_reps,
                             S->seed + 1000003ULL, 0.5, 32, nscan, &r->opts, &x->Rstar, &mse, &nev),
      "oracle radius (gfi_repro_regress_ropt)");
  x->Rstar_crit = mse;
  snprintf(x->Rstar_method, sizeof x->Rstar_method,
           "R* minimises the Monte-Carlo MSE against the truth at %zu uniform points in [-%g, %g]^2 over "
           "%zu pilot replications on seed %llu (a scan of %zu radii in [0.5, 32], then Brent's method on log R (gfi_minimize_radius): "
           "%zu evaluations in all); pilot MSE(R*) = %.3g",
           S->points, x->box, x->box, S->pilot_reps, (unsigned long long)(S->seed + 1000003ULL), nscan, nev, mse);
  return GFI_OK;
}

/* After the oracle: the sorted radius and box lists with the indices of
 * the fixed and oracle radii and of the default box. */
static int make_lists(run *r, experiment *x) {
  const gfi_exp_repro_params *S = &r->S;
  double extraR[2] = {S->R, x->Rstar};
  size_t idx[2] = {0, 0};
  x->R = merge(S->sens_R, S->nsens_R, extraR, 2, &x->nR, idx);
  x->iFixed = idx[0], x->iOracle = idx[1];
  x->boxes = x->regress ? merge(S->sens_regress_box, S->nsens_regress_box, &x->box, 1, &x->nbox, &x->iBox)
                        : merge(S->sens_box, S->nsens_box, &x->box, 1, &x->nbox, &x->iBox);
  if (!x->R || !x->boxes) return step_fail(r, GFI_ENOMEM, "out of memory");
  if (x->nR > SIZE_MAX / x->nbox / S->seeds / sizeof(double)) return step_fail(r, GFI_ENOMEM, "grid too large");
  size_t n = S->seeds * x->nR * x->nbox;
  x->mse = malloc(n * sizeof *x->mse);
  x->pmse = x->regress ? malloc(n * sizeof *x->pmse) : NULL;
  x->Rdd = malloc(S->seeds * sizeof *x->Rdd);
  x->mse_dd = malloc(S->seeds * sizeof *x->mse_dd);
  x->pmse_dd = malloc(S->seeds * sizeof *x->pmse_dd);
  if (!x->mse || (x->regress && !x->pmse) || !x->Rdd || !x->mse_dd || !x->pmse_dd)
    return step_fail(r, GFI_ENOMEM, "out of memory");
  return GFI_OK;
}

/* The data-driven policy on replication k: the isotropic radius minimising
 * LSCV (density) or the leave-one-out CV (regression) of that very sample
 * (gfi_select_lscv / gfi_select_loocv), as a user without the truth would
 * choose it, and the MSE there in the default box. The scan covers the
 * regression oracle's range R in [0.5, 32] (DD_SCAN radii, 16 or, with
 * --quick, 8, then Brent's method): wide enough for every default setting and
 * far cheaper in 2-D than the automatic range, whose largest radii cost the
 * most nodes. The fast route runs to DD_TOL: locating the minimum needs far
 * less than the library's default accuracy; the leave-one-out rows it
 * cannot settle to that bound get a second, tighter pass (docs/theory.md). */
#define DD_RLO 0.5
#define DD_RHI 32.0
#define DD_SCAN(quick) ((quick) ? 8 : 16)
#define DD_TOL 1e-6
static int data_driven(run *r, experiment *x, size_t k) {
  const gfi_exp_repro_params *S = &r->S;
  size_t N = x->N, D = x->D;
  int st = GFI_OK;
  double *data = malloc(N * D * sizeof *data), *y = x->regress ? malloc(N * sizeof *y) : NULL;
  gsl_rng *g = gfi_rng_stream(S->seed, k);
  if (!data || (x->regress && !y) || !g) {
    st = step_fail(r, GFI_ENOMEM, "out of memory");
    goto done;
  }
  st = x->regress ? gfi_regress_sample(x->m, x->f, &x->noise, g, N, data, y) : gfi_model_sample(x->m, g, N, data);
  if (st) {
    st = step_fail(r, st, "sampling: %s", gfi_strerror(st));
    goto done;
  }
  gfi_select_opts so;
  gfi_select_default_opts(&so);
  so.base.nthreads = r->ctx->nthreads;
  so.R_lo = DD_RLO, so.R_hi = DD_RHI, so.nscan = DD_SCAN(S->quick);
  so.base.tol = DD_TOL;
  gfi_select_result sr;
  st = x->regress ? gfi_select_loocv(&r->K, N, D, 1, data, y, &so, &sr, NULL)
                  : gfi_select_lscv(&r->K, N, D, data, &so, &sr, NULL);
  if (st) {
    st = step_fail(r, st, "%s: %s", x->regress ? "leave-one-out CV radius (gfi_select_loocv)"
                                               : "LSCV radius (gfi_select_lscv)", gfi_strerror(st));
    goto done;
  }
  x->Rdd[k] = sr.R[0];
  double Rv[3] = {sr.R[0], sr.R[0], sr.R[0]};
  gfi_repro_grid gg = {1, Rv, 1, &x->box};
  size_t nf = 0;
  x->pmse_dd[k] = NAN;
  st = x->regress ? gfi_repro_regress(x->m, x->f, &x->noise, &r->K, N, S->points, S->seed, k, &gg, &r->opts,
                                      x->mse_dd + k, x->pmse_dd + k, &nf)
                  : gfi_repro_density(x->m, &r->K, N, S->points, S->seed, k, &gg, &r->opts, x->mse_dd + k);
  if (st) st = step_fail(r, st, "MSE at the data-driven radius: %s", gfi_strerror(st));
  else if (!(x->mse_dd[k] > 0) || !isfinite(x->mse_dd[k]))
    st = step_fail(r, GFI_ENONFINITE, "MSE is %g at the data-driven R = %g", x->mse_dd[k], x->Rdd[k]);
  x->nflagged += nf;
done:
  if (g) gsl_rng_free(g);
  free(data), free(y);
  return st;
}

/* The median of the data-driven radii over the seeds. */
static double dd_median(const run *r, const experiment *x) {
  size_t n = r->S.seeds;
  double *v = malloc(n * sizeof *v);
  if (!v) return NAN;
  memcpy(v, x->Rdd, n * sizeof *v);
  qsort(v, n, sizeof *v, cmp_double);
  double m = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  free(v);
  return m;
}

/* min and max of the data-driven radii */
static void dd_range(const run *r, const experiment *x, double *lo, double *hi) {
  *lo = INFINITY, *hi = -INFINITY;
  for (size_t k = 0; k < r->S.seeds; k++) *lo = fmin(*lo, x->Rdd[k]), *hi = fmax(*hi, x->Rdd[k]);
}

static int run_seed(run *r, experiment *x, size_t k) {
  const gfi_exp_repro_params *S = &r->S;
  double *Rv = malloc(x->nR * x->D * sizeof *Rv);
  if (!Rv) return step_fail(r, GFI_ENOMEM, "out of memory");
  for (size_t a = 0; a < x->nR; a++)
    for (size_t j = 0; j < x->D; j++) Rv[a * x->D + j] = x->R[a];
  gfi_repro_grid g = {x->nR, Rv, x->nbox, x->boxes};
  size_t off = k * x->nR * x->nbox, nf = 0;
  int st;
  if (x->regress) {
    st = gfi_repro_regress(x->m, x->f, &x->noise, &r->K, x->N, S->points, S->seed, k, &g, &r->opts, x->mse + off,
                           x->pmse + off, &nf);
    if (st) st = step_fail(r, st, "regression MSE (gfi_repro_regress): %s", gfi_strerror(st));
  } else {
    st = gfi_repro_density(x->m, &r->K, x->N, S->points, S->seed, k, &g, &r->opts, x->mse + off);
    if (st) st = step_fail(r, st, "density MSE (gfi_repro_density): %s", gfi_strerror(st));
  }
  free(Rv);
  if (st) return st;
  if ((st = data_driven(r, x, k))) return st;
  x->nflagged += nf;
  for (size_t i = 0; i < x->nR * x->nbox; i++)
    if (!(x->mse[off + i] > 0) || !isfinite(x->mse[off + i]))
      return step_fail(r, GFI_ENONFINITE, "MSE is %g at R = %g, box %g", x->mse[off + i], x->R[i / x->nbox],
                       x->boxes[i % x->nbox]);
  return GFI_OK;
}

static void meta_common(run *r, FILE *f, const experiment *x) {
  const gfi_exp_repro_params *S = &r->S;
  gfi_dat_meta(f, "experiment", "%s: %s", x->title, x->what);
  gfi_dat_meta(f, x->regress ? "design" : "model", "%s (%s), dim %zu", x->spec, gfi_model_describe(x->m), x->D);
  if (x->regress) {
    char nb[128];
    gfi_noise_describe(&x->noise, nb, sizeof nb);
    gfi_dat_meta(f, "truth", "%s (%s)", S->truth, gfi_regfun_describe(x->f));
    gfi_dat_meta(f, "noise", "%s", nb);
  }
  gfi_dat_meta(f, "kernel", "phi(z) = z^%d", r->K.l);
  gfi_dat_meta(f, "n", "%zu", x->N);
  gfi_dat_meta(f, "test-points", "%zu uniform in [-b, b]^%zu, default b = %g, RNG stream (seed, %llu + k)", S->points,
               x->D, x->box, (unsigned long long)GFI_REPRO_TEST_STREAM);
  gfi_dat_meta(f, "seeds", "%zu: replication k = 0..%zu draws its data from RNG stream (%llu, k)", S->seeds,
               S->seeds - 1, (unsigned long long)S->seed);
  gfi_dat_meta(f, "fixed-R", "%.17g", S->R);
  gfi_dat_meta(f, "oracle-R", "%.17g (%s)", x->Rstar, x->Rstar_method);
  gfi_dat_meta(f, "data-R", "chosen on each sample by %s (gfi_select_%s); seed 1: %.17g",
               x->regress ? "leave-one-out CV" : "LSCV", x->regress ? "loocv" : "lscv", x->Rdd[0]);
  gfi_dat_meta(f, "paper", "%g", x->paper);
}

static int write_mse(run *r, const experiment *x) {
  const gfi_exp_repro_params *S = &r->S;
  char name[64];
  FILE *f;
  int st;
  snprintf(name, sizeof name, "%s_mse.dat", x->key);
  if ((st = out_open(r, &f, name, "MSE of every replication, radius and box"))) return st;
  meta_common(r, f, x);
  fputs(x->regress ? "# seed R box mse pred_mse\n" : "# seed R box mse\n", f);
  for (size_t k = 0; k < S->seeds; k++)
    for (size_t a = 0; a < x->nR; a++)
      for (size_t b = 0; b < x->nbox; b++) {
        size_t i = (k * x->nR + a) * x->nbox + b;
        double v[5] = {(double)k, x->R[a], x->boxes[b], x->mse[i], x->regress ? x->pmse[i] : 0};
        gfi_table_write_rows(f, 1, x->regress ? 5 : 4, v);
      }
  if ((st = out_close(r, f, name))) return st;
  snprintf(name, sizeof name, "%s_sensitivity.dat", x->key);
  if ((st = out_open(r, &f, name, "sensitivity: MSE over seeds for each radius (rows) and box (one block per box)")))
    return st;
  meta_common(r, f, x);
  gfi_dat_meta(f, "interval", "mean and 95%% Student-t interval over the %zu seeds", S->seeds);
  fputs("# R mse_mean lo95 hi95 sd box fixed oracle\n", f);
  for (size_t b = 0; b < x->nbox; b++) {
    fprintf(f, "# box [-%g, %g]^%zu\n", x->boxes[b], x->boxes[b], x->D);
    for (size_t a = 0; a < x->nR; a++) {
      interval s = over_seeds(x->mse + a * x->nbox + b, S->seeds, x->nR * x->nbox);
      double v[8] = {x->R[a], s.mean, s.lo, s.hi, s.sd, x->boxes[b], a == x->iFixed, a == x->iOracle};
      gfi_table_write_rows(f, 1, 8, v);
    }
    fputs("\n\n", f);
  }
  return out_close(r, f, name);
}

/* Data of seed 0 and the estimates at both policies' radii on a grid. */
static int curves(run *r, experiment *x) {
  const gfi_exp_repro_params *S = &r->S;
  size_t D = x->D, N = x->N;
  int st = GFI_OK;
  double *data = NULL, *y = NULL, *q = NULL, *t = NULL, *e = NULL;
  gfi_density_plan *dp = NULL;
  gfi_nw_plan *np = NULL;
  FILE *f = NULL;
  gsl_rng *g = NULL;
  NEEDG(data = malloc(N * D * sizeof *data));
  if (x->regress) NEEDG(y = malloc(N * sizeof *y));
  NEEDG(g = gfi_rng_stream(S->seed, 0));
  if (x->regress)
    CHKG(gfi_regress_sample(x->m, x->f, &x->noise, g, N, data, y), "sampling");
  else
    CHKG(gfi_model_sample(x->m, g, N, data), "sampling");
  double Rs[3] = {S->R, x->Rstar, x->Rdd[0]};
  char name[64];
  if (!x->regress && D == 1) {
    size_t G = S->quick ? 301 : 1201;
    NEEDG(q = malloc(G * sizeof *q));
    NEEDG(t = malloc(G * sizeof *t));
    NEEDG(e = malloc(3 * G * sizeof *e));
    for (size_t i = 0; i < G; i++) q[i] = -x->box + 2 * x->box * (double)i / (double)(G - 1);
    CHKG(gfi_model_pdf(x->m, G, q, t), "pdf");
    for (int a = 0; a < 3; a++) {
      CHKG(gfi_density_plan_fourier(&dp, &r->K, N, 1, data, NULL, Rs + a, &r->opts), "density plan");
      CHKG(gfi_density_eval(dp, G, q, e + a * G), "density evaluation");
      gfi_density_destroy(dp);
      dp = NULL;
    }
    snprintf(name, sizeof name, "%s_curve.dat", x->key);
    if ((st = out_open(r, &f, name, "truth and the estimates of seed 0 on a grid"))) goto done;
    meta_common(r, f, x);
    fputs("# x truth fixed_R oracle_R data_R\n", f);
    for (size_t i = 0; i < G; i++) {
      double v[5] = {q[i], t[i], e[i], e[G + i], e[2 * G + i]};
      gfi_table_write_rows(f, 1, 5, v);
    }
    st = out_close(r, f, name);
    f = NULL;
  } else if (!x->regress) {
    size_t G = S->quick ? 31 : 81, M = G * G;
    NEEDG(q = malloc(2 * M * sizeof *q));
    NEEDG(t = malloc(M * sizeof *t));
    NEEDG(e = malloc(3 * M * sizeof *e));
    for (size_t a = 0; a < G; a++)
      for (size_t b = 0; b < G; b++) {
        q[2 * (a * G + b)] = -x->box + 2 * x->box * (double)a / (double)(G - 1);
        q[2 * (a * G + b) + 1] = -x->box + 2 * x->box * (double)b / (double)(G - 1);
      }
    CHKG(gfi_model_pdf(x->m, M, q, t), "pdf");
    for (int a = 0; a < 3; a++) {
      double R2[2] = {Rs[a], Rs[a]};
      CHKG(gfi_density_plan_fourier(&dp, &r->K, N, 2, data, NULL, R2, &r->opts), "density plan");
      CHKG(gfi_density_eval(dp, M, q, e + a * M), "density evaluation");
      gfi_density_destroy(dp);
      dp = NULL;
    }
    snprintf(name, sizeof name, "%s_grid.dat", x->key);
    if ((st = out_open(r, &f, name, "truth and the estimates of seed 0 on a grid (one block per x1)"))) goto done;
    meta_common(r, f, x);
    fputs("# x1 x2 truth fixed_R oracle_R data_R\n", f);
    for (size_t a = 0; a < G; a++) {
      for (size_t b = 0; b < G; b++) {
        size_t i = a * G + b;
        double v[6] = {q[2 * i], q[2 * i + 1], t[i], e[i], e[M + i], e[2 * M + i]};
        gfi_table_write_rows(f, 1, 6, v);
      }
      fputc('\n', f);
    }
    st = out_close(r, f, name);
    f = NULL;
  } else {
    /* the slice x2 = 0 and the default box's test points of seed 0 */
    size_t G = S->quick ? 101 : 201, M = S->points, Q = G + M;
    NEEDG(q = malloc(2 * Q * sizeof *q));
    NEEDG(t = malloc(Q * sizeof *t));
    NEEDG(e = malloc(3 * Q * sizeof *e));
    for (size_t i = 0; i < G; i++) {
      q[2 * i] = -x->box + 2 * x->box * (double)i / (double)(G - 1);
      q[2 * i + 1] = 0;
    }
    CHKG(gfi_repro_unit_points(S->seed, 0, 2, M, q + 2 * G), "test points");
    for (size_t i = 2 * G; i < 2 * Q; i++) q[i] *= x->box;
    CHKG(gfi_regfun_eval(x->f, Q, q, t), "truth");
    for (int a = 0; a < 3; a++) {
      double R2[2] = {Rs[a], Rs[a]};
      CHKG(gfi_nw_plan_fourier(&np, &r->K, N, 2, 1, data, y, R2, &r->opts), "regression plan");
      int s = gfi_nw_eval(np, Q, q, e + a * Q, NULL);
      if (s != GFI_EDENOM) CHKG(s, "regression evaluation");
      gfi_nw_destroy(np);
      np = NULL;
    }
    snprintf(name, sizeof name, "%s_slice.dat", x->key);
    if ((st = out_open(r, &f, name, "truth and the estimates of seed 0 along the slice x2 = 0"))) goto done;
    meta_common(r, f, x);
    fputs("# x1 x2 truth fixed_R oracle_R data_R\n", f);
    for (size_t i = 0; i < G; i++) {
      double v[6] = {q[2 * i], q[2 * i + 1], t[i], e[i], e[Q + i], e[2 * Q + i]};
      gfi_table_write_rows(f, 1, 6, v);
    }
    st = out_close(r, f, name);
    f = NULL;
    if (st) goto done;
    snprintf(name, sizeof name, "%s_points.dat", x->key);
    if ((st = out_open(r, &f, name, "truth and the estimates of seed 0 at its test points in the default box")))
      goto done;
    meta_common(r, f, x);
    fputs("# x1 x2 truth fixed_R oracle_R data_R\n", f);
    for (size_t i = G; i < Q; i++) {
      double v[6] = {q[2 * i], q[2 * i + 1], t[i], e[i], e[Q + i], e[2 * Q + i]};
      gfi_table_write_rows(f, 1, 6, v);
    }
    st = out_close(r, f, name);
    f = NULL;
  }
done:
  gfi_exp_fdiscard(f);
  if (g) gsl_rng_free(g);
  gfi_density_destroy(dp);
  gfi_nw_destroy(np);
  free(data), free(y), free(q), free(t), free(e);
  return st;
}

/* ---- the rate checks and the FLT study, in-process ------------------------------ */

/* The argv a sub-check's headers name: gfi CMD --out DIR --seed S
 * --threads T (further arguments are added by the caller). */
static void sub_argv(const run *r, gfi_exp_argv *av, const char *cmd, const char *dir) {
  gfi_exp_argv_init(av);
  gfi_exp_argv_add(av, "gfi");
  gfi_exp_argv_add(av, "%s", cmd);
  gfi_exp_argv_add(av, "--out");
  gfi_exp_argv_add(av, "%s", dir);
  gfi_exp_argv_add(av, "--seed");
  gfi_exp_argv_add(av, "%llu", (unsigned long long)r->S.seed);
  gfi_exp_argv_add(av, "--threads");
  gfi_exp_argv_add(av, "%d", r->ctx->nthreads);
}

static int rate_checks(run *r) {
  const gfi_exp_repro_params *S = &r->S;
  int quick = strcmp(S->rates, "quick") == 0, st;
  char dir[4200], log[4200];
  FILE *lf = NULL;
  gfi_exp_argv av;
  gfi_exp_ctx sub = {.program = "gfi rates", .nthreads = r->ctx->nthreads};

  snprintf(dir, sizeof dir, "%s/rates", S->out);
  snprintf(log, sizeof log, "%s/logs/rates.log", S->out);
  step_begin(r, "density rate checks (gfi rates --size %s)",
             quick ? "quick, reduced" : S->full ? "full" : "full --mc-nmax 1e6");
  gfi_exp_drates_params dp;
  gfi_exp_drates_default(&dp);
  dp.full = !quick;
  dp.seed = S->seed;
  dp.outdir = dir;
  sub_argv(r, &av, "rates", dir);
  gfi_exp_argv_add(&av, "--size");
  gfi_exp_argv_add(&av, "%s", quick ? "quick" : "full");
  /* without --full the Monte-Carlo checks of the exact MISE stop at N = 1e6:
   * the points at 3.2e6 and 1e7 were 85% of the step's time */
  if (!quick && !S->full) {
    dp.mc_nmax = REPRO_MC_NMAX;
    gfi_exp_argv_add(&av, "--mc-nmax");
    gfi_exp_argv_add(&av, "1e6");
  }
  sub.progress = r->live;
  if (quick) {
    dp.models[0] = "normal", dp.models[1] = "laplace", dp.nmodels = 2;
    dp.nmax = 1e4, dp.fit_decades = 2, dp.mc_reps = 10;
    const char *more[] = {"--model", "normal", "--model", "laplace", "--nmax", "1e4", "--fit-decades", "2", "--mc", "10"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) gfi_exp_argv_add(&av, "%s", more[i]);
  }
  sub.argc = av.argc, sub.argv = av.argv;
  lf = fopen(log, "w");
  if (!lf) return step_fail(r, GFI_EIO, "cannot write %s: %s", log, strerror(errno));
  st = gfi_exp_density_rates(&dp, &sub, lf, &r->drows, &r->ndrows, r->e);
  int werr = ferror(lf) | fclose(lf);
  if (werr && !st) return step_fail(r, GFI_EIO, "error writing %s", log);
  if (st) return step_fail_sub(r, st);
  step_end(r);

  snprintf(dir, sizeof dir, "%s/regress_rates", S->out);
  snprintf(log, sizeof log, "%s/logs/regress_rates.log", S->out);
  if ((st = make_dir(r, dir))) return st;
  step_begin(r, "regression rate checks (gfi regress-rates --size %s)",
             quick ? "small, reduced" : S->full ? "large" : "large --reps 100");
  gfi_exp_rrates_params rp;
  gfi_exp_rrates_default(&rp);
  rp.size = quick ? "small" : "large";
  rp.seed = S->seed;
  rp.outdir = dir;
  sub_argv(r, &av, "regress-rates", dir);
  gfi_exp_argv_add(&av, "--size");
  gfi_exp_argv_add(&av, "%s", rp.size);
  /* without --full: the same sizes with half the replications (the
   * intervals of the fitted exponents widen by about sqrt 2) */
  if (!quick && !S->full) {
    rp.reps = REPRO_RREPS;
    gfi_exp_argv_add(&av, "--reps");
    gfi_exp_argv_add(&av, "%d", REPRO_RREPS);
  }
  if (quick) {
    rp.reps = 10, rp.points = 100;
    const char *more[] = {"--reps", "10", "--points", "100"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) gfi_exp_argv_add(&av, "%s", more[i]);
  }
  sub.program = "gfi regress-rates";
  sub.argc = av.argc, sub.argv = av.argv;
  sub.progress = r->live;
  lf = fopen(log, "w");
  if (!lf) return step_fail(r, GFI_EIO, "cannot write %s: %s", log, strerror(errno));
  st = gfi_exp_regress_rates(&rp, &sub, lf, &r->rrows, &r->nrrows, r->e);
  werr = ferror(lf) | fclose(lf);
  if (werr && !st) return step_fail(r, GFI_EIO, "error writing %s", log);
  if (st) return step_fail_sub(r, st);
  step_end(r);

  /* Lemma 1 (Bernstein at a point), the concentration the regression proofs use */
  snprintf(dir, sizeof dir, "%s/lemma1", S->out);
  snprintf(log, sizeof log, "%s/logs/lemma1.log", S->out);
  if ((st = make_dir(r, dir))) return st;
  gfi_exp_lemma1_default(&r->l1p);
  r->l1p.reps = quick ? 4000 : 20000;
  r->l1p.seed = S->seed;
  r->l1p.outdir = dir;
  step_begin(r, "Lemma 1 concentration (gfi concentration --reps %zu)", r->l1p.reps);
  gfi_exp_argv_init(&av);
  gfi_exp_argv_add(&av, "gfi");
  gfi_exp_argv_add(&av, "concentration");
  gfi_exp_argv_add(&av, "--reps");
  gfi_exp_argv_add(&av, "%zu", r->l1p.reps);
  gfi_exp_argv_add(&av, "--seed");
  gfi_exp_argv_add(&av, "%llu", (unsigned long long)S->seed);
  gfi_exp_argv_add(&av, "--out");
  gfi_exp_argv_add(&av, "%s", dir);
  sub.program = "gfi concentration";
  sub.argc = av.argc, sub.argv = av.argv;
  lf = fopen(log, "w");
  if (!lf) return step_fail(r, GFI_EIO, "cannot write %s: %s", log, strerror(errno));
  st = gfi_exp_lemma1(&r->l1p, &sub, lf, r->l1, r->e);
  werr = ferror(lf) | fclose(lf);
  if (werr && !st) return step_fail(r, GFI_EIO, "error writing %s", log);
  if (st) return step_fail_sub(r, st);
  r->have_l1 = 1;
  step_end(r);
  return GFI_OK;
}

/* ---- the density checks in depth: D = 2 and 3, Theorem 1's powers, correlation ---- */

static const char *condition_text(const char *c);

/* One more density rate check in-process, into OUT/rates/SUB (its printed
 * table in logs/rates_SUB.log, its headers naming the equivalent gfi rates
 * command with `args`), rows into r->hrows[slot]. */
static int drates_into(run *r, int slot, const char *sub, gfi_exp_drates_params *dp, const char *const *args,
                       size_t nargs) {
  const gfi_exp_repro_params *S = &r->S;
  char dir[4200], log[4200];
  gfi_exp_argv av;
  gfi_exp_ctx ctx = {.program = "gfi rates", .nthreads = r->ctx->nthreads, .progress = r->live};
  snprintf(dir, sizeof dir, "%s/rates/%s", S->out, sub);
  snprintf(log, sizeof log, "%s/logs/rates_%s.log", S->out, sub);
  dp->seed = S->seed;
  dp->outdir = dir;
  sub_argv(r, &av, "rates", dir);
  for (size_t i = 0; i < nargs; i++) gfi_exp_argv_add(&av, "%s", args[i]);
  ctx.argc = av.argc, ctx.argv = av.argv;
  FILE *lf = fopen(log, "w");
  if (!lf) return step_fail(r, GFI_EIO, "cannot write %s: %s", log, strerror(errno));
  int st = gfi_exp_density_rates(dp, &ctx, lf, &r->hrows[slot], &r->nhrows[slot], r->e);
  int werr = ferror(lf) | fclose(lf);
  if (werr && !st) return step_fail(r, GFI_EIO, "error writing %s", log);
  if (st) return step_fail_sub(r, st);
  return GFI_OK;
}

/* The 2-D truths: a correlated normal, the product Laplace (ordinary
 * smooth, beta = 2: Theorem 1 reads not-C2, 3b beta<=3) and a two-component
 * mixture with a correlated component; 3-D: a correlated normal. */
#define D2_NORMAL "normal:cov=1,0.5,0.5,1"
#define D2_MIX "mix:0.5*normal:mean=-1,0|0.5*normal:mean=1,0.5;cov=1,0.6,0.6,1"
#define D3_NORMAL "normal:cov=1,0.5,0.25,0.5,1,0.5,0.25,0.5,1"

static int density_depth(run *r) {
  const gfi_exp_repro_params *S = &r->S;
  int quick = strcmp(S->rates, "quick") == 0, st;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/rates", S->out);
  if ((st = make_dir(r, dir))) return st;
  gfi_exp_drates_params dp;

  step_begin(r, "density rate checks in D = 2 (gfi rates --dim 2%s)", quick ? ", reduced" : "");
  gfi_exp_drates_default(&dp);
  dp.D = 2;
  dp.full = !quick;
  dp.models[0] = D2_NORMAL, dp.nmodels = 1;
  if (quick) {
    dp.theorems[0] = GFI_EXP_THM_1, dp.theorems[1] = GFI_EXP_THM_3B, dp.ntheorems = 2;
    dp.nmax = 1e4, dp.fit_decades = 2, dp.mc_reps = 0;
    const char *a[] = {"--dim", "2", "--size", "quick", "--theorems", "1,3b", "--model", D2_NORMAL,
                       "--nmax", "1e4", "--fit-decades", "2", "--mc", "0"};
    st = drates_into(r, 0, "d2", &dp, a, sizeof a / sizeof *a);
  } else {
    dp.models[dp.nmodels++] = "laplace";
    dp.models[dp.nmodels++] = D2_MIX;
    dp.nmax = 1e6, dp.fit_decades = 3, dp.mc_reps = 20, dp.mc_nmax = 100;
    const char *a[] = {"--dim", "2", "--size", "full", "--model", D2_NORMAL, "--model", "laplace", "--model", D2_MIX,
                       "--nmax", "1e6", "--fit-decades", "3", "--mc", "20", "--mc-nmax", "100"};
    st = drates_into(r, 0, "d2", &dp, a, sizeof a / sizeof *a);
  }
  if (st) return st;
  step_end(r);

  if (!quick) { /* D = 3: about 10 s of CPU of quadrature per optimal radius, a CPU minute in all: the full run only, to 1e4 */
    step_begin(r, "density rate checks in D = 3 (gfi rates --dim 3)");
    gfi_exp_drates_default(&dp);
    dp.D = 3;
    dp.full = 1;
    dp.theorems[0] = GFI_EXP_THM_1, dp.theorems[1] = GFI_EXP_THM_3B, dp.ntheorems = 2;
    dp.models[0] = D3_NORMAL, dp.nmodels = 1;
    dp.mc_reps = 0;
    dp.nmax = 1e4, dp.per_decade = 1, dp.fit_decades = 2;
    const char *a[] = {"--dim", "3", "--size", "full", "--theorems", "1,3b", "--model", D3_NORMAL,
                       "--nmax", "1e4", "--per-decade", "1", "--fit-decades", "2", "--mc", "0"};
    if ((st = drates_into(r, 1, "d3", &dp, a, sizeof a / sizeof *a))) return st;
    step_end(r);
  }

  step_begin(r, "Theorem 1 for l = 3, 4, 6, 8 (gfi rates --theorems 1 --l1 3,4,6,8)");
  gfi_exp_drates_default(&dp);
  dp.full = !quick;
  dp.theorems[0] = GFI_EXP_THM_1, dp.ntheorems = 1;
  dp.l1[0] = 3, dp.l1[1] = 4, dp.l1[2] = 6, dp.l1[3] = 8, dp.nl1 = 4;
  dp.models[0] = "normal", dp.nmodels = 1;
  dp.mc_reps = 0;
  if (quick) {
    const char *a[] = {"--theorems", "1", "--l1", "3,4,6,8", "--size", "quick", "--model", "normal", "--mc", "0"};
    st = drates_into(r, 2, "powers", &dp, a, sizeof a / sizeof *a);
  } else {
    dp.models[dp.nmodels++] = "mw:6";
    const char *a[] = {"--theorems", "1", "--l1", "3,4,6,8", "--size", "full", "--model", "normal", "--model", "mw:6",
                       "--mc", "0"};
    st = drates_into(r, 2, "powers", &dp, a, sizeof a / sizeof *a);
  }
  if (st) return st;
  step_end(r);

  if (quick) return GFI_OK; /* the correlation claim: a minute of 2-D quadrature, the full run only */
  step_begin(r, "the correlation claim (gfi correlation)");
  gfi_exp_corr_params cp;
  gfi_exp_corr_default(&cp);
  cp.l = r->K.l >= 1 && r->K.l <= 8 ? r->K.l : 4;
  snprintf(dir, sizeof dir, "%s/correlation", S->out);
  cp.outdir = dir;
  gfi_exp_argv av;
  gfi_exp_argv_init(&av);
  gfi_exp_argv_add(&av, "gfi");
  gfi_exp_argv_add(&av, "correlation");
  gfi_exp_argv_add(&av, "--l");
  gfi_exp_argv_add(&av, "%d", cp.l);
  gfi_exp_argv_add(&av, "--out");
  gfi_exp_argv_add(&av, "%s", dir);
  gfi_exp_ctx ctx = {.program = "gfi correlation", .argc = av.argc, .argv = av.argv, .nthreads = r->ctx->nthreads,
                     .progress = r->live};
  if ((st = gfi_exp_correlation(&cp, &ctx, NULL, &r->corr, &r->ncorr, r->e))) return step_fail_sub(r, st);
  step_end(r);
  return GFI_OK;
}

static int figures_depth(run *r) {
  const gfi_exp_repro_params *S = &r->S;
  const char *subs[] = {"rates/d2", "rates/d3"};
  char sub[4200], dir[8400], v[8600];
  int st;
  for (int i = 0; i < 2; i++) {
    if (!r->nhrows[i]) continue;
    step_begin(r, "figure %s/mise_rates (plots/mise_rates.gp)", subs[i]);
    snprintf(sub, sizeof sub, "%s/%s", S->out, subs[i]);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    if ((st = draw(r, "mise_rates.gp", v))) return st;
    step_end(r);
  }
  step_begin(r, "figure rates/powers/rates_powers (plots/rates_powers.gp)");
  snprintf(sub, sizeof sub, "%s/rates/powers", S->out);
  gp_str(dir, sizeof dir, sub);
  snprintf(v, sizeof v, "dir=%s", dir);
  if ((st = draw(r, "rates_powers.gp", v))) return st;
  step_end(r);
  if (!r->ncorr) return GFI_OK;
  step_begin(r, "figure correlation/correlation (plots/correlation.gp)");
  snprintf(sub, sizeof sub, "%s/correlation", S->out);
  gp_str(dir, sizeof dir, sub);
  snprintf(v, sizeof v, "dir=%s", dir);
  if ((st = draw(r, "correlation.gp", v))) return st;
  step_end(r);
  return GFI_OK;
}

/* A number for a summary table, "-" where it does not apply (NaN: the
 * Gaussian-KDE baseline rows have no theorem, hence no claimed exponent). */
static const char *md_num(char *buf, size_t n, int prec, double v) {
  if (!isfinite(v)) snprintf(buf, n, "-");
  else snprintf(buf, n, "%.*f", prec, v);
  return buf;
}

static void summary_depth(run *r, FILE *md) {
  static const char *titles[3] = {"D = 2", "D = 3", "Theorem 1 for l = 3, 4, 6, 8 (1-D)"};
  static const char *dirs[3] = {"rates/d2", "rates/d3", "rates/powers"};
  fprintf(md, "\n## Density rate checks in depth\n\nThe same checks as above (exact MISE at R*(N), slopes with 95%% "
          "intervals) beyond D = 1, and Theorem 1 with several kernel powers. `claimed` is the theorem's "
          "exponent, `classical` the exponent of a classical kernel of the same order; both are shown "
          "because the theorems' N^(-2/(D+2)) is an upper bound that smooth truths beat.\n");
  if (!r->nhrows[1])
    fprintf(md, "\nD = 3 and the correlation claim run in the full reproduction only (minutes of quadrature; "
            "`gfi rates --dim 3`, `gfi correlation`).\n");
  for (int k = 0; k < 3; k++) {
    if (!r->nhrows[k]) continue;
    fprintf(md, "\n### %s\n\n| theorem | truth | phi | N | claimed | classical | observed [95%%] | R* slope "
            "(claimed) | verdict | theorem's hypothesis |\n|---|---|---|---|---|---|---|---|---|---|\n", titles[k]);
    for (size_t i = 0; i < r->nhrows[k]; i++) {
      const gfi_exp_rate_row *w = r->hrows[k] + i;
      char phi[64], setting[160] = "";
      if (w->l == 0) snprintf(phi, sizeof phi, "Gaussian KDE");
      else snprintf(phi, sizeof phi, "z^%d", w->l);
      for (const char *c = w->setting; *c && strlen(setting) + 3 < sizeof setting; c++) {
        size_t L = strlen(setting);
        if (*c == '|') setting[L++] = '\\';
        setting[L++] = *c;
        setting[L] = '\0';
      }
      char b[7][32];
      fprintf(md, "| %s | %s | %s | %zu..%zu | %s | %s | %s [%s, %s] | %s (%s) | %s | %s |\n", w->name, setting, phi,
              w->N_min, w->N_max, md_num(b[0], 32, 4, w->claimed), md_num(b[1], 32, 4, w->classical),
              md_num(b[2], 32, 4, w->observed), md_num(b[3], 32, 4, w->lo95), md_num(b[4], 32, 4, w->hi95),
              md_num(b[5], 32, 4, w->observed_R), md_num(b[6], 32, 4, w->claimed_R),
              gfi_exp_verdict_name(w->verdict), condition_text(w->condition));
    }
    if (k < 2) fprintf(md, "\n![density rates, %s](%s/mise_rates.png)\n", titles[k], dirs[k]);
  }
  if (r->nhrows[2]) {
    /* what l changes: R*(N) at the largest N, per power */
    fprintf(md, "\nWhat l changes: every l >= 3 gives a kernel of order 2 (one vanishing moment, a positive second "
            "moment), so the exponents agree; l = 3 fails Theorem 1's moment hypothesis (l<4) and is measured all "
            "the same. The power changes only the constant and the radius: sinc(R z)^l has variance about 3/(l R^2), so a larger l "
            "reaches the same effective bandwidth with a smaller R (R* falls roughly like 1/sqrt(l)):");
    for (size_t i = 0; i < r->nhrows[2]; i++) {
      const gfi_exp_rate_row *w = r->hrows[2] + i;
      char path[4300], line[512];
      if (w->l == 4) snprintf(path, sizeof path, "%s/rates/powers/rates_1_%zu.dat", r->S.out, (size_t)0);
      else snprintf(path, sizeof path, "%s/rates/powers/rates_1_l%d_%zu.dat", r->S.out, w->l, (size_t)0);
      if (strcmp(w->setting, "normal") != 0) continue;
      last_line(path, line, sizeof line);
      double n = NAN, R = NAN, m = NAN;
      if (sscanf(line, "%lf %lf %lf", &n, &R, &m) == 3)
        fprintf(md, "%s l = %d: R* = %.3g, MISE* = %.3g at N = %.3g", i ? ";" : "", w->l, R, m, n);
    }
    fprintf(md, " (normal truth).\n\n![Theorem 1 with l = 3, 4, 6, 8](rates/powers/rates_powers.png)\n");
  }
  if (r->ncorr) {
    fprintf(md, "\n## The correlation claim (FourierFormer section 3.1; `gfi correlation`)\n\nTruth N(0, [[1, rho], "
            "[rho, 1]]); each estimator at its MISE-optimal parameters, exact MISE. The isotropic Fourier "
            "estimator (one radius) against the Gaussian KDE with H = h^2 I and with a full H (the estimator "
            "that tunes the covariance).\n\n| rho | N | Fourier R* | MISE* Fourier | MISE* Gauss h^2 I | MISE* "
            "Gauss full H | Fourier / full H | h^2 I / full H |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->ncorr; i++) {
      const gfi_exp_corr_row *c = r->corr + i;
      fprintf(md, "| %g | %g | %.4g | %.4g | %.4g | %.4g | %.3f | %.3f |\n", c->rho, c->N, c->R, c->mise_fourier,
              c->mise_iso, c->mise_full, c->mise_fourier / c->mise_full, c->mise_iso / c->mise_full);
    }
    const gfi_exp_corr_row *lo = r->corr, *hi = r->corr + r->ncorr - 1;
    fprintf(md, "\nThe isotropic Fourier estimator tracks the isotropic Gaussian KDE: at rho = %g it is %.2f times the "
            "full-H optimum (N = %g), at rho = %g %.2f times. It does not adapt to the correlation by itself; "
            "a per-axis or rotated radius would be the analogue of the full H.\n\n"
            "![correlation](correlation/correlation.png)\n",
            lo->rho, lo->mise_fourier / lo->mise_full, lo->N, hi->rho, hi->mise_fourier / hi->mise_full);
  }
}

static int flt(run *r) {
  const gfi_exp_repro_params *S = &r->S;
  char dir[4200], log[4200];
  snprintf(dir, sizeof dir, "%s/flt", S->out);
  snprintf(log, sizeof log, "%s/logs/flt_study.log", S->out);
  int st = make_dir(r, dir);
  if (st) return st;
  step_begin(r, "FLT study (flt_study, %s)", S->flt);
  gfi_exp_flt_params fp;
  gfi_exp_flt_default(&fp);
  fp.outdir = dir;
  fp.seed = S->seed;
  fp.quick = strcmp(S->flt, "quick") == 0;
  gfi_exp_argv av;
  gfi_exp_argv_init(&av);
  gfi_exp_argv_add(&av, "flt_study");
  gfi_exp_argv_add(&av, "--out");
  gfi_exp_argv_add(&av, "%s", dir);
  gfi_exp_argv_add(&av, "--seed");
  gfi_exp_argv_add(&av, "%llu", (unsigned long long)S->seed);
  if (fp.quick) gfi_exp_argv_add(&av, "--quick");
  FILE *lf = fopen(log, "w");
  if (!lf) return step_fail(r, GFI_EIO, "cannot write %s: %s", log, strerror(errno));
  gfi_exp_ctx sub = {.program = "flt_study", .argc = av.argc, .argv = av.argv, .nthreads = r->ctx->nthreads, .progress = lf,
                     .live = r->live};
  st = gfi_exp_flt_study(&fp, &sub, r->e);
  int werr = ferror(lf) | fclose(lf);
  if (werr && !st) return step_fail(r, GFI_EIO, "error writing %s", log);
  if (st) return step_fail_sub(r, st);
  step_end(r);
  return GFI_OK;
}

/* ---- figures -------------------------------------------------------------------- */

static int figures(run *r, int do_rates, int do_flt) {
  const gfi_exp_repro_params *S = &r->S;
  experiment *ex = r->ex;
  int st;
  char v[8192], m1[512], m2[512], d2[512], tr[512], nz[512], nb[128];
  gp_str(m1, sizeof m1, ex[0].spec);
  gp_str(m2, sizeof m2, ex[1].spec);
  gp_str(d2, sizeof d2, ex[2].spec);
  gp_str(tr, sizeof tr, S->truth);
  gfi_noise_describe(&ex[2].noise, nb, sizeof nb);
  gp_str(nz, sizeof nz, nb);
  step_begin(r, "figure fig1a (plots/fourierformer_fig1a.gp)");
  snprintf(v, sizeof v, "model=%s; n=%zu; l=%d; rfix=%.17g; rstar=%.17g; rdd=%.17g; box=%.17g", m1, ex[0].N, r->K.l,
           S->R, ex[0].Rstar, ex[0].Rdd[0], ex[0].box);
  if ((st = draw(r, "fourierformer_fig1a.gp", v))) return st;
  step_end(r);
  step_begin(r, "figure fig1b (plots/fourierformer_fig1b.gp)");
  snprintf(v, sizeof v, "model=%s; n=%zu; l=%d; rfix=%.17g; rstar=%.17g; rdd=%.17g; box=%.17g", m2, ex[1].N, r->K.l,
           S->R, ex[1].Rstar, ex[1].Rdd[0], ex[1].box);
  if ((st = draw(r, "fourierformer_fig1b.gp", v))) return st;
  step_end(r);
  step_begin(r, "figure fig2 (plots/fourierformer_fig2.gp)");
  snprintf(v, sizeof v, "design=%s; truth=%s; noise=%s; n=%zu; l=%d; rfix=%.17g; rstar=%.17g; rdd=%.17g; box=%.17g",
           d2, tr, nz, ex[2].N, r->K.l, S->R, ex[2].Rstar, ex[2].Rdd[0], ex[2].box);
  if ((st = draw(r, "fourierformer_fig2.gp", v))) return st;
  step_end(r);
  step_begin(r, "figure sensitivity (plots/fourierformer_sensitivity.gp)");
  double rmin = INFINITY, rmax = 0;
  for (int i = 0; i < 3; i++) rmin = fmin(rmin, ex[i].R[0]), rmax = fmax(rmax, ex[i].R[ex[i].nR - 1]);
  size_t L = (size_t)snprintf(v, sizeof v, "l=%d; rfix=%.17g; seeds=%zu; rmin=%.17g; rmax=%.17g", r->K.l, S->R,
                              S->seeds, rmin, rmax);
  for (int i = 0; i < 3 && L < sizeof v; i++) {
    char bl[512] = "";
    for (size_t b = 0; b < ex[i].nbox; b++) {
      size_t bn = strlen(bl);
      snprintf(bl + bn, sizeof bl - bn, "%s%g", b ? " " : "", ex[i].boxes[b]);
    }
    L += (size_t)snprintf(v + L, sizeof v - L, "; boxes%d='%s'; paper%d=%.17g; rstar%d=%.17g; box%d=%.17g", i + 1, bl,
                          i + 1, ex[i].paper, i + 1, ex[i].Rstar, i + 1, ex[i].box);
  }
  if ((st = draw(r, "fourierformer_sensitivity.gp", v))) return st;
  step_end(r);
  char sub[4200], dir[8400];
  if (do_rates) {
    step_begin(r, "figure rates/mise_rates (plots/mise_rates.gp)");
    snprintf(sub, sizeof sub, "%s/rates", S->out);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    if ((st = draw(r, "mise_rates.gp", v))) return st;
    step_end(r);
    /* with pointwise rows, Theorem 2's constant against 1/p(x) too (same step) */
    int have_points = 0;
    for (size_t i = 0; i < r->nrrows; i++) have_points |= isfinite(r->rrows[i].point_p);
    step_begin(r, "figure%s regress_rates/regress_rates%s (plots/regress_rates.gp%s)", have_points ? "s" : "",
               have_points ? ", regress_points" : "", have_points ? ", regress_points.gp" : "");
    snprintf(sub, sizeof sub, "%s/regress_rates", S->out);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    if ((st = draw(r, "regress_rates.gp", v))) return st;
    if (have_points && (st = draw(r, "regress_points.gp", v))) return st;
    step_end(r);
    step_begin(r, "figure lemma1/lemma1 (plots/lemma1.gp)");
    snprintf(sub, sizeof sub, "%s/lemma1", S->out);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    if ((st = draw(r, "lemma1.gp", v))) return st;
    step_end(r);
  }
  if (do_flt) {
    step_begin(r, "figures flt/flt_* (plots/flt_study.gp)");
    snprintf(sub, sizeof sub, "%s/flt", S->out);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    if ((st = draw(r, "flt_study.gp", v))) return st;
    step_end(r);
  }
  return GFI_OK;
}

/* ---- summary ------------------------------------------------------------------- */

static const char *fmt_g(char *buf, double v) {
  snprintf(buf, 32, "%.3g", v);
  return buf;
}

/* 1 when v is within a factor sqrt(10) of the paper's number. */
static int same_order(double v, double paper) { return fabs(log10(v / paper)) <= 0.5; }

static void summary_experiment_rows(run *r, FILE *md, FILE *dat, const experiment *x, int pred) {
  const gfi_exp_repro_params *S = &r->S;
  const double *v = pred ? x->pmse : x->mse;
  size_t pol[2] = {x->iFixed, x->iOracle};
  for (int p = 0; p < 2; p++) {
    size_t a = pol[p], b = x->iBox;
    interval s = over_seeds(v + a * x->nbox + b, S->seeds, x->nR * x->nbox);
    char g1[32], g2[32], g3[32], g4[32];
    fprintf(md, "| %s%s | %s | %s | R = %.4g | [-%g, %g]^%zu | %s [%s, %s] | %s | %.3g |\n", x->title,
            pred ? " (prediction, noisy y)" : "", x->what, p ? "oracle" : "fixed", x->R[a], x->boxes[b],
            x->boxes[b], x->D, fmt_g(g1, s.mean), fmt_g(g2, s.lo), fmt_g(g3, s.hi), fmt_g(g4, x->paper),
            s.mean / x->paper);
    fprintf(dat, "%s%s %s ", x->key, pred ? "-pred" : "", p ? "oracle" : "fixed");
    double row[8] = {x->R[a], x->boxes[b], (double)S->seeds, s.mean, s.sd, s.lo, s.hi, x->paper};
    gfi_table_write_rows(dat, 1, 8, row);
  }
  /* data-driven: a radius per seed; the R column is their median */
  interval s = over_seeds(pred ? x->pmse_dd : x->mse_dd, S->seeds, 1);
  double med = dd_median(r, x), lo, hi;
  dd_range(r, x, &lo, &hi);
  char g1[32], g2[32], g3[32], g4[32];
  fprintf(md, "| %s%s | %s | data-driven (%s) | R = %.4g (median; %.4g..%.4g) | [-%g, %g]^%zu | %s [%s, %s] | %s | "
          "%.3g |\n", x->title, pred ? " (prediction, noisy y)" : "", x->what, x->regress ? "LOO-CV" : "LSCV", med, lo,
          hi, x->box, x->box, x->D, fmt_g(g1, s.mean), fmt_g(g2, s.lo), fmt_g(g3, s.hi), fmt_g(g4, x->paper),
          s.mean / x->paper);
  fprintf(dat, "%s%s data-driven ", x->key, pred ? "-pred" : "");
  double row[8] = {med, x->box, (double)S->seeds, s.mean, s.sd, s.lo, s.hi, x->paper};
  gfi_table_write_rows(dat, 1, 8, row);
}

static void summary_sensitivity(run *r, FILE *md, const experiment *x) {
  const gfi_exp_repro_params *S = &r->S;
  fprintf(md, "\n**%s** (%s; paper %.3g). Mean MSE over %zu seeds; **bold**: within a factor sqrt(10) "
          "of the paper's number (same order of magnitude).\n\n| R |", x->title, x->what, x->paper, S->seeds);
  for (size_t b = 0; b < x->nbox; b++) fprintf(md, " box [-%g, %g]^%zu |", x->boxes[b], x->boxes[b], x->D);
  fputs("\n|---|", md);
  for (size_t b = 0; b < x->nbox; b++) fputs("---|", md);
  fputc('\n', md);
  char match[2048] = "";
  size_t nmatch = 0;
  for (size_t a = 0; a < x->nR; a++) {
    fprintf(md, "| %.4g%s |", x->R[a], a == x->iOracle ? " (oracle R*)" : (a == x->iFixed ? " (fixed)" : ""));
    for (size_t b = 0; b < x->nbox; b++) {
      interval s = over_seeds(x->mse + a * x->nbox + b, S->seeds, x->nR * x->nbox);
      int ok = same_order(s.mean, x->paper);
      fprintf(md, ok ? " **%.3g** |" : " %.3g |", s.mean);
      if (ok) {
        size_t L = strlen(match);
        snprintf(match + L, sizeof match - L, "%sR = %.3g with box %g", nmatch ? "; " : "", x->R[a], x->boxes[b]);
        nmatch++;
      }
    }
    fputc('\n', md);
  }
  if (nmatch)
    fprintf(md, "\nSettings that reproduce the paper's order of magnitude (%.3g): %s.\n", x->paper, match);
  else
    fprintf(md, "\nNo setting in this table reproduces the paper's order of magnitude (%.3g).\n", x->paper);
}

/* The condition field in words for the summary. */
static const char *condition_text(const char *c) {
  if (strcmp(c, "not-C2") == 0) return "**not met**: p is not C^2";
  if (strcmp(c, "p-not-bounded-below") == 0) return "**not met**: the design density is not bounded below";
  return c;
}


/* Theorem 2 at fixed points: the rate per point and how the constant grows
 * with 1/p(x) (rows NAME@x of the regression check). */
static void regress_points_md(FILE *md, const gfi_exp_rate_row *w, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += isfinite(w[i].point_p);
  if (!k) return;
  fprintf(md, "\nTheorem 2 is pointwise: it bounds the MSE at x by C / (p(x)^2 J(R)). Rows `NAME@x` measure the "
              "MSE at fixed points of the design; C(x) is the geometric mean over N of MSE(N, x) divided by the "
              "claimed rate, gamma the slope of log C(x) on log(1/p(x)) (the bound allows gamma <= 2; a "
              "variance-dominated MSE gives gamma near 1).\n\n| point row | p(x) | 1/p(x)^2 | observed [95%%] | "
              "C(x) | C(x) p(x) | C(x) p(x)^2 | gamma | verdict |\n|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(w[i].point_p)) continue;
    double p = w[i].point_p;
    fprintf(md, "| %s | %.4f | %.4g | %.4f [%.4f, %.4f] | %.4g | %.4g | %.4g | %.3f | %s |\n", w[i].name, p,
            1 / (p * p), w[i].observed, w[i].lo95, w[i].hi95, w[i].point_C, w[i].point_C * p,
            w[i].point_C * p * p, w[i].point_gamma, gfi_exp_verdict_name(w[i].verdict));
  }
  fprintf(md, "\n![Theorem 2 at fixed points](regress_rates/regress_points.png)\n");
}

static void summary_rates(run *r, FILE *md) {
  fprintf(md, "\n## Density rate checks (Theorems 1, 3a, 3b; `gfi rates`)\n\nExact MISE at the optimal "
          "radius R*(N); slopes of log MISE* against log N with 95%% intervals (details and the Monte-Carlo "
          "check in `rates/rates_table.dat`).\n\n| theorem | truth | phi | claimed | classical | observed "
          "[95%%] | R* slope (claimed) | verdict | theorem's hypothesis |\n|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < r->ndrows; i++) {
    const gfi_exp_rate_row *w = r->drows + i;
    char phi[64];
    if (w->l == 0) snprintf(phi, sizeof phi, "Gaussian KDE");
    else snprintf(phi, sizeof phi, "z^%d", w->l);
    char b[7][32];
    fprintf(md, "| %s | %s | %s | %s | %s | %s [%s, %s] | %s (%s) | %s | %s |\n", w->name, w->setting, phi,
            md_num(b[0], 32, 6, w->claimed), md_num(b[1], 32, 6, w->classical), md_num(b[2], 32, 6, w->observed),
            md_num(b[3], 32, 6, w->lo95), md_num(b[4], 32, 6, w->hi95), md_num(b[5], 32, 6, w->observed_R),
            md_num(b[6], 32, 6, w->claimed_R), gfi_exp_verdict_name(w->verdict), condition_text(w->condition));
  }
  fprintf(md, "\n## Regression rate checks (Theorems 2, 4; `gfi regress-rates`)\n\nMonte-Carlo "
          "design-weighted integrated MSE; slope of log MSE on log N with 95%% intervals.\n\n| row | "
          "theorem | l | D | radius rule | N | claimed | observed [95%%] | verdict | theorem's hypothesis |\n"
          "|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < r->nrrows; i++) {
    const gfi_exp_rate_row *w = r->rrows + i;
    char rule[256] = "", l[16];
    for (const char *c = w->rule; *c && strlen(rule) + 3 < sizeof rule; c++) {
      size_t L = strlen(rule);
      if (*c == '|') rule[L++] = '\\';
      rule[L++] = *c;
      rule[L] = '\0';
    }
    if (w->l) snprintf(l, sizeof l, "%d", w->l);
    else snprintf(l, sizeof l, "Gaussian");
    char b[4][32];
    fprintf(md, "| %s | %s | %s | %zu | %s | %zu..%zu | %s | %s [%s, %s] | %s | %s |\n", w->name, w->theorem, l, w->D,
            rule, w->N_min, w->N_max, md_num(b[0], 32, 4, w->claimed), md_num(b[1], 32, 4, w->observed),
            md_num(b[2], 32, 4, w->lo95), md_num(b[3], 32, 4, w->hi95), gfi_exp_verdict_name(w->verdict),
            condition_text(w->condition));
  }
  regress_points_md(md, r->rrows, r->nrrows);
  if (r->have_l1) {
    fprintf(md, "\n### Lemma 1 (`gfi concentration`)\n\nBernstein's inequality for the density estimator at a point "
                "(the concentration Theorems 2 and 4 rest on): %s, phi = z^%d, N = %zu, R = N^(1/3), %zu "
                "replications. t(delta) is the deviation the bound allows with probability 1 - delta (exact "
                "variance by quadrature); the empirical frequency of |p_hat(x) - E p_hat(x)| >= t(delta) must be "
                "at most delta.\n\n| x | E p_hat(x) | MC mean (z) | delta | t(delta) | empirical frequency | "
                "grid points above the bound |\n|---|---|---|---|---|---|---|\n",
            r->l1p.model, r->l1p.l, r->l1p.N, r->l1p.reps);
    for (int i = 0; i < 2; i++)
      for (int d = 0; d < 4; d++) {
        const gfi_exp_lemma1_point *q = r->l1 + i;
        fprintf(md, "| %g | %.6f | %.6f (%.2f) | %g | %.4f | %.5f | %zu |\n", q->x, q->mean_exact, q->mean_mc,
                q->mean_z, q->delta[d], q->t_delta[d], q->freq[d], q->violations);
      }
    fprintf(md, "\n![Lemma 1](lemma1/lemma1.png)\n");
  }
  fprintf(md, "\nVerdicts (both tables): faster-than-claimed or consistent agree with the theorem's bound, "
          "slower-than-claimed speaks against it; baseline rows have no theorem.\n");
  fprintf(md, "\n![density rates](rates/mise_rates.png)\n![regression rates](regress_rates/regress_rates.png)\n");
}

static int write_summary(run *r, double elapsed_before) {
  const gfi_exp_repro_params *S = &r->S;
  experiment *ex = r->ex;
  const size_t nex = 3;
  char path[4096];
  int st = path_of(r, path, sizeof path, "summary.md");
  if (st) return st;
  FILE *md = NULL, *dat = NULL;
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  if ((st = gfi_exp_fopen(&md, path, &e))) return step_fail(r, st, "%s", e.msg);
  if ((st = out_open(r, &dat, "summary.dat", "each experiment's MSE over seeds beside the paper's number"))) {
    gfi_exp_fdiscard(md);
    return st;
  }
  gfi_dat_meta(dat, "interval", "mean, sd and 95%% Student-t interval over %zu seeds", S->seeds);
  fputs("# experiment policy R box seeds mse_mean sd lo95 hi95 paper\n", dat);

  fprintf(md, "# FourierFormer synthetic experiments, reproduced by gfi\n\n");
  fprintf(md, "`");
  for (int i = 0; i < r->ctx->argc; i++) fprintf(md, "%s%s", i ? " " : "", r->ctx->argv[i]);
  fprintf(md, "` — gfi %s (git %s), %d threads, %s mode; computation %.0f s before this summary. "
          "Every number below was computed in this run.\n\n",
          GFI_VERSION, gfi_git_revision(), gfi_threads_resolve(&r->opts),
          S->quick ? "quick" : S->full ? "full (--full)" : "default", elapsed_before);
  if (!S->quick && !S->full && strcmp(S->rates, "full") == 0)
    fprintf(md, "This is the default run, which keeps the main job within minutes: the Monte-Carlo checks of the "
            "exact MISE in the density rate checks stop at N = 1e6 (the exact MISE itself still runs to N = 1e9), and "
            "the regression rate checks use %d replications per size instead of 200. `gfi reproduce --full` "
            "(`bash tools/main.sh --full`) runs the Monte-Carlo checks to N = 1e7 and 200 replications.\n\n",
            REPRO_RREPS);
  fprintf(md, "## Settings\n\nThe paper (appendix E.4) uses phi(z) = z^4 but does not publish R, the covariance, the "
          "test range, the polynomial or the noise level, and its code does not contain these experiments. gfi's choices:\n\n");
  fprintf(md, "- kernel phi(z) = z^%d (FourierFormer's choice), per-axis radius R (isotropic)\n", r->K.l);
  fprintf(md, "- Figure 1A: truth `%s` (%s), N = %zu\n", ex[0].spec, gfi_model_describe(ex[0].m), ex[0].N);
  fprintf(md, "- Figure 1B: truth `%s` (%s), N = %zu\n", ex[1].spec, gfi_model_describe(ex[1].m), ex[1].N);
  {
    char nb[128];
    gfi_noise_describe(&ex[2].noise, nb, sizeof nb);
    fprintf(md, "- Figure 2: design `%s` (%s), truth `%s` (%s), noise `%s`, N = %zu pairs\n", ex[2].spec,
            gfi_model_describe(ex[2].m), S->truth, gfi_regfun_describe(ex[2].f), nb, ex[2].N);
  }
  fprintf(md, "- test points: M = %zu uniform in the box [-b, b]^D; default b = %g (density), %g (regression)\n",
          S->points, S->box, S->regress_box);
  fprintf(md, "- seeds: %zu replications; replication k draws its data from RNG stream (%llu, k) and its test "
          "points from stream (%llu, 3*2^61 + k); intervals are 95%% Student-t intervals over the seeds\n",
          S->seeds, (unsigned long long)S->seed, (unsigned long long)S->seed);
  fprintf(md, "- fixed radius: R = %g (the paper's range is R = 1..3)\n", S->R);
  for (size_t i = 0; i < nex; i++)
    fprintf(md, "- oracle radius, %s: R* = %.4g; %s\n", ex[i].title, ex[i].Rstar, ex[i].Rstar_method);
  fprintf(md, "- data-driven radius: chosen on each replication's own sample, as a user without the truth would: "
          "the isotropic R minimising least-squares cross-validation (Figures 1A, 1B) or the leave-one-out CV of "
          "Nadaraya-Watson (Figure 2), a log scan of %d radii over [%g, %g] refined by Brent's method (`gfi ropt "
          "--select`); scored in the default box\n", DD_SCAN(S->quick), DD_RLO, DD_RHI);

  fprintf(md, "\n## MSE beside the paper\n\n| experiment | what | policy | radius | test box | MSE mean [95%% "
          "interval] | paper | ratio to paper |\n|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < nex; i++) summary_experiment_rows(r, md, dat, ex + i, 0);
  summary_experiment_rows(r, md, dat, ex + 2, 1);
  if ((st = out_close(r, dat, "summary.dat"))) {
    gfi_exp_fdiscard(md);
    return st;
  }
  {
    double sd = gfi_noise_sd(&ex[2].noise, (double[2]){0, 0});
    fprintf(md, "\nFigure 2's MSE is measured against the regression function. The prediction rows measure it "
            "against noisy test responses y = f(x) + noise, whose expectation adds the noise variance (%.3g "
            "here); if the paper's 0.06 was measured that way, its noise standard deviation was at most "
            "sqrt(0.06) = 0.245.\n", sd * sd);
  }

  fprintf(md, "\n## Sensitivity to R and to the test box\n\nUniform test points weigh every part of the box "
          "alike: density values far in the tails are tiny, so a wider box averages in near-zero errors and "
          "lowers the MSE (roughly as 1/volume); for regression a wider box adds points where the design has "
          "no data and the estimate extrapolates, which raises the MSE by orders of magnitude. The radius "
          "trades bias (small R) against variance (large R).\n");
  for (size_t i = 0; i < nex; i++) summary_sensitivity(r, md, ex + i);
  fprintf(md, "\n**Where the paper can and cannot be matched.** Without the paper's covariance, test box, "
          "radius, polynomial and noise its numbers cannot be reproduced exactly; only their order of magnitude "
          "(within a factor sqrt(10)) can be checked, and the tables above show that it depends on the "
          "unpublished test box and radius as much as on the estimator.\n\n");
  for (size_t i = 0; i < nex; i++) {
    const experiment *x = ex + i;
    interval f = over_seeds(x->mse + x->iFixed * x->nbox + x->iBox, S->seeds, x->nR * x->nbox);
    interval o = over_seeds(x->mse + x->iOracle * x->nbox + x->iBox, S->seeds, x->nR * x->nbox);
    fprintf(md, "- %s, default box [-%g, %g]^%zu: fixed R = %g gives %.3g, %.3g times the paper's %.3g (%s); "
            "oracle R* = %.3g gives %.3g, %.3g times (%s)", x->title, x->box, x->box, x->D, S->R, f.mean,
            f.mean / x->paper, x->paper, same_order(f.mean, x->paper) ? "same order of magnitude" : "NOT matched",
            x->Rstar, o.mean, o.mean / x->paper, same_order(o.mean, x->paper) ? "same order of magnitude" : "NOT matched");
    {
      interval d = over_seeds(x->mse_dd, S->seeds, 1);
      fprintf(md, "; the data-driven radius (%s, median R = %.3g) gives %.3g, %.2f times the oracle's MSE",
              x->regress ? "LOO-CV" : "LSCV", dd_median(r, x), d.mean, d.mean / o.mean);
    }
    if (x->Rstar > 3) fprintf(md, "; R* lies outside the paper's range R = 1..3");
    double best = INFINITY, bR = 0, bb = 0;
    for (size_t a = 0; a < x->nR; a++)
      for (size_t b = 0; b < x->nbox; b++) {
        if (x->R[a] < 1 || x->R[a] > 3) continue;
        interval s = over_seeds(x->mse + a * x->nbox + b, S->seeds, x->nR * x->nbox);
        double d = fabs(log10(s.mean / x->paper));
        if (d < best) best = d, bR = x->R[a], bb = x->boxes[b];
      }
    if (isfinite(best))
      fprintf(md, ". Within R = 1..3 the closest setting of the table is R = %g with box %g (a factor %.2g %s)",
              bR, bb, pow(10, best), best <= 0.5 ? "away: matched" : "away: not matched");
    if (!x->regress)
      fprintf(md, ". Exact MISE at the fixed R: squared bias %.3g, variance %.3g", x->fix_bias2, x->fix_var);
    fputs(".\n", md);
  }
  fprintf(md, "\n![Figure 1A](fig1a.png)\n![Figure 1B](fig1b.png)\n![Figure 2](fig2.png)\n"
          "![Sensitivity](sensitivity.png)\n");
  if (strcmp(S->rates, "none") != 0) {
    summary_rates(r, md);
    summary_depth(r, md);
  }
  if (strcmp(S->flt, "none") != 0) {
    fprintf(md, "\n## FLT\n\nThe FLT study (%s mode) is in `flt/`: its tables in [flt/flt_summary.md]"
            "(flt/flt_summary.md) and its figures `flt/flt_*.png`.\n\n![FLT error vs r](flt/flt_err_vs_r.png)\n",
            strcmp(S->flt, "quick") == 0 ? "quick" : "full");
    /* FLT's own configurations, from the study's summary */
    char fs[4200], line[4096];
    snprintf(fs, sizeof fs, "%s/flt/flt_summary.md", S->out);
    FILE *in = fopen(fs, "r");
    int on = 0;
    while (in && fgets(line, sizeof line, in)) {
      if (strncmp(line, "## ", 3) == 0) on = strstr(line, "own configurations") != NULL;
      if (on) fprintf(md, "%s%s", strncmp(line, "## ", 3) == 0 ? "\n#" : "", line);
    }
    if (in) fclose(in);
    fprintf(md, "\n![FLT's own configurations](flt/flt_paper.png)\n");
  }
  if ((st = gfi_exp_fclose(md, path, &e))) return step_fail(r, st, "%s", e.msg);
  return GFI_OK;
}

/* ---- settings -------------------------------------------------------------------- */

static int mode_ok(const char *v) { return !strcmp(v, "full") || !strcmp(v, "quick") || !strcmp(v, "none"); }

/* The settings with the mode's defaults filled in. */
static int resolve(const gfi_exp_repro_params *p, gfi_exp_repro_params *S, gfi_exp_err *e) {
  *S = *p;
  if (!S->out || !*S->out || strpbrk(S->out, " \t\n'\"\\"))
    return gfi_exp_fail_param(e, GFI_EINVAL, "--out",
                              "'%s': the plot scripts need a directory name without spaces, quotes or backslashes",
                              S->out ? S->out : "");
  S->seeds = p->seeds ? p->seeds : (p->quick ? 3 : 5);
  S->n_density = p->n_density ? p->n_density : (p->quick ? 10000 : 100000);
  S->n_regress = p->n_regress ? p->n_regress : (p->quick ? 9000 : 90000);
  S->points = p->points ? p->points : (p->quick ? 300 : 1000);
  S->pilot_reps = p->pilot_reps ? p->pilot_reps : (p->quick ? 2 : 3);
  S->flt = p->flt ? p->flt : (p->quick ? "quick" : "full");
  S->rates = p->rates ? p->rates : "full";
  if (p->quick && strcmp(S->rates, "full") == 0) S->rates = "quick";
  if (S->seeds < 2) return gfi_exp_fail_param(e, GFI_EINVAL, "--seeds", "must be at least 2");
  if (!mode_ok(S->flt)) return gfi_exp_fail_param(e, GFI_EINVAL, "--flt", "expected full, quick or none, got '%s'", S->flt);
  if (!mode_ok(S->rates))
    return gfi_exp_fail_param(e, GFI_EINVAL, "--rates", "expected full, quick or none, got '%s'", S->rates);
  if (S->l < 1 || S->l > 8) return gfi_exp_fail_param(e, GFI_EORDER, "--phi", "power l must be in 1..8, got %d", S->l);
  if (!(S->R > 0) || !isfinite(S->R)) return gfi_exp_fail_param(e, GFI_ERADIUS, "--R", "must be > 0");
  if (!(S->box > 0) || !isfinite(S->box)) return gfi_exp_fail_param(e, GFI_ERADIUS, "--box", "must be > 0");
  if (!(S->regress_box > 0) || !isfinite(S->regress_box))
    return gfi_exp_fail_param(e, GFI_ERADIUS, "--regress-box", "must be > 0");
  const struct {
    const char *opt;
    const double *v;
    size_t n;
  } lists[3] = {{"--sens-R", S->sens_R, S->nsens_R},
                {"--sens-box", S->sens_box, S->nsens_box},
                {"--sens-regress-box", S->sens_regress_box, S->nsens_regress_box}};
  for (int i = 0; i < 3; i++) {
    if (!lists[i].v || !lists[i].n) return gfi_exp_fail_param(e, GFI_EEMPTY, lists[i].opt, "empty list");
    for (size_t j = 0; j < lists[i].n; j++)
      if (!(lists[i].v[j] > 0) || !isfinite(lists[i].v[j]))
        return gfi_exp_fail_param(e, GFI_ERADIUS, lists[i].opt, "values must be > 0, got %g", lists[i].v[j]);
  }
  /* each experiment keeps its N points in D = 2 dimensions (and the regression
   * its responses): at most 2^32 of them, the CLI's budget of 2^33 values
   * (docs/robustness.md) */
  const struct {
    const char *opt;
    size_t v;
  } sizes[3] = {{"--n-density", S->n_density}, {"--n-regress", S->n_regress}, {"--points", S->points}};
  for (int i = 0; i < 3; i++)
    if (sizes[i].v > ((size_t)1 << 32))
      return gfi_exp_fail_param(e, GFI_EINVAL, sizes[i].opt,
                                "%zu is above the budget of 2^32 = 4294967296 (points of 2 dimensions; "
                                "docs/robustness.md)", sizes[i].v);
  return GFI_OK;
}

static int setup_experiment(run *r, experiment *x, const char *key, const char *title, const char *what,
                            const char *spec, const char *opt, size_t D, int regress, size_t N, double paper,
                            double box) {
  memset(x, 0, sizeof *x);
  x->key = key, x->title = title, x->what = what, x->spec = spec, x->D = D, x->regress = regress;
  x->N = N, x->paper = paper, x->box = box;
  gfi_errinfo ei;
  gfi_errinfo_clear(&ei);
  int st = gfi_model_parse(&x->m, spec, D, &ei);
  if (st == GFI_ENOMEM) return gfi_exp_fail(r->e, st, "out of memory");
  if (st) return gfi_exp_fail_param(r->e, st, opt, "%s", ei.msg[0] ? ei.msg : gfi_strerror(st));
  if (regress) {
    gfi_errinfo_clear(&ei);
    st = gfi_regfun_parse(&x->f, r->S.truth, D, &ei);
    if (st == GFI_ENOMEM) return gfi_exp_fail(r->e, st, "out of memory");
    if (st) return gfi_exp_fail_param(r->e, st, "--truth", "%s", ei.msg[0] ? ei.msg : gfi_strerror(st));
    gfi_errinfo_clear(&ei);
    if ((st = gfi_noise_parse(&x->noise, r->S.noise, &ei)))
      return gfi_exp_fail_param(r->e, st, "--noise", "%s", ei.msg[0] ? ei.msg : "malformed");
  } else if (!gfi_mise_exact_supported(x->m)) {
    return gfi_exp_fail_param(r->e, GFI_EUNSUPPORTED, opt,
                              "'%s': the oracle radius needs the exact MISE (normal mixtures, Laplace, Cauchy, t)",
                              spec);
  }
  return GFI_OK;
}

static int setup(run *r, const gfi_exp_repro_params *p, const gfi_exp_ctx *ctx, gfi_exp_err *e) {
  memset(r, 0, sizeof *r);
  r->ctx = ctx, r->e = e;
  snprintf(r->step_name, sizeof r->step_name, "setting up the output folder");
  int st = resolve(p, &r->S, e);
  if (st) return st;
  const gfi_exp_repro_params *S = &r->S;
  if ((st = gfi_kernel_pow(&r->K, S->l))) return gfi_exp_fail_param(e, st, "--phi", "%s", gfi_strerror(st));
  gfi_default_opts(&r->opts);
  r->opts.nthreads = ctx->nthreads;
  if ((st = setup_experiment(r, r->ex + 0, "fig1a", "Figure 1A", "density, 1-D normal", S->model_1d, "--model-1d", 1, 0,
                             S->n_density, 1.29e-5, S->box)) ||
      (st = setup_experiment(r, r->ex + 1, "fig1b", "Figure 1B", "density, 2-D normal", S->model_2d, "--model-2d", 2, 0,
                             S->n_density, 2.42e-5, S->box)) ||
      (st = setup_experiment(r, r->ex + 2, "fig2", "Figure 2", "regression, cubic truth", S->design, "--design", 2, 1,
                             S->n_regress, 0.06, S->regress_box)))
    return st;
  return GFI_OK;
}

static void teardown(run *r) {
  for (int i = 0; i < 3; i++) experiment_free(r->ex + i);
  free(r->drows);
  free(r->rrows);
  for (int i = 0; i < 3; i++) free(r->hrows[i]);
  free(r->corr);
  free(r->gnuplot);
}

int gfi_exp_repro_check(const gfi_exp_repro_params *p, gfi_exp_err *e) {
  if (!p) return gfi_exp_fail(e, GFI_EINVAL, "no parameters");
  run *r = malloc(sizeof *r);
  if (!r) return gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
  gfi_exp_ctx ctx = {.program = "gfi reproduce"};
  int st = setup(r, p, &ctx, e);
  teardown(r);
  free(r);
  return st;
}

static int pipeline(run *r) {
  const gfi_exp_repro_params *S = &r->S;
  int st;
  if ((st = locate_tools(r))) return st;
  int do_rates = strcmp(S->rates, "none") != 0, do_flt = strcmp(S->flt, "none") != 0;
  r->step_total = 3 * (1 + (int)S->seeds + 1) + 1 + 3 * do_rates + do_flt + 4 + 3 * do_rates + do_flt + 1;
  /* density_depth and figures_depth: D = 3 and the correlation claim in the full run only */
  r->step_total += (strcmp(S->rates, "quick") == 0 ? 4 : 8) * do_rates;
  r->run_t0 = gfi_now();
  if ((st = make_dir(r, S->out))) return st;
  char p[4200];
  snprintf(p, sizeof p, "%s/logs", S->out);
  if ((st = make_dir(r, p))) return st;

  for (int i = 0; i < 3; i++) {
    experiment *x = r->ex + i;
    step_begin(r, "%s, oracle R", x->title);
    if ((st = x->regress ? oracle_regress(r, x) : oracle_density(r, x))) return st;
    if ((st = make_lists(r, x))) return st;
    step_end(r);
    for (size_t k = 0; k < S->seeds; k++) {
      step_begin(r, "%s, seed %zu of %zu (fixed R = %g, oracle R* = %.3g, %zu radii x %zu boxes)", x->title, k + 1,
                 S->seeds, S->R, x->Rstar, x->nR, x->nbox);
      if ((st = run_seed(r, x, k))) return st;
      step_end(r);
    }
    step_begin(r, "%s, curves of seed 1", x->title);
    if ((st = curves(r, x))) return st;
    step_end(r);
  }
  step_begin(r, "tables of the three figures");
  for (int i = 0; i < 3; i++)
    if ((st = write_mse(r, r->ex + i))) return st;
  step_end(r);
  if (do_rates && (st = rate_checks(r))) return st;
  if (do_rates && (st = density_depth(r))) return st;
  if (do_flt && (st = flt(r))) return st;
  if ((st = figures(r, do_rates, do_flt))) return st;
  if (do_rates && (st = figures_depth(r))) return st;
  step_begin(r, "summary (summary.md, summary.dat)");
  if ((st = write_summary(r, gfi_now() - r->run_t0))) return st;
  step_end(r);
  if (r->progress)
    fprintf(r->progress, "gfi reproduce: done in %.0f s: %s/summary.md\n", gfi_now() - r->run_t0, S->out);
  return GFI_OK;
}

int gfi_exp_reproduce(const gfi_exp_repro_params *p, const gfi_exp_ctx *ctx, gfi_exp_err *e) {
  if (!p || !ctx) return gfi_exp_fail(e, GFI_EINVAL, "no parameters");
  run *r = malloc(sizeof *r);
  if (!r) return gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
  int st = setup(r, p, ctx, e);
  r->progress = ctx->progress;
  r->live = ctx->progress ? ctx->live : NULL;
  if (!st) st = pipeline(r);
  teardown(r);
  free(r);
  return st;
}
