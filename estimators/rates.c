/* Rate theorems: claimed rates, classical rates, fitted exponents. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/rates.h"

const char *gfi_theorem_name(gfi_theorem th) {
  switch (th) {
  case GFI_THM_1: return "1";
  case GFI_THM_3A: return "3a";
  case GFI_THM_3B: return "3b";
  }
  return NULL;
}

gfi_theorem gfi_theorem_parse(const char *s) {
  if (!s) return 0;
  if (!strcmp(s, "1")) return GFI_THM_1;
  if (!strcmp(s, "3a")) return GFI_THM_3A;
  if (!strcmp(s, "3b")) return GFI_THM_3B;
  return 0;
}

int gfi_theorem_default_l(gfi_theorem th) {
  return th == GFI_THM_3A ? 1 : th == GFI_THM_3B ? 2 : th == GFI_THM_1 ? 4 : 0;
}

int gfi_rate_claim(gfi_theorem th, gfi_smooth_class cls, double order, size_t D, double N,
                   double *log_rate, double *log_R) {
  if (!log_rate || !log_R || !(N > 1) || D < 1) return GFI_EINVAL;
  double lN = log(N), d = (double)D;
  switch (th) {
  case GFI_THM_1:
  case GFI_THM_3B:
    *log_rate = -2.0 / (d + 2) * lN;
    *log_R = lN / (d + 2);
    return GFI_OK;
  case GFI_THM_3A:
    if (cls == GFI_SUPERSMOOTH) {
      *log_rate = d / order * log(lN) - lN;
      *log_R = log(lN) / order;
      return GFI_OK;
    }
    if (!(order > 1)) return GFI_EINVAL;
    *log_rate = -(order - 1) / (d + order - 1) * lN;
    *log_R = lN / (d + order - 1);
    return GFI_OK;
  }
  return GFI_EINVAL;
}

double gfi_rate_classical(int l, gfi_smooth_class cls, double order, size_t D) {
  double q = l == 1 ? INFINITY : (l == 2 ? 1.0 : 2.0);
  double two_s = cls == GFI_SUPERSMOOTH ? 2 * q : fmin(2 * q, 2 * order - 1);
  if (isinf(two_s)) return -1.0;
  return -two_s / (two_s + (double)D);
}

/* slope of y against x = log N over [first, n) by least squares */
static double ls_slope(const double *x, const double *y, size_t first, size_t n) {
  double mx = 0, my = 0, m = (double)(n - first);
  for (size_t i = first; i < n; i++) mx += x[i], my += y[i];
  mx /= m;
  my /= m;
  double sxy = 0, sxx = 0;
  for (size_t i = first; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxy / sxx;
}

int gfi_rate_check_fit(gfi_theorem th, const gfi_model *m, int l, size_t n, const double *N,
                       const double *Ropt, const double *mise, const double *mise_se,
                       double fit_decades, double slack, gfi_rate_check *out) {
  if (!m || !N || !Ropt || !mise || !out || !gfi_theorem_name(th)) return GFI_EINVAL;
  if (n < 3) return GFI_EEMPTY;
  memset(out, 0, sizeof *out);
  int st = gfi_model_smoothness(m, &out->cls, &out->order);
  if (st) return st;
  out->theorem = th;
  out->l = l;
  out->D = gfi_model_dim(m);
  out->condition_met = 1;
  out->condition = "met";
  if (th == GFI_THM_1 && !gfi_model_is_c2(m)) {
    out->condition_met = 0;
    out->condition = "p not C^2";
  }
  double lim = N[n - 1] / pow(10.0, fit_decades) * (1 - 1e-12);
  size_t first = 0;
  while (first < n && N[first] < lim) first++;
  if (n - first < 3) first = n - 3;
  out->first = first;
  out->n = n;
  double *x = malloc(6 * n * sizeof *x);
  if (!x) return GFI_ENOMEM;
  double *y = x + n, *yr = x + 2 * n, *g = x + 3 * n, *gr = x + 4 * n, *sg = x + 5 * n;
  for (size_t i = 0; i < n; i++) {
    if (!(N[i] > 1) || !(mise[i] > 0) || !(Ropt[i] > 0)) {
      free(x);
      return GFI_EINVAL;
    }
    x[i] = log(N[i]);
    y[i] = log(mise[i]);
    yr[i] = log(Ropt[i]);
    st = gfi_rate_claim(th, out->cls, out->order, out->D, N[i], g + i, gr + i);
    if (st) {
      free(x);
      return st;
    }
    if (mise_se) sg[i] = mise_se[i] / mise[i];
  }
  st = gfi_fit_line(x, y, mise_se ? sg : NULL, first, n, 1, &out->fit);
  if (!st) st = gfi_fit_line(x, yr, NULL, first, n, 0, &out->fit_R);
  if (!st) {
    out->claimed = ls_slope(x, g, first, n);
    out->claimed_R = ls_slope(x, gr, first, n);
    out->classical = gfi_rate_classical(l, out->cls, out->order, out->D);
    if (l == 1 && out->cls == GFI_SUPERSMOOTH) {
      /* (log N)^(D/alpha)/N: the same local slope as the claim */
      for (size_t i = 0; i < n; i++) g[i] = out->D / out->order * log(x[i]) - x[i];
      out->classical = ls_slope(x, g, first, n);
    }
    double lo = out->fit.slope_lo95, hi = out->fit.slope_hi95, c = out->claimed;
    if (hi < c - slack) {
      out->verdict = "faster than claimed";
      out->consistent = 1;
    } else if (lo <= c + slack) {
      out->verdict = "at the claimed rate";
      out->consistent = 1;
    } else {
      out->verdict = "SLOWER than claimed";
      out->consistent = 0;
    }
  }
  free(x);
  return st;
}
