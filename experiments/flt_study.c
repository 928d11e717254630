/* flt_study: the FLT study (gfi_exp/flt_study.h) as a program.
 *   flt_study [--out DIR] [--quick] [--seed S] [--only PART]
 * tools/flt_study.sh runs it with the figures and the independent check;
 * gfi reproduce calls the same study in-process. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "gfi_exp/flt_study.h"

int main(int argc, char **argv) {
  static const struct option opts[] = {{"out", required_argument, 0, 'o'}, {"quick", no_argument, 0, 'q'},
                                       {"seed", required_argument, 0, 's'}, {"only", required_argument, 0, 'O'},
                                       {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
  gfi_exp_flt_params p;
  gfi_exp_flt_default(&p);
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 'o': p.outdir = optarg; break;
      case 'q': p.quick = 1; break;
      case 's': p.seed = strtoull(optarg, NULL, 10); break;
      case 'O': p.only = optarg; break;
      case 'h':
        printf("usage: flt_study [--out DIR] [--quick] [--seed S] [--only PART]\n"
               "FLT tables (.dat) and a markdown summary in DIR (default results); parts: error rstar tau moments "
               "shapes attention scaling paper\n");
        return 0;
      default: return 2;
    }
  }
  gfi_exp_ctx ctx = {.program = "flt_study", .argc = argc, .argv = argv, .nthreads = 0, .progress = stderr};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  if (gfi_exp_flt_study(&p, &ctx, &e)) {
    fprintf(stderr, "flt_study: %s\n", e.msg);
    return 1;
  }
  return 0;
}
