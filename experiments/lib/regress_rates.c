/* Regression rate checks (Theorems 2 and 4) by Monte Carlo, with the
 * Gaussian Nadaraya-Watson estimator as the classical baseline
 * (gfi_exp/rate_checks.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi_exp/rate_checks.h"

typedef struct {
  const char *name, *theorem, *design, *truth;
  int th;         /* gfi_exp_theorem_id, or -1 for the classical baseline */
  size_t D;
  int l;          /* 0 = Gaussian */
  int rule;       /* 0: R = c N^(1/(D+4)); 1: R = sqrt(log N / (2 C)); 2: h = c N^(-1/(D+4)) */
  double c;       /* c, or C for rule 1 */
  double box;     /* > 0: evaluation points restricted to |x_j| <= box */
  const char *rule_text;
  const char *condition; /* "met", or the hypothesis the row's setting fails */
} rate_row;

/* Theorem 4's design N(0, 1) and f p are supersmooth with alpha = 2; f p has
 * transform poly(t) exp(-t^2/2) <= C1 exp(-t^2/4), so C = 1/4 and
 * R = (log N / 2C)^(1/2) = sqrt(2 log N). Its bound holds where the design
 * density is bounded below (|x| <= 2); thm4-1d-all measures the whole
 * design, outside that setting. */
static const rate_row ROWS[] = {
  {"thm2-1d", "Thm2", "normal", "poly:0,1,-0.5,0.2", GFI_EXP_THM_2, 1, 6, 0, 1.0, 0, "R=N^(1/5)", "met"},
  {"thm2-2d", "Thm2", "normal:cov=1,0.5,0.5,1", "poly:0,1,-0.5,0.2", GFI_EXP_THM_2, 2, 6, 0, 1.0, 0, "R=N^(1/6)",
   "met"},
  {"thm4-1d", "Thm4", "normal", "poly:0,1,-0.5,0.2", GFI_EXP_THM_4, 1, 1, 1, 0.25, 2.0, "R=sqrt(2logN),|x|<=2",
   "met"},
  {"thm4-1d-all", "Thm4*", "normal", "poly:0,1,-0.5,0.2", GFI_EXP_THM_4, 1, 1, 1, 0.25, 0, "R=sqrt(2logN),all-x",
   "p-not-bounded-below"},
  {"gauss-1d", "classical", "normal", "poly:0,1,-0.5,0.2", -1, 1, 0, 2, 0.5, 0, "h=0.5N^(-1/5)", "-"},
};
#define NROWS (sizeof ROWS / sizeof ROWS[0])
#define NOISE "gauss:0.5"

size_t gfi_exp_rrates_nrows(void) { return NROWS; }
const char *gfi_exp_rrates_row_name(size_t i) { return i < NROWS ? ROWS[i].name : NULL; }

void gfi_exp_rrates_default(gfi_exp_rrates_params *p) {
  memset(p, 0, sizeof *p);
  p->size = "medium";
  p->seed = 1;
}

static void put_row(FILE *f, const gfi_exp_rate_row *r) {
  fprintf(f, "%s %s %d %zu %s %s %s %zu %zu %.4f %.4f %.4f %.4f %.4f %.3g %.4g %s\n", r->name, r->theorem, r->l,
          r->D, r->setting, r->truth, r->rule, r->N_min, r->N_max, r->claimed, r->classical, r->observed, r->lo95,
          r->hi95, r->chi2_dof, r->flagged_frac, gfi_exp_verdict_name(r->verdict));
  fflush(f);
}

int gfi_exp_regress_rates(const gfi_exp_rrates_params *p, const gfi_exp_ctx *ctx, FILE *table,
                          gfi_exp_rate_row **rows_out, size_t *nrows_out, gfi_exp_err *e) {
  if (rows_out) *rows_out = NULL;
  if (nrows_out) *nrows_out = 0;
  if (!p || !ctx) return gfi_exp_fail(e, GFI_EINVAL, "no parameters");
  const char *size = p->size ? p->size : "medium";
  size_t n0, nsizes, dreps, dM;
  if (strcmp(size, "small") == 0) {
    n0 = 250, nsizes = 5, dreps = 40, dM = 200;
  } else if (strcmp(size, "medium") == 0) {
    n0 = 500, nsizes = 7, dreps = 100, dM = 400;
  } else if (strcmp(size, "large") == 0) {
    n0 = 500, nsizes = 9, dreps = 200, dM = 500;
  } else {
    return gfi_exp_fail_param(e, GFI_EINVAL, "--size", "expected small, medium or large, got '%s'", size);
  }
  size_t reps = p->reps ? p->reps : dreps, M = p->points ? p->points : dM;
  if (reps < 3) return gfi_exp_fail_param(e, GFI_EINVAL, "--reps", "must be at least 3");
  if (M > ((size_t)1 << 40) / 2 || reps > ((size_t)1 << 40) / M)
    return gfi_exp_fail_param(e, GFI_EINVAL, "--points", "too many points x replications");
  int use[NROWS];
  for (size_t i = 0; i < NROWS; i++) use[i] = p->rows == NULL;
  if (p->rows) {
    char *copy = strdup(p->rows), *save = NULL;
    if (!copy) return gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      size_t i = 0;
      while (i < NROWS && strcmp(t, ROWS[i].name) != 0) i++;
      if (i == NROWS) {
        gfi_exp_fail_param(e, GFI_EINVAL, "--rows", "unknown row '%s' (see --help)", t);
        free(copy);
        return GFI_EINVAL;
      }
      use[i] = 1;
    }
    free(copy);
  }
  int st = GFI_OK;
  FILE *dat = NULL, *tab = NULL;
  char dpath[4096] = "", tpath[4096] = "";
  double *x = NULL, *pts = NULL, *cand = NULL;
  gfi_model *design = NULL;
  gfi_regfun *truth = NULL;
  gfi_exp_rate_row *rows = calloc(NROWS, sizeof *rows);
  size_t nrows = 0;
  if (!rows) return gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
  if (p->outdir) {
    if ((st = gfi_exp_mkdir(p->outdir, e))) goto done;
    snprintf(dpath, sizeof dpath, "%s/regress_rates.dat", p->outdir);
    if ((st = gfi_exp_fopen(&dat, dpath, e))) goto done;
    snprintf(tpath, sizeof tpath, "%s/regress_rates_table.dat", p->outdir);
    if ((st = gfi_exp_fopen(&tab, tpath, e))) goto done;
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = ctx->nthreads;
  FILE *fs[3] = {table, tab, dat};
  for (int a = 0; a < 3; a++) {
    if (!fs[a]) continue;
    gfi_exp_header(fs[a], ctx);
    gfi_dat_meta(fs[a], "size", "%s: N = %zu * 2^k, k = 0..%zu; %zu replications; %zu design points", size, n0,
                 nsizes - 1, reps, M);
    gfi_dat_meta(fs[a], "seed", "%llu", (unsigned long long)p->seed);
    gfi_dat_meta(fs[a], "noise", "%s", NOISE);
    gfi_dat_meta(fs[a], "measure", "design-weighted integrated MSE (gfi_nw_mse), fit of log MSE on log N "
                                   "weighted by s.e./MSE, 95%% t interval, scaled by chi2/dof when > 1");
  }
  for (int a = 0; a < 2; a++)
    if (fs[a])
      gfi_dat_meta(fs[a], "verdict", "faster-than-claimed (hi95 < claimed) / consistent / slower-than-claimed "
                                     "(lo95 > claimed); baseline: the classical row, no theorem");
  const char *tcols = "# row theorem l D design truth rule N_min N_max claimed classical observed lo95 hi95 "
                      "chi2_dof flagged_frac verdict";
  if (table) fprintf(table, "%s\n", tcols);
  if (tab) fprintf(tab, "%s\n", tcols);
  if (dat) fprintf(dat, "# blocks (gnuplot index) in row order; columns:\n# N R_or_h mse mse_se bias2 var "
                        "flagged_frac fit claimed_ref\n");
  x = malloc(10 * nsizes * sizeof *x);
  pts = malloc(M * 2 * sizeof *pts);
  cand = malloc(M * 2 * sizeof *cand);
  if (!x || !pts || !cand) {
    st = gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
    goto done;
  }
  double *y = x + nsizes, *sg = x + 2 * nsizes, *mse = x + 3 * nsizes, *se = x + 4 * nsizes;
  double *b2 = x + 5 * nsizes, *var = x + 6 * nsizes, *rr = x + 7 * nsizes, *ff = x + 8 * nsizes;
  double *cl = x + 9 * nsizes;
  int block = 0;
  for (size_t ri = 0; ri < NROWS; ri++) {
    if (!use[ri]) continue;
    const rate_row *row = &ROWS[ri];
    const size_t D = row->D;
    gfi_errinfo err;
    gfi_errinfo_clear(&err);
    if ((st = gfi_model_parse(&design, row->design, D, &err)) || (st = gfi_regfun_parse(&truth, row->truth, D, &err))) {
      st = gfi_exp_fail(e, st, "%s: %s", row->name, err.msg[0] ? err.msg : gfi_strerror(st));
      goto done;
    }
    {
      /* M design points, those outside the box rejected (draw in rounds) */
      size_t have = 0, round = 0;
      while (have < M) {
        if (++round > 1000) {
          st = gfi_exp_fail(e, GFI_EEMPTY, "%s: the box keeps no design points", row->name);
          goto done;
        }
        if ((st = gfi_nw_design_points(design, p->seed + round - 1, M, cand))) {
          gfi_exp_fail(e, st, "design points: %s", gfi_strerror(st));
          goto done;
        }
        for (size_t i = 0; i < M && have < M; i++) {
          int in = 1;
          for (size_t j = 0; j < D; j++)
            if (row->box > 0 && fabs(cand[i * D + j]) > row->box) in = 0;
          if (in) memcpy(pts + have++ * D, cand + i * D, D * sizeof *pts);
        }
      }
    }
    gfi_nw_study sd;
    memset(&sd, 0, sizeof sd);
    sd.design = design;
    sd.truth = truth;
    gfi_noise_parse(&sd.noise, NOISE, NULL);
    double R[2], H[4];
    if (row->l) {
      gfi_kernel_pow(&sd.kernel, row->l);
      sd.R = R;
    } else {
      sd.gauss = 1;
      sd.H = H;
    }
    gfi_progress pg;
    char label[64];
    snprintf(label, sizeof label, "regress-rates %s", row->name);
    gfi_progress_start(&pg, ctx->progress, label, nsizes);
    size_t flagged = 0, total = 0;
    for (size_t a = 0; a < nsizes; a++) {
      size_t N = n0 << a;
      sd.N = N;
      double lg = log((double)N), r;
      if (row->rule == 0)
        r = row->c * pow((double)N, 1.0 / (double)(D + 4));
      else if (row->rule == 1)
        r = sqrt(lg / (2 * row->c));
      else
        r = row->c * pow((double)N, -1.0 / (double)(D + 4));
      for (size_t j = 0; j < D; j++) R[j] = r;
      for (size_t j = 0; j < D * D; j++) H[j] = (j % (D + 1) == 0) ? r * r : 0;
      rr[a] = r;
      gfi_nw_mse_result res;
      o.seed = p->seed + N;
      if ((st = gfi_nw_mse(&sd, M, pts, reps, &o, &res, NULL, NULL, NULL, NULL))) {
        gfi_exp_fail(e, st, "%s: %s", row->name, gfi_strerror(st));
        goto done;
      }
      mse[a] = res.mse;
      se[a] = res.mse_se;
      b2[a] = res.bias2;
      var[a] = res.var;
      ff[a] = (double)res.nflagged / (double)(reps * M);
      flagged += res.nflagged;
      total += reps * M;
      x[a] = lg;
      y[a] = log(res.mse);
      sg[a] = res.mse_se > 0 ? res.mse_se / res.mse : 1e-3;
      gfi_progress_add(&pg, 1);
    }
    gfi_progress_end(&pg);
    gfi_exp_rate_row *rw = rows + nrows++;
    gfi_linfit fit;
    int fst = gfi_fit_line(x, y, sg, 0, nsizes, 1, &fit);
    if (fst == GFI_ENOMEM) {
      st = gfi_exp_fail(e, fst, "line fit: %s", gfi_strerror(fst));
      goto done;
    }
    if (fst) fit.intercept = fit.slope = fit.slope_lo95 = fit.slope_hi95 = fit.chi2_dof = NAN;
    /* claimed exponent (the baseline: the classical one) and log g(N) for the reference line */
    const gfi_exp_theorem *T = row->th >= 0 ? gfi_exp_theorem_get((gfi_exp_theorem_id)row->th) : NULL;
    double claimed, classical, lR;
    gfi_smooth_class cls;
    double order;
    if ((st = gfi_model_smoothness(design, &cls, &order))) {
      gfi_exp_fail(e, st, "%s: design smoothness: %s", row->name, gfi_strerror(st));
      goto done;
    }
    classical = gfi_exp_rate_classical(row->l, cls, order, D);
    if (T) {
      double Ns[16];
      for (size_t a = 0; a < nsizes; a++) Ns[a] = (double)(n0 << a);
      if ((st = gfi_exp_claimed_slope(T->id, cls, order, D, 0, nsizes, Ns, &claimed, NULL))) {
        gfi_exp_fail(e, st, "%s: claimed slope: %s", row->name, gfi_strerror(st));
        goto done;
      }
      for (size_t a = 0; a < nsizes; a++) gfi_exp_rate_claim(T->id, cls, order, D, Ns[a], cl + a, &lR);
    } else {
      claimed = classical;
      for (size_t a = 0; a < nsizes; a++) cl[a] = claimed * x[a];
    }
    snprintf(rw->name, sizeof rw->name, "%s", row->name);
    snprintf(rw->theorem, sizeof rw->theorem, "%s", row->theorem);
    rw->th = T;
    snprintf(rw->setting, sizeof rw->setting, "%s", row->design);
    snprintf(rw->truth, sizeof rw->truth, "%s", row->truth);
    snprintf(rw->rule, sizeof rw->rule, "%s", row->rule_text);
    rw->D = D, rw->l = row->l, rw->cls = cls, rw->order = order;
    rw->N_min = n0, rw->N_max = n0 << (nsizes - 1), rw->n_fit = nsizes;
    rw->claimed = claimed, rw->classical = classical;
    rw->observed = fit.slope, rw->lo95 = fit.slope_lo95, rw->hi95 = fit.slope_hi95, rw->chi2_dof = fit.chi2_dof;
    rw->claimed_R = rw->observed_R = rw->mc_max_z = NAN;
    rw->flagged_frac = (double)flagged / (double)total;
    rw->verdict = fst ? GFI_EXP_NOT_MEASURED
                  : T ? gfi_exp_verdict_of(fit.slope_lo95, fit.slope_hi95, claimed, 0)
                      : GFI_EXP_BASELINE;
    snprintf(rw->condition, sizeof rw->condition, "%s", row->condition);
    if (table) put_row(table, rw);
    if (tab) put_row(tab, rw);
    if (dat) {
      if (block++) fprintf(dat, "\n\n");
      fprintf(dat, "# row %s: %s, l = %d, D = %zu, %s; observed %.4f [%.4f, %.4f], claimed %.4f\n", row->name,
              row->theorem, row->l, D, row->rule_text, fit.slope, fit.slope_lo95, fit.slope_hi95, claimed);
      fprintf(dat, "# setup %s: design %s, truth %s, noise %s\n", row->name, row->design, row->truth, NOISE);
      fprintf(dat, "# verdict %s: %s, condition %s\n", row->name, gfi_exp_verdict_name(rw->verdict), rw->condition);
      /* reference line with the claimed slope through the fit at the first size */
      double c0 = fit.intercept + fit.slope * x[0] - cl[0];
      for (size_t a = 0; a < nsizes; a++)
        fprintf(dat, "%zu %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", n0 << a, rr[a], mse[a], se[a], b2[a],
                var[a], ff[a], exp(fit.intercept + fit.slope * x[a]), exp(c0 + cl[a]));
    }
    gfi_model_free(design);
    gfi_regfun_free(truth);
    design = NULL, truth = NULL;
  }
  st = gfi_exp_fclose(dat, dpath, e);
  dat = NULL;
  if (!st) st = gfi_exp_fclose(tab, tpath, e);
  tab = NULL;
done:
  if (dat) fclose(dat);
  if (tab) fclose(tab);
  gfi_model_free(design);
  gfi_regfun_free(truth);
  free(x);
  free(pts);
  free(cand);
  if (!st && rows_out) {
    *rows_out = rows;
    if (nrows_out) *nrows_out = nrows;
  } else {
    free(rows);
  }
  return st;
}
