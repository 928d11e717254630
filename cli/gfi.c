/* gfi: command-line front end. One subcommand per task; --help on each. */
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include "cli.h"
#include "cli_guard.h"
#include "cli_mpi.h"
#include "commands.h"
#include "gfi_version.h"

typedef struct {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
  int mpi; /* 1: splits its work over MPI ranks; 0: runs on rank 0 alone */
} command;

/* What the output guard refuses in a command's rows (cli_guard.h): NaN and
 * infinities (0), infinities only (1: the table marks flagged rows or "not
 * available" by nan in documented columns: regress's and attention's flagged
 * rows, ropt's Gaussian baseline, bias2 and var of some Monte-Carlo rows, the
 * experiments' skipped checks), nothing (2: flt-complexity's rstar = inf and
 * the reproduction's reports, whose inf is a documented value). */
static int guard_level(const char *name) {
  static const char *strict[] = {"sample", "pdf", "density", "regress-sample", "sweep"};
  static const char *off[] = {"flt-complexity", "flt-error", "reproduce"}; /* documented inf: c, rstar */
  for (size_t i = 0; i < sizeof strict / sizeof strict[0]; i++)
    if (strcmp(name, strict[i]) == 0) return 0;
  for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
    if (strcmp(name, off[i]) == 0) return 2;
  return 1;
}

static const command commands[] = {
  {"sample", cmd_sample, "draw points from a truth model", 0},
  {"pdf", cmd_pdf, "true density of a model at given points", 0},
  {"density", cmd_density, "generalized Fourier (or Gaussian) density estimate at given points", 1},
  {"regress", cmd_regress, "Nadaraya-Watson regression (Fourier or Gaussian kernel) at given points", 1},
  {"regress-sample", cmd_regress_sample, "draw (x, y) pairs: design model, truth function, noise", 0},
  {"regress-mse", cmd_regress_mse, "Monte-Carlo MSE (bias, variance) of a NW estimator at points", 0},
  {"regress-rates", cmd_regress_rates, "Monte-Carlo check of the regression rate theorems (Thm 2, Thm 4)", 0},
  {"attention", cmd_attention, "Fourier or softmax attention of given Q, K, V (heads), with gradients", 0},
  {"concentration", cmd_concentration, "Lemma 1: tail of p_hat(x) - E p_hat(x) against Bernstein's bound", 0},
  {"flt-error", cmd_flt_error, "max-norm error of FLT random features for an RPE mask, over trials", 0},
  {"flt-complexity", cmd_flt_complexity, "FLT sample complexity r*(eps, delta) against Theorem 4.2", 0},
  {"mise", cmd_mise, "exact or Monte-Carlo MISE of the density estimator", 1},
  {"ropt", cmd_ropt, "MISE-optimal radius R* (and the Gaussian-KDE baseline)", 0},
  {"rates", cmd_rates, "check the rate theorems (1, 3a, 3b) on the exact MISE", 0},
  {"correlation", cmd_correlation, "isotropic Fourier against isotropic and full-H Gaussian KDEs, correlated normal", 0},
  {"sweep", cmd_sweep, "resumable MISE sweep over a grid of points", 1},
  {"reproduce", cmd_reproduce, "FourierFormer's Figures 1-2, rate checks and FLT study, with figures and summary", 0},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  fprintf(f,
          "usage: gfi <command> [options]      (gfi <command> --help for details)\n\n"
          "gfi: generalized Fourier integral estimators (FourierFormer, FLT).\n\ncommands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-15s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n  --version  print the version\n");
}

static int run(const command *c, int argc, char **argv) {
  cli_cmd = c->name;
  cli_guard_level(guard_level(c->name));
  cli_mpi_set_split(c->mpi);
  if (!c->mpi && cli_mpi_rank() != 0) return 0; /* the command runs on rank 0 alone */
  return c->run(argc, argv);
}

int main(int argc, char **argv) {
  cli_mpi_start(&argc, &argv);
  cli_mpi_agree(argc, argv);
  cli_guard_stdout();
  cli_argc = argc;
  cli_argv = argv;
  /* The program, not the library, decides about GSL's error handler: gfi
   * checks every status GSL returns, so a GSL report must not abort. */
  gsl_set_error_handler_off();
  if (argc < 2) {
    fprintf(stderr, "gfi: missing command (see 'gfi --help')\n");
    return EXIT_USAGE;
  }
  if (cli_is_help(argv[1])) {
    cli_guard_level(2); /* prose */
    usage(stdout);
    cli_finish_output(stdout, "standard output"); /* a failed write (a full disk) is exit 1 */
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("gfi %s (git %s)\n", GFI_VERSION, GFI_GIT_REVISION);
    cli_finish_output(stdout, "standard output");
    return 0;
  }
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(argv[1], commands[i].name) == 0) {
      int rc = run(commands + i, argc - 1, argv + 1);
      /* a row refused by the output guard that no cli_finish_output reported */
      if (!cli_stdout_closed()) fflush(stdout);
      const char *nf = cli_guard_tripped();
      if (nf && rc == 0) {
        fprintf(stderr, "gfi %s: %s\n", commands[i].name, nf);
        rc = EXIT_RUNTIME;
      }
      cli_mpi_end();
      return rc;
    }
  fprintf(stderr, "gfi: unknown command '%s' (see 'gfi --help')\n", argv[1]);
  return EXIT_USAGE;
}
