/* The CPU emulator of the CUDA execution model (cuda/emu) checked on its own:
 * correct kernels give the right answers, and each kind of kernel bug the
 * emulator claims to expose does show: a missing __syncthreads changes the
 * result, divergent barriers and warp operations over exited lanes are
 * faults, host pointers never reach a kernel, shared-memory limits and launch
 * shapes are enforced, cudaMemcpy checks its direction and bounds, memory
 * never written reads as NaN. The faults print on stderr: expected here. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "emu/cuda_emu.h"
#include "check.h"

#define FULL 0xffffffffu

/* every thread of a 3-D grid of 3-D blocks writes its global index */
__global__ void k_ids(unsigned *out) {
  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  out[b * n + t] = b * n + t + 1;
}

/* block sum through shared memory; sync = 0 leaves the barriers out */
__global__ void k_blocksum(const double *x, double *out, int sync) {
  GFI_DYN_SHARED(smem);
  double *sh = (double *)smem;
  unsigned t = threadIdx.x;
  sh[t] = x[blockIdx.x * blockDim.x + t];
  if (sync) __syncthreads();
  for (unsigned o = blockDim.x / 2; o > 0; o >>= 1) {
    if (t < o) sh[t] += sh[t + o];
    if (sync) __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

/* neighbour exchange: a missing barrier reads what the neighbour has not
 * written yet (forward order) or ... (reverse order) */
__global__ void k_neighbour(double *out, int sync) {
  GFI_DYN_SHARED(smem);
  double *sh = (double *)smem;
  unsigned t = threadIdx.x, n = blockDim.x;
  sh[t] = t;
  if (sync) __syncthreads();
  out[blockIdx.x * n + t] = sh[(t + 1) % n];
}

/* warp sums by xor shuffles, a broadcast, a down-shift */
__global__ void k_warp(const double *x, double *sum, double *bcast, double *down) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  double v = x[t];
  double s = v;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
  sum[t] = s;
  bcast[t] = __shfl_sync(FULL, v, 7);
  down[t] = __shfl_down_sync(FULL, v, 3);
}

/* halves of the warp shuffle separately, a different number of times, then
 * the whole warp: out = lane's value after the half-warp steps, of lane ^ 16 */
__global__ void k_partial(double *out) {
  int lane = threadIdx.x & 31;
  double v = lane;
  if (lane < 16) {
    v += __shfl_xor_sync(0x0000ffffu, v, 1);
    v += __shfl_xor_sync(0x0000ffffu, v, 2);
  } else {
    v += __shfl_xor_sync(0xffff0000u, v, 1);
  }
  out[threadIdx.x] = __shfl_xor_sync(FULL, v, 16);
}

/* lane 0 waits at a warp barrier, the others at the block barrier */
__global__ void k_deadlock(double *out) {
  if ((threadIdx.x & 31) == 0)
    __syncwarp();
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}

/* half the warp has exited when the other half shuffles with a full mask */
__global__ void k_exited(double *out) {
  int lane = threadIdx.x & 31;
  if (lane >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(FULL, (double)lane, 1);
}

__global__ void k_touch(double *p) { p[threadIdx.x] = 2; }

static size_t faults_before;
static int new_faults(void) {
  size_t f = gfi_cuda_emu_faults();
  int d = (int)(f - faults_before);
  faults_before = f;
  return d;
}

int main(void) {
  faults_before = gfi_cuda_emu_faults();
  cudaStream_t s = NULL;

  /* ids over a 3-D launch: each exactly once */
  {
    dim3 g(3, 2, 2), b(8, 4, 2);
    size_t n = 3 * 2 * 2 * 8 * 4 * 2;
    unsigned *d, *h = (unsigned *)malloc(n * sizeof *h);
    CHECK(cudaMalloc(&d, n * sizeof *d) == cudaSuccess, "cudaMalloc");
    GFI_LAUNCH(g, b, 0, s, k_ids)(d);
    CHECK(cudaGetLastError() == cudaSuccess, "k_ids launch");
    cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost);
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= h[i] == i + 1;
    CHECK(ok, "every (block, thread) index once");
    cudaFree(d);
    free(h);
  }

  /* block sums: right with barriers, wrong without (in either fiber order) */
  {
    const int nb = 4, nt = 256;
    double *x = (double *)malloc(nb * nt * sizeof *x), ref[4] = {0, 0, 0, 0}, got[4];
    for (int i = 0; i < nb * nt; i++) {
      x[i] = 1 + (i % 13) * 0.25;
      ref[i / nt] += x[i];
    }
    double *xd, *od;
    cudaMalloc(&xd, nb * nt * sizeof *xd);
    cudaMalloc(&od, nb * sizeof *od);
    cudaMemcpy(xd, x, nb * nt * sizeof *x, cudaMemcpyHostToDevice);
    GFI_LAUNCH(nb, nt, nt * sizeof(double), s, k_blocksum)(xd, od, 1);
    CHECK(cudaGetLastError() == cudaSuccess, "k_blocksum launch");
    cudaMemcpy(got, od, sizeof got, cudaMemcpyDeviceToHost);
    for (int b = 0; b < nb; b++) CHECK(got[b] == ref[b], "block %d sum %g, expected %g", b, got[b], ref[b]);
    for (int rep = 0; rep < 2; rep++) {
      GFI_LAUNCH(nb, nt, nt * sizeof(double), s, k_blocksum)(xd, od, 0);
      cudaMemcpy(got, od, sizeof got, cudaMemcpyDeviceToHost);
      int wrong = 0;
      for (int b = 0; b < nb; b++) wrong += !(got[b] == ref[b]);
      CHECK(wrong > 0, "a reduction without barriers went unnoticed (launch %d)", rep);
    }
    /* neighbour exchange: every block shows the missing barrier */
    double *nd, *nh = (double *)malloc(nb * nt * sizeof *nh);
    cudaMalloc(&nd, nb * nt * sizeof *nd);
    GFI_LAUNCH(nb, nt, nt * sizeof(double), s, k_neighbour)(nd, 1);
    cudaMemcpy(nh, nd, nb * nt * sizeof *nh, cudaMemcpyDeviceToHost);
    int ok = 1;
    for (int i = 0; i < nb * nt; i++) ok &= nh[i] == (double)((i % nt + 1) % nt);
    CHECK(ok, "neighbour exchange with a barrier");
    GFI_LAUNCH(nb, nt, nt * sizeof(double), s, k_neighbour)(nd, 0);
    cudaMemcpy(nh, nd, nb * nt * sizeof *nh, cudaMemcpyDeviceToHost);
    for (int b = 0; b < nb; b++) {
      int bad = 0;
      for (int t = 0; t < nt; t++) bad += !(nh[b * nt + t] == (double)((t + 1) % nt));
      CHECK(bad > 0, "block %d: a missing barrier went unnoticed", b);
    }
    cudaFree(xd);
    cudaFree(od);
    cudaFree(nd);
    free(x);
    free(nh);
  }

  /* warp shuffles */
  {
    const int n = 128;
    double x[128], sum[128], bc[128], dn[128];
    for (int i = 0; i < n; i++) x[i] = i * 0.5 + 1;
    double *xd, *a, *b, *c;
    cudaMalloc(&xd, sizeof x);
    cudaMalloc(&a, sizeof x);
    cudaMalloc(&b, sizeof x);
    cudaMalloc(&c, sizeof x);
    cudaMemcpy(xd, x, sizeof x, cudaMemcpyHostToDevice);
    GFI_LAUNCH(2, 64, 0, s, k_warp)(xd, a, b, c);
    CHECK(cudaGetLastError() == cudaSuccess, "k_warp launch");
    cudaMemcpy(sum, a, sizeof x, cudaMemcpyDeviceToHost);
    cudaMemcpy(bc, b, sizeof x, cudaMemcpyDeviceToHost);
    cudaMemcpy(dn, c, sizeof x, cudaMemcpyDeviceToHost);
    int ok = 1;
    for (int i = 0; i < n; i++) {
      int w = i / 32, l = i % 32;
      double ws = 0;
      for (int j = 0; j < 32; j++) ws += x[w * 32 + j];
      ok &= sum[i] == ws;
      ok &= bc[i] == x[w * 32 + 7];
      ok &= dn[i] == (l + 3 < 32 ? x[i + 3] : x[i]);
    }
    CHECK(ok, "warp sum, broadcast and down-shift");
    GFI_LAUNCH(1, 64, 0, s, k_partial)(a);
    CHECK(cudaGetLastError() == cudaSuccess, "k_partial launch");
    cudaMemcpy(sum, a, 64 * sizeof(double), cudaMemcpyDeviceToHost);
    ok = 1;
    for (int i = 0; i < 64; i++) {
      int l = (i % 32) ^ 16;
      double h[32];
      for (int j = 0; j < 32; j++) h[j] = j;
      double want;
      if (l < 16) {
        double h1[32];
        for (int j = 0; j < 16; j++) h1[j] = h[j] + h[j ^ 1];
        want = h1[l] + h1[l ^ 2];
      } else {
        want = h[l] + h[l ^ 1];
      }
      ok &= sum[i] == want;
    }
    CHECK(ok, "half-warp shuffles, different in number, then a full-warp one");
    CHECK(new_faults() == 0, "no fault from correct kernels");

    /* divergent barriers: a fault and a failed launch, not a hang */
    GFI_LAUNCH(1, 64, 0, s, k_deadlock)(a);
    CHECK(cudaGetLastError() == cudaErrorLaunchFailure, "deadlock reported as a launch failure");
    CHECK(new_faults() == 1, "deadlock fault");
    /* a full-mask shuffle over exited lanes */
    GFI_LAUNCH(1, 32, 0, s, k_exited)(a);
    CHECK(cudaGetLastError() == cudaErrorLaunchFailure, "shuffle over exited lanes");
    CHECK(new_faults() == 1, "exited-lane fault");
    /* a host pointer never reaches the kernel */
    double host[64];
    for (int i = 0; i < 64; i++) host[i] = -1;
    GFI_LAUNCH(1, 64, 0, s, k_touch)(host);
    CHECK(cudaGetLastError() == cudaErrorLaunchFailure, "host pointer argument");
    CHECK(new_faults() == 1 && host[0] == -1, "host pointer fault, kernel not run");
    /* pointers inside an allocation are device pointers */
    GFI_LAUNCH(1, 32, 0, s, k_touch)(a + 32);
    CHECK(cudaGetLastError() == cudaSuccess && new_faults() == 0, "interior device pointer");
    /* launch shapes and shared memory */
    GFI_LAUNCH(1, 2048, 0, s, k_touch)(a);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "2048 threads per block refused");
    GFI_LAUNCH(0, 32, 0, s, k_touch)(a);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "empty grid refused");
    GFI_LAUNCH(1, 64, 64 * 1024, s, k_blocksum)(xd, a, 1);
    CHECK(cudaGetLastError() != cudaSuccess, "64 KiB of dynamic shared memory without opting in");
    new_faults();
    CHECK(cudaFuncSetAttribute(k_blocksum, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) ==
              cudaSuccess, "opt in");
    GFI_LAUNCH(2, 64, 64 * 1024, s, k_blocksum)(xd, a, 1);
    CHECK(cudaGetLastError() == cudaSuccess && new_faults() == 0, "64 KiB after opting in");
    GFI_LAUNCH(1, 64, 228 * 1024, s, k_blocksum)(xd, a, 1);
    CHECK(cudaGetLastError() != cudaSuccess, "over the 227 KiB a block can have");
    new_faults();
    cudaFree(xd);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }

  /* memory: NaN garbage, copy directions and bounds, frees, accounting */
  {
    size_t live0 = gfi_cuda_emu_live_bytes();
    double *d, h[16];
    CHECK(cudaMalloc(&d, 16 * sizeof *d) == cudaSuccess, "cudaMalloc");
    CHECK(gfi_cuda_emu_live_bytes() == live0 + 16 * sizeof *d, "live bytes count the allocation");
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int nan = 1;
    for (int i = 0; i < 16; i++) nan &= isnan(h[i]);
    CHECK(nan, "memory never written reads as NaN");
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyHostToDevice) == cudaErrorInvalidValue,
          "host-to-device into host memory refused");
    CHECK(cudaMemcpy(d, h, 17 * sizeof *d, cudaMemcpyHostToDevice) == cudaErrorInvalidValue,
          "a copy past the allocation's end refused");
    CHECK(cudaMemcpy(d + 8, h, 8 * sizeof *d, cudaMemcpyHostToDevice) == cudaSuccess,
          "a copy to the allocation's second half");
    CHECK(cudaMemcpy(h, d + 8, 9 * sizeof *d, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue,
          "a read past the end refused");
    CHECK(cudaMemset(d, 0, 17 * sizeof *d) == cudaErrorInvalidValue, "memset past the end refused");
    CHECK(cudaFree(d + 1) != cudaSuccess, "cudaFree of an interior pointer refused");
    CHECK(new_faults() == 5, "five memory faults reported");
    cudaPointerAttributes at;
    cudaPointerGetAttributes(&at, d + 3);
    CHECK(at.type == cudaMemoryTypeDevice, "interior pointer is device memory");
    cudaPointerGetAttributes(&at, h);
    CHECK(at.type != cudaMemoryTypeDevice, "a stack array is not");
    CHECK(cudaFree(d) == cudaSuccess, "cudaFree");
    CHECK(gfi_cuda_emu_live_bytes() == live0, "all freed");
  }
  CHECK(gfi_cuda_emu_live_bytes() == 0, "%zu bytes left allocated", gfi_cuda_emu_live_bytes());
  return check_summary("cuda-emu-self");
}
