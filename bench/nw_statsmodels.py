#!/usr/bin/python3
"""Peer for bench_regress: Nadaraya-Watson (local constant, Gaussian product
kernel, fixed bandwidths) with statsmodels' KernelReg on the same data.

usage: nw_statsmodels.py DATA QUERIES H1,..,HD OUT MIN_SECONDS
DATA rows: x1 .. xD y; QUERIES rows: x1 .. xD. Writes the predictions to OUT
(one per line, 17 digits) and prints 'seconds_per_eval REPEATS'."""
import sys
import time

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg


def main():
    data = np.loadtxt(sys.argv[1], ndmin=2)
    q = np.loadtxt(sys.argv[2], ndmin=2)
    bw = np.array([float(v) for v in sys.argv[3].split(",")])
    out, min_s = sys.argv[4], float(sys.argv[5])
    d = data.shape[1] - 1
    kr = KernelReg(endog=data[:, d], exog=data[:, :d], var_type="c" * d, reg_type="lc", bw=bw)
    reps, t0 = 0, time.perf_counter()
    while True:
        mean, _ = kr.fit(q)
        reps += 1
        el = time.perf_counter() - t0
        if el >= min_s:
            break
    np.savetxt(out, mean, fmt="%.17g")
    print(f"{el / reps:.9g} {reps}")


if __name__ == "__main__":
    main()
