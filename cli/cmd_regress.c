/* gfi regress: Nadaraya-Watson regression with the generalized Fourier
 * kernel (or the Gaussian baseline) at the points of a query file. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "cli_backend.h"
#ifdef GFI_HAVE_CUDA
#include "gfi_cuda.h"
#endif

static const char *help =
  "usage: gfi regress (--data FILE | --model SPEC --truth F [--noise N] --n N --seed S)\n"
  "                   [--dim D] --phi pow:L --R R1[,R2,...] --at FILE [options]\n\n"
  "Nadaraya-Watson regression (FourierFormer eq. 14, a radius per axis)\n"
  "  f(x) = sum_i y_i K_i(x) / sum_i K_i(x),  K_i(x) = prod_j phi(sinc(R_j (x_j - k_ij)))\n"
  "at every point of the query file; prints columns x1 .. xD y1 .. yV.\n\n"
  "data (one of):\n"
  "  --data FILE       one pair per line: D inputs, then V responses (V = row length - D;\n"
  "                    '#' lines ignored, '-' = stdin)\n"
  "  --model SPEC --truth F [--noise N] --n N --seed S\n"
  "                    x_i from a design model (see 'gfi sample --help'), y_i = F(x_i) + noise,\n"
  "                    random stream (S, 0), as 'gfi regress-sample'. Truths F: poly:c0,c1,..\n"
  "                    (first axis; ';axis=J' for another), polysum:c0,.. (every axis),\n"
  "                    sin[:w], prod-sin[:w]. Noise: none | gauss:S | hetero:S0,S1\n"
  "                    (sd = S0 + S1 |x_1|)\n\n"
  "estimator:\n"
  "  --dim D           input dimension (default: the data file's row length - 1, else 1)\n"
  "  --kernel K        fourier (default) or gauss (Gaussian Nadaraya-Watson baseline)\n"
  "  --phi PHI         pow:L (phi(z) = z^L, L = 1..8; default pow:4), abs (|z|) or relu\n"
  "                    (max(z, 0)); A cancels in the ratio, so these need no finite A\n"
  "  --R R1[,..,RD]    radius, one for every axis or one per axis (> 0)\n"
  "  --bandwidth H     Gaussian: h (H = h^2 I) | h1,..,hD (H = diag h_j^2) | D*D numbers\n"
  "                    (the full matrix H, row-major) | scott | silverman (rules on the inputs)\n"
  "  --denom-tol T     flag a row when 0 <= S <= T * sum|K_i| (default 1e-8)\n\n"
  "evaluation:\n"
  "  --at FILE         query points, D numbers per line\n"
  "  --threads T       threads (default 0 = all cores); results are identical for any T\n"
  "  --backend B       cpu (default), cuda (the GPU engine, float64; phi = pow:L only) or\n"
  "                    auto (the GPU when gfi has CUDA and a GPU is present)\n\n"
  "Flagged rows: where the denominator S = sum_i K_i is 0 for every data point (an empty\n"
  "neighbourhood), negative, or cancels (0 <= S <= T sum|K_i|; only for odd L or a phi with\n"
  "negative values), the row's responses are printed as nan and counted in '# flagged:'.\n"
  "Rows are flagged, not failed: the exit status stays 0.\n";

static double phi_abs(double z, void *c) {
  (void)c;
  return fabs(z);
}
static double phi_relu(double z, void *c) {
  (void)c;
  return z > 0 ? z : 0.0;
}

/* pow:L, abs or relu. */
static void parse_phi(const char *s, gfi_kernel *k) {
  if (strcmp(s, "abs") == 0 || strcmp(s, "relu") == 0) {
    int st = gfi_kernel_custom(k, strcmp(s, "abs") == 0 ? phi_abs : phi_relu, NULL);
    if (st != GFI_OK && st != GFI_EINFINITE_A) cli_die(EXIT_RUNTIME, "--phi %s: %s", s, gfi_strerror(st));
    return;
  }
  if (strncmp(s, "pow:", 4) != 0) cli_usage("--phi", "unknown phi '%s' (expected pow:L, abs or relu)", s);
  cli_phi("--phi", s, k);
}

int cmd_regress(int argc, char **argv) {
  static const struct option opts[] = {
    {"data", required_argument, 0, 'D'},      {"model", required_argument, 0, 'm'},
    {"truth", required_argument, 0, 'f'},     {"noise", required_argument, 0, 'e'},
    {"n", required_argument, 0, 'n'},         {"seed", required_argument, 0, 's'},
    {"dim", required_argument, 0, 'd'},       {"phi", required_argument, 0, 'p'},
    {"R", required_argument, 0, 'R'},         {"at", required_argument, 0, 'a'},
    {"kernel", required_argument, 0, 'k'},    {"bandwidth", required_argument, 0, 'b'},
    {"denom-tol", required_argument, 0, 'T'}, {"threads", required_argument, 0, 't'},
    {"backend", required_argument, 0, 'B'},
    {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
  const char *data_path = NULL, *spec = NULL, *truth = NULL, *noise_spec = NULL, *at = NULL;
  const char *phi = "pow:4", *Rs = NULL, *kname = "fourier", *bw = NULL, *backend = NULL;
  size_t D = 0, N = 0;
  uint64_t seed = 1;
  double tol = GFI_NW_DENOM_TOL;
  int have_n = 0, have_seed = 0, nthreads = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'D': data_path = optarg; break;
      case 'm': spec = optarg; break;
      case 'f': truth = optarg; break;
      case 'e': noise_spec = optarg; break;
      case 'n': N = cli_size("--n", optarg, 1); have_n = 1; break;
      case 's': seed = cli_u64("--seed", optarg); have_seed = 1; break;
      case 'd': D = cli_size("--dim", optarg, 1); break;
      case 'p': phi = optarg; break;
      case 'R': Rs = optarg; break;
      case 'a': at = optarg; break;
      case 'k': kname = optarg; break;
      case 'b': bw = optarg; break;
      case 'T':
        tol = cli_double("--denom-tol", optarg);
        if (!(tol >= 0 && tol < 1)) cli_usage("--denom-tol", "must be in [0, 1), got '%s'", optarg);
        break;
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
  if (!data_path && !spec) cli_usage("--data", "required (or --model SPEC --truth F --n N --seed S)");
  if (spec && !truth) cli_usage("--truth", "required with --model");
  if (spec && !have_n) cli_usage("--n", "required with --model");
  if (spec && !have_seed) cli_usage("--seed", "required with --model");
  if (data_path && (have_n || have_seed || truth || noise_spec))
    cli_usage("--n", "--n, --seed, --truth and --noise go with --model, not --data");
  if (!at) cli_usage("--at", "required");
  gfi_kernel k;
  if (!gauss) {
    parse_phi(phi, &k);
    if (!Rs) cli_usage("--R", "required for the Fourier estimator");
    if (bw) cli_usage("--bandwidth", "only for --kernel gauss");
  } else {
    if (!bw) cli_usage("--bandwidth", "required for --kernel gauss");
    if (Rs) cli_usage("--R", "only for --kernel fourier");
  }

  /* data: x (N x D), y (N x V) */
  double *x, *y;
  size_t V;
  if (data_path) {
    size_t nc;
    double *tab = cli_read_table("data file", data_path, 0, &N, &nc);
    if (!D) D = nc > 1 ? nc - 1 : 1;
    if (nc <= D)
      cli_die(EXIT_RUNTIME, "data file %s:1: %zu columns, need D = %zu inputs and at least one response",
              strcmp(data_path, "-") == 0 ? "<stdin>" : data_path, nc, D);
    V = nc - D;
    x = malloc(N * D * sizeof *x);
    y = malloc(N * V * sizeof *y);
    if (!x || !y) cli_die(EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < N; i++) {
      memcpy(x + i * D, tab + i * nc, D * sizeof *x);
      memcpy(y + i * V, tab + i * nc + D, V * sizeof *y);
    }
    free(tab);
  } else {
    if (!D) D = 1;
    V = 1;
    gfi_model *m = cli_model(spec, D);
    gfi_regfun *f = NULL;
    gfi_errinfo err;
    int st = gfi_regfun_parse(&f, truth, D, &err);
    if (st) cli_usage("--truth", "%s", err.msg[0] ? err.msg : gfi_strerror(st));
    gfi_noise nz;
    if (gfi_noise_parse(&nz, noise_spec, &err)) cli_usage("--noise", "%s", err.msg);
    x = malloc(N * D * sizeof *x);
    y = malloc(N * sizeof *y);
    gsl_rng *r = gfi_rng_stream(seed, 0);
    if (!x || !y || !r) cli_die(EXIT_RUNTIME, "out of memory for %zu x %zu points", N, D);
    cli_check(gfi_regress_sample(m, f, &nz, r, N, x, y), "sampling");
    gsl_rng_free(r);
    gfi_model_free(m);
    gfi_regfun_free(f);
  }

  double *R = NULL, *H = NULL;
  if (!gauss)
    R = cli_radii("--R", Rs, D);
  else
    H = cli_bandwidth("--bandwidth", bw, D, N, x, NULL);

  size_t M, mc;
  double *q = cli_read_table("query file", at, D, &M, &mc);
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  cli_backend be = cli_backend_resolve(backend, !gauss && k.kind == GFI_PHI_POW,
                                       gauss ? "--kernel gauss" : "a custom phi");
  gfi_nw_plan *plan = NULL;
  double *out = malloc(M * V * sizeof *out);
  unsigned char *flags = malloc(M ? M : 1);
  if (!out || !flags) cli_die(EXIT_RUNTIME, "out of memory");
  size_t nflag = 0;
  int st;
  if (be == CLI_BACKEND_CUDA) {
#ifdef GFI_HAVE_CUDA
    gfi_cuda_nw_plan *gp = NULL;
    cli_check(gfi_cuda_nw_plan_fourier(&gp, &k, N, D, V, x, y, R, NULL), "building the estimator");
    cli_check(gfi_cuda_nw_set_denom_tol(gp, tol), "--denom-tol");
    st = gfi_cuda_nw_eval(gp, M, q, out, &nflag, flags, NULL);
    gfi_cuda_nw_destroy(gp);
#endif
  } else {
    st = gauss ? gfi_nw_plan_gauss(&plan, N, D, V, x, y, H, &o)
               : gfi_nw_plan_fourier(&plan, &k, N, D, V, x, y, R, &o);
    if (st == GFI_EBANDWIDTH) cli_usage("--bandwidth", "%s", gfi_strerror(st));
    cli_check(st, "building the estimator");
    cli_check(gfi_nw_set_denom_tol(plan, tol), "--denom-tol");
    st = gfi_nw_eval_flags(plan, M, q, out, &nflag, flags, NULL);
  }
  if (st != GFI_EDENOM) cli_check(st, "evaluating the estimator");
  size_t nf[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < M; i++) nf[flags[i] & 3]++;

  cli_header(stdout);
  if (data_path)
    cli_meta(stdout, "data", "%s (N = %zu, D = %zu inputs, V = %zu responses)", data_path, N, D, V);
  else
    cli_meta(stdout, "data", "design %s, truth %s, noise %s, N = %zu, seed %llu (stream 0)", spec, truth,
             noise_spec ? noise_spec : "none", N, (unsigned long long)seed);
  cli_meta(stdout, "dim", "%zu", D);
  if (!gauss) {
    cli_meta(stdout, "kernel", "fourier nadaraya-watson, phi %s", phi);
    fprintf(stdout, "# R:");
    for (size_t j = 0; j < D; j++) fprintf(stdout, " %.17g", R[j]);
    fputc('\n', stdout);
  } else {
    fprintf(stdout, "# kernel: gauss nadaraya-watson, bandwidth %s, H =", bw);
    for (size_t j = 0; j < D * D; j++) fprintf(stdout, " %.17g", H[j]);
    fputc('\n', stdout);
  }
  cli_meta(stdout, "at", "%s (%zu points)", at, M);
  cli_meta(stdout, "denom-tol", "%.17g", tol);
  cli_meta(stdout, "flagged", "%zu (empty %zu, negative %zu, small %zu)", nflag, nf[1], nf[2], nf[3]);
  cli_meta(stdout, "eval-threads", "%d", gfi_threads_resolve(&o));
  cli_backend_meta(stdout, be);
  fputc('#', stdout);
  for (size_t j = 0; j < D; j++) fprintf(stdout, " x%zu", j + 1);
  for (size_t v = 0; v < V; v++) fprintf(stdout, " y%zu", v + 1);
  fputc('\n', stdout);
  for (size_t i = 0; i < M; i++) {
    for (size_t j = 0; j < D; j++) {
      gfi_table_put(stdout, q[i * D + j]);
      fputc(' ', stdout);
    }
    for (size_t v = 0; v < V; v++) {
      gfi_table_put(stdout, out[i * V + v]);
      fputc(v + 1 < V ? ' ' : '\n', stdout);
    }
  }
  gfi_nw_destroy(plan);
  free(out);
  free(flags);
  free(q);
  free(R);
  free(H);
  free(x);
  free(y);
  return 0;
}
