/* Density plans: validation, structure-of-arrays set-up, the threaded
 * evaluation driver and bandwidth rules. The per-kernel inner loops live in
 * density_fourier.c and density_gauss.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "density_internal.h"
#include "plan_common.h"
#include "gfi/validate.h"
#include "alloc.h"
#include "fail.h"
#include "kernel_internal.h"

/* The cost model's direct cost per (query, data point) pair: nanoseconds on
 * one core (bench_fast_route: 0.43, 0.76, 0.99 ns for D = 1, 2, 3, l = 2..4)
 * in the NUFFT model's units (bl_direct_units). */
static double direct_pair_cost(size_t D) { return (0.3 * (double)D + 0.15) * bl_direct_units((int)D); }

static void plan_free(gfi_density_plan *p) {
  if (!p) return;
  free(p->w);
  free(p->box);
  free(p->R);
  free(p->g);
  free(p->rk);
  free(p->rl);
  free(p->sk);
  free(p->ck);
  engine_lazy_free(&p->lazy);
  free(p->Linv);
  free(p->z);
  bl_sum_free(p->fast);
  free(p);
}

void gfi_density_destroy(gfi_density_plan *plan) { plan_free(plan); }

size_t gfi_density_dim(const gfi_density_plan *plan) { return plan ? plan->D : 0; }
size_t gfi_density_size(const gfi_density_plan *plan) { return plan ? plan->N : 0; }

int gfi_density_data_box(const gfi_density_plan *plan, double *lo, double *hi) {
  if (!plan || !lo || !hi) return GFI_EINVAL;
  return plan_data_facts(plan->box, plan->digest, plan->D, lo, hi, NULL);
}

int gfi_density_data_digest(const gfi_density_plan *plan, uint64_t digest[2]) {
  if (!plan || !digest) return GFI_EINVAL;
  return plan_data_facts(plan->box, plan->digest, plan->D, NULL, NULL, digest);
}

size_t density_ws_size(const gfi_density_plan *p) {
  return 4 * p->lay.qtile * p->D + p->lay.dblock;
}

/* Common part of both plans: checks, block sizes, weights, and the data
 * box and digest of the check's pass. With R (the Fourier plans), *range is
 * the phase-range check of the same pass. */
static int plan_common(gfi_density_plan **out, density_type type, size_t N, size_t D,
                       const double *data, const double *weights, const gfi_opts *opts,
                       const double *R, int *range) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (N == 0) return fail_param(GFI_EEMPTY, "data");
  int st = fail_named(gfi_check_dim(D), "D");
  if (st) return st;
  if (!data) return GFI_EINVAL;
  double *box = gfi_malloc3(2, D, sizeof *box);
  if (!box) return GFI_ENOMEM;
  uint64_t digest[2];
  st = plan_check_points(N, D, D, data, "data", R, opts, range, box, box + D, digest);
  double wsum = 0;
  if (!st && weights) st = fail_named(gfi_check_weights(weights, N, &wsum), "weights");
  gfi_density_plan *p = st ? NULL : calloc(1, sizeof *p);
  if (!st && !p) st = GFI_ENOMEM;
  if (st) {
    free(box);
    return st;
  }
  p->box = box;
  p->digest[0] = digest[0];
  p->digest[1] = digest[1];
  p->type = type;
  p->N = N;
  p->D = D;
  engine_layout_init(&p->lay, N, opts);
  if (weights) {
    p->w = calloc(p->lay.Np, sizeof *p->w);
    if (!p->w) {
      plan_free(p);
      return GFI_ENOMEM;
    }
    for (size_t i = 0; i < N; i++) p->w[i] = weights[i] / wsum;
  }
  p->uniform_w = 1.0 / (double)N;
  *out = p;
  return GFI_OK;
}

int gfi_density_plan_fourier(gfi_density_plan **plan, const gfi_kernel *k, size_t N, size_t D,
                             const double *data, const double *weights, const double *R,
                             const gfi_opts *opts) {
  if (!plan || !k) return GFI_EINVAL;
  *plan = NULL;
  double tol;
  gfi_method method;
  int ost = plan_check_method(opts, k->kind == GFI_PHI_CUSTOM, D, &tol, &method);
  if (ost) return ost;
  if (k->kind != GFI_PHI_CUSTOM) { /* a band-limited family (EINVAL for an unknown kind) */
    int st = fail_named(gfi_kernel_check_band(k), "k");
    if (st) return st;
  } else if (!k->fn) {
    return fail_param(GFI_EINVAL, "k");
  }
  if (!k->A_finite || !isfinite(k->A) || !(k->A > 0)) return fail_param(GFI_EINFINITE_A, "k");
  int st = plan_check_radii(D, R);
  if (st) return st;
  /* The estimator's peak value is at most prod_j R_j / A. */
  double logC = 0;
  for (size_t j = 0; j < D; j++) logC += log(R[j] / k->A);
  if (logC > 700) return fail_param(GFI_ERANGE, "R");

  gfi_density_plan *p;
  int range = GFI_OK;
  st = plan_common(&p, DENSITY_FOURIER, N, D, data, weights, opts, R, &range);
  if (st) return st;
  bl_box box = {{0}, {0}}; /* found by the check's pass */
  for (size_t j = 0; j < D && j < BL_MAX_DIM; j++) box.lo[j] = p->box[j], box.hi[j] = p->box[D + j];
  p->kernel = *k;
  p->R = gfi_malloc2(D, sizeof *p->R);
  p->g = gfi_malloc2(D, sizeof *p->g);
  /* The direct route's phase tables (3 D N doubles and 2 D N sines and
   * cosines): not under FAST, whose every evaluation takes the fast route
   * (or fails with GFI_ERANGE); eval_direct is never reached there. Under
   * AUTO with a fast route, on first direct use (a binned grid, or queries
   * the fast route takes, never need them). */
  const int lazy = method == GFI_METHOD_AUTO && k->kind != GFI_PHI_CUSTOM && D <= BL_MAX_DIM;
  int tables = method != GFI_METHOD_FAST && !lazy;
  if (!p->R || !p->g) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  for (size_t j = 0; j < D; j++) {
    p->R[j] = R[j];
    /* Fold the normalisation R_j/A into each factor so that products over
     * many axes stay in range: for z^l the l-th root goes into the sinc. */
    p->g[j] = k->kind == GFI_PHI_POW ? pow(R[j] / k->A, 1.0 / k->l) : R[j] / k->A;
  }
  /* padding: u = rx - rk is huge (u^2 still finite) and sin(u) = 0, so the factor is 0 */
  if (tables) {
    st = fail_named(engine_phase_tables_new(&p->lay, D, data, R, 1e30, &p->rk, &p->rl, &p->sk, &p->ck), "R");
  } else {
    st = fail_named(range, "R"); /* the same range check as the tables'; lazy ones read the fast route's copy (below) */
  }
  if (st) {
    plan_free(p);
    return st;
  }
  p->method = method;
  p->tol = tol;
  if (k->kind != GFI_PHI_CUSTOM && D <= BL_MAX_DIM && method != GFI_METHOD_DIRECT) {
    /* the plan's weights themselves (alive as long as the plan) or one
     * value for all; the points copied, or borrowed when the caller asks */
    const unsigned hold = BL_BORROW_C | (opts && opts->borrow ? BL_BORROW_X : 0u);
    st = bl_sum_make_box(&p->fast, (int)D, k, N, data, 1, p->w, p->w ? 0 : p->uniform_w, R, opts,
                         direct_pair_cost(D), &box, hold);
    if (!st && lazy) st = engine_lazy_borrow(&p->lazy, bl_sum_points(p->fast), 1e30);
    if (st) {
      plan_free(p);
      return st;
    }
  }
  *plan = p;
  return GFI_OK;
}

int gfi_density_plan_gauss(gfi_density_plan **plan, size_t N, size_t D, const double *data,
                           const double *weights, const double *H, const gfi_opts *opts) {
  if (!plan) return GFI_EINVAL;
  *plan = NULL;
  double tol;
  gfi_method method;
  int st = plan_check_method(opts, 0, D, &tol, &method);
  if (st) return st;
  double *Linv, logdet_half;
  st = plan_whiten(D, H, &Linv, &logdet_half);
  if (st) return st;
  double lognorm = -0.5 * (double)D * log(2 * M_PI) - logdet_half;
  if (lognorm > 700) st = fail_param(GFI_ERANGE, "H");
  gfi_density_plan *p = NULL;
  if (!st) st = plan_common(&p, DENSITY_GAUSS, N, D, data, weights, opts, NULL, NULL);
  if (st) {
    free(Linv);
    return st;
  }
  p->Linv = Linv;
  p->lognorm = lognorm;
  p->exp_floor = -708.0;
  if (plan_gauss_table(&p->lay, D, Linv, data, &p->z, &p->hdiag)) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  p->method = method;
  p->tol = tol;
  if (D <= BL_MAX_DIM && method != GFI_METHOD_DIRECT) {
    /* The fast route on the whitened data: N(z - z_i; 0, I) det(Linv), the
     * unit Gaussian family with det(Linv) in the coefficients. */
    const double det = exp(-logdet_half);
    double *c = NULL;
    if (p->w) { /* weighted: one coefficient per point; else one for all */
      c = gfi_malloc2(N, sizeof *c);
      if (c)
        for (size_t i = 0; i < N; i++) c[i] = p->w[i] * det;
    }
    st = p->w && !c ? GFI_ENOMEM /* c is the sum's from here */
                    : plan_gauss_fast(&p->fast, D, Linv, N, data, 1, c, p->uniform_w * det, opts,
                                      direct_pair_cost(D));
    if (st) {
      plan_free(p);
      return st;
    }
  }
  *plan = p;
  return GFI_OK;
}

typedef struct {
  const gfi_density_plan *p;
  const double *queries;
} eval_ctx;

static void run_task(const void *vctx, size_t q0, size_t q1, size_t i0, size_t i1, double *dst,
                     double *ws) {
  const eval_ctx *c = vctx;
  if (c->p->type == DENSITY_FOURIER)
    density_fourier_task(c->p, c->queries, q0, q1, i0, i1, dst, ws);
  else
    density_gauss_task(c->p, c->queries, q0, q1, i0, i1, dst, ws);
}

static void fill_zero(double *dst, size_t nq, size_t W) {
  for (size_t q = 0; q < nq * W; q++) dst[q] = 0;
}

/* The direct sum (queries already checked). */
static int eval_direct(const gfi_density_plan *p, size_t M, const double *queries, double *out) {
  int st;
  if (p->type == DENSITY_FOURIER && p->lazy.lock_ok) {
    gfi_density_plan *pm = (gfi_density_plan *)p; /* the tables, once, under the lock */
    st = engine_lazy_tables(&pm->lazy, &p->lay, p->D, p->R, &pm->rk, &pm->rl, &pm->sk, &pm->ck);
    if (st) return st;
  }
  if (p->type == DENSITY_FOURIER && !p->rk) return GFI_EINVAL; /* a FAST plan: not reached */
  size_t ns = p->lay.nsuper;
  double *part = gfi_malloc3(M, ns, sizeof *part);
  if (!part) return GFI_ENOMEM;
  eval_ctx ctx = {p, queries};
  st = engine_run(&p->lay, M, 1, density_ws_size(p), run_task, &ctx, fill_zero, part);
  if (st) {
    free(part);
    return st;
  }
  /* Combine super-chunks in a fixed order: identical bits for any thread count. */
  double scale = p->w ? 1.0 : p->uniform_w;
  for (size_t q = 0; q < M; q++) {
    double s = 0;
    for (size_t c = 0; c < ns; c++) s += part[c * M + q];
    out[q] = s * scale;
  }
  free(part);
  return GFI_OK;
}


static void info_direct(const gfi_density_plan *p, int reason, gfi_fast_info *info) {
  plan_info_direct(info, p->D, p->tol, reason);
}

/* Why a plan has no fast route. */
static int no_fast_reason(const gfi_density_plan *p) {
  return plan_no_fast_reason(p->type == DENSITY_FOURIER && p->kernel.kind == GFI_PHI_CUSTOM, p->D);
}

static double max_abs(const double *v, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(v[i]) > m) m = fabs(v[i]);
  return m;
}

/* The density's promise: the bound within tol of the largest |value|. */
static double density_need(const void *ctx, size_t M, const double *res, const double *babs) {
  const double tol = *(const double *)ctx, m = max_abs(res, M), rel = m > 0 ? babs[0] / m : INFINITY;
  return rel > tol ? tol / rel : 1.0;
}

/* The band-limited route for the target t (whitened for the Gaussian), the
 * direct sum at the points qraw (or the grid lo:hi:n when qraw is NULL) when
 * the route is direct or, under auto, when the bound misses tol. */
static int eval_route(const gfi_density_plan *p, const bl_target *t, const double *qraw,
                      const double *lo, const double *hi, const size_t *n, double *out,
                      gfi_fast_info *info) {
  gfi_method route;
  double babs = 0;
  int st = bl_run(p->fast, t, direct_pair_cost(p->D), density_need, &p->tol, &out, &babs, info, &route);
  if (st) return st;
  if (route == GFI_METHOD_FAST) {
    double m = max_abs(out, t->M);
    info->bound_abs = babs;
    info->bound = m > 0 ? babs / m : INFINITY;
    info->scale = m;
    if (info->bound <= p->tol || p->method != GFI_METHOD_AUTO) return GFI_OK;
    /* the bound misses tol even after tightening: the direct sum keeps the promise */
    info_direct(p, GFI_ROUTE_BOUND, info);
  }
  if (qraw) return eval_direct(p, t->M, qraw, out);
  double *q = bl_grid_points(p->D, lo, hi, n, t->M);
  st = q ? eval_direct(p, t->M, q, out) : GFI_ENOMEM;
  free(q);
  return st;
}

int gfi_density_eval_info(const gfi_density_plan *p, size_t M, const double *queries, double *out,
                          gfi_fast_info *info) {
  if (!p) return GFI_EINVAL;
  gfi_fast_info dummy;
  if (!info) info = &dummy;
  if (!p->fast) info_direct(p, no_fast_reason(p), info);
  if (M == 0) return GFI_OK;
  if (!queries || !out) return GFI_EINVAL;
  int st = plan_check_queries(M, p->D, p->D, p->type == DENSITY_FOURIER ? p->R : NULL, queries);
  if (st) return st;
  if (!p->fast) return eval_direct(p, M, queries, out);
  /* the Gaussian's fast route works on whitened queries */
  double *qw = NULL;
  if (p->type == DENSITY_GAUSS) {
    qw = engine_whiten_rows(p->D, p->Linv, M, queries);
    if (!qw) return GFI_ENOMEM;
  }
  bl_target t = {M, qw ? qw : queries, NULL, NULL, NULL};
  st = eval_route(p, &t, queries, NULL, NULL, NULL, out, info);
  free(qw);
  return st;
}

int gfi_density_eval(const gfi_density_plan *p, size_t M, const double *queries, double *out) {
  return gfi_density_eval_info(p, M, queries, out, NULL);
}

int gfi_density_eval_grid(const gfi_density_plan *p, const double *lo, const double *hi,
                          const size_t *n, double *out, gfi_fast_info *info) {
  if (!p || !out) return GFI_EINVAL;
  gfi_fast_info dummy;
  if (!info) info = &dummy;
  size_t G;
  int st = bl_grid_check(p->D, p->type == DENSITY_FOURIER ? p->R : NULL, lo, hi, n, &G);
  if (st) return st;
  if (p->fast && p->type == DENSITY_GAUSS && !p->hdiag) {
    /* a full H shears the grid: its whitened points are scattered points */
    double *q = bl_grid_points(p->D, lo, hi, n, G);
    st = q ? gfi_density_eval_info(p, G, q, out, info) : GFI_ENOMEM;
    free(q);
    return st;
  }
  /* Gaussian, diagonal H: the whitened grid is the grid Linv_jj lo_j : Linv_jj hi_j */
  double zlo[BL_MAX_DIM], zhi[BL_MAX_DIM];
  if (p->fast && p->type == DENSITY_GAUSS) plan_whiten_grid(p->D, p->Linv, lo, hi, zlo, zhi);
  const double *glo = lo, *ghi = hi;
  if (p->fast && p->type == DENSITY_GAUSS) glo = zlo, ghi = zhi;
  if (!p->fast) {
    info_direct(p, no_fast_reason(p), info);
    double *q = bl_grid_points(p->D, lo, hi, n, G);
    st = q ? eval_direct(p, G, q, out) : GFI_ENOMEM;
    free(q);
    return st;
  }
  bl_target t = {G, NULL, glo, ghi, n};
  return eval_route(p, &t, NULL, lo, hi, n, out, info);
}

int gfi_density_fast_info(const gfi_density_plan *p, gfi_fast_info *info) {
  if (!p || !info) return GFI_EINVAL;
  if (!p->fast) {
    info_direct(p, no_fast_reason(p), info);
    return GFI_OK;
  }
  bl_plan_info(p->fast, p->D, info);
  return GFI_OK;
}

int gfi_bandwidth_rule(const char *rule, size_t N, size_t D, const double *data,
                       const double *weights, double *H) {
  if (!rule || !data || !H) return GFI_EINVAL;
  if (N == 0) return fail_param(GFI_EEMPTY, "data");
  int st = fail_named(gfi_check_dim(D), "D");
  if (st) return st;
  st = fail_named(gfi_check_finite(data, N * D, NULL), "data");
  if (st) return st;
  double wsum = (double)N, w2 = (double)N;
  if (weights) {
    st = fail_named(gfi_check_weights(weights, N, &wsum), "weights");
    if (st) return st;
    w2 = 0;
    for (size_t i = 0; i < N; i++) w2 += (weights[i] / wsum) * (weights[i] / wsum);
    w2 = 1.0 / w2; /* effective sample size */
  }
  double neff = w2;
  double f;
  if (strcmp(rule, "scott") == 0)
    f = pow(neff, -1.0 / (D + 4));
  else if (strcmp(rule, "silverman") == 0)
    f = pow(neff * (D + 2) / 4.0, -1.0 / (D + 4));
  else
    return fail_param(GFI_EINVAL, "rule");
  /* Weighted mean and unbiased covariance, as numpy.cov(aweights=w). */
  double *mu = calloc(D, sizeof *mu);
  if (!mu) return GFI_ENOMEM;
  for (size_t i = 0; i < N; i++) {
    double wi = weights ? weights[i] / wsum : 1.0 / N;
    for (size_t j = 0; j < D; j++) mu[j] += wi * data[i * D + j];
  }
  double sw2 = 0;
  for (size_t i = 0; i < N; i++) {
    double wi = weights ? weights[i] / wsum : 1.0 / N;
    sw2 += wi * wi;
  }
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b <= a; b++) {
      double s = 0;
      for (size_t i = 0; i < N; i++) {
        double wi = weights ? weights[i] / wsum : 1.0 / N;
        s += wi * (data[i * D + a] - mu[a]) * (data[i * D + b] - mu[b]);
      }
      double denom = 1.0 - sw2;
      double c = denom > 0 ? s / denom : 0.0;
      H[a * D + b] = H[b * D + a] = c * f * f;
    }
  free(mu);
  /* Degenerate data (identical points, points on a line in 2-D): the
   * covariance is rounding noise and H would be (nearly) singular, making
   * the estimate huge. Every axis must spread beyond 1e-12 of the data's
   * magnitude, and the correlation matrix must be nonsingular to about 1e-12
   * (its Cholesky pivots), as the normal-scale and LSCV selectors require. */
  for (size_t a = 0; a < D * D; a++)
    if (!isfinite(H[a])) return GFI_ERANGE; /* the covariance overflows */
  for (size_t a = 0; a < D; a++) {
    double big = 0;
    for (size_t i = 0; i < N; i++) big = fmax(big, fabs(data[i * D + a]));
    if (!(sqrt(H[a * D + a]) / f > 1e-12 * big) || !isfinite(H[a * D + a])) return GFI_EBANDWIDTH;
  }
  if (D > 1) {
    double *L = gfi_malloc2(D * D, sizeof *L); /* D <= GFI_MAX_DIM: no overflow */
    if (!L) return GFI_ENOMEM;
    for (size_t j = 0; j < D; j++)
      for (size_t i = 0; i < D; i++)
        L[i * D + j] = H[i * D + j] / sqrt(H[i * D + i] * H[j * D + j]); /* correlations */
    for (size_t j = 0; j < D; j++) {
      double d = L[j * D + j];
      for (size_t k = 0; k < j; k++) d -= L[j * D + k] * L[j * D + k];
      if (!(d > 1e-12)) {
        free(L);
        return GFI_EBANDWIDTH;
      }
      d = sqrt(d);
      L[j * D + j] = d;
      for (size_t i = j + 1; i < D; i++) {
        double v = L[i * D + j];
        for (size_t k = 0; k < j; k++) v -= L[i * D + k] * L[j * D + k];
        L[i * D + j] = v / d;
      }
    }
    free(L);
  }
  return GFI_OK;
}
