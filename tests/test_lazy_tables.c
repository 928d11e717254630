/* The direct route's phase tables of an AUTO plan (density and
 * Nadaraya-Watson) are built on first direct use: the values are the same
 * bits as a DIRECT plan's, whether the first direct evaluation comes alone,
 * after a binned grid, or from several threads at once on one plan (the
 * tables are built once, under the plan's lock). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "check.h"
#include "gfi/gfi.h"
#include "engine.h"

#define NTHR 4
#define M 7

typedef struct {
  const gfi_density_plan *dp;
  const gfi_nw_plan *np;
  const double *q;
  double out[M * 2];
  int st, route;
  pthread_barrier_t *bar;
} job;

static void *run(void *v) {
  job *j = v;
  gfi_fast_info info;
  pthread_barrier_wait(j->bar);
  if (j->dp) {
    j->st = gfi_density_eval_info(j->dp, M, j->q, j->out, &info);
  } else {
    size_t nf = 0;
    j->st = gfi_nw_eval_ex(j->np, M, j->q, j->out, &nf, NULL, NULL, &info);
  }
  j->route = info.route;
  return NULL;
}

/* engine_check_data's one pass: finiteness, the phase range, the data box
 * and the digest against plain loops and gfi_digest, at sizes where the
 * last block of 2^17 values holds fewer than D values (D = 3, N = 43691:
 * 131073 values) or splits a row, with the extremes and a non-finite value
 * placed in that tail, on 1 and 2 threads; D = 4 and 5 keep the box in the
 * blocks' own rows. */
static void check_data_pass(gsl_rng *r0) {
  const size_t Ns[] = {1, 2, 43690, 43691, 43692, 65536, 65537, 87382, 131073};
  gsl_rng *r4 = gsl_rng_alloc(gsl_rng_mt19937); /* D > 3: draws of their own, so the later cases keep theirs */
  gsl_rng_set(r4, 6);
  for (size_t D = 1; D <= 5; D++)
    for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
      for (int nt = 1; nt <= 2; nt++) {
        gsl_rng *r = D <= 3 ? r0 : r4;
        const size_t N = Ns[a], n = N * D;
        double *x = malloc(n * sizeof *x), lo[5], hi[5], blo[5], bhi[5], R[5] = {2, 3, 5, 7, 11};
        uint64_t dg[2], ref[2];
        for (size_t v = 0; v < n; v++) x[v] = gsl_ran_gaussian(r, 1);
        /* the extremes: in the tail values, and one at a random place */
        x[n - 1] = 50 + (double)D;
        if (n > 1) x[n - 2] = -60 - (double)D;
        x[gsl_rng_uniform_int(r, n)] = 1e6;
        for (size_t j = 0; j < D; j++) lo[j] = INFINITY, hi[j] = -INFINITY;
        for (size_t v = 0; v < n; v++) lo[v % D] = fmin(lo[v % D], x[v]), hi[v % D] = fmax(hi[v % D], x[v]);
        int range = -1;
        CHECK_STATUS(engine_check_data(D, R, N, x, nt, &range, blo, bhi, dg), GFI_OK);
        CHECK(range == GFI_OK, "D=%zu N=%zu: range %d", D, N, range);
        for (size_t j = 0; j < D; j++)
          CHECK(blo[j] == lo[j] && bhi[j] == hi[j], "D=%zu N=%zu threads %d axis %zu: box [%g, %g], plain [%g, %g]",
                D, N, nt, j, blo[j], bhi[j], lo[j], hi[j]);
        CHECK_STATUS(gfi_digest(x, n, ref), GFI_OK);
        CHECK(dg[0] == ref[0] && dg[1] == ref[1], "D=%zu N=%zu threads %d: digest differs from gfi_digest", D, N,
              nt);
        /* the digest moves when two neighbours in different blocks are swapped */
        if (n > 131072 && x[131071] != x[131072]) {
          double t = x[131071];
          x[131071] = x[131072], x[131072] = t;
          uint64_t d2[2];
          CHECK_STATUS(engine_check_data(D, NULL, N, x, nt, NULL, NULL, NULL, d2), GFI_OK);
          CHECK(d2[0] == dg[0] && d2[1] != dg[1], "D=%zu N=%zu: a swap across blocks not seen", D, N);
          x[131072] = x[131071], x[131071] = t;
        }
        /* the phase range: R x just beyond 2^52 on the last axis of the tail */
        double Rb[5] = {1, 1, 1, 1, 1};
        Rb[(n - 1) % D] = ENGINE_PHASE_MAX / x[n - 1] * 1.0000001;
        CHECK_STATUS(engine_check_data(D, Rb, N, x, nt, &range, NULL, NULL, NULL), GFI_OK);
        CHECK(range == GFI_ERANGE, "D=%zu N=%zu: phase beyond 2^52 in the tail not found", D, N);
        /* a non-finite value as the very last one */
        x[n - 1] = NAN;
        CHECK_STATUS(engine_check_data(D, R, N, x, nt, &range, blo, bhi, dg), GFI_ENONFINITE);
        x[n - 1] = -INFINITY;
        CHECK_STATUS(engine_check_data(D, NULL, N, x, nt, NULL, NULL, NULL, NULL), GFI_ENONFINITE);
        free(x);
      }
  gsl_rng_free(r4);
}

int main(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  check_data_pass(r);
  for (size_t D = 1; D <= 2; D++) {
    const size_t N = 40000;
    double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), q[M * 2], R[2] = {6, 4};
    for (size_t i = 0; i < N * D; i++) x[i] = 1e3 + gsl_ran_gaussian(r, 1);
    for (size_t i = 0; i < N; i++) y[i] = sin(3 * x[i * D]) + gsl_ran_gaussian(r, 0.1);
    for (size_t i = 0; i < M * D; i++) q[i] = 1e3 + gsl_ran_flat(r, -2, 2);
    gfi_kernel k;
    gfi_kernel_pow(&k, 4);
    gfi_opts od, oa;
    gfi_default_opts(&od);
    od.method = GFI_METHOD_DIRECT;
    gfi_default_opts(&oa); /* AUTO */
    double ref[M], nref[M];
    gfi_density_plan *dd = NULL;
    gfi_nw_plan *nd = NULL;
    CHECK_STATUS(gfi_density_plan_fourier(&dd, &k, N, D, x, NULL, R, &od), GFI_OK);
    CHECK_STATUS(gfi_density_eval(dd, M, q, ref), GFI_OK);
    CHECK_STATUS(gfi_nw_plan_fourier(&nd, &k, N, D, 1, x, y, R, &od), GFI_OK);
    CHECK_STATUS(gfi_nw_eval(nd, M, q, nref, NULL), GFI_OK);

    /* alone, and after a binned grid (which never builds the tables) */
    for (int grid_first = 0; grid_first <= 1; grid_first++) {
      gfi_density_plan *da = NULL;
      gfi_nw_plan *na = NULL;
      gfi_opts ol = oa;
      ol.tol = grid_first ? 1e-4 : 0; /* a loose tol: the grid is binned */
      CHECK_STATUS(gfi_density_plan_fourier(&da, &k, N, D, x, NULL, R, &ol), GFI_OK);
      CHECK_STATUS(gfi_nw_plan_fourier(&na, &k, N, D, 1, x, y, R, &ol), GFI_OK);
      if (grid_first) {
        double lo[2] = {998, 998}, hi[2] = {1002, 1002}, *g = malloc(2000 * 2000 * sizeof *g);
        size_t n[2] = {D == 1 ? 2000 : 300, 300}, nf;
        gfi_fast_info gi;
        CHECK_STATUS(gfi_density_eval_grid(da, lo, hi, n, g, &gi), GFI_OK);
        CHECK(gi.bins[0] > 0, "D=%zu: the density grid is binned (route %d nodes %zu cost %g/%g)", D, gi.route, gi.nodes_total, gi.cost_fast, gi.cost_direct);
        CHECK_STATUS(gfi_nw_eval_grid(na, lo, hi, n, g, &nf, &gi), GFI_OK);
        CHECK(gi.bins[0] > 0 && gi.rows_direct == 0, "D=%zu: the NW grid is binned, no row direct", D);
        free(g);
      }
      double out[M];
      gfi_fast_info info;
      CHECK_STATUS(gfi_density_eval_info(da, M, q, out, &info), GFI_OK);
      CHECK(info.route == GFI_METHOD_DIRECT, "D=%zu: %d queries go direct", D, M);
      CHECK(memcmp(out, ref, sizeof out) == 0, "D=%zu grid_first=%d: AUTO density's direct values = DIRECT's", D,
            grid_first);
      size_t nf = 0;
      CHECK_STATUS(gfi_nw_eval_ex(na, M, q, out, &nf, NULL, NULL, &info), GFI_OK);
      CHECK(info.route == GFI_METHOD_DIRECT, "D=%zu: NW's %d queries go direct", D, M);
      CHECK(memcmp(out, nref, sizeof out) == 0, "D=%zu grid_first=%d: AUTO NW's direct values = DIRECT's", D,
            grid_first);
      gfi_density_destroy(da);
      gfi_nw_destroy(na);
    }

    /* several threads at once on one fresh plan */
    for (int nw = 0; nw <= 1; nw++) {
      gfi_density_plan *da = NULL;
      gfi_nw_plan *na = NULL;
      if (nw)
        CHECK_STATUS(gfi_nw_plan_fourier(&na, &k, N, D, 1, x, y, R, &oa), GFI_OK);
      else
        CHECK_STATUS(gfi_density_plan_fourier(&da, &k, N, D, x, NULL, R, &oa), GFI_OK);
      pthread_barrier_t bar;
      pthread_barrier_init(&bar, NULL, NTHR);
      job jobs[NTHR];
      pthread_t th[NTHR];
      for (int t = 0; t < NTHR; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].dp = da;
        jobs[t].np = na;
        jobs[t].q = q;
        jobs[t].bar = &bar;
        CHECK(pthread_create(&th[t], NULL, run, &jobs[t]) == 0, "pthread_create");
      }
      for (int t = 0; t < NTHR; t++) pthread_join(th[t], NULL);
      pthread_barrier_destroy(&bar);
      for (int t = 0; t < NTHR; t++) {
        CHECK(jobs[t].st == GFI_OK && jobs[t].route == GFI_METHOD_DIRECT, "D=%zu %s thread %d: status %d route %d",
              D, nw ? "NW" : "density", t, jobs[t].st, jobs[t].route);
        CHECK(memcmp(jobs[t].out, nw ? nref : ref, M * sizeof *ref) == 0,
              "D=%zu %s thread %d: the same bits as the DIRECT plan", D, nw ? "NW" : "density", t);
      }
      gfi_density_destroy(da);
      gfi_nw_destroy(na);
    }
    gfi_density_destroy(dd);
    gfi_nw_destroy(nd);
    free(x);
    free(y);
  }
  gsl_rng_free(r);
  return check_summary("lazy-tables");
}
