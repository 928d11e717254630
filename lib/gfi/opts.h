/* Options common to gfi's plans and measurements, and the one place that
 * knows about OpenMP. */
#ifndef GFI_OPTS_H
#define GFI_OPTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fields are only ever added. Initialise with gfi_default_opts. */
typedef struct gfi_opts {
  int nthreads;         /* 0 = all cores (OpenMP); 1 = serial */
  uint64_t seed;        /* where randomness enters */
  size_t query_tile;    /* queries per task; 0 = automatic */
  size_t data_block;    /* data points per inner block; 0 = automatic */
} gfi_opts;

void gfi_default_opts(gfi_opts *o);

/* Threads an opts value asks for, resolved (>= 1). NULL means defaults. */
int gfi_threads_resolve(const gfi_opts *o);
/* Number of cores OpenMP would use (1 without OpenMP). */
int gfi_threads_available(void);
/* 1 when the library was built with OpenMP. */
int gfi_have_openmp(void);

#ifdef __cplusplus
}
#endif
#endif
