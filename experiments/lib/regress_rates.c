/* Regression rate checks (Theorems 2 and 4) by Monte Carlo, with the
 * Gaussian Nadaraya-Watson estimator as the classical baseline
 * (gfi_exp/rate_checks.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
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
  const char *at; /* NULL: the design-weighted integrated MSE over M design
                     points; else fixed points "x/x/..." (coordinates of a
                     point separated by ','), one rate row per point */
} rate_row;

/* Theorem 4's design N(0, 1) and f p are supersmooth with alpha = 2; f p has
 * transform poly(t) exp(-t^2/2) <= C1 exp(-t^2/4), so C = 1/4 and
 * R = (log N / 2C)^(1/2) = sqrt(2 log N). Its bound holds where the design
 * density is bounded below (|x| <= 2); thm4-1d-all measures the whole
 * design, outside that setting. In D = 2 (design N(0, I), truth a cubic of
 * each axis) the transform of f p is bounded by C1 exp(-|t|^2/4) again, so
 * C = 1/4 on both axes.
 *
 * Theorem 2 bounds the MSE at a point x by a constant over p(x)^2 J(R): the
 * -pt rows measure it at the centre (x = 0, p = 0.399), the shoulder (x = 1,
 * p = 0.242) and the tail (x = 2, p = 0.054) of the N(0, 1) design, one
 * rate per point, and the constant's growth with 1/p(x). */
static const rate_row ROWS[] = {
  {"thm2-1d", "Thm2", "normal", "poly:0,1,-0.5,0.2", GFI_EXP_THM_2, 1, 6, 0, 1.0, 0, "R=N^(1/5)", "met", NULL},
  {"thm2-2d", "Thm2", "normal:cov=1,0.5,0.5,1", "poly:0,1,-0.5,0.2", GFI_EXP_THM_2, 2, 6, 0, 1.0, 0, "R=N^(1/6)",
   "met", NULL},
  {"thm2-1d-pt", "Thm2", "normal", "poly:0,1,-0.5,0.2", GFI_EXP_THM_2, 1, 6, 0, 1.0, 0, "R=N^(1/5),at-x", "met",
   "0/1/2"},
  {"thm4-1d", "Thm4", "normal", "poly:0,1,-0.5,0.2", GFI_EXP_THM_4, 1, 1, 1, 0.25, 2.0, "R=sqrt(2logN),|x|<=2",
   "met", NULL},
  {"thm4-1d-all", "Thm4*", "normal", "poly:0,1,-0.5,0.2", GFI_EXP_THM_4, 1, 1, 1, 0.25, 0, "R=sqrt(2logN),all-x",
   "p-not-bounded-below", NULL},
  {"thm4-2d", "Thm4", "normal", "polysum:0,1,-0.5,0.2", GFI_EXP_THM_4, 2, 1, 1, 0.25, 2.0,
   "R=sqrt(2logN),|x_j|<=2", "met", NULL},
  {"gauss-1d", "classical", "normal", "poly:0,1,-0.5,0.2", -1, 1, 0, 2, 0.5, 0, "h=0.5N^(-1/5)", "-", NULL},
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

/* A row defined on the command line: NAME:key=value;key=value;...
 * (see gfi_exp/rate_checks.h). Its strings point into `buf`. */
typedef struct {
  rate_row r;
  char *buf;
  char rule_text[64];
} defined_row;

static int parse_define(const char *spec, defined_row *d, gfi_exp_err *e) {
  memset(d, 0, sizeof *d);
  const char *P = "--define";
  if (!(d->buf = strdup(spec))) return gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
  char *colon = strchr(d->buf, ':');
  if (!colon || colon == d->buf)
    return gfi_exp_fail_param(e, GFI_EINVAL, P, "'%s': expected NAME:key=value;... (see --help)", spec);
  *colon = '\0';
  rate_row *r = &d->r;
  r->name = d->buf;
  if (strlen(r->name) > 20 || strchr(r->name, ',') || strchr(r->name, '@'))
    return gfi_exp_fail_param(e, GFI_EINVAL, P, "row name '%s': at most 20 characters, no ',' or '@'", r->name);
  r->design = "normal", r->truth = "poly:0,1,-0.5,0.2", r->D = 1, r->th = -2, r->l = -1, r->c = NAN;
  char *save = NULL;
  for (char *t = strtok_r(colon + 1, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(t, '=');
    if (!eq) return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: '%s' is not key=value", r->name, t);
    *eq = '\0';
    const char *k = t, *v = eq + 1;
    char *end = NULL;
    if (strcmp(k, "thm") == 0) {
      if (strcmp(v, "2") == 0) r->th = GFI_EXP_THM_2;
      else if (strcmp(v, "4") == 0) r->th = GFI_EXP_THM_4;
      else if (strcmp(v, "gauss") == 0) r->th = -1;
      else return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: thm=%s: expected 2, 4 or gauss", r->name, v);
    } else if (strcmp(k, "dim") == 0) {
      long D = strtol(v, &end, 10);
      if (end == v || *end || D < 1 || D > 3)
        return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: dim=%s: expected 1, 2 or 3", r->name, v);
      r->D = (size_t)D;
    } else if (strcmp(k, "l") == 0) {
      long l = strtol(v, &end, 10);
      if (end == v || *end || l < 1 || l > 8)
        return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: l=%s: expected 1..8", r->name, v);
      r->l = (int)l;
    } else if (strcmp(k, "c") == 0 || strcmp(k, "box") == 0) {
      double x = strtod(v, &end);
      if (end == v || *end || !(x > 0) || !isfinite(x))
        return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: %s=%s: expected a number > 0", r->name, k, v);
      if (k[0] == 'c') r->c = x;
      else r->box = x;
    } else if (strcmp(k, "design") == 0) {
      r->design = v;
    } else if (strcmp(k, "truth") == 0) {
      r->truth = v;
    } else if (strcmp(k, "at") == 0) {
      r->at = v;
    } else {
      return gfi_exp_fail_param(e, GFI_EINVAL, P,
                                "row %s: unknown key '%s' (thm, dim, l, c, design, truth, box, at)", r->name, k);
    }
  }
  if (r->th == -2) return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: thm= is required", r->name);
  if (r->th == GFI_EXP_THM_2) {
    if (r->l < 0) r->l = 6;
    if (isnan(r->c)) r->c = 1;
    r->rule = 0, r->theorem = "Thm2";
    snprintf(d->rule_text, sizeof d->rule_text, "R=%gN^(1/%zu)", r->c, r->D + 4);
    r->condition = r->l >= 6 ? "met" : "l<6";
  } else if (r->th == GFI_EXP_THM_4) {
    if (r->l > 1) return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: Theorem 4 is for l = 1", r->name);
    r->l = 1;
    if (isnan(r->c)) r->c = 0.25;
    r->rule = 1, r->theorem = "Thm4";
    snprintf(d->rule_text, sizeof d->rule_text, "R=sqrt(logN/(2*%g))", r->c);
    r->condition = (r->box > 0 || r->at) ? "met" : "p-not-bounded-below";
  } else {
    if (r->l > 0) return gfi_exp_fail_param(e, GFI_EINVAL, P, "row %s: thm=gauss takes no l", r->name);
    r->l = 0;
    if (isnan(r->c)) r->c = 0.5;
    r->rule = 2, r->theorem = "classical", r->condition = "-";
    snprintf(d->rule_text, sizeof d->rule_text, "h=%gN^(-1/%zu)", r->c, r->D + 4);
  }
  r->rule_text = d->rule_text;
  return GFI_OK;
}

/* Fixed points "x/x/..." (coordinates separated by ','): count, or fill. */
static int parse_at(const rate_row *row, double *pts, size_t *n, gfi_exp_err *e) {
  const char *s = row->at;
  size_t k = 0;
  while (*s) {
    for (size_t j = 0; j < row->D; j++) {
      char *end = NULL;
      double v = strtod(s, &end);
      if (end == s || !isfinite(v) || (j + 1 < row->D ? *end != ',' : (*end && *end != '/')))
        return gfi_exp_fail_param(e, GFI_EINVAL, "--define",
                                  "row %s: at=%s: expected points x/x/... with %zu coordinates each (',')", row->name,
                                  row->at, row->D);
      if (pts) pts[k * row->D + j] = v;
      s = end + (*end ? 1 : 0);
    }
    k++;
  }
  if (k == 0 || k > 16)
    return gfi_exp_fail_param(e, GFI_EINVAL, "--define", "row %s: at= takes 1 to 16 points", row->name);
  *n = k;
  return GFI_OK;
}

static void put_row(FILE *f, const gfi_exp_rate_row *r) {
  fprintf(f, "%s %s %d %zu %s %s %s %zu %zu %.4f %.4f %.4f %.4f %.4f %.3g %.4g %s\n", r->name, r->theorem, r->l,
          r->D, r->setting, r->truth, r->rule, r->N_min, r->N_max, r->claimed, r->classical, r->observed, r->lo95,
          r->hi95, r->chi2_dof, r->flagged_frac, gfi_exp_verdict_name(r->verdict));
  fflush(f);
}

static void put_point(FILE *f, const gfi_exp_rate_row *r) {
  fprintf(f, "%s %.6g %.6g %.6g %.4f %.4f %.4f %.4f %.6g %.6g %.6g %s\n", r->name, r->point_x[0], r->point_p,
          1 / (r->point_p * r->point_p), r->claimed, r->observed, r->lo95, r->hi95, r->point_C,
          r->point_C * r->point_p, r->point_C * r->point_p * r->point_p, gfi_exp_verdict_name(r->verdict));
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
  if (M > ((size_t)1 << 40) / 2 || reps > ((size_t)1 << 36) / (M > 16 ? M : 16))
    return gfi_exp_fail_param(e, GFI_EINVAL, "--points", "too many points x replications");
  if (p->ndefines > 16) return gfi_exp_fail_param(e, GFI_EINVAL, "--define", "at most 16 rows");
  /* the built-in rows, then the defined ones */
  size_t nall = NROWS + p->ndefines;
  defined_row defs[16];
  const rate_row *all[NROWS + 16];
  int use[NROWS + 16];
  size_t ndefs = 0;
  int st = GFI_OK;
  for (size_t i = 0; i < NROWS; i++) all[i] = ROWS + i, use[i] = p->rows == NULL && p->ndefines == 0;
  for (size_t i = 0; i < p->ndefines; i++) {
    st = parse_define(p->defines[i], defs + i, e);
    ndefs++;
    if (st) goto free_defs;
    for (size_t j = 0; j < NROWS + i; j++)
      if (strcmp(all[j]->name, defs[i].r.name) == 0) {
        st = gfi_exp_fail_param(e, GFI_EINVAL, "--define", "row name '%s' is taken", defs[i].r.name);
        goto free_defs;
      }
    all[NROWS + i] = &defs[i].r, use[NROWS + i] = 1;
  }
  if (p->rows) {
    char *copy = strdup(p->rows), *save = NULL;
    if (!copy) {
      st = gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
      goto free_defs;
    }
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      size_t i = 0;
      while (i < nall && strcmp(t, all[i]->name) != 0) i++;
      if (i == nall) {
        gfi_exp_fail_param(e, GFI_EINVAL, "--rows", "unknown row '%s' (see --help)", t);
        free(copy);
        st = GFI_EINVAL;
        goto free_defs;
      }
      use[i] = 1;
    }
    free(copy);
  }
  /* rate rows: one per integrated row, one per point of a pointwise row */
  size_t cap = 0, npt_max = 0;
  for (size_t i = 0; i < nall; i++) {
    size_t n = 1;
    if (all[i]->at && (st = parse_at(all[i], NULL, &n, e))) goto free_defs;
    if (use[i]) cap += n;
    if (all[i]->at && n * all[i]->D > npt_max) npt_max = n * all[i]->D;
  }
  /* pointwise rows: a few points, so more replications (the MSE at one
   * point is noisier than its integral) */
  size_t reps_pt = reps > ((size_t)1 << 30) ? reps : 4 * reps;
  FILE *dat = NULL, *tab = NULL, *ptf = NULL;
  char dpath[4096] = "", tpath[4096] = "", ppath[4096] = "";
  double *x = NULL, *pts = NULL, *cand = NULL, *pmse = NULL, *pse = NULL;
  gfi_model *design = NULL;
  gfi_regfun *truth = NULL;
  gfi_exp_rate_row *rows = calloc(cap ? cap : 1, sizeof *rows);
  size_t nrows = 0;
  if (!rows) {
    st = gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
    goto free_defs;
  }
  int any_pt = 0;
  for (size_t i = 0; i < nall; i++) any_pt |= use[i] && all[i]->at;
  if (p->outdir) {
    if ((st = gfi_exp_mkdir(p->outdir, e))) goto done;
    snprintf(dpath, sizeof dpath, "%s/regress_rates.dat", p->outdir);
    if ((st = gfi_exp_fopen(&dat, dpath, e))) goto done;
    snprintf(tpath, sizeof tpath, "%s/regress_rates_table.dat", p->outdir);
    if ((st = gfi_exp_fopen(&tab, tpath, e))) goto done;
    if (any_pt) {
      snprintf(ppath, sizeof ppath, "%s/regress_points.dat", p->outdir);
      if ((st = gfi_exp_fopen(&ptf, ppath, e))) goto done;
    }
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = ctx->nthreads;
  FILE *fs[4] = {table, tab, dat, ptf};
  for (int a = 0; a < 4; a++) {
    if (!fs[a]) continue;
    gfi_exp_header(fs[a], ctx);
    gfi_dat_meta(fs[a], "size", "%s: N = %zu * 2^k, k = 0..%zu; %zu replications; %zu design points", size, n0,
                 nsizes - 1, reps, M);
    gfi_dat_meta(fs[a], "seed", "%llu", (unsigned long long)p->seed);
    gfi_dat_meta(fs[a], "noise", "%s", NOISE);
    gfi_dat_meta(fs[a], "measure", "design-weighted integrated MSE (gfi_nw_mse), fit of log MSE on log N "
                                   "weighted by s.e./MSE, 95%% t interval, scaled by chi2/dof when > 1");
    if (any_pt)
      gfi_dat_meta(fs[a], "pointwise", "rows NAME@x: the MSE at the fixed point x over %zu replications, "
                                       "fitted the same way", reps_pt);
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
  if (ptf)
    fprintf(ptf, "# Theorem 2 bounds MSE(x) by C / (p(x)^2 J(R)): C(x) = geometric mean over N of MSE(N, x) / "
                 "claimed rate(N); if C(x) p(x)^2 stays bounded the 1/p^2 law holds\n"
                 "# row x p_x inv_p2 claimed observed lo95 hi95 C_x C_x_p C_x_p2 verdict\n");
  size_t Mmax = M > 16 ? M : 16;
  x = gfi_malloc3(10, nsizes, sizeof *x);
  pts = gfi_malloc3(Mmax, 3, sizeof *pts);
  cand = gfi_malloc3(Mmax, 3, sizeof *cand);
  pmse = gfi_malloc3((npt_max ? npt_max : 1), nsizes, sizeof *pmse);
  pse = gfi_malloc3((npt_max ? npt_max : 1), nsizes, sizeof *pse);
  if (!x || !pts || !cand || !pmse || !pse) {
    st = gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
    goto done;
  }
  double *y = x + nsizes, *sg = x + 2 * nsizes, *mse = x + 3 * nsizes, *se = x + 4 * nsizes;
  double *b2 = x + 5 * nsizes, *var = x + 6 * nsizes, *rr = x + 7 * nsizes, *ff = x + 8 * nsizes;
  double *cl = x + 9 * nsizes;
  int block = 0;
  for (size_t ri = 0; ri < nall; ri++) {
    if (!use[ri]) continue;
    const rate_row *row = all[ri];
    const size_t D = row->D;
    gfi_errinfo err;
    gfi_errinfo_clear(&err);
    if ((st = gfi_model_parse(&design, row->design, D, &err))) {
      st = gfi_exp_fail_param(e, st, ri >= NROWS ? "--define" : "", "%s: design %s: %s", row->name, row->design,
                              err.msg[0] ? err.msg : gfi_strerror(st));
      goto done;
    }
    if ((st = gfi_regfun_parse(&truth, row->truth, D, &err))) {
      st = gfi_exp_fail_param(e, st, ri >= NROWS ? "--define" : "", "%s: truth %s: %s", row->name, row->truth,
                              err.msg[0] ? err.msg : gfi_strerror(st));
      goto done;
    }
    gfi_smooth_class cls;
    double order;
    if ((st = gfi_model_smoothness(design, &cls, &order))) {
      gfi_exp_fail(e, st, "%s: design smoothness: %s", row->name, gfi_strerror(st));
      goto done;
    }
    const char *condition = row->condition;
    if (row->th == GFI_EXP_THM_4 && !(cls == GFI_SUPERSMOOTH && order > 0)) {
      if (ri < NROWS) {
        st = gfi_exp_fail(e, GFI_EINVAL, "%s: Theorem 4 needs a supersmooth design", row->name);
        goto done;
      }
      st = gfi_exp_fail_param(e, GFI_EINVAL, "--define", "%s: Theorem 4 needs a supersmooth design, %s is not",
                              row->name, row->design);
      goto done;
    }
    size_t Mr = M, npt = 0, nrep = reps;
    if (row->at) {
      if ((st = parse_at(row, pts, &npt, e))) goto done;
      Mr = npt, nrep = reps_pt;
    } else {
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
    double R[3], H[9];
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
    double *ptm = npt ? cand : NULL, *pts_se = npt ? cand + 16 : NULL;
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
      if ((st = gfi_nw_mse(&sd, Mr, pts, nrep, &o, &res, NULL, NULL, ptm, pts_se))) {
        gfi_exp_fail(e, st, "%s: %s", row->name, gfi_strerror(st));
        goto done;
      }
      for (size_t k = 0; k < npt; k++) pmse[k * nsizes + a] = ptm[k], pse[k * nsizes + a] = pts_se[k];
      mse[a] = res.mse;
      se[a] = res.mse_se;
      b2[a] = res.bias2;
      var[a] = res.var;
      ff[a] = (double)res.nflagged / (double)(nrep * Mr);
      flagged += res.nflagged;
      total += nrep * Mr;
      x[a] = lg;
      gfi_progress_add(&pg, 1);
    }
    gfi_progress_end(&pg);
    /* claimed exponent (the baseline: the classical one) and log g(N) for the reference line */
    const gfi_exp_theorem *T = row->th >= 0 ? gfi_exp_theorem_get((gfi_exp_theorem_id)row->th) : NULL;
    double claimed, classical, lR;
    classical = gfi_exp_rate_classical(row->l ? &sd.kernel : NULL, cls, order, D);
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
    /* one series (the integrated MSE) or one per point */
    size_t nser = npt ? npt : 1;
    for (size_t k = 0; k < nser; k++) {
      double *m = npt ? pmse + k * nsizes : mse, *s = npt ? pse + k * nsizes : se;
      for (size_t a = 0; a < nsizes; a++) {
        y[a] = log(m[a]);
        sg[a] = s[a] > 0 ? s[a] / m[a] : 1e-3;
      }
      gfi_linfit fit;
      int fst = gfi_fit_line(x, y, sg, 0, nsizes, 1, &fit);
      if (fst == GFI_ENOMEM) {
        st = gfi_exp_fail(e, fst, "line fit: %s", gfi_strerror(fst));
        goto done;
      }
      if (fst) fit.intercept = fit.slope = fit.slope_lo95 = fit.slope_hi95 = fit.chi2_dof = NAN;
      gfi_exp_rate_row *rw = rows + nrows++;
      rw->point_p = rw->point_C = rw->point_gamma = NAN; /* gamma: set below for 3 or more points */
      for (size_t j = 0; j < 3; j++) rw->point_x[j] = NAN;
      if (npt) {
        char xs[48] = "";
        for (size_t j = 0; j < D; j++) {
          size_t u = strlen(xs);
          snprintf(xs + u, sizeof xs - u, "%s%g", j ? "," : "", pts[k * D + j]);
          rw->point_x[j] = pts[k * D + j];
        }
        snprintf(rw->name, sizeof rw->name, "%.20s@%.10s", row->name, xs);
        snprintf(rw->setting, sizeof rw->setting, "%s@x=%s", row->design, xs);
        if ((st = gfi_model_pdf(design, 1, pts + k * D, &rw->point_p))) {
          gfi_exp_fail(e, st, "%s: design density: %s", row->name, gfi_strerror(st));
          goto done;
        }
        double lc = 0;
        for (size_t a = 0; a < nsizes; a++) lc += y[a] - cl[a];
        rw->point_C = exp(lc / (double)nsizes);
      } else {
        snprintf(rw->name, sizeof rw->name, "%s", row->name);
        snprintf(rw->setting, sizeof rw->setting, "%s", row->design);
      }
      snprintf(rw->theorem, sizeof rw->theorem, "%s", row->theorem);
      rw->th = T;
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
      snprintf(rw->condition, sizeof rw->condition, "%s", condition);
      if (table) put_row(table, rw);
      if (tab) put_row(tab, rw);
      if (ptf) put_point(ptf, rw);
      if (dat) {
        if (block++) fprintf(dat, "\n\n");
        fprintf(dat, "# row %s: %s, l = %d, D = %zu, %s; observed %.4f [%.4f, %.4f], claimed %.4f\n", rw->name,
                row->theorem, row->l, D, row->rule_text, fit.slope, fit.slope_lo95, fit.slope_hi95, claimed);
        fprintf(dat, "# setup %s: design %s, truth %s, noise %s\n", rw->name, rw->setting, row->truth, NOISE);
        fprintf(dat, "# verdict %s: %s, condition %s\n", rw->name, gfi_exp_verdict_name(rw->verdict), rw->condition);
        /* reference line with the claimed slope through the fit at the first size */
        double c0 = fit.intercept + fit.slope * x[0] - cl[0];
        for (size_t a = 0; a < nsizes; a++)
          fprintf(dat, "%zu %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", n0 << a, rr[a], m[a], s[a],
                  npt ? NAN : b2[a], npt ? NAN : var[a], ff[a], exp(fit.intercept + fit.slope * x[a]),
                  exp(c0 + cl[a]));
      }
    }
    if (npt >= 3) {
      /* how the constant grows with 1/p(x): log C(x) on log(1/p(x)) */
      double lx[16], ly[16];
      gfi_exp_rate_row *first = rows + nrows - npt;
      for (size_t k = 0; k < npt; k++) lx[k] = -log(first[k].point_p), ly[k] = log(first[k].point_C);
      gfi_linfit g;
      int gst = gfi_fit_line(lx, ly, NULL, 0, npt, 0, &g);
      if (gst == GFI_ENOMEM) {
        st = gfi_exp_fail(e, gst, "line fit: %s", gfi_strerror(gst));
        goto done;
      }
      for (size_t k = 0; k < npt; k++) first[k].point_gamma = gst ? NAN : g.slope;
      FILE *gs[3] = {table, tab, ptf};
      for (int a = 0; a < 3; a++)
        if (gs[a])
          fprintf(gs[a], "# gamma %s: C(x) ~ p(x)^-gamma over %zu points, gamma = %.3f [%.3f, %.3f] "
                         "(Theorem 2's bound allows gamma <= 2)\n", row->name, npt, g.slope, g.slope_lo95,
                  g.slope_hi95);
    }
    gfi_model_free(design);
    gfi_regfun_free(truth);
    design = NULL, truth = NULL;
  }
  st = gfi_exp_fclose(dat, dpath, e);
  dat = NULL;
  if (!st) st = gfi_exp_fclose(tab, tpath, e);
  tab = NULL;
  if (!st) st = gfi_exp_fclose(ptf, ppath, e);
  ptf = NULL;
done:
  gfi_exp_fdiscard(dat);
  gfi_exp_fdiscard(tab);
  gfi_exp_fdiscard(ptf);
  gfi_model_free(design);
  gfi_regfun_free(truth);
  free(x);
  free(pts);
  free(cand);
  free(pmse);
  free(pse);
  if (!st && rows_out) {
    *rows_out = rows;
    if (nrows_out) *nrows_out = nrows;
  } else {
    free(rows);
  }
free_defs:
  for (size_t i = 0; i < ndefs; i++) free(defs[i].buf);
  return st;
}
