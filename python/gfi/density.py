"""Density estimators: the generalized Fourier estimator and the Gaussian KDE
(include/gfi/density.h), in the fit/evaluate style of KDEpy and scikit-learn."""
import ctypes

import numpy as np

from . import errors
from ._lib import (lib, FastInfo, Fitted, Handle, SelectOpts, SelectResult, addr, as_f64, check, fast_info_dict,
                   make_opts, points, radii, ref, out_array, threads_arg, METHODS, grid_spec, grid_axes)
from .kernels import make_kernel


class _KDE:
    """What the two estimators share: evaluation at points and on grids."""

    def __init__(self, method="auto", tol=0.0, threads=None):
        self.method = method
        self.tol = tol
        self.threads = threads
        self._fitted = None
        self._info = None

    def _opts(self):
        return make_opts(self.threads, self.method, self.tol)

    def _state(self, what="evaluate"):
        """The fit every call works on, read once (Fitted)."""
        f = self._fitted
        if f is None:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "%s before fit: call fit(data) first" % what, "data")
        return f

    def _fit_data(self, data, weights):
        x = points(data, "data")
        N, D = x.shape
        w = None
        if weights is not None:
            w = as_f64(weights, "weights", ndim=(1,))
            if w.size != N:
                raise errors.DimensionError(errors.GFI_EDIM, "weights: %d values for %d data points" % (w.size, N),
                                            "weights")
        return x, w, N, D

    def evaluate(self, x, out=None):
        """Density at points x, shape (M,) (D = 1) or (M, D); returns (M,).

        An int x is a grid of that many points per axis over the data's box
        widened by a tenth per side (as KDEpy): returns (axes, values), see
        evaluate_grid. out: a C-contiguous float64 array of M values to fill."""
        f = self._fitted
        if f is None:
            f = self._state()
        D = f.D
        if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous and \
                (x.ndim == 2 and x.shape[1] == D or x.ndim == 1 and D == 1):
            q = x  # the common case, checked in one line: no conversion
        elif isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return self._grid(f, int(x), None, None, None)
        else:
            q = points(x, "x", D)
        M = q.shape[0]
        p = np.empty(M) if out is None else out_array(out, (M,))
        info = FastInfo()
        st = lib.gfi_density_eval_info(f.handle.ptr, M, addr(q), addr(p), ref(info))
        if st:
            check(st, "density evaluation", {errors.GFI_ERANGE: "x", errors.GFI_EDIM: "x"},
                  {"x": q.reshape(M, D)})
        self._info = info
        return p

    @property
    def route_(self):
        """What the last evaluation ran: route ("direct"/"fast"), reason,
        nodes per axis, the error bound (bound_abs, density units; bound,
        relative to the largest value), tol, whether the plan's transform was
        reused. None before the first evaluation."""
        return None if self._info is None else fast_info_dict(self._info)

    __call__ = evaluate

    def evaluate_grid(self, n=1024, lo=None, hi=None, out=None):
        """Density on the tensor grid lo[j] + k (hi[j] - lo[j]) / (n[j] - 1).

        n, lo, hi: one value or one per axis (lo/hi default: the data's box
        widened by a tenth of its width per side). Returns (axes, values):
        axes a tuple of D 1-D arrays, values of shape n (last axis fastest)."""
        return self._grid(self._state("evaluate_grid"), n, lo, hi, out)

    def _grid(self, f, n, lo, hi, out):
        nn, lo_, hi_, shape = grid_spec(n, lo, hi, f.lo, f.hi, f.D)
        p = out_array(out, shape)
        info = FastInfo()
        st = lib.gfi_density_eval_grid(f.handle.ptr, addr(lo_), addr(hi_), addr(nn), addr(p), ref(info))
        check(st, "density on a grid", {errors.GFI_EINVAL: "n", errors.GFI_EDIM: "n", errors.GFI_ERANGE: "hi"},
              {"lo": lo_, "hi": hi_})
        self._info = info
        axes = grid_axes(lo_, hi_, shape)
        return axes, p.reshape(shape)

    def _keep(self, plan, x):
        f = Fitted(plan, x)
        self._lo, self._hi = f.lo, f.hi
        self.N_, self.D_ = f.N, f.D
        self._fitted = f


class FourierKDE(_KDE):
    """Generalized Fourier density estimator (FourierFormer eq. 12, eq. 54):

        p(x) = sum_i w_i prod_j (R_j / A) phi(sinc(R_j (x_j - x_ij)))

    R: one radius, one per axis, or "lscv" (the LSCV radius, as the CLI's
    --R lscv; .selection_ holds the result). phi: l (phi = z^l, default 4),
    "pow:L" or "poly:a1,a2,..". method: "auto", "direct" or "fast"; tol: the
    fast route's accuracy (0: 1e-10). threads: 0/None = all cores.
    After evaluate, route_ reports what ran (route, nodes, error bound)."""

    def __init__(self, R=1.0, phi=4, method="auto", tol=0.0, threads=None):
        super().__init__(method, tol, threads)
        self.R = R
        self.phi = phi

    def fit(self, data, weights=None):
        x, w, N, D = self._fit_data(data, weights)
        k = make_kernel(self.phi)
        o = self._opts()
        self.selection_ = None
        if isinstance(self.R, str):
            if self.R != "lscv":
                raise errors.InvalidArgument(errors.GFI_EINVAL, "R: a radius, one per axis or 'lscv', got %r"
                                             % self.R, "R")
            if w is not None:
                raise errors.InvalidArgument(errors.GFI_EINVAL, "R='lscv' weighs points equally; not with weights",
                                             "weights")
            from .selection import select_radius_lscv
            self.selection_ = select_radius_lscv(x, phi=k, method=self.method, tol=self.tol, threads=self.threads)
            R = np.ascontiguousarray(self.selection_.R)
        else:
            R = radii(self.R, D)
        plan = Handle(lib.gfi_density_destroy)
        st = lib.gfi_density_plan_fourier(ref(plan.ptr), ref(k), N, D, addr(x), addr(w), addr(R), ref(o))
        check(st, "Fourier density estimator", {errors.GFI_ERADIUS: "R", errors.GFI_ERANGE: "R",
                                                errors.GFI_EWEIGHT: "weights", errors.GFI_EEMPTY: "data",
                                                errors.GFI_EDIM: "data", errors.GFI_EINFINITE_A: "phi",
                                                errors.GFI_EUNSUPPORTED: "method", errors.GFI_EINVAL: "phi"},
              {"data": x, "weights": w, "R": R})
        self.R_, self.kernel_ = R, k
        self.A_ = float(k.A)
        self._keep(plan, x)
        info = FastInfo()
        check(lib.gfi_density_fast_info(plan.ptr, ref(info)), "route report")
        self.plan_route_ = fast_info_dict(info)
        return self


BANDWIDTH_RULES = ("scott", "silverman", "ns", "lscv", "pi", "pi-diag", "dpi")


def bandwidth_matrix(data, rule="scott", weights=None, method="auto", tol=0.0, threads=None):
    """The Gaussian KDE's bandwidth matrix H (D x D, the kernel covariance).

    rule: "scott" / "silverman" (scipy.stats.gaussian_kde's factors on the
    data covariance; weights allowed), "ns" (normal reference, ks::Hns),
    "lscv" (least-squares CV; D <= 2), "pi" (plug-in, ks::Hpi; D <= 2),
    "pi-diag" (ks::Hpi.diag), "dpi" (1-D direct plug-in, KernSmooth::dpik;
    returns h^2). The same calls as the CLI's --bandwidth."""
    x = points(data, "data")
    N, D = x.shape
    H = np.empty((D, D))
    w = None if weights is None else as_f64(weights, "weights", ndim=(1,))
    o = make_opts(threads, method, tol)
    what = "bandwidth rule %r" % (rule,)
    pmap = {errors.GFI_EINVAL: "rule", errors.GFI_EEMPTY: "data", errors.GFI_EUNSUPPORTED: "rule",
            errors.GFI_EWEIGHT: "weights", errors.GFI_ENOTPD: "data"}
    arrays = {"data": x, "weights": w}
    if rule in ("scott", "silverman"):
        if w is not None and w.size != N:
            raise errors.DimensionError(errors.GFI_EDIM, "weights: %d values for %d points" % (w.size, N), "weights")
        st = lib.gfi_bandwidth_rule(rule.encode(), N, D, addr(x), addr(w), addr(H))
    else:
        if w is not None:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "bandwidth %r weighs the points equally; not with "
                                         "weights" % rule, "weights")
        if rule == "ns":
            st = lib.gfi_bw_normal_ref(N, D, addr(x), addr(H))
        elif rule == "lscv":
            st = lib.gfi_bw_lscv(N, D, addr(x), ref(o), addr(H))
        elif rule in ("pi", "pi-diag"):
            f = lib.gfi_bw_hpi if rule == "pi" else lib.gfi_bw_hpi_diag
            st = f(N, D, addr(x), ref(o), addr(H), None)
        elif rule == "dpi":
            if D != 1:
                raise errors.UnsupportedError(errors.GFI_EUNSUPPORTED, "bandwidth 'dpi' is 1-D only", "rule")
            h = ctypes.c_double()
            st = lib.gfi_bw_dpi(N, addr(x), ref(o), ref(h))
            H[0, 0] = h.value * h.value
        else:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "bandwidth rule %r: expected one of %s" %
                                         (rule, ", ".join(BANDWIDTH_RULES)), "rule")
    check(st, what, pmap, arrays)
    return H


class GaussianKDE(_KDE):
    """Gaussian KDE p(x) = sum_i w_i N(x - x_i; 0, H) (FourierFormer eq. 5).

    bandwidth: a scalar h (H = h^2 I), D values (H = diag(h_j^2)), a D x D
    matrix H, or a rule name (bandwidth_matrix: "scott", "silverman", "ns",
    "lscv", "pi", "pi-diag", "dpi"). Default "scott", which matches
    scipy.stats.gaussian_kde. H_ holds the matrix used."""

    def __init__(self, bandwidth="scott", method="auto", tol=0.0, threads=None):
        super().__init__(method, tol, threads)
        self.bandwidth = bandwidth

    def fit(self, data, weights=None):
        x, w, N, D = self._fit_data(data, weights)
        H = gaussian_H(self.bandwidth, x, w, self.method, self.tol, self.threads)
        o = self._opts()
        plan = Handle(lib.gfi_density_destroy)
        st = lib.gfi_density_plan_gauss(ref(plan.ptr), N, D, addr(x), addr(w), addr(H), ref(o))
        check(st, "Gaussian KDE", {errors.GFI_EBANDWIDTH: "bandwidth", errors.GFI_EWEIGHT: "weights",
                                   errors.GFI_EEMPTY: "data", errors.GFI_EDIM: "data",
                                   errors.GFI_EUNSUPPORTED: "method", errors.GFI_EINVAL: "tol"},
              {"data": x, "weights": w, "bandwidth": H})
        self.H_ = H
        self._keep(plan, x)
        return self


def gaussian_H(bandwidth, x, w, method, tol, threads):
    N, D = x.shape
    if isinstance(bandwidth, str):
        return bandwidth_matrix(x, bandwidth, w, method, tol, threads)
    b = as_f64(bandwidth, "bandwidth", ndim=(0, 1, 2))
    if b.ndim == 2:
        if b.shape != (D, D):
            raise errors.DimensionError(errors.GFI_EDIM, "bandwidth matrix: shape %s, expected (%d, %d)"
                                        % (b.shape, D, D), "bandwidth")
        if not np.all(np.isfinite(b)) or np.any(np.abs(b - b.T) > 1e-12 * (np.abs(b) + np.abs(b.T))):
            raise errors.BandwidthError(errors.GFI_EBANDWIDTH, "bandwidth matrix must be finite and symmetric",
                                        "bandwidth")
        return np.ascontiguousarray(b)
    h = b.reshape(-1)
    if h.size == 1:
        h = np.full(D, h[0])
    if h.size != D:
        raise errors.DimensionError(errors.GFI_EDIM, "bandwidth: give 1, %d values or a %d x %d matrix, got %d"
                                    % (D, D, D, h.size), "bandwidth")
    if not np.all(h > 0) or not np.all(np.isfinite(h)):
        raise errors.BandwidthError(errors.GFI_EBANDWIDTH, "bandwidth must be > 0 and finite, got %r"
                                    % (h.tolist(),), "bandwidth")
    return np.diag(h * h)
