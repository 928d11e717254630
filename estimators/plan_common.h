/* What density and Nadaraya-Watson plans share before and around their
 * engines: the checks of options, radii, bandwidths, data and queries (with
 * their error names), the Gaussian's whitened tables and grids, and the
 * direct route's info. Calls nothing in density.c or regression.c. */
#ifndef GFI_PLAN_COMMON_H
#define GFI_PLAN_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include "gfi/status.h"
#include "engine.h"
#include "bandlimited.h"

/* Options (bl_check_opts), then the fast route's reach: GFI_EUNSUPPORTED
 * named "method" when FAST is asked of a custom kernel or D > BL_MAX_DIM. */
int plan_check_method(const gfi_opts *opts, int custom, size_t D, double *tol, gfi_method *method);

/* R (D radii): GFI_EINVAL when NULL, then D (named "D") and R ("R"). */
int plan_check_radii(size_t D, const double *R);

/* H (D x D): GFI_EINVAL when NULL, D checked ("D"), then whitened
 * (engine_whiten, "H"): *Linv (the caller frees it) and log det(H) / 2;
 * *Linv is NULL on failure. */
int plan_whiten(size_t D, const double *H, double **Linv, double *logdet_half);

/* Data x (N rows of D; width numbers a point in the plan): GFI_EDIM when
 * N width passes 2^52, then finite values and what the same pass finds
 * (engine_check_data): with R, the phase range *range; the box lo/hi (D
 * values each) and the digest (gfi_digest), each may be NULL; errors named
 * `name`. */
int plan_check_points(size_t N, size_t D, size_t width, const double *x, const char *name,
                      const double *R, const gfi_opts *opts, int *range, double *lo, double *hi,
                      uint64_t *digest);

/* What a plan kept of its check's pass, copied out: the box (box: D lows,
 * then D highs) into lo, hi (D each; either may be NULL to skip it) and
 * the digest into digest[2] (may be NULL). GFI_EINVAL when box is NULL
 * (no plan). */
int plan_data_facts(const double *box, const uint64_t *dg, size_t D, double *lo, double *hi, uint64_t *digest);

/* Queries (M rows of D, width numbers a row): the size, finite values and,
 * with R, the phase range; errors named "queries". */
int plan_check_queries(size_t M, size_t D, size_t width, const double *R, const double *queries);

/* The Gaussian's whitened data table (D x Np: Linv x_i, padding far from
 * every query) and whether Linv is diagonal (tensor grids stay tensor grids). */
int plan_gauss_table(const engine_layout *L, size_t D, const double *Linv, const double *x, double **z,
                     int *hdiag);

/* The Gaussian's fast route on the whitened data x Linv: the unit Gaussian
 * family (kernel_gauss, R = 1) with nc coefficient columns c (column v at
 * c + v N; allocated with malloc and kept by the sum, freed by it, also on
 * failure), or, when c is NULL, the one coefficient `uniform` for all. */
int plan_gauss_fast(bl_sum **fast, size_t D, const double *Linv, size_t N, const double *x, size_t nc,
                    double *c, double uniform, const gfi_opts *opts, double pair_cost);

/* A diagonal Linv's whitened grid: Linv_jj lo_j : Linv_jj hi_j. */
void plan_whiten_grid(size_t D, const double *Linv, const double *lo, const double *hi, double *zlo,
                      double *zhi);

/* The direct route's info, and why a plan has no fast route. */
void plan_info_direct(gfi_fast_info *info, size_t D, double tol, int reason);
int plan_no_fast_reason(int custom, size_t D);

#endif
