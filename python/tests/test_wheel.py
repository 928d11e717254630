"""Packaging: `pip wheel` builds the wheel from the source tree (meson-python,
offline, with the Debian packages: --no-build-isolation), a fresh venv
installs it and runs an example script with no source tree on the path; the
sdist (meson dist, as pip's backend makes it) builds a wheel too."""
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

ROOT = os.environ.get("GFI_SOURCE_ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _need(mod):
    try:
        __import__(mod)
    except ImportError:
        pytest.skip("%s is not installed (Debian: python3-mesonpy / python3-venv; tools/setup.sh)" % mod)


def _clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GFI_LIBRARY", "GFI_EXP_LIBRARY",
                                                                "GFI_LAYOUT_PROBE", "GFI_CLI")}
    env["PIP_NO_INDEX"] = "1"  # offline: everything comes from Debian's packages
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(cmd, cwd, env, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, "%s failed (%d):\n%s\n%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                           r.stderr[-3000:])
    return r


def test_wheel_installs_in_fresh_venv(tmp_path):
    _need("mesonpy")
    _need("venv")
    env = _clean_env()
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-build-isolation", "--no-deps", "-w", str(wheels)],
         str(tmp_path), env)
    whl = [p for p in os.listdir(wheels) if p.startswith("gfi-") and p.endswith(".whl")]
    assert len(whl) == 1, whl
    with zipfile.ZipFile(wheels / whl[0]) as z:
        names = z.namelist()
    assert "gfi/libgfi.so" in names and "gfi/libgfi_exp.so" in names, names
    assert "gfi/py.typed" in names and "gfi/_base.py" in names, names  # typed; every module
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], str(tmp_path), env)
    py = str(venv / "bin" / "python")
    _run([py, "-m", "pip", "install", "--no-deps", str(wheels / whl[0])], str(tmp_path), env)
    work = tmp_path / "run"
    work.mkdir()
    shutil.copy(os.path.join(ROOT, "examples", "figure1a.py"), work)
    r = _run([py, "-I", "figure1a.py", "--n", "20000", "--out", "f.png"], str(work), env)
    assert "max |p_hat - p|" in r.stdout
    r = _run([py, "-I", "-c", "import gfi, os; print(gfi.__file__); print(gfi.LIBRARY_PATH)"], str(work), env)
    mod, libpath = r.stdout.split()
    assert mod.startswith(str(venv)) and libpath.startswith(str(venv)) and os.path.basename(libpath) == "libgfi.so"
    # the rate checks from the installed libgfi_exp.so (over the same libgfi.so)
    code = ("import gfi; t = gfi.density_rates(theorems='1', models='normal', nmin=100, nmax=1e4, mc=0, threads=1); "
            "print(gfi.rate_checks.library_path()); print(t['name'][0], t['verdict'][0], '%.6f' % t['claimed'][0])")
    r = _run([py, "-I", "-c", code], str(work), env)
    exp_path, name, verdict, claimed = r.stdout.split()
    assert exp_path.startswith(str(venv)) and os.path.basename(exp_path) == "libgfi_exp.so"
    assert name == "1" and claimed == "-0.666667"
    assert verdict in ("consistent", "faster-than-claimed", "slower-than-claimed")


def test_sdist_builds(tmp_path):
    _need("mesonpy")
    if not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.isfile(os.path.join(ROOT, ".git")):
        pytest.skip("the sdist (meson dist) needs a git checkout")
    env = _clean_env()
    code = "import mesonpy, sys; print(mesonpy.build_sdist(sys.argv[1]))"
    _run([sys.executable, "-c", code, str(tmp_path)], ROOT, env)
    sd = [p for p in os.listdir(tmp_path) if p.endswith(".tar.gz")]
    assert len(sd) == 1, sd
    with tarfile.open(tmp_path / sd[0]) as t:
        names = t.getnames()
    assert any(n.endswith("/pyproject.toml") for n in names) and any(n.endswith("/python/gfi/_lib.py") for n in names)
    _run([sys.executable, "-m", "pip", "wheel", str(tmp_path / sd[0]), "--no-build-isolation", "--no-deps", "-w",
          str(tmp_path / "w")], str(tmp_path), env)
    assert any(p.endswith(".whl") for p in os.listdir(tmp_path / "w"))
