"""Radius and bandwidth selection (include/gfi/select.h): LSCV, leave-one-out
CV and plug-in, returning the chosen value and, on request, the criterion curve."""
import ctypes
from dataclasses import dataclass, field
from typing import Optional

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


def _select_opts(method, tol, threads, R_range, nscan, per_axis, denom_tol):
    so = SelectOpts()
    lib.gfi_select_default_opts(ref(so))
    make_opts(threads, method, tol, struct=so.base)
    if R_range is not None:
        # the library reads 0 as "the default end": a given end must be a
        # positive finite radius, never replaced silently
        try:
            lo, hi = (float(v) for v in R_range)
        except (TypeError, ValueError):
            raise errors.RadiusError(errors.GFI_ERADIUS, "R_range must be a pair (lo, hi) of radii, got %r"
                                     % (R_range,), "R_range") from None
        if not (0 < lo < hi < np.inf):
            raise errors.RadiusError(errors.GFI_ERADIUS, "R_range must satisfy 0 < lo < hi < inf, got (%r, %r)"
                                     % (lo, hi), "R_range")
        so.R_lo, so.R_hi = lo, hi
    if nscan is not None:
        so.nscan = int(nscan)
    so.per_axis = 1 if per_axis else 0
    if denom_tol is not None:
        so.denom_tol = float(denom_tol)
    return so


def _result(res, D, curve):
    R = np.array([res.R[j if D <= 3 else 0] for j in range(D)])
    return Selection(R=R, value=res.value, bound=res.bound, R_range=(res.R_lo, res.R_hi), nscan=int(res.nscan),
                     nlocal=int(res.nlocal), at_edge=bool(res.at_edge), evals=int(res.evals),
                     nflagged=int(res.nflagged), route=ROUTES.get(res.route, str(res.route)), curve=curve)


_SEL_PARAMS = {errors.GFI_EEMPTY: "data", errors.GFI_ERADIUS: "R_range", errors.GFI_EORDER: "phi",
               errors.GFI_EUNSUPPORTED: "phi", errors.GFI_EINVAL: "nscan", errors.GFI_EDIM: "data"}


def select_radius_lscv(data, phi=4, R_range=None, nscan=None, per_axis=False, return_curve=False,
                       method="auto", tol=0.0, threads=None):
    """The LSCV radius of the Fourier density estimator (gfi_select_lscv;
    the CLI's --R lscv with the default scan). Returns a Selection."""
    x = points(data, "data")
    N, D = x.shape
    k = make_kernel(phi)
    so = _select_opts(method, tol, threads, R_range, nscan, per_axis, None)
    res = SelectResult()
    curve = np.empty((so.nscan if so.nscan else 100, 2)) if return_curve else None
    st = lib.gfi_select_lscv(ref(k), N, D, addr(x), ref(so), ref(res), addr(curve))
    check(st, "LSCV radius selection", _SEL_PARAMS, {"data": x})
    return _result(res, D, curve)


def select_radius_loocv(x, y, phi=4, R_range=None, nscan=None, per_axis=False, return_curve=False,
                        denom_tol=None, method="auto", tol=0.0, threads=None):
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
    curve = np.empty((so.nscan if so.nscan else 100, 2)) if return_curve else None
    st = lib.gfi_select_loocv(ref(k), N, D, V, addr(X), addr(Y), ref(so), ref(res), addr(curve))
    check(st, "leave-one-out CV radius selection", {**_SEL_PARAMS, errors.GFI_EDENOM: "R_range"},
          {"x": X, "y": Y})
    return _result(res, D, curve)


def lscv(data, R, phi=4, method="auto", tol=0.0, threads=None):
    """LSCV criterion of the Fourier density estimator at radii R: (value, bound)."""
    x = points(data, "data")
    N, D = x.shape
    Rv = radii(R, D)
    k = make_kernel(phi)
    o = make_opts(threads, method, tol)
    v, b = ctypes.c_double(), ctypes.c_double()
    st = lib.gfi_lscv(ref(k), N, D, addr(x), addr(Rv), ref(o), ref(v), ref(b), None)
    check(st, "LSCV", {**_SEL_PARAMS, errors.GFI_ERADIUS: "R", errors.GFI_ERANGE: "R"}, {"data": x, "R": Rv})
    return v.value, b.value


def loocv(x, y, R, phi=4, denom_tol=0.0, method="auto", tol=0.0, threads=None):
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
    st = lib.gfi_loocv(ref(k), N, D, V, addr(X), addr(Y), addr(Rv), ref(o), float(denom_tol), ref(v), ref(nf),
                       ref(b), None)
    check(st, "leave-one-out CV", {**_SEL_PARAMS, errors.GFI_ERADIUS: "R", errors.GFI_EDENOM: "R", errors.GFI_ERANGE: "R"},
          {"x": X, "y": Y, "R": Rv})
    return v.value, int(nf.value), b.value


def gauss_lscv(data, H, threads=None):
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


def select_bandwidth(data, rule="lscv", method="auto", tol=0.0, threads=None):
    """The Gaussian KDE bandwidth matrix by a rule (see gfi.bandwidth_matrix)."""
    return bandwidth_matrix(data, rule, None, method, tol, threads)


def nw_bandwidth_loocv(x, y, threads=None):
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
