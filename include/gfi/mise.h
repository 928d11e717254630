/* Error measurement for the generalized Fourier density estimator
 * (docs/theory.md section 3): MSE at points, ISE of one estimate (on a grid, with
 * a bound for the truncated tail, or exactly through Plancherel), Monte-Carlo
 * MISE on RNG streams, the exact MISE by Plancherel, the Gaussian-KDE exact
 * MISE (Marron & Wand 1992) and the MISE-optimal radius.
 *
 * Kernel: phi(z) = z^l, l = 1..8, radius R_j per axis. Plancherel:
 *
 *   MISE(N, R) = (2 pi)^-D [ int |psi|^2 (1 - Kbar)^2 dt + (1/N) int (1 - |psi|^2) Kbar^2 dt ]
 *
 * with Kbar(t) = prod_j kappa_l(t_j / R_j) supported on the box |t_j| <= l R_j.
 *
 * Which truths the exact route supports (D = 1, 2, 3):
 *   - normal mixtures (GFI_MODEL_MIXTURE: single normals with a dense
 *     covariance, Marron-Wand densities, user mixtures);
 *   - 1-D Laplace, Cauchy and Student-t, and products of 1-D factors of those
 *     kinds and of 1-D normal mixtures (gfi_model_product; the CLI's i.i.d.
 *     products `laplace`, `cauchy`, `t:NU` with --dim D > 1).
 * Uniform and Beta factors (|psi|^2 decaying like t^-2 with oscillation, a
 * discontinuous or non-smooth density outside the theorems' classes) and
 * D > 3 are refused with GFI_EUNSUPPORTED.
 *
 * Quadrature: a tensor Gauss-Legendre rule whose per-axis breakpoints
 * include the kernel's knots (multiples of R_j with the parity of l), so the
 * piecewise-polynomial Kbar is smooth in every cell; cells are cut to the
 * scale of |psi|^2 (normal mixtures: the Gaussian widths and the cosine
 * periods; other factors: graded cells growing with |t|). The bias term is
 * summed as |psi|^2 (1 - Kbar)^2 node by node (never as a difference of
 * large integrals); outside the box it is int |psi|^2: on the same grid out
 * to where the Gaussian bound falls below e^-45 of its peak (mixtures) or,
 * for products, as prod T_j - prod B_j written as the telescoping sum
 * sum_j O_j prod_{i<j} B_i prod_{i>j} T_i with the 1-D tails O_j by GSL's
 * qagiu. The variance term uses int Kbar^2 = prod_j R_j M_2l(0)/M_l(0)^2 in
 * closed form. Relative accuracy is about 1e-10 or better (tests check the
 * closed form for l = 1 and a doubled resolution).
 *
 * All functions are thread-safe (no shared state) and deterministic: the
 * same arguments give the same bits for any thread count. */
#ifndef GFI_MISE_H
#define GFI_MISE_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>
#include "status.h"
#include "kernel.h"
#include "model.h"
#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a Monte-Carlo replication measures the ISE of its estimate. */
typedef enum {
  GFI_ISE_AUTO = 0,        /* Plancherel for D <= 2, grid otherwise */
  GFI_ISE_PLANCHEREL = 1,  /* exact, through the empirical cf (D <= 2) */
  GFI_ISE_GRID = 2         /* Gauss-Legendre cubature on a box, tail bounded */
} gfi_ise_method;

/* Options of the measurements: gfi's common options first (base.nthreads:
 * 0 = all cores; base.seed: Monte Carlo replication k uses RNG stream
 * (seed, k)), then the measurements' own. Initialise with
 * gfi_mise_default_opts; fields are only ever added. */
typedef struct gfi_mise_opts {
  gfi_opts base;         /* nthreads, seed, ... (gfi_default_opts). Monte Carlo with the
                            Plancherel ISE also reads:
                            method: how the empirical cf at the nodes is summed:
                              GFI_METHOD_DIRECT: N x nodes sines and cosines, all N points
                              of a replication in memory (the reference);
                              GFI_METHOD_FAST: a type-3 NUFFT, the points streamed from
                              each replication's RNG stream (memory independent of N);
                              GFI_METHOD_AUTO (default): each replication's sums by the
                              cheaper of the NUFFT and direct sums; without parts and
                              at N D <= 2^21, every replication on the rule of its own
                              extent with its points in memory (a heavy-tailed truth's
                              widest replication no longer sizes the others' rules),
                              else streamed on one rule;
                            tol: fast route, bound on the error of the empirical cf at
                              each node (|phi_N(0)| = 1 is its largest value); 0 = 1e-10
                              (GFI_FAST_TOL_DEFAULT, as every client);
                            data_block: streamed route, points per sampler call (0 =
                              65536); the result does not depend on it */
  gfi_ise_method ise;    /* Monte Carlo: how each ISE is measured */
  int parts;             /* Monte Carlo: also estimate bias^2 and variance from the
                            pooled sample (costs about one more pass); default 1 */
  double resolution;     /* quadrature refinement (1 = default; 2 = cells half as wide) */
  double grid_halfwidth; /* grid ISE: box half-width per axis around the model's centre,
                            in units of the model's scale; 0 = automatic (8) */
  size_t grid_cells;     /* grid ISE: cells per axis (0 = automatic) */
  double max_points;     /* Monte Carlo (gfi_mise_mc): the most points N x nreps to draw and
                            sum; beyond, GFI_ERANGE naming "nreps" before any work
                            (0 = GFI_MISE_MC_MAX_POINTS). gfi_mise_gauss_mc: the most
                            Gaussian pairs N^2 x nreps (0 = GFI_MISE_GAUSS_MC_MAX_PAIRS) */
} gfi_mise_opts;

/* Monte Carlo's default budget of N x nreps points: the CPU draws and sums
 * about 1e7 points per second per thread, so beyond it a run takes hours.
 * Under MPI (mise_mc_split) each process gets this budget. */
#define GFI_MISE_MC_MAX_POINTS 1e11
/* The Gaussian KDE's Monte Carlo sums N^2 pairs per replication, about 5e8
 * per second per thread: its default budget of N^2 x nreps pairs. */
#define GFI_MISE_GAUSS_MC_MAX_PAIRS 1e12

GFI_EXPORT void gfi_mise_default_opts(gfi_mise_opts *o);

/* The answer of every MISE routine. For the exact route se = 0 and the
 * interval is the value itself. For Monte Carlo: mean of the replications'
 * ISE, its standard error and normal 95% interval; bias2 and var are the
 * integrated squared bias and integrated variance (Monte Carlo: estimated
 * from the pooled sample when opts->parts, NAN otherwise). */
typedef struct gfi_mise_result {
  double mise, se, lo95, hi95;
  double bias2, var;
  size_t nreps;            /* 0 for exact */
  double bias2_in;         /* exact: the part of bias2 from inside the box |t_j| <= l R_j */
  double bias2_out;        /* exact: int outside the box of |psi|^2, (2 pi)^-D scaled */
  /* Monte Carlo with the Plancherel ISE: how the empirical cf was computed
   * (GFI_METHOD_DIRECT or GFI_METHOD_FAST; 0 otherwise), the node count per
   * axis of the rule (streamed: the one rule of every replication and the
   * pooled sample; 0 when each replication had its own rule), and a bound on
   * |ISE - ISE with the exact empirical cf| over the replications implied by
   * the NUFFT tolerance (0 for direct sums). */
  int method;
  size_t nodes[3];
  double ise_err_bound;
} gfi_mise_result;

/* 1 when gfi_mise_exact supports this model (see above). */
GFI_EXPORT int gfi_mise_exact_supported(const gfi_model *m);

/* Exact MISE of the estimator with phi = z^l, N points and radii R[D].
 * N is a double so that sizes beyond 2^53 are accepted (N >= 1).
 * Errors: GFI_EINVAL, GFI_EORDER, GFI_ERADIUS, GFI_EEMPTY (N < 1),
 * GFI_EUNSUPPORTED (model, or D > 3), GFI_EQUAD, GFI_ENOMEM, and GFI_ERANGE
 * when the quadrature would need more than GFI_MISE_EXACT_MAX_AXIS nodes on
 * one axis or GFI_MISE_EXACT_MAX_NODES in all (a large resolution or R):
 * refused before any work, with res->nodes[] set to the counts it needed. */
#define GFI_MISE_EXACT_MAX_AXIS ((size_t)1 << 24)
#define GFI_MISE_EXACT_MAX_NODES ((size_t)1 << 30)
GFI_EXPORT int gfi_mise_exact(const gfi_model *m, const gfi_kernel *k, double N, const double *R,
                   const gfi_mise_opts *opts, gfi_mise_result *res);

/* Exact MISE of the Gaussian KDE with bandwidth matrix H (D x D, SPD) for a
 * normal-mixture truth (Marron & Wand 1992; Wand & Jones 1993):
 *   MISE = (4 pi)^-D/2 |H|^-1/2 / N + w' [(1 - 1/N) O_2 - 2 O_1 + O_0] w,
 *   O_c[a,b] = N(mu_a - mu_b; 0, c H + S_a + S_b).
 * GFI_EUNSUPPORTED for other truths, GFI_EBANDWIDTH when H is not SPD. */
GFI_EXPORT int gfi_mise_gauss_exact(const gfi_model *m, double N, const double *H, gfi_mise_result *res);

/* Exact ISE of one Gaussian KDE estimate (bandwidth matrix H, D x D SPD;
 * data N x D row-major, uniform weights) for a normal-mixture truth, every
 * term a Gaussian convolution in closed form (docs/theory.md section 3):
 *   ISE = (1/N^2) sum_ij N(x_i - x_j; 0, 2H) - (2/N) sum_i sum_a w_a N(x_i - mu_a; 0, H + S_a)
 *         + sum_ab w_a w_b N(mu_a - mu_b; 0, S_a + S_b).
 * O(N^2 D). D <= 6, at most 64 components; GFI_EUNSUPPORTED otherwise and
 * for other truths, GFI_EBANDWIDTH when H (or H + S_a) is not SPD. */
GFI_EXPORT int gfi_ise_gauss(const gfi_model *m, size_t N, const double *data, const double *H, double *ise);

/* Monte-Carlo MISE of the Gaussian KDE: the mean of gfi_ise_gauss over
 * nreps >= 2 replications, replication k drawing its N points from RNG
 * stream (opts->base.seed, k) (opts may be NULL: seed 0, all cores); the
 * same bits for any thread count. res->bias2 and res->var are NaN (no
 * pooled pass: it would cost O((nreps N)^2)); ise_out (may be NULL) gets
 * the nreps ISE values. Errors as gfi_ise_gauss; GFI_ERANGE naming "nreps"
 * (gfi_error_param) before any work when N^2 x nreps exceeds the budget
 * opts->max_points (0 or no opts: GFI_MISE_GAUSS_MC_MAX_PAIRS). */
GFI_EXPORT int gfi_mise_gauss_mc(const gfi_model *m, size_t N, const double *H, size_t nreps,
                                 const gfi_mise_opts *opts, gfi_mise_result *res, double *ise_out);

/* The MISE-optimal isotropic Gaussian bandwidth H = h^2 I (as gfi_ropt: a
 * bracket on log h, then gfi_minimize_radius on it) and the MISE there. */
GFI_EXPORT int gfi_mise_gauss_hopt(const gfi_model *m, double N, double *h, gfi_mise_result *res);

/* The radius minimising the exact MISE along R = r * Rdir (Rdir: D positive
 * numbers, NULL = all ones): a geometric bracket search on log r with no
 * upper cap, then the radius search of gfi_minimize_radius on the bracket
 * (a scan of 3 radii, the finer scan of its lowest local minimum, Brent's
 * method to 1e-5 in log r). *r_opt receives r (one at which the MISE was
 * computed); res the MISE there. GFI_EQUAD when no minimum is bracketed
 * (MISE monotone over 1e-8..1e14). */
GFI_EXPORT int gfi_ropt(const gfi_model *m, const gfi_kernel *k, double N, const double *Rdir,
             const gfi_mise_opts *opts, double *r_opt, gfi_mise_result *res);

/* Exact ISE of one estimate by Plancherel with the empirical characteristic
 * function phi_N(t) = (1/N) sum_i exp(i t.x_i):
 *   ISE = (2 pi)^-D [ int_box |phi_N Kbar - psi|^2 dt + int_outside |psi|^2 dt ].
 * The box integral is a Gauss-Legendre rule whose cells resolve the highest
 * frequency present (the data's and the model's extent), so the cost is
 * O(N * nodes), nodes ~ (l R * extent)^D: practical for D <= 2 and moderate
 * N R. GFI_EUNSUPPORTED for D > 2 or when more than 2^32 (node, point) pairs
 * would be needed (heavy-tailed data at large N, e.g. Cauchy in 2-D). Any model for which
 * gfi_mise_exact works. data: N x D row-major, uniform weights. */
GFI_EXPORT int gfi_ise_plancherel(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                       const double *R, const gfi_mise_opts *opts, double *ise);

/* ISE on a box by Gauss-Legendre cubature (any kernel with finite A, any
 * model with a pdf). lo, hi: the box (D values each; NULL = automatic from
 * opts->grid_halfwidth around the model's centre). *ise receives the box
 * integral; *tail_bound (may be NULL) an upper bound on the part outside the
 * box, (sqrt(E) + sqrt(T))^2 with E >= int_out p_hat^2 (Jensen and the
 * kernel's |x|^-l tails, in closed form) and T = int_out p^2 (Plancherel
 * total minus the box cubature; exact-route models only, else a pdf bound is
 * not available and *tail_bound = INFINITY). The truncation is reported,
 * never dropped: the true ISE lies in [*ise, *ise + *tail_bound] up to
 * cubature error. */
GFI_EXPORT int gfi_ise_grid(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                 const double *R, const double *lo, const double *hi,
                 const gfi_mise_opts *opts, double *ise, double *tail_bound);

/* MSE at M given points: mean over the points of (p_hat - p)^2, and the
 * standard error of that mean (*se may be NULL). */
GFI_EXPORT int gfi_mse_points(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                   const double *R, size_t M, const double *points,
                   const gfi_mise_opts *opts, double *mse, double *se);

/* MSE at M points drawn uniformly from the box [lo, hi] (RNG stream
 * (seed, 2^63) of opts->base.seed, apart from the data streams). The result
 * times the box volume estimates the ISE on the box. */
GFI_EXPORT int gfi_mse_box(const gfi_model *m, const gfi_kernel *k, size_t N, const double *data,
                const double *R, const double *lo, const double *hi, size_t M,
                const gfi_mise_opts *opts, double *mse, double *se);

/* Monte-Carlo MISE: nreps replications, replication k samples N points from
 * RNG stream (opts->base.seed, k), builds the estimate and measures its ISE
 * (opts->ise). All cores; the result is bit-for-bit the same for any
 * nthreads. With opts->parts the pooled estimator (all nreps * N points,
 * whose ISE has expectation bias2 + var/nreps) separates the two parts:
 * var = (mean ISE - pooled ISE) nreps/(nreps - 1), bias2 = mean ISE - var.
 * When the pooled sample is too wide for the Plancherel rule (heavy tails)
 * the parts are left NaN. nreps >= 2. ise_out (nreps values, may be NULL) receives each ISE. */
GFI_EXPORT int gfi_mise_mc(const gfi_model *m, const gfi_kernel *k, size_t N, const double *R, size_t nreps,
                const gfi_mise_opts *opts, gfi_mise_result *res, double *ise_out);

#ifdef __cplusplus
}
#endif
#endif
