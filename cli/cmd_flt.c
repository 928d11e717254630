/* gfi flt-error, gfi flt-complexity: FLT random-feature approximation of an
 * RPE mask — max-norm error statistics over seeded trials, and the sample
 * complexity r*(eps, delta) against FLT Theorem 4.2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "cli_backend.h"
#ifdef GFI_HAVE_CUDA
#include "gfi_cuda.h"
#endif
#include "cli.h"
#include "commands.h"

#define FLT_INTRO                                                                                     \
  "RPE mask N = [f(r_i - r_j)] over L positions r_i in R^ell, approximated by r random\n"              \
  "features xi_k ~ p (FLT Thm 4.1): N_hat_ij = (1/r) sum_k exp(2 pi i (r_i - r_j).xi_k) g(xi_k)/p(xi_k)\n" \
  "with g(xi) = int f(x) exp(-2 pi i x.xi) dx. c = sup |g|/p ('inf' when unbounded).\n"

static void check_ell(const char *opt, const char *arg, void *dst) {
  (void)arg;
  if (*(size_t *)dst > 3) cli_usage(opt, "must be 1, 2 or 3");
}

/* The options flt-error and flt-complexity share, into an flt_args `a`. */
#define FLT_COMMON_OPTS(a)                                                                              \
  {"rpe", CLI_STR, &(a).rpe, .arg = "SPEC", .section = "mask and proposal",                           \
   .help = "gauss:s=S (f = exp(-|x|^2/(2 s^2)))  box:v=V[,C=..]  local:v=V,k=K[,C=..]\n"              \
           "local-paper:v=V,k=K (the paper's printed transform)  exp:s=S (= matern12)\n"              \
           "matern32:s=S  laplace:s=S  gbf:w=W1,..;s=S1,..\n"                                         \
           "mixture:FILE (rows: w mu_1..mu_ell s, g = sum w exp(-|xi-mu|^2/(2 s^2)))\n"               \
           "mixture:w=..;mu=..;s=..   (v may give one value per axis: v=1,2)"},                         \
  {"proposal", CLI_STR, &(a).proposal, .arg = "SPEC",                                                  \
   .help = "gauss:tau=T (N(0, T^2 I))  t:nu=NU[,tau=T]  cauchy[:tau=T]\n"                             \
           "optimal (p = g/f(0), families with g >= 0)"},                                              \
  {"ell", CLI_SIZE, &(a).ell, .def = "1", .arg = "E", .min = 1, .parse = check_ell,                   \
   .help = "dimension of the positions, 1..3"},                                                        \
  {"features", CLI_STR, &(a).features, .def = "complex", .arg = "K",                                  \
   .help = "complex (the paper's N1 N2) or real (2r cos/sin features,\n"                              \
           "approximating Re N)"},                                                                      \
  {"grid", CLI_STR, &(a).grid, .arg = "N1xN2",                                                         \
   .section = "positions (default: 0..L-1 on a line for ell = 1, an n x n grid with n^2 = L for ell = 2)", \
   .help = "integer grid (ell = 2)"},                                                                  \
  {"points", CLI_STR, &(a).points, .arg = "FILE",                                                      \
   .help = "L points, ell numbers per line (any ell; a 3-D point cloud)"},                            \
  {"cloud", CLI_STR, &(a).cloud, .arg = "SPEC",                                                        \
   .help = "L points drawn from a gfi model in ell dimensions (see 'gfi sample\n"                     \
           "--help'), RNG stream (S, 2^62)"},                                                          \
  {"trials", CLI_SIZE, &(a).trials, .arg = "T", .min = 1, .section = "trials",                        \
   .help = "number of independent draws; trial k uses RNG stream (S, k)"},                            \
  CLI_OPT_SEED((a).seed),                                                                              \
  CLI_OPT_THREADS((a).nthreads),                                                                       \
  {"progress", CLI_FLAG, &(a).progress, .help = "progress on stderr (default: only when stderr is a terminal)"}

typedef struct {
  const char *rpe, *proposal, *features, *grid, *points, *cloud, *Ls;
  size_t ell, trials;
  uint64_t seed;
  int nthreads, progress;
  int have_L;
} flt_args;

static gfi_rpe *get_rpe(const flt_args *a) {
  if (!a->rpe) cli_usage("--rpe", "required");
  gfi_rpe *r = NULL;
  gfi_errinfo e;
  int st = gfi_rpe_parse(&r, a->rpe, a->ell, &e);
  if (st == GFI_EIO || st == GFI_EPARSE || st == GFI_ENONFINITE) cli_die(EXIT_RUNTIME, "--rpe: %s", e.msg);
  if (st == GFI_ENOMEM) cli_die(EXIT_RUNTIME, "--rpe: out of memory parsing '%s'", a->rpe);
  if (st) cli_usage("--rpe", "%s", e.msg[0] ? e.msg : gfi_strerror(st));
  return r;
}

static gfi_proposal *get_proposal(const flt_args *a, const gfi_rpe *r) {
  if (!a->proposal) cli_usage("--proposal", "required");
  gfi_proposal *p = NULL;
  gfi_errinfo e;
  int st = gfi_proposal_parse(&p, a->proposal, r, &e);
  if (st == GFI_ENOMEM) cli_die(EXIT_RUNTIME, "--proposal: out of memory parsing '%s'", a->proposal);
  if (st) cli_usage("--proposal", "%s", e.msg[0] ? e.msg : gfi_strerror(st));
  return p;
}

static gfi_flt_features get_features(const flt_args *a) {
  if (strcmp(a->features, "complex") == 0) return GFI_FLT_COMPLEX;
  if (strcmp(a->features, "real") == 0) return GFI_FLT_REAL;
  cli_usage("--features", "expected complex or real, got '%s'", a->features);
}

/* Positions for L points; *desc gets a description for the metadata. */
static gfi_flt_positions *get_positions(const flt_args *a, size_t L, char *desc, size_t n) {
  gfi_flt_positions *P = NULL;
  int st;
  int nsrc = !!a->grid + !!a->points + !!a->cloud;
  if (nsrc > 1) cli_usage("--grid", "give at most one of --grid, --points, --cloud");
  if (a->points) {
    size_t rows, cols;
    double *x = cli_read_table("points file", a->points, a->ell, &rows, &cols);
    if (a->have_L && rows != L)
      cli_die(EXIT_RUNTIME, "points file %s: %zu points but --L %zu", a->points, rows, L);
    st = gfi_flt_positions_points(&P, rows, a->ell, x);
    free(x);
    snprintf(desc, n, "points from %s (%zu x %zu)", a->points, rows, a->ell);
  } else if (a->cloud) {
    if (!a->have_L) cli_usage("--L", "required with --cloud");
    gfi_model *m = cli_model(a->cloud, a->ell);
    double *x = cli_array(L, a->ell, sizeof *x);
    gsl_rng *g = gfi_rng_stream(a->seed, (uint64_t)1 << 62);
    if (!g) cli_die(EXIT_RUNTIME, "out of memory for a random-number stream");
    cli_check(gfi_model_sample(m, g, L, x), "sampling the point cloud");
    st = gfi_flt_positions_points(&P, L, a->ell, x);
    gsl_rng_free(g);
    gfi_model_free(m);
    free(x);
    snprintf(desc, n, "%zu points drawn from model %s (seed %llu, stream 2^62)", L, a->cloud,
             (unsigned long long)a->seed);
  } else if (a->grid || a->ell == 2) {
    if (a->ell != 2) cli_usage("--grid", "a grid needs --ell 2");
    size_t n1, n2;
    if (a->grid) {
      char *end;
      n1 = strtoull(a->grid, &end, 10);
      if (end == a->grid || *end != 'x') cli_usage("--grid", "expected N1xN2, got '%s'", a->grid);
      const char *s2 = end + 1;
      n2 = strtoull(s2, &end, 10);
      if (end == s2 || *end != '\0' || n1 == 0 || n2 == 0) cli_usage("--grid", "expected N1xN2, got '%s'", a->grid);
      if (a->have_L && n1 * n2 != L) cli_usage("--L", "%zu does not match --grid %s", L, a->grid);
    } else {
      if (!a->have_L) cli_usage("--L", "required");
      n1 = (size_t)llround(sqrt((double)L));
      if (n1 * n1 != L) cli_usage("--L", "with --ell 2 and no --grid, L must be a square, got %zu", L);
      n2 = n1;
    }
    L = n1 <= SIZE_MAX / n2 ? n1 * n2 : SIZE_MAX; /* for the message */
    st = gfi_flt_positions_grid(&P, n1, n2);
    snprintf(desc, n, "%zu x %zu integer grid", n1, n2);
  } else {
    if (a->ell != 1) cli_usage("--points", "ell = 3 needs --points FILE or --cloud SPEC");
    if (!a->have_L) cli_usage("--L", "required");
    st = gfi_flt_positions_line(&P, L);
    snprintf(desc, n, "0..%zu on a line", L - 1);
  }
  char size[96];
  snprintf(size, sizeof size, "%zu positions in %zu dimension(s)", P ? gfi_flt_positions_L(P) : L, a->ell);
  cli_check_size(st, "positions", size, "--L (or the points file, or the grid)", NULL);
  return P;
}

/* The error trials' status: a size the user chose, or an importance weight
 * g(xi)/p(xi) that overflowed at a drawn frequency (GFI_ERANGE). */
static void trials_check(int st, const flt_args *a, size_t trials, size_t rmax, size_t L, const char *hint) {
  if (st == GFI_ERANGE)
    cli_die(EXIT_RUNTIME, "error trials: an importance weight g(xi)/p(xi) overflowed at a drawn frequency: the "
            "--proposal '%s' is too thin where --rpe '%s' is not; use heavier tails (t:nu=..) or a scale tau "
            "closer to the RPE's", a->proposal, a->rpe);
  char size[128];
  snprintf(size, sizeof size, "%zu trials of up to %zu features over %zu positions", trials, rmax, L);
  cli_check_size(st, "error trials", size, hint, NULL);
}

/* About 3e7 features times position differences per second per thread:
 * past CLI_FLT_MAX_WORK a run of trials would take hours. */
#define CLI_FLT_MAX_WORK 3e11
static void trials_work(const gfi_flt_positions *pos, size_t trials, size_t rmax, const char *opts) {
  double work = (double)trials * (double)rmax * (double)gfi_flt_positions_ndiff(pos);
  if (work > CLI_FLT_MAX_WORK)
    cli_usage("--trials", "%zu trials x %zu features x %zu position differences = %.3g feature evaluations, above "
              "%.0e (hours of computing at about 3e7 per second per thread); lower %s", trials, rmax,
              gfi_flt_positions_ndiff(pos), work, CLI_FLT_MAX_WORK, opts);
}

static size_t *size_list(const char *opt, const char *s, size_t *n, size_t min) {
  double *v = cli_list(opt, s, n);
  size_t *o = cli_array(*n, 1, sizeof *o);
  for (size_t i = 0; i < *n; i++) {
    if (v[i] != floor(v[i]) || v[i] < (double)min || v[i] > 1e12)
      cli_usage(opt, "entry %zu must be an integer >= %zu, got %g", i + 1, min, v[i]);
    o[i] = (size_t)v[i];
  }
  free(v);
  return o;
}

static void meta_common(const flt_args *a, const gfi_rpe *r, const gfi_proposal *p, double c, const char *posdesc,
                        gfi_flt_features f) {
  cli_header(stdout);
  cli_meta(stdout, "rpe", "%s = %s", a->rpe, gfi_rpe_describe(r));
  cli_meta(stdout, "proposal", "%s = %s", a->proposal, gfi_proposal_describe(p));
  cli_meta(stdout, "c", "%.17g (sup |g|/p%s)", c, isinf(c) ? ": unbounded, Theorems A.3 and 4.2 say nothing" : "");
  cli_meta(stdout, "ell", "%zu", a->ell);
  cli_meta(stdout, "positions", "%s", posdesc);
  cli_meta(stdout, "features", "%s", f == GFI_FLT_COMPLEX ? "complex (N1 N2, error = complex modulus)"
                                                          : "real (cos/sin, error against Re N)");
  cli_meta(stdout, "trials", "%zu, seed %llu, trial k on RNG stream (seed, k); nested draws: the first r features "
                             "of a trial are shared by every r", a->trials, (unsigned long long)a->seed);
}

static double quantile(double *sorted, size_t n, double q) { return gsl_stats_quantile_from_sorted_data(sorted, 1, n, q); }

int cmd_flt_error(int argc, char **argv) {
  const char *backend = NULL, *rs_s = NULL;
  flt_args a = {0};
  const cli_opt opts[] = {
    FLT_COMMON_OPTS(a),
    {"L", CLI_STR, &a.Ls, .arg = "L", .section = "errors",
     .help = "number of positions (with --points: must match the file)"},
    {"r", CLI_STR, &rs_s, .arg = "R[,R2,..]", .help = "feature counts, increasing; they share their trials"},
    {"backend", CLI_STR, &backend, .def = "cpu", .arg = "B",
     .help = "cpu, cuda (the features summed per difference on the GPU,\n"
             "libgfi_cuda; the same trials and draws, equal to the CPU's up to\n"
             "rounding) or auto (cuda when a GPU is present)"},
    {0}};
  const cli_spec cs = {
    "usage: gfi flt-error --rpe SPEC --proposal SPEC [--ell E] --L L --r R[,R2,..] --trials T\n"
    "                     [--seed S] [--features complex|real] [positions] [--threads N]\n"
    "                     [--backend cpu|cuda|auto]\n\n"
    "Max-norm error max_ij |N_hat - N| of FLT's random-feature RPE mask over T trials: one row per r\n"
    "with columns\n"
    "  L r trials mean q50 q90 q99 c se max_re_mean frob_mean rel_mean sd_bound eps_thm42\n"
    "mean/q50/q90/q99: mean and quantiles of the max-norm error; se: standard error of the mean;\n"
    "max_re_mean: mean max |Re(N_hat - N)|; frob_mean, rel_mean: mean ||N_hat - N||_F and its ratio\n"
    "to ||N||_F; sd_bound = c/sqrt(r), Theorem A.3's bound on the sd of one entry; eps_thm42 =\n"
    "2 c sqrt(log(4 L^2/0.01)/r), the error Theorem 4.2 guarantees with probability 0.99\n"
    "(compare with q99). Several r values share their trials (nested features).\n\n" FLT_INTRO,
    opts, NULL};
  if (cli_parse(&cs, argc, argv)) return 0;
  a.have_L = a.Ls != NULL;
  if (!rs_s) cli_usage("--r", "required");
  if (!a.trials) cli_usage("--trials", "required");
  size_t L = 0, nL = 0, nr;
  if (a.have_L) {
    size_t *Lv = size_list("--L", a.Ls, &nL, 1);
    if (nL != 1) cli_usage("--L", "one value (flt-complexity takes a list)");
    L = Lv[0];
    free(Lv);
  }
  size_t *rs = size_list("--r", rs_s, &nr, 1);
  for (size_t i = 1; i < nr; i++)
    if (rs[i] <= rs[i - 1]) cli_usage("--r", "values must increase");
  gfi_flt_features feat = get_features(&a);
  gfi_rpe *R = get_rpe(&a);
  gfi_proposal *P = get_proposal(&a, R);
  char posdesc[256];
  gfi_flt_positions *pos = get_positions(&a, L, posdesc, sizeof posdesc);
  L = gfi_flt_positions_L(pos);
  double cc;
  cli_check(gfi_rpe_c(R, P, &cc), "computing c");
  cli_backend be = cli_backend_resolve(backend, 1, "flt-error");
  if (be != CLI_BACKEND_CUDA) trials_work(pos, a.trials, rs[nr - 1], "--trials, --r or --L");
  cli_budget("--trials", (double)a.trials, (double)nr * GFI_FLT_NMETRICS, "trials x r values x metrics");
  double *out = cli_array(a.trials, nr, GFI_FLT_NMETRICS * sizeof *out), *col = cli_array(a.trials, 1, sizeof *col);
  gfi_flt_opts o;
  gfi_flt_default_opts(&o);
  o.base.seed = a.seed;
  o.base.nthreads = a.nthreads;
  o.features = feat;
  gfi_progress prog;
  gfi_progress_start(&prog, (a.progress || isatty(2)) ? stderr : NULL, "flt-error trials", a.trials);
  o.progress = &prog;
  if (be == CLI_BACKEND_CUDA) {
#ifdef GFI_HAVE_CUDA
    cli_check(gfi_cuda_flt_error_trials(R, P, pos, nr, rs, a.trials, &o, out, NULL), "error trials (GPU)");
#endif
  } else {
    trials_work(pos, a.trials, rs[nr - 1], "--trials, --r or --L");
    trials_check(gfi_flt_error_trials(R, P, pos, nr, rs, a.trials, &o, out), &a, a.trials, rs[nr - 1], L,
                 "--r, --L or --trials");
  }
  gfi_progress_end(&prog);
  meta_common(&a, R, P, cc, posdesc, feat);
  cli_backend_meta(stdout, be);
  if (be == CLI_BACKEND_CPU) cli_meta(stdout, "eval-threads", "%d", gfi_threads_resolve(&o.base));
  printf("# L r trials mean q50 q90 q99 c se max_re_mean frob_mean rel_mean sd_bound eps_thm42\n");
  for (size_t i = 0; i < nr; i++) {
    double m[GFI_FLT_NMETRICS];
    gfi_summary s[GFI_FLT_NMETRICS];
    for (int k = 0; k < GFI_FLT_NMETRICS; k++) {
      gfi_summarize(out + i * GFI_FLT_NMETRICS + k, a.trials, nr * GFI_FLT_NMETRICS, &s[k]);
      m[k] = s[k].mean;
    }
    for (size_t t = 0; t < a.trials; t++) col[t] = out[(t * nr + i) * GFI_FLT_NMETRICS];
    gsl_sort(col, 1, a.trials);
    double r = (double)rs[i];
    double vals[] = {(double)L, r, (double)a.trials, m[0], quantile(col, a.trials, 0.5),
                     quantile(col, a.trials, 0.9), quantile(col, a.trials, 0.99), cc, s[0].se, m[1], m[2], m[3],
                     cc / sqrt(r), 2 * cc * sqrt(log(4.0 * L * L / 0.01) / r)};
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
      if (k) putchar(' ');
      gfi_table_put(stdout, vals[k]);
    }
    putchar('\n');
  }
  cli_finish_output(stdout, "standard output");
  free(out); free(col); free(rs);
  gfi_flt_positions_free(pos);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  return 0;
}

int cmd_flt_complexity(int argc, char **argv) {
  flt_args a = {0};
  const char *eps_s = NULL, *delta_s = NULL;
  size_t rmin = 8, rmax = 4096, per = 4;
  const cli_opt opts[] = {
    FLT_COMMON_OPTS(a),
    {"L", CLI_STR, &a.Ls, .arg = "L1[,L2,..]", .section = "search", .help = "numbers of positions, one search each"},
    {"eps", CLI_STR, &eps_s, .arg = "E1[,..]", .help = "error levels (> 0)"},
    {"delta", CLI_STR, &delta_s, .arg = "D1[,..]", .help = "failure probabilities, in (0, 1)"},
    {"rmin", CLI_SIZE, &rmin, .def = "8", .arg = "R0", .min = 1, .help = "the ladder's first rung"},
    {"rmax", CLI_SIZE, &rmax, .def = "4096", .arg = "R1", .min = 1, .help = "the ladder's last rung"},
    {"per-octave", CLI_SIZE, &per, .def = "4", .arg = "K", .min = 1, .help = "rungs per doubling of r"},
    {0}};
  const cli_spec cs = {
    "usage: gfi flt-complexity --rpe SPEC --proposal SPEC [--ell E] --L L1[,L2,..]\n"
    "                          --eps E1[,..] --delta D1[,..] --trials T [--seed S]\n"
    "                          [--rmin R0] [--rmax R1] [--per-octave K] [positions] [--threads N]\n\n"
    "Sample complexity of FLT's random-feature mask: the smallest r with P(max_ij |N_hat - N| <= eps)\n"
    ">= 1 - delta, against Theorem 4.2's r = 4 c^2/eps^2 log(4 L^2/delta).\n"
    "Search: for each L, T trials draw R1 features each; the max-norm error of every trial is measured\n"
    "at the ladder r = R0 2^(j/K) (rounded, up to R1). r* is the smallest rung\n"
    "where the fraction of trials within eps is >= 1 - delta there and at every larger rung; the true\n"
    "smallest r lies in (r_below, rstar] up to Monte-Carlo error (phat is the fraction at rstar,\n"
    "binomial se sqrt(phat (1 - phat)/T)). rstar = inf when R1 is not enough (raise --rmax).\n"
    "One row per (L, eps, delta):\n"
    "  L eps delta rstar r_below phat trials c r_thm42 ratio     (ratio = r_thm42 / rstar)\n\n" FLT_INTRO,
    opts, NULL};
  if (cli_parse(&cs, argc, argv)) return 0;
  a.have_L = a.Ls != NULL;
  if (!a.have_L && !a.points) cli_usage("--L", "required");
  if (!eps_s) cli_usage("--eps", "required");
  if (!delta_s) cli_usage("--delta", "required");
  if (!a.trials) cli_usage("--trials", "required");
  if (rmax < rmin) cli_usage("--rmax", "must be >= --rmin");
  size_t ne, nd, nL = 1;
  double *eps = cli_list("--eps", eps_s, &ne), *delta = cli_list("--delta", delta_s, &nd);
  for (size_t i = 0; i < ne; i++)
    if (!(eps[i] > 0)) cli_usage("--eps", "values must be > 0");
  for (size_t i = 0; i < nd; i++)
    if (!(delta[i] > 0 && delta[i] < 1)) cli_usage("--delta", "values must be in (0, 1)");
  size_t *Ls = a.have_L ? size_list("--L", a.Ls, &nL, 1) : NULL;
  gfi_flt_features feat = get_features(&a);
  gfi_rpe *R = get_rpe(&a);
  gfi_proposal *P = get_proposal(&a, R);
  double cc;
  cli_check(gfi_rpe_c(R, P, &cc), "computing c");
  /* the ladder */
  size_t nr = 0, *rs = cli_array(per + 1, 64, sizeof *rs);
  for (size_t j = 0;; j++) {
    double v = (double)rmin * pow(2.0, (double)j / (double)per);
    size_t r = (size_t)llround(v);
    if (r > rmax) break;
    if (nr == 0 || r > rs[nr - 1]) rs[nr++] = r;
  }
  if (rs[nr - 1] != rmax) rs[nr++] = rmax;
  int printed = 0;
  cli_budget("--trials", (double)a.trials, (double)nr * GFI_FLT_NMETRICS, "trials x r values x metrics");
  double *out = cli_array(a.trials, nr, GFI_FLT_NMETRICS * sizeof *out), *err = cli_array(a.trials, nr, sizeof *err);
  for (size_t li = 0; li < nL; li++) {
    char posdesc[256];
    gfi_flt_positions *pos = get_positions(&a, Ls ? Ls[li] : 0, posdesc, sizeof posdesc);
    size_t L = gfi_flt_positions_L(pos);
    gfi_flt_opts o;
    gfi_flt_default_opts(&o);
    o.base.seed = a.seed;
    o.base.nthreads = a.nthreads;
    o.features = feat;
    gfi_progress prog;
    char label[64];
    snprintf(label, sizeof label, "flt-complexity L=%zu", L);
    gfi_progress_start(&prog, (a.progress || isatty(2)) ? stderr : NULL, label, a.trials);
    o.progress = &prog;
    trials_work(pos, a.trials, rs[nr - 1], "--trials, --rmax or --L");
    trials_check(gfi_flt_error_trials(R, P, pos, nr, rs, a.trials, &o, out), &a, a.trials, rs[nr - 1], L,
                 "--rmax, --L or --trials");
    gfi_progress_end(&prog);
    for (size_t t = 0; t < a.trials * nr; t++) err[t] = out[t * GFI_FLT_NMETRICS];
    if (!printed) {
      meta_common(&a, R, P, cc, posdesc, feat);
      cli_meta(stdout, "ladder", "r = %zu * 2^(j/%zu) up to %zu (%zu rungs)", rmin, per, rmax, nr);
      cli_meta(stdout, "eval-threads", "%d", gfi_threads_resolve(&o.base));
      printf("# L eps delta rstar r_below phat trials c r_thm42 ratio\n");
      printed = 1;
    }
    for (size_t ei = 0; ei < ne; ei++)
      for (size_t di = 0; di < nd; di++) {
        double ph;
        size_t idx = gfi_flt_rstar(err, a.trials, nr, eps[ei], delta[di], &ph);
        double rstar = idx < nr ? (double)rs[idx] : INFINITY;
        double below = idx < nr ? (idx ? (double)rs[idx - 1] : 0.0) : (double)rs[nr - 1];
        double thm = gfi_flt_thm42_r(cc, eps[ei], delta[di], L);
        double vals[] = {(double)L, eps[ei], delta[di], rstar, below, ph, (double)a.trials, cc, thm, thm / rstar};
        for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
          if (k) putchar(' ');
          gfi_table_put(stdout, vals[k]);
        }
        putchar('\n');
      }
    cli_flush(stdout, "standard output");
    gfi_flt_positions_free(pos);
  }
  cli_finish_output(stdout, "standard output");
  free(out); free(err); free(rs); free(Ls); free(eps); free(delta);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  return 0;
}
