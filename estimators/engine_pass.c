/* The data passes of the sum engine: fixed blocks and the thread count
 * (engine_pass.h). In a file of their own so that bandlimited.c and
 * binned.c, which both pass over the data, need not call each other's. */
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "engine_pass.h"

size_t bl_pass_block(size_t N) {
  size_t b = (N + PASS_BLOCKS - 1) / PASS_BLOCKS;
  return b < PASS_BLOCK_MIN ? PASS_BLOCK_MIN : b;
}

int bl_threads(int n) {
#ifdef GFI_HAVE_OPENMP
  return n > 0 ? n : omp_get_max_threads();
#else
  (void)n;
  return 1;
#endif
}
