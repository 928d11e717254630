/* gfi regress-sample: draw N regression pairs (x_i, y_i). */
#include <stdlib.h>
#include "cli.h"
#include "commands.h"

int cmd_regress_sample(int argc, char **argv) {
  const char *spec = NULL, *truth = NULL, *noise_spec = NULL;
  size_t D = 1, N = 0;
  uint64_t seed = 1;
  const char *out = NULL;
  const cli_opt opts[] = {
    {"model", CLI_STR, &spec, .arg = "SPEC", .help = "design model (see 'gfi sample --help')"},
    {"truth", CLI_STR, &truth, .arg = "F",
     .help = "poly:c0,c1,...      sum_k c_k x_1^k (poly:c0,..;axis=J: axis J)\n"
             "polysum:c0,c1,...   sum_j sum_k c_k x_j^k\n"
             "sin[:w]             sin(w (x_1 + ... + x_D))\n"
             "prod-sin[:w]        prod_j sin(w x_j)"},
    {"noise", CLI_STR, &noise_spec, .def = "none", .arg = "N",
     .help = "none | gauss:S (sd S) | hetero:S0,S1 (sd S0 + S1 |x_1|)"},
    CLI_OPT_DIM(D),
    {"n", CLI_SIZE, &N, .arg = "N", .min = 1, .help = "number of pairs (>= 1)"},
    CLI_OPT_SEED(seed),
    CLI_OPT_OUT(out),
    {0}};
  const cli_spec cs = {
    "usage: gfi regress-sample --model SPEC --truth F [--noise N] --dim D --n N --seed S\n\n"
    "Draw N pairs: x_i from the design model SPEC (see 'gfi sample --help'), then\n"
    "y_i = F(x_i) + sd(x_i) e_i with e_i standard normal, from random stream (S, 0);\n"
    "prints D + 1 columns x1 .. xD y, the data format of 'gfi regress --data'.\n",
    opts, NULL};
  if (cli_parse(&cs, argc, argv)) return 0;
  if (!spec) cli_usage("--model", "required");
  if (!truth) cli_usage("--truth", "required");
  if (!cli_given("n")) cli_usage("--n", "required");
  if (!CLI_WITHIN_BUDGET(N, D + 1))
    cli_usage("--n", "%zu pairs x %zu values = %.3g values, above the budget of %.3g (docs/robustness.md)", N, D + 1,
              (double)N * (double)(D + 1), CLI_MAX_VALUES);
  gfi_model *m = cli_model(spec, D);
  gfi_regfun *f = NULL;
  gfi_errinfo err;
  int st = gfi_regfun_parse(&f, truth, D, &err);
  if (st) cli_usage("--truth", "%s", err.msg[0] ? err.msg : gfi_strerror(st));
  gfi_noise nz;
  if (gfi_noise_parse(&nz, noise_spec, &err)) cli_usage("--noise", "%s", err.msg);
  double *x = cli_array(N, D, sizeof *x), *y = cli_array(N, 1, sizeof *y);
  gsl_rng *r = gfi_rng_stream(seed, 0);
  if (!r) cli_die(EXIT_RUNTIME, "out of memory for a random-number stream");
  cli_check(gfi_regress_sample(m, f, &nz, r, N, x, y), "sampling");
  cli_require_finite("sampled points", N, D, x);
  cli_require_finite("--truth: responses y", N, 1, y);
  char nd[128];
  gfi_noise_describe(&nz, nd, sizeof nd);
  cli_output o;
  cli_output_open(&o, out);
  cli_header(o.f);
  cli_meta(o.f, "model", "%s (%s)", spec, gfi_model_describe(m));
  cli_meta(o.f, "truth", "%s (%s)", truth, gfi_regfun_describe(f));
  cli_meta(o.f, "noise", "%s", nd);
  cli_meta(o.f, "n", "%zu", N);
  cli_meta(o.f, "dim", "%zu", D);
  cli_meta(o.f, "seed", "%llu (stream 0)", (unsigned long long)seed);
  cli_output_meta(&o, N, D, 1, 1);
  cli_columns(o.f, D, "y");
  cli_output_rows(&o, N, D, x, 1, y, 1);
  cli_output_close(&o);
  gsl_rng_free(r);
  free(x);
  free(y);
  gfi_model_free(m);
  gfi_regfun_free(f);
  return 0;
}
