/* GPU density and Nadaraya-Watson plans on the pair-sum kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pairsum.cuh"
#include "gfi/validate.h"
#include "gfi/regression.h"

#define PS_QBATCH ((size_t)1 << 17) /* queries per launch: bounds the partial sums */

/* Tables shared by both plans. */
struct ps_data {
  int D, prec;
  gfi_cu_kern kern; /* the kernel as the device code gets it */
  size_t N, Np, chunk, nsplit;
  double R[PS_MAXD];
  void *ktab, *kw; /* T arrays: 3 D Np and Np */
  int *bad;        /* device flag word */
};

static size_t tsize(int prec) { return prec == GFI_CUDA_F32 ? sizeof(float) : sizeof(double); }

static void ps_data_free(ps_data *d) {
  cudaFree(d->ktab);
  cudaFree(d->kw);
  cudaFree(d->bad);
  d->ktab = d->kw = NULL;
  d->bad = NULL;
}

static int prep_any(int prec, const double *xd, size_t n, size_t npad, int D, const double *R,
                    void *tab, int *bad, cudaStream_t s) {
  return prec == GFI_CUDA_F32 ? ps_prep<float>(xd, n, npad, D, R, (float *)tab, bad, s)
                              : ps_prep<double>(xd, n, npad, D, R, (double *)tab, bad, s);
}

/* kw[i] = 1 for i < n, 0 for the padding. */
template <typename T> __global__ void ps_fill_ones(T *kw, size_t n, size_t npad) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < npad) kw[i] = i < n ? (T)1 : (T)0;
}

/* Upload n host doubles as T into dst (npad entries, zero-padded). */
static int upload_t(int prec, const double *h, size_t n, size_t stride, size_t npad, void *dst,
                    cudaStream_t s) {
  size_t ts = tsize(prec);
  void *b = calloc(npad ? npad : 1, ts);
  if (!b) return GFI_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    double v = h ? h[i * stride] : 1.0;
    if (prec == GFI_CUDA_F32)
      ((float *)b)[i] = (float)v;
    else
      ((double *)b)[i] = v;
  }
  cudaError_t e = cudaMemcpyAsync(dst, b, npad * ts, cudaMemcpyHostToDevice, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  free(b);
  return gfi_cu_status(e);
}

/* Validate and build the data tables; wn: host weights normalised to mean 1
 * (NULL: all ones). */
static int ps_data_make(ps_data *d, const gfi_kernel *k, size_t N, size_t D, const double *x,
                        const double *R, const double *wn, int prec, cudaStream_t s) {
  memset(d, 0, sizeof *d);
  int st = gfi_cu_kern_make(k, 1, "k", &d->kern);
  if (st) return st;
  d->D = (int)D;
  d->prec = prec;
  d->N = N;
  for (size_t j = 0; j < D; j++) d->R[j] = R[j];
  ps_chunks(N, &d->Np, &d->chunk, &d->nsplit);
  const double *xd = NULL;
  double *xown = NULL;
  size_t ts = tsize(prec);
  st = gfi_cu_in(x, N * D, s, &xd, &xown);
  if (st) goto done;
  GFI_CU_TRY(cudaMalloc(&d->ktab, 3 * D * d->Np * ts));
  GFI_CU_TRY(cudaMalloc(&d->kw, d->Np * ts));
  GFI_CU_TRY(cudaMalloc(&d->bad, sizeof(int)));
  GFI_CU_TRY(cudaMemsetAsync(d->bad, 0, sizeof(int), s));
  st = prep_any(prec, xd, N, d->Np, (int)D, R, d->ktab, d->bad, s);
  if (st) goto done;
  if (wn) {
    st = upload_t(prec, wn, N, 1, d->Np, d->kw, s);
    if (st) goto done;
  } else {
    unsigned nb = (unsigned)((d->Np + 255) / 256);
    if (prec == GFI_CUDA_F32)
      GFI_LAUNCH(nb, 256, 0, s, ps_fill_ones<float>)((float *)d->kw, N, d->Np);
    else
      GFI_LAUNCH(nb, 256, 0, s, ps_fill_ones<double>)((double *)d->kw, N, d->Np);
    GFI_CU_TRY(cudaGetLastError());
  }
  st = ps_check_bad(d->bad, s);
done:
  cudaFree(xown);
  if (st) ps_data_free(d);
  return st;
}

/* Common checks of both plan constructors: power and polynomial phi (a
 * custom phi or another band-limited family: GFI_EUNSUPPORTED, named k). */
static int check_plan(const gfi_kernel *k, size_t N, size_t D, const double *x, const double *R) {
  if (!k || !x || !R) return GFI_EINVAL;
  if (k->kind != GFI_PHI_POW && k->kind != GFI_PHI_POLY)
    return fail_param(k->kind == GFI_PHI_CUSTOM || gfi_kernel_check_band(k) == GFI_OK ? GFI_EUNSUPPORTED : GFI_EINVAL,
                      "k");
  int st = gfi_check_order(k->l);
  if (st) return st;
  if (k->kind == GFI_PHI_POLY && (st = gfi_kernel_check_band(k)) != GFI_OK) return fail_param(st, "k");
  if (N == 0) return GFI_EEMPTY;
  st = gfi_check_dim(D);
  if (st) return st;
  if (D > PS_MAXD) return GFI_EUNSUPPORTED;
  if (N > ((size_t)1 << 52) / D) return GFI_EDIM;
  return gfi_check_radii(R, D, NULL);
}

/* Sums over the data for M queries at q (device, M x D) into out (device,
 * M x nacc): out = scale * sum. ky: NW responses (4 per point) or NULL. */
static int ps_eval(ps_data *d, size_t M, const double *q, const void *ky, int Vc, double scale,
                   double *out, cudaStream_t s) {
  const int nw = ky != NULL, nacc = nw ? PS_NACC_NW : 1;
  size_t ts = tsize(d->prec);
  size_t mb = M < PS_QBATCH ? M : PS_QBATCH;
  void *qtab = NULL;
  double *part = NULL;
  int st = GFI_OK;
  GFI_CU_TRY(cudaMalloc(&qtab, 3 * (size_t)d->D * mb * ts));
  GFI_CU_TRY(cudaMalloc(&part, d->nsplit * mb * nacc * sizeof(double)));
  for (size_t q0 = 0; q0 < M; q0 += mb) {
    size_t m = M - q0 < mb ? M - q0 : mb;
    st = prep_any(d->prec, q + q0 * d->D, m, m, d->D, d->R, qtab, d->bad, s);
    if (st) goto done;
    st = ps_check_bad(d->bad, s);
    if (st) goto done;
    cudaError_t e =
        d->prec == GFI_CUDA_F32
            ? ps_launch<float>(nw, d->D, &d->kern, (const float *)qtab, m, (const float *)d->ktab,
                               (const float *)d->kw, (const float *)ky, Vc, d->Np, d->chunk,
                               d->nsplit, part, s)
            : ps_launch<double>(nw, d->D, &d->kern, (const double *)qtab, m, (const double *)d->ktab,
                                (const double *)d->kw, (const double *)ky, Vc, d->Np, d->chunk,
                                d->nsplit, part, s);
    GFI_CU_TRY(e);
    size_t tot = m * nacc;
    GFI_LAUNCH((unsigned)((tot + 255) / 256), 256, 0, s, ps_combine_kernel)(part, d->nsplit, m, nacc, scale,
                                                                     out + q0 * nacc);
    GFI_CU_TRY(cudaGetLastError());
  }
  GFI_CU_TRY(cudaStreamSynchronize(s));
done:
  cudaFree(qtab);
  cudaFree(part);
  return st;
}

/* ================================================================ density */

struct gfi_cuda_density_plan {
  gfi_cuda_opts o;
  ps_data d;
  double scale; /* prod_j R_j / A, divided by N */
};

extern "C" int gfi_cuda_density_plan_fourier(gfi_cuda_density_plan **plan, const gfi_kernel *k,
                                             size_t N, size_t D, const double *data,
                                             const double *weights, const double *R,
                                             const gfi_cuda_opts *opts) {
  if (!plan) return GFI_EINVAL;
  *plan = NULL;
  int st = check_plan(k, N, D, data, R);
  if (st) return st;
  if (!k->A_finite || !isfinite(k->A) || !(k->A > 0)) return GFI_EINFINITE_A;
  double logC = 0;
  for (size_t j = 0; j < D; j++) logC += log(R[j] / k->A);
  if (logC > 700) return GFI_ERANGE;
  gfi_cuda_opts o;
  st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  const double *wh = NULL;
  double *wown = NULL, *wn = NULL;
  if (weights) {
    st = gfi_cu_host(weights, N, &wh, &wown);
    if (st) return st;
    double sum;
    st = gfi_check_weights(wh, N, &sum);
    if (!st) {
      wn = (double *)malloc(N * sizeof *wn);
      if (!wn) st = GFI_ENOMEM;
      else
        for (size_t i = 0; i < N; i++) wn[i] = wh[i] / sum * (double)N;
    }
    free(wown);
    if (st) {
      free(wn);
      return st;
    }
  }
  gfi_cuda_density_plan *p = (gfi_cuda_density_plan *)calloc(1, sizeof *p);
  if (!p) {
    free(wn);
    return GFI_ENOMEM;
  }
  p->o = o;
  st = ps_data_make(&p->d, k, N, D, data, R, wn, o.precision, s);
  free(wn);
  if (st) {
    free(p);
    return st;
  }
  p->scale = exp(logC) / (double)N;
  *plan = p;
  return GFI_OK;
}

extern "C" int gfi_cuda_density_eval(gfi_cuda_density_plan *p, size_t M, const double *queries,
                                     double *out) {
  if (!p) return GFI_EINVAL;
  if (M == 0) return GFI_OK;
  if (!queries || !out) return GFI_EINVAL;
  if (M > ((size_t)1 << 52) / p->d.D) return GFI_EDIM;
  int st = gfi_cu_status(cudaSetDevice(p->o.device));
  if (st) return st;
  cudaStream_t s = (cudaStream_t)p->o.stream;
  const double *qd;
  double *qown, *od, *oown;
  st = gfi_cu_in(queries, M * p->d.D, s, &qd, &qown);
  if (st) return st;
  st = gfi_cu_out(out, M, &od, &oown);
  if (!st) st = ps_eval(&p->d, M, qd, NULL, 0, p->scale, od, s);
  if (!st) st = gfi_cu_out_finish(out, M, s, oown);
  else cudaFree(oown), oown = NULL;
  cudaFree(qown);
  if (oown) cudaFree(oown);
  return st;
}

extern "C" void gfi_cuda_density_destroy(gfi_cuda_density_plan *p) {
  if (!p) return;
  ps_data_free(&p->d);
  free(p);
}

/* ====================================================== Nadaraya-Watson */

struct gfi_cuda_nw_plan {
  gfi_cuda_opts o;
  ps_data d;
  size_t V, nchunk; /* responses, in chunks of 4 */
  void *ky;         /* T: nchunk x Np x 4 */
  double tol;
  gfi_nw_plan *cpu; /* the same estimator on the CPU, for underflowing rows */
};

extern "C" void gfi_cuda_nw_destroy(gfi_cuda_nw_plan *p) {
  if (!p) return;
  ps_data_free(&p->d);
  cudaFree(p->ky);
  gfi_nw_destroy(p->cpu);
  free(p);
}

extern "C" int gfi_cuda_nw_plan_fourier(gfi_cuda_nw_plan **plan, const gfi_kernel *k, size_t N,
                                        size_t D, size_t V, const double *x, const double *y,
                                        const double *R, const gfi_cuda_opts *opts) {
  if (!plan) return GFI_EINVAL;
  *plan = NULL;
  if (!y || V == 0) return GFI_EINVAL;
  int st = check_plan(k, N, D, x, R);
  if (st) return st;
  gfi_cuda_opts o;
  st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  const double *xh, *yh;
  double *xown = NULL, *yown = NULL;
  gfi_cuda_nw_plan *p = (gfi_cuda_nw_plan *)calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->o = o;
  p->V = V;
  p->nchunk = (V + 3) / 4;
  p->tol = GFI_NW_DENOM_TOL;
  st = gfi_cu_host(x, N * D, &xh, &xown);
  if (!st) st = gfi_cu_host(y, N * V, &yh, &yown);
  /* The CPU plan validates x, y and R exactly as gfi_nw_plan_fourier does. */
  if (!st) st = gfi_nw_plan_fourier(&p->cpu, k, N, D, V, xh, yh, R, NULL);
  if (!st) st = ps_data_make(&p->d, k, N, D, xh, R, NULL, o.precision, s);
  if (!st) {
    size_t ts = tsize(o.precision), Np = p->d.Np;
    cudaError_t e = cudaMalloc(&p->ky, p->nchunk * Np * 4 * ts);
    st = gfi_cu_status(e);
    double *tmp = st ? NULL : (double *)calloc(Np * 4, sizeof *tmp);
    if (!st && !tmp) st = GFI_ENOMEM;
    for (size_t c = 0; c < p->nchunk && !st; c++) {
      for (size_t i = 0; i < N; i++)
        for (size_t a = 0; a < 4; a++) tmp[i * 4 + a] = 4 * c + a < V ? yh[i * V + 4 * c + a] : 0.0;
      st = upload_t(o.precision, tmp, Np * 4, 1, Np * 4, (char *)p->ky + c * Np * 4 * ts, s);
    }
    free(tmp);
  }
  free(xown);
  free(yown);
  if (st) {
    gfi_cuda_nw_destroy(p);
    return st;
  }
  *plan = p;
  return GFI_OK;
}

extern "C" int gfi_cuda_nw_set_denom_tol(gfi_cuda_nw_plan *p, double tol) {
  if (!p || !(tol >= 0 && tol < 1)) return GFI_EINVAL;
  p->tol = tol;
  return gfi_nw_set_denom_tol(p->cpu, tol);
}

extern "C" int gfi_cuda_nw_eval(gfi_cuda_nw_plan *p, size_t M, const double *queries, double *out,
                                size_t *nflagged, unsigned char *flags, double *denom) {
  if (nflagged) *nflagged = 0;
  if (!p) return GFI_EINVAL;
  if (M == 0) return GFI_OK;
  if (!queries || !out) return GFI_EINVAL;
  const size_t D = p->d.D, V = p->V, Np = p->d.Np;
  if (M > ((size_t)1 << 52) / (D + V)) return GFI_EDIM;
  int st = gfi_cu_status(cudaSetDevice(p->o.device));
  if (st) return st;
  cudaStream_t s = (cudaStream_t)p->o.stream;
  const double underflow = p->o.precision == GFI_CUDA_F32 ? 0x1p-60 : 0x1p-600;
  const double *qd, *qh = NULL;
  double *qown = NULL, *qhown = NULL, *sums = NULL, *hs = NULL, *ho = NULL, *qsub = NULL,
         *osub = NULL;
  unsigned char *fl = NULL, *fsub = NULL;
  size_t *redo = NULL, nredo = 0, nfl = 0;
  st = gfi_cu_in(queries, M * D, s, &qd, &qown);
  if (st) return st;
  hs = (double *)malloc(M * PS_NACC_NW * sizeof *hs);
  ho = (double *)malloc(M * V * sizeof *ho);
  fl = (unsigned char *)malloc(M);
  redo = (size_t *)malloc(M * sizeof *redo);
  if (!hs || !ho || !fl || !redo) {
    st = GFI_ENOMEM;
    goto done;
  }
  GFI_CU_TRY(cudaMalloc(&sums, M * PS_NACC_NW * sizeof(double)));
  for (size_t c = 0; c < p->nchunk; c++) {
    int Vc = (int)(V - 4 * c < 4 ? V - 4 * c : 4);
    const char *ky = (const char *)p->ky + c * Np * 4 * tsize(p->o.precision);
    st = ps_eval(&p->d, M, qd, ky, Vc, 1.0, sums, s);
    if (st) goto done;
    GFI_CU_TRY(cudaMemcpy(hs, sums, M * PS_NACC_NW * sizeof(double), cudaMemcpyDeviceToHost));
    for (size_t q = 0; q < M; q++) {
      const double *r = hs + q * PS_NACC_NW;
      double S = r[0], A = r[1];
      if (c == 0) {
        fl[q] = A == 0 ? GFI_NW_FLAG_EMPTY
                       : S < 0 ? GFI_NW_FLAG_NEGATIVE
                               : !(S > p->tol * A) ? GFI_NW_FLAG_SMALL : GFI_NW_FLAG_OK;
        if (A < underflow) { /* includes A == 0: the CPU decides */
          fl[q] = 255;
          redo[nredo++] = q;
        }
        if (denom) denom[q] = A > 0 ? S / A : NAN;
      }
      for (int a = 0; a < Vc; a++)
        ho[q * V + 4 * c + a] = fl[q] == GFI_NW_FLAG_OK ? r[2 + a] / S : NAN;
    }
  }
  if (nredo) {
    const double *qsrc;
    st = gfi_cu_host(queries, M * D, &qsrc, &qhown);
    if (st) goto done;
    qh = qsrc;
    qsub = (double *)malloc(nredo * D * sizeof *qsub);
    osub = (double *)malloc(nredo * (V + 1) * sizeof *osub);
    fsub = (unsigned char *)malloc(nredo);
    if (!qsub || !osub || !fsub) {
      st = GFI_ENOMEM;
      goto done;
    }
    for (size_t r = 0; r < nredo; r++) memcpy(qsub + r * D, qh + redo[r] * D, D * sizeof *qsub);
    double *dsub = osub + nredo * V;
    st = gfi_nw_eval_flags(p->cpu, nredo, qsub, osub, NULL, fsub, dsub);
    if (st && st != GFI_EDENOM) goto done;
    st = GFI_OK;
    for (size_t r = 0; r < nredo; r++) {
      size_t q = redo[r];
      fl[q] = fsub[r];
      memcpy(ho + q * V, osub + r * V, V * sizeof *ho);
      if (denom) denom[q] = dsub[r];
    }
  }
  for (size_t q = 0; q < M; q++) {
    if (fl[q] != GFI_NW_FLAG_OK) nfl++;
    if (flags) flags[q] = fl[q];
  }
  if (gfi_cu_is_device(out))
    GFI_CU_TRY(cudaMemcpy(out, ho, M * V * sizeof *ho, cudaMemcpyHostToDevice));
  else
    memcpy(out, ho, M * V * sizeof *ho);
  if (nflagged) *nflagged = nfl;
  st = nfl ? GFI_EDENOM : GFI_OK;
done:
  cudaFree(qown);
  cudaFree(sums);
  free(qhown);
  free(hs);
  free(ho);
  free(fl);
  free(redo);
  free(qsub);
  free(osub);
  free(fsub);
  return st;
}
