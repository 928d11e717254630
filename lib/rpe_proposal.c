/* FLT proposals p for the random frequencies xi, and c = sup |g|/p. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "gfi/kernel.h"
#include "gfi/rng.h"
#include "gfi/rpe.h"
#include "rpe_internal.h"
#include "alloc.h"

static int check_ell(size_t ell) { return (ell >= 1 && ell <= GFI_RPE_MAX_ELL) ? GFI_OK : GFI_EDIM; }

void gfi_proposal_free(gfi_proposal *p) {
  if (!p) return;
  gfi_rpe_free(p->rpe);
  free(p->cum);
  free(p);
}

int gfi_proposal_gauss(gfi_proposal **out, size_t ell, double tau) {
  if (!out) return GFI_EINVAL;
  int st = check_ell(ell);
  if (st) return st;
  if (!isfinite(tau)) return GFI_ENONFINITE;
  if (!(tau > 0)) return GFI_EINVAL;
  gfi_proposal *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->kind = GFI_PROP_GAUSS;
  p->ell = ell;
  p->tau = tau;
  snprintf(p->desc, sizeof p->desc, "gauss(ell=%zu,tau=%.17g)", ell, tau);
  *out = p;
  return GFI_OK;
}

int gfi_proposal_t(gfi_proposal **out, size_t ell, double nu, double tau) {
  if (!out) return GFI_EINVAL;
  int st = check_ell(ell);
  if (st) return st;
  if (!isfinite(tau) || !isfinite(nu)) return GFI_ENONFINITE;
  if (!(tau > 0) || !(nu > 0)) return GFI_EINVAL;
  gfi_proposal *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->kind = GFI_PROP_T;
  p->ell = ell;
  p->tau = tau;
  p->nu = nu;
  snprintf(p->desc, sizeof p->desc, "t(ell=%zu,nu=%.17g,tau=%.17g)", ell, nu, tau);
  *out = p;
  return GFI_OK;
}

int gfi_proposal_optimal(gfi_proposal **out, const gfi_rpe *rpe) {
  if (!out || !rpe) return GFI_EINVAL;
  if (!gfi_rpe_g_nonneg(rpe)) return GFI_EUNSUPPORTED;
  gfi_proposal *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->kind = GFI_PROP_OPTIMAL;
  p->ell = rpe->ell;
  p->rpe = gfi_rpe_clone_(rpe);
  if (!p->rpe) {
    gfi_proposal_free(p);
    return GFI_ENOMEM;
  }
  double f0 = gfi_rpe_f0_(rpe);
  p->logf0 = log(f0);
  if (rpe->T) {
    p->cum = gfi_malloc2(rpe->T, sizeof *p->cum);
    if (!p->cum) {
      gfi_proposal_free(p);
      return GFI_ENOMEM;
    }
    double acc = 0;
    for (size_t t = 0; t < rpe->T; t++) {
      acc += rpe->w[t] * pow(sqrt(2 * M_PI) * rpe->sig[t], (double)rpe->ell);
      p->cum[t] = acc;
    }
    for (size_t t = 0; t < rpe->T; t++) p->cum[t] /= acc;
  }
  if (rpe->kind == GFI_RPE_BOXES) {
    p->cum = gfi_malloc2(rpe->nb, sizeof *p->cum);
    if (!p->cum) {
      gfi_proposal_free(p);
      return GFI_ENOMEM;
    }
    double acc = 0;
    for (size_t b = 0; b < rpe->nb; b++) {
      double m = rpe->bC[b];
      for (size_t j = 0; j < rpe->ell; j++)
        m *= pow(2 * rpe->bv[b * rpe->ell + j], rpe->kj[j] - 1) * gfi_pow_A(rpe->kj[j]) / M_PI;
      acc += m;
      p->cum[b] = acc;
    }
    for (size_t b = 0; b < rpe->nb; b++) p->cum[b] /= acc;
  }
  snprintf(p->desc, sizeof p->desc, "optimal(p = g/f(0) for %s)", rpe->desc);
  *out = p;
  return GFI_OK;
}

size_t gfi_proposal_dim(const gfi_proposal *p) { return p ? p->ell : 0; }
gfi_proposal_kind gfi_proposal_get_kind(const gfi_proposal *p) { return p->kind; }
const char *gfi_proposal_describe(const gfi_proposal *p) { return p ? p->desc : "(null)"; }

/* u with density proportional to sinc(u)^k, k even >= 2: rejection from the
 * Cauchy envelope sinc^k(u) <= 2/(1+u^2) (acceptance A_k/(2 pi)). */
static double sample_sinc_pow(gsl_rng *r, int k) {
  for (;;) {
    double u = tan(M_PI * (gsl_rng_uniform_pos(r) - 0.5));
    double acc = pow(gfi_sinc(u), k) * (1 + u * u) / 2;
    if (gsl_rng_uniform(r) < acc) return u;
  }
}

int gfi_proposal_sample(const gfi_proposal *p, gsl_rng *r, size_t n, double *xi) {
  if (!p || !r || (n && !xi)) return GFI_EINVAL;
  size_t ell = p->ell;
  for (size_t i = 0; i < n; i++) {
    double *x = xi + i * ell;
    switch (p->kind) {
      case GFI_PROP_GAUSS:
        for (size_t j = 0; j < ell; j++) x[j] = p->tau * gsl_ran_gaussian_ziggurat(r, 1.0);
        break;
      case GFI_PROP_T: {
        double g = gsl_ran_chisq(r, p->nu) / p->nu, sc = p->tau / sqrt(g);
        for (size_t j = 0; j < ell; j++) x[j] = sc * gsl_ran_gaussian_ziggurat(r, 1.0);
        break;
      }
      case GFI_PROP_OPTIMAL: {
        const gfi_rpe *q = p->rpe;
        switch (q->kind) {
          case GFI_RPE_MIXTURE:
          case GFI_RPE_GAUSS:
          case GFI_RPE_GBF: {
            double u = gsl_rng_uniform(r);
            size_t t = 0;
            while (t + 1 < q->T && u >= p->cum[t]) t++;
            for (size_t j = 0; j < ell; j++)
              x[j] = q->mu[t * ell + j] + q->sig[t] * gsl_ran_gaussian_ziggurat(r, 1.0);
            break;
          }
          case GFI_RPE_LOCAL:
          case GFI_RPE_BOXES: {
            /* a box with probability proportional to its f_b(0), then each axis */
            size_t b = 0;
            if (q->nb > 1) {
              double u = gsl_rng_uniform(r);
              while (b + 1 < q->nb && u >= p->cum[b]) b++;
            }
            for (size_t j = 0; j < ell; j++) x[j] = sample_sinc_pow(r, q->kj[j]) / (2 * M_PI * q->bv[b * ell + j]);
            break;
          }
          case GFI_RPE_EXP:
          case GFI_RPE_MATERN32: {
            double g = gsl_ran_chisq(r, q->nu) / q->nu, sc = 1 / (2 * M_PI * q->s) / sqrt(g);
            for (size_t j = 0; j < ell; j++) x[j] = sc * gsl_ran_gaussian_ziggurat(r, 1.0);
            break;
          }
          case GFI_RPE_LAPLACE:
            for (size_t j = 0; j < ell; j++)
              x[j] = tan(M_PI * (gsl_rng_uniform_pos(r) - 0.5)) / (2 * M_PI * q->s);
            break;
          default: return GFI_EUNSUPPORTED;
        }
        break;
      }
    }
  }
  return GFI_OK;
}

static double log_pdf1(const gfi_proposal *p, const double *x) {
  size_t ell = p->ell;
  double de = (double)ell, r2 = 0;
  for (size_t j = 0; j < ell; j++) r2 += x[j] * x[j];
  switch (p->kind) {
    case GFI_PROP_GAUSS:
      return -r2 / (2 * p->tau * p->tau) - de / 2 * log(2 * M_PI * p->tau * p->tau);
    case GFI_PROP_T: {
      double nu = p->nu, t = p->tau;
      return lgamma((nu + de) / 2) - lgamma(nu / 2) - de / 2 * log(nu * M_PI) - de * log(t) -
             (nu + de) / 2 * log1p(r2 / (nu * t * t));
    }
    case GFI_PROP_OPTIMAL: {
      double l;
      int s;
      gfi_rpe_log_abs_g(p->rpe, 1, x, &l, &s);
      return l - p->logf0;
    }
  }
  return NAN;
}

int gfi_proposal_log_pdf(const gfi_proposal *p, size_t n, const double *xi, double *logp) {
  if (!p || (n && (!xi || !logp))) return GFI_EINVAL;
  for (size_t i = 0; i < n; i++) logp[i] = log_pdf1(p, xi + i * p->ell);
  return GFI_OK;
}

/* ------------------------------------------------------------------ */
/* c = sup |g| / p                                                      */

/* Tail class of g: Gaussian with rate a (|g| <~ exp(-a |xi|^2)), centred when
 * the slowest components sit at mu = 0; or polynomial with the slowest
 * directional decay |xi|^-beta. */
static void g_tail(const gfi_rpe *q, int *gaussian, double *a, int *centred, double *beta) {
  *gaussian = 0;
  *a = 0;
  *centred = 1;
  *beta = 0;
  size_t ell = q->ell;
  switch (q->kind) {
    case GFI_RPE_MIXTURE:
    case GFI_RPE_GAUSS:
    case GFI_RPE_GBF: {
      *gaussian = 1;
      double smax = 0;
      for (size_t t = 0; t < q->T; t++)
        if (q->w[t] != 0 && q->sig[t] > smax) smax = q->sig[t];
      *a = 1 / (2 * smax * smax);
      for (size_t t = 0; t < q->T; t++)
        if (q->w[t] != 0 && q->sig[t] == smax)
          for (size_t j = 0; j < ell; j++) *centred &= q->mu[t * ell + j] == 0;
      break;
    }
    case GFI_RPE_LOCAL:
    case GFI_RPE_BOXES:
      /* along axis j, |g| ~ |xi_j|^-k_j: the slowest axis decides */
      *beta = q->kj[0];
      for (size_t j = 1; j < ell; j++)
        if (q->kj[j] < *beta) *beta = q->kj[j];
      break;
    case GFI_RPE_LOCAL_PAPER: *beta = 1; break;
    case GFI_RPE_EXP:
    case GFI_RPE_MATERN32: *beta = q->nu + (double)ell; break;
    case GFI_RPE_LAPLACE: *beta = 2; break;
  }
}

typedef struct {
  const gfi_rpe *g;
  const gfi_proposal *p;
} ratio_ctx;

static double log_ratio(const ratio_ctx *c, const double *x) {
  double lg;
  int s;
  gfi_rpe_log_abs_g(c->g, 1, x, &lg, &s);
  if (s == 0) return -INFINITY;
  return lg - log_pdf1(c->p, x);
}

/* Compass search for a local maximum of the log ratio from x. */
static double refine(const ratio_ctx *c, double *x, size_t ell, double best) {
  double step = 0;
  for (size_t j = 0; j < ell; j++) step = fmax(step, fabs(x[j]));
  step = 0.02 * (step > 0 ? step : 1e-3);
  double y[GFI_RPE_MAX_ELL];
  for (int it = 0; it < 20000 && step > 1e-13 * (1 + fabs(x[0])); it++) {
    int improved = 0;
    for (size_t j = 0; j < ell && !improved; j++)
      for (int sgn = -1; sgn <= 1 && !improved; sgn += 2) {
        memcpy(y, x, ell * sizeof *x);
        y[j] += sgn * step;
        double v = log_ratio(c, y);
        if (v > best) {
          best = v;
          memcpy(x, y, ell * sizeof *x);
          improved = 1;
        }
      }
    if (!improved) step /= 2;
  }
  return best;
}

int gfi_rpe_c(const gfi_rpe *rpe, const gfi_proposal *p, double *c) {
  if (!rpe || !p || !c) return GFI_EINVAL;
  size_t ell = rpe->ell;
  if (p->ell != ell) return GFI_EDIM;
  int gauss_g, centred;
  double a, beta;
  g_tail(rpe, &gauss_g, &a, &centred, &beta);
  if (p->kind == GFI_PROP_OPTIMAL) {
    if (strcmp(p->rpe->desc, rpe->desc) != 0) return GFI_EUNSUPPORTED;
    /* p = |g| / int |g| and g >= 0: c = int g = f(0) */
    *c = exp(p->logf0);
    return GFI_OK;
  }
  if (p->kind == GFI_PROP_GAUSS) {
    double b = 1 / (2 * p->tau * p->tau);
    if (!gauss_g || b > a || (b == a && !centred)) {
      *c = INFINITY;
      return GFI_OK;
    }
  } else { /* Student-t: p ~ |xi|^-(nu + ell) in every direction */
    if (!gauss_g && beta < p->nu + (double)ell) {
      *c = INFINITY;
      return GFI_OK;
    }
  }
  /* Finite: radial scans over many directions, then local refinement. */
  ratio_ctx ctx = {rpe, p};
  size_t ndir = 0, maxdir = 2 * ell + 8 + 64 + 2 * (rpe->T ? rpe->T : 0);
  double *dirs = gfi_malloc3(maxdir, ell, sizeof *dirs);
  if (!dirs) return GFI_ENOMEM;
  for (size_t j = 0; j < ell; j++)
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      double *d = dirs + ell * ndir++;
      memset(d, 0, ell * sizeof *d);
      d[j] = sgn;
    }
  if (ell > 1) {
    for (size_t m = 0; m < ((size_t)1 << ell); m++) {
      double *d = dirs + ell * ndir++;
      for (size_t j = 0; j < ell; j++) d[j] = ((m >> j) & 1 ? -1.0 : 1.0) / sqrt((double)ell);
    }
    gsl_rng *r = gfi_rng_stream(0x5eedc0ffeeULL, 0);
    if (!r) {
      free(dirs);
      return GFI_ENOMEM;
    }
    for (int i = 0; i < 64; i++) {
      double *d = dirs + ell * ndir++, n2 = 0;
      for (size_t j = 0; j < ell; j++) {
        d[j] = gsl_ran_gaussian_ziggurat(r, 1.0);
        n2 += d[j] * d[j];
      }
      for (size_t j = 0; j < ell; j++) d[j] /= sqrt(n2);
    }
    gsl_rng_free(r);
  }
  for (size_t t = 0; t < rpe->T; t++) {
    double n2 = 0;
    for (size_t j = 0; j < ell; j++) n2 += rpe->mu[t * ell + j] * rpe->mu[t * ell + j];
    if (n2 == 0) continue;
    double *d = dirs + ell * ndir++;
    for (size_t j = 0; j < ell; j++) d[j] = rpe->mu[t * ell + j] / sqrt(n2);
  }
  double zero[GFI_RPE_MAX_ELL] = {0}, x[GFI_RPE_MAX_ELL], bestx[GFI_RPE_MAX_ELL] = {0};
  double best = log_ratio(&ctx, zero);
  for (size_t d = 0; d < ndir; d++)
    for (int i = -320; i <= 400; i++) { /* |xi| from 1e-8 to 1e10, 40 per decade */
      double rho = pow(10.0, i / 40.0);
      for (size_t j = 0; j < ell; j++) x[j] = rho * dirs[d * ell + j];
      double v = log_ratio(&ctx, x);
      if (v > best) {
        best = v;
        memcpy(bestx, x, ell * sizeof *x);
      }
    }
  free(dirs);
  best = refine(&ctx, bestx, ell, best);
  if (!isfinite(best)) return GFI_EQUAD;
  *c = exp(best);
  return GFI_OK;
}
