#!/usr/bin/python3
"""scipy peer for bench/bench_density.c.

Usage: /usr/bin/python3 bench/scipy_kde.py DATA QUERIES [--out FILE]
           [--min-seconds S] [--repeats K] [--max-seconds S]
           [--retries K] [--retry-seconds S]

DATA (N x D) and QUERIES (M x D) are whitespace-separated text, one point a
line. Builds scipy.stats.gaussian_kde(data.T) (Scott's rule, the default, as
gfi_bandwidth_rule("scott")) and times only kde.evaluate(queries.T): each
measurement repeats the call until at least --min-seconds have passed, and
the best of --repeats measurements is kept (fewer once --max-seconds have
been spent), exactly as the C side times gfi_density_eval. When the best
measurement kept less than 85% of a core busy (other load on the machine),
up to --retries more are taken while --retry-seconds last. The densities of
the first call go to --out (one a line, %.17g) so that the caller can check
them against gfi's Gaussian KDE.

Prints "key value" lines: pairs_per_s, best_seconds, measurements, calls,
cpu_util (CPU / wall seconds of the best measurement), retry_seconds, N, M, D, factor,
scipy_version, numpy_version, python_version.
Exit status 3 when numpy or scipy cannot be imported (Debian: apt-get install
python3-scipy), 2 on bad arguments.
"""
import argparse
import platform
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("queries")
    ap.add_argument("--out")
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("--retries", type=int, default=0)
    ap.add_argument("--retry-seconds", type=float, default=0.0)
    a = ap.parse_args()

    try:
        import numpy as np
        import scipy
        from scipy.stats import gaussian_kde
    except ImportError as e:
        print("error no-scipy (%s); install: apt-get install python3-scipy" % e)
        print("scipy peer: %s lacks numpy/scipy: %s" % (sys.executable, e), file=sys.stderr)
        return 3

    data = np.loadtxt(a.data, ndmin=2)
    queries = np.loadtxt(a.queries, ndmin=2)
    if data.shape[1] != queries.shape[1]:
        print("scipy peer: data has D=%d, queries D=%d" % (data.shape[1], queries.shape[1]),
              file=sys.stderr)
        return 2
    N, D = data.shape
    M = queries.shape[0]
    kde = gaussian_kde(data.T)  # bw_method=None: Scott's factor n**(-1/(d+4))
    pts = np.ascontiguousarray(queries.T)

    values = None
    best = None
    util = 0.0
    meas = calls = 0

    def measure():
        nonlocal values, best, util, meas, calls
        k = 0
        c0 = time.process_time()
        t0 = time.perf_counter()
        while True:
            v = kde.evaluate(pts)
            k += 1
            if values is None:
                values = v
            el = time.perf_counter() - t0
            if el >= a.min_seconds:
                break
        meas += 1
        calls += k
        per = el / k
        if best is None or per < best:
            best = per
            util = (time.process_time() - c0) / el
        return el

    spent = 0.0
    for _ in range(max(1, a.repeats)):
        spent += measure()
        if spent >= a.max_seconds:
            break
    retry = 0.0
    for _ in range(max(0, a.retries)):
        if util >= 0.85 or retry >= a.retry_seconds:
            break
        retry += measure()

    if a.out:
        np.savetxt(a.out, values, fmt="%.17g")
    print("pairs_per_s %.17g" % (N * M / best))
    print("best_seconds %.17g" % best)
    print("measurements %d" % meas)
    print("cpu_util %.4f" % util)
    print("retry_seconds %.3f" % retry)
    print("calls %d" % calls)
    print("N %d" % N)
    print("M %d" % M)
    print("D %d" % D)
    print("factor %.17g" % kde.factor)
    print("scipy_version %s" % scipy.__version__)
    print("numpy_version %s" % np.__version__)
    print("python_version %s" % platform.python_version())
    return 0


if __name__ == "__main__":
    sys.exit(main())
