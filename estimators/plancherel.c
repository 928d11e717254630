/* The Plancherel quadrature shared by the exact MISE, the exact ISE of one
 * estimate and the Monte-Carlo MISE (CPU and GPU): what the quadrature knows
 * about |psi|^2 of a truth (its scales, and psi itself), the Gauss-Legendre
 * node lists on each frequency axis, the exact MISE's integrals on them and
 * the node rule of a Plancherel ISE. See plancherel.h. */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include "gauss_legendre.h"
#include "par.h"
#include "plancherel.h"
#include "mise_internal.h"
#include "alloc.h"
#include "gsl_quiet.h"

/* |psi|^2 of a Gaussian pair term is below e^-LOG_CUT of its peak beyond T. */
#define LOG_CUT 45.0
/* Graded cells grow like GRADE * |t|. */
#define GRADE 0.25
/* Geometric refinement towards t = 0 on graded axes (endpoint behaviour
 * like |t|^nu of Student-t cfs). */
#define NGEOM 20
#define MAX_NODES PL_MAX_NODES

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

double psi_amp2_1d(const gfi_model *f, double t) {
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
    double a = psi_amp2_1d(f, mid);
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
  int count_only; /* count the edges, store nothing */
} cells;

static int cell_add(cells *c, double x) {
  if (c->count_only) {
    c->n++;
    return GFI_OK;
  }
  if (c->n == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 64;
    double *p = gfi_realloc2(c->c, nc, sizeof *p);
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

/* The cell edges of an axis into c (b last); with c->count_only set only
 * their number. */
static int axis_cells(double a, double b, const gfi_kernel *kern, double R, double h, double osc,
                      int graded, double res, cells *cp) {
  if (!(b > a)) return GFI_EINVAL;
  double knots[KERNEL_KNOTS_MAX];
  int nk = kernel_knots(kern, knots);
  if (nk < 0) return GFI_EORDER;
  /* a, b, the <= 17 knots k R and NGEOM graded points */
  double bp[2 + 2 * GFI_PHI_MAXPOW + 1 + NGEOM];
  size_t nb = 0;
  bp[nb++] = a;
  for (int i = 0; i < nk; i++) {
    double x = knots[i] * R;
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
  cells c = *cp;
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
  *cp = c;
  return st;
}

size_t axis_count(double a, double b, const gfi_kernel *k, double R, double h, double osc,
                  int graded, double res) {
  cells c = {0};
  c.count_only = 1;
  if (axis_cells(a, b, k, R, h, osc, graded, res, &c) || c.n < 1) return SIZE_MAX;
  return (c.n - 1) * MISE_GL;
}

int axis_build(double a, double b, const gfi_kernel *k, double R, double h, double osc, int graded,
               double res, axis_nodes *ax) {
  memset(ax, 0, sizeof *ax);
  cells c = {0};
  int st = axis_cells(a, b, k, R, h, osc, graded, res, &c);
  if (st) {
    free(c.c);
    return st;
  }
  /* c.c holds the cell edges (sorted, b last) */
  size_t ncell = c.n - 1;
  ax->n = ncell * MISE_GL;
  ax->t = gfi_malloc2(ax->n, sizeof *ax->t);
  ax->w = gfi_malloc2(ax->n, sizeof *ax->w);
  if (!ax->t || !ax->w) {
    free(c.c);
    axis_free(ax);
    return GFI_ENOMEM;
  }
  double gx[MISE_GL], gw[MISE_GL];
  gl_rule(MISE_GL, gx, gw);
  for (size_t q = 0; q < ncell; q++)
    gl_panel(MISE_GL, gx, gw, c.c[q], c.c[q + 1], ax->t + q * MISE_GL, ax->w + q * MISE_GL);
  free(c.c);
  return GFI_OK;
}


/* ---- the exact route's integrals ------------------------------------------ */

static double tail_integrand(double t, void *p) { return psi_amp2_1d((const gfi_model *)p, t); }

/* 2 int_L^inf |psi_f|^2 dt */
static int tail_1d(const gfi_model *f, double L, double *out) {
  /* qagiu reports rounding (accepted below) through GSL's error handler. */
  gfi_gsl_quiet_enter();
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(500);
  if (!ws) {
    gfi_gsl_quiet_leave();
    return GFI_ENOMEM;
  }
  gsl_function F = {tail_integrand, (void *)f};
  double r, e;
  int gs = gsl_integration_qagiu(&F, L, 1e-300, 1e-12, 500, ws, &r, &e);
  gsl_integration_workspace_free(ws);
  gfi_gsl_quiet_leave();
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

static int integrals_mixture(const psi_info *pi, const gfi_kernel *k, const double *R, double res, int nthreads,
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
    st = axis_build(a, pi->T[j], k, R[j], pi->h[j], pi->osc[j], 0, res, ax + j);
    if (st) break;
    if (total > MAX_NODES / ax[j].n) st = GFI_EUNSUPPORTED;
    total *= ax[j].n;
    kap[j] = gfi_malloc2(ax[j].n, sizeof *kap[j]);
    inb[j] = malloc(ax[j].n);
    if (!kap[j] || !inb[j]) {
      st = GFI_ENOMEM;
      break;
    }
    for (size_t i = 0; i < ax[j].n; i++) {
      double u = ax[j].t[i] / R[j];
      inb[j][i] = fabs(u) < kernel_band(k);
      kap[j][i] = inb[j][i] ? gfi_kernel_kappa(k, u) : 0.0;
    }
  }
  size_t n0 = st ? 0 : ax[0].n;
  if (!st) {
    part = gfi_calloc4(4, n0, 1, sizeof *part);
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

static int integrals_product(const psi_info *pi, const gfi_kernel *k, const double *R, double res, int nthreads,
                             mise_integrals *I) {
  const size_t D = pi->D;
  axis_nodes ax[MISE_MAXD] = {{0}};
  double *kap[MISE_MAXD] = {0}, *wp[MISE_MAXD] = {0};
  double B[MISE_MAXD], O[MISE_MAXD], Tt[MISE_MAXD], K2[MISE_MAXD];
  double *part = NULL;
  int st = GFI_OK;
  size_t total = 1;
  for (size_t j = 0; j < D && !st; j++) {
    double L = kernel_band(k) * R[j];
    double b = fmin(L, pi->T[j]);
    st = axis_build(0.0, b, k, R[j], pi->h[j], pi->osc[j], pi->graded[j], res, ax + j);
    if (st) break;
    if (total > MAX_NODES / ax[j].n) st = GFI_EUNSUPPORTED;
    total *= ax[j].n;
    size_t n = ax[j].n;
    kap[j] = gfi_malloc2(n, sizeof *kap[j]);
    wp[j] = gfi_malloc2(n, sizeof *wp[j]);
    double *im = gfi_malloc2(n, sizeof *im);
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
      kap[j][i] = gfi_kernel_kappa(k, ax[j].t[i] / R[j]);
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

int mise_integrals_compute(const psi_info *pi, const gfi_kernel *k, const double *R, double res, int nthreads,
                           mise_integrals *I) {
  memset(I, 0, sizeof *I);
  if (!(res > 0) || !isfinite(res)) return GFI_EINVAL;
  /* Count the nodes first: a rule too large to finish in reasonable time and
   * memory is refused before anything is built (the counts stay in I). */
  double total = 1;
  int over = 0;
  for (size_t j = 0; j < pi->D; j++) {
    size_t n;
    if (pi->route == PSI_MIXTURE)
      n = axis_count(j == 0 ? 0.0 : -pi->T[j], pi->T[j], k, R[j], pi->h[j], pi->osc[j], 0, res);
    else
      n = axis_count(0.0, fmin(kernel_band(k) * R[j], pi->T[j]), k, R[j], pi->h[j], pi->osc[j], pi->graded[j], res);
    I->nodes[j] = n;
    total *= (double)n;
    over |= n > GFI_MISE_EXACT_MAX_AXIS;
  }
  if (over || total > (double)GFI_MISE_EXACT_MAX_NODES) return GFI_ERANGE;
  return pi->route == PSI_MIXTURE ? integrals_mixture(pi, k, R, res, nthreads, I)
                                  : integrals_product(pi, k, R, res, nthreads, I);
}

/* ---- the node rule of a Plancherel ISE ------------------------------------ */

int ise_pl_init(const gfi_model *m, const gfi_kernel *k, const double *R, double res, int nthreads,
                ise_pl_rule *r) {
  memset(r, 0, sizeof *r);
  size_t D = gfi_model_dim(m);
  if (D > MISE_MAXD) return GFI_EUNSUPPORTED;
  r->D = D;
  r->k = *k;
  for (size_t j = 0; j < D; j++) r->R[j] = R[j];
  int st = psi_info_init(m, &r->pi);
  if (st) return st;
  mise_integrals I;
  st = mise_integrals_compute(&r->pi, k, R, res, nthreads, &I);
  if (st) return st;
  r->bias_out = I.bias_out;
  return GFI_OK;
}

int ise_pl_axes(const ise_pl_rule *r, size_t N, const double *xabs, double res, double max_work,
                axis_nodes ax[MISE_MAXD]) {
  /* highest frequency of |phi_N Kbar - psi|^2 on each axis */
  memset(ax, 0, MISE_MAXD * sizeof *ax);
  const psi_info *pi = &r->pi;
  double work = (double)N;
  int st = GFI_OK;
  for (size_t j = 0; j < r->D && !st; j++) {
    double xm = fmax(fabs(pi->centre[j]), xabs[j]);
    if (pi->route == PSI_MIXTURE)
      for (size_t a = 0; a < pi->K; a++) xm = fmax(xm, fabs(pi->mu[a * r->D + j]));
    double F = 2 * xm;
    double wmax;
    if (r->D < 3) {
      /* cells up to a phase of 8 at the highest frequency: 16 points per
       * cell integrate e^{iFt} times a smooth factor to about
       * (8/2)^32 / 32! = 7e-17 of the cell (a phase of 3 cost 2.7 times the
       * nodes and changed an ISE by 4e-15 of itself: heavy-tailed samples,
       * whose far points set F, paid it in full; test_mise's far-point
       * case fails with a phase of 40) */
      wmax = fmin(pi->h[j], pi->osc[j]);
      if (F > 0) wmax = fmin(wmax, 8.0 / F);
    } else {
      /* D = 3: cells up to a phase of 4 (not 1.5) at the highest frequency
       * and twice the scale of |psi|^2, so that the tensor rule stays near
       * 10^6 nodes; 16 points per cell still integrate such a cell to about
       * 1e-15 (4^32 / 32!), and tests compare with res = 2. */
      wmax = fmin(2 * pi->h[j], 2 * pi->osc[j]);
      if (F > 0) wmax = fmin(wmax, 8.0 / F);
    }
    double L = kernel_band(&r->k) * r->R[j];
    if (L / wmax * MISE_GL * work > max_work) {
      st = GFI_EUNSUPPORTED;
      break;
    }
    st = axis_build(j == 0 ? 0.0 : -L, L, &r->k, r->R[j], wmax, INFINITY, 0, res, ax + j);
    if (!st) work *= (double)ax[j].n;
  }
  if (!st && work > max_work) st = GFI_EUNSUPPORTED;
  if (st)
    for (size_t j = 0; j < MISE_MAXD; j++) axis_free(ax + j);
  return st;
}

int ise_pl_cf_row(const gfi_model *m, const ise_pl_rule *r, const axis_nodes *ax, size_t i0,
                  double *t, double *re, double *im) {
  size_t D = r->D, n1 = D > 1 ? ax[1].n : 1, n2 = D > 2 ? ax[2].n : 1;
  for (size_t i1 = 0; i1 < n1; i1++)
    for (size_t i2 = 0; i2 < n2; i2++) {
      double *tt = t + (i1 * n2 + i2) * D;
      tt[0] = ax[0].t[i0];
      if (D > 1) tt[1] = ax[1].t[i1];
      if (D > 2) tt[2] = ax[2].t[i2];
    }
  return gfi_model_cf(m, n1 * n2, t, re, im);
}

size_t ise_pl_row(const ise_pl_rule *r, const axis_nodes *ax) {
  size_t n = 1;
  for (size_t j = 1; j < r->D; j++) n *= ax[j].n;
  return n;
}

void ise_pl_row_factors(const ise_pl_rule *r, const axis_nodes *ax, double *k, double *w) {
  if (r->D < 3) {
    ise_pl_axis_factors(r, ax, 1, k, w);
    return;
  }
  size_t n1 = ax[1].n, n2 = ax[2].n;
  for (size_t i1 = 0; i1 < n1; i1++) {
    double k1 = gfi_kernel_kappa(&r->k, ax[1].t[i1] / r->R[1]);
    for (size_t i2 = 0; i2 < n2; i2++) {
      k[i1 * n2 + i2] = k1 * gfi_kernel_kappa(&r->k, ax[2].t[i2] / r->R[2]);
      w[i1 * n2 + i2] = ax[1].w[i1] * ax[2].w[i2];
    }
  }
}

void ise_pl_axis_factors(const ise_pl_rule *r, const axis_nodes *ax, size_t j, double *k, double *w) {
  if (j >= r->D) {
    k[0] = w[0] = 1.0;
    return;
  }
  for (size_t i = 0; i < ax[j].n; i++) {
    k[i] = gfi_kernel_kappa(&r->k, ax[j].t[i] / r->R[j]);
    w[i] = ax[j].w[i];
  }
}

int ise_pl_finish(const ise_pl_rule *r, double s, double *ise) {
  *ise = pow(2 * M_PI, -(double)r->D) * (2 * s + r->bias_out);
  return isfinite(*ise) ? GFI_OK : GFI_EQUAD;
}

/* ---- the empirical cf at the nodes, by direct sums ---------------------------- */

/* Tasks of the driver for the empirical cf sums: node i0 of axis 0 adds
 * the data of one block (D = 1: all the data) to its own entries. */
typedef struct {
  const axis_nodes *ax;
  size_t D, N, B, n1, n2;
  const double *x, *e1r, *e1i, *e2r, *e2i;
  double *pr, *pim;
} ecf_ctx;

static int ecf_node_1d(void *vc, size_t i0, void *ws) {
  const ecf_ctx *c = vc;
  (void)ws;
  double t = c->ax[0].t[i0], sr = c->pr[i0], si = c->pim[i0];
  for (size_t i = 0; i < c->N; i++) {
    double a = t * c->x[i];
    sr += cos(a);
    si += sin(a);
  }
  c->pr[i0] = sr;
  c->pim[i0] = si;
  return GFI_OK;
}

static int ecf_node_block(void *vc, size_t i0, void *ws) {
  const ecf_ctx *c = vc;
  (void)ws;
  const size_t D = c->D, B = c->B, n1 = c->n1, n2 = c->n2;
  const axis_nodes *ax = c->ax;
  const double *x = c->x, *e1r = c->e1r, *e1i = c->e1i, *e2r = c->e2r, *e2i = c->e2i;
  double *pr = c->pr, *pim = c->pim;
  double c0[PL_PBLOCK], s0[PL_PBLOCK];
  for (size_t i = 0; i < B; i++) {
    double a = ax[0].t[i0] * x[i * D];
    c0[i] = cos(a);
    s0[i] = sin(a);
  }
  if (D == 2) {
    for (size_t i1 = 0; i1 < n1; i1++) {
      const double *cr = e1r + i1 * PL_PBLOCK, *ci = e1i + i1 * PL_PBLOCK;
      double sr = 0, si = 0;
#pragma omp simd reduction(+ : sr, si)
      for (size_t i = 0; i < B; i++) {
        sr += c0[i] * cr[i] - s0[i] * ci[i];
        si += s0[i] * cr[i] + c0[i] * ci[i];
      }
      pr[i0 * n1 + i1] += sr;
      pim[i0 * n1 + i1] += si;
    }
    return GFI_OK;
  }
  double c01[PL_PBLOCK], s01[PL_PBLOCK];
  for (size_t i1 = 0; i1 < n1; i1++) {
    const double *cr = e1r + i1 * PL_PBLOCK, *ci = e1i + i1 * PL_PBLOCK;
    for (size_t i = 0; i < B; i++) {
      c01[i] = c0[i] * cr[i] - s0[i] * ci[i];
      s01[i] = s0[i] * cr[i] + c0[i] * ci[i];
    }
    for (size_t i2 = 0; i2 < n2; i2++) {
      const double *dr = e2r + i2 * PL_PBLOCK, *di = e2i + i2 * PL_PBLOCK;
      double sr = 0, si = 0;
#pragma omp simd reduction(+ : sr, si)
      for (size_t i = 0; i < B; i++) {
        sr += c01[i] * dr[i] - s01[i] * di[i];
        si += s01[i] * dr[i] + c01[i] * di[i];
      }
      pr[(i0 * n1 + i1) * n2 + i2] += sr;
      pim[(i0 * n1 + i1) * n2 + i2] += si;
    }
  }
  return GFI_OK;
}

int ise_pl_ecf_accum(const ise_pl_rule *r, const axis_nodes *ax, size_t N, const double *x, int nt,
                     double *pr, double *pim) {
  const size_t D = r->D, n0 = ax[0].n;
  if (D == 1) {
    ecf_ctx c = {.ax = ax, .D = 1, .N = N, .x = x, .pr = pr, .pim = pim};
    return par_for(n0, nt, 0, ecf_node_1d, &c);
  }
  const size_t n1 = ax[1].n, n2 = D > 2 ? ax[2].n : 1;
  const size_t ntab = n1 + (D > 2 ? n2 : 0);
  if (ntab > SIZE_MAX / PL_PBLOCK / sizeof(double)) return GFI_ENOMEM;
  double *er = gfi_malloc3(ntab, PL_PBLOCK, sizeof *er), *ei = gfi_malloc3(ntab, PL_PBLOCK, sizeof *ei);
  if (!er || !ei) {
    free(er);
    free(ei);
    return GFI_ENOMEM;
  }
  /* rows of e^{i t_j x_j} per point of the block: axis 1, then axis 2 */
  double *e1r = er, *e1i = ei, *e2r = er + n1 * PL_PBLOCK, *e2i = ei + n1 * PL_PBLOCK;
  for (size_t b0 = 0; b0 < N; b0 += PL_PBLOCK) {
    size_t B = N - b0 < PL_PBLOCK ? N - b0 : PL_PBLOCK;
    for (size_t i1 = 0; i1 < n1; i1++)
      for (size_t i = 0; i < B; i++) {
        double a = ax[1].t[i1] * x[(b0 + i) * D + 1];
        e1r[i1 * PL_PBLOCK + i] = cos(a);
        e1i[i1 * PL_PBLOCK + i] = sin(a);
      }
    if (D > 2)
      for (size_t i2 = 0; i2 < n2; i2++)
        for (size_t i = 0; i < B; i++) {
          double a = ax[2].t[i2] * x[(b0 + i) * D + 2];
          e2r[i2 * PL_PBLOCK + i] = cos(a);
          e2i[i2 * PL_PBLOCK + i] = sin(a);
        }
    ecf_ctx c = {ax, D, N, B, n1, n2, x + b0 * D, e1r, e1i, e2r, e2i, pr, pim};
    par_for(n0, nt, 0, ecf_node_block, &c);
  }
  free(er);
  free(ei);
  return GFI_OK;
}
