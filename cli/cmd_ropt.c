/* gfi ropt: the MISE-optimal radius R* (Brent on log R over the exact MISE)
 * of a truth model, or (--data, --select) the radius a data-driven criterion
 * chooses for a sample: LSCV for the density, leave-one-out CV for NW. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "cli_source.h"

void mise_cli_check_model(const gfi_model *m, const char *spec);
int ropt_select(const char *data, const char *select, const char *range, int per_axis, int curve,
                int regress, size_t D, int dim_given, const char *phi, const gfi_opts *o, size_t nscan);

int cmd_ropt(int argc, char **argv) {
  const char *spec = NULL, *phi = NULL, *Ns = NULL, *dir = NULL;
  size_t D = 1;
  int nthreads = 0;
  double res = 1, tol = 0;
  const char *data = NULL, *select = NULL, *range = NULL, *method = NULL;
  int per_axis = 0, curve = 0, regress = 0;
  size_t nscan = 100;
  const cli_opt opts[] = {
    {"model", CLI_STR, &spec, .arg = "SPEC", .help = "truth model (see 'gfi sample --help')"},
    CLI_OPT_DIM(D),
    {"n", CLI_STR, &Ns, .arg = "N1[,N2,..]", .help = "sample sizes, one row each (N up to 1e15)"},
    CLI_OPT_PHI(phi),
    {"dir", CLI_STR, &dir, .arg = "r1,..,rD", .help = "optimise along R = r * (r1,..,rD) (default: equal radii)"},
    {"resolution", CLI_POSITIVE, &res, .def = "1", .arg = "X", .help = "quadrature refinement factor"},
    CLI_OPT_THREADS(nthreads),
    {"data", CLI_STR, &data, .arg = "FILE", .section = "data-driven radius (instead of --model)",
     .help = "a sample: D numbers per line (with --regress: x_1..x_D then the responses),\n"
             "or a .npy array"},
    {"select", CLI_STR, &select, .arg = "C", .help = "lscv (density) or loocv (with --regress)"},
    {"regress", CLI_FLAG, &regress, .help = "Nadaraya-Watson: FILE holds inputs and responses"},
    {"R-range", CLI_STR, &range, .arg = "LO,HI",
     .help = "scan range of R (default: [0.05, 10 max(5, N^(1/5))] / s, s the smallest\n"
             "robust scale min(sd, IQR/1.349) of an axis)"},
    {"nscan", CLI_SIZE, &nscan, .def = "100", .arg = "K", .min = 3, .max = GFI_SELECT_NSCAN_MAX,
     .help = "radii on the log-spaced scan (at most 1e5)"},
    {"per-axis", CLI_FLAG, &per_axis, .help = "a radius per axis (D <= 3), refined axis by axis"},
    {"curve", CLI_FLAG, &curve, .help = "print the criterion over the scan (columns R and lscv or cv)"},
    CLI_OPT_METHOD(method),
    CLI_OPT_TOL(tol),
    {0}};
  const cli_spec cs = {
    "usage: gfi ropt --model SPEC --dim D --n N1[,N2,..] --phi pow:L [options]\n\n"
    "The radius R* minimising the exact MISE of the generalized Fourier density\n"
    "estimator (phi(z) = z^L) for N points of a truth model: a geometric bracket\n"
    "search on log R, with no upper cap on R, then on that bracket the radius search\n"
    "of --select below (a scan, Brent's method on log R to 1e-5). For normal-\n"
    "mixture truths the Gaussian KDE at its MISE-optimal bandwidth h* (H = h*^2 I,\n"
    "exact MISE of Marron & Wand 1992) is printed alongside as the baseline.\n\n"
    "   or: gfi ropt --data FILE --dim D --phi pow:L|poly:A1,.. --select lscv [--R-range LO,HI] [--per-axis]\n"
    "   or: gfi ropt --regress --data FILE --dim D --phi pow:L|poly:A1,.. --select loocv [--R-range LO,HI]\n\n"
    "With --data, the radius minimising least-squares cross-validation of the density\n"
    "estimate (LSCV(R) = int p_hat^2 - 2/(N(N-1)) sum_{i != k} K_R(x_i - x_k)) or the\n"
    "leave-one-out CV of Nadaraya-Watson (mean over rows of |y_i - m_{-i}(x_i)|^2):\n"
    "a log scan over the range; its lowest local minima refined (a finer scan of the\n"
    "bracket, then Brent's method); a scan with several minima doubled until two\n"
    "rounds agree on the minimiser.\n",
    opts, "Columns: n R_opt mise_opt bias2 var h_gauss mise_gauss (NaN for non-mixtures).\n"
          "With --data: n R_opt lscv|cv bound nlocal at_edge evals [nflagged] R1 .. RD\n"
          "(--curve: R lscv|cv, one row per scanned radius).\n"};
  if (cli_parse(&cs, argc, argv)) return 0;
  if (data || select) {
    if (spec) cli_usage("--model", "not with --data (the oracle needs a model, the criteria a sample)");
    if (cli_given("n")) cli_usage("--n", "not with --data (N is the sample's size)");
    if (dir) cli_usage("--dir", "not with --data");
    gfi_opts o;
    gfi_default_opts(&o);
    o.nthreads = nthreads;
    o.tol = tol;
    cli_method(method, &o);
    return ropt_select(data, select, range, per_axis, curve, regress, D, cli_given("dim") > 0, phi,
                       &o, nscan);
  }
  {
    const char *only[] = {"regress", "R-range", "per-axis", "curve", "method", "tol", "nscan"};
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++)
      if (cli_given(only[i])) {
        char o[32];
        snprintf(o, sizeof o, "--%s", only[i]);
        cli_usage(o, "only with --data and --select");
      }
  }
  if (!spec) cli_usage("--model", "required");
  if (!Ns) cli_usage("--n", "required");
  size_t nn;
  double *N = cli_list("--n", Ns, &nn);
  for (size_t i = 0; i < nn; i++)
    if (!(N[i] >= 1) || N[i] > 1e15 || N[i] != floor(N[i]))
      cli_usage("--n", "sample sizes must be integers in 1..1e15, got %g", N[i]);
  gfi_kernel k;
  cli_phi("--phi", phi, &k);
  gfi_model *m = cli_model(spec, D);
  mise_cli_check_model(m, spec);
  double *Rdir = dir ? cli_radii("--dir", dir, D) : NULL;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = nthreads;
  o.resolution = res;
  double *rows = cli_array(nn, 7, sizeof *rows);
  int mixture = gfi_model_get_kind(m) == GFI_MODEL_MIXTURE;
  for (size_t i = 0; i < nn; i++) {
    double r;
    gfi_mise_result a, g;
    cli_check(gfi_ropt(m, &k, N[i], Rdir, &o, &r, &a), "optimal radius");
    double h = NAN;
    g.mise = NAN;
    if (mixture) cli_check(gfi_mise_gauss_hopt(m, N[i], &h, &g), "Gaussian KDE bandwidth");
    double *row = rows + 7 * i;
    row[0] = N[i], row[1] = r * (Rdir ? Rdir[0] : 1.0), row[2] = a.mise, row[3] = a.bias2;
    row[4] = a.var, row[5] = h, row[6] = g.mise;
  }
  cli_header(stdout);
  cli_meta(stdout, "model", "%s (%s), dim %zu", spec, gfi_model_describe(m), D);
  cli_meta(stdout, "kernel", "phi %s", phi);
  if (Rdir) {
    fprintf(stdout, "# direction:");
    for (size_t j = 0; j < D; j++) fprintf(stdout, " %.17g", Rdir[j]);
    fprintf(stdout, " (R_opt is the first axis's radius)\n");
  }
  cli_meta(stdout, "method", "Brent on log R over the exact (Plancherel) MISE, resolution %g", res);
  if (!mixture)
    cli_meta(stdout, "gauss", "h_gauss and mise_gauss not available (the Gaussian KDE's MISE needs a normal-mixture "
             "truth): their columns hold nan");
  /* the Fourier columns must be finite; only the documented Gaussian ones may be nan */
  for (size_t i = 0; i < nn; i++) {
    char what[64];
    snprintf(what, sizeof what, "optimal radius for n = %.0f", rows[7 * i]);
    cli_require_finite(what, 1, 5, rows + 7 * i);
  }
  fputs("# n R_opt mise_opt bias2 var h_gauss mise_gauss\n", stdout);
  gfi_table_write_rows(stdout, nn, 7, rows);
  cli_finish_output(stdout, "standard output");
  free(rows);
  free(N);
  free(Rdir);
  gfi_model_free(m);
  return 0;
}
