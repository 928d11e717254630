/* Parsing RPE family and proposal specifications (the CLI's --rpe, --proposal). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/rpe.h"
#include "gfi/table.h"
#include "rpe_internal.h"
#include "alloc.h"

#define MAXKEYS 8
#define MAXVALS 64

typedef struct {
  char name[16];
  double val[MAXVALS];
  size_t n;
  int used;
} keyval;

static int fail(gfi_errinfo *err, int st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(gfi_errinfo *err, int st, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* "k1=a,b;k2=c" -> keys. Tokens are split on ',' and ';'; a token without
 * '=' continues the previous key's list. */
static int parse_keys(const char *s, keyval *kv, size_t *nk, gfi_errinfo *err) {
  *nk = 0;
  char buf[1024];
  if (strlen(s) >= sizeof buf) return fail(err, GFI_EMODEL, "specification too long");
  strcpy(buf, s);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",;", &save); tok; tok = strtok_r(NULL, ",;", &save)) {
    char *eq = strchr(tok, '=');
    const char *num = tok;
    if (eq) {
      if (*nk == MAXKEYS) return fail(err, GFI_EMODEL, "too many keys");
      *eq = '\0';
      if (strlen(tok) == 0 || strlen(tok) >= sizeof kv[0].name)
        return fail(err, GFI_EMODEL, "bad key '%s'", tok);
      for (size_t i = 0; i < *nk; i++)
        if (strcmp(kv[i].name, tok) == 0) return fail(err, GFI_EMODEL, "key '%s' given twice", tok);
      strcpy(kv[*nk].name, tok);
      kv[*nk].n = 0;
      kv[*nk].used = 0;
      (*nk)++;
      num = eq + 1;
    } else if (*nk == 0) {
      return fail(err, GFI_EMODEL, "expected key=value, got '%s'", tok);
    }
    keyval *k = &kv[*nk - 1];
    char *end;
    double d = strtod(num, &end);
    if (end == num || *end != '\0')
      return fail(err, GFI_EMODEL, "key '%s': not a number: '%s'", k->name, num);
    if (!isfinite(d)) return fail(err, GFI_EMODEL, "key '%s': value must be finite", k->name);
    if (k->n == MAXVALS) return fail(err, GFI_EMODEL, "key '%s': too many values", k->name);
    k->val[k->n++] = d;
  }
  return GFI_OK;
}

static keyval *key(keyval *kv, size_t nk, const char *name) {
  for (size_t i = 0; i < nk; i++)
    if (strcmp(kv[i].name, name) == 0) {
      kv[i].used = 1;
      return &kv[i];
    }
  return NULL;
}

static int unused(keyval *kv, size_t nk, const char *fam, gfi_errinfo *err) {
  for (size_t i = 0; i < nk; i++)
    if (!kv[i].used) return fail(err, GFI_EMODEL, "%s: unknown key '%s'", fam, kv[i].name);
  return GFI_OK;
}

/* one positive scalar key */
static int scalar(keyval *kv, size_t nk, const char *fam, const char *name, int required, double def,
                  double *out, gfi_errinfo *err) {
  keyval *k = key(kv, nk, name);
  if (!k) {
    if (required) return fail(err, GFI_EMODEL, "%s needs %s=VALUE", fam, name);
    *out = def;
    return GFI_OK;
  }
  if (k->n != 1) return fail(err, GFI_EMODEL, "%s: %s takes one value", fam, name);
  *out = k->val[0];
  return GFI_OK;
}

static int positive(const char *fam, const char *name, double v, gfi_errinfo *err) {
  if (!(v > 0)) return fail(err, GFI_EMODEL, "%s: %s must be > 0, got %g", fam, name, v);
  return GFI_OK;
}

static int mixture_file(gfi_rpe **out, const char *path, size_t ell, gfi_errinfo *err) {
  size_t rows, cols;
  double *d = NULL;
  gfi_errinfo e;
  gfi_errinfo_clear(&e);
  int st = gfi_table_read(path, ell + 2, &rows, &cols, &d, &e);
  if (st) {
    if (err) {
      *err = e;
      char msg[sizeof err->msg];
      if (e.line && e.column)
        snprintf(msg, sizeof msg, "%.100s:%zu:%zu: %.100s", path, e.line, e.column, e.msg);
      else if (e.line)
        snprintf(msg, sizeof msg, "%.100s:%zu: %.100s", path, e.line, e.msg);
      else
        snprintf(msg, sizeof msg, "%.100s: %.120s", path, e.msg[0] ? e.msg : gfi_strerror(st));
      memcpy(err->msg, msg, sizeof msg);
    }
    return st;
  }
  double *w = gfi_malloc2(rows, sizeof *w), *mu = gfi_malloc3(rows, ell, sizeof *mu), *s = gfi_malloc2(rows, sizeof *s);
  if (!w || !mu || !s) {
    free(d); free(w); free(mu); free(s);
    return GFI_ENOMEM;
  }
  for (size_t t = 0; t < rows; t++) {
    w[t] = d[t * cols];
    for (size_t j = 0; j < ell; j++) mu[t * ell + j] = d[t * cols + 1 + j];
    s[t] = d[t * cols + ell + 1];
    if (!(s[t] > 0)) {
      if (err) {
        err->line = 0;
        err->column = ell + 2;
        snprintf(err->msg, sizeof err->msg, "%s: row %zu: width s must be > 0 (last column)", path, t + 1);
      }
      free(d); free(w); free(mu); free(s);
      return GFI_EPARSE;
    }
  }
  st = gfi_rpe_mixture(out, ell, rows, w, mu, s);
  if (st == GFI_EWEIGHT) fail(err, st, "%s: all weights are zero", path);
  free(d); free(w); free(mu); free(s);
  return st;
}

int gfi_rpe_parse(gfi_rpe **out, const char *spec, size_t ell, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!out || !spec) return GFI_EINVAL;
  if (ell < 1 || ell > GFI_RPE_MAX_ELL) return fail(err, GFI_EDIM, "ell must be 1..%d", GFI_RPE_MAX_ELL);
  const char *colon = strchr(spec, ':');
  char fam[32];
  size_t fl = colon ? (size_t)(colon - spec) : strlen(spec);
  if (fl == 0 || fl >= sizeof fam) return fail(err, GFI_EMODEL, "unknown RPE family '%s'", spec);
  memcpy(fam, spec, fl);
  fam[fl] = '\0';
  const char *args = colon ? colon + 1 : "";
  if (strcmp(fam, "mixture") == 0 && *args && !strchr(args, '='))
    return mixture_file(out, args, ell, err);
  keyval kv[MAXKEYS];
  size_t nk;
  int st = parse_keys(args, kv, &nk, err);
  if (st) return st;
  double s = 0, C = 1, kd = 1;
  if (strcmp(fam, "gauss") == 0 || strcmp(fam, "exp") == 0 || strcmp(fam, "matern12") == 0 ||
      strcmp(fam, "matern32") == 0 || strcmp(fam, "laplace") == 0) {
    if ((st = scalar(kv, nk, fam, "s", 1, 0, &s, err)) || (st = positive(fam, "s", s, err)) ||
        (st = unused(kv, nk, fam, err)))
      return st;
    if (fam[0] == 'g') return gfi_rpe_gauss(out, ell, s);
    gfi_rpe_kind k = strcmp(fam, "matern32") == 0 ? GFI_RPE_MATERN32
                     : strcmp(fam, "laplace") == 0 ? GFI_RPE_LAPLACE
                                                   : GFI_RPE_EXP;
    return gfi_rpe_kernel(out, k, ell, s);
  }
  if (strcmp(fam, "box") == 0 || strcmp(fam, "local") == 0 || strcmp(fam, "local-paper") == 0) {
    keyval *v = key(kv, nk, "v");
    if (!v) return fail(err, GFI_EMODEL, "%s needs v=HALFWIDTH (one value or %zu)", fam, ell);
    if (v->n != 1 && v->n != ell) return fail(err, GFI_EMODEL, "%s: v needs 1 or %zu values, got %zu", fam, ell, v->n);
    double vv[GFI_RPE_MAX_ELL];
    for (size_t j = 0; j < ell; j++) {
      vv[j] = v->val[v->n == 1 ? 0 : j];
      if ((st = positive(fam, "v", vv[j], err))) return st;
    }
    int box = fam[0] == 'b';
    int kk[GFI_RPE_MAX_ELL];
    keyval *kl = key(kv, nk, "k");
    if (strcmp(fam, "local") == 0 && kl && kl->n == ell && ell > 1) {
      /* per-axis orders */
      kl->used = 1;
      for (size_t j = 0; j < ell; j++) {
        double kd2 = kl->val[j];
        if (kd2 != floor(kd2) || kd2 < 1 || kd2 > 8) return fail(err, GFI_EMODEL, "%s: k must be integers 1..8", fam);
        kk[j] = (int)kd2;
      }
      kd = 0;
    } else {
      if ((st = scalar(kv, nk, fam, "k", !box, 1, &kd, err))) return st;
      if (box && key(kv, nk, "k") && kd != 1) return fail(err, GFI_EMODEL, "box is local with k = 1");
      if (kd != floor(kd) || kd < 1 || kd > 8) return fail(err, GFI_EMODEL, "%s: k must be an integer 1..8", fam);
    }
    if ((st = scalar(kv, nk, fam, "C", 0, 1, &C, err))) return st;
    if (C == 0) return fail(err, GFI_EMODEL, "%s: C must be non-zero", fam);
    if ((st = unused(kv, nk, fam, err))) return st;
    if (kd == 0) return gfi_rpe_boxes(out, ell, 1, &C, vv, kk);
    return gfi_rpe_local(out, ell, vv, (int)kd, C, fam[5] == '-');
  }
  if (strcmp(fam, "boxes") == 0) {
    keyval *ck = key(kv, nk, "C"), *v = key(kv, nk, "v"), *kl = key(kv, nk, "k");
    if (!ck || !v || !kl) return fail(err, GFI_EMODEL, "boxes needs C=C1,..;v=..;k=K (see gfi flt-error --help)");
    ck->used = v->used = kl->used = 1;
    size_t nb = ck->n;
    if (nb < 1 || nb > GFI_RPE_MAX_BOXES) return fail(err, GFI_EMODEL, "boxes: 1 to %d boxes", GFI_RPE_MAX_BOXES);
    if (v->n != nb * ell)
      return fail(err, GFI_EMODEL, "boxes: v needs %zu half-widths (%zu boxes x %zu axes), got %zu", nb * ell, nb, ell,
                  v->n);
    if (kl->n != 1 && kl->n != ell) return fail(err, GFI_EMODEL, "boxes: k needs 1 or %zu values, got %zu", ell, kl->n);
    int kk[GFI_RPE_MAX_ELL];
    for (size_t j = 0; j < ell; j++) {
      double kd2 = kl->val[kl->n == 1 ? 0 : j];
      if (kd2 != floor(kd2) || kd2 < 1 || kd2 > 8) return fail(err, GFI_EMODEL, "boxes: k must be integers 1..8");
      kk[j] = (int)kd2;
    }
    for (size_t b = 0; b < nb; b++)
      if (ck->val[b] == 0) return fail(err, GFI_EMODEL, "boxes: C must be non-zero");
    for (size_t i = 0; i < nb * ell; i++)
      if ((st = positive(fam, "v", v->val[i], err))) return st;
    if ((st = unused(kv, nk, fam, err))) return st;
    return gfi_rpe_boxes(out, ell, nb, ck->val, v->val, kk);
  }
  if (strcmp(fam, "gbf") == 0 || strcmp(fam, "mixture") == 0) {
    int mix = fam[0] == 'm';
    keyval *w = key(kv, nk, "w"), *sk = key(kv, nk, "s"), *mu = mix ? key(kv, nk, "mu") : NULL;
    if (!w || !sk) return fail(err, GFI_EMODEL, "%s needs w=W1,..;s=S1,..%s", fam, mix ? " (and mu=...) or a FILE" : "");
    if (w->n != sk->n) return fail(err, GFI_EMODEL, "%s: %zu weights but %zu widths", fam, w->n, sk->n);
    for (size_t t = 0; t < sk->n; t++)
      if ((st = positive(fam, "s", sk->val[t], err))) return st;
    if (mu && mu->n != w->n * ell)
      return fail(err, GFI_EMODEL, "%s: mu needs %zu values (ell per component), got %zu", fam, w->n * ell, mu->n);
    if ((st = unused(kv, nk, fam, err))) return st;
    st = mix ? gfi_rpe_mixture(out, ell, w->n, w->val, mu ? mu->val : NULL, sk->val)
             : gfi_rpe_gbf(out, ell, w->n, w->val, sk->val);
    if (st == GFI_EWEIGHT) return fail(err, GFI_EMODEL, "%s: all weights are zero", fam);
    return st;
  }
  return fail(err, GFI_EMODEL,
              "unknown RPE family '%s' (gauss, box, local, boxes, local-paper, exp, matern12, matern32, laplace, gbf, mixture)",
              fam);
}

int gfi_proposal_parse(gfi_proposal **out, const char *spec, const gfi_rpe *rpe, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!out || !spec || !rpe) return GFI_EINVAL;
  size_t ell = gfi_rpe_dim(rpe);
  if (strcmp(spec, "optimal") == 0) {
    int st = gfi_proposal_optimal(out, rpe);
    if (st == GFI_EUNSUPPORTED)
      return fail(err, st, "optimal proposal p ~ |g| needs g >= 0; %s changes sign (use gauss:tau= or t:nu=)",
                  gfi_rpe_describe(rpe));
    return st;
  }
  const char *colon = strchr(spec, ':');
  char fam[16];
  size_t fl = colon ? (size_t)(colon - spec) : strlen(spec);
  if (fl == 0 || fl >= sizeof fam) return fail(err, GFI_EMODEL, "unknown proposal '%s'", spec);
  memcpy(fam, spec, fl);
  fam[fl] = '\0';
  keyval kv[MAXKEYS];
  size_t nk;
  int st = parse_keys(colon ? colon + 1 : "", kv, &nk, err);
  if (st) return st;
  double tau = 1, nu = 1;
  if (strcmp(fam, "gauss") == 0) {
    if ((st = scalar(kv, nk, fam, "tau", 1, 0, &tau, err)) || (st = positive(fam, "tau", tau, err)) ||
        (st = unused(kv, nk, fam, err)))
      return st;
    return gfi_proposal_gauss(out, ell, tau);
  }
  if (strcmp(fam, "t") == 0 || strcmp(fam, "cauchy") == 0) {
    int cauchy = fam[0] == 'c';
    if ((st = scalar(kv, nk, fam, "nu", !cauchy, 1, &nu, err)) || (st = positive(fam, "nu", nu, err)) ||
        (st = scalar(kv, nk, fam, "tau", 0, 1, &tau, err)) || (st = positive(fam, "tau", tau, err)) ||
        (st = unused(kv, nk, fam, err)))
      return st;
    if (cauchy && nu != 1) return fail(err, GFI_EMODEL, "cauchy is t with nu = 1");
    return gfi_proposal_t(out, ell, nu, tau);
  }
  return fail(err, GFI_EMODEL, "unknown proposal '%s' (gauss:tau=T, t:nu=NU[,tau=T], cauchy[:tau=T], optimal)", spec);
}
