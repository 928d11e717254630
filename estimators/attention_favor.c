/* FAVOR+ (Performer): random projections and softmax attention by positive
 * random features. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>
#include "par.h"
#include "gfi/attention.h"
#include "alloc.h"
#include "clones.h"

static int nthreads_of(int nthreads);

typedef struct {
  size_t m, dim;
  double *W;
  const double *s;
} ortho_ctx;

/* Block b of an orthogonal draw: modified Gram-Schmidt on its rows (each
 * row depends only on the rows before it, so a last block of fewer than dim
 * rows needs only those), then the rows scaled to the norms s. */
GFI_CLONES static int ortho_block(void *vc, size_t b, void *ws) {
  const ortho_ctx *c = vc;
  (void)ws;
  const size_t dim = c->dim, r0 = b * dim, rows = c->m - r0 < dim ? c->m - r0 : dim;
  double *B = c->W + r0 * dim;
  for (size_t i = 0; i < rows; i++) {
    double *bi = B + i * dim;
    for (size_t j = 0; j < i; j++) {
      const double *bj = B + j * dim;
      double dot = 0;
#pragma omp simd reduction(+ : dot)
      for (size_t a = 0; a < dim; a++) dot += bi[a] * bj[a];
#pragma omp simd
      for (size_t a = 0; a < dim; a++) bi[a] -= dot * bj[a];
    }
    double n2 = 0;
#pragma omp simd reduction(+ : n2)
    for (size_t a = 0; a < dim; a++) n2 += bi[a] * bi[a];
    double n = sqrt(n2);
    for (size_t a = 0; a < dim; a++) bi[a] /= n;
  }
  for (size_t i = 0; i < rows; i++)
    for (size_t a = 0; a < dim; a++) B[i * dim + a] *= c->s[r0 + i];
  return GFI_OK;
}

int gfi_favor_draw(gsl_rng *rng, size_t m, size_t dim, int orthogonal, double *W) {
  if (!rng || !W || m == 0 || dim == 0) return GFI_EINVAL;
  if (m > SIZE_MAX / sizeof(double) / dim) return GFI_ENOMEM;
  if (!orthogonal) {
    for (size_t i = 0; i < m * dim; i++) W[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    return GFI_OK;
  }
  if (dim > SIZE_MAX / dim) return GFI_ENOMEM; /* a block's dim x dim draws */
  /* The random numbers are drawn serially in a fixed order (a block's
   * dim x dim Gaussians, of which a last partial block keeps its first rows,
   * then its rows' chi(dim) norms), and the blocks are orthogonalised in
   * parallel: the same bits for any thread count. */
  double *s = gfi_malloc2(m, sizeof *s);
  if (!s) return GFI_ENOMEM;
  for (size_t r0 = 0; r0 < m; r0 += dim) {
    size_t rows = m - r0 < dim ? m - r0 : dim;
    for (size_t i = 0; i < dim * dim; i++) {
      double z = gsl_ran_gaussian_ziggurat(rng, 1.0);
      if (i < rows * dim) W[r0 * dim + i] = z;
    }
    /* row norm distributed as the norm of a Gaussian vector: chi(dim) */
    for (size_t i = 0; i < rows; i++) s[r0 + i] = sqrt(gsl_ran_chisq(rng, (double)dim));
  }
  ortho_ctx c = {m, dim, W, s};
  int st = par_for((m + dim - 1) / dim, nthreads_of(0), 1, ortho_block, &c);
  free(s);
  return st;
}

static int nthreads_of(int nthreads) {
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  return gfi_threads_resolve(&o);
}

#define NCHUNK 16 /* fixed reduction chunks: identical results for any thread count */

typedef struct {
  size_t L, dim, dv, m, chunk;
  const double *Q, *K, *V, *W, *KV;
  double *PK, *part, *cmax, *out;
  double gmax;
} favor_ctx;

/* The projections P[i][l] = w_l . x_i are a small matrix product: panels of
 * NR rows of W, packed transposed (dim x NR, zero-padded past m), times
 * groups of MR rows x held in registers (MR x NR accumulators). Every dot
 * product runs a = 0 .. dim-1 in order, whatever the shapes, so each value
 * is the same bits for any thread count and chunking. */
#define NR 8
#define MR 4
#define RB 16

/* out[i ldo + l] = x_i . w_l for rows i < n of X (n x dim) and l < m;
 * pan: dim NR doubles. */
static inline void favor_proj(size_t n, size_t dim, const double *X, size_t m, const double *W,
                              double *pan, double *out, size_t ldo) {
  for (size_t l0 = 0; l0 < m; l0 += NR) {
    size_t nl = m - l0 < NR ? m - l0 : NR;
    for (size_t c = 0; c < NR; c++)
      for (size_t a = 0; a < dim; a++) pan[a * NR + c] = c < nl ? W[(l0 + c) * dim + a] : 0.0;
    size_t i = 0;
    for (; i + MR <= n; i += MR) {
      double acc[MR][NR] = {{0}};
      const double *x = X + i * dim;
      for (size_t a = 0; a < dim; a++) {
        const double *w = pan + a * NR;
        for (size_t r = 0; r < MR; r++) {
          double xv = x[r * dim + a];
#pragma omp simd
          for (size_t c = 0; c < NR; c++) acc[r][c] += xv * w[c];
        }
      }
      for (size_t r = 0; r < MR; r++)
        for (size_t c = 0; c < nl; c++) out[(i + r) * ldo + l0 + c] = acc[r][c];
    }
    for (; i < n; i++) {
      double acc[NR] = {0};
      const double *x = X + i * dim;
      for (size_t a = 0; a < dim; a++) {
        const double *w = pan + a * NR;
        double xv = x[a];
#pragma omp simd
        for (size_t c = 0; c < NR; c++) acc[c] += xv * w[c];
      }
      for (size_t c = 0; c < nl; c++) out[i * ldo + l0 + c] = acc[c];
    }
  }
}

/* Key logits w_l.k_j - |k_j|^2/2 of the rows of chunk q, and their maximum;
 * ws: the packed panel. */
GFI_CLONES static int favor_logits(void *vc, size_t q, void *ws) {
  favor_ctx *c = vc;
  const size_t dim = c->dim, m = c->m;
  size_t j0 = q * c->chunk < c->L ? q * c->chunk : c->L;
  size_t j1 = (q + 1) * c->chunk < c->L ? (q + 1) * c->chunk : c->L;
  double mx = -INFINITY;
  favor_proj(j1 - j0, dim, c->K + j0 * dim, m, c->W, ws, c->PK + j0 * m, m);
  for (size_t j = j0; j < j1; j++) {
    const double *k = c->K + j * dim;
    double h = 0;
    for (size_t a = 0; a < dim; a++) h += k[a] * k[a];
    h /= 2;
    double *pk = c->PK + j * m;
    for (size_t l = 0; l < m; l++) {
      pk[l] -= h;
      if (pk[l] > mx) mx = pk[l];
    }
  }
  c->cmax[q] = mx;
  return GFI_OK;
}

/* Chunk q's share of K'^T [V 1]. */
static int favor_kv(void *vc, size_t q, void *ws) {
  favor_ctx *c = vc;
  (void)ws;
  const size_t m = c->m, dv = c->dv;
  double *P = c->part + q * m * (dv + 1);
  for (size_t i = 0; i < m * (dv + 1); i++) P[i] = 0;
  size_t j1 = (q + 1) * c->chunk < c->L ? (q + 1) * c->chunk : c->L;
  for (size_t j = q * c->chunk; j < j1; j++) {
    const double *v = c->V + j * dv;
    for (size_t l = 0; l < m; l++) {
      double phi = exp(c->PK[j * m + l] - c->gmax);
      double *row = P + l * (dv + 1);
#pragma omp simd
      for (size_t a = 0; a < dv; a++) row[a] += phi * v[a];
      row[dv] += phi;
    }
  }
  return GFI_OK;
}

/* Output rows RB b .. RB b + RB - 1; ws: RB m doubles, then the packed
 * panel. */
GFI_CLONES static int favor_rows(void *vc, size_t b, void *ws) {
  favor_ctx *c = vc;
  const size_t dim = c->dim, dv = c->dv, m = c->m;
  size_t i0 = b * RB, i1 = i0 + RB < c->L ? i0 + RB : c->L;
  double *phi = ws;
  favor_proj(i1 - i0, dim, c->Q + i0 * dim, m, c->W, phi + RB * m, phi, m);
  for (size_t i = i0; i < i1; i++) {
    const double *ph = phi + (i - i0) * m;
    double mx = -INFINITY;
    for (size_t l = 0; l < m; l++)
      if (ph[l] > mx) mx = ph[l];
    double *o = c->out + i * dv, den = 0;
    for (size_t a = 0; a < dv; a++) o[a] = 0;
    for (size_t l = 0; l < m; l++) {
      double p = exp(ph[l] - mx); /* |q|^2/2 and 1/sqrt(m) cancel row-wise */
      const double *row = c->KV + l * (dv + 1);
#pragma omp simd
      for (size_t a = 0; a < dv; a++) o[a] += p * row[a];
      den += p * row[dv];
    }
    if (!(den > 0)) return GFI_EDENOM;
    for (size_t a = 0; a < dv; a++) o[a] /= den;
  }
  return GFI_OK;
}

int gfi_favor_attention(size_t L, size_t dim, const double *Q, const double *K, size_t dv,
                        const double *V, size_t m, const double *W, int nthreads, double *out,
                        size_t *bytes) {
  if (!Q || !K || !V || !W || !out || dim == 0 || dv == 0 || m == 0) return GFI_EINVAL;
  if (L == 0) return GFI_EEMPTY;
  int nt = nthreads_of(nthreads);
  if (dim > SIZE_MAX / sizeof(double) / NR || m > (SIZE_MAX / sizeof(double) - dim * NR) / RB) return GFI_ENOMEM;
  size_t nbytes = (L * m + NCHUNK * m * (dv + 1) + m * (dv + 1)) * sizeof(double);
  double *PK = gfi_malloc3(L, m, sizeof *PK);                       /* key logits, then features */
  double *part = gfi_malloc4(NCHUNK, m, (dv + 1), sizeof *part);   /* per-chunk K'^T [V 1] */
  double *KV = gfi_malloc3(m, (dv + 1), sizeof *KV);
  if (!PK || !part || !KV) {
    free(PK); free(part); free(KV);
    return GFI_ENOMEM;
  }
  double cmax[NCHUNK];
  favor_ctx c = {L, dim, dv, m, (L + NCHUNK - 1) / NCHUNK, Q, K, V, W, KV, PK, part, cmax, out,
                 -INFINITY};
  par_spec lg = {NCHUNK, nt, dim * NR * sizeof(double), 0, NULL, NULL};
  int status = par_run(&lg, favor_logits, &c);
  /* Phi_K = exp(logit - global max) (the constant cancels in the ratio) */
  for (size_t q = 0; q < NCHUNK; q++)
    if (cmax[q] > c.gmax) c.gmax = cmax[q];
  if (!status) status = par_for(NCHUNK, nt, 1, favor_kv, &c);
  if (!status) par_sum(part, NCHUNK, m * (dv + 1), KV);
  par_spec rows = {(L + RB - 1) / RB, nt, (RB * m + dim * NR) * sizeof(double), 0, NULL, NULL};
  if (!status) status = par_run(&rows, favor_rows, &c);
  free(PK);
  free(part);
  free(KV);
  if (bytes) *bytes = nbytes + (size_t)nt * (RB * m + dim * NR) * sizeof(double);
  return status;
}
