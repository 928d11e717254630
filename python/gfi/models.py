"""Truth models (include/gfi/model.h) from the CLI's specification strings."""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import errors
from ._lib import lib, ErrInfo, Handle, addr, check, points, ref


class Model:
    """A probability distribution on R^D from a specification string, the
    CLI's --model: "normal", "normal:cov=1,0.5,0.5,1", "normal:mean=1,2;cov=..",
    "mix:0.3*normal|0.7*normal:mean=3", "mw:6" (Marron-Wand 1..15),
    "laplace[:mu,b]", "cauchy[:x0,gamma]", "t:NU", "uniform[:a,b]", "beta:A,B"
    (1-D families with dim > 1: the i.i.d. product)."""

    def __init__(self, spec: str, dim: int = 1):
        if not isinstance(spec, str):
            raise errors.ModelError(errors.GFI_EMODEL, "model spec must be a string, got %r" % (spec,), "spec")
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise errors.DimensionError(errors.GFI_EDIM, "dim must be an integer >= 1, got %r" % (dim,), "dim")
        self.spec = spec
        self._h = Handle(lib.gfi_model_free)
        err = ErrInfo()
        st = lib.gfi_model_parse(ref(self._h.ptr), spec.encode(), int(dim), ref(err))
        if st:
            msg = err.msg.decode(errors="replace")
            raise errors.from_status(st, "model %r: %s%s" % (spec, lib.gfi_strerror(st).decode(),
                                                              (" (" + msg + ")") if msg else ""), "spec")
        self.dim = int(lib.gfi_model_dim(self._h.ptr))

    @property
    def ptr(self):
        """The gfi_model pointer (for the library calls)."""
        return self._h.ptr

    def __repr__(self):
        return "gfi.Model(%r, dim=%r)" % (getattr(self, "spec", None), getattr(self, "dim", None))

    def __reduce__(self):
        # pickle and deepcopy: the specification and the dimension; the
        # C model is parsed again on load
        return (Model, (self.spec, self.dim))

    def describe(self) -> str:
        """The library's description of the model (mean, covariance, components)."""
        return lib.gfi_model_describe(self._h.ptr).decode()

    def sample(self, n: int, seed: int, stream: int = 0) -> np.ndarray:
        """n points from RNG stream (seed, stream) (gfi's Philox4x32-10): the
        same points as `gfi sample --model SPEC --dim D --n N --seed S`
        (stream 0). Returns (n,) for D = 1, else (n, D)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "n must be an integer >= 0, got %r" % (n,), "n")
        for name, v in (("seed", seed), ("stream", stream)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not (0 <= v < 2 ** 64):
                raise errors.InvalidArgument(errors.GFI_EINVAL, "%s must be an integer in [0, 2^64), got %r"
                                             % (name, v), name)
        x = np.empty((int(n), self.dim))
        r = lib.gfi_rng_stream(int(seed), int(stream))
        if not r:
            raise errors.OutOfMemory(errors.GFI_ENOMEM, "gfi_rng_stream: out of memory")
        try:
            check(lib.gfi_model_sample(self._h.ptr, r, int(n), addr(x)), "sampling %r" % self.spec)
        finally:
            lib.gsl_rng_free(r)
        return x.reshape(-1) if self.dim == 1 else x

    def pdf(self, x: Any) -> np.ndarray:
        """Density at points x ((M,) for D = 1 or (M, D)); returns (M,)."""
        q = points(x, "x", self.dim)
        p = np.empty(q.shape[0])
        check(lib.gfi_model_pdf(self._h.ptr, q.shape[0], addr(q), addr(p)), "model pdf", None, {"x": q})
        return p

    def cf(self, t: Any) -> np.ndarray:
        """Characteristic function E exp(i t.X) at frequencies t ((M,) or (M, D)); complex (M,)."""
        q = points(t, "t", self.dim)
        re = np.empty(q.shape[0])
        im = np.empty(q.shape[0])
        check(lib.gfi_model_cf(self._h.ptr, q.shape[0], addr(q), addr(re), addr(im)), "model cf", None, {"t": q})
        return re + 1j * im


def as_model(m, dim=1):
    """m as a Model (a spec string is parsed with dim)."""
    return m if isinstance(m, Model) else Model(m, dim)
