/* libFuzzer harness: RPE family and proposal specifications (gfi_rpe_parse,
 * gfi_proposal_parse). The first byte picks ell = 1..3; the input is
 * "RPE\nPROPOSAL" (no newline: the proposal is "gauss:tau=1"). */
#include <math.h>
#include <stdio.h>
#include "gfi/gfi.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (n < 1) return 0;
  size_t ell = 1 + data[0] % 3;
  char *s = fuzz_string(data + 1, n - 1);
  if (!s) return 0;
  char *nl = strchr(s, '\n');
  const char *prop = "gauss:tau=1";
  if (nl) {
    *nl = '\0';
    prop = nl + 1;
  }
  gfi_errinfo err;
  gfi_rpe *rpe = NULL;
  if (gfi_rpe_parse(&rpe, s, ell, &err) == GFI_OK) {
    FUZZ_REQUIRE(rpe != NULL && gfi_rpe_dim(rpe) == ell && gfi_rpe_describe(rpe) != NULL);
    double x[3] = {0.25, -0.5, 1}, re[1], im[1], g[1];
    FUZZ_REQUIRE(gfi_rpe_f(rpe, 1, x, re, im) == GFI_OK);
    FUZZ_REQUIRE(gfi_rpe_g(rpe, 1, x, g) == GFI_OK);
    gfi_proposal *p = NULL;
    if (gfi_proposal_parse(&p, prop, rpe, &err) == GFI_OK) {
      FUZZ_REQUIRE(p != NULL && gfi_proposal_dim(p) == ell && gfi_proposal_describe(p) != NULL);
      gsl_rng *r = gfi_rng_stream(1, 0);
      double xi[4 * 3], lp[4];
      FUZZ_REQUIRE(r && gfi_proposal_sample(p, r, 4, xi) == GFI_OK);
      FUZZ_REQUIRE(gfi_proposal_log_pdf(p, 4, xi, lp) == GFI_OK);
      gsl_rng_free(r);
      gfi_proposal_free(p);
    }
    gfi_rpe_free(rpe);
  } else {
    FUZZ_REQUIRE(rpe == NULL);
  }
  free(s);
  return 0;
}
