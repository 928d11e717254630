/* Fourier attention (FourierFormer eq. 15) and Gaussian-kernel attention
 * (eq. 6-8): forward and exact backward.
 *
 *   H_i = sum_j w_ij v_j / sum_j w_ij,     i = 0..L-1, j over all keys
 *                                          (causal: j <= i only)
 *   Fourier:  w_ij = prod_d phi(sinc(R_d (q_id - k_jd)))      (phi = z^l, or
 *             a polynomial: see "Polynomial phi" below)
 *   Gaussian: w_ij = exp(-|q_i - k_j|^2 / (2 sigma^2))
 *
 * Q and K are L x D, V is L x Dv, H is L x Dv, all row-major. R is one radius
 * (scalar: R_d = R for every axis) or D radii (per axis, eq. 54); sigma is one
 * bandwidth. With keys of equal norm the Gaussian weights differ from
 * exp(q_i.k_j / sigma^2) by a factor constant in each row, so Gaussian
 * attention is softmax(Q K^T / sigma^2) V there (sigma^2 = sqrt(D) gives
 * scaled dot-product attention).
 *
 * Scaled form. With D = 64..256 axes the products under- or overflow double
 * precision long before the ratio stops making sense. The engine therefore
 * keeps each w_ij as a mantissa and a binary exponent and divides every row by
 * the common factor c_i = 2^(l E_i), E_i the largest exponent of
 * prod_d sinc(...) over the row's keys (Gaussian: c_i = max_j w_ij, as a
 * max-shifted softmax). H is invariant to c_i; the saved row statistics are
 * E_i and the scaled denominator S~_i = sum_j w_ij / c_i. Weights more than
 * 2^-1022 below the row's largest are flushed to zero (a relative change of
 * the row below 2^-1022 * L). No L x L matrix is ever formed: the backward
 * recomputes the weights from Q, K and the saved statistics (as flash
 * attention does).
 *
 * Denominators. For even l every weight is >= 0; for odd l weights can be
 * negative and sum_j w_ij can vanish or change sign. With S_i = sum_j w_ij and
 * A_i = sum_j |w_ij| (both over the keys row i sees), row i is FLAGGED when
 *
 *     S_i <= denom_tol * A_i        (default denom_tol = 1e-8 ~ sqrt(eps))
 *
 * which includes S_i <= 0 and the empty neighbourhood A_i = 0 (every weight
 * exactly 0, possible for any l). Below that threshold the ratio has lost at
 * least half of its digits to cancellation. A flagged row of H is NaN, its
 * saved S~_i is NaN, the call returns GFI_EDENOM and reports the count in
 * info; all other rows are computed normally. The backward treats a flagged
 * row as if its dH were zero for dK, dV and dR, writes NaN into its dQ row and
 * also returns GFI_EDENOM. Gaussian rows are never flagged (their largest
 * scaled weight is 1).
 *
 * Gradients. For a loss with dL/dH = dH, the backward returns dQ (L x D),
 * dK (L x D), dV (L x Dv) and dR (1 value for a scalar radius: the sum over
 * axes; D values per axis; Gaussian: d/dsigma). The derivative of one factor
 * is l sinc^(l-1)(u) sinc'(u), sinc'(u) = (cos u - sinc u)/u with its Taylor
 * series for |u| < 0.5; the derivative of the product over axes uses prefix
 * and suffix products of the other factors (in the same scaled form), never a
 * quotient by sinc, so it is exact at zeros of a factor (where the weight is
 * 0 but, for l = 1, its gradient is not) and at q_d = k_d.
 *
 * Evaluation. No sin in the inner loop: sin and cos of R_d q_id and R_d k_jd
 * are computed once per call and sin(u) = sin(a) cos(b) - cos(a) sin(b),
 * cos(u) = cos(a) cos(b) + sin(a) sin(b), with the series near u = 0. OpenMP
 * runs over tiles of 16 query rows (forward) and over C key chunks (backward,
 * C = 1..8 fixed by the shape alone); every output entry is a sum in a fixed
 * order, so results are identical bit for bit for any thread count. SIMD
 * runs over blocks of keys.
 *
 * Phases (float64): R_d q and R_d k are held in two parts (the rounded
 * product and its exact rounding error, by fma) with sin and cos of the
 * exact product, and a pair's u = R_d (q - k) is formed from the parts, so
 * that q and k far from 0 lose nothing: with q, k near 1e6 and R ~ 100, the
 * rounded products alone moved H by 1e-8 and the gradients by 2e-7.
 *
 * Memory (besides the caller's arrays). Forward: 4 L D doubles of phase and
 * sine/cosine tables plus per thread O(D + Dv + 64). Backward: 8 L D + 2 L doubles
 * (tables for queries and keys, row terms) and C L (D + nR) doubles of
 * per-chunk partial dQ and dR rows, plus per thread O(D (16 + L / C)) (the
 * chunk's dK being summed). Saved statistics: gfi_attn_saved_size() = 2 L
 * doubles. Nothing is O(L^2). The backward makes one pass over the (query,
 * key) pairs: for each block of pairs it recomputes the factors, their
 * derivatives and the prefix/suffix products once and takes dQ, dK, dV and
 * dR from them (dK and dV summed by the task that owns the key chunk, dQ and
 * dR per chunk, the chunks then summed in chunk order: no atomics). It costs
 * about three forwards (bench/bench_attention and bench_attention_batch print
 * the ratio).
 *
 * Range. A gradient term is scaled by one power of two clamped to
 * 2^(+-1023); it saturates instead of overflowing only where the true
 * gradient of a row exceeds about 2^1000 times its scale (l = 1, a factor
 * exactly at a zero of sinc, and every other factor 2^1000 larger than the
 * row's largest weight).
 *
 * Polynomial phi (spec.kernel of kind GFI_PHI_POLY): phi(z) = sum_j a_j z^j,
 * j = 1..deg (deg = kernel.l, 1..8, a_j = kernel.coef[j], a_0 = 0,
 * a_deg != 0). Coefficients of either sign are accepted here (A cancels in
 * the ratio): gfi_kernel_poly and gfi_kernel_parse make those with a_j >= 0,
 * and a signed one is made by setting kind, l and coef[] directly. phi may
 * then be 0 or negative anywhere, so weights and row sums of either sign
 * occur for any degree and the denominator rule above (denom_tol, flagged
 * rows NaN, GFI_EDENOM) applies as for odd l. Its engine
 * (estimators/attention_fourier_poly.c) is a plain per-pair loop in float64:
 * u_d = R_d (q_d - k_d), sin and cos from libm per factor, the product over
 * axes renormalised after every factor (mantissa and exponent), the row's
 * common factor 2^E_i with E_i the largest exponent of its nonzero weights
 * (saved as E_i; T~_i = (S_i + eps) 2^-E_i); the gradient from phi' and
 * prefix/suffix products of the other factors, never a quotient. The
 * backward makes two passes over the pairs (queries: dQ, dR; keys: dK, dV),
 * each output a sum in a fixed order, so the bits do not depend on the
 * thread count. float32 storage (batched dtype GFI_ATTN_F32) runs the same
 * float64 engine on the float inputs, head by head, and rounds the outputs
 * to float: they are the float64 values on the same inputs to within one
 * rounding (within the float32 bound stated below). Cost: D sin and cos
 * per pair and pass (the power engines: none, vectorised); memory per thread
 * 3 Lk + Dv doubles and Lk ints (forward), 5 D doubles (backward), plus
 * 2 B H Lq doubles. phi = z^l given as a polynomial reproduces the power
 * engine's H and gradients to about 1e-14 of each array's largest entry
 * (tests/test_attention_poly.c).
 *
 * Thread safety: a plan is immutable after creation; forward and backward on
 * a const plan may run from several threads at once. The plan keeps no
 * pointer to caller arrays. */
#ifndef GFI_ATTENTION_H
#define GFI_ATTENTION_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "status.h"
#include "opts.h"
#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GFI_ATTN_FOURIER = 1, GFI_ATTN_GAUSS = 2 } gfi_attn_kind;

/* What to compute. Initialise with gfi_attn_default_spec; fields are only
 * ever added. */
typedef struct gfi_attn_spec {
  gfi_attn_kind kind; /* GFI_ATTN_FOURIER (default) or GFI_ATTN_GAUSS */
  gfi_kernel kernel;  /* Fourier: phi, a power kernel z^l, l = 1..8 (default
                       * pow:4, FourierFormer's: the engine factorises the
                       * weight as (prod_d sinc)^l) or a polynomial (above).
                       * Flat-top and custom: GFI_EUNSUPPORTED ("kernel") */
  int per_axis_R;     /* Fourier: 1 = D radii, 0 = one radius (default 0) */
  int causal;         /* 1: row i sees keys j <= i only (default 0) */
  double denom_tol;   /* flag threshold above (default 1e-8; 0 <= tol < 1) */
} gfi_attn_spec;

GFI_EXPORT void gfi_attn_default_spec(gfi_attn_spec *s);

/* Diagnostics of one forward or backward call. */
typedef struct gfi_attn_info {
  size_t nflagged;      /* rows flagged (their H rows are NaN) */
  size_t first_flagged; /* index of the first flagged row; L when none */
  double min_ratio;     /* min over rows of S_i / A_i (1 when every weight >= 0) */
  size_t nempty;        /* rows that see no key (masks, causal offset); batched calls only */
  size_t first_empty;   /* index of the first such row; the row count when none */
} gfi_attn_info;

typedef struct gfi_attn_plan gfi_attn_plan;

/* Plan for sequences of length L with D query/key axes and Dv value axes.
 * Errors: GFI_EINVAL (NULL, bad kind or denom_tol), GFI_EEMPTY (L = 0),
 * GFI_EDIM (D or Dv outside 1..GFI_MAX_DIM, or L*D too large),
 * GFI_EORDER (Fourier l or degree outside 1..8), GFI_EUNSUPPORTED (a flat-top
 * or custom kernel), GFI_EINVAL or GFI_ENONFINITE (a polynomial with a_0 != 0,
 * a_deg = 0 or a coefficient not finite), GFI_ENOMEM; the parameter named
 * by gfi_error_param is "kernel" for all of the kernel's. */
GFI_EXPORT int gfi_attn_plan_create(gfi_attn_plan **plan, const gfi_attn_spec *spec, size_t L, size_t D,
                         size_t Dv, const gfi_opts *opts);

/* Number of kernel-scale parameters: D (per-axis R), else 1 (R or sigma). */
GFI_EXPORT size_t gfi_attn_nparam(const gfi_attn_plan *plan);
/* Doubles the caller provides for the saved row statistics: 2 L. */
GFI_EXPORT size_t gfi_attn_saved_size(const gfi_attn_plan *plan);

/* Forward. R: gfi_attn_nparam() values, all finite and > 0 (radii, or sigma).
 * H: L x Dv output. saved: gfi_attn_saved_size() doubles written for the
 * backward, or NULL. info may be NULL. Returns GFI_OK, GFI_EDENOM when some
 * rows are flagged (see above; the others are valid), or an error before
 * anything is written: GFI_EINVAL, GFI_ENONFINITE, GFI_ERADIUS
 * (GFI_EBANDWIDTH for sigma), GFI_ENOMEM. V beyond 2^500 is divided by a
 * power of two inside the call (exact) and H (in the backward dQ, dK, dR)
 * multiplied back, so no sum overflows; a row of H that does not fit a
 * double is flagged (NaN), an overflowing gradient is GFI_ERANGE. */
GFI_EXPORT int gfi_attn_forward(const gfi_attn_plan *plan, const double *Q, const double *K, const double *V,
                     const double *R, double *H, double *saved, gfi_attn_info *info);

/* Backward for a given dH (L x Dv): Q, K, V, R as in the forward, H and saved
 * as the forward wrote them. Writes dQ (L x D), dK (L x D), dV (L x Dv) and
 * dR (gfi_attn_nparam() values). Returns GFI_OK, GFI_EDENOM (flagged rows,
 * see above) or an error before anything is written (GFI_EINVAL,
 * GFI_ENONFINITE in the inputs or dH, GFI_ERADIUS, GFI_ENOMEM). */
GFI_EXPORT int gfi_attn_backward(const gfi_attn_plan *plan, const double *Q, const double *K,
                      const double *V, const double *R, const double *H, const double *saved,
                      const double *dH, double *dQ, double *dK, double *dV, double *dR,
                      gfi_attn_info *info);

GFI_EXPORT void gfi_attn_destroy(gfi_attn_plan *plan);

/* ---- batched Fourier attention: heads, masks, memory keys, float32 ----
 *
 * The same engine as above (one code path), over a batch of B x H heads:
 *   Q (B, H, Lq, D), K (B, H, Lk, D), V (B, H, Lk, Dv), H (B, H, Lq, Dv),
 * contiguous row-major (C order), Lq and Lk independent (Transformer-XL
 * memory: the keys are the memory then the current segment). Rows are
 * numbered r = (b H + h) Lq + i in info and the saved statistics.
 *
 * Keys query i of batch row b sees: every j < Lk, except
 *   - causal: j > i + Lk - Lq (the causal mask offset by the memory length;
 *     with Lq > Lk the first Lq - Lk rows see no key);
 *   - key_pad (B x Lk bytes, may be NULL): key_pad[b Lk + j] != 0 (a padded
 *     key, as PyTorch's key_padding_mask = True);
 *   - mask (mask_batch x Lq x Lk bytes, may be NULL; mask_batch 1 or B):
 *     mask[(b' Lq + i) Lk + j] != 0, b' = 0 or b (nonzero = excluded).
 * An excluded key has weight exactly 0 and no gradient. A row that sees no
 * key (an empty row) is counted in info->nempty / first_empty; it is written
 * as NaN with GFI_EDENOM (like a flagged row, default) or, with
 * empty_zero = 1, as zeros (with zero gradients) and GFI_OK.
 *
 * R: one radius (GFI_ATTN_R_SCALAR), one per head (R[h], GFI_ATTN_R_HEAD) or
 * one per head and axis (R[h D + d], GFI_ATTN_R_HEAD_AXIS); dR has the same
 * layout, the gradient summed over everything that shares the radius, in a
 * fixed order (batch, then rows, then axes).
 *
 * Normalisation: H_i = N_i / (S_i + eps). eps = 0 (default) is the exact
 * ratio; eps = 1e-6 reproduces FourierFormer's published code (its `+ 1e-6`
 * in the denominator), which shifts every output by a relative -eps/S_i.
 * The eps enters in the row's scale (eps 2^(-l E_i)), the gradients are
 * exact for it too. With eps = 0 rows are flagged by S_i and A_i as above;
 * with eps > 0 a row is flagged only when S_i + eps <= denom_tol A_i (S_i
 * cancelling eps, odd l): a row whose weights all vanish (A_i = 0) is H = 0.
 *
 * Attention dropout (dropout = p > 0), as FourierFormer's dropatt and
 * nn.MultiheadAttention's dropout act on the normalised weights: H_i =
 * sum_j (w_ij / (S_i + eps)) z_ij v_j, z_ij = 0 with probability p, else
 * 1 / (1 - p). The mask is counter based, never stored: z_ij is a function
 * of (seed, b H + h, i, j) alone (Philox4x32-10, gfi/rng.h: key = seed,
 * counter (j / 4, i, b H + h), word j mod 4 kept when >= p 2^32), so the
 * backward, given the same spec, regenerates it, and a call gives the same
 * bits for any thread count. The gradients are exact for the masked sum.
 *
 * Large values: V is divided by a power of two (exact) when max|V| exceeds
 * 2^500 (float64) or 2^64 (float32), and H, dQ, dK and dR are multiplied
 * back, so no sum overflows; a row of H that does not fit the dtype is
 * flagged (NaN, GFI_EDENOM), a gradient that does not is GFI_ERANGE (never
 * an infinity with GFI_OK).
 *
 * float32 (dtype GFI_ATTN_F32): Q, K, V, R, H, dH, dQ, dK, dV and dR are
 * float arrays (the saved statistics stay double), read and written in
 * place (no copies). Its own engine computes in float32 where the work is,
 * and in float64 where sums get long:
 *   float32: the pair loop over axes, vectorised (8 lanes with AVX2) and
 *     branch-free over a block of keys: the phase u = R_d (q_id - k_jd),
 *     sinc u and sinc' u, their running product (mantissa and exponent as
 *     above), the weight, and in the backward each dw/du_d times the pair's
 *     coefficient, summed per lane over at most 8 blocks of 16 keys;
 *   float64: the row sums S_i, A_i and the numerator N_i (each float weight
 *     added in double), P_i = dH_i . H_i and each pair's dH_i . v_j - P_i,
 *     dq and dR across key blocks and chunks, dK and dV across query rows,
 *     and the saved statistics.
 * The phase is difference-first: q - k, then times R (a relative error
 * below 2^-23 of u), then reduced by multiples of pi/2 in three parts, so
 * large phases R q and R k lose nothing to their own rounding (forming
 * sin(R q - R k) from float sin/cos tables would move sinc by up to
 * 2^-24 (|R q| + |R k|)). Error of one float factor: below about 2^-21
 * absolute for every u, a few ulp relative for |u| < pi/4; a factor
 * |sinc| < 2^-20 is kept scaled by 2^40 with its exponent apart (one key
 * at u = pi gives sinc = -2.8e-8: its row's weight is 6e-31, not 0), only
 * |sinc| < 2^-60 and |u| > 2^20 are set to 0, and weights 2^-120 below the
 * row's largest are dropped. A row that sees keys but sums to 0 in float32
 * (every weight holds a factor set to 0) or is flagged there is never given
 * up: its head is computed again by the float64 engine on the same float
 * inputs (forward and backward), so its H is the float64 value rounded to
 * float. The float32 outputs then agree with the float64
 * path on the same (float-rounded) inputs to within about l D 2^-21 of the
 * row scale max|v_j| for H, times the ratio's condition A_i / S_i for odd l
 * (tests/test_attention_batch.c holds H to l D 2^-20 and the gradients to
 * 4 l D 2^-20 of each array's largest entry, times (A/S)^2 for odd l;
 * measured: at most 0.74 of that, typically 0.02-0.2).
 *
 * Threads: tasks over heads x tiles of 16 query rows (forward) and heads x
 * key chunks (backward; the chunk count depends on B H and Lk only). Every
 * output is a sum in an order fixed by the shapes, so results are identical
 * bit for bit for any thread count (float64 and float32; float32 may differ
 * in the last bits between x86-64 levels, whose clones differ in vector
 * width).
 *
 * Memory besides the caller's arrays (per head, L = Lq + Lk): forward
 * 4 Lk D doubles of tables; backward 4 L D doubles of tables, 2 Lq + C Lq
 * (D + 1) doubles (D + D per head and axis; C <= 8 key chunks: per-chunk
 * partial dq and dR, summed in chunk order) and per thread O(D (16 + Lk / C)).
 * float32: forward Lk D floats (keys transposed), backward L D floats and
 * the same 2 Lq + C Lq (D + 1) doubles, per thread O(D 32 + (D + Dv) Lk / C)
 * doubles. Never an Lq x Lk matrix (except the caller's general mask).
 *
 * Backward cost: one pass over the (query, key) pairs forms each pair's
 * factors, their derivatives and the prefix/suffix products once and gives
 * dQ, dK, dV and dR together (the single-sequence backward above uses the
 * same pass). */
typedef enum { GFI_ATTN_F64 = 0, GFI_ATTN_F32 = 1 } gfi_attn_dtype;
typedef enum { GFI_ATTN_R_SCALAR = 0, GFI_ATTN_R_HEAD = 1, GFI_ATTN_R_HEAD_AXIS = 2 } gfi_attn_rmode;
/* Memory layout of Q, K, V, H, dH and the gradients: (B, H, L, W) (default)
 * or (L, B, H, W) (FourierFormer's and Transformer-XL's [len, batch, head,
 * dim]), each contiguous in its own order; read and written in place, no
 * copies. Row numbers of info and the saved statistics are (b H + h) Lq + i
 * in both. The inputs Q, K and V may also be strided views (spec strides:
 * element b, h, row at b s0 + h s1 + row s2, the last axis contiguous), as
 * the chunks of a fused q/k/v projection [len, batch, 3 heads dim]: read in
 * place; the outputs and dH follow the layout. */
typedef enum { GFI_ATTN_LAYOUT_BHLD = 0, GFI_ATTN_LAYOUT_LBHD = 1 } gfi_attn_layout;

/* Initialise with gfi_attn_batch_default_spec; fields are only ever appended. */
typedef struct gfi_attn_batch_spec {
  gfi_kernel kernel;     /* phi = z^l, l = 1..8 (default l = 4), or a polynomial (as gfi_attn_spec) */
  gfi_attn_rmode rmode;  /* R layout (default GFI_ATTN_R_SCALAR) */
  int causal;            /* 1: query i sees keys j <= i + Lk - Lq (default 0) */
  double eps;            /* H = N / (S + eps), eps >= 0 finite (default 0; FourierFormer: 1e-6) */
  double denom_tol;      /* flag threshold as above (default 1e-8) */
  int empty_zero;        /* rows that see no key: 0 = NaN + GFI_EDENOM (default), 1 = zeros */
  gfi_attn_dtype dtype;  /* GFI_ATTN_F64 (default) or GFI_ATTN_F32 */
  size_t mask_batch;     /* leading extent of `mask`: 1 (shared) or B (default 1) */
  gfi_attn_layout layout; /* GFI_ATTN_LAYOUT_BHLD (default) or GFI_ATTN_LAYOUT_LBHD */
  double dropout;        /* attention dropout p, 0 <= p < 1 (default 0), see below */
  uint64_t seed;         /* the dropout mask's seed (default 0) */
  size_t strides[9];     /* element strides of Q, K, V (3 each) along (b, h, row); all 0 = the layout's */
} gfi_attn_batch_spec;

GFI_EXPORT void gfi_attn_batch_default_spec(gfi_attn_batch_spec *s);
/* Values of R (and dR): 1, H or H D by s->rmode; 0 for a bad spec. */
GFI_EXPORT size_t gfi_attn_batch_nparam(const gfi_attn_batch_spec *s, size_t H, size_t D);
/* Doubles of the saved row statistics: 2 B H Lq (0 on overflow). */
GFI_EXPORT size_t gfi_attn_batch_saved_size(size_t B, size_t H, size_t Lq);

/* Forward. Out: Hout (B, H, Lq, Dv) of the dtype; saved (may be NULL): the
 * statistics for the backward; info (may be NULL). Returns GFI_OK, GFI_EDENOM
 * (flagged or empty rows, see above; every other row is valid) or, before
 * anything is written: GFI_EINVAL (NULL array, bad spec field), GFI_EEMPTY
 * (B, H, Lq or Lk = 0), GFI_EDIM (D or Dv outside 1..GFI_MAX_DIM, sizes that
 * overflow), GFI_EORDER (l outside 1..8), GFI_EUNSUPPORTED (a flat-top or
 * custom kernel), GFI_ENONFINITE (Q, K or V), GFI_ERADIUS, GFI_ENOMEM. */
GFI_EXPORT int gfi_attn_batch_forward(const gfi_attn_batch_spec *s, size_t B, size_t H, size_t Lq, size_t Lk,
                                      size_t D, size_t Dv, const void *Q, const void *K, const void *V,
                                      const void *R, const unsigned char *key_pad, const unsigned char *mask,
                                      const gfi_opts *opts, void *Hout, double *saved, gfi_attn_info *info);

/* Backward for dH (B, H, Lq, Dv): the forward's arguments, its Hout and
 * saved; writes dQ, dK, dV (the shapes of Q, K, V) and dR (nparam values).
 * Flagged rows: NaN dQ rows, no contribution elsewhere; empty rows: no
 * contribution (dQ rows 0 with empty_zero, NaN otherwise). Returns as the
 * forward (GFI_ENONFINITE also for dH; GFI_EINVAL for saved not written by a
 * forward; GFI_ERANGE when a gradient outside the flagged rows overflows the
 * dtype, the arrays then written). */
GFI_EXPORT int gfi_attn_batch_backward(const gfi_attn_batch_spec *s, size_t B, size_t H, size_t Lq, size_t Lk,
                                       size_t D, size_t Dv, const void *Q, const void *K, const void *V,
                                       const void *R, const unsigned char *key_pad, const unsigned char *mask,
                                       const gfi_opts *opts, const void *Hout, const double *saved,
                                       const void *dH, void *dQ, void *dK, void *dV, void *dR,
                                       gfi_attn_info *info);

/* ---- softmax attention (exact), forward and backward ---- */

/* H = softmax(scale Q K^T) V row by row (causal: keys j <= i), Q and K L x D,
 * V and H L x Dv. Computed exactly as Gaussian attention (above) on keys
 * lifted to equal norm: k' = (k, sqrt(M^2 - |k|^2)), q' = (q, 0), M^2 just
 * above max_j |k_j|^2, sigma^2 = 1/scale; then |q' - k'|^2 = |q|^2 + M^2 -
 * 2 q.k and the Gaussian weights are exp(scale q.k) times a factor constant
 * in each row, which the ratio cancels (and which the Gaussian engine's
 * row-max scaling keeps in range). Same threads, determinism and O(L D)
 * memory as the Gaussian engine, plus 2 L (D + 1) doubles for the lifted
 * copies. scale > 0 and finite (1/sqrt(D): scaled dot-product attention).
 * Errors: as gfi_attn_plan_create and gfi_attn_forward (GFI_EBANDWIDTH for
 * a bad scale). */
GFI_EXPORT int gfi_attn_softmax_forward(size_t L, size_t D, size_t Dv, const double *Q, const double *K,
                                        const double *V, double scale, int causal, const gfi_opts *opts,
                                        double *H);

/* Gradients of a loss with dL/dH = dH through the softmax attention above:
 * dQ, dK (L x D), dV (L x Dv) (it runs the forward again for the row
 * statistics). The lift's extra
 * coordinate is differentiated through (dk += dk'_{D} d sqrt(M^2 - |k|^2)/dk;
 * H does not depend on M). Errors as gfi_attn_backward. */
GFI_EXPORT int gfi_attn_softmax_backward(size_t L, size_t D, size_t Dv, const double *Q, const double *K,
                                         const double *V, double scale, int causal, const gfi_opts *opts,
                                         const double *dH, double *dQ, double *dK, double *dV);

/* ---- FAVOR+ (Performer): softmax attention by positive random features ---- */

/* FAVOR+ random projections W (m x dim): iid N(0, I) rows, or orthogonal
 * blocks (Gram-Schmidt of Gaussian blocks, rows rescaled to chi(dim) norms). */
GFI_EXPORT int gfi_favor_draw(gsl_rng *rng, size_t m, size_t dim, int orthogonal, double *W);

/* FAVOR+ attention with positive features phi(x) = exp(w.x - |x|^2/2)/sqrt(m):
 * out = diag(Phi_Q (Phi_K^T 1))^-1 Phi_Q (Phi_K^T V). Q, K: L x dim
 * (already scaled as the caller wants: softmax(Q K^T) is approximated), V: L x dv.
 * nthreads as in gfi_opts (0 = all cores); the result does not depend on it.
 * O(L m (dim + dv)) time and O(L m + m dv) memory; *bytes (may be NULL) gets
 * the bytes this call allocated. */
GFI_EXPORT int gfi_favor_attention(size_t L, size_t dim, const double *Q, const double *K, size_t dv,
                        const double *V, size_t m, const double *W, int nthreads, double *out,
                        size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
