"""Nadaraya-Watson: the CLI's bits, statsmodels KernelReg to 1e-12, flags."""
import numpy as np
import pytest

import gfi
from conftest import bits_equal, meta, table


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, size=(400, 2))
    y = np.column_stack([np.sin(x[:, 0]) + 0.1 * rng.normal(size=400), x[:, 0] * x[:, 1]])
    return x, y


@pytest.mark.parametrize("method", ["direct", "fast"])
def test_fourier_nw_vector_equal_cli(cli, npy, tmp_path, xy, method):
    x, y = xy
    at = np.random.default_rng(2).uniform(-1.5, 1.5, size=(30, 2))
    out = tmp_path / "f.npy"
    cli("regress", "--data", npy(np.hstack([x, y])), "--dim", 2, "--phi", "pow:4", "--R", "2,3", "--at", npy(at),
        "--method", method, "--out", out)
    nw = gfi.FourierNW(R=[2, 3], phi=4, method=method).fit(x, y)
    f = nw.predict(at)
    assert f.shape == (30, 2) and bits_equal(f, np.load(out))
    # brute force
    K = np.prod(np.sinc((at[:, None, :] - x[None]) * np.array([2, 3]) / np.pi) ** 4, axis=2)
    ref = K @ y / K.sum(axis=1, keepdims=True)
    assert np.max(np.abs(f - ref)) < 1e-9


def test_gauss_nw_equal_cli_and_statsmodels(cli, npy, tmp_path, xy):
    KernelReg = pytest.importorskip("statsmodels.nonparametric.kernel_regression").KernelReg
    x, y = xy
    at = np.random.default_rng(3).uniform(-1.5, 1.5, size=(20, 2))
    out = tmp_path / "f.npy"
    cli("regress", "--data", npy(np.hstack([x, y[:, :1]])), "--dim", 2, "--kernel", "gauss", "--bandwidth",
        "0.3,0.5", "--at", npy(at), "--out", out, "--method", "direct")
    nw = gfi.GaussianNW(bandwidth=[0.3, 0.5], method="direct").fit(x, y[:, 0])
    f = nw.predict(at)
    assert f.shape == (20,) and bits_equal(f, np.load(out))
    kr = KernelReg(y[:, 0], x, var_type="cc", reg_type="lc", bw=[0.3, 0.5])
    ref, _ = kr.fit(at)
    assert np.max(np.abs(f - ref)) <= 1e-12 * np.max(np.abs(ref))


def test_loocv_radius_equal_cli(cli, npy, tmp_path, xy):
    x, y = xy
    x1, y1 = x[:200, :1].copy(), y[:200, :1].copy()
    out = tmp_path / "f.npy"
    r = cli("regress", "--data", npy(np.hstack([x1, y1])), "--R", "loocv", "--at", npy([0.0, 0.5]), "--out", out)
    nw = gfi.FourierNW(R="loocv").fit(x1, y1)
    assert float(meta(r.stdout, "R")) == nw.R_[0]
    assert bits_equal(nw.predict([0.0, 0.5]).reshape(-1), np.load(out))


def test_loocv_poly_radius_equal_cli(cli, npy, tmp_path, xy):
    # a polynomial phi with odd powers (0.3 z + 2 z^3): the same LOO-CV radius and fit
    x, y = xy
    x1, y1 = x[:200, :1].copy(), y[:200, :1].copy()
    out = tmp_path / "f.npy"
    r = cli("regress", "--data", npy(np.hstack([x1, y1])), "--phi", "poly:0.3,0,2", "--R", "loocv",
            "--at", npy([0.0, 0.5]), "--out", out)
    nw = gfi.FourierNW(R="loocv", phi=[0.3, 0, 2]).fit(x1, y1)
    assert float(meta(r.stdout, "R")) == nw.R_[0]
    assert bits_equal(nw.predict([0.0, 0.5]).reshape(-1), np.load(out))


def test_flags_mask_odd_l():
    # phi = z^1: weights of both signs; far from the data every sinc factor is
    # tiny and the sum cancels for some queries: those rows are NaN and flagged
    x = np.array([0.0, 1.0])
    y = np.array([1.0, 2.0])
    nw = gfi.FourierNW(R=np.pi, phi=1).fit(x, y)
    at = np.array([0.0, 0.5, 2.0])  # at 2.0 both sinc(2 pi), sinc(pi) vanish (to rounding): flagged
    f, bad = nw.predict(at, return_flags=True)
    assert bad.dtype == bool and bad.tolist() == [False, False, True]
    assert np.isnan(f[2]) and not np.isnan(f[:2]).any() and nw.nflagged_ == 1 and nw.flags_[2] in (1, 3)
    f, bad, den = nw.predict(at, return_flags=True, return_denominator=True)
    assert den[0] == 1.0


def test_bad_input_nw(xy):
    x, y = xy
    with pytest.raises(gfi.DimensionError) as e:
        gfi.FourierNW(R=1).fit(x, y[:10])
    assert e.value.param == "y"
    with pytest.raises(gfi.RadiusError) as e:
        gfi.FourierNW(R=[1, 0]).fit(x, y)
    assert e.value.param == "R"
    yb = y.copy()
    yb[3, 1] = np.nan
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.FourierNW(R=1).fit(x, yb)
    assert e.value.param == "y"
    with pytest.raises(gfi.DimensionError):
        gfi.FourierNW(R=1).fit(x, y).predict(np.zeros((2, 3)))
    with pytest.raises(gfi.BandwidthError):
        gfi.GaussianNW(bandwidth=0).fit(x, y)
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierNW(R=1, denom_tol=2).fit(x, y)
    assert e.value.param == "denom_tol"
    with pytest.raises(gfi.InvalidArgument):
        gfi.FourierNW(R="lscv").fit(x, y)


@pytest.mark.parametrize("method", ["direct", "fast"])
def test_nw_grid_equal_cli_and_points(cli, npy, tmp_path, xy, method):
    # predict_grid: the CLI's --grid to the bit, and the same numbers as
    # predict at the grid's points (last axis fastest), vector responses
    x, y = xy
    out = tmp_path / "g.npy"
    cli("regress", "--data", npy(np.hstack([x, y])), "--dim", 2, "--phi", "pow:4", "--R", "2,3",
        "--grid", "-1.5:1.5:7,-1:2:5", "--method", method, "--out", out)
    nw = gfi.FourierNW(R=[2, 3], phi=4, method=method).fit(x, y)
    (a0, a1), g = nw.predict_grid(n=[7, 5], lo=[-1.5, -1], hi=[1.5, 2])
    assert g.shape == (7, 5, 2) and np.array_equal(a0, np.linspace(-1.5, 1.5, 7))
    ref = np.load(out)
    pts = np.stack(np.meshgrid(a0, a1, indexing="ij"), axis=-1).reshape(-1, 2)
    if method == "direct":
        assert bits_equal(g.reshape(35, 2), ref) and bits_equal(nw.predict(pts), ref)
    else:
        # the CLI evaluates a grid's rows as points; the tensor route of
        # gfi_nw_eval_grid rounds differently, both within the printed bound
        assert nw.route_["route"] == "fast"
        assert np.max(np.abs(g.reshape(35, 2) - ref)) <= 2 * nw.route_["tol"] * np.max(np.abs(y))
    # 1-D y: values of shape n; the default box is the design's, widened
    (b0, b1), h = gfi.GaussianNW(bandwidth=0.4).fit(x, y[:, 0]).predict_grid(n=4)
    assert h.shape == (4, 4) and b0[0] < x[:, 0].min() and b1[-1] > x[:, 1].max()
    with pytest.raises(gfi.InvalidArgument) as e:
        nw.predict_grid(n=0)
    assert e.value.param == "n"


def test_huge_responses_as_the_cli(cli, npy):
    """Responses near the largest double: scaled by a power of 2 (as the
    CLI), so 1e308 gives finite values (the CLI's bits); an estimate that
    does overflow raises RangeError naming y, where the CLI stops."""
    x = np.linspace(-3, 3, 200)
    q = np.linspace(-2, 2, 5)
    for v in (1e308, -1e308):
        y = np.full(200, v)
        y[::3] = v / 3
        nw = gfi.FourierNW(R=2.0).fit(x, y)
        p = nw.predict(q)
        assert np.all(np.isfinite(p)) and not nw.flags_.any()
        r = cli("regress", "--data", npy(np.c_[x, y]), "--R", "2", "--at", npy(q[:, None]))
        assert bits_equal(p, table(r.stdout)[:, 1])
        assert np.all(np.isfinite(nw.predict_grid(7)[1]))
        assert np.all(np.isfinite(gfi.GaussianNW(0.3).fit(x, y).predict(q)))
    M = np.finfo(float).max
    xr = np.random.default_rng(0).normal(size=50)
    nw = gfi.FourierNW(R=3.0, phi=4, method="direct").fit(xr, np.full(50, M))
    qq = np.linspace(-30, 30, 2001)
    with pytest.raises(gfi.RangeError) as e:
        nw.predict(qq)
    assert e.value.param == "y" and "overflows" in str(e.value)
    r = cli("regress", "--data", npy(np.c_[xr, np.full(50, M)]), "--R", "3", "--method", "direct",
            "--at", npy(qq[:, None]), ok=False)
    assert r.returncode != 0 and "overflows" in r.stderr
