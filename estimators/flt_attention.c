/* FAVOR+ attention, FLT attention (FLT Algorithm 1) and the exact RPE
 * attention it approximates (FLT Definition 3.1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "par.h"
#include "gfi/flt.h"
#include "gfi/validate.h"

int gfi_favor_draw(gsl_rng *rng, size_t m, size_t dim, int orthogonal, double *W) {
  if (!rng || !W || m == 0 || dim == 0) return GFI_EINVAL;
  if (!orthogonal) {
    for (size_t i = 0; i < m * dim; i++) W[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    return GFI_OK;
  }
  double *B = malloc(dim * dim * sizeof *B);
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

/* Key logits w_l.k_j - |k_j|^2/2 of the rows of chunk q, and their maximum. */
static int favor_logits(void *vc, size_t q, void *ws) {
  favor_ctx *c = vc;
  (void)ws;
  const size_t dim = c->dim, m = c->m;
  size_t j1 = (q + 1) * c->chunk < c->L ? (q + 1) * c->chunk : c->L;
  double mx = -INFINITY;
  for (size_t j = q * c->chunk; j < j1; j++) {
    const double *k = c->K + j * dim;
    double h = 0;
    for (size_t a = 0; a < dim; a++) h += k[a] * k[a];
    h /= 2;
    for (size_t l = 0; l < m; l++) {
      const double *w = c->W + l * dim;
      double t = 0;
#pragma omp simd reduction(+ : t)
      for (size_t a = 0; a < dim; a++) t += w[a] * k[a];
      c->PK[j * m + l] = t - h;
      if (t - h > mx) mx = t - h;
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

/* Output row i; ws: m doubles. */
static int favor_row(void *vc, size_t i, void *ws) {
  favor_ctx *c = vc;
  const size_t dim = c->dim, dv = c->dv, m = c->m;
  double *phi = ws;
  const double *q = c->Q + i * dim;
  double mx = -INFINITY;
  for (size_t l = 0; l < m; l++) {
    const double *w = c->W + l * dim;
    double t = 0;
#pragma omp simd reduction(+ : t)
    for (size_t a = 0; a < dim; a++) t += w[a] * q[a];
    phi[l] = t;
    if (t > mx) mx = t;
  }
  double *o = c->out + i * dv, den = 0;
  for (size_t a = 0; a < dv; a++) o[a] = 0;
  for (size_t l = 0; l < m; l++) {
    double p = exp(phi[l] - mx); /* |q|^2/2 and 1/sqrt(m) cancel row-wise */
    const double *row = c->KV + l * (dv + 1);
#pragma omp simd
    for (size_t a = 0; a < dv; a++) o[a] += p * row[a];
    den += p * row[dv];
  }
  if (!(den > 0)) return GFI_EDENOM;
  for (size_t a = 0; a < dv; a++) o[a] /= den;
  return GFI_OK;
}

int gfi_favor_attention(size_t L, size_t dim, const double *Q, const double *K, size_t dv,
                        const double *V, size_t m, const double *W, int nthreads, double *out,
                        size_t *bytes) {
  if (!Q || !K || !V || !W || !out || dim == 0 || dv == 0 || m == 0) return GFI_EINVAL;
  if (L == 0) return GFI_EEMPTY;
  int nt = nthreads_of(nthreads);
  size_t nbytes = (L * m + NCHUNK * m * (dv + 1) + m * (dv + 1)) * sizeof(double);
  double *PK = malloc(L * m * sizeof *PK);                       /* key logits, then features */
  double *part = malloc(NCHUNK * m * (dv + 1) * sizeof *part);   /* per-chunk K'^T [V 1] */
  double *KV = malloc(m * (dv + 1) * sizeof *KV);
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
  par_spec rows = {L, nt, m * sizeof(double), 0, NULL, NULL};
  if (!status) status = par_run(&rows, favor_row, &c);
  free(PK);
  free(part);
  free(KV);
  if (bytes) *bytes = nbytes + (size_t)nt * m * sizeof(double);
  return status;
}

int gfi_flt_attention(const gfi_rpe *rpe, const gfi_proposal *p, size_t L, size_t ell, const double *pos,
                      size_t d, const double *Q, const double *K, size_t dv, const double *V, size_t r,
                      size_t m, int orthogonal, gsl_rng *rng, int nthreads, double *out, size_t *bytes) {
  if (!rpe || !p || !pos || !Q || !K || !V || !rng || !out || d == 0 || dv == 0 || r == 0 || m == 0)
    return GFI_EINVAL;
  if (L == 0) return GFI_EEMPTY;
  if (gfi_rpe_dim(rpe) != ell || gfi_proposal_dim(p) != ell) return GFI_EDIM;
  size_t D = 2 * r + d;
  double *xi = malloc(r * ell * sizeof *xi), *w = malloc(r * sizeof *w);
  double *N1 = malloc(L * 2 * r * sizeof *N1), *N2 = malloc(L * 2 * r * sizeof *N2);
  double *Qh = malloc(L * D * sizeof *Qh), *Kh = malloc(L * D * sizeof *Kh), *W = malloc(m * D * sizeof *W);
  size_t nbytes = (r * ell + r + 4 * L * r + 2 * L * D + m * D) * sizeof(double);
  int st = (!xi || !w || !N1 || !N2 || !Qh || !Kh || !W) ? GFI_ENOMEM : GFI_OK;
  if (!st) st = gfi_flt_draw(rpe, p, rng, r, xi, w);
  if (!st) st = gfi_flt_factors(GFI_FLT_REAL, L, ell, pos, r, xi, w, N1, N2);
  if (!st) {
    double sc = pow((double)d, -0.25);
    for (size_t i = 0; i < L; i++) {
      memcpy(Qh + i * D, N1 + i * 2 * r, 2 * r * sizeof *Qh);
      memcpy(Kh + i * D, N2 + i * 2 * r, 2 * r * sizeof *Kh);
      for (size_t a = 0; a < d; a++) {
        Qh[i * D + 2 * r + a] = sc * Q[i * d + a];
        Kh[i * D + 2 * r + a] = sc * K[i * d + a];
      }
    }
    free(N1);
    free(N2);
    N1 = N2 = NULL;
    st = gfi_favor_draw(rng, m, D, orthogonal, W);
  }
  size_t fb = 0;
  if (!st) st = gfi_favor_attention(L, D, Qh, Kh, dv, V, m, W, nthreads, out, &fb);
  free(xi); free(w); free(N1); free(N2); free(Qh); free(Kh); free(W);
  if (bytes) *bytes = nbytes + fb;
  return st;
}

typedef struct {
  const gfi_rpe *rpe;
  size_t L, ell, d, dv;
  const double *pos, *Q, *K, *V;
  double sc;
  double *A, *out;
} exact_ctx;

/* Row i of the attention (softmax of the scores plus the RPE term); ws:
 * diff (L max(ell, 1)), fr (L) and, unless materialised, the row (L). */
static int exact_row(void *vc, size_t i, void *ws) {
  const exact_ctx *c = vc;
  const size_t L = c->L, ell = c->ell, d = c->d, dv = c->dv;
  const double *pos = c->pos;
  double *diff = ws, *fr = diff + L * (ell ? ell : 1);
  double *a = c->A ? c->A + i * L : fr + L;
  if (c->rpe) {
    for (size_t j = 0; j < L; j++)
      for (size_t b = 0; b < ell; b++) diff[j * ell + b] = pos[i * ell + b] - pos[j * ell + b];
    gfi_rpe_f(c->rpe, L, diff, fr, NULL);
  }
  const double *q = c->Q + i * d;
  double mx = -INFINITY;
  for (size_t j = 0; j < L; j++) {
    const double *k = c->K + j * d;
    double t = 0;
#pragma omp simd reduction(+ : t)
    for (size_t b = 0; b < d; b++) t += q[b] * k[b];
    a[j] = t * c->sc + (c->rpe ? fr[j] : 0.0);
    if (a[j] > mx) mx = a[j];
  }
  if (!c->A) {
    double *o = c->out + i * dv, den = 0;
    for (size_t b = 0; b < dv; b++) o[b] = 0;
    for (size_t j = 0; j < L; j++) {
      double e = exp(a[j] - mx);
      den += e;
      const double *v = c->V + j * dv;
#pragma omp simd
      for (size_t b = 0; b < dv; b++) o[b] += e * v[b];
    }
    for (size_t b = 0; b < dv; b++) o[b] /= den;
  } else {
    double den = 0;
    for (size_t j = 0; j < L; j++) den += (a[j] = exp(a[j] - mx));
    for (size_t j = 0; j < L; j++) a[j] /= den;
  }
  return GFI_OK;
}

/* out row i = A row i times V (row-normalised A). */
static int exact_av(void *vc, size_t i, void *ws) {
  const exact_ctx *c = vc;
  (void)ws;
  const size_t L = c->L, dv = c->dv;
  double *o = c->out + i * dv;
  for (size_t b = 0; b < dv; b++) o[b] = 0;
  for (size_t j = 0; j < L; j++) {
    double e = c->A[i * L + j];
    const double *v = c->V + j * dv;
#pragma omp simd
    for (size_t b = 0; b < dv; b++) o[b] += e * v[b];
  }
  return GFI_OK;
}

int gfi_rpe_attention_exact(const gfi_rpe *rpe, size_t L, size_t ell, const double *pos, size_t d,
                            const double *Q, const double *K, size_t dv, const double *V, int materialise,
                            int nthreads, double *out, size_t *bytes) {
  if (!Q || !K || !V || !out || d == 0 || dv == 0 || (rpe && !pos)) return GFI_EINVAL;
  if (L == 0) return GFI_EEMPTY;
  if (rpe && gfi_rpe_dim(rpe) != ell) return GFI_EDIM;
  int nt = nthreads_of(nthreads);
  double *A = NULL;
  size_t nbytes = (size_t)nt * L * (ell + 3) * sizeof(double);
  if (materialise) {
    if (L > SIZE_MAX / sizeof(double) / L) return GFI_ENOMEM;
    A = malloc(L * L * sizeof *A);
    if (!A) return GFI_ENOMEM;
    nbytes += L * L * sizeof *A;
  }
  /* per thread: diff, fr and (unless materialised) the row */
  size_t wsd = (ell ? ell : 1) + 1 + (materialise ? 0 : 1);
  if (L > SIZE_MAX / sizeof(double) / wsd) {
    free(A);
    return GFI_ENOMEM;
  }
  exact_ctx c = {rpe, L, ell, d, dv, pos, Q, K, V, 1 / sqrt((double)d), A, out};
  par_spec sp = {L, nt, L * wsd * sizeof(double), 0, NULL, NULL};
  int status = par_run(&sp, exact_row, &c);
  if (materialise && status == GFI_OK) status = par_for(L, nt, 0, exact_av, &c);
  free(A);
  if (bytes) *bytes = nbytes;
  return status;
}
