/* Nadaraya-Watson estimators against brute-force sums (a sin call per factor,
 * long double, log domain for large D), the three evaluation paths against
 * each other, flagged rows (each rule), custom phi with infinite A, the
 * Gaussian baseline, thread-count determinism and every error status. */
#include <string.h>
#include <gsl/gsl_errno.h>
#include "check.h"
#include "gfi/gfi.h"

static void fill_normal(gsl_rng *r, size_t n, double sd, double *x) {
  for (size_t i = 0; i < n; i++) {
    double u1 = gsl_rng_uniform_pos(r), u2 = gsl_rng_uniform(r);
    x[i] = sd * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
  }
}

typedef double (*phi_fn)(double, void *);

/* Brute force in the log domain (long double): log|K_i| and sign, then sums
 * relative to the largest term. Writes f[V]; returns S/A (the cancellation
 * ratio) and sets *scale = sum_i |K_i| |y_i| / |S| + |f| (error scale of f),
 * *empty when every K_i is 0. phi NULL: z^l. */
static double brute(int l, phi_fn phi, size_t N, size_t D, size_t V, const double *k,
                    const double *y, const double *R, const double *x, double *f, double *scale,
                    int *empty) {
  long double *lg = malloc(N * sizeof *lg), mx = -INFINITY;
  int *sg = malloc(N * sizeof *sg);
  for (size_t i = 0; i < N; i++) {
    long double s = 0;
    int sign = 1;
    for (size_t j = 0; j < D && sign; j++) {
      long double u = (long double)R[j] * ((long double)x[j] - (long double)k[i * D + j]);
      long double sc = u == 0 ? 1.0L : sinl(u) / u;
      long double v = phi ? (long double)phi((double)sc, NULL) : powl(sc, l);
      if (v == 0) sign = 0;
      else {
        if (v < 0) sign = -sign;
        s += logl(fabsl(v));
      }
    }
    lg[i] = s;
    sg[i] = sign;
    if (sign && s > mx) mx = s;
  }
  long double S = 0, A = 0, num[8] = {0}, ay[8] = {0};
  for (size_t i = 0; i < N; i++) {
    if (!sg[i]) continue;
    long double t = sg[i] * expl(lg[i] - mx);
    S += t;
    A += fabsl(t);
    for (size_t v = 0; v < V; v++) {
      num[v] += t * y[i * V + v];
      ay[v] += fabsl(t * y[i * V + v]);
    }
  }
  *empty = A == 0;
  double sc = 0;
  for (size_t v = 0; v < V; v++) {
    f[v] = (double)(num[v] / S);
    double e = (double)(ay[v] / fabsl(S)) + fabs(f[v]);
    if (e > sc) sc = e;
  }
  *scale = sc;
  free(lg);
  free(sg);
  return A > 0 ? (double)(S / A) : NAN;
}

/* Compare an evaluation (out, flags) with brute force at every query: valid
 * rows to 1e-12 of their error scale, flags as the rules say (rows whose S/A
 * is within 1% of the tolerance are not judged). Returns the worst error. */
static double compare(const char *what, int l, phi_fn phi, size_t N, size_t D, size_t V,
                      const double *k, const double *y, const double *R, size_t M, const double *x,
                      const double *out, const unsigned char *flags, double tol) {
  double worst = 0, f[8], sc;
  int empty, badflag = 0;
  for (size_t q = 0; q < M; q++) {
    double ratio = brute(l, phi, N, D, V, k, y, R, x + q * D, f, &sc, &empty);
    int want = empty ? GFI_NW_FLAG_EMPTY
                     : ratio < 0 ? GFI_NW_FLAG_NEGATIVE : ratio <= tol ? GFI_NW_FLAG_SMALL : 0;
    if (!empty && fabs(ratio - tol) < 0.01 * tol) continue;
    if (!empty && fabs(ratio) < 1e-10) continue; /* sign of S decided by rounding */
    if (flags[q] != want) {
      if (badflag++ < 3)
        fprintf(stderr, "%s: query %zu flag %d, brute force says %d (S/A = %g)\n", what, q, flags[q],
                want, ratio);
      continue;
    }
    if (want) {
      CHECK(isnan(out[q * V]), "%s: flagged row %zu not NaN", what, q);
      continue;
    }
    for (size_t v = 0; v < V; v++) {
      double e = fabs(out[q * V + v] - f[v]) / sc;
      if (!(e <= worst)) worst = e;
    }
  }
  CHECK(badflag == 0, "%s: %d rows flagged differently from brute force", what, badflag);
  return worst;
}

static double relu(double z, void *c) {
  (void)c;
  return z > 0 ? z : 0;
}
static double absz(double z, void *c) {
  (void)c;
  return fabs(z);
}
static double sign_phi(double z, void *c) {
  (void)c;
  return z > 0.5 ? 1.0 : -1.0;
}
static double pow4(double z, void *c) {
  (void)c;
  return z * z * z * z;
}

static void check_brute(gsl_rng *r, size_t D, size_t N, size_t M, size_t V, double xsd) {
  double *k = malloc(N * D * sizeof *k), *x = malloc(M * D * sizeof *x), *y = malloc(N * V * sizeof *y);
  double *out = malloc(M * V * sizeof *out), R[8];
  unsigned char *fl = malloc(M);
  fill_normal(r, N * D, 1.0, k);
  fill_normal(r, M * D, xsd, x);
  for (size_t i = 0; i < N; i++)
    for (size_t v = 0; v < V; v++) y[i * V + v] = sin(k[i * D] * (v + 1)) + 0.3 * v + 2;
  for (size_t j = 0; j < D; j++) {
    x[j] = k[j];               /* a query on a data point */
    x[D + j] = k[D + j] + 1e-9; /* and next to one (series branch) */
  }
  for (size_t j = 0; j < D; j++) R[j] = 0.8 + 0.7 * j;
  for (int l = 1; l <= 8; l++)
    for (int mode = 0; mode < 3; mode++) {
      gfi_kernel kern;
      gfi_kernel_pow(&kern, l);
      gfi_nw_plan *p;
      CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, N, D, V, k, y, R, NULL), GFI_OK);
      CHECK_STATUS(gfi_nw_set_scaling(p, mode), GFI_OK);
      size_t nf;
      int st = gfi_nw_eval_flags(p, M, x, out, &nf, fl, NULL);
      CHECK(st == GFI_OK || (st == GFI_EDENOM && nf > 0), "status %d", st);
      if (l % 2 == 0) CHECK(nf == 0, "even l flagged %zu rows", nf);
      char what[64];
      snprintf(what, sizeof what, "D=%zu N=%zu V=%zu l=%d mode=%d", D, N, V, l, mode);
      double worst = compare(what, l, NULL, N, D, V, k, y, R, M, x, out, fl, GFI_NW_DENOM_TOL);
      CHECK(worst <= 1e-12, "%s: relative error %.3g", what, worst);
      gfi_nw_destroy(p);
    }
  /* custom phi with A = infinity (ReLU, |z|) and z^4 through the custom path */
  phi_fn fns[3] = {relu, absz, pow4};
  for (int c = 0; c < 3; c++) {
    gfi_kernel kern;
    int st = gfi_kernel_custom(&kern, fns[c], NULL);
    CHECK(st == GFI_OK || st == GFI_EINFINITE_A, "custom kernel %d: %d", c, st);
    if (c < 2) CHECK(!kern.A_finite, "phi %d has A = infinity", c);
    gfi_nw_plan *p;
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, N, D, V, k, y, R, NULL), GFI_OK);
    size_t nf;
    gfi_nw_eval_flags(p, M, x, out, &nf, fl, NULL);
    char what[64];
    snprintf(what, sizeof what, "D=%zu custom phi %d", D, c);
    double worst = compare(what, 0, fns[c], N, D, V, k, y, R, M, x, out, fl, GFI_NW_DENOM_TOL);
    CHECK(worst <= 1e-12, "%s: relative error %.3g", what, worst);
    gfi_nw_destroy(p);
  }
  free(k);
  free(x);
  free(y);
  free(out);
  free(fl);
}

int main(void) {
  gsl_set_error_handler_off();
  gsl_rng *r = gfi_rng_stream(77, 0);

  /* 1. brute force: D = 1, 2, 5, V = 1 and 3, every l, all paths, N not a
   * multiple of the block; queries inside and far outside the data */
  check_brute(r, 1, 700, 120, 1, 1.5);
  check_brute(r, 2, 517, 100, 3, 1.3);
  check_brute(r, 5, 333, 60, 2, 1.0);
  check_brute(r, 2, 300, 40, 1, 6.0);

  /* 2. D = 128: products far below the double range; the ratio must still
   * be right (log-domain long double brute force). The plain path alone
   * underflows to an empty row, which the automatic path repairs. */
  {
    const size_t N = 60, D = 128, M = 6, V = 2;
    double *k = malloc(N * D * sizeof *k), *x = malloc(M * D * sizeof *x), y[120], out[12], R[128];
    unsigned char fl[6];
    fill_normal(r, N * D, 1.0, k);
    fill_normal(r, M * D, 1.0, x);
    for (size_t i = 0; i < N * V; i++) y[i] = gsl_rng_uniform(r) * 10 - 5;
    for (size_t j = 0; j < D; j++) R[j] = 4.0 + 0.01 * j;
    for (int l = 1; l <= 8; l++) {
      gfi_kernel kern;
      gfi_kernel_pow(&kern, l);
      gfi_nw_plan *p;
      CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, N, D, V, k, y, R, NULL), GFI_OK);
      for (int mode = 0; mode < 3; mode += 2) {
        gfi_nw_set_scaling(p, mode);
        size_t nf;
        gfi_nw_eval_flags(p, M, x, out, &nf, fl, NULL);
        char what[64];
        snprintf(what, sizeof what, "D=128 l=%d mode=%d", l, mode);
        double worst = compare(what, l, NULL, N, D, V, k, y, R, M, x, out, fl, GFI_NW_DENOM_TOL);
        CHECK(worst <= 1e-12, "%s: relative error %.3g", what, worst);
        if (l % 2 == 0) CHECK(nf == 0, "%s: %zu rows flagged", what, nf);
      }
      if (l == 4) {
        /* the terms really are out of range: the plain path sees only zeros */
        double f[2], sc;
        int empty;
        brute(4, NULL, N, D, V, k, y, R, x, f, &sc, &empty);
        gfi_nw_set_scaling(p, GFI_NW_SCALE_PLAIN);
        size_t nf;
        CHECK_STATUS(gfi_nw_eval_flags(p, M, x, out, &nf, fl, NULL), GFI_EDENOM);
        CHECK(nf == M && fl[0] == GFI_NW_FLAG_EMPTY, "plain path at D = 128 underflows (%zu)", nf);
      }
      gfi_nw_destroy(p);
    }
    free(k);
    free(x);
  }

  /* 3. flags, one case each */
  {
    double k0[1] = {0}, y0[1] = {3}, R = 1, q[3] = {4.0, 0.5, 10.0}, out[3], den[3];
    unsigned char fl[3];
    size_t nf;
    gfi_kernel relu_k, l1;
    gfi_kernel_custom(&relu_k, relu, NULL);
    gfi_kernel_pow(&l1, 1);
    gfi_nw_plan *p;
    /* EMPTY: ReLU(sinc(4)) = 0 for the only data point */
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &relu_k, 1, 1, 1, k0, y0, &R, NULL), GFI_OK);
    CHECK_STATUS(gfi_nw_eval_flags(p, 3, q, out, &nf, fl, den), GFI_EDENOM);
    CHECK(nf == 2 && fl[0] == GFI_NW_FLAG_EMPTY && fl[1] == 0 && fl[2] == GFI_NW_FLAG_EMPTY,
          "empty: nf %zu flags %d %d %d", nf, fl[0], fl[1], fl[2]);
    CHECK(isnan(out[0]) && out[1] == 3 && isnan(den[0]) && den[1] == 1, "empty rows: %g %g", out[0], out[1]);
    gfi_nw_destroy(p);
    /* NEGATIVE: l = 1, sinc(4) < 0 */
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &l1, 1, 1, 1, k0, y0, &R, NULL), GFI_OK);
    q[2] = 7.0; /* sinc(7) > 0 */
    CHECK_STATUS(gfi_nw_eval_flags(p, 3, q, out, &nf, fl, den), GFI_EDENOM);
    CHECK(nf == 1 && fl[0] == GFI_NW_FLAG_NEGATIVE && fl[1] == 0 && fl[2] == 0, "negative: %d %d %d", fl[0],
          fl[1], fl[2]);
    CHECK(den[0] == -1 && isnan(out[0]) && fabs(out[2] - 3) < 1e-15, "negative rows");
    gfi_nw_destroy(p);
    /* SMALL: one point at 0 (weight 1) and four at b with sinc(b) = -0.2:
     * S = 0.2, A = 1.8, S/A = 1/9; flagged for tol 0.2, not for 0.1 */
    double lo = M_PI, hi = 4.4934;
    for (int it = 0; it < 200; it++) {
      double mid = 0.5 * (lo + hi);
      if (sin(mid) / mid > -0.2) lo = mid; else hi = mid;
    }
    double k5[5] = {0, lo, lo, lo, lo}, y5[5] = {1, 2, 2, 2, 2}, qz[1] = {0};
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &l1, 5, 1, 1, k5, y5, &R, NULL), GFI_OK);
    CHECK_STATUS(gfi_nw_set_denom_tol(p, 0.1), GFI_OK);
    CHECK_STATUS(gfi_nw_eval_flags(p, 1, qz, out, &nf, fl, den), GFI_OK);
    CHECK(nf == 0 && fabs(den[0] - 1.0 / 9) < 1e-12, "S/A = %g", den[0]);
    CHECK(fabs(out[0] - (1 - 0.8 * 2) / 0.2) < 1e-9, "cancelling ratio %g", out[0]);
    CHECK_STATUS(gfi_nw_set_denom_tol(p, 0.2), GFI_OK);
    CHECK_STATUS(gfi_nw_eval(p, 1, qz, out, &nf), GFI_EDENOM);
    CHECK(nf == 1 && isnan(out[0]), "small");
    gfi_nw_eval_flags(p, 1, qz, out, &nf, fl, NULL);
    CHECK(fl[0] == GFI_NW_FLAG_SMALL, "flag small %d", fl[0]);
    gfi_nw_destroy(p);
    /* S == 0 exactly (weights +1 and -1) is SMALL even at tol = 0 */
    gfi_kernel sg;
    gfi_kernel_custom(&sg, sign_phi, NULL);
    double k2[2] = {0, 3}, y2[2] = {1, 5};
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &sg, 2, 1, 1, k2, y2, &R, NULL), GFI_OK);
    CHECK_STATUS(gfi_nw_set_denom_tol(p, 0), GFI_OK);
    CHECK_STATUS(gfi_nw_eval_flags(p, 1, qz, out, &nf, fl, den), GFI_EDENOM);
    CHECK(fl[0] == GFI_NW_FLAG_SMALL && den[0] == 0 && isnan(out[0]), "S = 0: flag %d", fl[0]);
    gfi_nw_destroy(p);
    CHECK_STATUS(gfi_nw_set_denom_tol(NULL, 0.1), GFI_EINVAL);
  }

  /* 4. Gaussian NW against the direct formula (full and diagonal H), and a
   * query far from all data (every kernel value underflows in a naive sum) */
  {
    const size_t N = 400, M = 30, D = 2, V = 2;
    double k[800], x[60], y[800], out[60];
    fill_normal(r, N * D, 1, k);
    fill_normal(r, M * D, 1.2, x);
    for (size_t i = 0; i < N; i++) {
      y[2 * i] = k[2 * i] * k[2 * i + 1];
      y[2 * i + 1] = cos(k[2 * i]);
    }
    x[0] = 40;
    x[1] = -35;
    double Hs[2][4] = {{0.09, 0.03, 0.03, 0.16}, {0.25, 0, 0, 0.04}};
    for (int h = 0; h < 2; h++) {
      double *H = Hs[h];
      double det = H[0] * H[3] - H[1] * H[2];
      double Hi[4] = {H[3] / det, -H[1] / det, -H[2] / det, H[0] / det};
      gfi_nw_plan *p;
      CHECK_STATUS(gfi_nw_plan_gauss(&p, N, D, V, k, y, H, NULL), GFI_OK);
      size_t nf;
      CHECK_STATUS(gfi_nw_eval(p, M, x, out, &nf), GFI_OK);
      for (size_t q = 0; q < M; q++) {
        long double qd[400], mn = INFINITY;
        for (size_t i = 0; i < N; i++) {
          double a = x[2 * q] - k[2 * i], b = x[2 * q + 1] - k[2 * i + 1];
          qd[i] = a * (Hi[0] * a + Hi[1] * b) + b * (Hi[2] * a + Hi[3] * b);
          if (qd[i] < mn) mn = qd[i];
        }
        long double s = 0, n0 = 0, n1 = 0;
        for (size_t i = 0; i < N; i++) {
          long double w = expl(-0.5L * (qd[i] - mn));
          s += w;
          n0 += w * y[2 * i];
          n1 += w * y[2 * i + 1];
        }
        CHECK_CLOSE(out[2 * q], (double)(n0 / s), 1e-12, 1e-13);
        CHECK_CLOSE(out[2 * q + 1], (double)(n1 / s), 1e-12, 1e-13);
      }
      gfi_nw_destroy(p);
    }
  }

  /* 5. same bits for 1 and 2 threads (several super-chunks), every path */
  {
    const size_t N = 50001, M = 203, D = 3, V = 2;
    double *k = malloc(N * D * sizeof *k), *y = malloc(N * V * sizeof *y), *x = malloc(M * D * sizeof *x);
    double *o1 = malloc(M * V * sizeof *o1), *o2 = malloc(M * V * sizeof *o2), R[3] = {2, 3, 1};
    double H[9] = {0.1, 0.02, 0, 0.02, 0.2, 0.01, 0, 0.01, 0.3};
    fill_normal(r, N * D, 1.0, k);
    fill_normal(r, N * V, 1.0, y);
    fill_normal(r, M * D, 1.5, x);
    gfi_opts o;
    gfi_default_opts(&o);
    for (int c = 0; c < 4; c++) {
      gfi_kernel kern;
      gfi_kernel_pow(&kern, c == 3 ? 3 : 4);
      gfi_nw_plan *p1, *p2;
      o.nthreads = 1;
      if (c == 2) {
        CHECK_STATUS(gfi_nw_plan_gauss(&p1, N, D, V, k, y, H, &o), GFI_OK);
        o.nthreads = 2;
        CHECK_STATUS(gfi_nw_plan_gauss(&p2, N, D, V, k, y, H, &o), GFI_OK);
      } else {
        CHECK_STATUS(gfi_nw_plan_fourier(&p1, &kern, N, D, V, k, y, R, &o), GFI_OK);
        o.nthreads = 2;
        CHECK_STATUS(gfi_nw_plan_fourier(&p2, &kern, N, D, V, k, y, R, &o), GFI_OK);
        gfi_nw_set_scaling(p1, c == 1 ? GFI_NW_SCALE_ALWAYS : GFI_NW_SCALE_AUTO);
        gfi_nw_set_scaling(p2, c == 1 ? GFI_NW_SCALE_ALWAYS : GFI_NW_SCALE_AUTO);
      }
      size_t n1, n2;
      gfi_nw_eval(p1, M, x, o1, &n1);
      gfi_nw_eval(p2, M, x, o2, &n2);
      CHECK(memcmp(o1, o2, M * V * sizeof *o1) == 0 && n1 == n2, "case %d: 1 and 2 threads differ", c);
      gfi_nw_destroy(p1);
      gfi_nw_destroy(p2);
    }
    free(k);
    free(y);
    free(x);
    free(o1);
    free(o2);
  }

  /* 6. every error status at the API boundary */
  {
    double k[4] = {0, 1, 2, 3}, y[4] = {1, 2, 3, 4}, R[2] = {1, 1}, q[2] = {0, 0}, out[2];
    gfi_kernel kern;
    gfi_kernel_pow(&kern, 4);
    gfi_nw_plan *p = (gfi_nw_plan *)1;
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 0, 1, 1, k, y, R, NULL), GFI_EEMPTY);
    CHECK(p == NULL, "plan NULL on error");
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 0, 1, k, y, R, NULL), GFI_EDIM);
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 1, 0, k, y, R, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_plan_fourier(NULL, &kern, 4, 1, 1, k, y, R, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_plan_fourier(&p, NULL, 4, 1, 1, k, y, R, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 1, 1, NULL, y, R, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 1, 1, k, NULL, R, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 1, 1, k, y, NULL, NULL), GFI_EINVAL);
    double Rbad[2] = {1, 0};
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 2, 2, 1, k, y, Rbad, NULL), GFI_ERADIUS);
    gfi_kernel bad = kern;
    bad.l = 0;
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &bad, 4, 1, 1, k, y, R, NULL), GFI_EORDER);
    double kn[4] = {0, NAN, 2, 3};
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 1, 1, kn, y, R, NULL), GFI_ENONFINITE);
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 1, 1, k, kn, R, NULL), GFI_ENONFINITE);
    double kbig[4] = {0, 1, 2, 1e17};
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 4, 1, 1, kbig, y, R, NULL), GFI_ERANGE);
    double Hbad[4] = {1, 2, 2, 1}, Hok[4] = {1, 0, 0, 1};
    CHECK_STATUS(gfi_nw_plan_gauss(&p, 2, 2, 1, k, y, Hbad, NULL), GFI_EBANDWIDTH);
    CHECK_STATUS(gfi_nw_plan_gauss(&p, 2, 2, 1, k, y, NULL, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_plan_gauss(&p, 0, 2, 1, k, y, Hok, NULL), GFI_EEMPTY);
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &kern, 2, 2, 2, k, y, R, NULL), GFI_OK);
    CHECK(gfi_nw_dim(p) == 2 && gfi_nw_size(p) == 2 && gfi_nw_nresp(p) == 2, "accessors");
    double qn[2] = {NAN, 0};
    CHECK_STATUS(gfi_nw_eval(p, 1, qn, out, NULL), GFI_ENONFINITE);
    CHECK_STATUS(gfi_nw_eval(p, 1, q, NULL, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_eval(NULL, 1, q, out, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_eval(p, 0, q, out, NULL), GFI_OK);
    CHECK_STATUS(gfi_nw_eval(p, 1, q, out, NULL), GFI_OK);
    double qbig[2] = {1e16, 0};
    CHECK_STATUS(gfi_nw_eval(p, 1, qbig, out, NULL), GFI_ERANGE);
    CHECK_STATUS(gfi_nw_set_scaling(p, 7), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_set_denom_tol(p, 1.0), GFI_EINVAL);
    CHECK_STATUS(gfi_nw_set_denom_tol(p, NAN), GFI_EINVAL);
    gfi_nw_destroy(p);
    gfi_nw_destroy(NULL);
  }
  gsl_rng_free(r);
  return check_summary("regression");
}
