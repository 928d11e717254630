"""The package's public surface: every name of gfi.__all__ exists, help(gfi)
lists the estimators, and every public class, function, method and property
has a docstring; the package is typed (py.typed, annotated estimators)."""
import inspect
import os
import pydoc
import types

import gfi


def _public_members(obj):
    for cls in inspect.getmro(obj):
        if not cls.__module__.startswith("gfi"):
            continue
        for name, v in vars(cls).items():
            if not name.startswith("_") and (inspect.isfunction(v) or isinstance(v, property)):
                yield cls.__name__ + "." + name, v


def test_every_public_name_has_a_docstring():
    missing = []
    for name in gfi.__all__:
        obj = getattr(gfi, name)
        if isinstance(obj, types.ModuleType):
            objs = [(name + "." + n, o) for n, o in vars(obj).items() if not n.startswith("_")
                    and (inspect.isfunction(o) or inspect.isclass(o)) and o.__module__ == obj.__name__]
        else:
            objs = [(name, obj)]
        for n, o in objs:
            if not (inspect.isfunction(o) or inspect.isclass(o)):
                continue
            if not (o.__doc__ or "").strip():
                missing.append(n)
            if inspect.isclass(o):
                missing += [m for m, v in _public_members(o) if not (v.__doc__ or "").strip()]
    assert not missing, missing


def test_help_lists_the_estimators():
    text = pydoc.render_doc(gfi, renderer=pydoc.plaintext)
    for name in ("FourierKDE", "GaussianNW", "score_samples", "select_radius_lscv", "mise_exact"):
        assert name in text


def test_typed():
    assert os.path.exists(os.path.join(os.path.dirname(gfi.__file__), "py.typed"))
    hints = inspect.signature(gfi.FourierKDE.fit).parameters
    assert hints["sample_weight"].annotation != inspect.Parameter.empty
    assert inspect.signature(gfi.FourierKDE.score_samples).return_annotation != inspect.Signature.empty
