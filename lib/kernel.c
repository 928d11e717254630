/* One-axis generalized Fourier kernels: sinc, A_l, kappa_l, custom phi, and
 * the flat-top family (the operations of kernel_internal.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sum.h>
#include "gfi/kernel.h"
#include "sinc_series.h"
#include "gfi/validate.h"
#include "gsl_quiet.h"
#include "alloc.h"
#include "kernel_internal.h"

/* Both by their Taylor series below GFI_SINC_CUT (sinc_series.h). */
double gfi_sinc(double x) {
  if (fabs(x) < GFI_SINC_CUT) return gfi_sinc_series(x);
  return sin(x) / x;
}

double gfi_sinc_deriv(double x) {
  if (fabs(x) < GFI_SINC_CUT) return gfi_sinc_dseries(x);
  return (cos(x) - sin(x) / x) / x;
}


static double factorial(int n) {
  double r = 1;
  for (int i = 2; i <= n; i++) r *= i;
  return r;
}

double gfi_pow_A(int l) {
  if (gfi_check_order(l) != GFI_OK) return NAN;
  double s = 0;
  for (int k = 0; k <= l / 2; k++) {
    double t = kernel_binom(l, k) * pow(l - 2 * k, l - 1);
    s += (k % 2) ? -t : t;
  }
  return M_PI * s / (ldexp(1.0, l - 1) * factorial(l - 1));
}

/* M_l(0), the B-spline density of a sum of l Uniform(-1,1) at 0, for
 * l = 1..16 (A_l = 2 pi M_l(0)). */
double kernel_bspline0(int l) {
  if (l < 1 || l > 16) return NAN;
  /* sum_{k: l - 2k > 0} (-1)^k C(l,k) (l-2k)^(l-1), exactly in 128 bits */
  __int128 s = 0;
  for (int k = 0; 2 * k < l; k++) {
    __int128 c = 1;
    for (int i = 1; i <= k; i++) c = c * (l - k + i) / i;
    __int128 p = 1;
    for (int i = 0; i < l - 1; i++) p *= (l - 2 * k);
    s += (k % 2) ? -c * p : c * p;
  }
  long double d = ldexpl(1.0L, l);
  for (int i = 2; i <= l - 1; i++) d *= i;
  return (double)((long double)s / d);
}

/* B-spline density of a sum of l Uniform(-1,1), at u <= 0 (it is even). */
static double bspline_M(int l, double u) {
  double s = 0;
  for (int k = 0; k <= l; k++) {
    double a = u + l - 2 * k;
    if (a <= 0) break; /* later terms are zero too */
    double t = kernel_binom(l, k) * pow(a, l - 1);
    s += (k % 2) ? -t : t;
  }
  return s / (ldexp(1.0, l) * factorial(l - 1));
}

double gfi_kappa(int l, double u) {
  if (gfi_check_order(l) != GFI_OK || isnan(u)) return NAN;
  double au = fabs(u);
  if (l == 1) return au < 1 ? 1.0 : (au == 1 ? 0.5 : 0.0); /* midpoint at the jump */
  if (au >= l) return 0.0;
  /* Evaluate at -|u| so that only the few terms with u + l - 2k > 0 enter:
   * no cancellation near the edge of the support. */
  return bspline_M(l, -au) / bspline_M(l, 0.0);
}

int gfi_kernel_pow(gfi_kernel *k, int l) {
  if (!k) return GFI_EINVAL;
  int st = gfi_check_order(l);
  if (st) return st;
  k->kind = GFI_PHI_POW;
  k->l = l;
  k->fn = NULL;
  k->ctx = NULL;
  k->A = gfi_pow_A(l);
  k->A_finite = 1;
  for (int j = 0; j <= GFI_PHI_MAXPOW; j++) k->coef[j] = j == l;
  return GFI_OK;
}

int gfi_kernel_poly(gfi_kernel *k, int deg, const double *a) {
  if (!k || !a) return GFI_EINVAL;
  int st = gfi_check_order(deg);
  if (st) return st;
  for (int j = 0; j <= deg; j++)
    if (!isfinite(a[j])) return GFI_ENONFINITE;
  if (a[0] != 0 || !(a[deg] > 0)) return GFI_EINVAL;
  for (int j = 1; j <= deg; j++)
    if (a[j] < 0) return GFI_EINVAL;
  double A = 0;
  for (int j = 1; j <= deg; j++) A += a[j] * gfi_pow_A(j);
  k->kind = GFI_PHI_POLY;
  k->l = deg;
  k->fn = NULL;
  k->ctx = NULL;
  for (int j = 0; j <= GFI_PHI_MAXPOW; j++) k->coef[j] = j <= deg ? a[j] : 0.0;
  k->A_finite = isfinite(A) && A > 0;
  k->A = k->A_finite ? A : INFINITY;
  return GFI_OK;
}

int gfi_kernel_flattop(gfi_kernel *k, double c) {
  if (!k || !(c > 0 && c < 1)) return GFI_EINVAL;
  k->kind = GFI_PHI_FLATTOP;
  k->l = 1;
  k->fn = NULL;
  k->ctx = NULL;
  for (int j = 0; j <= GFI_PHI_MAXPOW; j++) k->coef[j] = 0;
  k->coef[0] = c;
  /* int sinc((1 + c) u / 2) sinc((1 - c) u / 2) du = 2 pi kappa(0) / (1 + c) */
  k->A = 2 * M_PI / (1 + c);
  k->A_finite = 1;
  return GFI_OK;
}

/* ---- the flat-top family (kernel_internal.h) ---- */

double kernel_flattop_spatial(double c, double u) {
  return gfi_sinc(0.5 * (1 + c) * u) * gfi_sinc(0.5 * (1 - c) * u);
}

/* int_0^1 t^P kappa(t) dt = c^(P+1) / (P+1) + (1 - c) int_0^1 (c + (1 - c) s)^P
 * (1 - s) ds, the second by the binomial sum: positive terms only. */
static double flattop_moment(double c, int P) {
  const double e = 1 - c;
  double s = 0;
  for (int k = 0; k <= P; k++) s += kernel_binom(P, k) * pow(c, P - k) * pow(e, k) / ((k + 1) * (k + 2));
  return pow(c, P + 1) / (P + 1) + e * s;
}

double kernel_dbound(const gfi_kernel *k, int P) {
  if (P != 1 && P != 4 && P != 6) return NAN;
  if (k->kind == GFI_PHI_FLATTOP) {
    /* A K(u) = (A / 2 pi) int kappa(t) e^{-i t u} dt, A / 2 pi = 1 / (1 + c),
     * peak 1: |(A K)^(P)| <= 2 int_0^1 t^P kappa / (1 + c) */
    const double c = kernel_flattop_c(k);
    return 2 * flattop_moment(c, P) / (1 + c) * (1 + 1e-12);
  }
  /* phi(sinc t) = sum_k a_k sinc(t)^k with a_k >= 0, each sinc^k with a
   * nonnegative transform: |(sinc^k)^(P)| <= |(sinc^k)^(P)(0)| = P! |[t^P]
   * sinc(t)^k| (sinc t = 1 - t^2/6 + t^4/120 - t^6/5040 ...) for even P;
   * |d/dt sinc(t)^k| <= k max |sinc'| = 0.4362 k. Averaged with a_k, per
   * unit of phi(1) = sum_k a_k. */
  double a = 0, m = 0;
  for (int j = 1; j <= GFI_PHI_MAXPOW; j++) {
    const double aj = kernel_coef(k, j), d = j;
    a += aj;
    if (P == 1) m += d * aj;
    else if (P == 4) m += aj * 24 * (d / 120.0 + d * (d - 1) / 72.0);
    else m += aj * 720 * (d / 5040.0 + d * (d - 1) / 720.0 + d * (d - 1) * (d - 2) / 1296.0);
  }
  return P == 1 ? 0.44 * m / a : m / a;
}

/* G(v) = 2 c sinc(c v) + (2 / e^2) int_0^e s^2 cos(v (1 - s)) ds, e = 1 - c,
 * the second 2 e Re(e^{i v} J(v e)) with J(z) = int_0^1 t^2 e^{-i z t} dt:
 * its series sum_k (-i z)^k / (k! (k + 3)) for |z| < 2 (terms below 2^k / k!),
 * else e^{-i z} (i / z + 2 / z^2 - 2 i / z^3) + 2 i / z^3 (terms below 1 / z). */
double kernel_pair_flattop(double c, double v) {
  v = fabs(v);
  const double e = 1 - c, z = v * e;
  double re;
  if (z < 2) {
    double jr = 0, ji = 0, t = 1; /* t = z^k / k! */
    for (int k = 0; k < 40; k++) {
      double term = t / (k + 3);
      switch (k % 4) { /* (-i)^k */
        case 0: jr += term; break;
        case 1: ji -= term; break;
        case 2: jr -= term; break;
        default: ji += term; break;
      }
      t *= z / (k + 1);
    }
    re = cos(v) * jr - sin(v) * ji; /* Re(e^{i v} J) */
  } else {
    const double iz = 1 / z, iz2 = iz * iz, iz3 = iz2 * iz;
    re = cos(c * v) * 2 * iz2 - sin(c * v) * (iz - 2 * iz3) - 2 * sin(v) * iz3;
  }
  return 2 * c * gfi_sinc(c * v) + 2 * e * re;
}

int gfi_kernel_check_band(const gfi_kernel *k) {
  if (!k) return GFI_EINVAL;
  if (k->kind == GFI_PHI_FLATTOP) {
    const double c = kernel_flattop_c(k);
    if (!(c > 0 && c < 1) || k->l != 1) return GFI_EINVAL;
    return !k->A_finite || !(k->A > 0) || !isfinite(k->A) ? GFI_EINFINITE_A : GFI_OK;
  }
  if (k->kind == GFI_PHI_CUSTOM) return GFI_EUNSUPPORTED;
  if (k->kind != GFI_PHI_POW && k->kind != GFI_PHI_POLY) return GFI_EINVAL;
  int st = gfi_check_order(k->l);
  if (st) return st;
  if (!k->A_finite || !(k->A > 0) || !isfinite(k->A)) return GFI_EINFINITE_A;
  return GFI_OK;
}

double gfi_kernel_kappa(const gfi_kernel *k, double u) {
  if (k && k->kind == GFI_PHI_FLATTOP) {
    const double c = kernel_flattop_c(k), au = fabs(u);
    if (isnan(u) || !(c > 0 && c < 1)) return NAN;
    return au <= c ? 1.0 : au < 1 ? (1 - au) / (1 - c) : 0.0;
  }
  if (k && kernel_is_gauss(k)) return exp(-0.5 * u * u); /* the Gaussian (kernel_gauss.c) */
  if (!k || (k->kind != GFI_PHI_POW && k->kind != GFI_PHI_POLY)) return NAN;
  if (k->kind == GFI_PHI_POW) return gfi_kappa(k->l, u);
  if (!k->A_finite) return NAN;
  double s = 0;
  for (int j = 1; j <= k->l; j++)
    if (k->coef[j] != 0) s += k->coef[j] * gfi_pow_A(j) * gfi_kappa(j, u);
  return s / k->A;
}

double gfi_kappa_sq_integral(const gfi_kernel *k) {
  if (gfi_kernel_check_band(k) != GFI_OK) return NAN;
  if (k->kind == GFI_PHI_FLATTOP) {
    const double c = kernel_flattop_c(k);
    return 2 * c + 2 * (1 - c) / 3; /* 1 on [-c, c], two linear ramps squared */
  }
  if (k->kind == GFI_PHI_POW) {
    double m = kernel_bspline0(k->l);
    return kernel_bspline0(2 * k->l) / (m * m);
  }
  /* int phi(sinc)^2 = sum_ij a_i a_j A_(i+j), A_n = 2 pi M_n(0) */
  double s = 0;
  for (int i = 1; i <= k->l; i++)
    for (int j = 1; j <= k->l; j++) s += k->coef[i] * k->coef[j] * kernel_bspline0(i + j);
  return 4 * M_PI * M_PI * s / (k->A * k->A);
}

double gfi_kernel_eval(const gfi_kernel *k, double x) { return kernel_spatial(k, x); }

/* ---- A for a custom phi ------------------------------------------------ */

typedef struct {
  gfi_phi_fn fn;
  void *ctx;
  int nonfinite;
} phi_ctx;

static double integrand(double z, void *vp) {
  phi_ctx *c = vp;
  double v = c->fn(gfi_sinc(z), c->ctx);
  if (!isfinite(v)) {
    c->nonfinite = 1;
    return 0;
  }
  return v;
}

/* Number of half-periods integrated one by one. */
#define NPER 2048
/* Terms handed to the Levin-u transform. */
#define NLEVIN 40

static int phi_integral(gfi_phi_fn fn, void *ctx, double *A, double *abserr);

int gfi_phi_integral(gfi_phi_fn fn, void *ctx, double *A, double *abserr) {
  if (!fn) return GFI_EINVAL;
  /* qag reports rounding (accepted) and failures (GFI_EQUAD) through GSL's
   * error handler. */
  gfi_gsl_quiet_enter();
  int st = phi_integral(fn, ctx, A, abserr);
  gfi_gsl_quiet_leave();
  return st;
}

static int phi_integral(gfi_phi_fn fn, void *ctx, double *A, double *abserr) {
  phi_ctx c = {fn, ctx, 0};
  gsl_function F = {integrand, &c};
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(64);
  if (!ws) return GFI_ENOMEM;
  double *terms = gfi_malloc2(NPER, sizeof *terms);
  if (!terms) {
    gsl_integration_workspace_free(ws);
    return GFI_ENOMEM;
  }
  int status = GFI_OK;
  double quad_err = 0;
  /* a_k = int_{k pi}^{(k+1) pi} phi(sinc z) dz: one period of sin per term,
   * so phi(sinc) is smooth inside each piece. */
  for (int k = 0; k < NPER; k++) {
    double r, e;
    int gs = gsl_integration_qag(&F, k * M_PI, (k + 1) * M_PI, 1e-300, 1e-13, 64,
                                 GSL_INTEG_GAUSS31, ws, &r, &e);
    if (c.nonfinite) {
      status = GFI_ENONFINITE;
      goto out;
    }
    if (gs != GSL_SUCCESS && gs != GSL_EROUND) {
      status = GFI_EQUAD;
      goto out;
    }
    terms[k] = r;
    quad_err += e;
  }
  /* Divergence test on pair sums b_m = a_2m + a_2m+1 (removes the alternating
   * part of the tail): a convergent tail decays like m^-p with p > 1, so
   * m |b_m| falls; for phi = |z| or ReLU it stays constant (p = 1), for
   * sigmoid it grows. Compare window means of m |b_m| at m ~ 200 and ~ 900. */
  double t1 = 0, t2 = 0, total = 0;
  for (int m = 0; m < NPER / 2; m++) {
    double b = terms[2 * m] + terms[2 * m + 1];
    total += b;
    if (m >= 150 && m < 250) t1 += m * fabs(b);
    if (m >= 900 && m < 1000) t2 += m * fabs(b);
  }
  double scale = fabs(total) > 1e-300 ? fabs(total) : 1e-300;
  if (!(t2 < 1e-13 * 100 * scale || t2 < 0.7 * t1)) {
    status = GFI_EINFINITE_A;
    if (A) *A = INFINITY;
    if (abserr) *abserr = INFINITY;
    goto out;
  }
  /* Levin-u on the first NLEVIN half-period terms; cross-check against the
   * transform started further out (direct sum of the first 20, Levin on the
   * next NLEVIN). */
  {
    gsl_sum_levin_u_workspace *lw = gsl_sum_levin_u_alloc(NLEVIN);
    if (!lw) {
      status = GFI_ENOMEM;
      goto out;
    }
    double s1, e1, s2, e2, head = 0;
    gsl_sum_levin_u_accel(terms, NLEVIN, lw, &s1, &e1);
    for (int k = 0; k < 20; k++) head += terms[k];
    gsl_sum_levin_u_accel(terms + 20, NLEVIN, lw, &s2, &e2);
    s2 += head;
    gsl_sum_levin_u_free(lw);
    double val = 2 * s1;
    double err = 2 * (fabs(s1 - s2) + e1 + quad_err);
    if (!isfinite(val)) {
      status = GFI_EINFINITE_A;
      val = INFINITY;
    } else if (!(val > 0)) {
      status = GFI_EINFINITE_A; /* zero or negative: no density kernel */
    } else if (err > 1e-6 * fabs(val)) {
      status = GFI_EQUAD;
    }
    if (A) *A = val;
    if (abserr) *abserr = err;
  }
out:
  free(terms);
  gsl_integration_workspace_free(ws);
  return status;
}

int gfi_kernel_custom(gfi_kernel *k, gfi_phi_fn fn, void *ctx) {
  if (!k || !fn) return GFI_EINVAL;
  double A = INFINITY;
  int st = gfi_phi_integral(fn, ctx, &A, NULL);
  if (st != GFI_OK && st != GFI_EINFINITE_A) return st;
  k->kind = GFI_PHI_CUSTOM;
  k->l = 0;
  for (int j = 0; j <= GFI_PHI_MAXPOW; j++) k->coef[j] = 0;
  k->fn = fn;
  k->ctx = ctx;
  k->A = A;
  k->A_finite = (st == GFI_OK);
  return GFI_OK;
}

/* ---- the text form (gfi --phi) ---- */

static int kernel_parse_fail(gfi_errinfo *err, int status, size_t column, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static int kernel_parse_fail(gfi_errinfo *err, int status, size_t column, const char *fmt, ...) {
  if (err) {
    gfi_errinfo_clear(err);
    err->column = column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return status;
}

static int kernel_parse_poly(gfi_kernel *k, const char *spec, gfi_errinfo *err) {
  const char *s = spec + 5;
  double a[GFI_PHI_MAXPOW + 1] = {0};
  int d = 0;
  const char *p = s;
  for (;;) {
    size_t col = (size_t)(p - spec) + 1;
    if (d == GFI_PHI_MAXPOW)
      return kernel_parse_fail(err, GFI_EORDER, col, "poly: at most %d coefficients (z^1..z^%d), got more in '%s'",
                               GFI_PHI_MAXPOW, GFI_PHI_MAXPOW, s);
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || (*end != ',' && *end != '\0'))
      return kernel_parse_fail(err, GFI_EINVAL, col, "poly: coefficient %d ('%.*s') is not a number in '%s'", d + 1,
                               (int)strcspn(p, ","), p, s);
    if (!isfinite(v))
      return kernel_parse_fail(err, GFI_ENONFINITE, col, "poly: coefficient %d of '%s' is out of range (not finite)",
                               d + 1, s);
    if (errno == ERANGE)
      return kernel_parse_fail(err, GFI_ERANGE, col, "poly: coefficient %d of '%s' is out of range", d + 1, s);
    if (v < 0)
      return kernel_parse_fail(err, GFI_EINVAL, col, "poly: coefficient %d (of z^%d) is negative (%g): gfi's "
                               "polynomial phi takes coefficients >= 0", d + 1, d + 1, v);
    a[++d] = v;
    if (*end == '\0') break;
    p = end + 1;
  }
  while (d > 0 && a[d] == 0) d--;
  if (d == 0) return kernel_parse_fail(err, GFI_EINVAL, 0, "poly: every coefficient of '%s' is 0", s);
  gfi_kernel t;
  int st = gfi_kernel_poly(&t, d, a);
  if (st) return kernel_parse_fail(err, st, 0, "poly:%s: %s", s, gfi_strerror(st));
  *k = t;
  return GFI_OK;
}

static int kernel_parse_flattop(gfi_kernel *k, const char *spec, gfi_errinfo *err) {
  const char *s = spec + 8;
  char *end;
  errno = 0;
  double c = strtod(s, &end);
  if (end == s || *end != '\0')
    return kernel_parse_fail(err, GFI_EINVAL, 9, "flattop:c needs a number c in (0, 1), got '%s'", s);
  if (!(c > 0 && c < 1) || errno == ERANGE)
    return kernel_parse_fail(err, GFI_EINVAL, 9, "flattop: c must be in (0, 1) (the flat part |t| <= c R of the "
                             "transform), got '%s'", s);
  gfi_kernel t;
  int st = gfi_kernel_flattop(&t, c);
  if (st) return kernel_parse_fail(err, st, 9, "flattop:%s: %s", s, gfi_strerror(st));
  *k = t;
  return GFI_OK;
}

int gfi_kernel_parse(gfi_kernel *k, const char *spec, gfi_errinfo *err) {
  if (err) gfi_errinfo_clear(err);
  if (!k || !spec) return kernel_parse_fail(err, GFI_EINVAL, 0, "no kernel or no phi specification");
  if (strncmp(spec, "poly:", 5) == 0) return kernel_parse_poly(k, spec, err);
  if (strncmp(spec, "flattop:", 8) == 0) return kernel_parse_flattop(k, spec, err);
  if (strncmp(spec, "pow:", 4) != 0)
    return kernel_parse_fail(err, GFI_EINVAL, 0, "unknown phi '%s' (expected pow:L with L = 1..8, poly:a1,..,ad "
                             "or flattop:c with 0 < c < 1)", spec);
  char *end;
  errno = 0;
  long l = strtol(spec + 4, &end, 10);
  if (end == spec + 4 || *end != '\0' || errno == ERANGE)
    return kernel_parse_fail(err, GFI_EINVAL, 5, "pow:L needs an integer L, got '%s'", spec + 4);
  if (l < 1 || l > 8) return kernel_parse_fail(err, GFI_EORDER, 5, "power l must be in 1..8, got %ld", l);
  gfi_kernel t;
  int st = gfi_kernel_pow(&t, (int)l);
  if (st) return kernel_parse_fail(err, st, 5, "%s", gfi_strerror(st));
  *k = t;
  return GFI_OK;
}
