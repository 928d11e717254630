"""Density estimators: the generalized Fourier estimator and the Gaussian KDE
(include/gfi/density.h), in the fit/evaluate style of KDEpy and scikit-learn
(get_params/set_params, score_samples, score, sample, pickling)."""
from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np
try:
    from numpy.typing import ArrayLike
except ImportError:  # numpy < 1.20
    ArrayLike = Any

from . import errors
from ._base import EstimatorBase
from ._lib import (lib, FastInfo, Fitted, Handle, addr, as_f64, check, fast_info_dict,
                   make_opts, points, radii, ref, out_array, grid_spec, grid_axes)
from .kernels import make_kernel

Grid = Tuple[Tuple[np.ndarray, ...], np.ndarray]


def _weights_arg(sample_weight, weights):
    """sample_weight (scikit-learn's name) or weights (gfi's), not both."""
    if sample_weight is not None and weights is not None:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "give sample_weight or weights, not both", "sample_weight")
    return (weights, "weights") if sample_weight is None else (sample_weight, "sample_weight")


def _rng(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


class _KDE(EstimatorBase):
    """What the two density estimators share: evaluation at points and on
    grids, log densities, scores, sampling, parameters and pickling."""

    _estimator_type = "density_estimator"

    def __init__(self, method="auto", tol=0.0, threads=None, n_jobs=None, copy=True):
        self.method = method
        self.tol = tol
        self.threads = threads
        self.n_jobs = n_jobs
        self.copy = copy
        self._fitted = None
        self._info = None

    def _opts(self):
        return make_opts(self._threads(), self.method, self.tol, copy=self.copy)

    def _state(self, what="evaluate"):
        """The fit every call works on, read once (Fitted)."""
        f = self._fitted
        if f is None:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "%s before fit: call fit(data) first" % what, "data")
        return f

    def _fit_data(self, data, weights):
        weights, wname = weights
        x = points(data, "data")
        N, D = x.shape
        w = None
        if weights is not None:
            w = as_f64(weights, wname, ndim=(1,))
            if w.size != N:
                raise errors.DimensionError(errors.GFI_EDIM, "%s: %d values for %d data points"
                                            % (wname, w.size, N), wname)
        return x, w, N, D, wname

    def evaluate(self, x: Union[ArrayLike, int], out: Optional[np.ndarray] = None) -> Any:
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
        p, self._info = self._eval(f, q, out)
        return p

    @staticmethod
    def _eval(f, q, out):
        """The density at the points q (checked) on the fit f: (values, FastInfo)."""
        M = q.shape[0]
        p = np.empty(M) if out is None else out_array(out, (M,))
        info = FastInfo()
        st = lib.gfi_density_eval_info(f.handle.ptr, M, addr(q), addr(p), ref(info))
        if st:
            check(st, "density evaluation", None, {"x": q.reshape(M, f.D)})
        return p, info

    @property
    def route_(self) -> Optional[Dict[str, Any]]:
        """What the last evaluation ran: route ("direct"/"fast"), reason,
        nodes per axis, the error bound (bound_abs, density units; bound,
        relative to the largest value), tol, whether the plan's transform was
        reused. None before the first evaluation."""
        return None if self._info is None else fast_info_dict(self._info)

    __call__ = evaluate

    def evaluate_grid(self, n: Union[int, Sequence[int]] = 1024, lo: Optional[ArrayLike] = None,
                      hi: Optional[ArrayLike] = None, out: Optional[np.ndarray] = None) -> Grid:
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

    def score_samples(self, X: ArrayLike) -> np.ndarray:
        """Log density at the points X ((M,) or (M, D)): scikit-learn's
        KernelDensity.score_samples. Where the density is not positive
        (a Fourier kernel of odd power, or the fast route's error) the log is
        -inf. GaussianKDE computes it in log space where the density
        underflows, so far from the data it is the log of the Gaussian
        mixture, as scipy's logpdf, not -inf."""
        p = self.evaluate(X)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), -np.inf)

    def score(self, X: ArrayLike, y: Any = None, sample_weight: Optional[ArrayLike] = None) -> float:
        """Mean log-likelihood of the points X under the estimate (the
        criterion GridSearchCV maximises; y is ignored, as in scikit-learn);
        with sample_weight, the weighted mean."""
        ll = self.score_samples(X)
        if sample_weight is None:
            return float(np.mean(ll))
        w = as_f64(sample_weight, "sample_weight", ndim=(1,))
        if w.size != ll.size:
            raise errors.DimensionError(errors.GFI_EDIM, "sample_weight: %d values for %d points"
                                        % (w.size, ll.size), "sample_weight")
        return float(np.sum(w * ll) / np.sum(w))

    def _pick(self, f, n, rng):
        """n indices of data points drawn with the fit's weights."""
        if f.aux is None:
            return rng.integers(0, f.N, size=n)
        if np.any(f.aux < 0):
            raise errors.UnsupportedError(errors.GFI_EUNSUPPORTED, "sample: negative weights make no mixture to "
                                          "draw from", "sample_weight")
        w = f.aux / np.sum(f.aux)
        return rng.choice(f.N, size=n, p=w)

    def _sample_out(self, f, x):
        return x.reshape(-1) if f.D == 1 else x

    def _keep(self, plan, x, w, **fit):
        f = Fitted(plan, x, aux=w, box=lib.gfi_density_data_box, digest=lib.gfi_density_data_digest)
        f.fit = fit
        self._lo, self._hi = f.lo, f.hi
        self.N_, self.D_ = f.N, f.D
        self._fitted = f


class FourierKDE(_KDE):
    """Generalized Fourier density estimator (FourierFormer eq. 12, eq. 54):

        p(x) = sum_i w_i prod_j (R_j / A) phi(sinc(R_j (x_j - x_ij)))

    R: one radius, one per axis, or "lscv" (any case: the LSCV radius, as
    the CLI's --R lscv; .selection_ holds the result). phi: l (phi = z^l,
    default 4), "pow:L", "poly:a1,a2,.." or "flattop:c" (the flat-top kernel
    of Politis and Romano, 0 < c < 1: its estimate may be negative, so
    score_samples gives NaN there and sample() refuses it). method: "auto", "direct" or
    "fast"; tol: the fast route's accuracy (0: 1e-10). threads: 0/None = all
    cores; n_jobs: scikit-learn's name for it (-1 = all cores).
    copy: True (default): the plan copies the points; False: it reads the
    array given to fit in place (a faster fit, the same values), which must
    then stay unchanged while the estimator is fitted on it (gfi keeps a
    reference to it either way; writing into it changes the estimates).
    After evaluate, route_ reports what ran (route, nodes, error bound).

    A scikit-learn estimator: get_params/set_params (clone works),
    score_samples (log density), score (mean log-likelihood), so
    GridSearchCV can tune R; sample() draws from the estimate when the
    kernel is a density (phi with even powers of sinc only). Pickle and
    deepcopy keep the parameters and the data and rebuild the plan."""

    def __init__(self, R: Union[float, Sequence[float], str] = 1.0, phi: Any = 4, method: str = "auto",
                 tol: float = 0.0, threads: Optional[int] = None, n_jobs: Optional[int] = None, copy: bool = True):
        super().__init__(method, tol, threads, n_jobs, copy)
        self.R = R
        self.phi = phi

    def fit(self, data: ArrayLike, y: Any = None, sample_weight: Optional[ArrayLike] = None, *,
            weights: Optional[ArrayLike] = None) -> "FourierKDE":
        """Build the estimator on data ((N,) or (N, D)). sample_weight (or
        weights, its older name): N weights, normalised to sum 1. y is
        ignored (scikit-learn's signature). Returns self."""
        x, w, N, D, wname = self._fit_data(data, _weights_arg(sample_weight, weights))
        k = make_kernel(self.phi)
        selection = None
        if isinstance(self.R, str):
            if self.R.strip().lower() != "lscv":
                raise errors.InvalidArgument(errors.GFI_EINVAL, "R: a radius, one per axis or 'lscv', got %r"
                                             % self.R, "R")
            if w is not None:
                raise errors.InvalidArgument(errors.GFI_EINVAL, "R='lscv' weighs points equally; not with "
                                             "sample_weight", wname)
            from .selection import select_radius_lscv
            selection = select_radius_lscv(x, phi=k, method=self.method, tol=self.tol, threads=self._threads())
            R = np.ascontiguousarray(selection.R)
        else:
            R = radii(self.R, D)
        self._plan(x, w, k, R, selection, wname)
        return self

    def _plan(self, x, w, k, R, selection, wname="sample_weight"):
        N, D = x.shape
        o = self._opts()
        plan = Handle(lib.gfi_density_destroy)
        st = lib.gfi_density_plan_fourier(ref(plan.ptr), ref(k), N, D, addr(x), addr(w), addr(R), ref(o))
        check(st, "Fourier density estimator", None, {"data": x, wname: w, "R": R}, {"weights": wname})
        info = FastInfo()
        check(lib.gfi_density_fast_info(plan.ptr, ref(info)), "route report")
        self.selection_ = selection
        self.R_, self.kernel_ = R, k
        self.A_ = float(k.A)
        self.plan_route_ = fast_info_dict(info)
        self._keep(plan, x, w, R=R, kernel=k, selection=selection)

    def _fit_state(self, f):
        return {"data": f.data, "weights": f.aux, "R": f.fit["R"], "selection": f.fit["selection"]}

    def _refit(self, fit):
        self._plan(fit["data"], fit["weights"], make_kernel(self.phi), fit["R"], fit["selection"])

    def _fitted_summary(self, f):
        return "fitted: N=%d, D=%d, R_=%s" % (f.N, f.D, np.array2string(f.fit["R"], precision=6))

    def sample(self, n_samples: int = 1, seed: Any = None) -> np.ndarray:
        """n_samples points drawn from the estimate: a data point (by its
        weight) plus a kernel draw, per axis u / R_j with u of density
        phi(sinc(u)) / A (rejection from min(1, |u|^-k) for each power
        sinc^k). Needs a kernel that is a density: phi with even powers of
        sinc only (phi = z^2, z^4, ...; UnsupportedError otherwise). seed: an
        int, None or a numpy Generator (numpy's PCG64 stream, not the CLI's).
        Returns (n,) for D = 1, else (n, D)."""
        f = self._state("sample")
        k = f.fit["kernel"]
        n = _count(n_samples)
        if k.kind not in (0, 1, 2):  # a family other than phi(sinc) (flat-top): takes negative values
            raise errors.UnsupportedError(errors.GFI_EUNSUPPORTED, "sample: the kernel phi = %r takes "
                                          "negative values, so it is not a density" % (self.phi,), "phi")
        coef = np.array([k.coef[j] for j in range(len(k.coef))])
        powers = np.nonzero(coef)[0]
        if powers.size == 0 or np.any(powers % 2 == 1):
            raise errors.UnsupportedError(errors.GFI_EUNSUPPORTED, "sample: the kernel phi = %r has odd powers of "
                                          "sinc, so it is not a density (even powers only)" % (self.phi,), "phi")
        A = np.array([lib.gfi_pow_A(int(j)) for j in powers])
        mix = coef[powers] * A
        mix /= mix.sum()
        rng = _rng(seed)
        idx = self._pick(f, n, rng)
        R = f.fit["R"]
        out = np.array(f.data[idx], dtype=np.float64)
        for j in range(f.D):
            ks = powers[rng.choice(powers.size, size=n, p=mix)] if powers.size > 1 else np.full(n, powers[0])
            out[:, j] += _sinc_power_draws(ks, rng) / R[j]
        return self._sample_out(f, out)


def _count(n):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "n_samples must be an integer >= 0, got %r" % (n,),
                                     "n_samples")
    return int(n)


def _sinc_power_draws(ks, rng):
    """One draw of density sinc(u)^k / A_k for each even k of ks: rejection
    from the envelope min(1, |u|^-k) >= sinc(u)^k (mass 2 + 2/(k-1)), whose
    body is uniform on [-1, 1] and whose tail |u| = V^(-1/(k-1)) is Pareto;
    acceptance A_k / (2 + 2/(k-1)) >= 0.37 for k <= 8."""
    ks = np.asarray(ks)
    u = np.empty(ks.size)
    todo = np.arange(ks.size)
    while todo.size:
        k = ks[todo].astype(np.float64)
        body = rng.random(todo.size) < (k - 1) / k
        t = np.where(body, rng.uniform(-1.0, 1.0, todo.size),
                     rng.choice([-1.0, 1.0], todo.size) * rng.random(todo.size) ** (-1.0 / (k - 1)))
        env = np.where(np.abs(t) <= 1, 1.0, np.abs(t) ** -k)
        with np.errstate(invalid="ignore", divide="ignore"):
            sc = np.where(t == 0, 1.0, np.sin(t) / np.where(t == 0, 1.0, t))
        ok = rng.random(todo.size) * env <= sc ** k
        u[todo[ok]] = t[ok]
        todo = todo[~ok]
    return u


BANDWIDTH_RULES = ("scott", "silverman", "ns", "lscv", "pi", "pi-diag", "dpi")


def bandwidth_matrix(data: ArrayLike, rule: str = "scott", weights: Optional[ArrayLike] = None, method: str = "auto",
                     tol: float = 0.0, threads: Optional[int] = None) -> np.ndarray:
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
    "lscv", "pi", "pi-diag", "dpi"; any case). Default "scott", which
    matches scipy.stats.gaussian_kde. H_ holds the matrix used. method,
    tol, threads, n_jobs, copy as FourierKDE (the Gaussian plan keeps the
    points whitened by H, its own array, whatever copy says); the same
    scikit-learn protocol
    (score_samples in log space far from the data, like scipy's logpdf;
    sample draws a data point plus N(0, H))."""

    def __init__(self, bandwidth: Any = "scott", method: str = "auto", tol: float = 0.0,
                 threads: Optional[int] = None, n_jobs: Optional[int] = None, copy: bool = True):
        super().__init__(method, tol, threads, n_jobs, copy)
        self.bandwidth = bandwidth

    def fit(self, data: ArrayLike, y: Any = None, sample_weight: Optional[ArrayLike] = None, *,
            weights: Optional[ArrayLike] = None) -> "GaussianKDE":
        """Build the KDE on data ((N,) or (N, D)); sample_weight (or weights):
        N weights, normalised to sum 1; y ignored. Returns self."""
        x, w, N, D, wname = self._fit_data(data, _weights_arg(sample_weight, weights))
        H = gaussian_H(self.bandwidth, x, w, self.method, self.tol, self._threads())
        self._plan(x, w, H, wname)
        return self

    def _plan(self, x, w, H, wname="sample_weight"):
        N, D = x.shape
        o = self._opts()
        plan = Handle(lib.gfi_density_destroy)
        st = lib.gfi_density_plan_gauss(ref(plan.ptr), N, D, addr(x), addr(w), addr(H), ref(o))
        check(st, "Gaussian KDE", None, {"data": x, wname: w, "bandwidth": H}, {"weights": wname, "H": "bandwidth"})
        self.H_ = H
        self._keep(plan, x, w, H=H)

    def _fit_state(self, f):
        return {"data": f.data, "weights": f.aux, "H": f.fit["H"]}

    def _refit(self, fit):
        self._plan(fit["data"], fit["weights"], np.ascontiguousarray(fit["H"]))

    def _fitted_summary(self, f):
        return "fitted: N=%d, D=%d, H_=%s" % (f.N, f.D, np.array2string(f.fit["H"], precision=6).replace("\n", ""))

    def score_samples(self, X: ArrayLike) -> np.ndarray:
        """Log density at X. Where the density underflows (or lies below the
        fast route's error bound) it is computed in log space from the data
        (a log-sum-exp over the N points), so far from the data it is the
        log of the Gaussian mixture, as scipy.stats.gaussian_kde.logpdf."""
        f = self._state("score_samples")
        q = points(X, "X", f.D)
        p, info = self._eval(f, q, None)
        self._info = info
        floor = max(1e-290, float(info.bound_abs))
        with np.errstate(divide="ignore"):
            lp = np.log(np.where(p > floor, p, 1.0))
        low = np.nonzero(~(p > floor))[0]
        if low.size:
            lp[low] = _gauss_logpdf(f, f.fit["H"], q[low])
        return lp

    def sample(self, n_samples: int = 1, seed: Any = None) -> np.ndarray:
        """n_samples points from the KDE: a data point (by its weight) plus
        N(0, H). seed: an int, None or a numpy Generator. Returns (n,) for
        D = 1, else (n, D)."""
        f = self._state("sample")
        n = _count(n_samples)
        rng = _rng(seed)
        idx = self._pick(f, n, rng)
        L = np.linalg.cholesky(f.fit["H"])
        out = f.data[idx] + rng.standard_normal((n, f.D)) @ L.T
        return self._sample_out(f, out)


def _gauss_logpdf(f, H, q):
    """log sum_i w_i N(q - x_i; 0, H) by log-sum-exp over the data, in
    blocks of queries (numpy; used only where the density underflows)."""
    x, D = f.data, f.D
    L = np.linalg.cholesky(H)
    logdet = 2.0 * np.sum(np.log(np.diag(L)))
    if f.aux is None:
        logw = np.full(f.N, -np.log(f.N))
    else:
        with np.errstate(divide="ignore"):
            logw = np.log(f.aux) - np.log(np.sum(f.aux))
    const = -0.5 * (D * np.log(2 * np.pi) + logdet)
    out = np.empty(q.shape[0])
    block = max(1, (1 << 22) // max(1, f.N * D))
    Linv = np.linalg.inv(L)
    for s in range(0, q.shape[0], block):
        d = q[s:s + block, None, :] - x[None, :, :]          # (m, N, D)
        z = d @ Linv.T
        e = logw[None, :] - 0.5 * np.einsum("mnd,mnd->mn", z, z)
        m = np.max(e, axis=1)
        out[s:s + block] = m + np.log(np.sum(np.exp(e - m[:, None]), axis=1)) + const
    return out


def gaussian_H(bandwidth, x, w, method, tol, threads):
    """The bandwidth matrix H from GaussianKDE's bandwidth argument."""
    N, D = x.shape
    if isinstance(bandwidth, str):
        return bandwidth_matrix(x, bandwidth.strip().lower(), w, method, tol, threads)
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
