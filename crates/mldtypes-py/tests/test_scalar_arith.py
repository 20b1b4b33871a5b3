"""Scalar arithmetic and comparisons (vectors/scalar_arith.json.gz, ml_dtypes 0.6.0): between
scalars of one type, mixed with Python and NumPy scalars (result type and value), against
unrelated objects (TypeError or not, as np.float32 / np.int32), and the sub-byte integer
division rules."""

import numpy as np
import pytest

import npversions
from conftest import INTS, OURS, describe, from_codes, load_json, outcome, same_outcome

A = load_json("scalar_arith")
OPFN = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
        "truediv": lambda x, y: x / y, "floordiv": lambda x, y: x // y,
        "mod": lambda x, y: x % y, "pow": lambda x, y: x ** y, "divmod": divmod,
        "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
UNARY = {"neg": lambda x: -x, "pos": lambda x: +x, "abs": abs}
MIXED = {"py_int_2": lambda: 2, "py_float_2.5": lambda: 2.5, "py_bool": lambda: True,
         "py_complex": lambda: 1.5j, "np_float16": lambda: np.float16(2.5),
         "np_float32": lambda: np.float32(2.5), "np_float64": lambda: np.float64(2.5),
         "np_int8": lambda: np.int8(3), "np_int32": lambda: np.int32(3),
         "np_int64": lambda: np.int64(3), "np_uint8": lambda: np.uint8(3),
         "np_bool": lambda: np.bool_(True), "np_complex64": lambda: np.complex64(1 + 1j),
         "np_longdouble": lambda: np.longdouble(2.5),
         "np_array0d_float32": lambda: np.array(2.5, dtype=np.float32),
         "np_array1d_float32": lambda: np.array([2.5, -1.0], dtype=np.float32)}
UNRELATED = {"none": lambda: None, "str": lambda: "a", "list": lambda: [1, 2],
             "tuple": lambda: (1,), "dict": lambda: {}, "object": object}


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__}
    if isinstance(r, tuple):
        return {"tuple": [describe(x) for x in r]}
    return describe(r)


def _same(want, got, nan_equal):
    want = {k: v for k, v in want.items() if k != "warnings"}
    if "tuple" in want:
        return "tuple" in got and len(want["tuple"]) == len(got["tuple"]) and all(
            same_outcome(a, b, nan_equal) for a, b in zip(want["tuple"], got["tuple"]))
    return same_outcome(want, got, nan_equal)


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("op", list(OPFN))
def test_same_type(name, op):
    """Values (any NaN equals any NaN)."""
    _same_type(name, op, True)


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("op", list(OPFN))
def test_same_type_nan_bits(name, op):
    """The NaN bit patterns too."""
    _same_type(name, op, False)


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("op", list(OPFN))
def test_same_type_no_spurious_warning(name, op):
    """No RuntimeWarning where ml_dtypes emits none."""
    import warnings
    d = A["types"][name]
    xs = list(from_codes(name, d["codes"]))
    bad = []
    for i, x in enumerate(xs):
        for j, y in enumerate(xs):
            if d["same"][op][i][j].get("warnings"):
                continue
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    OPFN[op](x, y)
                except Exception:  # noqa: BLE001 - values are checked elsewhere
                    pass
            got = [str(q.message) for q in w if issubclass(q.category, RuntimeWarning)]
            if got:
                bad.append(f"  {d['codes'][i]:#x} {op} {d['codes'][j]:#x}: {got}")
    assert not bad, f"{name} {op}: spurious RuntimeWarning\n" + "\n".join(bad[:10])


def _same_type(name, op, nan_equal):
    import warnings
    d = A["types"][name]
    xs = list(from_codes(name, d["codes"]))
    bad = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, x in enumerate(xs):
            for j, y in enumerate(xs):
                want = d["same"][op][i][j]
                got = _outcome(lambda: OPFN[op](x, y))
                if not _same(want, got, nan_equal):
                    bad.append(f"  {d['codes'][i]:#x} {op} {d['codes'][j]:#x}: expected "
                               f"{ {k: v for k, v in want.items() if k != 'warnings'} }, "
                               f"got {got}")
    assert not bad, f"{name} {op}: {len(bad)} of {len(xs) ** 2} differ\n" + "\n".join(bad[:10])


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(name, op):
    d = A["types"][name]
    xs = list(from_codes(name, d["codes"]))
    bad = []
    for c, x, want in zip(d["codes"], xs, d["unary"][op]):
        got = outcome(lambda: UNARY[op](x))
        if not same_outcome(want, got, nan_equal=True):
            bad.append(f"  {op}({c:#x}): expected {want}, got {got}")
    assert not bad, f"{name}: " + "\n".join(bad[:10])


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("label", list(MIXED))
def test_mixed_with_python_and_numpy_scalars(name, label):
    d = A["types"][name]
    x = from_codes(name, [d["mixed_code"]])[0]
    bad = []
    for op, want in d["mixed"][label].items():
        if op.startswith("r"):
            got = outcome(lambda: OPFN[op[1:]](MIXED[label](), x))
            text = f"{label} {op[1:]} {name}"
        else:
            got = outcome(lambda: OPFN[op](x, MIXED[label]()))
            text = f"{name} {op} {label}"
        if (npversions.SCALAR_PY_INT_PROMOTES and label == "py_int_2" and name not in INTS
                and want.get("type") == name):
            # NumPy 2.0 computes in float32 / complex64 (see npversions)
            c = npversions.scalar_counterpart(name)
            fn = OPFN[op[1:]] if op.startswith("r") else OPFN[op]
            pair = (2, c(x)) if op.startswith("r") else (c(x), 2)
            want = outcome(lambda: fn(*pair))
        if not same_outcome(want, got, nan_equal=True):
            bad.append(f"  {text}: expected {want}, got {got}")
    assert not bad, f"{name} (code {d['mixed_code']:#x}):\n" + "\n".join(bad)


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("label", list(UNRELATED))
def test_unrelated_objects(name, label):
    d = A["types"][name]
    x = from_codes(name, [d["mixed_code"]])[0]
    bad = []
    for op, want in d["unrelated"][label].items():
        got = outcome(lambda: OPFN[op](x, UNRELATED[label]()))
        if not same_outcome(want, got):
            bad.append(f"  {name} {op} {label}: expected {want}, got {got}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("label", list(UNRELATED))
def test_unrelated_reference_is_numpy(label):
    """The recorded ml_dtypes behaviour is NumPy's (np.float32 / np.int32) for every type."""
    for rname in ("float32", "int32"):
        ref = A["builtin_reference"][rname][label]
        for op in ("eq", "ne", "lt"):
            assert ("error" in ref[op]) == ("error" in A["types"]["bfloat16"]["unrelated"][
                label][op]), (rname, label, op)


@pytest.mark.parametrize("name", INTS)
@pytest.mark.parametrize("op", ["floordiv", "mod"])
def test_int_division_by_zero_raises(name, op):
    t = getattr(__import__("mldtypes"), name)
    with pytest.raises(ZeroDivisionError):
        OPFN[op](t(1), t(0))


@pytest.mark.parametrize("name", INTS)
def test_int_array_division_by_zero_is_zero(name):
    import warnings
    t = getattr(__import__("mldtypes"), name)
    a = np.array([1, 0], dtype=t)
    b = np.array([0, 0], dtype=t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(np.floor_divide(a, b).astype(np.int64), [0, 0])
        assert np.array_equal(np.remainder(a, b).astype(np.int64), [0, 0])
