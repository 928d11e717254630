/* Density plans: validation, structure-of-arrays set-up, the threaded
 * evaluation driver and bandwidth rules. The per-kernel inner loops live in
 * density_fourier.c and density_gauss.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "density_internal.h"
#include "gfi/validate.h"

/* Points per inner block (SIMD loops run over a block held in L1). */
#define DEFAULT_BLOCK 256
/* Queries per task: the block of data is reused across them. */
#define DEFAULT_TILE 16
/* Data points per super-chunk at least, and at most this many chunks. */
#define SUPER_MIN 16384
#define SUPER_MAX 64
/* Coordinate used for padding points: far from every query, so that their
 * kernel values are exactly 0. */
#define PAD_COORD 1e100
/* Largest |R_j x_j| accepted: beyond 2^52 the phase R x is not resolved to
 * better than 1 in double precision, so sin(R x) means nothing. */
#define PHASE_MAX 4503599627370496.0

static void plan_free(gfi_density_plan *p) {
  if (!p) return;
  free(p->w);
  free(p->R);
  free(p->g);
  free(p->series);
  free(p->rk);
  free(p->sk);
  free(p->ck);
  free(p->Linv);
  free(p->z);
  free(p);
}

void gfi_density_destroy(gfi_density_plan *plan) { plan_free(plan); }

size_t gfi_density_dim(const gfi_density_plan *plan) { return plan ? plan->D : 0; }
size_t gfi_density_size(const gfi_density_plan *plan) { return plan ? plan->N : 0; }

size_t density_ws_size(const gfi_density_plan *p) {
  return 3 * p->qtile * p->D + p->dblock;
}

/* Common part of both plans: checks, block sizes, weights. */
static int plan_common(gfi_density_plan **out, density_type type, size_t N, size_t D,
                       const double *data, const double *weights, const gfi_opts *opts) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (N == 0) return GFI_EEMPTY;
  int st = gfi_check_dim(D);
  if (st) return st;
  if (!data) return GFI_EINVAL;
  if (N > ((size_t)1 << 52) / D) return GFI_EDIM;
  st = gfi_check_finite(data, N * D, NULL);
  if (st) return st;
  double wsum = 0;
  if (weights) {
    st = gfi_check_weights(weights, N, &wsum);
    if (st) return st;
  }
  gfi_opts o;
  gfi_default_opts(&o);
  if (opts) o = *opts;

  gfi_density_plan *p = calloc(1, sizeof *p);
  if (!p) return GFI_ENOMEM;
  p->type = type;
  p->N = N;
  p->D = D;
  p->nthreads = gfi_threads_resolve(&o);
  p->dblock = o.data_block ? o.data_block : DEFAULT_BLOCK;
  p->qtile = o.query_tile ? o.query_tile : DEFAULT_TILE;
  size_t nblocks = (N + p->dblock - 1) / p->dblock;
  p->Np = nblocks * p->dblock;
  size_t ns = (N + SUPER_MIN - 1) / SUPER_MIN;
  p->nsuper = ns < 1 ? 1 : (ns > SUPER_MAX ? SUPER_MAX : ns);
  if (p->nsuper > nblocks) p->nsuper = nblocks;
  if (weights) {
    p->w = calloc(p->Np, sizeof *p->w);
    if (!p->w) {
      plan_free(p);
      return GFI_ENOMEM;
    }
    for (size_t i = 0; i < N; i++) p->w[i] = weights[i] / wsum;
  }
  p->uniform_w = 1.0 / (double)N;
  *out = p;
  return GFI_OK;
}

int gfi_density_plan_fourier(gfi_density_plan **plan, const gfi_kernel *k, size_t N, size_t D,
                             const double *data, const double *weights, const double *R,
                             const gfi_opts *opts) {
  if (!plan || !k) return GFI_EINVAL;
  *plan = NULL;
  if (k->kind == GFI_PHI_POW) {
    int st = gfi_check_order(k->l);
    if (st) return st;
  } else if (k->kind != GFI_PHI_CUSTOM || !k->fn) {
    return GFI_EINVAL;
  }
  if (!k->A_finite || !isfinite(k->A) || !(k->A > 0)) return GFI_EINFINITE_A;
  if (!R) return GFI_EINVAL;
  int st = gfi_check_dim(D);
  if (st) return st;
  st = gfi_check_radii(R, D, NULL);
  if (st) return st;
  /* The phase R_j k_ij must be resolved (see PHASE_MAX). */
  if (data && N > 0)
    for (size_t i = 0; i < N * D; i++)
      if (fabs(R[i % D] * data[i]) > PHASE_MAX) return isfinite(data[i]) ? GFI_ERANGE : GFI_ENONFINITE;
  /* The estimator's peak value is at most prod_j R_j / A. */
  double logC = 0;
  for (size_t j = 0; j < D; j++) logC += log(R[j] / k->A);
  if (logC > 700) return GFI_ERANGE;

  gfi_density_plan *p;
  st = plan_common(&p, DENSITY_FOURIER, N, D, data, weights, opts);
  if (st) return st;
  p->kernel = *k;
  size_t Np = p->Np;
  p->R = malloc(D * sizeof *p->R);
  p->g = malloc(D * sizeof *p->g);
  p->series = malloc(5 * D * sizeof *p->series);
  p->rk = malloc(D * Np * sizeof *p->rk);
  p->sk = malloc(D * Np * sizeof *p->sk);
  p->ck = malloc(D * Np * sizeof *p->ck);
  if (!p->R || !p->g || !p->series || !p->rk || !p->sk || !p->ck) {
    plan_free(p);
    return GFI_ENOMEM;
  }
  for (size_t j = 0; j < D; j++) {
    p->R[j] = R[j];
    /* Fold the normalisation R_j/A into each factor so that products over
     * many axes stay in range: for z^l the l-th root goes into the sinc. */
    p->g[j] = k->kind == GFI_PHI_POW ? pow(R[j] / k->A, 1.0 / k->l) : R[j] / k->A;
    /* custom phi applies phi to the plain sinc: its factors use g = 1 */
    double gs = k->kind == GFI_PHI_POW ? p->g[j] : 1.0;
    const double coef[5] = {1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880};
    for (int c = 0; c < 5; c++) p->series[5 * j + c] = gs * coef[c];
  }
  for (size_t j = 0; j < D; j++) {
    double *rk = p->rk + j * Np, *sk = p->sk + j * Np, *ck = p->ck + j * Np;
    for (size_t i = 0; i < N; i++) {
      double a = R[j] * data[i * D + j];
      rk[i] = a;
      sk[i] = sin(a);
      ck[i] = cos(a);
    }
    for (size_t i = N; i < Np; i++) {
      rk[i] = 1e30; /* u = rx - rk is huge (u^2 still finite) and sin(u) = 0: factor 0 */
      sk[i] = 0;
      ck[i] = 0;
    }
  }
  *plan = p;
  return GFI_OK;
}

int gfi_density_plan_gauss(gfi_density_plan **plan, size_t N, size_t D, const double *data,
                           const double *weights, const double *H, const gfi_opts *opts) {
  if (!plan) return GFI_EINVAL;
  *plan = NULL;
  if (!H) return GFI_EINVAL;
  int st = gfi_check_dim(D);
  if (st) return st;
  for (size_t a = 0; a < D * D; a++)
    if (!isfinite(H[a])) return GFI_EBANDWIDTH;
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < a; b++)
      if (fabs(H[a * D + b] - H[b * D + a]) > 1e-12 * (fabs(H[a * D + b]) + fabs(H[b * D + a])))
        return GFI_EBANDWIDTH;
  gsl_set_error_handler_off();
  gsl_matrix *L = gsl_matrix_alloc(D, D);
  if (!L) return GFI_ENOMEM;
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b < D; b++) gsl_matrix_set(L, a, b, H[a * D + b]);
  if (gsl_linalg_cholesky_decomp1(L) != GSL_SUCCESS) {
    gsl_matrix_free(L);
    return GFI_EBANDWIDTH;
  }
  double logdet_half = 0;
  for (size_t a = 0; a < D; a++) {
    double d = gsl_matrix_get(L, a, a);
    if (!(d > 0)) {
      gsl_matrix_free(L);
      return GFI_EBANDWIDTH;
    }
    logdet_half += log(d);
  }
  double lognorm = -0.5 * (double)D * log(2 * M_PI) - logdet_half;
  if (lognorm > 700) {
    gsl_matrix_free(L);
    return GFI_ERANGE;
  }
  /* Inverse of the lower factor (lower triangle of the result). */
  if (gsl_linalg_tri_invert(CblasLower, CblasNonUnit, L) != GSL_SUCCESS) {
    gsl_matrix_free(L);
    return GFI_EBANDWIDTH;
  }
  gfi_density_plan *p;
  st = plan_common(&p, DENSITY_GAUSS, N, D, data, weights, opts);
  if (st) {
    gsl_matrix_free(L);
    return st;
  }
  size_t Np = p->Np;
  p->lognorm = lognorm;
  p->exp_floor = -708.0;
  p->Linv = calloc(D * D, sizeof *p->Linv);
  p->z = malloc(D * Np * sizeof *p->z);
  if (!p->Linv || !p->z) {
    gsl_matrix_free(L);
    plan_free(p);
    return GFI_ENOMEM;
  }
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b <= a; b++) p->Linv[a * D + b] = gsl_matrix_get(L, a, b);
  gsl_matrix_free(L);
  for (size_t a = 0; a < D; a++) {
    double *z = p->z + a * Np;
    for (size_t i = 0; i < N; i++) {
      double s = 0;
      for (size_t b = 0; b <= a; b++) s += p->Linv[a * D + b] * data[i * D + b];
      z[i] = s;
    }
    for (size_t i = N; i < Np; i++) z[i] = PAD_COORD; /* exp(-huge) = 0 */
  }
  *plan = p;
  return GFI_OK;
}

int gfi_density_eval(const gfi_density_plan *p, size_t M, const double *queries, double *out) {
  if (!p) return GFI_EINVAL;
  if (M == 0) return GFI_OK;
  if (!queries || !out) return GFI_EINVAL;
  if (M > ((size_t)1 << 52) / p->D) return GFI_EDIM;
  int st = gfi_check_finite(queries, M * p->D, NULL);
  if (st) return st;
  if (p->type == DENSITY_FOURIER)
    for (size_t i = 0; i < M * p->D; i++)
      if (fabs(p->R[i % p->D] * queries[i]) > PHASE_MAX) return GFI_ERANGE;
  size_t ns = p->nsuper;
  size_t nblocks = p->Np / p->dblock;
  size_t blocks_per_super = (nblocks + ns - 1) / ns;
  size_t nqt = (M + p->qtile - 1) / p->qtile;
  size_t ntask = nqt * ns;
  double *part = malloc(M * ns * sizeof *part);
  if (!part) return GFI_ENOMEM;
  int failed = 0;
  size_t wsn = density_ws_size(p);
#ifdef GFI_HAVE_OPENMP
  int nt = p->nthreads;
  if ((size_t)nt > ntask) nt = (int)ntask;
#pragma omp parallel num_threads(nt)
#endif
  {
    double *ws = malloc(wsn * sizeof *ws);
    if (!ws) {
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic write
#endif
      failed = 1;
    }
#ifdef GFI_HAVE_OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (size_t t = 0; t < ntask; t++) {
      if (!ws) continue;
      size_t qt = t / ns, s = t % ns;
      size_t q0 = qt * p->qtile, q1 = q0 + p->qtile < M ? q0 + p->qtile : M;
      size_t b0 = s * blocks_per_super, b1 = b0 + blocks_per_super;
      if (b1 > nblocks) b1 = nblocks;
      double *dst = part + s * M + q0;
      if (b0 >= b1) {
        for (size_t q = 0; q < q1 - q0; q++) dst[q] = 0;
        continue;
      }
      if (p->type == DENSITY_FOURIER)
        density_fourier_task(p, queries, q0, q1, b0 * p->dblock, b1 * p->dblock, dst, ws);
      else
        density_gauss_task(p, queries, q0, q1, b0 * p->dblock, b1 * p->dblock, dst, ws);
    }
    free(ws);
  }
  if (failed) {
    free(part);
    return GFI_ENOMEM;
  }
  /* Combine super-chunks in a fixed order: identical bits for any thread count. */
  double scale = p->w ? 1.0 : p->uniform_w;
  for (size_t q = 0; q < M; q++) {
    double s = 0;
    for (size_t c = 0; c < ns; c++) s += part[c * M + q];
    out[q] = s * scale;
  }
  free(part);
  return GFI_OK;
}

int gfi_bandwidth_rule(const char *rule, size_t N, size_t D, const double *data,
                       const double *weights, double *H) {
  if (!rule || !data || !H) return GFI_EINVAL;
  if (N == 0) return GFI_EEMPTY;
  int st = gfi_check_dim(D);
  if (st) return st;
  st = gfi_check_finite(data, N * D, NULL);
  if (st) return st;
  double wsum = (double)N, w2 = (double)N;
  if (weights) {
    st = gfi_check_weights(weights, N, &wsum);
    if (st) return st;
    w2 = 0;
    for (size_t i = 0; i < N; i++) w2 += (weights[i] / wsum) * (weights[i] / wsum);
    w2 = 1.0 / w2; /* effective sample size */
  }
  double neff = w2;
  double f;
  if (strcmp(rule, "scott") == 0)
    f = pow(neff, -1.0 / (D + 4));
  else if (strcmp(rule, "silverman") == 0)
    f = pow(neff * (D + 2) / 4.0, -1.0 / (D + 4));
  else
    return GFI_EINVAL;
  /* Weighted mean and unbiased covariance, as numpy.cov(aweights=w). */
  double *mu = calloc(D, sizeof *mu);
  if (!mu) return GFI_ENOMEM;
  for (size_t i = 0; i < N; i++) {
    double wi = weights ? weights[i] / wsum : 1.0 / N;
    for (size_t j = 0; j < D; j++) mu[j] += wi * data[i * D + j];
  }
  double sw2 = 0;
  for (size_t i = 0; i < N; i++) {
    double wi = weights ? weights[i] / wsum : 1.0 / N;
    sw2 += wi * wi;
  }
  for (size_t a = 0; a < D; a++)
    for (size_t b = 0; b <= a; b++) {
      double s = 0;
      for (size_t i = 0; i < N; i++) {
        double wi = weights ? weights[i] / wsum : 1.0 / N;
        s += wi * (data[i * D + a] - mu[a]) * (data[i * D + b] - mu[b]);
      }
      double denom = 1.0 - sw2;
      double c = denom > 0 ? s / denom : 0.0;
      H[a * D + b] = H[b * D + a] = c * f * f;
    }
  free(mu);
  return GFI_OK;
}
