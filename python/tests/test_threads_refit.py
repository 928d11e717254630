"""Refitting an estimator in one thread while others evaluate it: every call
keeps the plan it started with alive to its end (no use after free; under the
sanitizer build this runs with ASan), and its values are those of one of the
fits, never a mix. OpenMP's passive wait is set before libgomp loads."""
import os
import pickle
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import gfi

ROUNDS = 100


def _hammer(est, fits, calls):
    """One thread refits est with the fits in turn, ROUNDS times; two threads
    run the calls meanwhile. Between two refits every call thread completes at
    least one call (the refit waits for it), so the calls overlap the refits
    however the threads are scheduled; nothing depends on timing. Returns the
    exceptions seen (none expected)."""
    errs = []
    stop = threading.Event()
    cond = threading.Condition()
    done = [0] * len(calls)

    def refit():
        try:
            for i in range(ROUNDS):
                fits[i % len(fits)](est)
                with cond:
                    want = [d + 1 for d in done]
                    cond.wait_for(lambda: stop.is_set() or all(d >= w for d, w in zip(done, want)))
                if stop.is_set():
                    break
        except BaseException as e:  # pragma: no cover - reported below
            errs.append(e)
        finally:
            with cond:
                stop.set()
                cond.notify_all()

    def call(j, fn):
        try:
            while not stop.is_set():
                fn(est)
                with cond:
                    done[j] += 1
                    cond.notify_all()
        except BaseException as e:  # pragma: no cover
            errs.append(e)
            with cond:
                stop.set()
                cond.notify_all()

    ts = [threading.Thread(target=refit)] + [threading.Thread(target=call, args=(j, fn)) for j, fn in enumerate(calls)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errs


def _one_of(values, refs):
    return any(values.shape == r.shape and np.array_equal(values, r) for r in refs)


def test_density_refit_while_evaluating():
    rng = np.random.default_rng(3)
    # two data sets of different sizes and dimensions: a call that used the
    # new dimension with the old plan would read past its arrays
    x1 = rng.normal(size=300)
    x2 = rng.normal(size=(500, 2))
    q1 = np.linspace(-3, 3, 11)
    kde = gfi.FourierKDE(R=2.0, method="direct", threads=1)
    refs = [kde.fit(x1).evaluate(q1), kde.fit(x2).evaluate(np.zeros((11, 2)))]
    gref = [kde.fit(x1).evaluate_grid(16)[1], kde.fit(x2).evaluate_grid(16)[1]]
    seen = []

    def ev(k):
        try:
            f = k._fitted
            v = k.evaluate(q1 if f.D == 1 else np.zeros((11, 2)))
            seen.append(_one_of(v, refs))
        except gfi.DimensionError:
            pass  # the fit changed between our look and the call: refused, not read past

    def grid(k):
        seen.append(_one_of(k.evaluate_grid(16)[1], gref))

    errs = _hammer(kde, [lambda k: k.fit(x1), lambda k: k.fit(x2)], [ev, grid])
    assert not errs, errs
    assert seen and all(seen)


def test_gaussian_and_nw_refit_while_predicting():
    rng = np.random.default_rng(4)
    x1, x2 = rng.normal(size=200), rng.normal(size=(300, 2))
    y1, y2 = np.sin(x1), np.cos(x2[:, 0])
    g = gfi.GaussianKDE(0.5, method="direct", threads=1).fit(x1)

    def far_log_density(k):
        try:
            v = k.score_samples(np.full((3, k._fitted.D), 40.0))
            assert np.all(np.isfinite(v))
        except gfi.DimensionError:
            pass  # refitted between our look at D and the call

    # every call on one fit: the grid, draws, the log density (whose log-space
    # part reads the fit's data and H), pickling (its data and H)
    errs = _hammer(g, [lambda k: k.fit(x1), lambda k: k.fit(x2)],
                   [lambda k: k.evaluate_grid(8), lambda k: k.sample(5, seed=1), lambda k: pickle.dumps(k),
                    far_log_density])
    assert not errs, errs
    for nw in (gfi.FourierNW(R=2.0, threads=1).fit(x1, y1), gfi.GaussianNW(0.5, threads=1).fit(x1, y1)):
        def pr(k):
            try:
                k.predict(np.zeros(5))
            except gfi.DimensionError:
                pass

        errs = _hammer(nw, [lambda k: k.fit(x1, y1), lambda k: k.fit(x2, y2)],
                       [pr, lambda k: k.predict_grid(8)])
        assert not errs, errs


def _omp_env(extra):
    env = dict(os.environ)
    for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        env.pop(k, None)
    env.update(extra)
    env["OMP_DISPLAY_ENV"] = "TRUE"
    code = "import os, gfi; print(os.environ.get('OMP_WAIT_POLICY')); gfi.threads_available()"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not gfi._clib.gfi_have_openmp(), reason="libgfi built without OpenMP")
def test_omp_passive_wait_unless_set():
    r = _omp_env({})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "passive"
    # what the OpenMP runtime (libgomp, or LLVM's libomp) read when it loaded
    assert re.search(r"OMP_WAIT_POLICY\s*=\s*'PASSIVE'", r.stderr), r.stderr
    r = _omp_env({"OMP_WAIT_POLICY": "active"})
    assert r.stdout.split()[0] == "active"
    assert re.search(r"OMP_WAIT_POLICY\s*=\s*'ACTIVE'", r.stderr), r.stderr
