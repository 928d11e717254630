/* gfi reproduce: FourierFormer's synthetic density and regression figures
 * (appendix E.4, Figures 1 and 2) with the rate checks, the FLT study and
 * every figure. The work is gfi_exp_reproduce (experiments/gfi_exp/
 * reproduce.h); this file parses the options and prints its errors. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/reproduce.h"

#ifndef GFI_SOURCE_PLOTS_DIR
#define GFI_SOURCE_PLOTS_DIR ""
#endif
#ifndef GFI_INSTALL_PLOTS_DIR
#define GFI_INSTALL_PLOTS_DIR ""
#endif

static double *list_opt(const char *opt, const char *s, size_t *n) {
  double *v = cli_list(opt, s, n);
  for (size_t i = 0; i < *n; i++)
    if (!(v[i] > 0)) cli_usage(opt, "values must be > 0, got %g", v[i]);
  return v;
}

static void check_mode(const char *opt, const char *arg, void *dst) {
  (void)dst;
  if (strcmp(arg, "full") && strcmp(arg, "quick") && strcmp(arg, "none"))
    cli_usage(opt, "expected full, quick or none, got '%s'", arg);
}

static void header(FILE *f, void *arg) {
  (void)arg;
  cli_header(f);
}

int cmd_reproduce(int argc, char **argv) {
  gfi_exp_repro_params P;
  gfi_exp_repro_default(&P);
  const char *sensR = NULL, *sensBox = NULL, *sensRBox = NULL, *phi = NULL;
  int quiet = 0, nthreads = 0;
  const cli_opt opts[] = {
    {"out", CLI_STR, &P.out, .def = "results", .arg = "DIR", .help = "output directory (no spaces or quotes)"},
    {"quick", CLI_FLAG, &P.quick, .help = "small sizes (under a minute): N 10000 / 9000, M 300, 3 seeds,\n"
                                          "smaller grids, reduced rate checks, the FLT study's quick mode"},
    {"full", CLI_FLAG, &P.full, .help = "the long variant (about twice the default's time): Monte-Carlo checks of\n"
                                        "the density rates to N = 1e7 (default 1e6) and 200 replications\n"
                                        "of the regression rates (default 100)"},
    {"seeds", CLI_SIZE, &P.seeds, .arg = "K", .min = 2, .help = "replications (default 5; quick 3; K >= 2)"},
    {"seed", CLI_U64, &P.seed, .def = "1", .arg = "S", .help = "base seed"},
    {"n-density", CLI_SIZE, &P.n_density, .arg = "N", .min = 1,
     .help = "sample size of Figures 1A and 1B (default 100000; quick 10000)", .section = "experiments"},
    {"n-regress", CLI_SIZE, &P.n_regress, .arg = "N", .min = 1,
     .help = "sample size of Figure 2 (default 90000; quick 9000)"},
    {"points", CLI_SIZE, &P.points, .arg = "M", .min = 1, .help = "test points per box (default 1000; quick 300)"},
    {"phi", CLI_STR, &phi, .def = "pow:4", .arg = "pow:L", .help = "kernel phi(z) = z^L"},
    {"R", CLI_POSITIVE, &P.R, .def = "2", .arg = "R", .help = "the fixed radius"},
    {"model-1d", CLI_STR, &P.model_1d, .def = "normal", .arg = "SPEC", .help = "Figure 1A truth, i.e. N(0, 1)"},
    {"model-2d", CLI_STR, &P.model_2d, .def = "normal:cov=1,0.5,0.5,1", .arg = "SPEC", .help = "Figure 1B truth"},
    {"design", CLI_STR, &P.design, .def = "normal:cov=1,0.5,0.5,1", .arg = "SPEC", .help = "Figure 2 design, 2-D"},
    {"truth", CLI_STR, &P.truth, .def = "poly:0,1,-0.5,0.2", .arg = "F",
     .help = "Figure 2 regression function (the default:\nf(x) = x1 - 0.5 x1^2 + 0.2 x1^3)"},
    {"noise", CLI_STR, &P.noise, .def = "gauss:0.5", .arg = "N", .help = "Figure 2 noise"},
    {"box", CLI_POSITIVE, &P.box, .def = "3", .arg = "B", .help = "density test box [-B, B]^D"},
    {"regress-box", CLI_POSITIVE, &P.regress_box, .def = "2", .arg = "B", .help = "regression test box [-B, B]^2"},
    {"sens-R", CLI_STR, &sensR, .def = "1,2,3,5,8,13", .arg = "LIST",
     .help = "radii of the sensitivity table (the fixed and oracle radii are\nalways added)",
     .section = "sensitivity and oracle"},
    {"sens-box", CLI_STR, &sensBox, .def = "2,3,5,10", .arg = "LIST", .help = "density boxes of the sensitivity table"},
    {"sens-regress-box", CLI_STR, &sensRBox, .def = "1,2,3,5", .arg = "LIST", .help = "regression boxes"},
    {"pilot-reps", CLI_SIZE, &P.pilot_reps, .arg = "K", .min = 1,
     .help = "pilot replications of the regression oracle (default 3; quick 2)"},
    {"flt", CLI_STR, &P.flt, .arg = "MODE", .parse = check_mode,
     .help = "full, quick or none (default full; quick with --quick)", .section = "studies"},
    {"rates", CLI_STR, &P.rates, .arg = "MODE", .parse = check_mode,
     .help = "full, quick or none: the density and regression rate checks\n"
             "(default full = gfi rates --size full and regress-rates\n"
             "--size large with the budgets of --full or of the default\n"
             "(above), several minutes; quick = a few sizes and\n"
             "replications, seconds)"},
    {"threads", CLI_INT, &nthreads, .def = "0", .arg = "T", .help = "threads (0 = all cores)", .section = "run"},
    {"quiet", CLI_FLAG, &quiet, .help = "no step lines on stderr"},
    {0}};
  const cli_spec spec = {
    "usage: gfi reproduce [--out DIR] [--quick] [options]\n\n"
    "Reproduce FourierFormer's synthetic experiments (appendix E.4) and write data,\n"
    "figures (PNG and PDF, drawn by gnuplot) and DIR/summary.md:\n"
    "  Figure 1A  density of a 1-D normal from N = 100000 points, MSE at M = 1000 test\n"
    "             points uniform in the box [-b, b]          (paper: MSE 1.29e-5)\n"
    "  Figure 1B  the same for a 2-D normal with a dense covariance  (paper: 2.42e-5)\n"
    "  Figure 2   Nadaraya-Watson regression from N = 90000 pairs with a correlated\n"
    "             normal design and a cubic truth, MSE against the truth at M test\n"
    "             points uniform in [-b, b]^2                 (paper: MSE 0.06)\n"
    "each for three radius policies, over K seeds (seed k = RNG stream k of --seed):\n"
    "  fixed   R = --R (default 2, the middle of the paper's R = 1..3)\n"
    "  oracle  density: R* minimising the exact MISE (Plancherel) for the normal truth;\n"
    "          regression: R* minimising the Monte-Carlo MSE against the truth at\n"
    "          uniform test points in the default box, over pilot replications on\n"
    "          seed S + 1000003 (not the reported seeds)\n"
    "  data    chosen on each seed's own sample: LSCV (density) or leave-one-out\n"
    "          CV (regression), as a user without the truth would\n"
    "then a sensitivity table (MSE for each R of --sens-R and each box of --sens-box),\n"
    "the density rate checks (gfi rates --size full: exact MISE to N = 1e9, Monte-Carlo\n"
    "checks to 1e6, 1e7 with --full), the regression rate checks (gfi regress-rates\n"
    "--size large, 100 replications, 200 with --full) and the FLT study (as flt_study)\n"
    "into DIR/flt,\n"
    "all in this process (docs/experiments.md). The phi of every experiment is z^4\n"
    "(phi = pow:4) unless --phi says otherwise. --quick\n"
    "changes those marked 'quick'.\n",
    opts,
    "\nEvery step prints '[k/n] step ... seconds' on stderr (on a terminal also the\n"
    "step's progress: count, rate, ETA); a failing step prints\n"
    "\"gfi reproduce: step 'NAME' failed: REASON\" and the exit status is 1.\n"
    "gnuplot must be on PATH. Plot scripts: $GFI_PLOTS_DIR, else the source tree's\n"
    "plots/, else the installed share/gfi/plots.\n"};
  if (cli_parse(&spec, argc, argv)) return 0;
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

  gfi_exp_ctx ctx = {.program = "gfi reproduce", .argc = cli_argc, .argv = cli_argv, .nthreads = nthreads,
                     .progress = quiet ? NULL : stderr, .header = header,
                     .live = !quiet && isatty(STDERR_FILENO) ? stderr : NULL};
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
