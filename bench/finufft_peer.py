"""FINUFFT's 1-D type 1 as bench_nufft's peer (its section 'threads').

Times finufft.nufft1d1 (one-shot) and a finufft.Plan kept across calls at
1 and 2 threads on the same problem as bench_nufft: N points uniform in
[-pi, pi), complex strengths uniform in [-1, 1]^2, the given modes and tol,
isign +1. Prints the best wall time of --reps calls after a warm-up, the
process CPU time of that call and the ratio 1 thread / 2 threads. Exits 3
(bench_nufft then prints that it was skipped) when finufft or numpy is
missing. usage: python3 finufft_peer.py --n N --modes M --tol TOL --reps R
"""
import argparse
import sys
import time

try:
    import numpy as np
    import finufft
except ImportError as e:  # the peer is optional
    print(f"# peer: FINUFFT skipped ({e})")
    sys.exit(3)


def best(fn, reps):
    fn()  # warm-up
    wall = cpu = float("inf")
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--modes", type=int, default=1_000_000)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(12345)
    x = rng.uniform(-np.pi, np.pi, a.n)
    c = rng.uniform(-1, 1, a.n) + 1j * rng.uniform(-1, 1, a.n)
    out = np.empty(a.modes, dtype=np.complex128)
    print(f"# peer: finufft {finufft.__version__}, N = {a.n}, {a.modes} modes, tol {a.tol:g}")
    print("# case wall_1t cpu_1t wall_2t cpu_2t ratio cpu_growth")
    res = {}
    for nt in (1, 2):
        one = best(lambda: finufft.nufft1d1(x, c, a.modes, out=out, eps=a.tol, isign=1,
                                             nthreads=nt), a.reps)
        p = finufft.Plan(1, (a.modes,), eps=a.tol, isign=1, nthreads=nt)
        # setpts (FINUFFT's sort) inside the timing: gfi's exec takes the points too
        kept = best(lambda: (p.setpts(x), p.execute(c, out=out)), a.reps)
        res[nt] = (one, kept)
    for i, name in enumerate(("finufft_oneshot", "finufft_plan_kept")):
        (w1, c1), (w2, c2) = res[1][i], res[2][i]
        print(f"{name} {w1:.4f} {c1:.4f} {w2:.4f} {c2:.4f} {w1 / w2:.2f} {c2 / c1:.2f}")


if __name__ == "__main__":
    main()
