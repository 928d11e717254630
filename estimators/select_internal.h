/* Shared parts of the selection code (estimators/select.c, select_gauss.c):
 * the closed-form pair function of int p_hat^2, the search, robust scales. */
#ifndef GFI_SELECT_INTERNAL_H
#define GFI_SELECT_INTERNAL_H

#include <stddef.h>
#include "gfi/select.h"
#include "gfi/kernel.h"

#define SEL_MAXL 8
#define SEL_MAXDEG (2 * SEL_MAXL - 2)
/* Taylor terms of G_l near 0 (enough for l |v| <= 12 to 1e-17) */
#define SEL_NT 40

/* G(v) = int kappa(w)^2 e^{i v w} dw for a power or polynomial kernel:
 * jumps of kappa^2's derivatives at the knots t0 + step j (a power l: -l + 2j,
 * j = 0..l; a polynomial of degree l: every integer in [-l, l]), and Taylor
 * coefficients (-1)^n mu_2n / (2n)!. */
typedef struct sel_pair {
  int l;       /* the highest sinc power */
  int nk, t0, step;
  int jmin;    /* the lowest sinc power: kappa^2's derivatives below jmin - 1 do not jump */
  gfi_kernel family; /* with by_family: a family other than sinc (kernel_pair), the rest unused */
  int by_family;
  double jump[2 * SEL_MAXL + 1][SEL_MAXDEG + 1];
  double taylor[SEL_NT];
  double vc; /* |v| below which the Taylor series is used */
} sel_pair;

/* k: a band-limited kernel (gfi_kernel_check_band). */
void sel_pair_init(sel_pair *p, const gfi_kernel *k);
double sel_pair_G(const sel_pair *p, double v);

/* criterion at radii R (D <= 3: R[j]; larger D: R[0] for every axis) */
typedef int (*sel_crit)(void *ctx, const double *R, double *value);
/* The scan, golden-section refinement and per-axis sweeps (gfi/select.h). */
int sel_search(sel_crit f, void *ctx, size_t D, double lo, double hi, size_t nscan, int per_axis,
               gfi_select_result *res, double *curve);

/* min(sd, IQR/1.349) of column j (N x D), NaN when out of memory. */
double sel_robust_scale(size_t N, size_t D, const double *x, size_t j);
/* Arguments of the pair-sum routines: GFI_EINVAL (NULL), GFI_EEMPTY (N < 2),
 * GFI_EDIM, GFI_ENONFINITE. */
int sel_check_data(size_t N, size_t D, const double *x);
/* Threads for an O(N^2) pair sum: one below 2^23 pairs (the bits do not
 * depend on it), else n (0: all). */
int sel_pair_threads(int n, size_t N);

/* The 2-D Gaussian LSCV at nH matrices H (nH x 4, row-major 2 x 2) through
 * the empirical cf, as gfi_bw_lscv's fast route evaluates it (one rule,
 * rebuilt when an H leaves its cover): for the tests. */
/* |phi_N(w)|^2 of the (centred) 2-D data xc on the half-plane trapezoid
 * nodes w = (k0 d0, (k1 - K1) d1), k0 = 0..K0, k1 = 0..2 K1, K_j =
 * ceil(T / d_j): *p2 is n0 x n1 (malloc'ed), by one NUFFT whose cf is
 * within cftol (gfi_ecf's tol); *cf_err (may be NULL): the cf's error bound,
 * cftol or the larger bound gfi_ecf reports (with the phases' rounding).
 * GFI_ERANGE above qmax nodes. Shared by the 2-D LSCV and plug-in. */
int sel_ecf2_halfplane(size_t N, const double *xc, const double *d, double T, size_t qmax, int nt,
                       double cftol, double *cf_err, size_t *n0, size_t *n1, double **p2);

int sel_gauss_lscv2_ecf(size_t N, const double *x, const gfi_opts *o, size_t nH, const double *H,
                        double *v);

/* Type-7 quantile; sorts v. */
double sel_quantile(double *v, size_t n, double p);

/* The fast route of gfi_loocv without its checks (tests): also the rows the
 * first band-limited pass left unsettled (left[0]) and those the second,
 * tighter pass left to the direct sum (left[1]). second: 1 run the second
 * pass, 0 not, -1 when its cost model says it pays (gfi_loocv's choice). */
int sel_loocv_fast(int l, size_t N, size_t D, size_t V, const double *x, const double *y,
                   const double *R, double denom_tol, double tol, int nthreads, int second,
                   double *value, double *bound, size_t left[2]);

#endif
