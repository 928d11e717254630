/* One-axis generalized Fourier kernels phi(sinc(x)) (docs/theory.md section 1). */
#ifndef GFI_KERNEL_H
#define GFI_KERNEL_H

#include "export.h"
#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A user-supplied phi: z in [-0.2173, 1] -> phi(z). Must be thread-safe. */
typedef double (*gfi_phi_fn)(double z, void *ctx);

/* GFI_PHI_FLATTOP: the flat-top kernel of Politis and Romano (gfi_kernel_flattop),
 * not a function of sinc; its parameter c is kept in coef[0]. */
typedef enum { GFI_PHI_POW = 0, GFI_PHI_CUSTOM = 1, GFI_PHI_POLY = 2, GFI_PHI_FLATTOP = 3 } gfi_phi_kind;

/* Highest power of sinc a band-limited kernel may carry. */
#define GFI_PHI_MAXPOW 8

/* A kernel description. Small value type: copy freely. */
typedef struct gfi_kernel {
  gfi_phi_kind kind;
  int l;            /* power for GFI_PHI_POW (1..8); 0 for custom; 1 for flat-top
                       (the transform's support |u| <= l, in units of R) */
  gfi_phi_fn fn;    /* custom phi, NULL for powers */
  void *ctx;        /* passed to fn */
  double A;         /* int_R phi(sinc z) dz; INFINITY when it diverges */
  int A_finite;     /* 1 when A is finite and > 0 (usable for densities) */
  /* The sinc powers of a band-limited kernel: phi(z) = sum_j coef[j] z^j,
   * j = 1..GFI_PHI_MAXPOW (coef[0] = 0). A power kernel has coef[l] = 1; a
   * custom one all zeros. Appended last: the fields above keep their offsets. */
  double coef[GFI_PHI_MAXPOW + 1];
} gfi_kernel;

/* sinc(x) = sin(x)/x with sinc(0) = 1; series for |x| < 0.1. */
GFI_EXPORT double gfi_sinc(double x);
/* d/dx sinc(x) = (cos x - sinc x)/x, series for small |x|. */
GFI_EXPORT double gfi_sinc_deriv(double x);

/* Exact A_l = int sinc(z)^l dz for l = 1..8 (NaN outside). */
GFI_EXPORT double gfi_pow_A(int l);

/* phi(z) = z^l. GFI_EORDER unless 1 <= l <= 8. */
GFI_EXPORT int gfi_kernel_pow(gfi_kernel *k, int l);

/* Polynomial phi(z) = a[1] z + a[2] z^2 + ... + a[deg] z^deg, 1 <= deg <= 8,
 * with a[0] = 0 (a constant is not integrable) and every a[j] >= 0, a[deg] > 0
 * (then A = sum_j a_j A_j > 0 and the transform kappa = sum_j a_j A_j kappa_j
 * / A lies in [0, 1], as for a power: every error bound of the powers holds
 * unchanged; the kernel's peak is phi(1) R / A). Each sinc^j is band-limited,
 * so the direct and fast routes, the exact MISE and the Plancherel ISE apply
 * as for powers. k->l receives deg. Errors: GFI_EINVAL (NULL, a[0] != 0, a
 * negative coefficient, a[deg] = 0), GFI_EORDER (deg outside 1..8),
 * GFI_ENONFINITE (a coefficient not finite). */
GFI_EXPORT int gfi_kernel_poly(gfi_kernel *k, int deg, const double *a);

/* The flat-top kernel of Politis and Romano with 0 < c < 1: its transform
 * kappa(u) is 1 on |u| <= c and falls linearly to 0 at |u| = 1 (units of the
 * radius R, as for sinc^1), so the estimator's kernel per axis is R K(R u),
 *     K(u) = (cos(c u) - cos(u)) / (pi (1 - c) u^2)
 *          = ((1 + c) / 2 pi) sinc((1 + c) u / 2) sinc((1 - c) u / 2),
 * which integrates to 1 and takes negative values (not a density kernel: a
 * bias of order higher than any power where the target is smooth). In the
 * fields: A = 2 pi / (1 + c), gfi_kernel_eval gives the two-sinc product (1
 * at 0), so that K = eval / A as for phi(sinc); l = 1; coef[0] = c. Band-
 * limited: the direct and fast routes, the exact MISE, the Plancherel ISE and
 * LSCV apply (not regression, attention or the GPU). GFI_EINVAL unless
 * 0 < c < 1 (NaN included). */
GFI_EXPORT int gfi_kernel_flattop(gfi_kernel *k, double c);

/* A kernel from its text, as gfi's --phi takes it: "pow:L" (phi = z^L,
 * L = 1..8), "poly:a1,..,ad" (phi = a1 z + .. + ad z^d, d <= 8; trailing
 * zero coefficients are dropped; gfi_kernel_poly's conditions) or
 * "flattop:c" (gfi_kernel_flattop, 0 < c < 1). On failure
 * returns GFI_EINVAL (NULL, unknown form, not a number, a negative or only
 * zero coefficients, c outside (0, 1)), GFI_EORDER (L outside 1..8, more than 8 coefficients),
 * GFI_ENONFINITE or GFI_ERANGE (a coefficient not finite or out of range),
 * writes what is wrong to err->msg (err may be NULL; err->column is the
 * 1-based character position of the culprit, 0 when it is the whole text)
 * and leaves *k as it was. */
GFI_EXPORT int gfi_kernel_parse(gfi_kernel *k, const char *spec, gfi_errinfo *err);

/* Custom phi. A is computed by quadrature (gfi_phi_integral). The kernel is
 * initialised even when A is infinite (then A_finite = 0, A = INFINITY): such
 * a phi is usable for regression/attention, where A cancels. Returns GFI_OK,
 * GFI_EINVAL (fn NULL) or GFI_EQUAD / GFI_ENONFINITE when phi misbehaves. */
GFI_EXPORT int gfi_kernel_custom(gfi_kernel *k, gfi_phi_fn fn, void *ctx);

/* A = int_R phi(sinc z) dz by GSL quadrature over the periods [k pi, (k+1) pi]
 * with Levin-u acceleration. Returns GFI_EINFINITE_A when the integral
 * diverges or is not finite (e.g. phi = |z|, ReLU, sigmoid); *A and *abserr
 * (either may be NULL) receive the value and an error estimate. */
GFI_EXPORT int gfi_phi_integral(gfi_phi_fn fn, void *ctx, double *A, double *abserr);

/* phi(sinc(x)) for the kernel (flat-top: its two-sinc product). */
GFI_EXPORT double gfi_kernel_eval(const gfi_kernel *k, double x);

/* kappa_l(u): Fourier transform of sinc(x)^l / A_l, i.e.
 * int sinc(x)^l exp(i u x) dx / A_l = M_l(u)/M_l(0), with M_l the B-spline
 * density of a sum of l Uniform(-1,1). Supported on |u| <= l. l = 1..8. */
GFI_EXPORT double gfi_kappa(int l, double u);

/* The kernel's Fourier transform normalised to 1 at 0: for power and
 * polynomial kernels sum_j a_j A_j kappa_j(u) / A (supported on |u| <= deg);
 * flat-top: 1 on |u| <= c, (1 - |u|) / (1 - c) up to 1, 0 beyond;
 * NaN for a custom phi or A = 0. */
GFI_EXPORT double gfi_kernel_kappa(const gfi_kernel *k, double u);

/* int kappa(u)^2 du for power, polynomial and flat-top kernels (NaN
 * otherwise): 2 pi int phi(sinc z)^2 dz / A^2 by Plancherel; flat-top
 * 2 c + 2 (1 - c) / 3. */
GFI_EXPORT double gfi_kappa_sq_integral(const gfi_kernel *k);

/* GFI_OK when k is a valid band-limited kernel (power, polynomial or flat-top) usable
 * for densities (finite A > 0); GFI_EINVAL (NULL), GFI_EORDER (power outside
 * 1..8; flat-top c outside (0, 1)), GFI_EUNSUPPORTED (custom phi),
 * GFI_EINFINITE_A (A not > 0). */
GFI_EXPORT int gfi_kernel_check_band(const gfi_kernel *k);

#ifdef __cplusplus
}
#endif
#endif
