/* Nadaraya-Watson plans: validation, structure-of-arrays set-up, the threaded
 * evaluation driver (plain pass, scaled re-evaluation of underflowing
 * queries), combination of partial sums at a common scale, and row flags.
 * The inner loops live in regression_fourier.c and regression_gauss.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "regression_internal.h"
#include "plan_common.h"
#include "gfi/validate.h"
#include "alloc.h"
#include "fail.h"
#include "kernel_internal.h"

/* Padding points sit far from every query: their kernel values are 0. */
#define PAD_COORD 1e100

static void plan_free(gfi_nw_plan *p) {
  if (!p) return;
  free(p->y);
  free(p->box);
  free(p->R);
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

/* The cost model's direct cost per (query, data point) pair, nanoseconds on
 * one core (bench_fast_route: 0.61 ns for D = 1, 0.98 for D = 2, V = 1). */
static double direct_pair_cost(size_t D, size_t V) {
  return (0.37 * (double)D + 0.12 * (double)(V + 1)) * bl_direct_units((int)D);
}

void gfi_nw_destroy(gfi_nw_plan *plan) { plan_free(plan); }
size_t gfi_nw_dim(const gfi_nw_plan *p) { return p ? p->D : 0; }
size_t gfi_nw_size(const gfi_nw_plan *p) { return p ? p->N : 0; }
size_t gfi_nw_nresp(const gfi_nw_plan *p) { return p ? p->V : 0; }

int gfi_nw_data_box(const gfi_nw_plan *p, double *lo, double *hi) {
  if (!p || !lo || !hi) return GFI_EINVAL;
  return plan_data_facts(p->box, p->digest, p->D, lo, hi, NULL);
}

int gfi_nw_data_digest(const gfi_nw_plan *p, uint64_t digest[2]) {
  if (!p || !digest) return GFI_EINVAL;
  return plan_data_facts(p->box, p->digest, p->D, NULL, NULL, digest);
}

int gfi_nw_set_denom_tol(gfi_nw_plan *p, double tol) {
  if (!p) return GFI_EINVAL;
  if (!(tol >= 0 && tol < 1)) return fail_param(GFI_EINVAL, "denom_tol");
  p->denom_tol = tol;
  return GFI_OK;
}

int gfi_nw_set_scaling(gfi_nw_plan *p, int mode) {
  if (!p) return GFI_EINVAL;
  if (mode < GFI_NW_SCALE_AUTO || mode > GFI_NW_SCALE_ALWAYS) return fail_param(GFI_EINVAL, "mode");
  p->scaling = mode;
  return GFI_OK;
}

size_t nw_ws_size(const gfi_nw_plan *p) { return 4 * p->lay.qtile * p->D + 5 * p->lay.dblock; }

/* With R (the Fourier plans), *range is the phase-range check of the same
 * pass over x, which also finds the box and the digest of x. */
static int plan_common(gfi_nw_plan **out, nw_type type, size_t N, size_t D, size_t V,
                       const double *x, const double *y, const gfi_opts *opts, const double *R, int *range) {
  *out = NULL;
  if (N == 0) return fail_param(GFI_EEMPTY, "x");
  int st = fail_named(gfi_check_dim(D), "D");
  if (st) return st;
  if (!x || !y) return GFI_EINVAL;
  if (V == 0) return fail_param(GFI_EINVAL, "V");
  if (V > GFI_MAX_DIM) return fail_param(GFI_EDIM, "V");
  double *box = gfi_malloc3(2, D, sizeof *box);
  if (!box) return GFI_ENOMEM;
  uint64_t digest[2];
  st = plan_check_points(N, D, D + V, x, "x", R, opts, range, box, box + D, digest);
  if (!st) st = fail_named(gfi_check_finite(y, N * V, NULL), "y");
  gfi_nw_plan *p = st ? NULL : calloc(1, sizeof *p);
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
  p->V = V;
  engine_layout_init(&p->lay, N, opts);
  p->denom_tol = GFI_NW_DENOM_TOL;
  p->scaling = GFI_NW_SCALE_AUTO;
  p->y = gfi_calloc4(V, p->lay.Np, 1, sizeof *p->y);
  if (!p->y) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  for (size_t v = 0; v < V; v++)
    for (size_t i = 0; i < N; i++) p->y[v * p->lay.Np + i] = y[i * V + v];
  *out = p;
  return GFI_OK;
}

int gfi_nw_plan_fourier(gfi_nw_plan **plan, const gfi_kernel *k, size_t N, size_t D, size_t V,
                        const double *x, const double *y, const double *R, const gfi_opts *opts) {
  if (!plan || !k) return GFI_EINVAL;
  *plan = NULL;
  double tol;
  gfi_method method;
  int ost = plan_check_method(opts, k->kind == GFI_PHI_CUSTOM, D, &tol, &method);
  if (ost) return ost;
  /* a band-limited family other than phi(sinc) (flat-top): density only */
  if (k->kind != GFI_PHI_POW && k->kind != GFI_PHI_POLY && k->kind != GFI_PHI_CUSTOM)
    return fail_param(gfi_kernel_check_band(k) == GFI_OK ? GFI_EUNSUPPORTED : GFI_EINVAL, "k");
  if (k->kind == GFI_PHI_POW || k->kind == GFI_PHI_POLY) {
    int st = fail_named(gfi_check_order(k->l), "k");
    if (st) return st;
  } else if (k->kind != GFI_PHI_CUSTOM || !k->fn) {
    return fail_param(GFI_EINVAL, "k");
  }
  int st = plan_check_radii(D, R);
  if (st) return st;
  gfi_nw_plan *p;
  int range = GFI_OK;
  st = plan_common(&p, NW_FOURIER, N, D, V, x, y, opts, R, &range);
  if (st) return st;
  bl_box box = {{0}, {0}}; /* found by the check's pass */
  for (size_t j = 0; j < D && j < BL_MAX_DIM; j++) box.lo[j] = p->box[j], box.hi[j] = p->box[D + j];
  p->kernel = *k;
  /* The direct route's phase tables: with a fast route, on first direct
   * use (rows the fast route settles, a binned grid, never need them). */
  const int lazy = k->kind != GFI_PHI_CUSTOM && D <= BL_MAX_DIM && method != GFI_METHOD_DIRECT;
  p->R = gfi_malloc2(D, sizeof *p->R);
  if (!p->R) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  memcpy(p->R, R, D * sizeof *R);
  st = range ? fail_param(range, "R") /* a phase R x beyond 2^52 */
       : lazy ? GFI_OK /* the tables read the fast route's copy of the data (below) */
              : fail_named(engine_phase_tables_new(&p->lay, D, x, R, PAD_COORD, &p->rk, &p->rl, &p->sk, &p->ck), "R");
  if (st) {
    plan_free(p);
    return st;
  }
  p->method = method;
  p->tol = tol;
  for (size_t i = 0; i < N * V; i++) p->ymax = fmax(p->ymax, fabs(y[i]));
  if (k->kind != GFI_PHI_CUSTOM && D <= BL_MAX_DIM && method != GFI_METHOD_DIRECT) {
    double *c = gfi_malloc3((V + 1), N, sizeof *c);
    if (!c) {
      plan_free(p);
      return GFI_ENOMEM;
    }
    for (size_t i = 0; i < N; i++) {
      c[i] = 1.0;
      for (size_t v = 0; v < V; v++) c[(v + 1) * N + i] = y[i * V + v];
    }
    /* the sum keeps c; the points copied, or borrowed when the caller asks */
    const unsigned hold = BL_ADOPT_C | (opts && opts->borrow ? BL_BORROW_X : 0u);
    st = bl_sum_make_box(&p->fast, (int)D, k, N, x, V + 1, c, 0, R, opts, direct_pair_cost(D, V), &box, hold);
    if (!st) st = engine_lazy_borrow(&p->lazy, bl_sum_points(p->fast), PAD_COORD);
    if (st) {
      plan_free(p);
      return st;
    }
  }
  *plan = p;
  return GFI_OK;
}

int gfi_nw_plan_gauss(gfi_nw_plan **plan, size_t N, size_t D, size_t V, const double *x,
                      const double *y, const double *H, const gfi_opts *opts) {
  if (!plan) return GFI_EINVAL;
  *plan = NULL;
  double tol;
  gfi_method method;
  int st = plan_check_method(opts, 0, D, &tol, &method);
  if (st) return st;
  double *Linv, logdet_half; /* the normalising constant cancels */
  st = plan_whiten(D, H, &Linv, &logdet_half);
  if (st) return st;
  gfi_nw_plan *p = NULL;
  st = plan_common(&p, NW_GAUSS, N, D, V, x, y, opts, NULL, NULL);
  if (st) {
    free(Linv);
    return st;
  }
  p->Linv = Linv;
  p->exp_floor = -708.0;
  if (plan_gauss_table(&p->lay, D, Linv, x, &p->z, &p->hdiag)) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  p->method = method;
  p->tol = tol;
  for (size_t i = 0; i < N * V; i++) p->ymax = fmax(p->ymax, fabs(y[i]));
  if (D <= BL_MAX_DIM && method != GFI_METHOD_DIRECT) {
    /* the fast route on the whitened data: column 0 the denominator, 1..V the numerators */
    double *c = gfi_malloc3((V + 1), N, sizeof *c);
    if (c)
      for (size_t i = 0; i < N; i++) {
        c[i] = 1.0;
        for (size_t v = 0; v < V; v++) c[(v + 1) * N + i] = y[i * V + v];
      }
    /* c is the sum's from here */
    st = c ? plan_gauss_fast(&p->fast, D, Linv, N, x, V + 1, c, 0, opts, direct_pair_cost(D, V)) : GFI_ENOMEM;
    if (st) {
      plan_free(p);
      return st;
    }
  }
  *plan = p;
  return GFI_OK;
}

/* One pass over all data for M queries: per-super-chunk partial sums, then
 * combined in a fixed order into res (M x NW_ACC(V)) at a common scale. */
typedef struct {
  const gfi_nw_plan *p;
  const double *queries;
  int scaled;
} pass_ctx;

static void run_task(const void *vctx, size_t q0, size_t q1, size_t i0, size_t i1, double *dst,
                     double *ws) {
  const pass_ctx *c = vctx;
  if (c->p->type == NW_GAUSS)
    nw_gauss_task(c->p, c->queries, q0, q1, i0, i1, dst, ws);
  else if (c->scaled)
    nw_fourier_scaled_task(c->p, c->queries, q0, q1, i0, i1, dst, ws);
  else
    nw_fourier_plain_task(c->p, c->queries, q0, q1, i0, i1, dst, ws);
}

/* A super-chunk without data: scale -inf ("nothing yet"), sums 0. */
static void fill_empty(double *dst, size_t nq, size_t W) {
  for (size_t q = 0; q < nq; q++) {
    dst[q * W] = -INFINITY;
    for (size_t c = 1; c < W; c++) dst[q * W + c] = 0;
  }
}

/* ns sets of M accumulators (part: ns x M x W) to one common scale, added in
 * set order into res (M x W). base2: scales are powers of 2 (Fourier). */
static void combine(int base2, size_t ns, size_t M, size_t W, const double *part, double *res) {
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
}

static int run_pass(const gfi_nw_plan *p, size_t M, const double *queries, int scaled, double *res) {
  const size_t V = p->V, W = NW_ACC(V), ns = p->lay.nsuper;
  double *part = gfi_malloc4(ns, M, W, sizeof *part);
  if (!part) return GFI_ENOMEM;
  if (p->type == NW_FOURIER && p->lazy.lock_ok) {
    gfi_nw_plan *pm = (gfi_nw_plan *)p; /* the tables, once, under the lock */
    int st = engine_lazy_tables(&pm->lazy, &p->lay, p->D, p->R, &pm->rk, &pm->rl, &pm->sk, &pm->ck);
    if (st) {
      free(part);
      return st;
    }
  }
  pass_ctx ctx = {p, queries, scaled};
  int st = engine_run(&p->lay, M, W, nw_ws_size(p), run_task, &ctx, fill_empty, part);
  if (st) {
    free(part);
    return st;
  }
  combine(p->type == NW_FOURIER, ns, M, W, part, res);
  free(part);
  return GFI_OK;
}

/* Rows from their sums (res: M x W): the ratio, or NaN with a flag where the
 * denominator is empty, negative or cancels; returns the flagged count. */
static size_t ratio_rows(size_t V, double denom_tol, size_t M, const double *res, double *out, unsigned char *flags,
                         double *denom) {
  const size_t W = NW_ACC(V);
  size_t nf = 0;
  for (size_t q = 0; q < M; q++) {
    const double *r = res + q * W;
    double S = r[1], A = r[2];
    int flag = GFI_NW_FLAG_OK;
    if (!(A > 0))
      flag = GFI_NW_FLAG_EMPTY;
    else if (S < 0)
      flag = GFI_NW_FLAG_NEGATIVE;
    else if (S <= denom_tol * A)
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
  return nf;
}

/* The direct route: every row by the plain/scaled sums. */
static int eval_direct(const gfi_nw_plan *p, size_t M, const double *queries, double *out,
                       size_t *nflagged, unsigned char *flags, double *denom) {
  if (nflagged) *nflagged = 0;
  if (!p) return GFI_EINVAL;
  if (M == 0) return GFI_OK;
  if (!queries || !out) return GFI_EINVAL;
  int st = plan_check_queries(M, p->D, p->D + p->V, p->type == NW_FOURIER ? p->R : NULL, queries);
  if (st) return st;
  const size_t V = p->V, D = p->D, W = NW_ACC(V);
  double *res = gfi_malloc3(M, W, sizeof *res);
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
      size_t *idx = gfi_malloc2(nlow, sizeof *idx);
      double *qq = gfi_malloc3(nlow, D, sizeof *qq), *r2 = gfi_malloc3(nlow, W, sizeof *r2);
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
  size_t nf = ratio_rows(V, p->denom_tol, M, res, out, flags, denom);
  free(res);
  if (nflagged) *nflagged = nf;
  return nf ? GFI_EDENOM : GFI_OK;
}

int nw_block_sums(const gfi_nw_plan *p, size_t M, const double *queries, double *res) {
  if (!p || (M && (!queries || !res))) return GFI_EINVAL;
  if (M == 0) return GFI_OK;
  int st = plan_check_queries(M, p->D, p->D + p->V, p->type == NW_FOURIER ? p->R : NULL, queries);
  if (st) return st;
  /* the scaled path: right for every D and l, with no second pass */
  return run_pass(p, M, queries, p->type == NW_FOURIER, res);
}

int nw_sums_finish(int fourier, size_t V, double denom_tol, size_t nsets, size_t M, const double *parts, double *out,
                   size_t *nflagged, unsigned char *flags) {
  if (nflagged) *nflagged = 0;
  if (!parts || !out || !nsets) return GFI_EINVAL;
  const size_t W = NW_ACC(V);
  double *res = gfi_malloc3(M ? M : 1, W, sizeof *res);
  if (!res) return GFI_ENOMEM;
  combine(fourier, nsets, M, W, parts, res);
  size_t nf = ratio_rows(V, denom_tol, M, res, out, flags, NULL);
  free(res);
  if (nflagged) *nflagged = nf;
  return nf ? GFI_EDENOM : GFI_OK;
}

static void info_direct(const gfi_nw_plan *p, gfi_fast_info *info) {
  plan_info_direct(info, p->D, p->tol,
                   plan_no_fast_reason(p->type == NW_FOURIER && p->kernel.kind == GFI_PHI_CUSTOM, p->D));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* NW's acceptance of a fast pass (res: G x (V+1), column 0 the
 * denominator S): a row is settled when its ratio's bound is within tol
 * times max |y| (finish_fast's test). With every bound scaled by f a row
 * settles when f <= tol ymax S / (eN + fm eS + tol ymax eS), fm its largest
 * |ratio|; rows with S <= 0 cannot, and are not counted. When more than
 * G / 20 rows with S > 0 are unsettled, the factor that settles all but
 * G / 20 of them (those go to the direct sum); 1 otherwise. */
static double nw_need(const void *ctx, size_t G, const double *res, const double *babs) {
  const gfi_nw_plan *p = ctx;
  const size_t V = p->V, nc = V + 1, keep = G / 20;
  const double lim = p->tol * p->ymax, eS = babs[0];
  double eN = 0;
  for (size_t v = 0; v < V; v++) eN = fmax(eN, babs[v + 1]);
  double *r = gfi_malloc2(G ? G : 1, sizeof *r);
  if (!r) return 1.0; /* unsettled rows go to the direct sum */
  size_t n = 0;
  for (size_t g = 0; g < G; g++) {
    const double *row = res + g * nc;
    double S = row[0], lo = S - eS, fm = 0;
    if (!(S > 0)) continue; /* no tolerance helps: the direct sum */
    for (size_t v = 0; v < V; v++) fm = fmax(fm, fabs(row[1 + v] / S));
    if (lo > 0 && (eN + fm * eS) / lo <= lim) continue;
    r[n++] = lim * S / (eN + fm * eS + lim * eS);
  }
  double f = 1.0;
  if (n > keep) {
    qsort(r, n, sizeof *r, cmp_double);
    f = r[keep] > 0 ? r[keep] : 1.0;
  }
  free(r);
  return f;
}

/* Rows of a fast evaluation (res: G x (V+1), column 0 the denominator):
 * accept those whose flags and ratio the error bounds settle, evaluate the
 * others by the direct sum (their points from pts, or from the grid). */
static int finish_fast(const gfi_nw_plan *p, const double *babs, size_t G, const double *res,
                       const double *pts, const double *glo, const double *ghi, const size_t *gn,
                       double *out, size_t *nflagged, unsigned char *flags, double *denom,
                       gfi_fast_info *info) {
  const size_t V = p->V, D = p->D, nc = V + 1;
  /* weights of both signs: an odd power of sinc in phi */
  int odd = 0;
  for (int j = 1; j <= p->kernel.l; j += 2)
    odd |= p->kernel.kind == GFI_PHI_POW ? (p->kernel.l & 1) : p->kernel.coef[j] != 0;
  double eS = babs[0], eN = 0;
  for (size_t v = 0; v < V; v++) eN = fmax(eN, babs[v + 1]);
  const double Aup = (double)p->N * p->fast->K0; /* sum_i |K_i| <= N K0 */
  const double ys = p->ymax, lim = p->tol * ys;
  unsigned char *redo = malloc(G ? G : 1);
  if (!redo) return GFI_ENOMEM;
  size_t nredo = 0, nf = 0;
  double worst = 0;
  for (size_t g = 0; g < G; g++) {
    const double *r = res + g * nc;
    double S = r[0], lo = S - eS;
    double fmaxabs = 0;
    for (size_t v = 0; v < V; v++) fmaxabs = fmax(fmaxabs, fabs(r[1 + v] / S));
    double err = lo > 0 ? (eN + fmaxabs * eS) / lo : INFINITY;
    int ok = lo > 0 && lo > p->denom_tol * (odd ? Aup : S + eS) && err <= lim && !(odd && denom);
    redo[g] = !ok;
    if (!ok) {
      nredo++;
      continue;
    }
    if (ys > 0 && err / ys > worst) worst = err / ys;
    for (size_t v = 0; v < V; v++) out[g * V + v] = r[1 + v] / S;
    if (flags) flags[g] = GFI_NW_FLAG_OK;
    if (denom) denom[g] = 1.0; /* even l: S = sum |K_i| */
  }
  info->rows_direct = nredo;
  info->bound_abs = fmax(eS, eN);
  info->bound = worst;
  info->scale = ys;
  int st = GFI_OK;
  if (nredo) {
    double *q = gfi_malloc3(nredo, D, sizeof *q), *o = gfi_malloc3(nredo, V, sizeof *o);
    double *dn = denom ? gfi_malloc2(nredo, sizeof *dn) : NULL;
    unsigned char *fl = malloc(nredo);
    if (!q || !o || !fl || (denom && !dn)) {
      st = GFI_ENOMEM;
    } else {
      size_t a = 0;
      for (size_t g = 0; g < G; g++) {
        if (!redo[g]) continue;
        if (pts) {
          memcpy(q + a * D, pts + g * D, D * sizeof *q);
        } else {
          size_t rem = g;
          for (size_t j = D; j-- > 0;) {
            size_t k = rem % gn[j];
            rem /= gn[j];
            q[a * D + j] = gn[j] > 1 ? glo[j] + (ghi[j] - glo[j]) * (double)k / (double)(gn[j] - 1)
                                     : glo[j];
          }
        }
        a++;
      }
      st = eval_direct(p, nredo, q, o, &nf, fl, dn);
      if (st == GFI_EDENOM) st = GFI_OK;
      if (!st) {
        a = 0;
        for (size_t g = 0; g < G; g++) {
          if (!redo[g]) continue;
          memcpy(out + g * V, o + a * V, V * sizeof *out);
          if (flags) flags[g] = fl[a];
          if (denom) denom[g] = dn[a];
          a++;
        }
      }
    }
    free(q);
    free(o);
    free(dn);
    free(fl);
  }
  free(redo);
  if (st) return st;
  if (nflagged) *nflagged = nf;
  return nf ? GFI_EDENOM : GFI_OK;
}

int gfi_nw_eval_ex(const gfi_nw_plan *p, size_t M, const double *queries, double *out,
                   size_t *nflagged, unsigned char *flags, double *denom, gfi_fast_info *info) {
  if (nflagged) *nflagged = 0;
  if (!p) return GFI_EINVAL;
  gfi_fast_info dummy;
  if (!info) info = &dummy;
  info_direct(p, info);
  if (!p->fast || M == 0) return eval_direct(p, M, queries, out, nflagged, flags, denom);
  if (!queries || !out) return GFI_EINVAL;
  int st = plan_check_queries(M, p->D, p->D + p->V, p->type == NW_FOURIER ? p->R : NULL, queries);
  if (st) return st;
  const size_t D = p->D, nc = p->V + 1;
  /* the Gaussian's fast route works on whitened queries */
  double *qw = NULL;
  if (p->type == NW_GAUSS) {
    qw = engine_whiten_rows(D, p->Linv, M, queries);
    if (!qw) return GFI_ENOMEM;
  }
  double *res = NULL, *babs = gfi_malloc2(nc, sizeof *babs);
  gfi_method route = GFI_METHOD_DIRECT;
  st = babs ? GFI_OK : GFI_ENOMEM;
  bl_target t = {M, qw ? qw : queries, NULL, NULL, NULL};
  if (!st) st = bl_run(p->fast, &t, direct_pair_cost(D, p->V), nw_need, p, &res, babs, info, &route);
  if (!st) {
    if (route == GFI_METHOD_FAST)
      st = finish_fast(p, babs, M, res, queries, NULL, NULL, NULL, out, nflagged, flags, denom, info);
    else
      st = eval_direct(p, M, queries, out, nflagged, flags, denom);
  }
  free(babs);
  free(res);
  free(qw);
  return st;
}

int gfi_nw_eval_flags(const gfi_nw_plan *p, size_t M, const double *queries, double *out,
                      size_t *nflagged, unsigned char *flags, double *denom) {
  return gfi_nw_eval_ex(p, M, queries, out, nflagged, flags, denom, NULL);
}

int gfi_nw_eval(const gfi_nw_plan *p, size_t M, const double *queries, double *out, size_t *nflagged) {
  return gfi_nw_eval_ex(p, M, queries, out, nflagged, NULL, NULL, NULL);
}

int gfi_nw_eval_grid(const gfi_nw_plan *p, const double *lo, const double *hi, const size_t *n,
                     double *out, size_t *nflagged, gfi_fast_info *info) {
  return gfi_nw_eval_grid_ex(p, lo, hi, n, out, nflagged, NULL, info);
}

int gfi_nw_eval_grid_ex(const gfi_nw_plan *p, const double *lo, const double *hi, const size_t *n,
                        double *out, size_t *nflagged, unsigned char *flags, gfi_fast_info *info) {
  if (nflagged) *nflagged = 0;
  if (!p || !out) return GFI_EINVAL;
  gfi_fast_info dummy;
  if (!info) info = &dummy;
  info_direct(p, info);
  size_t G;
  int st = bl_grid_check(p->D, p->type == NW_FOURIER ? p->R : NULL, lo, hi, n, &G);
  if (st) return st;
  if (p->fast && p->type == NW_GAUSS && !p->hdiag) {
    /* a full H shears the grid: its whitened points are scattered points */
    double *q = bl_grid_points(p->D, lo, hi, n, G);
    st = q ? gfi_nw_eval_ex(p, G, q, out, nflagged, flags, NULL, info) : GFI_ENOMEM;
    free(q);
    return st;
  }
  /* Gaussian, diagonal H: the whitened grid is the grid Linv_jj lo_j : Linv_jj hi_j */
  double zlo[BL_MAX_DIM], zhi[BL_MAX_DIM];
  const double *glo = lo, *ghi = hi;
  if (p->fast && p->type == NW_GAUSS) {
    plan_whiten_grid(p->D, p->Linv, lo, hi, zlo, zhi);
    glo = zlo;
    ghi = zhi;
  }
  gfi_method route = GFI_METHOD_DIRECT;
  if (p->fast) {
    const size_t nc = p->V + 1;
    double *res = NULL, *babs = gfi_malloc2(nc, sizeof *babs);
    st = babs ? GFI_OK : GFI_ENOMEM;
    bl_target t = {G, NULL, glo, ghi, n};
    if (!st) st = bl_run(p->fast, &t, direct_pair_cost(p->D, p->V), nw_need, p, &res, babs, info, &route);
    if (!st && route == GFI_METHOD_FAST)
      st = finish_fast(p, babs, G, res, NULL, lo, hi, n, out, nflagged, flags, NULL, info);
    free(res);
    free(babs);
    if (st || route == GFI_METHOD_FAST) return st;
  }
  double *q = bl_grid_points(p->D, lo, hi, n, G);
  st = q ? eval_direct(p, G, q, out, nflagged, flags, NULL) : GFI_ENOMEM;
  free(q);
  return st;
}

int gfi_nw_fast_info(const gfi_nw_plan *p, gfi_fast_info *info) {
  if (!p || !info) return GFI_EINVAL;
  info_direct(p, info);
  if (!p->fast) return GFI_OK;
  bl_plan_info(p->fast, p->D, info);
  return GFI_OK;
}
