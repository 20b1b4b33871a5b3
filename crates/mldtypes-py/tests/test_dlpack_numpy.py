"""NumPy's own DLPack entry points and our dtypes, with a stub producer (no framework).

NumPy >= 2.5 (npversions.NUMPY_DLPACK_REGISTRY): mldtypes registers its whole-byte types with
`numpy.dtypes.register_dlpack_dtype`, so `numpy.from_dlpack` of a producer exporting DLPack
1.1's codes gives our dtypes and `ndarray.__dlpack__` exports them. Sub-byte types (bits 1, 2,
4, 6: NumPy wants bits = 8 x itemsize) and bcomplex32 (no code) stay with
`mldtypes.from_dlpack` / `to_dlpack`. When another dtype holds a (code, bits) pair first, it
keeps it and mldtypes' import goes on (a child process registers a stand-in first). NumPy < 2.5:
nothing changes, NumPy refuses the codes.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mldtypes
import npversions
from mldtypes import _core

from conftest import BITS, OURS

# DLPack 1.1 (code, bits) of the types NumPy's registry takes (bits = 8 x itemsize).
REGISTERED = {
    "bfloat16": (4, 16), "float8_e3m4": (7, 8), "float8_e4m3": (8, 8),
    "float8_e4m3b11fnuz": (9, 8), "float8_e4m3fn": (10, 8), "float8_e4m3fnuz": (11, 8),
    "float8_e5m2": (12, 8), "float8_e5m2fnuz": (13, 8), "float8_e8m0fnu": (14, 8),
    "complex32": (5, 32),
}
LEFT_OUT = [n for n in OURS if n not in REGISTERED]
needs_registry = pytest.mark.skipif(not npversions.NUMPY_DLPACK_REGISTRY,
                                    reason="NumPy < 2.5 has no register_dlpack_dtype")


class Producer:
    """A stub DLPack producer exporting `array` with our own capsule code (CPU)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return _core._dlpack_capsule(self.array, (1, 0), max_version)

    def __dlpack_device__(self):
        return (1, 0)


def sample(name, n=12):
    dt = np.dtype(getattr(mldtypes, name))
    raw = (np.arange(n, dtype=np.uint32) * 40503 + 7).astype(f"u{dt.itemsize}")
    if dt.itemsize == 1:
        raw &= (1 << BITS[name]) - 1
    return raw.view(dt)


def test_registrations():
    got = _core._numpy_dlpack_registrations()
    if npversions.NUMPY_DLPACK_REGISTRY:
        assert got == {n: (k, None) for n, k in REGISTERED.items()}
    else:
        assert got == {}


@needs_registry
@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_numpy_from_dlpack_gives_ours(name):
    a = sample(name)
    b = np.from_dlpack(Producer(a))
    assert b.dtype == a.dtype
    assert b.ctypes.data == a.ctypes.data  # zero-copy
    np.testing.assert_array_equal(b.view(f"u{a.dtype.itemsize}"), a.view(f"u{a.dtype.itemsize}"))


@needs_registry
@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_ndarray_dlpack_exports_ours(name):
    a = sample(name).reshape(3, 4)[:, ::2]  # strided
    for consumer in (np.from_dlpack, mldtypes.from_dlpack):
        b = consumer(a)
        assert b.dtype == a.dtype and b.shape == a.shape and np.shares_memory(a, b)
        np.testing.assert_array_equal(b.view(f"u{a.dtype.itemsize}"),
                                      a.view(f"u{a.dtype.itemsize}"))


@pytest.mark.parametrize("name", LEFT_OUT)
def test_left_out_types(name):
    """Sub-byte types and bcomplex32 never go through NumPy's registry: NumPy refuses them
    (BufferError), mldtypes' own functions take the sub-byte ones."""
    a = sample(name)
    with pytest.raises(BufferError):
        a.__dlpack__()
    if name != "bcomplex32":
        np.testing.assert_array_equal(mldtypes.from_dlpack(mldtypes.to_dlpack(a)), a)


@pytest.mark.skipif(npversions.NUMPY_DLPACK_REGISTRY, reason="NumPy >= 2.5")
@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "complex32"])
def test_nothing_changes_before_numpy_2_5(name):
    a = sample(name)
    with pytest.raises((BufferError, RuntimeError), match="Unsupported dtype"):
        np.from_dlpack(Producer(a))  # NumPy 2.0-2.4 raise RuntimeError here
    with pytest.raises(BufferError):
        a.__dlpack__()
    b = mldtypes.from_dlpack(Producer(a))
    assert b.dtype == a.dtype and b.ctypes.data == a.ctypes.data


@needs_registry
def test_another_package_registered_first():
    """A dtype registered for (10, 8) and (4, 16) before mldtypes is imported (as ml_dtypes
    would, if a release registers its types) keeps those pairs: mldtypes' import goes on,
    NumPy's import of those codes gives the first package's dtype, our arrays still export,
    every other pair is ours."""
    code = textwrap.dedent("""
        import numpy as np
        first = np.dtype("V1"), np.dtype("V2")
        np.dtypes.register_dlpack_dtype((10, 8), first[0])
        np.dtypes.register_dlpack_dtype((4, 16), first[1])
        import mldtypes
        from mldtypes import _core
        reg = _core._numpy_dlpack_registrations()
        held = sorted(n for n, (_, msg) in reg.items() if msg is not None)
        print("held", held)
        print("ours", sorted(n for n, (_, msg) in reg.items() if msg is None) ==
              sorted(set(reg) - set(held)))
        a = np.array([1, 2], mldtypes.float8_e4m3fn)
        print("export", np.from_dlpack(a).dtype)          # the first registrant's import
        print("e5m2", np.from_dlpack(np.array([1, 2], mldtypes.float8_e5m2)).dtype)
        print("mldtypes", mldtypes.from_dlpack(a).dtype)  # our consumer: ours
    """)
    # without the start-up switch, which would import mldtypes before the stand-in registers
    env = {k: v for k, v in os.environ.items() if k != "MLDTYPES_AS_ML_DTYPES"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines == {"held": "['bfloat16', 'float8_e4m3fn']", "ours": "True", "export": "|V1",
                     "e5m2": "float8_e5m2", "mldtypes": "float8_e4m3fn"}
