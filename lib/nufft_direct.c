/* Direct O(N K) sums with the NUFFT conventions of nufft.h: the reference the
 * fast transforms are tested against. Each output is one sum in a fixed order
 * (threads split the outputs), so the bits do not depend on nthreads. */
#include <math.h>
#include <stdint.h>
#include "nufft.h"
#include "gfi/status.h"
#include "par.h"

static int modes_total(int D, const size_t *ms, size_t *tot) {
  size_t t = 1;
  for (int d = 0; d < D; d++) {
    if (ms[d] == 0 || t > SIZE_MAX / ms[d]) return GFI_EINVAL;
    t *= ms[d];
  }
  *tot = t;
  return GFI_OK;
}

/* Mode index m (last axis fastest) -> frequencies k[D]. */
static void mode_of(int D, const size_t *ms, size_t m, double *k) {
  for (int d = D - 1; d >= 0; d--) {
    size_t i = m % ms[d];
    m /= ms[d];
    k[d] = (double)i - (double)(ms[d] / 2);
  }
}

/* One direct sum per output k (a task of the driver), in a fixed order. */
typedef struct {
  int D, sign;
  size_t N, tot; /* points, modes */
  const double *x, *c, *s, *f;
  const size_t *ms;
  double *fout, *cout;
} direct_ctx;

static int sum3(void *vc, size_t k, void *ws) {
  const direct_ctx *q = vc;
  (void)ws;
  const int D = q->D;
  const double *x = q->x, *c = q->c, *s = q->s;
  double re = 0, im = 0;
  for (size_t j = 0; j < q->N; j++) {
    double ph = 0;
    for (int d = 0; d < D; d++) ph += s[k * (size_t)D + d] * x[j * (size_t)D + d];
    double sn = sin(ph) * q->sign, cs = cos(ph);
    re += c[2 * j] * cs - c[2 * j + 1] * sn;
    im += c[2 * j] * sn + c[2 * j + 1] * cs;
  }
  q->fout[2 * k] = re;
  q->fout[2 * k + 1] = im;
  return GFI_OK;
}

static int sum1(void *vc, size_t m, void *ws) {
  const direct_ctx *q = vc;
  (void)ws;
  const int D = q->D;
  const double *x = q->x, *c = q->c;
  double k[3];
  mode_of(D, q->ms, m, k);
  double re = 0, im = 0;
  for (size_t j = 0; j < q->N; j++) {
    double ph = 0;
    for (int d = 0; d < D; d++) ph += k[d] * x[j * (size_t)D + d];
    double sn = sin(ph) * q->sign, cs = cos(ph);
    re += c[2 * j] * cs - c[2 * j + 1] * sn;
    im += c[2 * j] * sn + c[2 * j + 1] * cs;
  }
  q->fout[2 * m] = re;
  q->fout[2 * m + 1] = im;
  return GFI_OK;
}

static int sum2(void *vc, size_t j, void *ws) {
  const direct_ctx *q = vc;
  (void)ws;
  const int D = q->D;
  const double *x = q->x, *f = q->f;
  double re = 0, im = 0;
  for (size_t m = 0; m < q->tot; m++) {
    double k[3];
    mode_of(D, q->ms, m, k);
    double ph = 0;
    for (int d = 0; d < D; d++) ph += k[d] * x[j * (size_t)D + d];
    double sn = sin(ph) * q->sign, cs = cos(ph);
    re += f[2 * m] * cs - f[2 * m + 1] * sn;
    im += f[2 * m] * sn + f[2 * m + 1] * cs;
  }
  q->cout[2 * j] = re;
  q->cout[2 * j + 1] = im;
  return GFI_OK;
}

int nufft3_direct(int D, size_t N, const double *x, const double *c, int sign, size_t K,
                  const double *s, double *f, int nthreads) {
  if (D < 1 || D > 3 || (sign != 1 && sign != -1) || (N && (!x || !c)) || (K && (!s || !f)))
    return GFI_EINVAL;
  direct_ctx q = {.D = D, .sign = sign, .N = N, .x = x, .c = c, .s = s, .fout = f};
  return par_for(K, par_threads(nthreads), 0, sum3, &q);
}

int nufft1_direct(int D, size_t N, const double *x, const double *c, int sign, const size_t *ms,
                  double *f, int nthreads) {
  if (D < 1 || D > 3 || !ms || (sign != 1 && sign != -1) || (N && (!x || !c)) || !f)
    return GFI_EINVAL;
  size_t tot;
  int st = modes_total(D, ms, &tot);
  if (st) return st;
  direct_ctx q = {.D = D, .sign = sign, .N = N, .x = x, .c = c, .ms = ms, .fout = f};
  return par_for(tot, par_threads(nthreads), 0, sum1, &q);
}

int nufft2_direct(int D, size_t N, const double *x, double *c, int sign, const size_t *ms,
                  const double *f, int nthreads) {
  if (D < 1 || D > 3 || !ms || (sign != 1 && sign != -1) || (N && (!x || !c)) || !f)
    return GFI_EINVAL;
  size_t tot;
  int st = modes_total(D, ms, &tot);
  if (st) return st;
  direct_ctx q = {.D = D, .sign = sign, .N = N, .tot = tot, .x = x, .f = f, .ms = ms, .cout = c};
  return par_for(N, par_threads(nthreads), 0, sum2, &q);
}
