/* gfi rates: check FourierFormer's rate theorems (1, 3a, 3b) against the
 * exact MISE at the optimal radius, with Monte-Carlo checks at small N. The
 * work is gfi_exp_density_rates (experiments/gfi_exp/rate_checks.h); this
 * file parses the options and prints. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/rate_checks.h"

static const char *help =
  "usage: gfi rates [--size quick|full] [--theorems 1,3a,3b] [--model SPEC ..] [--dim D]\n"
  "                 [--out DIR] [options]\n\n"
  "For each theorem and truth: R*(N) and MISE*(N) = min_R MISE (exact, Plancherel;\n"
  "Brent on log R) over N = 10^k, fitted exponents of both (least squares on the\n"
  "last decades, 95% intervals) beside the theorem's claimed exponent, the\n"
  "classical exponent of a kernel of the same order, and a verdict (docs/theory.md\n"
  "section 4). Theorem 1 uses phi = z^4, 3a z^1, 3b z^2. For normal-mixture\n"
  "truths a Gaussian-KDE row (exact MISE at its optimal bandwidth) is the baseline.\n"
  "At N <= --mc-nmax the Monte-Carlo MISE (Plancherel ISE) at R* checks the exact\n"
  "value; mc_max_z is the largest |MC - exact| / se.\n\n"
  "  --size S          quick (default: N = 1e2..1e6, 1 point per decade, fit on the\n"
  "                    last 3 decades, MC 40 reps at N <= 1e2; about a minute on\n"
  "                    2 cores) or full (N = 1e2..1e9, 2 per decade, fit on the\n"
  "                    last 4 decades, MC 100 reps at N <= 316)\n"
  "  --theorems LIST   subset of 1,3a,3b (default all)\n"
  "  --model SPEC      truth (repeatable; default normal, cauchy, laplace and, in\n"
  "                    1-D, mw:6)\n"
  "  --dim D           dimension 1..3 (default 1)\n"
  "  --nmin N --nmax N --per-decade K --fit-decades F   override the size's grid\n"
  "  --mc REPS --mc-nmax N --seed S                     override the MC check\n"
  "                    (--mc 0 skips it)\n"
  "  --slack X         allowance for pre-asymptotic curvature in the verdict (0.02)\n"
  "  --out DIR         also write DIR/rates_table.dat and one series file per row,\n"
  "                    DIR/rates_<theorem>_<k>.dat (plots/mise_rates.gp draws them)\n"
  "  --threads T       threads (default 0 = all cores)\n"
  "  --progress        progress on stderr even when it is not a terminal\n\n"
  "Columns: theorem model dim l class order claimed classical observed lo95 hi95\n"
  "R_claimed R_observed n_fit mc_points mc_max_z verdict condition\n"
  "(verdict: consistent, faster-than-claimed or slower-than-claimed against the\n"
  "claimed exponent, within --slack; baseline for the Gaussian-KDE rows)\n"
  "(condition: 'met', or which hypothesis of the theorem the truth fails,\n"
  "e.g. not-C2 for Theorem 1 on the Laplace density; the row is still measured)\n";

int cmd_rates(int argc, char **argv) {
  static const struct option opts[] = {
    {"size", required_argument, 0, 'z'},   {"theorems", required_argument, 0, 'T'},
    {"model", required_argument, 0, 'm'},  {"dim", required_argument, 0, 'd'},
    {"nmin", required_argument, 0, 'a'},   {"nmax", required_argument, 0, 'b'},
    {"per-decade", required_argument, 0, 'k'}, {"fit-decades", required_argument, 0, 'f'},
    {"mc", required_argument, 0, 'c'},     {"mc-nmax", required_argument, 0, 'C'},
    {"seed", required_argument, 0, 's'},   {"slack", required_argument, 0, 'S'},
    {"out", required_argument, 0, 'o'},    {"threads", required_argument, 0, 't'},
    {"progress", no_argument, 0, 'P'},     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  gfi_exp_drates_params P;
  gfi_exp_drates_default(&P);
  const char *size = "quick", *ths = "1,3a,3b";
  int nthreads = 0, progress = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'z': size = optarg; break;
      case 'T': ths = optarg; break;
      case 'm':
        if (P.nmodels == GFI_EXP_DRATES_MAXMODELS) cli_usage("--model", "at most %d models", GFI_EXP_DRATES_MAXMODELS);
        if (strpbrk(optarg, " \t")) cli_usage("--model", "no whitespace in a model spec here");
        P.models[P.nmodels++] = optarg;
        break;
      case 'd': P.D = cli_size("--dim", optarg, 1); break;
      case 'a': P.nmin = cli_positive("--nmin", optarg); break;
      case 'b': P.nmax = cli_positive("--nmax", optarg); break;
      case 'k': P.per_decade = (double)cli_size("--per-decade", optarg, 1); break;
      case 'f': P.fit_decades = cli_positive("--fit-decades", optarg); break;
      case 'c': P.mc_reps = (long)cli_size("--mc", optarg, 0); break;
      case 'C': P.mc_nmax = cli_positive("--mc-nmax", optarg); break;
      case 's': P.seed = cli_u64("--seed", optarg); break;
      case 'S': P.slack = cli_double("--slack", optarg); break;
      case 'o': P.outdir = optarg; break;
      case 't': nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'P': progress = 1; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  if (!strcmp(size, "quick")) P.full = 0;
  else if (!strcmp(size, "full")) P.full = 1;
  else cli_usage("--size", "expected quick or full, got '%s'", size);
  {
    char *copy = strdup(ths), *save = NULL;
    if (!copy) cli_die(EXIT_RUNTIME, "out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      const gfi_exp_theorem *T = gfi_exp_theorem_find(tok);
      if (!T || T->regression) cli_usage("--theorems", "unknown theorem '%s' (expected 1, 3a or 3b)", tok);
      if (P.ntheorems == 3) cli_usage("--theorems", "at most 3 theorems");
      P.theorems[P.ntheorems++] = T->id;
    }
    free(copy);
    if (!P.ntheorems) cli_usage("--theorems", "empty list");
  }
  gfi_exp_ctx ctx = {"gfi rates", cli_argc, cli_argv, nthreads, (progress || isatty(2)) ? stderr : NULL};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  int st = gfi_exp_density_rates(&P, &ctx, stdout, NULL, NULL, &e);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (st) cli_die(EXIT_RUNTIME, "%s", e.msg);
  return 0;
}
