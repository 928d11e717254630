/* The NUFFT's FFTs on the fine grid, parallel and deterministic: FFTW_ESTIMATE
 * plans (the algorithm does not depend on timings) run on one thread each.
 * In D >= 2 the transform is done axis by axis as fixed batches of 1-D
 * transforms (one row of the last axis; blocks of up to 16 columns of the
 * other axes), which threads share out; every batch is computed by the same
 * plan whichever thread runs it, so the bits do not depend on the thread
 * count. In D = 1 one plan does the whole transform. */
#include <fftw3.h>
#include <string.h>
#include "nufft_internal.h"
#include "fftw_lock.h"
#include "par.h"
#include "gfi/status.h"

#define COLS 16 /* columns per batch on the strided axes */

void nufft_fft_free(nufft_fft *f) {
  if (!f) return;
  gfi_fftw_lock();
  if (f->whole) fftw_destroy_plan(f->whole);
  if (f->row) fftw_destroy_plan(f->row);
  for (int d = 0; d < 2; d++) {
    if (f->col[d]) fftw_destroy_plan(f->col[d]);
    if (f->rem[d]) fftw_destroy_plan(f->rem[d]);
  }
  gfi_fftw_unlock();
  memset(f, 0, sizeof *f);
}

int nufft_fft_make(nufft_fft *f, int D, const size_t *n, double *grid, int sign) {
  memset(f, 0, sizeof *f);
  f->D = D;
  size_t tot = 1;
  for (int d = 0; d < D; d++) {
    f->n[d] = n[d];
    tot *= n[d];
  }
  f->tot = tot;
  int dir = sign > 0 ? FFTW_BACKWARD : FFTW_FORWARD;
  unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
  fftw_complex *g = (fftw_complex *)grid;
  int ok = 1;
  gfi_fftw_lock();
  if (D == 1) {
    f->whole = fftw_plan_dft_1d((int)n[0], g, g, dir, FFTW_ESTIMATE);
    ok = f->whole != NULL;
  } else {
    int nl = (int)n[D - 1];
    f->row = fftw_plan_many_dft(1, &nl, 1, g, NULL, 1, nl, g, NULL, 1, nl, dir, flags);
    ok = f->row != NULL;
    for (int d = 0; d < D - 1 && ok; d++) {
      size_t st = 1;
      for (int e = d + 1; e < D; e++) st *= n[e];
      int nd = (int)n[d];
      size_t B = st < COLS ? st : COLS, r = st % B;
      f->cols[d] = B;
      f->col[d] = fftw_plan_many_dft(1, &nd, (int)B, g, NULL, (int)st, 1, g, NULL, (int)st, 1,
                                     dir, flags);
      ok = f->col[d] != NULL;
      if (ok && r) {
        f->rem[d] = fftw_plan_many_dft(1, &nd, (int)r, g, NULL, (int)st, 1, g, NULL, (int)st, 1,
                                       dir, flags);
        ok = f->rem[d] != NULL;
      }
    }
  }
  gfi_fftw_unlock();
  if (!ok) {
    nufft_fft_free(f);
    return GFI_ENOMEM;
  }
  return GFI_OK;
}

/* One task is one transform (a row of the last axis, or a batch of columns
 * of another axis): each writes only its own cells, with the plan chosen by
 * its position alone. */
typedef struct {
  const nufft_fft *f;
  fftw_complex *g;
  size_t nl;                     /* last axis: row length */
  size_t st, slab, B, nblk;      /* other axes: stride, slab, batch, batches per slab */
  int d;
} fft_ctx;

static int fft_row_task(void *vc, size_t r, void *ws) {
  (void)ws;
  const fft_ctx *c = vc;
  fftw_execute_dft(c->f->row, c->g + r * c->nl, c->g + r * c->nl);
  return GFI_OK;
}

static int fft_col_task(void *vc, size_t it, void *ws) {
  (void)ws;
  const fft_ctx *c = vc;
  size_t o = it / c->nblk, b = it % c->nblk;
  fftw_complex *base = c->g + o * c->slab + b * c->B;
  fftw_plan p = (b + 1) * c->B <= c->st ? c->f->col[c->d] : c->f->rem[c->d];
  fftw_execute_dft(p, base, base);
  return GFI_OK;
}

void nufft_fft_exec(const nufft_fft *f, double *grid, int nthreads) {
  fftw_complex *g = (fftw_complex *)grid;
  if (f->D == 1) {
    fftw_execute_dft(f->whole, g, g);
    return;
  }
  int D = f->D;
  int nt = par_threads(nthreads);
  if (f->tot < 32768) nt = 1;
  /* last axis: rows (the tasks cannot fail) */
  size_t nl = f->n[D - 1], rows = f->tot / nl;
  fft_ctx c = {f, g, nl, 0, 0, 0, 0, 0};
  (void)par_for(rows, nt, 0, fft_row_task, &c);
  /* the other axes, last to first: blocks of columns */
  for (int d = D - 2; d >= 0; d--) {
    size_t st = 1, outer = 1;
    for (int e = d + 1; e < D; e++) st *= f->n[e];
    for (int e = 0; e < d; e++) outer *= f->n[e];
    size_t B = f->cols[d], nblk = (st + B - 1) / B, items = outer * nblk;
    c.st = st;
    c.slab = f->n[d] * st;
    c.B = B;
    c.nblk = nblk;
    c.d = d;
    (void)par_for(items, nt, 0, fft_col_task, &c);
  }
}
