/* Shared helpers of the gfi command-line front end. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

const char *cli_cmd = "gfi";
int cli_argc = 0;
char **cli_argv = NULL;

static void vmsg(const char *fmt, va_list ap) {
  fprintf(stderr, "gfi %s: ", cli_cmd);
  vfprintf(stderr, fmt, ap);
}

void cli_die(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg(fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(code);
}

void cli_usage(const char *opt, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gfi %s: ", cli_cmd);
  if (opt) fprintf(stderr, "%s: ", opt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'gfi %s --help')\n", cli_cmd);
  exit(EXIT_USAGE);
}

double cli_double(const char *opt, const char *s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0') cli_usage(opt, "not a number: '%s'", s);
  if (!isfinite(v)) cli_usage(opt, "value must be finite, got '%s'", s);
  return v;
}

double cli_positive(const char *opt, const char *s) {
  double v = cli_double(opt, s);
  if (!(v > 0)) cli_usage(opt, "value must be > 0, got '%s'", s);
  return v;
}

uint64_t cli_u64(const char *opt, const char *s) {
  char *end;
  errno = 0;
  if (*s == '-' || *s == '\0') cli_usage(opt, "expected a non-negative integer, got '%s'", s);
  unsigned long long v = strtoull(s, &end, 10);
  if (*end != '\0' || errno == ERANGE) {
    /* accept exact forms like 1e6 */
    double d = strtod(s, &end);
    if (*end != '\0' || !(d >= 0) || d != floor(d) || d > 1.8e19)
      cli_usage(opt, "expected a non-negative integer, got '%s'", s);
    v = (unsigned long long)d;
  }
  return (uint64_t)v;
}

size_t cli_size(const char *opt, const char *s, size_t min) {
  uint64_t v = cli_u64(opt, s);
  if (v < min) cli_usage(opt, "must be at least %zu, got '%s'", min, s);
  if (v > (uint64_t)SIZE_MAX) cli_usage(opt, "too large: '%s'", s);
  return (size_t)v;
}

double *cli_list(const char *opt, const char *s, size_t *n) {
  size_t cap = 1;
  for (const char *c = s; *c; c++) cap += (*c == ',');
  double *v = malloc(cap * sizeof *v);
  char *copy = strdup(s);
  if (!v || !copy) cli_die(EXIT_RUNTIME, "out of memory");
  size_t k = 0;
  char *tok = copy;
  for (size_t i = 0; i < cap; i++) {
    char *comma = strchr(tok, ',');
    if (comma) *comma = '\0';
    if (*tok == '\0') cli_usage(opt, "empty entry %zu in list '%s'", i + 1, s);
    char *end;
    double d = strtod(tok, &end);
    if (end == tok || *end != '\0') cli_usage(opt, "entry %zu is not a number: '%s'", i + 1, tok);
    if (!isfinite(d)) cli_usage(opt, "entry %zu must be finite: '%s'", i + 1, tok);
    v[k++] = d;
    tok = comma ? comma + 1 : tok + strlen(tok);
  }
  free(copy);
  *n = k;
  return v;
}

double *cli_radii(const char *opt, const char *s, size_t D) {
  size_t nr;
  double *r = cli_list(opt, s, &nr);
  if (nr != 1 && nr != D) cli_usage(opt, "expected 1 or D = %zu values, got %zu", D, nr);
  double *R = malloc(D * sizeof *R);
  if (!R) cli_die(EXIT_RUNTIME, "out of memory");
  for (size_t j = 0; j < D; j++) {
    R[j] = r[nr == 1 ? 0 : j];
    if (!(R[j] > 0)) cli_usage(opt, "radius must be > 0, got %g (axis %zu)", R[j], j + 1);
  }
  free(r);
  return R;
}

double *cli_bandwidth(const char *opt, const char *s, size_t D, size_t N, const double *data,
                      const double *weights) {
  double *H = calloc(D * D, sizeof *H);
  if (!H) cli_die(EXIT_RUNTIME, "out of memory");
  if (strcmp(s, "scott") == 0 || strcmp(s, "silverman") == 0) {
    if (!data) cli_usage(opt, "the '%s' rule needs data; give bandwidths", s);
    cli_check(gfi_bandwidth_rule(s, N, D, data, weights, H), "bandwidth rule");
    return H;
  }
  size_t nb;
  double *b = cli_list(opt, s, &nb);
  if (nb == 1 || nb == D) {
    for (size_t j = 0; j < D; j++) {
      double h = b[nb == 1 ? 0 : j];
      if (!(h > 0)) cli_usage(opt, "bandwidth must be > 0, got %g", h);
      H[j * D + j] = h * h;
    }
  } else if (nb == D * D) {
    memcpy(H, b, D * D * sizeof *H);
  } else {
    cli_usage(opt, "expected 1, D = %zu or D*D = %zu values, got %zu", D, D * D, nb);
  }
  free(b);
  return H;
}

void cli_phi(const char *opt, const char *s, gfi_kernel *k) {
  if (strncmp(s, "pow:", 4) != 0)
    cli_usage(opt, "unknown phi '%s' (expected pow:L with L = 1..8)", s);
  char *end;
  long l = strtol(s + 4, &end, 10);
  if (end == s + 4 || *end != '\0')
    cli_usage(opt, "pow:L needs an integer L, got '%s'", s + 4);
  if (l < 1 || l > 8) cli_usage(opt, "power l must be in 1..8, got %ld", l);
  int st = gfi_kernel_pow(k, (int)l);
  if (st) cli_usage(opt, "%s", gfi_strerror(st));
}

gfi_model *cli_model(const char *spec, size_t D) {
  gfi_model *m = NULL;
  gfi_errinfo err;
  gfi_errinfo_clear(&err);
  int st = gfi_model_parse(&m, spec, D, &err);
  if (st) {
    if (st == GFI_ENOMEM) cli_die(EXIT_RUNTIME, "out of memory");
    cli_usage("--model", "%s", err.msg[0] ? err.msg : gfi_strerror(st));
  }
  return m;
}

double *cli_read_table(const char *what, const char *path, size_t cols, size_t *rows, size_t *ncols) {
  gfi_errinfo err;
  double *data = NULL;
  size_t nc = 0;
  int st = gfi_table_read(path, cols, rows, &nc, &data, &err);
  if (st) {
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (err.line && err.column)
      cli_die(EXIT_RUNTIME, "%s %s:%zu:%zu: %s", what, name, err.line, err.column, err.msg);
    else if (err.line && st != GFI_EEMPTY)
      cli_die(EXIT_RUNTIME, "%s %s:%zu: %s", what, name, err.line, err.msg);
    else
      cli_die(EXIT_RUNTIME, "%s %s: %s", what, name, err.msg[0] ? err.msg : gfi_strerror(st));
  }
  if (ncols) *ncols = nc;
  return data;
}

void cli_header(FILE *f) {
  char program[64];
  snprintf(program, sizeof program, "gfi %s", cli_cmd);
  gfi_dat_header(f, program, cli_argc, cli_argv);
}

void cli_meta(FILE *f, const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(f, "# %s: ", key);
  vfprintf(f, fmt, ap);
  fputc('\n', f);
  va_end(ap);
}

void cli_columns(FILE *f, size_t D, const char *extra) {
  fputc('#', f);
  for (size_t j = 0; j < D; j++) fprintf(f, " x%zu", j + 1);
  if (extra && *extra) fprintf(f, " %s", extra);
  fputc('\n', f);
}

void cli_check(int status, const char *what) {
  if (status != GFI_OK) cli_die(EXIT_RUNTIME, "%s: %s", what, gfi_strerror(status));
}

void cli_write_points(FILE *f, size_t M, size_t D, const double *x, const double *v) {
  for (size_t i = 0; i < M; i++) {
    for (size_t j = 0; j < D; j++) {
      gfi_table_put(f, x[i * D + j]);
      fputc(' ', f);
    }
    gfi_table_put(f, v[i]);
    fputc('\n', f);
  }
}

int cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }
