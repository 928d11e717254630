"""Fourier and softmax attention, forward and exact backward
(include/gfi/attention.h), on arrays (L, D) or (heads, L, D)."""
import ctypes

import numpy as np

from . import errors
from ._lib import (lib, AttnSpec, AttnInfo, Handle, addr, as_f64, check, make_opts, ref)
from .kernels import make_kernel


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


def _spec(phi, per_axis, causal, denom_tol):
    s = AttnSpec()
    lib.gfi_attn_default_spec(ref(s))
    s.kind = 1
    k = make_kernel(phi)
    ctypes.memmove(ctypes.addressof(s.kernel), ctypes.addressof(k), ctypes.sizeof(s.kernel))
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
          {errors.GFI_EEMPTY: "Q", errors.GFI_EDIM: "Q", errors.GFI_EORDER: "phi", errors.GFI_EINVAL: "denom_tol",
           errors.GFI_EUNSUPPORTED: "phi"})
    ns = lib.gfi_attn_saved_size(plan.ptr)
    H = np.empty((heads, L, Dv))
    saved = np.empty((heads, ns))
    nflagged = np.zeros(heads, dtype=np.int64)
    info = AttnInfo()
    for h in range(heads):
        st = lib.gfi_attn_forward(plan.ptr, addr(q3[h]), addr(k3[h]), addr(v3[h]), addr(Rh[h]), addr(H[h]),
                                  addr(saved[h]), ref(info))
        if st != errors.GFI_EDENOM:
            check(st, "Fourier attention forward", {errors.GFI_ERADIUS: "R"},
                  {"Q": q3[h], "K": k3[h], "V": v3[h], "R": Rh[h]})
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
        check(st, "softmax attention forward", {errors.GFI_EBANDWIDTH: "scale", errors.GFI_EEMPTY: "Q",
                                                errors.GFI_EDIM: "Q"}, {"Q": q3[h], "K": k3[h], "V": v3[h]})
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
        check(st, "softmax attention backward", {errors.GFI_EBANDWIDTH: "scale"},
              {"Q": q3[h], "K": k3[h], "V": v3[h], "dH": g3[h]})
    if single:
        return dQ[0], dK[0], dV[0]
    return dQ, dK, dV
