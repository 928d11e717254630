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

/* Arrays of any rank up to 8 (the batched attention's 4-D tensors, masks):
 * dtype '<f8', '<f4', '|b1' (bool) or '|u1', C order, read into float64
 * (exact for all four); *ndim and dims[0..ndim-1] get the shape (dims holds
 * 8 entries), *is_f32 (may be NULL) whether the file held float32. Errors and
 * messages as gfi_npy_read. */
GFI_EXPORT int gfi_npy_read_nd(const char *path, int *ndim, size_t *dims, double **data, int *is_f32,
                               gfi_errinfo *err);

/* Write an array of shape dims[0..ndim-1] (1 <= ndim <= 8) as '<f8', or as
 * '<f4' (each value rounded to float) when as_f32; every write and the close
 * checked. */
GFI_EXPORT int gfi_npy_write_nd(const char *path, int ndim, const size_t *dims, const double *data, int as_f32,
                                gfi_errinfo *err);

#ifdef __cplusplus
}
#endif
#endif
