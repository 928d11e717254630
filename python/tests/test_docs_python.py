"""The Python of README.md and docs/python.md runs as written: every
```python block in a fresh interpreter (in an empty folder, with this build's
gfi), every ```pycon block as a doctest (the transcript's output must match,
ELLIPSIS on). A ```python skip block is not run; its first comment line says
why. A page without a block that runs fails (the extraction is tested too)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.environ.get("GFI_SOURCE_ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PAGES = ("README.md", "docs/python.md")


def blocks(page):
    """(kind, first line number, text) of the page's python, pycon and python skip blocks."""
    out = []
    kind, start, body = None, 0, []
    with open(os.path.join(ROOT, page), encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if line.startswith("```"):
                if kind is None:
                    info = line[3:].strip()
                    kind = {"python": "run", "pycon": "doctest", "python skip": "skip"}.get(info, "other")
                    start, body = no, []
                else:
                    if kind != "other":
                        out.append((kind, start, "".join(body)))
                    kind = None
            elif kind is not None:
                body.append(line)
    return out


CASES = [(page, k, n, t) for page in PAGES for (k, n, t) in blocks(page)]


def test_every_page_has_blocks_that_run():
    for page in PAGES:
        kinds = [k for (k, _, _) in blocks(page)]
        assert "run" in kinds, page
    assert any(k == "doctest" for (_, k, _, _) in CASES)
    for page, k, n, t in CASES:
        if k == "skip":
            assert t.lstrip().startswith("#"), "%s:%d: a skipped block says why in its first line" % (page, n)


def _env():
    env = dict(os.environ)
    env.setdefault("MPLBACKEND", "Agg")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.mark.parametrize("page,kind,line,text", [c for c in CASES if c[1] != "skip"],
                         ids=["%s:%d" % (c[0], c[2]) for c in CASES if c[1] != "skip"])
def test_block_runs(page, kind, line, text, tmp_path):
    if re.search(r"^\s*import torch|gfi\.torch", text, re.M):
        pytest.importorskip("torch")
    if kind == "run":
        f = tmp_path / "block.py"
        f.write_text(text)
        args = [sys.executable, str(f)]
    else:
        f = tmp_path / "block.txt"
        f.write_text(text)
        args = [sys.executable, "-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE", str(f)]
    r = subprocess.run(args, cwd=str(tmp_path), env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "%s:%d failed:\n%s\n%s" % (page, line, r.stdout[-3000:], r.stderr[-3000:])


def test_example_lscv_density(tmp_path):
    """examples/lscv_density.py runs from an empty folder and writes its plot
    (matplotlib) or its two tables; the radius it prints is LSCV's."""
    script = os.path.join(ROOT, "examples", "lscv_density.py")
    r = subprocess.run([sys.executable, script, "--n", "800", "--out", "fig.png"], cwd=str(tmp_path), env=_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "fig.png").stat().st_size > 0
    except ImportError:
        curve = np.loadtxt(tmp_path / "lscv_density_curve.txt")
        assert curve.shape == (100, 2)
        assert (tmp_path / "lscv_density_estimate.txt").exists()
    import gfi
    R = gfi.select_radius_lscv(gfi.Model("mw:6").sample(800, seed=1), phi=4).R[0]
    assert "LSCV radius R = %.4g" % R in r.stdout
