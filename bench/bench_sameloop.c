/* The density sum's inner loop with the sinc factor against the same loop
 * with a Gaussian factor: same engine driver (estimators/engine.c), same
 * blocks, query tiles, threads and SIMD, the per-axis factor the only
 * difference:
 *   sinc:     prod_j (R_j/A) sinc(R_j (x_j - k_ij))^4   (gfi_density_eval)
 *   Gaussian: prod_j exp(-(x_j - k_ij)^2 / (2 h_j^2)) / (sqrt(2 pi) h_j)
 * The Gaussian loop's values are checked against gfi's Gaussian KDE with the
 * diagonal bandwidth (which evaluates one exp of a sum per pair instead).
 * Prints pairs per second of both and their ratio (goal: sinc >= 60% of the
 * Gaussian factor loop). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gsl/gsl_randist.h>
#include "gfi/gfi.h"
#include "engine.h"
#include "simd_math.h"

typedef struct {
  engine_layout lay;
  size_t D;
  double *z;       /* D x Np: x_ij / h_j, padding far away */
  double *invh;    /* D */
  double lognorm;  /* -sum_j log(sqrt(2 pi) h_j) - log N */
  double lo;       /* exp floor, -708 */
  const double *queries;
} gprod;

/* Same structure as density_fourier_task: per query, a product over axes
 * into prod[0..B), then a sum. */
static GFI_CLONES void gprod_task(const void *ctx, size_t q0, size_t q1, size_t i0, size_t i1,
                                  double *dst, double *ws) {
  const gprod *p = ctx;
  const size_t D = p->D, Np = p->lay.Np, B = p->lay.dblock, nq = q1 - q0;
  double *zq = ws, *prod = ws + nq * D;
  const double lo = p->lo;
  for (size_t q = 0; q < nq; q++) {
    for (size_t j = 0; j < D; j++) zq[q * D + j] = p->queries[(q0 + q) * D + j] * p->invh[j];
    dst[q] = 0;
  }
  for (size_t b = i0; b < i1; b += B)
    for (size_t q = 0; q < nq; q++) {
      for (size_t j = 0; j < D; j++) {
        const double *restrict z = p->z + j * Np + b;
        const double a = zq[q * D + j];
        if (j == 0) {
#pragma omp simd
          for (size_t i = 0; i < B; i++) {
            double d = a - z[i];
            prod[i] = gfi_exp_simd(-0.5 * d * d, lo);
          }
        } else {
#pragma omp simd
          for (size_t i = 0; i < B; i++) {
            double d = a - z[i];
            prod[i] *= gfi_exp_simd(-0.5 * d * d, lo);
          }
        }
      }
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (size_t i = 0; i < B; i++) s += prod[i];
      dst[q] += s;
    }
}

static void fill_zero(double *dst, size_t nq, size_t W) {
  for (size_t q = 0; q < nq * W; q++) dst[q] = 0;
}

static int gprod_eval(gprod *p, size_t M, const double *queries, double *out) {
  const size_t ns = p->lay.nsuper;
  double *part = malloc(M * ns * sizeof *part);
  if (!part) return GFI_ENOMEM;
  p->queries = queries;
  int st = engine_run(&p->lay, M, 1, p->lay.qtile * p->D + p->lay.dblock, gprod_task, p, fill_zero, part);
  for (size_t q = 0; q < M && !st; q++) {
    double s = 0;
    for (size_t c = 0; c < ns; c++) s += part[c * M + q];
    out[q] = s * exp(p->lognorm);
  }
  free(part);
  return st;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best of 3 measurements of >= 0.5 s each: pairs per second. */
#define TIME_RATE(RATE, CALL)                                                     \
  do {                                                                            \
    RATE = 0;                                                                     \
    for (int rep = 0; rep < 3; rep++) {                                           \
      long k = 0;                                                                 \
      double t0 = now_s(), el;                                                    \
      do {                                                                        \
        if ((CALL) != GFI_OK) {                                                   \
          fprintf(stderr, "bench_sameloop: evaluation failed\n");                 \
          return 1;                                                               \
        }                                                                         \
        k++;                                                                      \
        el = now_s() - t0;                                                        \
      } while (el < 0.5);                                                         \
      double r = (double)N * (double)M * (double)k / el;                          \
      if (r > RATE) RATE = r;                                                     \
    }                                                                             \
  } while (0)

int main(int argc, char **argv) {
  size_t N = 100000, M = 1000;
  if (argc > 1 && strcmp(argv[1], "--quick") == 0) N = 20000;
  const size_t dims[] = {1, 2, 4, 8};
  printf("# bench_sameloop (gfi %s, git %s): the density loop with a sinc^4 factor vs a Gaussian\n"
         "# factor per axis; same driver, blocks, tiles, threads; N = %zu, M = %zu standard-normal\n"
         "# points, R = 2, h = 0.3; best of 3 runs of >= 0.5 s; %d threads available\n",
         GFI_VERSION, gfi_git_revision(), N, M, gfi_threads_available());
  printf("%3s %7s %17s %19s %10s %14s\n", "D", "threads", "sinc_pairs_per_s", "gauss_factor_pairs_per_s",
         "sinc/gauss", "gauss_check");
  double worst = INFINITY;
  size_t worst_D = 0;
  for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
    const size_t D = dims[di];
    gsl_rng *r = gfi_rng_stream(7, D);
    double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q);
    double *o1 = malloc(M * sizeof *o1), *o2 = malloc(M * sizeof *o2), *R = malloc(D * sizeof *R);
    double *H = calloc(D * D, sizeof *H);
    if (!r || !x || !q || !o1 || !o2 || !R || !H) return 1;
    for (size_t i = 0; i < N * D; i++) x[i] = gsl_ran_gaussian_ziggurat(r, 1);
    for (size_t i = 0; i < M * D; i++) q[i] = gsl_ran_gaussian_ziggurat(r, 1);
    const double h = 0.3;
    for (size_t j = 0; j < D; j++) R[j] = 2, H[j * D + j] = h * h;
    for (int threads = 1; threads <= 2; threads++) {
      gfi_opts o;
      gfi_default_opts(&o);
      o.nthreads = threads;
      gfi_kernel k;
      gfi_kernel_pow(&k, 4);
      gfi_density_plan *pf, *pg;
      if (gfi_density_plan_fourier(&pf, &k, N, D, x, NULL, R, &o) ||
          gfi_density_plan_gauss(&pg, N, D, x, NULL, H, &o))
        return 1;
      gprod g;
      memset(&g, 0, sizeof g);
      engine_layout_init(&g.lay, N, &o);
      g.D = D;
      g.lo = -708.0;
      g.z = malloc(D * g.lay.Np * sizeof *g.z);
      g.invh = malloc(D * sizeof *g.invh);
      if (!g.z || !g.invh) return 1;
      g.lognorm = -log((double)N);
      for (size_t j = 0; j < D; j++) {
        g.invh[j] = 1 / h;
        g.lognorm -= log(sqrt(2 * M_PI) * h);
        for (size_t i = 0; i < g.lay.Np; i++) g.z[j * g.lay.Np + i] = i < N ? x[i * D + j] / h : 1e100;
      }
      double rs, rg;
      TIME_RATE(rs, gfi_density_eval(pf, M, q, o1));
      TIME_RATE(rg, gprod_eval(&g, M, q, o2));
      /* the Gaussian factor loop computes gfi's Gaussian KDE with H = h^2 I */
      double *o3 = malloc(M * sizeof *o3), maxrel = 0;
      if (!o3 || gfi_density_eval(pg, M, q, o3)) return 1;
      for (size_t i = 0; i < M; i++) {
        double d = fabs(o2[i] - o3[i]) / (fabs(o3[i]) + 1e-300);
        if (o3[i] > 1e-250 && d > maxrel) maxrel = d;
      }
      printf("%3zu %7d %17.4e %19.4e %10.3f %14.2e\n", D, threads, rs, rg, rs / rg, maxrel);
      if (maxrel > 1e-10) {
        fprintf(stderr, "bench_sameloop: Gaussian factor loop disagrees with gfi's Gaussian KDE (%g)\n",
                maxrel);
        return 1;
      }
      if (rs / rg < worst) worst = rs / rg, worst_D = D;
      free(o3);
      free(g.z);
      free(g.invh);
      gfi_density_destroy(pf);
      gfi_density_destroy(pg);
    }
    gsl_rng_free(r);
    free(x); free(q); free(o1); free(o2); free(R); free(H);
  }
  printf("goal      sinc pair rate >= 60%% of the same loop with a Gaussian factor: %s (worst %.3f at D = %zu)\n",
         worst >= 0.6 ? "MET" : "NOT MET", worst, worst_D);
  return 0;
}
