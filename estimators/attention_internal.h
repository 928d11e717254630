/* Private layout of an attention plan and the engine entry points shared by
 * attention.c (API, validation, diagnostics) and the kernel files. */
#ifndef GFI_ATTENTION_INTERNAL_H
#define GFI_ATTENTION_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "gfi/attention.h"

struct gfi_attn_plan {
  gfi_attn_spec spec;
  int l;          /* Fourier: the power of the kernel */
  size_t L, D, Dv;
  size_t Lp;      /* L rounded up to a multiple of 8: stride of the structure-of-arrays tables */
  size_t nparam;  /* 1 or D */
  int nthreads;
};

/* Engines. Rd: D radii (Fourier) or one sigma (Gauss). stat: 2 L doubles,
 * (E_i, S~_i) per row, S~_i = NaN for a flagged row; ratio: L doubles, S_i/A_i
 * (0 when A_i = 0). The backward takes dRrow: L x nparam scratch. All return
 * GFI_OK or GFI_ENOMEM. */
int attn_fourier_forward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                         const double *Rd, double *H, double *stat, double *ratio);
int attn_fourier_backward(const gfi_attn_plan *p, const double *Q, const double *K,
                          const double *V, const double *Rd, const double *H, const double *stat,
                          const double *dH, double *dQ, double *dK, double *dV, double *dRrow);
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
