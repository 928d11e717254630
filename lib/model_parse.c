/* gfi_model_parse: model specifications as the command line gives them
 * (--model), e.g. "normal:mean=1,0;cov=2,0.5,0.5,1", "mw:10", "t:3".
 * The grammar is in gfi/model.h. Every failure names the specification and
 * what is wrong in err->msg; err->column is the 1-based character position
 * of the offending token within the specification (0 when no one token is
 * at fault). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gfi/model.h"
#include "gfi/validate.h"
#include "alloc.h"

#define KNOWN_MODELS "normal, mw:K, laplace, cauchy, t:NU, uniform, beta:A,B, mix:W*normal|.."

/* The specification as quoted in messages: long ones (a big covariance) are
 * cut so that the message still has room for the reason. */
static void quote_spec(char *q, size_t qsize, const char *spec) {
  const size_t keep = 40;
  if (strlen(spec) <= keep + 3) {
    snprintf(q, qsize, "%s", spec);
  } else {
    snprintf(q, qsize, "%.*s...", (int)keep, spec);
  }
}

/* Record an error "model '<spec>': <reason>" and return status. */
static int fail(gfi_errinfo *err, int status, const char *spec, const char *at,
                const char *fmt, ...) {
  if (!err) return status;
  char q[64], reason[180];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  quote_spec(q, sizeof q, spec);
  snprintf(err->msg, sizeof err->msg, "model '%s': %s", q, reason);
  err->line = 0;
  err->column = at ? (size_t)(at - spec) + 1 : 0;
  return status;
}

/* Copy the token starting at p (up to ',', ';' or the end, at most 24
 * characters) for a message. */
static void token_text(char *buf, size_t size, const char *p) {
  size_t n = strcspn(p, ",;");
  if (n > 24) n = 24;
  snprintf(buf, size, "%.*s", (int)n, p);
}

/* Parse a comma-separated list of finite numbers starting at s and ending at
 * ';' or the end of the string. The first cap values go to v; *count gets how
 * many there were. Returns the position of the terminator, or NULL with *bad
 * at the malformed token (strtod must consume the whole token, and NaN, Inf
 * and overflowing values are rejected). */
static const char *parse_numbers(const char *s, double *v, size_t cap, size_t *count,
                                 const char **bad) {
  size_t n = 0;
  const char *p = s;
  for (;;) {
    char *end;
    double x = strtod(p, &end);
    if (end == p || !isfinite(x)) {
      *bad = p;
      return NULL;
    }
    const char *q = end;
    while (isspace((unsigned char)*q)) q++;
    if (*q != ',' && *q != ';' && *q != '\0') {
      *bad = p;  /* trailing junk: report the whole token */
      return NULL;
    }
    if (n < cap) v[n] = x;
    n++;
    if (*q != ',') {
      *count = n;
      return q;
    }
    p = q + 1;
  }
}

/* The message for a token parse_numbers rejected. */
static int bad_number(gfi_errinfo *err, const char *spec, const char *bad) {
  char tok[32];
  token_text(tok, sizeof tok, bad);
  const char *s = tok;
  while (isspace((unsigned char)*s)) s++;
  if (!*s) return fail(err, GFI_EMODEL, spec, bad, "missing number at column %zu",
                       (size_t)(bad - spec) + 1);
  char *end;
  double x = strtod(s, &end);
  if (end != s && !isfinite(x) && (*end == '\0' || isspace((unsigned char)*end)))
    return fail(err, GFI_EMODEL, spec, bad, "'%s' is not a finite number", s);
  return fail(err, GFI_EMODEL, spec, bad, "malformed number '%s' at column %zu", s,
              (size_t)(bad - spec) + 1);
}

/* Parameter `name` = x must lie in [lo, hi]: the limits of gfi/model.h
 * that keep the sampler and the density finite. */
static int in_range(gfi_errinfo *err, const char *spec, const char *name, double x, double lo,
                    double hi) {
  if (x >= lo && x <= hi) return GFI_OK;
  return fail(err, GFI_EMODEL, spec, NULL,
              "%s = %g is outside [%g, %g] (the limit that keeps samples and the density finite)",
              name, x, lo, hi);
}
#define LOC(name, x) in_range(err, spec, name, x, -GFI_MODEL_MAX_PARAM, GFI_MODEL_MAX_PARAM)
#define SCALE(name, x) in_range(err, spec, name, x, GFI_MODEL_MIN_SCALE, GFI_MODEL_MAX_PARAM)

/* Exactly `want` numbers (the whole argument string args), names for the
 * message ("mu,b"). */
static int parse_params(const char *spec, const char *args, size_t want, const char *names,
                        double *v, gfi_errinfo *err) {
  size_t got = 0;
  const char *bad = NULL;
  const char *end = parse_numbers(args, v, want, &got, &bad);
  if (!end) return bad_number(err, spec, bad);
  if (*end == ';')
    return fail(err, GFI_EMODEL, spec, end, "unexpected ';' at column %zu",
                (size_t)(end - spec) + 1);
  if (got != want)
    return fail(err, GFI_EMODEL, spec, NULL, "expected %zu number%s (%s), got %zu", want,
                want == 1 ? "" : "s", names, got);
  return GFI_OK;
}

/* normal[:mean=...][;cov=...] */
static int parse_normal(gfi_model **out, const char *spec, const char *args, size_t D,
                        gfi_errinfo *err) {
  if (!args) {
    int st = gfi_model_normal(out, D, NULL, NULL);
    return st ? fail(err, st, spec, NULL, "%s", gfi_strerror(st)) : GFI_OK;
  }
  double *mean = NULL, *cov = NULL;
  int st = GFI_OK;
  const char *p = args;
  for (;;) {
    const char *key = p;
    size_t klen = strcspn(p, "=;");
    if (klen == 0 || key[klen] != '=') {
      st = fail(err, GFI_EMODEL, spec, key,
                "expected key=value at column %zu (keys: mean, cov)", (size_t)(key - spec) + 1);
      break;
    }
    int is_mean = klen == 4 && !strncmp(key, "mean", 4);
    int is_cov = klen == 3 && !strncmp(key, "cov", 3);
    if (!is_mean && !is_cov) {
      st = fail(err, GFI_EMODEL, spec, key, "unknown key '%.*s' (known: mean, cov)",
                (int)(klen > 24 ? 24 : klen), key);
      break;
    }
    if ((is_mean && mean) || (is_cov && cov)) {
      st = fail(err, GFI_EMODEL, spec, key, "key '%s' given twice", is_mean ? "mean" : "cov");
      break;
    }
    size_t want = is_mean ? D : D * D, got = 0;
    double *v = gfi_malloc2(want, sizeof *v);
    if (!v) {
      st = fail(err, GFI_ENOMEM, spec, NULL, "%s", gfi_strerror(GFI_ENOMEM));
      break;
    }
    if (is_mean) mean = v;
    else cov = v;
    const char *bad = NULL;
    const char *end = parse_numbers(key + klen + 1, v, want, &got, &bad);
    if (!end) {
      st = bad_number(err, spec, bad);
      break;
    }
    if (got != want) {
      st = fail(err, GFI_EMODEL, spec, NULL, "expected %zu %s entries for D=%zu, got %zu",
                want, is_mean ? "mean" : "covariance", D, got);
      break;
    }
    for (size_t i = 0; i < want && !st; i++) {
      char name[64];
      if (is_mean) snprintf(name, sizeof name, "mean entry %zu", i + 1);
      else snprintf(name, sizeof name, "covariance entry (%zu,%zu)", i / D + 1, i % D + 1);
      /* a diagonal entry <= 0 is left to the positive-definiteness check */
      st = !is_mean && i / D == i % D && v[i] > 0 ? SCALE(name, v[i]) : LOC(name, v[i]);
    }
    if (st) break;
    if (*end == '\0') break;
    p = end + 1;  /* past ';' */
  }
  if (!st) {
    st = gfi_model_normal(out, D, mean, cov);
    if (st == GFI_ENOTPD)
      fail(err, st, spec, NULL, "covariance is not symmetric positive definite");
    else if (st)
      fail(err, st, spec, NULL, "%s", gfi_strerror(st));
  }
  free(mean);
  free(cov);
  return st;
}

/* mix:W1*normal[:...]|W2*normal[:...]|... : a normal mixture in D
 * dimensions, each component a normal specification. Components are parsed
 * in a copy whose '|' are cut to '\0', so positions in it are positions in
 * spec: a component's error keeps its column and names the whole spec. */
#define MIX_MAXK 64
static int parse_mix(gfi_model **out, const char *spec, const char *args, size_t D, gfi_errinfo *err) {
  if (!args || !*args)
    return fail(err, GFI_EMODEL, spec, NULL, "mix: needs components W*normal[:...] separated by '|'");
  size_t L = strlen(spec);
  char *buf = malloc(L + 1);
  double *w = malloc(MIX_MAXK * sizeof *w), *mu = malloc(MIX_MAXK * D * sizeof *mu),
         *S = malloc(MIX_MAXK * D * D * sizeof *S);
  int st = GFI_OK;
  if (!buf || !w || !mu || !S) {
    st = fail(err, GFI_ENOMEM, spec, NULL, "%s", gfi_strerror(GFI_ENOMEM));
    goto done;
  }
  memcpy(buf, spec, L + 1);
  for (char *c = buf; *c; c++)
    if (*c == '|') *c = '\0';
  size_t K = 0;
  for (char *comp = buf + (args - spec); comp <= buf + L; comp += strlen(comp) + 1) {
    const char *at = spec + (comp - buf);
    if (K == MIX_MAXK) {
      st = fail(err, GFI_EMODEL, spec, at, "at most %d components", MIX_MAXK);
      goto done;
    }
    char *end;
    double wk = strtod(comp, &end);
    if (end == comp || *end != '*' || !isfinite(wk) || !(wk > 0)) {
      st = fail(err, GFI_EMODEL, spec, at, "component %zu at column %zu: expected W*normal[:...] with a weight W > 0",
                K + 1, (size_t)(at - spec) + 1);
      goto done;
    }
    char *cs = end + 1, *colon = strchr(cs, ':');
    size_t nlen = colon ? (size_t)(colon - cs) : strlen(cs);
    if (nlen != 6 || strncmp(cs, "normal", 6)) {
      st = fail(err, GFI_EMODEL, spec, spec + (cs - buf), "component %zu: expected 'normal' after the weight",
                K + 1);
      goto done;
    }
    gfi_model *c = NULL;
    gfi_errinfo ce;
    gfi_errinfo_clear(&ce);
    /* buf as the spec: columns count from its start, which is spec's */
    st = parse_normal(&c, buf, colon ? colon + 1 : NULL, D, &ce);
    if (st) {
      const char *reason = strstr(ce.msg, "': ");
      fail(err, st, spec, NULL, "component %zu: %s", K + 1, reason ? reason + 3 : ce.msg);
      if (err) err->column = ce.column;
      goto done;
    }
    size_t Kc;
    const double *cw, *cm, *cS;
    gfi_model_mixture_parts(c, &Kc, &cw, &cm, &cS);
    w[K] = wk;
    memcpy(mu + K * D, cm, D * sizeof *mu);
    memcpy(S + K * D * D, cS, D * D * sizeof *S);
    gfi_model_free(c);
    K++;
  }
  st = gfi_model_mixture(out, D, K, w, mu, S);
  if (st) fail(err, st, spec, NULL, "%s", gfi_strerror(st));
done:
  free(buf);
  free(w);
  free(mu);
  free(S);
  return st;
}

/* mw:K */
static int parse_mw(gfi_model **out, const char *spec, const char *args, size_t D,
                    gfi_errinfo *err) {
  if (!args)
    return fail(err, GFI_EMODEL, spec, NULL, "mw:K needs the density number K = 1..15");
  char *end;
  errno = 0;
  long k = strtol(args, &end, 10);
  if (end == args || *end != '\0' || errno == ERANGE || k < 1 || k > 15)
    return fail(err, GFI_EMODEL, spec, args, "Marron-Wand density number must be 1..15");
  if (D != 1) return fail(err, GFI_EDIM, spec, NULL, "mw:K needs D = 1, got D = %zu", D);
  int st = gfi_model_marron_wand(out, (int)k);
  return st ? fail(err, st, spec, NULL, "%s", gfi_strerror(st)) : GFI_OK;
}

/* The one-dimensional families; a range error in their parameters is the
 * specification's fault, hence GFI_EMODEL rather than GFI_EINVAL. */
static int parse_1d(gfi_model **out, const char *spec, const char *name, size_t nlen,
                    const char *args, gfi_errinfo *err) {
  double v[2];
  int st;
#define IS(s) (nlen == strlen(s) && !strncmp(name, s, nlen))
  if (IS("laplace")) {
    v[0] = 0, v[1] = 1;
    if (args && (st = parse_params(spec, args, 2, "mu,b", v, err))) return st;
    if (!(v[1] > 0)) return fail(err, GFI_EMODEL, spec, NULL, "scale b must be > 0, got %g", v[1]);
    if ((st = LOC("mu", v[0])) || (st = SCALE("scale b", v[1]))) return st;
    st = gfi_model_laplace(out, v[0], v[1]);
  } else if (IS("cauchy")) {
    v[0] = 0, v[1] = 1;
    if (args && (st = parse_params(spec, args, 2, "x0,gamma", v, err))) return st;
    if (!(v[1] > 0))
      return fail(err, GFI_EMODEL, spec, NULL, "scale gamma must be > 0, got %g", v[1]);
    if ((st = LOC("x0", v[0])) || (st = SCALE("scale gamma", v[1]))) return st;
    st = gfi_model_cauchy(out, v[0], v[1]);
  } else if (IS("t")) {
    if (!args) return fail(err, GFI_EMODEL, spec, NULL, "t:NU needs the degrees of freedom NU");
    if ((st = parse_params(spec, args, 1, "NU", v, err))) return st;
    if (!(v[0] > 0))
      return fail(err, GFI_EMODEL, spec, NULL, "degrees of freedom must be > 0, got %g", v[0]);
    if ((st = in_range(err, spec, "degrees of freedom NU", v[0], GFI_MODEL_MIN_NU, GFI_MODEL_MAX_NU)))
      return st;
    st = gfi_model_student_t(out, v[0]);
  } else if (IS("uniform")) {
    v[0] = 0, v[1] = 1;
    if (args && (st = parse_params(spec, args, 2, "a,b", v, err))) return st;
    if (!(v[0] < v[1]) || !isfinite(v[1] - v[0]))
      return fail(err, GFI_EMODEL, spec, NULL, "needs a < b (and b - a finite), got a = %g, b = %g",
                  v[0], v[1]);
    if ((st = LOC("a", v[0])) || (st = LOC("b", v[1])) || (st = SCALE("width b - a", v[1] - v[0])))
      return st;
    st = gfi_model_uniform(out, v[0], v[1]);
  } else if (IS("beta")) {
    if (!args) return fail(err, GFI_EMODEL, spec, NULL, "beta:A,B needs both shape parameters");
    if ((st = parse_params(spec, args, 2, "A,B", v, err))) return st;
    if (!(v[0] > 0) || !(v[1] > 0))
      return fail(err, GFI_EMODEL, spec, NULL, "shape parameters must be > 0, got A = %g, B = %g",
                  v[0], v[1]);
    if ((st = in_range(err, spec, "shape A", v[0], GFI_MODEL_MIN_SHAPE, GFI_MODEL_MAX_SHAPE)) ||
        (st = in_range(err, spec, "shape B", v[1], GFI_MODEL_MIN_SHAPE, GFI_MODEL_MAX_SHAPE)))
      return st;
    st = gfi_model_beta(out, v[0], v[1]);
  } else {
    if (err) {
      snprintf(err->msg, sizeof err->msg, "unknown model '%.*s' (known: " KNOWN_MODELS ")",
               (int)(nlen > 40 ? 40 : nlen), name);
      err->line = 0;
      err->column = 1;
    }
    return GFI_EMODEL;
  }
#undef IS
  return st ? fail(err, st, spec, NULL, "%s", gfi_strerror(st)) : GFI_OK;
}

int gfi_model_parse(gfi_model **out, const char *spec, size_t D, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!out || !spec) {
    if (err) snprintf(err->msg, sizeof err->msg, "no model specification");
    return GFI_EINVAL;
  }
  *out = NULL;
  if (gfi_check_dim(D))
    return fail(err, GFI_EDIM, spec, NULL, "dimension D = %zu is outside 1..%d", D, GFI_MAX_DIM);

  const char *colon = strchr(spec, ':');
  size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
  const char *args = colon ? colon + 1 : NULL;

  if (nlen == 6 && !strncmp(spec, "normal", 6)) return parse_normal(out, spec, args, D, err);
  if (nlen == 2 && !strncmp(spec, "mw", 2)) return parse_mw(out, spec, args, D, err);
  if (nlen == 3 && !strncmp(spec, "mix", 3)) return parse_mix(out, spec, args, D, err);

  gfi_model *m1 = NULL;
  int st = parse_1d(&m1, spec, spec, nlen, args, err);
  if (st) return st;
  if (D == 1) {
    *out = m1;
    return GFI_OK;
  }
  /* A 1-D family in D > 1 dimensions is the i.i.d. product over the axes. */
  const gfi_model **f = gfi_malloc2(D, sizeof *f);
  if (!f) {
    gfi_model_free(m1);
    return fail(err, GFI_ENOMEM, spec, NULL, "%s", gfi_strerror(GFI_ENOMEM));
  }
  for (size_t j = 0; j < D; j++) f[j] = m1;
  st = gfi_model_product(out, D, f);
  free(f);
  gfi_model_free(m1);
  return st ? fail(err, st, spec, NULL, "%s", gfi_strerror(st)) : GFI_OK;
}
