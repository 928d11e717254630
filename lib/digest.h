/* The terms of gfi_digest (gfi/validate.h), shared by it and by the data
 * check's pass (estimators/engine.c), which computes the same digest on
 * the way: integer sums modulo 2^64, so any order of summation (blocks,
 * threads, vector lanes) gives the same bits. */
#ifndef GFI_DIGEST_H
#define GFI_DIGEST_H

#include <stdint.h>
#include <string.h>

/* The bits of a double. */
static inline uint64_t digest_bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* The second sum's term of a value b and its predecessor p: b XOR p with its
 * halves swapped (the predecessor's sign and exponent land in the low half). */
static inline uint64_t digest_pair(uint64_t b, uint64_t p) { return b ^ (p << 32 | p >> 32); }

#endif
