/* Fourier and Gaussian attention: forward against a plain brute force (a sin
 * per factor, naive products), the scaled form at D = 128 against a log-domain
 * brute force where the naive products underflow, every gradient against
 * central finite differences (including q_d = k_d exactly and a factor at
 * u = pi), the backward against a brute-force gradient at L > 1024, the
 * Gaussian/softmax equivalence for keys of equal norm, flagged rows, thread-
 * count determinism bit for bit, and every error status. */
#include <string.h>
#include <gsl/gsl_errno.h>
#include "check.h"
#include "gfi/gfi.h"

static void fill_normal(gsl_rng *r, size_t n, double sd, double *x) {
  for (size_t i = 0; i < n; i++) {
    double u1 = gsl_rng_uniform_pos(r), u2 = gsl_rng_uniform(r);
    x[i] = sd * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
  }
}

static double sinc1(double u) { return u == 0 ? 1.0 : sin(u) / u; }

/* Brute force: weights with sin per factor, naive products, direct ratio. */
static void brute_forward(const gfi_attn_spec *sp, size_t L, size_t D, size_t Dv, const double *Q,
                          const double *K, const double *V, const double *R, double *H) {
  for (size_t i = 0; i < L; i++) {
    size_t jend = sp->causal ? i + 1 : L;
    double S = 0;
    for (size_t c = 0; c < Dv; c++) H[i * Dv + c] = 0;
    for (size_t j = 0; j < jend; j++) {
      double w = 1;
      if (sp->kind == GFI_ATTN_GAUSS) {
        double d2 = 0;
        for (size_t d = 0; d < D; d++) d2 += (Q[i * D + d] - K[j * D + d]) * (Q[i * D + d] - K[j * D + d]);
        w = exp(-d2 / (2 * R[0] * R[0]));
      } else {
        for (size_t d = 0; d < D; d++) {
          double Rd = sp->per_axis_R ? R[d] : R[0];
          w *= pow(sinc1(Rd * (Q[i * D + d] - K[j * D + d])), sp->kernel.l);
        }
      }
      S += w;
      for (size_t c = 0; c < Dv; c++) H[i * Dv + c] += w * V[j * Dv + c];
    }
    for (size_t c = 0; c < Dv; c++) H[i * Dv + c] /= S;
  }
}

/* Brute-force gradient of sum(C .* H): product rule with an explicit loop over
 * the other factors (O(D^2) per pair), the L x L weights formed. Fourier only. */
static void brute_backward(const gfi_attn_spec *sp, size_t L, size_t D, size_t Dv, const double *Q,
                           const double *K, const double *V, const double *R, const double *C,
                           double *dQ, double *dK, double *dV, double *dR) {
  size_t np = sp->per_axis_R ? D : 1;
  double *H = malloc(L * Dv * sizeof *H), *S = calloc(L, sizeof *S);
  brute_forward(sp, L, D, Dv, Q, K, V, R, H);
  memset(dQ, 0, L * D * sizeof *dQ);
  memset(dK, 0, L * D * sizeof *dK);
  memset(dV, 0, L * Dv * sizeof *dV);
  memset(dR, 0, np * sizeof *dR);
  double *s = malloc(D * sizeof *s), *ds = malloc(D * sizeof *ds);
  for (size_t i = 0; i < L; i++) {
    size_t jend = sp->causal ? i + 1 : L;
    for (size_t j = 0; j < jend; j++) {
      double w = 1;
      for (size_t d = 0; d < D; d++) {
        double Rd = sp->per_axis_R ? R[d] : R[0];
        w *= pow(sinc1(Rd * (Q[i * D + d] - K[j * D + d])), sp->kernel.l);
      }
      S[i] += w;
    }
  }
  for (size_t i = 0; i < L; i++) {
    size_t jend = sp->causal ? i + 1 : L;
    double P = 0;
    for (size_t c = 0; c < Dv; c++) P += C[i * Dv + c] * H[i * Dv + c];
    for (size_t j = 0; j < jend; j++) {
      double a = 0, w = 1;
      for (size_t c = 0; c < Dv; c++) a += C[i * Dv + c] * V[j * Dv + c];
      double g = (a - P) / S[i];
      for (size_t d = 0; d < D; d++) {
        double Rd = sp->per_axis_R ? R[d] : R[0];
        double u = Rd * (Q[i * D + d] - K[j * D + d]);
        s[d] = sinc1(u);
        ds[d] = gfi_sinc_deriv(u);
        w *= pow(s[d], sp->kernel.l);
      }
      for (size_t c = 0; c < Dv; c++) dV[j * Dv + c] += w / S[i] * C[i * Dv + c];
      for (size_t d = 0; d < D; d++) {
        double other = 1;
        for (size_t e = 0; e < D; e++)
          if (e != d) other *= pow(s[e], sp->kernel.l);
        double G = sp->kernel.l * pow(s[d], sp->kernel.l - 1) * ds[d] * other;
        double Rd = sp->per_axis_R ? R[d] : R[0];
        dQ[i * D + d] += g * G * Rd;
        dK[j * D + d] -= g * G * Rd;
        dR[sp->per_axis_R ? d : 0] += g * G * (Q[i * D + d] - K[j * D + d]);
      }
    }
  }
  free(s);
  free(ds);
  free(H);
  free(S);
}

/* max_k |a_k - b_k| / max_k |b_k| */
static double rel_err(const double *a, const double *b, size_t n) {
  double e = 0, m = 0;
  for (size_t k = 0; k < n; k++) {
    if (fabs(a[k] - b[k]) > e) e = fabs(a[k] - b[k]);
    if (fabs(b[k]) > m) m = fabs(b[k]);
  }
  return m > 0 ? e / m : e;
}

/* ------------------------------------------------------ finite differences */

typedef struct {
  const gfi_attn_plan *plan;
  size_t L, D, Dv, np;
  double *Q, *K, *V, *R, *C, *H;
} fd_ctx;

static double loss(fd_ctx *c) {
  int st = gfi_attn_forward(c->plan, c->Q, c->K, c->V, c->R, c->H, NULL, NULL);
  if (st) return NAN;
  double f = 0;
  for (size_t k = 0; k < c->L * c->Dv; k++) f += c->C[k] * c->H[k];
  return f;
}

/* Richardson-extrapolated central difference (error O(h^4)) of the loss in
 * x[k] with step h. */
static double fd_one(fd_ctx *c, double *x, size_t k, double h) {
  double x0 = x[k];
  x[k] = x0 + h;
  double f1 = loss(c);
  x[k] = x0 - h;
  double fm1 = loss(c);
  x[k] = x0 + 2 * h;
  double f2 = loss(c);
  x[k] = x0 - 2 * h;
  double fm2 = loss(c);
  x[k] = x0;
  return (8 * (f1 - fm1) - (f2 - fm2)) / (12 * h);
}

/* Largest error of an analytic gradient g against finite differences over n
 * entries of x, each measured as |g - fd| / (|fd| + 1e-3 max|fd|): relative
 * where an entry is not tiny, and relative to the gradient's scale for entries
 * a thousand times below it. */
static double fd_check(fd_ctx *c, double *x, const double *g, size_t n, const double *step,
                       size_t stride) {
  double *fd = malloc(n * sizeof *fd), scale = 0, worst = 0;
  for (size_t k = 0; k < n; k++) {
    fd[k] = fd_one(c, x, k, step[stride ? k % stride : 0]);
    if (fabs(fd[k]) > scale) scale = fabs(fd[k]);
  }
  for (size_t k = 0; k < n; k++) {
    double e = fabs(g[k] - fd[k]) / (fabs(fd[k]) + 1e-3 * scale + 1e-300);
    if (e > worst) worst = e;
  }
  free(fd);
  return worst;
}

static double worst_fd = 0;

static void gradient_case(gsl_rng *r, const gfi_attn_spec *sp, size_t L, size_t D, size_t Dv,
                          const double *Rin, int special, double cluster) {
  size_t np = sp->kind == GFI_ATTN_FOURIER && sp->per_axis_R ? D : 1;
  double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K);
  double *V = malloc(L * Dv * sizeof *V), *C = malloc(L * Dv * sizeof *C);
  double *H = malloc(L * Dv * sizeof *H), *Hb = malloc(L * Dv * sizeof *Hb);
  double *dQ = malloc(L * D * sizeof *dQ), *dK = malloc(L * D * sizeof *dK);
  double *dV = malloc(L * Dv * sizeof *dV), dR[256], R[256], saved[64];
  for (size_t k = 0; k < np; k++) R[k] = Rin[k];
  if (cluster > 0) {
    /* keys near their queries, off-diagonal u mostly inside the main lobe:
     * denominators stay positive for odd l */
    fill_normal(r, L * D, 0.6, Q);
    fill_normal(r, L * D, cluster, K);
    for (size_t k = 0; k < L * D; k++) K[k] += Q[k];
  } else {
    /* every u_d = R (q_d - k_d) near 2.8, where sinc = 0.12, so the products
     * over D = 128 axes underflow for l >= 3; the spread of u is scaled by
     * 1/(l sqrt(D)) so that the log-weights of a row differ by O(1) and no
     * single key dominates (the gradients stay of order one) */
    double sd = 0.25 / (R[0] * sp->kernel.l * sqrt((double)D));
    fill_normal(r, L * D, sd, Q);
    fill_normal(r, L * D, sd, K);
    for (size_t k = 0; k < L * D; k++) Q[k] += 2.8 / R[0];
  }
  fill_normal(r, L * Dv, 1.0, V);
  fill_normal(r, L * Dv, 1.0, C);
  if (special) {
    /* q_d = k_d exactly: the whole pair (2, 2) and axis 1 of pair (3, 1) */
    for (size_t d = 0; d < D; d++) K[2 * D + d] = Q[2 * D + d];
    K[1 * D + 1] = Q[3 * D + 1];
    /* a factor at u = pi exactly: R_0 = 1, q_00 = 0, k_10 = -pi */
    Q[0] = 0;
    K[0] = 0.05; /* row 0 keeps its own key close */
    K[1 * D + 0] = -M_PI;
    Q[1 * D + 0] = -M_PI + 0.05; /* and row 1 its own */
  }
  gfi_attn_plan *p;
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = 1; /* thousands of tiny forwards */
  CHECK_STATUS(gfi_attn_plan_create(&p, sp, L, D, Dv, &o), GFI_OK);
  gfi_attn_info info;
  CHECK_STATUS(gfi_attn_forward(p, Q, K, V, R, H, saved, &info), GFI_OK);
  CHECK(info.min_ratio > 0.05, "kind=%d l=%d per_axis=%d causal=%d: test data keep denominators away from 0 (%g)",
        sp->kind, sp->kernel.l, sp->per_axis_R, sp->causal, info.min_ratio);
  if (cluster == 0 && sp->kernel.l >= 3)
    for (size_t i = 0; i < L; i++)
      CHECK(sp->kernel.l * saved[2 * i] < -1075, "naive products underflow (row %zu: 2^%g)", i, sp->kernel.l * saved[2 * i]);
  brute_forward(sp, L, D, Dv, Q, K, V, R, Hb);
  CHECK(rel_err(H, Hb, L * Dv) < 1e-12, "l=%d forward vs brute %.3g", sp->kernel.l, rel_err(H, Hb, L * Dv));
  CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, saved, C, dQ, dK, dV, dR, &info), GFI_OK);
  fd_ctx c = {p, L, D, Dv, np, Q, K, V, R, C, H};
  double hq[256], hr[256], hv = 1e-2;
  for (size_t d = 0; d < D; d++) {
    double Rd = sp->kind == GFI_ATTN_GAUSS ? 1.0 / R[0] : (np == D ? R[d] : R[0]);
    hq[d] = 1e-3 / Rd; /* u moves by 1e-3 */
  }
  for (size_t k = 0; k < np; k++) hr[k] = 1e-4 * R[k];
  double eq = fd_check(&c, Q, dQ, L * D, hq, D);
  double ek = fd_check(&c, K, dK, L * D, hq, D);
  double ev = fd_check(&c, V, dV, L * Dv, &hv, 0);
  double er = fd_check(&c, R, dR, np, hr, np);
  double e = fmax(fmax(eq, ek), fmax(ev, er));
  if (e > worst_fd) worst_fd = e;
  CHECK(e <= 1e-6, "kind=%d l=%d per_axis=%d causal=%d D=%zu: FD errors dQ %.3g dK %.3g dV %.3g dR %.3g",
        sp->kind, sp->kernel.l, sp->per_axis_R, sp->causal, D, eq, ek, ev, er);
  gfi_attn_destroy(p);
  free(Q);
  free(K);
  free(V);
  free(C);
  free(H);
  free(Hb);
  free(dQ);
  free(dK);
  free(dV);
}

/* Softmax attention: forward against the plain max-shifted softmax sum,
 * causal too; the backward against central finite differences of
 * sum(dH * H); the same bits for 1 and 3 threads. */
static void softmax_brute(size_t L, size_t D, size_t Dv, const double *Q, const double *K, const double *V,
                          double scale, int causal, double *H) {
  for (size_t i = 0; i < L; i++) {
    size_t n = causal ? i + 1 : L;
    double m = -INFINITY;
    for (size_t j = 0; j < n; j++) {
      double s = 0;
      for (size_t d = 0; d < D; d++) s += Q[i * D + d] * K[j * D + d];
      m = fmax(m, scale * s);
    }
    double den = 0;
    for (size_t c = 0; c < Dv; c++) H[i * Dv + c] = 0;
    for (size_t j = 0; j < n; j++) {
      double s = 0;
      for (size_t d = 0; d < D; d++) s += Q[i * D + d] * K[j * D + d];
      double w = exp(scale * s - m);
      den += w;
      for (size_t c = 0; c < Dv; c++) H[i * Dv + c] += w * V[j * Dv + c];
    }
    for (size_t c = 0; c < Dv; c++) H[i * Dv + c] /= den;
  }
}

static double softmax_loss(size_t L, size_t D, size_t Dv, const double *Q, const double *K, const double *V,
                           double scale, int causal, const double *dH, double *H) {
  softmax_brute(L, D, Dv, Q, K, V, scale, causal, H);
  double s = 0;
  for (size_t k = 0; k < L * Dv; k++) s += dH[k] * H[k];
  return s;
}

static void test_softmax(gsl_rng *r) {
  const size_t L = 37, D = 5, Dv = 3;
  double Q[37 * 5], K[37 * 5], V[37 * 3], H[37 * 3], Hb[37 * 3], H3[37 * 3], dH[37 * 3];
  double dQ[37 * 5], dK[37 * 5], dV[37 * 3], g3[37 * 5];
  fill_normal(r, L * D, 1.5, Q);
  fill_normal(r, L * D, 1.5, K);
  fill_normal(r, L * Dv, 1.0, V);
  fill_normal(r, L * Dv, 1.0, dH);
  gfi_opts o1, o3;
  gfi_default_opts(&o1);
  gfi_default_opts(&o3);
  o1.nthreads = 1, o3.nthreads = 3;
  for (int causal = 0; causal < 2; causal++) {
    double scale = 1 / sqrt((double)D);
    CHECK_STATUS(gfi_attn_softmax_forward(L, D, Dv, Q, K, V, scale, causal, &o1, H), GFI_OK);
    CHECK_STATUS(gfi_attn_softmax_forward(L, D, Dv, Q, K, V, scale, causal, &o3, H3), GFI_OK);
    softmax_brute(L, D, Dv, Q, K, V, scale, causal, Hb);
    double e = 0;
    for (size_t k = 0; k < L * Dv; k++) e = fmax(e, fabs(H[k] - Hb[k]));
    CHECK(e < 1e-12, "softmax forward (causal %d) vs brute force: %g", causal, e);
    CHECK(memcmp(H, H3, sizeof H) == 0, "softmax forward depends on the thread count");
    CHECK_STATUS(gfi_attn_softmax_backward(L, D, Dv, Q, K, V, scale, causal, &o1, dH, dQ, dK, dV), GFI_OK);
    CHECK_STATUS(gfi_attn_softmax_backward(L, D, Dv, Q, K, V, scale, causal, &o3, dH, g3, g3, g3), GFI_OK);
    double *xs[3] = {Q, K, V}, *gs[3] = {dQ, dK, dV};
    size_t ns[3] = {L * D, L * D, L * Dv};
    for (int a = 0; a < 3; a++) {
      double worst = 0, gmax = 0;
      for (size_t k = 0; k < ns[a]; k++) {
        double x0 = xs[a][k], h = 1e-5 * fmax(1, fabs(x0));
        xs[a][k] = x0 + h;
        double lp = softmax_loss(L, D, Dv, Q, K, V, scale, causal, dH, Hb);
        xs[a][k] = x0 - h;
        double lm = softmax_loss(L, D, Dv, Q, K, V, scale, causal, dH, Hb);
        xs[a][k] = x0;
        worst = fmax(worst, fabs((lp - lm) / (2 * h) - gs[a][k]));
        gmax = fmax(gmax, fabs(gs[a][k]));
      }
      CHECK(worst < 1e-7 * fmax(1, gmax), "softmax d%c (causal %d) vs finite differences: %g (largest %g)", "QKV"[a],
            causal, worst, gmax);
    }
  }
  CHECK_STATUS(gfi_attn_softmax_forward(L, D, Dv, Q, K, V, 0, 0, NULL, H), GFI_EBANDWIDTH);
  CHECK_STATUS(gfi_attn_softmax_forward(0, D, Dv, Q, K, V, 1, 0, NULL, H), GFI_EEMPTY);
  Q[3] = NAN;
  CHECK_STATUS(gfi_attn_softmax_forward(L, D, Dv, Q, K, V, 1, 0, NULL, H), GFI_ENONFINITE);
}

int main(void) {
  gsl_set_error_handler_off();
  gsl_rng *r = gfi_rng_stream(4242, 0);
  test_softmax(r);

  /* 1. forward against brute force: every l, scalar and per-axis R, causal or
   * not, L not a multiple of the block (130 = 2 blocks + 2) */
  {
    const size_t L = 130, D = 3, Dv = 2;
    double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K), *V = malloc(L * Dv * sizeof *V);
    double *H = malloc(L * Dv * sizeof *H), *Hb = malloc(L * Dv * sizeof *Hb);
    fill_normal(r, L * D, 1.0, Q);
    fill_normal(r, L * D, 0.1, K);
    for (size_t k = 0; k < L * D; k++) K[k] += Q[k];
    fill_normal(r, L * Dv, 1.0, V);
    K[5 * D + 1] = Q[5 * D + 1];
    for (int l = 1; l <= 8; l++)
      for (int pa = 0; pa < 2; pa++)
        for (int causal = 0; causal < 2; causal++) {
          gfi_attn_spec sp;
          gfi_attn_default_spec(&sp);
          sp.kernel = *KPOW(l);
          sp.per_axis_R = pa;
          sp.causal = causal;
          /* odd l: radii small enough that denominators stay positive */
          double R[3] = {0.6, 1.3, 0.9};
          if (l % 2)
            for (int d = 0; d < 3; d++) R[d] *= 0.4;
          gfi_attn_plan *p;
          CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
          gfi_attn_info info;
          CHECK_STATUS(gfi_attn_forward(p, Q, K, V, R, H, NULL, &info), GFI_OK);
          CHECK(info.nflagged == 0 && info.first_flagged == L, "no flags");
          brute_forward(&sp, L, D, Dv, Q, K, V, R, Hb);
          double e = rel_err(H, Hb, L * Dv);
          CHECK(e < 1e-12, "l=%d per_axis=%d causal=%d: forward error %.3g", l, pa, causal, e);
          gfi_attn_destroy(p);
        }
    free(Q);
    free(K);
    free(V);
    free(H);
    free(Hb);
  }

  /* 2. D = 128, radii large enough that every naive product underflows
   * (0/0), against a log-domain brute force. */
  {
    const size_t L = 40, D = 128, Dv = 4;
    double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K), *V = malloc(L * Dv * sizeof *V);
    double *H = malloc(L * Dv * sizeof *H), R = 20.0;
    fill_normal(r, L * D, 1.0, Q);
    fill_normal(r, L * D, 1.0, K);
    fill_normal(r, L * Dv, 1.0, V);
    for (int l = 2; l <= 8; l += 2) {
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kernel = *KPOW(l);
      gfi_attn_plan *p;
      CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
      CHECK_STATUS(gfi_attn_forward(p, Q, K, V, &R, H, NULL, NULL), GFI_OK);
      double worst = 0, maxlog = -INFINITY;
      for (size_t i = 0; i < L; i++) {
        double lw[40], mx = -INFINITY;
        for (size_t j = 0; j < L; j++) {
          double s = 0;
          for (size_t d = 0; d < D; d++) s += l * log(fabs(sinc1(R * (Q[i * D + d] - K[j * D + d]))));
          lw[j] = s;
          if (s > mx) mx = s;
        }
        if (mx > maxlog) maxlog = mx;
        double S = 0, N[4] = {0};
        for (size_t j = 0; j < L; j++) {
          double w = exp(lw[j] - mx);
          S += w;
          for (size_t c = 0; c < Dv; c++) N[c] += w * V[j * Dv + c];
        }
        for (size_t c = 0; c < Dv; c++) worst = fmax(worst, fabs(H[i * Dv + c] - N[c] / S));
      }
      CHECK(maxlog < -745, "l=%d: naive products really underflow (largest log weight %g)", l, maxlog);
      CHECK(worst < 1e-11, "l=%d D=128: error against log-domain brute force %.3g", l, worst);
      gfi_attn_destroy(p);
    }
    free(Q);
    free(K);
    free(V);
    free(H);
  }

  /* 3. every gradient against finite differences */
  {
    double R5[5] = {1.0, 0.8, 1.6, 1.2, 0.5}, R1 = 1.0;
    for (int l = 1; l <= 8; l++)
      for (int pa = 0; pa < 2; pa++)
        for (int causal = 0; causal < 2; causal++) {
          gfi_attn_spec sp;
          gfi_attn_default_spec(&sp);
          sp.kernel = *KPOW(l);
          sp.per_axis_R = pa;
          sp.causal = causal;
          gradient_case(r, &sp, 7, 5, 3, pa ? R5 : &R1, 1, 0.3);
        }
    /* D = 128 where naive products underflow: scaled products and gradients */
    double R128 = 4.0;
    for (int l = 1; l <= 8; l++) {
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kernel = *KPOW(l);
      sp.causal = l % 2;
      gradient_case(r, &sp, 4, 128, 2, &R128, 0, 0);
    }
    /* Gaussian kernel: dQ, dK, dV and d/dsigma */
    for (int causal = 0; causal < 2; causal++) {
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kind = GFI_ATTN_GAUSS;
      sp.causal = causal;
      double sig = 1.3;
      gradient_case(r, &sp, 7, 5, 3, &sig, 1, 0.5);
    }
    printf("largest finite-difference error: %.3g\n", worst_fd);
  }

  /* 4. L = 1100 (beyond one GPU thread block): backward against the brute
   * force gradient */
  {
    const size_t L = 1100, D = 3, Dv = 2;
    double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K), *V = malloc(L * Dv * sizeof *V);
    double *C = malloc(L * Dv * sizeof *C), *H = malloc(L * Dv * sizeof *H), *saved = malloc(2 * L * sizeof *saved);
    double *g[6], R[3] = {0.7, 1.1, 0.4};
    for (int a = 0; a < 6; a++) g[a] = malloc(L * D * sizeof *g[a]);
    fill_normal(r, L * D, 1.0, Q);
    fill_normal(r, L * D, 1.0, K);
    fill_normal(r, L * Dv, 1.0, V);
    fill_normal(r, L * Dv, 1.0, C);
    for (int causal = 0; causal < 2; causal++) {
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kernel = *KPOW(2);
      sp.per_axis_R = 1;
      sp.causal = causal;
      gfi_attn_plan *p;
      double dR[3], bR[3];
      CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
      CHECK_STATUS(gfi_attn_forward(p, Q, K, V, R, H, saved, NULL), GFI_OK);
      CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, saved, C, g[0], g[1], g[2], dR, NULL), GFI_OK);
      brute_backward(&sp, L, D, Dv, Q, K, V, R, C, g[3], g[4], g[5], bR);
      CHECK(rel_err(g[0], g[3], L * D) < 1e-11, "L=1100 dQ %.3g", rel_err(g[0], g[3], L * D));
      CHECK(rel_err(g[1], g[4], L * D) < 1e-11, "L=1100 dK %.3g", rel_err(g[1], g[4], L * D));
      CHECK(rel_err(g[2], g[5], L * Dv) < 1e-11, "L=1100 dV %.3g", rel_err(g[2], g[5], L * Dv));
      CHECK(rel_err(dR, bR, 3) < 1e-11, "L=1100 dR %.3g", rel_err(dR, bR, 3));
      gfi_attn_destroy(p);
    }
    for (int a = 0; a < 6; a++) free(g[a]);
    free(Q);
    free(K);
    free(V);
    free(C);
    free(H);
    free(saved);
  }

  /* 4b. offset data: q and k near 1e6 with R ~ 100 (R q ~ 1e8); the
   * brute force forms R (q - k), whose difference is exact for such close
   * values, so it is right to rounding. Phases formed as fl(R q) - fl(R k)
   * are off by ulp(1e8) ~ 1.5e-8: forward and gradients then miss by ~1e-8
   * (checked); the two-part phases keep them within 1e-11. */
  {
    const size_t L = 70, D = 3, Dv = 2;
    double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K), *V = malloc(L * Dv * sizeof *V);
    double *C = malloc(L * Dv * sizeof *C), *H = malloc(L * Dv * sizeof *H), *Hb = malloc(L * Dv * sizeof *Hb),
           *saved = malloc(2 * L * sizeof *saved);
    double *g[6], R[3] = {60.0, 130.0, 90.0};
    for (int a = 0; a < 6; a++) g[a] = malloc(L * D * sizeof *g[a]);
    fill_normal(r, L * D, 0.01, Q);
    fill_normal(r, L * D, 0.01, K);
    for (size_t k = 0; k < L * D; k++) Q[k] += 1e6, K[k] += 1e6;
    fill_normal(r, L * Dv, 1.0, V);
    fill_normal(r, L * Dv, 1.0, C);
    for (int causal = 0; causal < 2; causal++) {
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kernel = *KPOW(4);
      sp.per_axis_R = 1;
      sp.causal = causal;
      gfi_attn_plan *p;
      double dR[3], bR[3];
      CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
      CHECK_STATUS(gfi_attn_forward(p, Q, K, V, R, H, saved, NULL), GFI_OK);
      brute_forward(&sp, L, D, Dv, Q, K, V, R, Hb);
      CHECK(rel_err(H, Hb, L * Dv) < 1e-11, "offset data: forward %.3g", rel_err(H, Hb, L * Dv));
      CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, saved, C, g[0], g[1], g[2], dR, NULL), GFI_OK);
      brute_backward(&sp, L, D, Dv, Q, K, V, R, C, g[3], g[4], g[5], bR);
      CHECK(rel_err(g[0], g[3], L * D) < 1e-11, "offset data: dQ %.3g", rel_err(g[0], g[3], L * D));
      CHECK(rel_err(g[1], g[4], L * D) < 1e-11, "offset data: dK %.3g", rel_err(g[1], g[4], L * D));
      CHECK(rel_err(g[2], g[5], L * Dv) < 1e-11, "offset data: dV %.3g", rel_err(g[2], g[5], L * Dv));
      /* dR sums (q - k) times the weights' derivatives over pairs; its
       * terms' own size bounds the rounding of both sides */
      CHECK(rel_err(dR, bR, 3) < 1e-9, "offset data: dR %.3g", rel_err(dR, bR, 3));
      gfi_attn_destroy(p);
    }
    for (int a = 0; a < 6; a++) free(g[a]);
    free(Q);
    free(K);
    free(V);
    free(C);
    free(H);
    free(Hb);
    free(saved);
  }

  /* 5. Gaussian attention = softmax(q.k / sigma^2) for keys of equal norm */
  {
    const size_t L = 200, D = 16, Dv = 5;
    double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K), *V = malloc(L * Dv * sizeof *V);
    double *H = malloc(L * Dv * sizeof *H);
    fill_normal(r, L * D, 1.0, Q);
    fill_normal(r, L * D, 1.0, K);
    fill_normal(r, L * Dv, 1.0, V);
    for (size_t j = 0; j < L; j++) { /* every key on the sphere of radius 3 */
      double n = 0;
      for (size_t d = 0; d < D; d++) n += K[j * D + d] * K[j * D + d];
      for (size_t d = 0; d < D; d++) K[j * D + d] *= 3.0 / sqrt(n);
    }
    for (int causal = 0; causal < 2; causal++) {
      double sig = pow((double)D, 0.25); /* sigma^2 = sqrt(D): scaled dot product */
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kind = GFI_ATTN_GAUSS;
      sp.causal = causal;
      gfi_attn_plan *p;
      CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
      CHECK_STATUS(gfi_attn_forward(p, Q, K, V, &sig, H, NULL, NULL), GFI_OK);
      double worst = 0;
      for (size_t i = 0; i < L; i++) {
        size_t jend = causal ? i + 1 : L;
        double sc[200], mx = -INFINITY, S = 0, N[5] = {0};
        for (size_t j = 0; j < jend; j++) {
          double dot = 0;
          for (size_t d = 0; d < D; d++) dot += Q[i * D + d] * K[j * D + d];
          sc[j] = dot / (sig * sig);
          if (sc[j] > mx) mx = sc[j];
        }
        for (size_t j = 0; j < jend; j++) {
          double w = exp(sc[j] - mx);
          S += w;
          for (size_t c = 0; c < Dv; c++) N[c] += w * V[j * Dv + c];
        }
        for (size_t c = 0; c < Dv; c++) worst = fmax(worst, fabs(H[i * Dv + c] - N[c] / S));
      }
      CHECK(worst < 1e-13, "causal=%d: Gaussian vs softmax %.3g", causal, worst);
      gfi_attn_destroy(p);
    }
    free(Q);
    free(K);
    free(V);
    free(H);
  }

  /* 6. flagged rows: l = 1, row 0 sees five keys in the first negative lobe
   * of sinc (sum 1 - 5 * 0.217 < 0); row 1 is ordinary. */
  {
    const size_t L = 7, D = 1, Dv = 2;
    double Q[7] = {0, 10, 20, 30, 40, 50, 60}, K[7], V[14], H[14], Hb[14], saved[14], R = 1;
    K[0] = 0;
    for (size_t j = 1; j < 6; j++) K[j] = 4.4934 + 0.001 * j; /* sinc minimum at 4.4934 */
    K[6] = 10.05;
    for (size_t k = 0; k < 14; k++) V[k] = 1.0 + 0.1 * k;
    gfi_attn_spec sp;
    gfi_attn_default_spec(&sp);
    sp.kernel = *KPOW(1);
    sp.causal = 0;
    gfi_attn_plan *p;
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, NULL), GFI_OK);
    gfi_attn_info info;
    CHECK_STATUS(gfi_attn_forward(p, Q, K, V, &R, H, saved, &info), GFI_EDENOM);
    brute_forward(&sp, L, D, Dv, Q, K, V, &R, Hb);
    CHECK(isnan(H[0]) && isnan(H[1]), "flagged row is NaN");
    CHECK(info.first_flagged == 0 && info.min_ratio < 0, "first flagged %zu, min ratio %g",
          info.first_flagged, info.min_ratio);
    size_t nan_rows = 0;
    for (size_t i = 0; i < L; i++) {
      if (isnan(H[i * Dv])) {
        nan_rows++;
        continue;
      }
      for (size_t c = 0; c < Dv; c++) CHECK_CLOSE(H[i * Dv + c], Hb[i * Dv + c], 1e-12, 1e-12);
    }
    CHECK(info.nflagged == nan_rows && nan_rows >= 1, "count %zu vs NaN rows %zu", info.nflagged, nan_rows);
    /* backward: flagged rows get NaN dQ and the others stay finite */
    double dQ[7], dK[7], dV[14], dR, dH[14];
    for (size_t k = 0; k < 14; k++) dH[k] = 0.5 - 0.03 * k;
    CHECK_STATUS(gfi_attn_backward(p, Q, K, V, &R, H, saved, dH, dQ, dK, dV, &dR, &info), GFI_EDENOM);
    CHECK(isnan(dQ[0]) && info.nflagged == nan_rows, "backward flags");
    int finite = isfinite(dR);
    for (size_t k = 0; k < 7; k++) finite &= isfinite(dK[k]) && (isnan(H[k * Dv]) || isfinite(dQ[k]));
    for (size_t k = 0; k < 14; k++) finite &= isfinite(dV[k]);
    CHECK(finite, "unflagged gradients finite");
    gfi_attn_destroy(p);
    /* the threshold: rows whose ratio S/A = (1 - 0.217)/(1 + 0.217) = 0.64
     * pass at the default tolerance and are flagged at denom_tol = 0.7 */
    double Q2[2] = {0, 4.4934}, K2[2] = {0, 4.4934}, V2[2] = {1, 2}, H2[2];
    for (int t = 0; t < 2; t++) {
      sp.denom_tol = t ? 0.7 : 1e-8;
      CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 1, 1, NULL), GFI_OK);
      CHECK_STATUS(gfi_attn_forward(p, Q2, K2, V2, &R, H2, NULL, &info), t ? GFI_EDENOM : GFI_OK);
      CHECK(t ? isnan(H2[0]) : isfinite(H2[0]), "threshold %g", sp.denom_tol);
      gfi_attn_destroy(p);
    }
  }

  /* 7. identical bits for 1, 2 and 3 threads: forward and backward */
  {
    const size_t L = 301, D = 9, Dv = 7;
    double *Q = malloc(L * D * sizeof *Q), *K = malloc(L * D * sizeof *K), *V = malloc(L * Dv * sizeof *V);
    double *C = malloc(L * Dv * sizeof *C), *out[3];
    size_t n = 2 * L * Dv + 2 * L * D + 2 * L + D;
    for (int t = 0; t < 3; t++) out[t] = malloc(n * sizeof *out[t]);
    fill_normal(r, L * D, 1.0, Q);
    fill_normal(r, L * D, 1.0, K);
    fill_normal(r, L * Dv, 1.0, V);
    fill_normal(r, L * Dv, 1.0, C);
    for (int kind = 1; kind <= 2; kind++) {
      gfi_attn_spec sp;
      gfi_attn_default_spec(&sp);
      sp.kind = kind;
      sp.per_axis_R = 1;
      sp.causal = 1;
      double R[9] = {1, 2, 3, 0.5, 0.7, 1.5, 2.5, 0.9, 1.1};
      for (int t = 0; t < 3; t++) {
        gfi_opts o;
        gfi_default_opts(&o);
        o.nthreads = t + 1;
        gfi_attn_plan *p;
        CHECK_STATUS(gfi_attn_plan_create(&p, &sp, L, D, Dv, &o), GFI_OK);
        double *H = out[t], *saved = H + L * Dv, *dQ = saved + 2 * L, *dK = dQ + L * D;
        double *dV = dK + L * D, *dR = dV + L * Dv;
        memset(out[t], 0, n * sizeof *out[t]);
        CHECK_STATUS(gfi_attn_forward(p, Q, K, V, R, H, saved, NULL), GFI_OK);
        CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, saved, C, dQ, dK, dV, dR, NULL), GFI_OK);
        gfi_attn_destroy(p);
      }
      CHECK(memcmp(out[0], out[1], n * sizeof *out[0]) == 0, "kind %d: 1 and 2 threads differ", kind);
      CHECK(memcmp(out[0], out[2], n * sizeof *out[0]) == 0, "kind %d: 1 and 3 threads differ", kind);
    }
    for (int t = 0; t < 3; t++) free(out[t]);
    free(Q);
    free(K);
    free(V);
    free(C);
  }

  /* 8. every error status at the API boundary */
  {
    gfi_attn_spec sp;
    gfi_attn_default_spec(&sp);
    gfi_attn_plan *p = (gfi_attn_plan *)1;
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 0, 2, 2, NULL), GFI_EEMPTY);
    CHECK(p == NULL, "plan NULL on error");
    CHECK_STATUS(gfi_attn_plan_create(NULL, &sp, 2, 2, 2, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 0, 2, NULL), GFI_EDIM);
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 2, 0, NULL), GFI_EDIM);
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, (size_t)1 << 40, 2, 2, NULL), GFI_EDIM);
    sp.kernel = *KPOW(9);
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 2, 2, NULL), GFI_EORDER);
    sp.kernel = *KPOW(4);
    sp.denom_tol = -1;
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 2, 2, NULL), GFI_EINVAL);
    sp.denom_tol = 1e-8;
    sp.kind = (gfi_attn_kind)7;
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 2, 2, NULL), GFI_EINVAL);
    sp.kind = GFI_ATTN_FOURIER;
    sp.per_axis_R = 1;
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 2, 2, NULL), GFI_OK);
    CHECK(gfi_attn_nparam(p) == 2 && gfi_attn_saved_size(p) == 4, "accessors");
    double Q[4] = {0, 1, 2, 3}, K[4] = {0, 1, 2, 2.5}, V[4] = {1, 2, 3, 4}, R[2] = {1, 1}, H[4];
    double saved[4], dQ[4], dK[4], dV[4], dR[2];
    CHECK_STATUS(gfi_attn_forward(p, NULL, K, V, R, H, saved, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_attn_forward(p, Q, K, V, R, NULL, saved, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_attn_forward(NULL, Q, K, V, R, H, saved, NULL), GFI_EINVAL);
    double Kn[4] = {0, NAN, 2, 3};
    CHECK_STATUS(gfi_attn_forward(p, Q, Kn, V, R, H, saved, NULL), GFI_ENONFINITE);
    double Rb[2] = {1, -1};
    CHECK_STATUS(gfi_attn_forward(p, Q, K, V, Rb, H, saved, NULL), GFI_ERADIUS);
    CHECK_STATUS(gfi_attn_forward(p, Q, K, V, R, H, saved, NULL), GFI_OK);
    double dHn[4] = {0, INFINITY, 0, 0};
    CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, saved, dHn, dQ, dK, dV, dR, NULL), GFI_ENONFINITE);
    CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, NULL, V, dQ, dK, dV, dR, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_attn_backward(p, Q, K, V, Rb, H, saved, V, dQ, dK, dV, dR, NULL), GFI_ERADIUS);
    double bad_saved[4] = {NAN, 1, NAN, 1};
    CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, bad_saved, V, dQ, dK, dV, dR, NULL), GFI_EINVAL);
    CHECK_STATUS(gfi_attn_backward(p, Q, K, V, R, H, saved, V, dQ, dK, dV, dR, NULL), GFI_OK);
    gfi_attn_destroy(p);
    sp.kind = GFI_ATTN_GAUSS;
    CHECK_STATUS(gfi_attn_plan_create(&p, &sp, 2, 2, 2, NULL), GFI_OK);
    CHECK(gfi_attn_nparam(p) == 1, "Gaussian has one parameter");
    double sig0 = 0;
    CHECK_STATUS(gfi_attn_forward(p, Q, K, V, &sig0, H, saved, NULL), GFI_EBANDWIDTH);
    gfi_attn_destroy(p);
    gfi_attn_destroy(NULL);
    CHECK(gfi_attn_nparam(NULL) == 0 && gfi_attn_saved_size(NULL) == 0, "NULL accessors");
  }
  gsl_rng_free(r);
  return check_summary("attention");
}
