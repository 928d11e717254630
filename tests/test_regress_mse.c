/* Regression truths (values, grammar, errors), the (x, y) sampler (noise
 * level checked in standard errors), and the Monte-Carlo MSE: its
 * replications against a hand-written loop, the bias/variance identity,
 * thread-count determinism, and the variance of a flat Gaussian NW
 * (sigma^2/N) in standard errors. */
#include <string.h>
#include <gsl/gsl_errno.h>
#include "check.h"
#include "gfi/gfi.h"

int main(void) {
  gsl_set_error_handler_off();
  /* 1. truths */
  {
    gfi_regfun *f;
    gfi_errinfo e;
    double x[6] = {0.5, -1.0, 2.0, 1.5, -0.3, 0.7}, y[3];
    CHECK_STATUS(gfi_regfun_parse(&f, "poly:1,2,-0.5,0.25", 2, &e), GFI_OK);
    gfi_regfun_eval(f, 3, x, y);
    for (int i = 0; i < 3; i++) {
      double t = x[2 * i];
      CHECK_CLOSE(y[i], 1 + 2 * t - 0.5 * t * t + 0.25 * t * t * t, 1e-15, 0);
    }
    CHECK(strstr(gfi_regfun_describe(f), "poly(axis 1") != NULL, "%s", gfi_regfun_describe(f));
    gfi_regfun_free(f);
    CHECK_STATUS(gfi_regfun_parse(&f, "poly:0,1;axis=2", 2, &e), GFI_OK);
    gfi_regfun_eval(f, 3, x, y);
    CHECK(y[0] == -1.0 && y[1] == 1.5 && y[2] == 0.7, "axis 2: %g %g %g", y[0], y[1], y[2]);
    gfi_regfun_free(f);
    CHECK_STATUS(gfi_regfun_parse(&f, "polysum:1,0,1", 2, &e), GFI_OK);
    gfi_regfun_eval(f, 1, x, y);
    CHECK_CLOSE(y[0], (1 + 0.25) + (1 + 1), 1e-15, 0);
    gfi_regfun_free(f);
    CHECK_STATUS(gfi_regfun_parse(&f, "sin:2", 2, &e), GFI_OK);
    gfi_regfun_eval(f, 1, x, y);
    CHECK_CLOSE(y[0], sin(2 * (0.5 - 1.0)), 1e-15, 0);
    gfi_regfun_free(f);
    CHECK_STATUS(gfi_regfun_parse(&f, "prod-sin", 2, &e), GFI_OK);
    gfi_regfun_eval(f, 1, x, y);
    CHECK_CLOSE(y[0], sin(0.5) * sin(-1.0), 1e-15, 0);
    CHECK(gfi_regfun_dim(f) == 2, "dim");
    gfi_regfun_free(f);
    const char *bad[] = {"poly", "poly:", "poly:1,x", "poly:1;axes=1", "polysum:1;axis=1",
                         "sin:1,2", "sin:abc", "cosh", "poly:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
                         "poly:1e308,1e308", "polysum:0,1e101", "sin:-1e200"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
      f = (gfi_regfun *)1;
      int st = gfi_regfun_parse(&f, bad[i], 2, &e);
      CHECK(st == GFI_EMODEL && f == NULL && e.msg[0], "'%s' accepted (%d)", bad[i], st);
    }
    CHECK_STATUS(gfi_regfun_parse(&f, "poly:1;axis=3", 2, &e), GFI_EDIM);
    CHECK(e.column == 13, "column of the axis: %zu", e.column);
    CHECK_STATUS(gfi_regfun_parse(&f, "poly:1;axis=0", 2, &e), GFI_EDIM);
    CHECK_STATUS(gfi_regfun_parse(&f, "sin", 0, &e), GFI_EDIM);
    CHECK_STATUS(gfi_regfun_parse(NULL, "sin", 1, &e), GFI_EINVAL);
    gfi_noise n;
    CHECK_STATUS(gfi_noise_parse(&n, "hetero:0.1,0.5", &e), GFI_OK);
    CHECK_CLOSE(gfi_noise_sd(&n, x + 2), 0.1 + 0.5 * 2.0, 1e-15, 0);
    CHECK_STATUS(gfi_noise_parse(&n, NULL, &e), GFI_OK);
    CHECK(n.kind == GFI_NOISE_NONE && gfi_noise_sd(&n, x) == 0, "none");
    const char *nbad[] = {"gauss", "gauss:-1", "gauss:1,2", "hetero:1", "laplace:1", "gauss:nan"};
    for (size_t i = 0; i < sizeof nbad / sizeof *nbad; i++)
      CHECK(gfi_noise_parse(&n, nbad[i], &e) == GFI_EMODEL && e.msg[0], "noise '%s' accepted", nbad[i]);
  }

  /* 2. sampler: heteroscedastic noise level in standard errors */
  {
    const size_t N = 200000;
    gfi_model *m;
    gfi_regfun *f;
    gfi_noise n;
    gfi_model_parse(&m, "normal", 1, NULL);
    gfi_regfun_parse(&f, "sin", 1, NULL);
    gfi_noise_parse(&n, "hetero:0.2,0.5", NULL);
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *x2 = malloc(N * sizeof *x2),
           *y2 = malloc(N * sizeof *y2);
    gsl_rng *r = gfi_rng_stream(3, 0);
    CHECK_STATUS(gfi_regress_sample(m, f, &n, r, N, x, y), GFI_OK);
    gfi_rng_reset(r, 3, 0);
    gfi_regress_sample(m, f, &n, r, N, x2, y2);
    CHECK(memcmp(y, y2, N * sizeof *y) == 0, "sampler reproducible");
    /* z = (y - f(x)) / sd(x) is standard normal: mean 0, variance 1 */
    double s1 = 0, s2 = 0;
    for (size_t i = 0; i < N; i++) {
      double z = (y[i] - sin(x[i])) / (0.2 + 0.5 * fabs(x[i]));
      s1 += z;
      s2 += z * z;
    }
    double mean = s1 / N, var = s2 / N - mean * mean;
    CHECK(fabs(mean) < 4 / sqrt((double)N), "noise mean %g", mean);
    CHECK(fabs(var - 1) < 4 * sqrt(2.0 / N), "noise variance %g", var);
    gfi_model *m2;
    gfi_model_parse(&m2, "normal", 2, NULL);
    CHECK_STATUS(gfi_regress_sample(m2, f, &n, r, 10, x, y), GFI_EDIM);
    gfi_model_free(m2);
    gsl_rng_free(r);
    free(x); free(y); free(x2); free(y2);
    gfi_model_free(m);
    gfi_regfun_free(f);
  }

  /* 3. MSE: replications against a hand loop, identity, thread counts */
  {
    gfi_model *m;
    gfi_regfun *f;
    gfi_model_parse(&m, "normal:cov=1,0.5,0.5,1", 2, NULL);
    gfi_regfun_parse(&f, "poly:0,1,-0.5,0.2", 2, NULL);
    const size_t M = 40, K = 12, N = 700;
    double pts[80], R[2] = {2.0, 2.5};
    CHECK_STATUS(gfi_nw_design_points(m, 9, M, pts), GFI_OK);
    gfi_nw_study s;
    memset(&s, 0, sizeof s);
    s.design = m;
    s.truth = f;
    gfi_noise_parse(&s.noise, "gauss:0.5", NULL);
    s.N = N;
    gfi_kernel_pow(&s.kernel, 6);
    s.R = R;
    gfi_opts o;
    gfi_default_opts(&o);
    o.seed = 9;
    gfi_nw_mse_result r1, r2;
    double bias[40], var[40], mse[40], se[40], bias2[40], var2[40], mse2[40], se2[40];
    o.nthreads = 1;
    CHECK_STATUS(gfi_nw_mse(&s, M, pts, K, &o, &r1, bias, var, mse, se), GFI_OK);
    o.nthreads = 2;
    CHECK_STATUS(gfi_nw_mse(&s, M, pts, K, &o, &r2, bias2, var2, mse2, se2), GFI_OK);
    CHECK(memcmp(&r1, &r2, sizeof r1) == 0 && memcmp(mse, mse2, sizeof mse) == 0 &&
              memcmp(bias, bias2, sizeof bias) == 0,
          "MSE differs between 1 and 2 threads");
    CHECK_CLOSE(r1.mse, r1.bias2 + r1.var * (K - 1) / K, 1e-12, 0);
    /* by hand */
    double ft[40], est[12][40], x[1400], y[700];
    gfi_regfun_eval(f, M, pts, ft);
    for (size_t k = 0; k < K; k++) {
      gsl_rng *r = gfi_rng_stream(9, k);
      gfi_regress_sample(m, f, &s.noise, r, N, x, y);
      gsl_rng_free(r);
      gfi_nw_plan *p;
      gfi_nw_plan_fourier(&p, &s.kernel, N, 2, 1, x, y, R, NULL);
      gfi_nw_eval(p, M, pts, est[k], NULL);
      gfi_nw_destroy(p);
    }
    double tot = 0;
    for (size_t q = 0; q < M; q++) {
      double mn = 0, ms = 0, v = 0;
      for (size_t k = 0; k < K; k++) {
        mn += est[k][q] / K;
        ms += (est[k][q] - ft[q]) * (est[k][q] - ft[q]) / K;
      }
      for (size_t k = 0; k < K; k++) v += (est[k][q] - mn) * (est[k][q] - mn) / (K - 1);
      CHECK_CLOSE(bias[q], mn - ft[q], 1e-10, 1e-14);
      CHECK_CLOSE(mse[q], ms, 1e-10, 0);
      CHECK_CLOSE(var[q], v, 1e-10, 0);
      tot += ms / M;
    }
    CHECK_CLOSE(r1.mse, tot, 1e-10, 0);
    CHECK(r1.nflagged == 0 && r1.nreps == K && r1.M == M, "counts");
    /* errors */
    CHECK_STATUS(gfi_nw_mse(&s, 0, pts, K, &o, &r1, NULL, NULL, NULL, NULL), GFI_EEMPTY);
    CHECK_STATUS(gfi_nw_mse(&s, M, pts, 0, &o, &r1, NULL, NULL, NULL, NULL), GFI_EEMPTY);
    CHECK_STATUS(gfi_nw_mse(NULL, M, pts, K, &o, &r1, NULL, NULL, NULL, NULL), GFI_EINVAL);
    s.R = NULL;
    CHECK_STATUS(gfi_nw_mse(&s, M, pts, K, &o, &r1, NULL, NULL, NULL, NULL), GFI_EINVAL);
    double Rbad[2] = {1, -1};
    s.R = Rbad;
    CHECK_STATUS(gfi_nw_mse(&s, M, pts, K, &o, &r1, NULL, NULL, NULL, NULL), GFI_ERADIUS);
    gfi_regfun *f1;
    gfi_regfun_parse(&f1, "sin", 1, NULL);
    s.truth = f1;
    s.R = R;
    CHECK_STATUS(gfi_nw_mse(&s, M, pts, K, &o, &r1, NULL, NULL, NULL, NULL), GFI_EDIM);
    gfi_regfun_free(f1);
    gfi_model_free(m);
    gfi_regfun_free(f);
  }

  /* 4. statistics: a flat Gaussian NW (h = 1e4) on a constant truth is the
   * sample mean of the responses: variance sigma^2/N, bias 0 */
  {
    gfi_model *m;
    gfi_regfun *f;
    gfi_model_parse(&m, "normal", 1, NULL);
    gfi_regfun_parse(&f, "poly:2", 1, NULL);
    const size_t M = 3, K = 4000, N = 50;
    double pts[3] = {-1, 0, 1.5}, H = 1e8, mse[3], se[3], bias[3];
    gfi_nw_study s;
    memset(&s, 0, sizeof s);
    s.design = m;
    s.truth = f;
    gfi_noise_parse(&s.noise, "gauss:0.5", NULL);
    s.N = N;
    s.gauss = 1;
    s.H = &H;
    gfi_opts o;
    gfi_default_opts(&o);
    o.seed = 5;
    gfi_nw_mse_result res;
    CHECK_STATUS(gfi_nw_mse(&s, M, pts, K, &o, &res, bias, NULL, mse, se), GFI_OK);
    for (int q = 0; q < 3; q++) {
      CHECK(fabs(mse[q] - 0.25 / N) < 4 * se[q], "point %d: MSE %g, sigma^2/N %g, se %g", q, mse[q],
            0.25 / N, se[q]);
      CHECK(fabs(bias[q]) < 4 * sqrt(0.25 / N / K), "bias %g", bias[q]);
    }
    CHECK(fabs(res.mse - 0.25 / N) < 4 * res.mse_se, "integrated MSE %g +- %g", res.mse, res.mse_se);
    gfi_model_free(m);
    gfi_regfun_free(f);
  }
  return check_summary("regress-mse");
}
