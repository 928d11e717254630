"""numpy peer of bench_attention_batch: FourierFormer's attention computed the
way its Python path does, in float32, materialising the (B, H, Lq, Lk, d)
tensor of differences before the product over d:
    U = R (q_i - k_j),  W = prod_d sinc(U)^4,  H = W V / (sum_j W + 1e-6)
with the causal mask offset by Lk - Lq; the backward by hand as autograd
would run it on those tensors (the product's derivative through W / sinc),
and softmax attention with numpy's BLAS for comparison. Reads Q, K, V, dH as
raw float32 from the files named, writes H next to them, prints the best
time, the peak of numpy's allocations (tracemalloc, bytes) and the best
CPU time of the process (all its threads).

usage: attention_batch_numpy.py MODE B H LQ LK D DV R CAUSAL REPS Q K V DH OUT
       MODE: fwd | fwdbwd | softmax"""
import sys
import time
import tracemalloc

import numpy as np


def fourier(Q, K, V, R, causal, dH=None):
    Lq, Lk = Q.shape[2], K.shape[2]
    U = R * (Q[:, :, :, None, :] - K[:, :, None, :, :])         # B H Lq Lk d
    S = np.sinc(U / np.float32(np.pi))                          # sin(u)/u
    W = np.prod(S ** 4, axis=-1)                                # B H Lq Lk
    if causal:
        W = W * np.tril(np.ones((Lq, Lk), np.float32), Lk - Lq)
    den = W.sum(-1, keepdims=True) + np.float32(1e-6)
    H = (W @ V) / den
    if dH is None:
        return H
    # backward of H = W V / den, then of W = prod sinc(U)^4 (autograd's route:
    # dW/dU = W * 4 sinc'(U) / sinc(U))
    dV = np.swapaxes(W / den, -1, -2) @ dH
    dW = (dH @ np.swapaxes(V, -1, -2) - (dH * H).sum(-1, keepdims=True)) / den
    with np.errstate(divide="ignore", invalid="ignore"):
        dS = (np.cos(U) - S) / U
        G = (dW * W)[..., None] * 4 * dS / S * R
    G = np.nan_to_num(G)
    dQ = G.sum(3)
    dK = -G.sum(2)
    return H, dQ, dK, dV


def softmax(Q, K, V, causal):
    Lq, Lk = Q.shape[2], K.shape[2]
    A = (Q @ np.swapaxes(K, -1, -2)) * np.float32(1 / np.sqrt(Q.shape[-1]))
    if causal:
        A = np.where(np.tril(np.ones((Lq, Lk), bool), Lk - Lq), A, np.float32(-np.inf))
    A = np.exp(A - A.max(-1, keepdims=True))
    return (A @ V) / A.sum(-1, keepdims=True)


def main():
    mode = sys.argv[1]
    B, H, Lq, Lk, D, DV = (int(a) for a in sys.argv[2:8])
    R = np.float32(float(sys.argv[8]))
    causal = int(sys.argv[9])
    reps = int(sys.argv[10])
    rd = lambda p, *s: np.fromfile(p, dtype=np.float32).reshape(s)
    Q = rd(sys.argv[11], B, H, Lq, D)
    K = rd(sys.argv[12], B, H, Lk, D)
    V = rd(sys.argv[13], B, H, Lk, DV)
    dH = rd(sys.argv[14], B, H, Lq, DV)
    best, bcpu, peak = float("inf"), float("inf"), 0
    for _ in range(reps):
        tracemalloc.start()
        t0, c0 = time.perf_counter(), time.process_time()
        if mode == "fwd":
            out = fourier(Q, K, V, R, causal)
        elif mode == "fwdbwd":
            out = fourier(Q, K, V, R, causal, dH)[0]
        else:
            out = softmax(Q, K, V, causal)
        best = min(best, time.perf_counter() - t0)
        bcpu = min(bcpu, time.process_time() - c0)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    out.astype(np.float32).tofile(sys.argv[15])
    print(f"{best:.6f} {peak} {bcpu:.6f} {np.__version__}")


if __name__ == "__main__":
    main()
