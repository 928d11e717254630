#!/usr/bin/env bash
# Soak test (not in CI: minutes): ROUNDS rounds (default 10000) of fit,
# evaluate, radius selection and refused calls through gfi's Python package in
# one process (one thread: the calls, not OpenMP's pool, are soaked), sampling its resident memory (VmRSS) and open file descriptors
# every ROUNDS/20 rounds. Fails when, after a warm-up of a tenth of the rounds,
# the RSS grows by more than 4 MiB or the descriptors change.
# Usage: tools/soak.sh [ROUNDS] [BUILD_DIR]   (BUILD_DIR default: build)
set -eu
ROUNDS=${1:-10000}
BUILD=${2:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export GFI_LIBRARY=$BUILD/libgfi/libgfi.so
export PYTHONPATH=$ROOT/python
[ -e "$GFI_LIBRARY" ] || { echo "soak: no $GFI_LIBRARY (build first: meson setup build && ninja -C build)" >&2; exit 2; }
exec /usr/bin/python3 - "$ROUNDS" <<'EOF'
import os
import sys
import time

import numpy as np

import gfi

rounds = int(sys.argv[1])
every = max(rounds // 20, 1)
warm = max(rounds // 10, 1)


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def nfds():
    return len(os.listdir("/proc/self/fd"))


rng = np.random.default_rng(1)
x1 = rng.normal(size=(200, 1))
x2 = rng.normal(size=(150, 2))
y = np.sin(x1[:, 0]) + 0.1 * rng.normal(size=200)
q1 = np.linspace(-3, 3, 64)[:, None]
q2 = rng.normal(size=(40, 2))
Q = rng.normal(size=(16, 4))
bad = x1.copy()
bad[7, 0] = np.nan
errors = 0
samples = []
t0 = time.time()
for r in range(1, rounds + 1):
    # fit and evaluate (both routes), regression, attention
    gfi.FourierKDE(R=2.0, phi=4, method="direct", threads=1).fit(x1).evaluate(q1)
    gfi.FourierKDE(R=[1.5, 2.5], phi=2, method="fast", threads=1).fit(x2).evaluate(q2)
    gfi.GaussianKDE(bandwidth="scott", threads=1).fit(x2).evaluate(q2)
    gfi.FourierNW(R=2.0, phi=4, threads=1).fit(x1, y).predict(q1, return_flags=True)
    gfi.softmax_attention(Q, Q, Q, threads=1)
    gfi.fourier_attention(Q, Q, Q, R=1.0, threads=1, return_context=True)
    # criteria and selection (a short scan)
    gfi.lscv(x1, 2.0, threads=1)
    if r % 20 == 0:
        gfi.select_radius_lscv(x1, nscan=8, threads=1)
    # refused calls: every error path frees what it took
    for call in (lambda: gfi.FourierKDE(R=2.0).fit(bad),
                 lambda: gfi.FourierKDE(R=-1.0).fit(x1),
                 lambda: gfi.select_radius_lscv(x1[:1]),
                 lambda: gfi.softmax_attention(Q * 1e200, Q * 1e200, Q),
                 lambda: gfi.Model("normal:mean=x"),
                 lambda: gfi.FourierNW(R=2.0).fit(x1, y[:5])):
        try:
            call()
        except gfi.Error:
            errors += 1
    if r % every == 0 or r == rounds:
        samples.append((r, rss_kib(), nfds(), time.time() - t0))
        print("round %6d  rss %7d KiB  fds %3d  %6.1f s" % samples[-1], flush=True)

base = [s for s in samples if s[0] >= warm][0]
last = samples[-1]
growth = last[1] - base[1]
print("soak: %d rounds, %d refused calls; rss %d KiB at round %d, %d KiB at round %d (growth %+d KiB); fds %d -> %d"
      % (rounds, errors, base[1], base[0], last[1], last[0], growth, base[2], last[2]))
ok = growth <= 4096 and last[2] == base[2] and errors == 6 * rounds
print("soak: %s" % ("no growth" if ok else "FAILED"))
sys.exit(0 if ok else 1)
EOF
