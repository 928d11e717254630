/* FLT random features for an RPE mask: positions and their difference sets,
 * feature draws, factors N1 N2, error trials, moments, sample complexity. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/flt.h"
#include "gfi/stats.h"
#include "gfi/validate.h"
#include "alloc.h"
#include "clones.h"
#include "fail.h"
#include "simd_sincos.h"

/* A run of differences diff[first + j] = start + j * step, j < len: the
 * phases exp(2 pi i d.xi) along a run follow by rotation. */
typedef struct {
  size_t first, len;
  double start[GFI_RPE_MAX_ELL], step[GFI_RPE_MAX_ELL];
} run;

struct gfi_flt_positions {
  size_t L, ell, ndiff, nrun;
  double *coords; /* L x ell */
  double *diff;   /* ndiff x ell */
  double *mult;   /* ndiff */
  run *runs;
};

void gfi_flt_positions_free(gfi_flt_positions *p) {
  if (!p) return;
  free(p->coords);
  free(p->diff);
  free(p->mult);
  free(p->runs);
  free(p);
}

static gfi_flt_positions *pos_alloc(size_t L, size_t ell, size_t ndiff, size_t nrun) {
  gfi_flt_positions *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->L = L;
  p->ell = ell;
  p->ndiff = ndiff;
  p->nrun = nrun;
  p->coords = gfi_malloc3(L, ell, sizeof *p->coords);
  p->diff = gfi_malloc3(ndiff, ell, sizeof *p->diff);
  p->mult = gfi_malloc2(ndiff, sizeof *p->mult);
  p->runs = calloc(nrun, sizeof *p->runs);
  if (!p->coords || !p->diff || !p->mult || !p->runs) {
    gfi_flt_positions_free(p);
    return NULL;
  }
  return p;
}

int gfi_flt_positions_line(gfi_flt_positions **out, size_t L) {
  if (!out) return GFI_EINVAL;
  if (L == 0) return fail_param(GFI_EEMPTY, "L");
  gfi_flt_positions *p = pos_alloc(L, 1, L, 1);
  if (!p) return GFI_ENOMEM;
  for (size_t i = 0; i < L; i++) {
    p->coords[i] = (double)i;
    p->diff[i] = (double)i;
    p->mult[i] = i == 0 ? (double)L : 2.0 * (double)(L - i);
  }
  p->runs[0] = (run){0, L, {0}, {1}};
  *out = p;
  return GFI_OK;
}

int gfi_flt_positions_grid(gfi_flt_positions **out, size_t n1, size_t n2) {
  if (!out) return GFI_EINVAL;
  if (n1 == 0 || n2 == 0) return fail_param(GFI_EEMPTY, n1 == 0 ? "n1" : "n2");
  size_t L = n1 * n2, ndiff = n1 * (2 * n2 - 1) - (n2 - 1);
  gfi_flt_positions *p = pos_alloc(L, 2, ndiff, n1);
  if (!p) return GFI_ENOMEM;
  for (size_t a = 0; a < n1; a++)
    for (size_t b = 0; b < n2; b++) {
      p->coords[2 * (a * n2 + b)] = (double)a;
      p->coords[2 * (a * n2 + b) + 1] = (double)b;
    }
  size_t k = 0;
  for (size_t d1 = 0; d1 < n1; d1++) {
    long lo = d1 == 0 ? 0 : -(long)(n2 - 1);
    run *r = &p->runs[d1];
    r->first = k;
    r->len = (size_t)((long)n2 - lo);
    r->start[0] = (double)d1;
    r->start[1] = (double)lo;
    r->step[0] = 0;
    r->step[1] = 1;
    for (long d2 = lo; d2 < (long)n2; d2++, k++) {
      p->diff[2 * k] = (double)d1;
      p->diff[2 * k + 1] = (double)d2;
      size_t ad2 = (size_t)labs(d2);
      p->mult[k] = (d1 == 0 && d2 == 0) ? (double)L : 2.0 * (double)(n1 - d1) * (double)(n2 - ad2);
    }
  }
  *out = p;
  return GFI_OK;
}

int gfi_flt_positions_points(gfi_flt_positions **out, size_t L, size_t ell, const double *pos) {
  if (!out || (L && !pos)) return GFI_EINVAL;
  if (L == 0) return fail_param(GFI_EEMPTY, "pos");
  if (ell < 1 || ell > GFI_RPE_MAX_ELL) return fail_param(GFI_EDIM, "ell");
  if (gfi_check_finite(pos, L * ell, NULL)) return fail_param(GFI_ENONFINITE, "pos");
  size_t ndiff = L * (L - 1) / 2 + 1;
  gfi_flt_positions *p = pos_alloc(L, ell, ndiff, ndiff);
  if (!p) return GFI_ENOMEM;
  memcpy(p->coords, pos, L * ell * sizeof *pos);
  memset(p->diff, 0, ell * sizeof *p->diff);
  p->mult[0] = (double)L;
  size_t k = 1;
  for (size_t i = 0; i < L; i++)
    for (size_t j = i + 1; j < L; j++, k++) {
      for (size_t a = 0; a < ell; a++) p->diff[k * ell + a] = pos[i * ell + a] - pos[j * ell + a];
      p->mult[k] = 2;
    }
  for (size_t k2 = 0; k2 < ndiff; k2++) {
    p->runs[k2].first = k2;
    p->runs[k2].len = 1;
    memcpy(p->runs[k2].start, p->diff + k2 * ell, ell * sizeof(double));
  }
  *out = p;
  return GFI_OK;
}

size_t gfi_flt_positions_L(const gfi_flt_positions *p) { return p->L; }
size_t gfi_flt_positions_ell(const gfi_flt_positions *p) { return p->ell; }
const double *gfi_flt_positions_coords(const gfi_flt_positions *p) { return p->coords; }
size_t gfi_flt_positions_ndiff(const gfi_flt_positions *p) { return p->ndiff; }
const double *gfi_flt_positions_diff(const gfi_flt_positions *p, size_t k, double *mult) {
  if (k >= p->ndiff) return NULL;
  if (mult) *mult = p->mult[k];
  return p->diff + k * p->ell;
}

/* ------------------------------------------------------------------ */

int gfi_flt_draw(const gfi_rpe *rpe, const gfi_proposal *p, gsl_rng *rng, size_t r, double *xi, double *w) {
  if (!rpe || !p || !rng || (r && (!xi || !w))) return GFI_EINVAL;
  size_t ell = gfi_rpe_dim(rpe);
  if (gfi_proposal_dim(p) != ell) return fail_param(GFI_EDIM, "p");
  int st = gfi_proposal_sample(p, rng, r, xi);
  if (st) return st;
  for (size_t k = 0; k < r; k++) {
    double lg, lp;
    int s;
    gfi_rpe_log_abs_g(rpe, 1, xi + k * ell, &lg, &s);
    gfi_proposal_log_pdf(p, 1, xi + k * ell, &lp);
    w[k] = s == 0 ? 0.0 : s * exp(lg - lp);
    if (!isfinite(w[k])) return GFI_ERANGE;
  }
  return GFI_OK;
}

/* 2 pi (d.xi) reduced to [-pi, pi] before the trigonometric call. */
static inline double phase(const double *d, const double *xi, size_t ell) {
  double t = 0;
  for (size_t a = 0; a < ell; a++) t += d[a] * xi[a];
  return 2 * M_PI * (t - nearbyint(t));
}

int gfi_flt_factors(gfi_flt_features kind, size_t L, size_t ell, const double *pos, size_t r,
                    const double *xi, const double *w, double *N1, double *N2) {
  if (!pos || !xi || !w || !N1 || !N2) return GFI_EINVAL;
  if (r == 0) return fail_param(GFI_EINVAL, "r");
  if (L == 0) return fail_param(GFI_EEMPTY, "pos");
  for (size_t i = 0; i < L; i++)
    for (size_t k = 0; k < r; k++) {
      double a = phase(pos + i * ell, xi + k * ell, ell), c = cos(a), s = sin(a);
      double m = sqrt(fabs(w[k]) / (double)r);
      if (kind == GFI_FLT_COMPLEX) {
        /* sqrt(w) = m for w >= 0, i m for w < 0 */
        double sr = w[k] >= 0 ? m : 0, si = w[k] >= 0 ? 0 : m;
        double *a1 = N1 + 2 * (i * r + k), *a2 = N2 + 2 * (i * r + k);
        a1[0] = sr * c - si * s;  /* sqrt(w) e^{+ia} */
        a1[1] = sr * s + si * c;
        a2[0] = sr * c + si * s;  /* sqrt(w) e^{-ia} */
        a2[1] = -sr * s + si * c;
      } else {
        double sg = w[k] < 0 ? -1.0 : 1.0;
        N1[i * 2 * r + k] = sg * m * c;
        N1[i * 2 * r + r + k] = sg * m * s;
        N2[i * 2 * r + k] = m * c;
        N2[i * 2 * r + r + k] = m * s;
      }
    }
  return GFI_OK;
}

int gfi_flt_mask(const gfi_rpe *rpe, size_t L, size_t ell, const double *pos, double *Nre, double *Nim) {
  if (!rpe || !pos || !Nre) return GFI_EINVAL;
  if (gfi_rpe_dim(rpe) != ell) return fail_param(GFI_EDIM, "ell");
  double d[GFI_RPE_MAX_ELL];
  for (size_t i = 0; i < L; i++)
    for (size_t j = 0; j < L; j++) {
      for (size_t a = 0; a < ell; a++) d[a] = pos[i * ell + a] - pos[j * ell + a];
      gfi_rpe_f(rpe, 1, d, Nre + i * L + j, Nim ? Nim + i * L + j : NULL);
    }
  return GFI_OK;
}

/* ------------------------------------------------------------------ */
/* accumulation over the difference set                                 */

#define FBLOCK 128   /* features rotated together */
#define RESYNC 64    /* exact phases every RESYNC steps along a run */

/* c[b], s[b] = cos and sin of phase(d, xi_b), b < nb. The reduction to
 * [-pi, pi] rounds through the 1.5 2^52 shifter and the sine and cosine are
 * gfi_sincos_simd's, so the loop vectorises (libm's calls took 3/4 of the
 * accumulation's time); a block with |d.xi| >= 2^51, where the shifter does
 * not round, is done again with nearbyint and libm. */
static inline void phases(const double *d, const double *xi, size_t ell, size_t nb, double *c, double *s) {
  const double S = 6755399441055744.0;
  double t[FBLOCK], big = 0;
  for (size_t b = 0; b < nb; b++) t[b] = 0;
  for (size_t a = 0; a < ell; a++)
    for (size_t b = 0; b < nb; b++) t[b] += d[a] * xi[b * ell + a];
#pragma omp simd reduction(max : big)
  for (size_t b = 0; b < nb; b++) {
    double f = t[b] - ((t[b] + S) - S), at = fabs(t[b]), sn, cs;
    big = at > big ? at : big;
    gfi_sincos_simd(2 * M_PI * f, &sn, &cs);
    s[b] = sn;
    c[b] = cs;
  }
  if (!(big < 0x1p51))
    for (size_t b = 0; b < nb; b++) {
      double a = phase(d, xi + b * ell, ell);
      c[b] = cos(a);
      s[b] = sin(a);
    }
}

/* acc[d] += sum_k w_k exp(2 pi i d.xi_k) for features [0, nk). */
GFI_CLONES static void accumulate(const gfi_flt_positions *P, const double *xi, const double *w, size_t nk,
                                  double *acc_re, double *acc_im) {
  size_t ell = P->ell;
  double c[FBLOCK], s[FBLOCK], sc[FBLOCK], ss[FBLOCK], ww[FBLOCK];
  for (size_t k0 = 0; k0 < nk; k0 += FBLOCK) {
    size_t nb = nk - k0 < FBLOCK ? nk - k0 : FBLOCK;
    for (size_t b = 0; b < nb; b++) ww[b] = w[k0 + b];
    for (size_t q = 0; q < P->nrun; q++) {
      const run *R = &P->runs[q];
      phases(R->step, xi + k0 * ell, ell, nb, sc, ss);
      for (size_t j = 0; j < R->len; j++) {
        if (j % RESYNC == 0) {
          double d[GFI_RPE_MAX_ELL];
          for (size_t a = 0; a < ell; a++) d[a] = R->start[a] + (double)j * R->step[a];
          phases(d, xi + k0 * ell, ell, nb, c, s);
        }
        double sr = 0, si = 0;
#pragma omp simd reduction(+ : sr, si)
        for (size_t b = 0; b < nb; b++) {
          sr += ww[b] * c[b];
          si += ww[b] * s[b];
        }
        acc_re[R->first + j] += sr;
        acc_im[R->first + j] += si;
#pragma omp simd
        for (size_t b = 0; b < nb; b++) {
          double cn = c[b] * sc[b] - s[b] * ss[b];
          s[b] = s[b] * sc[b] + c[b] * ss[b];
          c[b] = cn;
        }
      }
    }
  }
}

void gfi_flt_default_opts(gfi_flt_opts *o) {
  if (!o) return;
  gfi_default_opts(&o->base);
  o->features = GFI_FLT_COMPLEX;
  o->progress = NULL;
}

typedef struct {
  const gfi_rpe *rpe;
  const gfi_proposal *p;
  const gfi_flt_positions *P;
  size_t nr, rmax;
  const size_t *rs;
  gfi_flt_features features;
  const double *fre, *fim;
  double normN2; /* ||N||_F^2 of the target */
  gfi_progress *progress;
} trial_ctx;

static int exact_f(const gfi_rpe *rpe, const gfi_flt_positions *P, double **fre, double **fim) {
  *fre = gfi_malloc2(P->ndiff, sizeof **fre);
  *fim = gfi_malloc2(P->ndiff, sizeof **fim);
  if (!*fre || !*fim) return GFI_ENOMEM;
  return gfi_rpe_f(rpe, P->ndiff, P->diff, *fre, *fim);
}

static void metrics(const trial_ctx *c, const double *are, const double *aim, double r, double *m) {
  const gfi_flt_positions *P = c->P;
  double mx = 0, mxr = 0, fr2 = 0;
  for (size_t d = 0; d < P->ndiff; d++) {
    double er = are[d] / r - c->fre[d], e2;
    if (c->features == GFI_FLT_COMPLEX) {
      double ei = aim[d] / r - c->fim[d];
      e2 = er * er + ei * ei;
    } else {
      e2 = er * er;
    }
    double e = sqrt(e2);
    if (e > mx) mx = e;
    if (fabs(er) > mxr) mxr = fabs(er);
    fr2 += P->mult[d] * e2;
  }
  m[0] = mx;
  m[1] = mxr;
  m[2] = sqrt(fr2);
  m[3] = c->normN2 > 0 ? sqrt(fr2 / c->normN2) : INFINITY;
}

static int trial_fn(size_t k, gsl_rng *rng, double *out, void *vctx) {
  (void)k;
  const trial_ctx *c = vctx;
  size_t ell = c->P->ell, nd = c->P->ndiff;
  double *xi = gfi_malloc3(c->rmax, ell, sizeof *xi), *w = gfi_malloc2(c->rmax, sizeof *w);
  double *are = calloc(nd, sizeof *are), *aim = calloc(nd, sizeof *aim);
  int st = (!xi || !w || !are || !aim) ? GFI_ENOMEM : GFI_OK;
  if (!st) st = gfi_flt_draw(c->rpe, c->p, rng, c->rmax, xi, w);
  size_t done = 0;
  for (size_t i = 0; i < c->nr && !st; i++) {
    accumulate(c->P, xi + done * ell, w + done, c->rs[i] - done, are, aim);
    done = c->rs[i];
    metrics(c, are, aim, (double)done, out + i * GFI_FLT_NMETRICS);
  }
  free(xi);
  free(w);
  free(are);
  free(aim);
  if (c->progress) gfi_progress_add(c->progress, 1);
  return st;
}

static int check_common(const gfi_rpe *rpe, const gfi_proposal *p, const gfi_flt_positions *P) {
  if (!rpe || !p || !P) return GFI_EINVAL;
  if (gfi_rpe_dim(rpe) != P->ell) return fail_param(GFI_EDIM, "pos");
  if (gfi_proposal_dim(p) != P->ell) return fail_param(GFI_EDIM, "p");
  return GFI_OK;
}

int gfi_flt_error_trials(const gfi_rpe *rpe, const gfi_proposal *p, const gfi_flt_positions *P,
                         size_t nr, const size_t *rs, size_t ntrials, const gfi_flt_opts *o, double *out) {
  int st = check_common(rpe, p, P);
  if (st) return st;
  if (!rs || !out) return GFI_EINVAL;
  if (nr == 0) return fail_param(GFI_EINVAL, "rs");
  if (ntrials == 0) return fail_param(GFI_EEMPTY, "ntrials");
  for (size_t i = 0; i < nr; i++)
    if (rs[i] == 0 || (i && rs[i] <= rs[i - 1])) return fail_param(GFI_EINVAL, "rs");
  gfi_flt_opts def;
  gfi_flt_default_opts(&def);
  if (!o) o = &def;
  trial_ctx c = {rpe, p, P, nr, rs[nr - 1], rs, o->features, NULL, NULL, 0, o->progress};
  double *fre, *fim;
  st = exact_f(rpe, P, &fre, &fim);
  if (!st && o->features == GFI_FLT_REAL)
    for (size_t d = 0; d < P->ndiff; d++) fim[d] = 0;
  if (!st) {
    double n2 = 0;
    for (size_t d = 0; d < P->ndiff; d++) n2 += P->mult[d] * (fre[d] * fre[d] + fim[d] * fim[d]);
    c.fre = fre;
    c.fim = fim;
    c.normN2 = n2;
    st = gfi_replicate(ntrials, nr * GFI_FLT_NMETRICS, &o->base, trial_fn, &c, out);
  }
  free(fre);
  free(fim);
  return st;
}

typedef struct {
  const gfi_rpe *rpe;
  const gfi_proposal *p;
  const gfi_flt_positions *P;
  size_t r;
  gfi_flt_features features;
  gfi_progress *progress;
} mom_ctx;

static int mom_fn(size_t k, gsl_rng *rng, double *out, void *vctx) {
  (void)k;
  const mom_ctx *c = vctx;
  size_t ell = c->P->ell, nd = c->P->ndiff;
  double *xi = gfi_malloc3(c->r, ell, sizeof *xi), *w = gfi_malloc2(c->r, sizeof *w);
  int st = (!xi || !w) ? GFI_ENOMEM : GFI_OK;
  memset(out, 0, 2 * nd * sizeof *out);
  if (!st) st = gfi_flt_draw(c->rpe, c->p, rng, c->r, xi, w);
  if (!st) accumulate(c->P, xi, w, c->r, out, out + nd);
  for (size_t d = 0; d < 2 * nd; d++) out[d] /= (double)c->r;
  if (c->features == GFI_FLT_REAL)
    for (size_t d = 0; d < nd; d++) out[nd + d] = 0;
  free(xi);
  free(w);
  if (c->progress) gfi_progress_add(c->progress, 1);
  return st;
}

int gfi_flt_moments(const gfi_rpe *rpe, const gfi_proposal *p, const gfi_flt_positions *P, size_t r,
                    size_t ntrials, const gfi_flt_opts *o, double *mean_re, double *mean_im, double *var,
                    double *f_re, double *f_im) {
  int st = check_common(rpe, p, P);
  if (st) return st;
  if (!mean_re || !var || r == 0) return GFI_EINVAL;
  if (ntrials < 2) return GFI_EEMPTY;
  gfi_flt_opts def;
  gfi_flt_default_opts(&def);
  if (!o) o = &def;
  size_t nd = P->ndiff;
  double *all = gfi_malloc4(ntrials, 2, nd, sizeof *all);
  if (!all) return GFI_ENOMEM;
  mom_ctx c = {rpe, p, P, r, o->features, o->progress};
  st = gfi_replicate(ntrials, 2 * nd, &o->base, mom_fn, &c, all);
  if (!st) {
    for (size_t d = 0; d < nd; d++) {
      double mr = 0, mi = 0;
      for (size_t t = 0; t < ntrials; t++) {
        mr += all[t * 2 * nd + d];
        mi += all[t * 2 * nd + nd + d];
      }
      mr /= (double)ntrials;
      mi /= (double)ntrials;
      double v = 0;
      for (size_t t = 0; t < ntrials; t++) {
        double a = all[t * 2 * nd + d] - mr, b = all[t * 2 * nd + nd + d] - mi;
        v += a * a + b * b;
      }
      mean_re[d] = mr;
      if (mean_im) mean_im[d] = mi;
      var[d] = v / (double)(ntrials - 1);
    }
    if (f_re) st = gfi_rpe_f(rpe, nd, P->diff, f_re, f_im);
  }
  free(all);
  return st;
}

double gfi_flt_thm42_r(double c, double eps, double delta, size_t L) {
  if (!isfinite(c)) return INFINITY;
  return 4 * c * c / (eps * eps) * log(4.0 * (double)L * (double)L / delta);
}

size_t gfi_flt_rstar(const double *err, size_t ntrials, size_t nr, double eps, double delta, double *phat) {
  size_t best = nr;
  double pbest = NAN;
  for (size_t i = nr; i-- > 0;) {
    size_t ok = 0;
    for (size_t t = 0; t < ntrials; t++) ok += err[t * nr + i] <= eps;
    double ph = (double)ok / (double)ntrials;
    if (ph >= 1 - delta) {
      best = i;
      pbest = ph;
    } else {
      break;
    }
  }
  if (phat) *phat = pbest;
  return best;
}
