/* cuRAND's Philox4_32_10 device API for the CPU emulator: gfi's line-by-line
 * port (gfi_cuda_math.h), which tests/test_curand_port.cc checks word for
 * word against cuRAND's own header compiled for the host. */
#ifndef GFI_CURAND_EMU_H
#define GFI_CURAND_EMU_H

#include "cuda_emu.h"
#include "gfi_cuda_math.h"

typedef gfi_cu_curand_ref curandStatePhilox4_32_10_t;

static inline void curand_init(unsigned long long seed, unsigned long long subsequence,
                               unsigned long long offset, curandStatePhilox4_32_10_t *s) {
  gfi_cu_curand_ref_init(s, seed, subsequence, offset);
}
static inline unsigned curand(curandStatePhilox4_32_10_t *s) { return gfi_cu_curand_ref_next(s); }
static inline uint4 curand4(curandStatePhilox4_32_10_t *s) {
  gfi_cu_u32x4 w = gfi_cu_curand_ref_next4(s);
  return uint4{w.x, w.y, w.z, w.w};
}

#endif
