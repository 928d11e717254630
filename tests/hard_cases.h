/* The randomised family of hard cases shared by the bound tests
 * (test_guarantee.c, test_binned.c): a long-double kernel factor for the
 * brute-force sums, and the draw of one coordinate. */
#ifndef GFI_TEST_HARD_CASES_H
#define GFI_TEST_HARD_CASES_H

#include <math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "gfi/gfi.h"

/* One factor (R / A) phi(sinc(R d)) in long double from the coordinates'
 * difference d. */
static inline long double kfac(const gfi_kernel *k, double R, long double d) {
  long double u = (long double)R * d, s = u == 0 ? 1.0L : sinl(u) / u, p = 0;
  for (int j = k->l; j >= 1; j--) p = (p + (k->kind == GFI_PHI_POW ? (j == k->l) : k->coef[j])) * s;
  return (long double)R / k->A * p;
}

/* A point of the family: a cluster (60%), a second cluster (37%), or a far
 * outlier on either side of the first. */
static inline double draw(gsl_rng *r, double c1, double c2, double s1, double s2, double far) {
  double u = gsl_rng_uniform(r);
  if (u < 0.6) return c1 + gsl_ran_gaussian(r, s1);
  if (u < 0.97) return c2 + gsl_ran_gaussian(r, s2);
  return c1 + far * (gsl_rng_uniform(r) < 0.5 ? -1 : 1);
}

#endif
