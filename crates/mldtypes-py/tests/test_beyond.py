"""mldtypes' own functions, beyond ml_dtypes (vectors/beyond.npz / .json.gz; expected values are
computed exactly by the generator):

- `mldtypes.sum`, `mldtypes.mean`, `mldtypes.dot` accumulate in float32 and round the result
  once into the array's dtype (the cases are drawn so that every float32 summation order gives
  the same code); `axis` and `dtype` as NumPy's.
- `mldtypes.pack(array)` / `mldtypes.unpack(buffer, dtype, shape)`: sub-byte codes as one
  least-significant-bit-first stream (safetensors' F4 / F6 layout), trailing bits zero.
"""

import numpy as np
import pytest

import mldtypes
from conftest import COMPLEX, T, assert_same, from_codes, load_json, load_npz, to_codes

B = load_json("beyond")
ARR = load_npz("beyond")
SUMS = B["sum"]
DOTS = B["dot"]
PACKS = B["pack"]


def test_seed_example_sum_is_4992():
    vals = from_codes("bfloat16", ARR["seed_example_codes"])
    ex = B["seed_example"]
    r = mldtypes.sum(vals)
    assert np.asarray(r).dtype == np.dtype(mldtypes.bfloat16)
    assert to_codes("bfloat16", np.asarray(r).reshape(1))[0] == ex["ours_code"] == 0x459C, (
        f"mldtypes.sum: {r}, expected 4992")
    assert float(np.asarray(r).astype(np.float32)) == 4992.0
    # NumPy's own sum keeps the bfloat16 accumulator: 256, as with ml_dtypes
    assert to_codes("bfloat16", np.asarray(vals.sum()).reshape(1))[0] == ex["numpy_sum_code"]
    m = mldtypes.mean(vals)
    assert to_codes("bfloat16", np.asarray(m).reshape(1))[0] == ex["mean_ours_code"]


def _check_reduction(fn, case, suffix):
    name = case["dtype"]
    a = from_codes(name, ARR[case["key"] + "_in"])
    r = np.asarray(fn(a, axis=case["axis"]))
    want = ARR[case["key"] + suffix]
    assert r.dtype == np.dtype(T(name)), f"{fn.__name__} of {name}: dtype {r.dtype}"
    assert r.shape == want.shape, f"{fn.__name__} of {name} axis={case['axis']}: shape {r.shape}"
    got = to_codes(name, r.reshape(-1)).reshape(want.shape)
    return name, want, got


@pytest.mark.parametrize("case", SUMS, ids=[f"{c['dtype']}-{c['shape']}-{c['axis']}"
                                            for c in SUMS])
def test_sum(case):
    name, want, got = _check_reduction(mldtypes.sum, case, "_sum")
    assert_same(f"mldtypes.sum({name}{case['shape']}, axis={case['axis']})", None, want, got)


@pytest.mark.parametrize("case", SUMS, ids=[f"{c['dtype']}-{c['shape']}-{c['axis']}"
                                            for c in SUMS])
def test_mean(case):
    name, want, got = _check_reduction(mldtypes.mean, case, "_mean")
    checked = ARR[case["key"] + "_mean_checked"].astype(bool)
    assert_same(f"mldtypes.mean({name}{case['shape']}, axis={case['axis']})", None,
                np.where(checked, want, 0), np.where(checked, got, 0))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn"])
def test_float32_sums_do_not_depend_on_the_layout(name):
    # Sums along a leading axis (columns added row by row, several steps
    # of 2048 rows and leaves with rows past a group of eight) and along the
    # last axis (each lane on its own) follow the same pairwise tree: the
    # same float32 sums, within the recursive-summation bound of the
    # float64 sums of the same values.
    rng = np.random.default_rng(28)
    v = (rng.standard_normal((3, 2100, 70)) * 4).astype(np.float32).astype(T(name))
    v64 = v.astype(np.float64)
    for axis in (0, 1, 2):
        got = np.asarray(mldtypes.sum(v, axis=axis, dtype=np.float32))
        lanes = np.ascontiguousarray(np.moveaxis(v, axis, -1))
        assert got.tolist() == np.asarray(
            mldtypes.sum(lanes, axis=-1, dtype=np.float32)).tolist(), f"axis={axis}"
        assert np.asarray(mldtypes.sum(np.asfortranarray(v), axis=axis,
                                       dtype=np.float32)).tolist() == got.tolist()
        n = v.shape[axis]
        gamma = n * 2.0**-24 / (1 - n * 2.0**-24)
        bound = gamma * np.abs(v64).sum(axis=axis)
        assert (np.abs(got - v64.sum(axis=axis)) <= bound).all(), f"axis={axis}"


@pytest.mark.parametrize("case", DOTS, ids=[f"{c['dtype']}-{c['n']}" for c in DOTS])
def test_dot(case):
    name = case["dtype"]
    x = from_codes(name, ARR[case["key"] + "_x"])
    y = from_codes(name, ARR[case["key"] + "_y"])
    r = np.asarray(mldtypes.dot(x, y))
    assert r.dtype == np.dtype(T(name))
    got = int(to_codes(name, r.reshape(1))[0])
    assert got == case["code"], f"mldtypes.dot on {name} (n={case['n']}): {got:#x}, " \
                                f"expected {case['code']:#x}"


@pytest.mark.parametrize("case", B["matmul"], ids=[c["dtype"] for c in B["matmul"]])
def test_dot_matrix(case):
    name = case["dtype"]
    x = from_codes(name, ARR[case["key"] + "_x"])
    y = from_codes(name, ARR[case["key"] + "_y"])
    r = np.asarray(mldtypes.dot(x, y))
    assert r.dtype == np.dtype(T(name)) and r.shape == ARR[case["key"] + "_out"].shape
    assert_same(f"mldtypes.dot({name} {case['shape_x']} x {case['shape_y']})", None,
                ARR[case["key"] + "_out"], to_codes(name, r))


@pytest.mark.parametrize("case", B["dtype_cases"], ids=[c["dtype"] for c in B["dtype_cases"]])
def test_sum_mean_with_dtype(case):
    name = case["dtype"]
    a = from_codes(name, ARR[case["key"] + "_in"])
    s0 = np.asarray(mldtypes.sum(a, axis=0, dtype=np.float32))
    assert s0.dtype == np.float32 and s0.tolist() == case["sum_axis0"]
    s = np.asarray(mldtypes.sum(a, dtype=np.float32))
    assert s.dtype == np.float32 and float(s) == case["sum_all"]
    s64 = np.asarray(mldtypes.sum(a, dtype=np.float64))
    assert s64.dtype == np.float64 and float(s64) == case["sum_all"]
    m1 = np.asarray(mldtypes.mean(a, axis=1, dtype=np.float32))
    assert m1.dtype == np.float32
    assert m1.tolist() == np.array(case["mean_axis1"], dtype=np.float32).tolist()


@pytest.mark.parametrize("case", PACKS, ids=[f"{c['dtype']}-{c['n']}" for c in PACKS])
def test_pack(case):
    name = case["dtype"]
    a = from_codes(name, ARR[case["key"] + "_codes"])
    got = bytes(memoryview(mldtypes.pack(a)).cast("B"))
    want = ARR[case["key"] + "_packed"].tobytes()
    assert got == want, f"pack({name}, n={case['n']}): {got.hex()}, expected {want.hex()}"


@pytest.mark.parametrize("case", PACKS, ids=[f"{c['dtype']}-{c['n']}" for c in PACKS])
def test_unpack(case):
    name = case["dtype"]
    buf = ARR[case["key"] + "_packed"].tobytes()
    r = mldtypes.unpack(buf, T(name), (case["n"],))
    assert r.dtype == np.dtype(T(name)) and r.shape == (case["n"],)
    assert_same(f"unpack({name}, n={case['n']})", None, ARR[case["key"] + "_codes"],
                to_codes(name, r))


@pytest.mark.parametrize("name", ["float4_e2m1fn", "int4", "uint2", "float6_e3m2fn"])
def test_pack_round_trip_2d_and_high_bits(name):
    w = {"float4_e2m1fn": 4, "int4": 4, "uint2": 2, "float6_e3m2fn": 6}[name]
    codes = (np.arange(48, dtype=np.uint8) * 37) & ((1 << w) - 1)
    a = from_codes(name, codes).reshape(6, 8)
    packed = mldtypes.pack(a)
    assert len(bytes(memoryview(packed).cast("B"))) == 48 * w // 8
    back = mldtypes.unpack(packed, T(name), (6, 8))
    assert back.shape == (6, 8)
    assert np.array_equal(to_codes(name, back), codes.reshape(6, 8))
    # bits above the element width are ignored by pack
    dirty = from_codes(name, codes | np.uint8(0xFF ^ ((1 << w) - 1))).reshape(6, 8)
    assert bytes(memoryview(mldtypes.pack(dirty)).cast("B")) == bytes(
        memoryview(packed).cast("B"))


def test_pack_layout_examples():
    f4 = from_codes("float4_e2m1fn", [0x1, 0x2, 0x3, 0xF])
    assert bytes(memoryview(mldtypes.pack(f4)).cast("B")) == bytes([0x21, 0xF3])
    u2 = from_codes("uint2", [1, 2, 3, 0, 3])
    assert bytes(memoryview(mldtypes.pack(u2)).cast("B")) == bytes([0b00111001, 0b11])
    f6 = from_codes("float6_e2m3fn", [0x3F, 0x00, 0x15, 0x2A])
    assert bytes(memoryview(mldtypes.pack(f6)).cast("B")) == (
        (0x3F | 0x15 << 12 | 0x2A << 18).to_bytes(3, "little"))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float32"])
def test_pack_rejects_byte_types(name):
    a = np.zeros(4, dtype=T(name) if name != "float32" else np.float32)
    with pytest.raises((TypeError, ValueError)):
        mldtypes.pack(a)


def test_unpack_rejects_wrong_length():
    with pytest.raises(ValueError):
        mldtypes.unpack(b"\x00\x00\x00", mldtypes.int4, (4,))
    with pytest.raises(ValueError):
        mldtypes.unpack(b"\x00", mldtypes.float6_e2m3fn, (4,))


def test_sum_rejects_bad_axis():
    with pytest.raises((TypeError, ValueError, IndexError)):
        mldtypes.sum(np.zeros(3, dtype=mldtypes.bfloat16), axis=5)


BAD_CALLS = {
    "finfo_unknown_name": lambda: mldtypes.finfo("float8_nope"),
    "iinfo_unknown_name": lambda: mldtypes.iinfo("int3"),
    "unpack_negative_shape": lambda: mldtypes.unpack(b"\x00", mldtypes.int4, (-2,)),
    "unpack_not_a_buffer": lambda: mldtypes.unpack(12345, mldtypes.int4, (2,)),
    "unpack_unpackable_dtype": lambda: mldtypes.unpack(b"\x00\x00", mldtypes.bfloat16, (1,)),
    "unpack_unknown_dtype": lambda: mldtypes.unpack(b"\x00", "nope", (2,)),
    "pack_not_an_array": lambda: mldtypes.pack("abc"),
    "sum_not_an_array": lambda: mldtypes.sum("abc"),
    "dot_shape_mismatch": lambda: mldtypes.dot(np.zeros(3, mldtypes.bfloat16),
                                               np.zeros(4, mldtypes.bfloat16)),
    "mean_bad_dtype": lambda: mldtypes.mean(np.zeros(3, mldtypes.bfloat16), dtype="nope"),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_input_raises_typed_error(case):
    """Bad arguments raise TypeError / ValueError (never a Rust panic, which Python reports as
    pyo3_runtime.PanicException, a BaseException)."""
    with pytest.raises((TypeError, ValueError, IndexError)):
        BAD_CALLS[case]()


# ---------------------------------------------------------------------------
# Arguments: result dtypes NumPy refuses, integer results that would wrap, unpack's shape
# ---------------------------------------------------------------------------

NON_NUMBER_DTYPES = ["U3", "S3", "V4", "M8[s]", "m8[s]", "datetime64"]


@pytest.mark.parametrize("fn", ["sum", "mean"])
@pytest.mark.parametrize("dt", NON_NUMBER_DTYPES)
def test_reduction_refuses_what_numpy_refuses(fn, dt):
    # NumPy's own reduction refuses each of these result dtypes with a TypeError ...
    with pytest.raises(TypeError):
        getattr(np, fn)(np.ones(3, np.float32), dtype=dt)
    # ... and so does ours, naming the dtype in words, for real and complex formats
    for name in ["bfloat16", "float8_e4m3fn", "int4", "complex32"]:
        a = np.ones(3, dtype=T(name))
        with pytest.raises(TypeError) as e:
            getattr(mldtypes, fn)(a, dtype=dt)
        msg = str(e.value)
        assert f"mldtypes.{fn}" in msg and repr(np.dtype(dt)) in msg, msg
        assert "number type" in msg, msg


def test_dot_has_no_dtype_argument():
    x = np.ones(3, dtype=mldtypes.bfloat16)
    with pytest.raises(TypeError):
        mldtypes.dot(x, x, dtype="U3")


def test_integer_results_that_would_wrap_are_refused():
    a = np.array([100, 100, 100], dtype=mldtypes.bfloat16)
    # NumPy's int8 accumulator wraps silently: 300 becomes 44
    assert np.sum(a.astype(np.float32), dtype=np.int8) == 44
    with pytest.raises(ValueError, match=r"300(\.0)? is out of bounds for dtype\('int8'\) "
                                         r"\(-128 to 127\)"):
        mldtypes.sum(a, dtype=np.int8)
    r = mldtypes.sum(a, dtype=np.int16)
    assert r.dtype == np.int16 and int(r) == 300
    # the mean fits: 100
    m = mldtypes.mean(a, dtype=np.int8)
    assert m.dtype == np.int8 and int(m) == 100
    # per-lane check: axis=0 of [[100, 1], [100, 1]] is [200, 2], 200 overflows int8 only
    b = np.array([[100, 1], [100, 1]], dtype=mldtypes.bfloat16)
    with pytest.raises(ValueError, match="out of bounds"):
        mldtypes.sum(b, axis=0, dtype=np.int8)
    assert mldtypes.sum(b, axis=0, dtype=np.uint8).tolist() == [200, 2]
    # a negative sum into an unsigned dtype
    with pytest.raises(ValueError, match=r"-3(\.0)? is out of bounds for dtype\('uint8'\)"):
        mldtypes.sum(np.array([-1, -2], dtype=mldtypes.float8_e4m3fn), dtype=np.uint8)
    # NaN and inf have no integer value
    with pytest.raises(ValueError, match="nan cannot be converted"):
        mldtypes.sum(np.array([1, np.nan], dtype=mldtypes.bfloat16), dtype=np.int32)
    with pytest.raises(ValueError, match="inf cannot be converted"):
        mldtypes.mean(np.array([1, np.inf], dtype=mldtypes.bfloat16), dtype=np.int64)


def test_sub_byte_integer_sums_that_would_wrap_are_refused():
    # the default result dtype of an int4 array is int4: 7 + 7 does not fit
    a = np.array([7, 7], dtype=mldtypes.int4)
    with pytest.raises(ValueError, match=r"14(\.0)? is out of bounds for dtype\(int4\) "
                                         r"\(-8 to 7\)"):
        mldtypes.sum(a)
    r = mldtypes.sum(a, dtype=np.int8)
    assert r.dtype == np.int8 and int(r) == 14
    r = mldtypes.sum(np.array([3, 4], dtype=mldtypes.int4))
    assert r.dtype == mldtypes.int4 and int(r) == 7
    # a sub-byte integer as the result dtype of a float array
    with pytest.raises(ValueError, match=r"dtype\(uint2\) \(0 to 3\)"):
        mldtypes.sum(np.array([2, 2], dtype=mldtypes.bfloat16), dtype=mldtypes.uint2)
    r = mldtypes.sum(np.array([1, 2], dtype=mldtypes.bfloat16), dtype=mldtypes.uint2)
    assert r.dtype == mldtypes.uint2 and int(r) == 3


def test_complex_sums_are_rounded_once_and_checked():
    a = np.array([100 + 1j, 100 + 2j, 100 - 3j], dtype=mldtypes.complex32)
    with pytest.warns(np.exceptions.ComplexWarning):
        r = mldtypes.sum(a, dtype=np.int16)
    assert r.dtype == np.int16 and int(r) == 300
    with pytest.raises(ValueError, match="out of bounds for dtype\\('int8'\\)"):
        mldtypes.sum(a, dtype=np.int8)
    # accumulated in complex64, converted once: 2049 is not a float16, 2048 + 1 + ... is
    b = np.array([2048, 1, 1], dtype=mldtypes.complex32)
    r = mldtypes.sum(b, dtype=np.complex64)
    assert r.dtype == np.complex64 and r == 2050
    r = mldtypes.sum(b)
    assert r.dtype == mldtypes.complex32 and complex(r) == 2050


def test_unpack_reads_integer_like_shapes():
    buf = bytes([0x21, 0xF3])  # float4_e2m1fn codes 1, 2, 3, 0xF
    want = [0.5, 1.0, 1.5, -6.0]
    for shape in [4, np.int64(4), (4,), [4], (np.uint8(4),)]:
        r = mldtypes.unpack(buf, mldtypes.float4_e2m1fn, shape)
        assert r.shape == (4,) and r.astype(np.float32).tolist() == want, shape
    r = mldtypes.unpack(buf, mldtypes.float4_e2m1fn, [np.int8(2), 2])
    assert r.shape == (2, 2) and r.astype(np.float32).tolist() == [want[:2], want[2:]]


UNPACK_SHAPE_ERRORS = [
    ("ab", TypeError, "shape must be an integer or a tuple of integers, not str"),
    (2.0, TypeError, "shape must be an integer or a tuple of integers, not float"),
    (None, TypeError, "shape must be an integer or a tuple of integers, not NoneType"),
    ((2.5,), TypeError, r"shape\[0\] must be an integer, not float \(2.5\)"),
    ((2, "2"), TypeError, r"shape\[1\] must be an integer, not str \('2'\)"),
    ((-2,), ValueError, r"shape\[0\] = -2 is negative"),
    (-4, ValueError, r"shape = -4 is negative"),
    ((10**30,), ValueError, rf"shape\[0\] = {10**30} is out of range"),
    (10**40, ValueError, rf"shape = {10**40} is out of range"),
    ((2**40, 2**40), ValueError, "has more elements than an array can hold"),
]


@pytest.mark.parametrize("shape,exc,message", UNPACK_SHAPE_ERRORS,
                         ids=[repr(c[0])[:20] for c in UNPACK_SHAPE_ERRORS])
def test_unpack_says_what_is_wrong_with_the_shape(shape, exc, message):
    with pytest.raises(exc, match=message) as e:
        mldtypes.unpack(b"\x21\xf3", mldtypes.float4_e2m1fn, shape)
    assert "mldtypes.unpack" in str(e.value)
    assert "extract" not in str(e.value)


def test_bool_result_dtype_means_what_it_means_to_numpy():
    # NumPy converts every element to bool (nonzero, NaN included), then reduces with logical
    # or: 1 + -1 is True; a purely imaginary value is nonzero
    for name in ["bfloat16", "float8_e4m3fn", "complex32", "bcomplex32"]:
        last = 2j if name in COMPLEX else 0.5
        v = np.array([[1, -1, 0], [0, 0, 0], [np.nan, 0, 0], [0, last, 0]])
        a = v.astype(T(name))
        for fn in ["sum", "mean"]:
            want = getattr(np, fn)(v, axis=1, dtype=bool)
            assert want.tolist() == [True, False, True, True]
            got = getattr(mldtypes, fn)(a, axis=1, dtype=bool)
            assert got.dtype == np.bool_ and got.tolist() == want.tolist(), (name, fn)
            assert getattr(mldtypes, fn)(a[:2], dtype=bool) == np.True_
            assert getattr(mldtypes, fn)(a[1], dtype=bool) == np.False_
