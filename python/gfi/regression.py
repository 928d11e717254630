"""Nadaraya-Watson regression (include/gfi/regression.h): the generalized
Fourier estimator and the Gaussian baseline, vector responses."""
import numpy as np

from . import errors
from ._lib import (lib, FastInfo, Fitted, Handle, addr, as_f64, check, fast_info_dict, make_opts, points, radii, ref,
                   out_array, grid_spec, grid_axes)
from .kernels import make_kernel
from .density import gaussian_H

FLAG_NAMES = {0: "ok", 1: "empty", 2: "negative", 3: "small"}


class _NW:
    def __init__(self, method="auto", tol=0.0, threads=None, denom_tol=None):
        self.method, self.tol, self.threads, self.denom_tol = method, tol, threads, denom_tol
        self._fitted = None
        self._info = None

    @property
    def route_(self):
        """What the last predict or predict_grid ran (as FourierKDE.route_);
        None before the first."""
        return None if self._info is None else fast_info_dict(self._info)

    def _state(self, what):
        """The fit every call works on, read once (Fitted)."""
        f = self._fitted
        if f is None:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "%s before fit: call fit(x, y) first" % what, "x")
        return f

    def _fit_xy(self, x, y):
        X = points(x, "x")
        N, D = X.shape
        Y = as_f64(y, "y", ndim=(1, 2))
        Y = Y.reshape(Y.shape[0], -1) if Y.ndim == 2 else Y.reshape(-1, 1)
        if Y.shape[0] != N:
            raise errors.DimensionError(errors.GFI_EDIM, "y has %d rows, x has %d" % (Y.shape[0], N), "y")
        return X, Y, N, D, Y.shape[1]

    def _after_plan(self, plan, X, Y, vector):
        if self.denom_tol is not None:
            check(lib.gfi_nw_set_denom_tol(plan.ptr, float(self.denom_tol)), "denom_tol",
                  {errors.GFI_EINVAL: "denom_tol"})
        f = Fitted(plan, X, Y.shape[1], vector)
        self.N_, self.D_ = f.N, f.D
        self.V_ = f.V
        self._lo, self._hi = f.lo, f.hi
        self._fitted = f

    def predict(self, x, return_flags=False, return_denominator=False):
        """The estimate at points x ((M,) for D = 1 or (M, D)): (M,) for a
        1-D y, (M, V) for y of shape (N, V). Rows whose denominator vanished
        (flags, regression.h) are NaN; return_flags=True also returns the
        boolean mask of those rows (and flags_ keeps the codes: 0 ok,
        1 empty, 2 negative, 3 small); return_denominator=True also returns
        S/A per row (how far the denominator is from cancelling)."""
        f = self._state("predict")
        q = points(x, "x", f.D)
        M = q.shape[0]
        out = np.empty((M, f.V))
        flags = np.empty(M, dtype=np.uint8)
        den = np.empty(M) if return_denominator else None
        nfl = np.zeros(1, dtype=np.uintp)
        info = FastInfo()
        st = lib.gfi_nw_eval_ex(f.handle.ptr, M, addr(q), addr(out), addr(nfl), addr(flags), addr(den),
                                ref(info))
        if st != errors.GFI_EDENOM:
            check(st, "Nadaraya-Watson evaluation", {errors.GFI_ERANGE: "x", errors.GFI_EDIM: "x"}, {"x": q})
        self._info = info
        self.flags_ = flags
        self.nflagged_ = int(nfl[0])
        res = out if f.vector else out.reshape(M)
        extra = []
        if return_flags:
            extra.append(flags != 0)
        if return_denominator:
            extra.append(den)
        return (res, *extra) if extra else res

    def predict_grid(self, n=256, lo=None, hi=None):
        """The estimate on the tensor grid lo[j] + k (hi[j] - lo[j]) / (n[j] - 1)
        (n, lo, hi: one value or one per axis; lo/hi default to the design's
        box widened by a tenth of its width per side). Returns (axes, values):
        axes a tuple of D 1-D arrays, values of shape n for a 1-D y and
        n + (V,) for y of shape (N, V), last grid axis fastest; flagged rows
        are NaN and counted in nflagged_ (predict gives their codes)."""
        f = self._state("predict_grid")
        nn, lo_, hi_, shape = grid_spec(n, lo, hi, f.lo, f.hi, f.D)
        M = int(np.prod(shape, dtype=np.float64))
        if M * f.V > np.iinfo(np.intp).max // 8:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "grid of %s points is too large" % (shape,), "n")
        out = np.empty((M, f.V))
        nfl = np.zeros(1, dtype=np.uintp)
        info = FastInfo()
        st = lib.gfi_nw_eval_grid(f.handle.ptr, addr(lo_), addr(hi_), addr(nn), addr(out), addr(nfl), ref(info))
        if st != errors.GFI_EDENOM:
            check(st, "Nadaraya-Watson on a grid", {errors.GFI_EINVAL: "n", errors.GFI_EDIM: "n",
                                                    errors.GFI_ERANGE: "hi"}, {"lo": lo_, "hi": hi_})
        self._info = info
        self.nflagged_ = int(nfl[0])
        self.flags_ = None
        return grid_axes(lo_, hi_, shape), out.reshape(shape + ((f.V,) if f.vector else ()))

    __call__ = predict


class FourierNW(_NW):
    """Generalized Fourier Nadaraya-Watson estimator (FourierFormer eq. 14):
    f(x) = sum_i y_i K_i(x) / sum_i K_i(x), K_i(x) = prod_j phi(sinc(R_j (x_j - x_ij))).

    R: one radius, one per axis, or "loocv" (the leave-one-out CV radius, as
    the CLI's --R loocv; .selection_ holds the result). phi as FourierKDE.
    denom_tol: threshold of the "small denominator" flag (default 1e-8)."""

    def __init__(self, R=1.0, phi=4, method="auto", tol=0.0, threads=None, denom_tol=None):
        super().__init__(method, tol, threads, denom_tol)
        self.R, self.phi = R, phi

    def fit(self, x, y):
        X, Y, N, D, V = self._fit_xy(x, y)
        k = make_kernel(self.phi)
        o = make_opts(self.threads, self.method, self.tol)
        self.selection_ = None
        if isinstance(self.R, str):
            if self.R != "loocv":
                raise errors.InvalidArgument(errors.GFI_EINVAL, "R: radii or 'loocv', got %r" % self.R, "R")
            from .selection import select_radius_loocv
            self.selection_ = select_radius_loocv(X, Y, phi=k, method=self.method, tol=self.tol,
                                                  threads=self.threads)
            R = np.ascontiguousarray(self.selection_.R)
        else:
            R = radii(self.R, D)
        plan = Handle(lib.gfi_nw_destroy)
        st = lib.gfi_nw_plan_fourier(ref(plan.ptr), ref(k), N, D, V, addr(X), addr(Y), addr(R), ref(o))
        check(st, "Fourier Nadaraya-Watson", {errors.GFI_ERADIUS: "R", errors.GFI_ERANGE: "R",
                                              errors.GFI_EEMPTY: "x", errors.GFI_EDIM: "x",
                                              errors.GFI_EUNSUPPORTED: "method", errors.GFI_EINVAL: "phi"},
              {"x": X, "y": Y, "R": R})
        self.R_, self.kernel_ = R, k
        self._after_plan(plan, X, Y, np.ndim(y) == 2)
        return self


class GaussianNW(_NW):
    """Gaussian Nadaraya-Watson with bandwidth h (H = h^2 I), per-axis h_j,
    a D x D matrix H, or a rule name as GaussianKDE ("scott", ...), or
    "loocv" (the leave-one-out CV isotropic bandwidth, gfi_bw_nw_loocv)."""

    def __init__(self, bandwidth="scott", method="auto", tol=0.0, threads=None, denom_tol=None):
        super().__init__(method, tol, threads, denom_tol)
        self.bandwidth = bandwidth

    def fit(self, x, y):
        X, Y, N, D, V = self._fit_xy(x, y)
        if isinstance(self.bandwidth, str) and self.bandwidth == "loocv":
            from .selection import nw_bandwidth_loocv
            h, _ = nw_bandwidth_loocv(X, Y, threads=self.threads)
            H = np.eye(D) * h * h
        else:
            H = gaussian_H(self.bandwidth, X, None, self.method, self.tol, self.threads)
        o = make_opts(self.threads, self.method, self.tol)
        plan = Handle(lib.gfi_nw_destroy)
        st = lib.gfi_nw_plan_gauss(ref(plan.ptr), N, D, V, addr(X), addr(Y), addr(H), ref(o))
        check(st, "Gaussian Nadaraya-Watson", {errors.GFI_EBANDWIDTH: "bandwidth", errors.GFI_EEMPTY: "x",
                                               errors.GFI_EDIM: "x", errors.GFI_EUNSUPPORTED: "method",
                                               errors.GFI_EINVAL: "tol"},
              {"x": X, "y": Y, "bandwidth": H})
        self.H_ = H
        self._after_plan(plan, X, Y, np.ndim(y) == 2)
        return self
