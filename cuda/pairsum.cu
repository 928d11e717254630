/* Launchers of the pair-sum kernel: one instantiation per (precision,
 * D in {1, 2, 3, 4} or any D <= 64, l in {2, 4} or any l or a polynomial
 * phi, density or NW). */
#include "pairsum.cuh"

__global__ void ps_combine_kernel(const double *__restrict__ part, size_t nsplit, size_t M, int nacc,
                                  double scale, double *__restrict__ out) {
  size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= M * (size_t)nacc) return;
  size_t q = t / nacc;
  int a = (int)(t % nacc);
  double s = 0;
  for (size_t c = 0; c < nsplit; c++) s += part[(c * M + q) * nacc + a];
  out[t] = scale * s;
}

template <typename T> struct ps_qpt { static const int v = 2; };
template <> struct ps_qpt<float> { static const int v = 4; };

template <typename T, int DC, int LC, int NW>
static cudaError_t ps_go(int D, int l, const ps_phi<T> &phi, const T *qtab, size_t M, const T *ktab, const T *kw,
                         const T *ky, int Vc, size_t Np, size_t chunk, size_t nsplit, double *part,
                         cudaStream_t st) {
  const int QPT = ps_qpt<T>::v;
  const int TILE = DC > 0 ? 128 : 32;
  size_t smem = (size_t)TILE * (3 * D + 1 + (NW ? 4 : 0)) * sizeof(T);
  if (smem > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(ps_kernel<T, DC, LC, QPT, NW>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
  }
  size_t per = (size_t)PS_THREADS * QPT;
  dim3 grid((unsigned)((M + per - 1) / per), (unsigned)nsplit);
  GFI_LAUNCH(grid, PS_THREADS, smem, st, ps_kernel<T, DC, LC, QPT, NW>)(D, l, phi, qtab, M, ktab, kw, ky, Vc, Np,
                                                                 chunk, part);
  return cudaGetLastError();
}

template <typename T, int NW>
static cudaError_t ps_dispatch(int D, const gfi_cu_kern *kern, const T *qtab, size_t M, const T *ktab,
                               const T *kw, const T *ky, int Vc, size_t Np, size_t chunk, size_t nsplit,
                               double *part, cudaStream_t st) {
  const int l = kern->l, poly = kern->kind == GFI_CU_PHI_POLY;
  ps_phi<T> phi;
  for (int j = 0; j <= GFI_CU_PHI_MAXPOW; j++) phi.a[j] = poly && j <= l ? (T)kern->coef[j] : (T)0;
#define PS_GO(DC, LC) ps_go<T, DC, LC, NW>(D, l, phi, qtab, M, ktab, kw, ky, Vc, Np, chunk, nsplit, part, st)
#define PS_L(DC) (poly ? PS_GO(DC, PS_POLY) : l == 4 ? PS_GO(DC, 4) : l == 2 ? PS_GO(DC, 2) : PS_GO(DC, 0))
  switch (NW ? (D <= 2 ? D : 0) : (D <= 4 ? D : 0)) {
    case 1: return PS_L(1);
    case 2: return PS_L(2);
    case 3: return PS_L(3);
    case 4: return PS_L(4);
    default: return PS_L(0);
  }
#undef PS_L
#undef PS_GO
}

template <typename T>
cudaError_t ps_launch(int nw, int D, const gfi_cu_kern *kern, const T *qtab, size_t M, const T *ktab,
                      const T *kw, const T *ky, int Vc, size_t Np, size_t chunk, size_t nsplit,
                      double *part, cudaStream_t st) {
  if (M == 0) return cudaSuccess;
  return nw ? ps_dispatch<T, 1>(D, kern, qtab, M, ktab, kw, ky, Vc, Np, chunk, nsplit, part, st)
            : ps_dispatch<T, 0>(D, kern, qtab, M, ktab, kw, ky, Vc, Np, chunk, nsplit, part, st);
}

template <typename T>
int ps_prep(const double *x_dev, size_t n, size_t npad, int D, const double *R, T *tab,
            int *bad_dev, cudaStream_t st) {
  ps_radii rad;
  for (int j = 0; j < D; j++) rad.R[j] = R[j];
  size_t tot = npad * (size_t)D;
  if (tot == 0) return GFI_OK;
  unsigned nb = (unsigned)((tot + 255) / 256);
  GFI_LAUNCH(nb, 256, 0, st, ps_prep_kernel<T>)(x_dev, n, npad, D, rad, tab, bad_dev);
  return gfi_cu_status(cudaGetLastError());
}

int ps_check_bad(int *bad_dev, cudaStream_t st) {
  int bad = 0;
  cudaError_t e = cudaMemcpyAsync(&bad, bad_dev, sizeof bad, cudaMemcpyDeviceToHost, st);
  if (e == cudaSuccess) e = cudaStreamSynchronize(st);
  if (e != cudaSuccess) return gfi_cu_status(e);
  if (bad) {
    e = cudaMemsetAsync(bad_dev, 0, sizeof(int), st);
    if (e != cudaSuccess) return gfi_cu_status(e);
  }
  if (bad & GFI_CU_BAD_NONFINITE) return GFI_ENONFINITE;
  if (bad & GFI_CU_BAD_RANGE) return GFI_ERANGE;
  return GFI_OK;
}

template cudaError_t ps_launch<double>(int, int, const gfi_cu_kern *, const double *, size_t, const double *,
                                       const double *, const double *, int, size_t, size_t, size_t,
                                       double *, cudaStream_t);
template cudaError_t ps_launch<float>(int, int, const gfi_cu_kern *, const float *, size_t, const float *,
                                      const float *, const float *, int, size_t, size_t, size_t,
                                      double *, cudaStream_t);
template int ps_prep<double>(const double *, size_t, size_t, int, const double *, double *, int *,
                             cudaStream_t);
template int ps_prep<float>(const double *, size_t, size_t, int, const double *, float *, int *,
                            cudaStream_t);
