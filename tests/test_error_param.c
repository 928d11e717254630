/* The parameter at fault: each refused parameter comes back as a status
 * and its name (gfi_error_param), per thread, read once; the budgets refuse
 * before any work (a wrapped nscan, N x nreps beyond the Monte-Carlo budget). */
#include <math.h>
#include <string.h>
#include <pthread.h>
#include "check.h"
#include "gfi/gfi.h"

/* `expr` returns `want` and the library names `name`; the record is then
 * cleared. */
#define CHECK_NAMED(expr, want, name)                                                         \
  do {                                                                                        \
    int st_ = (expr);                                                                         \
    CHECK(st_ == (want), "%s: status %d, want %d", #expr, st_, (want));                      \
    const char *n_ = gfi_error_param(st_);                                                    \
    CHECK(strcmp(n_, (name)) == 0, "%s: parameter '%s', want '%s'", #expr, n_, (name));      \
    CHECK(strcmp(gfi_error_param(st_), "") == 0, "%s: the record is cleared once read", #expr); \
  } while (0)

static void *other_thread(void *arg) {
  (void)arg;
  /* a fresh thread sees no record of the main thread's failure */
  static int seen;
  seen = gfi_error_param(GFI_EINVAL)[0] != '\0';
  gfi_opts o;
  gfi_default_opts(&o);
  o.tol = 2;
  if (gfi_opts_check(&o) != GFI_EINVAL) seen = 2;
  return &seen;
}

int main(void) {
  double x[40], y[40];
  for (int i = 0; i < 40; i++) {
    x[i] = (double)i / 7.0 - 2.5 + 0.01 * (i % 3);
    y[i] = x[i] * x[i];
  }
  const gfi_kernel *k = KPOW(2);
  double R = 2.0, v, b;
  size_t nf;

  /* the options check: each field by name */
  gfi_opts o;
  gfi_default_opts(&o);
  CHECK_STATUS(gfi_opts_check(&o), GFI_OK);
  CHECK_STATUS(gfi_opts_check(NULL), GFI_OK);
  CHECK(strcmp(gfi_error_param(GFI_OK), "") == 0, "success names nothing");
  o.tol = -1;
  CHECK_NAMED(gfi_opts_check(&o), GFI_EINVAL, "tol");
  o.tol = NAN;
  CHECK_NAMED(gfi_opts_check(&o), GFI_EINVAL, "tol");
  o.tol = 1;
  CHECK_NAMED(gfi_opts_check(&o), GFI_EINVAL, "tol");
  o.tol = 0;
  o.method = (gfi_method)7;
  CHECK_NAMED(gfi_opts_check(&o), GFI_EINVAL, "method");
  o.method = GFI_METHOD_AUTO;
  o.nthreads = -1;
  CHECK_NAMED(gfi_opts_check(&o), GFI_EINVAL, "nthreads");
  /* ... and through an estimator that takes them */
  CHECK_NAMED(gfi_lscv(k, 40, 1, x, &R, &o, &v, &b, NULL), GFI_EINVAL, "nthreads");
  o.nthreads = 1;

  /* a record is read only with the status it was made with */
  o.tol = 5;
  CHECK_STATUS(gfi_opts_check(&o), GFI_EINVAL);
  CHECK(strcmp(gfi_error_param(GFI_ERANGE), "") == 0, "another status names nothing");
  CHECK(strcmp(gfi_error_param(GFI_EINVAL), "") == 0, "and clears the record");
  o.tol = 0;

  /* per thread */
  CHECK_STATUS(gfi_opts_check(&(gfi_opts){.tol = -1}), GFI_EINVAL);
  pthread_t t;
  void *ret;
  CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0, "thread");
  pthread_join(t, &ret);
  CHECK(*(int *)ret == 0, "another thread saw this thread's record (%d)", *(int *)ret);
  CHECK(strcmp(gfi_error_param(GFI_EINVAL), "tol") == 0, "the other thread's failure left this record alone");

  /* leave-one-out CV: denom_tol, not another parameter */
  CHECK_NAMED(gfi_loocv(k, 40, 1, 1, x, y, &R, &o, -1, &v, &nf, &b, NULL), GFI_EINVAL, "denom_tol");
  CHECK_NAMED(gfi_loocv(k, 40, 1, 1, x, y, &R, &o, 1.5, &v, &nf, &b, NULL), GFI_EINVAL, "denom_tol");
  CHECK_STATUS(gfi_loocv(k, 40, 1, 1, x, y, &R, &o, 0, &v, &nf, &b, NULL), GFI_OK);

  /* radius selection: nscan, a wrapped count (-1 as size_t) refused at once */
  gfi_select_opts so;
  gfi_select_default_opts(&so);
  so.base.nthreads = 1;
  gfi_select_result res;
  so.nscan = (size_t)-1;
  CHECK_NAMED(gfi_select_lscv(k, 40, 1, x, &so, &res, NULL), GFI_EINVAL, "nscan");
  so.nscan = GFI_SELECT_NSCAN_MAX + 1;
  CHECK_NAMED(gfi_select_lscv(k, 40, 1, x, &so, &res, NULL), GFI_EINVAL, "nscan");
  so.nscan = 2;
  CHECK_NAMED(gfi_select_loocv(k, 40, 1, 1, x, y, &so, &res, NULL), GFI_EINVAL, "nscan");
  so.nscan = 0;
  so.denom_tol = -1;
  CHECK_NAMED(gfi_select_loocv(k, 40, 1, 1, x, y, &so, &res, NULL), GFI_EINVAL, "denom_tol");
  so.denom_tol = 0;
  so.R_lo = 3;
  so.R_hi = 1;
  CHECK_NAMED(gfi_select_lscv(k, 40, 1, x, &so, &res, NULL), GFI_ERADIUS, "R_hi");
  so.R_lo = -1;
  CHECK_NAMED(gfi_select_lscv(k, 40, 1, x, &so, &res, NULL), GFI_ERADIUS, "R_lo");
  so.R_lo = so.R_hi = 0;
  so.base.tol = 3;
  CHECK_NAMED(gfi_select_lscv(k, 40, 1, x, &so, &res, NULL), GFI_EINVAL, "tol");
  so.base.tol = 0;
  so.nscan = 3;
  CHECK_STATUS(gfi_select_lscv(k, 40, 1, x, &so, &res, NULL), GFI_OK);

  /* the MISE: resolution, the Monte-Carlo budget N x nreps (refused before
   * any work: 1e13 points would take days) */
  gfi_model *m = NULL;
  CHECK_STATUS(gfi_model_parse(&m, "normal", 1, NULL), GFI_OK);
  gfi_mise_opts mo;
  gfi_mise_default_opts(&mo);
  mo.base.nthreads = 1;
  gfi_mise_result mr;
  mo.resolution = 0;
  CHECK_NAMED(gfi_mise_exact(m, k, 100, &R, &mo, &mr), GFI_EINVAL, "resolution");
  mo.resolution = INFINITY;
  CHECK_NAMED(gfi_mise_exact(m, k, 100, &R, &mo, &mr), GFI_EINVAL, "resolution");
  double r_opt;
  CHECK_NAMED(gfi_ropt(m, k, 100, NULL, &mo, &r_opt, &mr), GFI_EINVAL, "resolution");
  CHECK_NAMED(gfi_mise_mc(m, k, 50, &R, 2, &mo, &mr, NULL), GFI_EINVAL, "resolution");
  mo.resolution = 1;
  CHECK_NAMED(gfi_mise_mc(m, k, 1000000, &R, 10000000, &mo, &mr, NULL), GFI_ERANGE, "nreps");
  CHECK_NAMED(gfi_mise_mc(m, k, 50, &R, 1, &mo, &mr, NULL), GFI_EINVAL, "nreps");
  mo.max_points = 99;
  CHECK_NAMED(gfi_mise_mc(m, k, 50, &R, 2, &mo, &mr, NULL), GFI_ERANGE, "nreps");
  mo.max_points = 100;
  CHECK_STATUS(gfi_mise_mc(m, k, 50, &R, 2, &mo, &mr, NULL), GFI_OK);
  mo.max_points = -1;
  CHECK_NAMED(gfi_mise_mc(m, k, 50, &R, 2, &mo, &mr, NULL), GFI_EINVAL, "max_points");
  /* the Gaussian KDE's Monte Carlo: N^2 x nreps pairs within its budget */
  double Hg = 0.09;
  mo.max_points = 0;
  CHECK_NAMED(gfi_mise_gauss_mc(m, 1000000, &Hg, 2, &mo, &mr, NULL), GFI_ERANGE, "nreps");
  CHECK_NAMED(gfi_mise_gauss_mc(m, 1000000, &Hg, 2, NULL, &mr, NULL), GFI_ERANGE, "nreps");
  mo.max_points = 199;
  CHECK_NAMED(gfi_mise_gauss_mc(m, 10, &Hg, 2, &mo, &mr, NULL), GFI_ERANGE, "nreps");
  mo.max_points = 200;
  CHECK_STATUS(gfi_mise_gauss_mc(m, 10, &Hg, 2, &mo, &mr, NULL), GFI_OK);
  mo.max_points = -1;
  CHECK_NAMED(gfi_mise_gauss_mc(m, 10, &Hg, 2, &mo, &mr, NULL), GFI_EINVAL, "max_points");
  mo.max_points = 0;
  mo.ise = (gfi_ise_method)9;
  CHECK_NAMED(gfi_mise_mc(m, k, 50, &R, 2, &mo, &mr, NULL), GFI_EINVAL, "ise");
  mo.ise = GFI_ISE_AUTO;
  CHECK_STATUS(gfi_mise_exact(m, k, 100, &R, &mo, &mr), GFI_OK);
  gfi_model_free(m);

  /* density and regression plans */
  gfi_density_plan *dp = NULL;
  double Rbig = 1e308, H1;
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 40, 1, x, NULL, &Rbig, &o), GFI_ERANGE, "R");
  o.tol = 2;
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 40, 1, x, NULL, &R, &o), GFI_EINVAL, "tol");
  o.tol = 0;
  CHECK(dp == NULL, "no plan on failure");
  CHECK_NAMED(gfi_bandwidth_rule("bogus", 40, 1, x, NULL, &H1), GFI_EINVAL, "rule");
  gfi_nw_plan *np = NULL;
  CHECK_STATUS(gfi_nw_plan_fourier(&np, k, 40, 1, 1, x, y, &R, &o), GFI_OK);
  CHECK_NAMED(gfi_nw_set_denom_tol(np, -0.5), GFI_EINVAL, "denom_tol");
  CHECK_NAMED(gfi_nw_set_scaling(np, 99), GFI_EINVAL, "mode");
  CHECK_STATUS(gfi_nw_set_denom_tol(np, 1e-6), GFI_OK);
  gfi_nw_destroy(np);

  /* batched attention: each option of the spec by its name */
  gfi_attn_batch_spec as;
  double q[8], hout[8], saved[8], r1 = 1.0;
  for (int i = 0; i < 8; i++) q[i] = 0.1 * i;
  gfi_attn_info info;
#define ATTN(s_) gfi_attn_batch_forward(&(s_), 1, 1, 4, 4, 2, 2, q, q, q, &r1, NULL, NULL, &o, hout, saved, &info)
  gfi_attn_batch_default_spec(&as);
  CHECK_STATUS(ATTN(as), GFI_OK);
  as.dropout = 1.5;
  CHECK_NAMED(ATTN(as), GFI_EINVAL, "dropout");
  gfi_attn_batch_default_spec(&as);
  as.eps = -1;
  CHECK_NAMED(ATTN(as), GFI_EINVAL, "eps");
  gfi_attn_batch_default_spec(&as);
  as.denom_tol = 1;
  CHECK_NAMED(ATTN(as), GFI_EINVAL, "denom_tol");
  return check_summary("error-param");
}
