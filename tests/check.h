/* A tiny test harness: CHECK records a failure and goes on; main returns
 * check_summary(), which prints the counts and is non-zero on any failure.
 * A test program exits 77 (meson's "skipped") through CHECK_SKIP. */
#ifndef GFI_TEST_CHECK_H
#define GFI_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The power kernel phi(z) = z^l as a pointer for the calls that take a
 * kernel (gfi/kernel.h must be included first). l outside 1..8 gives a
 * kernel that the library refuses with GFI_EORDER. */
#define KPOW(pw_)                                                                            \
  (&(gfi_kernel){.kind = GFI_PHI_POW, .l = (pw_), .A = gfi_pow_A(pw_),                          \
                 .A_finite = (pw_) >= 1 && (pw_) <= 8, .coef = {0}})

/* CHECK_SANITIZED is 1 in a build with AddressSanitizer (gcc or clang):
 * there the slowest cases run at smaller sizes (the same code paths; the
 * full sizes run in the plain build), so that the sanitized pass of the
 * whole suite stays within CI's time. */
#if defined(__SANITIZE_ADDRESS__)
#define CHECK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHECK_SANITIZED 1
#endif
#endif
#ifndef CHECK_SANITIZED
#define CHECK_SANITIZED 0
#endif

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    check_count++;                                                           \
    if (!(cond)) {                                                           \
      check_failures++;                                                      \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                          \
      fputc('\n', stderr);                                                   \
    }                                                                        \
  } while (0)

/* |a - b| <= rtol * max(|a|, |b|) + atol */
#define CHECK_CLOSE(a, b, rtol, atol)                                        \
  do {                                                                       \
    double ca_ = (a), cb_ = (b);                                             \
    double m_ = fabs(ca_) > fabs(cb_) ? fabs(ca_) : fabs(cb_);               \
    CHECK(fabs(ca_ - cb_) <= (rtol) * m_ + (atol),                           \
          "%s = %.17g, %s = %.17g, diff %.3g", #a, ca_, #b, cb_,            \
          fabs(ca_ - cb_));                                                  \
  } while (0)

#define CHECK_STATUS(expr, want)                                             \
  do {                                                                       \
    int got_ = (expr);                                                       \
    CHECK(got_ == (want), "status %d (%s), expected %d", got_,               \
          gfi_strerror(got_), (int)(want));                                  \
  } while (0)

#define CHECK_SKIP(...)                                                      \
  do {                                                                       \
    fprintf(stdout, "SKIP: " __VA_ARGS__);                                   \
    fputc('\n', stdout);                                                     \
    exit(77);                                                                \
  } while (0)

/* Runs one test function and prints its wall time (where the time of a
 * slow test goes, in the test's log). */
#define CHECK_TIMED(fn_)                                                     \
  do {                                                                       \
    struct timespec t0_, t1_;                                                \
    timespec_get(&t0_, TIME_UTC);                                            \
    fn_();                                                                   \
    timespec_get(&t1_, TIME_UTC);                                            \
    printf("%-28s %8.2f s\n", #fn_,                                          \
           (double)(t1_.tv_sec - t0_.tv_sec) + 1e-9 * (double)(t1_.tv_nsec - t0_.tv_nsec)); \
    fflush(stdout);                                                          \
  } while (0)

static int check_summary(const char *name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures ? 1 : 0;
}

#endif
