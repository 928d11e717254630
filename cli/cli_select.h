/* Data-driven radii for the CLI: `--R lscv` (gfi density), `--R loocv`
 * (gfi regress) and the metadata line that records the choice. */
#ifndef GFI_CLI_SELECT_H
#define GFI_CLI_SELECT_H

#include <stdio.h>
#include "gfi/gfi.h"

/* 1 when --R names a criterion ("lscv" or "loocv"). */
int cli_R_is_select(const char *Rs);

/* The radii chosen by the criterion `Rs` names (must match `want`, else a
 * usage error naming --R) for the data (x: N x D; y: N x V for loocv, else
 * NULL), with the sums' method and tol from o; malloc'ed D values. */
double *cli_select_radii(const char *Rs, const char *want, const gfi_kernel *k, size_t N, size_t D,
                         size_t V, const double *x, const double *y, const gfi_opts *o,
                         gfi_select_result *res);

/* 1 when --bandwidth names a data-driven Gaussian bandwidth matrix: ns
 * (normal reference, ks::Hns), lscv, pi (plug-in, ks::Hpi), pi-diag
 * (ks::Hpi.diag); the last three for D <= 2. */
int cli_bw_is_select(const char *bw);

/* That matrix for the data x (N x D); a usage error naming --bandwidth with
 * weights (the selectors weigh the points equally) or D > 2; malloc'ed D x D.
 * note (may be NULL): for pi and pi-diag in 2-D, the pilots and the route of
 * the functionals, for the metadata; else empty. */
double *cli_select_bandwidth(const char *bw, size_t N, size_t D, const double *x, const double *w,
                             const gfi_opts *o, char *note, size_t nnote);

/* "# R-select: CRIT, R = ..., CRIT = ..., scan ..." */
void cli_select_meta(FILE *f, const char *crit, const gfi_select_result *res, size_t D);

#endif
