/* The task driver (lib/par.h): every task runs exactly once, workspaces are
 * per thread and aligned, per-task slots reduce to the same bits for any
 * thread count and schedule, the lowest failing task's status is returned
 * with every task below it run, and workspace set-up failures stop the run. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "gfi/gfi.h"
#include "par.h"

#define T 1000

typedef struct {
  int runs[T];          /* times each task ran */
  double slot[T * 2];   /* per-task results */
  size_t fail_at[3];    /* tasks that fail (T: none) */
  int bad_ws;           /* a workspace not aligned or not private */
  int inits, finis;
  int init_fails;       /* ws_init fails for every thread */
} ctx_t;

static int task(void *vc, size_t t, void *ws) {
  ctx_t *c = vc;
  if (ws) {
    if ((uintptr_t)ws % 64) c->bad_ws = 1;
    double *w = ws;
    /* private scratch: what this task writes is still there after some work */
    for (int k = 0; k < 16; k++) w[k] = (double)t + k;
    double s = 0;
    for (size_t i = 1; i <= 200 + t % 37; i++) s += 1.0 / ((double)i * (double)(t + 1));
    for (int k = 0; k < 16; k++)
      if (w[k] != (double)t + k) c->bad_ws = 1;
    c->slot[2 * t] = s;
  } else {
    c->slot[2 * t] = 1.0 / (double)(t + 3);
  }
  c->slot[2 * t + 1] = (double)t * 1e-3;
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic
#endif
  c->runs[t]++;
  for (int k = 0; k < 3; k++)
    if (t == c->fail_at[k]) return k == 0 ? GFI_EQUAD : GFI_EDENOM;
  return GFI_OK;
}

static int ws_init(void *vc, void *ws) {
  ctx_t *c = vc;
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic
#endif
  c->inits++;
  memset(ws, 0, 16 * sizeof(double));
  return c->init_fails ? GFI_ENOMEM : GFI_OK;
}

static void ws_fini(void *vc, void *ws) {
  ctx_t *c = vc;
  (void)ws;
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic
#endif
  c->finis++;
}

static void reset(ctx_t *c) {
  memset(c, 0, sizeof *c);
  for (int k = 0; k < 3; k++) c->fail_at[k] = T;
}

int main(void) {
  static ctx_t c;
  double ref[2] = {0, 0};
  int have_ref = 0;
  const size_t chunks[3] = {0, 1, 7};
  for (int nt = 1; nt <= 4; nt++)
    for (int ci = 0; ci < 3; ci++)
      for (int withws = 0; withws < 2; withws++) {
        reset(&c);
        par_spec sp = {T, nt, withws ? 16 * sizeof(double) + 3 : 0, chunks[ci],
                       withws ? ws_init : NULL, withws ? ws_fini : NULL};
        CHECK_STATUS(par_run(&sp, task, &c), GFI_OK);
        int once = 1;
        for (size_t t = 0; t < T; t++) once &= c.runs[t] == 1;
        CHECK(once, "every task once (threads %d, chunk %zu)", nt, chunks[ci]);
        CHECK(!c.bad_ws, "workspaces aligned and private (threads %d)", nt);
        CHECK(c.inits == c.finis, "init %d fini %d", c.inits, c.finis);
        if (withws) CHECK(c.inits >= 1 && c.inits <= nt, "one init per thread: %d", c.inits);
        if (!withws) continue;
        double sum[2];
        par_sum(c.slot, T, 2, sum);
        if (!have_ref) {
          memcpy(ref, sum, sizeof ref);
          have_ref = 1;
        }
        CHECK(memcmp(ref, sum, sizeof ref) == 0, "same bits for %d threads, chunk %zu", nt, chunks[ci]);
      }
  /* par_sum is the plain ordered sum */
  double serial[2] = {0, 0};
  for (size_t t = 0; t < T; t++) {
    serial[0] += c.slot[2 * t];
    serial[1] += c.slot[2 * t + 1];
  }
  CHECK(memcmp(ref, serial, sizeof ref) == 0, "par_sum is the sum in task order");
  CHECK_CLOSE(ref[1], 1e-3 * T * (T - 1) / 2, 1e-12, 0);

  /* failures: the lowest failing task decides, and every task below it ran */
  for (int nt = 1; nt <= 4; nt++)
    for (int ci = 0; ci < 3; ci++) {
      reset(&c);
      c.fail_at[0] = 611;
      c.fail_at[1] = 200;
      c.fail_at[2] = 905;
      par_spec sp = {T, nt, 0, chunks[ci], NULL, NULL};
      CHECK_STATUS(par_run(&sp, task, &c), GFI_EDENOM); /* task 200's status */
      int below = 1;
      for (size_t t = 0; t <= 200; t++) below &= c.runs[t] == 1;
      CHECK(below, "tasks 0..200 ran (threads %d, chunk %zu)", nt, chunks[ci]);
      int atmost = 1;
      for (size_t t = 0; t < T; t++) atmost &= c.runs[t] <= 1;
      CHECK(atmost, "no task twice");
      if (nt == 1) CHECK(c.runs[201] == 0, "serial run stops at the failure");
    }
  /* a failing workspace set-up stops everything and no fini runs for it */
  reset(&c);
  c.init_fails = 1;
  c.fail_at[0] = 3;
  par_spec bad = {T, 2, 16 * sizeof(double), 1, ws_init, ws_fini};
  CHECK_STATUS(par_run(&bad, task, &c), GFI_ENOMEM);
  int none = 1;
  for (size_t t = 0; t < T; t++) none &= c.runs[t] == 0;
  CHECK(none, "no task runs without a workspace");
  CHECK(c.finis == 0, "fini after a failed init: %d", c.finis);
  /* impossible workspace sizes are refused before any thread starts */
  reset(&c);
  par_spec huge = {T, 2, SIZE_MAX - 8, 0, NULL, NULL};
  CHECK_STATUS(par_run(&huge, task, &c), GFI_ENOMEM);
  CHECK(c.runs[0] == 0, "no task after a refused allocation");
  /* trivial cases */
  CHECK_STATUS(par_for(0, 4, 1, task, &c), GFI_OK);
  CHECK_STATUS(par_run(NULL, task, &c), GFI_EINVAL);
  reset(&c);
  CHECK_STATUS(par_for(5, 64, 0, task, &c), GFI_OK);
  CHECK(c.runs[4] == 1 && c.runs[5] == 0, "more threads than tasks");
  return check_summary("par");
}
