"""``mldtypes.save`` / ``load`` / ``savez`` / ``savez_compressed``: ``.npy`` / ``.npz`` files that
keep every mldtypes dtype, read by plain NumPy as raw bytes; recovery of files plain
``numpy.save`` wrote from arrays of our types (``'<f1'``, ``'|V2'``, ...).

Expected bytes come from the arrays' codes (little-endian), expected headers from NumPy's own
``numpy.lib.format`` reader.
"""

import io
import warnings

import numpy as np
import pytest

import mldtypes
from conftest import BITS, COMPLEX, OURS, T, from_codes, to_codes


def sample(name, shape=(7,)):
    """Every code of the type (cycled) in `shape`; complex/bfloat16: a spread of codes."""
    n = int(np.prod(shape, dtype=np.int64))
    if name in COMPLEX:
        raw = (np.arange(n, dtype=np.uint64) * 2654435761 + 12345) & 0xFFFFFFFF
    elif name == "bfloat16":
        raw = (np.arange(n, dtype=np.uint64) * 40503 + 7) & 0xFFFF
    else:
        raw = np.arange(n, dtype=np.uint64) % (1 << BITS[name])
    a = from_codes(name, raw)
    if name.startswith("int"):  # sub-byte ints as NumPy writes them (sign-extended)
        a = raw.astype(np.int64).astype(np.float64)
        a = np.where(a >= (1 << (BITS[name] - 1)), a - (1 << BITS[name]), a).astype(T(name))
    return a.reshape(shape)


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    name = str(a.dtype)
    np.testing.assert_array_equal(to_codes(name, a), to_codes(name, b))


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3, 4)])
def test_round_trip(tmp_path, name, shape):
    a = sample(name, shape)
    p = tmp_path / "a.npy"
    mldtypes.save(p, a)
    b = mldtypes.load(p)
    same(a, b)
    m = mldtypes.load(p, mmap_mode="r")
    same(a, m)
    assert isinstance(m, np.memmap) or isinstance(m.base, np.memmap)


@pytest.mark.parametrize("name", OURS)
def test_plain_numpy_reads_raw_bytes(tmp_path, name):
    """The file is an ordinary .npy: NumPy reads it without error, as raw bytes in a one-field
    structured array named after the type, never as numbers; the bytes are the codes,
    little-endian."""
    a = sample(name, (3, 5))
    p = tmp_path / "a.npy"
    mldtypes.save(p, a)
    with open(p, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0) else
                np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read(f)
    size = np.dtype(T(name)).itemsize
    assert (shape, fortran) == ((3, 5), False)
    assert dtype == np.dtype([(f"mldtypes.{name}", f"V{size}")])
    plain = np.load(p)
    assert plain.dtype.kind == "V" and plain.dtype.names == (f"mldtypes.{name}",)
    codes = to_codes(name, a).astype(f"<u{size}")
    assert plain.tobytes() == codes.tobytes()


@pytest.mark.parametrize("name", ["bfloat16", "complex32", "bcomplex32", "float8_e4m3fn",
                                  "int4"])
def test_layouts_and_byte_orders(tmp_path, name):
    a = sample(name, (4, 6))
    cases = {"fortran": np.asfortranarray(a), "strided": a[::2, ::-3], "transposed": a.T}
    if np.dtype(T(name)).itemsize > 1:
        cases["big-endian"] = a.byteswap().view(a.dtype.newbyteorder())
    for label, x in cases.items():
        p = tmp_path / f"{label}.npy"
        mldtypes.save(p, x)
        b = mldtypes.load(p)
        assert b.dtype == np.dtype(T(name)), label
        np.testing.assert_array_equal(to_codes(name, b), to_codes(name, x.astype(T(name))),
                                      err_msg=label)
    # the big-endian array's file holds the same little-endian bytes as the native one's
    if "big-endian" in cases:
        assert (tmp_path / "big-endian.npy").read_bytes() == _saved_bytes(a)


def _saved_bytes(a):
    buf = io.BytesIO()
    mldtypes.save(buf, a)
    return buf.getvalue()


def test_file_objects_and_other_dtypes(tmp_path):
    a = sample("float8_e5m2", (5,))
    buf = io.BytesIO()
    mldtypes.save(buf, a)
    buf.seek(0)
    same(a, mldtypes.load(buf))
    # anything else is written and read exactly as NumPy writes and reads it
    x = np.arange(6, dtype=">f4").reshape(2, 3)
    mldtypes.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", x)
    assert (tmp_path / "x.npy").read_bytes() == (tmp_path / "y.npy").read_bytes()
    y = mldtypes.load(tmp_path / "x.npy")
    assert y.dtype == x.dtype and np.array_equal(x, y)
    mldtypes.save(tmp_path / "s", np.float16(1.5))  # ".npy" appended, as NumPy does
    assert mldtypes.load(tmp_path / "s.npy") == np.float16(1.5)


@pytest.mark.parametrize("compressed", [False, True])
def test_savez(tmp_path, compressed):
    arrays = {n: sample(n, (3, 2)) for n in OURS}
    plain = np.arange(4.0)
    f = tmp_path / "a.npz"
    (mldtypes.savez_compressed if compressed else mldtypes.savez)(f, plain, **arrays)
    with mldtypes.load(f) as z:
        assert sorted(z.files) == sorted(["arr_0", *arrays])
        assert len(z) == len(arrays) + 1 and "bfloat16" in z
        np.testing.assert_array_equal(z["arr_0"], plain)
        for n, a in arrays.items():
            same(a, z[n])
    with np.load(f) as z:  # plain NumPy: raw bytes, no error
        assert z["float8_e5m2"].dtype.names == ("mldtypes.float8_e5m2",)


# ------------------------------------------------------------- files written by numpy.save

# What plain numpy.save writes for our types: the dtype's type string, which names no dtype
# NumPy knows ('<f1': float8_e5m2, kind 'f') or raw bytes ('|V1', '|V2', '|V4').
@pytest.mark.parametrize("name", OURS)
def test_recover_numpy_save(tmp_path, name):
    a = sample(name, (2, 3))
    p = tmp_path / "plain.npy"
    np.save(p, a)
    descr = np.dtype(T(name)).str
    try:
        np.load(p)
        refused = False
    except ValueError as e:
        assert "descr is not a valid dtype descriptor" in str(e)
        refused = True
    assert refused == (descr[1] != "V"), descr
    with pytest.raises(ValueError) as e:
        mldtypes.load(p)
    text = str(e.value)
    assert "dtype=" in text and descr[1:] in text and name in text and "mldtypes.save" in text
    for mmap in (None, "r"):
        same(a, mldtypes.load(p, dtype=T(name), mmap_mode=mmap))
    with open(p, "rb") as fh:
        same(a, mldtypes.load(fh, dtype=T(name)))


def test_recover_message_names_the_type(tmp_path):
    np.save(tmp_path / "e5m2.npy", sample("float8_e5m2"))
    with pytest.raises(ValueError, match=r"dtype=mldtypes\.float8_e5m2"):
        mldtypes.load(tmp_path / "e5m2.npy")
    np.save(tmp_path / "bf16.npy", sample("bfloat16"))
    with pytest.raises(ValueError, match=r"dtype=mldtypes\.bfloat16"):
        mldtypes.load(tmp_path / "bf16.npy")


def test_recover_npz(tmp_path):
    f = tmp_path / "plain.npz"
    a, b = sample("float8_e5m2"), sample("bfloat16")
    np.savez(f, a=a, b=b, c=np.arange(3))
    with mldtypes.load(f) as z:
        np.testing.assert_array_equal(z["c"], np.arange(3))
        for key in ("a", "b"):
            with pytest.raises(ValueError, match="dtype="):
                z[key]
    with mldtypes.load(f, dtype={"a": mldtypes.float8_e5m2, "b": mldtypes.bfloat16}) as z:
        same(a, z["a"])
        same(b, z["b"])
        np.testing.assert_array_equal(z["c"], np.arange(3))


def test_dtype_errors(tmp_path):
    a = sample("bfloat16")
    mldtypes.save(tmp_path / "ours.npy", a)
    with pytest.raises(ValueError, match="holds mldtypes.bfloat16 values"):
        mldtypes.load(tmp_path / "ours.npy", dtype=mldtypes.float8_e4m3fn)
    same(a, mldtypes.load(tmp_path / "ours.npy", dtype=mldtypes.bfloat16))
    np.save(tmp_path / "v2.npy", a)
    with pytest.raises(ValueError, match="2-byte elements"):
        mldtypes.load(tmp_path / "v2.npy", dtype=mldtypes.float8_e4m3fn)
    np.save(tmp_path / "f4.npy", np.arange(3, dtype=np.float32))
    with pytest.raises(ValueError, match="does not convert"):
        mldtypes.load(tmp_path / "f4.npy", dtype=mldtypes.complex32)
    # unsigned codes of the same size are reinterpreted
    codes = np.array([0x38, 0x40, 0xC4], dtype=np.uint8)
    np.save(tmp_path / "u8.npy", codes)
    got = mldtypes.load(tmp_path / "u8.npy", dtype=mldtypes.float8_e4m3fn)
    np.testing.assert_array_equal(got.astype(np.float32), [1, 2, -3])
    # a structured array of ours with another field name is an ordinary structured array
    s = np.zeros(2, dtype=[("x", "V2")])
    np.save(tmp_path / "s.npy", s)
    assert mldtypes.load(tmp_path / "s.npy").dtype == s.dtype


def test_no_warnings(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in OURS:
            mldtypes.save(tmp_path / f"{n}.npy", sample(n))
            mldtypes.load(tmp_path / f"{n}.npy")
