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
  gfi_attn_batch_default_spec(&as);
  as.kernel.l = 9;
  CHECK_NAMED(ATTN(as), GFI_EORDER, "kernel");
  gfi_attn_batch_default_spec(&as);
  CHECK_NAMED(gfi_attn_batch_forward(&as, 1, 1, 0, 4, 2, 2, q, q, q, &r1, NULL, NULL, &o, hout, saved, &info),
              GFI_EEMPTY, "Lq");
  CHECK_NAMED(gfi_attn_batch_forward(&as, 1, 1, 4, 4, 2, 0, q, q, q, &r1, NULL, NULL, &o, hout, saved, &info),
              GFI_EDIM, "Dv");
  double rbad = -1, qnan[8];
  memcpy(qnan, q, sizeof q);
  qnan[5] = NAN;
  CHECK_NAMED(gfi_attn_batch_forward(&as, 1, 1, 4, 4, 2, 2, q, q, q, &rbad, NULL, NULL, &o, hout, saved, &info),
              GFI_ERADIUS, "R");
  CHECK_NAMED(gfi_attn_batch_forward(&as, 1, 1, 4, 4, 2, 2, q, qnan, q, &r1, NULL, NULL, &o, hout, saved, &info),
              GFI_ENONFINITE, "K");
  CHECK_NAMED(gfi_attn_batch_forward(&as, 1, 1, 4, 4, 2, 2, q, q, qnan, &r1, NULL, NULL, &o, hout, saved, &info),
              GFI_ENONFINITE, "V");

  /* single-sequence attention plans and calls */
  gfi_attn_spec sp;
  gfi_attn_plan *ap = NULL;
  gfi_attn_default_spec(&sp);
  sp.denom_tol = -1;
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 4, 2, 2, &o), GFI_EINVAL, "denom_tol");
  gfi_attn_default_spec(&sp);
  sp.kind = (gfi_attn_kind)7;
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 4, 2, 2, &o), GFI_EINVAL, "kind");
  gfi_attn_default_spec(&sp);
  sp.kernel.l = 0;
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 4, 2, 2, &o), GFI_EORDER, "kernel");
  gfi_attn_default_spec(&sp);
  CHECK_STATUS(gfi_kernel_flattop(&sp.kernel, 0.5), GFI_OK); /* attention takes the sinc families only */
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 4, 2, 2, &o), GFI_EUNSUPPORTED, "kernel");
  sp.kernel.kind = GFI_PHI_CUSTOM;
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 4, 2, 2, &o), GFI_EUNSUPPORTED, "kernel");
  gfi_attn_default_spec(&sp);
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 0, 2, 2, &o), GFI_EEMPTY, "L");
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 4, 0, 2, &o), GFI_EDIM, "D");
  CHECK_NAMED(gfi_attn_plan_create(&ap, &sp, 4, 2, GFI_MAX_DIM + 1, &o), GFI_EDIM, "Dv");
  CHECK(ap == NULL, "no attention plan on failure");
  CHECK_STATUS(gfi_attn_plan_create(&ap, &sp, 4, 2, 2, &o), GFI_OK);
  double dq[8], dk[8], dv[8], dr;
  CHECK_NAMED(gfi_attn_forward(ap, qnan, q, q, &r1, hout, saved, NULL), GFI_ENONFINITE, "Q");
  CHECK_NAMED(gfi_attn_forward(ap, q, q, qnan, &r1, hout, saved, NULL), GFI_ENONFINITE, "V");
  CHECK_NAMED(gfi_attn_forward(ap, q, q, q, &rbad, hout, saved, NULL), GFI_ERADIUS, "R");
  CHECK_STATUS(gfi_attn_forward(ap, q, q, q, &r1, hout, saved, NULL), GFI_OK);
  CHECK_NAMED(gfi_attn_backward(ap, q, q, q, &r1, hout, saved, qnan, dq, dk, dv, &dr, NULL), GFI_ENONFINITE,
              "dH");
  CHECK_NAMED(gfi_attn_backward(ap, q, qnan, q, &r1, hout, saved, q, dq, dk, dv, &dr, NULL), GFI_ENONFINITE,
              "K");
  gfi_attn_destroy(ap);
  gfi_attn_default_spec(&sp);
  sp.kind = GFI_ATTN_GAUSS;
  CHECK_STATUS(gfi_attn_plan_create(&ap, &sp, 4, 2, 2, &o), GFI_OK);
  CHECK_NAMED(gfi_attn_forward(ap, q, q, q, &rbad, hout, saved, NULL), GFI_EBANDWIDTH, "R");
  gfi_attn_destroy(ap);
  /* softmax attention */
  CHECK_NAMED(gfi_attn_softmax_forward(4, 2, 2, q, q, q, 0, 0, &o, hout), GFI_EBANDWIDTH, "scale");
  CHECK_NAMED(gfi_attn_softmax_forward(0, 2, 2, q, q, q, 1, 0, &o, hout), GFI_EEMPTY, "L");
  CHECK_NAMED(gfi_attn_softmax_forward(4, 2, 0, q, q, q, 1, 0, &o, hout), GFI_EDIM, "Dv");
  CHECK_NAMED(gfi_attn_softmax_forward(4, 2, 2, q, qnan, q, 1, 0, &o, hout), GFI_ENONFINITE, "K");
  CHECK_NAMED(gfi_attn_softmax_forward(4, 2, 2, q, q, qnan, 1, 0, &o, hout), GFI_ENONFINITE, "V");

  /* data, radius, weight, bandwidth and kernel checks of the plans */
  double xnan[40], w[40], Rneg = -1, Hneg = -1;
  H1 = 0.5;
  memcpy(xnan, x, sizeof x);
  xnan[17] = INFINITY;
  for (int i = 0; i < 40; i++) w[i] = 1;
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 40, 1, xnan, NULL, &R, &o), GFI_ENONFINITE, "data");
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 0, 1, x, NULL, &R, &o), GFI_EEMPTY, "data");
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 40, 0, x, NULL, &R, &o), GFI_EDIM, "D");
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 40, 1, x, NULL, &Rneg, &o), GFI_ERADIUS, "R");
  w[3] = NAN;
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 40, 1, x, w, &R, &o), GFI_EWEIGHT, "weights");
  w[3] = 1;
  gfi_kernel kbad = *k;
  kbad.l = 12;
  CHECK_NAMED(gfi_density_plan_fourier(&dp, &kbad, 40, 1, x, NULL, &R, &o), GFI_EORDER, "k");
  CHECK_NAMED(gfi_density_plan_gauss(&dp, 40, 1, x, NULL, &Hneg, &o), GFI_EBANDWIDTH, "H");
  CHECK_NAMED(gfi_density_plan_gauss(&dp, 40, 1, xnan, NULL, &H1, &o), GFI_ENONFINITE, "data");
  CHECK_NAMED(gfi_bandwidth_rule("scott", 40, 1, xnan, NULL, &H1), GFI_ENONFINITE, "data");
  CHECK_NAMED(gfi_bandwidth_rule("scott", 40, 1, x, w, &H1), GFI_OK, "");
  w[0] = -100;
  CHECK_NAMED(gfi_bandwidth_rule("scott", 40, 1, x, w, &H1), GFI_EWEIGHT, "weights");
  CHECK(dp == NULL, "no plan on failure");
  CHECK_STATUS(gfi_density_plan_fourier(&dp, k, 40, 1, x, NULL, &R, &o), GFI_OK);
  CHECK_NAMED(gfi_density_eval(dp, 3, xnan + 16, hout), GFI_ENONFINITE, "queries");
  gfi_density_destroy(dp);
  CHECK_NAMED(gfi_nw_plan_fourier(&np, k, 40, 1, 1, xnan, y, &R, &o), GFI_ENONFINITE, "x");
  CHECK_NAMED(gfi_nw_plan_fourier(&np, k, 40, 1, 1, x, xnan, &R, &o), GFI_ENONFINITE, "y");
  CHECK_NAMED(gfi_nw_plan_fourier(&np, k, 40, 1, 0, x, y, &R, &o), GFI_EINVAL, "V");
  CHECK_NAMED(gfi_nw_plan_fourier(&np, k, 40, 1, 1, x, y, &Rneg, &o), GFI_ERADIUS, "R");
  CHECK_NAMED(gfi_nw_plan_fourier(&np, &kbad, 40, 1, 1, x, y, &R, &o), GFI_EORDER, "k");
  CHECK_NAMED(gfi_nw_plan_gauss(&np, 40, 1, 1, x, y, &Hneg, &o), GFI_EBANDWIDTH, "H");
  CHECK_NAMED(gfi_nw_plan_gauss(&np, 0, 1, 1, x, y, &H1, &o), GFI_EEMPTY, "x");
  CHECK(np == NULL, "no plan on failure");
  CHECK_STATUS(gfi_nw_plan_fourier(&np, k, 40, 1, 1, x, y, &R, &o), GFI_OK);
  CHECK_NAMED(gfi_nw_eval(np, 3, xnan + 16, hout, &nf), GFI_ENONFINITE, "queries");
  gfi_nw_destroy(np);

  /* a phase R x beyond 2^52 blames R */
  double Rhuge = 1e16;
  CHECK_NAMED(gfi_density_plan_fourier(&dp, k, 40, 1, x, NULL, &Rhuge, &o), GFI_ERANGE, "R");
  CHECK_NAMED(gfi_nw_plan_fourier(&np, k, 40, 1, 1, x, y, &Rhuge, &o), GFI_ERANGE, "R");
  CHECK(dp == NULL && np == NULL, "no plan on failure");
  /* the selection criteria and the radius selection */
  CHECK_NAMED(gfi_lscv(k, 1, 1, x, &R, &o, &v, &b, NULL), GFI_EEMPTY, "data");
  CHECK_NAMED(gfi_lscv(k, 40, 1, xnan, &R, &o, &v, &b, NULL), GFI_ENONFINITE, "data");
  CHECK_NAMED(gfi_lscv(k, 40, 1, x, &Rneg, &o, &v, &b, NULL), GFI_ERADIUS, "R");
  CHECK_NAMED(gfi_lscv(&kbad, 40, 1, x, &R, &o, &v, &b, NULL), GFI_EORDER, "k");
  CHECK_NAMED(gfi_loocv(k, 40, 1, 1, xnan, y, &R, &o, 0, &v, &nf, &b, NULL), GFI_ENONFINITE, "x");
  CHECK_NAMED(gfi_loocv(k, 40, 1, 1, x, xnan, &R, &o, 0, &v, &nf, &b, NULL), GFI_ENONFINITE, "y");
  CHECK_NAMED(gfi_loocv(k, 40, 1, 1, x, y, &Rneg, &o, 0, &v, &nf, &b, NULL), GFI_ERADIUS, "R");
  gfi_select_default_opts(&so);
  so.base.nthreads = 1;
  CHECK_NAMED(gfi_select_lscv(k, 40, 1, xnan, &so, &res, NULL), GFI_ENONFINITE, "data");
  CHECK_NAMED(gfi_select_loocv(k, 1, 1, 1, x, y, &so, &res, NULL), GFI_EEMPTY, "x");

  /* FLT positions */
  gfi_flt_positions *fp = NULL;
  CHECK_NAMED(gfi_flt_positions_line(&fp, 0), GFI_EEMPTY, "L");
  CHECK_NAMED(gfi_flt_positions_grid(&fp, 3, 0), GFI_EEMPTY, "n2");
  CHECK_NAMED(gfi_flt_positions_points(&fp, 3, 1, xnan + 16), GFI_ENONFINITE, "pos");
  CHECK_NAMED(gfi_flt_positions_points(&fp, 3, 0, x), GFI_EDIM, "ell");
  CHECK(fp == NULL, "no positions on failure");
  return check_summary("error-param");
}
