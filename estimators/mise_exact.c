/* The exact MISE of the generalized Fourier density estimator by Plancherel
 * (docs/theory.md section 3), the Gaussian-KDE exact MISE of Marron & Wand, and
 * the MISE-optimal radius and bandwidth. See gfi/mise.h for the method. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_min.h>
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "mise_internal.h"
#include "par.h"
#include "gfi/validate.h"

/* |psi|^2 of a Gaussian pair term is below e^-LOG_CUT of its peak beyond T. */
#define LOG_CUT 45.0
/* Graded cells grow like GRADE * |t|. */
#define GRADE 0.25
/* Geometric refinement towards t = 0 on graded axes (endpoint behaviour
 * like |t|^nu of Student-t cfs). */
#define NGEOM 20
/* Largest tensor grid accepted (nodes). */
#define MAX_NODES ((size_t)1 << 31)

void gfi_mise_default_opts(gfi_mise_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  gfi_default_opts(&o->base);
  o->ise = GFI_ISE_AUTO;
  o->parts = 1;
  o->resolution = 1.0;
  o->grid_halfwidth = 0;
  o->grid_cells = 0;
}

/* ---- B-spline constants ------------------------------------------------- */

double mise_bspline0(int l) {
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

double gfi_kappa_sq_integral(int l) {
  if (gfi_check_order(l) != GFI_OK) return NAN;
  double m = mise_bspline0(l);
  return mise_bspline0(2 * l) / (m * m);
}

/* ---- small dense linear algebra (D <= 3) -------------------------------- */

/* Diagonal of the inverse of a symmetric positive-definite D x D matrix. */
static int inv_diag(size_t D, const double *P, double *d) {
  if (D == 1) {
    if (!(P[0] > 0)) return GFI_ENOTPD;
    d[0] = 1.0 / P[0];
    return GFI_OK;
  }
  if (D == 2) {
    double det = P[0] * P[3] - P[1] * P[2];
    if (!(det > 0)) return GFI_ENOTPD;
    d[0] = P[3] / det;
    d[1] = P[0] / det;
    return GFI_OK;
  }
  double a = P[0], b = P[1], c = P[2], e = P[4], f = P[5], i = P[8];
  double c00 = e * i - f * f, c11 = a * i - c * c, c22 = a * e - b * b;
  double det = a * c00 - b * (b * i - f * c) + c * (b * f - e * c);
  if (!(det > 0)) return GFI_ENOTPD;
  d[0] = c00 / det;
  d[1] = c11 / det;
  d[2] = c22 / det;
  return GFI_OK;
}

/* ---- what the quadrature knows about |psi|^2 ----------------------------- */

static double amp2_1d(const gfi_model *f, double t) {
  double re, im;
  if (gfi_model_cf(f, 1, &t, &re, &im) != GFI_OK) return NAN;
  return re * re + im * im;
}

/* Scales of |psi|^2 for a set of Gaussian components on one axis or jointly. */
static int mixture_scales(size_t D, size_t K, const double *w, const double *mu, const double *S,
                          double *h, double *osc, double *T, double *centre, double *scale) {
  (void)w;
  double P[MISE_MAXD * MISE_MAXD], dg[MISE_MAXD];
  for (size_t j = 0; j < D; j++) {
    h[j] = INFINITY;
    osc[j] = INFINITY;
    T[j] = 0;
  }
  for (size_t a = 0; a < K; a++)
    for (size_t b = 0; b <= a; b++) {
      for (size_t q = 0; q < D * D; q++) P[q] = S[a * D * D + q] + S[b * D * D + q];
      int st = inv_diag(D, P, dg);
      if (st) return st;
      for (size_t j = 0; j < D; j++) {
        h[j] = fmin(h[j], 1.0 / sqrt(P[j * D + j]));
        T[j] = fmax(T[j], sqrt(2 * LOG_CUT * dg[j]));
        double dm = fabs(mu[a * D + j] - mu[b * D + j]);
        if (dm > 0) osc[j] = fmin(osc[j], 3.0 / dm);
      }
    }
  for (size_t j = 0; j < D; j++) {
    double c = 0, v = 0;
    for (size_t a = 0; a < K; a++) c += w[a] * mu[a * D + j];
    for (size_t a = 0; a < K; a++) {
      double d = mu[a * D + j] - c;
      v += w[a] * (S[a * D * D + j * D + j] + d * d);
    }
    centre[j] = c;
    scale[j] = sqrt(v);
  }
  return GFI_OK;
}

/* A 1-D factor of a product (or a 1-D model) on axis j. */
static int factor_init(const gfi_model *f, psi_info *pi, size_t j) {
  if (gfi_model_dim(f) != 1) return GFI_EUNSUPPORTED;
  gfi_model_kind k = gfi_model_get_kind(f);
  pi->fac[j] = f;
  if (k == GFI_MODEL_MIXTURE) {
    size_t K;
    const double *w, *mu, *S;
    int st = gfi_model_mixture_parts(f, &K, &w, &mu, &S);
    if (st) return st;
    pi->graded[j] = 0;
    return mixture_scales(1, K, w, mu, S, pi->h + j, pi->osc + j, pi->T + j, pi->centre + j,
                          pi->scale + j);
  }
  if (k != GFI_MODEL_LAPLACE && k != GFI_MODEL_CAUCHY && k != GFI_MODEL_STUDENT_T)
    return GFI_EUNSUPPORTED;
  /* |psi|^2 decreases monotonically: bisect for where it halves. */
  double lo = 1e-12, hi = 1e12;
  for (int it = 0; it < 200 && hi / lo > 1 + 1e-6; it++) {
    double mid = sqrt(lo * hi);
    double a = amp2_1d(f, mid);
    if (!isfinite(a)) return GFI_EQUAD;
    if (a > 0.5) lo = mid; else hi = mid;
  }
  double th = sqrt(lo * hi);
  pi->h[j] = th;
  pi->osc[j] = INFINITY;
  pi->T[j] = INFINITY;
  pi->graded[j] = 1;
  /* location from the phase of psi at a small frequency */
  double t0 = 1e-3 * th, re, im;
  int st = gfi_model_cf(f, 1, &t0, &re, &im);
  if (st) return st;
  pi->centre[j] = atan2(im, re) / t0;
  pi->scale[j] = 1.0 / th;
  return GFI_OK;
}

int psi_info_init(const gfi_model *m, psi_info *pi) {
  if (!m || !pi) return GFI_EINVAL;
  memset(pi, 0, sizeof *pi);
  size_t D = gfi_model_dim(m);
  if (D < 1 || D > MISE_MAXD) return GFI_EUNSUPPORTED;
  pi->D = D;
  gfi_model_kind kind = gfi_model_get_kind(m);
  if (kind == GFI_MODEL_MIXTURE) {
    int st = gfi_model_mixture_parts(m, &pi->K, &pi->w, &pi->mu, &pi->S);
    if (st) return st;
    pi->route = PSI_MIXTURE;
    return mixture_scales(D, pi->K, pi->w, pi->mu, pi->S, pi->h, pi->osc, pi->T, pi->centre,
                          pi->scale);
  }
  pi->route = PSI_PRODUCT;
  if (kind == GFI_MODEL_PRODUCT) {
    size_t Df;
    const gfi_model *const *f;
    int st = gfi_model_product_factors(m, &Df, &f);
    if (st) return st;
    if (Df != D) return GFI_EDIM;
    for (size_t j = 0; j < D; j++) {
      st = factor_init(f[j], pi, j);
      if (st) return st;
    }
    return GFI_OK;
  }
  return factor_init(m, pi, 0);
}

int gfi_mise_exact_supported(const gfi_model *m) {
  psi_info pi;
  return m && psi_info_init(m, &pi) == GFI_OK;
}

void psi_mixture_eval(const psi_info *pi, const double *t, double *re, double *im) {
  const size_t D = pi->D;
  double sr = 0, si = 0;
  for (size_t a = 0; a < pi->K; a++) {
    const double *S = pi->S + a * D * D, *mu = pi->mu + a * D;
    double q = 0, ph = 0;
    for (size_t i = 0; i < D; i++) {
      double r = 0;
      for (size_t j = 0; j < D; j++) r += S[i * D + j] * t[j];
      q += t[i] * r;
      ph += t[i] * mu[i];
    }
    double e = pi->w[a] * exp(-0.5 * q);
    sr += e * cos(ph);
    si += e * sin(ph);
  }
  *re = sr;
  *im = si;
}

/* ---- axis node lists ----------------------------------------------------- */

void axis_free(axis_nodes *ax) {
  if (!ax) return;
  free(ax->t);
  free(ax->w);
  ax->t = ax->w = NULL;
  ax->n = 0;
}

typedef struct {
  double *c;
  size_t n, cap;
} cells;

static int cell_add(cells *c, double x) {
  if (c->n == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 64;
    double *p = realloc(c->c, nc * sizeof *p);
    if (!p) return GFI_ENOMEM;
    c->c = p;
    c->cap = nc;
  }
  c->c[c->n++] = x;
  return GFI_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int axis_build(double a, double b, int l, double R, double h, double osc, int graded, double res,
               axis_nodes *ax) {
  memset(ax, 0, sizeof *ax);
  if (!(b > a)) return GFI_EINVAL;
  double bp[24];
  size_t nb = 0;
  bp[nb++] = a;
  for (int k = -l; k <= l; k += 2) {
    double x = k * R;
    if (x > a && x < b) bp[nb++] = x;
  }
  if (graded && a == 0) {
    double x = fmin(h, b);
    for (int g = 0; g < NGEOM; g++) {
      x *= 0.5;
      if (x > a && x < b) bp[nb++] = x;
    }
  }
  bp[nb++] = b;
  qsort(bp, nb, sizeof *bp, cmp_double);
  double wmax = fmin(h, osc) / res;
  cells c = {0};
  int st = GFI_OK;
  for (size_t i = 0; i + 1 < nb && !st; i++) {
    double u = bp[i], v = bp[i + 1];
    if (!(v > u)) continue;
    if (graded) {
      double x = u;
      while (x < v && !st) {
        double w = fmax(h, GRADE * fabs(x));
        if (osc < w) w = osc;
        w /= res;
        double nx = x + w;
        if (nx > v || v - nx < 0.25 * w) nx = v;
        st = cell_add(&c, x);
        x = nx;
        if (c.n > MAX_NODES / MISE_GL) st = GFI_EUNSUPPORTED;
      }
    } else {
      double m = ceil((v - u) / wmax);
      if (m > (double)(MAX_NODES / MISE_GL)) {
        st = GFI_EUNSUPPORTED;
        break;
      }
      size_t mm = (size_t)m;
      if (mm < 1) mm = 1;
      for (size_t q = 0; q < mm && !st; q++) st = cell_add(&c, u + (v - u) * (double)q / (double)mm);
    }
  }
  if (!st) st = cell_add(&c, b);
  if (st) {
    free(c.c);
    return st;
  }
  /* c.c holds the cell edges (sorted, b last) */
  size_t ncell = c.n - 1;
  ax->n = ncell * MISE_GL;
  ax->t = malloc(ax->n * sizeof *ax->t);
  ax->w = malloc(ax->n * sizeof *ax->w);
  gsl_integration_glfixed_table *tab = gsl_integration_glfixed_table_alloc(MISE_GL);
  if (!ax->t || !ax->w || !tab) {
    free(c.c);
    axis_free(ax);
    if (tab) gsl_integration_glfixed_table_free(tab);
    return GFI_ENOMEM;
  }
  for (size_t q = 0; q < ncell; q++)
    for (size_t i = 0; i < MISE_GL; i++)
      gsl_integration_glfixed_point(c.c[q], c.c[q + 1], i, ax->t + q * MISE_GL + i,
                                    ax->w + q * MISE_GL + i, tab);
  gsl_integration_glfixed_table_free(tab);
  free(c.c);
  return GFI_OK;
}

/* ---- the exact route's integrals ------------------------------------------ */

static double tail_integrand(double t, void *p) { return amp2_1d((const gfi_model *)p, t); }

/* 2 int_L^inf |psi_f|^2 dt */
static int tail_1d(const gfi_model *f, double L, double *out) {
  gsl_set_error_handler_off();
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(500);
  if (!ws) return GFI_ENOMEM;
  gsl_function F = {tail_integrand, (void *)f};
  double r, e;
  int gs = gsl_integration_qagiu(&F, L, 1e-300, 1e-12, 500, ws, &r, &e);
  gsl_integration_workspace_free(ws);
  if (gs != GSL_SUCCESS && gs != GSL_EROUND) {
    /* accept a result whose error is negligible in absolute terms */
    if (!(isfinite(r) && e < 1e-14)) return GFI_EQUAD;
  }
  if (!isfinite(r)) return GFI_EQUAD;
  *out = 2 * r;
  return GFI_OK;
}

/* The integrals' outer axis as tasks of the driver: node i0 of axis 0 sums
 * over the other axes into its own slot, reduced afterwards in node order. */
typedef struct {
  const psi_info *pi;
  size_t D, n1, n2;
  const axis_nodes *ax;
  double *const *kap, *const *wp;
  unsigned char *const *inb;
  double *part;
} integrals_ctx;

static int mixture_node(void *vc, size_t i0, void *ws) {
  const integrals_ctx *c = vc;
  (void)ws;
  const size_t D = c->D, n1 = c->n1, n2 = c->n2;
  const axis_nodes *ax = c->ax;
  double *const *kap = c->kap;
  unsigned char *const *inb = c->inb;
  double t[MISE_MAXD], s_in = 0, s_out = 0, s_k2 = 0, s_box = 0;
  t[0] = ax[0].t[i0];
  for (size_t i1 = 0; i1 < n1; i1++) {
    double w01 = ax[0].w[i0];
    double k01 = kap[0][i0];
    int b01 = inb[0][i0];
    if (D > 1) {
      t[1] = ax[1].t[i1];
      w01 *= ax[1].w[i1];
      k01 *= kap[1][i1];
      b01 = b01 && inb[1][i1];
    }
    for (size_t i2 = 0; i2 < n2; i2++) {
      double W = w01, K = k01;
      int in = b01;
      if (D > 2) {
        t[2] = ax[2].t[i2];
        W *= ax[2].w[i2];
        K *= kap[2][i2];
        in = in && inb[2][i2];
      }
      double re, im;
      psi_mixture_eval(c->pi, t, &re, &im);
      double p2 = W * (re * re + im * im);
      if (in) {
        double omk = 1.0 - K;
        s_in += p2 * omk * omk;
        s_k2 += p2 * K * K;
        s_box += p2;
      } else {
        s_out += p2;
      }
    }
  }
  c->part[4 * i0] = s_in;
  c->part[4 * i0 + 1] = s_out;
  c->part[4 * i0 + 2] = s_k2;
  c->part[4 * i0 + 3] = s_box;
  return GFI_OK;
}

static int product_node(void *vc, size_t i0, void *ws) {
  const integrals_ctx *c = vc;
  (void)ws;
  const size_t D = c->D, n1 = c->n1, n2 = c->n2;
  double *const *kap = c->kap, *const *wp = c->wp;
  double s = 0;
  for (size_t i1 = 0; i1 < n1; i1++) {
    double w01 = wp[0][i0] * (D > 1 ? wp[1][i1] : 1.0);
    double k01 = kap[0][i0] * (D > 1 ? kap[1][i1] : 1.0);
    for (size_t i2 = 0; i2 < n2; i2++) {
      double W = w01 * (D > 2 ? wp[2][i2] : 1.0);
      double K = k01 * (D > 2 ? kap[2][i2] : 1.0);
      double omk = 1.0 - K;
      s += W * omk * omk;
    }
  }
  c->part[i0] = s;
  return GFI_OK;
}

static int integrals_mixture(const psi_info *pi, int l, const double *R, double res, int nthreads,
                             mise_integrals *I) {
  const size_t D = pi->D;
  axis_nodes ax[MISE_MAXD] = {{0}};
  double *kap[MISE_MAXD] = {0};
  unsigned char *inb[MISE_MAXD] = {0};
  double *part = NULL;
  int st = GFI_OK;
  size_t total = 1;
  for (size_t j = 0; j < D && !st; j++) {
    double a = j == 0 ? 0.0 : -pi->T[j];
    st = axis_build(a, pi->T[j], l, R[j], pi->h[j], pi->osc[j], 0, res, ax + j);
    if (st) break;
    if (total > MAX_NODES / ax[j].n) st = GFI_EUNSUPPORTED;
    total *= ax[j].n;
    kap[j] = malloc(ax[j].n * sizeof *kap[j]);
    inb[j] = malloc(ax[j].n);
    if (!kap[j] || !inb[j]) {
      st = GFI_ENOMEM;
      break;
    }
    for (size_t i = 0; i < ax[j].n; i++) {
      double u = ax[j].t[i] / R[j];
      inb[j][i] = fabs(u) < l;
      kap[j][i] = inb[j][i] ? gfi_kappa(l, u) : 0.0;
    }
  }
  size_t n0 = st ? 0 : ax[0].n;
  if (!st) {
    part = calloc(4 * n0, sizeof *part);
    if (!part) st = GFI_ENOMEM;
  }
  if (!st) {
    size_t n1 = D > 1 ? ax[1].n : 1, n2 = D > 2 ? ax[2].n : 1;
    integrals_ctx c = {pi, D, n1, n2, ax, kap, NULL, inb, part};
    par_for(n0, nthreads, 1, mixture_node, &c);
    double s[4];
    par_sum(part, n0, 4, s);
    /* the half-space t_1 >= 0 counts twice (|psi(-t)| = |psi(t)|, Kbar even) */
    I->bias_in = 2 * s[0];
    I->bias_out = 2 * s[1];
    I->k2 = 2 * s[2];
    I->psi_box = 2 * s[3];
  }
  free(part);
  for (size_t j = 0; j < D; j++) {
    axis_free(ax + j);
    free(kap[j]);
    free(inb[j]);
  }
  return st;
}

static int integrals_product(const psi_info *pi, int l, const double *R, double res, int nthreads,
                             mise_integrals *I) {
  const size_t D = pi->D;
  axis_nodes ax[MISE_MAXD] = {{0}};
  double *kap[MISE_MAXD] = {0}, *wp[MISE_MAXD] = {0};
  double B[MISE_MAXD], O[MISE_MAXD], Tt[MISE_MAXD], K2[MISE_MAXD];
  double *part = NULL;
  int st = GFI_OK;
  size_t total = 1;
  for (size_t j = 0; j < D && !st; j++) {
    double L = l * R[j];
    double b = fmin(L, pi->T[j]);
    st = axis_build(0.0, b, l, R[j], pi->h[j], pi->osc[j], pi->graded[j], res, ax + j);
    if (st) break;
    if (total > MAX_NODES / ax[j].n) st = GFI_EUNSUPPORTED;
    total *= ax[j].n;
    size_t n = ax[j].n;
    kap[j] = malloc(n * sizeof *kap[j]);
    wp[j] = malloc(n * sizeof *wp[j]);
    double *im = malloc(n * sizeof *im);
    if (!kap[j] || !wp[j] || !im) {
      free(im);
      st = GFI_ENOMEM;
      break;
    }
    st = gfi_model_cf(pi->fac[j], n, ax[j].t, wp[j], im);
    if (st) {
      free(im);
      break;
    }
    B[j] = 0;
    K2[j] = 0;
    for (size_t i = 0; i < n; i++) {
      double a2 = wp[j][i] * wp[j][i] + im[i] * im[i];
      kap[j][i] = gfi_kappa(l, ax[j].t[i] / R[j]);
      wp[j][i] = ax[j].w[i] * a2; /* weight times |psi_j|^2 */
      B[j] += wp[j][i];
      K2[j] += wp[j][i] * kap[j][i] * kap[j][i];
    }
    free(im);
    B[j] *= 2;
    K2[j] *= 2;
    st = tail_1d(pi->fac[j], L, O + j);
    Tt[j] = B[j] + O[j];
  }
  size_t n0 = st ? 0 : ax[0].n;
  if (!st) {
    part = calloc(n0, sizeof *part);
    if (!part) st = GFI_ENOMEM;
  }
  if (!st) {
    size_t n1 = D > 1 ? ax[1].n : 1, n2 = D > 2 ? ax[2].n : 1;
    integrals_ctx c = {pi, D, n1, n2, ax, kap, wp, NULL, part};
    par_for(n0, nthreads, 1, product_node, &c);
    double s = 0;
    for (size_t i0 = 0; i0 < n0; i0++) s += part[i0];
    I->bias_in = ldexp(s, (int)D); /* all axes on t_j >= 0: 2^D orthants */
    double out = 0, k2 = 1, box = 1;
    for (size_t j = 0; j < D; j++) {
      double term = O[j];
      for (size_t i = 0; i < j; i++) term *= B[i];
      for (size_t i = j + 1; i < D; i++) term *= Tt[i];
      out += term;
      k2 *= K2[j];
      box *= B[j];
    }
    I->bias_out = out;
    I->k2 = k2;
    I->psi_box = box;
  }
  free(part);
  for (size_t j = 0; j < D; j++) {
    axis_free(ax + j);
    free(kap[j]);
    free(wp[j]);
  }
  return st;
}

int mise_integrals_compute(const psi_info *pi, int l, const double *R, double res, int nthreads,
                           mise_integrals *I) {
  memset(I, 0, sizeof *I);
  if (!(res > 0) || !isfinite(res)) return GFI_EINVAL;
  return pi->route == PSI_MIXTURE ? integrals_mixture(pi, l, R, res, nthreads, I)
                                  : integrals_product(pi, l, R, res, nthreads, I);
}

static int resolve_threads(const gfi_mise_opts *o) {
  gfi_opts g;
  gfi_default_opts(&g);
  g.nthreads = o ? o->base.nthreads : 0;
  return gfi_threads_resolve(&g);
}

int gfi_mise_exact(const gfi_model *m, int l, double N, const double *R, const gfi_mise_opts *opts,
                   gfi_mise_result *res) {
  if (!m || !R || !res) return GFI_EINVAL;
  int st = gfi_check_order(l);
  if (st) return st;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  size_t D = gfi_model_dim(m);
  if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
  st = gfi_check_radii(R, D, NULL);
  if (st) return st;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  if (opts) o = *opts;
  psi_info pi;
  st = psi_info_init(m, &pi);
  if (st) return st;
  mise_integrals I;
  st = mise_integrals_compute(&pi, l, R, o.resolution, resolve_threads(&o), &I);
  if (st) return st;
  double c = pow(2 * M_PI, -(double)D);
  double kb2 = 1, cl = gfi_kappa_sq_integral(l);
  for (size_t j = 0; j < D; j++) kb2 *= cl * R[j]; /* int Kbar^2 = prod_j c_l R_j */
  memset(res, 0, sizeof *res);
  res->bias2_in = c * I.bias_in;
  res->bias2_out = c * I.bias_out;
  res->bias2 = res->bias2_in + res->bias2_out;
  res->var = c * (kb2 - I.k2) / N;
  res->mise = res->bias2 + res->var;
  res->se = 0;
  res->lo95 = res->hi95 = res->mise;
  res->nreps = 0;
  if (!isfinite(res->mise)) return GFI_EQUAD;
  return GFI_OK;
}

/* ---- Gaussian KDE (Marron & Wand 1992) ----------------------------------- */

/* log N(x; 0, S) for a D x D SPD S; GFI_ENOTPD otherwise. */
static int log_normal_density(size_t D, const double *x, const double *S, double *out) {
  gsl_set_error_handler_off();
  gsl_matrix *L = gsl_matrix_alloc(D, D);
  gsl_vector *v = gsl_vector_alloc(D);
  if (!L || !v) {
    if (L) gsl_matrix_free(L);
    if (v) gsl_vector_free(v);
    return GFI_ENOMEM;
  }
  for (size_t a = 0; a < D; a++) {
    for (size_t b = 0; b < D; b++) gsl_matrix_set(L, a, b, S[a * D + b]);
    gsl_vector_set(v, a, x[a]);
  }
  int st = GFI_OK;
  if (gsl_linalg_cholesky_decomp1(L) != GSL_SUCCESS) {
    st = GFI_ENOTPD;
  } else {
    double ld = 0;
    for (size_t a = 0; a < D; a++) ld += log(gsl_matrix_get(L, a, a));
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, L, v);
    double q = 0;
    for (size_t a = 0; a < D; a++) q += gsl_vector_get(v, a) * gsl_vector_get(v, a);
    *out = -0.5 * q - ld - 0.5 * (double)D * log(2 * M_PI);
  }
  gsl_matrix_free(L);
  gsl_vector_free(v);
  return st;
}

int gfi_mise_gauss_exact(const gfi_model *m, double N, const double *H, gfi_mise_result *res) {
  if (!m || !H || !res) return GFI_EINVAL;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE) return GFI_EUNSUPPORTED;
  size_t K, D = gfi_model_dim(m);
  const double *w, *mu, *S;
  int st = gfi_model_mixture_parts(m, &K, &w, &mu, &S);
  if (st) return st;
  for (size_t q = 0; q < D * D; q++)
    if (!isfinite(H[q])) return GFI_EBANDWIDTH;
  double *Sg = malloc(D * D * sizeof *Sg), *dx = malloc(D * sizeof *dx);
  if (!Sg || !dx) {
    free(Sg);
    free(dx);
    return GFI_ENOMEM;
  }
  /* |H|^-1/2 via log N(0; 0, H) = -D/2 log(2 pi) - log|H|/2 */
  for (size_t q = 0; q < D; q++) dx[q] = 0;
  double lnH;
  st = log_normal_density(D, dx, H, &lnH);
  if (st) {
    free(Sg);
    free(dx);
    return st == GFI_ENOTPD ? GFI_EBANDWIDTH : st;
  }
  /* (4 pi)^-D/2 |H|^-1/2 = 2^-D/2 N(0; 0, H) */
  double rk = exp(lnH - 0.5 * (double)D * log(2.0));
  double o[3] = {0, 0, 0};
  for (size_t a = 0; a < K && !st; a++)
    for (size_t b = 0; b < K && !st; b++) {
      for (size_t q = 0; q < D; q++) dx[q] = mu[a * D + q] - mu[b * D + q];
      for (int c = 0; c < 3 && !st; c++) {
        for (size_t q = 0; q < D * D; q++) Sg[q] = c * H[q] + S[a * D * D + q] + S[b * D * D + q];
        double ln;
        st = log_normal_density(D, dx, Sg, &ln);
        o[c] += w[a] * w[b] * exp(ln);
      }
    }
  free(Sg);
  free(dx);
  if (st) return st;
  memset(res, 0, sizeof *res);
  res->bias2 = o[2] - 2 * o[1] + o[0];
  res->var = (rk - o[2]) / N;
  res->mise = res->bias2 + res->var;
  res->lo95 = res->hi95 = res->mise;
  res->bias2_in = NAN;
  res->bias2_out = NAN;
  return GFI_OK;
}

/* ---- one-dimensional minimisation on a log scale ---------------------------- */

typedef int (*logfun)(double x, void *ctx, gfi_mise_result *res);

typedef struct {
  logfun f;
  void *ctx;
  int status;
} min_ctx;

static double min_eval(double x, void *p) {
  min_ctx *c = p;
  gfi_mise_result r;
  int st = c->f(x, c->ctx, &r);
  if (st || !(r.mise > 0)) {
    if (!c->status) c->status = st ? st : GFI_EQUAD;
    return INFINITY;
  }
  return log(r.mise);
}

/* Bracket a minimum of f (log MISE as a function of x = log r) starting at x0,
 * expanding geometrically within [xlo, xhi], then Brent. */
static int minimise_log(logfun f, void *ctx, double x0, double xlo, double xhi, double *xopt,
                        gfi_mise_result *res) {
  min_ctx c = {f, ctx, 0};
  double step = log(2.0);
  double a = x0 - step, b = x0, cc = x0 + step;
  double fa = min_eval(a, &c), fb = min_eval(b, &c), fc = min_eval(cc, &c);
  if (c.status) return c.status;
  int it = 0;
  while (!(fb < fa && fb < fc)) {
    if (++it > 200) return GFI_EQUAD;
    if (fa < fc) { /* go left */
      step *= 1.6;
      cc = b, fc = fb;
      b = a, fb = fa;
      a = b - step;
      if (a < xlo) return GFI_EQUAD;
      fa = min_eval(a, &c);
    } else {
      step *= 1.6;
      a = b, fa = fb;
      b = cc, fb = fc;
      cc = b + step;
      if (cc > xhi) return GFI_EQUAD;
      fc = min_eval(cc, &c);
    }
    if (c.status) return c.status;
  }
  gsl_set_error_handler_off();
  gsl_min_fminimizer *s = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
  if (!s) return GFI_ENOMEM;
  gsl_function F = {min_eval, &c};
  if (gsl_min_fminimizer_set_with_values(s, &F, b, fb, a, fa, cc, fc) != GSL_SUCCESS) {
    gsl_min_fminimizer_free(s);
    return GFI_EQUAD;
  }
  int st = GFI_OK;
  for (int i = 0; i < 200; i++) {
    if (gsl_min_fminimizer_iterate(s) != GSL_SUCCESS) {
      st = GFI_EQUAD;
      break;
    }
    if (c.status) break;
    double lo = gsl_min_fminimizer_x_lower(s), hi = gsl_min_fminimizer_x_upper(s);
    if (gsl_min_test_interval(lo, hi, 1e-9, 0) == GSL_SUCCESS) break;
  }
  double x = gsl_min_fminimizer_x_minimum(s);
  gsl_min_fminimizer_free(s);
  if (c.status) return c.status;
  if (st) return st;
  *xopt = x;
  return f(x, ctx, res);
}

typedef struct {
  const gfi_model *m;
  int l;
  double N;
  double Rdir[MISE_MAXD];
  size_t D;
  gfi_mise_opts o;
} ropt_ctx;

static int ropt_f(double x, void *p, gfi_mise_result *res) {
  ropt_ctx *c = p;
  double R[MISE_MAXD];
  double r = exp(x);
  for (size_t j = 0; j < c->D; j++) R[j] = r * c->Rdir[j];
  return gfi_mise_exact(c->m, c->l, c->N, R, &c->o, res);
}

int gfi_ropt(const gfi_model *m, int l, double N, const double *Rdir, const gfi_mise_opts *opts,
             double *r_opt, gfi_mise_result *res) {
  if (!m || !r_opt || !res) return GFI_EINVAL;
  int st = gfi_check_order(l);
  if (st) return st;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  ropt_ctx c;
  c.m = m;
  c.l = l;
  c.N = N;
  c.D = gfi_model_dim(m);
  if (c.D > MISE_MAXD) return GFI_EUNSUPPORTED;
  for (size_t j = 0; j < c.D; j++) c.Rdir[j] = Rdir ? Rdir[j] : 1.0;
  if (Rdir) {
    st = gfi_check_radii(Rdir, c.D, NULL);
    if (st) return st;
  }
  gfi_mise_default_opts(&c.o);
  if (opts) c.o = *opts;
  psi_info pi;
  st = psi_info_init(m, &pi);
  if (st) return st;
  /* start where the kernel's box reaches the scale of |psi|^2, grown with N
   * like the classical rate; the bracket search walks from there */
  double hmin = INFINITY;
  for (size_t j = 0; j < c.D; j++) hmin = fmin(hmin, pi.h[j] / c.Rdir[j]);
  double x0 = log(hmin) + log(N) / (c.D + 4.0);
  double x;
  st = minimise_log(ropt_f, &c, x0, log(1e-8), log(1e14), &x, res);
  if (st) return st;
  *r_opt = exp(x);
  return GFI_OK;
}

typedef struct {
  const gfi_model *m;
  double N;
  size_t D;
} hopt_ctx;

static int hopt_f(double x, void *p, gfi_mise_result *res) {
  hopt_ctx *c = p;
  double H[MISE_MAXD * MISE_MAXD * 4];
  size_t D = c->D;
  if (D > 6) return GFI_EUNSUPPORTED;
  double h2 = exp(2 * x);
  for (size_t a = 0; a < D * D; a++) H[a] = 0;
  for (size_t a = 0; a < D; a++) H[a * D + a] = h2;
  return gfi_mise_gauss_exact(c->m, c->N, H, res);
}

int gfi_mise_gauss_hopt(const gfi_model *m, double N, double *h, gfi_mise_result *res) {
  if (!m || !h || !res) return GFI_EINVAL;
  if (!(N >= 1) || !isfinite(N)) return GFI_EEMPTY;
  if (gfi_model_get_kind(m) != GFI_MODEL_MIXTURE) return GFI_EUNSUPPORTED;
  hopt_ctx c = {m, N, gfi_model_dim(m)};
  if (c.D > 6) return GFI_EUNSUPPORTED;
  size_t K;
  const double *w, *mu, *S;
  int st = gfi_model_mixture_parts(m, &K, &w, &mu, &S);
  if (st) return st;
  double smin = INFINITY;
  for (size_t a = 0; a < K; a++)
    for (size_t j = 0; j < c.D; j++) smin = fmin(smin, sqrt(S[a * c.D * c.D + j * c.D + j]));
  double x0 = log(smin) - log(N) / (c.D + 4.0);
  double x;
  st = minimise_log(hopt_f, &c, x0, log(1e-12), log(1e6), &x, res);
  if (st) return st;
  *h = exp(x);
  return GFI_OK;
}
