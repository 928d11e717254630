/* The 2-D plug-in bandwidth matrices of the Gaussian KDE (gfi/select.h):
 * gfi_bw_hpi as ks::Hpi and gfi_bw_hpi_diag as ks::Hpi.diag (ks 1.14.0,
 * default arguments: two stages, SAMSE pilots), with the kernel functionals
 * summed exactly over all pairs (ks bins the data above N = 500).
 * docs/theory.md, section "The plug-in bandwidth matrix", has the formulas.
 *
 * Outline (Hpi; Hpi.diag scales each axis by its sd instead of sphering):
 *  1. x* = x S^-1/2 (S the sample covariance, S^-1/2 its symmetric root);
 *  2. g6 = the SAMSE pilot of order 6 from normal-scale functionals of
 *     S* = var(x*); psi6 = (1/N^2) sum_{i,k} D^6 phi_{g6^2 I}(x*_i - x*_k);
 *  3. g4 = the SAMSE pilot of order 4 from psi6 (as ks picks its entries,
 *     see pick6 below); psi4 likewise at g4;
 *  4. H* = argmin over SPD H of AMISE(H) = (4 pi N)^-1 |H|^-1/2
 *     + (1/4) vec(H)' Psi4 vec(H), by Newton's method (AMISE is convex);
 *  5. H = S^1/2 H* S^1/2.
 * The functionals: pair sums, O(N^2), rows through lib/par.h, the same bits
 * for any thread count; or (where the cost model prefers it, or on request) one type-3
 * NUFFT of the empirical cf on a trapezoid rule in frequency, O(N + Q log Q),
 * to tol of the largest functional (hpsi_fast, hpsi_route). Everything else is
 * a handful of scalars. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/select.h"
#include "gfi/density.h"
#include "alloc.h"
#include "bandlimited.h"
#include "par.h"
#include "select_internal.h"
#include "kernel_internal.h"

/* probabilists' Hermite polynomials He_0..He_6 at u */
static void hermite6(double u, double *he) {
  he[0] = 1;
  he[1] = u;
  for (int m = 2; m <= 6; m++) he[m] = u * he[m - 1] - (double)(m - 1) * he[m - 2];
}

static const double HE0[9] = {1, 0, -1, 0, 3, 0, -15, 0, 105}; /* He_m(0) */

typedef struct {
  size_t N;
  const double *x; /* N x 2, pre-transformed */
  double g;
  int r;
  double *slots; /* per row: sum_{k > i} He_{r-a}(u) He_a(v) e^{-(u^2+v^2)/2}, a = 0..r */
} hpsi_ctx;

static int hpsi_row(void *vc, size_t i, void *ws) {
  (void)ws;
  const hpsi_ctx *c = vc;
  const int r = c->r;
  double s[7] = {0, 0, 0, 0, 0, 0, 0}, hu[7], hv[7];
  const double x0 = c->x[2 * i], x1 = c->x[2 * i + 1], ig = 1 / c->g;
  for (size_t k = i + 1; k < c->N; k++) {
    double u = (x0 - c->x[2 * k]) * ig, v = (x1 - c->x[2 * k + 1]) * ig;
    double e = exp(-0.5 * (u * u + v * v));
    hermite6(u, hu);
    hermite6(v, hv);
    for (int a = 0; a <= r; a++) s[a] += hu[r - a] * hv[a] * e;
  }
  memcpy(c->slots + 7 * i, s, sizeof s);
  return GFI_OK;
}

/* psi[a] = psi_{(r-a, a)}(g) = (1/N^2) sum_{i,k} D^{(r-a,a)} phi_{g^2 I}(x_i - x_k),
 * r = 4 or 6 (even: the sign (-1)^r of the derivative is +). */
static int hpsi(size_t N, const double *x, int r, double g, int nt, double *psi) {
  double *slots = gfi_malloc3(N, 7, sizeof(double));
  if (!slots) return GFI_ENOMEM;
  hpsi_ctx c = {N, x, g, r, slots};
  int st = par_for(N, sel_pair_threads(nt, N), 16, hpsi_row, &c);
  double s[7] = {0, 0, 0, 0, 0, 0, 0};
  if (!st) par_sum(slots, N, 7, s);
  free(slots);
  if (st) return st;
  const double n = (double)N, f = 1 / (n * n * 2 * M_PI * pow(g, r + 2));
  for (int a = 0; a <= r; a++) psi[a] = (n * HE0[r - a] * HE0[a] + 2 * s[a]) * f;
  return GFI_OK;
}

/* The same psi through the empirical cf phi_N(w) = (1/N) sum_i e^{i w.x_i}:
 *   psi_alpha = (2 pi)^-2 int (i w)^alpha e^{-g^2 |w|^2 / 2} |phi_N(w)|^2 dw,
 * since sum_{i,k} e^{i w.(x_i - x_k)} = N^2 |phi_N(w)|^2. |alpha| = r is even,
 * so (i w)^alpha = (-1)^{r/2} w^alpha and the integrand is even in w: the
 * half plane w_0 >= 0 with weight 2 off the axis. The trapezoid rule of step
 * d_j on axis j is exact up to aliases of D^alpha phi at distances 2 pi / d_j
 * from the pair differences (|x_i - x_k|_j <= S_j): with 2 pi / d_j = S_j +
 * 12 g the nearest alias is 12 g away, below 12^6 e^{-72} (< 1e-24) of the
 * kernel's peak; the tails beyond |w_j| = 12 / g are as small. The ecf is
 * a type-3 NUFFT, each value within e (gfi_ecf's tol; |phi_N| <= 1), so each
 * |phi_N|^2 is within e_q = (2 |phi_N(w_q)| + 3 e) e, and psi within
 * (2 pi)^-2 sum_q W_q |w_q^alpha| e^{-g^2 |w_q|^2 / 2} e_q: *bound gets
 * that, relative to max_a |psi[a]|.
 * Cost O(N + Q log Q) with Q = (K_0 + 1)(2 K_1 + 1), K_j = 12 (S_j + 12 g) /
 * (2 pi g): GFI_ERANGE above HPI_FAST_QMAX nodes. */
#define HPI_FAST_QMAX ((size_t)4000000)

static int hpsi_fast(size_t N, const double *x, int r, double g, int nt, double e_cf, double *psi,
                     double *bound) {
  double lo[2] = {x[0], x[1]}, hi[2] = {x[0], x[1]}, d[2];
  for (size_t i = 0; i < N; i++)
    for (int j = 0; j < 2; j++) {
      lo[j] = fmin(lo[j], x[2 * i + j]);
      hi[j] = fmax(hi[j], x[2 * i + j]);
    }
  for (int j = 0; j < 2; j++) d[j] = 2 * M_PI / (hi[j] - lo[j] + 12 * g);
  double *xc = gfi_malloc3(N, 2, sizeof *xc), *p2s = NULL;
  if (!xc) return GFI_ENOMEM;
  const double c0 = 0.5 * (lo[0] + hi[0]), c1 = 0.5 * (lo[1] + hi[1]);
  for (size_t i = 0; i < N; i++) xc[2 * i] = x[2 * i] - c0, xc[2 * i + 1] = x[2 * i + 1] - c1;
  size_t n0 = 0, n1 = 0;
  int st = sel_ecf2_halfplane(N, xc, d, 12 / g, HPI_FAST_QMAX, nt, e_cf, &e_cf, &n0, &n1, &p2s);
  free(xc);
  const size_t Q = n0 * n1, K1 = n1 ? (n1 - 1) / 2 : 0;
  if (!st) {
    double s[7] = {0, 0, 0, 0, 0, 0, 0}, sa[7] = {0, 0, 0, 0, 0, 0, 0};
    for (size_t q = 0; q < Q; q++) {
      double u = (double)(q / n1) * d[0], v = ((double)(q % n1) - (double)K1) * d[1];
      double e = d[0] * d[1] * (q >= n1 ? 2.0 : 1.0) * exp(-0.5 * g * g * (u * u + v * v));
      double p2 = p2s[q];
      double pu[7], pv[7];
      pu[0] = pv[0] = 1;
      for (int m = 1; m <= r; m++) pu[m] = pu[m - 1] * u, pv[m] = pv[m - 1] * v;
      /* |phi_N| is known to e_cf: the error of |phi_N|^2 is at most
       * (2 (|phi| + e) + e) e, small where |phi_N| is (large |w|) */
      double ep = (2 * (sqrt(p2) + e_cf) + e_cf) * e_cf;
      for (int a = 0; a <= r; a++) {
        double t = e * pu[r - a] * pv[a];
        s[a] += t * p2;
        sa[a] += fabs(t) * ep;
      }
    }
    const double sg = (r / 2) % 2 ? -1.0 : 1.0, f = 1 / (4 * M_PI * M_PI);
    double mx = 0, eb = 0;
    for (int a = 0; a <= r; a++) {
      psi[a] = sg * s[a] * f;
      mx = fmax(mx, fabs(psi[a]));
      eb = fmax(eb, sa[a] * f);
    }
    if (bound) *bound = mx > 0 ? eb / mx : INFINITY;
  }
  free(p2s);
  return st;
}

/* psi of order r at g by the route bl_decide takes from the two costs (the
 * pairs refused above HPI_PAIRS_MAX points under auto), in nanoseconds of
 * one core measured at N = 1000 and 4000 (normal data): a pair of the
 * direct sum 13 per order; the cf 1e5 + 150 per point and node (gfi_ecf),
 * then about 50 per node and component of psi. tol: psi's error bound
 * relative to max |psi| (the stated scale). The fast route asks the cf for
 * bl_cf2_tol(tol); when the bound that gives misses tol (the functionals
 * cancel), the engine's tighten policy: once more at BL_TIGHTEN_MARGIN f
 * times that accuracy, f = tol / bound. Under auto a bound still above tol
 * goes to the pairs where they are allowed. bound: the fast route's bound
 * relative to max |psi|, 0 for the pairs. */
#define HPI_PAIRS_MAX ((size_t)30000)
#define HPI_PAIR_NS 13.0
#define HPI_NODE_NS 50.0

static int hpsi_route(size_t N, const double *x, int r, double g, int nt, gfi_method m, double tol,
                      double *psi, double *bound, int *fast) {
  *bound = 0;
  *fast = 0;
  const gfi_method asked = m;
  if (asked == GFI_METHOD_AUTO) {
    double lo[2] = {x[0], x[1]}, hi[2] = {x[0], x[1]}, k[2], n = (double)N;
    for (size_t i = 0; i < N; i++)
      for (int j = 0; j < 2; j++) lo[j] = fmin(lo[j], x[2 * i + j]), hi[j] = fmax(hi[j], x[2 * i + j]);
    for (int j = 0; j < 2; j++) k[j] = ceil(12 / g * (hi[j] - lo[j] + 12 * g) / (2 * M_PI));
    double Q = (k[0] + 1) * (2 * k[1] + 1);
    bl_cost c = {HPI_PAIR_NS * 0.5 * n * n, 1e5 + 150 * (n + Q) + HPI_NODE_NS * (r + 1) * Q, 0, N <= HPI_PAIRS_MAX,
                 Q <= (double)HPI_FAST_QMAX ? 0 : GFI_ROUTE_NODES};
    int st = bl_decide(asked, &c, &m, NULL);
    if (st) return st;
  }
  if (m == GFI_METHOD_FAST) {
    double e = bl_cf2_tol(tol);
    int st = hpsi_fast(N, x, r, g, nt, e, psi, bound);
    double e2 = st ? 0 : bl_tighter(e, *bound, tol, BL_CF2_TOL_MIN);
    if (e2 > 0) st = hpsi_fast(N, x, r, g, nt, e2, psi, bound);
    if (!st && bl_keep_fast(asked, *bound, tol, N <= HPI_PAIRS_MAX)) {
      *fast = 1;
      return GFI_OK;
    }
    if (asked == GFI_METHOD_FAST || (st && st != GFI_ERANGE)) return st;
    *bound = 0;
  }
  return hpsi(N, x, r, g, nt, psi);
}

/* (m - 1)!! for even m >= 0 (1 for m = 0) */
static double dfact(int m) {
  double p = 1;
  for (int k = m - 1; k > 1; k -= 2) p *= k;
  return p;
}


/* Normal-scale functional psi_{(a,b)} = D^{(a,b)} phi_{2S}(0) (ks:::psins), a + b
 * even: (-1)^((a+b)/2) phi_{2S}(0) E[W1^a W2^b], W ~ N(0, (2S)^-1), the moment
 * by Isserlis' theorem (k cross pairs). */
static double psins(int a, int b, const double *S) {
  double det = 4 * (S[0] * S[3] - S[1] * S[1]);
  double c11 = 2 * S[3] / det, c22 = 2 * S[0] / det, c12 = -2 * S[1] / det; /* (2S)^-1 */
  double m = 0;
  for (int k = 0; k <= (a < b ? a : b); k++) {
    if ((a - k) % 2 || (b - k) % 2) continue;
    double fk = 1;
    for (int j = 2; j <= k; j++) fk *= j;
    m += kernel_binom(a, k) * kernel_binom(b, k) * fk * pow(c12, k) * dfact(a - k) * pow(c11, 0.5 * (a - k)) * dfact(b - k) *
         pow(c22, 0.5 * (b - k));
  }
  double sgn = ((a + b) / 2) % 2 ? -1 : 1;
  return sgn * m / (2 * M_PI * sqrt(det));
}

/* The SAMSE pilot of ks:::gsamse (d = 2): psi[i] belongs to the i-th even
 * index (modr - 2i, 2i), i = 0..modr/2, and K to D^(that) phi(0). */
static double gsamse2(size_t N, int modr, const double *psi) {
  double A1 = 0, A2 = 0, A3 = 0;
  for (int i = 0; i <= modr / 2; i++) {
    double K = HE0[modr - 2 * i] * HE0[2 * i] / (2 * M_PI);
    A1 += K * K;
    A2 += K * psi[i];
    A3 += psi[i] * psi[i];
  }
  const double d = 2, B1 = (2 * modr + 2 * d) * A1, B2 = (modr + d - 2) * A2, B3 = A3;
  double gam = (-B2 + sqrt(B2 * B2 + 4 * B1 * B3)) / (2 * B1);
  return pow(gam * (double)N, -1.0 / (modr + d + 2));
}

/* ks:::gsamse(modr = 4, nstage = 2) looks psi_{(a,b)+2e_j} up as entry m of
 * psihat6, m = the row of (a,b)+2e_j in the list (6,0), (5,1), .., (0,6); but
 * psihat6 is the full vector of all 2^6 derivative indices, whose entry m
 * (1-based, the last index fastest) is psi_{(6-p, p)}, p the number of 1 bits
 * of m - 1. For (a,b) + 2e_j: m = 7 - (its first component). */
static double pick6(const double *psi6, int first) {
  int m = 7 - first, p = __builtin_popcount((unsigned)(m - 1));
  return psi6[p];
}

/* symmetric square root of a 2 x 2 SPD matrix */
static void sqrt2(const double *A, double *R) {
  double s = sqrt(A[0] * A[3] - A[1] * A[2]), t = sqrt(A[0] + A[3] + 2 * s);
  R[0] = (A[0] + s) / t;
  R[1] = A[1] / t;
  R[2] = A[2] / t;
  R[3] = (A[3] + s) / t;
}

/* sample covariance (N - 1 divisor) and means of N x 2 data */
static void cov2(size_t N, const double *x, double *m, double *S) {
  m[0] = m[1] = 0;
  for (size_t i = 0; i < N; i++) {
    m[0] += x[2 * i];
    m[1] += x[2 * i + 1];
  }
  m[0] /= (double)N;
  m[1] /= (double)N;
  double s00 = 0, s01 = 0, s11 = 0;
  for (size_t i = 0; i < N; i++) {
    double a = x[2 * i] - m[0], b = x[2 * i + 1] - m[1];
    s00 += a * a;
    s01 += a * b;
    s11 += b * b;
  }
  S[0] = s00 / (double)(N - 1);
  S[1] = S[2] = s01 / (double)(N - 1);
  S[3] = s11 / (double)(N - 1);
}

/* AMISE(a, b, c) of H = [a b; b c]; NAN outside the SPD cone */
static double amise2(double k, const double *p, const double *t) {
  double a = t[0], b = t[1], c = t[2], det = a * c - b * b;
  if (!(a > 0) || !(det > 0)) return NAN;
  double Q = a * a * p[0] + 4 * a * b * p[1] + (2 * a * c + 4 * b * b) * p[2] + 4 * b * c * p[3] + c * c * p[4];
  return k / sqrt(det) + 0.25 * Q;
}

/* Newton's method with backtracking on AMISE, from t (the normal reference
 * in sphered coordinates). Returns the iterations used, or -1 when it does
 * not settle within 200. */
static int amise_newton(double k, const double *p, double *t) {
  for (int it = 0; it < 200; it++) {
    double a = t[0], b = t[1], c = t[2], det = a * c - b * b;
    double dd[3] = {c, -2 * b, a}, s32 = pow(det, -1.5), s52 = pow(det, -2.5);
    double gQ[3] = {2 * a * p[0] + 4 * b * p[1] + 2 * c * p[2], 4 * a * p[1] + 8 * b * p[2] + 4 * c * p[3],
                    2 * a * p[2] + 4 * b * p[3] + 2 * c * p[4]};
    double hQ[9] = {2 * p[0], 4 * p[1], 2 * p[2], 4 * p[1], 8 * p[2], 4 * p[3], 2 * p[2], 4 * p[3], 2 * p[4]};
    double h2d[9] = {0, 0, 1, 0, -2, 0, 1, 0, 0};
    double gr[3], He[9];
    for (int i = 0; i < 3; i++) {
      gr[i] = -0.5 * k * s32 * dd[i] + 0.25 * gQ[i];
      for (int j = 0; j < 3; j++)
        He[3 * i + j] = k * (0.75 * s52 * dd[i] * dd[j] - 0.5 * s32 * h2d[3 * i + j]) + 0.25 * hQ[3 * i + j];
    }
    /* Newton step by Cholesky; the gradient where the Hessian is not PD */
    double L[9] = {0}, step[3];
    int pd = 1;
    for (int j = 0; j < 3 && pd; j++) {
      for (int i = j; i < 3; i++) {
        double v = He[3 * i + j];
        for (int q = 0; q < j; q++) v -= L[3 * i + q] * L[3 * j + q];
        if (i == j) {
          if (!(v > 0)) pd = 0;
          else L[3 * j + j] = sqrt(v);
        } else
          L[3 * i + j] = v / L[3 * j + j];
      }
    }
    if (pd) {
      double z[3];
      for (int i = 0; i < 3; i++) {
        double v = -gr[i];
        for (int q = 0; q < i; q++) v -= L[3 * i + q] * z[q];
        z[i] = v / L[3 * i + i];
      }
      for (int i = 2; i >= 0; i--) {
        double v = z[i];
        for (int q = i + 1; q < 3; q++) v -= L[3 * q + i] * step[q];
        step[i] = v / L[3 * i + i];
      }
    } else
      for (int i = 0; i < 3; i++) step[i] = -gr[i];
    double scale = fmax(fabs(a), fabs(c)), len = fmax(fabs(step[0]), fmax(fabs(step[1]), fabs(step[2])));
    if (!(len == len)) return -1;
    /* Newton converges quadratically: from a step of 1e-9 the next would be
     * below rounding, which leaves steps of about 1e-11 (the gradient's
     * cancellation) that no line search can confirm */
    if (pd && len <= 1e-9 * scale) {
      for (int i = 0; i < 3; i++) t[i] += step[i];
      return it + 1;
    }
    double f0 = amise2(k, p, t), slope = gr[0] * step[0] + gr[1] * step[1] + gr[2] * step[2], lam = 1;
    int moved = 0;
    for (int bt = 0; bt < 60; bt++, lam *= 0.5) {
      double tn[3] = {t[0] + lam * step[0], t[1] + lam * step[1], t[2] + lam * step[2]};
      double f1 = amise2(k, p, tn);
      if (f1 == f1 && f1 <= f0 + 1e-4 * lam * slope) {
        memcpy(t, tn, sizeof tn);
        moved = 1;
        break;
      }
    }
    /* no decrease left to find: at the minimum to rounding when Newton */
    if (!moved) return pd && len <= 1e-8 * scale ? it + 1 : -1;
  }
  return -1;
}

/* Steps 1-3: pre-transformed data, its covariance S*, pilots and psi4 */
static int hpi_psi(size_t N, const double *xs, const double *Sst, int nt, gfi_method m, double tol,
                   gfi_hpi_info *in) {
  double p6[7], p4[7], ps[4], b6, b4;
  int f6, f4;
  for (int i = 0; i < 4; i++) ps[i] = psins(8 - 2 * i, 2 * i, Sst) + psins(6 - 2 * i, 2 * i + 2, Sst);
  in->g6 = gsamse2(N, 6, ps);
  int st = hpsi_route(N, xs, 6, in->g6, nt, m, tol, p6, &b6, &f6);
  if (st) return st;
  for (int i = 0; i < 3; i++) ps[i] = pick6(p6, 6 - 2 * i) + pick6(p6, 4 - 2 * i);
  in->g4 = gsamse2(N, 4, ps);
  st = hpsi_route(N, xs, 4, in->g4, nt, m, tol, p4, &b4, &f4);
  if (st) return st;
  in->fast = f6 && f4;
  in->bound = fmax(b6, b4);
  memcpy(in->psi4, p4, 5 * sizeof *p4);
  return GFI_OK;
}

static int hpi_common(size_t N, size_t D, const double *data, const gfi_opts *opts, double *H,
                      gfi_hpi_info *info, int diag) {
  if (!H) return GFI_EINVAL;
  int st = sel_check_data(N, D, data);
  if (st) return st;
  if (D > 2) return GFI_EUNSUPPORTED;
  gfi_method m;
  double tol;
  st = bl_check_opts(opts, &tol, &m);
  if (st) return st;
  gfi_hpi_info in;
  memset(&in, 0, sizeof in);
  if (D == 1) {
    double h;
    st = gfi_bw_dpi(N, data, opts, &h);
    if (st) return st;
    H[0] = h * h;
    if (info) *info = in;
    return GFI_OK;
  }
  double mu[2], S[4];
  cov2(N, data, mu, S);
  if (!(S[0] > 0) || !(S[0] * S[3] - S[1] * S[1] > 0) || !isfinite(S[0] * S[3])) return GFI_ENOTPD;
  double T[4], R12[4]; /* x* = x T (T = S^-1/2 or diag 1/sd); H = R12 H* R12 */
  if (diag) {
    T[0] = 1 / sqrt(S[0]), T[3] = 1 / sqrt(S[3]), T[1] = T[2] = 0;
    R12[0] = sqrt(S[0]), R12[3] = sqrt(S[3]), R12[1] = R12[2] = 0;
  } else {
    double det = S[0] * S[3] - S[1] * S[1], Si[4] = {S[3] / det, -S[1] / det, -S[2] / det, S[0] / det};
    sqrt2(Si, T);
    sqrt2(S, R12);
  }
  double *xs = gfi_malloc3(N, 2, sizeof(double));
  if (!xs) return GFI_ENOMEM;
  for (size_t i = 0; i < N; i++) {
    double a = data[2 * i] - mu[0], b = data[2 * i + 1] - mu[1];
    xs[2 * i] = a * T[0] + b * T[2];
    xs[2 * i + 1] = a * T[1] + b * T[3];
  }
  double Sst[4], m2[2];
  cov2(N, xs, m2, Sst);
  st = hpi_psi(N, xs, Sst, opts ? opts->nthreads : 0, m, tol, &in);
  free(xs);
  if (st) return st;
  const double *p = in.psi4, k = 1 / (4 * M_PI * (double)N);
  double Hs[4];
  if (diag) {
    /* ks::Hpi.diag's closed form (d = 2, SAMSE) */
    if (!(p[0] > 0) || !(p[4] > 0) || !(sqrt(p[0] * p[4]) + p[2] > 0)) return GFI_EQUAD;
    double h1 = pow(pow(p[4], 0.75) * k / (pow(p[0], 0.75) * (sqrt(p[0] * p[4]) + p[2])), 1.0 / 6);
    double h2 = pow(p[0] / p[4], 0.25) * h1;
    Hs[0] = h1 * h1, Hs[3] = h2 * h2, Hs[1] = Hs[2] = 0;
    double t[3] = {Hs[0], 0, Hs[3]};
    in.amise = amise2(k, p, t);
    in.iters = 0;
  } else {
    double t[3] = {pow((double)N, -1.0 / 3), 0, pow((double)N, -1.0 / 3)};
    int it = amise_newton(k, p, t);
    if (it < 0) return GFI_EQUAD;
    in.iters = (size_t)it;
    in.amise = amise2(k, p, t);
    Hs[0] = t[0], Hs[1] = Hs[2] = t[1], Hs[3] = t[2];
  }
  /* H = R12 Hs R12, symmetrised */
  double A[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) A[2 * i + j] = R12[2 * i] * Hs[j] + R12[2 * i + 1] * Hs[2 + j];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) H[2 * i + j] = A[2 * i] * R12[j] + A[2 * i + 1] * R12[2 + j];
  H[1] = H[2] = 0.5 * (H[1] + H[2]);
  if (!(H[0] > 0) || !(H[0] * H[3] - H[1] * H[1] > 0)) return GFI_EQUAD;
  if (info) *info = in;
  return GFI_OK;
}

int gfi_bw_hpi(size_t N, size_t D, const double *data, const gfi_opts *opts, double *H, gfi_hpi_info *info) {
  return hpi_common(N, D, data, opts, H, info, 0);
}

int gfi_bw_hpi_diag(size_t N, size_t D, const double *data, const gfi_opts *opts, double *H,
                    gfi_hpi_info *info) {
  return hpi_common(N, D, data, opts, H, info, 1);
}
