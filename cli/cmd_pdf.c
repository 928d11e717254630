/* gfi pdf: the true density of a model at the points of a file. */
#include <stdlib.h>
#include "cli.h"
#include "commands.h"

int cmd_pdf(int argc, char **argv) {
  const char *spec = NULL, *at = NULL;
  size_t D = 1;
  const char *out = NULL;
  int npy_table = 0;
  const cli_opt opts[] = {
    {"model", CLI_STR, &spec, .arg = "SPEC", .help = "the model, as in 'gfi sample --help'"},
    CLI_OPT_DIM(D),
    {"at", CLI_STR, &at, .arg = "FILE",
     .help = "the points, D numbers per line ('#' lines ignored, '-' = stdin),\n"
             "or a .npy array of shape (M, D)"},
    CLI_OPT_OUT(out),
    CLI_OPT_NPY_TABLE(npy_table),
    {0}};
  const cli_spec cs = {
    "usage: gfi pdf --model SPEC --dim D --at FILE\n\n"
    "Print, for each point of FILE, the point and the model's density there:\n"
    "columns x1 .. xD pdf.\n",
    opts, NULL};
  if (cli_parse(&cs, argc, argv)) return 0;
  cli_check_npy_table(npy_table, out);
  if (!spec) cli_usage("--model", "required");
  if (!at) cli_usage("--at", "required");
  gfi_model *m = cli_model(spec, D);
  size_t M;
  double *x = cli_read_table("query file", at, D, &M, NULL);
  double *p = cli_array(M, 1, sizeof *p);
  cli_check(gfi_model_pdf(m, M, x, p), "pdf");
  cli_require_finite("pdf values", M, 1, p);
  cli_output o;
  cli_output_open(&o, out);
  cli_header(o.f);
  cli_meta(o.f, "model", "%s (%s)", spec, gfi_model_describe(m));
  cli_meta(o.f, "at", "%s (%zu points)", at, M);
  cli_output_meta(&o, M, D, 1, npy_table);
  cli_columns(o.f, D, "pdf");
  cli_output_rows(&o, M, D, x, 1, p, npy_table);
  cli_output_close(&o);
  free(p);
  free(x);
  gfi_model_free(m);
  return 0;
}
