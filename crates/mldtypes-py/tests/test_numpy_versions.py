"""Every feature on the NumPy this suite runs with (2.0 to 2.5), and the behaviours that
differ between NumPy versions (README: "NumPy versions"), each as this NumPy gives it.

tools/test-numpy-matrix.sh runs this suite on each NumPy minor release.
"""

import numpy as np
import pytest

import mldtypes
import npversions


def test_numpy_is_supported():
    assert (2, 0) <= npversions.NUMPY <= (2, 5)


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e8m0fnu",
                                  "float4_e2m1fn", "bcomplex32"])
def test_finfo_on_this_numpy(name):
    info = mldtypes.finfo(getattr(mldtypes, name))
    assert isinstance(info, np.finfo)
    part = mldtypes.bfloat16 if name == "bcomplex32" else getattr(mldtypes, name)
    # read-only properties of numpy.finfo on 2.0-2.3, cached properties on 2.5
    assert type(info.tiny) is part and type(info.smallest_normal) is part
    assert info.tiny == info.smallest_normal
    assert str(info).startswith("Machine parameters for")
    assert repr(info).startswith("finfo(resolution=")


def test_finfo_bfloat16_values():
    info = mldtypes.finfo(mldtypes.bfloat16)
    assert float(info.tiny) == 2.0 ** -126
    assert float(info.smallest_subnormal) == 2.0 ** -133
    assert float(info.eps) == 2.0 ** -7
    assert float(info.max) == float.fromhex("0x1.fep127")


def test_jax_promotion_on_this_numpy():
    bf16 = np.ones(3, mldtypes.bfloat16)
    before = (bf16 + np.ones(3, np.int32)).dtype
    with mldtypes.numpy_promotion("jax"):
        assert np.result_type(mldtypes.bfloat16, np.float16) == np.float32
        assert (bf16 + np.ones(3, np.int32)).dtype == mldtypes.bfloat16
        assert (bf16 + 1.0).dtype == mldtypes.bfloat16
        assert np.concatenate([bf16, np.ones(3, np.float16)]).dtype == np.float32
        with pytest.raises(mldtypes.TypePromotionError):
            np.ones(2, mldtypes.float8_e4m3fn) + np.ones(2, mldtypes.float8_e5m2)
    assert mldtypes.get_numpy_promotion() == "numpy"
    assert (bf16 + np.ones(3, np.int32)).dtype == before


def test_scalar_with_python_int():
    r = mldtypes.bfloat16(1.5) + 2
    if npversions.SCALAR_PY_INT_PROMOTES:
        assert type(r) is np.float32
    else:
        assert type(r) is mldtypes.bfloat16
    assert float(r) == 3.5


def test_integer_rounding_ufuncs():
    a = np.array([-3, 2], mldtypes.int4)
    r = np.ceil(a)
    if npversions.INT_ROUNDING_IS_FLOAT:
        assert r.dtype == np.float16
    else:
        assert r.dtype == np.int8
    assert r.tolist() == [-3, 2]
    assert np.ceil(np.array([-3, 2], np.int8)).dtype == r.dtype  # NumPy's own rule


def test_float16_nan_of_invalid_integer_inputs_is_numpys():
    # The NaN's sign comes from NumPy's float16 loops (it differs between versions and
    # between their vector and scalar paths); it is always NumPy's own for int8.
    x = np.arange(-8, 8).repeat(5)
    with np.errstate(invalid="ignore", divide="ignore"):
        for ufunc in (np.arccos, np.arcsin, np.log, np.log10):
            r = ufunc(x.astype(mldtypes.int4))
            ref = ufunc(x.astype(np.int8))
            assert r.dtype == ref.dtype == np.float16
            assert r.tobytes() == ref.tobytes(), ufunc.__name__
