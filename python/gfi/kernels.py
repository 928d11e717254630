"""Kernel descriptions phi(sinc(x)) (include/gfi/kernel.h), as the CLI's --phi."""
import ctypes

import numpy as np

from . import errors
from ._lib import lib, ErrInfo, Kernel, check, ref


def make_kernel(phi):
    """A gfi_kernel from phi: an int l (phi = z^l), "pow:L", "L",
    "poly:a1,a2,..." / a sequence of coefficients (a_1..a_deg; phi = sum a_k z^k),
    or "flattop:c" (the flat-top kernel, 0 < c < 1; gfi_kernel_flattop).
    The strings are the CLI's --phi, read by libgfi (gfi_kernel_parse)."""
    k = Kernel()
    if isinstance(phi, Kernel):
        return phi
    if isinstance(phi, (int, np.integer)) and not isinstance(phi, bool):
        check(lib.gfi_kernel_pow(ref(k), int(phi)), "phi = z^%d" % phi, {errors.GFI_EORDER: "phi"})
        return k
    if isinstance(phi, str):
        s = phi.strip()
        if s.isdigit():  # "L" as pow:L
            s = "pow:" + s
        if "\0" in s:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "phi %r: a NUL character in the text" % (phi,), "phi")
        err = ErrInfo()
        st = lib.gfi_kernel_parse(ref(k), s.encode(errors="replace"), ref(err))
        if st:
            raise errors.from_status(st, "phi %r: %s" % (phi, err.msg.decode(errors="replace")), "phi")
        return k
    try:
        coefs = [float(t) for t in phi]
    except TypeError:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "phi %r: expected an int l, 'pow:L', 'poly:a1,a2,...' or 'flattop:c'"
                                     % (phi,), "phi")
    return _poly(coefs, phi)


def _poly(coefs, phi):
    k = Kernel()
    a = (ctypes.c_double * (len(coefs) + 1))(0.0, *coefs)
    check(lib.gfi_kernel_poly(ref(k), len(coefs), ctypes.addressof(a)), "phi = %r" % (phi,),
          {errors.GFI_EORDER: "phi", errors.GFI_EINVAL: "phi", errors.GFI_EINFINITE_A: "phi"})
    return k


def kernel_power(k):
    """l of a power kernel, None otherwise."""
    return int(k.l) if k.kind == 0 else None
