/* libFuzzer harness: text tables and .npy arrays read from a stream
 * (gfi_table_read_stream, gfi_npy_read_stream). The first byte picks the
 * reader and the expected column count (0 = any). What is read back must be
 * finite and of the shape reported. */
#include <math.h>
#include <stdio.h>
#include "gfi/gfi.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (n < 1) return 0;
  size_t cols = data[0] % 4;
  int npy = data[0] & 0x80;
  FILE *f = n > 1 ? fmemopen((void *)(data + 1), n - 1, "r") : fopen("/dev/null", "r");
  if (!f) return 0;
  size_t rows = 0, nc = 0;
  double *x = NULL;
  gfi_errinfo err;
  int st = npy ? gfi_npy_read_stream(f, cols, &rows, &nc, &x, &err)
               : gfi_table_read_stream(f, cols, &rows, &nc, &x, &err);
  fclose(f);
  if (st == GFI_OK) {
    FUZZ_REQUIRE(x != NULL);
    FUZZ_REQUIRE(cols == 0 || nc == cols);
    /* a text table's values are finite; an .npy array's are checked by the CLI */
    for (size_t i = 0; i < rows * nc; i++) FUZZ_REQUIRE(npy || isfinite(x[i]));
  } else {
    FUZZ_REQUIRE(x == NULL);
  }
  free(x);
  return 0;
}
