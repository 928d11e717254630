"""Density estimators: the same bits as the CLI on the same data and options,
scipy.stats.gaussian_kde to 1e-12, the route report, and bad input."""
import numpy as np
import pytest

import gfi
from conftest import table, meta, bits_equal


@pytest.fixture(scope="module")
def data1():
    return gfi.Model("mw:6").sample(2000, seed=7)


@pytest.fixture(scope="module")
def data2():
    return gfi.Model("normal:cov=1,0.5,0.5,1", dim=2).sample(1500, seed=3)


@pytest.mark.parametrize("method", ["direct", "fast", "auto"])
def test_fourier_1d_points_equal_cli(cli, npy, tmp_path, data1, method):
    at = np.linspace(-3, 3, 41)
    out = tmp_path / "p.npy"
    cli("density", "--data", npy(data1), "--phi", "pow:4", "--R", "2.5", "--at", npy(at), "--method", method,
        "--out", out)
    kde = gfi.FourierKDE(R=2.5, phi=4, method=method).fit(data1)
    p = kde.evaluate(at)
    assert bits_equal(p, np.load(out))
    assert kde.route_["route"] == ("direct" if method == "direct" else kde.route_["route"])
    if method == "fast":
        assert kde.route_["route"] == "fast" and kde.route_["nodes"][0] > 0 and kde.route_["bound_abs"] > 0


def test_fourier_2d_grid_weights_per_axis_equal_cli(cli, npy, tmp_path, data2):
    w = np.abs(np.sin(np.arange(data2.shape[0]))) + 0.1
    out = tmp_path / "p.npy"
    cli("density", "--data", npy(data2), "--weights", npy(w), "--phi", "pow:2", "--R", "1.5,2.5",
        "--grid", "-3:3:31,-2:2:21", "--out", out)
    kde = gfi.FourierKDE(R=[1.5, 2.5], phi="pow:2").fit(data2, weights=w)
    axes, p = kde.evaluate_grid(n=[31, 21], lo=[-3, -2], hi=[3, 2])
    assert p.shape == (31, 21) and np.allclose(axes[0], np.linspace(-3, 3, 31))
    assert bits_equal(p.reshape(-1), np.load(out))
    # the brute-force sum of the formula
    A = gfi._lib.lib.gfi_pow_A(2)
    wn = w / w.sum()
    x, y = axes[0][7], axes[1][5]
    u = np.sinc(1.5 * (x - data2[:, 0]) / np.pi) ** 2 * np.sinc(2.5 * (y - data2[:, 1]) / np.pi) ** 2
    assert abs(p[7, 5] - (1.5 / A) * (2.5 / A) * np.sum(wn * u)) < 1e-12 * p.max()


def test_fourier_lscv_radius_equal_cli(cli, npy, tmp_path, data1):
    out = tmp_path / "p.npy"
    r = cli("density", "--data", npy(data1), "--phi", "pow:4", "--R", "lscv", "--at", npy([0.0, 0.5]),
            "--out", out)
    kde = gfi.FourierKDE(R="lscv").fit(data1)
    assert float(meta(r.stdout, "R")) == kde.R_[0]
    assert bits_equal(kde.evaluate([0.0, 0.5]), np.load(out))
    assert kde.selection_.value < 0 and kde.selection_.nscan == 100


def test_fourier_lscv_poly_equal_cli(cli, npy, tmp_path, data1):
    # a polynomial phi: the same LSCV radius and density from Python and the CLI
    out = tmp_path / "p.npy"
    r = cli("density", "--data", npy(data1), "--phi", "poly:0,1,0,0.5", "--R", "lscv", "--at",
            npy([0.0, 0.5]), "--out", out)
    kde = gfi.FourierKDE(R="lscv", phi=[0, 1, 0, 0.5]).fit(data1)
    assert float(meta(r.stdout, "R")) == kde.R_[0]
    assert bits_equal(kde.evaluate([0.0, 0.5]), np.load(out))


@pytest.mark.parametrize("bw", ["scott", "silverman", "0.3", "pi", "lscv"])
def test_gauss_equal_cli(cli, npy, tmp_path, data1, bw):
    at = np.linspace(-3, 3, 25)
    out = tmp_path / "p.npy"
    cli("density", "--data", npy(data1), "--kernel", "gauss", "--bandwidth", bw, "--at", npy(at), "--out", out)
    g = gfi.GaussianKDE(bandwidth=float(bw) if bw[0].isdigit() else bw).fit(data1)
    assert bits_equal(g.evaluate(at), np.load(out))


def test_gauss_equals_scipy(data2):
    from scipy.stats import gaussian_kde
    at = np.random.default_rng(1).normal(size=(50, 2))
    ref = gaussian_kde(data2.T)(at.T)
    p = gfi.GaussianKDE("scott", method="direct").fit(data2).evaluate(at)
    assert np.max(np.abs(p - ref)) <= 1e-12 * np.max(ref)
    w = np.linspace(1, 2, data2.shape[0])
    ref = gaussian_kde(data2.T, bw_method="silverman", weights=w)(at.T)
    p = gfi.GaussianKDE("silverman", method="direct").fit(data2, weights=w).evaluate(at)
    assert np.max(np.abs(p - ref)) <= 1e-12 * np.max(ref)


def test_full_H_and_int_grid(data2):
    H = np.array([[0.2, 0.05], [0.05, 0.1]])
    g = gfi.GaussianKDE(H).fit(data2)
    axes, p = g.evaluate(16)
    assert len(axes) == 2 and p.shape == (16, 16)
    q = np.array([[axes[0][3], axes[1][9]]])
    assert abs(g.evaluate(q)[0] - p[3, 9]) <= 1e-10 * p.max()


def test_zero_copy_and_readonly(data1):
    x = np.array(data1)
    x.flags.writeable = False  # read-only input is fine: gfi never writes it
    kde = gfi.FourierKDE(R=2).fit(x)
    q = np.linspace(-1, 1, 5)
    q.flags.writeable = False
    p = kde.evaluate(q)
    assert np.all(p > 0)
    from gfi._lib import as_f64
    assert as_f64(x, "x") is x  # no copy of a C-contiguous float64 array
    # non-contiguous and float32 inputs: a documented copy, same values
    assert np.array_equal(kde.evaluate(np.linspace(-1, 1, 10)[::2]), kde.evaluate(np.linspace(-1, 1, 10)[::2].copy()))
    out = np.empty(5)
    assert kde.evaluate(q, out=out) is out


def test_bad_input_density(data1):
    x = data1
    with pytest.raises(gfi.RadiusError) as e:
        gfi.FourierKDE(R=-1).fit(x)
    assert e.value.param == "R" and isinstance(e.value, ValueError) and "radius" in str(e.value).lower()
    bad = x.copy()
    bad[17] = np.nan
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.FourierKDE(R=1).fit(bad)
    assert e.value.param == "data" and "[17, 0]" in str(e.value)
    with pytest.raises(gfi.NonFiniteError) as e:
        gfi.FourierKDE(R=1).fit(x).evaluate([0.0, np.inf])
    assert e.value.param == "x"
    with pytest.raises(gfi.OrderError) as e:
        gfi.FourierKDE(R=1, phi=9).fit(x)
    assert e.value.param == "phi"
    with pytest.raises(gfi.InvalidArgument):
        gfi.FourierKDE(R=1, phi="relu").fit(x)
    with pytest.raises(gfi.EmptyError):
        gfi.FourierKDE(R=1).fit(np.empty(0))
    with pytest.raises(gfi.DimensionError) as e:
        gfi.FourierKDE(R=[1, 2, 3]).fit(x)
    assert e.value.param == "R"
    with pytest.raises(gfi.DimensionError) as e:
        gfi.FourierKDE(R=1).fit(x).evaluate(np.zeros((3, 2)))
    assert e.value.param == "x"
    with pytest.raises(gfi.DimensionError):
        gfi.FourierKDE(R=1).fit(np.zeros((2, 2, 2)))
    with pytest.raises(gfi.WeightError) as e:
        gfi.FourierKDE(R=1).fit(x, weights=-np.ones(x.size))
    assert e.value.param == "weights"
    with pytest.raises(gfi.DimensionError):
        gfi.FourierKDE(R=1).fit(x, weights=np.ones(3))
    with pytest.raises(TypeError):
        gfi.FourierKDE(R=1).fit(x.astype(complex))
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierKDE(R=1, method="quick").fit(x)
    assert e.value.param == "method"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierKDE(R=1, tol=2).fit(x)
    assert e.value.param == "tol"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierKDE(R=1, threads=-2).fit(x)
    assert e.value.param == "threads"
    with pytest.raises(gfi.UnsupportedError):
        gfi.FourierKDE(R=1, method="fast").fit(np.zeros((5, 4)) + np.arange(5)[:, None])
    with pytest.raises(gfi.InvalidArgument):
        gfi.FourierKDE(R=1).evaluate([0.0])  # before fit
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierKDE(R=1).fit(x).evaluate([0.0], out=np.empty(1, dtype=np.float32))
    assert e.value.param == "out"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierKDE(R=1).fit(x).evaluate_grid(n=0)
    assert e.value.param == "n"
    with pytest.raises(gfi.BandwidthError) as e:
        gfi.GaussianKDE(np.array([[1.0, 2.0], [2.0, 1.0]])).fit(np.random.default_rng(0).normal(size=(9, 2)))
    assert e.value.param == "bandwidth"
    with pytest.raises(gfi.BandwidthError):
        gfi.GaussianKDE(-0.1).fit(x)
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.GaussianKDE("wide").fit(x)
    assert e.value.param == "rule"
    with pytest.raises(gfi.InvalidArgument):
        gfi.bandwidth_matrix(x, "lscv", weights=np.ones(x.size))
    with pytest.raises(gfi.UnsupportedError):
        gfi.bandwidth_matrix(np.random.default_rng(0).normal(size=(50, 3)), "pi")


@pytest.mark.parametrize("method", ["direct", "fast"])
def test_polynomial_phi(cli, npy, tmp_path, data1, method):
    # phi(z) = 0.5 z^2 + 0.5 z^4 (gfi_kernel_poly; the CLI's --phi poly:0,0.5,0,0.5):
    # the CLI's bits, and the brute-force sum (R / A) mean_i phi(sinc(R (x - x_i))), A = sum_j a_j A_j
    from gfi.kernels import make_kernel
    k = make_kernel("poly:0,0.5,0,0.5")
    A = 0.5 * gfi._lib.lib.gfi_pow_A(2) + 0.5 * gfi._lib.lib.gfi_pow_A(4)
    assert k.kind == 2 and k.l == 4 and abs(k.A - A) < 1e-14 * A and list(k.coef[:5]) == [0, 0, 0.5, 0, 0.5]
    assert make_kernel([0, 0.5, 0, 0.5]).A == k.A
    at = np.linspace(-2, 2, 9)
    out = tmp_path / "p.npy"
    cli("density", "--data", npy(data1), "--phi", "poly:0,0.5,0,0.5", "--R", "2", "--at", npy(at), "--method",
        method, "--out", out)
    kde = gfi.FourierKDE(R=2.0, phi="poly:0,0.5,0,0.5", method=method).fit(data1)
    p = kde.evaluate(at)
    assert bits_equal(p, np.load(out))
    s = np.sinc(2.0 * (at[:, None] - data1[None]) / np.pi)
    ref = (2.0 / A) * np.mean(0.5 * s ** 2 + 0.5 * s ** 4, axis=1)
    assert np.max(np.abs(p - ref)) <= 1e-12 * np.max(ref) + kde.route_["bound_abs"]
    with pytest.raises(gfi.InvalidArgument):
        make_kernel("poly:0,x")
    with pytest.raises(gfi.OrderError):
        make_kernel([1.0] * 9)
    with pytest.raises(gfi.InvalidArgument):
        make_kernel("poly:0,0,0")  # a[deg] = 0


@pytest.mark.parametrize("method", ["direct", "fast"])
def test_flattop_phi(cli, npy, tmp_path, data1, method):
    # the flat-top kernel (gfi_kernel_flattop; --phi flattop:c): the CLI's bits, and the brute-force
    # sum mean_i R K(R (x - x_i)), K(u) = (cos(c u) - cos(u)) / (pi (1 - c) u^2)
    from gfi.kernels import make_kernel
    c, R = 0.5, 3.0
    k = make_kernel("flattop:0.5")
    assert k.kind == 3 and k.l == 1 and k.coef[0] == c and abs(k.A - 2 * np.pi / (1 + c)) < 1e-15 * k.A
    at = np.linspace(-3, 3, 13)
    out = tmp_path / "p.npy"
    cli("density", "--data", npy(data1), "--phi", "flattop:0.5", "--R", str(R), "--at", npy(at), "--method",
        method, "--out", out)
    kde = gfi.FourierKDE(R=R, phi="flattop:0.5", method=method).fit(data1)
    p = kde.evaluate(at)
    assert bits_equal(p, np.load(out))
    u = R * (at[:, None] - data1[None])
    us = np.where(np.abs(u) < 1e-2, 1.0, u)  # the difference of cosines cancels below 1e-2: its series there
    ser = ((1 - c ** 2) / 2 - (1 - c ** 4) * u ** 2 / 24 + (1 - c ** 6) * u ** 4 / 720) / (np.pi * (1 - c))
    K = np.where(np.abs(u) < 1e-2, ser, (np.cos(c * us) - np.cos(us)) / (np.pi * (1 - c) * us ** 2))
    ref = R * np.mean(K, axis=1)
    assert np.max(np.abs(p - ref)) <= 1e-9 * np.max(ref) + kde.route_["bound_abs"]
    # LSCV picks a radius, the same as the CLI's; sample() refuses a kernel with negative values
    sel = gfi.FourierKDE(R="lscv", phi="flattop:0.5").fit(data1)
    r = cli("density", "--data", npy(data1), "--phi", "flattop:0.5", "--R", "lscv", "--at", npy([0.0]), "--out",
            tmp_path / "q.npy")
    assert float(meta(r.stdout, "R")) == sel.R_[0] and 0.3 < sel.R_[0] < 30
    with pytest.raises(gfi.UnsupportedError):
        sel.sample(3, seed=1)
    for bad in ("flattop:0", "flattop:1", "flattop:2", "flattop:x"):
        with pytest.raises(gfi.InvalidArgument, match=r"\(0, 1\)") as e:
            make_kernel(bad)
        assert e.value.param == "phi"
    with pytest.raises(gfi.UnsupportedError):
        gfi.FourierNW(R=1.0, phi="flattop:0.5").fit(data1, np.sin(data1))


def test_phi_text_is_the_clis():
    # the strings go to libgfi's parser (gfi_kernel_parse), the CLI's --phi
    from gfi.kernels import make_kernel
    for spec in (4, "4", " pow:4 ", "pow:4", "poly:0,0,0,1", "poly:0,0,0,1,0", [0, 0, 0, 1]):
        k = make_kernel(spec)
        assert k.l == 4 and k.A == make_kernel(4).A and list(k.coef[:5]) == [0, 0, 0, 0, 1], spec
    with pytest.raises(gfi.InvalidArgument, match=r"coefficient 2 \('x'\) is not a number") as e:
        make_kernel("poly:1,x")
    assert e.value.param == "phi"
    with pytest.raises(gfi.OrderError, match="at most 8 coefficients"):
        make_kernel("poly:" + ",".join(["1"] * 9))
    with pytest.raises(gfi.OrderError, match="1..8, got 9"):
        make_kernel("pow:9")
    with pytest.raises(gfi.NonFiniteError):
        make_kernel("poly:1,inf")
    with pytest.raises(gfi.InvalidArgument, match="NUL"):
        make_kernel("pow:4\0junk")
