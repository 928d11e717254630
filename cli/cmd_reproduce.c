/* gfi reproduce: FourierFormer's synthetic density and regression figures
 * (appendix E.4, Figures 1 and 2) for two radius policies over several
 * seeds, a sensitivity table over R and the test box, the density and
 * regression rate checks, the FLT study and every figure, with a summary
 * beside the paper's numbers. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gsl/gsl_cdf.h>
#include "cli.h"
#include "commands.h"

extern char **environ;

#ifndef GFI_SOURCE_PLOTS_DIR
#define GFI_SOURCE_PLOTS_DIR ""
#endif
#ifndef GFI_INSTALL_PLOTS_DIR
#define GFI_INSTALL_PLOTS_DIR ""
#endif
#ifndef GFI_BUILD_FLT_STUDY
#define GFI_BUILD_FLT_STUDY ""
#endif
#ifndef GFI_INSTALL_FLT_STUDY
#define GFI_INSTALL_FLT_STUDY ""
#endif

static const char *help =
  "usage: gfi reproduce [--out DIR] [--quick] [options]\n\n"
  "Reproduce FourierFormer's synthetic experiments (appendix E.4) and write data,\n"
  "figures (PNG and PDF, drawn by gnuplot) and DIR/summary.md:\n"
  "  Figure 1A  density of a 1-D normal from N = 100000 points, MSE at M = 1000 test\n"
  "             points uniform in the box [-b, b]          (paper: MSE 1.29e-5)\n"
  "  Figure 1B  the same for a 2-D normal with a dense covariance  (paper: 2.42e-5)\n"
  "  Figure 2   Nadaraya-Watson regression from N = 90000 pairs with a correlated\n"
  "             normal design and a cubic truth, MSE against the truth at M test\n"
  "             points uniform in [-b, b]^2                 (paper: MSE 0.06)\n"
  "each for two radius policies, over K seeds (seed k = RNG stream k of --seed):\n"
  "  fixed   R = --R (default 2, the middle of the paper's R = 1..3)\n"
  "  oracle  density: R* minimising the exact MISE (Plancherel) for the normal truth;\n"
  "          regression: R* minimising the Monte-Carlo MSE against the truth at\n"
  "          uniform test points in the default box, over pilot replications on\n"
  "          seed S + 1000003 (not the reported seeds)\n"
  "then a sensitivity table (MSE for each R of --sens-R and each box of --sens-box),\n"
  "the density rate checks (gfi rates --size full), the regression rate checks\n"
  "(gfi regress-rates --size large) and the FLT study (flt_study) into DIR/flt.\n"
  "The phi of every experiment is z^4 (phi = pow:4) unless --phi says otherwise.\n\n"
  "options (defaults of the full run; --quick changes the marked ones):\n"
  "  --out DIR          output directory (default results; no spaces or quotes)\n"
  "  --quick            small sizes (under a minute): N 10000 / 9000, M 300, 3 seeds,\n"
  "                     smaller grids, reduced rate checks, flt_study --quick\n"
  "  --seeds K          replications (default 5; quick 3; K >= 2)\n"
  "  --seed S           base seed (default 1)\n"
  "  --n-density N      sample size of Figures 1A and 1B (default 100000; quick 10000)\n"
  "  --n-regress N      sample size of Figure 2 (default 90000; quick 9000)\n"
  "  --points M         test points per box (default 1000; quick 300)\n"
  "  --phi pow:L        kernel phi(z) = z^L (default pow:4)\n"
  "  --R R              the fixed radius (default 2)\n"
  "  --model-1d SPEC    Figure 1A truth (default normal, i.e. N(0, 1))\n"
  "  --model-2d SPEC    Figure 1B truth (default normal:cov=1,0.5,0.5,1)\n"
  "  --design SPEC      Figure 2 design, 2-D (default normal:cov=1,0.5,0.5,1)\n"
  "  --truth F          Figure 2 regression function (default poly:0,1,-0.5,0.2,\n"
  "                     f(x) = x1 - 0.5 x1^2 + 0.2 x1^3)\n"
  "  --noise N          Figure 2 noise (default gauss:0.5)\n"
  "  --box B            density test box [-B, B]^D (default 3)\n"
  "  --regress-box B    regression test box [-B, B]^2 (default 2)\n"
  "  --sens-R LIST      radii of the sensitivity table (default 1,2,3,5,8,13; the fixed\n"
  "                     and oracle radii are always added)\n"
  "  --sens-box LIST    density boxes of the sensitivity table (default 2,3,5,10)\n"
  "  --sens-regress-box LIST  regression boxes (default 1,2,3,5)\n"
  "  --pilot-reps K     pilot replications of the regression oracle (default 3; quick 2)\n"
  "  --flt MODE         full, quick or none (default full; quick with --quick)\n"
  "  --rates MODE       full, quick or none: the density and regression rate checks\n"
  "                     (default full = gfi rates --size full and regress-rates\n"
  "                     --size large, a few minutes; quick = a few sizes and\n"
  "                     replications, seconds)\n"
  "  --threads T        threads (default 0 = all cores)\n"
  "  --quiet            no step lines on stderr\n\n"
  "Every step prints '[k/n] step ... seconds' on stderr; a failing step prints\n"
  "\"gfi reproduce: step 'NAME' failed: REASON\" and the exit status is 1.\n"
  "gnuplot must be on PATH. Plot scripts: $GFI_PLOTS_DIR, else the source tree's\n"
  "plots/, else the installed share/gfi/plots. flt_study: $GFI_FLT_STUDY, else the\n"
  "build tree's, else the installed libexec/gfi/flt_study.\n";

/* ---- settings ----------------------------------------------------------------- */

typedef struct {
  const char *out;
  int quick, quiet, nthreads;
  size_t seeds, n_density, n_regress, M, pilot_reps;
  uint64_t seed;
  const char *phi, *model1, *model2, *design, *truth, *noise, *flt, *rates;
  double R, box, rbox;
  double *sensR, *sensBox, *sensRBox;
  size_t nsensR, nsensBox, nsensRBox;
} settings;

static settings S;
static gfi_kernel K;
static gfi_opts OPTS;

/* ---- steps -------------------------------------------------------------------- */

static int step_no, step_total;
static char step_name[160] = "setting up the output folder";
static double step_t0, run_t0;

static void step_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void step_begin(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(step_name, sizeof step_name, fmt, ap);
  va_end(ap);
  step_no++;
  if (!S.quiet) {
    fprintf(stderr, "[%d/%d] %s ... ", step_no, step_total, step_name);
    fflush(stderr);
  }
  step_t0 = gfi_now();
}

static void step_end(void) {
  if (!S.quiet) fprintf(stderr, "%.1f s\n", gfi_now() - step_t0);
}

static _Noreturn void step_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void step_fail(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!S.quiet && step_no > 0) fputc('\n', stderr); /* end the open "[k/n] step ..." line */
  cli_die(EXIT_RUNTIME, "step '%s' failed: %s", step_name, msg);
}

static void step_check(int st, const char *what) {
  if (st) step_fail("%s: %s", what, gfi_strerror(st));
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) step_fail("out of memory");
  return p;
}

/* ---- files and child processes ------------------------------------------------ */

static void path_of(char *buf, size_t n, const char *name) {
  if ((size_t)snprintf(buf, n, "%s/%s", S.out, name) >= n) step_fail("path too long: %s/%s", S.out, name);
}

static FILE *out_open(const char *name, const char *what) {
  char path[4096];
  path_of(path, sizeof path, name);
  FILE *f = fopen(path, "w");
  if (!f) step_fail("cannot write %s: %s", path, strerror(errno));
  cli_header(f);
  if (what) cli_meta(f, "table", "%s", what);
  return f;
}

static void out_close(FILE *f, const char *name) {
  if (ferror(f) | fclose(f)) step_fail("error writing %s/%s", S.out, name);
}

static void make_dir(const char *path) {
  if (mkdir(path, 0777) != 0 && errno != EEXIST) step_fail("cannot create %s: %s", path, strerror(errno));
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

/* Run argv[0] (a path; or looked up on PATH when search is set) with stdin
 * from /dev/null and stdout and stderr into log; fail the step on a non-zero
 * exit, naming the program and the log's last line. */
static void run_child(char *const argv[], int search, const char *log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = search ? posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)
                  : posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) step_fail("cannot run %s: %s", argv[0], strerror(rc));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) step_fail("waiting for %s: %s", argv[0], strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  char tail[512];
  last_line(log, tail, sizeof tail);
  if (WIFEXITED(status))
    step_fail("%s exited with status %d (log %s): %s", argv[0], WEXITSTATUS(status), log, tail);
  step_fail("%s killed by signal %d (log %s)", argv[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0, log);
}

static int is_exec(const char *p) { return p && *p && access(p, X_OK) == 0; }

/* gnuplot on PATH, or NULL. */
static char *find_on_path(const char *prog) {
  const char *path = getenv("PATH");
  if (!path) return NULL;
  char *copy = strdup(path), *save = NULL, *found = NULL;
  for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", *d ? d : ".", prog);
    struct stat sb;
    if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) && access(buf, X_OK) == 0) found = strdup(buf);
  }
  free(copy);
  return found;
}

static char *gnuplot_path, plots_dir[4096], flt_prog[4096], self_exe[4096];

static int has_script(const char *dir) {
  char p[4200];
  snprintf(p, sizeof p, "%s/fourierformer_fig1a.gp", dir);
  return *dir && access(p, R_OK) == 0;
}

static void locate_tools(void) {
  gnuplot_path = find_on_path("gnuplot");
  if (!gnuplot_path)
    cli_die(EXIT_RUNTIME, "gnuplot not found on PATH: the figures need it "
            "(Debian: apt-get install gnuplot-nox; tools/main.sh installs it)");
  const char *env = getenv("GFI_PLOTS_DIR");
  if (env && *env) {
    if (!has_script(env)) cli_die(EXIT_RUNTIME, "GFI_PLOTS_DIR=%s has no fourierformer_fig1a.gp", env);
    snprintf(plots_dir, sizeof plots_dir, "%s", env);
  } else if (has_script(GFI_SOURCE_PLOTS_DIR)) {
    snprintf(plots_dir, sizeof plots_dir, "%s", GFI_SOURCE_PLOTS_DIR);
  } else if (has_script(GFI_INSTALL_PLOTS_DIR)) {
    snprintf(plots_dir, sizeof plots_dir, "%s", GFI_INSTALL_PLOTS_DIR);
  } else {
    cli_die(EXIT_RUNTIME, "plot scripts not found (set GFI_PLOTS_DIR to gfi's plots/ directory; "
            "looked in '%s' and '%s')", GFI_SOURCE_PLOTS_DIR, GFI_INSTALL_PLOTS_DIR);
  }
  if (strcmp(S.flt, "none") != 0) {
    env = getenv("GFI_FLT_STUDY");
    if (env && *env) {
      if (!is_exec(env)) cli_die(EXIT_RUNTIME, "GFI_FLT_STUDY=%s is not an executable", env);
      snprintf(flt_prog, sizeof flt_prog, "%s", env);
    } else if (is_exec(GFI_BUILD_FLT_STUDY)) {
      snprintf(flt_prog, sizeof flt_prog, "%s", GFI_BUILD_FLT_STUDY);
    } else if (is_exec(GFI_INSTALL_FLT_STUDY)) {
      snprintf(flt_prog, sizeof flt_prog, "%s", GFI_INSTALL_FLT_STUDY);
    } else {
      cli_die(EXIT_RUNTIME, "flt_study not found (set GFI_FLT_STUDY, or --flt none; looked for '%s' and '%s')",
              GFI_BUILD_FLT_STUDY, GFI_INSTALL_FLT_STUDY);
    }
  }
  ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  if (n > 0) self_exe[n] = '\0';
  else snprintf(self_exe, sizeof self_exe, "%s", cli_argv[0]);
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
static void draw(const char *script, const char *vars) {
  char dir[8300], e[16384], sp[4200], log[4200];
  gp_str(dir, sizeof dir, S.out);
  snprintf(e, sizeof e, "dir=%s; %s", dir, vars ? vars : "");
  snprintf(sp, sizeof sp, "%s/%s", plots_dir, script);
  snprintf(log, sizeof log, "%s/logs/gnuplot_%s.log", S.out, script);
  char *argv[] = {gnuplot_path, "-e", e, sp, NULL};
  run_child(argv, 0, log);
}

/* ---- the experiments ---------------------------------------------------------- */

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
} experiment;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorted union of list and extra values; indices of the extras. */
static double *merge(const double *list, size_t n, const double *extra, size_t ne, size_t *nout,
                     size_t *idx) {
  double *v = xmalloc((n + ne) * sizeof *v);
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
  interval r = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) r.mean += x[i * stride];
  r.mean /= (double)n;
  for (size_t i = 0; i < n; i++) r.sd += (x[i * stride] - r.mean) * (x[i * stride] - r.mean);
  r.sd = sqrt(r.sd / (double)(n - 1));
  double t = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * r.sd / sqrt((double)n);
  r.lo = r.mean - t;
  r.hi = r.mean + t;
  return r;
}

static double *iso(const double *R, size_t nR, size_t D) {
  double *v = xmalloc(nR * D * sizeof *v);
  for (size_t a = 0; a < nR; a++)
    for (size_t j = 0; j < D; j++) v[a * D + j] = R[a];
  return v;
}

static void oracle_density(experiment *x) {
  gfi_mise_opts mo;
  gfi_mise_default_opts(&mo);
  mo.base.nthreads = S.nthreads;
  gfi_mise_result res;
  step_check(gfi_ropt(x->m, K.l, (double)x->N, NULL, &mo, &x->Rstar, &res), "optimal radius (gfi_ropt)");
  x->Rstar_crit = res.mise;
  double Rf[2] = {S.R, S.R};
  step_check(gfi_mise_exact(x->m, K.l, (double)x->N, Rf, &mo, &res), "exact MISE at the fixed radius");
  x->fix_bias2 = res.bias2, x->fix_var = res.var;
  snprintf(x->Rstar_method, sizeof x->Rstar_method,
           "R* minimises the exact MISE over R^%zu (Plancherel, gfi_ropt), MISE(R*) = %.3g", x->D, res.mise);
}

static void oracle_regress(experiment *x) {
  size_t nev = 0;
  double mse;
  step_check(gfi_repro_regress_ropt(x->m, x->f, &x->noise, &K, x->N, S.M, x->box, S.pilot_reps,
                                    S.seed + 1000003ULL, 0.5, 32, S.quick ? 7 : 13, &OPTS, &x->Rstar,
                                    &mse, &nev),
             "oracle radius (gfi_repro_regress_ropt)");
  x->Rstar_crit = mse;
  snprintf(x->Rstar_method, sizeof x->Rstar_method,
           "R* minimises the Monte-Carlo MSE against the truth at %zu uniform points in [-%g, %g]^2 over "
           "%zu pilot replications on seed %llu (%zu radii in [0.5, 32], golden section on log R); "
           "pilot MSE(R*) = %.3g",
           S.M, x->box, x->box, S.pilot_reps, (unsigned long long)(S.seed + 1000003ULL), nev, mse);
}

/* After the oracle: the sorted radius and box lists with the indices of
 * the fixed and oracle radii and of the default box. */
static void make_lists(experiment *x) {
  double extraR[2] = {S.R, x->Rstar};
  size_t idx[2];
  x->R = merge(S.sensR, S.nsensR, extraR, 2, &x->nR, idx);
  x->iFixed = idx[0], x->iOracle = idx[1];
  x->boxes = x->regress ? merge(S.sensRBox, S.nsensRBox, &x->box, 1, &x->nbox, &x->iBox)
                        : merge(S.sensBox, S.nsensBox, &x->box, 1, &x->nbox, &x->iBox);
  size_t n = S.seeds * x->nR * x->nbox;
  x->mse = xmalloc(n * sizeof *x->mse);
  x->pmse = x->regress ? xmalloc(n * sizeof *x->pmse) : NULL;
}

static void run_seed(experiment *x, size_t k) {
  double *Rv = iso(x->R, x->nR, x->D);
  gfi_repro_grid g = {x->nR, Rv, x->nbox, x->boxes};
  size_t off = k * x->nR * x->nbox, nf = 0;
  if (x->regress)
    step_check(gfi_repro_regress(x->m, x->f, &x->noise, &K, x->N, S.M, S.seed, k, &g, &OPTS, x->mse + off,
                                 x->pmse + off, &nf),
               "regression MSE (gfi_repro_regress)");
  else
    step_check(gfi_repro_density(x->m, &K, x->N, S.M, S.seed, k, &g, &OPTS, x->mse + off),
               "density MSE (gfi_repro_density)");
  x->nflagged += nf;
  for (size_t i = 0; i < x->nR * x->nbox; i++)
    if (!(x->mse[off + i] > 0) || !isfinite(x->mse[off + i]))
      step_fail("MSE is %g at R = %g, box %g", x->mse[off + i], x->R[i / x->nbox], x->boxes[i % x->nbox]);
  free(Rv);
}

static void meta_common(FILE *f, const experiment *x) {
  cli_meta(f, "experiment", "%s: %s", x->title, x->what);
  cli_meta(f, x->regress ? "design" : "model", "%s (%s), dim %zu", x->spec, gfi_model_describe(x->m), x->D);
  if (x->regress) {
    char nb[128];
    gfi_noise_describe(&x->noise, nb, sizeof nb);
    cli_meta(f, "truth", "%s (%s)", S.truth, gfi_regfun_describe(x->f));
    cli_meta(f, "noise", "%s", nb);
  }
  cli_meta(f, "kernel", "phi(z) = z^%d", K.l);
  cli_meta(f, "n", "%zu", x->N);
  cli_meta(f, "test-points", "%zu uniform in [-b, b]^%zu, default b = %g, RNG stream (seed, %llu + k)", S.M,
           x->D, x->box, (unsigned long long)GFI_REPRO_TEST_STREAM);
  cli_meta(f, "seeds", "%zu: replication k = 0..%zu draws its data from RNG stream (%llu, k)", S.seeds,
           S.seeds - 1, (unsigned long long)S.seed);
  cli_meta(f, "fixed-R", "%.17g", S.R);
  cli_meta(f, "oracle-R", "%.17g (%s)", x->Rstar, x->Rstar_method);
  cli_meta(f, "paper", "%g", x->paper);
}

static void write_mse(const experiment *x) {
  char name[64];
  snprintf(name, sizeof name, "%s_mse.dat", x->key);
  FILE *f = out_open(name, "MSE of every replication, radius and box");
  meta_common(f, x);
  fputs(x->regress ? "# seed R box mse pred_mse\n" : "# seed R box mse\n", f);
  for (size_t k = 0; k < S.seeds; k++)
    for (size_t a = 0; a < x->nR; a++)
      for (size_t b = 0; b < x->nbox; b++) {
        size_t i = (k * x->nR + a) * x->nbox + b;
        double v[5] = {(double)k, x->R[a], x->boxes[b], x->mse[i], x->regress ? x->pmse[i] : 0};
        gfi_table_write_rows(f, 1, x->regress ? 5 : 4, v);
      }
  out_close(f, name);
  snprintf(name, sizeof name, "%s_sensitivity.dat", x->key);
  f = out_open(name, "sensitivity: MSE over seeds for each radius (rows) and box (one block per box)");
  meta_common(f, x);
  cli_meta(f, "interval", "mean and 95%% Student-t interval over the %zu seeds", S.seeds);
  fputs("# R mse_mean lo95 hi95 sd box fixed oracle\n", f);
  for (size_t b = 0; b < x->nbox; b++) {
    fprintf(f, "# box [-%g, %g]^%zu\n", x->boxes[b], x->boxes[b], x->D);
    for (size_t a = 0; a < x->nR; a++) {
      interval s = over_seeds(x->mse + a * x->nbox + b, S.seeds, x->nR * x->nbox);
      double v[8] = {x->R[a], s.mean, s.lo, s.hi, s.sd, x->boxes[b], a == x->iFixed, a == x->iOracle};
      gfi_table_write_rows(f, 1, 8, v);
    }
    fputs("\n\n", f);
  }
  out_close(f, name);
}

/* Data of seed 0 and the estimates at both policies' radii on a grid. */
static void curves(experiment *x) {
  size_t D = x->D, N = x->N;
  double *data = xmalloc(N * D * sizeof *data), *y = x->regress ? xmalloc(N * sizeof *y) : NULL;
  gsl_rng *r = gfi_rng_stream(S.seed, 0);
  if (!r) step_fail("out of memory");
  if (x->regress)
    step_check(gfi_regress_sample(x->m, x->f, &x->noise, r, N, data, y), "sampling");
  else
    step_check(gfi_model_sample(x->m, r, N, data), "sampling");
  gsl_rng_free(r);
  double Rs[2] = {S.R, x->Rstar};
  char name[64];
  if (!x->regress && D == 1) {
    size_t G = S.quick ? 301 : 1201;
    double *q = xmalloc(G * sizeof *q), *t = xmalloc(G * sizeof *t), *e = xmalloc(2 * G * sizeof *e);
    for (size_t i = 0; i < G; i++) q[i] = -x->box + 2 * x->box * (double)i / (double)(G - 1);
    step_check(gfi_model_pdf(x->m, G, q, t), "pdf");
    for (int a = 0; a < 2; a++) {
      gfi_density_plan *p;
      step_check(gfi_density_plan_fourier(&p, &K, N, 1, data, NULL, Rs + a, &OPTS), "density plan");
      step_check(gfi_density_eval(p, G, q, e + a * G), "density evaluation");
      gfi_density_destroy(p);
    }
    snprintf(name, sizeof name, "%s_curve.dat", x->key);
    FILE *f = out_open(name, "truth and the estimates of seed 0 on a grid");
    meta_common(f, x);
    fputs("# x truth fixed_R oracle_R\n", f);
    for (size_t i = 0; i < G; i++) {
      double v[4] = {q[i], t[i], e[i], e[G + i]};
      gfi_table_write_rows(f, 1, 4, v);
    }
    out_close(f, name);
    free(q), free(t), free(e);
  } else if (!x->regress) {
    size_t G = S.quick ? 31 : 81, M = G * G;
    double *q = xmalloc(2 * M * sizeof *q), *t = xmalloc(M * sizeof *t), *e = xmalloc(2 * M * sizeof *e);
    for (size_t a = 0; a < G; a++)
      for (size_t b = 0; b < G; b++) {
        q[2 * (a * G + b)] = -x->box + 2 * x->box * (double)a / (double)(G - 1);
        q[2 * (a * G + b) + 1] = -x->box + 2 * x->box * (double)b / (double)(G - 1);
      }
    step_check(gfi_model_pdf(x->m, M, q, t), "pdf");
    for (int a = 0; a < 2; a++) {
      double R2[2] = {Rs[a], Rs[a]};
      gfi_density_plan *p;
      step_check(gfi_density_plan_fourier(&p, &K, N, 2, data, NULL, R2, &OPTS), "density plan");
      step_check(gfi_density_eval(p, M, q, e + a * M), "density evaluation");
      gfi_density_destroy(p);
    }
    snprintf(name, sizeof name, "%s_grid.dat", x->key);
    FILE *f = out_open(name, "truth and the estimates of seed 0 on a grid (one block per x1)");
    meta_common(f, x);
    fputs("# x1 x2 truth fixed_R oracle_R\n", f);
    for (size_t a = 0; a < G; a++) {
      for (size_t b = 0; b < G; b++) {
        size_t i = a * G + b;
        double v[5] = {q[2 * i], q[2 * i + 1], t[i], e[i], e[M + i]};
        gfi_table_write_rows(f, 1, 5, v);
      }
      fputc('\n', f);
    }
    out_close(f, name);
    free(q), free(t), free(e);
  } else {
    /* the slice x2 = 0 and the default box's test points of seed 0 */
    size_t G = S.quick ? 101 : 201, M = S.M, Q = G + M;
    double *q = xmalloc(2 * Q * sizeof *q), *t = xmalloc(Q * sizeof *t), *e = xmalloc(2 * Q * sizeof *e);
    for (size_t i = 0; i < G; i++) {
      q[2 * i] = -x->box + 2 * x->box * (double)i / (double)(G - 1);
      q[2 * i + 1] = 0;
    }
    step_check(gfi_repro_unit_points(S.seed, 0, 2, M, q + 2 * G), "test points");
    for (size_t i = 2 * G; i < 2 * Q; i++) q[i] *= x->box;
    step_check(gfi_regfun_eval(x->f, Q, q, t), "truth");
    for (int a = 0; a < 2; a++) {
      double R2[2] = {Rs[a], Rs[a]};
      gfi_nw_plan *p;
      step_check(gfi_nw_plan_fourier(&p, &K, N, 2, 1, data, y, R2, &OPTS), "regression plan");
      int st = gfi_nw_eval(p, Q, q, e + a * Q, NULL);
      if (st != GFI_EDENOM) step_check(st, "regression evaluation");
      gfi_nw_destroy(p);
    }
    snprintf(name, sizeof name, "%s_slice.dat", x->key);
    FILE *f = out_open(name, "truth and the estimates of seed 0 along the slice x2 = 0");
    meta_common(f, x);
    fputs("# x1 x2 truth fixed_R oracle_R\n", f);
    for (size_t i = 0; i < G; i++) {
      double v[5] = {q[2 * i], q[2 * i + 1], t[i], e[i], e[Q + i]};
      gfi_table_write_rows(f, 1, 5, v);
    }
    out_close(f, name);
    snprintf(name, sizeof name, "%s_points.dat", x->key);
    f = out_open(name, "truth and the estimates of seed 0 at its test points in the default box");
    meta_common(f, x);
    fputs("# x1 x2 truth fixed_R oracle_R\n", f);
    for (size_t i = G; i < Q; i++) {
      double v[5] = {q[2 * i], q[2 * i + 1], t[i], e[i], e[Q + i]};
      gfi_table_write_rows(f, 1, 5, v);
    }
    out_close(f, name);
    free(q), free(t), free(e);
  }
  free(data);
  free(y);
}

/* ---- summary ------------------------------------------------------------------- */

static const char *fmt_g(char *buf, double v) {
  snprintf(buf, 32, "%.3g", v);
  return buf;
}

/* Rows of a table file (non-'#' lines) split into at most 32 words. */
typedef struct {
  size_t n;
  char words[32][96];
} row_words;

static size_t read_rows(const char *path, row_words *rows, size_t max) {
  FILE *f = fopen(path, "r");
  if (!f) step_fail("cannot read %s: %s", path, strerror(errno));
  char line[4096];
  size_t n = 0;
  while (n < max && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    row_words *r = rows + n++;
    r->n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w && r->n < 32; w = strtok_r(NULL, " \t\n", &save))
      snprintf(r->words[r->n++], sizeof r->words[0], "%s", w);
  }
  fclose(f);
  return n;
}

static void underscores(char *s) {
  for (; *s; s++)
    if (*s == '_') *s = ' ';
}

/* 1 when v is within a factor sqrt(10) of the paper's number. */
static int same_order(double v, double paper) { return fabs(log10(v / paper)) <= 0.5; }

static void summary_experiment_rows(FILE *md, FILE *dat, const experiment *x, int pred) {
  const double *v = pred ? x->pmse : x->mse;
  size_t pol[2] = {x->iFixed, x->iOracle};
  for (int p = 0; p < 2; p++) {
    size_t a = pol[p], b = x->iBox;
    interval s = over_seeds(v + a * x->nbox + b, S.seeds, x->nR * x->nbox);
    char g1[32], g2[32], g3[32], g4[32];
    fprintf(md, "| %s%s | %s | %s | R = %.4g | [-%g, %g]^%zu | %s [%s, %s] | %s | %.3g |\n", x->title,
            pred ? " (prediction, noisy y)" : "", x->what, p ? "oracle" : "fixed", x->R[a], x->boxes[b],
            x->boxes[b], x->D, fmt_g(g1, s.mean), fmt_g(g2, s.lo), fmt_g(g3, s.hi), fmt_g(g4, x->paper),
            s.mean / x->paper);
    fprintf(dat, "%s%s %s ", x->key, pred ? "-pred" : "", p ? "oracle" : "fixed");
    double row[8] = {x->R[a], x->boxes[b], (double)S.seeds, s.mean, s.sd, s.lo, s.hi, x->paper};
    gfi_table_write_rows(dat, 1, 8, row);
  }
}

static void summary_sensitivity(FILE *md, const experiment *x) {
  fprintf(md, "\n**%s** (%s; paper %.3g). Mean MSE over %zu seeds; **bold**: within a factor sqrt(10) "
          "of the paper's number (same order of magnitude).\n\n| R |", x->title, x->what, x->paper, S.seeds);
  for (size_t b = 0; b < x->nbox; b++) fprintf(md, " box [-%g, %g]^%zu |", x->boxes[b], x->boxes[b], x->D);
  fputs("\n|---|", md);
  for (size_t b = 0; b < x->nbox; b++) fputs("---|", md);
  fputc('\n', md);
  char match[2048] = "";
  size_t nmatch = 0;
  for (size_t a = 0; a < x->nR; a++) {
    fprintf(md, "| %.4g%s |", x->R[a], a == x->iOracle ? " (oracle R*)" : (a == x->iFixed ? " (fixed)" : ""));
    for (size_t b = 0; b < x->nbox; b++) {
      interval s = over_seeds(x->mse + a * x->nbox + b, S.seeds, x->nR * x->nbox);
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

static void write_summary(experiment *ex, size_t nex, double elapsed_before) {
  char path[4096];
  path_of(path, sizeof path, "summary.md");
  FILE *md = fopen(path, "w");
  if (!md) step_fail("cannot write %s: %s", path, strerror(errno));
  FILE *dat = out_open("summary.dat", "each experiment's MSE over seeds beside the paper's number");
  cli_meta(dat, "interval", "mean, sd and 95%% Student-t interval over %zu seeds", S.seeds);
  fputs("# experiment policy R box seeds mse_mean sd lo95 hi95 paper\n", dat);

  fprintf(md, "# FourierFormer synthetic experiments, reproduced by gfi\n\n");
  fprintf(md, "`");
  for (int i = 0; i < cli_argc; i++) fprintf(md, "%s%s", i ? " " : "", cli_argv[i]);
  fprintf(md, "` — gfi %s (git %s), %d threads, %s mode; computation %.0f s before this summary. "
          "Every number below was computed in this run.\n\n",
          GFI_VERSION, gfi_git_revision(), gfi_threads_resolve(&OPTS), S.quick ? "quick" : "full",
          elapsed_before);
  fprintf(md, "## Settings\n\nThe paper (appendix E.4) uses phi(z) = z^4 but does not publish R, the covariance, the "
          "test range, the polynomial or the noise level, and its code does not contain these experiments. gfi's choices:\n\n");
  fprintf(md, "- kernel phi(z) = z^%d (FourierFormer's choice), per-axis radius R (isotropic)\n", K.l);
  fprintf(md, "- Figure 1A: truth `%s` (%s), N = %zu\n", ex[0].spec, gfi_model_describe(ex[0].m), ex[0].N);
  fprintf(md, "- Figure 1B: truth `%s` (%s), N = %zu\n", ex[1].spec, gfi_model_describe(ex[1].m), ex[1].N);
  {
    char nb[128];
    gfi_noise_describe(&ex[2].noise, nb, sizeof nb);
    fprintf(md, "- Figure 2: design `%s` (%s), truth `%s` (%s), noise `%s`, N = %zu pairs\n", ex[2].spec,
            gfi_model_describe(ex[2].m), S.truth, gfi_regfun_describe(ex[2].f), nb, ex[2].N);
  }
  fprintf(md, "- test points: M = %zu uniform in the box [-b, b]^D; default b = %g (density), %g (regression)\n",
          S.M, S.box, S.rbox);
  fprintf(md, "- seeds: %zu replications; replication k draws its data from RNG stream (%llu, k) and its test "
          "points from stream (%llu, 3*2^61 + k); intervals are 95%% Student-t intervals over the seeds\n",
          S.seeds, (unsigned long long)S.seed, (unsigned long long)S.seed);
  fprintf(md, "- fixed radius: R = %g (the paper's range is R = 1..3)\n", S.R);
  for (size_t i = 0; i < nex; i++)
    fprintf(md, "- oracle radius, %s: R* = %.4g; %s\n", ex[i].title, ex[i].Rstar, ex[i].Rstar_method);

  fprintf(md, "\n## MSE beside the paper\n\n| experiment | what | policy | radius | test box | MSE mean [95%% "
          "interval] | paper | ratio to paper |\n|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < nex; i++) summary_experiment_rows(md, dat, ex + i, 0);
  summary_experiment_rows(md, dat, ex + 2, 1);
  out_close(dat, "summary.dat");
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
  for (size_t i = 0; i < nex; i++) summary_sensitivity(md, ex + i);
  fprintf(md, "\n**Where the paper can and cannot be matched.** Without the paper's covariance, test box, "
          "radius, polynomial and noise its numbers cannot be reproduced exactly; only their order of magnitude "
          "(within a factor sqrt(10)) can be checked, and the tables above show that it depends on the "
          "unpublished test box and radius as much as on the estimator.\n\n");
  for (size_t i = 0; i < nex; i++) {
    const experiment *x = ex + i;
    interval f = over_seeds(x->mse + x->iFixed * x->nbox + x->iBox, S.seeds, x->nR * x->nbox);
    interval o = over_seeds(x->mse + x->iOracle * x->nbox + x->iBox, S.seeds, x->nR * x->nbox);
    fprintf(md, "- %s, default box [-%g, %g]^%zu: fixed R = %g gives %.3g, %.3g times the paper's %.3g (%s); "
            "oracle R* = %.3g gives %.3g, %.3g times (%s)", x->title, x->box, x->box, x->D, S.R, f.mean,
            f.mean / x->paper, x->paper, same_order(f.mean, x->paper) ? "same order of magnitude" : "NOT matched",
            x->Rstar, o.mean, o.mean / x->paper, same_order(o.mean, x->paper) ? "same order of magnitude" : "NOT matched");
    if (x->Rstar > 3) fprintf(md, "; R* lies outside the paper's range R = 1..3");
    double best = INFINITY, bR = 0, bb = 0;
    for (size_t a = 0; a < x->nR; a++)
      for (size_t b = 0; b < x->nbox; b++) {
        if (x->R[a] < 1 || x->R[a] > 3) continue;
        interval s = over_seeds(x->mse + a * x->nbox + b, S.seeds, x->nR * x->nbox);
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

  if (strcmp(S.rates, "none") != 0) {
    row_words *rows = xmalloc(64 * sizeof *rows);
    char p2[4200];
    snprintf(p2, sizeof p2, "%s/rates/rates_table.dat", S.out);
    size_t n = read_rows(p2, rows, 64);
    fprintf(md, "\n## Density rate checks (Theorems 1, 3a, 3b; `gfi rates`)\n\nExact MISE at the optimal "
            "radius R*(N); slopes of log MISE* against log N with 95%% intervals (details and the Monte-Carlo "
            "check in `rates/rates_table.dat`).\n\n| theorem | truth | phi | claimed | classical | observed "
            "[95%%] | R* slope (claimed) | verdict | theorem's hypothesis |\n|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
      row_words *r = rows + i;
      if (r->n < 18) step_fail("%s: row %zu has %zu columns, expected 18", p2, i + 1, r->n);
      underscores(r->words[16]);
      const char *cond = strcmp(r->words[17], "met") == 0      ? "met"
                         : strcmp(r->words[17], "not-C2") == 0 ? "**not met**: p is not C^2"
                                                               : r->words[17];
      char phi[64];
      if (strcmp(r->words[0], "gauss-kde") == 0) snprintf(phi, sizeof phi, "Gaussian KDE");
      else snprintf(phi, sizeof phi, "z^%s", r->words[3]);
      fprintf(md, "| %s | %s | %s | %s | %s | %s [%s, %s] | %s (%s) | %s | %s |\n", r->words[0], r->words[1],
              phi, r->words[6], r->words[7], r->words[8], r->words[9], r->words[10], r->words[12], r->words[11],
              r->words[16], cond);
    }
    snprintf(p2, sizeof p2, "%s/regress_rates/regress_rates_table.dat", S.out);
    n = read_rows(p2, rows, 64);
    fprintf(md, "\n## Regression rate checks (Theorems 2, 4; `gfi regress-rates`)\n\nMonte-Carlo "
            "design-weighted integrated MSE; slope of log MSE on log N with 95%% intervals.\n\n| row | "
            "theorem | l | D | radius rule | N | claimed | observed [95%%] | verdict |\n"
            "|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
      row_words *r = rows + i;
      if (r->n < 17) step_fail("%s: row %zu has %zu columns, expected 17", p2, i + 1, r->n);
      char rule[256] = "";
      for (const char *c = r->words[6]; *c && strlen(rule) + 3 < sizeof rule; c++) {
        size_t L = strlen(rule);
        if (*c == '|') rule[L++] = '\\';
        rule[L++] = *c;
        rule[L] = '\0';
      }
      underscores(r->words[16]);
      fprintf(md, "| %s | %s | %s | %s | %s | %s..%s | %s | %s [%s, %s] | %s |\n", r->words[0], r->words[1],
              strcmp(r->words[2], "0") ? r->words[2] : "Gaussian", r->words[3], rule, r->words[7], r->words[8],
              r->words[9], r->words[11], r->words[12], r->words[13], r->words[16]);
    }
    free(rows);
    fprintf(md, "\n![density rates](rates/mise_rates.png)\n![regression rates](regress_rates/regress_rates.png)\n");
  }
  if (strcmp(S.flt, "none") != 0)
    fprintf(md, "\n## FLT\n\nThe FLT study (%s mode) is in `flt/`: its tables in [flt/flt_summary.md]"
            "(flt/flt_summary.md) and its figures `flt/flt_*.png`.\n\n![FLT error vs r](flt/flt_err_vs_r.png)\n",
            strcmp(S.flt, "quick") == 0 ? "quick" : "full");
  if (ferror(md) | fclose(md)) step_fail("error writing %s", path);
}

/* ---- the command ---------------------------------------------------------------- */

static double *list_opt(const char *opt, const char *s, size_t *n) {
  double *v = cli_list(opt, s, n);
  for (size_t i = 0; i < *n; i++)
    if (!(v[i] > 0)) cli_usage(opt, "values must be > 0, got %g", v[i]);
  return v;
}

static void mode_opt(const char *opt, const char *v) {
  if (strcmp(v, "full") && strcmp(v, "quick") && strcmp(v, "none"))
    cli_usage(opt, "expected full, quick or none, got '%s'", v);
}

static void setup_experiment(experiment *x, const char *key, const char *title, const char *what,
                             const char *spec, size_t D, int regress, size_t N, double paper, double box) {
  memset(x, 0, sizeof *x);
  x->key = key, x->title = title, x->what = what, x->spec = spec, x->D = D, x->regress = regress;
  x->N = N, x->paper = paper, x->box = box;
  x->m = cli_model(spec, D);
  if (regress) {
    gfi_errinfo e;
    gfi_errinfo_clear(&e);
    int st = gfi_regfun_parse(&x->f, S.truth, D, &e);
    if (st == GFI_ENOMEM) cli_die(EXIT_RUNTIME, "out of memory");
    if (st) cli_usage("--truth", "%s", e.msg[0] ? e.msg : gfi_strerror(st));
    gfi_errinfo_clear(&e);
    if (gfi_noise_parse(&x->noise, S.noise, &e)) cli_usage("--noise", "%s", e.msg[0] ? e.msg : "malformed");
  } else if (!gfi_mise_exact_supported(x->m)) {
    cli_usage(D == 1 ? "--model-1d" : "--model-2d",
              "'%s': the oracle radius needs the exact MISE (normal mixtures, Laplace, Cauchy, t)", spec);
  }
}

static void add_rates_args(char **argv, size_t *n, int density) {
  int quick = strcmp(S.rates, "quick") == 0;
  static char seed[32], thr[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)S.seed);
  snprintf(thr, sizeof thr, "%d", S.nthreads);
  argv[(*n)++] = "--seed", argv[(*n)++] = seed, argv[(*n)++] = "--threads", argv[(*n)++] = thr;
  if (density) {
    argv[(*n)++] = "--size", argv[(*n)++] = quick ? "quick" : "full";
    if (quick) {
      argv[(*n)++] = "--model", argv[(*n)++] = "normal", argv[(*n)++] = "--model", argv[(*n)++] = "laplace";
      argv[(*n)++] = "--nmax", argv[(*n)++] = "1e4", argv[(*n)++] = "--fit-decades", argv[(*n)++] = "2";
      argv[(*n)++] = "--mc", argv[(*n)++] = "10";
    }
  } else {
    argv[(*n)++] = "--size", argv[(*n)++] = quick ? "small" : "large";
    if (quick) argv[(*n)++] = "--reps", argv[(*n)++] = "10", argv[(*n)++] = "--points", argv[(*n)++] = "100";
  }
  argv[*n] = NULL;
}

int cmd_reproduce(int argc, char **argv) {
  static const struct option opts[] = {
    {"out", required_argument, 0, 'o'},        {"quick", no_argument, 0, 'q'},
    {"seeds", required_argument, 0, 'K'},      {"seed", required_argument, 0, 's'},
    {"n-density", required_argument, 0, 'n'},  {"n-regress", required_argument, 0, 'N'},
    {"points", required_argument, 0, 'M'},     {"phi", required_argument, 0, 'p'},
    {"R", required_argument, 0, 'R'},          {"model-1d", required_argument, 0, '1'},
    {"model-2d", required_argument, 0, '2'},   {"design", required_argument, 0, 'd'},
    {"truth", required_argument, 0, 'f'},      {"noise", required_argument, 0, 'e'},
    {"box", required_argument, 0, 'b'},        {"regress-box", required_argument, 0, 'B'},
    {"sens-R", required_argument, 0, 'r'},     {"sens-box", required_argument, 0, 'x'},
    {"sens-regress-box", required_argument, 0, 'X'}, {"pilot-reps", required_argument, 0, 'P'},
    {"flt", required_argument, 0, 'F'},        {"rates", required_argument, 0, 'T'},
    {"threads", required_argument, 0, 't'},    {"quiet", no_argument, 0, 'Q'},
    {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
  memset(&S, 0, sizeof S);
  S.out = "results";
  S.seed = 1;
  S.phi = "pow:4";
  S.model1 = "normal";
  S.model2 = "normal:cov=1,0.5,0.5,1";
  S.design = "normal:cov=1,0.5,0.5,1";
  S.truth = "poly:0,1,-0.5,0.2";
  S.noise = "gauss:0.5";
  S.R = 2;
  S.box = 3;
  S.rbox = 2;
  const char *sensR = "1,2,3,5,8,13", *sensBox = "2,3,5,10", *sensRBox = "1,2,3,5";
  size_t seeds = 0, nd = 0, nr = 0, M = 0, pilot = 0;
  const char *flt = NULL, *rates = "full";
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'o': S.out = optarg; break;
      case 'q': S.quick = 1; break;
      case 'K': seeds = cli_size("--seeds", optarg, 2); break;
      case 's': S.seed = cli_u64("--seed", optarg); break;
      case 'n': nd = cli_size("--n-density", optarg, 1); break;
      case 'N': nr = cli_size("--n-regress", optarg, 1); break;
      case 'M': M = cli_size("--points", optarg, 1); break;
      case 'p': S.phi = optarg; break;
      case 'R': S.R = cli_positive("--R", optarg); break;
      case '1': S.model1 = optarg; break;
      case '2': S.model2 = optarg; break;
      case 'd': S.design = optarg; break;
      case 'f': S.truth = optarg; break;
      case 'e': S.noise = optarg; break;
      case 'b': S.box = cli_positive("--box", optarg); break;
      case 'B': S.rbox = cli_positive("--regress-box", optarg); break;
      case 'r': sensR = optarg; break;
      case 'x': sensBox = optarg; break;
      case 'X': sensRBox = optarg; break;
      case 'P': pilot = cli_size("--pilot-reps", optarg, 1); break;
      case 'F': flt = optarg; mode_opt("--flt", optarg); break;
      case 'T': rates = optarg; mode_opt("--rates", optarg); break;
      case 't': S.nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'Q': S.quiet = 1; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  if (!*S.out || strpbrk(S.out, " \t\n'\"\\"))
    cli_usage("--out", "'%s': the plot scripts need a directory name without spaces, quotes or backslashes",
              S.out);
  S.seeds = seeds ? seeds : (S.quick ? 3 : 5);
  S.n_density = nd ? nd : (S.quick ? 10000 : 100000);
  S.n_regress = nr ? nr : (S.quick ? 9000 : 90000);
  S.M = M ? M : (S.quick ? 300 : 1000);
  S.pilot_reps = pilot ? pilot : (S.quick ? 2 : 3);
  S.flt = flt ? flt : (S.quick ? "quick" : "full");
  S.rates = (S.quick && strcmp(rates, "full") == 0) ? "quick" : rates;
  S.sensR = list_opt("--sens-R", sensR, &S.nsensR);
  S.sensBox = list_opt("--sens-box", sensBox, &S.nsensBox);
  S.sensRBox = list_opt("--sens-regress-box", sensRBox, &S.nsensRBox);
  cli_phi("--phi", S.phi, &K);
  gfi_default_opts(&OPTS);
  OPTS.nthreads = S.nthreads;

  experiment ex[3];
  setup_experiment(ex + 0, "fig1a", "Figure 1A", "density, 1-D normal", S.model1, 1, 0, S.n_density, 1.29e-5,
                   S.box);
  setup_experiment(ex + 1, "fig1b", "Figure 1B", "density, 2-D normal", S.model2, 2, 0, S.n_density, 2.42e-5,
                   S.box);
  setup_experiment(ex + 2, "fig2", "Figure 2", "regression, cubic truth", S.design, 2, 1, S.n_regress, 0.06,
                   S.rbox);
  locate_tools();

  int do_rates = strcmp(S.rates, "none") != 0, do_flt = strcmp(S.flt, "none") != 0;
  step_total = 3 * (1 + (int)S.seeds + 1) + 1 + 2 * do_rates + do_flt + 4 + 2 * do_rates + do_flt + 1;
  run_t0 = gfi_now();
  make_dir(S.out);
  char p[4200];
  snprintf(p, sizeof p, "%s/logs", S.out);
  make_dir(p);

  for (int i = 0; i < 3; i++) {
    experiment *x = ex + i;
    step_begin("%s, oracle R", x->title);
    if (x->regress) oracle_regress(x);
    else oracle_density(x);
    make_lists(x);
    step_end();
    for (size_t k = 0; k < S.seeds; k++) {
      step_begin("%s, seed %zu of %zu (fixed R = %g, oracle R* = %.3g, %zu radii x %zu boxes)", x->title, k + 1,
                 S.seeds, S.R, x->Rstar, x->nR, x->nbox);
      run_seed(x, k);
      step_end();
    }
    step_begin("%s, curves of seed 1", x->title);
    curves(x);
    step_end();
  }
  step_begin("tables of the three figures");
  for (int i = 0; i < 3; i++) write_mse(ex + i);
  step_end();

  if (do_rates) {
    char *av[40];
    size_t n = 0;
    char dir[4200], log[4200];
    snprintf(dir, sizeof dir, "%s/rates", S.out);
    snprintf(log, sizeof log, "%s/logs/rates.log", S.out);
    step_begin("density rate checks (gfi rates --size %s)", strcmp(S.rates, "quick") ? "full" : "quick, reduced");
    av[n++] = self_exe, av[n++] = "rates", av[n++] = "--out", av[n++] = dir;
    add_rates_args(av, &n, 1);
    run_child(av, 0, log);
    step_end();
    n = 0;
    snprintf(dir, sizeof dir, "%s/regress_rates", S.out);
    snprintf(log, sizeof log, "%s/logs/regress_rates.log", S.out);
    make_dir(dir);
    step_begin("regression rate checks (gfi regress-rates --size %s)",
               strcmp(S.rates, "quick") ? "large" : "small, reduced");
    av[n++] = self_exe, av[n++] = "regress-rates", av[n++] = "--out", av[n++] = dir;
    add_rates_args(av, &n, 0);
    run_child(av, 0, log);
    step_end();
  }
  if (do_flt) {
    char dir[4200], log[4200], seed[32];
    snprintf(dir, sizeof dir, "%s/flt", S.out);
    snprintf(log, sizeof log, "%s/logs/flt_study.log", S.out);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)S.seed);
    make_dir(dir);
    step_begin("FLT study (flt_study, %s)", S.flt);
    char *av[] = {flt_prog, "--out", dir, "--seed", seed, strcmp(S.flt, "quick") ? NULL : "--quick", NULL};
    run_child(av, 0, log);
    step_end();
  }

  /* figures */
  {
    char v[8192], m1[512], m2[512], d2[512], tr[512], nz[512], nb[128];
    gp_str(m1, sizeof m1, ex[0].spec);
    gp_str(m2, sizeof m2, ex[1].spec);
    gp_str(d2, sizeof d2, ex[2].spec);
    gp_str(tr, sizeof tr, S.truth);
    gfi_noise_describe(&ex[2].noise, nb, sizeof nb);
    gp_str(nz, sizeof nz, nb);
    step_begin("figure fig1a (plots/fourierformer_fig1a.gp)");
    snprintf(v, sizeof v, "model=%s; n=%zu; l=%d; rfix=%.17g; rstar=%.17g; box=%.17g", m1, ex[0].N, K.l, S.R,
             ex[0].Rstar, ex[0].box);
    draw("fourierformer_fig1a.gp", v);
    step_end();
    step_begin("figure fig1b (plots/fourierformer_fig1b.gp)");
    snprintf(v, sizeof v, "model=%s; n=%zu; l=%d; rfix=%.17g; rstar=%.17g; box=%.17g", m2, ex[1].N, K.l, S.R,
             ex[1].Rstar, ex[1].box);
    draw("fourierformer_fig1b.gp", v);
    step_end();
    step_begin("figure fig2 (plots/fourierformer_fig2.gp)");
    snprintf(v, sizeof v, "design=%s; truth=%s; noise=%s; n=%zu; l=%d; rfix=%.17g; rstar=%.17g; box=%.17g", d2,
             tr, nz, ex[2].N, K.l, S.R, ex[2].Rstar, ex[2].box);
    draw("fourierformer_fig2.gp", v);
    step_end();
    step_begin("figure sensitivity (plots/fourierformer_sensitivity.gp)");
    double rmin = INFINITY, rmax = 0;
    for (int i = 0; i < 3; i++) rmin = fmin(rmin, ex[i].R[0]), rmax = fmax(rmax, ex[i].R[ex[i].nR - 1]);
    size_t L = (size_t)snprintf(v, sizeof v, "l=%d; rfix=%.17g; seeds=%zu; rmin=%.17g; rmax=%.17g", K.l, S.R,
                                S.seeds, rmin, rmax);
    for (int i = 0; i < 3; i++) {
      char bl[512] = "";
      for (size_t b = 0; b < ex[i].nbox; b++) {
        size_t bn = strlen(bl);
        snprintf(bl + bn, sizeof bl - bn, "%s%g", b ? " " : "", ex[i].boxes[b]);
      }
      L += (size_t)snprintf(v + L, sizeof v - L, "; boxes%d='%s'; paper%d=%.17g; rstar%d=%.17g; box%d=%.17g",
                            i + 1, bl, i + 1, ex[i].paper, i + 1, ex[i].Rstar, i + 1, ex[i].box);
    }
    draw("fourierformer_sensitivity.gp", v);
    step_end();
  }
  if (do_rates) {
    char sub[4200], dir[8400], v[8500];
    step_begin("figure rates/mise_rates (plots/mise_rates.gp)");
    snprintf(sub, sizeof sub, "%s/rates", S.out);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    draw("mise_rates.gp", v);
    step_end();
    step_begin("figure regress_rates/regress_rates (plots/regress_rates.gp)");
    snprintf(sub, sizeof sub, "%s/regress_rates", S.out);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    draw("regress_rates.gp", v);
    step_end();
  }
  if (do_flt) {
    char sub[4200], dir[8400], v[8500];
    step_begin("figures flt/flt_* (plots/flt_study.gp)");
    snprintf(sub, sizeof sub, "%s/flt", S.out);
    gp_str(dir, sizeof dir, sub);
    snprintf(v, sizeof v, "dir=%s", dir);
    draw("flt_study.gp", v);
    step_end();
  }
  step_begin("summary (summary.md, summary.dat)");
  write_summary(ex, 3, gfi_now() - run_t0);
  step_end();
  if (!S.quiet) fprintf(stderr, "gfi reproduce: done in %.0f s: %s/summary.md\n", gfi_now() - run_t0, S.out);
  for (int i = 0; i < 3; i++) {
    gfi_model_free(ex[i].m);
    gfi_regfun_free(ex[i].f);
    free(ex[i].R), free(ex[i].boxes), free(ex[i].mse), free(ex[i].pmse);
  }
  free(S.sensR), free(S.sensBox), free(S.sensRBox);
  free(gnuplot_path);
  return 0;
}
