/* Exact softmax attention through the Gaussian engine on keys lifted to
 * equal norm (gfi/attention.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/attention.h"
#include "gfi/validate.h"
#include "alloc.h"
#include "fail.h"

/* The lifted copies: q' = (q, 0), k' = (k, sqrt(M^2 - |k|^2)). */
static int lift(size_t L, size_t D, const double *Q, const double *K, double **Qp, double **Kp) {
  *Qp = *Kp = NULL;
  if (D + 1 > GFI_MAX_DIM) return fail_param(GFI_EDIM, "D");
  if (L > ((size_t)1 << 40) / (D + 1)) return fail_param(GFI_EDIM, "L");
  double m2 = 0;
  for (size_t j = 0; j < L; j++) {
    double s = 0;
    for (size_t d = 0; d < D; d++) {
      if (!isfinite(Q[j * D + d])) return fail_param(GFI_ENONFINITE, "Q");
      if (!isfinite(K[j * D + d])) return fail_param(GFI_ENONFINITE, "K");
      s += K[j * D + d] * K[j * D + d];
    }
    if (s > m2) m2 = s;
  }
  /* M^2 a little above the largest squared norm: the extra coordinate stays >= sqrt(m2 / 1024 + 1) */
  m2 = m2 * (1 + 1.0 / 1024) + 1;
  if (!(m2 < INFINITY)) return fail_param(GFI_ENONFINITE, NULL); /* |k|^2 overflowed: no input is at fault */
  double *q = gfi_malloc3(L, D + 1, sizeof *q), *k = gfi_malloc3(L, D + 1, sizeof *k);
  if (!q || !k) {
    free(q);
    free(k);
    return GFI_ENOMEM;
  }
  for (size_t j = 0; j < L; j++) {
    double s = 0;
    for (size_t d = 0; d < D; d++) {
      q[j * (D + 1) + d] = Q[j * D + d];
      k[j * (D + 1) + d] = K[j * D + d];
      s += K[j * D + d] * K[j * D + d];
    }
    q[j * (D + 1) + D] = 0;
    k[j * (D + 1) + D] = sqrt(m2 - s);
  }
  *Qp = q, *Kp = k;
  return GFI_OK;
}

static int plan_of(gfi_attn_plan **p, size_t L, size_t D, size_t Dv, int causal, const gfi_opts *opts) {
  gfi_attn_spec sp;
  gfi_attn_default_spec(&sp);
  sp.kind = GFI_ATTN_GAUSS;
  sp.causal = causal;
  return gfi_attn_plan_create(p, &sp, L, D + 1, Dv, opts);
}

static int check(size_t L, size_t D, size_t Dv, const double *Q, const double *K, const double *V, double scale) {
  if (!Q || !K || !V) return GFI_EINVAL;
  if (L == 0) return fail_param(GFI_EEMPTY, "L");
  if (D == 0) return fail_param(GFI_EDIM, "D");
  if (Dv == 0) return fail_param(GFI_EDIM, "Dv");
  if (!(scale > 0) || !isfinite(scale)) return fail_param(GFI_EBANDWIDTH, "scale");
  return GFI_OK;
}

int gfi_attn_softmax_forward(size_t L, size_t D, size_t Dv, const double *Q, const double *K, const double *V,
                             double scale, int causal, const gfi_opts *opts, double *H) {
  int st = check(L, D, Dv, Q, K, V, scale);
  if (st) return st;
  if (!H) return GFI_EINVAL;
  double *q = NULL, *k = NULL;
  gfi_attn_plan *p = NULL;
  if ((st = lift(L, D, Q, K, &q, &k))) return st;
  double sigma = 1 / sqrt(scale);
  if (!(st = plan_of(&p, L, D, Dv, causal, opts))) st = gfi_attn_forward(p, q, k, V, &sigma, H, NULL, NULL);
  gfi_attn_destroy(p);
  free(q);
  free(k);
  return st;
}

int gfi_attn_softmax_backward(size_t L, size_t D, size_t Dv, const double *Q, const double *K, const double *V,
                              double scale, int causal, const gfi_opts *opts, const double *dH, double *dQ,
                              double *dK, double *dV) {
  int st = check(L, D, Dv, Q, K, V, scale);
  if (st) return st;
  if (!dH || !dQ || !dK || !dV) return GFI_EINVAL;
  double *q = NULL, *k = NULL, *saved = NULL, *Hs = NULL, *dq = NULL, *dk = NULL;
  gfi_attn_plan *p = NULL;
  if ((st = lift(L, D, Q, K, &q, &k))) return st;
  double sigma = 1 / sqrt(scale), dsig;
  if ((st = plan_of(&p, L, D, Dv, causal, opts))) goto done;
  saved = gfi_malloc2(gfi_attn_saved_size(p), sizeof *saved);
  Hs = gfi_malloc3(L, Dv, sizeof *Hs);
  dq = gfi_malloc3(L, D + 1, sizeof *dq);
  dk = gfi_malloc3(L, D + 1, sizeof *dk);
  if (!saved || !Hs || !dq || !dk) {
    st = GFI_ENOMEM;
    goto done;
  }
  /* the saved row statistics come from a forward on the lifted inputs */
  if ((st = gfi_attn_forward(p, q, k, V, &sigma, Hs, saved, NULL))) goto done;
  if ((st = gfi_attn_backward(p, q, k, V, &sigma, Hs, saved, dH, dq, dk, dV, &dsig, NULL))) goto done;
  for (size_t j = 0; j < L; j++) {
    double e = k[j * (D + 1) + D], de = dk[j * (D + 1) + D];
    for (size_t d = 0; d < D; d++) {
      dQ[j * D + d] = dq[j * (D + 1) + d];
      dK[j * D + d] = dk[j * (D + 1) + d] - de * K[j * D + d] / e;
    }
  }
done:
  gfi_attn_destroy(p);
  free(q);
  free(k);
  free(saved);
  free(Hs);
  free(dq);
  free(dk);
  return st;
}
