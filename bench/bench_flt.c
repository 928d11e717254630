/* FLT attention scaling (FLT Figure 1, measured): time and peak memory vs L
 * for FLT attention (Algorithm 1), plain FAVOR+ and exact RPE attention
 * (streamed rows, and the usual materialised L x L matrix).
 *
 * Each (method, L) runs in a child process: the child times the call and
 * reports the bytes the method allocated (its own accounting); the parent
 * reads the child's peak resident set (ru_maxrss from wait4) and subtracts
 * the peak of a child that only builds the inputs. Ratios are against exact
 * RPE attention measured in the same run.
 *   bench_flt [--quick] [--max-L N] [--max-exact N] [--max-mat N] [--out FILE] */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gsl/gsl_randist.h>
#include "gfi/gfi.h"
#include "gfi_version.h"

enum { M_INPUTS = 0, M_FLT, M_FAVOR, M_EXACT, M_EXACT_MAT, NMETH };
static const char *mname[NMETH] = {"inputs", "FLT", "FAVOR+", "exact", "exact-LxL"};
static const size_t d = 16, dv = 16, r = 32, m = 128;

/* run one method in this (child) process; returns seconds, *bytes */
static double run(int meth, size_t L, size_t *bytes) {
  gsl_rng *g = gfi_rng_stream(7, L);
  double *pos = malloc(L * sizeof *pos), *Q = malloc(L * d * sizeof *Q), *K = malloc(L * d * sizeof *K);
  double *V = malloc(L * dv * sizeof *V), *o = malloc(L * dv * sizeof *o), *W = malloc(m * d * sizeof *W);
  if (!pos || !Q || !K || !V || !o || !W) exit(3);
  for (size_t i = 0; i < L; i++) pos[i] = (double)i;
  for (size_t i = 0; i < L * d; i++) Q[i] = 0.5 * gsl_ran_gaussian_ziggurat(g, 1), K[i] = 0.5 * gsl_ran_gaussian_ziggurat(g, 1);
  for (size_t i = 0; i < L * dv; i++) V[i] = gsl_ran_gaussian_ziggurat(g, 1);
  memset(o, 0, L * dv * sizeof *o);
  gfi_rpe *R;
  gfi_proposal *P;
  gfi_rpe_gauss(&R, 1, 4.0);
  gfi_proposal_optimal(&P, R);
  *bytes = 0;
  int st = 0;
  for (int pass = 0; pass < 2; pass++) {
  /* pass 0: a small warm-up call (thread pool start-up, page faults of code) */
  size_t Lc = pass ? L : (L < 64 ? L : 64);
  double t0 = gfi_now();
  switch (meth) {
    case M_FLT: st = gfi_flt_attention(R, P, Lc, 1, pos, d, Q, K, dv, V, r, m, 1, g, 0, o, bytes); break;
    case M_FAVOR:
      gfi_favor_draw(g, m, d, 1, W);
      st = gfi_favor_attention(Lc, d, Q, K, dv, V, m, W, 0, o, bytes);
      break;
    case M_EXACT:
    case M_EXACT_MAT: st = gfi_rpe_attention_exact(R, Lc, 1, pos, d, Q, K, dv, V, meth == M_EXACT_MAT, 0, o, bytes); break;
  }
  double t = gfi_now() - t0;
  if (st) exit(4);
  if (pass) return t;
  }
  return NAN;
}

/* fork, run, collect (seconds, bytes, maxrss KB); 0 on success */
static int measure(int meth, size_t L, double *t, double *bytes, double *rss_kb) {
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fd[0]);
    size_t b;
    double res[2];
    res[0] = run(meth, L, &b);
    res[1] = (double)b;
    if (write(fd[1], res, sizeof res) != sizeof res) _exit(5);
    _exit(0);
  }
  close(fd[1]);
  double res[2] = {NAN, NAN};
  ssize_t n = read(fd[0], res, sizeof res);
  close(fd[0]);
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != sizeof res) return -1;
  *t = res[0];
  *bytes = res[1];
  *rss_kb = (double)ru.ru_maxrss;
  return 0;
}

int main(int argc, char **argv) {
  size_t maxL = 65536, maxExact = 16384, maxMat = 8192;
  const char *outpath = NULL;
  static const struct option opts[] = {{"quick", no_argument, 0, 'q'}, {"max-L", required_argument, 0, 'L'},
                                       {"max-exact", required_argument, 0, 'e'}, {"max-mat", required_argument, 0, 'm'},
                                       {"out", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 'q': maxL = 4096; maxExact = 4096; maxMat = 4096; break;
      case 'L': maxL = strtoull(optarg, NULL, 10); break;
      case 'e': maxExact = strtoull(optarg, NULL, 10); break;
      case 'm': maxMat = strtoull(optarg, NULL, 10); break;
      case 'o': outpath = optarg; break;
      case 'h': puts("usage: bench_flt [--quick] [--max-L N] [--max-exact N] [--max-mat N] [--out FILE]"); return 0;
      default: return 2;
    }
  }
  FILE *out = outpath ? fopen(outpath, "w") : NULL;
  if (outpath && !out) {
    perror(outpath);
    return 1;
  }
  struct utsname u;
  uname(&u);
  char cpu[256] = "unknown";
  FILE *ci = fopen("/proc/cpuinfo", "r");
  if (ci) {
    char line[512];
    while (fgets(line, sizeof line, ci))
      if (strncmp(line, "model name", 10) == 0) {
        char *p = strchr(line, ':');
        if (p) snprintf(cpu, sizeof cpu, "%s", p + 2);
        cpu[strcspn(cpu, "\n")] = 0;
        break;
      }
    fclose(ci);
  }
  FILE *fs[2] = {stdout, out};
  for (int k = 0; k < 2; k++) {
    if (!fs[k]) continue;
    gfi_dat_header(fs[k], "bench_flt", argc, argv);
    fprintf(fs[k], "# machine: %s, %s %s, %d threads\n", cpu, u.sysname, u.machine, gfi_threads_available());
    fprintf(fs[k], "# setting: gauss:s=4 RPE, optimal proposal, line positions, d = dv = %zu, FLT r = %zu, FAVOR+ m = %zu "
                   "(orthogonal); one child process per (method, L)\n", d, r, m);
    fprintf(fs[k], "# time: wall seconds of the call; MB: the method's own allocations; rss: child peak RSS minus the "
                   "inputs-only child's peak (MB, getrusage via wait4)\n");
    fprintf(fs[k], "# L t_flt t_favor t_exact t_exact_mat mb_flt mb_favor mb_exact mb_exact_mat rss_flt rss_favor "
                   "rss_exact rss_exact_mat exact_over_flt\n");
  }
  for (size_t L = 256; L <= maxL; L *= 2) {
    double t[NMETH], b[NMETH], rss[NMETH];
    for (int k = 0; k < NMETH; k++) {
      t[k] = b[k] = rss[k] = NAN;
      if ((k == M_EXACT && L > maxExact) || (k == M_EXACT_MAT && L > maxMat)) continue;
      if (measure(k, L, &t[k], &b[k], &rss[k])) {
        fprintf(stderr, "bench_flt: %s at L = %zu failed\n", mname[k], L);
        t[k] = b[k] = rss[k] = NAN;
      }
    }
    double vals[14];
    vals[0] = (double)L;
    for (int k = 1; k < NMETH; k++) {
      vals[k] = t[k];
      vals[4 + k] = b[k] / 1e6;
      vals[8 + k] = (rss[k] - rss[M_INPUTS]) / 1024.0;
    }
    vals[13] = t[M_EXACT] / t[M_FLT];
    for (int k = 0; k < 2; k++) {
      if (!fs[k]) continue;
      for (int j = 0; j < 14; j++) fprintf(fs[k], j ? " %.6g" : "%.0f", vals[j]);
      fputc('\n', fs[k]);
      fflush(fs[k]);
    }
  }
  if (out) fclose(out);
  return 0;
}
