/* gfi sample: draw N points from a truth model. */
#include <getopt.h>
#include <stdlib.h>
#include "cli.h"
#include "commands.h"

static const char *help =
  "usage: gfi sample --model SPEC --dim D --n N --seed S\n\n"
  "Draw N points from the model and print them, one point (D columns) per line.\n"
  "The points come from random stream (S, 0): the same S gives the same points.\n\n"
  "  --model SPEC  normal | normal:cov=c11,c12,... (row-major D x D)\n"
  "                | normal:mean=m1,..;cov=... | mw:K (Marron-Wand K=1..15, D=1)\n"
  "                | laplace[:mu,b] | cauchy[:x0,gamma] | t:NU | uniform[:a,b]\n"
  "                | beta:A,B    (1-D families in D > 1: i.i.d. on every axis)\n"
  "  --dim D       dimension (default 1)\n"
  "  --n N         number of points (>= 1)\n"
  "  --seed S      random seed (default 1)\n";

int cmd_sample(int argc, char **argv) {
  static const struct option opts[] = {
    {"model", required_argument, 0, 'm'}, {"dim", required_argument, 0, 'd'},
    {"n", required_argument, 0, 'n'},     {"seed", required_argument, 0, 's'},
    {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
  const char *spec = NULL;
  size_t D = 1, N = 0;
  uint64_t seed = 1;
  int have_n = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'm': spec = optarg; break;
      case 'd': D = cli_size("--dim", optarg, 1); break;
      case 'n': N = cli_size("--n", optarg, 1); have_n = 1; break;
      case 's': seed = cli_u64("--seed", optarg); break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  if (!spec) cli_usage("--model", "required");
  if (!have_n) cli_usage("--n", "required");
  gfi_model *m = cli_model(spec, D);
  double *x = malloc(N * D * sizeof *x);
  gsl_rng *r = gfi_rng_stream(seed, 0);
  if (!x || !r) cli_die(EXIT_RUNTIME, "out of memory for %zu x %zu points", N, D);
  cli_check(gfi_model_sample(m, r, N, x), "sampling");
  cli_header(stdout);
  cli_meta(stdout, "model", "%s (%s)", spec, gfi_model_describe(m));
  cli_meta(stdout, "n", "%zu", N);
  cli_meta(stdout, "dim", "%zu", D);
  cli_meta(stdout, "seed", "%llu (stream 0)", (unsigned long long)seed);
  cli_columns(stdout, D, "");
  gfi_table_write_rows(stdout, N, D, x);
  gsl_rng_free(r);
  free(x);
  gfi_model_free(m);
  return 0;
}
