#!/usr/bin/env python3
"""Benchmark of the Python package gfi (docs/python.md, "Performance").

    GFI_LIBRARY=build/libgfi/libgfi.so PYTHONPATH=python \\
        python3 bench/python_bench.py [--n 1000000] [--grid 1024] [--repeats 5]
        [--threads 0] [--c-peer build/bench/bench_python_peer] [--c-rounds 3] [--big-n 1e8]

(or with gfi installed by pip; KDEpy from PyPI in the same environment, e.g.
a venv made with --system-site-packages, Debian's scipy otherwise).

1. Call overhead: a 10-point evaluation of a fitted estimator, the whole
   Python call (argument checks, conversion, ctypes, the route report)
   against the bare ctypes call of the same C function on prepared pointers.
   Goal: the whole call under 20 us.
2. N points of N(0, 1), the Fourier estimator (phi = z^4, R = 2) on a grid of
   --grid points: fit + evaluate_grid from Python against the same two calls
   in C (bench_python_peer, on the same data; the checksums must agree to the
   bit), and against the same two calls through bare ctypes in this process.
   Goal: within 5%.
3. Peers in the same process on the same grid: KDEpy's FFTKDE (Gaussian,
   Scott's bandwidth; skipped when KDEpy is missing), scipy.stats.gaussian_kde
   (on a 1e5-point subsample, scaled to N: its cost is exactly linear in N),
   and gfi's own GaussianKDE with scipy's bandwidth.
4. Zero copy: the peak of what Python/numpy allocate (tracemalloc) while
   fitting and evaluating an estimator on --big-n float64 points (0: skip).
Best of --repeats for every timing, wall clock and process CPU time (the
steadier one on a loaded machine); ratios printed as "ratio NAME value".
"""
import argparse
import ctypes
import os
import resource
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc

import numpy as np

import gfi
from gfi._lib import lib, addr, make_opts, ref
from gfi.kernels import make_kernel

ap = argparse.ArgumentParser(description="gfi Python benchmark")
ap.add_argument("--n", type=float, default=1e6)
ap.add_argument("--grid", type=int, default=1024)
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--threads", type=int, default=0)
ap.add_argument("--c-peer", default=None)
ap.add_argument("--c-rounds", type=int, default=3,
                help="rounds of the C program per start (its best: a warm process, as Python's rounds)")
ap.add_argument("--big-n", type=float, default=1e8)
args = ap.parse_args()
N = int(args.n)


def best(f, repeats):
    return best_cpu(f, repeats)[0]


def best_cpu(f, repeats):
    """(least wall time, least process CPU time, minor page faults of the
    round of least CPU time) of f over repeats calls."""
    ts, cs = [], []
    for _ in range(repeats):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        c0 = time.process_time()
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
        cs.append((time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))
    return min(ts), min(cs)[0], min(cs)[1]


print("python %s numpy %s gfi %s (%s), threads %d of %d" % (sys.version.split()[0], np.__version__, gfi.__version__,
                                                           gfi.LIBRARY_PATH, args.threads, gfi.threads_available()))

# ---- 1. call overhead ----
small = gfi.Model("normal").sample(100, seed=1)
kde = gfi.FourierKDE(R=2.0, method="direct", threads=1).fit(small)
q = np.linspace(-1, 1, 10)
out = np.empty(10)
n_calls = 20000
plan, qa, oa = kde._plan.ptr, addr(q), addr(out)
f = lib.gfi_density_eval
for timer, what in ((time.perf_counter, "wall"), (time.process_time, "CPU")):
    def per_call(fn):
        return min(timeit.repeat(fn, number=n_calls, repeat=args.repeats, timer=timer)) / n_calls
    t_py = per_call(lambda: kde.evaluate(q, out=out))
    t_py_alloc = per_call(lambda: kde.evaluate(q))
    t_raw = per_call(lambda: f(plan, 10, qa, oa))
    print("overhead (%s time): 10-point evaluate (N = 100): %.2f us whole call (%.2f us with a new output array); "
          "bare ctypes call of gfi_density_eval %.2f us; Python's share %.2f us" %
          (what, t_py * 1e6, t_py_alloc * 1e6, t_raw * 1e6, (t_py - t_raw) * 1e6))
    print("ratio call_us_vs_goal20%s %.3f" % ("" if what == "wall" else "_cpu", t_py * 1e6 / 20))

# ---- 2. N = 1e6 on a grid: Python vs C ----
x = gfi.Model("normal").sample(N, seed=1)
lo, hi = float(x.min()) - 0.5, float(x.max()) + 0.5
grid = np.linspace(lo, hi, args.grid)


def py_fourier():
    k = gfi.FourierKDE(R=2.0, phi=4, threads=args.threads).fit(x)
    return k.evaluate_grid(n=args.grid, lo=lo, hi=hi)


_, p_py = py_fourier()
route = gfi.FourierKDE(R=2.0, phi=4).fit(x)
route.evaluate_grid(n=args.grid, lo=lo, hi=hi)
peer = args.c_peer or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench",
                                   "bench_python_peer")
# The same two C calls through bare ctypes in this process (no wrapper):
# what the wrapper itself costs, free of the differences between two processes
_k = make_kernel(4)
_o = make_opts(args.threads)
_R, _lo, _hi = np.array([2.0]), np.array([lo]), np.array([hi])
_n = np.array([args.grid], dtype=np.uintp)
_p = np.empty(args.grid)


def raw_fourier():
    plan = ctypes.c_void_p()
    st = lib.gfi_density_plan_fourier(ref(plan), ref(_k), N, 1, addr(x), None, addr(_R), ref(_o))
    st = st or lib.gfi_density_eval_grid(plan, addr(_lo), addr(_hi), addr(_n), addr(_p), None)
    lib.gfi_density_destroy(plan)
    assert st == 0


# Python, bare ctypes and the C program interleaved, round by round (best of
# each), so that a change of the machine's load affects all sides alike
# (wall and process CPU time: on a loaded machine the CPU time of one thread
# is the steadier measure of the work done)
# Minor page faults per round tell whether the allocator took its memory from
# the system afresh (glibc returns a freed heap top above its trim threshold,
# which it adapts to the process's history: GLIBC_TUNABLES fixes it, and the C
# program inherits this process's environment).
inf = float("inf")
t_pyF, t_raw, t_c, same = inf, inf, inf, None
c_pyF, c_raw, c_c = (inf, 0), (inf, 0), (inf, 0)
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "x.npy")
    np.save(path, x)
    for _ in range(args.repeats):
        w, c, flt = best_cpu(py_fourier, 1)
        t_pyF, c_pyF = min(t_pyF, w), min(c_pyF, (c, flt))
        w, c, flt = best_cpu(raw_fourier, 1)
        t_raw, c_raw = min(t_raw, w), min(c_raw, (c, flt))
        if os.path.exists(peer):
            r = subprocess.run([peer, path, "2", "4", repr(lo), repr(hi), str(args.grid), str(args.c_rounds),
                                str(args.threads)], capture_output=True, text=True, check=True)
            kv = dict(l.split(None, 1) for l in r.stdout.splitlines())
            t_c = min(t_c, float(kv["seconds"]))
            c_c = min(c_c, (float(kv["cpu_seconds"]), int(kv["minflt"])))
            s = 0.0
            for v in p_py.reshape(-1).tolist():  # the C peer's order: a plain running sum
                s += v
            same = float(kv["checksum"]) == s
print("fourier N = %d, grid %d: Python %.4f s (route %s, nodes %s)" % (N, args.grid, t_pyF, route.route_["route"],
                                                                        route.route_["nodes"]))
print("fourier N = %d, grid %d: Python CPU %.4f s, %d page faults" % (N, args.grid, c_pyF[0], c_pyF[1]))
print("fourier N = %d, grid %d: bare ctypes calls %.4f s (CPU %.4f s, %d page faults)" % (N, args.grid, t_raw,
                                                                                          c_raw[0], c_raw[1]))
print("ratio python_vs_bare_ctypes %.4f" % (t_pyF / t_raw))
print("ratio python_vs_bare_ctypes_cpu %.4f" % (c_pyF[0] / c_raw[0]))
if same is not None:
    print("fourier N = %d, grid %d: C %.4f s, CPU %.4f s, %d page faults (best of %d rounds per start; checksum %s)"
          % (N, args.grid, t_c, c_c[0], c_c[1], args.c_rounds, "equal" if same else "DIFFERENT"))
    print("ratio python_vs_c %.4f" % (t_pyF / t_c))
    print("ratio python_vs_c_cpu %.4f" % (c_pyF[0] / c_c[0]))
else:
    print("C peer %s not built (ninja -C build bench/bench_python_peer): Python/C ratio skipped" % peer)

# ---- 3. peers ----
h = N ** (-1 / 5) * np.std(x, ddof=1)  # Scott's factor times the sample sd: scipy's and KDEpy's choice
try:
    from KDEpy import FFTKDE
except ImportError:
    print("KDEpy is not installed (pip install KDEpy in a venv): its ratio is skipped")
else:
    t_k = best(lambda: FFTKDE(kernel="gaussian", bw=h).fit(x).evaluate(grid), args.repeats)
    print("KDEpy FFTKDE (Gaussian, h = %.4g): %.4f s" % (h, t_k))
    print("ratio gfi_fourier_vs_kdepy %.4f" % (t_pyF / t_k))
    t_gg = best(lambda: gfi.GaussianKDE(bandwidth=h, threads=args.threads).fit(x).evaluate_grid(
        n=args.grid, lo=lo, hi=hi), args.repeats)
    print("gfi GaussianKDE (same h, grid): %.4f s" % t_gg)
    print("ratio gfi_gauss_vs_kdepy %.4f" % (t_gg / t_k))
try:
    from scipy.stats import gaussian_kde
except ImportError:
    print("scipy is not installed: its ratio is skipped")
else:
    sub = x[:100000]
    t_s = best(lambda: gaussian_kde(sub)(grid), 1) * (N / sub.size)
    print("scipy gaussian_kde: %.4f s (1e5-point subsample x %.0f)" % (t_s, N / sub.size))
    print("ratio gfi_fourier_vs_scipy %.5f" % (t_pyF / t_s))
    if "t_gg" in dir():
        print("ratio gfi_gauss_vs_scipy %.5f" % (t_gg / t_s))

# ---- 4. zero copy ----
if args.big_n > 0:
    nb = int(args.big_n)
    xb = np.random.default_rng(0).standard_normal(nb)
    tracemalloc.start()
    kb = gfi.FourierKDE(R=2.0, method="direct").fit(xb)
    kb.evaluate(np.zeros(10))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print("zero copy: %d float64 points (%.0f MiB): peak Python/numpy allocation during fit+evaluate %.3f MiB" %
          (nb, xb.nbytes / 2 ** 20, peak / 2 ** 20))
    print("ratio zero_copy_peak_vs_data %.2e" % (peak / xb.nbytes))
