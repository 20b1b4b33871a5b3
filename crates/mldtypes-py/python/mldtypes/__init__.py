"""mldtypes: machine-learning number formats as NumPy dtypes, implemented in Rust.

A drop-in replacement for ml_dtypes 0.6.0 (``import mldtypes as ml_dtypes``):
importing the package registers every format below with NumPy, so
``numpy.dtype("bfloat16")`` and ``array.astype(mldtypes.float8_e4m3fn)`` work.

Floating-point formats (bit layout sign/exponent/mantissa, as in the
ml_dtypes README and the OCP 8-bit and MX specifications): ``bfloat16``,
``float8_e3m4``, ``float8_e4m3``, ``float8_e4m3fn``, ``float8_e4m3fnuz``,
``float8_e4m3b11fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz``,
``float8_e8m0fnu``, ``float6_e2m3fn``, ``float6_e3m2fn``, ``float4_e2m1fn``.
Integers: ``int1``, ``int2``, ``int4``, ``uint1``, ``uint2``, ``uint4`` (one
value per byte, in the low bits). Complex: ``complex32`` (two float16),
``bcomplex32`` (two bfloat16).

Beyond ml_dtypes: ``sum``, ``mean``, ``dot`` and ``matmul`` accumulate in
float32 and round once; ``pack``/``unpack`` store sub-byte values packed in the bit
layout of safetensors' F4/F6 tags; ``save``/``load``/``savez`` write and read
``.npy``/``.npz`` files that keep the dtypes (and that plain NumPy reads as
raw bytes); ``mldtypes.safetensors`` saves and loads safetensors files of
every dtype safetensors stores (memory-mapped, zero-copy).

``__version__`` is mldtypes' own version. ``install_as_ml_dtypes()`` (or the
environment variable ``MLDTYPES_AS_ML_DTYPES=1`` at start-up) makes
``import ml_dtypes`` return ml_dtypes 0.6.0's API backed by mldtypes, for
libraries such as jax that import ml_dtypes by name.
"""

from mldtypes import _core
from mldtypes._core import dot, matmul, mean, pack, sum, unpack

# The scalar types registered at import, named by the library's registry.
for _name, _ in _core._registry():
    globals()[_name] = getattr(_core, _name)
_TYPES = tuple(_name for _name, _ in _core._registry())
del _name

__version__ = _core.__version__

#: The 30 IEEE P3109 formats of width 8 (gfloat's names, from the library's registry): module
#: attributes registered with NumPy on first access; every member of the family through
#: :func:`p3109`.
P3109_K8 = _core._p3109_names(8)


__all__ = [
    "__version__",
    "dot",
    "matmul",
    "mean",
    "pack",
    "sum",
    "unpack",
    # the scalar types (the library's registry)
    *_TYPES,
    "finfo",
    "from_dlpack",
    "iinfo",
    "imag",
    "install_as_ml_dtypes",
    "MlDtypesAlreadyImportedError",
    "real",
    "to_dlpack",
    # type promotion (JAX's lattice) and the NumPy switch
    "Config",
    "TypePromotionError",
    "config",
    "enable_x64",
    "get_numpy_promotion",
    "numpy_dtype_promotion",
    "numpy_promotion",
    "promote_types",
    "result_type",
    "set_numpy_promotion",
    "weak",
    # IEEE P3109 formats (registered on first use)
    "p3109",
    *P3109_K8,
    # safetensors checkpoints
    "CheckpointError",
    "convert_checkpoint",
    "inspect_checkpoint",
    # .npy / .npz files keeping the dtypes; safetensors files
    "NpzFile",
    "load",
    "save",
    "savez",
    "savez_compressed",
    "safetensors",
]

from mldtypes._info import finfo, iinfo  # noqa: E402
from mldtypes._npy import NpzFile, load, save, savez, savez_compressed  # noqa: E402
from mldtypes import safetensors  # noqa: E402
from mldtypes._as_ml_dtypes import MlDtypesAlreadyImportedError, install_as_ml_dtypes  # noqa: E402

# Everything else the extension module defines (type promotion: promote_types,
# result_type, TypePromotionError, config, ...) is part of the package too.
for _name in dir(_core):
    if not _name.startswith("_") and _name not in globals():
        globals()[_name] = getattr(_core, _name)
del _name


def real(x):
    """The real part of `x`.

    For arrays of ``bcomplex32`` / ``complex32`` (which NumPy does not know as complex
    dtypes) a view of the real parts, as ``bfloat16`` / ``numpy.float16``; for anything
    else ``x.real``. As ml_dtypes 0.6.0's ``real``.
    """
    return _part(x, 0)


def imag(x):
    """The imaginary part of `x`.

    For arrays of ``bcomplex32`` / ``complex32`` a view of the imaginary parts, as
    ``bfloat16`` / ``numpy.float16``; for anything else ``x.imag``. As ml_dtypes
    0.6.0's ``imag``.
    """
    return _part(x, 1)


def _part(x, i):
    import numpy as np

    if isinstance(x, np.ndarray):
        if x.dtype.type is bcomplex32:
            return x[..., None].view(bfloat16)[..., i]
        if x.dtype.type is complex32:
            return x[..., None].view(np.float16)[..., i]
    return x.imag if i else x.real



# The JAX promotion switch rewrites NumPy's process-wide DType slots and ufunc dispatch caches,
# which other threads read without a lock; on a free-threaded CPython it is refused (everything
# else in the package is free-threading safe).
def _refuse_jax_promotion_if_free_threaded(mode):
    import sys  # already loaded: the first call imports no module

    # sys.abiflags has "t" on free-threaded builds
    if isinstance(mode, str) and mode == "jax" and "t" in getattr(sys, "abiflags", ""):
        raise RuntimeError(
            "mldtypes: JAX promotion inside NumPy (set_numpy_promotion / numpy_promotion "
            "'jax') is not available on a free-threaded CPython: the switch rewrites NumPy's "
            "shared dispatch state, which other threads read without a lock; "
            "mldtypes.result_type and mldtypes.promote_types give JAX's promotion on every build")


def set_numpy_promotion(mode):
    """Switch NumPy's own promotion for our formats: "jax" or "numpy" (the default).

    See ``mldtypes._core.set_numpy_promotion``. Raises ValueError for another mode;
    RuntimeError for "jax" on a free-threaded CPython, or if this NumPy's internals do not
    have the layout the switch needs (nothing is changed).
    """
    _refuse_jax_promotion_if_free_threaded(mode)
    return _core.set_numpy_promotion(mode)


def numpy_promotion(mode="jax"):
    """A context manager: NumPy's promotion set to `mode` inside the block, restored after.

    See ``mldtypes._core.numpy_promotion``. Raises ValueError for another mode;
    RuntimeError for "jax" on a free-threaded CPython.
    """
    _refuse_jax_promotion_if_free_threaded(mode)
    return _core.numpy_promotion(mode)




def __getattr__(name):
    """The IEEE P3109 formats by name (``mldtypes.p3109_k8p3se``; the interim report's
    ``binary8p3se`` too), registered with NumPy on first access.

    Raises AttributeError for any other name.
    """
    t = _core._p3109_named(name) if name.startswith(("p3109_", "binary")) else None
    if t is None:
        raise AttributeError(f"module 'mldtypes' has no attribute {name!r}")
    globals()[name] = t
    _info._register_one(t.__name__)
    return t


def p3109(k, p, *, signed=True, domain="extended"):
    """The IEEE P3109 format of width `k` bits and precision `p` as a scalar type.

    See ``mldtypes._core.p3109``: signed or unsigned, with the extended domain (±inf) or the
    finite one, registered with NumPy on first use (``numpy.dtype(t)``, ``a.astype(t)``,
    ``numpy.finfo(t)``); gfloat's name ``p3109_k8p3se``. Formats of at most 8 bits store one
    code per byte, wider ones two bytes.

    Raises ValueError outside the family (``2 <= k <= 16``, ``1 <= p <= k - 1`` signed,
    ``1 <= p <= k`` unsigned) or for a domain other than "extended" or "finite".
    """
    t = _core.p3109(k, p, signed=signed, domain=domain)
    _info._register_one(t.__name__)
    return t


def __dir__():
    return sorted(set(globals()) | set(P3109_K8))


from mldtypes import _info, _twins  # noqa: E402

# Casts to and from ml_dtypes' dtypes of the same names, now or when it loads.
_twins.install()

# NumPy's own tables: numpy.finfo's cache, and on NumPy >= 2.5 the DLPack registry. Both are
# dicts keyed by dtype, whose inserts and lookups compare dtypes of equal hash through NumPy's
# cast table: registered after the twin casts, so that no comparison finds one missing.
_info._register_with_numpy()
_core._register_numpy_dlpack()
