/* The NUFFT (lib/nufft.c) against the direct sums (lib/nufft_direct.c):
 * accuracy for types 1, 2, 3 in D = 1, 2, 3 at tolerances 1e-3 .. 1e-13,
 * streaming type 3 against one-shot, identical bits for any thread count,
 * wildly different source/target spans, edge cases and error paths. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "nufft.h"
#include "nufft_internal.h"
#include "simd_sincos.h"
#include "gfi/status.h"

/* splitmix64: fixed-seed uniforms */
static uint64_t rng_state;
static double unif(double a, double b) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return a + (b - a) * ((double)(z >> 11) * 0x1.0p-53);
}
static void fill(double *v, size_t n, double a, double b) {
  for (size_t i = 0; i < n; i++) v[i] = unif(a, b);
}

static double l1c(const double *c, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += hypot(c[2 * i], c[2 * i + 1]);
  return s;
}

/* max |f - g| / sum|c| and ||f - g||_2 / ||g||_2 */
static void errs(const double *f, const double *g, size_t n, double sumc, double *einf,
                 double *e2) {
  double m = 0, num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double dr = f[2 * i] - g[2 * i], di = f[2 * i + 1] - g[2 * i + 1];
    double a = hypot(dr, di);
    if (a > m || a != a) m = a;
    num += dr * dr + di * di;
    den += g[2 * i] * g[2 * i] + g[2 * i + 1] * g[2 * i + 1];
  }
  *einf = m / sumc;
  *e2 = sqrt(num / den);
}

/* The tolerance factor this implementation is held to (measured: worst
 * e_inf/tol and e_2/tol are printed by the sweep). */
#define FAC 10.0

static const double tols[] = {1e-3, 1e-6, 1e-9, 1e-11, 1e-13};
#define NTOL 5

static double worst_ratio = 0;

static void sweep(int type, int D) {
  size_t ms[3] = {D == 1 ? 97 : D == 2 ? 24 : 12, D == 1 ? 1 : 19, 10};
  size_t N = 5000, K = D == 3 ? 300 : 500; /* N >= 4096: the parallel spreader */
  size_t mt = 1;
  for (int d = 0; d < D; d++) mt *= ms[d];
  size_t nout = type == 2 ? N : type == 1 ? mt : K;
  double *x = malloc(N * D * sizeof(double)), *c = malloc(2 * N * sizeof(double));
  double *s = malloc(K * D * sizeof(double)), *fm = malloc(2 * mt * sizeof(double));
  double *out = malloc(2 * nout * sizeof(double)), *ref = malloc(2 * nout * sizeof(double));
  rng_state = 1000 + 10 * type + D;
  if (type == 3) {
    /* sources in [2, 5] per axis, targets in [-7, 13]: X S = 1.5 * 10 */
    fill(x, N * D, 2, 5);
    fill(s, K * D, -7, 13);
  } else {
    fill(x, N * D, -3 * M_PI, 3 * M_PI);
  }
  fill(c, 2 * N, -1, 1);
  fill(fm, 2 * mt, -1, 1);
  int sign = type == 2 ? -1 : 1;
  double sumc = type == 2 ? l1c(fm, mt) : l1c(c, N);
  if (type == 1) nufft1_direct(D, N, x, c, sign, ms, ref, 1);
  if (type == 2) nufft2_direct(D, N, x, ref, sign, ms, fm, 1);
  if (type == 3) nufft3_direct(D, N, x, c, sign, K, s, ref, 1);
  double prev_inf = 1, prev_2 = 1;
  for (int it = 0; it < NTOL; it++) {
    nufft_opts o;
    nufft_default_opts(&o);
    o.tol = tols[it];
    o.nthreads = 2;
    int st = type == 1   ? nufft1(D, N, x, c, sign, ms, out, &o)
             : type == 2 ? nufft2(D, N, x, out, sign, ms, fm, &o)
                         : nufft3(D, N, x, c, sign, K, s, out, &o);
    CHECK_STATUS(st, GFI_OK);
    double einf, e2;
    errs(out, ref, nout, sumc, &einf, &e2);
    printf("type %d D %d tol %.0e: e_inf %.2e (%.2f tol)  e_2 %.2e (%.2f tol)\n", type, D,
           tols[it], einf, einf / tols[it], e2, e2 / tols[it]);
    if (einf / tols[it] > worst_ratio) worst_ratio = einf / tols[it];
    if (e2 / tols[it] > worst_ratio) worst_ratio = e2 / tols[it];
    CHECK(einf <= FAC * tols[it], "type %d D %d tol %g: e_inf %g", type, D, tols[it], einf);
    CHECK(e2 <= FAC * tols[it], "type %d D %d tol %g: e_2 %g", type, D, tols[it], e2);
    if (it > 0) {
      CHECK(einf < prev_inf, "type %d D %d: e_inf does not decrease at tol %g", type, D,
            tols[it]);
      CHECK(e2 < prev_2, "type %d D %d: e_2 does not decrease at tol %g", type, D, tols[it]);
    }
    prev_inf = einf;
    prev_2 = e2;
  }
  free(x); free(c); free(s); free(fm); free(out); free(ref);
}

/* The worst case of the bound max |f - f_exact| <= tol sum |c|: one source
 * (every output carries its whole error, as for coherent sources), at many
 * positions, types 1 and 3. */
#define WORST_FAC 3.0
static void worst_case(void) {
  const double wt[] = {1e-3, 1e-6, 1e-9, 1e-12};
  for (int D = 1; D <= 3; D++)
    for (int it = 0; it < 4; it++) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = wt[it];
      size_t ms[3] = {D == 1 ? 200 : D == 2 ? 30 : 12, D == 2 ? 30 : 12, 12}, mt = 1, K = 200;
      for (int d = 0; d < D; d++) mt *= ms[d];
      double *f = malloc(2 * mt * sizeof(double)), *r = malloc(2 * mt * sizeof(double));
      double *s = malloc(K * D * sizeof(double));
      rng_state = 31 + D;
      fill(s, K * D, -3, 3);
      double lo[3] = {-6, -6, -6}, hi[3] = {6, 6, 6}, w1 = 0, w3 = 0;
      nufft3_plan *p = NULL;
      CHECK_STATUS(nufft3_plan_make(&p, D, lo, hi, 1, K, s, &o), GFI_OK);
      for (int rep = 0; rep < 25 && p; rep++) {
        double x[3], c[2] = {1, 0};
        fill(x, D, -M_PI, M_PI);
        nufft1(D, 1, x, c, 1, ms, f, &o);
        nufft1_direct(D, 1, x, c, 1, ms, r, 1);
        for (size_t k = 0; k < mt; k++)
          w1 = fmax(w1, hypot(f[2 * k] - r[2 * k], f[2 * k + 1] - r[2 * k + 1]));
        fill(x, D, -6, 6);
        nufft3_reset(p);
        nufft3_add(p, 1, x, c);
        nufft3_exec(p, f);
        nufft3_direct(D, 1, x, c, 1, K, s, r, 1);
        for (size_t k = 0; k < K; k++)
          w3 = fmax(w3, hypot(f[2 * k] - r[2 * k], f[2 * k + 1] - r[2 * k + 1]));
      }
      nufft3_destroy(p);
      printf("worst case D %d tol %.0e: type 1 %.2f tol, type 3 %.2f tol\n", D, wt[it],
             w1 / wt[it], w3 / wt[it]);
      CHECK(w1 <= WORST_FAC * wt[it] && w3 <= WORST_FAC * wt[it],
            "worst case D %d tol %g: %g %g", D, wt[it], w1, w3);
      free(f); free(r); free(s);
    }
}

/* Streaming (blocks) against one-shot, reset, and the box semantics. */
static void streaming(int D) {
  size_t N = 3000, K = 200;
  double *x = malloc(N * D * sizeof(double)), *c = malloc(2 * N * sizeof(double));
  double *s = malloc(K * D * sizeof(double));
  double *f1 = malloc(2 * K * sizeof(double)), *f2 = malloc(2 * K * sizeof(double));
  double *f3 = malloc(2 * K * sizeof(double)), *ref = malloc(2 * K * sizeof(double));
  rng_state = 77 + D;
  fill(x, N * D, -1, 3);
  fill(s, K * D, -4, 9);
  fill(c, 2 * N, -1, 1);
  nufft_opts o;
  nufft_default_opts(&o);
  o.tol = 1e-10;
  CHECK_STATUS(nufft3(D, N, x, c, 1, K, s, f1, &o), GFI_OK);
  double lo[3], hi[3];
  for (int d = 0; d < D; d++) {
    lo[d] = hi[d] = x[d];
    for (size_t j = 0; j < N; j++) {
      if (x[j * D + d] < lo[d]) lo[d] = x[j * D + d];
      if (x[j * D + d] > hi[d]) hi[d] = x[j * D + d];
    }
  }
  nufft3_plan *p = NULL;
  CHECK_STATUS(nufft3_plan_make(&p, D, lo, hi, 1, K, s, &o), GFI_OK);
  if (!p) return;
  size_t blocks[] = {1, 999, 0, 1500, 500};
  size_t j0 = 0;
  for (int b = 0; b < 5; b++) {
    CHECK_STATUS(nufft3_add(p, blocks[b], x + j0 * D, c + 2 * j0), GFI_OK);
    j0 += blocks[b];
  }
  CHECK(j0 == N, "blocks");
  CHECK_STATUS(nufft3_exec(p, f2), GFI_OK);
  double sumc = l1c(c, N), einf, e2;
  errs(f2, f1, K, sumc, &einf, &e2);
  printf("streaming D %d, same box: max |stream - oneshot| / sum|c| = %.2e\n", D, einf);
  CHECK(einf <= 1e-14, "streaming D %d: %g", D, einf);
  /* exec again gives the same bits; reset + add all = one block */
  CHECK_STATUS(nufft3_exec(p, f3), GFI_OK);
  CHECK(memcmp(f2, f3, 2 * K * sizeof(double)) == 0, "exec twice");
  nufft3_reset(p);
  CHECK_STATUS(nufft3_add(p, N, x, c), GFI_OK);
  CHECK_STATUS(nufft3_exec(p, f3), GFI_OK);
  CHECK(memcmp(f1, f3, 2 * K * sizeof(double)) == 0, "reset + one block = one-shot bits");
  /* real strengths (and one strength for all) give the bits of the same
   * strengths passed as complex numbers with imaginary part 0 */
  {
    double *cre = malloc(N * sizeof *cre), *cz = malloc(2 * N * sizeof *cz);
    double *f4 = malloc(2 * K * sizeof *f4);
    if (!cre || !cz || !f4) {
      CHECK(0, "out of memory");
    } else {
      for (size_t j = 0; j < N; j++) cre[j] = c[2 * j], cz[2 * j] = c[2 * j], cz[2 * j + 1] = 0;
      nufft3_reset(p);
      CHECK_STATUS(nufft3_add(p, N, x, cz), GFI_OK);
      CHECK_STATUS(nufft3_exec(p, f3), GFI_OK);
      nufft3_reset(p);
      CHECK_STATUS(nufft3_add_real(p, N, x, cre, 0), GFI_OK);
      CHECK_STATUS(nufft3_exec(p, f4), GFI_OK);
      CHECK(memcmp(f3, f4, 2 * K * sizeof(double)) == 0, "real strengths = complex with 0");
      for (size_t j = 0; j < N; j++) cz[2 * j] = -0.375;
      nufft3_reset(p);
      CHECK_STATUS(nufft3_add(p, N, x, cz), GFI_OK);
      CHECK_STATUS(nufft3_exec(p, f3), GFI_OK);
      nufft3_reset(p);
      CHECK_STATUS(nufft3_add_real(p, N, x, NULL, -0.375), GFI_OK);
      CHECK_STATUS(nufft3_exec(p, f4), GFI_OK);
      CHECK(memcmp(f3, f4, 2 * K * sizeof(double)) == 0, "one strength = all of them given");
      CHECK_STATUS(nufft3_add_real(p, 1, x, NULL, NAN), GFI_ENONFINITE);
      cre[0] = INFINITY;
      CHECK_STATUS(nufft3_add_real(p, 1, x, cre, 0), GFI_ENONFINITE);
      CHECK_STATUS(nufft3_add(p, 1, x, NULL), GFI_EINVAL);
    }
    free(cre), free(cz), free(f4);
  }
  size_t nf[3];
  int w;
  nufft3_info(p, nf, &w);
  CHECK(w == 12 && nf[0] >= 2 * 12, "info: width %d nf %zu", w, nf[0]);
  nufft3_destroy(p);
  /* a wider box than the data: a different grid, same result to tol */
  for (int d = 0; d < D; d++) {
    lo[d] -= 1.5;
    hi[d] += 0.25;
  }
  CHECK_STATUS(nufft3_plan_make(&p, D, lo, hi, 1, K, s, &o), GFI_OK);
  if (!p) return;
  for (j0 = 0; j0 < N; j0 += 700)
    CHECK_STATUS(nufft3_add(p, N - j0 < 700 ? N - j0 : 700, x + j0 * D, c + 2 * j0), GFI_OK);
  CHECK_STATUS(nufft3_exec(p, f2), GFI_OK);
  nufft3_direct(D, N, x, c, 1, K, s, ref, 1);
  errs(f2, ref, K, sumc, &einf, &e2);
  printf("streaming D %d, wider box: e_inf %.2e e_2 %.2e\n", D, einf, e2);
  CHECK(einf <= FAC * o.tol && e2 <= FAC * o.tol, "wider box D %d: %g %g", D, einf, e2);
  nufft3_destroy(p);
  free(x); free(c); free(s); free(f1); free(f2); free(f3); free(ref);
}

/* Identical bits for nthreads 1, 2, 3, 8 (enough points for every parallel
 * path to engage). m0: the modes of axis 0 (0: the default); 1-D grids of at
 * most 4096 cells spread without a sort, in blocks (lib/nufft_spread.c). */
static void threads(int D, size_t m0) {
  size_t N = 70000, K = 5000;
  size_t ms[3] = {m0 ? m0 : D == 1 ? 3000 : D == 2 ? 60 : 20, 50, 16};
  size_t mt = 1;
  for (int d = 0; d < D; d++) mt *= ms[d];
  double *x = malloc(N * D * sizeof(double)), *c = malloc(2 * N * sizeof(double));
  double *s = malloc(K * D * sizeof(double)), *fm = malloc(2 * mt * sizeof(double));
  size_t nmax = N > mt ? N : mt;
  double *a = malloc(2 * nmax * sizeof(double)), *b = malloc(2 * nmax * sizeof(double));
  rng_state = 5 + D;
  /* clustered sources: unequal slabs */
  for (size_t j = 0; j < N * D; j++) x[j] = j % 3 ? unif(-3, 3) : unif(0.5, 0.7);
  fill(s, K * D, -30, 30);
  fill(c, 2 * N, -1, 1);
  fill(fm, 2 * mt, -1, 1);
  const int nts[] = {1, 2, 3, 8};
  for (int type = 1; type <= 3; type++) {
    size_t nout = type == 1 ? mt : type == 2 ? N : K;
    for (int i = 0; i < 4; i++) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = 1e-9;
      o.nthreads = nts[i];
      double *out = i ? b : a;
      int st = type == 1   ? nufft1(D, N, x, c, -1, ms, out, &o)
               : type == 2 ? nufft2(D, N, x, out, 1, ms, fm, &o)
                           : nufft3(D, N, x, c, -1, K, s, out, &o);
      CHECK_STATUS(st, GFI_OK);
      if (i)
        CHECK(memcmp(a, b, 2 * nout * sizeof(double)) == 0,
              "type %d D %d: bits differ between 1 and %d threads", type, D, nts[i]);
    }
  }
  free(x); free(c); free(s); free(fm); free(a); free(b);
}

/* Type 3 with X S from 1 to 1e4 (and S X split very unevenly). */
static void spans(void) {
  struct { int D; double X, S; } cases[] = {
      {1, 1, 1},     {1, 1e-3, 1e3},  {1, 100, 0.1},  {1, 10, 100},   {1, 1e4, 0.1},
      {1, 0.01, 1e5}, {1, 100, 100},  {1, 1, 1e4},    {2, 1, 1},      {2, 30, 10},
      {2, 0.1, 3000}, {3, 2, 5},      {3, 1e-2, 3e3},
  };
  size_t N = 1000, K = 300;
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    int D = cases[ci].D;
    double X = cases[ci].X, S = cases[ci].S;
    double *x = malloc(N * D * sizeof(double)), *c = malloc(2 * N * sizeof(double));
    double *s = malloc(K * D * sizeof(double));
    double *f = malloc(2 * K * sizeof(double)), *ref = malloc(2 * K * sizeof(double));
    rng_state = 900 + ci;
    for (size_t j = 0; j < N * D; j++) x[j] = unif(-X, X) + 3 * X;
    for (size_t k = 0; k < K * D; k++) s[k] = unif(-S, S) - 0.5 * S;
    fill(c, 2 * N, -1, 1);
    nufft3_direct(D, N, x, c, 1, K, s, ref, 1);
    for (int it = 1; it < 4; it++) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = tols[it];
      CHECK_STATUS(nufft3(D, N, x, c, 1, K, s, f, &o), GFI_OK);
      double einf, e2;
      errs(f, ref, K, l1c(c, N), &einf, &e2);
      /* the direct sum itself carries phase rounding ~ 1e-16 |s||x| */
      double floor_ = 1e-16 * (4 * X) * (1.5 * S) * D * 10;
      if (it == 3)
        printf("span D %d X %g S %g (XS %g) tol %.0e: e_inf %.2e e_2 %.2e\n", D, X, S, X * S,
               tols[it], einf, e2);
      CHECK(einf <= FAC * tols[it] + floor_, "span D %d X %g S %g tol %g: e_inf %g", D, X, S,
            tols[it], einf);
    }
    free(x); free(c); free(s); free(f); free(ref);
  }
}

/* More points than one spreading pass holds (2^18): the passes chain. */
static void many_points(void) {
  size_t N = 600000, K = 40, ms[1] = {41};
  double *x = malloc(N * sizeof(double)), *c = malloc(2 * N * sizeof(double));
  double *c2 = malloc(2 * N * sizeof(double)), *r2 = malloc(2 * N * sizeof(double));
  double s[40], f[82], ref[82], fm[82];
  rng_state = 4242;
  fill(x, N, -3 * M_PI, 3 * M_PI);
  fill(c, 2 * N, -1, 1);
  fill(s, K, -20, 20);
  fill(fm, 82, -1, 1);
  nufft_opts o;
  nufft_default_opts(&o);
  o.tol = 1e-9;
  double einf, e2, sumc = l1c(c, N);
  CHECK_STATUS(nufft1(1, N, x, c, 1, ms, f, &o), GFI_OK);
  nufft1_direct(1, N, x, c, 1, ms, ref, 0);
  errs(f, ref, 41, sumc, &einf, &e2);
  CHECK(einf <= FAC * o.tol, "type 1, N = %zu: %g", N, einf);
  CHECK_STATUS(nufft2(1, N, x, c2, 1, ms, fm, &o), GFI_OK);
  nufft2_direct(1, N, x, r2, 1, ms, fm, 0);
  errs(c2, r2, N, l1c(fm, 41), &einf, &e2);
  CHECK(einf <= FAC * o.tol, "type 2, N = %zu: %g", N, einf);
  CHECK_STATUS(nufft3(1, N, x, c, 1, K, s, f, &o), GFI_OK);
  nufft3_direct(1, N, x, c, 1, K, s, ref, 0);
  errs(f, ref, K, sumc, &einf, &e2);
  CHECK(einf <= FAC * o.tol, "type 3, N = %zu: %g", N, einf);
  free(x); free(c); free(c2); free(r2);
}

static void edges(void) {
  nufft_opts o;
  nufft_default_opts(&o);
  o.tol = 1e-9;
  size_t ms[3] = {8, 5, 3};
  double f[2 * 120], g[2 * 120];
  double x[3 * 6], c[2 * 6];
  /* N = 0: type 1 and 3 give zeros, type 2 does nothing */
  for (int i = 0; i < 240; i++) f[i] = 1;
  CHECK_STATUS(nufft1(3, 0, NULL, NULL, 1, ms, f, &o), GFI_OK);
  int zero = 1;
  for (int i = 0; i < 2 * 120; i++) zero &= f[i] == 0;
  CHECK(zero, "type 1 with N = 0 gives zeros");
  double s[6] = {0.5, -2, 7, 1, 2, 3};
  for (int i = 0; i < 6; i++) f[i] = 1;
  CHECK_STATUS(nufft3(3, 0, NULL, NULL, 1, 2, s, f, &o), GFI_OK);
  CHECK(f[0] == 0 && f[1] == 0 && f[2] == 0 && f[3] == 0, "type 3 with N = 0");
  CHECK_STATUS(nufft2(2, 0, NULL, NULL, 1, ms, f, &o), GFI_OK);
  CHECK_STATUS(nufft3(2, 5, x, c, 1, 0, NULL, NULL, &o), GFI_OK);
  /* points on the edges of [-3 pi, 3 pi) and of the period, all equal points */
  double ex[6] = {-3 * M_PI, 3 * M_PI, -M_PI, M_PI, 0, 3 * M_PI - 1e-15};
  rng_state = 3;
  fill(c, 12, -1, 1);
  for (int D = 1; D <= 3; D++) {
    for (int j = 0; j < 6; j++)
      for (int d = 0; d < D; d++) x[j * D + d] = ex[(j + d) % 6];
    size_t mt = 1;
    for (int d = 0; d < D; d++) mt *= ms[d];
    CHECK_STATUS(nufft1(D, 6, x, c, 1, ms, f, &o), GFI_OK);
    nufft1_direct(D, 6, x, c, 1, ms, g, 1);
    double einf, e2;
    errs(f, g, mt, l1c(c, 6), &einf, &e2);
    CHECK(einf <= FAC * o.tol, "edges type 1 D %d: %g", D, einf);
    double cc[12];
    CHECK_STATUS(nufft2(D, 6, x, cc, -1, ms, g, &o), GFI_OK);
    double ref[12];
    nufft2_direct(D, 6, x, ref, -1, ms, g, 1);
    errs(cc, ref, 6, l1c(g, mt), &einf, &e2);
    CHECK(einf <= FAC * o.tol, "edges type 2 D %d: %g", D, einf);
    /* all sources equal, one target (X = 0, S = 0) and two targets */
    for (int j = 0; j < 6 * D; j++) x[j] = 1.25;
    double t3[4], r3[4];
    CHECK_STATUS(nufft3(D, 6, x, c, 1, 1, s, t3, &o), GFI_OK);
    nufft3_direct(D, 6, x, c, 1, 1, s, r3, 1);
    errs(t3, r3, 1, l1c(c, 6), &einf, &e2);
    CHECK(einf <= FAC * o.tol, "type 3 X = S = 0 D %d: %g", D, einf);
    double s2[6] = {3, -1, 2, 0.5, 4, -9};
    CHECK_STATUS(nufft3(D, 6, x, c, -1, 2, s2, t3, &o), GFI_OK);
    nufft3_direct(D, 6, x, c, -1, 2, s2, r3, 1);
    errs(t3, r3, 2, l1c(c, 6), &einf, &e2);
    CHECK(einf <= FAC * o.tol, "type 3 X = 0 D %d: %g", D, einf);
    /* sources on the edges of the streaming box */
    double lo[3] = {-1, -1, -1}, hi[3] = {2, 2, 2};
    for (int j = 0; j < 6; j++)
      for (int d = 0; d < D; d++) x[j * D + d] = (j + d) % 2 ? lo[d] : hi[d];
    nufft3_plan *p = NULL;
    CHECK_STATUS(nufft3_plan_make(&p, D, lo, hi, 1, 2, s2, &o), GFI_OK);
    CHECK_STATUS(nufft3_add(p, 6, x, c), GFI_OK);
    CHECK_STATUS(nufft3_exec(p, t3), GFI_OK);
    nufft3_direct(D, 6, x, c, 1, 2, s2, r3, 1);
    errs(t3, r3, 2, l1c(c, 6), &einf, &e2);
    CHECK(einf <= FAC * o.tol, "type 3 box edges D %d: %g", D, einf);
    nufft3_destroy(p);
  }
  /* one mode, and the extreme tolerances */
  size_t one[3] = {1, 1, 1};
  x[0] = 0.3;
  CHECK_STATUS(nufft1(1, 1, x, c, 1, one, f, &o), GFI_OK);
  CHECK(fabs(f[0] - c[0]) < 1e-8 && fabs(f[1] - c[1]) < 1e-8, "one mode: %g %g", f[0], f[1]);
  double tl[] = {0.5, 0.1, 1e-15};
  rng_state = 11;
  double xx[2 * 200], c2[2 * 200], ff[2 * 30 * 30], rr[2 * 30 * 30];
  size_t m2[2] = {30, 30};
  fill(xx, 400, -M_PI, M_PI);
  fill(c2, 400, -1, 1);
  nufft1_direct(2, 200, xx, c2, 1, m2, rr, 1);
  for (int i = 0; i < 3; i++) {
    o.tol = tl[i];
    CHECK_STATUS(nufft1(2, 200, xx, c2, 1, m2, ff, &o), GFI_OK);
    double einf, e2;
    errs(ff, rr, 900, l1c(c2, 200), &einf, &e2);
    printf("tol %g: e_inf %.2e e_2 %.2e\n", tl[i], einf, e2);
    CHECK(einf <= (i == 2 ? 1e-13 : FAC * tl[i]), "tol %g: %g", tl[i], einf);
  }
  /* other upsampling factors */
  double us[] = {1.25, 1.5, 3};
  for (int i = 0; i < 3; i++) {
    o.tol = 1e-8;
    o.upsampfac = us[i];
    CHECK_STATUS(nufft1(2, 200, xx, c2, 1, m2, ff, &o), GFI_OK);
    double einf, e2;
    errs(ff, rr, 900, l1c(c2, 200), &einf, &e2);
    printf("upsampfac %g tol 1e-8: e_inf %.2e\n", us[i], einf);
    CHECK(einf <= FAC * o.tol, "upsampfac %g: %g", us[i], einf);
  }
}

static void error_paths(void) {
  nufft_opts o;
  nufft_default_opts(&o);
  double x[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, c[6] = {1, 0, 1, 0, 1, 0}, f[2 * 64];
  size_t ms[3] = {4, 4, 4};
  double s[3] = {1, 2, 3};
  CHECK_STATUS(nufft1(0, 3, x, c, 1, ms, f, &o), GFI_EINVAL);
  CHECK_STATUS(nufft1(4, 1, x, c, 1, ms, f, &o), GFI_EINVAL);
  CHECK_STATUS(nufft1(1, 3, x, c, 0, ms, f, &o), GFI_EINVAL);
  CHECK_STATUS(nufft1(1, 3, NULL, c, 1, ms, f, &o), GFI_EINVAL);
  CHECK_STATUS(nufft1(1, 3, x, c, 1, NULL, f, &o), GFI_EINVAL);
  CHECK_STATUS(nufft2(1, 3, x, NULL, 1, ms, f, &o), GFI_EINVAL);
  CHECK_STATUS(nufft3(1, 3, x, c, 1, 2, NULL, f, &o), GFI_EINVAL);
  CHECK_STATUS(nufft3(1, 3, x, c, 2, 2, s, f, &o), GFI_EINVAL);
  size_t m0[1] = {0};
  CHECK_STATUS(nufft1(1, 3, x, c, 1, m0, f, &o), GFI_EINVAL);
  double badtol[] = {0, 1, 1e-16, -1e-3, NAN, 2};
  for (int i = 0; i < 6; i++) {
    o.tol = badtol[i];
    CHECK_STATUS(nufft1(1, 3, x, c, 1, ms, f, &o), GFI_EINVAL);
    CHECK_STATUS(nufft3(1, 3, x, c, 1, 2, s, f, &o), GFI_EINVAL);
  }
  nufft_default_opts(&o);
  o.upsampfac = 1.0;
  CHECK_STATUS(nufft2(1, 3, x, c, 1, ms, f, &o), GFI_EINVAL);
  nufft_default_opts(&o);
  /* non-finite data */
  double xn[3] = {0.1, NAN, 0.3}, cn[6] = {1, 0, INFINITY, 0, 1, 0}, sn[2] = {1, -INFINITY};
  CHECK_STATUS(nufft1(1, 3, xn, c, 1, ms, f, &o), GFI_ENONFINITE);
  CHECK_STATUS(nufft1(1, 3, x, cn, 1, ms, f, &o), GFI_ENONFINITE);
  CHECK_STATUS(nufft2(1, 3, xn, c, 1, ms, f, &o), GFI_ENONFINITE);
  double fn[8] = {0, 0, NAN, 0, 0, 0, 0, 0};
  CHECK_STATUS(nufft2(1, 3, x, c, 1, ms, fn, &o), GFI_ENONFINITE);
  CHECK_STATUS(nufft3(1, 3, xn, c, 1, 1, s, f, &o), GFI_ENONFINITE);
  CHECK_STATUS(nufft3(1, 3, x, cn, 1, 1, s, f, &o), GFI_ENONFINITE);
  CHECK_STATUS(nufft3(1, 3, x, c, 1, 2, sn, f, &o), GFI_ENONFINITE);
  /* grids too large */
  o.max_grid = 1000;
  size_t big[3] = {600, 1, 1};
  CHECK_STATUS(nufft1(1, 3, x, c, 1, big, f, &o), GFI_ERANGE);
  size_t big2[3] = {20, 20, 1};
  CHECK_STATUS(nufft2(2, 3, x, c, 1, big2, f, &o), GFI_ERANGE);
  double sx[2] = {0, 1e6};
  CHECK_STATUS(nufft3(1, 3, x, c, 1, 2, sx, f, &o), GFI_ERANGE);
  nufft_default_opts(&o);
  size_t huge[3] = {SIZE_MAX / 2, SIZE_MAX / 2, 3};
  CHECK_STATUS(nufft1(3, 3, x, c, 1, huge, f, &o), GFI_ERANGE);
  o.max_grid = SIZE_MAX;
  CHECK_STATUS(nufft1(3, 3, x, c, 1, huge, f, &o), GFI_ERANGE);
  double sh[2] = {-1e300, 1e300};
  CHECK_STATUS(nufft3(1, 3, x, c, 1, 2, sh, f, &o), GFI_ERANGE);
  nufft_default_opts(&o);
  /* streaming plan */
  nufft3_plan *p = (nufft3_plan *)&o;
  double lo[1] = {0}, hi[1] = {1}, lo2[1] = {2};
  CHECK_STATUS(nufft3_plan_make(&p, 1, lo2, hi, 1, 1, s, &o), GFI_EINVAL);
  CHECK(p == NULL, "failed plan sets NULL");
  CHECK_STATUS(nufft3_plan_make(NULL, 1, lo, hi, 1, 1, s, &o), GFI_EINVAL);
  CHECK_STATUS(nufft3_plan_make(&p, 0, lo, hi, 1, 1, s, &o), GFI_EINVAL);
  double lon[1] = {NAN};
  CHECK_STATUS(nufft3_plan_make(&p, 1, lon, hi, 1, 1, s, &o), GFI_ENONFINITE);
  CHECK_STATUS(nufft3_plan_make(&p, 1, lo, hi, 1, 2, sn, &o), GFI_ENONFINITE);
  CHECK_STATUS(nufft3_plan_make(&p, 1, lo, hi, 1, 2, s, &o), GFI_OK);
  double out[1] = {1.5};
  CHECK_STATUS(nufft3_add(p, 1, out, c), GFI_EINVAL);
  CHECK_STATUS(nufft3_add(p, 3, xn, c), GFI_ENONFINITE);
  CHECK_STATUS(nufft3_add(p, 1, x, cn + 2), GFI_ENONFINITE);
  CHECK_STATUS(nufft3_add(NULL, 1, x, c), GFI_EINVAL);
  CHECK_STATUS(nufft3_exec(p, NULL), GFI_EINVAL);
  CHECK_STATUS(nufft3_exec(NULL, f), GFI_EINVAL);
  CHECK_STATUS(nufft3_exec(p, f), GFI_OK);
  CHECK(f[0] == 0 && f[3] == 0, "rejected blocks add nothing");
  nufft3_destroy(p);
  nufft3_destroy(NULL);
  nufft3_info(NULL, NULL, NULL);
  size_t nf[3];
  int w = 1;
  nufft3_info(NULL, nf, &w);
  CHECK(w == 0 && nf[0] == 0, "info of NULL");
  /* the grid-size predictor */
  double X[3] = {1, 2, 0}, S[3] = {10, 0, 0};
  size_t tot = nufft3_grid_size(3, X, S, &o, nf);
  CHECK(tot == nf[0] * nf[1] * nf[2] && nf[0] >= 2 * 1 * 10 * 2 / M_PI, "grid size %zu", tot);
  CHECK(nf[0] % 2 == 0 && nf[1] % 2 == 0, "even grids");
  double Xb[1] = {1e5}, Sb[1] = {1e5};
  CHECK(nufft3_grid_size(1, Xb, Sb, &o, nf) == 0, "too large -> 0");
  CHECK(nufft3_grid_size(0, X, S, &o, nf) == 0, "D = 0 -> 0");
  /* the plan's grid is the predicted one */
  double xl[2] = {-1, -2}, xh[2] = {1, 2}, st[4] = {-10, 0, 10, 0};
  CHECK_STATUS(nufft3_plan_make(&p, 2, xl, xh, 1, 2, st, &o), GFI_OK);
  size_t pn[3];
  nufft3_info(p, pn, &w);
  size_t tot2 = nufft3_grid_size(2, X, S, &o, nf);
  CHECK(pn[0] == nf[0] && pn[1] == nf[1] && tot2 == nf[0] * nf[1], "plan vs predictor");
  nufft3_destroy(p);
}

/* The kernel is made once per (tol, sigma) and kept (the last few): a kept
 * copy equals a fresh one field by field. Twelve tolerances overflow the
 * cache, so the second round meets both fresh and kept kernels. */
static int kernel_same(const nufft_kernel *a, const nufft_kernel *b) {
  return a->ns == b->ns && a->beta == b->beta && a->sigma == b->sigma && a->q == b->q &&
         a->deg == b->deg && a->nd == b->nd && !memcmp(a->a, b->a, sizeof a->a) &&
         !memcmp(a->b, b->b, sizeof a->b) && !memcmp(a->pc, b->pc, sizeof a->pc) &&
         !memcmp(a->pe, b->pe, sizeof a->pe) && !memcmp(a->po, b->po, sizeof a->po);
}
static void kernel_cache(void) {
  static nufft_kernel first[12];
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 12; i++) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = pow(10.0, -2.0 - i);
      o.upsampfac = i % 2 ? 1.25 : 2.0;
      nufft_kernel k;
      memset(&k, 0, sizeof k);
      CHECK_STATUS(nufft_kernel_setup(&o, &k), GFI_OK);
      if (round == 0) first[i] = k;
      else CHECK(kernel_same(&k, &first[i]), "kernel at tol %g, round %d: the same as made first", o.tol, round);
    }
}

/* The kernel transform's table (type-3 deconvolution) against its direct
 * sum of cosines, relative to phihat(0), over the range the transforms use. */
static void phihat_table(void) {
  static const double sig[] = {2.0, 1.25, 4.0};
  double worst = 0;
  for (int a = 0; a < 3; a++)
    for (double tol = 1e-2; tol >= 1e-15; tol *= 0.1) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = tol;
      o.upsampfac = sig[a];
      nufft_kernel k;
      CHECK_STATUS(nufft_kernel_setup(&o, &k), GFI_OK);
      nufft_phihat_tab t;
      nufft_phihat_tab_make(&k, &t);
      CHECK(t.deg > 0 && t.deg <= NUFFT_PH_MAXDEG, "table built (degree %d)", t.deg);
      double p0 = nufft_phihat(&k, 0), e = 0, er = 0;
      for (int i = -2000; i <= 2000; i++) {
        double xi = M_PI / sig[a] * i / 2000.0 * 1.01, v = nufft_phihat(&k, xi);
        double d = fabs(nufft_phihat_tab_eval(&t, &k, xi) - v);
        e = fmax(e, d / p0);
        er = fmax(er, d / fabs(v)); /* the transform divides by it */
      }
      /* both are sums of terms as large as phihat(0): rounding of a few 1e-16 each */
      CHECK(e <= 5e-15, "phihat table, sigma %g, tol %g, width %d: error %.3g", sig[a], tol, k.ns, e);
      CHECK(er <= 1e-12, "phihat table, sigma %g, tol %g: relative error %.3g", sig[a], tol, er);
      if (getenv("GFI_TEST_VERBOSE"))
        printf("phihat sigma %g width %d deg %d: err %.3g rel %.3g\n", sig[a], k.ns, t.deg, e, er);
      worst = fmax(worst, e);
      CHECK_CLOSE(nufft_phihat_tab_eval(&t, &k, 3.5), nufft_phihat(&k, 3.5), 0, 0); /* beyond pi: exact */
    }
  printf("phihat table: worst error %.3g relative to phihat(0)\n", worst);
}

/* The type-3 shift's vectorised sincos against libm: 3e6 arguments on
 * |x| < 4, < 1e3 and < 1e6 (its range), and the quadrant boundaries. */
static void sincos_simd(void) {
  double worst = 0, wx = 0;
  uint64_t st = 88172645463325252ULL;
  for (long i = 0; i < 3000000; i++) {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    double u = (double)(st >> 11) / 9007199254740992.0 - 0.5;
    double x = u * (i % 3 == 0 ? 8 : i % 3 == 1 ? 2e3 : 2e6 * 0.999);
    double s, c;
    gfi_sincos_simd(x, &s, &c);
    double e = fmax(fabs(s - sin(x)), fabs(c - cos(x)));
    if (e > worst) worst = e, wx = x;
  }
  printf("gfi_sincos_simd against libm: max abs difference %.2e (at x = %.17g)\n", worst, wx);
  CHECK(worst <= 2.3e-16, "gfi_sincos_simd: %g at %.17g", worst, wx);
  for (int k = -8; k <= 8; k++) {
    double x = k * M_PI / 4, s, c;
    gfi_sincos_simd(x, &s, &c);
    CHECK(fabs(s - sin(x)) <= 2.3e-16 && fabs(c - cos(x)) <= 2.3e-16, "x = %d pi/4: %.17g %.17g", k, s,
          c);
  }
}

/* Real sources (opts.real_sources): targets on (0, W] on axis 0 (a rule's
 * half-axis) and on [-W, W] or a range away from 0 on the others; real
 * strengths, a third of them in one tight cluster (coherent errors). The
 * unshifted plan against the direct sum at three tolerances, the bits of
 * nufft3_add_real = nufft3_add with imaginary parts 0 on the same plan, the
 * same bits for 1, 2 and 3 threads and for streamed blocks, and the grid
 * that nufft3_grid_size predicts from nufft3_target_centre. */
static void real_sources(int D, size_t N) {
  size_t K = 400;
  double *x = malloc(N * D * sizeof(double)), *cr = malloc(N * sizeof(double));
  double *cz = malloc(2 * N * sizeof(double)), *s = malloc(K * D * sizeof(double));
  double *ref = malloc(2 * K * sizeof(double)), *f1 = malloc(2 * K * sizeof(double));
  double *f2 = malloc(2 * K * sizeof(double));
  if (!x || !cr || !cz || !s || !ref || !f1 || !f2) {
    CHECK(0, "out of memory");
    free(x), free(cr), free(cz), free(s), free(ref), free(f1), free(f2);
    return;
  }
  rng_state = 400 + D + N;
  for (size_t j = 0; j < N; j++)
    for (int d = 0; d < D; d++) x[j * D + d] = j % 3 ? unif(-2, 5) : unif(1.0, 1.001);
  for (size_t j = 0; j < N; j++) {
    cr[j] = j % 3 ? unif(-1, 1) : 0.7;
    cz[2 * j] = cr[j];
    cz[2 * j + 1] = 0;
  }
  for (size_t k = 0; k < K; k++) {
    s[k * D] = unif(0.05, 40);
    if (D > 1) s[k * D + 1] = unif(-25, 25);
    if (D > 2) s[k * D + 2] = unif(3, 12); /* away from 0: shifted */
  }
  double lo[3], hi[3], sumc = 0;
  for (int d = 0; d < D; d++) lo[d] = -2, hi[d] = 5;
  for (size_t j = 0; j < N; j++) sumc += fabs(cr[j]);
  nufft3_direct(D, N, x, cz, -1, K, s, ref, 1);
  const double rt[] = {1e-3, 1e-9, 1e-13};
  for (int it = 0; it < 3; it++) {
    nufft_opts o;
    nufft_default_opts(&o);
    o.tol = rt[it];
    o.real_sources = 1;
    nufft3_plan *p = NULL;
    CHECK_STATUS(nufft3_plan_make(&p, D, lo, hi, -1, K, s, &o), GFI_OK);
    if (!p) continue;
    CHECK_STATUS(nufft3_add_real(p, N, x, cr, 0), GFI_OK);
    CHECK_STATUS(nufft3_exec(p, f1), GFI_OK);
    double einf, e2;
    errs(f1, ref, K, sumc, &einf, &e2);
    printf("real sources D %d N %zu tol %.0e: e_inf %.2e\n", D, N, rt[it], einf);
    CHECK(einf <= FAC * rt[it], "real sources D %d tol %g: %g", D, rt[it], einf);
    /* the same plan with complex strengths of imaginary part 0 */
    nufft3_reset(p);
    CHECK_STATUS(nufft3_add(p, N, x, cz), GFI_OK);
    CHECK_STATUS(nufft3_exec(p, f2), GFI_OK);
    CHECK(memcmp(f1, f2, 2 * K * sizeof(double)) == 0, "real sources D %d: add_real = add", D);
    /* streamed blocks, exec twice */
    nufft3_reset(p);
    for (size_t j0 = 0; j0 < N; j0 += N / 3 + 1)
      CHECK_STATUS(nufft3_add_real(p, N - j0 < N / 3 + 1 ? N - j0 : N / 3 + 1, x + j0 * D, cr + j0, 0),
                   GFI_OK);
    CHECK_STATUS(nufft3_exec(p, f2), GFI_OK);
    double eb, e2b;
    errs(f2, f1, K, sumc, &eb, &e2b);
    CHECK(eb <= 1e-14, "real sources D %d: blocks %g", D, eb);
    CHECK_STATUS(nufft3_exec(p, f1), GFI_OK);
    CHECK(memcmp(f1, f2, 2 * K * sizeof(double)) == 0, "real sources D %d: exec twice", D);
    /* the predicted grid */
    double X[3], S[3];
    size_t nf[3], nfp[3];
    for (int d = 0; d < D; d++) {
      double smin = s[d], smax = s[d];
      for (size_t k = 0; k < K; k++) smin = fmin(smin, s[k * D + d]), smax = fmax(smax, s[k * D + d]);
      double cc = nufft3_target_centre(&o, smin, smax);
      CHECK(d == 2 ? cc == 0.5 * (smin + smax) : cc == 0, "centre axis %d: %g", d, cc);
      X[d] = 3.5;
      S[d] = fmax(smax - cc, cc - smin);
    }
    nufft3_grid_size(D, X, S, &o, nf);
    nufft3_info(p, nfp, NULL);
    for (int d = 0; d < D; d++) CHECK(nf[d] == nfp[d], "grid axis %d: %zu vs %zu", d, nf[d], nfp[d]);
    nufft3_destroy(p);
    if (it != 1) continue;
    for (int nt = 1; nt <= 3; nt++) {
      o.nthreads = nt;
      CHECK_STATUS(nufft3_plan_make(&p, D, lo, hi, -1, K, s, &o), GFI_OK);
      if (!p) continue;
      CHECK_STATUS(nufft3_add_real(p, N, x, cr, 0), GFI_OK);
      CHECK_STATUS(nufft3_exec(p, nt == 1 ? f1 : f2), GFI_OK);
      if (nt > 1) CHECK(memcmp(f1, f2, 2 * K * sizeof(double)) == 0, "real sources D %d: %d threads", D, nt);
      nufft3_destroy(p);
    }
  }
  /* the rule itself */
  nufft_opts o;
  nufft_default_opts(&o);
  CHECK(nufft3_target_centre(&o, 0.01, 5) == 2.505, "no real_sources: the midpoint");
  o.real_sources = 1;
  CHECK(nufft3_target_centre(&o, 0.01, 5) == 0 && nufft3_target_centre(&o, -2, 3) == 0 &&
            nufft3_target_centre(&o, 1, 5) == 3 && nufft3_target_centre(&o, 2, 2) == 2,
        "target centre rule");
  free(x), free(cr), free(cz), free(s), free(ref), free(f1), free(f2);
}

/* Type 1/2 plans kept across calls: each exec gives the bits of the one-shot
 * transform on one thread, whatever came before it on the plan (other points,
 * more or fewer of them, more than one chunk of 2^18) and for 1 or 2 threads;
 * the small 1-D grid (kept per-block copies) and the large one (kept sort). */
static void plans(int D, size_t m0, size_t N) {
  size_t ms[3] = {m0, D == 1 ? 1 : 40, 12};
  size_t mt = 1;
  for (int d = 0; d < D; d++) mt *= ms[d];
  size_t Ns[3] = {N, N / 3 + 1, N};
  double *x = malloc(2 * N * D * sizeof(double)), *c = malloc(4 * N * sizeof(double));
  double *fm = malloc(2 * mt * sizeof(double));
  size_t nmax = N > mt ? N : mt;
  double *a = malloc(2 * nmax * sizeof(double)), *b = malloc(2 * nmax * sizeof(double));
  rng_state = 77 + D;
  fill(x, 2 * N * D, -3, 3);
  fill(c, 4 * N, -1, 1);
  fill(fm, 2 * mt, -1, 1);
  for (int type = 1; type <= 2; type++)
    for (int nt = 1; nt <= 2; nt++) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = 1e-9;
      o.nthreads = nt;
      nufft_plan *p;
      CHECK_STATUS(nufft_plan_make(&p, type, D, ms, -1, &o), GFI_OK);
      for (int r = 0; r < 3; r++) {
        /* call r: Ns[r] points from the r-th (0, 1, 0) data set */
        const double *xr = x + (r == 1) * N * D, *cr = c + (r == 1) * 2 * N;
        nufft_opts o1 = o;
        o1.nthreads = 1;
        size_t nout = type == 1 ? mt : Ns[r];
        int st = type == 1 ? nufft1(D, Ns[r], xr, cr, -1, ms, a, &o1)
                           : nufft2(D, Ns[r], xr, a, -1, ms, fm, &o1);
        CHECK_STATUS(st, GFI_OK);
        memset(b, 0xff, 2 * nout * sizeof(double));
        st = type == 1 ? nufft_plan_exec1(p, Ns[r], xr, cr, b)
                       : nufft_plan_exec2(p, Ns[r], xr, b, fm);
        CHECK_STATUS(st, GFI_OK);
        CHECK(memcmp(a, b, 2 * nout * sizeof(double)) == 0,
              "plan type %d D %d m0 %zu N %zu, %d threads, call %d: bits differ from the "
              "one-shot", type, D, m0, Ns[r], nt, r);
      }
      /* the wrong exec for the type, and bad values: statuses, plan still usable */
      CHECK_STATUS(type == 1 ? nufft_plan_exec2(p, 1, x, b, fm) : nufft_plan_exec1(p, 1, x, c, b),
                   GFI_EINVAL);
      double xnan = NAN;
      CHECK_STATUS(type == 1 ? nufft_plan_exec1(p, 1, &xnan, c, b)
                             : nufft_plan_exec2(p, 1, &xnan, b, fm),
                   GFI_ENONFINITE);
      nufft_plan_destroy(p);
    }
  nufft_plan *p = (nufft_plan *)1;
  CHECK_STATUS(nufft_plan_make(&p, 3, D, ms, 1, NULL), GFI_EINVAL);
  CHECK(p == NULL, "a failed plan_make leaves *p NULL");
  CHECK_STATUS(nufft_plan_make(&p, 1, D, ms, 0, NULL), GFI_EINVAL);
  CHECK_STATUS(nufft_plan_make(NULL, 1, D, ms, 1, NULL), GFI_EINVAL);
  CHECK_STATUS(nufft_plan_exec1(NULL, 0, NULL, NULL, b), GFI_EINVAL);
  nufft_plan_destroy(NULL);
  free(x); free(c); free(fm); free(a); free(b);
}

/* Real sources on a small 1-D grid take the streamed spreader (coordinates
 * and spreading per block, 64 blocks of 16384 points per window): over
 * several windows and a ragged end, with given strengths and with one value
 * for all, at 1 and 2 threads, the bits of nufft3_add with imaginary parts 0
 * (the chunked route). */
static void stream_windows(void) {
  const size_t N = 2 * 64 * 16384 + 777, K = 64;
  double *x = malloc(N * sizeof(double)), *cr = malloc(N * sizeof(double));
  double *cz = malloc(2 * N * sizeof(double)), *s = malloc(K * sizeof(double));
  double *f1 = malloc(2 * K * sizeof(double)), *f2 = malloc(2 * K * sizeof(double));
  rng_state = 999;
  fill(x, N, -1, 1);
  fill(cr, N, -1, 1);
  for (size_t k = 0; k < K; k++) s[k] = 30.0 * (double)k / (double)(K - 1);
  double lo = -1, hi = 1;
  for (int one = 0; one < 2; one++) {
    for (size_t j = 0; j < N; j++) cz[2 * j] = one ? 0.25 : cr[j], cz[2 * j + 1] = 0;
    for (int nt = 1; nt <= 2; nt++) {
      nufft_opts o;
      nufft_default_opts(&o);
      o.tol = 1e-9;
      o.nthreads = nt;
      o.real_sources = 1;
      nufft3_plan *p = NULL;
      CHECK_STATUS(nufft3_plan_make(&p, 1, &lo, &hi, 1, K, s, &o), GFI_OK);
      if (!p) continue;
      size_t nf[3];
      nufft3_info(p, nf, NULL);
      CHECK(nf[0] <= 4096, "stream test grid %zu: not the small-grid route", nf[0]);
      CHECK_STATUS(nufft3_add_real(p, N, x, one ? NULL : cr, 0.25), GFI_OK);
      CHECK_STATUS(nufft3_exec(p, f1), GFI_OK);
      nufft3_reset(p);
      CHECK_STATUS(nufft3_add(p, N, x, cz), GFI_OK);
      CHECK_STATUS(nufft3_exec(p, f2), GFI_OK);
      CHECK(memcmp(f1, f2, 2 * K * sizeof(double)) == 0,
            "streamed real sources (%s, %d threads): bits differ from nufft3_add",
            one ? "one value" : "given", nt);
      nufft3_destroy(p);
    }
  }
  free(x); free(cr); free(cz); free(s); free(f1); free(f2);
}

int main(void) {
  kernel_cache();
  sincos_simd();
  phihat_table();
  for (int type = 1; type <= 3; type++)
    for (int D = 1; D <= 3; D++) sweep(type, D);
  printf("worst error / tol over the sweep: %.2f (held to %.0f)\n", worst_ratio, FAC);
  worst_case();
  for (int D = 1; D <= 3; D++) streaming(D);
  for (int D = 1; D <= 3; D++) threads(D, 0);
  threads(1, 700);
  plans(1, 700, 300000); /* small 1-D grid, two chunks */
  plans(1, 5000, 300000); /* sorted 1-D spreading, two chunks */
  plans(2, 30, 20000);
  plans(3, 10, 8000);
  for (int D = 1; D <= 3; D++) real_sources(D, 20000);
  real_sources(1, 300); /* one thread, the unsorted 1-D path at small N */
  stream_windows();
  spans();
  many_points();
  edges();
  error_paths();
  return check_summary("nufft");
}
