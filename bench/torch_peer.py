#!/usr/bin/env python3
"""PyTorch peer of bench_cuda: the same density sum and Fourier attention
forward + backward on the same GPU and the same data (read from the files
bench_cuda wrote), timed with torch.cuda.synchronize (best of 3 after a
warm-up; 1 timed run for the 10^12-pair density). Prints 'torch KEY VALUE'
lines next to bench_cuda's 'gfi KEY VALUE' lines, and the largest difference
between its results and gfi's (re-read from the same folder).

Density: p(x) = (R/A_4)^3 / N sum_i prod_j sinc(R (x_j - k_ij))^4, queries in
chunks so that a chunk's N x chunk x D tensor stays below ~2^28 elements.
Attention: w_ij = prod_d sinc(R (q_id - k_jd))^4, H = W V / W 1, loss sum(H * dH),
backward by autograd (dQ compared with gfi's), query rows in chunks.
"""
import argparse, math, os, sys, time

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"# torch peer: {e}: skipped")
    sys.exit(0)


def sinc(u):
    # sinc(u) = sin(u)/u (torch.sinc is the normalised sin(pi x)/(pi x))
    return torch.sinc(u / math.pi)


def timed(fn, reps=3):
    fn()
    torch.cuda.synchronize()
    best = 1e300
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best, out


def density(x, q, R, dtype):
    N, D = x.shape
    A4 = 2 * math.pi / 3
    C = (R / A4) ** D / N
    chunk = max(1, (1 << 28) // (N * D))
    out = torch.empty(q.shape[0], dtype=dtype, device=q.device)
    for s in range(0, q.shape[0], chunk):
        u = R * (q[s:s + chunk, None, :] - x[None, :, :])
        out[s:s + chunk] = C * (sinc(u) ** 4).prod(dim=2).sum(dim=1)
    return out


def attention(Q, K, V, dH, R, chunk):
    Q = Q.clone().requires_grad_(True)
    loss = 0
    for s in range(0, Q.shape[0], chunk):
        W = (sinc(R * (Q[s:s + chunk, None, :] - K[None, :, :])) ** 4).prod(dim=2)
        H = (W @ V) / W.sum(dim=1, keepdim=True)
        loss = loss + (H * dH[s:s + chunk]).sum()
    return Q, loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--N", type=int, required=True)
    ap.add_argument("--L", type=int, required=True)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("# torch peer: no CUDA device visible to torch: skipped")
        return
    dev = torch.device("cuda")
    print(f"# torch {torch.__version__}, device {torch.cuda.get_device_name(0)}")
    rd = lambda n: np.fromfile(os.path.join(a.dir, n), dtype=np.float64)
    x, q = rd("x.bin").reshape(a.N, 3), rd("q.bin").reshape(-1, 3)
    gfi = {}
    with open(os.path.join(a.dir, "gfi.txt")) as f:
        for line in f:
            k, v = line.split()
            gfi[k] = float(v)
    torch_v = {}
    for tag, dt in (("f32", torch.float32), ("f64", torch.float64)):
        xt = torch.tensor(x, dtype=dt, device=dev)
        qt = torch.tensor(q, dtype=dt, device=dev)
        t, p = timed(lambda: density(xt, qt, 4.0, dt), reps=1 if a.N >= 10**6 else 3)
        rate = a.N * q.shape[0] / t
        ref = rd("p32.bin" if tag == "f32" else "p64.bin")
        pc = p.double().cpu().numpy()
        diff = np.max(np.abs(pc - ref)) / np.max(np.abs(ref))
        print(f"torch density_{tag}_pairs_per_s {rate:.4g}  ({t:.4g} s; max |torch - gfi| / max p = {diff:.2g})")
        torch_v[f"density_{tag}_pairs_per_s"] = rate
    L = a.L
    Q, K = rd("Q.bin").reshape(L, 64), rd("K.bin").reshape(L, 64)
    V, dH = rd("V.bin").reshape(L, 64), rd("dH.bin").reshape(L, 64)
    for tag, dt in (("f32", torch.float32), ("f64", torch.float64)):
        Qt, Kt, Vt, dHt = (torch.tensor(z, dtype=dt, device=dev) for z in (Q, K, V, dH))
        chunk = max(1, (1 << 27) // (L * 64))

        def fwd():
            with torch.no_grad():
                return attention(Qt, Kt, Vt, dHt, 1.0, chunk)[1]

        def fwdbwd():
            Qg, loss = attention(Qt, Kt, Vt, dHt, 1.0, chunk)
            loss.backward()
            return Qg.grad

        tf, _ = timed(fwd)
        tfb, g = timed(fwdbwd)
        ref = rd("dQ32.bin" if tag == "f32" else "dQ64.bin")
        gc = g.double().cpu().numpy().ravel()
        diff = np.max(np.abs(gc - ref)) / np.max(np.abs(ref))
        print(f"torch attn_fwd_{tag}_s {tf:.4g}")
        print(f"torch attn_fwdbwd_{tag}_s {tfb:.4g}  (max |dQ torch - gfi| / max |dQ| = {diff:.2g})")
        torch_v[f"attn_fwd_{tag}_s"] = tf
        torch_v[f"attn_fwdbwd_{tag}_s"] = tfb
    for k, v in torch_v.items():
        g = gfi.get(k)
        if g:
            speedup = g / v if k.endswith("pairs_per_s") else v / g
            print(f"ratio {k} gfi/torch speed-up {speedup:.3g}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
