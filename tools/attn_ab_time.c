/* Time of the float32 batched Fourier attention in two or more builds of
 * libgfi, interleaved in one process (each round runs every library once),
 * so that a loaded machine slows them alike: B = 1, H = 8, D = Dv = 64,
 * causal, phi = z^4, R = 1, Q and K uniform on [-1.5, 1.5], one thread;
 * process CPU time, best of the rounds, per library: forward, backward, the
 * time per (pair x axis) and backward / forward.
 *
 *   gcc -O2 -Iinclude -o /tmp/attn_ab_time tools/attn_ab_time.c -ldl -lm
 *   /tmp/attn_ab_time L ROUNDS OLD/libgfi/libgfi.so build/libgfi/libgfi.so
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gfi/gfi.h"
typedef int (*bf_t)(const gfi_attn_batch_spec *, size_t, size_t, size_t, size_t, size_t, size_t, const void *, const void *,
            const void *, const void *, const unsigned char *, const unsigned char *, const gfi_opts *, void *,
            double *, gfi_attn_info *);
typedef int (*bb_t)(const gfi_attn_batch_spec *, size_t, size_t, size_t, size_t, size_t, size_t, const void *, const void *,
            const void *, const void *, const unsigned char *, const unsigned char *, const gfi_opts *,
            const void *, const double *, const void *, void *, void *, void *, void *, gfi_attn_info *);
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
  if (argc < 4 || argc > 7) {
    fprintf(stderr, "usage: attn_ab_time L ROUNDS LIB.so [LIB.so ...] (at most 4)\n");
    return 2;
  }
  int nl = argc - 3;
  size_t L = (size_t)atoi(argv[1]);
  int reps = atoi(argv[2]);
  bf_t bf[4]; bb_t bb[4]; void (*bdef)(gfi_attn_batch_spec *); int (*kpow)(gfi_kernel *, int); void (*dopts)(gfi_opts *);
  for (int i = 0; i < nl; i++) {
    void *h = dlopen(argv[3 + i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      fprintf(stderr, "%s\n", dlerror());
      return 2;
    }
    bf[i] = (bf_t)dlsym(h, "gfi_attn_batch_forward"); bb[i] = (bb_t)dlsym(h, "gfi_attn_batch_backward");
    *(void **)&bdef = dlsym(h, "gfi_attn_batch_default_spec"); *(void **)&kpow = dlsym(h, "gfi_kernel_pow"); *(void **)&dopts = dlsym(h, "gfi_default_opts");
  }
  size_t B = 1, H = 8, D = 64, n = B * H * L * D;
  float *Q = malloc(n * 4), *K = malloc(n * 4), *V = malloc(n * 4), *dH = malloc(n * 4), *Ho = malloc(n * 4);
  float *dQ = malloc(n * 4), *dK = malloc(n * 4), *dV = malloc(n * 4), R = 1.0f, dR;
  srand(1);
  for (size_t i = 0; i < n; i++) { Q[i] = rand() / (float)RAND_MAX * 3 - 1.5f; K[i] = rand() / (float)RAND_MAX * 3 - 1.5f; V[i] = rand() / (float)RAND_MAX - 0.5f; dH[i] = rand() / (float)RAND_MAX - 0.5f; }
  double *saved = malloc(2 * B * H * L * 8);
  gfi_attn_batch_spec s; bdef(&s); kpow(&s.kernel, 4); s.causal = 1; s.dtype = GFI_ATTN_F32;
  gfi_opts o; dopts(&o); o.nthreads = 1;
  double tf[4], tb[4];
  for (int i = 0; i < nl; i++) tf[i] = tb[i] = 1e300;
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < nl; i++) {
      double t0 = cpu();
      int rc = bf[i](&s, B, H, L, L, D, D, Q, K, V, &R, NULL, NULL, &o, Ho, saved, NULL);
      double t1 = cpu();
      int rc2 = bb[i](&s, B, H, L, L, D, D, Q, K, V, &R, NULL, NULL, &o, Ho, saved, dH, dQ, dK, dV, &dR, NULL);
      double t2 = cpu();
      if (rc || rc2) printf("rc %d %d\n", rc, rc2);
      if (t1 - t0 < tf[i]) tf[i] = t1 - t0;
      if (t2 - t1 < tb[i]) tb[i] = t2 - t1;
    }
  double pd = (double)H * L * (L + 1) / 2 * D;
  for (int i = 0; i < nl; i++) printf("lib%d L=%zu fwd %.4f s (%.3f ns/pair-dim) bwd %.4f s (%.3f ns/pair-dim) bwd/fwd %.2f\n", i, L, tf[i], tf[i] / pd * 1e9, tb[i], tb[i] / pd * 1e9, tb[i] / tf[i]);
  return 0;
}
