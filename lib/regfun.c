/* Regression truths, noise laws and the (x, y) sampler (gfi/regfun.h). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "gfi/regfun.h"
#include "gfi/validate.h"

typedef enum { RF_POLY = 0, RF_POLYSUM, RF_SIN, RF_PRODSIN } rf_kind;

#define MAX_COEF 16

struct gfi_regfun {
  rf_kind kind;
  size_t D, axis, ncoef;
  double c[MAX_COEF];
  double w;
  char desc[256];
};

static int fail(gfi_errinfo *err, int st, const char *spec, const char *at, const char *fmt, ...) {
  if (!err) return st;
  char reason[180];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  snprintf(err->msg, sizeof err->msg, "truth '%.40s%s': %s", spec, strlen(spec) > 40 ? "..." : "", reason);
  err->line = 0;
  err->column = at ? (size_t)(at - spec) + 1 : 0;
  return st;
}

/* Comma-separated finite numbers from s up to ';' or the end. Returns the
 * terminator or NULL (*bad at the malformed token). */
static const char *numbers(const char *s, double *v, size_t cap, size_t *n, const char **bad) {
  size_t k = 0;
  const char *p = s;
  for (;;) {
    char *end;
    double x = strtod(p, &end);
    if (end == p || !isfinite(x) || (*end != ',' && *end != ';' && *end != '\0')) {
      *bad = p;
      return NULL;
    }
    if (k < cap) v[k] = x;
    k++;
    if (*end != ',') {
      *n = k;
      return end;
    }
    p = end + 1;
  }
}

int gfi_regfun_parse(gfi_regfun **out, const char *spec, size_t D, gfi_errinfo *err) {
  if (err) {
    err->msg[0] = '\0';
    err->line = err->column = 0;
  }
  if (!out || !spec) return GFI_EINVAL;
  *out = NULL;
  int st = gfi_check_dim(D);
  if (st) return fail(err, st, spec, NULL, "dimension %zu out of range", D);
  gfi_regfun f;
  memset(&f, 0, sizeof f);
  f.D = D;
  f.w = 1;
  const char *colon = strchr(spec, ':');
  size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
  const char *args = colon ? colon + 1 : NULL;
#define IS(name) (nlen == strlen(name) && strncmp(spec, name, nlen) == 0)
  if (IS("poly") || IS("polysum")) {
    f.kind = IS("poly") ? RF_POLY : RF_POLYSUM;
    if (!args || !*args) return fail(err, GFI_EMODEL, spec, NULL, "needs coefficients c0,c1,...");
    const char *bad = NULL;
    const char *end = numbers(args, f.c, MAX_COEF, &f.ncoef, &bad);
    if (!end) return fail(err, GFI_EMODEL, spec, bad, "malformed number at column %zu", (size_t)(bad - spec) + 1);
    if (f.ncoef > MAX_COEF)
      return fail(err, GFI_EMODEL, spec, NULL, "at most %d coefficients (degree %d)", MAX_COEF, MAX_COEF - 1);
    for (size_t i = 0; i < f.ncoef; i++)
      if (!(fabs(f.c[i]) <= GFI_REGFUN_MAX_PARAM))
        return fail(err, GFI_EMODEL, spec, NULL,
                    "coefficient c%zu = %g is outside [-%g, %g] (the limit that keeps the truth finite)", i,
                    f.c[i], GFI_REGFUN_MAX_PARAM, GFI_REGFUN_MAX_PARAM);
    if (*end == ';') {
      if (f.kind != RF_POLY || strncmp(end + 1, "axis=", 5) != 0)
        return fail(err, GFI_EMODEL, spec, end + 1, "expected axis=J at column %zu", (size_t)(end + 1 - spec) + 1);
      char *e2;
      const char *a = end + 6;
      long j = strtol(a, &e2, 10);
      if (e2 == a || *e2 != '\0') return fail(err, GFI_EMODEL, spec, a, "axis must be an integer");
      if (j < 1 || (size_t)j > D)
        return fail(err, GFI_EDIM, spec, a, "axis %ld outside 1..%zu", j, D);
      f.axis = (size_t)(j - 1);
    }
  } else if (IS("sin") || IS("prod-sin")) {
    f.kind = IS("sin") ? RF_SIN : RF_PRODSIN;
    if (args) {
      size_t n;
      const char *bad = NULL;
      const char *end = numbers(args, &f.w, 1, &n, &bad);
      if (!end) return fail(err, GFI_EMODEL, spec, bad, "malformed frequency at column %zu", (size_t)(bad - spec) + 1);
      if (n != 1 || *end) return fail(err, GFI_EMODEL, spec, NULL, "expects one frequency w");
      if (!(fabs(f.w) <= GFI_REGFUN_MAX_PARAM))
        return fail(err, GFI_EMODEL, spec, NULL, "frequency w = %g is outside [-%g, %g]", f.w,
                    GFI_REGFUN_MAX_PARAM, GFI_REGFUN_MAX_PARAM);
    }
  } else {
    return fail(err, GFI_EMODEL, spec, spec, "unknown truth '%.*s' (known: poly, polysum, sin, prod-sin)",
                (int)(nlen > 30 ? 30 : nlen), spec);
  }
#undef IS
  char *d = f.desc;
  size_t left = sizeof f.desc;
  int k;
  switch (f.kind) {
    case RF_POLY:
    case RF_POLYSUM:
      if (f.kind == RF_POLY)
        k = snprintf(d, left, "poly(axis %zu;", f.axis + 1);
      else
        k = snprintf(d, left, "polysum(");
      for (size_t i = 0; i < f.ncoef && k > 0 && (size_t)k < left; i++) {
        d += k;
        left -= (size_t)k;
        k = snprintf(d, left, "%s%.17g", i ? "," : "", f.c[i]);
      }
      if (k > 0 && (size_t)k < left) snprintf(d + k, left - (size_t)k, ")");
      break;
    case RF_SIN: snprintf(d, left, "sin(%.17g * sum x)", f.w); break;
    case RF_PRODSIN: snprintf(d, left, "prod sin(%.17g x_j)", f.w); break;
  }
  gfi_regfun *p = malloc(sizeof *p);
  if (!p) return GFI_ENOMEM;
  *p = f;
  *out = p;
  return GFI_OK;
}

static double horner(const double *c, size_t n, double x) {
  double s = 0;
  for (size_t k = n; k-- > 0;) s = s * x + c[k];
  return s;
}

int gfi_regfun_eval(const gfi_regfun *f, size_t n, const double *x, double *y) {
  if (!f) return GFI_EINVAL;
  if (n == 0) return GFI_OK;
  if (!x || !y) return GFI_EINVAL;
  const size_t D = f->D;
  for (size_t i = 0; i < n; i++) {
    const double *xi = x + i * D;
    double v = 0;
    switch (f->kind) {
      case RF_POLY: v = horner(f->c, f->ncoef, xi[f->axis]); break;
      case RF_POLYSUM:
        for (size_t j = 0; j < D; j++) v += horner(f->c, f->ncoef, xi[j]);
        break;
      case RF_SIN: {
        double s = 0;
        for (size_t j = 0; j < D; j++) s += xi[j];
        v = sin(f->w * s);
        break;
      }
      case RF_PRODSIN:
        v = 1;
        for (size_t j = 0; j < D; j++) v *= sin(f->w * xi[j]);
        break;
    }
    y[i] = v;
  }
  return GFI_OK;
}

size_t gfi_regfun_dim(const gfi_regfun *f) { return f ? f->D : 0; }
const char *gfi_regfun_describe(const gfi_regfun *f) { return f ? f->desc : "(null)"; }
void gfi_regfun_free(gfi_regfun *f) { free(f); }

int gfi_noise_parse(gfi_noise *n, const char *spec, gfi_errinfo *err) {
  if (err) {
    err->msg[0] = '\0';
    err->line = err->column = 0;
  }
  if (!n) return GFI_EINVAL;
  n->kind = GFI_NOISE_NONE;
  n->s0 = n->s1 = 0;
  if (!spec || strcmp(spec, "none") == 0) return GFI_OK;
  double v[2];
  size_t cnt = 0;
  const char *bad = NULL, *end = NULL;
  if (strncmp(spec, "gauss:", 6) == 0) {
    end = numbers(spec + 6, v, 2, &cnt, &bad);
    if (!end || *end || cnt != 1 || !(v[0] >= 0) || !(v[0] <= GFI_REGFUN_MAX_PARAM))
      goto bad_noise;
    n->kind = GFI_NOISE_GAUSS;
    n->s0 = v[0];
    return GFI_OK;
  }
  if (strncmp(spec, "hetero:", 7) == 0) {
    end = numbers(spec + 7, v, 2, &cnt, &bad);
    if (!end || *end || cnt != 2 || !(v[0] >= 0) || !(v[1] >= 0) || !(v[0] <= GFI_REGFUN_MAX_PARAM) ||
        !(v[1] <= GFI_REGFUN_MAX_PARAM))
      goto bad_noise;
    n->kind = GFI_NOISE_HETERO;
    n->s0 = v[0];
    n->s1 = v[1];
    return GFI_OK;
  }
bad_noise:
  if (err)
    snprintf(err->msg, sizeof err->msg,
             "noise '%.40s': expected none, gauss:S or hetero:S0,S1 with 0 <= S <= %g", spec,
             GFI_REGFUN_MAX_PARAM);
  return GFI_EMODEL;
}

double gfi_noise_sd(const gfi_noise *n, const double *x) {
  if (!n) return 0;
  switch (n->kind) {
    case GFI_NOISE_GAUSS: return n->s0;
    case GFI_NOISE_HETERO: return n->s0 + n->s1 * fabs(x[0]);
    default: return 0;
  }
}

void gfi_noise_describe(const gfi_noise *n, char *buf, size_t size) {
  if (!n || n->kind == GFI_NOISE_NONE)
    snprintf(buf, size, "none");
  else if (n->kind == GFI_NOISE_GAUSS)
    snprintf(buf, size, "gauss:%.17g", n->s0);
  else
    snprintf(buf, size, "hetero:%.17g,%.17g (sd = s0 + s1 |x_1|)", n->s0, n->s1);
}

int gfi_regress_sample(const gfi_model *design, const gfi_regfun *f, const gfi_noise *noise,
                       gsl_rng *r, size_t n, double *x, double *y) {
  if (!design || !f || !r) return GFI_EINVAL;
  if (n == 0) return GFI_OK;
  if (!x || !y) return GFI_EINVAL;
  if (gfi_model_dim(design) != f->D) return GFI_EDIM;
  int st = gfi_model_sample(design, r, n, x);
  if (st) return st;
  st = gfi_regfun_eval(f, n, x, y);
  if (st) return st;
  if (noise && noise->kind != GFI_NOISE_NONE)
    for (size_t i = 0; i < n; i++) {
      double sd = gfi_noise_sd(noise, x + i * f->D);
      y[i] += sd > 0 ? gsl_ran_gaussian_ziggurat(r, sd) : 0.0;
    }
  return GFI_OK;
}
