/* The R binding of libgfi: .Call routines over the exported C API
 * (include/gfi). Data come from R as N x D column-major matrices and go to
 * the library as row-major copies (R_alloc: freed when the call returns or
 * is interrupted). Plans live in external pointers whose finalizers destroy
 * them, so an interrupt (a longjmp out of R_CheckUserInterrupt) or an error
 * leaks nothing. Errors are raised through the R function .gfi_signal of
 * the package's namespace, which signals a condition of class gfi_error. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#include <gfi/gfi.h>

/* ---- errors ---- */

static const char *status_name(int st) {
  static const char *names[] = {"ok", "einval", "enonfinite", "eempty", "eradius", "eorder", "edim",
                                "einfinite_a", "enomem", "equad", "emodel", "eio", "eparse", "enotpd",
                                "eunsupported", "erange", "eweight", "ebandwidth", "edenom", "enodev"};
  if (st == -1) return "interrupt";
  return (st >= 0 && st < GFI_STATUS_COUNT) ? names[st] : "unknown";
}

/* Signal a gfi condition: status st, the parameter's name, a message. Does not return. */
static void gfi_r_stop(int st, const char *param, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  SEXP ns = PROTECT(R_FindNamespace(Rf_mkString("gfi")));
  SEXP fn = PROTECT(Rf_findFun(Rf_install(".gfi_signal"), ns));
  SEXP a1 = PROTECT(Rf_ScalarInteger(st)), a2 = PROTECT(Rf_mkString(status_name(st)));
  SEXP a3 = PROTECT(Rf_mkString(param ? param : "")), a4 = PROTECT(Rf_mkString(msg));
  SEXP call = PROTECT(Rf_lang5(fn, a1, a2, a3, a4));
  Rf_eval(call, ns);
  UNPROTECT(7);
  Rf_error("%s", msg); /* not reached: .gfi_signal stops */
}

/* For the other source files. */
void gfi_r_stop_ext(int st, const char *param, const char *msg);
void gfi_r_stop_ext(int st, const char *param, const char *msg) { gfi_r_stop(st, param, "%s", msg); }

/* The R argument behind the parameter the library named for status st
 * (gfi_error_param), or fallback where it named none or one that R's
 * arguments do not carry under its own name (sizes, query arrays). */
static const char *r_param(int st, const char *fallback) {
  static const char *const map[][2] = {
      {"denom_tol", "denom.tol"}, {"R_lo", "R.range"}, {"R_hi", "R.range"}, {"per_axis", "per.axis"},
      {"nthreads", "threads"},    {"data", "x"},       {"k", "phi"},         {"weights", "w"},
      {"x", "x"},                 {"y", "y"},          {"R", "R"},           {"H", "H"},
      {"nscan", "nscan"},         {"method", "method"}, {"tol", "tol"}};
  const char *n = gfi_error_param(st);
  for (size_t i = 0; *n && i < sizeof map / sizeof map[0]; i++)
    if (strcmp(n, map[i][0]) == 0) return map[i][1];
  return fallback;
}

/* A library status: the library's own text after what was being done; the
 * parameter the library names, else param. */
static void check(int st, const char *param, const char *what) {
  if (st == GFI_OK) return;
  gfi_r_stop(st, r_param(st, param), "%s: %s", what, gfi_strerror(st));
}

/* ---- arguments ---- */

static double *as_rows(SEXP x, const char *name, size_t *N, size_t *D) {
  if (!Rf_isReal(x)) gfi_r_stop(GFI_EINVAL, name, "%s must be a double matrix", name);
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  size_t n, d;
  if (Rf_isNull(dim)) {
    n = (size_t)XLENGTH(x);
    d = 1;
  } else {
    if (LENGTH(dim) != 2) gfi_r_stop(GFI_EDIM, name, "%s must be a vector or a matrix", name);
    n = (size_t)INTEGER(dim)[0];
    d = (size_t)INTEGER(dim)[1];
  }
  if (d == 0) gfi_r_stop(GFI_EDIM, name, "%s has no columns", name);
  const double *v = REAL(x);
  for (size_t j = 0; j < d; j++)
    for (size_t i = 0; i < n; i++) {
      double a = v[j * n + i];
      if (!isfinite(a))
        gfi_r_stop(GFI_ENONFINITE, name, "%s: row %zu, column %zu is %s", name, i + 1, j + 1,
                   ISNA(a) ? "NA" : (ISNAN(a) ? "NaN" : "infinite"));
    }
  double *r = (double *)R_alloc(n * d > 0 ? n * d : 1, sizeof(double));
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < d; j++) r[i * d + j] = v[j * n + i];
  *N = n;
  *D = d;
  return r;
}

static double *opt_real(SEXP x) { return Rf_isNull(x) ? NULL : REAL(x); }

static void set_opts(gfi_opts *o, SEXP method, SEXP tol, SEXP threads) {
  gfi_default_opts(o);
  o->nthreads = Rf_asInteger(threads);
  o->method = (gfi_method)Rf_asInteger(method);
  o->tol = Rf_asReal(tol);
}

static void make_kernel(gfi_kernel *k, SEXP phi) {
  int st;
  if (Rf_isInteger(phi)) {
    int l = INTEGER(phi)[0];
    st = gfi_kernel_pow(k, l);
    if (st) gfi_r_stop(st, "phi", "phi = z^%d: %s", l, gfi_strerror(st));
  } else {
    int deg = LENGTH(phi);
    double a[GFI_PHI_MAXPOW + 1] = {0};
    if (deg < 1 || deg > GFI_PHI_MAXPOW)
      gfi_r_stop(GFI_EORDER, "phi", "phi: %d polynomial coefficients, expected 1..%d", deg, GFI_PHI_MAXPOW);
    for (int j = 0; j < deg; j++) a[j + 1] = REAL(phi)[j];
    st = gfi_kernel_poly(k, deg, a);
    if (st) gfi_r_stop(st, "phi", "polynomial phi: %s", gfi_strerror(st));
  }
}

static uint64_t as_seed(SEXP s, const char *name) {
  double v = Rf_asReal(s);
  if (!(v >= 0 && v <= 9007199254740992.0) || v != floor(v))
    gfi_r_stop(GFI_EINVAL, name, "%s must be an integer in [0, 2^53], got %g", name, v);
  return (uint64_t)v;
}

static SEXP info_list(const gfi_fast_info *f) {
  const char *nm[] = {"route", "reason", "nodes", "bound_abs", "bound", "tol", ""};
  SEXP r = PROTECT(Rf_mkNamed(VECSXP, nm));
  SET_VECTOR_ELT(r, 0, Rf_mkString(f->route == GFI_METHOD_FAST ? "fast" : "direct"));
  SET_VECTOR_ELT(r, 1, Rf_ScalarInteger(f->reason));
  SEXP nodes = PROTECT(Rf_allocVector(REALSXP, f->dim > 0 && f->dim <= 3 ? f->dim : 0));
  for (R_xlen_t j = 0; j < XLENGTH(nodes); j++) REAL(nodes)[j] = (double)f->nodes[j];
  SET_VECTOR_ELT(r, 2, nodes);
  SET_VECTOR_ELT(r, 3, Rf_ScalarReal(f->bound_abs));
  SET_VECTOR_ELT(r, 4, Rf_ScalarReal(f->bound));
  SET_VECTOR_ELT(r, 5, Rf_ScalarReal(f->tol));
  UNPROTECT(2);
  return r;
}

/* ---- interrupts ---- */

static void check_interrupt_fn(void *dummy) {
  (void)dummy;
  R_CheckUserInterrupt();
}

/* 1 when the user pressed Ctrl-C (without jumping: the caller frees first). */
static int interrupted(void) { return R_ToplevelExec(check_interrupt_fn, NULL) == FALSE; }

/* options(gfi.progress = TRUE): the chunked direct sums report their first
 * piece and then every further percent on stderr ("gfi: <what> k of M
 * points"), so a user sees a long sum advance. */
static int progress_on(void) {
  SEXP o = Rf_GetOption1(Rf_install("gfi.progress"));
  return Rf_isLogical(o) && Rf_length(o) == 1 && LOGICAL(o)[0] == TRUE;
}

static void progress(const char *what, size_t done, size_t M, size_t *shown) {
  size_t pct = (size_t)(100.0 * (double)done / (double)M);
  if (*shown != (size_t)-1 && pct == *shown) return;
  *shown = pct;
  REprintf("gfi: %s %zu of %zu points\n", what, done, M);
}

static void stop_interrupted(void) {
  gfi_r_stop(-1, "", "interrupted by the user; the computation was stopped and its memory freed");
}

/* Queries per call on the direct route: about 2^24 kernel terms between checks. */
static size_t chunk_size(size_t N) {
  size_t c = ((size_t)1 << 24) / (N ? N : 1);
  return c ? c : 1;
}

/* ---- density ---- */

static void density_finalizer(SEXP p) {
  gfi_density_plan *plan = (gfi_density_plan *)R_ExternalPtrAddr(p);
  if (plan) gfi_density_destroy(plan);
  R_ClearExternalPtr(p);
}

static gfi_density_plan *density_get(SEXP p) {
  gfi_density_plan *plan = TYPEOF(p) == EXTPTRSXP ? (gfi_density_plan *)R_ExternalPtrAddr(p) : NULL;
  if (!plan) gfi_r_stop(GFI_EINVAL, "object", "the estimate's plan is gone (a saved object): refit it");
  return plan;
}

/* x N x D, w (NULL or N), R (NULL: Gaussian) or H, phi. */
SEXP C_density_plan(SEXP x, SEXP w, SEXP R, SEXP H, SEXP phi, SEXP method, SEXP tol, SEXP threads) {
  size_t N, D, wn = 0, hn = 0, hd = 0;
  double *data = as_rows(x, "x", &N, &D);
  double *wv = NULL;
  if (!Rf_isNull(w)) {
    wv = as_rows(w, "w", &wn, &hd);
    if (wn * hd != N) gfi_r_stop(GFI_EDIM, "w", "w has %zu values for %zu points", wn * hd, N);
  }
  gfi_opts o;
  set_opts(&o, method, tol, threads);
  gfi_density_plan *plan = NULL;
  int st;
  if (!Rf_isNull(R)) {
    gfi_kernel k;
    make_kernel(&k, phi);
    if ((size_t)XLENGTH(R) != D) gfi_r_stop(GFI_EDIM, "R", "R has %d values for %zu axes", (int)XLENGTH(R), D);
    st = gfi_density_plan_fourier(&plan, &k, N, D, data, wv, REAL(R), &o);
    if (st) {
      const char *param = st == GFI_ERADIUS || st == GFI_ERANGE ? "R" : st == GFI_EWEIGHT ? "w"
                        : st == GFI_EINFINITE_A ? "phi" : st == GFI_EUNSUPPORTED ? "method" : "x";
      check(st, param, "Fourier density estimator");
    }
  } else {
    double *Hv = as_rows(H, "H", &hn, &hd);
    if (hn != D || hd != D) gfi_r_stop(GFI_EDIM, "H", "H is %zu x %zu, the data have %zu columns", hn, hd, D);
    st = gfi_density_plan_gauss(&plan, N, D, data, wv, Hv, &o);
    if (st) {
      const char *param = st == GFI_EBANDWIDTH ? "H" : st == GFI_EWEIGHT ? "w"
                        : st == GFI_EUNSUPPORTED ? "method" : "x";
      check(st, param, "Gaussian density estimator");
    }
  }
  SEXP p = PROTECT(R_MakeExternalPtr(plan, Rf_install("gfi_density_plan"), R_NilValue));
  R_RegisterCFinalizerEx(p, density_finalizer, TRUE);
  UNPROTECT(1);
  return p;
}

/* The estimate at the M x D points q; attribute "info": what ran. */
SEXP C_density_eval(SEXP p, SEXP q, SEXP qname) {
  gfi_density_plan *plan = density_get(p);
  const char *name = CHAR(STRING_ELT(qname, 0));
  size_t M, D, N = gfi_density_size(plan);
  double *qv = as_rows(q, name, &M, &D);
  if (D != gfi_density_dim(plan))
    gfi_r_stop(GFI_EDIM, name, "%s have %zu columns, the data %zu", name, D, gfi_density_dim(plan));
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)M));
  gfi_fast_info info;
  int st = gfi_density_fast_info(plan, &info);
  check(st, "object", "route report");
  if (info.route == GFI_METHOD_DIRECT) {
    /* the direct sum is query by query: chunks give the same bits and a check for Ctrl-C */
    size_t c = chunk_size(N);
    int prog = progress_on();
    size_t shown = (size_t)-1;
    for (size_t i = 0; i < M && st == GFI_OK; i += c) {
      size_t m = M - i < c ? M - i : c;
      st = gfi_density_eval_info(plan, m, qv + i * D, REAL(out) + i, &info);
      if (st == GFI_OK && prog) progress("density", i + m, M, &shown);
      if (st == GFI_OK && i + m < M && interrupted()) stop_interrupted();
    }
  } else {
    st = gfi_density_eval_info(plan, M, qv, REAL(out), &info);
  }
  check(st, name, "density evaluation");
  Rf_setAttrib(out, Rf_install("info"), info_list(&info));
  UNPROTECT(1);
  return out;
}

/* On the grid lo:hi:n, last axis fastest (the caller reorders). */
SEXP C_density_grid(SEXP p, SEXP lo, SEXP hi, SEXP n) {
  gfi_density_plan *plan = density_get(p);
  size_t D = gfi_density_dim(plan), nn[3] = {0, 0, 0}, G = 1;
  if ((size_t)XLENGTH(lo) != D || (size_t)XLENGTH(hi) != D || (size_t)XLENGTH(n) != D || D > 3)
    gfi_r_stop(GFI_EDIM, "gridsize", "a grid needs D <= 3 and one size, lower and upper end per axis");
  for (size_t j = 0; j < D; j++) {
    double v = REAL(n)[j];
    if (!(v >= 1 && v <= 1e8)) gfi_r_stop(GFI_EINVAL, "gridsize", "gridsize must be in 1..1e8, got %g", v);
    nn[j] = (size_t)v;
    if (nn[j] > ((size_t)1 << 31) / G) gfi_r_stop(GFI_EDIM, "gridsize", "a grid of more than 2^31 points is too large");
    G *= nn[j];
  }
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)G));
  gfi_fast_info info;
  int st = gfi_density_eval_grid(plan, REAL(lo), REAL(hi), nn, REAL(out), &info);
  check(st, st == GFI_ENONFINITE ? "xmin" : "gridsize", "density on a grid");
  Rf_setAttrib(out, Rf_install("info"), info_list(&info));
  UNPROTECT(1);
  return out;
}

/* Bandwidth matrices: rule "ns", "lscv", "pi", "pi-diag", "dpi", "scott", "silverman". */
SEXP C_bandwidth(SEXP x, SEXP rule, SEXP method, SEXP tol, SEXP threads) {
  size_t N, D;
  double *data = as_rows(x, "x", &N, &D);
  const char *r = CHAR(STRING_ELT(rule, 0));
  gfi_opts o;
  set_opts(&o, method, tol, threads);
  SEXP H = PROTECT(Rf_allocMatrix(REALSXP, (int)D, (int)D));
  double *Hv = (double *)R_alloc(D * D, sizeof(double));
  int st;
  if (!strcmp(r, "ns")) st = gfi_bw_normal_ref(N, D, data, Hv);
  else if (!strcmp(r, "lscv")) st = gfi_bw_lscv(N, D, data, &o, Hv);
  else if (!strcmp(r, "pi")) st = gfi_bw_hpi(N, D, data, &o, Hv, NULL);
  else if (!strcmp(r, "pi-diag")) st = gfi_bw_hpi_diag(N, D, data, &o, Hv, NULL);
  else if (!strcmp(r, "dpi")) {
    if (D != 1) gfi_r_stop(GFI_EUNSUPPORTED, "x", "the direct plug-in bandwidth is 1-D only");
    double h = 0;
    st = gfi_bw_dpi(N, data, &o, &h);
    Hv[0] = h * h;
  } else st = gfi_bandwidth_rule(r, N, D, data, NULL, Hv);
  if (st) gfi_r_stop(st, st == GFI_EUNSUPPORTED ? "x" : "x", "bandwidth '%s': %s", r, gfi_strerror(st));
  for (size_t i = 0; i < D; i++)
    for (size_t j = 0; j < D; j++) REAL(H)[j * D + i] = Hv[i * D + j];
  UNPROTECT(1);
  return H;
}

/* The Gaussian LSCV criterion at H. */
SEXP C_gauss_lscv(SEXP x, SEXP H, SEXP threads) {
  size_t N, D, hn, hd;
  double *data = as_rows(x, "x", &N, &D);
  double *Hv = as_rows(H, "H", &hn, &hd);
  if (hn != D || hd != D) gfi_r_stop(GFI_EDIM, "H", "H is %zu x %zu, the data have %zu columns", hn, hd, D);
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = Rf_asInteger(threads);
  double v = 0;
  int st = gfi_gauss_lscv(N, D, data, Hv, &o, &v);
  check(st, st == GFI_EBANDWIDTH ? "H" : "x", "Gaussian LSCV");
  return Rf_ScalarReal(v);
}

/* ---- selection ---- */

static void set_select_opts(gfi_select_opts *so, SEXP range, SEXP nscan, SEXP per_axis, SEXP method,
                            SEXP tol, SEXP threads) {
  gfi_select_default_opts(so);
  so->base.nthreads = Rf_asInteger(threads);
  so->base.method = (gfi_method)Rf_asInteger(method);
  so->base.tol = Rf_asReal(tol);
  if (!Rf_isNull(range)) {
    so->R_lo = REAL(range)[0];
    so->R_hi = REAL(range)[1];
  }
  so->nscan = (size_t)Rf_asInteger(nscan);
  so->per_axis = Rf_asLogical(per_axis) == TRUE;
}

static SEXP select_list(const gfi_select_result *res, size_t D, const double *curve, size_t nscan) {
  const char *nm[] = {"R", "value", "bound", "R.range", "nscan", "nlocal", "at.edge", "evals",
                      "nflagged", "route", "curve", ""};
  SEXP r = PROTECT(Rf_mkNamed(VECSXP, nm));
  SEXP Rv = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)D));
  for (size_t j = 0; j < D; j++) REAL(Rv)[j] = res->R[D <= 3 ? j : 0];
  SET_VECTOR_ELT(r, 0, Rv);
  SET_VECTOR_ELT(r, 1, Rf_ScalarReal(res->value));
  SET_VECTOR_ELT(r, 2, Rf_ScalarReal(res->bound));
  SEXP rg = PROTECT(Rf_allocVector(REALSXP, 2));
  REAL(rg)[0] = res->R_lo;
  REAL(rg)[1] = res->R_hi;
  SET_VECTOR_ELT(r, 3, rg);
  SET_VECTOR_ELT(r, 4, Rf_ScalarReal((double)res->nscan));
  SET_VECTOR_ELT(r, 5, Rf_ScalarReal((double)res->nlocal));
  SET_VECTOR_ELT(r, 6, Rf_ScalarLogical(res->at_edge != 0));
  SET_VECTOR_ELT(r, 7, Rf_ScalarReal((double)res->evals));
  SET_VECTOR_ELT(r, 8, Rf_ScalarReal((double)res->nflagged));
  SET_VECTOR_ELT(r, 9, Rf_mkString(res->route == GFI_METHOD_FAST ? "fast" : "direct"));
  SEXP cv = PROTECT(Rf_allocMatrix(REALSXP, (int)nscan, 2));
  for (size_t i = 0; i < nscan; i++) {
    REAL(cv)[i] = curve[2 * i];
    REAL(cv)[nscan + i] = curve[2 * i + 1];
  }
  SET_VECTOR_ELT(r, 10, cv);
  UNPROTECT(4);
  return r;
}

SEXP C_select_lscv(SEXP x, SEXP phi, SEXP range, SEXP nscan, SEXP per_axis, SEXP method, SEXP tol,
                   SEXP threads) {
  size_t N, D;
  double *data = as_rows(x, "x", &N, &D);
  gfi_kernel k;
  make_kernel(&k, phi);
  gfi_select_opts so;
  set_select_opts(&so, range, nscan, per_axis, method, tol, threads);
  size_t ns = so.nscan ? so.nscan : 100;
  double *curve = (double *)R_alloc(2 * ns, sizeof(double));
  gfi_select_result res;
  int st = gfi_select_lscv(&k, N, D, data, &so, &res, curve);
  check(st, st == GFI_ERADIUS ? "R.range" : st == GFI_EINVAL ? "nscan" : "x", "LSCV radius selection");
  return select_list(&res, D, curve, ns);
}

SEXP C_select_loocv(SEXP x, SEXP y, SEXP phi, SEXP range, SEXP nscan, SEXP per_axis, SEXP denom_tol,
                    SEXP method, SEXP tol, SEXP threads) {
  size_t N, D, Ny, V;
  double *xv = as_rows(x, "x", &N, &D);
  double *yv = as_rows(y, "y", &Ny, &V);
  if (Ny != N) gfi_r_stop(GFI_EDIM, "y", "y has %zu rows, x has %zu", Ny, N);
  gfi_kernel k;
  make_kernel(&k, phi);
  gfi_select_opts so;
  set_select_opts(&so, range, nscan, per_axis, method, tol, threads);
  so.denom_tol = Rf_asReal(denom_tol);
  size_t ns = so.nscan ? so.nscan : 100;
  double *curve = (double *)R_alloc(2 * ns, sizeof(double));
  gfi_select_result res;
  int st = gfi_select_loocv(&k, N, D, V, xv, yv, &so, &res, curve);
  check(st, st == GFI_ERADIUS || st == GFI_EDENOM ? "R.range" : st == GFI_EINVAL ? "nscan" : "x",
        "leave-one-out CV radius selection");
  return select_list(&res, D, curve, ns);
}

/* The LSCV criterion of the Fourier estimator at radii R. */
SEXP C_lscv(SEXP x, SEXP phi, SEXP R, SEXP method, SEXP tol, SEXP threads) {
  size_t N, D;
  double *data = as_rows(x, "x", &N, &D);
  gfi_kernel k;
  make_kernel(&k, phi);
  if ((size_t)XLENGTH(R) != D) gfi_r_stop(GFI_EDIM, "R", "R has %d values for %zu axes", (int)XLENGTH(R), D);
  gfi_opts o;
  set_opts(&o, method, tol, threads);
  double v = 0, b = 0;
  int st = gfi_lscv(&k, N, D, data, REAL(R), &o, &v, &b, NULL);
  check(st, st == GFI_ERADIUS || st == GFI_ERANGE ? "R" : "x", "LSCV");
  SEXP r = PROTECT(Rf_allocVector(REALSXP, 2));
  REAL(r)[0] = v;
  REAL(r)[1] = b;
  UNPROTECT(1);
  return r;
}

/* ---- Nadaraya-Watson ---- */

static void nw_finalizer(SEXP p) {
  gfi_nw_plan *plan = (gfi_nw_plan *)R_ExternalPtrAddr(p);
  if (plan) gfi_nw_destroy(plan);
  R_ClearExternalPtr(p);
}

SEXP C_nw_plan(SEXP x, SEXP y, SEXP R, SEXP H, SEXP phi, SEXP denom_tol, SEXP method, SEXP tol, SEXP threads) {
  size_t N, D, Ny, V;
  double *xv = as_rows(x, "x", &N, &D);
  double *yv = as_rows(y, "y", &Ny, &V);
  if (Ny != N) gfi_r_stop(GFI_EDIM, "y", "y has %zu rows, x has %zu", Ny, N);
  gfi_opts o;
  set_opts(&o, method, tol, threads);
  gfi_nw_plan *plan = NULL;
  int st;
  if (!Rf_isNull(R)) {
    gfi_kernel k;
    make_kernel(&k, phi);
    if ((size_t)XLENGTH(R) != D) gfi_r_stop(GFI_EDIM, "R", "R has %d values for %zu axes", (int)XLENGTH(R), D);
    st = gfi_nw_plan_fourier(&plan, &k, N, D, V, xv, yv, REAL(R), &o);
    if (st) check(st, st == GFI_ERADIUS || st == GFI_ERANGE ? "R" : st == GFI_EUNSUPPORTED ? "method" : "x",
                  "Fourier Nadaraya-Watson");
  } else {
    size_t hn, hd;
    double *Hv = as_rows(H, "H", &hn, &hd);
    if (hn != D || hd != D) gfi_r_stop(GFI_EDIM, "H", "H is %zu x %zu, the data have %zu columns", hn, hd, D);
    st = gfi_nw_plan_gauss(&plan, N, D, V, xv, yv, Hv, &o);
    if (st) check(st, st == GFI_EBANDWIDTH ? "H" : st == GFI_EUNSUPPORTED ? "method" : "x",
                  "Gaussian Nadaraya-Watson");
  }
  SEXP p = PROTECT(R_MakeExternalPtr(plan, Rf_install("gfi_nw_plan"), R_NilValue));
  R_RegisterCFinalizerEx(p, nw_finalizer, TRUE);
  double dt = Rf_asReal(denom_tol);
  if (dt != 0) check(gfi_nw_set_denom_tol(plan, dt), "denom.tol", "denominator threshold"); /* 0: the default */
  UNPROTECT(1);
  return p;
}

/* list(fit = M x V row-major values (the caller reshapes), flags, info). */
SEXP C_nw_eval(SEXP p, SEXP q) {
  gfi_nw_plan *plan = TYPEOF(p) == EXTPTRSXP ? (gfi_nw_plan *)R_ExternalPtrAddr(p) : NULL;
  if (!plan) gfi_r_stop(GFI_EINVAL, "object", "the fit's plan is gone (a saved object): refit it");
  size_t M, D, N = gfi_nw_size(plan), V = gfi_nw_nresp(plan);
  double *qv = as_rows(q, "newdata", &M, &D);
  if (D != gfi_nw_dim(plan))
    gfi_r_stop(GFI_EDIM, "newdata", "newdata have %zu columns, the fit %zu", D, gfi_nw_dim(plan));
  const char *nm[] = {"fit", "flags", "nflagged", "info", ""};
  SEXP r = PROTECT(Rf_mkNamed(VECSXP, nm));
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)(M * V)));
  SEXP flags = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)M));
  unsigned char *fl = (unsigned char *)R_alloc(M ? M : 1, 1);
  gfi_fast_info info;
  int st = gfi_nw_fast_info(plan, &info);
  check(st, "object", "route report");
  size_t nflagged = 0, c = info.route == GFI_METHOD_DIRECT ? chunk_size(N) : (M ? M : 1);
  int prog = progress_on();
  size_t shown = (size_t)-1;
  for (size_t i = 0; i < M; i += c) {
    size_t m = M - i < c ? M - i : c, nf = 0;
    st = gfi_nw_eval_ex(plan, m, qv + i * D, REAL(out) + i * V, &nf, fl + i, NULL, &info);
    if (st != GFI_OK && st != GFI_EDENOM) check(st, "newdata", "Nadaraya-Watson evaluation");
    nflagged += nf;
    if (prog) progress("Nadaraya-Watson", i + m, M, &shown);
    if (i + m < M && interrupted()) stop_interrupted();
  }
  for (size_t i = 0; i < M; i++) INTEGER(flags)[i] = fl[i];
  SET_VECTOR_ELT(r, 0, out);
  SET_VECTOR_ELT(r, 1, flags);
  SET_VECTOR_ELT(r, 2, Rf_ScalarReal((double)nflagged));
  SET_VECTOR_ELT(r, 3, info_list(&info));
  UNPROTECT(3);
  return r;
}

/* ---- models ---- */

static void model_finalizer(SEXP p) {
  gfi_model *m = (gfi_model *)R_ExternalPtrAddr(p);
  if (m) gfi_model_free(m);
  R_ClearExternalPtr(p);
}

/* A parsed model in an external pointer (protected by the caller). */
static SEXP model_parse(SEXP spec, SEXP dim, gfi_model **out) {
  if (!Rf_isString(spec) || LENGTH(spec) != 1) gfi_r_stop(GFI_EMODEL, "spec", "spec must be one string");
  int D = Rf_asInteger(dim);
  if (D < 1 || D == NA_INTEGER) gfi_r_stop(GFI_EDIM, "dim", "dim must be an integer >= 1");
  gfi_errinfo err;
  gfi_errinfo_clear(&err);
  gfi_model *m = NULL;
  int st = gfi_model_parse(&m, CHAR(STRING_ELT(spec, 0)), (size_t)D, &err);
  if (st) gfi_r_stop(st, "spec", "model '%s': %s%s%s%s", CHAR(STRING_ELT(spec, 0)), gfi_strerror(st),
                     err.msg[0] ? " (" : "", err.msg, err.msg[0] ? ")" : "");
  SEXP p = PROTECT(R_MakeExternalPtr(m, Rf_install("gfi_model"), R_NilValue));
  R_RegisterCFinalizerEx(p, model_finalizer, TRUE);
  UNPROTECT(1);
  *out = m;
  return p;
}

SEXP C_model_describe(SEXP spec, SEXP dim) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  SEXP r = PROTECT(Rf_mkString(gfi_model_describe(m)));
  (void)p;
  UNPROTECT(2);
  return r;
}

/* n points from RNG stream (seed, stream): n x D row-major (the caller reshapes). */
SEXP C_model_sample(SEXP spec, SEXP dim, SEXP n, SEXP seed, SEXP stream) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  double nv = Rf_asReal(n);
  if (!(nv >= 0 && nv <= 1e12) || nv != floor(nv)) gfi_r_stop(GFI_EINVAL, "n", "n must be an integer >= 0");
  size_t D = gfi_model_dim(m), N = (size_t)nv;
  uint64_t s = as_seed(seed, "seed"), k = as_seed(stream, "stream");
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)(N * D)));
  gsl_rng *r = gfi_rng_stream(s, k);
  if (!r) gfi_r_stop(GFI_ENOMEM, "n", "out of memory");
  int st = gfi_model_sample(m, r, N, REAL(out));
  gsl_rng_free(r);
  check(st, "n", "sampling");
  (void)p;
  UNPROTECT(2);
  return out;
}

static SEXP model_points(SEXP spec, SEXP dim, SEXP x, int cf) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  size_t M, D;
  double *xv = as_rows(x, cf ? "t" : "x", &M, &D);
  if (D != gfi_model_dim(m)) gfi_r_stop(GFI_EDIM, cf ? "t" : "x", "%zu columns for a %zu-D model", D, gfi_model_dim(m));
  SEXP out;
  if (!cf) {
    out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)M));
    check(gfi_model_pdf(m, M, xv, REAL(out)), "x", "model density");
  } else {
    out = PROTECT(Rf_allocVector(CPLXSXP, (R_xlen_t)M));
    double *re = (double *)R_alloc(M ? M : 1, sizeof(double)), *im = (double *)R_alloc(M ? M : 1, sizeof(double));
    check(gfi_model_cf(m, M, xv, re, im), "t", "model characteristic function");
    for (size_t i = 0; i < M; i++) {
      COMPLEX(out)[i].r = re[i];
      COMPLEX(out)[i].i = im[i];
    }
  }
  (void)p;
  UNPROTECT(2);
  return out;
}

SEXP C_model_pdf(SEXP spec, SEXP dim, SEXP x) { return model_points(spec, dim, x, 0); }
SEXP C_model_cf(SEXP spec, SEXP dim, SEXP t) { return model_points(spec, dim, t, 1); }

/* ---- MISE ---- */

static SEXP mise_list(const gfi_mise_result *r) {
  const char *nm[] = {"mise", "se", "lo95", "hi95", "bias2", "var", "nreps", "bias2.in", "bias2.out", ""};
  SEXP v = PROTECT(Rf_mkNamed(VECSXP, nm));
  double vals[] = {r->mise, r->se, r->lo95, r->hi95, r->bias2, r->var, (double)r->nreps, r->bias2_in, r->bias2_out};
  for (int i = 0; i < 9; i++) SET_VECTOR_ELT(v, i, Rf_ScalarReal(vals[i]));
  UNPROTECT(1);
  return v;
}

static const char *mise_param(int st) {
  return st == GFI_ERADIUS || st == GFI_ERANGE || st == GFI_EDIM ? "R" : st == GFI_EORDER ? "phi"
       : st == GFI_EEMPTY ? "N" : st == GFI_EUNSUPPORTED || st == GFI_EQUAD ? "model" : "R";
}

static double as_N(SEXP N) {
  double v = Rf_asReal(N);
  if (!(v >= 1) || !isfinite(v)) gfi_r_stop(GFI_EEMPTY, "N", "N must be a number >= 1, got %g", v);
  return v;
}

static double *radii(SEXP R, size_t D, const char *name) {
  if (!Rf_isReal(R)) gfi_r_stop(GFI_EINVAL, name, "%s must be numeric", name);
  if ((size_t)XLENGTH(R) != D) gfi_r_stop(GFI_EDIM, name, "%s has %d values for %zu axes", name, (int)XLENGTH(R), D);
  for (size_t j = 0; j < D; j++)
    if (!(REAL(R)[j] > 0) || !isfinite(REAL(R)[j]))
      gfi_r_stop(GFI_ERADIUS, name, "%s[%zu] = %g: must be positive and finite", name, j + 1, REAL(R)[j]);
  return REAL(R);
}

SEXP C_mise_exact(SEXP spec, SEXP dim, SEXP phi, SEXP N, SEXP R, SEXP resolution, SEXP threads) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  gfi_kernel k;
  make_kernel(&k, phi);
  double *Rv = radii(R, gfi_model_dim(m), "R");
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = Rf_asInteger(threads);
  if (!Rf_isNull(resolution)) o.resolution = Rf_asReal(resolution);
  gfi_mise_result res;
  int st = gfi_mise_exact(m, &k, as_N(N), Rv, &o, &res);
  check(st, mise_param(st), "exact MISE");
  (void)p;
  UNPROTECT(1);
  return mise_list(&res);
}

SEXP C_mise_mc(SEXP spec, SEXP dim, SEXP phi, SEXP N, SEXP R, SEXP nreps, SEXP seed, SEXP ise, SEXP parts,
               SEXP method, SEXP tol, SEXP threads) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  gfi_kernel k;
  make_kernel(&k, phi);
  double *Rv = radii(R, gfi_model_dim(m), "R");
  double Nv = as_N(N), nr = Rf_asReal(nreps);
  if (Nv != floor(Nv) || Nv > 1e15) gfi_r_stop(GFI_EEMPTY, "N", "N must be an integer >= 1");
  if (!(nr >= 2 && nr <= 1e9) || nr != floor(nr)) gfi_r_stop(GFI_EINVAL, "nreps", "nreps must be an integer >= 2");
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = Rf_asInteger(threads);
  o.base.seed = as_seed(seed, "seed");
  o.base.method = (gfi_method)Rf_asInteger(method);
  o.base.tol = Rf_asReal(tol);
  o.ise = (gfi_ise_method)Rf_asInteger(ise);
  o.parts = Rf_asLogical(parts) == TRUE;
  gfi_mise_result res;
  SEXP ises = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)nr));
  int st = gfi_mise_mc(m, &k, (size_t)Nv, Rv, (size_t)nr, &o, &res, REAL(ises));
  check(st, mise_param(st), "Monte-Carlo MISE");
  SEXP r = PROTECT(mise_list(&res));
  Rf_setAttrib(r, Rf_install("ise"), ises);
  (void)p;
  UNPROTECT(3);
  return r;
}

SEXP C_ropt(SEXP spec, SEXP dim, SEXP phi, SEXP N, SEXP dir, SEXP threads) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  gfi_kernel k;
  make_kernel(&k, phi);
  double *Rdir = Rf_isNull(dir) ? NULL : radii(dir, gfi_model_dim(m), "direction");
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = Rf_asInteger(threads);
  gfi_mise_result res;
  double r = 0;
  int st = gfi_ropt(m, &k, as_N(N), Rdir, &o, &r, &res);
  check(st, st == GFI_ERADIUS ? "direction" : mise_param(st), "MISE-optimal radius");
  SEXP out = PROTECT(mise_list(&res));
  Rf_setAttrib(out, Rf_install("r"), Rf_ScalarReal(r));
  (void)p;
  UNPROTECT(2);
  return out;
}

SEXP C_mise_gauss(SEXP spec, SEXP dim, SEXP N, SEXP H) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  size_t hn, hd, D = gfi_model_dim(m);
  double *Hv = as_rows(H, "H", &hn, &hd);
  if (hn != D || hd != D) gfi_r_stop(GFI_EDIM, "H", "H is %zu x %zu for a %zu-D model", hn, hd, D);
  gfi_mise_result res;
  int st = gfi_mise_gauss_exact(m, as_N(N), Hv, &res);
  check(st, st == GFI_EBANDWIDTH ? "H" : "model", "Gaussian exact MISE");
  (void)p;
  UNPROTECT(1);
  return mise_list(&res);
}

SEXP C_mise_gauss_hopt(SEXP spec, SEXP dim, SEXP N) {
  gfi_model *m;
  SEXP p = PROTECT(model_parse(spec, dim, &m));
  gfi_mise_result res;
  double h = 0;
  int st = gfi_mise_gauss_hopt(m, as_N(N), &h, &res);
  check(st, "model", "MISE-optimal bandwidth");
  SEXP out = PROTECT(mise_list(&res));
  Rf_setAttrib(out, Rf_install("h"), Rf_ScalarReal(h));
  (void)p;
  UNPROTECT(2);
  return out;
}

/* ---- library facts ---- */

SEXP C_info(void) {
  const char *nm[] = {"version", "threads", "openmp", ""};
  SEXP r = PROTECT(Rf_mkNamed(VECSXP, nm));
  SET_VECTOR_ELT(r, 0, Rf_mkString(GFI_VERSION));
  SET_VECTOR_ELT(r, 1, Rf_ScalarInteger(gfi_threads_available()));
  SET_VECTOR_ELT(r, 2, Rf_ScalarLogical(gfi_have_openmp()));
  UNPROTECT(1);
  return r;
}

SEXP C_kernel_A(SEXP phi) {
  gfi_kernel k;
  make_kernel(&k, phi);
  return Rf_ScalarReal(k.A);
}

/* 1 when p is an external pointer that still holds something (not after readRDS). */
SEXP C_ptr_ok(SEXP p) {
  return Rf_ScalarLogical(TYPEOF(p) == EXTPTRSXP && R_ExternalPtrAddr(p) != NULL);
}

SEXP C_density_rates(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_have_rates(void);

#define CALLDEF(name, n) {#name, (DL_FUNC)&name, n}
static const R_CallMethodDef call_methods[] = {
  CALLDEF(C_density_plan, 8), CALLDEF(C_density_eval, 3), CALLDEF(C_density_grid, 4),
  CALLDEF(C_bandwidth, 5), CALLDEF(C_gauss_lscv, 3), CALLDEF(C_select_lscv, 8),
  CALLDEF(C_select_loocv, 10), CALLDEF(C_lscv, 6), CALLDEF(C_nw_plan, 9), CALLDEF(C_nw_eval, 2),
  CALLDEF(C_model_describe, 2), CALLDEF(C_model_sample, 5), CALLDEF(C_model_pdf, 3),
  CALLDEF(C_model_cf, 3), CALLDEF(C_mise_exact, 7), CALLDEF(C_mise_mc, 12), CALLDEF(C_ropt, 6),
  CALLDEF(C_mise_gauss, 4), CALLDEF(C_mise_gauss_hopt, 3), CALLDEF(C_info, 0), CALLDEF(C_kernel_A, 1), CALLDEF(C_ptr_ok, 1), CALLDEF(C_density_rates, 10), CALLDEF(C_have_rates, 0),
  {NULL, NULL, 0}};

void R_init_gfi(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}
