/* The .npy reader's pieces for readers of part of a file (the gfi program's
 * data slabs under MPI): the header alone, and the byte order. */
#ifndef GFI_NPY_INTERNAL_H
#define GFI_NPY_INTERNAL_H

#include <stddef.h>
#include <stdio.h>
#include "gfi/status.h"

/* Read the magic, version and header dict from f (at the start of the file)
 * and leave f at the first value: rows x cols float64 values follow, row
 * after row; *ndims is 1 for shape (N,), 2 for (N, D). The checks and
 * messages of gfi_npy_read_stream, which uses it. */
int npy_read_header(FILE *f, size_t cols_expected, size_t *rows, size_t *cols, int *ndims, gfi_errinfo *err);
/* Little-endian values as read from a file to this machine's order (in place). */
void npy_to_host(double *x, size_t n);

#endif
