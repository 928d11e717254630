/* Replications on RNG streams, summaries and line fits. */
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include "par.h"
#include "gfi/rng.h"
#include "gfi/stats.h"
#include "alloc.h"

typedef struct {
  uint64_t seed;
  size_t nout;
  gfi_rep_fn fn;
  void *ctx;
  double *out;
} rep_ctx;

/* Each thread holds one generator, reset to stream (seed, k) per replication. */
static int rep_init(void *vc, void *ws) {
  const rep_ctx *c = vc;
  gsl_rng **r = ws;
  *r = gfi_rng_stream(c->seed, 0);
  return *r ? GFI_OK : GFI_ENOMEM;
}

static void rep_fini(void *vc, void *ws) {
  (void)vc;
  gsl_rng_free(*(gsl_rng **)ws);
}

static int rep_task(void *vc, size_t k, void *ws) {
  const rep_ctx *c = vc;
  gsl_rng *r = *(gsl_rng **)ws;
  gfi_rng_reset(r, c->seed, (uint64_t)k);
  return c->fn(k, r, c->out + k * c->nout, c->ctx);
}

int gfi_replicate(size_t nreps, size_t nout, const gfi_opts *opts, gfi_rep_fn fn, void *ctx,
                  double *out) {
  if (!fn || (nreps && nout && !out)) return GFI_EINVAL;
  if (nreps == 0) return GFI_OK;
  gfi_opts o;
  gfi_default_opts(&o);
  if (opts) o = *opts;
  rep_ctx c = {o.seed, nout, fn, ctx, out};
  par_spec sp = {nreps, gfi_threads_resolve(&o), sizeof(gsl_rng *), 1, rep_init, rep_fini};
  return par_run(&sp, rep_task, &c);
}

int gfi_summarize(const double *x, size_t n, size_t stride, gfi_summary *s) {
  if (!s || (n && !x) || stride == 0) return GFI_EINVAL;
  if (n == 0) return GFI_EEMPTY;
  /* two passes: the mean, then squared deviations (no cancellation) */
  double m = 0;
  for (size_t i = 0; i < n; i++) m += x[i * stride];
  m /= (double)n;
  double v = 0;
  for (size_t i = 0; i < n; i++) {
    double d = x[i * stride] - m;
    v += d * d;
  }
  s->n = n;
  s->mean = m;
  s->sd = n > 1 ? sqrt(v / (double)(n - 1)) : 0;
  s->se = n > 1 ? s->sd / sqrt((double)n) : 0;
  s->lo95 = m - 1.959963984540054 * s->se;
  s->hi95 = m + 1.959963984540054 * s->se;
  if (!isfinite(m)) return GFI_ENONFINITE;
  return GFI_OK;
}

int gfi_fit_line(const double *x, const double *y, const double *sigma, size_t first, size_t n,
                 int scale_by_chi2, gfi_linfit *fit) {
  if (!x || !y || !fit || first > n) return GFI_EINVAL;
  size_t m = n - first;
  if (m < 3) return GFI_EEMPTY;
  for (size_t i = first; i < n; i++) {
    if (!isfinite(x[i]) || !isfinite(y[i])) return GFI_ENONFINITE;
    if (sigma && !(sigma[i] > 0 && isfinite(sigma[i]))) return GFI_EINVAL;
  }
  /* gsl_fit_wlinear reports nothing through GSL's error handler. */
  double *w = gfi_malloc2(m, sizeof *w);
  if (!w) return GFI_ENOMEM;
  for (size_t i = 0; i < m; i++) w[i] = sigma ? 1.0 / (sigma[first + i] * sigma[first + i]) : 1.0;
  double c0, c1, cov00, cov01, cov11, chisq;
  int gs = gsl_fit_wlinear(x + first, 1, w, 1, y + first, 1, m, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
  free(w);
  if (gs != GSL_SUCCESS || !isfinite(c1)) return GFI_EQUAD;
  double dof = (double)(m - 2);
  double chi2_dof = chisq / dof;
  /* Weighted fit: covariance from the weights, optionally inflated by the
   * observed scatter. Unweighted: GSL's cov is for unit variance, so scale by
   * the residual variance. */
  double scale = sigma ? (scale_by_chi2 && chi2_dof > 1 ? chi2_dof : 1.0) : chi2_dof;
  fit->npoints = m;
  fit->intercept = c0;
  fit->slope = c1;
  fit->slope_se = sqrt(cov11 * scale);
  fit->intercept_se = sqrt(cov00 * scale);
  fit->chi2_dof = chi2_dof;
  double t = gsl_cdf_tdist_Pinv(0.975, dof);
  fit->slope_lo95 = c1 - t * fit->slope_se;
  fit->slope_hi95 = c1 + t * fit->slope_se;
  return GFI_OK;
}
