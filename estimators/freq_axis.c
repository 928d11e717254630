/* The frequency axes of the estimators' quadratures (freq_axis.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "freq_axis.h"
#include "kernel_internal.h"
#include "gfi/status.h"
#include "../lib/gauss_legendre.h"

/* log of the Gauss-Legendre error bound for int_{-1}^{1} p(t) e^{i a t} dt,
 * deg p = deg, |p| <= 1 on [-1, 1], n nodes; minimised over rho. The rule
 * with n nodes is exact to degree 2n - 1, so the Chebyshev coefficients
 * from degree 2n on (|a_k| <= 2 M rho^-k) make the error: rho^(-2(n-1)) in
 * Trefethen's bound, whose n counts n + 1 nodes. (Read with n nodes the
 * bound was short by rho^2, large where a is small: l = 1, R = 1, one
 * point, a query 0.5 away gave 2.4e-9 against a bound of 1.1e-11.) */
/* The bound's terms free of n at each rho of the grid (head: the first
 * three, tail: the last), made once per (a, deg): the search for n then
 * costs a multiply-add per rho instead of a pow and two logs, with the
 * same operations in the same order as the whole expression, so the same
 * bits. */
#define GL_RHO_MAX 400
typedef struct {
  size_t m;
  double head[GL_RHO_MAX], lr[GL_RHO_MAX], tail[GL_RHO_MAX];
} gl_terms;

static void gl_terms_make(gl_terms *g, double a, int deg) {
  g->m = 0;
  for (double t = -4.0; t <= 3.0 && g->m < GL_RHO_MAX; t += 0.02) {
    double rho = 1.0 + pow(10.0, t);
    double lr = log(rho);
    g->head[g->m] = log(64.0 / 15.0) + deg * lr + 0.5 * a * (rho - 1.0 / rho);
    g->lr[g->m] = lr;
    g->tail[g->m] = log(rho * rho - 1.0);
    g->m++;
  }
}

static double gl_terms_bound(const gl_terms *g, size_t n) {
  double best = INFINITY;
  for (size_t i = 0; i < g->m; i++) {
    double v = g->head[i] - 2.0 * (double)(n - 1) * g->lr[i] - g->tail[i];
    if (v < best) best = v;
  }
  return best;
}

double fa_gl_log_bound(size_t n, double a, int deg) {
  gl_terms g;
  gl_terms_make(&g, a, deg);
  return gl_terms_bound(&g, n);
}

/* Smallest n with fa_gl_log_bound <= logt (0 when none up to FA_N_SUB_MAX). */
size_t fa_gl_count(double a, int deg, double logt, size_t nmin) {
  gl_terms g;
  gl_terms_make(&g, a, deg);
  size_t lo = nmin, hi = FA_N_SUB_MAX;
  if (gl_terms_bound(&g, hi) > logt) return 0;
  if (gl_terms_bound(&g, lo) <= logt) return lo;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (gl_terms_bound(&g, mid) <= logt) hi = mid;
    else lo = mid;
  }
  return hi;
}

void fa_axis_free(fa_axis *a) {
  free(a->w);
  free(a->gw);
  free(a->kap);
  memset(a, 0, sizeof *a);
}

int fa_gl_axis(const gfi_kernel *kern, double R, double S, int half, double e, const fa_gl_spec *sp,
               fa_axis *ax) {
  memset(ax, 0, sizeof *ax);
  const int deg = sp->deg;
  double kn[KERNEL_KNOTS_MAX];
  int nkn = kernel_knots(kern, kn);
  if (nkn < 2) return GFI_EINVAL;
  double knots[KERNEL_KNOTS_MAX + 1];
  int nk = 0;
  if (!half) {
    for (int j = 0; j < nkn; j++) knots[nk++] = kn[j] * R;
  } else {
    knots[nk++] = 0;
    for (int j = 0; j < nkn; j++)
      if (kn[j] > 0) knots[nk++] = kn[j] * R;
  }
  const double mult = half ? 2.0 : 1.0;
  size_t nsub[2 * GFI_PHI_MAXPOW + 1], ns[2 * GFI_PHI_MAXPOW + 1], nsub_tot = 0, total = 0;
  for (int k = 0; k + 1 < nk; k++) {
    double a = (knots[k + 1] - knots[k]) * S / 2;
    double m = ceil(a / FA_ALPHA_SUB);
    if (!(m >= 1)) m = 1;
    if (m > (double)FA_AXIS_MAX) return GFI_ERANGE;
    nsub[k] = (size_t)m;
    nsub_tot += nsub[k];
  }
  double err = 0;
  for (int k = 0; k + 1 < nk; k++) {
    double h = (knots[k + 1] - knots[k]) / (double)nsub[k], a = h * S / 2;
    double logt = log(e * sp->scale / (double)nsub_tot) - log(sp->amp * mult / (2 * M_PI) * h / 2);
    size_t n = fa_gl_count(a, deg, logt, sp->nmin);
    if (n == 0) return GFI_ERANGE;
    ns[k] = n;
    if (nsub[k] > FA_AXIS_MAX / n || total > FA_AXIS_MAX - nsub[k] * n) return GFI_ERANGE;
    total += nsub[k] * n;
    err += (double)nsub[k] * sp->amp * mult / (2 * M_PI) * h / 2 * exp(fa_gl_log_bound(n, a, deg));
  }
  ax->w = malloc(total * sizeof *ax->w);
  ax->gw = malloc(total * sizeof *ax->gw);
  ax->kap = malloc(total * sizeof *ax->kap);
  double *gx = malloc(FA_N_SUB_MAX * sizeof *gx), *gwt = malloc(FA_N_SUB_MAX * sizeof *gwt);
  if (!ax->w || !ax->gw || !ax->kap || !gx || !gwt) {
    free(gx);
    free(gwt);
    fa_axis_free(ax);
    return GFI_ENOMEM;
  }
  size_t at = 0, tab = 0;
  for (int k = 0; k + 1 < nk; k++) {
    if (ns[k] != tab) {
      gl_rule(ns[k], gx, gwt);
      tab = ns[k];
    }
    double h = (knots[k + 1] - knots[k]) / (double)nsub[k];
    for (size_t m = 0; m < nsub[k]; m++) {
      double a = knots[k] + (double)m * h, b = (m + 1 == nsub[k]) ? knots[k + 1] : a + h;
      double c = 0.5 * (a + b), hw = 0.5 * (b - a);
      for (size_t i = 0; i < ns[k]; i++) {
        double w = c + hw * gx[i];
        ax->w[at] = w;
        ax->gw[at] = mult / (2 * M_PI) * hw * gwt[i];
        ax->kap[at] = gfi_kernel_kappa(kern, w / R);
        at++;
      }
    }
  }
  free(gx);
  free(gwt);
  ax->n = total;
  ax->err = err / sp->scale;
  return GFI_OK;
}
