/* gfi density: generalized Fourier density estimate (or Gaussian KDE). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "cli_backend.h"
#include "cli_source.h"
#include "cli_select.h"
#include "cli_mpi.h"
#include "cli_slab.h"
#ifdef GFI_HAVE_CUDA
#include "gfi_cuda.h"
#endif

int cmd_density(int argc, char **argv) {
  cli_source src = {0};
  const char *phi = NULL, *Rs = NULL, *kname = NULL, *bw = NULL, *wpath = NULL, *backend = NULL;
  const char *method = NULL, *out = NULL;
  double tol = 0;
  int nthreads = 0, npy_table = 0;
  const cli_opt opts[] = {
    {"data", CLI_STR, &src.data, .arg = "FILE", .section = "data (one of)",
     .help = "N points, D numbers per line ('#' lines ignored, '-' = stdin), or a\n"
             ".npy array of shape (N, D) or (N,) (float64; by the suffix or the magic)"},
    {"model", CLI_STR, &src.model, .arg = "SPEC",
     .help = "draw N points from a truth model (see 'gfi sample --help'), with --n, --seed;\n"
             "stream (S, 0), so 'gfi sample' with the same S gives the same data"},
    CLI_SOURCE_DRAW(src),
    {"weights", CLI_STR, &wpath, .arg = "FILE", .help = "optional weights, one per data point (normalised to sum 1)"},
    {"dim", CLI_SIZE, &src.dim, .arg = "D", .min = 1, .section = "estimator",
     .help = "dimension (default: the data file's column count, else 1)"},
    {"kernel", CLI_STR, &kname, .def = "fourier", .arg = "K", .help = "fourier or gauss (Gaussian KDE baseline)"},
    {"phi", CLI_STR, &phi, .def = "pow:4", .arg = "pow:L",
     .help = "phi(z) = z^L, L = 1..8 (4 = Jackson, 2 = Fejer, 1 = Dirichlet); also\n"
             "poly:a1,..,ad and flattop:c (the flat-top kernel, 0 < c < 1)"},
    {"R", CLI_STR, &Rs, .arg = "R1[,..,RD]",
     .help = "radius, one value for every axis or one per axis (> 0), or lscv (the\n"
             "radius minimising least-squares cross-validation; recorded in '# R-select:')"},
    {"bandwidth", CLI_STR, &bw, .arg = "H",
     .help = "Gaussian bandwidth: scott | silverman (rule times the data covariance,\n"
             "as scipy's gaussian_kde) | h (H = h^2 I) | h1,..,hD (H = diag h_j^2)\n"
             "| D*D numbers, the full bandwidth matrix H (row-major, D > 1)\n"
             "| ns (normal reference, ks::Hns) | lscv (least-squares CV) | pi (plug-in,\n"
             "ks::Hpi) | pi-diag (diagonal plug-in, ks::Hpi.diag): chosen from the\n"
             "data, full matrices; lscv, pi and pi-diag for D <= 2"},
    CLI_SOURCE_QUERIES(src, "evaluation"),
    CLI_OPT_METHOD(method),
    CLI_OPT_TOL(tol),
    CLI_OPT_THREADS(nthreads),
    {"backend", CLI_STR, &backend, .def = "cpu", .arg = "B",
     .help = "cpu, cuda (the GPU engine, float64; Fourier kernels with\n"
             "phi = pow:L or poly:..) or auto (the GPU when gfi has CUDA and a GPU is present)"},
    CLI_OPT_OUT(out),
    CLI_OPT_NPY_TABLE(npy_table),
    {0}};
  const cli_spec spec = {
    "usage: gfi density (--data FILE | --model SPEC --n N --seed S) --dim D\n"
    "                   --phi pow:L --R R1[,R2,...] --at FILE [options]\n\n"
    "Generalized Fourier density estimate (FourierFormer eq. 12, a radius per axis)\n"
    "  p(x) = sum_i w_i prod_j (R_j/A_l) sinc(R_j (x_j - k_ij))^l\n"
    "at every point of the query file; prints columns x1 .. xD density.\n",
    opts, NULL};
  if (cli_parse(&spec, argc, argv)) return 0;
  cli_check_npy_table(npy_table, out);
  src.grid = cli_given("grid") > 0;
  cli_source_check(&src);
  int gauss = cli_kernel_choice(kname, Rs, bw);
  gfi_kernel k;
  if (!gauss) cli_phi("--phi", phi, &k);
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  o.tol = tol;
  o.borrow = 1; /* the data outlive every plan made from them: no copy of the points */
  cli_method(method, &o);

  /* under MPI: each rank reads its slab of a data file and sums it (cli_slab.h);
   * what needs all the data at once (weights, --R lscv, the Gaussian
   * bandwidth rules, the GPU) runs on rank 0 alone */
  int slab = cli_mpi_on() && !gauss && !wpath && !cli_R_is_select(Rs) && (!backend || !strcmp(backend, "cpu")) &&
             cli_slabs_possible(src.data);
  if (cli_mpi_on() && !slab && cli_mpi_rank() != 0) {
    cli_source_free(&src);
    return 0;
  }
  double *data = NULL;
  size_t D, N, V;
  cli_slabs sl;
  if (slab) {
    cli_slabs_load(src.data, src.dim, &sl);
    D = sl.D;
    N = sl.N;
  } else {
    cli_source_load(&src, &D, &N, &data, &V, NULL);
  }
  double *w = NULL;
  if (wpath) {
    size_t nw;
    w = cli_read_table("weights file", wpath, 1, &nw, NULL);
    if (nw != N) cli_die(EXIT_RUNTIME, "weights file %s: %zu weights for %zu data points", wpath, nw, N);
    double s = 0, wmax = 0;
    for (size_t i = 0; i < N; i++) s += w[i], wmax = fmax(wmax, fabs(w[i]));
    if (isinf(s)) {
      /* only the weights' ratios matter: scaled by a power of 2 (exactly),
       * their sum is finite again */
      int e;
      frexp(wmax, &e);
      s = 0;
      for (size_t i = 0; i < N; i++) s += (w[i] = ldexp(w[i], -e));
      if (!isfinite(s)) cli_die(EXIT_RUNTIME, "weights file %s: the weights' sum overflows a double", wpath);
    }
    if (!(s > 0)) cli_die(EXIT_RUNTIME, "weights file %s: weights must have a positive sum", wpath);
  }

  cli_check_method_dim(&o, D);
  /* radii or bandwidth (need D) */
  double *R = NULL, *H = NULL;
  char bwnote[256] = "";
  gfi_select_result sel;
  int selR = !gauss && cli_R_is_select(Rs);
  if (selR)
    R = cli_select_radii(Rs, "lscv", &k, N, D, 0, data, NULL, &o, &sel);
  else if (!gauss)
    R = cli_radii("--R", Rs, D);
  else
    H = cli_bw_is_select(bw) ? cli_select_bandwidth(bw, N, D, data, w, &o, bwnote, sizeof bwnote)
                             : cli_bandwidth("--bandwidth", bw, D, N, data, w);

  size_t M;
  char atdesc[512];
  double *x = cli_source_queries(&src, D, &M, atdesc, sizeof atdesc);
  if (!gauss) {
    if (!slab) cli_check_phase("the data", N, D, data, R);
    cli_check_phase("the query points", M, D, x, R);
  }
  const int gpu_phi = k.kind == GFI_PHI_POW || k.kind == GFI_PHI_POLY; /* libgfi_cuda's pair sums */
  cli_backend be = cli_backend_resolve(backend, !gauss && gpu_phi && o.method != GFI_METHOD_FAST,
                                       gauss ? "--kernel gauss" : !gpu_phi ? "--phi (a custom phi or the flat-top kernel)"
                                                                           : "--method fast (a CPU route)");
  gfi_density_plan *plan = NULL;
  gfi_fast_info info;
  double *p = cli_array_for(src.grid ? "--grid" : "--at", "estimates", M, 1, sizeof *p);
  memset(&info, 0, sizeof info);
  size_t sl_nblk = 0;
  if (slab) {
    cli_slabs_density(&sl, &k, R, &o, M, x, src.grid ? src.lo : NULL, src.hi, src.gn, p, &info);
    sl_nblk = sl.nblk;
    cli_slabs_free(&sl);
    if (cli_mpi_rank() != 0) {
      free(p);
      free(x);
      free(R);
      cli_source_free(&src);
      return 0;
    }
  } else if (be == CLI_BACKEND_CUDA) {
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
    cli_check_route(st, &o, "building the estimator");
    /* a grid goes to the library whole: the fast route's last step is then separable */
    st = src.grid ? gfi_density_eval_grid(plan, src.lo, src.hi, src.gn, p, &info)
                  : gfi_density_eval_info(plan, M, x, p, &info);
    cli_check_route(st, &o, "evaluating the estimator");
  }

  cli_output out_;
  cli_require_finite("density values", M, 1, p);
  cli_output_open(&out_, out);
  FILE *f = out_.f;
  cli_header(f);
  if (src.data)
    cli_meta(f, "data", "%s (N = %zu)", src.data, N);
  else
    cli_meta(f, "data", "model %s, N = %zu, seed %llu (stream 0)", src.model, N, (unsigned long long)src.seed);
  if (wpath) cli_meta(f, "weights", "%s", wpath);
  cli_meta(f, "dim", "%zu", D);
  if (!gauss) {
    cli_meta(f, "kernel", "fourier, phi %s, A = %.17g", phi, k.A);
    cli_meta_values(f, "R", "", D, R);
    if (selR) cli_select_meta(f, "lscv", &sel, D);
  } else {
    char key[96];
    snprintf(key, sizeof key, "gauss, bandwidth %s, H =", bw);
    cli_meta_values(f, "kernel", key, D * D, H);
    if (bwnote[0]) cli_meta(f, "bandwidth-select", "%s", bwnote);
  }
  cli_meta(f, "at", "%s", atdesc);
  cli_method_meta(f, &o, be == CLI_BACKEND_CUDA ? NULL : &info);
  cli_meta(f, "eval-threads", "%d", gfi_threads_resolve(&o));
  if (slab)
    cli_meta(f, "mpi", "%d ranks; the data in %zu blocks (of the file, whatever the ranks), each summed alone "
             "and added in block order", cli_mpi_size(), sl_nblk);
  cli_backend_meta(f, be);
  cli_output_meta(&out_, M, D, 1, npy_table);
  cli_columns(f, D, "density");
  cli_output_rows(&out_, M, D, x, 1, p, npy_table);
  cli_output_close(&out_);
  gfi_density_destroy(plan);
  free(p);
  free(x);
  free(R);
  free(H);
  free(w);
  free(data);
  cli_source_free(&src);
  return 0;
}
