/* Placeholder NUFFT: the interface of nufft.h computed by the direct sums of
 * nufft_direct.c (exact, O(N K)), so that the band-limited engine can be built
 * and tested against the interface while the spreading transforms land. */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "nufft.h"
#include "gfi/status.h"

void nufft_default_opts(nufft_opts *o) {
  if (!o) return;
  o->tol = 1e-12;
  o->nthreads = 0;
  o->upsampfac = 0.0;
  o->max_grid = 0;
}

static int nt_of(const nufft_opts *o) { return o ? o->nthreads : 0; }

int nufft1(int D, size_t N, const double *x, const double *c, int sign, const size_t *ms,
           double *f, const nufft_opts *o) {
  return nufft1_direct(D, N, x, c, sign, ms, f, nt_of(o));
}
int nufft2(int D, size_t N, const double *x, double *c, int sign, const size_t *ms,
           const double *f, const nufft_opts *o) {
  return nufft2_direct(D, N, x, c, sign, ms, f, nt_of(o));
}
int nufft3(int D, size_t N, const double *x, const double *c, int sign, size_t K,
           const double *s, double *f, const nufft_opts *o) {
  return nufft3_direct(D, N, x, c, sign, K, s, f, nt_of(o));
}

struct nufft3_plan {
  int D, sign, nthreads;
  double lo[3], hi[3];
  size_t K;
  double *s, *acc, *tmp;
};

int nufft3_plan_make(nufft3_plan **pp, int D, const double *xlo, const double *xhi, int sign,
                     size_t K, const double *s, const nufft_opts *o) {
  if (!pp || D < 1 || D > 3 || !xlo || !xhi || (K && !s)) return GFI_EINVAL;
  *pp = NULL;
  if (K > SIZE_MAX / 16 / (size_t)D) return GFI_ENOMEM;
  nufft3_plan *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->D = D;
  p->sign = sign;
  p->nthreads = nt_of(o);
  p->K = K;
  for (int d = 0; d < D; d++) { p->lo[d] = xlo[d]; p->hi[d] = xhi[d]; }
  p->s = malloc((K ? K : 1) * (size_t)D * sizeof(double));
  p->acc = calloc(2 * (K ? K : 1), sizeof(double));
  p->tmp = malloc(2 * (K ? K : 1) * sizeof(double));
  if (!p->s || !p->acc || !p->tmp) { nufft3_destroy(p); return GFI_ENOMEM; }
  if (K) memcpy(p->s, s, K * (size_t)D * sizeof(double));
  *pp = p;
  return GFI_OK;
}

int nufft3_add(nufft3_plan *p, size_t N, const double *x, const double *c) {
  if (!p || (N && (!x || !c))) return GFI_EINVAL;
  for (size_t j = 0; j < N; j++)
    for (int d = 0; d < p->D; d++) {
      double v = x[j * (size_t)p->D + d];
      if (!(v >= p->lo[d] && v <= p->hi[d])) return GFI_EINVAL;
    }
  int st = nufft3_direct(p->D, N, x, c, p->sign, p->K, p->s, p->tmp, p->nthreads);
  if (st) return st;
  for (size_t k = 0; k < 2 * p->K; k++) p->acc[k] += p->tmp[k];
  return GFI_OK;
}

int nufft3_exec(nufft3_plan *p, double *f) {
  if (!p || (p->K && !f)) return GFI_EINVAL;
  memcpy(f, p->acc, 2 * p->K * sizeof(double));
  return GFI_OK;
}

void nufft3_reset(nufft3_plan *p) {
  if (p) memset(p->acc, 0, 2 * (p->K ? p->K : 1) * sizeof(double));
}

void nufft3_info(const nufft3_plan *p, size_t nf[3], int *width) {
  if (nf) nf[0] = nf[1] = nf[2] = 0;
  if (width) *width = 0;
  (void)p;
}

void nufft3_destroy(nufft3_plan *p) {
  if (!p) return;
  free(p->s);
  free(p->acc);
  free(p->tmp);
  free(p);
}

size_t nufft3_grid_size(int D, const double *X, const double *S, const nufft_opts *o,
                        size_t nf[3]) {
  (void)D; (void)X; (void)S; (void)o;
  if (nf) nf[0] = nf[1] = nf[2] = 1;
  return 1;
}
