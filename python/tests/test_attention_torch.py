"""gfi.torch's batched op and module as FourierFormer's training code uses
them: a float32 row whose factors fall below float32's range, NaN rows never
silent, radii read by an explicit per_axis (H == D), raw radii of any sign
and their state dicts, the (Lq, Lk, 1) mask, the (L, B, H, D) layout,
half-precision inputs, values near the top of the range, attention dropout
inside the op, and a small FourierFormer-style language model that trains."""
import math
import os
import re
import warnings

import numpy as np
import pytest

import gfi

torch = pytest.importorskip("torch", reason="PyTorch is not installed: gfi.torch is not tested (optional)")
import gfi.torch as gt  # noqa: E402

F = gt.FourierAttentionBatchFunction.apply


def rand(*shape, seed=0, dtype=torch.float64, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(*shape, generator=g, dtype=torch.float64)).to(dtype)


def ref_batch(Q, K, V, R, l=4, eps=0.0, causal=False, mask=None):
    """FourierFormer's formula in float64 torch on (B, H, L, D); R: scalar,
    (D,) per axis or (H, D)."""
    Q, K, V = (t.double() for t in (Q, K, V))
    R = torch.as_tensor(R, dtype=torch.float64)
    if R.dim() == 2:
        R = R[None, :, None, None, :]
    u = (Q.unsqueeze(-2) - K.unsqueeze(-3)) * R
    w = (torch.sinc(u / math.pi) ** l).prod(-1)
    Lq, Lk = Q.shape[-2], K.shape[-2]
    if causal:
        w = w * torch.tril(torch.ones(Lq, Lk, dtype=w.dtype), diagonal=Lk - Lq)
    if mask is not None:
        w = w.masked_fill(mask, 0.0)
    return (w @ V) / (w.sum(-1, keepdim=True) + eps)


# ---- a factor below float32's range: one key at u = pi on one of 16 axes ----

@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
@pytest.mark.parametrize("eps", [0.0, 1e-6])
def test_tiny_factor_row(dt, eps):
    q = torch.zeros(1, 1, 1, 16, dtype=dt)
    q[..., 0] = float(np.float32(np.pi))
    k = torch.zeros(1, 1, 1, 16, dtype=dt)
    v = torch.ones(1, 1, 1, 1, dtype=dt)
    q.requires_grad_()
    R = torch.tensor(1.0, dtype=dt, requires_grad=True)
    u = float(np.float32(np.pi))
    w = (math.sin(u) / u) ** 4
    want = w / (w + eps) if eps else 1.0
    H = F(q, k, v, R, 4, False, None, None, eps)
    assert torch.isfinite(H).all() and abs(H.item() - want) <= 1e-6 * want
    H.sum().backward()
    assert torch.isfinite(q.grad).all() and torch.isfinite(R.grad).all()
    if eps:  # dH/dq_0 = H (1 - H) l (cot u - 1/u)
        dq = want * (1 - want) * 4 * (math.cos(u) / math.sin(u) - 1 / u)
        assert abs(q.grad[0, 0, 0, 0].item() - dq) <= 1e-5 * abs(dq)


def test_float32_causal_rows_never_nan_with_eps():
    """Causal rows that see one or two keys far away (every factor tiny or
    flushed in float32): finite with eps > 0, equal to float64 within float
    rounding of the row scale."""
    B, H, L, D = 2, 2, 12, 16
    Q, K, V = rand(B, H, L, D, seed=1, scale=3.0), rand(B, H, L, D, seed=2, scale=3.0), rand(B, H, L, 4, seed=3)
    h64 = F(Q, K, V, torch.tensor(1.0, dtype=torch.float64), 4, True, None, None, 1e-6)
    h32 = F(Q.float(), K.float(), V.float(), torch.tensor(1.0), 4, True, None, None, 1e-6)
    assert torch.isfinite(h32).all()
    assert (h32.double() - h64).abs().max() <= 4 * 16 * 2.0 ** -20 * V.abs().max()


# ---- NaN rows are never silent ----

def test_flagged_rows_raise_or_warn():
    Q, K, V = rand(2, 1, 3, 2, seed=4), rand(2, 1, 3, 2, seed=5), rand(2, 1, 3, 2, seed=6)
    kp = torch.zeros(2, 3, dtype=torch.bool)
    kp[1] = True  # batch row 1 sees no key
    R = torch.tensor(1.0, dtype=torch.float64)
    with pytest.raises(gfi.DenominatorError, match=r"3 rows .* NaN \(first: batch 1, head 0, query 0\)"):
        F(Q, K, V, R, 4, False, kp, None, 1e-6)
    with pytest.warns(gt.FlaggedRowsWarning):
        h = F(Q, K, V, R, 4, False, kp, None, 1e-6, None, None, None, "warn")
    assert torch.isnan(h[1]).all() and torch.isfinite(h[0]).all()
    h = F(Q, K, V, R, 4, False, kp, None, 1e-6, "zero")
    assert (h[1] == 0).all()
    m = gt.FourierAttention(2, R=1.0)
    with pytest.raises(gfi.DenominatorError):
        m(Q, K, V, key_padding_mask=kp)
    # the single-sequence op, l = 1: a key at u = 0 (weight 1) and five at u = 4.4934 (weight
    # sinc = -0.2172 each) sum to 1 - 5 x 0.2172 < 0: a flagged row, never a silent NaN
    k1 = torch.tensor([[0.0], [4.4934], [4.4934], [4.4934], [4.4934], [4.4934]], dtype=torch.float64)
    q1 = torch.zeros(6, 1, dtype=torch.float64)
    v1 = torch.ones(6, 1, dtype=torch.float64)
    r1 = torch.tensor(1.0, dtype=torch.float64)
    Hq, cq = gfi.fourier_attention(q1.numpy(), k1.numpy(), v1.numpy(), 1.0, phi=1, return_context=True)
    assert np.sum(cq.nflagged) > 0
    with pytest.raises(gfi.DenominatorError):
        gt.FourierAttentionFunction.apply(q1, k1, v1, r1, 1)
    with pytest.warns(gt.FlaggedRowsWarning):
        h = gt.FourierAttentionFunction.apply(q1, k1, v1, r1, 1, False, None, None, "warn")
    assert torch.isnan(h).any()


# ---- per-axis radii with H == D ----

@pytest.mark.parametrize("dt", [torch.float64, torch.float32])
def test_per_axis_radii_heads_equal_dim(dt):
    B, H, L, D = 2, 4, 5, 4
    Q, K, V = rand(B, H, L, D, seed=7, dtype=dt), rand(B, H, L, D, seed=8, dtype=dt), rand(B, H, L, 3, seed=9, dtype=dt)
    m = gt.FourierAttention(D, R=1.0, per_axis=True, eps=0.0)
    with torch.no_grad():
        m.log_R.copy_(torch.log(torch.tensor([0.5, 1.0, 1.5, 2.0], dtype=torch.float64)))
    out = m(Q, K, V)
    ref = ref_batch(Q, K, V, m.R.detach())
    tol = 1e-13 if dt == torch.float64 else 4 * 4 * 2.0 ** -20
    assert (out.double() - ref).abs().max() <= tol * V.abs().max()
    out.sum().backward()
    assert m.log_R.grad.shape == (D,)
    # the function: a 1-D R is read by per_axis, never by comparing H and D
    Rv = torch.tensor([0.5, 1.0, 1.5, 2.0], dtype=dt)
    per_head = F(Q, K, V, Rv, 4, False, None, None, 0.0, None, None, None, None, False)
    per_axis = F(Q, K, V, Rv, 4, False, None, None, 0.0, None, None, None, None, True)
    assert (per_axis.double() - ref).abs().max() <= tol * V.abs().max()
    assert (per_head.double() - ref_batch(Q, K, V, Rv.double()[:, None].expand(H, D))).abs().max() <= tol * 4
    with pytest.raises(gfi.DimensionError):
        F(Q, K, V, torch.ones(3, dtype=dt), 4, False, None, None, 0.0, None, None, None, None, True)


# ---- raw radii: any sign, 0 refused, FourierFormer's state dicts ----

def test_raw_radius_sign_zero_and_state_dict():
    Q, K, V = rand(1, 2, 4, 3, seed=10), rand(1, 2, 4, 3, seed=11), rand(1, 2, 4, 2, seed=12)
    g = rand(1, 2, 4, 2, seed=13)
    out = {}
    for r in (1.3, -1.3):
        R = torch.tensor([r, 0.9], dtype=torch.float64, requires_grad=True)
        h = F(Q, K, V, R, 4, False, None, None, 1e-6)
        (h * g).sum().backward()
        out[r] = (h.detach(), R.grad.clone())
    assert torch.equal(out[1.3][0], out[-1.3][0])
    assert out[1.3][1][0] == -out[-1.3][1][0] and out[1.3][1][1] == out[-1.3][1][1]
    R = torch.tensor([-1.3, 0.9], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda r: F(Q, K, V, r, 4, False, None, None, 1e-6), (R,), eps=1e-6, atol=1e-8)
    with pytest.raises(gfi.RadiusError, match="R = 0"):
        F(Q, K, V, torch.tensor(0.0, dtype=torch.float64))
    # FourierFormer's raw parameter (shape (1,) or (d_head,), any sign) loads into log_R or R_raw
    m = gt.FourierAttention(3, R=1.0)
    m.load_state_dict({"R": torch.tensor([-2.0])})
    assert abs(m.R.item() - 2.0) < 1e-15
    mp = gt.FourierAttention(3, R=1.0, per_axis=True, raw_R=True)
    mp.load_state_dict({"R": torch.tensor([-0.5, 1.0, 2.0])})
    assert torch.equal(mp.R_raw.detach(), torch.tensor([-0.5, 1.0, 2.0], dtype=torch.float64))
    assert torch.equal(mp.R.detach(), torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64))
    assert torch.allclose(mp(Q, K, V), ref_batch(Q, K, V, torch.tensor([0.5, 1.0, 2.0]), eps=1e-6), atol=1e-13)
    with pytest.raises(gfi.RadiusError):
        m.load_state_dict({"R": torch.tensor([0.0])})
    with pytest.raises(ValueError):
        m.load_state_dict({"R": torch.tensor([1.0, 2.0])})


# ---- (Lq, Lk, 1) mask, (L, B, H, D) layout, half precision, huge V ----

@pytest.mark.parametrize("dt", [torch.float64, torch.float32])
def test_mask_shapes_and_layout(dt):
    B, H, Lq, Lk, D, Dv = 2, 3, 5, 7, 4, 3
    Q, K, V = rand(B, H, Lq, D, seed=14, dtype=dt), rand(B, H, Lk, D, seed=15, dtype=dt), rand(B, H, Lk, Dv, seed=16,
                                                                                               dtype=dt)
    g = rand(B, H, Lq, Dv, seed=17, dtype=dt)
    mask = torch.triu(torch.ones(Lq, Lk, dtype=torch.bool), diagonal=1 + Lk - Lq)  # FourierFormer's dec_attn_mask
    mask[3, 0] = True
    kp = torch.zeros(B, Lk, dtype=torch.bool)
    kp[1, 6] = True
    R = torch.tensor([1.1, 0.7, 1.4], dtype=dt)

    def run(layout, m):
        ts = [t.clone().requires_grad_() for t in (Q, K, V)]
        if layout == "LBHD":  # (L, B, H, D) contiguous tensors
            ins = [t.detach().permute(2, 0, 1, 3).contiguous().requires_grad_() for t in ts]
            h = F(*ins, R, 4, False, kp, m, 1e-6, None, None, "LBHD")
            (h * g.permute(2, 0, 1, 3)).sum().backward()
            return [h.permute(1, 2, 0, 3)] + [t.grad.permute(1, 2, 0, 3) for t in ins]
        h = F(*ts, R, 4, False, kp, m, 1e-6)
        (h * g).sum().backward()
        return [h] + [t.grad for t in ts]

    base = run("BHLD", mask)
    for layout, m in (("BHLD", mask[:, :, None]), ("LBHD", mask), ("LBHD", mask[:, :, None])):
        for a, b in zip(base, run(layout, m)):
            assert torch.equal(a, b), layout  # the same sums in the same order: the same bits
    ref = ref_batch(Q, K, V, R.double()[:, None].expand(H, D), eps=1e-6, mask=mask | kp[:, None, None, :])
    tol = 1e-13 if dt == torch.float64 else 4 * D * 2.0 ** -20
    assert (base[0].double() - ref).abs().max() <= tol * V.abs().max()


@pytest.mark.parametrize("half", [torch.float16, torch.bfloat16])
def test_half_precision_inputs(half):
    Q, K, V = rand(1, 2, 6, 4, seed=18), rand(1, 2, 6, 4, seed=19), rand(1, 2, 6, 3, seed=20)
    ts = [t.to(half).requires_grad_() for t in (Q, K, V)]
    R = torch.tensor(1.2, dtype=half, requires_grad=True)
    h = F(*ts, R, 4, True, None, None, 1e-6)
    assert h.dtype == half
    h.float().sum().backward()
    assert all(t.grad.dtype == half and torch.isfinite(t.grad.float()).all() for t in ts + [R])
    # computed in float32 on the half inputs: equal to the float32 op up to the output's rounding
    h32 = F(*[t.detach().float() for t in ts], R.detach().float(), 4, True, None, None, 1e-6)
    assert torch.equal(h, h32.to(half))


def test_huge_values_finite():
    Q = torch.zeros(1, 1, 4, 2, dtype=torch.float64, requires_grad=True)
    V = torch.full((1, 1, 4, 2), 1e308, dtype=torch.float64, requires_grad=True)
    h = F(Q, Q, V, torch.tensor(2.0, dtype=torch.float64))
    assert (h == 1e308).all()
    h.sum().backward()
    assert torch.isfinite(Q.grad).all() and torch.isfinite(V.grad).all()


# ---- attention dropout inside the op ----

def test_dropout_same_seed_same_bits_and_gradcheck():
    Q, K, V = rand(2, 2, 6, 3, seed=21), rand(2, 2, 8, 3, seed=22), rand(2, 2, 8, 2, seed=23)
    R = torch.tensor(1.1, dtype=torch.float64)
    for dt in (torch.float64, torch.float32):
        outs = []
        for seed in (5, 5, 6):
            ts = [t.detach().to(dt).clone().requires_grad_() for t in (Q, K, V, R)]
            h = F(*ts, 4, True, None, None, 1e-6, None, None, None, None, None, 0.3, seed)
            h.sum().backward()
            outs.append([h.detach()] + [t.grad for t in ts])
        assert all(torch.equal(a, b) for a, b in zip(outs[0], outs[1]))
        assert not torch.equal(outs[0][0], outs[2][0])
        assert not torch.equal(outs[0][0], F(Q.to(dt), K.to(dt), V.to(dt), R.to(dt), 4, True, None, None, 1e-6))
    # the backward regenerates the mask: exact gradients of the masked op
    ts = [t.clone().requires_grad_() for t in (Q, K, V, R)]
    f = lambda q, k, v, r: F(q, k, v, r, 4, True, None, None, 1e-6, None, None, None, None, None, 0.3, 11)
    assert torch.autograd.gradcheck(f, tuple(ts), eps=1e-6, atol=1e-7, rtol=1e-5)
    # the mask does not depend on the layout
    p = lambda t: t.permute(2, 0, 1, 3).contiguous()
    h1 = f(Q, K, V, R)
    h2 = F(p(Q), p(K), p(V), R, 4, True, None, None, 1e-6, None, None, "LBHD", None, None, 0.3, 11)
    assert torch.equal(h1, h2.permute(1, 2, 0, 3))


def test_dropout_mean_is_the_no_dropout_output():
    """E[z_ij] = 1: the mean over seeds of the dropped output equals the
    output without dropout, within 5 standard errors per entry; the kept
    fraction is 1 - p within 5 standard errors."""
    Q, K, V = rand(1, 2, 6, 3, seed=24, scale=0.5), rand(1, 2, 6, 3, seed=25, scale=0.5), rand(1, 2, 6, 2, seed=26)
    R = torch.tensor(1.0, dtype=torch.float64)
    p, n = 0.25, 400
    h0 = F(Q, K, V, R, 4, False, None, None, 1e-6)
    hs = torch.stack([F(Q, K, V, R, 4, False, None, None, 1e-6, None, None, None, None, None, p, s)
                      for s in range(n)])
    mean, se = hs.mean(0), hs.std(0) / math.sqrt(n)
    assert ((mean - h0).abs() <= 5 * se + 1e-12).all()
    # dV is linear in the mask too: its mean over seeds is the gradient without dropout
    g = rand(1, 2, 6, 2, seed=27)

    def dV(p, s):
        v = V.clone().requires_grad_()
        (F(Q, K, v, R, 4, False, None, None, 1e-6, None, None, None, None, None, p, s) * g).sum().backward()
        return v.grad

    gs = torch.stack([dV(p, s) for s in range(n)])
    assert ((gs.mean(0) - dV(0.0, 0)).abs() <= 5 * gs.std(0) / math.sqrt(n) + 1e-12).all()
    # the kept fraction: V = identity columns per key, a row of weights w/S
    Lk = 6
    E = torch.eye(Lk, dtype=torch.float64).expand(1, 2, Lk, Lk).contiguous()
    w0 = F(Q, K, E, R, 4, False, None, None, 0.0)
    kept = torch.stack([(F(Q, K, E, R, 4, False, None, None, 0.0, None, None, None, None, None, p, s) != 0)
                        for s in range(50)]).double()
    frac = kept[:, w0 != 0].mean().item()
    m = kept[:, w0 != 0].numel()
    assert abs(frac - (1 - p)) <= 5 * math.sqrt(p * (1 - p) / m)


# ---- a small FourierFormer-style language model ----

class _FourierLM(torch.nn.Module):
    """Transformer-XL's layout as FourierFormer's wikitext103 model: [len,
    batch, head, dim] tensors, memory keys (the previous segment), causal
    segment mask, eps = 1e-6, attention dropout; float32."""

    def __init__(self, ntok=32, d=32, heads=4, layers=2):
        super().__init__()
        self.emb = torch.nn.Embedding(ntok, d)
        self.heads, self.dh = heads, d // heads
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(d, 3 * d, bias=False) for _ in range(layers))
        self.o = torch.nn.ModuleList(torch.nn.Linear(d, d, bias=False) for _ in range(layers))
        self.ff = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.ReLU(),
                                                          torch.nn.Linear(2 * d, d)) for _ in range(layers))
        self.ln = torch.nn.ModuleList(torch.nn.LayerNorm(d) for _ in range(2 * layers))
        self.attn = torch.nn.ModuleList(gt.FourierAttention(self.dh, R=1.0, per_axis=True, causal=True, eps=1e-6,
                                                            dropout=0.1, layout="LBHD") for _ in range(layers))
        self.out = torch.nn.Linear(d, ntok)

    def forward(self, x, mems):
        h = self.emb(x)  # [L, B, d]
        L, B, _ = h.shape
        new_mems = []
        for i, (qkv, o, ff, attn) in enumerate(zip(self.qkv, self.o, self.ff, self.attn)):
            new_mems.append(h.detach())
            cat = h if mems is None else torch.cat([mems[i], h], 0)
            q = qkv(h)[..., :h.shape[-1]]
            kv = qkv(cat)[..., h.shape[-1]:]
            k, v = kv.chunk(2, dim=-1)
            q, k, v = (t.reshape(t.shape[0], B, self.heads, self.dh) for t in (q, k, v))
            a = attn(q, k, v)  # [L, B, heads, dh]: no permutes
            h = self.ln[2 * i](h + o(a.reshape(L, B, -1)))
            h = self.ln[2 * i + 1](h + ff(h))
        return self.out(h), new_mems


def test_fourierformer_style_lm_trains():
    torch.manual_seed(0)
    ntok, L, B = 32, 16, 4
    model = _FourierLM(ntok)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(1)
    # a learnable stream: token t+1 = (token t + step) mod ntok with a few steps
    start = torch.randint(0, ntok, (B,), generator=gen)
    stepv = torch.randint(1, 4, (B,), generator=gen)
    stream = (start[None, :] + stepv[None, :] * torch.arange(40 * L + 1)[:, None]) % ntok
    losses, mems = [], None
    model.train()
    for s in range(40):
        x, y = stream[s * L:(s + 1) * L], stream[s * L + 1:(s + 1) * L + 1]
        logits, mems = model(x, mems)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, ntok), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    assert all(math.isfinite(v) for v in losses)
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5]), losses


# ---- docs/attention.md: the FourierFormer section's python blocks run ----

def test_docs_fourierformer_section_runs():
    root = os.environ.get("GFI_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
    text = open(os.path.join(root, "docs", "attention.md")).read()
    sec = text.split("## Using gfi in FourierFormer's code", 1)
    assert len(sec) == 2, "docs/attention.md lacks the section"
    body = re.split(r"\n## ", sec[1], maxsplit=1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    assert blocks
    ns = {}
    for b in blocks:
        exec(compile(b, "docs/attention.md", "exec"), ns)


# ---- FourierMultiheadAttention: nn.MultiheadAttention's signature ----

def _mha_reference(m, query, key, value, kp=None, am=None):
    """The module's formula in plain float64 torch on (L, N, E) inputs: the
    projections, FourierFormer's weights with eps, the output projection."""
    E, Hh, hd = m.embed_dim, m.num_heads, m.head_dim
    W, b = m.in_proj_weight.double(), m.in_proj_bias.double()
    proj = lambda x, k: torch.nn.functional.linear(x.double(), W[k * E:(k + 1) * E], b[k * E:(k + 1) * E])
    L, N, S = query.shape[0], query.shape[1], key.shape[0]
    q, k, v = (proj(x, i).reshape(x.shape[0], N, Hh, hd).permute(1, 2, 0, 3) for i, x in enumerate((query, key, value)))
    R = m.attn.R.detach().double()
    u = (q.unsqueeze(-2) - k.unsqueeze(-3)) * R
    w = (torch.sinc(u / math.pi) ** 4).prod(-1)  # (N, H, L, S)
    if kp is not None:
        w = w.masked_fill(kp[:, None, None, :], 0.0)
    if am is not None:
        w = w.masked_fill(am, 0.0)
    p = w / (w.sum(-1, keepdim=True) + m.attn.eps)
    o = (p @ v).permute(2, 0, 1, 3).reshape(L, N, E)
    return torch.nn.functional.linear(o, m.out_proj.weight.double(), m.out_proj.bias.double()), p


@pytest.mark.parametrize("batch_first", [False, True])
def test_fourier_mha_matches_formula_and_masks(batch_first):
    torch.manual_seed(3)
    E, Hh, L, S, N = 16, 4, 5, 7, 3
    m = gt.FourierMultiheadAttention(E, Hh, batch_first=batch_first, R=0.7).double()
    with torch.no_grad():
        m.in_proj_bias.normal_(0, 0.1)
    query, key, value = rand(L, N, E, seed=30), rand(S, N, E, seed=31), rand(S, N, E, seed=32)
    kp = torch.zeros(N, S, dtype=torch.bool)
    kp[2, 5:] = True
    am = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1 + S - L)
    t = (lambda x: x.transpose(0, 1)) if batch_first else (lambda x: x)
    out, w = m(t(query), t(key), t(value), key_padding_mask=kp, attn_mask=am, average_attn_weights=False)
    ref, p = _mha_reference(m, query, key, value, kp, am)
    assert (t(out) - ref).abs().max() < 1e-12 and (w - p).abs().max() < 1e-12
    # float masks of 0 / -inf and a per-(batch x head) 3-D mask equal across heads give the same
    fm = torch.zeros(L, S, dtype=torch.float64).masked_fill(am, float("-inf"))
    out2, w2 = m(t(query), t(key), t(value), key_padding_mask=kp, attn_mask=fm.expand(N * Hh, L, S))
    assert torch.equal(out2, out) and torch.allclose(w2, w.mean(1), atol=1e-15)
    out3, _ = m(t(query), t(key), t(value), key_padding_mask=kp, need_weights=False, is_causal=True)
    assert torch.equal(out3, out)
    with pytest.raises(ValueError):
        m(t(query), t(key), t(value), attn_mask=fm + 1.0)
    # unbatched (L, E)
    ou, wu = m(query[:, 0], key[:, 0], value[:, 0])
    o1, w1 = m(t(query[:, :1]), t(key[:, :1]), t(value[:, :1]))
    assert torch.allclose(ou, t(o1)[:, 0], atol=1e-15) and torch.allclose(wu, w1[0], atol=1e-15)
    # gradients reach every parameter
    out.square().sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in m.parameters())
    with pytest.raises(ValueError):
        gt.FourierMultiheadAttention(E, Hh, add_bias_kv=True)
    # nn.MultiheadAttention's state dict loads as it is; the radius keeps its value
    ref_mha = torch.nn.MultiheadAttention(E, Hh, batch_first=batch_first).double()
    r0 = m.attn.R.detach().clone()
    m.load_state_dict(ref_mha.state_dict())
    assert torch.equal(m.in_proj_weight, ref_mha.in_proj_weight) and torch.equal(m.attn.R.detach(), r0)


def test_fourier_mha_swapped_into_transformer_encoder_layer_trains():
    """One line swaps it into torch's own nn.TransformerEncoderLayer: a small
    float32 sequence classifier trains (finite, falling loss), also through
    eval (torch's fused fast path is never taken)."""
    torch.manual_seed(4)
    d, nhead, ntok, L, N = 32, 4, 12, 10, 16
    layer = torch.nn.TransformerEncoderLayer(d, nhead, dim_feedforward=64, dropout=0.1, batch_first=True)
    layer.self_attn = gt.FourierMultiheadAttention(d, nhead, dropout=0.1, batch_first=True)  # the swap
    emb, head = torch.nn.Embedding(ntok, d), torch.nn.Linear(d, 2)
    model = torch.nn.ModuleList([emb, layer, head])
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(5)
    x = torch.randint(0, ntok, (64, L), generator=gen)
    y = (x == 3).any(1).long()  # does the sequence hold token 3
    pad = torch.zeros(64, L, dtype=torch.bool)
    pad[::3, -2:] = True
    losses = []
    for step in range(30):
        i = torch.arange(step * N, (step + 1) * N) % 64
        h = layer(emb(x[i]), src_key_padding_mask=pad[i])
        logits = head(h.masked_fill(pad[i][..., None], 0).sum(1) / (~pad[i]).sum(1, keepdim=True))
        loss = torch.nn.functional.cross_entropy(logits, y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses)
    assert np.mean(losses[-5:]) < np.mean(losses[:5]), losses
    layer.eval()
    with torch.no_grad():
        h1 = layer(emb(x[:4]))
        q = emb(x[:4])
        a = layer.self_attn(q, q, q, need_weights=False)[0]
        h2 = layer.norm2(layer.norm1(q + a) + layer.linear2(layer.activation(layer.linear1(layer.norm1(q + a)))))
    assert torch.allclose(h1, h2, atol=1e-5)


@pytest.mark.parametrize("dt", [torch.float64, torch.float32])
def test_strided_chunk_views_read_in_place(dt):
    """q, k, v as chunks of a fused projection [len, batch, 3 heads dim]
    (strided views, FourierFormer's w_heads.chunk(3, -1)) give the same bits
    as their contiguous copies, forward and backward, and the numpy call
    reads them without a copy (the context holds the views themselves)."""
    L, B, Hh, hd = 7, 2, 3, 4
    w = rand(L, B, 3 * Hh * hd, seed=40, dtype=dt).requires_grad_()
    g = rand(L, B, Hh, hd, seed=41, dtype=dt)
    kp = torch.zeros(B, L, dtype=torch.bool)
    kp[1, 3] = True
    R = torch.tensor(0.9, dtype=dt)

    def run(copy):
        q, k, v = (t.reshape(L, B, Hh, hd) for t in w.chunk(3, dim=-1))
        if copy:
            q, k, v = (t.contiguous() for t in (q, k, v))
        else:
            assert not q.is_contiguous()
        h = F(q, k, v, R, 4, True, kp, None, 1e-6, None, None, "LBHD", None, None, 0.2, 3)
        w.grad = None
        (h * g).sum().backward()
        return h.detach(), w.grad.clone()

    a, b = run(False), run(True)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    # BHLD views (a permuted (L, B, H, D) tensor) too
    q, k, v = (t.reshape(L, B, Hh, hd).permute(1, 2, 0, 3) for t in w.detach().chunk(3, dim=-1))
    h1 = F(q, k, v, R, 4, True, kp, None, 1e-6)
    h2 = F(q.contiguous(), k.contiguous(), v.contiguous(), R, 4, True, kp, None, 1e-6)
    assert torch.equal(h1, h2)
    qn = q.numpy()
    _, ctx = gfi.fourier_attention_batch(qn, k.numpy(), v.numpy(), 0.9, return_context=True,
                                         dtype=qn.dtype)
    assert np.shares_memory(ctx.q, qn) and not qn.flags.c_contiguous


def test_compile_and_script_as_documented():
    """docs/attention.md: the modules run in eager mode. torch.jit.script
    refuses them (the op is an autograd.Function over libgfi); where
    torch.compile exists, the compiled module (graph breaks around the op)
    gives the eager module's values; Debian's torch 1.13 has none."""
    torch.manual_seed(5)
    m = gt.FourierMultiheadAttention(8, 2, batch_first=True, R=0.9).double()
    x = rand(2, 5, 8, seed=40)
    eager, _ = m(x, x, x, need_weights=False)
    with pytest.raises(Exception):
        torch.jit.script(m)
    if not hasattr(torch, "compile"):
        assert int(torch.__version__.split(".")[0]) < 2  # torch.compile came with PyTorch 2.0
        return
    out, _ = torch.compile(m)(x, x, x, need_weights=False)
    assert torch.equal(out, eager)
