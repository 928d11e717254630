/* The tiled pair-sum kernel shared by the density and Nadaraya-Watson
 * engines (and the Monte-Carlo ISE), and the table preparation kernel.
 *
 * Layout: a table holds, per point and axis, (R_j x_j, sin R_j x_j,
 * cos R_j x_j) in the working precision T (computed in double, then
 * rounded). Data tables are padded to a multiple of 128 points with weight 0.
 * The data are cut into nsplit chunks of `chunk` points (a function of N
 * only); block (bx, s) sums chunk s for PS_THREADS * QPT queries, tile by
 * tile through shared memory (every thread reads the same data point: a
 * broadcast). Each thread sums a tile in T and adds the tile sum to a double
 * accumulator; part[s][q][a] receives the chunk sums, combined in chunk order
 * by combine_kernel. */
#ifndef GFI_CUDA_PAIRSUM_CUH
#define GFI_CUDA_PAIRSUM_CUH

#include "cuda_compat.h"
#include "gfi_cuda_math.h"
#include "cuda_internal.h"

#define PS_THREADS 128
#define PS_PAD 128        /* data padded to a multiple of this */
#define PS_MAXD 64        /* largest D of the pair-sum engines */
#define PS_NACC_NW 6      /* S, A, 4 numerators */

struct ps_radii {
  double R[PS_MAXD];
};

/* A polynomial phi in the working precision (gfi_cu_kern's coefficients
 * rounded to T, zero above the degree), passed to the launch by value. */
template <typename T> struct ps_phi {
  T a[GFI_CU_PHI_MAXPOW + 1];
};

template <typename T> struct ps_ops;
template <> struct ps_ops<double> {
  static __device__ __forceinline__ double pair(int D, int l, const double *q, const double *k) {
    return gfi_cu_pair_fourier_d(D, l, q, k);
  }
  static __device__ __forceinline__ double poly(int D, const ps_phi<double> &f, const double *q,
                                                const double *k) {
    return gfi_cu_pair_fourier_poly_d(D, f.a, q, k);
  }
};
template <> struct ps_ops<float> {
  static __device__ __forceinline__ float pair(int D, int l, const float *q, const float *k) {
    return gfi_cu_pair_fourier_f(D, l, q, k);
  }
  static __device__ __forceinline__ float poly(int D, const ps_phi<float> &f, const float *q,
                                               const float *k) {
    return gfi_cu_pair_fourier_poly_f(D, f.a, q, k);
  }
};

/* Table of n points (rows of D doubles at x), padded with zeros to npad rows;
 * bad |= GFI_CU_BAD_* for non-finite or unresolvable (|R x| > 2^52) values. */
template <typename T>
__global__ void ps_prep_kernel(const double *__restrict__ x, size_t n, size_t npad, int D,
                               ps_radii rad, T *__restrict__ tab, int *bad) {
  size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= npad * (size_t)D) return;
  size_t i = t / D;
  int j = (int)(t % D);
  T *o = tab + 3 * t;
  if (i >= n) {
    o[0] = o[1] = o[2] = (T)0;
    return;
  }
  double v = x[t];
  double a = rad.R[j] * v;
  if (!isfinite(v)) {
    atomicOr(bad, GFI_CU_BAD_NONFINITE);
    a = 0;
  } else if (fabs(a) > GFI_CU_PHASE_MAX) {
    atomicOr(bad, GFI_CU_BAD_RANGE);
    a = 0;
  }
  double s, c;
  sincos(a, &s, &c);
  o[0] = (T)a;
  o[1] = (T)s;
  o[2] = (T)c;
}

/* NW: accumulators S, A, y_0..y_3 (Vc <= 4 of them used). Density: one.
 * LC: the power l when > 0, any power (lrt) when 0, and when PS_POLY the
 * polynomial phi (phi; lrt unused), whose pair term is
 * gfi_cu_pair_fourier_poly. */
#define PS_POLY (-1)
template <typename T, int DC, int LC, int QPT, int NW>
__global__ void __launch_bounds__(PS_THREADS)
ps_kernel(int Drt, int lrt, ps_phi<T> phi, const T *__restrict__ qtab, size_t M, const T *__restrict__ ktab,
          const T *__restrict__ kw, const T *__restrict__ ky, int Vc, size_t Np, size_t chunk,
          double *__restrict__ part) {
  const int D = DC > 0 ? DC : Drt;
  const int l = LC > 0 ? LC : lrt;
  constexpr int TILE = DC > 0 ? 128 : 32;
  constexpr int NACC = NW ? PS_NACC_NW : 1;
  constexpr int QD = DC > 0 ? 3 * DC : 1;
  GFI_DYN_SHARED(ps_smem);
  T *sk = (T *)ps_smem;
  T *sw = sk + TILE * 3 * D;
  T *sy = sw + TILE;
  const size_t s = blockIdx.y;
  const size_t i0 = s * chunk;
  const size_t i1 = i0 + chunk < Np ? i0 + chunk : Np;
  const size_t qbase = (size_t)blockIdx.x * PS_THREADS * QPT + threadIdx.x;

  T qv[QPT][QD];
  const T *qp[QPT];
#pragma unroll
  for (int t = 0; t < QPT; t++) {
    size_t q = qbase + (size_t)t * PS_THREADS;
    size_t qq = q < M ? q : M - 1;
    qp[t] = qtab + qq * 3 * D;
    if (DC > 0) {
#pragma unroll
      for (int a = 0; a < QD; a++) qv[t][a] = qp[t][a];
    }
  }
  double acc[QPT][NACC];
#pragma unroll
  for (int t = 0; t < QPT; t++)
#pragma unroll
    for (int a = 0; a < NACC; a++) acc[t][a] = 0;

  for (size_t b = i0; b < i1; b += TILE) {
    __syncthreads();
    const T *src = ktab + b * 3 * D;
    for (int t = threadIdx.x; t < TILE * 3 * D; t += PS_THREADS) sk[t] = src[t];
    for (int t = threadIdx.x; t < TILE; t += PS_THREADS) sw[t] = kw[b + t];
    if (NW)
      for (int t = threadIdx.x; t < TILE * 4; t += PS_THREADS) sy[t] = ky[b * 4 + t];
    __syncthreads();
    T tacc[QPT][NACC];
#pragma unroll
    for (int t = 0; t < QPT; t++)
#pragma unroll
      for (int a = 0; a < NACC; a++) tacc[t][a] = 0;
#pragma unroll 2
    for (int p = 0; p < TILE; p++) {
      const T *kp = sk + p * 3 * D;
      const T wp = sw[p];
#pragma unroll
      for (int t = 0; t < QPT; t++) {
        T K = LC == PS_POLY ? ps_ops<T>::poly(D, phi, DC > 0 ? qv[t] : qp[t], kp)
                            : ps_ops<T>::pair(D, l, DC > 0 ? qv[t] : qp[t], kp);
        if (!NW) {
          tacc[t][0] += wp * K;
        } else {
          K *= wp;
          tacc[t][0] += K;
          tacc[t][1] += K < 0 ? -K : K;
#pragma unroll
          for (int c = 0; c < 4; c++)
            if (c < Vc) tacc[t][2 + c] += K * sy[p * 4 + c];
        }
      }
    }
#pragma unroll
    for (int t = 0; t < QPT; t++)
#pragma unroll
      for (int a = 0; a < NACC; a++) acc[t][a] += (double)tacc[t][a];
  }
#pragma unroll
  for (int t = 0; t < QPT; t++) {
    size_t q = qbase + (size_t)t * PS_THREADS;
    if (q < M)
#pragma unroll
      for (int a = 0; a < NACC; a++) part[(s * M + q) * NACC + a] = acc[t][a];
  }
}

/* out[q * nacc + a] = scale * sum_s part[s][q][a], chunks in order. */
__global__ void ps_combine_kernel(const double *__restrict__ part, size_t nsplit, size_t M, int nacc,
                                  double scale, double *__restrict__ out);

/* Data cut into chunks: a function of N only. */
static inline void ps_chunks(size_t N, size_t *Np, size_t *chunk, size_t *nsplit) {
  size_t np = (N + PS_PAD - 1) / PS_PAD * PS_PAD;
  size_t c = (np + 63) / 64;
  if (c < 16 * PS_PAD) c = 16 * PS_PAD;
  c = (c + PS_PAD - 1) / PS_PAD * PS_PAD;
  *Np = np;
  *chunk = c;
  *nsplit = (np + c - 1) / c;
}

/* Launch the pair sum for one query batch (qtab: M rows) with the kernel
 * kern (power or polynomial). nw: 0 density, 1 regression. Returns a
 * cudaError_t. Defined in pairsum.cu for float and double. */
template <typename T>
cudaError_t ps_launch(int nw, int D, const gfi_cu_kern *kern, const T *qtab, size_t M, const T *ktab, const T *kw,
                      const T *ky, int Vc, size_t Np, size_t chunk, size_t nsplit, double *part,
                      cudaStream_t st);

/* Prepare a table on the device (see ps_prep_kernel); *bad gets the flags. */
template <typename T>
int ps_prep(const double *x_dev, size_t n, size_t npad, int D, const double *R, T *tab,
            int *bad_dev, cudaStream_t st);

/* Read and reset the device flag word: GFI_OK, GFI_ENONFINITE or GFI_ERANGE. */
int ps_check_bad(int *bad_dev, cudaStream_t st);

#endif
