/* NumPy .npy files of float64: a header (magic, version, the length of a
 * Python dict literal, the dict) followed by the raw values. Read and
 * written in blocks; every size product checked. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "gfi/npy.h"
#include "alloc.h"
#include "npy_internal.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define MAX_HEADER (1u << 20) /* no real header comes near this */
#define BLOCK 65536           /* values per fread/fwrite */

static int fail(gfi_errinfo *err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(gfi_errinfo *err, int status, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return status;
}

static int little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

static void swap8(double *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char b[8], t;
    memcpy(b, &x[i], 8);
    for (int k = 0; k < 4; k++) t = b[k], b[k] = b[7 - k], b[7 - k] = t;
    memcpy(&x[i], b, 8);
  }
}

/* ---- the header dict: {'descr': '<f8', 'fortran_order': False, 'shape': (N, C), } ---- */

typedef struct {
  const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int eat(cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A quoted Python string (no escapes in the keys and dtypes numpy writes). */
static int string(cursor *c, char *out, size_t cap) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    /* no escapes, no control characters (a NUL would cut the string short) */
    if (*c->p == '\\' || (unsigned char)*c->p < 0x20 || n + 1 >= cap) return 0;
    out[n++] = *c->p++;
  }
  if (c->p >= c->end) return 0;
  c->p++;
  out[n] = '\0';
  return 1;
}

static int word(cursor *c, const char *w) {
  skip_ws(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) >= n && strncmp(c->p, w, n) == 0) {
    c->p += n;
    return 1;
  }
  return 0;
}

/* (a,), (a, b), (), with an optional trailing comma; up to 8 entries. */
static int shape(cursor *c, size_t *dims, int *ndim) {
  if (!eat(c, '(')) return 0;
  *ndim = 0;
  for (;;) {
    if (eat(c, ')')) return 1;
    skip_ws(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return 0;
    size_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      size_t d = (size_t)(*c->p++ - '0');
      if (v > (SIZE_MAX - d) / 10) return -1; /* overflow */
      v = v * 10 + d;
    }
    if (*ndim == 8) return 0;
    dims[(*ndim)++] = v;
    if (!eat(c, ',')) return eat(c, ')');
  }
}

static void shape_text(char *buf, size_t cap, const size_t *dims, int ndim) {
  size_t n = (size_t)snprintf(buf, cap, "(");
  for (int k = 0; k < ndim && n < cap; k++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%zu", k ? ", " : "", dims[k]);
  if (n < cap) snprintf(buf + n, cap - n, ndim == 1 ? ",)" : ")");
}

static int parse_header(const char *h, size_t len, size_t *dims, int *ndim, char *descr, gfi_errinfo *err) {
  cursor c = {h, h + len};
  char key[32];
  descr[0] = '\0';
  int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
  if (!eat(&c, '{')) return fail(err, GFI_EPARSE, "malformed header: expected a '{...}' dict");
  for (;;) {
    if (eat(&c, '}')) break;
    if (!string(&c, key, sizeof key) || !eat(&c, ':'))
      return fail(err, GFI_EPARSE, "malformed header: expected 'key': value at byte %zu", (size_t)(c.p - h));
    if (strcmp(key, "descr") == 0) {
      if (!string(&c, descr, 32))
        return fail(err, GFI_EPARSE,
                    "malformed header: 'descr' is not a plain quoted string (no escapes, no control characters such as NUL)");
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (word(&c, "True"))
        fortran = 1;
      else if (!word(&c, "False"))
        return fail(err, GFI_EPARSE, "malformed header: 'fortran_order' is not True or False");
      have_order = 1;
    } else if (strcmp(key, "shape") == 0) {
      int s = shape(&c, dims, ndim);
      if (s < 0) return fail(err, GFI_EDIM, "shape entry too large");
      if (!s) return fail(err, GFI_EPARSE, "malformed header: 'shape' is not a tuple of integers");
      have_shape = 1;
    } else {
      return fail(err, GFI_EPARSE, "malformed header: unexpected key '%s'", key);
    }
    if (!eat(&c, ',')) {
      if (eat(&c, '}')) break;
      return fail(err, GFI_EPARSE, "malformed header: expected ',' or '}' at byte %zu", (size_t)(c.p - h));
    }
  }
  /* numpy pads the dict with spaces to the announced length and ends it
   * with '\n': nothing but white space may follow (numpy refuses it too) */
  skip_ws(&c);
  if (c.p < c.end)
    return fail(err, GFI_EPARSE, "malformed header: byte %zu after the dict is 0x%02x (only white space may "
                "follow it)", (size_t)(c.p - h), (unsigned)(unsigned char)*c.p);
  if (!have_descr || !have_order || !have_shape)
    return fail(err, GFI_EPARSE, "malformed header: no '%s' key",
                !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
  if (fortran)
    return fail(err, GFI_EUNSUPPORTED,
                "fortran_order True is not supported (save a C-order array, np.ascontiguousarray)");
  return GFI_OK;
}

/* Magic, version and dict: the shape and descr; f is left at the first value. */
static int read_header_raw(FILE *f, size_t *dims, int *ndim, char *descr, gfi_errinfo *err) {
  unsigned char pre[MAGIC_LEN + 2];
  size_t got = fread(pre, 1, sizeof pre, f);
  if (got < MAGIC_LEN || memcmp(pre, MAGIC, MAGIC_LEN) != 0) {
    if (ferror(f)) return fail(err, GFI_EIO, "cannot read: %s", strerror(errno));
    return fail(err, GFI_EPARSE, "bad magic: not a .npy file");
  }
  if (got < sizeof pre) return fail(err, GFI_EPARSE, "truncated header");
  int major = pre[MAGIC_LEN], minor = pre[MAGIC_LEN + 1];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fail(err, GFI_EUNSUPPORTED, "unsupported .npy version %d.%d (expected 1.0, 2.0 or 3.0)", major, minor);
  unsigned char lb[4] = {0, 0, 0, 0};
  size_t nl = major == 1 ? 2 : 4;
  if (fread(lb, 1, nl, f) != nl) return fail(err, GFI_EPARSE, "truncated header");
  size_t hlen = (size_t)lb[0] | (size_t)lb[1] << 8 | (size_t)lb[2] << 16 | (size_t)lb[3] << 24;
  if (hlen > MAX_HEADER) return fail(err, GFI_EPARSE, "header length %zu too large", hlen);
  char *h = malloc(hlen + 1);
  if (!h) return GFI_ENOMEM;
  if (fread(h, 1, hlen, f) != hlen) {
    free(h);
    return fail(err, GFI_EPARSE, "truncated header (%zu bytes announced)", hlen);
  }
  h[hlen] = '\0';
  int st = parse_header(h, hlen, dims, ndim, descr, err);
  free(h);
  return st;
}

int npy_read_header(FILE *f, size_t cols_expected, size_t *rows, size_t *cols, int *ndims, gfi_errinfo *err) {
  *rows = 0;
  *cols = 0;
  *ndims = 0;
  size_t dims[8] = {0};
  int ndim = 0;
  char descr[32];
  int st = read_header_raw(f, dims, &ndim, descr, err);
  if (st) return st;
  if (strcmp(descr, "<f8") != 0)
    return fail(err, GFI_EUNSUPPORTED, "unsupported dtype '%s' (expected '<f8', float64 little-endian)", descr);
  char sh[128];
  shape_text(sh, sizeof sh, dims, ndim);
  if (ndim != 1 && ndim != 2) return fail(err, GFI_EDIM, "shape %s: expected (N,) or (N, D)", sh);
  size_t n = dims[0], c = ndim == 2 ? dims[1] : 1;
  if (c == 0) return fail(err, GFI_EDIM, "shape %s: rows of zero columns hold no values", sh);
  if (cols_expected && c != cols_expected)
    return fail(err, GFI_EDIM, "shape %s: expected %zu column%s", sh, cols_expected, cols_expected == 1 ? "" : "s");
  if (c && n > SIZE_MAX / c / sizeof(double)) return fail(err, GFI_EDIM, "shape %s: too large", sh);
  *rows = n;
  *cols = c;
  *ndims = ndim;
  return GFI_OK;
}

void npy_to_host(double *x, size_t n) {
  if (!little_endian()) swap8(x, n);
}

int gfi_npy_read_stream(FILE *f, size_t cols_expected, size_t *rows, size_t *cols, double **data,
                        gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!f || !rows || !cols || !data) return GFI_EINVAL;
  *rows = 0;
  *cols = 0;
  *data = NULL;
  size_t n, c;
  int ndim;
  int st = npy_read_header(f, cols_expected, &n, &c, &ndim, err);
  if (st) return st;
  char sh[128];
  size_t dims[2] = {n, c};
  shape_text(sh, sizeof sh, dims, ndim);
  size_t total = n * c;
  /* The header is not trusted with the allocation: a regular file must hold
   * the values it announces (checked before allocating); from a pipe the
   * buffer grows as the values arrive. */
  size_t cap = total;
  struct stat sb;
  int fd = fileno(f);
  off_t here = fd >= 0 ? ftello(f) : -1;
  if (fd >= 0 && here >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
    uint64_t avail = sb.st_size > here ? (uint64_t)(sb.st_size - here) / sizeof(double) : 0;
    if (avail < (uint64_t)total)
      return fail(err, GFI_EPARSE, "truncated data: shape %s needs %zu values, found %llu", sh, total,
                  (unsigned long long)avail);
  } else if (cap > ((size_t)1 << 20)) {
    cap = (size_t)1 << 20;
  }
  double *x = cap ? gfi_malloc2(cap, sizeof *x) : malloc(1);
  if (!x) return GFI_ENOMEM;
  for (size_t done = 0; done < total;) {
    size_t want = total - done < BLOCK ? total - done : BLOCK;
    if (done + want > cap) {
      size_t nc = cap > total / 2 ? total : 2 * cap;
      double *y = gfi_realloc2(x, nc, sizeof *x);
      if (!y) {
        free(x);
        return GFI_ENOMEM;
      }
      x = y, cap = nc;
    }
    size_t r = fread(x + done, sizeof *x, want, f);
    done += r;
    if (r < want) {
      free(x);
      if (ferror(f)) return fail(err, GFI_EIO, "cannot read: %s", strerror(errno));
      return fail(err, GFI_EPARSE, "truncated data: shape %s needs %zu values, found %zu", sh, total, done);
    }
  }
  if (fgetc(f) != EOF) {
    free(x);
    return fail(err, GFI_EPARSE, "bytes after the %zu values of shape %s", total, sh);
  }
  if (!little_endian()) swap8(x, total);
  *rows = n;
  *cols = c;
  *data = x;
  return GFI_OK;
}

int gfi_npy_read(const char *path, size_t cols_expected, size_t *rows, size_t *cols, double **data,
                 gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!path) return GFI_EINVAL;
  int use_stdin = strcmp(path, "-") == 0;
  FILE *f = use_stdin ? stdin : fopen(path, "rb");
  if (!f) return fail(err, GFI_EIO, "%s", strerror(errno));
  int st = gfi_npy_read_stream(f, cols_expected, rows, cols, data, err);
  if (!use_stdin) fclose(f);
  return st;
}

int gfi_npy_write_stream(FILE *f, size_t rows, size_t cols, int ndim, const double *data, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!f || (!data && rows && cols) || (ndim != 1 && ndim != 2) || (ndim == 1 && cols != 1)) return GFI_EINVAL;
  if (cols && rows > SIZE_MAX / cols / sizeof(double)) return fail(err, GFI_EDIM, "shape too large");
  char dict[160];
  int dl = ndim == 1 ? snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }", rows)
                     : snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, %zu), }",
                                rows, cols);
  /* magic, version 1.0, 2-byte length, dict padded with spaces and ended by
   * '\n' so that the data starts at a multiple of 64 bytes */
  size_t pre = MAGIC_LEN + 2 + 2, hl = (size_t)dl + 1;
  hl += (64 - (pre + hl) % 64) % 64;
  unsigned char head[256];
  memcpy(head, MAGIC, MAGIC_LEN);
  head[6] = 1, head[7] = 0, head[8] = (unsigned char)(hl & 0xff), head[9] = (unsigned char)(hl >> 8);
  memcpy(head + pre, dict, (size_t)dl);
  memset(head + pre + dl, ' ', hl - (size_t)dl - 1);
  head[pre + hl - 1] = '\n';
  errno = 0;
  if (fwrite(head, 1, pre + hl, f) != pre + hl) goto io;
  size_t total = rows * cols;
  if (little_endian()) {
    for (size_t done = 0; done < total;) {
      size_t n = total - done < BLOCK ? total - done : BLOCK;
      if (fwrite(data + done, sizeof *data, n, f) != n) goto io;
      done += n;
    }
  } else {
    double buf[512];
    for (size_t done = 0; done < total;) {
      size_t n = total - done < 512 ? total - done : 512;
      memcpy(buf, data + done, n * sizeof *buf);
      swap8(buf, n);
      if (fwrite(buf, sizeof *buf, n, f) != n) goto io;
      done += n;
    }
  }
  if (fflush(f) != 0 || ferror(f)) goto io;
  return GFI_OK;
io:
  return fail(err, GFI_EIO, "cannot write: %s", strerror(errno ? errno : EIO));
}

int gfi_npy_write(const char *path, size_t rows, size_t cols, int ndim, const double *data, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!path) return GFI_EINVAL;
  if (strcmp(path, "-") == 0) return gfi_npy_write_stream(stdout, rows, cols, ndim, data, err);
  FILE *f = fopen(path, "wb");
  if (!f) return fail(err, GFI_EIO, "%s", strerror(errno));
  int st = gfi_npy_write_stream(f, rows, cols, ndim, data, err);
  errno = 0;
  if (fclose(f) != 0 && st == GFI_OK) st = fail(err, GFI_EIO, "cannot write: %s", strerror(errno ? errno : EIO));
  return st;
}

int gfi_npy_sniff(const char *path) {
  if (!path || strcmp(path, "-") == 0) return 0;
  size_t n = strlen(path);
  if (n >= 4 && strcmp(path + n - 4, ".npy") == 0) return 1;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char m[MAGIC_LEN];
  int yes = fread(m, 1, MAGIC_LEN, f) == MAGIC_LEN && memcmp(m, MAGIC, MAGIC_LEN) == 0;
  fclose(f);
  return yes;
}

/* ---- arrays of any rank (up to 8) and of float64, float32, bool or uint8 ---- */

static size_t descr_size(const char *d) {
  if (strcmp(d, "<f8") == 0) return 8;
  if (strcmp(d, "<f4") == 0) return 4;
  if (strcmp(d, "|b1") == 0 || strcmp(d, "|u1") == 0) return 1;
  return 0;
}

int gfi_npy_read_nd(const char *path, int *ndim, size_t *dims, double **data, int *is_f32, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!path || !ndim || !dims || !data) return GFI_EINVAL;
  *data = NULL;
  *ndim = 0;
  if (is_f32) *is_f32 = 0;
  int use_stdin = strcmp(path, "-") == 0;
  FILE *f = use_stdin ? stdin : fopen(path, "rb");
  if (!f) return fail(err, GFI_EIO, "%s", strerror(errno));
  char descr[32];
  size_t dd[8] = {0};
  int nd = 0;
  int st = read_header_raw(f, dd, &nd, descr, err);
  size_t es = st ? 0 : descr_size(descr), total = 1;
  if (!st && !es)
    st = fail(err, GFI_EUNSUPPORTED, "unsupported dtype '%s' (expected '<f8', '<f4', '|b1' or '|u1')", descr);
  for (int k = 0; !st && k < nd; k++)
    if (dd[k] && total > SIZE_MAX / 8 / dd[k])
      st = fail(err, GFI_EDIM, "shape too large");
    else
      total *= dd[k];
  unsigned char *raw = NULL;
  double *x = NULL;
  if (!st) {
    struct stat sb;
    int fd = fileno(f);
    off_t here = fd >= 0 ? ftello(f) : -1;
    if (fd >= 0 && here >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
      uint64_t avail = sb.st_size > here ? (uint64_t)(sb.st_size - here) / es : 0;
      if (avail < (uint64_t)total)
        st = fail(err, GFI_EPARSE, "truncated data: %zu values announced, found %llu", total, (unsigned long long)avail);
    }
  }
  if (!st) {
    raw = malloc(total * es + 1);
    x = gfi_malloc2(total + 1, sizeof *x);
    if (!raw || !x) st = GFI_ENOMEM;
  }
  if (!st) {
    size_t got = fread(raw, es, total, f);
    if (got < total)
      st = ferror(f) ? fail(err, GFI_EIO, "cannot read: %s", strerror(errno))
                     : fail(err, GFI_EPARSE, "truncated data: %zu values announced, found %zu", total, got);
    else if (fgetc(f) != EOF)
      st = fail(err, GFI_EPARSE, "bytes after the %zu values", total);
  }
  if (!st) {
    int le = little_endian();
    for (size_t k = 0; k < total; k++) {
      unsigned char b[8];
      for (size_t i = 0; i < es; i++) b[i] = raw[k * es + (le ? i : es - 1 - i)];
      if (es == 8) {
        memcpy(&x[k], b, 8);
      } else if (es == 4) {
        float v;
        memcpy(&v, b, 4);
        x[k] = v;
      } else {
        x[k] = b[0];
      }
    }
    *ndim = nd;
    for (int k = 0; k < nd; k++) dims[k] = dd[k];
    if (is_f32) *is_f32 = es == 4;
    *data = x;
    x = NULL;
  }
  free(raw);
  free(x);
  if (!use_stdin) fclose(f);
  return st;
}

int gfi_npy_write_nd(const char *path, int ndim, const size_t *dims, const double *data, int as_f32, gfi_errinfo *err) {
  gfi_errinfo_clear(err);
  if (!path || ndim < 1 || ndim > 8 || !dims) return GFI_EINVAL;
  size_t total = 1;
  for (int k = 0; k < ndim; k++) {
    if (dims[k] && total > SIZE_MAX / 8 / dims[k]) return fail(err, GFI_EDIM, "shape too large");
    total *= dims[k];
  }
  if (!data && total) return GFI_EINVAL;
  char dict[400];
  int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", as_f32 ? "<f4" : "<f8");
  for (int k = 0; k < ndim; k++) dl += snprintf(dict + dl, sizeof dict - (size_t)dl, "%s%zu", k ? ", " : "", dims[k]);
  dl += snprintf(dict + dl, sizeof dict - (size_t)dl, "%s), }", ndim == 1 ? "," : "");
  size_t pre = MAGIC_LEN + 2 + 2, hl = (size_t)dl + 1;
  hl += (64 - (pre + hl) % 64) % 64;
  unsigned char head[512];
  memcpy(head, MAGIC, MAGIC_LEN);
  head[6] = 1, head[7] = 0, head[8] = (unsigned char)(hl & 0xff), head[9] = (unsigned char)(hl >> 8);
  memcpy(head + pre, dict, (size_t)dl);
  memset(head + pre + dl, ' ', hl - (size_t)dl - 1);
  head[pre + hl - 1] = '\n';
  int use_stdout = strcmp(path, "-") == 0;
  FILE *f = use_stdout ? stdout : fopen(path, "wb");
  if (!f) return fail(err, GFI_EIO, "%s", strerror(errno));
  errno = 0;
  int ok = fwrite(head, 1, pre + hl, f) == pre + hl;
  const int le = little_endian();
  const size_t es = as_f32 ? 4 : 8;
  unsigned char buf[4096];
  for (size_t done = 0; ok && done < total;) {
    size_t n = total - done < sizeof buf / 8 ? total - done : sizeof buf / 8;
    for (size_t k = 0; k < n; k++) {
      unsigned char b[8];
      if (as_f32) {
        float v = (float)data[done + k];
        memcpy(b, &v, 4);
      } else {
        memcpy(b, &data[done + k], 8);
      }
      for (size_t i = 0; i < es; i++) buf[k * es + i] = b[le ? i : es - 1 - i];
    }
    ok = fwrite(buf, es, n, f) == n;
    done += n;
  }
  if (ok) ok = fflush(f) == 0 && !ferror(f);
  if (!use_stdout && fclose(f) != 0) ok = 0;
  if (!ok) return fail(err, GFI_EIO, "cannot write: %s", strerror(errno ? errno : EIO));
  return GFI_OK;
}
