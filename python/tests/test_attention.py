"""Attention: the CLI's bits (forward and gradients, heads), gradients against
finite differences, and the PyTorch op (gradcheck, FourierFormer's formula)."""
import os

import numpy as np
import pytest

import gfi
from conftest import bits_equal


def qkv(heads, L, D, Dv, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(heads, L, D)), rng.normal(size=(heads, L, D)), rng.normal(size=(heads, L, Dv)))


def side_by_side(a):
    """(heads, L, D) -> the CLI's L x (heads * D)."""
    return np.ascontiguousarray(a.transpose(1, 0, 2).reshape(a.shape[1], -1))


@pytest.mark.parametrize("R,causal", [("1.3", False), ("0.9,1.4,1.1", True), ("1,2,3,1.5,0.5,1.2", False)])
def test_fourier_heads_equal_cli(cli, npy, tmp_path, R, causal):
    heads, L, D, Dv = 2, 17, 3, 2
    Q, K, V = qkv(heads, L, D, Dv)
    dH = np.random.default_rng(9).normal(size=(heads, L, Dv))
    pre = str(tmp_path / "g")
    args = ["attention", "--q", npy(side_by_side(Q)), "--k", npy(side_by_side(K)), "--v", npy(side_by_side(V)),
            "--heads", heads, "--R", R, "--l", 4, "--grad", pre, "--grad-npy", "--dh", npy(side_by_side(dH)),
            "--out", tmp_path / "H.npy"]
    cli(*(args + (["--causal"] if causal else [])))
    Rv = np.array([float(v) for v in R.split(",")])
    Rp = Rv[0] if Rv.size == 1 else (Rv if Rv.size == D else Rv.reshape(heads, D))
    H, ctx = gfi.fourier_attention(Q, K, V, Rp, phi=4, causal=causal, return_context=True)
    assert bits_equal(side_by_side(H), np.load(tmp_path / "H.npy"))
    dQ, dK, dV, dR = gfi.fourier_attention_backward(ctx, dH)
    assert bits_equal(side_by_side(dQ), np.load(pre + ".dQ.npy"))
    assert bits_equal(side_by_side(dK), np.load(pre + ".dK.npy"))
    assert bits_equal(side_by_side(dV), np.load(pre + ".dV.npy"))
    assert np.allclose(np.reshape(dR, -1), np.load(pre + ".dR.npy").reshape(-1), rtol=1e-14, atol=0)
    if Rv.size == heads * D:
        assert bits_equal(np.reshape(dR, -1), np.load(pre + ".dR.npy").reshape(-1))


def test_softmax_equal_cli_and_numpy(cli, npy, tmp_path):
    L, D, Dv = 12, 4, 3
    Q, K, V = (a[0] for a in qkv(1, L, D, Dv, seed=4))
    pre = str(tmp_path / "g")
    cli("attention", "--kind", "softmax", "--q", npy(Q), "--k", npy(K), "--v", npy(V), "--grad", pre, "--grad-npy",
        "--out", tmp_path / "H.npy")
    H = gfi.softmax_attention(Q, K, V)
    assert bits_equal(H, np.load(tmp_path / "H.npy"))
    dQ, dK, dV = gfi.softmax_attention_backward(Q, K, V, np.ones((L, Dv)))
    assert bits_equal(dQ, np.load(pre + ".dQ.npy")) and bits_equal(dK, np.load(pre + ".dK.npy"))
    assert bits_equal(dV, np.load(pre + ".dV.npy"))
    S = Q @ K.T / np.sqrt(D)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    assert np.max(np.abs(H - (P / P.sum(axis=1, keepdims=True)) @ V)) < 1e-13


def test_fourier_gradient_finite_differences():
    Q, K, V = (a[0] for a in qkv(1, 7, 2, 2, seed=3))
    R = np.array([1.1, 0.8])
    dH = np.random.default_rng(1).normal(size=(7, 2))
    H, ctx = gfi.fourier_attention(Q, K, V, R, return_context=True)
    dQ, dK, dV, dR = gfi.fourier_attention_backward(ctx, dH)
    f = lambda R_: np.sum(dH * gfi.fourier_attention(Q, K, V, R_))
    h = 1e-6
    for d in range(2):
        e = np.zeros(2)
        e[d] = h
        assert abs((f(R + e) - f(R - e)) / (2 * h) - dR[d]) < 1e-7


def test_bad_input_attention():
    Q, K, V = (a[0] for a in qkv(1, 5, 2, 2))
    with pytest.raises(gfi.DimensionError) as e:
        gfi.fourier_attention(Q, K[:4], V, 1.0)
    assert e.value.param == "K"
    with pytest.raises(gfi.DimensionError) as e:
        gfi.fourier_attention(Q, K, V[:, :, None], 1.0)
    with pytest.raises(gfi.RadiusError) as e:
        gfi.fourier_attention(Q, K, V, -1.0)
    assert e.value.param == "R"
    with pytest.raises(gfi.DimensionError) as e:
        gfi.fourier_attention(Q, K, V, [1.0, 2.0, 3.0])
    assert e.value.param == "R"
    with pytest.raises(gfi.OrderError):
        gfi.fourier_attention(Q, K, V, 1.0, phi=0)
    Qn = Q.copy()
    Qn[2, 1] = np.nan
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.fourier_attention(Qn, K, V, 1.0)
    assert e.value.param == "Q"
    H, ctx = gfi.fourier_attention(Q, K, V, 1.0, return_context=True)
    with pytest.raises(gfi.DimensionError):
        gfi.fourier_attention_backward(ctx, np.ones((5, 3)))
    with pytest.raises(gfi.BandwidthError) as e:
        gfi.softmax_attention(Q, K, V, scale=0)
    assert e.value.param == "scale"
    with pytest.raises(gfi.NonFiniteError):
        gfi.softmax_attention_backward(Q, K, V, np.full((5, 2), np.inf))


def test_torch_op():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: gfi.torch is not tested (optional)")
    import gfi.torch as gt
    torch.manual_seed(0)
    for shape_R, causal in [((), False), ((3,), True), ((2, 3), False)]:
        heads = 2
        Q = torch.randn(heads, 6, 3, dtype=torch.float64, requires_grad=True)
        K = torch.randn(heads, 6, 3, dtype=torch.float64, requires_grad=True)
        V = torch.randn(heads, 6, 2, dtype=torch.float64, requires_grad=True)
        R = (0.8 + torch.rand(shape_R, dtype=torch.float64)).requires_grad_()
        f = lambda Q, K, V, R: gt.FourierAttentionFunction.apply(Q, K, V, R, 4, causal)
        assert torch.autograd.gradcheck(f, (Q, K, V, R), eps=1e-6, atol=1e-8)
        ref = gt.fourier_attention_reference(Q, K, V, R, 4, causal)
        assert (f(Q, K, V, R) - ref).abs().max().item() < 1e-13
        # gradients equal autograd through the reference formula
        g = torch.randn(heads, 6, 2, dtype=torch.float64)
        a = torch.autograd.grad((f(Q, K, V, R) * g).sum(), (Q, K, V, R))
        b = torch.autograd.grad((ref * g).sum(), (Q, K, V, R))
        assert all((x - y).abs().max().item() < 1e-11 for x, y in zip(a, b))
    m = gt.FourierAttention(3, R=1.5, per_axis=True)
    Q2 = torch.randn(8, 3, dtype=torch.float64)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    loss = m(Q2, Q2, torch.randn(8, 2, dtype=torch.float64)).pow(2).sum()
    loss.backward()
    assert m.log_R.grad is not None and m.log_R.grad.shape == (3,)
    opt.step()
    assert torch.all(m.R > 0)


def test_values_near_the_top_of_the_range():
    """V = 1e308: the library scales V by a power of two inside the call
    (single sequence, softmax, batched, float32), so H = V and the gradients
    are finite; a row whose H does not fit a double (odd l: |H| can exceed
    max|v|) is flagged (NaN), never an infinity."""
    z = np.zeros((4, 2))
    V = np.full((4, 2), 1e308)
    H, ctx = gfi.fourier_attention(z, z, V, 1.0, return_context=True)
    assert (H == 1e308).all()
    assert all(np.isfinite(g).all() for g in gfi.fourier_attention_backward(ctx, np.ones((4, 2))))
    q = z + 0.1
    assert (gfi.softmax_attention(q, z, V) == 1e308).all()
    assert all(np.isfinite(g).all() for g in gfi.softmax_attention_backward(q, z, V, np.ones((4, 2))))
    for dt in (np.float64, np.float32):
        big = 1e308 if dt == np.float64 else 3e38
        Hb, cb = gfi.fourier_attention_batch(z[None, None].astype(dt), z[None, None].astype(dt),
                                             np.full((1, 1, 4, 2), big, dt), dt(2.0), return_context=True)
        assert np.allclose(Hb, big, rtol=1e-6) and np.isfinite(Hb).all()
        assert all(np.isfinite(g).all() for g in gfi.fourier_attention_batch_backward(cb, np.ones((1, 1, 4, 2), dt)))
    # l = 1: weights 1 and sinc(4.4934) = -0.2172: |H| = 1.7e308 x 1.2172 / 0.7828 overflows: a flagged row
    Q = np.zeros((1, 1, 1, 1))
    K = np.array([0.0, 4.4934]).reshape(1, 1, 2, 1)
    Vo = np.array([1.7e308, -1.7e308]).reshape(1, 1, 2, 1)
    Ho, co = gfi.fourier_attention_batch(Q, K, Vo, 1.0, phi=1, return_context=True)
    assert np.isnan(Ho).all() and co.nflagged == 1 and not np.isinf(Ho).any()
