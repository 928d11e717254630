"""What gfi's estimators share with scikit-learn's: parameters read from the
constructor's signature (get_params / set_params, so sklearn.base.clone
works), n_jobs as an alias of threads, an informative repr, and pickling
that reduces a fitted estimator to its parameters and data (refit on load)."""
from __future__ import annotations

import inspect
from typing import Any, Dict, Optional

import numpy as np

from . import errors
from ._lib import lib

_MISSING = object()


class EstimatorBase:
    """get_params / set_params / repr / pickle for gfi's estimators.

    Subclasses store every constructor argument unchanged under its own name
    (scikit-learn's rule, which clone checks), keep what a fit needs in a
    Fitted (self._fitted), and implement _refit(state) for unpickling."""

    _fitted: Any = None
    _estimator_type: Optional[str] = None  # scikit-learn < 1.6 reads it (is_regressor)

    def __sklearn_tags__(self):
        """scikit-learn >= 1.6's estimator tags (GridSearchCV and clone ask
        for them); built from sklearn.utils only when scikit-learn asks, so
        gfi never imports it. 1-D arrays are accepted as one-axis points."""
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags
        reg = self._estimator_type == "regressor"
        return Tags(estimator_type=self._estimator_type, target_tags=TargetTags(required=reg, multi_output=reg),
                    regressor_tags=RegressorTags() if reg else None,
                    input_tags=InputTags(one_d_array=True, two_d_array=True))

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor's parameters as a dict (scikit-learn's protocol;
        gfi's estimators hold no sub-estimators, so deep changes nothing)."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params: Any) -> "EstimatorBase":
        """Set constructor parameters by name (they apply at the next fit);
        returns self. An unknown name raises InvalidArgument (a ValueError)."""
        names = self._param_names()
        for k, v in params.items():
            if k not in names:
                raise errors.InvalidArgument(errors.GFI_EINVAL, "%s has no parameter %r (it has: %s)"
                                             % (type(self).__name__, k, ", ".join(names)), k)
            setattr(self, k, v)
        return self

    def _threads(self) -> int:
        """The thread count to use: threads, or n_jobs (scikit-learn's name;
        -1 = all cores, -2 = all but one, ...); both given must agree."""
        t, j = self.threads, getattr(self, "n_jobs", None)
        if j is None:
            return t
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or j == 0:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "n_jobs must be a non-zero integer (-1: all cores), "
                                         "got %r" % (j,), "n_jobs")
        jt = int(j) if j > 0 else max(1, int(lib.gfi_threads_available()) + 1 + int(j))
        if j == -1:
            jt = 0
        if t is not None and t != jt:
            raise errors.InvalidArgument(errors.GFI_EINVAL, "threads=%r and n_jobs=%r disagree: give one"
                                         % (t, j), "n_jobs")
        return jt

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        parts = []
        for k in self._param_names():
            v = getattr(self, k, _MISSING)
            d = defaults.get(k, _MISSING)
            try:
                same = v is d or (type(v) is type(d) and bool(v == d))
            except Exception:
                same = False
            if not same:
                parts.append("%s=%r" % (k, v))
        s = "gfi.%s(%s)" % (type(self).__name__, ", ".join(parts))
        f = self._fitted
        if f is not None:
            s += " [" + self._fitted_summary(f) + "]"
        return s

    def _fitted_summary(self, f) -> str:
        return "fitted: N=%d, D=%d" % (f.N, f.D)

    # ---- pickle / deepcopy: parameters and data; the plan is rebuilt ----

    def __getstate__(self) -> Dict[str, Any]:
        f = self._fitted
        state: Dict[str, Any] = {"params": self.get_params(), "gfi_version": 1}
        if f is not None:
            f.check_data()
            state["fit"] = self._fit_state(f)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(**state["params"])
        fit: Optional[Dict[str, Any]] = state.get("fit")
        if fit is not None:
            self._refit(fit)

    def _fit_state(self, f) -> Dict[str, Any]:  # pragma: no cover - every estimator overrides it
        raise NotImplementedError

    def _refit(self, fit: Dict[str, Any]) -> None:  # pragma: no cover
        raise NotImplementedError
