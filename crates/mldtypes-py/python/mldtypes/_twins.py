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
is, or else as soon as ml_dtypes' extension module (``ml_dtypes._ml_dtypes_ext``,
which defines every type) has loaded, before the rest of the package runs, and
at the latest right after ``ml_dtypes`` finishes importing: a finder at the
front of ``sys.meta_path`` waits for those two module names (every other import
costs it two string comparisons) and removes itself once the package is loaded.
Early matters: NumPy compares two dtypes through its cast table and remembers a
pair without a cast as impossible, and NumPy's tables keyed by dtype (such as
``numpy.finfo``'s cache, which ml_dtypes' main branch fills at import) compare
every one-byte user dtype with the others, since they hash alike.
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


# The modules whose loading the finder waits for: ml_dtypes' extension module (every type) and
# the package itself.
_EXTENSION = "ml_dtypes._ml_dtypes_ext"
_PACKAGE = "ml_dtypes"


class _RegisteringLoader:
    """Wraps the loader of ml_dtypes (or of its extension module): runs it, then registers the
    twin casts with the module's types; after the package, removes the finder."""

    def __init__(self, loader, package):
        self._loader = loader
        self._package = package

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        try:
            self._loader.exec_module(module)
        finally:
            if self._package:
                uninstall()
        try:
            register(module)
        except Exception as exc:  # never break the import of ml_dtypes
            warnings.warn(f"mldtypes: casts to ml_dtypes' twins not registered: {exc}",
                          RuntimeWarning, stacklevel=2)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Finder:
    """``sys.meta_path`` entry that waits for ml_dtypes and its extension module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PACKAGE and fullname != _EXTENSION:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None  # not installed: keep waiting
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _RegisteringLoader(spec.loader, fullname == _PACKAGE)
        elif fullname == _PACKAGE:
            uninstall()
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
