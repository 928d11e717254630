/* Numeric text tables: reading with exact error positions, writing with 17
 * significant digits. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/table.h"
#include "alloc.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

static int fail(gfi_errinfo *err, int status, size_t line, size_t col, const char *fmt,
                const char *tok) {
  if (err) {
    err->line = line;
    err->column = col;
    if (tok) {
      /* quote at most 40 characters of the offending token */
      snprintf(err->msg, sizeof err->msg, fmt, 40, tok);
    } else {
      snprintf(err->msg, sizeof err->msg, "%s", fmt);
    }
  }
  return status;
}

/* One line into *buf (NUL-terminated, the newline kept), at most
 * GFI_TABLE_MAX_LINE bytes: an endless line (/dev/zero, a binary file) is
 * refused once it passes the limit, not read into memory whole. Returns the
 * length, -1 at end of input, -2 when the line is too long, -3 at a NUL byte
 * (*where = its 1-based byte position), -4 when out of memory. */
static long read_line(FILE *f, char **buf, size_t *cap, size_t *where) {
  size_t n = 0;
  int c = EOF;
  flockfile(f);
  while ((c = getc_unlocked(f)) != EOF) {
    if (c == '\0') {
      *where = n + 1;
      funlockfile(f);
      return -3;
    }
    if (n + 2 > *cap) {
      if (*cap >= GFI_TABLE_MAX_LINE) {
        funlockfile(f);
        return -2;
      }
      size_t nc = *cap ? 2 * *cap : 256;
      if (nc > GFI_TABLE_MAX_LINE) nc = GFI_TABLE_MAX_LINE;
      char *p = realloc(*buf, nc);
      if (!p) {
        funlockfile(f);
        return -4;
      }
      *buf = p;
      *cap = nc;
    }
    (*buf)[n++] = (char)c;
    if (c == '\n') break;
  }
  funlockfile(f);
  if (n == 0 && c == EOF) return -1;
  (*buf)[n] = '\0';
  return (long)n;
}

int gfi_table_read_stream(FILE *f, size_t ncols_expected, size_t *rows, size_t *cols,
                          double **data, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!f || !rows || !cols || !data) return GFI_EINVAL;
  *rows = 0;
  *cols = 0;
  *data = NULL;
  size_t cap = 0, n = 0, ncols = ncols_expected, lineno = 0;
  double *buf = NULL;
  char *line = NULL;
  size_t linecap = 0;
  long len;
  size_t where = 0;
  int status = GFI_OK;
  errno = 0;
  while ((len = read_line(f, &line, &linecap, &where)) != -1) {
    lineno++;
    if (len == -2) {
      char msg[96];
      snprintf(msg, sizeof msg, "line longer than %d bytes (not a text table?)", GFI_TABLE_MAX_LINE);
      status = fail(err, GFI_EPARSE, lineno, 0, msg, NULL);
      goto out;
    }
    if (len == -3) {
      char msg[96];
      snprintf(msg, sizeof msg, "NUL byte at byte %zu of the line (binary file?)", where);
      status = fail(err, GFI_EPARSE, lineno, 0, msg, NULL);
      goto out;
    }
    if (len == -4) {
      status = fail(err, GFI_ENOMEM, lineno, 0, "out of memory for one line", NULL);
      goto out;
    }
    char *p = line;
    /* a carriage return followed by more text: lines ended by CR alone
     * (classic Mac OS) would read as one long row */
    for (char *q = strchr(line, '\r'); q; q = strchr(q + 1, '\r')) {
      char *r = q;
      while (*r && is_space(*r)) r++;
      if (*r) {
        char msg[160];
        snprintf(msg, sizeof msg, "a carriage return at byte %zu is followed by more text on the line (lines "
                 "ended by CR alone?): end lines with a newline", (size_t)(q - line) + 1);
        status = fail(err, GFI_EPARSE, lineno, 0, msg, NULL);
        goto out;
      }
    }
    while (*p && is_space(*p)) p++;
    if (*p == '\0' || *p == '#') continue; /* blank or comment */
    size_t field = 0;
    size_t row_start = n;
    while (*p) {
      while (*p && is_space(*p)) p++;
      if (!*p) break;
      char *tok = p;
      while (*p && !is_space(*p)) p++;
      char saved = *p;
      *p = '\0';
      field++;
      if (ncols && field > ncols) {
        char msg[96];
        snprintf(msg, sizeof msg, "too many columns: expected %zu, found more starting at '%%.*s'", ncols);
        status = fail(err, GFI_EPARSE, lineno, field, msg, tok);
        goto out;
      }
      char *end;
      errno = 0;
      double v = strtod(tok, &end);
      if (end == tok || *end != '\0') {
        status = fail(err, GFI_EPARSE, lineno, field, "not a number: '%.*s'", tok);
        goto out;
      }
      if (!isfinite(v)) {
        status = fail(err, GFI_ENONFINITE, lineno, field,
                      "value is NaN or infinite (or overflows double): '%.*s'", tok);
        goto out;
      }
      if (n == cap) {
        size_t ncap = cap ? 2 * cap : 1024;
        double *nb = gfi_realloc2(buf, ncap, sizeof *nb);
        if (!nb) {
          char msg[96];
          snprintf(msg, sizeof msg, "out of memory growing the table to %zu values (%zu MiB)", ncap,
                   ncap / (1024 * 1024 / sizeof(double)));
          status = fail(err, GFI_ENOMEM, lineno, field, msg, NULL);
          goto out;
        }
        buf = nb;
        cap = ncap;
      }
      buf[n++] = v;
      *p = saved;
    }
    if (!ncols) ncols = field;
    if (field != ncols) {
      char msg[96];
      snprintf(msg, sizeof msg, "expected %zu columns, found %zu", ncols, field);
      status = fail(err, GFI_EPARSE, lineno, field + 1, msg, NULL);
      goto out;
    }
    (void)row_start;
    (*rows)++;
  }
  if (ferror(f)) {
    status = fail(err, GFI_EIO, lineno, 0, "read error", NULL);
    goto out;
  }
  if (*rows == 0) {
    status = fail(err, GFI_EEMPTY, lineno, 0, "no data rows (file is empty or only comments)", NULL);
    goto out;
  }
  *cols = ncols;
  *data = buf;
  buf = NULL;
out:
  if (status != GFI_OK) *rows = 0;
  free(buf);
  free(line);
  return status;
}

int gfi_table_read(const char *path, size_t ncols_expected, size_t *rows, size_t *cols,
                   double **data, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!path) return GFI_EINVAL;
  int use_stdin = strcmp(path, "-") == 0;
  FILE *f = use_stdin ? stdin : fopen(path, "r");
  if (!f) {
    if (err) snprintf(err->msg, sizeof err->msg, "cannot open: %s", strerror(errno));
    return GFI_EIO;
  }
  int st = gfi_table_read_stream(f, ncols_expected, rows, cols, data, err);
  if (!use_stdin) fclose(f);
  return st;
}

void gfi_table_put(FILE *f, double x) {
  if (isnan(x))
    fputs("nan", f);
  else if (isinf(x))
    fputs(x > 0 ? "inf" : "-inf", f);
  else
    fprintf(f, "%.17g", x);
}

void gfi_table_write_rows(FILE *f, size_t rows, size_t cols, const double *x) {
  for (size_t i = 0; i < rows; i++) {
    for (size_t j = 0; j < cols; j++) {
      if (j) fputc(' ', f);
      gfi_table_put(f, x[i * cols + j]);
    }
    fputc('\n', f);
  }
}
