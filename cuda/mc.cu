/* On-GPU sampling of normal mixtures with cuRAND's Philox4_32_10 and the
 * integrated squared error of the Fourier density estimator by reduction: the
 * device-side pieces of a Monte-Carlo MISE (see gfi_cuda.h). */
#ifdef GFI_CUDA_EMU
#include "emu/curand_emu.h"
#else
#include <curand_kernel.h>
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "gfi_cuda_math.h"
#include "gfi/validate.h"

/* Point i of replication `stream`: Philox blocks i B .. i B + B - 1 through
 * curand_init(seed, stream, 4 i B) and curand4 (see gfi_cu_mix_blocks). */
__global__ void mc_sample_kernel(uint64_t seed, uint64_t stream, size_t N, int D, int K,
                                 const double *__restrict__ par, double *__restrict__ x) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const uint64_t B = gfi_cu_mix_blocks(D);
  curandStatePhilox4_32_10_t st;
  curand_init(seed, stream, 4 * (uint64_t)i * B, &st);
  gfi_cu_u32x4 w[1 + (GFI_CU_MC_MAXD + 1) / 2];
  for (uint64_t b = 0; b < B; b++) {
    uint4 v = curand4(&st);
    w[b].x = v.x;
    w[b].y = v.y;
    w[b].z = v.z;
    w[b].w = v.w;
  }
  const double *cum = par, *mu = par + K, *chol = mu + (size_t)K * D;
  gfi_cu_mix_point(w, D, K, cum, mu, chol, x + i * D);
}

/* Per-block partial sums of qw (est - p)^2, in a fixed order. */
__global__ void mc_ise_kernel(size_t G, const double *__restrict__ est, const double *__restrict__ p,
                              const double *__restrict__ qw, double *__restrict__ part) {
  __shared__ double sh[256];
  size_t g = (size_t)blockIdx.x * 256 + threadIdx.x;
  double e = 0;
  if (g < G) {
    double d = est[g] - p[g];
    e = qw[g] * d * d;
  }
  sh[threadIdx.x] = e;
  __syncthreads();
  for (int o = 128; o > 0; o >>= 1) {
    if ((int)threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

/* cum (K), means (K D), lower Cholesky factors (K D D) of a mixture. */
static int mixture_params(const gfi_model *m, size_t *Dout, size_t *Kout, double **par) {
  size_t K;
  const double *w, *mu, *cov;
  int st = gfi_model_mixture_parts(m, &K, &w, &mu, &cov);
  if (st) return st;
  size_t D = gfi_model_dim(m);
  if (D > GFI_CU_MC_MAXD) return GFI_EUNSUPPORTED;
  double *p = (double *)calloc(K * (1 + D + D * D), sizeof *p);
  if (!p) return GFI_ENOMEM;
  double sum = 0, tot = 0;
  for (size_t a = 0; a < K; a++) tot += w[a];
  for (size_t a = 0; a < K; a++) p[a] = (sum += w[a]) / tot;
  p[K - 1] = 1.0;
  memcpy(p + K, mu, K * D * sizeof *p);
  for (size_t a = 0; a < K; a++) {
    const double *C = cov + a * D * D;
    double *L = p + K + K * D + a * D * D;
    for (size_t r = 0; r < D; r++)
      for (size_t c = 0; c <= r; c++) {
        double s = C[r * D + c];
        for (size_t k = 0; k < c; k++) s -= L[r * D + k] * L[c * D + k];
        if (r == c) {
          if (!(s > 0)) {
            free(p);
            return GFI_ENOTPD;
          }
          L[r * D + r] = sqrt(s);
        } else {
          L[r * D + c] = s / L[c * D + c];
        }
      }
  }
  *Dout = D;
  *Kout = K;
  *par = p;
  return GFI_OK;
}

int gfi_cu_mixture_upload(const gfi_model *m, size_t *D, size_t *K, double **dpar, cudaStream_t s) {
  double *p;
  int st = mixture_params(m, D, K, &p);
  if (st) return st;
  size_t n = *K * (1 + *D + *D * *D);
  cudaError_t e = cudaMalloc(dpar, n * sizeof *p);
  if (e == cudaSuccess) e = cudaMemcpyAsync(*dpar, p, n * sizeof *p, cudaMemcpyHostToDevice, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  free(p);
  return gfi_cu_status(e);
}

cudaError_t gfi_cu_mixture_launch(uint64_t seed, uint64_t stream, size_t N, size_t D, size_t K,
                                  const double *par, double *x, cudaStream_t s) {
  GFI_LAUNCH((unsigned)((N + 127) / 128), 128, 0, s, mc_sample_kernel)(seed, stream, N, (int)D, (int)K, par, x);
  return cudaGetLastError();
}

extern "C" int gfi_cuda_mixture_sample(const gfi_model *m, uint64_t seed, uint64_t stream, size_t N,
                                       double *x, const gfi_cuda_opts *opts) {
  if (!m || !x) return GFI_EINVAL;
  if (N == 0) return GFI_EEMPTY;
  gfi_cuda_opts o;
  int st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  size_t D, K;
  double *par = NULL, *xd, *xown = NULL;
  st = gfi_cu_mixture_upload(m, &D, &K, &par, s);
  if (st) return st;
  st = gfi_cu_out(x, N * D, &xd, &xown);
  if (!st) st = gfi_cu_status(gfi_cu_mixture_launch(seed, stream, N, D, K, par, xd, s));
  if (!st) st = gfi_cu_out_finish(x, N * D, s, xown);
  else cudaFree(xown);
  if (!st && xown) cudaFree(xown);
  cudaFree(par);
  return st;
}

extern "C" int gfi_cuda_mc_ise(const gfi_model *m, const gfi_kernel *k, const double *R, size_t N,
                               uint64_t seed, uint64_t first_rep, size_t nrep, size_t G,
                               const double *at, const double *qw, double *ise,
                               const gfi_cuda_opts *opts) {
  if (!m || !k || !R || !at || !qw || !ise) return GFI_EINVAL;
  if (N == 0 || G == 0) return GFI_EEMPTY;
  if (nrep == 0) return GFI_OK;
  gfi_cuda_opts o;
  int st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  size_t D, K, nb = (G + 255) / 256;
  double *par = NULL, *x = NULL, *est = NULL, *pd = NULL, *part = NULL, *ph = NULL, *parth = NULL;
  double *atown = NULL, *qwown = NULL, *athown = NULL;
  const double *atd, *qwd, *ath;
  st = gfi_cu_mixture_upload(m, &D, &K, &par, s);
  if (st) return st;
  st = gfi_cu_in(at, G * D, s, &atd, &atown);
  if (!st) st = gfi_cu_in(qw, G, s, &qwd, &qwown);
  if (!st) st = gfi_cu_host(at, G * D, &ath, &athown);
  ph = (double *)malloc(G * sizeof *ph);
  parth = (double *)malloc(nb * sizeof *parth);
  if (!st && (!ph || !parth)) st = GFI_ENOMEM;
  if (!st) st = gfi_model_pdf(m, G, ath, ph);
  if (st) goto done;
  GFI_CU_TRY(cudaMalloc(&x, N * D * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&est, G * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&pd, G * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&part, nb * sizeof(double)));
  GFI_CU_TRY(cudaMemcpyAsync(pd, ph, G * sizeof(double), cudaMemcpyHostToDevice, s));
  for (size_t r = 0; r < nrep; r++) {
    GFI_CU_TRY(gfi_cu_mixture_launch(seed, first_rep + r, N, D, K, par, x, s));
    gfi_cuda_density_plan *p;
    st = gfi_cuda_density_plan_fourier(&p, k, N, D, x, NULL, R, &o);
    if (st) goto done;
    st = gfi_cuda_density_eval(p, G, atd, est);
    gfi_cuda_density_destroy(p);
    if (st) goto done;
    GFI_LAUNCH((unsigned)nb, 256, 0, s, mc_ise_kernel)(G, est, pd, qwd, part);
    GFI_CU_TRY(cudaGetLastError());
    GFI_CU_TRY(cudaMemcpyAsync(parth, part, nb * sizeof(double), cudaMemcpyDeviceToHost, s));
    GFI_CU_TRY(cudaStreamSynchronize(s));
    double sum = 0;
    for (size_t b = 0; b < nb; b++) sum += parth[b];
    ise[r] = sum;
  }
done:
  cudaFree(par);
  cudaFree(x);
  cudaFree(est);
  cudaFree(pd);
  cudaFree(part);
  cudaFree(atown);
  cudaFree(qwown);
  free(athown);
  free(ph);
  free(parth);
  return st;
}
