/* Direct O(N K) sums with the NUFFT conventions of nufft.h: the reference the
 * fast transforms are tested against. Each output is one sum in a fixed order
 * (threads split the outputs), so the bits do not depend on nthreads. */
#include <math.h>
#include <stdint.h>
#include "nufft.h"
#include "gfi/status.h"
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif

static int threads_of(int n) {
#ifdef GFI_HAVE_OPENMP
  return n > 0 ? n : omp_get_max_threads();
#else
  (void)n;
  return 1;
#endif
}

static int modes_total(int D, const size_t *ms, size_t *tot) {
  size_t t = 1;
  for (int d = 0; d < D; d++) {
    if (ms[d] == 0 || t > SIZE_MAX / ms[d]) return GFI_EINVAL;
    t *= ms[d];
  }
  *tot = t;
  return GFI_OK;
}

/* Mode index m (last axis fastest) -> frequencies k[D]. */
static void mode_of(int D, const size_t *ms, size_t m, double *k) {
  for (int d = D - 1; d >= 0; d--) {
    size_t i = m % ms[d];
    m /= ms[d];
    k[d] = (double)i - (double)(ms[d] / 2);
  }
}

int nufft3_direct(int D, size_t N, const double *x, const double *c, int sign, size_t K,
                  const double *s, double *f, int nthreads) {
  if (D < 1 || D > 3 || (sign != 1 && sign != -1) || (N && (!x || !c)) || (K && (!s || !f)))
    return GFI_EINVAL;
  int nt = threads_of(nthreads);
  (void)nt;
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
  for (size_t k = 0; k < K; k++) {
    double re = 0, im = 0;
    for (size_t j = 0; j < N; j++) {
      double ph = 0;
      for (int d = 0; d < D; d++) ph += s[k * (size_t)D + d] * x[j * (size_t)D + d];
      double sn = sin(ph) * sign, cs = cos(ph);
      re += c[2 * j] * cs - c[2 * j + 1] * sn;
      im += c[2 * j] * sn + c[2 * j + 1] * cs;
    }
    f[2 * k] = re;
    f[2 * k + 1] = im;
  }
  return GFI_OK;
}

int nufft1_direct(int D, size_t N, const double *x, const double *c, int sign, const size_t *ms,
                  double *f, int nthreads) {
  if (D < 1 || D > 3 || !ms || (sign != 1 && sign != -1) || (N && (!x || !c)) || !f)
    return GFI_EINVAL;
  size_t tot;
  int st = modes_total(D, ms, &tot);
  if (st) return st;
  int nt = threads_of(nthreads);
  (void)nt;
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
  for (size_t m = 0; m < tot; m++) {
    double k[3];
    mode_of(D, ms, m, k);
    double re = 0, im = 0;
    for (size_t j = 0; j < N; j++) {
      double ph = 0;
      for (int d = 0; d < D; d++) ph += k[d] * x[j * (size_t)D + d];
      double sn = sin(ph) * sign, cs = cos(ph);
      re += c[2 * j] * cs - c[2 * j + 1] * sn;
      im += c[2 * j] * sn + c[2 * j + 1] * cs;
    }
    f[2 * m] = re;
    f[2 * m + 1] = im;
  }
  return GFI_OK;
}

int nufft2_direct(int D, size_t N, const double *x, double *c, int sign, const size_t *ms,
                  const double *f, int nthreads) {
  if (D < 1 || D > 3 || !ms || (sign != 1 && sign != -1) || (N && (!x || !c)) || !f)
    return GFI_EINVAL;
  size_t tot;
  int st = modes_total(D, ms, &tot);
  if (st) return st;
  int nt = threads_of(nthreads);
  (void)nt;
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
  for (size_t j = 0; j < N; j++) {
    double re = 0, im = 0;
    for (size_t m = 0; m < tot; m++) {
      double k[3];
      mode_of(D, ms, m, k);
      double ph = 0;
      for (int d = 0; d < D; d++) ph += k[d] * x[j * (size_t)D + d];
      double sn = sin(ph) * sign, cs = cos(ph);
      re += f[2 * m] * cs - f[2 * m + 1] * sn;
      im += f[2 * m] * sn + f[2 * m + 1] * cs;
    }
    c[2 * j] = re;
    c[2 * j + 1] = im;
  }
  return GFI_OK;
}
