/* Density estimation: the generalized Fourier density estimator
 * (FourierFormer eq. 12 with a radius per axis, eq. 54) and the Gaussian KDE
 * baseline (eq. 5) with a full or diagonal bandwidth matrix.
 *
 *   Fourier:  p(x) = sum_i w_i prod_j (R_j / A) phi(sinc(R_j (x_j - k_ij)))
 *   Gaussian: p(x) = sum_i w_i N(x - k_i; 0, H)
 *
 * with w_i = 1/N by default, or user weights normalised to sum 1.
 *
 * Plan/evaluate: gfi_density_plan_* copies what it needs from the caller's
 * arrays (structure-of-arrays, sines and cosines precomputed), so the caller
 * may free or reuse them at once; with opts.borrow = 1 a Fourier plan keeps
 * a pointer to the data instead of a copy of the points (the caller keeps
 * them alive and unchanged until gfi_density_destroy; gfi/opts.h). Memory is O(N + M): no N x M matrix is ever
 * formed. gfi_density_eval on a const plan is thread-safe, and its results are
 * bit-for-bit identical for any thread count. */
#ifndef GFI_DENSITY_H
#define GFI_DENSITY_H

#include "export.h"
#include <stddef.h>
#include "status.h"
#include "kernel.h"
#include "opts.h"
#include "fast.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gfi_density_plan gfi_density_plan;

/* Fourier estimator. data: N x D row-major; weights: N values or NULL
 * (uniform); R: D radii (all > 0). The kernel must have a finite A
 * (GFI_EINFINITE_A otherwise). Errors: GFI_EINVAL, GFI_EEMPTY (N = 0),
 * GFI_EDIM, GFI_ENONFINITE, GFI_ERADIUS, GFI_EWEIGHT, GFI_ERANGE (the
 * estimator's peak prod_j R_j/A overflows double, or some |R_j k_ij| > 2^52,
 * where the phase R x is no longer resolved in double), GFI_ENOMEM.
 * opts.method / opts.tol choose the route (gfi/fast.h): the band-limited
 * route exists for phi = z^l and D <= 3; GFI_EUNSUPPORTED when FAST is asked
 * for another kernel or D > 3, GFI_EINVAL for tol outside [0, 1) or an
 * unknown method, GFI_ERANGE under FAST when the node count explodes. */
GFI_EXPORT int gfi_density_plan_fourier(gfi_density_plan **plan, const gfi_kernel *k,
                             size_t N, size_t D, const double *data,
                             const double *weights, const double *R,
                             const gfi_opts *opts);

/* Gaussian KDE with bandwidth matrix H (D x D, symmetric positive definite,
 * row-major; the kernel's covariance). GFI_EBANDWIDTH when H is not SPD.
 * opts.method / opts.tol choose the route (gfi/fast.h): for D <= 3 the fast
 * route works on the data whitened by H^(-1/2) (Cholesky); GFI_EUNSUPPORTED
 * when FAST is asked for D > 3. A tensor grid (gfi_density_eval_grid) keeps
 * the separable last step when H is diagonal; a full H shears the grid, whose
 * points then go through the scattered-point route. */
GFI_EXPORT int gfi_density_plan_gauss(gfi_density_plan **plan, size_t N, size_t D,
                           const double *data, const double *weights,
                           const double *H, const gfi_opts *opts);

/* Bandwidth rules on the data covariance S (as scipy.stats.gaussian_kde):
 * H = f^2 S with Scott's f = N^(-1/(D+4)) or Silverman's
 * f = (N (D+2)/4)^(-1/(D+4)). rule: "scott" or "silverman". H is D x D.
 * GFI_EBANDWIDTH when the data do not spread along every axis (an axis's
 * standard deviation below 1e-12 of its largest |value|: identical points)
 * or lie on a line or plane (a Cholesky pivot of the correlation matrix
 * below 1e-12): H would be singular, as the selectors refuse too;
 * GFI_ERANGE when the covariance overflows a double (data near 1e154+). */
GFI_EXPORT int gfi_bandwidth_rule(const char *rule, size_t N, size_t D, const double *data,
                       const double *weights, double *H);

/* Evaluate at M query points (M x D row-major) into out[M]. GFI_ENONFINITE
 * for NaN/Inf queries; GFI_ERANGE (Fourier) when some |R_j x_j| > 2^52.
 * Gaussian kernel values below exp(-708) count as 0. */
GFI_EXPORT int gfi_density_eval(const gfi_density_plan *plan, size_t M,
                     const double *queries, double *out);

/* gfi_density_eval that also reports what ran (info may be NULL): the
 * route, its frequency nodes, NUFFT grids and error bound (gfi/fast.h).
 * With opts.method = FAST (or AUTO choosing it) the values are within
 * info->bound_abs of the direct sum; info->bound relates it to the largest
 * |value| of this call. Same errors as gfi_density_eval, and GFI_ERANGE
 * under FAST when the queries widen the span so much that the node count
 * or a NUFFT grid explodes. */
GFI_EXPORT int gfi_density_eval_info(const gfi_density_plan *plan, size_t M, const double *queries,
                          double *out, gfi_fast_info *info);

/* Evaluate on the tensor grid with n[j] >= 1 points per axis,
 * lo[j] + k (hi[j] - lo[j]) / (n[j] - 1), k = 0..n[j]-1 (lo[j] when n[j] = 1):
 * out has prod_j n[j] values, last axis fastest. On the fast route the step
 * from the frequency nodes to the grid is separable (one complex matrix
 * product per axis), with no second NUFFT. info may be NULL. Errors as
 * gfi_density_eval_info; GFI_EINVAL for n[j] = 0, GFI_ENONFINITE for a
 * non-finite lo/hi, GFI_EDIM when the grid size overflows. */
GFI_EXPORT int gfi_density_eval_grid(const gfi_density_plan *plan, const double *lo, const double *hi,
                          const size_t *n, double *out, gfi_fast_info *info);

/* What the plan prepared: route FAST with the nodes and the span of the
 * precomputed transform (queries inside the data box widened by a quarter
 * of its width per side reuse it), or DIRECT with the reason. */
GFI_EXPORT int gfi_density_fast_info(const gfi_density_plan *plan, gfi_fast_info *info);

/* Empirical characteristic function phi(t_k) = sum_i w_i exp(i t_k . x_i)
 * at K frequencies (K x D row-major), weights normalised to sum 1 (NULL:
 * 1/N), out: K complex values interleaved (re, im). opts.method: DIRECT
 * (plain sums), FAST (one type-3 NUFFT; D <= 3 else GFI_EUNSUPPORTED) or
 * AUTO (cost model); opts.tol bounds |error| (|phi| <= 1). info may be NULL.
 * Errors: GFI_EINVAL, GFI_EEMPTY (N = 0), GFI_EDIM, GFI_ENONFINITE,
 * GFI_EWEIGHT, GFI_ERANGE (FAST: NUFFT grid too large), GFI_ENOMEM. */
GFI_EXPORT int gfi_ecf(size_t N, size_t D, const double *data, const double *weights, size_t K,
            const double *freqs, const gfi_opts *opts, double *out, gfi_fast_info *info);

GFI_EXPORT size_t gfi_density_dim(const gfi_density_plan *plan);
GFI_EXPORT size_t gfi_density_size(const gfi_density_plan *plan);
/* What the plan's one check of the data found (no pass of its own): the
 * data box, lo[j] and hi[j] the smallest and largest value on axis j (D
 * values each), and the digest of the N D data values (gfi_digest of the
 * array given to the plan: equal to it as long as that array holds the same
 * values). GFI_EINVAL when an argument is NULL. */
GFI_EXPORT int gfi_density_data_box(const gfi_density_plan *plan, double *lo, double *hi);
GFI_EXPORT int gfi_density_data_digest(const gfi_density_plan *plan, uint64_t digest[2]);

GFI_EXPORT void gfi_density_destroy(gfi_density_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
