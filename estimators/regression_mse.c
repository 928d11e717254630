/* Monte-Carlo MSE of Nadaraya-Watson estimators (gfi/regression_mse.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/regression.h"
#include "gfi/regression_mse.h"
#include "gfi/rng.h"
#include "gfi/stats.h"
#include "alloc.h"

int gfi_nw_design_points(const gfi_model *design, uint64_t seed, size_t M, double *points) {
  if (!design || !points) return GFI_EINVAL;
  gsl_rng *r = gfi_rng_stream(seed, GFI_NW_POINTS_STREAM);
  if (!r) return GFI_ENOMEM;
  int st = gfi_model_sample(design, r, M, points);
  gsl_rng_free(r);
  return st;
}

typedef struct {
  const gfi_nw_study *s;
  size_t M, D;
  const double *points;
} rep_ctx;

/* One replication: draw the data, fit, write f_hat at the M points (NaN
 * where flagged). */
static int one_rep(size_t k, gsl_rng *r, double *out, void *vp) {
  (void)k;
  const rep_ctx *c = vp;
  const gfi_nw_study *s = c->s;
  size_t N = s->N, D = c->D;
  double *x = gfi_malloc3(N, D, sizeof *x), *y = gfi_malloc2(N, sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    return GFI_ENOMEM;
  }
  int st = gfi_regress_sample(s->design, s->truth, &s->noise, r, N, x, y);
  gfi_nw_plan *p = NULL;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 1;
  if (!st)
    st = s->gauss ? gfi_nw_plan_gauss(&p, N, D, 1, x, y, s->H, &o)
                  : gfi_nw_plan_fourier(&p, &s->kernel, N, D, 1, x, y, s->R, &o);
  if (!st && s->denom_tol > 0) st = gfi_nw_set_denom_tol(p, s->denom_tol);
  if (!st) {
    st = gfi_nw_eval(p, c->M, c->points, out, NULL);
    if (st == GFI_EDENOM) st = GFI_OK;
  }
  gfi_nw_destroy(p);
  free(x);
  free(y);
  return st;
}

int gfi_nw_mse(const gfi_nw_study *s, size_t M, const double *points, size_t nreps,
               const gfi_opts *opts, gfi_nw_mse_result *res, double *pt_bias, double *pt_var,
               double *pt_mse, double *pt_mse_se) {
  if (!s || !res || !points || !s->design || !s->truth) return GFI_EINVAL;
  if (M == 0 || nreps == 0 || s->N == 0) return GFI_EEMPTY;
  size_t D = gfi_model_dim(s->design);
  if (gfi_regfun_dim(s->truth) != D) return GFI_EDIM;
  if (s->gauss ? !s->H : !s->R) return GFI_EINVAL;
  if (nreps > ((size_t)1 << 40) / M) return GFI_EDIM;
  memset(res, 0, sizeof *res);
  double *est = gfi_malloc3(nreps, M, sizeof *est), *f = gfi_malloc2(M, sizeof *f);
  double *ise = gfi_malloc2(nreps, sizeof *ise);
  if (!est || !f || !ise) {
    free(est);
    free(f);
    free(ise);
    return GFI_ENOMEM;
  }
  int st = gfi_regfun_eval(s->truth, M, points, f);
  rep_ctx c = {s, M, D, points};
  if (!st) st = gfi_replicate(nreps, M, opts, one_rep, &c, est);
  if (st) {
    free(est);
    free(f);
    free(ise);
    return st;
  }
  /* per replication: mean squared error over its unflagged points */
  size_t nflag = 0, nise = 0;
  for (size_t k = 0; k < nreps; k++) {
    double s2 = 0;
    size_t n = 0;
    for (size_t m = 0; m < M; m++) {
      double e = est[k * M + m];
      if (isnan(e)) {
        nflag++;
        continue;
      }
      s2 += (e - f[m]) * (e - f[m]);
      n++;
    }
    if (n) ise[nise++] = s2 / (double)n;
  }
  gfi_summary sm;
  if (nise == 0) {
    st = GFI_EDENOM;
  } else {
    st = gfi_summarize(ise, nise, 1, &sm);
  }
  if (!st) {
    res->mse = sm.mean;
    res->mse_se = sm.se;
  }
  /* per point: bias, variance, MSE over the unflagged replications */
  double b2 = 0, vs = 0;
  size_t nb = 0;
  for (size_t m = 0; m < M && !st; m++) {
    double mean = 0;
    size_t n = 0;
    for (size_t k = 0; k < nreps; k++) {
      double e = est[k * M + m];
      if (isnan(e)) continue;
      mean += e;
      n++;
    }
    double bias = NAN, var = NAN, mse = NAN, se = NAN;
    if (n) {
      mean /= (double)n;
      double v = 0, ms = 0, ms2 = 0;
      for (size_t k = 0; k < nreps; k++) {
        double e = est[k * M + m];
        if (isnan(e)) continue;
        v += (e - mean) * (e - mean);
        double d2 = (e - f[m]) * (e - f[m]);
        ms += d2;
        ms2 += d2 * d2;
      }
      bias = mean - f[m];
      var = n > 1 ? v / (double)(n - 1) : 0;
      mse = ms / (double)n;
      double vm = n > 1 ? (ms2 / (double)n - mse * mse) * (double)n / (double)(n - 1) : 0;
      se = n > 1 ? sqrt(vm > 0 ? vm / (double)n : 0) : 0;
      b2 += bias * bias;
      vs += var;
      nb++;
    }
    if (pt_bias) pt_bias[m] = bias;
    if (pt_var) pt_var[m] = var;
    if (pt_mse) pt_mse[m] = mse;
    if (pt_mse_se) pt_mse_se[m] = se;
  }
  if (!st) {
    res->bias2 = nb ? b2 / (double)nb : NAN;
    res->var = nb ? vs / (double)nb : NAN;
  }
  res->nreps = nreps;
  res->M = M;
  res->nflagged = nflag;
  free(est);
  free(f);
  free(ise);
  return st;
}
