/* gfi rates: check FourierFormer's rate theorems (1, 3a, 3b) against the
 * exact MISE at the optimal radius, with Monte-Carlo checks at small N. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"

static const char *help =
  "usage: gfi rates [--size quick|full] [--theorems 1,3a,3b] [--model SPEC ..] [--dim D]\n"
  "                 [--out DIR] [options]\n\n"
  "For each theorem and truth: R*(N) and MISE*(N) = min_R MISE (exact, Plancherel;\n"
  "Brent on log R) over N = 10^k, fitted exponents of both (least squares on the\n"
  "last decades, 95% intervals) beside the theorem's claimed exponent, the\n"
  "classical exponent of a kernel of the same order, and a verdict (docs/theory.md\n"
  "section 4). Theorem 1 uses phi = z^4, 3a z^1, 3b z^2. For normal-mixture\n"
  "truths a Gaussian-KDE row (exact MISE at its optimal bandwidth) is the baseline.\n"
  "At N <= --mc-nmax the Monte-Carlo MISE (Plancherel ISE) at R* checks the exact\n"
  "value; mc_max_z is the largest |MC - exact| / se.\n\n"
  "  --size S          quick (default: N = 1e2..1e6, 1 point per decade, fit on the\n"
  "                    last 3 decades, MC 40 reps at N <= 1e2; about a minute on\n"
  "                    2 cores) or full (N = 1e2..1e9, 2 per decade, fit on the\n"
  "                    last 4 decades, MC 100 reps at N <= 316)\n"
  "  --theorems LIST   subset of 1,3a,3b (default all)\n"
  "  --model SPEC      truth (repeatable; default normal, cauchy, laplace and, in\n"
  "                    1-D, mw:6)\n"
  "  --dim D           dimension 1..3 (default 1)\n"
  "  --nmin N --nmax N --per-decade K --fit-decades F   override the size's grid\n"
  "  --mc REPS --mc-nmax N --seed S                     override the MC check\n"
  "                    (--mc 0 skips it)\n"
  "  --slack X         allowance for pre-asymptotic curvature in the verdict (0.02)\n"
  "  --out DIR         also write DIR/rates_table.dat and one series file per row,\n"
  "                    DIR/rates_<theorem>_<k>.dat (plots/mise_rates.gp draws them)\n"
  "  --threads T       threads (default 0 = all cores)\n"
  "  --progress        progress on stderr even when it is not a terminal\n\n"
  "Columns: theorem model dim l class order claimed classical observed lo95 hi95\n"
  "R_claimed R_observed n_fit mc_points mc_max_z verdict condition\n"
  "(condition: 'met', or which hypothesis of the theorem the truth fails,\n"
  "e.g. not-C2 for Theorem 1 on the Laplace density; the row is still measured)\n";

#define MAXM 16

typedef struct {
  double N, R, mise, bias2, var, mc, mcse;
} point;

int cmd_rates(int argc, char **argv) {
  static const struct option opts[] = {
    {"size", required_argument, 0, 'z'},   {"theorems", required_argument, 0, 'T'},
    {"model", required_argument, 0, 'm'},  {"dim", required_argument, 0, 'd'},
    {"nmin", required_argument, 0, 'a'},   {"nmax", required_argument, 0, 'b'},
    {"per-decade", required_argument, 0, 'k'}, {"fit-decades", required_argument, 0, 'f'},
    {"mc", required_argument, 0, 'c'},     {"mc-nmax", required_argument, 0, 'C'},
    {"seed", required_argument, 0, 's'},   {"slack", required_argument, 0, 'S'},
    {"out", required_argument, 0, 'o'},    {"threads", required_argument, 0, 't'},
    {"progress", no_argument, 0, 'P'},     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  const char *size = "quick", *ths = "1,3a,3b", *models[MAXM], *outdir = NULL;
  size_t nm = 0, D = 1;
  double nmin = -1, nmax = -1, perdec = -1, fitdec = -1, mcn = -1, slack = 0.02;
  long mcreps = -1;
  uint64_t seed = 1;
  int nthreads = 0, progress = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'z': size = optarg; break;
      case 'T': ths = optarg; break;
      case 'm':
        if (nm == MAXM) cli_usage("--model", "at most %d models", MAXM);
        if (strpbrk(optarg, " \t")) cli_usage("--model", "no whitespace in a model spec here");
        models[nm++] = optarg;
        break;
      case 'd': D = cli_size("--dim", optarg, 1); break;
      case 'a': nmin = cli_positive("--nmin", optarg); break;
      case 'b': nmax = cli_positive("--nmax", optarg); break;
      case 'k': perdec = (double)cli_size("--per-decade", optarg, 1); break;
      case 'f': fitdec = cli_positive("--fit-decades", optarg); break;
      case 'c': mcreps = (long)cli_size("--mc", optarg, 0); break;
      case 'C': mcn = cli_positive("--mc-nmax", optarg); break;
      case 's': seed = cli_u64("--seed", optarg); break;
      case 'S': slack = cli_double("--slack", optarg); break;
      case 'o': outdir = optarg; break;
      case 't': nthreads = (int)cli_size("--threads", optarg, 0); break;
      case 'P': progress = 1; break;
      case 'h': fputs(help, stdout); return 0;
      case ':': cli_usage(argv[optind - 1], "missing value");
      default: cli_usage(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc) cli_usage(argv[optind], "unexpected argument");
  int full;
  if (!strcmp(size, "quick")) full = 0;
  else if (!strcmp(size, "full")) full = 1;
  else cli_usage("--size", "expected quick or full, got '%s'", size);
  if (D > 3) cli_usage("--dim", "the exact MISE supports D = 1..3");
  if (nmin < 0) nmin = 1e2;
  if (nmax < 0) nmax = full ? 1e9 : 1e6;
  if (perdec < 0) perdec = full ? 2 : 1;
  if (fitdec < 0) fitdec = full ? 4 : 3;
  if (mcreps < 0) mcreps = full ? 100 : 40;
  if (mcreps == 1) cli_usage("--mc", "0 (no check) or >= 2 replications");
  if (mcn < 0) mcn = full ? 316 : 1e2;
  if (!(nmax > nmin)) cli_usage("--nmax", "must exceed --nmin");
  if (slack < 0) cli_usage("--slack", "must be >= 0");
  gfi_theorem th[3];
  size_t nth = 0;
  {
    char *copy = strdup(ths), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      gfi_theorem t = gfi_theorem_parse(tok);
      if (!t) cli_usage("--theorems", "unknown theorem '%s' (expected 1, 3a or 3b)", tok);
      if (nth == 3) cli_usage("--theorems", "at most 3 theorems");
      th[nth++] = t;
    }
    free(copy);
    if (!nth) cli_usage("--theorems", "empty list");
  }
  if (!nm) {
    models[nm++] = "normal";
    models[nm++] = "cauchy";
    models[nm++] = "laplace";
    if (D == 1) models[nm++] = "mw:6";
  }
  gfi_model *mods[MAXM];
  for (size_t a = 0; a < nm; a++) {
    mods[a] = cli_model(models[a], D);
    gfi_smooth_class cl;
    double od;
    if (!gfi_mise_exact_supported(mods[a]) || gfi_model_smoothness(mods[a], &cl, &od))
      cli_usage("--model", "'%s': rate checks need a normal mixture or Laplace/Cauchy/t factors", models[a]);
  }
  /* N grid: 10^(k / perdec) */
  size_t nN = (size_t)floor(perdec * log10(nmax / nmin) + 1e-9) + 1;
  double *Ns = malloc(nN * sizeof *Ns);
  if (!Ns) cli_die(EXIT_RUNTIME, "out of memory");
  for (size_t i = 0; i < nN; i++) Ns[i] = round(nmin * pow(10.0, (double)i / perdec));
  if (outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST)
    cli_die(EXIT_RUNTIME, "cannot create %s: %s", outdir, strerror(errno));

  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = nthreads;
  o.parts = 0;
  size_t nrows = nth * nm + nm, row = 0;
  gfi_progress pg;
  gfi_progress_start(&pg, (progress || isatty(2)) ? stderr : NULL, "rates", nrows * nN);
  point *pts = malloc(nN * sizeof *pts);
  double *xN = malloc(4 * nN * sizeof *xN);
  char (*lines)[512] = malloc(nrows * sizeof *lines);
  if (!pts || !xN || !lines) cli_die(EXIT_RUNTIME, "out of memory");
  double *xR = xN + nN, *xM = xN + 2 * nN;
  size_t nlines = 0;
  for (size_t t = 0; t <= nth; t++)
    for (size_t a = 0; a < nm; a++) {
      int gauss = (t == nth);
      if (gauss && gfi_model_get_kind(mods[a]) != GFI_MODEL_MIXTURE) {
        gfi_progress_add(&pg, nN);
        continue;
      }
      int l = gauss ? 0 : gfi_theorem_default_l(th[t]);
      double mcmax = 0;
      size_t mcp = 0;
      for (size_t i = 0; i < nN; i++) {
        point *p = pts + i;
        gfi_mise_result r;
        p->N = Ns[i];
        p->mc = p->mcse = NAN;
        if (gauss) {
          cli_check(gfi_mise_gauss_hopt(mods[a], Ns[i], &p->R, &r), "Gaussian KDE optimal bandwidth");
        } else {
          double ro;
          cli_check(gfi_ropt(mods[a], l, Ns[i], NULL, &o, &ro, &r), "optimal radius");
          p->R = ro;
          if (mcreps >= 2 && Ns[i] <= mcn) {
            double R3[3] = {ro, ro, ro};
            gfi_mise_result mr;
            o.base.seed = seed + 1000003ULL * row + i;
            int st = gfi_mise_mc(mods[a], l, (size_t)Ns[i], R3, (size_t)mcreps, &o, &mr, NULL);
            if (st && st != GFI_EUNSUPPORTED) cli_check(st, "Monte-Carlo MISE");
            if (!st) {
              p->mc = mr.mise;
              p->mcse = mr.se;
              mcmax = fmax(mcmax, fabs(mr.mise - r.mise) / mr.se);
              mcp++;
            }
          }
        }
        p->mise = r.mise;
        p->bias2 = r.bias2;
        p->var = r.var;
        xN[i] = p->N, xR[i] = p->R, xM[i] = p->mise;
        gfi_progress_add(&pg, 1);
      }
      gfi_rate_check rc;
      gfi_linfit fit, fitR;
      double claimed = NAN, claimedR = NAN, classical;
      const char *verdict = "baseline", *condition = "-";
      gfi_smooth_class cls;
      double order;
      gfi_model_smoothness(mods[a], &cls, &order);
      size_t first = 0;
      if (!gauss) {
        cli_check(gfi_rate_check_fit(th[t], mods[a], l, nN, xN, xR, xM, NULL, fitdec, slack, &rc),
                  "rate fit");
        fit = rc.fit, fitR = rc.fit_R, claimed = rc.claimed, claimedR = rc.claimed_R;
        classical = rc.classical;
        verdict = rc.verdict;
        condition = rc.condition_met ? "met" : "not-C2";
        first = rc.first;
      } else {
        double lim = Ns[nN - 1] / pow(10.0, fitdec) * (1 - 1e-12);
        while (first < nN && Ns[first] < lim) first++;
        if (nN - first < 3) cli_die(EXIT_RUNTIME, "need at least 3 sample sizes in the fitted decades");
        double lx[64], ly[64], lr[64];
        for (size_t i = 0; i < nN && i < 64; i++) lx[i] = log(xN[i]), ly[i] = log(xM[i]), lr[i] = log(xR[i]);
        cli_check(gfi_fit_line(lx, ly, NULL, first, nN, 0, &fit), "rate fit");
        cli_check(gfi_fit_line(lx, lr, NULL, first, nN, 0, &fitR), "rate fit");
        classical = -4.0 / (D + 4.0);
      }
      const char *tn = gauss ? "gauss-kde" : gfi_theorem_name(th[t]);
      char vb[64];
      snprintf(vb, sizeof vb, "%s", verdict);
      for (char *q = vb; *q; q++)
        if (*q == ' ') *q = '_';
      snprintf(lines[nlines++], 512,
               "%s %s %zu %d %s %g %.6f %.6f %.6f %.6f %.6f %.6f %.6f %zu %zu %.3f %s %s", tn, models[a], D, l,
               cls == GFI_SUPERSMOOTH ? "supersmooth" : "ordinary", order, claimed, classical, fit.slope,
               fit.slope_lo95, fit.slope_hi95, claimedR, fitR.slope, nN - first, mcp, mcp ? mcmax : NAN, vb,
               condition);
      if (outdir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rates_%s_%zu.dat", outdir, tn, a);
        FILE *f = fopen(path, "w");
        if (!f) cli_die(EXIT_RUNTIME, "cannot write %s: %s", path, strerror(errno));
        cli_header(f);
        cli_meta(f, "theorem", "%s", tn);
        cli_meta(f, "model", "%s", models[a]);
        cli_meta(f, "dim", "%zu", D);
        cli_meta(f, "kernel", gauss ? "gaussian KDE, H = h^2 I at the MISE-optimal h" : "phi pow:%d", l);
        cli_meta(f, "fit", "%.17g %.17g", fit.intercept, fit.slope);
        cli_meta(f, "fit-range", "%.17g %.17g", Ns[first], Ns[nN - 1]);
        cli_meta(f, "claimed", "%.17g", claimed);
        cli_meta(f, "verdict", "%s", verdict);
        cli_meta(f, "condition", "%s", condition);
        fputs(gauss ? "# n h_opt mise_opt bias2 var mc_mise mc_se\n" : "# n R_opt mise_opt bias2 var mc_mise mc_se\n", f);
        for (size_t i = 0; i < nN; i++) {
          double v[7] = {pts[i].N, pts[i].R, pts[i].mise, pts[i].bias2, pts[i].var, pts[i].mc, pts[i].mcse};
          gfi_table_write_rows(f, 1, 7, v);
        }
        fclose(f);
      }
      row++;
    }
  gfi_progress_end(&pg);
  FILE *outs[2] = {stdout, NULL};
  if (outdir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rates_table.dat", outdir);
    outs[1] = fopen(path, "w");
    if (!outs[1]) cli_die(EXIT_RUNTIME, "cannot write %s: %s", path, strerror(errno));
  }
  for (int k = 0; k < 2 && outs[k]; k++) {
    FILE *f = outs[k];
    cli_header(f);
    cli_meta(f, "dim", "%zu", D);
    cli_meta(f, "sizes", "N = %g..%g, %g per decade; fitted on the last %g decades", nmin, nmax, perdec, fitdec);
    cli_meta(f, "method", "R* by Brent on log R over the exact (Plancherel) MISE; slopes of log MISE* "
             "and log R* against log N by least squares, 95%% t intervals from the residual scatter");
    cli_meta(f, "claimed", "slope of the theorem's rate g(N) over the same N (Thm 1, 3b: N^(-2/(D+2)); "
             "3a: (log N)^(D/alpha)/N supersmooth, N^(-(beta-1)/(D+beta-1)) ordinary smooth)");
    cli_meta(f, "classical", "-2s/(2s+D), 2s = 2q or min(2q, 2beta-1), q = order of kappa_l at 0 "
             "(l = 2: 1, l >= 3: 2, l = 1: infinite)");
    cli_meta(f, "verdict", "faster than claimed / at the claimed rate / SLOWER than claimed, slack %g", slack);
    cli_meta(f, "condition", "met, or not-C2: the truth is not twice continuously differentiable, which "
             "Theorem 1 assumes (its row is measured all the same)");
    cli_meta(f, "monte-carlo", "%ld replications at N <= %g, seed %llu, Plancherel ISE (streamed: "
             "NUFFT or direct sums by cost, tol 1e-12; docs/mise-mc.md)", mcreps, mcn,
             (unsigned long long)seed);
    fputs("# theorem model dim l class order claimed classical observed lo95 hi95 R_claimed R_observed "
          "n_fit mc_points mc_max_z verdict condition\n", f);
    for (size_t i = 0; i < nlines; i++) fprintf(f, "%s\n", lines[i]);
    if (k) fclose(f);
  }
  for (size_t a = 0; a < nm; a++) gfi_model_free(mods[a]);
  free(pts);
  free(xN);
  free(lines);
  free(Ns);
  return 0;
}
