"""A short tour of gfi from Python: one call per capability.

    python3 examples/tour.py
"""
import numpy as np

import gfi

# truth models from the CLI's specification strings; seeded streams
m = gfi.Model("mw:6")
x = m.sample(5000, seed=1)          # = gfi sample --model mw:6 --n 5000 --seed 1

# density: Fourier (radius by LSCV) and Gaussian (plug-in bandwidth)
f = gfi.FourierKDE(R="lscv", phi=4).fit(x)
g = gfi.GaussianKDE(bandwidth="pi").fit(x)
at = np.array([-1.0, 0.0, 1.0])
print("Fourier R = %.4g: p(-1, 0, 1) =" % f.R_[0], f.evaluate(at), "route", f.route_["route"])
print("Gaussian h = %.4g: p(-1, 0, 1) =" % np.sqrt(g.H_[0, 0]), g.evaluate(at))
print("truth:", m.pdf(at))

# Nadaraya-Watson with a vector response, flagged rows as a mask
y = np.column_stack([np.sin(x), np.cos(x)])
nw = gfi.FourierNW(R=3.0, phi=4).fit(x, y)
fit, flagged = nw.predict(at, return_flags=True)
print("NW at (-1, 0, 1):", fit.tolist(), "flagged", flagged.tolist())

# selection with the criterion curve
s = gfi.select_radius_lscv(x, return_curve=True)
print("LSCV radius %.4g (criterion %.6g, %d local minima on the scan)" % (s.R[0], s.value, s.nlocal))

# exact MISE and the optimal radius
print("exact MISE at R = 3, N = 5000: %.6g" % gfi.mise_exact("mw:6", R=3, N=5000)["mise"])
r, res = gfi.optimal_radius("mw:6", N=5000)
print("MISE-optimal R = %.4g (MISE %.6g)" % (r, res["mise"]))

# attention, (heads, L, D)
rng = np.random.default_rng(0)
Q, K, V = rng.normal(size=(2, 16, 8)), rng.normal(size=(2, 16, 8)), rng.normal(size=(2, 16, 4))
H, ctx = gfi.fourier_attention(Q, K, V, R=1.0, causal=True, return_context=True)
dQ, dK, dV, dR = gfi.fourier_attention_backward(ctx, np.ones_like(H))
print("Fourier attention H", H.shape, "dR =", float(dR))
print("softmax attention H", gfi.softmax_attention(Q, K, V).shape)
