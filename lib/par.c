/* The threaded task driver (see par.h). */
#include <stdint.h>
#include <stdlib.h>
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif
#include "par.h"
#include "gfi/opts.h"
#include "gfi/status.h"

#define PAR_ALIGN 64 /* workspaces start on their own cache line */

/* Shared state of one run: the lowest failing task and its status. */
typedef struct {
  size_t first;  /* lowest failing task seen, ntasks when none */
  int status;    /* its status */
  int init_st;   /* a failed ws_init, which stops every thread */
} par_state;

static void fail_task(par_state *s, size_t t, int st) {
#ifdef GFI_HAVE_OPENMP
#pragma omp critical(gfi_par_fail)
#endif
  if (t < s->first) {
    s->first = t;
    s->status = st;
  }
}

static void fail_init(par_state *s, int st) {
#ifdef GFI_HAVE_OPENMP
#pragma omp critical(gfi_par_fail)
#endif
  {
    if (!s->init_st) s->init_st = st;
    s->first = 0;
  }
}

/* Whether task t still has to run: no failure below it. */
static int runnable(par_state *s, size_t t) {
  size_t f;
#ifdef GFI_HAVE_OPENMP
#pragma omp atomic read
#endif
  f = s->first;
  return t < f;
}

static void run_one(par_task task, void *ctx, par_state *s, size_t t, void *ws,
                    int ready) {
  if (!ready || !runnable(s, t)) return;
  int st = task(ctx, t, ws);
  if (st) fail_task(s, t, st);
}

int par_threads(int n) {
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = n;
  return gfi_threads_resolve(&o);
}

int par_run(const par_spec *sp, par_task task, void *ctx) {
  if (!sp || !task) return GFI_EINVAL;
  const size_t T = sp->ntasks;
  if (T == 0) return GFI_OK;
  int nt = sp->nthreads < 1 ? 1 : sp->nthreads;
#ifdef GFI_HAVE_OPENMP
  if ((size_t)nt > T) nt = (int)T;
#else
  nt = 1;
#endif
  size_t stride = 0;
  unsigned char *wsall = NULL;
  if (sp->ws_bytes) {
    if (sp->ws_bytes > SIZE_MAX - PAR_ALIGN) return GFI_ENOMEM;
    stride = (sp->ws_bytes + PAR_ALIGN - 1) / PAR_ALIGN * PAR_ALIGN;
    if (stride > SIZE_MAX / (size_t)nt) return GFI_ENOMEM;
    wsall = aligned_alloc(PAR_ALIGN, stride * (size_t)nt);
    if (!wsall) return GFI_ENOMEM;
  }
  par_state s = {T, GFI_OK, GFI_OK};
  const size_t chunk = sp->chunk;
  if (nt == 1) { /* no parallel region: small runs pay no thread start-up */
    int st = sp->ws_init ? sp->ws_init(ctx, wsall) : GFI_OK;
    if (st) {
      free(wsall);
      return st;
    }
    for (size_t t = 0; t < T && !st; t++) st = task(ctx, t, wsall);
    if (sp->ws_fini) sp->ws_fini(ctx, wsall);
    free(wsall);
    return st;
  }
#ifdef GFI_HAVE_OPENMP
#pragma omp parallel num_threads(nt)
#endif
  {
#ifdef GFI_HAVE_OPENMP
    const size_t me = (size_t)omp_get_thread_num();
#else
    const size_t me = 0;
#endif
    void *ws = wsall ? wsall + me * stride : NULL;
    int ready = 1;
    if (sp->ws_init) {
      int st = sp->ws_init(ctx, ws);
      if (st) {
        ready = 0;
        fail_init(&s, st);
      }
    }
    if (chunk == 0) {
#ifdef GFI_HAVE_OPENMP
#pragma omp for schedule(static)
#endif
      for (size_t t = 0; t < T; t++) run_one(task, ctx, &s, t, ws, ready);
    } else {
#ifdef GFI_HAVE_OPENMP
#pragma omp for schedule(dynamic, chunk)
#endif
      for (size_t t = 0; t < T; t++) run_one(task, ctx, &s, t, ws, ready);
    }
    if (ready && sp->ws_fini) sp->ws_fini(ctx, ws);
  }
  free(wsall);
  return s.init_st ? s.init_st : s.status;
}

int par_for(size_t ntasks, int nthreads, size_t chunk, par_task task, void *ctx) {
  par_spec sp = {ntasks, nthreads, 0, chunk, NULL, NULL};
  return par_run(&sp, task, ctx);
}

void par_sum(const double *slots, size_t ntasks, size_t width, double *out) {
  for (size_t k = 0; k < width; k++) out[k] = 0;
  for (size_t t = 0; t < ntasks; t++)
    for (size_t k = 0; k < width; k++) out[k] += slots[t * width + k];
}
