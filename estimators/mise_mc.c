/* Measurements of one estimate (exact ISE by Plancherel, ISE on a grid with a
 * bounded tail, MSE at points) and the Monte-Carlo MISE over replications on
 * RNG streams. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gauss_legendre.h"
#include "mise_fast.h"
#include "par.h"
#include "gfi/density.h"
#include "gfi/rng.h"
#include "gfi/stats.h"
#include "gfi/validate.h"
#include "alloc.h"
#include "fail.h"
#include "mise_internal.h"

static int nthreads_of(const gfi_mise_opts *o) {
  gfi_opts g;
  gfi_default_opts(&g);
  g.nthreads = o->base.nthreads;
  return gfi_threads_resolve(&g);
}

static int check_common(const gfi_model *m, size_t N, const double *data, const double *R) {
  if (!m || !data || !R) return GFI_EINVAL;
  if (N == 0) return GFI_EEMPTY;
  size_t D = gfi_model_dim(m);
  int st = gfi_check_finite(data, N * D, NULL);
  if (st) return st;
  return gfi_check_radii(R, D, NULL);
}

/* ---- exact ISE through the empirical characteristic function ------------- */

/* Task of the driver: the weighted |phi_N Kbar - psi|^2 over the nodes
 * (i0, .) into part[i0]; ws: n1 D + 2 n1 doubles. */
typedef struct {
  const gfi_model *m;
  const ise_pl_rule *rule;
  const axis_nodes *ax;
  size_t D, n1;
  const double *pr, *pim, *k0, *w0, *k1, *w1;
  double *part, *partk; /* per axis-0 node: sum W |phi K - psi|^2, sum W K^2 */
} pl_ctx;

static int pl_node(void *vc, size_t i0, void *ws) {
  const pl_ctx *c = vc;
  const size_t n1 = c->n1;
  double *t = ws, *re = t + n1 * c->D, *im = re + n1;
  int st = ise_pl_cf_row(c->m, c->rule, c->ax, i0, t, re, im);
  if (st) return st;
  double s = 0, sk = 0;
  for (size_t i1 = 0; i1 < n1; i1++) {
    double K = c->k0[i0] * c->k1[i1];
    double W = c->w0[i0] * c->w1[i1];
    double dr = c->pr[i0 * n1 + i1] * K - re[i1], di = c->pim[i0 * n1 + i1] * K - im[i1];
    s += W * (dr * dr + di * di);
    sk += W * K * K;
  }
  c->part[i0] = s;
  c->partk[i0] = sk;
  return GFI_OK;
}

/* The node axes of the Plancherel rule for the sample x (N x D) and the
 * engine of its empirical cf; GFI_EUNSUPPORTED (axes freed) when the rule
 * exceeds ISE_STREAM_MAX_NODES or the direct sums ISE_PL_MAX_WORK_CPU
 * under method DIRECT (auto then takes the fast route). Decided from the
 * sample's extent alone: no sums. xhalf: the half-widths of the sample. */
static int pl_size(const ise_pl_rule *rule, size_t N, const double *x, const gfi_mise_opts *o, double *xhalf,
                   axis_nodes *ax, gfi_method *engine) {
  const size_t D = rule->D;
  double xabs[MISE_MAXD] = {0, 0, 0};
  for (size_t j = 0; j < D; j++) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < N; i++) {
      xabs[j] = fmax(xabs[j], fabs(x[i * D + j]));
      lo = fmin(lo, x[i * D + j]);
      hi = fmax(hi, x[i * D + j]);
    }
    xhalf[j] = 0.5 * (hi - lo);
  }
  /* the rule does not depend on N; only the direct sums' work is capped */
  int st = ise_pl_axes(rule, 1, xabs, o->resolution, (double)ISE_STREAM_MAX_NODES, ax);
  if (st) return st;
  size_t n0 = ax[0].n, n1 = ise_pl_row(rule, ax);
  st = ise_pl_engine(o->base.method, rule, ax, (double)N, xhalf, o->base.tol,
                     (double)N * (double)(n0 * n1) <= ISE_PL_MAX_WORK_CPU, engine);
  if (st)
    for (size_t j = 0; j < MISE_MAXD; j++) axis_free(ax + j);
  return st;
}

/* The Plancherel ISE of one sample; *bound (may be NULL): the bound on the
 * ISE's error from the NUFFT tolerance (0 on direct sums), *engine (may be
 * NULL): the route its empirical cf took. */
static int ise_pl_one(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data, const double *R,
                      const gfi_mise_opts *opts, double *ise, double *bound, gfi_method *engine_out) {
  if (!ise) return GFI_EINVAL;
  int st = check_common(m, N, data, R);
  if (st) return st;
  st = gfi_kernel_check_band(k);
  if (st) return st;
  size_t D = gfi_model_dim(m);
  if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  int nt = nthreads_of(&o);
  ise_pl_rule rule;
  st = ise_pl_init(m, k, R, o.resolution, nt, &rule);
  if (st) return st;
  double xhalf[MISE_MAXD];
  axis_nodes ax[MISE_MAXD];
  gfi_method engine;
  st = pl_size(&rule, N, data, &o, xhalf, ax, &engine);
  if (st) return st;
  size_t n0 = ax[0].n, n1 = ise_pl_row(&rule, ax);
  double *pr = gfi_calloc4(n0, n1, 1, sizeof *pr), *pim = gfi_calloc4(n0, n1, 1, sizeof *pim);
  double *part = gfi_malloc3(2, n0, sizeof *part), *k0 = gfi_malloc2(n0, sizeof *k0), *w0 = gfi_malloc2(n0, sizeof *w0);
  double *k1 = gfi_malloc2(n1, sizeof *k1), *w1 = gfi_malloc2(n1, sizeof *w1);
  if (!st && (!pr || !pim || !part || !k0 || !w0 || !k1 || !w1)) st = GFI_ENOMEM;
  if (!st)
    st = engine == GFI_METHOD_FAST ? ise_pl_ecf_nufft(&rule, ax, N, data, o.base.tol, nt, pr, pim)
                                   : ise_pl_ecf_accum(&rule, ax, N, data, nt, pr, pim);
  if (!st)
    for (size_t q = 0; q < n0 * n1; q++) {
      pr[q] /= (double)N;
      pim[q] /= (double)N;
    }
  if (!st) {
    ise_pl_axis_factors(&rule, ax, 0, k0, w0);
    ise_pl_row_factors(&rule, ax, k1, w1);
    pl_ctx c = {m, &rule, ax, D, n1, pr, pim, k0, w0, k1, w1, part, part + n0};
    par_spec sp = {n0, nt, (n1 * D + 2 * n1) * sizeof(double), 1, NULL, NULL};
    st = par_run(&sp, pl_node, &c);
  }
  if (!st) {
    double s, swk2;
    par_sum(part, n0, 1, &s);
    par_sum(part + n0, n0, 1, &swk2);
    st = ise_pl_finish(&rule, s, ise);
    if (bound) *bound = engine == GFI_METHOD_FAST ? ise_pl_err_bound(&rule, ise_fast_tol(o.base.tol), swk2, s) : 0.0;
    if (engine_out) *engine_out = engine;
  }
  free(pr);
  free(pim);
  free(part);
  free(k0);
  free(w0);
  free(k1);
  free(w1);
  for (size_t j = 0; j < MISE_MAXD; j++) axis_free(ax + j);
  return st;
}

int gfi_ise_plancherel(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                       const double *R, const gfi_mise_opts *opts, double *ise) {
  return ise_pl_one(m, k, N, data, R, opts, ise, NULL, NULL);
}

/* ---- ISE on a grid ------------------------------------------------------- */

#define GRID_GL 8

/* int_{v0}^inf sinc(v)^(2l) dv, bounded above */
static double sinc2l_tail_bound(int l, double v0, double full) {
  if (v0 < 0) return full;
  if (v0 >= 1) return pow(v0, 1.0 - 2 * l) / (2 * l - 1);
  return (1 - v0) + 1.0 / (2 * l - 1);
}

int ise_grid_auto_box(const gfi_model *m, const gfi_mise_opts *o, double *lo, double *hi) {
  psi_info pi;
  int st = psi_info_init(m, &pi);
  if (st) return st == GFI_EUNSUPPORTED ? GFI_EINVAL : st;
  double hw = o->grid_halfwidth > 0 ? o->grid_halfwidth : 8.0;
  for (size_t j = 0; j < pi.D; j++) {
    lo[j] = pi.centre[j] - hw * pi.scale[j];
    hi[j] = pi.centre[j] + hw * pi.scale[j];
  }
  return GFI_OK;
}

int ise_grid_rule(const gfi_model *m, const double *R, const double *lo, const double *hi,
                  const gfi_mise_opts *o, size_t *Mout, double **pts_out, double **W_out) {
  size_t D = gfi_model_dim(m);
  if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
  psi_info pi;
  int have_pi = psi_info_init(m, &pi) == GFI_OK, st = GFI_OK;
  /* nodes: cells no wider than a quarter period of the kernel's oscillation
   * (2 pi / R) and than a quarter of the model's scale */
  double gx[GRID_GL], gw[GRID_GL];
  gl_rule(GRID_GL, gx, gw);
  double *xs[MISE_MAXD] = {0}, *ws[MISE_MAXD] = {0};
  size_t n[MISE_MAXD], M = 1;
  for (size_t j = 0; j < D && !st; j++) {
    size_t cells = o->grid_cells;
    if (!cells) {
      double w = 0.5 * M_PI / R[j];
      if (have_pi) w = fmin(w, 0.25 * pi.scale[j]);
      w /= o->resolution;
      double c = ceil((hi[j] - lo[j]) / w);
      if (c > 1e6) {
        st = GFI_EUNSUPPORTED;
        break;
      }
      cells = (size_t)c;
    }
    n[j] = cells * GRID_GL;
    if ((double)M * (double)n[j] > 1e9) {
      st = GFI_EUNSUPPORTED;
      break;
    }
    M *= n[j];
    xs[j] = gfi_malloc2(n[j], sizeof *xs[j]);
    ws[j] = gfi_malloc2(n[j], sizeof *ws[j]);
    if (!xs[j] || !ws[j]) {
      st = GFI_ENOMEM;
      break;
    }
    for (size_t c = 0; c < cells; c++) {
      double a = lo[j] + (hi[j] - lo[j]) * (double)c / (double)cells;
      double b = lo[j] + (hi[j] - lo[j]) * (double)(c + 1) / (double)cells;
      gl_panel(GRID_GL, gx, gw, a, b, xs[j] + c * GRID_GL, ws[j] + c * GRID_GL);
    }
  }
  double *pts = NULL, *W = NULL;
  if (!st) {
    pts = gfi_malloc3(M, D, sizeof *pts);
    W = gfi_malloc2(M, sizeof *W);
    if (!pts || !W) st = GFI_ENOMEM;
  }
  if (!st) {
    for (size_t q = 0; q < M; q++) {
      size_t r = q;
      double w = 1;
      for (size_t j = D; j-- > 0;) {
        pts[q * D + j] = xs[j][r % n[j]];
        w *= ws[j][r % n[j]];
        r /= n[j];
      }
      W[q] = w;
    }
    *Mout = M;
    *pts_out = pts;
    *W_out = W;
  } else {
    free(pts);
    free(W);
  }
  for (size_t j = 0; j < D; j++) {
    free(xs[j]);
    free(ws[j]);
  }
  return st;
}

int gfi_ise_grid(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                 const double *R, const double *lo_in, const double *hi_in,
                 const gfi_mise_opts *opts, double *ise, double *tail_bound) {
  if (!k || !ise) return GFI_EINVAL;
  int st = check_common(m, N, data, R);
  if (st) return st;
  size_t D = gfi_model_dim(m);
  if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  double lo[MISE_MAXD], hi[MISE_MAXD];
  if (lo_in && hi_in) {
    for (size_t j = 0; j < D; j++) {
      lo[j] = lo_in[j];
      hi[j] = hi_in[j];
      if (!(hi[j] > lo[j]) || !isfinite(lo[j]) || !isfinite(hi[j])) return GFI_EINVAL;
    }
  } else {
    st = ise_grid_auto_box(m, &o, lo, hi);
    if (st) return st;
  }
  psi_info pi;
  int have_pi = psi_info_init(m, &pi) == GFI_OK;
  size_t M = 0;
  double *pts = NULL, *Wq = NULL, *ph = NULL, *pt = NULL;
  st = ise_grid_rule(m, R, lo, hi, &o, &M, &pts, &Wq);
  gfi_density_plan *plan = NULL;
  if (!st) {
    ph = gfi_malloc2(M, sizeof *ph);
    pt = gfi_malloc2(M, sizeof *pt);
    if (!ph || !pt) st = GFI_ENOMEM;
  }
  if (!st) {
    gfi_opts go;
    gfi_default_opts(&go);
    go.nthreads = o.base.nthreads;
    st = gfi_density_plan_fourier(&plan, k, N, D, data, NULL, R, &go);
  }
  if (!st) st = fail_named(gfi_density_eval(plan, M, pts, ph), "R"); /* the grid's own points: a phase R x too large */
  if (!st) st = gfi_model_pdf(m, M, pts, pt);
  if (!st) {
    double s = 0, sp2 = 0;
    for (size_t q = 0; q < M; q++) {
      double W = Wq[q];
      double d = ph[q] - pt[q];
      s += W * d * d;
      sp2 += W * pt[q] * pt[q];
    }
    *ise = s;
    if (tail_bound) {
      double E = INFINITY, T = INFINITY;
      if (k->kind == GFI_PHI_POW) {
        int l = k->l;
        double A = k->A, A2l = 2 * M_PI * kernel_bspline0(2 * l);
        double full[MISE_MAXD];
        for (size_t j = 0; j < D; j++) full[j] = R[j] * A2l / (A * A);
        E = 0;
        for (size_t i = 0; i < N; i++) {
          double e = 0;
          for (size_t j = 0; j < D; j++) {
            double x = data[i * D + j];
            double tj = R[j] / (A * A) *
                        (sinc2l_tail_bound(l, R[j] * (hi[j] - x), A2l) +
                         sinc2l_tail_bound(l, R[j] * (x - lo[j]), A2l));
            for (size_t q = 0; q < D; q++)
              if (q != j) tj *= full[q];
            e += tj;
          }
          E += e / (double)N;
        }
      }
      if (have_pi) {
        mise_integrals I;
        gfi_kernel k1; /* any kernel: only int |psi|^2 is used */
        gfi_kernel_pow(&k1, 1);
        st = mise_integrals_compute(&pi, &k1, R, o.resolution, nthreads_of(&o), &I);
        if (!st) {
          double tot = pow(2 * M_PI, -(double)D) * (I.psi_box + I.bias_out);
          T = fmax(tot - sp2, 0.0) + 1e-13 * tot; /* cubature rounding margin */
        }
      }
      double sE = sqrt(E), sT = sqrt(T);
      *tail_bound = (sE + sT) * (sE + sT);
    }
  }
  gfi_density_destroy(plan);
  free(pts);
  free(Wq);
  free(ph);
  free(pt);
  return st;
}

/* ---- MSE at points ---------------------------------------------------------- */

int gfi_mse_points(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                   const double *R, size_t M, const double *points, const gfi_mise_opts *opts,
                   double *mse, double *se) {
  if (!k || !mse) return GFI_EINVAL;
  int st = check_common(m, N, data, R);
  if (st) return st;
  if (M == 0) return GFI_EEMPTY;
  if (!points) return GFI_EINVAL;
  size_t D = gfi_model_dim(m);
  st = gfi_check_finite(points, M * D, NULL);
  if (st) return st;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  gfi_opts go;
  gfi_default_opts(&go);
  go.nthreads = o.base.nthreads;
  gfi_density_plan *plan;
  st = gfi_density_plan_fourier(&plan, k, N, D, data, NULL, R, &go);
  if (st) return st;
  double *ph = gfi_malloc2(M, sizeof *ph), *pt = gfi_malloc2(M, sizeof *pt);
  if (!ph || !pt) st = GFI_ENOMEM;
  if (!st) st = gfi_density_eval(plan, M, points, ph);
  if (!st) st = gfi_model_pdf(m, M, points, pt);
  if (!st) {
    for (size_t q = 0; q < M; q++) ph[q] = (ph[q] - pt[q]) * (ph[q] - pt[q]);
    gfi_summary s;
    st = gfi_summarize(ph, M, 1, &s);
    if (!st) {
      *mse = s.mean;
      if (se) *se = s.se;
    }
  }
  gfi_density_destroy(plan);
  free(ph);
  free(pt);
  return st;
}

int gfi_mse_box(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                const double *R, const double *lo, const double *hi, size_t M,
                const gfi_mise_opts *opts, double *mse, double *se) {
  if (!m || !lo || !hi) return GFI_EINVAL;
  if (M == 0) return GFI_EEMPTY;
  size_t D = gfi_model_dim(m);
  for (size_t j = 0; j < D; j++)
    if (!(hi[j] > lo[j]) || !isfinite(lo[j]) || !isfinite(hi[j])) return GFI_EINVAL;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  double *pts = gfi_malloc3(M, D, sizeof *pts);
  gsl_rng *r = gfi_rng_stream(o.base.seed, (uint64_t)1 << 63);
  if (!pts || !r) {
    free(pts);
    if (r) gsl_rng_free(r);
    return GFI_ENOMEM;
  }
  for (size_t q = 0; q < M; q++)
    for (size_t j = 0; j < D; j++) pts[q * D + j] = lo[j] + (hi[j] - lo[j]) * gsl_rng_uniform(r);
  gsl_rng_free(r);
  int st = gfi_mse_points(m, k, N, data, R, M, pts, &o, mse, se);
  free(pts);
  return st;
}

/* ---- Monte-Carlo MISE -------------------------------------------------------- */

typedef struct {
  const gfi_model *m;
  const gfi_kernel *k;
  size_t N, D;
  const double *R;
  gfi_ise_method method;
  gfi_mise_opts inner; /* nthreads = 1 */
  const double *lo, *hi;
  double *bound, *engine; /* per replication (Plancherel): ISE error bound, route */
} mc_ctx;

static int measure(const mc_ctx *c, size_t N, const double *x, const gfi_mise_opts *o, double *ise, double *bound,
                   double *engine) {
  if (c->method == GFI_ISE_PLANCHEREL) {
    gfi_method e = GFI_METHOD_DIRECT;
    double b = 0;
    int st = ise_pl_one(c->m, c->k, N, x, c->R, o, ise, &b, &e);
    if (bound) *bound = b;
    if (engine) *engine = (double)e;
    return st;
  }
  return gfi_ise_grid(c->m, c->k, N, x, c->R, c->lo, c->hi, o, ise, NULL);
}

static int mc_rep(size_t k, gsl_rng *r, double *out, void *vp) {
  const mc_ctx *c = vp;
  double *x = gfi_malloc3(c->N, c->D, sizeof *x);
  if (!x) return GFI_ENOMEM;
  int st = gfi_model_sample(c->m, r, c->N, x);
  if (!st) st = measure(c, c->N, x, &c->inner, out, c->bound ? c->bound + k : NULL, c->engine ? c->engine + k : NULL);
  free(x);
  return st;
}

/* Replications rank, rank + P, ... of the direct route (local task t). */
typedef struct {
  mc_ctx *c;
  uint64_t seed;
  size_t rank, size;
  double *ise;
} mc_local;

static int mc_local_init(void *vc, void *ws) {
  const mc_local *c = vc;
  *(gsl_rng **)ws = gfi_rng_stream(c->seed, 0);
  return *(gsl_rng **)ws ? GFI_OK : GFI_ENOMEM;
}

static void mc_local_fini(void *vc, void *ws) {
  (void)vc;
  gsl_rng_free(*(gsl_rng **)ws);
}

static int mc_local_task(void *vc, size_t t, void *ws) {
  const mc_local *c = vc;
  gsl_rng *r = *(gsl_rng **)ws;
  size_t k = c->rank + t * c->size;
  gfi_rng_reset(r, c->seed, (uint64_t)k);
  return mc_rep(k, r, c->ise + k, c->c);
}

/* Before any sums of the direct route: each local replication drawn and its
 * Plancherel rule sized as gfi_ise_plancherel will size it (pl_size), so
 * that a replication it would refuse ends the run at once. A Cauchy sample
 * of 1e4 points spent 78 s of one core on one replication's sums before
 * another replication's refusal ended the run, with nothing to show. */
typedef struct {
  const mc_local *l;
  const ise_pl_rule *rule;
} mc_pre;

static int mc_pre_task(void *vc, size_t t, void *ws) {
  const mc_pre *p = vc;
  const mc_ctx *c = p->l->c;
  gsl_rng *r = *(gsl_rng **)ws;
  gfi_rng_reset(r, p->l->seed, (uint64_t)(p->l->rank + t * p->l->size));
  double *x = gfi_malloc3(c->N, c->D, sizeof *x), xhalf[MISE_MAXD];
  if (!x) return GFI_ENOMEM;
  int st = gfi_model_sample(c->m, r, c->N, x);
  axis_nodes ax[MISE_MAXD];
  gfi_method engine;
  if (!st) st = pl_size(p->rule, c->N, x, &c->inner, xhalf, ax, &engine);
  if (!st)
    for (size_t j = 0; j < MISE_MAXD; j++) axis_free(ax + j);
  free(x);
  return st;
}

int gfi_mise_mc(const gfi_model *m, const gfi_kernel *k, size_t N, const double *R, size_t nreps,
                const gfi_mise_opts *opts, gfi_mise_result *res, double *ise_out) {
  return mise_mc_split(m, k, N, R, nreps, opts, NULL, res, ise_out);
}

int mise_mc_split(const gfi_model *m, const gfi_kernel *k, size_t N, const double *R, size_t nreps,
                  const gfi_mise_opts *opts, const mise_split *sp, gfi_mise_result *res,
                  double *ise_out) {
  if (!m || !R || !res) return GFI_EINVAL;
  if (sp && (sp->size < 1 || sp->rank < 0 || sp->rank >= sp->size || !sp->minmax || !sp->send || !sp->recv))
    return GFI_EINVAL;
  if (!k) return GFI_EINVAL;
  /* the Plancherel ISE needs a band-limited kernel; the grid ISE any
   * kernel with a finite A */
  int band = gfi_kernel_check_band(k);
  if (band == GFI_EORDER || band == GFI_EINVAL) return band;
  if (!k->A_finite) return GFI_EINFINITE_A;
  int st;
  if (N == 0) return GFI_EEMPTY;
  if (nreps < 2) return fail_param(GFI_EINVAL, "nreps");
  size_t D = gfi_model_dim(m);
  st = gfi_check_radii(R, D, NULL);
  if (st) return st;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  st = mise_opts_check(&o);
  if (st) return st;
  /* the work budget, before anything is drawn: each process its share */
  double budget = (o.max_points > 0 ? o.max_points : GFI_MISE_MC_MAX_POINTS) * (sp ? (double)sp->size : 1.0);
  if ((double)N * (double)nreps > budget) return fail_param(GFI_ERANGE, "nreps");
  mc_ctx c = {m, k, N, D, R, o.ise, o, NULL, NULL, NULL, NULL};
  if (c.method == GFI_ISE_AUTO)
    c.method = band == GFI_OK && (D <= 2 || (D <= MISE_MAXD && gfi_mise_exact_supported(m)))
                   ? GFI_ISE_PLANCHEREL
                   : GFI_ISE_GRID;
  if (c.method == GFI_ISE_PLANCHEREL && band) return band;
  if (c.method == GFI_ISE_PLANCHEREL && D > MISE_MAXD) return GFI_EUNSUPPORTED;
  /* Without the pooled parts no replication needs another's nodes: under
   * AUTO each replication gets the rule of its own extent and the cheaper
   * route for it (a sample of at most MC_PER_REP_MAX_COORDS coordinates is
   * held in memory per thread). One shared rule is sized by the widest of
   * all replications: on a Cauchy truth, 100 replications of 3162 points
   * put every replication on the nodes of the one far outlier among them
   * (gfi rates' density checks: 150 -> 44 s). */
  int per_rep = c.method == GFI_ISE_PLANCHEREL && o.base.method == GFI_METHOD_AUTO && !o.parts &&
                N <= MC_PER_REP_MAX_COORDS / D;
  if (c.method == GFI_ISE_PLANCHEREL && o.base.method != GFI_METHOD_DIRECT && !per_rep) {
    /* streamed: memory independent of N (mise_fast.h) */
    st = mise_mc_stream(m, k, N, R, nreps, &o, nthreads_of(&o), sp, res, ise_out);
    if (st != GFI_EUNSUPPORTED || o.base.method == GFI_METHOD_FAST) return st;
    /* the rule would be too large for one shared node set: per-replication
     * rules by direct sums below */
  }
  o.base.method = GFI_METHOD_DIRECT;
  c.inner.base.nthreads = 1;
  c.inner.base.method = per_rep ? GFI_METHOD_AUTO : GFI_METHOD_DIRECT;
  double lo[MISE_MAXD], hi[MISE_MAXD];
  if (c.method == GFI_ISE_GRID) {
    if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
    st = ise_grid_auto_box(m, &o, lo, hi);
    if (st) return st;
    c.lo = lo;
    c.hi = hi;
  }
  const size_t rank = sp ? (size_t)sp->rank : 0, P = sp ? (size_t)sp->size : 1;
  const size_t nloc = nreps > rank ? (nreps - rank + P - 1) / P : 0;
  /* per replication: ISE, error bound, route; to process 0: status, then
   * this process's triples */
  double *ise = gfi_malloc3(3, nreps, sizeof *ise), *msg = P > 1 ? gfi_malloc3(3, nloc + 1, sizeof *msg) : NULL;
  if (!ise || (P > 1 && !msg)) {
    free(ise);
    free(msg);
    return GFI_ENOMEM;
  }
  c.bound = ise + nreps;
  c.engine = ise + 2 * nreps;
  for (size_t r = 0; r < nreps; r++) c.bound[r] = c.engine[r] = 0;
  /* each replication's ISE: replication k on stream (seed, k), k = rank + t P */
  mc_local lc = {&c, o.base.seed, rank, P, ise};
  par_spec ps = {nloc, nthreads_of(&o), sizeof(gsl_rng *), 1, mc_local_init, mc_local_fini};
  st = GFI_OK;
  if (c.method == GFI_ISE_PLANCHEREL) {
    ise_pl_rule rule;
    st = ise_pl_init(m, k, R, c.inner.resolution, nthreads_of(&o), &rule);
    mc_pre pre = {&lc, &rule};
    if (!st) st = par_run(&ps, mc_pre_task, &pre);
  }
  if (!st) st = par_run(&ps, mc_local_task, &lc);
  if (P > 1 && rank != 0) {
    /* to process 0: the status, then this process's ISEs */
    msg[0] = st;
    for (size_t t = 0; t < nloc; t++)
      for (int q = 0; q < 3; q++) msg[1 + 3 * t + q] = st ? 0 : ise[q * nreps + rank + t * P];
    if (sp->send(sp->ctx, msg, 3 * nloc + 1) && !st) st = GFI_EINVAL;
    if (!st) memset(res, 0, sizeof *res); /* the answer is process 0's */
    free(ise);
    free(msg);
    return st;
  }
  for (size_t r = 1; r < P && !st; r++) {
    size_t nr = nreps > r ? (nreps - r + P - 1) / P : 0;
    if (sp->recv(sp->ctx, (int)r, msg, 3 * nr + 1)) st = GFI_EINVAL;
    else if (msg[0] != 0) st = (int)msg[0];
    for (size_t t = 0; t < nr && !st; t++)
      for (int q = 0; q < 3; q++) ise[q * nreps + r + t * P] = msg[1 + 3 * t + q];
  }
  free(msg);
  if (!st) st = mise_mc_summarize(ise, nreps, res);
  if (!st && ise_out) memcpy(ise_out, ise, nreps * sizeof *ise);
  if (!st && o.parts) {
    /* the pooled estimator: the mean of the nreps estimates (process 0 alone) */
    double *x = gfi_malloc4(nreps, N, D, sizeof *x);
    gsl_rng *r = gfi_rng_stream(o.base.seed, 0);
    if (!x || !r) st = GFI_ENOMEM;
    for (size_t k = 0; k < nreps && !st; k++) {
      gfi_rng_reset(r, o.base.seed, (uint64_t)k);
      st = gfi_model_sample(m, r, N, x + k * N * D);
    }
    double ip;
    if (!st) st = measure(&c, nreps * N, x, &o, &ip, NULL, NULL);
    if (!st) {
      mise_mc_parts(res, ip);
    } else if (st == GFI_EUNSUPPORTED) {
      st = GFI_OK; /* the pooled sample is too wide to resolve: parts stay NaN */
    }
    free(x);
    if (r) gsl_rng_free(r);
  }
  if (!st && c.method == GFI_ISE_PLANCHEREL) {
    /* nodes[] stay 0: each replication had its own rule */
    res->method = GFI_METHOD_DIRECT;
    res->ise_err_bound = 0;
    for (size_t r = 0; r < nreps; r++) {
      if (c.engine[r] == (double)GFI_METHOD_FAST) res->method = GFI_METHOD_FAST;
      res->ise_err_bound = fmax(res->ise_err_bound, c.bound[r]);
    }
  }
  free(ise);
  return st;
}
