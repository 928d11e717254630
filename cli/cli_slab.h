/* A data file read in slabs, one range of blocks per MPI rank, and sums over
 * the data reduced in a fixed order ('gfi density --data FILE' under MPI).
 *
 * The file is cut into a number of blocks that depends on the file alone,
 * never on the number of ranks: a .npy array into row ranges (a seek to each),
 * a text table into byte ranges, each cut forward to the next line start (a
 * block holds the lines that begin inside it). Rank r of P reads blocks
 * [r B / P, (r + 1) B / P). Every block's sum is computed alone, and rank 0
 * adds the blocks' results in block order: the answer is the same, to the
 * bit, for every P (1 included), and differs from the single-process sum over
 * the whole file only by the rounding of that block order. */
#ifndef GFI_CLI_SLAB_H
#define GFI_CLI_SLAB_H

#include <stddef.h>
#include "gfi/gfi.h"

typedef struct {
  size_t nblk;   /* blocks of the file */
  size_t b0, b1; /* this rank's blocks [b0, b1) */
  size_t D;      /* columns */
  size_t N;      /* rows of the whole file */
  int npy;       /* 1: a .npy file */
  size_t *n;     /* n[b - b0]: rows of block b */
  size_t *row0;  /* row0[b - b0]: rows of the file before block b */
  double **x;    /* x[b - b0]: its rows (n x D, row-major) */
  size_t V;      /* regression: responses per row (cli_slabs_split) */
  double **y;    /* y[b - b0]: n x V responses */
} cli_slabs;

/* 1 when `path` can be read in slabs (a regular file, not stdin), as rank 0
 * sees it (collective under MPI: every rank must call it). */
int cli_slabs_possible(const char *path);
/* Read this rank's blocks of the data file `path` (D = 0: from the file).
 * Errors name the file, the block's first byte or row, line and column, and
 * stop every rank. */
void cli_slabs_load(const char *path, size_t D, cli_slabs *s);
void cli_slabs_free(cli_slabs *s);
/* Regression data (rows of D inputs then V responses; D = 0: the row length
 * - 1): split every block into x (n x D) and y (n x V); s->D becomes D. */
void cli_slabs_split(cli_slabs *s, size_t D);
/* The density estimate at M query points (or at the grid of src when lo is
 * not NULL) from every block's plan, reduced in block order on rank 0 into p
 * (M values, meaningful on rank 0). info: block 0's route (rank 0). */
void cli_slabs_density(const cli_slabs *s, const gfi_kernel *k, const double *R, const gfi_opts *o, size_t M,
                       const double *x, const double *lo, const double *hi, const size_t *gn, double *p,
                       gfi_fast_info *info);

/* Nadaraya-Watson at M query points from every block's sums, brought to a
 * common scale and added in block order on rank 0 into out (M x V) and flags
 * (M), as gfi_nw_eval_flags on the direct route. k: the Fourier kernel (with
 * R), or NULL for the Gaussian one (with H). Returns the flagged count
 * (rank 0). */
size_t cli_slabs_regress(const cli_slabs *s, const gfi_kernel *k, const double *R, const double *H, double denom_tol,
                         const gfi_opts *o, size_t M, const double *q, double *out, unsigned char *flags);

#endif
