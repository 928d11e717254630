/* FourierFormer's synthetic experiments (gfi_exp/repro.h): MSE at uniform
 * test points in boxes, one replication at a time, and the oracle radius of
 * the regression experiment. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "gfi/density.h"
#include "gfi/regression.h"
#include "gfi/regression_mse.h"
#include "gfi/select.h"
#include "gfi_exp/repro.h"
#include "gfi/rng.h"
#include "gfi/validate.h"

int gfi_repro_unit_points(uint64_t seed, uint64_t k, size_t D, size_t M, double *u) {
  if (!u) return GFI_EINVAL;
  gsl_rng *r = gfi_rng_stream(seed, GFI_REPRO_TEST_STREAM + k);
  if (!r) return GFI_ENOMEM;
  for (size_t i = 0; i < M * D; i++) u[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
  gsl_rng_free(r);
  return GFI_OK;
}

static int check_grid(const gfi_repro_grid *g, size_t D) {
  if (!g || !g->R || !g->halfwidth) return GFI_EINVAL;
  if (g->nR == 0 || g->nbox == 0) return GFI_EEMPTY;
  int st = gfi_check_radii(g->R, g->nR * D, NULL);
  if (st) return st;
  for (size_t b = 0; b < g->nbox; b++)
    if (!(g->halfwidth[b] > 0) || !isfinite(g->halfwidth[b])) return GFI_ERADIUS;
  return GFI_OK;
}

/* The nbox boxes' points, one block of M x D per box: u scaled by h_b. */
static double *box_points(const double *u, size_t M, size_t D, const gfi_repro_grid *g) {
  double *q = malloc(g->nbox * M * D * sizeof *q);
  if (!q) return NULL;
  for (size_t b = 0; b < g->nbox; b++)
    for (size_t i = 0; i < M * D; i++) q[b * M * D + i] = g->halfwidth[b] * u[i];
  return q;
}

int gfi_repro_density(const gfi_model *m, const gfi_kernel *kern, size_t N, size_t M,
                      uint64_t seed, uint64_t k, const gfi_repro_grid *g, const gfi_opts *opts,
                      double *mse) {
  if (!m || !kern || !mse) return GFI_EINVAL;
  if (N == 0 || M == 0) return GFI_EEMPTY;
  size_t D = gfi_model_dim(m);
  int st = check_grid(g, D);
  if (st) return st;
  size_t Q = g->nbox * M;
  double *x = malloc(N * D * sizeof *x), *u = malloc(M * D * sizeof *u);
  double *est = malloc(Q * sizeof *est), *pt = malloc(Q * sizeof *pt), *q = NULL;
  gsl_rng *r = gfi_rng_stream(seed, k);
  if (!x || !u || !est || !pt || !r) st = GFI_ENOMEM;
  if (!st) st = gfi_model_sample(m, r, N, x);
  if (!st) st = gfi_repro_unit_points(seed, k, D, M, u);
  if (!st && !(q = box_points(u, M, D, g))) st = GFI_ENOMEM;
  if (!st) st = gfi_model_pdf(m, Q, q, pt);
  for (size_t a = 0; !st && a < g->nR; a++) {
    gfi_density_plan *p = NULL;
    st = gfi_density_plan_fourier(&p, kern, N, D, x, NULL, g->R + a * D, opts);
    if (!st) st = gfi_density_eval(p, Q, q, est);
    gfi_density_destroy(p);
    for (size_t b = 0; !st && b < g->nbox; b++) {
      double s = 0;
      for (size_t i = b * M; i < (b + 1) * M; i++) s += (est[i] - pt[i]) * (est[i] - pt[i]);
      mse[a * g->nbox + b] = s / (double)M;
    }
  }
  if (r) gsl_rng_free(r);
  free(x);
  free(u);
  free(q);
  free(est);
  free(pt);
  return st;
}

int gfi_repro_regress(const gfi_model *design, const gfi_regfun *f, const gfi_noise *noise,
                      const gfi_kernel *kern, size_t N, size_t M, uint64_t seed, uint64_t k,
                      const gfi_repro_grid *g, const gfi_opts *opts, double *mse, double *pmse,
                      size_t *nflagged) {
  if (!design || !f || !kern || !mse) return GFI_EINVAL;
  if (N == 0 || M == 0) return GFI_EEMPTY;
  size_t D = gfi_model_dim(design);
  if (gfi_regfun_dim(f) != D) return GFI_EDIM;
  int st = check_grid(g, D);
  if (st) return st;
  size_t Q = g->nbox * M, nflag = 0;
  double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), *u = malloc(M * D * sizeof *u);
  double *est = malloc(Q * sizeof *est), *ft = malloc(Q * sizeof *ft), *eps = malloc(M * sizeof *eps);
  double *q = NULL;
  gsl_rng *r = gfi_rng_stream(seed, k), *rt = gfi_rng_stream(seed, GFI_REPRO_TEST_STREAM + k);
  if (!x || !y || !u || !est || !ft || !eps || !r || !rt) st = GFI_ENOMEM;
  if (!st) st = gfi_regress_sample(design, f, noise, r, N, x, y);
  if (!st) {
    /* the points, then one standard normal per point: the same stream
     * gfi_repro_unit_points reads, continued */
    for (size_t i = 0; i < M * D; i++) u[i] = 2.0 * gsl_rng_uniform(rt) - 1.0;
    for (size_t i = 0; i < M; i++) eps[i] = gsl_ran_gaussian_ziggurat(rt, 1.0);
  }
  if (!st && !(q = box_points(u, M, D, g))) st = GFI_ENOMEM;
  if (!st) st = gfi_regfun_eval(f, Q, q, ft);
  for (size_t a = 0; !st && a < g->nR; a++) {
    gfi_nw_plan *p = NULL;
    size_t nf = 0;
    st = gfi_nw_plan_fourier(&p, kern, N, D, 1, x, y, g->R + a * D, opts);
    if (!st) {
      st = gfi_nw_eval(p, Q, q, est, &nf);
      if (st == GFI_EDENOM) st = GFI_OK;
    }
    gfi_nw_destroy(p);
    nflag += nf;
    for (size_t b = 0; !st && b < g->nbox; b++) {
      double s = 0, sp = 0;
      size_t n = 0;
      for (size_t i = 0; i < M; i++) {
        size_t j = b * M + i;
        if (isnan(est[j])) continue;
        double e = est[j] - ft[j];
        double sd = noise ? gfi_noise_sd(noise, q + j * D) : 0;
        double ep = e - sd * eps[i];
        s += e * e;
        sp += ep * ep;
        n++;
      }
      mse[a * g->nbox + b] = n ? s / (double)n : NAN;
      if (pmse) pmse[a * g->nbox + b] = n ? sp / (double)n : NAN;
    }
  }
  if (nflagged) *nflagged = nflag;
  if (r) gsl_rng_free(r);
  if (rt) gsl_rng_free(rt);
  free(x);
  free(y);
  free(u);
  free(q);
  free(est);
  free(ft);
  free(eps);
  return st;
}

typedef struct {
  gfi_nw_study s;
  size_t M, D, nreps;
  const double *points;
  const gfi_opts *opts;
  double R[64];
  size_t nevals;
} ropt_ctx;

static int pilot_mse(void *vc, double r, double *out) {
  ropt_ctx *c = vc;
  for (size_t j = 0; j < c->D; j++) c->R[j] = r;
  gfi_nw_mse_result res;
  int st = gfi_nw_mse(&c->s, c->M, c->points, c->nreps, c->opts, &res, NULL, NULL, NULL, NULL);
  c->nevals++;
  if (st) return st;
  /* a flagged point (odd l) makes this radius unusable as an oracle */
  *out = res.nflagged ? INFINITY : res.mse;
  return GFI_OK;
}

int gfi_repro_regress_ropt(const gfi_model *design, const gfi_regfun *f, const gfi_noise *noise,
                           const gfi_kernel *kern, size_t N, size_t M, double h, size_t nreps,
                           uint64_t seed, double Rmin, double Rmax, size_t nscan,
                           const gfi_opts *opts, double *R_opt, double *mse_opt, size_t *nevals) {
  if (!design || !f || !kern || !R_opt) return GFI_EINVAL;
  if (!(Rmin > 0) || !(Rmax > Rmin) || !isfinite(Rmax) || nscan < 3) return GFI_EINVAL;
  if (!(h > 0) || !isfinite(h)) return GFI_ERADIUS;
  if (N == 0 || M == 0 || nreps == 0) return GFI_EEMPTY;
  size_t D = gfi_model_dim(design);
  if (gfi_regfun_dim(f) != D) return GFI_EDIM;
  if (D > 64) return GFI_EDIM;
  ropt_ctx *c = calloc(1, sizeof *c);
  double *u = malloc(M * D * sizeof *u);
  int st = (c && u) ? GFI_OK : GFI_ENOMEM;
  if (!st) st = gfi_repro_unit_points(seed, 0, D, M, u);
  if (!st) {
    for (size_t i = 0; i < M * D; i++) u[i] *= h;
    c->s.design = design;
    c->s.truth = f;
    if (noise) c->s.noise = *noise;
    c->s.N = N;
    c->s.kernel = *kern;
    c->s.R = c->R;
    c->M = M, c->D = D, c->nreps = nreps, c->points = u;
    gfi_opts o;
    gfi_default_opts(&o);
    if (opts) o = *opts;
    o.seed = seed;
    c->opts = &o;
    /* the library's radius search (gfi_minimize_radius): scan, refinement
     * of the scan's local minima by Brent's method, scans doubled until two
     * rounds agree */
    gfi_select_result sr;
    st = gfi_minimize_radius(pilot_mse, c, Rmin, Rmax, nscan, &sr);
    if (!st) {
      *R_opt = sr.R[0];
      if (mse_opt) *mse_opt = sr.value;
    }
  }
  if (nevals && c) *nevals = c->nevals;
  free(c);
  free(u);
  return st;
}
