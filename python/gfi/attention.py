"""Fourier and softmax attention, forward and exact backward
(include/gfi/attention.h), on arrays (L, D) or (heads, L, D), and batched
Fourier attention on (B, H, L, D) arrays in float32 or float64 with masks
(fourier_attention_batch, fourier_attention_batch_backward)."""
import ctypes

import numpy as np

from . import errors
from ._lib import (lib, AttnSpec, AttnBatchSpec, AttnInfo, Handle, addr, as_f64, check, make_opts, ref)
from ._lib import Kernel
from .kernels import make_kernel

# The library names the sizes it refuses (attention.h); the Python argument
# that carries each is an array.
_DIM_NAMES = {"L": "Q", "Lq": "Q", "Lk": "K", "B": "Q", "H": "Q", "D": "Q", "Dv": "V"}


def _qkv(Q, K, V):
    q = as_f64(Q, "Q", ndim=(2, 3))
    k = as_f64(K, "K", ndim=(2, 3))
    v = as_f64(V, "V", ndim=(2, 3))
    if not (q.ndim == k.ndim == v.ndim):
        raise errors.DimensionError(errors.GFI_EDIM, "Q, K, V must all be (L, D) or all (heads, L, D); got shapes "
                                    "%s, %s, %s" % (q.shape, k.shape, v.shape), "Q")
    if q.shape != k.shape:
        raise errors.DimensionError(errors.GFI_EDIM, "K has shape %s, Q has %s" % (k.shape, q.shape), "K")
    if v.shape[:-1] != q.shape[:-1]:
        raise errors.DimensionError(errors.GFI_EDIM, "V has shape %s: its leading axes must be Q's %s"
                                    % (v.shape, q.shape[:-1]), "V")
    return q, k, v


class AttentionContext:
    """What the Fourier forward saved for the backward: the inputs (no copy
    when they were C-contiguous float64), H, the row statistics, the plan;
    nflagged: rows whose denominator vanished (NaN rows of H), per head."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def attention_kernel(phi):
    """The kernel Fourier attention takes from phi: an int l (phi = z^l), the
    text forms of make_kernel ("pow:L", "poly:a1,..,ad"), or a sequence of
    coefficients (a_1, .., a_deg) of phi(z) = sum_k a_k z^k, deg <= 8, of
    either sign (attention's ratio does not need A, so a negative coefficient
    is allowed here, unlike for densities; rows whose denominator vanishes or
    turns negative are NaN, as for odd l). The flat-top kernel is refused by
    the library (UnsupportedError naming phi)."""
    if isinstance(phi, (str, int, np.integer, Kernel)) or phi is None:
        return make_kernel(phi)
    try:
        coefs = [float(t) for t in phi]
    except TypeError:
        return make_kernel(phi)
    if not coefs or len(coefs) > 8 or all(c >= 0 for c in coefs):
        return make_kernel(coefs)
    while coefs and coefs[-1] == 0:
        coefs.pop()
    k = Kernel()
    k.kind = 2  # GFI_PHI_POLY; the library checks the coefficients
    k.l = len(coefs)
    k.A = float("nan")
    for j, c in enumerate(coefs):
        k.coef[j + 1] = c
    return k


def _set_kernel(spec, phi):
    k = attention_kernel(phi)
    ctypes.memmove(ctypes.addressof(spec.kernel), ctypes.addressof(k), ctypes.sizeof(spec.kernel))


def _spec(phi, per_axis, causal, denom_tol):
    s = AttnSpec()
    lib.gfi_attn_default_spec(ref(s))
    s.kind = 1
    _set_kernel(s, phi)
    s.per_axis_R = 1 if per_axis else 0
    s.causal = 1 if causal else 0
    if denom_tol is not None:
        s.denom_tol = float(denom_tol)
    return s


def _radii(R, heads, D):
    r = as_f64(R, "R", ndim=(0, 1, 2))
    if r.ndim == 0 or r.size == 1:
        return np.ascontiguousarray(np.broadcast_to(r.reshape(1), (heads, 1))), False
    if r.ndim == 1 and r.size == D:
        return np.ascontiguousarray(np.broadcast_to(r, (heads, D))), True
    if r.ndim == 2 and r.shape == (heads, D):
        return r, True
    if r.ndim == 2 and r.shape == (heads, 1):
        return r, False
    raise errors.DimensionError(errors.GFI_EDIM, "R: one radius, D = %d (per axis), (heads, D) or (heads, 1); "
                                "got shape %s" % (D, r.shape), "R")


def fourier_attention(Q, K, V, R, phi=4, causal=False, denom_tol=None, threads=None, return_context=False):
    """Fourier attention H_i = sum_j w_ij v_j / sum_j w_ij with
    w_ij = prod_d phi(sinc(R_d (q_id - k_jd))) (FourierFormer eq. 15).

    Q, K: (L, D) or (heads, L, D); V: (L, Dv) or (heads, L, Dv). R: one
    radius, D radii (per axis), or (heads, D) / (heads, 1) per head. Rows whose
    denominator vanished (odd l; attention.h) are NaN and counted in the
    context's nflagged. Returns H, or (H, ctx) for fourier_attention_backward."""
    q, k, v = _qkv(Q, K, V)
    single = q.ndim == 2
    q3, k3, v3 = (a[None] if single else a for a in (q, k, v))
    heads, L, D = q3.shape
    Dv = v3.shape[2]
    Rh, per_axis = _radii(R, heads, D)
    spec = _spec(phi, per_axis, causal, denom_tol)
    o = make_opts(threads)
    plan = Handle(lib.gfi_attn_destroy)
    check(lib.gfi_attn_plan_create(ref(plan.ptr), ref(spec), L, D, Dv, ref(o)), "attention plan",
          names=_DIM_NAMES)
    ns = lib.gfi_attn_saved_size(plan.ptr)
    H = np.empty((heads, L, Dv))
    saved = np.empty((heads, ns))
    nflagged = np.zeros(heads, dtype=np.int64)
    info = AttnInfo()
    for h in range(heads):
        st = lib.gfi_attn_forward(plan.ptr, addr(q3[h]), addr(k3[h]), addr(v3[h]), addr(Rh[h]), addr(H[h]),
                                  addr(saved[h]), ref(info))
        if st != errors.GFI_EDENOM:
            check(st, "Fourier attention forward", None, {"Q": q3[h], "K": k3[h], "V": v3[h], "R": Rh[h]})
        nflagged[h] = info.nflagged
    Hout = H[0] if single else H
    if not return_context:
        return Hout
    ctx = AttentionContext(q=q3, k=k3, v=v3, R=Rh, R_shape=np.shape(R), H=H, saved=saved, plan=plan,
                           single=single, nflagged=nflagged, per_axis=per_axis)
    return Hout, ctx


def fourier_attention_backward(ctx, dH):
    """Gradients (dQ, dK, dV, dR) of a loss with dL/dH = dH through the
    forward that made ctx. dR has the shape of the R given to the forward
    (a radius shared by the heads or axes gets the sum)."""
    heads, L, D = ctx.q.shape
    Dv = ctx.v.shape[2]
    g = as_f64(dH, "dH", ndim=(2, 3))
    g3 = g[None] if g.ndim == 2 else g
    if g3.shape != (heads, L, Dv):
        raise errors.DimensionError(errors.GFI_EDIM, "dH has shape %s, H has %s" % (g.shape, ctx.H.shape[1:]
                                    if ctx.single else ctx.H.shape), "dH")
    dQ = np.empty((heads, L, D))
    dK = np.empty((heads, L, D))
    dV = np.empty((heads, L, Dv))
    dR = np.empty(ctx.R.shape)
    for h in range(heads):
        st = lib.gfi_attn_backward(ctx.plan.ptr, addr(ctx.q[h]), addr(ctx.k[h]), addr(ctx.v[h]), addr(ctx.R[h]),
                                   addr(ctx.H[h]), addr(ctx.saved[h]), addr(g3[h]), addr(dQ[h]), addr(dK[h]),
                                   addr(dV[h]), addr(dR[h]), None)
        if st != errors.GFI_EDENOM:
            check(st, "Fourier attention backward", None, {"dH": g3[h]})
    # dR back to the shape R had
    shp = ctx.R_shape
    if len(shp) == 0 or int(np.prod(shp)) == 1:
        dRo = dR.sum()
        dRo = np.reshape(dRo, shp)
    elif len(shp) == 1:
        dRo = dR.sum(axis=0)
    else:
        dRo = dR
    if ctx.single:
        return dQ[0], dK[0], dV[0], dRo
    return dQ, dK, dV, dRo


def _scale(scale, D):
    if scale is None:
        return 1.0 / np.sqrt(D)
    s = float(scale)
    if not (s > 0 and np.isfinite(s)):
        raise errors.BandwidthError(errors.GFI_EBANDWIDTH, "scale must be > 0 and finite, got %r" % scale, "scale")
    return s


def softmax_attention(Q, K, V, scale=None, causal=False, threads=None):
    """Exact softmax attention H = softmax(scale Q K^T) V row by row (scale
    default 1/sqrt(D)), on (L, D) or (heads, L, D)."""
    q, k, v = _qkv(Q, K, V)
    single = q.ndim == 2
    q3, k3, v3 = (a[None] if single else a for a in (q, k, v))
    heads, L, D = q3.shape
    Dv = v3.shape[2]
    s = _scale(scale, D)
    o = make_opts(threads)
    H = np.empty((heads, L, Dv))
    for h in range(heads):
        st = lib.gfi_attn_softmax_forward(L, D, Dv, addr(q3[h]), addr(k3[h]), addr(v3[h]), s, 1 if causal else 0,
                                          ref(o), addr(H[h]))
        check(st, "softmax attention forward", None, {"Q": q3[h], "K": k3[h], "V": v3[h]}, _DIM_NAMES)
    return H[0] if single else H


def softmax_attention_backward(Q, K, V, dH, scale=None, causal=False, threads=None):
    """Gradients (dQ, dK, dV) of softmax attention for dL/dH = dH."""
    q, k, v = _qkv(Q, K, V)
    single = q.ndim == 2
    q3, k3, v3 = (a[None] if single else a for a in (q, k, v))
    heads, L, D = q3.shape
    Dv = v3.shape[2]
    g = as_f64(dH, "dH", ndim=(2, 3))
    g3 = g[None] if g.ndim == 2 else g
    if g3.shape != (heads, L, Dv):
        raise errors.DimensionError(errors.GFI_EDIM, "dH has shape %s, expected %s" % (g.shape, v.shape), "dH")
    s = _scale(scale, D)
    o = make_opts(threads)
    dQ, dK, dV = np.empty((heads, L, D)), np.empty((heads, L, D)), np.empty((heads, L, Dv))
    for h in range(heads):
        st = lib.gfi_attn_softmax_backward(L, D, Dv, addr(q3[h]), addr(k3[h]), addr(v3[h]), s, 1 if causal else 0,
                                           ref(o), addr(g3[h]), addr(dQ[h]), addr(dK[h]), addr(dV[h]))
        check(st, "softmax attention backward", None, {"Q": q3[h], "K": k3[h], "V": v3[h], "dH": g3[h]},
              _DIM_NAMES)
    if single:
        return dQ[0], dK[0], dV[0]
    return dQ, dK, dV


# ---- batched Fourier attention: (B, H, L, D), float32 / float64, masks ----

_RMODE = {"scalar": 0, "head": 1, "head_axis": 2}


def _as_dtype(x, name, dt, ndim):
    """x as a C-contiguous array of dtype dt: no copy when it already is one."""
    if isinstance(x, np.ndarray) and x.dtype == dt and x.flags.c_contiguous:
        a = x
    else:
        try:
            arr = np.asarray(x)
        except Exception as e:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "%s: not an array of numbers (%s)" % (name, e), name)
        if arr.dtype.kind not in "biuf":
            raise TypeError("gfi: %s must hold real numbers, got dtype %s" % (name, arr.dtype))
        a = np.ascontiguousarray(arr, dtype=dt)
    if a.ndim != ndim:
        raise errors.DimensionError(errors.GFI_EDIM, "%s must have %d dimensions, got shape %s"
                                    % (name, ndim, a.shape), name)
    return a


def _as_rows(x, name, dt, ndim):
    """x as an array of dtype dt whose last axis is contiguous: a strided
    view (a chunk of a fused projection) is kept as it is, read by gfi
    through its strides; anything else as _as_dtype."""
    if isinstance(x, np.ndarray) and x.dtype == dt and x.ndim == ndim and x.size and \
            x.strides[-1] == x.itemsize and all(st >= 0 and st % x.itemsize == 0 for st in x.strides):
        return x
    return _as_dtype(x, name, dt, ndim)


def _bool_mask(m, name, shapes):
    """A mask as C-contiguous bytes (nonzero = excluded): a bool array is
    passed as it is (numpy's bool is one byte)."""
    if m is None:
        return None
    a = np.asarray(m)
    if a.dtype != np.bool_:
        if a.dtype.kind not in "biu":
            raise TypeError("gfi: %s must be boolean (True = excluded), got dtype %s" % (name, a.dtype))
        a = a != 0
    a = np.ascontiguousarray(a)
    if a.shape not in shapes:
        raise errors.DimensionError(errors.GFI_EDIM, "%s has shape %s, expected one of %s"
                                    % (name, a.shape, " or ".join(str(s) for s in shapes)), name)
    return a


class BatchAttentionContext:
    """What fourier_attention_batch saved for the backward: the inputs (no
    copy when they were C-contiguous of the dtype), H, the row statistics,
    the spec and masks; nflagged / first_flagged: rows whose denominator
    vanished (NaN rows of H), nempty / first_empty: rows that see no key
    (rows numbered (b H + h) Lq + i; first_* is the row count when none)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _batch_radii(R, H, D, dt, per_axis=False):
    """R's layout from its shape and the explicit per_axis, never guessed
    from the sizes: per_axis=False: a scalar (or one value) or (H,) one per
    head; per_axis=True: (D,) one per axis shared by the heads (expanded
    here; the backward sums dR back) or (H, D). An (H, D) array is per head
    and axis either way. Returns (r, rmode, shared_axes)."""
    r = np.asarray(R)
    if r.ndim == 2 and r.shape == (H, D):
        return _as_dtype(r, "R", dt, 2), "head_axis", False
    if per_axis:
        if r.ndim == 1 and r.shape == (D,):
            return _as_dtype(np.broadcast_to(r, (H, D)), "R", dt, 2), "head_axis", True
        raise errors.DimensionError(errors.GFI_EDIM, "R with per_axis=True: one per axis (D,) = (%d,) or one per "
                                    "head and axis (H, D) = (%d, %d); got shape %s" % (D, H, D, r.shape), "R")
    if r.ndim == 0 or (r.ndim == 1 and r.size == 1 and H != 1):
        return _as_dtype(r.reshape(1), "R", dt, 1), "scalar", False
    if r.ndim == 1 and r.shape == (H,):
        return _as_dtype(r, "R", dt, 1), "head", False
    raise errors.DimensionError(errors.GFI_EDIM, "R: a scalar, one per head (H,) = (%d,) or one per head and axis "
                                "(H, D) = (%d, %d); got shape %s (one per axis (D,): per_axis=True)"
                                % (H, H, D, r.shape), "R")


_LAYOUTS = {"BHLD": 0, "LBHD": 1}


def fourier_attention_batch(Q, K, V, R, phi=4, causal=False, key_padding_mask=None, mask=None, eps=0.0,
                            empty="nan", denom_tol=None, dtype=None, threads=None, return_context=False,
                            layout="BHLD", per_axis=False, dropout=0.0, seed=0):
    """Batched Fourier attention (FourierFormer eq. 15) as its models run it.

    Q: (B, H, Lq, D); K: (B, H, Lk, D); V: (B, H, Lk, Dv); returns H
    (B, H, Lq, Dv) in the dtype: float32 or float64 (default: float32 when
    Q, K and V are all float32, else float64). C-contiguous arrays of the
    dtype are used without a copy. float32 computes the pair loop in float32
    with float64 row sums (docs/attention.md states the error).

    R: a scalar, one radius per head (H,), or one per head and axis (H, D);
    with per_axis=True, (D,) is one radius per axis shared by the heads (a
    1-D R is read by per_axis, never by comparing H and D).
    causal: query i sees keys j <= i + Lk - Lq (Transformer-XL memory keys
    first). key_padding_mask: (B, Lk) bool, True = a padded key (PyTorch's
    convention). mask: (Lq, Lk), (1, Lq, Lk) or (B, Lq, Lk) bool, True =
    excluded. eps: H = N / (S + eps) (FourierFormer's code uses 1e-6; 0, the
    default, is the exact ratio). empty: rows that see no key are "nan"
    (default) or "zero" (zeros, with zero gradients); either way they are
    counted in the context (nempty). layout: "BHLD" (default) or "LBHD":
    Q, K, V and H as (L, B, H, D) arrays (FourierFormer's and
    Transformer-XL's [len, batch, head, dim]), read and written in that order
    without copies; masks keep their shapes (a (Lq, Lk, 1) mask, their
    broadcast form, is taken as (Lq, Lk)). V beyond 2^500 (float32: 2^64) is
    scaled by a power of two inside the call, so H stays finite. Q, K and V
    may be strided views whose last axis is contiguous (the chunks of a fused
    q/k/v projection): read through their strides, not copied. Returns H,
    or (H, ctx) for fourier_attention_batch_backward. dropout: attention
    dropout p on the normalised weights (0 <= p < 1; kept weights scaled by
    1/(1-p)), its mask a function of (seed, b H + h, i, j) only: the same seed
    gives the same mask, and the backward regenerates it."""
    if dtype is None:
        dt = np.float32 if all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in (Q, K, V)) \
            else np.float64
    else:
        dt = np.dtype(dtype).type
        if dt not in (np.float32, np.float64):
            raise errors.InvalidArgument(errors.GFI_EINVAL, "dtype must be float32 or float64, got %r"
                                         % (dtype,), "dtype")
    if layout not in _LAYOUTS:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "layout must be 'BHLD' or 'LBHD', got %r" % (layout,),
                                     "layout")
    lb = layout == "LBHD"
    q = _as_rows(Q, "Q", dt, 4)
    k = _as_rows(K, "K", dt, 4)
    v = _as_rows(V, "V", dt, 4)
    # the shapes in (B, H, L, D) terms: views, never copies
    qs, ks, vs = ((a.shape[1], a.shape[2], a.shape[0], a.shape[3]) if lb else a.shape for a in (q, k, v))
    lay = "(Lk, B, H, %s)" if lb else "(B, H, Lk, %s)"
    B, H, Lq, D = qs
    if ks[:2] != (B, H) or ks[3] != D:
        raise errors.DimensionError(errors.GFI_EDIM, "K has shape %s; Q has %s: K must be %s"
                                    % (k.shape, q.shape, lay % "D"), "K")
    Lk = ks[2]
    if vs[:3] != (B, H, Lk):
        raise errors.DimensionError(errors.GFI_EDIM, "V has shape %s; it must be %s with B, H, Lk = %d, %d, %d"
                                    % (v.shape, lay % "Dv", B, H, Lk), "V")
    Dv = vs[3]
    r, rmode, shared_axes = _batch_radii(R, H, D, dt, per_axis)
    try:
        dropout = float(dropout)  # in [0, 1): the library's check, as of eps and denom_tol
    except (TypeError, ValueError):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "dropout must be a number in [0, 1), got %r" % (dropout,),
                                     "dropout")
    seed = int(seed)
    if not 0 <= seed < 2 ** 64:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "seed must be in [0, 2^64), got %r" % (seed,), "seed")
    kp = _bool_mask(key_padding_mask, "key_padding_mask", [(B, Lk)])
    if mask is not None and np.shape(mask) == (Lq, Lk, 1):
        mask = np.reshape(mask, (Lq, Lk))  # FourierFormer's [qlen, klen, 1]: a view
    mk = _bool_mask(mask, "mask", [(Lq, Lk), (1, Lq, Lk), (B, Lq, Lk), (Lq, Lk, 1)])
    if empty not in ("nan", "zero"):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "empty must be 'nan' or 'zero', got %r" % (empty,), "empty")
    s = AttnBatchSpec()
    lib.gfi_attn_batch_default_spec(ref(s))
    _set_kernel(s, phi)
    s.rmode = _RMODE[rmode]
    s.causal = 1 if causal else 0
    s.eps = float(eps)
    if denom_tol is not None:
        s.denom_tol = float(denom_tol)
    s.empty_zero = 1 if empty == "zero" else 0
    s.dtype = 1 if dt == np.float32 else 0
    s.mask_batch = 1 if mk is None or mk.ndim == 2 or mk.shape[0] == 1 else B
    s.layout = _LAYOUTS[layout]
    s.dropout = float(dropout)
    s.seed = seed
    for a, arr in enumerate((q, k, v)):  # element strides along (b, h, row): no copy of a strided view
        if not arr.flags.c_contiguous:
            st = [x // arr.itemsize for x in arr.strides]
            st = (st[1], st[2], st[0]) if lb else (st[0], st[1], st[2])
            for c in range(3):
                s.strides[3 * a + c] = st[c]
    o = make_opts(threads)
    out = np.empty((Lq, B, H, Dv) if lb else (B, H, Lq, Dv), dtype=dt)
    saved = np.empty(max(lib.gfi_attn_batch_saved_size(B, H, Lq), 1))
    info = AttnInfo()
    st = lib.gfi_attn_batch_forward(ref(s), B, H, Lq, Lk, D, Dv, addr(q), addr(k), addr(v), addr(r), addr(kp),
                                    addr(mk), ref(o), addr(out), addr(saved), ref(info))
    if st != errors.GFI_EDENOM:
        check(st, "batched Fourier attention forward", {errors.GFI_EDIM: "Q"}, {"Q": q, "K": k, "V": v, "R": r},
              _DIM_NAMES)
    if not return_context:
        return out
    ctx = BatchAttentionContext(q=q, k=k, v=v, R=r, R_shape=np.shape(R), rmode=rmode, spec=s, kp=kp, mk=mk,
                                threads=threads, H=out, saved=saved, dtype=dt, nflagged=int(info.nflagged),
                                first_flagged=int(info.first_flagged), nempty=int(info.nempty),
                                first_empty=int(info.first_empty), min_ratio=float(info.min_ratio),
                                dims=(B, H, Lq, Lk, D, Dv), layout=layout, shared_axes=shared_axes)
    return out, ctx


def fourier_attention_batch_backward(ctx, dH):
    """Gradients (dQ, dK, dV, dR) of a loss with dL/dH = dH (B, H, Lq, Dv)
    through the forward that made ctx, in its dtype. dR has the shape of the
    R given (a radius shared by heads, rows or axes gets the sum)."""
    q, k, v = ctx.q, ctx.k, ctx.v
    B, H, Lq, Lk, D, Dv = ctx.dims
    g = _as_dtype(dH, "dH", ctx.dtype, 4)
    if g.shape != ctx.H.shape:
        raise errors.DimensionError(errors.GFI_EDIM, "dH has shape %s, H has %s" % (g.shape, ctx.H.shape), "dH")
    dQ = np.empty(q.shape, dtype=ctx.dtype)
    dK = np.empty(k.shape, dtype=ctx.dtype)
    dV = np.empty(v.shape, dtype=ctx.dtype)
    dR = np.empty(ctx.R.shape, dtype=ctx.dtype)
    o = make_opts(ctx.threads)
    st = lib.gfi_attn_batch_backward(ref(ctx.spec), B, H, Lq, Lk, D, Dv, addr(q), addr(k), addr(v), addr(ctx.R),
                                     addr(ctx.kp), addr(ctx.mk), ref(o), addr(ctx.H), addr(ctx.saved), addr(g),
                                     addr(dQ), addr(dK), addr(dV), addr(dR), None)
    if st != errors.GFI_EDENOM:
        check(st, "batched Fourier attention backward", {errors.GFI_ERANGE: "dH"}, {"dH": g}, _DIM_NAMES)
    if ctx.shared_axes:
        dR = dR.sum(axis=0)
    return dQ, dK, dV, dR.reshape(ctx.R_shape)
