/* The GPU Monte-Carlo MISE (gfi_cuda_mise_mc, gfi_cuda_ise_plancherel)
 * against the CPU: on the same points the ISE agrees with
 * gfi_ise_plancherel to 1e-10 relative; the MC MISE agrees with the exact
 * MISE within 4 standard errors; results do not depend on the launch shape
 * and repeat bit for bit; unsupported truths and a missing device give the
 * documented status. Built against the emulator (cuda-mise-emu) and, with
 * libgfi_cuda, against a GPU (cuda-mise-gpu; exit 77 without one). */
#include <string.h>
#include "check.h"
#include "gfi/gfi.h"
#include "gfi_cuda.h"
#ifdef GFI_CUDA_EMU
#include "emu/cuda_emu.h"
#endif

/* Launch-shape knob of cuda/mise.cu (tests only): node tile 8 or 16. */
int gfi_cuda_mise_set_tile(int t);

/* "mix2": a 2-D two-component normal mixture with correlated components;
 * anything else goes to gfi_model_parse. */
static gfi_model *model(const char *spec, size_t D) {
  gfi_model *m = NULL;
  if (!strcmp(spec, "mix2")) {
    const double w[2] = {0.5, 0.5}, mu[4] = {-1, 0, 1.5, 0.5};
    const double cov[8] = {1, 0, 0, 1, 0.5, 0.2, 0.2, 0.8};
    CHECK_STATUS(gfi_model_mixture(&m, 2, 2, w, mu, cov), GFI_OK);
    return m;
  }
  CHECK_STATUS(gfi_model_parse(&m, spec, D, NULL), GFI_OK);
  return m;
}

/* (a) the same points through the CPU and the GPU Plancherel ISE */
static void test_same_points(void) {
  struct {
    const char *spec;
    size_t D, N;
    int l;
    double R;
  } c[] = {{"mw:2", 1, 5000, 4, 3}, {"mw:6", 1, 3000, 1, 4},
           {"normal:cov=1,0.6,0.6,0.8", 2, 3000, 2, 1.5}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    gfi_model *m = model(c[i].spec, c[i].D);
    size_t N = c[i].N, D = c[i].D;
    double R[2] = {c[i].R, c[i].R * 1.2}, *x = malloc(N * D * sizeof *x);
    for (int src = 0; src < 2; src++) {
      if (src == 0) {
        CHECK_STATUS(gfi_cuda_mixture_sample(m, 9, 3, N, x, NULL), GFI_OK); /* GPU points */
      } else {
        gsl_rng *r = gfi_rng_stream(9, 3);
        CHECK_STATUS(gfi_model_sample(m, r, N, x), GFI_OK); /* CPU points */
        gsl_rng_free(r);
      }
      double cpu = NAN, gpu = NAN;
      CHECK_STATUS(gfi_ise_plancherel(m, KPOW(c[i].l), N, x, R, NULL, &cpu), GFI_OK);
      CHECK_STATUS(gfi_cuda_ise_plancherel(m, KPOW(c[i].l), N, x, R, NULL, &gpu, NULL), GFI_OK);
      double rel = fabs(gpu - cpu) / cpu;
      printf("  same points %-26s D=%zu N=%zu (%s points): CPU %.15g GPU %.15g rel %.2e\n", c[i].spec,
             D, N, src ? "CPU" : "GPU", cpu, gpu, rel);
      CHECK(rel < 1e-10, "%s: GPU ISE %.17g vs CPU %.17g", c[i].spec, gpu, cpu);
    }
    /* a non-finite point is refused as on the CPU */
    x[N / 2] = NAN;
    double v;
    CHECK_STATUS(gfi_cuda_ise_plancherel(m, KPOW(c[i].l), N, x, R, NULL, &v, NULL), GFI_ENONFINITE);
    free(x);
    gfi_model_free(m);
  }
}

/* (b) Monte Carlo against the exact MISE, bias2 and var against the exact parts */
static void test_against_exact(void) {
  struct {
    const char *spec;
    size_t D, N;
    int l;
    double R;
    size_t reps;
  } c[] = {{"mw:2", 1, 400, 4, 3, 60},
           {"mix2", 2, 150, 2, 1.2, 40}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    gfi_model *m = model(c[i].spec, c[i].D);
    double R[2] = {c[i].R, c[i].R};
    gfi_mise_opts o;
    gfi_mise_default_opts(&o);
    o.base.seed = 21 + i;
    gfi_mise_result ex, mc;
    CHECK_STATUS(gfi_mise_exact(m, KPOW(c[i].l), (double)c[i].N, R, &o, &ex), GFI_OK);
    CHECK_STATUS(gfi_cuda_mise_mc(m, KPOW(c[i].l), c[i].N, R, c[i].reps, &o, &mc, NULL, NULL), GFI_OK);
    double z = (mc.mise - ex.mise) / mc.se;
    printf("  MC vs exact %s D=%zu l=%d N=%zu R=%g reps=%zu: exact %.6g, GPU MC %.6g +- %.3g (z = %.2f); "
           "var %.4g vs %.4g\n", c[i].spec, c[i].D, c[i].l, c[i].N, c[i].R, c[i].reps, ex.mise, mc.mise,
           mc.se, z, mc.var, ex.var);
    CHECK(mc.se > 0 && fabs(z) < 4, "%s: exact %.6g, GPU MC %.6g +- %.3g (z = %.2f)", c[i].spec,
          ex.mise, mc.mise, mc.se, z);
    CHECK(mc.nreps == c[i].reps && mc.lo95 < mc.mise && mc.mise < mc.hi95, "interval");
    CHECK(fabs(mc.var - ex.var) < 0.25 * ex.var + 4 * mc.se, "%s: variance part %.4g vs exact %.4g",
          c[i].spec, mc.var, ex.var);
    CHECK_CLOSE(mc.bias2 + mc.var, mc.mise, 1e-12, 1e-300);
    gfi_model_free(m);
  }
}

/* (c) launch shape and repetition; each ISE is the Plancherel ISE of the
 * sampler's replication k */
static void test_reproducible(void) {
  gfi_model *m = model("mix2", 2);
  gfi_model *m1 = model("mw:2", 1);
  double R[2] = {1.2, 1.5};
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.seed = 5;
  const size_t reps = 3;
  for (int d = 0; d < 2; d++) {
    gfi_model *mm = d ? m : m1;
    size_t N = d ? 2500 : 5000, D = d ? 2 : 1; /* several chunks of 2048 points */
    double a[3], b[3], c[3], x1 = 0;
    gfi_mise_result ra, rb, rc;
    CHECK_STATUS(gfi_cuda_mise_set_tile(16), GFI_OK);
    CHECK_STATUS(gfi_cuda_mise_mc(mm, KPOW(2), N, R, reps, &o, &ra, a, NULL), GFI_OK);
    CHECK_STATUS(gfi_cuda_mise_set_tile(8), GFI_OK);
    CHECK_STATUS(gfi_cuda_mise_mc(mm, KPOW(2), N, R, reps, &o, &rb, b, NULL), GFI_OK);
    CHECK_STATUS(gfi_cuda_mise_set_tile(16), GFI_OK);
    o.parts = 0;
    CHECK_STATUS(gfi_cuda_mise_mc(mm, KPOW(2), N, R, reps, &o, &rc, c, NULL), GFI_OK);
    o.parts = 1;
    CHECK(memcmp(a, b, sizeof a) == 0 && memcmp(&ra.mise, &rb.mise, sizeof ra.mise) == 0 &&
          memcmp(&ra.var, &rb.var, sizeof ra.var) == 0, "D=%zu: tile 8 and 16 differ", D);
    CHECK(memcmp(a, c, sizeof a) == 0 && isnan(rc.var) && isfinite(ra.var),
          "D=%zu: the pooled pass changes the replications' ISE", D);
    CHECK_STATUS(gfi_cuda_mise_set_tile(7), GFI_EINVAL);
    double *x = malloc(N * D * sizeof *x);
    for (size_t k = 0; k < reps; k++) {
      CHECK_STATUS(gfi_cuda_mixture_sample(mm, o.base.seed, k, N, x, NULL), GFI_OK);
      CHECK_STATUS(gfi_cuda_ise_plancherel(mm, KPOW(2), N, x, R, NULL, &x1, NULL), GFI_OK);
      CHECK(x1 == a[k], "D=%zu replication %zu: %.17g vs %.17g", D, k, a[k], x1);
    }
    CHECK(a[0] != a[1] && a[1] != a[2], "replications differ");
    free(x);
  }
  gfi_model_free(m);
  gfi_model_free(m1);
}

static void test_errors(void) {
  gfi_model *lap = model("laplace", 1), *n3 = model("normal", 3), *n1 = model("normal", 1);
  double R[3] = {2, 2, 2};
  gfi_mise_result r;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  CHECK(!gfi_cuda_mise_mc_supported(lap, NULL) && gfi_cuda_mise_mc_supported(n1, NULL), "supported");
  CHECK_STATUS(gfi_cuda_mise_mc(lap, KPOW(2), 100, R, 4, NULL, &r, NULL, NULL), GFI_EUNSUPPORTED);
  o.ise = GFI_ISE_PLANCHEREL;
  CHECK(!gfi_cuda_mise_mc_supported(n3, &o), "plancherel in 3-D");
  CHECK_STATUS(gfi_cuda_mise_mc(n3, KPOW(2), 100, R, 4, &o, &r, NULL, NULL), GFI_EUNSUPPORTED);
  CHECK_STATUS(gfi_cuda_mise_mc(n1, KPOW(2), 100, R, 1, NULL, &r, NULL, NULL), GFI_EINVAL);
  CHECK_STATUS(gfi_cuda_mise_mc(n1, KPOW(9), 100, R, 4, NULL, &r, NULL, NULL), GFI_EORDER);
  CHECK_STATUS(gfi_cuda_mise_mc(n1, KPOW(2), 0, R, 4, NULL, &r, NULL, NULL), GFI_EEMPTY);
  gfi_model_free(lap);
  gfi_model_free(n3);
  gfi_model_free(n1);
}

/* the grid rule: each replication's ISE equals the CPU's gfi_ise_grid on
 * the sampler's points */
static void test_grid(void) {
  gfi_model *m = model("mw:2", 1);
  double R = 3, ise[2];
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.seed = 8;
  o.ise = GFI_ISE_GRID;
  gfi_mise_result r;
  const size_t N = 300;
  CHECK_STATUS(gfi_cuda_mise_mc(m, KPOW(4), N, &R, 2, &o, &r, ise, NULL), GFI_OK);
  CHECK(isnan(r.var) && isnan(r.bias2), "grid: no parts");
  double x[300], ref;
  gfi_kernel k;
  gfi_kernel_pow(&k, 4);
  for (size_t rep = 0; rep < 2; rep++) {
    CHECK_STATUS(gfi_cuda_mixture_sample(m, 8, rep, N, x, NULL), GFI_OK);
    CHECK_STATUS(gfi_ise_grid(m, &k, N, x, &R, NULL, NULL, &o, &ref, NULL), GFI_OK);
    CHECK_CLOSE(ise[rep], ref, 1e-10, 0);
  }
  gfi_model_free(m);
}

/* A polynomial phi: the Plancherel ISE on the same points as the CPU's
 * (kappa factors from the CPU's rule), and the grid rule's replications
 * (the density pair sum's polynomial path) against gfi_ise_grid; the
 * flat-top kernel is refused, naming k. */
static void test_poly(void) {
  const double a[] = {0, 0.3, 0.5, 0, 1};
  gfi_kernel kp;
  CHECK_STATUS(gfi_kernel_poly(&kp, 4, a), GFI_OK);
  for (size_t D = 1; D <= 2; D++) {
    gfi_model *m = model(D == 1 ? "mw:2" : "mix2", D);
    const size_t N = 2000;
    double R[2] = {2.5, 2}, *x = malloc(N * D * sizeof *x), cpu = NAN, gpu = NAN;
    CHECK_STATUS(gfi_cuda_mixture_sample(m, 4, 1, N, x, NULL), GFI_OK);
    CHECK_STATUS(gfi_ise_plancherel(m, &kp, N, x, R, NULL, &cpu), GFI_OK);
    CHECK_STATUS(gfi_cuda_ise_plancherel(m, &kp, N, x, R, NULL, &gpu, NULL), GFI_OK);
    double rel = fabs(gpu - cpu) / cpu;
    printf("  polynomial phi, same points D=%zu N=%zu: CPU %.15g GPU %.15g rel %.2e\n", D, N, cpu, gpu, rel);
    CHECK(rel < 1e-10, "poly D=%zu: GPU ISE %.17g vs CPU %.17g", D, gpu, cpu);
    free(x);
    gfi_model_free(m);
  }
  gfi_model *m = model("mw:2", 1);
  double R = 3, ise[2], x[300], ref;
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.seed = 8;
  o.ise = GFI_ISE_GRID;
  gfi_mise_result r;
  CHECK_STATUS(gfi_cuda_mise_mc(m, &kp, 300, &R, 2, &o, &r, ise, NULL), GFI_OK);
  for (size_t rep = 0; rep < 2; rep++) {
    CHECK_STATUS(gfi_cuda_mixture_sample(m, 8, rep, 300, x, NULL), GFI_OK);
    CHECK_STATUS(gfi_ise_grid(m, &kp, 300, x, &R, NULL, NULL, &o, &ref, NULL), GFI_OK);
    CHECK_CLOSE(ise[rep], ref, 1e-10, 0);
  }
  gfi_kernel kf;
  CHECK_STATUS(gfi_kernel_flattop(&kf, 0.5), GFI_OK);
  CHECK_STATUS(gfi_cuda_mise_mc(m, &kf, 300, &R, 2, &o, &r, NULL, NULL), GFI_EUNSUPPORTED);
  const char *pn = gfi_error_param(GFI_EUNSUPPORTED);
  CHECK(pn && !strcmp(pn, "k"), "flat-top refused naming %s", pn ? pn : "(none)");
  gfi_model_free(m);
}

int main(void) {
  int n = 0;
  if (gfi_cuda_device_count(&n) != GFI_OK || n == 0) {
    gfi_model *m = model("normal", 1);
    double R = 2;
    gfi_mise_result r;
    CHECK_STATUS(gfi_cuda_mise_mc(m, KPOW(2), 100, &R, 4, NULL, &r, NULL, NULL), GFI_ENODEV);
    gfi_model_free(m);
    if (check_summary("cuda-mise (no device)")) return 1;
    CHECK_SKIP("no CUDA device (cudaGetDeviceCount found none): GPU tests skipped");
  }
  test_errors();
  test_same_points();
  test_reproducible();
  test_grid();
  test_poly();
  test_against_exact();
#ifdef GFI_CUDA_EMU
  CHECK(gfi_cuda_emu_live_bytes() == 0, "%zu bytes of device memory still allocated",
        gfi_cuda_emu_live_bytes());
  CHECK(gfi_cuda_emu_faults() == 0, "%zu emulator faults (see stderr)", gfi_cuda_emu_faults());
  return check_summary("cuda-mise-emu");
#else
  return check_summary("cuda-mise-gpu");
#endif
}
