/* The threaded task driver of the library (private).
 *
 * Every parallel loop in gfi has the same shape: T independent tasks
 * (a tile of queries times a chunk of data, a replication, a row), each
 * thread with a scratch workspace allocated once, a failure that stops the
 * remaining tasks, and per-task results written to their own slots and
 * combined afterwards in task order. Since no task depends on which thread
 * runs it, and the slots are reduced serially in a fixed order, the results
 * are the same bits for any thread count and any schedule.
 *
 *   task(ctx, t, ws)  runs task t with the calling thread's workspace ws
 *                     (NULL when ws_bytes is 0) and returns a gfi status.
 *
 * Failure: par_run returns the status of the lowest-numbered failing task,
 * which is what a serial loop over 0..T-1 stopping at the first failure
 * would return: tasks numbered above a failure are skipped, tasks below it
 * still run. A failed allocation of the workspaces (GFI_ENOMEM, before any
 * task runs) or a failed ws_init takes precedence over task statuses. */
#ifndef GFI_PAR_H
#define GFI_PAR_H

#include <stddef.h>

typedef int (*par_task)(void *ctx, size_t t, void *ws);

typedef struct par_spec {
  size_t ntasks;   /* T */
  int nthreads;    /* threads to use, clamped to [1, T]; 1 without OpenMP */
  size_t ws_bytes; /* workspace per thread (rounded up to a cache line), 0 for none */
  size_t chunk;    /* 0: static schedule (contiguous ranges of tasks); k > 0: dynamic, k at a time */
  /* Optional: set up a thread's workspace before its first task (e.g. an
   * RNG held in it) and release it after its last; fini runs only after a
   * successful init. A nonzero status from init stops the run. */
  int (*ws_init)(void *ctx, void *ws);
  void (*ws_fini)(void *ctx, void *ws);
} par_spec;

/* Threads for a request n (gfi_opts.nthreads): n when n > 0, else every
 * available thread; 1 without OpenMP (gfi_threads_resolve). */
int par_threads(int n);

/* Run tasks 0..T-1 as described above. GFI_OK when T = 0. */
int par_run(const par_spec *spec, par_task task, void *ctx);

/* Convenience for the common case: T tasks, no workspace, dynamic schedule
 * with the given chunk (0 = static). */
int par_for(size_t ntasks, int nthreads, size_t chunk, par_task task, void *ctx);

/* out[k] = slots[0 width + k] + slots[1 width + k] + ... in task order,
 * starting from 0 (k < width). */
void par_sum(const double *slots, size_t ntasks, size_t width, double *out);

#endif
