"""Shared fixtures of gfi's Python tests: the CLI of the same build (GFI_CLI,
set by meson test) for the bit-for-bit comparisons, and data files."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import gfi


def _cli_path():
    p = os.environ.get("GFI_CLI")
    if p and os.path.exists(p):
        return p
    return shutil.which("gfi")


@pytest.fixture(scope="session")
def cli():
    path = _cli_path()
    if not path:
        pytest.skip("the gfi CLI of this build is needed (meson test sets GFI_CLI)")

    # In a sanitizer build the interpreter runs with the ASan runtime preloaded
    # (python/meson.build); the CLI links its own: not both.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

    def run(*args, ok=True):
        r = subprocess.run([path] + [str(a) for a in args], capture_output=True, text=True, timeout=300, env=env)
        if ok and r.returncode != 0:
            raise AssertionError("gfi %s failed (%d): %s" % (" ".join(map(str, args)), r.returncode, r.stderr))
        return r
    return run


def table(stdout):
    """The numeric rows of a CLI's text output (parsed with float(), which
    reads the CLI's %.17g exactly)."""
    rows = [l.split() for l in stdout.splitlines() if l.strip() and not l.startswith("#")]
    return np.array([[float(v) for v in r] for r in rows])


def meta(stdout, key):
    for l in stdout.splitlines():
        if l.startswith("# " + key + ":"):
            return l.split(":", 1)[1].strip()
    raise KeyError(key)


@pytest.fixture
def npy(tmp_path):
    """Write an array to a .npy file in the test's folder; returns the path."""
    count = [0]

    def save(a):
        count[0] += 1
        p = tmp_path / ("a%d.npy" % count[0])
        np.save(p, np.asarray(a, dtype=np.float64))
        return str(p)
    return save


def bits_equal(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))
