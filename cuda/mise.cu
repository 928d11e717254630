/* Monte-Carlo MISE on the GPU (gfi_cuda_mise_mc): replications sampled on
 * the device (mc.cu) and measured by Plancherel on the nodes the CPU's
 * gfi_ise_plancherel uses (estimators/ise_rule.h): a kernel sums
 * cos/sin(t.x_i) over the points for every node, in double, in chunks whose
 * size depends on N and the node count only; per replication only the D
 * extents max |x_j| (which place the nodes) and the ISE come back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "gfi_cuda_math.h"
#include "ise_rule.h"
#include "gfi/validate.h"
#include "gfi/opts.h"

/* (node, point) products one GPU Plancherel ISE may take (CPU: 2^32). */
#define ISE_GPU_MAX_WORK ((double)(1ULL << 48))
/* Points per shared-memory tile (D = 2) and the largest node tile. */
#define ECF_P 32
#define ECF_TMAX 16

/* Node tile: 16 (default) or 8; changes the launch shape, never a result. */
static int g_tile = ECF_TMAX;

extern "C" int gfi_cuda_mise_set_tile(int t) {
  if (t != 8 && t != 16) return GFI_EINVAL;
  g_tile = t;
  return GFI_OK;
}

/* Per-block maxima of |x_j| over n points of D <= 2 coordinates (a
 * non-finite coordinate counts as +inf): out[block * D + j]. 256 threads. */
__global__ void absmax_kernel(size_t n, int D, const double *__restrict__ x, double *__restrict__ out) {
  __shared__ double sh[2 * 256];
  int tid = threadIdx.x;
  double m[2] = {0, 0};
  for (size_t i = (size_t)blockIdx.x * 256 + tid; i < n; i += (size_t)gridDim.x * 256)
    for (int j = 0; j < D; j++) {
      double a = x[i * D + j];
      a = isfinite(a) ? fabs(a) : INFINITY;
      m[j] = fmax(m[j], a);
    }
  sh[tid] = m[0];
  sh[256 + tid] = m[1];
  __syncthreads();
  for (int o = 128; o > 0; o >>= 1) {
    if (tid < o) {
      sh[tid] = fmax(sh[tid], sh[tid + o]);
      sh[256 + tid] = fmax(sh[256 + tid], sh[256 + tid + o]);
    }
    __syncthreads();
  }
  if (tid == 0)
    for (int j = 0; j < D; j++) out[blockIdx.x * D + j] = sh[256 * j];
}

/* D = 1: part[(c n0 + q) 2 + {0,1}] = sum over chunk c of cos, sin(t_q x_i),
 * summed point after point (the order depends on N and the chunk only). */
__global__ void ecf1_kernel(size_t N, size_t chunk, const double *__restrict__ x, size_t n0,
                            const double *__restrict__ t0, double *__restrict__ part) {
  __shared__ double xs[256];
  size_t c = blockIdx.y, b = c * chunk, e = N - b < chunk ? N : b + chunk;
  size_t q = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  double t = q < n0 ? t0[q] : 0, sr = 0, si = 0;
  for (size_t p0 = b; p0 < e; p0 += 256) {
    size_t B = e - p0 < 256 ? e - p0 : 256;
    for (size_t k = threadIdx.x; k < B; k += blockDim.x) xs[k] = x[p0 + k];
    __syncthreads();
    for (size_t k = 0; k < B; k++) {
      double a = t * xs[k];
      sr += cos(a);
      si += sin(a);
    }
    __syncthreads();
  }
  if (q < n0) {
    part[(c * n0 + q) * 2] = sr;
    part[(c * n0 + q) * 2 + 1] = si;
  }
}

/* D = 2: a T x T tile of nodes (i0, i1) per block; per tile of ECF_P points
 * the block tabulates cos, sin(t0 x_i0) and (t1 x_i1) once and every node
 * forms exp(i t.x) as their product (the CPU's ecf_grid does the same). */
__global__ void ecf2_kernel(size_t N, size_t chunk, const double *__restrict__ x, size_t n0,
                            const double *__restrict__ t0, size_t n1, const double *__restrict__ t1,
                            int T, double *__restrict__ part) {
  __shared__ double c0[ECF_TMAX * ECF_P], s0[ECF_TMAX * ECF_P], c1[ECF_TMAX * ECF_P],
      s1[ECF_TMAX * ECF_P];
  size_t nt1 = (n1 + T - 1) / T;
  size_t base0 = (blockIdx.x / nt1) * T, base1 = (blockIdx.x % nt1) * T;
  int a = threadIdx.x / T, bb = threadIdx.x % T;
  size_t i0 = base0 + a, i1 = base1 + bb;
  size_t c = blockIdx.y, b = c * chunk, e = N - b < chunk ? N : b + chunk;
  double sr = 0, si = 0;
  for (size_t p0 = b; p0 < e; p0 += ECF_P) {
    size_t B = e - p0 < ECF_P ? e - p0 : ECF_P;
    for (int f = threadIdx.x; f < 2 * T * ECF_P; f += blockDim.x) {
      int ax = f / (T * ECF_P), r = (f % (T * ECF_P)) / ECF_P, k = f % ECF_P;
      size_t i = (ax ? base1 : base0) + r, n = ax ? n1 : n0;
      double tv = i < n ? (ax ? t1 : t0)[i] : 0, xv = (size_t)k < B ? x[(p0 + k) * 2 + ax] : 0;
      double ang = tv * xv;
      (ax ? c1 : c0)[r * ECF_P + k] = cos(ang);
      (ax ? s1 : s0)[r * ECF_P + k] = sin(ang);
    }
    __syncthreads();
    for (size_t k = 0; k < B; k++) {
      double cA = c0[a * ECF_P + k], sA = s0[a * ECF_P + k];
      double cB = c1[bb * ECF_P + k], sB = s1[bb * ECF_P + k];
      sr += cA * cB - sA * sB;
      si += sA * cB + cA * sB;
    }
    __syncthreads();
  }
  if (i0 < n0 && i1 < n1) {
    size_t q = i0 * n1 + i1;
    part[(c * n0 * n1 + q) * 2] = sr;
    part[(c * n0 * n1 + q) * 2 + 1] = si;
  }
}

/* Node layout on the device: t0 n0 | t1 n1 | k0 n0 | k1 n1 | w0 n0 | w1 n1 |
 * re nn | im nn (psi at the nodes). */
struct rule_dev {
  size_t n0, n1, nn;
  double *buf;
};

/* Per node: the chunk sums added in chunk order; acc (pooled sums) += them
 * when acc; term[q] = W |(S / Nd) K - psi|^2 when term, as the CPU's
 * gfi_ise_plancherel forms it. */
__global__ void ecf_combine_kernel(size_t nn, size_t n0, size_t n1, size_t nchunk,
                                   const double *__restrict__ part, double Nd,
                                   const double *__restrict__ rb, double *__restrict__ acc,
                                   double *__restrict__ term) {
  size_t q = (size_t)blockIdx.x * 256 + threadIdx.x;
  if (q >= nn) return;
  double sr = 0, si = 0;
  for (size_t c = 0; c < nchunk; c++) {
    sr += part[(c * nn + q) * 2];
    si += part[(c * nn + q) * 2 + 1];
  }
  if (acc) {
    acc[2 * q] += sr;
    acc[2 * q + 1] += si;
  }
  if (term) {
    const double *k0 = rb + n0 + n1, *k1 = k0 + n0, *w0 = k1 + n1, *w1 = w0 + n0;
    const double *re = w1 + n1, *im = re + nn;
    size_t i0 = q / n1, i1 = q % n1;
    double K = k0[i0] * k1[i1], W = w0[i0] * w1[i1];
    double dr = sr / Nd * K - re[q], di = si / Nd * K - im[q];
    term[q] = W * (dr * dr + di * di);
  }
}

/* out[b] = sum of in[b 256 .. b 256 + 255], as a fixed tree. */
__global__ void sum_kernel(size_t n, const double *__restrict__ in, double *__restrict__ out) {
  __shared__ double sh[256];
  size_t g = (size_t)blockIdx.x * 256 + threadIdx.x;
  sh[threadIdx.x] = g < n ? in[g] : 0.0;
  __syncthreads();
  for (int o = 128; o > 0; o >>= 1) {
    if ((int)threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

/* Device buffers that grow as needed and live over all replications. */
struct ws {
  double *part, *term, *red, *ext;
  size_t part_n, term_n, red_n, ext_n;
};

static cudaError_t grow(double **p, size_t *cap, size_t n) {
  if (n <= *cap) return cudaSuccess;
  cudaFree(*p);
  *p = NULL;
  *cap = 0;
  cudaError_t e = cudaMalloc(p, n * sizeof(double));
  if (e == cudaSuccess) *cap = n;
  return e;
}

static void ws_free(ws *w) {
  cudaFree(w->part);
  cudaFree(w->term);
  cudaFree(w->red);
  cudaFree(w->ext);
  memset(w, 0, sizeof *w);
}

/* Largest |x_j| of N device points into xabs[D] (non-finite: +inf). */
static int extents(ws *w, size_t N, size_t D, const double *x, double *xabs, cudaStream_t s) {
  size_t nb = (N + 255) / 256;
  if (nb > 1024) nb = 1024;
  int st = gfi_cu_status(grow(&w->ext, &w->ext_n, (nb + 1) * D));
  if (st) return st;
  GFI_LAUNCH((unsigned)nb, 256, 0, s, absmax_kernel)(N, (int)D, x, w->ext);
  GFI_LAUNCH(1, 256, 0, s, absmax_kernel)(nb, (int)D, w->ext, w->ext + nb * D);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpyAsync(xabs, w->ext + nb * D, D * sizeof(double), cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  return gfi_cu_status(e);
}

/* The rule's nodes, kappa factors, weights and psi at the nodes, uploaded. */
static int rule_upload(const gfi_model *m, const ise_pl_rule *r, const axis_nodes *ax, rule_dev *d,
                       cudaStream_t s) {
  size_t D = r->D, n0 = ax[0].n, n1 = D > 1 ? ax[1].n : 1, nn = n0 * n1;
  size_t tot = 3 * (n0 + n1) + 2 * nn;
  d->n0 = n0;
  d->n1 = n1;
  d->nn = nn;
  d->buf = NULL;
  double *h = (double *)malloc(tot * sizeof *h), *t = (double *)malloc(n1 * D * sizeof *t);
  int st = h && t ? GFI_OK : GFI_ENOMEM;
  if (!st) {
    double *t0 = h, *t1 = t0 + n0, *k0 = t1 + n1, *k1 = k0 + n0, *w0 = k1 + n1, *w1 = w0 + n0;
    double *re = w1 + n1, *im = re + nn;
    memcpy(t0, ax[0].t, n0 * sizeof *t0);
    if (D > 1) memcpy(t1, ax[1].t, n1 * sizeof *t1);
    else t1[0] = 0;
    ise_pl_axis_factors(r, ax, 0, k0, w0);
    ise_pl_axis_factors(r, ax, 1, k1, w1);
    for (size_t i0 = 0; i0 < n0 && !st; i0++) st = ise_pl_cf_row(m, r, ax, i0, t, re + i0 * n1, im + i0 * n1);
  }
  if (!st) {
    cudaError_t e = cudaMalloc(&d->buf, tot * sizeof(double));
    if (e == cudaSuccess) e = cudaMemcpyAsync(d->buf, h, tot * sizeof(double), cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    st = gfi_cu_status(e);
  }
  free(h);
  free(t);
  return st;
}

/* Points per chunk: at least 2048, at most 256 chunks and 2^24 partial
 * (chunk, node) pairs; a function of N and the node count only. */
static size_t ecf_chunk(size_t N, size_t nn) {
  size_t maxc = ((size_t)1 << 24) / nn;
  if (maxc > 256) maxc = 256;
  if (maxc < 1) maxc = 1;
  size_t ch = (N + maxc - 1) / maxc;
  return ch < 2048 ? 2048 : ch;
}

/* The empirical cf sums of N device points on d's nodes. With s_out: the
 * node sum of W |phi_N K - psi|^2 into *s_out; with acc: the raw sums are
 * added to acc (2 nn doubles). */
/* *s_out = the sum of w->term[0..nn): a fixed tree, 256 at a time until one
 * value is left (the order depends on nn only). */
static int tree_sum(ws *w, size_t nn, double *s_out, cudaStream_t s) {
  int st = GFI_OK;
  const double *in = w->term;
  double *out = w->red, *other = w->red + (nn + 255) / 256 + 1;
  size_t n = nn;
  do {
    size_t nb = (n + 255) / 256;
    GFI_LAUNCH((unsigned)nb, 256, 0, s, sum_kernel)(n, in, out);
    GFI_CU_TRY(cudaGetLastError());
    in = out;
    out = out == w->red ? other : w->red;
    n = nb;
  } while (n > 1);
  GFI_CU_TRY(cudaMemcpyAsync(s_out, in, sizeof(double), cudaMemcpyDeviceToHost, s));
  GFI_CU_TRY(cudaStreamSynchronize(s));
done:
  return st;
}

static int ecf_measure(ws *w, size_t N, size_t D, const double *x, const rule_dev *d, double *acc,
                       double *s_out, cudaStream_t s) {
  size_t nn = d->nn, chunk = ecf_chunk(N, nn), nch = (N + chunk - 1) / chunk;
  int st = GFI_OK, T = g_tile;
  const double *t0 = d->buf, *t1 = d->buf + d->n0;
  GFI_CU_TRY(grow(&w->part, &w->part_n, nch * nn * 2));
  GFI_CU_TRY(grow(&w->term, &w->term_n, nn));
  GFI_CU_TRY(grow(&w->red, &w->red_n, 2 * ((nn + 255) / 256) + 2));
  if (D == 1) {
    unsigned bs = (unsigned)(T * T);
    dim3 g((unsigned)((nn + bs - 1) / bs), (unsigned)nch);
    GFI_LAUNCH(g, bs, 0, s, ecf1_kernel)(N, chunk, x, d->n0, t0, w->part);
  } else {
    size_t tiles = ((d->n0 + T - 1) / T) * ((d->n1 + T - 1) / T);
    dim3 g((unsigned)tiles, (unsigned)nch);
    GFI_LAUNCH(g, (unsigned)(T * T), 0, s, ecf2_kernel)(N, chunk, x, d->n0, t0, d->n1, t1, T, w->part);
  }
  GFI_CU_TRY(cudaGetLastError());
  GFI_LAUNCH((unsigned)((nn + 255) / 256), 256, 0, s, ecf_combine_kernel)(
      nn, d->n0, d->n1, nch, w->part, (double)N, d->buf, acc, s_out ? w->term : NULL);
  GFI_CU_TRY(cudaGetLastError());
  if (s_out) st = tree_sum(w, nn, s_out, s);
done:
  return st;
}

/* The pooled sums acc (over Ntot points) measured on d: term and reduce. */
static int pooled_measure(ws *w, size_t Ntot, const double *acc, const rule_dev *d, double *s_out,
                          cudaStream_t s) {
  size_t nn = d->nn;
  int st = GFI_OK;
  GFI_CU_TRY(grow(&w->term, &w->term_n, nn));
  GFI_CU_TRY(grow(&w->red, &w->red_n, 2 * ((nn + 255) / 256) + 2));
  GFI_LAUNCH((unsigned)((nn + 255) / 256), 256, 0, s, ecf_combine_kernel)(
      nn, d->n0, d->n1, (size_t)1, acc, (double)Ntot, d->buf, (double *)NULL, w->term);
  GFI_CU_TRY(cudaGetLastError());
  st = tree_sum(w, nn, s_out, s);
done:
  return st;
}

static int nthreads_of(const gfi_mise_opts *o) {
  gfi_opts g;
  gfi_default_opts(&g);
  g.nthreads = o->base.nthreads;
  return gfi_threads_resolve(&g);
}

/* One Plancherel ISE of N device points: nodes from their extents. */
static int pl_ise_dev(ws *w, const gfi_model *m, const ise_pl_rule *r, size_t N, const double *x,
                      const double *xabs_in, double res, double *ise, cudaStream_t s) {
  double xabs[2] = {0, 0};
  int st = GFI_OK;
  if (xabs_in) memcpy(xabs, xabs_in, r->D * sizeof *xabs);
  else st = extents(w, N, r->D, x, xabs, s);
  if (st) return st;
  for (size_t j = 0; j < r->D; j++)
    if (!isfinite(xabs[j])) return GFI_ENONFINITE;
  axis_nodes ax[MISE_MAXD];
  st = ise_pl_axes(r, N, xabs, res, ISE_GPU_MAX_WORK, ax);
  if (st) return st;
  rule_dev d;
  st = rule_upload(m, r, ax, &d, s);
  double sum = 0;
  if (!st) st = ecf_measure(w, N, r->D, x, &d, NULL, &sum, s);
  if (!st) st = ise_pl_finish(r, sum, ise);
  cudaFree(d.buf);
  for (int j = 0; j < MISE_MAXD; j++) axis_free(ax + j);
  return st;
}

extern "C" int gfi_cuda_ise_plancherel(const gfi_model *m, const gfi_kernel *kern, size_t N, const double *data,
                                       const double *R, const gfi_mise_opts *mopts, double *ise,
                                       const gfi_cuda_opts *opts) {
  if (!m || !data || !R || !ise) return GFI_EINVAL;
  if (N == 0) return GFI_EEMPTY;
  size_t D = gfi_model_dim(m);
  int st = gfi_check_radii(R, D, NULL);
  /* the kappa factors come from the CPU's rule (ise_pl_axis_factors), the
   * device sums the empirical cf: power and polynomial phi */
  if (!st) st = gfi_kernel_check_band(kern);
  if (!st && kern->kind != GFI_PHI_POW && kern->kind != GFI_PHI_POLY) st = fail_param(GFI_EUNSUPPORTED, "k");
  if (st) return st;
  if (D > 2) return GFI_EUNSUPPORTED;
  gfi_mise_opts mo;
  gfi_mise_default_opts(&mo);
  if (mopts) mo = *mopts;
  ise_pl_rule rule;
  st = ise_pl_init(m, kern, R, mo.resolution, nthreads_of(&mo), &rule);
  if (st) return st;
  gfi_cuda_opts o;
  st = gfi_cu_begin(opts, &o);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)o.stream;
  const double *xd;
  double *xown = NULL;
  ws w;
  memset(&w, 0, sizeof w);
  st = gfi_cu_in(data, N * D, s, &xd, &xown);
  if (!st) st = pl_ise_dev(&w, m, &rule, N, xd, NULL, mo.resolution, ise, s);
  ws_free(&w);
  cudaFree(xown);
  return st;
}

extern "C" int gfi_cuda_mise_mc_supported(const gfi_model *m, const gfi_mise_opts *mopts) {
  if (!m) return 0;
  size_t K, D = gfi_model_dim(m);
  const double *w, *mu, *cov;
  if (gfi_model_mixture_parts(m, &K, &w, &mu, &cov) != GFI_OK || D > GFI_CU_MC_MAXD) return 0;
  gfi_ise_method me = mopts ? mopts->ise : GFI_ISE_AUTO;
  if (me == GFI_ISE_AUTO) me = D <= 2 ? GFI_ISE_PLANCHEREL : GFI_ISE_GRID;
  if (me == GFI_ISE_PLANCHEREL) return D <= 2;
  return D <= MISE_MAXD;
}

extern "C" int gfi_cuda_mise_mc(const gfi_model *m, const gfi_kernel *kern, size_t N, const double *R, size_t nreps,
                                const gfi_mise_opts *mopts, gfi_mise_result *res, double *ise_out,
                                const gfi_cuda_opts *opts) {
  if (!m || !R || !res) return GFI_EINVAL;
  /* power and polynomial phi: the Plancherel factors come from the CPU's
   * rule, the grid rule's estimates from the density pair sum */
  int st = gfi_kernel_check_band(kern);
  if (st) return st;
  if (kern->kind != GFI_PHI_POW && kern->kind != GFI_PHI_POLY) return fail_param(GFI_EUNSUPPORTED, "k");
  if (N == 0) return GFI_EEMPTY;
  if (nreps < 2) return GFI_EINVAL;
  size_t D = gfi_model_dim(m);
  st = gfi_check_radii(R, D, NULL);
  if (st) return st;
  gfi_mise_opts mo;
  gfi_mise_default_opts(&mo);
  if (mopts) mo = *mopts;
  if (mo.ise == GFI_ISE_AUTO) mo.ise = D <= 2 ? GFI_ISE_PLANCHEREL : GFI_ISE_GRID;
  if (!gfi_cuda_mise_mc_supported(m, &mo)) return GFI_EUNSUPPORTED;
  double *ise = (double *)malloc(nreps * sizeof *ise);
  if (!ise) return GFI_ENOMEM;
  if (mo.ise == GFI_ISE_GRID) {
    /* the CPU's grid rule, measured by gfi_cuda_mc_ise; no pooled pass */
    double lo[MISE_MAXD], hi[MISE_MAXD], *pts = NULL, *W = NULL;
    size_t M = 0;
    st = ise_grid_auto_box(m, &mo, lo, hi);
    if (!st) st = ise_grid_rule(m, R, lo, hi, &mo, &M, &pts, &W);
    if (!st) st = gfi_cuda_mc_ise(m, kern, R, N, mo.base.seed, 0, nreps, M, pts, W, ise, opts);
    free(pts);
    free(W);
    if (!st) st = mise_mc_summarize(ise, nreps, res);
    if (!st && ise_out) memcpy(ise_out, ise, nreps * sizeof *ise);
    free(ise);
    return st;
  }
  ise_pl_rule rule;
  st = ise_pl_init(m, kern, R, mo.resolution, nthreads_of(&mo), &rule);
  if (st) {
    free(ise);
    return st;
  }
  gfi_cuda_opts o;
  st = gfi_cu_begin(opts, &o);
  if (st) {
    free(ise);
    return st;
  }
  cudaStream_t s = (cudaStream_t)o.stream;
  size_t K;
  double *par = NULL, *x = NULL, *acc = NULL, *xabs = NULL;
  rule_dev pool = {0, 0, 0, NULL};
  axis_nodes pax[MISE_MAXD] = {{0, NULL, NULL}, {0, NULL, NULL}, {0, NULL, NULL}};
  int have_pool = 0;
  ws w;
  memset(&w, 0, sizeof w);
  st = gfi_cu_mixture_upload(m, &D, &K, &par, s);
  if (st) goto done;
  GFI_CU_TRY(cudaMalloc(&x, N * D * sizeof(double)));
  if (mo.parts) {
    /* pass 1: every replication's extents, hence the pooled sample's nodes */
    xabs = (double *)malloc(nreps * D * sizeof *xabs);
    if (!xabs) {
      st = GFI_ENOMEM;
      goto done;
    }
    double pabs[2] = {0, 0};
    for (size_t k = 0; k < nreps && !st; k++) {
      GFI_CU_TRY(gfi_cu_mixture_launch(mo.base.seed, k, N, D, K, par, x, s));
      st = extents(&w, N, D, x, xabs + k * D, s);
      for (size_t j = 0; j < D && !st; j++) pabs[j] = fmax(pabs[j], xabs[k * D + j]);
    }
    if (st) goto done;
    int pst = (double)nreps * (double)N > 9e15 ? GFI_EUNSUPPORTED
                                               : ise_pl_axes(&rule, nreps * N, pabs, mo.resolution,
                                                             ISE_GPU_MAX_WORK, pax);
    if (pst == GFI_OK) {
      st = rule_upload(m, &rule, pax, &pool, s);
      if (st) goto done;
      GFI_CU_TRY(cudaMalloc(&acc, 2 * pool.nn * sizeof(double)));
      GFI_CU_TRY(cudaMemsetAsync(acc, 0, 2 * pool.nn * sizeof(double), s));
      have_pool = 1;
    } else if (pst != GFI_EUNSUPPORTED) {
      st = pst;
      goto done;
    } /* else: the pooled sample is too wide to resolve: parts stay NaN */
  }
  /* pass 2: replication k = stream (seed, k), its ISE on its own nodes */
  for (size_t k = 0; k < nreps && !st; k++) {
    GFI_CU_TRY(gfi_cu_mixture_launch(mo.base.seed, k, N, D, K, par, x, s));
    st = pl_ise_dev(&w, m, &rule, N, x, xabs ? xabs + k * D : NULL, mo.resolution, ise + k, s);
    if (!st && have_pool) st = ecf_measure(&w, N, D, x, &pool, acc, NULL, s);
  }
  if (!st) st = mise_mc_summarize(ise, nreps, res);
  if (!st && have_pool) {
    double sum, ip;
    st = pooled_measure(&w, nreps * N, acc, &pool, &sum, s);
    if (!st) st = ise_pl_finish(&rule, sum, &ip);
    if (!st) mise_mc_parts(res, ip);
  }
  if (!st && ise_out) memcpy(ise_out, ise, nreps * sizeof *ise);
done:
  ws_free(&w);
  cudaFree(par);
  cudaFree(x);
  cudaFree(acc);
  cudaFree(pool.buf);
  for (int j = 0; j < MISE_MAXD; j++) axis_free(pax + j);
  free(xabs);
  free(ise);
  return st;
}
