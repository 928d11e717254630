/* Private layout of an attention plan and the engine entry points shared by
 * attention.c (API, validation, diagnostics) and the kernel files. */
#ifndef GFI_ATTENTION_INTERNAL_H
#define GFI_ATTENTION_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "gfi/attention.h"
#include "gfi/rng.h"

struct gfi_attn_plan {
  gfi_attn_spec spec; /* Fourier: spec.kernel is phi (attn_check_kernel) */
  size_t L, D, Dv;
  size_t Lp;      /* L rounded up to a multiple of 8: stride of the structure-of-arrays tables */
  size_t nparam;  /* 1 or D */
  int nthreads;
};

/* One Fourier attention job: B x H heads, each with Lq queries and Lk keys,
 * in float64 (the API converts float32 storage). Q (B,H,Lq,D), K (B,H,Lk,D),
 * V (B,H,Lk,Dv) contiguous; Rd: H x D radii. Masks (nonzero = excluded):
 * kpad B x Lk, mask mask_B x Lq x Lk (mask_B 1 or B); either may be NULL.
 * Causal: query i sees keys j <= i + off, off = Lk - Lq. */
typedef struct attn_fjob {
  size_t B, H, Lq, Lk, D, Dv;
  /* kern: phi, a power or a polynomial (attn_check_kernel). l is derived from
   * it by attn_fjob_set_kernel: the power of a power kernel (the power
   * engines' exponent), 1 for a polynomial, whose row scale is 2^E_i
   * (attention_fourier_poly.c). */
  const gfi_kernel *kern;
  int l, causal, empty_zero, per_axis; /* per_axis: dR partials per axis (else summed) */
  double eps, denom_tol;
  const double *Q, *K, *V, *Rd;
  /* float32 engine (attention_fourier32.c): the caller's float arrays, the
   * H x D radii as float (Rd holds the same values as double) and dH */
  const float *Qf, *Kf, *Vf, *Rf, *dHf;
  const unsigned char *kpad, *mask;
  size_t mask_B;
  int nthreads;
  /* lbhd = 1: Q, K, V, H, dH and the gradients are (L, B, H, W) arrays
   * (FourierFormer's [len, batch, head, dim]) instead of (B, H, L, W): head
   * bh's row i is at (i B H + bh) W instead of (bh L + i) W (see
   * attn_fjob_hoff); statistics stay in (b H + h) Lq + i order. */
  int lbhd;
  /* attention dropout (drop_thr > 0): the normalised weight of pair (i, j)
   * of head bh is kept, times keep_scale = 1 / (1 - p), when the Philox
   * word of (seed; counter j / 4, i, bh0 + bh) number j mod 4 is >= drop_thr
   * = p 2^32 (attn_fjob_drop_lanes); bh0: the head's number in the caller's
   * batch (a one-head job cut from it keeps its masks). */
  uint32_t drop_thr, drop_key[2];
  double keep_scale;
  size_t bh0;
  /* Element strides of the inputs Q, K, V along (b, h, row); the last axis
   * is contiguous. attn_fjob_default_strides sets those of the layout. */
  size_t qs[3], ks[3], vs[3];
} attn_fjob;

/* Fourier attention's phi: a power z^l (l = 1..8) or a polynomial
 * sum_j a_j z^j, j = 1..deg (deg = k->l in 1..8), coefficients of either
 * sign, finite, a_0 = 0 and a_deg != 0 (A is not used: it cancels). Anything
 * else is refused by status (GFI_EUNSUPPORTED for the flat-top and a custom
 * phi; GFI_EORDER, GFI_EINVAL, GFI_ENONFINITE) with the parameter "kernel". */
int attn_check_kernel(const gfi_kernel *k);
/* 1 when J's phi is a polynomial: the per-pair engine of
 * attention_fourier_poly.c (float64) serves it, for float32 storage too. */
static inline int attn_fjob_poly(const attn_fjob *J) { return J->kern && J->kern->kind == GFI_PHI_POLY; }
/* J->kern = k (checked) and the power l the power engines use. */
static inline void attn_fjob_set_kernel(attn_fjob *J, const gfi_kernel *k) {
  J->kern = k;
  J->l = k->kind == GFI_PHI_POW ? k->l : 1;
}

/* The input strides of Q, K, V as the layout (lbhd) lays them out. */
static inline void attn_fjob_default_strides(attn_fjob *J) {
  const size_t H = J->H, BH = J->B * J->H;
  const size_t L[3] = {J->Lq, J->Lk, J->Lk}, W[3] = {J->D, J->D, J->Dv};
  size_t *s[3] = {J->qs, J->ks, J->vs};
  for (int a = 0; a < 3; a++) {
    s[a][0] = J->lbhd ? H * W[a] : H * L[a] * W[a];
    s[a][1] = J->lbhd ? W[a] : L[a] * W[a];
    s[a][2] = J->lbhd ? BH * W[a] : W[a];
  }
}
/* Element offset of head bh's first row in an input of strides s. */
static inline size_t attn_fjob_xoff(const attn_fjob *J, const size_t *s, size_t bh) {
  return (bh / J->H) * s[0] + (bh % J->H) * s[1];
}

/* z[b] = keep_scale or 0 for keys j0 + b, b < nb, of row i of head bh. */
#define ATTN_DEFINE_DROP_LANES(name, T)                                                             \
  static inline void name(const attn_fjob *J, size_t bh, size_t i, size_t j0, size_t nb, T *z) {   \
    uint32_t out[4];                                                                                \
    const uint64_t h = (uint64_t)(J->bh0 + bh);                                                     \
    for (size_t b = 0; b < nb; b++) {                                                               \
      const size_t j = j0 + b;                                                                      \
      if (b == 0 || j % 4 == 0) {                                                                   \
        const uint32_t ctr[4] = {(uint32_t)(j / 4), (uint32_t)i, (uint32_t)h, (uint32_t)(h >> 32)}; \
        gfi_philox4x32_10(ctr, J->drop_key, out);                                                   \
      }                                                                                             \
      z[b] = out[j % 4] >= J->drop_thr ? (T)J->keep_scale : (T)0;                                   \
    }                                                                                               \
  }

/* Head bh's first row of an array of L rows per head, and the step between
 * its rows, both in rows (multiply by the row width). */
static inline size_t attn_fjob_hoff(const attn_fjob *J, size_t bh, size_t L) { return J->lbhd ? bh : bh * L; }
static inline size_t attn_fjob_rs(const attn_fjob *J) { return J->lbhd ? J->B * J->H : 1; }
/* The memory row of statistics row r = bh Lq + i of a Q-side array. */
static inline size_t attn_fjob_qrow(const attn_fjob *J, size_t r) {
  return J->lbhd ? (r % J->Lq) * J->B * J->H + r / J->Lq : r;
}

/* Forward: H (B,H,Lq,Dv); stat 2 per row (E_i, T~_i) with T~_i the scaled
 * denominator S~_i + eps 2^(-l E_i), NaN for a flagged row, +inf for an empty
 * row written as zeros (empty_zero), E_i = -inf for a row that sees no key;
 * ratio 1 per row (S_i / A_i, 0 when A_i = 0, 1 for an empty-zero row).
 * Backward: dQ, dK, dV, and dRrow (per row: D values when per_axis, else 1).
 * Both return GFI_OK or GFI_ENOMEM. */
int attn_fjob_forward(const attn_fjob *J, double *Hout, double *stat, double *ratio);
int attn_fjob_backward(const attn_fjob *J, const double *H, const double *stat, const double *dH,
                       double *dQ, double *dK, double *dV, double *dRrow);

/* The polynomial phi's engine (attention_fourier_poly.c), same contract as
 * the two above; attn_fjob_forward / attn_fjob_backward pass it the jobs
 * whose phi is a polynomial. */
int attn_fjob_forward_poly(const attn_fjob *J, double *Hout, double *stat, double *ratio);
int attn_fjob_backward_poly(const attn_fjob *J, const double *H, const double *stat, const double *dH,
                            double *dQ, double *dK, double *dV, double *dRrow);

/* The same in float32 (Qf, Kf, Vf, Rf, Rd; backward also dHf): H, dQ, dK, dV
 * float, statistics and dRrow double. GFI_OK or GFI_ENOMEM. */
int attn_fjob_forward32(const attn_fjob *J, float *Hout, double *stat, double *ratio);
int attn_fjob_backward32(const attn_fjob *J, const float *H, const double *stat, float *dQ, float *dK,
                         float *dV, double *dRrow);
/* Key chunks per head of the backward (fixed by the shape). */
size_t attn_fjob_key_chunks(size_t BH, size_t Lk);

/* What the float64 and float32 engines share about a job. */
static inline size_t attn_round8(size_t n) { return (n + 7) / 8 * 8; }
/* Keys query i sees by the causal rule: [0, key_end), j <= i + Lk - Lq. */
static inline size_t attn_fjob_key_end(const attn_fjob *J, size_t i) {
  if (!J->causal) return J->Lk;
  size_t e = i + 1 + J->Lk; /* i + 1 + Lk - Lq <= Lk since i < Lq */
  return e <= J->Lq ? 0 : e - J->Lq;
}
/* First query that sees key j by the causal rule (Lq or more: none). */
static inline size_t attn_fjob_query_begin(const attn_fjob *J, size_t j) {
  if (!J->causal) return 0;
  size_t a = j + J->Lq;
  return a <= J->Lk ? 0 : a - J->Lk;
}
/* Row i's general-mask row in head bh, or NULL. */
static inline const unsigned char *attn_fjob_mask_row(const attn_fjob *J, size_t bh, size_t i) {
  if (!J->mask) return NULL;
  size_t b = J->mask_B == 1 ? 0 : bh / J->H;
  return J->mask + (b * J->Lq + i) * J->Lk;
}
static inline const unsigned char *attn_fjob_kpad_row(const attn_fjob *J, size_t bh) {
  return J->kpad ? J->kpad + (bh / J->H) * J->Lk : NULL;
}
/* mk[b] = 0 for an excluded key j0 + b, else 1 (in the engine's type T);
 * returns the visible count. */
#define ATTN_DEFINE_MASK_LANES(name, T)                                                            \
  static inline size_t name(const unsigned char *kp, const unsigned char *mr, size_t j0, size_t nb, \
                            T *mk) {                                                               \
    size_t n = 0;                                                                                  \
    for (size_t b = 0; b < nb; b++) {                                                              \
      int x = (kp && kp[j0 + b]) || (mr && mr[j0 + b]);                                            \
      mk[b] = x ? (T)0 : (T)1;                                                                     \
      n += !x;                                                                                     \
    }                                                                                              \
    return n;                                                                                      \
  }
/* A finished forward row's statistics (see attn_fjob_forward): sets ratio
 * and st; returns 0 for a row that sees no key (H row: 0 with empty_zero,
 * else NaN), 1 for a flagged row (H row NaN), 2 with *inv = 1 / T~ (H row
 * N * inv). */
static inline int attn_fjob_row_stats(const attn_fjob *J, size_t nvis, double E, double S, double A,
                                      double *st, double *ratio, double *inv) {
  if (nvis == 0) {
    *ratio = J->empty_zero ? 1.0 : 0.0;
    st[0] = -INFINITY;
    st[1] = J->empty_zero ? INFINITY : NAN;
    return 0;
  }
  *ratio = A > 0 ? S / A : 0.0;
  st[0] = E;
  /* eps in the row's scale 2^(l E): eps 2^(-l E) (inf past the range: H -> 0) */
  double T = S + (J->eps > 0 ? ldexp(J->eps, (int)(-(double)J->l * E)) : 0.0);
  /* eps = 0: flagged when S lost its digits (S <= tol A) or every weight
   * is 0. eps > 0: N / (S + eps) is defined whenever S + eps > tol A, also
   * for A = 0 (then H = 0): flagged only when S + eps cancels. */
  if (J->eps > 0 ? !(T > J->denom_tol * A) : (!(S > J->denom_tol * A) || !(A > 0))) {
    st[1] = NAN;
    return 1;
  }
  *inv = 1.0 / T;
  st[1] = T;
  return 2;
}

/* Gauss engine. sigma one bandwidth; stat 2 L doubles (E_i, S~_i), S~_i = NaN
 * for a flagged row; ratio L doubles. dsrow: L scratch. GFI_OK or GFI_ENOMEM. */
int attn_gauss_forward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                       double sigma, double *H, double *stat, double *ratio);
int attn_gauss_backward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                        double sigma, const double *H, const double *stat, const double *dH,
                        double *dQ, double *dK, double *dV, double *dsrow);

/* Keys (or queries) a row sees: [0, L) or, causal, [0, i] (and for the key
 * pass, queries [j, L)). */
static inline size_t attn_key_end(const gfi_attn_plan *p, size_t i) {
  return p->spec.causal ? i + 1 : p->L;
}
static inline size_t attn_query_begin(const gfi_attn_plan *p, size_t j) {
  return p->spec.causal ? j : 0;
}

/* Finish row i of the forward from the scaled numerator N (Dv), denominator
 * S and absolute sum A: H row and stat (E, S~), ratio. */
static inline void attn_finish_row(const gfi_attn_plan *p, size_t i, double E, double S, double A,
                                   const double *N, double *H, double *stat, double *ratio) {
  const size_t Dv = p->Dv;
  double *h = H + i * Dv;
  ratio[i] = A > 0 ? S / A : 0.0;
  if (!(S > p->spec.denom_tol * A) || !(A > 0)) {
    for (size_t c = 0; c < Dv; c++) h[c] = NAN;
    stat[2 * i] = E;
    stat[2 * i + 1] = NAN;
    return;
  }
  double inv = 1.0 / S;
  for (size_t c = 0; c < Dv; c++) h[c] = N[c] * inv;
  stat[2 * i] = E;
  stat[2 * i + 1] = S;
}

static inline double attn_dot(const double *a, const double *b, size_t n) {
  double s = 0;
  for (size_t c = 0; c < n; c++) s += a[c] * b[c];
  return s;
}

#endif
