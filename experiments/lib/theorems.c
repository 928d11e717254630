/* FourierFormer's rate theorems: the table, the claims, the classical
 * exponents and the verdicts (gfi_exp/theorems.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "gfi_exp/theorems.h"

/* The hypotheses as FourierFormer states them (docs/theory.md section 4).
 * Theorem 1 asks for a kernel with m vanishing moments and a finite
 * absolute moment of order m + 1, and p in C^(m+1): sinc^l has m = 1 for
 * every l >= 3 (its second moment is positive), and |z|^2 sinc^l is
 * integrable only for l >= 4, so the theorem covers l >= 4 with p in C^2. */
static const gfi_exp_theorem TABLE[GFI_EXP_NTHEOREMS] = {
  {GFI_EXP_THM_1, "1", 0, 4, 8, 4, "density, phi = z^l, l >= 4", "p in C^2", "R ~ N^(1/(D+2))",
   "N^(-2/(D+2))", "-2s/(2s+D), 2s = 2q or min(2q, 2beta-1), q = 2", 2,
   {{"kernel", "sinc^l has m = 1 vanishing moment and int |z|^(m+1) |sinc z|^l dz < infinity: l >= 4", "l<4"},
    {"truth", "p in C^(m+1) = C^2 with bounded derivatives", "not-C2"}}},
  {GFI_EXP_THM_2, "2", 1, 6, 8, 6, "Nadaraya-Watson regression, phi = z^l, l >= 6",
   "f and the design density smooth, design density bounded below on the evaluation set", "R ~ N^(1/(D+4))",
   "N^(-4/(D+4))", "-4/(D+4) (a second-order kernel)", 3,
   {{"kernel", "phi = z^l with l >= 6", "l<6"},
    {"design", "f and the design density p twice continuously differentiable", "not-C2"},
    {"design", "p bounded below on the evaluation set", "p-not-bounded-below"}}},
  {GFI_EXP_THM_3A, "3a", 0, 1, 1, 1, "density, phi = z (l = 1)",
   "supersmooth of order alpha, or ordinary smooth of order beta > 1",
   "R = (log N / C)^(1/alpha); ordinary smooth: R ~ N^(1/(D+beta-1))",
   "(log N)^(D/alpha)/N; ordinary smooth: N^(-(beta-1)/(D+beta-1))",
   "-1 up to the logarithm (supersmooth), -(2beta-1)/(2beta-1+D) (ordinary smooth)", 3,
   {{"kernel", "phi = z (the Dirichlet kernel, l = 1)", "l!=1"},
    {"truth", "supersmooth (alpha) or ordinary smooth (beta)", "not-smooth-class"},
    {"truth", "ordinary smooth truths: beta > 1", "beta<=1"}}},
  {GFI_EXP_THM_3B, "3b", 0, 2, 2, 2, "density, phi = z^2 (l = 2)", "supersmooth, or ordinary smooth with beta > 3",
   "R ~ N^(1/(D+2))", "N^(-2/(D+2))", "-2/(2+D) (q = 1)", 3,
   {{"kernel", "phi = z^2 (the Fejer kernel, l = 2)", "l!=2"},
    {"truth", "supersmooth (alpha) or ordinary smooth (beta)", "not-smooth-class"},
    {"truth", "ordinary smooth truths: beta > 3", "beta<=3"}}},
  {GFI_EXP_THM_4, "4", 1, 1, 1, 1, "Nadaraya-Watson regression, phi = z (l = 1)",
   "supersmooth design (alpha) with f p supersmooth, design density bounded below on the evaluation set",
   "R = (log N / 2C)^(1/alpha)", "(log N)^(D/alpha)/N", "-1 up to the logarithm (infinite order)", 3,
   {{"kernel", "phi = z (l = 1)", "l!=1"},
    {"design", "the design density p and f p supersmooth of order alpha", "not-supersmooth"},
    {"design", "p bounded below on the evaluation set", "p-not-bounded-below"}}},
};

/* The powers of sinc a power or polynomial phi carries: bit j for a_j > 0
 * (j = 1..8); 0 for NULL or any other kernel. */
static unsigned kernel_powers(const gfi_kernel *k) {
  if (!k || k->l < 1 || k->l > GFI_PHI_MAXPOW) return 0;
  if (k->kind == GFI_PHI_POW) return 1u << k->l;
  if (k->kind != GFI_PHI_POLY) return 0;
  unsigned s = 0;
  for (int j = 1; j <= k->l; j++)
    if (k->coef[j] > 0) s |= 1u << j;
  return s;
}

/* The lowest power j0 (its tails are the kernel's), 0 when there is none. */
static int kernel_lowest_power(const gfi_kernel *k) {
  unsigned s = kernel_powers(k);
  for (int j = 1; j <= GFI_PHI_MAXPOW; j++)
    if (s & (1u << j)) return j;
  return 0;
}

int gfi_exp_kernel_vanishing_moments(const gfi_kernel *k) {
  int j0 = kernel_lowest_power(k);
  return j0 ? (j0 >= 3 ? 1 : 0) : -1;
}

int gfi_exp_kernel_finite_moment(const gfi_kernel *k) {
  int j0 = kernel_lowest_power(k);
  return j0 ? j0 - 2 : -1;
}

/* append a failing hypothesis' value to buf */
static void add_fail(char *buf, size_t n, size_t *len, const char *what) {
  if (*len >= n) return;
  int w = snprintf(buf + *len, n - *len, "%s%s", *len ? "," : "", what);
  if (w > 0) *len += (size_t)w;
}

int gfi_exp_density_condition(gfi_exp_theorem_id th, const gfi_model *m, const gfi_kernel *k, char *buf, size_t n,
                              int *met) {
  const gfi_exp_theorem *T = gfi_exp_theorem_get(th);
  if (!T || T->regression || !m || !buf || n < 8 || !k) return GFI_EINVAL;
  unsigned pw = kernel_powers(k);
  if (!pw) return k->kind == GFI_PHI_POW || k->kind == GFI_PHI_POLY ? GFI_EINVAL : GFI_EUNSUPPORTED;
  gfi_smooth_class cls;
  double order;
  int known = gfi_model_smoothness(m, &cls, &order) == GFI_OK;
  size_t len = 0;
  buf[0] = '\0';
  switch (th) {
  case GFI_EXP_THM_1:
    if (gfi_exp_kernel_vanishing_moments(k) < 1 || gfi_exp_kernel_finite_moment(k) < 2) add_fail(buf, n, &len, "l<4");
    if (!gfi_model_is_c2(m)) add_fail(buf, n, &len, "not-C2");
    break;
  case GFI_EXP_THM_3A:
  case GFI_EXP_THM_3B: {
    int lneed = th == GFI_EXP_THM_3A ? 1 : 2;
    double bmin = th == GFI_EXP_THM_3A ? 1 : 3;
    if (pw != 1u << lneed) add_fail(buf, n, &len, lneed == 1 ? "l!=1" : "l!=2");
    if (!known) add_fail(buf, n, &len, "not-smooth-class");
    else if (cls == GFI_ORDINARY_SMOOTH && !(order > bmin)) add_fail(buf, n, &len, lneed == 1 ? "beta<=1" : "beta<=3");
    break;
  }
  default: return GFI_EINVAL;
  }
  if (!len) snprintf(buf, n, "met");
  if (met) *met = len == 0;
  return GFI_OK;
}

const gfi_exp_theorem *gfi_exp_theorem_get(gfi_exp_theorem_id id) {
  return (int)id >= 0 && id < GFI_EXP_NTHEOREMS ? &TABLE[id] : NULL;
}

const gfi_exp_theorem *gfi_exp_theorem_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < GFI_EXP_NTHEOREMS; i++)
    if (strcmp(TABLE[i].name, name) == 0) return &TABLE[i];
  return NULL;
}

int gfi_exp_rate_claim(gfi_exp_theorem_id th, gfi_smooth_class cls, double order, size_t D, double N,
                       double *log_rate, double *log_R) {
  if (!log_rate || !log_R || !(N > 1) || D < 1) return GFI_EINVAL;
  double lN = log(N), d = (double)D;
  switch (th) {
  case GFI_EXP_THM_1:
  case GFI_EXP_THM_3B:
    *log_rate = -2.0 / (d + 2) * lN;
    *log_R = lN / (d + 2);
    return GFI_OK;
  case GFI_EXP_THM_2:
    *log_rate = -4.0 / (d + 4) * lN;
    *log_R = lN / (d + 4);
    return GFI_OK;
  case GFI_EXP_THM_3A:
  case GFI_EXP_THM_4:
    if (cls == GFI_SUPERSMOOTH && order > 0) {
      *log_rate = d / order * log(lN) - lN;
      *log_R = log(lN) / order;
      return GFI_OK;
    }
    if (th == GFI_EXP_THM_4 || !(order > 1)) return GFI_EINVAL;
    *log_rate = -(order - 1) / (d + order - 1) * lN;
    *log_R = lN / (d + order - 1);
    return GFI_OK;
  default: return GFI_EINVAL;
  }
}

/* slope of y against x over [first, n) by least squares */
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

int gfi_exp_claimed_slope(gfi_exp_theorem_id th, gfi_smooth_class cls, double order, size_t D, size_t first,
                          size_t n, const double *N, double *slope, double *slope_R) {
  if (!slope || !N || D < 1 || first >= n || n - first < 2) return GFI_EINVAL;
  double d = (double)D, sR;
  switch (th) {
  case GFI_EXP_THM_1:
  case GFI_EXP_THM_3B: *slope = -2.0 / (d + 2), sR = 1.0 / (d + 2); break;
  case GFI_EXP_THM_2: *slope = -4.0 / (d + 4), sR = 1.0 / (d + 4); break;
  case GFI_EXP_THM_3A:
  case GFI_EXP_THM_4:
    if (cls != GFI_SUPERSMOOTH) {
      if (th == GFI_EXP_THM_4 || !(order > 1)) return GFI_EINVAL;
      *slope = -(order - 1) / (d + order - 1), sR = 1.0 / (d + order - 1);
      break;
    } else {
      double *x = gfi_malloc3(3, n, sizeof *x);
      if (!x) return GFI_ENOMEM;
      double *g = x + n, *gr = x + 2 * n;
      int st = GFI_OK;
      for (size_t i = 0; i < n && !st; i++) {
        x[i] = log(N[i]);
        st = gfi_exp_rate_claim(th, cls, order, D, N[i], g + i, gr + i);
      }
      if (!st) {
        *slope = ls_slope(x, g, first, n);
        sR = ls_slope(x, gr, first, n);
      }
      free(x);
      if (st) return st;
    }
    break;
  default: return GFI_EINVAL;
  }
  if (slope_R) *slope_R = sR;
  return GFI_OK;
}

/* q_j, the order at 0 of the transform of sinc^j: infinite for j = 1 (flat
 * near 0), 1 for j = 2, 2 for j >= 3; a polynomial's is the least over its
 * powers. */
static double kernel_order(unsigned pw) {
  double q = INFINITY;
  for (int j = 1; j <= GFI_PHI_MAXPOW; j++)
    if (pw & (1u << j)) q = fmin(q, j == 1 ? INFINITY : (j == 2 ? 1.0 : 2.0));
  return q;
}

double gfi_exp_rate_classical(const gfi_kernel *k, gfi_smooth_class cls, double order, size_t D) {
  unsigned pw = kernel_powers(k);
  if (k && !pw) return NAN;
  double q = k ? kernel_order(pw) : 2.0;
  double two_s = cls == GFI_SUPERSMOOTH ? 2 * q : fmin(2 * q, 2 * order - 1);
  if (isinf(two_s)) return -1.0;
  return -two_s / (two_s + (double)D);
}

gfi_exp_verdict gfi_exp_verdict_of(double lo, double hi, double c, double slack) {
  if (!isfinite(lo) || !isfinite(hi) || !isfinite(c)) return GFI_EXP_NOT_MEASURED;
  if (hi < c - slack) return GFI_EXP_FASTER;
  if (lo <= c + slack) return GFI_EXP_CONSISTENT;
  return GFI_EXP_SLOWER;
}

const char *gfi_exp_verdict_name(gfi_exp_verdict v) {
  switch (v) {
  case GFI_EXP_CONSISTENT: return "consistent";
  case GFI_EXP_FASTER: return "faster-than-claimed";
  case GFI_EXP_SLOWER: return "slower-than-claimed";
  case GFI_EXP_BASELINE: return "baseline";
  case GFI_EXP_NOT_MEASURED: return "not-measured";
  }
  return NULL;
}

int gfi_exp_verdict_consistent(gfi_exp_verdict v) { return v != GFI_EXP_SLOWER; }

int gfi_exp_density_rate_fit(gfi_exp_theorem_id th, const gfi_model *m, const gfi_kernel *k, size_t n,
                             const double *N, const double *Ropt, const double *mise, const double *mise_se,
                             double fit_decades, double slack, gfi_exp_rate_fit *out) {
  const gfi_exp_theorem *T = gfi_exp_theorem_get(th);
  if (!m || !k || !N || !Ropt || !mise || !out || !T || T->regression) return GFI_EINVAL;
  if (!kernel_powers(k)) return k->kind == GFI_PHI_POW || k->kind == GFI_PHI_POLY ? GFI_EINVAL : GFI_EUNSUPPORTED;
  if (n < 3) return GFI_EEMPTY;
  memset(out, 0, sizeof *out);
  int st = gfi_model_smoothness(m, &out->cls, &out->order);
  if (st) return st;
  out->theorem = T;
  out->l = k->l;
  out->D = gfi_model_dim(m);
  st = gfi_exp_density_condition(th, m, k, out->condition, sizeof out->condition, &out->condition_met);
  if (st) return st;
  double lim = N[n - 1] / pow(10.0, fit_decades) * (1 - 1e-12);
  size_t first = 0;
  while (first < n && N[first] < lim) first++;
  if (n - first < 3) first = n - 3;
  out->first = first;
  out->n = n;
  double *x = gfi_malloc3(4, n, sizeof *x);
  if (!x) return GFI_ENOMEM;
  double *y = x + n, *yr = x + 2 * n, *sg = x + 3 * n;
  for (size_t i = 0; i < n; i++) {
    if (!(N[i] > 1) || !(mise[i] > 0) || !(Ropt[i] > 0)) {
      free(x);
      return GFI_EINVAL;
    }
    x[i] = log(N[i]);
    y[i] = log(mise[i]);
    yr[i] = log(Ropt[i]);
    if (mise_se) sg[i] = mise_se[i] / mise[i];
  }
  st = gfi_fit_line(x, y, mise_se ? sg : NULL, first, n, 1, &out->fit);
  if (!st) st = gfi_fit_line(x, yr, NULL, first, n, 0, &out->fit_R);
  if (!st) st = gfi_exp_claimed_slope(th, out->cls, out->order, out->D, first, n, N, &out->claimed, &out->claimed_R);
  if (!st) {
    out->classical = gfi_exp_rate_classical(k, out->cls, out->order, out->D);
    if (kernel_powers(k) == 1u << 1 && out->cls == GFI_SUPERSMOOTH) {
      /* (log N)^(D/alpha)/N: the same local slope as the claim */
      for (size_t i = 0; i < n; i++) y[i] = out->D / out->order * log(x[i]) - x[i];
      out->classical = ls_slope(x, y, first, n);
    }
    out->verdict = gfi_exp_verdict_of(out->fit.slope_lo95, out->fit.slope_hi95, out->claimed, slack);
  }
  free(x);
  return st;
}
