/* Options common to gfi's plans and measurements, and the one place that
 * knows about OpenMP. */
#ifndef GFI_OPTS_H
#define GFI_OPTS_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a sum over data is computed (density, Nadaraya-Watson, empirical cf). */
typedef enum gfi_method {
  GFI_METHOD_AUTO = 0,   /* the cheaper of the two by a cost model */
  GFI_METHOD_DIRECT = 1, /* the plain O(N M) sum */
  GFI_METHOD_FAST = 2    /* the band-limited route: quadrature in frequency + NUFFTs */
} gfi_method;

/* Fields are only ever added. Initialise with gfi_default_opts.
 *
 * Convention: a module whose calls need more options than these has its own
 * struct gfi_<module>_opts that begins with `gfi_opts base;` followed by its
 * own fields (gfi_flt_opts, gfi_mise_opts), and gfi_<module>_default_opts,
 * which sets base with gfi_default_opts and then its own defaults. Callers
 * write o.base.nthreads, o.base.seed, ...; a module passes &o->base where
 * plain gfi_opts are wanted. */
typedef struct gfi_opts {
  int nthreads;         /* 0 = all cores (OpenMP); 1 = serial */
  uint64_t seed;        /* where randomness enters */
  size_t query_tile;    /* queries per task; 0 = automatic */
  size_t data_block;    /* data points per inner block; 0 = automatic */
  gfi_method method;    /* direct, fast or auto (default auto) */
  double tol;           /* fast route: error bound relative to the largest |value|;
                           0 = default (1e-10 of the direct sum) */
  int borrow;           /* 0 (default): a plan copies the caller's data. 1: the
                           density and Nadaraya-Watson plans of the Fourier
                           kernels keep a pointer to the data array (the points,
                           not weights or responses) instead of a copy: the caller
                           promises to keep it alive and unchanged until the plan
                           is destroyed. The same values either way; other calls
                           ignore it (the Gaussian plans keep whitened data) */
} gfi_opts;

GFI_EXPORT void gfi_default_opts(gfi_opts *o);

/* The one check of options, made by every call that takes them: GFI_OK when
 * nthreads >= 0, method is one of gfi_method, 0 <= tol < 1 and borrow is 0
 * or 1 (NULL: the defaults, valid); GFI_EINVAL otherwise, with the field at
 * fault named ("nthreads", "method", "tol" or "borrow": gfi_error_param). */
GFI_EXPORT int gfi_opts_check(const gfi_opts *o);

/* Threads an opts value asks for, resolved (>= 1). NULL means defaults. */
GFI_EXPORT int gfi_threads_resolve(const gfi_opts *o);
/* Number of cores OpenMP would use (1 without OpenMP). */
GFI_EXPORT int gfi_threads_available(void);
/* 1 when the library was built with OpenMP. */
GFI_EXPORT int gfi_have_openmp(void);
/* A destroyed plan's copy of the data (blocks of 4 MiB and more) is kept for
 * the next plan of about its size, so that repeated fits reuse memory that
 * is already paged in: at most 4 blocks and 256 MiB in all. This frees every
 * kept block and returns their bytes. Thread-safe. */
GFI_EXPORT size_t gfi_memory_release(void);

#ifdef __cplusplus
}
#endif
#endif
