/* Replications (thread-count independence), summaries and line fits. */
#include <string.h>
#include <gsl/gsl_randist.h>
#include "check.h"
#include "gfi/gfi.h"

/* replication: mean of 1000 normals and the first uniform drawn */
static int rep(size_t k, gsl_rng *r, double *out, void *ctx) {
  (void)ctx;
  double s = 0;
  for (int i = 0; i < 1000; i++) s += gsl_ran_gaussian_ziggurat(r, 1.0);
  out[0] = s / 1000;
  out[1] = gsl_rng_uniform(r);
  out[2] = (double)k;
  return GFI_OK;
}

static int rep_fail(size_t k, gsl_rng *r, double *out, void *ctx) {
  (void)r; (void)ctx;
  out[0] = 0;
  return k == 5 ? GFI_EQUAD : GFI_OK;
}

int main(void) {
  const size_t n = 200;
  double *a = malloc(3 * n * sizeof *a), *b = malloc(3 * n * sizeof *b);
  gfi_opts o;
  gfi_default_opts(&o);
  o.seed = 99;
  o.nthreads = 1;
  CHECK_STATUS(gfi_replicate(n, 3, &o, rep, NULL, a), GFI_OK);
  o.nthreads = 2;
  CHECK_STATUS(gfi_replicate(n, 3, &o, rep, NULL, b), GFI_OK);
  CHECK(memcmp(a, b, 3 * n * sizeof *a) == 0, "replications differ between 1 and 2 threads");
  /* replication k is stream (seed, k) */
  gsl_rng *r = gfi_rng_stream(99, 17);
  double expect[3];
  rep(17, r, expect, NULL);
  gsl_rng_free(r);
  CHECK(memcmp(expect, a + 3 * 17, sizeof expect) == 0, "replication 17 is stream (99, 17)");
  /* the means of 1000 normals have sd 1/sqrt(1000) */
  gfi_summary s;
  CHECK_STATUS(gfi_summarize(a, n, 3, &s), GFI_OK);
  CHECK(fabs(s.mean) < 5 * s.se, "mean %g se %g", s.mean, s.se);
  CHECK(fabs(s.sd - 1 / sqrt(1000.0)) < 5 * (1 / sqrt(1000.0)) / sqrt(2.0 * n), "sd %g", s.sd);
  CHECK_STATUS(gfi_replicate(20, 1, &o, rep_fail, NULL, a), GFI_EQUAD);
  CHECK_STATUS(gfi_replicate(5, 1, &o, NULL, NULL, a), GFI_EINVAL);

  /* summary of a known set */
  double x[4] = {1, 2, 3, 4};
  CHECK_STATUS(gfi_summarize(x, 4, 1, &s), GFI_OK);
  CHECK_CLOSE(s.mean, 2.5, 1e-15, 0);
  CHECK_CLOSE(s.sd, sqrt(5.0 / 3), 1e-15, 0);
  CHECK_CLOSE(s.se, sqrt(5.0 / 3) / 2, 1e-15, 0);
  CHECK_STATUS(gfi_summarize(x, 0, 1, &s), GFI_EEMPTY);

  /* line fits: exact line; known OLS slope se; weighted */
  double lx[6] = {1, 2, 3, 4, 5, 6}, ly[6], sg[6];
  for (int i = 0; i < 6; i++) ly[i] = 3 - 0.5 * lx[i];
  gfi_linfit f;
  CHECK_STATUS(gfi_fit_line(lx, ly, NULL, 0, 6, 0, &f), GFI_OK);
  CHECK_CLOSE(f.slope, -0.5, 1e-14, 0);
  CHECK_CLOSE(f.intercept, 3, 1e-14, 0);
  CHECK(f.slope_se < 1e-12, "exact line has no slope error");
  double yy[5] = {1, 3, 2, 5, 4}, xx[5] = {1, 2, 3, 4, 5};
  CHECK_STATUS(gfi_fit_line(xx, yy, NULL, 0, 5, 0, &f), GFI_OK);
  /* slope 0.8, residual SS 3.6 on 3 dof, Sxx = 10: se = sqrt(1.2/10) */
  CHECK_CLOSE(f.slope, 0.8, 1e-14, 0);
  CHECK_CLOSE(f.slope_se, sqrt(0.12), 1e-13, 0);
  CHECK_CLOSE(f.slope_hi95 - f.slope, 3.182446305284263 * sqrt(0.12), 1e-9, 0);
  /* fit only the last points */
  for (int i = 0; i < 6; i++) { ly[i] = i < 3 ? 100 : 1 + 2 * lx[i]; sg[i] = 0.1; }
  CHECK_STATUS(gfi_fit_line(lx, ly, sg, 3, 6, 0, &f), GFI_OK);
  CHECK_CLOSE(f.slope, 2, 1e-12, 0);
  CHECK(f.npoints == 3, "points used");
  /* weighted: se from the weights = sigma / sqrt(Sxx) */
  CHECK_CLOSE(f.slope_se, 0.1 / sqrt(2.0), 1e-12, 0);
  CHECK_STATUS(gfi_fit_line(lx, ly, sg, 4, 6, 0, &f), GFI_EEMPTY);
  sg[5] = 0;
  CHECK_STATUS(gfi_fit_line(lx, ly, sg, 0, 6, 0, &f), GFI_EINVAL);
  ly[2] = NAN;
  CHECK_STATUS(gfi_fit_line(lx, ly, NULL, 0, 6, 0, &f), GFI_ENONFINITE);
  free(a);
  free(b);
  return check_summary("stats");
}
