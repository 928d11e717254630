#include "gauss_legendre.h"

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* P_n(z) in *p1 and P_{n-1}(z) in *p0 by the three-term recurrence. */
static void legendre_pair(size_t n, double z, double *p0, double *p1) {
  double a = 1, b = z;
  for (size_t k = 2; k <= n; k++) {
    double c = ((2.0 * (double)k - 1) * z * b - ((double)k - 1) * a) / (double)k;
    a = b;
    b = c;
  }
  *p0 = n == 1 ? 1 : a;
  *p1 = b;
}

void gl_rule(size_t n, double *x, double *w) {
  const size_t m = (n + 1) / 2;
  for (size_t i = 0; i < m; i++) {
    /* Tricomi's initial guess of the i-th largest root */
    double z = cos(M_PI * ((double)i + 0.75) / ((double)n + 0.5)), p0, p1, dp;
    for (int it = 0; it < 100; it++) {
      legendre_pair(n, z, &p0, &p1);
      dp = (double)n * (z * p1 - p0) / (z * z - 1);
      double dz = p1 / dp;
      z -= dz;
      if (fabs(dz) < 1e-16) break;
    }
    legendre_pair(n, z, &p0, &p1);
    dp = (double)n * (z * p1 - p0) / (z * z - 1);
    double wi = 2.0 / ((1 - z * z) * dp * dp);
    x[n - 1 - i] = z;
    x[i] = -z;
    w[i] = w[n - 1 - i] = wi;
  }
  if (n % 2) x[m - 1] = 0;
}
