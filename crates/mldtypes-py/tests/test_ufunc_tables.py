"""The table-driven float loops against their scalar path, on every input, results and flags.

Every one-operand float ufunc reads a result table built on first use (or, for bfloat16's bit
functions and vectorisable float32 functions, runs a vector kernel), and every two-operand ufunc
of the one-byte formats reads a table of operand pairs. `mldtypes._core._ufunc_check(ufunc,
dtype)` runs the registered loop on every input (every stored code; every pair of one-byte
codes), one element per call and then all inputs in one call (contiguous and every second
element), and compares each result and each input's floating-point flags (invalid, divide by
zero, overflow, underflow) with the ufunc's scalar definition evaluated one element at a time.

The default run sweeps every one-operand ufunc of every format and the pair tables of three
formats on the kernel path this CPU selects, and bfloat16's vector kernels and a sample on the
other paths; `MLDTYPES_FULL_SWEEP=1` sweeps everything on every path.
"""

import os

import numpy as np
import pytest

import mldtypes

FULL = os.environ.get("MLDTYPES_FULL_SWEEP") == "1"

FORMATS = [
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float6_e2m3fn", "float6_e3m2fn",
    "float4_e2m1fn", "float8_e8m0fnu",
]
UNARY = [
    "negative", "positive", "absolute", "fabs", "rint", "sign", "conjugate", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "cbrt", "reciprocal", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "deg2rad", "rad2deg", "floor", "ceil", "trunc", "spacing", "isfinite", "isinf",
    "isnan", "signbit", "logical_not", "modf", "frexp",
]
PAIRS = [
    "add", "subtract", "multiply", "divide", "true_divide", "logaddexp", "logaddexp2",
    "floor_divide", "power", "float_power", "remainder", "mod", "fmod", "divmod", "arctan2",
    "hypot", "heaviside", "copysign", "nextafter", "logical_and", "logical_or", "logical_xor",
]
BF16_KERNELS = [
    "negative", "positive", "absolute", "fabs", "sign", "conjugate", "rint", "floor", "ceil",
    "trunc", "square", "reciprocal", "deg2rad", "rad2deg", "isfinite", "isinf", "isnan",
    "signbit", "logical_not", "frexp",
]
PAIR_FORMATS = FORMATS[1:] if FULL else ["float8_e4m3fn", "float8_e5m2fnuz", "float4_e2m1fn"]


def paths():
    """The kernel paths this CPU can run (the detected one first)."""
    detected = mldtypes._core._kernel_path()
    out = [detected]
    for p in ("avx2", "portable"):
        if p == detected:
            continue
        try:
            mldtypes._core._set_kernel_path(p)
        except ValueError:
            continue
        finally:
            mldtypes._core._set_kernel_path(None)
        out.append(p)
    return out


PATHS = paths()


def check(ufunc, name):
    r = mldtypes._core._ufunc_check(ufunc, np.dtype(getattr(mldtypes, name)))
    assert r["inputs"] in (256, 65536, 2 * 16 * 65536 + (1 << 20))
    assert r["mismatches"] == 0, f"{ufunc} on {name}: {r['mismatches']} mismatches, {r['first']}"


@pytest.fixture(params=PATHS)
def kernel_path(request):
    if request.param != PATHS[0]:
        mldtypes._core._set_kernel_path(request.param)
    yield request.param
    mldtypes._core._set_kernel_path(None)


@pytest.mark.parametrize("name", FORMATS)
def test_every_unary_ufunc_every_input(name, kernel_path):
    if kernel_path != PATHS[0] and not FULL:
        ufuncs = (BF16_KERNELS + ["exp", "exp2", "arcsin", "cbrt"] if name == "bfloat16"
                  else ["exp", "sign", "isnan", "negative", "absolute", "frexp"])
    else:
        ufuncs = UNARY
    for ufunc in ufuncs:
        check(ufunc, name)


@pytest.mark.parametrize("ufunc", ["exp", "exp2"])
def test_bf16_exp_computed_on_vector_paths(ufunc, kernel_path):
    """bfloat16 `exp` / `exp2` compute in vectors on the AVX2 and AVX-512
    paths (their exceptions, found against the table when it is built, are
    at most four codes), and read the table on the portable path; every
    input equal to the table either way."""
    r = mldtypes._core._ufunc_check(ufunc, np.dtype(mldtypes.bfloat16))
    assert r["mismatches"] == 0, r["first"]
    assert r["computed"] == (kernel_path in ("avx2", "avx512"))
    # Blocks of 4,096 codes within the range raise nothing; one code
    # beyond it, anywhere, raises overflow once.
    x = np.linspace(-20, 20, 3 * 4096 + 7).astype(mldtypes.bfloat16)
    quiet_blocks_then_one_loud(getattr(np, ufunc), x, kernel_path, 200, "overflow")


def quiet_blocks_then_one_loud(f, x, kernel_path, loud, flag):
    """`f(x)` raises nothing and equals the portable path's results (the table's); `loud` put
    at one place at a time (in the first block of 4,096, past the second's vector steps, the
    last element) raises `flag` once, the other results unchanged."""
    with np.errstate(all="raise"):
        y = f(x)
    mldtypes._core._set_kernel_path("portable")
    try:
        want = f(x).view(np.uint16)
    finally:
        mldtypes._core._set_kernel_path(None if kernel_path == PATHS[0] else kernel_path)
    assert (y.view(np.uint16) == want).all()
    for at in (5, 4096 + 31, len(x) - 1):
        z = x.copy()
        z[at] = loud
        with np.errstate(all="raise"), pytest.raises(FloatingPointError, match=flag):
            f(z)
        with np.errstate(all="ignore"):
            got = f(z).view(np.uint16)
        keep = np.arange(len(z)) != at
        assert (got[keep] == want[keep]).all()


@pytest.mark.parametrize(("ufunc", "fields", "loud", "flag"), [
    # The exponent fields where input and result are normal: square 2 (e − 127) + 127
    # (+1) within 2 ..= 253; reciprocal 254 − e (−1); deg2rad e − 6 (+1); rad2deg e + 5 (+1).
    ("square", (65, 189), 1e30, "overflow"),
    ("reciprocal", (1, 251), 0.0, "divide"),
    ("deg2rad", (8, 254), 1e-37, "underflow"),
    ("rad2deg", (1, 247), 3e38, "overflow"),
])
def test_bf16_binade_forms(ufunc, fields, loud, flag, kernel_path):
    """bfloat16 `square`, `reciprocal`, `deg2rad` and `rad2deg` look up their fraction bits on
    the AVX-512 path for the exponent fields derived from the scalar definition, and take the
    float32 instruction elsewhere; every input equal to the scalar path either way, and a code
    outside the fields anywhere in a block raises its flag with the other results unchanged."""
    r = mldtypes._core._ufunc_check(ufunc, np.dtype(mldtypes.bfloat16))
    assert r["mismatches"] == 0, r["first"]
    assert r["binade"] == (fields if kernel_path == "avx512" else None)
    mag = np.geomspace(1e-3, 1e3, 3 * 4096 + 7)
    x = (mag * np.where(np.arange(mag.size) % 3 == 0, -1, 1)).astype(mldtypes.bfloat16)
    quiet_blocks_then_one_loud(getattr(np, ufunc), x, kernel_path, loud, flag)


@pytest.mark.parametrize("name", PAIR_FORMATS)
def test_pair_tables_every_pair(name, kernel_path):
    ufuncs = PAIRS if kernel_path == PATHS[0] or FULL else ["add", "divmod"]
    for ufunc in ufuncs:
        check(ufunc, name)


BF16_PAIR_KERNELS = ["heaviside", "copysign", "nextafter", "logical_and", "logical_or",
                     "logical_xor"]


def test_bf16_pair_kernels(kernel_path):
    """bfloat16's two-operand bit kernels: every code paired both ways with every class."""
    ufuncs = BF16_PAIR_KERNELS if kernel_path == PATHS[0] or FULL else ["nextafter"]
    for ufunc in ufuncs:
        check(ufunc, "bfloat16")


BF16_LIBM = ["floor_divide", "remainder", "mod", "divmod", "fmod", "logaddexp", "logaddexp2",
             "power", "float_power", "hypot", "arctan2"]
# `mod` and `float_power` run the loops of `remainder` and `power`; on the other paths the
# default run takes the loops whose vector code is arithmetic (trunc, floor, division, sqrt).
BF16_LIBM_OTHER_PATHS = ["divmod", "fmod", "power", "hypot"]


@pytest.mark.parametrize("ufunc", BF16_LIBM)
def test_bf16_libm_loops(ufunc, kernel_path):
    """bfloat16's chunked loops of the functions ml_dtypes computes with the C library, against
    their float32 definition evaluated one element at a time: every code paired both ways with
    every class, and 2^20 random pairs; results and flags, one element per call and all in one
    call (contiguous and every second element)."""
    if not FULL and (ufunc in ("mod", "float_power")
                     or kernel_path != PATHS[0] and ufunc not in BF16_LIBM_OTHER_PATHS):
        pytest.skip("MLDTYPES_FULL_SWEEP=1 checks it")
    check(ufunc, "bfloat16")


@pytest.mark.parametrize("ufunc, bad, flag", [
    ("floor_divide", (1.0, float("nan")), "invalid"),
    ("floor_divide", (3e38, 1e-30), "over"),
    ("floor_divide", (1.0, 0.0), None),
    ("remainder", (float("inf"), 1.0), "invalid"),
    ("remainder", (3e38, 1e-30), "over"),
    ("fmod", (float("inf"), 1.0), "invalid"),
    ("fmod", (1.0, 0.0), "invalid"),
    ("fmod", (3e38, 1e-30), None),
    ("divmod", (1.0, float("nan")), "invalid"),
    ("logaddexp", (float("nan"), 1.0), "invalid"),
    ("logaddexp2", (float("nan"), 1.0), "invalid"),
    ("power", (-2.0, 0.5), "invalid"),
    ("power", (2.0, 200.0), "over"),
    ("float_power", (-2.0, 0.5), "invalid"),
    ("hypot", (3e38, 3e38), "over"),
    ("arctan2", (float("nan"), 1.0), None),
])
def test_bf16_libm_flags_reach_errstate(ufunc, bad, flag):
    """One flag-raising pair among 5,000 quiet ones, contiguous and every second element: the
    chunked loops raise it for numpy.errstate, and nothing without it."""
    rng = np.random.default_rng(28)
    x = rng.uniform(1, 2, 5000).astype(np.float32).astype(mldtypes.bfloat16)
    y = rng.uniform(1, 2, 5000).astype(np.float32).astype(mldtypes.bfloat16)
    u = getattr(np, ufunc)
    with np.errstate(all="raise"):
        u(x, y)
        u(x[::2], y[::2])
    x[3001], y[3001] = bad
    with np.errstate(all="ignore"):
        want = [np.asarray(r).view(np.uint16) for r in np.atleast_1d(u(x[3001:3002], y[3001:3002]))]
    for a, b in ((x, y), (np.repeat(x, 2)[1::2], np.repeat(y, 2)[1::2])):
        with np.errstate(all="ignore"):
            got = u(a, b)
        got = got if isinstance(got, tuple) else (got,)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g[3001:3002].view(np.uint16), w)
        if flag is None:
            with np.errstate(all="raise"):
                u(a, b)
        else:
            with np.errstate(all="ignore", **{flag: "raise"}):
                with pytest.raises(FloatingPointError, match=flag):
                    u(a, b)


def test_check_refuses_loops_without_tables():
    with pytest.raises(ValueError, match="no table-driven loop"):
        mldtypes._core._ufunc_check("add", np.dtype(mldtypes.bfloat16))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn"])
def test_table_sizes(name):
    """A table holds at most 128 KiB of results, plus its flag pages."""
    dt = np.dtype(getattr(mldtypes, name))
    for ufunc in ("exp", "log", "tanh", "spacing"):
        info = mldtypes._core._ufunc_table_info(ufunc, dt)
        assert info["bytes"] <= 128 * 1024 + 16 * 1024, (ufunc, info)


def test_tables_are_built_once_under_threads():
    """Threads racing to build the same table all see the same results."""
    from concurrent.futures import ThreadPoolExecutor

    codes = np.arange(1 << 16, dtype=np.uint16)
    x = codes.view(mldtypes.bfloat16)

    def run(_):
        with np.errstate(all="ignore"):  # errstate is per thread
            return np.arccosh(x).view(np.uint16)

    with ThreadPoolExecutor(8) as ex:
        results = list(ex.map(run, range(16)))
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_flags_reach_errstate():
    """The flags a table records reach numpy.errstate like the computed loops' did."""
    x = np.array([-1.0, 0.0, 100.0], np.float32)
    for name in ("bfloat16", "float8_e5m2"):
        a = x.astype(getattr(mldtypes, name))
        with np.errstate(invalid="raise"):
            with pytest.raises(FloatingPointError, match="invalid"):
                np.log(a[:1])
        with np.errstate(divide="raise"):
            with pytest.raises(FloatingPointError, match="divide"):
                np.log(a[1:2])
        with np.errstate(over="raise"):
            with pytest.raises(FloatingPointError, match="overflow"):
                np.exp(a[2:])
        with np.errstate(all="raise"):
            np.exp(a[:2])  # nothing raised


def raised(ufunc, arr):
    """The floating-point errors numpy.errstate sees from ``ufunc(arr)``."""
    return _results_and_flags(ufunc, arr)[1]


@pytest.mark.parametrize(("ufunc", "quiet", "loud", "flag"), [
    # bfloat16 runs of 256 codes (a sign, an exponent, one bit) whose codes raise
    # different flags: [1, 2) for arcsin (1 is valid, the rest invalid), [64, 128) for
    # exp (overflow from 88.5 on), [0, 2^-126) for log (0 divides, subnormals do not).
    ("arcsin", [1.0, -1.0, 0.5], 1.5, "invalid value"),
    ("arccosh", [1.0, 1.5, 1.25], 0.75, "invalid value"),
    ("exp", [88.0, 64.0, -3.0], 89.0, "overflow"),
    ("log", [1e-40, 3.0, 2e-40], 0.0, "divide by zero"),
])
@pytest.mark.parametrize("n", [31, 5000, 70_003])
def test_flags_of_mixed_runs(ufunc, quiet, loud, flag, n, kernel_path):
    """Long bfloat16 inputs from runs of codes with different flags: the flags of the
    elements themselves, wherever the one element raising them lies (the per-element
    pass over such inputs stops early only once nothing more can be found)."""
    u = getattr(np, ufunc)
    x = np.resize(np.array(quiet, np.float32), n).astype(mldtypes.bfloat16)
    other = {"invalid value": 3.0 if ufunc == "arcsin" else -2.0, "overflow": 200.0,
             "divide by zero": -0.0}[flag]
    for strided in (False, True):  # every second element of a packed array
        view = (lambda a: np.repeat(a, 2)[::2]) if strided else (lambda a: a)
        assert raised(u, view(x)) == []
        for at in (0, n // 2, n - 1):
            y = x.copy()
            y[at] = loud
            assert raised(u, view(y)) == [flag], (at, strided)
            # With a code of another run raising the flag.
            y[at] = other
            assert raised(u, view(y)) == [flag], (at, strided)


@pytest.mark.parametrize("later", [4096, 9000, 19_999])
def test_flags_of_mixed_runs_after_known_ones(later, kernel_path):
    """A flag met early (invalid from 1.5, a mixed run of arcsin) is not the only one looked
    for afterwards: a subnormal (underflow, another mixed run) in a later block of 4,096 codes,
    packed or every second element, still reaches errstate; and an early flag alone stays
    alone."""
    x = np.resize(np.array([1.0, -1.0, 0.5], np.float32), 20_000).astype(mldtypes.bfloat16)
    x[10] = 1.5
    for strided in (False, True):
        view = (lambda a: np.repeat(a, 2)[::2]) if strided else (lambda a: a)
        assert raised(np.arcsin, view(x)) == ["invalid value"], strided
        y = x.copy()
        y[later] = 1e-40
        assert raised(np.arcsin, view(y)) == ["invalid value", "underflow"], (later, strided)
        y[later] = 1.25
        assert raised(np.arcsin, view(y)) == ["invalid value"], (later, strided)


@pytest.mark.parametrize("step", [2, 3, -1])
def test_two_byte_strided_input(step, kernel_path):
    """A strided bfloat16 input into a packed output (gathered in blocks, looked up as packed
    codes): the results and flags of the same values packed, for every table function."""
    x = np.tile(np.arange(1 << 16, dtype=np.uint16), 2).view(mldtypes.bfloat16)
    xs = np.repeat(x, abs(step))[::step] if step > 0 else x[::-1]
    for ufunc in UNARY:
        u = getattr(np, ufunc)
        if u.nout != 1:
            continue
        got, want = (_results_and_flags(u, a) for a in (xs, np.ascontiguousarray(xs)))
        np.testing.assert_array_equal(got[0], want[0], err_msg=ufunc)
        assert got[1] == want[1], ufunc


def _results_and_flags(u, a):
    """``u(a)``'s result as bytes, and the floating-point errors numpy.errstate sees."""
    seen = []
    old = np.seterrcall(lambda err, _f: seen.append(err))
    try:
        with np.errstate(all="call"):
            r = u(a)
    finally:
        np.seterrcall(old)
    return r.view(np.uint8), sorted(set(seen))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("ufunc", ["exp", "log", "sqrt", "negative", "spacing", "rint"])
def test_in_place_equals_out_of_place(name, ufunc):
    """`out=` the input (in place) and every second element: the same results and flags."""
    size = np.dtype(getattr(mldtypes, name)).itemsize
    codes = np.arange(1 << (8 * size), dtype=np.uint8 if size == 1 else np.uint16)
    x = codes.view(getattr(mldtypes, name))
    u = getattr(np, ufunc)
    with np.errstate(all="ignore"):
        want = u(x).view(codes.dtype)
    y = x.copy()
    with np.errstate(all="ignore"):
        u(y, out=y)
    np.testing.assert_array_equal(y.view(codes.dtype), want)
    z = np.repeat(x, 2)
    with np.errstate(all="ignore"):
        u(z[::2], out=z[::2])
    np.testing.assert_array_equal(z[::2].view(codes.dtype), want)

    def flags(arr, out=None):
        seen = []
        old = np.seterrcall(lambda err, _f: seen.append(err))
        try:
            with np.errstate(all="call"):
                u(arr, out=out)
        finally:
            np.seterrcall(old)
        return sorted(set(seen))

    y = x.copy()
    assert flags(y, out=y) == flags(x)


def test_fmod_and_ldexp_shortcuts_equal_the_c_library():
    """fmod's exact float64 path and x87 fprem, and ldexp's exact float64 path, against fmodf
    and ldexpf: bits and flags on a grid of bfloat16 operands (every code with MLDTYPES_FULL_SWEEP=1,
    every 61st otherwise)."""
    r = mldtypes._core._ufunc_selfcheck(1 if FULL else 61)
    assert r["fmod"] == 0 and r["ldexp"] == 0, r["first"]


@pytest.mark.parametrize("step", [1, 2])
def test_bf16_ldexp_is_float32_ldexp_rounded(step, kernel_path):
    """bfloat16 `ldexp` (chunked, exponents gathered when strided) equals C `ldexpf` on the
    float32 value, rounded once to bfloat16 (NumPy's float32 `ldexp`, then the cast): every
    code with exponents across the range, contiguous and every second element; overflow
    reaches numpy.errstate."""
    codes = np.arange(1 << 16, dtype=np.uint16)
    codes = codes[~((codes & 0x7fc0) == 0x7f80) | ((codes & 0x3f) == 0)]  # no signalling NaN
    exps = np.array([-400, -300, -150, -140, -133, -126, -1, 0, 1, 2, 100, 127, 128, 300],
                    dtype=np.intc)
    x = np.tile(codes, len(exps)).view(mldtypes.bfloat16)
    e = np.repeat(exps, len(codes))
    with np.errstate(all="ignore"):
        want = np.ldexp(x.astype(np.float32), e).astype(mldtypes.bfloat16).view(np.uint16)
        xs, es = np.repeat(x, step)[::step], np.repeat(e, step)[::step]
        got = np.ldexp(xs, es)
    np.testing.assert_array_equal(got.view(np.uint16), want)
    one = np.ones(3000, mldtypes.bfloat16)
    small = np.full(3000, 2, np.intc)
    with np.errstate(all="raise"):
        np.ldexp(one, small)
    small[2500] = 200
    with np.errstate(all="ignore", over="raise"):
        with pytest.raises(FloatingPointError, match="overflow"):
            np.ldexp(one, small)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn",
                                  "float8_e8m0fnu"])
@pytest.mark.parametrize("step", [2, 3, -1])
def test_one_byte_strided_input(name, step, kernel_path):
    """A strided one-byte input into a packed output (gathered in chunks, every second byte by
    a vector loop): the results and flags of the same values packed."""
    dt = getattr(mldtypes, name)
    codes = np.tile(np.arange(256, dtype=np.uint8), 40)
    x = codes.view(dt)
    xs = np.repeat(x, abs(step))[::step] if step > 0 else x[::-1]

    for ufunc in ("exp", "log", "sqrt", "sin", "rint", "negative"):
        u = getattr(np, ufunc)
        got, got_flags = _results_and_flags(u, xs)
        want, want_flags = _results_and_flags(u, np.ascontiguousarray(xs))
        np.testing.assert_array_equal(got, want)
        assert got_flags == want_flags, ufunc


@pytest.mark.parametrize(("name", "quiet", "loud", "flag", "ufunc"), [
    ("float8_e5m2", [1.0, 2.0, -3.0], 100.0, "overflow", "exp"),
    ("float8_e4m3fn", [1.0, 2.0, 3.0], -1.0, "invalid value", "log"),
    ("float8_e4m3fn", [1.0, 2.0, 3.0], 0.0, "divide by zero", "log"),
])
@pytest.mark.parametrize("n", [1, 31, 32, 33, 1000])
def test_flags_of_long_one_byte_arrays(name, quiet, loud, flag, ufunc, n, kernel_path):
    """One-byte inputs of lengths around the vector look-ups' steps (32 and 64 codes): no
    flag from codes that raise none (the zero-padded lanes of a last partial step included:
    code 0 is +0, whose log divides by zero), and the flag of one element wherever it lies."""
    u = getattr(np, ufunc)
    x = np.resize(np.array(quiet, np.float32), n).astype(getattr(mldtypes, name))
    want = u(x.astype(np.float32)).astype(x.dtype).view(np.uint8)
    got, seen = _results_and_flags(u, x)
    np.testing.assert_array_equal(got, want)
    assert seen == []
    for at in sorted({0, n // 2, 31 % n, 32 % n, n - 1}):
        y = x.copy()
        y[at] = loud
        assert raised(u, y) == [flag], at


BIT_FUNCTIONS = ["negative", "positive", "absolute", "fabs", "conjugate", "isfinite", "isinf",
                 "isnan", "signbit", "logical_not", "sign"]
# How the AVX2 path computes each bit function of a one-byte format (`_ufunc_check`'s "shape"):
# "masked" is `(code & a) ^ x` ("+N": with N codes blended in), "bits" a 256-bit map of booleans.
SHAPES = {
    "float8_e4m3fn": ["masked", "masked", "masked", "masked", "masked", "bits", "masked", "bits",
                      "bits", "bits", "masked+4"],
    "float8_e4m3fnuz": ["masked+2", "masked", "masked+1", "masked+1", "masked", "bits", "masked",
                        "bits", "bits", "bits", "masked+2"],
    "float8_e5m2": ["masked", "masked", "masked", "masked", "masked", "bits", "bits", "bits",
                    "bits", "bits", "table"],
    "float4_e2m1fn": ["masked", "masked", "masked", "masked", "masked", "masked", "masked",
                      "masked", "bits", "bits", "table"],
    "float8_e8m0fnu": ["masked", "masked", "masked", "masked", "masked", "bits", "masked", "bits",
                       "masked", "masked", "masked+2"],
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_one_byte_bit_functions_skip_the_look_up(name):
    """The bit functions of the one-byte formats are tables the AVX2 path computes from the codes
    (a 256-entry look-up costs it 16 byte shuffles per 32 codes); which form each takes."""
    dt = np.dtype(getattr(mldtypes, name))
    got = [mldtypes._core._ufunc_check(u, dt)["shape"] for u in BIT_FUNCTIONS]
    assert got == SHAPES[name]


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("n", [1, 31, 32, 33, 63, 64, 65, 1000])
def test_one_byte_bit_functions_of_any_length(name, n, kernel_path):
    """Each bit function over lengths around the AVX2 steps (32 codes, two per iteration), into
    fresh outputs, over its own input and from strided inputs, equals the portable path's
    look-up of the same codes."""
    dt = np.dtype(getattr(mldtypes, name))
    codes = ((np.arange(n, dtype=np.int64) * 37 + 11) % 256).astype(np.uint8)
    x = codes.view(dt)
    for u in BIT_FUNCTIONS:
        f = getattr(np, u)
        mldtypes._core._set_kernel_path("portable")
        try:
            with np.errstate(all="ignore"):
                want = f(x)
        finally:
            mldtypes._core._set_kernel_path(None if kernel_path == PATHS[0] else kernel_path)
        as_bytes = (lambda a: a.view(np.uint8)) if want.dtype == dt else (lambda a: a)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(as_bytes(f(x)), as_bytes(want), err_msg=u)
            if want.dtype == dt:
                y = x.copy()
                f(y, out=y)
                np.testing.assert_array_equal(as_bytes(y), as_bytes(want), err_msg=u)
            z = np.zeros(3 * n, dt)
            z[::3] = x
            np.testing.assert_array_equal(as_bytes(f(z[::3])), as_bytes(want), err_msg=u)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn",
                                  "float8_e8m0fnu"])
@pytest.mark.parametrize("n", [255, 256, 300, 1000, 4097])
def test_frexp_of_long_one_byte_arrays(name, n, kernel_path):
    """frexp over lengths around the vector loop's steps of 64, into fresh outputs, into given
    ones, with the mantissas written over the input and from strided inputs, equals frexp one
    element at a time."""
    dt = np.dtype(getattr(mldtypes, name))
    codes = ((np.arange(n, dtype=np.int64) * 37 + 11) % 256).astype(np.uint8)
    x = codes.view(dt)
    one = [np.frexp(x[k:k + 1]) for k in range(n)]
    want_m = np.concatenate([m for m, _ in one]).view(np.uint8)
    want_e = np.concatenate([e for _, e in one])
    with np.errstate(all="ignore"):
        m, e = np.frexp(x)
        np.testing.assert_array_equal(m.view(np.uint8), want_m)
        if name != "float8_e8m0fnu":  # its NaN's exponent depends on the element before
            np.testing.assert_array_equal(e, want_e)
        y = x.copy()
        e2 = np.full(n, 7, np.intc)
        np.frexp(y, out=(y, e2))
        np.testing.assert_array_equal(y.view(np.uint8), want_m)
        np.testing.assert_array_equal(e2, e)
        for shift in range(16):  # exponents at every offset from a 64-byte line boundary
            whole = np.full(n + 32, 7, np.intc)
            lead = (-whole.ctypes.data // 4) % 16 + shift
            m3, e3 = np.zeros(n, dt), whole[lead:lead + n]
            np.frexp(x, out=(m3, e3))
            np.testing.assert_array_equal(m3.view(np.uint8), want_m)
            np.testing.assert_array_equal(e3, e)
            assert (whole[:lead] == 7).all() and (whole[lead + n:] == 7).all()
        for step in (2, 3, -1):  # strided inputs, gathered in chunks
            z = np.zeros(n * abs(step), dt)
            z[::abs(step)] = x
            s = z[::step] if step > 0 else x[::-1]
            ms, es = np.frexp(s)
            order = slice(None, None, -1) if step < 0 else slice(None)
            np.testing.assert_array_equal(ms.view(np.uint8), want_m[order])
            if name != "float8_e8m0fnu":
                np.testing.assert_array_equal(es, e[order])


@pytest.fixture(params=[None, True, False], ids=["cpu", "streaming", "plain"])
def streaming(request):
    """The store form of bfloat16 frexp's exponents on the AVX-512 path: the CPU's choice, or
    either form forced (`_set_streaming_stores`)."""
    mldtypes._core._set_streaming_stores(request.param)
    yield request.param
    mldtypes._core._set_streaming_stores(None)


@pytest.mark.parametrize("n", [511, 512, 1000, 5000])
def test_bfloat16_frexp_of_long_arrays(n, kernel_path, streaming):
    """bfloat16 frexp in blocks of 512: normal numbers and zeros in integer arithmetic, a block
    holding a subnormal, an infinity or a NaN through the table, strided inputs gathered; equal
    to frexp one element at a time, flags included (a signalling NaN raises invalid, nothing
    else raises); with the exponents' streaming and plain stores on every path."""
    check("frexp", "bfloat16")  # every code, one per call and all at once, strided
    bf16 = np.dtype(mldtypes.bfloat16)
    rng = np.random.default_rng(n)
    codes = rng.integers(0, 1 << 16, n).astype(np.uint16)
    codes[(codes & 0x7fff) >= 0x7f80] = 0x3f80  # finite only, but for the specials below
    codes[(codes & 0x7fff) < 0x80] = 0
    x = codes.view(bf16)
    for specials in ([], [(n // 2, 0x0005)], [(n - 1, 0xff80)], [(3, 0x7fc1), (n // 2, 0x8001)]):
        y = x.copy()
        for at, c in specials:
            y.view(np.uint16)[at] = c
        one = [np.frexp(y[k:k + 1]) for k in range(n)]
        m, e = np.frexp(y)
        np.testing.assert_array_equal(m.view(np.uint16),
                                      np.concatenate([a for a, _ in one]).view(np.uint16))
        np.testing.assert_array_equal(e, np.concatenate([b for _, b in one]))
        for shift in range(16):  # exponents at every offset from a 64-byte line boundary
            whole = np.full(n + 32, 7, np.intc)
            lead = (-whole.ctypes.data // 4) % 16 + shift
            m3, e3 = np.zeros(n, bf16), whole[lead:lead + n]
            np.frexp(y, out=(m3, e3))
            np.testing.assert_array_equal(m3.view(np.uint16), m.view(np.uint16))
            np.testing.assert_array_equal(e3, e)
            assert (whole[:lead] == 7).all() and (whole[lead + n:] == 7).all()
        for step in (2, -1):  # strided inputs, gathered
            z = np.zeros(n * 2, bf16)
            z[::2] = y
            s = z[::2] if step == 2 else y[::-1]
            ms, es = np.frexp(s)
            order = slice(None) if step == 2 else slice(None, None, -1)
            np.testing.assert_array_equal(ms.view(np.uint16), m.view(np.uint16)[order])
            np.testing.assert_array_equal(es, e[order])
    y = x.copy()
    y.view(np.uint16)[n // 3] = 0x7f81  # a signalling NaN
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        np.frexp(y)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2fnuz", "float4_e2m1fn",
                                  "float8_e8m0fnu"])
@pytest.mark.parametrize("n", [1, 31, 33, 64, 300, 4097])
def test_modf_of_long_one_byte_arrays(name, n, kernel_path):
    """One-byte modf (two vector look-ups of the codes) over lengths around the vector steps,
    into fresh outputs, into given ones, with either output written over the input and from
    strided inputs, equals modf one element at a time."""
    dt = np.dtype(getattr(mldtypes, name))
    codes = ((np.arange(n, dtype=np.int64) * 37 + 11) % 256).astype(np.uint8)
    x = codes.view(dt)
    with np.errstate(all="ignore"):
        one = [np.modf(x[k:k + 1]) for k in range(n)]
        want_f = np.concatenate([f for f, _ in one]).view(np.uint8)
        want_i = np.concatenate([i for _, i in one]).view(np.uint8)
        f, i = np.modf(x)
        np.testing.assert_array_equal(f.view(np.uint8), want_f)
        np.testing.assert_array_equal(i.view(np.uint8), want_i)
        y, other = x.copy(), np.zeros(n, dt)
        np.modf(y, out=(y, other))
        np.testing.assert_array_equal(y.view(np.uint8), want_f)
        np.testing.assert_array_equal(other.view(np.uint8), want_i)
        y, other = x.copy(), np.zeros(n, dt)
        np.modf(y, out=(other, y))
        np.testing.assert_array_equal(other.view(np.uint8), want_f)
        np.testing.assert_array_equal(y.view(np.uint8), want_i)
        for step in (2, 3, -1):
            z = np.zeros(abs(step) * n, dt)
            z[::step] = x
            fs, is_ = np.modf(z[::step])
            np.testing.assert_array_equal(fs.view(np.uint8), want_f)
            np.testing.assert_array_equal(is_.view(np.uint8), want_i)


@pytest.mark.parametrize("n", [511, 512, 1000, 5000])
def test_bfloat16_modf_of_long_arrays(n, kernel_path):
    """bfloat16 modf in blocks of 512: integer and exact float32 steps, a block holding an
    infinity or a NaN through the table, strided inputs gathered; equal to modf one element at a
    time on random codes with values from 0.5 to 256, subnormals and zeros of both signs, flags
    included (a signalling NaN raises invalid, nothing else raises)."""
    bf16 = np.dtype(mldtypes.bfloat16)
    rng = np.random.default_rng(n + 1)
    codes = rng.integers(0, 1 << 16, n).astype(np.uint16)
    codes[(codes & 0x7fff) >= 0x7f80] = 0xc2c5  # finite only, but for the specials below
    codes[: n // 8] = rng.integers(0x3f00, 0x4380, n // 8) | (codes[: n // 8] & 0x8000)
    codes[n // 8: n // 8 + 4] = [0x0000, 0x8000, 0x0001, 0x807f]
    x = codes.view(bf16)
    with np.errstate(all="raise"):
        for specials in ([], [(n // 2, 0x7f80)], [(n - 1, 0xff80)], [(3, 0x7fc1), (n // 2, 0xffc0)]):
            y = x.copy()
            for at, c in specials:
                y.view(np.uint16)[at] = c
            one = [np.modf(y[k:k + 1]) for k in range(n)]
            f, i = np.modf(y)
            np.testing.assert_array_equal(f.view(np.uint16),
                                          np.concatenate([a for a, _ in one]).view(np.uint16))
            np.testing.assert_array_equal(i.view(np.uint16),
                                          np.concatenate([b for _, b in one]).view(np.uint16))
            for step in (2, -1):  # strided inputs, gathered
                z = np.zeros(n * 2, bf16)
                z[::2] = y
                s = z[::2] if step == 2 else y[::-1]
                fs, is_ = np.modf(s)
                order = slice(None) if step == 2 else slice(None, None, -1)
                np.testing.assert_array_equal(fs.view(np.uint16), f.view(np.uint16)[order])
                np.testing.assert_array_equal(is_.view(np.uint16), i.view(np.uint16)[order])
    y = x.copy()
    y.view(np.uint16)[n // 3] = 0x7f81  # a signalling NaN
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        np.modf(y)
