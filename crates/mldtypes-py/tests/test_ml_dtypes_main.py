"""What ml_dtypes' main branch (b793a6e, unreleased) changes and mldtypes follows: complex ->
bool casts, byte-swapped complex arrays, logical reductions of complex arrays, complex
``float_power``, ``numpy.finfo`` answering with our finfo objects, and on NumPy >= 2.5 the
``real`` / ``imag`` ArrayMethods of complex32 / bcomplex32 (``npversions.REAL_IMAG_VIEWS``).

The expected values come from the definitions ml_dtypes' main branch implements (either part
non-zero; each 16-bit part byte-swapped; the part's bits at offset 0 / 2) and from NumPy's own
complex64 on the same values. ml_dtypes' own tests of these run through
``tools/run_ml_dtypes_tests.sh --rev b793a6e``.
"""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import mldtypes
import npversions
from conftest import COMPLEX, FLOATS, T, to_codes

PART = {"complex32": np.dtype(np.float16), "bcomplex32": np.dtype(mldtypes.bfloat16)}
VALUES = np.array([0, 1, 2j, 3 + 4j, -0.0, complex(0.0, -0.0), np.nan, complex(0, np.nan),
                   np.inf, -2.5 - 0.5j], dtype=np.complex64)


@pytest.mark.parametrize("name", COMPLEX)
@pytest.mark.parametrize("step", [1, 2])
def test_complex_to_bool(name, step):
    """Either part non-zero (NaN counts), no ComplexWarning, contiguous and strided."""
    x = np.repeat(VALUES, 2).astype(T(name))[::step]
    want = np.repeat(VALUES, 2)[::step] != 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = x.astype(bool)
    assert got.dtype == np.bool_ and got.view(np.uint8).max() <= 1
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_byteswap_round_trip(name):
    x = VALUES.astype(T(name))
    codes = to_codes(name, x)
    swapped = x.byteswap()
    lo, hi = codes & 0xFFFF, codes >> 16
    swap16 = lambda v: ((v & 0xFF) << 8) | (v >> 8)  # noqa: E731
    np.testing.assert_array_equal(to_codes(name, swapped), swap16(lo) | (swap16(hi) << 16))
    view = swapped.view(x.dtype.newbyteorder())
    np.testing.assert_array_equal(to_codes(name, view.astype(x.dtype)), codes)
    np.testing.assert_array_equal(view.astype(np.complex64), x.astype(np.complex64))
    y = x.copy()
    assert y.byteswap(inplace=True) is y
    np.testing.assert_array_equal(to_codes(name, y), to_codes(name, swapped))


@pytest.mark.parametrize("name", COMPLEX)
@pytest.mark.parametrize("ufunc", ["logical_and", "logical_or", "logical_xor"])
def test_logical_reduce(name, ufunc):
    u = getattr(np, ufunc)
    for vals in ([True, False, True], [1 + 1j, 2j, 3], [0, 0j, 1], []):
        x = np.array(vals, dtype=np.complex64)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = u.reduce(x.astype(T(name)))
        assert got == u.reduce(x.astype(bool)), (vals, got)


@pytest.mark.parametrize("name", COMPLEX)
def test_float_power_is_power(name):
    """ml_dtypes' main branch registers complex float_power with the power functor: the
    result keeps the type (ml_dtypes 0.6.0: complex128) and has power's bits."""
    rng = np.random.default_rng(0)
    x = (rng.uniform(-3, 3, 64) + 1j * rng.uniform(-3, 3, 64)).astype(np.complex64)
    y = (rng.uniform(-2, 2, 64) + 1j * rng.uniform(-2, 2, 64)).astype(np.complex64)
    a, b = x.astype(T(name)), y.astype(T(name))
    with np.errstate(all="ignore"):
        got = np.float_power(a, b)
        want = np.power(a, b)
    assert got.dtype == np.dtype(T(name))
    np.testing.assert_array_equal(to_codes(name, got), to_codes(name, want))


@pytest.mark.parametrize("name", FLOATS + COMPLEX)
def test_numpy_finfo_is_ours(name):
    t = T(name)
    info = mldtypes.finfo(t)
    for key in (t, np.dtype(t), name):
        assert mldtypes.finfo(key) is info, key
        # the name means ml_dtypes' type when ml_dtypes is loaded too (it owns NumPy's names)
        if key != name or np.dtype(name).type is t:
            assert np.finfo(key) is info, key
    if name == "complex32":
        assert info is np.finfo(np.float16)
    elif name == "bcomplex32":
        assert info is mldtypes.finfo(mldtypes.bfloat16)
    else:
        assert isinstance(info, mldtypes.finfo) and info.dtype == np.dtype(t)


def test_numpy_finfo_of_integers_still_refuses():
    with pytest.raises(ValueError):
        np.finfo(mldtypes.int4)


# ----------------------------------------------------------------- real / imag, NumPy >= 2.5

def _layouts(name):
    src = np.array([[1 + 2j, 3 + 4j, -0.5 - 0j], [5 + 6j, np.inf - 1j, 0.25j]],
                   dtype=np.complex64)
    a = src.astype(T(name))
    return [("c", a, src), ("T", a.T, src.T), ("rev", a[::-1, ::-1], src[::-1, ::-1]),
            ("step", a[:, ::2], src[:, ::2]), ("0d", a[1, 1], src[1, 1])]


@pytest.mark.skipif(not npversions.REAL_IMAG_VIEWS, reason="NumPy < 2.5: no real/imag hooks")
@pytest.mark.parametrize("name", COMPLEX)
def test_real_imag_are_views(name):
    for label, a, src in _layouts(name):
        if label == "0d":
            a = np.asarray(a)
        for part, fn, want in (("real", np.real, src.real), ("imag", np.imag, src.imag)):
            got = getattr(a, part)
            assert got.dtype == PART[name], (label, part)
            assert got.shape == a.shape and np.shares_memory(got, a), (label, part)
            assert fn(a).dtype == PART[name]
            np.testing.assert_array_equal(got.astype(np.float32), want, err_msg=f"{label} {part}")
            np.testing.assert_array_equal(got, getattr(mldtypes, part)(a))


@pytest.mark.skipif(not npversions.REAL_IMAG_VIEWS, reason="NumPy < 2.5: no real/imag hooks")
@pytest.mark.parametrize("name", COMPLEX)
def test_real_imag_write_through(name):
    a = np.array([1 + 2j, 3 + 4j, 5 + 6j], dtype=T(name))
    a.real[...] = [7, 8, 9]
    a.imag[::2] = 0
    np.testing.assert_array_equal(a.astype(np.complex64), [7, 8 + 4j, 9])
    ro = a.copy()
    ro.flags.writeable = False
    assert not ro.real.flags.writeable
    with pytest.raises(ValueError):
        ro.imag[...] = 1


@pytest.mark.skipif(not npversions.REAL_IMAG_VIEWS, reason="NumPy < 2.5: no real/imag hooks")
@pytest.mark.parametrize("name", COMPLEX)
def test_real_imag_byteswapped(name):
    src = np.array([1 + 2j, 3 + 4j, -7.5 + 0.125j], dtype=np.complex64)
    swapped = src.astype(T(name)).byteswap()
    swapped = swapped.view(swapped.dtype.newbyteorder())
    assert swapped.real.dtype == PART[name].newbyteorder()
    np.testing.assert_array_equal(swapped.real.astype(np.float32), src.real)
    np.testing.assert_array_equal(swapped.imag.astype(np.float32), src.imag)


@pytest.mark.skipif(npversions.REAL_IMAG_VIEWS, reason="NumPy >= 2.5 has real/imag hooks")
@pytest.mark.parametrize("name", COMPLEX)
def test_real_imag_before_numpy_2_5(name):
    """NumPy 2.0-2.4 treat every user dtype as real: `a.real` is `a`, `a.imag` zeros."""
    a = np.array([1 + 2j, 3 + 4j], dtype=T(name))
    assert a.real is a
    assert a.imag.dtype == a.dtype and not to_codes(name, a.imag).any()
    np.testing.assert_array_equal(mldtypes.imag(a).astype(np.float32), [2, 4])


@pytest.mark.skipif(not npversions.REAL_IMAG_VIEWS, reason="NumPy < 2.5: no real/imag hooks")
def test_real_imag_panic_is_an_error():
    """The ArrayMethods run through the panic guard: a panic raises, the process goes on."""
    code = textwrap.dedent("""
        import numpy as np, mldtypes as m
        from mldtypes import _core
        a = np.array([1 + 2j], m.complex32)
        _core._panic_in_callbacks_for_test(True)
        try:
            a.imag
            print("no error")
        except Exception as e:
            print(type(e).__name__, e)
        _core._panic_in_callbacks_for_test(False)
        print(a.imag.tolist())
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0].startswith("RuntimeError internal error in mldtypes"), lines
    assert lines[1] == "[2.0]"


# ----------------------------------------------------- numpy.finfo's cache and a twin package

TWIN_FINFO = textwrap.dedent("""
    import warnings
    warnings.simplefilter("error")  # NumPy warns when a cast is registered after being used
    {first}
    import numpy as np
    names = {names!r}
    for n in names:
        ours, theirs = getattr(mldtypes, n), getattr(ml_dtypes, n)
        a = np.zeros(16, ours)
        b = a.astype(theirs)
        assert b.dtype.type is theirs and a.view(np.uint8).tobytes() == b.view(np.uint8).tobytes()
    for n in {floats!r}:
        assert np.finfo(getattr(mldtypes, n)) is mldtypes.finfo(getattr(mldtypes, n)), n
    print("OK")
""")


@pytest.mark.parametrize("first", ["mldtypes", "ml_dtypes"])
def test_numpy_finfo_cache_beside_a_twin_package(tmp_path, first):
    """A package named ml_dtypes laid out as ml_dtypes' main branch (an extension module
    `_ml_dtypes_ext` defining the types, then a package `__init__` that fills numpy.finfo's
    cache with its dtypes) imported before or after mldtypes: every cast between the twins
    works and numpy.finfo answers for ours. (The stand-in's types are a second copy of our
    compiled module; dict inserts compare one-byte user dtypes, which hash alike, through
    NumPy's cast table, so the twin casts must exist before either package's insert.)"""
    import glob
    import os
    import shutil

    from conftest import OURS

    pkg = tmp_path / "ml_dtypes"
    pkg.mkdir()
    (core,) = glob.glob(os.path.join(os.path.dirname(mldtypes._core.__file__), "_core*.so"))
    shutil.copy(core, pkg / os.path.basename(core))
    (pkg / "_ml_dtypes_ext.py").write_text("from ml_dtypes._core import *  # noqa\n")
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from ml_dtypes._ml_dtypes_ext import *  # noqa
        import numpy as _np
        from ml_dtypes import _ml_dtypes_ext as _ext
        _np.finfo._finfo_cache.update(
            {_np.dtype(getattr(_ext, n)): _np.finfo(_np.float32) for n in dir(_ext)
             if n.startswith(("bfloat16", "float"))})
    """))
    imports = ("import mldtypes\nimport ml_dtypes" if first == "mldtypes" else
               "import ml_dtypes\nimport mldtypes")
    code = TWIN_FINFO.format(first=imports, names=OURS, floats=FLOATS)
    env = {k: v for k, v in os.environ.items() if k != "MLDTYPES_AS_ML_DTYPES"}
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "OK", r.stderr[-3000:]
