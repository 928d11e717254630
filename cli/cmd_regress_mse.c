/* gfi regress-mse: Monte-Carlo MSE of a Nadaraya-Watson estimator at chosen
 * points (bias, variance, MSE with its standard error) and the
 * design-weighted integrated MSE. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cli_source.h"
#include "commands.h"

int cmd_regress_mse(int argc, char **argv) {
  const char *spec = NULL, *truth = NULL, *noise_spec = NULL, *phi = NULL, *Rs = NULL;
  const char *kname = NULL, *bw = NULL, *at = NULL;
  size_t D = 1, N = 0, K = 0, M = 0;
  uint64_t seed = 1;
  int nthreads = 0;
  const cli_opt opts[] = {
    {"model", CLI_STR, &spec, .arg = "SPEC", .help = "design model (see 'gfi sample --help')"},
    {"truth", CLI_STR, &truth, .arg = "F", .help = "truth, as for 'gfi regress'"},
    {"noise", CLI_STR, &noise_spec, .arg = "N", .help = "noise, as for 'gfi regress' (none when not given)"},
    CLI_OPT_DIM(D),
    {"n", CLI_SIZE, &N, .arg = "N", .min = 1, .help = "pairs per replication"},
    {"reps", CLI_SIZE, &K, .arg = "K", .min = 2, .help = "replications (>= 2)"},
    CLI_OPT_PHI(phi),
    {"R", CLI_STR, &Rs, .arg = "R1[,..]", .help = "radius, one for every axis or one per axis"},
    {"kernel", CLI_STR, &kname, .def = "fourier", .arg = "K", .help = "fourier or gauss"},
    {"bandwidth", CLI_STR, &bw, .arg = "H", .help = "Gaussian bandwidth, as for 'gfi regress' (no rules)"},
    {"at", CLI_STR, &at, .arg = "FILE", .help = "the points, D numbers per line"},
    {"points", CLI_SIZE, &M, .arg = "M", .min = 1, .help = "M points from the design instead (400 when\n"
                                                           "neither --at nor --points is given)"},
    CLI_OPT_SEED(seed),
    CLI_OPT_THREADS(nthreads),
    {0}};
  const cli_spec cspec = {
    "usage: gfi regress-mse --model SPEC --truth F [--noise N] --dim D --n N --reps K\n"
    "                       (--phi pow:L --R R1[,..] | --kernel gauss --bandwidth H)\n"
    "                       [--at FILE | --points M] [--seed S] [--threads T]\n\n"
    "Monte-Carlo error of the Nadaraya-Watson estimator: K replications, each drawing N\n"
    "pairs (design SPEC, truth F, noise N; replication k from random stream (S, k)) and\n"
    "evaluating the fit at fixed points. Prints per point x1 .. xD f bias var mse mse_se, and\n"
    "in '#' lines the mean over the points of mse (with its s.e. over replications), bias^2\n"
    "and variance: with --points M the points are drawn from the design\n"
    "(stream (S, 2^62)), so that mean is the design-weighted integrated MSE.\n"
    "Rows flagged in a replication (odd L, see 'gfi regress --help') are left out and counted.\n",
    opts, NULL};
  if (cli_parse(&cspec, argc, argv)) return 0;
  if (!spec) cli_usage("--model", "required");
  if (!truth) cli_usage("--truth", "required");
  if (!N) cli_usage("--n", "required");
  if (!K) cli_usage("--reps", "required");
  if (at && M) cli_usage("--at", "give either --at or --points, not both");
  int gauss = cli_kernel_choice(kname, Rs, bw);
  gfi_nw_study st;
  memset(&st, 0, sizeof st);
  if (!gauss) {
    if (strncmp(phi, "pow:", 4) != 0) cli_usage("--phi", "regress-mse takes pow:L, got '%s'", phi);
    cli_phi("--phi", phi, &st.kernel);
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
    cli_budget("--points", (double)M, (double)D, "points x D");
    x = cli_array(M, D, sizeof *x);
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
  double *bias = cli_array(M, 1, sizeof *bias), *var = cli_array(M, 1, sizeof *var);
  double *mse = cli_array(M, 1, sizeof *mse), *se = cli_array(M, 1, sizeof *se), *fx = cli_array(M, 1, sizeof *fx);
  gfi_nw_mse_result res;
  /* every estimate is kept (K x M of them); the CPU draws and sums about
   * 1e7 points per second per thread */
  if ((double)K * (double)M > (double)((size_t)1 << 40))
    cli_usage("--reps", "%zu replications x %zu points = %.3g estimates to keep, above 2^40; lower --reps or "
              "--points", K, M, (double)K * (double)M);
  if ((double)N * (double)K > CLI_MC_MAX_POINTS)
    cli_usage("--reps", "%zu replications of %zu points = %.3g points to draw and sum, above %.0e (hours of "
              "computing at about 1e7 points per second per thread); lower --reps or --n",
              K, N, (double)N * (double)K, CLI_MC_MAX_POINTS);
  s = gfi_nw_mse(&st, M, x, K, &o, &res, bias, var, mse, se);
  if (s == GFI_EBANDWIDTH) cli_usage("--bandwidth", "%s", gfi_strerror(s));
  char size[128];
  snprintf(size, sizeof size, "%zu replications of %zu points in %zu dimension(s), %zu evaluation points", K, N,
           D, M);
  cli_check_size(s, "Monte-Carlo MSE", size, "--reps, --n or --points", NULL);
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
  cli_finish_output(stdout, "standard output");
  free(bias); free(var); free(mse); free(se); free(fx); free(x); free(R); free(H);
  gfi_model_free(design);
  gfi_regfun_free(f);
  return 0;
}
