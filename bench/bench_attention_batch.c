/* Batched Fourier attention as FourierFormer is trained, against peers in the
 * same run on the same data (all float32 unless said):
 *   1. WikiText-103 shapes (8 heads of 16 or 32 dims, causal, length 256 and
 *      384; batch --B, default 2, where the paper trains with 56-96): gfi's
 *      float32 and float64 forward and forward + backward against
 *      FourierFormer's formula run as its Python path does (numpy, float32,
 *      the (B, H, Lq, Lk, d) tensor materialised; bench/attention_batch_numpy.py):
 *      time, numpy's allocation peak, the ratio, and the largest difference.
 *   2. Memory keys: Lq = 256, Lk = 1024, 4096, 16384 (B = 1, 8 heads of 16,
 *      causal offset Lk - Lq): the same, numpy skipped where its tensors would
 *      pass --numpy-gb (its need is printed).
 *   3. One sequence L = 1024 and 4096, D = 64 (--quick: 256; --engine L: that
 *      L only), one thread (the numpy child too): Fourier forward and
 *      forward + backward in float64 and float32 against gfi's softmax
 *      engine, numpy's BLAS softmax and numpy's FourierFormer formula (where
 *      its tensors fit --numpy-gb); backward / forward and float32 / float64
 *      ratios and the time per (pair x axis) in cycles of the nominal clock.
 *      --batch-only: cases 1 and 2 only.
 *   4. --long L: one head, d = 16, L x L causal, float32 (--f64: float64),
 *      forward and backward in a child process: times and its peak resident
 *      memory; --keep N pads every key from N on (the same memory, a fraction
 *      of the time: the peak memory of a length the machine cannot run in full).
 *
 * usage: bench_attention_batch [--quick] [--reps N] [--B N] [--numpy-gb G] [--engine L | --batch-only] [--long L [--f64] [--keep N]] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "gfi/gfi.h"

#ifndef GFI_BENCH_DIR
#define GFI_BENCH_DIR "bench"
#endif
#define PY "/usr/bin/python3"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static double cpunow(void) { /* CPU time of the process, every thread */
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static double last_cpu; /* best CPU time of the last gfi_time / numpy_time */
static uint64_t rs = 0x853c49e6748fea9bULL;
static double unif(void) {
  uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}
static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "bench_attention_batch: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}
static void die(int st, const char *what) {
  if (st && st != GFI_EDENOM) {
    fprintf(stderr, "bench_attention_batch: %s: %s\n", what, gfi_strerror(st));
    exit(1);
  }
}

typedef struct {
  size_t B, H, Lq, Lk, D, Dv;
  float *Q, *K, *V, *dH;
  double *Qd, *Kd, *Vd, *dHd;
} prob;

static void make(prob *p, size_t B, size_t H, size_t Lq, size_t Lk, size_t D, size_t Dv) {
  p->B = B, p->H = H, p->Lq = Lq, p->Lk = Lk, p->D = D, p->Dv = Dv;
  size_t n[4] = {B * H * Lq * D, B * H * Lk * D, B * H * Lk * Dv, B * H * Lq * Dv};
  float **f[4] = {&p->Q, &p->K, &p->V, &p->dH};
  double **d[4] = {&p->Qd, &p->Kd, &p->Vd, &p->dHd};
  for (int a = 0; a < 4; a++) {
    *f[a] = xmalloc(n[a] * sizeof(float));
    *d[a] = xmalloc(n[a] * sizeof(double));
    /* queries and keys spread like trained ones at R = 1: N(0, 0.5^2) */
    for (size_t k = 0; k < n[a]; k++) {
      double u1 = unif() + 1e-300, u2 = unif();
      double x = (a < 2 ? 0.5 : 1.0) * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
      (*f[a])[k] = (float)x;
      (*d[a])[k] = (float)x;
    }
  }
}
static void unmake(prob *p) {
  free(p->Q), free(p->K), free(p->V), free(p->dH), free(p->Qd), free(p->Kd), free(p->Vd), free(p->dHd);
}

/* gfi forward (bwd = 0) or forward + backward, best of reps; H to Hout. */
static double gfi_time(const prob *p, int f32, int bwd, int nthreads, int reps, double *Hout) {
  gfi_attn_batch_spec s;
  gfi_attn_batch_default_spec(&s);
  s.causal = 1;
  s.eps = 1e-6; /* FourierFormer's normalisation, as the peer */
  s.dtype = f32 ? GFI_ATTN_F32 : GFI_ATTN_F64;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  const size_t BH = p->B * p->H, es = f32 ? 4 : 8, nh = BH * p->Lq * p->Dv;
  void *H = xmalloc(nh * es), *dQ = xmalloc(BH * p->Lq * p->D * es), *dK = xmalloc(BH * p->Lk * p->D * es),
       *dV = xmalloc(BH * p->Lk * p->Dv * es);
  double *saved = xmalloc(gfi_attn_batch_saved_size(p->B, p->H, p->Lq) * sizeof(double));
  float Rf = 1.0f, dRf;
  double Rd = 1.0, dRd;
  const void *Q = f32 ? (void *)p->Q : p->Qd, *K = f32 ? (void *)p->K : p->Kd, *V = f32 ? (void *)p->V : p->Vd;
  const void *dH = f32 ? (void *)p->dH : p->dHd, *R = f32 ? (void *)&Rf : &Rd;
  void *dR = f32 ? (void *)&dRf : &dRd;
  double best = INFINITY;
  last_cpu = INFINITY;
  for (int r = 0; r < reps; r++) {
    double t0 = now(), c0 = cpunow();
    die(gfi_attn_batch_forward(&s, p->B, p->H, p->Lq, p->Lk, p->D, p->Dv, Q, K, V, R, NULL, NULL, &o, H, saved, NULL),
        "forward");
    if (bwd)
      die(gfi_attn_batch_backward(&s, p->B, p->H, p->Lq, p->Lk, p->D, p->Dv, Q, K, V, R, NULL, NULL, &o, H, saved, dH,
                                  dQ, dK, dV, dR, NULL),
          "backward");
    double t = now() - t0, c = cpunow() - c0;
    if (t < best) best = t;
    if (c < last_cpu) last_cpu = c;
  }
  if (Hout)
    for (size_t k = 0; k < nh; k++) Hout[k] = f32 ? ((float *)H)[k] : ((double *)H)[k];
  free(H), free(dQ), free(dK), free(dV), free(saved);
  return best;
}

static char tmpdir[] = "/tmp/gfi_bench_attn_XXXXXX";
static int have_numpy = -1;

/* numpy peer: time, peak bytes; H (float32) compared with Href. */
static int numpy_time(const prob *p, const char *mode, int reps, const double *Href, double *t, double *peak,
                      double *diff) {
  if (have_numpy < 0) {
    have_numpy = access(PY, X_OK) == 0 && system(PY " -c 'import numpy' 2>/dev/null") == 0 && mkdtemp(tmpdir);
  }
  if (!have_numpy) return 0;
  const char *names[5] = {"q", "k", "v", "dh", "h"};
  const float *arr[4] = {p->Q, p->K, p->V, p->dH};
  size_t n[4] = {p->B * p->H * p->Lq * p->D, p->B * p->H * p->Lk * p->D, p->B * p->H * p->Lk * p->Dv,
                 p->B * p->H * p->Lq * p->Dv};
  char path[5][256];
  for (int a = 0; a < 5; a++) snprintf(path[a], sizeof path[a], "%s/%s", tmpdir, names[a]);
  for (int a = 0; a < 4; a++) {
    FILE *f = fopen(path[a], "wb");
    if (!f || fwrite(arr[a], sizeof(float), n[a], f) != n[a] || fclose(f)) return 0;
  }
  char cmd[2048];
  snprintf(cmd, sizeof cmd, PY " %s/attention_batch_numpy.py %s %zu %zu %zu %zu %zu %zu 1 1 %d %s %s %s %s %s",
           GFI_BENCH_DIR, mode, p->B, p->H, p->Lq, p->Lk, p->D, p->Dv, reps, path[0], path[1], path[2], path[3],
           path[4]);
  FILE *pp = popen(cmd, "r");
  char line[256] = "";
  int ok = pp && fgets(line, sizeof line, pp) && sscanf(line, "%lf %lf %lf", t, peak, &last_cpu) == 3;
  if (pp) pclose(pp);
  if (!ok) return 0;
  *diff = 0;
  if (Href) {
    float *h = xmalloc(n[3] * sizeof(float));
    FILE *f = fopen(path[4], "rb");
    if (f && fread(h, sizeof(float), n[3], f) == n[3]) {
      double m = 0;
      for (size_t k = 0; k < n[3]; k++) {
        m = fmax(m, fabs(Href[k]));
        *diff = fmax(*diff, fabs(h[k] - Href[k]));
      }
      *diff /= m;
    }
    if (f) fclose(f);
    free(h);
  }
  return 1;
}

/* a timing row: wall seconds, CPU seconds (every thread), CPU / the reference's CPU */
static void row(const char *what, double t, double c, double cref) {
  printf("%-50s %9.4f %9.4f %8.2f\n", what, t, c, c / cref);
}

static void batch_case(size_t B, size_t H, size_t Lq, size_t Lk, size_t D, int reps, double numpy_gb) {
  prob p;
  make(&p, B, H, Lq, Lk, D, D);
  double *H32 = xmalloc(B * H * Lq * D * sizeof(double));
  printf("# B = %zu, H = %zu, Lq = %zu, Lk = %zu, d = dv = %zu, causal, R = 1, eps = 1e-6\n", B, H, Lq, Lk, D);
  double f32 = gfi_time(&p, 1, 0, 0, reps, H32), cf32 = last_cpu;
  double fb32 = gfi_time(&p, 1, 1, 0, reps, NULL), cfb32 = last_cpu;
  double f64 = gfi_time(&p, 0, 0, 0, reps, NULL), cf64 = last_cpu;
  double fb64 = gfi_time(&p, 0, 1, 0, reps, NULL), cfb64 = last_cpu;
  row("gfi float32 forward, all threads", f32, cf32, cf32);
  row("gfi float32 forward+backward, all threads", fb32, cfb32, cf32);
  row("gfi float64 forward, all threads", f64, cf64, cf32);
  row("gfi float64 forward+backward, all threads", fb64, cfb64, cf32);
  /* numpy: the 5-D float32 tensor U and several of its size (sinc, powers, G) */
  double need = 6.0 * B * H * Lq * Lk * D * 4 / 1e9;
  if (need > numpy_gb) {
    printf("numpy (FourierFormer's Python path): skipped, would need ~%.1f GB (> --numpy-gb %.1f)\n", need, numpy_gb);
  } else {
    double t, pk, df, tb, pkb, dfb, c, cb;
    int ok = numpy_time(&p, "fwd", reps, H32, &t, &pk, &df);
    c = last_cpu;
    if (ok && numpy_time(&p, "fwdbwd", reps, NULL, &tb, &pkb, &dfb)) {
      cb = last_cpu;
      row("numpy float32 forward", t, c, cf32);
      row("numpy float32 forward+backward", tb, cb, cf32);
      printf("# ratios numpy/gfi (float32), CPU time: forward %.2f, forward+backward %.2f; wall: %.2f, %.2f; "
             "numpy peak %.3g GB (forward+backward %.3g GB); max|H_numpy - H_gfi| / max|H| = %.2g\n",
             c / cf32, cb / cfb32, t / f32, tb / fb32, pk / 1e9, pkb / 1e9, df);
    } else {
      printf("# numpy peer skipped: " PY " with numpy not available\n");
    }
  }
  printf("# gfi backward/forward (CPU time): float32 %.2f, float64 %.2f\n", (cfb32 - cf32) / cf32, (cfb64 - cf64) / cf64);
  free(H32);
  unmake(&p);
}

static double cpu_mhz(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  double mhz = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "cpu MHz : %lf", &mhz) == 1) break;
  if (f) fclose(f);
  return mhz;
}

static void engine_case(size_t L, size_t D, int reps, double numpy_gb) {
  prob p;
  make(&p, 1, 1, L, L, D, D);
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 1;
  printf("# one sequence, L = %zu, D = Dv = %zu, causal, one thread\n", L, D);
  double f64 = gfi_time(&p, 0, 0, 1, reps, NULL), cf64 = last_cpu;
  double fb64 = gfi_time(&p, 0, 1, 1, reps, NULL), cfb64 = last_cpu;
  double f32 = gfi_time(&p, 1, 0, 1, reps, NULL), cf32 = last_cpu;
  double fb32 = gfi_time(&p, 1, 1, 1, reps, NULL), cfb32 = last_cpu;
  double *H = xmalloc(L * D * sizeof *H), *dQ = xmalloc(L * D * sizeof *dQ), *dK = xmalloc(L * D * sizeof *dK),
         *dV = xmalloc(L * D * sizeof *dV);
  double sf = INFINITY, sfb = INFINITY, csf = INFINITY, csfb = INFINITY, scale = 1 / sqrt((double)D);
  for (int r = 0; r < reps; r++) {
    double t0 = now(), c0 = cpunow();
    die(gfi_attn_softmax_forward(L, D, D, p.Qd, p.Kd, p.Vd, scale, 1, &o, H), "softmax forward");
    double t1 = now(), c1 = cpunow();
    die(gfi_attn_softmax_backward(L, D, D, p.Qd, p.Kd, p.Vd, scale, 1, &o, p.dHd, dQ, dK, dV), "softmax backward");
    double t2 = now(), c2 = cpunow();
    sf = fmin(sf, t1 - t0);
    sfb = fmin(sfb, t2 - t0); /* its backward reruns the forward */
    csf = fmin(csf, c1 - c0);
    csfb = fmin(csfb, c2 - c0);
  }
  row("gfi Fourier float64 forward", f64, cf64, cf64);
  row("gfi Fourier float64 forward+backward", fb64, cfb64, cf64);
  row("gfi Fourier float32 forward", f32, cf32, cf64);
  row("gfi Fourier float32 forward+backward", fb32, cfb32, cf64);
  row("gfi softmax float64 forward", sf, csf, cf64);
  row("gfi softmax float64 forward+backward", sfb, csfb, cf64);
  /* the peers on one thread too (BLAS and OpenMP pools of the child) */
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("MKL_NUM_THREADS", "1", 1);
  double t, pk, df, tf = NAN, cnf = NAN;
  double need = 6.0 * L * L * D * 4 / 1e9;
  if (need <= numpy_gb && numpy_time(&p, "fwd", reps, NULL, &tf, &pk, &df)) {
    cnf = last_cpu;
    row("numpy FourierFormer formula float32 forward", tf, cnf, cf64);
  } else if (need > numpy_gb) {
    printf("numpy FourierFormer formula: skipped, would need ~%.1f GB (> --numpy-gb)\n", need);
  }
  int np = numpy_time(&p, "softmax", reps, NULL, &t, &pk, &df);
  if (np) row("numpy BLAS softmax float32 forward", t, last_cpu, cf64);
  unsetenv("OPENBLAS_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  unsetenv("MKL_NUM_THREADS");
  double pairs = 0.5 * (double)L * (L + 1), mhz = cpu_mhz();
  printf("# backward/forward (CPU time): Fourier float64 %.2f, float32 %.2f; softmax %.2f\n", (cfb64 - cf64) / cf64,
         (cfb32 - cf32) / cf32, (csfb - csf) / csf);
  printf("# Fourier/softmax forward (gfi, float64, CPU time): %.2f; float32 Fourier forward / numpy softmax "
         "(CPU time): %s%.2f\n", cf64 / csf, np ? "" : "(no numpy) ", np ? cf32 / last_cpu : NAN);
  printf("# float32/float64 (gfi Fourier, CPU time): forward %.2f, forward+backward %.2f; numpy Fourier formula / "
         "gfi float32 forward (CPU time): %.2f\n", cf32 / cf64, cfb32 / cfb64, cnf / cf32);
  printf("# per (pair x axis), %.0f pairs, CPU time: Fourier float64 forward %.2f ns (%.1f cycles at %.0f MHz), "
         "forward+backward %.2f ns; float32 forward %.2f ns (%.1f cycles), forward+backward %.2f ns\n", pairs,
         1e9 * cf64 / (pairs * D), 1e6 * cf64 / (pairs * D) * mhz, mhz, 1e9 * cfb64 / (pairs * D),
         1e9 * cf32 / (pairs * D), 1e6 * cf32 / (pairs * D) * mhz, 1e9 * cfb32 / (pairs * D));
  free(H), free(dQ), free(dK), free(dV);
  unmake(&p);
}

static void long_case(size_t L, int f32, size_t keep) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    prob p;
    make(&p, 1, 1, L, L, 16, 16);
    gfi_attn_batch_spec s;
    gfi_attn_batch_default_spec(&s);
    s.causal = 1;
    s.dtype = f32 ? GFI_ATTN_F32 : GFI_ATTN_F64;
    const size_t es = f32 ? 4 : 8, n = L * 16;
    void *H = xmalloc(n * es), *dQ = xmalloc(n * es), *dK = xmalloc(n * es), *dV = xmalloc(n * es);
    double *saved = xmalloc(2 * L * sizeof(double)), R = 1, dR;
    float Rf = 1, dRf;
    const void *Q = f32 ? (void *)p.Q : p.Qd, *K = f32 ? (void *)p.K : p.Kd, *V = f32 ? (void *)p.V : p.Vd,
               *dH = f32 ? (void *)p.dH : p.dHd, *Rp = f32 ? (void *)&Rf : &R;
    void *dRp = f32 ? (void *)&dRf : &dR;
    unsigned char *pad = NULL;
    if (keep) { /* every key from `keep` on padded: the memory of the full problem, a fraction of its time */
      pad = xmalloc(L);
      for (size_t j = 0; j < L; j++) pad[j] = j >= keep;
    }
    double t0 = now(), c0 = cpunow();
    die(gfi_attn_batch_forward(&s, 1, 1, L, L, 16, 16, Q, K, V, Rp, pad, NULL, NULL, H, saved, NULL), "forward");
    double t1 = now(), c1 = cpunow();
    die(gfi_attn_batch_backward(&s, 1, 1, L, L, 16, 16, Q, K, V, Rp, pad, NULL, NULL, H, saved, dH, dQ, dK, dV, dRp,
                                NULL), "backward");
    double t2 = now(), c2 = cpunow();
    printf("gfi %s, one head, L = %zu, d = dv = 16, causal%s, all threads: forward %.1f s, backward %.1f s wall; "
           "CPU %.1f s and %.1f s (backward/forward %.2f)\n", f32 ? "float32" : "float64", L,
           keep ? ", keys >= --keep padded" : "", t1 - t0, t2 - t1, c1 - c0, c2 - c1, (c2 - c1) / (c1 - c0));
    fflush(stdout);
    _exit(0);
  }
  int status;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
    fprintf(stderr, "bench_attention_batch: the --long child failed\n");
    exit(1);
  }
  double in = (double)L * 16 * 4 * 12 + (double)L * 16 * 4 * (f32 ? 4 : 8); /* inputs in both types, outputs */
  printf("# CPU time of that process: %.1f s user\n", ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec);
  printf("# peak resident memory of that process: %.1f MB (of which its own arrays: Q, K, V, dH in float32 and "
         "float64, H, dQ, dK, dV: %.1f MB)\n", ru.ru_maxrss / 1024.0, in / 1e6);
}

int main(int argc, char **argv) {
  int quick = 0, reps = 3, batch_only = 0;
  size_t B = 2, Llong = 0, Leng = 0;
  int long64 = 0;
  size_t keep = 0;
  double numpy_gb = 4;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--quick") == 0)
      quick = 1, reps = 1;
    else if (strcmp(argv[a], "--reps") == 0 && a + 1 < argc)
      reps = atoi(argv[++a]);
    else if (strcmp(argv[a], "--B") == 0 && a + 1 < argc)
      B = (size_t)atol(argv[++a]);
    else if (strcmp(argv[a], "--numpy-gb") == 0 && a + 1 < argc)
      numpy_gb = atof(argv[++a]);
    else if (strcmp(argv[a], "--keep") == 0 && a + 1 < argc)
      keep = (size_t)atol(argv[++a]);
    else if (strcmp(argv[a], "--batch-only") == 0)
      batch_only = 1;
    else if (strcmp(argv[a], "--engine") == 0 && a + 1 < argc)
      Leng = (size_t)atol(argv[++a]);
    else if (strcmp(argv[a], "--f64") == 0)
      long64 = 1;
    else if (strcmp(argv[a], "--long") == 0 && a + 1 < argc)
      Llong = (size_t)atol(argv[++a]);
    else {
      fprintf(stderr, "usage: bench_attention_batch [--quick] [--reps N] [--B N] [--numpy-gb G] [--engine L | --batch-only] [--long L [--f64] [--keep N]]\n");
      return 2;
    }
  }
  if (reps < 1 || B < 1 || !(numpy_gb > 0)) {
    fprintf(stderr, "bench_attention_batch: --reps, --B and --numpy-gb must be positive\n");
    return 2;
  }
  double la[3] = {0};
  getloadavg(la, 3);
  printf("# bench_attention_batch: %d threads, %ld CPUs online, load average %.2f; columns: wall seconds, CPU "
         "seconds (every thread; best of %d each), CPU time / the first row's\n",
         gfi_threads_resolve(NULL), sysconf(_SC_NPROCESSORS_ONLN), la[0], reps);
  if (Llong) {
    long_case(Llong, !long64, keep);
    return 0;
  }
  if (Leng) {
    engine_case(Leng, 64, reps, numpy_gb);
    return 0;
  }
  const size_t Ls[2] = {256, 384}, Ds[2] = {16, 32};
  for (int a = 0; a < (quick ? 1 : 2); a++)
    for (int b = 0; b < (quick ? 1 : 2); b++) batch_case(quick ? 1 : B, 8, quick ? 64 : Ls[b], quick ? 64 : Ls[b], Ds[a], reps, numpy_gb);
  const size_t Lks[3] = {1024, 4096, 16384};
  for (int k = 0; k < (quick ? 1 : 3); k++) batch_case(1, 8, quick ? 64 : 256, quick ? 256 : Lks[k], 16, reps, numpy_gb);
  if (!batch_only) engine_case(quick ? 256 : 1024, 64, reps, numpy_gb);
  if (!quick && !batch_only) engine_case(4096, 64, reps, numpy_gb);
  if (have_numpy > 0) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) fprintf(stderr, "bench_attention_batch: could not remove %s\n", tmpdir);
  }
  return 0;
}
