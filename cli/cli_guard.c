/* The output guard (see cli_guard.h): standard output and the text files of
 * --out go through a stream that checks every row before it leaves. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli_guard.h"

typedef struct {
  FILE *f;          /* the guarded stream (what the command writes to) */
  FILE *real;       /* a file: where the checked lines go (NULL: fd) */
  int fd;           /* standard output: its descriptor */
  const char *what; /* "standard output" or the file's name */
  char *carry;      /* the last line, not yet complete */
  size_t n, cap;
  size_t line;      /* complete lines seen */
  int tripped;      /* a non-finite value was found: nothing more goes out */
} guard;

#define MAX_GUARDS 4
static guard g_guards[MAX_GUARDS];
static int g_level; /* 0: NaN and inf refused; 1: inf only; 2: nothing */
static char g_msg[512];

void cli_guard_level(int level) { g_level = level; }
int cli_guard_nan_allowed(void) { return g_level >= 1; }

/* Is the token [s, s + n) a number that is not finite ("nan", "-inf",
 * "Infinity", "nan(0x1)", ...)? Words that only begin like one ("info",
 * "nano") are not numbers. */
static int nonfinite_token(const char *s, size_t n, int *is_nan) {
  if (n == 0 || n > 48) return 0;
  const char *p = s;
  if (*p == '+' || *p == '-') p++;
  if (p == s + n || !strchr("nNiI", *p)) return 0;
  char tok[64];
  memcpy(tok, s, n);
  tok[n] = '\0';
  char *end;
  double v = strtod(tok, &end);
  if (*end || end == tok || isfinite(v)) return 0;
  *is_nan = isnan(v);
  return 1;
}

/* Check one complete line (without its newline); 0 = fine. */
static int check_line(guard *g, const char *s, size_t n) {
  if (g_level >= 2 || (n && s[0] == '#')) return 0; /* prose, or metadata: text, not values */
  size_t col = 0;
  for (size_t i = 0; i < n;) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ',' || s[i] == '\r')) i++;
    size_t b = i;
    while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != ',' && s[i] != '\r') i++;
    if (i == b) break;
    col++;
    int isn = 0;
    if (nonfinite_token(s + b, i - b, &isn) && !(isn && g_level >= 1)) {
      snprintf(g_msg, sizeof g_msg,
               "%s, line %zu, column %zu: the value '%.*s' is %s: the computation overflowed for these inputs "
               "(nothing from that line on was written); rescale the inputs or change the options",
               g->what, g->line + 1, col, (int)(i - b < 40 ? i - b : 40), s + b, isn ? "NaN" : "infinite");
      return 1;
    }
  }
  return 0;
}

static int g_errno; /* the first failed write's errno */
int cli_guard_errno(void) { return g_errno; }

static int put(guard *g, const char *s, size_t n) {
  if (g->real) {
    errno = 0;
    if (fwrite(s, 1, n, g->real) == n) return 0;
    if (!g_errno) g_errno = errno ? errno : EIO;
    return -1;
  }
  while (n) {
    ssize_t k = write(g->fd, s, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (!g_errno) g_errno = errno;
      return -1;
    }
    s += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Pass on the complete lines of carry (all of it when `all`). */
static int drain(guard *g, int all) {
  size_t start = 0;
  for (size_t i = 0; i < g->n && !g->tripped; i++) {
    if (g->carry[i] != '\n') continue;
    if (check_line(g, g->carry + start, i - start)) {
      g->tripped = 1;
      break;
    }
    g->line++;
    start = i + 1;
  }
  if (all && !g->tripped && start < g->n) {
    if (check_line(g, g->carry + start, g->n - start)) g->tripped = 1;
    else start = g->n;
  }
  int st = 0;
  if (start && put(g, g->carry, start)) st = -1;
  if (g->tripped) {
    g->n = 0;
  } else if (start) {
    if (g->n > start) memmove(g->carry, g->carry + start, g->n - start);
    g->n -= start;
  }
  return st;
}

static ssize_t gwrite(void *c, const char *buf, size_t size) {
  guard *g = c;
  if (g->tripped) return (ssize_t)size;
  if (g->n + size > g->cap) {
    size_t cap = g->cap ? g->cap : 1 << 16;
    while (cap < g->n + size) cap *= 2;
    char *p = realloc(g->carry, cap);
    if (!p) {
      errno = ENOMEM;
      return -1;
    }
    g->carry = p, g->cap = cap;
  }
  memcpy(g->carry + g->n, buf, size);
  g->n += size;
  return drain(g, 0) ? -1 : (ssize_t)size;
}

static int gclose(void *c) {
  guard *g = c;
  int st = drain(g, 1);
  if (g->real) {
    if (fflush(g->real)) st = -1;
    int e = errno;
    if (fclose(g->real)) st = -1;
    else errno = e;
  }
  free(g->carry);
  g->carry = NULL;
  g->n = g->cap = 0;
  g->f = NULL;
  return st ? EOF : 0;
}

static FILE *wrap(FILE *real, int fd, const char *what) {
  guard *g = NULL;
  for (int i = 0; i < MAX_GUARDS && !g; i++)
    if (!g_guards[i].f) g = g_guards + i;
  if (!g) return NULL;
  memset(g, 0, sizeof *g);
  g->real = real, g->fd = fd, g->what = what;
  cookie_io_functions_t io = {NULL, gwrite, NULL, gclose};
  FILE *f = fopencookie(g, "w", io);
  if (!f) return NULL;
  g->f = f;
  return f;
}

void cli_guard_stdout(void) {
  FILE *f = wrap(NULL, STDOUT_FILENO, "standard output");
  if (!f) return; /* unguarded: the checks at the sources still hold */
  setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, 1 << 16);
  stdout = f;
}

FILE *cli_guard_file(FILE *real, const char *what) {
  FILE *f = wrap(real, -1, what);
  return f ? f : real;
}

const char *cli_guard_tripped(void) {
  for (int i = 0; i < MAX_GUARDS; i++)
    if (g_guards[i].tripped) return g_msg;
  return g_msg[0] ? g_msg : NULL;
}
