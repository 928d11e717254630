/* The 2-D plug-in bandwidth matrix: gfi_bw_hpi (default route: the pair
 * sums up to 4000 points, the empirical cf above) against its own O(N^2)
 * pair sums and against ks::Hpi in R on the same data, binned (ks's default
 * above N = 500) and unbinned (binned = FALSE, ks's own exact sums).
 *
 * For each N (default 1e3, 1e4, 1e5, 1e6; correlated normal data, seed 9) it
 * prints gfi's wall time on 1 thread and on all threads, the pair sums' time
 * (up to --direct-max N, default 1e4) with the ratio pairs / default route
 * and the difference of the matrices, ks's elapsed time in one
 * Rscript (system.time around the call, so R's start-up is not counted), the
 * ratios ks / gfi, and the largest entry difference between the matrices
 * relative to the larger diagonal entry. ks unbinned is run only up to
 * --ks-exact-max N (default 1000; at N = 1e4 it takes minutes), ks binned up
 * to --ks-max N (default 1e5).
 *
 * It also times the 2-D LSCV matrix gfi_bw_lscv (default route against the
 * pair sums at every step, up to --lscv-direct-max N, default 5000).
 *
 * Usage: bench_hpi [--n N1,N2,..] [--direct-max N] [--lscv-direct-max N] [--ks-max N]
 *                  [--ks-exact-max N] [--threads T]
 * Skips the ks part with a message when Rscript or ks is absent. The wall
 * times depend on the machine's load, printed beside them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_util.h"
#include "gfi/gfi.h"

static double *sample2(size_t N) {
  gfi_model *m = NULL;
  double *x = malloc(2 * N * sizeof *x);
  gsl_rng *g = gfi_rng_stream(9, 0);
  if (!x || !g || gfi_model_parse(&m, "normal:cov=1,0.5,0.5,2", 2, NULL) || gfi_model_sample(m, g, N, x)) {
    free(x);
    x = NULL;
  }
  if (g) gsl_rng_free(g);
  gfi_model_free(m);
  return x;
}

static double maxdiff(const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < 4; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d / fmax(b[0], b[3]);
}

int main(int argc, char **argv) {
  size_t ns[8] = {1000, 10000, 100000, 1000000}, nn = 4, kmax = 1000, dmax = 10000, kbmax = 100000;
  size_t ldmax = 5000;
  int nt = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--n") && a + 1 < argc) {
      nn = 0;
      for (char *s = argv[++a]; *s && nn < 8;) {
        ns[nn++] = (size_t)strtod(s, &s);
        if (*s == ',') s++;
        else break;
      }
    } else if (!strcmp(argv[a], "--ks-exact-max") && a + 1 < argc)
      kmax = (size_t)atof(argv[++a]);
    else if (!strcmp(argv[a], "--ks-max") && a + 1 < argc)
      kbmax = (size_t)atof(argv[++a]);
    else if (!strcmp(argv[a], "--direct-max") && a + 1 < argc)
      dmax = (size_t)atof(argv[++a]);
    else if (!strcmp(argv[a], "--lscv-direct-max") && a + 1 < argc)
      ldmax = (size_t)atof(argv[++a]);
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc)
      nt = atoi(argv[++a]);
    else {
      fprintf(stderr, "usage: bench_hpi [--n N1,N2,..] [--direct-max N] [--lscv-direct-max N] "
                      "[--ks-max N] [--ks-exact-max N] [--threads T]\n");
      return 2;
    }
  }
  char load[64], cpu[256];
  bu_loadavg(load, sizeof load);
  bu_cpu_model(cpu, sizeof cpu);
  printf("# bench_hpi (gfi %s): 2-D plug-in bandwidth matrix, gfi_bw_hpi against ks::Hpi\n", GFI_VERSION);
  printf("cpu %s\nloadavg_start %s\n", cpu, load);
  int have_r = system("Rscript -e 'suppressMessages(library(ks))' >/dev/null 2>&1") == 0;
  if (!have_r) printf("# SKIP ks: Rscript with the ks package not found (Debian: r-base-core r-cran-ks)\n");
  char dir[] = "/tmp/gfi_bench_hpi_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  int rc = 0;
  for (size_t t = 0; t < nn; t++) {
    size_t N = ns[t];
    double *x = N >= 2 ? sample2(N) : NULL;
    if (!x) {
      fprintf(stderr, "bench_hpi: cannot sample N = %zu\n", N);
      rc = 1;
      break;
    }
    gfi_opts o;
    gfi_default_opts(&o);
    double H1[4], Ht[4], Hd[4];
    gfi_hpi_info in;
    o.nthreads = 1;
    double t0 = bu_now();
    int st = gfi_bw_hpi(N, 2, x, &o, H1, &in);
    double w1 = bu_now() - t0;
    o.nthreads = nt;
    t0 = bu_now();
    st = st ? st : gfi_bw_hpi(N, 2, x, &o, Ht, NULL);
    double wt = bu_now() - t0, wd = NAN;
    if (!st && N <= dmax) {
      o.method = GFI_METHOD_DIRECT;
      t0 = bu_now();
      st = gfi_bw_hpi(N, 2, x, &o, Hd, NULL);
      wd = bu_now() - t0;
      o.method = GFI_METHOD_AUTO;
    }
    if (st) {
      fprintf(stderr, "bench_hpi: gfi_bw_hpi: %s\n", gfi_strerror(st));
      free(x);
      rc = 1;
      break;
    }
    printf("N %zu gfi_wall_1thread %.4f gfi_wall_threads %.4f threads %d same_bits %d\n", N, w1, wt,
           gfi_threads_resolve(&o), memcmp(H1, Ht, sizeof H1) == 0);
    printf("N %zu gfi_H %.10g %.10g %.10g route %s bound %.2g\n", N, H1[0], H1[1], H1[3],
           in.fast ? "ecf" : "pairs", in.bound);
    if (N <= dmax)
      printf("N %zu gfi_pairs_wall_threads %.4f ratio_pairs_over_default %.3g maxdiff_rel %.3g\n", N,
             wd, wd / wt, maxdiff(Ht, Hd));
    /* the 2-D LSCV matrix: default route (the empirical cf above 2000
     * points) against the pair sums at every step, up to --lscv-direct-max */
    {
      double Hl[4], Hld[4];
      t0 = bu_now();
      int sl = gfi_bw_lscv(N, 2, x, &o, Hl);
      double wl = bu_now() - t0;
      if (sl) {
        printf("N %zu gfi_bw_lscv failed: %s\n", N, gfi_strerror(sl));
      } else if (N <= ldmax) {
        o.method = GFI_METHOD_DIRECT;
        t0 = bu_now();
        sl = gfi_bw_lscv(N, 2, x, &o, Hld);
        double wld = bu_now() - t0;
        o.method = GFI_METHOD_AUTO;
        if (!sl)
          printf("N %zu lscv_wall %.4f lscv_pairs_wall %.4f ratio_pairs_over_default %.3g maxdiff_rel %.3g\n",
                 N, wl, wld, wld / wl, maxdiff(Hl, Hld));
      } else {
        printf("N %zu lscv_wall %.4f (pairs skipped: N > --lscv-direct-max %zu)\n", N, wl, ldmax);
      }
    }
    if (have_r && N <= kbmax) {
      char path[128], script[1024], out[4096];
      snprintf(path, sizeof path, "%s/x", dir);
      FILE *f = fopen(path, "w");
      for (size_t i = 0; i < N && f; i++) fprintf(f, "%.17g %.17g\n", x[2 * i], x[2 * i + 1]);
      if (f) fclose(f);
      snprintf(script, sizeof script,
               "suppressMessages(library(ks)); x <- as.matrix(read.table('%s'));"
               "tb <- system.time(hb <- Hpi(x))[['elapsed']];"
               "cat(sprintf('ks_binned %%.4f %%.17g %%.17g %%.17g %%.17g\\n', tb, hb[1,1], hb[1,2], hb[2,1], hb[2,2]));"
               "if (%d) { te <- system.time(he <- Hpi(x, binned = FALSE))[['elapsed']];"
               "cat(sprintf('ks_exact %%.4f %%.17g %%.17g %%.17g %%.17g\\n', te, he[1,1], he[1,2], he[2,1], he[2,2])) }",
               path, N <= kmax);
      char *av[] = {"/usr/bin/Rscript", "-e", script, NULL};
      bu_proc p = bu_run(av, out, sizeof out, 0);
      double kb[5], ke[5];
      if (p.rc != 0 || sscanf(strstr(out, "ks_binned") ? strstr(out, "ks_binned") : "", "ks_binned %lf %lf %lf %lf %lf",
                              &kb[0], &kb[1], &kb[2], &kb[3], &kb[4]) != 5) {
        printf("N %zu ks failed (rc %d)\n", N, p.rc);
      } else {
        printf("N %zu ks_binned_wall %.4f ratio_ks_binned_over_gfi_threads %.3g maxdiff_rel %.3g\n", N, kb[0],
               kb[0] / wt, maxdiff(H1, kb + 1));
        const char *e = strstr(out, "ks_exact");
        if (e && sscanf(e, "ks_exact %lf %lf %lf %lf %lf", &ke[0], &ke[1], &ke[2], &ke[3], &ke[4]) == 5)
          printf("N %zu ks_exact_wall %.4f ratio_ks_exact_over_gfi_threads %.3g maxdiff_rel %.3g\n", N, ke[0],
                 ke[0] / wt, maxdiff(H1, ke + 1));
        else
          printf("N %zu ks_exact skipped (N > --ks-exact-max %zu)\n", N, kmax);
      }
    }
    free(x);
  }
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench_hpi: could not remove %s\n", dir);
  bu_loadavg(load, sizeof load);
  printf("loadavg_end %s\n", load);
  return rc;
}
