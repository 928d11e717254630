/* The band-limited route: frequency quadrature, NUFFTs, grid step, error
 * bound and cost model (bandlimited.h; maths in gfi/fast.h, docs/fast.md).
 *
 * Quadrature. On a knot interval of kappa_R (length 2R, or R for the first
 * half-interval of odd l) the integrand of one data point is a polynomial of
 * degree l-1 (|p| <= 1; kernel_piece_degree: 1 on the flat-top's pieces,
 * whose knots +-c R are not integers) times e^{i w u}, |u| <= S. Mapped to
 * [-1, 1] it is p(t) e^{i a t} with a = h S / 2, analytic everywhere; on the
 * Bernstein ellipse E_rho, |p| <= rho^(l-1) (Bernstein's inequality) and
 * |e^{i a t}| <= e^{a (rho - 1/rho) / 2}, so the n-point Gauss-Legendre
 * error is at most (64/15) M rho^(-2(n-1)) / (rho^2 - 1) (Trefethen,
 * Approximation Theory and Approximation Practice, Thm 19.3, whose I_n has
 * n + 1 nodes: the rule is exact to degree 2n + 1 there, 2n - 1 here),
 * minimised here over rho. The
 * intervals are split so that a <= FA_ALPHA_SUB (cheap GL tables, small
 * overhead), and n is the smallest count meeting the per-interval share of
 * the target. The integrand is even in w up to conjugation (real c), so axis
 * 0 is integrated over w_0 >= 0 with doubled weights and the real part is
 * taken. For the product over axes, |prod I - prod Q| <= sum_j E_j prod_{k != j}
 * (|I_k| + E_k) with |I_k| <= R_k / A_l: the bound qerr is relative to
 * sum_i |c_i| prod_j R_j / A_l.
 *
 * NUFFT errors: each type-3 output is within about ntol * sum |coefficients|
 * of the exact sum (lib/nufft.h: 0.8 ntol the worst measured; its tests
 * hold 10 ntol, the factor used here). The forward transform's error in F
 * reaches s through node weights that sum to prod R_j / A_l exactly (GL is
 * exact for kappa): 10 ntol sum_i |c_i| prod R_j / A_l. The backward
 * transform's is 10 ntol sum_q |a_q| with a_q the node coefficients, known
 * when it runs.
 *
 * Rounding: no tolerance of the NUFFT reaches below the rounding of the
 * phases w x themselves. A phase computed in double is off by about
 * eps |w x|, so each transform adds up to about C eps (Theta + sqrt Q) times
 * its sum of |coefficients|, Theta = sum_j max |w_j| max |x_j| (nodes times
 * centred points: the data's for the forward transform, the queries' for
 * the backward one or the grid's separable step) and sqrt Q for the sums'
 * own rounding. C = BL_ROUND_C; far queries (|x| >> the data's span) make
 * this term dominate, and the rows it leaves unsettled go to the direct sum
 * (tests/test_guarantee.c measures it on randomised hard cases). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bandlimited.h"
#include "engine_pass.h"
#include "freq_axis.h"
#include "kernel_internal.h"
#include "../lib/alloc.h"
#include "../lib/nufft.h"
#include "../lib/gauss_legendre.h"
#include "../lib/clones.h"
#include "../lib/simd_sincos.h"
#include "gfi/kernel.h"
#include "gfi/status.h"
#include "engine.h"
#include "par.h"

/* Node-count limit over all axes: beyond it the route "explodes" (one
 * axis: FA_AXIS_MAX). */
#define BL_NODES_MAX ((size_t)1 << 24)
/* Cost model: nanoseconds on one core, fitted to bench_fast_route (x86-64, AVX2,
 * the NUFFT of lib/nufft.c as of this writing: its type-3 transforms spend
 * about half a microsecond per point outside the spreading). */
#define COST_POINT 500.0  /* per source or target point of a NUFFT */
#define COST_SPREAD 1.0   /* per point per window cell */
#define COST_FFT 1.5      /* per grid point per log2 of the grid */
#define COST_NODE 4.0     /* per node per column (weights, products) */
#define COST_MAC 1.0      /* per complex multiply-add of the grid step */
#define COST_RULE 20.0    /* per node per axis to build the rule */
#define COST_PLAN 2e4     /* fixed cost of one NUFFT (plans, allocation) */
/* The rounding term's constant (see the top of this file). */
#define BL_ROUND_C 2.0

/* The rounding term of one transform between rule r's nodes and points
 * whose centred |coordinate| is at most xabs[j] on axis j. */
static double round_term(const bl_rule *r, const double *xabs) {
  double th = 0;
  for (int j = 0; j < r->D; j++) th += fmax(fabs(r->lo[j]), fabs(r->hi[j])) * xabs[j];
  return BL_ROUND_C * DBL_EPSILON * (th + sqrt((double)r->Q));
}

/* The passes' thread count and blocks (engine_pass.c, shared with binned.c). */
static int threads_of(int n) { return par_threads(n); }
static size_t pass_block(size_t N) { return bl_pass_block(N); }

/* ---- options ------------------------------------------------------------ */

int bl_check_opts(const gfi_opts *opts, double *tol, gfi_method *method) {
  gfi_opts o;
  gfi_default_opts(&o);
  if (opts) o = *opts;
  int st = gfi_opts_check(&o);
  if (st) return st;
  if (tol) *tol = o.tol > 0 ? o.tol : GFI_FAST_TOL_DEFAULT;
  if (method) *method = o.method;
  return GFI_OK;
}

/* ---- quadrature --------------------------------------------------------- */

static void rule_free(bl_rule *r) {
  for (int j = 0; j < 3; j++) {
    free(r->w[j]);
    free(r->wk[j]);
    r->w[j] = r->wk[j] = NULL;
  }
}

/* One axis of a band-limited family: freq_axis.c's Gauss-Legendre rule on
 * the transform's pieces (|kappa| <= 1 there: a mixture of B-splines with
 * non-negative weights, or the flat-top's trapezoid), the target relative to
 * R/A; the weights wk = the rule's weight times kappa(w / R). half: [0, lR]
 * with doubled weights. GFI_ERANGE when too many nodes. */
static int axis_build(const gfi_kernel *kern, double R, double A, double S, int half, double etarget,
                      size_t *n_out, double **w_out, double **wk_out, double *err_out) {
  const int deg = kernel_piece_degree(kern);
  size_t nmin = (size_t)((deg + 2) / 2);
  if (nmin < 2) nmin = 2;
  const fa_gl_spec sp = {.deg = deg, .amp = 1.0, .nmin = nmin, .scale = R / A};
  fa_axis ax;
  int st = fa_gl_axis(kern, R, S, half, etarget, &sp, &ax);
  if (st) return st == GFI_EINVAL ? GFI_EORDER : st;
  for (size_t i = 0; i < ax.n; i++) ax.gw[i] *= ax.kap[i];
  *n_out = ax.n;
  *w_out = ax.w;
  *wk_out = ax.gw;
  *err_out = ax.err;
  free(ax.kap);
  return GFI_OK;
}

/* One axis of a family whose transform is entire (the Gaussian,
 * kernel_rule): the trapezoid rule w_k = k d, |k| <= K, weight
 * d kappa(w_k / R) / (2 pi), with the node spacing d = 2 pi / P, P = S + t / R,
 * and K d = v R from the family's aliasing and truncation bounds
 * (kernel_alias, kernel_tail: relative to the peak, for every |u| <= S),
 * t and v the smallest meeting half of etarget each. */
static int axis_build_trap(const gfi_kernel *kern, double R, double S, int half, double etarget,
                           size_t *n_out, double **w_out, double **wk_out, double *err_out) {
  const double ea = 0.5 * etarget, et = 0.5 * etarget;
  double t = kernel_alias_reach(kern, ea);
  double alias = kernel_alias(kern, t);
  double vhi = kernel_tail_reach(kern, et);
  const double P = S + t / R, d = 2 * M_PI / P;
  const double Kd = ceil(vhi * R / d);
  if (!(Kd < (double)FA_AXIS_MAX / 2)) return GFI_ERANGE;
  const size_t K = (size_t)Kd;
  const size_t n = half ? K + 1 : 2 * K + 1;
  double *w = malloc(n * sizeof *w), *wk = malloc(n * sizeof *wk);
  if (!w || !wk) {
    free(w);
    free(wk);
    return GFI_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    double k = half ? (double)i : (double)i - (double)K;
    double wi = k * d, v = wi / R;
    w[i] = wi;
    wk[i] = (half && i > 0 ? 2.0 : 1.0) * d / (2 * M_PI) * gfi_kernel_kappa(kern, v);
  }
  *n_out = n;
  *w_out = w;
  *wk_out = wk;
  *err_out = alias + kernel_tail(kern, (double)K * d / R);
  return GFI_OK;
}

/* The rule of the kernel's family (kernel_rule): Gauss-Legendre on the
 * transform's pieces or the trapezoid rule. */
static int rule_make(bl_rule *r, int D, const gfi_kernel *kern, const double *R, double A,
                     const double *S, double eps) {
  memset(r, 0, sizeof *r);
  const int trap = kernel_rule(kern) == KERNEL_RULE_TRAPEZOID;
  r->D = D;
  r->l = kernel_band(kern);
  double e[3] = {0, 0, 0};
  size_t Q = 1;
  for (int j = 0; j < D; j++) {
    r->span[j] = S[j];
    int st = trap
                 ? axis_build_trap(kern, R[j], S[j], j == 0, eps / D, &r->n[j], &r->w[j], &r->wk[j], &e[j])
                 : axis_build(kern, R[j], A, S[j], j == 0, eps / D, &r->n[j], &r->w[j], &r->wk[j], &e[j]);
    if (st) {
      rule_free(r);
      return st;
    }
    if (r->n[j] > BL_NODES_MAX / Q) {
      rule_free(r);
      return GFI_ERANGE;
    }
    Q *= r->n[j];
    r->lo[j] = r->hi[j] = r->w[j][0];
    for (size_t i = 0; i < r->n[j]; i++) {
      if (r->w[j][i] < r->lo[j]) r->lo[j] = r->w[j][i];
      if (r->w[j][i] > r->hi[j]) r->hi[j] = r->w[j][i];
    }
  }
  r->Q = Q;
  double q = 0;
  for (int j = 0; j < D; j++) {
    double t = e[j];
    for (int k = 0; k < D; k++)
      if (k != j) t *= 1 + e[k];
    q += t;
  }
  r->qerr = q;
  return GFI_OK;
}

/* Tensor nodes (Q x D, last axis fastest) and their weights. */
static void rule_tensor(const bl_rule *r, double *nodes, double *wts) {
  const int D = r->D;
  for (size_t q = 0; q < r->Q; q++) {
    size_t rem = q;
    double wt = 1;
    for (int j = D - 1; j >= 0; j--) {
      size_t i = rem % r->n[j];
      rem /= r->n[j];
      if (nodes) nodes[q * (size_t)D + j] = r->w[j][i];
      wt *= r->wk[j][i];
    }
    if (wts) wts[q] = wt;
  }
}

/* ---- cost model --------------------------------------------------------- */

/* The NUFFT's spreading width at tolerance ntol (lib/nufft_spread.c:
 * ceil(log10(10 / tol)) + 1, from 2 to 16). */
int bl_nufft_width(double ntol) {
  int w = (int)ceil(-log10(ntol)) + 2;
  return w < 2 ? 2 : (w > 16 ? 16 : w);
}

double bl_ntol(double tol, double rho, int ntrans) {
  double t = tol * rho / (2.0 * BL_NUFFT_SAFETY * (double)(ntrans > 0 ? ntrans : 1));
  if (!(t >= BL_NTOL_MIN)) t = BL_NTOL_MIN; /* also NaN */
  return t > BL_NTOL_MAX ? BL_NTOL_MAX : t;
}

double bl_direct_units(int D) {
  static const double u[4] = {1, 30.0, 6.5, 3.2};
  return u[D >= 1 && D <= 3 ? D : 3];
}

/* The fast route's fixed cost per evaluation (threads, plans, the rule's
 * tables: about 2 ms on 2 threads), in the NUFFT model's units per D. */
static double fast_fixed(int D) {
  static const double u[4] = {0, 3e7, 8e6, 3e6};
  return u[D >= 1 && D <= 3 ? D : 3];
}

double bl_nufft_cost(int D, size_t nsrc, size_t ntgt, const size_t *grid, double ntol) {
  double w = bl_nufft_width(ntol), wD = 1;
  for (int j = 0; j < D; j++) wD *= w;
  double G = 1;
  for (int j = 0; j < D; j++) G *= (double)(grid[j] ? grid[j] : 1);
  return COST_PLAN + (COST_POINT + COST_SPREAD * wD) * ((double)nsrc + (double)ntgt) +
         COST_FFT * G * log2(G + 2);
}

static void nufft_opts_of(const bl_sum *s, double ntol, nufft_opts *o) {
  nufft_default_opts(o);
  o->tol = ntol;
  o->nthreads = s->nthreads;
}

/* Fine grids of the two transforms for a rule and a query box of
 * half-widths qh; 0 when a grid exceeds the NUFFT's limit. */
static int grids_of(const bl_sum *s, const bl_rule *r, const double *qh, size_t *gf, size_t *gb) {
  nufft_opts o, of;
  nufft_opts_of(s, s->ntol, &o);
  of = o;
  of.real_sources = 1; /* as forward() */
  double X[3], W[3], Wf[3];
  for (int j = 0; j < s->D; j++) {
    X[j] = 0.5 * (s->dhi[j] - s->dlo[j]);
    W[j] = 0.5 * (r->hi[j] - r->lo[j]);
    double cf = nufft3_target_centre(&of, r->lo[j], r->hi[j]);
    Wf[j] = fmax(r->hi[j] - cf, cf - r->lo[j]);
  }
  size_t t1 = nufft3_grid_size(s->D, X, Wf, &of, gf);
  size_t t2 = qh ? nufft3_grid_size(s->D, W, qh, &o, gb) : 1;
  if (!qh && gb) gb[0] = gb[1] = gb[2] = 0;
  return t1 && t2;
}

/* ---- bl_sum ------------------------------------------------------------- */

void bl_sum_free(bl_sum *s) {
  if (!s) return;
  if (s->f0_lock_ok) pthread_mutex_destroy(&s->f0_lock);
  gfi_big_give(s->x_own, s->x_cap); /* kept for the next plan, or freed */
  gfi_big_give(s->c_own, s->c_cap);
  free(s->c1);
  free(s->F0);
  rule_free(&s->r0);
  free(s);
}

const double *bl_sum_points(const bl_sum *s) { return s ? s->x : NULL; }

static double *centred_copy(const bl_sum *s);

/* F_col(w_q) for every column, into F (ncol x Q complex). */
static int forward(const bl_sum *s, const bl_rule *r, double ntol, double *F) {
  const size_t Q = r->Q;
  double *nodes = gfi_malloc3(Q, (size_t)s->D, sizeof *nodes);
  if (!nodes) return GFI_ENOMEM;
  rule_tensor(r, nodes, NULL);
  nufft_opts o;
  nufft_opts_of(s, ntol, &o);
  o.real_sources = 1; /* real coefficients: no phase per point, a real grid */
  nufft3_plan *p = NULL;
  int st = nufft3_plan_make(&p, s->D, s->dlo, s->dhi, -1, Q, nodes, &o);
  free(nodes);
  /* the centred points, x - ctr, for this transform only */
  double *xc = st ? NULL : centred_copy(s);
  if (!st && !xc) st = GFI_ENOMEM;
  for (size_t col = 0; !st && col < s->ncol; col++) {
    nufft3_reset(p);
    st = nufft3_add_real(p, s->N, xc, s->c ? s->c + col * s->N : NULL, s->cval);
    if (!st) st = nufft3_exec(p, F + 2 * col * Q);
  }
  free(xc);
  nufft3_destroy(p);
  return st;
}

/* Cells per axis of value_scale's histogram (at most 2^16 cells in all). */
static const size_t scale_cells[4] = {0, 4096, 256, 40};

/* An estimate rho of max |s_col| / (c1_col K0), the smallest over columns,
 * in (0, 1]. The bound of an evaluation is about (qerr + 20 ntol) c1 K0
 * (the node coefficients' sum |a_q| is at most c1 K0), so ntol = tol rho / 40
 * meets tol with a factor 2 to spare when the estimate holds.
 *
 * Each column's coefficients are summed in a histogram over the data box
 * whose cells are at least the kernel's main lobe wide (2 pi / R_j for
 * sinc^l, 2 / R_j = 2 h_j for the Gaussian) and at most box / cells: the
 * largest |cell sum| / cell volume is the column's sum averaged over a lobe,
 * about its largest |value| on the data (a cell wider than the lobe averages
 * more and so errs low, to a tighter ntol). A point mass gives c1 R / (2 pi)
 * per axis against the true c1 R / A_l (A_l <= pi): halved to stay below.
 * Queries away from the data have smaller values: the a-posteriori check
 * catches those. One pass over the data, deterministic. */
typedef struct {
  const bl_sum *s;
  size_t blk, col, ncell, ncopy, nb[3], stride;
  double icw[3];
  double *h; /* ncopy histograms per block, summed into the first */
} scale_ctx;

/* The histogram cells of n points (rows of D), computed per vector level
 * a chunk at a time: x - dlo >= 0 (the box holds every point), so
 * truncation is floor; at most 2^16 cells. */
#define SCALE_CHUNK 64
GFI_CLONES static void hist_cells(int D, const double *xs, size_t n, const double *ctr, const double *dlo,
                                   const double *icw, const size_t *nb, uint32_t *cell) {
  for (size_t t = 0; t < n; t++) cell[t] = 0;
  for (int j = 0; j < D; j++) {
    const double cj = ctr[j], lj = dlo[j], wj = icw[j], top = (double)nb[j];
    const uint32_t last = (uint32_t)nb[j] - 1, mult = (uint32_t)nb[j];
#pragma omp simd
    for (size_t t = 0; t < n; t++) {
      const double u = ((xs[t * (size_t)D + (size_t)j] - cj) - lj) * wj;
      const uint32_t b = u < top ? (uint32_t)(int32_t)u : last;
      cell[t] = cell[t] * mult + b;
    }
  }
}

#define SCALE_SAMPLE ((size_t)1 << 17)
#define SCALE_RUN ((size_t)4096)
static int scale_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const scale_ctx *x = vc;
  const bl_sum *s = x->s;
  const int D = s->D;
  const size_t i0 = q * x->blk, i1 = s->N - i0 < x->blk ? s->N : i0 + x->blk;
  /* A few cells take many points in a row: consecutive points go to
   * ncopy interleaved histograms, so that their adds do not wait on each
   * other through memory; the copies are summed in a fixed order. */
  const size_t nc = x->ncopy;
  double *h = x->h + q * nc * x->ncell;
  memset(h, 0, nc * x->ncell * sizeof *h);
  const double *c = s->c ? s->c + x->col * s->N : NULL;
  /* One coefficient for all: of every run of SCALE_RUN points (runs fixed
   * by N) the first 1 / stride stand for the whole run (contiguous, so the
   * other cache lines are not read). */
  const size_t run = c || x->stride == 1 ? i1 - i0 : SCALE_RUN;
  size_t r = 0;
  for (size_t a = i0; a < i1; a += run) {
    const size_t n = i1 - a < run ? i1 - a : run, m = c ? n : (n + x->stride - 1) / x->stride;
    const double cv = s->cval * ((double)n / (double)m);
    for (size_t i = a; i < a + m; i += SCALE_CHUNK) {
      const size_t k = a + m - i < SCALE_CHUNK ? a + m - i : SCALE_CHUNK;
      uint32_t cell[SCALE_CHUNK];
      hist_cells(D, s->x + i * (size_t)D, k, s->ctr, s->dlo, x->icw, x->nb, cell);
      for (size_t t = 0; t < k; t++, r++)
        h[(r & (nc - 1)) * x->ncell + cell[t]] += c ? c[i + t] : cv; /* nc: 1 or 4 */
    }
  }
  for (size_t k = 1; k < nc; k++)
    for (size_t cell = 0; cell < x->ncell; cell++) h[cell] += h[k * x->ncell + cell];
  return GFI_OK;
}

static int value_scale(const bl_sum *s, double *rho) {
  const int D = s->D;
  /* The scale only sets the NUFFT's tolerance (an evaluation that then
   * misses tol is redone tighter): with one coefficient for all, a sample
   * of one point in stride of large data suffices. */
  const size_t stride = s->c || s->N < SCALE_SAMPLE * 2 ? 1 : s->N / SCALE_SAMPLE;
  scale_ctx x = {s, pass_block(s->N), 0, 1, 1, {1, 1, 1}, stride, {1, 1, 1}, NULL};
  double vol = 1;
  for (int j = 0; j < D; j++) {
    double wdt = s->dhi[j] - s->dlo[j];
    double lobe = kernel_lobe(&s->kern) / s->R[j];
    double k = floor(wdt / lobe);
    if (!(k >= 1)) k = 1; /* also for a zero-width box */
    if (k > (double)scale_cells[D]) k = (double)scale_cells[D];
    x.nb[j] = (size_t)k;
    double cw = fmax(wdt / k, lobe);
    x.icw[j] = 1 / cw;
    vol *= cw;
    x.ncell *= x.nb[j];
  }
  const size_t nblk = (s->N + x.blk - 1) / x.blk;
  x.ncopy = x.ncell <= 8192 ? 4 : 1;
  x.h = gfi_malloc3(nblk, x.ncopy * x.ncell, sizeof *x.h);
  if (!x.h) return GFI_ENOMEM;
  double r = 1;
  for (size_t col = 0; col < s->ncol; col++) {
    if (!(s->c1[col] > 0)) continue;
    x.col = col;
    (void)par_for(nblk, nblk > 1 ? threads_of(s->nthreads) : 1, 0, scale_task, &x); /* cannot fail */
    double m = 0;
    for (size_t k = 0; k < x.ncell; k++) {
      double v = x.h[k];
      for (size_t q = 1; q < nblk; q++) v += x.h[q * x.ncopy * x.ncell + k];
      m = fmax(m, fabs(v));
    }
    double rc = 0.5 * m / vol / (s->c1[col] * s->K0);
    if (rc < r) r = rc;
  }
  free(x.h);
  /* all coefficients cancelling in every cell: fall back to the smallest
   * plausible scale, one coefficient at the kernel's peak over N */
  if (!(r > 0)) r = 1.0 / (double)s->N;
  if (r < 1e-300) r = 1e-300;
  *rho = r;
  return GFI_OK;
}

/* E[q] = e^{i w_q y} for n nodes: vectorised when every |w_q y| allows
 * (gfi_sincos_simd agrees with libm's sincos to 2.3e-16), libm otherwise. */
GFI_CLONES static void phase_row(size_t n, const double *w, double y, int simd, double *E) {
  if (simd) {
#pragma omp simd
    for (size_t q = 0; q < n; q++) gfi_sincos_simd(w[q] * y, E + 2 * q + 1, E + 2 * q);
    return;
  }
  for (size_t q = 0; q < n; q++) {
    double ph = w[q] * y;
    E[2 * q] = cos(ph);
    E[2 * q + 1] = sin(ph);
  }
}

/* The smallest and largest coordinate on each axis of N finite points (rows
 * of D): branch-free selections, so the loops vectorise. */
static void data_box(int D, size_t N, const double *x, double *lo, double *hi) {
  for (int j = 0; j < D; j++) lo[j] = hi[j] = x[j];
  if (D == 1) {
    double a = x[0], b = x[0];
#pragma omp simd reduction(min : a) reduction(max : b)
    for (size_t i = 0; i < N; i++) {
      a = x[i] < a ? x[i] : a;
      b = x[i] > b ? x[i] : b;
    }
    lo[0] = a;
    hi[0] = b;
    return;
  }
  for (size_t i = 0; i < N; i++)
    for (int j = 0; j < D; j++) {
      double v = x[i * (size_t)D + j];
      lo[j] = v < lo[j] ? v : lo[j];
      hi[j] = v > hi[j] ? v : hi[j];
    }
}

typedef struct {
  int D;
  size_t N, blk;
  const double *x;
  double *lo, *hi; /* box: one per block (D each); centre: the centre */
  double *xc;      /* centre: the centred points */
} pass_ctx;

static int box_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const pass_ctx *c = vc;
  const size_t i0 = q * c->blk, n = c->N - i0 < c->blk ? c->N - i0 : c->blk;
  data_box(c->D, n, c->x + i0 * (size_t)c->D, c->lo + q * (size_t)c->D, c->hi + q * (size_t)c->D);
  return GFI_OK;
}

static int centre_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const pass_ctx *c = vc;
  const int D = c->D;
  const size_t i0 = q * c->blk, i1 = c->N - i0 < c->blk ? c->N : i0 + c->blk;
  if (D == 1) {
    const double c0 = c->lo[0];
    for (size_t i = i0; i < i1; i++) c->xc[i] = c->x[i] - c0;
  } else {
    for (size_t i = i0; i < i1; i++)
      for (int j = 0; j < D; j++) c->xc[i * (size_t)D + j] = c->x[i * (size_t)D + j] - c->lo[j];
  }
  return GFI_OK;
}

/* The plan's copy of the points, block by block on the threads: the copy's
 * fresh pages are then faulted in (zeroed by the kernel) in parallel, not
 * on one thread (at N = 1e7 a serial copy held two threads to 1.67x). */
static int copy_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const pass_ctx *c = vc;
  const size_t i0 = q * c->blk, n = c->N - i0 < c->blk ? c->N - i0 : c->blk;
  memcpy(c->xc + i0 * (size_t)c->D, c->x + i0 * (size_t)c->D, n * (size_t)c->D * sizeof *c->x);
  return GFI_OK;
}

/* The points centred, x - ctr (N x D, to free), or NULL (no memory). */
static double *centred_copy(const bl_sum *s) {
  double *xc = gfi_malloc3(s->N, (size_t)s->D, sizeof *xc);
  if (!xc) return NULL;
  const size_t blk = pass_block(s->N), nblk = (s->N + blk - 1) / blk;
  pass_ctx pc = {s->D, s->N, blk, s->x, (double *)s->ctr, NULL, xc};
  (void)par_for(nblk, nblk > 1 ? threads_of(s->nthreads) : 1, 0, centre_task, &pc); /* cannot fail */
  return xc;
}

/* The arrays bl_sum_make_box was to adopt, freed when it fails early. */
static int drop_adopted(unsigned hold, const double *x, const double *c, int st) {
  if (hold & BL_ADOPT_X) free((double *)x);
  if (hold & BL_ADOPT_C) free((double *)c);
  return st;
}

/* c NULL: one column, every coefficient cval; box NULL: the box is found
 * here; hold: BL_BORROW_* / BL_ADOPT_* (0: copies of x and c) */
static int sum_make(bl_sum **out, int D, const gfi_kernel *k, size_t N, const double *x, size_t ncol,
                    const double *c, double cval, const double *R, const gfi_opts *opts,
                    double direct_pair, const bl_box *box, unsigned hold) {
  *out = NULL;
  if (!c) hold &= ~(BL_BORROW_C | BL_ADOPT_C);
  if (!kernel_engine_ok(k)) return drop_adopted(hold, x, c, GFI_EINVAL);
  if (D < 1 || D > BL_MAX_DIM || N == 0 || ncol == 0 || (!c && ncol != 1))
    return drop_adopted(hold, x, c, GFI_EINVAL);
  double tol;
  gfi_method method;
  int st = bl_check_opts(opts, &tol, &method);
  if (st) return drop_adopted(hold, x, c, st);
  if (N > SIZE_MAX / 2 / (size_t)D / ncol / sizeof(double)) return drop_adopted(hold, x, c, GFI_ENOMEM);
  bl_sum *s = calloc(1, sizeof *s);
  if (!s) return drop_adopted(hold, x, c, GFI_ENOMEM);
  /* from here on bl_sum_free frees what was adopted */
  if (hold & BL_ADOPT_X) s->x_own = (double *)x;
  if (hold & BL_ADOPT_C) s->c_own = (double *)c;
  atomic_init(&s->f0_done, 0);
  if (pthread_mutex_init(&s->f0_lock, NULL)) {
    bl_sum_free(s);
    return GFI_ENOMEM;
  }
  s->f0_lock_ok = 1;
  s->D = D;
  s->l = kernel_band(k);
  s->kern = *k;
  s->N = N;
  s->ncol = ncol;
  s->A = k->A;
  s->K0 = 1;
  for (int j = 0; j < D; j++) {
    s->R[j] = R[j];
    s->K0 *= R[j] / s->A * kernel_peak(k); /* the peak: phi(1) R / A */
  }
  s->tol = tol;
  s->method = method;
  s->nthreads = opts ? opts->nthreads : 0;
  /* The largest |value| is at least about max_i |c_i| K0 >= c1 K0 / N: aim
   * the bound of every part at a quarter of tol relative to that. */
  s->eps = tol / (4.0 * (double)N);
  if (s->eps < 1e-18) s->eps = 1e-18;
  /* the points and coefficients: borrowed, adopted (above) or copied */
  size_t nb;
  if (hold & (BL_BORROW_X | BL_ADOPT_X))
    s->x = x;
  else if (!gfi_size_prod(&nb, N, (size_t)D, sizeof *s->x_own, 1))
    s->x = s->x_own = gfi_big_take(nb, &s->x_cap);
  if (!c || (hold & (BL_BORROW_C | BL_ADOPT_C)))
    s->c = c;
  else if (!gfi_size_prod(&nb, N, ncol, sizeof *s->c_own, 1))
    s->c = s->c_own = gfi_big_take(nb, &s->c_cap);
  s->cval = cval;
  s->c1 = calloc(ncol, sizeof *s->c1);
  if (!s->x || (c && !s->c) || !s->c1) {
    bl_sum_free(s);
    return GFI_ENOMEM;
  }
  /* The data box (the values are finite: every caller checked them), then
   * the data centred on it. Rounding is monotonic, so lo <= x <= hi gives
   * fl(lo - ctr) <= fl(x - ctr) <= fl(hi - ctr): the centred box holds every
   * centred point. */
  {
    const size_t blk = pass_block(N), nblk = (N + blk - 1) / blk;
    const int nt = nblk > 1 ? threads_of(s->nthreads) : 1;
    double lo[PASS_BLOCKS * BL_MAX_DIM], hi[PASS_BLOCKS * BL_MAX_DIM];
    pass_ctx pc = {D, N, blk, x, lo, hi, NULL};
    if (box) { /* the caller's pass found it */
      for (int j = 0; j < D; j++) lo[j] = box->lo[j], hi[j] = box->hi[j];
    } else {
      (void)par_for(nblk, nt, 0, box_task, &pc); /* cannot fail */
      for (size_t q = 1; q < nblk; q++) /* min and max are exact: any order */
        for (int j = 0; j < D; j++) {
          lo[j] = fmin(lo[j], lo[q * (size_t)D + j]);
          hi[j] = fmax(hi[j], hi[q * (size_t)D + j]);
        }
    }
    for (int j = 0; j < D; j++) {
      s->ctr[j] = 0.5 * (lo[j] + hi[j]);
      s->dlo[j] = lo[j] - s->ctr[j];
      s->dhi[j] = hi[j] - s->ctr[j];
    }
  }
  /* the points as given: the binning and the value scale centre them on the
   * fly (the same fl(x - ctr)), the NUFFT on a centred copy of its own */
  if (s->x_own && s->x_own != x) {
    const size_t blk = pass_block(N), nblk = (N + blk - 1) / blk;
    pass_ctx pc = {D, N, blk, x, NULL, NULL, s->x_own};
    (void)par_for(nblk, nblk > 1 ? threads_of(s->nthreads) : 1, 0, copy_task, &pc); /* cannot fail */
  }
  double *cc = s->c_own && s->c_own != c ? s->c_own : NULL; /* a copy to fill */
  for (size_t col = 0; col < ncol; col++) {
    if (!c) {
      s->c1[col] = (double)N * fabs(cval);
      continue;
    }
    double a = 0;
    if (cc)
      for (size_t i = 0; i < N; i++) {
        double v = c[col * N + i];
        cc[col * N + i] = v;
        a += fabs(v);
      }
    else
      for (size_t i = 0; i < N; i++) a += fabs(c[col * N + i]);
    s->c1[col] = a;
  }
  s->rho = 1.0 / sqrt((double)N); /* replaced by value_scale below */
  s->ntol = bl_ntol(tol, s->rho, 2);
  if (method == GFI_METHOD_DIRECT) {
    s->reason0 = GFI_ROUTE_REQUESTED;
    *out = s;
    return GFI_OK;
  }
  /* The NUFFTs are the expensive part: their tolerance is set from an
   * estimate rho c1 K0 of the largest |value| (value_scale); an evaluation
   * whose bound then misses tol is redone tighter (bl_tighten). */
  double rho;
  st = value_scale(s, &rho);
  if (st) {
    bl_sum_free(s);
    return st;
  }
  s->rho = rho;
  s->ntol = bl_ntol(tol, rho, 2);
  /* Design span: the data box widened on each side by a quarter of its
   * width, or by a few kernel widths (4 pi / R for sinc^l, 2 h = 2 / R for
   * the Gaussian) but not more than the box's width: a wide kernel on a
   * small box would otherwise multiply the nodes (in 3-D by their cube) for
   * queries that may never come; those get their own rule. */
  double S0[3], qlo[3], qhi[3];
  for (int j = 0; j < D; j++) {
    double wdt = s->dhi[j] - s->dlo[j];
    double m = fmax(0.25 * wdt, fmin(wdt, kernel_margin(k) / R[j]));
    qlo[j] = s->dlo[j] - m + s->ctr[j];
    qhi[j] = s->dhi[j] + m + s->ctr[j];
    S0[j] = wdt + 2 * m;
  }
  (void)S0;
  bl_choice ch;
  st = bl_choose(s, N, qlo, qhi, NULL, direct_pair, &ch);
  if (st) {
    bl_sum_free(s);
    return st;
  }
  s->reason0 = ch.reason;
  if (ch.route == GFI_METHOD_FAST) {
    s->r0 = ch.rule; /* take ownership */
    memset(&ch.rule, 0, sizeof ch.rule);
    memcpy(s->gf0, ch.gf, sizeof s->gf0);
    if (s->r0.Q > SIZE_MAX / 2 / ncol / sizeof(double)) st = GFI_ENOMEM;
    if (!st) {
      s->F0 = malloc(2 * s->r0.Q * ncol * sizeof *s->F0);
      if (!s->F0) st = GFI_ENOMEM;
    }
    /* F0 itself is computed by the first evaluation that uses it (f0_ready):
     * a grid evaluated by the binned route never needs it */
    if (st) {
      bl_choice_free(&ch);
      bl_sum_free(s);
      return st;
    }
    s->have0 = 1;
  }
  bl_choice_free(&ch);
  *out = s;
  return GFI_OK;
}

int bl_sum_make(bl_sum **out, int D, const gfi_kernel *k, size_t N, const double *x, size_t ncol,
                const double *c, const double *R, const gfi_opts *opts, double direct_pair) {
  if (!c) {
    if (out) *out = NULL;
    return GFI_EINVAL;
  }
  return sum_make(out, D, k, N, x, ncol, c, 0, R, opts, direct_pair, NULL, 0);
}

int bl_sum_make_box(bl_sum **out, int D, const gfi_kernel *k, size_t N, const double *x, size_t ncol,
                    const double *c, double cval, const double *R, const gfi_opts *opts,
                    double direct_pair, const bl_box *box, unsigned hold) {
  if (!out) return drop_adopted(hold, x, c, GFI_EINVAL);
  return sum_make(out, D, k, N, x, ncol, c, cval, R, opts, direct_pair, box, hold);
}

int bl_sum_make_uniform(bl_sum **out, int D, const gfi_kernel *k, size_t N, const double *x,
                        double cval, const double *R, const gfi_opts *opts, double direct_pair) {
  return sum_make(out, D, k, N, x, 1, NULL, cval, R, opts, direct_pair, NULL, 0);
}

void bl_choice_free(bl_choice *ch) {
  if (ch) rule_free(&ch->rule);
}

double bl_fast_estimate(int D, const gfi_kernel *k, const double *R, const double *S, size_t N, size_t M,
                        size_t ncol, double ntol, int *explode) {
  /* the family's estimate per axis (kernel_nodes); the first axis is halved
   * (the rule's symmetry) */
  double Qe = 1;
  *explode = 0;
  for (int j = 0; j < D; j++) {
    double e = (j == 0 ? 0.5 : 1.0) * kernel_nodes(k, R[j], S[j]);
    if (!(e <= (double)FA_AXIS_MAX)) *explode = 1;
    Qe *= e;
  }
  if (!(Qe <= (double)BL_NODES_MAX)) *explode = 1;
  size_t g1[3] = {1, 1, 1}, Q = (size_t)fmin(Qe, 1e18);
  return (double)ncol * (bl_nufft_cost(D, N, Q, g1, ntol) + (M ? bl_nufft_cost(D, Q, M, g1, ntol) : 0));
}

int bl_choose(const bl_sum *s, size_t M, const double *qlo, const double *qhi, const size_t *gn,
              double direct_pair, bl_choice *ch) {
  memset(ch, 0, sizeof *ch);
  ch->grid = gn != NULL;
  ch->ntol = s->ntol;
  const int D = s->D;
  double G = 1;
  if (gn)
    for (int j = 0; j < D; j++) G *= (double)gn[j];
  double Mq = gn ? G : (double)M;
  ch->cost_direct = direct_pair * (double)s->N * Mq;
  if (s->method == GFI_METHOD_DIRECT) {
    ch->route = GFI_METHOD_DIRECT;
    ch->reason = GFI_ROUTE_REQUESTED;
    return GFI_OK;
  }
  /* span of data and queries, and whether the design span covers it */
  double S[3], qh[3];
  int fits = s->have0;
  for (int j = 0; j < D; j++) {
    double lo = fmin(s->dlo[j], qlo[j] - s->ctr[j]), hi = fmax(s->dhi[j], qhi[j] - s->ctr[j]);
    S[j] = hi - lo;
    qh[j] = 0.5 * (qhi[j] - qlo[j]);
    if (s->have0 && !(S[j] <= s->r0.span[j])) fits = 0;
  }
  if (!fits && s->method == GFI_METHOD_AUTO) {
    /* Before building a rule: a cheap estimate of its node count (GL needs
     * about a/2 + 8 nodes per knot interval, a = R S) and the fast cost it
     * implies; auto decides without the rule when even that loses. */
    int explode;
    double cl = fast_fixed(D) + bl_fast_estimate(D, &s->kern, s->R, S, s->N, gn ? 0 : M, s->ncol, s->ntol, &explode);
    if (explode || cl >= ch->cost_direct) {
      ch->route = GFI_METHOD_DIRECT;
      ch->reason = explode ? GFI_ROUTE_NODES : GFI_ROUTE_COST;
      ch->cost_fast = cl;
      return GFI_OK;
    }
  }
  if (fits && s->method == GFI_METHOD_AUTO) {
    /* A part of the fast route's cost known without its NUFFT grids (whose
     * kernel costs ~0.4 ms to make): the fixed cost, and F0 when it is not
     * made yet. When that alone loses, a small call goes direct for the
     * direct route's price. */
    double lb = fast_fixed(D);
    if (!atomic_load_explicit(&((bl_sum *)s)->f0_done, memory_order_acquire))
      lb += (double)s->ncol * bl_nufft_cost(D, s->N, s->r0.Q, s->gf0, s->ntol);
    if (lb >= ch->cost_direct) {
      ch->route = GFI_METHOD_DIRECT;
      ch->reason = GFI_ROUTE_COST;
      ch->cost_fast = lb;
      return GFI_OK;
    }
  }
  const bl_rule *r;
  int st = GFI_OK;
  if (fits) {
    ch->reuse = 1;
    ch->useF0 = 1;
    r = &s->r0;
  } else {
    st = rule_make(&ch->rule, D, &s->kern, s->R, s->A, S, s->eps);
    r = &ch->rule;
  }
  int grid_ok = 0;
  if (!st) grid_ok = grids_of(s, r, gn ? NULL : qh, ch->gf, ch->gb);
  if (st == GFI_ENOMEM) return st;
  if (st || !grid_ok) {
    bl_choice_free(ch);
    if (s->method == GFI_METHOD_FAST) return GFI_ERANGE;
    ch->route = GFI_METHOD_DIRECT;
    ch->reason = GFI_ROUTE_NODES;
    return GFI_OK;
  }
  /* cost of the fast route */
  double Q = (double)r->Q, nc = (double)s->ncol, cf = fast_fixed(D);
  if (!ch->reuse) {
    for (int j = 0; j < D; j++) cf += COST_RULE * (double)r->n[j];
    cf += nc * bl_nufft_cost(D, s->N, r->Q, ch->gf, s->ntol);
  } else if (!atomic_load_explicit(&((bl_sum *)s)->f0_done, memory_order_acquire)) {
    cf += nc * bl_nufft_cost(D, s->N, r->Q, s->gf0, s->ntol); /* F0 not made yet */
  }
  cf += nc * COST_NODE * Q;
  if (gn) {
    /* separable step, axes D-1 .. 0: each shrinks/grows one axis */
    double dims[3];
    for (int j = 0; j < D; j++) dims[j] = (double)r->n[j];
    for (int j = D - 1; j >= 0; j--) {
      double rest = 1;
      for (int k = 0; k < D; k++)
        if (k != j) rest *= dims[k];
      cf += nc * COST_MAC * rest * (double)r->n[j] * (double)gn[j];
      dims[j] = (double)gn[j];
    }
  } else {
    cf += nc * bl_nufft_cost(D, r->Q, M, ch->gb, s->ntol);
  }
  ch->cost_fast = cf;
  /* working memory: the NUFFT grids and the transforms at the nodes */
  double gfw = 1, gbw = 1;
  for (int j = 0; j < D; j++) {
    gfw *= (double)(ch->gf[j] ? ch->gf[j] : 1);
    gbw *= (double)(ch->gb[j] ? ch->gb[j] : 1);
  }
  bl_cost c = {ch->cost_direct, cf, 16.0 * (gfw + gbw + nc * Q), 1, 0};
  st = bl_decide(s->method, &c, &ch->route, &ch->reason);
  if (!st && ch->route == GFI_METHOD_DIRECT) bl_choice_free(ch);
  return st;
}

int bl_tighten(bl_choice *ch, double ntol) {
  if (ch->route != GFI_METHOD_FAST || !(ntol < ch->ntol) || ch->ntol <= BL_NTOL_MIN) return 0;
  ch->ntol = ntol < BL_NTOL_MIN ? BL_NTOL_MIN : ntol;
  ch->useF0 = 0;
  return 1;
}

int bl_run(const bl_sum *s, const bl_target *t, double direct_pair, bl_need_fn need, const void *ctx,
           double **res, double *babs, gfi_fast_info *info, gfi_method *route) {
  const int D = s->D;
  double lo[BL_MAX_DIM], hi[BL_MAX_DIM];
  if (t->gn) {
    for (int j = 0; j < D; j++) {
      lo[j] = fmin(t->glo[j], t->ghi[j]);
      hi[j] = fmax(t->glo[j], t->ghi[j]);
    }
  } else {
    if (t->M == 0) return GFI_EINVAL;
    for (int j = 0; j < D; j++) lo[j] = hi[j] = t->q[j];
    for (size_t m = 0; m < t->M; m++)
      for (int j = 0; j < D; j++) {
        double v = t->q[m * (size_t)D + (size_t)j];
        if (v < lo[j]) lo[j] = v;
        if (v > hi[j]) hi[j] = v;
      }
  }
  bl_choice ch;
  int st = bl_choose(s, t->M, lo, hi, t->gn, direct_pair, &ch);
  if (st && st != GFI_ERANGE) return st;
  /* A tensor grid may be binned instead (binned.c): when that costs less
   * than the NUFFT route (and, under auto, than the direct sum), or when the
   * NUFFT route cannot run. */
  bl_binned b;
  bl_choice alt; /* the NUFFT route, kept for a tighter pass that no lattice can take */
  int have_alt = 0;
  if (t->gn && s->method != GFI_METHOD_DIRECT && bl_binned_plan(s, t->glo, t->ghi, t->gn, bl_binned_beps(s), 0, &b)) {
    b.cost += fast_fixed(D); /* as the NUFFT route's (bl_choose) */
    double cf = !st && ch.route == GFI_METHOD_FAST ? ch.cost_fast : INFINITY;
    double cd = s->method == GFI_METHOD_AUTO ? ch.cost_direct : INFINITY;
    if (b.cost < cf && b.cost < cd) {
      if (!st && ch.route == GFI_METHOD_FAST && need) {
        alt = ch;
        have_alt = 1;
      } else if (!st) {
        bl_choice_free(&ch);
      }
      memset(&ch.rule, 0, sizeof ch.rule);
      ch.route = GFI_METHOD_FAST;
      ch.reason = s->method == GFI_METHOD_FAST ? GFI_ROUTE_REQUESTED : GFI_ROUTE_COST;
      ch.reuse = ch.useF0 = 0;
      ch.cost_fast = b.cost;
      ch.bin = b;
      st = GFI_OK;
    }
  }
  if (st) return st;
  bl_info_fill(s, &ch, (size_t)D, info);
  *route = ch.route;
  if (ch.route == GFI_METHOD_FAST && !*res) {
    *res = gfi_malloc3(t->M, s->ncol, sizeof **res);
    if (!*res) st = GFI_ENOMEM;
  }
  if (ch.route == GFI_METHOD_FAST && !st) {
    for (int pass = 0;; pass++) {
      st = ch.bin.on ? bl_binned_eval(s, &ch.bin, t->glo, t->ghi, t->gn, *res, babs)
           : t->gn   ? bl_grid(s, &ch, t->glo, t->ghi, t->gn, *res, babs)
                     : bl_points(s, &ch, t->M, t->q, *res, babs);
      if (st || pass || !need) break;
      double f = need(ctx, t->M, *res, babs);
      if (!(f < 1)) break;
      if (ch.bin.on) {
        /* the binning term is h^P: a lattice finer by (margin f)^(1/P)
         * per axis, when it fits */
        /* f scales the bound that ran, which the lattice's whole cells
         * may have put well below the target it was planned for */
        double ran = 0;
        for (size_t col = 0; col < s->ncol; col++)
          if (s->c1[col] > 0) ran = fmax(ran, babs[col] / (s->c1[col] * s->K0));
        bl_binned tb;
        if (!bl_binned_plan(s, t->glo, t->ghi, t->gn, fmin(ch.bin.beps, ran) * BL_TIGHTEN_MARGIN * (f > 0 ? f : 0),
                            0, &tb)) {
          /* no lattice meets it, and the sums' term already shaped this
           * one (sub-chunks: near tol 1e-10): the NUFFT route's pass,
           * tightened by the same factor, settles more of the client's
           * rows */
          if (!have_alt || !ch.bin.sub) break;
          ch = alt;
          have_alt = 0;
          (void)bl_tighten(&ch, ch.ntol * BL_TIGHTEN_MARGIN * (f > 0 ? f : 0));
          bl_info_fill(s, &ch, (size_t)D, info);
          continue;
        }
        tb.cost += fast_fixed(D);
        ch.bin = tb;
        continue;
      }
      if (!bl_tighten(&ch, ch.ntol * BL_TIGHTEN_MARGIN * (f > 0 ? f : 0))) break;
    }
    if (ch.bin.on) {
      for (int j = 0; j < D; j++) info->bins[j] = ch.bin.G[j];
      info->bin_order = ch.bin.order;
      info->cost_fast = ch.bin.cost;
    } else {
      info->nufft_tol = ch.ntol;
      info->reused = ch.useF0;
    }
  }
  if (have_alt) bl_choice_free(&alt);
  bl_choice_free(&ch);
  return st;
}

/* The plan's F0, computed on first use (once, under the lock). */
static int f0_ready(const bl_sum *cs) {
  bl_sum *s = (bl_sum *)cs; /* F0 is the plan's cache, not its meaning */
  if (atomic_load_explicit(&s->f0_done, memory_order_acquire)) return GFI_OK;
  pthread_mutex_lock(&s->f0_lock);
  int st = GFI_OK;
  if (!atomic_load_explicit(&s->f0_done, memory_order_relaxed)) {
    st = forward(s, &s->r0, s->ntol, s->F0);
    if (!st) atomic_store_explicit(&s->f0_done, 1, memory_order_release);
  }
  pthread_mutex_unlock(&s->f0_lock);
  return st;
}

/* a = weight * F for every column (ncol x Q complex), from F0 or a fresh F;
 * the bound of each column's value from the quadrature and the forward
 * transform (the backward one is added by the caller). */
static int node_coeffs(const bl_sum *s, const bl_choice *ch, const bl_rule **rp, double **ap,
                       double *babs) {
  const bl_rule *r = ch->reuse ? &s->r0 : &ch->rule;
  const size_t Q = r->Q, nc = s->ncol;
  if (Q > SIZE_MAX / 2 / nc / sizeof(double)) return GFI_ENOMEM;
  double *a = malloc(2 * Q * nc * sizeof *a), *wt = malloc(Q * sizeof *wt);
  if (!a || !wt) {
    free(a);
    free(wt);
    return GFI_ENOMEM;
  }
  int st = GFI_OK;
  if (ch->useF0) {
    st = f0_ready(s);
    if (!st) memcpy(a, s->F0, 2 * Q * nc * sizeof *a);
  } else {
    st = forward(s, r, ch->ntol, a);
  }
  if (st) {
    free(a);
    free(wt);
    return st;
  }
  rule_tensor(r, NULL, wt);
  for (size_t col = 0; col < nc; col++) {
    for (size_t q = 0; q < Q; q++) {
      a[2 * (col * Q + q)] *= wt[q];
      a[2 * (col * Q + q) + 1] *= wt[q];
    }
  }
  double xabs[3] = {0, 0, 0};
  for (int j = 0; j < s->D; j++) xabs[j] = fmax(fabs(s->dlo[j]), fabs(s->dhi[j]));
  const double rf = round_term(r, xabs);
  for (size_t col = 0; col < nc; col++)
    babs[col] = (r->qerr + BL_NUFFT_SAFETY * ch->ntol + rf) * s->c1[col] * s->K0;
  free(wt);
  *rp = r;
  *ap = a;
  return GFI_OK;
}

int bl_points(const bl_sum *s, const bl_choice *ch, size_t M, const double *q, double *out,
              double *babs) {
  const int D = s->D;
  const size_t nc = s->ncol;
  if (M == 0) return GFI_OK;
  if (M > SIZE_MAX / 2 / (size_t)D / sizeof(double)) return GFI_ENOMEM;
  const bl_rule *r;
  double *a;
  int st = node_coeffs(s, ch, &r, &a, babs);
  if (st) return st;
  double *qc = malloc(M * (size_t)D * sizeof *qc), *f = malloc(2 * M * sizeof *f);
  double *nodes = malloc(r->Q * (size_t)D * sizeof *nodes);
  if (!qc || !f || !nodes) {
    st = GFI_ENOMEM;
    goto out;
  }
  double qabs[3] = {0, 0, 0};
  for (size_t m = 0; m < M; m++)
    for (int j = 0; j < D; j++) {
      qc[m * (size_t)D + j] = q[m * (size_t)D + j] - s->ctr[j];
      qabs[j] = fmax(qabs[j], fabs(qc[m * (size_t)D + j]));
    }
  const double rb = round_term(r, qabs);
  rule_tensor(r, nodes, NULL);
  nufft_opts o;
  nufft_opts_of(s, ch->ntol, &o);
  nufft3_plan *p = NULL;
  st = nufft3_plan_make(&p, D, r->lo, r->hi, +1, M, qc, &o);
  for (size_t col = 0; !st && col < nc; col++) {
    double sa = 0;
    for (size_t k = 0; k < r->Q; k++) sa += hypot(a[2 * (col * r->Q + k)], a[2 * (col * r->Q + k) + 1]);
    babs[col] += (BL_NUFFT_SAFETY * ch->ntol + rb) * sa;
    nufft3_reset(p);
    st = nufft3_add(p, r->Q, nodes, a + 2 * col * r->Q);
    if (!st) st = nufft3_exec(p, f);
    if (!st)
      for (size_t m = 0; m < M; m++) out[m * nc + col] = f[2 * m];
  }
  nufft3_destroy(p);
out:
  free(a);
  free(qc);
  free(f);
  free(nodes);
  return st;
}

/* out (pre x G x post complex) = E (G x Qj complex) applied to in (pre x Qj x post);
 * re_only: the real parts alone (the imaginary ones left 0), for the last
 * product, whose real part is the value. */
typedef struct {
  size_t Qj, post, G;
  const double *E, *in;
  double *out;
  int re_only;
} mode_ctx;

/* Task pk = (p, k): one output row of `post` complex values. */
GFI_CLONES static int mode_row(void *vc, size_t pk, void *ws) {
  const mode_ctx *c = vc;
  (void)ws;
  const size_t Qj = c->Qj, post = c->post, G = c->G;
  size_t p = pk / G, k = pk % G;
  double *o = c->out + 2 * ((p * G + k) * post);
  if (post == 1) {
    /* the last axis: a complex dot product of E's row k with the input row,
     * in four accumulators (qj mod 4) combined in a fixed order, so that the
     * loop is not one chain of dependent adds; the same bits on every
     * machine */
    const double *e = c->E + 2 * k * Qj, *v = c->in + 2 * p * Qj;
    double ar[4] = {0, 0, 0, 0}, ai[4] = {0, 0, 0, 0};
    size_t qj = 0;
#if defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 12)
    {
      /* the four accumulators in the lanes of one vector: lane u takes
       * the same products and sums as ar[u], ai[u] (no contraction in
       * C11), so the same bits */
      typedef double v4d __attribute__((vector_size(32)));
      v4d sr = {0, 0, 0, 0}, si = {0, 0, 0, 0};
      for (; qj + 4 <= Qj; qj += 4) {
        v4d e0, e1, v0, v1;
        memcpy(&e0, e + 2 * qj, sizeof e0);
        memcpy(&e1, e + 2 * qj + 4, sizeof e1);
        memcpy(&v0, v + 2 * qj, sizeof v0);
        memcpy(&v1, v + 2 * qj + 4, sizeof v1);
        const v4d er = __builtin_shufflevector(e0, e1, 0, 2, 4, 6), ei = __builtin_shufflevector(e0, e1, 1, 3, 5, 7);
        const v4d vr = __builtin_shufflevector(v0, v1, 0, 2, 4, 6), vi = __builtin_shufflevector(v0, v1, 1, 3, 5, 7);
        sr += er * vr - ei * vi;
        if (!c->re_only) si += er * vi + ei * vr;
      }
      for (int u = 0; u < 4; u++) ar[u] = sr[u], ai[u] = si[u];
    }
#endif
    for (; qj + 4 <= Qj; qj += 4)
      for (int u = 0; u < 4; u++) {
        double er = e[2 * (qj + u)], ei = e[2 * (qj + u) + 1];
        double vr = v[2 * (qj + u)], vi = v[2 * (qj + u) + 1];
        ar[u] += er * vr - ei * vi;
        if (!c->re_only) ai[u] += er * vi + ei * vr;
      }
    for (int u = 0; qj < Qj; qj++, u++) {
      double er = e[2 * qj], ei = e[2 * qj + 1], vr = v[2 * qj], vi = v[2 * qj + 1];
      ar[u] += er * vr - ei * vi;
      ai[u] += er * vi + ei * vr;
    }
    o[0] = (ar[0] + ar[1]) + (ar[2] + ar[3]);
    o[1] = c->re_only ? 0 : (ai[0] + ai[1]) + (ai[2] + ai[3]);
    return GFI_OK;
  }
  for (size_t t = 0; t < post; t++) o[2 * t] = o[2 * t + 1] = 0;
  for (size_t qj = 0; qj < Qj; qj++) {
    double er = c->E[2 * (k * Qj + qj)], ei = c->E[2 * (k * Qj + qj) + 1];
    const double *v = c->in + 2 * ((p * Qj + qj) * post);
    if (c->re_only) {
      for (size_t t = 0; t < post; t++) o[2 * t] += er * v[2 * t] - ei * v[2 * t + 1];
      continue;
    }
    for (size_t t = 0; t < post; t++) {
      double vr = v[2 * t], vi = v[2 * t + 1];
      o[2 * t] += er * vr - ei * vi;
      o[2 * t + 1] += er * vi + ei * vr;
    }
  }
  return GFI_OK;
}

static void mode_product(size_t pre, size_t Qj, size_t post, size_t G, const double *E,
                         const double *in, double *out, int re_only, int nthreads) {
  mode_ctx c = {Qj, post, G, E, in, out, re_only};
  par_for(pre * G, threads_of(nthreads), 0, mode_row, &c);
}

/* Rows [k0, k0 + nk) of axis j's phase table: E[(k - k0) Qj + q] =
 * e^{i w_q (y_k - ctr_j)}, y_k the grid's k-th point on the axis; rows are
 * independent, so the table has the same bits for any thread count and any
 * block of rows. */
typedef struct {
  const bl_sum *s;
  const bl_rule *r;
  int j;
  double lo, hi;
  size_t n, k0;
  double *E;
} phase_ctx;

static int phase_task(void *vc, size_t kk, void *ws) {
  (void)ws;
  const phase_ctx *c = vc;
  const size_t k = c->k0 + kk, Qj = c->r->n[c->j];
  const double wmax = fmax(fabs(c->r->lo[c->j]), fabs(c->r->hi[c->j]));
  double y = (c->n > 1 ? c->lo + (c->hi - c->lo) * (double)k / (double)(c->n - 1) : c->lo) - c->s->ctr[c->j];
  phase_row(Qj, c->r->w[c->j], y, wmax * fabs(y) <= GFI_SINCOS_SIMD_MAX, c->E + 2 * kk * Qj);
  return GFI_OK;
}

static void phase_rows(const bl_sum *s, const bl_rule *r, int j, double lo, double hi, size_t n, size_t k0,
                       size_t nk, double *E) {
  phase_ctx c = {s, r, j, lo, hi, n, k0, E};
  par_for(nk, nk >= 64 ? threads_of(s->nthreads) : 1, 0, phase_task, &c);
}

/* The grid route's working memory beyond its output: the last product
 * (axis 0) runs over blocks of grid rows whose phase table and result fit
 * this many bytes, so that a 10^7-point 1-D grid does not hold its 10^7 x
 * Q_0 phase table (16 Q_0 bytes per point, ~1 KB) at once. */
#define BL_GRID_BLOCK_BYTES ((size_t)32 << 20)

int bl_grid(const bl_sum *s, const bl_choice *ch, const double *lo, const double *hi,
            const size_t *n, double *out, double *babs) {
  const int D = s->D;
  const size_t nc = s->ncol;
  const bl_rule *r;
  double *a;
  int st = node_coeffs(s, ch, &r, &a, babs);
  if (st) return st;
  /* post: grid points per row of axis 0; t0: the tensor before the last
   * product (r->n[0] x post); big: the largest tensor of the axes D-1 .. 1 */
  size_t dims[3], big = r->Q, post = 1;
  for (int j = 1; j < D; j++) {
    if (post > SIZE_MAX / 4 / sizeof(double) / n[j]) {
      free(a);
      return GFI_ENOMEM;
    }
    post *= n[j];
  }
  for (int j = 0; j < D; j++) dims[j] = r->n[j];
  for (int j = D - 1; j >= 1; j--) {
    dims[j] = n[j];
    size_t t = 1;
    for (int k = 0; k < D; k++) {
      if (dims[k] && t > SIZE_MAX / 4 / sizeof(double) / dims[k] / (nc + 1)) {
        free(a);
        return GFI_ENOMEM;
      }
      t *= dims[k];
    }
    if (t > big) big = t;
  }
  const size_t Q0 = r->n[0], t0 = Q0 * post; /* t0 <= big: the last tensor of the loop above */
  /* rows of axis 0 per block: phase rows (2 Q0 doubles) and results (2 post) */
  size_t blk = BL_GRID_BLOCK_BYTES / (2 * sizeof(double) * (Q0 + post));
  if (blk < 1) blk = 1;
  if (blk > n[0]) blk = n[0];
  double *b1 = D > 1 ? malloc(2 * big * sizeof *b1) : NULL, *b2 = D > 1 ? malloc(2 * big * sizeof *b2) : NULL;
  double *T = D > 1 ? malloc(2 * t0 * nc * sizeof *T) : NULL; /* every column's tensor before axis 0 */
  double *E[3] = {NULL, NULL, NULL}, *res = malloc(2 * blk * post * sizeof *res);
  if ((D > 1 && (!b1 || !b2 || !T)) || !res) {
    st = GFI_ENOMEM;
    goto out;
  }
  for (int j = 0; j < D; j++) {
    size_t rows = j == 0 ? blk : n[j];
    if (rows > SIZE_MAX / 2 / sizeof(double) / r->n[j]) {
      st = GFI_ENOMEM;
      goto out;
    }
    E[j] = malloc(2 * rows * r->n[j] * sizeof *E[j]);
    if (!E[j]) {
      st = GFI_ENOMEM;
      goto out;
    }
    if (j > 0 || blk == n[0]) phase_rows(s, r, j, lo[j], hi[j], n[j], 0, rows, E[j]);
  }
  /* the separable step's rounding (its phases are computed directly) */
  double gabs[3] = {0, 0, 0};
  for (int j = 0; j < D; j++) gabs[j] = fmax(fabs(lo[j] - s->ctr[j]), fabs(hi[j] - s->ctr[j]));
  const double rg = round_term(r, gabs);
  for (size_t col = 0; col < nc; col++) {
    double sa = 0;
    for (size_t k = 0; k < r->Q; k++) sa += hypot(a[2 * (col * r->Q + k)], a[2 * (col * r->Q + k) + 1]);
    babs[col] += rg * sa;
    if (D == 1) continue; /* the coefficients are the tensor before axis 0 */
    memcpy(b1, a + 2 * col * r->Q, 2 * r->Q * sizeof *b1);
    for (int j = 0; j < D; j++) dims[j] = r->n[j];
    double *src = b1, *dst = b2;
    for (int j = D - 1; j >= 1; j--) {
      size_t pr = 1, po = 1;
      for (int k = 0; k < j; k++) pr *= dims[k];
      for (int k = j + 1; k < D; k++) po *= dims[k];
      mode_product(pr, r->n[j], po, n[j], E[j], src, dst, 0, s->nthreads);
      dims[j] = n[j];
      double *t = src;
      src = dst;
      dst = t;
    }
    memcpy(T + 2 * col * t0, src, 2 * t0 * sizeof *T);
  }
  /* the last product, block by block of axis 0's rows: each block's phase
   * rows serve every column */
  for (size_t k0 = 0; k0 < n[0]; k0 += blk) {
    const size_t nk = n[0] - k0 < blk ? n[0] - k0 : blk;
    if (blk < n[0]) phase_rows(s, r, 0, lo[0], hi[0], n[0], k0, nk, E[0]);
    for (size_t col = 0; col < nc; col++) {
      const double *in = D == 1 ? a + 2 * col * r->Q : T + 2 * col * t0;
      mode_product(1, Q0, post, nk, E[0], in, res, 1, s->nthreads);
      double *o = out + k0 * post * nc + col;
      for (size_t g = 0; g < nk * post; g++) o[g * nc] = res[2 * g];
    }
  }
out:
  for (int j = 0; j < 3; j++) free(E[j]);
  free(b1);
  free(b2);
  free(T);
  free(res);
  free(a);
  return st;
}

void bl_plan_info(const bl_sum *s, size_t D, gfi_fast_info *info) {
  bl_choice ch;
  memset(&ch, 0, sizeof ch);
  ch.route = s->have0 ? GFI_METHOD_FAST : GFI_METHOD_DIRECT;
  ch.reason = s->reason0;
  ch.reuse = 1;
  ch.grid = 1;
  ch.useF0 = s->have0;
  ch.ntol = s->ntol;
  bl_info_fill(s, &ch, D, info);
  if (s->have0) info->bound_abs = (s->r0.qerr + BL_NUFFT_SAFETY * s->ntol) * s->c1[0] * s->K0;
}

void bl_info_fill(const bl_sum *s, const bl_choice *ch, size_t D, gfi_fast_info *info) {
  memset(info, 0, sizeof *info);
  info->route = ch->route;
  info->reason = ch->reason;
  info->dim = D;
  info->tol = s ? s->tol : GFI_FAST_TOL_DEFAULT;
  info->cost_direct = ch->cost_direct;
  info->cost_fast = ch->cost_fast;
  if (ch->route != GFI_METHOD_FAST || !s) return;
  if (ch->bin.on) {
    for (int j = 0; j < s->D; j++) info->bins[j] = ch->bin.G[j];
    info->bin_order = ch->bin.order;
    return;
  }
  const bl_rule *r = ch->reuse ? &s->r0 : &ch->rule;
  info->nodes_total = r->Q;
  info->reused = ch->useF0;
  info->nufft_tol = ch->ntol;
  for (int j = 0; j < s->D; j++) {
    info->nodes[j] = r->n[j];
    info->span[j] = r->span[j];
    info->grid_fwd[j] = ch->reuse ? s->gf0[j] : ch->gf[j];
    info->grid_bwd[j] = ch->gb[j];
  }
}

/* ---- grids ---------------------------------------------------------------- */

/* Grid checks of the density and NW grid evaluations. */
int bl_grid_check(size_t D, const double *R, const double *lo, const double *hi,
                      const size_t *n, size_t *total) {
  if (!lo || !hi || !n) return GFI_EINVAL;
  size_t t = 1;
  for (size_t j = 0; j < D; j++) {
    if (n[j] == 0) return GFI_EINVAL;
    if (!isfinite(lo[j]) || !isfinite(hi[j])) return GFI_ENONFINITE;
    if (R && (fabs(R[j] * lo[j]) > ENGINE_PHASE_MAX || fabs(R[j] * hi[j]) > ENGINE_PHASE_MAX))
      return GFI_ERANGE;
    if (t > (((size_t)1 << 52) / D) / n[j]) return GFI_EDIM;
    t *= n[j];
  }
  *total = t;
  return GFI_OK;
}

/* The grid's points (G x D), last axis fastest. */
double *bl_grid_points(size_t D, const double *lo, const double *hi, const size_t *n, size_t G) {
  double *q = malloc(G * D * sizeof *q);
  if (!q) return NULL;
  for (size_t g = 0; g < G; g++) {
    size_t rem = g;
    for (size_t j = D; j-- > 0;) {
      size_t k = rem % n[j];
      rem /= n[j];
      q[g * D + j] = n[j] > 1 ? lo[j] + (hi[j] - lo[j]) * (double)k / (double)(n[j] - 1) : lo[j];
    }
  }
  return q;
}


/* ---- the quadrature helpers, for other rules in frequency ------------------ */

void bl_gauss_legendre(size_t n, double *x, double *w) { gl_rule(n, x, w); }
