"""Sorting and searching (`np.sort`, `np.argsort`, `np.lexsort`, `np.searchsorted`, `np.unique`,
`np.partition`, `np.median`) against NumPy's results on the float32 image of the same data.

Our `sort`/`argsort` are a counting sort over the one-byte codes and a radix sort of bfloat16
codes, in NumPy's float order: by value, NaN last, `-0 == +0`, every NaN equal to every other.
Every kind is stable: equal values (both zeros, NaNs of any sign or payload) keep their input
order, which is what float32's `kind="stable"` gives. The references below are float32's
stable sorts, and Python's stable `sorted` with the key (is NaN, value).
"""

import numpy as np
import pytest

from conftest import FLOATS, INTS, T

ONE_BYTE = [n for n in FLOATS if n != "bfloat16"] + INTS
REAL = FLOATS + INTS
KINDS = ["quicksort", "heapsort", "stable"]


def image(name, a):
    """The float32 image of an array of our type (integers: their values)."""
    return a.astype(np.float32)


def raw(a):
    """The stored bytes of an array of our type, as unsigned integers."""
    return np.ascontiguousarray(a).view({1: np.uint8, 2: np.uint16}[a.itemsize])


def python_order(vals):
    """Stable order of float values: NaN last, -0 == +0 (Python's sorted is stable)."""
    return sorted(range(len(vals)), key=lambda i: (vals[i] != vals[i], 0.0 if vals[i] != vals[i]
                                                   else float(vals[i])))


def all_bytes(name, repeat=3, seed=0):
    """Every stored byte value (sub-byte types: every code, and the ignored high bits set too),
    each `repeat` times, shuffled."""
    rng = np.random.default_rng(seed)
    codes = np.tile(np.arange(256, dtype=np.uint8), repeat)
    rng.shuffle(codes)
    return codes.view(T(name))


def messy_f32(n, seed):
    """Random float32 with NaNs of both signs, infinities and both zeros."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 8).astype(np.float32)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    pick = rng.random(n) < 0.2
    x[pick] = rng.choice(specials, int(pick.sum()))
    return x


def data(name, n, seed):
    x = messy_f32(n, seed)
    if name in INTS:
        rng = np.random.default_rng(seed)
        return rng.integers(-8, 8, n).astype(T(name))
    if name == "float8_e8m0fnu":
        x = np.abs(x)
    return x.astype(T(name))


@pytest.mark.parametrize("name", ONE_BYTE)
@pytest.mark.parametrize("kind", KINDS)
def test_every_code_sorts_stably(name, kind):
    """Every byte value, three times each, shuffled: the sorted bytes are Python's stable order
    of the values (so a permutation of the input), for every kind."""
    a = all_bytes(name)
    vals = image(name, a).tolist()
    want = raw(a)[python_order(vals)]
    got = raw(np.sort(a, kind=kind))
    assert np.array_equal(got, want), f"{name} {kind}"


@pytest.mark.parametrize("name", ONE_BYTE)
@pytest.mark.parametrize("kind", KINDS)
def test_every_code_argsort_is_stable(name, kind):
    a = all_bytes(name, seed=1)
    got = np.argsort(a, kind=kind)
    assert got.tolist() == python_order(image(name, a).tolist())
    assert np.array_equal(got, np.argsort(image(name, a), kind="stable"))


@pytest.mark.parametrize("kind", KINDS)
def test_bfloat16_every_code(kind):
    """All 65536 bfloat16 codes, twice, shuffled: sorted as float32's stable sort orders them."""
    rng = np.random.default_rng(2)
    codes = np.tile(np.arange(65536, dtype=np.uint16), 2)
    rng.shuffle(codes)
    a = codes.view(T("bfloat16"))
    order = np.argsort(image("bfloat16", a), kind="stable")
    assert np.array_equal(np.argsort(a, kind=kind), order)
    assert np.array_equal(raw(np.sort(a, kind=kind)), codes[order])


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 65, 1000, 100_003])
def test_random_data_matches_float32(name, n):
    a = data(name, n, seed=n)
    f = image(name, a)
    order = np.argsort(f, kind="stable")
    for kind in KINDS:
        assert np.array_equal(np.argsort(a, kind=kind), order), f"{name} argsort {kind}"
        s = np.sort(a, kind=kind)
        assert np.array_equal(raw(s), raw(a)[order]), f"{name} sort {kind}"
        assert np.array_equal(image(name, s), np.sort(f), equal_nan=True)


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2fnuz", "int4"])
def test_axes_views_and_in_place(name):
    a = data(name, 6 * 50, seed=3).reshape(6, 50)
    f = image(name, a)
    for axis in (0, 1, -1):
        assert np.array_equal(np.argsort(a, axis=axis, kind="stable"),
                              np.argsort(f, axis=axis, kind="stable"))
        assert np.array_equal(image(name, np.sort(a, axis=axis)), np.sort(f, axis=axis),
                              equal_nan=True)
    v = a[:, ::3]  # strided: NumPy sorts a contiguous copy
    assert np.array_equal(image(name, np.sort(v)), np.sort(f[:, ::3]), equal_nan=True)
    b = a.copy()
    b.sort(kind="stable")
    assert np.array_equal(raw(b), np.take_along_axis(raw(a), np.argsort(f, kind="stable"), -1))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "uint2"])
def test_lexsort_uses_stable_argsort(name):
    """`np.lexsort` re-sorts the previous key's order with our stable argsort."""
    k1 = data(name, 500, seed=4)
    k2 = np.random.default_rng(5).integers(0, 4, 500)
    assert np.array_equal(np.lexsort((k2, k1)), np.lexsort((k2, image(name, k1))))
    assert np.array_equal(np.lexsort((k1, k2)), np.lexsort((image(name, k1), k2)))


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(name, side):
    a = np.sort(data(name, 2000, seed=6))
    v = data(name, 300, seed=7)
    got = np.searchsorted(a, v, side=side)
    assert np.array_equal(got, np.searchsorted(image(name, a), image(name, v), side=side))


@pytest.mark.parametrize("name", REAL)
def test_unique(name):
    """Values, first indices and counts as float32's; NaNs are not merged (`equal_nan=False`,
    as NumPy does for every dtype that is not of kind f/c)."""
    a = data(name, 3000, seed=8)
    f = image(name, a)
    u, idx, cnt = np.unique(a, return_index=True, return_counts=True, equal_nan=False)
    fu, fidx, fcnt = np.unique(f, return_index=True, return_counts=True, equal_nan=False)
    assert np.array_equal(image(name, u), fu, equal_nan=True)
    assert np.array_equal(cnt, fcnt)
    assert np.array_equal(image(name, a[idx]), f[fidx], equal_nan=True)


@pytest.mark.parametrize("name", REAL)
def test_partition(name):
    a = data(name, 1001, seed=9)
    s = np.sort(image(name, a))
    for k in (0, 1, 500, 999, 1000):
        p = image(name, np.partition(a, k))
        assert np.array_equal(p[k:k + 1], s[k:k + 1], equal_nan=True), f"{name} k={k}"
        left, right = p[:k], p[k + 1:]
        if not np.isnan(p[k]):
            assert (left <= p[k]).all()
        assert ((right >= p[k]) | np.isnan(right)).all()
        i = np.argpartition(a, k)
        assert np.array_equal(image(name, a)[i][k:k + 1], s[k:k + 1], equal_nan=True)


@pytest.mark.parametrize("name", [n for n in REAL if n != "float8_e8m0fnu"])
def test_median_of_odd_length_without_nan(name):
    """An odd length makes the median one element (no rounding of a mean in our type); NaN-free,
    since NumPy's NaN check in `median` applies to kinds f/c only. float8_e8m0fnu is left out:
    it has no zero, so NumPy's `mean` (a sum from zero) is NaN, in ml_dtypes too."""
    a = data(name, 2001, seed=10)
    f = image(name, a)
    keep = ~np.isnan(f)
    a, f = a[keep][: (int(keep.sum()) - 1) | 1], f[keep][: (int(keep.sum()) - 1) | 1]
    assert len(a) % 2 == 1
    assert float(np.median(a)) == float(np.median(f))
