"""Exact and Monte-Carlo MISE, the MISE-optimal radius (include/gfi/mise.h)."""
from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import errors
from ._lib import (lib, MiseOpts, MiseResult, addr, as_f64, check, make_opts, points, radii,
                   ref, ROUTES)
from .kernels import make_kernel
from .models import as_model

ISE_METHODS = {"auto": 0, "plancherel": 1, "grid": 2}


def _kernel_arg(phi):
    """The kernel (kept alive by the caller) and its address."""
    k = make_kernel(phi)
    return k, ref(k)


def _opts(threads=None, seed=0, method="auto", tol=0.0, ise="auto", parts=True, resolution=None):
    o = MiseOpts()
    lib.gfi_mise_default_opts(ref(o))
    base = make_opts(threads, method, tol, seed)
    o.base.nthreads, o.base.seed, o.base.method, o.base.tol = base.nthreads, base.seed, base.method, base.tol
    if ise not in ISE_METHODS:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "ise must be one of %s, got %r" % (list(ISE_METHODS), ise),
                                     "ise")
    o.ise = ISE_METHODS[ise]
    o.parts = 1 if parts else 0
    if resolution is not None:  # finite and > 0: the library's check (mise_opts_check)
        try:
            o.resolution = float(resolution)
        except (TypeError, ValueError):
            raise errors.InvalidArgument(errors.GFI_EINVAL, "resolution must be a number, finite and > 0 (1: the "
                                         "default quadrature), got %r" % (resolution,), "resolution")
    return o


MC_MAX_POINTS = 1e11  # GFI_MISE_MC_MAX_POINTS (include/gfi/mise.h): the library's default budget of N x nreps


def _result(r):
    return {
        "mise": r.mise, "se": r.se, "lo95": r.lo95, "hi95": r.hi95, "bias2": r.bias2, "var": r.var,
        "nreps": int(r.nreps), "bias2_in": r.bias2_in, "bias2_out": r.bias2_out,
        "method": ROUTES.get(r.method, str(r.method)) if r.method else None,
        "nodes": tuple(int(v) for v in r.nodes), "ise_err_bound": r.ise_err_bound,
    }


_PARAMS = {errors.GFI_ERADIUS: "R", errors.GFI_EORDER: "phi", errors.GFI_EEMPTY: "N",
           errors.GFI_EUNSUPPORTED: "model", errors.GFI_ERANGE: "R", errors.GFI_EDIM: "R",
           errors.GFI_EINVAL: "R", errors.GFI_EQUAD: "model"}


def _exact_params(resolution):
    """The exact MISE's node budget (GFI_ERANGE / GFI_EDIM) is spent by R and
    the resolution together: a resolution above 1 takes the blame."""
    if resolution is not None and float(resolution) > 1:
        return {**_PARAMS, errors.GFI_ERANGE: "resolution", errors.GFI_EDIM: "resolution"}
    return _PARAMS


def _N(N, integer=False):
    if isinstance(N, bool) or not isinstance(N, (int, np.integer, float)) or not (N >= 1) or \
            (integer and int(N) != N):
        raise errors.EmptyError(errors.GFI_EEMPTY, "N must be %s >= 1, got %r" %
                                ("an integer" if integer else "a number", N), "N")
    return int(N) if integer else float(N)


def mise_exact(model: Any, R: Union[float, Sequence[float]], N: float, phi: Any = 4, dim: int = 1,
               resolution: Optional[float] = None, threads: Optional[int] = None) -> Dict[str, Any]:
    """Exact MISE of the Fourier estimator (Plancherel; docs/theory.md):
    model a gfi.Model or a spec string (with dim), R one radius or one per
    axis, N the sample size. Returns a dict (mise, bias2, var, bias2_in,
    bias2_out, ...) - the numbers of `gfi mise --exact`."""
    m = as_model(model, dim)
    Rv = radii(R, m.dim)
    k, karg = _kernel_arg(phi)
    o = _opts(threads, resolution=resolution)
    res = MiseResult()
    st = lib.gfi_mise_exact(m.ptr, karg, _N(N), addr(Rv), ref(o), ref(res))
    check(st, "exact MISE", _exact_params(resolution), {"R": Rv})
    return _result(res)


def mise_mc(model: Any, R: Union[float, Sequence[float]], N: int, nreps: int, seed: int = 0, phi: Any = 4,
            dim: int = 1, ise: str = "auto", parts: bool = True, method: str = "auto", tol: float = 0.0,
            threads: Optional[int] = None, return_ise: bool = False, max_points: float = MC_MAX_POINTS) -> Any:
    """Monte-Carlo MISE: replication k draws N points from RNG stream
    (seed, k) (as `gfi mise --reps`); the same bits for any thread count.
    Returns the result dict, and the nreps ISE values with return_ise.
    N x nreps above max_points (default 1e11, the CLI's bound: hours of
    computing) raises RangeError naming nreps before any work starts."""
    m = as_model(model, dim)
    Rv = radii(R, m.dim)
    k, karg = _kernel_arg(phi)
    o = _opts(threads, seed, method, tol, ise, parts)
    if isinstance(nreps, bool) or not isinstance(nreps, (int, np.integer)) or not (0 <= nreps < 2 ** 64):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "nreps must be an integer >= 2, got %r" % (nreps,), "nreps")
    Nn = _N(N, True)
    try:
        o.max_points = float(max_points)
    except (TypeError, ValueError):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "max_points must be a number, got %r" % (max_points,),
                                     "max_points")
    res = MiseResult()
    # The library refuses N x nreps above its budget (max_points; 0: the
    # default) before any work: no ISE buffer for a run it will refuse.
    budget = o.max_points if o.max_points > 0 else MC_MAX_POINTS
    ises = np.empty(int(nreps)) if return_ise and float(Nn) * float(nreps) <= budget else None
    st = lib.gfi_mise_mc(m.ptr, karg, Nn, addr(Rv), int(nreps), ref(o), ref(res), addr(ises))
    if st == errors.GFI_ERANGE:
        param = lib.gfi_error_param(st).decode()
        if param == "nreps":
            raise errors.RangeError(st, "Monte-Carlo MISE: %d replications of %d points = %.3g points to draw and "
                                    "sum, above max_points = %.3g (hours of computing at about 1e7 points per "
                                    "second per thread); lower nreps or N, or raise max_points"
                                    % (nreps, Nn, float(Nn) * nreps, budget), "nreps")
        check(st, "Monte-Carlo MISE", {**_PARAMS, st: param} if param else _PARAMS, {"R": Rv})
    check(st, "Monte-Carlo MISE", _PARAMS, {"R": Rv})
    return (_result(res), ises) if return_ise else _result(res)


def optimal_radius(model: Any, N: float, phi: Any = 4, dim: int = 1, direction: Optional[Sequence[float]] = None,
                   resolution: Optional[float] = None,
                   threads: Optional[int] = None) -> Tuple[float, Dict[str, Any]]:
    """The radius minimising the exact MISE along R = r * direction (default
    all ones), as `gfi ropt`: returns (r, result dict at r)."""
    m = as_model(model, dim)
    Rdir = None if direction is None else radii(direction, m.dim, "direction")
    k, karg = _kernel_arg(phi)
    o = _opts(threads, resolution=resolution)
    r = ctypes.c_double()
    res = MiseResult()
    st = lib.gfi_ropt(m.ptr, karg, _N(N), addr(Rdir), ref(o), ref(r), ref(res))
    check(st, "MISE-optimal radius", {**_exact_params(resolution), errors.GFI_ERADIUS: "direction"},
          {"direction": Rdir})
    return r.value, _result(res)


def ise_plancherel(model: Any, data: Any, R: Union[float, Sequence[float]], phi: Any = 4,
                   threads: Optional[int] = None) -> float:
    """Exact ISE of one estimate (uniform weights) through the empirical cf."""
    x = points(data, "data")
    N, D = x.shape
    m = as_model(model, D)
    Rv = radii(R, D)
    k, karg = _kernel_arg(phi)
    o = _opts(threads)
    v = ctypes.c_double()
    st = lib.gfi_ise_plancherel(m.ptr, karg, N, addr(x), addr(Rv), ref(o), ref(v))
    check(st, "ISE (Plancherel)", {**_PARAMS, errors.GFI_EEMPTY: "data"}, {"data": x, "R": Rv})
    return v.value


def _H(H, D):
    Hm = as_f64(H, "H", ndim=(0, 1, 2))
    if Hm.ndim < 2:
        h = Hm.reshape(-1)
        Hm = np.diag(np.broadcast_to(h, (D,)) ** 2) if h.size in (1, D) else Hm
    if Hm.shape != (D, D):
        raise errors.DimensionError(errors.GFI_EDIM, "H: a bandwidth, D of them or a D x D matrix", "H")
    return np.ascontiguousarray(Hm)


def mise_gauss_exact(model: Any, N: float, H: Any, dim: int = 1) -> Dict[str, Any]:
    """Exact MISE of the Gaussian KDE (Marron & Wand 1992) for a normal-mixture
    truth; H a scalar h (H = h^2 I), per-axis h or the matrix."""
    m = as_model(model, dim)
    Hm = _H(H, m.dim)
    res = MiseResult()
    check(lib.gfi_mise_gauss_exact(m.ptr, _N(N), addr(Hm), ref(res)), "Gaussian exact MISE",
          {errors.GFI_EBANDWIDTH: "H", errors.GFI_EUNSUPPORTED: "model"}, {"H": Hm})
    return _result(res)


def optimal_bandwidth(model: Any, N: float, dim: int = 1) -> Tuple[float, Dict[str, Any]]:
    """MISE-optimal isotropic Gaussian bandwidth h: (h, result dict)."""
    m = as_model(model, dim)
    h = ctypes.c_double()
    res = MiseResult()
    check(lib.gfi_mise_gauss_hopt(m.ptr, _N(N), ref(h), ref(res)), "MISE-optimal bandwidth",
          {errors.GFI_EUNSUPPORTED: "model"})
    return h.value, _result(res)
