/* gfi regress-rates: Monte-Carlo check of FourierFormer's regression rates
 * (Theorem 2: l >= 6, R ~ N^(1/(D+4)), MSE ~ N^(-4/(D+4)); Theorem 4: l = 1,
 * supersmooth design, R = (log N / 2C)^(1/alpha), MSE ~ (log N)^(D/alpha)/N)
 * with the Gaussian Nadaraya-Watson estimator as the classical baseline.
 * The work is gfi_exp_regress_rates (experiments/gfi_exp/rate_checks.h);
 * this file parses the options and prints. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/rate_checks.h"

static const char *help =
  "usage: gfi regress-rates [--size small|medium|large] [--out DIR] [options]\n\n"
  "Check the regression rate theorems of FourierFormer by Monte Carlo: for each\n"
  "row, the design-weighted integrated MSE E int (f_hat - f)^2 p over replications\n"
  "at sample sizes N = N0, 2 N0, ..., a weighted line fit of log MSE on log N, and\n"
  "a verdict. The theorems are upper bounds: the verdict is 'slower-than-claimed'\n"
  "when the observed exponent is significantly (95%) larger (slower decay) than\n"
  "claimed, 'faster-than-claimed' when significantly smaller, else 'consistent';\n"
  "the Gaussian row is the 'baseline' (no theorem). The same vocabulary as gfi\n"
  "rates (docs/experiments.md).\n\n"
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

int cmd_regress_rates(int argc, char **argv) {
  static const struct option opts[] = {
    {"size", required_argument, 0, 'S'},   {"reps", required_argument, 0, 'k'},
    {"points", required_argument, 0, 'M'}, {"rows", required_argument, 0, 'r'},
    {"seed", required_argument, 0, 's'},   {"out", required_argument, 0, 'o'},
    {"threads", required_argument, 0, 't'}, {"progress", no_argument, 0, 'P'},
    {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  gfi_exp_rrates_params P;
  gfi_exp_rrates_default(&P);
  int nthreads = 0, progress = isatty(2), c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'S': P.size = optarg; break;
      case 'k': P.reps = cli_size("--reps", optarg, 3); break;
      case 'M': P.points = cli_size("--points", optarg, 1); break;
      case 'r': P.rows = optarg; break;
      case 's': P.seed = cli_u64("--seed", optarg); break;
      case 'o': P.outdir = optarg; break;
      case 't': nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'P': progress = 1; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  gfi_exp_ctx ctx = {"gfi regress-rates", cli_argc, cli_argv, nthreads, progress ? stderr : NULL};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  int st = gfi_exp_regress_rates(&P, &ctx, stdout, NULL, NULL, &e);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (st) cli_die(EXIT_RUNTIME, "%s", e.msg);
  return 0;
}
