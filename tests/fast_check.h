/* Helpers shared by the fast-route tests (test_fast.c, test_fast_gauss.c): a
 * small deterministic generator (the tests need no model code), max norms and
 * the options of a route. Define FAST_CHECK_SEED (a nonzero 64-bit value)
 * before including it: each test has its own stream. */
#ifndef GFI_TEST_FAST_CHECK_H
#define GFI_TEST_FAST_CHECK_H

#include <math.h>
#include <stdint.h>
#include "gfi/gfi.h"

#ifndef FAST_CHECK_SEED
#error "define FAST_CHECK_SEED before including fast_check.h"
#endif

static uint64_t rs = FAST_CHECK_SEED;
static inline double urand(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (double)(rs >> 11) * 0x1p-53;
}
static inline double nrand(void) {
  double u1 = urand(), u2 = urand();
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static inline double max_abs(const double *v, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
  return m;
}
static inline double max_diff(const double *a, const double *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

static inline gfi_opts opts_of(gfi_method m, double tol, int nt) {
  gfi_opts o;
  gfi_default_opts(&o);
  o.method = m;
  o.tol = tol;
  o.nthreads = nt;
  return o;
}

#endif
