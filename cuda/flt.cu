/* FLT feature construction and the error of one feature draw over the
 * distinct position differences, on the GPU. Phases are reduced to turns
 * t - rint(t) in double and passed to sincospi, as the CPU reduces them to
 * [-pi, pi] before sin/cos. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "gfi_cuda_math.h"
#include "gfi/progress.h"
#include "gfi/rng.h"

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

/* One thread per difference: sum_k w_k exp(2 pi i d.xi_k), stored, or added
 * to the sums there (add = 1: nested feature counts). */
__global__ void flt_sum_kernel(size_t nd, int ell, const double *__restrict__ diff, size_t r,
                               const double *__restrict__ xi, const double *__restrict__ w,
                               double *__restrict__ are, double *__restrict__ aim, int add) {
  size_t d = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (d >= nd) return;
  double sr = 0, si = 0;
  for (size_t k = 0; k < r; k++) {
    double s, c;
    sincospi(2.0 * gfi_cu_flt_turns(diff + d * ell, xi + k * ell, ell), &s, &c);
    sr += w[k] * c;
    si += w[k] * s;
  }
  if (add) {
    sr += are[d];
    si += aim[d];
  }
  are[d] = sr;
  aim[d] = si;
}

/* The metrics of gfi_flt_error_trials (flt.c), differences in order:
 * m = {max_abs, max_re, frob, rel} from the sums of r features. */
static void flt_metrics(gfi_flt_features kind, size_t nd, const double *mult, const double *fre,
                        const double *fim, const double *are, const double *aim, double r,
                        double n2, double *m) {
  double mx = 0, mxr = 0, fr2 = 0;
  for (size_t d = 0; d < nd; d++) {
    double er = are[d] / r - fre[d], e2 = er * er;
    if (kind == GFI_FLT_COMPLEX) {
      double ei = aim[d] / r - fim[d];
      e2 += ei * ei;
    }
    double e = sqrt(e2);
    if (e > mx) mx = e;
    if (fabs(er) > mxr) mxr = fabs(er);
    fr2 += mult[d] * e2;
  }
  m[0] = mx;
  m[1] = mxr;
  m[2] = sqrt(fr2);
  m[3] = n2 > 0 ? sqrt(fr2 / n2) : INFINITY;
}

/* ||N||_F^2 over all L^2 entries (the imaginary part only for complex features). */
static double flt_norm2(gfi_flt_features kind, size_t nd, const double *mult, const double *fre,
                        const double *fim) {
  double n2 = 0;
  for (size_t d = 0; d < nd; d++)
    n2 += mult[d] * (fre[d] * fre[d] + (kind == GFI_FLT_COMPLEX ? fim[d] * fim[d] : 0.0));
  return n2;
}

/* Host tables of the distinct differences: dh (nd x ell), mult, the exact f. */
static int flt_tables(const gfi_rpe *rpe, const gfi_flt_positions *P, double **dh, double **mult,
                      double **fre, double **fim) {
  size_t ell = gfi_flt_positions_ell(P), nd = gfi_flt_positions_ndiff(P);
  *dh = (double *)malloc(nd * ell * sizeof **dh);
  *mult = (double *)malloc(nd * sizeof **mult);
  *fre = (double *)malloc(nd * sizeof **fre);
  *fim = (double *)malloc(nd * sizeof **fim);
  if (!*dh || !*mult || !*fre || !*fim) return GFI_ENOMEM;
  for (size_t k = 0; k < nd; k++)
    memcpy(*dh + k * ell, gfi_flt_positions_diff(P, k, &(*mult)[k]), ell * sizeof **dh);
  return gfi_rpe_f(rpe, nd, *dh, *fre, *fim);
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
  double *dh = NULL, *mult = NULL, *fre = NULL, *fim = NULL;
  double *are = (double *)malloc(nd * sizeof *are), *aim = (double *)malloc(nd * sizeof *aim);
  double *dd = NULL, *ad = NULL, *xo = NULL, *wo = NULL;
  const double *xd, *wd;
  st = flt_tables(rpe, P, &dh, &mult, &fre, &fim);
  if (!st && (!are || !aim)) st = GFI_ENOMEM;
  if (st) goto done;
  st = gfi_cu_in(xi, r * ell, s, &xd, &xo);
  if (!st) st = gfi_cu_in(w, r, s, &wd, &wo);
  if (st) goto done;
  GFI_CU_TRY(cudaMalloc(&dd, nd * ell * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&ad, 2 * nd * sizeof(double)));
  GFI_CU_TRY(cudaMemcpyAsync(dd, dh, nd * ell * sizeof(double), cudaMemcpyHostToDevice, s));
  GFI_LAUNCH((unsigned)((nd + 127) / 128), 128, 0, s, flt_sum_kernel)(nd, (int)ell, dd, r, xd, wd, ad,
                                                                      ad + nd, 0);
  GFI_CU_TRY(cudaGetLastError());
  GFI_CU_TRY(cudaMemcpyAsync(are, ad, nd * sizeof(double), cudaMemcpyDeviceToHost, s));
  GFI_CU_TRY(cudaMemcpyAsync(aim, ad + nd, nd * sizeof(double), cudaMemcpyDeviceToHost, s));
  GFI_CU_TRY(cudaStreamSynchronize(s));
  {
    double m[GFI_FLT_NMETRICS];
    flt_metrics(kind, nd, mult, fre, fim, are, aim, (double)r, flt_norm2(kind, nd, mult, fre, fim), m);
    err->max_abs = m[0];
    err->max_re = m[1];
    err->frob = m[2];
    err->rel = m[3];
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

extern "C" int gfi_cuda_flt_error_trials(const gfi_rpe *rpe, const gfi_proposal *p,
                                         const gfi_flt_positions *P, size_t nr, const size_t *rs,
                                         size_t ntrials, const gfi_flt_opts *fo, double *out,
                                         const gfi_cuda_opts *opts) {
  if (!rpe || !p || !P || !rs || !out || nr == 0) return GFI_EINVAL;
  size_t ell = gfi_flt_positions_ell(P), nd = gfi_flt_positions_ndiff(P);
  if (gfi_rpe_dim(rpe) != ell || gfi_proposal_dim(p) != ell) return GFI_EDIM;
  if (ntrials == 0) return GFI_EEMPTY;
  for (size_t i = 0; i < nr; i++)
    if (rs[i] == 0 || (i && rs[i] <= rs[i - 1])) return GFI_EINVAL;
  gfi_flt_opts def;
  gfi_flt_default_opts(&def);
  if (!fo) fo = &def;
  gfi_flt_features kind = fo->features;
  if (kind != GFI_FLT_COMPLEX && kind != GFI_FLT_REAL) return GFI_EINVAL;
  gfi_cuda_opts o;
  int st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  const size_t rmax = rs[nr - 1];
  double *dh = NULL, *mult = NULL, *fre = NULL, *fim = NULL, n2 = 0;
  double *are = (double *)malloc(nd * sizeof *are), *aim = (double *)malloc(nd * sizeof *aim);
  double *xi = (double *)malloc(rmax * ell * sizeof *xi), *w = (double *)malloc(rmax * sizeof *w);
  double *dd = NULL, *ad = NULL, *xd = NULL, *wd = NULL;
  st = flt_tables(rpe, P, &dh, &mult, &fre, &fim);
  if (!st && (!are || !aim || !xi || !w)) st = GFI_ENOMEM;
  if (st) goto done;
  n2 = flt_norm2(kind, nd, mult, fre, fim);
  GFI_CU_TRY(cudaMalloc(&dd, nd * ell * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&ad, 2 * nd * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&xd, rmax * ell * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&wd, rmax * sizeof(double)));
  GFI_CU_TRY(cudaMemcpyAsync(dd, dh, nd * ell * sizeof(double), cudaMemcpyHostToDevice, s));
  for (size_t k = 0; k < ntrials && !st; k++) {
    /* trial k draws on stream (seed, k), as gfi_replicate gives the CPU path */
    gsl_rng *g = gfi_rng_stream(fo->base.seed, k);
    if (!g) {
      st = GFI_ENOMEM;
      break;
    }
    st = gfi_flt_draw(rpe, p, g, rmax, xi, w);
    gsl_rng_free(g);
    if (st) break;
    GFI_CU_TRY(cudaMemcpyAsync(xd, xi, rmax * ell * sizeof(double), cudaMemcpyHostToDevice, s));
    GFI_CU_TRY(cudaMemcpyAsync(wd, w, rmax * sizeof(double), cudaMemcpyHostToDevice, s));
    size_t done = 0;
    for (size_t i = 0; i < nr; i++) {
      GFI_LAUNCH((unsigned)((nd + 127) / 128), 128, 0, s, flt_sum_kernel)(
          nd, (int)ell, dd, rs[i] - done, xd + done * ell, wd + done, ad, ad + nd, done > 0);
      GFI_CU_TRY(cudaGetLastError());
      done = rs[i];
      GFI_CU_TRY(cudaMemcpyAsync(are, ad, nd * sizeof(double), cudaMemcpyDeviceToHost, s));
      GFI_CU_TRY(cudaMemcpyAsync(aim, ad + nd, nd * sizeof(double), cudaMemcpyDeviceToHost, s));
      GFI_CU_TRY(cudaStreamSynchronize(s));
      flt_metrics(kind, nd, mult, fre, fim, are, aim, (double)done, n2,
                  out + (k * nr + i) * GFI_FLT_NMETRICS);
    }
    if (fo->progress) gfi_progress_add(fo->progress, 1);
  }
done:
  cudaFree(dd);
  cudaFree(ad);
  cudaFree(xd);
  cudaFree(wd);
  free(dh);
  free(mult);
  free(fre);
  free(fim);
  free(are);
  free(aim);
  free(xi);
  free(w);
  return st;
}
