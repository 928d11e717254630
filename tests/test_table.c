/* Table reading: good input, and every error with its line and column. */
#include <string.h>
#include "check.h"
#include "gfi/gfi.h"

static int read_str(const char *text, size_t ncols, size_t *rows, size_t *cols, double **x,
                    gfi_errinfo *e) {
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  int st = gfi_table_read_stream(f, ncols, rows, cols, x, e);
  fclose(f);
  return st;
}

int main(void) {
  size_t r, c;
  double *x = NULL;
  gfi_errinfo e;
  CHECK_STATUS(read_str("# header\n1 2\n\n  # indented comment\n3\t4e-1\r\n-5 +6.5\n", 0, &r, &c, &x, &e), GFI_OK);
  CHECK(r == 3 && c == 2, "shape %zu x %zu", r, c);
  CHECK(x && x[0] == 1 && x[3] == 0.4 && x[4] == -5 && x[5] == 6.5, "values");
  free(x);
  x = NULL;
  CHECK_STATUS(read_str("1 2\n3 x4\n", 0, &r, &c, &x, &e), GFI_EPARSE);
  CHECK(e.line == 2 && e.column == 2 && strstr(e.msg, "x4"), "non-numeric at %zu:%zu '%s'", e.line, e.column, e.msg);
  CHECK(x == NULL && r == 0, "nothing returned on error");
  CHECK_STATUS(read_str("1 2\n3 4\n5\n", 0, &r, &c, &x, &e), GFI_EPARSE);
  CHECK(e.line == 3 && strstr(e.msg, "expected 2 columns"), "short row: %zu '%s'", e.line, e.msg);
  CHECK_STATUS(read_str("1 2\n3 4 5\n", 2, &r, &c, &x, &e), GFI_EPARSE);
  CHECK(e.line == 2 && e.column == 3, "long row at %zu:%zu", e.line, e.column);
  CHECK_STATUS(read_str("1 2\n3 nan\n", 2, &r, &c, &x, &e), GFI_ENONFINITE);
  CHECK(e.line == 2 && e.column == 2, "nan at %zu:%zu", e.line, e.column);
  CHECK_STATUS(read_str("1 -inf\n", 2, &r, &c, &x, &e), GFI_ENONFINITE);
  CHECK_STATUS(read_str("1e999 0\n", 2, &r, &c, &x, &e), GFI_ENONFINITE);
  CHECK_STATUS(read_str("", 0, &r, &c, &x, &e), GFI_EEMPTY);
  CHECK_STATUS(read_str("# only\n# comments\n\n", 0, &r, &c, &x, &e), GFI_EEMPTY);
  CHECK_STATUS(read_str("1 2 3\n", 2, &r, &c, &x, &e), GFI_EPARSE);
  CHECK_STATUS(gfi_table_read("/nonexistent/file.txt", 0, &r, &c, &x, &e), GFI_EIO);
  CHECK(strstr(e.msg, "No such file") != NULL, "message '%s'", e.msg);
  CHECK_STATUS(gfi_table_read_stream(NULL, 0, &r, &c, &x, &e), GFI_EINVAL);
  /* writing: 17 significant digits round-trip */
  char buf[256];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  double v[4] = {0.1, 1.0 / 3, -2.5e-300, INFINITY};
  gfi_table_write_rows(f, 2, 2, v);
  fclose(f);
  CHECK(strcmp(buf, "0.10000000000000001 0.33333333333333331\n-2.5e-300 inf\n") == 0, "written '%s'", buf);
  /* and every finite value reads back to the same double */
  size_t r2, c2;
  double *back = NULL;
  CHECK_STATUS(read_str("0.10000000000000001 0.33333333333333331\n-2.5e-300 1\n", 2, &r2, &c2, &back, &e), GFI_OK);
  CHECK(back && back[0] == v[0] && back[1] == v[1] && back[2] == v[2], "round trip");
  free(back);
  return check_summary("table");
}
