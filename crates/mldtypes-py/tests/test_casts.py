"""Array casts between our types and every NumPy builtin type, `np.can_cast`,
`np.promote_types` and cast warnings (vectors/casts.npz, vectors/casts.json.gz).

Every (source, destination) pair with at least one of our types is checked over the source's
input set: every code of the 8/6/4-bit and sub-byte types, a sample of bfloat16 and the complex
types, and about 6,000 float probes (values, midpoints, neighbours, boundaries, specials) for
the builtin float types. Results are compared bit for bit. Where mldtypes deliberately differs
from ml_dtypes 0.6.0 (float64/longdouble/complex128/clongdouble round once; complex32 <-> bcomplex32
convert each part), the vectors
hold our code at the affected positions (`ours__SRC__DST__idx/code`). complex32/bcomplex32 ->
bool follows ml_dtypes' main branch (b793a6e): true where either part is non-zero, without a
ComplexWarning (ml_dtypes 0.6.0 stores the real part converted to uint8 and warns); the
expected values are computed from that definition on the input codes.
"""

import warnings

import numpy as np
import pytest

from conftest import (BUILTINS, COMPLEX, OURS, T, assert_same, from_codes, load_json, load_npz,
                      to_codes)

ALL = OURS + BUILTINS
META = load_json("casts")
ARR = load_npz("casts")
PAIRS = [(s, d) for s in ALL for d in ALL if s in OURS or d in OURS]


def source_array(src):
    raw = ARR[f"in__{src}"]
    if src in OURS:
        return from_codes(src, raw)
    if src == "bool":
        return raw.astype(bool)
    return raw.astype(np.dtype(src))


def result_bits(dst, arr):
    """The generator's result encoding: codes of ours, raw bits of builtins (long doubles as
    float64 / complex128 values)."""
    if dst in OURS:
        return to_codes(dst, arr)
    if dst == "longdouble":
        arr = arr.astype(np.float64)
    elif dst == "clongdouble":
        arr = arr.astype(np.complex128)
    if arr.dtype.kind == "c":
        f = arr.view(np.float32 if arr.dtype.itemsize == 8 else np.float64)
        return f.view(np.uint32 if arr.dtype.itemsize == 8 else np.uint64)
    return arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.dtype.itemsize])


def complex_to_bool(src):
    """complex32/bcomplex32 -> bool as ml_dtypes' main branch casts: either part non-zero
    (NaN counts), from the input codes (two sign-magnitude 16-bit parts)."""
    c = ARR[f"in__{src}"].astype(np.uint32)
    return (((c & 0x7FFF) != 0) | (((c >> 16) & 0x7FFF) != 0)).astype(np.uint8)


def expected_bits(key):
    src, dst = key.split("__")
    if src in COMPLEX and dst == "bool":
        return complex_to_bool(src)
    exp = ARR[key].copy()
    idx = ARR.get(f"ours__{key}__idx")
    if idx is not None:
        exp[idx] = ARR[f"ours__{key}__code"]
    return exp


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{s}->{d}" for s, d in PAIRS])
def test_cast_values(src, dst):
    key = f"{src}__{dst}"
    rec = META["pairs"][key]
    a = source_array(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in rec:
            # ml_dtypes registers no cast for this pair; having one is not an error, but it
            # must give what the cast through float32 (complex64) gives
            try:
                got = a.astype(T(dst))
            except TypeError:
                return
            mid = np.complex64 if {src, dst} & {"complex32", "bcomplex32"} else np.float32
            want = a.astype(mid).astype(T(dst))
            assert_same(f"{src} -> {dst} (no ml_dtypes cast: as through {mid.__name__})",
                        ARR[f"in__{src}"], result_bits(dst, want), result_bits(dst, got))
            return
        got = result_bits(dst, a.astype(T(dst)))
    inputs = ARR[f"in__{src}"]
    assert_same(f"{src} -> {dst} (result bits)", inputs, expected_bits(key), got)


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{s}->{d}" for s, d in PAIRS])
def test_cast_warnings(src, dst):
    """ComplexWarning exactly where ml_dtypes gives it; no RuntimeWarning where it gives none."""
    rec = META["pairs"][f"{src}__{dst}"]
    if "error" in rec:
        return
    a = source_array(src)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a.astype(T(dst))
    got = {x.category.__name__ for x in w}
    want = {c for c, _ in rec.get("warnings", [])}
    if src in COMPLEX and dst == "bool":
        want.discard("ComplexWarning")  # ml_dtypes 0.6.0 warns; its main branch does not
    assert ("ComplexWarning" in got) == ("ComplexWarning" in want), (
        f"{src} -> {dst}: warnings {sorted(got)}, expected ComplexWarning "
        f"{'ComplexWarning' in want} (ml_dtypes {sorted(rec.get('warnings', []))})")
    if "RuntimeWarning" not in want:
        assert "RuntimeWarning" not in got, (
            f"{src} -> {dst}: spurious RuntimeWarning {[str(x.message) for x in w]}")


@pytest.mark.parametrize("src,dst", [("complex32", "bfloat16"), ("bcomplex32", "float32"),
                                     ("complex32", "int4")])
def test_complex_to_real_warns(src, dst):
    """Our complex types warn when they lose the imaginary part, as ml_dtypes' do."""
    a = source_array(src)[:4]
    with pytest.warns(np.exceptions.ComplexWarning):
        a.astype(T(dst))


@pytest.mark.parametrize("src", ["complex32", "bcomplex32"])
@pytest.mark.parametrize("dst", ["float32", "float64", "int8", "bfloat16", "float8_e4m3fn",
                                 "int4"])
@pytest.mark.parametrize("step", [1, 2])
def test_complex_warning_as_error_raises_it(src, dst, step):
    """With warnings as errors, our complex types' ComplexWarning reaches the caller as that
    exception, for contiguous and strided casts (ml_dtypes raises SystemError; deliberate
    difference: our complex dtypes carry NPY_NEEDS_PYAPI so that NumPy looks for it)."""
    a = np.array([1 + 2j, 3 - 4j, -0.5 + 0j, 2 + 0j], dtype=np.complex64).astype(T(src))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(np.exceptions.ComplexWarning):
            a[::step].astype(T(dst))
    with pytest.warns(np.exceptions.ComplexWarning):
        got = a[::step].astype(T(dst))
    want = np.array([1, 3, -0.5, 2], np.float64)[::step]
    if dst in ("int8", "int4"):
        want = np.trunc(want)
    assert np.array_equal(got.astype(np.float64), want)


def test_complex_dtype_flags_need_python_api():
    """complex32/bcomplex32 dtypes carry NPY_NEEDS_PYAPI (0x10) beside NPY_USE_SETITEM (0x40);
    every other type has ml_dtypes' flags."""
    assert int(np.dtype(T("complex32")).flags) == 0x50
    assert int(np.dtype(T("bcomplex32")).flags) == 0x50
    assert int(np.dtype(T("bfloat16")).flags) == 0x40


@pytest.mark.parametrize("src", ["complex64", "complex128", "clongdouble"])
@pytest.mark.parametrize("dst", ["bfloat16", "float8_e4m3fn", "float4_e2m1fn", "int4", "uint2"])
def test_numpy_complex_into_ours_does_not_warn(src, dst):
    """NumPy's complex types cast into ours without ComplexWarning, as into ml_dtypes' (code
    run with warnings as errors, as ml_dtypes' own tests are, keeps working)."""
    a = np.array([1 + 2j, 3 - 4j, -0.5 + 0j], dtype=src)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = a.astype(T(dst))
    assert np.array_equal(got.astype(np.float64), a.real.astype(T(dst)).astype(np.float64))


@pytest.mark.parametrize("name", OURS)
def test_no_runtime_warning_as_error(name):
    """Code run with warnings as errors: ordinary finite casts never warn."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.array([0.0, 1.0, -1.0, 0.5, 2.0], dtype=np.float32)
        if name.startswith("uint") or name == "float8_e8m0fnu":
            x = np.abs(x) + (name == "float8_e8m0fnu")
        if name in ("complex32", "bcomplex32"):
            x = x.astype(np.complex64)
        y = x.astype(T(name))
        y.astype(x.dtype)
        x.astype(np.float64 if x.dtype.kind == "f" else np.complex128).astype(T(name))


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe", "default"])
def test_can_cast(casting):
    cc = META["can_cast"]
    types = cc["types"]
    bad = []
    for i, a in enumerate(types):
        for j, b in enumerate(types):
            if a not in OURS and b not in OURS:
                continue
            want = cc[casting][i][j] == "1"
            if casting == "default":
                got = np.can_cast(np.dtype(T(a)), np.dtype(T(b)))
            else:
                got = np.can_cast(np.dtype(T(a)), np.dtype(T(b)), casting=casting)
            if bool(got) != want:
                bad.append(f"  can_cast({a}, {b}): {bool(got)}, ml_dtypes {want}")
    assert not bad, f"casting={casting}: {len(bad)} pairs differ\n" + "\n".join(bad[:40])


def test_promote_types():
    bad = []
    for key, want in META["promote_types"].items():
        a, b = key.split("__")
        try:
            got = str(np.promote_types(np.dtype(T(a)), np.dtype(T(b))))
        except Exception as e:  # noqa: BLE001
            got = {"error": type(e).__name__}
        if got != want:
            bad.append(f"  promote_types({a}, {b}): {got}, ml_dtypes {want}")
    assert not bad, f"{len(bad)} pairs differ\n" + "\n".join(bad[:40])


def test_deviations_are_recorded():
    """The vectors carry our values for the documented differences only."""
    reasons = {d["reason"] for d in META["deviations"].values()}
    assert reasons <= {"float64 rounds once",
                       "ml_dtypes casts complex32 <-> bcomplex32 wrongly"}
