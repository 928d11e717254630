/* Data sources and query points shared by 'gfi density' and 'gfi regress'. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_source.h"

void cli_source_check(const cli_source *s) {
  int n = cli_given("n"), seed = cli_given("seed");
  if (s->data && s->model) cli_usage("--data", "give either --data or --model, not both");
  if (!s->data && !s->model)
    cli_usage("--data", "required (or --model SPEC%s --n N --seed S)", s->regress ? " --truth F" : "");
  if (s->model && s->regress && !s->truth) cli_usage("--truth", "required with --model");
  if (s->model && !n) cli_usage("--n", "required with --model");
  if (s->model && !seed) cli_usage("--seed", "required with --model");
  if (s->data && s->regress && (n || seed || s->truth || s->noise))
    cli_usage("--n", "--n, --seed, --truth and --noise go with --model, not --data");
  if (s->data && !s->regress && (n || seed)) cli_usage("--n", "--n and --seed go with --model, not --data");
  if (!s->at) cli_usage("--at", "required");
}

static const char *shown(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

static void load_file(const cli_source *s, size_t *D, size_t *N, double **x, size_t *V, double **y) {
  size_t nc;
  if (!s->regress) {
    *x = cli_read_table("data file", s->data, *D, N, &nc);
    *D = nc;
    return;
  }
  double *tab = cli_read_table("data file", s->data, 0, N, &nc);
  if (!*D) *D = nc > 1 ? nc - 1 : 1;
  if (nc <= *D)
    cli_die(EXIT_RUNTIME, "data file %s:1: %zu columns, need D = %zu inputs and at least one response",
            shown(s->data), nc, *D);
  size_t d = *D, v = nc - d;
  *V = v;
  *x = cli_array(*N, d, sizeof **x);
  *y = cli_array(*N, v, sizeof **y);
  for (size_t i = 0; i < *N; i++) {
    memcpy(*x + i * d, tab + i * nc, d * sizeof **x);
    memcpy(*y + i * v, tab + i * nc + d, v * sizeof **y);
  }
  free(tab);
}

void cli_source_load(const cli_source *s, size_t *D, size_t *N, double **x, size_t *V, double **y) {
  *D = s->dim;
  if (s->data) {
    load_file(s, D, N, x, V, y);
    return;
  }
  if (!*D) *D = 1;
  *N = s->n;
  gfi_model *m = cli_model(s->model, *D);
  gfi_regfun *f = NULL;
  gfi_noise nz;
  if (s->regress) {
    gfi_errinfo err;
    int st = gfi_regfun_parse(&f, s->truth, *D, &err);
    if (st) cli_usage("--truth", "%s", err.msg[0] ? err.msg : gfi_strerror(st));
    if (gfi_noise_parse(&nz, s->noise, &err)) cli_usage("--noise", "%s", err.msg);
  }
  *x = cli_array(*N, *D, sizeof **x);
  if (s->regress) *y = cli_array(*N, 1, sizeof **y);
  gsl_rng *r = gfi_rng_stream(s->seed, 0);
  if (!r) cli_die(EXIT_RUNTIME, "out of memory");
  if (s->regress) {
    *V = 1;
    cli_check(gfi_regress_sample(m, f, &nz, r, *N, *x, *y), "sampling");
  } else {
    cli_check(gfi_model_sample(m, r, *N, *x), "sampling");
  }
  gsl_rng_free(r);
  gfi_model_free(m);
  gfi_regfun_free(f);
}

double *cli_source_queries(const cli_source *s, size_t D, size_t *M) {
  return cli_read_table("query file", s->at, D, M, NULL);
}

int cli_kernel_choice(const char *kernel, const char *R, const char *bandwidth) {
  int gauss = 0;
  if (strcmp(kernel, "gauss") == 0)
    gauss = 1;
  else if (strcmp(kernel, "fourier") != 0)
    cli_usage("--kernel", "unknown kernel '%s' (expected fourier or gauss)", kernel);
  if (!gauss) {
    if (!R) cli_usage("--R", "required for the Fourier estimator");
    if (bandwidth) cli_usage("--bandwidth", "only for --kernel gauss");
  } else {
    if (!bandwidth) cli_usage("--bandwidth", "required for --kernel gauss");
    if (R) cli_usage("--R", "only for --kernel fourier");
  }
  return gauss;
}
