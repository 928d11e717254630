/* The band-limited ("fast") route of the sums over data, and what it reports.
 *
 * The kernel prod_j (R_j/A_l) sinc(R_j u_j)^l has the Fourier transform
 * kappa_R(w) = prod_j kappa_l(w_j / R_j): a B-spline supported on
 * |w_j| <= l R_j, a polynomial between knots at multiples of R_j. So
 *
 *   s(y) = sum_i c_i K_R(y - x_i) = (2 pi)^-D int kappa_R(w) F(w) e^{i w.y} dw,
 *   F(w) = sum_i c_i e^{-i w.x_i},
 *
 * and a Gauss-Legendre rule on every knot interval (exact for the polynomial,
 * spectrally accurate for e^{i w u} with |u| <= S, S the span of data and
 * queries on that axis) turns the sum into two type-3 NUFFTs: F at the tensor
 * nodes from the data, then the node sum at the queries. The node count per
 * axis grows like l R S: the route is cheap when the kernel is wide compared
 * with the span, and the direct sum is cheaper when it is not.
 *
 * gfi_opts.method chooses the route (GFI_METHOD_AUTO: by a cost model, with
 * the direct sum whenever the node count explodes), gfi_opts.tol the accuracy
 * (0: 1e-10). phi = z^l kernels and the Gaussian KDE / Nadaraya-Watson
 * baselines have this route; custom phi always take the direct sum
 * (GFI_EUNSUPPORTED when FAST is forced).
 *
 * The Gaussian kernel N(u; 0, H) is not band-limited, but after whitening
 * (z = L^-1 x, H = L L^T) its transform exp(-|w|^2 / 2) has tails below any
 * target: per axis the part beyond |w| > W is erfc(W / sqrt 2) of the
 * kernel's peak. The route integrates it by the trapezoid rule with step
 * 2 pi / (S + t), whose aliasing error is at most 2 e^{-t^2/2} / (1 - e^{-t^2})
 * of the peak (Poisson summation), truncated at W; both are chosen for the
 * target and counted in the reported bound. See docs/fast.md. */
#ifndef GFI_FAST_H
#define GFI_FAST_H
#include "export.h"

#include <stddef.h>
#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default accuracy of the fast route (gfi_opts.tol = 0). */
#define GFI_FAST_TOL_DEFAULT 1e-10

/* Why a route was taken (gfi_fast_info.reason). */
enum {
  GFI_ROUTE_REQUESTED = 0, /* gfi_opts.method asked for it */
  GFI_ROUTE_COST = 1,      /* auto: the cost model preferred it */
  GFI_ROUTE_NODES = 2,     /* auto: too many frequency nodes or too large a NUFFT grid */
  GFI_ROUTE_KERNEL = 3,    /* the kernel is not band-limited (custom phi, Gaussian) */
  GFI_ROUTE_DIM = 4,       /* D > 3: the fast route exists for D = 1, 2, 3 */
  GFI_ROUTE_BOUND = 5      /* auto: the fast route's error bound (with the rounding of
                              far points' phases) missed tol, so the direct sum ran */
};

/* What an evaluation ran and the accuracy it was built for. */
/* gfi_fast_info has the bins and bin_order fields (the binned route of
 * grids); 2: with bin_order. */
#define GFI_FAST_INFO_BINS 2

typedef struct gfi_fast_info {
  gfi_method route;       /* GFI_METHOD_DIRECT or GFI_METHOD_FAST */
  int reason;             /* GFI_ROUTE_* */
  size_t dim;             /* D */
  size_t nodes[3];        /* frequency nodes per axis (axis 0: half axis w_0 >= 0) */
  size_t nodes_total;     /* product of nodes[] (0 on the direct route) */
  size_t grid_fwd[3];     /* NUFFT fine grid per axis, data -> nodes (0: not run here) */
  size_t grid_bwd[3];     /* NUFFT fine grid per axis, nodes -> queries (0: not run or grid route) */
  double span[3];         /* S_j the nodes were built for */
  double tol;             /* the accuracy asked for (default resolved) */
  double nufft_tol;       /* the tolerance the NUFFTs ran at */
  double bound_abs;       /* bound on |fast - exact| of every value (density units;
                             NW: of the sums before the ratio); 0 on the direct route */
  double bound;           /* density, ecf: bound_abs / largest |value| of this call;
                             NW: largest per-row bound on the ratio's error relative
                             to max |y| over the rows accepted from the fast route */
  double cost_direct;     /* the cost model's estimates (nanoseconds, roughly) */
  double cost_fast;
  size_t rows_direct;     /* NW: rows re-evaluated by the direct sum (flags, conditioning) */
  int reused;             /* 1 when the plan's precomputed F(w) served this call */
  double scale;           /* what `bound` is relative to: density and ecf, the largest
                             |value| of the call; NW, max |y| (0 on the direct route) */
  size_t bins[3];         /* the binned route of a grid (a loose tol): lattice cells per
                             axis; 0 when not binned (nodes and NUFFT fields are then 0) */
  int bin_order;          /* binned: points per axis each coefficient is spread to, 4
                             (cubic Lagrange) or 6 (quintic); 0 when not binned */
} gfi_fast_info;

#ifdef __cplusplus
}
#endif
#endif
