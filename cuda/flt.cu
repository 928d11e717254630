/* FLT feature construction and the error of one feature draw over the
 * distinct position differences, on the GPU. Phases are reduced to turns
 * t - rint(t) in double and passed to sincospi, as the CPU reduces them to
 * [-pi, pi] before sin/cos. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "gfi_cuda_math.h"

__global__ void flt_factors_kernel(int kind, size_t L, int ell, const double *__restrict__ pos,
                                   size_t r, const double *__restrict__ xi,
                                   const double *__restrict__ w, double *__restrict__ N1,
                                   double *__restrict__ N2) {
  size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= L * r) return;
  size_t i = t / r, k = t % r;
  double s, c;
  sincospi(2.0 * gfi_cu_flt_turns(pos + i * ell, xi + k * ell, ell), &s, &c);
  double m = sqrt(fabs(w[k]) / (double)r);
  if (kind == GFI_FLT_COMPLEX) {
    double sr = w[k] >= 0 ? m : 0, si = w[k] >= 0 ? 0 : m;
    double *a1 = N1 + 2 * (i * r + k), *a2 = N2 + 2 * (i * r + k);
    a1[0] = sr * c - si * s;
    a1[1] = sr * s + si * c;
    a2[0] = sr * c + si * s;
    a2[1] = -sr * s + si * c;
  } else {
    double sg = w[k] < 0 ? -1.0 : 1.0;
    N1[i * 2 * r + k] = sg * m * c;
    N1[i * 2 * r + r + k] = sg * m * s;
    N2[i * 2 * r + k] = m * c;
    N2[i * 2 * r + r + k] = m * s;
  }
}

/* One thread per difference: sum_k w_k exp(2 pi i d.xi_k). */
__global__ void flt_sum_kernel(size_t nd, int ell, const double *__restrict__ diff, size_t r,
                               const double *__restrict__ xi, const double *__restrict__ w,
                               double *__restrict__ are, double *__restrict__ aim) {
  size_t d = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (d >= nd) return;
  double sr = 0, si = 0;
  for (size_t k = 0; k < r; k++) {
    double s, c;
    sincospi(2.0 * gfi_cu_flt_turns(diff + d * ell, xi + k * ell, ell), &s, &c);
    sr += w[k] * c;
    si += w[k] * s;
  }
  are[d] = sr;
  aim[d] = si;
}

extern "C" int gfi_cuda_flt_factors(gfi_flt_features kind, size_t L, size_t ell, const double *pos,
                                    size_t r, const double *xi, const double *w, double *N1,
                                    double *N2, const gfi_cuda_opts *opts) {
  if (!pos || !xi || !w || !N1 || !N2 || r == 0) return GFI_EINVAL;
  if (kind != GFI_FLT_COMPLEX && kind != GFI_FLT_REAL) return GFI_EINVAL;
  if (L == 0) return GFI_EEMPTY;
  if (ell == 0 || ell > GFI_RPE_MAX_ELL) return GFI_EDIM;
  gfi_cuda_opts o;
  int st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  const double *pd, *xd, *wd;
  double *po = NULL, *xo = NULL, *wo = NULL, *n1, *n2, *n1o = NULL, *n2o = NULL;
  size_t nf = 2 * L * r;
  st = gfi_cu_in(pos, L * ell, s, &pd, &po);
  if (!st) st = gfi_cu_in(xi, r * ell, s, &xd, &xo);
  if (!st) st = gfi_cu_in(w, r, s, &wd, &wo);
  if (!st) st = gfi_cu_out(N1, nf, &n1, &n1o);
  if (!st) st = gfi_cu_out(N2, nf, &n2, &n2o);
  if (!st) {
    GFI_LAUNCH((unsigned)((L * r + 255) / 256), 256, 0, s, flt_factors_kernel)((int)kind, L, (int)ell, pd, r, xd,
                                                                        wd, n1, n2);
    st = gfi_cu_status(cudaGetLastError());
  }
  if (!st) st = gfi_cu_out_finish(N1, nf, s, n1o);
  if (!st) st = gfi_cu_out_finish(N2, nf, s, n2o);
  cudaFree(po);
  cudaFree(xo);
  cudaFree(wo);
  cudaFree(n1o);
  cudaFree(n2o);
  return st;
}

extern "C" int gfi_cuda_flt_error(const gfi_rpe *rpe, const gfi_flt_positions *P,
                                  gfi_flt_features kind, size_t r, const double *xi,
                                  const double *w, gfi_flt_err *err, const gfi_cuda_opts *opts) {
  if (!rpe || !P || !xi || !w || !err || r == 0) return GFI_EINVAL;
  size_t ell = gfi_flt_positions_ell(P), nd = gfi_flt_positions_ndiff(P);
  if (gfi_rpe_dim(rpe) != ell) return GFI_EDIM;
  gfi_cuda_opts o;
  int st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  double *dh = (double *)malloc(nd * ell * sizeof *dh), *mult = (double *)malloc(nd * sizeof *mult);
  double *fre = (double *)malloc(nd * sizeof *fre), *fim = (double *)malloc(nd * sizeof *fim);
  double *are = (double *)malloc(nd * sizeof *are), *aim = (double *)malloc(nd * sizeof *aim);
  double *dd = NULL, *ad = NULL, *xo = NULL, *wo = NULL;
  const double *xd, *wd;
  if (!dh || !mult || !fre || !fim || !are || !aim) {
    st = GFI_ENOMEM;
    goto done;
  }
  for (size_t k = 0; k < nd; k++)
    memcpy(dh + k * ell, gfi_flt_positions_diff(P, k, &mult[k]), ell * sizeof *dh);
  st = gfi_rpe_f(rpe, nd, dh, fre, fim);
  if (st) goto done;
  st = gfi_cu_in(xi, r * ell, s, &xd, &xo);
  if (!st) st = gfi_cu_in(w, r, s, &wd, &wo);
  if (st) goto done;
  GFI_CU_TRY(cudaMalloc(&dd, nd * ell * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&ad, 2 * nd * sizeof(double)));
  GFI_CU_TRY(cudaMemcpyAsync(dd, dh, nd * ell * sizeof(double), cudaMemcpyHostToDevice, s));
  GFI_LAUNCH((unsigned)((nd + 127) / 128), 128, 0, s, flt_sum_kernel)(nd, (int)ell, dd, r, xd, wd, ad, ad + nd);
  GFI_CU_TRY(cudaGetLastError());
  GFI_CU_TRY(cudaMemcpyAsync(are, ad, nd * sizeof(double), cudaMemcpyDeviceToHost, s));
  GFI_CU_TRY(cudaMemcpyAsync(aim, ad + nd, nd * sizeof(double), cudaMemcpyDeviceToHost, s));
  GFI_CU_TRY(cudaStreamSynchronize(s));
  {
    /* the metrics of gfi_flt_error_trials (flt.c), differences in order */
    double mx = 0, mxr = 0, fr2 = 0, n2 = 0;
    for (size_t d = 0; d < nd; d++) {
      double er = are[d] / (double)r - fre[d], e2 = er * er;
      if (kind == GFI_FLT_COMPLEX) {
        double ei = aim[d] / (double)r - fim[d];
        e2 += ei * ei;
        n2 += mult[d] * (fre[d] * fre[d] + fim[d] * fim[d]);
      } else {
        n2 += mult[d] * fre[d] * fre[d];
      }
      double e = sqrt(e2);
      if (e > mx) mx = e;
      if (fabs(er) > mxr) mxr = fabs(er);
      fr2 += mult[d] * e2;
    }
    err->max_abs = mx;
    err->max_re = mxr;
    err->frob = sqrt(fr2);
    err->rel = n2 > 0 ? sqrt(fr2 / n2) : INFINITY;
  }
done:
  cudaFree(dd);
  cudaFree(ad);
  cudaFree(xo);
  cudaFree(wo);
  free(dh);
  free(mult);
  free(fre);
  free(fim);
  free(are);
  free(aim);
  return st;
}
