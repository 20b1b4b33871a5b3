"""The IEEE P3109 formats as NumPy dtypes: naming, registration on first use, storage, casts
and their safety, scalars, finfo.

Values of every code point against gfloat 0.5.2 are checked by test_p3109_vectors.py; these
tests check the NumPy face against the library's own conversions and NumPy's float64.
"""

import threading
import warnings

import numpy as np
import pytest

import mldtypes

K8 = mldtypes.P3109_K8
OURS_FLOATS = [n for n, f in mldtypes._core._registry() if f == "float"]
OURS_INTS = [n for n, f in mldtypes._core._registry() if f == "int"]


def layout(name):
    """(k, p, signed, extended) from a gfloat name such as ``p3109_k8p3se``."""
    body = name[len("p3109_k"):]
    k, rest = body.split("p")
    return int(k), int(rest[:-2]), rest[-2] == "s", rest[-1] == "e"


def test_the_30_formats_of_width_8():
    assert len(K8) == 30 and len(set(K8)) == 30
    assert {layout(n)[:3] for n in K8} == {(8, p, True) for p in range(1, 8)} | {
        (8, p, False) for p in range(1, 9)}
    for n in K8:
        assert n in mldtypes.__all__
        assert n in dir(mldtypes)
    assert len(mldtypes._core._p3109_names()) == 510


@pytest.mark.parametrize("name", K8)
def test_attribute_function_and_numpy_name_agree(name):
    k, p, signed, extended = layout(name)
    t = getattr(mldtypes, name)
    assert t is mldtypes.p3109(k, p, signed=signed, domain="extended" if extended else "finite")
    assert t.__name__ == name and t.__module__ == "mldtypes"
    assert issubclass(t, np.generic)
    assert np.dtype(name) == np.dtype(t) and np.dtype(t).type is t
    assert np.dtype(t).itemsize == 1
    alias = name.replace("p3109_k", "binary")
    assert getattr(mldtypes, alias) is t


@pytest.mark.parametrize("k,p,signed,message", [
    (8, 8, True, "and p 1 to k - 1$"),
    (8, 9, False, r"\(unsigned\).* and p 1 to k$"),
    (17, 3, True, "k must be 2 to 16"),
    (1, 1, False, "k must be 2 to 16"),
    (8, 0, True, "k=8, p=0"),
    (-1, 3, True, "k=-1"),
])
def test_outside_the_family(k, p, signed, message):
    with pytest.raises(ValueError, match=message):
        mldtypes.p3109(k, p, signed=signed)


def test_bad_domain_and_argument_types():
    with pytest.raises(ValueError, match='"extended" or "finite"'):
        mldtypes.p3109(8, 3, domain="infinite")
    with pytest.raises(TypeError):
        mldtypes.p3109("8", 3)
    with pytest.raises(TypeError):
        mldtypes.p3109(8, 3, True)  # signed is keyword-only
    with pytest.raises(AttributeError, match="p3109_k8p9se"):
        mldtypes.p3109_k8p9se
    with pytest.raises(AttributeError):
        mldtypes.no_such_format


@pytest.mark.parametrize("k", [2, 5, 8, 9, 12, 16])
def test_storage_width(k):
    t = mldtypes.p3109(k, 1, signed=False)
    assert np.dtype(t).itemsize == (1 if k <= 8 else 2)
    assert np.dtype(t).name == f"p3109_k{k}p1ue"


def test_registration_is_once_from_many_threads():
    got = []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        got.append(mldtypes.p3109(11, 4, signed=False, domain="finite"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g is got[0] for g in got)


def codes(t):
    k = layout(t.__name__)[0] if t.__name__.startswith("p3109_") else 8 * np.dtype(t).itemsize
    n = 1 << k
    width = np.uint8 if np.dtype(t).itemsize == 1 else np.uint16
    return np.arange(n, dtype=width).view(t)


@pytest.mark.parametrize("name", K8)
def test_round_trip_through_float32_and_float64(name):
    t = getattr(mldtypes, name)
    c = codes(t)
    for wide in (np.float32, np.float64):
        v = c.astype(wide)
        back = v.astype(t)
        nan = np.isnan(v)
        assert np.array_equal(back.view(np.uint8)[~nan], c.view(np.uint8)[~nan])
        assert np.isnan(back[nan].astype(np.float64)).all()


@pytest.mark.parametrize("name", ["p3109_k8p4sf", "p3109_k8p3sf"])
def test_the_fnuz_twins(name):
    # p3109_k8p4sf has float8_e4m3fnuz's values, p3109_k8p3sf float8_e5m2fnuz's: same codes
    twin = {"p3109_k8p4sf": mldtypes.float8_e4m3fnuz, "p3109_k8p3sf": mldtypes.float8_e5m2fnuz}
    t = getattr(mldtypes, name)
    c = codes(t)
    assert np.array_equal(c.astype(twin[name]).view(np.uint8), c.view(np.uint8))
    assert np.can_cast(t, twin[name]) and np.can_cast(twin[name], t)


def values(t):
    """Every value of `t` as float64 (every K <= 8 format fits)."""
    return codes(t).astype(np.float64)


def holds(values_of_a, b):
    """Whether every value survives a round trip through `b` (NaN stays NaN, -0 stays -0)."""
    with np.errstate(over="ignore"), warnings.catch_warnings():
        # a value that does not fit may overflow, a complex target drops nothing here
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        r = values_of_a.astype(b).astype(np.float64)
    same = (r == values_of_a) & (np.signbit(r) == np.signbit(values_of_a))
    return bool(np.all(same | (np.isnan(r) & np.isnan(values_of_a))))


def test_safe_casts_are_exactly_where_every_value_fits():
    ts = [getattr(mldtypes, n) for n in K8]
    named = [getattr(mldtypes, n) for n in OURS_FLOATS]
    for a in ts:
        va = values(a)
        for b in ts + named:
            if a is b:
                continue
            assert np.can_cast(a, b) == holds(va, b), (a, b)
            vb = values(b)
            assert np.can_cast(b, a) == holds(vb, a), (b, a)
        for b in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
            assert np.can_cast(a, b) == holds(va, b), (a, b)
        for i in [np.bool_, np.uint8, np.int8, np.uint16, np.int16]:
            info = (0, 1) if i is np.bool_ else (np.iinfo(i).min, np.iinfo(i).max)
            vi = np.arange(info[0], info[1] + 1, dtype=np.float64)
            assert np.can_cast(i, a) == holds(vi, a), (i, a)
        for n in OURS_INTS:
            ii = mldtypes.iinfo(getattr(mldtypes, n))
            vi = np.arange(ii.min, ii.max + 1, dtype=np.float64)
            assert np.can_cast(getattr(mldtypes, n), a) == holds(vi, a), (n, a)
            assert not np.can_cast(a, getattr(mldtypes, n)), (a, n)  # NaN, fractions


def test_casts_with_every_registered_type_both_ways():
    t = mldtypes.p3109(8, 4)
    x = np.array([0, 1, -1.5, 2, 3], np.float32)
    a = x.astype(t)
    for n, family in mldtypes._core._registry():
        other = getattr(mldtypes, n)
        there = a.astype(other)
        assert there.dtype == np.dtype(other)
        if family == "complex":
            with pytest.warns(np.exceptions.ComplexWarning):
                back = there.astype(t)
        else:
            back = there.astype(t)
        if family == "int":
            ii = mldtypes.iinfo(other)
            keep = (x == np.round(x)) & (x >= ii.min) & (x <= ii.max)
            assert np.array_equal(back.astype(np.float32)[keep], x[keep]), n
        elif n != "float8_e8m0fnu" and n not in ("float4_e2m1fn",):
            assert np.array_equal(back.astype(np.float32), x), n
    # another P3109 format
    u = mldtypes.p3109(8, 5, signed=True, domain="finite")
    assert np.array_equal(a.astype(u).astype(np.float32), x)


def test_round_to_nearest_even_without_saturation():
    t = mldtypes.p3109_k8p3se   # values 1, 1.25, 1.5, 1.75, 2, ...; max 49152, +inf at 0x7f
    x = np.array([1.125, 1.375, 1.0625, 49152, 53248, 53249, 1e30, -1e30, np.inf, np.nan])
    y = x.astype(t).astype(np.float64)
    assert y[:4].tolist() == [1.0, 1.5, 1.0, 49152.0]
    assert y[4] == 49152.0           # tie between 49152 and 57344 (beyond max): to even
    assert y[5] == np.inf and y[6] == np.inf and y[7] == -np.inf and y[8] == np.inf
    assert np.isnan(y[9])
    f = mldtypes.p3109_k8p3sf       # finite domain: overflow gives NaN
    assert np.isnan(np.float64(1e30).astype(f).astype(np.float64))
    assert np.isnan(np.array(np.inf).astype(f).astype(np.float64))


def test_unsigned_formats_have_no_negative_values():
    t = mldtypes.p3109_k8p3ue
    y = np.array([-1.0, -0.0, 0.0, 2.0]).astype(t)
    assert np.isnan(y[0].astype(np.float64)) and y.view(np.uint8)[0] == 0xFF
    assert y.view(np.uint8)[1:].tolist() == [0, 0, y.view(np.uint8)[3]]


def test_one_nan_and_no_negative_zero_in_signed_formats():
    t = mldtypes.p3109_k8p3se
    c = codes(t).astype(np.float64)
    assert np.isnan(c).sum() == 1 and np.isnan(c[0x80])
    assert np.array(-0.0).astype(t).view(np.uint8) == 0
    assert c[0x7F] == np.inf and c[0xFF] == -np.inf


def test_wide_formats_round_to_float64():
    # 15 exponent bits: beyond float64's range in both directions
    t = mldtypes.p3109(16, 1)
    assert np.array([2.0**1000]).astype(t).astype(np.float64)[0] == 2.0**1000
    big = np.frombuffer(np.array([0x7FFE], np.uint16).tobytes(), dtype=t)
    assert big.astype(np.float64)[0] == np.inf      # 2^16383 rounds to +inf in float64
    assert not np.can_cast(t, np.float64)
    assert np.can_cast(mldtypes.p3109(16, 5), np.float64)      # 11 exponent bits
    assert not np.can_cast(mldtypes.p3109(16, 7), np.float32)  # 9 exponent bits


def test_scalars():
    t = mldtypes.p3109_k8p3se
    assert float(t(1.3)) == 1.25
    assert repr(t(3.0)) == "3" and str(t(-0.75)) == "-0.75"
    assert t("1.7") == t(1.75) and t(b"2") == t(2)
    assert float(t(1.0) + t(0.5)) == 1.5 and float(t(3) * t(2)) == 6.0
    assert float(-t(2)) == -2.0 and int(t(7.0)) == 7
    assert hash(t(2.0)) == hash(2.0)
    assert t(1.5) < t(1.75) and t(2) == t(2)
    assert np.isnan(float(t(np.nan)))
    assert float(t(np.float32(0.3))) == float(np.float32(0.3).astype(t))
    assert float(np.array(1.5, np.float32).astype(t)[()]) == 1.5
    with pytest.raises(ValueError, match="could not convert string to float"):
        t("1.5.5")
    with pytest.raises(TypeError, match="expected number"):
        t(object())


def test_finfo():
    fi = mldtypes.finfo(mldtypes.p3109_k8p3se)
    assert float(fi.max) == 49152.0 and float(fi.smallest_normal) == 2.0**-15
    assert float(fi.smallest_subnormal) == 2.0**-17 and float(fi.eps) == 0.25
    assert fi.bits == 8 and fi.nmant == 2 and fi.nexp == 5
    assert mldtypes.finfo("p3109_k8p3se") is fi
    assert np.finfo(mldtypes.p3109_k8p3se) is fi
    w = mldtypes.p3109(12, 5, signed=False)
    assert np.finfo(w) is mldtypes.finfo(w)
    u = mldtypes.finfo(mldtypes.p3109_k8p1ue)
    assert float(u.max) == 2.0**125 and float(u.min) == 0.0


def test_sort_argmax_nonzero_and_dot():
    t = mldtypes.p3109_k8p4se
    x = np.array([3, -1, np.nan, 0, 2, -np.inf], np.float32).astype(t)
    s = np.sort(x).astype(np.float32)
    assert s[:5].tolist() == [-np.inf, -1, 0, 2, 3] and np.isnan(s[5])
    assert np.argmax(np.array([1, 3, 2], np.float32).astype(t)) == 1
    assert np.nonzero(x)[0].tolist() == [0, 1, 2, 4, 5]
    assert float(np.dot(np.full(4, 2, np.float32).astype(t), np.ones(4, np.float32).astype(t))) == 8.0


UFUNC_FORMATS = ["p3109_k8p3se", "p3109_k8p4sf", "p3109_k8p1uf", "p3109_k6p2uf", "p3109_k4p2se",
                 "p3109_k16p8se", "p3109_k12p5ue"]
UNARY = ["negative", "positive", "absolute", "sign", "square", "reciprocal", "exp", "exp2",
         "expm1", "log", "log2", "log1p", "sqrt", "cbrt", "sin", "cos", "tanh", "arctan",
         "arcsinh", "floor", "ceil", "rint", "trunc", "deg2rad"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "copysign", "nextafter", "fmod", "floor_divide"]
COMPARE = ["less", "less_equal", "equal", "not_equal", "greater", "greater_equal"]


def every_code(t):
    bits = np.dtype(t).itemsize * 8
    k = int(np.dtype(t).name.split("_k")[1].split("p")[0])
    codes = np.arange(min(1 << k, 1 << 12), dtype=np.uint16 if bits == 16 else np.uint8)
    if k > 12:
        codes = np.random.default_rng(k).integers(0, 1 << k, 4096).astype(np.uint16)
        codes[:4] = [0, 1, 1 << (k - 1), (1 << k) - 1]
    return codes.view(t)


def same_codes(got, want):
    assert got.dtype == want.dtype
    bad = np.flatnonzero(got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}"))
    assert bad.size == 0, (bad[:5], got[bad[:5]], want[bad[:5]])


@pytest.mark.parametrize("name", UFUNC_FORMATS)
def test_unary_ufuncs_compute_in_float32_and_round_once_more(name):
    """Every one-operand loop: the float32 function of the float32 value, rounded to the
    format (ml_dtypes' definition for its float types), on every code point."""
    t = getattr(mldtypes, name)
    x = every_code(t)
    with np.errstate(all="ignore"):
        for u in UNARY:
            f = getattr(np, u)
            same_codes(f(x), f(x.astype(np.float32)).astype(t))


@pytest.mark.parametrize("name", UFUNC_FORMATS)
def test_binary_ufuncs_and_comparisons(name):
    t = getattr(mldtypes, name)
    x = every_code(t)
    if x.size > 256:
        x = x[np.random.default_rng(1).integers(0, x.size, 256)]
    a, b = np.repeat(x, x.size), np.tile(x, x.size)
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        for u in BINARY:
            f = getattr(np, u)
            if u in ("nextafter", "copysign"):
                continue  # rules on the codes: checked below
            same_codes(f(a, b), f(fa, fb).astype(t))
        for u in COMPARE:
            f = getattr(np, u)
            got = f(a, b)
            assert got.dtype == np.bool_ and (got == f(fa, fb)).all(), u


def test_copysign_on_the_codes_as_for_the_fnuz_types():
    """copysign moves the sign bit, as ml_dtypes' float8_*fnuz types do: in a signed P3109
    format 0 with a negative sign is the NaN code; unsigned formats keep the first operand."""
    t = mldtypes.p3109_k8p3se
    a = np.array([0, 1.5, -2, 3], np.float32).astype(t)
    b = np.array([-1, -1, 1, np.nan], np.float32).astype(t)
    assert np.copysign(a, b).view(np.uint8).tolist() == [0x80, a.view(np.uint8)[1] | 0x80,
                                                         a.view(np.uint8)[3 - 1] & 0x7F, a.view(np.uint8)[3] | 0x80]
    u = mldtypes.p3109_k6p2uf
    x = np.array([0, 1.5, 2], np.float32).astype(u)
    assert (np.copysign(x, x[::-1]).view(np.uint8) == x.view(np.uint8)).all()


def test_nextafter_steps_one_code_of_the_format():
    t = mldtypes.p3109_k8p3se
    one = np.array([1.0, 1.0, 0.0], np.float32).astype(t)
    to = np.array([2.0, 0.0, 1.0], np.float32).astype(t)
    got = np.nextafter(one, to).astype(np.float64)
    step = 2.0 ** -2  # three bits of precision: 1, 1.25, 1.5, ...
    assert got[0] == 1 + step and got[1] == 1 - step / 2
    assert got[2] == float(mldtypes.finfo(t).smallest_subnormal)


def test_ufunc_flags_and_reductions():
    t = mldtypes.p3109_k8p3se
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(2, t))
    x = np.array([1, 2, 3, 0.5], np.float32).astype(t)
    # accumulated in the format, as NumPy sums: 6 + 0.5 is a tie between 6 and 7 (three bits
    # of precision), rounded to even
    assert x.sum().dtype == t and float(x.sum()) == 6
    assert float(x.max()) == 3 and int(x.argmin()) == 3
