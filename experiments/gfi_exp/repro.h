/* FourierFormer's synthetic experiments (appendix E.4, Figures 1 and 2):
 * the MSE of the generalized Fourier density and Nadaraya-Watson estimators
 * at test points drawn uniformly from a box, one replication ("seed") at a
 * time, for several radii and boxes on the same sample, and an oracle
 * radius for the regression experiment.
 *
 * Randomness: replication k draws its N data points from RNG stream
 * (seed, k) and its M test points (and, for regression, the test responses)
 * from stream (seed, GFI_REPRO_TEST_STREAM + k). The test points of every
 * box are the same uniform draws u in [-1, 1]^D scaled by the box's
 * half-width h (box [-h, h]^D), so boxes are compared on common random
 * numbers. Results are identical for any thread count.
 *
 * MSE at M points: mean over the points of (estimate - truth)^2, where the
 * truth is the model's pdf (density) or the regression function f
 * (regression). For regression also the prediction MSE against noisy test
 * responses y = f(x) + noise, whose expectation is the MSE plus the mean
 * noise variance. */
#ifndef GFI_EXP_REPRO_H
#define GFI_EXP_REPRO_H

#include <stddef.h>
#include <stdint.h>
#include "gfi/gfi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Test points of replication k: stream (seed, GFI_REPRO_TEST_STREAM + k),
 * apart from the data streams (k) and from gfi_nw_design_points (2^62). */
#define GFI_REPRO_TEST_STREAM ((uint64_t)3 << 61)

/* The settings one sample is measured on: nR radius vectors (nR x D,
 * row-major) and nbox boxes [-h_b, h_b]^D (half-widths h_b > 0). */
typedef struct gfi_repro_grid {
  size_t nR;
  const double *R;
  size_t nbox;
  const double *halfwidth;
} gfi_repro_grid;

/* M points uniform on [-1, 1]^D (M x D) from stream
 * (seed, GFI_REPRO_TEST_STREAM + k). */
int gfi_repro_unit_points(uint64_t seed, uint64_t k, size_t D, size_t M, double *u);

/* Figure 1, replication k: N points from m, the estimator with kernel kern
 * (finite A) for each radius of g, its MSE against m's pdf at the M test
 * points of each box: mse[r * nbox + b]. opts: threads of the evaluation
 * (NULL = all cores). Errors: GFI_EINVAL, GFI_EEMPTY (N, M, nR or nbox = 0),
 * GFI_ERADIUS (a radius or half-width <= 0), GFI_ENOMEM, plan errors. */
int gfi_repro_density(const gfi_model *m, const gfi_kernel *kern, size_t N, size_t M,
                      uint64_t seed, uint64_t k, const gfi_repro_grid *g, const gfi_opts *opts,
                      double *mse);

/* Figure 2, replication k: N pairs (design, truth f, noise) on stream
 * (seed, k); the Fourier NW estimator with kernel kern for each radius of g;
 * at the M test points of each box its MSE against f (mse[r * nbox + b])
 * and, when pmse is not NULL, against noisy responses y = f + noise drawn
 * after the points on the test stream. Flagged rows (odd l only) are left
 * out of both means and counted in *nflagged (may be NULL; summed over the
 * grid). Errors as gfi_repro_density, and GFI_EDIM when design and f
 * disagree. */
int gfi_repro_regress(const gfi_model *design, const gfi_regfun *f, const gfi_noise *noise,
                      const gfi_kernel *kern, size_t N, size_t M, uint64_t seed, uint64_t k,
                      const gfi_repro_grid *g, const gfi_opts *opts, double *mse, double *pmse,
                      size_t *nflagged);

/* Oracle radius of Figure 2: the isotropic R minimising the Monte-Carlo
 * MSE against f at M points uniform in [-h, h]^D (gfi_repro_unit_points of
 * (seed, 0)), averaged over nreps pilot replications on streams (seed, 0..)
 * (gfi_nw_mse; the same samples for every R, so the curve is smooth in R).
 * Search: gfi_minimize_radius (nscan points geometric in [Rmin, Rmax],
 * the scan's local minima refined by Brent's method on log R to 1e-5, the
 * scan doubled until two rounds agree). *R_opt gets the
 * radius, *mse_opt the pilot MSE there (may be NULL), and *nevals (may be
 * NULL) the number of radii tried. Use a seed different from the reported
 * replications' so that the radius is not chosen on the data it is scored
 * on. Errors as gfi_nw_mse, GFI_EINVAL for a bad range (0 < Rmin < Rmax,
 * nscan >= 3). */
int gfi_repro_regress_ropt(const gfi_model *design, const gfi_regfun *f, const gfi_noise *noise,
                           const gfi_kernel *kern, size_t N, size_t M, double h, size_t nreps,
                           uint64_t seed, double Rmin, double Rmax, size_t nscan,
                           const gfi_opts *opts, double *R_opt, double *mse_opt, size_t *nevals);

#ifdef __cplusplus
}
#endif
#endif
