/* Density rate checks (Theorems 1, 3a, 3b) against the exact MISE at the
 * optimal radius, with Monte-Carlo checks at small N (gfi_exp/rate_checks.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi_exp/rate_checks.h"

void gfi_exp_drates_default(gfi_exp_drates_params *p) {
  memset(p, 0, sizeof *p);
  p->D = 1;
  p->nmin = p->nmax = p->per_decade = p->fit_decades = p->mc_nmax = -1;
  p->mc_reps = -1;
  p->seed = 1;
  p->slack = 0.02;
}

void gfi_exp_rate_rows_free(gfi_exp_rate_row *rows) { free(rows); }

typedef struct {
  double N, R, mise, bias2, var, mc, mcse;
} point;

#define CHECK(call, what)                                                         \
  do {                                                                            \
    int st_ = (call);                                                             \
    if (st_) {                                                                    \
      st = gfi_exp_fail(e, st_, "%s: %s", (what), gfi_strerror(st_));             \
      goto done;                                                                  \
    }                                                                             \
  } while (0)

static void write_table(FILE *f, const gfi_exp_ctx *ctx, size_t D, double nmin, double nmax, double perdec,
                        double fitdec, double slack, long mcreps, int mcscaled, double mcn,
                        uint64_t seed, const gfi_exp_rate_row *rows, size_t nrows,
                        const gfi_exp_drates_params *p) {
  gfi_exp_header(f, ctx);
  gfi_dat_meta(f, "dim", "%zu", D);
  for (size_t k = 0; k < p->nphi1; k++) { /* the kernels of the rows 1p1, 1p2, ... */
    char key[16];
    snprintf(key, sizeof key, "kernel-1p%zu", k + 1);
    gfi_dat_meta(f, key, "phi %s", p->phi1[k]);
  }
  gfi_dat_meta(f, "sizes", "N = %g..%g, %g per decade; fitted on the last %g decades", nmin, nmax, perdec, fitdec);
  gfi_dat_meta(f, "method", "R* by Brent on log R over the exact (Plancherel) MISE; slopes of log MISE* "
               "and log R* against log N by least squares, 95%% t intervals from the residual scatter");
  gfi_dat_meta(f, "claimed", "exponent of the theorem's rate g(N) (Thm 1, 3b: N^(-2/(D+2)); 3a: "
               "(log N)^(D/alpha)/N supersmooth, its least-squares slope over the same N, "
               "N^(-(beta-1)/(D+beta-1)) ordinary smooth)");
  gfi_dat_meta(f, "classical", "-2s/(2s+D), 2s = 2q or min(2q, 2beta-1), q = order of kappa_l at 0 "
               "(l = 2: 1, l >= 3: 2, l = 1: infinite)");
  gfi_dat_meta(f, "verdict", "faster-than-claimed (hi95 < claimed - slack) / consistent / slower-than-claimed "
               "(lo95 > claimed + slack), slack %g; baseline: no theorem", slack);
  gfi_dat_meta(f, "condition", "met, or the failing hypotheses (the row is measured all the same): l<4 (Thm 1: "
               "sinc^l has m = 1 vanishing moment but int |z|^2 |sinc z|^l dz is infinite), not-C2 (Thm 1: p is not "
               "twice continuously differentiable), beta<=1 (Thm 3a), beta<=3 (Thm 3b: an ordinary smooth truth of "
               "order beta <= 3)");
  gfi_dat_meta(f, "monte-carlo", "%ld replications%s at N <= %g, seed %llu, Plancherel ISE (streamed: "
               "NUFFT or direct sums by cost, tol 1e-12; docs/mise-mc.md)", mcreps,
               mcscaled ? " (above N = 316: that times sqrt(316/N), at least 8)" : "", mcn,
               (unsigned long long)seed);
  fputs("# theorem model dim l class order claimed classical observed lo95 hi95 R_claimed R_observed "
        "n_fit mc_points mc_max_z verdict condition\n", f);
  for (size_t i = 0; i < nrows; i++) {
    const gfi_exp_rate_row *r = rows + i;
    fprintf(f, "%s %s %zu %d %s %g %.6f %.6f %.6f %.6f %.6f %.6f %.6f %zu %zu %.3f %s %s\n", r->name, r->setting,
            r->D, r->l, r->cls == GFI_SUPERSMOOTH ? "supersmooth" : "ordinary", r->order, r->claimed, r->classical,
            r->observed, r->lo95, r->hi95, r->claimed_R, r->observed_R, r->n_fit, r->mc_points,
            r->mc_points ? r->mc_max_z : NAN, gfi_exp_verdict_name(r->verdict), r->condition);
  }
}

int gfi_exp_density_rates(const gfi_exp_drates_params *p, const gfi_exp_ctx *ctx, FILE *table,
                          gfi_exp_rate_row **rows_out, size_t *nrows_out, gfi_exp_err *e) {
  if (rows_out) *rows_out = NULL;
  if (nrows_out) *nrows_out = 0;
  if (!p || !ctx) return gfi_exp_fail(e, GFI_EINVAL, "no parameters");
  int full = p->full != 0;
  size_t D = p->D;
  if (D < 1 || D > 3) return gfi_exp_fail_param(e, GFI_EINVAL, "--dim", "the exact MISE supports D = 1..3");
  double nmin = p->nmin < 0 ? 1e2 : p->nmin, nmax = p->nmax < 0 ? (full ? 1e9 : 1e6) : p->nmax;
  double perdec = p->per_decade < 0 ? (full ? 2 : 1) : p->per_decade;
  double fitdec = p->fit_decades < 0 ? (full ? 4 : 3) : p->fit_decades;
  long mcreps = p->mc_reps < 0 ? (full ? 100 : 40) : p->mc_reps;
  /* full: the Monte-Carlo points reach N = 1e7 on the fast route (streamed
   * ecf), with fewer replications where each costs more (below) */
  double mcn = p->mc_nmax < 0 ? (full ? 1e7 : 1e2) : p->mc_nmax;
  double slack = p->slack;
  if (mcreps == 1) return gfi_exp_fail_param(e, GFI_EINVAL, "--mc", "0 (no check) or >= 2 replications");
  if (!(nmax > nmin)) return gfi_exp_fail_param(e, GFI_EINVAL, "--nmax", "must exceed --nmin");
  if (!(slack >= 0)) return gfi_exp_fail_param(e, GFI_EINVAL, "--slack", "must be >= 0");
  if (!(nmin > 1)) return gfi_exp_fail_param(e, GFI_EINVAL, "--nmin", "must exceed 1");
  /* the exact MISE and its optimal radius are computed up to N = 1e15 (as
   * 'gfi ropt --n'); beyond, the quadrature of the variance term fails */
  if (!(nmax <= 1e15))
    return gfi_exp_fail_param(e, GFI_EINVAL, "--nmax", "%g is above the largest sample size, 1e15", nmax);
  if (!(perdec >= 1)) return gfi_exp_fail_param(e, GFI_EINVAL, "--per-decade", "must be at least 1");
  if (!(fitdec > 0)) return gfi_exp_fail_param(e, GFI_EINVAL, "--fit-decades", "must be > 0");
  gfi_exp_theorem_id th[3] = {GFI_EXP_THM_1, GFI_EXP_THM_3A, GFI_EXP_THM_3B};
  size_t nth = 3;
  if (p->ntheorems) {
    if (p->ntheorems > 3) return gfi_exp_fail_param(e, GFI_EINVAL, "--theorems", "at most 3 theorems");
    nth = p->ntheorems;
    for (size_t t = 0; t < nth; t++) {
      const gfi_exp_theorem *T = gfi_exp_theorem_get(p->theorems[t]);
      if (!T || T->regression)
        return gfi_exp_fail_param(e, GFI_EINVAL, "--theorems", "theorem %s is not a density theorem (1, 3a, 3b)",
                                  T ? T->name : "?");
      th[t] = p->theorems[t];
    }
  }
  /* the (theorem, kernel) rows: Theorem 1 once per power in p->l1, then
   * once per kernel of p->phi1 (rk_text: its text; NULL for a power row) */
  gfi_exp_theorem_id rth[3 + 2 * GFI_EXP_DRATES_MAXL];
  gfi_kernel rk[3 + 2 * GFI_EXP_DRATES_MAXL];
  const char *rk_text[3 + 2 * GFI_EXP_DRATES_MAXL];
  size_t nrt = 0;
  if (p->nl1 > GFI_EXP_DRATES_MAXL)
    return gfi_exp_fail_param(e, GFI_EINVAL, "--l1", "at most %d kernel powers", GFI_EXP_DRATES_MAXL);
  if (p->nphi1 > GFI_EXP_DRATES_MAXL)
    return gfi_exp_fail_param(e, GFI_EINVAL, "--phi1", "at most %d kernels", GFI_EXP_DRATES_MAXL);
  for (size_t t = 0; t < nth; t++) {
    const gfi_exp_theorem *T = gfi_exp_theorem_get(th[t]);
    if (th[t] == GFI_EXP_THM_1 && p->nl1) {
      for (size_t k = 0; k < p->nl1; k++) {
        if (p->l1[k] < 1 || p->l1[k] > 8)
          return gfi_exp_fail_param(e, GFI_EINVAL, "--l1", "kernel power %d is outside 1..8", p->l1[k]);
        rth[nrt] = th[t], rk_text[nrt] = NULL;
        gfi_kernel_pow(&rk[nrt++], p->l1[k]);
      }
    } else {
      rth[nrt] = th[t], rk_text[nrt] = NULL;
      gfi_kernel_pow(&rk[nrt++], T->l_default);
    }
    for (size_t k = 0; th[t] == GFI_EXP_THM_1 && k < p->nphi1; k++) {
      gfi_errinfo ei;
      gfi_errinfo_clear(&ei);
      int s = p->phi1[k] ? gfi_kernel_parse(&rk[nrt], p->phi1[k], &ei) : GFI_EINVAL;
      if (s) return gfi_exp_fail_param(e, s, "--phi1", "'%s': %s", p->phi1[k] ? p->phi1[k] : "(null)",
                                       ei.msg[0] ? ei.msg : gfi_strerror(s));
      if (rk[nrt].kind != GFI_PHI_POW && rk[nrt].kind != GFI_PHI_POLY)
        return gfi_exp_fail_param(e, GFI_EUNSUPPORTED, "--phi1", "'%s': Theorem 1 is checked with a power or "
                                  "polynomial phi", p->phi1[k]);
      rth[nrt] = th[t], rk_text[nrt++] = p->phi1[k];
    }
  }
  const char *models[GFI_EXP_DRATES_MAXMODELS];
  size_t nm = 0;
  if (p->nmodels > GFI_EXP_DRATES_MAXMODELS)
    return gfi_exp_fail_param(e, GFI_EINVAL, "--model", "at most %d models", GFI_EXP_DRATES_MAXMODELS);
  for (size_t a = 0; a < p->nmodels; a++) models[nm++] = p->models[a];
  if (!nm) {
    models[nm++] = "normal";
    models[nm++] = "cauchy";
    models[nm++] = "laplace";
    if (D == 1) models[nm++] = "mw:6";
  }
  int st = GFI_OK;
  gfi_model *mods[GFI_EXP_DRATES_MAXMODELS] = {0};
  point *pts = NULL;
  double *xN = NULL, *Ns = NULL;
  gfi_exp_rate_row *rows = NULL;
  size_t nrows = 0;
  FILE *tf = NULL;
  char tpath[4096] = "";
  for (size_t a = 0; a < nm; a++) {
    gfi_errinfo ei;
    gfi_errinfo_clear(&ei);
    int s = gfi_model_parse(&mods[a], models[a], D, &ei);
    if (s == GFI_ENOMEM) {
      st = gfi_exp_fail(e, s, "out of memory");
      goto done;
    }
    if (s) {
      st = gfi_exp_fail_param(e, s, "--model", "%s", ei.msg[0] ? ei.msg : gfi_strerror(s));
      goto done;
    }
    gfi_smooth_class cl;
    double od;
    if (!gfi_mise_exact_supported(mods[a]) || gfi_model_smoothness(mods[a], &cl, &od)) {
      st = gfi_exp_fail_param(e, GFI_EUNSUPPORTED, "--model",
                              "'%s': rate checks need a normal mixture or Laplace/Cauchy/t factors", models[a]);
      goto done;
    }
  }
  /* N grid: 10^(k / perdec) */
  size_t nN = (size_t)floor(perdec * log10(nmax / nmin) + 1e-9) + 1;
  size_t nrow_max = nrt * nm + nm;
  if (nN < 3) {
    st = gfi_exp_fail_param(e, GFI_EINVAL, "--nmax",
                            "N = %g..%g at %g per decade gives %zu sample size(s); the rate fit needs at least 3: "
                            "raise --nmax (or lower --nmin, or raise --per-decade)", nmin, nmax, perdec, nN);
    goto done;
  }
  if (nN > 4096) {
    st = gfi_exp_fail_param(e, GFI_EINVAL, "--per-decade", "%zu sample sizes: at most 4096", nN);
    goto done;
  }
  Ns = malloc(nN * sizeof *Ns);
  pts = malloc(nN * sizeof *pts);
  xN = malloc(3 * nN * sizeof *xN);
  rows = calloc(nrow_max, sizeof *rows);
  if (!Ns || !pts || !xN || !rows) {
    st = gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nN; i++) Ns[i] = round(nmin * pow(10.0, (double)i / perdec));
  if (p->outdir && (st = gfi_exp_mkdir(p->outdir, e))) goto done;

  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = ctx->nthreads;
  o.parts = 0;
  size_t row = 0;
  gfi_progress pg;
  gfi_progress_start(&pg, ctx->progress, "rates", nrow_max * nN);
  double *xR = xN + nN, *xM = xN + 2 * nN;
  for (size_t t = 0; t <= nrt; t++)
    for (size_t a = 0; a < nm; a++) {
      int gauss = (t == nrt);
      if (gauss && gfi_model_get_kind(mods[a]) != GFI_MODEL_MIXTURE) {
        gfi_progress_add(&pg, nN);
        continue;
      }
      const gfi_exp_theorem *T = gauss ? NULL : gfi_exp_theorem_get(rth[t]);
      /* the row's kernel: a power z^l, or (rk_text) the polynomial of --phi1 */
      gfi_kernel kp;
      if (!gauss) kp = rk[t];
      int l = gauss ? 0 : kp.l;
      const char *ktext = gauss ? NULL : rk_text[t];
      double mcmax = 0;
      size_t mcp = 0;
      for (size_t i = 0; i < nN; i++) {
        point *q = pts + i;
        gfi_mise_result r;
        q->N = Ns[i];
        q->mc = q->mcse = NAN;
        if (gauss) {
          CHECK(gfi_mise_gauss_hopt(mods[a], Ns[i], &q->R, &r), "Gaussian KDE optimal bandwidth");
        } else {
          double ro;
          CHECK(gfi_ropt(mods[a], &kp, Ns[i], NULL, &o, &ro, &r), "optimal radius");
          q->R = ro;
          if (mcreps >= 2 && Ns[i] <= mcn) {
            double R3[3] = {ro, ro, ro};
            gfi_mise_result mr;
            o.base.seed = p->seed + 1000003ULL * row + i;
            size_t reps = (size_t)mcreps;
            if (full && p->mc_reps < 0 && Ns[i] > 316) /* the size's default, not --mc */
              reps = (size_t)fmax(8.0, floor((double)mcreps * sqrt(316.0 / Ns[i])));
            int s = gfi_mise_mc(mods[a], &kp, (size_t)Ns[i], R3, reps, &o, &mr, NULL);
            if (s && s != GFI_EUNSUPPORTED) CHECK(s, "Monte-Carlo MISE");
            if (!s) {
              q->mc = mr.mise;
              q->mcse = mr.se;
              mcmax = fmax(mcmax, fabs(mr.mise - r.mise) / mr.se);
              mcp++;
            }
          }
        }
        q->mise = r.mise;
        q->bias2 = r.bias2;
        q->var = r.var;
        xN[i] = q->N, xR[i] = q->R, xM[i] = q->mise;
        gfi_progress_add(&pg, 1);
      }
      gfi_exp_rate_row *rw = rows + nrows++;
      gfi_linfit fit, fitR;
      gfi_model_smoothness(mods[a], &rw->cls, &rw->order);
      size_t first = 0;
      rw->th = T;
      if (ktext) { /* the k-th kernel of --phi1: 1p1, 1p2, ... */
        size_t kth = 1;
        for (size_t u = 0; u < t; u++) kth += rk_text[u] != NULL;
        snprintf(rw->name, sizeof rw->name, "%sp%zu", T->name, kth);
      } else {
        snprintf(rw->name, sizeof rw->name, "%s", gauss ? "gauss-kde" : T->name);
      }
      snprintf(rw->theorem, sizeof rw->theorem, "%s", gauss ? "baseline" : T->name);
      snprintf(rw->setting, sizeof rw->setting, "%s", models[a]);
      rw->D = D;
      rw->l = l;
      if (!gauss) {
        gfi_exp_rate_fit rc;
        CHECK(gfi_exp_density_rate_fit(rth[t], mods[a], &kp, nN, xN, xR, xM, NULL, fitdec, slack, &rc), "rate fit");
        fit = rc.fit, fitR = rc.fit_R;
        rw->claimed = rc.claimed, rw->claimed_R = rc.claimed_R, rw->classical = rc.classical;
        rw->verdict = rc.verdict;
        snprintf(rw->condition, sizeof rw->condition, "%s", rc.condition);
        first = rc.first;
      } else {
        double lim = Ns[nN - 1] / pow(10.0, fitdec) * (1 - 1e-12);
        while (first < nN && Ns[first] < lim) first++;
        if (nN - first < 3) {
          st = gfi_exp_fail_param(e, GFI_EEMPTY, "--fit-decades",
                                  "%zu sample size(s) in the fitted last %g decade(s) of N = %g..%g; the Gaussian "
                                  "baseline's fit needs at least 3: raise --fit-decades or --per-decade",
                                  nN - first, fitdec, nmin, nmax);
          goto done;
        }
        double *lx = malloc(3 * nN * sizeof *lx);
        if (!lx) CHECK(GFI_ENOMEM, "rate fit");
        double *ly = lx + nN, *lr = lx + 2 * nN;
        for (size_t i = 0; i < nN; i++) lx[i] = log(xN[i]), ly[i] = log(xM[i]), lr[i] = log(xR[i]);
        int s = gfi_fit_line(lx, ly, NULL, first, nN, 0, &fit);
        if (!s) s = gfi_fit_line(lx, lr, NULL, first, nN, 0, &fitR);
        free(lx);
        CHECK(s, "rate fit");
        rw->claimed = rw->claimed_R = NAN;
        rw->classical = gfi_exp_rate_classical(NULL, rw->cls, rw->order, D);
        rw->verdict = GFI_EXP_BASELINE;
        snprintf(rw->condition, sizeof rw->condition, "-");
      }
      rw->observed = fit.slope, rw->lo95 = fit.slope_lo95, rw->hi95 = fit.slope_hi95;
      rw->observed_R = fitR.slope;
      rw->n_fit = nN - first;
      rw->N_min = (size_t)Ns[first], rw->N_max = (size_t)Ns[nN - 1];
      rw->mc_points = mcp;
      rw->mc_max_z = mcp ? mcmax : NAN;
      if (p->outdir) {
        char path[4096];
        FILE *f;
        if (gauss || ktext || l == T->l_default)
          snprintf(path, sizeof path, "%s/rates_%s_%zu.dat", p->outdir, rw->name, a);
        else
          snprintf(path, sizeof path, "%s/rates_%s_l%d_%zu.dat", p->outdir, rw->name, l, a);
        if ((st = gfi_exp_fopen(&f, path, e))) goto done;
        gfi_exp_header(f, ctx);
        gfi_dat_meta(f, "theorem", "%s", rw->name);
        gfi_dat_meta(f, "model", "%s", models[a]);
        gfi_dat_meta(f, "dim", "%zu", D);
        if (gauss) gfi_dat_meta(f, "kernel", "gaussian KDE, H = h^2 I at the MISE-optimal h");
        else if (ktext) gfi_dat_meta(f, "kernel", "phi %s", ktext);
        else gfi_dat_meta(f, "kernel", "phi pow:%d", l);
        gfi_dat_meta(f, "fit", "%.17g %.17g", fit.intercept, fit.slope);
        gfi_dat_meta(f, "fit-range", "%.17g %.17g", Ns[first], Ns[nN - 1]);
        gfi_dat_meta(f, "claimed", "%.17g", rw->claimed);
        gfi_dat_meta(f, "verdict", "%s", gfi_exp_verdict_name(rw->verdict));
        gfi_dat_meta(f, "condition", "%s", rw->condition);
        fputs(gauss ? "# n h_opt mise_opt bias2 var mc_mise mc_se\n" : "# n R_opt mise_opt bias2 var mc_mise mc_se\n", f);
        for (size_t i = 0; i < nN; i++) {
          double v[7] = {pts[i].N, pts[i].R, pts[i].mise, pts[i].bias2, pts[i].var, pts[i].mc, pts[i].mcse};
          gfi_table_write_rows(f, 1, 7, v);
        }
        if ((st = gfi_exp_fclose(f, path, e))) goto done;
      }
      row++;
    }
  gfi_progress_end(&pg);
  if (table) write_table(table, ctx, D, nmin, nmax, perdec, fitdec, slack, mcreps, full && p->mc_reps < 0, mcn, p->seed,
                         rows, nrows, p);
  if (p->outdir) {
    snprintf(tpath, sizeof tpath, "%s/rates_table.dat", p->outdir);
    if ((st = gfi_exp_fopen(&tf, tpath, e))) goto done;
    write_table(tf, ctx, D, nmin, nmax, perdec, fitdec, slack, mcreps, full && p->mc_reps < 0, mcn, p->seed,
                rows, nrows, p);
    st = gfi_exp_fclose(tf, tpath, e);
    tf = NULL;
  }
done:
  gfi_exp_fdiscard(tf);
  for (size_t a = 0; a < nm; a++) gfi_model_free(mods[a]);
  free(pts);
  free(xN);
  free(Ns);
  if (!st && rows_out) {
    *rows_out = rows;
    if (nrows_out) *nrows_out = nrows;
  } else {
    free(rows);
  }
  return st;
}
