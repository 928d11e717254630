/* The band-limited route of sums over data (see gfi/fast.h for the maths):
 * the frequency quadrature, the two type-3 NUFFTs, the separable grid step,
 * the error bound and the cost model that 'auto' decides with. Private to
 * the estimators: density.c and regression.c put it behind their plans.
 *
 * A bl_sum holds the data once (centred at the middle of their box) and
 * ncol real coefficient columns c_col,i; it evaluates
 *
 *   s_col(y) = sum_i c_col,i prod_j (R_j / A_l) sinc(R_j (y_j - x_ij))^l
 *
 * at scattered points or on a tensor grid, or the same with any kernel
 * family the engine takes (kernel_internal.h: kernel_engine_ok), whose
 * operations give A, the peak and the frequency rule; the Gaussian
 * (kernel_gauss: prod_j (R_j / sqrt(2 pi)) exp(-R_j^2 (y_j - x_ij)^2 / 2),
 * R_j = 1 / h_j) has its transform integrated by the trapezoid rule,
 * truncated where its tail is below the target. The plan may keep F(w) at the nodes of a design span (the
 * data box widened by a margin), computed by the first evaluation that
 * needs it (under a lock); queries inside the span reuse F, queries outside
 * get a wider rule and their own F in call-local memory, so evaluation on a
 * const bl_sum is thread-safe. */
#ifndef GFI_BANDLIMITED_H
#define GFI_BANDLIMITED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include "gfi/fast.h"
#include "gfi/opts.h"
#include "gfi/kernel.h"

/* Tensor Gauss-Legendre rule in frequency for a span S per axis. */
typedef struct bl_rule {
  int D, l;
  size_t n[3];    /* nodes per axis */
  double *w[3];   /* node frequencies (axis 0 on the half axis w >= 0) */
  double *wk[3];  /* GL weight * kappa_l(w / R) / (2 pi), axis 0 doubled */
  double lo[3], hi[3]; /* smallest and largest node per axis */
  size_t Q;       /* prod n[] */
  double span[3];
  double qerr;    /* quadrature bound relative to sum_i |c_i| * prod_j R_j / A_l */
} bl_rule;

typedef struct bl_sum {
  int D, l;            /* l: kernel_band (the highest sinc power; 0 for the Gaussian) */
  gfi_kernel kern;     /* the kernel: its family's operations (kernel_internal.h) */
  size_t N, ncol;
  double R[3], A, K0;  /* K0 = prod_j R_j / A_l, the kernel's peak */
  double ctr[3];       /* data centre (subtracted from data and queries) */
  double dlo[3], dhi[3]; /* centred data box */
  const double *x;     /* N x D data as given (the centred x - ctr is formed where used, the same bits):
                          x_own, or the caller's array (BL_BORROW_X) */
  const double *c;     /* ncol x N real coefficients; NULL: every one is cval (ncol 1):
                          c_own, or the caller's (BL_BORROW_C) */
  double *x_own, *c_own; /* what bl_sum_free frees */
  size_t x_cap, c_cap;   /* their sizes when copies from gfi_big_take (lib/alloc.h), else 0 */
  double cval;
  double *c1;          /* ncol: sum_i |c_col,i| */
  double tol;          /* requested accuracy, relative to the largest |value| */
  double eps;          /* internal target: quadrature, relative to c1 * K0 */
  double ntol;         /* tolerance handed to each NUFFT */
  double rho;          /* estimated largest |value| / (c1 K0) (value_scale) */
  int nthreads;
  gfi_method method;
  int have0;           /* F at the design span, computed on first use (F0) */
  int reason0;         /* why it was (not) precomputed: GFI_ROUTE_* */
  bl_rule r0;
  double *F0;          /* ncol x Q complex, once f0_done */
  size_t gf0[3];
  /* F0 is the plan's cache: the first evaluation that uses it computes it,
   * under f0_lock (evaluations on one bl_sum may run in several threads) */
  pthread_mutex_t f0_lock;
  int f0_lock_ok;
  atomic_int f0_done;
} bl_sum;

/* The binned route of a tensor grid (binned.c): linear binning on a lattice
 * that holds the grid, then one FFT convolution per axis. */
typedef struct bl_binned {
  int on;
  int order;         /* points per axis a coefficient is spread to: 4 (cubic) or 6 (quintic) */
  double beps;       /* the binning term's target, relative to c1 K0 */
  size_t s[3];       /* lattice cells per grid step */
  double h[3];       /* lattice spacing */
  long long kmin[3]; /* the lattice's first cell, in steps h from the grid's first point */
  size_t G[3];       /* lattice cells per axis */
  size_t L[3];       /* FFT length per axis */
  size_t sub;        /* points per sub-chunk summed apart before they join the lattice (0: none) */
  double cost;       /* in the cost model's units */
} bl_binned;

/* What one evaluation will do. */
typedef struct bl_choice {
  gfi_method route;
  int reason;          /* GFI_ROUTE_* */
  int reuse;           /* the bl_sum's rule r0 serves these queries */
  int useF0;           /* ... and its F0 (not after bl_tighten) */
  double ntol;         /* NUFFT tolerance of this evaluation */
  int grid;            /* for a tensor grid (separable step, no second NUFFT) */
  bl_rule rule;        /* built here when the route is fast and !reuse */
  double cost_direct, cost_fast;
  size_t gf[3], gb[3];
  bl_binned bin;       /* bin.on: the grid is binned (no rule, no NUFFT) */
} bl_choice;

/* Largest D with a fast route (the NUFFTs are D <= 3). */
#define BL_MAX_DIM 3

/* Accuracy from opts: GFI_EINVAL unless 0 <= tol < 1 (0: default) and the
 * method is one of GFI_METHOD_*. */
int bl_check_opts(const gfi_opts *opts, double *tol, gfi_method *method);

/* Build the data side. k: the kernel (a band-limited family or
 * kernel_gauss; GFI_EINVAL for NULL or any other). c: ncol x N real
 * coefficients (column-major by column: c[col N + i]). R: D radii. Under GFI_METHOD_FAST the rule of the
 * design span is built here (GFI_ERANGE when its node count or NUFFT
 * grid explodes), under AUTO when the cost model says a fast evaluation of
 * about N queries would pay. direct_pair: the direct route's cost per
 * (query, data point) pair in the cost model's units. */
int bl_sum_make(bl_sum **out, int D, const gfi_kernel *k, size_t N, const double *x, size_t ncol,
                const double *c, const double *R, const gfi_opts *opts, double direct_pair);
/* The same with one column whose every coefficient is cval (an unweighted
 * density): the coefficients are not stored. */
int bl_sum_make_uniform(bl_sum **out, int D, const gfi_kernel *k, size_t N, const double *x, double cval,
                        const double *R, const gfi_opts *opts, double direct_pair);
/* What the caller's own pass over the data found (engine_check_data): the
 * data box lo[j] <= x_ij <= hi[j], exactly the smallest and largest value
 * per axis. */
typedef struct {
  double lo[BL_MAX_DIM], hi[BL_MAX_DIM];
} bl_box;
/* How bl_sum_make_box holds the caller's arrays (the same plan, bit for bit,
 * in every case). BL_BORROW_X: x itself, not a copy (alive and unchanged
 * until bl_sum_free). BL_BORROW_C: c itself, likewise. BL_ADOPT_C: c was
 * allocated with malloc and is the sum's from now on, freed by bl_sum_free
 * (also when bl_sum_make_box fails). */
#define BL_BORROW_X 1u
#define BL_BORROW_C 2u
#define BL_ADOPT_C 4u
#define BL_ADOPT_X 8u /* x likewise */
/* bl_sum_make (c given) or bl_sum_make_uniform (c NULL, every coefficient
 * cval) with the data box given, so the data are read once less (box NULL:
 * found here), and `hold` (BL_BORROW_*, BL_ADOPT_*: 0 copies both): the same
 * plan, bit for bit. */
int bl_sum_make_box(bl_sum **out, int D, const gfi_kernel *k, size_t N, const double *x, size_t ncol,
                    const double *c, double cval, const double *R, const gfi_opts *opts,
                    double direct_pair, const bl_box *box, unsigned hold);
void bl_sum_free(bl_sum *s);
/* The sum's points (N x D, row-major, the values given to bl_sum_make: its
 * copy or the array it borrowed), alive until bl_sum_free: the direct
 * route's lazy tables read them instead of keeping a copy of their own. */
const double *bl_sum_points(const bl_sum *s);

/* Decide the route for M queries in the box [qlo, qhi] (uncentred) or, when
 * gn != NULL, for the tensor grid with gn[j] points per axis on that box.
 * GFI_ERANGE / GFI_ENOMEM under FAST when the rule cannot be built. */
int bl_choose(const bl_sum *s, size_t M, const double *qlo, const double *qhi, const size_t *gn,
              double direct_pair, bl_choice *ch);
void bl_choice_free(bl_choice *ch);

/* The fast route (ch->route must be FAST). out: M x ncol (row-major);
 * babs[ncol]: the absolute error bound of each column's values. */
int bl_points(const bl_sum *s, const bl_choice *ch, size_t M, const double *q, double *out,
              double *babs);
/* The same on the grid lo:hi:n (last axis fastest), out: prod n x ncol. */
int bl_grid(const bl_sum *s, const bl_choice *ch, const double *lo, const double *hi,
            const size_t *n, double *out, double *babs);
/* Redo with the NUFFTs at tolerance ntol (not below BL_NTOL_MIN): returns 1
 * when that is tighter than what ran, 0 when nothing can be gained. */
int bl_tighten(bl_choice *ch, double ntol);
#define BL_NTOL_MIN 1e-15
/* ---- the one route driver of every client ------------------------------- */

/* Where to evaluate: M scattered points q (M x D, uncentred) or, when gn is
 * set, the tensor grid glo:ghi:gn (last axis fastest, M = prod gn). */
typedef struct bl_target {
  size_t M;
  const double *q;
  const double *glo, *ghi;
  const size_t *gn;
} bl_target;

/* A client's acceptance test of a fast result (res: M x ncol, babs: the
 * columns' absolute bounds): the factor f in [0, 1) by which the bounds must
 * shrink for the result to keep the client's promise, or 1 when it keeps it
 * or a tighter NUFFT cannot help. */
typedef double (*bl_need_fn)(const void *ctx, size_t M, const double *res, const double *babs);

/* The tighten policy: one more pass at BL_TIGHTEN_MARGIN * f times the
 * NUFFT tolerance (the bounds are about linear in it; the margin covers the
 * quadrature's share, which does not shrink). */
#define BL_TIGHTEN_MARGIN 0.5

/* The route driver of density, Nadaraya-Watson and LOO-CV: the targets' box,
 * the route (bl_choose), on the fast route the evaluation into *res (M x
 * ncol; allocated here when *res is NULL, only on the fast route, for the
 * caller to free) and babs (ncol), and at most one tighter pass when need
 * asks (need may be NULL: never). *route: the route taken; on GFI_METHOD_DIRECT nothing was
 * evaluated and the client runs its direct sum. info gets bl_info_fill's
 * fields and the NUFFT tolerance that ran; its bound fields are the client's. */
int bl_run(const bl_sum *s, const bl_target *t, double direct_pair, bl_need_fn need, const void *ctx,
           double **res, double *babs, gfi_fast_info *info, gfi_method *route);

/* The one rule from a requested accuracy to a NUFFT tolerance: tol relative
 * to a value scale that is rho times the bound's scale (sum |c| times the
 * kernel's peak), spent over ntrans transforms each within
 * BL_NUFFT_SAFETY * ntol of that scale, with a factor 2 to spare; clamped to
 * [BL_NTOL_MIN, BL_NTOL_MAX]. */
double bl_ntol(double tol, double rho, int ntrans);
/* The cost model's units (those of bl_nufft_cost) per unit of a client's
 * direct-sum estimate in nanoseconds per pair: the NUFFT model's units
 * are worth about 0.04-0.1 ns in 1-D, 0.3-0.45 ns in 2-D and 0.9 ns in
 * 3-D, the direct estimates 2.2-2.8 ns per unit (2 threads, N = 5e3 ..
 * 1e6). */
double bl_direct_units(int D);
#define BL_NTOL_MAX 1e-3
/* Each type-3 NUFFT output is within BL_NUFFT_SAFETY * ntol * sum |c| of the
 * exact sum (lib/nufft.h: 0.8 ntol the worst measured; its tests hold 10). */
#define BL_NUFFT_SAFETY 10.0
/* The NUFFT's spreading width at tolerance ntol, for cost models. */
int bl_nufft_width(double ntol);

/* info of the plan's own transform (the design span's rule and F0, when
 * made): the bound of column 0 before the transform to any query. */
void bl_plan_info(const bl_sum *s, size_t D, gfi_fast_info *info);
/* Fill the common fields of info from a choice (bound fields left to the caller). */
void bl_info_fill(const bl_sum *s, const bl_choice *ch, size_t D, gfi_fast_info *info);

/* Grid lo:hi:n checks (GFI_EINVAL for n[j] = 0 or NULL, GFI_ENONFINITE,
 * GFI_ERANGE when |R_j lo_j| or |R_j hi_j| > 2^52 (R may be NULL), GFI_EDIM
 * when the point count overflows); *total = prod n. */
int bl_grid_check(size_t D, const double *R, const double *lo, const double *hi, const size_t *n,
                  size_t *total);
/* The grid's G points (G x D, last axis fastest), or NULL (no memory). */
double *bl_grid_points(size_t D, const double *lo, const double *hi, const size_t *n, size_t G);

/* The n Gauss-Legendre nodes (increasing) and weights on [-1, 1], for other
 * integrals in frequency (the error bound and node count: freq_axis.h). */
void bl_gauss_legendre(size_t n, double *x, double *w);

/* Cost-model helpers shared with the ecf. */
double bl_nufft_cost(int D, size_t nsrc, size_t ntgt, const size_t *grid, double ntol);
/* The fast route's cost estimated before its rule is built (the auto
 * route's first test): ncol columns from N sources onto the nodes that
 * radii R over spans S need (the kernel family's kernel_nodes), then to
 * M targets (0: none). *explode when the node count would exceed the
 * rule's limits (the fast route cannot run). */
double bl_fast_estimate(int D, const gfi_kernel *k, const double *R, const double *S, size_t N, size_t M,
                        size_t ncol, double ntol, int *explode);

/* ---- the one route decision (route.c) ------------------------------------ */

/* What a client knows of its two routes before running either. */
typedef struct bl_cost {
  double direct, fast; /* time, in the cost model's units (bl_nufft_cost; a direct
                          estimate in ns per pair times bl_direct_units / 2.5) */
  double fast_bytes;   /* the fast route's working memory (0: negligible) */
  int direct_ok;       /* 0: the direct sum is refused (its work exceeds the client's cap) */
  int fast_why;        /* 0: the fast route can run; else why not: GFI_ROUTE_NODES
                          (nodes or NUFFT grid), GFI_ROUTE_DIM (D > 3), GFI_ROUTE_KERNEL */
} bl_cost;

/* Auto takes no fast route whose working memory exceeds this when the
 * direct sum can run (1 GiB). */
#define BL_AUTO_MEM_MAX 1073741824.0

/* The one route decision of every client: DIRECT and FAST as asked
 * (GFI_EUNSUPPORTED when the route asked is refused for D > 3 or for its
 * work, GFI_ERANGE when the fast route cannot run), AUTO the cheaper of
 * the routes that can run (the fast one within BL_AUTO_MEM_MAX). *reason:
 * GFI_ROUTE_* (may be NULL). */
int bl_decide(gfi_method asked, const bl_cost *c, gfi_method *route, int *reason);

/* After a fast pass whose bound missed tol: the accuracy e2 of the one
 * tighter pass (the tighten policy, BL_TIGHTEN_MARGIN tol / bound times the
 * accuracy e that ran, at least emin); 0 when no tighter pass is possible
 * (e already at emin) or none is needed (bound <= tol). */
double bl_tighter(double e, double bound, double tol, double emin);

/* Whether a client keeps a fast result whose bound is `bound`: always when
 * it asked for FAST or the bound is within tol; under AUTO a bound above tol
 * falls back to the direct route where that may run (direct_ok). */
int bl_keep_fast(gfi_method asked, double bound, double tol, int direct_ok);

/* The one rule for criteria built from the squared empirical cf (the
 * Gaussian selectors): the accuracy to ask of gfi_ecf (its opts.tol, a bound
 * on each |phi_N(w) - phi_N~(w)| relative to sum |w_i| = 1) so that every
 * |phi_N(w)|^2 is within tol: (2 |phi| + e) e <= (2 + e) e <= tol for
 * e = tol / 3. An integral int f(w) |phi_N(w)|^2 dw is then within tol times
 * its stated scale int |f(w)| dw (the criterion with |phi_N| = 1). */
double bl_cf2_tol(double tol);
#define BL_CF2_TOL_MIN 1e-14

/* ---- the binned route (binned.c) ------------------------------------------ */

/* The binning term's target for a bl_sum: a quarter of tol times the value
 * scale estimate rho. */
double bl_binned_beps(const bl_sum *s);
/* Plan the binned route for the grid lo:hi:n (uncentred; hi >= lo where
 * n > 1) with the binning term beps c1 K0: 1 and *b when it can run (a
 * band-limited kernel, lattice and FFTs within their limits), else 0.
 * order: 4 (cubic), 6 (quintic) or 0 (the cheaper by the cost model). */
int bl_binned_plan(const bl_sum *s, const double *lo, const double *hi, const size_t *n, double beps,
                   int order, bl_binned *b);
/* Run it: out (prod n x ncol, last axis fastest), babs[ncol] the absolute
 * bounds (binning, positions' rounding, the FFTs' rounding). */
int bl_binned_eval(const bl_sum *s, const bl_binned *b, const double *lo, const double *hi,
                   const size_t *n, double *out, double *babs);

#endif
