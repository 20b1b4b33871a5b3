"""``mldtypes.safetensors``: save_file / load_file / safe_open over the library's safetensors
reader and writer.

Every safetensors dtype round-trips (the bit-packed F4 / F6 tags included); headers are read
back as JSON and checked against the format (tags, shapes, offsets, alignment); loading is a
view of the mapped file where aligned; errors name the tensor. A file written by PyTorch 2.15's
``safetensors.torch.save_file`` (vectors/safetensors/, tools/gen_safetensors_vectors.py) loads
bit for bit.
"""

import json
import os
import struct

import numpy as np
import pytest

import mldtypes
from conftest import BITS, VECTORS, T, to_codes
from mldtypes import safetensors as st

# each safetensors tag and the dtype it stores
TAGS = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "U16": "uint16", "I16": "int16",
    "U32": "uint32", "I32": "int32", "U64": "uint64", "I64": "int64", "F16": "float16",
    "F32": "float32", "F64": "float64", "C64": "complex64", "BF16": "bfloat16",
    "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz", "F8_E8M0": "float8_e8m0fnu", "F4": "float4_e2m1fn",
    "F6_E2M3": "float6_e2m3fn", "F6_E3M2": "float6_e3m2fn",
}
PACKED = {"F4": 2, "F6_E2M3": 4, "F6_E3M2": 4}  # elements per whole group of bytes
NO_TAG = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "int1", "int2", "int4", "uint1",
          "uint2", "uint4", "complex32", "bcomplex32", "complex128"]


def sample(name, shape):
    n = int(np.prod(shape, dtype=np.int64))
    dt = np.dtype(T(name))
    if name in BITS and BITS[name] < 8:
        return (np.arange(n, dtype=np.uint8) % (1 << BITS[name])).view(dt).reshape(shape)
    raw = np.frombuffer(np.random.default_rng(n).bytes(n * dt.itemsize), dtype=np.uint8)
    if name == "bool":
        raw = raw & 1
    return raw.view(dt).reshape(shape).copy()


def codes(a):
    name = str(a.dtype)
    if name in BITS:
        return to_codes(name, a)
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}" if a.dtype.itemsize <= 8
                                        else "u8")


def header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return n, json.loads(f.read(n))


@pytest.mark.parametrize("tag", TAGS)
def test_every_tag_round_trips(tmp_path, tag):
    name = TAGS[tag]
    shapes = [(0,), (8,), (2, 4), (2, 0, 3)] + ([] if tag in PACKED else [(), (3,), (5, 1)])
    tensors = {f"t{i}": sample(name, s) for i, s in enumerate(shapes)}
    p = tmp_path / "a.safetensors"
    st.save_file(tensors, p, metadata={"format": "np"})
    n, h = header(p)
    assert n % 8 == 0 and h["__metadata__"] == {"format": "np"}
    for k, a in tensors.items():
        assert h[k]["dtype"] == tag and h[k]["shape"] == list(a.shape)
        begin, end = h[k]["data_offsets"]
        bits = a.size * (BITS.get(name, 8 * a.dtype.itemsize))
        assert end - begin == bits // 8 and begin % (np.dtype(T(name)).alignment) == 0
    back = st.load_file(p)
    assert list(back) == sorted(tensors)
    for k, a in tensors.items():
        b = back[k]
        assert b.dtype == a.dtype and b.shape == a.shape, k
        np.testing.assert_array_equal(codes(b), codes(a))


def test_file_bytes(tmp_path):
    """The data is the elements' little-endian bytes; F4 packs two per byte, element 0 in the
    low nibble (PyTorch's float4_e2m1fn_x2); F6 four per three bytes."""
    p = tmp_path / "b.safetensors"
    f4 = np.array([1, 2, 3, 15], np.uint8).view(mldtypes.float4_e2m1fn)
    f6 = np.array([1, 2, 3, 63], np.uint8).view(mldtypes.float6_e2m3fn)
    bf = np.array([1.0, -2.0], np.float32).astype(mldtypes.bfloat16)
    st.save_file({"f4": f4, "f6": f6, "bf": bf}, p)
    n, h = header(p)
    data = p.read_bytes()[8 + n:]
    part = lambda k: data[h[k]["data_offsets"][0]:h[k]["data_offsets"][1]]  # noqa: E731
    assert part("f4") == bytes([0x21, 0xF3])
    v = 1 | (2 << 6) | (3 << 12) | (63 << 18)
    assert part("f6") == v.to_bytes(3, "little")
    assert part("bf") == bytes([0x80, 0x3F, 0x00, 0xC0])
    assert "__metadata__" not in h
    with st.safe_open(p) as f:
        assert f.metadata() is None
        # as the safetensors crate lays them out: tags in descending order, then names
        assert f.offset_keys() == ["bf", "f6", "f4"]


def test_zero_copy_views(tmp_path):
    p = tmp_path / "z.safetensors"
    a = np.arange(12, dtype=np.float32).reshape(3, 4).astype(mldtypes.bfloat16)
    b = np.arange(5, dtype=np.int64)
    st.save_file({"a": a, "b": b}, p)
    before = p.read_bytes()
    with st.safe_open(p, framework="np") as f:
        x, y = f.get_tensor("a"), f.get_tensor("b")
    # views of one mapping, kept alive after close
    assert type(x.base).__name__ == "_MappedSafetensors" and x.base is not y.base
    assert x.flags.writeable and x.flags.aligned and x.flags.c_contiguous
    x[0, 0] = 100
    assert x[0, 0] == 100 and p.read_bytes() == before  # private mapping: the file is unchanged
    np.testing.assert_array_equal(y, b)


def test_unaligned_tensor_is_copied(tmp_path):
    """A file whose F32 tensor starts at an odd offset (valid safetensors): copied, values
    exact."""
    hdr = json.dumps({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},
                      "b": {"dtype": "F32", "shape": [2], "data_offsets": [1, 9]}}).encode()
    hdr += b" " * (-len(hdr) % 8)
    p = tmp_path / "u.safetensors"
    p.write_bytes(struct.pack("<Q", len(hdr)) + hdr + b"\x07" +
                  np.array([1.5, -2.0], "<f4").tobytes())
    d = st.load_file(p)
    assert d["a"].tolist() == [7]
    np.testing.assert_array_equal(d["b"], [1.5, -2.0])
    assert d["b"].flags.aligned and d["b"].base is None or d["b"].base.dtype == d["b"].dtype


def test_layouts_and_byte_orders(tmp_path):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = {"f": np.asfortranarray(a), "s": a[::2, ::-3], "be": a.astype(">f4"),
         "bf": a.astype(mldtypes.bfloat16)[:, ::2], "scalar": np.float64(2.5),
         "list": [1, 2, 3]}
    p = tmp_path / "l.safetensors"
    st.save_file(t, p)
    d = st.load_file(p)
    for k, v in t.items():
        v = np.asarray(v)
        np.testing.assert_array_equal(d[k].astype(np.float64), v.astype(np.float64), err_msg=k)
    assert d["be"].dtype == np.dtype("<f4") and d["scalar"].shape == ()


def test_safe_open(tmp_path):
    p = tmp_path / "o.safetensors"
    w = np.arange(32, dtype=np.float32).reshape(4, 8).astype(mldtypes.float8_e4m3fn)
    st.save_file({"w": w, "b": np.zeros(3, np.float16)}, p, metadata={"z": "1", "a": "2"})
    with st.safe_open(p, framework="np", device="cpu") as f:
        assert f.keys() == ["b", "w"]
        assert list(f.metadata()) == ["z", "a"]  # the file's order
        s = f.get_slice("w")
        assert s.get_shape() == [4, 8] and s.get_dtype() == "F8_E4M3"
        np.testing.assert_array_equal(codes(s[1:3, ::2]), codes(w[1:3, ::2]))
        with pytest.raises(KeyError, match='no tensor named "x"'):
            f.get_tensor("x")
        assert "2 tensors" in repr(f)
    with pytest.raises(ValueError, match="closed"):
        f.keys()
    with pytest.raises(ValueError, match="framework"):
        st.safe_open(p, framework="pt")
    with pytest.raises(ValueError, match="CPU"):
        st.safe_open(p, device="cuda")


@pytest.mark.parametrize("name", NO_TAG)
def test_types_without_a_tag(tmp_path, name):
    p = tmp_path / "n.safetensors"
    a = np.zeros(4, dtype=T(name) if name != "complex128" else np.complex128)
    with pytest.raises(TypeError, match=f'tensor "bad": safetensors has no dtype for {name}'):
        st.save_file({"ok": np.zeros(2), "bad": a}, p)
    assert not p.exists() and os.listdir(tmp_path) == []


def test_errors(tmp_path):
    p = tmp_path / "e.safetensors"
    e4 = np.zeros(4, mldtypes.float8_e4m3)
    with pytest.raises(TypeError, match="F8_E4M3 is float8_e4m3fn"):
        st.save_file({"w": e4}, p)
    with pytest.raises(TypeError, match="no dtype for"):
        st.save_file({"w": np.array(["a"])}, p)
    with pytest.raises(ValueError, match="even number"):
        st.save_file({"w": np.zeros(3, mldtypes.float4_e2m1fn)}, p)
    with pytest.raises(ValueError, match="multiple of 4"):
        st.save_file({"w": np.zeros(6, mldtypes.float6_e3m2fn)}, p)
    with pytest.raises(TypeError, match="names must be str"):
        st.save_file({1: np.zeros(2)}, p)
    with pytest.raises(TypeError, match="metadata values must be str"):
        st.save_file({"w": np.zeros(2)}, p, metadata={"k": 1})
    assert os.listdir(tmp_path) == []
    with pytest.raises(FileNotFoundError):
        st.save_file({"w": np.zeros(2)}, tmp_path / "no" / "x.safetensors")
    with pytest.raises(FileNotFoundError):
        st.load_file(tmp_path / "missing.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
    with pytest.raises(mldtypes.CheckpointError, match="bad header"):
        st.load_file(bad)
    target = tmp_path / "target"
    target.write_bytes(b"keep")
    link = tmp_path / "link.safetensors"
    link.symlink_to(target)
    with pytest.raises(FileExistsError, match="symbolic link"):
        st.save_file({"w": np.zeros(2)}, link)
    assert target.read_bytes() == b"keep" and link.is_symlink()


def test_replaces_a_file_in_use(tmp_path):
    """Saving over a file whose tensors are in use replaces it (renamed into place); the views
    keep the old contents."""
    p = tmp_path / "r.safetensors"
    st.save_file({"w": np.ones(4, np.float32)}, p)
    old = st.load_file(p)["w"]
    st.save_file({"w": np.full(4, 2.0, np.float32)}, p)
    assert st.load_file(p)["w"].tolist() == [2.0] * 4 and old.tolist() == [1.0] * 4


# ------------------------------------------------------------ written by torch's safetensors

TORCH_DIR = os.path.join(VECTORS, "safetensors")


def test_file_written_by_torch():
    """A file written by safetensors 0.8.0's torch.save_file from PyTorch 2.15 tensors of every
    dtype both have (tools/gen_safetensors_vectors.py): every tensor loads with its dtype and
    the bytes torch wrote (torch's float4_e2m1fn_x2 as unpacked float4_e2m1fn, two per byte)."""
    with open(os.path.join(TORCH_DIR, "torch.json")) as fh:
        want = json.load(fh)
    d = st.load_file(os.path.join(TORCH_DIR, "torch.safetensors"))
    assert sorted(d) == sorted(want)
    for k, w in want.items():
        a = d[k]
        assert str(a.dtype) == w["dtype"] and list(a.shape) == w["shape"], k
        np.testing.assert_array_equal(codes(a).ravel(), np.array(w["codes"], dtype=np.uint64),
                                      err_msg=k)
