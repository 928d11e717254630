"""gfi: generalized Fourier integral estimators, from Python.

Density (FourierKDE, GaussianKDE), Nadaraya-Watson (FourierNW, GaussianNW),
radius and bandwidth selection, truth models (Model), exact and Monte-Carlo
MISE, the rate checks of FourierFormer's theorems (density_rates,
regression_rates), Fourier and softmax attention over libgfi, with numpy arrays in and out
(docs/python.md). gfi.torch (import it explicitly; needs PyTorch) has the
autograd Function and nn.Module of Fourier attention.
"""
from . import errors
from .errors import (Error, InvalidArgument, NonFiniteError, EmptyError, RadiusError, OrderError, DimensionError,
                     KernelIntegralError, ModelError, ParseError, NotPositiveDefiniteError, WeightError,
                     BandwidthError, UnsupportedError, RangeError, OutOfMemory, QuadratureError, DenominatorError,
                     GfiIOError, NoDeviceError)
from ._lib import LIBRARY_PATH, gsl_abort_handler_active, strerror, lib as _clib
from .density import FourierKDE, GaussianKDE, bandwidth_matrix
from .regression import FourierNW, GaussianNW
from .selection import (Selection, select_radius_lscv, select_radius_loocv, lscv, loocv, gauss_lscv,
                        select_bandwidth, nw_bandwidth_loocv)
from .models import Model
from .mise import (mise_exact, mise_mc, optimal_radius, ise_plancherel, mise_gauss_exact, optimal_bandwidth)
from .flt import RPE, Proposal, flt_features, flt_error_trials
from .attention import (fourier_attention, fourier_attention_backward, softmax_attention,
                        softmax_attention_backward, fourier_attention_batch, fourier_attention_batch_backward)
from . import rate_checks
from .rate_checks import density_rates, regression_rates, regression_rate_rows

__version__ = "0.1.0"


__all__ = ["FourierKDE", "GaussianKDE", "bandwidth_matrix", "FourierNW", "GaussianNW", "Selection",
           "select_radius_lscv", "select_radius_loocv", "lscv", "loocv", "gauss_lscv", "select_bandwidth",
           "nw_bandwidth_loocv", "Model", "mise_exact", "mise_mc", "optimal_radius", "ise_plancherel",
           "mise_gauss_exact", "optimal_bandwidth", "RPE", "Proposal", "flt_features", "flt_error_trials",
           "fourier_attention", "fourier_attention_backward", "softmax_attention", "softmax_attention_backward",
           "fourier_attention_batch", "fourier_attention_batch_backward", "density_rates", "regression_rates",
           "regression_rate_rows", "rate_checks", "errors", "Error", "InvalidArgument", "NonFiniteError",
           "EmptyError", "RadiusError", "OrderError", "DimensionError", "KernelIntegralError", "ModelError",
           "ParseError", "NotPositiveDefiniteError", "WeightError", "BandwidthError", "UnsupportedError",
           "RangeError", "OutOfMemory", "QuadratureError", "DenominatorError", "GfiIOError", "NoDeviceError",
           "LIBRARY_PATH", "gsl_abort_handler_active", "strerror", "threads_available", "release_memory", "__version__"]


def threads_available() -> int:
    """Cores OpenMP would use (1 without OpenMP)."""
    return _clib.gfi_threads_available()


def release_memory() -> int:
    """Free the blocks gfi keeps from freed estimators' copies of the data
    (at most 4 blocks, 256 MiB, each of 4 MiB or more: a later fit of about
    the same size reuses them instead of paging in fresh memory). Returns
    the bytes freed."""
    return int(_clib.gfi_memory_release())
