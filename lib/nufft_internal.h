/* Internals of the NUFFT (lib/nufft.c, lib/nufft_spread.c): the exponential of
 * semicircle (ES) spreading kernel, its Fourier transform, and deterministic
 * parallel spreading/interpolation on a periodic fine grid. Not installed. */
#ifndef GFI_NUFFT_INTERNAL_H
#define GFI_NUFFT_INTERNAL_H

#include <stddef.h>
#include <fftw3.h>
#include "nufft.h"

#define NUFFT_MAX_WIDTH 16
#define NUFFT_GL_NODES 44 /* most quadrature nodes for the kernel's transform: 2 (16 + 6) */
#define NUFFT_MAX_DEG 30  /* largest degree of the kernel's piecewise polynomial */

/* The ES kernel phi(z) = exp(beta (sqrt(1 - z^2) - 1)), |z| < 1, scaled to
 * a support of ns grid cells: a point at grid coordinate t gives weight
 * phi(2 (i - t) / ns) to grid index i. */
typedef struct nufft_kernel {
  int ns;          /* width in grid cells, 2..16 */
  double beta;     /* ES shape parameter */
  double sigma;    /* upsampling factor of the fine grid */
  int q;           /* quadrature nodes for phihat */
  double a[NUFFT_GL_NODES], b[NUFFT_GL_NODES]; /* phihat(xi) = sum a_i cos(b_i xi) */
  /* The kernel's values at the ns cells a point reaches, as polynomials of
   * degree deg in the point's offset: cell m gets sum_k pc[k][m] u^k, u in
   * [-1, 1] the point's position inside its cell. deg = 0: no polynomial met
   * the accuracy bound, exp is evaluated instead. */
  int deg;
  double pc[NUFFT_MAX_DEG + 1][NUFFT_MAX_WIDTH];
  /* The same polynomials by parity, for the first nh = (ns + 1) / 2 cells:
   * cell m gets E_m(u^2) + u O_m(u^2), and its mirror cell ns - 1 - m, which
   * sees the point at -u (the kernel is even), gets E_m(u^2) - u O_m(u^2).
   * Half the multiply-adds of pc. nd coefficients each (O's top one 0 when
   * deg is even). */
  int nd;
  double pe[NUFFT_MAX_DEG / 2 + 1][NUFFT_MAX_WIDTH / 2];
  double po[NUFFT_MAX_DEG / 2 + 1][NUFFT_MAX_WIDTH / 2];
} nufft_kernel;

/* Width and shape from the options (NULL = defaults). GFI_EINVAL when tol is
 * outside [1e-15, 1) or upsampfac (when non-zero) outside [1.25, 4]. */
int nufft_kernel_setup(const nufft_opts *o, nufft_kernel *k);

/* Fourier transform of the kernel in grid units:
 * phihat(xi) = int phi(2 u / ns) cos(xi u) du over |u| < ns/2, xi in radians
 * per grid cell. */
double nufft_phihat(const nufft_kernel *k, double xi);

/* phihat on [0, pi] (it is even) by local Taylor polynomials, exact up to
 * rounding: phihat(c + t) = sum_n t^n sum_i a_i b_i^n cos(b_i c + n pi / 2) / n!
 * around the centre c of each of NUFFT_PH_PIECES pieces, truncated where the
 * remainder sum_i |a_i| (b_i h)^(n+1) / (n+1)! (h the half-width) is below
 * 1e-17 sum_i |a_i| -- below the rounding of the direct sum of cosines, whose
 * terms are as large. About 15 multiply-adds instead of 2 (ns + 6) cosines;
 * the type-3 transform evaluates it twice per target and axis. */
#define NUFFT_PH_PIECES 64
#define NUFFT_PH_MAXDEG 24
typedef struct nufft_phihat_tab {
  int deg;       /* 0: not built (beyond NUFFT_PH_MAXDEG); use nufft_phihat */
  double h;      /* half-width of a piece */
  double c[NUFFT_PH_PIECES][NUFFT_PH_MAXDEG + 1];
} nufft_phihat_tab;
void nufft_phihat_tab_make(const nufft_kernel *k, nufft_phihat_tab *t);
/* phihat(xi) from the table (from nufft_phihat for |xi| > pi or no table). */
double nufft_phihat_tab_eval(const nufft_phihat_tab *t, const nufft_kernel *k, double xi);
/* The table's polynomial at |xi| <= pi with t->deg > 0 (the caller checks):
 * inline, so that a loop over targets vectorises; the same operations as
 * nufft_phihat_tab_eval, so the same bits. */
static inline double nufft_phihat_tab_poly(const nufft_phihat_tab *t, double x) {
  int p = (int)(x / (2 * t->h));
  if (p >= NUFFT_PH_PIECES) p = NUFFT_PH_PIECES - 1;
  double u = x - (2 * p + 1) * t->h, s = t->c[p][t->deg];
  for (int n = t->deg - 1; n >= 0; n--) s = s * u + t->c[p][n];
  return s;
}

/* Smallest even n >= m whose only prime factors are 2, 3 and 5 (0 when none
 * fits in size_t). */
size_t nufft_next235even(size_t m);

/* Scratch of the spreader (the points' sort), kept between calls; zero-
 * initialise, free with nufft_work_free. */
typedef struct nufft_work {
  size_t n, nb;
  size_t *key, *perm, *start;
  double *pads;   /* the small 1-D grids' per-block copies */
  size_t npads;   /* their capacity in doubles */
  size_t *hist;   /* the parallel sort's per-segment bin counts */
  size_t nhist;   /* their capacity */
} nufft_work;
void nufft_work_free(nufft_work *w);

/* Spread N values c (complex, interleaved) at grid coordinates t (N x D,
 * t[j D + d] in [0, nf[d]), any value is wrapped) onto the periodic grid
 * (complex, last axis fastest), adding to it. The summation order at every
 * grid cell is fixed (points sorted stably by bin), so the result does not
 * depend on nthreads. Needs nf[d] >= ns. GFI_ENOMEM on allocation failure
 * (the grid is then unchanged). w: scratch reused between calls, or NULL. */
int nufft_spread(const nufft_kernel *k, int D, const size_t *nf, size_t N, const double *t,
                 const double *c, double *grid, int nthreads, nufft_work *w);
/* nufft_spread for N real strengths c onto a real grid (one double per cell,
 * last axis fastest): the same summation order, so the same bits as the real
 * parts of nufft_spread with imaginary parts 0. */
int nufft_spread_real(const nufft_kernel *k, int D, const size_t *nf, size_t N, const double *t,
                      const double *c, double *grid, int nthreads, nufft_work *w);

/* Grid coordinates of points j0 .. j1 - 1 of a stream into t[0 .. j1 - j0). */
typedef void (*nufft_prep1)(void *ctx, size_t j0, size_t j1, double *t);
/* Whether a D-dimensional grid nf takes nufft_spread_real_1d_stream (a 1-D
 * grid small enough to stay in cache). */
int nufft_spread_stream_ok(const nufft_kernel *k, int D, const size_t *nf);
/* N real strengths c (or every one cval when c is NULL) at coordinates that
 * prep computes block by block, onto a small real 1-D grid of nf cells
 * (nufft_spread_stream_ok): the bits of prep over chunks of 2^18 points, each
 * followed by nufft_spread_real, with fewer parallel regions and no
 * coordinate buffer. w is required. */
int nufft_spread_real_1d_stream(const nufft_kernel *k, size_t nf, size_t N, nufft_prep1 prep,
                                void *pctx, const double *c, double cval, double *grid,
                                int nthreads, nufft_work *w);

/* The adjoint: c[j] = sum_i phi(...) grid[i] over the ns^D cells near t_j. */
int nufft_interp(const nufft_kernel *k, int D, const size_t *nf, size_t N, const double *t,
                 double *c, const double *grid, int nthreads, nufft_work *w);

/* In-place FFT of a D-dimensional grid (last axis fastest), deterministic for
 * any thread count (lib/nufft_fft.c). Plans are made on grid; exec may be
 * given any grid of the same shape. */
typedef struct nufft_fft {
  int D;
  size_t n[3], tot;
  fftw_plan whole, row, col[2], rem[2];
  size_t cols[2];
} nufft_fft;
int nufft_fft_make(nufft_fft *f, int D, const size_t *n, double *grid, int sign);
void nufft_fft_exec(const nufft_fft *f, double *grid, int nthreads);
void nufft_fft_free(nufft_fft *f);


#endif
