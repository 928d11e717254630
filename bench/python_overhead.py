"""Per-call cost of a small evaluate from Python: a fitted FourierKDE over
N = 1e4 points (phi = z^4, R = 2) evaluated at 10 points and at 1 point,
under the default route (method="auto") and under method="direct"; for each,
the whole Python call and the same C call through bare ctypes (the library's
share), best of --repeats rounds of --calls calls each.

    GFI_LIBRARY=build/libgfi/libgfi.so PYTHONPATH=python python3 bench/python_overhead.py [--threads 1]

Prints one row per case: microseconds per call (Python, bare ctypes), the
route the call took, and auto / direct."""
import argparse
import ctypes
import time

import numpy as np

import gfi
from gfi._lib import FastInfo, addr, lib, ref

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--n", type=float, default=1e4)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--calls", type=int, default=2000)
ap.add_argument("--repeats", type=int, default=7)
args = ap.parse_args()

N = int(args.n)
x = gfi.Model("normal").sample(N, seed=1)


def best(fn):
    t = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for _ in range(args.calls):
            fn()
        t.append((time.perf_counter() - t0) / args.calls)
    return min(t)


print("N = %d, phi = z^4, R = 2, threads = %d, best of %d x %d calls (us per call)"
      % (N, args.threads, args.repeats, args.calls))
print("%-8s %-7s %10s %12s %-7s" % ("points", "method", "python", "bare ctypes", "route"))
res = {}
for M in (10, 1):
    q = np.linspace(-2, 2, M)
    for method in ("auto", "direct"):
        kde = gfi.FourierKDE(R=2.0, phi=4, method=method, threads=args.threads).fit(x)
        kde.evaluate(q)  # warm: the lazy tables of the route it takes
        route = kde.route_["route"]
        out = np.empty(M)
        info = FastInfo()
        ptr, aq, ao, ai = kde._fitted.handle.ptr, addr(q), addr(out), ref(info)
        f = lib.gfi_density_eval_info
        t_py = best(lambda: kde.evaluate(q))
        t_c = best(lambda: f(ptr, M, aq, ao, ai))
        res[(M, method)] = t_py
        print("%-8d %-7s %10.2f %12.2f %-7s" % (M, method, t_py * 1e6, t_c * 1e6, route))
for M in (10, 1):
    print("%d-point evaluate: auto / direct = %.2f" % (M, res[(M, "auto")] / res[(M, "direct")]))
