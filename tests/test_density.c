/* Density estimators against plain brute-force sums (sin per factor), the
 * integral of the estimate, thread-count determinism, large-D range, the
 * Gaussian KDE against a direct formula, and every error status. */
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include "check.h"
#include "gfi/gfi.h"

/* Brute force: sum_i w_i prod_j (R_j/A) sinc(R_j (x_j - k_ij))^l, with a sin
 * call per factor; *abs_sum gets sum_i |w_i term_i| (the scale of the sum). */
static double brute_fourier(int l, size_t N, size_t D, const double *k, const double *w,
                            const double *R, const double *x, double *abs_sum) {
  double A = gfi_pow_A(l), s = 0, sa = 0;
  for (size_t i = 0; i < N; i++) {
    double t = 1;
    for (size_t j = 0; j < D; j++) {
      double u = R[j] * (x[j] - k[i * D + j]);
      double sc = u == 0 ? 1.0 : sin(u) / u;
      t *= R[j] / A * pow(sc, l);
    }
    double wi = w ? w[i] : 1.0 / N;
    s += wi * t;
    sa += fabs(wi * t);
  }
  *abs_sum = sa;
  return s;
}

static void fill_normal(gsl_rng *r, size_t n, double sd, double *x) {
  for (size_t i = 0; i < n; i++) {
    /* Box-Muller on the gfi stream: tests need no model code */
    double u1 = gsl_rng_uniform_pos(r), u2 = gsl_rng_uniform(r);
    x[i] = sd * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
  }
}

typedef struct {
  const gfi_density_plan *p;
  double y; /* fixed second coordinate for nested 2-D integration */
  int dim2;
  gsl_integration_workspace *inner;
} int_ctx;

static double dens1(double x, void *vp) {
  int_ctx *c = vp;
  /* qagi samples up to |x| ~ 1e300; past |x| = 1e12 the kernel's tail mass is
   * below 1e-12 / A for l >= 2, negligible here (and R x must stay < 2^52) */
  if (fabs(x) > 1e12 || fabs(c->y) > 1e12) return 0;
  double q[2] = {x, c->y}, out;
  if (gfi_density_eval(c->p, 1, q, &out) != GFI_OK) return NAN;
  return out;
}

static double dens2_outer(double y, void *vp) {
  int_ctx *c = vp;
  int_ctx ic = *c;
  ic.y = y;
  gsl_function F = {dens1, &ic};
  double r, e;
  gsl_integration_qagi(&F, 1e-11, 1e-9, 2000, c->inner, &r, &e);
  return r;
}

static double custom_pow4(double z, void *ctx) {
  (void)ctx;
  return z * z * z * z;
}

static void check_against_brute(gsl_rng *r, size_t D, size_t N, size_t M, int weighted) {
  double *k = malloc(N * D * sizeof *k), *x = malloc(M * D * sizeof *x), *w = NULL;
  double *out = malloc(M * sizeof *out), R[8];
  fill_normal(r, N * D, 1.0, k);
  fill_normal(r, M * D, 1.3, x);
  /* some queries exactly on data points, and within 1e-9 of one (series branch) */
  for (size_t j = 0; j < D; j++) {
    x[j] = k[j];
    x[D + j] = k[D + j] + 1e-9;
  }
  if (weighted) {
    w = malloc(N * sizeof *w);
    double s = 0;
    for (size_t i = 0; i < N; i++) s += (w[i] = 0.5 + gsl_rng_uniform(r));
    for (size_t i = 0; i < N; i++) w[i] /= s;
  }
  for (size_t j = 0; j < D; j++) R[j] = 0.7 + 0.9 * j; /* a different radius per axis */
  for (int l = 1; l <= 8; l++) {
    gfi_kernel kern;
    gfi_kernel_pow(&kern, l);
    gfi_density_plan *p;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, N, D, k, w, R, NULL), GFI_OK);
    CHECK_STATUS(gfi_density_eval(p, M, x, out), GFI_OK);
    double worst = 0;
    for (size_t q = 0; q < M; q++) {
      double sa, b = brute_fourier(l, N, D, k, w, R, x + q * D, &sa);
      double rel = fabs(out[q] - b) / sa;
      if (rel > worst) worst = rel;
    }
    CHECK(worst <= 1e-12, "D=%zu l=%d N=%zu weighted=%d: relative error %.3g", D, l, N, weighted, worst);
    gfi_density_destroy(p);
  }
  free(k);
  free(x);
  free(w);
  free(out);
}

int main(void) {
  gsl_set_error_handler_off();
  gsl_rng *r = gfi_rng_stream(2024, 0);

  /* 1. brute force, D = 1, 2, 5, every l, uniform and weighted, N not a
   * multiple of the block (padding) */
  check_against_brute(r, 1, 1000, 200, 0);
  check_against_brute(r, 2, 700, 150, 0);
  check_against_brute(r, 5, 333, 100, 0);
  check_against_brute(r, 2, 517, 100, 1);

  /* 2. integrates to one (l >= 2; l = 1 is not absolutely integrable) */
  {
    const size_t N = 7;
    double k[14];
    fill_normal(r, 14, 1.0, k);
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(4000);
    gsl_integration_workspace *inner = gsl_integration_workspace_alloc(2000);
    for (int l = 2; l <= 8; l++) {
      gfi_kernel kern;
      gfi_kernel_pow(&kern, l);
      double R = 1.7;
      gfi_density_plan *p;
      CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, N, 1, k, NULL, &R, NULL), GFI_OK);
      int_ctx c = {p, 0, 0, inner};
      gsl_function F = {dens1, &c};
      double v, e;
      gsl_integration_qagi(&F, 1e-12, 1e-10, 4000, ws, &v, &e);
      CHECK_CLOSE(v, 1.0, 1e-7, 0);
      gfi_density_destroy(p);
    }
    for (int l = 4; l <= 8; l += 4) {
      gfi_kernel kern;
      gfi_kernel_pow(&kern, l);
      double R[2] = {1.3, 2.1};
      gfi_density_plan *p;
      CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, N, 2, k, NULL, R, NULL), GFI_OK);
      int_ctx c = {p, 0, 1, inner};
      gsl_function F = {dens2_outer, &c};
      double v, e;
      gsl_integration_qagi(&F, 1e-10, 1e-8, 4000, ws, &v, &e);
      CHECK_CLOSE(v, 1.0, 1e-6, 0);
      gfi_density_destroy(p);
    }
    gsl_integration_workspace_free(inner);
    gsl_integration_workspace_free(ws);
  }

  /* 3. same bits for 1 and 2 threads (several super-chunks, odd tiles) */
  {
    const size_t N = 50001, M = 203, D = 3;
    double *k = malloc(N * D * sizeof *k), *x = malloc(M * D * sizeof *x);
    double *o1 = malloc(M * sizeof *o1), *o2 = malloc(M * sizeof *o2), R[3] = {2, 3, 1};
    fill_normal(r, N * D, 1.0, k);
    fill_normal(r, M * D, 1.0, x);
    gfi_kernel kern;
    gfi_kernel_pow(&kern, 4);
    gfi_opts o;
    gfi_default_opts(&o);
    gfi_density_plan *p1, *p2;
    o.nthreads = 1;
    CHECK_STATUS(gfi_density_plan_fourier(&p1, &kern, N, D, k, NULL, R, &o), GFI_OK);
    o.nthreads = 2;
    CHECK_STATUS(gfi_density_plan_fourier(&p2, &kern, N, D, k, NULL, R, &o), GFI_OK);
    gfi_density_eval(p1, M, x, o1);
    gfi_density_eval(p2, M, x, o2);
    CHECK(memcmp(o1, o2, M * sizeof *o1) == 0, "Fourier: 1 and 2 threads differ");
    double H[9] = {0.1, 0.02, 0, 0.02, 0.2, 0.01, 0, 0.01, 0.3};
    gfi_density_destroy(p1);
    gfi_density_destroy(p2);
    o.nthreads = 1;
    CHECK_STATUS(gfi_density_plan_gauss(&p1, N, D, k, NULL, H, &o), GFI_OK);
    o.nthreads = 2;
    CHECK_STATUS(gfi_density_plan_gauss(&p2, N, D, k, NULL, H, &o), GFI_OK);
    gfi_density_eval(p1, M, x, o1);
    gfi_density_eval(p2, M, x, o2);
    CHECK(memcmp(o1, o2, M * sizeof *o1) == 0, "Gauss: 1 and 2 threads differ");
    gfi_density_destroy(p1);
    gfi_density_destroy(p2);
    free(k);
    free(x);
    free(o1);
    free(o2);
  }

  /* 4. D = 64: products that a naive evaluation would underflow, against a
   * log-domain brute force. */
  {
    const size_t N = 40, D = 64, M = 5;
    double *k = malloc(N * D * sizeof *k), *x = malloc(M * D * sizeof *x), out[5], R[64];
    /* data clustered at 0, queries where |sinc| ~ 0.04 on every axis: each
     * term is ~1e-225, but sinc^4 multiplied over 64 axes alone is ~1e-350 */
    fill_normal(r, N * D, 1e-4, k);
    for (size_t a = 0; a < M * D; a++) x[a] = (7.5 * M_PI + 0.1 * (a % 5)) / 200;
    for (size_t j = 0; j < D; j++) R[j] = 200;
    gfi_kernel kern;
    gfi_kernel_pow(&kern, 4);
    gfi_density_plan *p;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, N, D, k, NULL, R, NULL), GFI_OK);
    CHECK_STATUS(gfi_density_eval(p, M, x, out), GFI_OK);
    for (size_t q = 0; q < M; q++) {
      /* log of each term, then log-sum-exp */
      double lt[40], mx = -INFINITY;
      for (size_t i = 0; i < N; i++) {
        double s = -log((double)N);
        for (size_t j = 0; j < D; j++) {
          double u = R[j] * (x[q * D + j] - k[i * D + j]);
          s += log(R[j] / kern.A) + 4 * log(fabs(sin(u) / u));
        }
        lt[i] = s;
        if (s > mx) mx = s;
      }
      double acc = 0;
      for (size_t i = 0; i < N; i++) acc += exp(lt[i] - mx);
      double logp = mx + log(acc);
      CHECK(out[q] > 0 && isfinite(out[q]), "D=64 value %g", out[q]);
      CHECK_CLOSE(log(out[q]), logp, 1e-12, 1e-10);
      /* the naive product of sinc^4 (without the folded scale) underflows here */
      if (q == 0) CHECK(mx - 64 * log(R[0] / kern.A) < -745, "test really exercises underflow (%g)", mx);
    }
    gfi_density_destroy(p);
    free(k);
    free(x);
  }

  /* 5. custom phi (A by quadrature) equals the built-in power */
  {
    const size_t N = 300, M = 20;
    double k[300], x[20], o1[20], o2[20], R = 2.5;
    fill_normal(r, N, 1, k);
    fill_normal(r, M, 1, x);
    gfi_kernel k4, kc;
    gfi_kernel_pow(&k4, 4);
    CHECK_STATUS(gfi_kernel_custom(&kc, custom_pow4, NULL), GFI_OK);
    gfi_density_plan *p1, *p2;
    CHECK_STATUS(gfi_density_plan_fourier(&p1, &k4, N, 1, k, NULL, &R, NULL), GFI_OK);
    CHECK_STATUS(gfi_density_plan_fourier(&p2, &kc, N, 1, k, NULL, &R, NULL), GFI_OK);
    gfi_density_eval(p1, M, x, o1);
    gfi_density_eval(p2, M, x, o2);
    for (size_t q = 0; q < M; q++) CHECK_CLOSE(o2[q], o1[q], 1e-9, 1e-15);
    gfi_density_destroy(p1);
    gfi_density_destroy(p2);
  }

  /* 6. Gaussian KDE against the direct formula, full and diagonal H, weights */
  {
    const size_t N = 400, M = 30, D = 2;
    double k[800], x[60], w[400], out[30];
    fill_normal(r, N * D, 1, k);
    fill_normal(r, M * D, 1.2, x);
    double ws = 0;
    for (size_t i = 0; i < N; i++) ws += (w[i] = gsl_rng_uniform_pos(r));
    double Hs[2][4] = {{0.09, 0.03, 0.03, 0.16}, {0.25, 0, 0, 0.04}};
    for (int h = 0; h < 2; h++)
      for (int weighted = 0; weighted < 2; weighted++) {
        double *H = Hs[h];
        double det = H[0] * H[3] - H[1] * H[2];
        double Hi[4] = {H[3] / det, -H[1] / det, -H[2] / det, H[0] / det};
        gfi_density_plan *p;
        CHECK_STATUS(gfi_density_plan_gauss(&p, N, D, k, weighted ? w : NULL, H, NULL), GFI_OK);
        CHECK_STATUS(gfi_density_eval(p, M, x, out), GFI_OK);
        for (size_t q = 0; q < M; q++) {
          double s = 0;
          for (size_t i = 0; i < N; i++) {
            double a = x[2 * q] - k[2 * i], b = x[2 * q + 1] - k[2 * i + 1];
            double quad = a * (Hi[0] * a + Hi[1] * b) + b * (Hi[2] * a + Hi[3] * b);
            double wi = weighted ? w[i] / ws : 1.0 / N;
            s += wi * exp(-0.5 * quad) / (2 * M_PI * sqrt(det));
          }
          CHECK_CLOSE(out[q], s, 1e-12, 1e-300);
        }
        gfi_density_destroy(p);
      }
    /* Scott's rule in 1-D: H = sd^2 N^(-2/5) with the unbiased sd */
    double H1;
    CHECK_STATUS(gfi_bandwidth_rule("scott", N, 1, k, NULL, &H1), GFI_OK);
    double m = 0, v = 0;
    for (size_t i = 0; i < N; i++) m += k[i] / N;
    for (size_t i = 0; i < N; i++) v += (k[i] - m) * (k[i] - m) / (N - 1);
    CHECK_CLOSE(H1, v * pow(N, -0.4), 1e-12, 0);
    CHECK_STATUS(gfi_bandwidth_rule("silverman", N, 1, k, NULL, &H1), GFI_OK);
    CHECK_CLOSE(H1, v * pow(N * 3 / 4.0, -0.4), 1e-12, 0);
    CHECK_STATUS(gfi_bandwidth_rule("bogus", N, 1, k, NULL, &H1), GFI_EINVAL);
    /* degenerate data: 100 identical points (the covariance is rounding
     * noise), points on a line in 2-D, a constant second axis */
    double same[100], line[200], flat[200], H2[4];
    for (int i = 0; i < 100; i++) {
      same[i] = 0.1 * 3; /* not exact in binary: the mean rounds */
      line[2 * i] = i, line[2 * i + 1] = 2.0 * i + 1;
      flat[2 * i] = sin(i), flat[2 * i + 1] = 7;
    }
    CHECK_STATUS(gfi_bandwidth_rule("scott", 100, 1, same, NULL, &H1), GFI_EBANDWIDTH);
    CHECK_STATUS(gfi_bandwidth_rule("silverman", 100, 1, same, NULL, &H1), GFI_EBANDWIDTH);
    CHECK_STATUS(gfi_bandwidth_rule("scott", 100, 2, line, NULL, H2), GFI_EBANDWIDTH);
    CHECK_STATUS(gfi_bandwidth_rule("silverman", 100, 2, flat, NULL, H2), GFI_EBANDWIDTH);
    for (int i = 0; i < 100; i++) line[2 * i + 1] += 0.01 * cos(3.0 * i); /* off the line: fine */
    CHECK_STATUS(gfi_bandwidth_rule("scott", 100, 2, line, NULL, H2), GFI_OK);
  }

  /* 7. every error status at the API boundary */
  {
    double k[4] = {0, 1, 2, 3}, R[2] = {1, 1}, q[2] = {0, 0}, out[1];
    gfi_kernel kern;
    gfi_kernel_pow(&kern, 4);
    gfi_density_plan *p = (gfi_density_plan *)1;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 0, 1, k, NULL, R, NULL), GFI_EEMPTY);
    CHECK(p == NULL, "plan NULL on error");
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 4, 0, k, NULL, R, NULL), GFI_EDIM);
    CHECK_STATUS(gfi_density_plan_fourier(NULL, &kern, 4, 1, k, NULL, R, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 4, 1, NULL, NULL, R, NULL), GFI_EINVAL);
    double Rbad[2] = {1, 0};
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 2, 2, k, NULL, Rbad, NULL), GFI_ERADIUS);
    Rbad[1] = NAN;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 2, 2, k, NULL, Rbad, NULL), GFI_ERADIUS);
    gfi_kernel bad = kern;
    bad.l = 9;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &bad, 4, 1, k, NULL, R, NULL), GFI_EORDER);
    gfi_kernel inf;
    gfi_kernel_custom(&inf, (gfi_phi_fn)0, NULL); /* rejected: stays uninitialised */
    CHECK_STATUS(gfi_kernel_custom(&inf, NULL, NULL), GFI_EINVAL);
    memset(&inf, 0, sizeof inf);
    inf.kind = GFI_PHI_CUSTOM;
    inf.fn = custom_pow4;
    inf.A = INFINITY;
    inf.A_finite = 0;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &inf, 4, 1, k, NULL, R, NULL), GFI_EINFINITE_A);
    double kn[4] = {0, NAN, 2, 3};
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 4, 1, kn, NULL, R, NULL), GFI_ENONFINITE);
    double wbad[4] = {1, -1, 0, 0};
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 4, 1, k, wbad, R, NULL), GFI_EWEIGHT);
    double big[64];
    for (int j = 0; j < 64; j++) big[j] = 1e6;
    double k64[64] = {0};
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 1, 64, k64, NULL, big, NULL), GFI_ERANGE);
    double far[2] = {1e16, 0}, R1 = 1;
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 2, 1, far, NULL, &R1, NULL), GFI_ERANGE);
    double Hbad[4] = {1, 2, 2, 1};
    CHECK_STATUS(gfi_density_plan_gauss(&p, 2, 2, k, NULL, Hbad, NULL), GFI_EBANDWIDTH);
    double Hasym[4] = {1, 0.5, 0, 1};
    CHECK_STATUS(gfi_density_plan_gauss(&p, 2, 2, k, NULL, Hasym, NULL), GFI_EBANDWIDTH);
    double Hok[4] = {1, 0, 0, 1};
    CHECK_STATUS(gfi_density_plan_gauss(&p, 0, 2, k, NULL, Hok, NULL), GFI_EEMPTY);
    CHECK_STATUS(gfi_density_plan_fourier(&p, &kern, 2, 2, k, NULL, R, NULL), GFI_OK);
    double qfar[2] = {0, 1e17};
    CHECK_STATUS(gfi_density_eval(p, 1, qfar, out), GFI_ERANGE);
    double qn[2] = {NAN, 0};
    CHECK_STATUS(gfi_density_eval(p, 1, qn, out), GFI_ENONFINITE);
    CHECK_STATUS(gfi_density_eval(p, 1, q, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_density_eval(NULL, 1, q, out), GFI_EINVAL);
    CHECK_STATUS(gfi_density_eval(p, 0, q, out), GFI_OK);
    CHECK(gfi_density_dim(p) == 2 && gfi_density_size(p) == 2, "accessors");
    gfi_density_destroy(p);
    gfi_density_destroy(NULL);
    for (int s = 0; s <= GFI_STATUS_COUNT; s++) CHECK(gfi_strerror(s) != NULL, "strerror");
    CHECK(strcmp(gfi_strerror(GFI_STATUS_COUNT), "unknown gfi status") == 0, "unknown");
  }
  gsl_rng_free(r);
  return check_summary("density");
}
