/* Default options and thread-count resolution: the one place that knows OpenMP. */
#include "gfi/opts.h"
#include "gfi/status.h"
#include "fail.h"
#ifdef GFI_HAVE_OPENMP
#include <omp.h>
#endif

void gfi_default_opts(gfi_opts *o) {
  if (!o) return;
  o->nthreads = 0;
  o->seed = 1;
  o->query_tile = 0;
  o->data_block = 0;
  o->method = GFI_METHOD_AUTO;
  o->tol = 0.0;
  o->borrow = 0;
}

int gfi_opts_check(const gfi_opts *o) {
  if (!o) return GFI_OK;
  if (o->nthreads < 0) return fail_param(GFI_EINVAL, "nthreads");
  if (o->method != GFI_METHOD_AUTO && o->method != GFI_METHOD_DIRECT && o->method != GFI_METHOD_FAST)
    return fail_param(GFI_EINVAL, "method");
  if (!(o->tol >= 0 && o->tol < 1)) return fail_param(GFI_EINVAL, "tol");
  if (o->borrow != 0 && o->borrow != 1) return fail_param(GFI_EINVAL, "borrow");
  return GFI_OK;
}

int gfi_threads_available(void) {
#ifdef GFI_HAVE_OPENMP
  int n = omp_get_max_threads();
  return n > 0 ? n : 1;
#else
  return 1;
#endif
}

int gfi_threads_resolve(const gfi_opts *o) {
  if (!o || o->nthreads <= 0) return gfi_threads_available();
#ifdef GFI_HAVE_OPENMP
  return o->nthreads;
#else
  return 1;
#endif
}

int gfi_have_openmp(void) {
#ifdef GFI_HAVE_OPENMP
  return 1;
#else
  return 0;
#endif
}
