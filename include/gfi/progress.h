/* Progress of long work (count, rate, ETA), written to a stream the caller
 * chooses: programs pass stderr when it is a terminal or --progress was
 * given, and NULL otherwise. The library itself never prints. */
#ifndef GFI_PROGRESS_H
#define GFI_PROGRESS_H

#include "export.h"
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gfi_progress {
  FILE *f;          /* NULL: silent */
  size_t total, done;
  double t0, last;  /* start and last print (seconds, monotonic) */
  char label[64];
} gfi_progress;

GFI_EXPORT void gfi_progress_start(gfi_progress *p, FILE *f, const char *label, size_t total);
/* Add n finished items; prints at most 4 times a second. Thread-safe. */
GFI_EXPORT void gfi_progress_add(gfi_progress *p, size_t n);
/* Final line (with the elapsed time) and newline. */
GFI_EXPORT void gfi_progress_end(gfi_progress *p);
/* Seconds on a monotonic clock. */
GFI_EXPORT double gfi_now(void);

#ifdef __cplusplus
}
#endif
#endif
