/* The binned route of the band-limited engine (bandlimited.h): a sum on a
 * tensor grid by Lagrange binning and one FFT convolution per axis.
 *
 * Binning. The data are put on a lattice of spacing h_j per axis that holds
 * the grid's points (h_j = the grid step / s_j, s_j an integer); a point at
 * t = k + f cells spreads its coefficient to the P cells k-o .. k-o+P-1 of
 * each axis (P = 4, o = 1: cubic; P = 6, o = 2: quintic) with the weights
 * of Lagrange interpolation on them (their products over the axes). For
 * every query y that replaces g(x) = K(y - x) by its tensor interpolant at
 * x. On one axis the interpolation error is g^(P)(xi) / P! prod_m (x - x_m),
 * with |prod_m (x - x_m)| <= w_P h^P on the middle cell (w_4 = 9/16,
 * w_6 = 225/64); over the axes, g - I_0 I_1 g = (g - I_0 g) + I_0 (g - I_1 g)
 * and |I_0 u| <= Lambda max |u| (the Lebesgue constant of the weights on
 * the middle cell: 5/4 cubic, 89/64 quintic). For the kernel
 * prod_j (R_j / A) phi(sinc(R_j u_j)), phi(z) = sum_k a_k z^k with every
 * a_k >= 0, the transform of each sinc^k is nonnegative, so
 * |(sinc^k)^(P)| <= |(sinc^k)^(P)(0)| = P! |[t^P] sinc(t)^k|:
 *
 *     mu_4 = 24 (k / 120 + k (k - 1) / 72),
 *     mu_6 = 720 (k / 5040 + k (k - 1) / 720 + k (k - 1) (k - 2) / 1296),
 *
 * averaged with the weights a_k (the flat-top family: int |t|^P kappa(t) dt
 * / (1 + c), kernel_dbound), and the error of every value is at most
 *
 *     sum_i |c_i| K0 sum_j Lambda^j (w_P / P!) mu_P (h_j R_j)^P,
 *
 * K0 the kernel's peak; h_j is chosen so that this is beps c1 K0 less the
 * summation's share (below). The weights' own rounding (a few eps each,
 * Lambda^D in all), the positions' (the cell and f from x / h: a shift of a
 * few eps of the lattice's extent, times max |K'| <= 0.44 R K0 sum_k k a_k /
 * sum_k a_k, times max_f sum_m |w_m'(f)| |m - f| = 5/3 or 11/5) and the
 * lattice's own summation (gamma_m Lambda^D, m the most additions a term
 * passes through: with sub-chunks of sub points summed in a scratch lattice
 * before they join the cell, m = sub + B / sub + the blocks, B the points of
 * one block or all N in slab mode, whatever the points' arrangement; see
 * accum_term) are added. The plan takes the cheapest sub-chunk size (none
 * where the summation term is small anyway); bits therefore depend on the
 * target, never on the thread count.
 *
 * Moments (1-D, no sub-chunks, a lattice small against the points of a
 * run: bin_width). The weights are polynomials in t = f - 1/2,
 * w_m(f) = sum_p A_mp t^p (p < P; MOM_A4, MOM_A6), so a point adds its P
 * moments v t^p to one moment cell, k - o (4 doubles cubic, 8 quintic: 6
 * and 2 unused), and once all points are in, cell q of the lattice is
 * sum_m sum_p A_mp M[q - m][p]: one vector update per point into a cell of
 * its own instead of P scalar ones that overlap the next point's.
 * Rounding (t = f - 1/2 is exact): the moment v t^p is p products (v t,
 * then times t), within gamma_p <= gamma_{P-1} of v t^p; a moment cell
 * sums its terms in runs as above (gamma_m); the conversion rounds A_mp
 * (u), the product (u) and adds P terms for each m and the P values of m
 * (2 (P - 1)): every term v t^p A_mp reaches its lattice cell within
 * gamma_{m + 3P} of itself. Each output takes each cell times a sample of
 * at most K0, so the summation term is gamma_{m + 3P} c1 K0 max_t sum_m
 * sum_p |A_mp| |t|^p, the maximum over |t| <= 1/2 at |t| = 1/2: 17/6
 * (cubic), 53/16 (quintic) in place of Lambda = 5/4, 89/64 (lebesgue_mom);
 * it holds the weights' rounding too (no 16 eps Lambda term). The
 * interpolant is the same (Lagrange's, in another basis), so the binning
 * and positions' terms are unchanged. The values differ from the direct
 * binning's in the last bits, within the bound. The Lagrange weights as
 * the basis would keep Lambda, but cost more per point than the powers;
 * sub-chunks (the scratch's flushes, w times wider) and large lattices (a
 * copy per run, w times larger) bin the weights directly: measured faster
 * there.
 *
 * The cost model takes the cheaper order: quintic needs about 2.5 times
 * fewer cells per axis at tol 1e-3 (h^6 against h^4) for 36 against 16
 * weights per point in 2-D.
 *
 * Convolution. The binned sums reach the grid by a linear convolution with
 * the kernel's samples per axis (the kernel is a product), computed by real
 * FFTs of a length L_j >= (n_j - 1) s_j + G_j (no wrap-around reaches an
 * output). Rounding: each fibre f of a pass errs by at most
 * BIN_FFT_C (log2 L + 2) eps ||f||_2 ||v||_1 (the FFT's 2-norm error
 * bound, Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
 * section 24.1, for the three transforms and the product; max |V^| <= ||v||_1)
 * plus the samples' own rounding; a later pass multiplies an earlier pass's
 * error by at most its ||v||_1. Every term is added to the bound.
 *
 * Threads: a small lattice (all blocks' copies within BIN_BLOCK_CELLS
 * doubles) is filled per fixed block of points (bl_pass_block: a function
 * of N), one copy per block, summed in block order; a large one is split
 * into slabs of its first axis, each thread reading every point and keeping
 * the cells in its slab (by moments: the points whose moment cell is in
 * it), so that every cell is summed in the points' order. Moments become
 * the lattice's values after that, each cell by a fixed sum. The mode
 * depends on N and the lattice only, and the fibres of a pass are
 * independent: the same bits for any thread count. */
#include <fftw3.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bandlimited.h"
#include "engine_pass.h"
#include "kernel_internal.h"
#include "../lib/alloc.h"
#include "../lib/clones.h"
#include "../lib/fftw_lock.h"
#include "../lib/simd_sincos.h"
#include "gfi/status.h"
#include "par.h"

/* Limits: lattice cells (all axes and columns) and one axis's FFT length. */
#define BIN_CELLS_MAX ((size_t)1 << 24)
#define BIN_LEN_MAX ((size_t)1 << 24)
/* Block mode's limit: cells of all the blocks' lattices (16 MiB). */
#define BIN_BLOCK_CELLS ((size_t)1 << 21)
/* The FFT convolution's rounding constant (see above). */
#define BIN_FFT_C 10.0
/* Cost model: per point and column, per cell of its P^D, per FFT element
 * and log2, per fibre; then scaled to the units of bandlimited.c's NUFFT
 * cost in D dimensions (BIN_UNITS: measured seconds per unit of the two
 * models on 1-D, 2-D and 3-D grids, N = 10^5 .. 10^6, tol 1e-2 .. 1e-9,
 * differ by these factors; refitted after the vectorised binning and the
 * quintic order). */
static const double BIN_UNITS[4] = {0, 7.0, 1.6, 0.9};
#define COST_BIN_POINT 12.0
#define COST_BIN_CORNER 3.0
/* per point, and per point and double of its moment cell, in moment
 * binning (1-D; measured at N = 4e5 .. 2e6, one thread: 1.15 and 1.80 ns a
 * point, cubic and quintic, against 2.09 for the cubic weights binned
 * directly, 24 units) */
#define COST_BIN_MOM_POINT 5.5
#define COST_BIN_MOMENT 1.9
#define COST_BIN_FFT 1.5
#define COST_BIN_FIBRE 200.0
/* per cell of a sub-chunk's scratch added into the lattice (measured: a
 * flushed cell costs about 2 units of a binned point's) */
#define COST_BIN_FLUSH 2.0
/* Moment binning's largest lattice per point of a run (doubles of one
 * copy; measured at N = 1e6, runs of 65 536 points, one thread: cubic
 * gains 0.8 ms at 7 165 cells and loses 0.15 ms at 10 744; quintic gains
 * 0.4 ms at 10 746 cells; at N = 4e6, runs of 250 000, cubic gains 2.3 ms
 * at 20 299 cells), and below which it always runs. */
#define BIN_MOM_RHO4 0.5
#define BIN_MOM_RHO6 1.5
#define BIN_MOM_FLOOR ((size_t)1 << 12)
/* The fewest points of a sub-chunk (a multiple of BIN_CHUNK). */
#define BIN_SUB_MIN ((size_t)256)

/* The smallest 2^a 3^b 5^c 7^d >= n (FFTW's fast sizes). */
static size_t good_size(size_t n) {
  size_t best = SIZE_MAX;
  for (size_t p7 = 1; p7 < 2 * n + 2; p7 *= 7)
    for (size_t p5 = p7; p5 < 2 * n + 2; p5 *= 5)
      for (size_t p3 = p5; p3 < 2 * n + 2; p3 *= 3) {
        size_t v = p3;
        while (v < n) v *= 2;
        if (v < best) best = v;
      }
  return best;
}

/* mu1: a bound on max |d/dt A K(t)| per unit of the peak; mu[P]: the P-th
 * derivative's (kernel_dbound: the kernel family's bounds). */
static void kernel_mus(const bl_sum *s, double *mu1, double *mu4, double *mu6) {
  *mu4 = kernel_dbound(&s->kern, 4);
  if (mu6) *mu6 = kernel_dbound(&s->kern, 6);
  *mu1 = kernel_dbound(&s->kern, 1);
}

/* The Lebesgue constant of P weights on the middle cell: 5/4 (cubic),
 * 89/64 (quintic), both at f = 1/2. */
static double lebesgue(int P) { return P == 4 ? 1.25 : 89.0 / 64; }

/* Moment binning (1-D): the weights as polynomials in t = f - 1/2,
 * w_m = sum_p A[m][p] t^p (cells k-o+m, P = 4: o = 1; P = 6: o = 2). */
static const double MOM_A4[4][4] = {{-1.0 / 16, 1.0 / 24, 1.0 / 4, -1.0 / 6},
                                    {9.0 / 16, -9.0 / 8, -1.0 / 4, 1.0 / 2},
                                    {9.0 / 16, 9.0 / 8, -1.0 / 4, -1.0 / 2},
                                    {-1.0 / 16, -1.0 / 24, 1.0 / 4, 1.0 / 6}};
static const double MOM_A6[6][6] = {{3.0 / 256, -3.0 / 640, -5.0 / 96, 1.0 / 48, 1.0 / 48, -1.0 / 120},
                                    {-25.0 / 256, 25.0 / 384, 13.0 / 32, -13.0 / 48, -1.0 / 16, 1.0 / 24},
                                    {75.0 / 128, -75.0 / 64, -17.0 / 48, 17.0 / 24, 1.0 / 24, -1.0 / 12},
                                    {75.0 / 128, 75.0 / 64, -17.0 / 48, -17.0 / 24, 1.0 / 24, 1.0 / 12},
                                    {-25.0 / 256, -25.0 / 384, 13.0 / 32, 13.0 / 48, -1.0 / 16, -1.0 / 24},
                                    {3.0 / 256, 3.0 / 640, -5.0 / 96, -1.0 / 48, 1.0 / 48, 1.0 / 120}};

/* max over |t| <= 1/2 of sum_m sum_p |A[m][p]| |t|^p (at |t| = 1/2):
 * 17/6 (cubic), 53/16 (quintic) */
static double lebesgue_mom(int P) { return P == 4 ? 17.0 / 6 : 53.0 / 16; }

/* Doubles per lattice cell: 4 or 8 (a moment cell: 4 or 6 moments, 2
 * unused) where the moment binning runs, else 1 (the lattice's values
 * binned directly). Moments: 1-D, no sub-chunks, and a lattice of at most
 * BIN_MOM_RHO4 or BIN_MOM_RHO6 doubles per point of a run (one block, or
 * all N: a copy of the lattice to zero and sum per run against what the
 * run's points save; or BIN_MOM_FLOOR doubles), never where it would put
 * a lattice whose blocks fit into slab mode. With sub-chunks the
 * scratch's flushes, w times wider, cost more than the binning saves. */
static size_t bin_width(const bl_sum *s, size_t cells, int P, size_t sub) {
  const size_t w = P == 4 ? 4 : 8, blk = bl_pass_block(s->N), nblk = (s->N + blk - 1) / blk;
  if (s->D != 1 || sub) return 1;
  const double dbl = (double)cells * (double)w, B = (double)(nblk > 1 ? blk : s->N);
  if (dbl > fmax((P == 4 ? BIN_MOM_RHO4 : BIN_MOM_RHO6) * B, (double)BIN_MOM_FLOOR)) return 1;
  if (nblk > 1 && (double)nblk * (double)s->ncol * dbl > (double)BIN_BLOCK_CELLS) return 1;
  return w;
}

/* The binning term per unit of mu_P (h R)^P on axis j: Lambda^j max |prod
 * (f - m)| / P!, the product's largest value on the middle cell being
 * 9/16 (cubic) or 225/64 (quintic). */
static double axis_factor(int j, int P) {
  return pow(lebesgue(P), j) * (P == 4 ? 9.0 / 16 / 24 : 225.0 / 64 / 720);
}

double bl_binned_beps(const bl_sum *s) { return 0.25 * s->tol * s->rho; }

/* The lattice's own summation. A cell sums its terms in the points' order
 * in runs of at most B points (block mode: one block of bl_pass_block(N)
 * points, then one term per block; slab mode: all N points). With sub > 0
 * the points of a run are taken in sub-chunks of sub points: the first is
 * binned into the lattice itself, each later one into a zeroed scratch
 * lattice that is then added into it (over the rows it touched) and zeroed
 * again, so that a term passes through at most sub - 1 additions in the
 * scratch, ceil(B / sub) - 1 into the lattice and nblk - 1 of the blocks':
 * m = min(sub, B) + ceil(B / sub) + nblk whatever the points' arrangement
 * (a cluster in one cell included). The rounding is within gamma_m (u =
 * 2^-53, round to nearest; Higham, 2nd ed., section 4.2, any summation tree
 * of depth m) of the sum of |terms|, and every output takes each cell
 * times a kernel sample of at most K0; with the weights' Lebesgue constant
 * Lambda^D this is gamma_m Lambda^D per unit of c1 K0. Block mode is taken
 * by N and the lattice only (see bl_binned_eval). */
static int bin_blocks(const bl_sum *s, size_t cells, int P, size_t sub) {
  const size_t blk = bl_pass_block(s->N), nblk = (s->N + blk - 1) / blk;
  return nblk > 1 && (double)nblk * (double)s->ncol * (double)cells * (double)bin_width(s, cells, P, sub) <=
                         (double)BIN_BLOCK_CELLS;
}

/* The points of one run (B) and the runs (nblk, 0 in slab mode). */
static void bin_runs(const bl_sum *s, size_t cells, int P, size_t sub, size_t *B, size_t *nblk) {
  const size_t blk = bl_pass_block(s->N);
  const int blocks = bin_blocks(s, cells, P, sub);
  *B = blocks ? blk : s->N;
  *nblk = blocks ? (s->N + blk - 1) / blk : 0;
}

static double accum_term(const bl_sum *s, size_t cells, int P, size_t sub) {
  size_t B, nblk;
  bin_runs(s, cells, P, sub, &B, &nblk);
  double m = (double)B + (double)nblk;
  if (sub && sub < B) m = (double)sub + ceil((double)B / (double)sub) + (double)nblk;
  if (bin_width(s, cells, P, sub) > 1) { /* moments: their powers and the conversion (see the top) */
    const double u = (m + 3 * P) * (0.5 * DBL_EPSILON);
    return u / (1 - u) * lebesgue_mom(P);
  }
  const double u = m * (0.5 * DBL_EPSILON);
  return u / (1 - u) * pow(lebesgue(P), s->D);
}

/* The lattice for a binning term of at most ib (per unit of c1 K0). */
static int plan_lattice(const bl_sum *s, const double *lo, const double *hi, const size_t *n, double ib,
                        int P, double mu, bl_binned *b) {
  const int D = s->D;
  double cells = (double)s->ncol;
  for (int j = 0; j < D; j++) {
    if (n[j] > 1 && !(hi[j] > lo[j])) return 0;
    /* an equal share of ib per axis */
    const double hmax = pow(ib / ((double)D * axis_factor(j, P) * mu), 1.0 / P) / s->R[j];
    const double loc = lo[j] - s->ctr[j];
    const double step = n[j] > 1 ? (hi[j] - lo[j]) / (double)(n[j] - 1) : hmax;
    double sj = ceil(step / hmax);
    if (!(sj >= 1)) sj = 1;
    if (!(sj <= (double)((size_t)1 << 24))) return 0;
    const double h = step / sj;
    /* cells k-o .. k-o+P-1 of every point (o = P/2 - 1), one spare each side */
    const double o = P / 2 - 1;
    const double kmin = floor((s->dlo[j] - loc) / h) - (o + 1), kmax = floor((s->dhi[j] - loc) / h) + (P - o);
    if (!(fabs(kmin) < 0x1p40 && fabs(kmax) < 0x1p40)) return 0;
    const double G = kmax - kmin + 1, lenv = (double)(n[j] - 1) * sj + G;
    if (!(lenv <= (double)BIN_LEN_MAX)) return 0;
    cells *= G;
    if (!(cells <= (double)BIN_CELLS_MAX)) return 0;
    b->s[j] = (size_t)sj;
    b->h[j] = h;
    b->kmin[j] = (long long)kmin;
    b->G[j] = (size_t)G;
    b->L[j] = good_size((size_t)lenv);
  }
  return 1;
}

static size_t lattice_cells(const bl_sum *s, const bl_binned *b) {
  size_t c = 1;
  for (int j = 0; j < s->D; j++) c *= b->G[j];
  return c;
}

/* The lattice for order P and sub-chunks of sub points (0: none), and its
 * cost; 0 where the summation term takes more than half of beps or the
 * lattice is outside its limits. */
static int plan_sub(const bl_sum *s, const double *lo, const double *hi, const size_t *n, double beps, int P,
                    size_t sub, bl_binned *b) {
  memset(b, 0, sizeof *b);
  const int D = s->D;
  double mu1, mu4, mu6;
  kernel_mus(s, &mu1, &mu4, &mu6);
  /* beps less the summation's share, which the lattice decides (block or
   * slab mode, moments or not): first the lattice for all of beps, then
   * for beps less its share, once more where that one's share is larger */
  double acc = 0;
  for (int t = 0;; t++) {
    if (!(acc <= 0.5 * beps)) return 0;
    if (!plan_lattice(s, lo, hi, n, beps - acc, P, P == 4 ? mu4 : mu6, b)) return 0;
    const double a2 = accum_term(s, lattice_cells(s, b), P, sub);
    if (a2 <= acc) break;
    if (t == 2) return 0;
    acc = a2;
  }
  double fft = 0;
  /* the passes run on axes D-1 .. 0; a pass's fibres are the other axes'
   * current sizes */
  size_t dims[3];
  for (int j = 0; j < D; j++) dims[j] = b->G[j];
  for (int j = D - 1; j >= 0; j--) {
    double fib = 1;
    for (int k = 0; k < D; k++)
      if (k != j) fib *= (double)dims[k];
    const double L = (double)b->L[j];
    fft += fib * (COST_BIN_FIBRE + 2 * COST_BIN_FFT * L * log2(L + 2));
    dims[j] = n[j];
  }
  /* every sub-chunk after a run's first adds (at most) the whole lattice */
  size_t B, nblk;
  const double cells = (double)lattice_cells(s, b);
  bin_runs(s, lattice_cells(s, b), P, sub, &B, &nblk);
  const double flushes = sub && sub < B ? (double)(nblk ? nblk : 1) * (ceil((double)B / (double)sub) - 1) : 0;
  b->on = 1;
  b->order = P;
  b->beps = beps;
  b->sub = sub && sub < B ? sub : 0;
  const size_t w = bin_width(s, lattice_cells(s, b), P, sub);
  const double point = w > 1 ? COST_BIN_MOM_POINT + COST_BIN_MOMENT * (double)w
                             : COST_BIN_POINT + COST_BIN_CORNER * pow(P, D);
  b->cost = BIN_UNITS[D] * (double)s->ncol * ((double)s->N * point + fft + COST_BIN_FLUSH * flushes * cells);
  return 1;
}

/* Order P: the cheapest of no sub-chunks and sub-chunks of 2^k >= BIN_SUB_MIN
 * points (fewer points per sub-chunk: a smaller summation term, so a
 * coarser lattice, for more additions of the scratch). */
static int plan_order(const bl_sum *s, const double *lo, const double *hi, const size_t *n, double beps, int P,
                      bl_binned *b) {
  int ok = plan_sub(s, lo, hi, n, beps, P, 0, b);
  for (size_t sub = BIN_SUB_MIN; sub < s->N; sub *= 2) {
    bl_binned t;
    if (plan_sub(s, lo, hi, n, beps, P, sub, &t) && t.sub && (!ok || t.cost < b->cost)) {
      *b = t;
      ok = 1;
    }
  }
  return ok;
}

int bl_binned_plan(const bl_sum *s, const double *lo, const double *hi, const size_t *n, double beps, int order,
                   bl_binned *b) {
  memset(b, 0, sizeof *b);
  if (!kernel_binned(&s->kern) || !(beps > 0) || (order != 0 && order != 4 && order != 6)) return 0;
  if (order) return plan_order(s, lo, hi, n, beps, order, b);
  bl_binned b6;
  const int ok4 = plan_order(s, lo, hi, n, beps, 4, b), ok6 = plan_order(s, lo, hi, n, beps, 6, &b6);
  if (ok6 && (!ok4 || b6.cost < b->cost)) *b = b6;
  return ok4 || ok6;
}

/* ---- binning ---------------------------------------------------------- */

typedef struct {
  const bl_sum *s;
  const bl_binned *b;
  double base[3], ih[3];
  size_t cells, ntask; /* cells per column; tasks (slabs of axis 0) */
  size_t w;            /* doubles per cell (bin_width) */
  size_t blk;          /* block mode: points per block (0: slab mode) */
  double *lat;         /* ncol x cells x w */
} bin_ctx;

/* The smallest and largest first cell (k - o) of axis 0 in a chunk. */
static inline void chunk_range(const int *kc, size_t n, long *r) {
  int lo = r[0] < INT32_MAX ? (int)r[0] : INT32_MAX, hi = r[1] > -1 ? (int)r[1] : -1;
#pragma omp simd reduction(min : lo) reduction(max : hi)
  for (size_t u = 0; u < n; u++) {
    lo = kc[u] < lo ? kc[u] : lo;
    hi = kc[u] > hi ? kc[u] : hi;
  }
  r[0] = lo;
  r[1] = hi;
}

/* The Lagrange weights of cells k-o .. k-o+P-1 at t = k + f (P = 4: cubic,
 * o = 1; P = 6: quintic, o = 2), for a chunk of n points: W[u CH + j]. */
#define BIN_CHUNK 128
/* 2-D: a point's rows are prefetched this many points ahead */
#define BIN_AHEAD 16
static inline void lagrange_w(int P, size_t n, const double *f, const double *v, double *W) {
  if (P == 4) {
#pragma omp simd
    for (size_t j = 0; j < n; j++) {
      const double t = f[j], tm = t - 1, tp = t + 1, t2 = t - 2, p = tm * t2, q = tp * t;
      W[j] = v[j] * (-(1.0 / 6) * t * p);
      W[BIN_CHUNK + j] = v[j] * (0.5 * tp * p);
      W[2 * BIN_CHUNK + j] = v[j] * (-0.5 * q * t2);
      W[3 * BIN_CHUNK + j] = v[j] * ((1.0 / 6) * q * tm);
    }
    return;
  }
#pragma omp simd
  for (size_t j = 0; j < n; j++) {
    const double t = f[j], a = t + 2, b = t + 1, d = t - 1, e = t - 2, g = t - 3;
    const double ab = a * b, de = d * e, tg = t * g;
    W[j] = v[j] * (-(1.0 / 120) * b * t * de * g);
    W[BIN_CHUNK + j] = v[j] * ((1.0 / 24) * a * de * tg);
    W[2 * BIN_CHUNK + j] = v[j] * (-(1.0 / 12) * ab * de * g);
    W[3 * BIN_CHUNK + j] = v[j] * ((1.0 / 12) * ab * tg * e);
    W[4 * BIN_CHUNK + j] = v[j] * (-(1.0 / 24) * ab * tg * d);
    W[5 * BIN_CHUNK + j] = v[j] * ((1.0 / 120) * ab * t * de);
  }
}

/* Cells k-o .. k-o+P-1 of axis 0 that lie in the slab [a, e): [u0, u1) of 0..P. */
static inline void slab_range(size_t k0, int P, size_t a, size_t e, size_t *u0, size_t *u1) {
  /* k0 = k - o, the first cell */
  *u0 = k0 < a ? a - k0 : 0;
  *u1 = k0 + (size_t)P > e ? (e > k0 ? e - k0 : 0) : (size_t)P;
}

/* The cells (k - o) and fractions of a chunk of points on axis j, in a
 * loop that vectorises (k < 2^31: the lattice has at most 2^24 cells, and
 * every point lies in it; x - base >= (o + 1) h, so truncation is floor). */
static inline void chunk_cells(const bin_ctx *x, int j, size_t i, size_t n, int o, int *kc, double *f) {
  const int D = x->s->D;
  const double *xs = x->s->x + i * (size_t)D + j;
  const double base = x->base[j], ih = x->ih[j], ctr = x->s->ctr[j];
  if (D == 1) { /* contiguous coordinates: plain vector loads */
#pragma omp simd
    for (size_t u = 0; u < n; u++) {
      const double t = ((xs[u] - ctr) - base) * ih;
      const int k = (int)t;
      f[u] = t - (double)k;
      kc[u] = k - o;
    }
    return;
  }
#pragma omp simd
  for (size_t u = 0; u < n; u++) { /* the centred point, then its cell */
    const double t = ((xs[u * (size_t)D] - ctr) - base) * ih;
    const int k = (int)t;
    f[u] = t - (double)k;
    kc[u] = k - o;
  }
}

/* A point's 6 cells (P = 6) as one 4-wide and one 2-wide vector update of
 * the weights w (contiguous): each cell takes the same sum as 6 scalar
 * updates, the same bits. */
typedef double bin_v4 __attribute__((vector_size(32)));
typedef double bin_v2 __attribute__((vector_size(16)));
static inline void bin_add(int P, double *g, const double *w) {
  bin_v4 a, b;
  memcpy(&a, g, sizeof a);
  memcpy(&b, w, sizeof b);
  a += b;
  memcpy(g, &a, sizeof a);
  if (P == 6) {
    bin_v2 c, d;
    memcpy(&c, g + 4, sizeof c);
    memcpy(&d, w + 4, sizeof d);
    c += d;
    memcpy(g + 4, &c, sizeof c);
  }
}

/* The weights of a chunk, point by point: Wt[8 j + u] = W[u CH + j]; four
 * points at a time by a 4 x 4 transposition in registers (and a 2 x 4 one
 * for u = 4, 5) where the compiler has vector shuffles. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define BIN_SHUFFLE 1
#endif
#endif
static inline void bin_transpose(int P, size_t n, const double *W, double *Wt) {
  size_t j = 0;
#ifdef BIN_SHUFFLE
  for (; j + 4 <= n; j += 4) {
    bin_v4 r[4];
    for (int u = 0; u < 4; u++) memcpy(&r[u], W + (size_t)u * BIN_CHUNK + j, sizeof r[u]);
    const bin_v4 t0 = __builtin_shufflevector(r[0], r[1], 0, 4, 2, 6),
                 t1 = __builtin_shufflevector(r[0], r[1], 1, 5, 3, 7),
                 t2 = __builtin_shufflevector(r[2], r[3], 0, 4, 2, 6),
                 t3 = __builtin_shufflevector(r[2], r[3], 1, 5, 3, 7);
    const bin_v4 p0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5), p1 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5),
                 p2 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7), p3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
    double *o = Wt + 8 * j;
    memcpy(o, &p0, sizeof p0);
    memcpy(o + 8, &p1, sizeof p1);
    memcpy(o + 16, &p2, sizeof p2);
    memcpy(o + 24, &p3, sizeof p3);
    if (P == 6) {
      bin_v4 r4, r5;
      memcpy(&r4, W + 4 * BIN_CHUNK + j, sizeof r4);
      memcpy(&r5, W + 5 * BIN_CHUNK + j, sizeof r5);
      const bin_v2 q0 = __builtin_shufflevector(r4, r5, 0, 4), q1 = __builtin_shufflevector(r4, r5, 1, 5),
                   q2 = __builtin_shufflevector(r4, r5, 2, 6), q3 = __builtin_shufflevector(r4, r5, 3, 7);
      memcpy(o + 4, &q0, sizeof q0);
      memcpy(o + 12, &q1, sizeof q1);
      memcpy(o + 20, &q2, sizeof q2);
      memcpy(o + 28, &q3, sizeof q3);
    }
  }
#endif
  for (; j < n; j++)
    for (int u = 0; u < P; u++) Wt[j * 8 + (size_t)u] = W[(size_t)u * BIN_CHUNK + j];
}

/* One column in 1-D: g[k-o .. k-o+P-1] += v w. Cubic: four scalar updates
 * per point (measured faster here than one 4-wide update of transposed
 * weights). Quintic: a point whose 6 cells all lie in [a, e) is one 4-wide
 * and one 2-wide update of its transposed weights; one on a slab's edge
 * adds those cells in the slab one by one, and so does every point of a
 * chunk within BIN_NARROW cells (a tight cluster: a vector store that
 * partly overlaps the next point's load stalls it). Every cell gets its
 * terms in the points' order either way: the same bits. */
#define BIN_NARROW 32
GFI_CLONES static void bin1(const bin_ctx *x, size_t i0, size_t i1, const double *c, double cval, size_t a,
                            size_t e, double *g, long *r) {
  const int P = x->b->order, o = P / 2 - 1;
  int kc[BIN_CHUNK];
  double f[BIN_CHUNK], v[BIN_CHUNK], W[6 * BIN_CHUNK], Wt[8 * BIN_CHUNK];
  const int full = a == 0 && e == x->b->G[0];
  for (size_t i = i0; i < i1; i += BIN_CHUNK) {
    const size_t n = i1 - i < BIN_CHUNK ? i1 - i : BIN_CHUNK;
    chunk_cells(x, 0, i, n, o, kc, f);
    if (r) chunk_range(kc, n, r);
    for (size_t j = 0; j < n; j++) v[j] = c ? c[i + j] : cval;
    lagrange_w(P, n, f, v, W);
    if (P == 4) {
      for (size_t j = 0; j < n; j++) {
        const size_t k0 = (size_t)kc[j];
        size_t u0 = 0, u1 = 4;
        if (!full) {
          if (k0 + 4 <= a || k0 >= e) continue;
          slab_range(k0, 4, a, e, &u0, &u1);
        }
        if (u0 == 0 && u1 == 4) {
          double *gk = g + k0;
          gk[0] += W[j];
          gk[1] += W[BIN_CHUNK + j];
          gk[2] += W[2 * BIN_CHUNK + j];
          gk[3] += W[3 * BIN_CHUNK + j];
          continue;
        }
        for (size_t u = u0; u < u1; u++) g[k0 + u] += W[u * BIN_CHUNK + j];
      }
      continue;
    }
    long kr[2] = {LONG_MAX, -1};
    chunk_range(kc, n, kr);
    if (kr[1] - kr[0] < BIN_NARROW) { /* overlapping vector updates would wait on each other */
      for (size_t j = 0; j < n; j++) {
        const size_t k0 = (size_t)kc[j];
        size_t u0 = 0, u1 = 6;
        if (!full) {
          if (k0 + 6 <= a || k0 >= e) continue;
          slab_range(k0, 6, a, e, &u0, &u1);
        }
        for (size_t u = u0; u < u1; u++) g[k0 + u] += W[u * BIN_CHUNK + j];
      }
      continue;
    }
    bin_transpose(6, n, W, Wt);
    if (full) {
      for (size_t j = 0; j < n; j++) bin_add(6, g + kc[j], Wt + 8 * j);
      continue;
    }
    for (size_t j = 0; j < n; j++) {
      const size_t k0 = (size_t)kc[j];
      if (k0 + 6 <= a || k0 >= e) continue;
      if (k0 >= a && k0 + 6 <= e) {
        bin_add(6, g + k0, Wt + 8 * j);
        continue;
      }
      size_t u0, u1;
      slab_range(k0, 6, a, e, &u0, &u1);
      for (size_t u = u0; u < u1; u++) g[k0 + u] += Wt[8 * j + u];
    }
  }
}

/* One column in 1-D by moments: a point at k + f adds its P moments to
 * moment cell k - o (w doubles: 4 or 8), one vector update per point into
 * its own cell (no partial overlap with the next point's): moments 0..3
 * as one 4-wide update, 4..5 as one 2-wide, four points' moments
 * transposed in registers; in a slab [a, e) only the points whose moment
 * cell lies in it. Every cell takes its terms in the points' order (the
 * scalar updates of a chunk's last points give the same sums). */
static inline void bin1m_order(const int P, const size_t w, const bin_ctx *x, size_t i0, size_t i1,
                               const double *c, double cval, size_t a, size_t e, double *g, long *r) {
  const int o = P / 2 - 1;
  int kc[BIN_CHUNK];
  double f[BIN_CHUNK], cv[BIN_CHUNK];
  if (!c)
    for (size_t j = 0; j < BIN_CHUNK; j++) cv[j] = cval;
  const int full = a == 0 && e == x->b->G[0];
  for (size_t i = i0; i < i1; i += BIN_CHUNK) {
    const size_t n = i1 - i < BIN_CHUNK ? i1 - i : BIN_CHUNK;
    const double *v = c ? c + i : cv;
    chunk_cells(x, 0, i, n, o, kc, f);
    if (r) chunk_range(kc, n, r);
    size_t j = 0;
#ifdef BIN_SHUFFLE
    for (; j + 4 <= n; j += 4) {
      bin_v4 q[4], t;
      memcpy(&q[0], v + j, sizeof q[0]);
      memcpy(&t, f + j, sizeof t);
      t -= 0.5;
      q[1] = q[0] * t;
      q[2] = q[1] * t;
      q[3] = q[2] * t;
      const bin_v4 t0 = __builtin_shufflevector(q[0], q[1], 0, 4, 2, 6),
                   t1 = __builtin_shufflevector(q[0], q[1], 1, 5, 3, 7),
                   t2 = __builtin_shufflevector(q[2], q[3], 0, 4, 2, 6),
                   t3 = __builtin_shufflevector(q[2], q[3], 1, 5, 3, 7);
      const bin_v4 pv[4] = {__builtin_shufflevector(t0, t2, 0, 1, 4, 5), __builtin_shufflevector(t1, t3, 0, 1, 4, 5),
                            __builtin_shufflevector(t0, t2, 2, 3, 6, 7), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
      bin_v2 hv[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
      if (P == 6) {
        const bin_v4 r4 = q[3] * t, r5 = r4 * t;
        hv[0] = __builtin_shufflevector(r4, r5, 0, 4);
        hv[1] = __builtin_shufflevector(r4, r5, 1, 5);
        hv[2] = __builtin_shufflevector(r4, r5, 2, 6);
        hv[3] = __builtin_shufflevector(r4, r5, 3, 7);
      }
      for (int u = 0; u < 4; u++) {
        const size_t k = (size_t)kc[j + (size_t)u];
        if (!full && (k < a || k >= e)) continue;
        double *gk = g + k * w;
        bin_v4 y;
        memcpy(&y, gk, sizeof y);
        y += pv[u];
        memcpy(gk, &y, sizeof y);
        if (P == 6) {
          bin_v2 z;
          memcpy(&z, gk + 4, sizeof z);
          z += hv[u];
          memcpy(gk + 4, &z, sizeof z);
        }
      }
    }
#endif
    for (; j < n; j++) {
      const size_t k = (size_t)kc[j];
      if (!full && (k < a || k >= e)) continue;
      double *gk = g + k * w, m = v[j];
      const double t = f[j] - 0.5;
      gk[0] += m;
      for (int p = 1; p < P; p++) {
        m *= t;
        gk[p] += m;
      }
    }
  }
}

/* (P and w constants where inlined) */
GFI_CLONES static void bin1m(const bin_ctx *x, size_t i0, size_t i1, const double *c, double cval, size_t a,
                             size_t e, double *g, long *r) {
  if (x->b->order == 4)
    bin1m_order(4, 4, x, i0, i1, c, cval, a, e, g, r);
  else
    bin1m_order(6, 8, x, i0, i1, c, cval, a, e, g, r);
}

/* The lattice's values from the moments (1-D): cell q = sum over m of
 * sum_p A[m][p] M[q - m][p], in that order, for the cells [q0, q1). */
typedef struct {
  const double *M;
  double *g;
  size_t G, w, chunk;
  int P;
} mom_ctx;

static int mom_task(void *vc, size_t t, void *ws) {
  (void)ws;
  const mom_ctx *mc = vc;
  const size_t q0 = t * mc->chunk, q1 = mc->G - q0 < mc->chunk ? mc->G : q0 + mc->chunk, w = mc->w;
  const int P = mc->P;
  for (size_t q = q0; q < q1; q++) {
    double sum = 0;
    for (int m = 0; m < P; m++) {
      if (q < (size_t)m) break;
      const double *Mk = mc->M + (q - (size_t)m) * w, *A = P == 4 ? MOM_A4[m] : MOM_A6[m];
      double d = 0;
      for (int p = 0; p < P; p++) d += A[p] * Mk[p];
      sum += d;
    }
    mc->g[q] = sum;
  }
  return GFI_OK;
}

/* Rows u0 .. u1-1 of one point's P x P cells (P = 4 or 6, a constant
 * where it is inlined): row u gets a_u times the last axis's P weights
 * w[0..P-1], held in registers, so that each row is one or two vector
 * updates rather than P scalar ones. Every cell takes the same product
 * and sum as before, in the points' order: the same bits. */
static inline void bin_rows(int P, double *g, size_t stride, size_t u0, size_t u1, const double *a,
                            const double *w) {
  double wl[6];
  for (int q = 0; q < P; q++) wl[q] = w[q];
  for (size_t u = u0; u < u1; u++) {
    const double au = a[u * BIN_CHUNK];
    double *r = g + u * stride;
    for (int q = 0; q < P; q++) r[q] += au * wl[q];
  }
}

/* One column in 2-D or 3-D: the P^D cells around each point. The last
 * axis's weights are transposed per chunk (Wt: 8 per point) so that a
 * point's row of P cells is updated from contiguous weights. */
GFI_CLONES static void binn(const bin_ctx *x, size_t i0, size_t i1, const double *c, double cval, size_t a,
                            size_t e, double *g, long *r) {
  const int D = x->s->D, P = x->b->order, o = P / 2 - 1;
  const size_t G1 = x->b->G[1], G2 = D > 2 ? x->b->G[2] : 1, row = G1 * G2;
  int kc[3][BIN_CHUNK];
  double f[BIN_CHUNK], v[BIN_CHUNK], one[BIN_CHUNK], W[3][6 * BIN_CHUNK], Wt[8 * BIN_CHUNK];
  for (size_t j = 0; j < BIN_CHUNK; j++) one[j] = 1;
  for (size_t i = i0; i < i1; i += BIN_CHUNK) {
    const size_t n = i1 - i < BIN_CHUNK ? i1 - i : BIN_CHUNK;
    for (size_t j = 0; j < n; j++) v[j] = c ? c[i + j] : cval;
    for (int d = 0; d < D; d++) {
      chunk_cells(x, d, i, n, o, kc[d], f);
      lagrange_w(P, n, f, d ? one : v, W[d]);
    }
    if (r) chunk_range(kc[0], n, r);
    const double *Wl = W[D - 1];
    for (size_t j = 0; j < n; j++)
      for (int q = 0; q < P; q++) Wt[j * 8 + (size_t)q] = Wl[(size_t)q * BIN_CHUNK + j];
    for (size_t j = 0; j < n; j++) {
      if (D == 2 && j + BIN_AHEAD < n) { /* a large lattice's rows miss the cache: ask for them early */
        const double *r = g + (size_t)kc[0][j + BIN_AHEAD] * row + (size_t)kc[1][j + BIN_AHEAD];
        for (int u = 0; u < P; u++, r += row) {
          __builtin_prefetch(r, 1);
          __builtin_prefetch(r + P - 1, 1);
        }
      }
      const size_t k0 = (size_t)kc[0][j];
      if (k0 + (size_t)P <= a || k0 >= e) continue;
      size_t u0, u1;
      slab_range(k0, P, a, e, &u0, &u1);
      const size_t k1 = (size_t)kc[1][j], k2 = D > 2 ? (size_t)kc[2][j] : 0;
      const double *wt = Wt + j * 8;
      if (D == 2) {
        double *r0 = g + k0 * row + k1;
        if (P == 6)
          bin_rows(6, r0, row, u0, u1, W[0] + j, wt);
        else
          bin_rows(4, r0, row, u0, u1, W[0] + j, wt);
        continue;
      }
      for (size_t u = u0; u < u1; u++) {
        const double a0 = W[0][u * BIN_CHUNK + j];
        double *r0 = g + (k0 + u) * row + k1 * G2 + k2;
        for (int p = 0; p < P; p++) {
          const double a1 = a0 * W[1][p * BIN_CHUNK + j];
          double *r1 = r0 + (size_t)p * G2;
          for (int q = 0; q < P; q++) r1[q] += a1 * wt[q];
        }
      }
    }
  }
}

/* Points i0 .. i1-1 of column col into g (cells [a, e) of axis 0). */
static void bin_range(const bin_ctx *x, size_t col, size_t i0, size_t i1, size_t a, size_t e, double *g, long *r) {
  const bl_sum *s = x->s;
  const double *c = s->c ? s->c + col * s->N : NULL;
  if (x->w > 1)
    bin1m(x, i0, i1, c, s->cval, a, e, g, r);
  else if (s->D == 1)
    bin1(x, i0, i1, c, s->cval, a, e, g, r);
  else
    binn(x, i0, i1, c, s->cval, a, e, g, r);
}

/* g[k] += S[k], S[k] = 0 for k in [k0, k1): a sub-chunk joins the lattice
 * and the scratch is zero again (per vector level: a streaming loop). */
GFI_CLONES static void flush(double *restrict g, double *restrict S, size_t k0, size_t k1) {
#pragma omp simd
  for (size_t k = k0; k < k1; k++) {
    g[k] += S[k];
    S[k] = 0;
  }
}

/* A thread's scratch lattice (one column, zero between sub-chunks). */
static int bin_ws_init(void *vc, void *vws) {
  const bin_ctx *x = vc;
  double **S = vws;
  *S = gfi_calloc3(x->cells, x->w, sizeof **S);
  return *S ? GFI_OK : GFI_ENOMEM;
}

static void bin_ws_fini(void *vc, void *vws) {
  (void)vc;
  free(*(double **)vws);
}

/* Slab mode: task q bins into its slab of axis-0 cells [a, e); it reads
 * every point and keeps the cells in its slab, so each cell is summed by
 * one task in the points' order, the same bits for any number of tasks.
 * Block mode (small lattices): task q bins the points of block q (blocks
 * fixed by N) into its own lattice; the lattices are summed in block order.
 * With sub-chunks (b->sub) a run's first sub-chunk is binned into the
 * lattice, every later one into the zero scratch, which is then added into
 * the lattice over the rows of axis 0 it touched and zeroed there: each
 * cell still gets its terms in a fixed order, whatever the thread count. */
static int bin_task(void *vc, size_t q, void *ws) {
  const bin_ctx *x = vc;
  const bl_sum *s = x->s;
  /* row: doubles per cell of axis 0; span: the cells of axis 0 a point
   * reaches (its moment cell alone in moment binning) */
  const size_t cells = x->cells * x->w, G0 = x->b->G[0], nc = s->ncol, row = cells / G0,
               span = x->w > 1 ? 1 : (size_t)x->b->order;
  size_t a = 0, e = G0, i0 = 0, i1 = s->N;
  double *lat = x->lat;
  if (x->blk) {
    i0 = q * x->blk;
    i1 = s->N - i0 < x->blk ? s->N : i0 + x->blk;
    lat += q * nc * cells;
    memset(lat, 0, nc * cells * sizeof *lat);
  } else {
    a = G0 * q / x->ntask;
    e = G0 * (q + 1) / x->ntask;
    for (size_t col = 0; col < nc; col++) memset(lat + col * cells + a * row, 0, (e - a) * row * sizeof *lat);
  }
  const size_t sub = x->b->sub ? x->b->sub : i1 - i0;
  double *S = ws ? *(double **)ws : NULL;
  for (size_t col = 0; col < nc; col++) {
    double *g = lat + col * cells;
    bin_range(x, col, i0, i1 - i0 < sub ? i1 : i0 + sub, a, e, g, NULL);
    for (size_t i = i0 + sub; i < i1; i += sub) {
      long r[2] = {LONG_MAX, -1};
      bin_range(x, col, i, i1 - i < sub ? i1 : i + sub, a, e, S, r);
      if (r[1] < 0) continue; /* no points */
      /* rows k0 .. k0 + span - 1 of every point, within the slab */
      const size_t k0 = (size_t)r[0] > a ? (size_t)r[0] : a,
                   k1 = (size_t)r[1] + span < e ? (size_t)r[1] + span : e;
      if (k0 < k1) flush(g, S, k0 * row, k1 * row);
    }
  }
  return GFI_OK;
}

typedef struct {
  double *lat;
  size_t nblk, width, chunk;
} red_ctx;

/* Block mode: lattice 0 += lattices 1 .. nblk-1, in block order, over one
 * chunk of cells. */
static int red_task(void *vc, size_t t, void *ws) {
  (void)ws;
  const red_ctx *r = vc;
  const size_t a = t * r->chunk, e = r->width - a < r->chunk ? r->width : a + r->chunk;
  for (size_t q = 1; q < r->nblk; q++) {
    const double *src = r->lat + q * r->width;
    for (size_t k = a; k < e; k++) r->lat[k] += src[k];
  }
  return GFI_OK;
}

/* ---- the convolution passes -------------------------------------------- */

typedef struct {
  size_t L, G, n, s, pre, post; /* fibre length G in, n out (every s-th) */
  const double *in;
  double *out;
  const fftw_complex *V; /* the samples' transform, L/2 + 1 */
  fftw_plan fwd, bwd;
  double gam, samp; /* rounding: FFT constant x ||v||_1, the samples' */
  double *err;      /* per fibre */
} pass_ctx;

typedef struct {
  double *r;
  fftw_complex *c;
} pass_ws;

static int pass_init(void *vc, void *vws) {
  const pass_ctx *p = vc;
  pass_ws *w = vws;
  w->r = fftw_malloc(p->L * sizeof *w->r);
  w->c = fftw_malloc((p->L / 2 + 1) * sizeof *w->c);
  if (!w->r || !w->c) {
    fftw_free(w->r);
    fftw_free(w->c);
    return GFI_ENOMEM;
  }
  return GFI_OK;
}

static void pass_fini(void *vc, void *vws) {
  (void)vc;
  pass_ws *w = vws;
  fftw_free(w->r);
  fftw_free(w->c);
}

static int pass_task(void *vc, size_t t, void *vws) {
  const pass_ctx *p = vc;
  pass_ws *w = vws;
  const size_t a = t / p->post, b = t % p->post, G = p->G, L = p->L, post = p->post;
  const double *in = p->in + a * G * post + b;
  double n2 = 0, n1 = 0;
  for (size_t i = 0; i < G; i++) {
    double v = in[i * post];
    w->r[i] = v;
    n2 += v * v;
    n1 += fabs(v);
  }
  memset(w->r + G, 0, (L - G) * sizeof *w->r);
  fftw_execute_dft_r2c(p->fwd, w->r, w->c);
  const size_t H = L / 2 + 1;
  for (size_t k = 0; k < H; k++) {
    double xr = w->c[k][0], xi = w->c[k][1], vr = p->V[k][0], vi = p->V[k][1];
    w->c[k][0] = xr * vr - xi * vi;
    w->c[k][1] = xr * vi + xi * vr;
  }
  fftw_execute_dft_c2r(p->bwd, w->c, w->r);
  const double iL = 1.0 / (double)L;
  double *out = p->out + a * p->n * post + b;
  for (size_t o = 0; o < p->n; o++) out[o * post] = w->r[o * p->s + G - 1] * iL;
  p->err[t] = p->gam * sqrt(n2) + p->samp * n1;
  return GFI_OK;
}

/* v[t] = phi(sinc(R (t + dmin) h)) / phi(1) (other families: kernel_spatial
 * / kernel_peak), t < lenv, zero to L; *v1 = ||v||_1. v is even in t + dmin:
 * the table holds |t + dmin| = 0 .. mmax, by the vectorised sincos where
 * every argument allows. tab: mmax + 1. */
static void samples(const bl_sum *s, double R, double h, long long dmin, size_t lenv, size_t L,
                    double *tab, double *v, double *v1) {
  const long long m0 = dmin, m1 = dmin + (long long)lenv - 1;
  const size_t mmax = (size_t)(m0 < 0 && -m0 > m1 ? -m0 : (m1 > -m0 ? m1 : -m0));
  const double ip1 = 1 / kernel_peak(&s->kern), Rh = R * h;
  double a[GFI_PHI_MAXPOW + 1];
  if (!kernel_is_sinc(&s->kern)) {
    for (size_t m = 0; m <= mmax; m++) tab[m] = kernel_spatial(&s->kern, Rh * (double)m) * ip1;
    goto fill;
  }
  for (int k = 0; k <= GFI_PHI_MAXPOW; k++) a[k] = k ? kernel_coef(&s->kern, k) : 0;
  int deg = GFI_PHI_MAXPOW;
  while (deg > 1 && a[deg] == 0) deg--;
  if (Rh * (double)mmax <= GFI_SINCOS_SIMD_MAX) {
#pragma omp simd
    for (size_t m = 1; m <= mmax; m++) {
      double u = Rh * (double)m, sn, cs;
      gfi_sincos_simd(u, &sn, &cs);
      tab[m] = sn / u;
    }
  } else {
    for (size_t m = 1; m <= mmax; m++) {
      double u = Rh * (double)m;
      tab[m] = sin(u) / u;
    }
  }
  tab[0] = 1;
#pragma omp simd
  for (size_t m = 0; m <= mmax; m++) {
    double z = tab[m], p = a[deg];
    for (int k = deg - 1; k >= 1; k--) p = p * z + a[k];
    tab[m] = p * z * ip1;
  }
fill:;
  double sum = 0;
  for (size_t t = 0; t < lenv; t++) {
    long long m = (long long)t + dmin;
    v[t] = tab[m < 0 ? -m : m];
    sum += fabs(v[t]);
  }
  memset(v + lenv, 0, (L - lenv) * sizeof *v);
  *v1 = sum;
}

int bl_binned_eval(const bl_sum *s, const bl_binned *b, const double *lo, const double *hi,
                   const size_t *n, double *out, double *babs) {
  (void)hi;
  const int D = s->D;
  const size_t nc = s->ncol;
  const double eps = DBL_EPSILON;
  double mu1, mu4, mu6;
  kernel_mus(s, &mu1, &mu4, &mu6);
  const int P = b->order;
  const double mu = P == 4 ? mu4 : mu6, lam = lebesgue(P);
  bin_ctx bx = {s, b, {0}, {1, 1, 1}, 1, 1, 1, 0, NULL};
  double interp = 0, shift = 0;
  for (int j = 0; j < D; j++) {
    const double loc = lo[j] - s->ctr[j];
    bx.base[j] = loc + (double)b->kmin[j] * b->h[j];
    bx.ih[j] = 1 / b->h[j];
    bx.cells *= b->G[j];
    const double hr = b->h[j] * s->R[j];
    interp += axis_factor(j, P) * mu * pow(hr, P);
    /* the positions' rounding: x - base, its product by 1 / h, the grid's
     * own points, each a few eps of the coordinates' extent; a shift d of
     * f moves the interpolant by at most slope(P) d h max |g'| (slope: max
     * over f of sum_m |w_m'(f)| |m - f|, 5/3 cubic, 11/5 quintic) */
    const double ext = fabs(loc) + fabs(bx.base[j]) + fmax(fabs(s->dlo[j]), fabs(s->dhi[j])) +
                       (double)(b->G[j] + (n[j] - 1) * b->s[j]) * b->h[j];
    shift += s->R[j] * mu1 * 5 * (P == 4 ? 5.0 / 3 : 2.2) * pow(lam, D - 1) * eps * ext;
  }
  /* the weights' rounding: each within a few eps, Lambda^D of them in all
   * (moments: within the summation term); the lattice's summation */
  bx.w = bin_width(s, bx.cells, P, b->sub);
  shift += (bx.w > 1 ? 0 : 16 * eps * pow(lam, D)) + accum_term(s, bx.cells, P, b->sub);
  /* binning: fixed blocks of points into their own lattices when those
   * are small (every thread then reads only its blocks), else one slab of
   * axis-0 cells per thread */
  const int nt = par_threads(s->nthreads);
  const size_t blk = bl_pass_block(s->N), nblk = (s->N + blk - 1) / blk;
  const int blocks = bin_blocks(s, bx.cells, P, b->sub); /* N and the lattice decide */
  bx.blk = blocks ? blk : 0;
  bx.ntask = blocks ? nblk : ((size_t)nt < b->G[0] ? (size_t)nt : b->G[0]);
  double *lat = gfi_malloc4(blocks ? nblk : 1, nc * bx.cells, bx.w, sizeof *lat);
  if (!lat) return GFI_ENOMEM;
  bx.lat = lat;
  int st = GFI_OK;
  if (b->sub) { /* a scratch lattice per thread */
    par_spec sp = {bx.ntask, nt, sizeof(double *), 0, bin_ws_init, bin_ws_fini};
    st = par_run(&sp, bin_task, &bx);
  } else {
    st = par_for(bx.ntask, nt, 0, bin_task, &bx); /* cannot fail */
  }
  if (st) {
    free(lat);
    return st;
  }
  if (blocks) {
    red_ctx rc = {lat, nblk, nc * bx.cells * bx.w, (size_t)1 << 13};
    (void)par_for((rc.width + rc.chunk - 1) / rc.chunk, nt, 0, red_task, &rc);
  }
  /* the passes, axes D-1 .. 0, per column */
  size_t big = bx.cells, dims[3];
  for (int j = 0; j < D; j++) dims[j] = b->G[j];
  for (int j = D - 1; j >= 0; j--) {
    dims[j] = n[j];
    size_t t = 1;
    for (int k = 0; k < D; k++) {
      if (t > SIZE_MAX / 8 / dims[k]) {
        free(lat);
        return GFI_ENOMEM;
      }
      t *= dims[k];
    }
    if (t > big) big = t;
  }
  double *bufA = gfi_malloc3(big, 1, sizeof *bufA), *bufB = gfi_malloc3(big, 1, sizeof *bufB);
  double *v[3] = {NULL, NULL, NULL}, *err = NULL;
  fftw_complex *V[3] = {NULL, NULL, NULL};
  fftw_plan fw[3] = {NULL, NULL, NULL}, bw[3] = {NULL, NULL, NULL};
  double v1[3] = {0, 0, 0};
  st = bufA && bufB ? GFI_OK : GFI_ENOMEM;
  size_t fibmax = 0;
  for (int j = 0; !st && j < D; j++) {
    const size_t L = b->L[j], lenv = (n[j] - 1) * b->s[j] + b->G[j];
    v[j] = fftw_malloc(L * sizeof *v[j]);
    V[j] = fftw_malloc((L / 2 + 1) * sizeof *V[j]);
    if (!v[j] || !V[j]) {
      st = GFI_ENOMEM;
      break;
    }
    gfi_fftw_lock();
    fw[j] = fftw_plan_dft_r2c_1d((int)L, v[j], V[j], FFTW_ESTIMATE);
    bw[j] = fftw_plan_dft_c2r_1d((int)L, V[j], v[j], FFTW_ESTIMATE);
    gfi_fftw_unlock();
    if (!fw[j] || !bw[j]) {
      st = GFI_ENOMEM;
      break;
    }
    const long long dmin = -b->kmin[j] - (long long)(b->G[j] - 1);
    const size_t mmax = (size_t)fmax(fabs((double)dmin), fabs((double)dmin + (double)lenv - 1));
    double *tab = malloc((mmax + 1) * sizeof *tab);
    if (!tab) {
      st = GFI_ENOMEM;
      break;
    }
    samples(s, s->R[j], b->h[j], dmin, lenv, L, tab, v[j], &v1[j]);
    free(tab);
    fftw_execute(fw[j]); /* V = the samples' transform (v is kept) */
  }
  /* the largest fibre count of a pass */
  for (int j = 0; j < D; j++) dims[j] = b->G[j];
  for (int j = D - 1; j >= 0; j--) {
    size_t f = 1;
    for (int k = 0; k < D; k++)
      if (k != j) f *= dims[k];
    if (f > fibmax) fibmax = f;
    dims[j] = n[j];
  }
  if (!st && !(err = malloc(fibmax * sizeof *err))) st = GFI_ENOMEM;

  double K0 = s->K0;
  size_t Gtot = 1;
  for (int j = 0; j < D; j++) Gtot *= n[j];
  for (size_t col = 0; !st && col < nc; col++) {
    if (bx.w > 1) { /* the lattice's values from the moments */
      mom_ctx mc = {lat + col * bx.cells * bx.w, bufA, bx.cells, bx.w, (size_t)1 << 14, P};
      (void)par_for((bx.cells + mc.chunk - 1) / mc.chunk, nt, 0, mom_task, &mc);
    } else {
      memcpy(bufA, lat + col * bx.cells, bx.cells * sizeof *bufA);
    }
    double *src = bufA, *dst = bufB, E = 0;
    for (int j = 0; j < D; j++) dims[j] = b->G[j];
    for (int j = D - 1; !st && j >= 0; j--) {
      size_t pre = 1, post = 1;
      for (int k = 0; k < j; k++) pre *= dims[k];
      for (int k = j + 1; k < D; k++) post *= dims[k];
      const double L = (double)b->L[j];
      pass_ctx pc = {b->L[j], b->G[j], n[j], b->s[j], pre, post, src, dst, V[j], fw[j], bw[j],
                     BIN_FFT_C * (log2(L) + 2) * eps * v1[j], (s->l + 8) * eps, err};
      par_spec sp = {pre * post, nt, sizeof(pass_ws), 0, pass_init, pass_fini};
      st = par_run(&sp, pass_task, &pc);
      if (st) break;
      double e = 0;
      for (size_t f = 0; f < pre * post; f++) e = fmax(e, err[f]);
      E = E * v1[j] + e;
      dims[j] = n[j];
      double *t = src;
      src = dst;
      dst = t;
    }
    if (st) break;
    for (size_t g = 0; g < Gtot; g++) out[g * nc + col] = K0 * src[g];
    babs[col] = K0 * (s->c1[col] * (interp + shift) + E);
  }
  gfi_fftw_lock();
  for (int j = 0; j < D; j++) {
    if (fw[j]) fftw_destroy_plan(fw[j]);
    if (bw[j]) fftw_destroy_plan(bw[j]);
  }
  gfi_fftw_unlock();
  for (int j = 0; j < D; j++) {
    fftw_free(v[j]);
    fftw_free(V[j]);
  }
  free(err);
  free(bufA);
  free(bufB);
  free(lat);
  return st;
}
