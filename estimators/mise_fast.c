/* The empirical characteristic function at the Plancherel nodes through a
 * type-3 NUFFT, and the streamed Monte-Carlo MISE built on it: replication
 * k's points are drawn chunk by chunk from RNG stream (seed, k) and spread,
 * so memory is O(chunk + nodes + NUFFT grid) whatever N. See mise_fast.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mise_fast.h"
#include "bandlimited.h"
#include "../lib/nufft.h"
#include "par.h"
#include "gfi/rng.h"
#include "gfi/stats.h"
#include "gfi/validate.h"
#include "alloc.h"

/* The engine's rule (bl_ntol, as gfi_ecf): one transform of weights summing
 * to 1, so every node's empirical cf is within BL_NUFFT_SAFETY ntol = tol / 2
 * of the exact sum: tol is a bound on the cf's error, as documented. */
double ise_fast_tol(double tol) { return bl_ntol(tol > 0 ? tol : GFI_FAST_TOL_DEFAULT, 1.0, 1); }

/* Half-widths of the targets' box per axis around the centre a plan with
 * real sources shifts them to (axis 0 covers [0, L]: no shift). */
static void target_halfwidths(const ise_pl_rule *r, const axis_nodes *ax, const nufft_opts *o,
                              double *S) {
  for (size_t j = 0; j < r->D; j++) {
    double lo = ax[j].t[0], hi = ax[j].t[ax[j].n - 1], c = nufft3_target_centre(o, lo, hi);
    S[j] = fmax(hi - c, c - lo);
  }
}

int ise_pl_engine(gfi_method asked, const ise_pl_rule *r, const axis_nodes *ax, double N, const double *xhalf,
                  double tol, int direct_ok, gfi_method *engine) {
  size_t D = r->D, K = 1;
  for (size_t j = 0; j < D; j++) K *= ax[j].n;
  /* nanoseconds, roughly, on one core (both routes in the same units, which
   * is all bl_decide compares): direct = sines and cosines per (point,
   * axis-0 node) and a complex multiply-add per (point, node); fast = w^D
   * kernel values per point and per node, and the FFT of the fine grid */
  bl_cost c = {D == 1 ? 15.0 * N * (double)K : N * (15.0 * (double)ax[0].n + 1.5 * (double)K), 0, 0, direct_ok, 0};
  nufft_opts no;
  nufft_default_opts(&no);
  no.tol = ise_fast_tol(tol);
  no.real_sources = 1;
  double S[MISE_MAXD];
  target_halfwidths(r, ax, &no, S);
  size_t nf[3];
  size_t G = nufft3_grid_size((int)D, xhalf, S, &no, nf);
  if (G == 0) {
    c.fast_why = GFI_ROUTE_NODES;
  } else {
    double wD = pow(bl_nufft_width(no.tol), (double)D);
    c.fast = 2.0 * (N + (double)K) * wD + 5.0 * (double)G * log2((double)G + 2);
  }
  return bl_decide(asked, &c, engine, NULL);
}

double *ise_pl_targets(const ise_pl_rule *r, const axis_nodes *ax, size_t *K_out) {
  size_t D = r->D, n0 = ax[0].n, nrow = ise_pl_row(r, ax);
  if (nrow && n0 > SIZE_MAX / nrow / D / sizeof(double)) return NULL;
  size_t K = n0 * nrow;
  double *t = gfi_malloc3(K, D, sizeof *t);
  if (!t) return NULL;
  size_t n1 = D > 1 ? ax[1].n : 1, n2 = D > 2 ? ax[2].n : 1, q = 0;
  for (size_t i0 = 0; i0 < n0; i0++)
    for (size_t i1 = 0; i1 < n1; i1++)
      for (size_t i2 = 0; i2 < n2; i2++, q++) {
        t[q * D] = ax[0].t[i0];
        if (D > 1) t[q * D + 1] = ax[1].t[i1];
        if (D > 2) t[q * D + 2] = ax[2].t[i2];
      }
  *K_out = K;
  return t;
}

int ise_pl_ecf_nufft(const ise_pl_rule *r, const axis_nodes *ax, size_t N, const double *x,
                     double tol, int nt, double *pr, double *pim) {
  size_t D = r->D, K = 0;
  double lo[MISE_MAXD], hi[MISE_MAXD];
  for (size_t j = 0; j < D; j++) {
    lo[j] = INFINITY;
    hi[j] = -INFINITY;
  }
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < D; j++) {
      lo[j] = fmin(lo[j], x[i * D + j]);
      hi[j] = fmax(hi[j], x[i * D + j]);
    }
  double *t = ise_pl_targets(r, ax, &K);
  double *f = K ? gfi_malloc3(2, K, sizeof *f) : NULL;
  nufft3_plan *p = NULL;
  int st = t && f ? GFI_OK : GFI_ENOMEM;
  nufft_opts no;
  nufft_default_opts(&no);
  no.tol = ise_fast_tol(tol);
  no.nthreads = nt;
  no.real_sources = 1; /* every strength 1: no phase per point, a real grid */
  if (!st) st = nufft3_plan_make(&p, (int)D, lo, hi, +1, K, t, &no);
  for (size_t b = 0; b < N && !st; b += PL_CHUNK) {
    size_t n = N - b < PL_CHUNK ? N - b : PL_CHUNK;
    st = nufft3_add_real(p, n, x + b * D, NULL, 1.0);
  }
  if (!st) st = nufft3_exec(p, f);
  if (!st)
    for (size_t q = 0; q < K; q++) {
      pr[q] += f[2 * q];
      pim[q] += f[2 * q + 1];
    }
  nufft3_destroy(p);
  free(t);
  free(f);
  return st;
}

double ise_pl_err_bound(const ise_pl_rule *r, double tol, double swk2, double s) {
  /* |sum W (|a + K e|^2 - |a|^2)| <= 2 sqrt(sum W K^2) sqrt(sum W |a|^2) |e|_max
   * + |e|_max^2 sum W K^2, doubled for the half-space, scaled by (2 pi)^-D;
   * |e|_max <= BL_NUFFT_SAFETY tol, the engine's factor for one transform of
   * weights summing to 1 (lib/nufft.h measures up to 2.5 tol: a bound with
   * e = tol did not hold for coherent sources) */
  double e = BL_NUFFT_SAFETY * tol;
  return pow(2 * M_PI, -(double)r->D) * 2 * (2 * e * sqrt(swk2 * fmax(s, 0)) + e * e * swk2);
}

/* ---- the streamed Monte-Carlo MISE -------------------------------------------- */

/* Draws n points (n x D) from r in sampler calls of at most `block` points:
 * gfi_model_sample's samplers keep no state outside r, so the points are
 * those of one call drawing all of them. */
static int draw(const gfi_model *m, gsl_rng *r, size_t n, size_t block, size_t D, double *x) {
  for (size_t b = 0; b < n; b += block) {
    size_t k = n - b < block ? n - b : block;
    int st = gfi_model_sample(m, r, k, x + b * D);
    if (st) return st;
  }
  return gfi_check_finite(x, n * D, NULL);
}

/* The node-sum of W |phi K - psi|^2 for raw ecf sums (pr, pim) / Ntot, row
 * by row in a fixed order; *swk2 (may be NULL) receives sum W K^2. */
static double node_sum(size_t n0, size_t nrow, const double *k0, const double *w0,
                       const double *kr, const double *wr, const double *psr, const double *psi,
                       const double *pr, const double *pim, double Ntot, double *swk2) {
  double s = 0, sk = 0;
  for (size_t i0 = 0; i0 < n0; i0++) {
    double srow = 0, skrow = 0;
    for (size_t q = 0; q < nrow; q++) {
      size_t g = i0 * nrow + q;
      double K = k0[i0] * kr[q], W = w0[i0] * wr[q];
      double dr = pr[g] / Ntot * K - psr[g], di = pim[g] / Ntot * K - psi[g];
      srow += W * (dr * dr + di * di);
      skrow += W * K * K;
    }
    s += srow;
    sk += skrow;
  }
  if (swk2) *swk2 = sk;
  return s;
}

typedef struct {
  gsl_rng *r;
  double *x, *f;
  nufft3_plan *p;
} worker;

static void worker_free(worker *w) {
  if (w->r) gsl_rng_free(w->r);
  free(w->x);
  free(w->f);
  nufft3_destroy(w->p);
  memset(w, 0, sizeof *w);
}

/* The shared state of the three threaded passes of mise_mc_stream. A
 * thread's workspace is a pointer to one of the T workers, claimed once per
 * run; every task resets the worker's RNG to its own stream (and its NUFFT
 * grid), so which worker runs a task does not change its result. */
typedef struct {
  const gfi_model *m;
  const gfi_mise_opts *o;
  size_t N, D, block;
  worker *wk;
  int next; /* next worker to claim */
  double *ext;
  const ise_pl_rule *rule;
  const axis_nodes *ax;
  size_t n0, nrow, K, b0;
  double *psr, *psi, *slots, *ise, *bound;
  const double *k0, *w0, *kr, *wr;
  gfi_method engine;
  double tol;
  int inner;
  size_t rank, size; /* replication of local task t: rank + t * size */
} ms_ctx;

/* Claiming a worker is the one shared action: any free worker does, so the
 * order in which threads claim them does not matter. */
static int claim_worker(void *vc, void *ws) {
  ms_ctx *c = vc;
  int i;
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic capture
#endif
  i = c->next++;
  *(worker **)ws = c->wk + i;
  return GFI_OK;
}

/* Pass 1, replication k: its extent (min and max per axis) into ext. */
static int extent_task(void *vc, size_t t, void *ws) {
  const ms_ctx *c = vc;
  worker *w = *(worker **)ws;
  size_t D = c->D, N = c->N, k = c->rank + t * c->size;
  double *lo = c->ext + t * 2 * D, *hi = lo + D;
  for (size_t j = 0; j < D; j++) {
    lo[j] = INFINITY;
    hi[j] = -INFINITY;
  }
  int s2 = gfi_rng_reset(w->r, c->o->base.seed, (uint64_t)k);
  for (size_t b = 0; b < N && !s2; b += PL_CHUNK) {
    size_t n = N - b < PL_CHUNK ? N - b : PL_CHUNK;
    s2 = draw(c->m, w->r, n, c->block, D, w->x);
    for (size_t i = 0; i < n && !s2; i++)
      for (size_t j = 0; j < D; j++) {
        lo[j] = fmin(lo[j], w->x[i * D + j]);
        hi[j] = fmax(hi[j], w->x[i * D + j]);
      }
  }
  return s2;
}

/* psi at the nodes of axis-0 row i0; ws holds the row's targets. */
static int psi_task(void *vc, size_t i0, void *ws) {
  const ms_ctx *c = vc;
  return ise_pl_cf_row(c->m, c->rule, c->ax, i0, ws, c->psr + i0 * c->nrow,
                       c->psi + i0 * c->nrow);
}

/* Pass 2, local replication b0 + q: raw sums into slot q, its ISE and bound. */
static int rep_task(void *vc, size_t q, void *ws) {
  const ms_ctx *c = vc;
  worker *w = *(worker **)ws;
  size_t D = c->D, N = c->N, K = c->K, k = c->rank + (c->b0 + q) * c->size;
  double *pr = c->slots + q * 2 * K, *pim = pr + K;
  memset(pr, 0, 2 * K * sizeof *pr);
  int s2 = gfi_rng_reset(w->r, c->o->base.seed, (uint64_t)k);
  if (c->engine == GFI_METHOD_FAST) nufft3_reset(w->p);
  for (size_t b = 0; b < N && !s2; b += PL_CHUNK) {
    size_t n = N - b < PL_CHUNK ? N - b : PL_CHUNK;
    s2 = draw(c->m, w->r, n, c->block, D, w->x);
    if (!s2)
      s2 = c->engine == GFI_METHOD_FAST ? nufft3_add_real(w->p, n, w->x, NULL, 1.0)
                                        : ise_pl_ecf_accum(c->rule, c->ax, n, w->x, c->inner, pr, pim);
  }
  if (!s2 && c->engine == GFI_METHOD_FAST) {
    s2 = nufft3_exec(w->p, w->f);
    for (size_t g = 0; g < K && !s2; g++) {
      pr[g] = w->f[2 * g];
      pim[g] = w->f[2 * g + 1];
    }
  }
  if (!s2) {
    double swk2, s = node_sum(c->n0, c->nrow, c->k0, c->w0, c->kr, c->wr, c->psr, c->psi, pr,
                              pim, (double)N, &swk2);
    s2 = ise_pl_finish(c->rule, s, c->ise + k);
    c->bound[k] = c->engine == GFI_METHOD_FAST ? ise_pl_err_bound(c->rule, c->tol, swk2, s) : 0.0;
  }
  return s2;
}

/* Process 0's fold of replications [*kf, kend) into the pooled sums, ise and
 * bound, in replication order: its own from the slots of local batch b0, the
 * others' received (status, ise, bound, raw sums). */
static int fold(const mise_split *sp, size_t *kf, size_t kend, size_t b0, size_t K, const double *slots,
                double *pool, double *ise, double *bound, double *msg) {
  size_t P = sp ? (size_t)sp->size : 1;
  for (; *kf < kend; (*kf)++) {
    size_t k = *kf;
    const double *src;
    if (k % P == 0) {
      src = slots + (k / P - b0) * 2 * K;
    } else {
      size_t n = 3 + (pool ? 2 * K : 0);
      if (sp->recv(sp->ctx, (int)(k % P), msg, n)) return GFI_EINVAL;
      if (msg[0] != 0) return (int)msg[0];
      ise[k] = msg[1];
      bound[k] = msg[2];
      src = msg + 3;
    }
    if (pool)
      for (size_t g = 0; g < 2 * K; g++) pool[g] += src[g];
  }
  return GFI_OK;
}

int mise_mc_stream(const gfi_model *m, const gfi_kernel *k, size_t N, const double *R, size_t nreps,
                   const gfi_mise_opts *o, int nt, const mise_split *sp, gfi_mise_result *res,
                   double *ise_out) {
  size_t D = gfi_model_dim(m);
  const size_t rank = sp ? (size_t)sp->rank : 0, P = sp ? (size_t)sp->size : 1;
  /* this process's replications: rank, rank + P, ... */
  const size_t nloc = nreps > rank ? (nreps - rank + P - 1) / P : 0;
  if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
  ise_pl_rule rule;
  int st = ise_pl_init(m, k, R, o->resolution, nt, &rule);
  if (st) return st;
  size_t block = o->base.data_block ? (o->base.data_block < PL_CHUNK ? o->base.data_block : PL_CHUNK) : PL_CHUNK;
  double tol = ise_fast_tol(o->base.tol); /* the NUFFT's tolerance */
  int T = nt < 1 ? 1 : nt, T1;
  if ((size_t)T > nloc) T = nloc ? (int)nloc : 1;
  int inner = nt / T > 1 ? nt / T : 1;
  if (nreps > SIZE_MAX / (2 * MISE_MAXD)) return GFI_ENOMEM;
  double *ext = gfi_malloc4(nloc ? nloc : 1, 2, D, sizeof *ext);
  T1 = T; /* workers of pass 1; pass 2 may use fewer */
  worker *wk = calloc((size_t)T, sizeof *wk);
  if (!ext || !wk) {
    free(ext);
    free(wk);
    return GFI_ENOMEM;
  }
  for (int t = 0; t < T && !st; t++) {
    wk[t].r = gfi_rng_stream(o->base.seed, 0);
    wk[t].x = gfi_malloc3(PL_CHUNK, D, sizeof *wk[t].x);
    if (!wk[t].r || !wk[t].x) st = GFI_ENOMEM;
  }
  /* pass 1: every replication's extent (min and max per axis) */
  ms_ctx c = {0};
  c.m = m;
  c.o = o;
  c.N = N;
  c.D = D;
  c.block = block;
  c.wk = wk;
  c.ext = ext;
  c.rule = &rule;
  c.rank = rank;
  c.size = P;
  if (!st) {
    par_spec ps = {nloc, T, sizeof(worker *), 1, claim_worker, NULL};
    st = par_run(&ps, extent_task, &c);
  }
  /* one rule for every replication and the pooled sample: the union's extent */
  double lo[MISE_MAXD], hi[MISE_MAXD], xabs[MISE_MAXD], xhalf[MISE_MAXD];
  axis_nodes ax[MISE_MAXD] = {{0, NULL, NULL}, {0, NULL, NULL}, {0, NULL, NULL}};
  {
    /* min and max are exact: the union does not depend on the split; the
     * processes' statuses travel along (the worst one, negated, in slot D) */
    double elo[MISE_MAXD + 1], ehi[MISE_MAXD + 1];
    for (size_t j = 0; j < D; j++) {
      elo[j] = INFINITY;
      ehi[j] = -INFINITY;
      for (size_t t = 0; t < nloc && !st; t++) {
        elo[j] = fmin(elo[j], ext[t * 2 * D + j]);
        ehi[j] = fmax(ehi[j], ext[t * 2 * D + D + j]);
      }
    }
    elo[D] = -(double)st;
    ehi[D] = 0;
    if (sp && sp->minmax(sp->ctx, elo, ehi, D + 1)) st = GFI_EINVAL;
    else if (elo[D] < 0) st = (int)-elo[D];
    for (size_t j = 0; j < D && !st; j++) {
      lo[j] = elo[j];
      hi[j] = ehi[j];
      xabs[j] = fmax(fabs(lo[j]), fabs(hi[j]));
      xhalf[j] = 0.5 * (hi[j] - lo[j]);
    }
    if (!st) st = ise_pl_axes(&rule, 1, xabs, o->resolution, (double)ISE_STREAM_MAX_NODES, ax);
  }
  free(ext);
  gfi_method engine = GFI_METHOD_DIRECT;
  size_t n0 = 0, nrow = 0, K = 0;
  double *tg = NULL, *psr = NULL, *psi = NULL, *k0 = NULL, *w0 = NULL, *kr = NULL, *wr = NULL;
  double *slots = NULL, *pool = NULL, *ise = NULL, *bound = NULL, *msg = NULL;
  if (!st) {
    st = ise_pl_engine(o->base.method, &rule, ax, (double)N, xhalf, o->base.tol, 1, &engine);
  }
  if (!st) {
    n0 = ax[0].n;
    nrow = ise_pl_row(&rule, ax);
    K = n0 * nrow;
    /* Pass 2 holds per worker 2 K raw sums, K transform outputs and (fast
     * route) a plan whose grids and targets add a few K more: about
     * MC_NODE_BYTES a node. A heavy-tailed sample's extent can take K to
     * ISE_STREAM_MAX_NODES, so fewer workers, each with more threads, keep
     * the workers under MC_WORKERS_BYTES in all. The results do not change:
     * a replication's sums do not depend on the threads that form them. */
    size_t cap = MC_WORKERS_BYTES / (K * MC_NODE_BYTES + 1);
    if (cap < 1) cap = 1;
    if ((size_t)T > cap) {
      T = (int)cap;
      inner = nt / T > 1 ? nt / T : 1;
    }
    psr = gfi_malloc2(K, sizeof *psr);
    psi = gfi_malloc2(K, sizeof *psi);
    k0 = gfi_malloc2(n0, sizeof *k0);
    w0 = gfi_malloc2(n0, sizeof *w0);
    kr = gfi_malloc2(nrow, sizeof *kr);
    wr = gfi_malloc2(nrow, sizeof *wr);
    slots = gfi_malloc4((size_t)T, 2, K, sizeof *slots);
    pool = o->parts ? gfi_calloc4(2, K, 1, sizeof *pool) : NULL;
    ise = gfi_malloc2(nreps, sizeof *ise);
    bound = gfi_malloc2(nreps, sizeof *bound);
    msg = P > 1 ? gfi_malloc3(2, K + 2, sizeof *msg) : NULL; /* 3 + 2 K doubles */
    if (!psr || !psi || !k0 || !w0 || !kr || !wr || !slots || (o->parts && !pool) || !ise || !bound ||
        (P > 1 && !msg))
      st = GFI_ENOMEM;
  }
  if (!st && engine == GFI_METHOD_FAST) {
    tg = ise_pl_targets(&rule, ax, &K);
    if (!tg) st = GFI_ENOMEM;
    nufft_opts no;
    nufft_default_opts(&no);
    no.tol = tol;
    no.nthreads = inner;
    no.real_sources = 1; /* every strength 1: no phase per point, a real grid */
    for (int t = 0; t < T && !st; t++) {
      wk[t].f = gfi_malloc3(2, K, sizeof *wk[t].f);
      if (!wk[t].f) st = GFI_ENOMEM;
      if (!st) st = nufft3_plan_make(&wk[t].p, (int)D, lo, hi, +1, K, tg, &no);
    }
    free(tg);
    tg = NULL;
  }
  /* psi and the kappa and weight factors at the nodes, once */
  if (!st) {
    ise_pl_axis_factors(&rule, ax, 0, k0, w0);
    ise_pl_row_factors(&rule, ax, kr, wr);
    c.ax = ax;
    c.n0 = n0;
    c.nrow = nrow;
    c.psr = psr;
    c.psi = psi;
    par_spec sp = {n0, nt, nrow * D * sizeof(double), 1, NULL, NULL};
    st = par_run(&sp, psi_task, &c);
  }
  /* pass 2: replications in batches of T; each replication's raw sums go to
   * its slot, the pooled sums add the slots in replication order */
  c.K = K;
  c.slots = slots;
  c.ise = ise;
  c.bound = bound;
  c.k0 = k0;
  c.w0 = w0;
  c.kr = kr;
  c.wr = wr;
  c.engine = engine;
  c.tol = tol;
  c.inner = inner;
  /* split: the others send each replication's results to process 0, which
   * folds them in replication order (fold) */
  size_t kf = 0;
  for (size_t b0 = 0; b0 < nloc && !st; b0 += (size_t)T) {
    size_t nb = nloc - b0 < (size_t)T ? nloc - b0 : (size_t)T;
    c.b0 = b0;
    c.next = 0;
    par_spec ps = {nb, T, sizeof(worker *), 0, claim_worker, NULL};
    st = par_run(&ps, rep_task, &c);
    if (rank == 0) {
      if (!st) st = fold(sp, &kf, (b0 + nb - 1) * P + 1, b0, K, slots, pool, ise, bound, msg);
    } else {
      for (size_t q = 0; q < nb; q++) {
        size_t k = rank + (b0 + q) * P;
        msg[0] = st;
        msg[1] = st ? 0 : ise[k];
        msg[2] = st ? 0 : bound[k];
        if (pool) memcpy(msg + 3, slots + q * 2 * K, 2 * K * sizeof *msg);
        if (sp->send(sp->ctx, msg, 3 + (pool ? 2 * K : 0)) && !st) st = GFI_EINVAL;
        if (st) break;
      }
    }
  }
  if (rank == 0 && !st) st = fold(sp, &kf, nreps, 0, K, slots, pool, ise, bound, msg);
  if (rank != 0) {
    if (!st) memset(res, 0, sizeof *res); /* the answer is process 0's */
    free(ise);
    ise = NULL;
  }
  if (!st && rank != 0) {
    /* nothing more here */
  } else if (!st) st = mise_mc_summarize(ise, nreps, res);
  if (!st && rank == 0 && pool) {
    double swk2, ip;
    double s = node_sum(n0, nrow, k0, w0, kr, wr, psr, psi, pool, pool + K,
                        (double)nreps * (double)N, &swk2);
    st = ise_pl_finish(&rule, s, &ip);
    if (!st) mise_mc_parts(res, ip);
  }
  if (!st && rank == 0) {
    res->method = engine;
    for (size_t j = 0; j < 3; j++) res->nodes[j] = j < D ? ax[j].n : 0;
    res->ise_err_bound = 0;
    for (size_t k = 0; k < nreps; k++) res->ise_err_bound = fmax(res->ise_err_bound, bound[k]);
    if (ise_out) memcpy(ise_out, ise, nreps * sizeof *ise);
  }
  for (int t = 0; t < T1; t++) worker_free(wk + t);
  free(wk);
  for (size_t j = 0; j < MISE_MAXD; j++) axis_free(ax + j);
  free(psr);
  free(psi);
  free(k0);
  free(w0);
  free(kr);
  free(wr);
  free(slots);
  free(msg);
  free(pool);
  free(ise);
  free(bound);
  return st;
}

/* The summary of nreps ISEs and the parts from the pooled ISE ip (ise_rule.h),
 * here beside their first user so that mise_fast.c needs nothing of mise_mc.c. */
int mise_mc_summarize(const double *ise, size_t nreps, gfi_mise_result *res) {
  gfi_summary s;
  int st = gfi_summarize(ise, nreps, 1, &s);
  if (st) return st;
  memset(res, 0, sizeof *res);
  res->mise = s.mean;
  res->se = s.se;
  res->lo95 = s.lo95;
  res->hi95 = s.hi95;
  res->nreps = nreps;
  res->bias2 = res->var = NAN;
  res->bias2_in = res->bias2_out = NAN;
  return GFI_OK;
}

void mise_mc_parts(gfi_mise_result *res, double ip) {
  size_t nreps = res->nreps;
  res->var = (res->mise - ip) * (double)nreps / (double)(nreps - 1);
  res->bias2 = res->mise - res->var;
}
