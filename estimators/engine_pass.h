/* The data passes of the sum engine (bandlimited.c, binned.c): fixed blocks
 * of points and the thread count. Private to the estimators. */
#ifndef GFI_ENGINE_PASS_H
#define GFI_ENGINE_PASS_H

#include <stddef.h>

/* Points per block of a pass over N data points: at most PASS_BLOCKS blocks
 * and none below PASS_BLOCK_MIN points (a function of N only). Partial
 * results are combined in block order, so they are the same bits for any
 * thread count. */
#define PASS_BLOCK_MIN ((size_t)1 << 16)
#define PASS_BLOCKS ((size_t)16)
size_t bl_pass_block(size_t N);

#endif
