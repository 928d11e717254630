/* Monte-Carlo error of Nadaraya-Watson estimators on a regression truth:
 * pointwise MSE at chosen points with its bias and variance parts, and the
 * design-weighted integrated MSE
 *
 *   IMSE = E int (f_hat(x) - f(x))^2 p(x) dx,   p = the design density,
 *
 * estimated over replications on RNG streams (replication k draws its data
 * from stream (seed, k), so results are identical for any thread count).
 * The integral over p is a mean over M points drawn once from the design on
 * stream (seed, GFI_NW_POINTS_STREAM) and held fixed across replications, so
 * that the bias/variance split is exact for those points:
 *   mse = bias2 + var * (K - 1) / K   (K replications; var is unbiased).
 * mse_se is the standard error over replications of the per-replication
 * mean squared error (the Monte-Carlo error of the M points themselves is
 * not included: it is the spread of (f_hat - f)^2 over the design divided by
 * sqrt(M), small for the M used in rate checks).
 *
 * Flagged rows (odd l, gfi/regression.h) have no estimate: they are left out
 * of the means and counted in nflagged. */
#ifndef GFI_REGRESSION_MSE_H
#define GFI_REGRESSION_MSE_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>
#include "status.h"
#include "kernel.h"
#include "model.h"
#include "opts.h"
#include "regfun.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stream of the fixed evaluation points (replications use 0, 1, 2, ...). */
#define GFI_NW_POINTS_STREAM ((uint64_t)1 << 62)

/* One regression study: data of size N from design/truth/noise, estimated
 * by the Fourier NW (gauss = 0: kernel, R) or the Gaussian NW (gauss = 1: H).
 * The pointers are borrowed. */
typedef struct gfi_nw_study {
  const gfi_model *design;
  const gfi_regfun *truth;
  gfi_noise noise;
  size_t N;
  int gauss;
  gfi_kernel kernel;
  const double *R;     /* D radii (Fourier) */
  const double *H;     /* D x D bandwidth matrix (Gaussian) */
  double denom_tol;    /* flag threshold; 0 = GFI_NW_DENOM_TOL */
} gfi_nw_study;

typedef struct gfi_nw_mse_result {
  size_t nreps, M;
  double mse, mse_se;  /* mean over points and replications; s.e. over replications */
  double bias2, var;   /* mean over points of squared bias and of the variance */
  size_t nflagged;     /* flagged (point, replication) pairs left out */
} gfi_nw_mse_result;

/* M points from the design on stream (seed, GFI_NW_POINTS_STREAM). */
GFI_EXPORT int gfi_nw_design_points(const gfi_model *design, uint64_t seed, size_t M, double *points);

/* Monte-Carlo MSE of the study at M points (M x D) over nreps replications
 * (opts->seed is the seed; opts->nthreads threads over replications). The
 * per-point arrays (M values each; any may be NULL) get the bias
 * E f_hat - f, the variance, the MSE and its standard error. Errors:
 * GFI_EINVAL, GFI_EEMPTY (M, N or nreps = 0), GFI_EDIM (design, truth and
 * points disagree), GFI_ENOMEM, and any plan error. */
GFI_EXPORT int gfi_nw_mse(const gfi_nw_study *s, size_t M, const double *points, size_t nreps,
               const gfi_opts *opts, gfi_nw_mse_result *res, double *pt_bias, double *pt_var,
               double *pt_mse, double *pt_mse_se);

#ifdef __cplusplus
}
#endif
#endif
