/* Kernel facts shared by the library's routes (not installed). */
#ifndef GFI_KERNEL_INTERNAL_H
#define GFI_KERNEL_INTERNAL_H

#include <math.h>
#include "gfi/kernel.h"
#include "gfi/status.h"

/* M_l(0) for l = 1..16, exactly rounded from 128-bit integer sums; NaN
 * outside. A_l = int sinc^l = 2 pi M_l(0). */
double kernel_bspline0(int l);

/* The binomial coefficient C(n, k) as a double (exact while it is below 2^53),
 * the product form the kernel facts use. */
static inline double kernel_binom(int n, int k) {
  double r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

/* ---- the family interface ----------------------------------------------
 * A band-limited kernel family is known to the routes only through the
 * operations below (one switch on k->kind each) and those of gfi/kernel.h
 * (gfi_kernel_kappa, gfi_kappa_sq_integral, gfi_kernel_check_band, A):
 *
 *   kernel_band          the transform's support |u| <= band (units of R)
 *   kernel_knots         the transform's pieces: knots in units of R
 *   kernel_piece_degree  kappa's polynomial degree on each piece
 *   kernel_peak          sup |phi| (the kernel's peak is peak R / A per axis)
 *   kernel_spatial       the spatial factor A K(u) (phi(sinc u) for the sinc
 *                        families), at the phase difference u = R (x - X)
 *   kernel_dbound        sup |d^P/du^P A K(u)| per unit of the peak (binning)
 *   kernel_pair          LSCV's pair function int kappa^2 e^{i v w} dw for
 *                        families other than sinc (the sinc families: select.c)
 *   kernel_lobe          the main lobe's width (value scale's histogram)
 *   kernel_margin        the design span's margin beyond the data box
 *   kernel_nodes         the fast route's node count estimate per axis
 *   kernel_rule          which frequency rule: Gauss-Legendre on the pieces
 *                        (kernel_knots) or the trapezoid rule on the line
 *                        (kernel_alias, kernel_tail and their reaches)
 *   kernel_binned        whether the binned route applies
 *
 * The sinc families (power, polynomial) keep their own vectorised inner
 * loops; every other family goes through kernel_spatial.
 *
 * The Gaussian (lib/kernel_gauss.c) is the one family that is not band-
 * limited: the kernel-sum engine's Gaussian, A K(u) = e^{-u^2/2} with
 * A = sqrt(2 pi) and R = 1 / h per axis, transform e^{-w^2/2} (units of R).
 * Its kind is internal (no public constructor): the Gaussian estimators
 * (gfi_density_plan_gauss, gfi_nw_plan_gauss) hand kernel_gauss's object to
 * the engine. kernel_knots refuses it (no pieces), so the band-limited
 * clients (exact MISE, LSCV, the Plancherel ISE) never take it. */

/* The Gaussian's kind: outside gfi_phi_kind's public values. */
#define GFI_KERNEL_GAUSS ((gfi_phi_kind)16)

/* The Gaussian kernel (kind GFI_KERNEL_GAUSS, l = 0, A = sqrt(2 pi)). */
void kernel_gauss(gfi_kernel *k);

static inline int kernel_is_gauss(const gfi_kernel *k) { return k->kind == GFI_KERNEL_GAUSS; }

/* The sinc families (power, polynomial): phi(sinc), with the vectorised
 * inner loops and the B-spline facts of their own. Every other band-limited
 * family (flat-top) goes through the operations below alone. */
static inline int kernel_is_sinc(const gfi_kernel *k) {
  return k->kind == GFI_PHI_POW || k->kind == GFI_PHI_POLY;
}

/* The transform's support edge: the highest sinc power of a power or
 * polynomial kernel, 1 for the flat-top, 0 for the Gaussian (no edge);
 * after gfi_kernel_check_band. */
static inline int kernel_band(const gfi_kernel *k) { return k->l; }

/* The flat-top kernel's parameter c (gfi_kernel_flattop). */
static inline double kernel_flattop_c(const gfi_kernel *k) { return k->coef[0]; }

/* a_j of phi(z) = sum_j a_j z^j (j = 1..GFI_PHI_MAXPOW): a power kernel's
 * from its l (its coef[] may be unset), a polynomial's from coef[]; 0 for a
 * kernel that is not a function of sinc (flat-top). */
static inline double kernel_coef(const gfi_kernel *k, int j) {
  if (k->kind == GFI_PHI_FLATTOP) return 0;
  return k->kind == GFI_PHI_POW ? (double)(j == k->l) : k->coef[j];
}

/* phi(z) of the kernel: z^l, the polynomial (Horner) or the user's phi.
 * Not for the flat-top kernel (no phi): kernel_spatial. */
static inline double kernel_phi(const gfi_kernel *k, double z) {
  if (k->kind == GFI_PHI_POW) {
    double r = z;
    for (int i = 1; i < k->l; i++) r *= z;
    return r;
  }
  if (k->kind == GFI_PHI_POLY) {
    double r = 0;
    for (int j = k->l; j >= 1; j--) r = (r + k->coef[j]) * z;
    return r;
  }
  return k->fn(z, k->ctx);
}

/* The flat-top's spatial factor sinc((1 + c) u / 2) sinc((1 - c) u / 2)
 * = 2 (cos(c u) - cos(u)) / ((1 - c^2) u^2), without cancellation (lib/kernel.c). */
double kernel_flattop_spatial(double c, double u);

/* A K(u) at the phase difference u: phi(sinc(u)), the flat-top's product,
 * or the Gaussian's e^{-u^2/2}. */
static inline double kernel_spatial(const gfi_kernel *k, double u) {
  if (k->kind == GFI_PHI_FLATTOP) return kernel_flattop_spatial(kernel_flattop_c(k), u);
  if (kernel_is_gauss(k)) return exp(-0.5 * u * u);
  return kernel_phi(k, gfi_sinc(u));
}

/* sup_u |A K(u)|: phi(1) for the sinc families with a_j >= 0 (|sinc| <= 1),
 * 1 for the flat-top (a product of two sincs) and the Gaussian. */
static inline double kernel_peak(const gfi_kernel *k) {
  return k->kind == GFI_PHI_FLATTOP || kernel_is_gauss(k) ? 1.0 : kernel_phi(k, 1.0);
}

/* kappa's degree on each piece between knots: l - 1 for the sinc families
 * (B-splines of order l), 1 for the flat-top's trapezoid. */
static inline int kernel_piece_degree(const gfi_kernel *k) {
  return k->kind == GFI_PHI_FLATTOP ? 1 : k->l - 1;
}

/* The knots t of the kernel's transform in units of R (kappa is a polynomial
 * of kernel_piece_degree between consecutive t R): for the sinc families the
 * union over the powers j present of -j, -j+2, .., j; for the flat-top -1,
 * -c, c, 1. Writes at most KERNEL_KNOTS_MAX values in increasing order and
 * returns their number; -1 for a kernel that is not band-limited. */
#define KERNEL_KNOTS_MAX (2 * GFI_PHI_MAXPOW + 1)
static inline int kernel_knots(const gfi_kernel *k, double *knots) {
  if (!k) return -1;
  if (k->kind == GFI_PHI_FLATTOP) {
    const double c = kernel_flattop_c(k);
    if (!(c > 0 && c < 1)) return -1;
    knots[0] = -1;
    knots[1] = -c;
    knots[2] = c;
    knots[3] = 1;
    return 4;
  }
  if ((k->kind != GFI_PHI_POW && k->kind != GFI_PHI_POLY) || k->l < 1 || k->l > GFI_PHI_MAXPOW)
    return -1;
  int n = 0;
  for (int x = -k->l; x <= k->l; x++) {
    int on = k->kind == GFI_PHI_POW && (k->l - x) % 2 == 0;
    for (int j = x < 0 ? -x : x; k->kind == GFI_PHI_POLY && j <= k->l && !on; j++) on = k->coef[j] != 0 && ((j - x) % 2 == 0);
    if (on) knots[n++] = x;
  }
  return n;
}

/* A bound on sup_u |d^P/du^P A K(u)| / kernel_peak for P = 1, 4, 6 (NaN for
 * other P): for the sinc families the binned route's constants (binned.c);
 * for the flat-top int |t|^P kappa(t) dt / (1 + c) (kappa >= 0, so the bound
 * is attained at u = 0 for even P). lib/kernel.c. */
double kernel_dbound(const gfi_kernel *k, int P);

/* The flat-top's LSCV pair function G(v) = int kappa(w)^2 e^{i v w} dw,
 * (K_R * K_R)(u) = (R / 2 pi) G(R u); no cancellation for any v. */
double kernel_pair_flattop(double c, double v);

/* LSCV's pair function of a family that is not a sinc family (the sinc
 * families': select.c, from their B-splines); NaN for those. */
static inline double kernel_pair(const gfi_kernel *k, double v) {
  return k->kind == GFI_PHI_FLATTOP ? kernel_pair_flattop(kernel_flattop_c(k), v) : NAN;
}

/* ---- what the kernel-sum engine asks of a family (bandlimited.c, binned.c) */

/* A kernel the engine takes: a band-limited family (its knots) with finite
 * A, or the Gaussian. */
static inline int kernel_engine_ok(const gfi_kernel *k) {
  double kn[KERNEL_KNOTS_MAX];
  return k && (kernel_is_gauss(k) || kernel_knots(k, kn) >= 0) && k->A_finite;
}

/* The main lobe's width in units of 1 / R: the cells of the value scale's
 * histogram are at least this wide (2 pi for the band-limited families,
 * sinc's first zeros; 2, twice the standard deviation, for the Gaussian). */
static inline double kernel_lobe(const gfi_kernel *k) { return kernel_is_gauss(k) ? 2.0 : 2 * M_PI; }

/* A few kernel widths in units of 1 / R: the design span widens the data
 * box by this much (at most the box's width) on each side (4 pi for the
 * band-limited families, 2 for the Gaussian). */
static inline double kernel_margin(const gfi_kernel *k) { return kernel_is_gauss(k) ? 2.0 : 4 * M_PI; }

/* The fast route's node count estimate on one whole axis of radius R and
 * span S (before the rule is built): Gauss-Legendre needs about a/2 + 8
 * nodes on each of the band's l knot intervals of width 2 R (a = R S); the
 * Gaussian's trapezoid rule about 2.7 (R S + 8). */
static inline double kernel_nodes(const gfi_kernel *k, double R, double S) {
  return kernel_is_gauss(k) ? 2.7 * (R * S + 8) : k->l * (0.5 * R * S + 8);
}

/* The fast route's frequency rule: Gauss-Legendre on the transform's pieces
 * (kernel_knots, kernel_piece_degree) for the band-limited families; for
 * the Gaussian, whose transform is entire with Gaussian tails, the
 * trapezoid rule on the line, its aliasing bounded by kernel_alias and its
 * truncation by kernel_tail. */
enum { KERNEL_RULE_PIECES = 0, KERNEL_RULE_TRAPEZOID = 1 };
static inline int kernel_rule(const gfi_kernel *k) {
  return kernel_is_gauss(k) ? KERNEL_RULE_TRAPEZOID : KERNEL_RULE_PIECES;
}

/* The trapezoid rule's two errors per axis, relative to the peak K(0) and
 * for every |u| <= S (lib/kernel_gauss.c; NaN for the band-limited
 * families):
 *   kernel_alias(k, t)    aliasing: with nodes at the spacing 2 pi / P,
 *                         P = S + t / R, the rule sums K over the copies
 *                         u + m P, m != 0: at most this;
 *   kernel_tail(k, v)     truncation of the rule beyond |w| = v R;
 *   kernel_alias_reach, kernel_tail_reach: the t and v for a target e. */
double kernel_gauss_alias(double t);
double kernel_gauss_alias_reach(double e);
double kernel_gauss_tail(double v);
double kernel_gauss_tail_reach(double e);
static inline double kernel_alias(const gfi_kernel *k, double t) {
  return kernel_is_gauss(k) ? kernel_gauss_alias(t) : NAN;
}
static inline double kernel_alias_reach(const gfi_kernel *k, double e) {
  return kernel_is_gauss(k) ? kernel_gauss_alias_reach(e) : NAN;
}
static inline double kernel_tail(const gfi_kernel *k, double v) {
  return kernel_is_gauss(k) ? kernel_gauss_tail(v) : NAN;
}
static inline double kernel_tail_reach(const gfi_kernel *k, double e) {
  return kernel_is_gauss(k) ? kernel_gauss_tail_reach(e) : NAN;
}

/* Whether the binned route applies (binned.c): its bound takes
 * kernel_dbound's constants and the samples' rounding of the band-limited
 * families; the Gaussian has none (its grids take the trapezoid rule). */
static inline int kernel_binned(const gfi_kernel *k) { return !kernel_is_gauss(k); }

#endif
