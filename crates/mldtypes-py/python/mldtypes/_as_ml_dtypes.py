"""mldtypes under the name ``ml_dtypes``: the module that ``import ml_dtypes`` returns after
:func:`install_as_ml_dtypes` (or at start-up with ``MLDTYPES_AS_ML_DTYPES=1``).

Libraries that import ``ml_dtypes`` by name (jax, jaxlib, onnx, tensorstore) then run on
mldtypes' types. The module exposes ml_dtypes 0.6.0's public API (its ``__all__`` plus ``real``
and ``imag``), with ``__version__`` the ml_dtypes API version it implements, ``"0.6.0"``;
``mldtypes.__version__`` stays mldtypes' own version. The submodules ``ml_dtypes._finfo`` and
``ml_dtypes._iinfo`` (which some libraries import directly) are provided as well.
"""

import os
import sys
import threading
import types

#: The ml_dtypes version whose public API the alias module implements (its ``__version__``).
ML_DTYPES_API_VERSION = "0.6.0"

#: ml_dtypes 0.6.0's public names, all provided by mldtypes under the same names: its types (the
#: library's registry of them) and ``finfo``/``iinfo``.
def _api():
    from mldtypes import _core

    return tuple(name for name, _ in _core._registry()) + ("finfo", "iinfo")


ML_DTYPES_API = _api()

_MARK = "__mldtypes_alias__"
_lock = threading.Lock()


class MlDtypesAlreadyImportedError(ImportError):
    """``install_as_ml_dtypes()`` was called after the real ml_dtypes had been imported.

    The real ml_dtypes has then registered its own ``bfloat16`` and the other types with NumPy;
    two registrations of one type name cannot be merged, so the alias is refused. Call
    ``install_as_ml_dtypes()`` (or set ``MLDTYPES_AS_ML_DTYPES=1``) before anything imports
    ml_dtypes.
    """


def _real_ml_dtypes_loaded():
    """The names of real ml_dtypes modules present in ``sys.modules``."""
    found = []
    for name, mod in list(sys.modules.items()):
        if name == "ml_dtypes" or name.startswith("ml_dtypes."):
            if mod is not None and not getattr(mod, _MARK, False):
                found.append(name)
    return sorted(found)


def _module(name, doc, attrs):
    mod = types.ModuleType(name, doc)
    for k, v in attrs.items():
        setattr(mod, k, v)
    setattr(mod, _MARK, True)
    return mod


def _build():
    import mldtypes

    api = {n: getattr(mldtypes, n) for n in ML_DTYPES_API}
    top = _module(
        "ml_dtypes",
        "ml_dtypes "
        + ML_DTYPES_API_VERSION
        + "'s public API, provided by mldtypes "
        + mldtypes.__version__
        + " (installed by mldtypes.install_as_ml_dtypes).",
        dict(api, real=mldtypes.real, imag=mldtypes.imag),
    )
    top.__version__ = ML_DTYPES_API_VERSION
    top.__all__ = ["__version__", *ML_DTYPES_API]
    top.__path__ = []  # a package, so that `import ml_dtypes._finfo` resolves below
    finfo_mod = _module("ml_dtypes._finfo", "finfo of ml_dtypes' types (mldtypes).",
                        {"finfo": mldtypes.finfo})
    iinfo_mod = _module("ml_dtypes._iinfo", "iinfo of ml_dtypes' types (mldtypes).",
                        {"iinfo": mldtypes.iinfo})
    ext = _module("ml_dtypes._ml_dtypes_ext", "ml_dtypes' types (mldtypes).",
                  {n: v for n, v in api.items() if n not in ("finfo", "iinfo")})
    top._finfo = finfo_mod
    top._iinfo = iinfo_mod
    top._ml_dtypes_ext = ext
    return [top, finfo_mod, iinfo_mod, ext]


def install_as_ml_dtypes():
    """Make ``import ml_dtypes`` return mldtypes' implementation of ml_dtypes 0.6.0's API.

    After the call, ``import ml_dtypes`` anywhere in the process (jax, onnx, tensorstore, user
    code) gets a module whose public names (``bfloat16``, the float8/float6/float4 formats,
    ``int4`` and the other sub-byte integers, ``complex32``, ``bcomplex32``, ``finfo``,
    ``iinfo``, ``real``, ``imag``) are mldtypes' own objects, and whose ``__version__`` is
    ``"0.6.0"``, the ml_dtypes API version implemented (``mldtypes.__version__`` is unchanged).
    The types keep ``__module__ == "mldtypes"``, so pickles name ``mldtypes``.

    Calling it again is harmless (returns the same module). Setting the environment variable
    ``MLDTYPES_AS_ML_DTYPES=1`` makes the same call at interpreter start-up.

    Returns:
        The ``ml_dtypes`` module now in ``sys.modules``.

    Raises:
        MlDtypesAlreadyImportedError: the real ml_dtypes (or one of its submodules) is already
            imported; its types are registered with NumPy and cannot be replaced.
    """
    with _lock:
        current = sys.modules.get("ml_dtypes")
        if current is not None and getattr(current, _MARK, False):
            return current
        loaded = _real_ml_dtypes_loaded()
        if loaded:
            where = getattr(sys.modules.get(loaded[0]), "__file__", None) or "?"
            raise MlDtypesAlreadyImportedError(
                "mldtypes.install_as_ml_dtypes(): the real ml_dtypes is already imported ("
                + ", ".join(loaded) + " from " + where + "); its types are registered with "
                "NumPy and cannot be replaced. Call install_as_ml_dtypes() before anything "
                "imports ml_dtypes, or set MLDTYPES_AS_ML_DTYPES=1 in the environment."
            )
        mods = _build()
        for m in mods:
            sys.modules[m.__name__] = m
        return mods[0]


def _install_from_environment():
    """Called by the ``mldtypes_as_ml_dtypes.pth`` start-up hook when ``MLDTYPES_AS_ML_DTYPES``
    is set to a value other than ``""`` and ``"0"``; reports a failure on stderr instead of
    stopping the interpreter."""
    try:
        install_as_ml_dtypes()
    except Exception as e:  # noqa: BLE001 - start-up must go on
        print("MLDTYPES_AS_ML_DTYPES: " + str(e), file=sys.stderr)


def _enabled(environ=os.environ):
    return environ.get("MLDTYPES_AS_ML_DTYPES", "") not in ("", "0")

