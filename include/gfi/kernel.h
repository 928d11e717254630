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

typedef enum { GFI_PHI_POW = 0, GFI_PHI_CUSTOM = 1 } gfi_phi_kind;

/* A kernel description. Small value type: copy freely. */
typedef struct gfi_kernel {
  gfi_phi_kind kind;
  int l;            /* power for GFI_PHI_POW (1..8); 0 for custom */
  gfi_phi_fn fn;    /* custom phi, NULL for powers */
  void *ctx;        /* passed to fn */
  double A;         /* int_R phi(sinc z) dz; INFINITY when it diverges */
  int A_finite;     /* 1 when A is finite and > 0 (usable for densities) */
} gfi_kernel;

/* sinc(x) = sin(x)/x with sinc(0) = 1; series for |x| < 0.1. */
GFI_EXPORT double gfi_sinc(double x);
/* d/dx sinc(x) = (cos x - sinc x)/x, series for small |x|. */
GFI_EXPORT double gfi_sinc_deriv(double x);

/* Exact A_l = int sinc(z)^l dz for l = 1..8 (NaN outside). */
GFI_EXPORT double gfi_pow_A(int l);

/* phi(z) = z^l. GFI_EORDER unless 1 <= l <= 8. */
GFI_EXPORT int gfi_kernel_pow(gfi_kernel *k, int l);

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

/* phi(sinc(x)) for the kernel. */
GFI_EXPORT double gfi_kernel_eval(const gfi_kernel *k, double x);

/* kappa_l(u): Fourier transform of sinc(x)^l / A_l, i.e.
 * int sinc(x)^l exp(i u x) dx / A_l = M_l(u)/M_l(0), with M_l the B-spline
 * density of a sum of l Uniform(-1,1). Supported on |u| <= l. l = 1..8. */
GFI_EXPORT double gfi_kappa(int l, double u);

#ifdef __cplusplus
}
#endif
#endif
