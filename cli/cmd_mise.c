/* gfi mise: exact (Plancherel) or Monte-Carlo MISE of the generalized
 * Fourier density estimator for a truth model, and of the Gaussian KDE
 * baseline (--kernel gauss: Marron & Wand's exact MISE, or Monte Carlo
 * with the closed-form ISE) for normal-mixture truths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cli_backend.h"
#include "cli_mpi.h"
#include "cli_source.h"
#include "commands.h"
#include "mise_fast.h"
#ifdef GFI_HAVE_CUDA
#include "gfi_cuda.h"
#endif

void mise_cli_check_model(const gfi_model *m, const char *spec) {
  if (!gfi_mise_exact_supported(m))
    cli_usage("--model", "'%s' in %zu dimension(s): the exact MISE needs a normal mixture or "
              "Laplace/Cauchy/t factors, D <= 3", spec, gfi_model_dim(m));
}

/* The replication split's communication (estimators/mise_fast.h), on MPI. */
enum { TAG_MISE = 201 };
static int split_minmax(void *ctx, double *lo, double *hi, size_t n) {
  (void)ctx;
  return cli_mpi_minmax(lo, hi, n);
}
static int split_send(void *ctx, const double *buf, size_t n) {
  (void)ctx;
  return cli_mpi_send(0, TAG_MISE, buf, n * sizeof *buf);
}
static int split_recv(void *ctx, int from, double *buf, size_t n) {
  (void)ctx;
  return cli_mpi_recv(from, TAG_MISE, buf, n * sizeof *buf);
}

/* --kernel gauss: the Gaussian KDE with bandwidth matrix H. */
static void mise_gauss(const char *spec, size_t D, size_t N, const char *bw, int exact, size_t reps, uint64_t seed,
                       int nthreads) {
  const char *fourier_only[] = {"phi", "ise", "method", "tol", "no-parts", "backend", "resolution"};
  for (size_t i = 0; i < sizeof fourier_only / sizeof fourier_only[0]; i++)
    if (cli_given(fourier_only[i])) cli_usage("--kernel", "--%s goes with --kernel fourier", fourier_only[i]);
  gfi_model *m = cli_model(spec, D);
  if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE)
    cli_usage("--model", "'%s': the Gaussian KDE's MISE needs a normal-mixture truth (normal, mw:K, mix:..)", spec);
  double *H, hopt = NAN;
  gfi_mise_result r;
  if (strcmp(bw, "opt") == 0) {
    H = cli_array(D, D, sizeof *H);
    memset(H, 0, D * D * sizeof *H);
    cli_check(gfi_mise_gauss_hopt(m, (double)N, &hopt, &r), "MISE-optimal bandwidth");
    for (size_t j = 0; j < D; j++) H[j * D + j] = hopt * hopt;
  } else {
    H = cli_bandwidth("--bandwidth", bw, D, N, NULL, NULL);
  }
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = nthreads;
  o.base.seed = seed;
  /* each replication sums N^2 Gaussian pairs, about 5e8 per second per thread */
  if (!exact && (double)N * (double)N * (double)reps > CLI_KDE_MC_MAX_PAIRS)
    cli_usage("--mc", "%zu replications of N^2 = %.3g pairs = %.3g Gaussian pairs to sum, above %.0e (hours of "
              "computing at about 5e8 pairs per second per thread); lower --mc or --n, or use --exact",
              reps, (double)N * (double)N, (double)N * (double)N * (double)reps, CLI_KDE_MC_MAX_PAIRS);
  int st = exact ? gfi_mise_gauss_exact(m, (double)N, H, &r) : gfi_mise_gauss_mc(m, N, H, reps, &o, &r, NULL);
  if (st == GFI_EBANDWIDTH) cli_usage("--bandwidth", "H is not symmetric positive definite");
  cli_check(st, exact ? "exact MISE of the Gaussian KDE" : "Monte-Carlo MISE of the Gaussian KDE");
  cli_header(stdout);
  cli_meta(stdout, "model", "%s (%s), dim %zu", spec, gfi_model_describe(m), D);
  if (isfinite(hopt))
    cli_meta(stdout, "kernel", "gauss, bandwidth opt: H = h^2 I at the MISE-optimal h = %.17g", hopt);
  else
    cli_meta(stdout, "kernel", "gauss, bandwidth %s", bw);
  fprintf(stdout, "# H:");
  for (size_t q = 0; q < D * D; q++) fprintf(stdout, " %.17g", H[q]);
  fputc('\n', stdout);
  if (exact)
    cli_meta(stdout, "method", "exact (Marron & Wand 1992; the value of R's ks::mise.mixt)");
  else
    cli_meta(stdout, "method", "monte carlo, %zu replications, seed %llu (replication k on stream (seed, k)), "
             "ISE in closed form (Gaussian convolutions, O(N^2) per replication); bias2 and var not estimated",
             reps, (unsigned long long)seed);
  cli_meta(stdout, "eval-threads", "%d", gfi_threads_resolve(&(gfi_opts){.nthreads = nthreads}));
  fputs("# n h mise se bias2 var lo95 hi95 reps\n", stdout);
  double row[9] = {(double)N, sqrt(H[0]), r.mise, r.se, r.bias2, r.var, r.lo95, r.hi95, (double)r.nreps};
  gfi_table_write_rows(stdout, 1, 9, row);
  cli_finish_output(stdout, "standard output");
  free(H);
  gfi_model_free(m);
}

int cmd_mise(int argc, char **argv) {
  const char *spec = NULL, *phi = NULL, *Rs = NULL, *ise = NULL, *backend = NULL, *method = NULL;
  const char *kname = NULL, *bw = NULL;
  size_t D = 1, N = 0, reps = 0;
  uint64_t seed = 0;
  int exact = 0, nthreads = 0, noparts = 0;
  double res = 1, tol = 0;
  const cli_opt opts[] = {
    {"model", CLI_STR, &spec, .arg = "SPEC", .help = "truth model (see 'gfi sample --help')"},
    CLI_OPT_DIM(D),
    {"n", CLI_SIZE, &N, .arg = "N", .min = 1, .help = "sample size"},
    {"kernel", CLI_STR, &kname, .def = "fourier", .arg = "K",
     .help = "fourier (phi = z^L, --R) or gauss (the Gaussian KDE baseline,\n"
             "--bandwidth; normal-mixture truths)"},
    CLI_OPT_PHI(phi),
    {"R", CLI_STR, &Rs, .arg = "R1[,..,RD]", .help = "radius, one for every axis or one per axis (> 0)"},
    {"bandwidth", CLI_STR, &bw, .arg = "H",
     .help = "--kernel gauss: h (H = h^2 I) | h1,..,hD (H = diag h_j^2) | D*D\n"
             "numbers, H itself (row-major) | opt (H = h^2 I at the MISE-optimal h)"},
    {"exact", CLI_FLAG, &exact,
     .help = "exact MISE through Plancherel (docs/theory.md section 3): normal\n"
             "mixtures (mw:K, normal:cov=..) and Laplace/Cauchy/t (products\n"
             "of them for D > 1), D = 1..3"},
    {"mc", CLI_SIZE, &reps, .arg = "REPS", .min = 2,
     .help = "Monte Carlo over REPS >= 2 replications; replication k draws\n"
             "its N points from RNG stream (S, k): identical for any --threads"},
    {"seed", CLI_U64, &seed, .arg = "S", .help = "seed of the replications (required with --mc)"},
    {"ise", CLI_STR, &ise, .arg = "METHOD",
     .help = "how each replication's ISE is measured: plancherel (exact,\n"
             "the default where --exact works) or grid (cubature on a box)"},
    {"method", CLI_STR, &method, .def = "auto", .arg = "M",
     .help = "Plancherel ISE: how the empirical cf at the nodes is summed:\n"
             "direct (every point at every node, all N points in memory:\n"
             "the reference), fast (a type-3 NUFFT; points streamed from\n"
             "each replication's RNG stream, memory independent of N) or\n"
             "auto (streamed, NUFFT or direct sums by cost)"},
    {"tol", CLI_POSITIVE, &tol, .def = "1e-10", .arg = "X",
     .help = "fast route: error of the empirical cf at each node"},
    {"no-parts", CLI_FLAG, &noparts,
     .help = "Monte Carlo: skip the pooled-sample pass that splits the MISE\n"
             "into bias^2 and variance (about halves the time)"},
    {"backend", CLI_STR, &backend, .def = "cpu", .arg = "B",
     .help = "Monte Carlo: cpu, cuda (the GPU: normal-mixture truths,\n"
             "Plancherel for D <= 2 or grid for D <= 3; replication k draws\n"
             "its points on the GPU from Philox stream (S, k), so they are\n"
             "not the CPU's points; with --ise grid bias2 and var are NaN)\n"
             "or auto (cuda when a GPU is present and the request is covered)"},
    {"resolution", CLI_POSITIVE, &res, .def = "1", .arg = "X", .help = "quadrature refinement factor"},
    CLI_OPT_THREADS(nthreads),
    {0}};
  const cli_spec cs = {
    "usage: gfi mise --model SPEC --dim D --n N --phi pow:L --R R1[,..,RD] --exact\n"
    "       gfi mise --model SPEC --dim D --n N --phi pow:L --R R1[,..,RD] --mc REPS --seed S\n"
    "       gfi mise --model SPEC --dim D --n N --kernel gauss --bandwidth H --exact|--mc REPS --seed S\n\n"
    "Mean integrated squared error of the generalized Fourier density estimator\n"
    "(phi(z) = z^L, radius R_j per axis) for N points of a truth model, or of the\n"
    "Gaussian KDE with bandwidth matrix H (--kernel gauss, normal-mixture truths).\n",
    opts,
    "Prints one row: n R mise se bias2 var lo95 hi95 reps. R is the first axis's\n"
    "radius (all radii are in the metadata); se = 0 and reps = 0 for --exact.\n"
    "With --kernel gauss the second column is h = sqrt(H_11) (H in the metadata);\n"
    "its Monte Carlo gives NaN for bias2 and var.\n\n"
    "Under MPI ('mpirun -np P gfi mise --mc REPS ...') replication k runs on rank\n"
    "k mod P and rank 0 combines them in replication order: the printed numbers\n"
    "are the serial ones to the bit. --exact, --kernel gauss and --backend cuda\n"
    "run on rank 0.\n"};
  if (cli_parse(&cs, argc, argv)) return 0;
  int have_seed = cli_given("seed"), parts = !noparts;
  if (!spec) cli_usage("--model", "required");
  if (!N) cli_usage("--n", "required");
  int gauss = cli_kernel_choice(kname, Rs, bw);
  if (exact && reps) cli_usage("--exact", "give either --exact or --mc REPS, not both");
  if (!exact && !reps) cli_usage("--exact", "required (or --mc REPS --seed S)");
  if (reps && !have_seed) cli_usage("--seed", "required with --mc");
  if (exact && (have_seed || ise)) cli_usage(have_seed ? "--seed" : "--ise", "goes with --mc, not --exact");
  if (gauss) {
    if (cli_mpi_rank() != 0) return 0; /* the Gaussian KDE's MISE runs on rank 0 */
    mise_gauss(spec, D, N, bw, exact, reps, seed, nthreads);
    return 0;
  }
  gfi_kernel k;
  cli_phi("--phi", phi, &k);
  gfi_model *m = cli_model(spec, D);
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = nthreads;
  o.base.seed = seed;
  o.parts = parts;
  o.resolution = res;
  if (ise) {
    if (!strcmp(ise, "plancherel")) o.ise = GFI_ISE_PLANCHEREL;
    else if (!strcmp(ise, "grid")) o.ise = GFI_ISE_GRID;
    else cli_usage("--ise", "unknown method '%s' (expected plancherel or grid)", ise);
    if (o.ise == GFI_ISE_PLANCHEREL && D > 3) cli_usage("--ise", "plancherel needs D <= 3");
  }
  if (!strcmp(method, "direct")) o.base.method = GFI_METHOD_DIRECT;
  else if (!strcmp(method, "fast")) o.base.method = GFI_METHOD_FAST;
  else if (strcmp(method, "auto")) cli_usage("--method", "unknown method '%s' (expected direct, fast or auto)", method);
  if (exact && cli_given("method")) cli_usage("--method", "goes with --mc, not --exact");
  if (!(tol >= 1e-15 && tol < 1))
    cli_usage("--tol", "must be in [1e-15, 1) (the type-3 NUFFT resolves no finer), got %g", tol);
  if (!(tol < 1)) cli_usage("--tol", "must be in (0, 1), got %g", tol);
  o.base.tol = tol;
  if (exact || o.ise != GFI_ISE_GRID) mise_cli_check_model(m, spec);
  double *R = cli_radii("--R", Rs, D);
  /* the variance term grows like prod_j R_j / N: beyond 1e300 it (or the
   * quadrature of the bias behind it) overflows a double */
  double lgR = 0;
  for (size_t j = 0; j < D; j++) lgR += log10(R[j]);
  if (!(lgR <= 300))
    cli_usage("--R", "the product of the radii, 10^%.1f, is above 1e300 (the MISE's variance term, about "
              "prod_j R_j / N, overflows a double)", lgR);
  if (exact && backend && strcmp(backend, "cpu") && strcmp(backend, "auto"))
    cli_backend_resolve(backend, 0, "--exact"); /* an unknown name or cuda: usage error */
  int gpu_ok = 0;
  char why[256];
  snprintf(why, sizeof why, "--exact (the exact MISE runs on the CPU)");
#ifdef GFI_HAVE_CUDA
  if (!exact) {
    gpu_ok = gfi_cuda_mise_mc_supported(m, &o);
    if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE)
      snprintf(why, sizeof why, "--model '%s': the GPU Monte Carlo samples normal mixtures only", spec);
    else
      snprintf(why, sizeof why, "--model '%s' in %zu dimensions: the GPU Monte Carlo measures the ISE "
               "by Plancherel for D <= 2 and on a grid for D <= 3", spec, D);
  }
#endif
  cli_backend be = cli_backend_resolve(exact ? NULL : backend, gpu_ok, why);
  gfi_mise_result r;
  int st;
  const int P = cli_mpi_size(), rank = cli_mpi_rank();
  /* The CPU draws and sums about 1e7 points per second per thread: past
   * CLI_MC_MAX_POINTS per MPI rank a run would take hours; refuse it before starting. */
  if (!exact && be != CLI_BACKEND_CUDA && (double)N * (double)reps > CLI_MC_MAX_POINTS * P)
    cli_usage("--mc", "%zu replications of %zu points = %.3g points to draw and sum, above %.0e%s (hours of "
              "computing at about 1e7 points per second per thread); lower --mc or --n",
              reps, N, (double)N * (double)reps, CLI_MC_MAX_POINTS * P, P > 1 ? " for these ranks" : "");
  /* under MPI the CPU Monte Carlo splits its replications; the rest runs on rank 0 */
  int split = P > 1 && !exact && be != CLI_BACKEND_CUDA;
  if (P > 1 && !split && rank != 0) {
    free(R);
    gfi_model_free(m);
    return 0;
  }
  if (split) {
    mise_split sp = {rank, P, NULL, split_minmax, split_send, split_recv};
    st = mise_mc_split(m, &k, N, R, reps, &o, &sp, &r, NULL);
    if (!st && rank != 0) {
      free(R);
      gfi_model_free(m);
      return 0;
    }
  } else if (exact) st = gfi_mise_exact(m, &k, (double)N, R, &o, &r);
#ifdef GFI_HAVE_CUDA
  else if (be == CLI_BACKEND_CUDA) st = gfi_cuda_mise_mc(m, &k, N, R, reps, &o, &r, NULL, NULL);
#endif
  else st = gfi_mise_mc(m, &k, N, R, reps, &o, &r, NULL);
  if (exact && st == GFI_ERANGE && r.nodes[0])
    cli_die(EXIT_RUNTIME, "exact MISE: the quadrature would need %zu%s%.0zu%s%.0zu nodes, above the limits of "
            "%zu per axis and %zu in all (hours of computing or tens of GB); lower --resolution (now %g) or --R",
            r.nodes[0], D > 1 ? " x " : "", D > 1 ? r.nodes[1] : 0, D > 2 ? " x " : "", D > 2 ? r.nodes[2] : 0,
            GFI_MISE_EXACT_MAX_AXIS, GFI_MISE_EXACT_MAX_NODES, res);
  if (!exact && be != CLI_BACKEND_CUDA && o.ise == GFI_ISE_GRID && st == GFI_EINVAL)
    cli_usage("--model", "'%s' in %zu dimension(s): the grid ISE takes its box from the model's location and "
              "scale, known for normal mixtures and Laplace/Cauchy/t factors", spec, D);
  char size[160];
  if (exact)
    snprintf(size, sizeof size, "N = %zu in %zu dimension(s) with R_1 = %g, resolution %g", N, D, R[0], res);
  else
    snprintf(size, sizeof size, "%zu replications of %zu points in %zu dimension(s) with R_1 = %g, resolution %g",
             reps, N, D, R[0], res);
  cli_check_size(st, exact ? "exact MISE" : be == CLI_BACKEND_CUDA ? "Monte-Carlo MISE on the GPU" : "Monte-Carlo MISE",
                 size, exact ? "--R or --resolution" : "--mc or --n",
                 exact || o.ise == GFI_ISE_GRID ? "--R or --resolution"
                 : o.base.method == GFI_METHOD_DIRECT
                     ? "--n (--method direct sums every one of the N points at every node of the rule: N x nodes "
                       "above its limit; --method fast streams the points), --R or --resolution"
                     : "--R or --resolution (a heavy-tailed sample's extent widens the Plancherel rule too: "
                       "--ise grid measures on a fixed box)");
  cli_header(stdout);
  cli_meta(stdout, "model", "%s (%s), dim %zu", spec, gfi_model_describe(m), D);
  cli_meta(stdout, "kernel", "phi %s, A = %.17g", phi, k.A);
  fprintf(stdout, "# R:");
  for (size_t j = 0; j < D; j++) fprintf(stdout, " %.17g", R[j]);
  fputc('\n', stdout);
  if (exact) {
    cli_meta(stdout, "method", "exact (Plancherel), resolution %g", res);
    cli_meta(stdout, "bias2-inside-box", "%.17g", r.bias2_in);
    cli_meta(stdout, "bias2-outside-box", "%.17g", r.bias2_out);
  } else {
    int grid = be == CLI_BACKEND_CUDA ? o.ise == GFI_ISE_GRID || (o.ise == GFI_ISE_AUTO && D > 2)
                                      : r.method == 0;
    if (be == CLI_BACKEND_CUDA)
      cli_meta(stdout, "method", "monte carlo on the GPU, %zu replications, seed %llu (replication k: "
               "Philox stream (seed, k) sampled on the GPU, not the CPU backend's points), ISE by %s%s",
               reps, (unsigned long long)seed,
               grid ? "grid cubature (the CPU's rule)" : "Plancherel (the CPU's nodes)",
               grid ? "; bias2 and var not available (no pooled pass on the GPU grid path)"
                    : parts ? ", parts from the pooled sample" : "");
    else
      cli_meta(stdout, "method", "monte carlo, %zu replications, seed %llu (replication k on stream (seed, k)), "
               "ISE by %s%s", reps, (unsigned long long)seed, grid ? "grid cubature" : "Plancherel",
               parts ? ", parts from the pooled sample" : "");
  }
  if (!exact && be != CLI_BACKEND_CUDA && r.method) {
    char nodes[96];
    if (r.nodes[0])
      snprintf(nodes, sizeof nodes, "%zu%s%.0zu%s%.0zu nodes (axis 0 on t >= 0), one rule for all", r.nodes[0],
               D > 1 ? " x " : "", D > 1 ? r.nodes[1] : 0, D > 2 ? " x " : "", D > 2 ? r.nodes[2] : 0);
    else
      snprintf(nodes, sizeof nodes, "nodes per replication from its extent");
    if (r.method == GFI_METHOD_FAST)
      cli_meta(stdout, "ecf", "fast: type-3 NUFFT, tol %g, %s; %s; "
               "|ISE error| <= %.3g from the tolerance", tol,
               r.nodes[0] ? "streamed (memory independent of N)" : "each replication's points in memory", nodes,
               r.ise_err_bound);
    else
      cli_meta(stdout, "ecf", "direct sums, %s; %s", o.base.method == GFI_METHOD_DIRECT || !r.nodes[0]
               ? "all points in memory" : "streamed (memory independent of N)", nodes);
  }
  if (!exact) cli_backend_meta(stdout, be);
  if (!exact && !(isfinite(r.bias2) && isfinite(r.var)))
    cli_meta(stdout, "parts", "bias2 and var not available (%s): their columns hold nan",
             !parts ? "--no-parts" : be == CLI_BACKEND_CUDA ? "no pooled pass on the GPU grid path"
                                                            : "the pooled sample is too wide for one rule");
  if (split) cli_meta(stdout, "mpi", "%d ranks, replication k on rank k mod %d, combined in replication order", P, P);
  cli_meta(stdout, "eval-threads", "%d", gfi_threads_resolve(&(gfi_opts){.nthreads = nthreads}));
  fputs("# n R mise se bias2 var lo95 hi95 reps\n", stdout);
  double row[9] = {(double)N, R[0], r.mise, r.se, r.bias2, r.var, r.lo95, r.hi95, (double)r.nreps};
  gfi_table_write_rows(stdout, 1, 9, row);
  cli_finish_output(stdout, "standard output");
  free(R);
  gfi_model_free(m);
  return 0;
}
