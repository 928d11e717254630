/* MISE against R at fixed N: the exact (Plancherel) curve with its bias^2 and
 * variance parts, and Monte-Carlo points with error bars (the bias/variance
 * U), for phi = z^l, l = 1, 2, 4 on a 1-D truth.
 * Writes OUT/mise_vs_R.dat (exact curves) and OUT/mise_vs_R_mc.dat (Monte
 * Carlo points); plots/mise_vs_R.gp draws them. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "gfi/gfi.h"

static void die(const char *what, int st) {
  fprintf(stderr, "mise_curves: %s: %s\n", what, gfi_strerror(st));
  exit(1);
}

static FILE *open_out(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "mise_curves: cannot write %s: %s\n", path, strerror(errno));
    exit(1);
  }
  return f;
}

int main(int argc, char **argv) {
  const char *out = "results", *spec = "mw:6";
  size_t N = 500, reps = 200;
  unsigned long long seed = 1;
  static const struct option opts[] = {{"out", required_argument, 0, 'o'}, {"model", required_argument, 0, 'm'},
                                       {"n", required_argument, 0, 'n'},   {"reps", required_argument, 0, 'r'},
                                       {"seed", required_argument, 0, 's'}, {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 'o': out = optarg; break;
      case 'm': spec = optarg; break;
      case 'n': N = strtoull(optarg, NULL, 10); break;
      case 'r': reps = strtoull(optarg, NULL, 10); break;
      case 's': seed = strtoull(optarg, NULL, 10); break;
      case 'h':
        printf("usage: mise_curves [--out DIR] [--model SPEC (1-D)] [--n N] [--reps R] [--seed S]\n");
        return 0;
      default: return 2;
    }
  }
  if (N < 1 || reps < 2) {
    fprintf(stderr, "mise_curves: --n must be >= 1 and --reps >= 2\n");
    return 2;
  }
  if (mkdir(out, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "mise_curves: cannot create %s: %s\n", out, strerror(errno));
    return 1;
  }
  gfi_model *m;
  gfi_errinfo e;
  int st = gfi_model_parse(&m, spec, 1, &e);
  if (st) die(spec, st);
  const int ls[3] = {1, 2, 4};
  gfi_kernel ks[3];
  for (int i = 0; i < 3; i++) gfi_kernel_pow(ks + i, ls[i]);
  FILE *f = open_out(out, "mise_vs_R.dat");
  gfi_dat_header(f, "mise_curves", argc, argv);
  gfi_dat_meta(f, "model", "%s (%s), D = 1", spec, gfi_model_describe(m));
  gfi_dat_meta(f, "n", "%zu", N);
  gfi_dat_meta(f, "method", "exact MISE by Plancherel; columns per l = 1, 2, 4");
  double ropt[3];
  for (int i = 0; i < 3; i++) {
    gfi_mise_result r;
    st = gfi_ropt(m, &ks[i], (double)N, NULL, NULL, ropt + i, &r);
    if (st) die("optimal radius", st);
    gfi_dat_meta(f, "R_opt", "l = %d: %.17g (MISE %.17g)", ls[i], ropt[i], r.mise);
  }
  fputs("# R mise_l1 bias2_l1 var_l1 mise_l2 bias2_l2 var_l2 mise_l4 bias2_l4 var_l4\n", f);
  for (int k = 0; k <= 120; k++) {
    double R = 0.3 * pow(100.0, k / 120.0);
    gfi_table_put(f, R);
    for (int i = 0; i < 3; i++) {
      gfi_mise_result r;
      st = gfi_mise_exact(m, &ks[i], (double)N, &R, NULL, &r);
      if (st) die("exact MISE", st);
      double v[3] = {r.mise, r.bias2, r.var};
      for (int q = 0; q < 3; q++) {
        fputc(' ', f);
        gfi_table_put(f, v[q]);
      }
    }
    fputc('\n', f);
  }
  fclose(f);
  f = open_out(out, "mise_vs_R_mc.dat");
  gfi_dat_header(f, "mise_curves", argc, argv);
  gfi_dat_meta(f, "model", "%s (%s), D = 1", spec, gfi_model_describe(m));
  gfi_dat_meta(f, "n", "%zu", N);
  gfi_dat_meta(f, "method", "Monte Carlo, %zu replications (Plancherel ISE), seed %llu, point j uses seed + j", reps,
               seed);
  fputs("# l R mc_mise mc_se exact_mise z\n", f);
  size_t j = 0;
  for (int i = 0; i < 3; i++) {
    for (int k = 0; k < 7; k++, j++) {
      double R = ropt[i] * pow(2.0, (k - 3) * 0.75);
      gfi_mise_opts o;
      gfi_mise_default_opts(&o);
      o.base.seed = seed + j;
      o.parts = 0;
      gfi_mise_result mc, ex;
      st = gfi_mise_mc(m, &ks[i], N, &R, reps, &o, &mc, NULL);
      if (st) die("Monte-Carlo MISE", st);
      st = gfi_mise_exact(m, &ks[i], (double)N, &R, NULL, &ex);
      if (st) die("exact MISE", st);
      double v[6] = {ls[i], R, mc.mise, mc.se, ex.mise, (mc.mise - ex.mise) / mc.se};
      gfi_table_write_rows(f, 1, 6, v);
    }
    fputs("\n\n", f);
  }
  fclose(f);
  gfi_model_free(m);
  return 0;
}
