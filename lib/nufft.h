/* Nonuniform fast Fourier transforms (NUFFT) of types 1, 2 and 3 in D = 1, 2, 3
 * dimensions, double precision, on FFTW3. Internal to gfi (not installed):
 * the band-limited engine (estimators/) computes every sum over data with it.
 *
 * Conventions (as FINUFFT, Barnett, Magland & af Klinteberg 2019):
 *
 *   type 1 (nonuniform -> uniform):  f[k] = sum_j c[j] exp(sign i k.x_j),
 *          k_d = -floor(n_d/2) .. ceil(n_d/2) - 1, x_j in [-3 pi, 3 pi)^D
 *          (any real x is accepted and folded 2 pi-periodically);
 *   type 2 (uniform -> nonuniform):  c[j] = sum_k f[k] exp(sign i k.x_j), same k and x;
 *   type 3 (nonuniform -> nonuniform): f[k] = sum_j c[j] exp(sign i s_k.x_j),
 *          x_j and s_k arbitrary real points (N x D and K x D).
 *
 * Arrays: points row-major (point j's coordinates at x[j D .. j D + D - 1]);
 * complex values interleaved (re, im) as double[2]. Uniform modes (types 1, 2)
 * are stored with the last axis fastest, each axis in increasing k.
 *
 * Accuracy: tol is the requested relative error in the sense of FINUFFT:
 * |f - f_exact|_2 / |c|_1-scaled, i.e. each output is within about
 * tol * sum_j |c_j| of the exact sum. Accepted range 1e-15 <= tol < 1.
 *
 * Determinism: the result is bit-for-bit the same for any nthreads (spreading
 * is done in a fixed order per grid region, reductions in a fixed order).
 *
 * Status codes as gfi_status: GFI_EINVAL (bad arguments, tol out of range,
 * D not in 1..3), GFI_ENONFINITE (NaN/Inf points or values), GFI_ENOMEM,
 * GFI_ERANGE (the fine grid this transform needs would exceed max_grid). */
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
  size_t max_grid;   /* largest fine grid (total points) accepted; 0 = default 2^28 */
} nufft_opts;

void nufft_default_opts(nufft_opts *o);

/* One-shot transforms. ms[D]: modes per axis (types 1, 2). */
int nufft1(int D, size_t N, const double *x, const double *c, int sign, const size_t *ms,
           double *f, const nufft_opts *o);
int nufft2(int D, size_t N, const double *x, double *c, int sign, const size_t *ms,
           const double *f, const nufft_opts *o);
int nufft3(int D, size_t N, const double *x, const double *c, int sign, size_t K,
           const double *s, double *f, const nufft_opts *o);

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
int nufft3_exec(nufft3_plan *p, double *f);
void nufft3_reset(nufft3_plan *p);
/* Fine-grid size per axis and spreading width of a plan (for the cost model
 * and the metadata); NULL-safe. */
void nufft3_info(const nufft3_plan *p, size_t nf[3], int *width);
void nufft3_destroy(nufft3_plan *p);

/* Predicted fine-grid size per axis for a type-3 transform whose sources lie
 * in a box of half-widths X[d] and targets in a box of half-widths S[d] (the
 * cost model of 'auto'); returns the total, or 0 when it exceeds o->max_grid. */
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
