/* Private helpers of libgfi_cuda: status mapping, host/device arrays. */
#ifndef GFI_CUDA_INTERNAL_H
#define GFI_CUDA_INTERNAL_H

#include "cuda_compat.h"
#include <stddef.h>
#include "gfi_cuda.h"
#include "gfi_cuda_math.h"
extern "C" {
#include "fail.h"
}

/* cudaError_t -> gfi_status: allocation failures are GFI_ENOMEM, everything
 * else (no driver, no device, a failed launch) GFI_ENODEV. */
int gfi_cu_status(cudaError_t e);

#define GFI_CU_TRY(expr)                 \
  do {                                   \
    cudaError_t e_ = (expr);             \
    if (e_ != cudaSuccess) {             \
      st = gfi_cu_status(e_);            \
      goto done;                         \
    }                                    \
  } while (0)

/* The device descriptor of a kernel (gfi_cuda_math.h): power and
 * polynomial phi; any other kernel (custom phi, flat-top) is refused as
 * GFI_EUNSUPPORTED, named `name` (gfi_error_param), as is a polynomial
 * when poly_ok is 0 (the engines whose device code is written for powers).
 * k must have passed the caller's checks of its fields. */
int gfi_cu_kern_make(const gfi_kernel *k, int poly_ok, const char *name, gfi_cu_kern *out);

/* Resolve options (NULL = defaults) and select the device. */
int gfi_cu_begin(const gfi_cuda_opts *in, gfi_cuda_opts *o);

/* 1 when p is device (or managed) memory. */
int gfi_cu_is_device(const void *p);

/* A device view of n doubles: p itself when it is device memory, else a
 * device copy (*owned set; free with cudaFree). */
int gfi_cu_in(const double *p, size_t n, cudaStream_t s, const double **dev, double **owned);
/* A device buffer for n output doubles: p itself or a new buffer (*owned). */
int gfi_cu_out(double *p, size_t n, double **dev, double **owned);
/* Copy an owned output buffer back to the caller's host array. */
int gfi_cu_out_finish(double *p, size_t n, cudaStream_t s, double *owned);
/* A host copy of n doubles (p itself when it is host memory). */
int gfi_cu_host(const double *p, size_t n, const double **host, double **owned);

/* Normal-mixture sampling (mc.cu): the model's parameters on the device
 * (GFI_EUNSUPPORTED for other truths or D > GFI_CU_MC_MAXD), and a launch
 * drawing replication `stream` of `seed` into x (N x D, device). */
int gfi_cu_mixture_upload(const gfi_model *m, size_t *D, size_t *K, double **dpar, cudaStream_t s);
cudaError_t gfi_cu_mixture_launch(uint64_t seed, uint64_t stream, size_t N, size_t D, size_t K,
                                  const double *par, double *x, cudaStream_t s);

/* Device flag word for validation kernels: bit 1 non-finite, bit 2 range. */
#define GFI_CU_BAD_NONFINITE 1
#define GFI_CU_BAD_RANGE 2
#define GFI_CU_PHASE_MAX 4503599627370496.0 /* 2^52, as the CPU engines */

#endif
