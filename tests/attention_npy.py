"""Helpers of cli_attention_batch_test.sh, standard library only (no numpy):
write 4-D .npy inputs, read .npy outputs, and a brute-force Fourier attention
(with masks, the causal offset and +eps) and its finite differences.

usage: attention_npy.py make DIR           write DIR/{q,k,v,kpad,mask,allpad}.npy and DIR/case.json
       attention_npy.py check DIR H.npy    compare H with the brute force (max relative error)
       attention_npy.py fd DIR PREFIX      compare PREFIX.dQ.npy and PREFIX.dR.npy with finite
                                            differences of sum(H) (max relative error)
       attention_npy.py cmp A.npy B.npy    max |A - B| / max |B|
       attention_npy.py dtype A.npy        the descr of A.npy"""
import json
import math
import random
import struct
import sys

MAGIC = b"\x93NUMPY"


def write(path, shape, vals, descr="<f8"):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    hl = len(d) + 1
    hl += (64 - (10 + hl) % 64) % 64
    with open(path, "wb") as f:
        f.write(MAGIC + bytes([1, 0]) + struct.pack("<H", hl) + d.encode() + b" " * (hl - len(d) - 1) + b"\n")
        if descr == "<f8":
            f.write(struct.pack("<%dd" % len(vals), *vals))
        else:
            f.write(bytes(int(v) for v in vals))


def read(path):
    b = open(path, "rb").read()
    assert b[:6] == MAGIC
    hl = struct.unpack("<H", b[8:10])[0]
    h = b[10:10 + hl].decode()
    descr = h.split("'descr': '")[1].split("'")[0]
    shape = tuple(int(x) for x in h.split("(")[1].split(")")[0].split(",") if x.strip())
    n = 1
    for s in shape:
        n *= s
    fmt = {"<f8": "d", "<f4": "f"}[descr]
    vals = struct.unpack("<%d%s" % (n, fmt), b[10 + hl:])
    return descr, shape, list(vals)


def sinc(u):
    return 1.0 if u == 0 else math.sin(u) / u


def forward(c, Q, K, V, R):
    B, H, Lq, Lk, D, Dv, l = c["B"], c["H"], c["Lq"], c["Lk"], c["D"], c["Dv"], c["l"]
    out = []
    for b in range(B):
        for h in range(H):
            for i in range(Lq):
                num, den = [0.0] * Dv, 0.0
                for j in range(Lk):
                    if c["causal"] and j > i + Lk - Lq:
                        continue
                    if c["kpad"][b * Lk + j] or c["mask"][(b * Lq + i) * Lk + j]:
                        continue
                    w = 1.0
                    for d in range(D):
                        r = R[0] if len(R) == 1 else R[h] if len(R) == H else R[h * D + d]
                        w *= sinc(r * (Q[((b * H + h) * Lq + i) * D + d] - K[((b * H + h) * Lk + j) * D + d])) ** l
                    den += w
                    for e in range(Dv):
                        num[e] += w * V[((b * H + h) * Lk + j) * Dv + e]
                out += [x / (den + c["eps"]) for x in num]
    return out


def relerr(a, b):
    m = max(abs(x) for x in b)
    return max(abs(x - y) for x, y in zip(a, b)) / m


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "make":
        rnd = random.Random(7)
        c = {"B": 2, "H": 2, "Lq": 3, "Lk": 5, "D": 2, "Dv": 2, "l": 4, "causal": 1, "eps": 0.01,
             "R": [1.1, 1.4, 0.9, 1.2]}
        B, H, Lq, Lk, D, Dv = c["B"], c["H"], c["Lq"], c["Lk"], c["D"], c["Dv"]
        c["kpad"] = [0] * (B * Lk)
        c["kpad"][Lk + 4] = 1  # batch row 1 pads its last key
        c["mask"] = [0] * (B * Lq * Lk)
        c["mask"][(0 * Lq + 2) * Lk + 1] = 1
        c["mask"][(1 * Lq + 0) * Lk + 0] = 1
        for name, n, shape in (("q", B * H * Lq * D, (B, H, Lq, D)), ("k", B * H * Lk * D, (B, H, Lk, D)),
                               ("v", B * H * Lk * Dv, (B, H, Lk, Dv))):
            c[name] = [round(rnd.uniform(-1, 1), 6) for _ in range(n)]
            write("%s/%s.npy" % (a[0], name), shape, c[name])
        write(a[0] + "/kpad.npy", (B, Lk), c["kpad"], "|u1")
        write(a[0] + "/mask.npy", (B, Lq, Lk), c["mask"], "|b1")
        write(a[0] + "/allpad.npy", (B, Lk), [1] * Lk + [0] * Lk, "|u1")  # batch row 0: every key padded
        write(a[0] + "/hq.npy", (1, 1, 4, 2), [0.0] * 8)  # values near the top of the range
        write(a[0] + "/hv.npy", (1, 1, 4, 2), [1e308] * 8)
        json.dump(c, open(a[0] + "/case.json", "w"))
    elif cmd == "check":
        c = json.load(open(a[0] + "/case.json"))
        print("%.3g" % relerr(read(a[1])[2], forward(c, c["q"], c["k"], c["v"], c["R"])))
    elif cmd == "fd":
        c = json.load(open(a[0] + "/case.json"))
        worst = 0.0
        for what in ("q", "R"):
            x = c[what] if what == "q" else c["R"]
            g = read("%s.d%s.npy" % (a[1], what.upper()))[2]
            fd = []
            for k in range(len(x)):
                h = 1e-6
                xp, xm = list(x), list(x)
                xp[k] += h
                xm[k] -= h
                args = lambda y: (y, c["k"], c["v"], c["R"]) if what == "q" else (c["q"], c["k"], c["v"], y)
                fd.append((sum(forward(c, *args(xp))) - sum(forward(c, *args(xm)))) / (2 * h))
            worst = max(worst, relerr(g, fd))
        print("%.3g" % worst)
    elif cmd == "cmp":
        print("%.3g" % relerr(read(a[0])[2], read(a[1])[2]))
    elif cmd == "allfinite":  # every value of every file finite: the largest magnitude, else "nonfinite"
        vals = [x for f in a for x in read(f)[2]]
        print("%.17g" % max(abs(x) for x in vals) if all(math.isfinite(x) for x in vals) else "nonfinite")
    elif cmd == "dtype":
        print(read(a[0])[0])


if __name__ == "__main__":
    main()
