/* libFuzzer harness: model specifications (gfi_model_parse). The first byte
 * picks D = 1..3, the rest is the specification. A model that parses must
 * sample finite points and have a non-negative density, not NaN, at them
 * and at a few fixed points: the parse-time limits promise it. */
#include <math.h>
#include <stdio.h>
#include "gfi/gfi.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (n < 1) return 0;
  size_t D = 1 + data[0] % 3;
  char *spec = fuzz_string(data + 1, n - 1);
  if (!spec) return 0;
  gfi_model *m = NULL;
  gfi_errinfo err;
  int st = gfi_model_parse(&m, spec, D, &err);
  if (st == GFI_OK) {
    FUZZ_REQUIRE(m != NULL && gfi_model_dim(m) == D);
    FUZZ_REQUIRE(gfi_model_describe(m) != NULL);
    enum { NS = 8 };
    double x[NS * 3 + 3 * 3], p[NS + 3];
    gsl_rng *r = gfi_rng_stream(1, 0);
    FUZZ_REQUIRE(r != NULL);
    FUZZ_REQUIRE(gfi_model_sample(m, r, NS, x) == GFI_OK);
    for (size_t i = 0; i < NS * D; i++) FUZZ_REQUIRE(isfinite(x[i]));
    for (size_t i = 0; i < 3 * D; i++) x[NS * D + i] = (double)(i % 3) - 1.0;
    FUZZ_REQUIRE(gfi_model_pdf(m, NS + 3, x, p) == GFI_OK);
    /* +inf: a density unbounded at that point (beta with a shape < 1 at 0 or 1) */
    for (size_t i = 0; i < NS + 3; i++) FUZZ_REQUIRE(!isnan(p[i]) && p[i] >= 0);
    gsl_rng_free(r);
    gfi_model_free(m);
  } else {
    FUZZ_REQUIRE(m == NULL);
    FUZZ_REQUIRE(memchr(err.msg, '\0', sizeof err.msg) != NULL);
  }
  free(spec);
  return 0;
}
