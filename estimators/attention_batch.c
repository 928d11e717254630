/* Batched Fourier attention (gfi/attention.h): validation at the API
 * boundary, the expansion of R to per-head radii, diagnostics of flagged and
 * empty rows, and the fixed-order reduction of dR to its granularity. The
 * float64 engine is attention_fourier.c's, shared with the single-sequence
 * interface; float32 runs attention_fourier32.c on the caller's arrays. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "attention_internal.h"
#include "gfi/validate.h"
#include "alloc.h"

void gfi_attn_batch_default_spec(gfi_attn_batch_spec *s) {
  if (!s) return;
  memset(s, 0, sizeof *s);
  gfi_kernel_pow(&s->kernel, 4);
  s->rmode = GFI_ATTN_R_SCALAR;
  s->causal = 0;
  s->eps = 0;
  s->denom_tol = 1e-8;
  s->empty_zero = 0;
  s->dtype = GFI_ATTN_F64;
  s->mask_batch = 1;
}

size_t gfi_attn_batch_nparam(const gfi_attn_batch_spec *s, size_t H, size_t D) {
  if (!s) return 0;
  switch (s->rmode) {
  case GFI_ATTN_R_SCALAR: return 1;
  case GFI_ATTN_R_HEAD: return H;
  case GFI_ATTN_R_HEAD_AXIS: return H > SIZE_MAX / (D ? D : 1) ? 0 : H * D;
  }
  return 0;
}

size_t gfi_attn_batch_saved_size(size_t B, size_t H, size_t Lq) {
  size_t n;
  return gfi_size_prod(&n, 2, B, H, Lq) ? 0 : n;
}

/* The problem's shape and options, checked; J gets everything but arrays. */
static int check_spec(const gfi_attn_batch_spec *s, size_t B, size_t H, size_t Lq, size_t Lk, size_t D,
                      size_t Dv, const unsigned char *mask, attn_fjob *J) {
  if (!s) return GFI_EINVAL;
  if (s->dtype != GFI_ATTN_F64 && s->dtype != GFI_ATTN_F32) return GFI_EINVAL;
  if (s->rmode != GFI_ATTN_R_SCALAR && s->rmode != GFI_ATTN_R_HEAD && s->rmode != GFI_ATTN_R_HEAD_AXIS)
    return GFI_EINVAL;
  if (!(s->denom_tol >= 0 && s->denom_tol < 1)) return GFI_EINVAL;
  if (!(s->eps >= 0 && isfinite(s->eps))) return GFI_EINVAL;
  if (mask && s->mask_batch != 1 && s->mask_batch != B) return GFI_EINVAL;
  if (s->kernel.kind != GFI_PHI_POW) return GFI_EUNSUPPORTED;
  int st = gfi_check_order(s->kernel.l);
  if (st) return st;
  if (B == 0 || H == 0 || Lq == 0 || Lk == 0) return GFI_EEMPTY;
  st = gfi_check_dim(D);
  if (!st) st = gfi_check_dim(Dv);
  if (st) return st;
  /* every array's element count, with room for 2x (tables, copies) */
  size_t n;
  const size_t W = D > Dv ? D : Dv, L = Lq > Lk ? Lq : Lk;
  if (gfi_size_prod(&n, B, H, L, W) || n > ((size_t)1 << 40)) return GFI_EDIM;
  if (mask && gfi_size_prod(&n, s->mask_batch, Lq, Lk, 1)) return GFI_EDIM;
  memset(J, 0, sizeof *J);
  J->B = B;
  J->H = H;
  J->Lq = Lq;
  J->Lk = Lk;
  J->D = D;
  J->Dv = Dv;
  J->l = s->kernel.l;
  J->causal = s->causal ? 1 : 0;
  J->empty_zero = s->empty_zero ? 1 : 0;
  J->per_axis = s->rmode == GFI_ATTN_R_HEAD_AXIS;
  J->eps = s->eps;
  J->denom_tol = s->denom_tol;
  J->mask_B = s->mask_batch;
  return GFI_OK;
}

/* float64 inputs common to forward and backward, checked; the H x D radii
 * in Rd. */
static int load_inputs(const gfi_attn_batch_spec *s, attn_fjob *J, const void *Q, const void *K,
                       const void *V, const void *R, double *Rd) {
  const size_t BH = J->B * J->H, D = J->D, H = J->H;
  const size_t nR = gfi_attn_batch_nparam(s, H, D);
  const double *q = Q, *k = K, *v = V, *r = R;
  int st = gfi_check_finite(q, BH * J->Lq * D, NULL);
  if (!st) st = gfi_check_finite(k, BH * J->Lk * D, NULL);
  if (!st) st = gfi_check_finite(v, BH * J->Lk * J->Dv, NULL);
  if (st) return st;
  st = gfi_check_radii(r, nR, NULL);
  if (st) return st;
  for (size_t h = 0; h < H; h++)
    for (size_t d = 0; d < D; d++)
      Rd[h * D + d] = s->rmode == GFI_ATTN_R_SCALAR ? r[0] : s->rmode == GFI_ATTN_R_HEAD ? r[h] : r[h * D + d];
  J->Q = q;
  J->K = k;
  J->V = v;
  J->Rd = Rd;
  return GFI_OK;
}

/* Flagged (NaN denominator) and empty (E = -inf) rows of the statistics;
 * the status they imply. */
static int report(const double *stat, const double *ratio, size_t n, gfi_attn_info *info) {
  size_t nf = 0, ff = n, ne = 0, fe = n;
  double mr = INFINITY;
  for (size_t r = 0; r < n; r++) {
    if (isnan(stat[2 * r + 1])) {
      if (!nf) ff = r;
      nf++;
    }
    if (stat[2 * r] == -INFINITY) {
      if (!ne) fe = r;
      ne++;
    }
    if (ratio && ratio[r] < mr) mr = ratio[r];
  }
  if (info) {
    info->nflagged = nf;
    info->first_flagged = ff;
    info->min_ratio = ratio ? mr : NAN;
    info->nempty = ne;
    info->first_empty = fe;
  }
  return nf ? GFI_EDENOM : GFI_OK;
}


static int finite_f(const float *x, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (!isfinite(x[k])) return GFI_ENONFINITE;
  return GFI_OK;
}

/* float32 inputs: checked in place; radii as float (Rf) and double (Rd). */
static int load_inputs32(const gfi_attn_batch_spec *s, attn_fjob *J, const void *Q, const void *K,
                         const void *V, const void *R, float *Rf, double *Rd) {
  const size_t BH = J->B * J->H, D = J->D, H = J->H;
  const size_t nR = gfi_attn_batch_nparam(s, H, D);
  const float *r = R;
  int st = finite_f(Q, BH * J->Lq * D);
  if (!st) st = finite_f(K, BH * J->Lk * D);
  if (!st) st = finite_f(V, BH * J->Lk * J->Dv);
  if (st) return st;
  for (size_t k = 0; k < nR; k++)
    if (!(isfinite(r[k]) && r[k] > 0)) return GFI_ERADIUS;
  for (size_t h = 0; h < H; h++)
    for (size_t d = 0; d < D; d++) {
      float x = s->rmode == GFI_ATTN_R_SCALAR ? r[0] : s->rmode == GFI_ATTN_R_HEAD ? r[h] : r[h * D + d];
      Rf[h * D + d] = x;
      Rd[h * D + d] = x;
    }
  J->Qf = Q;
  J->Kf = K;
  J->Vf = V;
  J->Rf = Rf;
  J->Rd = Rd;
  return GFI_OK;
}

int gfi_attn_batch_forward(const gfi_attn_batch_spec *s, size_t B, size_t H, size_t Lq, size_t Lk,
                           size_t D, size_t Dv, const void *Q, const void *K, const void *V,
                           const void *R, const unsigned char *key_pad, const unsigned char *mask,
                           const gfi_opts *opts, void *Hout, double *saved, gfi_attn_info *info) {
  attn_fjob J;
  int st = check_spec(s, B, H, Lq, Lk, D, Dv, mask, &J);
  if (st) return st;
  if (!Q || !K || !V || !R || !Hout) return GFI_EINVAL;
  J.kpad = key_pad;
  J.mask = mask;
  J.nthreads = gfi_threads_resolve(opts);
  const size_t rows = B * H * Lq;
  double *Rd = gfi_malloc2(H * D + (saved ? 1 : 3) * rows, sizeof *Rd);
  if (!Rd) return GFI_ENOMEM;
  if (s->dtype == GFI_ATTN_F32) {
    float *Rf = gfi_malloc2(H * D, sizeof *Rf);
    st = Rf ? load_inputs32(s, &J, Q, K, V, R, Rf, Rd) : GFI_ENOMEM;
    double *ratio = Rd + H * D, *stat = saved ? saved : ratio + rows;
    if (!st) st = attn_fjob_forward32(&J, Hout, stat, ratio);
    if (!st) st = report(stat, ratio, rows, info);
    free(Rf);
    free(Rd);
    return st;
  }
  st = load_inputs(s, &J, Q, K, V, R, Rd);
  double *ratio = Rd + H * D, *stat = saved ? saved : ratio + rows;
  if (!st) st = attn_fjob_forward(&J, Hout, stat, ratio);
  if (!st) st = report(stat, ratio, rows, info);
  free(Rd);
  return st;
}

/* dR: the row partials summed in the order batch, row (then axis for a
 * scalar or per-head radius, already summed within each row) */
static void reduce_dR(const gfi_attn_batch_spec *s, size_t B, size_t H, size_t Lq, size_t D, size_t np,
                      size_t nR, const double *dRrow, double *dr) {
  for (size_t k = 0; k < nR; k++) dr[k] = 0;
  for (size_t b = 0; b < B; b++)
    for (size_t h = 0; h < H; h++)
      for (size_t i = 0; i < Lq; i++) {
        const double *p = dRrow + ((b * H + h) * Lq + i) * np;
        if (s->rmode == GFI_ATTN_R_HEAD_AXIS)
          for (size_t d = 0; d < D; d++) dr[h * D + d] += p[d];
        else
          dr[s->rmode == GFI_ATTN_R_HEAD ? h : 0] += p[0];
      }
}

int gfi_attn_batch_backward(const gfi_attn_batch_spec *s, size_t B, size_t H, size_t Lq, size_t Lk,
                            size_t D, size_t Dv, const void *Q, const void *K, const void *V,
                            const void *R, const unsigned char *key_pad, const unsigned char *mask,
                            const gfi_opts *opts, const void *Hout, const double *saved, const void *dH,
                            void *dQ, void *dK, void *dV, void *dR, gfi_attn_info *info) {
  attn_fjob J;
  int st = check_spec(s, B, H, Lq, Lk, D, Dv, mask, &J);
  if (st) return st;
  if (!Q || !K || !V || !R || !Hout || !saved || !dH || !dQ || !dK || !dV || !dR) return GFI_EINVAL;
  J.kpad = key_pad;
  J.mask = mask;
  J.nthreads = gfi_threads_resolve(opts);
  const size_t BH = B * H, rows = BH * Lq, np = J.per_axis ? D : 1, nR = gfi_attn_batch_nparam(s, H, D);
  for (size_t r = 0; r < rows; r++)
    if (isnan(saved[2 * r])) return GFI_EINVAL; /* not written by a forward */
  double *Rd = gfi_malloc2(H * D + rows * np + nR, sizeof *Rd);
  if (!Rd) return GFI_ENOMEM;
  double *dRrow = Rd + H * D, *dr = dRrow + rows * np;
  if (s->dtype == GFI_ATTN_F32) {
    float *Rf = gfi_malloc2(H * D, sizeof *Rf);
    st = Rf ? load_inputs32(s, &J, Q, K, V, R, Rf, Rd) : GFI_ENOMEM;
    if (!st) st = finite_f(dH, rows * Dv);
    J.dHf = dH;
    if (!st) st = attn_fjob_backward32(&J, Hout, saved, dQ, dK, dV, dRrow);
    if (!st) {
      reduce_dR(s, B, H, Lq, D, np, nR, dRrow, dr);
      float *dq = dQ, *drf = dR;
      for (size_t r = 0; r < rows; r++)
        if (saved[2 * r] == -INFINITY)
          for (size_t d = 0; d < D; d++) dq[r * D + d] = isnan(saved[2 * r + 1]) ? NAN : 0.0f;
      for (size_t k = 0; k < nR; k++) drf[k] = (float)dr[k];
      st = report(saved, NULL, rows, info);
    }
    free(Rf);
    free(Rd);
    return st;
  }
  st = load_inputs(s, &J, Q, K, V, R, Rd);
  if (!st) st = gfi_check_finite(dH, rows * Dv, NULL);
  if (!st) st = attn_fjob_backward(&J, Hout, saved, dH, dQ, dK, dV, dRrow);
  if (!st) {
    reduce_dR(s, B, H, Lq, D, np, nR, dRrow, dr);
    /* empty rows: zero dQ rows when written as zeros, NaN otherwise */
    double *dq = dQ;
    for (size_t r = 0; r < rows; r++)
      if (saved[2 * r] == -INFINITY)
        for (size_t d = 0; d < D; d++) dq[r * D + d] = isnan(saved[2 * r + 1]) ? NAN : 0.0;
    memcpy(dR, dr, nR * sizeof *dr);
    st = report(saved, NULL, rows, info);
  }
  free(Rd);
  return st;
}
