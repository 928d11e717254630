"""FLT (include/gfi/flt.h, rpe.h): RPE masks, their random features and the
error metrics, with the CLI's specification strings (`gfi flt-error`)."""
import ctypes

import numpy as np

from . import errors
from ._lib import (lib, ErrInfo, Handle, OptsExact, addr, as_f64, check, make_opts, ref)

_P = ctypes.c_void_p
sz = ctypes.c_size_t


def _sig(name, args, res=ctypes.c_int):
    f = getattr(lib, name)
    f.argtypes, f.restype = args, res
    return f


_sig("gfi_rpe_parse", [_P, ctypes.c_char_p, sz, _P])
_sig("gfi_rpe_free", [_P], None)
_sig("gfi_rpe_describe", [_P], ctypes.c_char_p)
_sig("gfi_proposal_parse", [_P, ctypes.c_char_p, _P, _P])
_sig("gfi_proposal_free", [_P], None)
_sig("gfi_proposal_describe", [_P], ctypes.c_char_p)
_sig("gfi_rpe_c", [_P, _P, _P])
_sig("gfi_flt_mask", [_P, sz, sz, _P, _P, _P])
_sig("gfi_flt_draw", [_P, _P, _P, sz, _P, _P])
_sig("gfi_flt_factors", [ctypes.c_int, sz, sz, _P, sz, _P, _P, _P, _P])
_sig("gfi_flt_positions_line", [_P, sz])
_sig("gfi_flt_positions_grid", [_P, sz, sz])
_sig("gfi_flt_positions_points", [_P, sz, sz, _P])
_sig("gfi_flt_positions_free", [_P], None)
_sig("gfi_flt_positions_L", [_P], sz)
_sig("gfi_flt_default_opts", [_P], None)
_sig("gfi_flt_error_trials", [_P, _P, _P, sz, _P, sz, _P, _P])

FEATURES = {"complex": 0, "real": 1}
METRICS = ("max_abs", "max_re", "frob", "rel")


class FltOpts(ctypes.Structure):
    """gfi_flt_opts (include/gfi/flt.h): the common options, the feature count, a progress callback."""
    _c_name_ = "gfi_flt_opts"
    _fields_ = [("base", OptsExact), ("features", ctypes.c_int), ("progress", _P), ("_spare", ctypes.c_char * 128)]


def _parse_err(st, what, spec, err, param):
    msg = err.msg.decode(errors="replace")
    raise errors.from_status(st, "%s %r: %s%s" % (what, spec, lib.gfi_strerror(st).decode(),
                                                   (" (" + msg + ")") if msg else ""), param)


class RPE:
    """A relative positional encoding f (mask N_ij = f(r_i - r_j)) from the
    CLI's --rpe spec ("gauss:s=1", "local:v=1,k=2", "matern32:s=2", ...) in ell dimensions."""

    def __init__(self, spec, ell=1):
        if not isinstance(spec, str):
            raise errors.ModelError(errors.GFI_EMODEL, "rpe spec must be a string", "spec")
        self.spec, self.ell = spec, int(ell)
        self._h = Handle(lib.gfi_rpe_free)
        err = ErrInfo()
        st = lib.gfi_rpe_parse(ref(self._h.ptr), spec.encode(), self.ell, ref(err))
        if st:
            _parse_err(st, "rpe", spec, err, "spec")

    def describe(self):
        """The library's description of the encoding."""
        return lib.gfi_rpe_describe(self._h.ptr).decode()

    def mask(self, positions):
        """The exact mask N (L x L, complex) at positions (L,) or (L, ell)."""
        pos = _points(positions, self.ell)
        L = pos.shape[0]
        re, im = np.empty((L, L)), np.empty((L, L))
        check(lib.gfi_flt_mask(self._h.ptr, L, self.ell, addr(pos), addr(re), addr(im)), "FLT mask",
              None, {"positions": pos}, {"ell": "positions"})
        return re + 1j * im


class Proposal:
    """The frequencies' proposal p (the CLI's --proposal: "gauss:tau=T",
    "t:nu=NU[,tau=T]", "cauchy[:tau=T]", "optimal") for an RPE; c = sup |g|/p."""

    def __init__(self, spec, rpe):
        self.spec, self.rpe = spec, rpe
        self._h = Handle(lib.gfi_proposal_free)
        err = ErrInfo()
        st = lib.gfi_proposal_parse(ref(self._h.ptr), str(spec).encode(), rpe._h.ptr, ref(err))
        if st:
            _parse_err(st, "proposal", spec, err, "proposal")
        c = ctypes.c_double()
        check(lib.gfi_rpe_c(rpe._h.ptr, self._h.ptr, ref(c)), "c = sup |g|/p")
        self.c = c.value

    def describe(self):
        """The library's description of the proposal and its constant c."""
        return lib.gfi_proposal_describe(self._h.ptr).decode()


def _points(positions, ell):
    p = as_f64(positions, "positions", ndim=(1, 2))
    p = p.reshape(-1, 1) if p.ndim == 1 else p
    if p.shape[1] != ell:
        raise errors.DimensionError(errors.GFI_EDIM, "positions have %d columns, the RPE has ell = %d"
                                    % (p.shape[1], ell), "positions")
    bad = ~np.isfinite(p)
    if bad.any():  # the library's FLT calls take positions as given
        i = np.unravel_index(int(np.argmax(bad)), p.shape)
        raise errors.NonFiniteError(errors.GFI_ENONFINITE, "FLT positions: NaN or infinite value: positions%s = %r"
                                    % (list(i), float(p[i])), "positions")
    return p


def flt_features(rpe, proposal, positions, r, seed, stream=0, features="complex"):
    """r random features from RNG stream (seed, stream): returns (N1, N2, xi, w)
    with N_hat = N1 @ N2.T: complex L x r factors (sqrt(w_k/r) e^{+-i xi_k.r_i})
    approximating N, or for "real" L x 2r (cos/sin) approximating Re N."""
    if features not in FEATURES:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "features: 'complex' or 'real'", "features")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "r must be an integer >= 1, got %r" % (r,), "r")
    pos = _points(positions, rpe.ell)
    L = pos.shape[0]
    xi, w = np.empty((r, rpe.ell)), np.empty(r)
    g = lib.gfi_rng_stream(int(seed), int(stream))
    if not g:
        raise errors.OutOfMemory(errors.GFI_ENOMEM, "gfi_rng_stream: out of memory")
    try:
        check(lib.gfi_flt_draw(rpe._h.ptr, proposal._h.ptr, g, r, addr(xi), addr(w)), "FLT draw")
    finally:
        lib.gsl_rng_free(g)
    a, b = np.empty((L, 2 * r)), np.empty((L, 2 * r))  # complex: interleaved (re, im)
    check(lib.gfi_flt_factors(FEATURES[features], L, rpe.ell, addr(pos), r, addr(xi), addr(w), addr(a), addr(b)),
          "FLT factors", None, {"positions": pos})
    if features == "complex":
        a = a[:, 0::2] + 1j * a[:, 1::2]
        b = b[:, 0::2] + 1j * b[:, 1::2]
    return a, b, xi, w


def flt_error_trials(rpe, proposal, r, trials, positions=None, L=None, grid=None, seed=1, features="complex",
                     threads=None):
    """The error metrics of `trials` draws (trial k on RNG stream (seed, k)),
    nested over the feature counts r (increasing): an array (trials, len(r), 4)
    of max |N_hat - N|, max |Re(N_hat - N)|, ||N_hat - N||_F and its ratio to
    ||N||_F (METRICS) - the numbers `gfi flt-error` summarises. Positions:
    L (0..L-1 on a line), grid=(n1, n2) (ell = 2) or an array (L, ell)."""
    if features not in FEATURES:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "features: 'complex' or 'real'", "features")
    rs = np.ascontiguousarray(np.atleast_1d(np.asarray(r)), dtype=np.uintp)
    if rs.ndim != 1 or rs.size == 0 or np.any(rs < 1) or np.any(np.diff(rs.astype(np.int64)) <= 0):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "r: feature counts >= 1, strictly increasing", "r")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "trials must be an integer >= 1", "trials")
    P = Handle(lib.gfi_flt_positions_free)
    if positions is not None:
        pos = _points(positions, rpe.ell)
        st = lib.gfi_flt_positions_points(ref(P.ptr), pos.shape[0], rpe.ell, addr(pos))
    elif grid is not None:
        st = lib.gfi_flt_positions_grid(ref(P.ptr), int(grid[0]), int(grid[1]))
    elif L is not None:
        st = lib.gfi_flt_positions_line(ref(P.ptr), int(L))
    else:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "give positions, L or grid", "positions")
    check(st, "FLT positions", {errors.GFI_EINVAL: "L"}, names={"n1": "grid", "n2": "grid"})
    o = FltOpts()
    lib.gfi_flt_default_opts(ref(o))
    base = make_opts(threads, seed=seed)
    o.base.nthreads, o.base.seed = base.nthreads, base.seed
    o.features = FEATURES[features]
    out = np.empty((int(trials), rs.size, len(METRICS)))
    check(lib.gfi_flt_error_trials(rpe._h.ptr, proposal._h.ptr, P.ptr, rs.size, addr(rs), int(trials), ref(o),
                                   addr(out)), "FLT error trials")
    return out
