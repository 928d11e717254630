/* The data and query points of 'gfi density' and 'gfi regress': --data FILE
 * or a model draw (--model/--n/--seed, with --truth/--noise for regression),
 * --dim, and --at; plus the choice between the Fourier and the Gaussian
 * kernel that those commands and 'gfi regress-mse' share. */
#ifndef GFI_CLI_SOURCE_H
#define GFI_CLI_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gfi/gfi.h"

typedef struct {
  const char *data;  /* --data FILE */
  const char *model; /* --model SPEC */
  const char *truth; /* --truth F (regression) */
  const char *noise; /* --noise N (regression; NULL = none) */
  const char *at;    /* --at FILE */
  int grid;          /* 1 when --grid was given (cli_values("grid") holds the specs) */
  size_t n;          /* --n */
  size_t dim;        /* --dim, 0 = from the data */
  uint64_t seed;     /* --seed */
  int regress;       /* 1: (x, y) pairs; --truth and --noise belong to the table */
  /* set by cli_source_queries for --grid (freed by cli_source_free): axis j
   * has gn[j] points from lo[j] to hi[j] */
  double *lo, *hi;
  size_t *gn;
} cli_source;

/* Table entries for --at and --grid (the query points). */
#define CLI_SOURCE_QUERIES(s, heading)                                                                    \
  {"at", CLI_STR, &(s).at, .arg = "FILE", .section = heading,                                            \
   .help = "query points, D numbers per line, or a .npy array of shape (M, D)"},                         \
  {"grid", CLI_STR, NULL, .arg = "lo:hi:n", .flags = CLI_MULTI,                                          \
   .help = "query points on a grid instead: n points from lo to hi (lo alone for\n"                       \
           "n = 1); one spec for every axis or one per axis, comma-separated\n"                           \
           "(--grid -3:3:61,-2:2:41) or one --grid per axis in axis order; rows\n"                        \
           "in row-major order, the last axis fastest"}

/* Table entries for --n and --seed (the model draw). */
#define CLI_SOURCE_DRAW(s)                                                                     \
  {"n", CLI_SIZE, &(s).n, .arg = "N", .min = 1, .help = "number of points drawn (with --model)"}, \
  {"seed", CLI_U64, &(s).seed, .arg = "S", .help = "seed of the draw, random stream (S, 0) (with --model)"}

/* After cli_parse: one of --data and --model, --n and --seed (and --truth)
 * exactly with --model, one of --at and --grid; usage errors naming the
 * option. */
void cli_source_check(const cli_source *s);

/* The data: density (regress = 0) fills x (N x D); regression fills x
 * (N x D) and y (N x V). D is --dim, else the data file's column count
 * (density) or its row length - 1 (regression), else 1 for a model draw.
 * File errors are runtime errors naming file, line and column. */
void cli_source_load(const cli_source *s, size_t *D, size_t *N, double **x, size_t *V, double **y);

/* The query points of --at or --grid (M x D, malloc'ed); desc (n bytes)
 * gets their description for the "# at:" line. A grid also sets s->lo,
 * s->hi and s->gn (the library's grid evaluations take them). */
double *cli_source_queries(cli_source *s, size_t D, size_t *M, char *desc, size_t n);
void cli_source_free(cli_source *s);

/* --method direct|fast|auto and --tol EPS into o (usage errors naming the
 * option); the GPU backend has the direct route only. */
void cli_method(const char *method, gfi_opts *o);
/* cli_check, with GFI_ERANGE under --method fast said as such. */
void cli_check_route(int status, const gfi_opts *o, const char *what);
/* --method fast with D > 3: a usage error naming --method, D and the limit. */
void cli_check_method_dim(const gfi_opts *o, size_t D);
/* "# method:" line: the route that ran (info; NULL = the GPU engine's
 * direct sums), why, its frequency nodes and NUFFT grids, and its error
 * bound. */
void cli_method_meta(FILE *f, const gfi_opts *o, const gfi_fast_info *info);

/* --kernel fourier|gauss with --R (Fourier) or --bandwidth (Gaussian), each
 * only with its kernel; returns 1 for gauss. */
int cli_kernel_choice(const char *kernel, const char *R, const char *bandwidth);

#endif
