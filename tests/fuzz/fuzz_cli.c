/* libFuzzer harness: command-line argument vectors through the CLI's option
 * parser (cli_parse, with a table of every option kind) and the converters
 * the subcommands share (--R radii, --bandwidth, --phi, --model, number
 * lists). The input is the arguments separated by newlines. cli.c is built
 * into this program with exit() renamed to gfi_fuzz_exit, which jumps back
 * here: a usage error (exit 2) is a normal outcome; a runtime error (exit 1,
 * e.g. "out of memory" for a sane size) or any other status is a finding. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "fuzz_util.h"

static jmp_buf jump;
static int exit_status;

_Noreturn void gfi_fuzz_exit(int status) {
  exit_status = status;
  longjmp(jump, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  /* the messages of usage errors: not wanted, thousands a second */
  FILE *null = fopen("/dev/null", "w");
  if (null) stderr = null;
  return 0;
}

enum { MAXARG = 24 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  char *s = fuzz_string(data, n);
  if (!s) return 0;
  static char *argv[MAXARG + 1];
  int argc = 0;
  argv[argc++] = "fuzz";
  for (char *p = s; p && argc < MAXARG;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    if (cli_is_help(p)) goto done; /* --help closes standard output */
    argv[argc++] = p;
    p = nl ? nl + 1 : NULL;
  }
  argv[argc] = NULL;
  static int flag;
  static const char *str, *phi, *R, *bw, *model, *list;
  static size_t size, dim;
  static int ival;
  static uint64_t u64;
  static double dbl, pos;
  static const cli_opt opts[] = {
      {"flag", CLI_FLAG, &flag, .help = "a flag"},
      {"str", CLI_STR, &str, .def = "x", .help = "a string"},
      {"size", CLI_SIZE, &size, .def = "1", .min = 1, .help = "a size"},
      CLI_OPT_DIM(dim),
      {"int", CLI_INT, &ival, .def = "0", .help = "an int"},
      {"u64", CLI_U64, &u64, .help = "a seed"},
      {"double", CLI_DOUBLE, &dbl, .def = "0", .help = "a number"},
      {"positive", CLI_POSITIVE, &pos, .parse = cli_check_tol, .help = "a tolerance"},
      {"multi", CLI_STR, NULL, .flags = CLI_MULTI, .help = "repeatable"},
      CLI_OPT_PHI(phi),
      {"R", CLI_STR, &R, .help = "radii"},
      {"bandwidth", CLI_STR, &bw, .help = "bandwidth"},
      {"model", CLI_STR, &model, .help = "model"},
      {"list", CLI_STR, &list, .help = "numbers"},
      {0}};
  static const cli_spec spec = {"usage: fuzz\n", opts, NULL};
  /* options without a default keep the last input's value (freed) otherwise */
  str = phi = R = bw = model = list = NULL;
  cli_argc = argc;
  cli_argv = argv;
  /* volatile: set between setjmp and a longjmp back */
  double *volatile r = NULL, *volatile h = NULL, *volatile v = NULL;
  gfi_model *volatile m = NULL;
  exit_status = -1;
  if (setjmp(jump) == 0) {
    cli_parse(&spec, argc, argv);
    if (dim <= 3) {
      gfi_kernel k;
      cli_phi("--phi", phi, &k);
      if (R) r = cli_radii("--R", R, dim);
      if (bw) h = cli_bandwidth("--bandwidth", bw, dim, 0, NULL, NULL);
      if (model) m = cli_model(model, dim);
      size_t nv;
      if (list) v = cli_list("--list", list, &nv);
      size_t nm;
      const char *const *mv = cli_values("multi", &nm);
      for (size_t i = 0; i < nm; i++) FUZZ_REQUIRE(mv[i] != NULL);
    }
  } else {
    FUZZ_REQUIRE(exit_status == EXIT_USAGE);
  }
  free(r), free(h), free(v);
  gfi_model_free(m);
done:
  free(s);
  return 0;
}
