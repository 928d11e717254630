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
 * lower factor, its upper triangle zeroed. A pivot (the diagonal entry
 * before its square root) must be finite and exceed rel S_jj (rel = 0: be
 * positive; lib/model.c asks D eps, so that a matrix positive semi-definite
 * only up to rounding is refused). Returns 0, or -1 with *fail (may be
 * NULL) = the 0-based index j of the first failing pivot: the leading
 * (j+1) x (j+1) minor is not positive definite. The one Cholesky of gfi. */
static inline int chol_lower_rel(size_t D, const double *S, double *L, double rel, size_t *fail) {
  for (size_t j = 0; j < D; j++) {
    for (size_t i = j; i < D; i++) {
      double t = 0;
      for (size_t k = 0; k < j; k++) t += L[i * D + k] * L[j * D + k];
      L[i * D + j] = S[i * D + j] + -1.0 * t;
    }
    double ajj = L[j * D + j];
    if (!(ajj > rel * S[j * D + j]) || !(ajj > 0) || !isfinite(ajj)) {
      if (fail) *fail = j;
      return -1;
    }
    double inv = 1.0 / sqrt(ajj);
    for (size_t i = j; i < D; i++) L[i * D + j] *= inv; /* the pivot too, as GSL does */
    for (size_t i = 0; i < j; i++) L[i * D + j] = 0.0;
  }
  return 0;
}

/* rel = 0, no index. */
static inline int chol_lower(size_t D, const double *S, double *L) { return chol_lower_rel(D, S, L, 0.0, NULL); }

#endif
