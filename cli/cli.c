/* Shared helpers of the gfi command-line front end. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "alloc.h"
#include "chol.h"
#include "cli_guard.h"
#include "cli_mpi.h"

const char *cli_cmd = "gfi";
int cli_argc = 0;
char **cli_argv = NULL;

/* "gfi CMD: " (with the rank under MPI) and the formatted text, into buf. */
static void vmsg(char *buf, size_t n, const char *opt, const char *fmt, va_list ap) {
  int k;
  if (strcmp(cli_cmd, "gfi") == 0) /* before a command was chosen */
    k = snprintf(buf, n, "gfi: ");
  else if (cli_mpi_size() > 1)
    k = snprintf(buf, n, "gfi %s (rank %d of %d): ", cli_cmd, cli_mpi_rank(), cli_mpi_size());
  else
    k = snprintf(buf, n, "gfi %s: ", cli_cmd);
  if (k < 0 || (size_t)k >= n) k = 0;
  if (opt) {
    int j = snprintf(buf + k, n - (size_t)k, "%s: ", opt);
    if (j > 0 && (size_t)j < n - (size_t)k) k += j;
  }
  vsnprintf(buf + k, n - (size_t)k, fmt, ap);
}

#define MSG_MAX 4096

void cli_die(int code, const char *fmt, ...) {
  char buf[MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vmsg(buf, sizeof buf - 2, NULL, fmt, ap);
  va_end(ap);
  strcat(buf, "\n");
  cli_mpi_fail(code, buf); /* under MPI: said once, and every rank is stopped */
}

void cli_usage(const char *opt, const char *fmt, ...) {
  /* Under MPI a usage error is not assumed to be every rank's: one found on
   * a single rank (its slab of the data, its own arguments) must stop the job
   * too, not leave the other ranks waiting for it (cli_mpi_fail). */
  char buf[MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vmsg(buf, sizeof buf - 64, opt, fmt, ap);
  va_end(ap);
  size_t k = strlen(buf);
  snprintf(buf + k, sizeof buf - k, " (see 'gfi %s --help')\n", cli_cmd);
  cli_mpi_fail(EXIT_USAGE, buf);
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
  double *v = gfi_malloc2(cap, sizeof *v);
  char *copy = strdup(s);
  if (!v || !copy) cli_die(EXIT_RUNTIME, "%s: out of memory for a list of %zu values", opt, cap);
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
  double *R = gfi_malloc2(D, sizeof *R);
  if (!R) cli_die(EXIT_RUNTIME, "%s: out of memory for %zu radii", opt, D);
  for (size_t j = 0; j < D; j++) {
    R[j] = r[nr == 1 ? 0 : j];
    if (!(R[j] > 0)) cli_usage(opt, "radius must be > 0, got %g (axis %zu)", R[j], j + 1);
  }
  free(r);
  return R;
}

double *cli_bandwidth(const char *opt, const char *s, size_t D, size_t N, const double *data,
                      const double *weights) {
  double *H = gfi_calloc4(D, D, 1, sizeof *H);
  if (!H) cli_die(EXIT_RUNTIME, "%s: out of memory for a %zu x %zu bandwidth matrix", opt, D, D);
  if (strcmp(s, "scott") == 0 || strcmp(s, "silverman") == 0) {
    if (!data) cli_usage(opt, "the '%s' rule needs data; give bandwidths", s);
    int st = gfi_bandwidth_rule(s, N, D, data, weights, H);
    if (st == GFI_EBANDWIDTH)
      cli_die(EXIT_RUNTIME, "%s %s: the data do not spread along every axis (identical points, or points on a "
              "line or plane): the rule's bandwidth matrix is singular; give the bandwidth (--bandwidth h)", opt, s);
    if (st == GFI_ERANGE)
      cli_die(EXIT_RUNTIME, "%s %s: the data's covariance overflows a double (values too large for the rule, "
              "beyond about 1e154): rescale the data, or give the bandwidth (--bandwidth h)", opt, s);
    cli_check(st, "bandwidth rule");
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
    for (size_t i = 0; i < D; i++)
      for (size_t j = i + 1; j < D; j++)
        if (!(fabs(H[i * D + j] - H[j * D + i]) <= 1e-12 * (fabs(H[i * D + j]) + fabs(H[j * D + i]))))
          cli_usage(opt, "the matrix H must be symmetric: entry (%zu,%zu) = %g but (%zu,%zu) = %g", i + 1,
                    j + 1, H[i * D + j], j + 1, i + 1, H[j * D + i]);
    /* Cholesky (chol.h): a non-positive pivot names the leading minor that fails */
    double *L = cli_array(D, D, sizeof *L);
    size_t j;
    if (chol_lower_rel(D, H, L, 0.0, &j))
      cli_usage(opt, "the matrix H must be positive definite: its leading %zu x %zu minor is not", j + 1, j + 1);
    free(L);
  } else {
    cli_usage(opt, "expected 1, D = %zu or D*D = %zu values, got %zu", D, D * D, nb);
  }
  free(b);
  return H;
}

/* pow:L or poly:a1,..,ad (gfi_kernel_parse). */
void cli_phi(const char *opt, const char *s, gfi_kernel *k) {
  gfi_errinfo err;
  if (gfi_kernel_parse(k, s, &err)) cli_usage(opt, "%s", err.msg);
}

gfi_model *cli_model(const char *spec, size_t D) {
  gfi_model *m = NULL;
  gfi_errinfo err;
  gfi_errinfo_clear(&err);
  int st = gfi_model_parse(&m, spec, D, &err);
  if (st) {
    if (st == GFI_ENOMEM) cli_die(EXIT_RUNTIME, "--model: out of memory parsing '%s' in %zu dimension(s)", spec, D);
    cli_usage("--model", "%s", err.msg[0] ? err.msg : gfi_strerror(st));
  }
  return m;
}

/* .npy: by the suffix or by the first byte (0x93, the magic, which no text
 * table starts with). The file is opened once and that byte put back, so that
 * a pipe or a FIFO given by name ("<(...)", /dev/stdin) is read whole, not
 * sniffed away. */
double *cli_read_table(const char *what, const char *path, size_t cols, size_t *rows, size_t *ncols) {
  gfi_errinfo err;
  double *data = NULL;
  size_t nc = 0;
  int use_stdin = strcmp(path, "-") == 0;
  const char *name = use_stdin ? "<stdin>" : path;
  FILE *f = use_stdin ? stdin : fopen(path, "rb");
  int npy = cli_is_npy_path(path);
  if (!f) cli_die(EXIT_RUNTIME, "%s %s: %s%s", what, name, npy ? "" : "cannot open: ", strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode))
    cli_die(EXIT_RUNTIME, "%s %s: is a directory, not a file", what, name);
  int c = getc(f);
  if (c != EOF) ungetc(c, f);
  if (npy || c == 0x93) {
    int st = gfi_npy_read_stream(f, cols, rows, &nc, &data, &err);
    if (!use_stdin) fclose(f);
    if (st) cli_die(EXIT_RUNTIME, "%s %s: %s", what, name, err.msg[0] ? err.msg : gfi_strerror(st));
    if (*rows == 0) cli_die(EXIT_RUNTIME, "%s %s: no data rows (shape (0, %zu))", what, name, nc);
    for (size_t i = 0; i < *rows * nc; i++)
      if (!isfinite(data[i]))
        cli_die(EXIT_RUNTIME, "%s %s: row %zu, column %zu: value is NaN or infinite", what, name, i / nc + 1,
                i % nc + 1);
  } else {
    int st = gfi_table_read_stream(f, cols, rows, &nc, &data, &err);
    if (!use_stdin) fclose(f);
    if (st) {
      if (err.line && err.column)
        cli_die(EXIT_RUNTIME, "%s %s:%zu:%zu: %s", what, name, err.line, err.column, err.msg);
      else if (err.line && st != GFI_EEMPTY)
        cli_die(EXIT_RUNTIME, "%s %s:%zu: %s", what, name, err.line, err.msg);
      else
        cli_die(EXIT_RUNTIME, "%s %s: %s", what, name, err.msg[0] ? err.msg : gfi_strerror(st));
    }
  }
  if (ncols) *ncols = nc;
  return data;
}

int cli_is_npy_path(const char *path) {
  size_t n = path ? strlen(path) : 0;
  return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}

void cli_check_npy_table(int npy_table, const char *out) {
  if (npy_table && !cli_is_npy_path(out))
    cli_usage("--npy-table", "goes with --out FILE.npy, got %s%s%s (a text output always holds the x columns)",
              out ? "--out " : "no --out", out ? out : "", "");
}

void cli_output_open(cli_output *o, const char *path) {
  o->path = path && strcmp(path, "-") != 0 ? path : NULL;
  o->npy = cli_is_npy_path(o->path);
  o->f = stdout;
  o->tmp = NULL;
  if (path && !path[0]) cli_check_out_name("--out", path);
  if (o->path && !o->npy) {
    o->f = cli_atomic_fopen("--out", o->path, &o->tmp);
    o->f = cli_guard_file(o->f, o->path);
  } else if (o->path) {
    o->tmp = cli_atomic_begin("--out", o->path);
  }
}

void cli_output_rows(cli_output *o, size_t M, size_t D, const double *x, size_t k, const double *v, int points) {
  if (!o->npy) {
    for (size_t i = 0; i < M; i++) {
      for (size_t j = 0; j < D + k; j++) {
        if (j) fputc(' ', o->f);
        gfi_table_put(o->f, j < D ? x[i * D + j] : v[i * k + j - D]);
      }
      fputc('\n', o->f);
    }
    return;
  }
  for (size_t i = 0; i < M * D; i++)
    if (!isfinite(x[i]))
      cli_die(EXIT_RUNTIME, "--out %s: row %zu, x%zu is not finite (the computation overflowed; nothing written)",
              o->path, i / D + 1, i % D + 1);
  for (size_t i = 0; i < M * k; i++)
    if (isinf(v[i]) || (isnan(v[i]) && !cli_guard_nan_allowed()))
      cli_die(EXIT_RUNTIME, "--out %s: row %zu, value column %zu is %s (the computation overflowed for these "
              "inputs; nothing written)", o->path, i / k + 1, i % k + 1, isnan(v[i]) ? "NaN" : "infinite");
  gfi_errinfo err;
  int st;
  if (!points && k) {
    st = gfi_npy_write(o->tmp, M, k, k == 1 ? 1 : 2, v, &err);
  } else {
    size_t c = D + k;
    double *t = cli_array(M, c, sizeof *t);
    for (size_t i = 0; i < M; i++)
      for (size_t j = 0; j < c; j++) t[i * c + j] = j < D ? x[i * D + j] : v[i * k + j - D];
    st = gfi_npy_write(o->tmp, M, c, 2, t, &err);
    free(t);
  }
  if (st) cli_die(EXIT_RUNTIME, "--out %s: %s", o->path, err.msg[0] ? err.msg : gfi_strerror(st));
}

void cli_output_meta(cli_output *o, size_t M, size_t D, size_t k, int points) {
  if (!o->npy) return;
  char shape[64];
  if (!points && k == 1)
    snprintf(shape, sizeof shape, "(%zu,)", M);
  else
    snprintf(shape, sizeof shape, "(%zu, %zu)", M, !points && k ? k : D + k);
  cli_meta(o->f, "out", "%s: float64 array of shape %s, %s", o->path, shape,
           !points && k ? "the value columns named below (without the x columns)" : "the columns named below");
}

void cli_output_close(cli_output *o) {
  if (o->f != stdout) cli_finish_output(o->f, o->path);
  if (o->tmp) cli_atomic_commit("--out", o->tmp);
  o->tmp = NULL;
  cli_finish_output(stdout, "standard output");
}

/* ---- declarative options ---- */

/* The parsed table: per option its count and, grouped by option in
 * command-line order, the given arguments (vals[off[k] .. off[k] + count[k])). */
static const cli_spec *g_spec;
static size_t g_nopts;
static int *g_count;
static size_t *g_off;
static const char **g_vals;

static size_t opt_index(const char *name) {
  for (size_t k = 0; k < g_nopts; k++)
    if (strcmp(g_spec->opts[k].name, name) == 0) return k;
  cli_die(EXIT_RUNTIME, "internal error: no option --%s in this command's table", name);
}

static void convert(const cli_opt *o, const char *opt, const char *arg) {
  switch (o->kind) {
    case CLI_FLAG: if (o->dst) *(int *)o->dst = 1; break;
    case CLI_STR:
      /* a file, folder or prefix given as '' (an unset shell variable) */
      if (!arg[0] && o->arg && (strstr(o->arg, "FILE") || strstr(o->arg, "DIR") || strstr(o->arg, "PREFIX")))
        cli_usage(opt, "the %s name is empty", strstr(o->arg, "DIR") ? "folder" : "file");
      if (o->dst) *(const char **)o->dst = arg;
      break;
    case CLI_SIZE: {
      size_t v = cli_size(opt, arg, o->min);
      double max = o->max > 0 ? o->max : CLI_COUNT_MAX;
      if ((double)v > max) cli_usage(opt, "%s is above the budget of %.3g (docs/robustness.md)", arg, max);
      *(size_t *)o->dst = v;
      break;
    }
    case CLI_INT: {
      size_t v = cli_size(opt, arg, o->min);
      if (v > INT_MAX) cli_usage(opt, "too large: '%s'", arg);
      *(int *)o->dst = (int)v;
      break;
    }
    case CLI_U64: *(uint64_t *)o->dst = cli_u64(opt, arg); break;
    case CLI_DOUBLE: *(double *)o->dst = cli_double(opt, arg); break;
    case CLI_POSITIVE: *(double *)o->dst = cli_positive(opt, arg); break;
    case CLI_CUSTOM: o->parse(opt, arg, o->dst); return;
  }
  if (o->parse) o->parse(opt, arg, o->dst);
}

int cli_parse(const cli_spec *spec, int argc, char **argv) {
  size_t n = 0;
  while (spec->opts[n].name) n++;
  size_t na = argc > 1 ? (size_t)argc : 1;
  int *count = calloc(n + 1, sizeof *count);
  size_t *off = calloc(n + 1, sizeof *off), *which = gfi_malloc2(na, sizeof *which);
  const char **given = gfi_malloc2(na, sizeof *given), **vals = gfi_malloc2(na, sizeof *vals);
  if (!count || !off || !which || !given || !vals)
    cli_die(EXIT_RUNTIME, "out of memory for %zu command-line arguments", na);
  g_spec = spec;
  g_nopts = n;
  size_t ng = 0;
  char opt[96];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      cli_guard_level(2); /* prose */
      cli_help(stdout, spec);
      cli_finish_output(stdout, "standard output");
      free(count), free(off), free(which), free(given), free(vals);
      return 1;
    }
    if (a[0] != '-' || a[1] == '\0') cli_usage(a, "unexpected argument");
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    size_t k = n;
    if (a[1] == '-' && len > 2)
      for (k = 0; k < n; k++)
        if (strlen(spec->opts[k].name) == len - 2 && strncmp(spec->opts[k].name, a + 2, len - 2) == 0) break;
    snprintf(opt, sizeof opt, "%.*s", (int)(len < 80 ? len : 80), a);
    if (k == n) cli_usage(opt, "unknown option");
    const cli_opt *o = &spec->opts[k];
    const char *val = "";
    if (o->kind == CLI_FLAG) {
      if (eq) cli_usage(opt, "takes no value");
    } else if (eq) {
      val = eq + 1;
    } else {
      if (i + 1 >= argc) cli_usage(opt, "missing value");
      val = argv[++i];
    }
    if (count[k] && !(o->flags & CLI_MULTI)) cli_usage(opt, "given twice");
    count[k]++;
    convert(o, opt, val);
    which[ng] = k;
    given[ng++] = val;
  }
  for (size_t k = 0; k < n; k++) {
    const cli_opt *o = &spec->opts[k];
    if (count[k]) continue;
    if (o->kind == CLI_FLAG) {
      if (o->dst) *(int *)o->dst = 0;
    } else if (o->def) {
      snprintf(opt, sizeof opt, "--%s", o->name);
      convert(o, opt, o->def);
    }
  }
  for (size_t k = 1; k <= n; k++) off[k] = off[k - 1] + (size_t)count[k - 1];
  size_t *fill = calloc(n + 1, sizeof *fill);
  if (!fill) cli_die(EXIT_RUNTIME, "out of memory for %zu command-line arguments", na);
  for (size_t j = 0; j < ng; j++) vals[off[which[j]] + fill[which[j]]++] = given[j];
  free(fill);
  free(which);
  free(given);
  free(g_count), free(g_off), free(g_vals);
  g_count = count, g_off = off, g_vals = vals;
  return 0;
}

int cli_given(const char *name) { return g_count[opt_index(name)]; }

const char *const *cli_values(const char *name, size_t *n) {
  size_t k = opt_index(name);
  *n = (size_t)g_count[k];
  return g_vals + g_off[k];
}

/* Text with '\n' continuation lines indented to the help column. */
static void put_indented(FILE *f, const char *s, int col) {
  for (; *s; s++) {
    fputc(*s, f);
    if (*s == '\n' && s[1]) fprintf(f, "%*s", col, "");
  }
}

#define HELP_COL 20

void cli_help(FILE *f, const cli_spec *spec) {
  fputs(spec->usage, f);
  const cli_opt *o = spec->opts;
  if (o->name && !o->section) fputs("\noptions:\n", f);
  for (; o->name; o++) {
    if (o->section) fprintf(f, "\n%s:\n", o->section);
    char left[96];
    if (o->kind == CLI_FLAG)
      snprintf(left, sizeof left, "--%s", o->name);
    else
      snprintf(left, sizeof left, "--%s %s", o->name, o->arg ? o->arg : "X");
    int w = fprintf(f, "  %s", left);
    if (w >= HELP_COL) fprintf(f, "\n%*s", HELP_COL, "");
    else fprintf(f, "%*s", HELP_COL - w, "");
    put_indented(f, o->help ? o->help : "", HELP_COL);
    if (o->def) fprintf(f, " (default %s)", o->def);
    if (o->flags & CLI_MULTI) fputs(" (repeatable)", f);
    fputc('\n', f);
  }
  fprintf(f, "  %-*s%s\n", HELP_COL - 2, "-h, --help", "print this help");
  if (spec->epilog) {
    fputc('\n', f);
    fputs(spec->epilog, f);
  }
}

/* A value on one metadata line: control characters become '?'. */
static void put_value(FILE *f, const char *s) {
  for (; *s; s++) fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
}

/* Values of options not given that the command settled itself (e.g. --dim
 * from a file's columns): shown in the header instead of the default. */
static struct {
  const char *name;
  char text[96];
} g_settled[4];
static size_t g_nsettled;

void cli_header_settled(const char *name, const char *fmt, ...) {
  size_t i = 0;
  while (i < g_nsettled && strcmp(g_settled[i].name, name)) i++;
  if (i == sizeof g_settled / sizeof g_settled[0]) return;
  if (i == g_nsettled) g_nsettled++;
  g_settled[i].name = name;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_settled[i].text, sizeof g_settled[i].text, fmt, ap);
  va_end(ap);
}

static const char *settled(const char *name) {
  for (size_t i = 0; i < g_nsettled; i++)
    if (!strcmp(g_settled[i].name, name)) return g_settled[i].text;
  return NULL;
}

void cli_header(FILE *f) {
  char program[64];
  snprintf(program, sizeof program, "gfi %s", cli_cmd);
  gfi_dat_header(f, program, cli_argc, cli_argv);
  if (!g_spec) return;
  for (size_t k = 0; k < g_nopts; k++) {
    const cli_opt *o = &g_spec->opts[k];
    if (o->kind == CLI_FLAG) {
      fprintf(f, "# --%s: %s\n", o->name, g_count[k] ? "on" : "off (default)");
    } else if (g_count[k]) {
      for (int j = 0; j < g_count[k]; j++) {
        fprintf(f, "# --%s: ", o->name);
        put_value(f, g_vals[g_off[k] + (size_t)j]);
        fputc('\n', f);
      }
    } else if (settled(o->name)) {
      fprintf(f, "# --%s: ", o->name);
      put_value(f, settled(o->name));
      fputc('\n', f);
    } else if (o->def) {
      fprintf(f, "# --%s: ", o->name);
      put_value(f, o->def);
      fputs(" (default)\n", f);
    } else {
      fprintf(f, "# --%s: (not given)\n", o->name);
    }
  }
}

void cli_check_phase_rows(const char *what, size_t row0, size_t n, size_t D, const double *x, const double *R) {
  for (size_t i = 0; i < n * D; i++)
    if (!(fabs(R[i % D] * x[i]) <= 4503599627370496.0))
      cli_usage("--R", "R_%zu * x = %g * %g = %g at %s row %zu, column %zu exceeds 2^52 (the phase R x would "
                "not be resolved): lower --R or rescale the data", i % D + 1, R[i % D], x[i], R[i % D] * x[i],
                what, row0 + i / D + 1, i % D + 1);
}

void cli_check_phase(const char *what, size_t n, size_t D, const double *x, const double *R) {
  cli_check_phase_rows(what, 0, n, D, x, R);
}

void cli_require_finite(const char *what, size_t rows, size_t cols, const double *v) {
  for (size_t i = 0; i < rows * cols; i++)
    if (!isfinite(v[i]))
      cli_die(EXIT_RUNTIME, "%s: row %zu, column %zu is %s (the computation overflowed; nothing written)",
              what, i / cols + 1, i % cols + 1, isnan(v[i]) ? "NaN" : "infinite");
}

void cli_budget(const char *opt, double a, double b, const char *what) {
  if (!(a * b <= CLI_MAX_VALUES))
    cli_usage(opt, "%.3g %s = %.3g values, above the budget of %.3g values (docs/robustness.md)", a, what,
              a * b, CLI_MAX_VALUES);
}

void *cli_array_for(const char *opt, const char *what, size_t a, size_t b, size_t size) {
  size_t n;
  void *p = gfi_size_prod(&n, a, b, size, 1) ? NULL : malloc(n ? n : 1);
  if (!p) cli_die(EXIT_RUNTIME, "%s: out of memory for %zu x %zu values (%s); lower %s", opt, a, b, what, opt);
  return p;
}

void *cli_array(size_t a, size_t b, size_t size) {
  size_t n;
  void *p = gfi_size_prod(&n, a, b, size, 1) ? NULL : malloc(n ? n : 1);
  if (!p) cli_die(EXIT_RUNTIME, "out of memory for %zu x %zu values", a, b);
  return p;
}

void cli_flush(FILE *f, const char *what) {
  errno = 0;
  if (fflush(f) != 0) cli_die(EXIT_RUNTIME, "writing %s: %s", what, strerror(errno ? errno : EIO));
  const char *nf = cli_guard_tripped();
  if (nf) cli_die(EXIT_RUNTIME, "%s", nf);
}

static int g_stdout_closed;
int cli_stdout_closed(void) { return g_stdout_closed; }

void cli_finish_output(FILE *f, const char *what) {
  if (f == stdout) {
    if (g_stdout_closed) return;
    g_stdout_closed = 1;
  }
  errno = 0;
  int bad = fflush(f) != 0;
  int err = errno;
  const char *nf = cli_guard_tripped();
  if (nf) cli_die(EXIT_RUNTIME, "%s", nf);
  bad |= ferror(f) != 0;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (bad && !err) err = cli_guard_errno();
  if (bad && err) cli_die(EXIT_RUNTIME, "writing %s: %s", what, strerror(err));
  if (bad) cli_die(EXIT_RUNTIME, "writing %s: a write failed", what);
}

void cli_columns(FILE *f, size_t D, const char *extra) {
  fputc('#', f);
  for (size_t j = 0; j < D; j++) fprintf(f, " x%zu", j + 1);
  if (extra && *extra) fprintf(f, " %s", extra);
  fputc('\n', f);
}

void cli_meta_values(FILE *f, const char *key, const char *prefix, size_t n, const double *v) {
  fprintf(f, "# %s:%s%s", key, *prefix ? " " : "", prefix);
  for (size_t j = 0; j < n; j++) fprintf(f, " %.17g", v[j]);
  fputc('\n', f);
}

void cli_check_tol(const char *opt, const char *arg, void *dst) {
  gfi_opts o; /* the library's rule (gfi_opts_check); CLI_POSITIVE already refused 0 */
  gfi_default_opts(&o);
  o.tol = *(double *)dst;
  int st = gfi_opts_check(&o);
  if (st) {
    gfi_error_param(st);
    cli_usage(opt, "must be in (0, 1), got '%s'", arg);
  }
}

void cli_check(int status, const char *what) {
  if (status == GFI_OK) return;
  const char *param = gfi_error_param(status); /* the library's name of the parameter at fault */
  if (*param) cli_die(EXIT_RUNTIME, "%s: %s (parameter %s)", what, gfi_strerror(status), param);
  cli_die(EXIT_RUNTIME, "%s: %s", what, gfi_strerror(status));
}

void cli_check_size(int status, const char *what, const char *size, const char *mem_hint, const char *rule_hint) {
  if (status == GFI_ENOMEM)
    cli_die(EXIT_RUNTIME, "%s: out of memory for %s; lower %s", what, size, mem_hint);
  if ((status == GFI_EUNSUPPORTED || status == GFI_ERANGE) && rule_hint)
    cli_die(EXIT_RUNTIME, "%s: %s needs a quadrature rule or table too large to build; lower %s", what, size,
            rule_hint);
  cli_check(status, what);
}

int cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }
