/* Private layout of a density plan, shared by the engine files. */
#ifndef GFI_DENSITY_INTERNAL_H
#define GFI_DENSITY_INTERNAL_H

#include <stddef.h>
#include "gfi/density.h"
#include "engine.h"
#include "bandlimited.h"

typedef enum { DENSITY_FOURIER = 1, DENSITY_GAUSS = 2 } density_type;

struct gfi_density_plan {
  density_type type;
  size_t N, D;
  engine_layout lay; /* blocks, super-chunks, threads (engine.h) */
  double *w;        /* normalised weights (Np, zero-padded) or NULL for 1/N */
  double uniform_w; /* 1/N when w == NULL */
  double *box;      /* 2 D: the data box, lo then hi (found by the check of the data) */
  uint64_t digest[2]; /* gfi_digest of the N D data values (the same pass) */

  /* Fourier */
  gfi_kernel kernel;
  double *R;        /* D radii */
  double *g;        /* per-axis factor scale: (R_j/A)^(1/l) (powers) or R_j/A (custom) */
  double *rk, *rl; /* D x Np: R_j k_ij = rk + rl exactly (engine_phase) (structure of arrays) */
  double *sk, *ck;  /* D x Np: sin and cos of R_j k_ij */
  engine_lazy lazy; /* AUTO with a fast route: the tables on first direct use (lazy.lock_ok) */
  bl_sum *fast;     /* fast route (phi = z^l or Gaussian, D <= 3, method not DIRECT) or NULL;
                       Gaussian: on the whitened data Linv k_i with R = 1 */
  gfi_method method;
  double tol;

  /* Gaussian */
  double *Linv;     /* D x D lower-triangular inverse Cholesky factor of H */
  double *z;        /* D x Np: Linv k_i (structure of arrays) */
  double lognorm;   /* -D/2 log(2 pi) - log det(H)/2 */
  double exp_floor; /* -708: kernel values below exp(-708) are 0 (see simd_math.h) */
  int hdiag;        /* H (so Linv) is diagonal: tensor grids stay tensor grids when whitened */
};

/* Engines: evaluate queries [q0, q1) against data super-chunk s, writing the
 * partial sums into part[(q - q0)]. Workspace `ws` holds at least
 * density_ws_size(plan) doubles. */
size_t density_ws_size(const gfi_density_plan *p);
void density_fourier_task(const gfi_density_plan *p, const double *queries, size_t q0, size_t q1,
                          size_t i0, size_t i1, double *part, double *ws);
void density_gauss_task(const gfi_density_plan *p, const double *queries, size_t q0, size_t q1,
                        size_t i0, size_t i1, double *part, double *ws);

#endif
