/* RNG streams: Philox known-answer vectors (Random123), stream separation,
 * reproducibility, uniformity. */
#include <string.h>
#include <gsl/gsl_randist.h>
#include "check.h"
#include "gfi/gfi.h"

int main(void) {
  /* Known-answer tests from Random123's kat_vectors for philox4x32_10. */
  {
    uint32_t ctr[4] = {0, 0, 0, 0}, key[2] = {0, 0}, out[4];
    gfi_philox4x32_10(ctr, key, out);
    CHECK(out[0] == 0x6627e8d5u && out[1] == 0xe169c58du && out[2] == 0xbc57ac4cu && out[3] == 0x9b00dbd8u,
          "KAT zero: %08x %08x %08x %08x", out[0], out[1], out[2], out[3]);
  }
  {
    uint32_t ctr[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
    uint32_t key[2] = {0xffffffffu, 0xffffffffu}, out[4];
    gfi_philox4x32_10(ctr, key, out);
    CHECK(out[0] == 0x408f276du && out[1] == 0x41c83b0eu && out[2] == 0xa20bc7c6u && out[3] == 0x6d5451fdu,
          "KAT ones: %08x %08x %08x %08x", out[0], out[1], out[2], out[3]);
  }
  {
    uint32_t ctr[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
    uint32_t key[2] = {0xa4093822u, 0x299f31d0u}, out[4];
    gfi_philox4x32_10(ctr, key, out);
    CHECK(out[0] == 0xd16cfe09u && out[1] == 0x94fdccebu && out[2] == 0x5001e420u && out[3] == 0x24126ea1u,
          "KAT pi: %08x %08x %08x %08x", out[0], out[1], out[2], out[3]);
  }
  /* Same (seed, stream): same sequence; different stream or seed: different. */
  gsl_rng *a = gfi_rng_stream(42, 7), *b = gfi_rng_stream(42, 7), *c = gfi_rng_stream(42, 8),
          *d = gfi_rng_stream(43, 7);
  CHECK(a && b && c && d, "allocation");
  int same_ab = 1, same_ac = 0, same_ad = 0;
  for (int i = 0; i < 1000; i++) {
    unsigned long x = gsl_rng_get(a), y = gsl_rng_get(b), z = gsl_rng_get(c), w = gsl_rng_get(d);
    same_ab &= (x == y);
    same_ac += (x == z);
    same_ad += (x == w);
  }
  CHECK(same_ab, "same stream reproduces");
  CHECK(same_ac < 3 && same_ad < 3, "streams differ (%d, %d coincidences)", same_ac, same_ad);
  /* reset returns to the start of the stream */
  CHECK_STATUS(gfi_rng_reset(a, 42, 7), GFI_OK);
  CHECK_STATUS(gfi_rng_reset(b, 42, 7), GFI_OK);
  CHECK(gsl_rng_uniform(a) == gsl_rng_uniform(b), "reset");
  gsl_rng *mt = gsl_rng_alloc(gsl_rng_mt19937);
  CHECK_STATUS(gfi_rng_reset(mt, 1, 1), GFI_EINVAL);
  gsl_rng_free(mt);
  CHECK(strcmp(gsl_rng_name(a), "gfi-philox4x32-10") == 0, "name");
  /* Uniform(0,1): mean 1/2 and variance 1/12 within 5 standard errors; in [0,1). */
  const int n = 400000;
  double s = 0, s2 = 0, mn = 1, mx = 0;
  for (int i = 0; i < n; i++) {
    double u = gsl_rng_uniform(c);
    s += u;
    s2 += u * u;
    if (u < mn) mn = u;
    if (u > mx) mx = u;
  }
  double mean = s / n, var = s2 / n - mean * mean;
  CHECK(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / n), "uniform mean %g", mean);
  CHECK(fabs(var - 1.0 / 12) < 5 * sqrt((1.0 / 80 - 1.0 / 144) / n), "uniform variance %g", var);
  CHECK(mn >= 0 && mx < 1, "range [%g, %g]", mn, mx);
  /* GSL samplers run on it: standard normal mean/variance. */
  s = s2 = 0;
  for (int i = 0; i < n; i++) {
    double g = gsl_ran_gaussian_ziggurat(d, 1.0);
    s += g;
    s2 += g * g;
  }
  mean = s / n;
  var = s2 / n - mean * mean;
  CHECK(fabs(mean) < 5 / sqrt((double)n), "normal mean %g", mean);
  CHECK(fabs(var - 1) < 5 * sqrt(2.0 / n), "normal variance %g", var);
  gsl_rng_free(a);
  gsl_rng_free(b);
  gsl_rng_free(c);
  gsl_rng_free(d);
  return check_summary("rng");
}
