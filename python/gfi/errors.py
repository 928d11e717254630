"""gfi's exceptions: one class per library status (include/gfi/status.h).

Every exception is a gfi.Error, carrying
  status   the library's status code (int; 0 never raised),
  param    the name of the Python parameter at fault, or None when unknown,
  message  the text (gfi_strerror's message with the call and the value),
and also derives from the built-in exception a Python user expects:
ValueError for bad arguments, MemoryError for allocation failures,
ArithmeticError for numerical failures, OSError for I/O.
"""

GFI_OK = 0
GFI_EINVAL = 1
GFI_ENONFINITE = 2
GFI_EEMPTY = 3
GFI_ERADIUS = 4
GFI_EORDER = 5
GFI_EDIM = 6
GFI_EINFINITE_A = 7
GFI_ENOMEM = 8
GFI_EQUAD = 9
GFI_EMODEL = 10
GFI_EIO = 11
GFI_EPARSE = 12
GFI_ENOTPD = 13
GFI_EUNSUPPORTED = 14
GFI_ERANGE = 15
GFI_EWEIGHT = 16
GFI_EBANDWIDTH = 17
GFI_EDENOM = 18
GFI_ENODEV = 19


class Error(Exception):
    """Base of every gfi error."""

    def __init__(self, status, message, param=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param

    def __str__(self):
        if self.param:
            return "%s [parameter: %s]" % (self.message, self.param)
        return self.message


class InvalidArgument(Error, ValueError):
    """GFI_EINVAL: a bad argument or option value."""


class NonFiniteError(InvalidArgument):
    """GFI_ENONFINITE: NaN or Inf in the input."""


class EmptyError(InvalidArgument):
    """GFI_EEMPTY: no data where at least one point is needed."""


class RadiusError(InvalidArgument):
    """GFI_ERADIUS: a radius <= 0 or not finite."""


class OrderError(InvalidArgument):
    """GFI_EORDER: kernel power outside 1..8."""


class DimensionError(InvalidArgument):
    """GFI_EDIM: a dimension 0, too large or mismatched."""


class KernelIntegralError(InvalidArgument):
    """GFI_EINFINITE_A: the kernel's integral A is infinite or zero."""


class ModelError(InvalidArgument):
    """GFI_EMODEL: unknown or malformed model specification."""


class ParseError(InvalidArgument):
    """GFI_EPARSE: malformed number or row."""


class NotPositiveDefiniteError(InvalidArgument):
    """GFI_ENOTPD: a matrix is not symmetric positive definite."""


class WeightError(InvalidArgument):
    """GFI_EWEIGHT: weights not finite or with a non-positive sum."""


class BandwidthError(InvalidArgument):
    """GFI_EBANDWIDTH: bandwidth not positive definite / not finite."""


class UnsupportedError(Error, ValueError):
    """GFI_EUNSUPPORTED: the operation is not available for these arguments."""


class RangeError(Error, ValueError):
    """GFI_ERANGE: the result or the work would overflow (too large a radius, span, node count)."""


class OutOfMemory(Error, MemoryError):
    """GFI_ENOMEM: an allocation failed."""


class QuadratureError(Error, ArithmeticError):
    """GFI_EQUAD: a numerical quadrature or search did not converge."""


class DenominatorError(Error, ArithmeticError):
    """GFI_EDENOM: a denominator vanished (regression, attention).

    Raised only where the caller asked for it (flagged rows are otherwise
    NaN and reported by a mask)."""


class GfiIOError(Error, OSError):
    """GFI_EIO: a file could not be opened or read."""


class NoDeviceError(Error, RuntimeError):
    """GFI_ENODEV: no usable GPU."""


_CLASSES = {
    GFI_EINVAL: InvalidArgument,
    GFI_ENONFINITE: NonFiniteError,
    GFI_EEMPTY: EmptyError,
    GFI_ERADIUS: RadiusError,
    GFI_EORDER: OrderError,
    GFI_EDIM: DimensionError,
    GFI_EINFINITE_A: KernelIntegralError,
    GFI_ENOMEM: OutOfMemory,
    GFI_EQUAD: QuadratureError,
    GFI_EMODEL: ModelError,
    GFI_EIO: GfiIOError,
    GFI_EPARSE: ParseError,
    GFI_ENOTPD: NotPositiveDefiniteError,
    GFI_EUNSUPPORTED: UnsupportedError,
    GFI_ERANGE: RangeError,
    GFI_EWEIGHT: WeightError,
    GFI_EBANDWIDTH: BandwidthError,
    GFI_EDENOM: DenominatorError,
    GFI_ENODEV: NoDeviceError,
}


def error_class(status):
    """The exception class of a status code."""
    return _CLASSES.get(status, Error)


def from_status(status, message, param=None):
    """The exception (an instance of error_class(status)) for a status, its message and the parameter at fault."""
    return error_class(status)(status, message, param)
