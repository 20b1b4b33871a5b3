"""DLPack with PyTorch and JAX, when they are installed (each part is skipped otherwise).

Checks the dtype each side sees, the bits, shared memory (a write on one side is seen on the
other) and lifetimes (the producer's memory outlives the producer object while a view exists).
On NumPy >= 2.5 (npversions.NUMPY_DLPACK_REGISTRY) NumPy's own entry points too:
`numpy.from_dlpack(tensor)` gives our dtypes, `torch.from_dlpack(array)` /
`jax.numpy.from_dlpack(array)` take our arrays directly. The tests never install torch or jax.
"""

import gc
import weakref

import numpy as np
import pytest

import mldtypes
import npversions

# Our dtype → PyTorch's (None: PyTorch has no such dtype).
TORCH = {
    "bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn", "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e5m2": "float8_e5m2", "float8_e5m2fnuz": "float8_e5m2fnuz",
    "float8_e8m0fnu": "float8_e8m0fnu", "complex32": "complex32",
}
# Our dtype → JAX's (jax.numpy names).
JAX = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
       "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]


def codes(a):
    return a.view(f"u{a.dtype.itemsize}")


def sample(name, n=16):
    dt = np.dtype(getattr(mldtypes, name))
    raw = (np.arange(n, dtype=np.uint32) * 40503 + 7).astype(f"u{dt.itemsize}")
    a = raw.view(dt)
    if name == "complex32":
        a = np.array([1 + 2j, -0.5, 3j, 0] * (n // 4)).astype(dt)
    return a


# ---------------------------------------------------------------------------- PyTorch

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def torch_bits(t):
    """The tensor's bytes as an integer NumPy array (through an integer view)."""
    size = t.element_size()
    ints = {1: "uint8", 2: "int16", 4: "int32"}[size]
    return t.view(getattr(__import__("torch"), ints)).numpy().view(f"u{size}")


@pytest.mark.parametrize("name", sorted(TORCH))
def test_torch_to_ours(torch, name):
    a = sample(name)
    t = torch.from_numpy(codes(a).view({1: np.uint8, 2: np.int16, 4: np.int32}[
        a.dtype.itemsize])).view(getattr(torch, TORCH[name]))
    b = mldtypes.from_dlpack(t)
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(codes(b), codes(a))
    assert b.ctypes.data == t.data_ptr()
    # Shared both ways; the tensor's storage outlives the tensor object.
    b[0] = b[1]
    assert torch_bits(t)[0] == codes(a)[1]
    del t
    gc.collect()
    # The array keeps the tensor's storage: still readable and writable.
    np.testing.assert_array_equal(codes(b)[1:], codes(a)[1:])
    b[1] = b[2]
    assert codes(b)[1] == codes(a)[2]


@pytest.mark.parametrize("name", sorted(TORCH))
def test_ours_to_torch(torch, name):
    a = sample(name)
    t = torch.from_dlpack(mldtypes.to_dlpack(a))
    assert t.dtype == getattr(torch, TORCH[name])
    assert t.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(torch_bits(t), codes(a))
    t[2] = t[3]
    assert codes(a)[2] == codes(a)[3]
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is not None  # the tensor keeps the array alive
    del t
    gc.collect()
    assert ref() is None


def test_torch_float4_x2(torch):
    vals = np.array([0.5, 1, 1.5, 2, 3, 4, 6, -1], np.float32)
    a = vals.astype(mldtypes.float4_e2m1fn)
    t = torch.from_dlpack(mldtypes.to_dlpack(a, packed=True, lanes=2))
    assert t.dtype == torch.float4_e2m1fn_x2 and tuple(t.shape) == (4,)
    np.testing.assert_array_equal(t.view(torch.uint8).numpy(), mldtypes.pack(a))
    # Back: unpacked by default, the packed bytes (zero-copy) with packed=True.
    np.testing.assert_array_equal(mldtypes.from_dlpack(t).astype(np.float32), vals)
    raw = mldtypes.from_dlpack(t, packed=True)
    assert raw.ctypes.data == t.data_ptr()
    with pytest.raises(BufferError, match="packed"):
        mldtypes.from_dlpack(t, copy=False)


def test_torch_refusals(torch):
    with pytest.raises(TypeError, match="bcomplex32"):
        mldtypes.to_dlpack(np.zeros(2, mldtypes.bcomplex32))
    # Codes PyTorch lacks: its error, not a crash.
    with pytest.raises(BufferError):
        torch.from_dlpack(mldtypes.to_dlpack(np.zeros(2, mldtypes.float8_e3m4)))


needs_registry = pytest.mark.skipif(not npversions.NUMPY_DLPACK_REGISTRY,
                                    reason="NumPy < 2.5 has no register_dlpack_dtype")


@needs_registry
@pytest.mark.parametrize("name", sorted(TORCH))
def test_numpy_from_dlpack_of_torch(torch, name):
    a = sample(name)
    t = torch.from_numpy(codes(a).view({1: np.uint8, 2: np.int16, 4: np.int32}[
        a.dtype.itemsize])).view(getattr(torch, TORCH[name]))
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype
    assert b.ctypes.data == t.data_ptr()
    np.testing.assert_array_equal(codes(b), codes(a))


@needs_registry
@pytest.mark.parametrize("name", sorted(TORCH))
def test_torch_from_dlpack_of_ours(torch, name):
    a = sample(name)
    t = torch.from_dlpack(a)  # ndarray.__dlpack__ with our registered code
    assert t.dtype == getattr(torch, TORCH[name])
    assert t.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(torch_bits(t), codes(a))


# -------------------------------------------------------------------------------- JAX

@pytest.fixture(scope="module")
def jnp():
    pytest.importorskip("jax")
    import jax.numpy

    return jax.numpy


@pytest.mark.parametrize("name", JAX)
def test_jax_to_ours(jnp, name):
    a = sample(name)
    j = jnp.asarray(codes(a)).view(getattr(jnp, name))
    b = mldtypes.from_dlpack(j)
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(codes(b), codes(a))
    ptr = j.unsafe_buffer_pointer()
    assert b.ctypes.data == ptr
    del j
    gc.collect()
    np.testing.assert_array_equal(codes(b), codes(a))


@pytest.mark.parametrize("name", JAX)
def test_ours_to_jax(jnp, name):
    a = sample(name)
    j = jnp.from_dlpack(mldtypes.to_dlpack(a))
    assert j.dtype == np.dtype(getattr(jnp, name))
    np.testing.assert_array_equal(np.asarray(j.view(f"uint{8 * a.dtype.itemsize}")), codes(a))
    # JAX's CPU client views the array (zero-copy) when its data is 64-byte aligned.
    if a.ctypes.data % 64 == 0:
        assert j.unsafe_buffer_pointer() == a.ctypes.data


def test_jax_float4_packed(jnp):
    vals = np.array([0.5, 1, 1.5, 2, 3, 4, 6, -1], np.float32)
    j = jnp.asarray(vals).astype(jnp.float4_e2m1fn)
    np.testing.assert_array_equal(mldtypes.from_dlpack(j).astype(np.float32), vals)
    np.testing.assert_array_equal(mldtypes.from_dlpack(j, packed=True),
                                  mldtypes.pack(vals.astype(mldtypes.float4_e2m1fn)))


@needs_registry
@pytest.mark.parametrize("name", JAX)
def test_numpy_and_jax_from_dlpack(jnp, name):
    a = sample(name)
    j = jnp.asarray(codes(a)).view(getattr(jnp, name))
    b = np.from_dlpack(j)
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(codes(b), codes(a))
    k = jnp.from_dlpack(a)  # ndarray.__dlpack__
    assert k.dtype == np.dtype(getattr(jnp, name))
    np.testing.assert_array_equal(np.asarray(k.view(f"uint{8 * a.dtype.itemsize}")), codes(a))
