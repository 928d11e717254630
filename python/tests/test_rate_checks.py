"""The rate checks' tables (gfi.density_rates, gfi.regression_rates): the
rows against the table the CLI prints for the same options (to the last
digit printed), the files of outdir, threads, and bad options naming the
keyword at fault."""
import os

import numpy as np
import pytest

import gfi

# (the struct layout: test_contract.py checks every ctypes mirror of gfi)


# ---- against the CLI ----

def _rows(stdout, ncol):
    return [l.split() for l in stdout.splitlines() if l.strip() and not l.startswith("#") and len(l.split()) == ncol]


def _density_tokens(r):
    """A row as `gfi rates` prints it (experiments/lib/density_rates.c)."""
    f6 = lambda v: "%.6f" % v  # noqa: E731
    return [r["name"], r["setting"], "%d" % r["D"], "%d" % r["l"], r["smooth_class"], "%g" % r["order"],
            f6(r["claimed"]), f6(r["classical"]), f6(r["observed"]), f6(r["lo95"]), f6(r["hi95"]),
            f6(r["claimed_R"]), f6(r["observed_R"]), "%d" % r["n_fit"], "%d" % r["mc_points"],
            "%.3f" % r["mc_max_z"], r["verdict"], r["condition"]]


def _regression_tokens(r):
    """A row as `gfi regress-rates` prints it (experiments/lib/regress_rates.c)."""
    f4 = lambda v: "%.4f" % v  # noqa: E731
    return [r["name"], r["theorem"], "%d" % r["l"], "%d" % r["D"], r["setting"], r["truth"], r["rule"],
            "%d" % r["N_min"], "%d" % r["N_max"], f4(r["claimed"]), f4(r["classical"]), f4(r["observed"]),
            f4(r["lo95"]), f4(r["hi95"]), "%.3g" % r["chi2_dof"], "%.4g" % r["flagged_frac"], r["verdict"]]


DENSITY = dict(theorems="1,3b", l1=[3, 4], models=["normal", "laplace"], nmin=100, nmax=1e4, per_decade=2,
               fit_decades=1.5, mc=4, seed=7)
DENSITY_CLI = ["rates", "--theorems", "1,3b", "--l1", "3,4", "--model", "normal", "--model", "laplace",
               "--nmin", "100", "--nmax", "1e4", "--per-decade", "2", "--fit-decades", "1.5", "--mc", "4",
               "--seed", "7"]


def test_density_rates_equal_cli(cli, tmp_path):
    t = gfi.density_rates(threads=1, outdir=str(tmp_path / "py"), **DENSITY)
    assert isinstance(t, np.ndarray) and t.dtype.names[:3] == ("name", "theorem", "setting")
    # rows: theorem 1 at l = 3 and 4, 3b, per truth; the Gaussian-KDE baseline for normal only
    assert list(t["name"]) == ["1", "1", "1", "1", "3b", "3b", "gauss-kde"]
    assert list(t["l"]) == [3, 3, 4, 4, 2, 2, 0]
    assert list(t["setting"]) == ["normal", "laplace"] * 3 + ["normal"]
    assert t["condition"][0] == "l<4" and t["condition"][3] == "not-C2" and t["verdict"][-1] == "baseline"
    assert (t["mc_points"][:6] == 1).all() and np.isnan(t["mc_max_z"][-1])
    r = cli(*(DENSITY_CLI + ["--threads", "1"]))
    c = _rows(r.stdout, 18)
    assert len(c) == len(t)
    for row, toks in zip(t, c):
        assert _density_tokens(row) == toks
    # outdir: the same table and one series file per row, as the CLI's --out
    r2 = cli(*(DENSITY_CLI + ["--threads", "1", "--out", str(tmp_path / "cli")]))
    assert _rows((tmp_path / "py" / "rates_table.dat").read_text(), 18) == c
    assert sorted(os.listdir(tmp_path / "py")) == sorted(os.listdir(tmp_path / "cli"))
    assert r2.stdout.count("\n") > 0
    d = gfi.density_rates(threads=2, as_dicts=True, **DENSITY)
    assert isinstance(d, list) and [_density_tokens(x) for x in d] == c  # any thread count


def test_density_rates_phi1_equal_cli(cli):
    # Theorem 1 with a polynomial phi (powers 4 and 6: the moment hypothesis holds)
    kw = dict(theorems="1", models="normal", phi1=["poly:0,0,0,1,0,0.5"], nmin=100, nmax=1e4, per_decade=2,
              fit_decades=1.5, mc=0, seed=7)
    t = gfi.density_rates(threads=1, **kw)
    assert list(t["name"]) == ["1", "1p1", "gauss-kde"]
    assert t["condition"][1] == "met" and t["l"][1] == 6 and t["observed"][1] < 0
    r = cli("rates", "--theorems", "1", "--model", "normal", "--phi1", "poly:0,0,0,1,0,0.5", "--nmin", "100",
            "--nmax", "1e4", "--per-decade", "2", "--fit-decades", "1.5", "--mc", "0", "--seed", "7",
            "--threads", "1")
    c = _rows(r.stdout, 18)
    assert "# kernel-1p1: phi poly:0,0,0,1,0,0.5" in r.stdout
    assert [_density_tokens(row) for row in t] == c
    with pytest.raises(gfi.Error) as ei:
        gfi.density_rates(threads=1, **dict(kw, phi1="flattop:0.5"))
    assert ei.value.param == "phi1"


REGRESSION = dict(size="small", rows="thm2-1d-pt,gauss-1d,tail", defines="tail:thm=2;l=4;truth=sin;at=0.5/1.5/2.5",
                  reps=3, points=20, seed=3)
REGRESSION_CLI = ["regress-rates", "--size", "small", "--rows", "thm2-1d-pt,gauss-1d,tail",
                  "--define", "tail:thm=2;l=4;truth=sin;at=0.5/1.5/2.5", "--reps", "3", "--points", "20",
                  "--seed", "3"]


def test_regression_rates_equal_cli(cli):
    t = gfi.regression_rates(threads=1, **REGRESSION)
    assert list(t["name"]) == ["thm2-1d-pt@0", "thm2-1d-pt@1", "thm2-1d-pt@2", "gauss-1d", "tail@0.5", "tail@1.5",
                               "tail@2.5"]
    assert list(t["point_x"][:3, 0]) == [0, 1, 2] and np.isnan(t["point_x"][:, 1:]).all()
    assert np.isnan(t["point_x"][3]).all() and np.isnan(t["point_gamma"][3]) and t["verdict"][3] == "baseline"
    assert t["condition"][4] == "l<6" and t["point_x"][4, 0] == 0.5
    r = cli(*(REGRESSION_CLI + ["--threads", "2"]))
    c = _rows(r.stdout, 17)
    assert len(c) == len(t)
    for row, toks in zip(t, c):
        assert _regression_tokens(row) == toks
    # the '# gamma ROW:' lines: the slope of log C(x) on log(1/p(x)) of each pointwise row
    gam = {l.split()[2].rstrip(":"): l.split(" = ")[1].split()[0]
           for l in r.stdout.splitlines() if l.startswith("# gamma ")}
    assert gam == {"thm2-1d-pt": "%.3f" % t["point_gamma"][0], "tail": "%.3f" % t["point_gamma"][4]}
    t2 = gfi.regression_rates(threads=2, **REGRESSION)
    assert t2.tobytes() == t.tobytes()  # the same bits at any thread count


def test_rate_rows_listed():
    names = gfi.regression_rate_rows()
    assert "thm2-1d" in names and "gauss-1d" in names and len(names) == len(set(names))


def test_progress_on_stderr(capfd):
    gfi.regression_rates(size="small", rows="gauss-1d", reps=3, points=10, progress=True)
    assert capfd.readouterr().err.strip()
    gfi.regression_rates(size="small", rows="gauss-1d", reps=3, points=10)
    assert capfd.readouterr().err == ""


# ---- bad options: the exception names the keyword ----

@pytest.mark.parametrize("kw, cls, param", [
    (dict(dim=4), gfi.InvalidArgument, "dim"),            # the C's check (--dim)
    (dict(dim=0), gfi.InvalidArgument, "dim"),
    (dict(models="nonsense:3"), gfi.ModelError, "models"),
    (dict(models="normal cauchy"), gfi.ModelError, "models"),
    (dict(theorems="2"), gfi.InvalidArgument, "theorems"),  # a regression theorem
    (dict(theorems="1,9"), gfi.InvalidArgument, "theorems"),
    (dict(l1=[4, 9]), gfi.InvalidArgument, "l1"),
    (dict(phi1="poly:x"), gfi.InvalidArgument, "phi1"),  # the C's check (--phi1)
    (dict(mc=1), gfi.InvalidArgument, "mc"),
    (dict(nmin=-5), gfi.InvalidArgument, "nmin"),
    (dict(nmin=1e4, nmax=1e3), gfi.InvalidArgument, "nmax"),
    (dict(per_decade=float("nan")), gfi.InvalidArgument, "per_decade"),
    (dict(slack=-1), gfi.InvalidArgument, "slack"),
    (dict(size="tiny"), gfi.InvalidArgument, "size"),
    (dict(seed=-1), gfi.InvalidArgument, "seed"),
    (dict(threads=-2), gfi.InvalidArgument, "threads"),
])
def test_bad_density_option(kw, cls, param):
    with pytest.raises(cls) as e:
        gfi.density_rates(theorems=kw.pop("theorems", "1"), models=kw.pop("models", "normal"), nmin=kw.pop("nmin", 100),
                          nmax=kw.pop("nmax", 1e3), mc=kw.pop("mc", 0), **kw)
    assert e.value.param == param and param in str(e.value)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("kw, cls, param", [
    (dict(size="huge"), gfi.InvalidArgument, "size"),     # the C's check (--size)
    (dict(rows="thm9"), gfi.InvalidArgument, "rows"),
    (dict(defines="x:thm=7"), gfi.InvalidArgument, "defines"),
    (dict(defines="y:thm=2;design=nonsense:1"), gfi.ModelError, "defines"),
    (dict(reps=2), gfi.InvalidArgument, "reps"),
    (dict(points=0), gfi.InvalidArgument, "points"),
    (dict(rows=""), gfi.InvalidArgument, "rows"),
])
def test_bad_regression_option(kw, cls, param):
    kw.setdefault("rows", "gauss-1d")
    with pytest.raises(cls) as e:
        gfi.regression_rates(**dict(dict(size="small", reps=3, points=10), **kw))
    assert e.value.param == param and param in str(e.value)


def test_unwritable_outdir(tmp_path):
    f = tmp_path / "file"
    f.write_text("not a folder")
    with pytest.raises(gfi.GfiIOError) as e:
        gfi.regression_rates(size="small", rows="gauss-1d", reps=3, points=10, outdir=str(f / "sub"))
    assert e.value.param == "outdir" and isinstance(e.value, OSError)
