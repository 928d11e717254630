"""PyTorch face of gfi's Fourier attention (CPU tensors).

  FourierAttentionFunction  a torch.autograd.Function over gfi's forward and
                            exact backward (include/gfi/attention.h)
  FourierAttention          an nn.Module with a learnable radius (one, or one
                            per axis), parametrised by log R so that R > 0
  fourier_attention_reference  FourierFormer's formula in plain PyTorch (the
                            O(L^2 D) reference of the tests)

  FourierAttentionBatchFunction  the batched op: (B, H, L, D) tensors in
                            float32 or float64, masks, memory keys, +eps
                            (gfi.fourier_attention_batch)

Import it explicitly (`import gfi.torch`); it needs PyTorch, gfi does not.
(L, D) and (heads, L, D) tensors are computed in float64 (float64 CPU
tensors that are contiguous go to gfi without a copy; others are converted,
and the results converted back to the input's dtype). (B, H, L, D) tensors
go to the batched engine in their own dtype when it is float32 or float64
(contiguous CPU tensors without a copy), other dtypes in float64.
"""
import warnings

import numpy as np
import torch

from . import errors

from .attention import (fourier_attention, fourier_attention_backward, fourier_attention_batch,
                        fourier_attention_batch_backward)

__all__ = ["FourierAttentionFunction", "FourierAttentionBatchFunction", "FourierAttention",
           "FlaggedRowsWarning", "fourier_attention_reference"]


def _np(t):
    if t.device.type != "cpu":
        raise ValueError("gfi.torch: tensors must be on the CPU, got %s" % t.device)
    return t.detach().to(torch.float64).contiguous().numpy()


class FourierAttentionFunction(torch.autograd.Function):
    """H = FourierAttentionFunction.apply(Q, K, V, R, phi=4, causal=False, denom_tol=None, threads=None).

    Q, K: (L, D) or (heads, L, D); V: (L, Dv) or (heads, L, Dv); R a tensor
    with one radius, D radii (per axis) or (heads, D). Gradients for Q, K, V
    and R (dR has R's shape)."""

    @staticmethod
    def forward(ctx, Q, K, V, R, phi=4, causal=False, denom_tol=None, threads=None):
        H, c = fourier_attention(_np(Q), _np(K), _np(V), _np(R), phi=phi, causal=causal, denom_tol=denom_tol,
                                 threads=threads, return_context=True)
        ctx.gfi = c
        ctx.save_for_backward(Q, K, V, R)  # torch's version counters catch in-place changes before backward
        return torch.from_numpy(H).to(Q.dtype)

    @staticmethod
    def backward(ctx, dH):
        Q, K, V, R = ctx.saved_tensors
        dQ, dK, dV, dR = fourier_attention_backward(ctx.gfi, _np(dH))
        out = [torch.from_numpy(np.ascontiguousarray(a)).to(t.dtype).reshape(t.shape)
               for a, t in ((dQ, Q), (dK, K), (dV, V), (np.asarray(dR), R))]
        return (*out, None, None, None, None)


def _np_as(t, dt):
    if t.device.type != "cpu":
        raise ValueError("gfi.torch: tensors must be on the CPU, got %s" % t.device)
    return t.detach().to(dt).contiguous().numpy()


def _mask_np(m):
    return None if m is None else _np_as(m, torch.bool)


class FlaggedRowsWarning(RuntimeWarning):
    """Rows of H that are NaN (a vanished or cancelled denominator, or a row
    that sees no key with empty="nan"), reported by on_flagged="warn"."""


_ON_FLAGGED = ("raise", "warn", "ignore")
_HALF = (torch.float16, torch.bfloat16)


def _compute_dtype(Q, K, V):
    """float32 and float64 inputs are computed in their dtype; float16 and
    bfloat16 (autocast, --fp16 training) in float32, the result cast back;
    anything else in float64."""
    dts = {Q.dtype, K.dtype, V.dtype}
    if len(dts) == 1 and Q.dtype in (torch.float32, torch.float64):
        return Q.dtype
    if dts <= {torch.float32, *_HALF}:
        return torch.float32
    return torch.float64


def _report_flagged(c, on_flagged, layout):
    """NaN rows of H are never silent: raise (default) or warn, by on_flagged."""
    if not c.nflagged or on_flagged == "ignore":
        return
    B, H, Lq = c.dims[0], c.dims[1], c.dims[2]
    r = c.first_flagged
    b, h, i = r // (H * Lq), (r // Lq) % H, r % Lq
    empty = c.nempty
    msg = ("gfi.torch: %d rows of the attention output are NaN (first: batch %d, head %d, query %d): %s"
           % (c.nflagged, b, h, i,
              "%d of them see no key (masks, causal offset): pass empty='zero' for zero rows; " % empty if empty else "")
           + "a row whose sum of weights vanished or cancelled is NaN with eps = 0 (eps > 0, FourierFormer's "
           "1e-6, defines every row that sees a key); on_flagged='warn' or 'ignore' returns the NaN rows")
    if on_flagged == "warn":
        warnings.warn(msg, FlaggedRowsWarning, stacklevel=3)
    else:
        raise errors.DenominatorError(errors.GFI_EDENOM, msg, "eps")


class FourierAttentionBatchFunction(torch.autograd.Function):
    """H = FourierAttentionBatchFunction.apply(Q, K, V, R, phi, causal,
    key_padding_mask, mask, eps, empty, threads, layout, on_flagged, per_axis,
    dropout, seed) (positional; trailing ones may be left out, None for the
    defaults).

    Q: (B, H, Lq, D), K: (B, H, Lk, D), V: (B, H, Lk, Dv), or with layout
    "LBHD" (Lq, B, H, D), (Lk, B, H, D), (Lk, B, H, Dv) (FourierFormer's
    [len, batch, head, dim]; contiguous tensors go to gfi without a copy).
    float32 and float64 are computed in their dtype, float16 and bfloat16 in
    float32 (the output cast back), others in float64.

    R: raw radii of any sign (the weights are even in R: |R| is used, dR
    carries R's sign), a scalar tensor, (H,), (H, D), or with per_axis=True
    (D,) shared by the heads; R = 0 is refused (gfi.RadiusError). Every 1-D R
    is read by per_axis, never by comparing H and D.

    key_padding_mask: (B, Lk) bool, True = padded; mask: (Lq, Lk), (Lq, Lk,
    1), (1, Lq, Lk) or (B, Lq, Lk) bool, True = excluded. eps: H = N / (S +
    eps) (default 0 here; FourierAttention defaults to FourierFormer's 1e-6).
    on_flagged: NaN rows of H (flagged denominators, or rows that see no key
    with empty="nan"): "raise" (default, gfi.DenominatorError naming the first
    row), "warn" (FlaggedRowsWarning, NaN rows returned) or "ignore".
    dropout, seed: attention dropout inside the op (the mask of pair (i, j) a
    function of seed, batch, head, i, j; the backward regenerates it).
    Gradients for Q, K, V and R (dR has R's shape and dtype)."""

    @staticmethod
    def forward(ctx, Q, K, V, R, phi=4, causal=False, key_padding_mask=None, mask=None, eps=0.0, empty="nan",
                threads=None, layout=None, on_flagged=None, per_axis=None, dropout=None, seed=None):
        tdt = _compute_dtype(Q, K, V)
        layout = layout or "BHLD"
        on_flagged = on_flagged or "raise"
        if on_flagged not in _ON_FLAGGED:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "on_flagged must be 'raise', 'warn' or 'ignore', got %r"
                                         % (on_flagged,), "on_flagged")
        Rt = R.detach().to(tdt)
        if bool((Rt == 0).any()):
            raise errors.RadiusError(errors.GFI_ERADIUS, "gfi.torch: R = 0 makes every weight 1 (no attention "
                                     "kernel); the radius must be nonzero (any sign: |R| is used)", "R")
        H, c = fourier_attention_batch(_np_as(Q, tdt), _np_as(K, tdt), _np_as(V, tdt), _np_as(Rt.abs(), tdt),
                                       phi=4 if phi is None else phi, causal=bool(causal),
                                       key_padding_mask=_mask_np(key_padding_mask), mask=_mask_np(mask),
                                       eps=0.0 if eps is None else eps, empty=empty or "nan", threads=threads,
                                       return_context=True, layout=layout, per_axis=bool(per_axis),
                                       dropout=0.0 if dropout is None else dropout, seed=0 if seed is None else seed)
        _report_flagged(c, on_flagged, layout)
        ctx.gfi, ctx.tdt = c, tdt
        ctx.save_for_backward(Q, K, V, R)
        return torch.from_numpy(H).to(Q.dtype)

    @staticmethod
    def backward(ctx, dH):
        Q, K, V, R = ctx.saved_tensors
        dQ, dK, dV, dR = fourier_attention_batch_backward(ctx.gfi, _np_as(dH, ctx.tdt))
        dR = np.asarray(dR) * np.sign(R.detach().to(torch.float64).numpy())
        out = [torch.from_numpy(np.ascontiguousarray(a)).to(t.dtype).reshape(t.shape)
               for a, t in ((dQ, Q), (dK, K), (dV, V), (dR, R))]
        return (*out,) + (None,) * 12


class FourierAttention(torch.nn.Module):
    """Fourier attention layer: forward(Q, K, V) -> H with a learnable radius.

    dim: D (the query/key width); R: the initial radius; per_axis: one
    radius per axis (eq. 54) instead of one; heads: with per_axis, a radius
    per head and axis (inputs (heads, L, D) or (B, heads, L, D)); with
    per_head (and heads), one radius per head; phi: l of phi = z^l (default
    4); causal: row i sees keys j <= i (with (B, H, L, D) inputs, j <= i +
    Lk - Lq); eps: H = N / (S + eps), default 1e-6 as every FourierFormer
    model's code (0: the exact ratio; 43-100% of a small causal LM's rows
    have sum_j w_ij^4 < 1e-6, so the choice matters); dropout: attention
    dropout inside the op while training (a new seed per call from torch's
    generator, so torch.manual_seed makes a run reproducible); layout:
    "BHLD" or "LBHD" for (L, B, H, D) inputs (no permute copies);
    on_flagged: NaN rows "raise" (default), "warn" or "ignore" (see
    FourierAttentionBatchFunction); empty: rows that see no key "nan"
    (default) or "zero".

    The radius: by default the parameter is log_R (R = exp(log_R) stays
    positive under any step); raw_R=True keeps FourierFormer's raw parameter
    R_raw (any sign, |R_raw| used). Either loads a state dict that holds
    FourierFormer's raw `R` instead (converted on load: log|R|, or R itself;
    R = 0 is refused), and the property R is the radius in use.

    forward(Q, K, V, key_padding_mask=None, mask=None, seed=None): (B, H, L,
    D) tensors (or the layout's) as FourierAttentionBatchFunction (float32
    stays float32, float16/bfloat16 computed in float32); (L, D) and (heads,
    L, D) tensors as FourierAttentionFunction when eps = 0 and there is no
    dropout or mask, else as a batch of one."""

    def __init__(self, dim, R=1.0, per_axis=False, heads=None, phi=4, causal=False, learn_R=True,
                 denom_tol=None, threads=None, per_head=False, eps=1e-6, raw_R=False, layout="BHLD", dropout=0.0,
                 on_flagged="raise", empty="nan"):
        super().__init__()
        if per_axis:
            shape = (heads, dim) if heads else (dim,)
        else:
            shape = (heads,) if (per_head and heads) else ()
        if layout not in ("BHLD", "LBHD"):
            raise ValueError("gfi.torch.FourierAttention: layout must be 'BHLD' or 'LBHD', got %r" % (layout,))
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError("gfi.torch.FourierAttention: dropout must be in [0, 1), got %r" % (dropout,))
        if on_flagged not in _ON_FLAGGED:
            raise ValueError("gfi.torch.FourierAttention: on_flagged must be one of %s" % (_ON_FLAGGED,))
        self.raw_R = bool(raw_R)
        if self.raw_R:
            self.R_raw = torch.nn.Parameter(torch.full(shape, float(R), dtype=torch.float64), requires_grad=learn_R)
        else:
            if not R > 0:
                raise ValueError("gfi.torch.FourierAttention: R must be > 0 (raw_R=True for a raw radius), got %r"
                                 % (R,))
            init = torch.full(shape, float(np.log(R)), dtype=torch.float64)
            self.log_R = torch.nn.Parameter(init, requires_grad=learn_R)
        self.dim, self.per_axis, self.heads, self.per_head = dim, bool(per_axis), heads, bool(per_head)
        self.phi, self.causal, self.denom_tol, self.threads, self.eps = phi, causal, denom_tol, threads, eps
        self.layout, self.dropout, self.on_flagged, self.empty = layout, float(dropout), on_flagged, empty
        self._register_load_state_dict_pre_hook(self._load_raw_R)

    def _param(self):
        return self.R_raw if self.raw_R else self.log_R

    def _load_raw_R(self, state_dict, prefix, *args):
        """A state dict with FourierFormer's raw `R` (any sign) loads into
        log_R (log|R|) or R_raw; its size must match the radius's."""
        key, mine = prefix + "R", prefix + ("R_raw" if self.raw_R else "log_R")
        if key not in state_dict or mine in state_dict:
            return
        r = state_dict.pop(key)
        p = self._param()
        if r.numel() != p.numel():
            raise ValueError("gfi.torch.FourierAttention: the state dict's %s has %d values, this module's radius "
                             "has shape %s" % (key, r.numel(), tuple(p.shape)))
        r = r.detach().to(p.dtype).reshape(p.shape)
        if not self.raw_R:
            if bool((r == 0).any()):
                raise errors.RadiusError(errors.GFI_ERADIUS, "gfi.torch.FourierAttention: the state dict's %s holds "
                                         "0 (every weight 1); log_R cannot represent it" % key, "R")
            r = r.abs().log()
        state_dict[mine] = r

    @property
    def R(self):
        return self.R_raw.abs() if self.raw_R else self.log_R.exp()

    def forward(self, Q, K, V, key_padding_mask=None, mask=None, seed=None):
        R = self.R_raw if self.raw_R else self.log_R.exp()
        p = self.dropout if self.training else 0.0
        if p > 0 and seed is None:
            seed = int(torch.randint(0, 2 ** 62, (1,)).item())
        if Q.dim() != 4 and (self.eps or p > 0 or key_padding_mask is not None or mask is not None):
            if self.layout != "BHLD":
                raise ValueError("gfi.torch.FourierAttention: (L, D) and (heads, L, D) inputs need layout 'BHLD'")
            lift = (lambda t: t[None, None]) if Q.dim() == 2 else (lambda t: t[None])
            out = self._batch(lift(Q), lift(K), lift(V), R, key_padding_mask, mask, p, seed)
            return out[0, 0] if Q.dim() == 2 else out[0]
        if Q.dim() == 4:
            return self._batch(Q, K, V, R, key_padding_mask, mask, p, seed)
        R = R.abs()
        if R.dim() == 1 and not self.per_axis:
            R = R[:, None]  # one radius per head: (heads, 1)
        return FourierAttentionFunction.apply(Q, K, V, R, self.phi, self.causal, self.denom_tol, self.threads)

    def _batch(self, Q, K, V, R, key_padding_mask, mask, p, seed):
        cdt = _compute_dtype(Q, K, V)
        return FourierAttentionBatchFunction.apply(Q, K, V, R.to(cdt), self.phi, self.causal, key_padding_mask,
                                                   mask, self.eps, self.empty, self.threads, self.layout,
                                                   self.on_flagged, self.per_axis and R.dim() == 1, p, seed)

    def extra_repr(self):
        return "R shape=%s (%s), phi=z^%s, causal=%s, eps=%g, dropout=%g, layout=%s" % (
            tuple(self._param().shape), "raw" if self.raw_R else "log", self.phi, self.causal, self.eps,
            self.dropout, self.layout)


def fourier_attention_reference(Q, K, V, R, l=4, causal=False):
    """FourierFormer eq. 15 in plain PyTorch, O(L^2 D) memory: the weights
    w_ij = prod_d sinc(R_d (q_id - k_jd))^l, H = w V / w 1. Differentiable by
    autograd. Q, K: (..., L, D); R: scalar, (D,) or (heads, D)."""
    R = torch.as_tensor(R, dtype=Q.dtype)
    if R.dim() == 2:
        R = R[:, None, None, :]
    u = (Q.unsqueeze(-2) - K.unsqueeze(-3)) * R  # (..., L, L, D)
    s = torch.sinc(u / np.pi)  # torch.sinc(x) = sin(pi x) / (pi x)
    w = (s ** l).prod(dim=-1)
    if causal:
        L = Q.shape[-2]
        w = w * torch.tril(torch.ones(L, L, dtype=w.dtype))
    return (w @ V) / w.sum(dim=-1, keepdim=True)
