/* Nonuniform fast Fourier transforms (NUFFT) of types 1, 2 and 3 in D = 1, 2, 3
 * dimensions, double precision, on FFTW3. Internal to gfi (not installed):
 * the band-limited engine (estimators/) computes every sum over data with it.
 *
 * Conventions (as FINUFFT, Barnett, Magland & af Klinteberg 2019):
 *
 *   type 1 (nonuniform -> uniform):  f[k] = sum_j c[j] exp(sign i k.x_j),
 *          k_d = -floor(n_d/2) .. ceil(n_d/2) - 1, x_j in [-3 pi, 3 pi)^D
 *          (any finite real x is accepted and folded 2 pi-periodically; far
 *          outside that range the folding itself loses digits, about
 *          |x| 1e-16 in the phase);
 *   type 2 (uniform -> nonuniform):  c[j] = sum_k f[k] exp(sign i k.x_j), same k and x;
 *   type 3 (nonuniform -> nonuniform): f[k] = sum_j c[j] exp(sign i s_k.x_j),
 *          x_j and s_k arbitrary real points (N x D and K x D).
 * sign is +1 or -1 (anything else is GFI_EINVAL).
 *
 * Arrays: points row-major (point j's coordinates at x[j D .. j D + D - 1]);
 * complex values interleaved (re, im) as double[2]. Uniform modes (types 1, 2)
 * are stored with the last axis fastest, each axis in increasing k.
 *
 * Method: spreading with the "exponential of semicircle" kernel
 * exp(beta (sqrt(1 - z^2) - 1)) of width w = ceil(log10(10 / tol)) + 1 grid
 * cells (3 <= w <= 16; FINUFFT's width plus one, see Accuracy) onto a grid
 * oversampled by sigma = upsampfac, FFTW, and division by the kernel's Fourier
 * transform (Gauss-Legendre quadrature of the kernel). The spreader evaluates
 * the kernel by piecewise polynomials (Chebyshev fits truncated at tol / 100,
 * Horner's rule). Type 3 rescales the sources (box half-width X per axis) and
 * targets (half-width S) so that a grid of nf ~ 2 sigma X S / pi + w + 1
 * points per axis resolves them, spreads onto it, and evaluates it at the
 * targets by an inner type 2 whose FFT grid is about sigma nf per axis.
 * Cost: O(N w^D + K w^D + (sigma nf)^D log nf).
 *
 * Accuracy: tol bounds every output's error relative to the sum of the
 * input magnitudes: |f_k - f_k,exact| <= tol sum_j |c_j| (for type 2,
 * sum_k |f_k|), within the factor measured below. Measured against the direct
 * sums (tests/test_nufft.c), sigma = 2:
 *   worst case, one source (all of its error in every output, as for
 *   coherent sources), types 1 and 3, D = 1-3, tol = 1e-3 .. 1e-12:
 *     max |f - f_exact| <= 2.5 tol sum |c|   (test holds it to 3 tol);
 *   random sources and weights of both signs, types 1-3, D = 1-3, tol = 1e-3,
 *   1e-6, 1e-9, 1e-11, 1e-13, type-3 spans X S from 1 to 1e4:
 *     max |f - f_exact| / sum |c| <= 0.1 tol, ||f - f_exact||_2 / ||f_exact||_2
 *     <= 0.6 tol (test holds both to 10 tol).
 * Below tol ~ 1e-13 rounding sets a floor of a few 1e-14 to 1e-13 (relative
 * to sum |c|); tol >= 0.1 gives w = 3 and errors about 5e-3. Accepted range
 * 1e-15 <= tol < 1; upsampfac 0 (= 2) or in [1.25, 4] (other sigma: the
 * width rule of FINUFFT plus one cell, checked only at tol = 1e-8 so far).
 *
 * Determinism: the result is bit-for-bit the same for any nthreads. Points
 * are processed in chunks in input order (2^18 points, or on a fine grid of
 * more cells the next power of two up to 2^22: a function of the grid alone,
 * so the sums' order changed from earlier versions only on grids of more
 * than 2^18 cells, within the accuracy stated above); in a chunk they are sorted
 * stably by grid tile and each grid cell sums its contributions in that order
 * (threads own slabs of the grid, never share a cell); FFTW plans are made with
 * FFTW_ESTIMATE and run on one thread. (FFTW wisdom imported into the process
 * by the caller could change which algorithm the planner picks, and so the
 * last bits; gfi itself never creates wisdom.)
 *
 * Thread safety: every function may be called from several threads at once
 * on different plans (FFTW's planner is serialised by gfi_fftw_lock, lib/fftw_lock.h;
 * other code in the process that plans FFTW transforms concurrently must not
 * bypass it). A plan must not be used by two threads at once.
 *
 * Status codes as gfi_status: GFI_EINVAL (bad arguments, tol out of range,
 * D not in 1..3, a streamed source outside the plan's box), GFI_ENONFINITE
 * (NaN/Inf points or values), GFI_ENOMEM, GFI_ERANGE (the fine grid this
 * transform needs would exceed max_grid, or its size overflows). */
#ifndef GFI_NUFFT_H
#define GFI_NUFFT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nufft_opts {
  double tol;        /* requested relative accuracy (default 1e-12) */
  int nthreads;      /* 0 = all cores */
  double upsampfac;  /* fine-grid oversampling sigma (0 = default 2.0) */
  size_t max_grid;   /* largest FFT grid (total points) accepted; 0 = default 2^28. For
                        type 3 this bounds the inner type 2's grid (~ sigma^D prod nf) */
  int real_sources;  /* type 3: the caller adds real strengths only (nufft3_add_real).
                        The targets are then not shifted to their centre on an axis
                        whose target range holds or nearly holds 0
                        (nufft3_target_centre), so the
                        strengths stay real and spread onto a real grid: half the
                        arithmetic and no phase per source, for a grid at most 2.25
                        times as long on that axis. nufft3_add stays correct, unhurried. */
} nufft_opts;

void nufft_default_opts(nufft_opts *o);

/* One-shot transforms. ms[D]: modes per axis (types 1, 2). */
int nufft1(int D, size_t N, const double *x, const double *c, int sign, const size_t *ms,
           double *f, const nufft_opts *o);
int nufft2(int D, size_t N, const double *x, double *c, int sign, const size_t *ms,
           const double *f, const nufft_opts *o);
int nufft3(int D, size_t N, const double *x, const double *c, int sign, size_t K,
           const double *s, double *f, const nufft_opts *o);

/* Type 1 or 2 in steps, for repeated transforms of the same shape: the plan
 * owns the kernel, the fine grid, the FFT plan, the deconvolution factors and
 * the spreader's scratch, allocated (and first touched by the threads that use
 * them) once; each exec then allocates nothing and faults no new pages. type
 * is 1 or 2; exec1 (type 1) reads N points x and strengths c and writes the
 * modes f; exec2 (type 2) reads the modes f and writes c. The same checks,
 * statuses and bits as nufft1 / nufft2 with the same arguments (which are
 * these calls on a plan made for one transform). */
typedef struct nufft_plan nufft_plan;
int nufft_plan_make(nufft_plan **p, int type, int D, const size_t *ms, int sign,
                    const nufft_opts *o);
int nufft_plan_exec1(nufft_plan *p, size_t N, const double *x, const double *c, double *f);
int nufft_plan_exec2(nufft_plan *p, size_t N, const double *x, double *c, const double *f);
void nufft_plan_destroy(nufft_plan *p);

/* Type 3 in steps, for sources that arrive in blocks (streaming): the plan
 * fixes the box that every source lies in (xlo[d] <= x_d <= xhi[d]) and the
 * targets s (K x D, copied); nufft3_add spreads a block of sources (additive;
 * a source outside the box is GFI_EINVAL); nufft3_exec writes f (K complex)
 * for all sources added so far; nufft3_reset clears the sources. Memory is
 * O(fine grid + K), independent of the number of sources. */
typedef struct nufft3_plan nufft3_plan;
int nufft3_plan_make(nufft3_plan **p, int D, const double *xlo, const double *xhi, int sign,
                     size_t K, const double *s, const nufft_opts *o);
int nufft3_add(nufft3_plan *p, size_t N, const double *x, const double *c);
/* The same with real strengths c (N doubles), or with every strength cval
 * when c is NULL: no complex copy of the strengths is needed. Same bits as
 * nufft3_add with those strengths and imaginary parts 0. */
int nufft3_add_real(nufft3_plan *p, size_t N, const double *x, const double *c, double cval);
int nufft3_exec(nufft3_plan *p, double *f);
void nufft3_reset(nufft3_plan *p);
/* Fine-grid size per axis (the spreading grid nf; the inner FFT grid is
 * next235even(sigma nf)) and spreading width of a plan (for the cost model
 * and the metadata); NULL-safe. */
void nufft3_info(const nufft3_plan *p, size_t nf[3], int *width);
void nufft3_destroy(nufft3_plan *p);

/* The centre a type-3 plan shifts its targets to on an axis whose targets
 * span [smin, smax]: the midpoint, or 0 under o->real_sources when
 * max(|smin|, |smax|) <= 9/8 (smax - smin), which holds for a range that
 * contains 0 and for nodes on (0, W] (the shift would make real strengths
 * complex; without it that axis' grid is at most 2.25 times as long). The
 * targets' half-width S that nufft3_grid_size takes is then
 * max(smax - centre, centre - smin). */
double nufft3_target_centre(const nufft_opts *o, double smin, double smax);

/* Predicted fine-grid size per axis for a type-3 transform whose sources lie
 * in a box of half-widths X[d] and targets in a box of half-widths S[d] (the
 * cost model of 'auto'); returns the total prod nf[d] (the same nf as
 * nufft3_info of a plan with those boxes), or 0 when the transform would be
 * GFI_ERANGE (its inner FFT grid exceeds o->max_grid) or the input is invalid. */
size_t nufft3_grid_size(int D, const double *X, const double *S, const nufft_opts *o,
                        size_t nf[3]);

/* Direct O(N K) reference sums with the same conventions (tests, and the
 * fallback for tiny problems). Deterministic for any nthreads. */
int nufft1_direct(int D, size_t N, const double *x, const double *c, int sign, const size_t *ms,
                  double *f, int nthreads);
int nufft2_direct(int D, size_t N, const double *x, double *c, int sign, const size_t *ms,
                  const double *f, int nthreads);
int nufft3_direct(int D, size_t N, const double *x, const double *c, int sign, size_t K,
                  const double *s, double *f, int nthreads);

#ifdef __cplusplus
}
#endif
#endif
