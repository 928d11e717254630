/* The streamed Monte-Carlo MISE (empirical cf at the Plancherel nodes by a
 * type-3 NUFFT or by streamed direct sums) against the in-memory direct
 * route on the same RNG streams, its invariances (sampler block size, thread
 * count: bit for bit), the exact MISE in standard errors, the 3-D Plancherel
 * ISE, and the samplers' block contract the streaming relies on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "gfi/gfi.h"
#include "gfi/rng.h"

static gfi_model *model(const char *spec, size_t D) {
  gfi_model *m = NULL;
  gfi_errinfo e;
  int st = gfi_model_parse(&m, spec, D, &e);
  if (st) {
    fprintf(stderr, "cannot parse %s: %s\n", spec, e.msg);
    exit(1);
  }
  return m;
}

static int mc(const gfi_model *m, int l, size_t N, const double *R, size_t reps, gfi_method me,
              double tol, int nthreads, size_t block, gfi_mise_result *r, double *ise) {
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.seed = 11;
  o.base.method = me;
  o.base.tol = tol;
  o.base.nthreads = nthreads;
  o.base.data_block = block;
  return gfi_mise_mc(m, KPOW(l), N, R, reps, &o, r, ise);
}

/* Drawing n points at once or in calls of 7 and 1000 gives the same bits. */
static void test_sampler_blocks(void) {
  const char *spec[] = {"normal", "mw:3", "laplace", "t:5", "cauchy", "uniform", "beta:2,3", "normal"};
  size_t dims[] = {1, 1, 1, 1, 2, 1, 1, 3};
  size_t n = 2503;
  for (int a = 0; a < 8; a++) {
    gfi_model *m = model(spec[a], dims[a]);
    size_t D = dims[a];
    double *x = malloc(n * D * sizeof *x), *y = malloc(n * D * sizeof *y);
    size_t bs[] = {7, 1000};
    gsl_rng *r = gfi_rng_stream(5, 3);
    CHECK_STATUS(gfi_model_sample(m, r, n, x), GFI_OK);
    for (int b = 0; b < 2; b++) {
      gfi_rng_reset(r, 5, 3);
      for (size_t i = 0; i < n; i += bs[b]) {
        size_t k = n - i < bs[b] ? n - i : bs[b];
        CHECK_STATUS(gfi_model_sample(m, r, k, y + i * D), GFI_OK);
      }
      CHECK(!memcmp(x, y, n * D * sizeof *x), "%s: blocks of %zu change the points", spec[a], bs[b]);
    }
    gsl_rng_free(r);
    free(x);
    free(y);
    gfi_model_free(m);
  }
}

/* Fast (NUFFT) and auto against direct on the same streams: every ISE, the
 * MISE and its parts to 1e-10 relative. */
static void test_fast_vs_direct(void) {
  struct {
    const char *spec;
    size_t D, N, reps;
    int l;
    double R[2];
  } c[] = {{"mw:2", 1, 3000, 5, 2, {2, 0}},
           {"mw:6", 1, 800, 4, 1, {3, 0}},
           {"normal:cov=1,0.5,0.5,2", 2, 400, 4, 4, {1.5, 1.2}},
           {"laplace", 2, 300, 3, 2, {1, 1}}};
  for (int i = 0; i < 4; i++) {
    gfi_model *m = model(c[i].spec, c[i].D);
    gfi_mise_result rd, rf, ra;
    double id[8], iff[8], ia[8];
    CHECK_STATUS(mc(m, c[i].l, c[i].N, c[i].R, c[i].reps, GFI_METHOD_DIRECT, 0, 0, 0, &rd, id), GFI_OK);
    CHECK_STATUS(mc(m, c[i].l, c[i].N, c[i].R, c[i].reps, GFI_METHOD_FAST, 1e-14, 0, 0, &rf, iff), GFI_OK);
    CHECK_STATUS(mc(m, c[i].l, c[i].N, c[i].R, c[i].reps, GFI_METHOD_AUTO, 1e-14, 0, 0, &ra, ia), GFI_OK);
    CHECK(rd.method == GFI_METHOD_DIRECT && rf.method == GFI_METHOD_FAST && ra.method != 0,
          "%s: routes %d %d %d", c[i].spec, rd.method, rf.method, ra.method);
    CHECK(rf.nodes[0] > 0 && (c[i].D < 2 || rf.nodes[1] > 0), "%s: node counts", c[i].spec);
    for (size_t k = 0; k < c[i].reps; k++) {
      CHECK_CLOSE(iff[k], id[k], 1e-10, 0);
      CHECK_CLOSE(ia[k], id[k], 1e-10, 0);
    }
    CHECK_CLOSE(rf.mise, rd.mise, 1e-10, 0);
    CHECK_CLOSE(rf.se, rd.se, 1e-8, 0);
    CHECK(fabs(rf.bias2 - rd.bias2) <= 1e-10 * rd.mise, "%s: bias2 %.17g vs %.17g", c[i].spec, rf.bias2,
          rd.bias2);
    CHECK(fabs(rf.var - rd.var) <= 1e-10 * rd.mise, "%s: var %.17g vs %.17g", c[i].spec, rf.var, rd.var);
    CHECK(rf.ise_err_bound > 0 && rf.ise_err_bound < 1e-10 * rf.mise, "%s: bound %g", c[i].spec,
          rf.ise_err_bound);
    /* a loose tolerance moves the ISE by no more than the bound it reports */
    gfi_mise_result rl;
    double il[8];
    CHECK_STATUS(mc(m, c[i].l, c[i].N, c[i].R, c[i].reps, GFI_METHOD_FAST, 1e-6, 0, 0, &rl, il), GFI_OK);
    for (size_t k = 0; k < c[i].reps; k++)
      CHECK(fabs(il[k] - id[k]) <= rl.ise_err_bound + 1e-12 * id[k], "%s tol 1e-6: |%.3g| > bound %.3g",
            c[i].spec, il[k] - id[k], rl.ise_err_bound);
    gfi_model_free(m);
  }
}

/* Bits: the sampler block size and the thread count change nothing; N spans
 * several streamed chunks. */
static void test_invariance(void) {
  gfi_model *m1 = model("mw:2", 1), *m2 = model("normal", 2);
  gfi_method me[] = {GFI_METHOD_FAST, GFI_METHOD_AUTO};
  for (int a = 0; a < 2; a++) {
    const gfi_model *m = a ? m2 : m1;
    size_t N = a ? 70000 : 140001;
    double R[2] = {a ? 0.8 : 1.5, 0.8};
    for (int e = 0; e < 2; e++) {
      gfi_mise_result r0, r;
      double i0[3], i1[3];
      CHECK_STATUS(mc(m, 2, N, R, 3, me[e], 1e-9, 1, 0, &r0, i0), GFI_OK);
      size_t blocks[] = {7, 1000, 65536, 1 << 20};
      int threads[] = {2, 3, 2, 1};
      for (int b = 0; b < 4; b++) {
        CHECK_STATUS(mc(m, 2, N, R, 3, me[e], 1e-9, threads[b], blocks[b], &r, i1), GFI_OK);
        CHECK(!memcmp(i0, i1, sizeof i0) && r.mise == r0.mise && r.bias2 == r0.bias2 && r.var == r0.var,
              "D=%d method %d: block %zu threads %d change the bits (%.17g vs %.17g)", a + 1, (int)me[e],
              blocks[b], threads[b], r.mise, r0.mise);
      }
    }
  }
  gfi_model_free(m1);
  gfi_model_free(m2);
}

/* The streamed MISE against the exact MISE within 4 standard errors, and its
 * parts within their own Monte-Carlo noise. */
static void test_vs_exact(void) {
  struct {
    const char *spec;
    size_t D, N, reps;
    int l;
    double R[3];
  } c[] = {{"mw:2", 1, 20000, 40, 2, {2.5, 0, 0}},
           {"normal:cov=1,0.3,0.3,1", 2, 2000, 30, 4, {1.5, 1.5, 0}},
           {"normal", 3, 200, 16, 2, {0.8, 0.8, 0.8}}};
  for (int i = 0; i < 3; i++) {
    gfi_model *m = model(c[i].spec, c[i].D);
    gfi_mise_result ex, r;
    CHECK_STATUS(gfi_mise_exact(m, KPOW(c[i].l), (double)c[i].N, c[i].R, NULL, &ex), GFI_OK);
    size_t reps = CHECK_SANITIZED ? c[i].reps / 2 : c[i].reps; /* sanitized: half the replications */
    CHECK_STATUS(mc(m, c[i].l, c[i].N, c[i].R, reps, GFI_METHOD_AUTO, 0, 0, 0, &r, NULL), GFI_OK);
    CHECK(fabs(r.mise - ex.mise) <= 4 * r.se, "%s D=%zu: MC %.6g +- %.2g vs exact %.6g", c[i].spec,
          c[i].D, r.mise, r.se, ex.mise);
    CHECK(r.se > 0 && r.se < 0.5 * r.mise, "%s: se %g", c[i].spec, r.se);
    gfi_model_free(m);
  }
}

/* D = 3 Plancherel ISE: resolution 1 against 2, and against the grid ISE. */
static void test_ise3(void) {
  gfi_model *m = model("normal:cov=1,0.3,0,0.3,1,0.2,0,0.2,1.5", 3);
  size_t N = 60;
  double *x = malloc(N * 3 * sizeof *x), R[3] = {1.2, 1.0, 0.9};
  gsl_rng *r = gfi_rng_stream(2, 0);
  gfi_model_sample(m, r, N, x);
  gsl_rng_free(r);
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  double a, b, g, tb, f;
  CHECK_STATUS(gfi_ise_plancherel(m, KPOW(2), N, x, R, &o, &a), GFI_OK);
  o.resolution = 2;
  CHECK_STATUS(gfi_ise_plancherel(m, KPOW(2), N, x, R, &o, &b), GFI_OK);
  CHECK_CLOSE(a, b, 1e-10, 0);
  o.resolution = 1;
  o.base.method = GFI_METHOD_FAST;
  o.base.tol = 1e-13;
  CHECK_STATUS(gfi_ise_plancherel(m, KPOW(2), N, x, R, &o, &f), GFI_OK);
  CHECK_CLOSE(f, a, 1e-9, 0);
  gfi_kernel k;
  gfi_kernel_pow(&k, 2);
  o.base.method = GFI_METHOD_AUTO;
  o.grid_halfwidth = 7;
  o.grid_cells = 28; /* 224^3 points: cells of half a unit, 8 points each */
  if (CHECK_SANITIZED) o.grid_cells = 8; /* 64^3 points: cells of 1.75 units (a wider bound) */
  CHECK_STATUS(gfi_ise_grid(m, &k, N, x, R, NULL, NULL, &o, &g, &tb), GFI_OK);
  CHECK(g <= a * (1 + 1e-6) && a <= g + tb + 1e-6 * a, "3-D: Plancherel %.10g outside grid [%.10g, %.10g]", a,
        g, g + tb);
  free(x);
  gfi_model_free(m);
}

static void test_errors(void) {
  /* Cauchy at N = 1e6: one rule for all would need more than 2^24 nodes */
  gfi_model *m = model("cauchy", 1);
  double R = 2;
  gfi_mise_result r;
  CHECK_STATUS(mc(m, 2, 1000000, &R, 2, GFI_METHOD_FAST, 0, 0, 0, &r, NULL), GFI_EUNSUPPORTED);
  gfi_model_free(m);
  /* a model without a cf rule: the streamed route refuses as the direct one */
  m = model("uniform", 1);
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.ise = GFI_ISE_PLANCHEREL;
  o.base.method = GFI_METHOD_FAST;
  CHECK_STATUS(gfi_mise_mc(m, KPOW(2), 100, &R, 2, &o, &r, NULL), GFI_EUNSUPPORTED);
  gfi_model_free(m);
  /* Cauchy at N = 1e4 (the density rate checks' Theorem 3b row): the shared
   * rule is too large, and one replication's own rule exceeds the direct
   * sums' budget; the run is refused (after sizing every replication's rule,
   * before any sums: the other replications' sums took 78 s of one core) */
  m = model("cauchy", 1);
  gfi_mise_default_opts(&o);
  o.base.seed = 9000032;
  R = 12.340786678882768;
  CHECK_STATUS(gfi_mise_mc(m, KPOW(2), 10000, &R, 17, &o, &r, NULL), GFI_EUNSUPPORTED);
  gfi_model_free(m);
}

/* AUTO without the pooled parts: each replication on the rule of its own
 * extent (nodes[] = 0), its ISE within the reported bound of the direct
 * route's; with the parts, one streamed rule (nodes[0] > 0). A Cauchy truth
 * (far outliers in some replications) and a 2-D mixture; thread counts 1
 * and 2 give the same bits. */
static void test_per_replication(void) {
  struct {
    const char *spec;
    size_t D, N, reps;
    int l;
    double R[2];
    double tol;
  } c[] = {{"cauchy", 1, 600, 4, 4, {3, 0}, 1e-8},
           {"cauchy", 1, 300, 5, 2, {2, 0}, 0},
           {"mix:0.5*normal:mean=-1,0|0.5*normal:mean=2,1", 2, 500, 4, 2, {1.5, 1.5}, 1e-6}};
  /* sanitized builds: the smaller Cauchy case and the mixture */
  for (int i = CHECK_SANITIZED ? 1 : 0; i < 3; i++) {
    gfi_model *m = model(c[i].spec, c[i].D);
    gfi_mise_result rd, ra, ra1, rp;
    double id[8], ia[8], ia1[8];
    CHECK_STATUS(mc(m, c[i].l, c[i].N, c[i].R, c[i].reps, GFI_METHOD_DIRECT, 0, 0, 0, &rd, id), GFI_OK);
    gfi_mise_opts o;
    gfi_mise_default_opts(&o);
    o.base.seed = 11;
    o.base.tol = c[i].tol;
    o.parts = 0;
    CHECK_STATUS(gfi_mise_mc(m, KPOW(c[i].l), c[i].N, c[i].R, c[i].reps, &o, &ra, ia), GFI_OK);
    o.base.nthreads = 1;
    CHECK_STATUS(gfi_mise_mc(m, KPOW(c[i].l), c[i].N, c[i].R, c[i].reps, &o, &ra1, ia1), GFI_OK);
    CHECK(ra.nodes[0] == 0 && ra.method != 0, "%s: per-replication rules (nodes %zu, method %d)", c[i].spec,
          ra.nodes[0], ra.method);
    CHECK(ra.method == GFI_METHOD_DIRECT ? ra.ise_err_bound == 0 : ra.ise_err_bound > 0, "%s: bound %g, method %d",
          c[i].spec, ra.ise_err_bound, ra.method);
    for (size_t k = 0; k < c[i].reps; k++) {
      CHECK(fabs(ia[k] - id[k]) <= ra.ise_err_bound + 1e-12 * id[k], "%s rep %zu: |%.3g| > bound %.3g", c[i].spec, k,
            ia[k] - id[k], ra.ise_err_bound);
      CHECK(ia[k] == ia1[k], "%s rep %zu: 1 and all threads differ", c[i].spec, k);
    }
    o.parts = 1;
    o.base.nthreads = 0;
    CHECK_STATUS(gfi_mise_mc(m, KPOW(c[i].l), c[i].N, c[i].R, c[i].reps, &o, &rp, NULL), GFI_OK);
    CHECK(rp.nodes[0] > 0, "%s: with parts, one shared rule", c[i].spec);
    CHECK(fabs(rp.mise - rd.mise) <= rp.ise_err_bound + 1e-10 * rd.mise, "%s: shared-rule MISE %.17g vs %.17g",
          c[i].spec, rp.mise, rd.mise);
    gfi_model_free(m);
  }
}

int main(void) {
  CHECK_TIMED(test_sampler_blocks);
  CHECK_TIMED(test_fast_vs_direct);
  CHECK_TIMED(test_per_replication);
  CHECK_TIMED(test_invariance);
  CHECK_TIMED(test_vs_exact);
  CHECK_TIMED(test_ise3);
  CHECK_TIMED(test_errors);
  return check_summary("mise-fast");
}
