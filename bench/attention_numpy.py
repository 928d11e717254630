"""numpy peer of bench_attention: the same Fourier attention forward
H = W V / W 1 with W_ij = prod_d sinc(R (q_id - k_jd))^l, computed with
broadcasting over blocks of query rows (the L x L x D tensor of a whole
sequence would not fit comfortably). Reads Q, K, V as raw float64 from the
files named on the command line, writes H next to them, prints the best time.

usage: attention_numpy.py L D DV L_POW R REPEATS Q.bin K.bin V.bin H.bin"""
import sys
import time

import numpy as np


def forward(Q, K, V, R, l, rows=32):
    H = np.empty((Q.shape[0], V.shape[1]))
    for i0 in range(0, Q.shape[0], rows):
        U = R * (Q[i0:i0 + rows, None, :] - K[None, :, :])
        W = np.prod(np.sinc(U / np.pi) ** l, axis=2)  # np.sinc(x) = sin(pi x)/(pi x)
        H[i0:i0 + rows] = (W @ V) / W.sum(axis=1)[:, None]
    return H


def main():
    L, D, DV, l = (int(a) for a in sys.argv[1:5])
    R = float(sys.argv[5])
    reps = int(sys.argv[6])
    Q = np.fromfile(sys.argv[7]).reshape(L, D)
    K = np.fromfile(sys.argv[8]).reshape(L, D)
    V = np.fromfile(sys.argv[9]).reshape(L, DV)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        H = forward(Q, K, V, R, l)
        best = min(best, time.perf_counter() - t0)
    H.tofile(sys.argv[10])
    print(f"{best:.6f} {np.__version__}")


if __name__ == "__main__":
    main()
