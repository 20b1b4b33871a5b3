#!/usr/bin/env python3
# requirements: ml_dtypes==0.6.0 numpy==2.4.6
"""Generate the committed test vectors of the Python package (crates/mldtypes-py/tests/vectors/).

Reference: ml_dtypes 0.6.0 on NumPy 2.4.6 (the script refuses other versions). It records what
ml_dtypes does at the Python level: the module surface, dtype attributes, scalar texts, hashes and
arithmetic, construction, every cast to and from NumPy's builtin types, `np.can_cast`, the ufunc
loops and their results, sorting and the other array functions, and finfo/iinfo. Where mldtypes
deliberately differs (float64 rounds once; see the vectors README), the generator also records our
value, computed with the exact `Fraction` oracle of `tools/gen_vectors.py`. For the functions that
ml_dtypes does not have (`mldtypes.sum/mean/dot`, `pack/unpack`) it computes the expected values
exactly (fractions, the documented bit layout).

Output is deterministic: fixed seeds, sorted sets, `.npy.gz` written with gzip mtime 0, `.npz`
archives written with fixed zip timestamps, JSON with a fixed key order.

Usage: /path/to/python tools/gen_py_vectors.py [OUTPUT_DIR]
"""

import gzip
import importlib.util
import io
import json
import math
import os
import sys
import warnings
import zipfile
from fractions import Fraction

import numpy as np
import ml_dtypes

REQUIRED = {"ml_dtypes": "0.6.0", "numpy": "2.4.6"}
if ml_dtypes.__version__ != REQUIRED["ml_dtypes"] or np.__version__ != REQUIRED["numpy"]:
    sys.exit(
        f"need ml_dtypes=={REQUIRED['ml_dtypes']} and numpy=={REQUIRED['numpy']}, "
        f"found ml_dtypes=={ml_dtypes.__version__}, numpy=={np.__version__}"
    )

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "crates", "mldtypes-py", "tests", "vectors"
)

# The exact rounding oracle (round-to-nearest-even once, each format's overflow/NaN/zero rules)
# lives in the format-vector generator; load it as a module (its `main` does not run).
_spec = importlib.util.spec_from_file_location(
    "gen_vectors", os.path.join(ROOT, "tools", "gen_vectors.py"))
_saved_argv = sys.argv
sys.argv = sys.argv[:1]
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)
sys.argv = _saved_argv
ORACLE = oracle.BY_NAME  # name -> Fmt with encode_exact(x) for the 13 float formats

# ---------------------------------------------------------------------------------------------
# The types
# ---------------------------------------------------------------------------------------------
FLOATS = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
          "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
          "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
INTS = ["int1", "int2", "int4", "uint1", "uint2", "uint4"]
COMPLEX = ["complex32", "bcomplex32"]
OURS = FLOATS + INTS + COMPLEX
BUILTINS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "longdouble", "complex64", "complex128",
            "clongdouble"]
ALL = OURS + BUILTINS
BITS = {"bfloat16": 16, "float8_e3m4": 8, "float8_e4m3": 8, "float8_e4m3fn": 8,
        "float8_e4m3fnuz": 8, "float8_e4m3b11fnuz": 8, "float8_e5m2": 8, "float8_e5m2fnuz": 8,
        "float8_e8m0fnu": 8, "float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4,
        "int1": 1, "int2": 2, "int4": 4, "uint1": 1, "uint2": 2, "uint4": 4,
        "complex32": 32, "bcomplex32": 32}
COMPLEX_PART = {"complex32": "float16", "bcomplex32": "bfloat16"}


def T(name):
    """The scalar type (ours from ml_dtypes, builtins from NumPy)."""
    if name in OURS:
        return getattr(ml_dtypes, name)
    return np.dtype(name).type


def storage(name):
    """Unsigned integer type holding one element's bits."""
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(T(name)).itemsize]


def mask(name):
    return (1 << BITS[name]) - 1


def to_codes(name, arr):
    """Codes of an array of our type `name` (high bits of sub-byte storage dropped)."""
    raw = np.ascontiguousarray(arr).view(storage(name))
    return (raw & storage(name)(mask(name))).astype(storage(name))


def from_codes(name, codes):
    return np.asarray(codes, dtype=storage(name)).view(T(name))


def code_of(name, scalar):
    return int(to_codes(name, np.array([scalar], dtype=T(name)))[0])


# ---------------------------------------------------------------------------------------------
# Output helpers
# ---------------------------------------------------------------------------------------------
written = []
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


def npy_bytes(arr):
    buf = io.BytesIO()
    np.save(buf, np.array(arr, order="C", copy=True), allow_pickle=False)  # keeps 0-d shapes
    return buf.getvalue()


def save_npz(name, arrays):
    """A deterministic .npz (sorted members, fixed timestamps, deflate)."""
    path = os.path.join(OUT, name + ".npz")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(key + ".npy", date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, npy_bytes(arrays[key]), compresslevel=9)
    written.append(name + ".npz")


def save_json(name, obj):
    path = os.path.join(OUT, name + ".json")
    data = json.dumps(obj, indent=None, separators=(",", ":"), allow_nan=False)
    with open(path + ".gz", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            gz.write(data.encode())
    written.append(name + ".json.gz")


def fl(x):
    """A float as JSON text: repr, so NaN/inf survive and the value is exact."""
    return repr(float(x))


def exc_name(e):
    return type(e).__name__


def call(fn):
    """Run fn; return ("ok", value, warnings) or ("err", exception name, warnings)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
            return "ok", r, sorted({(x.category.__name__, str(x.message)) for x in w})
        except Exception as e:  # noqa: BLE001 - recording the reference's exception class
            return "err", exc_name(e), sorted({(x.category.__name__, str(x.message)) for x in w})


def describe(v):
    """A JSON description of a Python/NumPy result: our scalar by code, others by repr."""
    t = type(v)
    name = t.__name__
    if name in OURS and t.__module__ == "ml_dtypes":
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


def outcome(fn):
    kind, v, w = call(fn)
    d = {"error": v} if kind == "err" else describe(v)
    if w:
        d["warnings"] = [list(x) for x in w]
    return d


# ---------------------------------------------------------------------------------------------
# Code sets: every code of the small types, a sample with every special value for the big ones
# ---------------------------------------------------------------------------------------------
def float_sample_values():
    """float64 values used to build samples of the 16/32-bit types."""
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 1.5, -2.5, 3.0, 0.1, -0.3,
            7.0, 1e-3, -65504.0, 65504.0, 2.0**-14, 2.0**-24, 2.0**-133, 1e30, -3.3e38, 448.0,
            0.5, 100.25, -1e-40]
    return vals


def codes_for(name):
    """The input codes of a type for per-code vectors."""
    if BITS[name] <= 8:
        return np.arange(1 << BITS[name], dtype=np.uint8)
    if name == "bfloat16":
        base = set(range(0, 1 << 16, 61))  # every 61st code: all exponents, varied mantissas
        specials = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF, 0x7F7F, 0xFF7F,
                    0x0080, 0x8080, 0x0001, 0x8001, 0x007F, 0x3F80, 0xBF80, 0x3F81, 0x3F7F,
                    0x4000, 0x4040, 0x4049, 0x3DCD, 0x4380, 0x4381, 0x477F, 0x5F80]
        base.update(specials)
        base.update(range(0x41, 0x60))  # float32-subnormal range (2^-127, 1.5*2^-127): float8_e8m0fnu rounds it up
        return np.array(sorted(base), dtype=np.uint16)
    # complex: pairs of part values
    part = COMPLEX_PART[name]
    pv = np.array([0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 2.0**-14, 2.0**-24, 60000.0, -2.5e-3, np.inf,
                   -np.inf, np.nan], dtype=np.float64)
    ptype = np.float16 if part == "float16" else ml_dtypes.bfloat16
    with np.errstate(all="ignore"):
        pcodes = pv.astype(ptype).view(np.uint16).astype(np.uint32)
    out = sorted({int(re) | (int(im) << 16) for re in pcodes for im in pcodes})
    return np.array(out, dtype=np.uint32)


def sample_for_binary(name):
    """Codes used on both sides of binary ops: all for ≤ 6 bits, a special-rich sample else."""
    if BITS[name] <= 6:
        return np.arange(1 << BITS[name], dtype=np.uint8)
    if BITS[name] == 8:
        c = list(range(0, 256, 11)) + [0x00, 0x01, 0x07, 0x08, 0x38, 0x3F, 0x40, 0x77, 0x78, 0x7B,
                                       0x7C, 0x7D, 0x7E, 0x7F, 0x80, 0x81, 0xF8, 0xFB, 0xFC, 0xFE,
                                       0xFF]
        return np.array(sorted(set(c)), dtype=np.uint8)
    if name == "bfloat16":
        c = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F7F, 0xFF7F, 0x0080, 0x0001,
             0x8001, 0x3F80, 0xBF80, 0x3F81, 0x4000, 0x4040, 0xC0A0, 0x3DCD, 0x4380, 0x4381,
             0x477F, 0x5F80, 0x1F80, 0xC2F7, 0x3E80, 0x4120, 0xBEAB, 0x42C8, 0x00FF, 0x7F00,
             0x3C23, 0x4B00]
        return np.array(sorted(set(c)), dtype=np.uint16)
    full = codes_for(name)
    rng = np.random.default_rng(7)
    return np.sort(rng.choice(full, size=40, replace=False))


# ---------------------------------------------------------------------------------------------
# 1. Module surface and dtypes
# ---------------------------------------------------------------------------------------------
def surface():
    d = {"types": OURS, "functions": ["finfo", "iinfo", "real", "imag"],
         "version_attr": "__version__", "dtypes": {}}
    for name in OURS:
        t = T(name)
        dt = np.dtype(t)
        d["dtypes"][name] = {
            "kind": dt.kind, "char": dt.char, "itemsize": dt.itemsize, "flags": int(dt.flags),
            "alignment": dt.alignment, "repr": repr(dt), "str": str(dt), "name": dt.name,
            "dtype_str": dt.str, "byteorder": dt.byteorder, "isbuiltin": dt.isbuiltin,
            "isnative": dt.isnative, "hasobject": bool(dt.hasobject), "ndim": dt.ndim,
            "shape": list(dt.shape), "type_name": t.__name__,
            "ml_dtypes_module": t.__module__,
            "mro": [c.__name__ for c in t.__mro__],
            "issubclass": {k: issubclass(t, getattr(np, k)) for k in
                           ["generic", "number", "inexact", "floating", "complexfloating",
                            "integer", "signedinteger", "unsignedinteger"]},
            "np_dtype_by_name_ok": np.dtype(name) == dt,
        }
    save_json("surface", d)


# ---------------------------------------------------------------------------------------------
# 2. Scalars: texts, hash, item, conversions, per code
# ---------------------------------------------------------------------------------------------
FORMAT_SPECS = ["", ".3f", "e", "g", ">10", "+.2e", "x"]


def scalars():
    out = {}
    for name in OURS:
        codes = codes_for(name)
        t = T(name)
        vals = from_codes(name, codes)
        recs = {"codes": codes.tolist(), "repr": [], "str": [], "hash": [], "item": [],
                "item_type": [], "float": [], "int": [], "bool": []}
        for k in range(len(codes)):
            x = vals[k]
            assert type(x) is t
            recs["repr"].append(repr(x))
            recs["str"].append(str(x))
            it = x.item()
            recs["item_type"].append(type(it).__name__)
            recs["item"].append(repr(it))
            isnan = (np.isnan(np.complex128(it)) if isinstance(it, complex)
                     else isinstance(it, float) and math.isnan(it))
            recs["hash"].append(None if isnan else hash(x))
            if not isnan:
                assert hash(x) == hash(it), (name, codes[k])
            for key, fn in (("float", float), ("int", int), ("bool", bool)):
                kind, v, _ = call(lambda: fn(x))
                recs[key].append({"error": v} if kind == "err" else repr(v))
        # format() over every code of the ≤ 8-bit and complex types, ~36 codes of bfloat16
        sample = codes if len(codes) <= 256 else codes[::32]
        recs["format_codes"] = sample.tolist()
        recs["format"] = {}
        for spec in FORMAT_SPECS:
            row = []
            for c in sample.tolist():
                x = from_codes(name, [c])[0]
                kind, v, _ = call(lambda: format(x, spec))
                row.append({"error": v} if kind == "err" else v)
            recs["format"][spec] = row
        out[name] = recs
    save_json("scalars", out)


# ---------------------------------------------------------------------------------------------
# 3. Scalar construction
# ---------------------------------------------------------------------------------------------
PY_INTS = [0, 1, -1, 2, 3, 7, 8, -8, 9, 15, 16, -9, 100, 255, 256, -129, 448, 2**20, 2**31 - 1,
           -2**31, 2**63 - 1, -2**63, 2**64, 10**30, 2**24 + 1]
PY_FLOATS_EXTRA = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, -1.0, 0.5, 0.25,
                   1.5, 2.7, -2.7, 3.5, -3.5, 7.9, 8.0, 1e10, -1e10, 1e300, 2.0**-140, 1e-45,
                   448.0, 464.0, 480.0, 57344.0, 61440.0, 6.0, 7.5, 28.0, 3.4e38, 1e39,
                   1.5 * 2.0**128, 1.75 * 2.0**128, 2.0**128, 1.00390625 + 2**-30]
# complex-only inputs: two-argument construction and complex text (never given to the float
# types: text that float() rejects aborts them)
TWO_ARGS = [(1, 3), (1.5, -2.25), (0, 0), (float("inf"), 1), (2,)]
COMPLEX_STRINGS = ["1+3j", "(2-0.5j)", "-1j", "inf+nanj", "0.1+0.2j"]
# ml_dtypes' float types abort the interpreter on text that float() rejects: never run those.
CRASHING_FLOAT_STRINGS = {"0x10"}
VALID_STRINGS = ["0", "-0", "1", "-1", "1.5", "0.1", "-2.75", "1e3", "1E-3", "448", "464",
                 "464.0000000000000000001", "1.00390625000000000000001", "240", "inf", "-inf",
                 "nan", "Infinity", "  2.5  ", "+3", "1_000", "0x10", "3.4e38", "1e-7", "6.0", "7"]


def f64_probe_floats():
    """Python floats: the special list plus double-rounding cases from the format probe set."""
    xs = list(PY_FLOATS_EXTRA)
    with gzip.open(os.path.join(ROOT, "crates", "mldtypes", "tests", "vectors", "formats",
                                "f64_probe_inputs.npy.gz")) as fh:
        probe = np.load(fh).view(np.float64)
    ml = np.load(gzip.open(os.path.join(ROOT, "crates", "mldtypes", "tests", "vectors", "formats",
                                        "f64_to_formats_mldtypes.npy.gz")))
    ex = np.load(gzip.open(os.path.join(ROOT, "crates", "mldtypes", "tests", "vectors", "formats",
                                        "f64_to_formats_exact.npy.gz")))
    rng = np.random.default_rng(11)
    for row in range(ml.shape[0]):
        differ = np.nonzero(ml[row] != ex[row])[0]
        if len(differ):
            xs += probe[rng.choice(differ, size=min(12, len(differ)), replace=False)].tolist()
    xs += probe[rng.choice(len(probe), size=200, replace=False)].tolist()
    uniq = {}
    for x in xs:
        uniq[np.float64(x).view(np.uint64).item()] = x
    return [uniq[k] for k in sorted(uniq)]


def exact_code(name, x):
    """Our code for a real number x (float or Fraction): one rounding."""
    if name in ORACLE:
        return ORACLE[name].encode_exact(x)
    raise KeyError(name)


def exact_complex_code(name, re, im):
    part = COMPLEX_PART[name]
    return exact_code(part, re) | (exact_code(part, im) << 16)


def construction():
    out = {"two_args": [[repr(v) for v in a] for a in TWO_ARGS], "complex_strings": COMPLEX_STRINGS,
           "py_ints": PY_INTS, "py_floats": [fl(x) for x in f64_probe_floats()],
           "py_float_bits": [int(np.float64(x).view(np.uint64)) for x in f64_probe_floats()],
           "strings": VALID_STRINGS, "types": {}}
    floats = f64_probe_floats()
    np_scalars = [("float16", 1.5), ("float16", -0.0), ("float16", 65504.0), ("float32", 0.1),
                  ("float32", -3.25), ("float32", 3.0e38), ("float32", 1e-40),
                  ("float64", 0.1), ("float64", 1e300), ("float64", -7.75), ("int8", -5),
                  ("int16", 300), ("int32", 7), ("int64", -9), ("uint8", 200), ("uint64", 3),
                  ("bool", True), ("bool", False), ("longdouble", 2.5), ("complex64", 1.5),
                  ("complex128", -2.0)]
    out["np_scalars"] = [[n, repr(v)] for n, v in np_scalars]
    for name in OURS:
        t = T(name)
        d = {}
        d["from_int"] = [outcome(lambda: t(v)) for v in PY_INTS]
        ml_codes, ours = [], []
        for x in floats:
            ml_codes.append(outcome(lambda: t(x)))
            if name in ORACLE:
                ours.append(exact_code(name, x))
        d["from_float"] = ml_codes
        if name in COMPLEX:
            ours = [exact_complex_code(name, x, 0.0) for x in floats]
        if ours:
            d["from_float_ours"] = ours
        # np.array(python float, dtype=T): the dtype's setitem, one element at a time
        d["array_from_float"] = [outcome(lambda: np.array([x], dtype=t)) for x in floats]
        if name in COMPLEX:
            d["two_args"] = [outcome(lambda: t(*args)) for args in TWO_ARGS]
            d["from_complex_str"] = [outcome(lambda: t(z)) for z in COMPLEX_STRINGS]
            d["from_complex_str_ours"] = [
                exact_complex_code(name, complex(z).real, complex(z).imag)
                for z in COMPLEX_STRINGS]
            d["from_complex"] = [outcome(lambda: t(complex(x, -x / 2))) for x in floats[:40]]
            d["from_complex_ours"] = [
                exact_complex_code(name, x, -x / 2) for x in floats[:40]]
        # strings: ml_dtypes parses valid text through a double; ours parses exactly
        sres, sours = [], []
        for s in VALID_STRINGS:
            if s in CRASHING_FLOAT_STRINGS and name in FLOATS:
                sres.append(None)  # crashes the interpreter in ml_dtypes: ours raises
                sours.append(None)
                continue
            sres.append(outcome(lambda: t(s)))
            if name in ORACLE:
                try:
                    fx = float(s)
                except ValueError:
                    sours.append(None)
                    continue
                if math.isfinite(fx) and fx != 0:
                    sours.append(exact_code(name, Fraction(s.strip().replace("_", ""))))
                else:
                    sours.append(exact_code(name, fx))
        d["from_str"] = sres
        if sours:
            d["from_str_ours"] = sours
        d["from_np_scalar"] = [outcome(lambda: t(np.dtype(n).type(v))) for n, v in np_scalars]
        if name in ORACLE or name in COMPLEX:
            # ours: one rounding from the scalar's exact value
            ours = []
            for n, v in np_scalars:
                with np.errstate(all="ignore"):
                    z = complex(np.dtype(n).type(v))
                ours.append(exact_complex_code(name, z.real, z.imag) if name in COMPLEX
                            else exact_code(name, z.real))
            d["from_np_scalar_ours"] = ours
        # from each of our types: a few scalars each
        d["from_ours"] = {}
        for src in OURS:
            sc = sample_for_binary(src)[:: max(1, len(sample_for_binary(src)) // 12)]
            d["from_ours"][src] = {"codes": sc.tolist(),
                                   "out": [outcome(lambda: t(from_codes(src, [c])[0]))
                                           for c in sc.tolist()]}
        out["types"][name] = d
    save_json("construction", out)


# ---------------------------------------------------------------------------------------------
# 4. Array casts and np.can_cast
# ---------------------------------------------------------------------------------------------
_FLOAT_PROBE = []


def float_probe_f64():
    """Shared float probe (float64 values, about 6,000): every value of each 8/6/4-bit format,
    the midpoints between neighbours and the float32 values one ulp either side, the overflow and
    underflow boundaries (the format generator's interesting points; a 1-in-24 subsample of
    them for bfloat16), specials, and float64 double-rounding cases."""
    if _FLOAT_PROBE:
        return _FLOAT_PROBE[0]
    parts = [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e300, -1e300, 5e-324,
                       2.0**-127, 1.25 * 2.0**-127, 1.5 * 2.0**-127, 2.0**-149, 65519.0, 65520.0,
                       1e5, 3e38, 2.0**127, 1.5 * 2.0**127, 0.1, -0.7, 1e-8])]
    with np.errstate(all="ignore"):
        for f in oracle.FMTS:
            if f.name == "float16":
                continue
            pts = oracle.interesting_points(f, 1 if f.bits <= 8 else 64)
            if f.bits > 8:
                pts = np.sort(pts)[::24]
            parts.append(pts)
        parts.append(np.array(f64_probe_floats()))
    allp = np.concatenate(parts)
    bits = np.unique(allp.view(np.uint64))
    _FLOAT_PROBE.append(bits.view(np.float64))
    return _FLOAT_PROBE[0]


INT_PROBE = sorted({v for k in range(0, 64) for v in (2**k, -(2**k), 2**k + 1, 2**k - 1,
                                                      -(2**k) - 1)}
                   | set(range(-130, 131)) | {2**63 - 1, 2**64 - 1, 300, 448, 449, 1000})


def source_inputs(src):
    """The input array (of dtype src) for casts from src."""
    if src in OURS:
        return from_codes(src, codes_for(src))
    if src == "bool":
        return np.array([False, True])
    dt = np.dtype(src)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [v for v in INT_PROBE if info.min <= v <= info.max] + [info.min, info.max]
        return np.array(sorted(set(vals)), dtype=dt)
    f64 = float_probe_f64()
    with np.errstate(all="ignore"):
        if dt.kind == "f":
            arr = f64.astype(dt)
        else:
            im = np.resize(np.array([0.0, 1.5, -0.0, np.nan, -2.0]), len(f64))
            arr = (f64 + 1j * im).astype(dt)
    # dedupe by value bits (after narrowing)
    key = arr.astype(np.complex128 if dt.kind == "c" else np.float64)
    if dt.kind == "c":
        kb = np.stack([key.real.view(np.uint64), key.imag.view(np.uint64)], 1)
        _, idx = np.unique(kb, axis=0, return_index=True)
    else:
        _, idx = np.unique(key.view(np.uint64), return_index=True)
    return arr[np.sort(idx)]


def input_record(src, arr):
    """How the test rebuilds the inputs: raw codes of our types, float64/complex128 values or
    int64/uint64 values of builtins (longdouble inputs are exact float64 values)."""
    if src in OURS:
        return to_codes(src, arr)
    dt = np.dtype(src)
    if dt.kind == "b":
        return arr.astype(np.uint8)
    if dt.kind == "i":
        return arr.astype(np.int64)
    if dt.kind == "u":
        return arr.astype(np.uint64)
    if dt.kind == "f":
        return arr.astype(np.float64)
    return arr.astype(np.complex128)


def output_record(dst, arr):
    """Result bits: codes of ours, raw bits of builtins (longdouble as float64,
    clongdouble as complex128 bits: x86 long double padding bytes are not data)."""
    if dst in OURS:
        return to_codes(dst, arr)
    dt = np.dtype(dst)
    if dst == "longdouble":
        arr = arr.astype(np.float64)
    elif dst == "clongdouble":
        arr = arr.astype(np.complex128)
    if arr.dtype.kind == "c":
        f = arr.view(np.float32 if arr.dtype.itemsize == 8 else np.float64)
        return f.view(np.uint32 if arr.dtype.itemsize == 8 else np.uint64)
    if dt.kind == "b":
        return arr.view(np.uint8)
    return arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.dtype.itemsize])


def exact_value_of_inputs(src, arr):
    """Exact real and imaginary parts (Python floats) of each input, or None (non-float src)."""
    with np.errstate(all="ignore"):
        return _exact_value_of_inputs(src, arr)


def _exact_value_of_inputs(src, arr):
    if src in OURS:
        if src in INTS:
            return None
        if src in COMPLEX:
            c = arr.astype(np.complex128)
            return list(zip(c.real.tolist(), c.imag.tolist()))
        return [(x, 0.0) for x in arr.astype(np.float64).tolist()]
    dt = np.dtype(src)
    if dt.kind == "f":
        return [(x, 0.0) for x in arr.astype(np.float64).tolist()]
    if dt.kind == "c":
        c = arr.astype(np.complex128)
        return list(zip(c.real.tolist(), c.imag.tolist()))
    return None


def casts():
    arrays = {}
    meta = {"pairs": {}, "deviations": {}}
    for src in ALL:
        arr = source_inputs(src)
        arrays[f"in__{src}"] = input_record(src, arr)
        exact_in = exact_value_of_inputs(src, arr)
        for dst in ALL:
            if src not in OURS and dst not in OURS:
                continue
            kind, res, w = call(lambda: arr.astype(T(dst)))
            key = f"{src}__{dst}"
            if kind == "err":
                meta["pairs"][key] = {"error": res}
                continue
            out = output_record(dst, res)
            arrays[key] = out
            rec = {}
            if w:
                rec["warnings"] = [list(x) for x in w]
            # ours: one rounding from the exact source value to a float/complex format
            if exact_in is not None and (dst in ORACLE or dst in COMPLEX):
                ours = []
                for re, im in exact_in:
                    if dst in COMPLEX:
                        ours.append(exact_complex_code(dst, re, im))
                    else:
                        ours.append(exact_code(dst, re))
                ours = np.array(ours, dtype=out.dtype)
                differ = []
                for j in np.nonzero(ours != out)[0].tolist():
                    if dst in COMPLEX:
                        p = ORACLE[COMPLEX_PART[dst]]
                        same = all(oracle.same_code(p, (int(ours[j]) >> s) & 0xFFFF,
                                                    (int(out[j]) >> s) & 0xFFFF) for s in (0, 16))
                    else:
                        same = oracle.same_code(ORACLE[dst], ours[j], out[j])
                    if not same:
                        differ.append(j)
                wide = src in ("float64", "longdouble", "complex128", "clongdouble")
                if dst == "float8_e8m0fnu" and not wide:
                    # float32 subnormals in (2^-127, 1.5 * 2^-127) give 0x01 in ml_dtypes and
                    # in ours alike (the oracle rounds them to nearest, 0x00): no deviation
                    differ = [j for j in differ
                              if not (int(out[j]) == 1 and int(ours[j]) == 0)]
                if differ:
                    cc = src in COMPLEX and dst in COMPLEX
                    if not (wide or cc):
                        print("UNEXPECTED", src, dst, len(differ), "of", len(out),
                              [(hex(int(to_codes(src, arr[j:j+1])[0]) if src in OURS else 0),
                                hex(int(out[j])), hex(int(ours[j]))) for j in differ[:4]])
                    arrays[f"ours__{key}__idx"] = np.array(differ, dtype=np.uint32)
                    arrays[f"ours__{key}__code"] = ours[differ]
                    meta["deviations"][key] = {
                        "count": len(differ),
                        "reason": "float64 rounds once" if wide else
                        "ml_dtypes casts complex32 <-> bcomplex32 wrongly"}
            meta["pairs"][key] = rec
    save_npz("casts", arrays)
    # np.can_cast for every ordered pair of (ours + builtins)
    cc = {"types": ALL}
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        cc[casting] = ["".join("1" if np.can_cast(np.dtype(T(a)), np.dtype(T(b)), casting=casting)
                               else "0" for b in ALL) for a in ALL]
    cc["default"] = ["".join("1" if np.can_cast(np.dtype(T(a)), np.dtype(T(b))) else "0"
                             for b in ALL) for a in ALL]
    meta["can_cast"] = cc
    # result_type / promote_types between ours and builtins
    rt = {}
    for a in ALL:
        for b in ALL:
            if a not in OURS and b not in OURS:
                continue
            kind, v, _ = call(lambda: np.promote_types(np.dtype(T(a)), np.dtype(T(b))))
            rt[f"{a}__{b}"] = {"error": v} if kind == "err" else str(v)
    meta["promote_types"] = rt
    save_json("casts", meta)


# ---------------------------------------------------------------------------------------------
# 5. finfo / iinfo
# ---------------------------------------------------------------------------------------------
FINFO_FIELDS = ["bits", "eps", "epsneg", "machep", "negep", "max", "min", "nexp", "nmant",
                "iexp", "maxexp", "minexp", "precision", "resolution", "tiny",
                "smallest_normal", "smallest_subnormal"]


def infos():
    fi = {}
    for name in FLOATS + COMPLEX:
        info = ml_dtypes.finfo(T(name))
        d = {"dtype": str(info.dtype), "str": str(info), "repr": repr(info)}
        for k in FINFO_FIELDS:
            v = getattr(info, k)
            if isinstance(v, (int, np.integer)):
                d[k] = {"int": int(v)}
            else:
                d[k] = {"type": type(v).__name__, "float": fl(np.float64(v))}
                if type(v).__name__ in OURS:
                    d[k]["code"] = code_of(type(v).__name__, v)
        fi[name] = d
    ii = {}
    for name in INTS:
        info = ml_dtypes.iinfo(T(name))
        ii[name] = {"dtype": str(info.dtype), "kind": info.kind, "bits": int(info.bits),
                    "min": int(info.min), "max": int(info.max), "str": str(info),
                    "repr": repr(info)}
    save_json("info", {"finfo": fi, "iinfo": ii})


# ---------------------------------------------------------------------------------------------
# 6. Ufuncs
# ---------------------------------------------------------------------------------------------
UFUNCS = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))
ALIASES = {}
for _n in UFUNCS:
    _u = getattr(np, _n)
    ALIASES.setdefault(_u.__name__, []).append(_n)
CANON = sorted(ALIASES)  # one entry per distinct ufunc object


FULL_PAIR_UFUNCS = ["add", "subtract", "multiply", "divide"]


def ufuncs():
    meta = {"ufunc_names": {k: v for k, v in ALIASES.items()}, "types": {}}
    arrays = {}
    for name in OURS:
        un_codes = codes_for(name)
        bin_codes = sample_for_binary(name)
        a_codes = np.repeat(bin_codes, len(bin_codes))
        b_codes = np.tile(bin_codes, len(bin_codes))
        un = from_codes(name, un_codes)
        a = from_codes(name, a_codes)
        b = from_codes(name, b_codes)
        arrays[f"{name}__unary_in"] = un_codes
        arrays[f"{name}__binary_in"] = bin_codes
        tm = {}
        for uname in CANON:
            u = getattr(np, uname)
            if u.nin == 1:
                args = (un,)
            elif u.nin == 2:
                args = (a, b)
            else:
                continue
            if uname in ("matmul", "vecdot", "matvec", "vecmat"):
                continue  # gufuncs: see the array-function vectors
            kind, res, w = call(lambda: u(*args))
            rec = {"nin": u.nin, "nout": u.nout}
            if kind == "err":
                rec["error"] = res
            else:
                res = res if isinstance(res, tuple) else (res,)
                rec["out_dtypes"] = [str(r.dtype) for r in res]
                for k, r in enumerate(res):
                    arrays[f"{name}__{uname}__{k}"] = output_record(str(r.dtype), r)
            if w:
                rec["warnings"] = [list(x) for x in w]
            if uname == "ldexp":
                # ldexp(x, int32) is the usual signature
                e = np.resize(np.array([-3, -1, 0, 1, 2, 5, 20], dtype=np.int32), len(un))
                arrays[f"{name}__ldexp_int__in"] = e
                kind, res, w2 = call(lambda: np.ldexp(un, e))
                if kind == "err":
                    rec["int_exponent_error"] = res
                else:
                    rec["int_exponent_out_dtype"] = str(res.dtype)
                    arrays[f"{name}__ldexp_int__0"] = output_record(str(res.dtype), res)
                if w2:
                    rec["int_exponent_warnings"] = [list(x) for x in w2]
            tm[uname] = rec
        # every ordered pair of codes for the four arithmetic ufuncs of the 8-bit float types
        if name in FLOATS and BITS[name] == 8:
            full = np.arange(256, dtype=np.uint8)
            fa = from_codes(name, np.repeat(full, 256))
            fb = from_codes(name, np.tile(full, 256))
            for uname in FULL_PAIR_UFUNCS:
                u = getattr(np, uname)
                with np.errstate(all="ignore"):
                    r = u(fa, fb)
                codes = output_record(name, r)
                arrays[f"{name}__full__{uname}__0"] = codes
        meta["types"][name] = tm
    meta["full_pair_ufuncs"] = FULL_PAIR_UFUNCS
    save_npz("ufuncs", arrays)
    save_json("ufuncs", meta)


# ---------------------------------------------------------------------------------------------
# 7. Scalar arithmetic, comparisons with other objects
# ---------------------------------------------------------------------------------------------
SCALAR_OPS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "divmod", "eq", "ne",
              "lt", "le", "gt", "ge"]
OPFN = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
        "truediv": lambda x, y: x / y, "floordiv": lambda x, y: x // y,
        "mod": lambda x, y: x % y, "pow": lambda x, y: x ** y, "divmod": divmod,
        "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
UNARY_OPS = {"neg": lambda x: -x, "pos": lambda x: +x, "abs": abs}
# other operands: (label, constructor)
MIXED = [("py_int_2", lambda: 2), ("py_float_2.5", lambda: 2.5), ("py_bool", lambda: True),
         ("py_complex", lambda: 1.5j), ("np_float16", lambda: np.float16(2.5)),
         ("np_float32", lambda: np.float32(2.5)), ("np_float64", lambda: np.float64(2.5)),
         ("np_int8", lambda: np.int8(3)), ("np_int32", lambda: np.int32(3)),
         ("np_int64", lambda: np.int64(3)), ("np_uint8", lambda: np.uint8(3)),
         ("np_bool", lambda: np.bool_(True)), ("np_complex64", lambda: np.complex64(1 + 1j)),
         ("np_longdouble", lambda: np.longdouble(2.5)),
         ("np_array0d_float32", lambda: np.array(2.5, dtype=np.float32)),
         ("np_array1d_float32", lambda: np.array([2.5, -1.0], dtype=np.float32))]
UNRELATED = [("none", lambda: None), ("str", lambda: "a"), ("list", lambda: [1, 2]),
             ("tuple", lambda: (1,)), ("dict", lambda: {}), ("object", object)]


def describe_divmod(v):
    if isinstance(v, tuple):
        return {"tuple": [describe(x) for x in v]}
    return describe(v)


def scalar_arith():
    out = {"ops": SCALAR_OPS, "unary": list(UNARY_OPS), "mixed": [m[0] for m in MIXED],
           "unrelated": [u[0] for u in UNRELATED], "types": {}}
    for name in OURS:
        codes = sample_for_binary(name)
        if len(codes) > 16:
            codes = codes[:: len(codes) // 16 + 1]
        d = {"codes": codes.tolist(), "same": {}, "unary": {}, "mixed": {}, "unrelated": {}}
        xs = [from_codes(name, [c])[0] for c in codes.tolist()]
        for op in SCALAR_OPS:
            rows = []
            for x in xs:
                row = []
                for y in xs:
                    kind, v, w = call(lambda: OPFN[op](x, y))
                    r = {"error": v} if kind == "err" else describe_divmod(v)
                    if w:
                        r["warnings"] = [list(q) for q in w]
                    row.append(r)
                rows.append(row)
            d["same"][op] = rows
        for uop, fn in UNARY_OPS.items():
            d["unary"][uop] = [outcome(lambda: fn(x)) for x in xs]
        x0 = xs[min(3, len(xs) - 1)]
        d["mixed_code"] = int(codes[min(3, len(xs) - 1)])
        for label, mk in MIXED:
            d["mixed"][label] = {}
            for op in ["add", "sub", "mul", "truediv", "eq", "lt"]:
                d["mixed"][label][op] = outcome(lambda: OPFN[op](x0, mk()))
                d["mixed"][label]["r" + op] = outcome(lambda: OPFN[op](mk(), x0))
        for label, mk in UNRELATED:
            d["unrelated"][label] = {op: outcome(lambda: OPFN[op](x0, mk()))
                                     for op in ["eq", "ne", "lt", "le", "gt", "ge", "add"]}
        out["types"][name] = d
    # the same comparisons against np.float32 / np.int32 for reference
    ref = {}
    for rname, r0 in (("float32", np.float32(1.5)), ("int32", np.int32(1))):
        ref[rname] = {label: {op: outcome(lambda: OPFN[op](r0, mk()))
                              for op in ["eq", "ne", "lt", "le", "gt", "ge", "add"]}
                      for label, mk in UNRELATED}
    out["builtin_reference"] = ref
    save_json("scalar_arith", out)


# ---------------------------------------------------------------------------------------------
# 8. Arrays: str/repr, sort/argsort/argmax/argmin, nonzero, fill, dot, arange, byteswap, pickle
# ---------------------------------------------------------------------------------------------
def special_array(name):
    """A 1-d array of codes with the type's specials, shuffled deterministically."""
    codes = sample_for_binary(name)
    rng = np.random.default_rng(3)
    c = codes[rng.permutation(len(codes))]
    if len(c) > 24:
        c = c[:24]
    return c


def arrays_section():
    out = {}
    for name in OURS:
        t = T(name)
        d = {}
        c = special_array(name)
        a = from_codes(name, c)
        d["codes"] = c.tolist()
        # printing
        texts = {}
        shapes = {"1d": (len(c),), "2d": (2, len(c) // 2) if len(c) % 2 == 0 else (1, len(c)),
                  "scalar0d": ()}
        for label, shape in shapes.items():
            arr = a[: int(np.prod(shape))].reshape(shape) if shape else a[0:1].reshape(())
            texts[label] = {"shape": list(shape), "str": str(arr), "repr": repr(arr)}
        big = from_codes(name, codes_for(name))
        texts["all_codes"] = {"codes": codes_for(name).tolist()[:256], "str": str(big[:256]),
                              "repr": repr(big[:256])}
        vals = np.array([0, 1, 2, 3], dtype=t)
        texts["small_ints"] = {"str": str(vals), "repr": repr(vals),
                               "codes": to_codes(name, vals).tolist()}
        texts["empty"] = {"str": str(np.zeros(0, t)), "repr": repr(np.zeros(0, t))}
        texts["zeros_2x3"] = {"str": str(np.zeros((2, 3), t)), "repr": repr(np.zeros((2, 3), t))}
        d["print"] = texts
        # sorting family
        for fn in ("sort", "argsort", "argmax", "argmin", "nonzero", "max", "min"):
            kind, v, w = call(lambda: getattr(np, fn)(a) if fn not in ("max", "min")
                              else getattr(a, fn)())
            if kind == "err":
                d[fn] = {"error": v}
            elif fn == "sort":
                d[fn] = {"codes": to_codes(name, v).tolist()}
            elif fn == "nonzero":
                d[fn] = {"idx": v[0].tolist()}
            elif fn in ("max", "min"):
                d[fn] = describe(v)
            else:
                d[fn] = {"value": np.asarray(v).tolist()}
            if w:
                d[fn]["warnings"] = [list(x) for x in w]
        # the same on the NaN-free part (ml_dtypes' comparison treats NaN as equal to
        # everything, so its order of an array with NaNs depends on the sort algorithm)
        with np.errstate(all="ignore"):
            isnan = np.isnan(a.astype(np.complex64 if name in COMPLEX else np.float32))
        nn = a[~isnan]
        if name not in COMPLEX:  # complex32/bcomplex32 are not ordered in ml_dtypes
            d["nonan"] = {"codes": to_codes(name, nn).tolist(),
                          "sort": to_codes(name, np.sort(nn)).tolist(),
                          "argsort": np.argsort(nn).tolist(),
                          "sort_stable": to_codes(name, np.sort(nn, kind="stable")).tolist(),
                          "argsort_stable": np.argsort(nn, kind="stable").tolist(),
                          "argmax": int(np.argmax(nn)), "argmin": int(np.argmin(nn))}
        kind, v, _ = call(lambda: np.sort(a, kind="stable"))
        d["sort_stable"] = {"error": v} if kind == "err" else {"codes": to_codes(name, v).tolist()}
        kind, v, _ = call(lambda: np.argsort(a, kind="stable"))
        d["argsort_stable"] = {"error": v} if kind == "err" else {"value": v.tolist()}
        # fill
        fills = []
        for val in (0, 1, -1, 2.5, 1e10, float("nan")):
            arr = np.zeros(3, dtype=t)
            kind, v, w = call(lambda: arr.fill(val))
            fills.append({"value": repr(val), "error": v} if kind == "err" else
                         {"value": repr(val), "codes": to_codes(name, arr).tolist()})
        d["fill"] = fills
        # dot / matmul
        x = from_codes(name, c[:8])
        y = from_codes(name, c[8:16]) if len(c) >= 16 else from_codes(name, c[:8][::-1])
        d["dot_x"] = to_codes(name, x).tolist()
        d["dot_y"] = to_codes(name, y).tolist()
        for label, fn in (("dot", lambda: np.dot(x, y)), ("matmul", lambda: x @ y),
                          ("dot2d", lambda: np.dot(x.reshape(2, 4), y.reshape(4, 2))),
                          ("vecdot", lambda: np.vecdot(x, y))):
            d[label] = outcome(fn)
        # arange
        ar = {}
        for label, args in (("0_5", (0, 5)), ("m2_2_half", (-2, 2, 0.5)), ("1_4", (1, 4)),
                            ("0_3_1", (0, 3, 1))):
            ar[label] = outcome(lambda: np.arange(*args, dtype=t))
        d["arange"] = ar
        # byteswap
        kind, v, _ = call(lambda: a.byteswap())
        d["byteswap"] = {"error": v} if kind == "err" else {"codes": to_codes(name, v).tolist()}
        kind, v, _ = call(lambda: a.view(a.dtype.newbyteorder()).astype(a.dtype))
        d["newbyteorder_astype"] = ({"error": v} if kind == "err" else
                                    {"codes": to_codes(name, v).tolist()})
        # .real / .imag attributes of a scalar and of the array
        for attr in ("real", "imag"):
            d["attr_" + attr] = outcome(lambda: getattr(a[1], attr))
            d["arr_" + attr] = outcome(lambda: getattr(a, attr))
        # ml_dtypes.real / imag on the array and on one scalar
        for fn in ("real", "imag"):
            d[fn] = outcome(lambda: getattr(ml_dtypes, fn)(a))
            d[fn + "_scalar"] = outcome(lambda: getattr(ml_dtypes, fn)(a[1]))
        # reductions as NumPy does them with the type's own add (ml_dtypes: no float32 accumulator)
        small = from_codes(name, c[:6])
        for fn in ("sum", "prod", "cumsum", "mean"):
            d["np_" + fn] = outcome(lambda: getattr(np, fn)(small))
        out[name] = d
    save_json("arrays", out)


# ---------------------------------------------------------------------------------------------
# 9. Beyond ml_dtypes: float32-accumulated sum/mean/dot, pack/unpack (computed exactly)
# ---------------------------------------------------------------------------------------------
def round_code(name, frac):
    return exact_code(name, frac)


def f32_exact_accum(terms):
    """True if every partial sum of `terms`, in any order, is exact in float32: all terms are
    integer multiples of one power of two and the sum of magnitudes is below 2^24 of them."""
    den = max(t.denominator for t in terms)
    return sum(abs(t) for t in terms) * den < 2**24 and all(
        (den % t.denominator) == 0 for t in terms)


def f32_accum_is_robust(name, exact, terms):
    """True if every float32 summation order rounds to the same code as the exact value."""
    if f32_exact_accum(terms):
        return True
    bound = Fraction(len(terms)) * Fraction(2) ** -23 * sum(abs(v) for v in terms)
    lo, hi = round_code(name, exact - bound), round_code(name, exact + bound)
    return lo == hi == round_code(name, exact)


def mean_is_robust(name, exact_sum, terms):
    """The mean as (float32 sum) / n in float32, then one rounding into the format, gives the
    code of the exact mean whatever the summation order (no format tie within reach)."""
    n = len(terms)
    bound = 0 if f32_exact_accum(terms) else (
        Fraction(n) * Fraction(2) ** -23 * sum(abs(v) for v in terms))
    m = exact_sum / n
    w = bound / n + abs(m) * Fraction(2) ** -22
    return round_code(name, m - w) == round_code(name, m + w) == round_code(name, m)


def beyond():
    out = {"sum": [], "pack": []}
    rng = np.random.default_rng(0)
    # the seed's example: 10,000 uniform values as bfloat16
    vals = rng.uniform(size=10000).astype(ml_dtypes.bfloat16)
    exact = sum(Fraction(float(v)) for v in vals.astype(np.float64))
    out["seed_example"] = {
        "rng": "np.random.default_rng(seed=0).uniform(size=10000)",
        "count": len(vals),
        "numpy_sum_code": code_of("bfloat16", vals.sum()),
        "float32_sum_then_bfloat16_code": code_of(
            "bfloat16", vals.sum(dtype="float32").astype(ml_dtypes.bfloat16)),
        "ours_code": round_code("bfloat16", exact),
        "mean_ours_code": round_code("bfloat16", exact / len(vals)),
    }
    assert f32_accum_is_robust("bfloat16", exact, [Fraction(float(v)) for v in
                                                   vals.astype(np.float64)])
    arrays = {"seed_example_codes": to_codes("bfloat16", vals)}
    # random cases per float format, various shapes, axis None/0/1/-1
    cases = []
    for name in FLOATS:
        fmt = ORACLE[name]
        finite = [c for c in range(fmt.ncodes) if not fmt.is_nan_code(c)
                  and math.isfinite(float(from_codes(name, [c])[0].astype(np.float64)))]
        for shape, axis in (((37,), None), ((6, 50), None), ((6, 50), 0), ((6, 12), 1),
                            ((3, 5, 7), -1), ((3, 5, 7), 1), ((300,), 0)):
            for attempt in range(40):
                # values of moderate magnitude so that float32 sums are order-independent
                pool = np.array(finite, dtype=storage(name))
                v64 = from_codes(name, pool).astype(np.float64)
                ok = (v64 >= 2.0**-6) & (v64 <= 2.0**6)
                if attempt % 2 and len(shape) == 1 and shape[0] < 50:
                    ok = (np.abs(v64) >= 2.0**-6) & (np.abs(v64) <= 2.0**6)  # mixed signs
                if name == "float8_e8m0fnu":
                    ok = v64 <= 2.0**10
                pool = pool[ok]
                codes = rng.choice(pool, size=int(np.prod(shape))).reshape(shape)
                vals64 = from_codes(name, codes).astype(np.float64)
                fr = np.vectorize(lambda x: Fraction(float(x)), otypes=[object])(vals64)
                sums = fr.sum(axis=axis) if axis is not None else fr.sum()
                n = fr.size if axis is None else fr.shape[axis]
                sums_a = np.atleast_1d(np.array(sums, dtype=object))
                terms_a = (fr.reshape(1, -1) if axis is None else
                           np.moveaxis(fr, axis, -1).reshape(-1, fr.shape[axis]))
                robust = all(f32_accum_is_robust(name, s, list(tt))
                             for s, tt in zip(sums_a.ravel(), terms_a))
                # mean cells whose result could depend on the order (a format tie within a
                # float32 error of the exact mean) are left unchecked: mask 0
                mean_ok = np.array([mean_is_robust(name, s, list(tt))
                                    for s, tt in zip(sums_a.ravel(), terms_a)], dtype=np.uint8)
                robust = robust and mean_ok.mean() >= 0.75
                if robust:
                    break
            else:
                raise AssertionError(("no order-independent case", name, shape, axis))
            key = f"sum{len(cases)}"
            arrays[key + "_in"] = codes.astype(storage(name))
            s_codes = np.array([round_code(name, s) for s in sums_a.ravel()],
                               dtype=storage(name)).reshape(np.shape(sums))
            m_codes = np.array([round_code(name, s / n) for s in sums_a.ravel()],
                               dtype=storage(name)).reshape(np.shape(sums))
            arrays[key + "_sum"] = s_codes
            arrays[key + "_mean"] = m_codes
            arrays[key + "_mean_checked"] = mean_ok.reshape(np.shape(sums))
            # with dtype=float32: the float32 result; exact when the float32 sum is exact
            cases.append({"key": key, "dtype": name, "shape": list(shape), "axis": axis})
        # dot of two vectors and a matrix product
    dots = []
    for name in FLOATS:
        fmt = ORACLE[name]
        finite = np.array([c for c in range(fmt.ncodes) if not fmt.is_nan_code(c) and math.isfinite(
            float(from_codes(name, [c])[0].astype(np.float64)))], dtype=storage(name))
        v64 = from_codes(name, finite).astype(np.float64)
        lim = 2.0**6 if name != "float8_e8m0fnu" else 2.0**4
        pool = finite[(np.abs(v64) <= lim) & (np.abs(v64) >= 2.0**-6)]
        for n in (16, 64):
            for attempt in range(60):
                xa = rng.choice(pool, size=n)
                ya = rng.choice(pool, size=n)
                xs = [Fraction(float(v)) for v in from_codes(name, xa).astype(np.float64)]
                ys = [Fraction(float(v)) for v in from_codes(name, ya).astype(np.float64)]
                terms = [p * q for p, q in zip(xs, ys)]
                s = sum(terms)
                if f32_accum_is_robust(name, s, terms):
                    break
            else:
                raise AssertionError(("no robust dot", name, n))
            key = f"dot{len(dots)}"
            arrays[key + "_x"] = xa
            arrays[key + "_y"] = ya
            dots.append({"key": key, "dtype": name, "n": n, "code": round_code(name, s)})
    # matrix products (m x n) @ (n x p): every cell one float32-accumulated dot, rounded once
    mats = []
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float6_e2m3fn", "float4_e2m1fn"):
        fmt = ORACLE[name]
        finite = np.array([c for c in range(fmt.ncodes) if not fmt.is_nan_code(c) and math.isfinite(
            float(from_codes(name, [c])[0].astype(np.float64)))], dtype=storage(name))
        v64 = from_codes(name, finite).astype(np.float64)
        pool = finite[(np.abs(v64) <= 2.0**4) & (np.abs(v64) >= 2.0**-4)]
        m, n, p = 3, 24, 2
        for attempt in range(200):
            xa = rng.choice(pool, size=(m, n))
            ya = rng.choice(pool, size=(n, p))
            xf = [[Fraction(float(v)) for v in row] for row in
                  from_codes(name, xa).astype(np.float64).tolist()]
            yf = [[Fraction(float(v)) for v in row] for row in
                  from_codes(name, ya).astype(np.float64).tolist()]
            cells, ok = [], True
            for i in range(m):
                for j in range(p):
                    terms = [xf[i][k] * yf[k][j] for k in range(n)]
                    ok = ok and f32_accum_is_robust(name, sum(terms), terms)
                    cells.append(round_code(name, sum(terms)))
            if ok:
                break
        else:
            raise AssertionError(("no robust matrix product", name))
        key = f"matmul{len(mats)}"
        arrays[key + "_x"] = xa
        arrays[key + "_y"] = ya
        arrays[key + "_out"] = np.array(cells, dtype=storage(name)).reshape(m, p)
        mats.append({"key": key, "dtype": name, "shape_x": [m, n], "shape_y": [n, p]})
    out["matmul"] = mats
    # float32 sums of small dyadic values are exact: test dtype=float32 / float64 results
    dtcases = []
    for name in ("bfloat16", "float8_e4m3fn", "float4_e2m1fn"):
        vals = np.array([0.5, 1.5, -2.0, 3.0, 4.0, 1.0] * 5, dtype=np.float64)
        codes = to_codes(name, vals.astype(T(name)))
        assert np.array_equal(from_codes(name, codes).astype(np.float64), vals), name
        arrays[f"dt_{name}_in"] = codes.reshape(5, 6)
        dtcases.append({"key": f"dt_{name}", "dtype": name, "sum_axis0":
                        vals.reshape(5, 6).sum(0).tolist(), "sum_all": float(vals.sum()),
                        "mean_axis1": (vals.reshape(5, 6).mean(1)).tolist()})
    out["sum"] = cases
    out["dot"] = dots
    out["dtype_cases"] = dtcases
    # pack / unpack: LSB-first bit stream, trailing bits zero
    packs = []
    for name, w in (("float4_e2m1fn", 4), ("int4", 4), ("uint4", 4), ("int2", 2), ("uint2", 2),
                    ("float6_e2m3fn", 6), ("float6_e3m2fn", 6)):
        for n in (0, 1, 2, 3, 4, 5, 7, 8, 9, 33, 64):
            codes = rng.integers(0, 1 << w, size=n, dtype=np.uint8)
            acc = 0
            for k, c in enumerate(codes.tolist()):
                acc |= c << (w * k)
            nbytes = (n * w + 7) // 8
            packed = acc.to_bytes(nbytes, "little") if nbytes else b""
            key = f"pack{len(packs)}"
            arrays[key + "_codes"] = codes
            arrays[key + "_packed"] = np.frombuffer(packed, dtype=np.uint8).copy()
            packs.append({"key": key, "dtype": name, "n": n, "bits": w, "nbytes": nbytes})
    out["pack"] = packs
    save_npz("beyond", arrays)
    save_json("beyond", out)


# ---------------------------------------------------------------------------------------------
# 10. compat: NumPy's type codes, warnings as errors, np.errstate, info of arrays, int rounding
# ---------------------------------------------------------------------------------------------
# NumPy's builtin type codes (np.typecodes["All"] on NumPy 2.4: '?bhilqnpBHILQNPefdgFDGSUVOMm').
# The flexible and time codes are given as the dtype NumPy makes of the bare code.
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def int_probes(src):
    """Integers of `src` (int32/int64/uint32/uint64) around the ties of bfloat16 and
    float8_e8m0fnu: where a rounding through float32 can differ from one rounding."""
    info = np.iinfo(src)
    xs = set()
    for e in range(8, info.bits):
        for base in (1 << e, 3 << (e - 1)):  # a power of two; 1.5 times one (e8m0's tie)
            for unit_shift in range(0, e):
                half = 1 << unit_shift
                for d in (-1, 0, 1):
                    for v in (base + half + d, base - half + d, base + d):
                        for sgn in (1, -1):
                            x = sgn * v
                            if info.min <= x <= info.max:
                                xs.add(x)
    xs.update([info.min, info.max, 0, 1])
    xs = sorted(xs)
    rng = np.random.default_rng(16)
    if len(xs) > 4000:
        keep = set(rng.choice(len(xs), size=4000, replace=False).tolist())
        xs = [x for i, x in enumerate(xs) if i in keep]
    return xs


def outcome_strict(fn):
    """`outcome` of fn run with every warning an error (as pytest's `filterwarnings = error`):
    an error records the exception class and, if any, the class of its `__cause__`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return describe(fn())
        except Exception as e:  # noqa: BLE001 - recording the reference's exception class
            d = {"error": exc_name(e)}
            if e.__cause__ is not None:
                d["cause"] = exc_name(e.__cause__)
            return d


def compat():
    out = {}
    codes = sorted(set(np.typecodes["All"]), key=np.typecodes["All"].index)
    out["type_codes"] = codes
    # can_cast both ways and promote_types both orders, ours against every builtin code
    cc = {}
    pt = {}
    for name in OURS:
        d = np.dtype(T(name))
        for c in codes:
            b = np.dtype(c)
            for casting in CASTINGS:
                cc[f"{name}__{c}__{casting}"] = [int(np.can_cast(d, b, casting=casting)),
                                                  int(np.can_cast(b, d, casting=casting))]
            for key, args in ((f"{name}__{c}", (d, b)), (f"{c}__{name}", (b, d))):
                kind, v, _ = call(lambda: np.promote_types(*args))
                pt[key] = {"error": v} if kind == "err" else str(v)
    out["can_cast_codes"] = cc
    out["promote_types_codes"] = pt
    # warnings turned into errors: casts from every complex source to every real destination
    # (ours or NumPy's, one of them ours), and an invalid float -> int8 cast (NaN), run under
    # warnings.simplefilter("error"); outcome = result codes/repr or the exception class
    wae = {}
    real_dst = [n for n in ALL if n not in COMPLEX and n not in ("complex64", "complex128",
                                                                  "clongdouble")]
    # (not complex32/bcomplex32 -> real: ml_dtypes warns there from inside its cast loop, and a
    # warning made an error leaves its output uninitialised: nothing reproducible to record)
    for src in ["complex64", "complex128", "clongdouble"]:
        a = np.array([1 + 2j, -0.5 + 0j, 3 - 4j], dtype=np.complex128).astype(T(src))
        for dst in real_dst:
            if src not in OURS and dst not in OURS:
                continue
            wae[f"{src}__{dst}"] = outcome_strict(lambda: a.astype(T(dst)))
    for src in FLOATS:
        if src == "float8_e8m0fnu" or src.startswith("float4") or src.startswith("float6"):
            continue  # float4/float6 have no NaN; float8_e8m0fnu is tested by the NaN of others
        a = np.array([np.nan, 1, 2, 3], dtype=np.float32).astype(T(src))
        for dst in ("int8", "int32", "uint8"):
            wae[f"{src}__{dst}__nan"] = outcome_strict(lambda: a.astype(T(dst)))
            wae[f"{src}__{dst}__nan_strided"] = outcome_strict(lambda: a[::2].astype(T(dst)))
    out["warnings_as_errors"] = wae
    # np.errstate(all="raise"): the same invalid casts, and a float32 loop writing into an
    # out= array of our type (0/0), and our own divide loop
    es = {}
    for src in FLOATS:
        if src in ("float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"):
            continue
        a = np.array([np.nan, 1, 2, 3], dtype=np.float32).astype(T(src))
        with np.errstate(all="raise"):
            es[f"{src}__int8__nan"] = outcome(lambda: a.astype(np.int8))
            es[f"{src}__int8__nan_strided"] = outcome(lambda: a[::2].astype(np.int8))
    for dst in FLOATS:
        z = np.zeros(4, np.float32)
        with np.errstate(all="raise"):
            es[f"divide_float32_out__{dst}"] = outcome(
                lambda: np.divide(z, z, out=np.zeros(4, T(dst))))
            zz = np.zeros(4, T(dst))
            es[f"divide__{dst}"] = outcome(lambda: np.divide(zz, zz))
    out["errstate_raise"] = es
    # finfo / iinfo of arrays (ours and builtins), of builtin dtypes, types and names
    info = {}
    for name in OURS + BUILTINS:
        t = T(name)
        arr = np.zeros(2, dtype=t)
        for label, arg in (("array", arr), ("dtype", np.dtype(t)), ("type", t),
                           ("name", np.dtype(t).name)):
            for fname, fn in (("finfo", ml_dtypes.finfo), ("iinfo", ml_dtypes.iinfo)):
                kind, v, _ = call(lambda: fn(arg))
                key = f"{fname}__{name}__{label}"
                if kind == "err":
                    info[key] = {"error": v}
                elif fname == "iinfo":
                    info[key] = {"dtype": str(v.dtype), "kind": v.kind, "bits": int(v.bits),
                                 "min": int(v.min), "max": int(v.max)}
                else:
                    info[key] = {"dtype": str(v.dtype), "bits": int(v.bits),
                                 "eps": fl(float(v.eps)), "max": fl(float(v.max)),
                                 "tiny": fl(float(v.smallest_normal))}
    out["info_args"] = info
    # integer -> bfloat16 / bcomplex32 / float8_e8m0fnu: ml_dtypes rounds through float32;
    # ours is the one rounding of the exact integer (the oracle)
    ir = {}
    for src in ("int32", "int64", "uint32", "uint64"):
        xs = int_probes(src)
        a = np.array(xs, dtype=src)
        rec = {"in": [str(x) for x in xs]}
        for dst in ("bfloat16", "bcomplex32", "float8_e8m0fnu", "float8_e4m3fn", "float8_e5m2"):
            ml = to_codes(dst, a.astype(T(dst))).tolist()
            if dst in COMPLEX:
                ours = [exact_complex_code(dst, Fraction(x), Fraction(0)) for x in xs]
            else:
                ours = [exact_code(dst, Fraction(x)) for x in xs]
            differ = [i for i, (m, o) in enumerate(zip(ml, ours)) if m != o]
            rec[dst] = {"ml_dtypes": ml, "ours": ours, "differ": len(differ)}
            print("int rounding", src, dst, len(differ), "of", len(xs), flush=True)
        ir[src] = rec
    out["int_rounding"] = ir
    out["int64_example"] = {
        "value": str(2**60 + 2**52 + 1),
        "ml_dtypes": to_codes("bfloat16", np.array([2**60 + 2**52 + 1], np.int64)
                              .astype(ml_dtypes.bfloat16)).tolist()[0],
        "ours": exact_code("bfloat16", Fraction(2**60 + 2**52 + 1))}
    save_json("compat", out)


def main():
    os.makedirs(OUT, exist_ok=True)
    only = os.environ.get("ONLY", "")
    steps = [("surface", surface), ("scalars", scalars), ("construction", construction),
             ("casts", casts), ("info", infos), ("ufuncs", ufuncs),
             ("scalar_arith", scalar_arith), ("arrays", arrays_section), ("beyond", beyond),
             ("compat", compat)]
    for label, fn in steps:
        if only and label not in only.split(","):
            continue
        fn()
        print("wrote", label, flush=True)


if __name__ == "__main__":
    main()
