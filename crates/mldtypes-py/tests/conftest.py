"""Shared helpers of the mldtypes test suite: vector loading, type lookup, code views.

The vectors under ``tests/vectors/`` are written by ``tools/gen_py_vectors.py`` from ml_dtypes
0.6.0 / NumPy 2.4.6 (see ``tests/vectors/README.md``). The tests import only mldtypes, NumPy,
pytest and the standard library.
"""

import functools
import gzip
import json
import os

import numpy as np

import mldtypes

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "vectors")
FORMAT_VECTORS = os.path.join(HERE, "..", "..", "mldtypes", "tests", "vectors", "formats")

FLOATS = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
          "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
          "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
INTS = ["int1", "int2", "int4", "uint1", "uint2", "uint4"]
COMPLEX = ["complex32", "bcomplex32"]
OURS = FLOATS + INTS + COMPLEX
BUILTINS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "longdouble", "complex64", "complex128",
            "clongdouble"]
BITS = {"bfloat16": 16, "float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4,
        "int1": 1, "int2": 2, "int4": 4, "uint1": 1, "uint2": 2, "uint4": 4,
        "complex32": 32, "bcomplex32": 32}
for _n in FLOATS:
    BITS.setdefault(_n, 8)
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@functools.lru_cache(maxsize=None)
def load_json(name):
    """A JSON vector file (``NAME.json.gz``)."""
    with gzip.open(os.path.join(VECTORS, name + ".json.gz"), "rt") as fh:
        return json.load(fh)


@functools.lru_cache(maxsize=None)
def load_npz(name):
    """A dict of the arrays of ``NAME.npz``."""
    with np.load(os.path.join(VECTORS, name + ".npz"), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@functools.lru_cache(maxsize=None)
def load_format_npy(name):
    """An array of the Rust format vectors (``crates/mldtypes/tests/vectors/formats``)."""
    with gzip.open(os.path.join(FORMAT_VECTORS, name + ".npy.gz")) as fh:
        return np.load(fh, allow_pickle=False)


def T(name):
    """The scalar type called `name`: ours from mldtypes, builtins from NumPy."""
    if name in OURS:
        return getattr(mldtypes, name)
    return np.dtype(name).type


def storage(name):
    return UNSIGNED[np.dtype(T(name)).itemsize]


def mask(name):
    return (1 << BITS[name]) - 1


def to_codes(name, arr):
    """Codes of an array of our type (sub-byte types: low bits only)."""
    raw = np.ascontiguousarray(arr).view(storage(name))
    return raw & storage(name)(mask(name))


def from_codes(name, codes):
    return np.asarray(codes, dtype=storage(name)).view(T(name))


def scalar(name, code):
    """The scalar of our type with bit pattern `code`."""
    return from_codes(name, [code])[0]


def code_of(name, x):
    return int(to_codes(name, np.array([x], dtype=T(name)))[0])


def mismatches(label, inputs, expected, got, limit=8):
    """A failure text naming the first differing positions: input code, expected, got."""
    expected = np.asarray(expected)
    got = np.asarray(got)
    if expected.shape != got.shape:
        return f"{label}: shape {got.shape}, expected {expected.shape}"
    bad = np.nonzero(expected.ravel() != got.ravel())[0]
    if len(bad) == 0:
        return ""
    inp = np.asarray(inputs).ravel() if inputs is not None else None
    lines = [f"{label}: {len(bad)} of {expected.size} differ"]
    for j in bad[:limit]:
        where = f"input {_hex(inp[j])}" if inp is not None and j < len(inp) else f"index {j}"
        lines.append(f"  {where}: expected {_hex(expected.ravel()[j])}, "
                     f"got {_hex(got.ravel()[j])}")
    return "\n".join(lines)


def _hex(v):
    if isinstance(v, (np.integer, int)) and not isinstance(v, (bool, np.bool_)):
        return hex(int(v))
    return repr(v)


def assert_same(label, inputs, expected, got):
    text = mismatches(label, inputs, expected, got)
    assert not text, text


def describe(v):
    """The same description of a result as the generator's (type name + code or repr)."""
    t = type(v)
    name = t.__name__
    if name in OURS and t is getattr(mldtypes, name, None):
        return {"type": name, "code": code_of(name, v)}
    if isinstance(v, np.ndarray):
        d = {"type": "ndarray", "dtype": str(v.dtype), "shape": list(v.shape)}
        if str(v.dtype) in OURS:
            d["codes"] = to_codes(str(v.dtype), v).ravel().tolist()
        else:
            d["repr"] = repr(v.tolist())
        return d
    if isinstance(v, np.generic):
        return {"type": name, "repr": repr(v.item())}
    if isinstance(v, (bool, int, float, complex, str)) or v is None or v is NotImplemented:
        return {"type": name, "repr": repr(v)}
    return {"type": name}


def strip_warnings(d):
    return {k: v for k, v in d.items() if k != "warnings"} if isinstance(d, dict) else d


def outcome(fn):
    """Run fn: {"error": ExceptionClassName} or the description of its result (no warnings)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return describe(fn())
        except Exception as e:  # noqa: BLE001 - compared with the reference's exception class
            return {"error": type(e).__name__}


def is_nan_code(name, code):
    """True if `code` is a NaN of our float or complex type `name`."""
    if name in FLOATS:
        return bool(load_format_npy(f"codes_{name}_class")[0][code] == 4)
    if name in COMPLEX:
        part = "bfloat16" if name == "bcomplex32" else "float16"
        lo, hi = code & 0xFFFF, code >> 16
        if part == "float16":
            return bool(np.isnan(np.array([lo, hi], dtype=np.uint16).view(np.float16)).any())
        cls = load_format_npy("codes_bfloat16_class")[0]
        return bool(cls[lo] == 4 or cls[hi] == 4)
    return False


def _nan_blind(d):
    """The outcome with every NaN code of our types replaced by the marker "nan"."""
    if not isinstance(d, dict):
        return d
    d = dict(d)
    t = d.get("type") if d.get("type") != "ndarray" else d.get("dtype")
    if "code" in d and is_nan_code(t, d["code"]):
        d["code"] = "nan"
    if "codes" in d:
        d["codes"] = ["nan" if is_nan_code(t, c) else c for c in d["codes"]]
    if "tuple" in d:
        d["tuple"] = [_nan_blind(x) for x in d["tuple"]]
    return d


def same_outcome(expected, got, nan_equal=False):
    """Outcomes equal; NaN reprs compare equal whatever their sign; with nan_equal, any two
    NaN codes of our types compare equal too (their bits are checked separately)."""
    expected = strip_warnings(expected)
    if expected == got:
        return True
    if nan_equal and isinstance(got, dict):
        if _nan_blind(expected) == _nan_blind(got):
            return True
    if set(expected) == set(got) and expected.get("type") == got.get("type"):
        e, g = expected.get("repr"), got.get("repr")
        if e is not None and g is not None and "nan" in e and "nan" in g:
            return e.replace("-", "") == g.replace("-", "")
    return False
