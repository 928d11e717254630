/* FAVOR+ (Performer): random projections and softmax attention by positive
 * random features. */
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "gfi/attention.h"

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

int gfi_favor_attention(size_t L, size_t dim, const double *Q, const double *K, size_t dv,
                        const double *V, size_t m, const double *W, int nthreads, double *out,
                        size_t *bytes) {
  if (!Q || !K || !V || !W || !out || dim == 0 || dv == 0 || m == 0) return GFI_EINVAL;
  if (L == 0) return GFI_EEMPTY;
  int nt = nthreads_of(nthreads);
  (void)nt;
  size_t nbytes = (L * m + NCHUNK * m * (dv + 1) + m * (dv + 1)) * sizeof(double);
  double *PK = malloc(L * m * sizeof *PK);                       /* key logits, then features */
  double *part = calloc(NCHUNK * m * (dv + 1), sizeof *part);    /* per-chunk K'^T [V 1] */
  double *KV = calloc(m * (dv + 1), sizeof *KV);
  if (!PK || !part || !KV) {
    free(PK); free(part); free(KV);
    return GFI_ENOMEM;
  }
  double gmax = -INFINITY;
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) reduction(max : gmax)
#endif
  for (size_t j = 0; j < L; j++) {
    const double *k = K + j * dim;
    double h = 0;
    for (size_t a = 0; a < dim; a++) h += k[a] * k[a];
    h /= 2;
    for (size_t l = 0; l < m; l++) {
      const double *w = W + l * dim;
      double t = 0;
#pragma omp simd reduction(+ : t)
      for (size_t a = 0; a < dim; a++) t += w[a] * k[a];
      PK[j * m + l] = t - h;
      if (t - h > gmax) gmax = t - h;
    }
  }
  /* Phi_K = exp(logit - global max) (the constant cancels in the ratio) */
  size_t chunk = (L + NCHUNK - 1) / NCHUNK;
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
  for (size_t q = 0; q < NCHUNK; q++) {
    double *P = part + q * m * (dv + 1);
    size_t j1 = (q + 1) * chunk < L ? (q + 1) * chunk : L;
    for (size_t j = q * chunk; j < j1; j++) {
      const double *v = V + j * dv;
      for (size_t l = 0; l < m; l++) {
        double phi = exp(PK[j * m + l] - gmax);
        double *row = P + l * (dv + 1);
#pragma omp simd
        for (size_t a = 0; a < dv; a++) row[a] += phi * v[a];
        row[dv] += phi;
      }
    }
  }
  for (size_t q = 0; q < NCHUNK; q++)
    for (size_t i = 0; i < m * (dv + 1); i++) KV[i] += part[q * m * (dv + 1) + i];
  int status = GFI_OK;
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel num_threads(nt)
#endif
  {
    double *phi = malloc(m * sizeof *phi);
    if (!phi) {
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic write
#endif
      status = GFI_ENOMEM;
    }
#ifdef GFI_HAVE_OPENMP
#pragma omp for schedule(static)
#endif
    for (size_t i = 0; i < L; i++) {
      if (!phi) continue;
      const double *q = Q + i * dim;
      double mx = -INFINITY;
      for (size_t l = 0; l < m; l++) {
        const double *w = W + l * dim;
        double t = 0;
#pragma omp simd reduction(+ : t)
        for (size_t a = 0; a < dim; a++) t += w[a] * q[a];
        phi[l] = t;
        if (t > mx) mx = t;
      }
      double *o = out + i * dv, den = 0;
      for (size_t a = 0; a < dv; a++) o[a] = 0;
      for (size_t l = 0; l < m; l++) {
        double p = exp(phi[l] - mx); /* |q|^2/2 and 1/sqrt(m) cancel row-wise */
        const double *row = KV + l * (dv + 1);
#pragma omp simd
        for (size_t a = 0; a < dv; a++) o[a] += p * row[a];
        den += p * row[dv];
      }
      if (!(den > 0)) {
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic write
#endif
        status = GFI_EDENOM;
        continue;
      }
      for (size_t a = 0; a < dv; a++) o[a] /= den;
    }
    free(phi);
  }
  free(PK);
  free(part);
  free(KV);
  if (bytes) *bytes = nbytes + (size_t)nt * m * sizeof(double);
  return status;
}
