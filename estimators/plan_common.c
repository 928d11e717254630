/* The set-up and query checks that density and Nadaraya-Watson plans share
 * (plan_common.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "plan_common.h"
#include "gfi/validate.h"
#include "alloc.h"
#include "fail.h"
#include "kernel_internal.h"

/* Padding points of a whitened table sit far from every query: their
 * kernel values are exp(-huge) = 0. */
#define PAD_COORD 1e100

int plan_check_method(const gfi_opts *opts, int custom, size_t D, double *tol, gfi_method *method) {
  int st = bl_check_opts(opts, tol, method);
  if (st) return st;
  if (*method == GFI_METHOD_FAST && (custom || D > BL_MAX_DIM)) return fail_param(GFI_EUNSUPPORTED, "method");
  return GFI_OK;
}

int plan_check_radii(size_t D, const double *R) {
  if (!R) return GFI_EINVAL;
  int st = fail_named(gfi_check_dim(D), "D");
  if (st) return st;
  return fail_named(gfi_check_radii(R, D, NULL), "R");
}

int plan_whiten(size_t D, const double *H, double **Linv, double *logdet_half) {
  *Linv = NULL;
  if (!H) return GFI_EINVAL;
  int st = fail_named(gfi_check_dim(D), "D");
  if (st) return st;
  double *L = gfi_malloc3(D, D, sizeof *L);
  if (!L) return GFI_ENOMEM;
  *logdet_half = 0;
  st = fail_named(engine_whiten(D, H, L, logdet_half), "H");
  if (st) {
    free(L);
    return st;
  }
  *Linv = L;
  return GFI_OK;
}

int plan_check_points(size_t N, size_t D, size_t width, const double *x, const char *name,
                      const double *R, const gfi_opts *opts, int *range, double *lo, double *hi,
                      uint64_t *digest) {
  if (N > ((size_t)1 << 52) / width) return fail_param(GFI_EDIM, name);
  return fail_named(engine_check_data(D, R, N, x, opts ? opts->nthreads : 0, range, lo, hi, digest), name);
}

int plan_data_facts(const double *box, const uint64_t *dg, size_t D, double *lo, double *hi, uint64_t *digest) {
  if (!box) return GFI_EINVAL;
  if (lo) memcpy(lo, box, D * sizeof *lo);
  if (hi) memcpy(hi, box + D, D * sizeof *hi);
  if (digest) digest[0] = dg[0], digest[1] = dg[1];
  return GFI_OK;
}

int plan_check_queries(size_t M, size_t D, size_t width, const double *R, const double *queries) {
  if (M > ((size_t)1 << 52) / width) return fail_param(GFI_EDIM, "queries");
  int st = fail_named(gfi_check_finite(queries, M * D, NULL), "queries");
  if (st) return st;
  if (R && engine_check_phase(D, R, M, queries)) return fail_param(GFI_ERANGE, "queries");
  return GFI_OK;
}

int plan_gauss_table(const engine_layout *L, size_t D, const double *Linv, const double *x, double **z,
                     int *hdiag) {
  *z = gfi_malloc3(D, L->Np, sizeof **z);
  if (!*z) return GFI_ENOMEM;
  engine_whitened_table(L, D, Linv, x, PAD_COORD, *z);
  *hdiag = 1;
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < a; b++)
      if (Linv[a * D + b] != 0) *hdiag = 0;
  return GFI_OK;
}

int plan_gauss_fast(bl_sum **fast, size_t D, const double *Linv, size_t N, const double *x, size_t nc,
                    double *c, double uniform, const gfi_opts *opts, double pair_cost) {
  double *z = engine_whiten_rows(D, Linv, N, x);
  if (!z) {
    free(c);
    return GFI_ENOMEM;
  }
  const double one[BL_MAX_DIM] = {1, 1, 1};
  gfi_kernel gk;
  kernel_gauss(&gk);
  /* the sum keeps the whitened points and the coefficients: no copies */
  return bl_sum_make_box(fast, (int)D, &gk, N, z, c ? nc : 1, c, c ? 0 : uniform, one, opts, pair_cost, NULL,
                         BL_ADOPT_X | BL_ADOPT_C);
}

void plan_whiten_grid(size_t D, const double *Linv, const double *lo, const double *hi, double *zlo,
                      double *zhi) {
  for (size_t j = 0; j < D; j++) {
    zlo[j] = Linv[j * D + j] * lo[j];
    zhi[j] = Linv[j * D + j] * hi[j];
  }
}

void plan_info_direct(gfi_fast_info *info, size_t D, double tol, int reason) {
  memset(info, 0, sizeof *info);
  info->route = GFI_METHOD_DIRECT;
  info->reason = reason;
  info->dim = D;
  info->tol = tol > 0 ? tol : GFI_FAST_TOL_DEFAULT;
}

int plan_no_fast_reason(int custom, size_t D) {
  if (custom) return GFI_ROUTE_KERNEL;
  if (D > BL_MAX_DIM) return GFI_ROUTE_DIM;
  return GFI_ROUTE_REQUESTED;
}
