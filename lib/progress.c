/* Progress lines: count, percentage, rate and ETA. */
#include <string.h>
#include <time.h>
#include "gfi/progress.h"

double gfi_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void show(const gfi_progress *p, double now, int final) {
  double el = now - p->t0;
  double rate = el > 0 ? (double)p->done / el : 0;
  fprintf(p->f, "\r%s: %zu/%zu", p->label, p->done, p->total);
  if (p->total) fprintf(p->f, " (%.0f%%)", 100.0 * (double)p->done / (double)p->total);
  fprintf(p->f, ", %.3g/s", rate);
  if (final) {
    fprintf(p->f, ", %.1f s\n", el);
  } else if (rate > 0 && p->total >= p->done) {
    double eta = (double)(p->total - p->done) / rate;
    fprintf(p->f, ", ETA %02d:%02d   ", (int)(eta / 60), (int)eta % 60);
  }
  fflush(p->f);
}

void gfi_progress_start(gfi_progress *p, FILE *f, const char *label, size_t total) {
  p->f = f;
  p->total = total;
  p->done = 0;
  p->t0 = p->last = gfi_now();
  snprintf(p->label, sizeof p->label, "%s", label ? label : "progress");
}

void gfi_progress_add(gfi_progress *p, size_t n) {
#ifdef GFI_HAVE_OPENMP
#pragma omp critical(gfi_progress)
#endif
  {
    p->done += n;
    if (p->f) {
      double t = gfi_now();
      if (t - p->last >= 0.25) {
        p->last = t;
        show(p, t, 0);
      }
    }
  }
}

void gfi_progress_end(gfi_progress *p) {
  if (p->f) show(p, gfi_now(), 1);
}
