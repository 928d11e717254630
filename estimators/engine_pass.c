/* The data passes of the sum engine: fixed blocks and the thread count
 * (engine_pass.h); their thread count is par_threads (par.h). In a file of their own so that bandlimited.c and
 * binned.c, which both pass over the data, need not call each other's. */
#include "engine_pass.h"

size_t bl_pass_block(size_t N) {
  size_t b = (N + PASS_BLOCKS - 1) / PASS_BLOCKS;
  return b < PASS_BLOCK_MIN ? PASS_BLOCK_MIN : b;
}
