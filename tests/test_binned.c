/* The binned route of tensor grids (estimators/binned.c): on a randomised
 * family of hard cases (tight clusters, far outliers, grids away from the
 * data, data at 1000, radii from 0.5 to 100, l = 1..8 and polynomial phi,
 * D = 1..3, one uniform column or two signed ones, grids of 1 to 40 points
 * per axis, binning targets 1e-2 .. 1e-9), with cubic and with quintic
 * binning, every value is within the bound
 * the route reports of a brute-force sum in long double (difference
 * first); the bound itself is near its target (h is not chosen needlessly
 * fine); the values are the same bits for 1, 2 and 3 threads; and through
 * the public API a loose tol on a large grid takes the binned route and
 * keeps tol. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "check.h"
#include "hard_cases.h"
#include "gfi/gfi.h"
#include "bandlimited.h"

/* Grid point k of axis j. */
static double gpt(const double *lo, const double *hi, const size_t *n, int j, size_t k) {
  return n[j] > 1 ? lo[j] + (hi[j] - lo[j]) * (double)k / (double)(n[j] - 1) : lo[j];
}

/* Nadaraya-Watson, phi = z^4, R = 12.6, on the 1-D grid -5:5:1024 at tol,
 * N points drawn from r (x normal, y = sin 2x + noise): the grid's route
 * report, and its largest error against the direct route on every 7th grid
 * point (err) with max |y| (ymax). The first error's status, or GFI_OK. */
static int nw_grid_case(gsl_rng *r, size_t N, double tol, gfi_fast_info *info, double *err, double *ymax) {
  const size_t G = 1024;
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *f = malloc(G * sizeof *f);
  *err = 0;
  *ymax = 0;
  memset(info, 0, sizeof *info);
  int st = x && y && f ? GFI_OK : GFI_ENOMEM;
  for (size_t i = 0; !st && i < N; i++) {
    x[i] = gsl_ran_gaussian(r, 1.0);
    y[i] = sin(2 * x[i]) + 0.3 * gsl_ran_gaussian(r, 1.0);
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.tol = tol;
  double R = 12.6, lo = -5, hi = 5;
  for (size_t i = 0; !st && i < N; i++) *ymax = fmax(*ymax, fabs(y[i]));
  gfi_nw_plan *p = NULL;
  size_t nf = 0;
  if (!st) st = gfi_nw_plan_fourier(&p, KPOW(4), N, 1, 1, x, y, &R, &o);
  if (!st) st = gfi_nw_eval_grid(p, &lo, &hi, &G, f, &nf, info);
  gfi_nw_destroy(p);
  p = NULL;
  o.method = GFI_METHOD_DIRECT;
  if (!st) st = gfi_nw_plan_fourier(&p, KPOW(4), N, 1, 1, x, y, &R, &o);
  for (size_t g = 0; !st && g < G; g += 7) {
    double q = gpt(&lo, &hi, &G, 0, g), v;
    st = gfi_nw_eval(p, 1, &q, &v, &nf);
    if (!st) *err = fmax(*err, fabs(v - f[g]));
  }
  gfi_nw_destroy(p);
  free(x), free(y), free(f);
  return st;
}

int main(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  const int NCASE = CHECK_SANITIZED ? 12 : 60;
  int ran = 0, refused = 0;
  /* error / bound; bound / target x 2^P where the lattice is finer than the grid (cubic, quintic) */
  double worst = 0, loosest[2] = {INFINITY, INFINITY};
  for (int cs = 0; cs < NCASE; cs++) {
    const int D = 1 + cs % 3;
    const size_t N = D == 3 ? 80 : 200;
    double R = exp(log(0.5) + gsl_rng_uniform(r) * (log(100.0) - log(0.5)));
    if (D > 1) R = fmin(R, D == 2 ? 20.0 : 4.0); /* keeps the lattice (and the test) small */
    gfi_kernel k;
    if (cs % 7 == 6) {
      const double a[5] = {0, 0.5, 0.2, 0, 1};
      gfi_kernel_poly(&k, 4, a);
    } else {
      gfi_kernel_pow(&k, 1 + (int)gsl_rng_uniform_int(r, 8));
    }
    const double far = cs % 4 == 0 ? 0 : pow(10.0, D == 1 ? 1 + 2 * gsl_rng_uniform(r) : 0.5) / R;
    const double off = cs % 5 == 0 ? 1000.0 : 0.0;
    const double beps = pow(10.0, -2 - 7 * gsl_rng_uniform(r));
    const size_t ncol = cs % 2 ? 2 : 1;
    double *x = malloc(N * (size_t)D * sizeof *x), *c = malloc(2 * N * sizeof *c);
    for (size_t i = 0; i < N * (size_t)D; i++)
      x[i] = off + draw(r, 0, 3, 0.02 + 0.5 * gsl_rng_uniform(r), 0.7, far);
    for (size_t i = 0; i < N; i++) {
      c[i] = 5 * sin(3 * x[i * (size_t)D]) + gsl_ran_gaussian(r, 0.1); /* signed */
      c[N + i] = 1.0 / (double)N;
    }
    double lo[3], hi[3], Rv[3] = {R, R * 1.3, R * 0.8};
    size_t n[3], M = 1;
    for (int j = 0; j < D; j++) {
      n[j] = 1 + gsl_rng_uniform_int(r, D == 3 ? 9 : 40);
      lo[j] = off + gsl_ran_flat(r, -2, 1);
      hi[j] = lo[j] + gsl_ran_flat(r, 0.5, 5);
      if (cs % 6 == 3) lo[j] -= 40 / R, hi[j] -= 40 / R; /* a grid away from the data */
      M *= n[j];
    }
    gfi_opts o;
    gfi_default_opts(&o);
    o.method = GFI_METHOD_DIRECT; /* the data side only: the binned route is called directly */
    bl_sum *s = NULL;
    int st = ncol == 2 ? bl_sum_make(&s, D, &k, N, x, 2, c, Rv, &o, 1.0)
                       : bl_sum_make_uniform(&s, D, &k, N, x, 1.0 / (double)N, Rv, &o, 1.0);
    CHECK(st == GFI_OK, "case %d: bl_sum_make: %s", cs, gfi_strerror(st));
    if (st) {
      free(x), free(c);
      continue;
    }
    /* the brute-force sums, in long double, difference first */
    double *ref = malloc(M * ncol * sizeof *ref), m[2] = {0, 0}, c1[2] = {0, 0};
    for (size_t col = 0; col < ncol; col++) {
      const double *cc = ncol == 2 ? c + col * N : c + N;
      for (size_t i = 0; i < N; i++) c1[col] += fabs(cc[i]);
      for (size_t g = 0; g < M; g++) {
        size_t rem = g, idx[3];
        for (int j = D - 1; j >= 0; j--) idx[j] = rem % n[j], rem /= n[j];
        long double sum = 0;
        for (size_t i = 0; i < N; i++) {
          long double kt = cc[i];
          for (int j = 0; j < D; j++)
            kt *= kfac(&k, Rv[j], (long double)gpt(lo, hi, n, j, idx[j]) - x[i * (size_t)D + (size_t)j]);
          sum += kt;
        }
        ref[g * ncol + col] = (double)sum;
        m[col] = fmax(m[col], fabs((double)sum));
      }
    }
    double *out = malloc(M * ncol * sizeof *out);
    /* cubic and quintic binning */
    for (int P = 4; P <= 6; P += 2) {
      bl_binned b;
      if (!bl_binned_plan(s, lo, hi, n, beps, P, &b)) {
        refused++;
        continue;
      }
      double babs[2];
      st = bl_binned_eval(s, &b, lo, hi, n, out, babs);
      CHECK(st == GFI_OK, "case %d P=%d: bl_binned_eval: %s", cs, P, gfi_strerror(st));
      /* the same bits for 1, 2 and 3 threads */
      for (int nt = 1; !st && nt <= 3; nt += 2) {
        double *o2 = malloc(M * ncol * sizeof *o2), b2[2];
        s->nthreads = nt;
        int st2 = bl_binned_eval(s, &b, lo, hi, n, o2, b2);
        CHECK(st2 == GFI_OK && memcmp(out, o2, M * ncol * sizeof *out) == 0 && b2[0] == babs[0],
              "case %d P=%d: %d threads give other bits", cs, P, nt);
        free(o2);
      }
      s->nthreads = 0;
      ran++;
      for (size_t col = 0; !st && col < ncol; col++) {
        double err = 0;
        for (size_t g = 0; g < M; g++) err = fmax(err, fabs(out[g * ncol + col] - ref[g * ncol + col]));
        CHECK(err <= babs[col] + 1e-15 * m[col],
              "case %d P=%d (D=%d l=%d R=%g far=%g off=%g beps=%g col %zu): error %.3g > bound %.3g", cs, P, D,
              k.l, R, far, off, beps, col, err, babs[col]);
        if (babs[col] > 0) worst = fmax(worst, err / babs[col]);
        /* the bound is the binning target plus rounding: at most about the
         * target (h from beps), and not far below it (h not needlessly fine) */
        const double target = beps * c1[col] * s->K0;
        CHECK(babs[col] <= 1.5 * target + 1e-9 * c1[col] * s->K0,
              "case %d P=%d col %zu: bound %.3g above its target %.3g", cs, P, col, babs[col], target);
        /* with s_j > 1 cells per grid step, h_j > hmax_j / 2: the binning
         * term is above target / 2^P */
        int fine = 1;
        for (int j = 0; j < D; j++) fine &= b.s[j] > 1;
        if (fine) loosest[P == 6] = fmin(loosest[P == 6], babs[col] / target * pow(2, P));
      }
    }
    free(ref);
    free(out);
    bl_sum_free(s);
    free(x), free(c);
  }
  printf("binned: %d (case, order) pairs ran, %d refused (lattice limits); worst error / bound %.3g; smallest "
         "bound / target x 2^P: cubic %.3g, quintic %.3g\n",
         ran, refused, worst, loosest[0], loosest[1]);
  CHECK(ran >= NCASE * 2 * 3 / 4, "most cases ran (%d of %d)", ran, 2 * NCASE);
  CHECK(loosest[0] >= 0.9 && loosest[1] >= 0.9, "h chosen needlessly fine (bound / target x 2^P %.3g, %.3g)",
        loosest[0], loosest[1]);

  /* The lattice's summation at tight targets (beps 1e-11 .. 4e-13, tol
   * about 1e-10 .. 1e-12): many points in arrangements that put the terms
   * of a cell in long runs: 2^22 points at one point or in one cell (blocks
   * of 2^18), 2^20 in a tight cluster with far outliers, 2^18 in two
   * clusters in 2-D (slab mode); signed and positive weights; radii 0.5 ..
   * 100. Alike terms summed in one run err systematically by about m u per
   * unit (m = 2^18: some 1e-11), above these targets: the values are within
   * the bound because the sub-chunks keep every cell's run short and the
   * bound counts it (with the summation term set to 0, or the sub-chunks
   * disabled, this fails).
   * Then 1-D cases at beps 3e-10 .. 2e-9 that the plan bins by moments
   * without sub-chunks (a small lattice): 2^22 points (blocks of 2^18) or
   * 2^16 (one run, slab mode) at one point, in one cell or in a cluster
   * with far outliers, so that every moment cell sums long runs of alike
   * terms (with the moments' summation constant set to 0, the cases above
   * take moments without sub-chunks and fail). */
  {
    const int NSUM = CHECK_SANITIZED ? 4 : 12, NMOM = CHECK_SANITIZED ? 3 : 6;
    int sran = 0, flushed = 0, slab = 0, mran = 0;
    double sworst = 0, mworst = 0;
    gsl_rng *rm = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rm, 12);
    for (int cs = 0; cs < NSUM + NMOM; cs++) {
      const int mom = cs >= NSUM;
      gsl_rng *const rg = mom ? rm : r; /* the draws of the cases before are unchanged */
      const int D = !mom && cs % 4 == 3 ? 2 : 1, kind = mom ? (cs - NSUM) % 3 : cs % 4;
      /* 2^22 points in one cell: blocks of 2^18 */
      const size_t N = (size_t)1 << (D == 2                       ? (CHECK_SANITIZED ? 16 : 18)
                                     : mom && (cs - NSUM) % 2 ? 16
                                     : kind < 2 || mom        ? (CHECK_SANITIZED ? 20 : 22)
                                                              : 20);
      double R = exp(log(0.5) + gsl_rng_uniform(rg) * (log(100.0) - log(0.5)));
      if (D > 1) R = fmin(R, 1.5); /* keeps the lattice (and the test) small */
      gfi_kernel k;
      gfi_kernel_pow(&k, 1 + (int)gsl_rng_uniform_int(rg, 6));
      const double beps = mom        ? pow(10.0, -9.5 + 0.8 * gsl_rng_uniform(rg))
                          : kind < 2 ? pow(10.0, -12 - 0.4 * gsl_rng_uniform(rg))
                                     : pow(10.0, -11 - 1.5 * gsl_rng_uniform(rg));
      const double ctr = gsl_ran_flat(rg, -1, 1);
      const size_t ncol = cs % 2 ? 2 : 1;
      double *x = malloc(N * (size_t)D * sizeof *x), *c = malloc(2 * N * sizeof *c);
      for (size_t i = 0; i < N * (size_t)D; i++) {
        if (kind == 0) x[i] = ctr; /* all at one point */
        else if (kind == 1) x[i] = ctr + 1e-9 * (double)(i >> 18); /* one cell */
        else if (kind == 2) x[i] = draw(rg, ctr, ctr, 1e-3, 1e-3, 30 / R); /* a cluster, far outliers */
        else x[i] = draw(rg, ctr, ctr + 0.5, 0.01, 0.3, 0); /* two clusters */
      }
      for (size_t i = 0; i < N; i++) {
        c[i] = cs % 3 == 0 ? gsl_ran_gaussian(rg, 1) : 1.0 / 3.0; /* signed, or all alike */
        c[N + i] = 1 + 0.5 * sin(1e3 * (double)i);
      }
      double lo[3], hi[3], Rv[3] = {R, R * 0.9, 0};
      size_t n[3], M = 1;
      for (int j = 0; j < D; j++) {
        n[j] = 2 + gsl_rng_uniform_int(rg, D == 1 ? 7 : 3);
        lo[j] = ctr - gsl_ran_flat(rg, 0, 2 / R);
        hi[j] = ctr + gsl_ran_flat(rg, 0, cs % 3 == 1 ? 20 / R : 2 / R);
        M *= n[j];
      }
      gfi_opts o;
      gfi_default_opts(&o);
      o.method = GFI_METHOD_DIRECT;
      bl_sum *s = NULL;
      int st = bl_sum_make(&s, D, &k, N, x, ncol, c, Rv, &o, 1.0);
      CHECK(st == GFI_OK, "sum case %d: bl_sum_make: %s", cs, gfi_strerror(st));
      double *ref = malloc(M * ncol * sizeof *ref), *out = malloc(M * ncol * sizeof *out),
             *o3 = malloc(M * ncol * sizeof *o3);
      /* the brute-force sums in long double, compensated; a point's factor
       * is reused while the coordinate repeats */
      for (size_t g = 0; !st && g < M; g++) {
        size_t rem = g, idx[3];
        for (int j = D - 1; j >= 0; j--) idx[j] = rem % n[j], rem /= n[j];
        long double sum[2] = {0, 0}, comp[2] = {0, 0}, lastx[3] = {NAN, NAN, NAN}, lastf[3] = {0, 0, 0};
        for (size_t i = 0; i < N; i++) {
          long double kt = 1;
          for (int j = 0; j < D; j++) {
            const double xi = x[i * (size_t)D + (size_t)j];
            if (xi != lastx[j]) {
              lastx[j] = xi;
              lastf[j] = kfac(&k, Rv[j], (long double)gpt(lo, hi, n, j, idx[j]) - xi);
            }
            kt *= lastf[j];
          }
          for (size_t col = 0; col < ncol; col++) {
            const long double y = kt * c[col * N + i] - comp[col], t = sum[col] + y;
            comp[col] = (t - sum[col]) - y;
            sum[col] = t;
          }
        }
        for (size_t col = 0; col < ncol; col++) ref[g * ncol + col] = (double)sum[col];
      }
      for (int P = 4; !st && P <= 6; P += 2) {
        bl_binned b;
        if (!bl_binned_plan(s, lo, hi, n, beps, P, &b)) continue;
        double babs[2], b3[2];
        s->nthreads = 1;
        st = bl_binned_eval(s, &b, lo, hi, n, out, babs);
        s->nthreads = 3;
        int st3 = st ? st : bl_binned_eval(s, &b, lo, hi, n, o3, b3);
        s->nthreads = 0;
        CHECK(!st && !st3, "sum case %d P=%d: bl_binned_eval: %s", cs, P, gfi_strerror(st ? st : st3));
        if (st || st3) break;
        CHECK(memcmp(out, o3, M * ncol * sizeof *out) == 0 && b3[0] == babs[0],
              "sum case %d P=%d: 3 threads give other bits", cs, P);
        /* moments (binned.c, bin_width): 1-D, no sub-chunks, at most 0.5
         * (cubic) or 1.5 (quintic) doubles per point of a run, and block
         * mode kept (2^21 doubles in all the blocks' copies) */
        const size_t runs = N >> 16 > 1 ? 16 : 1, wd = P == 4 ? 4 : 8;
        const double dbl = (double)(b.G[0] * wd);
        const int by_mom = D == 1 && b.sub == 0 && dbl <= fmax((P == 4 ? 0.5 : 1.5) * (double)(N / runs), 4096) &&
                           (runs == 1 || (double)(runs * ncol) * dbl <= (double)((size_t)1 << 21));
        if (mom) {
          mran += by_mom;
        } else {
          sran++;
          flushed += b.sub > 0;
        }
        size_t cells = ncol;
        for (int j = 0; j < D; j++) cells *= b.G[j];
        slab += !mom && cells > ((size_t)1 << 21) / 16; /* N >= 2^18: 16 blocks */
        for (size_t col = 0; col < ncol; col++) {
          double err = 0, m = 0;
          for (size_t g = 0; g < M; g++) {
            err = fmax(err, fabs(out[g * ncol + col] - ref[g * ncol + col]));
            m = fmax(m, fabs(ref[g * ncol + col]));
          }
          CHECK(err <= babs[col] + 1e-16 * m,
                "sum case %d P=%d (D=%d kind %d l=%d R=%g beps=%g col %zu, sub %zu): error %.3g > bound %.3g", cs,
                P, D, kind, k.l, R, beps, col, b.sub, err, babs[col]);
          if (babs[col] > 0 && mom) mworst = fmax(mworst, err / babs[col]);
          if (babs[col] > 0 && !mom) sworst = fmax(sworst, err / babs[col]);
        }
      }
      free(ref), free(out), free(o3);
      bl_sum_free(s);
      free(x), free(c);
    }
    printf("binned: summation at beps 1e-11 .. 4e-13: %d (case, order) pairs ran, %d with sub-chunks, %d in slab "
           "mode; worst error / bound %.3g\n",
           sran, flushed, slab, sworst);
    CHECK(sran >= NSUM && flushed >= sran / 2, "summation cases: %d ran, %d with sub-chunks", sran, flushed);
    printf("binned: summation by moments at beps 3e-10 .. 2e-9: %d (case, order) pairs binned by moments; worst "
           "error / bound %.3g\n",
           mran, mworst);
    CHECK(mran >= NMOM, "moment summation cases: %d binned by moments (of %d)", mran, 2 * NMOM);
    gsl_rng_free(rm);
  }

  /* the public API: a loose tol on a large 1-D grid takes the binned route
   * and keeps tol against the direct sum */
  {
    /* N decides the route (the cost model), so it is the same sanitized;
     * there the direct reference covers every 16th grid point */
    const size_t N = 200000, G = 2048, stride = CHECK_SANITIZED ? 16 : 1, Ms = (G + stride - 1) / stride;
    double *x = malloc(N * sizeof *x), *f = malloc(G * sizeof *f), *ref = malloc(Ms * sizeof *ref),
           *qs = malloc(Ms * sizeof *qs);
    for (size_t i = 0; i < N; i++) x[i] = gsl_ran_gaussian(r, 1);
    gfi_kernel k;
    gfi_kernel_pow(&k, 4);
    double R = 12.6, lo = -5, hi = 5;
    size_t n = G;
    gfi_opts o;
    gfi_default_opts(&o);
    o.tol = 1e-4;
    gfi_density_plan *p = NULL;
    gfi_fast_info info;
    int st = gfi_density_plan_fourier(&p, &k, N, 1, x, NULL, &R, &o);
    if (!st) st = gfi_density_eval_grid(p, &lo, &hi, &n, f, &info);
    gfi_density_destroy(p);
    CHECK(st == GFI_OK, "public grid: %s", gfi_strerror(st));
    CHECK(info.route == GFI_METHOD_FAST && info.bins[0] > 0 && info.nodes_total == 0,
          "public grid at tol 1e-4: route %d, bins %zu, nodes %zu (the binned route expected)", (int)info.route,
          info.bins[0], info.nodes_total);
    /* a power kernel given as a bare struct (coef[] unset): the same bits */
    double *f2 = malloc(G * sizeof *f2);
    st = gfi_density_plan_fourier(&p, KPOW(4), N, 1, x, NULL, &R, &o);
    if (!st) st = gfi_density_eval_grid(p, &lo, &hi, &n, f2, NULL);
    gfi_density_destroy(p);
    CHECK(st == GFI_OK && memcmp(f, f2, G * sizeof *f) == 0, "public grid: a bare power kernel gives other values");
    free(f2);
    o.method = GFI_METHOD_DIRECT;
    st = gfi_density_plan_fourier(&p, &k, N, 1, x, NULL, &R, &o);
    for (size_t t = 0; t < Ms; t++) qs[t] = lo + (hi - lo) * (double)(t * stride) / (double)(G - 1);
    if (!st) st = gfi_density_eval(p, Ms, qs, ref);
    gfi_density_destroy(p);
    CHECK(st == GFI_OK, "public grid, direct: %s", gfi_strerror(st));
    double err = 0, m = 0;
    for (size_t t = 0; t < Ms; t++) err = fmax(err, fabs(f[t * stride] - ref[t])), m = fmax(m, fabs(ref[t]));
    CHECK(err <= info.bound_abs && info.bound <= o.tol && err <= 1e-4 * m,
          "public grid: error %.3g, bound %.3g (%.3g relative), max %.3g", err, info.bound_abs, info.bound, m);
    printf("binned: public 1-D grid, N = %zu, tol 1e-4: %zu cells, error %.3g, bound %.3g relative\n", N,
           info.bins[0], err / m, info.bound);
    free(x), free(f), free(ref), free(qs);
  }
  /* Nadaraya-Watson on a grid reaching the data's thin tails, tol 1e-3: the
   * first binned pass leaves the tail rows unsettled and asks for a factor
   * f; the tighter lattice scales the bound that ran (which whole lattice
   * cells put below its target), so all but 1024 / 20 rows settle and at
   * most those go to the direct sum (88 did when f scaled the target). */
  {
    const size_t N = CHECK_SANITIZED ? 50000 : 200000, G = 1024;
    gfi_fast_info info;
    double err, ymax;
    int st = nw_grid_case(r, N, 1e-3, &info, &err, &ymax);
    CHECK(st == GFI_OK, "nw grid: %s", gfi_strerror(st));
    CHECK(info.bins[0] > 0 && info.rows_direct <= G / 20, "nw grid at tol 1e-3: bins %zu, %zu rows direct (<= %zu)",
          info.bins[0], info.rows_direct, G / 20);
    CHECK(st == GFI_OK && err <= 1e-3 * ymax, "nw grid at tol 1e-3: error %.3g > tol max|y| %.3g", err, 1e-3 * ymax);
    printf("binned: NW 1-D grid, N = %zu, tol 1e-3: %zu cells, %zu rows direct, error %.3g of max |y|\n", N,
           info.bins[0], info.rows_direct, err / ymax);
  }
  /* Nadaraya-Watson on the same grid at tol 1e-10: the first pass is
   * binned, no lattice meets the tighter target the tail rows ask (the
   * sums' term), so the second pass is the NUFFT route's, tightened; the
   * rows it leaves go to the direct sum, and every value keeps tol */
  {
    const size_t N = CHECK_SANITIZED ? 70000 : 200000;
    gfi_fast_info info;
    double err, ymax;
    int st = nw_grid_case(r, N, 1e-10, &info, &err, &ymax);
    CHECK(st == GFI_OK, "nw grid at 1e-10: %s", gfi_strerror(st));
    CHECK(st == GFI_OK && err <= 1e-10 * ymax, "nw grid at tol 1e-10: error %.3g > tol max|y| %.3g", err,
          1e-10 * ymax);
    printf("binned: NW 1-D grid, N = %zu, tol 1e-10: route %s, %zu rows direct, error %.3g of max |y|\n", N,
           info.bins[0] ? "binned" : info.nodes_total ? "nufft" : "direct", info.rows_direct, err / ymax);
  }
  gsl_rng_free(r);
  return check_summary("binned");
}
