/* libFuzzer harness: regression truths and noise laws (gfi_regfun_parse,
 * gfi_noise_parse). The first byte picks D = 1..3 and which parser; a truth
 * that parses is evaluated at a few moderate points and must be finite. */
#include <math.h>
#include <stdio.h>
#include "gfi/gfi.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (n < 1) return 0;
  size_t D = 1 + data[0] % 3;
  char *spec = fuzz_string(data + 1, n - 1);
  if (!spec) return 0;
  gfi_errinfo err;
  if (data[0] & 0x80) {
    gfi_noise nz;
    if (gfi_noise_parse(&nz, spec, &err) == GFI_OK) {
      double x[3] = {0.5, -1, 2};
      double sd = gfi_noise_sd(&nz, x);
      FUZZ_REQUIRE(isfinite(sd) && sd >= 0);
      char buf[128];
      gfi_noise_describe(&nz, buf, sizeof buf);
    }
  } else {
    gfi_regfun *f = NULL;
    if (gfi_regfun_parse(&f, spec, D, &err) == GFI_OK) {
      FUZZ_REQUIRE(gfi_regfun_dim(f) == D && gfi_regfun_describe(f) != NULL);
      double x[9] = {0.5, -1, 0.25, 1, 0, -0.5, 0.125, 0.75, -0.25}, y[3];
      FUZZ_REQUIRE(gfi_regfun_eval(f, 3, x, y) == GFI_OK);
      for (int i = 0; i < 3; i++) FUZZ_REQUIRE(isfinite(y[i]));
      gfi_regfun_free(f);
    } else {
      FUZZ_REQUIRE(f == NULL);
    }
  }
  free(spec);
  return 0;
}
