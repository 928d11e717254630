/* Measurements of one estimate (exact ISE by Plancherel, ISE on a grid with a
 * bounded tail, MSE at points) and the Monte-Carlo MISE over replications on
 * RNG streams. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_integration.h>
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "ise_rule.h"
#include "gfi/density.h"
#include "gfi/rng.h"
#include "gfi/stats.h"
#include "gfi/validate.h"

/* Data points per block in the 2-D empirical cf. */
#define PBLOCK 256

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

/* The empirical cf (1/N) sum_i exp(i t.x_i) on the tensor grid ax[0] x ax[1]
 * (D = 2) or ax[0] (D = 1), into pr, pi (n0 x n1). Deterministic: every
 * entry sums the data in a fixed order. */
static int ecf_grid(size_t D, size_t N, const double *x, const axis_nodes *ax, int nt, double *pr,
                    double *pim) {
  size_t n0 = ax[0].n;
  if (D == 1) {
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#else
    (void)nt;
#endif
    for (size_t i0 = 0; i0 < n0; i0++) {
      double t = ax[0].t[i0], sr = 0, si = 0;
      for (size_t i = 0; i < N; i++) {
        double a = t * x[i];
        sr += cos(a);
        si += sin(a);
      }
      pr[i0] = sr / (double)N;
      pim[i0] = si / (double)N;
    }
    return GFI_OK;
  }
  size_t n1 = ax[1].n;
  double *e1r = malloc(n1 * PBLOCK * sizeof *e1r), *e1i = malloc(n1 * PBLOCK * sizeof *e1i);
  if (!e1r || !e1i) {
    free(e1r);
    free(e1i);
    return GFI_ENOMEM;
  }
  memset(pr, 0, n0 * n1 * sizeof *pr);
  memset(pim, 0, n0 * n1 * sizeof *pim);
  for (size_t b0 = 0; b0 < N; b0 += PBLOCK) {
    size_t B = N - b0 < PBLOCK ? N - b0 : PBLOCK;
    for (size_t i1 = 0; i1 < n1; i1++)
      for (size_t i = 0; i < B; i++) {
        double a = ax[1].t[i1] * x[(b0 + i) * 2 + 1];
        e1r[i1 * PBLOCK + i] = cos(a);
        e1i[i1 * PBLOCK + i] = sin(a);
      }
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
    for (size_t i0 = 0; i0 < n0; i0++) {
      double c0[PBLOCK], s0[PBLOCK];
      for (size_t i = 0; i < B; i++) {
        double a = ax[0].t[i0] * x[(b0 + i) * 2];
        c0[i] = cos(a);
        s0[i] = sin(a);
      }
      for (size_t i1 = 0; i1 < n1; i1++) {
        const double *cr = e1r + i1 * PBLOCK, *ci = e1i + i1 * PBLOCK;
        double sr = 0, si = 0;
#pragma omp simd reduction(+ : sr, si)
        for (size_t i = 0; i < B; i++) {
          sr += c0[i] * cr[i] - s0[i] * ci[i];
          si += s0[i] * cr[i] + c0[i] * ci[i];
        }
        pr[i0 * n1 + i1] += sr;
        pim[i0 * n1 + i1] += si;
      }
    }
  }
  free(e1r);
  free(e1i);
  for (size_t q = 0; q < n0 * n1; q++) {
    pr[q] /= (double)N;
    pim[q] /= (double)N;
  }
  return GFI_OK;
}

int ise_pl_init(const gfi_model *m, int l, const double *R, double res, int nthreads,
                ise_pl_rule *r) {
  memset(r, 0, sizeof *r);
  size_t D = gfi_model_dim(m);
  if (D > 2) return GFI_EUNSUPPORTED;
  r->D = D;
  r->l = l;
  for (size_t j = 0; j < D; j++) r->R[j] = R[j];
  int st = psi_info_init(m, &r->pi);
  if (st) return st;
  mise_integrals I;
  st = mise_integrals_compute(&r->pi, l, R, res, nthreads, &I);
  if (st) return st;
  r->bias_out = I.bias_out;
  return GFI_OK;
}

int ise_pl_axes(const ise_pl_rule *r, size_t N, const double *xabs, double res, double max_work,
                axis_nodes ax[2]) {
  /* highest frequency of |phi_N Kbar - psi|^2 on each axis */
  memset(ax, 0, 2 * sizeof *ax);
  const psi_info *pi = &r->pi;
  double work = (double)N;
  int st = GFI_OK;
  for (size_t j = 0; j < r->D && !st; j++) {
    double xm = fmax(fabs(pi->centre[j]), xabs[j]);
    if (pi->route == PSI_MIXTURE)
      for (size_t a = 0; a < pi->K; a++) xm = fmax(xm, fabs(pi->mu[a * r->D + j]));
    double F = 2 * xm;
    double wmax = fmin(pi->h[j], pi->osc[j]);
    if (F > 0) wmax = fmin(wmax, 3.0 / F);
    double L = r->l * r->R[j];
    if (L / wmax * MISE_GL * work > max_work) {
      st = GFI_EUNSUPPORTED;
      break;
    }
    st = axis_build(j == 0 ? 0.0 : -L, L, r->l, r->R[j], wmax, INFINITY, 0, res, ax + j);
    if (!st) work *= (double)ax[j].n;
  }
  if (!st && work > max_work) st = GFI_EUNSUPPORTED;
  if (st)
    for (size_t j = 0; j < 2; j++) axis_free(ax + j);
  return st;
}

int ise_pl_cf_row(const gfi_model *m, const ise_pl_rule *r, const axis_nodes *ax, size_t i0,
                  double *t, double *re, double *im) {
  size_t D = r->D, n1 = D > 1 ? ax[1].n : 1;
  for (size_t i1 = 0; i1 < n1; i1++) {
    t[i1 * D] = ax[0].t[i0];
    if (D > 1) t[i1 * D + 1] = ax[1].t[i1];
  }
  return gfi_model_cf(m, n1, t, re, im);
}

void ise_pl_axis_factors(const ise_pl_rule *r, const axis_nodes *ax, size_t j, double *k, double *w) {
  if (j >= r->D) {
    k[0] = w[0] = 1.0;
    return;
  }
  for (size_t i = 0; i < ax[j].n; i++) {
    k[i] = gfi_kappa(r->l, ax[j].t[i] / r->R[j]);
    w[i] = ax[j].w[i];
  }
}

int ise_pl_finish(const ise_pl_rule *r, double s, double *ise) {
  *ise = pow(2 * M_PI, -(double)r->D) * (2 * s + r->bias_out);
  return isfinite(*ise) ? GFI_OK : GFI_EQUAD;
}

int gfi_ise_plancherel(const gfi_model *m, int l, size_t N, const double *data, const double *R,
                       const gfi_mise_opts *opts, double *ise) {
  if (!ise) return GFI_EINVAL;
  int st = check_common(m, N, data, R);
  if (st) return st;
  st = gfi_check_order(l);
  if (st) return st;
  size_t D = gfi_model_dim(m);
  if (D > 2) return GFI_EUNSUPPORTED;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  int nt = nthreads_of(&o);
  ise_pl_rule rule;
  st = ise_pl_init(m, l, R, o.resolution, nt, &rule);
  if (st) return st;
  double xabs[2] = {0, 0};
  for (size_t j = 0; j < D; j++)
    for (size_t i = 0; i < N; i++) xabs[j] = fmax(xabs[j], fabs(data[i * D + j]));
  axis_nodes ax[2];
  st = ise_pl_axes(&rule, N, xabs, o.resolution, ISE_PL_MAX_WORK_CPU, ax);
  if (st) return st;
  size_t n0 = ax[0].n, n1 = D < 2 ? 1 : ax[1].n;
  double *pr = malloc(n0 * n1 * sizeof *pr), *pim = malloc(n0 * n1 * sizeof *pim);
  double *part = malloc(n0 * sizeof *part), *k0 = malloc(n0 * sizeof *k0), *w0 = malloc(n0 * sizeof *w0);
  double *k1 = malloc(n1 * sizeof *k1), *w1 = malloc(n1 * sizeof *w1);
  if (!pr || !pim || !part || !k0 || !w0 || !k1 || !w1) st = GFI_ENOMEM;
  if (!st) st = ecf_grid(D, N, data, ax, nt, pr, pim);
  if (!st) {
    ise_pl_axis_factors(&rule, ax, 0, k0, w0);
    ise_pl_axis_factors(&rule, ax, 1, k1, w1);
    int bad = 0;
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
    for (size_t i0 = 0; i0 < n0; i0++) {
      double *t = malloc(n1 * D * sizeof *t), *re = malloc(n1 * sizeof *re), *im = malloc(n1 * sizeof *im);
      int s2 = (t && re && im) ? GFI_OK : GFI_ENOMEM;
      if (!s2) s2 = ise_pl_cf_row(m, &rule, ax, i0, t, re, im);
      double s = 0;
      if (!s2) {
        for (size_t i1 = 0; i1 < n1; i1++) {
          double K = k0[i0] * k1[i1];
          double W = w0[i0] * w1[i1];
          double dr = pr[i0 * n1 + i1] * K - re[i1], di = pim[i0 * n1 + i1] * K - im[i1];
          s += W * (dr * dr + di * di);
        }
      } else {
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic write
#endif
        bad = s2;
      }
      part[i0] = s;
      free(t);
      free(re);
      free(im);
    }
    if (bad) st = bad;
  }
  if (!st) {
    double s = 0;
    for (size_t i0 = 0; i0 < n0; i0++) s += part[i0];
    st = ise_pl_finish(&rule, s, ise);
  }
  free(pr);
  free(pim);
  free(part);
  free(k0);
  free(w0);
  free(k1);
  free(w1);
  for (size_t j = 0; j < 2; j++) axis_free(ax + j);
  return st;
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
  gsl_integration_glfixed_table *tab = gsl_integration_glfixed_table_alloc(GRID_GL);
  if (!tab) return GFI_ENOMEM;
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
    xs[j] = malloc(n[j] * sizeof *xs[j]);
    ws[j] = malloc(n[j] * sizeof *ws[j]);
    if (!xs[j] || !ws[j]) {
      st = GFI_ENOMEM;
      break;
    }
    for (size_t c = 0; c < cells; c++) {
      double a = lo[j] + (hi[j] - lo[j]) * (double)c / (double)cells;
      double b = lo[j] + (hi[j] - lo[j]) * (double)(c + 1) / (double)cells;
      for (size_t i = 0; i < GRID_GL; i++)
        gsl_integration_glfixed_point(a, b, i, xs[j] + c * GRID_GL + i, ws[j] + c * GRID_GL + i, tab);
    }
  }
  gsl_integration_glfixed_table_free(tab);
  double *pts = NULL, *W = NULL;
  if (!st) {
    pts = malloc(M * D * sizeof *pts);
    W = malloc(M * sizeof *W);
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
    ph = malloc(M * sizeof *ph);
    pt = malloc(M * sizeof *pt);
    if (!ph || !pt) st = GFI_ENOMEM;
  }
  if (!st) {
    gfi_opts go;
    gfi_default_opts(&go);
    go.nthreads = o.base.nthreads;
    st = gfi_density_plan_fourier(&plan, k, N, D, data, NULL, R, &go);
  }
  if (!st) st = gfi_density_eval(plan, M, pts, ph);
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
        double A = k->A, A2l = 2 * M_PI * mise_bspline0(2 * l);
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
        st = mise_integrals_compute(&pi, 1, R, o.resolution, nthreads_of(&o), &I);
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
  double *ph = malloc(M * sizeof *ph), *pt = malloc(M * sizeof *pt);
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
  double *pts = malloc(M * D * sizeof *pts);
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
  int l;
  size_t N, D;
  const double *R;
  gfi_ise_method method;
  gfi_mise_opts inner; /* nthreads = 1 */
  const double *lo, *hi;
} mc_ctx;

static int measure(const mc_ctx *c, size_t N, const double *x, const gfi_mise_opts *o, double *ise) {
  if (c->method == GFI_ISE_PLANCHEREL) return gfi_ise_plancherel(c->m, c->l, N, x, c->R, o, ise);
  gfi_kernel k;
  gfi_kernel_pow(&k, c->l);
  return gfi_ise_grid(c->m, &k, N, x, c->R, c->lo, c->hi, o, ise, NULL);
}

static int mc_rep(size_t k, gsl_rng *r, double *out, void *vp) {
  (void)k;
  const mc_ctx *c = vp;
  double *x = malloc(c->N * c->D * sizeof *x);
  if (!x) return GFI_ENOMEM;
  int st = gfi_model_sample(c->m, r, c->N, x);
  if (!st) st = measure(c, c->N, x, &c->inner, out);
  free(x);
  return st;
}

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

int gfi_mise_mc(const gfi_model *m, int l, size_t N, const double *R, size_t nreps,
                const gfi_mise_opts *opts, gfi_mise_result *res, double *ise_out) {
  if (!m || !R || !res) return GFI_EINVAL;
  int st = gfi_check_order(l);
  if (st) return st;
  if (N == 0) return GFI_EEMPTY;
  if (nreps < 2) return GFI_EINVAL;
  size_t D = gfi_model_dim(m);
  st = gfi_check_radii(R, D, NULL);
  if (st) return st;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  mc_ctx c = {m, l, N, D, R, o.ise, o, NULL, NULL};
  if (c.method == GFI_ISE_AUTO) c.method = D <= 2 ? GFI_ISE_PLANCHEREL : GFI_ISE_GRID;
  if (c.method == GFI_ISE_PLANCHEREL && D > 2) return GFI_EUNSUPPORTED;
  c.inner.base.nthreads = 1;
  double lo[MISE_MAXD], hi[MISE_MAXD];
  if (c.method == GFI_ISE_GRID) {
    if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
    st = ise_grid_auto_box(m, &o, lo, hi);
    if (st) return st;
    c.lo = lo;
    c.hi = hi;
  }
  double *ise = malloc(nreps * sizeof *ise);
  if (!ise) return GFI_ENOMEM;
  gfi_opts ro;
  gfi_default_opts(&ro);
  ro.nthreads = o.base.nthreads;
  ro.seed = o.base.seed;
  st = gfi_replicate(nreps, 1, &ro, mc_rep, &c, ise);
  if (!st) st = mise_mc_summarize(ise, nreps, res);
  if (!st && ise_out) memcpy(ise_out, ise, nreps * sizeof *ise);
  if (!st && o.parts) {
    /* the pooled estimator: the mean of the nreps estimates */
    double *x = malloc(nreps * N * D * sizeof *x);
    gsl_rng *r = gfi_rng_stream(o.base.seed, 0);
    if (!x || !r) st = GFI_ENOMEM;
    for (size_t k = 0; k < nreps && !st; k++) {
      gfi_rng_reset(r, o.base.seed, (uint64_t)k);
      st = gfi_model_sample(m, r, N, x + k * N * D);
    }
    double ip;
    if (!st) st = measure(&c, nreps * N, x, &o, &ip);
    if (!st) {
      mise_mc_parts(res, ip);
    } else if (st == GFI_EUNSUPPORTED) {
      st = GFI_OK; /* the pooled sample is too wide to resolve: parts stay NaN */
    }
    free(x);
    if (r) gsl_rng_free(r);
  }
  free(ise);
  return st;
}
