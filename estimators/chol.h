/* Internal: Cholesky factor of a small symmetric matrix without GSL.
 *
 * gsl_linalg_cholesky_decomp1 reports a matrix that is not positive
 * definite through GSL's error handler (which aborts by default), and gfi
 * must return a status instead. This is GSL's unblocked algorithm with its
 * arithmetic (each column: the dot products of the rows computed so far
 * subtracted, then scaled by the reciprocal of the pivot's square root), so
 * for D <= 24, where GSL 2.7 uses that algorithm, the factor has the same
 * bits as GSL's; above, GSL's recursive algorithm rounds differently. */
#ifndef GFI_CHOL_H
#define GFI_CHOL_H

#include <math.h>
#include <stddef.h>

/* S (D x D, row-major, only the lower triangle is read) = L L^T: L gets the
 * lower factor, its upper triangle zeroed. Returns 0, or -1 when a pivot is
 * not positive (not positive definite, or not finite). */
static inline int chol_lower(size_t D, const double *S, double *L) {
  for (size_t j = 0; j < D; j++) {
    for (size_t i = j; i < D; i++) {
      double t = 0;
      for (size_t k = 0; k < j; k++) t += L[i * D + k] * L[j * D + k];
      L[i * D + j] = S[i * D + j] + -1.0 * t;
    }
    double ajj = L[j * D + j];
    if (!(ajj > 0) || !isfinite(ajj)) return -1;
    double inv = 1.0 / sqrt(ajj);
    for (size_t i = j; i < D; i++) L[i * D + j] *= inv; /* the pivot too, as GSL does */
    for (size_t i = 0; i < j; i++) L[i * D + j] = 0.0;
  }
  return 0;
}

#endif
