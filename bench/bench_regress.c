/* Nadaraya-Watson benchmark, every number measured in this run:
 *  1. pair rate (data points x queries per second) of gfi's Gaussian and
 *     Fourier NW against statsmodels' KernelReg (local constant, Gaussian,
 *     fixed bandwidth; Debian's python3-statsmodels, /usr/bin/python3) on the
 *     same data, with the largest difference of the Gaussian estimates;
 *  2. the reproduction setup: N = 90000 correlated normal pairs, cubic truth,
 *     phi = z^4, D = 2;
 *  3. the cost of the scaled (range-safe) path against the plain product for
 *     D = 2 .. 128.
 * usage: bench_regress [--quick] [--peer nw_statsmodels.py] [--python /usr/bin/python3] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gfi/gfi.h"
#include <gsl/gsl_randist.h>
#include "gfi_version.h"

static void die(const char *what, int st) {
  fprintf(stderr, "bench_regress: %s: %s\n", what, gfi_strerror(st));
  exit(1);
}

static void make_data(const char *design, const char *truth, size_t D, size_t N, uint64_t seed,
                      double *x, double *y) {
  gfi_model *m;
  gfi_regfun *f;
  gfi_noise n;
  gfi_errinfo e;
  if (gfi_model_parse(&m, design, D, &e)) die(design, GFI_EMODEL);
  if (gfi_regfun_parse(&f, truth, D, &e)) die(truth, GFI_EMODEL);
  gfi_noise_parse(&n, "gauss:0.3", NULL);
  gsl_rng *r = gfi_rng_stream(seed, 0);
  int st = gfi_regress_sample(m, f, &n, r, N, x, y);
  if (st) die("sampling", st);
  gsl_rng_free(r);
  gfi_model_free(m);
  gfi_regfun_free(f);
}

/* Seconds per evaluation of M queries, repeated for at least min_s. */
static double time_eval(const gfi_nw_plan *p, size_t M, const double *q, double *out, double min_s) {
  size_t reps = 0;
  double t0 = gfi_now(), el;
  do {
    int st = gfi_nw_eval(p, M, q, out, NULL);
    if (st && st != GFI_EDENOM) die("evaluation", st);
    reps++;
    el = gfi_now() - t0;
  } while (el < min_s);
  return el / (double)reps;
}

static void machine(void) {
  char host[256] = "?", cpu[256] = "?", line[512];
  gethostname(host, sizeof host);
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "model name", 10)) {
        char *c = strchr(line, ':');
        if (c) snprintf(cpu, sizeof cpu, "%s", c + 2);
        cpu[strcspn(cpu, "\n")] = 0;
        break;
      }
    fclose(f);
  }
  double la[3] = {0, 0, 0};
  if (getloadavg(la, 3) < 0) la[0] = NAN;
  printf("# bench_regress (gfi %s, git %s)\n# machine: %s, %s, %d threads (openmp %s), load average %.2f\n",
         GFI_VERSION, GFI_GIT_REVISION, host, cpu, gfi_threads_available(), gfi_have_openmp() ? "on" : "off",
         la[0]);
}

int main(int argc, char **argv) {
  int quick = 0;
  const char *peer = NULL, *python = "/usr/bin/python3";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--peer") && i + 1 < argc)
      peer = argv[++i];
    else if (!strcmp(argv[i], "--python") && i + 1 < argc)
      python = argv[++i];
    else {
      fprintf(stderr, "usage: bench_regress [--quick] [--peer nw_statsmodels.py] [--python PY]\n");
      return 2;
    }
  }
  machine();
  const double min_s = quick ? 0.2 : 1.0;
  gfi_kernel k4;
  gfi_kernel_pow(&k4, 4);

  /* 1. against statsmodels */
  {
    const size_t D = 2, N = quick ? 1000 : 3000, M = quick ? 100 : 300;
    const char *design = "normal:cov=1,0.6,0.6,1.5", *truth = "poly:0,1,-0.5,0.2";
    double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), *q = malloc(M * D * sizeof *q);
    double *yq = malloc(M * sizeof *yq), *g = malloc(M * sizeof *g), *o = malloc(M * sizeof *o);
    make_data(design, truth, D, N, 1, x, y);
    make_data(design, truth, D, M, 2, q, yq);
    double h[2] = {0.3, 0.4}, H[4] = {0.09, 0, 0, 0.16}, R[2] = {1 / 0.3, 1 / 0.4};
    gfi_nw_plan *pg, *pf, *pg1, *pf1;
    gfi_opts one;
    gfi_default_opts(&one);
    one.nthreads = 1;
    int st = gfi_nw_plan_gauss(&pg, N, D, 1, x, y, H, NULL);
    if (!st) st = gfi_nw_plan_gauss(&pg1, N, D, 1, x, y, H, &one);
    if (st) die("gauss plan", st);
    st = gfi_nw_plan_fourier(&pf, &k4, N, D, 1, x, y, R, NULL);
    if (!st) st = gfi_nw_plan_fourier(&pf1, &k4, N, D, 1, x, y, R, &one);
    if (st) die("fourier plan", st);
    double tg1 = time_eval(pg1, M, q, g, min_s), tf1 = time_eval(pf1, M, q, o, min_s);
    double tg = time_eval(pg, M, q, g, min_s), tf = time_eval(pf, M, q, o, min_s);
    double pairs = (double)N * (double)M;
    int nt = gfi_threads_available();
    printf("\n# 1. NW pair rate against statsmodels KernelReg (reg_type='lc', Gaussian, fixed bw), D = 2,\n"
           "#    N = %zu, M = %zu, design %s, truth %s, bandwidths %g, %g (Fourier: R = 1/h, phi = z^4)\n"
           "#    statsmodels runs on one core; gfi on 1 and on all %d threads\n",
           N, M, design, truth, h[0], h[1], nt);
    printf("gfi gauss NW:    %.4g pairs/s on 1 thread, %.4g on %d\n", pairs / tg1, pairs / tg, nt);
    printf("gfi fourier NW:  %.4g pairs/s on 1 thread, %.4g on %d\n", pairs / tf1, pairs / tf, nt);
    if (!peer || access(peer, R_OK) != 0 || access(python, X_OK) != 0) {
      printf("statsmodels:     skipped (peer script or %s missing; Debian package python3-statsmodels)\n", python);
    } else {
      char dir[] = "/tmp/gfi_bench_regress_XXXXXX";
      if (!mkdtemp(dir)) die("temporary directory", GFI_EIO);
      char fd[512], fq[512], fo[512], cmd[4096];
      snprintf(fd, sizeof fd, "%s/data", dir);
      snprintf(fq, sizeof fq, "%s/q", dir);
      snprintf(fo, sizeof fo, "%s/out", dir);
      FILE *f = fopen(fd, "w");
      for (size_t i = 0; i < N; i++) fprintf(f, "%.17g %.17g %.17g\n", x[2 * i], x[2 * i + 1], y[i]);
      fclose(f);
      f = fopen(fq, "w");
      for (size_t i = 0; i < M; i++) fprintf(f, "%.17g %.17g\n", q[2 * i], q[2 * i + 1]);
      fclose(f);
      snprintf(cmd, sizeof cmd, "%s %s %s %s %g,%g %s %g", python, peer, fd, fq, h[0], h[1], fo, min_s);
      FILE *pp = popen(cmd, "r");
      double ts = NAN;
      int reps = 0;
      if (!pp || fscanf(pp, "%lf %d", &ts, &reps) != 2) ts = NAN;
      int prc = pp ? pclose(pp) : -1;
      if (prc != 0 || !isfinite(ts)) {
        printf("statsmodels:     failed (%s)\n", cmd);
      } else {
        double maxd = 0, scale = 0;
        f = fopen(fo, "r");
        for (size_t i = 0; i < M; i++) {
          double v = NAN;
          if (fscanf(f, "%lf", &v) != 1) v = NAN;
          double d = fabs(v - g[i]);
          if (!(d <= maxd)) maxd = d;
          if (fabs(g[i]) > scale) scale = fabs(g[i]);
        }
        fclose(f);
        printf("statsmodels:     %.4g pairs/s (%.3g s per evaluation, %d repeats)\n", pairs / ts, ts, reps);
        printf("agreement:       max |gfi gauss - statsmodels| = %.3g (max |f| %.3g)\n", maxd, scale);
        printf("ratio, 1 thread: gauss %.0fx, fourier %.0fx statsmodels' pair rate\n", ts / tg1, ts / tf1);
        printf("ratio, %d threads: gauss %.0fx, fourier %.0fx (goal >= 50x)\n", nt, ts / tg, ts / tf);
      }
      unlink(fd);
      unlink(fq);
      unlink(fo);
      rmdir(dir);
    }
    gfi_nw_destroy(pg);
    gfi_nw_destroy(pf);
    gfi_nw_destroy(pg1);
    gfi_nw_destroy(pf1);
    free(x); free(y); free(q); free(yq); free(g); free(o);
  }

  /* 2. the reproduction setup */
  {
    const size_t D = 2, N = 90000, M = quick ? 1000 : 5000;
    const char *design = "normal:cov=1,0.6,0.6,1.5", *truth = "poly:0,1,-0.5,0.2";
    double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), *q = malloc(M * D * sizeof *q);
    double *yq = malloc(M * sizeof *yq), *o = malloc(M * sizeof *o), R[2] = {3, 3};
    make_data(design, truth, D, N, 3, x, y);
    make_data(design, truth, D, M, 4, q, yq);
    double t0 = gfi_now();
    gfi_nw_plan *p;
    int st = gfi_nw_plan_fourier(&p, &k4, N, D, 1, x, y, R, NULL);
    if (st) die("plan", st);
    double tp = gfi_now() - t0;
    double te = time_eval(p, M, q, o, min_s);
    double mse = 0;
    gfi_regfun *f;
    gfi_regfun_parse(&f, truth, D, NULL);
    gfi_regfun_eval(f, M, q, yq);
    for (size_t i = 0; i < M; i++) mse += (o[i] - yq[i]) * (o[i] - yq[i]) / M;
    printf("\n# 2. reproduction setup: N = %zu pairs from %s, truth %s + N(0, 0.3^2), phi = z^4, R = 3\n", N,
           design, truth);
    printf("plan %.3g s; %zu queries in %.3g s: %.4g pairs/s; MSE against the truth %.4g\n", tp, M, te,
           (double)N * M / te, mse);
    gfi_regfun_free(f);
    gfi_nw_destroy(p);
    free(x); free(y); free(q); free(yq); free(o);
  }

  /* 3. scaled path against the plain product */
  {
    printf("\n# 3. cost of the scaled (range-safe) path, phi = z^4, N = 20000, M = 64, R = 2 (pairs/s)\n");
    printf("# D plain scaled scaled/plain_time auto_path\n");
    const size_t N = quick ? 5000 : 20000, M = 64;
    size_t Ds[] = {2, 8, 16, 32, 64, 128};
    for (size_t a = 0; a < sizeof Ds / sizeof *Ds; a++) {
      size_t D = Ds[a];
      double *x = malloc(N * D * sizeof *x), *y = malloc(N * sizeof *y), *q = malloc(M * D * sizeof *q);
      double *o = malloc(M * sizeof *o), *R = malloc(D * sizeof *R);
      gsl_rng *r = gfi_rng_stream(5, D);
      for (size_t i = 0; i < N * D; i++) x[i] = gsl_ran_gaussian_ziggurat(r, 1.0);
      for (size_t i = 0; i < M * D; i++) q[i] = gsl_ran_gaussian_ziggurat(r, 1.0);
      for (size_t i = 0; i < N; i++) y[i] = x[i * D];
      for (size_t j = 0; j < D; j++) R[j] = 2;
      gfi_nw_plan *p;
      int st = gfi_nw_plan_fourier(&p, &k4, N, D, 1, x, y, R, NULL);
      if (st) die("plan", st);
      gfi_nw_set_scaling(p, GFI_NW_SCALE_PLAIN);
      double tp = time_eval(p, M, q, o, min_s / 2);
      gfi_nw_set_scaling(p, GFI_NW_SCALE_ALWAYS);
      double ts = time_eval(p, M, q, o, min_s / 2);
      double pairs = (double)N * M;
      printf("%zu %.4g %.4g %.3f %s\n", D, pairs / tp, pairs / ts, ts / tp, D * 4 <= 64 ? "plain+fallback" : "scaled");
      gfi_nw_destroy(p);
      gsl_rng_free(r);
      free(x); free(y); free(q); free(o); free(R);
    }
  }
  return 0;
}
