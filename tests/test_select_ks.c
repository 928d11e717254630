/* The Gaussian baselines of gfi/select.h against R's ks package (hlscv, hpi,
 * Hns, Hlscv) on fixed data, and against ks values stored here (computed with
 * ks 1.14.0 on the same data) so that the comparison runs where R is absent.
 * ks bins the data (hlscv via stats::bw.ucv, hpi via KernSmooth::dpik on a
 * 401-point grid) and gfi sums exactly, so the bandwidths agree to the
 * binning error: within 2% for LSCV, 1% for the plug-in. Hns has no binning: 1e-9. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>
#include "check.h"
#include "gfi/gfi.h"

static double *draw(const char *spec, size_t D, size_t N, unsigned long seed) {
  gfi_model *m;
  gfi_model_parse(&m, spec, D, NULL);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  double *x = malloc(N * D * sizeof *x);
  gfi_model_sample(m, r, N, x);
  gsl_rng_free(r);
  gfi_model_free(m);
  return x;
}

/* gfi's values: h_lscv, h_dpi (1-D sets) and Hns, Hlscv (2-D, 3 entries each) */
typedef struct {
  double v[10];
} vals;

static const char *names[10] = {"hlscv normal", "hpi normal", "hlscv bimodal", "hpi bimodal",
                                "Hns 11",       "Hns 12",     "Hns 22",        "Hlscv 11",
                                "Hlscv 12",     "Hlscv 22"};
/* ks 1.14.0 (R 4.2.2) on the data below */
static const vals stored = {{0.12353369551062127, 0.29385740651868569, 0.27381620047781541,
                             0.31661018762247206, 0.16747393704271082, 0.081369095076205961,
                             0.31227183802296871, 0.20619996841136007, 0.082444856625810331,
                             0.39662454144004494}};

static void write1(const char *path, const double *x, size_t N, size_t D) {
  FILE *f = fopen(path, "w");
  for (size_t i = 0; i < N; i++) {
    for (size_t j = 0; j < D; j++) fprintf(f, "%s%.17g", j ? " " : "", x[i * D + j]);
    fputc('\n', f);
  }
  fclose(f);
}

static int run_ks(const char *dir, vals *ks) {
  if (system("Rscript -e 'suppressMessages(library(ks))' >/dev/null 2>&1") != 0) return 0;
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "Rscript -e 'suppressMessages(library(ks)); a <- scan(\"%s/a\", quiet = TRUE); "
           "b <- scan(\"%s/b\", quiet = TRUE); c <- as.matrix(read.table(\"%s/c\")); "
           "h1 <- Hns(c); h2 <- Hlscv(c); "
           "cat(sprintf(\"%%.17g\\n\", c(hlscv(a), hpi(a), hlscv(b), hpi(b), h1[1,1], h1[1,2], h1[2,2], "
           "h2[1,1], h2[1,2], h2[2,2])))' > %s/ks.out 2>/dev/null",
           dir, dir, dir, dir);
  if (system(cmd) != 0) return -1;
  char path[512];
  snprintf(path, sizeof path, "%s/ks.out", dir);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = 0;
  while (n < 10 && fscanf(f, "%lf", &ks->v[n]) == 1) n++;
  fclose(f);
  return n == 10 ? 1 : -1;
}

static void compare(const vals *g, const vals *ks, const char *who) {
  for (int i = 0; i < 10; i++) {
    /* LSCV: bw.ucv's binned pair distances move its minimiser by up to 1%;
     * dpik's 401-point grid moves h by about 0.5% */
    double tol = (i >= 4 && i <= 6) ? 1e-9 : (i == 1 || i == 3) ? 1e-2 : 2e-2;
    double scale = i < 4 ? fabs(ks->v[i]) : fmax(fabs(ks->v[i < 7 ? 4 : 7]), fabs(ks->v[i < 7 ? 6 : 9]));
    CHECK(fabs(g->v[i] - ks->v[i]) <= tol * scale, "%s vs %s: gfi %.10g, ks %.10g", names[i], who, g->v[i],
          ks->v[i]);
  }
}

int main(void) {
  const size_t N1 = 300, N2 = 300;
  double *a = draw("normal", 1, N1, 5), *b = draw("mw:6", 1, N1, 6), *c = draw("normal:cov=1,0.5,0.5,2", 2, N2, 7);
  vals g;
  gfi_opts o;
  gfi_default_opts(&o);
  double H[4];
  CHECK_STATUS(gfi_bw_lscv(N1, 1, a, &o, H), GFI_OK);
  g.v[0] = sqrt(H[0]);
  CHECK_STATUS(gfi_bw_dpi(N1, a, &o, &g.v[1]), GFI_OK);
  CHECK_STATUS(gfi_bw_lscv(N1, 1, b, &o, H), GFI_OK);
  g.v[2] = sqrt(H[0]);
  CHECK_STATUS(gfi_bw_dpi(N1, b, &o, &g.v[3]), GFI_OK);
  CHECK_STATUS(gfi_bw_normal_ref(N2, 2, c, H), GFI_OK);
  g.v[4] = H[0], g.v[5] = H[1], g.v[6] = H[3];
  CHECK_STATUS(gfi_bw_lscv(N2, 2, c, &o, H), GFI_OK);
  g.v[7] = H[0], g.v[8] = H[1], g.v[9] = H[3];
  for (int i = 0; i < 10; i++) printf("%-14s %.17g\n", names[i], g.v[i]);
  compare(&g, &stored, "stored ks 1.14.0 values");
  char dir[] = "/tmp/gfi_ks_XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(0, "mkdtemp");
    return check_summary("select-ks");
  }
  char p[600];
  snprintf(p, sizeof p, "%s/a", dir);
  write1(p, a, N1, 1);
  snprintf(p, sizeof p, "%s/b", dir);
  write1(p, b, N1, 1);
  snprintf(p, sizeof p, "%s/c", dir);
  write1(p, c, N2, 2);
  vals ks;
  int got = run_ks(dir, &ks);
  snprintf(p, sizeof p, "rm -rf %s", dir);
  if (system(p) != 0) fprintf(stderr, "could not remove %s\n", dir);
  free(a);
  free(b);
  free(c);
  if (got == 0) {
    printf("SKIP (part): R with the ks package is not installed (Debian: r-base-core r-cran-ks); "
           "compared with the stored ks values only\n");
    return check_summary("select-ks");
  }
  CHECK(got == 1, "Rscript with ks failed");
  if (got == 1) {
    for (int i = 0; i < 10; i++) printf("ks %-11s %.17g\n", names[i], ks.v[i]);
    compare(&g, &ks, "R's ks");
  }
  return check_summary("select-ks");
}
