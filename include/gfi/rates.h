/* Checking FourierFormer's rate theorems (docs/theory.md section 4) against the
 * exact MISE: the rates the theorems claim (for the smoothness classes of
 * truths, gfi_model_smoothness in model.h),
 * the classical rates of kernels of the same order, and fitted exponents
 * with 95% intervals and a verdict.
 *
 * A theorem gives an upper bound MISE <= C g(N). gfi compares exponents
 * over the fitted range: the observed slope b of log MISE*(N) against log N
 * (least squares on the last decades) with the slope c of log g(N) on the same
 * N values (c = -r for a power rate N^-r; for the (log N)^(D/alpha)/N rate of
 * Theorem 3a c is its local slope, slightly above -1). The verdict is
 *   "faster than claimed"   when b's 95% interval lies below c - slack,
 *   "at the claimed rate"   when c - slack <= upper end and lower end <= c + slack,
 *   "SLOWER than claimed"   when b's interval lies above c + slack
 * (slack: a stated allowance for pre-asymptotic curvature, default 0.02);
 * the first two are consistent with the bound. Nothing is bent toward a
 * claim: all numbers are printed. */
#ifndef GFI_RATES_H
#define GFI_RATES_H

#include "export.h"
#include <stddef.h>
#include "status.h"
#include "model.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GFI_THM_1 = 1, GFI_THM_3A = 2, GFI_THM_3B = 3 } gfi_theorem;

/* "1", "3a", "3b" (NULL for others) and back (0 when unknown). */
GFI_EXPORT const char *gfi_theorem_name(gfi_theorem th);
GFI_EXPORT gfi_theorem gfi_theorem_parse(const char *s);
/* The kernel power a theorem is about: 3a -> 1, 3b -> 2, 1 -> 4 (any l >= 4). */
GFI_EXPORT int gfi_theorem_default_l(gfi_theorem th);

/* log of the claimed rate function g(N) (constants dropped) and log of the
 * claimed radius schedule. GFI_EINVAL when the theorem does not apply
 * (Theorem 3a for ordinary smooth with beta <= 1). */
GFI_EXPORT int gfi_rate_claim(gfi_theorem th, gfi_smooth_class cls, double order, size_t D, double N,
                   double *log_rate, double *log_R);

/* Classical MISE exponent of the estimator with phi = z^l for the truth's
 * class: -2s/(2s + D) with 2s = 2 q (supersmooth) or min(2 q, 2 beta - 1)
 * (ordinary smooth), q the order of kappa_l at 0 (q = 1 for l = 2, 2 for
 * l >= 3, infinite for l = 1: then -(2 beta - 1)/(2 beta - 1 + D), or -1 up to
 * the logarithm for supersmooth truths). */
GFI_EXPORT double gfi_rate_classical(int l, gfi_smooth_class cls, double order, size_t D);

typedef struct gfi_rate_check {
  gfi_theorem theorem;
  int l;
  size_t D;
  gfi_smooth_class cls;
  double order;
  size_t first, n;       /* fitted points [first, n) */
  double claimed;        /* slope of log g(N) over the fitted points */
  double claimed_R;      /* slope of the claimed log R schedule */
  double classical;      /* gfi_rate_classical (for l = 1 supersmooth: the local log slope) */
  gfi_linfit fit;        /* log MISE* against log N */
  gfi_linfit fit_R;      /* log R* against log N */
  int consistent;        /* 1 unless "SLOWER than claimed" */
  const char *verdict;
  int condition_met;     /* 1 when the truth meets the theorem's hypothesis */
  const char *condition; /* "met", or what fails (e.g. "p not C^2" for Theorem 1 on Laplace) */
} gfi_rate_check;

/* Fit the series (N[i], Ropt[i], mise[i]), i < n, on the points with
 * N >= N[n-1] / 10^fit_decades (at least 3 points). mise_se may be NULL
 * (exact values: ordinary least squares with the residual scatter as error);
 * otherwise weighted least squares with sigma = se/mise on the log scale. */
GFI_EXPORT int gfi_rate_check_fit(gfi_theorem th, const gfi_model *m, int l, size_t n, const double *N,
                       const double *Ropt, const double *mise, const double *mise_se,
                       double fit_decades, double slack, gfi_rate_check *out);

#ifdef __cplusplus
}
#endif
#endif
