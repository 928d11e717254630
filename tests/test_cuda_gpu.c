/* libgfi_cuda against the CPU engines, on a GPU. Exits 77 (meson's "skipped")
 * with a message when no GPU is usable. Tolerances per precision:
 *  double: density 1e-12 relative (+1e-14 of the peak), NW and attention
 *          1e-10, FLT 1e-11;
 *  float:  density 2e-5 relative for even l (2e-6 of the peak for any l),
 *          NW 1e-4, attention forward 1e-5 and backward 1e-4 of the largest
 *          entry (the float errors tests/test_cuda_math.c measures on the CPU
 *          are 4e-6, 7e-7, 5e-7 and 2e-6). */
#include <string.h>
#ifdef GFI_CUDA_EMU
#include "emu/cuda_emu.h"
#else
#include <cuda_runtime.h>
#endif
#include "check.h"
#include "gfi/gfi.h"
#include "gfi_cuda.h"
#include "gfi_cuda_math.h"

/* The CPU references are the direct sums (the GPU computes direct sums):
 * under the default auto route a reference could be the fast route's,
 * within its tol 1e-10 of the largest value, looser than these checks. */
static const gfi_opts *cpu_direct(void) {
  static gfi_opts o;
  gfi_default_opts(&o);
  o.method = GFI_METHOD_DIRECT;
  return &o;
}

static double maxabs(size_t n, const double *a) {
  double m = 0;
  for (size_t i = 0; i < n; i++) if (isfinite(a[i])) m = fmax(m, fabs(a[i]));
  return m;
}
static double maxdiff(size_t n, const double *a, const double *b) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) {
      if (isnan(a[i]) != isnan(b[i])) return INFINITY;
      continue;
    }
    m = fmax(m, fabs(a[i] - b[i]));
  }
  return m;
}
static double *dev_copy(const double *h, size_t n) {
  double *d = NULL;
  if (cudaMalloc((void **)&d, n * sizeof *d) != cudaSuccess) return NULL;
  cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice);
  return d;
}

static void test_density(gsl_rng *r) {
  const size_t N = 20000, M = 500;
  double rep[7][4] = {{0}}; /* per D: worst f64 rel, f64 of peak, f32 rel, f32 of peak */
  for (size_t D = 1; D <= 6; D += (D < 4 ? 1 : 2))
    for (int l = 1; l <= 8; l += (D == 1 ? 1 : 3)) {
      double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q), R[6];
      double *ref = malloc(M * sizeof *ref), *g = malloc(M * sizeof *g), *wt = malloc(N * sizeof *wt);
      for (size_t i = 0; i < N * D; i++) x[i] = 3 * (gsl_rng_uniform(r) - 0.5) * 2;
      for (size_t i = 0; i < M * D; i++) q[i] = 3.5 * (gsl_rng_uniform(r) - 0.5) * 2;
      for (size_t i = 0; i < N; i++) wt[i] = 0.5 + gsl_rng_uniform(r);
      for (size_t j = 0; j < D; j++) R[j] = 1.5 + 0.5 * j;
      gfi_kernel k;
      gfi_kernel_pow(&k, l);
      for (int w = 0; w < 2; w++) {
        gfi_density_plan *cp;
        gfi_density_plan_fourier(&cp, &k, N, D, x, w ? wt : NULL, R, cpu_direct());
        gfi_density_eval(cp, M, q, ref);
        gfi_density_destroy(cp);
        double peak = maxabs(M, ref);
        for (int prec = 0; prec < 2; prec++) {
          gfi_cuda_opts o;
          gfi_cuda_default_opts(&o);
          o.precision = prec ? GFI_CUDA_F32 : GFI_CUDA_F64;
          gfi_cuda_density_plan *p;
          CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k, N, D, x, w ? wt : NULL, R, &o), GFI_OK);
          CHECK_STATUS(gfi_cuda_density_eval(p, M, q, g), GFI_OK);
          double worst = 0, worst_peak = 0;
          for (size_t m = 0; m < M; m++) {
            double e = fabs(g[m] - ref[m]);
            if (l % 2 == 0 && ref[m] > 1e-3 * peak) worst = fmax(worst, e / ref[m]);
            worst_peak = fmax(worst_peak, e / peak);
          }
          rep[D][2 * prec] = fmax(rep[D][2 * prec], worst);
          rep[D][2 * prec + 1] = fmax(rep[D][2 * prec + 1], worst_peak);
          if (prec == 0)
            CHECK(worst <= 1e-12 && worst_peak <= 1e-13, "f64 D %zu l %d: %g %g", D, l, worst, worst_peak);
          else /* float tables of R x: ~D ulps of phase error per pair */
            CHECK(worst <= 2e-5 && worst_peak <= 1e-6 * (double)D, "f32 D %zu l %d: %g %g", D, l, worst,
                  worst_peak);
          /* device arrays in and out give the same numbers */
          double *qd = dev_copy(q, M * D), *od = NULL, *g2 = malloc(M * sizeof *g2);
          cudaMalloc((void **)&od, M * sizeof *od);
          CHECK_STATUS(gfi_cuda_density_eval(p, M, qd, od), GFI_OK);
          cudaMemcpy(g2, od, M * sizeof *g2, cudaMemcpyDeviceToHost);
          CHECK(memcmp(g, g2, M * sizeof *g) == 0, "device arrays: same bits");
          cudaFree(qd);
          cudaFree(od);
          free(g2);
          gfi_cuda_density_destroy(p);
        }
      }
      free(x); free(q); free(ref); free(g); free(wt);
    }
  printf("density, worst error against the CPU engine over l and weights\n"
         "  (rel: relative, even l, where f > 1e-3 of the peak; peak: of the peak, any l)\n"
         "  D   f64 rel    f64 peak   f32 rel    f32 peak\n");
  for (size_t D = 1; D <= 6; D += (D < 4 ? 1 : 2))
    printf("  %zu   %-9.2e  %-9.2e  %-9.2e  %-9.2e\n", D, rep[D][0], rep[D][1], rep[D][2], rep[D][3]);
  /* a stream of the caller's, a plan on it: the same bits as the default stream */
  {
    const size_t n = 3000, mq = 200;
    double *x = malloc(n * 2 * sizeof *x), *q = malloc(mq * 2 * sizeof *q), R2[2] = {2, 2.5};
    double *a = malloc(mq * sizeof *a), *b = malloc(mq * sizeof *b);
    for (size_t i = 0; i < n * 2; i++) x[i] = gsl_rng_uniform(r) * 4 - 2;
    for (size_t i = 0; i < mq * 2; i++) q[i] = gsl_rng_uniform(r) * 5 - 2.5;
    gfi_kernel k4;
    gfi_kernel_pow(&k4, 4);
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "cudaStreamCreate");
    gfi_cuda_opts o;
    gfi_cuda_default_opts(&o);
    gfi_cuda_density_plan *p;
    CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k4, n, 2, x, NULL, R2, &o), GFI_OK);
    CHECK_STATUS(gfi_cuda_density_eval(p, mq, q, a), GFI_OK);
    gfi_cuda_density_destroy(p);
    o.stream = (void *)st;
    CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k4, n, 2, x, NULL, R2, &o), GFI_OK);
    CHECK_STATUS(gfi_cuda_density_eval(p, mq, q, b), GFI_OK);
    gfi_cuda_density_destroy(p);
    CHECK(memcmp(a, b, mq * sizeof *a) == 0, "a stream of the caller's: same bits");
    cudaStreamDestroy(st);
    /* a device that does not exist, a precision that does not exist */
    int ndev = 0;
    gfi_cuda_device_count(&ndev);
    gfi_cuda_default_opts(&o);
    o.device = ndev;
    CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k4, n, 2, x, NULL, R2, &o), GFI_EINVAL);
    gfi_cuda_default_opts(&o);
    o.precision = (gfi_cuda_precision)7;
    CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k4, n, 2, x, NULL, R2, &o), GFI_EINVAL);
    free(x); free(q); free(a); free(b);
  }
  /* errors at the boundary */
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  double x[4] = {0, 1, NAN, 2}, R = 1;
  gfi_cuda_density_plan *p;
  CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k, 4, 1, x, NULL, &R, NULL), GFI_ENONFINITE);
  x[2] = 1e300;
  CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k, 4, 1, x, NULL, &R, NULL), GFI_ERANGE);
  gfi_kernel kc;
  k.kind = GFI_PHI_CUSTOM;
  CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k, 4, 1, x, NULL, &R, NULL), GFI_EUNSUPPORTED);
  (void)kc;
}

/* D = 1, 2 run the kernels specialised on D; D = 3 the general one. */
static void test_nw(gsl_rng *r) {
  const size_t N = 5000, M = 300, V = 6;
  printf("Nadaraya-Watson, worst relative error against the CPU engine over l\n"
         "  D   f64        f32\n");
  for (size_t D = 1; D <= 3; D++) {
    double *x = malloc(N * D * sizeof *x), *y = malloc(N * V * sizeof *y), *q = malloc(M * D * sizeof *q);
    double *ref = malloc(M * V * sizeof *ref), *g = malloc(M * V * sizeof *g), R[3] = {2, 1.5, 1.8};
    unsigned char fr[300], fg[300];
    double rep[2] = {0, 0};
    for (size_t i = 0; i < N * D; i++) x[i] = 4 * (gsl_rng_uniform(r) - 0.5);
    for (size_t i = 0; i < N * V; i++) y[i] = gsl_rng_uniform(r) + (double)(i % V);
    for (size_t i = 0; i < M * D; i++) q[i] = 5 * (gsl_rng_uniform(r) - 0.5);
    q[0] = 1e3; /* far away: underflows on the GPU, resolved by the CPU */
    for (int l = 1; l <= 6; l++) {
      gfi_kernel k;
      gfi_kernel_pow(&k, l);
      gfi_nw_plan *cp;
      gfi_nw_plan_fourier(&cp, &k, N, D, V, x, y, R, cpu_direct());
      gfi_nw_eval_flags(cp, M, q, ref, NULL, fr, NULL);
      gfi_nw_destroy(cp);
      for (int prec = 0; prec < 2; prec++) {
        gfi_cuda_opts o;
        gfi_cuda_default_opts(&o);
        o.precision = prec ? GFI_CUDA_F32 : GFI_CUDA_F64;
        gfi_cuda_nw_plan *p;
        CHECK_STATUS(gfi_cuda_nw_plan_fourier(&p, &k, N, D, V, x, y, R, &o), GFI_OK);
        size_t nf;
        int st = gfi_cuda_nw_eval(p, M, q, g, &nf, fg, NULL);
        CHECK(st == GFI_OK || st == GFI_EDENOM, "nw status %d", st);
        size_t agree = 0;
        for (size_t m = 0; m < M; m++) agree += fr[m] == fg[m];
        CHECK(agree >= M - (l % 2 ? 3 : 0), "flags agree on %zu of %zu rows (D %zu l %d)", agree, M, D, l);
        double worst = 0;
        for (size_t m = 0; m < M; m++)
          if (fr[m] == 0 && fg[m] == 0)
            for (size_t c = 0; c < V; c++)
              worst = fmax(worst, fabs(g[m * V + c] - ref[m * V + c]) / fabs(ref[m * V + c]));
        rep[prec] = fmax(rep[prec], worst);
        CHECK(worst <= (prec ? 1e-4 : 1e-10), "nw D %zu l %d prec %d: %g", D, l, prec, worst);
        gfi_cuda_nw_destroy(p);
      }
    }
    printf("  %zu   %-9.2e  %-9.2e\n", D, rep[0], rep[1]);
    free(x); free(y); free(q); free(ref); free(g);
  }
}

/* A polynomial phi (its own pair-sum instantiation: one division per axis,
 * phi by Horner) against the CPU library's direct sum, density and NW, both
 * precisions, on the kernels specialised on D (1..4) and the general one
 * (D = 5); phi = z^4 written as a polynomial against the power path; the
 * kernels the device code does not cover are refused by name. */
static void test_poly(void) {
  gsl_rng *r = gfi_rng_stream(2024, 1);
  const size_t N = 3000, M = 200, V = 3;
  /* phi = 0.3 z + 0.5 z^2 + z^4 (odd part: the kernel takes negative
   * values); phi = z^2 + 0.5 z^4 + 0.25 z^8 (positive) */
  const double a1[] = {0, 0.3, 0.5, 0, 1}, a2[] = {0, 0, 1, 0, 0.5, 0, 0, 0, 0.25};
  gfi_kernel kp[2];
  CHECK_STATUS(gfi_kernel_poly(&kp[0], 4, a1), GFI_OK);
  CHECK_STATUS(gfi_kernel_poly(&kp[1], 8, a2), GFI_OK);
  double rep[2][4] = {{0}}; /* per polynomial: f64 rel, f64 peak, f32 rel, f32 peak */
  for (size_t D = 1; D <= 5; D++) {
    double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q), R[5];
    double *ref = malloc(M * V * sizeof *ref), *g = malloc(M * V * sizeof *g), *wt = malloc(N * sizeof *wt);
    double *y = malloc(N * V * sizeof *y);
    for (size_t i = 0; i < N * D; i++) x[i] = 3 * (gsl_rng_uniform(r) - 0.5) * 2;
    for (size_t i = 0; i < M * D; i++) q[i] = 3.5 * (gsl_rng_uniform(r) - 0.5) * 2;
    for (size_t i = 0; i < N; i++) wt[i] = 0.5 + gsl_rng_uniform(r);
    for (size_t i = 0; i < N * V; i++) y[i] = gsl_rng_uniform(r) + (double)(i % V);
    for (size_t j = 0; j < D; j++) R[j] = 1.5 + 0.5 * j;
    q[0] = x[0]; /* u = 0 on every axis: the series branch */
    for (int c = 0; c < 2; c++) {
      const gfi_kernel *k = &kp[c];
      gfi_density_plan *cp;
      CHECK_STATUS(gfi_density_plan_fourier(&cp, k, N, D, x, wt, R, cpu_direct()), GFI_OK);
      CHECK_STATUS(gfi_density_eval(cp, M, q, ref), GFI_OK);
      gfi_density_destroy(cp);
      double peak = maxabs(M, ref);
      for (int prec = 0; prec < 2; prec++) {
        gfi_cuda_opts o;
        gfi_cuda_default_opts(&o);
        o.precision = prec ? GFI_CUDA_F32 : GFI_CUDA_F64;
        gfi_cuda_density_plan *p;
        CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, k, N, D, x, wt, R, &o), GFI_OK);
        CHECK_STATUS(gfi_cuda_density_eval(p, M, q, g), GFI_OK);
        gfi_cuda_density_destroy(p);
        double worst = 0, worst_peak = 0;
        for (size_t m = 0; m < M; m++) {
          double e = fabs(g[m] - ref[m]);
          if (c == 1 && ref[m] > 1e-3 * peak) worst = fmax(worst, e / ref[m]);
          worst_peak = fmax(worst_peak, e / peak);
        }
        rep[c][2 * prec] = fmax(rep[c][2 * prec], worst);
        rep[c][2 * prec + 1] = fmax(rep[c][2 * prec + 1], worst_peak);
        if (prec == 0)
          CHECK(worst <= 1e-12 && worst_peak <= 1e-13, "poly %d f64 D %zu: %g %g", c, D, worst, worst_peak);
        else /* float tables of R x and a float Horner step per axis (1e-6 measured at D = 1) */
          CHECK(worst <= 2e-5 && worst_peak <= 3e-6 * (double)D, "poly %d f32 D %zu: %g %g", c, D, worst,
                worst_peak);
      }
      if (D > 3) continue;
      /* Nadaraya-Watson on the same pair sum */
      unsigned char fr[200], fg[200];
      gfi_nw_plan *cn;
      CHECK_STATUS(gfi_nw_plan_fourier(&cn, k, N, D, V, x, y, R, cpu_direct()), GFI_OK);
      int cst = gfi_nw_eval_flags(cn, M, q, ref, NULL, fr, NULL);
      CHECK(cst == GFI_OK || cst == GFI_EDENOM, "cpu nw status %d", cst);
      gfi_nw_destroy(cn);
      for (int prec = 0; prec < 2; prec++) {
        gfi_cuda_opts o;
        gfi_cuda_default_opts(&o);
        o.precision = prec ? GFI_CUDA_F32 : GFI_CUDA_F64;
        gfi_cuda_nw_plan *p;
        CHECK_STATUS(gfi_cuda_nw_plan_fourier(&p, k, N, D, V, x, y, R, &o), GFI_OK);
        size_t nf;
        int st = gfi_cuda_nw_eval(p, M, q, g, &nf, fg, NULL);
        CHECK(st == GFI_OK || st == GFI_EDENOM, "nw status %d", st);
        gfi_cuda_nw_destroy(p);
        size_t agree = 0, compared = 0;
        double worst = 0;
        for (size_t m = 0; m < M; m++) {
          agree += fr[m] == fg[m];
          if (fr[m] == 0 && fg[m] == 0) {
            compared++;
            for (size_t v = 0; v < V; v++)
              worst = fmax(worst, fabs(g[m * V + v] - ref[m * V + v]) / fabs(ref[m * V + v]));
          }
        }
        CHECK(agree >= M - 3 && compared >= M / 2, "poly %d nw D %zu: flags agree on %zu, compared %zu", c, D,
              agree, compared);
        CHECK(worst <= (prec ? 1e-4 : 1e-10), "poly %d nw D %zu prec %d: %g", c, D, prec, worst);
      }
    }
    /* phi = z^4 as a polynomial: the polynomial path against the power path */
    {
      const double a4[] = {0, 0, 0, 0, 1};
      gfi_kernel k4p, k4;
      CHECK_STATUS(gfi_kernel_poly(&k4p, 4, a4), GFI_OK);
      CHECK_STATUS(gfi_kernel_pow(&k4, 4), GFI_OK);
      double *g2 = malloc(M * sizeof *g2);
      gfi_cuda_density_plan *p;
      CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k4, N, D, x, NULL, R, NULL), GFI_OK);
      CHECK_STATUS(gfi_cuda_density_eval(p, M, q, g), GFI_OK);
      gfi_cuda_density_destroy(p);
      CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &k4p, N, D, x, NULL, R, NULL), GFI_OK);
      CHECK_STATUS(gfi_cuda_density_eval(p, M, q, g2), GFI_OK);
      gfi_cuda_density_destroy(p);
      double pk = maxabs(M, g), worst = 0;
      for (size_t m = 0; m < M; m++) worst = fmax(worst, fabs(g2[m] - g[m]) / pk);
      CHECK(worst <= 1e-14, "pow:4 as poly:0,0,0,1, D %zu: %g of the peak", D, worst);
      free(g2);
    }
    free(x); free(q); free(ref); free(g); free(wt); free(y);
  }
  printf("polynomial phi, density, worst error against the CPU direct sum over D = 1..5\n"
         "  (rel: where f > 1e-3 of the peak, positive phi only; peak: of the peak)\n"
         "  phi                          f64 rel    f64 peak   f32 rel    f32 peak\n");
  const char *names[2] = {"0.3 z + 0.5 z^2 + z^4", "z^2 + 0.5 z^4 + 0.25 z^8"};
  for (int c = 0; c < 2; c++)
    printf("  %-28s %-9.2e  %-9.2e  %-9.2e  %-9.2e\n", names[c], rep[c][0], rep[c][1], rep[c][2], rep[c][3]);
  /* refused by name: a custom phi, the flat-top kernel (density), a
   * polynomial (attention: the device code is written for powers) */
  double x[4] = {0, 1, 0.5, 2}, R1 = 1;
  gfi_cuda_density_plan *p;
  gfi_kernel kf;
  CHECK_STATUS(gfi_kernel_flattop(&kf, 0.5), GFI_OK);
  CHECK_STATUS(gfi_cuda_density_plan_fourier(&p, &kf, 4, 1, x, NULL, &R1, NULL), GFI_EUNSUPPORTED);
  const char *pn = gfi_error_param(GFI_EUNSUPPORTED);
  CHECK(pn && !strcmp(pn, "k"), "flat-top refused naming %s", pn ? pn : "(none)");
  gfi_attn_spec sp;
  gfi_attn_default_spec(&sp);
  sp.kernel = kp[0];
  double Q[4] = {0, 1, 0.5, 2}, H[4], saved[8], Ra = 1;
  CHECK_STATUS(gfi_cuda_attn_forward(&sp, 4, 1, 1, Q, Q, Q, &Ra, H, saved, NULL, NULL), GFI_EUNSUPPORTED);
  pn = gfi_error_param(GFI_EUNSUPPORTED);
  CHECK(pn && !strcmp(pn, "kernel"), "attention: polynomial refused naming %s", pn ? pn : "(none)");
  gsl_rng_free(r);
}

static void test_attention(gsl_rng *r) {
  const size_t L = 300, D = 64, Dv = 40;
  double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K), *V = malloc(L * Dv * sizeof *V);
  double *dH = malloc(L * Dv * sizeof *dH), *H = malloc(L * Dv * sizeof *H), *Hg = malloc(L * Dv * sizeof *H);
  double *sv = malloc(2 * L * sizeof *sv), *svg = malloc(2 * L * sizeof *sv);
  double *dQ = malloc(L * D * sizeof *dQ), *dK = malloc(L * D * sizeof *dK), *dV = malloc(L * Dv * sizeof *dV);
  double *gQ = malloc(L * D * sizeof *dQ), *gK = malloc(L * D * sizeof *dK), *gV = malloc(L * Dv * sizeof *dV);
  double R[64], dR[64], gR[64];
  for (size_t i = 0; i < L * D; i++) Q[i] = 0.45 * (gsl_rng_uniform(r) - 0.5);
  for (size_t i = 0; i < L * D; i++) K[i] = 0.45 * (gsl_rng_uniform(r) - 0.5);
  for (size_t i = 0; i < L * Dv; i++) V[i] = gsl_rng_uniform(r) - 0.3;
  for (size_t i = 0; i < L * Dv; i++) dH[i] = gsl_rng_uniform(r) - 0.5;
  for (size_t d = 0; d < D; d++) R[d] = 1 + 0.01 * d;
  double arep[2][5] = {{0}};
  for (int l = 1; l <= 4; l++)
    for (int causal = 0; causal <= 1; causal++) {
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kernel = *KPOW(l);
      sp.causal = causal;
      sp.per_axis_R = l % 2 == 0;
      size_t np = sp.per_axis_R ? D : 1;
      gfi_attn_plan *p;
      gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL);
      int st = gfi_attn_forward(p, Q, K, V, R, H, sv, NULL);
      gfi_attn_backward(p, Q, K, V, R, H, sv, dH, dQ, dK, dV, dR, NULL);
      gfi_attn_destroy(p);
      for (int prec = 0; prec < 2; prec++) {
        gfi_cuda_opts o;
        gfi_cuda_default_opts(&o);
        o.precision = prec ? GFI_CUDA_F32 : GFI_CUDA_F64;
        double tf = prec ? 1e-5 : 1e-10, tb = prec ? 1e-4 : 1e-10;
        CHECK_STATUS(gfi_cuda_attn_forward(&sp, L, D, Dv, Q, K, V, R, Hg, svg, NULL, &o), st);
        double e5[5] = {maxdiff(L * Dv, Hg, H) / maxabs(L * Dv, H)};
        for (int a = 0; a < 1; a++) arep[prec][a] = fmax(arep[prec][a], e5[a]);
        CHECK(maxdiff(L * Dv, Hg, H) <= tf * maxabs(L * Dv, H), "H l %d causal %d prec %d: %g", l,
              causal, prec, maxdiff(L * Dv, Hg, H));
        gfi_cuda_attn_backward(&sp, L, D, Dv, Q, K, V, R, Hg, svg, dH, gQ, gK, gV, gR, NULL, &o);
        e5[1] = maxdiff(L * D, gQ, dQ) / maxabs(L * D, dQ);
        e5[2] = maxdiff(L * D, gK, dK) / maxabs(L * D, dK);
        e5[3] = maxdiff(L * Dv, gV, dV) / maxabs(L * Dv, dV);
        e5[4] = maxdiff(np, gR, dR) / maxabs(np, dR);
        for (int a = 1; a < 5; a++) arep[prec][a] = fmax(arep[prec][a], e5[a]);
        CHECK(maxdiff(L * D, gQ, dQ) <= tb * maxabs(L * D, dQ), "dQ l %d prec %d", l, prec);
        CHECK(maxdiff(L * D, gK, dK) <= tb * maxabs(L * D, dK), "dK l %d prec %d", l, prec);
        CHECK(maxdiff(L * Dv, gV, dV) <= tb * maxabs(L * Dv, dV), "dV l %d prec %d", l, prec);
        CHECK(maxdiff(np, gR, dR) <= 10 * tb * maxabs(np, dR), "dR l %d prec %d", l, prec);
      }
    }
  printf("attention L %zu D %zu, worst error against the CPU engine over l and causal,\n"
         "as a fraction of the largest entry\n  prec  H          dQ         dK         dV         dR\n",
         L, D);
  for (int prec = 0; prec < 2; prec++)
    printf("  %s   %-9.2e  %-9.2e  %-9.2e  %-9.2e  %-9.2e\n", prec ? "f32" : "f64", arep[prec][0],
           arep[prec][1], arep[prec][2], arep[prec][3], arep[prec][4]);
  free(Q); free(K); free(V); free(dH); free(H); free(Hg); free(sv); free(svg);
  free(dQ); free(dK); free(dV); free(gQ); free(gK); free(gV);
}

static void test_sampler_ise(void) {
  gfi_model *m;
  CHECK_STATUS(gfi_model_parse(&m, "mw:10", 1, NULL), GFI_OK); /* claw */
  size_t K;
  const double *w, *mu, *cov;
  gfi_model_mixture_parts(m, &K, &w, &mu, &cov);
  double cum[16], chol[16], s = 0, tot = 0;
  for (size_t a = 0; a < K; a++) tot += w[a];
  for (size_t a = 0; a < K; a++) {
    cum[a] = (s += w[a]) / tot;
    chol[a] = sqrt(cov[a]);
  }
  cum[K - 1] = 1;
  const size_t N = 100000;
  double *x = malloc((N + 7) * sizeof *x), *x2 = malloc((N + 7) * sizeof *x2);
  CHECK_STATUS(gfi_cuda_mixture_sample(m, 5, 2, N, x, NULL), GFI_OK);
  CHECK_STATUS(gfi_cuda_mixture_sample(m, 5, 2, N + 7, x2, NULL), GFI_OK);
  CHECK(memcmp(x, x2, N * sizeof *x) == 0, "points do not depend on the launch shape");
  double worst = 0;
  for (size_t i = 0; i < N; i += 97) {
    gfi_cu_u32x4 wd[2];
    for (int b = 0; b < 2; b++) wd[b] = gfi_cu_philox_block(5, 2, 2 * i + b);
    double h;
    gfi_cu_mix_point(wd, 1, (int)K, cum, mu, chol, &h);
    worst = fmax(worst, fabs(h - x[i]));
  }
  CHECK(worst < 1e-12, "device points = host reference points (%g)", worst);
  /* ISE against the CPU engine on the same sample */
  const size_t G = 601;
  double at[601], qw[601], pt[601], est[601], ise[2];
  for (size_t g = 0; g < G; g++) {
    at[g] = -3 + 0.01 * g;
    qw[g] = 0.01;
  }
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  double R = 6;
  CHECK_STATUS(gfi_cuda_mc_ise(m, &k, &R, N, 5, 2, 2, G, at, qw, ise, NULL), GFI_OK);
  gfi_density_plan *cp;
  gfi_density_plan_fourier(&cp, &k, N, 1, x, NULL, &R, cpu_direct());
  gfi_density_eval(cp, G, at, est);
  gfi_density_destroy(cp);
  gfi_model_pdf(m, G, at, pt);
  double ref = 0;
  for (size_t g = 0; g < G; g++) ref += qw[g] * (est[g] - pt[g]) * (est[g] - pt[g]);
  CHECK_CLOSE(ise[0], ref, 1e-9, 0);
  CHECK(ise[1] != ise[0] && ise[1] > 0, "replication 3 differs");
  free(x);
  free(x2);
  gfi_model_free(m);
}

static void test_flt(void) {
  gfi_rpe *rpe;
  gfi_proposal *pr;
  CHECK_STATUS(gfi_rpe_parse(&rpe, "gauss:s=1", 1, NULL), GFI_OK);
  CHECK_STATUS(gfi_proposal_parse(&pr, "gauss:tau=0.3", rpe, NULL), GFI_OK);
  gfi_flt_positions *P;
  gfi_flt_positions_line(&P, 64);
  size_t r = 256;
  double xi[256], w[256];
  for (int kind = 0; kind < 2; kind++) {
    gsl_rng *g = gfi_rng_stream(11, 0);
    gfi_flt_draw(rpe, pr, g, r, xi, w);
    gsl_rng_free(g);
    gfi_flt_opts fo;
    gfi_flt_default_opts(&fo);
    fo.base.seed = 11;
    fo.features = kind ? GFI_FLT_REAL : GFI_FLT_COMPLEX;
    double ref[4];
    CHECK_STATUS(gfi_flt_error_trials(rpe, pr, P, 1, &r, 1, &fo, ref), GFI_OK);
    gfi_flt_err e;
    CHECK_STATUS(gfi_cuda_flt_error(rpe, P, fo.features, r, xi, w, &e, NULL), GFI_OK);
    CHECK_CLOSE(e.max_abs, ref[0], 1e-9, 1e-13);
    CHECK_CLOSE(e.frob, ref[2], 1e-9, 1e-13);
    CHECK_CLOSE(e.rel, ref[3], 1e-9, 1e-13);
    size_t L = 64, nf = 2 * L * r;
    double *A1 = malloc(nf * sizeof *A1), *A2 = malloc(nf * sizeof *A2);
    double *B1 = malloc(nf * sizeof *B1), *B2 = malloc(nf * sizeof *B2);
    const double *pos = gfi_flt_positions_coords(P);
    gfi_flt_factors(fo.features, L, 1, pos, r, xi, w, A1, A2);
    CHECK_STATUS(gfi_cuda_flt_factors(fo.features, L, 1, pos, r, xi, w, B1, B2, NULL), GFI_OK);
    CHECK(maxdiff(nf, A1, B1) < 1e-12 && maxdiff(nf, A2, B2) < 1e-12, "factors");
    free(A1); free(A2); free(B1); free(B2);
    /* whole trial sets, nested r: the CPU's numbers */
    const size_t rs[3] = {32, 100, 256}, T = 4;
    double cpu[4 * 3 * GFI_FLT_NMETRICS], gpu[4 * 3 * GFI_FLT_NMETRICS];
    fo.base.seed = 23;
    CHECK_STATUS(gfi_flt_error_trials(rpe, pr, P, 3, rs, T, &fo, cpu), GFI_OK);
    CHECK_STATUS(gfi_cuda_flt_error_trials(rpe, pr, P, 3, rs, T, &fo, gpu, NULL), GFI_OK);
    double worst = 0;
    for (size_t i = 0; i < T * 3 * GFI_FLT_NMETRICS; i++)
      worst = fmax(worst, fabs(gpu[i] - cpu[i]) / fmax(fabs(cpu[i]), 1e-300));
    CHECK(worst < 1e-9, "FLT trials (features %d): worst relative difference %g", kind, worst);
    CHECK_STATUS(gfi_cuda_flt_error_trials(rpe, pr, P, 0, rs, T, &fo, gpu, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_cuda_flt_error_trials(rpe, pr, P, 3, rs, 0, &fo, gpu, NULL), GFI_EEMPTY);
  }
  gfi_flt_positions_free(P);
  gfi_proposal_free(pr);
  gfi_rpe_free(rpe);
}

int main(void) {
  int n = 0;
  if (gfi_cuda_device_count(&n) != GFI_OK || n == 0)
    CHECK_SKIP("no CUDA device (cudaGetDeviceCount found none): GPU tests skipped");
  char name[256];
  int maj, min, sms, clk;
  gfi_cuda_device_info(0, name, sizeof name, &maj, &min, &sms, &clk);
  printf("device 0: %s, sm_%d%d, %d SMs, %d MHz\n", name, maj, min, sms, clk / 1000);
  gsl_rng *r = gfi_rng_stream(2024, 0);
  test_density(r);
  test_nw(r);
  test_attention(r);
  test_poly();
  test_sampler_ise();
  test_flt();
  gsl_rng_free(r);
#ifdef GFI_CUDA_EMU
  /* the emulator keeps account: nothing leaked, no kernel fault */
  CHECK(gfi_cuda_emu_live_bytes() == 0, "%zu bytes of device memory still allocated",
        gfi_cuda_emu_live_bytes());
  CHECK(gfi_cuda_emu_faults() == 0, "%zu emulator faults (see stderr)", gfi_cuda_emu_faults());
  return check_summary("cuda-emu");
#else
  return check_summary("cuda-gpu");
#endif
}
