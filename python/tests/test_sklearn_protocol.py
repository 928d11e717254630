"""scikit-learn's estimator protocol on gfi's density and regression
estimators: parameters (clone), score_samples / score, sample_weight and
n_jobs, GridSearchCV over R, sampling from the estimate (checked against the
estimate's own bin probabilities, in standard errors), pickle and deepcopy
(the same bits after the round trip), repr."""
import copy
import pickle

import numpy as np
import pytest

import gfi
from conftest import bits_equal


@pytest.fixture(scope="module")
def x1():
    return gfi.Model("mw:2").sample(600, seed=5)


def _estimators():
    return [gfi.FourierKDE(R=2.5, phi=4, method="direct"), gfi.FourierKDE(R="lscv"),
            gfi.GaussianKDE(0.3, n_jobs=1), gfi.GaussianKDE("Scott"),
            gfi.FourierNW(R=3.0, denom_tol=1e-6), gfi.FourierNW(R="LOOCV", threads=1),
            gfi.GaussianNW(0.4), gfi.GaussianNW("loocv"), gfi.FourierKDE(R=2.5, copy=False),
            gfi.FourierNW(R=3.0, copy=False), gfi.GaussianKDE(0.3, copy=False)]


def _fit(est, x):
    return est.fit(x, np.sin(x)) if isinstance(est, (gfi.FourierNW, gfi.GaussianNW)) else est.fit(x)


def _values(est, q):
    return est.predict(q) if isinstance(est, (gfi.FourierNW, gfi.GaussianNW)) else est.evaluate(q)


@pytest.mark.parametrize("est", _estimators(), ids=repr)
def test_params_clone_pickle_deepcopy(est, x1):
    params = est.get_params()
    assert set(params) >= {"method", "tol", "threads", "n_jobs"}
    again = type(est)(**params)
    assert again.get_params() == params
    assert est.set_params(**params) is est
    with pytest.raises(gfi.InvalidArgument):
        est.set_params(no_such_parameter=1)
    q = np.linspace(-3, 3, 13)
    _fit(est, x1)
    ref = _values(est, q)
    for other in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert type(other) is type(est) and other.get_params() == params
        assert bits_equal(_values(other, q), ref)
        assert repr(other) == repr(est)
    assert "fitted: N=600, D=1" in repr(est)
    # unfitted: only the parameters
    u = pickle.loads(pickle.dumps(type(est)(**params)))
    assert u.get_params() == params and "fitted" not in repr(u)


def test_sklearn_clone(x1):
    base = pytest.importorskip("sklearn.base")
    for est in _estimators():
        c = base.clone(est)
        assert type(c) is type(est) and c.get_params() == est.get_params()


def test_pickle_refuses_changed_data():
    x = np.random.default_rng(1).normal(size=100)
    kde = gfi.FourierKDE(R=2.0).fit(x)
    pickle.dumps(kde)
    x[[3, 4]] = x[[4, 3]]  # rows swapped in the caller's array, which gfi does not copy
    with pytest.raises(gfi.InvalidArgument) as e:
        pickle.dumps(kde)
    assert e.value.param == "data"


def test_pickle_refuses_other_changes():
    """The digest sees a value changed, all values negated, a swap of
    distant values, changed weights or responses, with copy=False too; an
    unchanged array (or one written back) pickles."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 2))
    w = rng.uniform(1, 2, 300)
    y = np.sin(x[:, 0])
    changes = [lambda: x.__setitem__((7, 1), x[7, 1] + 1e-12), lambda: np.negative(x, out=x),
               lambda: x.__setitem__(([2, 250], [0, 0]), x[[250, 2], [0, 0]]), lambda: w.__setitem__(5, 3.0),
               lambda: y.__setitem__(0, 2.0)]
    for i, change in enumerate(changes):
        for copy_ in (True, False):
            est = gfi.FourierNW(R=2.0, copy=copy_).fit(x, y) if i == 4 else \
                gfi.FourierKDE(R=2.0, copy=copy_).fit(x, weights=w)
            pickle.dumps(est)
            saved = (x.copy(), w.copy(), y.copy())
            change()
            with pytest.raises(gfi.InvalidArgument):
                pickle.dumps(est)
            x[...], w[...], y[...] = saved
            pickle.dumps(est)


def test_copy_false_same_bits():
    """copy=False (the plan reads the points in place) gives the same bits
    as copy=True: 1-D to 3-D, weights, auto / fast / direct, points and
    grids, density and Nadaraya-Watson; the box and digest the plan found
    are numpy's min / max and gfi_digest's."""
    rng = np.random.default_rng(4)
    for D, N, R in ((1, 3000, 6.0), (2, 1500, 4.0), (3, 500, 2.0)):
        x = rng.normal(size=(N, D))
        x[:2] *= 3  # far points
        w = rng.uniform(0.5, 1.5, N)
        y = np.column_stack([np.sin(x[:, 0]), x[:, -1]])
        q = rng.uniform(-3, 3, (50, D))
        n = {1: 300, 2: 31, 3: 9}[D]
        for method, tol in (("auto", 0.0), ("auto", 1e-4), ("fast", 1e-6), ("direct", 0.0)):
            if not (method == "fast" and D == 3):  # 3-D: auto's routes (a fast one takes seconds)
                vals = []
                for copy_ in (True, False):
                    kde = gfi.FourierKDE(R=R, method=method, tol=tol, copy=copy_, threads=2).fit(x, weights=w)
                    nw = gfi.FourierNW(R=R, method=method, tol=tol, copy=copy_, threads=2).fit(x, y)
                    vals.append([kde.evaluate(q), kde.evaluate_grid(n)[1], nw.predict(q), nw.predict_grid(n)[1],
                                 gfi.FourierKDE(R=R, method=method, tol=tol, copy=copy_).fit(x).evaluate_grid(n)[1]])
                    f = kde._fitted
                    assert bits_equal(f.lo, x.min(axis=0)) and bits_equal(f.hi, x.max(axis=0))
                    assert f._fp == f._fingerprint()
                for a, b in zip(*vals):
                    assert bits_equal(a, b), (D, method, tol)
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierKDE(R=2.0, copy="no").fit(np.zeros(3))
    assert e.value.param == "copy"


def test_kept_copies_same_bits_and_released():
    """A fit whose copy of the data goes into a block kept from a freed
    estimator (larger than it needs, holding the other data) gives the bits
    of copy=False; release_memory frees the kept blocks and says how many
    bytes they held."""
    rng = np.random.default_rng(6)
    gfi.release_memory()
    x1 = rng.normal(size=700000)
    x2 = np.concatenate([rng.normal(size=500000), 30 + rng.normal(size=60000)])
    kde = gfi.FourierKDE(R=8.0).fit(x1)
    kde.evaluate_grid(64)
    del kde
    kept = gfi.release_memory()
    assert kept >= x1.nbytes
    assert gfi.release_memory() == 0
    gfi.FourierKDE(R=8.0).fit(x1)  # freed at once: its copy is kept
    a = gfi.FourierKDE(R=8.0).fit(x2)  # into that block
    b = gfi.FourierKDE(R=8.0, copy=False).fit(x2)
    q = np.linspace(-5, 35, 101)
    assert bits_equal(a.evaluate(q), b.evaluate(q))
    assert bits_equal(a.evaluate_grid(300)[1], b.evaluate_grid(300)[1])
    assert gfi.release_memory() == 0  # a took the block


def test_model_pickle():
    m = gfi.Model("mix:0.3*normal|0.7*normal:mean=3,3", dim=2)
    for m2 in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert repr(m2) == repr(m)
        assert bits_equal(m2.sample(50, seed=3), m.sample(50, seed=3))


def test_names_and_aliases(x1):
    w = np.linspace(1, 2, x1.size)
    a = gfi.FourierKDE(R=2.0).fit(x1, weights=w).evaluate(x1[:9])
    b = gfi.FourierKDE(R=2.0).fit(x1, sample_weight=w).evaluate(x1[:9])
    assert bits_equal(a, b)
    with pytest.raises(gfi.InvalidArgument):
        gfi.FourierKDE(R=2.0).fit(x1, sample_weight=w, weights=w)
    with pytest.raises(gfi.WeightError) as e:
        gfi.GaussianKDE(0.3).fit(x1, sample_weight=-w)
    assert e.value.param == "sample_weight"
    # n_jobs is threads (-1: all cores); both must agree
    assert bits_equal(gfi.FourierKDE(R=2.0, n_jobs=-1).fit(x1).evaluate(x1[:9]),
                      gfi.FourierKDE(R=2.0, threads=1).fit(x1).evaluate(x1[:9]))
    with pytest.raises(gfi.InvalidArgument) as e:
        gfi.FourierKDE(R=2.0, threads=2, n_jobs=1).fit(x1)
    assert e.value.param == "n_jobs"
    # R="LSCV" in any case, as the CLI's lscv
    assert gfi.FourierKDE(R="LSCV").fit(x1).R_[0] == gfi.FourierKDE(R="lscv").fit(x1).R_[0]
    # route_ is a property of both kinds
    nw = gfi.FourierNW(R=2.0).fit(x1, np.cos(x1))
    assert nw.route_ is None
    nw.predict(x1[:4])
    assert nw.route_["route"] in ("direct", "fast")
    assert isinstance(type(nw).route_, property) and isinstance(gfi.FourierKDE.route_, property)
    # NW weighs points equally: a constant weight is accepted, others refused
    gfi.FourierNW(R=2.0).fit(x1, np.cos(x1), sample_weight=np.full(x1.size, 2.0))
    with pytest.raises(gfi.UnsupportedError):
        gfi.FourierNW(R=2.0).fit(x1, np.cos(x1), sample_weight=w)


def test_score_samples_and_score(x1):
    st = pytest.importorskip("scipy.stats")
    g = gfi.GaussianKDE("scott", method="direct").fit(x1)
    q = np.array([0.0, 1.0, 40.0, -300.0, 1e3])
    ref = st.gaussian_kde(x1).logpdf(q)
    ls = g.score_samples(q)
    assert np.all(np.isfinite(ls))
    assert np.allclose(ls, ref, rtol=1e-12, atol=1e-12)
    assert g.evaluate([40.0])[0] == 0.0  # the density itself underflows there
    # 2-D with weights and a full H
    rng = np.random.default_rng(2)
    x2 = rng.normal(size=(300, 2))
    w = rng.uniform(0.5, 2, 300)
    g2 = gfi.GaussianKDE("silverman", method="direct").fit(x2, sample_weight=w)
    q2 = np.array([[0.0, 0.0], [30.0, -20.0]])
    ref2 = st.gaussian_kde(x2.T, bw_method="silverman", weights=w).logpdf(q2.T)
    assert np.allclose(g2.score_samples(q2), ref2, rtol=1e-12)
    assert g.score(x1[:50]) == pytest.approx(np.mean(np.log(g.evaluate(x1[:50]))), rel=1e-15)
    k = gfi.FourierKDE(R=3.0).fit(x1)
    assert bits_equal(k.score_samples(x1[:20]), np.log(k.evaluate(x1[:20])))
    # regression: R^2 as scikit-learn's r2_score
    y = np.sin(x1) + 0.1 * rng.normal(size=x1.size)
    nw = gfi.FourierNW(R=3.0).fit(x1[:400], y[:400])
    pred = nw.predict(x1[400:])
    r2 = 1 - np.sum((y[400:] - pred) ** 2) / np.sum((y[400:] - y[400:].mean()) ** 2)
    assert nw.score(x1[400:], y[400:]) == pytest.approx(r2, rel=1e-12)
    Y = np.c_[y, 2 * y + 1]
    nwv = gfi.GaussianNW(0.3).fit(x1[:400], Y[:400])
    metrics = pytest.importorskip("sklearn.metrics")
    assert nwv.score(x1[400:], Y[400:]) == pytest.approx(metrics.r2_score(Y[400:], nwv.predict(x1[400:])),
                                                         rel=1e-12)


def test_grid_search_over_R(x1):
    ms = pytest.importorskip("sklearn.model_selection")
    Rs = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
    gs = ms.GridSearchCV(gfi.FourierKDE(method="direct"), {"R": Rs}, cv=5).fit(x1)
    # by hand: the mean held-out log-likelihood over the same folds
    folds = list(ms.KFold(5).split(x1))
    means = [np.mean([gfi.FourierKDE(R=R, method="direct").fit(x1[tr]).score(x1[te]) for tr, te in folds])
             for R in Rs]
    assert np.allclose(gs.cv_results_["mean_test_score"], means, rtol=1e-12)
    assert gs.best_params_["R"] == Rs[int(np.argmax(means))]
    assert 0 < Rs.index(gs.best_params_["R"]) < len(Rs) - 1  # an interior optimum
    assert gs.best_estimator_.R_[0] == gs.best_params_["R"]
    g = ms.GridSearchCV(gfi.GaussianNW(), {"bandwidth": [0.05, 0.2, 1.0]}, cv=3).fit(x1, np.sin(x1))
    assert g.best_params_["bandwidth"] in (0.05, 0.2)


def _bin_check(est, draws, lo, hi, nbins):
    """Counts of the draws in nbins bins of [lo, hi] and the two tails
    against the estimate's bin probabilities (trapezoid over a fine grid):
    every bin within 5 standard errors and the chi-square within 6 of its
    standard deviations of its mean."""
    n = draws.size
    edges = np.linspace(lo, hi, nbins + 1)
    fine = 200
    (ax,), p = est.evaluate_grid(nbins * fine + 1, lo, hi)
    cell = np.diff(ax) * (p[1:] + p[:-1]) / 2
    prob = cell.reshape(nbins, fine).sum(axis=1)
    prob = np.concatenate([prob, [1 - prob.sum()]])  # the tails beyond [lo, hi]
    counts = np.histogram(draws, edges)[0]
    counts = np.concatenate([counts, [n - counts.sum()]])
    se = np.sqrt(n * prob * (1 - prob))
    z = (counts - n * prob) / se
    assert np.max(np.abs(z)) < 5, z
    chi2 = np.sum((counts - n * prob) ** 2 / (n * prob))
    df = nbins
    assert abs(chi2 - df) < 6 * np.sqrt(2 * df), chi2


@pytest.mark.parametrize("make", [lambda: gfi.FourierKDE(R=3.0, phi=4), lambda: gfi.FourierKDE(R=2.0, phi=2),
                                  lambda: gfi.FourierKDE(R=2.0, phi="poly:0,0.5,0,0.5"),
                                  lambda: gfi.GaussianKDE(0.3)], ids=["pow4", "pow2", "poly2+4", "gauss"])
def test_sample_matches_the_estimate(make, x1):
    w = np.linspace(0.5, 1.5, x1.size)
    est = make().fit(x1, sample_weight=w)
    s = est.sample(20000, seed=7)
    assert s.shape == (20000,)
    assert bits_equal(s, est.sample(20000, seed=7))
    _bin_check(est, s, -4.0, 4.0, 24)


def test_sample_2d_and_refusals():
    rng = np.random.default_rng(8)
    x2 = rng.normal(size=(400, 2)) * [1.0, 0.5]
    g = gfi.GaussianKDE(np.array([[0.2, 0.05], [0.05, 0.1]])).fit(x2)
    s = g.sample(40000, seed=1)
    assert s.shape == (40000, 2)
    # mean and covariance of the mixture: the data's mean, their covariance (1/N) + H
    m = x2.mean(axis=0)
    C = np.cov(x2.T, bias=True) + g.H_
    se_m = np.sqrt(np.diag(C) / s.shape[0])
    assert np.all(np.abs(s.mean(axis=0) - m) < 5 * se_m)
    k = gfi.FourierKDE(R=[3.0, 5.0]).fit(x2)
    sk = k.sample(30000, seed=2)
    # per axis, the kernel's variance is 3 / R_j^2 for phi = sinc^4 (int u^2 sinc^4 / A_4 = 3);
    # its fourth moment is infinite, so the check is on the mean (se from the variance)
    varj = np.var(x2, axis=0) + 3.0 / np.array([3.0, 5.0]) ** 2
    assert np.all(np.abs(sk.mean(axis=0) - x2.mean(axis=0)) < 5 * np.sqrt(varj / sk.shape[0]))
    with pytest.raises(gfi.UnsupportedError) as e:
        gfi.FourierKDE(R=2.0, phi=3).fit(x2).sample(5)
    assert e.value.param == "phi"
    with pytest.raises(gfi.InvalidArgument):
        k.sample(-1)
    with pytest.raises(gfi.InvalidArgument):
        gfi.GaussianKDE().sample(3)
    w = np.ones(x2.shape[0])
    w[0] = -0.5  # a signed mixture the library evaluates, but nothing to draw from
    with pytest.raises(gfi.UnsupportedError) as e:
        gfi.GaussianKDE(0.3).fit(x2, sample_weight=w).sample(3)
    assert e.value.param == "sample_weight"
