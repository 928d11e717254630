/* Private layout of a Nadaraya-Watson plan, shared by the engine files. */
#ifndef GFI_REGRESSION_INTERNAL_H
#define GFI_REGRESSION_INTERNAL_H

#include <stddef.h>
#include "gfi/regression.h"
#include "engine.h"
#include "bandlimited.h"

typedef enum { NW_FOURIER = 1, NW_GAUSS = 2 } nw_type;

struct gfi_nw_plan {
  nw_type type;
  size_t N, D, V;
  engine_layout lay; /* blocks, super-chunks, threads (engine.h) */
  double denom_tol;
  int scaling;      /* GFI_NW_SCALE_* */
  double *y;        /* V x Np responses (structure of arrays, zero-padded) */
  double *box;      /* 2 D: the box of the points x, lo then hi (found by the check of the data) */
  uint64_t digest[2]; /* gfi_digest of the N D values of x (the same pass) */

  /* Fourier */
  gfi_kernel kernel;
  double *R;        /* D radii */
  double *rk, *rl; /* D x Np: R_j k_ij = rk + rl exactly (engine_phase) */
  double *sk, *ck;  /* D x Np: sin and cos of R_j k_ij */
  engine_lazy lazy; /* with a fast route: the tables on first direct use (lazy.lock_ok) */
  bl_sum *fast;     /* fast route: column 0 the denominator, 1..V the numerators
                       (Gaussian: on the whitened data Linv k_i with R = 1) */
  gfi_method method;
  double tol;
  double ymax;      /* max |y_iv|: the scale of the fast route's accuracy */

  /* Gaussian */
  double *Linv;     /* D x D lower-triangular inverse Cholesky factor of H */
  double *z;        /* D x Np: Linv k_i */
  double exp_floor; /* -708: relative kernel values below exp(-708) are 0 (simd_math.h) */
  int hdiag;        /* H (so Linv) is diagonal: tensor grids stay tensor grids when whitened */
};

/* Partial sums of one query over a range of data, all relative to the scale
 * e: the true sums are value * 2^e (Fourier) or value * exp(e) (Gaussian).
 * e = -INFINITY means "nothing yet" (all sums 0). Stored as e, S, A, num[V]. */
#define NW_ACC(V) (3 + (V))

/* Engines: evaluate queries [q0, q1) against data [i0, i1) (whole blocks),
 * writing one accumulator per query at acc + (q - q0) * NW_ACC(V). */
size_t nw_ws_size(const gfi_nw_plan *p);
void nw_fourier_plain_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                           size_t i0, size_t i1, double *acc, double *ws);
void nw_fourier_scaled_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1,
                            size_t i0, size_t i1, double *acc, double *ws);
void nw_gauss_task(const gfi_nw_plan *p, const double *queries, size_t q0, size_t q1, size_t i0,
                   size_t i1, double *acc, double *ws);

/* Sums over data held in several pieces (the gfi program's data slabs under
 * MPI): nw_block_sums writes the accumulators of plan p at M queries (res:
 * M x NW_ACC(V), the scaled path for the Fourier kernel, the direct route);
 * nw_sums_finish brings nsets such results (parts: nsets x M x NW_ACC(V),
 * from plans with the same kernel, radii or H, and V) to a common scale,
 * adds them in set order and writes the rows and flags as gfi_nw_eval_flags
 * (GFI_EDENOM when a row was flagged). */
int nw_block_sums(const gfi_nw_plan *p, size_t M, const double *queries, double *res);
int nw_sums_finish(int fourier, size_t V, double denom_tol, size_t nsets, size_t M, const double *parts, double *out,
                   size_t *nflagged, unsigned char *flags);

/* Scaled path: renormalise the running product by 2^NW_RENORM_BITS when it
 * falls below 2^-NW_RENORM_BITS. */
#define NW_RENORM_BITS 500
/* Plain path: results are kept when sum |K_i| >= 2^-NW_PLAIN_MIN_BITS. */
#define NW_PLAIN_MIN_BITS 600
/* AUTO uses the plain path first when D * l <= this. */
#define NW_PLAIN_MAX_DL 64

#endif
