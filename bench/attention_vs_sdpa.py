#!/usr/bin/env python3
"""float32 Fourier attention (gfi_attn_batch_*, phi = z^4, one radius) against torch's
scaled_dot_product_attention (softmax; torch < 2.0: the same from BLAS products) on the CPU: B = 1, H = 8, D = Dv = 64, causal, the same
random Q, K, V. Times forward and forward + backward of each side, interleaved in one process,
best of --reps after a warm-up, at the given thread count (torch.set_num_threads and gfi's
threads alike), and prints the ratios gfi / SDPA and each side's backward / forward, by wall clock
and by the process's CPU time (on a loaded machine the CPU time of a one-thread run is the steadier). Without torch
it says so and exits 0.

usage: attention_vs_sdpa.py [--L 1024 4096] [--threads 1] [--reps 5]
"""
import argparse, sys, time

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # pragma: no cover
    print(f"# torch: {e}: skipped")
    sys.exit(0)
import gfi


def softmax_attention(q, k, v):
    """torch's fused SDPA where it exists (torch >= 2.0), else the same softmax attention from BLAS
    matrix products (the L x L scores formed, as SDPA's math path does on the CPU)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    L = q.shape[-2]
    s = (q @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    s = s.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--L", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    B, H, D = 1, 8, 64
    peer = "SDPA" if hasattr(F, "scaled_dot_product_attention") else "BLAS softmax"
    print(f"# torch {torch.__version__} ({peer}), threads {a.threads}, B {B} H {H} D {D} float32 causal, best of {a.reps}")
    print("L  clock  gfi_fwd_s  sdpa_fwd_s  gfi_fb_s  sdpa_fb_s  ratio_fwd  ratio_fb  gfi_b/f  sdpa_b/f")
    for L in a.L:
        rng = np.random.default_rng(1)
        Q, K, V, dH = (rng.normal(size=(B, H, L, D)).astype(np.float32) for _ in range(4))
        R = 1.0
        res = {}

        def gf():
            return gfi.fourier_attention_batch(Q, K, V, R, phi=4, causal=True, threads=a.threads,
                                               return_context=True)

        def gfb():
            _, ctx = gf()
            gfi.fourier_attention_batch_backward(ctx, dH)

        tq, tk, tv = (torch.from_numpy(x).requires_grad_(True) for x in (Q, K, V))
        tdh = torch.from_numpy(dH)

        def sf():
            with torch.no_grad():
                softmax_attention(tq, tk, tv)

        def sfb():
            h = softmax_attention(tq, tk, tv)
            h.backward(tdh)

        # interleaved: each round times every side once
        for k in ("gf", "sf", "gfb", "sfb"):
            res[k] = 1e300
        fns = {"gf": gf, "sf": sf, "gfb": gfb, "sfb": sfb}
        for fn in fns.values():
            fn()
        cpu = dict(res)
        for _ in range(a.reps):
            for k, fn in fns.items():
                t0, c0 = time.perf_counter(), time.process_time()
                fn()
                res[k] = min(res[k], time.perf_counter() - t0)
                cpu[k] = min(cpu[k], time.process_time() - c0)
        for name, r in (("wall", res), ("cpu", cpu)):
            gb, sb = (r["gfb"] - r["gf"]) / r["gf"], (r["sfb"] - r["sf"]) / r["sf"]
            print(f"{L} {name} {r['gf']:.4f} {r['sf']:.4f} {r['gfb']:.4f} {r['sfb']:.4f} "
                  f"{r['gf'] / r['sf']:.2f} {r['gfb'] / r['sfb']:.2f} {gb:.2f} {sb:.2f}")


if __name__ == "__main__":
    main()
