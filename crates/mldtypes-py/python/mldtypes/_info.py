"""``finfo`` and ``iinfo`` for the mldtypes formats (NumPy's for everything else).

The values come from the Rust library (``mldtypes::info``), field for field
as ml_dtypes 0.6.0 reports them; the classes subclass NumPy's so that code
checking ``isinstance(x, numpy.finfo)`` and NumPy's ``str()``/``repr()``
keep working.
"""

import threading

import numpy as np

from mldtypes import _core

# The types registered at import (the library's registry) and the IEEE P3109 family, whose
# members are registered on first use.
_NAMED_FLOATS = tuple(n for n, f in _core._registry() if f == "float")
_FLOATS = _NAMED_FLOATS + tuple(_core._p3109_names())
_INTS = tuple(n for n, f in _core._registry() if f == "int")
# complex types: the finfo of their parts (ml_dtypes' convention)
_COMPLEX_PART = {"bcomplex32": "bfloat16", "complex32": np.float16}
_ALL = frozenset(_FLOATS + _INTS + tuple(_COMPLEX_PART))


def _type(name):
    """The scalar type of the mldtypes type `name` (P3109 formats: registered on first use)."""
    t = getattr(_core, name, None)
    return t if t is not None else _core._p3109_named(name)
_lock = threading.Lock()


def _our_name(obj):
    """The mldtypes type name `obj` designates (a name, scalar type, dtype, array
    or scalar), or None when it designates something else."""
    if isinstance(obj, str):
        return obj if obj in _ALL else None
    if hasattr(obj, "dtype") and isinstance(obj.dtype, np.dtype):
        obj = obj.dtype
    try:
        dt = np.dtype(obj)
    except TypeError:
        try:
            dt = np.dtype(type(obj))
        except TypeError:
            return None
    t = dt.type
    if getattr(t, "__module__", None) == "mldtypes" and t.__name__ in _ALL:
        return t.__name__
    # ml_dtypes' type of the same name (its twin): the same format
    if t.__name__ in _ALL and _core._qualified_name(t) == "ml_dtypes." + t.__name__:
        return t.__name__
    return None


def _qualified(obj):
    """The package-qualified name of the type `obj` designates (``ml_dtypes.int4``)."""
    obj = _dtype_of_array(obj)
    try:
        obj = np.dtype(obj).type
    except TypeError:
        pass
    return _core._qualified_name(obj)


def _dtype_of_array(x):
    """``x.dtype`` for an array (or anything with a NumPy ``dtype`` attribute, as the Python
    array API standard asks of ``finfo``/``iinfo``), else ``x`` unchanged: ml_dtypes' ``finfo``
    and ``iinfo`` accept arrays of NumPy's builtin types, which ``numpy.iinfo`` refuses."""
    d = getattr(x, "dtype", None)
    return d if isinstance(d, np.dtype) and not isinstance(x, (type, np.dtype)) else x


class finfo(np.finfo):  # noqa: N801 (NumPy's name)
    """Machine limits of a floating-point type, as ``numpy.finfo`` and ml_dtypes' ``finfo``.

    ``finfo(t)`` accepts a type, a dtype, a dtype name, an array or a scalar (ml_dtypes'
    types too, when ml_dtypes is loaded: the same formats, answered with mldtypes' finfo). For the
    mldtypes float formats every field of ``numpy.finfo`` is given (``bits``, ``eps``,
    ``epsneg``, ``machep``, ``negep``, ``max``, ``min``, ``nexp``, ``nmant``, ``iexp``,
    ``maxexp``, ``minexp``, ``precision``, ``resolution``, ``tiny``, ``smallest_normal``,
    ``smallest_subnormal``), the float fields as scalars of the format itself, with
    ml_dtypes 0.6.0's values (source: the Rust library's ``mldtypes::info``). Complex
    types give the finfo of their parts (``bcomplex32``: bfloat16's; ``complex32``:
    NumPy's float16). Other types are handed to ``numpy.finfo``. Results are cached:
    ``finfo("bfloat16") is finfo(bfloat16)``.

    Raises ValueError for integer types (as ``numpy.finfo`` does).
    """

    _mldtypes_cache = {}

    def __new__(cls, dtype):
        dtype = _dtype_of_array(dtype)
        try:
            hit = cls._mldtypes_cache.get(dtype)
        except TypeError:
            hit = None
        if hit is not None:
            return hit
        name = _our_name(dtype)
        if name is None:
            return np.finfo(dtype)
        if name in _INTS:
            raise ValueError(f"data type <class '{_qualified(dtype)}'> not inexact")
        part = _COMPLEX_PART.get(name)
        if part is not None:
            obj = np.finfo(part) if not isinstance(part, str) else cls(part)
        else:
            obj = cls._build(name)
        t = _type(name)
        with _lock:
            for key in (name, t, np.dtype(t)):
                obj = cls._mldtypes_cache.setdefault(key, obj)
        return obj

    @classmethod
    def _build(cls, name):
        obj = object.__new__(cls)
        t = _type(name)
        fields = _core._finfo_fields(name)
        # Stored in the instance dict, never through setattr: NumPy 2.0-2.3 make
        # `tiny` and `smallest_normal` read-only properties of numpy.finfo (the
        # properties below read them back), 2.4+ make several fields cached properties.
        state = obj.__dict__
        state.update(fields)
        state["dtype"] = np.dtype(t)
        # ml_dtypes' text fields (NumPy's finfo templates used them before 2.3)
        for key in ("eps", "epsneg", "max", "resolution", "tiny", "smallest_normal",
                    "smallest_subnormal"):
            state[f"_str_{key}"] = str(fields[key])
        return obj

    @property
    def smallest_normal(self):
        """The smallest positive normal number, a scalar of the format itself."""
        return self.__dict__["smallest_normal"]

    @property
    def tiny(self):
        """An alias of ``smallest_normal`` (NumPy's name)."""
        return self.__dict__["tiny"]

    def __init__(self, *args, **kwargs):
        pass


def _register_with_numpy():
    """Makes ``numpy.finfo`` answer for our float and complex types with our ``finfo`` objects.

    ``numpy.finfo`` looks a type or dtype up in its class-level cache (``_finfo_cache``, a dict
    in every NumPy 2.x) before anything else, and otherwise raises "not inexact" for a user
    dtype. Entries are added for each type and its dtype (names go through ``numpy.dtype``
    first), so ``numpy.finfo(bfloat16) is mldtypes.finfo(bfloat16)``, as ml_dtypes' main branch
    (b793a6e) arranges for its types. Nothing is done if this NumPy has no such cache.

    Called by the package's ``__init__`` once the casts to ml_dtypes' twins exist: the cache is
    a dict keyed by dtype, and inserting compares dtypes of equal hash (every one-byte user
    dtype hashes alike) through NumPy's cast table, where a comparison made before a twin cast
    is registered would leave that cast marked impossible.
    """
    for name in _NAMED_FLOATS + tuple(_COMPLEX_PART):
        _register_one(name)


def _register_one(name):
    """Puts ``finfo(name)`` into ``numpy.finfo``'s cache (see ``_register_with_numpy``); the
    IEEE P3109 formats are added when they are registered."""
    cache = getattr(np.finfo, "_finfo_cache", None)
    if not isinstance(cache, dict):
        return
    info = finfo(name)
    t = _type(name)
    cache[t] = info
    cache[np.dtype(t)] = info


class iinfo(np.iinfo):  # noqa: N801 (NumPy's name)
    """Machine limits of an integer type, as ``numpy.iinfo`` and ml_dtypes' ``iinfo``.

    ``iinfo(t)`` accepts a type, a dtype, a dtype name, an array or a scalar (ml_dtypes'
    types too, as for ``finfo``). For the
    sub-byte integers ``int1``, ``int2``, ``int4``, ``uint1``, ``uint2``, ``uint4`` it
    gives ``dtype``, ``kind`` (``"i"``/``"u"``), ``bits`` (1, 2 or 4) and ``min``/``max``
    as Python ints (source: the Rust library's ``mldtypes::info``); ``str()`` and
    ``repr()`` are ``iinfo(min=-8, max=7, dtype=int4)`` as in ml_dtypes. Other types
    are handed to ``numpy.iinfo``.

    Raises ValueError for float and complex types (as ``numpy.iinfo`` does).
    """

    def __new__(cls, int_type):
        int_type = _dtype_of_array(int_type)
        name = _our_name(int_type)
        if name is None:
            return np.iinfo(int_type)
        if name not in _INTS:
            raise ValueError(f"Invalid integer data type {_qualified(int_type)!r}.")
        obj = object.__new__(cls)
        obj.kind, obj.bits, min_, max_ = _core._iinfo_fields(name)
        obj.dtype = np.dtype(getattr(_core, name))
        obj.key = name
        obj._min, obj._max = min_, max_
        return obj

    def __init__(self, *args, **kwargs):
        pass

    @property
    def min(self):
        """The smallest value of the type."""
        return self._min

    @property
    def max(self):
        """The largest value of the type."""
        return self._max

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"

    def __str__(self):
        return repr(self)
