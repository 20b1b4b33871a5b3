"""Scalar texts, hashes and conversions over every code point of the 8/6/4-bit and sub-byte
types and a sample of bfloat16 and the complex types (vectors/scalars.json.gz, ml_dtypes 0.6.0).
"""

import math
import warnings

import numpy as np
import pytest

from conftest import OURS, T, from_codes, load_json

SCALARS = load_json("scalars")


def _scalars(name):
    rec = SCALARS[name]
    return rec, from_codes(name, rec["codes"])


def _diff(name, what, codes, expected, got, limit=8):
    bad = [(c, e, g) for c, e, g in zip(codes, expected, got) if e != g]
    if not bad:
        return ""
    lines = [f"{name} {what}: {len(bad)} of {len(codes)} codes differ"]
    lines += [f"  code {c:#x}: expected {e!r}, got {g!r}" for c, e, g in bad[:limit]]
    return "\n".join(lines)


@pytest.mark.parametrize("name", OURS)
def test_scalar_is_np_generic(name):
    rec, vals = _scalars(name)
    x = vals[0]
    assert type(x) is T(name)
    assert isinstance(x, np.generic)


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("fn", ["repr", "str"])
def test_text(name, fn):
    rec, vals = _scalars(name)
    got = [{"repr": repr, "str": str}[fn](x) for x in vals]
    text = _diff(name, fn, rec["codes"], rec[fn], got)
    assert not text, text


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("spec", ["", ".3f", "e", "g", ">10", "+.2e", "x"])
def test_format(name, spec):
    rec = SCALARS[name]
    codes = rec["format_codes"]
    got = []
    for x in from_codes(name, codes):
        try:
            got.append(format(x, spec))
        except Exception as e:  # noqa: BLE001
            got.append({"error": type(e).__name__})
    text = _diff(name, f"format(x, {spec!r})", codes, rec["format"][spec], got)
    assert not text, text


@pytest.mark.parametrize("name", OURS)
def test_hash(name):
    rec, vals = _scalars(name)
    got, expected, codes = [], [], []
    for c, x, h in zip(rec["codes"], vals, rec["hash"]):
        hx = hash(x)  # NaN must hash too (Python hashes NaN by identity)
        if h is None:
            continue
        codes.append(c)
        expected.append(h)
        got.append(hx)
    text = _diff(name, "hash", codes, expected, got)
    assert not text, text


@pytest.mark.parametrize("name", OURS)
def test_hash_equals_python_value(name):
    rec, vals = _scalars(name)
    for c, x in zip(rec["codes"], vals):
        v = x.item()
        if isinstance(v, float) and math.isnan(v) or isinstance(v, complex) and (
                math.isnan(v.real) or math.isnan(v.imag)):
            continue
        assert hash(x) == hash(v), f"{name} code {c:#x}: hash {hash(x)} != hash({v!r})"


@pytest.mark.parametrize("name", OURS)
def test_item(name):
    rec, vals = _scalars(name)
    items = [x.item() for x in vals]
    text = _diff(name, "type(item())", rec["codes"], rec["item_type"],
                 [type(v).__name__ for v in items])
    assert not text, text
    text = _diff(name, "item()", rec["codes"], rec["item"], [repr(v) for v in items])
    assert not text, text


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("fn", ["float", "int", "bool"])
def test_python_conversion(name, fn):
    rec, vals = _scalars(name)
    f = {"float": float, "int": int, "bool": bool}[fn]
    got = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in vals:
            try:
                got.append(repr(f(x)))
            except Exception as e:  # noqa: BLE001
                got.append({"error": type(e).__name__})
    text = _diff(name, f"{fn}(x)", rec["codes"], rec[fn], got)
    assert not text, text


@pytest.mark.parametrize("name", [n for n in OURS if n not in ("complex32", "bcomplex32")])
def test_hash_of_nan_is_identity_based(name):
    """Python 3.10+ hashes a NaN by object identity (as float, np.float32 and ml_dtypes do)."""
    rec, vals = _scalars(name)
    for c, x, h in zip(rec["codes"], vals, rec["hash"]):
        if h is None:
            assert hash(x) == object.__hash__(x), f"{name} NaN code {c:#x}"
