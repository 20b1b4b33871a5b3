"""mldtypes.cast: rounding modes, saturation and stochastic rounding against gfloat 0.5.2.

The reference codes are the committed vectors of ``tools/gen_rounding_vectors.py``
(``crates/mldtypes/tests/vectors/rounding/``); the elements where mldtypes deliberately
differs from gfloat (documented in the Rust crate's ``round`` module and asserted by
``tests/rounding_vectors.rs``) are left out here.
"""

import gzip
import io
import json
import pathlib
import re

import numpy as np
import pytest

import mldtypes

VECTORS = (pathlib.Path(__file__).resolve().parents[2] / "mldtypes" / "tests" / "vectors"
           / "rounding")

MODES = ["nearest_even", "nearest_away", "toward_zero", "toward_negative", "toward_positive",
         "stochastic", "stochastic_odd", "stochastic_fast", "stochastic_fastest"]

ML_FLOATS = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
             "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
             "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]


def load(name):
    with gzip.open(VECTORS / f"{name}.npy.gz", "rb") as fh:
        return np.load(io.BytesIO(fh.read()))


def dtype_of(name):
    if name == "float16":
        return np.dtype(np.float16)
    m = re.fullmatch(r"p3109_k(\d+)p(\d+)([su])([ef])", name)
    if m:
        k, p, s, e = m.groups()
        return np.dtype(mldtypes.p3109(int(k), int(p), signed=s == "s",
                                       domain="extended" if e == "e" else "finite"))
    return np.dtype(getattr(mldtypes, name))


@pytest.fixture(scope="module")
def vectors():
    summary = json.loads((VECTORS / "summary.json").read_text())
    return {
        "summary": summary,
        "f32": load("f32_inputs").view(np.float32),
        "f64": load("f64_inputs").view(np.float64),
        "bits": load("bits"),
        "codes": load("codes"),
        "raised": load("raised"),
    }


def test_every_mode_matches_gfloat(vectors):
    summary = vectors["summary"]
    formats = {f["name"]: f for f in summary["formats"]}
    compared = 0
    for run in summary["runs"]:
        name, src = run["format"], run["source"]
        dt = dtype_of(name)
        o, n = formats[name]["inputs"][src]
        x = vectors[src][o:o + n]
        c = run["codes"]
        want = vectors["codes"][c:c + n].astype(np.int64)
        kw = {}
        if run["bits"] is not None:
            kw = {"random_bits": vectors["bits"][run["bits"]:run["bits"] + n],
                  "sr_bits": run["sr_bits"]}
        got = mldtypes.cast(x, dt, rounding=run["mode"], saturate=run["sat"], **kw)
        assert got.dtype == dt and got.shape == x.shape
        # The documented deviations (checked in Rust) are left out.
        info = mldtypes.finfo(dt)
        bits = 8 * dt.itemsize if not name.startswith("p3109") else int(name[7:].split("p")[0])
        xs = x.astype(np.float64)
        unsigned = name == "float8_e8m0fnu" or bool(re.search(r"p\d+u[ef]$", name))
        skip = vectors["raised"][c:c + n].astype(bool) | (want >= (1 << bits))
        if unsigned:
            skip |= xs < 0
        if name == "float8_e8m0fnu":
            skip |= (xs >= 0) & (xs < float(info.smallest_subnormal))
        if src == "f32" and float(info.max) > float(np.finfo(np.float32).max):
            skip |= np.abs(xs) > float(np.finfo(np.float32).max) / 2
        keep = ~skip
        w = np.uint8 if dt.itemsize == 1 else np.uint16
        want_k = want[keep].astype(w)
        want_nan = np.isnan(want_k.view(dt).astype(np.float32))
        got_k = got.view(w)[keep]
        got_nan = np.isnan(got[keep].astype(np.float32))
        assert np.array_equal(want_nan, got_nan), (name, src, run["mode"], run["sat"])
        bad = np.flatnonzero(~want_nan & (got_k != want_k))
        assert bad.size == 0, (name, src, run["mode"], run["sat"], run["sr_bits"],
                               xs[keep][bad[:5]], got_k[bad[:5]], want_k[bad[:5]])
        compared += int(keep.sum())
    assert compared > 6_500_000  # of 7,939,068: the deviations are checked in Rust


@pytest.mark.parametrize("name", ML_FLOATS + ["float16", "float32", "p3109"])
def test_every_float_target_and_nearest_even_is_astype(name):
    if name == "p3109":
        dt = np.dtype(mldtypes.p3109(8, 3))
    elif name in ("float16", "float32"):
        dt = np.dtype(name)
    else:
        dt = np.dtype(getattr(mldtypes, name))
    x = np.linspace(-500, 500, 2001, dtype=np.float32)
    x[::7] *= 1e-3
    got = mldtypes.cast(x, dt)
    assert got.dtype == dt
    w = {1: np.uint8, 2: np.uint16, 4: np.uint32}[dt.itemsize]
    if name != "float8_e8m0fnu":  # ties to even here, away in astype
        assert np.array_equal(got.view(w), x.astype(dt).view(w))
    # Every mode runs on every target.
    for mode in MODES[:5]:
        for sat in (False, True):
            y = mldtypes.cast(x, dt, rounding=mode, saturate=sat)
            assert y.dtype == dt and y.shape == x.shape
    for mode in MODES[5:]:
        y = mldtypes.cast(x, dt, rounding=mode, seed=1, sr_bits=8)
        assert y.dtype == dt


def test_directed_modes_and_saturation():
    x = np.array([1.0625, -1.0625, 500.0, -500.0, np.inf, -np.inf, np.nan], np.float32)
    e4m3 = mldtypes.float8_e4m3fn
    f = lambda **kw: mldtypes.cast(x, e4m3, **kw).astype(np.float32)  # noqa: E731
    np.testing.assert_array_equal(f(rounding="toward_zero")[:4], [1.0, -1.0, 448, -448])
    np.testing.assert_array_equal(f(rounding="toward_positive")[:4], [1.125, -1.0, np.nan, -448])
    np.testing.assert_array_equal(f(rounding="toward_negative")[:4], [1.0, -1.125, 448, np.nan])
    np.testing.assert_array_equal(f(rounding="nearest_away")[:2], [1.125, -1.125])
    np.testing.assert_array_equal(f(rounding="nearest_even")[:2], [1.0, -1.0])
    # saturate: finite overflow and +-inf to +-max, NaN stays NaN.
    np.testing.assert_array_equal(f(saturate=True), [1.0, -1.0, 448, -448, 448, -448, np.nan])
    np.testing.assert_array_equal(f(), [1.0, -1.0, np.nan, np.nan, np.nan, np.nan, np.nan])
    # float16 keeps its infinities without saturation.
    h = mldtypes.cast(np.array([1e6, -np.inf]), np.float16)
    np.testing.assert_array_equal(h, [np.inf, -np.inf])
    h = mldtypes.cast(np.array([1e6, -np.inf]), np.float16, saturate=True)
    np.testing.assert_array_equal(h, [65504, -65504])


def test_stochastic_with_explicit_bits():
    # 1 + 2^-9 is a quarter of a bfloat16 ulp above 1: up when r >= 3/4 of 2^8.
    x = np.full(4, 1.0 + 2.0**-9, np.float32)
    bits = np.array([0, 191, 192, 255], np.uint8)
    y = mldtypes.cast(x, mldtypes.bfloat16, rounding="stochastic", random_bits=bits, sr_bits=8)
    assert y.view(np.uint16).tolist() == [0x3F80, 0x3F80, 0x3F81, 0x3F81]
    # Broadcasting: one number for every element.
    y = mldtypes.cast(x, mldtypes.bfloat16, rounding="stochastic", random_bits=200, sr_bits=8)
    assert y.view(np.uint16).tolist() == [0x3F81] * 4
    # Signed integer arrays of non-negative numbers are accepted.
    y = mldtypes.cast(x, mldtypes.bfloat16, rounding="stochastic",
                      random_bits=bits.astype(np.int64), sr_bits=8)
    assert y.view(np.uint16).tolist() == [0x3F80, 0x3F80, 0x3F81, 0x3F81]


def test_seeded_results_are_reproducible_and_follow_the_flat_index():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 1000)).astype(np.float32)
    a = mldtypes.cast(x, mldtypes.float8_e5m2, rounding="stochastic", seed=7, sr_bits=16)
    b = mldtypes.cast(x, mldtypes.float8_e5m2, rounding="stochastic", seed=7, sr_bits=16)
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    flat = mldtypes.cast(x.ravel(), mldtypes.float8_e5m2, rounding="stochastic", seed=7,
                         sr_bits=16)
    assert np.array_equal(a.view(np.uint8).ravel(), flat.view(np.uint8))
    c = mldtypes.cast(x, mldtypes.float8_e5m2, rounding="stochastic", seed=8, sr_bits=16)
    assert not np.array_equal(a.view(np.uint8), c.view(np.uint8))
    # Non-contiguous input: the flat C-order index of the input as given.
    t = mldtypes.cast(x.T, mldtypes.float8_e5m2, rounding="stochastic", seed=7, sr_bits=16)
    tc = mldtypes.cast(np.ascontiguousarray(x.T), mldtypes.float8_e5m2, rounding="stochastic",
                       seed=7, sr_bits=16)
    assert np.array_equal(t.view(np.uint8), tc.view(np.uint8))


def test_stochastic_mean_is_unbiased():
    rng = np.random.default_rng(1)
    x = (1.0 + 0.3 * 0.125 * rng.random(200_000)).astype(np.float32)
    y = mldtypes.cast(x, mldtypes.float8_e4m3fn, rounding="stochastic", seed=3, sr_bits=16)
    err = y.astype(np.float64).mean() - x.astype(np.float64).mean()
    d = (x.astype(np.float64) - 1.0) / 0.125
    sigma = 0.125 * np.sqrt((d * (1 - d)).sum()) / x.size
    assert abs(err) < 5 * sigma + 0.125 * 2.0**-17


def test_sources_out_and_scalars():
    x64 = np.array([1.0 + 2.0**-30, -3.0], np.float64)
    y = mldtypes.cast(x64, np.float32, rounding="toward_positive")
    assert y.dtype == np.float32 and y[0] > 1.0 and y[1] == -3.0
    # float16 and mldtypes sources go through their exact values.
    h = np.array([1.0625, 3.0], np.float16)
    assert mldtypes.cast(h, mldtypes.float4_e2m1fn, rounding="toward_zero").astype(
        np.float32).tolist() == [1.0, 3.0]
    b = np.array([1.0625], mldtypes.bfloat16)
    assert float(mldtypes.cast(b, mldtypes.float8_e4m3fn, rounding="toward_positive")[0]) == 1.125
    # Python numbers and integer lists go through float64; scalars give scalars.
    s = mldtypes.cast(1.0625, mldtypes.float8_e4m3fn, rounding="nearest_away")
    assert isinstance(s, mldtypes.float8_e4m3fn) and float(s) == 1.125
    assert mldtypes.cast([1, 2, 3], mldtypes.bfloat16).astype(np.float32).tolist() == [1, 2, 3]
    out = np.empty(2, mldtypes.float8_e4m3fn)
    r = mldtypes.cast(np.array([1.0, 2.0], np.float32), mldtypes.float8_e4m3fn, out=out)
    assert r is out and out.astype(np.float32).tolist() == [1.0, 2.0]
    # P3109 targets through mldtypes.p3109.
    p = mldtypes.p3109(8, 3, signed=True, domain="extended")
    y = mldtypes.cast(np.array([1.2, -1.2, 1e9], np.float32), p, rounding="toward_zero")
    assert y.view(np.uint8).tolist() == [0x40, 0xC0, 0x7E]


def test_errors():
    x = np.ones(4, np.float32)
    e4m3 = mldtypes.float8_e4m3fn
    with pytest.raises(ValueError, match="unknown rounding mode .up.; the modes are nearest_even.*"
                                         "stochastic_fastest"):
        mldtypes.cast(x, e4m3, rounding="up")
    with pytest.raises(ValueError, match="needs random bits"):
        mldtypes.cast(x, e4m3, rounding="stochastic")
    with pytest.raises(ValueError, match="not both"):
        mldtypes.cast(x, e4m3, rounding="stochastic", random_bits=[1, 2, 3, 4], sr_bits=8,
                      seed=1)
    with pytest.raises(ValueError, match="deterministic"):
        mldtypes.cast(x, e4m3, rounding="toward_zero", seed=1)
    with pytest.raises(ValueError, match="broadcast"):
        mldtypes.cast(x, e4m3, rounding="stochastic", random_bits=[1, 2, 3], sr_bits=8)
    with pytest.raises(ValueError, match=r"random number 8 \(element 2\) does not fit sr_bits = 3"):
        mldtypes.cast(x, e4m3, rounding="stochastic", random_bits=[1, 2, 8, 1], sr_bits=3)
    with pytest.raises(ValueError, match="negative"):
        mldtypes.cast(x, e4m3, rounding="stochastic", random_bits=[1, -2, 3, 1], sr_bits=3)
    with pytest.raises(ValueError, match="sr_bits is required"):
        mldtypes.cast(x, e4m3, rounding="stochastic", random_bits=[1, 2, 3, 1])
    with pytest.raises(ValueError, match="sr_bits = 33 is out of range"):
        mldtypes.cast(x, e4m3, rounding="stochastic", seed=1, sr_bits=33)
    with pytest.raises(ValueError, match="seed = -1 is out of range"):
        mldtypes.cast(x, e4m3, rounding="stochastic", seed=-1)
    with pytest.raises(TypeError, match="unsigned integers"):
        mldtypes.cast(x, e4m3, rounding="stochastic", random_bits=[0.5] * 4, sr_bits=3)
    with pytest.raises(TypeError, match="int32 is not one"):
        mldtypes.cast(x, np.int32)
    with pytest.raises(TypeError, match="int4 is not one"):
        mldtypes.cast(x, mldtypes.int4)
    with pytest.raises(TypeError, match="complex64 is not one"):
        mldtypes.cast(x, np.complex64)
    with pytest.raises(TypeError, match="float64 is no target"):
        mldtypes.cast(x, np.float64)
    with pytest.raises(TypeError, match="needs an array of floats"):
        mldtypes.cast(np.ones(2, np.complex64), e4m3)
    with pytest.raises(ValueError, match="out has shape"):
        mldtypes.cast(x, e4m3, out=np.empty(3, e4m3))
    with pytest.raises(TypeError, match="out has dtype"):
        mldtypes.cast(x, e4m3, out=np.empty(4, mldtypes.bfloat16))


def test_numbers_too_large_in_a_long_input_name_the_first():
    """A result array made by ``cast`` checks the numbers as it converts (in parallel
    chunks); the error names the first number too large as with ``out=`` (checked
    before anything is written, ``out`` left as it was)."""
    n = 600_000
    x = np.linspace(-400, 400, n, dtype=np.float32)
    bits = (np.arange(n, dtype=np.uint32) * 2654435761 >> 20).astype(np.uint16) & 0x1FFF
    good = mldtypes.cast(x, mldtypes.float8_e4m3fn, rounding="stochastic", random_bits=bits,
                         sr_bits=13)
    out = np.zeros(n, mldtypes.float8_e4m3fn)
    mldtypes.cast(x, mldtypes.float8_e4m3fn, rounding="stochastic", random_bits=bits, sr_bits=13,
                  out=out)
    assert good.view(np.uint8).tobytes() == out.view(np.uint8).tobytes()
    bits[590_000] = 9000
    bits[321_000] = 8192
    message = r"random number 8192 \(element 321000\) does not fit sr_bits = 13"
    with pytest.raises(ValueError, match=message):
        mldtypes.cast(x, mldtypes.float8_e4m3fn, rounding="stochastic", random_bits=bits,
                      sr_bits=13)
    before = np.zeros(n, mldtypes.float8_e4m3fn)
    with pytest.raises(ValueError, match=message):
        mldtypes.cast(x, mldtypes.float8_e4m3fn, rounding="stochastic", random_bits=bits,
                      sr_bits=13, out=before)
    assert not before.view(np.uint8).any()


def test_the_stub_matches_the_function():
    import ast
    import inspect

    stub = pathlib.Path(mldtypes.__file__).with_name("__init__.pyi").read_text()
    fn = next(n for n in ast.walk(ast.parse(stub))
              if isinstance(n, ast.FunctionDef) and n.name == "cast")
    stub_params = ([a.arg for a in fn.args.args], [a.arg for a in fn.args.kwonlyargs])
    sig = inspect.signature(mldtypes.cast)
    pos = [p.name for p in sig.parameters.values()
           if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    kw = [p.name for p in sig.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert stub_params == (pos, kw)
    defaults = {p.name: p.default for p in sig.parameters.values()
                if p.default is not inspect.Parameter.empty}
    stub_defaults = {a.arg: ast.literal_eval(d)
                     for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults)}
    assert defaults == stub_defaults
    assert "cast" in mldtypes.__all__
    for mode in MODES:
        assert mode in mldtypes.cast.__doc__
