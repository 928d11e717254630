/* FAVOR+ (Performer): random projections and softmax attention by positive
 * random features. */
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>
#include "par.h"
#include "gfi/attention.h"
#include "alloc.h"

int gfi_favor_draw(gsl_rng *rng, size_t m, size_t dim, int orthogonal, double *W) {
  if (!rng || !W || m == 0 || dim == 0) return GFI_EINVAL;
  if (!orthogonal) {
    for (size_t i = 0; i < m * dim; i++) W[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    return GFI_OK;
  }
  double *B = gfi_malloc3(dim, dim, sizeof *B);
  if (!B) return GFI_ENOMEM;
  for (size_t r0 = 0; r0 < m; r0 += dim) {
    for (size_t i = 0; i < dim * dim; i++) B[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    /* modified Gram-Schmidt on the rows */
    for (size_t i = 0; i < dim; i++) {
      double *bi = B + i * dim;
      for (size_t j = 0; j < i; j++) {
        double *bj = B + j * dim, dot = 0;
        for (size_t a = 0; a < dim; a++) dot += bi[a] * bj[a];
        for (size_t a = 0; a < dim; a++) bi[a] -= dot * bj[a];
      }
      double n2 = 0;
      for (size_t a = 0; a < dim; a++) n2 += bi[a] * bi[a];
      double n = sqrt(n2);
      for (size_t a = 0; a < dim; a++) bi[a] /= n;
    }
    size_t rows = m - r0 < dim ? m - r0 : dim;
    for (size_t i = 0; i < rows; i++) {
      /* row norm distributed as the norm of a Gaussian vector: chi(dim) */
      double s = sqrt(gsl_ran_chisq(rng, (double)dim));
      for (size_t a = 0; a < dim; a++) W[(r0 + i) * dim + a] = s * B[i * dim + a];
    }
  }
  free(B);
  return GFI_OK;
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

/* Blocking of the projections: FB rows of W (FB dim doubles, a few hundred
 * KB at most) are applied to every row of a chunk (or to RB query rows)
 * before the next FB, so that W is read from cache, not streamed from
 * memory once per row. Each dot product is the same loop as unblocked: the
 * results do not change. */
#define FB 64
#define RB 8

/* Key logits w_l.k_j - |k_j|^2/2 of the rows of chunk q, and their maximum. */
static int favor_logits(void *vc, size_t q, void *ws) {
  favor_ctx *c = vc;
  (void)ws;
  const size_t dim = c->dim, m = c->m;
  size_t j1 = (q + 1) * c->chunk < c->L ? (q + 1) * c->chunk : c->L;
  double mx = -INFINITY;
  for (size_t l0 = 0; l0 < m; l0 += FB) {
    size_t l1 = l0 + FB < m ? l0 + FB : m;
    for (size_t j = q * c->chunk; j < j1; j++) {
      const double *k = c->K + j * dim;
      double h = 0;
      for (size_t a = 0; a < dim; a++) h += k[a] * k[a];
      h /= 2;
      for (size_t l = l0; l < l1; l++) {
        const double *w = c->W + l * dim;
        double t = 0;
#pragma omp simd reduction(+ : t)
        for (size_t a = 0; a < dim; a++) t += w[a] * k[a];
        c->PK[j * m + l] = t - h;
        if (t - h > mx) mx = t - h;
      }
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

/* Output rows RB b .. RB b + RB - 1; ws: RB m doubles. */
static int favor_rows(void *vc, size_t b, void *ws) {
  favor_ctx *c = vc;
  const size_t dim = c->dim, dv = c->dv, m = c->m;
  size_t i0 = b * RB, i1 = i0 + RB < c->L ? i0 + RB : c->L;
  double *phi = ws, mx[RB];
  for (size_t i = i0; i < i1; i++) mx[i - i0] = -INFINITY;
  for (size_t l0 = 0; l0 < m; l0 += FB) {
    size_t l1 = l0 + FB < m ? l0 + FB : m;
    for (size_t i = i0; i < i1; i++) {
      const double *q = c->Q + i * dim;
      double *ph = phi + (i - i0) * m, mi = mx[i - i0];
      for (size_t l = l0; l < l1; l++) {
        const double *w = c->W + l * dim;
        double t = 0;
#pragma omp simd reduction(+ : t)
        for (size_t a = 0; a < dim; a++) t += w[a] * q[a];
        ph[l] = t;
        if (t > mi) mi = t;
      }
      mx[i - i0] = mi;
    }
  }
  for (size_t i = i0; i < i1; i++) {
    const double *ph = phi + (i - i0) * m;
    double *o = c->out + i * dv, den = 0;
    for (size_t a = 0; a < dv; a++) o[a] = 0;
    for (size_t l = 0; l < m; l++) {
      double p = exp(ph[l] - mx[i - i0]); /* |q|^2/2 and 1/sqrt(m) cancel row-wise */
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
  int status = par_for(NCHUNK, nt, 0, favor_logits, &c);
  /* Phi_K = exp(logit - global max) (the constant cancels in the ratio) */
  for (size_t q = 0; q < NCHUNK; q++)
    if (cmax[q] > c.gmax) c.gmax = cmax[q];
  if (!status) status = par_for(NCHUNK, nt, 1, favor_kv, &c);
  if (!status) par_sum(part, NCHUNK, m * (dv + 1), KV);
  par_spec rows = {(L + RB - 1) / RB, nt, RB * m * sizeof(double), 0, NULL, NULL};
  if (!status) status = par_run(&rows, favor_rows, &c);
  free(PK);
  free(part);
  free(KV);
  if (bytes) *bytes = nbytes + (size_t)nt * RB * m * sizeof(double);
  return status;
}
