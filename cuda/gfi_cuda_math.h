/* Per-pair mathematics of the CUDA engines, shared by the kernels (compiled by
 * nvcc as __host__ __device__ code) and by tests/test_cuda_math.c (compiled as
 * plain C11), so that the arithmetic every GPU thread performs is checked
 * against gfi's CPU engines on any machine, with or without a GPU.
 *
 * Contents
 *  - Philox4x32-10 (the block function) and a line-by-line port of cuRAND's
 *    curand_init / curand / curand4 for curandStatePhilox4_32_10_t, used to
 *    check that cuRAND's streams and gfi_rng_stream give the same 32-bit words.
 *  - The on-GPU normal-mixture sampler: one point from a fixed set of raw words
 *    (counter-based: point i of replication s always reads the same words).
 *  - Density / Nadaraya-Watson pair terms (float and double): the angle
 *    subtraction identity sin(a - b) = sin a cos b - cos a sin b, the Taylor
 *    series near u = 0, one division per pair for phi = z^l; for a
 *    polynomial phi (gfi_cu_kern) one division per axis and phi by Horner.
 *  - Fourier attention pair terms: sinc and its derivative, the scaled
 *    (mantissa, exponent) product over axes, and the per-axis gradient of one
 *    weight from the full product (see gfi_cu_attn_grad_*).
 *  - FLT: the phase 2 pi (d.xi) reduced to [-pi, pi).
 *
 * Everything is static inline; the real-valued part is instantiated for
 * double (suffix _d) and float (suffix _f) by including
 * gfi_cuda_math_real.h twice. The sinc series is lib/sinc_series.h, the one
 * the CPU engines use. */
#ifndef GFI_CUDA_MATH_H
#define GFI_CUDA_MATH_H

#include <stdint.h>
#include <math.h>
#include <string.h>
#include "sinc_series.h"

#ifdef __CUDACC__
#define GFI_HD static inline __host__ __device__
#else
#define GFI_HD static inline
#endif

/* ------------------------------------------------------------ Philox */

#define GFI_CU_PHILOX_M0 0xD2511F53u
#define GFI_CU_PHILOX_M1 0xCD9E8D57u
#define GFI_CU_PHILOX_W0 0x9E3779B9u
#define GFI_CU_PHILOX_W1 0xBB67AE85u

typedef struct { uint32_t x, y, z, w; } gfi_cu_u32x4;

/* Philox4x32-10 block: 10 rounds, the key bumped between rounds (as
 * gfi_philox4x32_10 and cuRAND's curand_Philox4x32_10). */
GFI_HD gfi_cu_u32x4 gfi_cu_philox(gfi_cu_u32x4 c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    if (r > 0) {
      k0 += GFI_CU_PHILOX_W0;
      k1 += GFI_CU_PHILOX_W1;
    }
    uint64_t p0 = (uint64_t)GFI_CU_PHILOX_M0 * c.x;
    uint64_t p1 = (uint64_t)GFI_CU_PHILOX_M1 * c.z;
    gfi_cu_u32x4 n;
    n.x = (uint32_t)(p1 >> 32) ^ c.y ^ k0;
    n.y = (uint32_t)p1;
    n.z = (uint32_t)(p0 >> 32) ^ c.w ^ k1;
    n.w = (uint32_t)p0;
    c = n;
  }
  return c;
}

/* Block `pos` of stream `stream` of `seed`: counter (pos_lo, pos_hi,
 * stream_lo, stream_hi), key (seed_lo, seed_hi) — gfi_rng_stream's layout. */
GFI_HD gfi_cu_u32x4 gfi_cu_philox_block(uint64_t seed, uint64_t stream, uint64_t pos) {
  gfi_cu_u32x4 c;
  c.x = (uint32_t)pos;
  c.y = (uint32_t)(pos >> 32);
  c.z = (uint32_t)stream;
  c.w = (uint32_t)(stream >> 32);
  return gfi_cu_philox(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* A port of cuRAND's host/device state logic (curand_kernel.h and
 * curand_philox4x32_x.h, CUDA 13.0) for reference on the CPU. */
typedef struct {
  gfi_cu_u32x4 ctr, output;
  uint32_t k0, k1;
  unsigned STATE;
} gfi_cu_curand_ref;

GFI_HD void gfi_cu_curand_ref_incr_n(gfi_cu_curand_ref *s, uint64_t n) {
  uint32_t nlo = (uint32_t)n, nhi = (uint32_t)(n >> 32);
  s->ctr.x += nlo;
  if (s->ctr.x < nlo) nhi++;
  s->ctr.y += nhi;
  if (nhi <= s->ctr.y) return;
  if (++s->ctr.z) return;
  ++s->ctr.w;
}
GFI_HD void gfi_cu_curand_ref_incr_hi(gfi_cu_curand_ref *s, uint64_t n) {
  uint32_t nlo = (uint32_t)n, nhi = (uint32_t)(n >> 32);
  s->ctr.z += nlo;
  if (s->ctr.z < nlo) nhi++;
  s->ctr.w += nhi;
}
GFI_HD void gfi_cu_curand_ref_incr(gfi_cu_curand_ref *s) {
  if (++s->ctr.x) return;
  if (++s->ctr.y) return;
  if (++s->ctr.z) return;
  ++s->ctr.w;
}
/* curand_init(seed, subsequence, offset, &state) */
GFI_HD void gfi_cu_curand_ref_init(gfi_cu_curand_ref *s, uint64_t seed, uint64_t subsequence,
                                   uint64_t offset) {
  s->ctr.x = s->ctr.y = s->ctr.z = s->ctr.w = 0;
  s->k0 = (uint32_t)seed;
  s->k1 = (uint32_t)(seed >> 32);
  s->STATE = 0;
  gfi_cu_curand_ref_incr_hi(s, subsequence); /* skipahead_sequence */
  s->output = gfi_cu_philox(s->ctr, s->k0, s->k1);
  s->STATE += (unsigned)(offset & 3);         /* skipahead */
  offset /= 4;
  if (s->STATE > 3) {
    offset += 1;
    s->STATE -= 4;
  }
  gfi_cu_curand_ref_incr_n(s, offset);
  s->output = gfi_cu_philox(s->ctr, s->k0, s->k1);
}
/* curand(&state) */
GFI_HD uint32_t gfi_cu_curand_ref_next(gfi_cu_curand_ref *s) {
  uint32_t ret;
  switch (s->STATE++) {
    default: ret = s->output.x; break;
    case 1: ret = s->output.y; break;
    case 2: ret = s->output.z; break;
    case 3: ret = s->output.w; break;
  }
  if (s->STATE == 4) {
    gfi_cu_curand_ref_incr(s);
    s->output = gfi_cu_philox(s->ctr, s->k0, s->k1);
    s->STATE = 0;
  }
  return ret;
}
/* curand4(&state): the four words from the current position (gfi's kernels
 * start at a multiple of 4, STATE == 0: the current block, then the next). */
GFI_HD gfi_cu_u32x4 gfi_cu_curand_ref_next4(gfi_cu_curand_ref *s) {
  gfi_cu_u32x4 t = s->output, r;
  gfi_cu_curand_ref_incr(s);
  s->output = gfi_cu_philox(s->ctr, s->k0, s->k1);
  switch (s->STATE) {
    case 1:
      r.x = t.y; r.y = t.z; r.z = t.w; r.w = s->output.x;
      return r;
    case 2:
      r.x = t.z; r.y = t.w; r.z = s->output.x; r.w = s->output.y;
      return r;
    case 3:
      r.x = t.w; r.y = s->output.x; r.z = s->output.y; r.w = s->output.z;
      return r;
    default:
      return t;
  }
}

/* ------------------------------------------------ normal-mixture sampler */

/* Largest dimension of the on-GPU sampler. */
#define GFI_CU_MC_MAXD 16

/* [0, 1) from two words with 53 random bits (gfi's gsl_rng get_double). */
GFI_HD double gfi_cu_u53(uint32_t a, uint32_t b) {
  return (double)((uint64_t)(a >> 5) * 67108864u + (b >> 6)) * (1.0 / 9007199254740992.0);
}

/* Philox blocks one point of a D-dimensional mixture consumes: block 0 picks
 * the component (words 0-1), block 1 + b gives normals 2b and 2b+1
 * (Box-Muller on two 53-bit uniforms). Point i of replication s reads blocks
 * i * B .. i * B + B - 1 of stream (seed, s): the words do not depend on how
 * the points are distributed over threads. */
GFI_HD uint64_t gfi_cu_mix_blocks(int D) { return 1 + (uint64_t)((D + 1) / 2); }

/* Two standard normals from one block. */
GFI_HD void gfi_cu_box_muller(gfi_cu_u32x4 w, double *z0, double *z1) {
  double u1 = 1.0 - gfi_cu_u53(w.x, w.y); /* (0, 1] */
  double u2 = gfi_cu_u53(w.z, w.w);       /* [0, 1) */
  double r = sqrt(-2.0 * log(u1));
  double s, c;
#ifdef __CUDA_ARCH__
  sincospi(2.0 * u2, &s, &c);
#else
  s = sin(2.0 * M_PI * u2);
  c = cos(2.0 * M_PI * u2);
#endif
  *z0 = r * c;
  *z1 = r * s;
}

/* One mixture point from its blocks w[0..B). K components with cumulative
 * weights cum[K] (cum[K-1] = 1), means mu (K x D) and lower Cholesky factors
 * chol (K x D x D, row-major). x: D values. */
GFI_HD void gfi_cu_mix_point(const gfi_cu_u32x4 *w, int D, int K, const double *cum,
                             const double *mu, const double *chol, double *x) {
  double u = gfi_cu_u53(w[0].x, w[0].y);
  int a = 0;
  while (a < K - 1 && !(u < cum[a])) a++;
  double z[GFI_CU_MC_MAXD + 1];
  for (int b = 0; 2 * b < D; b++) gfi_cu_box_muller(w[1 + b], &z[2 * b], &z[2 * b + 1]);
  const double *m = mu + (size_t)a * D, *L = chol + (size_t)a * D * D;
  for (int j = 0; j < D; j++) {
    double t = m[j];
    for (int k = 0; k <= j; k++) t += L[j * D + k] * z[k];
    x[j] = t;
  }
}

/* -------------------------------------------------- scaled products */

/* x = m 2^e with |m| in [1, 2) (0 for x = 0), as the CPU attention engine. */
GFI_HD double gfi_cu_mant_d(double x, int *e) {
  int k;
  double m = frexp(x, &k);
  *e = x == 0 ? 0 : k - 1;
  return 2.0 * m;
}
GFI_HD float gfi_cu_mant_f(float x, int *e) {
  int k;
  float m = frexpf(x, &k);
  *e = x == 0 ? 0 : k - 1;
  return 2.0f * m;
}
/* 2^k for integer-valued k: 0 below the normal range, clamped above (as the
 * CPU engine's pow2). */
GFI_HD double gfi_cu_pow2_d(double k) {
  if (k < -1022.0) return 0.0;
  return ldexp(1.0, (int)(k > 1023.0 ? 1023.0 : k));
}
GFI_HD float gfi_cu_pow2_f(double k) {
  if (k < -126.0) return 0.0f;
  return ldexpf(1.0f, (int)(k > 127.0 ? 127.0 : k));
}

/* Exponent of an exact zero product: below every other. */
#define GFI_CU_ZERO_EXP (-1.0e6)

/* ------------------------------------------------ kernel descriptor */

/* The kernel phi(sinc) as the device code gets it (a value passed to the
 * launches; no pointers): kind GFI_CU_PHI_POW, phi = z^l, or
 * GFI_CU_PHI_POLY, phi(z) = sum_{j=1..l} coef[j] z^j (coef[0] = 0). Made
 * from a gfi_kernel by gfi_cu_kern_make (cuda/cuda_internal.h). */
#define GFI_CU_PHI_POW 0
#define GFI_CU_PHI_POLY 2
#define GFI_CU_PHI_MAXPOW 8
typedef struct {
  int kind;                         /* GFI_CU_PHI_POW or GFI_CU_PHI_POLY */
  int l;                            /* the power, or the polynomial's degree (1..8) */
  double coef[GFI_CU_PHI_MAXPOW + 1]; /* coef[j] of z^j; for a power coef[l] = 1 */
} gfi_cu_kern;

/* ------------------------------------------------ real-valued parts */
#define GFI_CU_T double
#define GFI_CU_N(name) name##_d
#define GFI_CU_IS_DOUBLE 1
#include "gfi_cuda_math_real.h"
#undef GFI_CU_T
#undef GFI_CU_N
#undef GFI_CU_IS_DOUBLE

#define GFI_CU_T float
#define GFI_CU_N(name) name##_f
#define GFI_CU_IS_DOUBLE 0
#include "gfi_cuda_math_real.h"
#undef GFI_CU_T
#undef GFI_CU_N
#undef GFI_CU_IS_DOUBLE

/* ------------------------------------------------------------- FLT */

/* 2 pi (d.xi) reduced to [-pi, pi] as the CPU's phase(): returns t - rint(t)
 * for t = d.xi; the caller takes sincospi(2 r) (device) or sin/cos(2 pi r). */
GFI_HD double gfi_cu_flt_turns(const double *d, const double *xi, int ell) {
  double t = 0;
  for (int a = 0; a < ell; a++) t += d[a] * xi[a];
  return t - rint(t);
}

#endif
