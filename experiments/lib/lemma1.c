/* Lemma 1 (Bernstein concentration at a point) by Monte Carlo
 * (gfi_exp/lemma1.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_cdf.h>
#include "alloc.h"
#include "gfi_exp/lemma1.h"

#define NDELTA 4
static const double DELTAS[NDELTA] = {0.1, 0.05, 0.01, 0.001};
#define NGRID 80

void gfi_exp_lemma1_default(gfi_exp_lemma1_params *p) {
  memset(p, 0, sizeof *p);
  p->model = "normal";
  p->l = 4;
  p->N = 500;
  p->reps = 20000;
  p->seed = 1;
}

typedef struct {
  const gfi_model *m;
  const gfi_kernel *k;
  size_t N, nat;
  const double *at;
  double R;
} rep_ctx;

/* one replication: N draws, the estimate at every point (gfi's estimator) */
static int one_rep(size_t k, gsl_rng *r, double *out, void *vp) {
  (void)k;
  const rep_ctx *c = vp;
  double *x = gfi_malloc2(c->N, sizeof *x);
  if (!x) return GFI_ENOMEM;
  int st = gfi_model_sample(c->m, r, c->N, x);
  gfi_density_plan *pl = NULL;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 1;
  o.method = GFI_METHOD_DIRECT;
  if (!st) st = gfi_density_plan_fourier(&pl, c->k, c->N, 1, x, NULL, &c->R, &o);
  if (!st) st = gfi_density_eval(pl, c->nat, c->at, out);
  gfi_density_destroy(pl);
  free(x);
  return st;
}

/* E K and E K^2, K = (R/A) sinc(R (x - X))^l for the power kernel k
 * (gfi_exp_lemma1 takes phi = z^l), by Gauss-Legendre quadrature between
 * consecutive zeros of the kernel over |y - x| <= W */
static int kernel_moments(const gfi_model *m, const gfi_kernel *k, double R, double x, double *m1, double *m2) {
  const int l = k->l;
  const double W = 200.0, h = M_PI / R, A = k->A;
  long K = (long)ceil(W / h);
  gsl_integration_glfixed_table *t = gsl_integration_glfixed_table_alloc(24);
  if (!t) return GFI_ENOMEM;
  double ys[24], ws[24], ps[24];
  double s1 = 0, s2 = 0;
  int st = GFI_OK;
  for (long k = -K; k < K && !st; k++) {
    double a = x + (double)k * h, b = a + h;
    for (size_t i = 0; i < 24; i++) gsl_integration_glfixed_point(a, b, i, ys + i, ws + i, t);
    st = gfi_model_pdf(m, 24, ys, ps);
    for (size_t i = 0; i < 24 && !st; i++) {
      double kv = R / A * pow(gfi_sinc(R * (x - ys[i])), l);
      s1 += ws[i] * kv * ps[i];
      s2 += ws[i] * kv * kv * ps[i];
    }
  }
  gsl_integration_glfixed_table_free(t);
  *m1 = s1, *m2 = s2;
  return st;
}

static double bernstein(double t, size_t N, double s2, double b) {
  double v = 2 * exp(-(double)N * t * t / (2 * s2 + 2 * b * t / 3));
  return v > 1 ? 1 : v;
}

static double bernstein_t(double delta, size_t N, double s2, double b) {
  double L = log(2 / delta), a = b * L / (3.0 * (double)N);
  return a + sqrt(a * a + 2 * s2 * L / (double)N);
}

int gfi_exp_lemma1(const gfi_exp_lemma1_params *p, const gfi_exp_ctx *ctx, FILE *table,
                   gfi_exp_lemma1_point *res, gfi_exp_err *e) {
  if (!p || !ctx) return gfi_exp_fail(e, GFI_EINVAL, "no parameters");
  if (p->l < 1 || p->l > 8) return gfi_exp_fail_param(e, GFI_EINVAL, "--l", "expected 1..8");
  if (p->N < 2) return gfi_exp_fail_param(e, GFI_EINVAL, "--n", "must be at least 2");
  if (p->reps < 100) return gfi_exp_fail_param(e, GFI_EINVAL, "--reps", "must be at least 100");
  if (p->nat > GFI_EXP_LEMMA1_MAXPTS)
    return gfi_exp_fail_param(e, GFI_EINVAL, "--at", "at most %d points", GFI_EXP_LEMMA1_MAXPTS);
  if (p->reps > ((size_t)1 << 32) || p->N > ((size_t)1 << 32) / 8)
    return gfi_exp_fail_param(e, GFI_EINVAL, "--reps", "too many replications or draws");
  if (!(p->R >= 0) || !isfinite(p->R)) return gfi_exp_fail_param(e, GFI_EINVAL, "--R", "must be > 0");
  double at_def[2] = {0, 1.5};
  const double *at = p->nat ? p->at : at_def;
  size_t nat = p->nat ? p->nat : 2, reps = p->reps, N = p->N;
  double R = p->R > 0 ? p->R : cbrt((double)N);
  gfi_errinfo ei;
  gfi_errinfo_clear(&ei);
  gfi_model *m = NULL;
  int st = gfi_model_parse(&m, p->model ? p->model : "normal", 1, &ei);
  if (st) return gfi_exp_fail_param(e, st, "--model", "%s", ei.msg[0] ? ei.msg : gfi_strerror(st));
  gfi_kernel k;
  gfi_kernel_pow(&k, p->l);
  FILE *dat = NULL, *dd = NULL;
  char dpath[4096] = "", ddpath[4096] = "";
  double *est = gfi_malloc3(reps, nat, sizeof *est), *dev = gfi_malloc2(reps, sizeof *dev);
  if (!est || !dev) {
    st = gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
    goto done;
  }
  if (p->outdir) {
    if ((st = gfi_exp_mkdir(p->outdir, e))) goto done;
    snprintf(dpath, sizeof dpath, "%s/lemma1.dat", p->outdir);
    snprintf(ddpath, sizeof ddpath, "%s/lemma1_delta.dat", p->outdir);
    if ((st = gfi_exp_fopen(&dat, dpath, e)) || (st = gfi_exp_fopen(&dd, ddpath, e))) goto done;
  }
  FILE *fs[3] = {table, dat, dd};
  const double A = gfi_pow_A(p->l), b = R / A * (p->l % 2 ? 2.0 : 1.0);
  double A2 = p->l <= 4 ? gfi_pow_A(2 * p->l) : NAN, pmax = NAN;
  {
    /* ||p||_inf over a fine grid (the models' modes are within it) */
    double g[4001], pv[4001];
    for (int i = 0; i <= 4000; i++) g[i] = -20 + 0.01 * i;
    if ((st = gfi_model_pdf(m, 4001, g, pv))) {
      gfi_exp_fail(e, st, "density: %s", gfi_strerror(st));
      goto done;
    }
    pmax = 0;
    for (int i = 0; i <= 4000; i++) pmax = fmax(pmax, pv[i]);
  }
  for (int a = 0; a < 3; a++) {
    if (!fs[a]) continue;
    gfi_exp_header(fs[a], ctx);
    gfi_dat_meta(fs[a], "setting", "model %s, phi = z^%d, N = %zu, R = %.6g, %zu replications, seed %llu",
                 gfi_model_describe(m), p->l, N, R, reps, (unsigned long long)p->seed);
    gfi_dat_meta(fs[a], "bound", "Bernstein: P(|p_hat(x) - E p_hat(x)| >= t) <= 2 exp(-N t^2 / (2 sigma^2 + 2 b t/3)), "
                                 "b = %.6g; sigma^2 exact (quadrature) or <= ||p||_inf R A_2l/A_l^2 (sup)", b);
  }
  if (table) fprintf(table, "# x delta t_delta t_delta_sup empirical_P binom_se ratio_to_delta\n");
  if (dd) fprintf(dd, "# x delta t_delta t_delta_sup empirical_P binom_se ratio_to_delta\n");
  if (dat)
    fprintf(dat, "# one block per point; columns:\n# t empirical_P binom_se bound_exact bound_sup gauss_approx\n");
  rep_ctx rc = {m, &k, N, nat, at, R};
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = ctx->nthreads;
  o.seed = p->seed;
  if ((st = gfi_replicate(reps, nat, &o, one_rep, &rc, est))) {
    gfi_exp_fail(e, st, "replications: %s", gfi_strerror(st));
    goto done;
  }
  for (size_t i = 0; i < nat; i++) {
    gfi_exp_lemma1_point P;
    memset(&P, 0, sizeof P);
    P.x = at[i];
    double m1, m2;
    if ((st = kernel_moments(m, &k, R, at[i], &m1, &m2))) {
      gfi_exp_fail(e, st, "quadrature: %s", gfi_strerror(st));
      goto done;
    }
    P.mean_exact = m1;
    P.sigma2 = m2 - m1 * m1;
    P.sigma2_sup = pmax * R * A2 / (A * A);
    P.b = b;
    gfi_summary s;
    gfi_summarize(est + i, reps, nat, &s);
    P.mean_mc = s.mean, P.sd_mc = s.sd;
    P.mean_z = s.se > 0 ? (s.mean - m1) / s.se : 0;
    /* the variance of the estimate is sigma^2 / N */
    for (size_t r = 0; r < reps; r++) dev[r] = fabs(est[r * nat + i] - m1);
    gsl_sort(dev, 1, reps);
    /* tail at t: the fraction of |dev| >= t */
    double tmax = dev[reps - 1] * 1.05;
    if (dat) {
      if (i) fprintf(dat, "\n\n");
      fprintf(dat, "# x = %g: E p_hat = %.10g (quadrature), MC mean %.10g (z = %.2f); sigma^2 = %.6g (exact), "
                   "%.6g (sup bound); sd of p_hat: MC %.6g, sigma/sqrt(N) %.6g\n",
              at[i], m1, s.mean, P.mean_z, P.sigma2, P.sigma2_sup, s.sd, sqrt(P.sigma2 / (double)N));
    }
    size_t idx = 0;
    for (int g = 0; g <= NGRID; g++) {
      double t = tmax * g / NGRID;
      while (idx < reps && dev[idx] < t) idx++;
      double ph = (double)(reps - idx) / (double)reps, se = sqrt(ph * (1 - ph) / (double)reps);
      double bx = bernstein(t, N, P.sigma2, b), bs = isnan(A2) ? NAN : bernstein(t, N, P.sigma2_sup, b);
      double ga = 2 * gsl_cdf_ugaussian_Q(t / sqrt(P.sigma2 / (double)N));
      if (ph > bx + 3 * se + 1.0 / (double)reps) P.violations++;
      if (dat) fprintf(dat, "%.10g %.10g %.6g %.10g %.10g %.10g\n", t, ph, se, bx, bs, ga);
    }
    for (int d = 0; d < NDELTA; d++) {
      double t = bernstein_t(DELTAS[d], N, P.sigma2, b);
      double ts = isnan(A2) ? NAN : bernstein_t(DELTAS[d], N, P.sigma2_sup, b);
      size_t cnt = 0;
      for (size_t r = 0; r < reps; r++) cnt += dev[r] >= t;
      double ph = (double)cnt / (double)reps;
      P.delta[d] = DELTAS[d], P.t_delta[d] = t, P.freq[d] = ph;
      for (int a = 0; a < 3; a += 2)
        if (fs[a])
          fprintf(fs[a], "%g %g %.6g %.6g %.6g %.3g %.4g\n", at[i], DELTAS[d], t, ts, ph,
                  sqrt(ph * (1 - ph) / (double)reps), ph / DELTAS[d]);
    }
    if (table)
      fprintf(table, "# x = %g: E p_hat %.6g (quadrature) vs MC mean %.6g (z = %.2f); sigma^2 %.6g; grid points "
                     "where the empirical tail exceeds the bound by > 3 s.e.: %zu\n",
              at[i], m1, s.mean, P.mean_z, P.sigma2, P.violations);
    if (res) res[i] = P;
  }
  st = gfi_exp_fclose(dat, dpath, e);
  dat = NULL;
  if (!st) st = gfi_exp_fclose(dd, ddpath, e);
  dd = NULL;
done:
  gfi_exp_fdiscard(dat);
  gfi_exp_fdiscard(dd);
  free(est);
  free(dev);
  gfi_model_free(m);
  return st;
}
