/* Devices, options and host/device array helpers of libgfi_cuda. */
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"

int gfi_cu_status(cudaError_t e) {
  if (e == cudaSuccess) return GFI_OK;
  (void)cudaGetLastError(); /* clear a sticky non-fatal error */
  return e == cudaErrorMemoryAllocation ? GFI_ENOMEM : GFI_ENODEV;
}

int gfi_cu_kern_make(const gfi_kernel *k, int poly_ok, const char *name, gfi_cu_kern *out) {
  memset(out, 0, sizeof *out);
  if (k->kind == GFI_PHI_POW) {
    out->kind = GFI_CU_PHI_POW;
  } else if (k->kind == GFI_PHI_POLY && poly_ok) {
    out->kind = GFI_CU_PHI_POLY;
  } else {
    return fail_param(GFI_EUNSUPPORTED, name);
  }
  if (k->l < 1 || k->l > GFI_CU_PHI_MAXPOW) return fail_param(GFI_EORDER, name);
  out->l = k->l;
  /* a power's coef[] may be unset (lib/kernel_internal.h: kernel_coef) */
  for (int j = 1; j <= k->l; j++) out->coef[j] = k->kind == GFI_PHI_POW ? (double)(j == k->l) : k->coef[j];
  return GFI_OK;
}

extern "C" void gfi_cuda_default_opts(gfi_cuda_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->device = 0;
  o->stream = NULL;
  o->precision = GFI_CUDA_F64;
}

extern "C" int gfi_cuda_device_count(int *n) {
  int c = 0;
  cudaError_t e = cudaGetDeviceCount(&c);
  if (e != cudaSuccess || c <= 0) {
    (void)cudaGetLastError();
    if (n) *n = 0;
    return GFI_ENODEV;
  }
  if (n) *n = c;
  return GFI_OK;
}

extern "C" int gfi_cuda_available(void) {
  int n;
  return gfi_cuda_device_count(&n) == GFI_OK && n > 0;
}

extern "C" int gfi_cuda_device_info(int device, char *name, size_t len, int *major, int *minor,
                                    int *sm_count, int *clock_khz) {
  int n;
  int st = gfi_cuda_device_count(&n);
  if (st) return st;
  if (device < 0 || device >= n) return GFI_EINVAL;
  cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) return gfi_cu_status(e);
  if (name && len) {
    strncpy(name, p.name, len - 1);
    name[len - 1] = '\0';
  }
  if (major) *major = p.major;
  if (minor) *minor = p.minor;
  if (sm_count) *sm_count = p.multiProcessorCount;
  if (clock_khz) {
    int c = 0;
    if (cudaDeviceGetAttribute(&c, cudaDevAttrClockRate, device) != cudaSuccess) {
      (void)cudaGetLastError();
      c = 0;
    }
    *clock_khz = c;
  }
  return GFI_OK;
}

static_assert(sizeof(gfi_cuda_precision) == sizeof(int), "gfi_cuda_precision is stored as an int");

int gfi_cu_begin(const gfi_cuda_opts *in, gfi_cuda_opts *o) {
  gfi_cuda_default_opts(o);
  if (in) *o = *in;
  /* read as an int: a C caller may store any value, which C++ may not load
   * as the enum (UBSan: invalid enum load) */
  int prec;
  memcpy(&prec, &o->precision, sizeof prec);
  if (prec != GFI_CUDA_F64 && prec != GFI_CUDA_F32) return GFI_EINVAL;
  int n;
  int st = gfi_cuda_device_count(&n);
  if (st) return st;
  if (o->device < 0 || o->device >= n) return GFI_EINVAL;
  return gfi_cu_status(cudaSetDevice(o->device));
}

int gfi_cu_is_device(const void *p) {
  if (!p) return 0;
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

int gfi_cu_in(const double *p, size_t n, cudaStream_t s, const double **dev, double **owned) {
  *owned = NULL;
  *dev = p;
  if (!p || gfi_cu_is_device(p) || n == 0) return GFI_OK;
  double *d;
  cudaError_t e = cudaMalloc(&d, n * sizeof *d);
  if (e != cudaSuccess) return gfi_cu_status(e);
  e = cudaMemcpyAsync(d, p, n * sizeof *d, cudaMemcpyHostToDevice, s);
  if (e != cudaSuccess) {
    cudaFree(d);
    return gfi_cu_status(e);
  }
  *owned = d;
  *dev = d;
  return GFI_OK;
}

int gfi_cu_out(double *p, size_t n, double **dev, double **owned) {
  *owned = NULL;
  *dev = p;
  if (!p || gfi_cu_is_device(p) || n == 0) return GFI_OK;
  double *d;
  cudaError_t e = cudaMalloc(&d, n * sizeof *d);
  if (e != cudaSuccess) return gfi_cu_status(e);
  *owned = d;
  *dev = d;
  return GFI_OK;
}

int gfi_cu_out_finish(double *p, size_t n, cudaStream_t s, double *owned) {
  if (!owned) return gfi_cu_status(cudaStreamSynchronize(s));
  cudaError_t e = cudaMemcpyAsync(p, owned, n * sizeof *p, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  return gfi_cu_status(e);
}

int gfi_cu_host(const double *p, size_t n, const double **host, double **owned) {
  *owned = NULL;
  *host = p;
  if (!p || !gfi_cu_is_device(p) || n == 0) return GFI_OK;
  double *h = (double *)malloc(n * sizeof *h);
  if (!h) return GFI_ENOMEM;
  cudaError_t e = cudaMemcpy(h, p, n * sizeof *h, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    free(h);
    return gfi_cu_status(e);
  }
  *owned = h;
  *host = h;
  return GFI_OK;
}
