/* What a practitioner gets from a data-driven radius: over replications from
 * several truths and sample sizes, the ratio ISE(selected) / ISE(oracle) for
 *   fourier-lscv  the Fourier estimator (phi = z^l) at the LSCV radius,
 *   gauss-lscv    the Gaussian KDE at the LSCV bandwidth,
 *   gauss-dpi     the Gaussian KDE at the direct plug-in bandwidth (dpik),
 * with two oracles: the radius (bandwidth) minimising that sample's ISE, and
 * the MISE-optimal one (Fourier: gfi_ropt; Gaussian: normal mixtures only).
 * The Fourier ISE is the exact Plancherel ISE (gfi_ise_plancherel); the
 * Gaussian ISE is (1/pi) int_0^inf |phi_N(t) e^{-h^2 t^2/2} - psi(t)|^2 dt on
 * Gauss-Legendre panels (width 16 / span, 28 points) up to where the kernel
 * factor is below e^-45, plus the tail int |psi|^2 beyond (GSL qagiu).
 *
 * Usage: select_study OUT.dat [--quick] [--nmin N] [--nmax N] [--seed S] [--truths LIST] [--reps K]
 * LIST: indices into the truth table (0 normal, 1 MW2, 2 MW6, 3 MW10, 4 Laplace,
 * 5 t5), comma-separated (default: all); K: replications at every N (default
 * 20 up to N = 1e4, 4 from 1e5 on).
 * Replication k of (truth, N) draws from RNG stream (seed, 1000 t + k). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gsl/gsl_integration.h>
#include "gfi/gfi.h"

typedef struct {
  const char *spec, *name;
} truth;

static const truth TRUTHS[] = {{"normal", "normal"}, {"mw:2", "MW2-skewed"}, {"mw:6", "MW6-bimodal"},
                               {"mw:10", "MW10-claw"}, {"laplace", "Laplace"}, {"t:5", "t5"}};
#define NT (sizeof TRUTHS / sizeof TRUTHS[0])

static double psi2(double t, void *m) {
  double re, im;
  gfi_model_cf(m, 1, &t, &re, &im);
  return re * re + im * im;
}

/* The Gaussian ISE machinery of one sample. */
typedef struct {
  size_t K;
  double *t, *w, *pr, *pi, *sr, *si; /* nodes, weights/pi, phi_N, psi */
  double tail;                        /* (1/pi) int_T^inf |psi|^2 */
} gise;

static int gise_make(const gfi_model *m, size_t N, const double *x, double hmin, gise *g) {
  memset(g, 0, sizeof *g);
  double lo = x[0], hi = x[0];
  for (size_t i = 0; i < N; i++) lo = fmin(lo, x[i]), hi = fmax(hi, x[i]);
  double S = fmax(hi - lo, fmax(fabs(lo), fabs(hi)) * 2);
  double T = sqrt(90.0) / hmin, pw = 16.0 / S;
  size_t P = (size_t)ceil(T / pw);
  if (P < 1) P = 1;
  pw = T / (double)P;
  enum { GL = 28 };
  gsl_integration_glfixed_table *tab = gsl_integration_glfixed_table_alloc(GL);
  size_t K = P * GL;
  g->K = K;
  g->t = malloc(K * sizeof(double));
  g->w = malloc(K * sizeof(double));
  g->pr = malloc(K * sizeof(double));
  g->pi = malloc(K * sizeof(double));
  g->sr = malloc(K * sizeof(double));
  g->si = malloc(K * sizeof(double));
  double *out = malloc(2 * K * sizeof(double));
  for (size_t p = 0; p < P; p++)
    for (int q = 0; q < GL; q++) {
      double xi, wi;
      gsl_integration_glfixed_point(pw * (double)p, pw * (double)(p + 1), (size_t)q, &xi, &wi, tab);
      g->t[p * GL + q] = xi;
      g->w[p * GL + q] = wi / M_PI;
    }
  gsl_integration_glfixed_table_free(tab);
  gfi_opts o;
  gfi_default_opts(&o);
  o.tol = 1e-13;
  int st = gfi_ecf(N, 1, x, NULL, K, g->t, &o, out, NULL);
  for (size_t k = 0; k < K; k++) g->pr[k] = out[2 * k], g->pi[k] = out[2 * k + 1];
  free(out);
  if (!st) st = gfi_model_cf(m, K, g->t, g->sr, g->si);
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
  gsl_function F = {psi2, (void *)m};
  double r, e;
  gsl_integration_qagiu(&F, T, 1e-14, 1e-8, 1000, ws, &r, &e);
  gsl_integration_workspace_free(ws);
  g->tail = r / M_PI;
  return st;
}

static void gise_free(gise *g) {
  free(g->t), free(g->w), free(g->pr), free(g->pi), free(g->sr), free(g->si);
}

static double gise_at(const gise *g, double h) {
  double s = 0;
  for (size_t k = 0; k < g->K; k++) {
    double e = exp(-0.5 * h * h * g->t[k] * g->t[k]);
    double dr = g->pr[k] * e - g->sr[k], di = g->pi[k] * e - g->si[k];
    s += g->w[k] * (dr * dr + di * di);
  }
  return s + g->tail;
}

typedef double (*fn1)(double, void *);

/* global minimum of f on [lo, hi]: the library's radius search
 * (gfi_minimize_radius: a log scan of 16, its local minima refined by
 * Brent's method, scans doubled until two rounds agree) */
typedef struct {
  fn1 f;
  void *c;
} argmin_ctx;

static int argmin_f(void *vc, double r, double *v) {
  const argmin_ctx *a = vc;
  *v = a->f(r, a->c);
  return GFI_OK;
}

static double argmin(fn1 f, void *c, double lo, double hi, double *fmin_out) {
  argmin_ctx a = {f, c};
  gfi_select_result res;
  if (gfi_minimize_radius(argmin_f, &a, lo, hi, 16, &res)) {
    *fmin_out = INFINITY;
    return NAN;
  }
  *fmin_out = res.value;
  return res.R[0];
}

typedef struct {
  const gfi_model *m;
  gfi_kernel k;
  size_t N;
  const double *x;
} fise_ctx;

static double fise(double R, void *vc) {
  const fise_ctx *c = vc;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = c->N < 20000 ? 1 : 0; /* a team costs more than it saves below */
  double v = NAN;
  int st = gfi_ise_plancherel(c->m, &c->k, c->N, c->x, &R, &o, &v);
  return st ? INFINITY : v;
}

static double gise_f(double h, void *g) { return gise_at(g, h); }

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double quant(double *v, size_t n, double p) {
  qsort(v, n, sizeof *v, cmpd);
  double h = (double)(n - 1) * p;
  size_t i = (size_t)floor(h);
  return i + 1 < n ? v[i] + (h - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: select_study OUT.dat [--quick] [--nmin N] [--nmax N] [--seed S] [--truths LIST] [--reps K]\n");
    return 2;
  }
  int quick = 0;
  double nmax = 1e5, nmin = 100;
  unsigned long long seed = 1;
  int want[NT];
  size_t reps_all = 0;
  for (size_t t = 0; t < NT; t++) want[t] = 1;
  for (int a = 2; a < argc; a++) {
    if (!strcmp(argv[a], "--quick")) quick = 1;
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps_all = strtoull(argv[++a], NULL, 10);
    else if (!strcmp(argv[a], "--truths") && a + 1 < argc) {
      for (size_t t = 0; t < NT; t++) want[t] = 0;
      for (char *c = argv[++a]; *c;) {
        char *e;
        unsigned long t = strtoul(c, &e, 10);
        if (e == c || t >= NT) {
          fprintf(stderr, "select_study: --truths: bad index in '%s'\n", argv[a]);
          return 2;
        }
        want[t] = 1;
        c = *e == ',' ? e + 1 : e;
      }
    }
    else if (!strcmp(argv[a], "--nmax") && a + 1 < argc) nmax = atof(argv[++a]);
    else if (!strcmp(argv[a], "--nmin") && a + 1 < argc) nmin = atof(argv[++a]);
    else if (!strcmp(argv[a], "--seed") && a + 1 < argc) seed = strtoull(argv[++a], NULL, 10);
    else {
      fprintf(stderr, "select_study: unknown argument '%s'\n", argv[a]);
      return 2;
    }
  }
  FILE *f = fopen(argv[1], "w");
  if (!f) {
    fprintf(stderr, "select_study: cannot write %s\n", argv[1]);
    return 1;
  }
  const int l = 4;
  gfi_kernel kp;
  gfi_kernel_pow(&kp, l);
  gfi_kernel k;
  gfi_kernel_pow(&k, l);
  fprintf(f, "# select_study (gfi %s): ISE(selected) / ISE(oracle), Fourier phi = z^%d and Gaussian KDE\n",
          GFI_VERSION, l);
  fprintf(f, "# seed: %llu; replication k of truth t draws from RNG stream (seed, 1000 t + k)\n", seed);
  fprintf(f, "# ratio: ISE at the selected radius / the smallest ISE of that sample over R (oracle);\n");
  fprintf(f, "# mratio: ISE at the selected radius / ISE at the MISE-optimal radius (NaN: not available)\n");
  fprintf(f, "# truth N method reps ratio_q1 ratio_med ratio_q3 mratio_q1 mratio_med mratio_q3 sel_med oracle_med "
             "frac_under\n");
  const char *meth[3] = {"fourier-lscv", "gauss-lscv", "gauss-dpi"};
  for (size_t ti = 0; ti < NT; ti++) {
    if (!want[ti]) continue;
    gfi_model *m;
    if (gfi_model_parse(&m, TRUTHS[ti].spec, 1, NULL)) return 1;
    for (double N = 100; N <= nmax * 1.0001; N *= 10) {
      if (N < nmin * 0.9999) continue;
      size_t reps = reps_all ? reps_all : quick ? 4 : (N >= 1e5 ? 4 : 20);
      size_t n = (size_t)N;
      double *ratio[3], *mratio[3], *sel[3], *orc[3];
      size_t under[3] = {0, 0, 0};
      for (int q = 0; q < 3; q++) {
        ratio[q] = malloc(reps * sizeof(double));
        mratio[q] = malloc(reps * sizeof(double));
        sel[q] = malloc(reps * sizeof(double));
        orc[q] = malloc(reps * sizeof(double));
      }
      gfi_mise_opts mo;
      gfi_mise_default_opts(&mo);
      double Rm = NAN, hm = NAN;
      gfi_mise_result mr;
      gfi_ropt(m, &kp, N, NULL, &mo, &Rm, &mr);
      if (gfi_model_get_kind(m) == GFI_MODEL_MIXTURE) gfi_mise_gauss_hopt(m, N, &hm, &mr);
      clock_t t0 = clock();
      for (size_t r = 0; r < reps; r++) {
        gsl_rng *g = gfi_rng_stream(seed, 1000 * ti + r);
        double *x = malloc(n * sizeof *x);
        gfi_model_sample(m, g, n, x);
        gsl_rng_free(g);
        /* Fourier: LSCV radius, the sample's ISE oracle, the MISE-optimal R */
        gfi_select_opts so;
        gfi_select_default_opts(&so);
        gfi_select_result sr;
        if (gfi_select_lscv(&k, n, 1, x, &so, &sr, NULL)) return 1;
        fise_ctx fc = {m, kp, n, x};
        double imin, Ro = argmin(fise, &fc, Rm / 8, Rm * 8, &imin);
        double is = fise(sr.R[0], &fc), im = fise(Rm, &fc);
        ratio[0][r] = is / imin;
        mratio[0][r] = is / im;
        sel[0][r] = sr.R[0];
        orc[0][r] = Ro;
        under[0] += sr.R[0] > Ro; /* a larger radius undersmooths */
        /* Gaussian: LSCV and plug-in bandwidths, the ISE oracle */
        double H, hd, Hn;
        gfi_opts o;
        gfi_default_opts(&o);
        o.method = GFI_METHOD_FAST; /* through the empirical cf: the same minimiser, far cheaper at N ~ 1e3 */
        if (gfi_bw_lscv(n, 1, x, &o, &H) || gfi_bw_dpi(n, x, &o, &hd) || gfi_bw_normal_ref(n, 1, x, &Hn)) return 1;
        double hl = sqrt(H), hn = sqrt(Hn);
        gise gi;
        if (gise_make(m, n, x, fmin(hn / 60, fmin(hl, hd) / 2), &gi)) return 1;
        double gmin, ho = argmin(gise_f, &gi, hn / 50, hn * 4, &gmin);
        double il = gise_at(&gi, hl), id = gise_at(&gi, hd), ihm = isfinite(hm) ? gise_at(&gi, hm) : NAN;
        ratio[1][r] = il / gmin, ratio[2][r] = id / gmin;
        mratio[1][r] = il / ihm, mratio[2][r] = id / ihm;
        sel[1][r] = hl, sel[2][r] = hd, orc[1][r] = orc[2][r] = ho;
        under[1] += hl < ho;
        under[2] += hd < ho;
        gise_free(&gi);
        free(x);
      }
      for (int q = 0; q < 3; q++) {
        double a = quant(ratio[q], reps, 0.25), b = quant(ratio[q], reps, 0.5), c = quant(ratio[q], reps, 0.75);
        double ma = quant(mratio[q], reps, 0.25), mb = quant(mratio[q], reps, 0.5), mc = quant(mratio[q], reps, 0.75);
        fprintf(f, "%s %g %s %zu %.6g %.6g %.6g %.6g %.6g %.6g %.6g %.6g %.3f\n", TRUTHS[ti].name, N, meth[q],
                reps, a, b, c, ma, mb, mc, quant(sel[q], reps, 0.5), quant(orc[q], reps, 0.5),
                (double)under[q] / (double)reps);
        free(ratio[q]), free(mratio[q]), free(sel[q]), free(orc[q]);
      }
      fflush(f);
      fprintf(stderr, "%s N = %g: %zu replications, %.1f s CPU\n", TRUTHS[ti].name, N, reps,
              (double)(clock() - t0) / CLOCKS_PER_SEC);
    }
    fprintf(f, "\n\n");
    gfi_model_free(m);
  }
  fclose(f);
  return 0;
}
