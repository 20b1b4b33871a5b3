"""Module surface and dtype attributes, against ml_dtypes 0.6.0 (vectors/surface.json.gz)."""

import copy
import pickle

import numpy as np
import pytest

import mldtypes
from conftest import OURS, T, from_codes, load_json, mask, storage, to_codes

SURFACE = load_json("surface")


def test_type_list_is_ml_dtypes():
    assert SURFACE["types"] == OURS


@pytest.mark.parametrize("name", OURS)
def test_type_exists(name):
    assert hasattr(mldtypes, name), f"mldtypes.{name} missing"
    assert isinstance(getattr(mldtypes, name), type)


@pytest.mark.parametrize("name", ["finfo", "iinfo", "real", "imag"])
def test_function_exists(name):
    assert callable(getattr(mldtypes, name, None)), f"mldtypes.{name} missing"


def test_version():
    assert isinstance(mldtypes.__version__, str) and mldtypes.__version__


@pytest.mark.parametrize("name", OURS)
def test_np_dtype_by_name(name):
    dt = np.dtype(name)
    assert dt == np.dtype(T(name))
    assert dt.type is T(name)


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("attr", ["kind", "char", "itemsize", "flags", "alignment", "repr",
                                  "str", "name", "dtype_str", "byteorder", "isbuiltin",
                                  "isnative", "hasobject", "ndim", "shape"])
def test_dtype_attribute(name, attr):
    dt = np.dtype(T(name))
    expected = SURFACE["dtypes"][name][attr]
    got = {"repr": repr(dt), "str": str(dt), "dtype_str": dt.str, "flags": int(dt.flags),
           "shape": list(dt.shape), "hasobject": bool(dt.hasobject)}.get(attr)
    if got is None:
        got = getattr(dt, attr)
    if attr == "flags" and name in ("complex32", "bcomplex32"):
        # deliberate difference: NPY_NEEDS_PYAPI, so that a ComplexWarning turned into an
        # error inside a cast reaches the caller (test_casts)
        expected |= 0x10
    assert got == expected, f"{name}: dtype.{attr} = {got!r}, ml_dtypes {expected!r}"


@pytest.mark.parametrize("name", OURS)
def test_type_name_and_module(name):
    t = T(name)
    assert t.__name__ == SURFACE["dtypes"][name]["type_name"]
    # deliberate difference: ml_dtypes says "ml_dtypes"
    assert SURFACE["dtypes"][name]["ml_dtypes_module"] == "ml_dtypes"
    assert t.__module__ == "mldtypes", f"{name}.__module__ = {t.__module__!r}"


@pytest.mark.parametrize("name", OURS)
def test_scalar_type_hierarchy(name):
    t = T(name)
    assert issubclass(t, np.generic)
    for base, expected in SURFACE["dtypes"][name]["issubclass"].items():
        assert issubclass(t, getattr(np, base)) == expected, (
            f"{name}: issubclass(np.{base}) is {not expected}, ml_dtypes {expected}")


@pytest.mark.parametrize("name", OURS)
def test_dtype_pickle_and_deepcopy(name):
    dt = np.dtype(T(name))
    assert pickle.loads(pickle.dumps(dt)) == dt
    assert copy.deepcopy(dt) == dt


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_array_pickle_round_trip(name, protocol):
    codes = (np.arange(64, dtype=np.uint64) * 0x9E3779B1).astype(storage(name)) & storage(
        name)(mask(name))
    a = from_codes(name, codes).reshape(4, 16)
    b = pickle.loads(pickle.dumps(a, protocol=protocol))
    assert b.dtype == a.dtype and b.shape == a.shape
    assert np.array_equal(to_codes(name, b), to_codes(name, a))
    c = copy.deepcopy(a)
    assert c.dtype == a.dtype and np.array_equal(to_codes(name, c), to_codes(name, a))


@pytest.mark.parametrize("name", OURS)
def test_scalar_pickle_and_deepcopy(name):
    x = from_codes(name, [1])[0]
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), copy.copy(x)):
        assert type(y) is T(name)
        assert to_codes(name, np.array([y], dtype=T(name)))[0] == 1


def test_seed_readme_examples():
    """The ml_dtypes README's examples, unchanged after `import mldtypes as ml_dtypes`."""
    ml_dtypes = mldtypes
    bfloat16 = ml_dtypes.bfloat16
    assert repr(np.zeros(4, dtype=bfloat16)) == "array([0, 0, 0, 0], dtype=bfloat16)"
    assert repr(np.dtype("bfloat16")) == "dtype(bfloat16)"
    assert repr(np.dtype("float8_e5m2")) == "dtype(float8_e5m2)"
    assert bfloat16(256) + bfloat16(1) == 256
    assert str(bfloat16(256) + bfloat16(1)) == "256"
    assert str(np.nextafter(bfloat16(256), bfloat16(np.inf))) == "258"
    rng = np.random.default_rng(seed=0)
    vals = rng.uniform(size=10000).astype(bfloat16)
    assert str(vals.sum()) == "256"
    assert str(vals.sum(dtype="float32").astype(bfloat16)) == "4992"


@pytest.mark.parametrize("name", OURS)
def test_every_scalar_pickles(name):
    codes = load_json("scalars")[name]["codes"]
    for x in from_codes(name, codes):
        y = pickle.loads(pickle.dumps(x))
        assert type(y) is T(name)
        assert to_codes(name, np.array([y], dtype=T(name)))[0] == to_codes(
            name, np.array([x], dtype=T(name)))[0], f"{name}: {x!r}"


@pytest.mark.parametrize("name", OURS)
def test_dtype_hash_stable(name):
    """One dtype however it is named; deepcopy does not change its hash."""
    dt = np.dtype(T(name))
    h = hash(dt)
    assert hash(np.dtype(name)) == h
    assert hash(np.dtype(T(name)(0).dtype)) == h
    copy.deepcopy(dt)
    assert hash(dt) == h
    assert np.dtype(T(name)) == T(name)
