/* Kernel facts shared by the library's routes (not installed). */
#ifndef GFI_KERNEL_INTERNAL_H
#define GFI_KERNEL_INTERNAL_H

#include "gfi/kernel.h"
#include "gfi/status.h"

/* M_l(0) for l = 1..16, exactly rounded from 128-bit integer sums; NaN
 * outside. A_l = int sinc^l = 2 pi M_l(0). */
double kernel_bspline0(int l);

/* The binomial coefficient C(n, k) as a double (exact while it is below 2^53),
 * the product form the kernel facts use. */
static inline double kernel_binom(int n, int k) {
  double r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

/* The highest sinc power of a band-limited kernel (power: l; polynomial: its
 * degree), after gfi_kernel_check_band. */
static inline int kernel_band(const gfi_kernel *k) { return k->l; }

/* a_j of phi(z) = sum_j a_j z^j (j = 1..GFI_PHI_MAXPOW): a power kernel's
 * from its l (its coef[] may be unset), a polynomial's from coef[]. */
static inline double kernel_coef(const gfi_kernel *k, int j) {
  return k->kind == GFI_PHI_POW ? (double)(j == k->l) : k->coef[j];
}

/* phi(z) of the kernel: z^l, the polynomial (Horner) or the user's phi. */
static inline double kernel_phi(const gfi_kernel *k, double z) {
  if (k->kind == GFI_PHI_POW) {
    double r = z;
    for (int i = 1; i < k->l; i++) r *= z;
    return r;
  }
  if (k->kind == GFI_PHI_POLY) {
    double r = 0;
    for (int j = k->l; j >= 1; j--) r = (r + k->coef[j]) * z;
    return r;
  }
  return k->fn(z, k->ctx);
}

/* The knots k of the kernel's transform (kappa is a polynomial between
 * consecutive k R): the union over the powers j present of -j, -j+2, .., j.
 * Writes at most 2 GFI_PHI_MAXPOW + 1 integers in increasing order into
 * knots and returns their number; -1 for a kernel that is not band-limited. */
static inline int kernel_knots(const gfi_kernel *k, int *knots) {
  if (!k || (k->kind != GFI_PHI_POW && k->kind != GFI_PHI_POLY) || k->l < 1 || k->l > GFI_PHI_MAXPOW)
    return -1;
  int n = 0;
  for (int x = -k->l; x <= k->l; x++) {
    int on = k->kind == GFI_PHI_POW && (k->l - x) % 2 == 0;
    for (int j = x < 0 ? -x : x; k->kind == GFI_PHI_POLY && j <= k->l && !on; j++) on = k->coef[j] != 0 && ((j - x) % 2 == 0);
    if (on) knots[n++] = x;
  }
  return n;
}

#endif
