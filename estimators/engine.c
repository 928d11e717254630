/* Shared layout, tables and task driver of the density and NW engines. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include "chol.h"
#include "engine.h"
#include "par.h"
#include "gfi/status.h"
#include "alloc.h"
#include "gfi/validate.h"
#include "digest.h"
#include "clones.h"

/* Points per inner block (SIMD loops run over a block held in L1). */
#define DEFAULT_BLOCK 256
/* Queries per task: the block of data is reused across them. */
#define DEFAULT_TILE 16
/* Data points per super-chunk at least, and at most this many chunks. */
#define SUPER_MIN 16384
#define SUPER_MAX 64

void engine_layout_init(engine_layout *L, size_t N, const gfi_opts *opts) {
  gfi_opts o;
  gfi_default_opts(&o);
  if (opts) o = *opts;
  L->N = N;
  L->nthreads = gfi_threads_resolve(&o);
  L->dblock = o.data_block ? o.data_block : DEFAULT_BLOCK;
  L->qtile = o.query_tile ? o.query_tile : DEFAULT_TILE;
  size_t nblocks = (N + L->dblock - 1) / L->dblock;
  L->Np = nblocks * L->dblock;
  size_t ns = (N + SUPER_MIN - 1) / SUPER_MIN;
  L->nsuper = ns < 1 ? 1 : (ns > SUPER_MAX ? SUPER_MAX : ns);
  if (L->nsuper > nblocks) L->nsuper = nblocks;
}

int engine_check_phase(size_t D, const double *R, size_t N, const double *x) {
  int bad = 0;
  if (D == 1) {
    double m = 0; /* |R x| = R |x| exactly: the largest |x| decides */
#pragma omp simd reduction(max : m)
    for (size_t i = 0; i < N; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    bad = fabs(R[0] * m) > ENGINE_PHASE_MAX;
  } else {
    for (size_t i = 0; i < N; i++)
      for (size_t j = 0; j < D; j++) bad |= fabs(R[j] * x[i * D + j]) > ENGINE_PHASE_MAX;
  }
  return bad ? GFI_ERANGE : GFI_OK;
}

#define CHECK_BLOCK ((size_t)1 << 17) /* values per task */

typedef struct {
  size_t D, n; /* n = N D values */
  const double *x;
  double *z, *lo, *hi; /* per task: 0 x summed (0 or NaN), smallest and largest x per axis */
  uint64_t *h;         /* per task: the digest's two sums (gfi_digest) */
} check_ctx;

/* One task of the check: finiteness (0 x summed is 0 unless some x is inf
 * or NaN), the data box of its values, with branch-free selections so the
 * loops vectorise, and the digest's sums of its values (the second one
 * from the value before the task's first, when there is one). max |x| on
 * an axis is max(|lo|, |hi|), exactly. Every result is exact, so the
 * clones for each vector level (SSE2 alone spent about 1 ms per 10^6
 * values here) agree to the bit. */
GFI_CLONES static int check_task(void *vc, size_t t, void *ws) {
  (void)ws;
  const check_ctx *c = vc;
  const size_t D = c->D;
  /* task t covers values [t B, (t + 1) B); value v is on axis v % D */
  const size_t v0 = t * CHECK_BLOCK, v1 = c->n - v0 < CHECK_BLOCK ? c->n : v0 + CHECK_BLOCK;
  double z = 0, *lo = c->lo + t * D, *hi = c->hi + t * D;
  uint64_t h0 = 0, h1 = 0;
  if (D == 1) {
    const double *x = c->x + v0;
    const size_t n = v1 - v0;
    double a = x[0], b = x[0];
    z = 0.0 * x[0];
    h0 = digest_bits(x[0]);
    if (v0 > 0) h1 = digest_pair(h0, digest_bits(x[-1]));
#pragma omp simd reduction(+ : z, h0, h1) reduction(min : a) reduction(max : b)
    for (size_t v = 1; v < n; v++) {
      const uint64_t u = digest_bits(x[v]);
      z += 0.0 * x[v];
      a = x[v] < a ? x[v] : a;
      b = x[v] > b ? x[v] : b;
      h0 += u;
      h1 += digest_pair(u, digest_bits(x[v - 1]));
    }
    lo[0] = a;
    hi[0] = b;
  } else {
    /* the last task may hold fewer than D values: an axis without one
     * keeps lo = inf, hi = -inf, which the merge ignores; up to 3 axes in
     * registers, more in the task's own rows of lo and hi */
    double a3[3] = {INFINITY, INFINITY, INFINITY}, b3[3] = {-INFINITY, -INFINITY, -INFINITY};
    double *a = D <= 3 ? a3 : lo, *b = D <= 3 ? b3 : hi;
    if (D > 3)
      for (size_t k = 0; k < D; k++) a[k] = INFINITY, b[k] = -INFINITY;
    size_t j = v0 % D;
    uint64_t p = v0 > 0 ? digest_bits(c->x[v0 - 1]) : 0;
    for (size_t v = v0; v < v1; v++) {
      const double u = c->x[v];
      const uint64_t bu = digest_bits(u);
      z += 0.0 * u;
      a[j] = u < a[j] ? u : a[j];
      b[j] = u > b[j] ? u : b[j];
      h0 += bu;
      if (v > 0) h1 += digest_pair(bu, p);
      p = bu;
      j = j + 1 == D ? 0 : j + 1;
    }
    if (D <= 3)
      for (size_t k = 0; k < D; k++) lo[k] = a[k], hi[k] = b[k];
  }
  c->z[t] = z;
  c->h[2 * t] = h0;
  c->h[2 * t + 1] = h1;
  return GFI_OK;
}

int engine_check_data(size_t D, const double *R, size_t N, const double *x, int nthreads, int *range,
                      double *blo, double *bhi, uint64_t *digest) {
  if (range) *range = GFI_OK;
  if (digest) digest[0] = digest[1] = 0;
  if (N == 0) return GFI_OK;
  if (!x || D == 0) return GFI_EINVAL;
  if (N > SIZE_MAX / D) return GFI_ENOMEM;
  const size_t n = N * D, ntask = (n + CHECK_BLOCK - 1) / CHECK_BLOCK;
  double zs[64], los[64 * 3], his[64 * 3];
  uint64_t hs[64 * 2];
  check_ctx c = {D, n, x, zs, los, his, hs};
  double *buf = NULL;
  uint64_t *hbuf = NULL;
  if (ntask > 64 || D > 3) { /* per task: z, D lo, D hi; two sums */
    if (D > (SIZE_MAX / sizeof(double) - 1) / 2 / ntask) return GFI_ENOMEM;
    buf = gfi_malloc3(ntask, 2 * D + 1, sizeof *buf);
    hbuf = gfi_malloc3(ntask, 2, sizeof *hbuf);
    if (!buf || !hbuf) {
      free(buf);
      free(hbuf);
      return GFI_ENOMEM;
    }
    c.z = buf;
    c.lo = buf + ntask;
    c.hi = buf + (1 + D) * ntask;
    c.h = hbuf;
  }
  (void)par_for(ntask, ntask > 1 ? par_threads(nthreads) : 1, 0, check_task, &c); /* cannot fail */
  double z = 0;
  uint64_t h0 = 0, h1 = 0;
  for (size_t t = 0; t < ntask; t++) {
    z += c.z[t];
    h0 += c.h[2 * t];
    h1 += c.h[2 * t + 1];
  }
  if (z != 0) {
    free(buf);
    free(hbuf);
    return GFI_ENONFINITE;
  }
  int far = 0;
  for (size_t j = 0; j < D; j++) { /* min and max are exact: any order */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t t = 0; t < ntask; t++) {
      lo = fmin(lo, c.lo[t * D + j]);
      hi = fmax(hi, c.hi[t * D + j]);
    }
    if (R && fabs(R[j] * fmax(fabs(lo), fabs(hi))) > ENGINE_PHASE_MAX) far = 1;
    if (blo) blo[j] = lo;
    if (bhi) bhi[j] = hi;
  }
  free(buf);
  free(hbuf);
  if (R && range && far) *range = GFI_ERANGE;
  if (digest) digest[0] = h0, digest[1] = h1;
  return GFI_OK;
}

int engine_lazy_init(engine_lazy *z, size_t N, size_t D, const double *x, double pad) {
  memset(z, 0, sizeof *z);
  atomic_init(&z->done, 0);
  z->pad = pad;
  z->x = gfi_malloc3(N, D, sizeof *z->x);
  if (!z->x) return GFI_ENOMEM;
  memcpy(z->x, x, N * D * sizeof *x);
  if (pthread_mutex_init(&z->lock, NULL)) {
    free(z->x);
    z->x = NULL;
    return GFI_ENOMEM;
  }
  z->lock_ok = 1;
  return GFI_OK;
}

int engine_lazy_borrow(engine_lazy *z, const double *x, double pad) {
  memset(z, 0, sizeof *z);
  atomic_init(&z->done, 0);
  z->pad = pad;
  if (!x) return GFI_EINVAL;
  if (pthread_mutex_init(&z->lock, NULL)) return GFI_ENOMEM;
  z->x = (double *)x; /* read only */
  z->borrowed = 1;
  z->lock_ok = 1;
  return GFI_OK;
}

int engine_lazy_tables(engine_lazy *z, const engine_layout *L, size_t D, const double *R, double **rk,
                       double **rl, double **sk, double **ck) {
  if (atomic_load_explicit(&z->done, memory_order_acquire)) return GFI_OK;
  if (!z->lock_ok) return GFI_EINVAL;
  pthread_mutex_lock(&z->lock);
  int st = GFI_OK;
  if (!atomic_load_explicit(&z->done, memory_order_relaxed)) {
    double *a, *b, *c, *d;
    st = engine_phase_tables_new(L, D, z->x, R, z->pad, &a, &b, &c, &d);
    if (!st) {
      *rk = a, *rl = b, *sk = c, *ck = d;
      if (!z->borrowed) free(z->x);
      z->x = NULL;
      atomic_store_explicit(&z->done, 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&z->lock);
  return st;
}

int engine_phase_tables_new(const engine_layout *L, size_t D, const double *x, const double *R, double pad,
                            double **rk, double **rl, double **sk, double **ck) {
  const size_t Np = L->Np;
  double *a = gfi_malloc3(D, Np, sizeof *a), *b = gfi_malloc3(D, Np, sizeof *b);
  double *c = gfi_malloc3(D, Np, sizeof *c), *d = gfi_malloc3(D, Np, sizeof *d);
  int st = a && b && c && d ? engine_phase_tables(L, D, x, R, pad, a, b, c, d) : GFI_ENOMEM;
  if (st) {
    free(a), free(b), free(c), free(d);
    a = b = c = d = NULL;
  }
  *rk = a, *rl = b, *sk = c, *ck = d;
  return st;
}

void engine_lazy_free(engine_lazy *z) {
  if (!z->borrowed) free(z->x);
  z->x = NULL;
  if (z->lock_ok) pthread_mutex_destroy(&z->lock);
  z->lock_ok = 0;
}

int engine_phase_tables(const engine_layout *L, size_t D, const double *x, const double *R,
                        double pad, double *rk, double *rl, double *sk, double *ck) {
  const size_t N = L->N, Np = L->Np;
  if (engine_check_phase(D, R, N, x)) return GFI_ERANGE;
  for (size_t j = 0; j < D; j++) {
    double *r = rk + j * Np, *r2 = rl + j * Np, *s = sk + j * Np, *c = ck + j * Np;
    for (size_t i = 0; i < N; i++) engine_phase(R[j], x[i * D + j], r + i, r2 + i, s + i, c + i);
    for (size_t i = N; i < Np; i++) {
      r[i] = pad;
      r2[i] = 0;
      s[i] = 0;
      c[i] = 0;
    }
  }
  return GFI_OK;
}

int engine_whiten(size_t D, const double *H, double *Linv, double *logdet_half) {
  for (size_t a = 0; a < D * D; a++)
    if (!isfinite(H[a])) return GFI_EBANDWIDTH;
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < a; b++)
      if (fabs(H[a * D + b] - H[b * D + a]) > 1e-12 * (fabs(H[a * D + b]) + fabs(H[b * D + a])))
        return GFI_EBANDWIDTH;
  if (D == 0) return GFI_EDIM;
  if (D > SIZE_MAX / sizeof(double) / D) return GFI_ENOMEM;
  double *Lbuf = gfi_malloc3(D, D, sizeof *Lbuf);
  if (!Lbuf) return GFI_ENOMEM;
  /* The factor without GSL, whose Cholesky reports a matrix that is not
   * positive definite through GSL's error handler (chol.h). */
  if (chol_lower(D, H, Lbuf) != 0) {
    free(Lbuf);
    return GFI_EBANDWIDTH;
  }
  gsl_matrix_view Lv = gsl_matrix_view_array(Lbuf, D, D);
  gsl_matrix *L = &Lv.matrix;
  int st = GFI_OK;
  double ld = 0;
  for (size_t a = 0; a < D; a++) {
    double d = gsl_matrix_get(L, a, a);
    if (!(d > 0)) {
      st = GFI_EBANDWIDTH;
      goto out;
    }
    ld += log(d);
  }
  /* Cannot fail: the diagonal is positive (GSL reports only a zero one). */
  if (gsl_linalg_tri_invert(CblasLower, CblasNonUnit, L) != GSL_SUCCESS) {
    st = GFI_EBANDWIDTH;
    goto out;
  }
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < D; b++) Linv[a * D + b] = b <= a ? gsl_matrix_get(L, a, b) : 0.0;
  *logdet_half = ld;
out:
  free(Lbuf);
  return st;
}

void engine_whitened_table(const engine_layout *L, size_t D, const double *Linv, const double *x,
                           double pad, double *z) {
  const size_t N = L->N, Np = L->Np;
  for (size_t a = 0; a < D; a++) {
    double *za = z + a * Np;
    for (size_t i = 0; i < N; i++) {
      double s = 0;
      for (size_t b = 0; b <= a; b++) s += Linv[a * D + b] * x[i * D + b];
      za[i] = s;
    }
    for (size_t i = N; i < Np; i++) za[i] = pad;
  }
}

double *engine_whiten_rows(size_t D, const double *Linv, size_t M, const double *x) {
  if (M > SIZE_MAX / D / sizeof(double)) return NULL;
  double *z = malloc((M ? M : 1) * D * sizeof *z);
  if (!z) return NULL;
  for (size_t m = 0; m < M; m++)
    for (size_t a = 0; a < D; a++) {
      double s = 0;
      for (size_t b = 0; b <= a; b++) s += Linv[a * D + b] * x[m * D + b];
      z[m * D + a] = s;
    }
  return z;
}

typedef struct {
  const engine_layout *L;
  size_t M, W, ns, bps, nblocks;
  engine_task task;
  const void *ctx;
  engine_fill fill;
  double *part;
} run_ctx;

/* Task t: query tile t / ns against data super-chunk t % ns. */
static int run_task(void *vc, size_t t, void *ws) {
  const run_ctx *c = vc;
  const engine_layout *L = c->L;
  size_t qt = t / c->ns, s = t % c->ns;
  size_t q0 = qt * L->qtile, q1 = q0 + L->qtile < c->M ? q0 + L->qtile : c->M;
  size_t b0 = s * c->bps, b1 = b0 + c->bps;
  if (b1 > c->nblocks) b1 = c->nblocks;
  double *dst = c->part + (s * c->M + q0) * c->W;
  if (b0 >= b1)
    c->fill(dst, q1 - q0, c->W);
  else
    c->task(c->ctx, q0, q1, b0 * L->dblock, b1 * L->dblock, dst, ws);
  return GFI_OK;
}

int engine_run(const engine_layout *L, size_t M, size_t W, size_t ws_doubles, engine_task task,
               const void *ctx, engine_fill fill, double *part) {
  const size_t ns = L->nsuper;
  const size_t nblocks = L->Np / L->dblock;
  run_ctx c = {L, M, W, ns, (nblocks + ns - 1) / ns, nblocks, task, ctx, fill, part};
  const size_t nqt = (M + L->qtile - 1) / L->qtile;
  if (ws_doubles > SIZE_MAX / sizeof(double)) return GFI_ENOMEM;
  par_spec sp = {nqt * ns, L->nthreads, ws_doubles * sizeof(double), 1, NULL, NULL};
  return par_run(&sp, run_task, &c);
}
