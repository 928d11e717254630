/* The exact MISE of the generalized Fourier density estimator by Plancherel
 * (docs/theory.md section 3), the Gaussian-KDE exact MISE of Marron & Wand, and
 * the MISE-optimal radius and bandwidth. See gfi/mise.h for the method. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "chol.h"
#include "mise_internal.h"
#include "par.h"
#include "gsl_quiet.h"
#include "gfi/validate.h"
#include "gfi/select.h"
#include "alloc.h"
#include "fail.h"

#define MAX_NODES PL_MAX_NODES

void gfi_mise_default_opts(gfi_mise_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  gfi_default_opts(&o->base);
  o->ise = GFI_ISE_AUTO;
  o->parts = 1;
  o->resolution = 1.0;
  o->grid_halfwidth = 0;
  o->grid_cells = 0;
  o->max_points = 0;
}

int mise_opts_check(const gfi_mise_opts *o) {
  int st = gfi_opts_check(&o->base);
  if (st) return st;
  if (o->ise != GFI_ISE_AUTO && o->ise != GFI_ISE_PLANCHEREL && o->ise != GFI_ISE_GRID)
    return fail_param(GFI_EINVAL, "ise");
  if (!(o->resolution > 0) || !isfinite(o->resolution)) return fail_param(GFI_EINVAL, "resolution");
  if (!(o->grid_halfwidth >= 0) || !isfinite(o->grid_halfwidth)) return fail_param(GFI_EINVAL, "grid_halfwidth");
  if (!(o->max_points >= 0)) return fail_param(GFI_EINVAL, "max_points");
  return GFI_OK;
}

/* ---- B-spline constants ------------------------------------------------- */


int gfi_mise_exact_supported(const gfi_model *m) {
  psi_info pi;
  return m && psi_info_init(m, &pi) == GFI_OK;
}

static int resolve_threads(const gfi_mise_opts *o) {
  gfi_opts g;
  gfi_default_opts(&g);
  g.nthreads = o ? o->base.nthreads : 0;
  return gfi_threads_resolve(&g);
}

int gfi_mise_exact(const gfi_model *m, const gfi_kernel *k, double N, const double *R,
                   const gfi_mise_opts *opts, gfi_mise_result *res) {
  if (!m || !R || !res) return GFI_EINVAL;
  int st = gfi_kernel_check_band(k);
  if (st) return st;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  size_t D = gfi_model_dim(m);
  if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
  st = gfi_check_radii(R, D, NULL);
  if (st) return st;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  st = mise_opts_check(&o);
  if (st) return st;
  psi_info pi;
  st = psi_info_init(m, &pi);
  if (st) return st;
  mise_integrals I;
  st = mise_integrals_compute(&pi, k, R, o.resolution, resolve_threads(&o), &I);
  if (st == GFI_ERANGE) {
    memset(res, 0, sizeof *res);
    for (size_t j = 0; j < D; j++) res->nodes[j] = I.nodes[j];
  }
  if (st) return st;
  double c = pow(2 * M_PI, -(double)D);
  double kb2 = 1, cl = gfi_kappa_sq_integral(k);
  for (size_t j = 0; j < D; j++) kb2 *= cl * R[j]; /* int Kbar^2 = prod_j c_l R_j */
  memset(res, 0, sizeof *res);
  res->bias2_in = c * I.bias_in;
  res->bias2_out = c * I.bias_out;
  res->bias2 = res->bias2_in + res->bias2_out;
  res->var = c * (kb2 - I.k2) / N;
  res->mise = res->bias2 + res->var;
  res->se = 0;
  res->lo95 = res->hi95 = res->mise;
  res->nreps = 0;
  for (size_t j = 0; j < D; j++) res->nodes[j] = I.nodes[j];
  if (!isfinite(res->mise)) return GFI_EQUAD;
  return GFI_OK;
}

/* ---- Gaussian KDE (Marron & Wand 1992) ----------------------------------- */

/* log N(x; 0, S) for a D x D SPD S; GFI_ENOTPD otherwise. */
static int log_normal_density(size_t D, const double *x, const double *S, double *out) {
  if (D == 0) return GFI_EDIM;
  if (D > SIZE_MAX / sizeof(double) / (D + 1)) return GFI_ENOMEM;
  double *buf = gfi_malloc3(D, (D + 1), sizeof *buf);
  if (!buf) return GFI_ENOMEM;
  double *Lbuf = buf, *vbuf = buf + D * D;
  int st = GFI_OK;
  /* The factor without GSL, whose Cholesky reports a matrix that is not
   * positive definite through GSL's error handler (chol.h). */
  if (chol_lower(D, S, Lbuf) != 0) {
    st = GFI_ENOTPD;
  } else {
    for (size_t a = 0; a < D; a++) vbuf[a] = x[a];
    gsl_matrix_view L = gsl_matrix_view_array(Lbuf, D, D);
    gsl_vector_view v = gsl_vector_view_array(vbuf, D);
    double ld = 0;
    for (size_t a = 0; a < D; a++) ld += log(gsl_matrix_get(&L.matrix, a, a));
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, &L.matrix, &v.vector);
    double q = 0;
    for (size_t a = 0; a < D; a++) q += gsl_vector_get(&v.vector, a) * gsl_vector_get(&v.vector, a);
    *out = -0.5 * q - ld - 0.5 * (double)D * log(2 * M_PI);
  }
  free(buf);
  return st;
}

int gfi_mise_gauss_exact(const gfi_model *m, double N, const double *H, gfi_mise_result *res) {
  if (!m || !H || !res) return GFI_EINVAL;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE) return GFI_EUNSUPPORTED;
  size_t K, D = gfi_model_dim(m);
  const double *w, *mu, *S;
  int st = gfi_model_mixture_parts(m, &K, &w, &mu, &S);
  if (st) return st;
  for (size_t q = 0; q < D * D; q++)
    if (!isfinite(H[q])) return GFI_EBANDWIDTH;
  double *Sg = gfi_malloc3(D, D, sizeof *Sg), *dx = gfi_malloc2(D, sizeof *dx);
  if (!Sg || !dx) {
    free(Sg);
    free(dx);
    return GFI_ENOMEM;
  }
  /* |H|^-1/2 via log N(0; 0, H) = -D/2 log(2 pi) - log|H|/2 */
  for (size_t q = 0; q < D; q++) dx[q] = 0;
  double lnH;
  st = log_normal_density(D, dx, H, &lnH);
  if (st) {
    free(Sg);
    free(dx);
    return st == GFI_ENOTPD ? GFI_EBANDWIDTH : st;
  }
  /* (4 pi)^-D/2 |H|^-1/2 = 2^-D/2 N(0; 0, H) */
  double rk = exp(lnH - 0.5 * (double)D * log(2.0));
  double o[3] = {0, 0, 0};
  for (size_t a = 0; a < K && !st; a++)
    for (size_t b = 0; b < K && !st; b++) {
      for (size_t q = 0; q < D; q++) dx[q] = mu[a * D + q] - mu[b * D + q];
      for (int c = 0; c < 3 && !st; c++) {
        for (size_t q = 0; q < D * D; q++) Sg[q] = c * H[q] + S[a * D * D + q] + S[b * D * D + q];
        double ln;
        st = log_normal_density(D, dx, Sg, &ln);
        o[c] += w[a] * w[b] * exp(ln);
      }
    }
  free(Sg);
  free(dx);
  if (st) return st;
  memset(res, 0, sizeof *res);
  res->bias2 = o[2] - 2 * o[1] + o[0];
  res->var = (rk - o[2]) / N;
  res->mise = res->bias2 + res->var;
  res->lo95 = res->hi95 = res->mise;
  res->bias2_in = NAN;
  res->bias2_out = NAN;
  return GFI_OK;
}

/* ---- one-dimensional minimisation on a log scale ---------------------------- */

/* The MISE at the scale r (a radius or a bandwidth). */
typedef int (*scalefun)(double r, void *ctx, gfi_mise_result *res);

/* The last MIN_MEMO points evaluated: the bracket's points come back in the
 * radius search's scan, and each evaluation is a full quadrature. The memo
 * returns the very result computed before, so the search sees the same
 * values at the same r. best: the lowest MISE seen and its r, the result
 * returned where the search ends on it. */
#define MIN_MEMO 8
typedef struct {
  scalefun f;
  void *ctx;
  size_t nmemo, next;
  double mr_r[MIN_MEMO];
  gfi_mise_result mr[MIN_MEMO];
  double best_r;
  gfi_mise_result best;
} min_ctx;

static int memo_eval(min_ctx *c, double r, gfi_mise_result *res) {
  for (size_t k = 0; k < c->nmemo; k++)
    if (c->mr_r[k] == r) {
      *res = c->mr[k];
      return GFI_OK;
    }
  int st = c->f(r, c->ctx, res);
  if (st) return st;
  c->mr_r[c->next] = r;
  c->mr[c->next] = *res;
  c->next = (c->next + 1) % MIN_MEMO;
  if (c->nmemo < MIN_MEMO) c->nmemo++;
  if (res->mise < c->best.mise || !(c->best_r > 0)) {
    c->best_r = r;
    c->best = *res;
  }
  return GFI_OK;
}

/* log MISE at r; an error or a MISE that is not positive ends the search
 * (GFI_EQUAD for the latter). */
static int min_eval(min_ctx *c, double r, double *v) {
  gfi_mise_result res;
  int st = memo_eval(c, r, &res);
  if (st) return st;
  if (!(res.mise > 0)) return GFI_EQUAD;
  *v = log(res.mise);
  return GFI_OK;
}

static int min_radius_fn(void *ctx, double r, double *v) { return min_eval(ctx, r, v); }

/* Bracket a minimum of f (log MISE as a function of x = log r) starting at
 * x0, expanding geometrically within [xlo, xhi]; then the library's radius
 * search (gfi_minimize_radius: a scan of the bracket, the finer scan of its
 * lowest local minima and Brent's method to 1e-5 in log r) on it. */
#define MIN_SCAN 3
static int minimise_log(scalefun f, void *ctx, double x0, double xlo, double xhi, double *ropt,
                        gfi_mise_result *res) {
  min_ctx c;
  memset(&c, 0, sizeof c);
  c.f = f;
  c.ctx = ctx;
  double step = log(2.0);
  double a = x0 - step, b = x0, cc = x0 + step;
  double fa, fb, fc;
  int st = min_eval(&c, exp(a), &fa);
  if (!st) st = min_eval(&c, exp(b), &fb);
  if (!st) st = min_eval(&c, exp(cc), &fc);
  if (st) return st;
  int it = 0;
  while (!(fb < fa && fb < fc)) {
    if (++it > 200) return GFI_EQUAD;
    if (fa < fc) { /* go left */
      step *= 1.6;
      cc = b, fc = fb;
      b = a, fb = fa;
      a = b - step;
      if (a < xlo) return GFI_EQUAD;
      st = min_eval(&c, exp(a), &fa);
    } else {
      step *= 1.6;
      a = b, fa = fb;
      b = cc, fb = fc;
      cc = b + step;
      if (cc > xhi) return GFI_EQUAD;
      st = min_eval(&c, exp(cc), &fc);
    }
    if (st) return st;
  }
  gfi_select_result sr;
  st = gfi_minimize_radius(min_radius_fn, &c, exp(a), exp(cc), MIN_SCAN, &sr);
  if (st) return st;
  *ropt = sr.R[0];
  if (sr.R[0] == c.best_r) {
    *res = c.best;
    return GFI_OK;
  }
  return memo_eval(&c, sr.R[0], res);
}

typedef struct {
  const gfi_model *m;
  const gfi_kernel *k;
  double N;
  double Rdir[MISE_MAXD];
  size_t D;
  gfi_mise_opts o;
} ropt_ctx;

static int ropt_f(double r, void *p, gfi_mise_result *res) {
  ropt_ctx *c = p;
  double R[MISE_MAXD];
  for (size_t j = 0; j < c->D; j++) R[j] = r * c->Rdir[j];
  return gfi_mise_exact(c->m, c->k, c->N, R, &c->o, res);
}

int gfi_ropt(const gfi_model *m, const gfi_kernel *k, double N, const double *Rdir,
             const gfi_mise_opts *opts, double *r_opt, gfi_mise_result *res) {
  if (!m || !r_opt || !res) return GFI_EINVAL;
  int st = gfi_kernel_check_band(k);
  if (st) return st;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  ropt_ctx c;
  c.m = m;
  c.k = k;
  c.N = N;
  c.D = gfi_model_dim(m);
  if (c.D > MISE_MAXD) return GFI_EUNSUPPORTED;
  for (size_t j = 0; j < c.D; j++) c.Rdir[j] = Rdir ? Rdir[j] : 1.0;
  if (Rdir) {
    st = gfi_check_radii(Rdir, c.D, NULL);
    if (st) return st;
  }
  gfi_mise_default_opts(&c.o);
  if (opts) c.o = *opts;
  st = mise_opts_check(&c.o);
  if (st) return st;
  psi_info pi;
  st = psi_info_init(m, &pi);
  if (st) return st;
  /* start where the kernel's box reaches the scale of |psi|^2, grown with N
   * like the classical rate; the bracket search walks from there */
  double hmin = INFINITY;
  for (size_t j = 0; j < c.D; j++) hmin = fmin(hmin, pi.h[j] / c.Rdir[j]);
  double x0 = log(hmin) + log(N) / (c.D + 4.0);
  return minimise_log(ropt_f, &c, x0, log(1e-8), log(1e14), r_opt, res);
}

typedef struct {
  const gfi_model *m;
  double N;
  size_t D;
} hopt_ctx;

static int hopt_f(double h, void *p, gfi_mise_result *res) {
  hopt_ctx *c = p;
  double H[MISE_MAXD * MISE_MAXD * 4];
  size_t D = c->D;
  if (D > 6) return GFI_EUNSUPPORTED;
  double h2 = h * h;
  for (size_t a = 0; a < D * D; a++) H[a] = 0;
  for (size_t a = 0; a < D; a++) H[a * D + a] = h2;
  return gfi_mise_gauss_exact(c->m, c->N, H, res);
}

int gfi_mise_gauss_hopt(const gfi_model *m, double N, double *h, gfi_mise_result *res) {
  if (!m || !h || !res) return GFI_EINVAL;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE) return GFI_EUNSUPPORTED;
  hopt_ctx c = {m, N, gfi_model_dim(m)};
  if (c.D > 6) return GFI_EUNSUPPORTED;
  size_t K;
  const double *w, *mu, *S;
  int st = gfi_model_mixture_parts(m, &K, &w, &mu, &S);
  if (st) return st;
  double smin = INFINITY;
  for (size_t a = 0; a < K; a++)
    for (size_t j = 0; j < c.D; j++) smin = fmin(smin, sqrt(S[a * c.D * c.D + j * c.D + j]));
  double x0 = log(smin) - log(N) / (c.D + 4.0);
  return minimise_log(hopt_f, &c, x0, log(1e-12), log(1e6), h, res);
}
