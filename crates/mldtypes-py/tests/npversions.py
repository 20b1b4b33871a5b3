"""The NumPy behaviours that differ between NumPy 2.0 and the newest, for the tests.

The reference vectors were recorded with ml_dtypes 0.6.0 on NumPy 2.4.6. ml_dtypes' types
go through NumPy's own type resolution and builtin loops for many operations, so on another
NumPy ml_dtypes (and mldtypes) give what that NumPy gives. Where the README's "NumPy
versions" table lists a difference, the tests expect this NumPy's behaviour, computed by
NumPy itself on the builtin counterpart (int8/uint8 for the sub-byte integers, float32 /
complex64 for scalar arithmetic).
"""

import numpy as np

NUMPY = tuple(int(p) for p in np.__version__.split(".")[:2])
VECTORS_NUMPY = (2, 4)

# NumPy 2.0: np.ceil/floor/trunc on integers return float16 (integer loops from 2.1).
INT_ROUNDING_IS_FLOAT = NUMPY < (2, 1)
# NumPy 2.0: a scalar of a user float type with a Python int computes in float32 (complex64
# for complex types) instead of keeping the type.
SCALAR_PY_INT_PROMOTES = NUMPY < (2, 1)
# NumPy < 2.4: finfo's str() pads the numbers to a fixed width and shows "min = -max", its
# repr() shows min=-max (also for float8_e8m0fnu, whose min is positive), and NumPy's own
# float16 text (complex32's finfo) has other digits.
FINFO_OLD_TEXT = NUMPY < (2, 4)

# NumPy 2.5: user dtypes can give NumPy `real` / `imag` ArrayMethods, which mldtypes registers
# for complex32 / bcomplex32 (as ml_dtypes' main branch does): `a.real` / `a.imag` /
# `np.real(a)` are views of the parts (float16 / bfloat16). Before: `a.real` is `a` itself and
# `a.imag` zeros of `a`'s dtype, as for every user dtype (`mldtypes.real` / `imag` give the
# parts on every version).
REAL_IMAG_VIEWS = NUMPY >= (2, 5)
# NumPy 2.5: `numpy.dtypes.register_dlpack_dtype`, with which mldtypes registers its whole-byte
# types (bfloat16, the float8 formats, float8_e8m0fnu, complex32): `numpy.from_dlpack` returns
# them and `ndarray.__dlpack__` exports them. Before: NumPy refuses their DLPack codes
# (`BufferError`) and `mldtypes.from_dlpack` / `to_dlpack` are the way.
NUMPY_DLPACK_REGISTRY = NUMPY >= (2, 5)

# NumPy 2.5: the comparison ufuncs and maximum/minimum/fmax/fmin report no floating-point
# errors; the invalid flag that ml_dtypes' float32 comparisons raise on a NaN operand (and that
# our loops raise as they do) goes unreported, for a user dtype's loop as for float32.
NO_FP_ERRORS = frozenset(
    ["maximum", "minimum", "fmax", "fmin", "less", "less_equal", "greater", "greater_equal",
     "equal", "not_equal"] if NUMPY >= (2, 5) else [])


def fp_warnings(ufunc, warnings):
    """The floating-point warnings this NumPy reports for `ufunc`, given those the vectors'
    NumPy reports (`warnings`)."""
    return [] if ufunc in NO_FP_ERRORS else warnings


INT_COUNTERPART = {"int1": np.int8, "int2": np.int8, "int4": np.int8,
                   "uint1": np.uint8, "uint2": np.uint8, "uint4": np.uint8}
_ROUNDING = ("ceil", "floor", "trunc")


def int_ufunc_follows_counterpart(name, ufunc):
    """Whether this NumPy's result for `ufunc` on sub-byte int `name` may differ from the
    vectors' NumPy for a listed reason (the tests then expect the int8/uint8 result): the
    output dtype of the rounding ufuncs on 2.0. (The sign of a NaN computed by NumPy's own
    float16 loops varies with its build and SIMD kernels; test_ufuncs compares those NaNs with
    NumPy's loop on the running machine.)"""
    if name not in INT_COUNTERPART:
        return False
    return INT_ROUNDING_IS_FLOAT and ufunc in _ROUNDING


def counterpart_results(name, ufunc, args):
    """`ufunc` applied by NumPy to the inputs cast to the builtin counterpart."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = getattr(np, ufunc)(*[a.astype(INT_COUNTERPART[name]) for a in args])
    return res if isinstance(res, tuple) else (res,)


def scalar_counterpart(name):
    """The type NumPy 2.0 computes `scalar op python_int` in for our type `name`."""
    return np.complex64 if name in ("complex32", "bcomplex32") else np.float32


def old_finfo_text(fn, text, fields):
    """ml_dtypes' finfo text as NumPy < 2.4's templates print it (the same fields)."""
    if fn == "repr":
        head, _, rest = text.partition("min=")
        _, _, tail = rest.partition(", max=")
        return f"{head}min=-{fields['max_str']}, max={tail}"
    text = " ".join(text.split())
    head, _, rest = text.partition(" min = ")
    return f"{head} min = -max smallest_normal{rest.partition(' smallest_normal')[2]}"
