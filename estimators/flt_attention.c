/* FAVOR+ attention, FLT attention (FLT Algorithm 1) and the exact RPE
 * attention it approximates (FLT Definition 3.1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "par.h"
#include "gfi/flt.h"
#include "gfi/validate.h"
#include "alloc.h"

static int nthreads_of(int nthreads) {
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  return gfi_threads_resolve(&o);
}

int gfi_flt_attention(const gfi_rpe *rpe, const gfi_proposal *p, size_t L, size_t ell, const double *pos,
                      size_t d, const double *Q, const double *K, size_t dv, const double *V, size_t r,
                      size_t m, int orthogonal, gsl_rng *rng, int nthreads, double *out, size_t *bytes) {
  if (!rpe || !p || !pos || !Q || !K || !V || !rng || !out || d == 0 || dv == 0 || r == 0 || m == 0)
    return GFI_EINVAL;
  if (L == 0) return GFI_EEMPTY;
  if (gfi_rpe_dim(rpe) != ell || gfi_proposal_dim(p) != ell) return GFI_EDIM;
  size_t D = 2 * r + d;
  double *xi = gfi_malloc3(r, ell, sizeof *xi), *w = gfi_malloc2(r, sizeof *w);
  double *N1 = gfi_malloc4(L, 2, r, sizeof *N1), *N2 = gfi_malloc4(L, 2, r, sizeof *N2);
  double *Qh = gfi_malloc3(L, D, sizeof *Qh), *Kh = gfi_malloc3(L, D, sizeof *Kh), *W = gfi_malloc3(m, D, sizeof *W);
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
    A = gfi_malloc3(L, L, sizeof *A);
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
