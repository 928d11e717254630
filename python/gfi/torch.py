"""PyTorch face of gfi's Fourier attention (CPU tensors).

  FourierAttentionFunction  a torch.autograd.Function over gfi's forward and
                            exact backward (include/gfi/attention.h)
  FourierAttentionBatchFunction  the batched op: (B, H, L, D) or (L, B, H, D)
                            tensors, float32/float64 (float16/bfloat16
                            computed in float32), masks, memory keys, +eps,
                            raw radii of any sign, attention dropout
                            (gfi.fourier_attention_batch)
  FourierAttention          an nn.Module with a learnable radius (one, per
                            head, or per axis), parametrised by log R (or
                            FourierFormer's raw R), eps = 1e-6 by default
  FourierMultiheadAttention torch.nn.MultiheadAttention's signature with
                            Fourier attention: a one-line swap
  FlaggedRowsWarning        NaN rows of H with on_flagged="warn" (the
                            default "raises gfi.DenominatorError": never a
                            silent NaN)
  fourier_attention_reference  FourierFormer's formula in plain PyTorch (the
                            O(L^2 D) reference of the tests)

Import it explicitly (`import gfi.torch`); it needs PyTorch, gfi does not.
(L, D) and (heads, L, D) tensors are computed in float64 (float64 CPU
tensors that are contiguous go to gfi without a copy; others are converted,
and the results converted back to the input's dtype). (B, H, L, D) tensors
go to the batched engine in their own dtype when it is float32 or float64
(contiguous CPU tensors without a copy), float16/bfloat16 in float32, other
dtypes in float64. docs/attention.md ("using gfi in FourierFormer's code")
shows the adapter for FourierFormer's training code.
"""
import warnings

import numpy as np
import torch

from . import errors

from .attention import (fourier_attention, fourier_attention_backward, fourier_attention_batch,
                        fourier_attention_batch_backward)

__all__ = ["FourierAttentionFunction", "FourierAttentionBatchFunction", "FourierAttention",
           "FourierMultiheadAttention", "FlaggedRowsWarning", "fourier_attention_reference"]


def _np(t):
    if t.device.type != "cpu":
        raise ValueError("gfi.torch: tensors must be on the CPU, got %s" % t.device)
    return t.detach().to(torch.float64).contiguous().numpy()


class FourierAttentionFunction(torch.autograd.Function):
    """H = FourierAttentionFunction.apply(Q, K, V, R, phi=4, causal=False, denom_tol=None, threads=None,
    on_flagged="raise").

    Q, K: (L, D) or (heads, L, D); V: (L, Dv) or (heads, L, Dv); R a tensor
    with one radius, D radii (per axis) or (heads, D). Gradients for Q, K, V
    and R (dR has R's shape). Flagged rows (NaN: the sum of weights vanished
    or cancelled) raise gfi.DenominatorError, or with on_flagged="warn" a
    FlaggedRowsWarning ("ignore": returned as NaN)."""

    @staticmethod
    def forward(ctx, Q, K, V, R, phi=4, causal=False, denom_tol=None, threads=None, on_flagged=None):
        H, c = fourier_attention(_np(Q), _np(K), _np(V), _np(R), phi=phi, causal=causal, denom_tol=denom_tol,
                                 threads=threads, return_context=True)
        on_flagged = on_flagged or "raise"
        if on_flagged not in _ON_FLAGGED:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "on_flagged must be 'raise', 'warn' or 'ignore', got %r"
                                         % (on_flagged,), "on_flagged")
        nf = np.atleast_1d(c.nflagged)
        if nf.sum() and on_flagged != "ignore":
            h = int(np.argmax(nf > 0))
            msg = ("gfi.torch: %d rows of the attention output are NaN (first in head %d): the sum of weights "
                   "vanished or cancelled; a batched call with eps > 0 (FourierFormer's 1e-6) defines every row "
                   "that sees a key; on_flagged='warn' or 'ignore' returns the NaN rows" % (int(nf.sum()), h))
            if on_flagged == "warn":
                warnings.warn(msg, FlaggedRowsWarning, stacklevel=3)
            else:
                raise errors.DenominatorError(errors.GFI_EDENOM, msg, "eps")
        ctx.gfi = c
        ctx.save_for_backward(Q, K, V, R)  # torch's version counters catch in-place changes before backward
        return torch.from_numpy(H).to(Q.dtype)

    @staticmethod
    def backward(ctx, dH):
        Q, K, V, R = ctx.saved_tensors
        dQ, dK, dV, dR = fourier_attention_backward(ctx.gfi, _np(dH))
        out = [torch.from_numpy(np.ascontiguousarray(a)).to(t.dtype).reshape(t.shape)
               for a, t in ((dQ, Q), (dK, K), (dV, V), (np.asarray(dR), R))]
        return (*out, None, None, None, None, None)


def _np_as(t, dt):
    if t.device.type != "cpu":
        raise ValueError("gfi.torch: tensors must be on the CPU, got %s" % t.device)
    return t.detach().to(dt).contiguous().numpy()


def _np_rows(t, dt):
    """A tensor as numpy without a copy when it is of the dtype with a
    contiguous last axis (a view such as a chunk of a fused q/k/v projection
    is read by gfi through its strides); else a contiguous copy."""
    if t.device.type != "cpu":
        raise ValueError("gfi.torch: tensors must be on the CPU, got %s" % t.device)
    t = t.detach().to(dt)
    if t.dim() and t.stride(-1) == 1 and all(x >= 0 for x in t.stride()) and t.numel():
        return t.numpy()
    return t.contiguous().numpy()


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
    [len, batch, head, dim]); tensors of the compute dtype whose last axis
    is contiguous go to gfi without a copy, strided views (the chunks of a
    fused q/k/v projection) included.
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
        H, c = fourier_attention_batch(_np_rows(Q, tdt), _np_rows(K, tdt), _np_rows(V, tdt), _np_as(Rt.abs(), tdt),
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
    4), or a polynomial: "poly:a1,..,ad" or the coefficients (a1, .., ad) of
    phi(z) = sum_k a_k z^k, of either sign (gfi.attention.attention_kernel;
    a slower float64 per-pair engine, also for float32 tensors); causal: row i sees keys j <= i (with (B, H, L, D) inputs, j <= i +
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
        return FourierAttentionFunction.apply(Q, K, V, R, self.phi, self.causal, self.denom_tol, self.threads,
                                              self.on_flagged)

    def _batch(self, Q, K, V, R, key_padding_mask, mask, p, seed):
        cdt = _compute_dtype(Q, K, V)
        return FourierAttentionBatchFunction.apply(Q, K, V, R.to(cdt), self.phi, self.causal, key_padding_mask,
                                                   mask, self.eps, self.empty, self.threads, self.layout,
                                                   self.on_flagged, self.per_axis and R.dim() == 1, p, seed)

    def extra_repr(self):
        phi = "z^%d" % self.phi if isinstance(self.phi, int) else repr(self.phi)
        return "R shape=%s (%s), phi=%s, causal=%s, eps=%g, dropout=%g, layout=%s" % (
            tuple(self._param().shape), "raw" if self.raw_R else "log", phi, self.causal, self.eps,
            self.dropout, self.layout)


def _bool_mask(m, name):
    """A torch mask as bool (True = excluded): bool as it is; a float mask
    (torch's additive form) only of 0 and -inf, -inf = excluded."""
    if m is None:
        return None
    if m.dtype == torch.bool:
        return m
    if m.is_floating_point():
        ok = (m == 0) | (m == float("-inf"))
        if not bool(ok.all()):
            raise ValueError("gfi.torch.FourierMultiheadAttention: %s: a float mask must hold only 0 and -inf "
                             "(Fourier weights are not logits: an additive mask has no meaning); use a bool mask"
                             % name)
        return m == float("-inf")
    return m != 0


class FourierMultiheadAttention(torch.nn.Module):
    """torch.nn.MultiheadAttention with Fourier attention (FourierFormer eq.
    15) in place of softmax: the same constructor, forward signature, shapes,
    masks and parameter names (in_proj_weight / q_proj_weight, ...,
    in_proj_bias, out_proj), so a transformer's attention swaps with one
    line, e.g. layer.self_attn = FourierMultiheadAttention(d_model, nhead,
    dropout=..., batch_first=...) in nn.TransformerEncoderLayer.

    FourierMultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True,
    add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None,
    batch_first=False, device=None, dtype=None, *, R=1.0, per_axis=False,
    per_head=False, eps=1e-6, phi=4, on_flagged="raise", empty="zero")

    forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False) -> (output,
    weights or None), as nn.MultiheadAttention: (L, N, E) inputs ((N, L, E)
    with batch_first, (L, E) unbatched); key_padding_mask (N, S) and
    attn_mask (L, S) or (N num_heads, L, S) (equal across the heads of a
    batch row: Fourier attention's masks are per batch row), bool (True =
    excluded) or float with only 0 and -inf. The weights returned with
    need_weights are the normalised w_ij / (sum_j w_ij + eps) after dropout,
    (N, L, S) averaged over heads or (N, num_heads, L, S) (an (L, S) matrix
    per head: for short sequences; the output itself never forms one).

    What differs from softmax attention: the radius R (learnt as log R; one,
    one per head with per_head, or per head and axis with per_axis) sets the
    kernel's scale instead of 1/sqrt(head_dim) (q is not scaled); eps = 1e-6
    as FourierFormer's code; dropout acts inside the op on the normalised
    weights (a counter-based mask, regenerated by the backward); rows that
    see no key are zeros (empty="zero", as softmax gives NaN there, this is
    the choice of FourierFormer's 0 / (0 + eps)); add_bias_kv and
    add_zero_attn are not supported (ValueError). _qkv_same_embed_dim is
    reported False so that torch's fused encoder fast path (which would run
    softmax attention on these weights in inference) is never taken. The
    float32/float64 dtype of the inputs is kept; float16/bfloat16 computed in
    float32. (L, N, E) inputs reach gfi without a permute (the (L, N, H,
    head_dim) layout); batch_first inputs are permuted once. A state dict
    of nn.MultiheadAttention loads as it is (load_state_dict, strict): the
    projections are taken, the radius (attn.log_R) keeps its value."""

    _qkv_same_embed_dim = False  # not torch's fused path: see the docstring

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None, *, R=1.0, per_axis=False,
                 per_head=False, eps=1e-6, phi=4, on_flagged="raise", empty="zero"):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise ValueError("gfi.torch.FourierMultiheadAttention: add_bias_kv and add_zero_attn are not supported")
        if embed_dim % num_heads:
            raise ValueError("gfi.torch.FourierMultiheadAttention: embed_dim (%d) must be divisible by num_heads (%d)"
                             % (embed_dim, num_heads))
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError("gfi.torch.FourierMultiheadAttention: dropout must be in [0, 1), got %r" % (dropout,))
        fk = {"device": device, "dtype": dtype}
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, float(dropout), \
            batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.head_dim = embed_dim // num_heads
        self.same_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self.same_dim:
            self.in_proj_weight = torch.nn.Parameter(torch.empty(3 * embed_dim, embed_dim, **fk))
        else:
            self.q_proj_weight = torch.nn.Parameter(torch.empty(embed_dim, embed_dim, **fk))
            self.k_proj_weight = torch.nn.Parameter(torch.empty(embed_dim, self.kdim, **fk))
            self.v_proj_weight = torch.nn.Parameter(torch.empty(embed_dim, self.vdim, **fk))
        self.in_proj_bias = torch.nn.Parameter(torch.empty(3 * embed_dim, **fk)) if bias else None
        self.out_proj = torch.nn.Linear(embed_dim, embed_dim, bias=bias, **fk)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self.attn = FourierAttention(self.head_dim, R=R, per_axis=per_axis, heads=num_heads if (per_axis or per_head)
                                     else None, per_head=per_head, phi=phi, eps=eps, layout="LBHD", dropout=dropout,
                                     on_flagged=on_flagged, empty=empty)
        self._reset_parameters()
        self._register_load_state_dict_pre_hook(self._keep_radius)

    def _keep_radius(self, state_dict, prefix, *args):
        """An nn.MultiheadAttention state dict (no radius) loads as it is:
        the radius keeps its current value."""
        for name, p in self.attn.named_parameters():
            state_dict.setdefault(prefix + "attn." + name, p.detach().clone())

    def _reset_parameters(self):  # as nn.MultiheadAttention
        if self.same_dim:
            torch.nn.init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                torch.nn.init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            torch.nn.init.constant_(self.in_proj_bias, 0.0)
            torch.nn.init.constant_(self.out_proj.bias, 0.0)

    def _proj(self, x, k):
        E = self.embed_dim
        if self.same_dim:
            w = self.in_proj_weight[k * E:(k + 1) * E]
        else:
            w = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[k]
        b = None if self.in_proj_bias is None else self.in_proj_bias[k * E:(k + 1) * E]
        return torch.nn.functional.linear(x, w, b)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        L, N, _ = query.shape
        S = key.shape[0]
        Hh, hd = self.num_heads, self.head_dim
        q = self._proj(query, 0).reshape(L, N, Hh, hd)
        k = self._proj(key, 1).reshape(S, N, Hh, hd)
        v = self._proj(value, 2).reshape(S, N, Hh, hd)
        kp = _bool_mask(key_padding_mask, "key_padding_mask")
        am = _bool_mask(attn_mask, "attn_mask")
        if is_causal and am is None:
            am = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1 + S - L)
        if am is not None and am.dim() == 3:
            if am.shape != (N * Hh, L, S):
                raise ValueError("gfi.torch.FourierMultiheadAttention: attn_mask has shape %s, expected (%d, %d) or "
                                 "(%d, %d, %d)" % (tuple(am.shape), L, S, N * Hh, L, S))
            am4 = am.reshape(N, Hh, L, S)
            if not bool((am4 == am4[:, :1]).all()):
                raise ValueError("gfi.torch.FourierMultiheadAttention: a 3-D attn_mask must be equal across the "
                                 "heads of a batch row (masks are per batch row)")
            am = am4[:, 0]
        seed = None
        if self.training and self.dropout > 0:
            seed = int(torch.randint(0, 2 ** 62, (1,)).item())
        out = self.attn(q, k, v, key_padding_mask=kp, mask=am, seed=seed)  # (L, N, H, hd)
        out = self.out_proj(out.reshape(L, N, self.embed_dim))
        weights = None
        if need_weights:
            # the normalised weights: the same op on V = identity (one column per key)
            eye = torch.eye(S, dtype=q.dtype).reshape(S, 1, 1, S).expand(S, N, Hh, S).contiguous()
            w = self.attn(q, k, eye, key_padding_mask=kp, mask=am, seed=seed)  # (L, N, H, S)
            weights = w.permute(1, 2, 0, 3)
            if average_attn_weights:
                weights = weights.mean(1)
            if unbatched:
                weights = weights[0]
        if unbatched:
            out = out[:, 0]
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights


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
