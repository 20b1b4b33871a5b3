"""Code written and tested the way ml_dtypes' users write it (vectors/compat.json.gz):
`np.can_cast` / `np.promote_types` against every NumPy builtin type code (`np.longlong`,
`np.intc`, ...), casts run with every warning an error, `np.errstate(all="raise")` over our casts
and loops (contiguous and strided, and a loop writing into an `out=` array of our type), `finfo` /
`iinfo` of arrays, dtypes, types and names, and the integer → bfloat16 / bcomplex32 /
float8_e8m0fnu rounding, where mldtypes rounds once (a documented difference).
"""

import warnings

import numpy as np
import pytest

import mldtypes
from conftest import OURS, T, describe, from_codes, load_json, same_outcome, to_codes

V = load_json("compat")
CODES = V["type_codes"]
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def strict(fn):
    """Run fn with every warning an error, as the generator's `outcome_strict`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return describe(fn())
        except Exception as e:  # noqa: BLE001 - compared with the reference's exception class
            d = {"error": type(e).__name__}
            if e.__cause__ is not None:
                d["cause"] = type(e.__cause__).__name__
            return d


def test_type_codes_are_numpys():
    assert CODES == sorted(set(np.typecodes["All"]), key=np.typecodes["All"].index)


@pytest.mark.parametrize("name", OURS)
def test_can_cast_every_type_code(name):
    d = np.dtype(T(name))
    bad = []
    for c in CODES:
        b = np.dtype(c)
        for casting in CASTINGS:
            want = V["can_cast_codes"][f"{name}__{c}__{casting}"]
            got = [int(np.can_cast(d, b, casting=casting)), int(np.can_cast(b, d, casting=casting))]
            if got != want:
                bad.append((c, casting, want, got))
    assert not bad, f"{name}: (code, casting, ml_dtypes [to, from], ours): {bad[:10]}"


def test_can_cast_longlong_example():
    """The issue's example: int4 is not safely castable to np.longlong (a second 64-bit type
    number) in ml_dtypes, though it is to np.int64."""
    assert not np.can_cast(mldtypes.int4, np.longlong, "safe")
    assert np.can_cast(mldtypes.int4, np.int64, "safe")
    assert np.can_cast(mldtypes.uint4, np.uintc, "safe")
    assert not np.can_cast(mldtypes.uint4, np.ulonglong, "safe")


@pytest.mark.parametrize("name", OURS)
def test_promote_types_every_type_code(name):
    d = np.dtype(T(name))
    bad = []
    for c in CODES:
        b = np.dtype(c)
        for key, args in ((f"{name}__{c}", (d, b)), (f"{c}__{name}", (b, d))):
            want = V["promote_types_codes"][key]
            try:
                got = str(np.promote_types(*args))
            except Exception as e:  # noqa: BLE001
                got = {"error": type(e).__name__}
            if got != want:
                bad.append((key, want, got))
    assert not bad, bad[:10]


WAE = V["warnings_as_errors"]


@pytest.mark.parametrize("key", sorted(k for k in WAE if not k.endswith("nan")
                                       and not k.endswith("strided")))
def test_numpy_complex_into_ours_with_warnings_as_errors(key):
    """complex64/complex128/clongdouble → our types (and ours → NumPy's real types) give the
    real part without any warning, as ml_dtypes: code run under `filterwarnings = error` works."""
    src, dst = key.split("__")
    a = np.array([1 + 2j, -0.5 + 0j, 3 - 4j], dtype=np.complex128).astype(T(src))
    got = strict(lambda: a.astype(T(dst)))
    assert same_outcome(WAE[key], got), (key, WAE[key], got)


@pytest.mark.parametrize("key", sorted(k for k in WAE if k.endswith("nan")
                                       or k.endswith("strided")))
def test_invalid_cast_with_warnings_as_errors(key):
    """A NaN cast to an integer raises the RuntimeWarning as an exception (contiguous and
    strided alike), as ml_dtypes' casts do."""
    src, dst, how = key.split("__")
    a = np.array([np.nan, 1, 2, 3], dtype=np.float32).astype(T(src))
    arg = a if how == "nan" else a[::2]
    got = strict(lambda: arg.astype(T(dst)))
    assert same_outcome(WAE[key], got), (key, WAE[key], got)


ES = V["errstate_raise"]


def _errstate(fn):
    with np.errstate(all="raise"):
        try:
            return describe(fn())
        except Exception as e:  # noqa: BLE001
            return {"error": type(e).__name__}


@pytest.mark.parametrize("key", sorted(ES))
def test_errstate_raise(key):
    """np.errstate sees our casts and loops as it sees float32's: invalid casts (contiguous
    and strided), a float32 loop writing into an `out=` array of our type, our own divide."""
    parts = key.split("__")
    if parts[0] == "divide_float32_out":
        z = np.zeros(4, np.float32)
        got = _errstate(lambda: np.divide(z, z, out=np.zeros(4, T(parts[1]))))
    elif parts[0] == "divide":
        zz = np.zeros(4, T(parts[1]))
        got = _errstate(lambda: np.divide(zz, zz))
    else:
        a = np.array([np.nan, 1, 2, 3], dtype=np.float32).astype(T(parts[0]))
        arg = a if parts[2] == "nan" else a[::2]
        got = _errstate(lambda: arg.astype(np.int8))
    assert same_outcome(ES[key], got, nan_equal=True), (key, ES[key], got)


def test_errstate_out_array_example():
    """The issue's example, stated directly."""
    z = np.zeros(4, np.float32)
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        np.divide(z, z, out=np.zeros(4, mldtypes.bfloat16))
    a = np.array([np.nan, 1, 2, 3], mldtypes.bfloat16)
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        a[::2].astype(np.int8)


INFO = V["info_args"]


@pytest.mark.parametrize("key", sorted(INFO))
def test_info_of_arrays_dtypes_types_names(key):
    fname, name, label = key.split("__")
    t = T(name)
    arg = {"array": np.zeros(2, dtype=t), "dtype": np.dtype(t), "type": t,
           "name": np.dtype(t).name}[label]
    fn = getattr(mldtypes, fname)
    want = INFO[key]
    try:
        v = fn(arg)
    except Exception as e:  # noqa: BLE001
        assert want == {"error": type(e).__name__}, (key, want, repr(e))
        return
    assert "error" not in want, (key, want, v)
    if fname == "iinfo":
        got = {"dtype": str(v.dtype), "kind": v.kind, "bits": int(v.bits), "min": int(v.min),
               "max": int(v.max)}
    else:
        got = {"dtype": str(v.dtype), "bits": int(v.bits), "eps": repr(float(v.eps)),
               "max": repr(float(v.max)), "tiny": repr(float(v.smallest_normal))}
    assert got == want, key


IR = V["int_rounding"]


@pytest.mark.parametrize("src", sorted(IR))
@pytest.mark.parametrize("dst", ["bfloat16", "bcomplex32", "float8_e8m0fnu", "float8_e4m3fn",
                                 "float8_e5m2"])
def test_int_casts_round_once(src, dst):
    """int32/int64/uint32/uint64 → our formats are correctly rounded (the exact oracle's
    codes). ml_dtypes rounds through float32 first: for bfloat16, bcomplex32 and
    float8_e8m0fnu it differs on the tie cases these probes hit (a documented difference);
    for the 8-bit formats with few mantissa bits both agree."""
    rec = IR[src]
    a = np.array([int(x) for x in rec["in"]], dtype=src)
    got = to_codes(dst, a.astype(T(dst))).tolist()
    want = rec[dst]["ours"]
    bad = [(rec["in"][i], hex(w), hex(g)) for i, (w, g) in enumerate(zip(want, got)) if w != g]
    assert not bad, f"{src} -> {dst}: (value, exact, ours) {bad[:8]} ({len(bad)} in all)"
    ml = rec[dst]["ml_dtypes"]
    differ = sum(m != w for m, w in zip(ml, want))
    assert differ == rec[dst]["differ"]
    if dst in ("bfloat16", "bcomplex32", "float8_e8m0fnu"):
        assert differ > 0
    else:
        assert differ == 0


def test_int64_to_bfloat16_example():
    """The README's example: int64 2^60 + 2^52 + 1 → bfloat16 is 2^60 + 2^53 (0x5D81), where
    ml_dtypes gives 2^60 (0x5D80)."""
    ex = V["int64_example"]
    assert (ex["ml_dtypes"], ex["ours"]) == (0x5D80, 0x5D81)
    got = np.array([int(ex["value"])], np.int64).astype(mldtypes.bfloat16)
    assert to_codes("bfloat16", got).tolist() == [ex["ours"]]
    assert float(got[0]) == 2.0**60 + 2.0**53
    assert from_codes("bfloat16", np.array([ex["ml_dtypes"]])).astype(float)[0] == 2.0**60


@pytest.mark.parametrize("dst", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
def test_strided_invalid_cast_warns(dst):
    """Strided casts report an invalid conversion as contiguous ones do (bfloat16's NaN; the
    float8 formats convert NaN to 0 without a warning, as ml_dtypes)."""
    a = np.array([np.nan, 1, 2, 3, 4, 5], dtype=mldtypes.bfloat16)
    for arg in (a, a[::2], a[-2::-2], a.reshape(2, 3).T):
        with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
            arg.astype(dst)
