/* gfi's port of cuRAND's Philox4_32_10 device API (gfi_cuda_math.h), used by
 * the CPU emulator and by tests/test_cuda_math.c to tie cuRAND's streams to
 * gfi_rng_stream, against cuRAND's own curand_kernel.h compiled for the host:
 * curand_init at many (seed, subsequence, offset), then curand and curand4
 * words, equal bit for bit. Built when the CUDA toolkit's headers are found. */
#include <curand_kernel.h>
#include <stdio.h>
#include "gfi_cuda_math.h"

static int fails = 0, checks = 0;

static void compare(unsigned long long seed, unsigned long long sub, unsigned long long off) {
  curandStatePhilox4_32_10_t a;
  gfi_cu_curand_ref b;
  /* curand() words */
  curand_init(seed, sub, off, &a);
  gfi_cu_curand_ref_init(&b, seed, sub, off);
  for (int i = 0; i < 37; i++) {
    unsigned x = curand(&a), y = gfi_cu_curand_ref_next(&b);
    checks++;
    if (x != y) {
      if (fails++ < 10)
        printf("FAIL curand seed %llu sub %llu off %llu word %d: %u vs %u\n", seed, sub, off, i, x, y);
      return;
    }
  }
  /* curand4 from the same start, then mixed with curand */
  curand_init(seed, sub, off, &a);
  gfi_cu_curand_ref_init(&b, seed, sub, off);
  for (int i = 0; i < 9; i++) {
    uint4 x = curand4(&a);
    gfi_cu_u32x4 y = gfi_cu_curand_ref_next4(&b);
    checks++;
    if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) {
      if (fails++ < 10)
        printf("FAIL curand4 seed %llu sub %llu off %llu block %d\n", seed, sub, off, i);
      return;
    }
    if (i % 3 == 1) {
      checks++;
      if (curand(&a) != gfi_cu_curand_ref_next(&b)) {
        if (fails++ < 10) printf("FAIL curand after curand4 seed %llu sub %llu off %llu\n", seed, sub, off);
        return;
      }
    }
  }
}

int main() {
  const unsigned long long seeds[] = {0, 1, 5, 2024, 0xffffffffull, 0x123456789abcdefull, ~0ull};
  const unsigned long long subs[] = {0, 1, 2, 3, 1000, 0xffffffffull, 1ull << 32, (1ull << 40) + 7, ~0ull};
  const unsigned long long offs[] = {0, 1, 2, 3, 4, 5, 8, 4 * 12345ull, 4 * 1000000007ull + 2,
                                     0xfffffffcull, 0xffffffffull, 1ull << 34, (1ull << 40) * 4 + 3,
                                     ~0ull - 3};
  for (unsigned long long s : seeds)
    for (unsigned long long q : subs)
      for (unsigned long long o : offs) compare(s, q, o);
  printf("curand-port: %d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}
