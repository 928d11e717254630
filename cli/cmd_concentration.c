/* gfi concentration: FourierFormer's Lemma 1 (Bernstein concentration of
 * the density estimator at a point) by Monte Carlo. The work is
 * gfi_exp_lemma1 (experiments/gfi_exp/lemma1.h); this file parses the
 * options and prints. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/lemma1.h"

static void header(FILE *f, void *arg) {
  (void)arg;
  cli_header(f);
}

int cmd_concentration(int argc, char **argv) {
  gfi_exp_lemma1_params P;
  gfi_exp_lemma1_default(&P);
  const char *at = NULL;
  int nthreads = 0;
  double R = 0;
  const cli_opt opts[] = {
    {"model", CLI_STR, &P.model, .def = "normal", .arg = "SPEC", .help = "1-D truth model"},
    {"at", CLI_STR, &at, .def = "0,1.5", .arg = "x1,x2,..", .help = "points x (at most 8)"},
    {"l", CLI_INT, &P.l, .def = "4", .arg = "L", .min = 1, .help = "phi(z) = z^L, L = 1..8"},
    {"n", CLI_SIZE, &P.N, .def = "500", .arg = "N", .min = 2, .help = "sample size"},
    {"R", CLI_POSITIVE, &R, .arg = "R", .help = "radius (default N^(1/3), Theorem 1's schedule in D = 1)"},
    {"reps", CLI_SIZE, &P.reps, .def = "20000", .arg = "K", .min = 100, .help = "replications"},
    CLI_OPT_SEED(P.seed),
    {"out", CLI_STR, &P.outdir, .arg = "DIR",
     .help = "also write DIR/lemma1.dat (tail curves) and DIR/lemma1_delta.dat;\n"
             "plots/lemma1.gp draws them"},
    CLI_OPT_THREADS(nthreads),
    {0}};
  const cli_spec spec = {
    "usage: gfi concentration [--model SPEC] [--at x1,..] [--n N] [--R R] [--reps K] [--out DIR]\n\n"
    "Check FourierFormer's Lemma 1, Bernstein's inequality for the density\n"
    "estimator at a point, by Monte Carlo: K replications of N draws give\n"
    "p_hat(x); the empirical probability P(|p_hat(x) - E p_hat(x)| >= t) is set\n"
    "against 2 exp(-N t^2 / (2 sigma^2 + 2 b t / 3)), sigma^2 the variance of one\n"
    "kernel term (quadrature, and the density-free bound ||p||_inf R A_2l/A_l^2)\n"
    "and b = R/A_l (2 R/A_l for odd l). Printed per point and delta = 0.1, 0.05,\n"
    "0.01, 0.001: t(delta), the radius the bound guarantees with probability\n"
    "1 - delta (L = log(2/delta): t = bL/3N + sqrt((bL/3N)^2 + 2 sigma^2 L/N)),\n"
    "the same with the sup-norm variance, and the empirical frequency of\n"
    "|p_hat(x) - E p_hat(x)| >= t(delta), which the lemma says is <= delta.\n",
    opts, NULL};
  if (cli_parse(&spec, argc, argv)) return 0;
  if (P.l > 8) cli_usage("--l", "expected 1..8");
  size_t n = 0;
  double *x = cli_list("--at", at, &n);
  if (n == 0 || n > GFI_EXP_LEMMA1_MAXPTS) cli_usage("--at", "expected 1 to %d points", GFI_EXP_LEMMA1_MAXPTS);
  memcpy(P.at, x, n * sizeof *x);
  P.nat = n;
  free(x);
  P.R = R;
  gfi_exp_ctx ctx = {.program = "gfi concentration", .argc = cli_argc, .argv = cli_argv, .nthreads = nthreads,
                     .header = header};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  int st = gfi_exp_lemma1(&P, &ctx, stdout, NULL, &e);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (st) cli_die(EXIT_RUNTIME, "%s", e.msg);
  cli_finish_output(stdout, "the table");
  return 0;
}
