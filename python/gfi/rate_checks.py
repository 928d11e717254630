"""The rate checks of FourierFormer's theorems: the tables of `gfi rates`
(density: Theorems 1, 3a, 3b against the exact MISE at the optimal radius)
and `gfi regress-rates` (regression: Theorems 2 and 4 by Monte Carlo), as
numpy structured arrays or lists of dicts (docs/python.md).

The work is the C of gfi's experiments layer (gfi_exp/rate_checks.h), in
the shared library libgfi_exp.so next to libgfi.so in the package folder
(or the file GFI_EXP_LIBRARY names in a build tree), loaded on first use.
The keyword arguments are the commands' options; the rows are the same
numbers the commands print, for the same options, at any thread count.
"""
import ctypes
import math
import os
import threading

import numpy as np

from . import errors
from ._lib import LIBRARY_PATH, threads_arg

vp = ctypes.c_void_p
sz = ctypes.c_size_t
ci = ctypes.c_int
cd = ctypes.c_double
c_char_p = ctypes.c_char_p

# ---- structs (experiments/gfi_exp/*.h, mirrored exactly; test_rate_checks.py
# compares every offset with the C compiler's) ----

MAXMODELS = 16  # GFI_EXP_DRATES_MAXMODELS
MAXL = 8        # GFI_EXP_DRATES_MAXL
MAXDEFINES = 16


class RateRow(ctypes.Structure):
    """gfi_exp_rate_row."""
    _c_name_ = "gfi_exp_rate_row"
    _fields_ = [("name", ctypes.c_char * 32), ("theorem", ctypes.c_char * 16), ("th", vp),
                ("setting", ctypes.c_char * 128), ("truth", ctypes.c_char * 64), ("rule", ctypes.c_char * 64),
                ("D", sz), ("l", ci), ("cls", ci), ("order", cd), ("N_min", sz), ("N_max", sz), ("n_fit", sz),
                ("claimed", cd), ("classical", cd), ("observed", cd), ("lo95", cd), ("hi95", cd),
                ("claimed_R", cd), ("observed_R", cd), ("chi2_dof", cd), ("flagged_frac", cd),
                ("mc_points", sz), ("mc_max_z", cd), ("verdict", ci), ("condition", ctypes.c_char * 48),
                ("point_x", cd * 3), ("point_p", cd), ("point_C", cd), ("point_gamma", cd)]


class DratesParams(ctypes.Structure):
    """gfi_exp_drates_params."""
    _c_name_ = "gfi_exp_drates_params"
    _fields_ = [("full", ci), ("theorems", ci * 3), ("ntheorems", sz), ("l1", ci * MAXL), ("nl1", sz),
                ("models", c_char_p * MAXMODELS), ("nmodels", sz), ("D", sz), ("nmin", cd), ("nmax", cd),
                ("per_decade", cd), ("fit_decades", cd), ("mc_reps", ctypes.c_long), ("mc_nmax", cd),
                ("seed", ctypes.c_uint64), ("slack", cd), ("outdir", c_char_p),
                ("phi1", c_char_p * MAXL), ("nphi1", sz)]


class RratesParams(ctypes.Structure):
    """gfi_exp_rrates_params."""
    _c_name_ = "gfi_exp_rrates_params"
    _fields_ = [("size", c_char_p), ("reps", sz), ("points", sz), ("rows", c_char_p),
                ("defines", ctypes.POINTER(c_char_p)), ("ndefines", sz), ("seed", ctypes.c_uint64),
                ("outdir", c_char_p)]


class Ctx(ctypes.Structure):
    """gfi_exp_ctx."""
    _c_name_ = "gfi_exp_ctx"
    _fields_ = [("program", c_char_p), ("argc", ci), ("argv", ctypes.POINTER(c_char_p)), ("nthreads", ci),
                ("progress", vp), ("header", vp), ("header_arg", vp), ("live", vp)]


class Err(ctypes.Structure):
    """gfi_exp_err."""
    _c_name_ = "gfi_exp_err"
    _fields_ = [("status", ci), ("step", ctypes.c_char * 160), ("param", ctypes.c_char * 32),
                ("msg", ctypes.c_char * 1024)]


class TheoremHead(ctypes.Structure):
    """The first fields of gfi_exp_theorem (only read through a pointer)."""
    _c_name_ = "gfi_exp_theorem"
    _c_prefix_ = True  # only the first fields
    _fields_ = [("id", ci), ("name", c_char_p), ("regression", ci)]


STRUCTS = {"gfi_exp_rate_row": RateRow, "gfi_exp_drates_params": DratesParams,
           "gfi_exp_rrates_params": RratesParams, "gfi_exp_ctx": Ctx, "gfi_exp_err": Err,
           "gfi_exp_theorem": TheoremHead}

VERDICTS = {0: "consistent", 1: "faster-than-claimed", 2: "slower-than-claimed", 3: "baseline", 4: "not-measured"}
CLASSES = {1: "supersmooth", 2: "ordinary"}

# ---- the library ----

_explib = None
_load_lock = threading.Lock()


def library_path():
    """Where libgfi_exp.so is: GFI_EXP_LIBRARY, else next to the libgfi.so in use."""
    env = os.environ.get("GFI_EXP_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(LIBRARY_PATH)), "libgfi_exp.so")


def _lib():
    global _explib
    with _load_lock:
        if _explib is None:
            path = library_path()
            if not os.path.exists(path):
                raise ImportError("gfi: the rate checks need libgfi_exp.so, not found at %s (install the package "
                                  "with pip, or point GFI_EXP_LIBRARY at a built experiments/libgfi_exp.so)" % path)
            # libgfi.so is loaded already (gfi._lib): libgfi_exp.so's dependency
            # on it resolves to that copy, so there is one libgfi in the process.
            L = ctypes.CDLL(path)
            for name, args, res in (
                    ("gfi_exp_drates_default", [vp], None),
                    ("gfi_exp_rrates_default", [vp], None),
                    ("gfi_exp_density_rates", [vp, vp, vp, vp, vp, vp], ci),
                    ("gfi_exp_regress_rates", [vp, vp, vp, vp, vp, vp], ci),
                    ("gfi_exp_rate_rows_free", [vp], None),
                    ("gfi_exp_err_clear", [vp], None),
                    ("gfi_exp_theorem_find", [c_char_p], ctypes.POINTER(TheoremHead)),
                    ("gfi_exp_rrates_nrows", [], sz),
                    ("gfi_exp_rrates_row_name", [sz], c_char_p)):
                f = getattr(L, name)
                f.argtypes, f.restype = args, res
            _explib = L
    return _explib


_libc = ctypes.CDLL(None)
_libc.fdopen.argtypes, _libc.fdopen.restype = [ci, c_char_p], vp
_libc.fclose.argtypes, _libc.fclose.restype = [vp], ci

# ---- arguments ----

# The commands' option names (e->param) as this module's keyword arguments.
_PARAM = {"--size": "size", "--theorems": "theorems", "--l1": "l1", "--phi1": "phi1", "--model": "models",
          "--dim": "dim",
          "--nmin": "nmin", "--nmax": "nmax", "--per-decade": "per_decade", "--fit-decades": "fit_decades",
          "--mc": "mc", "--mc-nmax": "mc_nmax", "--seed": "seed", "--slack": "slack", "--out": "outdir",
          "--threads": "threads", "--reps": "reps", "--points": "points", "--rows": "rows",
          "--define": "defines"}


def _bad(param, msg, status=errors.GFI_EINVAL):
    return errors.from_status(status, "%s: %s" % (param, msg), param)


def _int(v, name, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise _bad(name, "expected an integer, got %r" % (v,))
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _bad(name, "expected an integer in %s..%s, got %d" % (lo, "" if hi is None else hi, v))
    return v


def _positive(v, name):
    """A finite number > 0 (None: the size's value, -1 for the C)."""
    if v is None:
        return -1.0
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise _bad(name, "expected a number, got %r" % (v,))
    v = float(v)
    if not (math.isfinite(v) and v > 0):
        raise _bad(name, "expected a finite number > 0, got %r" % v)
    return v


def _strings(v, name, most):
    """A string or a sequence of strings (a comma-free list for the C)."""
    if v is None:
        return []
    if isinstance(v, (str, bytes)):
        v = [v]
    try:
        out = list(v)
    except TypeError:
        raise _bad(name, "expected a string or a list of strings, got %r" % (v,))
    for s in out:
        if not isinstance(s, str) or not s:
            raise _bad(name, "expected non-empty strings, got %r" % (s,))
    if len(out) > most:
        raise _bad(name, "at most %d, got %d" % (most, len(out)))
    return out


def _csv(v, name):
    """A comma-separated string or a sequence, as a list of non-empty items."""
    if v is None:
        return None
    if isinstance(v, str):
        items = [t for t in v.split(",") if t]
    else:
        items = _strings(v, name, 1 << 30)
    if not items:
        raise _bad(name, "empty list")
    return items


def _seed(seed):
    s = _int(seed, "seed", 0)
    if s >= 1 << 64:
        raise _bad("seed", "must be below 2^64")
    return s


def _argv(program, kwargs):
    """The command line the output files' headers show (with outdir)."""
    args = [program] + ["%s=%r" % (k, v) for k, v in kwargs.items() if v is not None]
    arr = (c_char_p * len(args))(*[a.encode() for a in args])
    return arr, len(args)


class _Progress:
    """stderr as a C stream for the progress lines (progress=True), else NULL."""

    def __init__(self, on):
        self.f = None
        if on:
            fd = os.dup(2)
            self.f = _libc.fdopen(fd, b"w")
            if not self.f:
                os.close(fd)
                raise errors.from_status(errors.GFI_EIO, "progress: cannot open stderr as a stream", "progress")

    def close(self):
        if self.f:
            _libc.fclose(self.f)
            self.f = None


def _run(fn, params, program, kwargs, threads, progress):
    L = _lib()
    argv, argc = _argv(program, kwargs)
    pg = _Progress(progress)
    ctx = Ctx(program=("gfi.%s (Python)" % program).encode(), argc=argc, argv=argv, nthreads=threads_arg(threads),
              progress=pg.f)
    err = Err()
    L.gfi_exp_err_clear(ctypes.addressof(err))
    rows = ctypes.POINTER(RateRow)()
    n = sz(0)
    try:
        # ctypes releases the GIL for the call
        st = getattr(L, fn)(ctypes.addressof(params), ctypes.addressof(ctx), None, ctypes.addressof(rows),
                            ctypes.addressof(n), ctypes.addressof(err))
    finally:
        pg.close()
    if st:
        L.gfi_exp_rate_rows_free(ctypes.cast(rows, vp))
        cparam = err.param.decode(errors="replace")
        param = _PARAM.get(cparam, cparam or None)
        if param is None and st == errors.GFI_EIO and params.outdir:
            param = "outdir"  # the only files these calls write
        msg = err.msg.decode(errors="replace")
        raise errors.from_status(st, "%s: %s%s" % (program, "%s: " % param if param else "", msg), param)
    try:
        out = [rows[i] for i in range(n.value)]
        return [_copy(r) for r in out]
    finally:
        L.gfi_exp_rate_rows_free(ctypes.cast(rows, vp))


def _copy(r):
    d = {}
    for f, _ in RateRow._fields_:
        v = getattr(r, f)
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        elif f == "point_x":
            v = tuple(v)
        d[f] = v
    return d


# ---- the tables ----

_DENSITY_DTYPE = [("name", "U32"), ("theorem", "U16"), ("setting", "U128"), ("D", "i8"), ("l", "i4"),
                  ("smooth_class", "U11"), ("order", "f8"), ("N_min", "i8"), ("N_max", "i8"), ("n_fit", "i8"),
                  ("claimed", "f8"), ("classical", "f8"), ("observed", "f8"), ("lo95", "f8"), ("hi95", "f8"),
                  ("claimed_R", "f8"), ("observed_R", "f8"), ("mc_points", "i8"), ("mc_max_z", "f8"),
                  ("verdict", "U19"), ("condition", "U48")]
_REGRESSION_DTYPE = [("name", "U32"), ("theorem", "U16"), ("setting", "U128"), ("truth", "U64"), ("rule", "U64"),
                     ("D", "i8"), ("l", "i4"), ("smooth_class", "U11"), ("order", "f8"), ("N_min", "i8"),
                     ("N_max", "i8"), ("n_fit", "i8"), ("claimed", "f8"), ("classical", "f8"),
                     ("observed", "f8"), ("lo95", "f8"), ("hi95", "f8"), ("chi2_dof", "f8"),
                     ("flagged_frac", "f8"), ("verdict", "U19"), ("condition", "U48"), ("point_x", "f8", (3,)),
                     ("point_p", "f8"), ("point_C", "f8"), ("point_gamma", "f8")]


def _table(raw, dtype, as_dicts):
    rows = []
    for r in raw:
        r = dict(r)
        r["verdict"] = VERDICTS.get(r["verdict"], str(r["verdict"]))
        r["smooth_class"] = CLASSES.get(r["cls"], "")
        rows.append({f[0]: r[f[0]] for f in dtype})
    if as_dicts:
        return rows
    arr = np.zeros(len(rows), dtype=dtype)
    for i, r in enumerate(rows):
        arr[i] = tuple(r[f[0]] for f in dtype)
    return arr


def density_rates(size="quick", theorems=None, l1=None, models=None, dim=1, nmin=None, nmax=None,
                  per_decade=None, fit_decades=None, mc=None, mc_nmax=None, seed=1, slack=0.02, outdir=None,
                  threads=None, progress=False, as_dicts=False, phi1=None):
    """The density rate checks of `gfi rates` (Theorems 1, 3a, 3b).

    For each theorem and truth, R*(N) and MISE*(N) = min_R MISE (exact) over
    the sample sizes, the fitted exponents with 95% intervals beside the
    theorem's claimed one, and the verdict; a Gaussian-KDE baseline row per
    normal-mixture truth. Keywords are the command's options:
      size        "quick" or "full" (the sizes, Monte-Carlo replications, fit)
      theorems    subset of "1", "3a", "3b" (list or "1,3a"; None: all three)
      l1          kernel powers Theorem 1 is checked with, one row each
      phi1        kernel spec(s) for Theorem 1 ("poly:a1,..,ad" or "pow:L"), one row
                  each after those of l1, named "1p1", "1p2", ...
      models      truth spec(s) (None: normal, cauchy, laplace and, in 1-D, mw:6)
      dim         1..3
      nmin, nmax, per_decade, fit_decades   the grid of N (None: the size's)
      mc          Monte-Carlo replications (0: no check; None: the size's)
      mc_nmax     check at N <= this
      seed, slack as the command; outdir: also write the command's files there
      threads     0 or None: all cores; progress: progress lines on stderr
    Returns a numpy structured array, one record per row (fields name,
    theorem, setting (the truth), D, l, smooth_class, order, N_min, N_max,
    n_fit, claimed, classical, observed, lo95, hi95, claimed_R, observed_R,
    mc_points, mc_max_z, verdict, condition), or a list of dicts with
    as_dicts=True."""
    L = _lib()
    p = DratesParams()
    L.gfi_exp_drates_default(ctypes.addressof(p))
    if size not in ("quick", "full"):
        raise _bad("size", "expected 'quick' or 'full', got %r" % (size,))
    p.full = 1 if size == "full" else 0
    if theorems is not None:
        names = _csv(theorems, "theorems")
        if len(names) > 3:
            raise _bad("theorems", "at most 3 theorems")
        for i, t in enumerate(names):
            T = L.gfi_exp_theorem_find(t.encode())
            if not T or T.contents.regression:
                raise _bad("theorems", "unknown theorem %r (expected 1, 3a or 3b)" % t)
            p.theorems[i] = T.contents.id
        p.ntheorems = len(names)
    if l1 is not None:
        ls = [l1] if isinstance(l1, (int, np.integer)) else list(l1)
        if not ls:
            raise _bad("l1", "empty list")
        if len(ls) > MAXL:
            raise _bad("l1", "at most %d powers" % MAXL)
        for i, v in enumerate(ls):
            p.l1[i] = _int(v, "l1")
        p.nl1 = len(ls)
    keep = []
    ms = _strings(models, "models", MAXMODELS)
    for i, m in enumerate(ms):
        if any(c.isspace() for c in m):
            raise _bad("models", "no whitespace in a model spec here, got %r" % m, errors.GFI_EMODEL)
        b = m.encode()
        keep.append(b)
        p.models[i] = b
    p.nmodels = len(ms)
    ks = _strings(phi1, "phi1", MAXL)
    for i, k in enumerate(ks):
        b = k.encode()
        keep.append(b)
        p.phi1[i] = b
    p.nphi1 = len(ks)
    p.D = _int(dim, "dim", 1)
    p.nmin, p.nmax = _positive(nmin, "nmin"), _positive(nmax, "nmax")
    p.per_decade, p.fit_decades = _positive(per_decade, "per_decade"), _positive(fit_decades, "fit_decades")
    p.mc_reps = -1 if mc is None else _int(mc, "mc", 0, (1 << 62))
    p.mc_nmax = _positive(mc_nmax, "mc_nmax")
    p.seed = _seed(seed)
    if isinstance(slack, bool) or not isinstance(slack, (int, float, np.integer, np.floating)) or \
            not math.isfinite(float(slack)):
        raise _bad("slack", "expected a finite number, got %r" % (slack,))
    p.slack = float(slack)
    if outdir is not None:
        p.outdir = os.fsencode(outdir)
    kw = dict(size=size, theorems=theorems, l1=l1, phi1=phi1, models=models, dim=dim, nmin=nmin, nmax=nmax,
              per_decade=per_decade, fit_decades=fit_decades, mc=mc, mc_nmax=mc_nmax, seed=seed, slack=slack,
              threads=threads)
    raw = _run("gfi_exp_density_rates", p, "density_rates", kw, threads, progress)
    return _table(raw, _DENSITY_DTYPE, as_dicts)


def regression_rate_rows():
    """The built-in rows of regression_rates (names, as `gfi regress-rates --help` lists them)."""
    L = _lib()
    return [L.gfi_exp_rrates_row_name(i).decode() for i in range(L.gfi_exp_rrates_nrows())]


def regression_rates(size="medium", reps=None, points=None, rows=None, defines=None, seed=1, outdir=None,
                     threads=None, progress=False, as_dicts=False):
    """The regression rate checks of `gfi regress-rates` (Theorems 2 and 4).

    For each row, the design-weighted integrated MSE (or the MSE at fixed
    points: rows NAME@x) over replications at N = N0 2^k, a weighted fit of
    log MSE on log N with its 95% interval, and the verdict against the
    theorem's claimed exponent; the Gaussian Nadaraya-Watson row is the
    baseline. Keywords are the command's options:
      size     "small", "medium" or "large"
      reps     replications per size (>= 3; None: the size's)
      points   evaluation points drawn from the design (None: the size's)
      rows     subset of the rows (list or "a,b"; regression_rate_rows()
               lists the built-in ones); None: all built-in rows, or only
               the defined ones when there are some
      defines  row definitions, "NAME:thm=2|4|gauss[;dim=D][;l=L][;c=C]
               [;design=SPEC][;truth=SPEC][;box=B][;at=x/x/...]" (at most 16)
      seed, outdir, threads, progress as density_rates
    Returns a numpy structured array (fields name, theorem, setting (the
    design), truth, rule, D, l, smooth_class, order, N_min, N_max, n_fit,
    claimed, classical, observed, lo95, hi95, chi2_dof, flagged_frac,
    verdict, condition, point_x, point_p, point_C, point_gamma; the point_*
    fields are NaN except on pointwise rows, point_gamma on rows of 3 or
    more points), or a list of dicts with as_dicts=True."""
    L = _lib()
    p = RratesParams()
    L.gfi_exp_rrates_default(ctypes.addressof(p))
    if not isinstance(size, str):
        raise _bad("size", "expected 'small', 'medium' or 'large', got %r" % (size,))
    p.size = size.encode()
    p.reps = 0 if reps is None else _int(reps, "reps", 3)
    p.points = 0 if points is None else _int(points, "points", 1)
    rs = _csv(rows, "rows")
    if rs is not None:
        p.rows = ",".join(rs).encode()
    ds = [d.encode() for d in _strings(defines, "defines", MAXDEFINES)]
    darr = (c_char_p * max(len(ds), 1))(*ds)
    p.defines = ctypes.cast(darr, ctypes.POINTER(c_char_p))
    p.ndefines = len(ds)
    p.seed = _seed(seed)
    if outdir is not None:
        p.outdir = os.fsencode(outdir)
    kw = dict(size=size, reps=reps, points=points, rows=rows, defines=defines, seed=seed, threads=threads)
    raw = _run("gfi_exp_regress_rates", p, "regression_rates", kw, threads, progress)
    return _table(raw, _REGRESSION_DTYPE, as_dicts)
