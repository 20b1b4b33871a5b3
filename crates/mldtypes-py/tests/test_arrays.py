"""Array printing, sorting, argmax/argmin, nonzero, fill, dot/matmul, arange, byteswap and NumPy's
own reductions, against ml_dtypes 0.6.0 (vectors/arrays.json.gz).

Sorting: ml_dtypes' comparison calls NaN equal to everything, so its order of an array with NaNs
depends on the sort algorithm (e.g. `[.., 126, nan, nan, 240]` for float8_e4m3fn). We check its
exact order on the NaN-free part and NumPy's rule for the whole array: sorted values, NaNs last.
"""

import warnings

import numpy as np
import pytest

import npversions
from conftest import COMPLEX, OURS, T, from_codes, load_json, outcome, same_outcome, to_codes

A = load_json("arrays")
ORDERED = [n for n in OURS if n not in COMPLEX]


def _arr(name, key="codes", d=None):
    return from_codes(name, (d or A[name])[key])


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("case", ["1d", "2d", "scalar0d", "all_codes", "small_ints", "empty",
                                  "zeros_2x3"])
@pytest.mark.parametrize("fn", ["str", "repr"])
def test_print(name, case, fn):
    rec = A[name]["print"][case]
    codes = A[name]["codes"]
    if case == "1d":
        arr = from_codes(name, codes)
    elif case == "2d":
        arr = from_codes(name, codes[:int(np.prod(rec["shape"]))]).reshape(rec["shape"])
    elif case == "scalar0d":
        arr = from_codes(name, codes[:1]).reshape(())
    elif case == "all_codes":
        arr = from_codes(name, rec["codes"])
    elif case == "small_ints":
        arr = np.array([0, 1, 2, 3], dtype=T(name))
    elif case == "empty":
        arr = np.zeros(0, T(name))
    else:
        arr = np.zeros((2, 3), T(name))
    got = {"str": str, "repr": repr}[fn](arr)
    assert got == rec[fn], f"{fn} of {name} {case}:\n{got}\nml_dtypes:\n{rec[fn]}"


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("fn", ["sort", "argsort", "sort_stable", "argsort_stable", "argmax",
                                "argmin"])
def test_sort_without_nan(name, fn):
    d = A[name]["nonan"]
    a = from_codes(name, d["codes"])
    got = {"sort": lambda: to_codes(name, np.sort(a)).tolist(),
           "argsort": lambda: np.argsort(a).tolist(),
           "sort_stable": lambda: to_codes(name, np.sort(a, kind="stable")).tolist(),
           "argsort_stable": lambda: np.argsort(a, kind="stable").tolist(),
           "argmax": lambda: int(np.argmax(a)), "argmin": lambda: int(np.argmin(a))}[fn]()
    assert got == d[fn], f"{fn} of {name} codes {d['codes']}: {got}, ml_dtypes {d[fn]}"


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("kind", ["quicksort", "stable"])
def test_sort_with_nan_puts_nan_last(name, kind):
    a = _arr(name)
    f = a.astype(np.float64)
    s = np.sort(a, kind=kind).astype(np.float64)
    want = np.sort(f)  # NumPy's order: values ascending, NaNs last
    assert np.array_equal(s, want, equal_nan=True), f"{name} {kind}: {s} expected {want}"
    idx = np.argsort(a, kind=kind)
    assert sorted(idx.tolist()) == list(range(len(a)))
    assert np.array_equal(f[idx], want, equal_nan=True), f"{name} argsort {kind}"


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin_with_nan(name, fn):
    """The first NaN wins, as NumPy's floats do (ml_dtypes' vectors)."""
    want = A[name][fn]
    got = int(getattr(np, fn)(_arr(name)))
    assert got == want["value"], f"{fn} of {name} {A[name]['codes']}: {got}, ml_dtypes {want}"


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min(name, fn):
    want = A[name][fn]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = outcome(lambda: getattr(_arr(name), fn)())
    assert same_outcome(want, got, nan_equal=True), f"{name}.{fn}(): {got}, ml_dtypes {want}"


@pytest.mark.parametrize("name", OURS)
def test_nonzero(name):
    want = A[name]["nonzero"]
    got = {"idx": np.nonzero(_arr(name))[0].tolist()}
    assert got == {k: v for k, v in want.items() if k != "warnings"}, (
        f"nonzero of {name} {A[name]['codes']}: {got}, ml_dtypes {want}")


@pytest.mark.parametrize("name", OURS)
def test_fill(name):
    for rec in A[name]["fill"]:
        v = float(rec["value"]) if any(c in rec["value"] for c in ".en") else int(rec["value"])
        arr = np.zeros(3, dtype=T(name))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arr.fill(v)
        except Exception as e:  # noqa: BLE001
            assert rec.get("error") == type(e).__name__, f"{name}.fill({v!r}) raised {e!r}"
            continue
        assert "error" not in rec, f"{name}.fill({v!r}) did not raise {rec['error']}"
        assert to_codes(name, arr).tolist() == rec["codes"], (
            f"{name}.fill({v!r}): {to_codes(name, arr).tolist()}, ml_dtypes {rec['codes']}")


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("fn", ["dot", "matmul", "dot2d", "vecdot"])
def test_dot(name, fn):
    d = A[name]
    x, y = from_codes(name, d["dot_x"]), from_codes(name, d["dot_y"])
    call = {"dot": lambda: np.dot(x, y), "matmul": lambda: x @ y,
            "dot2d": lambda: np.dot(x.reshape(2, 4), y.reshape(4, 2)),
            "vecdot": lambda: np.vecdot(x, y)}[fn]
    got = outcome(call)
    assert same_outcome(d[fn], got, nan_equal=True), f"{fn} on {name}: {got}, ml_dtypes {d[fn]}"


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("case", ["0_5", "m2_2_half", "1_4", "0_3_1"])
def test_arange(name, case):
    args = {"0_5": (0, 5), "m2_2_half": (-2, 2, 0.5), "1_4": (1, 4), "0_3_1": (0, 3, 1)}[case]
    want = A[name]["arange"][case]
    got = outcome(lambda: np.arange(*args, dtype=T(name)))
    if want.get("error") == "TypeError" and "error" not in got:
        # ml_dtypes has no arange for this type; ours must then give the values
        want = {"type": "ndarray", "dtype": name, "shape": list(np.arange(*args).shape),
                "codes": to_codes(name, np.arange(*args).astype(np.float32).astype(
                    T(name))).tolist()}
    assert same_outcome(want, got), f"np.arange{args} dtype={name}: {got}, ml_dtypes {want}"


def _swap_parts(codes):
    """complex32/bcomplex32 codes with the bytes of each 16-bit part swapped."""
    c = np.asarray(codes, dtype=np.uint32)
    return (((c & 0x00FF00FF) << 8) | ((c >> 8) & 0x00FF00FF)).tolist()


@pytest.mark.parametrize("name", OURS)
def test_byteswap(name):
    a = _arr(name)
    want_swap = A[name]["byteswap"]["codes"]
    want_astype = A[name]["newbyteorder_astype"]["codes"]
    if name in COMPLEX:
        # Deliberate difference, as ml_dtypes' main branch (b793a6e) fixed it: each 16-bit
        # part is swapped. ml_dtypes 0.6.0 swaps the first two bytes in place and reverses
        # all four when copying, so its swapped arrays do not round-trip.
        ours = _swap_parts(A[name]["codes"])
        assert want_swap != ours and want_astype != ours
        want_swap = want_astype = ours
    assert to_codes(name, a.byteswap()).tolist() == want_swap
    swapped = a.view(a.dtype.newbyteorder())
    assert to_codes(name, swapped.astype(a.dtype)).tolist() == want_astype


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("fn", ["sum", "prod", "cumsum", "mean"])
def test_numpy_reductions(name, fn):
    """NumPy's own reductions run in the type's arithmetic, as with ml_dtypes."""
    want = A[name]["np_" + fn]
    small = from_codes(name, A[name]["codes"][:6])
    got = outcome(lambda: getattr(np, fn)(small))
    assert same_outcome(want, got, nan_equal=True), (
        f"np.{fn} on {name} {A[name]['codes'][:6]}: {got}, ml_dtypes {want}")


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("fn", ["real", "imag", "real_scalar", "imag_scalar"])
def test_real_imag(name, fn):
    import mldtypes
    a = _arr(name)
    f = getattr(mldtypes, fn.split("_")[0])
    got = outcome(lambda: f(a[1]) if fn.endswith("scalar") else f(a))
    want = A[name][fn]
    assert same_outcome(want, got), f"mldtypes.{fn} on {name}: {got}, ml_dtypes {want}"


@pytest.mark.parametrize("name", OURS)
def test_byteswap_inplace(name):
    a = _arr(name)
    before = a.tobytes()
    swapped = a.byteswap(inplace=False)
    assert swapped is not a and a.tobytes() == before
    b = a.copy()
    assert b.byteswap(inplace=True) is b
    assert b.tobytes() == swapped.tobytes()
    b.byteswap(inplace=True)
    assert b.tobytes() == before
    if a.dtype.itemsize == 1:
        assert swapped.tobytes() == before


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("attr", ["attr_real", "attr_imag", "arr_real", "arr_imag"])
def test_real_imag_attributes(name, attr):
    """`.real` / `.imag` of a scalar and of an array (NumPy 2.4 gives user-dtype arrays
    themselves / zeros, whatever the type; ml_dtypes' complex scalars give their parts).
    NumPy >= 2.5: complex32/bcomplex32 arrays give their parts (npversions.REAL_IMAG_VIEWS),
    the same values as `mldtypes.real` / `imag`, which the vectors hold."""
    a = _arr(name)
    target = a[1] if attr.startswith("attr_") else a
    got = outcome(lambda: getattr(target, attr.split("_")[1]))
    want = A[name][attr]
    if name in COMPLEX and attr.startswith("arr_") and npversions.REAL_IMAG_VIEWS:
        want = A[name][attr.split("_")[1]]
    assert same_outcome(want, got), f"{attr} of {name}: {got}, ml_dtypes {want}"
