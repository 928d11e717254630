/* The experiments layer (experiments/gfi_exp): the one table of theorems,
 * the one verdict vocabulary, the density rate fit against the exact MISE,
 * both rate studies (rows, thread independence, errors naming the option),
 * the reproduction's setting checks, and the full-H Gaussian minimiser of
 * the correlation study against its closed form. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/gfi.h"
#include "gfi_exp/correlation.h"
#include "gfi_exp/flt_study.h"
#include "gfi_exp/lemma1.h"
#include "gfi_exp/rate_checks.h"
#include "gfi_exp/reproduce.h"
#include "gfi_exp/theorems.h"
#include "check.h"

static gfi_model *model(const char *spec, size_t D) {
  gfi_model *m;
  gfi_errinfo e;
  if (gfi_model_parse(&m, spec, D, &e)) abort();
  return m;
}

static void test_table(void) {
  const char *names[] = {"1", "2", "3a", "3b", "4"};
  const int regression[] = {0, 1, 0, 0, 1}, ldef[] = {4, 6, 1, 2, 1};
  for (int i = 0; i < GFI_EXP_NTHEOREMS; i++) {
    const gfi_exp_theorem *T = gfi_exp_theorem_get((gfi_exp_theorem_id)i);
    CHECK(T && (int)T->id == i, "theorem %d missing", i);
    if (!T) continue;
    CHECK(strcmp(T->name, names[i]) == 0, "theorem %d is named %s", i, T->name);
    CHECK(gfi_exp_theorem_find(names[i]) == T, "find(%s)", names[i]);
    CHECK(T->regression == regression[i] && T->l_default == ldef[i], "theorem %s: regression %d, l %d", T->name,
          T->regression, T->l_default);
    CHECK(T->l_min <= T->l_default && T->l_default <= T->l_max, "theorem %s: l range", T->name);
    CHECK(T->estimator && T->condition && T->R_choice && T->claimed && T->classical, "theorem %s: empty text",
          T->name);
  }
  CHECK(gfi_exp_theorem_get(GFI_EXP_NTHEOREMS) == NULL && gfi_exp_theorem_find("5") == NULL &&
        gfi_exp_theorem_find(NULL) == NULL, "unknown theorems");
}

/* Claimed exponents: exact for power rates, and the least-squares slope of
 * the claim itself for the logarithmic ones. */
static void test_claims(void) {
  double N[6], s, sR;
  for (int i = 0; i < 6; i++) N[i] = 500.0 * pow(2.0, i);
  for (size_t D = 1; D <= 3; D++) {
    CHECK_STATUS(gfi_exp_claimed_slope(GFI_EXP_THM_2, GFI_SUPERSMOOTH, 2, D, 0, 6, N, &s, &sR), GFI_OK);
    CHECK(s == -4.0 / (D + 4.0) && sR == 1.0 / (D + 4.0), "Thm 2 exponents, D = %zu: %g %g", D, s, sR);
    CHECK_STATUS(gfi_exp_claimed_slope(GFI_EXP_THM_1, GFI_SUPERSMOOTH, 2, D, 0, 6, N, &s, &sR), GFI_OK);
    CHECK(s == -2.0 / (D + 2.0) && sR == 1.0 / (D + 2.0), "Thm 1 exponents, D = %zu", D);
  }
  /* Theorem 4, alpha = 2, D = 1: slope of 0.5 log log N - log N by a plain
   * least-squares sum */
  CHECK_STATUS(gfi_exp_claimed_slope(GFI_EXP_THM_4, GFI_SUPERSMOOTH, 2, 1, 0, 6, N, &s, NULL), GFI_OK);
  double mx = 0, my = 0, sxy = 0, sxx = 0;
  for (int i = 0; i < 6; i++) mx += log(N[i]) / 6, my += (0.5 * log(log(N[i])) - log(N[i])) / 6;
  for (int i = 0; i < 6; i++) {
    double dx = log(N[i]) - mx;
    sxy += dx * (0.5 * log(log(N[i])) - log(N[i]) - my);
    sxx += dx * dx;
  }
  CHECK_CLOSE(s, sxy / sxx, 1e-12, 0);
  CHECK(s > -1 && s < -0.9, "Thm 4 local slope %g", s);
  double lr, lR;
  CHECK_STATUS(gfi_exp_rate_claim(GFI_EXP_THM_3A, GFI_ORDINARY_SMOOTH, 1, 1, 100, &lr, &lR), GFI_EINVAL);
  CHECK_STATUS(gfi_exp_rate_claim(GFI_EXP_THM_4, GFI_ORDINARY_SMOOTH, 2, 1, 100, &lr, &lR), GFI_EINVAL);
  CHECK_STATUS(gfi_exp_rate_claim(GFI_EXP_THM_1, GFI_SUPERSMOOTH, 2, 1, 1, &lr, &lR), GFI_EINVAL);
  CHECK_CLOSE(gfi_exp_rate_classical(KPOW(4), GFI_SUPERSMOOTH, 2, 1), -0.8, 1e-15, 0);
  CHECK_CLOSE(gfi_exp_rate_classical(KPOW(1), GFI_ORDINARY_SMOOTH, 2, 1), -0.75, 1e-15, 0);
  CHECK_CLOSE(gfi_exp_rate_classical(NULL, GFI_SUPERSMOOTH, 2, 2), -2.0 / 3, 1e-15, 0);
  CHECK(gfi_exp_rate_classical(KPOW(1), GFI_SUPERSMOOTH, 2, 1) == -1, "sinc kernel: -1 up to the logarithm");
}

/* The verdict rules, against the two rules they replace: the density
 * checks' (with slack) and the regression checks' (slack 0). */
static void test_verdicts(void) {
  const char *want[] = {"consistent", "faster-than-claimed", "slower-than-claimed", "baseline", "not-measured"};
  for (int v = 0; v <= GFI_EXP_NOT_MEASURED; v++)
    CHECK(strcmp(gfi_exp_verdict_name((gfi_exp_verdict)v), want[v]) == 0, "verdict %d", v);
  CHECK(gfi_exp_verdict_name((gfi_exp_verdict)99) == NULL, "unknown verdict");
  CHECK(gfi_exp_verdict_consistent(GFI_EXP_FASTER) && !gfi_exp_verdict_consistent(GFI_EXP_SLOWER), "consistency");
  CHECK(gfi_exp_verdict_of(NAN, 0, -1, 0) == GFI_EXP_NOT_MEASURED, "NaN interval");
  gsl_rng *g = gfi_rng_stream(7, 0);
  int agree = 1;
  for (int i = 0; i < 20000; i++) {
    double c = -1 + gsl_rng_uniform(g), lo = c - 0.3 + 0.6 * gsl_rng_uniform(g), hi = lo + 0.3 * gsl_rng_uniform(g);
    double slack = i % 2 ? 0.02 : 0;
    gfi_exp_verdict v = gfi_exp_verdict_of(lo, hi, c, slack);
    gfi_exp_verdict dens = hi < c - slack ? GFI_EXP_FASTER : lo <= c + slack ? GFI_EXP_CONSISTENT : GFI_EXP_SLOWER;
    agree &= v == dens;
    if (slack == 0) {
      gfi_exp_verdict reg = lo > c ? GFI_EXP_SLOWER : hi < c ? GFI_EXP_FASTER : GFI_EXP_CONSISTENT;
      agree &= v == reg;
    }
  }
  gsl_rng_free(g);
  CHECK(agree, "verdicts disagree with the rules they replace");
}

/* The density fit on the exact MISE* of a normal truth (moved from
 * test_mise.c's rate test). */
static void test_density_fit(void) {
  gfi_model *m = model("normal", 1), *lap = model("laplace", 1);
  double N[7], Ro[7], mi[7];
  for (int i = 0; i < 7; i++) {
    gfi_mise_result r;
    N[i] = pow(10.0, 3 + i);
    CHECK_STATUS(gfi_ropt(m, KPOW(2), N[i], NULL, NULL, Ro + i, &r), GFI_OK);
    mi[i] = r.mise;
  }
  gfi_exp_rate_fit c;
  CHECK_STATUS(gfi_exp_density_rate_fit(GFI_EXP_THM_3B, m, KPOW(2), 7, N, Ro, mi, NULL, 3, 0.02, &c), GFI_OK);
  CHECK(c.condition_met == 1 && strcmp(c.condition, "met") == 0, "3b has no C^2 hypothesis");
  gfi_exp_rate_fit c1;
  CHECK_STATUS(gfi_exp_density_rate_fit(GFI_EXP_THM_1, lap, KPOW(4), 7, N, Ro, mi, NULL, 3, 0.02, &c1), GFI_OK);
  CHECK(c1.condition_met == 0 && strcmp(c1.condition, "not-C2") == 0, "Thm 1 on Laplace flagged");
  CHECK_CLOSE(c.fit.slope, -2.0 / 3, 0.01, 0);
  CHECK_CLOSE(c.fit_R.slope, 1.0 / 3, 0.01, 0);
  CHECK_CLOSE(c.claimed, -2.0 / 3, 1e-12, 0);
  CHECK(gfi_exp_verdict_consistent(c.verdict), "verdict %s", gfi_exp_verdict_name(c.verdict));
  CHECK_STATUS(gfi_exp_density_rate_fit(GFI_EXP_THM_2, m, KPOW(6), 7, N, Ro, mi, NULL, 3, 0.02, &c), GFI_EINVAL);
  CHECK_STATUS(gfi_exp_density_rate_fit(GFI_EXP_THM_3B, m, KPOW(2), 2, N, Ro, mi, NULL, 3, 0.02, &c), GFI_EEMPTY);
  gfi_model_free(m);
  gfi_model_free(lap);
}

static int same_rows(const gfi_exp_rate_row *a, const gfi_exp_rate_row *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const double x[] = {a[i].claimed, a[i].observed, a[i].lo95, a[i].hi95, a[i].chi2_dof, a[i].flagged_frac};
    const double y[] = {b[i].claimed, b[i].observed, b[i].lo95, b[i].hi95, b[i].chi2_dof, b[i].flagged_frac};
    if (memcmp(x, y, sizeof x) || a[i].verdict != b[i].verdict || strcmp(a[i].name, b[i].name)) return 0;
  }
  return 1;
}

/* Every theorem's hypotheses, one by one: the condition names what fails. */
static void test_hypotheses(void) {
  for (int i = 0; i < GFI_EXP_NTHEOREMS; i++) {
    const gfi_exp_theorem *T = gfi_exp_theorem_get((gfi_exp_theorem_id)i);
    CHECK(T->nhyp >= 2 && T->nhyp <= GFI_EXP_MAXHYP, "theorem %s: %zu hypotheses", T->name, T->nhyp);
    for (size_t h = 0; h < T->nhyp; h++)
      CHECK(T->hyp[h].on && T->hyp[h].text && T->hyp[h].fails && strcmp(T->hyp[h].fails, "met") != 0,
            "theorem %s hypothesis %zu", T->name, h);
  }
  /* sinc^l: one vanishing moment from l = 3 on, |z|^k integrable for k <= l - 2 */
  CHECK(gfi_exp_kernel_vanishing_moments(KPOW(2)) == 0 && gfi_exp_kernel_vanishing_moments(KPOW(3)) == 1 &&
            gfi_exp_kernel_vanishing_moments(KPOW(8)) == 1,
        "vanishing moments");
  CHECK(gfi_exp_kernel_finite_moment(KPOW(1)) == -1 && gfi_exp_kernel_finite_moment(KPOW(4)) == 2, "finite moments");
  /* a polynomial phi: its tails are those of its lowest power, its order at 0
   * the least of its powers'; phi = z written as a polynomial is phi = z */
  {
    gfi_kernel p24, p46, p1, p12, ft;
    const double a24[] = {0, 0, 1, 0, 0.5}, a46[] = {0, 0, 0, 0, 2, 0, 1}, a1[] = {0, 3}, a12[] = {0, 1, 1};
    CHECK_STATUS(gfi_kernel_poly(&p24, 4, a24), GFI_OK);
    CHECK_STATUS(gfi_kernel_poly(&p46, 6, a46), GFI_OK);
    CHECK_STATUS(gfi_kernel_poly(&p1, 1, a1), GFI_OK);
    CHECK_STATUS(gfi_kernel_poly(&p12, 2, a12), GFI_OK);
    CHECK_STATUS(gfi_kernel_flattop(&ft, 0.5), GFI_OK);
    CHECK(gfi_exp_kernel_vanishing_moments(&p24) == 0 && gfi_exp_kernel_finite_moment(&p24) == 0 &&
              gfi_exp_kernel_vanishing_moments(&p46) == 1 && gfi_exp_kernel_finite_moment(&p46) == 2,
          "polynomial moments");
    CHECK(gfi_exp_kernel_vanishing_moments(&ft) == -1 && gfi_exp_kernel_finite_moment(NULL) == -1,
          "not a sinc family");
    CHECK_CLOSE(gfi_exp_rate_classical(&p24, GFI_SUPERSMOOTH, 2, 1), gfi_exp_rate_classical(KPOW(2), GFI_SUPERSMOOTH, 2, 1),
                0, 0);
    CHECK_CLOSE(gfi_exp_rate_classical(&p46, GFI_SUPERSMOOTH, 2, 1), -0.8, 1e-15, 0);
    CHECK(gfi_exp_rate_classical(&p1, GFI_SUPERSMOOTH, 2, 1) == -1 &&
              gfi_exp_rate_classical(&p12, GFI_SUPERSMOOTH, 2, 1) == gfi_exp_rate_classical(KPOW(2), GFI_SUPERSMOOTH, 2, 1),
          "phi = 3 z is of infinite order, z + z^2 of order 1");
    CHECK(isnan(gfi_exp_rate_classical(&ft, GFI_SUPERSMOOTH, 2, 1)), "flat-top: no classical exponent here");
    struct {
      gfi_exp_theorem_id th;
      const gfi_kernel *k;
      const char *want;
    } pc[] = {{GFI_EXP_THM_1, &p46, "met"}, {GFI_EXP_THM_1, &p24, "l<4"}, {GFI_EXP_THM_3A, &p1, "met"},
              {GFI_EXP_THM_3A, &p12, "l!=1"}, {GFI_EXP_THM_3B, &p12, "l!=2"}};
    gfi_model *m = model("normal", 1);
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
      char buf[48];
      CHECK_STATUS(gfi_exp_density_condition(pc[i].th, m, pc[i].k, buf, sizeof buf, NULL), GFI_OK);
      CHECK(strcmp(buf, pc[i].want) == 0, "polynomial case %zu: %s (want %s)", i, buf, pc[i].want);
    }
    char buf[48];
    CHECK_STATUS(gfi_exp_density_condition(GFI_EXP_THM_1, m, &ft, buf, sizeof buf, NULL), GFI_EUNSUPPORTED);
    gfi_model_free(m);
  }
  struct {
    gfi_exp_theorem_id th;
    const char *spec;
    size_t D;
    int l;
    const char *want;
  } cases[] = {
    {GFI_EXP_THM_1, "normal", 1, 4, "met"},        {GFI_EXP_THM_1, "normal", 2, 8, "met"},
    {GFI_EXP_THM_1, "normal", 1, 3, "l<4"},        {GFI_EXP_THM_1, "laplace", 1, 4, "not-C2"},
    {GFI_EXP_THM_1, "laplace", 2, 3, "l<4,not-C2"}, {GFI_EXP_THM_1, "cauchy", 1, 6, "met"},
    {GFI_EXP_THM_3A, "laplace", 1, 1, "met"},      {GFI_EXP_THM_3A, "cauchy", 2, 1, "met"},
    {GFI_EXP_THM_3A, "normal", 1, 2, "l!=1"},      {GFI_EXP_THM_3B, "laplace", 1, 2, "beta<=3"},
    {GFI_EXP_THM_3B, "laplace", 3, 2, "beta<=3"},  {GFI_EXP_THM_3B, "normal", 2, 2, "met"},
    {GFI_EXP_THM_3B, "uniform", 1, 2, "not-smooth-class"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    gfi_model *m = model(cases[i].spec, cases[i].D);
    char buf[48];
    int met = -1;
    CHECK_STATUS(gfi_exp_density_condition(cases[i].th, m, KPOW(cases[i].l), buf, sizeof buf, &met), GFI_OK);
    CHECK(strcmp(buf, cases[i].want) == 0 && met == (strcmp(cases[i].want, "met") == 0),
          "theorem %s, %s D=%zu l=%d: %s (want %s)", gfi_exp_theorem_get(cases[i].th)->name, cases[i].spec,
          cases[i].D, cases[i].l, buf, cases[i].want);
    gfi_model_free(m);
  }
  gfi_model *m = model("normal", 1);
  char buf[48];
  CHECK_STATUS(gfi_exp_density_condition(GFI_EXP_THM_2, m, KPOW(6), buf, sizeof buf, NULL), GFI_EINVAL);
  gfi_model_free(m);
}

/* Lemma 1: the quadrature mean agrees with the Monte-Carlo mean, the
 * empirical tail never exceeds Bernstein's bound (beyond 3 s.e.), the
 * frequency at t(delta) is at most delta, the same for any thread count */
static void test_lemma1(void) {
  gfi_exp_lemma1_params p;
  gfi_exp_lemma1_default(&p);
  p.reps = 3000;
  p.N = 200;
  gfi_exp_lemma1_point a[2], b[2];
  gfi_exp_ctx c1 = {.program = "test", .nthreads = 1}, c2 = {.program = "test", .nthreads = 2};
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  CHECK_STATUS(gfi_exp_lemma1(&p, &c1, NULL, a, &e), GFI_OK);
  CHECK_STATUS(gfi_exp_lemma1(&p, &c2, NULL, b, &e), GFI_OK);
  for (int i = 0; i < 2; i++) {
    CHECK(fabs(a[i].mean_z) < 4, "x = %g: MC mean %g vs quadrature %g, z = %g", a[i].x, a[i].mean_mc,
          a[i].mean_exact, a[i].mean_z);
    /* the Monte-Carlo sd of p_hat against sigma / sqrt(N): within 4 s.e. of an sd (sd / sqrt(2 K)) */
    double sd = sqrt(a[i].sigma2 / (double)p.N);
    CHECK(fabs(a[i].sd_mc - sd) < 4 * sd / sqrt(2.0 * (double)p.reps), "x = %g: sd %g vs %g", a[i].x, a[i].sd_mc, sd);
    CHECK(a[i].sigma2 <= a[i].sigma2_sup, "the sup-norm variance bound holds");
    CHECK(a[i].violations == 0, "x = %g: %zu grid points above the bound", a[i].x, a[i].violations);
    for (int d = 0; d < 4; d++)
      CHECK(a[i].freq[d] <= a[i].delta[d] + 3 * sqrt(a[i].delta[d] / (double)p.reps), "x = %g delta %g: %g",
            a[i].x, a[i].delta[d], a[i].freq[d]);
    CHECK(memcmp(&a[i], &b[i], sizeof a[i]) == 0, "lemma 1 depends on the thread count");
  }
  p.l = 9;
  CHECK_STATUS(gfi_exp_lemma1(&p, &c1, NULL, NULL, &e), GFI_EINVAL);
  CHECK(strcmp(e.param, "--l") == 0, "bad l: %s", e.param);
  p.l = 4;
  p.model = "nonsense";
  CHECK(gfi_exp_lemma1(&p, &c1, NULL, NULL, &e) != GFI_OK && strcmp(e.param, "--model") == 0, "bad model");
}

static void test_regress_study(void) {
  gfi_exp_rrates_params p;
  gfi_exp_rrates_default(&p);
  p.size = "small";
  p.reps = 6;
  p.points = 30;
  p.rows = "thm2-1d,thm4-1d-all,gauss-1d";
  gfi_exp_ctx c1 = {.program = "test", .nthreads = 1}, c2 = {.program = "test", .nthreads = 2};
  gfi_exp_rate_row *r1 = NULL, *r2 = NULL;
  size_t n1 = 0, n2 = 0;
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  CHECK_STATUS(gfi_exp_regress_rates(&p, &c1, NULL, &r1, &n1, &e), GFI_OK);
  CHECK_STATUS(gfi_exp_regress_rates(&p, &c2, NULL, &r2, &n2, &e), GFI_OK);
  CHECK(n1 == 3 && n2 == 3, "rows %zu %zu", n1, n2);
  if (n1 == 3 && n2 == 3) {
    CHECK(same_rows(r1, r2, 3), "regression rate rows depend on the thread count");
    CHECK(r1[0].th == gfi_exp_theorem_get(GFI_EXP_THM_2) && r1[0].claimed == -0.8, "thm2-1d claims -4/5");
    CHECK(r1[0].verdict <= GFI_EXP_SLOWER && strcmp(r1[0].condition, "met") == 0, "thm2-1d verdict %s",
          gfi_exp_verdict_name(r1[0].verdict));
    CHECK(strcmp(r1[1].condition, "p-not-bounded-below") == 0, "thm4-1d-all is outside Theorem 4's setting");
    CHECK(r1[2].th == NULL && r1[2].verdict == GFI_EXP_BASELINE && r1[2].classical == -0.8, "gauss-1d baseline");
    CHECK(isfinite(r1[0].observed) && r1[0].lo95 < r1[0].observed && r1[0].observed < r1[0].hi95, "interval");
    /* integrated rows: every point field NaN (gfi_exp_rate_row) */
    for (size_t i = 0; i < 3; i++)
      CHECK(isnan(r1[i].point_x[0]) && isnan(r1[i].point_p) && isnan(r1[i].point_C) && isnan(r1[i].point_gamma),
            "%s: point fields x %g p %g C %g gamma %g", r1[i].name, r1[i].point_x[0], r1[i].point_p, r1[i].point_C,
            r1[i].point_gamma);
  }
  gfi_exp_rate_rows_free(r1);
  gfi_exp_rate_rows_free(r2);
  gfi_exp_rate_rows_free(NULL);
  p.rows = "thm2-1d,thm9";
  CHECK_STATUS(gfi_exp_regress_rates(&p, &c1, NULL, NULL, NULL, &e), GFI_EINVAL);
  CHECK(strcmp(e.param, "--rows") == 0 && strstr(e.msg, "thm9"), "unknown row: %s %s", e.param, e.msg);
  /* Theorem 2 pointwise: a defined row at three fixed points, one rate row
   * per point with the design density there; the same rows for any thread
   * count; the constant grows with 1/p(x) no faster than the bound's 1/p^2 */
  const char *defs[] = {"pt:thm=2;at=0/1/2", "g2:thm=4;dim=2;truth=polysum:0,1;box=2"};
  p.rows = NULL;
  p.defines = defs;
  p.ndefines = 1;
  p.reps = 10;
  CHECK_STATUS(gfi_exp_regress_rates(&p, &c1, NULL, &r1, &n1, &e), GFI_OK);
  CHECK_STATUS(gfi_exp_regress_rates(&p, &c2, NULL, &r2, &n2, &e), GFI_OK);
  CHECK(n1 == 3 && n2 == 3, "pointwise rows %zu %zu", n1, n2);
  if (n1 == 3 && n2 == 3) {
    CHECK(same_rows(r1, r2, 3), "pointwise rows depend on the thread count");
    CHECK(strcmp(r1[0].name, "pt@0") == 0 && strcmp(r1[2].name, "pt@2") == 0, "names %s %s", r1[0].name,
          r1[2].name);
    for (size_t i = 0; i < 3; i++) {
      double xi = (double)i, pn = exp(-xi * xi / 2) / 2.5066282746310002;
      CHECK_CLOSE(r1[i].point_p, pn, 1e-12, 0);
      CHECK(r1[i].point_x[0] == xi && r1[i].point_C > 0, "point %zu: x %g C %g", i, r1[i].point_x[0], r1[i].point_C);
      CHECK(gfi_exp_verdict_consistent(r1[i].verdict), "pt@%zu: %s (observed %.3f [%.3f, %.3f])", i,
            gfi_exp_verdict_name(r1[i].verdict), r1[i].observed, r1[i].lo95, r1[i].hi95);
    }
    CHECK(r1[2].point_C > r1[0].point_C, "the tail's constant exceeds the centre's");
    CHECK(r1[0].point_gamma > 0 && r1[0].point_gamma < 2, "gamma %g", r1[0].point_gamma);
  }
  free(r1);
  free(r2);
  /* Theorem 4 in D = 2 as a defined row: the claimed exponent is the slope of
   * log(log N / N), between -1 and -0.8 over these sizes */
  p.defines = defs + 1;
  p.reps = 6;
  CHECK_STATUS(gfi_exp_regress_rates(&p, &c2, NULL, &r1, &n1, &e), GFI_OK);
  CHECK(n1 == 1 && r1 && r1[0].D == 2 && r1[0].claimed > -1 && r1[0].claimed < -0.8 &&
          strcmp(r1[0].condition, "met") == 0,
        "thm4 D = 2: %zu rows, claimed %g", n1, n1 ? r1[0].claimed : NAN);
  free(r1);
  const char *bad[] = {"nocolon", "x:l=6", "x:thm=4;design=laplace", "x:thm=2;at=0,1", "x:thm=2;foo=1",
                       "thm2-1d:thm=2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    p.defines = bad + i;
    gfi_exp_err_clear(&e);
    CHECK_STATUS(gfi_exp_regress_rates(&p, &c1, NULL, NULL, NULL, &e), GFI_EINVAL);
    CHECK(strcmp(e.param, "--define") == 0 && e.msg[0], "%s: param '%s' msg '%s'", bad[i], e.param, e.msg);
  }
  p.defines = NULL;
  p.ndefines = 0;
  p.size = "huge";
  CHECK_STATUS(gfi_exp_regress_rates(&p, &c1, NULL, NULL, NULL, &e), GFI_EINVAL);
  CHECK(strcmp(e.param, "--size") == 0, "bad size: %s", e.param);
}

static void test_density_study(void) {
  gfi_exp_drates_params p;
  gfi_exp_drates_default(&p);
  p.theorems[0] = GFI_EXP_THM_3B, p.theorems[1] = GFI_EXP_THM_1, p.ntheorems = 2;
  p.models[0] = "normal", p.models[1] = "laplace", p.nmodels = 2;
  p.nmax = 1e5;
  p.mc_reps = 0;
  gfi_exp_ctx ctx = {.program = "test"};
  gfi_exp_rate_row *rows = NULL;
  size_t n = 0;
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  CHECK_STATUS(gfi_exp_density_rates(&p, &ctx, NULL, &rows, &n, &e), GFI_OK);
  CHECK(n == 5, "rows: %zu (2 theorems x 2 truths and a Gaussian-KDE row)", n);
  if (n == 5) {
    CHECK(strcmp(rows[0].name, "3b") == 0 && strcmp(rows[0].setting, "normal") == 0 && rows[0].l == 2, "row 1");
    for (size_t i = 0; i < 4; i++)
      CHECK(gfi_exp_verdict_consistent(rows[i].verdict) && rows[i].verdict != GFI_EXP_NOT_MEASURED,
            "row %zu: %s", i, gfi_exp_verdict_name(rows[i].verdict));
    CHECK(strcmp(rows[3].condition, "not-C2") == 0 && strcmp(rows[2].condition, "met") == 0, "Thm 1 conditions");
    CHECK(rows[4].verdict == GFI_EXP_BASELINE && isnan(rows[4].claimed) && rows[4].classical == -0.8,
          "Gaussian-KDE baseline");
  }
  free(rows);
  p.D = 4;
  CHECK_STATUS(gfi_exp_density_rates(&p, &ctx, NULL, NULL, NULL, &e), GFI_EINVAL);
  CHECK(strcmp(e.param, "--dim") == 0, "--dim 4: %s", e.param);
  p.D = 1;
  p.models[0] = "uniform";
  CHECK(gfi_exp_density_rates(&p, &ctx, NULL, NULL, NULL, &e) != GFI_OK && strcmp(e.param, "--model") == 0,
        "uniform truth: %s %s", e.param, e.msg);
  p.models[0] = "normal";
  p.theorems[0] = GFI_EXP_THM_2;
  CHECK(gfi_exp_density_rates(&p, &ctx, NULL, NULL, NULL, &e) == GFI_EINVAL && strcmp(e.param, "--theorems") == 0,
        "Theorem 2 is not a density theorem");
}

/* Theorem 1 with kernels given by their text (--phi1): pow:4 written so is
 * the default row to the bit; a polynomial is judged by its powers (lowest
 * power 4: met; a z term: l<4) and measured; other kernels and bad text are
 * refused naming --phi1. */
static void test_density_phi1(void) {
  gfi_exp_drates_params p;
  gfi_exp_drates_default(&p);
  p.theorems[0] = GFI_EXP_THM_1, p.ntheorems = 1;
  p.models[0] = "laplace", p.nmodels = 1; /* no Gaussian-KDE row */
  p.nmax = 1e4;
  p.mc_reps = 0;
  p.phi1[0] = "pow:4", p.phi1[1] = "poly:0,0,0,1,0,0.5", p.phi1[2] = "poly:0.2,0,0,1", p.nphi1 = 3;
  gfi_exp_ctx ctx = {.program = "test"};
  gfi_exp_rate_row *rows = NULL;
  size_t n = 0;
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  CHECK_STATUS(gfi_exp_density_rates(&p, &ctx, NULL, &rows, &n, &e), GFI_OK);
  CHECK(n == 4, "rows: %zu (l = 4 and three --phi1 kernels)", n);
  if (n == 4) {
    CHECK(strcmp(rows[0].name, "1") == 0 && strcmp(rows[1].name, "1p1") == 0 && strcmp(rows[2].name, "1p2") == 0 &&
              strcmp(rows[3].name, "1p3") == 0,
          "names %s %s %s %s", rows[0].name, rows[1].name, rows[2].name, rows[3].name);
    CHECK(rows[1].observed == rows[0].observed && rows[1].observed_R == rows[0].observed_R &&
              rows[1].lo95 == rows[0].lo95 && strcmp(rows[1].condition, rows[0].condition) == 0,
          "pow:4 as --phi1 is the l = 4 row");
    CHECK(strcmp(rows[2].condition, "not-C2") == 0 && rows[2].l == 6, "powers 4 and 6: %s (l %d)",
          rows[2].condition, rows[2].l);
    CHECK(strcmp(rows[3].condition, "l<4,not-C2") == 0, "a z term: %s", rows[3].condition);
    for (size_t i = 0; i < 4; i++)
      CHECK(isfinite(rows[i].observed) && rows[i].observed < 0 && rows[i].verdict != GFI_EXP_NOT_MEASURED,
            "row %zu measured: %g", i, rows[i].observed);
    /* Laplace (beta = 2): 2s = min(2q, 3) = 3 for q = 2, the order of z^4, of z^4 + z^6 and of z + z^4 */
    CHECK(rows[2].classical == -0.75 && rows[3].classical == -0.75 && rows[0].classical == -0.75,
          "classical %g %g %g", rows[0].classical, rows[2].classical, rows[3].classical);
  }
  free(rows);
  p.phi1[1] = "flattop:0.5";
  CHECK(gfi_exp_density_rates(&p, &ctx, NULL, NULL, NULL, &e) == GFI_EUNSUPPORTED && strcmp(e.param, "--phi1") == 0,
        "flat-top: %s %s", e.param, e.msg);
  p.phi1[1] = "poly:x";
  CHECK(gfi_exp_density_rates(&p, &ctx, NULL, NULL, NULL, &e) == GFI_EINVAL && strcmp(e.param, "--phi1") == 0,
        "bad text: %s %s", e.param, e.msg);
}

static void test_repro_check(void) {
  gfi_exp_repro_params p;
  gfi_exp_repro_default(&p);
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  CHECK_STATUS(gfi_exp_repro_check(&p, &e), GFI_OK);
  p.model_1d = "uniform";
  CHECK(gfi_exp_repro_check(&p, &e) == GFI_EUNSUPPORTED && strcmp(e.param, "--model-1d") == 0, "uniform: %s",
        e.param);
  p.model_1d = "normal";
  p.truth = "poly:";
  CHECK(gfi_exp_repro_check(&p, &e) != GFI_OK && strcmp(e.param, "--truth") == 0, "bad truth: %s", e.param);
  p.truth = "poly:0,1";
  p.out = "a b";
  CHECK(gfi_exp_repro_check(&p, &e) == GFI_EINVAL && strcmp(e.param, "--out") == 0, "out with a space");
  p.out = "x";
  p.seeds = 1;
  CHECK(gfi_exp_repro_check(&p, &e) == GFI_EINVAL && strcmp(e.param, "--seeds") == 0, "one seed");
  p.seeds = 0;
  p.flt = "maybe";
  CHECK(gfi_exp_repro_check(&p, &e) == GFI_EINVAL && strcmp(e.param, "--flt") == 0, "--flt maybe");
  /* the FLT study reports an output folder it cannot make */
  gfi_exp_flt_params fp;
  gfi_exp_flt_default(&fp);
  fp.outdir = "/nonexistent/gfi-test/flt";
  gfi_exp_ctx ctx = {.program = "test"};
  CHECK(gfi_exp_flt_study(&fp, &ctx, &e) == GFI_EIO && strstr(e.msg, "cannot create"), "flt: %s", e.msg);
}

/* The full-H Gaussian optimum for a normal truth N(0, S) is h0^2 S with h0
 * the isotropic optimum for N(0, I) (affine equivariance), and the MISE
 * there is MISE0 / sqrt(det S): the Nelder-Mead minimiser must find both. */
static void test_correlation(void) {
  struct {
    const char *spec;
    size_t D;
    double S[9];
  } cases[] = {
    {"normal:cov=1,0.9,0.9,1", 2, {1, 0.9, 0.9, 1}},
    {"normal:cov=1,-0.99,-0.99,1", 2, {1, -0.99, -0.99, 1}},
    {"normal:cov=2,0.5,0.1,0.5,1,0.3,0.1,0.3,0.5", 3, {2, 0.5, 0.1, 0.5, 1, 0.3, 0.1, 0.3, 0.5}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t D = cases[c].D;
    double N = 1e4, h0, H[9], mise, det;
    gfi_mise_result r0;
    gfi_model *I = model("normal", D), *m = model(cases[c].spec, D);
    CHECK_STATUS(gfi_mise_gauss_hopt(I, N, &h0, &r0), GFI_OK);
    CHECK_STATUS(gfi_exp_gauss_full_hopt(m, N, NULL, H, &mise), GFI_OK);
    const double *S = cases[c].S;
    det = D == 2 ? S[0] * S[3] - S[1] * S[2]
                 : S[0] * (S[4] * S[8] - S[5] * S[7]) - S[1] * (S[3] * S[8] - S[5] * S[6]) +
                       S[2] * (S[3] * S[7] - S[4] * S[6]);
    double want = r0.mise / sqrt(det);
    CHECK(fabs(mise / want - 1) < 1e-7, "%s: full-H MISE %.12g, closed form %.12g", cases[c].spec, mise, want);
    double err = 0;
    for (size_t q = 0; q < D * D; q++) err = fmax(err, fabs(H[q] - h0 * h0 * S[q]) / (h0 * h0));
    CHECK(err < 1e-3, "%s: H* off h0^2 S by %.3g (relative to h0^2)", cases[c].spec, err);
    gfi_model_free(I);
    gfi_model_free(m);
  }
  /* a mixture (no closed form): the optimum beats the isotropic one and no
   * nearby H does better */
  gfi_model *m = model("mix:0.4*normal:mean=-1.5,0|0.6*normal:mean=1.5,0.5;cov=1,0.6,0.6,1", 2);
  double H[4], mise, h;
  gfi_mise_result ri, rp;
  CHECK_STATUS(gfi_mise_gauss_hopt(m, 3000, &h, &ri), GFI_OK);
  CHECK_STATUS(gfi_exp_gauss_full_hopt(m, 3000, NULL, H, &mise), GFI_OK);
  CHECK(mise < ri.mise, "mixture: full H %.10g not below isotropic %.10g", mise, ri.mise);
  for (int k = 0; k < 6; k++) {
    double P[4] = {H[0], H[1], H[2], H[3]}, d = (k & 1 ? 1 : -1) * 1e-3;
    if (k / 2 == 0) P[0] *= 1 + d;
    else if (k / 2 == 1) P[3] *= 1 + d;
    else P[1] = P[2] = H[1] + d * sqrt(H[0] * H[3]);
    CHECK_STATUS(gfi_mise_gauss_exact(m, 3000, P, &rp), GFI_OK);
    CHECK(rp.mise >= mise * (1 - 1e-12), "mixture: perturbation %d lowers the MISE (%.12g < %.12g)", k, rp.mise,
          mise);
  }
  gfi_model_free(m);
  m = model("laplace", 2);
  CHECK_STATUS(gfi_exp_gauss_full_hopt(m, 100, NULL, H, &mise), GFI_EUNSUPPORTED);
  gfi_model_free(m);

  /* the study: one row, its Fourier MISE the exact MISE at R*, the Gaussian ones ordered */
  gfi_exp_corr_params P;
  gfi_exp_corr_default(&P);
  P.rho[0] = 0.5, P.nrho = 1, P.N[0] = 1000, P.nN = 1;
  gfi_exp_ctx ctx = {.program = "test", .nthreads = 1};
  gfi_exp_err e;
  gfi_exp_corr_row *rows = NULL;
  size_t n = 0;
  CHECK_STATUS(gfi_exp_correlation(&P, &ctx, NULL, &rows, &n, &e), GFI_OK);
  CHECK(n == 1 && rows, "%zu rows", n);
  if (n == 1) {
    gfi_model *c = model("normal:cov=1,0.5,0.5,1", 2);
    double R2[2] = {rows[0].R, rows[0].R};
    gfi_mise_result rf;
    CHECK_STATUS(gfi_mise_exact(c, KPOW(4), 1000, R2, NULL, &rf), GFI_OK);
    CHECK(fabs(rf.mise / rows[0].mise_fourier - 1) < 1e-12, "Fourier MISE %.12g, exact at R* %.12g",
          rows[0].mise_fourier, rf.mise);
    CHECK(rows[0].mise_full < rows[0].mise_iso, "full H %.6g, isotropic %.6g", rows[0].mise_full, rows[0].mise_iso);
    gfi_model_free(c);
  }
  free(rows);
  P.rho[0] = 1;
  gfi_exp_err_clear(&e);
  CHECK_STATUS(gfi_exp_correlation(&P, &ctx, NULL, &rows, &n, &e), GFI_EINVAL);
  CHECK(strcmp(e.param, "--rho") == 0 && rows == NULL, "rho = 1: param '%s'", e.param);
}

int main(void) {
  test_table();
  test_claims();
  test_verdicts();
  test_density_fit();
  test_hypotheses();
  test_regress_study();
  test_lemma1();
  test_density_study();
  test_density_phi1();
  test_repro_check();
  test_correlation();
  return check_summary("experiments");
}
