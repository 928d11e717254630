/* FourierFormer's rate theorems in one table, and the one verdict
 * vocabulary of gfi's density and regression rate checks
 * (docs/experiments.md, docs/theory.md section 4).
 *
 * | theorem | estimator            | condition                      | R choice              | claimed rate                |
 * | 1       | density, l >= 4 (m=1)| p in C^(m+1) = C^2             | R ~ N^(1/(D+2))       | N^(-2/(D+2))                |
 * | 2       | regression, l >= 6   | (regularity of f and p)        | R ~ N^(1/(D+4))       | N^(-4/(D+4))                |
 * | 3a      | density, l = 1       | supersmooth (alpha)            | R = (log N / C)^(1/alpha) | (log N)^(D/alpha) / N   |
 * |         |                      | ordinary smooth (beta > 1)     | R ~ N^(1/(D+beta-1))  | N^(-(beta-1)/(D+beta-1))    |
 * | 3b      | density, l = 2       | supersmooth, or ordinary smooth (beta > 3) | R ~ N^(1/(D+2)) | N^(-2/(D+2))      |
 * | 4       | regression, l = 1    | supersmooth design, p bounded below on the evaluation set | R = (log N / 2C)^(1/alpha) | (log N)^(D/alpha) / N |
 *
 * The theorems are upper bounds MSE <= C g(N). A check compares the
 * observed exponent b (slope of log MSE against log N, with a 95% interval
 * [lo, hi]) with the claimed exponent c (the slope of log g(N) over the same
 * sizes; exact for power rates) and an allowance `slack` for pre-asymptotic
 * curvature:
 *   faster-than-claimed  hi < c - slack
 *   consistent           lo <= c + slack (and not faster)
 *   slower-than-claimed  lo > c + slack   (the only verdict against the bound)
 * Rows without a theorem (Gaussian kernels, the classical baselines) get
 * "baseline"; rows whose exponent could not be fitted "not-measured". A
 * separate condition field says whether the setting meets the theorem's
 * hypothesis ("met", or what fails); a row that fails it is measured all
 * the same. Each theorem also carries its hypotheses one by one
 * (gfi_exp_hypothesis), with the condition value a setting that fails one
 * gets; gfi_exp_density_condition evaluates them for a truth and a kernel. */
#ifndef GFI_EXP_THEOREMS_H
#define GFI_EXP_THEOREMS_H

#include <stddef.h>
#include "gfi/gfi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GFI_EXP_THM_1 = 0,
  GFI_EXP_THM_2,
  GFI_EXP_THM_3A,
  GFI_EXP_THM_3B,
  GFI_EXP_THM_4,
  GFI_EXP_NTHEOREMS
} gfi_exp_theorem_id;

/* One hypothesis of a theorem: on the kernel phi = z^l, on the truth
 * (density theorems) or on the design and regression function. */
typedef struct gfi_exp_hypothesis {
  const char *on;    /* "kernel", "truth", "design" */
  const char *text;  /* the hypothesis in words */
  const char *fails; /* the condition value when it fails: "l<4", "not-C2", "beta<=3", ... */
} gfi_exp_hypothesis;

#define GFI_EXP_MAXHYP 4

typedef struct gfi_exp_theorem {
  gfi_exp_theorem_id id;
  const char *name;      /* "1", "2", "3a", "3b", "4" */
  int regression;        /* 0: density (MISE), 1: Nadaraya-Watson regression (MSE) */
  int l_min, l_max;      /* kernel powers phi = z^l it covers */
  int l_default;         /* the power gfi checks it with */
  const char *estimator; /* "density, phi = z^l, l >= 4", ... */
  const char *condition; /* the hypothesis on the truth or design */
  const char *R_choice;  /* the radius schedule */
  const char *claimed;   /* the claimed rate */
  const char *classical; /* the classical exponent of a kernel of the same order */
  size_t nhyp;           /* its hypotheses, one by one */
  gfi_exp_hypothesis hyp[GFI_EXP_MAXHYP];
} gfi_exp_theorem;

/* The table row of id (NULL when out of range), and by name ("1", "3a", ...;
 * NULL when unknown). */
const gfi_exp_theorem *gfi_exp_theorem_get(gfi_exp_theorem_id id);
const gfi_exp_theorem *gfi_exp_theorem_find(const char *name);

/* Moments of the kernel phi(sinc z) of a power phi = z^l or a polynomial
 * phi = sum_j a_j z^j (a_j >= 0; its tails are those of its lowest power
 * j0, l for a power): the number m of its vanishing moments (int z^j
 * phi(sinc z) dz = 0 for j = 1..m: m = 1 for j0 >= 3, by symmetry; the
 * second moment is positive for every power, so no such kernel gives m = 2;
 * j0 = 1, 2: no first moment, m = 0) and the highest k with int |z|^k
 * |phi(sinc z)| dz finite (j0 - 2; -1 for j0 = 1, whose kernel is not
 * absolutely integrable). -1 for NULL or any other kernel (custom phi,
 * flat-top). */
int gfi_exp_kernel_vanishing_moments(const gfi_kernel *k);
int gfi_exp_kernel_finite_moment(const gfi_kernel *k);

/* The condition of a density theorem (1, 3a, 3b) for the truth m and the
 * kernel k (a power phi = z^l or a polynomial phi): "met" when every
 * hypothesis holds, otherwise the failing hypotheses' values joined by ','
 * (e.g. "not-C2", "beta<=3", "l<4,not-C2"), written to buf (size n). *met
 * (may be NULL) gets 1 or 0. Theorem 1: m = 1 vanishing moment with a
 * finite absolute moment of order m + 1 = 2, i.e. l >= 4 (a polynomial:
 * its lowest power >= 4; fails "l<4"), p in C^2 ("not-C2"). Theorem 3a:
 * phi = z, l = 1 (a polynomial: z alone; fails "l!=1"), supersmooth or
 * ordinary smooth with beta > 1 ("beta<=1"). Theorem 3b: phi = z^2 ("l!=2"),
 * supersmooth or ordinary smooth with beta > 3 ("beta<=3"). A truth outside
 * both classes fails "not-smooth-class". GFI_EINVAL for a regression
 * theorem or bad arguments; GFI_EUNSUPPORTED for a kernel that is neither a
 * power nor a polynomial phi. */
int gfi_exp_density_condition(gfi_exp_theorem_id th, const gfi_model *m, const gfi_kernel *k, char *buf, size_t n,
                              int *met);

/* log g(N) (the claimed rate, constants dropped) and log of the claimed
 * radius schedule, for a truth (density) or design (regression) of
 * smoothness class cls and order alpha or beta, in D dimensions.
 * GFI_EINVAL when the theorem does not apply (Theorem 3a for ordinary smooth
 * with beta <= 1, Theorem 4 for ordinary smooth designs). */
int gfi_exp_rate_claim(gfi_exp_theorem_id th, gfi_smooth_class cls, double order, size_t D, double N,
                       double *log_rate, double *log_R);

/* The claimed exponents over the sizes N[first..n): the exact exponents
 * for power rates, otherwise the least-squares slopes of log g(N) and
 * log R(N) against log N. slope_R may be NULL. */
int gfi_exp_claimed_slope(gfi_exp_theorem_id th, gfi_smooth_class cls, double order, size_t D, size_t first,
                          size_t n, const double *N, double *slope, double *slope_R);

/* Classical exponent of the MISE (density) or MSE (regression) of a kernel
 * of the order of k: -2s/(2s + D) with 2s = 2q (supersmooth) or min(2q,
 * 2 beta - 1) (ordinary smooth), q the order of the kernel's transform at 0:
 * for phi = z^l q = 1 for l = 2, 2 for l >= 3, infinite for l = 1 (then
 * -(2 beta - 1)/(2 beta - 1 + D) for ordinary smooth and -1, up to the
 * logarithm, for supersmooth truths); for a polynomial phi the least q of
 * its powers (kappa = sum_j a_j A_j kappa_j / A). k = NULL means a
 * Gaussian kernel (q = 2: -4/(D+4)). NaN for any other kernel. */
double gfi_exp_rate_classical(const gfi_kernel *k, gfi_smooth_class cls, double order, size_t D);

typedef enum {
  GFI_EXP_CONSISTENT = 0,
  GFI_EXP_FASTER,
  GFI_EXP_SLOWER,
  GFI_EXP_BASELINE,
  GFI_EXP_NOT_MEASURED
} gfi_exp_verdict;

/* The verdict of an observed 95% interval [lo, hi] against the claimed
 * exponent (rules above); GFI_EXP_NOT_MEASURED when lo, hi or claimed is
 * not finite. */
gfi_exp_verdict gfi_exp_verdict_of(double lo95, double hi95, double claimed, double slack);
/* "consistent", "faster-than-claimed", "slower-than-claimed", "baseline",
 * "not-measured" (NULL for other values). */
const char *gfi_exp_verdict_name(gfi_exp_verdict v);
/* 1 unless the verdict speaks against the bound (slower-than-claimed). */
int gfi_exp_verdict_consistent(gfi_exp_verdict v);

/* A density rate check: fit log MISE* and log R* against log N on the
 * points with N >= N[n-1] / 10^fit_decades (at least 3), compare with the
 * theorem's claim for the truth m and phi = z^l, and give the verdict and
 * the condition (gfi_exp_density_condition). mise_se may be NULL (exact values:
 * ordinary least squares with the residual scatter as error); otherwise
 * weighted least squares with sigma = se/mise on the log scale. The
 * classical field is gfi_exp_rate_classical, except for phi = z (l = 1)
 * and a supersmooth truth, where it is the local slope of
 * (log N)^(D/alpha)/N over the fitted sizes. k: a power or polynomial phi
 * (GFI_EUNSUPPORTED otherwise). */
typedef struct gfi_exp_rate_fit {
  const gfi_exp_theorem *theorem;
  int l;                 /* the kernel's power, or its polynomial's degree */
  size_t D;
  gfi_smooth_class cls;
  double order;
  size_t first, n;       /* fitted points [first, n) */
  double claimed;        /* claimed exponent over the fitted points */
  double claimed_R;      /* claimed exponent of R */
  double classical;
  gfi_linfit fit;        /* log MISE* against log N */
  gfi_linfit fit_R;      /* log R* against log N */
  gfi_exp_verdict verdict;
  int condition_met;     /* 1 when the truth and kernel meet the theorem's hypotheses */
  char condition[48];    /* "met" or what fails (gfi_exp_density_condition) */
} gfi_exp_rate_fit;

int gfi_exp_density_rate_fit(gfi_exp_theorem_id th, const gfi_model *m, const gfi_kernel *k, size_t n,
                             const double *N,
                             const double *Ropt, const double *mise, const double *mise_se,
                             double fit_decades, double slack, gfi_exp_rate_fit *out);

#ifdef __cplusplus
}
#endif
#endif
