"""Scalar construction from Python numbers, strings, NumPy scalars and each other
(vectors/construction.json.gz).

Expected values are ml_dtypes 0.6.0's, except the deliberate differences, where the vectors hold
our value beside ml_dtypes': float types round a Python float / float64 / text once (ml_dtypes
rounds through float32), and text that is not a number raises ValueError (ml_dtypes' float
types abort the interpreter on it).
"""

import warnings

import numpy as np
import pytest

from conftest import COMPLEX, FLOATS, INTS, OURS, T, code_of, from_codes, load_json, outcome, \
    same_outcome

C = load_json("construction")
# bit patterns, so that the sign of NaN inputs survives
FLOAT_INPUTS = np.array(C["py_float_bits"], dtype=np.uint64).view(np.float64).tolist()
INVALID_TEXT = ["abc", "", "1.5.2", "--1", "1e", "nan(", "0x10", "1,5", "one"]


def _check_outcomes(name, what, inputs, expected, fn, ours=None, extra_ok=False):
    """Compare each outcome; where `ours` holds a code, that code is expected instead.
    extra_ok: where ml_dtypes raises TypeError (it does not accept that input type at all),
    accepting the input is not an error."""
    bad = []
    for k, (x, e) in enumerate(zip(inputs, expected)):
        if e is None:
            continue  # not run in ml_dtypes (it crashes): see test_invalid_text_raises_value_error
        got = outcome(lambda: fn(x))
        if extra_ok and e.get("error") == "TypeError":
            continue
        if ours is not None and ours[k] is not None and "error" not in e:
            want = {"type": name, "code": ours[k]}
        else:
            want = e
        if not same_outcome(want, got):
            bad.append(f"  {what}({x!r}): expected {want}, got {got}"
                       + (f" (ml_dtypes: {e})" if want is not e else ""))
    assert not bad, f"{name}: {len(bad)} of {len(inputs)} differ\n" + "\n".join(bad[:10])


@pytest.mark.parametrize("name", OURS)
def test_from_python_int(name):
    d = C["types"][name]
    _check_outcomes(name, name, C["py_ints"], d["from_int"], T(name))


@pytest.mark.parametrize("name", OURS)
def test_from_python_float(name):
    d = C["types"][name]
    _check_outcomes(name, name, FLOAT_INPUTS, d["from_float"], T(name), d.get("from_float_ours"))


@pytest.mark.parametrize("name", OURS)
def test_array_from_python_float(name):
    """np.array([x], dtype=T) stores what T(x) gives (ValueError / OverflowError for the
    integer types on NaN / inf / out-of-range floats, as T(x))."""
    d = C["types"][name]
    ours = d.get("from_float_ours")
    bad = []
    for k, (x, e) in enumerate(zip(FLOAT_INPUTS, d["array_from_float"])):
        got = outcome(lambda: np.array([x], dtype=T(name)))
        want = e
        if ours is not None and "error" not in e:
            want = {"type": "ndarray", "dtype": name, "shape": [1], "codes": [ours[k]]}
        if not same_outcome(want, got):
            bad.append(f"  np.array([{x!r}], dtype={name}): expected {want}, got {got}")
    assert not bad, f"{name}: {len(bad)} of {len(FLOAT_INPUTS)} differ\n" + "\n".join(bad[:10])


@pytest.mark.parametrize("name", COMPLEX)
def test_from_python_complex(name):
    d = C["types"][name]
    inputs = [complex(x, -x / 2) for x in FLOAT_INPUTS[:40]]
    _check_outcomes(name, name, inputs, d["from_complex"], T(name), d["from_complex_ours"])


@pytest.mark.parametrize("name", OURS)
def test_from_valid_text(name):
    d = C["types"][name]
    _check_outcomes(name, name, C["strings"], d["from_str"], T(name), d.get("from_str_ours"))


@pytest.mark.parametrize("name", FLOATS)
def test_text_parses_exactly(name):
    """Deliberate difference: the text's exact value is rounded once."""
    d = C["types"][name]
    for s, ours in zip(C["strings"], d["from_str_ours"]):
        if ours is None:
            continue
        got = outcome(lambda: T(name)(s))
        assert got == {"type": name, "code": ours}, f"{name}({s!r}): {got}, expected {ours:#x}"


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("text", INVALID_TEXT)
def test_invalid_text_raises_value_error(name, text):
    """Deliberate difference: ml_dtypes' float types crash the interpreter here."""
    if name in INTS and text == "0x10":
        pytest.skip("int('0x10', 0) is valid for the integer types, as in ml_dtypes")
    with pytest.raises(ValueError):
        T(name)(text)


@pytest.mark.parametrize("name", OURS)
def test_from_numpy_scalar(name):
    d = C["types"][name]
    inputs = [np.dtype(n).type(eval(v)) for n, v in C["np_scalars"]]  # noqa: S307 - repr texts
    _check_outcomes(name, name, inputs, d["from_np_scalar"], T(name),
                    d.get("from_np_scalar_ours"), extra_ok=True)


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("src", OURS)
def test_from_our_scalar(name, src):
    rec = C["types"][name]["from_ours"][src]
    inputs = list(from_codes(src, rec["codes"]))
    _check_outcomes(name, f"{name}<-{src}", inputs, rec["out"], T(name), extra_ok=True)


@pytest.mark.parametrize("name", OURS)
def test_from_own_type_is_identity(name):
    for x in from_codes(name, [0, 1, 3]):
        y = T(name)(x)
        assert type(y) is T(name) and code_of(name, y) == code_of(name, x)


# Sub-byte integer rules (ml_dtypes' intn_test): construction from floats raises like int()
@pytest.mark.parametrize("name", INTS)
def test_int_from_nan_raises_value_error(name):
    with pytest.raises(ValueError):
        T(name)(float("nan"))


@pytest.mark.parametrize("name", INTS)
def test_int_from_huge_float_raises_overflow_error(name):
    with pytest.raises(OverflowError):
        T(name)(1e10)
    with pytest.raises(OverflowError):
        T(name)(float("inf"))


@pytest.mark.parametrize("name", INTS)
def test_int_array_astype_wraps_silently(name):
    bits = {"int1": 1, "int2": 2, "int4": 4, "uint1": 1, "uint2": 2, "uint4": 4}[name]
    src = np.arange(-40, 40, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = src.astype(T(name)).astype(np.int64)
    m = 1 << bits
    want = src % m
    if name.startswith("int"):
        want = np.where(want >= m // 2, want - m, want)
    assert np.array_equal(got, want), f"{name}: {got[:12]} expected {want[:12]}"


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_two_arguments(name):
    args = [tuple(float(v) if "." in v or v in ("inf", "nan") else int(v) for v in a)
            for a in C["two_args"]]
    _check_outcomes(name, name, args, C["types"][name]["two_args"], lambda a: T(name)(*a))


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_from_text(name):
    d = C["types"][name]
    _check_outcomes(name, name, C["complex_strings"], d["from_complex_str"], T(name),
                    d["from_complex_str_ours"])


@pytest.mark.parametrize("name", COMPLEX)
@pytest.mark.parametrize("fn", [float, int])
def test_complex_to_real_python_number_warns(name, fn):
    with pytest.warns(np.exceptions.ComplexWarning):
        assert fn(T(name)(1.5 + 2j)) == fn(1.5)
