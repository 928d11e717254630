/* What the density and Nadaraya-Watson engines share: the blocked data
 * layout, the phase tables of the Fourier kernels, the Gaussian whitening,
 * and the threaded driver over (query tile, data super-chunk) tasks whose
 * partial sums are combined in a fixed order (identical bits for any thread
 * count). Private to the estimators. */
#ifndef GFI_ENGINE_H
#define GFI_ENGINE_H

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "gfi/opts.h"

/* Largest |R_j x_j| accepted: beyond 2^52 the phase R x is not resolved to
 * better than 1 in double precision, so sin(R x) means nothing. */
#define ENGINE_PHASE_MAX 4503599627370496.0

typedef struct engine_layout {
  size_t N;      /* data points */
  size_t Np;     /* N rounded up to whole blocks; padding points contribute 0 */
  size_t dblock; /* data points per inner block (SIMD loops over a block in L1) */
  size_t qtile;  /* queries per task (a data block is reused across them) */
  size_t nsuper; /* data super-chunks: a function of N only */
  int nthreads;
} engine_layout;

/* Block sizes from opts (0 = defaults), Np and the super-chunk count. */
void engine_layout_init(engine_layout *L, size_t N, const gfi_opts *opts);

/* The phase R x exactly as hi + lo (hi = fl(R x), lo = fma(R, x, -hi)) and
 * sin, cos of the exact product. Phases are kept in two parts so that
 * u = (rx - rk) + (rxl - rkl) is accurate to a few ulps of u itself for any
 * |R x| <= ENGINE_PHASE_MAX: fl(R x) alone is off by up to ulp(R x)/2, which
 * at R x = 1e8 is 7e-9 and would be the error of sinc(u) for a close pair
 * (the close pair's hi parts subtract exactly, by Sterbenz's lemma). */
static inline void engine_phase(double R, double x, double *hi, double *lo, double *s, double *c) {
  double a = R * x, b = fma(R, x, -a);
  double sa = sin(a), ca = cos(a);
  if (b == 0) {
    *s = sa;
    *c = ca;
  } else {
    double sb = sin(b), cb = cos(b);
    *s = sa * cb + ca * sb;
    *c = ca * cb - sa * sb;
  }
  *hi = a;
  *lo = b;
}

/* GFI_ERANGE when some |R_j x_ij| > ENGINE_PHASE_MAX (x: N rows of D,
 * finite), else GFI_OK; one pass without a division or an early exit. */
int engine_check_phase(size_t D, const double *R, size_t N, const double *x);

/* One pass over x (N rows of D), in fixed blocks on nthreads threads (0:
 * all): GFI_ENONFINITE if some value is not finite; else *range (when R
 * and range are given) is GFI_ERANGE where some |R_j x_ij| >
 * ENGINE_PHASE_MAX, GFI_OK otherwise; returns GFI_OK then. For N >= 1, the
 * same pass gives the data box: lo[j] and hi[j] (D values each; each may
 * be NULL), the smallest and largest x_ij on axis j (for bl_sum_make_box
 * and gfi_density_data_box), and digest[2] (may be NULL) gfi_digest of the
 * N D values. GFI_ENOMEM when its per-block results (more than 64 blocks of
 * 2^17 values, or D > 3) find no memory. */
int engine_check_data(size_t D, const double *R, size_t N, const double *x, int nthreads, int *range,
                      double *lo, double *hi, uint64_t *digest);

/* Phase tables built on first use (the direct route may never run: a grid
 * that is binned, queries the fast route takes). The plan keeps a copy of
 * the data until then; evaluations in several threads build them once,
 * under the lock. */
typedef struct engine_lazy {
  double *x; /* N x D data, until the tables are built */
  int borrowed; /* x is not z's to free */
  double pad;
  pthread_mutex_t lock;
  int lock_ok;
  atomic_int done;
} engine_lazy;

/* Start: keep a copy of x (GFI_ENOMEM) for tables built later. */
int engine_lazy_init(engine_lazy *z, size_t N, size_t D, const double *x, double pad);
/* The same without a copy: x (N x D) is the plan's own copy of the data
 * (bl_sum_points), alive as long as z, and not freed here. */
int engine_lazy_borrow(engine_lazy *z, const double *x, double pad);
/* The tables (*rk .. *ck) exist afterwards (built now if not yet), or an
 * error status (GFI_ENOMEM; a later call tries again). */
int engine_lazy_tables(engine_lazy *z, const engine_layout *L, size_t D, const double *R, double **rk,
                       double **rl, double **sk, double **ck);
void engine_lazy_free(engine_lazy *z);

/* Structure-of-arrays phase tables for the angle-subtraction identity:
 * rk[j Np + i] + rl[j Np + i] = R_j x_ij exactly (engine_phase), sk = sin,
 * ck = cos of it; padding points i >= N get rk = pad (far from every query),
 * rl = 0 and sk = ck = 0, so their factor is 0. GFI_ERANGE when some
 * |R_j x_ij| > ENGINE_PHASE_MAX. */
int engine_phase_tables(const engine_layout *L, size_t D, const double *x, const double *R,
                        double pad, double *rk, double *rl, double *sk, double *ck);
/* The same into four tables allocated here (D x L->Np doubles each); on
 * failure (GFI_ENOMEM, GFI_ERANGE) none is kept and *rk .. *ck are NULL. */
int engine_phase_tables_new(const engine_layout *L, size_t D, const double *x, const double *R, double pad,
                            double **rk, double **rl, double **sk, double **ck);

/* Gaussian kernels with bandwidth matrix H (D x D): GFI_EBANDWIDTH unless H
 * is finite, symmetric (relative 1e-12) and positive definite. On success
 * Linv (D x D, zeroed above the diagonal) is the inverse of H's lower
 * Cholesky factor and *logdet_half = log det(H) / 2. */
int engine_whiten(size_t D, const double *H, double *Linv, double *logdet_half);

/* z[a Np + i] = (Linv x_i)_a for i < N and `pad` for padding points. */
void engine_whitened_table(const engine_layout *L, size_t D, const double *Linv, const double *x,
                           double pad, double *z);
/* Rows x (M x D, row-major) whitened by Linv, in the same order of operations
 * as engine_whitened_table (the Gaussian's fast route); NULL without memory. */
double *engine_whiten_rows(size_t D, const double *Linv, size_t M, const double *x);

/* One task: queries [q0, q1) against data [i0, i1) (whole blocks), writing W
 * doubles per query at dst + (q - q0) W; ws holds the workspace. */
typedef void (*engine_task)(const void *ctx, size_t q0, size_t q1, size_t i0, size_t i1, double *dst,
                            double *ws);
/* Partial sums of a super-chunk without data: W doubles for each of nq queries. */
typedef void (*engine_fill)(double *dst, size_t nq, size_t W);

/* Run every task on L->nthreads threads into part (nsuper x M x W doubles:
 * super-chunk s, query q at part + (s M + q) W). ws_doubles of workspace per
 * thread. GFI_ENOMEM when a workspace cannot be allocated. */
int engine_run(const engine_layout *L, size_t M, size_t W, size_t ws_doubles, engine_task task,
               const void *ctx, engine_fill fill, double *part);

#endif
