"""Radius and bandwidth selection (include/gfi/select.h): LSCV, leave-one-out
CV and plug-in, returning the chosen value and, on request, the criterion curve."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import errors
from ._lib import (lib, SelectOpts, SelectResult, addr, as_f64, check, make_opts, points, radii, ref,
                   ROUTES)
from .kernels import make_kernel
from .density import bandwidth_matrix


@dataclass
class Selection:
    """A chosen radius: R (one per axis), the criterion value there, its
    error bound (0 on the direct route), the scan range, the number of local
    minima on the scan, whether the minimum sits at the scan's edge, the
    criterion evaluations, NW rows left out, the route, and the curve
    (nscan x 2: R, criterion) when asked for."""
    R: np.ndarray
    value: float
    bound: float
    R_range: tuple
    nscan: int
    nlocal: int
    at_edge: bool
    evals: int
    nflagged: int
    route: str
    curve: Optional[np.ndarray] = field(default=None, repr=False)


NSCAN_MAX = 100000  # GFI_SELECT_NSCAN_MAX (include/gfi/select.h): sizes the curve's buffer only


def _nscan(nscan):
    """nscan as a size_t (None: 0, the library's 100). Only what a size_t
    cannot hold is refused here (a negative int would wrap to 2^64 - 1);
    the range 3..GFI_SELECT_NSCAN_MAX is the library's check."""
    if nscan is None:
        return 0
    if isinstance(nscan, bool) or not isinstance(nscan, (int, np.integer)) or not (0 <= nscan < 2 ** 64):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "nscan must be an integer in 3..%d (or 0/None: 100), got %r"
                                     % (NSCAN_MAX, nscan), "nscan")
    return int(nscan)


def _denom_tol(denom_tol, default_ok=True):
    """denom_tol as a double (None: the default); its range [0, 1) is the
    library's check."""
    if denom_tol is None and default_ok:
        return None
    try:
        return float(denom_tol)
    except (TypeError, ValueError):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "denom_tol must be a number in [0, 1) (0: the default "
                                     "1e-8), got %r" % (denom_tol,), "denom_tol")


def _curve(so, return_curve):
    """The scan's (nscan, 2) buffer; none for a count the library refuses
    (it writes nothing then)."""
    n = so.nscan if so.nscan else 100
    return np.empty((n, 2)) if return_curve and n <= NSCAN_MAX else None


def _R_range(R_range):
    try:
        lo, hi = (float(v) for v in R_range)
    except (TypeError, ValueError):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "R_range must be two radii (lo, hi), got %r" % (R_range,),
                                     "R_range")
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi):
        raise errors.RadiusError(errors.GFI_ERADIUS, "R_range must be finite with 0 < lo < hi, got %r"
                                 % (R_range,), "R_range")
    return lo, hi


def _select_opts(method, tol, threads, R_range, nscan, per_axis, denom_tol):
    nscan = _nscan(nscan)
    denom_tol = _denom_tol(denom_tol)
    if R_range is not None:
        R_range = _R_range(R_range)
    so = SelectOpts()
    lib.gfi_select_default_opts(ref(so))
    make_opts(threads, method, tol, struct=so.base)
    if R_range is not None:
        lo, hi = R_range
        so.R_lo, so.R_hi = float(lo), float(hi)
    if nscan:
        so.nscan = nscan
    so.per_axis = 1 if per_axis else 0
    if denom_tol is not None:
        so.denom_tol = float(denom_tol)
    return so


def _result(res, D, curve):
    R = np.array([res.R[j if D <= 3 else 0] for j in range(D)])
    return Selection(R=R, value=res.value, bound=res.bound, R_range=(res.R_lo, res.R_hi), nscan=int(res.nscan),
                     nlocal=int(res.nlocal), at_edge=bool(res.at_edge), evals=int(res.evals),
                     nflagged=int(res.nflagged), route=ROUTES.get(res.route, str(res.route)), curve=curve)


# the library names the data, kernel and radius checks; the scan's range
# may also fail as a whole
_SEL_PARAMS = {errors.GFI_ERADIUS: "R_range"}


def select_radius_lscv(data: Any, phi: Any = 4, R_range: Optional[Tuple[float, float]] = None,
                       nscan: Optional[int] = None, per_axis: bool = False, return_curve: bool = False,
                       method: str = "auto", tol: float = 0.0, threads: Optional[int] = None) -> Selection:
    """The LSCV radius of the Fourier density estimator (gfi_select_lscv;
    the CLI's --R lscv with the default scan). Returns a Selection."""
    x = points(data, "data")
    N, D = x.shape
    k = make_kernel(phi)
    so = _select_opts(method, tol, threads, R_range, nscan, per_axis, None)
    res = SelectResult()
    curve = _curve(so, return_curve)
    st = lib.gfi_select_lscv(ref(k), N, D, addr(x), ref(so), ref(res), addr(curve))
    check(st, "LSCV radius selection", _SEL_PARAMS, {"data": x})
    return _result(res, D, curve)


def select_radius_loocv(x: Any, y: Any, phi: Any = 4, R_range: Optional[Tuple[float, float]] = None,
                        nscan: Optional[int] = None, per_axis: bool = False, return_curve: bool = False,
                        denom_tol: Optional[float] = None, method: str = "auto", tol: float = 0.0,
                        threads: Optional[int] = None) -> Selection:
    """The leave-one-out CV radius of Fourier Nadaraya-Watson (gfi_select_loocv)."""
    X = points(x, "x")
    N, D = X.shape
    Y = as_f64(y, "y", ndim=(1, 2))
    if Y.shape[0] != N:
        raise errors.DimensionError(errors.GFI_EDIM, "y has %d rows, x has %d" % (Y.shape[0], N), "y")
    V = Y.shape[1] if Y.ndim == 2 else 1
    k = make_kernel(phi)
    so = _select_opts(method, tol, threads, R_range, nscan, per_axis, denom_tol)
    res = SelectResult()
    curve = _curve(so, return_curve)
    st = lib.gfi_select_loocv(ref(k), N, D, V, addr(X), addr(Y), ref(so), ref(res), addr(curve))
    check(st, "leave-one-out CV radius selection", {**_SEL_PARAMS, errors.GFI_EDENOM: "R_range"},
          {"x": X, "y": Y})
    return _result(res, D, curve)


def lscv(data: Any, R: Union[float, Sequence[float]], phi: Any = 4, method: str = "auto", tol: float = 0.0,
         threads: Optional[int] = None) -> Tuple[float, float]:
    """LSCV criterion of the Fourier density estimator at radii R: (value, bound)."""
    x = points(data, "data")
    N, D = x.shape
    Rv = radii(R, D)
    k = make_kernel(phi)
    o = make_opts(threads, method, tol)
    v, b = ctypes.c_double(), ctypes.c_double()
    st = lib.gfi_lscv(ref(k), N, D, addr(x), addr(Rv), ref(o), ref(v), ref(b), None)
    check(st, "LSCV", None, {"data": x, "R": Rv})
    return v.value, b.value


def loocv(x: Any, y: Any, R: Union[float, Sequence[float]], phi: Any = 4, denom_tol: float = 0.0,
          method: str = "auto", tol: float = 0.0, threads: Optional[int] = None) -> Tuple[float, int, float]:
    """Leave-one-out CV of Fourier NW at radii R: (value, rows left out, bound)."""
    X = points(x, "x")
    N, D = X.shape
    Y = as_f64(y, "y", ndim=(1, 2))
    if Y.shape[0] != N:
        raise errors.DimensionError(errors.GFI_EDIM, "y has %d rows, x has %d" % (Y.shape[0], N), "y")
    V = Y.shape[1] if Y.ndim == 2 else 1
    Rv = radii(R, D)
    k = make_kernel(phi)
    o = make_opts(threads, method, tol)
    v, b, nf = ctypes.c_double(), ctypes.c_double(), ctypes.c_size_t()
    st = lib.gfi_loocv(ref(k), N, D, V, addr(X), addr(Y), addr(Rv), ref(o), _denom_tol(denom_tol, False), ref(v),
                       ref(nf),
                       ref(b), None)
    check(st, "leave-one-out CV", {errors.GFI_EDENOM: "R"}, {"x": X, "y": Y, "R": Rv})
    return v.value, int(nf.value), b.value


def gauss_lscv(data: Any, H: Any, threads: Optional[int] = None) -> float:
    """LSCV criterion of the Gaussian KDE with bandwidth matrix H."""
    x = points(data, "data")
    N, D = x.shape
    Hm = as_f64(H, "H", ndim=(2,))
    if Hm.shape != (D, D):
        raise errors.DimensionError(errors.GFI_EDIM, "H: shape %s, expected (%d, %d)" % (Hm.shape, D, D), "H")
    o = make_opts(threads)
    v = ctypes.c_double()
    check(lib.gfi_gauss_lscv(N, D, addr(x), addr(Hm), ref(o), ref(v)), "Gaussian LSCV",
          {errors.GFI_EBANDWIDTH: "H", errors.GFI_EEMPTY: "data"}, {"data": x, "H": Hm})
    return v.value


def select_bandwidth(data: Any, rule: str = "lscv", method: str = "auto", tol: float = 0.0,
                     threads: Optional[int] = None) -> np.ndarray:
    """The Gaussian KDE bandwidth matrix by a rule (see gfi.bandwidth_matrix)."""
    return bandwidth_matrix(data, rule, None, method, tol, threads)


def nw_bandwidth_loocv(x: Any, y: Any, threads: Optional[int] = None) -> Tuple[float, float]:
    """The leave-one-out CV isotropic Gaussian NW bandwidth: (h, CV value)."""
    X = points(x, "x")
    N, D = X.shape
    Y = as_f64(y, "y", ndim=(1, 2))
    if Y.shape[0] != N:
        raise errors.DimensionError(errors.GFI_EDIM, "y has %d rows, x has %d" % (Y.shape[0], N), "y")
    V = Y.shape[1] if Y.ndim == 2 else 1
    o = make_opts(threads)
    h, v = ctypes.c_double(), ctypes.c_double()
    check(lib.gfi_bw_nw_loocv(N, D, V, addr(X), addr(Y), ref(o), ref(h), ref(v)), "Gaussian NW LOO-CV bandwidth",
          {errors.GFI_EEMPTY: "x", errors.GFI_EDENOM: "x"}, {"x": X, "y": Y})
    return h.value, v.value
