/* gfi reproduce: FourierFormer's synthetic density and regression figures
 * (appendix E.4, Figures 1 and 2) with the rate checks, the FLT study and
 * every figure. The work is gfi_exp_reproduce (experiments/gfi_exp/
 * reproduce.h); this file parses the options and prints its errors. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/reproduce.h"

#ifndef GFI_SOURCE_PLOTS_DIR
#define GFI_SOURCE_PLOTS_DIR ""
#endif
#ifndef GFI_INSTALL_PLOTS_DIR
#define GFI_INSTALL_PLOTS_DIR ""
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
  "(gfi regress-rates --size large) and the FLT study (as flt_study) into DIR/flt,\n"
  "all in this process.\n"
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
  "plots/, else the installed share/gfi/plots.\n";

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
  gfi_exp_repro_params P;
  gfi_exp_repro_default(&P);
  const char *sensR = "1,2,3,5,8,13", *sensBox = "2,3,5,10", *sensRBox = "1,2,3,5", *phi = "pow:4";
  int quiet = 0, nthreads = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'o': P.out = optarg; break;
      case 'q': P.quick = 1; break;
      case 'K': P.seeds = cli_size("--seeds", optarg, 2); break;
      case 's': P.seed = cli_u64("--seed", optarg); break;
      case 'n': P.n_density = cli_size("--n-density", optarg, 1); break;
      case 'N': P.n_regress = cli_size("--n-regress", optarg, 1); break;
      case 'M': P.points = cli_size("--points", optarg, 1); break;
      case 'p': phi = optarg; break;
      case 'R': P.R = cli_positive("--R", optarg); break;
      case '1': P.model_1d = optarg; break;
      case '2': P.model_2d = optarg; break;
      case 'd': P.design = optarg; break;
      case 'f': P.truth = optarg; break;
      case 'e': P.noise = optarg; break;
      case 'b': P.box = cli_positive("--box", optarg); break;
      case 'B': P.regress_box = cli_positive("--regress-box", optarg); break;
      case 'r': sensR = optarg; break;
      case 'x': sensBox = optarg; break;
      case 'X': sensRBox = optarg; break;
      case 'P': P.pilot_reps = cli_size("--pilot-reps", optarg, 1); break;
      case 'F': P.flt = optarg; mode_opt("--flt", optarg); break;
      case 'T': P.rates = optarg; mode_opt("--rates", optarg); break;
      case 't': nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'Q': quiet = 1; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  double *sR = list_opt("--sens-R", sensR, &P.nsens_R);
  double *sB = list_opt("--sens-box", sensBox, &P.nsens_box);
  double *sRB = list_opt("--sens-regress-box", sensRBox, &P.nsens_regress_box);
  P.sens_R = sR, P.sens_box = sB, P.sens_regress_box = sRB;
  gfi_kernel K;
  cli_phi("--phi", phi, &K);
  P.l = K.l;
  const char *env = getenv("GFI_PLOTS_DIR");
  if (env && *env) P.plots_dirs[0] = env;
  else P.plots_dirs[0] = GFI_SOURCE_PLOTS_DIR, P.plots_dirs[1] = GFI_INSTALL_PLOTS_DIR;

  gfi_exp_ctx ctx = {"gfi reproduce", cli_argc, cli_argv, nthreads, quiet ? NULL : stderr};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  int st = gfi_exp_repro_check(&P, &e);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (!st) st = gfi_exp_reproduce(&P, &ctx, &e);
  free(sR), free(sB), free(sRB);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (st && e.step[0]) cli_die(EXIT_RUNTIME, "step '%s' failed: %s", e.step, e.msg);
  if (st) cli_die(EXIT_RUNTIME, "%s", e.msg);
  return 0;
}
