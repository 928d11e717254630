/* GPU benchmark: libgfi_cuda against PyTorch on the same GPU, in one run.
 *
 *   density sum, N = M = 10^6, D = 3, phi = z^4, float32 and float64
 *       (pairs per second = N M / time; float32 also as a fraction of the
 *        GPU's float32 instruction-throughput bound, docs/cuda.md)
 *   Fourier attention forward and forward + backward, L = 4096, D = Dv = 64,
 *       float32 and float64
 *
 * All arrays live on the device (the timings exclude host transfers). Data
 * and queries are written to a temporary folder so that the PyTorch peer
 * (bench/torch_peer.py, run with `python3` or $GFI_TORCH_PYTHON) computes the
 * same sums on the same numbers; it reports its own times and its results'
 * largest relative difference from gfi's. Prints the GPU model, SM count and
 * clock. Without a GPU it prints "no GPU: skipped" and exits 77.
 *
 *   build/bench/bench_cuda [--quick | --smoke] [--peer bench/torch_peer.py] [--no-peer]
 *
 * --smoke: tiny sizes, one repetition, no peer: runs every step of the
 * program (the test 'bench-cuda-emu' runs it on the CPU emulator, where the
 * times mean nothing). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef GFI_CUDA_EMU
#include "emu/cuda_emu.h"
#else
#include <cuda_runtime.h>
#endif
#include <gsl/gsl_randist.h>
#include "gfi/gfi.h"
#include "gfi_cuda.h"

/* FP32-pipe instructions per pair of the D = 3, l = 4 float32 inner loop
 * (FFMA + FMUL + FADD in the SASS of ps_kernel<float, 3, 4, 4, 0>: 272 per
 * 8 pairs) and all instructions (353 per 8 pairs); docs/cuda.md. */
#define FP32_INSTR_PER_PAIR 34.0
#define ALL_INSTR_PER_PAIR 44.125

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static void die(const char *what, int st) {
  fprintf(stderr, "bench_cuda: %s: %s\n", what, gfi_strerror(st));
  exit(1);
}
static double *to_dev(const double *h, size_t n) {
  double *d;
  if (cudaMalloc((void **)&d, n * sizeof *d) != cudaSuccess) die("cudaMalloc", GFI_ENOMEM);
  cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice);
  return d;
}
static FILE *gfi_log; /* "key value" lines for the peer's ratios */

static void write_bin(const char *dir, const char *name, const double *x, size_t n) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  if (!f || fwrite(x, sizeof *x, n, f) != n) {
    fprintf(stderr, "bench_cuda: cannot write %s\n", p);
    exit(1);
  }
  fclose(f);
}

int main(int argc, char **argv) {
  const char *peer = GFI_BENCH_DIR "/torch_peer.py";
  int quick = 0, smoke = 0, use_peer = 1;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--quick")) quick = 1;
    else if (!strcmp(argv[a], "--smoke")) smoke = 1, use_peer = 0;
    else if (!strcmp(argv[a], "--no-peer")) use_peer = 0;
    else if (!strcmp(argv[a], "--peer") && a + 1 < argc) peer = argv[++a];
    else {
      fprintf(stderr, "usage: bench_cuda [--quick | --smoke] [--peer FILE] [--no-peer]\n");
      return 2;
    }
  }
  int ndev = 0;
  if (gfi_cuda_device_count(&ndev) != GFI_OK || ndev == 0) {
    printf("bench_cuda: no GPU: skipped (cudaGetDeviceCount found no device)\n");
    return 77;
  }
  char name[256];
  int maj, min, sms, clk;
  gfi_cuda_device_info(0, name, sizeof name, &maj, &min, &sms, &clk);
  double clock_hz = clk * 1e3;
  printf("# gfi bench_cuda, gfi %s\n", GFI_VERSION);
  printf("# device: %s, sm_%d%d, %d SMs, max clock %.0f MHz\n", name, maj, min, sms, clk / 1e3);
  /* float32 bound: 128 FP32 lanes per SM per cycle (sm_80 .. sm_90) */
  double bound = sms * 128.0 * clock_hz / FP32_INSTR_PER_PAIR;
  double issue = sms * 128.0 * clock_hz / ALL_INSTR_PER_PAIR;
  if (bound > 0)
    printf("# float32 bound (D=3, l=4): %.4g pairs/s (FP32 pipe, %.1f instr/pair); issue bound %.4g "
           "(%.3f instr/pair)\n", bound, FP32_INSTR_PER_PAIR, issue, ALL_INSTR_PER_PAIR);
  else
    printf("# float32 bound: not computed (the device reports no clock rate)\n");

  const size_t N = smoke ? 2000 : quick ? 100000 : 1000000, M = N, D = 3;
  const int reps = smoke ? 1 : 3;
  char dir[] = "/tmp/gfi_bench_cuda_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q);
  gsl_rng *r = gfi_rng_stream(1, 0);
  for (size_t i = 0; i < N * D; i++) x[i] = gsl_ran_gaussian_ziggurat(r, 1.0);
  for (size_t i = 0; i < M * D; i++) q[i] = gsl_ran_gaussian_ziggurat(r, 1.2);
  char lp[1024];
  snprintf(lp, sizeof lp, "%s/gfi.txt", dir);
  gfi_log = fopen(lp, "w");
  if (!gfi_log) {
    perror(lp);
    return 1;
  }
  write_bin(dir, "x.bin", x, N * D);
  write_bin(dir, "q.bin", q, M * D);
  double *xd = to_dev(x, N * D), *qd = to_dev(q, M * D), *od;
  cudaMalloc((void **)&od, M * sizeof *od);
  double *out = malloc(M * sizeof *out), *out32 = malloc(M * sizeof *out32);
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  double R[3] = {4, 4, 4};
  printf("# density: N = M = %zu, D = 3, phi = z^4, R = 4\n", N);
  for (int prec = 1; prec >= 0; prec--) {
    gfi_cuda_opts o;
    gfi_cuda_default_opts(&o);
    o.precision = prec ? GFI_CUDA_F32 : GFI_CUDA_F64;
    gfi_cuda_density_plan *p;
    int st = gfi_cuda_density_plan_fourier(&p, &k, N, D, xd, NULL, R, &o);
    if (st) die("density plan", st);
    if ((st = gfi_cuda_density_eval(p, M, qd, od))) die("density eval", st); /* warm-up */
    double best = 1e300;
    for (int rep = 0; rep < reps; rep++) {
      double t0 = now();
      gfi_cuda_density_eval(p, M, qd, od);
      cudaDeviceSynchronize();
      double t = now() - t0;
      if (t < best) best = t;
    }
    cudaMemcpy(prec ? out32 : out, od, M * sizeof *out, cudaMemcpyDeviceToHost);
    write_bin(dir, prec ? "p32.bin" : "p64.bin", prec ? out32 : out, M);
    double rate = (double)N * M / best;
    printf("gfi density_%s_pairs_per_s %.4g  (%.4g s)", prec ? "f32" : "f64", rate, best);
    if (prec && bound > 0) printf("  %.1f%% of the float32 bound", 100 * rate / bound);
    printf("\n");
    fprintf(gfi_log, "density_%s_pairs_per_s %.17g\n", prec ? "f32" : "f64", rate);
    gfi_cuda_density_destroy(p);
  }
  {
    /* float32 against float64 on the same GPU, where p > 1e-3 of its peak */
    double peak = 0, worst = 0;
    for (size_t m = 0; m < M; m++) peak = out[m] > peak ? out[m] : peak;
    for (size_t m = 0; m < M; m++)
      if (out[m] > 1e-3 * peak) {
        double e = fabs(out32[m] - out[m]) / out[m];
        worst = e > worst ? e : worst;
      }
    printf("gfi density_f32_vs_f64_max_rel %.3g\n", worst);
    if (!(worst <= 1e-4)) {
      fprintf(stderr, "bench_cuda: float32 and float64 densities differ by %.3g relative "
              "(tests allow 2e-5): the timings are of wrong results\n", worst);
      return 1;
    }
  }

  /* attention */
  const size_t L = smoke ? 96 : quick ? 1024 : 4096, Da = 64, Dv = 64;
  double *Q = malloc(L * Da * sizeof *Q), *K = malloc(L * Da * sizeof *K), *V = malloc(L * Dv * sizeof *V);
  double *dH = malloc(L * Dv * sizeof *dH), Ra = 1.0, dR;
  for (size_t i = 0; i < L * Da; i++) Q[i] = 0.3 * gsl_ran_gaussian_ziggurat(r, 1.0);
  for (size_t i = 0; i < L * Da; i++) K[i] = 0.3 * gsl_ran_gaussian_ziggurat(r, 1.0);
  for (size_t i = 0; i < L * Dv; i++) V[i] = gsl_ran_gaussian_ziggurat(r, 1.0);
  for (size_t i = 0; i < L * Dv; i++) dH[i] = gsl_ran_gaussian_ziggurat(r, 1.0);
  write_bin(dir, "Q.bin", Q, L * Da);
  write_bin(dir, "K.bin", K, L * Da);
  write_bin(dir, "V.bin", V, L * Dv);
  write_bin(dir, "dH.bin", dH, L * Dv);
  double *Qd = to_dev(Q, L * Da), *Kd = to_dev(K, L * Da), *Vd = to_dev(V, L * Dv), *dHd = to_dev(dH, L * Dv);
  double *Hd, *sd, *dQd, *dKd, *dVd;
  cudaMalloc((void **)&Hd, L * Dv * sizeof(double));
  cudaMalloc((void **)&sd, 2 * L * sizeof(double));
  cudaMalloc((void **)&dQd, L * Da * sizeof(double));
  cudaMalloc((void **)&dKd, L * Da * sizeof(double));
  cudaMalloc((void **)&dVd, L * Dv * sizeof(double));
  double *Hh = malloc(L * Dv * sizeof *Hh), *dQh = malloc(L * Da * sizeof *dQh);
  gfi_attn_spec sp;
  gfi_attn_default_spec(&sp); /* Fourier, l = 4, scalar R, not causal */
  printf("# attention: L = %zu, D = Dv = %zu, phi = z^4, R = 1, not causal\n", L, Da);
  for (int prec = 1; prec >= 0; prec--) {
    gfi_cuda_opts o;
    gfi_cuda_default_opts(&o);
    o.precision = prec ? GFI_CUDA_F32 : GFI_CUDA_F64;
    int st = gfi_cuda_attn_forward(&sp, L, Da, Dv, Qd, Kd, Vd, &Ra, Hd, sd, NULL, &o);
    if (st) die("attention forward", st);
    st = gfi_cuda_attn_backward(&sp, L, Da, Dv, Qd, Kd, Vd, &Ra, Hd, sd, dHd, dQd, dKd, dVd, &dR, NULL, &o);
    if (st) die("attention backward", st);
    double bf = 1e300, bfb = 1e300;
    for (int rep = 0; rep < reps; rep++) {
      double t0 = now();
      gfi_cuda_attn_forward(&sp, L, Da, Dv, Qd, Kd, Vd, &Ra, Hd, sd, NULL, &o);
      cudaDeviceSynchronize();
      double t1 = now();
      gfi_cuda_attn_backward(&sp, L, Da, Dv, Qd, Kd, Vd, &Ra, Hd, sd, dHd, dQd, dKd, dVd, &dR, NULL, &o);
      cudaDeviceSynchronize();
      double t2 = now();
      if (t1 - t0 < bf) bf = t1 - t0;
      if (t2 - t0 < bfb) bfb = t2 - t0;
    }
    cudaMemcpy(Hh, Hd, L * Dv * sizeof *Hh, cudaMemcpyDeviceToHost);
    cudaMemcpy(dQh, dQd, L * Da * sizeof *dQh, cudaMemcpyDeviceToHost);
    write_bin(dir, prec ? "H32.bin" : "H64.bin", Hh, L * Dv);
    write_bin(dir, prec ? "dQ32.bin" : "dQ64.bin", dQh, L * Da);
    printf("gfi attn_fwd_%s_s %.4g\ngfi attn_fwdbwd_%s_s %.4g\n", prec ? "f32" : "f64", bf,
           prec ? "f32" : "f64", bfb);
    fprintf(gfi_log, "attn_fwd_%s_s %.17g\nattn_fwdbwd_%s_s %.17g\n", prec ? "f32" : "f64", bf,
            prec ? "f32" : "f64", bfb);
  }
  fclose(gfi_log);
  fflush(stdout);
  if (use_peer) {
    const char *py = getenv("GFI_TORCH_PYTHON") ? getenv("GFI_TORCH_PYTHON") : "python3";
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s --dir %s --N %zu --L %zu", py, peer, dir, N, L);
    printf("# peer: %s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    if (rc != 0) printf("# peer failed (status %d): no ratios\n", rc);
  }
  char rm[1100];
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  if (system(rm) != 0) fprintf(stderr, "bench_cuda: could not remove %s\n", dir);
  gsl_rng_free(r);
  double *dev[] = {xd, qd, od, Qd, Kd, Vd, dHd, Hd, sd, dQd, dKd, dVd};
  for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) cudaFree(dev[i]);
  double *host[] = {x, q, out, out32, Q, K, V, dH, Hh, dQh};
  for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
  return 0;
}
