/* Nadaraya-Watson regression: the generalized Fourier estimator
 * (FourierFormer eq. 14, a radius per axis as in eq. 54) and the Gaussian
 * baseline (eq. 6) with a full or diagonal bandwidth matrix, for vector
 * responses y_i in R^V:
 *
 *   Fourier:  f(x) = sum_i y_i K_i(x) / sum_i K_i(x),  K_i(x) = prod_j phi(sinc(R_j (x_j - k_ij)))
 *   Gaussian: the same with K_i(x) = exp(-(x - k_i)' H^-1 (x - k_i) / 2)
 *
 * A = int phi(sinc) cancels in the ratio, so any phi is allowed, including
 * those with an infinite A (phi = |z|, ReLU): gfi_kernel_custom kernels are
 * accepted whatever their A.
 *
 * Range. The ratio is invariant to a common factor of the K_i, and gfi
 * evaluates it so that no product over many axes under- or overflows:
 *  - the plain path multiplies the factors (each |phi(sinc)| <= 1 for the
 *    powers z^l) and keeps the result when sum_i |K_i| >= 2^-600, where a
 *    term lost to underflow is below 2^-1022 and cannot matter;
 *  - the scaled path keeps every term as mantissa * 2^e (the running product
 *    is renormalised by 2^500 whenever it falls below 2^-500, and the sums
 *    are taken relative to the largest exponent), so the ratio is right for
 *    any D up to GFI_MAX_DIM. Queries whose plain sum is below 2^-600 are
 *    re-evaluated on the scaled path automatically. The Gaussian baseline
 *    always sums exp(-d_i^2/2 + d_min^2/2) (log-sum-exp shift).
 * gfi_nw_set_scaling chooses the path (default GFI_NW_SCALE_AUTO: plain with
 * the fallback when D * l <= 64, scaled otherwise; custom phi: scaled).
 *
 * Flagged rows. Let S = sum_i K_i (the denominator) and A = sum_i |K_i|,
 * both computed at a common scale. A query's row is flagged, all V outputs
 * set to NaN, when
 *   GFI_NW_FLAG_EMPTY     A == 0: no data point has a non-zero weight (an
 *                         empty neighbourhood; e.g. phi = ReLU beyond the
 *                         first zero of sinc);
 *   GFI_NW_FLAG_NEGATIVE  S < 0 (possible only when weights can be negative:
 *                         odd l or a phi with negative values);
 *   GFI_NW_FLAG_SMALL     0 <= S <= tol * A: the sum cancels so much that the
 *                         ratio has lost more than -log10(tol) digits
 *                         (tol = 1e-8 by default, gfi_nw_set_denom_tol),
 *                         including S == 0 exactly.
 * For even l (and any phi >= 0) S = A, so only EMPTY can occur. The Gaussian
 * baseline never flags. gfi_nw_eval returns GFI_EDENOM when at least one row
 * was flagged (the other rows are valid) and the count in *nflagged.
 *
 * Plan/evaluate: the plan copies what it needs (structure of arrays, sines and
 * cosines of R_j k_ij, responses), so the caller's arrays may be freed at
 * once; with opts.borrow = 1 a Fourier plan keeps a pointer to x instead of
 * a copy of the points (the caller keeps x alive and unchanged until
 * gfi_nw_destroy; gfi/opts.h). Memory is O((N + M)(D + V)): no N x M matrix is formed. gfi_nw_eval
 * on a const plan is thread-safe and bit-for-bit identical for any thread
 * count. */
#ifndef GFI_REGRESSION_H
#define GFI_REGRESSION_H

#include "export.h"
#include <stddef.h>
#include "status.h"
#include "kernel.h"
#include "opts.h"
#include "fast.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gfi_nw_plan gfi_nw_plan;

/* Row flags written by gfi_nw_eval_flags. */
enum { GFI_NW_FLAG_OK = 0, GFI_NW_FLAG_EMPTY = 1, GFI_NW_FLAG_NEGATIVE = 2, GFI_NW_FLAG_SMALL = 3 };

/* Evaluation paths (gfi_nw_set_scaling). */
enum { GFI_NW_SCALE_AUTO = 0, GFI_NW_SCALE_PLAIN = 1, GFI_NW_SCALE_ALWAYS = 2 };

/* Default relative threshold for GFI_NW_FLAG_SMALL. */
#define GFI_NW_DENOM_TOL 1e-8

/* Generalized Fourier NW. x: N x D inputs, y: N x V responses (row-major),
 * R: D radii (> 0). k: a power z^l (l = 1..8) or any custom phi (A may be
 * infinite). Errors: GFI_EINVAL (NULL, V = 0, malformed kernel), GFI_EEMPTY
 * (N = 0), GFI_EDIM, GFI_ENONFINITE (x or y), GFI_ERADIUS, GFI_EORDER,
 * GFI_ERANGE (some |R_j x_ij| > 2^52: the phase is not resolved in double
 * precision, as for densities), GFI_ENOMEM.
 * opts.method / opts.tol choose the route (gfi/fast.h): for phi = z^l and
 * D <= 3 the numerators and the denominator are sums with the band-limited
 * kernel, computed from the same frequency nodes; GFI_EUNSUPPORTED when FAST
 * is asked for a custom phi or D > 3, GFI_EINVAL for a bad tol or method,
 * GFI_ERANGE under FAST when the node count explodes. */
GFI_EXPORT int gfi_nw_plan_fourier(gfi_nw_plan **plan, const gfi_kernel *k, size_t N, size_t D, size_t V,
                        const double *x, const double *y, const double *R, const gfi_opts *opts);

/* Gaussian NW with bandwidth matrix H (D x D symmetric positive definite,
 * row-major; a diagonal H = diag(h_j^2) is the per-axis bandwidth).
 * GFI_EBANDWIDTH when H is not SPD. opts.method / opts.tol choose the route
 * as for gfi_nw_plan_fourier: for D <= 3 the fast route works on the data
 * whitened by H^(-1/2) (Cholesky), with the Gaussian's transform integrated
 * by the trapezoid rule truncated where its tail is below the target
 * (gfi/fast.h); GFI_EUNSUPPORTED when FAST is asked for D > 3. */
GFI_EXPORT int gfi_nw_plan_gauss(gfi_nw_plan **plan, size_t N, size_t D, size_t V, const double *x,
                      const double *y, const double *H, const gfi_opts *opts);

/* Evaluate at M queries (M x D) into out (M x V, row-major). *nflagged (may
 * be NULL) gets the number of flagged rows (NaN rows). Returns GFI_OK,
 * GFI_EDENOM when a row was flagged (out is complete), or an error
 * (GFI_EINVAL, GFI_ENONFINITE, GFI_EDIM, GFI_ERANGE (Fourier: some
 * |R_j x_j| > 2^52), GFI_ENOMEM; then out is undefined). */
GFI_EXPORT int gfi_nw_eval(const gfi_nw_plan *plan, size_t M, const double *queries, double *out,
                size_t *nflagged);

/* The same, also writing each row's flag (GFI_NW_FLAG_*) into flags[M] and,
 * when denom is not NULL, the ratio S/A into denom[M] (1 for weights >= 0,
 * NaN for an empty row): how far the denominator is from cancelling. */
GFI_EXPORT int gfi_nw_eval_flags(const gfi_nw_plan *plan, size_t M, const double *queries, double *out,
                      size_t *nflagged, unsigned char *flags, double *denom);

/* gfi_nw_eval_flags that also reports what ran (info may be NULL; flags,
 * denom, nflagged too). On the fast route a row is kept only when its
 * denominator S, with the route's error bound e_S, is certainly positive and
 * above the GFI_NW_FLAG_SMALL threshold (odd l: tol * N * prod R/A, an upper
 * bound of sum |K_i|) and the ratio's error bound (e_num + |f| e_S) / (S - e_S)
 * is within opts.tol * max |y|; every other row, and every row when denom is
 * asked for with an odd l, is evaluated by the direct sum
 * (info->rows_direct), so flags are those of the direct route. */
GFI_EXPORT int gfi_nw_eval_ex(const gfi_nw_plan *plan, size_t M, const double *queries, double *out,
                   size_t *nflagged, unsigned char *flags, double *denom, gfi_fast_info *info);

/* Evaluate on the tensor grid lo:hi:n (as gfi_density_eval_grid): out has
 * prod_j n[j] rows of V values, last axis fastest; flags as gfi_nw_eval.
 * info may be NULL. */
GFI_EXPORT int gfi_nw_eval_grid(const gfi_nw_plan *plan, const double *lo, const double *hi, const size_t *n,
                     double *out, size_t *nflagged, gfi_fast_info *info);
/* The same, also writing each grid row's flag (GFI_NW_FLAG_*) into flags
 * (prod_j n[j] bytes; may be NULL). */
GFI_EXPORT int gfi_nw_eval_grid_ex(const gfi_nw_plan *plan, const double *lo, const double *hi, const size_t *n,
                        double *out, size_t *nflagged, unsigned char *flags, gfi_fast_info *info);

/* What the plan prepared (as gfi_density_fast_info). */
GFI_EXPORT int gfi_nw_fast_info(const gfi_nw_plan *plan, gfi_fast_info *info);

/* Threshold tol of GFI_NW_FLAG_SMALL (0 <= tol < 1; GFI_EINVAL otherwise). */
GFI_EXPORT int gfi_nw_set_denom_tol(gfi_nw_plan *plan, double tol);
/* Evaluation path, GFI_NW_SCALE_*: results agree to rounding where the plain
 * path does not underflow; PLAIN exists for measurements. */
GFI_EXPORT int gfi_nw_set_scaling(gfi_nw_plan *plan, int mode);

GFI_EXPORT size_t gfi_nw_dim(const gfi_nw_plan *plan);
GFI_EXPORT size_t gfi_nw_size(const gfi_nw_plan *plan);
GFI_EXPORT size_t gfi_nw_nresp(const gfi_nw_plan *plan);
/* What the plan's one check of x found: the box of the points, lo[j] and
 * hi[j] (D values each), and gfi_digest of the N D values of x, as
 * gfi_density_data_box and gfi_density_data_digest. GFI_EINVAL when an
 * argument is NULL. */
GFI_EXPORT int gfi_nw_data_box(const gfi_nw_plan *plan, double *lo, double *hi);
GFI_EXPORT int gfi_nw_data_digest(const gfi_nw_plan *plan, uint64_t digest[2]);

GFI_EXPORT void gfi_nw_destroy(gfi_nw_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
