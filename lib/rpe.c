/* RPE families with closed-form Fourier pairs (FLT convention
 * g(xi) = int f(x) exp(-2 pi i x.xi) dx) and FLT proposals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include "gfi/kernel.h"
#include "gfi/rng.h"
#include "gfi/rpe.h"
#include "gfi/validate.h"
#include "rpe_internal.h"
#include "alloc.h"

/* ------------------------------------------------------------------ */
/* construction                                                         */

static gfi_rpe *rpe_new(gfi_rpe_kind kind, size_t ell) {
  gfi_rpe *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->kind = kind;
  r->ell = ell;
  r->C = 1;
  return r;
}

void gfi_rpe_free(gfi_rpe *rpe) {
  if (!rpe) return;
  free(rpe->w);
  free(rpe->mu);
  free(rpe->sig);
  free(rpe);
}

static int check_ell(size_t ell) { return (ell >= 1 && ell <= GFI_RPE_MAX_ELL) ? GFI_OK : GFI_EDIM; }

static void describe(gfi_rpe *r);

/* Frequency-domain Gaussian mixture: the common representation of mixture,
 * gauss and gbf. sig are the frequency-domain widths. */
static int mixture_common(gfi_rpe **out, gfi_rpe_kind kind, size_t ell, size_t T,
                          const double *w, const double *mu, const double *sig) {
  gfi_rpe *r = rpe_new(kind, ell);
  if (!r) return GFI_ENOMEM;
  r->T = T;
  r->w = gfi_malloc2(T, sizeof *r->w);
  r->mu = gfi_calloc4(T, ell, 1, sizeof *r->mu);
  r->sig = gfi_malloc2(T, sizeof *r->sig);
  if (!r->w || !r->mu || !r->sig) {
    gfi_rpe_free(r);
    return GFI_ENOMEM;
  }
  memcpy(r->w, w, T * sizeof *w);
  if (mu) memcpy(r->mu, mu, T * ell * sizeof *mu);
  memcpy(r->sig, sig, T * sizeof *sig);
  describe(r);
  *out = r;
  return GFI_OK;
}

static int check_mixture_args(gfi_rpe **out, size_t ell, size_t T, const double *w, const double *s) {
  if (!out || !w || !s) return GFI_EINVAL;
  int st = check_ell(ell);
  if (st) return st;
  if (T == 0) return GFI_EEMPTY;
  int nonzero = 0;
  for (size_t t = 0; t < T; t++) {
    if (!isfinite(w[t]) || !isfinite(s[t])) return GFI_ENONFINITE;
    if (!(s[t] > 0)) return GFI_EINVAL;
    nonzero |= (w[t] != 0);
  }
  return nonzero ? GFI_OK : GFI_EWEIGHT;
}

int gfi_rpe_mixture(gfi_rpe **out, size_t ell, size_t T, const double *w, const double *mu,
                    const double *s) {
  int st = check_mixture_args(out, ell, T, w, s);
  if (st) return st;
  if (mu && gfi_check_finite(mu, T * ell, NULL)) return GFI_ENONFINITE;
  return mixture_common(out, GFI_RPE_MIXTURE, ell, T, w, mu, s);
}

int gfi_rpe_gauss(gfi_rpe **out, size_t ell, double s) {
  if (!out) return GFI_EINVAL;
  int st = check_ell(ell);
  if (st) return st;
  if (!isfinite(s)) return GFI_ENONFINITE;
  if (!(s > 0)) return GFI_EINVAL;
  double w = pow(sqrt(2 * M_PI) * s, (double)ell), sig = 1 / (2 * M_PI * s);
  st = mixture_common(out, GFI_RPE_GAUSS, ell, 1, &w, NULL, &sig);
  if (st == GFI_OK) {
    (*out)->s = s;
    describe(*out);
  }
  return st;
}

int gfi_rpe_gbf(gfi_rpe **out, size_t ell, size_t T, const double *w, const double *s) {
  int st = check_mixture_args(out, ell, T, w, s);
  if (st) return st;
  double *sig = gfi_malloc2(T, sizeof *sig);
  if (!sig) return GFI_ENOMEM;
  for (size_t t = 0; t < T; t++) sig[t] = 1 / (2 * M_PI * s[t]);
  st = mixture_common(out, GFI_RPE_GBF, ell, T, w, NULL, sig);
  free(sig);
  return st;
}

int gfi_rpe_local(gfi_rpe **out, size_t ell, const double *v, int k, double C, int paper_form) {
  if (!out) return GFI_EINVAL;
  int st = check_ell(ell);
  if (st) return st;
  if ((st = gfi_check_order(k))) return st;
  if (!isfinite(C)) return GFI_ENONFINITE;
  if (C == 0) return GFI_EINVAL;
  gfi_rpe *r = rpe_new(paper_form ? GFI_RPE_LOCAL_PAPER : GFI_RPE_LOCAL, ell);
  if (!r) return GFI_ENOMEM;
  for (size_t j = 0; j < ell; j++) {
    double vj = v ? v[j] : 1.0;
    if (!isfinite(vj)) {
      gfi_rpe_free(r);
      return GFI_ENONFINITE;
    }
    if (!(vj > 0)) {
      gfi_rpe_free(r);
      return GFI_EINVAL;
    }
    r->v[j] = vj;
  }
  r->k = k;
  r->C = C;
  r->nb = 1;
  r->bC[0] = C;
  for (size_t j = 0; j < ell; j++) r->kj[j] = k, r->bv[j] = r->v[j];
  describe(r);
  *out = r;
  return GFI_OK;
}

int gfi_rpe_boxes(gfi_rpe **out, size_t ell, size_t nb, const double *C, const double *v, const int *k) {
  if (!out || !C || !v || !k) return GFI_EINVAL;
  int st = check_ell(ell);
  if (st) return st;
  if (nb < 1 || nb > GFI_RPE_MAX_BOXES) return GFI_EINVAL;
  for (size_t j = 0; j < ell; j++)
    if ((st = gfi_check_order(k[j]))) return st;
  for (size_t b = 0; b < nb; b++) {
    if (!isfinite(C[b])) return GFI_ENONFINITE;
    if (C[b] == 0) return GFI_EINVAL;
    for (size_t j = 0; j < ell; j++) {
      if (!isfinite(v[b * ell + j])) return GFI_ENONFINITE;
      if (!(v[b * ell + j] > 0)) return GFI_EINVAL;
    }
  }
  gfi_rpe *r = rpe_new(nb == 1 ? GFI_RPE_LOCAL : GFI_RPE_BOXES, ell);
  if (!r) return GFI_ENOMEM;
  r->nb = nb;
  r->C = C[0];
  r->k = 0;
  for (size_t j = 0; j < ell; j++) {
    r->kj[j] = k[j];
    if (k[j] > r->k) r->k = k[j];
    r->v[j] = v[j];
  }
  memcpy(r->bC, C, nb * sizeof *C);
  memcpy(r->bv, v, nb * ell * sizeof *v);
  describe(r);
  *out = r;
  return GFI_OK;
}

int gfi_rpe_kernel(gfi_rpe **out, gfi_rpe_kind kind, size_t ell, double s) {
  if (!out) return GFI_EINVAL;
  if (kind != GFI_RPE_EXP && kind != GFI_RPE_MATERN32 && kind != GFI_RPE_LAPLACE) return GFI_EINVAL;
  int st = check_ell(ell);
  if (st) return st;
  if (!isfinite(s)) return GFI_ENONFINITE;
  if (!(s > 0)) return GFI_EINVAL;
  gfi_rpe *r = rpe_new(kind, ell);
  if (!r) return GFI_ENOMEM;
  r->s = s;
  r->nu = kind == GFI_RPE_MATERN32 ? 3.0 : 1.0;
  describe(r);
  *out = r;
  return GFI_OK;
}

gfi_rpe *gfi_rpe_clone_(const gfi_rpe *src) {
  gfi_rpe *r = rpe_new(src->kind, src->ell);
  if (!r) return NULL;
  *r = *src;
  r->w = r->mu = r->sig = NULL;
  if (src->T) {
    r->w = gfi_malloc2(src->T, sizeof *r->w);
    r->mu = gfi_malloc3(src->T, src->ell, sizeof *r->mu);
    r->sig = gfi_malloc2(src->T, sizeof *r->sig);
    if (!r->w || !r->mu || !r->sig) {
      gfi_rpe_free(r);
      return NULL;
    }
    memcpy(r->w, src->w, src->T * sizeof *r->w);
    memcpy(r->mu, src->mu, src->T * src->ell * sizeof *r->mu);
    memcpy(r->sig, src->sig, src->T * sizeof *r->sig);
  }
  return r;
}

static void describe(gfi_rpe *r) {
  char *d = r->desc;
  size_t n = sizeof r->desc;
  switch (r->kind) {
    case GFI_RPE_GAUSS: snprintf(d, n, "gauss(ell=%zu,s=%.17g)", r->ell, r->s); break;
    case GFI_RPE_MIXTURE: snprintf(d, n, "mixture(ell=%zu,T=%zu)", r->ell, r->T); break;
    case GFI_RPE_GBF: snprintf(d, n, "gbf(ell=%zu,T=%zu)", r->ell, r->T); break;
    case GFI_RPE_LOCAL:
    case GFI_RPE_LOCAL_PAPER: {
      int m = snprintf(d, n, "%s(ell=%zu,v=", r->kind == GFI_RPE_LOCAL ? "local" : "local-paper", r->ell);
      for (size_t j = 0; j < r->ell && m < (int)n; j++)
        m += snprintf(d + m, n - m, "%s%.17g", j ? ":" : "", r->v[j]);
      int same = 1;
      for (size_t j = 1; j < r->ell; j++) same &= r->kj[j] == r->kj[0];
      if (r->kind == GFI_RPE_LOCAL_PAPER || same) {
        if (m < (int)n) snprintf(d + m, n - m, ",k=%d,C=%.17g)", r->k, r->C);
      } else {
        if (m < (int)n) m += snprintf(d + m, n - m, ",k=");
        for (size_t j = 0; j < r->ell && m < (int)n; j++) m += snprintf(d + m, n - m, "%s%d", j ? ":" : "", r->kj[j]);
        if (m < (int)n) snprintf(d + m, n - m, ",C=%.17g)", r->C);
      }
      break;
    }
    case GFI_RPE_BOXES: {
      int m = snprintf(d, n, "boxes(ell=%zu,nb=%zu,k=", r->ell, r->nb);
      for (size_t j = 0; j < r->ell && m < (int)n; j++) m += snprintf(d + m, n - m, "%s%d", j ? ":" : "", r->kj[j]);
      if (m < (int)n) snprintf(d + m, n - m, ")");
      break;
    }
    case GFI_RPE_EXP: snprintf(d, n, "exp(ell=%zu,s=%.17g)", r->ell, r->s); break;
    case GFI_RPE_MATERN32: snprintf(d, n, "matern32(ell=%zu,s=%.17g)", r->ell, r->s); break;
    case GFI_RPE_LAPLACE: snprintf(d, n, "laplace(ell=%zu,s=%.17g)", r->ell, r->s); break;
  }
}

gfi_rpe_kind gfi_rpe_get_kind(const gfi_rpe *rpe) { return rpe->kind; }
size_t gfi_rpe_dim(const gfi_rpe *rpe) { return rpe ? rpe->ell : 0; }
const char *gfi_rpe_describe(const gfi_rpe *rpe) { return rpe ? rpe->desc : "(null)"; }

static int is_mixture_kind(gfi_rpe_kind k) {
  return k == GFI_RPE_MIXTURE || k == GFI_RPE_GAUSS || k == GFI_RPE_GBF;
}

int gfi_rpe_f_is_real(const gfi_rpe *rpe) {
  if (rpe->kind == GFI_RPE_LOCAL_PAPER) return rpe->k % 2 == 1;
  if (!is_mixture_kind(rpe->kind)) return 1;
  /* every component with mu != 0 needs a mirror with -mu, same w and width */
  size_t ell = rpe->ell;
  for (size_t t = 0; t < rpe->T; t++) {
    int zero = 1;
    for (size_t j = 0; j < ell; j++) zero &= rpe->mu[t * ell + j] == 0;
    if (zero || rpe->w[t] == 0) continue;
    int found = 0;
    for (size_t u = 0; u < rpe->T && !found; u++) {
      if (rpe->w[u] != rpe->w[t] || rpe->sig[u] != rpe->sig[t]) continue;
      int mirror = 1;
      for (size_t j = 0; j < ell; j++) mirror &= rpe->mu[u * ell + j] == -rpe->mu[t * ell + j];
      found = mirror;
    }
    if (!found) return 0;
  }
  return 1;
}

int gfi_rpe_g_nonneg(const gfi_rpe *rpe) {
  switch (rpe->kind) {
    case GFI_RPE_MIXTURE:
    case GFI_RPE_GAUSS:
    case GFI_RPE_GBF:
      for (size_t t = 0; t < rpe->T; t++)
        if (rpe->w[t] < 0) return 0;
      return 1;
    case GFI_RPE_LOCAL:
    case GFI_RPE_BOXES:
      for (size_t b = 0; b < rpe->nb; b++)
        if (rpe->bC[b] < 0) return 0;
      for (size_t j = 0; j < rpe->ell; j++)
        if (rpe->kj[j] % 2) return 0;
      return 1;
    case GFI_RPE_LOCAL_PAPER: return 0;
    default: return 1;
  }
}

/* ------------------------------------------------------------------ */
/* evaluation                                                           */

static double binomial(int n, int k) {
  double r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

/* Inverse transform of sin^k(2 pi v xi)/(pi xi) (the paper's printed factor),
 * one axis: returns the value as re + i im. Odd k: a signed sum of boxes;
 * even k: i times a signed sum of sign steps (principal value of 1/xi). */
static void paper_axis(int k, double v, double x, double *re, double *im) {
  double s = 0;
  if (k % 2 == 1) {
    for (int j = 0; j <= (k - 1) / 2; j++) {
      double m = (double)(k - 2 * j) * v;
      double box = fabs(x) < m ? 1.0 : (fabs(x) == m ? 0.5 : 0.0);
      double c = binomial(k, j) * (((k - 1) / 2 - j) % 2 ? -1.0 : 1.0);
      s += c * box;
    }
    *re = ldexp(s, 1 - k);
    *im = 0;
  } else {
    double sg = x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    s = ldexp(binomial(k, k / 2), -k) * sg;
    for (int j = 0; j < k / 2; j++) {
      double m = (double)(k - 2 * j) * v;
      double a = x + m, b = x - m;
      double st = ((a > 0) - (a < 0) + (b > 0) - (b < 0)) / 2.0;
      double c = binomial(k, j) * ((k / 2 - j) % 2 ? -1.0 : 1.0);
      s += ldexp(c, 1 - k) * st;
    }
    *re = 0;
    *im = s;
  }
}

int gfi_rpe_f(const gfi_rpe *rpe, size_t n, const double *x, double *re, double *im) {
  if (!rpe || (n && (!x || !re))) return GFI_EINVAL;
  size_t ell = rpe->ell;
  if (rpe->kind == GFI_RPE_MIXTURE || rpe->kind == GFI_RPE_GAUSS || rpe->kind == GFI_RPE_GBF) {
    /* Components outside, points inside: a component's amplitude is computed
     * once, and each point still sums its components in order t = 0, 1, ...
     * An exponent below -746 underflows exp to 0 (its slow path): 0 is
     * returned without the call. */
    for (size_t i = 0; i < n; i++) {
      re[i] = 0;
      if (im) im[i] = 0;
    }
    for (size_t t = 0; t < rpe->T; t++) {
      double sg = rpe->sig[t], amp = rpe->w[t] * pow(sqrt(2 * M_PI) * sg, (double)ell);
      double c2 = 2 * M_PI * M_PI * sg * sg;
      const double *mu = rpe->mu + t * ell;
      for (size_t i = 0; i < n; i++) {
        const double *xi = x + i * ell;
        double r2 = 0;
        for (size_t j = 0; j < ell; j++) r2 += xi[j] * xi[j];
        double e = -c2 * r2, a = e < -746 ? amp * 0.0 : amp * exp(e);
        double ph = 0;
        for (size_t j = 0; j < ell; j++) ph += mu[j] * xi[j];
        if (ph == 0) {
          re[i] += a;
        } else {
          re[i] += a * cos(2 * M_PI * ph);
          if (im) im[i] += a * sin(2 * M_PI * ph);
        }
      }
    }
    return GFI_OK;
  }
  for (size_t i = 0; i < n; i++) {
    const double *xi = x + i * ell;
    double fr = 0, fi = 0;
    switch (rpe->kind) {
      case GFI_RPE_MIXTURE:
      case GFI_RPE_GAUSS:
      case GFI_RPE_GBF:
        break; /* above */
      case GFI_RPE_LOCAL:
      case GFI_RPE_BOXES: {
        for (size_t b = 0; b < rpe->nb; b++) {
          double p = rpe->bC[b];
          for (size_t j = 0; j < ell; j++) {
            double v = rpe->bv[b * ell + j];
            int k = rpe->kj[j];
            p *= pow(2 * v, k - 1) * gfi_pow_A(k) / M_PI * gfi_kappa(k, xi[j] / v);
          }
          fr += p;
        }
        break;
      }
      case GFI_RPE_LOCAL_PAPER: {
        double pr = rpe->C, pi = 0;
        for (size_t j = 0; j < ell; j++) {
          double ar, ai;
          paper_axis(rpe->k, rpe->v[j], xi[j], &ar, &ai);
          double nr = pr * ar - pi * ai, ni = pr * ai + pi * ar;
          pr = nr;
          pi = ni;
        }
        fr = pr;
        fi = pi;
        break;
      }
      case GFI_RPE_EXP:
      case GFI_RPE_MATERN32: {
        double r2 = 0;
        for (size_t j = 0; j < ell; j++) r2 += xi[j] * xi[j];
        double r = sqrt(r2) / rpe->s;
        fr = rpe->kind == GFI_RPE_EXP ? exp(-r) : (1 + sqrt(3.0) * r) * exp(-sqrt(3.0) * r);
        break;
      }
      case GFI_RPE_LAPLACE: {
        double a = 0;
        for (size_t j = 0; j < ell; j++) a += fabs(xi[j]);
        fr = exp(-a / rpe->s);
        break;
      }
    }
    re[i] = fr;
    if (im) im[i] = fi;
  }
  return GFI_OK;
}

/* log|g| and its sign at one frequency. */
static double log_abs_g1(const gfi_rpe *rpe, const double *xi, int *sign) {
  size_t ell = rpe->ell;
  switch (rpe->kind) {
    case GFI_RPE_MIXTURE:
    case GFI_RPE_GAUSS:
    case GFI_RPE_GBF: {
      /* signed log-sum-exp */
      double m = -INFINITY;
      for (size_t t = 0; t < rpe->T; t++) {
        if (rpe->w[t] == 0) continue;
        double d2 = 0;
        for (size_t j = 0; j < ell; j++) {
          double d = xi[j] - rpe->mu[t * ell + j];
          d2 += d * d;
        }
        double e = log(fabs(rpe->w[t])) - d2 / (2 * rpe->sig[t] * rpe->sig[t]);
        if (e > m) m = e;
      }
      if (m == -INFINITY) {
        *sign = 0;
        return -INFINITY;
      }
      double s = 0;
      for (size_t t = 0; t < rpe->T; t++) {
        if (rpe->w[t] == 0) continue;
        double d2 = 0;
        for (size_t j = 0; j < ell; j++) {
          double d = xi[j] - rpe->mu[t * ell + j];
          d2 += d * d;
        }
        double e = log(fabs(rpe->w[t])) - d2 / (2 * rpe->sig[t] * rpe->sig[t]);
        s += (rpe->w[t] > 0 ? 1.0 : -1.0) * exp(e - m);
      }
      *sign = s > 0 ? 1 : (s < 0 ? -1 : 0);
      return s == 0 ? -INFINITY : m + log(fabs(s));
    }
    case GFI_RPE_BOXES: {
      double g = 0;
      for (size_t b = 0; b < rpe->nb; b++) {
        double p = rpe->bC[b];
        for (size_t j = 0; j < ell; j++) {
          double v = rpe->bv[b * ell + j];
          p *= pow(2 * v * gfi_sinc(2 * M_PI * v * xi[j]), rpe->kj[j]);
        }
        g += p;
      }
      *sign = g > 0 ? 1 : (g < 0 ? -1 : 0);
      return g == 0 ? -INFINITY : log(fabs(g));
    }
    case GFI_RPE_LOCAL:
    case GFI_RPE_LOCAL_PAPER: {
      double l = log(fabs(rpe->C));
      int sg = rpe->C > 0 ? 1 : -1;
      for (size_t j = 0; j < ell; j++) {
        double v = rpe->v[j], u = 2 * M_PI * v * xi[j];
        double f1 = 2 * v * gfi_sinc(u); /* sin(2 pi v xi)/(pi xi) */
        double fac;
        if (rpe->kind == GFI_RPE_LOCAL)
          fac = pow(f1, rpe->kj[j]);
        else
          fac = f1 * pow(sin(u), rpe->k - 1);
        if (fac == 0) {
          *sign = 0;
          return -INFINITY;
        }
        if (fac < 0) sg = -sg;
        l += log(fabs(fac));
      }
      *sign = sg;
      return l;
    }
    case GFI_RPE_EXP:
    case GFI_RPE_MATERN32: {
      double nu = rpe->nu, sig = 1 / (2 * M_PI * rpe->s), r2 = 0, de = (double)ell;
      for (size_t j = 0; j < ell; j++) r2 += xi[j] * xi[j];
      *sign = 1;
      return lgamma((nu + de) / 2) - lgamma(nu / 2) - de / 2 * log(nu * M_PI) - de * log(sig) -
             (nu + de) / 2 * log1p(r2 / (nu * sig * sig));
    }
    case GFI_RPE_LAPLACE: {
      double s = rpe->s, l = 0;
      for (size_t j = 0; j < ell; j++) l += log(2 * s) - log1p(4 * M_PI * M_PI * s * s * xi[j] * xi[j]);
      *sign = 1;
      return l;
    }
  }
  *sign = 0;
  return NAN;
}

int gfi_rpe_log_abs_g(const gfi_rpe *rpe, size_t n, const double *xi, double *logabs, int *sign) {
  if (!rpe || (n && (!xi || !logabs))) return GFI_EINVAL;
  for (size_t i = 0; i < n; i++) {
    int s;
    logabs[i] = log_abs_g1(rpe, xi + i * rpe->ell, &s);
    if (sign) sign[i] = s;
  }
  return GFI_OK;
}

int gfi_rpe_g(const gfi_rpe *rpe, size_t n, const double *xi, double *g) {
  if (!rpe || (n && (!xi || !g))) return GFI_EINVAL;
  for (size_t i = 0; i < n; i++) {
    int s;
    double l = log_abs_g1(rpe, xi + i * rpe->ell, &s);
    g[i] = s * exp(l);
    if (s == 0) g[i] = 0;
  }
  return GFI_OK;
}

double gfi_rpe_f0_(const gfi_rpe *rpe) {
  double z[GFI_RPE_MAX_ELL] = {0}, re, im;
  gfi_rpe_f(rpe, 1, z, &re, &im);
  return re;
}
