/* The frequency axes of the estimators' quadratures (internal): where a rule
 * integrates a kernel's transform against a trigonometric sum in frequency,
 * axis by axis. See docs/architecture.md ("Frequency axes") for the rules
 * and which file builds each. */
#ifndef GFI_FREQ_AXIS_H
#define GFI_FREQ_AXIS_H

#include <stddef.h>
#include "gfi/kernel.h"

/* Limits of fa_gl_axis: the largest phase a = h S / 2 on one sub-interval,
 * and the most nodes on one axis (beyond: GFI_ERANGE). */
#define FA_ALPHA_SUB 256.0
#define FA_AXIS_MAX ((size_t)1 << 20)
/* The most Gauss-Legendre nodes on one sub-interval (far above what
 * a <= FA_ALPHA_SUB needs). */
#define FA_N_SUB_MAX 2048

/* log of the Gauss-Legendre error bound for int_{-1}^{1} p(t) e^{i a t} dt,
 * deg p = deg, |p| <= 1 on [-1, 1], n nodes (minimised over the Bernstein
 * ellipse's rho; freq_axis.c), and the smallest n >= nmin meeting log
 * target logt (0 when none up to FA_N_SUB_MAX). */
double fa_gl_log_bound(size_t n, double a, int deg);
size_t fa_gl_count(double a, int deg, double logt, size_t nmin);

typedef struct fa_axis {
  size_t n;
  double *w;   /* node frequencies */
  double *gw;  /* Gauss-Legendre weight / (2 pi), doubled on a half axis */
  double *kap; /* kappa(w / R) of the kernel */
  double err;  /* the quadrature's bound, relative to the target's scale */
} fa_axis;

/* The integrand on one knot interval of kappa(w / R) (kernel_knots, in units
 * of R): g(w) e^{i w u}, g a polynomial of degree deg with |g| <= amp, |u| <= S.
 * The target etarget is relative to scale (the integral's own size). */
typedef struct fa_gl_spec {
  int deg;      /* degree of g on a knot interval */
  double amp;   /* bound of |g| */
  size_t nmin;  /* fewest nodes on a sub-interval */
  double scale; /* what etarget and err are relative to */
} fa_gl_spec;

/* The Gauss-Legendre rule on the knot intervals of kappa(w / R), each split
 * into sub-intervals of phase a = h S / 2 <= FA_ALPHA_SUB, with on each the
 * smallest n >= nmin whose error bound for p(t) e^{i a t} (fa_gl_log_bound)
 * meets the sub-interval's share of etarget scale. half: w >= 0 only, with
 * doubled weights (an integrand even up to conjugation). GFI_EINVAL for a
 * kernel with fewer than 2 knots, GFI_ERANGE beyond FA_AXIS_MAX nodes or
 * FA_N_SUB_MAX per sub-interval, GFI_ENOMEM. ax is freed with fa_axis_free (also
 * after a failure). */
int fa_gl_axis(const gfi_kernel *kern, double R, double S, int half, double etarget, const fa_gl_spec *sp,
               fa_axis *ax);
void fa_axis_free(fa_axis *ax);

#endif
