/* NUFFT of types 1, 2, 3 by spreading with the exponential of semicircle
 * kernel onto an oversampled grid, FFTW, and deconvolution by the kernel's
 * Fourier transform (Barnett, Magland & af Klinteberg 2019); type 3 as a
 * spreading onto a rescaled grid followed by an inner type 2 (Lee & Greengard
 * 2005). Conventions and accuracy in nufft.h. */
#include <fftw3.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nufft.h"
#include "nufft_internal.h"
#include "par.h"
#include "gfi/status.h"
#include "alloc.h"
#include "clones.h"
#include "simd_sincos.h"

/* Points per spreading pass (part of the summation order): the smallest power
 * of two at least the fine grid's cell count, within [CHUNK_MIN, CHUNK_MAX].
 * Each pass sweeps the whole grid in bin order, so a chunk much smaller than
 * the grid pays that sweep many times over: at N = 1e7 points on a 1-D grid
 * of 2e6 cells, 2^18-point chunks cost 0.92 s of CPU per type 1 and 2^21-point
 * ones 0.62 s (tol 1e-6, one thread). Small grids keep 2^18 (and their bits). */
#define CHUNK_MIN ((size_t)1 << 18)
#define CHUNK_MAX ((size_t)1 << 22)
static size_t chunk_for(size_t cells) {
  size_t c = CHUNK_MIN;
  while (c < cells && c < CHUNK_MAX) c *= 2;
  return c;
}
#define DEFAULT_MAX_GRID ((size_t)1 << 28)

double nufft3_target_centre(const nufft_opts *o, double smin, double smax) {
  /* the unshifted half-width max |s| at most 9/8 of the full width: a range
   * that holds 0, or a rule's nodes on (0, W] whose first node is not 0 */
  if (o && o->real_sources && fmax(fabs(smin), fabs(smax)) <= 1.125 * (smax - smin)) return 0.0;
  return 0.5 * (smin + smax);
}

static int nt_of(const nufft_opts *o) { return o ? o->nthreads : 0; }
static size_t max_grid_of(const nufft_opts *o) {
  return o && o->max_grid ? o->max_grid : DEFAULT_MAX_GRID;
}

static int all_finite(size_t n, const double *v) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* all_finite over a large array, CHK_BLOCK values per task on nthreads
 * threads (the answer does not depend on the split): a serial pass over the
 * points and strengths was the largest serial part of a call at N = 1e7. */
#define CHK_BLOCK ((size_t)1 << 16)
typedef struct {
  size_t n;
  const double *v;
} chk_ctx;

static int finite_task(void *vc, size_t k, void *ws) {
  (void)ws;
  const chk_ctx *c = vc;
  size_t a = k * CHK_BLOCK, b = c->n - a < CHK_BLOCK ? c->n : a + CHK_BLOCK;
  const double *v = c->v;
  double z = 0; /* 0 v is NaN for NaN and +-Inf */
#pragma omp simd reduction(+ : z)
  for (size_t i = a; i < b; i++) z += 0.0 * v[i];
  return z == 0 ? GFI_OK : GFI_ENONFINITE;
}

static int all_finite_par(size_t n, const double *v, int nthreads) {
  if (n < 4 * CHK_BLOCK) return all_finite(n, v);
  chk_ctx c = {n, v};
  return par_for((n + CHK_BLOCK - 1) / CHK_BLOCK, par_threads(nthreads), 0, finite_task, &c) ==
         GFI_OK;
}

/* Fine grid per axis for m modes: the next even 2,3,5-smooth size >= sigma m
 * and >= 2 ns. */
static int fine_size(const nufft_kernel *k, double m, size_t max_grid, size_t *nf) {
  double want = ceil(k->sigma * m);
  if (want < 2.0 * k->ns) want = 2.0 * k->ns;
  if (!(want <= (double)max_grid) || want > (double)(INT_MAX / 2)) return GFI_ERANGE;
  size_t n = nufft_next235even((size_t)want);
  if (n == 0 || n > (size_t)INT_MAX) return GFI_ERANGE;
  *nf = n;
  return GFI_OK;
}

static int grid_total(int D, const size_t *nf, size_t max_grid, size_t *tot) {
  size_t t = 1;
  for (int d = 0; d < D; d++) {
    if (t > SIZE_MAX / nf[d]) return GFI_ERANGE;
    t *= nf[d];
  }
  if (t > max_grid) return GFI_ERANGE;
  if (t > SIZE_MAX / (2 * sizeof(double))) return GFI_ENOMEM;
  *tot = t;
  return GFI_OK;
}

/* Zeroing of a large buffer in ZERO_BLOCK pieces shared statically among the
 * threads: a fresh buffer's pages are then first touched (faulted in, and on
 * a NUMA machine placed) by the threads that later work on them, and a reused
 * one is cleared at the memory bandwidth of all of them. Zeros are zeros:
 * no bit depends on the split. */
#define ZERO_BLOCK ((size_t)1 << 16) /* bytes per task */
typedef struct {
  unsigned char *p;
  size_t bytes;
} zero_ctx;

static int zero_task(void *vc, size_t k, void *ws) {
  (void)ws;
  const zero_ctx *z = vc;
  size_t a = k * ZERO_BLOCK, n = z->bytes - a < ZERO_BLOCK ? z->bytes - a : ZERO_BLOCK;
  memset(z->p + a, 0, n);
  return GFI_OK;
}

static void zero_par(void *p, size_t bytes, int nthreads) {
  if (!p || !bytes) return;
  int nt = par_threads(nthreads);
  if (bytes < 16 * ZERO_BLOCK) nt = 1;
  zero_ctx z = {p, bytes};
  (void)par_for((bytes + ZERO_BLOCK - 1) / ZERO_BLOCK, nt, 0, zero_task, &z); /* cannot fail */
}

/* A zeroed complex grid of tot cells, first touched by nthreads threads. */
static double *grid_alloc(size_t tot, int nthreads) {
  size_t bytes;
  if (gfi_size_prod(&bytes, tot, 2, sizeof(double), 1)) return NULL;
  double *g = fftw_malloc(bytes ? bytes : 1);
  zero_par(g, bytes, nthreads);
  return g;
}

/* Deconvolution factors 1/phihat(2 pi k / nf) for the modes k = -floor(m/2)
 * .. of each axis (m[d] values per axis, concatenated), DC_BLOCK modes per
 * task (2 (ns + 6) cosines each: 0.24 s for 10^6 modes on one thread; each
 * value on its own, so the same bits for any thread count). */
#define DC_BLOCK ((size_t)4096)
typedef struct {
  const nufft_kernel *k;
  size_t m, nf;
  double *w;
} dc_ctx;

static int dc_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const dc_ctx *c = vc;
  size_t i0 = q * DC_BLOCK, i1 = c->m - i0 < DC_BLOCK ? c->m : i0 + DC_BLOCK;
  for (size_t i = i0; i < i1; i++) {
    double kk = (double)i - (double)(c->m / 2);
    c->w[i] = 1.0 / nufft_phihat(c->k, 2 * M_PI * kk / (double)c->nf);
  }
  return GFI_OK;
}

static double *deconv_factors(const nufft_kernel *k, int D, const size_t *m, const size_t *nf,
                              int nthreads) {
  size_t tot = 0;
  for (int d = 0; d < D; d++) tot += m[d];
  double *w = gfi_malloc2(tot, sizeof(double));
  if (!w) return NULL;
  double *p = w;
  for (int d = 0; d < D; d++) {
    dc_ctx c = {k, m[d], nf[d], p};
    size_t nb = (m[d] + DC_BLOCK - 1) / DC_BLOCK;
    (void)par_for(nb, nb > 1 ? par_threads(nthreads) : 1, 0, dc_task, &c); /* cannot fail */
    p += m[d];
  }
  return w;
}

/* Between modes (m per axis, last fastest, increasing k) and the fine grid
 * (nf per axis, k at index k mod nf), times the deconvolution factors:
 * dir = 1: modes[...] = grid[...] * w (type 1); dir = 2: grid[...] = modes[...] * w
 * (type 2; the grid's other cells must be zero). Each mode is copied on its
 * own, so how the rows of axis 0 are shared among tasks does not matter. */
typedef struct {
  int D, dir;
  const size_t *m, *nf;
  const double *w;
  double *modes, *grid;
  size_t rows; /* rows of axis 0 per task */
} mg_ctx;

static int mg_task(void *vc, size_t t, void *ws) {
  (void)ws;
  const mg_ctx *c = vc;
  const int D = c->D, dir = c->dir;
  const size_t *m = c->m, *nf = c->nf;
  double *modes = c->modes, *grid = c->grid;
  size_t m0 = m[0], m1 = D > 1 ? m[1] : 1, m2 = D > 2 ? m[2] : 1;
  size_t n1 = D > 1 ? nf[1] : 1, n2 = D > 2 ? nf[2] : 1;
  const double *w0 = c->w, *w1 = D > 1 ? c->w + m0 : NULL, *w2 = D > 2 ? c->w + m0 + m1 : NULL;
  size_t a0 = t * c->rows, a1 = m0 - a0 < c->rows ? m0 : a0 + c->rows;
  for (size_t a = a0; a < a1; a++) {
    long long k0 = (long long)a - (long long)(m0 / 2);
    size_t g0 = k0 < 0 ? (size_t)(k0 + (long long)nf[0]) : (size_t)k0;
    for (size_t b = 0; b < m1; b++) {
      long long k1 = (long long)b - (long long)(m1 / 2);
      size_t g1 = k1 < 0 ? (size_t)(k1 + (long long)n1) : (size_t)k1;
      double wab = w0[a] * (D > 1 ? w1[b] : 1.0);
      for (size_t cc = 0; cc < m2; cc++) {
        long long k2 = (long long)cc - (long long)(m2 / 2);
        size_t g2 = k2 < 0 ? (size_t)(k2 + (long long)n2) : (size_t)k2;
        double ww = D > 2 ? wab * w2[cc] : wab;
        size_t im = (a * m1 + b) * m2 + cc, ig = (g0 * n1 + g1) * n2 + g2;
        if (dir == 1) {
          modes[2 * im] = grid[2 * ig] * ww;
          modes[2 * im + 1] = grid[2 * ig + 1] * ww;
        } else {
          grid[2 * ig] = modes[2 * im] * ww;
          grid[2 * ig + 1] = modes[2 * im + 1] * ww;
        }
      }
    }
  }
  return GFI_OK;
}

static void modes_grid(int D, const size_t *m, const size_t *nf, const double *w, double *modes,
                       double *grid, int dir, int nthreads) {
  size_t m0 = m[0], m1 = D > 1 ? m[1] : 1, m2 = D > 2 ? m[2] : 1;
  int nt = par_threads(nthreads);
  if (m0 * m1 * m2 < 16384) nt = 1;
  /* a task is at least ~1024 modes: whole rows of axis 0 */
  size_t row = m1 * m2, rows = row >= 1024 ? 1 : (1024 + row - 1) / row;
  mg_ctx c = {D, dir, m, nf, w, modes, grid, rows};
  (void)par_for((m0 + rows - 1) / rows, nt, 0, mg_task, &c); /* tasks cannot fail */
}

/* Points x (periodic, period 2 pi) -> grid coordinates in [0, nf); each
 * point on its own, FOLD_BLOCK points per task. */
#define FOLD_BLOCK ((size_t)1024)
typedef struct {
  int D;
  const size_t *nf;
  size_t n;
  const double *x;
  double *t;
} fold_ctx;

static int fold_task(void *vc, size_t k, void *ws) {
  (void)ws;
  const fold_ctx *c = vc;
  const int D = c->D;
  size_t j0 = k * FOLD_BLOCK, j1 = c->n - j0 < FOLD_BLOCK ? c->n : j0 + FOLD_BLOCK;
  for (size_t j = j0; j < j1; j++)
    for (int d = 0; d < D; d++) {
      double N_ = (double)c->nf[d];
      double u = c->x[j * D + d] * (N_ / (2 * M_PI));
      u -= N_ * floor(u / N_);
      if (!(u < N_) || u < 0) u = 0;
      c->t[j * D + d] = u;
    }
  return GFI_OK;
}

static void fold_coords(int D, const size_t *nf, size_t n, const double *x, double *t,
                        int nthreads) {
  int nt = par_threads(nthreads);
  if (n < 16384) nt = 1;
  fold_ctx c = {D, nf, n, x, t};
  (void)par_for((n + FOLD_BLOCK - 1) / FOLD_BLOCK, nt, 0, fold_task, &c); /* cannot fail */
}

static int common_checks(int D, int sign, const size_t *ms, size_t N, const double *x,
                         const void *c, const void *f) {
  if (D < 1 || D > 3 || !ms || (sign != 1 && sign != -1) || (N && (!x || !c)) || !f)
    return GFI_EINVAL;
  for (int d = 0; d < D; d++)
    if (ms[d] == 0) return GFI_EINVAL;
  if (N > SIZE_MAX / (2 * sizeof(double)) / 3) return GFI_EINVAL;
  return GFI_OK;
}

/* Kernel, fine grid and mode count of a type 1 or 2 transform. */
static int setup12(int D, const size_t *ms, const nufft_opts *o, nufft_kernel *kp, size_t *nf,
                   size_t *tot, size_t *mtot) {
  int st = nufft_kernel_setup(o, kp);
  if (st) return st;
  size_t mt = 1;
  for (int d = 0; d < D; d++) {
    if (mt > SIZE_MAX / ms[d]) return GFI_ERANGE;
    mt *= ms[d];
    if ((st = fine_size(kp, (double)ms[d], max_grid_of(o), &nf[d]))) return st;
  }
  if (mt > SIZE_MAX / (2 * sizeof(double))) return GFI_ERANGE;
  *mtot = mt;
  return grid_total(D, nf, max_grid_of(o), tot);
}

/* Type 1 or 2 in steps: everything that does not depend on the points
 * (kernel, fine grid, FFT plan, deconvolution factors, the chunk buffer of
 * grid coordinates and the sort's scratch) is made once and reused. */
struct nufft_plan {
  int type, D, sign, nthreads;
  nufft_kernel kp;
  size_t ms[3], nf[3], tot, mtot;
  double *grid;   /* fftw_malloc, tot complex cells */
  nufft_fft fft;
  double *w;      /* deconvolution factors, ms[d] per axis */
  double *t;      /* one chunk of grid coordinates (cap x D), grown on demand */
  size_t chunk, cap;
  nufft_work work;
};

void nufft_plan_destroy(nufft_plan *p) {
  if (!p) return;
  nufft_fft_free(&p->fft);
  fftw_free(p->grid);
  free(p->w);
  free(p->t);
  nufft_work_free(&p->work);
  free(p);
}

int nufft_plan_make(nufft_plan **pp, int type, int D, const size_t *ms, int sign,
                    const nufft_opts *o) {
  if (!pp) return GFI_EINVAL;
  *pp = NULL;
  if ((type != 1 && type != 2) || D < 1 || D > 3 || !ms || (sign != 1 && sign != -1))
    return GFI_EINVAL;
  for (int d = 0; d < D; d++)
    if (ms[d] == 0) return GFI_EINVAL;
  nufft_plan *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->type = type;
  p->D = D;
  p->sign = sign;
  p->nthreads = nt_of(o);
  for (int d = 0; d < D; d++) p->ms[d] = ms[d];
  int st = setup12(D, ms, o, &p->kp, p->nf, &p->tot, &p->mtot);
  if (st) {
    nufft_plan_destroy(p);
    return st;
  }
  p->chunk = chunk_for(p->tot);
  p->grid = grid_alloc(p->tot, p->nthreads);
  p->w = deconv_factors(&p->kp, D, ms, p->nf, p->nthreads);
  if (!p->grid || !p->w) {
    nufft_plan_destroy(p);
    return GFI_ENOMEM;
  }
  if ((st = nufft_fft_make(&p->fft, D, p->nf, p->grid, sign))) {
    nufft_plan_destroy(p);
    return st;
  }
  *pp = p;
  return GFI_OK;
}

/* The chunk buffer of grid coordinates for N points (grows to a chunk). */
static int plan_tbuf(nufft_plan *p, size_t N) {
  size_t need = N < p->chunk ? N : p->chunk;
  if (need <= p->cap) return GFI_OK;
  free(p->t);
  p->t = gfi_malloc3(need, p->D, sizeof(double));
  p->cap = p->t ? need : 0;
  return p->t ? GFI_OK : GFI_ENOMEM;
}

static int exec1(nufft_plan *p, size_t N, const double *x, const double *c, double *f,
                 int checked) {
  if (!p || p->type != 1 || (N && (!x || !c)) || !f) return GFI_EINVAL;
  const int D = p->D, nt = p->nthreads;
  if (N > SIZE_MAX / (2 * sizeof(double)) / 3) return GFI_EINVAL;
  if (!checked && (!all_finite_par(N * D, x, nt) || !all_finite_par(2 * N, c, nt)))
    return GFI_ENONFINITE;
  if (plan_tbuf(p, N)) return GFI_ENOMEM;
  zero_par(p->grid, p->tot * 2 * sizeof(double), nt);
  const size_t CH = p->chunk;
  for (size_t j0 = 0; j0 < N; j0 += CH) {
    size_t n = N - j0 < CH ? N - j0 : CH;
    fold_coords(D, p->nf, n, x + j0 * D, p->t, nt);
    int st = nufft_spread(&p->kp, D, p->nf, n, p->t, c + 2 * j0, p->grid, nt, &p->work);
    if (st) return st;
  }
  nufft_fft_exec(&p->fft, p->grid, nt);
  modes_grid(D, p->ms, p->nf, p->w, f, p->grid, 1, nt);
  return GFI_OK;
}

static int exec2(nufft_plan *p, size_t N, const double *x, double *c, const double *f,
                 int checked) {
  if (!p || p->type != 2 || (N && (!x || !c)) || !f) return GFI_EINVAL;
  const int D = p->D, nt = p->nthreads;
  if (N > SIZE_MAX / (2 * sizeof(double)) / 3) return GFI_EINVAL;
  if (!checked && (!all_finite_par(N * D, x, nt) || !all_finite_par(2 * p->mtot, f, nt)))
    return GFI_ENONFINITE;
  if (N == 0) return GFI_OK;
  if (plan_tbuf(p, N)) return GFI_ENOMEM;
  zero_par(p->grid, p->tot * 2 * sizeof(double), nt);
  modes_grid(D, p->ms, p->nf, p->w, (double *)f, p->grid, 2, nt);
  nufft_fft_exec(&p->fft, p->grid, nt);
  const size_t CH = p->chunk;
  for (size_t j0 = 0; j0 < N; j0 += CH) {
    size_t n = N - j0 < CH ? N - j0 : CH;
    fold_coords(D, p->nf, n, x + j0 * D, p->t, nt);
    int st = nufft_interp(&p->kp, D, p->nf, n, p->t, c + 2 * j0, p->grid, nt, &p->work);
    if (st) return st;
  }
  return GFI_OK;
}

int nufft_plan_exec1(nufft_plan *p, size_t N, const double *x, const double *c, double *f) {
  return exec1(p, N, x, c, f, 0);
}

int nufft_plan_exec2(nufft_plan *p, size_t N, const double *x, double *c, const double *f) {
  return exec2(p, N, x, c, f, 0);
}

/* The one-shot transforms: a plan made, run once and destroyed (the checks
 * of the arguments and values come before any allocation, as before). */
int nufft1(int D, size_t N, const double *x, const double *c, int sign, const size_t *ms,
           double *f, const nufft_opts *o) {
  int st = common_checks(D, sign, ms, N, x, c, f);
  if (st) return st;
  nufft_kernel kp;
  size_t nf[3], tot, mtot;
  if ((st = setup12(D, ms, o, &kp, nf, &tot, &mtot))) return st;
  if (!all_finite_par(N * D, x, nt_of(o)) || !all_finite_par(2 * N, c, nt_of(o)))
    return GFI_ENONFINITE;
  nufft_plan *p;
  if ((st = nufft_plan_make(&p, 1, D, ms, sign, o))) return st;
  st = exec1(p, N, x, c, f, 1);
  nufft_plan_destroy(p);
  return st;
}

int nufft2(int D, size_t N, const double *x, double *c, int sign, const size_t *ms,
           const double *f, const nufft_opts *o) {
  int st = common_checks(D, sign, ms, N, x, c, f);
  if (st) return st;
  nufft_kernel kp;
  size_t nf[3], tot, mtot;
  if ((st = setup12(D, ms, o, &kp, nf, &tot, &mtot))) return st;
  if (!all_finite_par(N * D, x, nt_of(o)) || !all_finite_par(2 * mtot, f, nt_of(o)))
    return GFI_ENONFINITE;
  if (N == 0) return GFI_OK;
  nufft_plan *p;
  if ((st = nufft_plan_make(&p, 2, D, ms, sign, o))) return st;
  st = exec2(p, N, x, c, f, 1);
  nufft_plan_destroy(p);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Type 3. Sources x = C + y, |y_d| <= X_d; targets s = Dc + u, |u_d| <= S_d:
 *   f(s) = e^{i sign u.C} sum_j [c_j e^{i sign Dc.x_j}] e^{i sign u.y_j}.
 * With y' = y / gam (|y'| < pi) spread onto the grid1 of nf points of spacing
 * h = 2 pi / nf (index i at y' = (i - nf/2) h), the inner sum is
 *   B(u') = sum_i grid1[i] e^{i sign u' (i - nf/2) h},  u' = gam u,
 * a type 2 with nf modes at the points u' h (|u' h| <= pi / sigma), and
 *   f(s) = e^{i sign u.C} B(gam u) / phihat(h gam u).                      */

struct nufft3_plan {
  int D, sign, nthreads;
  nufft_kernel kp;
  double lo[3], hi[3];     /* box of the sources */
  double C[3], Dc[3];      /* centres of sources and targets */
  double gam[3], h[3];
  size_t nf[3], tot1;      /* grid1: spreading grid */
  size_t nf2[3], tot2;     /* grid2: the inner type 2's fine grid */
  size_t K;
  int shift_targets;       /* Dc != 0 */
  double *grid1, *grid2;   /* fftw_malloc */
  double *grid1r;          /* real sources without a shift: their real grid (tot1), folded
                              into grid1's real parts by nufft3_exec; else NULL */
  nufft_fft fft2;
  double *w2;              /* inner deconvolution factors, nf[d] per axis */
  double *t2;              /* targets as grid2 coordinates (K x D) */
  double *corr;            /* per-target factor e^{i sign u.C} / phihat (complex) */
  double *tbuf, *cbuf;     /* one chunk of sources */
  size_t cap;              /* their capacity in points */
  size_t chunk;            /* points per spreading pass (chunk_for(tot1)) */
  nufft_work work;         /* the spreader's scratch */
};

/* Grid size, spacing and scale of one axis (FINUFFT's choice: X S >= 1 is
 * enforced so that degenerate boxes still give a valid grid). */
static int t3_axis(const nufft_kernel *k, double X, double S, size_t max_grid, size_t *nf,
                   double *h, double *gam) {
  double Xs = X, Ss = S;
  if (X == 0) {
    if (S == 0) {
      Xs = 1;
      Ss = 1;
    } else if (Xs < 1 / S) {
      Xs = 1 / S;
    }
  } else if (Ss < 1 / X) {
    Ss = 1 / X;
  }
  double nfd = ceil(2 * k->sigma * Xs * Ss / M_PI + k->ns + 1);
  if (nfd < 2.0 * k->ns) nfd = 2.0 * k->ns;
  if (!isfinite(nfd) || nfd > (double)max_grid || nfd > (double)(INT_MAX / 8)) return GFI_ERANGE;
  size_t n = nufft_next235even((size_t)nfd);
  if (n == 0) return GFI_ERANGE;
  *nf = n;
  *h = 2 * M_PI / (double)n;
  *gam = (double)n / (2 * k->sigma * Ss);
  if (!isfinite(*gam) || *gam <= 0) return GFI_ERANGE;
  return GFI_OK;
}

/* Both grids of a type-3 transform; GFI_ERANGE when the larger exceeds max_grid. */
static int t3_grids(const nufft_kernel *k, int D, const double *X, const double *S,
                    size_t max_grid, size_t *nf, double *h, double *gam, size_t *nf2,
                    size_t *tot1, size_t *tot2) {
  int st;
  for (int d = 0; d < D; d++) {
    if ((st = t3_axis(k, X[d], S[d], max_grid, &nf[d], &h[d], &gam[d]))) return st;
    if ((st = fine_size(k, (double)nf[d], max_grid, &nf2[d]))) return st;
  }
  if ((st = grid_total(D, nf2, max_grid, tot2))) return st;
  return grid_total(D, nf, max_grid, tot1);
}

size_t nufft3_grid_size(int D, const double *X, const double *S, const nufft_opts *o,
                        size_t nf[3]) {
  if (nf) nf[0] = nf[1] = nf[2] = 0;
  if (D < 1 || D > 3 || !X || !S) return 0;
  nufft_kernel kp;
  if (nufft_kernel_setup(o, &kp)) return 0;
  size_t n[3] = {0, 0, 0}, n2[3], t1, t2;
  double h[3], g[3];
  for (int d = 0; d < D; d++)
    if (!(isfinite(X[d]) && isfinite(S[d]) && X[d] >= 0 && S[d] >= 0)) return 0;
  if (t3_grids(&kp, D, X, S, max_grid_of(o), n, h, g, n2, &t1, &t2)) return 0;
  if (nf)
    for (int d = 0; d < D; d++) nf[d] = n[d];
  return t1;
}

void nufft3_destroy(nufft3_plan *p) {
  if (!p) return;
  nufft_fft_free(&p->fft2);
  fftw_free(p->grid1);
  fftw_free(p->grid2);
  free(p->grid1r);
  free(p->w2);
  free(p->t2);
  free(p->corr);
  free(p->tbuf);
  free(p->cbuf);
  nufft_work_free(&p->work);
  free(p);
}

/* Type-3 targets k of one block: grid coordinates t2 and the factor
 * e^{i sign u.C} / prod_d phihat(up_d). */
typedef struct {
  nufft3_plan *p;
  const nufft_kernel *kp;
  const nufft_phihat_tab *tab;
  const double *s;
} t3tgt_ctx;

/* corr = e^{i sign ph} / den for n targets: vectorised where every |ph|
 * allows (gfi_sincos_simd agrees with libm's sincos to 2.3e-16), libm
 * otherwise; the choice depends on the targets only. */
GFI_CLONES static void t3_corr(size_t n, const double *ph, const double *den, double sign, int simd,
                               double *corr) {
  if (simd) {
#pragma omp simd
    for (size_t m = 0; m < n; m++) {
      double sn, cs;
      gfi_sincos_simd(ph[m], &sn, &cs);
      corr[2 * m] = cs / den[m];
      corr[2 * m + 1] = sign * sn / den[m];
    }
  } else {
    for (size_t m = 0; m < n; m++) {
      corr[2 * m] = cos(ph[m]) / den[m];
      corr[2 * m + 1] = sign * sin(ph[m]) / den[m];
    }
  }
}

/* den = prod_d phihat(up[d]) for n targets: the table's polynomial in a
 * vectorisable loop when every |up| <= pi and the table exists (tab), the
 * general evaluation otherwise; the same bits either way. */
GFI_CLONES static void t3_den(size_t n, int D, double (*up)[FOLD_BLOCK], const nufft_phihat_tab *t,
                              const nufft_kernel *kp, int tab, double *den) {
  for (size_t m = 0; m < n; m++) den[m] = 1;
  for (int d = 0; d < D; d++) {
    const double *v = up[d];
    if (tab) {
#pragma omp simd
      for (size_t m = 0; m < n; m++) den[m] *= nufft_phihat_tab_poly(t, fabs(v[m]));
    } else {
      for (size_t m = 0; m < n; m++) den[m] *= nufft_phihat_tab_eval(t, kp, v[m]);
    }
  }
}

static int t3tgt_task(void *vc, size_t blk, void *ws) {
  (void)ws;
  const t3tgt_ctx *c = vc;
  nufft3_plan *p = c->p;
  const int D = p->D;
  const size_t k0 = blk * FOLD_BLOCK, k1 = p->K - k0 < FOLD_BLOCK ? p->K : k0 + FOLD_BLOCK;
  const size_t n = k1 - k0;
  double ph[FOLD_BLOCK], den[FOLD_BLOCK], up[3][FOLD_BLOCK];
  int simd = 1, tab = 1;
  for (size_t k = k0; k < k1; k++) {
    double phk = 0;
    for (int d = 0; d < D; d++) {
      double u = c->s[k * D + d] - p->Dc[d];
      phk += u * p->C[d];
      double v = p->gam[d] * u * p->h[d]; /* inner type-2 point, |v| <= pi / sigma */
      up[d][k - k0] = v;
      if (!(fabs(v) <= M_PI)) tab = 0;
      double N2 = (double)p->nf2[d];
      double t = v * (N2 / (2 * M_PI));
      t -= N2 * floor(t / N2);
      if (!(t < N2) || t < 0) t = 0;
      p->t2[k * D + d] = t;
    }
    if (!(fabs(phk) <= GFI_SINCOS_SIMD_MAX)) simd = 0;
    ph[k - k0] = phk;
  }
  t3_den(n, D, up, c->tab, c->kp, tab && c->tab->deg, den);
  t3_corr(n, ph, den, (double)p->sign, simd, p->corr + 2 * k0);
  return GFI_OK;
}

int nufft3_plan_make(nufft3_plan **pp, int D, const double *xlo, const double *xhi, int sign,
                     size_t K, const double *s, const nufft_opts *o) {
  if (!pp) return GFI_EINVAL;
  *pp = NULL;
  if (D < 1 || D > 3 || !xlo || !xhi || (sign != 1 && sign != -1) || (K && !s))
    return GFI_EINVAL;
  if (K > SIZE_MAX / (2 * sizeof(double)) / 3) return GFI_ENOMEM;
  nufft_kernel kp;
  int st = nufft_kernel_setup(o, &kp);
  if (st) return st;
  if (!all_finite((size_t)D, xlo) || !all_finite((size_t)D, xhi) || !all_finite(K * D, s))
    return GFI_ENONFINITE;
  for (int d = 0; d < D; d++)
    if (!(xlo[d] <= xhi[d])) return GFI_EINVAL;
  nufft3_plan *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->D = D;
  p->sign = sign;
  p->nthreads = nt_of(o);
  p->kp = kp;
  p->K = K;
  double X[3] = {0, 0, 0}, S[3] = {0, 0, 0};
  for (int d = 0; d < D; d++) {
    p->lo[d] = xlo[d];
    p->hi[d] = xhi[d];
    p->C[d] = 0.5 * (xlo[d] + xhi[d]);
    X[d] = fmax(xhi[d] - p->C[d], p->C[d] - xlo[d]);
    double smin = K ? s[d] : 0, smax = smin;
    for (size_t k = 1; k < K; k++) {
      double v = s[k * D + d];
      if (v < smin) smin = v;
      if (v > smax) smax = v;
    }
    p->Dc[d] = nufft3_target_centre(o, smin, smax);
    S[d] = fmax(smax - p->Dc[d], p->Dc[d] - smin);
    if (p->Dc[d] != 0) p->shift_targets = 1;
  }
  if (!all_finite((size_t)D, X) || !all_finite((size_t)D, S)) {
    nufft3_destroy(p);
    return GFI_ERANGE;
  }
  if ((st = t3_grids(&kp, D, X, S, max_grid_of(o), p->nf, p->h, p->gam, p->nf2, &p->tot1,
                     &p->tot2))) {
    nufft3_destroy(p);
    return st;
  }
  size_t wtot = 0;
  for (int d = 0; d < D; d++) wtot += p->nf[d];
  p->chunk = chunk_for(p->tot1);
  p->grid1 = grid_alloc(p->tot1, p->nthreads);
  p->grid2 = grid_alloc(p->tot2, p->nthreads);
  if (o && o->real_sources && !p->shift_targets && p->grid1) {
    p->grid1r = calloc(p->tot1, sizeof *p->grid1r);
    if (!p->grid1r) {
      nufft3_destroy(p);
      return GFI_ENOMEM;
    }
  }
  p->w2 = gfi_malloc2(wtot, sizeof(double));
  p->t2 = gfi_malloc3((K ? K : 1), D, sizeof(double));
  p->corr = gfi_malloc3(2, (K ? K : 1), sizeof(double));
  if (!p->grid1 || !p->grid2 || !p->w2 || !p->t2 || !p->corr) {
    nufft3_destroy(p);
    return GFI_ENOMEM;
  }
  if ((st = nufft_fft_make(&p->fft2, D, p->nf2, p->grid2, sign))) {
    nufft3_destroy(p);
    return st;
  }
  double *w = p->w2;
  for (int d = 0; d < D; d++) {
    for (size_t i = 0; i < p->nf[d]; i++) {
      double kk = (double)i - (double)(p->nf[d] / 2);
      w[i] = 1.0 / nufft_phihat(&kp, 2 * M_PI * kk / (double)p->nf2[d]);
    }
    w += p->nf[d];
  }
  /* the targets' grid coordinates and correction factors, FOLD_BLOCK
   * targets per task (each on its own: the same bits for any thread count) */
  nufft_phihat_tab *tab = malloc(sizeof *tab);
  if (!tab) {
    nufft3_destroy(p);
    return GFI_ENOMEM;
  }
  nufft_phihat_tab_make(&kp, tab);
  t3tgt_ctx tc = {p, &kp, tab, s};
  (void)par_for((K + FOLD_BLOCK - 1) / FOLD_BLOCK, K < 4096 ? 1 : par_threads(p->nthreads), 0,
                t3tgt_task, &tc); /* cannot fail */
  free(tab);
  *pp = p;
  return GFI_OK;
}

/* Type 3 sources of one chunk -> rescaled grid coordinates (tbuf) and
 * strengths with the target shift's phase (cbuf); each point on its own,
 * FOLD_BLOCK points per task. */
typedef struct {
  nufft3_plan *p;
  size_t n;
  const double *xc, *cc; /* cc: complex strengths, or NULL for real ones */
  const double *cr;      /* real strengths (NULL with cc NULL: all cval) */
  double cval;
  int real;              /* real strengths, no shift: the coordinates alone */
} t3pre_ctx;

/* The phase of the target shift, e^{i sign ph}, times the strength a + i b,
 * into cbuf[2 j0 ..]: vectorised where every |ph| allows (gfi_sincos_simd
 * agrees with libm's sincos to 2.3e-16), libm otherwise; the choice depends
 * on the data only. */
GFI_CLONES static void t3_shift(size_t n, const double *ph, const double *a, const double *b,
                                double sign, int simd, double *cb) {
  if (simd) {
#pragma omp simd
    for (size_t m = 0; m < n; m++) {
      double sn, cs;
      gfi_sincos_simd(ph[m], &sn, &cs);
      sn *= sign;
      cb[2 * m] = a[m] * cs - b[m] * sn;
      cb[2 * m + 1] = a[m] * sn + b[m] * cs;
    }
  } else {
    for (size_t m = 0; m < n; m++) {
      double cs = cos(ph[m]), sn = sign * sin(ph[m]);
      cb[2 * m] = a[m] * cs - b[m] * sn;
      cb[2 * m + 1] = a[m] * sn + b[m] * cs;
    }
  }
}

static int t3pre_task(void *vc, size_t k, void *ws) {
  (void)ws;
  const t3pre_ctx *c = vc;
  nufft3_plan *p = c->p;
  const double *xc = c->xc, *cc = c->cc;
  const int D = p->D;
  size_t j0 = k * FOLD_BLOCK, j1 = c->n - j0 < FOLD_BLOCK ? c->n : j0 + FOLD_BLOCK;
  if (c->real) { /* no phase: the grid coordinates alone (the same arithmetic) */
    for (int d = 0; d < D; d++) {
      const double C = p->C[d], sc = p->gam[d] * p->h[d], half = (double)(p->nf[d] / 2);
      const double N_ = (double)p->nf[d];
      for (size_t j = j0; j < j1; j++) {
        double t = (xc[j * D + d] - C) / sc + half;
        if (t < 0) t = 0;
        if (!(t < N_)) t = N_ - 0.5;
        p->tbuf[j * D + d] = t;
      }
    }
    return GFI_OK;
  }
  double ph[FOLD_BLOCK], a[FOLD_BLOCK], b[FOLD_BLOCK];
  int simd = 1;
  for (size_t j = j0; j < j1; j++) {
    double phj = 0;
    for (int d = 0; d < D; d++) {
      double v = xc[j * D + d];
      phj += p->Dc[d] * v;
      double t = (v - p->C[d]) / (p->gam[d] * p->h[d]) + (double)(p->nf[d] / 2);
      double N_ = (double)p->nf[d];
      if (t < 0) t = 0;
      if (!(t < N_)) t = N_ - 0.5;
      p->tbuf[j * D + d] = t;
    }
    if (!(fabs(phj) <= GFI_SINCOS_SIMD_MAX)) simd = 0;
    ph[j - j0] = phj;
    /* a real strength goes through the same products with b = 0 */
    if (cc)
      a[j - j0] = cc[2 * j], b[j - j0] = cc[2 * j + 1];
    else
      a[j - j0] = c->cr ? c->cr[j] : c->cval, b[j - j0] = 0;
  }
  if (p->shift_targets) {
    t3_shift(j1 - j0, ph, a, b, (double)p->sign, simd, p->cbuf + 2 * j0);
  } else {
    for (size_t j = j0; j < j1; j++) {
      p->cbuf[2 * j] = a[j - j0];
      p->cbuf[2 * j + 1] = b[j - j0];
    }
  }
  return GFI_OK;
}

/* Are the points of block k (CHK_BLOCK of them) inside the box? GFI_EINVAL
 * when one is not (or is not finite). */
typedef struct {
  size_t N;
  int D;
  const double *x, *lo, *hi;
} box_ctx;

static int box_task(void *vc, size_t k, void *ws) {
  (void)ws;
  const box_ctx *c = vc;
  const int D = c->D;
  const double *x = c->x;
  size_t j0 = k * CHK_BLOCK, j1 = c->N - j0 < CHK_BLOCK ? c->N : j0 + CHK_BLOCK;
  int inside = 1;
  if (D == 1) { /* the smallest and largest coordinate (NaN counts as outside) */
    double a = c->lo[0], b = c->hi[0], z = 0; /* z: 0 x is NaN for NaN and +-Inf */
#pragma omp simd reduction(min : a) reduction(max : b) reduction(+ : z)
    for (size_t j = j0; j < j1; j++) {
      a = x[j] < a ? x[j] : a;
      b = x[j] > b ? x[j] : b;
      z += 0.0 * x[j];
    }
    inside = a >= c->lo[0] && b <= c->hi[0] && z == 0;
  } else {
    for (int d = 0; d < D; d++) {
      const double lo = c->lo[d], hi = c->hi[d];
      for (size_t j = j0; j < j1; j++) {
        double v = x[j * D + d];
        inside &= (v >= lo) & (v <= hi);
      }
    }
  }
  return inside ? GFI_OK : GFI_EINVAL;
}

/* The real sources' grid coordinates on a 1-D plan (t3pre_task's real branch,
 * the same arithmetic) for the streamed spreader. */
typedef struct {
  const nufft3_plan *p;
  const double *x;
} t3prep1_ctx;

static void t3_prep1(void *vc, size_t j0, size_t j1, double *t) {
  const t3prep1_ctx *c = vc;
  const nufft3_plan *p = c->p;
  const double C = p->C[0], sc = p->gam[0] * p->h[0], half = (double)(p->nf[0] / 2);
  const double N_ = (double)p->nf[0];
  for (size_t j = j0; j < j1; j++) {
    double u = (c->x[j] - C) / sc + half;
    if (u < 0) u = 0;
    if (!(u < N_)) u = N_ - 0.5;
    t[j - j0] = u;
  }
}

/* nufft3_add and nufft3_add_real: complex strengths c, or (c NULL) real
 * strengths cr, or (both NULL) every strength cval. */
static int add_common(nufft3_plan *p, size_t N, const double *x, const double *c,
                      const double *cr, double cval) {
  if (!p || (N && !x)) return GFI_EINVAL;
  int D = p->D;
  if (N > SIZE_MAX / (2 * sizeof(double)) / 3) return GFI_EINVAL;
  /* one pass, in blocks on every thread: every coordinate inside the box
   * (NaN is not); only when one is not, a second pass tells a non-finite
   * value from a point outside */
  box_ctx bc = {N, D, x, p->lo, p->hi};
  int inside = par_for((N + CHK_BLOCK - 1) / CHK_BLOCK, N < 4 * CHK_BLOCK ? 1 : par_threads(p->nthreads), 0,
                       box_task, &bc) == GFI_OK;
  if (!inside && !all_finite(N * D, x)) return GFI_ENONFINITE;
  if (c ? !all_finite_par(2 * N, c, p->nthreads)
        : cr ? !all_finite_par(N, cr, p->nthreads) : !isfinite(cval))
    return GFI_ENONFINITE;
  if (!inside) return GFI_EINVAL;
  int nt = p->nthreads;
  if (p->grid1r && !c && nufft_spread_stream_ok(&p->kp, D, p->nf)) {
    /* real sources on a small 1-D grid: coordinates and spreading in one pass
     * per block, the same bits as the chunks below */
    t3prep1_ctx pc = {p, x};
    return nufft_spread_real_1d_stream(&p->kp, p->nf[0], N, t3_prep1, &pc, cr, cval, p->grid1r,
                                       nt, &p->work);
  }
  const size_t CH = p->chunk;
  size_t need = N < CH ? N : CH;
  if (need > p->cap) { /* the chunk buffers grow to the largest block seen (<= a chunk) */
    free(p->tbuf);
    free(p->cbuf);
    p->tbuf = gfi_malloc3(need, D, sizeof(double));
    p->cbuf = gfi_malloc3(2, need, sizeof(double));
    p->cap = p->tbuf && p->cbuf ? need : 0;
    if (!p->cap) return GFI_ENOMEM;
  }
  for (size_t j0 = 0; j0 < N; j0 += CH) {
    size_t n = N - j0 < CH ? N - j0 : CH;
    int ntl = par_threads(nt);
    if (n < 16384) ntl = 1;
    const int real = p->grid1r && !c;
    t3pre_ctx tc = {p, n, x + j0 * D, c ? c + 2 * j0 : NULL, cr ? cr + j0 : NULL, cval, real};
    (void)par_for((n + FOLD_BLOCK - 1) / FOLD_BLOCK, ntl, 0, t3pre_task, &tc); /* cannot fail */
    const double *rs = cr ? cr + j0 : p->cbuf; /* real strengths, used as given */
    if (real && !cr)
      for (size_t j = 0; j < n; j++) p->cbuf[j] = cval;
    int st = real ? nufft_spread_real(&p->kp, D, p->nf, n, p->tbuf, rs, p->grid1r, nt, &p->work)
                  : nufft_spread(&p->kp, D, p->nf, n, p->tbuf, p->cbuf, p->grid1, nt, &p->work);
    if (st) return st;
  }
  return GFI_OK;
}

int nufft3_add(nufft3_plan *p, size_t N, const double *x, const double *c) {
  if (N && !c) return GFI_EINVAL;
  return add_common(p, N, x, c, NULL, 0);
}

int nufft3_add_real(nufft3_plan *p, size_t N, const double *x, const double *c, double cval) {
  return add_common(p, N, x, NULL, c, cval);
}

int nufft3_exec(nufft3_plan *p, double *f) {
  if (!p || (p->K && !f)) return GFI_EINVAL;
  if (p->K == 0) return GFI_OK;
  if (p->grid1r) /* the real sources' grid joins the complex one (sums kept) */
    for (size_t i = 0; i < p->tot1; i++) {
      p->grid1[2 * i] += p->grid1r[i];
      p->grid1r[i] = 0;
    }
  zero_par(p->grid2, p->tot2 * 2 * sizeof(double), p->nthreads);
  modes_grid(p->D, p->nf, p->nf2, p->w2, p->grid1, p->grid2, 2, p->nthreads);
  nufft_fft_exec(&p->fft2, p->grid2, p->nthreads);
  int st = nufft_interp(&p->kp, p->D, p->nf2, p->K, p->t2, f, p->grid2, p->nthreads, &p->work);
  if (st) return st;
  for (size_t k = 0; k < p->K; k++) {
    double br = f[2 * k], bi = f[2 * k + 1], ar = p->corr[2 * k], ai = p->corr[2 * k + 1];
    f[2 * k] = br * ar - bi * ai;
    f[2 * k + 1] = br * ai + bi * ar;
  }
  return GFI_OK;
}

void nufft3_reset(nufft3_plan *p) {
  if (!p) return;
  zero_par(p->grid1, p->tot1 * 2 * sizeof(double), p->nthreads);
  if (p->grid1r) zero_par(p->grid1r, p->tot1 * sizeof(double), p->nthreads);
}

void nufft3_info(const nufft3_plan *p, size_t nf[3], int *width) {
  if (nf) nf[0] = nf[1] = nf[2] = 0;
  if (width) *width = 0;
  if (!p) return;
  if (nf)
    for (int d = 0; d < p->D; d++) nf[d] = p->nf[d];
  if (width) *width = p->kp.ns;
}

int nufft3(int D, size_t N, const double *x, const double *c, int sign, size_t K,
           const double *s, double *f, const nufft_opts *o) {
  if (D < 1 || D > 3 || (sign != 1 && sign != -1) || (N && (!x || !c)) || (K && (!s || !f)))
    return GFI_EINVAL;
  if (N > SIZE_MAX / (2 * sizeof(double)) / 3) return GFI_EINVAL;
  nufft_kernel kp;
  int st = nufft_kernel_setup(o, &kp);
  if (st) return st;
  if (!all_finite(N * D, x) || !all_finite(2 * N, c) || !all_finite(K * D, s))
    return GFI_ENONFINITE;
  if (K == 0) return GFI_OK;
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int d = 0; d < D; d++) {
    if (N) lo[d] = hi[d] = x[d];
    for (size_t j = 1; j < N; j++) {
      double v = x[j * D + d];
      if (v < lo[d]) lo[d] = v;
      if (v > hi[d]) hi[d] = v;
    }
  }
  nufft3_plan *p;
  if ((st = nufft3_plan_make(&p, D, lo, hi, sign, K, s, o))) return st;
  st = nufft3_add(p, N, x, c);
  if (!st) st = nufft3_exec(p, f);
  nufft3_destroy(p);
  return st;
}
