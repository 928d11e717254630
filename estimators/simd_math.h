/* Vectorisable elementary functions for the engines' inner loops. glibc's
 * exp() is a call that stops gcc from vectorising a loop (without
 * -ffast-math); this inline version uses only arithmetic, comparisons and a
 * bit cast, so `#pragma omp simd` loops vectorise with it. */
#ifndef GFI_SIMD_MATH_H
#define GFI_SIMD_MATH_H

#include <stdint.h>

#include "../lib/clones.h"

/* exp(x) for x <= 709, and exactly 0 for x <= lo, where lo >= -708 is the
 * underflow floor (pass -708). Measured relative error <= 2.3e-16 on
 * [-708, 709] against glibc. Method: x = n ln2 + r with |r| <= ln2/2
 * (two-part ln2), e^r by its degree-13 Taylor polynomial (truncation
 * < 5e-18), 2^n built in the exponent field: t = x log2(e) + 1.5*2^52 holds
 * round(x log2 e) in its low mantissa bits.
 *
 * lo is a parameter, not a literal, on purpose: with a constant floor gcc
 * constant-folds the clamped path into a branch, and the loop no longer
 * vectorises. Callers load it from a plan field. */
static inline double gfi_exp_simd(double x, double lo) {
  const double shifter = 6755399441055744.0; /* 1.5 * 2^52 */
  double xc = x > lo ? x : lo;
  double t = xc * 1.4426950408889634 + shifter;
  double n = t - shifter;
  double r = (xc - n * 0.693147180559890330187) - n * 5.4979230187083711552e-14;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  union {
    double d;
    int64_t i;
  } u = {t};
  u.i = (u.i - INT64_C(0x4338000000000000) + 1023) * (INT64_C(1) << 52);
  double keep = x > lo ? 1.0 : 0.0;
  return keep * (p * u.d);
}

#endif
