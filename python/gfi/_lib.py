"""The ctypes binding of libgfi: loading, the C structs, argument checks.

libgfi is loaded once, from the package folder (where pip installs it) or
from the file that the environment variable GFI_LIBRARY names (a build tree).
Every call goes through ctypes.CDLL, which releases the GIL for the duration
of the foreign call: two Python threads calling gfi run in parallel.
"""
import ctypes
import os
import threading

import numpy as np

from . import errors

c_double_p = ctypes.POINTER(ctypes.c_double)
c_size_t_p = ctypes.POINTER(ctypes.c_size_t)
vp = ctypes.c_void_p
sz = ctypes.c_size_t
ci = ctypes.c_int
cd = ctypes.c_double


def _find_library():
    env = os.environ.get("GFI_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libgfi.so", "libgfi.dylib"):
        p = os.path.join(here, name)
        if os.path.exists(p):
            return p
    raise ImportError("gfi: libgfi.so is not in %s and GFI_LIBRARY is not set; install the package "
                      "with pip (docs/python.md) or point GFI_LIBRARY at a built libgfi.so" % here)


def _omp_passive():
    """OpenMP's passive wait unless the program chose a policy: libgomp's
    default spins its idle threads for a while after each parallel region,
    which a Python program making many short calls (or sharing its cores)
    pays for in every call. libgomp reads the variable once, when it is
    loaded, so this runs before libgfi (and with it libgomp) is loaded; a
    libgomp that another module loaded before gfi keeps its settings."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "passive"


_omp_passive()
LIBRARY_PATH = _find_library()
lib = ctypes.CDLL(LIBRARY_PATH)

# ---- structs (include/gfi/*.h; fields are only ever appended) ----


class KernelExact(ctypes.Structure):
    """gfi_kernel as include/gfi/kernel.h lays it out (embedded in gfi_attn_spec)."""
    _c_name_ = "gfi_kernel"
    _fields_ = [("kind", ci), ("l", ci), ("fn", vp), ("ctx", vp), ("A", cd), ("A_finite", ci),
                ("coef", cd * 9)]  # GFI_PHI_MAXPOW + 1


class Kernel(KernelExact):
    """A stand-alone gfi_kernel, with room for fields the library may append."""
    _fields_ = [("_spare", ctypes.c_char * 128)]


class OptsExact(ctypes.Structure):
    """gfi_opts as include/gfi/opts.h lays it out (embedded as `base` in module options)."""
    _c_name_ = "gfi_opts"
    _fields_ = [("nthreads", ci), ("seed", ctypes.c_uint64), ("query_tile", sz), ("data_block", sz),
                ("method", ci), ("tol", cd), ("borrow", ci)]


class Opts(OptsExact):
    """Stand-alone gfi_opts, with room for fields the library may append."""
    _fields_ = [("_spare", ctypes.c_char * 128)]


class FastInfo(ctypes.Structure):
    _c_name_ = "gfi_fast_info"
    _fields_ = [("route", ci), ("reason", ci), ("dim", sz), ("nodes", sz * 3), ("nodes_total", sz),
                ("grid_fwd", sz * 3), ("grid_bwd", sz * 3), ("span", cd * 3), ("tol", cd),
                ("nufft_tol", cd), ("bound_abs", cd), ("bound", cd), ("cost_direct", cd),
                ("cost_fast", cd), ("rows_direct", sz), ("reused", ci), ("scale", cd),
                ("bins", sz * 3), ("bin_order", ci), ("_spare", ctypes.c_char * 128)]


class SelectOpts(ctypes.Structure):
    _c_name_ = "gfi_select_opts"
    _fields_ = [("base", OptsExact), ("R_lo", cd), ("R_hi", cd), ("nscan", sz), ("per_axis", ci),
                ("denom_tol", cd), ("_spare", ctypes.c_char * 128)]


class SelectResult(ctypes.Structure):
    _c_name_ = "gfi_select_result"
    _fields_ = [("D", sz), ("R", cd * 3), ("value", cd), ("bound", cd), ("R_lo", cd), ("R_hi", cd),
                ("nscan", sz), ("nlocal", sz), ("at_edge", ci), ("evals", sz), ("nflagged", sz),
                ("route", ci), ("_spare", ctypes.c_char * 128)]


class MiseOpts(ctypes.Structure):
    _c_name_ = "gfi_mise_opts"
    _fields_ = [("base", OptsExact), ("ise", ci), ("parts", ci), ("resolution", cd),
                ("grid_halfwidth", cd), ("grid_cells", sz), ("max_points", cd), ("_spare", ctypes.c_char * 128)]


class MiseResult(ctypes.Structure):
    _c_name_ = "gfi_mise_result"
    _fields_ = [("mise", cd), ("se", cd), ("lo95", cd), ("hi95", cd), ("bias2", cd), ("var", cd),
                ("nreps", sz), ("bias2_in", cd), ("bias2_out", cd), ("method", ci),
                ("nodes", sz * 3), ("ise_err_bound", cd), ("_spare", ctypes.c_char * 128)]


class AttnSpec(ctypes.Structure):
    _c_name_ = "gfi_attn_spec"
    _fields_ = [("kind", ci), ("kernel", KernelExact), ("per_axis_R", ci), ("causal", ci),
                ("denom_tol", cd), ("_spare", ctypes.c_char * 128)]


class AttnInfo(ctypes.Structure):
    """gfi_attn_info: all five fields (the library writes every one)."""
    _c_name_ = "gfi_attn_info"
    _fields_ = [("nflagged", sz), ("first_flagged", sz), ("min_ratio", cd), ("nempty", sz), ("first_empty", sz)]


class AttnBatchSpec(ctypes.Structure):
    """gfi_attn_batch_spec (include/gfi/attention.h), with room for appended fields."""
    _c_name_ = "gfi_attn_batch_spec"
    _fields_ = [("kernel", KernelExact), ("rmode", ci), ("causal", ci), ("eps", cd), ("denom_tol", cd),
                ("empty_zero", ci), ("dtype", ci), ("mask_batch", sz), ("layout", ci),
                ("dropout", cd), ("seed", ctypes.c_uint64), ("strides", sz * 9),
                ("_spare", ctypes.c_char * 128)]


class ErrInfo(ctypes.Structure):
    _c_name_ = "gfi_errinfo"
    _fields_ = [("line", sz), ("column", sz), ("msg", ctypes.c_char * 256)]


# ---- signatures ----
_P = vp  # every pointer goes as an address (int) or None: no per-call conversion


def _sig(name, args, res=ci):
    f = getattr(lib, name)
    f.argtypes = args
    f.restype = res
    return f


_sig("gfi_strerror", [ci], ctypes.c_char_p)
_sig("gfi_error_param", [ci], ctypes.c_char_p)
_sig("gfi_default_opts", [_P], None)
_sig("gfi_opts_check", [_P])
_sig("gfi_threads_available", [])
_sig("gfi_have_openmp", [])
_sig("gfi_memory_release", [], ctypes.c_size_t)
_sig("gfi_kernel_pow", [_P, ci])
_sig("gfi_kernel_poly", [_P, ci, _P])
_sig("gfi_kernel_flattop", [_P, cd])
_sig("gfi_kernel_parse", [_P, ctypes.c_char_p, _P])
_sig("gfi_kappa_sq_integral", [_P], cd)
_sig("gfi_pow_A", [ci], cd)
_sig("gfi_kernel_eval", [_P, cd], cd)
_sig("gfi_density_plan_fourier", [_P, _P, sz, sz, _P, _P, _P, _P])
_sig("gfi_density_plan_gauss", [_P, sz, sz, _P, _P, _P, _P])
_sig("gfi_bandwidth_rule", [ctypes.c_char_p, sz, sz, _P, _P, _P])
_sig("gfi_density_eval", [_P, sz, _P, _P])
_sig("gfi_density_eval_info", [_P, sz, _P, _P, _P])
_sig("gfi_density_eval_grid", [_P, _P, _P, _P, _P, _P])
_sig("gfi_density_fast_info", [_P, _P])
_sig("gfi_density_destroy", [_P], None)
_sig("gfi_density_data_box", [_P, _P, _P])
_sig("gfi_density_data_digest", [_P, _P])
_sig("gfi_nw_data_box", [_P, _P, _P])
_sig("gfi_nw_data_digest", [_P, _P])
_sig("gfi_digest", [_P, sz, _P])
_sig("gfi_nw_plan_fourier", [_P, _P, sz, sz, sz, _P, _P, _P, _P])
_sig("gfi_nw_plan_gauss", [_P, sz, sz, sz, _P, _P, _P, _P])
_sig("gfi_nw_eval_ex", [_P, sz, _P, _P, _P, _P, _P, _P])
_sig("gfi_nw_eval_grid", [_P, _P, _P, _P, _P, _P, _P])
_sig("gfi_nw_eval_grid_ex", [_P, _P, _P, _P, _P, _P, _P, _P])
_sig("gfi_nw_set_denom_tol", [_P, cd])
_sig("gfi_nw_destroy", [_P], None)
_sig("gfi_select_default_opts", [_P], None)
_sig("gfi_lscv", [_P, sz, sz, _P, _P, _P, _P, _P, _P])
_sig("gfi_loocv", [_P, sz, sz, sz, _P, _P, _P, _P, cd, _P, _P, _P, _P])
_sig("gfi_select_lscv", [_P, sz, sz, _P, _P, _P, _P])
_sig("gfi_select_loocv", [_P, sz, sz, sz, _P, _P, _P, _P, _P])
_sig("gfi_gauss_lscv", [sz, sz, _P, _P, _P, _P])
_sig("gfi_bw_lscv", [sz, sz, _P, _P, _P])
_sig("gfi_bw_dpi", [sz, _P, _P, _P])
_sig("gfi_bw_hpi", [sz, sz, _P, _P, _P, _P])
_sig("gfi_bw_hpi_diag", [sz, sz, _P, _P, _P, _P])
_sig("gfi_bw_normal_ref", [sz, sz, _P, _P])
_sig("gfi_gauss_nw_loocv", [sz, sz, sz, _P, _P, _P, _P, _P, _P])
_sig("gfi_bw_nw_loocv", [sz, sz, sz, _P, _P, _P, _P, _P])
_sig("gfi_model_parse", [_P, ctypes.c_char_p, sz, _P])
_sig("gfi_model_free", [_P], None)
_sig("gfi_model_dim", [_P], sz)
_sig("gfi_model_describe", [_P], ctypes.c_char_p)
_sig("gfi_model_sample", [_P, _P, sz, _P])
_sig("gfi_model_pdf", [_P, sz, _P, _P])
_sig("gfi_model_cf", [_P, sz, _P, _P, _P])
_sig("gfi_rng_stream", [ctypes.c_uint64, ctypes.c_uint64], vp)
_sig("gsl_rng_free", [_P], None)
_sig("gfi_mise_default_opts", [_P], None)
_sig("gfi_mise_exact_supported", [_P])
_sig("gfi_mise_gauss_exact", [_P, cd, _P, _P])
_sig("gfi_mise_gauss_hopt", [_P, cd, _P, _P])
_sig("gfi_mise_gauss_mc", [_P, sz, _P, sz, _P, _P, _P])
_sig("gfi_mise_exact", [_P, _P, cd, _P, _P, _P])
_sig("gfi_ropt", [_P, _P, cd, _P, _P, _P, _P])
_sig("gfi_mise_mc", [_P, _P, sz, _P, sz, _P, _P, _P])
_sig("gfi_ise_plancherel", [_P, _P, sz, _P, _P, _P, _P])
_sig("gfi_attn_default_spec", [_P], None)
_sig("gfi_attn_plan_create", [_P, _P, sz, sz, sz, _P])
_sig("gfi_attn_nparam", [_P], sz)
_sig("gfi_attn_saved_size", [_P], sz)
_sig("gfi_attn_forward", [_P, _P, _P, _P, _P, _P, _P, _P])
_sig("gfi_attn_backward", [_P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P])
_sig("gfi_attn_destroy", [_P], None)
_sig("gfi_attn_batch_default_spec", [_P], None)
_sig("gfi_attn_batch_nparam", [_P, sz, sz], sz)
_sig("gfi_attn_batch_saved_size", [sz, sz, sz], sz)
_sig("gfi_attn_batch_forward", [_P, sz, sz, sz, sz, sz, sz, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P])
_sig("gfi_attn_batch_backward", [_P, sz, sz, sz, sz, sz, sz, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P,
                                 _P, _P])
_sig("gfi_attn_softmax_forward", [sz, sz, sz, _P, _P, _P, cd, ci, _P, _P])
_sig("gfi_attn_softmax_backward", [sz, sz, sz, _P, _P, _P, cd, ci, _P, _P, _P, _P, _P])


# Every function libgfi exports that the package deliberately does not bind,
# by header, with the reason (test_contract checks that every GFI_EXPORT of
# include/gfi is bound above or listed here, and nothing twice).
UNBOUND = frozenset([
    # validate.h: the checks the entry points make themselves
    "gfi_check_dim", "gfi_check_finite", "gfi_check_order", "gfi_check_radii", "gfi_check_weights",
    # dat.h, npy.h, table.h, progress.h: the CLI's files and progress lines (numpy reads and writes .npy)
    "gfi_dat_header", "gfi_dat_meta", "gfi_git_revision", "gfi_npy_read", "gfi_npy_read_nd",
    "gfi_npy_read_stream", "gfi_npy_sniff", "gfi_npy_write", "gfi_npy_write_nd", "gfi_npy_write_stream",
    "gfi_table_put", "gfi_table_read", "gfi_table_read_stream", "gfi_table_write_rows",
    "gfi_now", "gfi_progress_add", "gfi_progress_end", "gfi_progress_start",
    # status.h, opts.h: a C caller's helpers (Python's ErrInfo starts zeroed; threads resolve in the library)
    "gfi_errinfo_clear", "gfi_threads_resolve",
    # density.h, regression.h: accessors and older entry points of what the Fitted object holds
    # (gfi_nw_eval_ex, gfi_density_eval_info serve the same calls with their flags and route)
    "gfi_density_dim", "gfi_density_size", "gfi_ecf", "gfi_nw_dim", "gfi_nw_eval", "gfi_nw_eval_flags",
    "gfi_nw_fast_info", "gfi_nw_nresp", "gfi_nw_set_scaling", "gfi_nw_size",
    # attention.h, flt.h, rpe.h: FAVOR+ and the FLT study's pieces, reached through the experiments
    # library (rate_checks) or the CLI, not the package's API
    "gfi_favor_attention", "gfi_favor_draw", "gfi_flt_attention", "gfi_flt_moments", "gfi_flt_positions_coords",
    "gfi_flt_positions_diff", "gfi_flt_positions_ell", "gfi_flt_positions_ndiff", "gfi_flt_rstar",
    "gfi_flt_thm42_r", "gfi_rpe_attention_exact", "gfi_rpe_invert_fft",
    "gfi_proposal_dim", "gfi_proposal_gauss", "gfi_proposal_get_kind", "gfi_proposal_log_pdf",
    "gfi_proposal_optimal", "gfi_proposal_sample", "gfi_proposal_t", "gfi_rpe_boxes", "gfi_rpe_dim", "gfi_rpe_f",
    "gfi_rpe_f_is_real", "gfi_rpe_g", "gfi_rpe_g_nonneg", "gfi_rpe_gauss", "gfi_rpe_gbf", "gfi_rpe_get_kind",
    "gfi_rpe_kernel", "gfi_rpe_local", "gfi_rpe_log_abs_g", "gfi_rpe_mixture",
    # stats.h: summaries numpy gives
    "gfi_fit_line", "gfi_replicate", "gfi_summarize",
    # mise.h, regression_mse.h, regfun.h: the measurements the CLI and the rate checks run
    "gfi_ise_gauss", "gfi_ise_grid", "gfi_mse_box", "gfi_mse_points", "gfi_nw_design_points", "gfi_nw_mse",
    "gfi_noise_describe", "gfi_noise_parse", "gfi_noise_sd", "gfi_regfun_describe", "gfi_regfun_dim",
    "gfi_regfun_eval", "gfi_regfun_free", "gfi_regfun_parse", "gfi_regress_sample",
    # kernel.h: kernels come from gfi_kernel_parse / _pow / _poly; a custom phi would be a C callback
    "gfi_kappa", "gfi_kernel_check_band", "gfi_kernel_custom", "gfi_kernel_kappa", "gfi_phi_integral",
    "gfi_sinc", "gfi_sinc_deriv",
    # model.h: models come from gfi_model_parse (the CLI's spec strings), which builds all of these
    "gfi_marron_wand_name", "gfi_model_beta", "gfi_model_cauchy", "gfi_model_get_kind", "gfi_model_has_cf",
    "gfi_model_is_c2", "gfi_model_laplace", "gfi_model_marron_wand", "gfi_model_mixture",
    "gfi_model_mixture_parts", "gfi_model_normal", "gfi_model_product", "gfi_model_product_factors",
    "gfi_model_smoothness", "gfi_model_student_t", "gfi_model_uniform",
    # select.h: a C callback minimiser (Python has scipy.optimize)
    "gfi_minimize_radius",
    # rng.h: streams come from gfi_rng_stream
    "gfi_philox4x32_10", "gfi_rng_reset",
])


def strerror(status: int) -> str:
    """The library's message for a status code (gfi_strerror)."""
    return lib.gfi_strerror(status).decode()


# ---- GSL's error handler ----
# GSL's default handler aborts the process. libgfi brackets the GSL calls whose
# error reports are normal (quadrature, root finding) with a scope of its own
# and checks arguments everywhere else; the Python package in addition replaces
# GSL's default (abort) handler by GSL's "off" handler when it is loaded, so
# that nothing a Python program does through gfi can abort the interpreter. A
# handler the program installed itself (not the default) is kept.
_gsl_set = _sig("gsl_set_error_handler", [vp], vp)
_gsl_off = _sig("gsl_set_error_handler_off", [], vp)


def _gsl_handler_init():
    prev = _gsl_off()
    if prev:  # a handler of the program's: put it back
        _gsl_set(prev)
    return prev


_gsl_handler_init()


def gsl_abort_handler_active():
    """True when GSL's default handler (abort) is the process's handler now."""
    with _gsl_lock:
        cur = _gsl_set(None)
        _gsl_set(cur)
    return not cur


_gsl_lock = threading.Lock()

# ---- helpers ----

METHODS = {"auto": 0, "direct": 1, "fast": 2}
ROUTES = {0: "auto", 1: "direct", 2: "fast"}
REASONS = {0: "requested", 1: "cost", 2: "nodes", 3: "kernel", 4: "dim", 5: "bound"}


_INT_MAX = 2 ** 31 - 1


def make_opts(threads=None, method="auto", tol=0.0, seed=0, struct=None, copy=True):
    """gfi_opts from the Python arguments, checked by the library
    (gfi_opts_check: the rules of threads, method and tol live there).
    copy=False sets borrow: a plan reads the caller's points in place."""
    o = struct if struct is not None else Opts()
    lib.gfi_default_opts(ctypes.addressof(o))
    if not isinstance(copy, (bool, np.bool_)):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "copy must be True or False, got %r" % (copy,), "copy")
    o.borrow = 0 if copy else 1
    o.nthreads = threads_arg(threads, check=False)
    o.method = METHODS.get(method, -1) if isinstance(method, str) else -1  # -1: refused by the library
    try:
        o.tol = float(tol)
    except (TypeError, ValueError):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "tol must be a number in [0, 1), got %r" % (tol,), "tol")
    o.seed = int(seed)
    st = lib.gfi_opts_check(ctypes.addressof(o))
    if st:
        values = {"threads": threads, "method": method, "tol": tol}
        param = _c_param(st)
        raise errors.from_status(st, "options: %s (%s = %r; threads: an integer >= 0, 0 or None: all cores; "
                                 "method: 'auto', 'direct' or 'fast'; tol: in [0, 1), 0: the default)"
                                 % (strerror(st), param, values.get(param)), param)
    return o


def threads_arg(threads, check=True):
    """threads as gfi_opts.nthreads takes it (None: 0, all cores); with
    check, refused unless gfi_opts_check accepts it."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not (-_INT_MAX <= threads <= _INT_MAX):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "threads must be an integer >= 0 (0 or None: all "
                                     "cores), got %r" % (threads,), "threads")
    if check:
        make_opts(threads)
    return int(threads)


# The library names the parameter at fault as its headers spell it; where
# the Python argument has another name, this is it.
_PY_NAMES = {"nthreads": "threads", "R_lo": "R_range", "R_hi": "R_range", "mask_batch": "mask",
             "k": "phi", "kernel": "phi", "queries": "x", "pos": "positions", "rs": "r", "ntrials": "trials"}


def _c_param(status, names=None):
    """The Python name of the parameter the library blamed for `status` in
    this thread's last failure (gfi_error_param), or None; names {C name:
    Python name} renames for one call (before _PY_NAMES)."""
    n = lib.gfi_error_param(status)
    if not n:
        return None
    n = n.decode()
    if names and n in names:
        return names[n]
    return _PY_NAMES.get(n, n)


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def addr(a):
    """Address of a C-contiguous array's data (None for None).

    Through the buffer protocol (about 4 times cheaper than
    __array_interface__); read-only and empty arrays, which ctypes cannot
    take that way, through __array_interface__."""
    if a is None:
        return None
    try:
        return _addressof(_from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.__array_interface__["data"][0]


def ref(s):
    return ctypes.addressof(s)


def as_f64(x, name, ndim=None, copy_ok=True):
    """x as a C-contiguous float64 ndarray, without a copy when it is one.

    Lists, other real dtypes and non-contiguous arrays are converted (a copy);
    complex, object and string data are refused (TypeError). Read-only arrays
    are fine: gfi never writes into its inputs."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.flags.c_contiguous:
        a = x
    else:
        try:
            arr = np.asarray(x)
        except Exception as e:  # ragged lists etc.
            raise errors.InvalidArgument(errors.GFI_EINVAL, "%s: not an array of numbers (%s)" % (name, e), name)
        if arr.dtype.kind not in "biuf":
            raise TypeError("gfi: %s must hold real numbers, got dtype %s" % (name, arr.dtype))
        a = np.ascontiguousarray(arr, dtype=np.float64)
    if ndim is not None and a.ndim not in ndim:
        raise errors.DimensionError(errors.GFI_EDIM, "%s must have %s dimensions, got shape %s"
                                     % (name, " or ".join(str(n) for n in ndim), a.shape), name)
    return a


def points(x, name, D=None):
    """(N, D) view of points given as (N,) (D = 1) or (N, D)."""
    a = as_f64(x, name, ndim=(1, 2))
    if a.ndim == 1:
        a = a.reshape(-1, 1) if (D is None or D == 1) else a.reshape(1, -1)
    if D is not None and a.shape[1] != D:
        raise errors.DimensionError(errors.GFI_EDIM, "%s has %d columns, the estimator has D = %d"
                                     % (name, a.shape[1], D), name)
    return a


def out_array(out, shape, name="out"):
    if out is None:
        return np.empty(shape, dtype=np.float64)
    if not isinstance(out, np.ndarray) or out.dtype != np.float64 or not out.flags.c_contiguous \
            or not out.flags.writeable:
        raise errors.InvalidArgument(errors.GFI_EINVAL, "%s must be a writeable C-contiguous float64 array"
                                     % name, name)
    n = 1
    for s in shape:
        n *= s
    if out.size != n:
        raise errors.DimensionError(errors.GFI_EDIM, "%s has %d values, %d are needed" %
                                     (name, out.size, n), name)
    return out


def radii(R, D, name="R"):
    a = as_f64(np.atleast_1d(R) if not isinstance(R, np.ndarray) else R.reshape(-1), name, ndim=(1,))
    if a.size == 1 and D > 1:
        a = np.full(D, a[0])
    if a.size != D:
        raise errors.DimensionError(errors.GFI_EDIM, "%s: give one radius or %d (one per axis), got %d"
                                     % (name, D, a.size), name)
    return a


def grid_spec(n, lo, hi, data_lo, data_hi, D):
    """The tensor grid's arguments of gfi_*_eval_grid: n (uintp), lo, hi
    (float64) from one value or one per axis; lo/hi default to the data's
    box widened by a tenth of its width per side. Returns (n, lo, hi, shape)."""
    nn = np.broadcast_to(np.asarray(n), (D,))
    if not np.all(nn == np.floor(nn)) or np.any(nn < 1):
        raise errors.InvalidArgument(errors.GFI_EINVAL, "n must be integers >= 1, got %r" % (n,), "n")
    nn = np.ascontiguousarray(nn, dtype=np.uintp)
    width = data_hi - data_lo
    pad = np.where(width > 0, width / 10, 1.0)
    lo_ = radii(data_lo - pad if lo is None else lo, D, "lo")
    hi_ = radii(data_hi + pad if hi is None else hi, D, "hi")
    return nn, lo_, hi_, tuple(int(v) for v in nn)


def grid_axes(lo, hi, shape):
    """The D 1-D axes of the grid lo:hi:shape."""
    return tuple(np.linspace(lo[j], hi[j], shape[j]) if shape[j] > 1 else np.array([lo[j]])
                 for j in range(len(shape)))


def check(status, what, params=None, arrays=None, names=None):
    """Raise the gfi.Error for a non-zero status.

    The parameter at fault is the one the library names (gfi_error_param,
    read right after the failed call in the same thread; renamed by
    names {C name: Python name} for this call, else _PY_NAMES, where the
    Python argument is spelt otherwise). arrays {name: array} give the
    detail: the first non-finite value on GFI_ENONFINITE, the shape on
    GFI_EEMPTY, of the array named (or, where the library names none, of
    the first that has one). params {status: parameter name} gives this
    call's parameter for the failures the library does not attribute."""
    if status == 0:
        return
    param = _c_param(status, names)  # the library's word first
    named = param is not None
    detail = ""
    if status == errors.GFI_ENONFINITE and arrays:
        for n, a in arrays.items():
            if a is None or (named and n != param):
                continue
            bad = ~np.isfinite(a)
            if bad.any():
                idx = np.unravel_index(int(np.argmax(bad)), a.shape)
                param = n
                detail = ": %s%s = %r" % (n, [int(i) for i in idx], float(a[idx]))  # ints: numpy 2 reprs np.int64(17)
                break
    msg = strerror(status)
    if status in (errors.GFI_ENONFINITE, errors.GFI_EDENOM) and arrays and param is None \
            and not (params and status in params):
        # every input is finite: the computation itself overflowed
        given = [n for n, a in arrays.items() if a is not None]
        if status == errors.GFI_ENONFINITE:
            msg = "a value overflowed a double although every input is finite"
            detail = " (rescale %s or change the options)" % ", ".join(given)
        else:
            detail = " (every input is finite: a value overflowed; rescale %s or change the options)" % (
                ", ".join(given))
        param = given[0] if given else None
    if status == errors.GFI_EEMPTY and arrays:
        arrs = [(n, a) for n, a in arrays.items() if a is not None and getattr(a, "ndim", 0) >= 1
                and (not named or n == param)]
        # the array with an axis of length 0, else the first (too few rows)
        hit = [(n, a) for n, a in arrs if 0 in a.shape] or arrs[:1]
        if hit:
            n, a = hit[0]
            param = n
            detail = (" (%s has shape %s)" % (n, tuple(a.shape)) if 0 in a.shape
                      else " (%s has %d row%s)" % (n, a.shape[0], "" if a.shape[0] == 1 else "s"))
    if param is None and params:
        param = params.get(status)
    raise errors.from_status(status, "%s: %s%s" % (what, msg, detail), param)


def fast_info_dict(info):
    D = int(info.dim) if info.dim else 0
    k = max(min(D, 3), 0)
    return {
        "route": ROUTES.get(info.route, str(info.route)),
        "reason": REASONS.get(info.reason, str(info.reason)),
        "nodes": tuple(int(info.nodes[j]) for j in range(k)),
        "nodes_total": int(info.nodes_total),
        "bins": tuple(int(info.bins[j]) for j in range(k)),
        "bin_order": int(info.bin_order),
        "bound_abs": float(info.bound_abs),
        "bound": float(info.bound),
        "scale": float(info.scale),
        "tol": float(info.tol),
        "rows_direct": int(info.rows_direct),
        "reused": bool(info.reused),
    }


class Fitted:
    """What one fit made: the plan (a Handle), the facts the calls on it
    need (dimension, data box, response width) and the data it was made
    from (for pickling; no copy). An estimator swaps its Fitted in one
    assignment, and every call reads it once, so a call keeps its plan (and
    the dimension the plan was made for) alive for its whole duration even
    when another thread refits the estimator meanwhile. A plan made with
    copy=False reads `data` in place: this reference keeps it alive.

    box, digest: the plan's getters (gfi_density_data_box and _digest, or
    the NW ones) of what its one check of the data found, so the fit reads
    the points once, in C."""

    __slots__ = ("handle", "N", "D", "V", "vector", "lo", "hi", "data", "aux", "_fp", "scale", "amax", "fit")

    def __init__(self, handle, x, V=None, vector=False, aux=None, box=None, digest=None):
        self.handle = handle
        self.N, self.D = x.shape
        self.V = V
        self.vector = vector
        self.lo, self.hi = np.empty(self.D), np.empty(self.D)
        box(handle.ptr, addr(self.lo), addr(self.hi))  # cannot fail on a plan
        self.data = x
        self.aux = aux  # the weights of a density, the responses of a regression
        self.scale = 1.0  # a regression's responses went to the plan divided by it
        self.fit = {}  # what else the fit chose (R, kernel, H, selection), for the calls that need it
        self.amax = 0.0
        d = (ctypes.c_uint64 * 2)()
        digest(handle.ptr, ref(d))
        self._fp = (bytes(d), _digest(aux))

    def _fingerprint(self):
        """gfi_digest of each array (the data, the weights or responses),
        by the bits of the values: it moves when a value changes, and but
        in rare coincidences when values are swapped or negated. The plan's
        check of the data computed the data's at the fit (the same integer
        sums, so the same bits)."""
        return (_digest(self.data), _digest(self.aux))

    def check_data(self):
        """Raise when the arrays the plan was made from changed since (the
        estimator keeps them by reference, without a copy, so pickling them
        after the caller wrote into them would save other data)."""
        if self._fingerprint() != self._fp:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "the data this estimator was fitted on changed since "
                                         "the fit (gfi keeps a reference, not a copy): refit before pickling",
                                         "data")


def _digest(a):
    """gfi_digest of a C-contiguous float64 array, as bytes (None for None)."""
    if a is None:
        return None
    d = (ctypes.c_uint64 * 2)()
    lib.gfi_digest(addr(a), a.size, ref(d))
    return bytes(d)


class Handle:
    """An owned C pointer freed by a destructor function."""

    __slots__ = ("ptr", "_free")

    def __init__(self, free):
        self.ptr = vp()
        self._free = free

    def __del__(self):
        if self.ptr and self.ptr.value:
            self._free(self.ptr)
            self.ptr = vp()
