/* FLT: every family's Fourier pair by quadrature and by inverse FFT, the
 * paper's printed higher-order form against its exact inverse, c = sup |g|/p
 * (exact values, infinities), proposals, unbiasedness and the variance bound
 * of Thm A.3, the difference-set evaluation against explicit N1 N2^T factors,
 * thread-count determinism, FAVOR+ against exact softmax, FLT attention
 * against exact RPE attention, and the error statuses. */
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include "check.h"
#include "gfi/gfi.h"

/* ---- quadrature of f against g (ell = 1) ---- */
typedef struct {
  const gfi_rpe *r;
  double xi;
  int imag;
} qctx;

static double integrand(double x, void *vp) {
  qctx *c = vp;
  double fr, fi;
  gfi_rpe_f(c->r, 1, &x, &fr, &fi);
  double a = 2 * M_PI * x * c->xi;
  /* f(x) exp(-i a) = (fr cos a + fi sin a) + i (fi cos a - fr sin a) */
  return c->imag ? fi * cos(a) - fr * sin(a) : fr * cos(a) + fi * sin(a);
}

/* int f(x) exp(-2 pi i x xi) dx over [-X, X], split at the given breakpoints */
static void ft_quad(const gfi_rpe *r, double xi, double X, const double *bp, size_t nbp, double *gr,
                    double *gi) {
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(4000);
  double pts[64];
  size_t np = 0;
  pts[np++] = -X;
  for (size_t i = 0; i < nbp; i++)
    if (bp[i] > -X && bp[i] < X) pts[np++] = bp[i];
  pts[np++] = X;
  for (int im = 0; im < 2; im++) {
    qctx c = {r, xi, im};
    gsl_function F = {integrand, &c};
    double res, err;
    gsl_integration_qagp(&F, pts, np, 1e-12, 1e-10, 4000, ws, &res, &err);
    *(im ? gi : gr) = res;
  }
  gsl_integration_workspace_free(ws);
}

static gfi_rpe *parse(const char *spec, size_t ell) {
  gfi_rpe *r = NULL;
  gfi_errinfo e;
  int st = gfi_rpe_parse(&r, spec, ell, &e);
  CHECK(st == GFI_OK, "parse %s: %s", spec, e.msg);
  return r;
}

static gfi_proposal *prop(const char *spec, const gfi_rpe *r) {
  gfi_proposal *p = NULL;
  gfi_errinfo e;
  int st = gfi_proposal_parse(&p, spec, r, &e);
  CHECK(st == GFI_OK, "proposal %s: %s", spec, e.msg);
  return p;
}

static void test_pairs_quadrature(void) {
  struct {
    const char *spec;
    double X;
    double bp[8];
    size_t nbp;
    double tol;
  } fam[] = {
    {"gauss:s=1.3", 14, {0}, 1, 1e-9},
    {"mixture:w=1,-0.4,0.7;mu=0.3,0,-0.8;s=0.5,0.2,0.3", 12, {0}, 1, 1e-9},
    {"gbf:w=1,0.5;s=0.4,1.5", 16, {0}, 1, 1e-9},
    {"box:v=1.5", 1.5, {0}, 1, 1e-9},
    {"local:v=1.5,k=2", 3, {-1.5, 0, 1.5}, 3, 1e-9},
    {"local:v=0.7,k=3,C=2", 2.1, {-1.4, -0.7, 0, 0.7, 1.4}, 5, 1e-9},
    {"local:v=1,k=4", 4, {-3, -2, -1, 0, 1, 2, 3}, 7, 1e-9},
    {"local-paper:v=1,k=3", 3, {-1, 0, 1}, 3, 1e-9},
    {"exp:s=0.8", 60, {0}, 1, 1e-9},
    {"matern32:s=0.8", 60, {0}, 1, 1e-9},
    {"laplace:s=1.2", 80, {0}, 1, 1e-9},
  };
  double xis[] = {0, 0.05, 0.23, 0.61, 1.37};
  for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
    gfi_rpe *r = parse(fam[f].spec, 1);
    if (!r) continue;
    for (size_t i = 0; i < sizeof xis / sizeof xis[0]; i++) {
      double gr, gi, g;
      ft_quad(r, xis[i], fam[f].X, fam[f].bp, fam[f].nbp, &gr, &gi);
      gfi_rpe_g(r, 1, &xis[i], &g);
      CHECK(fabs(gr - g) < fam[f].tol * (1 + fabs(g)) && fabs(gi) < 1e-8, "%s at xi = %g: quadrature %.12g%+.3gi, g = %.12g",
            fam[f].spec, xis[i], gr, gi, g);
    }
    gfi_rpe_free(r);
  }
}

/* f from g by the inverse FFT against the closed form */
static void check_fft(const char *spec, size_t ell, size_t n, double dx, double xmax, double tol,
                      const double *avoid, size_t navoid, double avoid_w) {
  gfi_rpe *r = parse(spec, ell);
  if (!r) return;
  size_t tot = 1;
  for (size_t a = 0; a < ell; a++) tot *= n;
  double *x = malloc(n * sizeof *x), *fr = malloc(tot * sizeof *fr), *fi = malloc(tot * sizeof *fi);
  CHECK_STATUS(gfi_rpe_invert_fft(r, n, dx, x, fr, fi), GFI_OK);
  double worst = 0, wx[3] = {0};
  for (size_t idx = 0; idx < tot; idx++) {
    double p[3];
    size_t q = idx, skip = 0;
    for (size_t a = ell; a-- > 0;) {
      p[a] = x[q % n];
      q /= n;
      if (fabs(p[a]) > xmax) skip = 1;
      for (size_t v = 0; v < navoid; v++)
        if (fabs(fabs(p[a]) - avoid[v]) < avoid_w) skip = 1;
    }
    if (skip) continue;
    double er, ei;
    gfi_rpe_f(r, 1, p, &er, &ei);
    double e = hypot(fr[idx] - er, fi[idx] - ei);
    if (e > worst) {
      worst = e;
      memcpy(wx, p, ell * sizeof *p);
    }
  }
  CHECK(worst < tol, "FFT %s (ell %zu): max |f_fft - f| = %.3g at (%g, %g) > %g", spec, ell, worst, wx[0], wx[1], tol);
  free(x);
  free(fr);
  free(fi);
  gfi_rpe_free(r);
}

static void test_pairs_fft(void) {
  double j1[] = {1.5}, j3[] = {1, 3}, j2[] = {0, 2, 4}, j0[] = {0, 1};
  check_fft("gauss:s=1.3", 1, 1024, 0.05, 10, 1e-10, NULL, 0, 0);
  check_fft("mixture:w=1,-0.4,0.7;mu=0.3,0,-0.8;s=0.5,0.2,0.3", 1, 1024, 0.05, 10, 1e-10, NULL, 0, 0);
  check_fft("local:v=1.5,k=2", 1, 4096, 0.01, 8, 3e-3, NULL, 0, 0);
  check_fft("local:v=1,k=3", 1, 4096, 0.01, 8, 1e-4, NULL, 0, 0);
  check_fft("local:v=1,k=4", 1, 4096, 0.01, 8, 1e-5, NULL, 0, 0);
  check_fft("box:v=1.5", 1, 8192, 0.005, 8, 0.02, j1, 1, 0.1);                /* Gibbs near the jumps */
  check_fft("local-paper:v=1,k=3", 1, 8192, 0.005, 6, 0.02, j3, 2, 0.1);      /* boxes */
  check_fft("local-paper:v=1,k=2", 1, 8192, 0.005, 6, 0.02, j2, 3, 0.1);      /* i sign steps */
  check_fft("exp:s=1", 1, 8192, 0.01, 8, 3e-3, NULL, 0, 0);
  check_fft("matern32:s=1", 1, 4096, 0.01, 8, 1e-4, NULL, 0, 0);
  check_fft("laplace:s=1", 1, 8192, 0.01, 8, 3e-3, NULL, 0, 0);
  /* 2-D */
  check_fft("gauss:s=1", 2, 256, 0.1, 6, 1e-10, NULL, 0, 0);
  check_fft("mixture:w=1,1;mu=0.3,0.2,-0.3,-0.2;s=0.4,0.4", 2, 256, 0.1, 6, 1e-10, NULL, 0, 0);
  check_fft("local:v=1,0.7,k=2", 2, 512, 0.02, 3, 0.02, NULL, 0, 0);
  check_fft("local:v=1,k=3", 2, 512, 0.02, 3, 2e-3, NULL, 0, 0);
  /* per-axis orders and sums of boxes (FLT eq. 20-21): closed-form f against the inverse FFT of g */
  check_fft("local:v=1,0.7,k=2,3", 2, 512, 0.02, 3, 0.02, NULL, 0, 0);
  check_fft("boxes:C=1,0.5;v=1,0.7,0.4,1.2;k=2,4", 2, 512, 0.02, 3, 0.05, NULL, 0, 0); /* f(0) = 7.35 */
  check_fft("boxes:C=1,-0.3,0.2;v=0.6,1.5,1;k=3", 1, 4096, 0.01, 8, 1e-4, NULL, 0, 0);
  check_fft("matern32:s=1", 2, 512, 0.05, 5, 2e-3, NULL, 0, 0);
  check_fft("exp:s=1", 2, 1024, 0.05, 5, 0.03, j0, 1, 0.15);
  check_fft("laplace:s=1", 2, 1024, 0.05, 5, 0.03, j0, 1, 0.15);
  /* 3-D */
  check_fft("gauss:s=1", 3, 64, 0.25, 4, 1e-8, NULL, 0, 0);
  check_fft("gbf:w=2,1;s=0.8,1.2", 3, 64, 0.25, 4, 1e-8, NULL, 0, 0);
  check_fft("matern32:s=1.5", 3, 128, 0.2, 4, 5e-3, NULL, 0, 0);
}

/* int p = 1 for the parametric proposals (ell = 1) */
static double pdf1(double x, void *vp) {
  double lp;
  gfi_proposal_log_pdf(vp, 1, &x, &lp);
  return exp(lp);
}

static void test_proposals_and_c(void) {
  gfi_rpe *g1 = parse("gauss:s=1", 1), *g2 = parse("gauss:s=1", 2), *g3 = parse("gauss:s=0.7", 3);
  gfi_proposal *p;
  double c;
  /* p ~ g for a Gaussian RPE: c = f(0) = 1 (exactly and numerically) */
  gfi_rpe *rs[3] = {g1, g2, g3};
  for (int i = 0; i < 3; i++) {
    p = prop("optimal", rs[i]);
    CHECK_STATUS(gfi_rpe_c(rs[i], p, &c), GFI_OK);
    CHECK_CLOSE(c, 1.0, 1e-14, 0);
    gfi_proposal_free(p);
    double s = i == 2 ? 0.7 : 1.0, tau_opt = 1 / (2 * M_PI * s);
    char spec[64];
    snprintf(spec, sizeof spec, "gauss:tau=%.17g", tau_opt);
    p = prop(spec, rs[i]);
    CHECK_STATUS(gfi_rpe_c(rs[i], p, &c), GFI_OK);
    CHECK_CLOSE(c, 1.0, 1e-9, 0);
    gfi_proposal_free(p);
    snprintf(spec, sizeof spec, "gauss:tau=%.17g", 1.5 * tau_opt); /* c = (2 pi s tau)^ell */
    p = prop(spec, rs[i]);
    CHECK_STATUS(gfi_rpe_c(rs[i], p, &c), GFI_OK);
    CHECK_CLOSE(c, pow(1.5, i + 1), 1e-9, 0);
    gfi_proposal_free(p);
    snprintf(spec, sizeof spec, "gauss:tau=%.17g", 0.999 * tau_opt); /* too narrow: infinite */
    p = prop(spec, rs[i]);
    CHECK_STATUS(gfi_rpe_c(rs[i], p, &c), GFI_OK);
    CHECK(isinf(c), "narrow proposal: c = %g, expected inf", c);
    gfi_proposal_free(p);
  }
  /* the example: tau = 0.159 < 1/(2 pi) makes c infinite */
  p = prop("gauss:tau=0.159", g1);
  gfi_rpe_c(g1, p, &c);
  CHECK(isinf(c), "gauss:s=1 with tau 0.159: c = %g", c);
  gfi_proposal_free(p);
  /* box: infinite for every proposal; local k = 2 with Cauchy: finite, = a brute-force scan */
  gfi_rpe *box = parse("box:v=2", 1), *loc = parse("local:v=2,k=2", 1), *ex = parse("exp:s=1", 1);
  const char *props[] = {"gauss:tau=1", "cauchy", "t:nu=0.5,tau=3"};
  for (int i = 0; i < 3; i++) {
    p = prop(props[i], box);
    gfi_rpe_c(box, p, &c);
    CHECK(isinf(c), "box with %s: c = %g", props[i], c);
    gfi_proposal_free(p);
  }
  CHECK_STATUS(gfi_proposal_parse(&p, "optimal", box, NULL), GFI_EUNSUPPORTED);
  struct { gfi_rpe *r; const char *p; int finite; } cases[] = {
    {loc, "cauchy:tau=0.3", 1}, {loc, "t:nu=2", 0}, {loc, "gauss:tau=5", 0},
    {ex, "cauchy:tau=0.5", 1}, {ex, "cauchy:tau=0.1", 1}, {ex, "t:nu=1.5", 0}, {g1, "cauchy:tau=0.2", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    p = prop(cases[i].p, cases[i].r);
    CHECK_STATUS(gfi_rpe_c(cases[i].r, p, &c), GFI_OK);
    if (!cases[i].finite) {
      CHECK(isinf(c), "%s / %s: c = %g, expected inf", gfi_rpe_describe(cases[i].r), cases[i].p, c);
    } else {
      double best = 0;
      for (double x = -2000; x <= 2000; x += 1e-4 * (1 + fabs(x))) {
        double lg, lp;
        int s;
        gfi_rpe_log_abs_g(cases[i].r, 1, &x, &lg, &s);
        gfi_proposal_log_pdf(p, 1, &x, &lp);
        if (s && exp(lg - lp) > best) best = exp(lg - lp);
      }
      CHECK(isfinite(c) && c >= best * (1 - 1e-9) && c <= best * (1 + 2e-3), "%s / %s: c = %.12g, scan %.12g",
            gfi_rpe_describe(cases[i].r), cases[i].p, c, best);
    }
    gfi_proposal_free(p);
  }
  /* exp vs Cauchy of the same shape: p = g exactly, c = 1 */
  p = prop("cauchy:tau=0.15915494309189535", ex);
  gfi_rpe_c(ex, p, &c);
  CHECK_CLOSE(c, 1.0, 1e-9, 0);
  gfi_proposal_free(p);
  /* densities integrate to 1 */
  const char *ps[] = {"gauss:tau=0.3", "t:nu=3,tau=2", "cauchy", "optimal"};
  gfi_rpe *for_opt = loc;
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(2000);
  for (int i = 0; i < 4; i++) {
    p = prop(ps[i], for_opt);
    gsl_function F = {pdf1, p};
    double res, err;
    gsl_integration_qagi(&F, 1e-12, 1e-9, 2000, ws, &res, &err);
    CHECK_CLOSE(res, 1.0, 1e-6, 0);
    gfi_proposal_free(p);
  }
  gsl_integration_workspace_free(ws);
  gfi_rpe_free(g1); gfi_rpe_free(g2); gfi_rpe_free(g3);
  gfi_rpe_free(box); gfi_rpe_free(loc); gfi_rpe_free(ex);
}

/* Unbiasedness (|mean - f| within 4.5 SE at every difference) and Thm A.3
 * (var <= (c^2 - |f|^2)/r up to the chi-square spread of a sample variance). */
static void check_moments(const char *rspec, const char *pspec, size_t ell, gfi_flt_features feat, size_t r,
                          size_t ntrials) {
  gfi_rpe *R = parse(rspec, ell);
  gfi_proposal *P = prop(pspec, R);
  if (!R || !P) return;
  double c;
  CHECK_STATUS(gfi_rpe_c(R, P, &c), GFI_OK);
  gfi_flt_positions *pos;
  if (ell == 1) gfi_flt_positions_line(&pos, 12);
  else if (ell == 2) gfi_flt_positions_grid(&pos, 4, 3);
  else {
    double pts[15] = {0, 0, 0, 1, 0.5, -0.2, 0.3, 1.2, 0.7, -0.6, 0.4, 1.1, 0.9, -0.8, 0.1};
    gfi_flt_positions_points(&pos, 5, 3, pts);
  }
  size_t nd = gfi_flt_positions_ndiff(pos);
  double *mr = malloc(nd * sizeof *mr), *mi = malloc(nd * sizeof *mi), *v = malloc(nd * sizeof *v);
  double *fr = malloc(nd * sizeof *fr), *fi = malloc(nd * sizeof *fi);
  gfi_flt_opts o;
  gfi_flt_default_opts(&o);
  o.base.seed = 11;
  o.features = feat;
  CHECK_STATUS(gfi_flt_moments(R, P, pos, r, ntrials, &o, mr, mi, v, fr, fi), GFI_OK);
  double worst_z = 0, worst_ratio = 0;
  double slack = 1 + 5 * sqrt(2.0 / (double)(ntrials - 1));
  for (size_t d = 0; d < nd; d++) {
    double tr = fr[d], ti = feat == GFI_FLT_REAL ? 0 : fi[d];
    /* floor: with p = g/f(0) the diagonal N_hat(0) is f(0) up to rounding */
    double se = fmax(sqrt(v[d] / (double)ntrials), 1e-13);
    double z = hypot(mr[d] - tr, mi[d] - ti) / se;
    if (z > worst_z) worst_z = z;
    double bound = (c * c - (tr * tr + fi[d] * fi[d])) / (double)r;
    double ratio = bound > 0 ? v[d] / bound : (v[d] < 1e-20 ? 0 : INFINITY);
    if (ratio > worst_ratio) worst_ratio = ratio;
  }
  /* complex modulus of a 2-D mean: |z| within 4.5 SE per coordinate */
  CHECK(worst_z < 4.5 * sqrt(2.0), "%s/%s %s: unbiasedness worst |mean - f| / SE = %.3g", rspec, pspec,
        feat == GFI_FLT_REAL ? "real" : "complex", worst_z);
  CHECK(worst_ratio <= slack, "%s/%s: variance / Thm A.3 bound = %.4g > %.4g", rspec, pspec, worst_ratio, slack);
  free(mr); free(mi); free(v); free(fr); free(fi);
  gfi_flt_positions_free(pos);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
}

static void test_moments(void) {
  check_moments("gauss:s=2", "gauss:tau=0.2", 1, GFI_FLT_COMPLEX, 16, 4000);
  check_moments("gauss:s=2", "optimal", 1, GFI_FLT_REAL, 16, 4000);
  check_moments("local:v=2,k=2", "cauchy:tau=0.3", 1, GFI_FLT_COMPLEX, 8, 4000);
  check_moments("local:v=3,k=4", "optimal", 1, GFI_FLT_REAL, 8, 4000);
  check_moments("mixture:w=1,-0.4,0.7;mu=0.3,0,-0.1;s=0.1,0.05,0.08", "gauss:tau=0.2", 1, GFI_FLT_COMPLEX, 8, 4000);
  check_moments("exp:s=3", "optimal", 2, GFI_FLT_COMPLEX, 8, 3000);
  check_moments("matern32:s=2", "t:nu=1,tau=0.2", 2, GFI_FLT_REAL, 8, 3000);
  check_moments("gbf:w=1,0.5;s=0.6,1.5", "optimal", 3, GFI_FLT_COMPLEX, 8, 3000);
  check_moments("laplace:s=2", "cauchy:tau=0.1", 1, GFI_FLT_COMPLEX, 8, 3000);
  check_moments("boxes:C=1,0.5;v=1,0.7,0.4,1.2;k=2,4", "optimal", 2, GFI_FLT_REAL, 8, 3000);
  check_moments("boxes:C=1,-0.3;v=2,4;k=3", "cauchy:tau=0.1", 1, GFI_FLT_COMPLEX, 8, 3000);
  check_moments("local:v=2,1,k=2,1", "cauchy:tau=0.2", 2, GFI_FLT_COMPLEX, 8, 3000);
}

/* The difference-set metrics of trial 0 against an explicit N1 N2^T product
 * of the features drawn from stream (seed, 0). */
static void check_factors(const char *rspec, const char *pspec, gfi_flt_positions *pos, gfi_flt_features feat) {
  size_t ell = gfi_flt_positions_ell(pos), L = gfi_flt_positions_L(pos);
  gfi_rpe *R = parse(rspec, ell);
  gfi_proposal *P = prop(pspec, R);
  if (!R || !P) return;
  const size_t r = 37;
  const double *x = gfi_flt_positions_coords(pos);
  double *xi = malloc(r * ell * sizeof *xi), *w = malloc(r * sizeof *w);
  size_t cols = feat == GFI_FLT_COMPLEX ? 2 * r : 2 * r; /* complex: r numbers, 2r doubles */
  double *N1 = malloc(L * cols * sizeof *N1), *N2 = malloc(L * cols * sizeof *N2);
  double *Nr = malloc(L * L * sizeof *Nr), *Ni = malloc(L * L * sizeof *Ni);
  gsl_rng *g = gfi_rng_stream(5, 0);
  CHECK_STATUS(gfi_flt_draw(R, P, g, r, xi, w), GFI_OK);
  CHECK_STATUS(gfi_flt_factors(feat, L, ell, x, r, xi, w, N1, N2), GFI_OK);
  CHECK_STATUS(gfi_flt_mask(R, L, ell, x, Nr, Ni), GFI_OK);
  double mx = 0, mxr = 0, fr2 = 0, n2 = 0;
  for (size_t i = 0; i < L; i++)
    for (size_t j = 0; j < L; j++) {
      double hr = 0, hi = 0;
      if (feat == GFI_FLT_COMPLEX) {
        for (size_t k = 0; k < r; k++) {
          const double *a = N1 + 2 * (i * r + k), *b = N2 + 2 * (j * r + k);
          hr += a[0] * b[0] - a[1] * b[1];
          hi += a[0] * b[1] + a[1] * b[0];
        }
      } else {
        for (size_t k = 0; k < 2 * r; k++) hr += N1[i * 2 * r + k] * N2[j * 2 * r + k];
      }
      double ti = feat == GFI_FLT_COMPLEX ? Ni[i * L + j] : 0;
      double e = hypot(hr - Nr[i * L + j], hi - ti);
      mx = fmax(mx, e);
      mxr = fmax(mxr, fabs(hr - Nr[i * L + j]));
      fr2 += e * e;
      n2 += Nr[i * L + j] * Nr[i * L + j] + ti * ti;
    }
  double out[GFI_FLT_NMETRICS];
  gfi_flt_opts o;
  gfi_flt_default_opts(&o);
  o.base.seed = 5;
  o.features = feat;
  CHECK_STATUS(gfi_flt_error_trials(R, P, pos, 1, &r, 1, &o, out), GFI_OK);
  CHECK_CLOSE(out[0], mx, 1e-9, 1e-13);
  CHECK_CLOSE(out[1], mxr, 1e-9, 1e-13);
  CHECK_CLOSE(out[2], sqrt(fr2), 1e-9, 1e-13);
  CHECK_CLOSE(out[3], sqrt(fr2 / n2), 1e-9, 1e-13);
  gsl_rng_free(g);
  free(xi); free(w); free(N1); free(N2); free(Nr); free(Ni);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
}

/* Differences up to 2e40, so that |d.xi| >= 2^51 and the accumulation
 * takes its nearbyint-and-libm branch (the vectorised shifter reduction
 * can be off by whole periods there, harmless unless the period count
 * leaves gfi_sincos_simd's range: near a power of two above 2^75, which
 * random draws do not hit): trial 0's largest and Frobenius errors against
 * the difference-set sum written out with the same reduction. (The N1 N2^T
 * product cannot serve as the reference: its absolute phases at 1e40 lose
 * every digit that the difference keeps.) */
static void check_far(gfi_flt_positions *pos) {
  gfi_rpe *R = parse("gauss:s=3", 1);
  gfi_proposal *P = prop("cauchy:tau=0.1", R);
  if (!R || !P) return;
  const size_t r = 37, nd = gfi_flt_positions_ndiff(pos);
  double xi[37], w[37], mx = 0, fr2 = 0;
  gsl_rng *g = gfi_rng_stream(5, 0);
  CHECK_STATUS(gfi_flt_draw(R, P, g, r, xi, w), GFI_OK);
  gsl_rng_free(g);
  size_t nbig = 0;
  for (size_t k = 0; k < nd; k++) {
    double m, fr, fi;
    const double *d = gfi_flt_positions_diff(pos, k, &m);
    gfi_rpe_f(R, 1, d, &fr, &fi);
    double ar = 0, ai = 0;
    for (size_t q = 0; q < r; q++) {
      double t = d[0] * xi[q], a = 2 * M_PI * (t - nearbyint(t));
      ar += w[q] * cos(a);
      ai += w[q] * sin(a);
      nbig += fabs(t) >= 0x1p51;
    }
    double e = hypot(ar / (double)r - fr, ai / (double)r - fi);
    mx = fmax(mx, e);
    fr2 += m * e * e;
  }
  CHECK(nbig > 0, "no phase beyond 2^51");
  double out[GFI_FLT_NMETRICS];
  gfi_flt_opts o;
  gfi_flt_default_opts(&o);
  o.base.seed = 5;
  CHECK_STATUS(gfi_flt_error_trials(R, P, pos, 1, &r, 1, &o, out), GFI_OK);
  CHECK_CLOSE(out[0], mx, 1e-9, 1e-13);
  CHECK_CLOSE(out[2], sqrt(fr2), 1e-9, 1e-13);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
}

static void test_factors(void) {
  gfi_flt_positions *line, *line_long, *grid, *pts;
  gfi_flt_positions_line(&line, 20);
  gfi_flt_positions_line(&line_long, 300); /* runs longer than the phase resync interval */
  gfi_flt_positions_grid(&grid, 5, 4);
  gsl_rng *g = gfi_rng_stream(3, 0);
  double cloud[3 * 15];
  for (int i = 0; i < 45; i++) cloud[i] = 3 * gsl_rng_uniform(g);
  gsl_rng_free(g);
  gfi_flt_positions_points(&pts, 15, 3, cloud);
  /* differences up to 2e40 (check_far) */
  gfi_flt_positions *far;
  const double farx[5] = {0, 1, 2.5, 1e40, 2e40};
  CHECK_STATUS(gfi_flt_positions_points(&far, 5, 1, farx), GFI_OK);
  for (int f = 0; f < 2; f++) {
    gfi_flt_features feat = f ? GFI_FLT_REAL : GFI_FLT_COMPLEX;
    check_factors("gauss:s=3", "cauchy:tau=0.1", line, feat);
    check_factors("local:v=4,k=2", "optimal", line_long, feat);
    check_factors("mixture:w=1,-0.3;mu=0.05,0.02;s=0.1,0.05", "gauss:tau=0.2", line, feat);
    check_factors("exp:s=2", "optimal", grid, feat);
    check_factors("mixture:w=1,0.5;mu=0.1,-0.05,0,0.02;s=0.1,0.05", "gauss:tau=0.3", grid, feat);
    check_factors("gbf:w=1,0.4;s=0.5,1.1", "optimal", pts, feat);
  }
  check_far(far);
  gfi_flt_positions_free(far);
  /* multiplicities add up to L^2 */
  gfi_flt_positions *ps[4] = {line, line_long, grid, pts};
  for (int i = 0; i < 4; i++) {
    double s = 0, m;
    for (size_t k = 0; k < gfi_flt_positions_ndiff(ps[i]); k++) {
      gfi_flt_positions_diff(ps[i], k, &m);
      s += m;
    }
    double L = (double)gfi_flt_positions_L(ps[i]);
    CHECK_CLOSE(s, L * L, 0, 0);
  }
  gfi_flt_positions_free(line);
  gfi_flt_positions_free(line_long);
  gfi_flt_positions_free(grid);
  gfi_flt_positions_free(pts);
}

static void test_determinism_and_ladder(void) {
  gfi_rpe *R = parse("gauss:s=4", 1);
  gfi_proposal *P = prop("optimal", R);
  gfi_flt_positions *pos;
  gfi_flt_positions_line(&pos, 64);
  size_t rs[3] = {10, 40, 160}, T = 24;
  double *a = malloc(T * 3 * GFI_FLT_NMETRICS * sizeof *a), *b = malloc(T * 3 * GFI_FLT_NMETRICS * sizeof *b);
  gfi_flt_opts o;
  gfi_flt_default_opts(&o);
  o.base.seed = 9;
  o.base.nthreads = 1;
  CHECK_STATUS(gfi_flt_error_trials(R, P, pos, 3, rs, T, &o, a), GFI_OK);
  o.base.nthreads = 3;
  CHECK_STATUS(gfi_flt_error_trials(R, P, pos, 3, rs, T, &o, b), GFI_OK);
  CHECK(memcmp(a, b, T * 3 * GFI_FLT_NMETRICS * sizeof *a) == 0, "results depend on the thread count");
  /* the ladder's prefix property: a single-r run at 40 equals the middle rung */
  double c1[GFI_FLT_NMETRICS * 24];
  CHECK_STATUS(gfi_flt_error_trials(R, P, pos, 1, rs + 1, T, &o, c1), GFI_OK);
  int same = 1;
  for (size_t t = 0; t < T; t++)
    for (int m = 0; m < GFI_FLT_NMETRICS; m++)
      same &= fabs(c1[t * GFI_FLT_NMETRICS + m] - a[(t * 3 + 1) * GFI_FLT_NMETRICS + m]) <= 1e-12;
  CHECK(same, "ladder rung differs from a direct run");
  /* optimal proposal, Gaussian RPE: the diagonal N_hat(0) = c = 1 exactly, so errors stay < 1 + c */
  for (size_t t = 0; t < T * 3; t++) CHECK(a[t * GFI_FLT_NMETRICS] < 2, "max error %g", a[t * GFI_FLT_NMETRICS]);
  free(a);
  free(b);
  /* rstar on a hand-made table: 4 trials x 3 rungs */
  double err[12] = {0.5, 0.2, 0.05, 0.4, 0.08, 0.06, 0.3, 0.3, 0.04, 0.2, 0.09, 0.01};
  double ph;
  CHECK(gfi_flt_rstar(err, 4, 3, 0.1, 0.3, &ph) == 2 && ph == 1.0, "rstar index");
  CHECK(gfi_flt_rstar(err, 4, 3, 0.1, 0.5, &ph) == 1 && ph == 0.5, "rstar index (loose delta)");
  CHECK(gfi_flt_rstar(err, 4, 3, 0.01, 0.1, &ph) == 3 && isnan(ph), "rstar never reached");
  CHECK_CLOSE(gfi_flt_thm42_r(2, 0.1, 0.05, 100), 4 * 4 / 0.01 * log(4e4 / 0.05), 1e-15, 0);
  CHECK(isinf(gfi_flt_thm42_r(INFINITY, 0.1, 0.05, 100)), "thm42 with c = inf");
  gfi_flt_positions_free(pos);
  gfi_proposal_free(P);
  gfi_rpe_free(R);
}

static void fill(gsl_rng *g, size_t n, double sd, double *x) {
  for (size_t i = 0; i < n; i++) x[i] = sd * gsl_ran_gaussian_ziggurat(g, 1.0);
}

static void test_attention(void) {
  gsl_rng *g = gfi_rng_stream(21, 0);
  /* FAVOR+ kernel estimates are unbiased: mean over features of phi(q).phi(k) vs exp(q.k) */
  {
    const size_t dim = 4, m = 200000;
    double q[4], k[4], *W = malloc(m * dim * sizeof *W);
    fill(g, 4, 0.4, q);
    fill(g, 4, 0.4, k);
    for (int orth = 0; orth < 2; orth++) {
      gfi_favor_draw(g, m, dim, orth, W);
      double s = 0, s2 = 0, qq = 0, kk = 0, qk = 0;
      for (size_t a = 0; a < dim; a++) qq += q[a] * q[a], kk += k[a] * k[a], qk += q[a] * k[a];
      for (size_t l = 0; l < m; l++) {
        double wq = 0, wk = 0;
        for (size_t a = 0; a < dim; a++) wq += W[l * dim + a] * q[a], wk += W[l * dim + a] * k[a];
        double t = exp(wq - qq / 2) * exp(wk - kk / 2);
        s += t;
        s2 += t * t;
      }
      double mean = s / m, se = sqrt((s2 / m - mean * mean) / m);
      CHECK(fabs(mean - exp(qk)) < 4.5 * se, "FAVOR+ (orth %d) kernel %.6g vs exp(q.k) %.6g, se %.2g", orth, mean,
            exp(qk), se);
    }
    free(W);
  }
  /* FAVOR+ attention against exact softmax on tiny inputs with many features */
  {
    const size_t L = 6, d = 4, dv = 3, m = 100000;
    double Q[24], K[24], V[18], ex[18], fa[18], *W = malloc(m * d * sizeof *W);
    fill(g, L * d, 0.5, Q);
    fill(g, L * d, 0.5, K);
    fill(g, L * dv, 1, V);
    CHECK_STATUS(gfi_rpe_attention_exact(NULL, L, 1, NULL, d, Q, K, dv, V, 0, 1, ex, NULL), GFI_OK);
    /* softmax(Q K^T / sqrt(d)) = softmax(Q' K'^T) with Q' = Q d^-1/4 */
    double Qs[24], Ks[24];
    for (int i = 0; i < 24; i++) Qs[i] = Q[i] / sqrt(2.0), Ks[i] = K[i] / sqrt(2.0);
    for (int orth = 0; orth < 2; orth++) {
      gfi_favor_draw(g, m, d, orth, W);
      CHECK_STATUS(gfi_favor_attention(L, d, Qs, Ks, dv, V, m, W, 0, fa, NULL), GFI_OK);
      double worst = 0;
      for (int i = 0; i < 18; i++) worst = fmax(worst, fabs(fa[i] - ex[i]));
      CHECK(worst < 0.02, "FAVOR+ (orth %d) vs softmax: max diff %.3g", orth, worst);
    }
    /* one thread and many threads agree bit for bit */
    double fb[18];
    gfi_favor_attention(L, d, Q, K, dv, V, m, W, 1, fa, NULL);
    gfi_favor_attention(L, d, Q, K, dv, V, m, W, 4, fb, NULL);
    CHECK(memcmp(fa, fb, sizeof fa) == 0, "FAVOR+ depends on the thread count");
    free(W);
  }
  /* FAVOR+ attention against the formula in plain loops, on shapes that
   * are not multiples of the projection's blocks (4 rows x 8 features) */
  {
    const size_t L = 7, d = 5, dv = 3, m = 13;
    double Q[35], K[35], V[21], W[65], fa[21];
    fill(g, L * d, 0.5, Q);
    fill(g, L * d, 0.5, K);
    fill(g, L * dv, 1, V);
    for (int orth = 0; orth < 2; orth++) {
      CHECK_STATUS(gfi_favor_draw(g, m, d, orth, W), GFI_OK);
      if (orth) /* rows of a block orthogonal: blocks of 5, 5 and 3 rows */
        for (size_t a = 0; a < m; a++)
          for (size_t b = a + 1; b < m && b / d == a / d; b++) {
            double dot = 0, na = 0, nb = 0;
            for (size_t t = 0; t < d; t++)
              dot += W[a * d + t] * W[b * d + t], na += W[a * d + t] * W[a * d + t], nb += W[b * d + t] * W[b * d + t];
            CHECK(fabs(dot) <= 1e-13 * sqrt(na * nb), "orthogonal draw: rows %zu, %zu dot %.3g", a, b, dot);
          }
      CHECK_STATUS(gfi_favor_attention(L, d, Q, K, dv, V, m, W, 0, fa, NULL), GFI_OK);
      double worst = 0;
      for (size_t i = 0; i < L; i++) {
        double num[3] = {0, 0, 0}, den = 0, qq = 0;
        for (size_t t = 0; t < d; t++) qq += Q[i * d + t] * Q[i * d + t];
        for (size_t l = 0; l < m; l++) {
          double wq = 0;
          for (size_t t = 0; t < d; t++) wq += W[l * d + t] * Q[i * d + t];
          double pq = exp(wq - qq / 2);
          for (size_t j = 0; j < L; j++) {
            double wk = 0, kk = 0;
            for (size_t t = 0; t < d; t++) wk += W[l * d + t] * K[j * d + t], kk += K[j * d + t] * K[j * d + t];
            double pk = exp(wk - kk / 2);
            for (size_t b = 0; b < dv; b++) num[b] += pq * pk * V[j * dv + b];
            den += pq * pk;
          }
        }
        for (size_t b = 0; b < dv; b++) worst = fmax(worst, fabs(fa[i * dv + b] - num[b] / den) / (1 + fabs(num[b] / den)));
      }
      CHECK(worst < 1e-12, "FAVOR+ (orth %d) odd shapes vs plain loops: %.3g", orth, worst);
    }
  }
  /* FLT attention against exact RPE attention; materialised == streamed */
  {
    const size_t L = 16, d = 4, dv = 2;
    double Q[64], K[64], V[32], pos[16], ex[32], ex2[32], fl[32];
    for (int i = 0; i < 16; i++) pos[i] = i;
    fill(g, L * d, 0.5, Q);
    fill(g, L * d, 0.5, K);
    fill(g, L * dv, 1, V);
    gfi_rpe *R = parse("gauss:s=3", 1);
    gfi_proposal *P = prop("optimal", R);
    CHECK_STATUS(gfi_rpe_attention_exact(R, L, 1, pos, d, Q, K, dv, V, 0, 0, ex, NULL), GFI_OK);
    CHECK_STATUS(gfi_rpe_attention_exact(R, L, 1, pos, d, Q, K, dv, V, 1, 0, ex2, NULL), GFI_OK);
    double w2 = 0;
    for (int i = 0; i < 32; i++) w2 = fmax(w2, fabs(ex[i] - ex2[i]));
    CHECK(w2 < 1e-13, "materialised vs streamed exact attention: %.3g", w2);
    /* brute force by hand for row 3 */
    double den = 0, num[2] = {0, 0};
    for (size_t j = 0; j < L; j++) {
      double t = 0, dd = pos[3] - pos[j];
      for (size_t a = 0; a < d; a++) t += Q[3 * d + a] * K[j * d + a];
      double e = exp(exp(-dd * dd / 18) + t / 2);
      den += e;
      num[0] += e * V[j * 2];
      num[1] += e * V[j * 2 + 1];
    }
    CHECK_CLOSE(ex[6], num[0] / den, 1e-12, 1e-14);
    CHECK_CLOSE(ex[7], num[1] / den, 1e-12, 1e-14);
    double err_small = 0, err_big = 0;
    for (int trial = 0; trial < 2; trial++) {
      size_t r = trial ? 128 : 4, m = trial ? 20000 : 16;
      CHECK_STATUS(gfi_flt_attention(R, P, L, 1, pos, d, Q, K, dv, V, r, m, 1, g, 0, fl, NULL), GFI_OK);
      double w = 0;
      for (int i = 0; i < 32; i++) w = fmax(w, fabs(fl[i] - ex[i]));
      *(trial ? &err_big : &err_small) = w;
    }
    CHECK(err_big < 0.06, "FLT attention with r = 128, m = 2e4: max diff %.3g", err_big);
    CHECK(err_big < err_small, "FLT attention error does not fall with r, m: %.3g -> %.3g", err_small, err_big);
    /* errors */
    CHECK_STATUS(gfi_flt_attention(R, P, L, 2, pos, d, Q, K, dv, V, 4, 4, 0, g, 0, fl, NULL), GFI_EDIM);
    CHECK_STATUS(gfi_flt_attention(R, P, 0, 1, pos, d, Q, K, dv, V, 4, 4, 0, g, 0, fl, NULL), GFI_EEMPTY);
    CHECK_STATUS(gfi_favor_attention(L, d, Q, K, dv, V, 0, Q, 0, fl, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_rpe_attention_exact(R, L, 1, NULL, d, Q, K, dv, V, 0, 0, fl, NULL), GFI_EINVAL);
    gfi_proposal_free(P);
    gfi_rpe_free(R);
  }
  gsl_rng_free(g);
}

static void test_errors(void) {
  gfi_rpe *r = NULL;
  gfi_errinfo e;
  CHECK_STATUS(gfi_rpe_parse(&r, "gauss", 1, &e), GFI_EMODEL);
  CHECK(strstr(e.msg, "s=") != NULL, "message: %s", e.msg);
  CHECK_STATUS(gfi_rpe_parse(&r, "gauss:s=-1", 1, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_rpe_parse(&r, "gauss:s=1,q=2", 1, &e), GFI_EMODEL);
  CHECK(strstr(e.msg, "unknown key 'q'") != NULL, "message: %s", e.msg);
  CHECK_STATUS(gfi_rpe_parse(&r, "local:v=1,k=9", 1, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_rpe_parse(&r, "local:v=1,2,3,k=2", 2, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_rpe_parse(&r, "wobble:s=1", 1, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_rpe_parse(&r, "gauss:s=1", 4, &e), GFI_EDIM);
  CHECK_STATUS(gfi_rpe_parse(&r, "mixture:/nonexistent/file", 1, &e), GFI_EIO);
  CHECK_STATUS(gfi_rpe_parse(&r, "mixture:w=0;s=1", 1, &e), GFI_EMODEL);
  /* parameters that would overflow the features or the mask: refused, naming the key and the limit */
  const char *over[] = {"gauss:s=1e-308", "exp:s=1e11", "box:v=1e-11", "gbf:w=1e11;s=1", "mixture:w=1;s=1;mu=0,-1e300",
                        "local:v=1,k=2,C=1e20", "local:v=1e10,k=8,C=1e10"};
  for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
    CHECK_STATUS(gfi_rpe_parse(&r, over[i], 2, &e), GFI_EMODEL);
    CHECK(strstr(e.msg, "the limit that keeps the") != NULL, "%s: message: %s", over[i], e.msg);
  }
  CHECK(strstr(e.msg, "1e150 exceeds 1e+100") != NULL, "message: %s", e.msg);
  /* at the limits, parsed */
  const char *edge[] = {"gauss:s=1e-10", "exp:s=1e10", "gbf:w=1e10,-1e10;s=1e-10,1e10", "local:v=1e10,k=8,C=1e10"};
  for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
    CHECK_STATUS(gfi_rpe_parse(&r, edge[i], 1, &e), GFI_OK);
    gfi_rpe_free(r);
  }
  CHECK_STATUS(gfi_rpe_gauss(&r, 1, NAN), GFI_ENONFINITE);
  CHECK_STATUS(gfi_rpe_local(&r, 1, NULL, 0, 1, 0), GFI_EORDER);
  CHECK_STATUS(gfi_rpe_kernel(&r, GFI_RPE_GAUSS, 1, 1), GFI_EINVAL);
  double w = 0, s = 1;
  CHECK_STATUS(gfi_rpe_mixture(&r, 1, 1, &w, NULL, &s), GFI_EWEIGHT);
  CHECK_STATUS(gfi_rpe_mixture(&r, 1, 0, &w, NULL, &s), GFI_EEMPTY);
  gfi_rpe *g1 = parse("gauss:s=1", 1), *neg = parse("mixture:w=1,-0.5;s=1,0.5", 1);
  gfi_proposal *p = NULL;
  CHECK_STATUS(gfi_proposal_parse(&p, "optimal", neg, &e), GFI_EUNSUPPORTED);
  CHECK(strstr(e.msg, "changes sign") != NULL, "message: %s", e.msg);
  CHECK_STATUS(gfi_proposal_parse(&p, "gauss:tau=0", g1, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_proposal_parse(&p, "t:tau=1", g1, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_proposal_parse(&p, "cauchy:nu=2", g1, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_proposal_parse(&p, "t:nu=1e-300", g1, &e), GFI_EMODEL);
  CHECK(strstr(e.msg, "nu = 1e-300 is outside [0.01, 1e+08]") != NULL, "message: %s", e.msg);
  CHECK_STATUS(gfi_proposal_parse(&p, "gauss:tau=1e308", g1, &e), GFI_EMODEL);
  CHECK(strstr(e.msg, "tau = 1e+308 is outside [1e-10, 1e+10]") != NULL, "message: %s", e.msg);
  CHECK_STATUS(gfi_proposal_parse(&p, "normal", g1, &e), GFI_EMODEL);
  CHECK_STATUS(gfi_proposal_t(&p, 1, -1, 1), GFI_EINVAL);
  gfi_proposal *p2;
  gfi_proposal_gauss(&p2, 2, 1);
  double c;
  CHECK_STATUS(gfi_rpe_c(g1, p2, &c), GFI_EDIM);
  gfi_flt_positions *pos;
  CHECK_STATUS(gfi_flt_positions_line(&pos, 0), GFI_EEMPTY);
  CHECK_STATUS(gfi_flt_positions_points(&pos, 2, 4, (double[8]){0}), GFI_EDIM);
  CHECK_STATUS(gfi_flt_positions_points(&pos, 1, 1, (double[1]){NAN}), GFI_ENONFINITE);
  gfi_flt_positions_line(&pos, 4);
  size_t rs[2] = {10, 10};
  double out[16];
  gfi_proposal *pg;
  gfi_proposal_gauss(&pg, 1, 1);
  CHECK_STATUS(gfi_flt_error_trials(g1, pg, pos, 2, rs, 1, NULL, out), GFI_EINVAL);
  CHECK_STATUS(gfi_flt_error_trials(g1, pg, pos, 1, rs, 0, NULL, out), GFI_EEMPTY);
  CHECK_STATUS(gfi_flt_error_trials(g1, p2, pos, 1, rs, 1, NULL, out), GFI_EDIM);
  CHECK_STATUS(gfi_flt_moments(g1, pg, pos, 10, 1, NULL, out, NULL, out, NULL, NULL), GFI_EEMPTY);
  double x[4];
  CHECK_STATUS(gfi_rpe_invert_fft(g1, 6, 0.1, x, out, NULL), GFI_EINVAL);
  /* n^ell past size_t, or past FFTW's int sizes: refused before allocating */
  gfi_rpe *g3d = parse("gauss:s=1", 3);
  CHECK_STATUS(gfi_rpe_invert_fft(g3d, (size_t)1 << 30, 0.1, x, out, NULL), GFI_ENOMEM);
  CHECK_STATUS(gfi_rpe_invert_fft(g1, (size_t)1 << 40, 0.1, x, out, NULL), GFI_ENOMEM);
  gfi_rpe_free(g3d);
  gfi_flt_positions_free(pos);
  gfi_proposal_free(p2);
  gfi_proposal_free(pg);
  gfi_rpe_free(g1);
  gfi_rpe_free(neg);
}

int main(void) {
  gsl_set_error_handler_off();
  { double t0 = gfi_now(); test_pairs_quadrature(); printf("%-28s %.2f s\n", "test_pairs_quadrature", gfi_now() - t0); }
  { double t0 = gfi_now(); test_pairs_fft(); printf("%-28s %.2f s\n", "test_pairs_fft", gfi_now() - t0); }
  { double t0 = gfi_now(); test_proposals_and_c(); printf("%-28s %.2f s\n", "test_proposals_and_c", gfi_now() - t0); }
  { double t0 = gfi_now(); test_factors(); printf("%-28s %.2f s\n", "test_factors", gfi_now() - t0); }
  { double t0 = gfi_now(); test_determinism_and_ladder(); printf("%-28s %.2f s\n", "test_determinism_and_ladder", gfi_now() - t0); }
  { double t0 = gfi_now(); test_moments(); printf("%-28s %.2f s\n", "test_moments", gfi_now() - t0); }
  { double t0 = gfi_now(); test_attention(); printf("%-28s %.2f s\n", "test_attention", gfi_now() - t0); }
  { double t0 = gfi_now(); test_errors(); printf("%-28s %.2f s\n", "test_errors", gfi_now() - t0); }
  return check_summary("flt");
}
