/* FourierFormer reproduction measurements (gfi_exp/repro.h): each MSE
 * against a recomputation from the documented streams with the plain
 * estimators, identical results for any thread count, the oracle radius a
 * minimum of its criterion, and the error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/gfi.h"
#include "gfi_exp/repro.h"
#include "check.h"

static gfi_model *model(const char *spec, size_t D) {
  gfi_model *m;
  gfi_errinfo e;
  if (gfi_model_parse(&m, spec, D, &e)) abort();
  return m;
}

int main(void) {
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  gfi_opts o1, o2;
  gfi_default_opts(&o1);
  gfi_default_opts(&o2);
  o1.nthreads = 1;
  o2.nthreads = 2;
  const size_t N = 3000, M = 200;
  const uint64_t seed = 11, rep = 2;

  /* density: against gfi_mse_points on the same sample and points */
  {
    gfi_model *m = model("normal:cov=1,0.5,0.5,1", 2);
    double R[4] = {2, 2, 3.5, 3.5}, h[2] = {1.5, 4};
    gfi_repro_grid g = {2, R, 2, h};
    double mse[4], mse2[4];
    CHECK_STATUS(gfi_repro_density(m, &k, N, M, seed, rep, &g, &o1, mse), GFI_OK);
    CHECK_STATUS(gfi_repro_density(m, &k, N, M, seed, rep, &g, &o2, mse2), GFI_OK);
    CHECK(memcmp(mse, mse2, sizeof mse) == 0, "density MSE differs between 1 and 2 threads");
    double *x = malloc(N * 2 * sizeof *x), *u = malloc(M * 2 * sizeof *u), *q = malloc(M * 2 * sizeof *q);
    gsl_rng *r = gfi_rng_stream(seed, rep);
    gfi_model_sample(m, r, N, x);
    gsl_rng_free(r);
    CHECK_STATUS(gfi_repro_unit_points(seed, rep, 2, M, u), GFI_OK);
    int inside = 1;
    for (size_t i = 0; i < 2 * M; i++) inside &= (u[i] >= -1 && u[i] <= 1);
    CHECK(inside, "unit points outside [-1, 1]");
    for (size_t a = 0; a < 2; a++)
      for (size_t b = 0; b < 2; b++) {
        for (size_t i = 0; i < 2 * M; i++) q[i] = h[b] * u[i];
        double ref;
        gfi_mise_opts mo;
        gfi_mise_default_opts(&mo);
        CHECK_STATUS(gfi_mse_points(m, &k, N, x, R + 2 * a, M, q, &mo, &ref, NULL), GFI_OK);
        CHECK_CLOSE(mse[a * 2 + b], ref, 1e-12, 0);
      }
    /* a wider box over the same draws: more points in the tails, smaller MSE */
    CHECK(mse[1] < mse[0] && mse[3] < mse[2], "box 4 should average in near-zero errors");
    free(x), free(u), free(q);
    /* errors */
    CHECK_STATUS(gfi_repro_density(NULL, &k, N, M, seed, rep, &g, NULL, mse), GFI_EINVAL);
    CHECK_STATUS(gfi_repro_density(m, &k, 0, M, seed, rep, &g, NULL, mse), GFI_EEMPTY);
    gfi_repro_grid bad = {2, R, 0, h};
    CHECK_STATUS(gfi_repro_density(m, &k, N, M, seed, rep, &bad, NULL, mse), GFI_EEMPTY);
    double hb[2] = {1, -1};
    gfi_repro_grid badh = {2, R, 2, hb};
    CHECK_STATUS(gfi_repro_density(m, &k, N, M, seed, rep, &badh, NULL, mse), GFI_ERADIUS);
    double Rb[4] = {2, 0, 1, 1};
    gfi_repro_grid badr = {2, Rb, 2, h};
    CHECK_STATUS(gfi_repro_density(m, &k, N, M, seed, rep, &badr, NULL, mse), GFI_ERADIUS);
    gfi_model_free(m);
  }

  /* regression: against a hand loop over gfi_nw_eval; prediction MSE */
  {
    gfi_model *d = model("normal:cov=1,0.5,0.5,1", 2);
    gfi_regfun *f;
    gfi_errinfo e;
    gfi_regfun_parse(&f, "poly:0,1,-0.5,0.2", 2, &e);
    gfi_noise nz;
    gfi_noise_parse(&nz, "gauss:0.5", &e);
    double R[4] = {2, 2, 4, 4}, h[2] = {1, 2};
    gfi_repro_grid g = {2, R, 2, h};
    double mse[4], pm[4], mse2[4], pm2[4];
    size_t nf;
    CHECK_STATUS(gfi_repro_regress(d, f, &nz, &k, N, M, seed, rep, &g, &o1, mse, pm, &nf), GFI_OK);
    CHECK(nf == 0, "no flagged rows for l = 4 (%zu)", nf);
    CHECK_STATUS(gfi_repro_regress(d, f, &nz, &k, N, M, seed, rep, &g, &o2, mse2, pm2, NULL), GFI_OK);
    CHECK(memcmp(mse, mse2, sizeof mse) == 0 && memcmp(pm, pm2, sizeof pm) == 0,
          "regression MSE differs between 1 and 2 threads");
    double *x = malloc(N * 2 * sizeof *x), *y = malloc(N * sizeof *y), *u = malloc(M * 2 * sizeof *u);
    double *q = malloc(M * 2 * sizeof *q), *est = malloc(M * sizeof *est), *ft = malloc(M * sizeof *ft);
    gsl_rng *r = gfi_rng_stream(seed, rep);
    gfi_regress_sample(d, f, &nz, r, N, x, y);
    gsl_rng_free(r);
    gfi_repro_unit_points(seed, rep, 2, M, u);
    double noise_part = 0;
    for (size_t a = 0; a < 2; a++) {
      gfi_nw_plan *p;
      CHECK_STATUS(gfi_nw_plan_fourier(&p, &k, N, 2, 1, x, y, R + 2 * a, NULL), GFI_OK);
      for (size_t b = 0; b < 2; b++) {
        for (size_t i = 0; i < 2 * M; i++) q[i] = h[b] * u[i];
        gfi_nw_eval(p, M, q, est, NULL);
        gfi_regfun_eval(f, M, q, ft);
        double s = 0;
        for (size_t i = 0; i < M; i++) s += (est[i] - ft[i]) * (est[i] - ft[i]);
        CHECK_CLOSE(mse[a * 2 + b], s / M, 1e-12, 0);
        noise_part += (pm[a * 2 + b] - mse[a * 2 + b]) / 4;
      }
      gfi_nw_destroy(p);
    }
    /* pred MSE - MSE = noise variance on average (0.25) up to Monte-Carlo
     * error (M = 200 noises: sd of the mean of eps^2 about 0.025) */
    CHECK(fabs(noise_part - 0.25) < 0.1, "prediction MSE - MSE = %g, noise variance 0.25", noise_part);
    free(x), free(y), free(u), free(q), free(est), free(ft);

    /* oracle radius: a minimum of its own criterion */
    double Ro, mo;
    size_t nev;
    CHECK_STATUS(gfi_repro_regress_ropt(d, f, &nz, &k, 2000, 100, 2.0, 2, 5, 0.5, 32, 7, &o2, &Ro, &mo, &nev),
                 GFI_OK);
    CHECK(Ro > 0.5 && Ro < 32 && nev > 7, "R* = %g after %zu radii", Ro, nev);
    double u2[200];
    gfi_repro_unit_points(5, 0, 2, 100, u2);
    for (size_t i = 0; i < 200; i++) u2[i] *= 2.0;
    for (int s = -1; s <= 1; s += 2) {
      double Rv[2] = {Ro * (s < 0 ? 0.85 : 1.0 / 0.85), Ro * (s < 0 ? 0.85 : 1.0 / 0.85)};
      gfi_nw_study st = {.design = d, .truth = f, .noise = nz, .N = 2000, .kernel = k, .R = Rv};
      gfi_nw_mse_result res;
      o2.seed = 5;
      CHECK_STATUS(gfi_nw_mse(&st, 100, u2, 2, &o2, &res, NULL, NULL, NULL, NULL), GFI_OK);
      CHECK(res.mse >= mo, "MSE at %g (%g) below the oracle's %g at %g", Rv[0], res.mse, mo, Ro);
    }
    CHECK_STATUS(gfi_repro_regress_ropt(d, f, &nz, &k, 2000, 100, 2.0, 2, 5, 3, 2, 7, NULL, &Ro, NULL, NULL),
                 GFI_EINVAL);
    CHECK_STATUS(gfi_repro_regress_ropt(d, f, &nz, &k, 2000, 100, 0, 2, 5, 1, 2, 7, NULL, &Ro, NULL, NULL),
                 GFI_ERADIUS);
    gfi_regfun *f1;
    gfi_regfun_parse(&f1, "poly:0,1", 1, &e);
    CHECK_STATUS(gfi_repro_regress(d, f1, &nz, &k, N, M, seed, rep, &g, NULL, mse, NULL, NULL), GFI_EDIM);
    gfi_regfun_free(f1);
    gfi_regfun_free(f);
    gfi_model_free(d);
  }
  return check_summary("reproduce");
}
