"""DLPack: ``mldtypes.to_dlpack`` / ``mldtypes.from_dlpack`` round trips without any framework.

Our producer and consumer for every dtype, shape, stride and offset; foreign capsules built
with ctypes (unversioned and versioned, byte_offset, NULL strides, unknown codes, deleter
counts); NumPy's producer/consumer for builtin dtypes; device and dtype errors; lifetimes.
"""

import ctypes
import gc
import os
import resource
import time
import weakref

import numpy as np
import pytest

import mldtypes
import npversions
from mldtypes import _core

from conftest import BITS, OURS

EXPORTABLE = [n for n in OURS if n != "bcomplex32"]
SUBBYTE = [n for n in EXPORTABLE if BITS[n] < 8]
PACKABLE = [n for n in SUBBYTE if n not in ("int1", "uint1")]
WIDE = [n for n in EXPORTABLE if BITS[n] >= 8]

# DLPack 1.1 type codes (dlpack.h): (code, bits per value).
CODES = {
    "bfloat16": (4, 16), "float8_e3m4": (7, 8), "float8_e4m3": (8, 8),
    "float8_e4m3b11fnuz": (9, 8), "float8_e4m3fn": (10, 8), "float8_e4m3fnuz": (11, 8),
    "float8_e5m2": (12, 8), "float8_e5m2fnuz": (13, 8), "float8_e8m0fnu": (14, 8),
    "float6_e2m3fn": (15, 6), "float6_e3m2fn": (16, 6), "float4_e2m1fn": (17, 4),
    "int1": (0, 1), "uint1": (1, 1), "int2": (0, 2), "uint2": (1, 2), "int4": (0, 4),
    "uint4": (1, 4), "complex32": (5, 32),
}


def sample(name, shape):
    """An array of every code the dtype has (cycled), in `shape`."""
    dt = np.dtype(getattr(mldtypes, name))
    n = int(np.prod(shape, dtype=np.int64))
    if dt.itemsize == 1:
        mask = (1 << BITS[name]) - 1
        raw = (np.arange(n, dtype=np.uint8) * 37 + 3) & mask
        if name.startswith("int"):  # sign-extended, as NumPy casts write them
            raw = raw.astype(np.int8)
            raw = np.where(raw >= (1 << (BITS[name] - 1)), raw - (1 << BITS[name]), raw)
            raw = raw.astype(np.int8).view(np.uint8)
        return raw.view(dt).reshape(shape)
    raw = (np.arange(n, dtype=np.uint32) * 40503 + 7).astype(f"u{dt.itemsize}")
    return raw.view(dt).reshape(shape)


def codes(a):
    """The bytes of `a` as unsigned integers, same shape."""
    return a.view(f"u{a.dtype.itemsize}")


def counters():
    gc.collect()
    return _core._dlpack_counters()


# --------------------------------------------------------------- our producer → our consumer

SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 4), (1, 5, 1)]


@pytest.mark.parametrize("name", EXPORTABLE)
@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip_zero_copy(name, shape):
    a = sample(name, shape)
    b = mldtypes.from_dlpack(mldtypes.to_dlpack(a))
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(codes(b), codes(a))
    if a.size:
        assert np.shares_memory(a, b)
        assert b.ctypes.data == a.ctypes.data


@pytest.mark.parametrize("name", EXPORTABLE)
def test_strides_and_offsets(name):
    base = sample(name, (6, 8))
    views = [base[::2], base[:, ::3], base.T, base[1:, 2:], base[::-1, ::-2], base[3:4, 5:7],
             base[None, :, 1]]
    for v in views:
        b = mldtypes.from_dlpack(mldtypes.to_dlpack(v))
        assert b.shape == v.shape and b.strides == v.strides
        np.testing.assert_array_equal(codes(b), codes(v))
        assert b.ctypes.data == v.ctypes.data


@pytest.mark.parametrize("name", WIDE)
def test_unversioned_capsule(name):
    a = sample(name, (4, 3))
    cap = mldtypes.to_dlpack(a).__dlpack__()
    assert "dltensor" in repr(cap) and "versioned" not in repr(cap)

    class Producer:
        def __dlpack__(self, **kw):
            return cap

    b = mldtypes.from_dlpack(Producer())
    np.testing.assert_array_equal(codes(b), codes(a))
    assert np.shares_memory(a, b)
    assert "used_dltensor" in repr(cap)


def test_versioned_capsule_name_and_reuse():
    a = sample("bfloat16", (3,))
    cap = mldtypes.to_dlpack(a).__dlpack__(max_version=(1, 3))
    assert '"dltensor_versioned"' in repr(cap)

    class Producer:
        def __dlpack__(self, **kw):
            return cap

    b = mldtypes.from_dlpack(Producer())
    assert '"used_dltensor_versioned"' in repr(cap)
    np.testing.assert_array_equal(codes(b), codes(a))
    with pytest.raises(BufferError, match="used_dltensor_versioned"):
        mldtypes.from_dlpack(Producer())


def test_writes_are_shared_both_ways():
    a = np.zeros((2, 3), mldtypes.float8_e4m3fn)
    b = mldtypes.from_dlpack(mldtypes.to_dlpack(a))
    b[1, 2] = 1.5
    assert float(a[1, 2]) == 1.5
    a[0, 0] = -2
    assert float(b[0, 0]) == -2.0


def test_read_only():
    a = sample("bfloat16", (5,))
    a.flags.writeable = False
    b = mldtypes.from_dlpack(mldtypes.to_dlpack(a))
    assert not b.flags.writeable
    with pytest.raises(ValueError):
        b[0] = 1
    # A legacy capsule cannot say read-only: refused, unless a copy is exported.
    with pytest.raises(BufferError, match="read-only"):
        mldtypes.to_dlpack(a).__dlpack__()
    cap = mldtypes.to_dlpack(a).__dlpack__(copy=True)
    assert "dltensor" in repr(cap)
    w = mldtypes.from_dlpack(mldtypes.to_dlpack(np.ones(2, mldtypes.bfloat16)))
    assert w.flags.writeable


def test_copy_modes():
    a = sample("float8_e5m2", (4, 4))
    v = mldtypes.from_dlpack(mldtypes.to_dlpack(a), copy=False)
    assert np.shares_memory(a, v)
    c = mldtypes.from_dlpack(mldtypes.to_dlpack(a), copy=True)
    assert not np.shares_memory(a, c) and c.flags.writeable
    np.testing.assert_array_equal(codes(c), codes(a))
    # copy=True on the producer side: the exported memory is a copy.
    cap = mldtypes.to_dlpack(a).__dlpack__(max_version=(1, 3), copy=True)

    class Producer:
        def __dlpack__(self, **kw):
            return cap

    p = mldtypes.from_dlpack(Producer())
    assert not np.shares_memory(a, p)
    np.testing.assert_array_equal(codes(p), codes(a))


# ------------------------------------------------------------------- sub-byte types

@pytest.mark.parametrize("name", SUBBYTE)
def test_subbyte_padded_needs_dlpack_1_3(name):
    a = sample(name, (3, 5))
    e = mldtypes.to_dlpack(a)
    for mv in (None, (0, 8), (1, 0), (1, 2)):
        with pytest.raises(BufferError, match="IS_SUBBYTE_TYPE_PADDED"):
            e.__dlpack__(max_version=mv)
    b = mldtypes.from_dlpack(e)
    np.testing.assert_array_equal(codes(b), codes(a))
    assert np.shares_memory(a, b)


@pytest.mark.parametrize("name", PACKABLE)
@pytest.mark.parametrize("shape", [(8,), (3, 5), (2, 2, 6), (0,)])
def test_packed_export(name, shape):
    a = sample(name, shape)
    e = mldtypes.to_dlpack(a, packed=True)
    for mv in (None, (1, 3)):
        raw = mldtypes.from_dlpack(_Once(e, mv), packed=True)
        assert raw.dtype == np.uint8
        np.testing.assert_array_equal(raw, mldtypes.pack(a))
    # Default: unpacked into a new array of the dtype.
    u = mldtypes.from_dlpack(e)
    assert u.dtype == a.dtype and u.shape == a.shape and not np.shares_memory(u, a)
    mask = (1 << BITS[name]) - 1
    np.testing.assert_array_equal(codes(u) & mask, codes(a) & mask)
    np.testing.assert_array_equal(u.astype(np.float32), a.astype(np.float32))
    with pytest.raises(BufferError, match="packed=True"):
        mldtypes.from_dlpack(e, copy=False)
    with pytest.raises(BufferError, match="packed copy"):
        e.__dlpack__(max_version=(1, 3), copy=False)


@pytest.mark.parametrize("name", ["float4_e2m1fn", "int4", "uint4"])
def test_packed_lanes_2(name):
    a = sample(name, (3, 6))
    e = mldtypes.to_dlpack(a, packed=True, lanes=2)
    raw = mldtypes.from_dlpack(e, packed=True)
    assert raw.shape == (3, 3) and raw.dtype == np.uint8
    np.testing.assert_array_equal(raw.ravel(), mldtypes.pack(a))
    u = mldtypes.from_dlpack(e)
    assert u.shape == (3, 6)
    np.testing.assert_array_equal(u.astype(np.float32), a.astype(np.float32))
    with pytest.raises(ValueError, match="divisible by 2"):
        mldtypes.to_dlpack(sample(name, (3, 5)), packed=True, lanes=2).__dlpack__()
    with pytest.raises(ValueError, match="lanes x bits"):
        mldtypes.to_dlpack(a, packed=True, lanes=4).__dlpack__()
    with pytest.raises(ValueError, match="packed=True"):
        mldtypes.to_dlpack(a, lanes=2)


def test_packed_refusals():
    with pytest.raises(TypeError, match="int1 has no packed layout"):
        mldtypes.to_dlpack(np.zeros(4, mldtypes.int1), packed=True).__dlpack__()
    with pytest.raises(ValueError, match="not mldtypes.bfloat16"):
        mldtypes.to_dlpack(np.zeros(4, mldtypes.bfloat16), packed=True)
    with pytest.raises(ValueError, match="sub-byte"):
        mldtypes.to_dlpack(np.zeros(4, np.float32), packed=True)
    with pytest.raises(ValueError, match="one value per byte"):
        mldtypes.from_dlpack(mldtypes.to_dlpack(np.zeros(4, mldtypes.bfloat16)), packed=True)


class _Once:
    """A producer whose __dlpack__ asks `e` for a capsule of version `mv`."""

    def __init__(self, e, mv):
        self.e, self.mv = e, mv

    def __dlpack__(self, **kw):
        return self.e.__dlpack__(max_version=self.mv)


# ------------------------------------------------------------------ errors

def test_bcomplex32_refused():
    with pytest.raises(TypeError, match="mldtypes.bcomplex32 has no DLPack type code"):
        mldtypes.to_dlpack(np.zeros(3, mldtypes.bcomplex32))


def test_not_an_array_or_producer():
    with pytest.raises(TypeError, match="numpy.ndarray"):
        mldtypes.to_dlpack([1, 2])
    with pytest.raises(TypeError, match="__dlpack__"):
        mldtypes.from_dlpack([1, 2])


def test_device_from_dlpack_device():
    class Gpu:
        calls = 0

        def __dlpack_device__(self):
            return (2, 1)

        def __dlpack__(self, **kw):
            Gpu.calls += 1
            raise AssertionError("not reached")

    with pytest.raises(BufferError, match=r"CUDA \(kDLCUDA\) \(device type 2, id 1\)"):
        mldtypes.from_dlpack(Gpu())
    assert Gpu.calls == 0


def test_device_from_the_tensor():
    a = sample("bfloat16", (3,))
    before = counters()

    class Rocm:
        def __dlpack__(self, **kw):
            return _core._dlpack_capsule(a, (10, 0), max_version=(1, 0))

    with pytest.raises(BufferError, match=r"ROCm \(kDLROCM\)"):
        mldtypes.from_dlpack(Rocm())
    after = counters()
    assert after[0] - before[0] == 1 and after[1] - before[1] == 1


def test_producer_stream_and_device_arguments():
    e = mldtypes.to_dlpack(sample("float8_e4m3fn", (2,)))
    assert e.__dlpack_device__() == (1, 0)
    with pytest.raises(ValueError, match="stream"):
        e.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="CUDA"):
        e.__dlpack__(dl_device=(2, 0))
    assert "dltensor" in repr(e.__dlpack__(dl_device=(1, 0)))
    with pytest.raises(TypeError, match="max_version"):
        e.__dlpack__(max_version="1.0")


# --------------------------------------------------------- foreign capsules (ctypes)

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER0 = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER0)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER1 = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", DELETER1), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class ForeignProducer:
    """A DLPack producer written with ctypes: `buf` (a uint8 array) exposed with the given
    type, shape, strides (None: NULL) and byte_offset; counts its deleter's calls. The capsule
    has no destructor, so a capsule never consumed leaks (as some producers' do)."""

    def __init__(self, buf, code, bits, shape, strides=None, byte_offset=0, lanes=1,
                 versioned=True, version=(1, 3), flags=0, device=(1, 0)):
        self.buf = buf
        self.deleted = 0
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(
            *strides)
        t = DLTensor(ctypes.c_void_p(buf.ctypes.data - byte_offset), DLDevice(*device),
                     len(shape), DLDataType(code, bits, lanes),
                     ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)),
                     None if strides is None else ctypes.cast(self.strides,
                                                              ctypes.POINTER(ctypes.c_int64)),
                     byte_offset)
        if versioned:
            self.deleter = DELETER1(self._delete)
            self.managed = DLManagedTensorVersioned(DLPackVersion(*version), None, self.deleter,
                                                    flags, t)
            self.name = b"dltensor_versioned"
        else:
            self.deleter = DELETER0(self._delete)
            self.managed = DLManagedTensor(t, None, self.deleter)
            self.name = b"dltensor"

    def _delete(self, _p):
        self.deleted += 1

    def __dlpack__(self, **kw):
        return _capsule_new(ctypes.addressof(self.managed), self.name, None)


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("name", WIDE)
def test_foreign_byte_offset_null_strides(name, versioned):
    a = sample(name, (4, 6))
    raw = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    item = a.dtype.itemsize
    code, bits = CODES[name]
    # Rows 1..2 reached through byte_offset; NULL strides (C-contiguous).
    p = ForeignProducer(raw[6 * item:], code, bits, (2, 6), None, byte_offset=6 * item,
                        versioned=versioned)
    b = mldtypes.from_dlpack(p)
    np.testing.assert_array_equal(codes(b), codes(a[1:3]))
    assert p.deleted == 0
    del b
    gc.collect()
    assert p.deleted == 1
    # Strides in elements: every other column, transposed.
    p = ForeignProducer(raw, code, bits, (3, 4), (2, 6), versioned=versioned)
    b = mldtypes.from_dlpack(p)
    np.testing.assert_array_equal(codes(b), codes(a[:, ::2].T))
    v = b[1:]  # a view keeps the tensor alive too
    del b
    gc.collect()
    assert p.deleted == 0
    del v
    gc.collect()
    assert p.deleted == 1


def test_foreign_read_only_and_copied_flags():
    buf = np.arange(8, dtype=np.uint8)
    p = ForeignProducer(buf, 10, 8, (8,), (1,), flags=1)
    b = mldtypes.from_dlpack(p)
    assert b.dtype == mldtypes.float8_e4m3fn and not b.flags.writeable
    p2 = ForeignProducer(buf, 10, 8, (8,), (1,), flags=2)
    assert mldtypes.from_dlpack(p2).flags.writeable


def test_foreign_packed_float4_x2_and_bits():
    vals = np.array([0.5, 1, 1.5, 2, 3, 4, 6, -1], np.float32)
    packed = np.array([0x21, 0x43, 0x65, 0xA7], np.uint8)  # low nibble first
    # PyTorch's float4_e2m1fn_x2: bits 4, lanes 2, one byte per element.
    p = ForeignProducer(packed, 17, 4, (2, 2), (2, 1), lanes=2)
    u = mldtypes.from_dlpack(p)
    assert u.dtype == mldtypes.float4_e2m1fn and u.shape == (2, 4)
    np.testing.assert_array_equal(u.astype(np.float32), vals.reshape(2, 4))
    gc.collect()
    assert p.deleted == 1
    r = mldtypes.from_dlpack(p, packed=True)
    assert r.shape == (2, 2) and np.shares_memory(r, packed)
    # DLPack's packed float4 (bits 4, lanes 1), as JAX exports it.
    p = ForeignProducer(packed, 17, 4, (8,), (1,), versioned=False)
    np.testing.assert_array_equal(mldtypes.from_dlpack(p).astype(np.float32), vals)
    # Packed 1-bit integers (LSB first).
    p = ForeignProducer(np.array([0b10110001], np.uint8), 0, 1, (8,), None)
    np.testing.assert_array_equal(mldtypes.from_dlpack(p).astype(np.int8),
                                  [-1, 0, 0, 0, -1, -1, 0, -1])
    p = ForeignProducer(np.array([0b10110001], np.uint8), 1, 1, (8,), None)
    np.testing.assert_array_equal(mldtypes.from_dlpack(p).astype(np.int8),
                                  [1, 0, 0, 0, 1, 1, 0, 1])
    # Padded (one value per byte) int4 with the DLPack 1.3 flag: a view.
    buf = np.array([1, 0xF, 7, 8], np.uint8)
    p = ForeignProducer(buf, 0, 4, (4,), (1,), flags=4)
    v = mldtypes.from_dlpack(p)
    assert v.dtype == mldtypes.int4 and np.shares_memory(v, buf)
    np.testing.assert_array_equal(v.astype(np.int8), [1, -1, 7, -8])
    with pytest.raises(BufferError, match="strided packed 4-bit"):
        mldtypes.from_dlpack(ForeignProducer(packed, 17, 4, (2, 2), (1, 2)))


def test_foreign_unknown_type_and_version():
    buf = np.zeros(8, np.uint8)
    p = ForeignProducer(buf, 3, 64, (1,), (1,))
    with pytest.raises(TypeError, match=r"kDLOpaqueHandle \(code 3\) with bits=64 lanes=1"):
        mldtypes.from_dlpack(p)
    with pytest.raises(TypeError, match=r"kDLFloat8_e4m3fn \(code 10\) with bits=8 lanes=4"):
        mldtypes.from_dlpack(ForeignProducer(buf, 10, 8, (2,), (1,), lanes=4))
    with pytest.raises(TypeError, match=r"code 99"):
        mldtypes.from_dlpack(ForeignProducer(buf, 99, 8, (2,), (1,)))
    with pytest.raises(BufferError, match="version 2.0 is not supported"):
        mldtypes.from_dlpack(ForeignProducer(buf, 10, 8, (2,), (1,), version=(2, 0)))
    with pytest.raises(BufferError, match=r"Vulkan"):
        mldtypes.from_dlpack(ForeignProducer(buf, 10, 8, (2,), (1,), device=(7, 0)))
    # Refused tensors are left to the producer: its deleter is not called by us.
    assert p.deleted == 0


# ------------------------------------------------------------------ NumPy's dtypes

@pytest.mark.parametrize("dt", ["bool", "int8", "uint16", "int64", "float16", "float32",
                                "complex128"])
def test_builtin_dtypes_through_numpy(dt):
    a = np.arange(6).astype(dt).reshape(2, 3)
    b = mldtypes.from_dlpack(mldtypes.to_dlpack(a))
    assert b.dtype == a.dtype and np.shares_memory(a, b)
    np.testing.assert_array_equal(b, a)
    c = np.from_dlpack(mldtypes.to_dlpack(a))
    assert np.shares_memory(a, c)
    d = mldtypes.from_dlpack(a)  # NumPy's own producer
    assert np.shares_memory(a, d)
    e = mldtypes.from_dlpack(a, copy=True)
    assert not np.shares_memory(a, e)


@pytest.mark.parametrize("name", WIDE)
def test_numpy_consumes_ours(name):
    # NumPy >= 2.5: the whole-byte types are in NumPy's DLPack registry (test_dlpack_numpy.py),
    # so its from_dlpack gives our dtype. Before, NumPy does not know DLPack's ML codes; it
    # fails (NumPy 2.4: RuntimeError "Unsupported dtype in DLTensor"), and the exported tensor
    # is still freed.
    a = sample(name, (3,))
    if npversions.NUMPY_DLPACK_REGISTRY:
        b = np.from_dlpack(mldtypes.to_dlpack(a))
        assert b.dtype == a.dtype and np.shares_memory(a, b)
        return
    with pytest.raises((BufferError, TypeError, RuntimeError)):
        np.from_dlpack(mldtypes.to_dlpack(a))


# ------------------------------------------------------------------------- lifetimes

def test_deleters_exactly_once_and_producer_kept_alive():
    before = counters()
    a = sample("bfloat16", (1000,))
    ref = weakref.ref(a)
    views = [mldtypes.from_dlpack(mldtypes.to_dlpack(a)) for _ in range(10)]
    caps = [mldtypes.to_dlpack(a).__dlpack__(max_version=(1, 0)) for _ in range(5)]
    del a
    gc.collect()
    assert ref() is not None  # held by the exported tensors
    mid = counters()
    assert mid[0] - before[0] == 15 and mid[1] - before[1] == 0
    del caps  # never consumed: the capsules' destructors free them
    mid = counters()
    assert mid[1] - before[1] == 5
    views.pop()
    assert counters()[1] - before[1] == 6
    del views
    after = counters()
    assert after[0] - before[0] == 15 and after[1] - before[1] == 15
    assert ref() is None


def _rss_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# 10^6 round trips take about 8 s here: run with MLDTYPES_SLOW_TESTS=1; 10^5 always.
ROUNDS = [100_000, pytest.param(1_000_000, marks=pytest.mark.skipif(
    not os.environ.get("MLDTYPES_SLOW_TESTS"), reason="slow: set MLDTYPES_SLOW_TESTS=1"))]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
@pytest.mark.parametrize("rounds", ROUNDS)
def test_round_trips_bounded_rss(rounds):
    a = sample("float8_e4m3fn", (16, 16))
    e = mldtypes.to_dlpack(a)
    before = counters()
    for _ in range(20_000):
        mldtypes.from_dlpack(e)
    rss0 = _rss_kib()
    t0 = time.perf_counter()
    for _ in range(rounds):
        mldtypes.from_dlpack(e)
    elapsed = time.perf_counter() - t0
    rss1 = _rss_kib()
    after = counters()
    assert after[0] - before[0] == rounds + 20_000
    assert after[1] - before[1] == rounds + 20_000
    assert rss1 - rss0 < 4096, (rss0, rss1)
    print(f"{rounds} DLPack round trips: {elapsed:.2f} s, RSS {rss0} -> {rss1} KiB")
