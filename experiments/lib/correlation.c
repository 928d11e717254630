/* The correlation claim: isotropic Fourier against isotropic and full-H
 * Gaussian KDEs at their MISE-optimal parameters (gfi_exp/correlation.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_multimin.h>
#include "gfi_exp/correlation.h"

static const double RHO_DEFAULT[] = {0, 0.5, 0.9, 0.99}, N_DEFAULT[] = {1e3, 1e4, 1e5};

void gfi_exp_corr_default(gfi_exp_corr_params *p) {
  memset(p, 0, sizeof *p);
  p->l = 4;
}

/* ---- the full-H minimiser ---- */

typedef struct {
  const gfi_model *m;
  double N;
  size_t D;
  int failed; /* a status other than GFI_OK seen inside the objective */
} fullh_ctx;

/* H = L L' from v = (log L_00, .., log L_(D-1)(D-1), the strict lower part row by row) */
static void H_of(size_t D, const gsl_vector *v, double *H) {
  double L[9] = {0};
  size_t k = D;
  for (size_t i = 0; i < D; i++) {
    L[i * D + i] = exp(gsl_vector_get(v, i));
    for (size_t j = 0; j < i; j++) L[i * D + j] = gsl_vector_get(v, k++);
  }
  for (size_t i = 0; i < D; i++)
    for (size_t j = 0; j < D; j++) {
      double s = 0;
      for (size_t q = 0; q < D; q++) s += L[i * D + q] * L[j * D + q];
      H[i * D + j] = s;
    }
}

static double fullh_f(const gsl_vector *v, void *arg) {
  fullh_ctx *c = arg;
  double H[9];
  H_of(c->D, v, H);
  gfi_mise_result r;
  int st = gfi_mise_gauss_exact(c->m, c->N, H, &r);
  if (st || !(r.mise > 0)) {
    /* a degenerate H (a diagonal of L past the range of exp): outside the feasible set */
    if (st != GFI_EBANDWIDTH && st != GFI_ENOTPD && st) c->failed = st;
    return GSL_POSINF;
  }
  return log(r.mise);
}

/* Cholesky factor of an SPD D x D matrix into v's parametrisation */
static int v_of(size_t D, const double *H, gsl_vector *v) {
  double L[9] = {0};
  for (size_t i = 0; i < D; i++)
    for (size_t j = 0; j <= i; j++) {
      double s = H[i * D + j];
      for (size_t q = 0; q < j; q++) s -= L[i * D + q] * L[j * D + q];
      if (i == j) {
        if (!(s > 0)) return GFI_ENOTPD;
        L[i * D + i] = sqrt(s);
      } else {
        L[i * D + j] = s / L[j * D + j];
      }
    }
  size_t k = D;
  for (size_t i = 0; i < D; i++) {
    gsl_vector_set(v, i, log(L[i * D + i]));
    for (size_t j = 0; j < i; j++) gsl_vector_set(v, k++, L[i * D + j]);
  }
  return GFI_OK;
}

int gfi_exp_gauss_full_hopt(const gfi_model *m, double N, const double *H0, double *H, double *mise) {
  if (!m || !H || !mise || !(N >= 1) || !isfinite(N)) return GFI_EINVAL;
  if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE) return GFI_EUNSUPPORTED;
  size_t D = gfi_model_dim(m);
  if (D < 1 || D > 3) return GFI_EUNSUPPORTED;
  size_t np = D + D * (D - 1) / 2;
  double Hs[9] = {0};
  if (H0) {
    memcpy(Hs, H0, D * D * sizeof *Hs);
  } else {
    double h;
    gfi_mise_result r;
    int st = gfi_mise_gauss_hopt(m, N, &h, &r);
    if (st) return st;
    for (size_t i = 0; i < D; i++) Hs[i * D + i] = h * h;
  }
  gsl_vector *x = gsl_vector_alloc(np), *step = gsl_vector_alloc(np);
  gsl_multimin_fminimizer *s = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, np);
  int st = GFI_OK;
  if (!x || !step || !s) {
    st = GFI_ENOMEM;
    goto done;
  }
  if ((st = v_of(D, Hs, x))) goto done;
  /* steps: 0.3 in log L_ii (a third of an e-fold), 0.3 L_ii in the off-diagonals */
  for (size_t i = 0; i < np; i++) gsl_vector_set(step, i, 0.3);
  for (size_t i = 1, k = D; i < D; i++)
    for (size_t j = 0; j < i; j++) gsl_vector_set(step, k++, 0.3 * exp(gsl_vector_get(x, i)));
  fullh_ctx c = {m, N, D, 0};
  gsl_multimin_function F = {fullh_f, np, &c};
  if (gsl_multimin_fminimizer_set(s, &F, x, step) || !isfinite(s->fval)) {
    st = c.failed ? c.failed : GFI_EQUAD;
    goto done;
  }
  /* Nelder-Mead, restarted once from its answer (the standard guard against
   * a collapsed simplex); converged when the simplex is 1e-9 in size */
  int converged = 0;
  for (int round = 0; round < 2; round++) {
    if (round) {
      gsl_vector_memcpy(x, s->x);
      for (size_t i = 0; i < np; i++) gsl_vector_set(step, i, 0.05);
      if (gsl_multimin_fminimizer_set(s, &F, x, step)) break;
    }
    converged = 0;
    for (int it = 0; it < 20000 && !converged; it++) {
      if (gsl_multimin_fminimizer_iterate(s)) break;
      converged = gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), 1e-9) == GSL_SUCCESS;
    }
  }
  if (c.failed) {
    st = c.failed;
    goto done;
  }
  if (!converged) {
    st = GFI_EQUAD;
    goto done;
  }
  H_of(D, s->x, H);
  *mise = exp(s->fval);
done:
  gsl_multimin_fminimizer_free(s);
  gsl_vector_free(x);
  gsl_vector_free(step);
  return st;
}

/* ---- the comparison ---- */

static void write_table(FILE *f, const gfi_exp_ctx *ctx, const gfi_kernel *k, const gfi_exp_corr_row *rows,
                        size_t n) {
  gfi_exp_header(f, ctx);
  gfi_dat_meta(f, "truth", "N(0, [[1, rho], [rho, 1]]) in D = 2");
  gfi_dat_meta(f, "fourier", "phi = z^%d, one radius R for both axes, R* minimising the exact (Plancherel) MISE", k->l);
  gfi_dat_meta(f, "gauss-iso", "Gaussian KDE, H = h^2 I, h* minimising the exact MISE (Marron & Wand)");
  gfi_dat_meta(f, "gauss-full", "Gaussian KDE, full H = L L' minimising the exact MISE (Nelder-Mead on the "
               "Cholesky factor, from h_iso^2 I)");
  gfi_dat_meta(f, "ratios", "fourier_over_full = mise_fourier / mise_full, iso_over_full = mise_iso / mise_full");
  fputs("# rho n R_opt mise_fourier h_opt mise_iso H11 H12 H22 mise_full fourier_over_full iso_over_full\n", f);
  for (size_t i = 0; i < n; i++) {
    const gfi_exp_corr_row *r = rows + i;
    fprintf(f, "%g %g %.6g %.6e %.6g %.6e %.6g %.6g %.6g %.6e %.4f %.4f\n", r->rho, r->N, r->R, r->mise_fourier, r->h,
            r->mise_iso, r->H[0], r->H[1], r->H[3], r->mise_full, r->mise_fourier / r->mise_full,
            r->mise_iso / r->mise_full);
  }
}

int gfi_exp_correlation(const gfi_exp_corr_params *p, const gfi_exp_ctx *ctx, FILE *table,
                        gfi_exp_corr_row **rows_out, size_t *nrows_out, gfi_exp_err *e) {
  if (rows_out) *rows_out = NULL;
  if (nrows_out) *nrows_out = 0;
  if (!p || !ctx) return gfi_exp_fail(e, GFI_EINVAL, "no parameters");
  const double *rho = p->nrho ? p->rho : RHO_DEFAULT, *Ns = p->nN ? p->N : N_DEFAULT;
  size_t nrho = p->nrho ? p->nrho : sizeof RHO_DEFAULT / sizeof *RHO_DEFAULT;
  size_t nN = p->nN ? p->nN : sizeof N_DEFAULT / sizeof *N_DEFAULT;
  int l = p->l ? p->l : 4;
  if (nrho > GFI_EXP_CORR_MAX) return gfi_exp_fail_param(e, GFI_EINVAL, "--rho", "at most %d values", GFI_EXP_CORR_MAX);
  if (nN > GFI_EXP_CORR_MAX) return gfi_exp_fail_param(e, GFI_EINVAL, "--n", "at most %d values", GFI_EXP_CORR_MAX);
  for (size_t i = 0; i < nrho; i++)
    if (!(fabs(rho[i]) < 1))
      return gfi_exp_fail_param(e, GFI_EINVAL, "--rho", "a correlation must lie in (-1, 1), got %g", rho[i]);
  for (size_t i = 0; i < nN; i++)
    if (!(Ns[i] >= 2) || !(Ns[i] <= 1e15))
      return gfi_exp_fail_param(e, GFI_EINVAL, "--n", "a sample size must lie in 2..1e15, got %g", Ns[i]);
  if (l < 1 || l > 8) return gfi_exp_fail_param(e, GFI_EINVAL, "--l", "kernel power %d is outside 1..8", l);
  gfi_kernel kp;
  gfi_kernel_pow(&kp, l);

  gfi_exp_corr_row *rows = calloc(nrho * nN, sizeof *rows);
  if (!rows) return gfi_exp_fail(e, GFI_ENOMEM, "out of memory");
  int st = GFI_OK;
  gfi_model *m = NULL;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = ctx->nthreads;
  o.parts = 0;
  gfi_progress pg;
  gfi_progress_start(&pg, ctx->progress, "correlation", nrho * nN);
  for (size_t a = 0; a < nrho && !st; a++) {
    char spec[128];
    gfi_errinfo ei;
    gfi_errinfo_clear(&ei);
    snprintf(spec, sizeof spec, "normal:cov=1,%.17g,%.17g,1", rho[a], rho[a]);
    if ((st = gfi_model_parse(&m, spec, 2, &ei))) {
      st = gfi_exp_fail_param(e, st, "--rho", "rho = %g: %s", rho[a], ei.msg[0] ? ei.msg : gfi_strerror(st));
      break;
    }
    for (size_t i = 0; i < nN && !st; i++) {
      gfi_exp_corr_row *r = rows + a * nN + i;
      gfi_mise_result res;
      r->rho = rho[a], r->N = Ns[i];
      if ((st = gfi_ropt(m, &kp, Ns[i], NULL, &o, &r->R, &res))) {
        st = gfi_exp_fail(e, st, "rho = %g, N = %g: optimal radius: %s", rho[a], Ns[i], gfi_strerror(st));
        break;
      }
      r->mise_fourier = res.mise;
      if ((st = gfi_mise_gauss_hopt(m, Ns[i], &r->h, &res))) {
        st = gfi_exp_fail(e, st, "rho = %g, N = %g: Gaussian bandwidth: %s", rho[a], Ns[i], gfi_strerror(st));
        break;
      }
      r->mise_iso = res.mise;
      double H0[4] = {r->h * r->h, 0, 0, r->h * r->h};
      if ((st = gfi_exp_gauss_full_hopt(m, Ns[i], H0, r->H, &r->mise_full))) {
        st = gfi_exp_fail(e, st, "rho = %g, N = %g: full Gaussian bandwidth matrix: %s", rho[a], Ns[i],
                          gfi_strerror(st));
        break;
      }
      gfi_progress_add(&pg, 1);
    }
    gfi_model_free(m);
    m = NULL;
  }
  gfi_progress_end(&pg);
  if (!st && table) write_table(table, ctx, &kp, rows, nrho * nN);
  if (!st && p->outdir) {
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/correlation.dat", p->outdir);
    if (!(st = gfi_exp_mkdir(p->outdir, e)) && !(st = gfi_exp_fopen(&f, path, e))) {
      write_table(f, ctx, &kp, rows, nrho * nN);
      st = gfi_exp_fclose(f, path, e);
    }
  }
  if (!st && rows_out) {
    *rows_out = rows;
    if (nrows_out) *nrows_out = nrho * nN;
  } else {
    free(rows);
  }
  return st;
}
