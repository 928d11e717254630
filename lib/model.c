/* Truth models: normal mixtures with dense covariances, the 1-D families
 * Laplace, Cauchy, Student-t, Uniform and Beta, and products of 1-D models.
 * Each has a sampler, a density and a characteristic function
 * psi(t) = E exp(i t.X). See gfi/model.h for the API.
 *
 * GSL's default error handler aborts the process, and the library must never
 * abort. So every GSL routine used here is either one that cannot fail for
 * the validated arguments it gets (samplers, lngamma, lnbeta, lnKnu for
 * x > 0, a Gauss-Jacobi rule whose exponents are kept in (-1, 1) so that its
 * Gamma functions cannot overflow), or is replaced by a few lines of our own:
 * the Cholesky factor below is computed here because
 * gsl_linalg_cholesky_decomp1 reports a non-positive-definite matrix through
 * that handler. (Only running out of memory inside GSL can still reach it.)
 * tests/test_models.c installs a counting handler to keep this true. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_bessel.h>
#include <gsl/gsl_sf_gamma.h>

#include "gfi/kernel.h"
#include "gfi/model.h"
#include "gfi/validate.h"
#include "model_internal.h"
#include "alloc.h"
#include "chol.h"

struct gfi_model {
  gfi_model_kind kind;
  size_t D;
  char *desc;           /* what gfi_model_describe returns */

  /* GFI_MODEL_MIXTURE */
  size_t K;
  double *w;            /* K weights, normalised to sum 1 */
  double *cumw;         /* K cumulative weights, cumw[K-1] == 1 exactly */
  double *means;        /* K x D */
  double *covs;         /* K x D x D, symmetrised copies of the input */
  double *chol;         /* K x D x D lower factors L, cov = L L^T (upper = 0) */
  double *logc;         /* K: log w - (D/2) log(2 pi) - log det L */

  /* 1-D families: (mu, b), (x0, gamma), (nu, -), (a, b), (a, b) */
  double p1, p2;
  double logn;          /* t: log of the pdf's constant; beta: -log B(a, b) */
  double cfc;           /* t: lgamma(nu/2) + (nu/2 - 1) log 2, the cf's constant */

  /* GFI_MODEL_PRODUCT: D owned 1-D factors */
  gfi_model **factors;
};

/* ------------------------------------------------------------------------ */
/* Allocation and descriptions                                               */

static char *vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int len = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (len < 0) return NULL;
  char *s = malloc((size_t)len + 1);
  if (s) vsnprintf(s, (size_t)len + 1, fmt, ap);
  return s;
}

static char *format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

static gfi_model *model_new(gfi_model_kind kind, size_t D) {
  gfi_model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->kind = kind;
  m->D = D;
  return m;
}

void gfi_model_free(gfi_model *m) {
  if (!m) return;
  free(m->desc);
  free(m->w);
  free(m->cumw);
  free(m->means);
  free(m->covs);
  free(m->chol);
  free(m->logc);
  if (m->factors) {
    for (size_t j = 0; j < m->D; j++) gfi_model_free(m->factors[j]);
    free(m->factors);
  }
  free(m);
}

int gfi_model_set_description(gfi_model *m, const char *desc) {
  if (!m || !desc) return GFI_EINVAL;
  char *s = format("%s", desc);
  if (!s) return GFI_ENOMEM;
  free(m->desc);
  m->desc = s;
  return GFI_OK;
}

/* Finish a constructor: attach the description (already formatted, may be
 * NULL when formatting ran out of memory) and hand the model out. */
static int finish(gfi_model **out, gfi_model *m, char *desc) {
  if (!desc) {
    gfi_model_free(m);
    return GFI_ENOMEM;
  }
  m->desc = desc;
  *out = m;
  return GFI_OK;
}

size_t gfi_model_dim(const gfi_model *m) { return m ? m->D : 0; }

gfi_model_kind gfi_model_get_kind(const gfi_model *m) {
  return m ? m->kind : GFI_MODEL_MIXTURE;
}

const char *gfi_model_describe(const gfi_model *m) {
  if (!m) return "(no model)";
  return m->desc ? m->desc : "(undescribed model)";
}

int gfi_model_has_cf(const gfi_model *m) { return m != NULL; }

/* ------------------------------------------------------------------------ */
/* Normal mixtures                                                           */

/* cov = L L^T for a symmetric D x D matrix (row-major, lower L, upper part
 * zeroed; chol.h). A pivot must exceed D * eps times its diagonal entry: a
 * matrix that is only positive semi-definite up to rounding would give a
 * density dominated by rounding error, so it is reported as not positive
 * definite. */
static int cholesky(size_t D, const double *S, double *L) {
  return chol_lower_rel(D, S, L, (double)D * DBL_EPSILON, NULL) ? GFI_ENOTPD : GFI_OK;
}

/* Copy cov into S, checking symmetry to a relative 1e-12 and averaging the
 * two triangles so that the stored matrix is exactly symmetric. */
static int symmetrise(size_t D, const double *cov, double *S) {
  for (size_t i = 0; i < D; i++) {
    S[i * D + i] = cov[i * D + i];
    for (size_t j = 0; j < i; j++) {
      double a = cov[i * D + j], b = cov[j * D + i];
      if (fabs(a - b) > 1e-12 * fmax(fabs(a), fabs(b))) return GFI_ENOTPD;
      S[i * D + j] = S[j * D + i] = 0.5 * (a + b);
    }
  }
  return GFI_OK;
}

/* The common constructor; means and covs may be NULL (zero, identity). */
static int mixture_new(gfi_model **out, size_t D, size_t K, const double *w,
                       const double *means, const double *covs) {
  int st;
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if ((st = gfi_check_dim(D))) return st;
  if (K == 0 || !w) return GFI_EINVAL;
  if (K > SIZE_MAX / sizeof(double) / D / D) return GFI_ENOMEM;
  double wsum;
  if ((st = gfi_check_weights(w, K, &wsum))) return st;
  for (size_t a = 0; a < K; a++)
    if (!(w[a] > 0)) return GFI_EWEIGHT;
  if (means && gfi_check_finite(means, K * D, NULL)) return GFI_EINVAL;
  if (covs && gfi_check_finite(covs, K * D * D, NULL)) return GFI_EINVAL;

  gfi_model *m = model_new(GFI_MODEL_MIXTURE, D);
  if (!m) return GFI_ENOMEM;
  m->K = K;
  m->w = gfi_malloc2(K, sizeof *m->w);
  m->cumw = gfi_malloc2(K, sizeof *m->cumw);
  m->logc = gfi_malloc2(K, sizeof *m->logc);
  m->means = gfi_calloc4(K, D, 1, sizeof *m->means);
  m->covs = gfi_calloc4(K, D, D, sizeof *m->covs);
  m->chol = gfi_calloc4(K, D, D, sizeof *m->chol);
  if (!m->w || !m->cumw || !m->logc || !m->means || !m->covs || !m->chol) {
    gfi_model_free(m);
    return GFI_ENOMEM;
  }
  if (means) memcpy(m->means, means, K * D * sizeof *m->means);

  double cum = 0;
  for (size_t a = 0; a < K; a++) {
    m->w[a] = w[a] / wsum;
    cum += m->w[a];
    m->cumw[a] = cum;
  }
  m->cumw[K - 1] = 1.0;  /* so that u in [0, 1) always finds a component */

  for (size_t a = 0; a < K; a++) {
    double *S = m->covs + a * D * D, *L = m->chol + a * D * D;
    if (covs) {
      st = symmetrise(D, covs + a * D * D, S);
    } else {
      for (size_t j = 0; j < D; j++) S[j * D + j] = 1.0;
      st = GFI_OK;
    }
    if (!st) st = cholesky(D, S, L);
    if (st) {
      gfi_model_free(m);
      return st;
    }
    double logdet = 0;  /* log det L = (1/2) log det cov */
    for (size_t j = 0; j < D; j++) logdet += log(L[j * D + j]);
    m->logc[a] = log(m->w[a]) - 0.5 * (double)D * log(2 * M_PI) - logdet;
  }
  char *desc = K == 1 ? format("normal(D=%zu)", D) : format("mixture(K=%zu,D=%zu)", K, D);
  return finish(out, m, desc);
}

int gfi_model_normal(gfi_model **out, size_t D, const double *mean, const double *cov) {
  const double one = 1.0;
  return mixture_new(out, D, 1, &one, mean, cov);
}

int gfi_model_mixture(gfi_model **out, size_t D, size_t K, const double *w,
                      const double *means, const double *covs) {
  if (out) *out = NULL;
  if (!means || !covs) return GFI_EINVAL;
  return mixture_new(out, D, K, w, means, covs);
}

/* Component a of the mixture for a uniform u in [0, 1): binary search of the
 * cumulative weights (O(log K), no table to build). */
static size_t mixture_pick(const gfi_model *m, double u) {
  size_t lo = 0, hi = m->K - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (u < m->cumw[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

static int mixture_sample(const gfi_model *m, gsl_rng *r, size_t n, double *x) {
  const size_t D = m->D;
  double *z = gfi_malloc2(D, sizeof *z);
  if (!z) return GFI_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    /* A single normal draws no uniform, so its stream is pure normals. */
    size_t a = m->K == 1 ? 0 : mixture_pick(m, gsl_rng_uniform(r));
    const double *mu = m->means + a * D, *L = m->chol + a * D * D;
    for (size_t j = 0; j < D; j++) z[j] = gsl_ran_gaussian_ziggurat(r, 1.0);
    for (size_t j = 0; j < D; j++) {
      double s = mu[j];
      for (size_t k = 0; k <= j; k++) s += L[j * D + k] * z[k];
      x[i * D + j] = s;
    }
  }
  free(z);
  return GFI_OK;
}

/* |L^{-1} v|^2 by forward substitution; v is overwritten. */
static double mahalanobis2(size_t D, const double *L, double *v) {
  double q = 0;
  for (size_t j = 0; j < D; j++) {
    double s = v[j];
    for (size_t k = 0; k < j; k++) s -= L[j * D + k] * v[k];
    v[j] = s / L[j * D + j];
    q += v[j] * v[j];
  }
  return q;
}

/* The density is summed in log space (log-sum-exp over components): the
 * normalising constant of a narrow component in many dimensions overflows
 * while its exponential factor underflows, although their product and the
 * density are perfectly representable. */
static int mixture_pdf(const gfi_model *m, size_t n, const double *x, double *p) {
  const size_t D = m->D, K = m->K;
  double *v = gfi_malloc2(D, sizeof *v);
  if (!v) return GFI_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const double *xi = x + i * D;
    double lmax = -INFINITY, s = 0;
    for (size_t a = 0; a < K; a++) {
      const double *mu = m->means + a * D;
      for (size_t j = 0; j < D; j++) v[j] = xi[j] - mu[j];
      double l = m->logc[a] - 0.5 * mahalanobis2(D, m->chol + a * D * D, v);
      if (!(l > -INFINITY)) continue;  /* this component's density is 0 */
      if (l > lmax) {
        s = s * exp(lmax - l) + 1.0;
        lmax = l;
      } else {
        s += exp(l - lmax);
      }
    }
    p[i] = lmax > -INFINITY ? exp(lmax + log(s)) : 0.0;
  }
  free(v);
  return GFI_OK;
}

/* psi(t) = sum_a w_a exp(i t.mu_a - |L_a^T t|^2 / 2); the quadratic form is
 * taken as a sum of squares so it can never come out negative. */
static int mixture_cf(const gfi_model *m, size_t n, const double *t, double *re, double *im) {
  const size_t D = m->D, K = m->K;
  for (size_t i = 0; i < n; i++) {
    const double *ti = t + i * D;
    double sr = 0, si = 0;
    for (size_t a = 0; a < K; a++) {
      const double *mu = m->means + a * D, *L = m->chol + a * D * D;
      double phase = 0, q = 0;
      for (size_t k = 0; k < D; k++) {
        double u = 0;
        for (size_t j = k; j < D; j++) u += L[j * D + k] * ti[j];
        q += u * u;
        phase += ti[k] * mu[k];
      }
      double amp = m->w[a] * exp(-0.5 * q);
      sr += amp * cos(phase);
      si += amp * sin(phase);
    }
    re[i] = sr;
    im[i] = si;
  }
  return GFI_OK;
}

int gfi_model_mixture_parts(const gfi_model *m, size_t *K, const double **w,
                            const double **means, const double **covs) {
  if (!m) return GFI_EINVAL;
  if (m->kind != GFI_MODEL_MIXTURE) return GFI_EUNSUPPORTED;
  if (K) *K = m->K;
  if (w) *w = m->w;
  if (means) *means = m->means;
  if (covs) *covs = m->covs;
  return GFI_OK;
}

/* ------------------------------------------------------------------------ */
/* One-dimensional families: constructors                                    */

int gfi_model_laplace(gfi_model **out, double mu, double b) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (!isfinite(mu) || !isfinite(b) || !(b > 0)) return GFI_EINVAL;
  gfi_model *m = model_new(GFI_MODEL_LAPLACE, 1);
  if (!m) return GFI_ENOMEM;
  m->p1 = mu;
  m->p2 = b;
  return finish(out, m, format("laplace(mu=%.15g,b=%.15g)", mu, b));
}

int gfi_model_cauchy(gfi_model **out, double x0, double gamma) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (!isfinite(x0) || !isfinite(gamma) || !(gamma > 0)) return GFI_EINVAL;
  gfi_model *m = model_new(GFI_MODEL_CAUCHY, 1);
  if (!m) return GFI_ENOMEM;
  m->p1 = x0;
  m->p2 = gamma;
  return finish(out, m, format("cauchy(x0=%.15g,gamma=%.15g)", x0, gamma));
}

int gfi_model_student_t(gfi_model **out, double nu) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (!isfinite(nu) || !(nu > 0)) return GFI_EINVAL;
  gfi_model *m = model_new(GFI_MODEL_STUDENT_T, 1);
  if (!m) return GFI_ENOMEM;
  m->p1 = nu;
  /* gsl_sf_lngamma rather than lgamma: the latter writes the global signgam. */
  m->logn = gsl_sf_lngamma(0.5 * (nu + 1)) - gsl_sf_lngamma(0.5 * nu) - 0.5 * log(nu * M_PI);
  m->cfc = gsl_sf_lngamma(0.5 * nu) + (0.5 * nu - 1) * M_LN2;
  return finish(out, m, format("student_t(nu=%.15g)", nu));
}

int gfi_model_uniform(gfi_model **out, double a, double b) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (!isfinite(a) || !isfinite(b) || !(a < b) || !isfinite(b - a)) return GFI_EINVAL;
  gfi_model *m = model_new(GFI_MODEL_UNIFORM, 1);
  if (!m) return GFI_ENOMEM;
  m->p1 = a;
  m->p2 = b;
  return finish(out, m, format("uniform(a=%.15g,b=%.15g)", a, b));
}

int gfi_model_beta(gfi_model **out, double a, double b) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (!isfinite(a) || !isfinite(b) || !(a > 0) || !(b > 0)) return GFI_EINVAL;
  gfi_model *m = model_new(GFI_MODEL_BETA, 1);
  if (!m) return GFI_ENOMEM;
  m->p1 = a;
  m->p2 = b;
  m->logn = -gsl_sf_lnbeta(a, b);
  return finish(out, m, format("beta(a=%.15g,b=%.15g)", a, b));
}

/* ------------------------------------------------------------------------ */
/* One-dimensional families: densities                                       */

static double beta_pdf1(const gfi_model *m, double x) {
  const double a = m->p1, b = m->p2;
  if (x < 0 || x > 1) return 0.0;
  /* At the end points (a-1) log 0 is 0 * -inf when a == 1: decide by hand. */
  if (x == 0) return a < 1 ? INFINITY : a == 1 ? exp(m->logn) : 0.0;
  if (x == 1) return b < 1 ? INFINITY : b == 1 ? exp(m->logn) : 0.0;
  return exp(m->logn + (a - 1) * log(x) + (b - 1) * log1p(-x));
}

static double pdf1(const gfi_model *m, double x) {
  switch (m->kind) {
  case GFI_MODEL_LAPLACE:
    return exp(-fabs(x - m->p1) / m->p2) / (2 * m->p2);
  case GFI_MODEL_CAUCHY: {
    double u = (x - m->p1) / m->p2;
    return 1.0 / (M_PI * m->p2 * (1 + u * u));
  }
  case GFI_MODEL_STUDENT_T:
    return exp(m->logn - 0.5 * (m->p1 + 1) * log1p(x * x / m->p1));
  case GFI_MODEL_UNIFORM:
    return (x >= m->p1 && x <= m->p2) ? 1.0 / (m->p2 - m->p1) : 0.0;
  case GFI_MODEL_BETA:
    return beta_pdf1(m, x);
  default:
    return NAN;  /* not reached: mixtures and products have their own */
  }
}

/* ------------------------------------------------------------------------ */
/* One-dimensional families: characteristic functions                        */

/* Student-t: psi(t) = K_mu(z) z^mu / (Gamma(mu) 2^(mu-1)), mu = nu/2,
 * z = sqrt(nu)|t|, evaluated as the exponential of its logarithm with GSL's
 * log K_mu, which neither overflows for small z nor underflows for large z.
 * Below z = 1e-150 GSL's unscaled path could overflow for mu <= 1; there
 * K_mu(z) = Gamma(mu)/2 (z/2)^-mu + Gamma(-mu)/2 (z/2)^mu up to a relative
 * O(z^2) (< 1e-300), giving psi = 1 - Gamma(1-mu)/Gamma(1+mu) (z/2)^(2mu)
 * for mu < 1 and psi = 1 to double precision for mu >= 1.
 * Accuracy: the logarithm is a difference of terms of size ~mu log mu, so the
 * absolute error grows with nu: 1e-13 for nu <= 100, and against mpmath
 * 7e-12 at nu = 1e4, 3e-10 at 1e6, 8e-9 at 1e7. */
static double student_t_cf1(const gfi_model *m, double t) {
  const double nu = m->p1, mu = 0.5 * nu;
  double z = sqrt(nu) * fabs(t);
  if (z == 0) return 1.0;
  if (z < 1e-150) {
    if (mu >= 1) return 1.0;
    return 1.0 - exp(gsl_sf_lngamma(1 - mu) - gsl_sf_lngamma(1 + mu) + 2 * mu * log(0.5 * z));
  }
  gsl_sf_result lk;
  if (gsl_sf_bessel_lnKnu_e(mu, z, &lk) != GSL_SUCCESS) return NAN;
  double v = exp(lk.val + mu * log(z) - m->cfc);
  return v > 1.0 ? 1.0 : v;  /* rounding must not push |psi| above 1 */
}

/* Uniform(a, b): psi(t) = e^{i t c} sin(t h)/(t h), c = (a+b)/2, h = (b-a)/2.
 * This is (e^{itb} - e^{ita})/(it(b-a)) without its cancellation near t = 0
 * (gfi_sinc switches to the Taylor series there). */
static void uniform_cf1(const gfi_model *m, double t, double *re, double *im) {
  const double c = 0.5 * m->p1 + 0.5 * m->p2, h = 0.5 * m->p2 - 0.5 * m->p1;
  double s = gfi_sinc(t * h);
  *re = s * cos(t * c);
  *im = s * sin(t * c);
}

/* Beta(a, b): psi(t) = int_0^1 e^{itx} x^(a-1) (1-x)^(b-1) dx / B(a, b) by
 * Gauss-Jacobi quadrature (gsl_integration_fixed_jacobi).
 *
 * GSL computes the rule's zeroth moment with Gamma functions, which overflow
 * once a + b exceeds about 170. So the integer parts ka, kb of the exponents
 * (beyond 1) move into the integrand: the rule carries the weight
 * x^ea (1-x)^eb with ea, eb in (-1, 1), and the integrand is the polynomial
 * x^ka (1-x)^kb (degree ka + kb, evaluated in log space) times e^{itx}.
 * Normalising by the rule's own sum of those values (instead of B(a, b))
 * makes psi(0) = 1 to rounding and cancels any error in GSL's moment.
 *
 * Nodes: an n-point rule is exact for polynomials of degree 2n - 1, and it
 * resolves e^{itx} on [0, 1] to rounding once n exceeds about |t|/4 + 30
 * (measured against mpmath's 1F1(a; a+b; it) up to |t| = 14000). We take
 * n = 40 + ceil(max|t|/2) + ceil((ka + kb)/2), a factor 2 of margin; one
 * rule, sized by the largest |t|, serves the whole batch. n is capped at
 * GFI_BETA_CF_MAX_NODES (4000, about 0.3 s to build); frequencies with
 * |t|/3 + (ka + kb)/2 + 40 > 4000 (|t| beyond about 11800 for small a, b)
 * are refused with GFI_EQUAD rather than answered wrongly; so are all t != 0
 * once a + b exceeds about 7900.
 * Accuracy: absolute error about 1e-13 (rounding in a sum of n terms), so
 * the relative error of the small values at large |t| is correspondingly
 * larger (1e-8 at |psi| ~ 1e-6). */
static int beta_cf(const gfi_model *m, size_t n, const double *t, double *re, double *im) {
  const double a = m->p1, b = m->p2;
  double tmax = 0;
  for (size_t i = 0; i < n; i++) tmax = fmax(tmax, fabs(t[i]));
  if (tmax == 0) {
    for (size_t i = 0; i < n; i++) re[i] = 1.0, im[i] = 0.0;
    return GFI_OK;
  }
  const double ka = a >= 2 ? floor(a - 1) : 0, kb = b >= 2 ? floor(b - 1) : 0;
  const double ea = a - 1 - ka, eb = b - 1 - kb;
  if (tmax / 3 + 0.5 * (ka + kb) + 40 > GFI_BETA_CF_MAX_NODES) return GFI_EQUAD;
  const double want = 40 + ceil(0.5 * tmax) + ceil(0.5 * (ka + kb));
  const size_t nn = want > GFI_BETA_CF_MAX_NODES ? GFI_BETA_CF_MAX_NODES : (size_t)want;

  /* GSL's Jacobi weight on [lo, hi] is (hi - x)^alpha (x - lo)^beta. */
  gsl_integration_fixed_workspace *ws =
      gsl_integration_fixed_alloc(gsl_integration_fixed_jacobi, nn, 0.0, 1.0, eb, ea);
  if (!ws) return GFI_ENOMEM;
  const double *x = gsl_integration_fixed_nodes(ws);
  const double *wt = gsl_integration_fixed_weights(ws);
  double *lw = gfi_malloc2(nn, sizeof *lw);
  if (!lw) {
    gsl_integration_fixed_free(ws);
    return GFI_ENOMEM;
  }
  /* GSL ignores a failure of its eigenvalue iteration; catch its traces. */
  int st = GFI_OK;
  double lmax = -INFINITY;
  for (size_t k = 0; k < nn; k++) {
    if (!(x[k] > 0 && x[k] < 1 && wt[k] > 0 && isfinite(wt[k]))) {
      st = GFI_EQUAD;
      break;
    }
    lw[k] = log(wt[k]) + ka * log(x[k]) + kb * log1p(-x[k]);
    lmax = fmax(lmax, lw[k]);
  }
  if (!st) {
    double sum = 0;
    for (size_t k = 0; k < nn; k++) {
      lw[k] = exp(lw[k] - lmax);
      sum += lw[k];
    }
    for (size_t i = 0; i < n; i++) {
      double sr = 0, si = 0;
      for (size_t k = 0; k < nn; k++) {
        sr += lw[k] * cos(t[i] * x[k]);
        si += lw[k] * sin(t[i] * x[k]);
      }
      re[i] = sr / sum;
      im[i] = si / sum;
    }
  }
  free(lw);
  gsl_integration_fixed_free(ws);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Products of 1-D models                                                    */

static int model_sample(const gfi_model *m, gsl_rng *r, size_t n, double *x);
static int model_pdf(const gfi_model *m, size_t n, const double *x, double *p);
static int model_cf(const gfi_model *m, size_t n, const double *t, double *re, double *im);

/* A deep copy, so that a product owns its factors. */
static gfi_model *model_clone(const gfi_model *src) {
  gfi_model *m = model_new(src->kind, src->D);
  if (!m) return NULL;
  m->K = src->K;
  m->p1 = src->p1;
  m->p2 = src->p2;
  m->logn = src->logn;
  m->cfc = src->cfc;
  m->desc = format("%s", src->desc ? src->desc : "");
  if (!m->desc) goto fail;
#define CLONE(field, count)                                           \
  if (src->field) {                                                   \
    m->field = gfi_malloc2((count), sizeof *m->field);                    \
    if (!m->field) goto fail;                                         \
    memcpy(m->field, src->field, (count) * sizeof *m->field);         \
  }
  CLONE(w, src->K)
  CLONE(cumw, src->K)
  CLONE(logc, src->K)
  CLONE(means, src->K * src->D)
  CLONE(covs, src->K * src->D * src->D)
  CLONE(chol, src->K * src->D * src->D)
#undef CLONE
  if (src->factors) {
    m->factors = calloc(src->D, sizeof *m->factors);
    if (!m->factors) goto fail;
    for (size_t j = 0; j < src->D; j++)
      if (!(m->factors[j] = model_clone(src->factors[j]))) goto fail;
  }
  return m;
fail:
  gfi_model_free(m);
  return NULL;
}

/* "product(D=3,laplace(mu=0,b=1))" when all factors agree (the i.i.d. case),
 * else "product(f1,f2,...)". */
static char *product_description(size_t D, gfi_model *const *f) {
  int same = 1;
  for (size_t j = 1; j < D && same; j++) same = !strcmp(f[j]->desc, f[0]->desc);
  if (same) return format("product(D=%zu,%s)", D, f[0]->desc);
  size_t len = strlen("product()") + 1;
  for (size_t j = 0; j < D; j++) len += strlen(f[j]->desc) + 1;
  char *s = malloc(len), *p = s;
  if (!s) return NULL;
  p += sprintf(p, "product(");
  for (size_t j = 0; j < D; j++) p += sprintf(p, "%s%s", j ? "," : "", f[j]->desc);
  sprintf(p, ")");
  return s;
}

int gfi_model_product(gfi_model **out, size_t D, const gfi_model *const *factors) {
  int st;
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if ((st = gfi_check_dim(D))) return st;
  if (!factors) return GFI_EINVAL;
  for (size_t j = 0; j < D; j++) {
    if (!factors[j]) return GFI_EINVAL;
    if (factors[j]->D != 1) return GFI_EDIM;
  }
  gfi_model *m = model_new(GFI_MODEL_PRODUCT, D);
  if (!m) return GFI_ENOMEM;
  m->factors = calloc(D, sizeof *m->factors);
  if (!m->factors) {
    gfi_model_free(m);
    return GFI_ENOMEM;
  }
  for (size_t j = 0; j < D; j++) {
    if (!(m->factors[j] = model_clone(factors[j]))) {
      gfi_model_free(m);
      return GFI_ENOMEM;
    }
  }
  return finish(out, m, product_description(D, m->factors));
}

int gfi_model_product_factors(const gfi_model *m, size_t *D, const gfi_model *const **factors) {
  if (!m) return GFI_EINVAL;
  if (m->kind != GFI_MODEL_PRODUCT) return GFI_EUNSUPPORTED;
  if (D) *D = m->D;
  if (factors) *factors = (const gfi_model *const *)m->factors;
  return GFI_OK;
}

/* Point-major order: point i draws its D coordinates before point i+1, so the
 * first n points of a larger sample are the sample of size n. */
static int product_sample(const gfi_model *m, gsl_rng *r, size_t n, double *x) {
  const size_t D = m->D;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < D; j++) {
      int st = model_sample(m->factors[j], r, 1, x + i * D + j);
      if (st) return st;
    }
  return GFI_OK;
}

/* Pdf and cf of a product work axis by axis on a strided column copied into
 * a buffer of up to CHUNK points, so each factor sees contiguous arrays and
 * the Beta cf builds its quadrature rule once per chunk, not once per point. */
enum { CHUNK = 16384 };

static int product_pdf(const gfi_model *m, size_t n, const double *x, double *p) {
  const size_t D = m->D, c = n < CHUNK ? n : CHUNK;
  double *col = gfi_malloc3(2, c, sizeof *col);
  if (!col) return GFI_ENOMEM;
  double *val = col + c;
  int st = GFI_OK;
  for (size_t i0 = 0; i0 < n && !st; i0 += c) {
    size_t cnt = n - i0 < c ? n - i0 : c;
    for (size_t k = 0; k < cnt; k++) p[i0 + k] = 1.0;
    for (size_t j = 0; j < D && !st; j++) {
      for (size_t k = 0; k < cnt; k++) col[k] = x[(i0 + k) * D + j];
      st = model_pdf(m->factors[j], cnt, col, val);
      /* a factor 0 (outside its support) makes the density 0, also where
       * another factor is unbounded (Beta with a shape < 1 at 0 or 1) */
      for (size_t k = 0; k < cnt && !st; k++)
        p[i0 + k] = val[k] == 0 || p[i0 + k] == 0 ? 0.0 : p[i0 + k] * val[k];
    }
  }
  free(col);
  return st;
}

static int product_cf(const gfi_model *m, size_t n, const double *t, double *re, double *im) {
  const size_t D = m->D, c = n < CHUNK ? n : CHUNK;
  double *col = gfi_malloc3(3, c, sizeof *col);
  if (!col) return GFI_ENOMEM;
  double *fr = col + c, *fi = col + 2 * c;
  int st = GFI_OK;
  for (size_t i0 = 0; i0 < n && !st; i0 += c) {
    size_t cnt = n - i0 < c ? n - i0 : c;
    for (size_t k = 0; k < cnt; k++) re[i0 + k] = 1.0, im[i0 + k] = 0.0;
    for (size_t j = 0; j < D && !st; j++) {
      for (size_t k = 0; k < cnt; k++) col[k] = t[(i0 + k) * D + j];
      st = model_cf(m->factors[j], cnt, col, fr, fi);
      for (size_t k = 0; k < cnt && !st; k++) {
        double a = re[i0 + k], b = im[i0 + k];
        re[i0 + k] = a * fr[k] - b * fi[k];
        im[i0 + k] = a * fi[k] + b * fr[k];
      }
    }
  }
  free(col);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Dispatch (arguments already validated) and the public entry points       */

static int model_sample(const gfi_model *m, gsl_rng *r, size_t n, double *x) {
  switch (m->kind) {
  case GFI_MODEL_MIXTURE: return mixture_sample(m, r, n, x);
  case GFI_MODEL_PRODUCT: return product_sample(m, r, n, x);
  case GFI_MODEL_LAPLACE:
    for (size_t i = 0; i < n; i++) x[i] = m->p1 + gsl_ran_laplace(r, m->p2);
    return GFI_OK;
  case GFI_MODEL_CAUCHY:
    for (size_t i = 0; i < n; i++) x[i] = m->p1 + gsl_ran_cauchy(r, m->p2);
    return GFI_OK;
  case GFI_MODEL_STUDENT_T:
    for (size_t i = 0; i < n; i++) x[i] = gsl_ran_tdist(r, m->p1);
    return GFI_OK;
  case GFI_MODEL_UNIFORM:
    for (size_t i = 0; i < n; i++) x[i] = m->p1 + (m->p2 - m->p1) * gsl_rng_uniform(r);
    return GFI_OK;
  case GFI_MODEL_BETA:
    for (size_t i = 0; i < n; i++) x[i] = gsl_ran_beta(r, m->p1, m->p2);
    return GFI_OK;
  }
  return GFI_EINVAL;
}

static int model_pdf(const gfi_model *m, size_t n, const double *x, double *p) {
  switch (m->kind) {
  case GFI_MODEL_MIXTURE: return mixture_pdf(m, n, x, p);
  case GFI_MODEL_PRODUCT: return product_pdf(m, n, x, p);
  default:
    for (size_t i = 0; i < n; i++) p[i] = pdf1(m, x[i]);
    return GFI_OK;
  }
}

static int model_cf(const gfi_model *m, size_t n, const double *t, double *re, double *im) {
  switch (m->kind) {
  case GFI_MODEL_MIXTURE: return mixture_cf(m, n, t, re, im);
  case GFI_MODEL_PRODUCT: return product_cf(m, n, t, re, im);
  case GFI_MODEL_BETA: return beta_cf(m, n, t, re, im);
  case GFI_MODEL_LAPLACE:
    for (size_t i = 0; i < n; i++) {
      double bt = m->p2 * t[i], amp = 1.0 / (1.0 + bt * bt);
      re[i] = amp * cos(t[i] * m->p1);
      im[i] = amp * sin(t[i] * m->p1);
    }
    return GFI_OK;
  case GFI_MODEL_CAUCHY:
    for (size_t i = 0; i < n; i++) {
      double amp = exp(-m->p2 * fabs(t[i]));
      re[i] = amp * cos(t[i] * m->p1);
      im[i] = amp * sin(t[i] * m->p1);
    }
    return GFI_OK;
  case GFI_MODEL_STUDENT_T:
    for (size_t i = 0; i < n; i++) {
      re[i] = student_t_cf1(m, t[i]);
      im[i] = 0.0;
    }
    return GFI_OK;
  case GFI_MODEL_UNIFORM:
    for (size_t i = 0; i < n; i++) uniform_cf1(m, t[i], re + i, im + i);
    return GFI_OK;
  }
  return GFI_EINVAL;
}

int gfi_model_sample(const gfi_model *m, gsl_rng *r, size_t n, double *x) {
  if (!m) return GFI_EINVAL;
  if (n == 0) return GFI_OK;
  if (!r || !x) return GFI_EINVAL;
  return model_sample(m, r, n, x);
}

/* Points and frequencies must be finite: NaN has no density, and an
 * infinite frequency no meaningful cf value. */
int gfi_model_pdf(const gfi_model *m, size_t n, const double *x, double *p) {
  if (!m) return GFI_EINVAL;
  if (n == 0) return GFI_OK;
  if (!x || !p) return GFI_EINVAL;
  if (n > SIZE_MAX / m->D) return GFI_EINVAL;
  int st = gfi_check_finite(x, n * m->D, NULL);
  if (st) return st;
  return model_pdf(m, n, x, p);
}

int gfi_model_cf(const gfi_model *m, size_t n, const double *t, double *re, double *im) {
  if (!m) return GFI_EINVAL;
  if (n == 0) return GFI_OK;
  if (!t || !re || !im) return GFI_EINVAL;
  if (n > SIZE_MAX / m->D) return GFI_EINVAL;
  int st = gfi_check_finite(t, n * m->D, NULL);
  if (st) return st;
  return model_cf(m, n, t, re, im);
}
