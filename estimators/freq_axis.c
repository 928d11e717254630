/* The frequency axes of the estimators' quadratures (freq_axis.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "freq_axis.h"
#include "bandlimited.h"
#include "kernel_internal.h"
#include "gfi/status.h"
#include "../lib/gauss_legendre.h"

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
    size_t n = bl_gl_count(a, deg, logt, sp->nmin);
    if (n == 0) return GFI_ERANGE;
    ns[k] = n;
    if (nsub[k] > FA_AXIS_MAX / n || total > FA_AXIS_MAX - nsub[k] * n) return GFI_ERANGE;
    total += nsub[k] * n;
    err += (double)nsub[k] * sp->amp * mult / (2 * M_PI) * h / 2 * exp(bl_gl_log_bound(n, a, deg));
  }
  ax->w = malloc(total * sizeof *ax->w);
  ax->gw = malloc(total * sizeof *ax->gw);
  ax->kap = malloc(total * sizeof *ax->kap);
  double *gx = malloc(2048 * sizeof *gx), *gwt = malloc(2048 * sizeof *gwt);
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
