/* Reading whitespace-separated numeric tables ('#' lines are comments) and
 * writing gfi's tabular output (metadata '#' lines, a column-name line, rows
 * with 17 significant digits). */
#ifndef GFI_TABLE_H
#define GFI_TABLE_H

#include "export.h"
#include <stddef.h>
#include <stdio.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a numeric table from `path` ("-" = stdin). ncols_expected = 0 accepts
 * any constant row length (the first data row decides). On success *rows,
 * *cols and *data (malloc'ed row-major, caller frees) are set. On failure
 * returns GFI_EIO (cannot open/read), GFI_EEMPTY (no data rows), GFI_EPARSE
 * (non-numeric token or wrong number of columns) or GFI_ENONFINITE (NaN/Inf),
 * with err->line / err->column (1-based field) and err->msg filled. A NUL
 * byte or a line longer than GFI_TABLE_MAX_LINE bytes (a binary file, or an
 * endless one such as /dev/zero) is GFI_EPARSE at that line, found without
 * reading further. */
#define GFI_TABLE_MAX_LINE (1 << 20)
GFI_EXPORT int gfi_table_read(const char *path, size_t ncols_expected, size_t *rows,
                   size_t *cols, double **data, gfi_errinfo *err);

/* Same, reading from an open stream; `name` is used only for messages. */
GFI_EXPORT int gfi_table_read_stream(FILE *f, size_t ncols_expected, size_t *rows,
                          size_t *cols, double **data, gfi_errinfo *err);

/* Print one number with 17 significant digits ("inf"/"nan" spelled so). */
GFI_EXPORT void gfi_table_put(FILE *f, double x);

/* Print rows x cols numbers, one row per line. */
GFI_EXPORT void gfi_table_write_rows(FILE *f, size_t rows, size_t cols, const double *x);

#ifdef __cplusplus
}
#endif
#endif
