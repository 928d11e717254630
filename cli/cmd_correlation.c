/* gfi correlation: FourierFormer's claim that the Fourier density estimator
 * needs no covariance tuning, on the exact MISE of a correlated 2-D normal.
 * The work is gfi_exp_correlation (experiments/gfi_exp/correlation.h); this
 * file parses the options and prints. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"
#include "gfi_exp/correlation.h"

static void header(FILE *f, void *arg) {
  (void)arg;
  cli_header(f);
}

static void take(const char *opt, const char *s, double *dst, size_t *n) {
  size_t k;
  double *v = cli_list(opt, s, &k);
  if (!k) cli_usage(opt, "empty list");
  if (k > GFI_EXP_CORR_MAX) cli_usage(opt, "at most %d values", GFI_EXP_CORR_MAX);
  memcpy(dst, v, k * sizeof *v);
  *n = k;
  free(v);
}

int cmd_correlation(int argc, char **argv) {
  gfi_exp_corr_params P;
  gfi_exp_corr_default(&P);
  const char *rho = NULL, *n = NULL;
  int nthreads = 0, progress = 0;
  const cli_opt opts[] = {
    {"rho", CLI_STR, &rho, .def = "0,0.5,0.9,0.99", .arg = "LIST", .help = "correlations, each in (-1, 1)"},
    {"n", CLI_STR, &n, .def = "1e3,1e4,1e5", .arg = "LIST", .help = "sample sizes"},
    {"l", CLI_INT, &P.l, .def = "4", .arg = "L", .min = 1, .help = "Fourier kernel phi = z^L, 1..8"},
    {"out", CLI_STR, &P.outdir, .arg = "DIR",
     .help = "also write DIR/correlation.dat (plots/correlation.gp draws it)"},
    {"threads", CLI_INT, &nthreads, .def = "0", .arg = "T", .help = "threads (0 = all cores)"},
    {"progress", CLI_FLAG, &progress, .help = "progress on stderr even when it is not a terminal"},
    {0}};
  const cli_spec spec = {
    "usage: gfi correlation [--rho LIST] [--n LIST] [--l L] [--out DIR]\n\n"
    "FourierFormer's claim (section 3.1) that the Fourier density estimator needs no\n"
    "covariance tuning, on the truth N(0, [[1, rho], [rho, 1]]): for each rho and N the\n"
    "exact MISE of the isotropic Fourier estimator (one radius, R* minimising the\n"
    "Plancherel MISE), of the Gaussian KDE with H = h^2 I (h* optimal) and of the\n"
    "Gaussian KDE with a full bandwidth matrix H (H* optimal: the estimator that tunes\n"
    "the covariance), and the ratios of the first two to the third (docs/experiments.md).\n",
    opts,
    "Columns: rho n R_opt mise_fourier h_opt mise_iso H11 H12 H22 mise_full\n"
    "fourier_over_full iso_over_full\n"};
  if (cli_parse(&spec, argc, argv)) return 0;
  take("--rho", rho, P.rho, &P.nrho);
  take("--n", n, P.N, &P.nN);
  gfi_exp_ctx ctx = {.program = "gfi correlation", .argc = cli_argc, .argv = cli_argv, .nthreads = nthreads,
                     .progress = (progress || isatty(2)) ? stderr : NULL, .header = header};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  int st = gfi_exp_correlation(&P, &ctx, stdout, NULL, NULL, &e);
  if (st && e.param[0]) cli_usage(e.param, "%s", e.msg);
  if (st) cli_die(EXIT_RUNTIME, "%s", e.msg);
  cli_finish_output(stdout, "the table");
  return 0;
}
