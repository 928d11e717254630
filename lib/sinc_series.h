/* sinc(u) = sin(u) / u and its derivative near u = 0, by their Taylor series:
 *
 *   sinc(u)  = sum_{k=0..7} (-1)^k u^(2k) / (2k+1)!
 *   sinc'(u) = sum_{k=1..8} (-1)^k 2k u^(2k-1) / (2k+1)!
 *
 * For |u| < GFI_SINC_CUT = 0.5 the first omitted terms are below
 * 0.5^16 / 17! = 4e-20 (sinc, relative: sinc > 0.95 there) and
 * 18 * 0.5^17 / 19! = 1.1e-21 (the derivative, absolute; |sinc'| > 0.03 for
 * |u| > 0.1, and the series is relative-accurate below), far below half an
 * ulp of double. Beyond the cut the library forms sin(u) / u, often from the
 * angle-subtraction identity sin(a - b) = sin a cos b - cos a sin b, whose
 * absolute error of about 1e-16 divided by u gives a relative error below
 * 2.2e-16 / |u|, i.e. at most 4.4e-16 at the cut; a smaller cut would pay up
 * to 1e-16 / |u| for every |u| between it and 0.5.
 *
 * Used by the CPU engines (C11) and the CUDA engines (nvcc, as
 * __host__ __device__ code, and the CPU emulator of the tests): the
 * GFI_SINC_SERIES / GFI_SINC_DSERIES macros take the floating type, so
 * float kernels round every coefficient to float, and the double instances
 * are the same expression (same bits) as the functions below. */
#ifndef GFI_SINC_SERIES_H
#define GFI_SINC_SERIES_H

#ifdef __CUDACC__
#define GFI_SINC_HD static inline __host__ __device__
#else
#define GFI_SINC_HD static inline
#endif

/* Below this |u| the series is used (see above). */
#define GFI_SINC_CUT 0.5
/* Terms of the sinc series (powers u^0 .. u^14). */
#define GFI_SINC_TERMS 8

/* Coefficients of the sinc series, (-1)^k / (2k+1)!. */
#define GFI_SINC_K0 1.0
#define GFI_SINC_K1 (-1.0 / 6)
#define GFI_SINC_K2 (1.0 / 120)
#define GFI_SINC_K3 (-1.0 / 5040)
#define GFI_SINC_K4 (1.0 / 362880)
#define GFI_SINC_K5 (-1.0 / 39916800)
#define GFI_SINC_K6 (1.0 / 6227020800.0)
#define GFI_SINC_K7 (-1.0 / 1307674368000.0)
/* The same as an initializer list, for tables of scaled coefficients. */
#define GFI_SINC_COEFS                                                                       \
  GFI_SINC_K0, GFI_SINC_K1, GFI_SINC_K2, GFI_SINC_K3, GFI_SINC_K4, GFI_SINC_K5, GFI_SINC_K6, \
      GFI_SINC_K7

/* sinc(u) from u2 = u^2, in type T: the last two steps as Horner's (so the
 * result carries Horner's rounding, half an ulp from the final addition to
 * 1), the tail K2 + K3 u2 + ... + K7 u2^5 in pairs with u2^2 (Estrin): a
 * chain of five operations after u2 instead of seven, which matters in the
 * vectorised engine loops. */
#define GFI_SINC_SERIES(T, u2)                                                          \
  ((T)GFI_SINC_K0 +                                                                     \
   (u2) * ((T)GFI_SINC_K1 +                                                             \
           (u2) * (((T)GFI_SINC_K2 + (u2) * (T)GFI_SINC_K3) +                           \
                   ((u2) * (u2)) * (((T)GFI_SINC_K4 + (u2) * (T)GFI_SINC_K5) +          \
                                    ((u2) * (u2)) * ((T)GFI_SINC_K6 + (u2) * (T)GFI_SINC_K7)))))

/* sinc'(u) from u and u2 = u^2, in type T: u times a Horner polynomial in u2
 * with the coefficients (-1)^k 2k / (2k+1)!. */
#define GFI_SINC_DSERIES(T, u, u2)                                                             \
  ((u) * ((T)(-2.0 / 6) +                                                                      \
          (u2) * ((T)(4.0 / 120) +                                                             \
                  (u2) * ((T)(-6.0 / 5040) +                                                   \
                          (u2) * ((T)(8.0 / 362880) +                                          \
                                  (u2) * ((T)(-10.0 / 39916800) +                              \
                                          (u2) * ((T)(12.0 / 6227020800.0) +                   \
                                                  (u2) * ((T)(-14.0 / 1307674368000.0) +       \
                                                          (u2) * (T)(16.0 / 355687428096000.0)))))))))

/* The series in double: sinc(u) and sinc'(u) for |u| < GFI_SINC_CUT. */
GFI_SINC_HD double gfi_sinc_series(double u) {
  double u2 = u * u;
  return GFI_SINC_SERIES(double, u2);
}
GFI_SINC_HD double gfi_sinc_dseries(double u) {
  double u2 = u * u;
  return GFI_SINC_DSERIES(double, u, u2);
}

#endif
