"""PyTorch face of gfi's Fourier attention (CPU tensors).

  FourierAttentionFunction  a torch.autograd.Function over gfi's forward and
                            exact backward (include/gfi/attention.h)
  FourierAttention          an nn.Module with a learnable radius (one, or one
                            per axis), parametrised by log R so that R > 0
  fourier_attention_reference  FourierFormer's formula in plain PyTorch (the
                            O(L^2 D) reference of the tests)

Import it explicitly (`import gfi.torch`); it needs PyTorch, gfi does not.
Tensors are computed in float64: float64 CPU tensors that are contiguous go
to gfi without a copy; others are converted (and the results converted back
to the input's dtype).
"""
import numpy as np
import torch

from .attention import fourier_attention, fourier_attention_backward

__all__ = ["FourierAttentionFunction", "FourierAttention", "fourier_attention_reference"]


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


class FourierAttention(torch.nn.Module):
    """Fourier attention layer: forward(Q, K, V) -> H with a learnable radius.

    dim: D (the query/key width); R: the initial radius; per_axis: one
    radius per axis (eq. 54) instead of one; heads: with per_axis, a radius
    per head and axis (inputs (heads, L, D)); phi: l of phi = z^l (default 4);
    causal: row i sees keys j <= i. The radius is exp(log_R), log_R the
    parameter, so it stays positive under any optimiser step."""

    def __init__(self, dim, R=1.0, per_axis=False, heads=None, phi=4, causal=False, learn_R=True,
                 denom_tol=None, threads=None):
        super().__init__()
        shape = ((heads, dim) if heads else (dim,)) if per_axis else ()
        init = torch.full(shape, float(np.log(R)), dtype=torch.float64)
        self.log_R = torch.nn.Parameter(init, requires_grad=learn_R)
        self.phi, self.causal, self.denom_tol, self.threads = phi, causal, denom_tol, threads

    @property
    def R(self):
        return self.log_R.exp()

    def forward(self, Q, K, V):
        return FourierAttentionFunction.apply(Q, K, V, self.log_R.exp(), self.phi, self.causal, self.denom_tol,
                                              self.threads)

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
