/* A vectorisable sin and cos of one argument, for loops that `#pragma omp
 * simd` should vectorise (glibc's sincos is a call; without -ffast-math gcc
 * does not vectorise a loop around it). Only arithmetic, comparisons and bit
 * operations, inline.
 *
 * Method (after fdlibm): n = round(x 2/pi) through the 1.5 * 2^52 shifter,
 * r = x - n pi/2 in three Cody-Waite parts (each part has 33 significant
 * bits, so n * part is exact for |n| < 2^20), then fdlibm's kernel
 * polynomials for sin and cos on |r| <= pi/4 and the quadrant n mod 4 from
 * the shifter's low bits. Valid for |x| <= GFI_SINCOS_SIMD_MAX (callers fall
 * back to libm beyond it). Measured against glibc's sincos: at most 2.3e-16
 * absolute difference (tests/test_nufft.c). */
#ifndef GFI_SIMD_SINCOS_H
#define GFI_SIMD_SINCOS_H

#include <stdint.h>
#include <string.h>

#define GFI_SINCOS_SIMD_MAX 1.0e6 /* n < 2^20 */

static inline void gfi_sincos_simd(double x, double *s, double *c) {
  const double shifter = 6755399441055744.0; /* 1.5 * 2^52 */
  const double p1 = 1.57079632673412561417e+00, p2 = 6.07710050630396597660e-11,
               p3 = 2.02226624871116645580e-21;
  double t = x * 6.36619772367581382433e-01 + shifter;
  double n = t - shifter;
  double r = ((x - n * p1) - n * p2) - n * p3;
  double z = r * r;
  double sp = 1.58969099521155010221e-10;
  sp = sp * z - 2.50507602534068634195e-08;
  sp = sp * z + 2.75573137070700676789e-06;
  sp = sp * z - 1.98412698298579493134e-04;
  sp = sp * z + 8.33333333332248946124e-03;
  sp = sp * z - 1.66666666666666324348e-01;
  double sr = r + r * z * sp;
  double cp = -1.13596475577881948265e-11;
  cp = cp * z + 2.08757232129817482790e-09;
  cp = cp * z - 2.75573143513906633035e-07;
  cp = cp * z + 2.48015872894767294178e-05;
  cp = cp * z - 1.38888888888741095749e-03;
  cp = cp * z + 4.16666666666666019037e-02;
  double hz = 0.5 * z, w = 1.0 - hz;
  double cr = w + (((1.0 - w) - hz) + z * z * cp);
  /* quadrant: swap sin and cos for odd n, flip the signs by n mod 4; as
   * bit operations (a select, not arithmetic, keeps the values exact) */
  uint64_t q, bs, bc;
  memcpy(&q, &t, sizeof q);
  memcpy(&bs, &sr, sizeof bs);
  memcpy(&bc, &cr, sizeof bc);
  uint64_t odd = (uint64_t)0 - (q & 1);
  uint64_t so = (bs & ~odd) | (bc & odd), co = (bc & ~odd) | (bs & odd);
  so ^= ((q >> 1) & 1) << 63;
  co ^= (((q + 1) >> 1) & 1) << 63;
  memcpy(s, &so, sizeof so);
  memcpy(c, &co, sizeof co);
}

#endif
