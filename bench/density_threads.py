#!/usr/bin/env python3
"""Two threads against one on the fast density, from Python, as a user calls it.

    PYTHONPATH=python GFI_LIBRARY=build/libgfi/libgfi.so \\
        python3 bench/density_threads.py [--n 1e7] [--grid 4096] [--R 20]
        [--tol 0] [--repeats 7]

Data: N standard-normal points in 1-D (numpy's PCG64, seed 1). Call:
FourierKDE(R, phi=4, tol, threads=T, copy=C).fit(x).evaluate_grid(grid) for
T = 1 and 2 and C = False (the plan reads x in place) and True (the
default: the plan keeps its own copy), timed round by round in turn, best of
--repeats, wall clock and process CPU time. Both thread counts give the same
bits (checked). Prints the route once and one line per C with the wall
ratio "speedup" (goal >= 1.8) and the CPU growth (2-thread CPU over
1-thread CPU). Meaningful only on an otherwise idle machine with at least
two cores; a benchmark, not a test.
"""
import argparse
import time

import numpy as np

import gfi

ap = argparse.ArgumentParser(description="fast density: 2 threads against 1")
ap.add_argument("--n", type=float, default=1e7)
ap.add_argument("--grid", type=int, default=4096)
ap.add_argument("--R", type=float, default=20.0)
ap.add_argument("--tol", type=float, default=0.0)
ap.add_argument("--repeats", type=int, default=7)
args = ap.parse_args()
x = np.random.default_rng(1).standard_normal(int(args.n))


def call(t, copy):
    return gfi.FourierKDE(R=args.R, phi=4, tol=args.tol, threads=t, copy=copy).fit(x)


e = call(1, False)
v1 = e.evaluate_grid(args.grid)[1]
print("gfi %s, N = %d, grid %d, R = %g, tol %g, best of %d" % (gfi.__version__, x.size, args.grid, args.R, args.tol,
                                                            args.repeats))
print("route", e.route_)
v2 = call(2, False).evaluate_grid(args.grid)[1]
if not np.array_equal(v1, v2):
    raise SystemExit("ERROR: 1 and 2 threads gave different values")
keys = [(t, c) for c in (False, True) for t in (1, 2)]
wall = {k: float("inf") for k in keys}
cpu = dict(wall)
for _ in range(args.repeats):
    for t, c in keys:
        w0, c0 = time.perf_counter(), time.process_time()
        call(t, c).evaluate_grid(args.grid)
        wall[t, c] = min(wall[t, c], time.perf_counter() - w0)
        cpu[t, c] = min(cpu[t, c], time.process_time() - c0)
for c in (False, True):
    print("copy=%-5s 1 thread wall %.4f s CPU %.4f s; 2 threads wall %.4f s CPU %.4f s; speedup %.2f (goal >= 1.8); "
          "CPU growth %.2f" % (c, wall[1, c], cpu[1, c], wall[2, c], cpu[2, c], wall[1, c] / wall[2, c],
                               cpu[2, c] / cpu[1, c]))
