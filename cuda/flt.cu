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

/* The distinct differences of P on the host and the device, the exact f
 * there, ||N||_F^2 and the sum buffers: what every error measurement of one
 * (rpe, P, kind) shares. */
typedef struct {
  gfi_flt_features kind;
  size_t nd, ell;
  double *mult, *fre, *fim, *are, *aim; /* host */
  double *dd, *ad;                      /* device: differences, sums (re then im) */
  double n2;
  cudaStream_t s;
} flt_eval;

static void flt_eval_free(flt_eval *e) {
  cudaFree(e->dd);
  cudaFree(e->ad);
  free(e->mult);
  free(e->fre);
  free(e->fim);
  free(e->are);
  free(e->aim);
}

static int flt_eval_init(flt_eval *e, const gfi_rpe *rpe, const gfi_flt_positions *P,
                         gfi_flt_features kind, cudaStream_t s) {
  memset(e, 0, sizeof *e);
  e->kind = kind;
  e->s = s;
  size_t ell = e->ell = gfi_flt_positions_ell(P), nd = e->nd = gfi_flt_positions_ndiff(P);
  double *dh = (double *)malloc(nd * ell * sizeof *dh);
  e->mult = (double *)malloc(nd * sizeof(double));
  e->fre = (double *)malloc(nd * sizeof(double));
  e->fim = (double *)malloc(nd * sizeof(double));
  e->are = (double *)malloc(nd * sizeof(double));
  e->aim = (double *)malloc(nd * sizeof(double));
  int st = (!dh || !e->mult || !e->fre || !e->fim || !e->are || !e->aim) ? GFI_ENOMEM : GFI_OK;
  if (st) goto done;
  for (size_t k = 0; k < nd; k++)
    memcpy(dh + k * ell, gfi_flt_positions_diff(P, k, &e->mult[k]), ell * sizeof *dh);
  st = gfi_rpe_f(rpe, nd, dh, e->fre, e->fim);
  if (st) goto done;
  for (size_t d = 0; d < nd; d++) /* the imaginary part counts for complex features only */
    e->n2 += e->mult[d] * (e->fre[d] * e->fre[d] + (kind == GFI_FLT_COMPLEX ? e->fim[d] * e->fim[d] : 0.0));
  GFI_CU_TRY(cudaMalloc(&e->dd, nd * ell * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&e->ad, 2 * nd * sizeof(double)));
  GFI_CU_TRY(cudaMemcpyAsync(e->dd, dh, nd * ell * sizeof(double), cudaMemcpyHostToDevice, e->s));
  GFI_CU_TRY(cudaStreamSynchronize(e->s)); /* dh is freed below */
done:
  free(dh);
  if (st) flt_eval_free(e);
  return st;
}

/* Add the sums of r features (device xd, wd) to the running sums (add = 0:
 * start them), then the metrics of all rtot features so far into m. */
static int flt_eval_step(flt_eval *e, const double *xd, const double *wd, size_t r, int add,
                         size_t rtot, double *m) {
  int st = GFI_OK;
  size_t nd = e->nd;
  GFI_LAUNCH((unsigned)((nd + 127) / 128), 128, 0, e->s, flt_sum_kernel)(
      nd, (int)e->ell, e->dd, r, xd, wd, e->ad, e->ad + nd, add);
  GFI_CU_TRY(cudaGetLastError());
  GFI_CU_TRY(cudaMemcpyAsync(e->are, e->ad, nd * sizeof(double), cudaMemcpyDeviceToHost, e->s));
  GFI_CU_TRY(cudaMemcpyAsync(e->aim, e->ad + nd, nd * sizeof(double), cudaMemcpyDeviceToHost, e->s));
  GFI_CU_TRY(cudaStreamSynchronize(e->s));
  flt_metrics(e->kind, nd, e->mult, e->fre, e->fim, e->are, e->aim, (double)rtot, e->n2, m);
done:
  return st;
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
  size_t ell = gfi_flt_positions_ell(P);
  if (gfi_rpe_dim(rpe) != ell) return GFI_EDIM;
  gfi_cuda_opts o;
  int st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  flt_eval e;
  st = flt_eval_init(&e, rpe, P, kind, s);
  if (st) return st;
  double *xo = NULL, *wo = NULL, m[GFI_FLT_NMETRICS];
  const double *xd, *wd;
  st = gfi_cu_in(xi, r * ell, s, &xd, &xo);
  if (!st) st = gfi_cu_in(w, r, s, &wd, &wo);
  if (!st) st = flt_eval_step(&e, xd, wd, r, 0, r, m);
  if (!st) {
    err->max_abs = m[0];
    err->max_re = m[1];
    err->frob = m[2];
    err->rel = m[3];
  }
  cudaFree(xo);
  cudaFree(wo);
  flt_eval_free(&e);
  return st;
}

extern "C" int gfi_cuda_flt_error_trials(const gfi_rpe *rpe, const gfi_proposal *p,
                                         const gfi_flt_positions *P, size_t nr, const size_t *rs,
                                         size_t ntrials, const gfi_flt_opts *fo, double *out,
                                         const gfi_cuda_opts *opts) {
  if (!rpe || !p || !P || !rs || !out || nr == 0) return GFI_EINVAL;
  size_t ell = gfi_flt_positions_ell(P);
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
  flt_eval e;
  st = flt_eval_init(&e, rpe, P, kind, s);
  if (st) return st;
  const size_t rmax = rs[nr - 1];
  double *xi = (double *)malloc(rmax * ell * sizeof *xi), *w = (double *)malloc(rmax * sizeof *w);
  double *xd = NULL, *wd = NULL;
  if (!xi || !w) {
    st = GFI_ENOMEM;
    goto done;
  }
  GFI_CU_TRY(cudaMalloc(&xd, rmax * ell * sizeof(double)));
  GFI_CU_TRY(cudaMalloc(&wd, rmax * sizeof(double)));
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
    for (size_t i = 0; i < nr && !st; i++) { /* nested: add the features done .. rs[i] */
      st = flt_eval_step(&e, xd + done * ell, wd + done, rs[i] - done, done > 0, rs[i],
                         out + (k * nr + i) * GFI_FLT_NMETRICS);
      done = rs[i];
    }
    if (fo->progress) gfi_progress_add(fo->progress, 1);
  }
done:
  cudaFree(xd);
  cudaFree(wd);
  flt_eval_free(&e);
  free(xi);
  free(w);
  return st;
}
