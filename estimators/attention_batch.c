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
#include "fail.h"

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
  s->layout = GFI_ATTN_LAYOUT_BHLD;
  s->dropout = 0;
  s->seed = 0;
  memset(s->strides, 0, sizeof s->strides);
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
  if (s->dtype != GFI_ATTN_F64 && s->dtype != GFI_ATTN_F32) return fail_param(GFI_EINVAL, "dtype");
  if (s->rmode != GFI_ATTN_R_SCALAR && s->rmode != GFI_ATTN_R_HEAD && s->rmode != GFI_ATTN_R_HEAD_AXIS)
    return fail_param(GFI_EINVAL, "rmode");
  if (!(s->denom_tol >= 0 && s->denom_tol < 1)) return fail_param(GFI_EINVAL, "denom_tol");
  if (!(s->eps >= 0 && isfinite(s->eps))) return fail_param(GFI_EINVAL, "eps");
  if (mask && s->mask_batch != 1 && s->mask_batch != B) return fail_param(GFI_EINVAL, "mask_batch");
  if (s->layout != GFI_ATTN_LAYOUT_BHLD && s->layout != GFI_ATTN_LAYOUT_LBHD) return fail_param(GFI_EINVAL, "layout");
  if (!(s->dropout >= 0 && s->dropout < 1)) return fail_param(GFI_EINVAL, "dropout");
  int st = attn_check_kernel(&s->kernel);
  if (st) return st;
  if (B == 0) return fail_param(GFI_EEMPTY, "B");
  if (H == 0) return fail_param(GFI_EEMPTY, "H");
  if (Lq == 0) return fail_param(GFI_EEMPTY, "Lq");
  if (Lk == 0) return fail_param(GFI_EEMPTY, "Lk");
  if ((st = fail_named(gfi_check_dim(D), "D"))) return st;
  if ((st = fail_named(gfi_check_dim(Dv), "Dv"))) return st;
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
  attn_fjob_set_kernel(J, &s->kernel);
  J->causal = s->causal ? 1 : 0;
  J->empty_zero = s->empty_zero ? 1 : 0;
  J->per_axis = s->rmode == GFI_ATTN_R_HEAD_AXIS;
  J->eps = s->eps;
  J->denom_tol = s->denom_tol;
  J->mask_B = s->mask_batch;
  J->lbhd = s->layout == GFI_ATTN_LAYOUT_LBHD;
  attn_fjob_default_strides(J);
  /* strides of the inputs given by the caller (0, 0, 0: the layout's): every
   * element offset must fit a size_t */
  size_t *js[3] = {J->qs, J->ks, J->vs};
  const size_t Ls[3] = {Lq, Lk, Lk}, Ws[3] = {D, D, Dv};
  for (int a = 0; a < 3; a++) {
    const size_t *g = s->strides + 3 * a;
    if (!g[0] && !g[1] && !g[2]) continue;
    const size_t ext[3] = {B - 1, H - 1, Ls[a] - 1};
    size_t top = Ws[a];
    for (int k = 0; k < 3; k++) {
      if (ext[k] && g[k] > (SIZE_MAX - top) / ext[k]) return GFI_EDIM;
      top += ext[k] * g[k];
    }
    memcpy(js[a], g, 3 * sizeof *g);
  }  if (s->dropout > 0) {
    double t = ceil(s->dropout * 4294967296.0);
    J->drop_thr = t >= 4294967295.0 ? 0xffffffffu : (uint32_t)(t < 1 ? 1 : t);
    J->keep_scale = 1.0 / (1.0 - s->dropout);
    J->drop_key[0] = (uint32_t)s->seed;
    J->drop_key[1] = (uint32_t)(s->seed >> 32);
  }
  return GFI_OK;
}

/* Every element of an input of strides xs (L rows of W per head) finite. */
static int finite_in(const attn_fjob *J, const void *X, const size_t *xs, size_t L, size_t W, int f32) {
  for (size_t bh = 0; bh < J->B * J->H; bh++)
    for (size_t i = 0; i < L; i++) {
      const size_t o = attn_fjob_xoff(J, xs, bh) + i * xs[2];
      for (size_t c = 0; c < W; c++)
        if (!isfinite(f32 ? (double)((const float *)X)[o + c] : ((const double *)X)[o + c])) return GFI_ENONFINITE;
    }
  return GFI_OK;
}

/* float64 inputs common to forward and backward, checked; the H x D radii
 * in Rd. */
static int load_inputs(const gfi_attn_batch_spec *s, attn_fjob *J, const void *Q, const void *K,
                       const void *V, const void *R, double *Rd) {
  const size_t BH = J->B * J->H, D = J->D, H = J->H;
  const size_t nR = gfi_attn_batch_nparam(s, H, D);
  const double *q = Q, *k = K, *v = V, *r = R;
  (void)BH;
  int st = fail_named(finite_in(J, q, J->qs, J->Lq, D, 0), "Q");
  if (!st) st = fail_named(finite_in(J, k, J->ks, J->Lk, D, 0), "K");
  if (!st) st = fail_named(finite_in(J, v, J->vs, J->Lk, J->Dv, 0), "V");
  if (st) return st;
  st = fail_named(gfi_check_radii(r, nR, NULL), "R");
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
  (void)BH;
  int st = fail_named(finite_in(J, Q, J->qs, J->Lq, D, 1), "Q");
  if (!st) st = fail_named(finite_in(J, K, J->ks, J->Lk, D, 1), "K");
  if (!st) st = fail_named(finite_in(J, V, J->vs, J->Lk, J->Dv, 1), "V");
  if (st) return st;
  for (size_t k = 0; k < nR; k++)
    if (!(isfinite(r[k]) && r[k] > 0)) return fail_param(GFI_ERADIUS, "R");
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


/* ---- float32 rows recomputed in float64 ----
 * A float32 factor |sinc| < 2^-20 is flushed to 0 (attention_fourier32.c),
 * so a row whose every visible weight holds such a factor sums to 0 in
 * float32 although its float64 sum is positive (one key at u = pi: sinc =
 * -2.8e-8). Such rows (and rows the float32 engine flags) are not given up:
 * their head is computed again by the float64 engine on the same float
 * inputs, and H, the statistics and, in the backward, the gradients of that
 * head come from it. A recomputed head is marked in the saved statistics by
 * E_i + 1/4 on its rows that see keys (E_i is otherwise an integer), so the
 * backward takes the same route. */
#define REDO_MARK 0.25
static int row_needs64(const double *st) {
  return st[0] != -INFINITY && (isnan(st[1]) || st[0] <= -1.0e5); /* flagged, or every weight 0 */
}
static int head_marked64(const double *stat, size_t Lq) {
  for (size_t i = 0; i < Lq; i++)
    if (isfinite(stat[2 * i]) && stat[2 * i] != floor(stat[2 * i])) return 1;
  return 0;
}
/* Head bh of J as a float64 job of one head on copies (q, k, v: Lq D,
 * Lk D, Lk Dv doubles, filled here from J's float arrays). */
static void head_job64(const attn_fjob *J, size_t bh, double *q, double *k, double *v, attn_fjob *J1) {
  const size_t D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk, b = bh / J->H;
  const size_t qo = attn_fjob_xoff(J, J->qs, bh), ko = attn_fjob_xoff(J, J->ks, bh), vo = attn_fjob_xoff(J, J->vs, bh);
  for (size_t i = 0; i < Lq; i++)
    for (size_t d = 0; d < D; d++) q[i * D + d] = J->Qf[qo + i * J->qs[2] + d];
  for (size_t j = 0; j < Lk; j++) {
    for (size_t d = 0; d < D; d++) k[j * D + d] = J->Kf[ko + j * J->ks[2] + d];
    for (size_t c = 0; c < Dv; c++) v[j * Dv + c] = J->Vf[vo + j * J->vs[2] + c];
  }
  *J1 = *J;
  J1->B = J1->H = 1;
  J1->Q = q;
  J1->K = k;
  J1->V = v;
  J1->Rd = J->Rd + (bh % J->H) * D;
  J1->Qf = J1->Kf = J1->Vf = J1->Rf = J1->dHf = NULL;
  J1->kpad = J->kpad ? J->kpad + b * Lk : NULL;
  J1->mask = J->mask ? J->mask + (J->mask_B == 1 ? 0 : b) * Lq * Lk : NULL;
  J1->mask_B = 1;
  J1->lbhd = 0;
  J1->bh0 = bh;
  attn_fjob_default_strides(J1);
}

/* all = 1: every head (a polynomial phi, which only the float64 per-pair
 * engine evaluates: the float32 outputs are its values rounded to float). */
static int redo_forward64(const attn_fjob *J, float *Hout, double *stat, double *ratio, int all) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk;
  double *buf = NULL;
  int st = GFI_OK;
  for (size_t bh = 0; bh < BH && !st; bh++) {
    int need = all;
    for (size_t i = 0; i < Lq && !need; i++) need = row_needs64(stat + 2 * (bh * Lq + i));
    if (!need) continue;
    if (!buf) {
      buf = gfi_malloc2(Lq * D + Lk * D + Lk * Dv + Lq * Dv + 3 * Lq, sizeof *buf);
      if (!buf) return GFI_ENOMEM;
    }
    double *q = buf, *k = q + Lq * D, *v = k + Lk * D, *h = v + Lk * Dv, *s2 = h + Lq * Dv, *rt = s2 + 2 * Lq;
    attn_fjob J1;
    head_job64(J, bh, q, k, v, &J1);
    st = attn_fjob_forward(&J1, h, s2, rt);
    if (st) break;
    const size_t rs = attn_fjob_rs(J), qo = attn_fjob_hoff(J, bh, Lq);
    for (size_t i = 0; i < Lq; i++)
      for (size_t c = 0; c < Dv; c++) Hout[(qo + i * rs) * Dv + c] = (float)h[i * Dv + c];
    for (size_t i = 0; i < Lq; i++) {
      double *o = stat + 2 * (bh * Lq + i);
      o[0] = isfinite(s2[2 * i]) ? s2[2 * i] + REDO_MARK : s2[2 * i];
      o[1] = s2[2 * i + 1];
      ratio[bh * Lq + i] = rt[i];
    }
  }
  free(buf);
  return st;
}

/* The backward of the marked heads in float64 (dQ, dK, dV of the head and
 * its rows of dRrow overwritten); J's V and H divided by vs. */
static int redo_backward64(const attn_fjob *J, const float *H, const double *stat, float *dQ,
                           float *dK, float *dV, double *dRrow, int all) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk, np = J->per_axis ? D : 1;
  double *buf = NULL;
  int st = GFI_OK;
  for (size_t bh = 0; bh < BH && !st; bh++) {
    if (!all && !head_marked64(stat + 2 * bh * Lq, Lq)) continue;
    if (!buf) {
      buf = gfi_malloc2(3 * (Lq * D + Lk * D + Lk * Dv) + 2 * Lq * Dv + 2 * Lq, sizeof *buf);
      if (!buf) return GFI_ENOMEM;
    }
    double *q = buf, *k = q + Lq * D, *v = k + Lk * D, *h = v + Lk * Dv, *dh = h + Lq * Dv, *s2 = dh + Lq * Dv;
    double *gq = s2 + 2 * Lq, *gk = gq + Lq * D, *gv = gk + Lk * D;
    attn_fjob J1;
    head_job64(J, bh, q, k, v, &J1);
    const size_t rs = attn_fjob_rs(J), qo = attn_fjob_hoff(J, bh, Lq), ko = attn_fjob_hoff(J, bh, Lk);
    for (size_t i = 0; i < Lq; i++)
      for (size_t c = 0; c < Dv; c++) {
        h[i * Dv + c] = H[(qo + i * rs) * Dv + c];
        dh[i * Dv + c] = J->dHf[(qo + i * rs) * Dv + c];
      }
    for (size_t i = 0; i < Lq; i++) {
      const double *o = stat + 2 * (bh * Lq + i);
      s2[2 * i] = isfinite(o[0]) ? floor(o[0]) : o[0];
      s2[2 * i + 1] = o[1];
    }
    st = attn_fjob_backward(&J1, h, s2, dh, gq, gk, gv, dRrow + bh * Lq * np);
    if (st) break;
    for (size_t i = 0; i < Lq; i++)
      for (size_t d = 0; d < D; d++) dQ[(qo + i * rs) * D + d] = (float)gq[i * D + d];
    for (size_t j = 0; j < Lk; j++) {
      for (size_t d = 0; d < D; d++) dK[(ko + j * rs) * D + d] = (float)gk[j * D + d];
      for (size_t c = 0; c < Dv; c++) dV[(ko + j * rs) * Dv + c] = (float)gv[j * Dv + c];
    }
  }
  free(buf);
  return st;
}

/* ---- values beyond the range of the sums ----
 * V is divided by a power of two vs (exact) when max|V| > VBIG (float64:
 * 2^500, as the text layout of the command; float32: 2^64, so that the
 * float backward's pair coefficients dH.v stay far inside float's range);
 * H, dQ, dK and dR are linear in V and are multiplied back, dV does not
 * depend on V. A row whose H still does not fit the dtype is flagged (NaN). */
static double v_scale(const attn_fjob *J, const void *V, int f32) {
  double vmax = 0;
  for (size_t bh = 0; bh < J->B * J->H; bh++)
    for (size_t j = 0; j < J->Lk; j++) {
      const size_t o = attn_fjob_xoff(J, J->vs, bh) + j * J->vs[2];
      for (size_t c = 0; c < J->Dv; c++)
        vmax = fmax(vmax, fabs(f32 ? (double)((const float *)V)[o + c] : ((const double *)V)[o + c]));
    }
  if (!(vmax > (f32 ? 0x1p64 : 0x1p500))) return 1.0;
  int e;
  frexp(vmax, &e);
  return ldexp(1.0, e - 1);
}
/* V / vs into a new array in the layout's own strides, which J then reads
 * (J->vs reset); NULL when out of memory. */
static void *v_scaled(attn_fjob *J, const void *V, double vs, int f32) {
  attn_fjob Jd = *J;
  attn_fjob_default_strides(&Jd);
  const size_t n = J->B * J->H * J->Lk * J->Dv;
  void *y = gfi_malloc2(n, f32 ? sizeof(float) : sizeof(double));
  if (!y) return NULL;
  for (size_t bh = 0; bh < J->B * J->H; bh++)
    for (size_t j = 0; j < J->Lk; j++) {
      const size_t o = attn_fjob_xoff(J, J->vs, bh) + j * J->vs[2], od = attn_fjob_xoff(&Jd, Jd.vs, bh) + j * Jd.vs[2];
      for (size_t c = 0; c < J->Dv; c++) {
        if (f32)
          ((float *)y)[od + c] = ((const float *)V)[o + c] / (float)vs;
        else
          ((double *)y)[od + c] = ((const double *)V)[o + c] / vs;
      }
    }
  memcpy(J->vs, Jd.vs, sizeof J->vs);
  return y;
}

/* H *= vs; rows with a non-finite entry (not already flagged) become
 * flagged rows. */
static void unscale_rows(const attn_fjob *J, size_t rows, size_t Dv, double vs, int f32, void *Hout,
                         double *stat) {
  for (size_t r = 0; r < rows; r++) {
    int bad = 0;
    const size_t m = attn_fjob_qrow(J, r);
    if (f32) {
      float *h = (float *)Hout + m * Dv;
      for (size_t c = 0; c < Dv; c++) {
        h[c] = (float)((double)h[c] * vs);
        bad |= isinf(h[c]);
      }
      if (bad)
        for (size_t c = 0; c < Dv; c++) h[c] = NAN;
    } else {
      double *h = (double *)Hout + m * Dv;
      for (size_t c = 0; c < Dv; c++) {
        h[c] *= vs;
        bad |= isinf(h[c]);
      }
      if (bad)
        for (size_t c = 0; c < Dv; c++) h[c] = NAN;
    }
    if (bad) stat[2 * r + 1] = NAN;
  }
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
    float *Rf = gfi_malloc2(H * D, sizeof *Rf), *Vs = NULL;
    st = Rf ? load_inputs32(s, &J, Q, K, V, R, Rf, Rd) : GFI_ENOMEM;
    double *ratio = Rd + H * D, *stat = saved ? saved : ratio + rows;
    const double vs = st ? 1.0 : v_scale(&J, V, 1);
    if (vs != 1.0) {
      Vs = v_scaled(&J, V, vs, 1);
      if (!Vs) st = GFI_ENOMEM;
      J.Vf = Vs;
    }
    const int poly = attn_fjob_poly(&J);
    if (!st && !poly) st = attn_fjob_forward32(&J, Hout, stat, ratio);
    if (!st) st = redo_forward64(&J, Hout, stat, ratio, poly);
    if (!st && vs != 1.0) unscale_rows(&J, rows, Dv, vs, 1, Hout, stat);
    if (!st) st = report(stat, ratio, rows, info);
    free(Vs);
    free(Rf);
    free(Rd);
    return st;
  }
  st = load_inputs(s, &J, Q, K, V, R, Rd);
  double *ratio = Rd + H * D, *stat = saved ? saved : ratio + rows, *Vs = NULL;
  const double vs = st ? 1.0 : v_scale(&J, V, 0);
  if (vs != 1.0) {
    Vs = v_scaled(&J, V, vs, 0);
    if (!Vs) st = GFI_ENOMEM;
    J.V = Vs;
  }
  if (!st) st = attn_fjob_forward(&J, Hout, stat, ratio);
  if (!st && vs != 1.0) unscale_rows(&J, rows, Dv, vs, 0, Hout, stat);
  if (!st) st = report(stat, ratio, rows, info);
  free(Vs);
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

/* The statistics row of memory row m of a Q-side array. */
static size_t qrow_inv(const attn_fjob *J, size_t m) {
  const size_t BH = J->B * J->H;
  return J->lbhd ? (m % BH) * J->Lq + m / BH : m;
}

/* Gradients outside flagged rows (dQ rows whose statistics are NaN, when
 * stat is given) must be finite: an overflow is GFI_ERANGE, never an inf. */
static int grads_finite64(const attn_fjob *J, const double *x, size_t n, const double *stat, size_t D) {
  for (size_t a = 0; a < n; a++)
    if (!isfinite(x[a]) && !(stat && isnan(stat[2 * qrow_inv(J, a / D) + 1]))) return 0;
  return 1;
}
static int grads_finite32(const attn_fjob *J, const float *x, size_t n, const double *stat, size_t D) {
  for (size_t a = 0; a < n; a++)
    if (!isfinite(x[a]) && !(stat && isnan(stat[2 * qrow_inv(J, a / D) + 1]))) return 0;
  return 1;
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
  const size_t nv = BH * Lk * Dv, nq = rows * D, nk = BH * Lk * D, nh = rows * Dv;
  if (s->dtype == GFI_ATTN_F32) {
    float *Rf = gfi_malloc2(H * D, sizeof *Rf), *Vs = NULL, *Hs = NULL;
    st = Rf ? load_inputs32(s, &J, Q, K, V, R, Rf, Rd) : GFI_ENOMEM;
    if (!st) st = fail_named(finite_f(dH, rows * Dv), "dH");
    J.dHf = dH;
    const double vs = st ? 1.0 : v_scale(&J, V, 1);
    const float *Hin = Hout;
    if (vs != 1.0) {
      Vs = v_scaled(&J, V, vs, 1);
      Hs = gfi_malloc2(nh, sizeof *Hs);
      if (!Vs || !Hs) st = GFI_ENOMEM;
      for (size_t a = 0; !st && a < nh; a++) Hs[a] = ((const float *)Hout)[a] / (float)vs;
      J.Vf = Vs;
      Hin = Hs;
    }
    const int poly = attn_fjob_poly(&J);
    if (!st && !poly) st = attn_fjob_backward32(&J, Hin, saved, dQ, dK, dV, dRrow);
    if (!st) st = redo_backward64(&J, Hin, saved, dQ, dK, dV, dRrow, poly);
    if (!st) {
      reduce_dR(s, B, H, Lq, D, np, nR, dRrow, dr);
      float *dq = dQ, *dk = dK, *drf = dR;
      for (size_t r = 0; r < rows; r++)
        if (saved[2 * r] == -INFINITY)
          for (size_t d = 0; d < D; d++) dq[attn_fjob_qrow(&J, r) * D + d] = isnan(saved[2 * r + 1]) ? NAN : 0.0f;
      for (size_t k = 0; k < nR; k++) drf[k] = (float)(dr[k] * vs);
      if (vs != 1.0) {
        for (size_t a = 0; a < nq; a++) dq[a] = (float)((double)dq[a] * vs);
        for (size_t a = 0; a < nk; a++) dk[a] = (float)((double)dk[a] * vs);
      }
      st = report(saved, NULL, rows, info);
      if (!grads_finite32(&J, dq, nq, saved, D) || !grads_finite32(&J, dk, nk, NULL, 0) ||
          !grads_finite32(&J, dV, nv, NULL, 0) || !grads_finite32(&J, drf, nR, NULL, 0))
        st = GFI_ERANGE;
    }
    free(Vs);
    free(Hs);
    free(Rf);
    free(Rd);
    return st;
  }
  st = load_inputs(s, &J, Q, K, V, R, Rd);
  if (!st) st = fail_named(gfi_check_finite(dH, rows * Dv, NULL), "dH");
  const double vs = st ? 1.0 : v_scale(&J, V, 0);
  const double *Hin = Hout;
  double *Vs = NULL, *Hs = NULL;
  if (vs != 1.0) {
    Vs = v_scaled(&J, V, vs, 0);
    Hs = gfi_malloc2(nh, sizeof *Hs);
    if (!Vs || !Hs) st = GFI_ENOMEM;
    for (size_t a = 0; !st && a < nh; a++) Hs[a] = ((const double *)Hout)[a] / vs;
    J.V = Vs;
    Hin = Hs;
  }
  if (!st) st = attn_fjob_backward(&J, Hin, saved, dH, dQ, dK, dV, dRrow);
  if (!st) {
    reduce_dR(s, B, H, Lq, D, np, nR, dRrow, dr);
    /* empty rows: zero dQ rows when written as zeros, NaN otherwise */
    double *dq = dQ, *dk = dK;
    for (size_t r = 0; r < rows; r++)
      if (saved[2 * r] == -INFINITY)
        for (size_t d = 0; d < D; d++) dq[attn_fjob_qrow(&J, r) * D + d] = isnan(saved[2 * r + 1]) ? NAN : 0.0;
    for (size_t k = 0; k < nR; k++) dr[k] *= vs;
    if (vs != 1.0) {
      for (size_t a = 0; a < nq; a++) dq[a] *= vs;
      for (size_t a = 0; a < nk; a++) dk[a] *= vs;
    }
    memcpy(dR, dr, nR * sizeof *dr);
    st = report(saved, NULL, rows, info);
    if (!grads_finite64(&J, dq, nq, saved, D) || !grads_finite64(&J, dk, nk, NULL, 0) ||
        !grads_finite64(&J, dV, nv, NULL, 0) || !grads_finite64(&J, dr, nR, NULL, 0))
      st = GFI_ERANGE;
  }
  free(Vs);
  free(Hs);
  free(Rd);
  return st;
}
