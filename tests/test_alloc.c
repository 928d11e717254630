/* The store of freed plans' blocks (lib/alloc.h: gfi_big_take, gfi_big_give):
 * a block given back is handed to the next request of at least half its
 * size and no more than its size, small requests never touch the store, at
 * most 4 blocks and 256 MiB are kept, release empties it, and threads that
 * take, fill, check and give blocks at once each get a block of their own.
 * Then plans: a density plan that copies its points into a kept block
 * (larger than it needs, holding the previous plan's points) gives the
 * bits of a plan that reads the caller's array, on the grid and at points,
 * in 1-D and 2-D. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "check.h"
#include "gfi/gfi.h"
#include "alloc.h"

#define MB ((size_t)1 << 20)

static void test_store(void) {
  gfi_big_release();
  CHECK(gfi_big_kept() == 0, "empty after release");
  size_t cap;
  /* below GFI_HUGE_MIN: plain malloc, never kept */
  void *s = gfi_big_take(MB, &cap);
  CHECK(s && cap == 0, "small block cap %zu", cap);
  gfi_big_give(s, cap);
  CHECK(gfi_big_kept() == 0, "a small block is not kept");
  /* a fresh block: whole huge pages */
  const size_t n = 20000000;
  unsigned char *a = gfi_big_take(n, &cap);
  CHECK(a && cap >= n && cap % (2 * MB) == 0, "cap %zu for %zu", cap, n);
  if (!a) return;
  memset(a, 0xab, n);
  const size_t capa = cap;
  gfi_big_give(a, capa);
  CHECK(gfi_big_kept() == capa, "kept %zu", gfi_big_kept());
  /* too small a request for it (under half its size) and too large one: fresh blocks */
  void *b = gfi_big_take(capa + 1, &cap);
  CHECK(b && b != (void *)a && cap >= capa + 1, "a larger request gets a fresh block");
  const size_t capb = cap;
  void *c = gfi_big_take(capa / 2 - 8, &cap);
  CHECK(c && c != (void *)a, "a request under half the kept block gets a fresh one");
  const size_t capc = cap;
  /* a request between half and all of it: the kept block, as it was left */
  unsigned char *d = gfi_big_take(capa / 2 + 8, &cap);
  CHECK(d == a && cap == capa, "reused (cap %zu)", cap);
  CHECK(gfi_big_kept() == 0, "taken out of the store");
  CHECK(d && d[0] == 0xab && d[n - 1] == 0xab, "the block's bytes are the previous user's");
  gfi_big_give(d, cap);
  gfi_big_give(b, capb);
  gfi_big_give(c, capc);
  CHECK(gfi_big_kept() == capa + capb + capc, "three kept: %zu", gfi_big_kept());
  /* the smallest that holds the request is taken */
  void *e = gfi_big_take(capc - 8, &cap);
  CHECK(e == c && cap == capc, "smallest fitting block");
  gfi_big_give(e, cap);
  gfi_big_release();
  CHECK(gfi_big_kept() == 0, "empty after release");
  /* the limits: 5 blocks of 60 MiB keep 4 (240 MiB); a 100 MiB one then
   * replaces the smallest and the total stays within 256 MiB; a block
   * above 256 MiB is freed at once */
  void *p[6];
  size_t pc[6];
  for (int k = 0; k < 5; k++) p[k] = gfi_big_take(60 * MB, &pc[k]);
  for (int k = 0; k < 5; k++) {
    CHECK(p[k] != NULL, "60 MiB block %d", k);
    if (p[k]) gfi_big_give(p[k], pc[k]);
  }
  CHECK(gfi_big_kept() == 4 * 60 * MB, "kept %zu", gfi_big_kept());
  p[5] = gfi_big_take(100 * MB, &pc[5]);
  CHECK(p[5] != NULL, "100 MiB block");
  if (p[5]) gfi_big_give(p[5], pc[5]);
  CHECK(gfi_big_kept() <= 256 * MB && gfi_big_kept() >= 100 * MB, "kept %zu", gfi_big_kept());
  void *big = gfi_big_take(300 * MB, &cap);
  if (big) {
    const size_t before = gfi_big_kept();
    gfi_big_give(big, cap);
    CHECK(gfi_big_kept() == before, "a 300 MiB block is not kept");
  }
  gfi_big_release();
  CHECK(gfi_big_kept() == 0, "empty after release");
}

/* threads taking, filling, checking and giving back blocks of 4-12 MiB */
static void test_threads(void) {
  int bad = 0;
#pragma omp parallel for num_threads(4) reduction(+ : bad) schedule(static, 1)
  for (int t = 0; t < 4; t++)
    for (int it = 0; it < 40; it++) {
      const size_t n = (size_t)(4 + (t * 7 + it * 3) % 9) * MB;
      size_t cap;
      unsigned char *p = gfi_big_take(n, &cap);
      if (!p) {
        bad++;
        continue;
      }
      const unsigned char v = (unsigned char)(t * 64 + it);
      memset(p, v, n);
      for (size_t i = 0; i < n; i += 4096)
        if (p[i] != v) bad++;
      if (p[n - 1] != v) bad++;
      gfi_big_give(p, cap);
    }
  CHECK(bad == 0, "%d blocks shared or missing", bad);
  CHECK(gfi_big_kept() <= 256 * MB, "kept %zu", gfi_big_kept());
  gfi_big_release();
}

/* plans that copy into kept blocks against plans that borrow */
static void test_plans(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  for (size_t D = 1; D <= 2; D++) {
    /* the second data set is smaller: its copy goes into the first's block */
    const size_t N1 = (D == 1 ? 700000 : 350000), N2 = (D == 1 ? 560000 : 290000);
    double *x1 = malloc(N1 * D * sizeof *x1), *x2 = malloc(N2 * D * sizeof *x2);
    for (size_t i = 0; i < N1 * D; i++) x1[i] = 3 + gsl_ran_gaussian(r, 2);
    for (size_t i = 0; i < N2 * D; i++) x2[i] = (i % 5 ? 0 : 40) + gsl_ran_gaussian(r, 1);
    const double R[2] = {4, 3};
    gfi_opts oc, ob;
    gfi_default_opts(&oc);
    oc.nthreads = 2;
    ob = oc;
    ob.borrow = 1;
    gfi_big_release();
    gfi_density_plan *p1 = NULL, *pc = NULL, *pb = NULL;
    CHECK_STATUS(gfi_density_plan_fourier(&p1, &k, N1, D, x1, NULL, R, &oc), GFI_OK);
    gfi_density_destroy(p1);
    const size_t kept = gfi_big_kept();
    CHECK(kept >= N1 * D * sizeof(double), "D %zu: the first plan's copy kept (%zu)", D, kept);
    CHECK_STATUS(gfi_density_plan_fourier(&pc, &k, N2, D, x2, NULL, R, &oc), GFI_OK);
    CHECK(gfi_big_kept() == 0, "D %zu: the second plan took it", D);
    CHECK_STATUS(gfi_density_plan_fourier(&pb, &k, N2, D, x2, NULL, R, &ob), GFI_OK);
    const size_t n[2] = {D == 1 ? 1024 : 64, 48};
    const double lo[2] = {-6, -5}, hi[2] = {45, 44};
    const size_t G = D == 1 ? n[0] : n[0] * n[1];
    double *gc = malloc(G * sizeof *gc), *gb = malloc(G * sizeof *gb), q[2 * 37], vc[37], vb[37];
    for (size_t i = 0; i < 37 * D; i++) q[i] = -3 + 1.3 * (double)i;
    if (pc && pb) {
      CHECK_STATUS(gfi_density_eval_grid(pc, lo, hi, n, gc, NULL), GFI_OK);
      CHECK_STATUS(gfi_density_eval_grid(pb, lo, hi, n, gb, NULL), GFI_OK);
      CHECK(memcmp(gc, gb, G * sizeof *gc) == 0, "D %zu: grid bits differ", D);
      CHECK_STATUS(gfi_density_eval(pc, 37, q, vc), GFI_OK);
      CHECK_STATUS(gfi_density_eval(pb, 37, q, vb), GFI_OK);
      CHECK(memcmp(vc, vb, sizeof vc) == 0, "D %zu: point bits differ", D);
      CHECK(gc[G / 2] > 0 || gc[0] > 0, "D %zu: values", D);
    }
    gfi_density_destroy(pc);
    gfi_density_destroy(pb);
    free(gc);
    free(gb);
    free(x1);
    free(x2);
  }
  gfi_big_release();
  gsl_rng_free(r);
}

int main(void) {
  CHECK_TIMED(test_store);
  CHECK_TIMED(test_threads);
  CHECK_TIMED(test_plans);
  return check_summary("alloc");
}
