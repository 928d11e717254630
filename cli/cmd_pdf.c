/* gfi pdf: the true density of a model at the points of a file. */
#include <getopt.h>
#include <stdlib.h>
#include "cli.h"
#include "commands.h"

static const char *help =
  "usage: gfi pdf --model SPEC --dim D --at FILE\n\n"
  "Print, for each point of FILE (D numbers per line, '#' lines ignored, '-' = stdin),\n"
  "the point and the model's density there: columns x1 .. xD pdf.\n"
  "Model SPEC as in 'gfi sample --help'.\n";

int cmd_pdf(int argc, char **argv) {
  static const struct option opts[] = {
    {"model", required_argument, 0, 'm'}, {"dim", required_argument, 0, 'd'},
    {"at", required_argument, 0, 'a'},    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0}};
  const char *spec = NULL, *at = NULL;
  size_t D = 1;
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'm': spec = optarg; break;
      case 'd': D = cli_size("--dim", optarg, 1); break;
      case 'a': at = optarg; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  if (!spec) cli_usage("--model", "required");
  if (!at) cli_usage("--at", "required");
  gfi_model *m = cli_model(spec, D);
  size_t M;
  double *x = cli_read_table("query file", at, D, &M, NULL);
  double *p = malloc(M * sizeof *p);
  if (!p) cli_die(EXIT_RUNTIME, "out of memory");
  cli_check(gfi_model_pdf(m, M, x, p), "pdf");
  cli_header(stdout);
  cli_meta(stdout, "model", "%s (%s)", spec, gfi_model_describe(m));
  cli_meta(stdout, "at", "%s (%zu points)", at, M);
  cli_columns(stdout, D, "pdf");
  cli_write_points(stdout, M, D, x, p);
  free(p);
  free(x);
  gfi_model_free(m);
  return 0;
}
