/* gfi density: generalized Fourier density estimate (or Gaussian KDE). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "cli_backend.h"
#ifdef GFI_HAVE_CUDA
#include "gfi_cuda.h"
#endif

static const char *help =
  "usage: gfi density (--data FILE | --model SPEC --n N --seed S) --dim D\n"
  "                   --phi pow:L --R R1[,R2,...] --at FILE [options]\n\n"
  "Generalized Fourier density estimate (FourierFormer eq. 12, a radius per axis)\n"
  "  p(x) = sum_i w_i prod_j (R_j/A_l) sinc(R_j (x_j - k_ij))^l\n"
  "at every point of the query file; prints columns x1 .. xD density.\n\n"
  "data (one of):\n"
  "  --data FILE       N points, D numbers per line ('#' lines ignored, '-' = stdin)\n"
  "  --model SPEC --n N --seed S\n"
  "                    draw N points from a truth model (see 'gfi sample --help');\n"
  "                    stream (S, 0), so 'gfi sample' with the same S gives the same data\n"
  "  --weights FILE    optional weights, one per data point (normalised to sum 1)\n\n"
  "estimator:\n"
  "  --dim D           dimension (default: the data file's column count, else 1)\n"
  "  --kernel K        fourier (default) or gauss (Gaussian KDE baseline)\n"
  "  --phi pow:L       phi(z) = z^L, L = 1..8 (default pow:4, Jackson; 2 = Fejer, 1 = Dirichlet)\n"
  "  --R R1[,..,RD]    radius, one value for every axis or one per axis (> 0)\n"
  "  --bandwidth H     Gaussian bandwidth: scott | silverman (rule times the data covariance,\n"
  "                    as scipy's gaussian_kde) | h (H = h^2 I) | h1,..,hD (H = diag h_j^2)\n"
  "                    | D*D numbers, the full bandwidth matrix H (row-major, D > 1)\n\n"
  "evaluation:\n"
  "  --at FILE         query points, D numbers per line\n"
  "  --threads T       threads (default 0 = all cores); results are identical for any T\n"
  "  --backend B       cpu (default), cuda (the GPU engine, float64; Fourier kernels with\n"
  "                    phi = pow:L) or auto (the GPU when gfi has CUDA and a GPU is present)\n";

int cmd_density(int argc, char **argv) {
  static const struct option opts[] = {
    {"data", required_argument, 0, 'D'},      {"model", required_argument, 0, 'm'},
    {"n", required_argument, 0, 'n'},         {"seed", required_argument, 0, 's'},
    {"dim", required_argument, 0, 'd'},       {"phi", required_argument, 0, 'p'},
    {"R", required_argument, 0, 'R'},         {"at", required_argument, 0, 'a'},
    {"kernel", required_argument, 0, 'k'},    {"bandwidth", required_argument, 0, 'b'},
    {"weights", required_argument, 0, 'w'},   {"threads", required_argument, 0, 't'},
    {"backend", required_argument, 0, 'B'},
    {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
  const char *data_path = NULL, *spec = NULL, *at = NULL, *phi = "pow:4", *Rs = NULL;
  const char *kname = "fourier", *bw = NULL, *wpath = NULL, *backend = NULL;
  size_t D = 0, N = 0;
  uint64_t seed = 1;
  int have_n = 0, have_seed = 0, nthreads = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'D': data_path = optarg; break;
      case 'm': spec = optarg; break;
      case 'n': N = cli_size("--n", optarg, 1); have_n = 1; break;
      case 's': seed = cli_u64("--seed", optarg); have_seed = 1; break;
      case 'd': D = cli_size("--dim", optarg, 1); break;
      case 'p': phi = optarg; break;
      case 'R': Rs = optarg; break;
      case 'a': at = optarg; break;
      case 'k': kname = optarg; break;
      case 'b': bw = optarg; break;
      case 'w': wpath = optarg; break;
      case 't': nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'B': backend = optarg; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  int gauss = 0;
  if (strcmp(kname, "gauss") == 0)
    gauss = 1;
  else if (strcmp(kname, "fourier") != 0)
    cli_usage("--kernel", "unknown kernel '%s' (expected fourier or gauss)", kname);
  if (data_path && spec) cli_usage("--data", "give either --data or --model, not both");
  if (!data_path && !spec) cli_usage("--data", "required (or --model SPEC --n N --seed S)");
  if (spec && !have_n) cli_usage("--n", "required with --model");
  if (spec && !have_seed) cli_usage("--seed", "required with --model");
  if (data_path && (have_n || have_seed)) cli_usage("--n", "--n and --seed go with --model, not --data");
  if (!at) cli_usage("--at", "required");
  gfi_kernel k;
  if (!gauss) {
    cli_phi("--phi", phi, &k);
    if (!Rs) cli_usage("--R", "required for the Fourier estimator");
    if (bw) cli_usage("--bandwidth", "only for --kernel gauss");
  } else {
    if (!bw) cli_usage("--bandwidth", "required for --kernel gauss");
    if (Rs) cli_usage("--R", "only for --kernel fourier");
  }

  /* data */
  double *data;
  if (data_path) {
    size_t nc;
    data = cli_read_table("data file", data_path, D, &N, &nc);
    D = nc;
  } else {
    if (!D) D = 1;
    gfi_model *m = cli_model(spec, D);
    data = malloc(N * D * sizeof *data);
    gsl_rng *r = gfi_rng_stream(seed, 0);
    if (!data || !r) cli_die(EXIT_RUNTIME, "out of memory for %zu x %zu points", N, D);
    cli_check(gfi_model_sample(m, r, N, data), "sampling");
    gsl_rng_free(r);
    gfi_model_free(m);
  }
  double *w = NULL;
  if (wpath) {
    size_t nw;
    w = cli_read_table("weights file", wpath, 1, &nw, NULL);
    if (nw != N) cli_die(EXIT_RUNTIME, "weights file %s: %zu weights for %zu data points", wpath, nw, N);
    double s = 0;
    for (size_t i = 0; i < N; i++) s += w[i];
    if (!(s > 0)) cli_die(EXIT_RUNTIME, "weights file %s: weights must have a positive sum", wpath);
  }

  /* radii or bandwidth (need D) */
  double *R = NULL, *H = NULL;
  if (!gauss)
    R = cli_radii("--R", Rs, D);
  else
    H = cli_bandwidth("--bandwidth", bw, D, N, data, w);

  size_t M, mc;
  double *x = cli_read_table("query file", at, D, &M, &mc);
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  cli_backend be = cli_backend_resolve(backend, !gauss && k.kind == GFI_PHI_POW,
                                       "--kernel gauss");
  gfi_density_plan *plan = NULL;
  double *p = malloc(M * sizeof *p);
  if (!p) cli_die(EXIT_RUNTIME, "out of memory");
  if (be == CLI_BACKEND_CUDA) {
#ifdef GFI_HAVE_CUDA
    gfi_cuda_density_plan *gp = NULL;
    cli_check(gfi_cuda_density_plan_fourier(&gp, &k, N, D, data, w, R, NULL), "building the estimator");
    cli_check(gfi_cuda_density_eval(gp, M, x, p), "evaluating the estimator");
    gfi_cuda_density_destroy(gp);
#endif
  } else {
    int st = gauss ? gfi_density_plan_gauss(&plan, N, D, data, w, H, &o)
                   : gfi_density_plan_fourier(&plan, &k, N, D, data, w, R, &o);
    if (st == GFI_EBANDWIDTH) cli_usage("--bandwidth", "%s", gfi_strerror(st));
    cli_check(st, "building the estimator");
    cli_check(gfi_density_eval(plan, M, x, p), "evaluating the estimator");
  }

  cli_header(stdout);
  if (data_path)
    cli_meta(stdout, "data", "%s (N = %zu)", data_path, N);
  else
    cli_meta(stdout, "data", "model %s, N = %zu, seed %llu (stream 0)", spec, N, (unsigned long long)seed);
  if (wpath) cli_meta(stdout, "weights", "%s", wpath);
  cli_meta(stdout, "dim", "%zu", D);
  if (!gauss) {
    cli_meta(stdout, "kernel", "fourier, phi %s, A = %.17g", phi, k.A);
    fprintf(stdout, "# R:");
    for (size_t j = 0; j < D; j++) fprintf(stdout, " %.17g", R[j]);
    fputc('\n', stdout);
  } else {
    fprintf(stdout, "# kernel: gauss, bandwidth %s, H =", bw);
    for (size_t j = 0; j < D * D; j++) fprintf(stdout, " %.17g", H[j]);
    fputc('\n', stdout);
  }
  cli_meta(stdout, "at", "%s (%zu points)", at, M);
  cli_meta(stdout, "eval-threads", "%d", gfi_threads_resolve(&o));
  cli_backend_meta(stdout, be);
  cli_columns(stdout, D, "density");
  cli_write_points(stdout, M, D, x, p);
  gfi_density_destroy(plan);
  free(p);
  free(x);
  free(R);
  free(H);
  free(w);
  free(data);
  return 0;
}
