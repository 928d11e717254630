/* .npy reading and writing: round trips (1-D, 2-D, empty, headers of
 * versions 1.0, 2.0 and 3.0), the exact bytes numpy would write, and every
 * bad header or body reaching its status and message. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "gfi/gfi.h"

/* A .npy image: magic, version major.0, the dict padded to 16 bytes, then
 * nbytes of body. Returns its length (buf holds up to cap bytes). */
static size_t image(unsigned char *buf, size_t cap, int major, const char *dict, const void *body, size_t nbytes) {
  size_t nl = major == 1 ? 2 : 4, pre = 8 + nl, dl = strlen(dict), hl = dl + 1;
  hl += (16 - (pre + hl) % 16) % 16;
  if (pre + hl + nbytes > cap) return 0;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major, buf[7] = 0;
  for (size_t k = 0; k < nl; k++) buf[8 + k] = (unsigned char)(hl >> (8 * k));
  memcpy(buf + pre, dict, dl);
  memset(buf + pre + dl, ' ', hl - dl - 1);
  buf[pre + hl - 1] = '\n';
  if (nbytes) memcpy(buf + pre + hl, body, nbytes);
  return pre + hl + nbytes;
}

static int read_mem(const unsigned char *b, size_t n, size_t cols, size_t *r, size_t *c, double **x, gfi_errinfo *e) {
  FILE *f = fmemopen((void *)b, n, "rb");
  int st = gfi_npy_read_stream(f, cols, r, c, x, e);
  fclose(f);
  return st;
}

static const double vals[6] = {1.5, -2.25, 3e-300, 0.1, -0.0, 1e300};

/* status and a message fragment for a bad image */
static void bad(int major, const char *dict, size_t nbytes, size_t cols, int want, const char *frag) {
  unsigned char buf[512];
  size_t n = image(buf, sizeof buf, major, dict, vals, nbytes);
  size_t r = 7, c = 7;
  double *x = (double *)&r;
  gfi_errinfo e;
  CHECK_STATUS(read_mem(buf, n, cols, &r, &c, &x, &e), want);
  CHECK(strstr(e.msg, frag) != NULL, "%s: message '%s' lacks '%s'", dict, e.msg, frag);
  CHECK(x == NULL && r == 0 && c == 0, "nothing returned on error (%s)", dict);
}

int main(void) {
  unsigned char buf[512];
  size_t r, c, n;
  double *x = NULL;
  gfi_errinfo e;

  /* versions 1.0, 2.0, 3.0; (N, C) and (N,) */
  for (int major = 1; major <= 3; major++) {
    n = image(buf, sizeof buf, major, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", vals, 48);
    CHECK_STATUS(read_mem(buf, n, 0, &r, &c, &x, &e), GFI_OK);
    CHECK(r == 3 && c == 2 && x && memcmp(x, vals, 48) == 0, "v%d.0 (3, 2)", major);
    free(x);
    n = image(buf, sizeof buf, major, "{\"shape\": (6,), \"fortran_order\": False, \"descr\": \"<f8\"}", vals, 48);
    CHECK_STATUS(read_mem(buf, n, 1, &r, &c, &x, &e), GFI_OK);
    CHECK(r == 6 && c == 1 && x && memcmp(x, vals, 48) == 0, "v%d.0 (6,)", major);
    free(x);
  }
  n = image(buf, sizeof buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", vals, 0);
  CHECK_STATUS(read_mem(buf, n, 3, &r, &c, &x, &e), GFI_OK);
  CHECK(r == 0 && c == 3 && x != NULL, "empty (0, 3)");
  free(x);

  /* every bad header and body */
  const char *ok2 = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";
  bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 24, 0, GFI_EUNSUPPORTED, "dtype '<f4'");
  bad(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3, 2), }", 48, 0, GFI_EUNSUPPORTED, "dtype '>f8'");
  bad(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3, 2), }", 48, 0, GFI_EUNSUPPORTED, "dtype '<i8'");
  bad(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }", 48, 0, GFI_EUNSUPPORTED, "fortran_order True");
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", 48, 0, GFI_EDIM, "shape (1, 2, 3)");
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8, 0, GFI_EDIM, "shape ()");
  bad(1, ok2, 48, 3, GFI_EDIM, "shape (3, 2): expected 3 columns");
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", 48, 2, GFI_EDIM, "shape (6,): expected 2");
  bad(1, ok2, 40, 0, GFI_EPARSE, "truncated data");
  bad(2, ok2, 0, 0, GFI_EPARSE, "truncated data");
  /* a header that announces far more values than come: no allocation of its
   * size (8 TB here), from a stream or a file */
  const char *huge = "{'descr': '<f8', 'fortran_order': False, 'shape': (999999999994,), }";
  bad(1, huge, 16, 0, GFI_EPARSE, "truncated data: shape (999999999994,) needs 999999999994 values, found 2");
  {
    char path[] = "/tmp/gfi_npy_huge_XXXXXX";
    int fd = mkstemp(path);
    size_t m = image(buf, sizeof buf, 1, huge, vals, 16);
    FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    CHECK(f && fwrite(buf, 1, m, f) == m && fflush(f) == 0 && fseek(f, 0, SEEK_SET) == 0, "temporary file");
    if (f) {
      size_t rr = 7, cc = 7;
      double *xx = NULL;
      CHECK_STATUS(gfi_npy_read_stream(f, 0, &rr, &cc, &xx, &e), GFI_EPARSE);
      CHECK(strstr(e.msg, "needs 999999999994 values, found 2") != NULL, "file: '%s'", e.msg);
      CHECK(xx == NULL && rr == 0, "nothing returned");
      fclose(f);
    }
    remove(path);
  }
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 40, 0, GFI_EPARSE, "bytes after");
  bad(1, "{'descr': '<f8', 'fortran_order': False}", 48, 0, GFI_EPARSE, "no 'shape'");
  bad(1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3, 2)}", 48, 0, GFI_EPARSE, "fortran_order");
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, x)}", 48, 0, GFI_EPARSE, "'shape'");
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), 'extra': 1}", 48, 0, GFI_EPARSE, "'extra'");
  bad(1, "['descr', '<f8']", 48, 0, GFI_EPARSE, "dict");
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999, 2)}", 48, 0, GFI_EDIM,
      "too large");
  bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", 48, 0, GFI_EDIM,
      "too large");
  /* version 4.0, 1.1 */
  n = image(buf, sizeof buf, 1, ok2, vals, 48);
  buf[6] = 4;
  CHECK_STATUS(read_mem(buf, n, 0, &r, &c, &x, &e), GFI_EUNSUPPORTED);
  CHECK(strstr(e.msg, "version 4.0") != NULL, "'%s'", e.msg);
  buf[6] = 1, buf[7] = 1;
  CHECK_STATUS(read_mem(buf, n, 0, &r, &c, &x, &e), GFI_EUNSUPPORTED);
  /* bad magic: a text table, an empty stream, a short header */
  const char *text = "1 2\n3 4\n";
  CHECK_STATUS(read_mem((const unsigned char *)text, strlen(text), 0, &r, &c, &x, &e), GFI_EPARSE);
  CHECK(strstr(e.msg, "bad magic") != NULL, "'%s'", e.msg);
  CHECK_STATUS(read_mem((const unsigned char *)"\x93NUMPY\x01\x00\x40", 9, 0, &r, &c, &x, &e), GFI_EPARSE);
  CHECK(strstr(e.msg, "truncated header") != NULL, "'%s'", e.msg);
  n = image(buf, sizeof buf, 1, ok2, vals, 0);
  CHECK_STATUS(read_mem(buf, 30, 0, &r, &c, &x, &e), GFI_EPARSE);
  CHECK(strstr(e.msg, "truncated header") != NULL, "'%s'", e.msg);
  CHECK_STATUS(gfi_npy_read("/nonexistent/x.npy", 0, &r, &c, &x, &e), GFI_EIO);
  CHECK_STATUS(gfi_npy_read_stream(NULL, 0, &r, &c, &x, &e), GFI_EINVAL);

  /* writing: the bytes, aligned to 64, read back bit for bit */
  char path[] = "/tmp/gfi_test_npy_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  close(fd);
  CHECK_STATUS(gfi_npy_write(path, 3, 2, 2, vals, &e), GFI_OK);
  FILE *f = fopen(path, "rb");
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  CHECK(len == 128 + 48, "file length %zu", len);
  CHECK(memcmp(buf, "\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", 69) == 0,
        "header bytes");
  CHECK(buf[127] == '\n' && buf[126] == ' ', "header padded to 64 and ended by a newline");
  CHECK_STATUS(gfi_npy_read(path, 2, &r, &c, &x, &e), GFI_OK);
  CHECK(r == 3 && c == 2 && memcmp(x, vals, 48) == 0, "round trip (3, 2)");
  free(x);
  CHECK_STATUS(gfi_npy_write(path, 6, 1, 1, vals, &e), GFI_OK);
  CHECK(gfi_npy_sniff(path) == 1, "sniff by magic and suffix");
  CHECK_STATUS(gfi_npy_read(path, 1, &r, &c, &x, &e), GFI_OK);
  CHECK(r == 6 && c == 1 && memcmp(x, vals, 48) == 0, "round trip (6,)");
  free(x);
  CHECK_STATUS(gfi_npy_write(path, 0, 4, 2, NULL, &e), GFI_OK);
  CHECK_STATUS(gfi_npy_read(path, 4, &r, &c, &x, &e), GFI_OK);
  CHECK(r == 0 && c == 4, "round trip (0, 4)");
  free(x);
  /* a big one, more than one block */
  size_t big = 200000;
  double *y = malloc(big * sizeof *y);
  for (size_t i = 0; i < big; i++) y[i] = (double)i * 0.37 - 5;
  CHECK_STATUS(gfi_npy_write(path, big / 4, 4, 2, y, &e), GFI_OK);
  CHECK_STATUS(gfi_npy_read(path, 0, &r, &c, &x, &e), GFI_OK);
  CHECK(r == big / 4 && c == 4 && memcmp(x, y, big * sizeof *y) == 0, "round trip of %zu values", big);
  free(x);
  free(y);
  /* the magic without the suffix; a text file is not .npy */
  char path2[] = "/tmp/gfi_test_npy_XXXXXX";
  fd = mkstemp(path2);
  close(fd);
  CHECK_STATUS(gfi_npy_write(path2, 6, 1, 1, vals, &e), GFI_OK);
  CHECK(gfi_npy_sniff(path2) == 1, "sniff by magic");
  f = fopen(path2, "w");
  fputs(text, f);
  fclose(f);
  CHECK(gfi_npy_sniff(path2) == 0 && gfi_npy_sniff("-") == 0, "a text file is not .npy");
  remove(path);
  remove(path2);

  /* bad arguments and a full disk */
  CHECK_STATUS(gfi_npy_write_stream(stdout, 3, 2, 1, vals, &e), GFI_EINVAL);
  CHECK_STATUS(gfi_npy_write_stream(stdout, 3, 2, 3, vals, &e), GFI_EINVAL);
  CHECK_STATUS(gfi_npy_write_stream(stdout, SIZE_MAX / 2, 4, 2, vals, &e), GFI_EDIM);
  f = fopen("/dev/full", "wb");
  if (f) {
    CHECK_STATUS(gfi_npy_write_stream(f, 3, 2, 2, vals, &e), GFI_EIO);
    CHECK(strstr(e.msg, "cannot write") != NULL, "'%s'", e.msg);
    fclose(f);
    CHECK_STATUS(gfi_npy_write("/dev/full", 3, 2, 2, vals, &e), GFI_EIO);
  }
  CHECK_STATUS(gfi_npy_write("/nonexistent/dir/x.npy", 3, 2, 2, vals, &e), GFI_EIO);
  return check_summary("npy");
}
