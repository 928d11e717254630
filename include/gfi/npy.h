/* NumPy .npy files of float64: reading (format versions 1.0, 2.0 and 3.0)
 * and writing (1.0), in blocks, with every size product checked.
 *
 * Accepted arrays: dtype '<f8' (float64, little-endian), C order
 * (fortran_order False), shape (N,) or (N, C); an (N,) array reads as one
 * column. On failure the functions return a status and fill err->msg with
 * what is wrong (err->line and err->column are 0):
 *   GFI_EIO          the file cannot be opened, read or written
 *   GFI_EPARSE       bad magic (not a .npy file), a malformed header,
 *                    truncated data or bytes after the data
 *   GFI_EUNSUPPORTED another version, another dtype ('<f4', '>f8', ...) or
 *                    fortran_order True
 *   GFI_EDIM         a shape other than (N,) or (N, C), C != the expected
 *                    column count, or a shape whose size overflows
 *   GFI_ENOMEM, GFI_EINVAL (NULL arguments) */
#ifndef GFI_NPY_H
#define GFI_NPY_H

#include "export.h"
#include <stddef.h>
#include <stdio.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read `path` ("-" = stdin). cols_expected = 0 accepts any column count.
 * On success *rows, *cols and *data (malloc'ed, row-major, caller frees;
 * never NULL, also for N = 0) are set; on failure *data is NULL. */
GFI_EXPORT int gfi_npy_read(const char *path, size_t cols_expected, size_t *rows, size_t *cols,
                            double **data, gfi_errinfo *err);

/* Same, from an open stream positioned at the magic. */
GFI_EXPORT int gfi_npy_read_stream(FILE *f, size_t cols_expected, size_t *rows, size_t *cols,
                                   double **data, gfi_errinfo *err);

/* Write rows x cols values (row-major) to `path` ("-" = stdout, flushed but
 * not closed): shape (rows,) when ndim is 1 (then cols must be 1), else
 * (rows, cols). Every write, the flush and the close are checked: a full
 * disk is GFI_EIO. */
GFI_EXPORT int gfi_npy_write(const char *path, size_t rows, size_t cols, int ndim, const double *data,
                             gfi_errinfo *err);

/* Same, to an open stream (flushed, not closed). */
GFI_EXPORT int gfi_npy_write_stream(FILE *f, size_t rows, size_t cols, int ndim, const double *data,
                                    gfi_errinfo *err);

/* 1 when `path` names a .npy file: its name ends in ".npy" or its first
 * bytes are the .npy magic; 0 otherwise ("-" and unreadable files: 0). */
GFI_EXPORT int gfi_npy_sniff(const char *path);

#ifdef __cplusplus
}
#endif
#endif
