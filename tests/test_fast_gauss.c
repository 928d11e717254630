/* The fast route of the Gaussian baselines (KDE and Nadaraya-Watson) against
 * the direct route and a plain brute-force sum: D = 1, 2, 3; isotropic,
 * per-axis and full bandwidth matrices; h from tiny to huge; scattered
 * points and grids; an outlier; weights; vector and signed responses; the
 * error following tol; identical bits for 1 and 2 threads; auto's fallback.
 * First the Gaussian family's operations (kernel_internal.h) against
 * independent sums and quadratures. */
#include <string.h>
#include "check.h"
#include "bandlimited.h"
#include "kernel_internal.h"
#define FAST_CHECK_SEED 0x9E3779B97F4A7C15ULL
#include "fast_check.h"

/* Inverse and determinant of a D x D matrix (D <= 3) by cofactors. */
static double inv3(size_t D, const double *H, double *Hi) {
  double a[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (size_t i = 0; i < D; i++)
    for (size_t j = 0; j < D; j++) a[i * 3 + j] = H[i * D + j];
  double c[9];
  c[0] = a[4] * a[8] - a[5] * a[7];
  c[1] = -(a[3] * a[8] - a[5] * a[6]);
  c[2] = a[3] * a[7] - a[4] * a[6];
  c[3] = -(a[1] * a[8] - a[2] * a[7]);
  c[4] = a[0] * a[8] - a[2] * a[6];
  c[5] = -(a[0] * a[7] - a[1] * a[6]);
  c[6] = a[1] * a[5] - a[2] * a[4];
  c[7] = -(a[0] * a[5] - a[2] * a[3]);
  c[8] = a[0] * a[4] - a[1] * a[3];
  double det = a[0] * c[0] + a[1] * c[1] + a[2] * c[2];
  for (size_t i = 0; i < D; i++)
    for (size_t j = 0; j < D; j++) Hi[i * D + j] = c[j * 3 + i] / det;
  return det;
}

/* Brute force: sum_i w_i N(y - x_i; 0, H), w normalised (NULL: 1/N). */
static double brute(size_t N, size_t D, const double *x, const double *w, const double *H,
                    const double *y) {
  double Hi[9], det = inv3(D, H, Hi), ws = 0, s = 0;
  for (size_t i = 0; i < N; i++) ws += w ? w[i] : 1.0;
  for (size_t i = 0; i < N; i++) {
    double u[3], q = 0;
    for (size_t j = 0; j < D; j++) u[j] = y[j] - x[i * D + j];
    for (size_t a = 0; a < D; a++)
      for (size_t b = 0; b < D; b++) q += u[a] * Hi[a * D + b] * u[b];
    s += (w ? w[i] : 1.0) / ws * exp(-0.5 * q) / sqrt(pow(2 * M_PI, (double)D) * det);
  }
  return s;
}

/* H of a shape: 0 isotropic h^2 I, 1 per-axis diag (h_j^2), 2 full. */
static void make_H(size_t D, double h, int shape, double *H) {
  memset(H, 0, D * D * sizeof *H);
  for (size_t j = 0; j < D; j++) H[j * D + j] = h * h * (shape ? 1 + 0.5 * (double)j : 1);
  if (shape == 2 && D > 1) {
    H[1] = H[D] = 0.4 * h * h;
    if (D == 3) H[5] = H[7] = -0.3 * h * h;
  }
}

/* Fast vs direct density at M points and on a grid; error relative to max |direct|. */
static double density_case(size_t D, const double *H, size_t N, const double *x, const double *w,
                           size_t M, const double *q, double tol, gfi_fast_info *info) {
  gfi_opts od = opts_of(GFI_METHOD_DIRECT, 0, 0), of = opts_of(GFI_METHOD_FAST, tol, 0);
  gfi_density_plan *pd = NULL, *pf = NULL;
  double *o1 = malloc(M * sizeof *o1), *o2 = malloc(M * sizeof *o2);
  CHECK_STATUS(gfi_density_plan_gauss(&pd, N, D, x, w, H, &od), GFI_OK);
  CHECK_STATUS(gfi_density_plan_gauss(&pf, N, D, x, w, H, &of), GFI_OK);
  double rel = INFINITY;
  if (pd && pf) {
    gfi_fast_info di;
    CHECK_STATUS(gfi_density_eval_info(pd, M, q, o1, &di), GFI_OK);
    CHECK(di.route == GFI_METHOD_DIRECT && di.reason == GFI_ROUTE_REQUESTED, "direct route");
    CHECK_STATUS(gfi_density_eval_info(pf, M, q, o2, info), GFI_OK);
    CHECK(info->route == GFI_METHOD_FAST && info->nodes_total > 0, "fast route ran");
    double e = max_diff(o1, o2, M), m = max_abs(o1, M);
    rel = e / m;
    CHECK(e <= info->bound_abs + 1e-13 * m, "D=%zu: error %.3g above its bound %.3g", D, e,
          info->bound_abs);
    for (size_t a = 0; a < M; a += M / 5 + 1)
      CHECK_CLOSE(o1[a], brute(N, D, x, w, H, q + a * D), 0, 1e-12 * m);
  }
  gfi_density_destroy(pd);
  gfi_density_destroy(pf);
  free(o1);
  free(o2);
  return rel;
}

static double grid_case(size_t D, const double *H, size_t N, const double *x, const double *lo,
                        const double *hi, const size_t *n, gfi_fast_info *info) {
  gfi_opts od = opts_of(GFI_METHOD_DIRECT, 0, 0), of = opts_of(GFI_METHOD_FAST, 0, 0);
  gfi_density_plan *pd = NULL, *pf = NULL;
  size_t G = 1;
  for (size_t j = 0; j < D; j++) G *= n[j];
  double *o1 = malloc(G * sizeof *o1), *o2 = malloc(G * sizeof *o2);
  CHECK_STATUS(gfi_density_plan_gauss(&pd, N, D, x, NULL, H, &od), GFI_OK);
  CHECK_STATUS(gfi_density_plan_gauss(&pf, N, D, x, NULL, H, &of), GFI_OK);
  double rel = INFINITY;
  if (pd && pf) {
    CHECK_STATUS(gfi_density_eval_grid(pd, lo, hi, n, o1, NULL), GFI_OK);
    CHECK_STATUS(gfi_density_eval_grid(pf, lo, hi, n, o2, info), GFI_OK);
    CHECK(info->route == GFI_METHOD_FAST, "grid: fast route ran");
    double e = max_diff(o1, o2, G), m = max_abs(o1, G);
    rel = e / m;
    CHECK(e <= info->bound_abs + 1e-13 * m, "grid D=%zu: error %.3g above its bound %.3g", D, e,
          info->bound_abs);
  }
  gfi_density_destroy(pd);
  gfi_density_destroy(pf);
  free(o1);
  free(o2);
  return rel;
}

static void test_density(void) {
  for (size_t D = 1; D <= 3; D++) {
    /* h from tiny (thousands of nodes per axis in 1-D) to huge (a few) */
    static const double h1[] = {1e-3, 0.05, 0.3, 2, 100}, h2[] = {0.03, 0.3, 2, 100},
                        h3[] = {0.4, 100};
    const double *hs = D == 1 ? h1 : D == 2 ? h2 : h3;
    size_t nh = D == 1 ? 5 : D == 2 ? 4 : 2;
    size_t N = D == 1 ? 400 : D == 2 ? 150 : 40, M = D == 3 ? 30 : 120;
    double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q), *w = malloc(N * sizeof *w);
    for (size_t i = 0; i < N * D; i++) x[i] = nrand();
    for (size_t i = 0; i < N; i++) w[i] = 0.2 + urand();
    /* queries on and near the data (tiny h: a query on every data point) */
    for (size_t i = 0; i < M * D; i++) q[i] = i < N * D && i % 3 == 0 ? x[i] : 1.3 * nrand();
    for (size_t b = 0; b < nh; b++)
      for (int shape = 0; shape < 3; shape++) {
        if (D == 1 && shape) continue;
        /* sanitized: the smallest h (10^5 nodes) with the plain shape only */
        if (CHECK_SANITIZED && D > 1 && b == 0 && shape) continue;
        double H[9];
        make_H(D, hs[b], shape, H);
        gfi_fast_info info;
        double rel = density_case(D, H, N, x, shape == 1 ? w : NULL, M, q, 0, &info);
        if (getenv("GFI_TEST_VERBOSE"))
          printf("gauss density D=%zu h=%g shape %d: nodes %zu rel %.3g bound %.3g\n", D, hs[b],
                 shape, info.nodes_total, rel, info.bound);
        CHECK(rel <= 1e-10, "gauss density D=%zu h=%g shape %d: relative error %.3g (nodes %zu)",
              D, hs[b], shape, rel, info.nodes_total);
        /* the bound carries the phases' rounding floor (bandlimited.c), about
         * 2 eps max|w| max|z| of the kernel's peak: 1.6e-9 of the largest
         * value at h = 1e-3, where whitened points reach |z| = 4000 (the
         * measured error, checked against the bound above, stays ~1e-12);
         * under AUTO such a bound sends the call to the direct sum */
        CHECK(info.bound <= (hs[b] < 0.01 ? 1e-8 : hs[b] < 0.1 ? 1e-9 : 1e-10), "reported bound %.3g within tol",
              info.bound);
        /* grid over the data box and beyond */
        double lo[3] = {-3.5, -3, -2.5}, hi[3] = {3, 3.5, 2};
        size_t n[3] = {D == 1 ? 301 : 41, D == 3 ? 13 : 37, 11};
        rel = grid_case(D, H, N, x, lo, hi, n, &info);
        CHECK(rel <= 1e-10, "gauss grid D=%zu h=%g shape %d: relative error %.3g", D, hs[b], shape,
              rel);
        /* a full H shears the grid: scattered points; a diagonal one stays separable */
        CHECK(shape == 2 && D > 1 ? info.grid_bwd[0] > 0 : info.grid_bwd[0] == 0,
              "grid D=%zu shape %d: separable step exactly when H is diagonal", D, shape);
      }
    /* an outlier widens the span */
    x[5 * D] = 40;
    double H[9];
    make_H(D, D == 3 ? 0.5 : 0.3, 0, H);
    gfi_fast_info info;
    double rel = density_case(D, H, N, x, NULL, M, q, 0, &info);
    CHECK(rel <= 1e-10, "gauss density D=%zu with an outlier: relative error %.3g", D, rel);
    free(x);
    free(q);
    free(w);
  }
}

/* The error follows tol; the node count shrinks with it. */
static void test_tol_sweep(void) {
  for (size_t D = 1; D <= 2; D++) {
    size_t N = 2000, M = 200;
    double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q), H[4];
    for (size_t i = 0; i < N * D; i++) x[i] = nrand();
    for (size_t i = 0; i < M * D; i++) q[i] = 1.5 * nrand();
    make_H(D, 0.2, 1, H);
    size_t last = 0;
    for (double tol = 1e-3; tol >= 1e-13; tol *= 0.01) {
      gfi_fast_info info;
      double rel = density_case(D, H, N, x, NULL, M, q, tol, &info);
      if (getenv("GFI_TEST_VERBOSE"))
        printf("gauss tol D=%zu tol=%.0e: nodes %zu ntol %.2g rel %.3g bound %.3g\n", D, tol,
               info.nodes_total, info.nufft_tol, rel, info.bound);
      CHECK(rel <= tol, "gauss tol sweep D=%zu tol %.0e: error %.3g", D, tol, rel);
      CHECK(info.nodes_total >= last, "nodes grow as tol falls (%zu after %zu)", info.nodes_total,
            last);
      last = info.nodes_total;
    }
    free(x);
    free(q);
  }
}

static void test_nw(void) {
  for (size_t D = 1; D <= 3; D++)
    for (int shape = 0; shape < 3; shape++) {
      if (D == 1 && shape) continue;
      if (CHECK_SANITIZED && D > 1 && shape == 1) continue; /* sanitized: shapes 0 and 2 */
      const size_t N = D == 3 ? 60 : 300, M = 80, V = 2;
      double *x = malloc(N * D * sizeof *x), *y = malloc(N * V * sizeof *y);
      double *q = malloc(M * D * sizeof *q), H[9];
      for (size_t i = 0; i < N * D; i++) x[i] = nrand();
      for (size_t i = 0; i < N; i++) {
        y[i * V] = sin(2 * x[i * D]) + 0.1 * nrand();
        y[i * V + 1] = -3 + x[i * D] * x[i * D]; /* both signs */
      }
      for (size_t i = 0; i < M * D; i++) q[i] = 1.2 * nrand();
      make_H(D, D == 3 ? 1.0 : 0.3, shape, H);
      gfi_opts od = opts_of(GFI_METHOD_DIRECT, 0, 0), of = opts_of(GFI_METHOD_FAST, 0, 0);
      gfi_nw_plan *pd = NULL, *pf = NULL;
      double *o1 = malloc(M * V * sizeof *o1), *o2 = malloc(M * V * sizeof *o2);
      CHECK_STATUS(gfi_nw_plan_gauss(&pd, N, D, V, x, y, H, &od), GFI_OK);
      CHECK_STATUS(gfi_nw_plan_gauss(&pf, N, D, V, x, y, H, &of), GFI_OK);
      if (pd && pf) {
        size_t f1 = 0, f2 = 0;
        gfi_fast_info info;
        int s1 = gfi_nw_eval(pd, M, q, o1, &f1);
        int s2 = gfi_nw_eval_ex(pf, M, q, o2, &f2, NULL, NULL, &info);
        CHECK(s1 == s2 && f1 == f2, "NW D=%zu: same status and flags (%d/%d, %zu/%zu)", D, s1, s2,
              f1, f2);
        CHECK(info.route == GFI_METHOD_FAST && info.nodes_total > 0, "NW fast route ran");
        double ym = max_abs(y, N * V), e = 0;
        for (size_t i = 0; i < M * V; i++)
          if (!isnan(o1[i])) e = fmax(e, fabs(o1[i] - o2[i]));
        if (getenv("GFI_TEST_VERBOSE"))
          printf("gauss NW D=%zu shape %d: nodes %zu rows direct %zu err %.3g\n", D, shape,
                 info.nodes_total, info.rows_direct, e / ym);
        CHECK(e <= 1e-10 * ym, "gauss NW D=%zu shape %d: error %.3g relative to max |y|", D, shape,
              e / ym);
        CHECK(info.rows_direct < M / 4, "NW: most rows settled by the fast route (%zu)",
              info.rows_direct);
        /* a grid */
        double lo[3] = {-2, -1.5, -1}, hi[3] = {2, 1.5, 1};
        size_t n[3] = {D == 1 ? 101 : 21, 17, 7}, G = 1;
        for (size_t j = 0; j < D; j++) G *= n[j];
        double *g1 = malloc(G * V * sizeof *g1), *g2 = malloc(G * V * sizeof *g2);
        s1 = gfi_nw_eval_grid(pd, lo, hi, n, g1, &f1, NULL);
        s2 = gfi_nw_eval_grid(pf, lo, hi, n, g2, &f2, &info);
        CHECK(s1 == s2 && f1 == f2, "NW grid D=%zu: same status and flags", D);
        e = 0;
        for (size_t i = 0; i < G * V; i++)
          if (!isnan(g1[i])) e = fmax(e, fabs(g1[i] - g2[i]));
        CHECK(e <= 1e-10 * ym, "gauss NW grid D=%zu shape %d: error %.3g", D, shape, e / ym);
        free(g1);
        free(g2);
      }
      gfi_nw_destroy(pd);
      gfi_nw_destroy(pf);
      free(o1);
      free(o2);
      free(x);
      free(y);
      free(q);
    }
}

/* Identical bits for 1 and 2 threads. */
static void test_threads(void) {
  const size_t N = 3000, D = 2, M = 300;
  double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q), H[4];
  for (size_t i = 0; i < N * D; i++) x[i] = nrand();
  for (size_t i = 0; i < M * D; i++) q[i] = nrand();
  make_H(D, 0.3, 2, H);
  double *o[2];
  for (int t = 0; t < 2; t++) {
    gfi_opts of = opts_of(GFI_METHOD_FAST, 0, t + 1);
    gfi_density_plan *p = NULL;
    o[t] = malloc(M * sizeof *o[t]);
    CHECK_STATUS(gfi_density_plan_gauss(&p, N, D, x, NULL, H, &of), GFI_OK);
    CHECK_STATUS(gfi_density_eval(p, M, q, o[t]), GFI_OK);
    gfi_density_destroy(p);
  }
  CHECK(memcmp(o[0], o[1], M * sizeof *o[0]) == 0, "gauss fast: same bits for 1 and 2 threads");
  free(o[0]);
  free(o[1]);
  free(x);
  free(q);
}

/* auto: the direct sum when the nodes explode (tiny h in 3-D) or where it
 * is cheaper (few points); FAST where they explode is GFI_ERANGE; D > 3 has
 * no fast route. */

/* int_a^b f by composite Simpson with n (even) panels. */
static double simpson(double (*f)(double, double), double p, double a, double b, int n) {
  const double h = (b - a) / n;
  double s = f(a, p) + f(b, p);
  for (int i = 1; i < n; i++) s += (i % 2 ? 4 : 2) * f(a + i * h, p);
  return s * h / 3;
}
static double gauss_pdf(double w, double p) {
  (void)p;
  return exp(-0.5 * w * w) / sqrt(2 * M_PI);
}
static double gauss_cos(double x, double u) { return exp(-0.5 * x * x) * cos(u * x); }

/* The Gaussian family's operations: its facts, the transform against the
 * quadrature of e^{-x^2/2} cos(u x), the trapezoid rule's truncation
 * against the quadrature of the tail, its aliasing bound against the sum of
 * the copies it bounds (and within a factor 2.5 of it), the reaches, and
 * what the engine and its routes take. */
static void test_family(void) {
  gfi_kernel g, p4, ft;
  kernel_gauss(&g);
  CHECK_STATUS(gfi_kernel_pow(&p4, 4), GFI_OK);
  CHECK_STATUS(gfi_kernel_flattop(&ft, 0.5), GFI_OK);
  CHECK(kernel_is_gauss(&g) && !kernel_is_gauss(&p4) && !kernel_is_gauss(&ft), "kind");
  CHECK_CLOSE(g.A, simpson(gauss_cos, 0, -40, 40, 4000), 1e-13, 0);
  CHECK(g.A_finite && kernel_band(&g) == 0 && kernel_peak(&g) == 1.0, "A, band, peak");
  for (double u = -6; u <= 6; u += 0.37) {
    CHECK_CLOSE(kernel_spatial(&g, u), exp(-0.5 * u * u), 1e-15, 0);
    CHECK_CLOSE(gfi_kernel_kappa(&g, u), simpson(gauss_cos, u, -40, 40, 4000) / g.A, 1e-12, 1e-15);
  }
  double kn[KERNEL_KNOTS_MAX];
  CHECK(kernel_knots(&g, kn) < 0 && !kernel_is_sinc(&g), "no pieces, not sinc");
  CHECK(kernel_rule(&g) == KERNEL_RULE_TRAPEZOID && kernel_rule(&p4) == KERNEL_RULE_PIECES &&
            kernel_rule(&ft) == KERNEL_RULE_PIECES,
        "rules");
  CHECK(!kernel_binned(&g) && kernel_binned(&p4) && kernel_binned(&ft), "binned route");
  CHECK(kernel_engine_ok(&g) && kernel_engine_ok(&p4) && kernel_engine_ok(&ft) && !kernel_engine_ok(NULL),
        "the engine's kernels");
  CHECK(kernel_lobe(&g) == 2.0 && kernel_lobe(&p4) == 2 * M_PI && kernel_margin(&g) == 2.0 &&
            kernel_margin(&ft) == 4 * M_PI,
        "lobe, margin");
  CHECK(kernel_nodes(&g, 3, 5) == 2.7 * 23 && kernel_nodes(&p4, 3, 5) == 4 * 15.5, "node estimates");
  CHECK(isnan(kernel_tail(&p4, 1)) && isnan(kernel_alias(&ft, 1)), "no trapezoid bounds for band-limited");
  /* truncation: the mass of e^{-w^2/2} beyond |w| = v, two tails */
  for (double v = 0.5; v <= 9; v += 0.5) {
    double q = 2 * simpson(gauss_pdf, 0, v, v + 40, 40000);
    CHECK_CLOSE(kernel_tail(&g, v), q, 1e-9, 1e-300);
  }
  for (double e = 1e-2; e >= 1e-18; e /= 100) {
    double v = kernel_tail_reach(&g, e);
    CHECK(kernel_tail(&g, v) <= e && kernel_tail(&g, v * (1 - 1e-9)) > e, "tail reach at %g", e);
    double t = kernel_alias_reach(&g, e);
    CHECK_CLOSE(2 * exp(-0.5 * t * t), e, 1e-12, 0);
    CHECK(kernel_alias(&g, t) >= e * (1 - 1e-12), "alias(reach(e)) >= e (to rounding)");
  }
  /* aliasing: sum_{m != 0} e^{-R^2 (u + m P)^2 / 2} over |u| <= S, P = S + t / R */
  const double Rs[3] = {0.3, 1, 7}, Ss[3] = {0.1, 2, 30}, ts[3] = {1.5, 4, 8};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 3; c++) {
        const double R = Rs[a], S = Ss[b], t = ts[c], P = S + t / R, bd = kernel_alias(&g, t);
        double worst = 0;
        for (int i = 0; i <= 200; i++) {
          double u = -S + 2 * S * i / 200, sum = 0;
          for (int m = -400; m <= 400; m++)
            if (m) sum += exp(-0.5 * R * R * (u + m * P) * (u + m * P));
          worst = fmax(worst, sum);
        }
        CHECK(worst <= bd && worst >= bd / 2.5, "alias R %g S %g t %g: %g against %g", R, S, t, worst, bd);
      }
  /* the engine takes a family, not a sentinel */
  bl_sum *s = NULL;
  const double x[3] = {0, 1, 2}, c1[3] = {1, 1, 1}, one[1] = {1};
  CHECK_STATUS(bl_sum_make(&s, 1, NULL, 3, x, 1, c1, one, NULL, 1.0), GFI_EINVAL);
  CHECK(s == NULL, "no sum");
  CHECK_STATUS(bl_sum_make(&s, 1, &g, 3, x, 1, c1, one, NULL, 1.0), GFI_OK);
  CHECK(s && s->A == g.A && s->K0 == 1 / g.A, "the Gaussian sum's A and peak");
  bl_sum_free(s);
}

static void test_auto_errors(void) {
  const size_t N = 50, D = 3;
  double x[150], q[30], H[16] = {0}, o[50];
  for (size_t i = 0; i < N * D; i++) x[i] = nrand();
  for (size_t i = 0; i < 30; i++) q[i] = nrand();
  make_H(D, 0.01, 0, H);
  gfi_opts oa = opts_of(GFI_METHOD_AUTO, 0, 0), of = opts_of(GFI_METHOD_FAST, 0, 0);
  gfi_density_plan *p = NULL;
  CHECK_STATUS(gfi_density_plan_gauss(&p, N, D, x, NULL, H, &of), GFI_ERANGE);
  CHECK(p == NULL, "no plan");
  CHECK_STATUS(gfi_density_plan_gauss(&p, N, D, x, NULL, H, &oa), GFI_OK);
  gfi_fast_info info;
  CHECK_STATUS(gfi_density_eval_info(p, 10, q, o, &info), GFI_OK);
  CHECK(info.route == GFI_METHOD_DIRECT && info.reason == GFI_ROUTE_NODES, "tiny h, 3-D: direct (%d)",
        info.reason);
  CHECK_CLOSE(o[3], brute(N, D, x, NULL, H, q + 9), 1e-12, 0);
  gfi_density_destroy(p);
  /* few points in 1-D: the cost model takes the direct sum */
  make_H(1, 0.5, 0, H);
  CHECK_STATUS(gfi_density_plan_gauss(&p, 20, 1, x, NULL, H, &oa), GFI_OK);
  CHECK_STATUS(gfi_density_eval_info(p, 3, q, o, &info), GFI_OK);
  CHECK(info.route == GFI_METHOD_DIRECT && info.reason == GFI_ROUTE_COST, "few points: direct");
  gfi_density_destroy(p);
  /* D = 4 */
  memset(H, 0, sizeof H);
  for (int j = 0; j < 4; j++) H[j * 4 + j] = 1;
  CHECK_STATUS(gfi_density_plan_gauss(&p, 2, 4, x, NULL, H, &of), GFI_EUNSUPPORTED);
  gfi_nw_plan *pn = NULL;
  CHECK_STATUS(gfi_nw_plan_gauss(&pn, 2, 4, 1, x, x, H, &of), GFI_EUNSUPPORTED);
  CHECK_STATUS(gfi_density_plan_gauss(&p, 2, 4, x, NULL, H, &oa), GFI_OK);
  CHECK_STATUS(gfi_density_eval_info(p, 1, q, o, &info), GFI_OK);
  CHECK(info.route == GFI_METHOD_DIRECT && info.reason == GFI_ROUTE_DIM, "D = 4: direct");
  gfi_density_destroy(p);
  /* bad tol */
  gfi_opts bad = opts_of(GFI_METHOD_FAST, 2, 0);
  CHECK_STATUS(gfi_nw_plan_gauss(&pn, 2, 1, 1, x, x, H, &bad), GFI_EINVAL);
  CHECK(pn == NULL, "no NW plan");
}

int main(void) {
  CHECK_TIMED(test_family);
  CHECK_TIMED(test_auto_errors);
  CHECK_TIMED(test_threads);
  CHECK_TIMED(test_tol_sweep);
  CHECK_TIMED(test_nw);
  CHECK_TIMED(test_density);
  return check_summary("fast-gauss");
}
