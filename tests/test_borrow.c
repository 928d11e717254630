/* opts.borrow: a density or Nadaraya-Watson plan that reads the caller's
 * points in place gives the same bits as one that copies them, in 1-D to
 * 3-D, with and without weights, under auto, fast and direct, at points
 * and on grids (the fast, binned and direct routes, and the lazy tables
 * of auto's direct route, which read the borrowed array); the Gaussian
 * plans ignore it. The data box and digest the plans report are those of
 * plain loops and gfi_digest, and gfi_opts_check names a borrow other than
 * 0 or 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "check.h"
#include "gfi/gfi.h"

#define MQ 37

typedef struct {
  size_t D, N;
  double *x, *y, *w, *q;
  double R[3], H[9], lo[3], hi[3];
  size_t n[3];
} data_set;

static void make_data(gsl_rng *r, size_t D, size_t N, data_set *s) {
  s->D = D;
  s->N = N;
  s->x = malloc(N * D * sizeof *s->x);
  s->y = malloc(N * 2 * sizeof *s->y);
  s->w = malloc(N * sizeof *s->w);
  s->q = malloc(MQ * D * sizeof *s->q);
  /* a cluster, a second one and a few far points */
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < D; j++)
      s->x[i * D + j] = (i % 3 ? 0.0 : 2.5) + gsl_ran_gaussian(r, i % 3 ? 1 : 0.2) + (i < 3 ? (double)(8 >> D) * (double)(i + 1) : 0);
  for (size_t i = 0; i < N; i++) {
    s->y[2 * i] = sin(2 * s->x[i * D]) + gsl_ran_gaussian(r, 0.1);
    s->y[2 * i + 1] = cos(s->x[i * D + D - 1]);
    s->w[i] = gsl_ran_flat(r, 0.1, 2);
  }
  for (size_t i = 0; i < MQ * D; i++) s->q[i] = gsl_ran_flat(r, -4, 5);
  memset(s->H, 0, sizeof s->H);
  for (size_t j = 0; j < D; j++) {
    s->R[j] = 4.0 + (double)j;
    s->H[j * D + j] = 0.09 + 0.01 * (double)j;
    s->lo[j] = -4;
    s->hi[j] = 5;
    s->n[j] = D == 1 ? 301 : D == 2 ? 41 : 11;
  }
  if (D > 1) s->H[1] = s->H[D] = 0.02; /* a full H: its grid goes through the points' route */
}

static void free_data(data_set *s) {
  free(s->x);
  free(s->y);
  free(s->w);
  free(s->q);
}

static size_t grid_size(const data_set *s) {
  size_t G = 1;
  for (size_t j = 0; j < s->D; j++) G *= s->n[j];
  return G;
}

/* The plan's box and digest against plain loops and gfi_digest. */
static void check_facts(const data_set *s, const double *blo, const double *bhi, const uint64_t *dg,
                        const char *what) {
  for (size_t j = 0; j < s->D; j++) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < s->N; i++) lo = fmin(lo, s->x[i * s->D + j]), hi = fmax(hi, s->x[i * s->D + j]);
    CHECK(blo[j] == lo && bhi[j] == hi, "%s D=%zu axis %zu: box [%g, %g], plain [%g, %g]", what, s->D, j, blo[j],
          bhi[j], lo, hi);
  }
  uint64_t ref[2];
  CHECK_STATUS(gfi_digest(s->x, s->N * s->D, ref), GFI_OK);
  CHECK(dg[0] == ref[0] && dg[1] == ref[1], "%s D=%zu: the plan's digest is gfi_digest's", what, s->D);
}

/* Values at the points and on the grid of a density plan made with opts o. */
static int density_values(const data_set *s, int gauss, int weighted, const gfi_kernel *k, const gfi_opts *o,
                          double *pts, double *grid) {
  gfi_density_plan *p = NULL;
  const double *w = weighted ? s->w : NULL;
  int st = gauss ? gfi_density_plan_gauss(&p, s->N, s->D, s->x, w, s->H, o)
                 : gfi_density_plan_fourier(&p, k, s->N, s->D, s->x, w, s->R, o);
  if (st) return st;
  double lo[3], hi[3];
  uint64_t dg[2];
  CHECK_STATUS(gfi_density_data_box(p, lo, hi), GFI_OK);
  CHECK_STATUS(gfi_density_data_digest(p, dg), GFI_OK);
  check_facts(s, lo, hi, dg, "density");
  gfi_fast_info info;
  st = gfi_density_eval_grid(p, s->lo, s->hi, s->n, grid, &info);
  if (!st) st = gfi_density_eval_info(p, MQ, s->q, pts, &info);
  gfi_density_destroy(p);
  return st;
}

static int nw_values(const data_set *s, int gauss, size_t V, const gfi_kernel *k, const gfi_opts *o, double *pts,
                     double *grid) {
  gfi_nw_plan *p = NULL;
  double *y = malloc(s->N * V * sizeof *y);
  for (size_t i = 0; i < s->N; i++)
    for (size_t v = 0; v < V; v++) y[i * V + v] = s->y[2 * i + v];
  int st = gauss ? gfi_nw_plan_gauss(&p, s->N, s->D, V, s->x, y, s->H, o)
                 : gfi_nw_plan_fourier(&p, k, s->N, s->D, V, s->x, y, s->R, o);
  free(y); /* the responses are always the plan's own */
  if (st) return st;
  double lo[3], hi[3];
  uint64_t dg[2];
  CHECK_STATUS(gfi_nw_data_box(p, lo, hi), GFI_OK);
  CHECK_STATUS(gfi_nw_data_digest(p, dg), GFI_OK);
  check_facts(s, lo, hi, dg, "NW");
  size_t nf;
  st = gfi_nw_eval_grid(p, s->lo, s->hi, s->n, grid, &nf, NULL);
  if (!st) st = gfi_nw_eval(p, MQ, s->q, pts, &nf);
  gfi_nw_destroy(p);
  return st == GFI_EDENOM ? GFI_OK : st;
}

int main(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  const gfi_method methods[] = {GFI_METHOD_AUTO, GFI_METHOD_FAST, GFI_METHOD_DIRECT};
  const double tols[] = {0, 1e-4};
  int cases = 0;
  for (size_t D = 1; D <= 3; D++) {
    data_set s;
    make_data(r, D, CHECK_SANITIZED ? 800 : D == 3 ? 1500 : 5000, &s);
    const size_t G = grid_size(&s);
    double *g0 = malloc(G * 2 * sizeof *g0), *g1 = malloc(G * 2 * sizeof *g1), p0[MQ * 2], p1[MQ * 2];
    for (int mi = 0; mi < 3; mi++)
      for (int ti = 0; ti < 2; ti++) {
        if (methods[mi] == GFI_METHOD_DIRECT && ti) continue;
        gfi_opts oc, ob;
        gfi_default_opts(&oc);
        oc.method = methods[mi];
        oc.tol = tols[ti];
        oc.nthreads = 2;
        ob = oc;
        ob.borrow = 1;
        /* kinds: 0 Fourier density, 1 weighted, 2 Gaussian density, 3 Fourier NW (V = 1), 4 V = 2, 5 Gaussian NW */
        for (int kind = 0; kind < 6; kind++) {
          const int nw = kind >= 3, gauss = kind == 2 || kind == 5;
          const size_t V = kind == 4 ? 2 : 1, W = nw ? V : 1;
          /* auto's routes there: a forced fast route takes seconds (the full H's, 3-D) */
          if ((gauss || D == 3) && methods[mi] == GFI_METHOD_FAST) continue;
          int s0, s1;
          if (nw) {
            s0 = nw_values(&s, gauss, V, &k, &oc, p0, g0);
            s1 = nw_values(&s, gauss, V, &k, &ob, p1, g1);
          } else {
            s0 = density_values(&s, gauss, kind == 1, &k, &oc, p0, g0);
            s1 = density_values(&s, gauss, kind == 1, &k, &ob, p1, g1);
          }
          CHECK(s0 == s1, "D=%zu method %d tol %g kind %d: status %d copied, %d borrowed", D, (int)methods[mi],
                tols[ti], kind, s0, s1);
          if (s0 || s1) {
            printf("D=%zu method %d tol %g kind %d: status %d (both)\n", D, (int)methods[mi], tols[ti], kind, s0);
            continue;
          }
          cases++;
          CHECK(memcmp(p0, p1, MQ * W * sizeof *p0) == 0 && memcmp(g0, g1, G * W * sizeof *g0) == 0,
                "D=%zu method %d tol %g kind %d: borrowed plan's values differ from the copying plan's", D,
                (int)methods[mi], tols[ti], kind);
        }
      }
    free(g0);
    free(g1);
    free_data(&s);
  }
  CHECK(cases >= 66, "%d cases compared", cases);
  gfi_opts o;
  gfi_default_opts(&o);
  CHECK(o.borrow == 0, "copies by default");
  o.borrow = 2;
  CHECK_STATUS(gfi_opts_check(&o), GFI_EINVAL);
  CHECK(strcmp(gfi_error_param(GFI_EINVAL), "borrow") == 0, "the field at fault is named");
  uint64_t dg[2];
  CHECK_STATUS(gfi_digest(NULL, 1, dg), GFI_EINVAL);
  CHECK_STATUS(gfi_digest(NULL, 0, NULL), GFI_EINVAL);
  CHECK_STATUS(gfi_digest(NULL, 0, dg), GFI_OK);
  CHECK(dg[0] == 0 && dg[1] == 0, "the digest of nothing is 0");
  gsl_rng_free(r);
  return check_summary("borrow");
}
