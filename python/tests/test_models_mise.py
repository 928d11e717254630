"""Truth models and MISE: the CLI's bits (gfi sample, pdf, mise, ropt)."""
import numpy as np
import pytest

import gfi
from conftest import bits_equal, table


@pytest.mark.parametrize("spec,dim", [("mw:6", 1), ("normal:cov=1,0.5,0.5,1", 2), ("t:3", 1), ("laplace", 2)])
def test_sample_and_pdf_equal_cli(cli, npy, tmp_path, spec, dim):
    out = tmp_path / "x.npy"
    cli("sample", "--model", spec, "--dim", dim, "--n", 500, "--seed", 42, "--out", out)
    m = gfi.Model(spec, dim=dim)
    x = m.sample(500, seed=42)
    assert bits_equal(x, np.load(out).reshape(x.shape))
    assert not bits_equal(x, m.sample(500, seed=42, stream=1))
    pout = tmp_path / "p.npy"
    cli("pdf", "--model", spec, "--dim", dim, "--at", npy(x[:50]), "--out", pout)
    assert bits_equal(m.pdf(x[:50]), np.load(pout))


def test_cf_and_pdf_values():
    m = gfi.Model("normal:cov=1,0.5,0.5,1", dim=2)
    t = np.array([[0.3, -0.2], [1.0, 2.0]])
    C = np.array([[1, 0.5], [0.5, 1]])
    ref = np.exp(-0.5 * np.einsum("ij,jk,ik->i", t, C, t))
    assert np.max(np.abs(m.cf(t) - ref)) < 1e-15
    assert abs(gfi.Model("normal").pdf([0.0])[0] - 1 / np.sqrt(2 * np.pi)) < 1e-16
    assert "mixture" in m.describe() or "normal" in m.describe()


def test_mise_exact_mc_ropt_equal_cli(cli):
    r = cli("mise", "--model", "mw:6", "--n", 1000, "--phi", "pow:4", "--R", 3, "--exact")
    row = table(r.stdout)[0]
    e = gfi.mise_exact("mw:6", R=3, N=1000, phi=4)
    assert (e["mise"], e["bias2"], e["var"]) == (row[2], row[4], row[5])
    r = cli("mise", "--model", "normal", "--dim", 2, "--n", 100, "--phi", "pow:2", "--R", "2,1.5", "--mc", 6,
            "--seed", 3)
    row = table(r.stdout)[0]
    mc, ises = gfi.mise_mc("normal", R=[2, 1.5], N=100, nreps=6, seed=3, phi=2, dim=2, return_ise=True)
    assert (mc["mise"], mc["se"], mc["bias2"], mc["var"]) == tuple(row[2:6]) and ises.shape == (6,)
    assert mc["mise"] == np.mean(ises) or abs(mc["mise"] - np.mean(ises)) < 1e-15
    r = cli("ropt", "--model", "mw:6", "--n", 1000, "--phi", "pow:4")
    row = table(r.stdout)[0]
    ropt, res = gfi.optimal_radius("mw:6", N=1000, phi=4)
    assert (ropt, res["mise"]) == (row[1], row[2])
    h, g = gfi.optimal_bandwidth("mw:6", N=1000)
    assert (h, g["mise"]) == (row[5], row[6])


def test_mise_gauss_exact_equal_cli(cli):
    r = cli("mise", "--model", "mw:2", "--n", 500, "--kernel", "gauss", "--bandwidth", "0.25", "--exact")
    row = table(r.stdout)[0]
    g = gfi.mise_gauss_exact("mw:2", N=500, H=0.25)
    assert g["mise"] in row


def test_ise_plancherel_against_mc_mean():
    m = gfi.Model("normal")
    x = m.sample(300, seed=1)
    ise = gfi.ise_plancherel(m, x, R=2.0)
    # exact ISE vs a fine Riemann sum of (p_hat - p)^2
    t = np.linspace(-12, 12, 24001)
    p_hat = gfi.FourierKDE(R=2.0, method="direct").fit(x).evaluate(t)
    riemann = np.sum((p_hat - m.pdf(t)) ** 2) * (t[1] - t[0])
    assert abs(ise - riemann) < 1e-4 * ise


def test_bad_input_models_mise():
    with pytest.raises(gfi.ModelError) as e:
        gfi.Model("gamma:2")
    assert e.value.param == "spec" and isinstance(e.value, ValueError)
    with pytest.raises(gfi.Error):
        gfi.Model("normal:cov=1,2,2,1", dim=2)
    with pytest.raises(gfi.DimensionError):
        gfi.Model("normal", dim=0)
    m = gfi.Model("normal")
    with pytest.raises(gfi.InvalidArgument) as e:
        m.sample(-1, seed=1)
    assert e.value.param == "n"
    with pytest.raises(gfi.InvalidArgument) as e:
        m.sample(5, seed=-1)
    assert e.value.param == "seed"
    with pytest.raises(gfi.NonFiniteError):
        m.pdf([np.nan])
    with pytest.raises(gfi.DimensionError):
        m.cf(np.zeros((2, 2)))
    with pytest.raises(gfi.RadiusError) as e:
        gfi.mise_exact("normal", R=0, N=10)
    assert e.value.param == "R"
    with pytest.raises(gfi.EmptyError) as e:
        gfi.mise_exact("normal", R=1, N=0)
    assert e.value.param == "N"
    with pytest.raises(gfi.UnsupportedError) as e:
        gfi.mise_exact("uniform", R=1, N=10)
    assert e.value.param == "model"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.mise_mc("normal", R=1, N=10, nreps=1)
    assert e.value.param == "nreps"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.mise_mc("normal", R=1, N=10, nreps=3, ise="exact")
    assert e.value.param == "ise"
    with pytest.raises(gfi.RadiusError):
        gfi.optimal_radius("normal", N=10, direction=[-1.0])
    with pytest.raises(gfi.UnsupportedError):
        gfi.mise_gauss_exact("laplace", N=10, H=0.5)
    with pytest.raises(gfi.BandwidthError):
        gfi.mise_gauss_exact("normal", N=10, H=[[1.0, 2.0], [2.0, 1.0]], dim=2)
    with pytest.raises(gfi.UnsupportedError):
        gfi.optimal_bandwidth("laplace", N=10)
    with pytest.raises(gfi.NonFiniteError):
        gfi.ise_plancherel("normal", [0.0, np.nan], R=1)


def test_options_reach_the_library(cli):
    # fields after the embedded gfi_opts (struct layout): parts, ise, the scan range
    a = gfi.mise_mc("normal", R=2, N=50, nreps=3, seed=1, parts=False)
    assert np.isnan(a["bias2"]) and np.isnan(a["var"])
    r = cli("mise", "--model", "normal", "--n", 50, "--phi", "pow:4", "--R", 2, "--mc", 3, "--seed", 1,
            "--no-parts", "--ise", "grid")
    b = gfi.mise_mc("normal", R=2, N=50, nreps=3, seed=1, parts=False, ise="grid")
    assert b["mise"] == table(r.stdout)[0][2] and b["mise"] != a["mise"]
    s = gfi.select_radius_lscv(gfi.Model("normal").sample(300, seed=1), R_range=(0.5, 5), nscan=7)
    assert s.R_range == (0.5, 5) and s.nscan == 7


def test_mise_polynomial_kernel(cli):
    # z^4 as a polynomial: the same MISE as pow:4 to rounding; a mixture: the CLI's bits;
    # attention takes the sinc families only: the flat-top is refused by name
    a = gfi.mise_exact("mw:6", R=3, N=1000, phi=4)["mise"]
    b = gfi.mise_exact("mw:6", R=3, N=1000, phi="poly:0,0,0,1")["mise"]
    assert abs(a - b) < 1e-10 * a
    c = gfi.mise_exact("mw:6", R=3, N=1000, phi="poly:0,0.5,0,0.5")
    r = cli("mise", "--model", "mw:6", "--n", 1000, "--phi", "poly:0,0.5,0,0.5", "--R", 3, "--exact")
    row = table(r.stdout)[0]
    assert (c["mise"], c["bias2"], c["var"]) == (row[2], row[4], row[5]) and c["mise"] != a
    with pytest.raises(gfi.UnsupportedError) as e:
        gfi.fourier_attention(np.zeros((3, 2)), np.zeros((3, 2)), np.ones((3, 1)), 1.0, phi="flattop:0.5")
    assert e.value.param == "phi"


def test_budgets_and_parameter_names():
    """The CLI's budgets and checks, with the parameter at fault named: a
    negative nscan (which would wrap in size_t), N x reps above 1e11, a bad
    denom_tol or resolution; all refused at once, before any work."""
    x = gfi.Model("normal").sample(200, seed=1)
    y = np.sin(x)
    for bad in (-1, 2, 10 ** 6, 2.5, True):
        with pytest.raises(gfi.InvalidArgument) as e:
            gfi.select_radius_lscv(x, nscan=bad)
        assert e.value.param == "nscan"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.select_radius_loocv(x, y, nscan=-5)
    assert e.value.param == "nscan"
    with pytest.raises(gfi.RangeError) as e:
        gfi.mise_mc("normal", R=2, N=10 ** 6, nreps=10 ** 7)
    assert e.value.param == "nreps" and "1e+11" in str(e.value)
    for bad in (-1, float("nan"), 1.5, "x"):
        with pytest.raises(gfi.InvalidArgument) as e:
            gfi.loocv(x, y, 2.0, denom_tol=bad)
        assert e.value.param == "denom_tol"
        with pytest.raises(gfi.InvalidArgument) as e:
            gfi.select_radius_loocv(x, y, denom_tol=bad)
        assert e.value.param == "denom_tol"
    for bad in (0, -1, float("inf"), "x"):
        with pytest.raises(gfi.InvalidArgument) as e:
            gfi.mise_exact("normal", R=2, N=100, resolution=bad)
        assert e.value.param == "resolution"
    with pytest.raises(gfi.RadiusError) as e:
        gfi.select_radius_lscv(x, R_range=(3, 1))
    assert e.value.param == "R_range"
    # the defaults and the bounds' edges still run
    assert gfi.select_radius_lscv(x, nscan=3).nscan == 3
    assert gfi.loocv(x, y, 2.0, denom_tol=0)[0] > 0
    assert gfi.mise_mc("normal", R=2, N=50, nreps=2)["nreps"] == 2


def test_parameter_names_come_from_the_library():
    """The library itself refuses and names the parameter (gfi_error_param):
    a wrapped nscan (2^64 - 1) and N x nreps beyond the budget through the
    bare C calls, and the options check (gfi_opts_check) behind make_opts."""
    from gfi import _lib, errors
    x = np.ascontiguousarray(gfi.Model("normal").sample(100, seed=2))
    k = gfi.kernels.make_kernel(4)
    so = _lib.SelectOpts()
    _lib.lib.gfi_select_default_opts(_lib.ref(so))
    so.nscan = 2 ** 64 - 1
    res = _lib.SelectResult()
    st = _lib.lib.gfi_select_lscv(_lib.ref(k), 100, 1, _lib.addr(x), _lib.ref(so), _lib.ref(res), None)
    assert st == errors.GFI_EINVAL and _lib.lib.gfi_error_param(st) == b"nscan"
    assert _lib.lib.gfi_error_param(st) == b""  # read once
    m = gfi.Model("normal")
    mo = _lib.MiseOpts()
    _lib.lib.gfi_mise_default_opts(_lib.ref(mo))
    R = np.array([2.0])
    st = _lib.lib.gfi_mise_mc(m.ptr, _lib.ref(k), 10 ** 6,
                              _lib.addr(R), 10 ** 7, _lib.ref(mo), _lib.ref(_lib.MiseResult()), None)
    assert st == errors.GFI_ERANGE and _lib.lib.gfi_error_param(st) == b"nreps"
    # max_points raises the budget the library applies
    r = gfi.mise_mc("normal", R=2, N=50, nreps=3, max_points=150)
    assert r["nreps"] == 3
    with pytest.raises(gfi.RangeError) as e:
        gfi.mise_mc("normal", R=2, N=50, nreps=4, max_points=150)
    assert e.value.param == "nreps" and "max_points = 150 " in str(e.value)
    o = _lib.Opts()
    _lib.lib.gfi_default_opts(_lib.ref(o))
    for field, bad, name in (("tol", -0.5, "tol"), ("method", 9, "method"), ("nthreads", -3, "nthreads")):
        _lib.lib.gfi_default_opts(_lib.ref(o))
        setattr(o, field, bad)
        st = _lib.lib.gfi_opts_check(_lib.ref(o))
        assert st == errors.GFI_EINVAL and _lib.lib.gfi_error_param(st) == name.encode()
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.lscv(x, 2.0, tol=float("nan"))
    assert e.value.param == "tol"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.loocv(x, np.sin(x), 2.0, denom_tol=-1)
    assert e.value.param == "denom_tol" and "nscan" not in str(e.value)


def test_attention_options_are_named_by_the_library():
    """Batched attention's eps, denom_tol and dropout: refused by the
    library (it blamed eps for each before), each by its name."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 1, 4, 2))
    for kw, name in ((dict(eps=-1.0), "eps"), (dict(denom_tol=-1.0), "denom_tol"), (dict(denom_tol=1.0), "denom_tol"),
                     (dict(dropout=1.5), "dropout"), (dict(dropout=float("nan")), "dropout")):
        with pytest.raises(gfi.InvalidArgument) as e:
            gfi.fourier_attention_batch(q, q, q, 1.0, **kw)
        assert e.value.param == name, (kw, e.value.param)
    gfi.fourier_attention_batch(q, q, q, 1.0, dropout=0.5, seed=1)


def test_library_names_data_kernel_and_attention_parameters():
    """The data, radius, weight, bandwidth, kernel and attention checks are
    named by the library (gfi_error_param), the package only renames: these
    calls pass no guess of their own, so a check the library left unnamed
    would give param None."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    y = np.sin(x)
    ybad = y.copy()
    ybad[17] = np.nan
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.FourierNW(R=2).fit(x, ybad)
    assert e.value.param == "y" and "y[17, 0]" in str(e.value)
    xbad = x.copy()
    xbad[5] = np.inf
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.GaussianNW(bandwidth=0.3).fit(xbad, y)
    assert e.value.param == "x" and "x[5, 0]" in str(e.value)
    w = np.ones(200)
    w[9] = np.nan
    with pytest.raises(gfi.WeightError) as e:
        gfi.FourierKDE(R=2).fit(x, sample_weight=w)
    assert e.value.param == "sample_weight"
    with pytest.raises(gfi.WeightError) as e:
        gfi.GaussianKDE(bandwidth=0.3).fit(x, weights=w)
    assert e.value.param == "weights"
    for est in (gfi.GaussianKDE(bandwidth=np.array([[-1.0]])), gfi.GaussianNW(bandwidth=np.array([[-1.0]]))):
        with pytest.raises(gfi.Error) as e:
            est.fit(x, y) if isinstance(est, gfi.GaussianNW) else est.fit(x)
        assert e.value.param == "bandwidth"
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.FourierKDE(R=2).fit(x).evaluate(np.array([0.0, np.nan]))
    assert e.value.param == "x" and "x[1, 0]" in str(e.value)
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.FourierNW(R=2).fit(x, y).predict(np.array([np.inf]))
    assert e.value.param == "x"
    with pytest.raises(gfi.RangeError) as e:  # a phase R x beyond 2^52
        gfi.FourierNW(R=1e16).fit(x, y)
    assert e.value.param == "R"
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.lscv(xbad, 2.0)
    assert e.value.param == "data"
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.loocv(x, ybad, 2.0)
    assert e.value.param == "y"
    with pytest.raises(gfi.RadiusError) as e:
        gfi.loocv(x, y, -2.0)
    assert e.value.param == "R"
    # attention
    Q = rng.normal(size=(6, 2))
    Kb = Q.copy()
    Kb[2, 1] = np.nan
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.fourier_attention(Q, Q, Q, 1.0, denom_tol=2)
    assert e.value.param == "denom_tol"
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.fourier_attention(Q, Kb, Q, 1.0)
    assert e.value.param == "K" and "K[2, 1]" in str(e.value)
    with pytest.raises(gfi.RadiusError) as e:
        gfi.fourier_attention(Q, Q, Q, -1.0)
    assert e.value.param == "R"
    H, ctx = gfi.fourier_attention(Q, Q, Q, 1.0, return_context=True)
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.fourier_attention_backward(ctx, Kb)
    assert e.value.param == "dH"
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.softmax_attention(Q, Q, Kb)
    assert e.value.param == "V"
    Q4 = Q.reshape(1, 1, 6, 2)
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.fourier_attention_batch(Q4, Kb.reshape(1, 1, 6, 2), Q4, 1.0)
    assert e.value.param == "K"
    with pytest.raises(gfi.RadiusError) as e:
        gfi.fourier_attention_batch(Q4, Q4, Q4, -1.0)
    assert e.value.param == "R"
    # FLT positions
    rpe = gfi.RPE("gauss:s=1")
    p = gfi.Proposal("gauss:tau=1", rpe)
    with pytest.raises(gfi.EmptyError) as e:
        gfi.flt_error_trials(rpe, p, r=4, trials=2, L=0)
    assert e.value.param == "L"
    rpe2 = gfi.RPE("gauss:s=1", 2)
    p2 = gfi.Proposal("gauss:tau=1", rpe2)
    with pytest.raises(gfi.EmptyError) as e:
        gfi.flt_error_trials(rpe2, p2, r=4, trials=2, grid=(3, 0))
    assert e.value.param == "grid"
