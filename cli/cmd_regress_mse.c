/* gfi regress-mse: Monte-Carlo MSE of a Nadaraya-Watson estimator at chosen
 * points (bias, variance, MSE with its standard error) and the
 * design-weighted integrated MSE. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"

static const char *help =
  "usage: gfi regress-mse --model SPEC --truth F [--noise N] --dim D --n N --reps K\n"
  "                       (--phi pow:L --R R1[,..] | --kernel gauss --bandwidth H)\n"
  "                       [--at FILE | --points M] [--seed S] [--threads T]\n\n"
  "Monte-Carlo error of the Nadaraya-Watson estimator: K replications, each drawing N\n"
  "pairs (design SPEC, truth F, noise N; replication k from random stream (S, k)) and\n"
  "evaluating the fit at fixed points. Prints per point x1 .. xD f bias var mse mse_se, and\n"
  "in '#' lines the mean over the points of mse (with its s.e. over replications), bias^2\n"
  "and variance: with --points M (default 400) the points are drawn from the design\n"
  "(stream (S, 2^62)), so that mean is the design-weighted integrated MSE.\n"
  "Rows flagged in a replication (odd L, see 'gfi regress --help') are left out and counted.\n\n"
  "  --truth, --noise, --phi, --R, --kernel, --bandwidth: as for 'gfi regress'\n"
  "  --reps K      replications (>= 2)\n"
  "  --at FILE     the points, D numbers per line\n"
  "  --points M    M points from the design instead\n"
  "  --seed S      seed (default 1)\n"
  "  --threads T   threads over replications (default 0 = all); results do not depend on T\n";

int cmd_regress_mse(int argc, char **argv) {
  static const struct option opts[] = {
    {"model", required_argument, 0, 'm'},  {"truth", required_argument, 0, 'f'},
    {"noise", required_argument, 0, 'e'},  {"dim", required_argument, 0, 'd'},
    {"n", required_argument, 0, 'n'},      {"reps", required_argument, 0, 'k'},
    {"phi", required_argument, 0, 'p'},    {"R", required_argument, 0, 'R'},
    {"kernel", required_argument, 0, 'K'}, {"bandwidth", required_argument, 0, 'b'},
    {"at", required_argument, 0, 'a'},     {"points", required_argument, 0, 'M'},
    {"seed", required_argument, 0, 's'},   {"threads", required_argument, 0, 't'},
    {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  const char *spec = NULL, *truth = NULL, *noise_spec = NULL, *phi = "pow:4", *Rs = NULL;
  const char *kname = "fourier", *bw = NULL, *at = NULL;
  size_t D = 1, N = 0, K = 0, M = 0;
  uint64_t seed = 1;
  int nthreads = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'm': spec = optarg; break;
      case 'f': truth = optarg; break;
      case 'e': noise_spec = optarg; break;
      case 'd': D = cli_size("--dim", optarg, 1); break;
      case 'n': N = cli_size("--n", optarg, 1); break;
      case 'k': K = cli_size("--reps", optarg, 2); break;
      case 'p': phi = optarg; break;
      case 'R': Rs = optarg; break;
      case 'K': kname = optarg; break;
      case 'b': bw = optarg; break;
      case 'a': at = optarg; break;
      case 'M': M = cli_size("--points", optarg, 1); break;
      case 's': seed = cli_u64("--seed", optarg); break;
      case 't': nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  if (!spec) cli_usage("--model", "required");
  if (!truth) cli_usage("--truth", "required");
  if (!N) cli_usage("--n", "required");
  if (!K) cli_usage("--reps", "required");
  if (at && M) cli_usage("--at", "give either --at or --points, not both");
  int gauss = 0;
  if (strcmp(kname, "gauss") == 0)
    gauss = 1;
  else if (strcmp(kname, "fourier") != 0)
    cli_usage("--kernel", "unknown kernel '%s' (expected fourier or gauss)", kname);
  gfi_nw_study st;
  memset(&st, 0, sizeof st);
  if (!gauss) {
    if (strncmp(phi, "pow:", 4) != 0) cli_usage("--phi", "regress-mse takes pow:L, got '%s'", phi);
    cli_phi("--phi", phi, &st.kernel);
    if (!Rs) cli_usage("--R", "required for the Fourier estimator");
    if (bw) cli_usage("--bandwidth", "only for --kernel gauss");
  } else {
    if (!bw) cli_usage("--bandwidth", "required for --kernel gauss");
    if (Rs) cli_usage("--R", "only for --kernel fourier");
  }
  gfi_model *design = cli_model(spec, D);
  gfi_regfun *f = NULL;
  gfi_errinfo err;
  int s = gfi_regfun_parse(&f, truth, D, &err);
  if (s) cli_usage("--truth", "%s", err.msg[0] ? err.msg : gfi_strerror(s));
  if (gfi_noise_parse(&st.noise, noise_spec, &err)) cli_usage("--noise", "%s", err.msg);
  double *R = NULL, *H = NULL;
  if (!gauss)
    R = cli_radii("--R", Rs, D);
  else
    H = cli_bandwidth("--bandwidth", bw, D, 0, NULL, NULL);
  double *x;
  if (at) {
    size_t mc;
    x = cli_read_table("point file", at, D, &M, &mc);
  } else {
    if (!M) M = 400;
    x = malloc(M * D * sizeof *x);
    if (!x) cli_die(EXIT_RUNTIME, "out of memory");
    cli_check(gfi_nw_design_points(design, seed, M, x), "design points");
  }
  st.design = design;
  st.truth = f;
  st.N = N;
  st.gauss = gauss;
  st.R = R;
  st.H = H;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  o.seed = seed;
  double *bias = malloc(M * sizeof *bias), *var = malloc(M * sizeof *var), *mse = malloc(M * sizeof *mse);
  double *se = malloc(M * sizeof *se), *fx = malloc(M * sizeof *fx);
  if (!bias || !var || !mse || !se || !fx) cli_die(EXIT_RUNTIME, "out of memory");
  gfi_nw_mse_result res;
  s = gfi_nw_mse(&st, M, x, K, &o, &res, bias, var, mse, se);
  if (s == GFI_EBANDWIDTH) cli_usage("--bandwidth", "%s", gfi_strerror(s));
  cli_check(s, "Monte-Carlo MSE");
  gfi_regfun_eval(f, M, x, fx);
  cli_header(stdout);
  cli_meta(stdout, "design", "%s, truth %s, noise %s, N = %zu, dim %zu", spec, truth,
           noise_spec ? noise_spec : "none", N, D);
  if (!gauss) {
    fprintf(stdout, "# kernel: fourier nadaraya-watson, phi %s, R =", phi);
    for (size_t j = 0; j < D; j++) fprintf(stdout, " %.17g", R[j]);
  } else {
    fprintf(stdout, "# kernel: gauss nadaraya-watson, H =");
    for (size_t j = 0; j < D * D; j++) fprintf(stdout, " %.17g", H[j]);
  }
  fputc('\n', stdout);
  cli_meta(stdout, "replications", "%zu, seed %llu (replication k: stream (seed, k))", K, (unsigned long long)seed);
  if (at)
    cli_meta(stdout, "points", "%s (%zu)", at, M);
  else
    cli_meta(stdout, "points", "%zu from the design, stream (seed, 2^62): the means are design-weighted", M);
  cli_meta(stdout, "mean-mse", "%.10g +- %.3g (s.e. over replications)", res.mse, res.mse_se);
  cli_meta(stdout, "mean-bias2", "%.10g", res.bias2);
  cli_meta(stdout, "mean-var", "%.10g", res.var);
  cli_meta(stdout, "flagged", "%zu of %zu (point, replication) pairs", res.nflagged, M * K);
  cli_meta(stdout, "threads", "%d", gfi_threads_resolve(&o));
  cli_columns(stdout, D, "f bias var mse mse_se");
  for (size_t i = 0; i < M; i++) {
    for (size_t j = 0; j < D; j++) {
      gfi_table_put(stdout, x[i * D + j]);
      fputc(' ', stdout);
    }
    double v[5] = {fx[i], bias[i], var[i], mse[i], se[i]};
    for (int a = 0; a < 5; a++) {
      gfi_table_put(stdout, v[a]);
      fputc(a < 4 ? ' ' : '\n', stdout);
    }
  }
  free(bias); free(var); free(mse); free(se); free(fx); free(x); free(R); free(H);
  gfi_model_free(design);
  gfi_regfun_free(f);
  return 0;
}
