/* The CUDA engines' per-pair mathematics (cuda/gfi_cuda_math.h), compiled
 * here as plain C and run on the CPU, against gfi's CPU engines. Runs on every
 * machine, GPU or not: it checks what each GPU thread computes, in the order
 * the kernels compute it (the kernels call these same functions).
 *  - Philox: the block function and a port of cuRAND's curand_init / curand /
 *    curand4 (Philox4_32_10) give exactly the words of gfi_rng_stream.
 *  - The mixture sampler's points: moments within standard errors.
 *  - Density and NW sums, double and float, against gfi_density_eval and
 *    gfi_nw_eval; the float path's measured relative error is printed.
 *  - Attention forward and backward (the kernels' warp algorithm: groups of
 *    32 keys, online row maximum, gradient from the full product) against
 *    gfi_attn_forward / gfi_attn_backward, double and float. */
#include <string.h>
#include "check.h"
#include "gfi/gfi.h"
#include "gfi_cuda_math.h"

/* ------------------------------------------------------------ Philox */
static void test_philox(void) {
  const uint64_t seeds[3] = {0, 1, 0x123456789abcdefULL};
  const uint64_t streams[4] = {0, 1, 7, 0xfedcba9876543210ULL};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 4; b++) {
      gsl_rng *r = gfi_rng_stream(seeds[a], streams[b]);
      gfi_cu_curand_ref c;
      gfi_cu_curand_ref_init(&c, seeds[a], streams[b], 0);
      int same = 1;
      uint32_t words[4000];
      for (int k = 0; k < 4000; k++) {
        words[k] = (uint32_t)gsl_rng_get(r);
        if (words[k] != gfi_cu_curand_ref_next(&c)) same = 0;
      }
      CHECK(same, "curand() words differ from gfi_rng_stream (seed %d, stream %d)", a, b);
      /* curand_init with an offset of 4 p, then curand4: block p */
      for (uint64_t pos = 0; pos + 2 < 1000; pos += 37) {
        gfi_cu_curand_ref_init(&c, seeds[a], streams[b], 4 * pos);
        gfi_cu_u32x4 w = gfi_cu_curand_ref_next4(&c), w2 = gfi_cu_curand_ref_next4(&c);
        gfi_cu_u32x4 ref = gfi_cu_philox_block(seeds[a], streams[b], pos);
        CHECK(w.x == words[4 * pos] && w.y == words[4 * pos + 1] && w.z == words[4 * pos + 2] &&
                  w.w == words[4 * pos + 3] && ref.x == w.x && ref.w == w.w,
              "block %d", (int)pos);
        CHECK(w2.x == words[4 * pos + 4] && w2.w == words[4 * pos + 7], "next block %d", (int)pos);
      }
      /* an offset that is not a multiple of 4 */
      gfi_cu_curand_ref_init(&c, seeds[a], streams[b], 4 * 5 + 3);
      CHECK(gfi_cu_curand_ref_next(&c) == words[23] && gfi_cu_curand_ref_next(&c) == words[24],
            "offset 23");
      /* the library's block function */
      uint32_t ctr[4] = {5, 0, (uint32_t)streams[b], (uint32_t)(streams[b] >> 32)};
      uint32_t key[2] = {(uint32_t)seeds[a], (uint32_t)(seeds[a] >> 32)}, out[4];
      gfi_philox4x32_10(ctr, key, out);
      gfi_cu_u32x4 p = gfi_cu_philox_block(seeds[a], streams[b], 5);
      CHECK(out[0] == p.x && out[1] == p.y && out[2] == p.z && out[3] == p.w, "philox block");
      gsl_rng_free(r);
    }
  /* Where they part: at the end of a stream's 2^64 blocks cuRAND carries into
   * counter word 2 (the next subsequence); gfi wraps within the stream. */
  gfi_cu_curand_ref c;
  gfi_cu_curand_ref_init(&c, 1, 3, 0);
  c.ctr.x = c.ctr.y = 0xffffffffu;
  c.output = gfi_cu_philox(c.ctr, c.k0, c.k1);
  (void)gfi_cu_curand_ref_next4(&c);
  CHECK(c.ctr.x == 0 && c.ctr.y == 0 && c.ctr.z == 4, "cuRAND carries into the subsequence");
}

/* ------------------------------------------------------- the sampler */
static void test_sampler(void) {
  /* 2-D mixture: weights .3/.7, means (-1, 2) and (2, 0), covariances */
  const double w[2] = {0.3, 0.7}, mu[4] = {-1, 2, 2, 0};
  const double cov[8] = {1.0, 0.5, 0.5, 2.0, 0.25, 0.0, 0.0, 0.5};
  gfi_model *m;
  CHECK_STATUS(gfi_model_mixture(&m, 2, 2, w, mu, cov), GFI_OK);
  double chol[8] = {0}, cum[2] = {0.3, 1.0};
  for (int a = 0; a < 2; a++) { /* 2 x 2 Cholesky */
    const double *C = cov + 4 * a;
    double *L = chol + 4 * a;
    L[0] = sqrt(C[0]);
    L[2] = C[2] / L[0];
    L[3] = sqrt(C[3] - L[2] * L[2]);
  }
  const size_t n = 200000;
  const uint64_t B = gfi_cu_mix_blocks(2);
  double s1[2] = {0}, s2[3] = {0};
  gfi_cu_u32x4 wds[GFI_CU_MC_MAXD];
  for (size_t i = 0; i < n; i++) {
    for (uint64_t b = 0; b < B; b++) wds[b] = gfi_cu_philox_block(42, 3, i * B + b);
    double x[2];
    gfi_cu_mix_point(wds, 2, 2, cum, mu, chol, x);
    s1[0] += x[0];
    s1[1] += x[1];
    s2[0] += x[0] * x[0];
    s2[1] += x[0] * x[1];
    s2[2] += x[1] * x[1];
  }
  /* exact moments */
  double m0 = 0.3 * -1 + 0.7 * 2, m1 = 0.3 * 2 + 0.7 * 0;
  double e00 = 0.3 * (1.0 + 1) + 0.7 * (0.25 + 4), e11 = 0.3 * (2.0 + 4) + 0.7 * (0.5 + 0);
  double e01 = 0.3 * (0.5 + -2) + 0.7 * (0 + 0);
  double v0 = e00 - m0 * m0, v1 = e11 - m1 * m1;
  double se0 = sqrt(v0 / n), se1 = sqrt(v1 / n);
  CHECK(fabs(s1[0] / n - m0) < 4 * se0, "mean 0: %g vs %g", s1[0] / n, m0);
  CHECK(fabs(s1[1] / n - m1) < 4 * se1, "mean 1: %g vs %g", s1[1] / n, m1);
  /* second moments: se from a crude fourth-moment bound (|x| moments of the mixture) */
  CHECK(fabs(s2[0] / n - e00) < 0.05, "E x0^2 %g vs %g", s2[0] / n, e00);
  CHECK(fabs(s2[1] / n - e01) < 0.05, "E x0 x1 %g vs %g", s2[1] / n, e01);
  CHECK(fabs(s2[2] / n - e11) < 0.05, "E x1^2 %g vs %g", s2[2] / n, e11);
  gfi_model_free(m);
}

/* ------------------------------------------------- density and NW */
static void table_d(size_t n, size_t D, const double *x, const double *R, double *t) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < D; j++) {
      double a = R[j] * x[i * D + j];
      t[3 * (i * D + j)] = a;
      t[3 * (i * D + j) + 1] = sin(a);
      t[3 * (i * D + j) + 2] = cos(a);
    }
}
static void to_float(size_t n, const double *a, float *b) {
  for (size_t i = 0; i < n; i++) b[i] = (float)a[i];
}

/* The pair-sum kernel's arithmetic for one query: tiles of `tile` points
 * summed in T, tile sums added in double, chunks added in order. */
static double emulate_sum_d(size_t N, size_t D, int l, const double *qt, const double *kt,
                            const double *w, size_t tile) {
  double acc = 0;
  for (size_t b = 0; b < N; b += tile) {
    double t = 0;
    for (size_t p = b; p < b + tile && p < N; p++)
      t += (w ? w[p] : 1.0) * gfi_cu_pair_fourier_d((int)D, l, qt, kt + 3 * D * p);
    acc += t;
  }
  return acc;
}
static double emulate_sum_f(size_t N, size_t D, int l, const float *qt, const float *kt,
                            const float *w, size_t tile) {
  double acc = 0;
  for (size_t b = 0; b < N; b += tile) {
    float t = 0;
    for (size_t p = b; p < b + tile && p < N; p++)
      t += (w ? w[p] : 1.0f) * gfi_cu_pair_fourier_f((int)D, l, qt, kt + 3 * D * p);
    acc += t;
  }
  return acc;
}

static void test_density(void) {
  gsl_rng *r = gfi_rng_stream(7, 0);
  const size_t N = 3000, M = 60;
  double worst32 = 0, worst32_rel_peak = 0;
  for (size_t D = 1; D <= 5; D++)
    for (int l = 1; l <= 8; l++) {
      if (D > 2 && l != 4 && l != 1) continue;
      double *x = malloc(N * D * sizeof *x), *q = malloc(M * D * sizeof *q), R[5];
      double *kt = malloc(3 * N * D * sizeof *kt), *qt = malloc(3 * M * D * sizeof *qt);
      float *ktf = malloc(3 * N * D * sizeof *ktf), *qtf = malloc(3 * M * D * sizeof *qtf);
      double *wts = malloc(N * sizeof *wts), *wn = malloc(N * sizeof *wn);
      float *wf = malloc(N * sizeof *wf);
      double out[60], outw[60];
      for (size_t i = 0; i < N * D; i++) x[i] = 2.0 * (gsl_rng_uniform(r) - 0.5) * 3;
      for (size_t i = 0; i < M * D; i++) q[i] = 2.0 * (gsl_rng_uniform(r) - 0.5) * 3.5;
      q[0] = x[0]; /* u = 0 exactly on every axis */
      double wsum = 0;
      for (size_t i = 0; i < N; i++) wsum += (wts[i] = 0.5 + gsl_rng_uniform(r));
      for (size_t i = 0; i < N; i++) wf[i] = (float)(wn[i] = wts[i] / wsum * N);
      for (size_t j = 0; j < D; j++) R[j] = 1.5 + 0.5 * j;
      gfi_kernel k;
      gfi_kernel_pow(&k, l);
      gfi_density_plan *p, *pw;
      CHECK_STATUS(gfi_density_plan_fourier(&p, &k, N, D, x, NULL, R, NULL), GFI_OK);
      CHECK_STATUS(gfi_density_plan_fourier(&pw, &k, N, D, x, wts, R, NULL), GFI_OK);
      gfi_density_eval(p, M, q, out);
      gfi_density_eval(pw, M, q, outw);
      table_d(N, D, x, R, kt);
      table_d(M, D, q, R, qt);
      to_float(3 * N * D, kt, ktf);
      to_float(3 * M * D, qt, qtf);
      double C = 1;
      for (size_t j = 0; j < D; j++) C *= R[j] / k.A;
      double peak = 0;
      for (size_t m = 0; m < M; m++) peak = fmax(peak, fabs(out[m]));
      for (size_t m = 0; m < M; m++) {
        double g = C / N * emulate_sum_d(N, D, l, qt + 3 * D * m, kt, NULL, 128);
        double gw = C / N * emulate_sum_d(N, D, l, qt + 3 * D * m, kt, wn, 128);
        CHECK(fabs(g - out[m]) <= 1e-12 * fabs(out[m]) + 1e-14 * peak, "D %zu l %d q %zu: %.17g vs %.17g",
              D, l, m, g, out[m]);
        CHECK(fabs(gw - outw[m]) <= 1e-12 * fabs(outw[m]) + 1e-14 * peak, "weighted D %zu l %d", D, l);
        double f = C / N * emulate_sum_f(N, D, l, qtf + 3 * D * m, ktf, NULL, 128);
        double e = fabs(f - out[m]);
        if (l % 2 == 0 && out[m] > 1e-3 * peak) worst32 = fmax(worst32, e / out[m]);
        worst32_rel_peak = fmax(worst32_rel_peak, e / peak);
      }
      gfi_density_destroy(p);
      gfi_density_destroy(pw);
      free(x); free(q); free(kt); free(qt); free(ktf); free(qtf); free(wts); free(wn); free(wf);
    }
  printf("float32 density path (|R x| <= 17.5): max relative error %.3g (even l, p > 1e-3 peak), "
         "max error / peak %.3g\n", worst32, worst32_rel_peak);
  CHECK(worst32 < 2e-5, "float32 relative error %g", worst32);
  CHECK(worst32_rel_peak < 2e-6, "float32 error / peak %g", worst32_rel_peak);
  gsl_rng_free(r);
}

static void test_nw(void) {
  gsl_rng *r = gfi_rng_stream(8, 0);
  const size_t N = 2000, M = 40, D = 2, V = 3;
  double x[2000 * 2], y[2000 * 3], q[40 * 2], out[40 * 3], R[2] = {2.0, 1.5};
  double kt[3 * 2000 * 2], qt[3 * 40 * 2];
  for (size_t i = 0; i < N * D; i++) x[i] = 4 * (gsl_rng_uniform(r) - 0.5);
  for (size_t i = 0; i < N * V; i++) y[i] = gsl_rng_uniform(r) + (double)(i % V);
  for (size_t i = 0; i < M * D; i++) q[i] = 3 * (gsl_rng_uniform(r) - 0.5);
  table_d(N, D, x, R, kt);
  table_d(M, D, q, R, qt);
  for (int l = 1; l <= 6; l += 1) {
    gfi_kernel k;
    gfi_kernel_pow(&k, l);
    gfi_nw_plan *p;
    CHECK_STATUS(gfi_nw_plan_fourier(&p, &k, N, D, V, x, y, R, NULL), GFI_OK);
    unsigned char fl[40];
    gfi_nw_eval_flags(p, M, q, out, NULL, fl, NULL);
    for (size_t m = 0; m < M; m++) {
      double S = 0, A = 0, num[3] = {0};
      for (size_t i = 0; i < N; i++) {
        double K = gfi_cu_pair_fourier_d((int)D, l, qt + 3 * D * m, kt + 3 * D * i);
        S += K;
        A += fabs(K);
        for (size_t c = 0; c < V; c++) num[c] += K * y[i * V + c];
      }
      int ok = A > 0 && S > GFI_NW_DENOM_TOL * A;
      CHECK(ok == (fl[m] == GFI_NW_FLAG_OK), "flag of row %zu", m);
      if (ok)
        for (size_t c = 0; c < V; c++)
          CHECK_CLOSE(num[c] / S, out[m * V + c], 1e-11 / (S / A), 1e-13);
    }
    gfi_nw_destroy(p);
  }
  gsl_rng_free(r);
}

/* ------------------------------------------------------- attention */
#define WARP 32

/* Forward of row i as one warp computes it (T = double). */
#define EMU_ATTN(SUF, T)                                                                          \
  static void emu_fwd_##SUF(const gfi_attn_spec *sp, size_t L, size_t D, size_t Dv,                \
                            const double *Q, const double *K, const double *V, const double *Rd,   \
                            double *H, double *saved) {                                            \
    const int l = sp->kernel.l;                                                                          \
    for (size_t i = 0; i < L; i++) {                                                               \
      size_t jend = sp->causal ? i + 1 : L;                                                        \
      double E = -INFINITY;                                                                        \
      T S = 0, A = 0, N[64] = {0};                                                                 \
      for (size_t j0 = 0; j0 < jend; j0 += WARP) {                                                 \
        gfi_cu_aprod_##SUF pr[WARP];                                                               \
        double emax = GFI_CU_ZERO_EXP;                                                             \
        for (size_t b = 0; b < WARP && j0 + b < jend; b++) {                                       \
          size_t j = j0 + b;                                                                       \
          gfi_cu_aprod_init_##SUF(&pr[b]);                                                         \
          for (size_t d = 0; d < D; d++) {                                                         \
            double a = Rd[d] * Q[i * D + d], c = Rd[d] * K[j * D + d];                             \
            T sa = (T)sin(a), ca = (T)cos(a), sb = (T)sin(c), cb = (T)cos(c), s, ds;               \
            gfi_cu_sinc_both_##SUF((T)a - (T)c, sa * cb - ca * sb, ca * cb + sa * sb, &s, &ds);   \
            gfi_cu_aprod_push_##SUF(&pr[b], s, (int)d, (int)D);                                    \
          }                                                                                        \
          double e = gfi_cu_aprod_exp_##SUF(&pr[b]);                                               \
          if (e > emax) emax = e;                                                                  \
        }                                                                                          \
        if (emax > E) {                                                                            \
          T sc = E == -INFINITY ? (T)0 : gfi_cu_pow2_##SUF(l * (E - emax));                        \
          S *= sc;                                                                                 \
          A *= sc;                                                                                 \
          for (size_t c = 0; c < Dv; c++) N[c] *= sc;                                              \
          E = emax;                                                                                \
        }                                                                                          \
        for (size_t b = 0; b < WARP && j0 + b < jend; b++) {                                       \
          T w = gfi_cu_ipow_##SUF(gfi_cu_aprod_scaled_##SUF(&pr[b], E), l);                        \
          S += w;                                                                                  \
          A += w < 0 ? -w : w;                                                                     \
          for (size_t c = 0; c < Dv; c++) N[c] += w * (T)V[(j0 + b) * Dv + c];                     \
        }                                                                                          \
      }                                                                                            \
      int flag = !(S > (T)sp->denom_tol * A) || !(A > 0);                                          \
      for (size_t c = 0; c < Dv; c++) H[i * Dv + c] = flag ? NAN : (double)(N[c] / S);             \
      saved[2 * i] = E;                                                                            \
      saved[2 * i + 1] = flag ? NAN : (double)S;                                                   \
    }                                                                                              \
  }                                                                                                \
  /* Backward: pass 1 over query rows (dQ, dR), pass 2 over keys (dK, dV). */                     \
  static void emu_bwd_##SUF(const gfi_attn_spec *sp, size_t L, size_t D, size_t Dv,                \
                            const double *Q, const double *K, const double *V, const double *Rd,   \
                            const double *H, const double *saved, const double *dH, double *dQ,    \
                            double *dK, double *dV, double *dR) {                                  \
    const int l = sp->kernel.l;                                                                          \
    size_t np = sp->per_axis_R ? D : 1;                                                            \
    for (size_t k = 0; k < np; k++) dR[k] = 0;                                                     \
    for (size_t i = 0; i < L * D; i++) dK[i] = 0;                                                  \
    for (size_t i = 0; i < L * Dv; i++) dV[i] = 0;                                                 \
    for (size_t i = 0; i < L; i++) {                                                               \
      double Si = saved[2 * i + 1], E = saved[2 * i];                                              \
      if (isnan(Si)) {                                                                             \
        for (size_t d = 0; d < D; d++) dQ[i * D + d] = NAN;                                        \
        continue;                                                                                  \
      }                                                                                            \
      double P = 0;                                                                                \
      for (size_t c = 0; c < Dv; c++) P += dH[i * Dv + c] * H[i * Dv + c];                         \
      T invS = (T)(1.0 / Si);                                                                      \
      size_t jend = sp->causal ? i + 1 : L;                                                        \
      for (size_t d = 0; d < D; d++) dQ[i * D + d] = 0;                                            \
      for (size_t j = 0; j < jend; j++) {                                                          \
        T dot = 0;                                                                                 \
        for (size_t c = 0; c < Dv; c++) dot += (T)dH[i * Dv + c] * (T)V[j * Dv + c];               \
        T coef = (dot - (T)P) * invS;                                                              \
        gfi_cu_aprod_##SUF pr;                                                                     \
        gfi_cu_aprod_init_##SUF(&pr);                                                              \
        T s[256], ds[256], u[256];                                                                 \
        for (size_t d = 0; d < D; d++) {                                                           \
          double a = Rd[d] * Q[i * D + d], c = Rd[d] * K[j * D + d];                               \
          T sa = (T)sin(a), ca = (T)cos(a), sb = (T)sin(c), cb = (T)cos(c);                        \
          u[d] = (T)a - (T)c;                                                                      \
          gfi_cu_sinc_both_##SUF(u[d], sa * cb - ca * sb, ca * cb + sa * sb, &s[d], &ds[d]);       \
          gfi_cu_aprod_push_##SUF(&pr, s[d], (int)d, (int)D);                                      \
        }                                                                                          \
        T Pt = gfi_cu_aprod_scaled_##SUF(&pr, E), Pz = gfi_cu_aprod_nz_scaled_##SUF(&pr, E);       \
        T wt = gfi_cu_ipow_##SUF(Pt, l);                                                           \
        for (size_t d = 0; d < D; d++) {                                                           \
          T G = gfi_cu_attn_grad_##SUF(l, pr.nz, Pt, Pz, s[d], ds[d]);                             \
          double t = (double)(coef * G);                                                           \
          dQ[i * D + d] += Rd[d] * t;                                                              \
          dK[j * D + d] -= Rd[d] * t;                                                              \
          dR[sp->per_axis_R ? d : 0] += t * (double)u[d] / Rd[d];                                  \
        }                                                                                          \
        for (size_t c = 0; c < Dv; c++) dV[j * Dv + c] += (double)(wt * invS) * dH[i * Dv + c];    \
      }                                                                                            \
    }                                                                                              \
  }
EMU_ATTN(d, double)
EMU_ATTN(f, float)

static double max_rel(size_t n, const double *a, const double *b) {
  double mx = 0, sc = 0;
  for (size_t i = 0; i < n; i++) sc = fmax(sc, fabs(b[i]));
  for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs(a[i] - b[i]));
  return sc > 0 ? mx / sc : mx;
}

static void test_attention(void) {
  gsl_rng *r = gfi_rng_stream(9, 0);
  const size_t L = 70, Dv = 5;
  const size_t Ds[2] = {3, 64};
  double worst32 = 0, worst32b = 0;
  for (int a = 0; a < 2; a++)
    for (int l = 1; l <= 4; l++)
      for (int causal = 0; causal <= 1; causal++) {
        size_t D = Ds[a];
        gfi_attn_spec sp;
        gfi_attn_default_spec(&sp);
        sp.kernel = *KPOW(l);
        sp.causal = causal;
        sp.per_axis_R = (l % 2 == 0);
        size_t np = sp.per_axis_R ? D : 1;
        double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K);
        double *V = malloc(L * Dv * sizeof *V), *dH = malloc(L * Dv * sizeof *dH);
        double *H = malloc(L * Dv * sizeof *H), *He = malloc(L * Dv * sizeof *He);
        double *sv = malloc(2 * L * sizeof *sv), *sve = malloc(2 * L * sizeof *sve);
        double *dQ = malloc(L * D * sizeof *dQ), *dK = malloc(L * D * sizeof *dK);
        double *dV = malloc(L * Dv * sizeof *dV), *dR = malloc(np * sizeof *dR);
        double *dQe = malloc(L * D * sizeof *dQ), *dKe = malloc(L * D * sizeof *dK);
        double *dVe = malloc(L * Dv * sizeof *dV), *dRe = malloc(np * sizeof *dR);
        double R[64];
        double sd = D > 8 ? 0.15 : 0.8;
        for (size_t i = 0; i < L * D; i++) Q[i] = sd * (gsl_rng_uniform(r) - 0.5) * 3;
        for (size_t i = 0; i < L * D; i++) K[i] = sd * (gsl_rng_uniform(r) - 0.5) * 3;
        for (size_t i = 0; i < L * Dv; i++) V[i] = gsl_rng_uniform(r) - 0.3;
        for (size_t i = 0; i < L * Dv; i++) dH[i] = gsl_rng_uniform(r) - 0.5;
        for (size_t d = 0; d < np; d++) R[d] = 1.0 + 0.01 * d;
        K[3 * D + 1] = Q[5 * D + 1];            /* u = 0 on one axis */
        K[4 * D] = Q[6 * D] + M_PI / R[0];      /* a factor at a zero of sinc */
        double Rd[64];
        for (size_t d = 0; d < D; d++) Rd[d] = sp.per_axis_R ? R[d] : R[0];
        gfi_attn_plan *p;
        CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
        int st = gfi_attn_forward(p, Q, K, V, R, H, sv, NULL);
        CHECK(st == GFI_OK || st == GFI_EDENOM, "forward %d", st);
        emu_fwd_d(&sp, L, D, Dv, Q, K, V, Rd, He, sve);
        int flags_same = 1;
        for (size_t i = 0; i < L; i++) {
          if (isnan(sv[2 * i + 1]) != isnan(sve[2 * i + 1])) flags_same = 0;
          if (isnan(sv[2 * i + 1])) continue;
          CHECK(sv[2 * i] == sve[2 * i], "E_%zu %g vs %g (D %zu l %d)", i, sv[2 * i], sve[2 * i], D, l);
          CHECK_CLOSE(sv[2 * i + 1], sve[2 * i + 1], 1e-12, 0);
          for (size_t c = 0; c < Dv; c++) CHECK_CLOSE(H[i * Dv + c], He[i * Dv + c], 1e-10, 1e-12);
        }
        CHECK(flags_same, "flagged rows differ (D %zu l %d)", D, l);
        st = gfi_attn_backward(p, Q, K, V, R, H, sv, dH, dQ, dK, dV, dR, NULL);
        emu_bwd_d(&sp, L, D, Dv, Q, K, V, Rd, H, sv, dH, dQe, dKe, dVe, dRe);
        double eq = 0;
        for (size_t i = 0; i < L; i++)
          if (!isnan(sv[2 * i + 1]))
            for (size_t d = 0; d < D; d++) eq = fmax(eq, fabs(dQ[i * D + d] - dQe[i * D + d]));
        double sq = 0;
        for (size_t i = 0; i < L * D; i++) if (isfinite(dQ[i])) sq = fmax(sq, fabs(dQ[i]));
        CHECK(eq <= 1e-10 * sq, "dQ D %zu l %d causal %d: %g of %g", D, l, causal, eq, sq);
        CHECK(max_rel(L * D, dKe, dK) < 1e-10, "dK D %zu l %d: %g", D, l, max_rel(L * D, dKe, dK));
        CHECK(max_rel(L * Dv, dVe, dV) < 1e-10, "dV D %zu l %d", D, l);
        CHECK(max_rel(np, dRe, dR) < 1e-9, "dR D %zu l %d: %g", D, l, max_rel(np, dRe, dR));
        /* float: measured error against the double CPU engine */
        if (l % 2 == 0) {
          emu_fwd_f(&sp, L, D, Dv, Q, K, V, Rd, He, sve);
          worst32 = fmax(worst32, max_rel(L * Dv, He, H));
          emu_bwd_f(&sp, L, D, Dv, Q, K, V, Rd, H, sv, dH, dQe, dKe, dVe, dRe);
          worst32b = fmax(worst32b, fmax(max_rel(L * D, dQe, dQ), max_rel(L * D, dKe, dK)));
        }
        gfi_attn_destroy(p);
        free(Q); free(K); free(V); free(dH); free(H); free(He); free(sv); free(sve);
        free(dQ); free(dK); free(dV); free(dR); free(dQe); free(dKe); free(dVe); free(dRe);
      }
  printf("float32 attention (even l): forward max error / max |H| %.3g, backward (dQ, dK) %.3g\n",
         worst32, worst32b);
  CHECK(worst32 < 1e-5, "float32 forward %g", worst32);
  CHECK(worst32b < 1e-4, "float32 backward %g", worst32b);
  gsl_rng_free(r);
}

int main(void) {
  test_philox();
  test_sampler();
  test_density();
  test_nw();
  test_attention();
  return check_summary("cuda-math");
}
