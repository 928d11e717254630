"""Batched Fourier attention from Python (gfi.fourier_attention_batch): forward
and every gradient against a numpy brute force of FourierFormer's formula on
(B, H, Lq, Lk, D) tensors, every mask kind, Lq != Lk, each R granularity,
float32 against float64, rows that see no key, no copies of C-contiguous
inputs, and the PyTorch op (gradcheck in float64, float32 tensors)."""
import numpy as np
import pytest

import gfi


def brute(Q, K, V, R, dH, l=4, causal=False, kp=None, mask=None, eps=0.0, empty="nan"):
    """H and (dQ, dK, dV, dR) of sum(dH * H), float64, by the formula."""
    Q, K, V, dH = (np.asarray(a, np.float64) for a in (Q, K, V, dH))
    B, H, Lq, D = Q.shape
    Lk = K.shape[2]
    R = np.asarray(R, np.float64)
    Rhd = np.broadcast_to(R.reshape(-1, 1) if R.ndim == 1 else R, (H, D)) if R.ndim else np.full((H, D), float(R))
    X = Q[:, :, :, None, :] - K[:, :, None, :, :]  # B H Lq Lk D
    U = Rhd[None, :, None, None, :] * X
    S = np.sinc(U / np.pi)
    W = np.prod(S ** l, axis=-1)
    vis = np.ones((B, 1, Lq, Lk), bool)
    if causal:
        vis &= np.tril(np.ones((Lq, Lk), bool), Lk - Lq)[None, None]
    if kp is not None:
        vis &= ~np.asarray(kp, bool)[:, None, None, :]
    if mask is not None:
        m = np.asarray(mask, bool)
        vis &= ~(m[None] if m.ndim == 2 else m)[:, None]
    W = W * vis
    emp = np.broadcast_to(~vis.any(-1), (B, H, Lq))
    den = W.sum(-1) + eps
    den = np.where(emp, 1.0, den)
    Hh = (W @ V) / den[..., None]
    dV = np.swapaxes(W / den[..., None], -1, -2) @ dH
    dW = (dH @ np.swapaxes(V, -1, -2) - (dH * Hh).sum(-1, keepdims=True)) / den[..., None]
    dW = np.where(emp[..., None], 0.0, dW) * vis
    with np.errstate(divide="ignore", invalid="ignore"):
        dS = np.where(U == 0, 0.0, (np.cos(U) - S) / U)
    G = (dW * W)[..., None] * l * dS / S  # dL/dU (no factor is exactly 0 here)
    dQ = (G * Rhd[None, :, None, None, :]).sum(3)
    dK = -(G * Rhd[None, :, None, None, :]).sum(2)
    dRhd = (G * X).sum(axis=(0, 2, 3))  # (H, D)
    dR = dRhd.sum() if R.ndim == 0 else (dRhd.sum(1) if R.ndim == 1 else dRhd)
    aRhd = np.abs(G * X).sum(axis=(0, 2, 3))
    brute.dR_abs = aRhd.sum() if R.ndim == 0 else (aRhd.sum(1) if R.ndim == 1 else aRhd)  # the scale of dR's terms
    fill = np.nan if empty == "nan" else 0.0
    Hh[emp] = fill
    dQ[emp] = fill
    return Hh, (dQ, dK, dV, dR)


def data(B, H, Lq, Lk, D, Dv, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, (B, H, Lq, D)), rng.uniform(-2, 2, (B, H, Lk, D)), rng.normal(size=(B, H, Lk, Dv)),
            rng.normal(size=(B, H, Lq, Dv)))


def err(a, b):
    """max |a - b| / max |b| over finite entries; NaN must match in place."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    f = ~np.isnan(b)
    if not f.any():
        return 0.0
    m = np.abs(b[f]).max()
    return np.abs(a[f] - b[f]).max() / (m if m > 0 else 1.0)


B, H, Lq, Lk, D, Dv = 2, 3, 6, 9, 4, 3
RADII = {"scalar": 1.3, "head": np.array([0.9, 1.4, 1.1]),
         "head_axis": np.linspace(0.8, 1.6, H * D).reshape(H, D)}
rng0 = np.random.default_rng(5)
KP = np.zeros((B, Lk), bool)
KP[1, 6:] = True
MASK = rng0.uniform(size=(B, Lq, Lk)) < 0.3
MASK[0, 2, :] = True  # a row that sees no key
CASES = {
    "plain": {},
    "causal Lq < Lk": {"causal": True},
    "key padding": {"kp": KP},
    "shared mask": {"mask": MASK[0]},
    "per-batch mask + causal + padding": {"mask": MASK, "causal": True, "kp": KP},
    "eps": {"eps": 1e-3, "causal": True},
}


def run(dt, R, kw, Qs=None, empty="nan", l=4):
    Q, K, V, dH = Qs if Qs is not None else data(B, H, Lq, Lk, D, Dv)
    cast = (lambda a: np.ascontiguousarray(a, dt))
    Hh, ctx = gfi.fourier_attention_batch(cast(Q), cast(K), cast(V), R if np.ndim(R) == 0 else cast(R), phi=l,
                                          causal=kw.get("causal", False), key_padding_mask=kw.get("kp"),
                                          mask=kw.get("mask"), eps=kw.get("eps", 0.0), empty=empty,
                                          return_context=True)
    assert Hh.dtype == dt
    grads = gfi.fourier_attention_batch_backward(ctx, cast(dH))
    for g, a in zip(grads, (Q, K, V)):
        assert g.dtype == dt and g.shape == a.shape
    return Hh, grads, ctx


@pytest.mark.parametrize("rmode", list(RADII))
@pytest.mark.parametrize("case", list(CASES))
def test_float64_against_brute_force(rmode, case):
    kw = CASES[case]
    R = RADII[rmode]
    Q, K, V, dH = data(B, H, Lq, Lk, D, Dv)
    Hr, gr = brute(Q, K, V, R, dH, causal=kw.get("causal", False), kp=kw.get("kp"), mask=kw.get("mask"),
                   eps=kw.get("eps", 0.0))
    Hh, g, ctx = run(np.float64, R, kw)
    assert err(Hh, Hr) < 1e-12
    for a, b in zip(g, gr):
        assert np.shape(a) == np.shape(b)
        assert err(a, b) < 1e-10
    assert ctx.nempty == int(np.isnan(Hr[..., 0]).sum())


@pytest.mark.parametrize("rmode", list(RADII))
@pytest.mark.parametrize("case", list(CASES))
def test_float32_against_float64(rmode, case):
    """float32 computes the pair loop in float32 with float64 row sums: H
    within l D 2^-20 of the head's value scale, the gradients within 4x that
    of each array's largest entry (docs/attention.md, the C test's bound)."""
    kw = CASES[case]
    R = RADII[rmode]
    Q, K, V, dH = (np.asarray(a, np.float32).astype(np.float64) for a in data(B, H, Lq, Lk, D, Dv))
    R64 = np.asarray(R, np.float32).astype(np.float64)
    H64, g64, _ = run(np.float64, R64 if np.ndim(R) else float(np.float32(R)), kw, (Q, K, V, dH))
    H32, g32, _ = run(np.float32, np.asarray(R, np.float32) if np.ndim(R) else float(np.float32(R)), kw,
                      (Q, K, V, dH))
    tol = 4 * D * 2.0 ** -20
    assert err(H32, H64) * np.abs(H64[~np.isnan(H64)]).max() / np.abs(V).max() <= tol
    for a, b in zip(g32[:3], g64[:3]):
        assert err(a, b) <= 4 * tol
    # dR sums terms of both signs over every pair: its scale is sum |term|
    brute(Q, K, V, R64, dH, causal=kw.get("causal", False), kp=kw.get("kp"), mask=kw.get("mask"),
          eps=kw.get("eps", 0.0))
    assert np.all(np.abs(np.asarray(g32[3], np.float64) - g64[3]) <= 4 * tol * brute.dR_abs)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_empty_rows_and_zero_option(dt):
    # Lq > Lk with the causal offset: the first Lq - Lk rows see no key
    Q, K, V, dH = data(1, 2, 7, 4, 3, 2, seed=3)
    Hh, ctx = gfi.fourier_attention_batch(Q.astype(dt), K.astype(dt), V.astype(dt), 1.0, causal=True,
                                          return_context=True)
    assert ctx.nempty == 2 * 3 and ctx.first_empty == 0
    assert np.isnan(Hh[:, :, :3]).all() and np.isfinite(Hh[:, :, 3:]).all()
    Hz, cz = gfi.fourier_attention_batch(Q.astype(dt), K.astype(dt), V.astype(dt), 1.0, causal=True, empty="zero",
                                         return_context=True)
    assert (Hz[:, :, :3] == 0).all() and cz.nempty == 6
    dQ, dK, dV, dR = gfi.fourier_attention_batch_backward(cz, dH.astype(dt))
    assert (dQ[:, :, :3] == 0).all() and np.isfinite(dR)


def test_no_copy_and_dtype():
    Q, K, V, dH = (a.astype(np.float32) for a in data(B, H, Lq, Lk, D, Dv))
    Hh, ctx = gfi.fourier_attention_batch(Q, K, V, 1.2, return_context=True)
    assert ctx.q is Q and ctx.k is K and ctx.v is V and Hh.dtype == np.float32
    Hd, cd = gfi.fourier_attention_batch(Q, K, V, 1.2, dtype=np.float64, return_context=True)
    assert Hd.dtype == np.float64 and cd.q is not Q
    Q64 = Q.astype(np.float64)
    _, c64 = gfi.fourier_attention_batch(Q64, K.astype(np.float64), V.astype(np.float64), 1.2, return_context=True)
    assert c64.q is Q64


def test_errors():
    Q, K, V, dH = data(B, H, Lq, Lk, D, Dv)
    with pytest.raises(gfi.DimensionError):
        gfi.fourier_attention_batch(Q[0], K, V, 1.0)
    with pytest.raises(gfi.DimensionError):
        gfi.fourier_attention_batch(Q, K, V, np.ones(H + 1))
    with pytest.raises(gfi.DimensionError):
        gfi.fourier_attention_batch(Q, K, V, 1.0, key_padding_mask=np.zeros((B, Lk + 1), bool))
    with pytest.raises(gfi.RadiusError):
        gfi.fourier_attention_batch(Q, K, V, -1.0)
    with pytest.raises(gfi.InvalidArgument):
        gfi.fourier_attention_batch(Q, K, V, 1.0, eps=-1)
    with pytest.raises(gfi.InvalidArgument):
        gfi.fourier_attention_batch(Q, K, V, 1.0, dtype=np.float16)
    Q[0, 0, 0, 0] = np.nan
    with pytest.raises(gfi.NonFiniteError):
        gfi.fourier_attention_batch(Q, K, V, 1.0)


def test_torch_batch_gradcheck_and_float32():
    torch = pytest.importorskip("torch")
    import gfi.torch as gt
    Q, K, V, dH = data(2, 2, 4, 6, 3, 2, seed=7)
    kp = np.zeros((2, 6), bool)
    kp[1, 4:] = True
    t = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (Q, K, V)]
    R = torch.tensor([1.1, 0.8], dtype=torch.float64, requires_grad=True)
    kpt = torch.tensor(kp)

    def f(q, k, v, r):
        return gt.FourierAttentionBatchFunction.apply(q, k, v, r, 4, True, kpt, None, 1e-3, None, None)

    assert torch.autograd.gradcheck(f, (*t, R), eps=1e-6, atol=1e-7, rtol=1e-5)
    # float32 tensors stay float32; close to the float64 op
    t32 = [a.detach().float().requires_grad_() for a in t]
    R32 = R.detach().float().requires_grad_()
    h32 = gt.FourierAttentionBatchFunction.apply(*t32, R32, 4, True, kpt, None, 1e-3, None, None)
    assert h32.dtype == torch.float32
    h32.backward(torch.tensor(dH, dtype=torch.float32))
    h64 = f(*t, R)
    h64.backward(torch.tensor(dH))
    tol = 4 * 3 * 2.0 ** -20
    assert (h32.double() - h64).abs().max() <= tol * torch.tensor(V).abs().max()
    for a, b in zip(t32 + [R32], t + [R]):
        assert a.grad.dtype == torch.float32
        assert (a.grad.double() - b.grad).abs().max() <= 4 * tol * b.grad.abs().max()
    # the module: a radius per head, (B, H, L, D) float32 input
    m = gt.FourierAttention(3, R=1.2, heads=2, per_head=True, causal=True)
    out = m(*[a.detach() for a in t32], key_padding_mask=kpt)
    out.sum().backward()
    assert out.dtype == torch.float32 and m.log_R.grad.shape == (2,)
