/* The Gaussian KDE's ISE of one sample and its Monte-Carlo MISE for a
 * normal-mixture truth (gfi/mise.h; docs/theory.md section 3). With
 * phi_S(x) = N(x; 0, S), p = sum_a w_a N(mu_a, S_a) and the estimate
 * p_hat = (1/N) sum_i phi_H(x - x_i), every term of
 *   ISE = int p_hat^2 - 2 int p_hat p + int p^2
 * is a Gaussian convolution in closed form:
 *   int p_hat^2   = (1/N^2) sum_i sum_j phi_2H(x_i - x_j),
 *   int p_hat p   = (1/N) sum_i sum_a w_a phi_(H+S_a)(x_i - mu_a),
 *   int p^2       = sum_a sum_b w_a w_b phi_(S_a+S_b)(mu_a - mu_b).
 * The pair sum costs O(N^2 D) per replication; replications run in
 * parallel on their RNG streams (gfi_replicate), each summed in one fixed
 * order, so the result does not depend on the thread count. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/mise.h"
#include "gfi/model.h"
#include "gfi/stats.h"
#include "alloc.h"
#include "chol.h"
#include "ise_rule.h"
#include "fail.h"

/* The largest dimension and number of mixture components served. */
#define GFI_MISE_GAUSS_MAXD 6
#define GFI_MISE_GAUSS_MAXK 64

/* A Gaussian N(0, S) prepared for many evaluations: the inverse of its
 * Cholesky factor (lower, row-major) and log of its normalising constant. */
typedef struct {
  size_t D;
  double Li[GFI_MISE_GAUSS_MAXD * GFI_MISE_GAUSS_MAXD];
  double lognorm;
} gauss_form;

static int gauss_form_init(gauss_form *g, size_t D, const double *S) {
  double L[GFI_MISE_GAUSS_MAXD * GFI_MISE_GAUSS_MAXD];
  if (chol_lower(D, S, L) != 0) return GFI_ENOTPD;
  g->D = D;
  double ld = 0;
  for (size_t a = 0; a < D; a++) ld += log(L[a * D + a]);
  g->lognorm = -ld - 0.5 * (double)D * log(2 * M_PI);
  /* Li = L^-1 by forward substitution, column by column */
  memset(g->Li, 0, sizeof g->Li);
  for (size_t c = 0; c < D; c++)
    for (size_t i = c; i < D; i++) {
      double t = i == c ? 1.0 : 0.0;
      for (size_t k = c; k < i; k++) t -= L[i * D + k] * g->Li[k * D + c];
      g->Li[i * D + c] = t / L[i * D + i];
    }
  return GFI_OK;
}

/* y = Li x */
static void whiten(const gauss_form *g, const double *x, double *y) {
  size_t D = g->D;
  for (size_t i = 0; i < D; i++) {
    double t = 0;
    for (size_t k = 0; k <= i; k++) t += g->Li[i * D + k] * x[k];
    y[i] = t;
  }
}

typedef struct {
  size_t D, K, N;
  const double *w, *mu;
  gauss_form pair;                       /* 2H */
  gauss_form cross[GFI_MISE_GAUSS_MAXK]; /* H + S_a */
  double pp;                             /* int p^2 */
} ise_ctx;

static int ise_ctx_init(ise_ctx *c, const gfi_model *m, const double *H) {
  if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE) return GFI_EUNSUPPORTED;
  size_t K, D = gfi_model_dim(m);
  const double *w, *mu, *S;
  int st = gfi_model_mixture_parts(m, &K, &w, &mu, &S);
  if (st) return st;
  if (D > GFI_MISE_GAUSS_MAXD || K > GFI_MISE_GAUSS_MAXK) return GFI_EUNSUPPORTED;
  for (size_t q = 0; q < D * D; q++)
    if (!isfinite(H[q])) return GFI_EBANDWIDTH;
  c->D = D, c->K = K, c->w = w, c->mu = mu;
  double M[GFI_MISE_GAUSS_MAXD * GFI_MISE_GAUSS_MAXD];
  for (size_t q = 0; q < D * D; q++) M[q] = 2 * H[q];
  if (gauss_form_init(&c->pair, D, M)) return GFI_EBANDWIDTH;
  for (size_t a = 0; a < K; a++) {
    for (size_t q = 0; q < D * D; q++) M[q] = H[q] + S[a * D * D + q];
    if (gauss_form_init(&c->cross[a], D, M)) return GFI_EBANDWIDTH;
  }
  c->pp = 0;
  double dx[GFI_MISE_GAUSS_MAXD], y[GFI_MISE_GAUSS_MAXD];
  for (size_t a = 0; a < K; a++)
    for (size_t b = 0; b < K; b++) {
      gauss_form g;
      for (size_t q = 0; q < D * D; q++) M[q] = S[a * D * D + q] + S[b * D * D + q];
      if (gauss_form_init(&g, D, M)) return GFI_ENOTPD;
      for (size_t j = 0; j < D; j++) dx[j] = mu[a * D + j] - mu[b * D + j];
      whiten(&g, dx, y);
      double q2 = 0;
      for (size_t j = 0; j < D; j++) q2 += y[j] * y[j];
      c->pp += w[a] * w[b] * exp(g.lognorm - 0.5 * q2);
    }
  return GFI_OK;
}

/* The ISE of the estimate from x (N x D); y: N x D workspace. */
static double ise_of(const ise_ctx *c, size_t N, const double *x, double *y) {
  size_t D = c->D;
  double cross = 0, dx[GFI_MISE_GAUSS_MAXD], v[GFI_MISE_GAUSS_MAXD];
  for (size_t i = 0; i < N; i++) {
    double s = 0;
    for (size_t a = 0; a < c->K; a++) {
      for (size_t j = 0; j < D; j++) dx[j] = x[i * D + j] - c->mu[a * D + j];
      whiten(&c->cross[a], dx, v);
      double q2 = 0;
      for (size_t j = 0; j < D; j++) q2 += v[j] * v[j];
      s += c->w[a] * exp(c->cross[a].lognorm - 0.5 * q2);
    }
    cross += s;
  }
  for (size_t i = 0; i < N; i++) whiten(&c->pair, x + i * D, y + i * D);
  double pairs = 0;
  for (size_t i = 1; i < N; i++) {
    double s = 0;
    for (size_t k = 0; k < i; k++) {
      double q2 = 0;
      for (size_t j = 0; j < D; j++) {
        double d = y[i * D + j] - y[k * D + j];
        q2 += d * d;
      }
      s += exp(-0.5 * q2);
    }
    pairs += s;
  }
  double Nd = (double)N, e0 = exp(c->pair.lognorm);
  double phat2 = (2 * pairs * e0 + Nd * e0) / (Nd * Nd);
  return phat2 - 2 * cross / Nd + c->pp;
}

int gfi_ise_gauss(const gfi_model *m, size_t N, const double *data, const double *H, double *ise) {
  if (!m || !data || !H || !ise) return GFI_EINVAL;
  if (N == 0) return GFI_EEMPTY;
  ise_ctx c;
  int st = ise_ctx_init(&c, m, H);
  if (st) return st;
  double *y = gfi_malloc3(N, c.D, sizeof *y);
  if (!y) return GFI_ENOMEM;
  *ise = ise_of(&c, N, data, y);
  free(y);
  return GFI_OK;
}

typedef struct {
  const gfi_model *m;
  const ise_ctx *c;
} rep_ctx;

static int gauss_rep(size_t k, gsl_rng *r, double *out, void *vp) {
  (void)k;
  const rep_ctx *rc = vp;
  size_t N = rc->c->N, D = rc->c->D;
  double *x = gfi_malloc4(2, N, D, sizeof *x);
  if (!x) return GFI_ENOMEM;
  int st = gfi_model_sample(rc->m, r, N, x);
  if (!st) *out = ise_of(rc->c, N, x, x + N * D);
  free(x);
  return st;
}

int gfi_mise_gauss_mc(const gfi_model *m, size_t N, const double *H, size_t nreps, const gfi_mise_opts *opts,
                      gfi_mise_result *res, double *ise_out) {
  if (!m || !H || !res) return GFI_EINVAL;
  if (N == 0) return GFI_EEMPTY;
  if (nreps < 2) return fail_param(GFI_EINVAL, "nreps");
  if (opts && !(opts->max_points >= 0)) return fail_param(GFI_EINVAL, "max_points");
  double budget = opts && opts->max_points > 0 ? opts->max_points : GFI_MISE_GAUSS_MC_MAX_PAIRS;
  if ((double)N * (double)N * (double)nreps > budget) return fail_param(GFI_ERANGE, "nreps");
  ise_ctx c;
  int st = ise_ctx_init(&c, m, H);
  if (st) return st;
  c.N = N;
  size_t need;
  if (gfi_size_prod(&need, 2, N, c.D, sizeof(double))) return GFI_ENOMEM; /* each replication's sample */
  double *ise = gfi_malloc2(nreps, sizeof *ise);
  if (!ise) return GFI_ENOMEM;
  gfi_opts ro;
  gfi_default_opts(&ro);
  if (opts) ro.nthreads = opts->base.nthreads, ro.seed = opts->base.seed;
  rep_ctx rc = {m, &c};
  st = gfi_replicate(nreps, 1, &ro, gauss_rep, &rc, ise);
  if (!st) st = mise_mc_summarize(ise, nreps, res);
  if (!st && ise_out) memcpy(ise_out, ise, nreps * sizeof *ise);
  free(ise);
  return st;
}
