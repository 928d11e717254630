"""FLT: masks, features and error trials (the CLI's flt-error numbers)."""
import ctypes

import numpy as np
import pytest

import gfi
from conftest import table


def test_mask_and_features():
    rpe = gfi.RPE("gauss:s=2")
    pos = np.arange(12.0)
    N = rpe.mask(pos)
    d = pos[:, None] - pos[None]
    assert np.max(np.abs(N - np.exp(-d ** 2 / 8))) < 1e-14
    p = gfi.Proposal("optimal", rpe)
    assert p.c > 0 and "gauss" in rpe.describe().lower() + p.describe().lower()
    errs = []
    for r in (100, 10000):
        N1, N2, xi, w = gfi.flt_features(rpe, p, pos, r, seed=3)
        assert N1.shape == (12, r) and np.iscomplexobj(N1)
        errs.append(np.max(np.abs(N1 @ N2.T - N)))
    assert errs[1] < errs[0] / 3 and errs[1] < 5 * p.c / np.sqrt(10000)
    R1, R2, _, _ = gfi.flt_features(rpe, p, pos, 10000, seed=3, features="real")
    assert R1.shape == (12, 20000) and np.max(np.abs(R1 @ R2.T - N.real)) < 5 * p.c / np.sqrt(10000)
    a = gfi.flt_features(rpe, p, pos, 50, seed=3)[0]
    assert np.array_equal(a, gfi.flt_features(rpe, p, pos, 50, seed=3)[0])
    assert not np.array_equal(a, gfi.flt_features(rpe, p, pos, 50, seed=3, stream=1)[0])


def test_error_trials_equal_cli(cli):
    rpe = gfi.RPE("matern32:s=2")
    prop = gfi.Proposal("t:nu=3,tau=0.5", rpe)
    out = gfi.flt_error_trials(rpe, prop, r=[16, 64], trials=20, L=30, seed=5)
    assert out.shape == (20, 2, 4)
    r = cli("flt-error", "--rpe", "matern32:s=2", "--proposal", "t:nu=3,tau=0.5", "--L", 30, "--r", "16,64",
            "--trials", 20, "--seed", 5)
    rows = table(r.stdout)
    # columns: L r trials mean q50 q90 q99 c se max_re_mean frob_mean rel_mean ...
    lib = gfi._lib.lib

    class Summary(ctypes.Structure):
        _fields_ = [("n", ctypes.c_size_t), ("mean", ctypes.c_double), ("sd", ctypes.c_double),
                    ("se", ctypes.c_double), ("lo95", ctypes.c_double), ("hi95", ctypes.c_double)]
    for i in range(2):
        means = []
        for k in range(4):
            s = Summary()
            col = np.ascontiguousarray(out[:, i, k])
            assert lib.gfi_summarize(ctypes.c_void_p(col.ctypes.data), ctypes.c_size_t(20), ctypes.c_size_t(1),
                                     ctypes.byref(s)) == 0
            means.append(s.mean)
        assert rows[i][0] == 30 and rows[i][1] == (16, 64)[i]
        assert (means[0], means[1], means[2], means[3]) == (rows[i][3], rows[i][9], rows[i][10], rows[i][11])
        assert rows[i][7] == prop.c


def test_bad_input_flt():
    with pytest.raises(gfi.ModelError) as e:
        gfi.RPE("wavy:s=1")
    assert e.value.param == "spec"
    rpe = gfi.RPE("gauss:s=1")
    with pytest.raises(gfi.Error) as e:
        gfi.Proposal("uniform", rpe)
    assert e.value.param == "proposal"
    p = gfi.Proposal("gauss:tau=1", rpe)
    with pytest.raises(gfi.DimensionError):
        rpe.mask(np.zeros((3, 2)))
    with pytest.raises(gfi.NonFiniteError):
        rpe.mask([0.0, np.nan])
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.flt_features(rpe, p, [0.0, 1.0], 0, seed=1)
    assert e.value.param == "r"
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.flt_error_trials(rpe, p, r=[8, 4], trials=2, L=5)
    assert e.value.param == "r"
    with pytest.raises(gfi.InvalidArgument):
        gfi.flt_error_trials(rpe, p, r=8, trials=2)
