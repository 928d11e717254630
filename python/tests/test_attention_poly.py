"""Fourier attention with a polynomial phi (include/gfi/attention.h,
"Polynomial phi"): values against a numpy sum, a negative coefficient,
z^4 as a polynomial against phi=4, batched float64 and float32, gradients
by differences, the flat-top refused by name, and the PyTorch ops
(gradcheck in float64) and module."""
import numpy as np
import pytest

import gfi
from gfi.attention import (attention_kernel, fourier_attention, fourier_attention_backward,
                           fourier_attention_batch, fourier_attention_batch_backward)


def ref(Q, K, V, R, a, causal=False):
    """H from prod_d phi(sinc(R_d (q_d - k_d))), phi(z) = sum_k a_k z^(k+1); (L, D) arrays."""
    u = (Q[:, None, :] - K[None, :, :]) * np.asarray(R, dtype=float)
    s = np.sinc(u / np.pi)
    phi = sum(c * s ** (j + 1) for j, c in enumerate(a))
    w = phi.prod(-1)
    if causal:
        w = np.tril(w)
    return (w @ V) / w.sum(1, keepdims=True)


def data(L=9, D=3, Dv=2, seed=0):
    r = np.random.default_rng(seed)
    return r.normal(scale=0.7, size=(L, D)), r.normal(scale=0.7, size=(L, D)), r.normal(size=(L, Dv))


@pytest.mark.parametrize("a", [[0.5, 0, 1], [1, -0.6, 0, 0.3], "poly:0.5,0,1"])
def test_values_against_numpy(a):
    Q, K, V = data()
    coefs = [0.5, 0, 1] if isinstance(a, str) else a
    for R, causal in ((1.2, False), ([0.8, 1.1, 1.4], True)):
        H = fourier_attention(Q, K, V, R, phi=a, causal=causal)
        np.testing.assert_allclose(H, ref(Q, K, V, R, coefs, causal), rtol=1e-12, atol=1e-13)


def test_power_as_polynomial():
    Q, K, V = data(L=20, D=4, seed=3)
    for l in (1, 2, 4, 7):
        a = [0] * (l - 1) + [1]
        h1 = fourier_attention(Q, K, V, [0.9, 1.0, 1.1, 1.2], phi=l)
        h2 = fourier_attention(Q, K, V, [0.9, 1.0, 1.1, 1.2], phi=a)
        assert np.nanmax(np.abs(h1 - h2)) <= 1e-13 * np.nanmax(np.abs(h1))


def test_gradients_by_differences():
    Q, K, V = data(L=7, D=2, Dv=2, seed=5)
    a = [1, -0.6, 0, 0.3]
    R = np.array([1.1, 0.7])
    dH = np.random.default_rng(9).normal(size=(7, 2))
    H, ctx = fourier_attention(Q, K, V, R, phi=a, return_context=True)
    g = fourier_attention_backward(ctx, dH)
    loss = lambda q, k, v, r: float((dH * fourier_attention(q, k, v, r, phi=a)).sum())
    args = [Q, K, V, R]
    for w in range(4):
        x = args[w]
        for idx in list(np.ndindex(x.shape))[::3]:
            h = 1e-6
            xp, xm = x.copy(), x.copy()
            xp[idx] += h
            xm[idx] -= h
            ap, am = list(args), list(args)
            ap[w], am[w] = xp, xm
            fd = (loss(*ap) - loss(*am)) / (2 * h)
            assert abs(fd - g[w][idx]) <= 1e-6 * (np.abs(g[w]).max() + 1)


def test_batch_float64_float32_masks():
    r = np.random.default_rng(11)
    B, H, Lq, Lk, D, Dv = 2, 2, 5, 7, 3, 2
    Q, K, V = r.normal(size=(B, H, Lq, D)), r.normal(size=(B, H, Lk, D)), r.normal(size=(B, H, Lk, Dv))
    kp = np.zeros((B, Lk), dtype=bool)
    kp[1, 3] = True
    a = [1, -0.6, 0, 0.3]
    out = fourier_attention_batch(Q, K, V, 0.9, phi=a, causal=True, key_padding_mask=kp)
    for b in range(B):
        for h in range(H):
            keep = ~kp[b]
            want = np.empty((Lq, Dv))
            for i in range(Lq):
                vis = keep & (np.arange(Lk) <= i + Lk - Lq)
                want[i] = ref(Q[b, h, i:i + 1], K[b, h][vis], V[b, h][vis], 0.9, a)[0]
            np.testing.assert_allclose(out[b, h], want, rtol=1e-12, atol=1e-13)
    f = [x.astype(np.float32) for x in (Q, K, V)]
    o32 = fourier_attention_batch(*f, np.float32(0.9), phi=a, causal=True, key_padding_mask=kp)
    assert o32.dtype == np.float32
    o64 = fourier_attention_batch(*[x.astype(np.float64) for x in f], float(np.float32(0.9)), phi=a, causal=True,
                                  key_padding_mask=kp)
    assert np.abs(o32 - o64).max() <= 2.0 ** -23 * np.abs(o64).max()
    Hh, ctx = fourier_attention_batch(Q, K, V, 0.9, phi=a, causal=True, key_padding_mask=kp, return_context=True)
    dQ, dK, dV, dR = fourier_attention_batch_backward(ctx, np.ones_like(Hh))
    assert np.isfinite(dQ).all() and np.isfinite(dK).all() and np.isfinite(dV).all() and np.isfinite(dR).all()


def test_refusals_by_name():
    Q, K, V = data()
    with pytest.raises(gfi.UnsupportedError) as e:
        fourier_attention(Q, K, V, 1.0, phi="flattop:0.5")
    assert e.value.param == "phi"
    with pytest.raises(gfi.Error) as e:
        fourier_attention(Q, K, V, 1.0, phi=[1, -1, 0, 0, 0, 0, 0, 0, 1])  # degree 9
    assert e.value.param == "phi"
    assert attention_kernel([0, 0, 1]).kind == 2 and attention_kernel([1, -1]).l == 2


def test_torch_gradcheck_and_module():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional)")
    import gfi.torch as gt
    g = torch.Generator().manual_seed(4)
    Q = torch.randn(1, 2, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
    K = torch.randn(1, 2, 6, 3, generator=g, dtype=torch.float64, requires_grad=True)
    V = torch.randn(1, 2, 6, 2, generator=g, dtype=torch.float64, requires_grad=True)
    R = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)
    a = [1, -0.6, 0, 0.3]
    F = gt.FourierAttentionBatchFunction.apply
    assert torch.autograd.gradcheck(lambda q, k, v, r: F(q, k, v, r, a, True), (Q, K, V, R), eps=1e-6, atol=1e-8)
    q2, k2, v2 = (t[0, 0, :5].detach().clone().requires_grad_() for t in (Q, K, V))
    F1 = gt.FourierAttentionFunction.apply
    assert torch.autograd.gradcheck(lambda q, k, v, r: F1(q, k, v, r, "poly:0.5,0,1"), (q2, k2, v2, R), eps=1e-6,
                                    atol=1e-8)
    m = gt.FourierAttention(3, R=1.0, phi=a, eps=0.0)
    h = m(Q.detach().float(), K.detach().float(), V.detach().float())
    h.sum().backward()
    assert torch.isfinite(m.log_R.grad).all()
    assert "phi=" in repr(m)


def test_docs_section_runs():
    import os
    import re
    root = os.environ.get("GFI_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
    text = open(os.path.join(root, "docs", "attention.md")).read()
    sec = text.split("## A polynomial phi", 1)
    assert len(sec) == 2, "docs/attention.md lacks the section"
    body = re.split(r"\n## ", sec[1], maxsplit=1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    assert blocks
    for b in blocks:
        exec(compile(b, "docs/attention.md", "exec"), {})
