/* The Gaussian family of the kernel-sum engine (kernel_internal.h): per
 * axis the kernel R K(R u), A K(u) = e^{-u^2/2}, A = sqrt(2 pi), R = 1 / h,
 * whose transform e^{-w^2 / (2 R^2)} is integrated by the trapezoid rule
 * w_k = k d, |k| <= K, with weights d e^{-w_k^2 / (2 R^2)} / (2 pi)
 * (estimators/bandlimited.c). Two errors, each relative to the peak
 * K(0) = R / sqrt(2 pi) and for every |u| <= S:
 *  - aliasing (Poisson summation): the infinite rule sums K over the copies
 *    u + m P, P = 2 pi / d; with P = S + t / R the error is at most
 *    sum_{m != 0} e^{-R^2 (u + m P)^2 / 2} <= 2 e^{-t^2/2} / (1 - e^{-t^2});
 *  - truncation: the weights beyond K d sum to at most the integral beyond
 *    W = K d (the weight decreases in |w|): erfc(W / (R sqrt 2)). */
#include <math.h>
#include <string.h>
#include "kernel_internal.h"

void kernel_gauss(gfi_kernel *k) {
  memset(k, 0, sizeof *k);
  k->kind = GFI_KERNEL_GAUSS;
  k->l = 0;
  k->A = sqrt(2 * M_PI);
  k->A_finite = 1;
}

double kernel_gauss_alias(double t) { return 2 * exp(-0.5 * t * t) / (1 - exp(-t * t)); }

/* 2 e^{-t^2/2} = e (the aliasing bound is that over 1 - e^{-t^2}). */
double kernel_gauss_alias_reach(double e) { return sqrt(2 * log(2 / e)); }

double kernel_gauss_tail(double v) { return erfc(v / M_SQRT2); }

/* The smallest v with erfc(v / sqrt 2) <= e: bisection below the bound
 * erfc(x) <= e^{-x^2}. */
double kernel_gauss_tail_reach(double e) {
  double vhi = sqrt(2 * log(1 / e)), vlo = 0;
  for (int it = 0; it < 60; it++) {
    double mid = 0.5 * (vlo + vhi);
    if (erfc(mid / M_SQRT2) <= e) vhi = mid;
    else vlo = mid;
  }
  return vhi;
}
