/* gfi regress: Nadaraya-Watson regression with the generalized Fourier
 * kernel (or the Gaussian baseline) at the points of a query file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "cli_backend.h"
#include "cli_source.h"
#include "cli_mpi.h"
#include "cli_slab.h"
#include "cli_select.h"
#ifdef GFI_HAVE_CUDA
#include "gfi_cuda.h"
#endif

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
  if (strncmp(s, "flattop:", 8) == 0)
    cli_usage("--phi", "'%s': the flat-top kernel serves density estimation only; regression takes pow:L, "
              "poly:a1,..,ad, abs or relu", s);
  if (strncmp(s, "pow:", 4) != 0 && strncmp(s, "poly:", 5) != 0)
    cli_usage("--phi", "unknown phi '%s' (expected pow:L, poly:a1,..,ad, abs or relu)", s);
  cli_phi("--phi", s, k);
}

static void check_denom_tol(const char *opt, const char *arg, void *dst) {
  double t = *(double *)dst;
  if (!(t >= 0 && t < 1)) cli_usage(opt, "must be in [0, 1), got '%s'", arg);
}

int cmd_regress(int argc, char **argv) {
  cli_source src = {.regress = 1};
  const char *phi = NULL, *Rs = NULL, *kname = NULL, *bw = NULL, *backend = NULL;
  const char *method = NULL, *outpath = NULL;
  double tol = GFI_NW_DENOM_TOL, ftol = 0;
  int nthreads = 0, npy_table = 0;
  const cli_opt opts[] = {
    {"data", CLI_STR, &src.data, .arg = "FILE", .section = "data (one of)",
     .help = "one pair per line: D inputs, then V responses (V = row length - D;\n"
             "'#' lines ignored, '-' = stdin), or a .npy array of shape (N, D + V)"},
    {"model", CLI_STR, &src.model, .arg = "SPEC",
     .help = "x_i from a design model (see 'gfi sample --help'), y_i = F(x_i) + noise,\n"
             "with --truth, --noise, --n, --seed: random stream (S, 0), as 'gfi regress-sample'"},
    {"truth", CLI_STR, &src.truth, .arg = "F",
     .help = "poly:c0,c1,.. (first axis; ';axis=J' for another), polysum:c0,.. (every axis),\n"
             "sin[:w], prod-sin[:w]"},
    {"noise", CLI_STR, &src.noise, .arg = "N",
     .help = "none (when not given) | gauss:S | hetero:S0,S1 (sd = S0 + S1 |x_1|)"},
    CLI_SOURCE_DRAW(src),
    {"dim", CLI_SIZE, &src.dim, .arg = "D", .min = 1, .section = "estimator",
     .help = "input dimension (default: the data file's row length - 1, else 1)"},
    {"kernel", CLI_STR, &kname, .def = "fourier", .arg = "K",
     .help = "fourier or gauss (Gaussian Nadaraya-Watson baseline)"},
    {"phi", CLI_STR, &phi, .def = "pow:4", .arg = "PHI",
     .help = "pow:L (phi(z) = z^L, L = 1..8), abs (|z|) or relu\n"
             "(max(z, 0)); A cancels in the ratio, so these need no finite A"},
    {"R", CLI_STR, &Rs, .arg = "R1[,..,RD]",
     .help = "radius, one for every axis or one per axis (> 0), or loocv (the radius\n"
             "minimising leave-one-out CV; recorded in '# R-select:')"},
    {"bandwidth", CLI_STR, &bw, .arg = "H",
     .help = "Gaussian: h (H = h^2 I) | h1,..,hD (H = diag h_j^2) | D*D numbers\n"
             "(the full matrix H, row-major) | scott | silverman (rules on the inputs)"},
    {"denom-tol", CLI_DOUBLE, &tol, .def = "1e-8", .arg = "T", .parse = check_denom_tol,
     .help = "flag a row when 0 <= S <= T * sum|K_i|"},
    CLI_SOURCE_QUERIES(src, "evaluation"),
    CLI_OPT_METHOD(method),
    CLI_OPT_TOL(ftol),
    CLI_OPT_THREADS(nthreads),
    {"backend", CLI_STR, &backend, .def = "cpu", .arg = "B",
     .help = "cpu, cuda (the GPU engine, float64; phi = pow:L or poly:..) or\n"
             "auto (the GPU when gfi has CUDA and a GPU is present)"},
    CLI_OPT_OUT(outpath),
    CLI_OPT_NPY_TABLE(npy_table),
    {0}};
  const cli_spec spec = {
    "usage: gfi regress (--data FILE | --model SPEC --truth F [--noise N] --n N --seed S)\n"
    "                   [--dim D] --phi pow:L --R R1[,R2,...] --at FILE [options]\n\n"
    "Nadaraya-Watson regression (FourierFormer eq. 14, a radius per axis)\n"
    "  f(x) = sum_i y_i K_i(x) / sum_i K_i(x),  K_i(x) = prod_j phi(sinc(R_j (x_j - k_ij)))\n"
    "at every point of the query file; prints columns x1 .. xD y1 .. yV.\n",
    opts,
    "Flagged rows: where the denominator S = sum_i K_i is 0 for every data point (an empty\n"
    "neighbourhood), negative, or cancels (0 <= S <= T sum|K_i|; only for odd L or a phi with\n"
    "negative values), the row's responses are printed as nan and counted in '# flagged:'.\n"
    "Rows are flagged, not failed: the exit status stays 0.\n"};
  if (cli_parse(&spec, argc, argv)) return 0;
  cli_check_npy_table(npy_table, outpath);
  src.grid = cli_given("grid") > 0;
  cli_source_check(&src);
  int gauss = cli_kernel_choice(kname, Rs, bw);
  gfi_kernel k;
  if (!gauss) parse_phi(phi, &k);
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  o.tol = ftol;
  o.borrow = 1; /* the data outlive every plan made from them: no copy of the points */
  cli_method(method, &o);
  if (o.method == GFI_METHOD_FAST && !gauss && k.kind != GFI_PHI_POW)
    cli_usage("--method", "fast needs --kernel fourier with phi = pow:L (or --kernel gauss)");

  /* under MPI: each rank reads its slab of a data file and sums it on the
   * direct route (cli_slab.h); what needs all the data at once (--R loocv,
   * the bandwidth rules, --method fast, the GPU) runs on rank 0 alone */
  int slab = cli_mpi_on() && !cli_R_is_select(Rs) && (!backend || !strcmp(backend, "cpu")) &&
             o.method != GFI_METHOD_FAST && (!gauss || (bw && strcmp(bw, "scott") && strcmp(bw, "silverman"))) &&
             cli_slabs_possible(src.data);
  if (cli_mpi_on() && !slab && cli_mpi_rank() != 0) {
    cli_source_free(&src);
    return 0;
  }
  /* data: x (N x D), y (N x V) */
  double *x = NULL, *y = NULL;
  size_t D, N, V;
  cli_slabs sl;
  if (slab) {
    cli_slabs_load(src.data, 0, &sl);
    cli_slabs_split(&sl, src.dim);
    D = sl.D;
    V = sl.V;
    N = sl.N;
    o.method = GFI_METHOD_DIRECT;
  } else {
    cli_source_load(&src, &D, &N, &x, &V, &y);
  }
  /* responses beyond 2^500 are scaled by a power of 2 (exactly) so that the
   * weighted sums cannot overflow; the estimate is linear in y */
  double ymax = 0, ys = 1;
  for (size_t i = 0; y && i < N * V; i++) ymax = fmax(ymax, fabs(y[i]));
  if (ymax > 0x1p500) {
    int e;
    frexp(ymax, &e);
    ys = ldexp(1, e - 1);
    for (size_t i = 0; i < N * V; i++) y[i] /= ys;
  }

  cli_check_method_dim(&o, D);
  double *R = NULL, *H = NULL;
  gfi_select_result sel;
  int selR = !gauss && cli_R_is_select(Rs);
  if (selR)
    R = cli_select_radii(Rs, "loocv", &k, N, D, V, x, y, &o, &sel);
  else if (!gauss)
    R = cli_radii("--R", Rs, D);
  else
    H = cli_bandwidth("--bandwidth", bw, D, N, x, NULL);

  size_t M;
  char atdesc[512];
  double *q = cli_source_queries(&src, D, &M, atdesc, sizeof atdesc);
  if (!gauss) {
    if (!slab) cli_check_phase("the data", N, D, x, R);
    cli_check_phase("the query points", M, D, q, R);
  }
  const int gpu_phi = k.kind == GFI_PHI_POW || k.kind == GFI_PHI_POLY; /* libgfi_cuda's pair sums */
  const char *why = gauss ? "--kernel gauss" : !gpu_phi ? "a custom phi" : "--method fast (a CPU route)";
  cli_backend be = cli_backend_resolve(backend, !gauss && gpu_phi && o.method != GFI_METHOD_FAST, why);
  gfi_nw_plan *plan = NULL;
  gfi_fast_info info;
  double *out = cli_array_for(src.grid ? "--grid" : "--at", "estimates", M, V, sizeof *out);
  unsigned char *flags = cli_array_for(src.grid ? "--grid" : "--at", "flags", M, 1, 1);
  size_t nflag = 0;
  int st = GFI_OK;
  size_t sl_nblk = 0;
  if (slab) {
    memset(&info, 0, sizeof info);
    info.route = GFI_METHOD_DIRECT;
    info.dim = D;
    info.reason = GFI_ROUTE_REQUESTED;
    nflag = cli_slabs_regress(&sl, gauss ? NULL : &k, R, H, tol, &o, M, q, out, flags);
    sl_nblk = sl.nblk;
    cli_slabs_free(&sl);
    if (cli_mpi_rank() != 0) {
      free(out);
      free(flags);
      free(q);
      free(R);
      free(H);
      cli_source_free(&src);
      return 0;
    }
  } else if (be == CLI_BACKEND_CUDA) {
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
    cli_check_route(st, &o, "building the estimator");
    cli_check(gfi_nw_set_denom_tol(plan, tol), "--denom-tol");
    /* a grid by the grid route (which may bin it), with every row's flag */
    st = src.grid ? gfi_nw_eval_grid_ex(plan, src.lo, src.hi, src.gn, out, &nflag, flags, &info)
                  : gfi_nw_eval_ex(plan, M, q, out, &nflag, flags, NULL, &info);
  }
  if (st != GFI_EDENOM) cli_check_route(st, &o, "evaluating the estimator");
  /* flagged rows are NaN by design; any other non-finite value is an
   * overflow of the responses' sums */
  for (size_t i = 0; i < M; i++)
    for (size_t c = 0; c < V; c++) {
      double *z = out + i * V + c;
      *z *= ys;
      if (isinf(*z) || (isnan(*z) && !flags[i]))
        cli_die(EXIT_RUNTIME, "%s: the estimate at query point %zu, response %zu, overflows a double (responses "
                "up to %g): rescale the responses", src.data ? src.data : "the data", i + 1, c + 1,
                ymax);
    }
  size_t nf[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < M; i++) nf[flags[i] & 3]++;

  cli_output oo;
  cli_output_open(&oo, outpath);
  FILE *f = oo.f;
  cli_header(f);
  if (src.data)
    cli_meta(f, "data", "%s (N = %zu, D = %zu inputs, V = %zu responses)", src.data, N, D, V);
  else
    cli_meta(f, "data", "design %s, truth %s, noise %s, N = %zu, seed %llu (stream 0)", src.model, src.truth,
             src.noise ? src.noise : "none", N, (unsigned long long)src.seed);
  cli_meta(f, "dim", "%zu", D);
  if (!gauss) {
    cli_meta(f, "kernel", "fourier nadaraya-watson, phi %s", phi);
    cli_meta_values(f, "R", "", D, R);
    if (selR) cli_select_meta(f, "loocv", &sel, D);
  } else {
    char key[96];
    snprintf(key, sizeof key, "gauss nadaraya-watson, bandwidth %s, H =", bw);
    cli_meta_values(f, "kernel", key, D * D, H);
  }
  cli_meta(f, "at", "%s", atdesc);
  cli_meta(f, "denom-tol", "%.17g", tol);
  cli_meta(f, "flagged", "%zu (empty %zu, negative %zu, small %zu)", nflag, nf[1], nf[2], nf[3]);
  cli_method_meta(f, &o, be == CLI_BACKEND_CUDA ? NULL : &info);
  cli_meta(f, "eval-threads", "%d", gfi_threads_resolve(&o));
  if (slab)
    cli_meta(f, "mpi", "%d ranks; the data in %zu blocks (of the file, whatever the ranks), each block's direct "
             "sums brought to a common scale and added in block order", cli_mpi_size(), sl_nblk);
  cli_backend_meta(f, be);
  cli_output_meta(&oo, M, D, V, npy_table);
  fputc('#', f);
  for (size_t j = 0; j < D; j++) fprintf(f, " x%zu", j + 1);
  for (size_t v = 0; v < V; v++) fprintf(f, " y%zu", v + 1);
  fputc('\n', f);
  cli_output_rows(&oo, M, D, q, V, out, npy_table);
  cli_output_close(&oo);
  gfi_nw_destroy(plan);
  free(out);
  free(flags);
  free(q);
  free(R);
  free(H);
  free(x);
  free(y);
  cli_source_free(&src);
  return 0;
}
