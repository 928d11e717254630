"""Nadaraya-Watson regression (include/gfi/regression.h): the generalized
Fourier estimator and the Gaussian baseline, vector responses, in the style
of scikit-learn's regressors (get_params/set_params, score = R^2, pickling)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
try:
    from numpy.typing import ArrayLike
except ImportError:  # numpy < 1.20
    ArrayLike = Any

from . import errors
from ._base import EstimatorBase
from ._lib import (lib, FastInfo, Fitted, Handle, addr, as_f64, check, fast_info_dict, make_opts, points, radii, ref,
                   out_array, grid_spec, grid_axes)
from .kernels import make_kernel
from .density import gaussian_H

FLAG_NAMES = {0: "ok", 1: "empty", 2: "negative", 3: "small"}


def _uniform_weights(sample_weight, N):
    """Nadaraya-Watson in libgfi weighs the points equally: sample_weight is
    accepted (scikit-learn's signature) when it is None or constant."""
    if sample_weight is None:
        return
    w = as_f64(sample_weight, "sample_weight", ndim=(1,))
    if w.size != N:
        raise errors.DimensionError(errors.GFI_EDIM, "sample_weight: %d values for %d points" % (w.size, N),
                                    "sample_weight")
    if not (np.all(np.isfinite(w)) and w.size and w[0] > 0 and np.all(w == w[0])):
        raise errors.UnsupportedError(errors.GFI_EUNSUPPORTED, "sample_weight: Nadaraya-Watson weighs the points "
                                      "equally (only a constant positive weight is accepted)", "sample_weight")


class _NW(EstimatorBase):
    """What the two Nadaraya-Watson estimators share: predict at points and
    on grids, R^2 score, parameters and pickling."""

    _estimator_type = "regressor"

    def __init__(self, method="auto", tol=0.0, threads=None, denom_tol=None, n_jobs=None, copy=True):
        self.method, self.tol, self.threads, self.denom_tol = method, tol, threads, denom_tol
        self.n_jobs = n_jobs
        self.copy = copy
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

    def _fit_xy(self, x, y, sample_weight=None):
        X = points(x, "x")
        N, D = X.shape
        Y = as_f64(y, "y", ndim=(1, 2))
        Y = Y.reshape(Y.shape[0], -1) if Y.ndim == 2 else Y.reshape(-1, 1)
        if Y.shape[0] != N:
            raise errors.DimensionError(errors.GFI_EDIM, "y has %d rows, x has %d" % (Y.shape[0], N), "y")
        _uniform_weights(sample_weight, N)
        return X, Y, N, D, Y.shape[1]

    @staticmethod
    def _scaled(Y):
        """The responses for the plan: beyond 2^500 divided by a power of 2
        (exactly, as the CLI does) so that the weighted sums cannot
        overflow; the estimate is linear in y, so predict multiplies back.
        Returns (Y or a scaled copy, the scale, max |y|)."""
        ymax = max(float(np.max(Y)), -float(np.min(Y))) if Y.size else 0.0  # no |Y| temporary
        if not (ymax > 2.0 ** 500):  # also NaN: the plan refuses it by name
            return Y, 1.0, ymax
        ys = float(np.ldexp(1.0, int(np.frexp(ymax)[1]) - 1))
        return Y / ys, ys, ymax

    def _finish(self, f, out, flags, what):
        """Multiply back the responses' scale, and raise (as the CLI) where an
        unflagged row is not finite: the sums overflowed a double."""
        if f.scale != 1.0:
            with np.errstate(over="ignore"):
                out *= f.scale
        bad = ~np.isfinite(out)
        if bad.any():
            rows = np.nonzero(bad.any(axis=1) & (flags == 0))[0] if flags is not None else \
                np.nonzero(bad.any(axis=1) & ~np.isnan(out).all(axis=1))[0]
            if rows.size:
                raise errors.RangeError(errors.GFI_ERANGE, "%s: the estimate at row %d overflows a double "
                                        "(responses up to %g): rescale y" % (what, int(rows[0]), f.amax), "y")

    def _after_plan(self, plan, X, Y, vector, scale, amax, **fit):
        if self.denom_tol is not None:
            check(lib.gfi_nw_set_denom_tol(plan.ptr, float(self.denom_tol)), "denom_tol",
                  {errors.GFI_EINVAL: "denom_tol"})
        f = Fitted(plan, X, Y.shape[1], vector, aux=Y, box=lib.gfi_nw_data_box, digest=lib.gfi_nw_data_digest)
        f.scale, f.amax = scale, amax
        f.fit = {"H": None, "R": None, "selection": None, **fit}
        self.N_, self.D_ = f.N, f.D
        self.V_ = f.V
        self._lo, self._hi = f.lo, f.hi
        self._fitted = f

    def predict(self, x: ArrayLike, return_flags: bool = False, return_denominator: bool = False) -> Any:
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
            check(st, "Nadaraya-Watson evaluation", None, {"x": q})
        self._info = info
        self.flags_ = flags
        self.nflagged_ = int(nfl[0])
        self._finish(f, out, flags, "Nadaraya-Watson evaluation")
        res = out if f.vector else out.reshape(M)
        extra = []
        if return_flags:
            extra.append(flags != 0)
        if return_denominator:
            extra.append(den)
        return (res, *extra) if extra else res

    def predict_grid(self, n: Union[int, Sequence[int]] = 256, lo: Optional[ArrayLike] = None,
                     hi: Optional[ArrayLike] = None) -> Any:
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
        flags = np.empty(M, dtype=np.uint8)
        info = FastInfo()
        st = lib.gfi_nw_eval_grid_ex(f.handle.ptr, addr(lo_), addr(hi_), addr(nn), addr(out), addr(nfl),
                                     addr(flags), ref(info))
        if st != errors.GFI_EDENOM:
            check(st, "Nadaraya-Watson on a grid", {errors.GFI_EINVAL: "n", errors.GFI_EDIM: "n",
                                                    errors.GFI_ERANGE: "hi"}, {"lo": lo_, "hi": hi_})
        self._info = info
        self.nflagged_ = int(nfl[0])
        self.flags_ = flags
        self._finish(f, out, flags, "Nadaraya-Watson on a grid")
        return grid_axes(lo_, hi_, shape), out.reshape(shape + ((f.V,) if f.vector else ()))

    __call__ = predict

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> float:
        """R^2 of the prediction at X against y (scikit-learn's regressor
        score; for y of shape (M, V) the mean of the V columns' R^2, as
        r2_score's 'uniform_average'). Flagged rows are NaN, so the score is
        NaN when any row of X is flagged."""
        f = self._state("score")
        pred = np.asarray(self.predict(X)).reshape(-1, f.V)
        Y = as_f64(y, "y", ndim=(1, 2)).reshape(pred.shape[0], -1)
        if Y.shape != pred.shape:
            raise errors.DimensionError(errors.GFI_EDIM, "y: shape %s, the prediction has %s" % (Y.shape, pred.shape),
                                        "y")
        w = np.ones(Y.shape[0]) if sample_weight is None else as_f64(sample_weight, "sample_weight", ndim=(1,))
        if w.size != Y.shape[0]:
            raise errors.DimensionError(errors.GFI_EDIM, "sample_weight: %d values for %d points"
                                        % (w.size, Y.shape[0]), "sample_weight")
        mean = (w @ Y) / np.sum(w)
        ss_res = w @ (Y - pred) ** 2
        ss_tot = w @ (Y - mean) ** 2
        r2 = np.where(ss_tot > 0, 1.0 - ss_res / np.where(ss_tot > 0, ss_tot, 1.0),
                      np.where(ss_res == 0, 1.0, 0.0))
        return float(np.mean(r2))

    def _fit_state(self, f):
        Y = f.aux if f.vector else f.aux.reshape(-1)
        return {"x": f.data, "y": Y, **f.fit}


class FourierNW(_NW):
    """Generalized Fourier Nadaraya-Watson estimator (FourierFormer eq. 14):
    f(x) = sum_i y_i K_i(x) / sum_i K_i(x), K_i(x) = prod_j phi(sinc(R_j (x_j - x_ij))).

    R: one radius, one per axis, or "loocv" (any case: the leave-one-out CV
    radius, as the CLI's --R loocv; .selection_ holds the result). phi as
    FourierKDE. denom_tol: threshold of the "small denominator" flag
    (default 1e-8). threads / n_jobs, method, tol as FourierKDE; copy as
    FourierKDE's, for the design x (copy=False: the plan reads x in place). A
    scikit-learn regressor: get_params/set_params, score (R^2), pickling."""

    def __init__(self, R: Union[float, Sequence[float], str] = 1.0, phi: Any = 4, method: str = "auto",
                 tol: float = 0.0, threads: Optional[int] = None, denom_tol: Optional[float] = None,
                 n_jobs: Optional[int] = None, copy: bool = True):
        super().__init__(method, tol, threads, denom_tol, n_jobs, copy)
        self.R, self.phi = R, phi

    def fit(self, x: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> "FourierNW":
        """Build the estimator on the design x ((N,) or (N, D)) and the
        responses y ((N,) or (N, V)). sample_weight: None or constant (the
        estimator weighs points equally). Returns self."""
        X, Y, N, D, V = self._fit_xy(x, y, sample_weight)
        k = make_kernel(self.phi)
        selection = None
        if isinstance(self.R, str):
            if self.R.strip().lower() != "loocv":
                raise errors.InvalidArgument(errors.GFI_EINVAL, "R: radii or 'loocv', got %r" % self.R, "R")
            from .selection import select_radius_loocv
            selection = select_radius_loocv(X, self._scaled(Y)[0], phi=k, method=self.method, tol=self.tol,
                                            threads=self._threads())
            R = np.ascontiguousarray(selection.R)
        else:
            R = radii(self.R, D)
        self._plan(X, Y, k, R, selection, np.ndim(y) == 2)
        return self

    def _refit(self, fit):
        X, Y, N, D, V = self._fit_xy(fit["x"], fit["y"])
        self._plan(X, Y, make_kernel(self.phi), fit["R"], fit["selection"], np.ndim(fit["y"]) == 2)

    def _fitted_summary(self, f):
        return "fitted: N=%d, D=%d, V=%d, R_=%s" % (f.N, f.D, f.V, np.array2string(f.fit["R"], precision=6))

    def _plan(self, X, Y, k, R, selection, vector):
        N, D = X.shape
        V = Y.shape[1]
        Ys, scale, amax = self._scaled(Y)
        o = make_opts(self._threads(), self.method, self.tol, copy=self.copy)
        plan = Handle(lib.gfi_nw_destroy)
        st = lib.gfi_nw_plan_fourier(ref(plan.ptr), ref(k), N, D, V, addr(X), addr(Ys), addr(R), ref(o))
        check(st, "Fourier Nadaraya-Watson", None, {"x": X, "y": Y, "R": R})
        self.R_, self.kernel_, self.selection_ = R, k, selection
        self._after_plan(plan, X, Y, vector, scale, amax, R=R, selection=selection)


class GaussianNW(_NW):
    """Gaussian Nadaraya-Watson with bandwidth h (H = h^2 I), per-axis h_j,
    a D x D matrix H, or a rule name as GaussianKDE ("scott", ...), or
    "loocv" (the leave-one-out CV isotropic bandwidth, gfi_bw_nw_loocv);
    rule names in any case. copy as GaussianKDE's (the plan keeps whitened
    points). The same scikit-learn protocol as FourierNW."""

    def __init__(self, bandwidth: Any = "scott", method: str = "auto", tol: float = 0.0,
                 threads: Optional[int] = None, denom_tol: Optional[float] = None, n_jobs: Optional[int] = None,
                 copy: bool = True):
        super().__init__(method, tol, threads, denom_tol, n_jobs, copy)
        self.bandwidth = bandwidth

    def fit(self, x: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike] = None) -> "GaussianNW":
        """Build the estimator on x ((N,) or (N, D)) and y ((N,) or (N, V));
        sample_weight: None or constant. Returns self."""
        X, Y, N, D, V = self._fit_xy(x, y, sample_weight)
        bw = self.bandwidth.strip().lower() if isinstance(self.bandwidth, str) else self.bandwidth
        if isinstance(bw, str) and bw == "loocv":
            from .selection import nw_bandwidth_loocv
            h, _ = nw_bandwidth_loocv(X, self._scaled(Y)[0], threads=self._threads())
            H = np.eye(D) * h * h
        else:
            H = gaussian_H(bw, X, None, self.method, self.tol, self._threads())
        self._plan(X, Y, H, np.ndim(y) == 2)
        return self

    def _refit(self, fit):
        X, Y, N, D, V = self._fit_xy(fit["x"], fit["y"])
        self._plan(X, Y, np.ascontiguousarray(fit["H"]), np.ndim(fit["y"]) == 2)

    def _fitted_summary(self, f):
        return "fitted: N=%d, D=%d, V=%d, H_=%s" % (f.N, f.D, f.V,
                                                    np.array2string(f.fit["H"], precision=6).replace("\n", ""))

    def _plan(self, X, Y, H, vector):
        N, D = X.shape
        V = Y.shape[1]
        Ys, scale, amax = self._scaled(Y)
        o = make_opts(self._threads(), self.method, self.tol, copy=self.copy)
        plan = Handle(lib.gfi_nw_destroy)
        st = lib.gfi_nw_plan_gauss(ref(plan.ptr), N, D, V, addr(X), addr(Ys), addr(H), ref(o))
        check(st, "Gaussian Nadaraya-Watson", None, {"x": X, "y": Y, "bandwidth": H}, {"H": "bandwidth"})
        self.H_ = H
        self._after_plan(plan, X, Y, vector, scale, amax, H=H)
