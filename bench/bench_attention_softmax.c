/* Fourier attention against softmax attention, per sequence length: the
 * comparison of FourierFormer's Table 9 (which reports about 11% more time
 * for the Fourier attention than for softmax attention in its models).
 *
 * For L = 256 .. 4096 (--quick: 256, 512), D = Dv = 64, one head, the same
 * random Q, K, V:
 *   fourier   gfi_attn_forward, phi = z^4, one radius (O(L D) memory)
 *   softmax   gfi_attn_softmax_forward, scale 1/sqrt(D) (exact; the Gaussian
 *             engine on norm-lifted keys, O(L D) memory)
 *   softmax-materialised  gfi_rpe_attention_exact without an RPE: the usual
 *             implementation, the L x L matrix formed (O(L^2) memory)
 * forward time (best of --reps runs, all threads) and forward + backward for
 * the two gfi engines, and each one's peak memory: the peak resident size of
 * a child process that runs it once, less that of a child that only touches
 * the inputs. Prints the ratios Fourier / softmax; the machine and its load
 * are recorded, as timings on a shared machine must be read with them.
 *
 * usage: bench_attention_softmax [--quick] [--reps N] [--Lmax L] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <gsl/gsl_randist.h>
#include "gfi/gfi.h"
#include "bench_util.h"

enum { FOURIER, SOFTMAX, MATERIAL, TOUCH };

typedef struct {
  size_t L, D;
  double *Q, *K, *V, *H, *dH, *dQ, *dK, *dV, *saved;
  gfi_attn_plan *plan;
  double R;
} job;

static int forward(job *j, int which) {
  switch (which) {
    case FOURIER: return gfi_attn_forward(j->plan, j->Q, j->K, j->V, &j->R, j->H, j->saved, NULL);
    case SOFTMAX:
      return gfi_attn_softmax_forward(j->L, j->D, j->D, j->Q, j->K, j->V, 1 / sqrt((double)j->D), 0, NULL, j->H);
    case MATERIAL: {
      size_t bytes;
      return gfi_rpe_attention_exact(NULL, j->L, 1, NULL, j->D, j->Q, j->K, j->D, j->V, 1, 0, j->H, &bytes);
    }
    default: {
      double s = 0;
      for (size_t i = 0; i < j->L * j->D; i++) s += j->Q[i] + j->K[i] + j->V[i];
      j->H[0] = s;
      return GFI_OK;
    }
  }
}

static int backward(job *j, int which) {
  double dR;
  if (which == FOURIER)
    return gfi_attn_backward(j->plan, j->Q, j->K, j->V, &j->R, j->H, j->saved, j->dH, j->dQ, j->dK, j->dV, &dR,
                             NULL);
  return gfi_attn_softmax_backward(j->L, j->D, j->D, j->Q, j->K, j->V, 1 / sqrt((double)j->D), 0, NULL, j->dH,
                                   j->dQ, j->dK, j->dV);
}

/* this process's peak resident size (VmHWM, KiB); NAN when unreadable */
static double own_hwm_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double v = NAN;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) v = strtod(line + 6, NULL);
  if (f) fclose(f);
  return v;
}

/* peak RSS (MiB) of a child process (this program with --child) running
 * `which` once at length L (forward, or forward + backward); a fresh process
 * because the OpenMP runtime does not survive a bare fork. The child reports
 * its own VmHWM: the ru_maxrss of wait4 would also carry the parent's peak,
 * which Linux folds into the child's at exec. */
static double child_peak(size_t L, int which, int with_back) {
  char w[16], l[32], b[16], out[256];
  snprintf(w, sizeof w, "%d", which);
  snprintf(l, sizeof l, "%zu", L);
  snprintf(b, sizeof b, "%d", with_back);
  char *av[] = {"/proc/self/exe", "--child", w, l, b, NULL};
  bu_proc r = bu_run(av, out, sizeof out, 0);
  return r.rc == 0 ? bu_kv(out, "hwm_kib") / 1024.0 : NAN;
}

/* the inputs at length L: FourierFormer-like, keys near the queries */
static int setup(job *j, size_t L, size_t D) {
  memset(j, 0, sizeof *j);
  j->L = L, j->D = D, j->R = 1.0;
  size_t n = L * D;
  j->Q = malloc(n * sizeof *j->Q), j->K = malloc(n * sizeof *j->K), j->V = malloc(n * sizeof *j->V);
  j->H = malloc(n * sizeof *j->H), j->dH = malloc(n * sizeof *j->dH), j->dQ = malloc(n * sizeof *j->dQ);
  j->dK = malloc(n * sizeof *j->dK), j->dV = malloc(n * sizeof *j->dV);
  if (!j->Q || !j->K || !j->V || !j->H || !j->dH || !j->dQ || !j->dK || !j->dV) return GFI_ENOMEM;
  gsl_rng *rng = gfi_rng_stream(1, L);
  if (!rng) return GFI_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    j->Q[i] = 0.3 * gsl_ran_gaussian_ziggurat(rng, 1.0);
    j->K[i] = j->Q[i] + 0.3 * gsl_ran_gaussian_ziggurat(rng, 1.0);
    j->V[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    j->dH[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
  }
  gsl_rng_free(rng);
  gfi_attn_spec sp;
  gfi_attn_default_spec(&sp);
  int st = gfi_attn_plan_create(&j->plan, &sp, L, D, D, NULL);
  if (st) return st;
  j->saved = malloc(gfi_attn_saved_size(j->plan) * sizeof *j->saved);
  return j->saved ? GFI_OK : GFI_ENOMEM;
}

static void teardown(job *j) {
  gfi_attn_destroy(j->plan);
  free(j->Q), free(j->K), free(j->V), free(j->H), free(j->dH), free(j->dQ), free(j->dK), free(j->dV), free(j->saved);
}

static double best_time(job *j, int which, int with_back, int reps) {
  double best = INFINITY;
  for (int r = 0; r < reps; r++) {
    double t0 = bu_now();
    int st = forward(j, which);
    if (!st && with_back) st = backward(j, which);
    double t = bu_now() - t0;
    if (st) {
      fprintf(stderr, "bench_attention_softmax: %s\n", gfi_strerror(st));
      exit(1);
    }
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  int reps = 3;
  size_t Lmax = 4096, D = 64;
  if (argc == 5 && strcmp(argv[1], "--child") == 0) {
    job j;
    int which = atoi(argv[2]), back = atoi(argv[4]);
    int st = setup(&j, (size_t)atol(argv[3]), D);
    if (!st) st = forward(&j, which);
    if (!st && back) st = backward(&j, which);
    teardown(&j);
    printf("hwm_kib %.0f\n", own_hwm_kib());
    return st ? 1 : 0;
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) Lmax = 512, reps = 2;
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--Lmax") == 0 && i + 1 < argc) Lmax = (size_t)atol(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_attention_softmax [--quick] [--reps N] [--Lmax L]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  char cpu[256], load[64];
  bu_cpu_model(cpu, sizeof cpu);
  bu_loadavg(load, sizeof load);
  printf("# bench_attention_softmax (gfi %s)\n# machine: %s, %ld cores online, %.1f GiB; load average %s at start\n"
         "# D = Dv = %zu, one head, phi = z^4 with R = 1, softmax scale 1/sqrt(D); best of %d runs, %d threads\n"
         "# memory: peak resident size of a child process running the call once, less that of one only making "
         "the inputs\n",
         GFI_VERSION, cpu, sysconf(_SC_NPROCESSORS_ONLN), bu_mem_gib(), load, D, reps, gfi_threads_available());
  printf("# L fourier_s softmax_s ratio_fwd fourier_fb_s softmax_fb_s ratio_fb materialised_s fourier_MiB "
         "softmax_MiB materialised_MiB max_abs_diff_softmax\n");
  double last_ratio = NAN, last_fb = NAN;
  for (size_t L = 256; L <= Lmax; L *= 2) {
    job j;
    if (setup(&j, L, D)) return 1;
    double *H2 = malloc(L * D * sizeof *H2);
    if (!H2) return 1;
    double tf = best_time(&j, FOURIER, 0, reps), ts = best_time(&j, SOFTMAX, 0, reps);
    double tfb = best_time(&j, FOURIER, 1, reps), tsb = best_time(&j, SOFTMAX, 1, reps);
    /* the materialised peer, and the largest difference of the two softmax results */
    gfi_attn_softmax_forward(L, D, D, j.Q, j.K, j.V, 1 / sqrt((double)D), 0, NULL, H2);
    double tm = best_time(&j, MATERIAL, 0, reps), diff = 0;
    for (size_t i = 0; i < L * D; i++) diff = fmax(diff, fabs(j.H[i] - H2[i]));
    double base = child_peak(L, TOUCH, 0);
    double mf = child_peak(L, FOURIER, 1) - base, ms = child_peak(L, SOFTMAX, 1) - base;
    double mm = child_peak(L, MATERIAL, 0) - base;
    printf("%zu %.4g %.4g %.3f %.4g %.4g %.3f %.4g %.1f %.1f %.1f %.2g\n", L, tf, ts, tf / ts, tfb, tsb, tfb / tsb, tm,
           mf, ms, mm, diff);
    fflush(stdout);
    last_ratio = tf / ts, last_fb = tfb / tsb;
    teardown(&j);
    free(H2);
  }
  bu_loadavg(load, sizeof load);
  printf("# load average %s at the end\n# Fourier / softmax time at the largest L: forward %.3f, forward + backward "
         "%.3f (FourierFormer Table 9: about 1.11 for its models)\n", load, last_ratio, last_fb);
  return 0;
}
