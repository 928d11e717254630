/* Nadaraya-Watson plans: validation, structure-of-arrays set-up, the threaded
 * evaluation driver (plain pass, scaled re-evaluation of underflowing
 * queries), combination of partial sums at a common scale, and row flags.
 * The inner loops live in regression_fourier.c and regression_gauss.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "regression_internal.h"
#include "gfi/validate.h"

#define DEFAULT_BLOCK 256
#define DEFAULT_TILE 16
#define SUPER_MIN 16384
#define SUPER_MAX 64
/* Padding points sit far from every query: their kernel values are 0. */
#define PAD_COORD 1e100

static void plan_free(gfi_nw_plan *p) {
  if (!p) return;
  free(p->y);
  free(p->R);
  free(p->rk);
  free(p->sk);
  free(p->ck);
  free(p->Linv);
  free(p->z);
  free(p);
}

void gfi_nw_destroy(gfi_nw_plan *plan) { plan_free(plan); }
size_t gfi_nw_dim(const gfi_nw_plan *p) { return p ? p->D : 0; }
size_t gfi_nw_size(const gfi_nw_plan *p) { return p ? p->N : 0; }
size_t gfi_nw_nresp(const gfi_nw_plan *p) { return p ? p->V : 0; }

int gfi_nw_set_denom_tol(gfi_nw_plan *p, double tol) {
  if (!p || !(tol >= 0 && tol < 1)) return GFI_EINVAL;
  p->denom_tol = tol;
  return GFI_OK;
}

int gfi_nw_set_scaling(gfi_nw_plan *p, int mode) {
  if (!p || mode < GFI_NW_SCALE_AUTO || mode > GFI_NW_SCALE_ALWAYS) return GFI_EINVAL;
  p->scaling = mode;
  return GFI_OK;
}

size_t nw_ws_size(const gfi_nw_plan *p) { return 3 * p->qtile * p->D + 5 * p->dblock; }

static int plan_common(gfi_nw_plan **out, nw_type type, size_t N, size_t D, size_t V,
                       const double *x, const double *y, const gfi_opts *opts) {
  *out = NULL;
  if (N == 0) return GFI_EEMPTY;
  int st = gfi_check_dim(D);
  if (st) return st;
  if (V == 0 || !x || !y) return GFI_EINVAL;
  if (V > GFI_MAX_DIM || N > ((size_t)1 << 52) / (D + V)) return GFI_EDIM;
  st = gfi_check_finite(x, N * D, NULL);
  if (st) return st;
  st = gfi_check_finite(y, N * V, NULL);
  if (st) return st;
  gfi_opts o;
  gfi_default_opts(&o);
  if (opts) o = *opts;
  gfi_nw_plan *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->type = type;
  p->N = N;
  p->D = D;
  p->V = V;
  p->nthreads = gfi_threads_resolve(&o);
  p->dblock = o.data_block ? o.data_block : DEFAULT_BLOCK;
  p->qtile = o.query_tile ? o.query_tile : DEFAULT_TILE;
  p->denom_tol = GFI_NW_DENOM_TOL;
  p->scaling = GFI_NW_SCALE_AUTO;
  size_t nblocks = (N + p->dblock - 1) / p->dblock;
  p->Np = nblocks * p->dblock;
  size_t ns = (N + SUPER_MIN - 1) / SUPER_MIN;
  p->nsuper = ns < 1 ? 1 : (ns > SUPER_MAX ? SUPER_MAX : ns);
  if (p->nsuper > nblocks) p->nsuper = nblocks;
  p->y = calloc(V * p->Np, sizeof *p->y);
  if (!p->y) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  for (size_t v = 0; v < V; v++)
    for (size_t i = 0; i < N; i++) p->y[v * p->Np + i] = y[i * V + v];
  *out = p;
  return GFI_OK;
}

int gfi_nw_plan_fourier(gfi_nw_plan **plan, const gfi_kernel *k, size_t N, size_t D, size_t V,
                        const double *x, const double *y, const double *R, const gfi_opts *opts) {
  if (!plan || !k) return GFI_EINVAL;
  *plan = NULL;
  if (k->kind == GFI_PHI_POW) {
    int st = gfi_check_order(k->l);
    if (st) return st;
  } else if (k->kind != GFI_PHI_CUSTOM || !k->fn) {
    return GFI_EINVAL;
  }
  if (!R) return GFI_EINVAL;
  int st = gfi_check_dim(D);
  if (st) return st;
  st = gfi_check_radii(R, D, NULL);
  if (st) return st;
  gfi_nw_plan *p;
  st = plan_common(&p, NW_FOURIER, N, D, V, x, y, opts);
  if (st) return st;
  for (size_t i = 0; i < N * D; i++)
    if (fabs(R[i % D] * x[i]) > NW_PHASE_MAX) {
      plan_free(p);
      return GFI_ERANGE;
    }
  p->kernel = *k;
  size_t Np = p->Np;
  p->R = malloc(D * sizeof *p->R);
  p->rk = malloc(D * Np * sizeof *p->rk);
  p->sk = malloc(D * Np * sizeof *p->sk);
  p->ck = malloc(D * Np * sizeof *p->ck);
  if (!p->R || !p->rk || !p->sk || !p->ck) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  memcpy(p->R, R, D * sizeof *R);
  for (size_t j = 0; j < D; j++) {
    double *rk = p->rk + j * Np, *sk = p->sk + j * Np, *ck = p->ck + j * Np;
    for (size_t i = 0; i < N; i++) {
      double a = R[j] * x[i * D + j];
      rk[i] = a;
      sk[i] = sin(a);
      ck[i] = cos(a);
    }
    for (size_t i = N; i < Np; i++) {
      rk[i] = PAD_COORD;
      sk[i] = 0;
      ck[i] = 0;
    }
  }
  *plan = p;
  return GFI_OK;
}

int gfi_nw_plan_gauss(gfi_nw_plan **plan, size_t N, size_t D, size_t V, const double *x,
                      const double *y, const double *H, const gfi_opts *opts) {
  if (!plan) return GFI_EINVAL;
  *plan = NULL;
  if (!H) return GFI_EINVAL;
  int st = gfi_check_dim(D);
  if (st) return st;
  for (size_t a = 0; a < D * D; a++)
    if (!isfinite(H[a])) return GFI_EBANDWIDTH;
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < a; b++)
      if (fabs(H[a * D + b] - H[b * D + a]) > 1e-12 * (fabs(H[a * D + b]) + fabs(H[b * D + a])))
        return GFI_EBANDWIDTH;
  gsl_set_error_handler_off();
  gsl_matrix *L = gsl_matrix_alloc(D, D);
  if (!L) return GFI_ENOMEM;
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < D; b++) gsl_matrix_set(L, a, b, H[a * D + b]);
  if (gsl_linalg_cholesky_decomp1(L) != GSL_SUCCESS ||
      gsl_linalg_tri_invert(CblasLower, CblasNonUnit, L) != GSL_SUCCESS) {
    gsl_matrix_free(L);
    return GFI_EBANDWIDTH;
  }
  for (size_t a = 0; a < D; a++)
    if (!(gsl_matrix_get(L, a, a) > 0) || !isfinite(gsl_matrix_get(L, a, a))) {
      gsl_matrix_free(L);
      return GFI_EBANDWIDTH;
    }
  gfi_nw_plan *p;
  st = plan_common(&p, NW_GAUSS, N, D, V, x, y, opts);
  if (st) {
    gsl_matrix_free(L);
    return st;
  }
  size_t Np = p->Np;
  p->exp_floor = -708.0;
  p->Linv = calloc(D * D, sizeof *p->Linv);
  p->z = malloc(D * Np * sizeof *p->z);
  if (!p->Linv || !p->z) {
    gsl_matrix_free(L);
    plan_free(p);
    return GFI_ENOMEM;
  }
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b <= a; b++) p->Linv[a * D + b] = gsl_matrix_get(L, a, b);
  gsl_matrix_free(L);
  for (size_t a = 0; a < D; a++) {
    double *z = p->z + a * Np;
    for (size_t i = 0; i < N; i++) {
      double s = 0;
      for (size_t b = 0; b <= a; b++) s += p->Linv[a * D + b] * x[i * D + b];
      z[i] = s;
    }
    for (size_t i = N; i < Np; i++) z[i] = PAD_COORD;
  }
  *plan = p;
  return GFI_OK;
}

/* One pass over all data for M queries: per-super-chunk partial sums, then
 * combined in a fixed order into res (M x NW_ACC(V)) at a common scale. */
static int run_pass(const gfi_nw_plan *p, size_t M, const double *queries, int scaled, double *res) {
  const size_t V = p->V, W = NW_ACC(V), ns = p->nsuper;
  size_t nblocks = p->Np / p->dblock;
  size_t bps = (nblocks + ns - 1) / ns;
  size_t nqt = (M + p->qtile - 1) / p->qtile;
  size_t ntask = nqt * ns;
  double *part = malloc(ns * M * W * sizeof *part);
  if (!part) return GFI_ENOMEM;
  int failed = 0;
  size_t wsn = nw_ws_size(p);
#ifdef GFI_HAVE_OPENMP
  int nt = p->nthreads;
  if ((size_t)nt > ntask) nt = (int)ntask;
#pragma omp parallel num_threads(nt)
#endif
  {
    double *ws = malloc(wsn * sizeof *ws);
    if (!ws) {
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic write
#endif
      failed = 1;
    }
#ifdef GFI_HAVE_OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (size_t t = 0; t < ntask; t++) {
      if (!ws) continue;
      size_t qt = t / ns, s = t % ns;
      size_t q0 = qt * p->qtile, q1 = q0 + p->qtile < M ? q0 + p->qtile : M;
      size_t b0 = s * bps, b1 = b0 + bps;
      if (b1 > nblocks) b1 = nblocks;
      double *dst = part + (s * M + q0) * W;
      if (b0 >= b1) {
        for (size_t q = 0; q < q1 - q0; q++) {
          dst[q * W] = -INFINITY;
          for (size_t c = 1; c < W; c++) dst[q * W + c] = 0;
        }
        continue;
      }
      size_t i0 = b0 * p->dblock, i1 = b1 * p->dblock;
      if (p->type == NW_GAUSS)
        nw_gauss_task(p, queries, q0, q1, i0, i1, dst, ws);
      else if (scaled)
        nw_fourier_scaled_task(p, queries, q0, q1, i0, i1, dst, ws);
      else
        nw_fourier_plain_task(p, queries, q0, q1, i0, i1, dst, ws);
    }
    free(ws);
  }
  if (failed) {
    free(part);
    return GFI_ENOMEM;
  }
  const int base2 = p->type == NW_FOURIER;
  for (size_t q = 0; q < M; q++) {
    double E = -INFINITY;
    for (size_t c = 0; c < ns; c++) {
      double e = part[(c * M + q) * W];
      if (e > E) E = e;
    }
    double *r = res + q * W;
    r[0] = E;
    for (size_t c = 1; c < W; c++) r[c] = 0;
    if (E == -INFINITY) continue;
    for (size_t c = 0; c < ns; c++) {
      const double *a = part + (c * M + q) * W;
      if (a[0] == -INFINITY) continue;
      double f;
      if (base2) {
        double d = a[0] - E;
        f = d < -2000 ? 0.0 : ldexp(1.0, (int)d);
      } else {
        f = exp(a[0] - E);
      }
      for (size_t k = 1; k < W; k++) r[k] += f * a[k];
    }
  }
  free(part);
  return GFI_OK;
}

int gfi_nw_eval_flags(const gfi_nw_plan *p, size_t M, const double *queries, double *out,
                      size_t *nflagged, unsigned char *flags, double *denom) {
  if (nflagged) *nflagged = 0;
  if (!p) return GFI_EINVAL;
  if (M == 0) return GFI_OK;
  if (!queries || !out) return GFI_EINVAL;
  if (M > ((size_t)1 << 52) / (p->D + p->V)) return GFI_EDIM;
  int st = gfi_check_finite(queries, M * p->D, NULL);
  if (st) return st;
  if (p->type == NW_FOURIER)
    for (size_t i = 0; i < M * p->D; i++)
      if (fabs(p->R[i % p->D] * queries[i]) > NW_PHASE_MAX) return GFI_ERANGE;
  const size_t V = p->V, D = p->D, W = NW_ACC(V);
  double *res = malloc(M * W * sizeof *res);
  if (!res) return GFI_ENOMEM;
  int pow_kernel = p->type == NW_FOURIER && p->kernel.kind == GFI_PHI_POW;
  int scaled_first = p->type == NW_FOURIER &&
                     (!pow_kernel || p->scaling == GFI_NW_SCALE_ALWAYS ||
                      (p->scaling == GFI_NW_SCALE_AUTO && D * (size_t)p->kernel.l > NW_PLAIN_MAX_DL));
  st = run_pass(p, M, queries, scaled_first, res);
  if (st) {
    free(res);
    return st;
  }
  if (p->type == NW_FOURIER && !scaled_first && p->scaling == GFI_NW_SCALE_AUTO) {
    /* queries whose plain sum is too small to trust: again on the scaled path */
    const double lim = ldexp(1.0, -NW_PLAIN_MIN_BITS);
    size_t nlow = 0;
    for (size_t q = 0; q < M; q++)
      if (!(res[q * W + 2] >= lim)) nlow++;
    if (nlow) {
      size_t *idx = malloc(nlow * sizeof *idx);
      double *qq = malloc(nlow * D * sizeof *qq), *r2 = malloc(nlow * W * sizeof *r2);
      if (!idx || !qq || !r2) {
        free(idx);
        free(qq);
        free(r2);
        free(res);
        return GFI_ENOMEM;
      }
      size_t n = 0;
      for (size_t q = 0; q < M; q++)
        if (!(res[q * W + 2] >= lim)) {
          idx[n] = q;
          memcpy(qq + n * D, queries + q * D, D * sizeof *qq);
          n++;
        }
      st = run_pass(p, nlow, qq, 1, r2);
      if (!st)
        for (size_t a = 0; a < nlow; a++) memcpy(res + idx[a] * W, r2 + a * W, W * sizeof *res);
      free(idx);
      free(qq);
      free(r2);
      if (st) {
        free(res);
        return st;
      }
    }
  }
  size_t nf = 0;
  for (size_t q = 0; q < M; q++) {
    const double *r = res + q * W;
    double S = r[1], A = r[2];
    int flag = GFI_NW_FLAG_OK;
    if (!(A > 0))
      flag = GFI_NW_FLAG_EMPTY;
    else if (S < 0)
      flag = GFI_NW_FLAG_NEGATIVE;
    else if (S <= p->denom_tol * A)
      flag = GFI_NW_FLAG_SMALL;
    if (flags) flags[q] = (unsigned char)flag;
    if (denom) denom[q] = flag == GFI_NW_FLAG_EMPTY ? NAN : S / A;
    if (flag) {
      nf++;
      for (size_t v = 0; v < V; v++) out[q * V + v] = NAN;
    } else {
      for (size_t v = 0; v < V; v++) out[q * V + v] = r[3 + v] / S;
    }
  }
  free(res);
  if (nflagged) *nflagged = nf;
  return nf ? GFI_EDENOM : GFI_OK;
}

int gfi_nw_eval(const gfi_nw_plan *p, size_t M, const double *queries, double *out, size_t *nflagged) {
  return gfi_nw_eval_flags(p, M, queries, out, nflagged, NULL, NULL);
}
