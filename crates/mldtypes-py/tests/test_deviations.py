"""The deliberate differences from ml_dtypes 0.6.0, and the Rust format vectors run through
NumPy (`crates/mldtypes/tests/vectors/formats`, written by tools/gen_vectors.py):

- float64 -> format rounds once: `astype` and the scalar constructor give the correctly rounded
  code (`f64_to_formats_exact`), where ml_dtypes rounds through float32
  (`f64_to_formats_mldtypes`, kept for reference);
- float8_e8m0fnu rounds float32 subnormals to nearest (ml_dtypes rounds (2^-127, 1.5*2^-127)
  up to 2^-126);
- every code decodes to ml_dtypes' float32 value, and the ~200,000 float32 probes encode to
  ml_dtypes' code (apart from the e8m0fnu subnormals above);
- text parsing and `__module__`: see test_construction.py / test_surface.py.
"""

import json
import os
import warnings

import numpy as np
import pytest

import mldtypes
from conftest import FORMAT_VECTORS, assert_same, from_codes, load_format_npy, to_codes

with open(os.path.join(FORMAT_VECTORS, "summary.json")) as _fh:
    ROWS = json.load(_fh)["formats"]
FORMATS = [f for f in ROWS if f != "float16"]


@pytest.mark.parametrize("name", FORMATS)
def test_decode_every_code_to_float32(name):
    codes = np.arange(1 << {"bfloat16": 16, "float6_e2m3fn": 6, "float6_e3m2fn": 6,
                            "float4_e2m1fn": 4}.get(name, 8), dtype=np.uint32)
    x = from_codes(name, codes)
    got = x.astype(np.float32).view(np.uint32)
    want = load_format_npy(f"codes_{name}_f32")
    assert_same(f"{name} -> float32", codes, want, got)


@pytest.mark.parametrize("name", FORMATS)
def test_decode_every_code_to_float64(name):
    codes = np.arange(len(load_format_npy(f"codes_{name}_f64")), dtype=np.uint32)
    got = from_codes(name, codes).astype(np.float64)
    want = load_format_npy(f"codes_{name}_f64")
    same = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{name} -> float64: codes {codes[~same][:8]}"


@pytest.mark.parametrize("name", FORMATS)
def test_float32_probe_encodes_like_ml_dtypes(name):
    bits = load_format_npy("f32_probe_inputs")
    want = load_format_npy("f32_to_formats")[ROWS.index(name)].copy()
    x = bits.view(np.float32)
    if name == "float8_e8m0fnu":
        # ours: float32 subnormals in (2^-127, 1.5 * 2^-127) round to 2^-127 (0x00)
        sub = (x > 2.0**-127) & (x < 1.5 * 2.0**-127)
        assert (want[sub] == 1).all()
        want[sub] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = to_codes(name, x.astype(getattr(mldtypes, name)))
    assert_same(f"float32 -> {name}", bits, want.astype(got.dtype), got)


@pytest.mark.parametrize("name", FORMATS)
def test_float64_array_rounds_once(name):
    bits = load_format_npy("f64_probe_inputs")
    exact = load_format_npy("f64_to_formats_exact")[ROWS.index(name)]
    ml = load_format_npy("f64_to_formats_mldtypes")[ROWS.index(name)]
    x = bits.view(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = to_codes(name, x.astype(getattr(mldtypes, name))).astype(np.uint16)
    # NaN results: the exact oracle does not choose a NaN's sign; take ml_dtypes' NaN there
    cls = load_format_npy(f"codes_{name}_class")[0]
    want = np.where((cls[exact.astype(np.int64)] == 4) & (cls[ml.astype(np.int64)] == 4), ml,
                    exact)
    text = _report(f"float64 -> {name} (one rounding)", x, want, got, ml)
    assert not text, text


def _report(label, x, want, got, ml, limit=8):
    bad = np.nonzero(want != got)[0]
    if len(bad) == 0:
        return ""
    lines = [f"{label}: {len(bad)} of {len(x)} differ"]
    for j in bad[:limit]:
        lines.append(f"  {x[j]!r}: expected {int(want[j]):#x}, got {int(got[j]):#x} "
                     f"(ml_dtypes {int(ml[j]):#x})")
    return "\n".join(lines)


@pytest.mark.parametrize("row,name", [(0, "bfloat16"), (1, "float8_e8m0fnu")])
def test_float64_scalar_constructor_rounds_once(row, name):
    bits = load_format_npy("f64_probe_inputs")
    exact = load_format_npy("f64_to_formats_exact")[ROWS.index(name)]
    ml = load_format_npy("f64_scalar_ctor")[row]
    x = bits.view(np.float64)
    rng = np.random.default_rng(5)
    differ = np.nonzero(exact != ml)[0]
    pick = np.unique(np.concatenate([differ, rng.choice(len(x), 3000, replace=False)]))
    t = getattr(mldtypes, name)
    got = np.array([to_codes(name, np.array([t(float(v))], dtype=t))[0] for v in x[pick]],
                   dtype=np.uint16)
    cls = load_format_npy(f"codes_{name}_class")[0]
    e, m = exact[pick], ml[pick]
    want = np.where((cls[e.astype(np.int64)] == 4) & (cls[m.astype(np.int64)] == 4), m, e)
    text = _report(f"{name}(float) (one rounding)", x[pick], want, got, m)
    assert not text, text


def test_bfloat16_double_rounding_example():
    """The README's example: ml_dtypes gives 0x3F80, the correctly rounded value is 0x3F81."""
    x = mldtypes.bfloat16(1.00390625 + 2**-30)
    assert to_codes("bfloat16", np.array([x]))[0] == 0x3F81
    a = np.array([1.00390625 + 2**-30]).astype(mldtypes.bfloat16)
    assert to_codes("bfloat16", a)[0] == 0x3F81


def test_e8m0fnu_from_bfloat16_subnormals():
    """bfloat16 subnormals 0x0041..0x005f are in (2^-127, 1.5*2^-127): nearest is 2^-127."""
    a = from_codes("bfloat16", np.arange(0x41, 0x60, dtype=np.uint16))
    got = to_codes("float8_e8m0fnu", a.astype(mldtypes.float8_e8m0fnu))
    assert (got == 0).all(), got


def test_e4m3fn_text_example():
    """`"464.0000000000000000001"` is above the tie 464 between 448 and NaN: NaN (ml_dtypes:
    448, after rounding the text to a double)."""
    x = mldtypes.float8_e4m3fn("464.0000000000000000001")
    assert np.isnan(float(x))
    assert float(mldtypes.float8_e4m3fn("464")) == 448.0
