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
import numpy as np
import torch

from .attention import (fourier_attention, fourier_attention_backward, fourier_attention_batch,
                        fourier_attention_batch_backward)

__all__ = ["FourierAttentionFunction", "FourierAttentionBatchFunction", "FourierAttention",
           "fourier_attention_reference"]


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


class FourierAttentionBatchFunction(torch.autograd.Function):
    """H = FourierAttentionBatchFunction.apply(Q, K, V, R, phi, causal,
    key_padding_mask, mask, eps, empty, threads) (positional; None for the
    defaults).

    Q: (B, H, Lq, D), K: (B, H, Lk, D), V: (B, H, Lk, Dv), float32 or
    float64 (computed in that dtype; others in float64); R: a scalar tensor,
    (H,) or (H, D). key_padding_mask: (B, Lk) bool, True = padded; mask:
    (Lq, Lk) or (B or 1, Lq, Lk) bool, True = excluded. Gradients for Q, K,
    V and R (dR has R's shape and dtype)."""

    @staticmethod
    def forward(ctx, Q, K, V, R, phi=4, causal=False, key_padding_mask=None, mask=None, eps=0.0, empty="nan",
                threads=None):
        tdt = Q.dtype if Q.dtype in (torch.float32, torch.float64) and K.dtype == Q.dtype and V.dtype == Q.dtype \
            else torch.float64
        H, c = fourier_attention_batch(_np_as(Q, tdt), _np_as(K, tdt), _np_as(V, tdt), _np_as(R, tdt),
                                       phi=4 if phi is None else phi, causal=bool(causal),
                                       key_padding_mask=_mask_np(key_padding_mask), mask=_mask_np(mask),
                                       eps=0.0 if eps is None else eps, empty=empty or "nan", threads=threads,
                                       return_context=True)
        ctx.gfi, ctx.tdt = c, tdt
        ctx.save_for_backward(Q, K, V, R)
        return torch.from_numpy(H).to(Q.dtype)

    @staticmethod
    def backward(ctx, dH):
        Q, K, V, R = ctx.saved_tensors
        dQ, dK, dV, dR = fourier_attention_batch_backward(ctx.gfi, _np_as(dH, ctx.tdt))
        out = [torch.from_numpy(np.ascontiguousarray(a)).to(t.dtype).reshape(t.shape)
               for a, t in ((dQ, Q), (dK, K), (dV, V), (np.asarray(dR), R))]
        return (*out, None, None, None, None, None, None, None)


class FourierAttention(torch.nn.Module):
    """Fourier attention layer: forward(Q, K, V) -> H with a learnable radius.

    dim: D (the query/key width); R: the initial radius; per_axis: one
    radius per axis (eq. 54) instead of one; heads: with per_axis, a radius
    per head and axis (inputs (heads, L, D) or (B, heads, L, D)); with
    per_head (and heads), one radius per head; phi: l of phi = z^l (default
    4); causal: row i sees keys j <= i (with (B, H, L, D) inputs, j <= i +
    Lk - Lq); eps: FourierFormer's +eps in the denominator ((B, H, L, D)
    inputs only). The radius is exp(log_R), log_R the parameter, so it stays
    positive under any optimiser step.

    forward(Q, K, V, key_padding_mask=None, mask=None): (L, D) / (heads, L, D)
    tensors as FourierAttentionFunction (no masks), (B, H, L, D) tensors as
    FourierAttentionBatchFunction (float32 stays float32)."""

    def __init__(self, dim, R=1.0, per_axis=False, heads=None, phi=4, causal=False, learn_R=True,
                 denom_tol=None, threads=None, per_head=False, eps=0.0):
        super().__init__()
        if per_axis:
            shape = (heads, dim) if heads else (dim,)
        else:
            shape = (heads,) if (per_head and heads) else ()
        init = torch.full(shape, float(np.log(R)), dtype=torch.float64)
        self.log_R = torch.nn.Parameter(init, requires_grad=learn_R)
        self.phi, self.causal, self.denom_tol, self.threads, self.eps = phi, causal, denom_tol, threads, eps

    @property
    def R(self):
        return self.log_R.exp()

    def forward(self, Q, K, V, key_padding_mask=None, mask=None):
        R = self.log_R.exp()
        if Q.dim() == 4:
            if R.dim() == 1 and R.shape[0] == Q.shape[-1] and R.shape[0] != Q.shape[1]:
                R = R.expand(Q.shape[1], -1)  # per axis, shared by the heads
            return FourierAttentionBatchFunction.apply(Q, K, V, R.to(Q.dtype), self.phi, self.causal,
                                                       key_padding_mask, mask, self.eps, None, self.threads)
        if key_padding_mask is not None or mask is not None:
            raise ValueError("gfi.torch.FourierAttention: masks need (B, H, L, D) inputs")
        if R.dim() == 1 and self.log_R.shape != (Q.shape[-1],):
            R = R[:, None]  # one radius per head: (heads, 1)
        return FourierAttentionFunction.apply(Q, K, V, R, self.phi, self.causal, self.denom_tol, self.threads)

    def extra_repr(self):
        return "R shape=%s, phi=z^%s, causal=%s" % (tuple(self.log_R.shape), self.phi, self.causal)


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
