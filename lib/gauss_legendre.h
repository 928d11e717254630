/* Internal: the n-point Gauss-Legendre rule on [-1, 1], the one
 * implementation of gfi (the band-limited route's frequency rule, the
 * selection integrals, the NUFFT kernel's transform). */
#ifndef GFI_GAUSS_LEGENDRE_H
#define GFI_GAUSS_LEGENDRE_H

#include <stddef.h>

/* Nodes x (increasing) and weights w, n >= 1, by Newton's method on the
 * three-term recurrence from Tricomi's initial guesses (GSL's tables lose
 * digits for counts it does not store: about 1e-11 at n = 50). The last few
 * rules of up to 512 nodes are kept and copied (thread-safe; the same bits). */
void gl_rule(size_t n, double *x, double *w);

/* The rule (x, w) of gl_rule mapped onto [a, b]: nodes xs (increasing for
 * a < b) and weights ws, n each. */
static inline void gl_panel(size_t n, const double *x, const double *w, double a, double b, double *xs,
                            double *ws) {
  const double h = 0.5 * (b - a), c = 0.5 * (a + b);
  for (size_t i = 0; i < n; i++) {
    xs[i] = c + h * x[i];
    ws[i] = h * w[i];
  }
}

#endif
