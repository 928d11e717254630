#!/usr/bin/env python3
"""KDEpy and fastKDE peers for bench/bench_fast.c (density on a regular grid).

Usage: python3 bench/kdepy_peer.py DATA.npy --grid LO:HI:N [--bw H]
           [--tool kdepy|fastkde] [--repeats K] [--min-seconds S]
           [--no-exact] [--once --out FILE.npy]

DATA.npy holds N x D float64 points (D = 1 or 2; a 1-D array is N x 1). The
grid has N points from LO to HI inclusive on every axis (N^D points, the
first axis slowest), as gfi's --grid LO:HI:N.

--tool kdepy (default): KDEpy's FFTKDE with the Gaussian kernel, standard
deviation --bw on every axis (Euclidean norm: in 2-D the product Gaussian),
its default linear binning, evaluated on the grid. The grid must contain
every data point (KDEpy refuses otherwise).
--tool fastkde: fastKDE.pdf with its own self-consistent bandwidth on its own
grid of about N points per axis (it takes no bandwidth and no grid), timed
only: its estimate has no direct-sum counterpart here, so no error is given.

Timing mode (default): loads the data, then times the computation alone
(fit + evaluate on the grid; data already in memory, modules imported): each
measurement repeats the call until --min-seconds have passed, best of
--repeats. Then, unless --no-exact, it computes the exact Gaussian KDE on the
same grid directly, (1/N) sum_i prod_j phi((g_j - x_ij)/h)/h, as a sum over
data blocks of exact kernel values (in 2-D as a matrix product of the two
axes' kernel matrices, which is the same sum), and prints KDEpy's error
max |kdepy - exact| / max |exact|.

--once --out FILE.npy: the whole-process mode: import, load, compute once,
write the grid values (float64, N^D) to FILE.npy and exit; the caller times
the process from start to exit.

Prints "key value" lines: seconds (best seconds per call), measurements,
calls, cpu_util, N, D, grid, bw, rel_err, max_exact, points (grid points
produced), kdepy_version / fastkde_version, numpy_version, python_version.
Exit status 3 when a needed module cannot be imported, 2 on bad arguments.
"""
import argparse
import platform
import sys
import time


def parse_grid(s):
    lo, hi, n = s.split(":")
    return float(lo), float(hi), int(n)


def version(dist):
    try:
        from importlib.metadata import version as v
        return v(dist)
    except Exception:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--grid", required=True, type=parse_grid)
    ap.add_argument("--bw", type=float, default=0.0)
    ap.add_argument("--tool", choices=("kdepy", "fastkde"), default="kdepy")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--no-exact", action="store_true")
    ap.add_argument("--once", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.once and not a.out:
        print("kdepy peer: --once needs --out", file=sys.stderr)
        return 2

    try:
        import numpy as np
        if a.tool == "kdepy":
            from KDEpy import FFTKDE
        else:
            from fastkde import fastKDE
    except ImportError as e:
        print("error no-module (%s)" % e)
        print("kdepy peer: %s lacks a module: %s (tools/bench.sh installs KDEpy and fastkde "
              "in a virtual environment)" % (sys.executable, e), file=sys.stderr)
        return 3

    x = np.load(a.data)
    if x.ndim == 1:
        x = x[:, None]
    N, D = x.shape
    if D not in (1, 2):
        print("kdepy peer: D = %d (1 or 2 supported)" % D, file=sys.stderr)
        return 2
    lo, hi, n = a.grid
    g1 = np.linspace(lo, hi, n)
    if D == 1:
        grid = g1
        data = x[:, 0]
    else:
        grid = np.stack(np.meshgrid(g1, g1, indexing="ij"), -1).reshape(-1, 2)
        data = x
    if a.tool == "kdepy" and not a.bw > 0:
        print("kdepy peer: --bw H > 0 is needed with --tool kdepy", file=sys.stderr)
        return 2

    def compute():
        if a.tool == "kdepy":
            return FFTKDE(kernel="gaussian", bw=a.bw).fit(data).evaluate(grid)
        if D == 1:
            return np.asarray(fastKDE.pdf(data, num_points=n + 1))
        return np.asarray(fastKDE.pdf(data[:, 0], data[:, 1], num_points=n + 1))

    if a.once:
        y = compute()
        np.save(a.out, np.ascontiguousarray(y, dtype=np.float64))
        return 0

    values = None
    best = None
    util = 0.0
    meas = calls = 0
    for _ in range(max(1, a.repeats)):
        k = 0
        c0 = time.process_time()
        t0 = time.perf_counter()
        while True:
            y = compute()
            k += 1
            if values is None:
                values = y
            el = time.perf_counter() - t0
            if el >= a.min_seconds:
                break
        meas += 1
        calls += k
        per = el / k
        if best is None or per < best:
            best = per
            util = (time.process_time() - c0) / el

    rel_err = float("nan")
    max_exact = float("nan")
    if a.tool == "kdepy" and not a.no_exact:
        h = a.bw
        norm = 1.0 / (np.sqrt(2.0 * np.pi) * h)
        B = max(1, min(N, 20000000 // (n * D)))  # data block: ~160 MB of kernel values
        if D == 1:
            exact = np.zeros(n)
            for s in range(0, N, B):
                u = (g1[None, :] - x[s:s + B, 0:1]) / h
                exact += np.exp(-0.5 * u * u).sum(axis=0)
            exact *= norm / N
        else:
            exact = np.zeros((n, n))
            for s in range(0, N, B):
                u = (g1[None, :] - x[s:s + B, 0:1]) / h
                v = (g1[None, :] - x[s:s + B, 1:2]) / h
                exact += np.exp(-0.5 * u * u).T @ np.exp(-0.5 * v * v)
            exact *= norm * norm / N
            exact = exact.reshape(-1)
        max_exact = float(np.max(np.abs(exact)))
        rel_err = float(np.max(np.abs(values - exact)) / max_exact)

    print("seconds %.17g" % best)
    print("measurements %d" % meas)
    print("calls %d" % calls)
    print("cpu_util %.4f" % util)
    print("N %d" % N)
    print("D %d" % D)
    print("grid %g:%g:%d" % (lo, hi, n))
    print("bw %.17g" % a.bw)
    print("points %d" % np.size(values))
    print("rel_err %.6e" % rel_err)
    print("max_exact %.17g" % max_exact)
    if a.tool == "kdepy":
        print("kdepy_version %s" % version("KDEpy"))
    else:
        print("fastkde_version %s" % version("fastkde"))
    print("numpy_version %s" % np.__version__)
    print("python_version %s" % platform.python_version())
    return 0


if __name__ == "__main__":
    sys.exit(main())
