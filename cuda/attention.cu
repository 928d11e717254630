/* Fourier attention forward and backward on the GPU (contract of
 * gfi/attention.h; per-pair math in gfi_cuda_math.h, checked on the CPU by
 * tests/test_cuda_math.c, which runs this file's warp algorithm serially).
 *
 * Forward: one warp per query row i, lane b of the warp takes key j0 + b of
 * each group of 32 keys: the product over axes in scaled form, the group's
 * largest exponent by a warp maximum (the row's 2^(l E_i) kept current
 * online, as flash attention keeps its running maximum), the weights summed
 * by a warp reduction, and the value rows accumulated with lane c owning value
 * columns c, c + 32, ... (weights broadcast by shuffles).
 * Backward pass 1: one warp per query row (lanes over keys) for dQ and dR;
 * pass 2: one warp per key (lanes over queries) for dK and dV. The per-axis
 * gradient terms are reduced over the warp per axis into shared memory; no
 * atomics, so results are deterministic. Memory O(L (D + Dv)). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "gfi_cuda_math.h"
#include "gfi/validate.h"

#define AT_WARPS 4       /* warps per block */
#define AT_MAXD 256      /* largest D on the GPU */
#define AT_MAXV 256      /* largest Dv on the GPU */
#define AT_NVC (AT_MAXV / 32)
#define FULL 0xffffffffu

template <typename T> struct at;
template <> struct at<double> {
  typedef gfi_cu_aprod_d prod;
  static __device__ __forceinline__ void init(prod *p) { gfi_cu_aprod_init_d(p); }
  static __device__ __forceinline__ void push(prod *p, double s, int d, int D) { gfi_cu_aprod_push_d(p, s, d, D); }
  static __device__ __forceinline__ double pexp(const prod *p) { return gfi_cu_aprod_exp_d(p); }
  static __device__ __forceinline__ double scaled(const prod *p, double E) { return gfi_cu_aprod_scaled_d(p, E); }
  static __device__ __forceinline__ double nzscaled(const prod *p, double E) { return gfi_cu_aprod_nz_scaled_d(p, E); }
  static __device__ __forceinline__ void sinc(double u, double sn, double cs, double *s, double *ds) { gfi_cu_sinc_both_d(u, sn, cs, s, ds); }
  static __device__ __forceinline__ double ipow(double x, int l) { return gfi_cu_ipow_d(x, l); }
  static __device__ __forceinline__ double pow2(double k) { return gfi_cu_pow2_d(k); }
  static __device__ __forceinline__ double grad(int l, int nz, double P, double Pz, double s, double ds) { return gfi_cu_attn_grad_d(l, nz, P, Pz, s, ds); }
};
template <> struct at<float> {
  typedef gfi_cu_aprod_f prod;
  static __device__ __forceinline__ void init(prod *p) { gfi_cu_aprod_init_f(p); }
  static __device__ __forceinline__ void push(prod *p, float s, int d, int D) { gfi_cu_aprod_push_f(p, s, d, D); }
  static __device__ __forceinline__ double pexp(const prod *p) { return gfi_cu_aprod_exp_f(p); }
  static __device__ __forceinline__ float scaled(const prod *p, double E) { return gfi_cu_aprod_scaled_f(p, E); }
  static __device__ __forceinline__ float nzscaled(const prod *p, double E) { return gfi_cu_aprod_nz_scaled_f(p, E); }
  static __device__ __forceinline__ void sinc(float u, float sn, float cs, float *s, float *ds) { gfi_cu_sinc_both_f(u, sn, cs, s, ds); }
  static __device__ __forceinline__ float ipow(float x, int l) { return gfi_cu_ipow_f(x, l); }
  static __device__ __forceinline__ float pow2(double k) { return gfi_cu_pow2_f(k); }
  static __device__ __forceinline__ float grad(int l, int nz, float P, float Pz, float s, float ds) { return gfi_cu_attn_grad_f(l, nz, P, Pz, s, ds); }
};

template <typename T> __device__ __forceinline__ T wsum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
  return v;
}
__device__ __forceinline__ double wmax(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(FULL, v, o));
  return v;
}

/* Tables of a (R_d x_id, sin, cos), structure of arrays [3][D][L]. */
template <typename T>
__global__ void at_tables(const double *__restrict__ X, size_t L, int D, const double *__restrict__ Rd,
                          T *__restrict__ tab, int *bad) {
  size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= L * D) return;
  size_t i = t / D;
  int d = (int)(t % D);
  double v = X[t];
  if (!isfinite(v)) {
    atomicOr(bad, GFI_CU_BAD_NONFINITE);
    v = 0;
  }
  double a = Rd[d] * v, s, c;
  sincos(a, &s, &c);
  tab[(size_t)d * L + i] = (T)a;
  tab[((size_t)D + d) * L + i] = (T)s;
  tab[((size_t)2 * D + d) * L + i] = (T)c;
}

__global__ void at_finite(const double *__restrict__ x, size_t n, int *bad) {
  size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && !isfinite(x[t])) atomicOr(bad, GFI_CU_BAD_NONFINITE);
}

/* One axis of pair (query i, key j): s and s'. */
template <typename T>
__device__ __forceinline__ void at_axis(const T *__restrict__ qt, size_t qi, size_t Lq,
                                        const T *__restrict__ kt, size_t kj, size_t Lk, int D, int d,
                                        T *u, T *s, T *ds) {
  T a = qt[(size_t)d * Lq + qi], sa = qt[((size_t)D + d) * Lq + qi], ca = qt[((size_t)2 * D + d) * Lq + qi];
  T b = kt[(size_t)d * Lk + kj], sb = kt[((size_t)D + d) * Lk + kj], cb = kt[((size_t)2 * D + d) * Lk + kj];
  *u = a - b;
  at<T>::sinc(*u, sa * cb - ca * sb, ca * cb + sa * sb, s, ds);
}

/* ------------------------------------------------------------ forward */
template <typename T>
__global__ void __launch_bounds__(32 * AT_WARPS)
at_forward(size_t L, int D, int Dv, int l, int causal, double tol, const T *__restrict__ qt,
           const T *__restrict__ kt, const double *__restrict__ V, double *__restrict__ H,
           double *__restrict__ saved, double *__restrict__ ratio) {
  GFI_DYN_SHARED(at_smem);
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const size_t i = (size_t)blockIdx.x * AT_WARPS + wid;
  T *q = (T *)at_smem + (size_t)wid * 3 * D; /* this row's query table */
  if (i >= L) return;
  for (int t = lane; t < 3 * D; t += 32) q[t] = qt[(size_t)t * L + i];
  __syncwarp();
  const size_t jend = causal ? i + 1 : L;
  double E = -INFINITY;
  T S = 0, A = 0, N[AT_NVC];
#pragma unroll
  for (int k = 0; k < AT_NVC; k++) N[k] = 0;
  for (size_t j0 = 0; j0 < jend; j0 += 32) {
    const size_t j = j0 + lane;
    const bool ok = j < jend;
    typename at<T>::prod pr;
    at<T>::init(&pr);
    if (ok)
      for (int d = 0; d < D; d++) {
        T b = kt[(size_t)d * L + j], sb = kt[((size_t)D + d) * L + j], cb = kt[((size_t)2 * D + d) * L + j];
        T s, ds;
        at<T>::sinc(q[d] - b, q[D + d] * cb - q[2 * D + d] * sb, q[2 * D + d] * cb + q[D + d] * sb, &s, &ds);
        at<T>::push(&pr, s, d, D);
      }
    double e = ok ? at<T>::pexp(&pr) : GFI_CU_ZERO_EXP;
    double emax = wmax(e);
    if (emax > E) {
      T sc = E == -INFINITY ? (T)0 : at<T>::pow2(l * (E - emax));
      S *= sc;
      A *= sc;
#pragma unroll
      for (int k = 0; k < AT_NVC; k++) N[k] *= sc;
      E = emax;
    }
    T w = ok ? at<T>::ipow(at<T>::scaled(&pr, E), l) : (T)0;
    S += wsum(w);
    A += wsum(w < 0 ? -w : w);
    const int nb = jend - j0 < 32 ? (int)(jend - j0) : 32;
    for (int b = 0; b < nb; b++) {
      T wb = __shfl_sync(FULL, w, b);
      const double *v = V + (j0 + b) * Dv;
#pragma unroll
      for (int k = 0; k < AT_NVC; k++) {
        int c = lane + 32 * k;
        if (c < Dv) N[k] += wb * (T)v[c];
      }
    }
  }
  const bool flag = !(S > (T)tol * A) || !(A > 0);
#pragma unroll
  for (int k = 0; k < AT_NVC; k++) {
    int c = lane + 32 * k;
    if (c < Dv) H[i * Dv + c] = flag ? NAN : (double)(N[k] / S);
  }
  if (lane == 0) {
    saved[2 * i] = E;
    saved[2 * i + 1] = flag ? NAN : (double)S;
    ratio[i] = A > 0 ? (double)(S / A) : 0.0;
  }
}

/* ----------------------------------------------------------- backward */

/* P_i = dH_i . H_i and 1/S~_i (0 for a flagged row). */
__global__ void at_rowterms(size_t L, int Dv, const double *__restrict__ H, const double *__restrict__ dH,
                            const double *__restrict__ saved, double *__restrict__ P,
                            double *__restrict__ invS) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= L) return;
  double S = saved[2 * i + 1];
  bool ok = isfinite(S);
  double p = 0;
  if (ok)
    for (int c = 0; c < Dv; c++) p += dH[i * Dv + c] * H[i * Dv + c];
  P[i] = p;
  invS[i] = ok ? 1.0 / S : 0.0;
}

/* Pass 1: warp per query row; dQ (L x D) and dRrow (L x nparam). */
template <typename T>
__global__ void __launch_bounds__(32 * AT_WARPS)
at_backward_q(size_t L, int D, int Dv, int l, int causal, int per_axis, const double *__restrict__ Rd,
              const T *__restrict__ qt, const T *__restrict__ kt, const double *__restrict__ V,
              const double *__restrict__ dH, const double *__restrict__ saved,
              const double *__restrict__ P, const double *__restrict__ invS, double *__restrict__ dQ,
              double *__restrict__ dRrow) {
  GFI_DYN_SHARED(at_smem);
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const size_t i = (size_t)blockIdx.x * AT_WARPS + wid;
  double *dq = (double *)at_smem + (size_t)wid * (2 * D + Dv), *dr = dq + D, *dh = dr + D;
  if (i >= L) return;
  const int np = per_axis ? D : 1;
  if (invS[i] == 0) {
    for (int d = lane; d < D; d += 32) dQ[i * D + d] = NAN;
    for (int k = lane; k < np; k += 32) dRrow[i * np + k] = 0;
    return;
  }
  for (int d = lane; d < D; d += 32) dq[d] = dr[d] = 0;
  for (int c = lane; c < Dv; c += 32) dh[c] = dH[i * Dv + c];
  __syncwarp();
  const double E = saved[2 * i];
  const T Pi = (T)P[i], iS = (T)invS[i];
  const size_t jend = causal ? i + 1 : L;
  for (size_t j0 = 0; j0 < jend; j0 += 32) {
    const size_t j = j0 + lane;
    const bool ok = j < jend;
    const size_t jj = ok ? j : j0;
    T dot = 0;
    for (int c = 0; c < Dv; c++) dot += (T)dh[c] * (T)V[jj * Dv + c];
    const T coef = ok ? (dot - Pi) * iS : (T)0;
    typename at<T>::prod pr;
    at<T>::init(&pr);
    for (int d = 0; d < D; d++) {
      T u, s, ds;
      at_axis<T>(qt, i, L, kt, jj, L, D, d, &u, &s, &ds);
      at<T>::push(&pr, s, d, D);
    }
    const T Pt = at<T>::scaled(&pr, E), Pz = at<T>::nzscaled(&pr, E);
    for (int d = 0; d < D; d++) {
      T u, s, ds;
      at_axis<T>(qt, i, L, kt, jj, L, D, d, &u, &s, &ds);
      T t = coef * at<T>::grad(l, pr.nz, Pt, Pz, s, ds);
      T tr = t * u;
      t = wsum(t);
      tr = wsum(tr);
      if (lane == 0) {
        dq[d] += (double)t;
        dr[d] += (double)tr;
      }
    }
  }
  __syncwarp();
  double rs = 0;
  for (int d = lane; d < D; d += 32) {
    dQ[i * D + d] = Rd[d] * dq[d];
    double t = dr[d] / Rd[d];
    if (per_axis)
      dRrow[i * D + d] = t;
    else
      rs += t;
  }
  if (!per_axis) {
    rs = wsum(rs);
    if (lane == 0) dRrow[i] = rs;
  }
}

/* Pass 2: warp per key j; dK (L x D) and dV (L x Dv). */
template <typename T>
__global__ void __launch_bounds__(32 * AT_WARPS)
at_backward_k(size_t L, int D, int Dv, int l, int causal, const double *__restrict__ Rd,
              const T *__restrict__ qt, const T *__restrict__ kt, const double *__restrict__ V,
              const double *__restrict__ dH, const double *__restrict__ saved,
              const double *__restrict__ P, const double *__restrict__ invS, double *__restrict__ dK,
              double *__restrict__ dV) {
  GFI_DYN_SHARED(at_smem);
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const size_t j = (size_t)blockIdx.x * AT_WARPS + wid;
  double *dk = (double *)at_smem + (size_t)wid * (D + Dv), *vj = dk + D;
  if (j >= L) return;
  for (int d = lane; d < D; d += 32) dk[d] = 0;
  for (int c = lane; c < Dv; c += 32) vj[c] = V[j * Dv + c];
  __syncwarp();
  T dv[AT_NVC];
#pragma unroll
  for (int k = 0; k < AT_NVC; k++) dv[k] = 0;
  for (size_t i0 = causal ? j : 0; i0 < L; i0 += 32) {
    const size_t i = i0 + lane;
    const bool ok = i < L && invS[i] != 0;
    const size_t ii = i < L ? i : i0;
    const double E = ok ? saved[2 * ii] : 0.0;
    T dot = 0;
    for (int c = 0; c < Dv; c++) dot += (T)dH[ii * Dv + c] * (T)vj[c];
    const T iS = (T)invS[ii];
    const T coef = ok ? (dot - (T)P[ii]) * iS : (T)0;
    typename at<T>::prod pr;
    at<T>::init(&pr);
    for (int d = 0; d < D; d++) {
      T u, s, ds;
      at_axis<T>(qt, ii, L, kt, j, L, D, d, &u, &s, &ds);
      at<T>::push(&pr, s, d, D);
    }
    const T Pt = at<T>::scaled(&pr, E), Pz = at<T>::nzscaled(&pr, E);
    for (int d = 0; d < D; d++) {
      T u, s, ds;
      at_axis<T>(qt, ii, L, kt, j, L, D, d, &u, &s, &ds);
      T t = wsum(coef * at<T>::grad(l, pr.nz, Pt, Pz, s, ds));
      if (lane == 0) dk[d] -= (double)t;
    }
    const T a = ok ? at<T>::ipow(Pt, l) * iS : (T)0;
    const int nb = L - i0 < 32 ? (int)(L - i0) : 32;
    for (int b = 0; b < nb; b++) {
      T ab = __shfl_sync(FULL, a, b);
      const double *h = dH + (i0 + b) * Dv;
#pragma unroll
      for (int k = 0; k < AT_NVC; k++) {
        int c = lane + 32 * k;
        if (c < Dv) dv[k] += ab * (T)h[c];
      }
    }
  }
  __syncwarp();
  for (int d = lane; d < D; d += 32) dK[j * D + d] = Rd[d] * dk[d];
#pragma unroll
  for (int k = 0; k < AT_NVC; k++) {
    int c = lane + 32 * k;
    if (c < Dv) dV[j * Dv + c] = (double)dv[k];
  }
}

/* --------------------------------------------------------------- host */

/* The checks of both calls; *kd the device descriptor of the kernel: the
 * device code is written for phi = z^l (the weight factorises as (prod_d
 * sinc)^l; the launches take kd->l alone, which keeps the kernels'
 * registers as they were), so a polynomial or custom phi is
 * GFI_EUNSUPPORTED, named "kernel". */
static int at_check(const gfi_attn_spec *sp, size_t L, size_t D, size_t Dv, const double *R, gfi_cu_kern *kd) {
  if (!sp || !R) return GFI_EINVAL;
  if (sp->kind == GFI_ATTN_GAUSS) return GFI_EUNSUPPORTED;
  if (sp->kind != GFI_ATTN_FOURIER) return GFI_EINVAL;
  if (!(sp->denom_tol >= 0 && sp->denom_tol < 1)) return GFI_EINVAL;
  if (sp->kernel.kind != GFI_PHI_POW) return fail_param(GFI_EUNSUPPORTED, "kernel");
  int st = gfi_check_order(sp->kernel.l);
  if (st) return st;
  st = gfi_cu_kern_make(&sp->kernel, 0, "kernel", kd);
  if (st) return st;
  if (L == 0) return GFI_EEMPTY;
  if (D == 0 || Dv == 0) return GFI_EDIM;
  if (D > AT_MAXD || Dv > AT_MAXV) return GFI_EUNSUPPORTED;
  return gfi_check_radii(R, sp->per_axis_R ? D : 1, NULL);
}

/* Device copies of the inputs, the radii per axis and both tables. */
struct at_ctx {
  const double *in[6];
  double *own[6];
  double *Rd;
  void *qt, *kt;
  int *bad;
};

static void at_free(at_ctx *c) {
  for (int k = 0; k < 6; k++) cudaFree(c->own[k]);
  cudaFree(c->Rd);
  cudaFree(c->qt);
  cudaFree(c->kt);
  cudaFree(c->bad);
}

/* ptrs/ns: the inputs to view on the device and which to check for finiteness. */
static int at_setup(at_ctx *c, int prec, size_t L, size_t D, const gfi_attn_spec *sp,
                    const double *R, const double *const *ptrs, const size_t *ns, int nin,
                    cudaStream_t s) {
  memset(c, 0, sizeof *c);
  int st = GFI_OK;
  size_t ts = prec == GFI_CUDA_F32 ? sizeof(float) : sizeof(double);
  double Rh[AT_MAXD];
  for (size_t d = 0; d < D; d++) Rh[d] = sp->per_axis_R ? R[d] : R[0];
  for (int k = 0; k < nin; k++) {
    st = gfi_cu_in(ptrs[k], ns[k], s, &c->in[k], &c->own[k]);
    if (st) goto done;
  }
  GFI_CU_TRY(cudaMalloc(&c->bad, sizeof(int)));
  GFI_CU_TRY(cudaMemsetAsync(c->bad, 0, sizeof(int), s));
  GFI_CU_TRY(cudaMalloc(&c->Rd, D * sizeof(double)));
  GFI_CU_TRY(cudaMemcpyAsync(c->Rd, Rh, D * sizeof(double), cudaMemcpyHostToDevice, s));
  GFI_CU_TRY(cudaMalloc(&c->qt, 3 * L * D * ts));
  GFI_CU_TRY(cudaMalloc(&c->kt, 3 * L * D * ts));
  {
    unsigned nb = (unsigned)((L * D + 255) / 256);
    if (prec == GFI_CUDA_F32) {
      GFI_LAUNCH(nb, 256, 0, s, at_tables<float>)(c->in[0], L, (int)D, c->Rd, (float *)c->qt, c->bad);
      GFI_LAUNCH(nb, 256, 0, s, at_tables<float>)(c->in[1], L, (int)D, c->Rd, (float *)c->kt, c->bad);
    } else {
      GFI_LAUNCH(nb, 256, 0, s, at_tables<double>)(c->in[0], L, (int)D, c->Rd, (double *)c->qt, c->bad);
      GFI_LAUNCH(nb, 256, 0, s, at_tables<double>)(c->in[1], L, (int)D, c->Rd, (double *)c->kt, c->bad);
    }
    for (int k = 2; k < nin; k++)
      if (ns[k]) GFI_LAUNCH((unsigned)((ns[k] + 255) / 256), 256, 0, s, at_finite)(c->in[k], ns[k], c->bad);
    GFI_CU_TRY(cudaGetLastError());
    int bad = 0;
    GFI_CU_TRY(cudaMemcpyAsync(&bad, c->bad, sizeof bad, cudaMemcpyDeviceToHost, s));
    GFI_CU_TRY(cudaStreamSynchronize(s));
    if (bad) st = GFI_ENONFINITE;
  }
done:
  if (st) at_free(c);
  return st;
}

static void at_info(gfi_attn_info *info, size_t L, const double *saved_h, const double *ratio_h) {
  if (!info) return;
  info->nflagged = 0;
  info->first_flagged = L;
  info->min_ratio = ratio_h ? INFINITY : NAN;
  for (size_t i = 0; i < L; i++) {
    if (isnan(saved_h[2 * i + 1])) {
      if (info->nflagged++ == 0) info->first_flagged = i;
    }
    if (ratio_h && ratio_h[i] < info->min_ratio) info->min_ratio = ratio_h[i];
  }
}

extern "C" int gfi_cuda_attn_forward(const gfi_attn_spec *spec, size_t L, size_t D, size_t Dv,
                                     const double *Q, const double *K, const double *V,
                                     const double *R, double *H, double *saved,
                                     gfi_attn_info *info, const gfi_cuda_opts *opts) {
  gfi_cu_kern kd;
  int st = at_check(spec, L, D, Dv, R, &kd);
  if (st) return st;
  if (!Q || !K || !V || !H) return GFI_EINVAL;
  gfi_cuda_opts o;
  st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  const double *ptrs[3] = {Q, K, V};
  const size_t ns[3] = {L * D, L * D, L * Dv};
  at_ctx c;
  st = at_setup(&c, o.precision, L, D, spec, R, ptrs, ns, 3, s);
  if (st) return st;
  double *Hd, *Hown = NULL, *sd = NULL, *rd = NULL, *sh = NULL, *rh = NULL;
  size_t nflag = 0;
  st = gfi_cu_out(H, L * Dv, &Hd, &Hown);
  if (st) goto done;
  GFI_CU_TRY(cudaMalloc(&sd, 2 * L * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&rd, L * sizeof(double)));
  {
    unsigned nb = (unsigned)((L + AT_WARPS - 1) / AT_WARPS);
    size_t ts = o.precision == GFI_CUDA_F32 ? sizeof(float) : sizeof(double);
    size_t smem = AT_WARPS * 3 * D * ts;
    if (o.precision == GFI_CUDA_F32)
      GFI_LAUNCH(nb, 32 * AT_WARPS, smem, s, at_forward<float>)(L, (int)D, (int)Dv, kd.l, spec->causal,
                                                        spec->denom_tol, (const float *)c.qt,
                                                        (const float *)c.kt, c.in[2], Hd, sd, rd);
    else
      GFI_LAUNCH(nb, 32 * AT_WARPS, smem, s, at_forward<double>)(L, (int)D, (int)Dv, kd.l, spec->causal,
                                                         spec->denom_tol, (const double *)c.qt,
                                                         (const double *)c.kt, c.in[2], Hd, sd, rd);
    GFI_CU_TRY(cudaGetLastError());
  }
  sh = (double *)malloc(2 * L * sizeof *sh);
  rh = (double *)malloc(L * sizeof *rh);
  if (!sh || !rh) {
    st = GFI_ENOMEM;
    goto done;
  }
  GFI_CU_TRY(cudaMemcpyAsync(sh, sd, 2 * L * sizeof *sh, cudaMemcpyDeviceToHost, s));
  GFI_CU_TRY(cudaMemcpyAsync(rh, rd, L * sizeof *rh, cudaMemcpyDeviceToHost, s));
  st = gfi_cu_out_finish(H, L * Dv, s, Hown);
  if (st) goto done;
  if (saved) {
    if (gfi_cu_is_device(saved))
      GFI_CU_TRY(cudaMemcpy(saved, sd, 2 * L * sizeof(double), cudaMemcpyDeviceToDevice));
    else
      memcpy(saved, sh, 2 * L * sizeof(double));
  }
  at_info(info, L, sh, rh);
  for (size_t i = 0; i < L; i++) nflag += isnan(sh[2 * i + 1]) ? 1 : 0;
  st = nflag ? GFI_EDENOM : GFI_OK;
done:
  if (Hown) cudaFree(Hown);
  cudaFree(sd);
  cudaFree(rd);
  free(sh);
  free(rh);
  at_free(&c);
  return st;
}

extern "C" int gfi_cuda_attn_backward(const gfi_attn_spec *spec, size_t L, size_t D, size_t Dv,
                                      const double *Q, const double *K, const double *V,
                                      const double *R, const double *H, const double *saved,
                                      const double *dH, double *dQ, double *dK, double *dV,
                                      double *dR, gfi_attn_info *info, const gfi_cuda_opts *opts) {
  gfi_cu_kern kd;
  int st = at_check(spec, L, D, Dv, R, &kd);
  if (st) return st;
  if (!Q || !K || !V || !H || !saved || !dH || !dQ || !dK || !dV || !dR) return GFI_EINVAL;
  gfi_cuda_opts o;
  st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  const double *ptrs[6] = {Q, K, V, dH, H, saved};
  const size_t ns[6] = {L * D, L * D, L * Dv, L * Dv, 0, 0};
  size_t np = spec->per_axis_R ? D : 1, nflag = 0;
  at_ctx c;
  /* H and saved carry NaN rows by design: viewed, not checked */
  st = at_setup(&c, o.precision, L, D, spec, R, ptrs, ns, 4, s);
  if (st) return st;
  const double *Hd = NULL, *svd = NULL;
  double *Hown = NULL, *svown = NULL, *P = NULL, *iS = NULL, *dRrow = NULL, *hrow = NULL,
         *svh = NULL;
  double *dQd, *dKd, *dVd, *oq = NULL, *ok_ = NULL, *ov = NULL;
  st = gfi_cu_in(H, L * Dv, s, &Hd, &Hown);
  if (!st) st = gfi_cu_in(saved, 2 * L, s, &svd, &svown);
  if (!st) st = gfi_cu_out(dQ, L * D, &dQd, &oq);
  if (!st) st = gfi_cu_out(dK, L * D, &dKd, &ok_);
  if (!st) st = gfi_cu_out(dV, L * Dv, &dVd, &ov);
  if (st) goto done;
  GFI_CU_TRY(cudaMalloc(&P, L * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&iS, L * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&dRrow, L * np * sizeof(double)));
  {
    GFI_LAUNCH((unsigned)((L + 127) / 128), 128, 0, s, at_rowterms)(L, (int)Dv, Hd, c.in[3], svd, P, iS);
    unsigned nb = (unsigned)((L + AT_WARPS - 1) / AT_WARPS);
    size_t smq = AT_WARPS * (2 * D + Dv) * sizeof(double), smk = AT_WARPS * (D + Dv) * sizeof(double);
    if (o.precision == GFI_CUDA_F32) {
      GFI_LAUNCH(nb, 32 * AT_WARPS, smq, s, at_backward_q<float>)(L, (int)D, (int)Dv, kd.l, spec->causal,
          spec->per_axis_R, c.Rd, (const float *)c.qt, (const float *)c.kt, c.in[2], c.in[3], svd, P,
          iS, dQd, dRrow);
      GFI_LAUNCH(nb, 32 * AT_WARPS, smk, s, at_backward_k<float>)(L, (int)D, (int)Dv, kd.l, spec->causal,
          c.Rd, (const float *)c.qt, (const float *)c.kt, c.in[2], c.in[3], svd, P, iS, dKd, dVd);
    } else {
      GFI_LAUNCH(nb, 32 * AT_WARPS, smq, s, at_backward_q<double>)(L, (int)D, (int)Dv, kd.l, spec->causal,
          spec->per_axis_R, c.Rd, (const double *)c.qt, (const double *)c.kt, c.in[2], c.in[3], svd,
          P, iS, dQd, dRrow);
      GFI_LAUNCH(nb, 32 * AT_WARPS, smk, s, at_backward_k<double>)(L, (int)D, (int)Dv, kd.l, spec->causal,
          c.Rd, (const double *)c.qt, (const double *)c.kt, c.in[2], c.in[3], svd, P, iS, dKd, dVd);
    }
    GFI_CU_TRY(cudaGetLastError());
  }
  hrow = (double *)malloc(L * np * sizeof *hrow);
  svh = (double *)malloc(2 * L * sizeof *svh);
  if (!hrow || !svh) {
    st = GFI_ENOMEM;
    goto done;
  }
  GFI_CU_TRY(cudaMemcpyAsync(hrow, dRrow, L * np * sizeof *hrow, cudaMemcpyDeviceToHost, s));
  GFI_CU_TRY(cudaMemcpyAsync(svh, svd, 2 * L * sizeof *svh, cudaMemcpyDeviceToHost, s));
  if (!st) st = gfi_cu_out_finish(dQ, L * D, s, oq);
  if (!st) st = gfi_cu_out_finish(dK, L * D, s, ok_);
  if (!st) st = gfi_cu_out_finish(dV, L * Dv, s, ov);
  if (st) goto done;
  for (size_t k = 0; k < np; k++) dR[k] = 0;
  for (size_t i = 0; i < L; i++) /* row order: deterministic */
    for (size_t k = 0; k < np; k++) dR[k] += hrow[i * np + k];
  at_info(info, L, svh, NULL);
  for (size_t i = 0; i < L; i++) nflag += isnan(svh[2 * i + 1]) ? 1 : 0;
  st = nflag ? GFI_EDENOM : GFI_OK;
done:
  cudaFree(Hown);
  cudaFree(svown);
  cudaFree(oq);
  cudaFree(ok_);
  cudaFree(ov);
  cudaFree(P);
  cudaFree(iS);
  cudaFree(dRrow);
  free(hrow);
  free(svh);
  at_free(&c);
  return st;
}
