#include "gauss_legendre.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

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

static void gl_compute(size_t n, double *x, double *w) {
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

/* The last GL_CACHE rules of at most GL_CACHE_N nodes, kept for the next
 * call with the same n: a plan's fit asks for the same few counts every
 * time, and Newton's method costs O(n^2) (0.2 ms of a 3 ms fit + grid at
 * N = 1e6). A copy of a stored rule has the bits of a computed one. */
#define GL_CACHE 8
#define GL_CACHE_N 512
static struct {
  size_t n;
  double x[GL_CACHE_N], w[GL_CACHE_N];
} gl_cache[GL_CACHE];
static size_t gl_next;
static pthread_mutex_t gl_mutex = PTHREAD_MUTEX_INITIALIZER;

void gl_rule(size_t n, double *x, double *w) {
  if (n == 0) return;
  if (n > GL_CACHE_N) {
    gl_compute(n, x, w);
    return;
  }
  pthread_mutex_lock(&gl_mutex);
  for (size_t k = 0; k < GL_CACHE; k++)
    if (gl_cache[k].n == n) {
      memcpy(x, gl_cache[k].x, n * sizeof *x);
      memcpy(w, gl_cache[k].w, n * sizeof *w);
      pthread_mutex_unlock(&gl_mutex);
      return;
    }
  pthread_mutex_unlock(&gl_mutex);
  gl_compute(n, x, w);
  pthread_mutex_lock(&gl_mutex);
  size_t k = 0;
  while (k < GL_CACHE && gl_cache[k].n != n) k++;
  if (k == GL_CACHE) { /* not stored by another thread meanwhile */
    k = gl_next;
    gl_next = (gl_next + 1) % GL_CACHE;
    gl_cache[k].n = n;
    memcpy(gl_cache[k].x, x, n * sizeof *x);
    memcpy(gl_cache[k].w, w, n * sizeof *w);
  }
  pthread_mutex_unlock(&gl_mutex);
}
