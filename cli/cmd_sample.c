/* gfi sample: draw N points from a truth model. */
#include <stdlib.h>
#include "cli.h"
#include "commands.h"

int cmd_sample(int argc, char **argv) {
  const char *spec = NULL;
  size_t D = 1, N = 0;
  uint64_t seed = 1;
  const char *out = NULL;
  const cli_opt opts[] = {
    {"model", CLI_STR, &spec, .arg = "SPEC",
     .help = "normal | normal:cov=c11,c12,... (row-major D x D)\n"
             "| normal:mean=m1,..;cov=... | mw:K (Marron-Wand K=1..15, D=1)\n"
             "| laplace[:mu,b] | cauchy[:x0,gamma] | t:NU | uniform[:a,b]\n"
             "| beta:A,B    (1-D families in D > 1: i.i.d. on every axis)"},
    CLI_OPT_DIM(D),
    {"n", CLI_SIZE, &N, .arg = "N", .min = 1, .help = "number of points (>= 1)"},
    CLI_OPT_SEED(seed),
    CLI_OPT_OUT(out),
    {0}};
  const cli_spec cs = {
    "usage: gfi sample --model SPEC --dim D --n N --seed S\n\n"
    "Draw N points from the model and print them, one point (D columns) per line.\n"
    "The points come from random stream (S, 0): the same S gives the same points.\n",
    opts, NULL};
  if (cli_parse(&cs, argc, argv)) return 0;
  if (!spec) cli_usage("--model", "required");
  if (!cli_given("n")) cli_usage("--n", "required");
  if (!CLI_WITHIN_BUDGET(N, D))
    cli_usage("--n", "%zu points x %zu dimension(s) = %.3g values, above the budget of %.3g (docs/robustness.md)", N, D,
              (double)N * (double)D, CLI_MAX_VALUES);
  gfi_model *m = cli_model(spec, D);
  double *x = cli_array(N, D, sizeof *x);
  gsl_rng *r = gfi_rng_stream(seed, 0);
  if (!r) cli_die(EXIT_RUNTIME, "out of memory for a random-number stream");
  cli_check(gfi_model_sample(m, r, N, x), "sampling");
  cli_require_finite("sampled points", N, D, x);
  cli_output o;
  cli_output_open(&o, out);
  cli_header(o.f);
  cli_meta(o.f, "model", "%s (%s)", spec, gfi_model_describe(m));
  cli_meta(o.f, "n", "%zu", N);
  cli_meta(o.f, "dim", "%zu", D);
  cli_meta(o.f, "seed", "%llu (stream 0)", (unsigned long long)seed);
  cli_output_meta(&o, N, D, 0, 1);
  cli_columns(o.f, D, "");
  cli_output_rows(&o, N, D, x, 0, NULL, 1);
  cli_output_close(&o);
  gsl_rng_free(r);
  free(x);
  gfi_model_free(m);
  return 0;
}
