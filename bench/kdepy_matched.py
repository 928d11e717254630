#!/usr/bin/env python3
"""gfi against KDEpy at matched accuracy, from Python, as a user calls both.

    PYTHONPATH=python GFI_LIBRARY=build/libgfi/libgfi.so \\
        VENV_PYTHON bench/kdepy_matched.py [--n 1e6] [--grid1 1024] [--grid2 256]
        [--repeats 5] [--threads 1] [--dims 1,2] [--sub 256]

VENV_PYTHON: a python with numpy and KDEpy (tools/bench.sh fast makes one at
build/peer-venv; `python3 -m venv --system-site-packages` plus `pip install
KDEpy` does too). Exit status 3 when KDEpy cannot be imported.

Data: N standard-normal points in D = 1 and 2 (numpy's PCG64, seed 1 + D).
Grids: --grid1 points (1-D) and --grid2^2 points (2-D) on the data's box
widened by 1e-9 of its width per side on every axis (KDEpy needs every point
inside its grid). KDEpy: FFTKDE(kernel="gaussian", bw=h).fit(x).evaluate(grid)
with h the MISE-optimal bandwidth for the standard-normal truth
((4 / (3 N))^(1/5) in 1-D, N^(-1/6) in 2-D). gfi: FourierKDE(R, phi=4,
tol, threads).fit(x).evaluate_grid(n, lo, hi), R the MISE-optimal radius
(gfi.optimal_radius), with copy=False (the plan reads x in place: what a
speed-minded user calls; the same values) and, for the ratios matched_D_copy
and default_D_copy, with the default copy=True.

Each side's error is against a direct sum of its own kernel on --sub grid
points spread evenly over the grid: KDEpy's against the exact Gaussian KDE
(numpy, in data blocks), gfi's against FourierKDE(method="direct"); the
error is max |value - exact| / max |exact| over those points. gfi then runs
at tol = KDEpy's measured error (matched accuracy) and at its default tol
(1e-10). The calls are timed interleaved, round by round, best of
--repeats, so a change of the machine's load hits all alike; wall clock and
process CPU time (the steadier one on a loaded machine; both sides run on one
thread with --threads 1).

Prints one line per side and "ratio NAME value" lines: matched_D (goal <=
0.5) and default_D (goal <= 1.5), gfi's CPU time over KDEpy's, and the same
of wall time as matched_D_wall, default_D_wall.
"""
import argparse
import sys
import time

import numpy as np

import gfi

ap = argparse.ArgumentParser(description="gfi vs KDEpy at matched accuracy (Python)")
ap.add_argument("--n", type=float, default=1e6)
ap.add_argument("--grid1", type=int, default=1024)
ap.add_argument("--grid2", type=int, default=256)
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--dims", default="1,2")
ap.add_argument("--sub", type=int, default=256)
args = ap.parse_args()
N = int(args.n)
try:
    from KDEpy import FFTKDE
    import KDEpy
except ImportError as e:
    print("KDEpy is not importable in %s (%s): nothing to compare" % (sys.executable, e))
    sys.exit(3)

print("gfi %s, KDEpy %s, numpy %s, N = %d, threads %d, best of %d"
      % (gfi.__version__, KDEpy.__version__, np.__version__, N, args.threads, args.repeats))


def exact_gauss(x, pts, h):
    """(1/N) sum_i prod_j phi((p_j - x_ij) / h) / h at the points pts (M, D)."""
    Nn, D = x.shape
    out = np.zeros(pts.shape[0])
    B = max(1, 20000000 // pts.shape[0])
    for s in range(0, Nn, B):
        e = np.zeros((min(B, Nn - s), pts.shape[0]))
        for j in range(D):
            u = (pts[None, :, j] - x[s:s + B, j:j + 1]) / h
            e -= 0.5 * u * u
        out += np.exp(e).sum(axis=0)
    return out / (Nn * (np.sqrt(2 * np.pi) * h) ** D)


def rel_err(v, ref):
    return float(np.max(np.abs(v - ref)) / np.max(np.abs(ref)))


for D in [int(d) for d in args.dims.split(",")]:
    n = args.grid1 if D == 1 else args.grid2
    x = np.random.default_rng(1 + D).standard_normal((N, D))
    lo, hi = x.min(axis=0), x.max(axis=0)
    pad = 1e-9 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    axes = [np.linspace(lo[j], hi[j], n) for j in range(D)]
    grid = axes[0] if D == 1 else np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, D)
    xk = x[:, 0] if D == 1 else x
    h = (4.0 / (3.0 * N)) ** 0.2 if D == 1 else N ** (-1.0 / 6)
    R = gfi.optimal_radius("normal", N, phi=4, dim=D)[0]
    G = n ** D
    idx = np.unique(np.linspace(0, G - 1, min(args.sub, G)).round().astype(np.int64))
    pts = grid.reshape(G, D)[idx]

    def kdepy():
        return FFTKDE(kernel="gaussian", bw=h).fit(xk).evaluate(grid)

    def gfi_at(tol, copy=False):
        def f():
            return gfi.FourierKDE(R=R, phi=4, tol=tol, threads=args.threads, copy=copy).fit(x).evaluate_grid(
                n, lo, hi)[1]
        return f

    yk = kdepy()
    ek = rel_err(yk[idx], exact_gauss(x, pts, h))
    ref = gfi.FourierKDE(R=R, phi=4, method="direct", threads=0).fit(x).evaluate(pts)
    calls = {"kdepy": kdepy, "matched": gfi_at(ek), "matched_copy": gfi_at(ek, True), "default": gfi_at(0.0),
             "default_copy": gfi_at(0.0, True)}
    err = {"kdepy": ek}
    for k in ("matched", "matched_copy", "default", "default_copy"):
        err[k] = rel_err(calls[k]().reshape(-1)[idx], ref)
    est = gfi.FourierKDE(R=R, phi=4, tol=ek, threads=args.threads).fit(x)
    est.evaluate_grid(n, lo, hi)
    r_m = est.route_
    est = gfi.FourierKDE(R=R, phi=4, threads=args.threads).fit(x)
    est.evaluate_grid(n, lo, hi)
    r_d = est.route_
    best = {k: float("inf") for k in calls}
    cpu = dict(best)
    for _ in range(args.repeats):
        for k, f in calls.items():
            c0, t0 = time.process_time(), time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
            cpu[k] = min(cpu[k], time.process_time() - c0)
    print("D = %d: grid %d^%d, R = %.4g, h = %.4g, errors on %d grid points" % (D, n, D, R, h, idx.size))
    print("  KDEpy FFTKDE fit + evaluate          wall %.4f s  CPU %.4f s  error %.2e" % (
        best["kdepy"], cpu["kdepy"], ek))
    print("  gfi fit + evaluate_grid, tol %.2e  wall %.4f s  CPU %.4f s  error %.2e  bound %.2e  route %s %s" % (
        ek, best["matched"], cpu["matched"], err["matched"], r_m["bound"], r_m["route"], r_m["bins"] if r_m["bins"][0] else
        r_m["nodes"]))
    print("  gfi as above, copy=True (default)   wall %.4f s  CPU %.4f s" % (best["matched_copy"], cpu["matched_copy"]))
    print("  gfi fit + evaluate_grid, tol 1e-10    wall %.4f s  CPU %.4f s  error %.2e  bound %.2e  route %s %s" % (
        best["default"], cpu["default"], err["default"], r_d["bound"], r_d["route"], r_d["bins"] if r_d["bins"][0] else
        r_d["nodes"]))
    print("  gfi as above, copy=True (default)   wall %.4f s  CPU %.4f s" % (best["default_copy"], cpu["default_copy"]))
    print("ratio matched_%dd %.3f (goal <= 0.5)" % (D, cpu["matched"] / cpu["kdepy"]))
    print("ratio matched_%dd_copy %.3f" % (D, cpu["matched_copy"] / cpu["kdepy"]))
    print("ratio default_%dd %.3f (goal <= 1.5)" % (D, cpu["default"] / cpu["kdepy"]))
    print("ratio default_%dd_copy %.3f" % (D, cpu["default_copy"] / cpu["kdepy"]))
    print("ratio matched_%dd_wall %.3f" % (D, best["matched"] / best["kdepy"]))
    print("ratio default_%dd_wall %.3f" % (D, best["default"] / best["kdepy"]))
    if not (err["matched"] <= ek and err["matched_copy"] == err["matched"] and
            err["default_copy"] == err["default"] and err["default"] <= 1e-10):
        print("ERROR: gfi's error above its tol")
