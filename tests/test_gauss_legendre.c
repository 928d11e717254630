/* gl_rule (lib/gauss_legendre.h): the n-point Gauss-Legendre rule integrates
 * x^k exactly for k < 2n (checked for n <= 60 against 2 / (k + 1)), its
 * nodes increase and are symmetric, its weights are positive and sum to 2;
 * and the rules it keeps give the bits it computes: a second call, a call
 * after more than its 8 kept rules were replaced, and calls from threads at
 * once (each comparing with its own first result) all agree with the first
 * call, for counts on both sides of the 512 nodes it keeps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "gauss_legendre.h"

#define NMAX 700

static void test_rule(void) {
  double x[NMAX], w[NMAX];
  int bad_exact = 0, bad_shape = 0;
  for (size_t n = 1; n <= 600; n += n < 60 ? 1 : 37) {
    gl_rule(n, x, w);
    double sw = 0;
    for (size_t i = 0; i < n; i++) {
      sw += w[i];
      if (!(w[i] > 0) || (i && !(x[i] > x[i - 1])) || fabs(x[i] + x[n - 1 - i]) > 1e-15) bad_shape++;
    }
    if (fabs(sw - 2) > 1e-13) bad_shape++;
    if (n <= 60)
      for (size_t k = 0; k < 2 * n; k++) { /* sum w x^k against int_-1^1 x^k */
        long double s = 0;
        for (size_t i = 0; i < n; i++) s += (long double)w[i] * powl(x[i], (long double)k);
        const double want = k % 2 ? 0 : 2.0 / (double)(k + 1);
        if (fabs((double)s - want) > 1e-13) {
          bad_exact++;
          if (bad_exact < 5) fprintf(stderr, "n %zu k %zu: %.17g against %.17g\n", n, k, (double)s, want);
        }
      }
  }
  CHECK(bad_exact == 0, "%d moments off", bad_exact);
  CHECK(bad_shape == 0, "%d nodes or weights off", bad_shape);
}

/* x, w poisoned before a call, so that a value it leaves unwritten shows */
static void poison(double *x, double *w) {
  for (size_t i = 0; i < NMAX; i++) x[i] = w[i] = NAN;
}

/* the first result of every count, then kept copies against it */
static void test_kept(void) {
  static const size_t ns[] = {1, 2, 3, 7, 16, 33, 64, 101, 202, 300, 511, 512, 513, 700};
  const size_t K = sizeof ns / sizeof ns[0];
  double *x0 = malloc(K * NMAX * sizeof *x0), *w0 = malloc(K * NMAX * sizeof *w0);
  double x[NMAX], w[NMAX];
  int bad = 0;
  for (size_t r = 0; r < 3; r++) /* 14 counts cycle through the 8 kept rules */
    for (size_t k = 0; k < K; k++) {
      if (r == 0) {
        gl_rule(ns[k], x0 + k * NMAX, w0 + k * NMAX);
        continue;
      }
      poison(x, w);
      gl_rule(ns[k], x, w);
      if (memcmp(x, x0 + k * NMAX, ns[k] * sizeof *x) || memcmp(w, w0 + k * NMAX, ns[k] * sizeof *w)) bad++;
      poison(x, w);
      gl_rule(ns[k], x, w); /* just kept */
      if (memcmp(x, x0 + k * NMAX, ns[k] * sizeof *x) || memcmp(w, w0 + k * NMAX, ns[k] * sizeof *w)) bad++;
    }
  CHECK(bad == 0, "%d kept rules differ from computed ones", bad);
  int tbad = 0;
#pragma omp parallel for num_threads(4) reduction(+ : tbad) schedule(static, 1)
  for (int t = 0; t < 4; t++) {
    double xt[NMAX], wt[NMAX];
    for (size_t it = 0; it < 200; it++) {
      const size_t k = (it * 5 + (size_t)t * 3) % K;
      poison(xt, wt);
      gl_rule(ns[k], xt, wt);
      if (memcmp(xt, x0 + k * NMAX, ns[k] * sizeof *xt) || memcmp(wt, w0 + k * NMAX, ns[k] * sizeof *wt)) tbad++;
    }
  }
  CHECK(tbad == 0, "%d rules differ under threads", tbad);
  free(x0);
  free(w0);
}

int main(void) {
  CHECK_TIMED(test_rule);
  CHECK_TIMED(test_kept);
  return check_summary("gauss-legendre");
}
