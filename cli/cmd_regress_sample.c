/* gfi regress-sample: draw N regression pairs (x_i, y_i). */
#include <getopt.h>
#include <stdlib.h>
#include "cli.h"
#include "commands.h"

static const char *help =
  "usage: gfi regress-sample --model SPEC --truth F [--noise N] --dim D --n N --seed S\n\n"
  "Draw N pairs: x_i from the design model SPEC (see 'gfi sample --help'), then\n"
  "y_i = F(x_i) + sd(x_i) e_i with e_i standard normal, from random stream (S, 0);\n"
  "prints D + 1 columns x1 .. xD y, the data format of 'gfi regress --data'.\n\n"
  "  --truth F     poly:c0,c1,...      sum_k c_k x_1^k (poly:c0,..;axis=J: axis J)\n"
  "                polysum:c0,c1,...   sum_j sum_k c_k x_j^k\n"
  "                sin[:w]             sin(w (x_1 + ... + x_D))\n"
  "                prod-sin[:w]        prod_j sin(w x_j)\n"
  "  --noise N     none (default) | gauss:S (sd S) | hetero:S0,S1 (sd S0 + S1 |x_1|)\n"
  "  --dim D       dimension (default 1)\n"
  "  --n N         number of pairs (>= 1)\n"
  "  --seed S      random seed (default 1)\n";

int cmd_regress_sample(int argc, char **argv) {
  static const struct option opts[] = {
    {"model", required_argument, 0, 'm'}, {"truth", required_argument, 0, 'f'},
    {"noise", required_argument, 0, 'e'}, {"dim", required_argument, 0, 'd'},
    {"n", required_argument, 0, 'n'},     {"seed", required_argument, 0, 's'},
    {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
  const char *spec = NULL, *truth = NULL, *noise_spec = NULL;
  size_t D = 1, N = 0;
  uint64_t seed = 1;
  int have_n = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'm': spec = optarg; break;
      case 'f': truth = optarg; break;
      case 'e': noise_spec = optarg; break;
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
  if (!truth) cli_usage("--truth", "required");
  if (!have_n) cli_usage("--n", "required");
  gfi_model *m = cli_model(spec, D);
  gfi_regfun *f = NULL;
  gfi_errinfo err;
  int st = gfi_regfun_parse(&f, truth, D, &err);
  if (st) cli_usage("--truth", "%s", err.msg[0] ? err.msg : gfi_strerror(st));
  gfi_noise nz;
  if (gfi_noise_parse(&nz, noise_spec, &err)) cli_usage("--noise", "%s", err.msg);
  double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y);
  gsl_rng *r = gfi_rng_stream(seed, 0);
  if (!x || !y || !r) cli_die(EXIT_RUNTIME, "out of memory for %zu x %zu points", N, D);
  cli_check(gfi_regress_sample(m, f, &nz, r, N, x, y), "sampling");
  char nd[128];
  gfi_noise_describe(&nz, nd, sizeof nd);
  cli_header(stdout);
  cli_meta(stdout, "model", "%s (%s)", spec, gfi_model_describe(m));
  cli_meta(stdout, "truth", "%s (%s)", truth, gfi_regfun_describe(f));
  cli_meta(stdout, "noise", "%s", nd);
  cli_meta(stdout, "n", "%zu", N);
  cli_meta(stdout, "dim", "%zu", D);
  cli_meta(stdout, "seed", "%llu (stream 0)", (unsigned long long)seed);
  cli_columns(stdout, D, "y");
  for (size_t i = 0; i < N; i++) {
    for (size_t j = 0; j < D; j++) {
      gfi_table_put(stdout, x[i * D + j]);
      fputc(' ', stdout);
    }
    gfi_table_put(stdout, y[i]);
    fputc('\n', stdout);
  }
  gsl_rng_free(r);
  free(x);
  free(y);
  gfi_model_free(m);
  gfi_regfun_free(f);
  return 0;
}
