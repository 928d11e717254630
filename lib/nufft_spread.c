/* The ES kernel, its Fourier transform by Gauss-Legendre quadrature, and
 * deterministic parallel spreading and interpolation on a periodic grid.
 *
 * Determinism: the points are sorted stably into bins (tiles of the grid,
 * row-major, independent of the thread count); the grid is split into slabs of
 * the first (slowest) axis, each written by one thread only, and every thread
 * visits the points that reach its slab in the sorted order. So each grid cell
 * receives its contributions in the sorted order whatever the number of
 * threads or slabs. Interpolation computes each point's sum in a fixed order;
 * it visits the points in the sorted order only where the grid is too large
 * to stay in cache, which changes speed, never bits. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nufft_internal.h"
#include "gauss_legendre.h"
#include "par.h"
#include "clones.h"
#include "gfi/status.h"
#include "alloc.h"


static double es(const nufft_kernel *k, double z) {
  double s = 1 - z * z;
  return s > 0 ? exp(k->beta * (sqrt(s) - 1)) : 0.0;
}

/* Chebyshev expansion of the kernel on each cell offset, truncated where the
 * tail is below max(tol / 100, 1e-16) (relative to the kernel's peak 1), and
 * converted to monomials in u (computed in long double). */
static void kernel_poly(nufft_kernel *k, double tol) {
  enum { P = NUFFT_MAX_DEG };
  int ns = k->ns;
  long double ch[NUFFT_MAX_WIDTH][P + 1];
  const long double pi = 3.141592653589793238462643383279502884L;
  long double cq[P + 1][P + 1]; /* cos(pi q (j + 1/2) / (P + 1)) */
  for (int q = 0; q <= P; q++)
    for (int j = 0; j <= P; j++) cq[q][j] = cosl(pi * q * (j + 0.5L) / (P + 1));
  for (int m = 0; m < ns; m++) {
    long double f[P + 1];
    for (int j = 0; j <= P; j++) {
      long double u = cq[1][j];
      long double r = 0.5L * (u + 1); /* offset of the point inside its cell */
      long double z = 2 * (r - 0.5L * ns + m) / ns, s = 1 - z * z;
      f[j] = s > 0 ? expl((long double)k->beta * (sqrtl(s) - 1)) : 0;
    }
    for (int q = 0; q <= P; q++) {
      long double c = 0;
      for (int j = 0; j <= P; j++) c += f[j] * cq[q][j];
      ch[m][q] = c * 2 / (P + 1);
    }
    ch[m][0] *= 0.5L;
  }
  double thr = fmax(tol / 100, 1e-16);
  int deg = 0;
  for (int d = 1; d <= P && !deg; d++) {
    long double tail = 0;
    for (int m = 0; m < ns; m++) {
      long double t = 0;
      for (int q = d + 1; q <= P; q++) t += fabsl(ch[m][q]);
      if (t > tail) tail = t;
    }
    if (tail <= thr) deg = d;
  }
  k->deg = deg;
  memset(k->pc, 0, sizeof k->pc);
  if (!deg) return;
  /* monomial coefficients: T_0 = 1, T_1 = u, T_{q+1} = 2 u T_q - T_{q-1} */
  long double T0[P + 2], T1[P + 2], T2[P + 2], a[NUFFT_MAX_WIDTH][P + 1];
  memset(a, 0, sizeof a);
  memset(T0, 0, sizeof T0);
  memset(T1, 0, sizeof T1);
  T0[0] = 1;
  T1[1] = 1;
  for (int q = 0; q <= deg; q++) {
    const long double *T = q == 0 ? T0 : T1;
    for (int m = 0; m < ns; m++)
      for (int i = 0; i <= q; i++) a[m][i] += ch[m][q] * T[i];
    if (q >= 1) {
      for (int i = 0; i <= P; i++) T2[i] = (i ? 2 * T1[i - 1] : 0) - T0[i];
      memcpy(T0, T1, sizeof T0);
      memcpy(T1, T2, sizeof T1);
    }
  }
  for (int q = 0; q <= deg; q++)
    for (int m = 0; m < ns; m++) k->pc[q][m] = (double)a[m][q];
  k->nd = deg / 2 + 1;
  memset(k->pe, 0, sizeof k->pe);
  memset(k->po, 0, sizeof k->po);
  for (int m = 0; m < (ns + 1) / 2; m++)
    for (int i = 0; i < k->nd; i++) {
      k->pe[i][m] = k->pc[2 * i][m];
      if (2 * i + 1 <= deg) k->po[i][m] = k->pc[2 * i + 1][m];
    }
}

/* The kernel is a function of (tol, sigma) alone, and making it costs
 * about 0.4 ms (its polynomials are fitted in long double): the last few
 * made are kept, so that a plan, a grid-size query or a cost estimate does
 * not pay that again. A copy of a cached kernel has the same bits as a
 * fresh one. */
#define KERNEL_CACHE 8
static struct {
  double tol, sigma;
  nufft_kernel k;
} kernel_cache[KERNEL_CACHE];
static int kernel_cache_n, kernel_cache_next;
static pthread_mutex_t kernel_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void kernel_make(double tol, double sigma, nufft_kernel *k);

/* Here, beside the kernel's set-up that reads them, so that the spreader
 * needs nothing of nufft.c (no cycle between the two). */
void nufft_default_opts(nufft_opts *o) {
  if (!o) return;
  o->tol = 1e-12;
  o->nthreads = 0;
  o->upsampfac = 0.0;
  o->max_grid = 0;
  o->real_sources = 0;
}

int nufft_kernel_setup(const nufft_opts *o, nufft_kernel *k) {
  nufft_opts d;
  if (!o) {
    nufft_default_opts(&d);
    o = &d;
  }
  double tol = o->tol, sigma = o->upsampfac == 0 ? 2.0 : o->upsampfac;
  if (!(tol >= 1e-15 && tol < 1)) return GFI_EINVAL;
  if (!(sigma >= 1.25 && sigma <= 4)) return GFI_EINVAL;
  pthread_mutex_lock(&kernel_cache_lock);
  for (int i = 0; i < kernel_cache_n; i++)
    if (kernel_cache[i].tol == tol && kernel_cache[i].sigma == sigma) {
      *k = kernel_cache[i].k;
      pthread_mutex_unlock(&kernel_cache_lock);
      return GFI_OK;
    }
  pthread_mutex_unlock(&kernel_cache_lock);
  kernel_make(tol, sigma, k); /* outside the lock: other threads need not wait */
  pthread_mutex_lock(&kernel_cache_lock);
  int slot = kernel_cache_n < KERNEL_CACHE ? kernel_cache_n++ : kernel_cache_next;
  kernel_cache_next = (slot + 1) % KERNEL_CACHE;
  kernel_cache[slot].tol = tol;
  kernel_cache[slot].sigma = sigma;
  kernel_cache[slot].k = *k;
  pthread_mutex_unlock(&kernel_cache_lock);
  return GFI_OK;
}

static void kernel_make(double tol, double sigma, nufft_kernel *k) {
  int ns;
  double beta;
  /* FINUFFT's widths (which hold the relative l2 error near tol) plus one
   * cell: then the worst case, one source with all outputs compared, stays
   * within 2 tol (measured; tests/test_nufft.c) */
  if (sigma == 2.0) {
    ns = (int)ceil(-log10(tol / 10)) + 1;
    if (ns < 2) ns = 2;
    if (ns > NUFFT_MAX_WIDTH) ns = NUFFT_MAX_WIDTH;
    double bos = ns == 2 ? 2.20 : ns == 3 ? 2.26 : ns == 4 ? 2.38 : 2.30;
    beta = bos * ns;
  } else {
    ns = (int)ceil(-log(tol) / (M_PI * sqrt(1 - 1 / sigma))) + 1;
    if (ns < 2) ns = 2;
    if (ns > NUFFT_MAX_WIDTH) ns = NUFFT_MAX_WIDTH;
    beta = 0.97 * M_PI * (1 - 1 / (2 * sigma)) * ns;
  }
  k->ns = ns;
  k->beta = beta;
  k->sigma = sigma;
  /* phihat(xi) = (ns/2) int_{-1}^{1} phi(z) cos(xi ns z / 2) dz
   *            = ns int_0^{pi/2} e^{beta (cos th - 1)} cos(xi ns sin(th) / 2) cos th dth
   * (z = sin th removes the square-root edge of phi, so Gauss-Legendre in th
   * converges exponentially: 2 (ns + 6) nodes give rounding level) */
  int qh = ns + 6;
  double gx[NUFFT_GL_NODES], gw[NUFFT_GL_NODES];
  gl_rule((size_t)(2 * qh), gx, gw); /* its positive nodes, largest first: gx[2 qh - 1 - i] */
  k->q = 2 * qh;
  for (int i = 0; i < qh; i++)
    for (int sg = 0; sg < 2; sg++) {
      double z = gx[2 * qh - 1 - i], th = M_PI / 4 * (1 + (sg ? -z : z)), wt = M_PI / 4 * gw[2 * qh - 1 - i];
      k->a[2 * i + sg] = ns * wt * exp(beta * (cos(th) - 1)) * cos(th);
      k->b[2 * i + sg] = 0.5 * ns * sin(th);
    }
  kernel_poly(k, tol);
}

double nufft_phihat(const nufft_kernel *k, double xi) {
  double s = 0;
  for (int i = 0; i < k->q; i++) s += k->a[i] * cos(k->b[i] * xi);
  return s;
}

void nufft_phihat_tab_make(const nufft_kernel *k, nufft_phihat_tab *t) {
  const double h = M_PI / (2.0 * NUFFT_PH_PIECES);
  double suma = 0, bmax = 0;
  for (int i = 0; i < k->q; i++) {
    suma += fabs(k->a[i]);
    bmax = fmax(bmax, fabs(k->b[i]));
  }
  /* degree: remainder (bmax h)^(n+1) / (n+1)! <= 1e-17 */
  int deg = 0;
  double r = bmax * h;
  for (deg = 1; deg <= NUFFT_PH_MAXDEG; deg++) {
    r *= bmax * h / (double)(deg + 1);
    if (r <= 1e-17) break;
  }
  t->deg = deg <= NUFFT_PH_MAXDEG ? deg : 0;
  t->h = h;
  if (!t->deg || !(suma > 0)) {
    t->deg = 0;
    return;
  }
  for (int p = 0; p < NUFFT_PH_PIECES; p++) {
    double c = (2 * p + 1) * h;
    for (int n = 0; n <= deg; n++) t->c[p][n] = 0;
    for (int i = 0; i < k->q; i++) {
      double cs = cos(k->b[i] * c), sn = sin(k->b[i] * c), bn = k->a[i];
      /* d^n/dt^n cos(b (c + t)) at 0 = b^n cos(b c + n pi / 2) */
      for (int n = 0; n <= deg; n++) {
        double v = (n & 3) == 0 ? cs : (n & 3) == 1 ? -sn : (n & 3) == 2 ? -cs : sn;
        t->c[p][n] += bn * v;
        bn *= k->b[i] / (double)(n + 1);
      }
    }
  }
}

double nufft_phihat_tab_eval(const nufft_phihat_tab *t, const nufft_kernel *k, double xi) {
  double x = fabs(xi);
  if (!t->deg || !(x <= M_PI)) return nufft_phihat(k, xi);
  return nufft_phihat_tab_poly(t, x);
}

size_t nufft_next235even(size_t m) {
  if (m <= 2) return 2;
  if (m % 2) m++;
  for (size_t n = m; n >= m && n < SIZE_MAX - 2; n += 2) {
    size_t r = n;
    while (r % 2 == 0) r /= 2;
    while (r % 3 == 0) r /= 3;
    while (r % 5 == 0) r /= 5;
    if (r == 1) return n;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */

/* One complex grid value as a vector of two doubles (GCC/Clang vector
 * extension): the fine grid comes from fftw_malloc, 16-byte aligned. */
typedef double cplx __attribute__((vector_size(16), may_alias));

/* The kernel's ns values at offset u from the parity split (pe, po) on H >= nh
 * lanes (H a constant at each call, so the lanes vectorise); ker must hold
 * max(ns, H) values. */
static inline __attribute__((always_inline)) void horner(const nufft_kernel *k, double u,
                                                         double *ker, const int H) {
  double e[NUFFT_MAX_WIDTH / 2], o[NUFFT_MAX_WIDTH / 2], z = u * u;
  const int nd = k->nd, ns = k->ns;
  for (int m = 0; m < H; m++) {
    e[m] = k->pe[nd - 1][m];
    o[m] = k->po[nd - 1][m];
  }
  for (int i = nd - 2; i >= 0; i--)
    for (int m = 0; m < H; m++) {
      e[m] = e[m] * z + k->pe[i][m];
      o[m] = o[m] * z + k->po[i][m];
    }
  for (int m = 0; m < H; m++) ker[m] = e[m] + u * o[m];
  for (int m = 0; m < (ns + 1) / 2; m++) ker[ns - 1 - m] = e[m] - u * o[m];
}

/* horner() for two offsets at once: the chains are independent, so the
 * second fills the first's FMA latency; each lane's operations are those of
 * horner(), so the values are the same bits. */
static inline __attribute__((always_inline)) void horner2(const nufft_kernel *k, double u0,
                                                          double u1, double *k0, double *k1,
                                                          const int H) {
  double e0[NUFFT_MAX_WIDTH / 2], o0[NUFFT_MAX_WIDTH / 2], z0 = u0 * u0;
  double e1[NUFFT_MAX_WIDTH / 2], o1[NUFFT_MAX_WIDTH / 2], z1 = u1 * u1;
  const int nd = k->nd, ns = k->ns;
  for (int m = 0; m < H; m++) {
    e0[m] = e1[m] = k->pe[nd - 1][m];
    o0[m] = o1[m] = k->po[nd - 1][m];
  }
  for (int i = nd - 2; i >= 0; i--)
    for (int m = 0; m < H; m++) {
      e0[m] = e0[m] * z0 + k->pe[i][m];
      o0[m] = o0[m] * z0 + k->po[i][m];
      e1[m] = e1[m] * z1 + k->pe[i][m];
      o1[m] = o1[m] * z1 + k->po[i][m];
    }
  for (int m = 0; m < H; m++) {
    k0[m] = e0[m] + u0 * o0[m];
    k1[m] = e1[m] + u1 * o1[m];
  }
  for (int m = 0; m < (ns + 1) / 2; m++) {
    k0[ns - 1 - m] = e0[m] - u0 * o0[m];
    k1[ns - 1 - m] = e1[m] - u1 * o1[m];
  }
}

/* The first grid index (wrapped into [0, n)) of one point's ns cells on one
 * axis, and the offset x1 of that cell from the point. */
static inline size_t axis_cell(const nufft_kernel *k, double t, size_t n, double *x1) {
  double half = 0.5 * k->ns;
  double i1 = ceil(t - half);
  *x1 = i1 - t; /* in [-ns/2, -ns/2 + 1) */
  long long n_ = (long long)n, i = (long long)i1;
  if (i < 0 || i >= n_) { /* t is in [0, n) for every caller; this is the safe path */
    i %= n_;
    if (i < 0) i += n_;
  }
  return (size_t)i;
}

/* Kernel values and wrapped grid indices of one point on one axis. */
static inline void axis_weights(const nufft_kernel *k, double t, size_t n, double *ker,
                                size_t *idx) {
  int ns = k->ns;
  double half = 0.5 * ns, sc = 2.0 / ns, x1;
  size_t i = axis_cell(k, t, n, &x1);
  if (k->deg) {
    double u = 2 * (x1 + half) - 1; /* in [-1, 1] */
    if (ns <= 4)
      horner(k, u, ker, 2);
    else if (ns <= 8)
      horner(k, u, ker, 4);
    else if (ns <= 12)
      horner(k, u, ker, 6);
    else
      horner(k, u, ker, 8);
  } else {
    for (int m = 0; m < ns; m++) ker[m] = es(k, (x1 + m) * sc);
  }
  for (int m = 0; m < ns; m++) {
    idx[m] = i;
    if (++i == n) i = 0;
  }
}

/* Kernel values and wrapped indices of two (point, axis) pairs: two points on
 * one axis, or two axes of one point. With a polynomial kernel the two Horner
 * chains run together; the values are the bits of two axis_weights calls.
 * full 0: only ia[0] and ib[0] are set (with a polynomial kernel). */
static inline __attribute__((always_inline)) void axis_weights_pair(
    const nufft_kernel *k, double ta, size_t na, double tb, size_t nb, double *ka, size_t *ia,
    double *kb, size_t *ib, const int full) {
  if (!k->deg) {
    axis_weights(k, ta, na, ka, ia);
    axis_weights(k, tb, nb, kb, ib);
    return;
  }
  int ns = k->ns;
  double half = 0.5 * ns, xa, xb;
  size_t i = axis_cell(k, ta, na, &xa), j = axis_cell(k, tb, nb, &xb);
  double ua = 2 * (xa + half) - 1, ub = 2 * (xb + half) - 1;
  if (ns <= 4)
    horner2(k, ua, ub, ka, kb, 2);
  else if (ns <= 8)
    horner2(k, ua, ub, ka, kb, 4);
  else if (ns <= 12)
    horner2(k, ua, ub, ka, kb, 6);
  else
    horner2(k, ua, ub, ka, kb, 8);
  if (!full) { /* the first cells only */
    ia[0] = i;
    ib[0] = j;
    return;
  }
  for (int m = 0; m < ns; m++) {
    ia[m] = i;
    if (++i == na) i = 0;
  }
  for (int m = 0; m < ns; m++) {
    ib[m] = j;
    if (++j == nb) j = 0;
  }
}

/* Bin tiles per axis, by dimension (a bin is a tile of the grid). */
static size_t bin_width(int D) { return D == 1 ? 256 : D == 2 ? 32 : 16; }

typedef struct binning {
  size_t nb[3], nbins, bw[3];
  const size_t *perm;  /* sorted order of the points */
  const size_t *start; /* nbins + 1: start of each bin in perm */
} binning;

void nufft_work_free(nufft_work *w) {
  if (!w) return;
  free(w->key);
  free(w->perm);
  free(w->start);
  free(w->pads);
  free(w->hist);
  memset(w, 0, sizeof *w);
}

static size_t wrap_index(double t, size_t n) {
  /* floor of t wrapped into [0, n) */
  if (t >= 0 && t < (double)n) return (size_t)t;
  double f = floor(t);
  double m = fmod(f, (double)n);
  if (m < 0) m += (double)n;
  size_t i = (size_t)m;
  return i >= n ? 0 : i;
}

#define PT_BLOCK ((size_t)1024) /* points per task where each point is on its own */

/* Bin keys of the points, PT_BLOCK points per task. */
typedef struct {
  int D;
  const size_t *nf;
  size_t N;
  const double *t;
  const size_t *nb, *bw;
  size_t *key;
} key_ctx;

static int key_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const key_ctx *c = vc;
  const int D = c->D;
  size_t j0 = q * PT_BLOCK, j1 = c->N - j0 < PT_BLOCK ? c->N : j0 + PT_BLOCK;
  for (size_t j = j0; j < j1; j++) {
    size_t bi = 0;
    for (int d = 0; d < D; d++)
      bi = bi * c->nb[d] + wrap_index(c->t[j * D + d], c->nf[d]) / c->bw[d];
    c->key[j] = bi;
  }
  return GFI_OK;
}

/* The stable counting sort in nseg contiguous segments of the points (one
 * per thread): each segment counts its keys, and after the offsets are
 * known scatters its points in input order. The stable order is unique, so
 * perm is the same whatever the number of segments. */
typedef struct {
  size_t N, nseg, nbins;
  const size_t *key;
  size_t *perm, *hist; /* hist: nseg x nbins */
} sort_ctx;

static int count_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const sort_ctx *c = vc;
  size_t j0 = c->N / c->nseg * q, j1 = q + 1 == c->nseg ? c->N : c->N / c->nseg * (q + 1);
  size_t *h = c->hist + q * c->nbins;
  memset(h, 0, c->nbins * sizeof *h);
  for (size_t j = j0; j < j1; j++) h[c->key[j]]++;
  return GFI_OK;
}

static int scatter_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const sort_ctx *c = vc;
  size_t j0 = c->N / c->nseg * q, j1 = q + 1 == c->nseg ? c->N : c->N / c->nseg * (q + 1);
  size_t *h = c->hist + q * c->nbins;
  for (size_t j = j0; j < j1; j++) c->perm[h[c->key[j]]++] = j;
  return GFI_OK;
}

/* Stable counting sort of the points by bin (the order is unique, so it
 * does not depend on how the bin keys were computed in parallel). */
static int binning_make(binning *b, nufft_work *w, int D, const size_t *nf, size_t N,
                        const double *t, int nt) {
  memset(b, 0, sizeof *b);
  b->nbins = 1;
  for (int d = 0; d < D; d++) {
    b->bw[d] = bin_width(D);
    if (d == 0) {
      /* thinner on the slab axis, so that small grids still give each thread
       * a slab: about 32 bin rows (depends on the grid only, never on the
       * thread count) */
      size_t w0 = nf[0] / 32, lo = D == 1 ? 8 : 4;
      if (w0 < lo) w0 = lo;
      if (w0 < b->bw[0]) b->bw[0] = w0;
    }
    b->nb[d] = (nf[d] + b->bw[d] - 1) / b->bw[d];
    b->nbins *= b->nb[d]; /* <= total grid size: no overflow */
  }
  if (N > SIZE_MAX / sizeof(size_t) || b->nbins > SIZE_MAX / sizeof(size_t) - 1)
    return GFI_ENOMEM;
  if (w->n < N) {
    free(w->key);
    free(w->perm);
    w->key = gfi_malloc2(N, sizeof(size_t));
    w->perm = gfi_malloc2(N, sizeof(size_t));
    w->n = w->key && w->perm ? N : 0;
    if (!w->n) return GFI_ENOMEM;
  }
  if (w->nb < b->nbins + 1) {
    free(w->start);
    w->start = gfi_malloc2((b->nbins + 1), sizeof(size_t));
    w->nb = w->start ? b->nbins + 1 : 0;
    if (!w->nb) return GFI_ENOMEM;
  }
  size_t *key = w->key, *perm = w->perm, *start = w->start;
  const size_t *nb = b->nb, *bw = b->bw;
  key_ctx kc = {D, nf, N, t, nb, bw, key};
  (void)par_for((N + PT_BLOCK - 1) / PT_BLOCK, N >= 16384 ? nt : 1, 0, key_task, &kc); /* cannot fail */
  b->perm = perm;
  b->start = start;
  /* the parallel sort where its counts are no larger than the keys */
  size_t nseg = (size_t)(nt > 1 ? nt : 1), hn;
  if (nseg > 1 && N >= 65536 && !gfi_size_prod(&hn, nseg, b->nbins, 1, 1) && hn <= N) {
    if (w->nhist < hn) {
      free(w->hist);
      w->hist = gfi_malloc2(hn, sizeof(size_t));
      w->nhist = w->hist ? hn : 0;
    }
    if (w->hist) {
      sort_ctx sc = {N, nseg, b->nbins, key, perm, w->hist};
      (void)par_for(nseg, nt, 0, count_task, &sc); /* cannot fail */
      /* bin b of segment s starts after bins < b of every segment and bin b
       * of the segments before s: the offsets of the serial stable sort */
      size_t run = 0;
      for (size_t i = 0; i < b->nbins; i++) {
        start[i] = run;
        for (size_t q = 0; q < nseg; q++) {
          size_t n = w->hist[q * b->nbins + i];
          w->hist[q * b->nbins + i] = run;
          run += n;
        }
      }
      start[b->nbins] = run;
      (void)par_for(nseg, nt, 0, scatter_task, &sc); /* cannot fail */
      return GFI_OK;
    }
  }
  memset(start, 0, (b->nbins + 1) * sizeof(size_t));
  for (size_t j = 0; j < N; j++) start[key[j] + 1]++;
  for (size_t i = 0; i < b->nbins; i++) start[i + 1] += start[i];
  /* stable scatter, with start[] as running offsets, then shifted back */
  for (size_t j = 0; j < N; j++) perm[start[key[j]]++] = j;
  memmove(start + 1, start, b->nbins * sizeof(size_t));
  start[0] = 0;
  return GFI_OK;
}

enum { SPREAD_AHEAD = 16 }; /* points fetched ahead in spread_bins */

/* Spread the sorted points of one row of bins (axis-0 bin b0) into the rows
 * [r0, r1) of the grid: complex strengths onto the complex grid, or (real)
 * real strengths c (N doubles) onto a real grid, one double per cell: the
 * same order of sums, half the arithmetic, and contiguous cells on the last
 * axis that vectorise. real is a constant at each call (spread_bins). */
static inline __attribute__((always_inline)) void spread_bins_impl(
    const nufft_kernel *k, int D, const size_t *nf, const binning *b, size_t b0, const double *t,
    const double *c, double *grid, size_t r0, size_t r1, const int real) {
  int ns = k->ns;
  size_t per0 = b->nbins / b->nb[0];
  size_t lo = b->start[b0 * per0], hi = b->start[(b0 + 1) * per0];
  double k0[NUFFT_MAX_WIDTH], k1[NUFFT_MAX_WIDTH], k2[NUFFT_MAX_WIDTH];
  size_t i0[NUFFT_MAX_WIDTH], i1[NUFFT_MAX_WIDTH], i2[NUFFT_MAX_WIDTH];
  const size_t cw = real ? 1 : 2; /* doubles per strength and per cell */
  for (size_t p = lo; p < hi; p++) {
    size_t j = b->perm[p];
    /* the points are visited in bin order, not memory order: fetch ahead
     * (the loads, not the arithmetic, bound this loop at large N) */
    if (p + SPREAD_AHEAD < hi) {
      size_t ja = b->perm[p + SPREAD_AHEAD];
      __builtin_prefetch(t + ja * (size_t)D);
      __builtin_prefetch(c + cw * ja);
    }
    const double *tj = t + j * (size_t)D;
    double cr = c[cw * j], ci = real ? 0.0 : c[2 * j + 1];
    if (D == 1)
      axis_weights(k, tj[0], nf[0], k0, i0);
    else
      axis_weights_pair(k, tj[0], nf[0], tj[1], nf[1], k0, i0, k1, i1, 1);
    int any = 0;
    for (int m = 0; m < ns; m++) any |= (i0[m] >= r0 && i0[m] < r1);
    if (!any) continue;
    if (D == 1) {
      for (int m = 0; m < ns; m++) {
        if (i0[m] < r0 || i0[m] >= r1) continue;
        double *g = grid + cw * i0[m];
        g[0] += cr * k0[m];
        if (!real) g[1] += ci * k0[m];
      }
      continue;
    }
    if (D == 2) {
      /* the window does not wrap on the last axis: contiguous cells */
      int c1 = i1[0] + (size_t)ns <= nf[1];
      for (int m = 0; m < ns; m++) {
        if (i0[m] < r0 || i0[m] >= r1) continue;
        double vr = cr * k0[m], vi = ci * k0[m];
        if (real) {
          double *row = grid + i0[m] * nf[1];
          if (c1) {
            double *g = row + i1[0];
            for (int m1 = 0; m1 < ns; m1++) g[m1] += vr * k1[m1];
          } else {
            for (int m1 = 0; m1 < ns; m1++) row[i1[m1]] += vr * k1[m1];
          }
          continue;
        }
        cplx *row = (cplx *)grid + i0[m] * nf[1], v = {vr, vi};
        if (c1) {
          cplx *g = row + i1[0];
          for (int m1 = 0; m1 < ns; m1++) g[m1] += v * k1[m1];
        } else {
          for (int m1 = 0; m1 < ns; m1++) row[i1[m1]] += v * k1[m1];
        }
      }
      continue;
    }
    axis_weights(k, tj[2], nf[2], k2, i2);
    int c2 = i2[0] + (size_t)ns <= nf[2];
    for (int m = 0; m < ns; m++) {
      if (i0[m] < r0 || i0[m] >= r1) continue;
      double vr = cr * k0[m], vi = ci * k0[m];
      for (int m1 = 0; m1 < ns; m1++) {
        double wr = vr * k1[m1], wi = vi * k1[m1];
        size_t off = (i0[m] * nf[1] + i1[m1]) * nf[2];
        if (real) {
          double *row = grid + off;
          if (c2) {
            double *g = row + i2[0];
            for (int m2 = 0; m2 < ns; m2++) g[m2] += wr * k2[m2];
          } else {
            for (int m2 = 0; m2 < ns; m2++) row[i2[m2]] += wr * k2[m2];
          }
          continue;
        }
        cplx *row = (cplx *)grid + off, v = {wr, wi};
        if (c2) {
          cplx *g = row + i2[0];
          for (int m2 = 0; m2 < ns; m2++) g[m2] += v * k2[m2];
        } else {
          for (int m2 = 0; m2 < ns; m2++) row[i2[m2]] += v * k2[m2];
        }
      }
    }
  }
}

GFI_CLONES static void spread_bins(const nufft_kernel *k, int D, const size_t *nf, const binning *b,
                                   size_t b0, const double *t, const double *c, double *grid, size_t r0,
                                   size_t r1, int real) {
  if (real)
    spread_bins_impl(k, D, nf, b, b0, t, c, grid, r0, r1, 1);
  else
    spread_bins_impl(k, D, nf, b, b0, t, c, grid, r0, r1, 0);
}

/* Does a bin row b0 (its points' kernels reach rows b0*bw - ns .. (b0+1)*bw + ns,
 * cyclically) touch the slab [r0, r1)? */
static int bin_touches(size_t b0, size_t bw, int ns, size_t n, size_t r0, size_t r1) {
  long long lo = (long long)(b0 * bw) - ns - 1, hi = (long long)((b0 + 1) * bw) + ns + 1;
  long long n_ = (long long)n;
  if (hi - lo >= n_) return 1;
  for (long long s = -n_; s <= n_; s += n_)
    if (lo + s < (long long)r1 && hi + s > (long long)r0) return 1;
  return 0;
}

/* One task per slab of grid rows: it adds every bin row that reaches the
 * slab, in bin order, into the slab's rows only. */
typedef struct {
  const nufft_kernel *k;
  int D;
  const size_t *nf;
  const binning *b;
  const double *t, *c;
  double *grid;
  const size_t *sb;
  int real;
} slab_ctx;

static int slab_task(void *vc, size_t s, void *ws) {
  (void)ws;
  const slab_ctx *x = vc;
  size_t bw = x->b->bw[0], nb0 = x->b->nb[0];
  size_t r0 = x->sb[s] * bw, r1 = x->sb[s + 1] * bw;
  if (r1 > x->nf[0]) r1 = x->nf[0];
  if (r0 >= r1) return GFI_OK;
  for (size_t b0 = 0; b0 < nb0; b0++)
    if (bin_touches(b0, bw, x->k->ns, x->nf[0], r0, r1))
      spread_bins(x->k, x->D, x->nf, x->b, b0, x->t, x->c, x->grid, r0, r1, x->real);
  return GFI_OK;
}

/* Small 1-D grids need no sort: the whole grid stays in L1/L2. The points
 * are cut into blocks of SPREAD1_BLOCK (a function of N only); each block
 * spreads in input order into its own copy of the grid padded by ns cells
 * (no wrap inside the loop), and the copies are added into the grid in block
 * order, the padding folded back: the same bits for any thread count. */
#define SPREAD1_MAX ((size_t)4096)
#define SPREAD1_BLOCK ((size_t)16384)

typedef struct {
  const nufft_kernel *k;
  size_t nf, N, plen;
  const double *t, *c;
  double *pads;
  int real; /* c: N real strengths, pads and grid one double per cell */
} spread1_ctx;

/* Adds c (real: one double; else re, im) times the ns kernel values into the
 * padded grid g from cell i. */
static inline __attribute__((always_inline)) void add1(double *g, size_t i, const double *c,
                                                       const double *ker, int ns, int real) {
  if (real) {
    double *gp = g + i;
    for (int m = 0; m < ns; m++) gp[m] += c[0] * ker[m];
    return;
  }
  double *gp = g + 2 * i;
  for (int m = 0; m < ns; m++) {
    gp[2 * m] += c[0] * ker[m];
    gp[2 * m + 1] += c[1] * ker[m];
  }
}

static inline __attribute__((always_inline)) void spread1_impl(const spread1_ctx *x, double *g,
                                                               size_t j0, size_t j1, int real) {
  const int ns = x->k->ns, cw = real ? 1 : 2;
  double ker[NUFFT_MAX_WIDTH], k1[NUFFT_MAX_WIDTH];
  size_t idx[NUFFT_MAX_WIDTH], i1[NUFFT_MAX_WIDTH];
  size_t j = j0;
  /* Real strengths: two points at a time, added in their order (their Horner
   * chains interleave). Complex ones are bound by the adds, not the
   * kernel, and pairing measured slower there. */
  if (real)
    for (; j + 1 < j1; j += 2) {
      axis_weights_pair(x->k, x->t[j], x->nf, x->t[j + 1], x->nf, ker, idx, k1, i1, 0);
      add1(g, idx[0], x->c + j, ker, ns, 1);
      add1(g, i1[0], x->c + j + 1, k1, ns, 1);
    }
  for (; j < j1; j++) {
    axis_weights(x->k, x->t[j], x->nf, ker, idx);
    add1(g, idx[0], x->c + cw * j, ker, ns, real);
  }
}

GFI_CLONES static int spread1_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const spread1_ctx *x = vc;
  const size_t j0 = q * SPREAD1_BLOCK, j1 = x->N - j0 < SPREAD1_BLOCK ? x->N : j0 + SPREAD1_BLOCK;
  const int cw = x->real ? 1 : 2;
  double *g = x->pads + q * (size_t)cw * x->plen;
  memset(g, 0, (size_t)cw * x->plen * sizeof *g);
  if (x->real)
    spread1_impl(x, g, j0, j1, 1);
  else
    spread1_impl(x, g, j0, j1, 0);
  return GFI_OK;
}

static int spread_1d_small(const nufft_kernel *k, size_t nf, size_t N, const double *t, const double *c,
                           double *grid, int nt, int real, nufft_work *w) {
  const size_t nb = (N + SPREAD1_BLOCK - 1) / SPREAD1_BLOCK, plen = nf + (size_t)k->ns;
  size_t need;
  if (gfi_size_prod(&need, nb, (real ? 1 : 2), plen, 1)) return GFI_ENOMEM;
  double *pads;
  if (w) { /* kept in the scratch: a plan's later calls fault no new pages */
    if (w->npads < need) {
      free(w->pads);
      w->pads = gfi_malloc2(need, sizeof *pads);
      w->npads = w->pads ? need : 0;
      if (!w->pads) return GFI_ENOMEM;
    }
    pads = w->pads;
  } else {
    pads = gfi_malloc2(need, sizeof *pads);
    if (!pads) return GFI_ENOMEM;
  }
  spread1_ctx x = {k, nf, N, plen, t, c, pads, real};
  (void)par_for(nb, nb > 1 ? nt : 1, 1, spread1_task, &x); /* cannot fail */
  if (real) {
    for (size_t q = 0; q < nb; q++) {
      const double *g = pads + q * plen;
      for (size_t i = 0; i < plen; i++) grid[i < nf ? i : i - nf] += g[i];
    }
    if (!w) free(pads);
    return GFI_OK;
  }
  for (size_t q = 0; q < nb; q++) {
    const double *g = pads + q * 2 * plen;
    for (size_t i = 0; i < plen; i++) {
      size_t cell = i < nf ? i : i - nf;
      grid[2 * cell] += g[2 * i];
      grid[2 * cell + 1] += g[2 * i + 1];
    }
  }
  if (!w) free(pads);
  return GFI_OK;
}

/* The small 1-D grid's spreading for real strengths whose grid coordinates
 * the caller computes block by block (prep), for a whole stream of N points
 * at once: each task computes one block's coordinates into its thread's
 * workspace and spreads them into the block's copy of the grid (one parallel
 * region, no barrier between the two steps), then the copies are added into
 * the grid cell by cell in block order. Blocks start at multiples of
 * SPREAD1_BLOCK, the copies are added in the same order per cell as
 * spread_1d_small adds them chunk after chunk (the chunks being multiples
 * of SPREAD1_BLOCK), so the bits are those of prep followed by
 * nufft_spread_real in chunks; at most SPREAD1_WINDOW blocks are in flight
 * (their copies: 64 (nf + ns) doubles). Two parallel regions per 2^20
 * points where the chunked route has two per 2^18. */
#define SPREAD1_WINDOW ((size_t)64)
#define FOLD_CELLS ((size_t)1024)

typedef struct {
  const nufft_kernel *k;
  size_t nf, N, plen, q0; /* q0: the window's first block */
  nufft_prep1 prep;
  void *pctx;
  const double *c; /* strengths, or NULL: every one cval */
  double cval;
  double *pads;
} stream1_ctx;

#define STREAM1_SUB ((size_t)1024) /* points prepared at a time (even: the pairs stay) */
typedef struct {
  double t[STREAM1_SUB], c[STREAM1_SUB];
} stream1_ws;

GFI_CLONES static int stream1_task(void *vc, size_t q, void *vws) {
  const stream1_ctx *x = vc;
  stream1_ws *ws = vws;
  const size_t b = x->q0 + q, j0 = b * SPREAD1_BLOCK;
  const size_t n = x->N - j0 < SPREAD1_BLOCK ? x->N - j0 : SPREAD1_BLOCK;
  double *g = x->pads + q * x->plen;
  memset(g, 0, x->plen * sizeof *g);
  /* the block's points in order, STREAM1_SUB at a time: the same sums into
   * g as one pass over the block */
  for (size_t a = 0; a < n; a += STREAM1_SUB) {
    const size_t m = n - a < STREAM1_SUB ? n - a : STREAM1_SUB;
    x->prep(x->pctx, j0 + a, j0 + a + m, ws->t);
    for (size_t j = 0; j < m; j++) ws->c[j] = x->c ? x->c[j0 + a + j] : x->cval;
    spread1_ctx sx = {x->k, x->nf, m, x->plen, ws->t, ws->c, NULL, 1};
    spread1_impl(&sx, g, 0, m, 1);
  }
  return GFI_OK;
}

typedef struct {
  size_t nf, plen, nb;
  const double *pads;
  double *grid;
} fold1_ctx;

static int fold1_task(void *vc, size_t r, void *ws) {
  (void)ws;
  const fold1_ctx *x = vc;
  const size_t i0 = r * FOLD_CELLS, i1 = x->nf - i0 < FOLD_CELLS ? x->nf : i0 + FOLD_CELLS;
  const size_t wrap = x->plen - x->nf; /* cells ns..: padding folded onto 0.. */
  for (size_t q = 0; q < x->nb; q++) {
    const double *g = x->pads + q * x->plen;
    for (size_t i = i0; i < i1; i++) {
      double v = x->grid[i] + g[i];
      if (i < wrap) v += g[i + x->nf];
      x->grid[i] = v;
    }
  }
  return GFI_OK;
}

int nufft_spread_real_1d_stream(const nufft_kernel *k, size_t nf, size_t N, nufft_prep1 prep,
                                void *pctx, const double *c, double cval, double *grid,
                                int nthreads, nufft_work *w) {
  if (N == 0) return GFI_OK;
  const size_t plen = nf + (size_t)k->ns, nball = (N + SPREAD1_BLOCK - 1) / SPREAD1_BLOCK;
  const size_t win = nball < SPREAD1_WINDOW ? nball : SPREAD1_WINDOW;
  size_t need;
  if (gfi_size_prod(&need, win, plen, 1, 1)) return GFI_ENOMEM;
  if (w->npads < need) {
    free(w->pads);
    w->pads = gfi_malloc2(need, sizeof *w->pads);
    w->npads = w->pads ? need : 0;
    if (!w->pads) return GFI_ENOMEM;
  }
  int nt = par_threads(nthreads);
  if (N < 4096) nt = 1;
  for (size_t q0 = 0; q0 < nball; q0 += win) {
    const size_t nb = nball - q0 < win ? nball - q0 : win;
    stream1_ctx x = {k, nf, N, plen, q0, prep, pctx, c, cval, w->pads};
    par_spec sp = {nb, nb > 1 ? nt : 1, sizeof(stream1_ws), 1, NULL, NULL};
    int st = par_run(&sp, stream1_task, &x);
    if (st) return st;
    fold1_ctx f = {nf, plen, nb, w->pads, grid};
    const size_t nr = (nf + FOLD_CELLS - 1) / FOLD_CELLS;
    (void)par_for(nr, nr > 1 ? nt : 1, 0, fold1_task, &f); /* cannot fail */
  }
  return GFI_OK;
}

int nufft_spread_stream_ok(const nufft_kernel *k, int D, const size_t *nf) {
  return D == 1 && nf[0] <= SPREAD1_MAX && (size_t)k->ns <= nf[0];
}

static int spread_any(const nufft_kernel *k, int D, const size_t *nf, size_t N, const double *t,
                      const double *c, double *grid, int nthreads, nufft_work *w, int real) {
  if (N == 0) return GFI_OK;
  int nt = par_threads(nthreads);
  if (N < 4096) nt = 1;
  if (D == 1 && nf[0] <= SPREAD1_MAX && (size_t)k->ns <= nf[0])
    return spread_1d_small(k, nf[0], N, t, c, grid, nt, real, w);
  nufft_work own = {0};
  binning b;
  int st = binning_make(&b, w ? w : &own, D, nf, N, t, nt);
  if (st) {
    nufft_work_free(&own);
    return st;
  }
  size_t nb0 = b.nb[0], per0 = b.nbins / nb0;
  size_t nslab = (size_t)nt < nb0 ? (size_t)nt : nb0;
  if (nslab < 1) nslab = 1;
  /* slab s owns the bin rows [sb[s], sb[s+1]), balanced by point count; the
   * partition changes only who writes, never the order of the sums */
  size_t sb[1025];
  if (nslab > 1024) nslab = 1024;
  sb[0] = 0;
  size_t r = 0;
  for (size_t s = 1; s < nslab; s++) {
    size_t target = N / nslab * s;
    while (r < nb0 && b.start[(r + 1) * per0] <= target) r++;
    if (r < sb[s - 1]) r = sb[s - 1];
    sb[s] = r;
  }
  sb[nslab] = nb0;
  slab_ctx sc = {k, D, nf, &b, t, c, grid, sb, real};
  (void)par_for(nslab, nslab > 1 ? nt : 1, 1, slab_task, &sc); /* cannot fail */
  nufft_work_free(&own);
  return GFI_OK;
}

int nufft_spread(const nufft_kernel *k, int D, const size_t *nf, size_t N, const double *t,
                 const double *c, double *grid, int nthreads, nufft_work *w) {
  return spread_any(k, D, nf, N, t, c, grid, nthreads, w, 0);
}

int nufft_spread_real(const nufft_kernel *k, int D, const size_t *nf, size_t N, const double *t,
                      const double *c, double *grid, int nthreads, nufft_work *w) {
  return spread_any(k, D, nf, N, t, c, grid, nthreads, w, 1);
}

/* One 1-D value from its kernel values and cells. */
static inline void interp1_sum(int ns, const double *k0, const size_t *i0, const double *grid,
                               double *cj) {
  double re = 0, im = 0;
  for (int m = 0; m < ns; m++) {
    const double *g = grid + 2 * i0[m];
    re += g[0] * k0[m];
    im += g[1] * k0[m];
  }
  cj[0] = re;
  cj[1] = im;
}

static void interp_point(const nufft_kernel *k, int D, const size_t *nf, const double *tj,
                         double *cj, const double *grid) {
  int ns = k->ns;
  double k0[NUFFT_MAX_WIDTH], k1[NUFFT_MAX_WIDTH], k2[NUFFT_MAX_WIDTH];
  size_t i0[NUFFT_MAX_WIDTH], i1[NUFFT_MAX_WIDTH], i2[NUFFT_MAX_WIDTH];
  double re = 0, im = 0;
  if (D == 1)
    axis_weights(k, tj[0], nf[0], k0, i0);
  else
    axis_weights_pair(k, tj[0], nf[0], tj[1], nf[1], k0, i0, k1, i1, 1);
  if (D == 1) {
    interp1_sum(ns, k0, i0, grid, cj);
    return;
  } else if (D == 2) {
    for (int m = 0; m < ns; m++) {
      const double *row = grid + 2 * i0[m] * nf[1];
      double sr = 0, si = 0;
      for (int m1 = 0; m1 < ns; m1++) {
        const double *g = row + 2 * i1[m1];
        sr += g[0] * k1[m1];
        si += g[1] * k1[m1];
      }
      re += sr * k0[m];
      im += si * k0[m];
    }
  } else {
    axis_weights(k, tj[2], nf[2], k2, i2);
    for (int m = 0; m < ns; m++) {
      double sr = 0, si = 0;
      for (int m1 = 0; m1 < ns; m1++) {
        const double *row = grid + 2 * (i0[m] * nf[1] + i1[m1]) * nf[2];
        double ur = 0, ui = 0;
        for (int m2 = 0; m2 < ns; m2++) {
          const double *g = row + 2 * i2[m2];
          ur += g[0] * k2[m2];
          ui += g[1] * k2[m2];
        }
        sr += ur * k1[m1];
        si += ui * k1[m1];
      }
      re += sr * k0[m];
      im += si * k0[m];
    }
  }
  cj[0] = re;
  cj[1] = im;
}

/* PT_BLOCK points per task, in sorted order (perm) or, on a grid small
 * enough to stay in cache, in input order (perm NULL); each point's value is
 * its own sum, so the order changes no bit. */
#define INTERP_UNSORTED_MAX ((size_t)1 << 18) /* cells: 4 MiB of grid */
typedef struct {
  const nufft_kernel *k;
  int D;
  const size_t *nf;
  size_t N;
  const double *t;
  double *c;
  const double *grid;
  const size_t *perm;
} interp_ctx;

GFI_CLONES static int interp_task(void *vc, size_t q, void *ws) {
  (void)ws;
  const interp_ctx *x = vc;
  size_t p0 = q * PT_BLOCK, p1 = x->N - p0 < PT_BLOCK ? x->N : p0 + PT_BLOCK, p = p0;
  if (x->D == 1) /* two points at a time (their Horner chains interleave) */
    for (double ka[NUFFT_MAX_WIDTH], kb[NUFFT_MAX_WIDTH]; p + 1 < p1; p += 2) {
      size_t ja = x->perm ? x->perm[p] : p, jb = x->perm ? x->perm[p + 1] : p + 1;
      size_t ia[NUFFT_MAX_WIDTH], ib[NUFFT_MAX_WIDTH];
      axis_weights_pair(x->k, x->t[ja], x->nf[0], x->t[jb], x->nf[0], ka, ia, kb, ib, 1);
      interp1_sum(x->k->ns, ka, ia, x->grid, x->c + 2 * ja);
      interp1_sum(x->k->ns, kb, ib, x->grid, x->c + 2 * jb);
    }
  for (; p < p1; p++) {
    size_t j = x->perm ? x->perm[p] : p;
    interp_point(x->k, x->D, x->nf, x->t + j * (size_t)x->D, x->c + 2 * j, x->grid);
  }
  return GFI_OK;
}

int nufft_interp(const nufft_kernel *k, int D, const size_t *nf, size_t N, const double *t,
                 double *c, const double *grid, int nthreads, nufft_work *w) {
  if (N == 0) return GFI_OK;
  int nt = par_threads(nthreads);
  if (N < 4096) nt = 1;
  size_t cells = 1;
  for (int d = 0; d < D; d++) cells = cells < SIZE_MAX / nf[d] ? cells * nf[d] : SIZE_MAX;
  if (cells <= INTERP_UNSORTED_MAX) { /* the grid stays in cache: no sort */
    interp_ctx ic = {k, D, nf, N, t, c, grid, NULL};
    (void)par_for((N + PT_BLOCK - 1) / PT_BLOCK, nt, 0, interp_task, &ic); /* cannot fail */
    return GFI_OK;
  }
  nufft_work own = {0};
  binning b;
  int st = binning_make(&b, w ? w : &own, D, nf, N, t, nt);
  if (st) {
    nufft_work_free(&own);
    return st;
  }
  interp_ctx ic = {k, D, nf, N, t, c, grid, b.perm};
  (void)par_for((N + PT_BLOCK - 1) / PT_BLOCK, nt, 0, interp_task, &ic); /* cannot fail */
  nufft_work_free(&own);
  return GFI_OK;
}
