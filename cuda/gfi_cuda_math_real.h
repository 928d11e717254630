/* Real-valued per-pair terms, instantiated for double and float by
 * gfi_cuda_math.h (GFI_CU_T, GFI_CU_N(name)). No include
 * guard on purpose. */

/* a / b. The float path on the device uses __fdividef (reciprocal and
 * multiply, about 2 ulp; the "fast float32" path of docs/cuda.md), and so do
 * the kernels compiled for the CPU emulator (its __fdividef). */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_div)(GFI_CU_T a, GFI_CU_T b) {
#if (defined(__CUDA_ARCH__) || (defined(GFI_CUDA_EMU) && defined(__cplusplus))) && !GFI_CU_IS_DOUBLE
  return __fdividef(a, b);
#else
  return a / b;
#endif
}

/* x^l, l = 1..8 (l is a compile-time constant after inlining in the kernels). */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_ipow)(GFI_CU_T x, int l) {
  GFI_CU_T x2 = x * x, x4 = x2 * x2;
  switch (l) {
    case 1: return x;
    case 2: return x2;
    case 3: return x2 * x;
    case 4: return x4;
    case 5: return x4 * x;
    case 6: return x4 * x2;
    case 7: return x4 * (x2 * x);
    case 8: return x4 * x4;
    default: return (GFI_CU_T)0;
  }
}

/* x^n, n = 0..7 (the gradient's (s y)^(l-1)). */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_ipow0)(GFI_CU_T x, int n) {
  return n == 0 ? (GFI_CU_T)1 : GFI_CU_N(gfi_cu_ipow)(x, n);
}

/* ---- density and Nadaraya-Watson ----
 * One axis of one pair: numerator and denominator of sinc(u), u = rx - rk,
 * sin(u) = sx ck - cx sk from the precomputed sines and cosines of R x and
 * R k; for |u| < GFI_SINC_CUT (0.5, as the CPU engines) the series of
 * sinc_series.h over 1. */
GFI_HD void GFI_CU_N(gfi_cu_sinc_parts)(GFI_CU_T rx, GFI_CU_T sx, GFI_CU_T cx, GFI_CU_T rk,
                                        GFI_CU_T sk, GFI_CU_T ck, GFI_CU_T *num, GFI_CU_T *den) {
  GFI_CU_T u = rx - rk;
  GFI_CU_T sn = sx * ck - cx * sk;
  GFI_CU_T u2 = u * u;
  GFI_CU_T ser = GFI_SINC_SERIES(GFI_CU_T, u2);
  int small = u2 < (GFI_CU_T)(GFI_SINC_CUT * GFI_SINC_CUT);
  *num = small ? ser : sn;
  *den = small ? (GFI_CU_T)1 : u;
}

/* Kernel value prod_j sinc(R_j (x_j - k_j))^l of one pair, without the
 * normalisation prod_j R_j / A (applied once per query in double).
 * q and k hold (R x, sin R x, cos R x) per axis, 3 D values each. Numerators
 * and denominators are multiplied over groups of 4 axes and divided once per
 * group (denominators stay >= 0.5^4 in magnitude). */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_pair_fourier)(int D, int l, const GFI_CU_T *q, const GFI_CU_T *k) {
  GFI_CU_T prod = 1, num = 1, den = 1;
  for (int j = 0; j < D; j++) {
    GFI_CU_T n, d;
    GFI_CU_N(gfi_cu_sinc_parts)(q[3 * j], q[3 * j + 1], q[3 * j + 2], k[3 * j], k[3 * j + 1],
                                k[3 * j + 2], &n, &d);
    num *= n;
    den *= d;
    if ((j & 3) == 3 || j == D - 1) {
      prod *= GFI_CU_N(gfi_cu_div)(num, den);
      num = den = 1;
    }
  }
  return GFI_CU_N(gfi_cu_ipow)(prod, l);
}

/* phi(z) = sum_j a[j] z^j by Horner, (((a_deg z + a_deg-1) z + ..) + a_1) z,
 * as the CPU engines' kernel_phi. a holds GFI_CU_PHI_MAXPOW + 1 values, zero
 * above the degree (a[0] unused): the steps above the degree leave r = +-0,
 * so the value is that of Horner from the degree, bit for bit, and the fixed
 * trip count lets nvcc unroll the loop and keep a[] out of local memory. */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_phi_poly)(const GFI_CU_T *a, GFI_CU_T z) {
  GFI_CU_T r = 0;
  for (int j = GFI_CU_PHI_MAXPOW; j >= 1; j--) r = (r + a[j]) * z;
  return r;
}

/* Kernel value prod_j phi(sinc(R_j (x_j - k_j))) of one pair for a
 * polynomial phi (coefficients a as for gfi_cu_phi_poly), without the
 * normalisation: phi does not factor through the product, so each axis
 * divides once and applies phi by Horner. q and k as for
 * gfi_cu_pair_fourier. */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_pair_fourier_poly)(int D, const GFI_CU_T *a, const GFI_CU_T *q,
                                                   const GFI_CU_T *k) {
  GFI_CU_T prod = 1;
  for (int j = 0; j < D; j++) {
    GFI_CU_T n, d;
    GFI_CU_N(gfi_cu_sinc_parts)(q[3 * j], q[3 * j + 1], q[3 * j + 2], k[3 * j], k[3 * j + 1],
                                k[3 * j + 2], &n, &d);
    prod *= GFI_CU_N(gfi_cu_phi_poly)(a, GFI_CU_N(gfi_cu_div)(n, d));
  }
  return prod;
}

/* ---- attention ----
 * sinc and its derivative from the identity, as the CPU attention engine:
 * the series of sinc_series.h for |u| < 0.5, |sinc| < 2^-64 flushed to 0. */
#define GFI_CU_ATTN_CUT GFI_SINC_CUT
#define GFI_CU_ATTN_FLUSH 5.421010862427522e-20 /* 2^-64 */

GFI_HD void GFI_CU_N(gfi_cu_sinc_both)(GFI_CU_T u, GFI_CU_T sn, GFI_CU_T cs, GFI_CU_T *s,
                                       GFI_CU_T *ds) {
  typedef GFI_CU_T T;
  T u2 = u * u;
  T ser = GFI_SINC_SERIES(T, u2);
  T dser = GFI_SINC_DSERIES(T, u, u2);
  int small = u < (T)GFI_CU_ATTN_CUT && u > -(T)GFI_CU_ATTN_CUT;
  T iu = small ? (T)0 : (T)1 / u;
  T sv = small ? ser : sn * iu;
  sv = (sv < (T)GFI_CU_ATTN_FLUSH && sv > -(T)GFI_CU_ATTN_FLUSH) ? (T)0 : sv;
  *s = sv;
  *ds = small ? dser : (cs - sv) * iu;
}

/* The product over axes of one (query, key) pair in scaled form: full
 * product m 2^e (|m| in [1, 2), m = 0 for an exact zero), and, for the
 * gradient, the number of zero factors nz and the product of the non-zero
 * factors mnz 2^enz. Renormalised every 4 axes (exact powers of two). */
typedef struct {
  GFI_CU_T m, mnz;
  int e, enz, nz;
} GFI_CU_N(gfi_cu_aprod);

GFI_HD void GFI_CU_N(gfi_cu_aprod_init)(GFI_CU_N(gfi_cu_aprod) *p) {
  p->m = p->mnz = 1;
  p->e = p->enz = p->nz = 0;
}
GFI_HD void GFI_CU_N(gfi_cu_aprod_push)(GFI_CU_N(gfi_cu_aprod) *p, GFI_CU_T s, int d, int D) {
  p->m *= s;
  if (s == 0)
    p->nz++;
  else
    p->mnz *= s;
  if ((d & 3) == 3 || d == D - 1) {
    int k;
    p->m = GFI_CU_N(gfi_cu_mant)(p->m, &k);
    p->e += k;
    p->mnz = GFI_CU_N(gfi_cu_mant)(p->mnz, &k);
    p->enz += k;
  }
}
/* Exponent of the product for the row maximum (GFI_CU_ZERO_EXP for 0). */
GFI_HD double GFI_CU_N(gfi_cu_aprod_exp)(const GFI_CU_N(gfi_cu_aprod) *p) {
  return p->m == 0 ? GFI_CU_ZERO_EXP : (double)p->e;
}
/* The product relative to the row's 2^E: m 2^(e - E). */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_aprod_scaled)(const GFI_CU_N(gfi_cu_aprod) *p, double E) {
  return p->m == 0 ? (GFI_CU_T)0 : p->m * GFI_CU_N(gfi_cu_pow2)((double)p->e - E);
}
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_aprod_nz_scaled)(const GFI_CU_N(gfi_cu_aprod) *p, double E) {
  return p->mnz * GFI_CU_N(gfi_cu_pow2)((double)p->enz - E);
}

/* d w~ / d u_d of the scaled weight w~ = (P~)^l, P~ = prod_e s_e 2^-E:
 *     l (s_d y_d)^(l-1) s'_d y_d,   y_d = prod_{e != d} s_e 2^-E.
 * Without zero factors y_d = P~ / s_d (|s_d| >= 2^-64, so y_d is finite and
 * the quotient is accurate to rounding: no 0 * infinity, no cancellation).
 * With one zero factor d0 only that axis has y != 0 and s y = 0: the term is
 * s'_d0 prod_{e != d0} s_e 2^-E for l = 1 and 0 for l >= 2; with two or more
 * zeros every term is 0. This replaces the CPU engine's prefix and suffix
 * products (same values up to rounding; tests compare them). */
GFI_HD GFI_CU_T GFI_CU_N(gfi_cu_attn_grad)(int l, int nz, GFI_CU_T Pt, GFI_CU_T Pnzt, GFI_CU_T s,
                                           GFI_CU_T ds) {
  if (nz == 0) {
    GFI_CU_T y = Pt / s;
    return (GFI_CU_T)l * GFI_CU_N(gfi_cu_ipow0)(Pt, l - 1) * (ds * y);
  }
  if (nz == 1 && s == 0 && l == 1) return ds * Pnzt;
  return (GFI_CU_T)0;
}
