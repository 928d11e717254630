"""Figure 1A's curve from Python: the generalized Fourier density estimate of
N = 100000 points of N(0, 1) with phi(z) = z^4 and R = 2, against the true
density, on 401 points of [-4, 4].

    python3 examples/figure1a.py [--out figure1a.png] [--seed 1]

Prints the grid's largest error and the estimate's route; draws the curve
with matplotlib when it is installed (else writes figure1a.txt)."""
import argparse

import numpy as np

import gfi

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out", default="figure1a.png")
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--n", type=int, default=100000)
args = ap.parse_args()

truth = gfi.Model("normal")
x = truth.sample(args.n, seed=args.seed)  # the points of `gfi sample --model normal --n N --seed S`
kde = gfi.FourierKDE(R=2.0, phi=4).fit(x)
(grid,), p = kde.evaluate_grid(n=401, lo=-4, hi=4)
p_true = truth.pdf(grid)
print("N = %d, phi = z^4, R = 2: max |p_hat - p| on [-4, 4] = %.4g at x = %.3f" %
      (args.n, np.max(np.abs(p - p_true)), grid[np.argmax(np.abs(p - p_true))]))
print("route: %(route)s (%(reason)s), nodes %(nodes)s, error bound %(bound_abs).3g" % kde.route_)

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    np.savetxt("figure1a.txt", np.column_stack([grid, p, p_true]), header="x p_hat p_true")
    print("matplotlib is not installed: wrote figure1a.txt")
else:
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(grid, p_true, "k--", lw=1.2, label="N(0, 1)")
    ax.plot(grid, p, "C0", lw=1.5, label=r"Fourier estimator, $\phi(z) = z^4$, R = 2")
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.set_ylim(0, 1.2 * max(p.max(), p_true.max()))  # room for the legend
    ax.set_title("Figure 1A: N = %d points of N(0, 1)" % args.n)
    ax.legend(frameon=False, loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("wrote", args.out)
