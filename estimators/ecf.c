/* The empirical characteristic function phi(t) = sum_i w_i exp(i t.x_i) at
 * given frequencies: plain sums or one type-3 NUFFT, chosen by opts.method.
 * The data are centred at the middle of their box first (phi(t) =
 * e^{i t.c} sum_i w_i e^{i t.(x_i - c)}): the NUFFT's grid grows with the
 * product of the data's and the frequencies' half-widths, and the phases
 * stay small. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/density.h"
#include "gfi/validate.h"
#include "bandlimited.h"
#include "../lib/nufft.h"
#include "alloc.h"

/* The direct sum's CPU time per (frequency, point) pair, nanoseconds: a
 * sin and a cos per pair dominate (measured 25.5, 27.4, 28.9 ns for D = 1,
 * 2, 3, one thread, N = 2e4, K = 2e3). Converted to the NUFFT model's units
 * as the other clients' direct estimates are: bl_direct_units per unit of
 * ECF_NS_PER_UNIT ns (those estimates run 2.2-2.8 ns per unit). Compared in
 * nanoseconds against those units, the direct sum looked 28x cheaper than it
 * is in 1-D, and auto kept it where the NUFFT was 3x faster. */
#define ECF_DIRECT_NS(D) (23.8 + 1.7 * (double)(D))
#define ECF_NS_PER_UNIT 2.5
/* The NUFFT route's floor per call (plans, FFTW, threads): about 100 us
 * measured at N = 100 .. 200, K = 30 .. 100, above what bl_nufft_cost counts. */
#define ECF_FIXED_NS 1e5

int gfi_ecf(size_t N, size_t D, const double *data, const double *weights, size_t K,
            const double *freqs, const gfi_opts *opts, double *out, gfi_fast_info *info) {
  gfi_fast_info dummy;
  if (!info) info = &dummy;
  memset(info, 0, sizeof *info);
  info->route = GFI_METHOD_DIRECT;
  info->dim = D;
  double tol;
  gfi_method method;
  int st = bl_check_opts(opts, &tol, &method);
  if (st) return st;
  info->tol = tol;
  if (N == 0) return GFI_EEMPTY;
  st = gfi_check_dim(D);
  if (st) return st;
  if (!data || (K && (!freqs || !out))) return GFI_EINVAL;
  if (N > ((size_t)1 << 52) / D || K > ((size_t)1 << 52) / D) return GFI_EDIM;
  if (method == GFI_METHOD_FAST && D > BL_MAX_DIM) return GFI_EUNSUPPORTED;
  st = gfi_check_finite(data, N * D, NULL);
  if (!st && K) st = gfi_check_finite(freqs, K * D, NULL);
  if (st) return st;
  double wsum = (double)N;
  if (weights) {
    st = gfi_check_weights(weights, N, &wsum);
    if (st) return st;
  }
  if (K == 0) return GFI_OK;
  double ctr[BL_MAX_DIM] = {0, 0, 0}, X[BL_MAX_DIM], S[BL_MAX_DIM];
  const size_t Dc = D <= BL_MAX_DIM ? D : 0; /* centring only where the NUFFT can run */
  for (size_t j = 0; j < Dc; j++) {
    double lo = data[j], hi = data[j], tlo = freqs[j], thi = freqs[j];
    for (size_t i = 0; i < N; i++) {
      lo = fmin(lo, data[i * D + j]);
      hi = fmax(hi, data[i * D + j]);
    }
    for (size_t k = 0; k < K; k++) {
      tlo = fmin(tlo, freqs[k * D + j]);
      thi = fmax(thi, freqs[k * D + j]);
    }
    ctr[j] = 0.5 * (lo + hi);
    X[j] = 0.5 * (hi - lo);
    S[j] = fmax(fabs(tlo), fabs(thi));
  }
  /* the engine's rule (bl_ntol): one transform, tol relative to sum |w_i|,
   * each output within BL_NUFFT_SAFETY ntol of it */
  double ntol = bl_ntol(tol, 1.0, 1);
  info->cost_direct = ECF_DIRECT_NS(D) / ECF_NS_PER_UNIT * bl_direct_units((int)D) * (double)N * (double)K;
  /* the client describes its routes; the engine decides (bl_decide) */
  bl_cost bc = {info->cost_direct, 0, 0, 1, 0};
  size_t g[3] = {0, 0, 0};
  if (method != GFI_METHOD_DIRECT) {
    if (D > BL_MAX_DIM) {
      bc.fast_why = GFI_ROUTE_DIM;
    } else {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = ntol;
      o.nthreads = opts ? opts->nthreads : 0;
      size_t tot = nufft3_grid_size((int)D, X, S, &o, g);
      if (!tot) {
        bc.fast_why = GFI_ROUTE_NODES;
      } else {
        info->cost_fast = bl_nufft_cost((int)D, N, K, g, ntol) +
                          ECF_FIXED_NS / ECF_NS_PER_UNIT * bl_direct_units((int)D);
        bc.fast = info->cost_fast;
        bc.fast_bytes = 16.0 * (double)tot;
      }
    }
  }
  gfi_method route;
  int reason;
  st = bl_decide(method, &bc, &route, &reason);
  if (st) return st;
  info->reason = reason;
  if (route == GFI_METHOD_FAST) memcpy(info->grid_fwd, g, sizeof g);
  info->route = route;
  if (N > SIZE_MAX / 2 / sizeof(double) / (D > 1 ? D : 1)) return GFI_ENOMEM;
  double *xc = gfi_malloc3(N, D, sizeof *xc), *c = gfi_malloc3(2, N, sizeof *c), c1 = 0;
  if (!xc || !c) {
    free(xc);
    free(c);
    return GFI_ENOMEM;
  }
  for (size_t i = 0; i < N; i++) {
    for (size_t j = 0; j < D; j++) xc[i * D + j] = data[i * D + j] - (j < Dc ? ctr[j] : 0.0);
    c[2 * i] = weights ? weights[i] / wsum : 1.0 / (double)N;
    c[2 * i + 1] = 0;
    c1 += fabs(c[2 * i]);
  }
  int nt = opts ? opts->nthreads : 0;
  if (route == GFI_METHOD_FAST) {
    nufft_opts o;
    nufft_default_opts(&o);
    o.tol = ntol;
    o.nthreads = nt;
    st = nufft3((int)D, N, xc, c, +1, K, freqs, out, &o);
    /* the NUFFT's tolerance, and the rounding of the phases t.x (the same
     * term as the band-limited route's, bandlimited.c: 8 eps (Theta + sqrt K)) */
    double th = 0;
    for (size_t j = 0; j < D; j++) {
      double fa = 0, xa = 0;
      for (size_t k = 0; k < K; k++) fa = fmax(fa, fabs(freqs[k * D + j]));
      for (size_t i = 0; i < N; i++) xa = fmax(xa, fabs(xc[i * D + j]));
      th += fa * xa;
    }
    info->bound_abs = (BL_NUFFT_SAFETY * ntol + 8 * DBL_EPSILON * (th + sqrt((double)K))) * c1;
  } else if (D <= BL_MAX_DIM) {
    st = nufft3_direct((int)D, N, xc, c, +1, K, freqs, out, nt);
  } else {
    /* D > 3: the same sums, one frequency at a time in a fixed order */
    for (size_t k = 0; k < K; k++) {
      double re = 0, im = 0;
      for (size_t i = 0; i < N; i++) {
        double ph = 0;
        for (size_t j = 0; j < D; j++) ph += freqs[k * D + j] * xc[i * D + j];
        re += c[2 * i] * cos(ph);
        im += c[2 * i] * sin(ph);
      }
      out[2 * k] = re;
      out[2 * k + 1] = im;
    }
  }
  free(xc);
  free(c);
  if (st) return st;
  /* undo the centring: multiply by e^{i t.c} */
  if (Dc)
    for (size_t k = 0; k < K; k++) {
      double ph = 0;
      for (size_t j = 0; j < Dc; j++) ph += freqs[k * D + j] * ctr[j];
      double cs = cos(ph), sn = sin(ph), re = out[2 * k], im = out[2 * k + 1];
      out[2 * k] = re * cs - im * sn;
      out[2 * k + 1] = re * sn + im * cs;
    }
  if (route == GFI_METHOD_FAST) {
    double m = 0;
    for (size_t k = 0; k < K; k++) m = fmax(m, hypot(out[2 * k], out[2 * k + 1]));
    info->bound = m > 0 ? info->bound_abs / m : INFINITY;
    info->scale = m;
  }
  return GFI_OK;
}
