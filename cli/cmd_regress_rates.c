/* gfi regress-rates: Monte-Carlo check of FourierFormer's regression rates
 * (Theorem 2: l >= 6, R ~ N^(1/(D+4)), MSE ~ N^(-4/(D+4)); Theorem 4: l = 1,
 * supersmooth design, R = (log N / 2C)^(1/alpha), MSE ~ (log N)^(D/alpha)/N)
 * with the Gaussian Nadaraya-Watson estimator as the classical baseline. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"

static const char *help =
  "usage: gfi regress-rates [--size small|medium|large] [--out DIR] [options]\n\n"
  "Check the regression rate theorems of FourierFormer by Monte Carlo: for each\n"
  "row, the design-weighted integrated MSE E int (f_hat - f)^2 p over replications\n"
  "at sample sizes N = N0, 2 N0, ..., a weighted line fit of log MSE on log N, and\n"
  "a verdict. The theorems are upper bounds: a row is 'consistent' unless the\n"
  "observed exponent is significantly (95%) larger (slower decay) than claimed.\n\n"
  "rows (design N(0, 1) unless said; noise gauss:0.5; cubic truth poly:0,1,-0.5,0.2):\n"
  "  thm2-1d      Fourier NW, phi = z^6, D = 1, R = N^(1/5)              claimed -4/5\n"
  "  thm2-2d      Fourier NW, phi = z^6, D = 2, design normal:cov=1,0.5,0.5,1,\n"
  "               R = N^(1/6) on both axes                                claimed -2/3\n"
  "  thm4-1d      Fourier NW, phi = z (l = 1), D = 1: the design and f p are supersmooth\n"
  "               (alpha = 2; f p has transform poly(t) exp(-t^2/2) <= C1 exp(-t^2/4),\n"
  "               so C = 1/4), R = (log N / 2C)^(1/2) = sqrt(2 log N); MSE over the\n"
  "               design restricted to |x| <= 2, where p is bounded below   claimed (log N)^(1/2)/N\n"
  "  thm4-1d-all  the same over the whole design (Thm4*: outside the theorem's setting;\n"
  "               where p -> 0 the l = 1 denominator nearly cancels, see the report)\n"
  "  gauss-1d     Gaussian NW, h = 0.5 N^(-1/5) (classical baseline)      classical -4/5\n"
  "'claimed' for Theorem 4 is the slope of log((log N)^(D/alpha)/N) fitted over the\n"
  "same sizes; 'classical' is the rate of a kernel of the same order (second order:\n"
  "-4/(D+4); the sinc kernel (l = 1) is of infinite order: -1).\n\n"
  "options:\n"
  "  --size S      small (seconds), medium (default, about a minute on 2 cores) or\n"
  "                large (several minutes): sizes, replications and points per row\n"
  "  --reps K      replications per size (overrides --size)\n"
  "  --points M    evaluation points drawn from the design (overrides --size)\n"
  "  --rows LIST   comma-separated subset of the rows above (default all)\n"
  "  --seed S      seed (default 1): replication k of size N uses stream (S', k) with\n"
  "                S' = S + N; the design points come from stream (S, 2^62) (and\n"
  "                (S + 1, 2^62), ... when a box rejects some)\n"
  "  --out DIR     also write DIR/regress_rates.dat (per size) and\n"
  "                DIR/regress_rates_table.dat (the table); plots/regress_rates.gp draws them\n"
  "  --threads T   threads over replications (default 0 = all cores)\n"
  "  --progress    progress on stderr (default: only when stderr is a terminal)\n";

typedef struct {
  const char *name, *theorem, *design, *truth;
  size_t D;
  int l;          /* 0 = Gaussian */
  int rule;       /* 0: R = c N^(1/(D+4)); 1: R = sqrt(log N / (2 C)); 2: h = c N^(-1/(D+4)) */
  double c;       /* c, or C for rule 1 */
  double box;     /* > 0: evaluation points restricted to |x_j| <= box */
  const char *rule_text;
} rate_row;

static const rate_row ROWS[] = {
  {"thm2-1d", "Thm2", "normal", "poly:0,1,-0.5,0.2", 1, 6, 0, 1.0, 0, "R=N^(1/5)"},
  {"thm2-2d", "Thm2", "normal:cov=1,0.5,0.5,1", "poly:0,1,-0.5,0.2", 2, 6, 0, 1.0, 0, "R=N^(1/6)"},
  {"thm4-1d", "Thm4", "normal", "poly:0,1,-0.5,0.2", 1, 1, 1, 0.25, 2.0, "R=sqrt(2logN),|x|<=2"},
  {"thm4-1d-all", "Thm4*", "normal", "poly:0,1,-0.5,0.2", 1, 1, 1, 0.25, 0, "R=sqrt(2logN),all-x"},
  {"gauss-1d", "classical", "normal", "poly:0,1,-0.5,0.2", 1, 0, 2, 0.5, 0, "h=0.5N^(-1/5)"},
};
#define NROWS (sizeof ROWS / sizeof ROWS[0])
#define NOISE "gauss:0.5"

int cmd_regress_rates(int argc, char **argv) {
  static const struct option opts[] = {
    {"size", required_argument, 0, 'S'},   {"reps", required_argument, 0, 'k'},
    {"points", required_argument, 0, 'M'}, {"rows", required_argument, 0, 'r'},
    {"seed", required_argument, 0, 's'},   {"out", required_argument, 0, 'o'},
    {"threads", required_argument, 0, 't'}, {"progress", no_argument, 0, 'P'},
    {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  const char *size = "medium", *rows = NULL, *out = NULL;
  size_t reps = 0, M = 0;
  uint64_t seed = 1;
  int nthreads = 0, progress = isatty(2), c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'S': size = optarg; break;
      case 'k': reps = cli_size("--reps", optarg, 3); break;
      case 'M': M = cli_size("--points", optarg, 1); break;
      case 'r': rows = optarg; break;
      case 's': seed = cli_u64("--seed", optarg); break;
      case 'o': out = optarg; break;
      case 't': nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'P': progress = 1; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  size_t n0, nsizes, dreps, dM;
  if (strcmp(size, "small") == 0) {
    n0 = 250; nsizes = 5; dreps = 40; dM = 200;
  } else if (strcmp(size, "medium") == 0) {
    n0 = 500; nsizes = 7; dreps = 100; dM = 400;
  } else if (strcmp(size, "large") == 0) {
    n0 = 500; nsizes = 9; dreps = 200; dM = 500;
  } else {
    cli_usage("--size", "expected small, medium or large, got '%s'", size);
  }
  if (!reps) reps = dreps;
  if (!M) M = dM;
  int use[NROWS];
  for (size_t i = 0; i < NROWS; i++) use[i] = rows == NULL;
  if (rows) {
    char *copy = strdup(rows), *save = NULL;
    if (!copy) cli_die(EXIT_RUNTIME, "out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      size_t i = 0;
      while (i < NROWS && strcmp(t, ROWS[i].name) != 0) i++;
      if (i == NROWS) cli_usage("--rows", "unknown row '%s' (see --help)", t);
      use[i] = 1;
    }
    free(copy);
  }
  FILE *dat = NULL, *tab = NULL;
  if (out) {
    if (mkdir(out, 0777) != 0 && errno != EEXIST) cli_die(EXIT_RUNTIME, "--out %s: %s", out, strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/regress_rates.dat", out);
    if (!(dat = fopen(path, "w"))) cli_die(EXIT_RUNTIME, "cannot write %s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/regress_rates_table.dat", out);
    if (!(tab = fopen(path, "w"))) cli_die(EXIT_RUNTIME, "cannot write %s: %s", path, strerror(errno));
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  FILE *fs[3] = {stdout, tab, dat};
  for (int a = 0; a < 3; a++) {
    if (!fs[a]) continue;
    cli_header(fs[a]);
    cli_meta(fs[a], "size", "%s: N = %zu * 2^k, k = 0..%zu; %zu replications; %zu design points", size, n0,
             nsizes - 1, reps, M);
    cli_meta(fs[a], "seed", "%llu", (unsigned long long)seed);
    cli_meta(fs[a], "noise", "%s", NOISE);
    cli_meta(fs[a], "measure", "design-weighted integrated MSE (gfi_nw_mse), fit of log MSE on log N "
                                "weighted by s.e./MSE, 95%% t interval, scaled by chi2/dof when > 1");
  }
  const char *tcols = "# row theorem l D design truth rule N_min N_max claimed classical observed lo95 hi95 "
                      "chi2_dof flagged_frac verdict";
  printf("%s\n", tcols);
  if (tab) fprintf(tab, "%s\n", tcols);
  if (dat) fprintf(dat, "# blocks (gnuplot index) in row order; columns:\n# N R_or_h mse mse_se bias2 var "
                        "flagged_frac fit claimed_ref\n");
  double *x = malloc(nsizes * sizeof *x), *y = malloc(nsizes * sizeof *y), *sg = malloc(nsizes * sizeof *sg);
  double *mse = malloc(nsizes * sizeof *mse), *se = malloc(nsizes * sizeof *se);
  double *b2 = malloc(nsizes * sizeof *b2), *var = malloc(nsizes * sizeof *var);
  double *rr = malloc(nsizes * sizeof *rr), *ff = malloc(nsizes * sizeof *ff), *cl = malloc(nsizes * sizeof *cl);
  double *pts = NULL;
  if (!x || !y || !sg || !mse || !se || !b2 || !var || !rr || !ff || !cl) cli_die(EXIT_RUNTIME, "out of memory");
  int block = 0;
  for (size_t ri = 0; ri < NROWS; ri++) {
    if (!use[ri]) continue;
    const rate_row *row = &ROWS[ri];
    const size_t D = row->D;
    gfi_model *design = cli_model(row->design, D);
    gfi_regfun *truth;
    gfi_errinfo err;
    if (gfi_regfun_parse(&truth, row->truth, D, &err)) cli_die(EXIT_RUNTIME, "%s", err.msg);
    free(pts);
    pts = malloc(M * D * sizeof *pts);
    if (!pts) cli_die(EXIT_RUNTIME, "out of memory");
    {
      /* M design points, those outside the box rejected (draw in rounds) */
      size_t have = 0, round = 0;
      double *cand = malloc(M * D * sizeof *cand);
      if (!cand) cli_die(EXIT_RUNTIME, "out of memory");
      while (have < M) {
        if (++round > 1000) cli_die(EXIT_RUNTIME, "%s: the box keeps no design points", row->name);
        cli_check(gfi_nw_design_points(design, seed + round - 1, M, cand), "design points");
        for (size_t i = 0; i < M && have < M; i++) {
          int in = 1;
          for (size_t j = 0; j < D; j++)
            if (row->box > 0 && fabs(cand[i * D + j]) > row->box) in = 0;
          if (in) memcpy(pts + have++ * D, cand + i * D, D * sizeof *pts);
        }
      }
      free(cand);
    }
    gfi_nw_study st;
    memset(&st, 0, sizeof st);
    st.design = design;
    st.truth = truth;
    gfi_noise_parse(&st.noise, NOISE, NULL);
    double R[2], H[4];
    if (row->l) {
      gfi_kernel_pow(&st.kernel, row->l);
      st.R = R;
    } else {
      st.gauss = 1;
      st.H = H;
    }
    gfi_progress pg;
    char label[64];
    snprintf(label, sizeof label, "regress-rates %s", row->name);
    gfi_progress_start(&pg, progress ? stderr : NULL, label, nsizes);
    size_t flagged = 0, total = 0;
    for (size_t a = 0; a < nsizes; a++) {
      size_t N = n0 << a;
      st.N = N;
      double lg = log((double)N), r;
      if (row->rule == 0)
        r = row->c * pow((double)N, 1.0 / (double)(D + 4));
      else if (row->rule == 1)
        r = sqrt(lg / (2 * row->c));
      else
        r = row->c * pow((double)N, -1.0 / (double)(D + 4));
      for (size_t j = 0; j < D; j++) R[j] = r;
      for (size_t j = 0; j < D * D; j++) H[j] = (j % (D + 1) == 0) ? r * r : 0;
      rr[a] = r;
      gfi_nw_mse_result res;
      o.seed = seed + N;
      cli_check(gfi_nw_mse(&st, M, pts, reps, &o, &res, NULL, NULL, NULL, NULL), row->name);
      mse[a] = res.mse;
      se[a] = res.mse_se;
      b2[a] = res.bias2;
      var[a] = res.var;
      ff[a] = (double)res.nflagged / (double)(reps * M);
      flagged += res.nflagged;
      total += reps * M;
      x[a] = lg;
      y[a] = log(res.mse);
      sg[a] = res.mse_se > 0 ? res.mse_se / res.mse : 1e-3;
      gfi_progress_add(&pg, 1);
    }
    gfi_progress_end(&pg);
    gfi_linfit fit;
    cli_check(gfi_fit_line(x, y, sg, 0, nsizes, 1, &fit), "line fit");
    /* claimed exponent: -4/(D+4), or the slope of log((log N)^(D/alpha)/N) */
    double claimed, classical;
    if (row->rule == 1) {
      for (size_t a = 0; a < nsizes; a++) cl[a] = 0.5 * (double)D * log(x[a]) - x[a];
      gfi_linfit cf;
      cli_check(gfi_fit_line(x, cl, NULL, 0, nsizes, 0, &cf), "claimed slope");
      claimed = cf.slope;
      classical = -1.0;
    } else {
      claimed = -4.0 / (double)(D + 4);
      classical = claimed;
      for (size_t a = 0; a < nsizes; a++) cl[a] = claimed * x[a];
    }
    const char *verdict = fit.slope_lo95 > claimed ? "NOT-consistent(slower)"
                          : fit.slope_hi95 < claimed ? "consistent(faster)"
                                                     : "consistent";
    for (int a = 0; a < 2; a++) {
      FILE *f = a ? tab : stdout;
      if (!f) continue;
      fprintf(f, "%s %s %d %zu %s %s %s %zu %zu %.4f %.4f %.4f %.4f %.4f %.3g %.4g %s\n", row->name,
              row->theorem, row->l, D, row->design, row->truth,
              row->rule_text, n0, n0 << (nsizes - 1), claimed, classical, fit.slope, fit.slope_lo95, fit.slope_hi95,
              fit.chi2_dof, (double)flagged / (double)total, verdict);
      fflush(f);
    }
    if (dat) {
      if (block++) fprintf(dat, "\n\n");
      fprintf(dat, "# row %s: %s, l = %d, D = %zu, %s; observed %.4f [%.4f, %.4f], claimed %.4f\n",
              row->name, row->theorem, row->l, D, row->rule_text, fit.slope, fit.slope_lo95, fit.slope_hi95,
              claimed);
      fprintf(dat, "# setup %s: design %s, truth %s, noise %s\n", row->name, row->design, row->truth, NOISE);
      /* reference line with the claimed slope through the fit at the first size */
      double c0 = fit.intercept + fit.slope * x[0] - cl[0];
      for (size_t a = 0; a < nsizes; a++)
        fprintf(dat, "%zu %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", n0 << a, rr[a], mse[a], se[a],
                b2[a], var[a], ff[a], exp(fit.intercept + fit.slope * x[a]), exp(c0 + cl[a]));
    }
    gfi_model_free(design);
    gfi_regfun_free(truth);
  }
  free(pts);
  free(x); free(y); free(sg); free(mse); free(se); free(b2); free(var); free(rr); free(ff); free(cl);
  if (dat) fclose(dat);
  if (tab) fclose(tab);
  return 0;
}
