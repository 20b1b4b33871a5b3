"""finfo / iinfo: every field, the type of each float field, str() and repr() texts
(vectors/info.json.gz, ml_dtypes 0.6.0). Complex types give their real part's finfo."""

import numpy as np
import pytest

import mldtypes
import npversions
from conftest import COMPLEX, FLOATS, INTS, OURS, T, code_of, load_json

INFO = load_json("info")
FINFO_FIELDS = ["bits", "eps", "epsneg", "machep", "negep", "max", "min", "nexp", "nmant",
                "iexp", "maxexp", "minexp", "precision", "resolution", "tiny",
                "smallest_normal", "smallest_subnormal"]


@pytest.mark.parametrize("name", FLOATS + COMPLEX)
@pytest.mark.parametrize("field", FINFO_FIELDS)
def test_finfo_field(name, field):
    want = INFO["finfo"][name][field]
    got = getattr(mldtypes.finfo(T(name)), field)
    if "int" in want:
        assert isinstance(got, (int, np.integer)), f"{name}.{field}: {type(got).__name__}"
        assert int(got) == want["int"], f"finfo({name}).{field} = {got}, ml_dtypes {want['int']}"
        return
    assert type(got).__name__ == want["type"], (
        f"finfo({name}).{field} is a {type(got).__name__}, ml_dtypes {want['type']}")
    assert repr(float(np.float64(got))) == want["float"], (
        f"finfo({name}).{field} = {float(np.float64(got))!r}, ml_dtypes {want['float']}")
    if "code" in want:
        assert code_of(want["type"], got) == want["code"]


@pytest.mark.parametrize("name", FLOATS + COMPLEX)
def test_finfo_dtype(name):
    assert str(mldtypes.finfo(T(name)).dtype) == INFO["finfo"][name]["dtype"]


@pytest.mark.parametrize("name", FLOATS + COMPLEX)
@pytest.mark.parametrize("fn", ["str", "repr"])
def test_finfo_text(name, fn):
    got = {"str": str, "repr": repr}[fn](mldtypes.finfo(T(name)))
    want = INFO["finfo"][name][fn]
    if npversions.FINFO_OLD_TEXT:  # NumPy < 2.4's templates (README: NumPy versions)
        info = mldtypes.finfo(T(name))
        want = npversions.old_finfo_text(fn, want, {"max_str": info._str_max})
        if name == "complex32":  # NumPy's own float16 finfo
            want = {"str": str, "repr": repr}[fn](np.finfo(np.float16))
            want = want if fn == "repr" else " ".join(want.split())
        got = got if fn == "repr" else " ".join(got.split())
    assert got == want, f"{fn}(finfo({name})):\n{got}\nml_dtypes:\n{want}"


@pytest.mark.parametrize("name", FLOATS + COMPLEX)
def test_finfo_cached_and_by_name(name):
    t = T(name)
    assert mldtypes.finfo(name) is mldtypes.finfo(t)
    assert mldtypes.finfo(np.dtype(t)) is mldtypes.finfo(t)
    assert mldtypes.finfo(t) is mldtypes.finfo(t)


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_builtin_is_numpy(name):
    for f in ("eps", "max", "tiny", "smallest_subnormal", "precision", "bits"):
        assert getattr(mldtypes.finfo(np.dtype(name)), f) == getattr(np.finfo(np.dtype(name)), f)


@pytest.mark.parametrize("name", INTS)
@pytest.mark.parametrize("field", ["dtype", "kind", "bits", "min", "max", "str", "repr"])
def test_iinfo(name, field):
    info = mldtypes.iinfo(T(name))
    got = {"dtype": lambda: str(info.dtype), "str": lambda: str(info),
           "repr": lambda: repr(info)}.get(field, lambda: getattr(info, field))()
    want = INFO["iinfo"][name][field]
    assert got == want, f"iinfo({name}).{field} = {got!r}, ml_dtypes {want!r}"


@pytest.mark.parametrize("name", INTS)
def test_iinfo_by_name(name):
    a, b = mldtypes.iinfo(name), mldtypes.iinfo(T(name))
    assert (a.min, a.max, a.bits, str(a.dtype)) == (b.min, b.max, b.bits, str(b.dtype))


@pytest.mark.parametrize("name", ["int8", "uint16", "int64"])
def test_iinfo_builtin_is_numpy(name):
    assert mldtypes.iinfo(np.dtype(name)).max == np.iinfo(np.dtype(name)).max


@pytest.mark.parametrize("name", OURS)
def test_info_rejects_wrong_kind(name):
    """finfo of an integer type and iinfo of a float type raise, as NumPy's do."""
    if name in INTS:
        with pytest.raises((ValueError, TypeError)):
            mldtypes.finfo(T(name))
    else:
        with pytest.raises((ValueError, TypeError)):
            mldtypes.iinfo(T(name))
