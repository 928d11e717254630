/* Fourier attention rate: forward and forward + backward for L = 1024,
 * D = Dv = 64, phi = z^4, against peers measured in the same run on the same
 * data:
 *   - a straightforward brute-force C implementation (one thread): a sin per
 *     factor, naive products, the L x L weight matrix kept for the backward,
 *     whose product rule divides by the factor (l w s'/s; fine for timing,
 *     wrong at zeros of sinc),
 *   - numpy (Debian's python3-numpy on /usr/bin/python3) computing the same
 *     forward by broadcasting over blocks of rows; skipped when unavailable.
 * The Gaussian-kernel forward and backward are timed for context. Prints the
 * machine, the best of several repetitions, pair rates (L^2 / time) and
 * ratios, and the largest difference between the outputs.
 *
 * usage: bench_attention [--quick] [--L N] [--reps N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "gfi/gfi.h"

#ifndef GFI_BENCH_DIR
#define GFI_BENCH_DIR "bench"
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double brute_sinc(double u) { return u == 0 ? 1.0 : sin(u) / u; }

static void brute_forward(size_t L, size_t D, size_t Dv, int l, double R, const double *Q,
                          const double *K, const double *V, double *H, double *W, double *S) {
  for (size_t i = 0; i < L; i++) {
    double s = 0;
    for (size_t c = 0; c < Dv; c++) H[i * Dv + c] = 0;
    for (size_t j = 0; j < L; j++) {
      double w = 1;
      for (size_t d = 0; d < D; d++) w *= pow(brute_sinc(R * (Q[i * D + d] - K[j * D + d])), l);
      if (W) W[i * L + j] = w;
      s += w;
      for (size_t c = 0; c < Dv; c++) H[i * Dv + c] += w * V[j * Dv + c];
    }
    for (size_t c = 0; c < Dv; c++) H[i * Dv + c] /= s;
    if (S) S[i] = s;
  }
}

static void brute_backward(size_t L, size_t D, size_t Dv, int l, double R, const double *Q,
                           const double *K, const double *V, const double *H, const double *W,
                           const double *S, const double *dH, double *dQ, double *dK, double *dV,
                           double *dR) {
  memset(dQ, 0, L * D * sizeof *dQ);
  memset(dK, 0, L * D * sizeof *dK);
  memset(dV, 0, L * Dv * sizeof *dV);
  *dR = 0;
  for (size_t i = 0; i < L; i++) {
    double P = 0;
    for (size_t c = 0; c < Dv; c++) P += dH[i * Dv + c] * H[i * Dv + c];
    for (size_t j = 0; j < L; j++) {
      double a = 0, w = W[i * L + j];
      for (size_t c = 0; c < Dv; c++) a += dH[i * Dv + c] * V[j * Dv + c];
      double g = (a - P) / S[i];
      for (size_t c = 0; c < Dv; c++) dV[j * Dv + c] += w / S[i] * dH[i * Dv + c];
      for (size_t d = 0; d < D; d++) {
        double x = Q[i * D + d] - K[j * D + d], u = R * x;
        double G = u == 0 ? 0.0 : l * w * (cos(u) / sin(u) - 1 / u);
        dQ[i * D + d] += g * G * R;
        dK[j * D + d] -= g * G * R;
        *dR += g * G * x;
      }
    }
  }
}

static void fill_normal(gsl_rng *r, size_t n, double *x) {
  for (size_t i = 0; i < n; i++) {
    double u1 = gsl_rng_uniform_pos(r), u2 = gsl_rng_uniform(r);
    x[i] = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
  }
}

static double maxdiff(const double *a, const double *b, size_t n) {
  double m = 0;
  for (size_t k = 0; k < n; k++) m = fmax(m, fabs(a[k] - b[k]));
  return m;
}

static double maxabs(const double *a, size_t n) {
  double m = 0;
  for (size_t k = 0; k < n; k++) m = fmax(m, fabs(a[k]));
  return m;
}

typedef struct {
  const gfi_attn_plan *p;
  const double *Q, *K, *V, *R, *dH;
  double *H, *saved, *dQ, *dK, *dV, *dR;
} run_ctx;

static double time_gfi(run_ctx *c, int backward, int reps) {
  double best = INFINITY;
  for (int t = 0; t < reps; t++) {
    double t0 = now();
    int st = gfi_attn_forward(c->p, c->Q, c->K, c->V, c->R, c->H, c->saved, NULL);
    if (!st && backward)
      st = gfi_attn_backward(c->p, c->Q, c->K, c->V, c->R, c->H, c->saved, c->dH, c->dQ, c->dK,
                             c->dV, c->dR, NULL);
    double dt = now() - t0;
    if (st) {
      fprintf(stderr, "bench_attention: %s\n", gfi_strerror(st));
      exit(1);
    }
    if (dt < best) best = dt;
  }
  return best;
}

static void row(const char *name, double t, double pairs, double ref) {
  printf("%-40s %12.6f %14.4e %10.3f\n", name, t, pairs / t, t / ref);
}

int main(int argc, char **argv) {
  size_t L = 1024, D = 64, Dv = 64;
  int reps = 3, l = 4;
  double R = 1.0;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--quick") == 0) {
      L = 256;
      reps = 2;
    } else if (strcmp(argv[a], "--L") == 0 && a + 1 < argc) {
      L = (size_t)atol(argv[++a]);
    } else if (strcmp(argv[a], "--reps") == 0 && a + 1 < argc) {
      reps = atoi(argv[++a]);
    } else {
      fprintf(stderr, "usage: bench_attention [--quick] [--L N] [--reps N]\n");
      return 2;
    }
  }
  if (L < 1 || reps < 1) {
    fprintf(stderr, "bench_attention: L and --reps must be >= 1\n");
    return 2;
  }
  /* machine */
  struct utsname un;
  uname(&un);
  char cpu[256] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "model name", 10) == 0) {
        char *c = strchr(line, ':');
        if (c) {
          snprintf(cpu, sizeof cpu, "%s", c + 2);
          cpu[strcspn(cpu, "\n")] = 0;
        }
        break;
      }
    fclose(f);
  }
  int nt = gfi_threads_available();
  printf("# bench_attention: Fourier attention phi = z^%d, L = %zu, D = %zu, Dv = %zu, R = %g, "
         "best of %d\n", l, L, D, Dv, R, reps);
  printf("# machine: %s %s, %s, %d threads, OpenMP %s, %ld online CPUs\n", un.sysname, un.machine,
         cpu, nt, gfi_have_openmp() ? "yes" : "no", sysconf(_SC_NPROCESSORS_ONLN));
  printf("# data: Q, K, V standard normal (stream (1, 0)); dH standard normal\n");

  double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K);
  double *V = malloc(L * Dv * sizeof *V), *dH = malloc(L * Dv * sizeof *dH);
  double *H = malloc(L * Dv * sizeof *H), *Hb = malloc(L * Dv * sizeof *Hb);
  double *saved = malloc(2 * L * sizeof *saved), *W = malloc(L * L * sizeof *W), *S = malloc(L * sizeof *S);
  double *dQ = malloc(L * D * sizeof *dQ), *dK = malloc(L * D * sizeof *dK), *dV = malloc(L * Dv * sizeof *dV);
  double *bQ = malloc(L * D * sizeof *bQ), *bK = malloc(L * D * sizeof *bK), *bV = malloc(L * Dv * sizeof *bV);
  double dR, bR;
  if (!Q || !K || !V || !dH || !H || !Hb || !saved || !W || !S || !dQ || !dK || !dV || !bQ || !bK || !bV) {
    fprintf(stderr, "bench_attention: out of memory\n");
    return 1;
  }
  gsl_rng *r = gfi_rng_stream(1, 0);
  fill_normal(r, L * D, Q);
  fill_normal(r, L * D, K);
  fill_normal(r, L * Dv, V);
  fill_normal(r, L * Dv, dH);
  gsl_rng_free(r);

  gfi_attn_spec sp;
  gfi_attn_default_spec(&sp);
  gfi_kernel_pow(&sp.kernel, l);
  gfi_opts o1, on;
  gfi_default_opts(&o1);
  gfi_default_opts(&on);
  o1.nthreads = 1;
  gfi_attn_plan *p1, *pn;
  if (gfi_attn_plan_create(&p1, &sp, L, D, Dv, &o1) || gfi_attn_plan_create(&pn, &sp, L, D, Dv, &on)) {
    fprintf(stderr, "bench_attention: plan failed\n");
    return 1;
  }
  double pairs = (double)L * (double)L;
  /* Gaussian kernel at sigma^2 = sqrt(D), for context (first: it uses the
   * brute-force gradient arrays as scratch) */
  gfi_attn_spec sg = sp;
  sg.kind = GFI_ATTN_GAUSS;
  gfi_attn_plan *pg;
  double sig = pow((double)D, 0.25), dsig;
  double *Hg = malloc(L * Dv * sizeof *Hg);
  if (!Hg || gfi_attn_plan_create(&pg, &sg, L, D, Dv, &on)) return 1;
  run_ctx cg = {pg, Q, K, V, &sig, dH, Hg, saved, bQ, bK, bV, &dsig};
  double t_gf = time_gfi(&cg, 0, reps), t_gfb = time_gfi(&cg, 1, reps);

  run_ctx c = {pn, Q, K, V, &R, dH, H, saved, dQ, dK, dV, &dR};
  double t_fwd_n = time_gfi(&c, 0, reps), t_fb_n = time_gfi(&c, 1, reps);
  c.p = p1;
  double t_fwd_1 = time_gfi(&c, 0, reps), t_fb_1 = time_gfi(&c, 1, reps);

  /* brute force, one thread (one repetition: it is the slow one) */
  double t0 = now();
  brute_forward(L, D, Dv, l, R, Q, K, V, Hb, W, S);
  double t_bf = now() - t0;
  t0 = now();
  brute_backward(L, D, Dv, l, R, Q, K, V, Hb, W, S, dH, bQ, bK, bV, &bR);
  double t_bb = now() - t0 + t_bf;

  /* numpy peer */
  double t_np = NAN;
  char npver[64] = "";
  double np_diff = NAN;
  char dir[] = "/tmp/gfi_bench_attn_XXXXXX";
  if (access("/usr/bin/python3", X_OK) == 0 && mkdtemp(dir)) {
    char path[4][512];
    const char *names[4] = {"Q", "K", "V", "H"};
    const double *arrs[3] = {Q, K, V};
    size_t sizes[3] = {L * D, L * D, L * Dv};
    int ok = 1;
    for (int a = 0; a < 4; a++) snprintf(path[a], sizeof path[a], "%s/%s.bin", dir, names[a]);
    for (int a = 0; a < 3 && ok; a++) {
      FILE *g = fopen(path[a], "wb");
      ok = g && fwrite(arrs[a], sizeof(double), sizes[a], g) == sizes[a];
      if (g) fclose(g);
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/attention_numpy.py %zu %zu %zu %d %.17g %d %s %s %s %s 2>/dev/null",
             GFI_BENCH_DIR, L, D, Dv, l, R, reps, path[0], path[1], path[2], path[3]);
    FILE *pp = ok ? popen(cmd, "r") : NULL;
    if (pp) {
      if (fscanf(pp, "%lf %63s", &t_np, npver) != 2) t_np = NAN;
      pclose(pp);
    }
    double *Hn = malloc(L * Dv * sizeof *Hn);
    FILE *g = fopen(path[3], "rb");
    if (Hn && g && fread(Hn, sizeof(double), L * Dv, g) == L * Dv) np_diff = maxdiff(Hn, H, L * Dv);
    if (g) fclose(g);
    free(Hn);
    for (int a = 0; a < 4; a++) remove(path[a]);
    rmdir(dir);
  }

  printf("# columns: what, seconds, pairs per second (L^2 / seconds), time / gfi all threads\n");
  printf("# forward\n");
  row("gfi forward, all threads", t_fwd_n, pairs, t_fwd_n);
  row("gfi forward, 1 thread", t_fwd_1, pairs, t_fwd_n);
  row("brute-force C forward, 1 thread", t_bf, pairs, t_fwd_n);
  if (isfinite(t_np)) {
    char name[96];
    snprintf(name, sizeof name, "numpy %s forward", npver);
    row(name, t_np, pairs, t_fwd_n);
  } else {
    printf("# numpy peer skipped: /usr/bin/python3 with python3-numpy not available\n");
  }
  printf("# forward + backward\n");
  row("gfi forward+backward, all threads", t_fb_n, pairs, t_fb_n);
  row("gfi forward+backward, 1 thread", t_fb_1, pairs, t_fb_n);
  row("brute-force C forward+backward, 1 thread", t_bb, pairs, t_fb_n);
  printf("# Gaussian kernel (sigma^2 = sqrt(D)), for context\n");
  row("gfi gauss forward, all threads", t_gf, pairs, t_fwd_n);
  row("gfi gauss forward+backward, all threads", t_gfb, pairs, t_fb_n);
  printf("# ratios: brute/gfi forward 1 thread %.2f, all threads %.2f; numpy/gfi forward all threads %.2f\n",
         t_bf / t_fwd_1, t_bf / t_fwd_n, t_np / t_fwd_n);
  printf("# ratios: brute/gfi forward+backward 1 thread %.2f, all threads %.2f\n", t_bb / t_fb_1,
         t_bb / t_fb_n);
  printf("# agreement: max|H - H_brute| %.3g, max|H - H_numpy| %.3g (max|H| %.3g); "
         "max|dQ - brute| %.3g (max|dQ| %.3g), |dR - brute| %.3g (|dR| %.3g)\n",
         maxdiff(H, Hb, L * Dv), np_diff, maxabs(H, L * Dv), maxdiff(dQ, bQ, L * D),
         maxabs(dQ, L * D), fabs(dR - bR), fabs(dR));
  printf("# memory: gfi forward %.1f MiB of tables, backward %.1f MiB; brute force %.1f MiB (L x L)\n",
         3.0 * D * L * 8 / 1048576, (6.0 * D * L + 2.0 * L) * 8 / 1048576, (double)L * L * 8 / 1048576);
  gfi_attn_destroy(p1);
  gfi_attn_destroy(pn);
  gfi_attn_destroy(pg);
  free(Q); free(K); free(V); free(dH); free(H); free(Hb); free(Hg); free(saved); free(W); free(S);
  free(dQ); free(dK); free(dV); free(bQ); free(bK); free(bV);
  return 0;
}
