"""Casts between mldtypes' dtypes and their ml_dtypes twins.

When ``ml_dtypes`` is loaded in the same process, NumPy knows two dtypes named
``bfloat16`` (``mldtypes.bfloat16`` and ``ml_dtypes.bfloat16``), and so on for
every format. Their bytes are identical (mldtypes is bit-exact with ml_dtypes
0.6.0), so ``_core._register_twins`` registers, for each name both packages
define, a cast in each direction that copies the bytes unchanged (``can_cast``
"equiv" where the running NumPy allows it, else "safe"), and for every cast
between two of our formats the same cast between ours and ml_dtypes' type of
the other format: mixed-package ``astype``, ``np.asarray(x, dtype=...)``,
``copyto``, ufuncs and promotions behave as within one package (see
``src/interop/twins.rs``). ``a.view(ml_dtypes.bfloat16)`` reinterprets without copying.

Registration happens when ``mldtypes`` is imported if ``ml_dtypes`` already
is, or else right after ``ml_dtypes`` finishes importing: a finder at the
front of ``sys.meta_path`` waits for that one module name (every other import
costs it a string comparison) and removes itself once it has fired.
``_core._twin_state()`` reports what was registered.
"""

import sys
import warnings

from mldtypes import _core

# Every scalar type name mldtypes registers at import (ml_dtypes 0.6.0 defines them all), from
# the library's registry.
NAMES = tuple(name for name, _ in _core._registry())


def register(module):
    """Registers the twin casts with the types of `module` (ml_dtypes).

    Returns the number of pairs registered now (0 when `module` is mldtypes
    itself under another name, or when they were registered before).
    """
    import mldtypes
    from mldtypes import _core

    pairs = []
    for name in NAMES:
        theirs = getattr(module, name, None)
        ours = getattr(mldtypes, name)
        if theirs is None or theirs is ours:
            continue
        pairs.append((ours, theirs))
    return _core._register_twins(pairs)


class _RegisteringLoader:
    """Wraps ml_dtypes' loader: runs it, then registers the twin casts."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            register(module)
        except Exception as exc:  # never break the import of ml_dtypes
            warnings.warn(f"mldtypes: casts to ml_dtypes' twins not registered: {exc}",
                          RuntimeWarning, stacklevel=2)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Finder:
    """``sys.meta_path`` entry that waits for ``import ml_dtypes``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "ml_dtypes":
            return None
        uninstall()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            sys.meta_path.insert(0, self)  # not installed yet: keep waiting
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


_finder = _Finder()


def uninstall():
    """Removes the import hook (registration already done or not wanted)."""
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass


def install():
    """Registers the twin casts now if ml_dtypes is loaded, else on its import."""
    module = sys.modules.get("ml_dtypes")
    if module is not None:
        register(module)
    elif _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
