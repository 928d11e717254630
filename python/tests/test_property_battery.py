"""A property-based battery of gfi's Python API (hypothesis): random shapes,
dtypes, memory orders, values (ordinary, zero, denormal, huge, NaN and
infinite), weights, masks and option values for the public estimators.

The property, for every example: the call either raises a gfi.Error that
names a parameter (e.param, one of the call's own parameters), or returns
finite results equal, to the stated tolerance, to a plain numpy formula; the
only non-finite values allowed are rows the call flags (NaN with its flag
set). A crash (the process), a hang (faulthandler ends the run after
HANG_SECONDS) or an unflagged non-finite value fails.

Every class runs a fixed number of examples, derandomized (the same examples
on every run, no example database), so the battery is cheap and
deterministic; the counts per class and outcome are printed at the end."""
import collections
import faulthandler
import warnings

import numpy as np
import pytest

import gfi

hypothesis = pytest.importorskip("hypothesis", reason="the property battery needs hypothesis (Debian: "
                                 "python3-hypothesis; tools/setup.sh installs it)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# the numpy references overflow on purpose with the huge values
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
HANG_SECONDS = 300
EPS = np.finfo(float).eps
COUNTS = collections.Counter()
REFUSED = collections.Counter()  # (class, parameter named)


def budget(n):
    return settings(max_examples=n, derandomize=True, deadline=None, database=None, print_blob=True,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module", autouse=True)
def report(request):
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
    total = sum(COUNTS.values())
    lines = ["property battery: %d examples" % total]
    for cls in sorted({c for c, _ in COUNTS}):
        parts = ", ".join("%s %d" % (o, COUNTS[(cls, o)]) for o in ("equal", "refused", "flagged")
                          if COUNTS[(cls, o)])
        why = ", ".join("%s %d" % (p, n) for (c, p), n in sorted(REFUSED.items()) if c == cls)
        lines.append("  %-18s %4d (%s; refusals name %s)" % (cls, sum(v for (c, _), v in COUNTS.items() if c == cls),
                                                          parts, why or "-"))
    capman = request.config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        with capman.global_and_fixture_disabled():
            print("\n" + "\n".join(lines))
    else:
        print("\n".join(lines))


# ---- values and arrays -------------------------------------------------------

ORDINARY = st.floats(-4, 4, allow_nan=False, allow_infinity=False)
TINY = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300])
HUGE = st.sampled_from([1e6, -1e6, 3e15, 1e17, 1e300, -1e300, 1.7976931348623157e308])
NONFINITE = st.sampled_from([np.nan, np.inf, -np.inf])
# how an array's values are drawn: mostly ordinary, sometimes one hostile class mixed in
MODES = st.sampled_from(["ordinary"] * 10 + ["tiny", "huge", "nonfinite"])
DTYPES = st.sampled_from(["float64"] * 3 + ["float32", "int64", "list"])
ORDERS = st.sampled_from(["C", "C", "F", "strided"])


@st.composite
def arrays(draw, shape, mode=None, positive=False):
    """An array of `shape` in a random dtype, order and value mode; returns
    (what the call gets, the float64 values it holds)."""
    mode = mode or draw(MODES)
    n = int(np.prod(shape))
    pools = {"ordinary": ORDINARY, "tiny": st.one_of(ORDINARY, TINY), "huge": st.one_of(ORDINARY, HUGE),
             "nonfinite": st.one_of(ORDINARY, NONFINITE)}
    vals = np.array(draw(st.lists(pools[mode], min_size=n, max_size=n)), dtype=float).reshape(shape)
    if positive:
        vals = np.abs(vals) + 0.25
    dtype, order = draw(DTYPES), draw(ORDERS)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if dtype == "int64":
            vals = np.round(np.clip(np.nan_to_num(vals), -9, 9))
            a = vals.astype(np.int64)
        elif dtype == "float32":
            a = vals.astype(np.float32)
            vals = a.astype(float)
        elif dtype == "list":
            return vals.tolist(), vals
        else:
            a = vals.copy()
    if order == "F":
        a = np.asfortranarray(a)
    elif order == "strided" and a.ndim >= 1:
        big = np.repeat(a, 2, axis=0)
        a = big[::2]
    return a, vals


def plain(*arrs):
    """Every value finite and within the ordinary range (|v| <= 4): such
    inputs with valid options must never be refused."""
    return all(np.all(np.isfinite(np.asarray(a, dtype=float))) and np.all(np.abs(np.asarray(a, dtype=float)) <= 4)
               for a in arrs)


def refused(cls, e, allowed, must_run=False):
    """A gfi.Error must name one of the call's parameters (and plain inputs
    are never refused)."""
    assert isinstance(e, gfi.Error), repr(e)
    assert not must_run, "plain inputs refused: %s" % e
    assert e.param, "a gfi error without a parameter: %r" % e
    assert e.param in allowed, "the error names %r, not one of %s: %s" % (e.param, allowed, e)
    COUNTS[(cls, "refused")] += 1
    REFUSED[(cls, e.param)] += 1


def finite(*arrs):
    return all(np.all(np.isfinite(np.asarray(a, dtype=float))) for a in arrs)


def sinc(t):
    return np.sinc(t / np.pi)


def pow_A(l):
    return gfi._lib.lib.gfi_pow_A(l)


GOOD_R = st.floats(0.05, 12)
RADII = st.one_of(GOOD_R, GOOD_R, GOOD_R, st.sampled_from([0.0, -1.0, np.nan, np.inf, 1e-320, 1e308]))


# ---- 1. the Fourier KDE (FourierFormer eq. 4): evaluate, direct and auto routes ----

@budget(150)
@given(st.data())
def test_fourier_kde(data):
    method = data.draw(st.sampled_from(["direct", "direct", "auto", "fast", "nonsense"]))
    # the forced fast route costs grow like (R x span)^D: it is drawn on small cases only (R = 12
    # over [-4, 4]^3 took a minute for 25 points)
    fast = method == "fast"
    N = data.draw(st.integers(1, 25))
    D = data.draw(st.integers(1, 2 if fast else 3))
    M = data.draw(st.integers(1, 12))
    X, Xv = data.draw(arrays((N, D), mode="ordinary" if fast else None))
    x, xv = data.draw(arrays((M, D), mode="ordinary" if fast else None))
    # every l on every route (odd l on the fast route found a quadrature bound short by rho^2:
    # l = 1, R = 1, one point at 0, x = 0.5 gave 2.4e-9 against a bound of 1.1e-11)
    l = data.draw(st.integers(1, 8))
    per_axis = data.draw(st.booleans())
    radii = st.floats(0.05, 3) if fast else RADII
    R = [data.draw(radii) for _ in range(D)] if per_axis else data.draw(radii)
    use_w = data.draw(st.booleans())
    w, wv = data.draw(arrays((N,), positive=data.draw(st.booleans()))) if use_w else (None, None)
    try:
        kde = gfi.FourierKDE(R=R, phi=l, method=method).fit(X, weights=w)
        p = kde.evaluate(x)
    except gfi.Error as e:
        good_R = plain(Xv, xv) and np.all(np.isfinite(np.asarray(R, float))) and np.all(np.asarray(R, float) >= 0.05) \
            and np.all(np.asarray(R, float) <= 12)
        return refused("fourier-kde", e, {"data", "x", "R", "phi", "method", "weights", "tol"},
                       must_run=good_R and method in ("direct", "auto") and (w is None or np.all(wv > 0)))
    Rv = np.broadcast_to(np.asarray(R, dtype=float), (D,))
    assert finite(Xv, xv, Rv) and (w is None or finite(wv)), "non-finite input accepted"
    assert p.shape == (M,) and finite(p), "non-finite or misshapen result %r" % p
    wn = np.full(N, 1.0 / N) if w is None else wv / wv.sum()
    u = np.ones((M, N))
    for j in range(D):
        u *= sinc(Rv[j] * (xv[:, None, j] - Xv[None, :, j])) ** l
    scale = np.prod(Rv / pow_A(l))
    ref = scale * (u @ wn)
    phase = np.max(Rv) * max(np.max(np.abs(Xv)), np.max(np.abs(xv)), 1.0)
    # rounding of the phases R (x - x_i) (each term changes by up to phase eps), the sum, and the
    # fast route's stated bound
    # (the fast route promises tol relative to the largest |value|; bound_abs is its estimate)
    rt = kde.route_
    fast_tol = 0.0 if rt["route"] == "direct" else 1.01 * max(rt["bound_abs"], rt["tol"] * np.max(np.abs(ref)))
    tol = scale * np.sum(np.abs(wn)) * (64 * EPS * (phase + N) * l * D) + fast_tol
    assert np.all(np.abs(p - ref) <= tol + 1e-300), "max |p - ref| = %g > %g" % (np.max(np.abs(p - ref)), tol)
    COUNTS[("fourier-kde", "equal")] += 1


# ---- 2. the Gaussian KDE with a diagonal bandwidth ----------------------------

@budget(50)
@given(st.data())
def test_gaussian_kde(data):
    N = data.draw(st.integers(1, 20))
    D = data.draw(st.integers(1, 3))
    M = data.draw(st.integers(1, 10))
    X, Xv = data.draw(arrays((N, D)))
    x, xv = data.draw(arrays((M, D)))
    h = [data.draw(st.one_of(st.floats(0.05, 5), st.sampled_from([0.0, -1.0, np.nan, 1e-200, 1e200])))
         for _ in range(D)]
    try:
        p = gfi.GaussianKDE(bandwidth=h, method="direct").fit(X).evaluate(x)
    except gfi.Error as e:
        return refused("gaussian-kde", e, {"data", "x", "bandwidth", "method", "weights"},
                       must_run=plain(Xv, xv) and all(0.05 <= v <= 5 for v in h) and N >= 1)
    hv = np.asarray(h, dtype=float)
    assert finite(Xv, xv, hv), "non-finite input accepted"
    assert p.shape == (M,) and finite(p), "non-finite result %r" % p
    with np.errstate(all="ignore"):
        z = (xv[:, None, :] - Xv[None, :, :]) / hv
        ref = np.mean(np.prod(np.exp(-0.5 * z * z) / (np.sqrt(2 * np.pi) * hv), axis=2), axis=1)
    if finite(ref):
        assert np.all(np.abs(p - ref) <= 1e-9 * np.max(np.abs(ref)) + 1e-300), (p, ref)
    COUNTS[("gaussian-kde", "equal")] += 1


# ---- 3. Fourier Nadaraya-Watson (eq. 6): predict, flagged rows ---------------

@budget(120)
@given(st.data())
def test_fourier_nw(data):
    N = data.draw(st.integers(1, 20))
    D = data.draw(st.integers(1, 2))
    M = data.draw(st.integers(1, 10))
    V = data.draw(st.sampled_from([None, 1, 2]))
    X, Xv = data.draw(arrays((N, D)))
    Y, Yv = data.draw(arrays((N,) if V is None else (N, V)))
    x, xv = data.draw(arrays((M, D)))
    l = data.draw(st.integers(1, 8))
    R = data.draw(RADII)
    denom_tol = data.draw(st.sampled_from([None, 0.0, 1e-8, 0.5, -1.0, np.nan]))
    try:
        nw = gfi.FourierNW(R=R, phi=l, method="direct", denom_tol=denom_tol).fit(X, Y)
        m, flagged = nw.predict(x, return_flags=True)
    except gfi.Error as e:
        return refused("fourier-nw", e, {"x", "y", "R", "phi", "method", "denom_tol"},
                       must_run=plain(Xv, Yv, xv) and 0.05 <= R <= 12 and denom_tol in (None, 0.0, 1e-8, 0.5))
    assert finite(Xv, Yv, xv, [R]), "non-finite input accepted"
    m2 = m.reshape(M, -1)
    ok = ~flagged
    assert finite(m2[ok]), "a non-finite value in an unflagged row"
    assert np.all(np.isnan(m2[flagged])), "a flagged row is not NaN"
    K = np.ones((M, N))
    for j in range(D):
        K *= sinc(R * (xv[:, None, j] - Xv[None, :, j])) ** l
    Y2 = Yv.reshape(N, -1)
    den, absden = K.sum(axis=1), np.abs(K).sum(axis=1)
    phase = R * max(np.max(np.abs(Xv)), np.max(np.abs(xv)), 1.0)
    with np.errstate(all="ignore"):
        ref = (K @ Y2) / den[:, None]
        # the ratio's condition: sum |K| / |sum K|
        tol = 64 * EPS * (phase + N) * l * D * (absden / np.abs(den))[:, None] * np.max(np.abs(Y2)) * 4
    tol = np.broadcast_to(tol, ref.shape)
    good = ok[:, None] & np.isfinite(ref) & np.isfinite(tol)
    assert np.all(np.abs(m2 - ref)[good] <= tol[good] + 1e-300), "max error %g" % np.max(np.abs(m2 - ref)[good])
    COUNTS[("fourier-nw", "flagged" if flagged.any() else "equal")] += 1


# ---- 4. softmax attention ----------------------------------------------------

@budget(60)
@given(st.data())
def test_softmax_attention(data):
    L = data.draw(st.integers(1, 8))
    D = data.draw(st.integers(1, 4))
    Dv = data.draw(st.integers(1, 3))
    heads = data.draw(st.sampled_from([None, 1, 2]))
    sh = (lambda d: (L, d)) if heads is None else (lambda d: (heads, L, d))
    Q, Qv = data.draw(arrays(sh(D)))
    K, Kv = data.draw(arrays(sh(D)))
    V, Vv = data.draw(arrays(sh(Dv)))
    scale = data.draw(st.sampled_from([None, None, 0.5, 3.0, 0.0, -1.0, np.inf, 1e300]))
    causal = data.draw(st.booleans())
    try:
        H = gfi.softmax_attention(Q, K, V, scale=scale, causal=causal)
    except gfi.Error as e:
        return refused("softmax-attention", e, {"Q", "K", "V", "scale"},
                       must_run=plain(Qv, Kv, Vv) and scale in (None, 0.5, 3.0))
    assert finite(Qv, Kv, Vv), "non-finite input accepted"
    assert finite(H), "non-finite result"
    s = 1 / np.sqrt(D) if scale is None else scale
    q3, k3, v3 = (a.reshape((-1,) + a.shape[-2:]) for a in (Qv, Kv, Vv))
    ref = np.empty(q3.shape[:2] + (Dv,))
    with np.errstate(all="ignore"):
        for h in range(q3.shape[0]):
            S = s * (q3[h] @ k3[h].T)
            if causal:
                S = np.where(np.tril(np.ones((L, L), bool)), S, -np.inf)
            P = np.exp(S - S.max(axis=1, keepdims=True))
            ref[h] = (P / P.sum(axis=1, keepdims=True)) @ v3[h]
    logit = s * np.max(np.abs(q3)) * np.max(np.abs(k3)) * D
    if finite(ref):
        # a logit error of logit * eps moves a weight by that much, relative
        tol = 64 * EPS * (1 + logit) * L * np.max(np.abs(v3)) + 1e-300
        assert np.all(np.abs(H.reshape(ref.shape) - ref) <= tol), "max error %g > %g" % (
            np.max(np.abs(H.reshape(ref.shape) - ref)), tol)
    COUNTS[("softmax-attention", "equal")] += 1


# ---- 5. Fourier attention (eq. 15), flagged rows ------------------------------

@budget(60)
@given(st.data())
def test_fourier_attention(data):
    L = data.draw(st.integers(1, 8))
    D = data.draw(st.integers(1, 3))
    Dv = data.draw(st.integers(1, 3))
    Q, Qv = data.draw(arrays((L, D)))
    K, Kv = data.draw(arrays((L, D)))
    V, Vv = data.draw(arrays((L, Dv), mode=data.draw(st.sampled_from(["ordinary", "ordinary", "tiny",
                                                                        "nonfinite"]))))
    l = data.draw(st.integers(1, 8))
    R = data.draw(RADII)
    causal = data.draw(st.booleans())
    try:
        H, ctx = gfi.fourier_attention(Q, K, V, R=R, phi=l, causal=causal, return_context=True)
    except gfi.Error as e:
        return refused("fourier-attention", e, {"Q", "K", "V", "R", "phi", "denom_tol"})
    assert finite(Qv, Kv, Vv, [R]), "non-finite input accepted"
    W = np.ones((L, L))
    for j in range(D):
        W *= sinc(R * (Qv[:, None, j] - Kv[None, :, j])) ** l
    if causal:
        W = np.tril(W)
    nan_rows = np.isnan(H).any(axis=1)
    assert int(ctx.nflagged[0]) == int(nan_rows.sum()), "NaN rows %d, flagged %d" % (nan_rows.sum(),
                                                                                    ctx.nflagged[0])
    assert finite(H[~nan_rows]), "an infinity in a result row"
    den, absden = W.sum(axis=1), np.abs(W).sum(axis=1)
    phase = R * max(np.max(np.abs(Qv)), np.max(np.abs(Kv)), 1.0)
    with np.errstate(all="ignore"):
        ref = (W @ Vv) / den[:, None]
        tol = 64 * EPS * (phase + L) * l * D * (absden / np.abs(den))[:, None] * np.max(np.abs(Vv)) * 4
    tol = np.broadcast_to(tol, ref.shape)
    good = ~nan_rows[:, None] & np.isfinite(ref) & np.isfinite(tol)
    assert np.all(np.abs(H - ref)[good] <= tol[good] + 1e-300), "max error %g" % np.max(np.abs(H - ref)[good])
    COUNTS[("fourier-attention", "flagged" if nan_rows.any() else "equal")] += 1


# ---- 6. batched Fourier attention with masks and dtypes ----------------------

@budget(60)
@given(st.data())
def test_fourier_attention_batch(data):
    B, Hh = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    Lq, Lk = data.draw(st.integers(1, 5)), data.draw(st.integers(0, 5))
    D, Dv = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    dt = data.draw(st.sampled_from([np.float64, np.float32]))
    Q, Qv = data.draw(arrays((B, Hh, Lq, D), mode="ordinary"))
    K, Kv = data.draw(arrays((B, Hh, Lk, D)))
    V, Vv = data.draw(arrays((B, Hh, Lk, Dv), mode="ordinary"))
    Q, K, V = (np.asarray(a, dtype=dt) for a in (Q, K, V))
    Qv, Kv, Vv = (a.astype(dt).astype(float) for a in (Qv, Kv, Vv))
    kpm = data.draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=B * Lk, max_size=B * Lk)))
    kpm = None if kpm is None else np.array(kpm, dtype=bool).reshape(B, Lk)
    R = data.draw(st.one_of(st.floats(0.2, 4), st.floats(0.2, 4), st.sampled_from([0.0, np.nan])))
    l = data.draw(st.sampled_from([2, 4, 6]))  # even: no cancelling denominators
    empty = data.draw(st.sampled_from(["nan", "zero", "nan", "zero", "error"]))
    try:
        H, ctx = gfi.fourier_attention_batch(Q, K, V, R=R, phi=l, key_padding_mask=kpm, empty=empty,
                                             return_context=True)
    except gfi.Error as e:
        return refused("attention-batch", e, {"Q", "K", "V", "R", "phi", "key_padding_mask", "mask", "eps",
                                              "empty"})
    assert finite(Qv, Kv, Vv, [R]), "non-finite input accepted"
    Hd = np.asarray(H, dtype=float)
    assert Hd.shape == (B, Hh, Lq, Dv), "misshapen result"
    nan_rows = np.isnan(Hd).any(axis=3)
    counted = int(ctx.nflagged) + (int(ctx.nempty) if empty == "nan" else 0)
    assert nan_rows.any() == (counted > 0), "NaN rows not counted as empty/flagged"
    assert empty == "nan" or not nan_rows.any(), "NaN rows with empty=%r" % empty
    assert finite(Hd[~nan_rows]), "an infinity in a result row"
    eps32 = np.finfo(dt).eps
    for b in range(B):
        for h in range(Hh):
            W = np.ones((Lq, Lk))
            for j in range(D):
                W *= sinc(R * (Qv[b, h][:, None, j] - Kv[b, h][None, :, j])) ** l
            if kpm is not None:
                W[:, kpm[b]] = 0
            den = W.sum(axis=1)
            with np.errstate(all="ignore"):
                ref = np.where(den[:, None] > 0, (W @ Vv[b, h]) / den[:, None], 0.0)
            tol = 256 * eps32 * (1 + R * 8) * l * D * (1 + np.max(np.abs(Vv), initial=0))
            big = (den > 1e-3 * np.max(np.abs(W), initial=0) * max(Lk, 1)) & ~nan_rows[b, h]
            assert np.all(np.abs(Hd[b, h] - ref)[big] <= tol), "max error %g" % np.max(np.abs(Hd[b, h] - ref))
    COUNTS[("attention-batch", "equal")] += 1


# ---- 7. a model's density: normal with random mean and scale ------------------

@budget(40)
@given(st.data())
def test_model_pdf(data):
    mu = data.draw(st.one_of(ORDINARY, HUGE, NONFINITE))
    sd = data.draw(st.one_of(st.floats(0.1, 5), TINY, HUGE, NONFINITE))
    M = data.draw(st.integers(1, 10))
    x, xv = data.draw(arrays((M, 1)))
    with np.errstate(all="ignore"):
        spec = "normal:mean=%r;cov=%r" % (float(mu), float(np.float64(sd) ** 2))
    try:
        p = gfi.Model(spec).pdf(x)
    except gfi.Error as e:
        return refused("model-pdf", e, {"spec", "x", "model"})
    var = float(spec.split("cov=")[1])
    assert finite([mu, var], xv), "non-finite input accepted: %s" % spec
    assert finite(p), "non-finite density"
    with np.errstate(all="ignore"):
        ref = np.exp(-0.5 * (xv[:, 0] - mu) ** 2 / var) / np.sqrt(2 * np.pi * var)
    if finite(ref):
        assert np.all(np.abs(np.ravel(p) - ref) <= 1e-12 * np.max(ref) + 1e-300 + 1e-12 * ref * (
            1 + (xv[:, 0] - mu) ** 2 / var)), (p, ref)
    COUNTS[("model-pdf", "equal")] += 1


# ---- 8. the criteria: LSCV and LOOCV at fixed radii, option values --------------

@budget(50)
@given(st.data())
def test_criteria(data):
    N = data.draw(st.integers(1, 15))
    D = data.draw(st.integers(1, 2))
    X, Xv = data.draw(arrays((N, D)))
    Y, Yv = data.draw(arrays((N,)))
    R = data.draw(RADII)
    l = data.draw(st.sampled_from([2, 4]))
    threads = data.draw(st.sampled_from([None, 1, 2, 0, -3]))
    which = data.draw(st.sampled_from(["lscv", "loocv"]))
    try:
        if which == "lscv":
            out = gfi.lscv(X, R, phi=l, method="direct", threads=threads)
        else:
            out = gfi.loocv(X, Y, R, phi=l, method="direct", threads=threads)
    except gfi.Error as e:
        return refused("criteria", e, {"data", "x", "y", "R", "phi", "threads", "method", "denom_tol"})
    assert finite(Xv, [R]) and (which == "lscv" or finite(Yv)), "non-finite input accepted"
    vals = np.ravel(np.asarray(out[0] if isinstance(out, tuple) else out, dtype=float))
    assert finite(vals), "non-finite criterion %r" % (out,)
    if which == "lscv" and N >= 2:
        # LSCV = int p^2 - (2 / N) sum_i p_{-i}(x_i); its second part by the formula
        u = np.ones((N, N))
        for j in range(D):
            u *= sinc(R * (Xv[:, None, j] - Xv[None, :, j])) ** l
        A = (R / pow_A(l)) ** D
        loo = A * (u.sum(axis=1) - np.diag(u)) / (N - 1)
        # int p^2 is >= 0: LSCV >= -(2 / N) sum loo
        assert vals[0] >= -2 * np.mean(loo) - 1e-9 * (1 + abs(vals[0])) * A, (vals[0], np.mean(loo))
    COUNTS[("criteria", "equal")] += 1


# ---- messages of the cases once reported badly ---------------------------------

def test_named_cases():
    x = np.random.default_rng(1).normal(size=(50, 1))
    with pytest.raises(gfi.EmptyError) as e:
        gfi.select_radius_lscv(x[:1])
    assert e.value.param == "data" and "data has 1 row" in str(e.value)
    with pytest.raises(gfi.RadiusError) as e:
        gfi.select_radius_lscv(x, R_range=(0, 1))
    assert e.value.param == "R_range" and "0 < lo < hi" in str(e.value)
    with pytest.raises(gfi.RadiusError):
        gfi.select_radius_lscv(x, R_range=(2, 1))
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.softmax_attention(np.array([[1e200, 1e200]]), np.array([[1e200, 1e200]]), np.ones((1, 2)))
    assert e.value.param == "Q" and "every input is finite" in str(e.value)
    with pytest.raises(gfi.Error) as e:
        gfi.fourier_attention_batch(np.zeros((1, 1, 3, 2)), np.zeros((1, 1, 0, 2)), np.zeros((1, 1, 0, 2)), R=1)
    assert e.value.param == "K" and "(1, 1, 0, 2)" in str(e.value)
