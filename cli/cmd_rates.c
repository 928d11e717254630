/* gfi rates: check FourierFormer's rate theorems (1, 3a, 3b) against the
 * exact MISE at the optimal radius, with Monte-Carlo checks at small N. The
 * work is gfi_exp_density_rates (experiments/gfi_exp/rate_checks.h); this
 * file parses the options and prints. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/rate_checks.h"

static void check_model(const char *opt, const char *arg, void *dst) {
  (void)dst;
  if (strpbrk(arg, " \t")) cli_usage(opt, "no whitespace in a model spec here");
}

static void header(FILE *f, void *arg) {
  (void)arg;
  cli_header(f);
}

int cmd_rates(int argc, char **argv) {
  gfi_exp_drates_params P;
  gfi_exp_drates_default(&P);
  const char *size = NULL, *ths = NULL, *l1 = NULL;
  size_t perdec = 0, mcreps = 0;
  int nthreads = 0, progress = 0;
  const cli_opt opts[] = {
    {"size", CLI_STR, &size, .def = "quick", .arg = "S",
     .help = "quick (N = 1e2..1e6, 1 point per decade, fit on the last 3 decades,\n"
             "MC 40 reps at N <= 1e2; about a minute on 2 cores) or full (N = 1e2..1e9,\n"
             "2 per decade, fit on the last 4 decades, MC up to N = 1e7: 100 reps at\n"
             "N <= 316, then 100 sqrt(316/N), at least 8)"},
    {"theorems", CLI_STR, &ths, .def = "1,3a,3b", .arg = "LIST", .help = "subset of 1,3a,3b"},
    {"l1", CLI_STR, &l1, .arg = "L1,L2,..",
     .help = "kernel powers for Theorem 1, one row each (default 4; e.g. 3,4,6,8:\n"
             "l = 3 fails the theorem's moment hypothesis and reads l<4)"},
    {"phi1", CLI_STR, NULL, .arg = "SPEC", .flags = CLI_MULTI,
     .help = "a kernel for Theorem 1 as --phi takes it (poly:a1,..,ad or pow:L), one\n"
             "row each after those of --l1, named 1p1, 1p2, ... (a polynomial meets\n"
             "the moment hypothesis when its lowest power is >= 4)"},
    {"model", CLI_STR, NULL, .arg = "SPEC", .flags = CLI_MULTI, .parse = check_model,
     .help = "truth (default normal, cauchy, laplace and, in 1-D, mw:6)"},
    {"dim", CLI_SIZE, &P.D, .def = "1", .arg = "D", .min = 1, .help = "dimension 1..3"},
    {"nmin", CLI_POSITIVE, &P.nmin, .arg = "N", .help = "smallest N (overrides the size's grid)", .section = "grid"},
    {"nmax", CLI_POSITIVE, &P.nmax, .arg = "N", .help = "largest N"},
    {"per-decade", CLI_SIZE, &perdec, .arg = "K", .min = 1, .help = "sample sizes per decade"},
    {"fit-decades", CLI_POSITIVE, &P.fit_decades, .arg = "F", .help = "decades the fit uses, counted from the top"},
    {"mc", CLI_SIZE, &mcreps, .arg = "REPS", .help = "Monte-Carlo replications (0 skips the check)",
     .section = "Monte-Carlo check"},
    {"mc-nmax", CLI_POSITIVE, &P.mc_nmax, .arg = "N", .help = "check at N <= this"},
    {"seed", CLI_U64, &P.seed, .def = "1", .arg = "S", .help = "seed of the check"},
    {"slack", CLI_DOUBLE, &P.slack, .def = "0.02", .arg = "X",
     .help = "allowance for pre-asymptotic curvature in the verdict", .section = "output"},
    {"out", CLI_STR, &P.outdir, .arg = "DIR",
     .help = "also write DIR/rates_table.dat and one series file per row,\n"
             "DIR/rates_<theorem>_<k>.dat (plots/mise_rates.gp draws them)"},
    {"threads", CLI_INT, &nthreads, .def = "0", .arg = "T", .help = "threads (0 = all cores)"},
    {"progress", CLI_FLAG, &progress, .help = "progress on stderr even when it is not a terminal"},
    {0}};
  const cli_spec spec = {
    "usage: gfi rates [--size quick|full] [--theorems 1,3a,3b] [--model SPEC ..] [--dim D]\n"
    "                 [--out DIR] [options]\n\n"
    "For each theorem and truth: R*(N) and MISE*(N) = min_R MISE (exact, Plancherel;\n"
    "Brent on log R) over N = 10^k, fitted exponents of both (least squares on the\n"
    "last decades, 95% intervals) beside the theorem's claimed exponent, the\n"
    "classical exponent of a kernel of the same order, and a verdict (docs/theory.md\n"
    "section 4; docs/experiments.md). Theorem 1 uses phi = z^4, 3a z^1, 3b z^2. For\n"
    "normal-mixture truths a Gaussian-KDE row (exact MISE at its optimal bandwidth) is\n"
    "the baseline. At N <= --mc-nmax the Monte-Carlo MISE (Plancherel ISE) at R*\n"
    "checks the exact value; mc_max_z is the largest |MC - exact| / se.\n",
    opts,
    "Columns: theorem model dim l class order claimed classical observed lo95 hi95\n"
    "R_claimed R_observed n_fit mc_points mc_max_z verdict condition\n"
    "(verdict: consistent, faster-than-claimed or slower-than-claimed against the\n"
    "claimed exponent, within --slack; baseline for the Gaussian-KDE rows;\n"
    "condition: 'met', or which hypotheses of the theorem the truth or kernel\n"
    "fail: not-C2 or l<4 (Theorem 1), beta<=1 (3a), beta<=3 (3b: the Laplace\n"
    "density, beta = 2); the row is still measured)\n"};
  if (cli_parse(&spec, argc, argv)) return 0;
  if (!strcmp(size, "quick")) P.full = 0;
  else if (!strcmp(size, "full")) P.full = 1;
  else cli_usage("--size", "expected quick or full, got '%s'", size);
  if (cli_given("per-decade")) P.per_decade = (double)perdec;
  if (cli_given("mc")) P.mc_reps = (long)mcreps;
  size_t nm;
  const char *const *models = cli_values("model", &nm);
  if (nm > GFI_EXP_DRATES_MAXMODELS) cli_usage("--model", "at most %d models", GFI_EXP_DRATES_MAXMODELS);
  for (size_t a = 0; a < nm; a++) P.models[P.nmodels++] = models[a];
  size_t nk;
  const char *const *phis = cli_values("phi1", &nk);
  if (nk > GFI_EXP_DRATES_MAXL) cli_usage("--phi1", "at most %d kernels", GFI_EXP_DRATES_MAXL);
  for (size_t a = 0; a < nk; a++) P.phi1[P.nphi1++] = phis[a];
  {
    char *copy = strdup(ths), *save = NULL;
    if (!copy) cli_die(EXIT_RUNTIME, "--theorems: out of memory copying '%s'", ths);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      const gfi_exp_theorem *T = gfi_exp_theorem_find(tok);
      if (!T || T->regression) cli_usage("--theorems", "unknown theorem '%s' (expected 1, 3a or 3b)", tok);
      if (P.ntheorems == 3) cli_usage("--theorems", "at most 3 theorems");
      P.theorems[P.ntheorems++] = T->id;
    }
    free(copy);
    if (!P.ntheorems) cli_usage("--theorems", "empty list");
  }
  if (l1) {
    char *copy = strdup(l1), *save = NULL;
    if (!copy) cli_die(EXIT_RUNTIME, "--l1: out of memory copying '%s'", l1);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      char *end;
      long v = strtol(tok, &end, 10);
      if (end == tok || *end || v < 1 || v > 8) cli_usage("--l1", "expected powers 1..8, got '%s'", tok);
      if (P.nl1 == GFI_EXP_DRATES_MAXL) cli_usage("--l1", "at most %d powers", GFI_EXP_DRATES_MAXL);
      P.l1[P.nl1++] = (int)v;
    }
    free(copy);
    if (!P.nl1) cli_usage("--l1", "empty list");
  }
  gfi_exp_ctx ctx = {.program = "gfi rates", .argc = cli_argc, .argv = cli_argv, .nthreads = nthreads,
                     .progress = (progress || isatty(2)) ? stderr : NULL, .header = header};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  int st = gfi_exp_density_rates(&P, &ctx, stdout, NULL, NULL, &e);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (st) cli_die(EXIT_RUNTIME, "%s", e.msg);
  cli_finish_output(stdout, "the table");
  return 0;
}
