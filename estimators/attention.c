/* Attention plans: specification, validation at the API boundary, the
 * expansion of a scalar radius, diagnostics of flagged rows, and the fixed-
 * order reduction of the kernel-scale gradient. The engines live in
 * attention_fourier.c and attention_gauss.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "attention_internal.h"
#include "gfi/validate.h"
#include "alloc.h"
#include "fail.h"

int attn_check_kernel(const gfi_kernel *k) {
  if (!k) return fail_param(GFI_EINVAL, "kernel");
  if (k->kind == GFI_PHI_POW) return gfi_check_order(k->l) ? fail_param(GFI_EORDER, "kernel") : GFI_OK;
  if (k->kind == GFI_PHI_FLATTOP || k->kind == GFI_PHI_CUSTOM) return fail_param(GFI_EUNSUPPORTED, "kernel");
  if (k->kind != GFI_PHI_POLY) return fail_param(GFI_EINVAL, "kernel");
  if (gfi_check_order(k->l)) return fail_param(GFI_EORDER, "kernel");
  for (int j = 0; j <= k->l; j++)
    if (!isfinite(k->coef[j])) return fail_param(GFI_ENONFINITE, "kernel");
  if (k->coef[0] != 0 || k->coef[k->l] == 0) return fail_param(GFI_EINVAL, "kernel");
  return GFI_OK;
}

void gfi_attn_default_spec(gfi_attn_spec *s) {
  if (!s) return;
  s->kind = GFI_ATTN_FOURIER;
  gfi_kernel_pow(&s->kernel, 4);
  s->per_axis_R = 0;
  s->causal = 0;
  s->denom_tol = 1e-8;
}

int gfi_attn_plan_create(gfi_attn_plan **plan, const gfi_attn_spec *spec, size_t L, size_t D,
                         size_t Dv, const gfi_opts *opts) {
  if (!plan) return GFI_EINVAL;
  *plan = NULL;
  gfi_attn_spec s;
  gfi_attn_default_spec(&s);
  if (spec) s = *spec;
  if (s.kind != GFI_ATTN_FOURIER && s.kind != GFI_ATTN_GAUSS) return fail_param(GFI_EINVAL, "kind");
  if (!(s.denom_tol >= 0 && s.denom_tol < 1)) return fail_param(GFI_EINVAL, "denom_tol");
  if (s.kind == GFI_ATTN_FOURIER) {
    int st = attn_check_kernel(&s.kernel);
    if (st) return st;
  }
  if (L == 0) return fail_param(GFI_EEMPTY, "L");
  if (gfi_check_dim(D)) return fail_param(GFI_EDIM, "D");
  if (gfi_check_dim(Dv)) return fail_param(GFI_EDIM, "Dv");
  if (L > ((size_t)1 << 40) / (D > Dv ? D : Dv)) return fail_param(GFI_EDIM, "L");
  gfi_attn_plan *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->spec = s;
  p->spec.causal = s.causal ? 1 : 0;
  p->spec.per_axis_R = s.kind == GFI_ATTN_FOURIER && s.per_axis_R ? 1 : 0;
  p->L = L;
  p->D = D;
  p->Dv = Dv;
  p->Lp = (L + 7) / 8 * 8;
  p->nparam = p->spec.per_axis_R ? D : 1;
  p->nthreads = gfi_threads_resolve(opts);
  *plan = p;
  return GFI_OK;
}

void gfi_attn_destroy(gfi_attn_plan *plan) { free(plan); }

size_t gfi_attn_nparam(const gfi_attn_plan *plan) { return plan ? plan->nparam : 0; }
size_t gfi_attn_saved_size(const gfi_attn_plan *plan) { return plan ? 2 * plan->L : 0; }

/* Inputs common to forward and backward; Rd gets the D radii (Fourier). */
static int check_inputs(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                        const double *R, double *Rd) {
  if (!Q || !K || !V || !R) return GFI_EINVAL;
  const size_t L = p->L, D = p->D, Dv = p->Dv;
  if (gfi_check_finite(Q, L * D, NULL)) return fail_param(GFI_ENONFINITE, "Q");
  if (gfi_check_finite(K, L * D, NULL)) return fail_param(GFI_ENONFINITE, "K");
  if (gfi_check_finite(V, L * Dv, NULL)) return fail_param(GFI_ENONFINITE, "V");
  if (p->spec.kind == GFI_ATTN_GAUSS) {
    if (!(isfinite(R[0]) && R[0] > 0)) return fail_param(GFI_EBANDWIDTH, "R");
    Rd[0] = R[0];
    return GFI_OK;
  }
  if (gfi_check_radii(R, p->nparam, NULL)) return fail_param(GFI_ERADIUS, "R");
  for (size_t d = 0; d < D; d++) Rd[d] = p->spec.per_axis_R ? R[d] : R[0];
  return GFI_OK;
}

/* The single-sequence Fourier problem as a job of one head (the batched
 * engine serves both interfaces). */
static void attn_plan_job(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                          const double *Rd, attn_fjob *J) {
  memset(J, 0, sizeof *J);
  J->B = J->H = 1;
  J->Lq = J->Lk = p->L;
  J->D = p->D;
  J->Dv = p->Dv;
  attn_fjob_default_strides(J);
  attn_fjob_set_kernel(J, &p->spec.kernel);
  J->causal = p->spec.causal;
  J->per_axis = p->spec.per_axis_R;
  J->denom_tol = p->spec.denom_tol;
  J->Q = Q;
  J->K = K;
  J->V = V;
  J->Rd = Rd;
  J->nthreads = p->nthreads;
}

static void info_set(gfi_attn_info *info, size_t L, const double *stat, const double *ratio) {
  if (!info) return;
  info->nflagged = 0;
  info->first_flagged = L;
  info->min_ratio = ratio ? INFINITY : NAN;
  for (size_t i = 0; i < L; i++) {
    if (isnan(stat[2 * i + 1])) {
      if (info->nflagged == 0) info->first_flagged = i;
      info->nflagged++;
    }
    if (ratio && ratio[i] < info->min_ratio) info->min_ratio = ratio[i];
  }
}

static size_t count_flagged(size_t L, const double *stat) {
  size_t n = 0;
  for (size_t i = 0; i < L; i++) n += isnan(stat[2 * i + 1]) ? 1 : 0;
  return n;
}

/* Values beyond 2^500: V (and H in the backward) divided by a power of two
 * vs (exact) into a copy, H, dQ, dK and dR multiplied back (linear in V; dV
 * does not depend on V), so no sum overflows; 1 when max|V| <= 2^500. */
static double v_scale(const double *V, size_t n) {
  double vmax = 0;
  for (size_t a = 0; a < n; a++) vmax = fmax(vmax, fabs(V[a]));
  if (!(vmax > 0x1p500)) return 1.0;
  int e;
  frexp(vmax, &e);
  return ldexp(1.0, e - 1);
}
static double *scaled_copy(const double *x, size_t n, double vs) {
  double *y = gfi_malloc2(n, sizeof *y);
  if (y)
    for (size_t a = 0; a < n; a++) y[a] = x[a] / vs;
  return y;
}

int gfi_attn_forward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                     const double *R, double *H, double *saved, gfi_attn_info *info) {
  if (!p || !H) return GFI_EINVAL;
  double *Rd = gfi_malloc2(p->D, sizeof *Rd);
  if (!Rd) return GFI_ENOMEM;
  int st = check_inputs(p, Q, K, V, R, Rd);
  if (st) {
    free(Rd);
    return st;
  }
  const size_t L = p->L;
  double *scratch = gfi_malloc2((saved ? L : 3 * L), sizeof *scratch);
  if (!scratch) {
    free(Rd);
    return GFI_ENOMEM;
  }
  double *ratio = scratch, *stat = saved ? saved : scratch + L;
  const double vs = v_scale(V, L * p->Dv);
  double *Vs = vs != 1.0 ? scaled_copy(V, L * p->Dv, vs) : NULL;
  if (vs != 1.0 && !Vs) st = GFI_ENOMEM;
  if (Vs) V = Vs;
  if (st) {
  } else if (p->spec.kind == GFI_ATTN_FOURIER) {
    attn_fjob J;
    attn_plan_job(p, Q, K, V, Rd, &J);
    st = attn_fjob_forward(&J, H, stat, ratio);
  }
  else
    st = attn_gauss_forward(p, Q, K, V, Rd[0], H, stat, ratio);
  free(Vs);
  if (!st && vs != 1.0) /* back to V's scale; a row that does not fit a double is flagged */
    for (size_t i = 0; i < L; i++) {
      int bad = 0;
      for (size_t c = 0; c < p->Dv; c++) {
        H[i * p->Dv + c] *= vs;
        bad |= isinf(H[i * p->Dv + c]);
      }
      if (bad) {
        for (size_t c = 0; c < p->Dv; c++) H[i * p->Dv + c] = NAN;
        stat[2 * i + 1] = NAN;
      }
    }
  if (!st) {
    info_set(info, L, stat, ratio);
    if (count_flagged(L, stat)) st = GFI_EDENOM;
  }
  free(scratch);
  free(Rd);
  return st;
}

int gfi_attn_backward(const gfi_attn_plan *p, const double *Q, const double *K, const double *V,
                      const double *R, const double *H, const double *saved, const double *dH,
                      double *dQ, double *dK, double *dV, double *dR, gfi_attn_info *info) {
  if (!p || !H || !saved || !dH || !dQ || !dK || !dV || !dR) return GFI_EINVAL;
  const size_t L = p->L, D = p->D, Dv = p->Dv, np = p->nparam;
  if (gfi_check_finite(dH, L * Dv, NULL)) return fail_param(GFI_ENONFINITE, "dH");
  for (size_t i = 0; i < L; i++)
    if (isnan(saved[2 * i])) return fail_param(GFI_EINVAL, "saved"); /* not written by a forward */
  double *Rd = gfi_malloc2((D + L * np), sizeof *Rd);
  if (!Rd) return GFI_ENOMEM;
  double *dRrow = Rd + D;
  int st = check_inputs(p, Q, K, V, R, Rd);
  if (st) {
    free(Rd);
    return st;
  }
  const double vs = v_scale(V, L * Dv);
  double *Vs = NULL, *Hs = NULL;
  if (vs != 1.0) {
    Vs = scaled_copy(V, L * Dv, vs);
    Hs = scaled_copy(H, L * Dv, vs);
    if (!Vs || !Hs) st = GFI_ENOMEM;
    V = Vs;
    H = Hs;
  }
  if (st) {
  } else if (p->spec.kind == GFI_ATTN_FOURIER) {
    attn_fjob J;
    attn_plan_job(p, Q, K, V, Rd, &J);
    st = attn_fjob_backward(&J, H, saved, dH, dQ, dK, dV, dRrow);
  }
  else
    st = attn_gauss_backward(p, Q, K, V, Rd[0], H, saved, dH, dQ, dK, dV, dRrow);
  free(Vs);
  free(Hs);
  if (!st) {
    /* the kernel-scale gradient: row partials summed in row order */
    for (size_t k = 0; k < np; k++) dR[k] = 0;
    for (size_t i = 0; i < L; i++)
      for (size_t k = 0; k < np; k++) dR[k] += dRrow[i * np + k];
    int over = 0;
    for (size_t k = 0; k < np; k++) over |= !isfinite(dR[k] *= vs);
    for (size_t a = 0; a < L * D; a++) {
      dQ[a] *= vs;
      dK[a] *= vs;
      over |= isinf(dQ[a]) || isinf(dK[a]) || (isnan(dQ[a]) && !isnan(saved[2 * (a / D) + 1]));
    }
    for (size_t a = 0; a < L * Dv; a++) over |= !isfinite(dV[a]);
    info_set(info, L, saved, NULL);
    if (count_flagged(L, saved)) st = GFI_EDENOM;
    if (over) st = GFI_ERANGE;
  }
  free(Rd);
  return st;
}
