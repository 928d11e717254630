/* Data-driven radius and bandwidth selection (docs/theory.md section 7).
 *
 * Fourier density estimator, phi(z) = z^l, a polynomial phi (gfi_kernel_poly) or
 * the flat-top kernel (gfi_kernel_flattop),
 * least-squares cross-validation (Rudemo 1982, Bowman 1984):
 *
 *   LSCV(R) = int p_hat^2 - 2/(N(N-1)) sum_{i != k} K_R(x_i - x_k),
 *
 * an unbiased estimate of ISE(R) - int p^2. Two routes compute it:
 *  - direct, O(N^2 D): the first term as (1/N^2) sum_{i,k} C_R(x_i - x_k) with
 *    the closed form of C_R = K_R * K_R (prod_j (R_j/2pi) G(R_j u_j), G the
 *    Fourier transform of kappa^2, a piecewise polynomial with knots at the
 *    kernel's knots), the second as the plain pair sum;
 *  - fast, O(N + Q) (D <= 3): both terms from |F(w)|^2, F(w) = (1/N) sum_i
 *    e^{-i w.x_i}, on one Gauss-Legendre rule in frequency (one type-3 NUFFT):
 *    LSCV = (2 pi)^-D int [Kbar^2 - 2N/(N-1) Kbar] |F|^2 dw + 2 K_R(0)/(N-1).
 *
 * Nadaraya-Watson (powers and polynomial phi), leave-one-out cross-validation
 * with vector responses:
 *
 *   CV(R) = (1/N_used) sum_i |y_i - m_{-i}(x_i)|^2,
 *
 * m_{-i} the estimate without point i. A row whose leave-one-out denominator
 * S_{-i} = sum_{k != i} K_ik vanishes (S_{-i} <= denom_tol sum_{k != i} |K_ik|,
 * which includes S_{-i} <= 0 and an empty neighbourhood) is left out of the
 * mean and counted (never NaN). The fast route takes num and den at the data
 * points from the band-limited engine and subtracts the point's own term
 * (K_R(0) y_i, K_R(0)); rows it cannot settle within its error bound are
 * recomputed by the direct sum.
 *
 * Selection: LSCV and CV have several local minima. gfi_select_* scans nscan
 * radii log-spaced over [R_lo, R_hi] (one radius for every axis) and
 * refines the lowest local minima of the scan (up to 4; those whose scan
 * value is within 4 times the first refinement's gain of the best): each
 * bracket between a minimum's neighbours gets a scan of 17 radii (3 of
 * them the scan's own), then Brent's method (parabolic interpolation with
 * golden-section steps) on log R, to 1e-5. When the scan has more than one local
 * minimum, it is doubled (midpoints added) and its minima refined again
 * until two rounds agree on the minimiser (log R within 1e-4; at most 3
 * doublings, 8 nscan radii), so that a deeper minimum between two scan
 * points, or two minima within one bracket, are found. evals counts every
 * evaluation; nlocal is the first scan's count. With per_axis (D <= 3) the radii are then
 * refined one axis at a time (a scan of 17 radii over [R_j/4, 4 R_j] and
 * Brent's method per axis,
 * all other radii fixed) until no axis moves by more than 1e-3 relative.
 *
 * Gaussian baselines (H the kernel's covariance, N(x; 0, H)):
 *  - gfi_gauss_lscv: the LSCV criterion of the Gaussian KDE, direct O(N^2);
 *  - gfi_bw_lscv: its minimiser, scalar h (H = h^2) in 1-D, full H in 2-D;
 *  - gfi_bw_dpi: the Sheather-Jones-type direct plug-in of KernSmooth::dpik
 *    (two stages, scale min(sd, IQR/1.349)) with exact functionals (1-D);
 *  - gfi_bw_hpi, gfi_bw_hpi_diag: the 2-D plug-in matrices of ks::Hpi and
 *    ks::Hpi.diag (two-stage SAMSE pilots, exact functionals);
 *  - gfi_bw_normal_ref: the normal-reference matrix (4/(D+2))^(2/(D+4))
 *    N^(-2/(D+4)) S (ks::Hns);
 *  - gfi_gauss_nw_loocv / gfi_bw_nw_loocv: leave-one-out CV of Gaussian NW.
 *
 * All functions copy what they need, are thread-safe and give bit-for-bit
 * the same results for any thread count. Errors: GFI_EINVAL (NULL, bad
 * option), GFI_EEMPTY (N < 2), GFI_EDIM, GFI_ENONFINITE, GFI_ERADIUS (R or
 * range not positive and finite), GFI_EORDER, GFI_EUNSUPPORTED (custom phi;
 * FAST with D > 3; per_axis with D > 3; 2-D-only or 1-D-only baselines),
 * GFI_ERANGE (FAST: the node count explodes), GFI_ENOMEM. */
#ifndef GFI_SELECT_H
#define GFI_SELECT_H

#include "export.h"
#include <stddef.h>
#include "status.h"
#include "kernel.h"
#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most radii a scan takes (gfi_select_opts.nscan, gfi_minimize_radius):
 * more is refused (GFI_EINVAL, "nscan"), so that a count that wrapped round
 * (-1 as a size_t) fails at once instead of scanning for ever. */
#define GFI_SELECT_NSCAN_MAX 100000

typedef struct gfi_select_opts {
  gfi_opts base;    /* nthreads; method: DIRECT, FAST or AUTO (cost model); tol */
  double R_lo, R_hi;/* scan range of the radius; 0: automatic (see below) */
  size_t nscan;     /* radii on the scan (3..GFI_SELECT_NSCAN_MAX; 0: 100) */
  int per_axis;     /* 1: a radius per axis after the isotropic scan (D <= 3) */
  double denom_tol; /* NW: leave-one-out rows with S <= denom_tol sum|K| are left out
                       (0: GFI_NW_DENOM_TOL) */
} gfi_select_opts;

/* Automatic range: R in [0.05, 10 max(5, N^(1/5))] / s, s the smallest
 * per-axis robust scale min(sd, IQR/1.349) of the data (inputs for NW). */
GFI_EXPORT void gfi_select_default_opts(gfi_select_opts *o);

typedef struct gfi_select_result {
  size_t D;
  double R[3];        /* the chosen radius per axis (isotropic: all equal; D > 3: R[0]) */
  double value;       /* the criterion there */
  double bound;       /* bound on |value - exact criterion| (0 on the direct route) */
  double R_lo, R_hi;  /* the scan range used */
  size_t nscan;       /* radii on the scan */
  size_t nlocal;      /* local minima on the scan (1: unimodal) */
  int at_edge;        /* 1 when the minimum is at an end of the scan range */
  size_t evals;       /* criterion evaluations in all */
  size_t nflagged;    /* NW: rows left out at the chosen radius */
  gfi_method route;   /* the route of the last evaluation */
} gfi_select_result;

/* LSCV at radii R[D] (phi = z^l). bound (may be NULL): |value - exact| bound
 * of the fast route (0 on the direct route); route (may be NULL) what ran. */
GFI_EXPORT int gfi_lscv(const gfi_kernel *k, size_t N, size_t D, const double *data, const double *R,
                        const gfi_opts *opts, double *value, double *bound, gfi_method *route);

/* Leave-one-out CV of Fourier NW at radii R[D]; y: N x V. *nflagged (may be
 * NULL): rows left out. denom_tol 0: GFI_NW_DENOM_TOL. GFI_EDENOM when every
 * row is left out (value NaN then). */
GFI_EXPORT int gfi_loocv(const gfi_kernel *k, size_t N, size_t D, size_t V, const double *x,
                         const double *y, const double *R, const gfi_opts *opts, double denom_tol,
                         double *value, size_t *nflagged, double *bound, gfi_method *route);

/* The LSCV-minimising radius. curve (may be NULL): nscan x 2 values
 * (R, LSCV) of the isotropic scan, nscan = opts->nscan (0: 100).
 * Route: with opts->base.method auto, gfi_select_lscv and gfi_select_loocv
 * choose one route for the whole search (the cost model summed over the
 * scan's radii; direct when the fast route could not take some scanned
 * radius), so that every radius's criterion is computed the same way; a
 * radius the fast route then cannot take (GFI_ERANGE) is computed directly. */
GFI_EXPORT int gfi_select_lscv(const gfi_kernel *k, size_t N, size_t D, const double *data,
                               const gfi_select_opts *opts, gfi_select_result *res, double *curve);

/* The CV-minimising radius of Fourier NW (curve as gfi_select_lscv). */
GFI_EXPORT int gfi_select_loocv(const gfi_kernel *k, size_t N, size_t D, size_t V, const double *x,
                                const double *y, const gfi_select_opts *opts, gfi_select_result *res,
                                double *curve);

/* The radius search of gfi_select_lscv and gfi_select_loocv for any
 * criterion of one radius: f(ctx, r, &value) returns a gfi status (a
 * nonzero one stops the search and is returned) and the value at r (+inf
 * marks a radius as unusable). A log scan of nscan (>= 3) radii on
 * [lo, hi]; the scan's lowest local minima refined (a finer scan of their
 * bracket, then Brent's method to 1e-5 in log r); the scan doubled until
 * two rounds agree on the minimiser (select.md). res: R[0] the radius
 * (one at which f was evaluated), value, nscan, nlocal, at_edge, evals.
 * GFI_EDENOM when no radius gave a finite value. */
typedef int (*gfi_radius_fn)(void *ctx, double r, double *value);
GFI_EXPORT int gfi_minimize_radius(gfi_radius_fn f, void *ctx, double lo, double hi, size_t nscan,
                                   gfi_select_result *res);

/* ---- Gaussian baselines ---- */

/* LSCV of the Gaussian KDE with bandwidth matrix H (D x D SPD), direct
 * O(N^2 D^2): (1/N^2) sum_{i,k} N(x_i - x_k; 0, 2H) - 2/(N(N-1)) sum_{i != k}
 * N(x_i - x_k; 0, H). GFI_EBANDWIDTH when H is not SPD. */
GFI_EXPORT int gfi_gauss_lscv(size_t N, size_t D, const double *data, const double *H,
                              const gfi_opts *opts, double *value);

/* The LSCV bandwidth: D = 1, *H = h^2 with h the global minimiser over
 * [h_ns/50, 4 h_ns] (h_ns the normal reference; a log scan of 100 refined
 * as in gfi_select_*); D = 2, the full matrix (Nelder-Mead on the
 * Cholesky factor from the normal reference). GFI_EUNSUPPORTED for D > 2.
 * opts.method: DIRECT sums the pairs at every step (O(N^2) each); FAST
 * integrates the empirical cf on a trapezoid rule in frequency (one NUFFT
 * per rule, a handful of rules per search; every |phi_N|^2 within opts.tol,
 * so the criterion within tol of its scale, the criterion with |phi_N| = 1);
 * AUTO takes the cheaper by the engine's cost model (the pairs where the
 * rule's nodes explode). */
GFI_EXPORT int gfi_bw_lscv(size_t N, size_t D, const double *data, const gfi_opts *opts, double *H);

/* Direct plug-in bandwidth h (1-D) as KernSmooth::dpik(level = 2), with the
 * kernel functionals psi_6, psi_4 summed exactly over all pairs (DIRECT) or
 * through the empirical cf, each |phi_N|^2 within opts.tol (FAST); AUTO the
 * cheaper by the engine's cost model. */
GFI_EXPORT int gfi_bw_dpi(size_t N, const double *data, const gfi_opts *opts, double *h);

/* What the plug-in matrices computed on the way (sphered or scaled data). */
typedef struct gfi_hpi_info {
  double g6, g4;   /* the SAMSE pilot bandwidths of the two stages */
  double psi4[5];  /* psi_(4,0), psi_(3,1), psi_(2,2), psi_(1,3), psi_(0,4) at g4 */
  double amise;    /* AMISE of the chosen matrix, in the pre-transformed coordinates */
  size_t iters;    /* Newton iterations (0: closed form, or D = 1) */
  int fast;        /* 1: the functionals came through the empirical cf (D = 2) */
  double bound;    /* that route's error bound relative to the largest functional */
} gfi_hpi_info;

/* Plug-in bandwidth matrix, unconstrained (ks::Hpi with its defaults: two
 * stages, SAMSE pilots g^2 I on sphered data), with every kernel functional
 * summed over all pairs (ks bins above N = 500) and the AMISE minimised to
 * rounding by Newton's method (ks: optim's BFGS). D = 2: H is 2 x 2,
 * row-major; D = 1: *H = h^2 with h = gfi_bw_dpi (ks::hpi). info may be
 * NULL. opts.method: DIRECT sums the pairs, O(N^2); FAST integrates the
 * empirical cf (one NUFFT per functional order, O(N); its bound, relative
 * to the largest functional, within opts.tol after at most one tighter
 * NUFFT where the functionals cancel; GFI_ERANGE when its node count
 * explodes); AUTO (default) takes the cheaper by the engine's cost model
 * (the pairs at most 30000 points), the pairs where FAST's bound still
 * misses tol, and the pairs where FAST's nodes explode (a sample whose range spans thousands of pilot widths, as
 * heavy tails give at large N: t_3 at N = 1e6). GFI_ENOTPD
 * when the sample covariance is singular, GFI_EQUAD when the estimated
 * functionals admit no minimiser, GFI_EUNSUPPORTED for D > 2. */
GFI_EXPORT int gfi_bw_hpi(size_t N, size_t D, const double *data, const gfi_opts *opts, double *H,
                          gfi_hpi_info *info);

/* Diagonal plug-in matrix (ks::Hpi.diag): the same functionals on data scaled
 * by each axis' sd, and ks's closed form for the minimiser. As gfi_bw_hpi. */
GFI_EXPORT int gfi_bw_hpi_diag(size_t N, size_t D, const double *data, const gfi_opts *opts, double *H,
                               gfi_hpi_info *info);

/* Normal-reference bandwidth matrix (ks::Hns): H = (4/(D+2))^(2/(D+4))
 * N^(-2/(D+4)) S, S the sample covariance (N - 1 divisor). */
GFI_EXPORT int gfi_bw_normal_ref(size_t N, size_t D, const double *data, double *H);

/* Leave-one-out CV of Gaussian NW with bandwidth matrix H (flags as gfi_loocv). */
GFI_EXPORT int gfi_gauss_nw_loocv(size_t N, size_t D, size_t V, const double *x, const double *y,
                                  const double *H, const gfi_opts *opts, double *value,
                                  size_t *nflagged);

/* The CV-minimising isotropic Gaussian NW bandwidth h (H = h^2 I): a log
 * scan of 60 over [s/200, 2 s] (s the smallest robust input scale) refined
 * as in gfi_select_*. */
GFI_EXPORT int gfi_bw_nw_loocv(size_t N, size_t D, size_t V, const double *x, const double *y,
                               const gfi_opts *opts, double *h, double *value);

#ifdef __cplusplus
}
#endif
#endif
