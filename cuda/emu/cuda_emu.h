/* gfi's CPU emulator of the CUDA execution model, for testing libgfi_cuda's
 * kernels on machines without a GPU (docs/cuda.md, "The emulator").
 *
 * The same .cu sources are compiled by the host C++ compiler with
 * GFI_CUDA_EMU defined; this header then stands in for <cuda_runtime.h>:
 *
 *  - A grid runs block after block on the calling thread. The threads of a
 *    block are fibers (ucontext) that run until they reach a barrier: a block
 *    barrier (__syncthreads) or a warp barrier (__syncwarp and every
 *    __shfl*_sync, which exchange through a per-warp buffer between two warp
 *    barriers). Fibers run in increasing thread order in even blocks and in
 *    decreasing order in odd ones, so that a missing barrier between a write
 *    and a read by another thread changes the result in one order or the other.
 *  - Faults a GPU would show as wrong numbers, hangs or crashes are reported
 *    (stderr) and fail the launch with cudaErrorLaunchFailure: a host pointer
 *    passed to a kernel, divergent barriers (deadlock), a warp operation whose
 *    mask names an exited lane, dynamic shared memory over the limit without
 *    cudaFuncSetAttribute, a launch shape CUDA refuses.
 *  - Device memory is host memory registered by cudaMalloc and filled with
 *    0xff bytes (NaN for floats and doubles), as is dynamic shared memory at
 *    the start of every block, so that reading what was never written shows.
 *    cudaMemcpy checks its direction and that the device range lies inside
 *    one allocation; gfi_cuda_emu_live_bytes() tells what is still allocated.
 *  - Operations on streams run at once, in order (the emulator does not model
 *    asynchrony or timing). Device math is the host's libm; __fdividef is a
 *    multiplication by the rounded reciprocal, as on the device, but the
 *    device's approximate reciprocal is not reproduced bit for bit.
 *
 * The runtime part is C (tests written in C use it); the execution model is
 * C++17. */
#ifndef GFI_CUDA_EMU_H
#define GFI_CUDA_EMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorLaunchFailure = 719
} cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};

struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
};
typedef struct cudaPointerAttributes cudaPointerAttributes;

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int major;
  int minor;
  int multiProcessorCount;
};
typedef struct cudaDeviceProp cudaDeviceProp;

enum cudaDeviceAttr { cudaDevAttrClockRate = 13 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

typedef struct gfi_emu_stream *cudaStream_t;

cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t s);
cudaError_t cudaMemset(void *p, int v, size_t n);
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s);
cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDevice(int *d);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d);
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *p);

/* Emulator only: bytes still allocated by cudaMalloc, and the number of
 * faults reported since the start (both for tests). GFI_CUDA_EMU_DEVICES=0 in
 * the environment makes cudaGetDeviceCount report no device. */
size_t gfi_cuda_emu_live_bytes(void);
size_t gfi_cuda_emu_faults(void);

#ifdef __cplusplus
} /* extern "C" */

#include <math.h>
#include <string.h>
#include <tuple>
#include <type_traits>
#include <utility>

template <class T> static inline cudaError_t cudaMalloc(T **p, size_t n) {
  return cudaMalloc((void **)p, n);
}

/* ------------------------------------------------ language extensions */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
/* Blocks run one after the other on one host thread: a block's static shared
 * arrays can be function statics. */
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct uint4 {
  unsigned x, y, z, w;
};

namespace gfi_emu {
extern uint3 thread_idx, block_idx;
extern dim3 block_dim, grid_dim;

void syncthreads();
void syncwarp(unsigned mask);
int lane_id();
/* Per-warp exchange: publish 8 bytes, read lane src's after a warp barrier. */
uint64_t exchange(unsigned mask, uint64_t v, int src);
unsigned char *dyn_shared();
void fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct launch_cfg {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  const void *fn;
  const char *name;
};
/* Run body(ctx) as every thread of every block; sets the last error. */
void run(const launch_cfg &c, void (*body)(void *), void *ctx);
/* 1 when p is NULL or inside a device allocation; else reports a fault. */
int check_pointer(const void *p, int arg, const char *kernel);
void set_max_dyn_smem(const void *fn, int bytes);
void set_last_error(cudaError_t e);

template <class T> static int check_arg(const T &v, int arg, const char *kernel) {
  if constexpr (std::is_pointer<T>::value)
    return check_pointer((const void *)v, arg, kernel);
  else
    return 1;
}

template <class... P> struct launcher {
  void (*k)(P...);
  launch_cfg c;
  template <class... A> void operator()(A &&...a) const {
    static_assert(sizeof...(A) == sizeof...(P), "kernel argument count");
    std::tuple<typename std::decay<P>::type...> args(std::forward<A>(a)...);
    int ok = 1, i = 0;
    std::apply([&](auto &...x) { ((ok &= check_arg(x, i++, c.name)), ...); }, args);
    if (!ok) {
      set_last_error(cudaErrorLaunchFailure);
      return;
    }
    struct ctx_t {
      void (*k)(P...);
      decltype(args) *a;
    } ctx{k, &args};
    run(c, [](void *p) {
      ctx_t *x = (ctx_t *)p;
      std::apply(x->k, *x->a);
    }, &ctx);
  }
};

template <class... P>
launcher<P...> make_launcher(void (*k)(P...), dim3 g, dim3 b, size_t smem, cudaStream_t s,
                             const char *name) {
  return launcher<P...>{k, launch_cfg{g, b, smem, s, (const void *)k, name}};
}
} /* namespace gfi_emu */

#define threadIdx gfi_emu::thread_idx
#define blockIdx gfi_emu::block_idx
#define blockDim gfi_emu::block_dim
#define gridDim gfi_emu::grid_dim

/* kernel<<<g, b, smem, stream>>>(args) is written
 * GFI_LAUNCH(g, b, smem, stream, kernel)(args) in gfi's sources. */
#define GFI_LAUNCH(g, b, smem, st, ...) \
  gfi_emu::make_launcher(__VA_ARGS__, g, b, smem, st, #__VA_ARGS__)
#define GFI_DYN_SHARED(name) unsigned char *name = gfi_emu::dyn_shared()

template <class... P>
static inline cudaError_t cudaFuncSetAttribute(void (*fn)(P...), enum cudaFuncAttribute a, int v) {
  if (a == cudaFuncAttributeMaxDynamicSharedMemorySize) gfi_emu::set_max_dyn_smem((const void *)fn, v);
  return cudaSuccess;
}

/* ------------------------------------------------------- intrinsics */
static inline void __syncthreads() { gfi_emu::syncthreads(); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { gfi_emu::syncwarp(mask); }

template <class T> static inline T gfi_emu_shfl(unsigned mask, T v, int src) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffle of a scalar");
  uint64_t w = 0;
  memcpy(&w, &v, sizeof v);
  w = gfi_emu::exchange(mask, w, src);
  T r;
  memcpy(&r, &w, sizeof r);
  return r;
}
template <class T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  int lane = gfi_emu::lane_id();
  return gfi_emu_shfl(mask, v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <class T> static inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
  int lane = gfi_emu::lane_id();
  int s = lane ^ m;
  if ((s & ~(width - 1)) != (lane & ~(width - 1))) s = lane;
  return gfi_emu_shfl(mask, v, s);
}
template <class T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
  int lane = gfi_emu::lane_id();
  int s = (lane % width) + (int)d < width ? lane + (int)d : lane;
  return gfi_emu_shfl(mask, v, s);
}
template <class T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
  int lane = gfi_emu::lane_id();
  int s = (lane % width) >= (int)d ? lane - (int)d : lane;
  return gfi_emu_shfl(mask, v, s);
}

/* Fibers never run at the same time: atomics are plain read-modify-writes. */
template <class T> static inline T atomicOr(T *p, T v) {
  T o = *p;
  *p = o | v;
  return o;
}
template <class T> static inline T atomicAnd(T *p, T v) {
  T o = *p;
  *p = o & v;
  return o;
}
template <class T> static inline T atomicAdd(T *p, T v) {
  T o = *p;
  *p = o + v;
  return o;
}
template <class T> static inline T atomicMax(T *p, T v) {
  T o = *p;
  if (v > o) *p = v;
  return o;
}
template <class T> static inline T atomicMin(T *p, T v) {
  T o = *p;
  if (v < o) *p = v;
  return o;
}

/* As the device computes it: a times the reciprocal of b (two roundings where
 * the hardware's reciprocal is approximate to ~1 ulp), and 0 for
 * 2^126 < |b| < 2^128 (CUDA C Programming Guide, intrinsic functions). */
static inline float __fdividef(float a, float b) {
  float ab = fabsf(b);
  if (ab > 0x1p126f && ab <= 0x1.fffffep127f) return 0.0f * a;
  return a * (1.0f / b);
}
/* sin(pi x), cos(pi x) with the argument reduced exactly first. */
static inline void sincospi(double x, double *s, double *c) {
  double r = x - 2.0 * rint(0.5 * x); /* exact: [-1, 1] */
  *s = sin(M_PI * r);
  *c = cos(M_PI * r);
}
static inline void sincospif(float x, float *s, float *c) {
  double sd, cd;
  sincospi((double)x, &sd, &cd);
  *s = (float)sd;
  *c = (float)cd;
}

#endif /* __cplusplus */
#endif
