/* The CUDA runtime as gfi's kernels see it: the real one under nvcc, the CPU
 * emulator (emu/cuda_emu.h) when the sources are compiled with GFI_CUDA_EMU.
 * Launches are written GFI_LAUNCH(grid, block, smem, stream, kernel)(args)
 * and dynamic shared memory GFI_DYN_SHARED(name), so that both compile. */
#ifndef GFI_CUDA_COMPAT_H
#define GFI_CUDA_COMPAT_H

#ifdef GFI_CUDA_EMU
#include "emu/cuda_emu.h"
#else
#include <cuda_runtime.h>
#define GFI_LAUNCH(g, b, smem, st, ...) __VA_ARGS__<<<g, b, smem, st>>>
#define GFI_DYN_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#endif

#endif
