/* libgfi_cuda: GPU engines behind gfi's plan/evaluate API (built when meson
 * finds nvcc; see docs/cuda.md).
 *
 * Same conventions as the CPU library: every call returns a gfi_status (the
 * one enum of gfi/status.h; GFI_ENODEV when no usable GPU is present), the
 * library never prints, aborts or exits, plans copy what they need. Array
 * arguments may be host or device pointers (decided per pointer with
 * cudaPointerGetAttributes; managed memory counts as device memory): data
 * given on the device never travels to the host, except for the regression
 * fallback described at gfi_cuda_nw_eval.
 *
 * Precision. GFI_CUDA_F64 runs the pair math in double (agrees with the CPU
 * engines to ~1e-13 relative); GFI_CUDA_F32 runs it in float with a
 * reciprocal-multiply division (the fast path): sums of float pair terms
 * over tiles of 128 data points are accumulated in double, so the error is
 * that of the pair terms, about 1e-6 relative times max |R x| (docs/cuda.md
 * gives the measured numbers).
 *
 * Determinism: data are split into chunks whose size depends on N only and
 * the chunk sums are added in a fixed order, so results do not depend on the
 * launch configuration, the query batching or the device. Random numbers come
 * from Philox counters (see gfi_cuda_mc_ise), not from thread indices.
 *
 * Thread safety: a plan is bound to the device it was created on; evaluating
 * one plan from several host threads at once is not supported. */
#ifndef GFI_CUDA_H
#define GFI_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "gfi/status.h"
#include "gfi/kernel.h"
#include "gfi/model.h"
#include "gfi/attention.h"
#include "gfi/flt.h"
#include "gfi/mise.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GFI_CUDA_F64 = 0, GFI_CUDA_F32 = 1 } gfi_cuda_precision;

/* Options; initialise with gfi_cuda_default_opts. Fields are only added. */
typedef struct gfi_cuda_opts {
  int device;                   /* CUDA device ordinal (default 0) */
  void *stream;                 /* a cudaStream_t, or NULL for the default stream */
  gfi_cuda_precision precision; /* default GFI_CUDA_F64 */
} gfi_cuda_opts;

GFI_EXPORT void gfi_cuda_default_opts(gfi_cuda_opts *o);

/* Number of usable CUDA devices into *n (0 when the driver or a device is
 * missing: then GFI_ENODEV is returned and *n = 0). */
GFI_EXPORT int gfi_cuda_device_count(int *n);
/* 1 when at least one device is usable. */
GFI_EXPORT int gfi_cuda_available(void);
/* Name and compute capability of a device (name: at least 256 bytes). */
GFI_EXPORT int gfi_cuda_device_info(int device, char *name, size_t len, int *major, int *minor,
                         int *sm_count, int *clock_khz);

/* ---------------------------------------------------------- density */
typedef struct gfi_cuda_density_plan gfi_cuda_density_plan;

/* The Fourier density estimator of gfi_density_plan_fourier for a power
 * phi = z^l or a polynomial phi (gfi_kernel_poly: phi(sinc) per axis by
 * Horner, the product over axes); a custom phi or the flat-top kernel:
 * GFI_EUNSUPPORTED, named "k" (gfi_error_param). Same arguments and
 * errors; data, weights and R may be host or device arrays (R: host only). */
GFI_EXPORT int gfi_cuda_density_plan_fourier(gfi_cuda_density_plan **plan, const gfi_kernel *k, size_t N,
                                  size_t D, const double *data, const double *weights,
                                  const double *R, const gfi_cuda_opts *opts);
/* p(x) at M queries (M x D) into out[M]; queries and out host or device. */
GFI_EXPORT int gfi_cuda_density_eval(gfi_cuda_density_plan *plan, size_t M, const double *queries,
                          double *out);
GFI_EXPORT void gfi_cuda_density_destroy(gfi_cuda_density_plan *plan);

/* ------------------------------------------------ Nadaraya-Watson */
typedef struct gfi_cuda_nw_plan gfi_cuda_nw_plan;

/* gfi_nw_plan_fourier for a power or polynomial phi (as the density
 * plan). The plan also keeps a CPU plan of the
 * same data (host memory O(N (D + V))) for the rows the GPU cannot resolve. */
GFI_EXPORT int gfi_cuda_nw_plan_fourier(gfi_cuda_nw_plan **plan, const gfi_kernel *k, size_t N, size_t D,
                             size_t V, const double *x, const double *y, const double *R,
                             const gfi_cuda_opts *opts);
/* As gfi_nw_eval_flags (flags and denom may be NULL): the same flag rules
 * (tol = GFI_NW_DENOM_TOL or gfi_cuda_nw_set_denom_tol). Rows whose absolute
 * sum underflows the GPU's plain product (below 2^-600 in double, 2^-60 in
 * float) are re-evaluated by the CPU plan, as the CPU engine re-evaluates
 * them on its scaled path. */
GFI_EXPORT int gfi_cuda_nw_eval(gfi_cuda_nw_plan *plan, size_t M, const double *queries, double *out,
                     size_t *nflagged, unsigned char *flags, double *denom);
GFI_EXPORT int gfi_cuda_nw_set_denom_tol(gfi_cuda_nw_plan *plan, double tol);
GFI_EXPORT void gfi_cuda_nw_destroy(gfi_cuda_nw_plan *plan);

/* -------------------------------------------------------- attention */

/* Fourier attention forward and backward with the contract of
 * gfi_attn_forward / gfi_attn_backward (gfi/attention.h): spec->kind must be
 * GFI_ATTN_FOURIER (Gaussian: GFI_EUNSUPPORTED) with a power kernel (a
 * polynomial or custom phi: GFI_EUNSUPPORTED, named "kernel"), scalar or per-axis R,
 * causal or not; saved holds 2 L doubles (E_i, S~_i) as on the CPU. Q, K, V,
 * H, dH, dQ, dK, dV and saved may be host or device arrays (R, dR: host).
 * The backward differentiates the product over axes with the full product
 * divided by the factor (gfi_cu_attn_grad in gfi_cuda_math.h) instead of
 * prefix/suffix products. */
GFI_EXPORT int gfi_cuda_attn_forward(const gfi_attn_spec *spec, size_t L, size_t D, size_t Dv,
                          const double *Q, const double *K, const double *V, const double *R,
                          double *H, double *saved, gfi_attn_info *info,
                          const gfi_cuda_opts *opts);
GFI_EXPORT int gfi_cuda_attn_backward(const gfi_attn_spec *spec, size_t L, size_t D, size_t Dv,
                           const double *Q, const double *K, const double *V, const double *R,
                           const double *H, const double *saved, const double *dH, double *dQ,
                           double *dK, double *dV, double *dR, gfi_attn_info *info,
                           const gfi_cuda_opts *opts);

/* -------------------------------------------------------------- FLT */

/* gfi_flt_factors on the GPU (same layout; all arrays host or device). */
GFI_EXPORT int gfi_cuda_flt_factors(gfi_flt_features kind, size_t L, size_t ell, const double *pos, size_t r,
                         const double *xi, const double *w, double *N1, double *N2,
                         const gfi_cuda_opts *opts);
/* Error of one draw of r features (xi: r x ell, w: r; host or device) over
 * the distinct differences of P against the exact f of rpe: the metrics of
 * gfi_flt_err, as gfi_flt_error_trials reports them for one trial. */
GFI_EXPORT int gfi_cuda_flt_error(const gfi_rpe *rpe, const gfi_flt_positions *P, gfi_flt_features kind,
                       size_t r, const double *xi, const double *w, gfi_flt_err *err,
                       const gfi_cuda_opts *opts);

/* gfi_flt_error_trials with the per-difference feature sums on the GPU: the
 * same trials (trial k draws its features on the CPU from stream (seed, k);
 * nested r), the same metrics in the same layout (ntrials x nr x
 * GFI_FLT_NMETRICS), equal to the CPU's up to rounding (sums in another
 * order, phases through sincospi). fo->base.nthreads is not used. */
GFI_EXPORT int gfi_cuda_flt_error_trials(const gfi_rpe *rpe, const gfi_proposal *p, const gfi_flt_positions *P,
                              size_t nr, const size_t *rs, size_t ntrials, const gfi_flt_opts *fo,
                              double *out, const gfi_cuda_opts *opts);

/* ------------------------------------------- Monte-Carlo ISE pieces */

/* Draw N points of a normal-mixture model (gfi_model_mixture_parts must
 * succeed; D <= 16) on the GPU into x (N x D row-major, host or device):
 * replication `stream` of `seed`. Point i reads Philox blocks
 * i*B .. i*B+B-1, B = 1 + ceil(D/2), of stream (seed, stream) through
 * cuRAND's curand_init(seed, stream, 4 i B) and curand4 — the raw words of
 * gfi_rng_stream(seed, stream) — and turns them into a point with
 * gfi_cu_mix_point (component from a 53-bit uniform, Box-Muller normals,
 * Cholesky factor). The words, hence the points, do not depend on the launch
 * shape; the points are NOT those gfi_model_sample draws on the CPU from the
 * same stream (GSL's samplers use the words differently). */
GFI_EXPORT int gfi_cuda_mixture_sample(const gfi_model *m, uint64_t seed, uint64_t stream, size_t N,
                            double *x, const gfi_cuda_opts *opts);

/* Integrated squared error of the Fourier density estimator (a power or
 * polynomial phi, radii R) for `nrep` replications: replication k = first_rep .. first_rep +
 * nrep - 1 draws N points with gfi_cuda_mixture_sample(m, seed, k), evaluates
 * the estimate at the G points `at` (G x D) and returns
 *     ise[k - first_rep] = sum_g qw[g] (p_hat(at_g) - p(at_g))^2,
 * the truth p from gfi_model_pdf. `at` and `qw` are a quadrature rule chosen
 * by the caller (e.g. a grid and its cell volumes): the result is the ISE of
 * that rule, which for l = 1, 2 misses the heavy kernel tails outside it
 * (docs/theory.md section 3). Everything stays on the GPU between replications;
 * memory O(N D + G D). The building block of a Monte-Carlo MISE: the mean of
 * ise over replications. */
GFI_EXPORT int gfi_cuda_mc_ise(const gfi_model *m, const gfi_kernel *k, const double *R, size_t N,
                    uint64_t seed, uint64_t first_rep, size_t nrep, size_t G, const double *at,
                    const double *qw, double *ise, const gfi_cuda_opts *opts);

/* ------------------------------------------- Monte-Carlo MISE */

/* gfi_ise_plancherel on the GPU: the same nodes (built by the CPU code from
 * the data's extents), kappa factors, weights and psi values; the empirical
 * cf sums cos/sin(t.x_i) over the points on the device in double. data (N x
 * D) host or device. Agrees with gfi_ise_plancherel on the same points to
 * rounding (the sums are added in another order). The work limit is 2^48
 * (node, point) products instead of the CPU's 2^32 (GFI_EUNSUPPORTED
 * beyond). Power and polynomial phi (their kappa factors come from the CPU's
 * rule); other kernels: GFI_EUNSUPPORTED. */
GFI_EXPORT int gfi_cuda_ise_plancherel(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                            const double *R, const gfi_mise_opts *mopts, double *ise,
                            const gfi_cuda_opts *opts);

/* 1 when gfi_cuda_mise_mc supports the model with mopts->ise (NULL:
 * automatic): normal mixtures (D <= 16) with Plancherel for D <= 2 or the
 * grid rule for D <= 3. */
GFI_EXPORT int gfi_cuda_mise_mc_supported(const gfi_model *m, const gfi_mise_opts *mopts);

/* gfi_mise_mc on the GPU, with the CPU's contract and summary: replication
 * k draws its N points with gfi_cuda_mixture_sample(m, seed, k) (so NOT the
 * points the CPU draws from stream (seed, k)) and measures their ISE with
 * mopts->ise:
 *  - Plancherel (D <= 2): as gfi_cuda_ise_plancherel; with mopts->parts a
 *    first pass collects every replication's extents, which place the
 *    pooled sample's nodes, and the second accumulates the pooled empirical
 *    cf on them, so bias2 and var come from the pooled estimator as on the
 *    CPU (NaN when the pooled sample is too wide to resolve);
 *  - grid (D <= 3): the CPU's tensor Gauss-Legendre rule on the automatic
 *    box, measured by gfi_cuda_mc_ise; no pooled pass: bias2 and var are
 *    NaN.
 * Device memory O(N D + nodes); per replication only the D extents and the
 * ISE come back to the host. Other truths: GFI_EUNSUPPORTED; no device:
 * GFI_ENODEV. ise_out (nreps values, may be NULL) receives each ISE. */
GFI_EXPORT int gfi_cuda_mise_mc(const gfi_model *m, const gfi_kernel *k, size_t N, const double *R, size_t nreps,
                     const gfi_mise_opts *mopts, gfi_mise_result *res, double *ise_out,
                     const gfi_cuda_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
