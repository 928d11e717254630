/* The FLT study (gfi_exp/flt_study.h): one function per part, each
 * writing its tables and its section of flt_summary.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "alloc.h"
#include "gfi_exp/flt_study.h"
#include "gfi_version.h"

void gfi_exp_flt_default(gfi_exp_flt_params *p) {
  memset(p, 0, sizeof *p);
  p->outdir = "results";
  p->seed = 1;
}

/* What every part needs. */
typedef struct {
  const char *outdir;
  int quick;
  uint64_t seed;
  const gfi_exp_ctx *ctx;
  FILE *summary;
  gfi_exp_err *e;
} flt_run;

/* st = call; on failure record "what: reason" and leave through `fail`. */
#define TRY(what, call)                                                   \
  do {                                                                    \
    int st_ = (call);                                                     \
    if (st_) {                                                            \
      st = gfi_exp_fail(c->e, st_, "%s: %s", (what), gfi_strerror(st_));  \
      goto fail;                                                          \
    }                                                                     \
  } while (0)
#define NEED(ptr)                                                         \
  do {                                                                    \
    if (!(ptr)) {                                                         \
      st = gfi_exp_fail(c->e, GFI_ENOMEM, "out of memory");               \
      goto fail;                                                          \
    }                                                                     \
  } while (0)

static int open_dat(flt_run *c, FILE **f, const char *name, const char *what) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", c->outdir, name);
  int st = gfi_exp_fopen(f, path, c->e);
  if (st) return st;
  gfi_exp_header(*f, c->ctx);
  gfi_dat_meta(*f, "table", "%s", what);
  gfi_dat_meta(*f, "mode", "%s, seed %llu", c->quick ? "quick" : "full", (unsigned long long)c->seed);
  return GFI_OK;
}

static int close_dat(flt_run *c, FILE *f, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", c->outdir, name);
  return gfi_exp_fclose(f, path, c->e);
}

static int rpe_of(flt_run *c, gfi_rpe **r, const char *spec, size_t ell) {
  gfi_errinfo ei;
  gfi_errinfo_clear(&ei);
  int st = gfi_rpe_parse(r, spec, ell, &ei);
  if (st) return gfi_exp_fail(c->e, st, "%s: %s", spec, ei.msg[0] ? ei.msg : gfi_strerror(st));
  return GFI_OK;
}

static int prop_of(flt_run *c, gfi_proposal **p, const char *spec, const gfi_rpe *r) {
  gfi_errinfo ei;
  gfi_errinfo_clear(&ei);
  int st = gfi_proposal_parse(p, spec, r, &ei);
  if (st) return gfi_exp_fail(c->e, st, "%s: %s", spec, ei.msg[0] ? ei.msg : gfi_strerror(st));
  return GFI_OK;
}

static void put(FILE *f, double x) {
  fputc(' ', f);
  gfi_table_put(f, x);
}

static double flt_m2(const gfi_rpe *R, const gfi_proposal *P, double c);

/* ---------------- error vs r ---------------- */
static int err_vs_r(flt_run *c) {
  const char *cases[][2] = {{"gauss:s=4", "optimal"},       {"gauss:s=4", "cauchy:tau=0.1"},
                            {"local:v=4,k=2,C=0.125", "optimal"},   {"local:v=4,k=2,C=0.125", "cauchy:tau=0.1"},
                            {"exp:s=4", "optimal"},         {"box:v=4", "cauchy:tau=0.1"}};
  size_t L = c->quick ? 64 : 256, T = c->quick ? 40 : 400, rmax = c->quick ? 512 : 8192, nr = 0, rs[32];
  for (size_t r = 16; r <= rmax; r *= 2) rs[nr++] = r;
  int st = GFI_OK;
  FILE *f = NULL, *fs = NULL, *summary = c->summary;
  gfi_flt_positions *pos = NULL;
  gfi_rpe *R = NULL;
  gfi_proposal *P = NULL;
  double *out = NULL, *col = NULL;
  if ((st = open_dat(c, &f, "flt_err_vs_r.dat", "max-norm error of the random-feature mask vs r (one block per case)")))
    goto fail;
  gfi_dat_meta(f, "setting", "positions 0..%zu on a line, complex features, %zu trials; eps_thm42 = 2 c sqrt(log(4 L^2/0.01)/r) "
                             "(Thm 4.2 at delta = 0.01, compare with q99); sd_bound = c/sqrt(r) (Thm A.3)", L - 1, T);
  fprintf(summary, "## Max-norm error vs r (L = %zu, %zu trials, complex features)\n\n", L, T);
  fprintf(summary, "| RPE | proposal | c | r | mean | q99 | Thm 4.2 eps (delta 0.01) | slope of log mean vs log r |\n|---|---|---|---|---|---|---|---|\n");
  if ((st = open_dat(c, &fs, "flt_err_slopes.dat", "slope of log mean max-norm error on log r, per case (the "
                     "upper half of the r ladder, weighted by s.e./mean)")))
    goto fail;
  fprintf(fs, "# case c slope slope_se lo95 hi95 n_r   (1/sqrt(r): slope -0.5; meaningful only for finite c)\n");
  TRY("positions", gfi_flt_positions_line(&pos, L));
  NEED(out = gfi_malloc4(T, nr, GFI_FLT_NMETRICS, sizeof *out));
  NEED(col = gfi_malloc2(T, sizeof *col));
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    if ((st = rpe_of(c, &R, cases[ci][0], 1)) || (st = prop_of(c, &P, cases[ci][1], R))) goto fail;
    double cc;
    TRY("c", gfi_rpe_c(R, P, &cc));
    gfi_flt_opts o;
    gfi_flt_default_opts(&o);
    o.base.seed = c->seed;
    TRY("error trials", gfi_flt_error_trials(R, P, pos, nr, rs, T, &o, out));
    fprintf(f, "# case %zu: rpe %s proposal %s c %.17g\n", ci, cases[ci][0], cases[ci][1], cc);
    fprintf(f, "# r mean se q50 q90 q99 c sd_bound eps_thm42 rel_mean\n");
    double lx[32], ly[32], ls[32];
    for (size_t i = 0; i < nr; i++) {
      gfi_summary s, sr;
      gfi_summarize(out + i * GFI_FLT_NMETRICS, T, nr * GFI_FLT_NMETRICS, &s);
      gfi_summarize(out + i * GFI_FLT_NMETRICS + 3, T, nr * GFI_FLT_NMETRICS, &sr);
      for (size_t t = 0; t < T; t++) col[t] = out[(t * nr + i) * GFI_FLT_NMETRICS];
      gsl_sort(col, 1, T);
      double r = (double)rs[i], eps42 = 2 * cc * sqrt(log(4.0 * L * L / 0.01) / r);
      double q99 = gsl_stats_quantile_from_sorted_data(col, 1, T, 0.99);
      gfi_table_put(f, r);
      put(f, s.mean); put(f, s.se); put(f, gsl_stats_quantile_from_sorted_data(col, 1, T, 0.5));
      put(f, gsl_stats_quantile_from_sorted_data(col, 1, T, 0.9)); put(f, q99);
      put(f, cc); put(f, cc / sqrt(r)); put(f, eps42); put(f, sr.mean);
      fputc('\n', f);
      lx[i] = log(r);
      ly[i] = log(s.mean);
      ls[i] = s.se / s.mean;
      if (i == nr - 1) {
        gfi_linfit fit;
        int fst = gfi_fit_line(lx, ly, ls, nr / 2, nr, 1, &fit);
        fprintf(summary, "| %s | %s | %.4g | %.0f | %.4g | %.4g | %.4g | ", cases[ci][0], cases[ci][1], cc, r, s.mean, q99, eps42);
        if (fst == GFI_OK)
          fprintf(summary, "%.3f [%.3f, %.3f] |\n", fit.slope, fit.slope_lo95, fit.slope_hi95);
        else
          fprintf(summary, "n/a |\n");
        if (fst) fit.slope = fit.slope_se = fit.slope_lo95 = fit.slope_hi95 = NAN;
        fprintf(fs, "%zu", ci);
        put(fs, cc); put(fs, fit.slope); put(fs, fit.slope_se); put(fs, fit.slope_lo95); put(fs, fit.slope_hi95);
        fprintf(fs, " %zu   # %s / %s\n", nr - nr / 2, cases[ci][0], cases[ci][1]);
      }
    }
    fprintf(f, "\n\n");
    gfi_proposal_free(P);
    gfi_rpe_free(R);
    P = NULL, R = NULL;
  }
  fprintf(summary, "\nThe slope is fitted on the upper half of the r ladder (weighted, 95%% interval); "
                   "1/sqrt(r) is -0.5. Where c = inf (box RPE) Theorems A.3/4.2 give no bound.\n\n");
  st = close_dat(c, f, "flt_err_vs_r.dat");
  f = NULL;
  if (!st) st = close_dat(c, fs, "flt_err_slopes.dat");
  fs = NULL;
fail:
  gfi_exp_fdiscard(f);
  gfi_exp_fdiscard(fs);
  free(out);
  free(col);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  gfi_flt_positions_free(pos);
  return st;
}

/* ---------------- r* vs L ---------------- */
static int rstar_vs_L(flt_run *c) {
  const char *cases[][2] = {{"gauss:s=4", "optimal"}, {"local:v=4,k=2,C=0.125", "cauchy:tau=0.1"}};
  size_t Ls[] = {16, 64, 256, 1024}, nL = c->quick ? 2 : 4, T = c->quick ? 50 : 300;
  double eps[] = {0.2, 0.1, 0.05}, delta[] = {0.1, 0.01};
  size_t ne = c->quick ? 2 : 3, nd = c->quick ? 1 : 2;
  size_t rmax = c->quick ? 1024 : 16384, nr = 0, rs[128];
  for (size_t j = 0;; j++) {
    size_t r = (size_t)llround(8 * pow(2.0, j / 4.0));
    if (r > rmax) break;
    if (!nr || r > rs[nr - 1]) rs[nr++] = r;
  }
  int st = GFI_OK;
  FILE *f = NULL, *summary = c->summary;
  gfi_flt_positions *pos = NULL;
  gfi_rpe *R = NULL;
  gfi_proposal *P = NULL;
  double *out = NULL, *err = NULL;
  if ((st = open_dat(c, &f, "flt_rstar.dat", "sample complexity r*(eps, delta) vs L against Theorem 4.2 (one block per case)")))
    goto fail;
  gfi_dat_meta(f, "setting", "line positions, complex features, %zu trials, ladder 8 * 2^(j/4) up to %zu; "
                             "r* = smallest rung with P(max error <= eps) >= 1 - delta there and above", T, rmax);
  fprintf(summary, "## Sample complexity r*(eps, delta) vs Theorem 4.2 (%zu trials; r_thm42 = 4 c^2/eps^2 log(4 L^2/delta))\n\n", T);
  fprintf(summary, "| RPE | proposal | L | eps | delta | r* | r_thm42 | r_thm42 / r* |\n|---|---|---|---|---|---|---|---|\n");
  NEED(out = gfi_malloc4(T, nr, GFI_FLT_NMETRICS, sizeof *out));
  NEED(err = gfi_malloc3(T, nr, sizeof *err));
  for (size_t ci = 0; ci < 2; ci++) {
    if ((st = rpe_of(c, &R, cases[ci][0], 1)) || (st = prop_of(c, &P, cases[ci][1], R))) goto fail;
    double cc;
    TRY("c", gfi_rpe_c(R, P, &cc));
    fprintf(f, "# case %zu: rpe %s proposal %s c %.17g\n", ci, cases[ci][0], cases[ci][1], cc);
    fprintf(f, "# L eps delta rstar r_below phat c r_thm42\n");
    for (size_t li = 0; li < nL; li++) {
      TRY("positions", gfi_flt_positions_line(&pos, Ls[li]));
      gfi_flt_opts o;
      gfi_flt_default_opts(&o);
      o.base.seed = c->seed;
      TRY("error trials", gfi_flt_error_trials(R, P, pos, nr, rs, T, &o, out));
      for (size_t t = 0; t < T * nr; t++) err[t] = out[t * GFI_FLT_NMETRICS];
      for (size_t ei = 0; ei < ne; ei++)
        for (size_t di = 0; di < nd; di++) {
          double ph;
          size_t idx = gfi_flt_rstar(err, T, nr, eps[ei], delta[di], &ph);
          double rstar = idx < nr ? (double)rs[idx] : INFINITY, below = idx < nr && idx ? (double)rs[idx - 1] : 0;
          double thm = gfi_flt_thm42_r(cc, eps[ei], delta[di], Ls[li]);
          gfi_table_put(f, (double)Ls[li]);
          put(f, eps[ei]); put(f, delta[di]); put(f, rstar); put(f, below); put(f, ph); put(f, cc); put(f, thm);
          fputc('\n', f);
          fprintf(summary, "| %s | %s | %zu | %g | %g | %.0f | %.0f | %.3g |\n", cases[ci][0], cases[ci][1], Ls[li],
                  eps[ei], delta[di], rstar, thm, thm / rstar);
        }
      gfi_flt_positions_free(pos);
      pos = NULL;
    }
    fprintf(f, "\n\n");
    gfi_proposal_free(P);
    gfi_rpe_free(R);
    P = NULL, R = NULL;
  }
  fprintf(summary, "\nr* is measured (a ladder rung, resolution 2^(1/4)); Theorem 4.2's r is an upper bound: "
                   "every measured r* must lie below it.\n\n");
  st = close_dat(c, f, "flt_rstar.dat");
  f = NULL;
fail:
  gfi_exp_fdiscard(f);
  free(out);
  free(err);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  gfi_flt_positions_free(pos);
  return st;
}

/* ---------------- error vs proposal scale ---------------- */
static int err_vs_tau(flt_run *c) {
  const double s = 1, tau0 = 1 / (2 * M_PI * s);
  size_t L = c->quick ? 32 : 64, T = c->quick ? 40 : 400, r = 256, nt = c->quick ? 9 : 25;
  int st = GFI_OK;
  FILE *f = NULL, *summary = c->summary;
  gfi_flt_positions *pos = NULL;
  gfi_rpe *R = NULL;
  gfi_proposal *P = NULL;
  double *out = NULL, *col = NULL;
  if ((st = open_dat(c, &f, "flt_err_vs_tau.dat", "max-norm error vs the scale tau of a Gaussian proposal, gauss:s=1 RPE")))
    goto fail;
  gfi_dat_meta(f, "setting", "L = %zu on a line, r = %zu, %zu trials, complex features; c = (2 pi s tau) for tau >= "
                             "1/(2 pi s) = %.17g, infinite below", L, r, T, tau0);
  fprintf(f, "# tau c mean se q90 q99 c_over_sqrt_r\n");
  if ((st = rpe_of(c, &R, "gauss:s=1", 1))) goto fail;
  TRY("positions", gfi_flt_positions_line(&pos, L));
  NEED(out = gfi_malloc3(T, GFI_FLT_NMETRICS, sizeof *out));
  NEED(col = gfi_malloc2(T, sizeof *col));
  fprintf(summary, "## Error vs Gaussian proposal scale (gauss:s=1, L = %zu, r = %zu)\n\n| tau | c | mean max error | q99 |\n|---|---|---|---|\n", L, r);
  for (size_t i = 0; i < nt; i++) {
    double tau = 0.06 * pow(0.6 / 0.06, (double)i / (double)(nt - 1));
    TRY("proposal", gfi_proposal_gauss(&P, 1, tau));
    double cc;
    TRY("c", gfi_rpe_c(R, P, &cc));
    gfi_flt_opts o;
    gfi_flt_default_opts(&o);
    o.base.seed = c->seed;
    TRY("trials", gfi_flt_error_trials(R, P, pos, 1, &r, T, &o, out));
    gfi_summary sm;
    gfi_summarize(out, T, GFI_FLT_NMETRICS, &sm);
    for (size_t t = 0; t < T; t++) col[t] = out[t * GFI_FLT_NMETRICS];
    gsl_sort(col, 1, T);
    double q90 = gsl_stats_quantile_from_sorted_data(col, 1, T, 0.9), q99 = gsl_stats_quantile_from_sorted_data(col, 1, T, 0.99);
    gfi_table_put(f, tau);
    put(f, cc); put(f, sm.mean); put(f, sm.se); put(f, q90); put(f, q99); put(f, cc / sqrt((double)r));
    fputc('\n', f);
    fprintf(summary, "| %.4g | %.4g | %.4g | %.4g |\n", tau, cc, sm.mean, q99);
    gfi_proposal_free(P);
    P = NULL;
  }
  fprintf(summary, "\nBelow tau = 1/(2 pi) = %.4f the proposal's tails are lighter than g's: c = inf and the "
                   "error's upper quantiles grow (rare huge weights g/p).\n\n", tau0);
  st = close_dat(c, f, "flt_err_vs_tau.dat");
  f = NULL;
fail:
  gfi_exp_fdiscard(f);
  free(out);
  free(col);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  gfi_flt_positions_free(pos);
  return st;
}

/* ---------------- moments: unbiasedness and Thm A.3 ---------------- */
static int moments(flt_run *c) {
  const char *cases[][2] = {{"gauss:s=2", "gauss:tau=0.2"}, {"local:v=2,k=2", "cauchy:tau=0.3"},
                            {"mixture:w=1,-0.4,0.7;mu=0.3,0,-0.1;s=0.1,0.05,0.08", "gauss:tau=0.2"},
                            {"matern32:s=2", "cauchy:tau=0.2"}, {"local-paper:v=2,k=3", "cauchy:tau=0.3"}};
  size_t L = 16, r = 16, T = c->quick ? 1000 : 20000;
  int st = GFI_OK;
  FILE *f = NULL, *summary = c->summary;
  gfi_flt_positions *pos = NULL;
  gfi_rpe *R = NULL;
  gfi_proposal *P = NULL;
  if ((st = open_dat(c, &f, "flt_moments.dat", "unbiasedness (E N_hat = N) and Thm A.3 (Var <= (c^2 - |f|^2)/r) per case")))
    goto fail;
  gfi_dat_meta(f, "setting", "L = %zu on a line, r = %zu, %zu trials, complex features; z = |mean - f| / se", L, r, T);
  fprintf(f, "# case max_z max_var_over_bound mean_var_over_bound c M2 mean_var_over_exact max_zvar\n"
             "# M2 = int g^2/p (quadrature); exact Var N_hat(d) = (M2 - |f(d)|^2)/r; zvar = (Var - exact) / "
             "(exact sqrt((kappa - 1)/T)), kappa = the kurtosis of |N_hat - f|^2 for a complex normal mean (2)\n");
  fprintf(summary, "## Unbiasedness and the variance (L = %zu, r = %zu, %zu trials)\n\n"
                   "| RPE | proposal | c | max z over differences | max Var / Thm A.3 bound | mean Var / bound | "
                   "M2 = int g^2/p | mean Var / exact | max z of Var |\n|---|---|---|---|---|---|---|---|---|\n", L, r, T);
  TRY("positions", gfi_flt_positions_line(&pos, L));
  size_t nd = gfi_flt_positions_ndiff(pos);
  if (nd > 64) TRY("positions", GFI_EDIM);
  double mr[64], mi[64], v[64], fr[64], fi[64];
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    if ((st = rpe_of(c, &R, cases[ci][0], 1)) || (st = prop_of(c, &P, cases[ci][1], R))) goto fail;
    double cc;
    TRY("c", gfi_rpe_c(R, P, &cc));
    gfi_flt_opts o;
    gfi_flt_default_opts(&o);
    o.base.seed = c->seed;
    TRY("moments", gfi_flt_moments(R, P, pos, r, T, &o, mr, mi, v, fr, fi));
    double mz = 0, mv = 0, av = 0;
    size_t nb = 0;
    for (size_t d = 0; d < nd; d++) {
      double se = fmax(sqrt(v[d] / (double)T), 1e-13);
      mz = fmax(mz, hypot(mr[d] - fr[d], mi[d] - fi[d]) / se);
      double b = (cc * cc - fr[d] * fr[d] - fi[d] * fi[d]) / (double)r;
      if (isfinite(b) && b > 0) {
        mv = fmax(mv, v[d] / b);
        av += v[d] / b;
        nb++;
      }
    }
    av = nb ? av / nb : NAN;
    if (!isfinite(cc)) mv = av = NAN;
    /* the exact variance identity (complex features, ell = 1) */
    double m2 = flt_m2(R, P, cc), ve = NAN, zv = NAN;
    if (isfinite(m2)) {
      ve = 0, zv = 0;
      for (size_t d = 0; d < nd; d++) {
        double ex = (m2 - fr[d] * fr[d] - fi[d] * fi[d]) / (double)r;
        ve += v[d] / ex;
        zv = fmax(zv, fabs(v[d] - ex) / (ex * sqrt(1.0 / (double)T)));
      }
      ve /= (double)nd;
    }
    fprintf(f, "%zu", ci);
    put(f, mz); put(f, mv); put(f, av); put(f, cc); put(f, m2); put(f, ve); put(f, zv);
    fprintf(f, "   # %s / %s\n", cases[ci][0], cases[ci][1]);
    /* no bound (c = inf) or no finite second moment: "-" rather than nan */
    char cv[5][32];
    const double vals[5] = {mv, av, m2, ve, zv};
    for (int k = 0; k < 5; k++) {
      if (isnan(vals[k])) snprintf(cv[k], sizeof cv[k], "-");
      else snprintf(cv[k], sizeof cv[k], k == 2 ? "%.4g" : "%.3g", vals[k]);
    }
    fprintf(summary, "| %s | %s | %.4g | %.3g | %s | %s | %s | %s | %s |\n", cases[ci][0], cases[ci][1], cc, mz,
            cv[0], cv[1], cv[2], cv[3], cv[4]);
    gfi_proposal_free(P);
    gfi_rpe_free(R);
    P = NULL, R = NULL;
  }
  fprintf(summary, "\nz is |mean - f| in standard errors (max over %zu differences: values up to ~3 are chance; - where c = inf leaves no bound and no finite variance to compare with); "
                   "Var / bound <= 1 is Theorem A.3 (c = inf: no bound).\n\n", nd);
  st = close_dat(c, f, "flt_moments.dat");
  f = NULL;
fail:
  gfi_exp_fdiscard(f);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  gfi_flt_positions_free(pos);
  return st;
}

/* M2 = int g^2 / p over R (ell = 1), the second moment of one complex
 * feature term: Var N_hat(d) = (M2 - |f(d)|^2) / r exactly. INFINITY when
 * the integral diverges. */
typedef struct {
  const gfi_rpe *R;
  const gfi_proposal *P;
} m2_ctx;
static double m2_integrand(double x, void *vp) {
  const m2_ctx *m = vp;
  double lg, lp;
  int sg;
  gfi_rpe_log_abs_g(m->R, 1, &x, &lg, &sg);
  if (sg == 0) return 0;
  gfi_proposal_log_pdf(m->P, 1, &x, &lp);
  return exp(2 * lg - lp);
}
static double flt_m2(const gfi_rpe *R, const gfi_proposal *P, double c) {
  if (!isfinite(c) || gfi_rpe_dim(R) != 1) return isfinite(c) ? NAN : INFINITY;
  m2_ctx m = {R, P};
  gsl_function F = {m2_integrand, &m};
  gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
  if (!w) return NAN;
  double v = NAN, err;
  /* the two half-lines; GSL reports failures by status, not by its handler */
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  /* unit pieces over |x| <= X (the integrand oscillates for local RPEs);
   * beyond, the integrand decays at least like x^-2 when c is finite
   * (|g|/p <= c and |g| = O(x^-2) or faster for these families), so the
   * tail is at most X times the last piece's mean: added, it is < 1e-4
   * of the total here */
  const int X = 2000;
  double sum = 0, piece, lo = 0, hi = 0;
  int bad = 0;
  for (int k = -X; k < X && !bad; k++) {
    bad = gsl_integration_qag(&F, k, k + 1, 0, 1e-10, 2000, GSL_INTEG_GAUSS61, w, &piece, &err) != 0;
    sum += piece;
    if (k == -X) lo = piece;
    if (k == X - 1) hi = piece;
  }
  if (!bad) v = sum + X * (lo + hi);
  gsl_set_error_handler(old);
  gsl_integration_workspace_free(w);
  return v;
}

/* ---------------- shapes (FFT) ---------------- */
static int shapes(flt_run *c) {
  const size_t n = c->quick ? 2048 : 8192;
  const double dx = 12.0 / (double)n * 4; /* range +-24 */
  const char *specs[] = {"local:v=1,k=1", "local:v=1,k=2", "local:v=1,k=3", "local:v=1,k=4",
                         "local-paper:v=1,k=2", "local-paper:v=1,k=3"};
  enum { NS = sizeof specs / sizeof specs[0] };
  const size_t ns = NS;
  const size_t n2 = c->quick ? 128 : 256;
  const double dx2 = 0.05;
  const char *s2[] = {"local:v=1,k=1", "local:v=1,k=2", "local:v=1,k=3", "local-paper:v=1,k=2", "local-paper:v=1,k=3"};
  const char *names[] = {"flt_shape2d_local_k1.dat", "flt_shape2d_local_k2.dat", "flt_shape2d_local_k3.dat",
                         "flt_shape2d_paper_k2.dat", "flt_shape2d_paper_k3.dat"};
  int st = GFI_OK;
  FILE *f = NULL, *g = NULL, *summary = c->summary;
  gfi_rpe *R = NULL, *Rs[NS] = {0};
  double *x = NULL, *fr = NULL, *fi = NULL, *x2 = NULL, *g2r = NULL, *g2i = NULL;
  const char *gname = NULL;
  double worst[NS];
  NEED(x = gfi_malloc2(n, sizeof *x));
  NEED(fr = gfi_malloc3(ns, n, sizeof *fr));
  NEED(fi = gfi_malloc3(ns, n, sizeof *fi));
  for (size_t k = 0; k < ns; k++) {
    if ((st = rpe_of(c, &R, specs[k], 1))) goto fail;
    TRY("fft", gfi_rpe_invert_fft(R, n, dx, x, fr + k * n, fi + k * n));
    worst[k] = 0;
    for (size_t j = 0; j < n; j++) {
      double er, ei;
      gfi_rpe_f(R, 1, &x[j], &er, &ei);
      /* away from the jumps of the discontinuous shapes (Gibbs) */
      double ax = fabs(x[j]);
      int near = 0;
      for (int m = 0; m <= 4; m++) near |= fabs(ax - m) < 0.15 && (k == 0 || k >= 4);
      if (!near && ax < 6) worst[k] = fmax(worst[k], hypot(fr[k * n + j] - er, fi[k * n + j] - ei));
    }
    gfi_rpe_free(R);
    R = NULL;
  }
  if ((st = open_dat(c, &f, "flt_shapes_1d.dat", "local RPE shapes f recovered from g by an inverse FFT, with the closed forms")))
    goto fail;
  gfi_dat_meta(f, "setting", "v = 1, C = 1; FFT on %zu points, dx = %.6g; corrected g = (sin(2 pi v xi)/(pi xi))^k, "
                             "printed g = sin^k(2 pi v xi)/(pi xi) (k = 2: f is imaginary, shown Im f)", n, dx);
  fprintf(f, "# x fft_k1 fft_k2 fft_k3 fft_k4 fft_paper_k2_im fft_paper_k3 closed_k1 closed_k2 closed_k3 closed_k4 closed_paper_k2_im closed_paper_k3\n");
  for (size_t k = 0; k < ns; k++)
    if ((st = rpe_of(c, &Rs[k], specs[k], 1))) goto fail;
  for (size_t j = 0; j < n; j++) {
    if (fabs(x[j]) > 5) continue;
    gfi_table_put(f, x[j]);
    for (size_t k = 0; k < ns; k++) put(f, k == 4 ? fi[k * n + j] : fr[k * n + j]);
    for (size_t k = 0; k < ns; k++) {
      double er, ei;
      gfi_rpe_f(Rs[k], 1, &x[j], &er, &ei);
      put(f, k == 4 ? ei : er);
    }
    fputc('\n', f);
  }
  st = close_dat(c, f, "flt_shapes_1d.dat");
  f = NULL;
  if (st) goto fail;
  fprintf(summary, "## Local RPE shapes: inverse FFT of g against the closed-form f (max |difference| on |x| < 6)\n\n"
                   "| family | max abs difference |\n|---|---|\n");
  for (size_t k = 0; k < ns; k++)
    fprintf(summary, "| %s | %.3g%s |\n", specs[k], worst[k], (k == 0 || k >= 4) ? " (away from jumps)" : "");
  fprintf(summary, "\nThe printed higher-order transform (local-paper) inverts to piecewise-constant shapes (boxes for odd k, "
                   "imaginary sign steps for even k), not the continuous compact bump of FLT Figure 4; the k-th power of "
                   "the whole factor gives the B-spline bumps.\n\n");

  /* 2-D surfaces (Figure 4) */
  NEED(x2 = gfi_malloc2(n2, sizeof *x2));
  NEED(g2r = gfi_malloc3(n2, n2, sizeof *g2r));
  NEED(g2i = gfi_malloc3(n2, n2, sizeof *g2i));
  for (size_t k = 0; k < 5; k++) {
    if ((st = rpe_of(c, &R, s2[k], 2))) goto fail;
    TRY("fft 2-D", gfi_rpe_invert_fft(R, n2, dx2, x2, g2r, g2i));
    gname = names[k];
    if ((st = open_dat(c, &g, names[k], "2-D RPE shape f(x1, x2) from g by an inverse FFT (FLT Figure 4)"))) goto fail;
    gfi_dat_meta(g, "rpe", "%s (ell = 2), FFT %zu x %zu, dx = %g", s2[k], n2, n2, dx2);
    fprintf(g, "# x1 x2 fft_re fft_im closed_re closed_im\n");
    for (size_t a = 0; a < n2; a++) {
      if (fabs(x2[a]) > 3.2) continue;
      for (size_t b = 0; b < n2; b++) {
        if (fabs(x2[b]) > 3.2) continue;
        double p[2] = {x2[a], x2[b]}, er, ei;
        gfi_rpe_f(R, 1, p, &er, &ei);
        gfi_table_put(g, p[0]); put(g, p[1]); put(g, g2r[a * n2 + b]); put(g, g2i[a * n2 + b]); put(g, er); put(g, ei);
        fputc('\n', g);
      }
      fputc('\n', g);
    }
    st = close_dat(c, g, gname);
    g = NULL;
    if (st) goto fail;
    gfi_rpe_free(R);
    R = NULL;
  }
fail:
  gfi_exp_fdiscard(f);
  gfi_exp_fdiscard(g);
  gfi_rpe_free(R);
  for (size_t k = 0; k < ns; k++) gfi_rpe_free(Rs[k]);
  free(x); free(fr); free(fi);
  free(x2); free(g2r); free(g2i);
  return st;
}

/* ---------------- attention ---------------- */
static void randn(gsl_rng *g, size_t n, double sd, double *x) {
  for (size_t i = 0; i < n; i++) x[i] = sd * gsl_ran_gaussian_ziggurat(g, 1.0);
}

static double rel_frob(size_t n, const double *a, const double *b) {
  double e = 0, s = 0;
  for (size_t i = 0; i < n; i++) e += (a[i] - b[i]) * (a[i] - b[i]), s += b[i] * b[i];
  return sqrt(e / s);
}

static int attention_error(flt_run *c) {
  size_t L = c->quick ? 64 : 256, d = 16, dv = 16, T = c->quick ? 2 : 5;
  size_t rs[] = {4, 16, 64, 256}, ms[] = {64, 256, 1024, 4096, 16384};
  size_t nrr = c->quick ? 3 : 4, nm = c->quick ? 3 : 5;
  int st = GFI_OK;
  FILE *f = NULL, *summary = c->summary;
  gfi_rpe *R = NULL;
  gfi_proposal *P = NULL;
  gsl_rng *g = NULL;
  double *pos = NULL, *Q = NULL, *K = NULL, *V = NULL, *ex = NULL, *fl = NULL;
  if ((st = rpe_of(c, &R, "gauss:s=4", 1)) || (st = prop_of(c, &P, "optimal", R))) goto fail;
  NEED(g = gfi_rng_stream(c->seed, 1000));
  NEED(pos = gfi_malloc2(L, sizeof *pos));
  NEED(Q = gfi_malloc3(L, d, sizeof *Q));
  NEED(K = gfi_malloc3(L, d, sizeof *K));
  NEED(V = gfi_malloc3(L, dv, sizeof *V));
  NEED(ex = gfi_malloc3(L, dv, sizeof *ex));
  NEED(fl = gfi_malloc3(L, dv, sizeof *fl));
  for (size_t i = 0; i < L; i++) pos[i] = (double)i;
  randn(g, L * d, 0.5, Q);
  randn(g, L * d, 0.5, K);
  randn(g, L * dv, 1, V);
  TRY("exact", gfi_rpe_attention_exact(R, L, 1, pos, d, Q, K, dv, V, 0, 0, ex, NULL));
  if ((st = open_dat(c, &f, "flt_attention_error.dat",
                     "FLT attention (Algorithm 1) vs exact RPE attention: relative Frobenius error")))
    goto fail;
  gfi_dat_meta(f, "setting", "rpe gauss:s=4, proposal optimal, L = %zu on a line, d = dv = %zu, Q, K ~ N(0, 0.25), "
                             "V ~ N(0, 1); mean over %zu draws of features (RNG stream (seed, 1000))", L, d, T);
  fprintf(f, "# r m orthogonal rel_err_mean rel_err_se\n");
  fprintf(summary, "## FLT attention vs exact RPE attention (gauss:s=4, L = %zu, d = %zu): relative Frobenius error\n\n"
                   "| r | m | iid | orthogonal |\n|---|---|---|---|\n", L, d);
  for (size_t ri = 0; ri < nrr; ri++)
    for (size_t mi = 0; mi < nm; mi++) {
      double res[2];
      for (int orth = 0; orth < 2; orth++) {
        double e[8];
        for (size_t t = 0; t < T; t++) {
          TRY("FLT attention", gfi_flt_attention(R, P, L, 1, pos, d, Q, K, dv, V, rs[ri], ms[mi], orth, g, 0, fl, NULL));
          e[t] = rel_frob(L * dv, fl, ex);
        }
        gfi_summary s;
        gfi_summarize(e, T, 1, &s);
        fprintf(f, "%zu %zu %d", rs[ri], ms[mi], orth);
        put(f, s.mean); put(f, s.se);
        fputc('\n', f);
        res[orth] = s.mean;
      }
      fprintf(summary, "| %zu | %zu | %.4g | %.4g |\n", rs[ri], ms[mi], res[0], res[1]);
    }
  fprintf(summary, "\n");
  st = close_dat(c, f, "flt_attention_error.dat");
  f = NULL;
fail:
  gfi_exp_fdiscard(f);
  if (g) gsl_rng_free(g);
  free(pos); free(Q); free(K); free(V); free(ex); free(fl);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  return st;
}

static int attention_scaling(flt_run *c) {
  size_t d = 16, dv = 16, r = 32, m = 128;
  size_t Lmax = c->quick ? 1024 : 65536, Lexact = c->quick ? 1024 : 16384, Lmat = c->quick ? 1024 : 8192;
  int st = GFI_OK;
  FILE *f = NULL, *summary = c->summary;
  gfi_rpe *R = NULL;
  gfi_proposal *P = NULL;
  gsl_rng *g = NULL;
  double *pos = NULL, *Q = NULL, *K = NULL, *V = NULL, *o = NULL, *W = NULL;
  if ((st = rpe_of(c, &R, "gauss:s=4", 1)) || (st = prop_of(c, &P, "optimal", R))) goto fail;
  if ((st = open_dat(c, &f, "flt_attention_scaling.dat",
                     "time and accounted memory vs L: FLT, FAVOR+, exact RPE attention")))
    goto fail;
  gfi_dat_meta(f, "setting", "d = dv = %zu, FLT r = %zu, FAVOR+ m = %zu (orthogonal), %d threads; time = best of 3 "
                             "(1 above L = 4096); bytes = the method's own allocations (inputs excluded); exact "
                             "streamed up to L = %zu, materialised (L x L matrix) up to %zu; NaN = not run",
               d, r, m, gfi_threads_available(), Lexact, Lmat);
  fprintf(f, "# L t_flt t_favor t_exact t_exact_mat bytes_flt bytes_favor bytes_exact bytes_exact_mat\n");
  fprintf(summary, "## Attention time vs L (seconds; d = %zu, r = %zu, m = %zu; provisional on a shared machine)\n\n"
                   "| L | FLT | FAVOR+ | exact (streamed) | exact (L x L) | FLT MB | exact (L x L) MB |\n|---|---|---|---|---|---|---|\n", d, r, m);
  for (size_t L = 256; L <= Lmax; L *= 2) {
    NEED(g = gfi_rng_stream(c->seed, 2000));
    NEED(pos = gfi_malloc2(L, sizeof *pos));
    NEED(Q = gfi_malloc3(L, d, sizeof *Q));
    NEED(K = gfi_malloc3(L, d, sizeof *K));
    NEED(V = gfi_malloc3(L, dv, sizeof *V));
    NEED(o = gfi_malloc3(L, dv, sizeof *o));
    NEED(W = gfi_malloc3(m, d, sizeof *W));
    for (size_t i = 0; i < L; i++) pos[i] = (double)i;
    randn(g, L * d, 0.5, Q);
    randn(g, L * d, 0.5, K);
    randn(g, L * dv, 1, V);
    double t[4] = {NAN, NAN, NAN, NAN};
    size_t by[4] = {0, 0, 0, 0};
    int reps = L > 4096 ? 1 : 3;
    for (int meth = 0; meth < 4; meth++) {
      if ((meth == 2 && L > Lexact) || (meth == 3 && L > Lmat)) continue;
      double best = INFINITY;
      for (int rep = 0; rep < reps; rep++) {
        double t0 = gfi_now();
        int s;
        if (meth == 0) s = gfi_flt_attention(R, P, L, 1, pos, d, Q, K, dv, V, r, m, 1, g, 0, o, &by[0]);
        else if (meth == 1) {
          gfi_favor_draw(g, m, d, 1, W);
          s = gfi_favor_attention(L, d, Q, K, dv, V, m, W, 0, o, &by[1]);
        } else s = gfi_rpe_attention_exact(R, L, 1, pos, d, Q, K, dv, V, meth == 3, 0, o, &by[meth]);
        TRY("attention timing", s);
        best = fmin(best, gfi_now() - t0);
      }
      t[meth] = best;
    }
    gfi_table_put(f, (double)L);
    for (int k = 0; k < 4; k++) put(f, t[k]);
    for (int k = 0; k < 4; k++) put(f, isnan(t[k]) ? NAN : (double)by[k]);
    fputc('\n', f);
    fflush(f);
    /* sizes a method is not run at: "not run" in the table (NaN in the .dat) */
    char cell[4][32], mb[32];
    for (int k = 0; k < 4; k++) {
      if (isnan(t[k])) snprintf(cell[k], sizeof cell[k], "not run");
      else snprintf(cell[k], sizeof cell[k], "%.3g", t[k]);
    }
    if (isnan(t[3])) snprintf(mb, sizeof mb, "not run");
    else snprintf(mb, sizeof mb, "%.3g", by[3] / 1e6);
    fprintf(summary, "| %zu | %s | %s | %s | %s | %.3g | %s |\n", L, cell[0], cell[1], cell[2], cell[3], by[0] / 1e6,
            mb);
    gsl_rng_free(g);
    g = NULL;
    free(pos); free(Q); free(K); free(V); free(o); free(W);
    pos = Q = K = V = o = W = NULL;
  }
  fprintf(summary, "\n");
  st = close_dat(c, f, "flt_attention_scaling.dat");
  f = NULL;
fail:
  gfi_exp_fdiscard(f);
  if (g) gsl_rng_free(g);
  free(pos); free(Q); free(K); free(V); free(o); free(W);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  return st;
}

/* ---------------- FLT's own configurations ---------------- */

/* One block of flt_paper.dat per case: the max-norm error over trials at
 * each r, c, Theorem A.3's sd and Theorem 4.2's eps (inf when c is). */
typedef struct {
  const char *setting, *rpe, *proposal;
} paper_case;

static int paper_block(flt_run *c, FILE *f, FILE *summary, const paper_case *pc, size_t ell,
                       const gfi_flt_positions *pos, const size_t *rs, size_t nr, size_t T, int *block) {
  int st = GFI_OK;
  gfi_rpe *R = NULL;
  gfi_proposal *P = NULL;
  double *out = NULL, *col = NULL;
  size_t L = gfi_flt_positions_L(pos);
  if ((st = rpe_of(c, &R, pc->rpe, ell)) || (st = prop_of(c, &P, pc->proposal, R))) goto fail;
  double cc;
  TRY("c", gfi_rpe_c(R, P, &cc));
  NEED(out = gfi_malloc4(T, nr, GFI_FLT_NMETRICS, sizeof *out));
  NEED(col = gfi_malloc2(T, sizeof *col));
  gfi_flt_opts o;
  gfi_flt_default_opts(&o);
  o.base.seed = c->seed;
  TRY("error trials", gfi_flt_error_trials(R, P, pos, nr, rs, T, &o, out));
  if ((*block)++) fprintf(f, "\n\n");
  fprintf(f, "# case %d: %s | rpe %s | proposal %s | ell %zu | L %zu | c %.6g\n", *block - 1, pc->setting, pc->rpe,
          pc->proposal, ell, L, cc);
  double lx[32], ly[32], ls[32], m0 = 0;
  for (size_t i = 0; i < nr; i++) {
    gfi_summary sm;
    gfi_summarize(out + i * GFI_FLT_NMETRICS, T, nr * GFI_FLT_NMETRICS, &sm);
    if (i == 0) m0 = sm.mean;
    for (size_t t = 0; t < T; t++) col[t] = out[(t * nr + i) * GFI_FLT_NMETRICS];
    gsl_sort(col, 1, T);
    double r = (double)rs[i], q99 = gsl_stats_quantile_from_sorted_data(col, 1, T, 0.99);
    double eps42 = 2 * cc * sqrt(log(4.0 * (double)L * (double)L / 0.01) / r);
    gfi_table_put(f, r);
    put(f, sm.mean); put(f, sm.se); put(f, q99); put(f, cc); put(f, cc / sqrt(r)); put(f, eps42);
    put(f, m0 * sqrt((double)rs[0] / r));
    fputc('\n', f);
    lx[i] = log(r), ly[i] = log(sm.mean), ls[i] = sm.se / sm.mean;
  }
  gfi_linfit fit;
  int fst = gfi_fit_line(lx, ly, ls, 0, nr, 1, &fit);
  if (fst == GFI_ENOMEM) TRY("fit", fst);
  char sl[96];
  if (fst) snprintf(sl, sizeof sl, "n/a");
  else snprintf(sl, sizeof sl, "%.3f [%.3f, %.3f]", fit.slope, fit.slope_lo95, fit.slope_hi95);
  /* the errors at the r values FLT reports (16, 32, 64) */
  char errs[160] = "";
  for (size_t i = 0; i < nr && rs[i] <= 64; i++) {
    gfi_summary sm;
    gfi_summarize(out + i * GFI_FLT_NMETRICS, T, nr * GFI_FLT_NMETRICS, &sm);
    size_t u = strlen(errs);
    snprintf(errs + u, sizeof errs - u, "%s%.3g", u ? " / " : "", sm.mean);
  }
  char eps[64];
  double eps64 = 2 * cc * sqrt(log(4.0 * (double)L * (double)L / 0.01) / 64.0);
  if (isfinite(cc)) snprintf(eps, sizeof eps, "%.3g", eps64);
  else snprintf(eps, sizeof eps, "none (c = inf)");
  fprintf(summary, "| %s | %s | %s | %zu | %.4g | %s | %s | %s |\n", pc->setting, pc->rpe, pc->proposal, L, cc, errs, eps,
          sl);
fail:
  free(out);
  free(col);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
  return st;
}

static int paper(flt_run *c) {
  int st = GFI_OK;
  FILE *f = NULL, *summary = c->summary;
  gfi_flt_positions *pos = NULL;
  double *cloud = NULL;
  size_t T = c->quick ? 30 : 300, rs[16], nr = 0;
  for (size_t r = 16; r <= (c->quick ? 256u : 1024u); r *= 2) rs[nr++] = r;
  int block = 0;
  if ((st = open_dat(c, &f, "flt_paper.dat", "FLT's own configurations: max-norm error of the RPE mask vs r")))
    goto fail;
  gfi_dat_meta(f, "setting", "%zu trials per case, complex features, r = 16 .. %zu; eps_thm42 = 2 c sqrt(log(4 L^2 / "
                             "0.01) / r) (Theorem 4.2 at delta = 0.01); sd_bound = c / sqrt(r) (Theorem A.3)",
               T, rs[nr - 1]);
  fprintf(f, "# r mean se q99 c sd_bound eps_thm42 half_ref (the first mean times (r0/r)^(1/2))\n");
  fprintf(summary,
          "## FLT's own configurations\n\nThe settings of the FLT paper: language modelling with L = 512 positions "
          "on a line and a N(0, 1) proposal with r = 16, 32, 64 features; 3-D molecular point clouds with "
          "Gaussian-basis-function RPEs (ell = 3); sums of boxes with per-axis orders k_j (its eq. 20-21) on a 2-D "
          "grid. Max-norm error of the random-feature mask over %zu trials; the slope of log mean error on "
          "log r over r = 16..%zu. Theorems A.3 and 4.2 bound the error through c = sup |g|/p: **where c = inf "
          "they give no guarantee at all**, whatever the measured error.\n\n"
          "| setting | RPE | proposal | L | c | mean error at r = 16 / 32 / 64 | Thm 4.2 eps at r = 64 "
          "(delta 0.01) | slope [95%%] |\n|---|---|---|---|---|---|---|---|\n",
          T, rs[nr - 1]);
  /* language modelling: L = 512, p = N(0, 1) */
  static const paper_case lm[] = {
    {"LM, L=512", "mixture:w=1;mu=0;s=0.5", "gauss:tau=1"},
    {"LM, L=512", "mixture:w=0.7,0.3;mu=0.1,-0.1;s=0.3,0.6", "gauss:tau=1"},
    {"LM, L=512", "mixture:w=1;mu=0;s=2", "gauss:tau=1"},
    {"LM, L=512", "local:v=4,k=2,C=0.125", "gauss:tau=1"},
    {"LM, L=512", "box:v=4,C=0.125", "gauss:tau=1"},
  };
  TRY("positions", gfi_flt_positions_line(&pos, 512));
  for (size_t i = 0; i < sizeof lm / sizeof lm[0]; i++)
    if ((st = paper_block(c, f, summary, lm + i, 1, pos, rs, nr, T, &block))) goto fail;
  gfi_flt_positions_free(pos);
  pos = NULL;
  /* molecules: a point cloud of atoms (uniform in a 6 x 6 x 6 box, seeded), GBF RPEs */
  size_t La = c->quick ? 24 : 64;
  NEED(cloud = gfi_malloc3(La, 3, sizeof *cloud));
  {
    gsl_rng *g = gfi_rng_stream(c->seed, 7);
    NEED(g);
    for (size_t i = 0; i < La * 3; i++) cloud[i] = 6 * gsl_rng_uniform(g);
    gsl_rng_free(g);
  }
  TRY("positions", gfi_flt_positions_points(&pos, La, 3, cloud));
  static const paper_case mol[] = {
    {"molecule, ell=3", "gbf:w=1,0.5,0.25;s=0.5,1,2", "optimal"},
    {"molecule, ell=3", "gbf:w=1,0.5,0.25;s=0.5,1,2", "gauss:tau=1"},
    {"molecule, ell=3", "gbf:w=1,0.5,0.25;s=0.05,1,2", "gauss:tau=1"},
  };
  for (size_t i = 0; i < sizeof mol / sizeof mol[0]; i++)
    if ((st = paper_block(c, f, summary, mol + i, 3, pos, rs, nr, T, &block))) goto fail;
  gfi_flt_positions_free(pos);
  pos = NULL;
  /* sums of boxes with per-axis orders on an 8 x 8 grid */
  static const paper_case bx[] = {
    {"boxes, 8x8 grid", "boxes:C=1,0.5;v=2,1,1,3;k=2,2", "optimal"},
    {"boxes, 8x8 grid", "boxes:C=1,0.5;v=2,1,1,3;k=2,2", "cauchy:tau=0.2"},
    {"boxes, 8x8 grid", "boxes:C=1,0.5;v=2,1,1,3;k=2,1", "cauchy:tau=0.2"},
    {"boxes, 8x8 grid", "boxes:C=1,0.5;v=2,1,1,3;k=2,1", "gauss:tau=1"},
  };
  TRY("positions", gfi_flt_positions_grid(&pos, 8, 8));
  for (size_t i = 0; i < sizeof bx / sizeof bx[0]; i++)
    if ((st = paper_block(c, f, summary, bx + i, 2, pos, rs, nr, T, &block))) goto fail;
  fprintf(summary,
          "\nc is finite only when the proposal's tails are at least as heavy as |g|'s: a N(0, 1) proposal covers a "
          "Gaussian-mixture g narrower than itself (s <= 1) but not a wider one (s = 2), nor any local or box RPE "
          "(|g| ~ |xi|^-k); a Cauchy proposal decays like |xi|^-(1+ell), so along an axis it covers orders k_j >= "
          "1 + ell only: in 2-D neither k = (2, 2) nor a box of order 1 on one axis. In those rows the error still falls with r and often stays small at r = 16..64, but no "
          "theorem of the paper says so: its guarantee is void there, and the slope can be slower than -1/2.\n\n");
  st = close_dat(c, f, "flt_paper.dat");
  f = NULL;
fail:
  gfi_exp_fdiscard(f);
  free(cloud);
  gfi_flt_positions_free(pos);
  return st;
}

int gfi_exp_flt_study(const gfi_exp_flt_params *p, const gfi_exp_ctx *ctx, gfi_exp_err *e) {
  if (!p || !ctx || !p->outdir) return gfi_exp_fail(e, GFI_EINVAL, "no parameters");
  int st = gfi_exp_mkdir(p->outdir, e);
  if (st) return st;
  flt_run c = {p->outdir, p->quick != 0, p->seed, ctx, NULL, e};
  char path[4096];
  snprintf(path, sizeof path, "%s/flt_summary.md", p->outdir);
  if ((st = gfi_exp_fopen(&c.summary, path, e))) return st;
  fprintf(c.summary, "# FLT study (%s mode, seed %llu, gfi %s, git %s, %d threads)\n\n", c.quick ? "quick" : "full",
          (unsigned long long)c.seed, GFI_VERSION, GFI_GIT_REVISION, gfi_threads_available());
  static const struct {
    const char *name;
    int (*fn)(flt_run *);
  } parts[] = {{"error", err_vs_r},   {"rstar", rstar_vs_L},         {"tau", err_vs_tau},
               {"moments", moments},  {"shapes", shapes},            {"attention", attention_error},
               {"scaling", attention_scaling}, {"paper", paper}};
  const size_t nparts = sizeof parts / sizeof parts[0];
  gfi_progress pg;
  gfi_progress_start(&pg, ctx->live, "FLT study, parts", nparts);
  for (size_t i = 0; !st && i < nparts; i++) {
    if (p->only && !strstr(p->only, parts[i].name)) {
      gfi_progress_add(&pg, 1);
      continue;
    }
    double t0 = gfi_now();
    st = parts[i].fn(&c);
    fflush(c.summary);
    if (!st && ctx->progress) fprintf(ctx->progress, "flt_study: %-10s %.1f s\n", parts[i].name, gfi_now() - t0);
    gfi_progress_add(&pg, 1);
  }
  if (!st) gfi_progress_end(&pg);
  else if (ctx->live) fputc('\n', ctx->live);
  if (st) {
    gfi_exp_fdiscard(c.summary);
    return st;
  }
  return gfi_exp_fclose(c.summary, path, e);
}
