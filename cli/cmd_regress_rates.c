/* gfi regress-rates: Monte-Carlo check of FourierFormer's regression rates
 * (Theorem 2: l >= 6, R ~ N^(1/(D+4)), MSE ~ N^(-4/(D+4)); Theorem 4: l = 1,
 * supersmooth design, R = (log N / 2C)^(1/alpha), MSE ~ (log N)^(D/alpha)/N)
 * with the Gaussian Nadaraya-Watson estimator as the classical baseline.
 * The work is gfi_exp_regress_rates (experiments/gfi_exp/rate_checks.h);
 * this file parses the options and prints. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/rate_checks.h"

static void header(FILE *f, void *arg) {
  (void)arg;
  cli_header(f);
}

int cmd_regress_rates(int argc, char **argv) {
  gfi_exp_rrates_params P;
  gfi_exp_rrates_default(&P);
  int nthreads = 0, progress = 0;
  const cli_opt opts[] = {
    {"size", CLI_STR, &P.size, .def = "medium", .arg = "S",
     .help = "small (seconds), medium (about a minute on 2 cores) or large\n"
             "(several minutes): sizes, replications and points per row"},
    {"reps", CLI_SIZE, &P.reps, .arg = "K", .min = 3, .help = "replications per size (overrides --size)"},
    {"points", CLI_SIZE, &P.points, .arg = "M", .min = 1,
     .help = "evaluation points drawn from the design (overrides --size)"},
    {"rows", CLI_STR, &P.rows, .arg = "LIST",
     .help = "comma-separated subset of the rows above and the defined ones\n"
             "(default: all built-in rows, or only the defined ones with --define)"},
    {"define", CLI_STR, NULL, .arg = "SPEC", .flags = CLI_MULTI,
     .help = "define a row (at most 16):\n"
             "NAME:thm=2|4|gauss[;dim=D][;l=L][;c=C][;design=SPEC][;truth=SPEC]\n"
             "[;box=B][;at=x/x/...]  (see below)"},
    {"seed", CLI_U64, &P.seed, .def = "1", .arg = "S",
     .help = "replication k of size N uses stream (S', k) with S' = S + N; the\n"
             "design points come from stream (S, 2^62) (and (S + 1, 2^62), ...\n"
             "when a box rejects some)"},
    {"out", CLI_STR, &P.outdir, .arg = "DIR",
     .help = "also write DIR/regress_rates.dat (per size) and\n"
             "DIR/regress_rates_table.dat (the table); plots/regress_rates.gp draws them"},
    {"threads", CLI_INT, &nthreads, .def = "0", .arg = "T", .help = "threads over replications (0 = all cores)"},
    {"progress", CLI_FLAG, &progress, .help = "progress on stderr (default: only when stderr is a terminal)"},
    {0}};
  const cli_spec spec = {
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
    "  thm2-1d-pt   as thm2-1d, the MSE at the fixed points x = 0, 1, 2 (centre,\n"
    "               shoulder, tail: p(x) = 0.399, 0.242, 0.054), one row NAME@x per\n"
    "               point; Theorem 2 bounds MSE(x) by C / (p(x)^2 J(R))      claimed -4/5\n"
    "  thm4-1d      Fourier NW, phi = z (l = 1), D = 1: the design and f p are supersmooth\n"
    "               (alpha = 2; f p has transform poly(t) exp(-t^2/2) <= C1 exp(-t^2/4),\n"
    "               so C = 1/4), R = (log N / 2C)^(1/2) = sqrt(2 log N); MSE over the\n"
    "               design restricted to |x| <= 2, where p is bounded below   claimed (log N)^(1/2)/N\n"
    "  thm4-1d-all  the same over the whole design (Thm4*: outside the theorem's setting,\n"
    "               condition p-not-bounded-below; where p -> 0 the l = 1 denominator\n"
    "               nearly cancels, see the report)\n"
    "  thm4-2d      Fourier NW, l = 1, D = 2, design N(0, I), truth polysum:0,1,-0.5,0.2\n"
    "               (a cubic of each axis), R = sqrt(2 log N) on both axes, |x_j| <= 2\n"
    "                                                                       claimed log N/N\n"
    "  gauss-1d     Gaussian NW, h = 0.5 N^(-1/5) (classical baseline)      classical -4/5\n"
    "'claimed' for Theorem 4 is the slope of log((log N)^(D/alpha)/N) fitted over the\n"
    "same sizes; 'classical' is the rate of a kernel of the same order (second order:\n"
    "-4/(D+4); the sinc kernel (l = 1) is of infinite order: -1).\n\n"
    "Pointwise rows also print '# gamma ROW:' lines: the slope of log C(x) on\n"
    "log(1/p(x)), C(x) = MSE(N, x) / claimed rate(N) (geometric mean over N);\n"
    "with --out they are in DIR/regress_points.dat with p(x), C(x) p(x), C(x) p(x)^2.\n",
    opts,
    "--define: thm=2: phi = z^l (l = 6 by default; l < 6 is measured with condition\n"
    "l<6), R = c N^(1/(D+4)) (c = 1); thm=4: l = 1, R = sqrt(log N / (2c)), c the\n"
    "constant C of the supersmooth design (0.25); thm=gauss: Gaussian NW, h = c\n"
    "N^(-1/(D+4)) (c = 0.5). dim = 1..3 (1); design (normal) and truth\n"
    "(poly:0,1,-0.5,0.2) as gfi regress-sample takes them; box = B keeps the\n"
    "design points in |x_j| <= B; at = fixed points, '/' between points and ','\n"
    "between coordinates. Example:\n"
    "  gfi regress-rates --define 'tail:thm=2;at=0/1.5/2.5;truth=sin'\n"};
  if (cli_parse(&spec, argc, argv)) return 0;
  if (!cli_given("progress")) progress = isatty(2);
  P.defines = cli_values("define", &P.ndefines);
  gfi_exp_ctx ctx = {.program = "gfi regress-rates", .argc = cli_argc, .argv = cli_argv, .nthreads = nthreads,
                     .progress = progress ? stderr : NULL, .header = header};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  int st = gfi_exp_regress_rates(&P, &ctx, stdout, NULL, NULL, &e);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (st) cli_die(EXIT_RUNTIME, "%s", e.msg);
  cli_finish_output(stdout, "the table");
  return 0;
}
