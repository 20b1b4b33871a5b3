#!/usr/bin/env python3
# requirements: gfloat==0.5.2 numpy==2.4.6
"""Generate the committed rounding-mode test vectors under crates/mldtypes/tests/vectors/rounding/.

Reference: Graphcore's gfloat 0.5.2 (the IEEE P3109 working group's reference implementation)
on NumPy 2.4.6, in its own virtual environment (/work/venvs/gfloat):

    python3 -m venv /work/venvs/gfloat
    /work/venvs/gfloat/bin/pip install gfloat==0.5.2 numpy==2.4.6
    /work/venvs/gfloat/bin/python tools/gen_rounding_vectors.py [OUTPUT_DIR]

Only gfloat's public API is called: `round_ndarray(fi, v, rnd, sat, srbits, srnumbits)` followed
by `encode_ndarray(fi, result)`, on float32 arrays and on float64 arrays, and the `FormatInfo`
properties. Where gfloat raises for an array (a format without infinities and NaN given NaN, or
an overflow without `sat`), the array is rounded again element by element and the elements
that raise are marked in `raised`.

Runs: for every format, every one of the nine `RoundMode` members, `sat` False and True, and for
the four stochastic modes `srnumbits` in {3, 8, 13} (the five deterministic modes do not read
the random bits and are run once per `sat`). Each run covers the format's float32 probes and its
float64 probes. The random bits of a stochastic run depend on the format, the source and
`srnumbits` only (all four stochastic modes and both `sat` values share them).

Probes (`probes32`, `probes64`), both signs of each: every finite value of formats up to 8 bits
(a strided sample of the 16-bit ones), every midpoint (tie) between neighbouring values and the
float32 / float64 numbers next to each value and each midpoint, the overflow threshold (max plus
half an ulp) and its neighbours, 2·max, values below half the smallest subnormal, the largest
float32 / float64, ±0, ±inf, NaN, and log-uniform random values over the format's range.

Every output is deterministic (fixed seeds, gzip streams written with mtime 0); README.md next
to the vectors documents the files.
"""

import gzip
import io
import json
import os
import struct
import sys
from importlib.metadata import version

import numpy as np

REQUIRED = {"gfloat": "0.5.2", "numpy": "2.4.6"}
FOUND = {name: version(name) for name in REQUIRED}
if FOUND != REQUIRED:
    sys.exit(f"need {REQUIRED}, found {FOUND}")

import gfloat  # noqa: E402
from gfloat import encode_ndarray, round_ndarray  # noqa: E402
from gfloat.formats import format_info_p3109  # noqa: E402
from gfloat.types import Domain, RoundMode, Signedness  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "crates", "mldtypes", "tests", "vectors", "rounding"
)
os.makedirs(OUT, exist_ok=True)

# (mldtypes dtype name, gfloat FormatInfo)
NAMED = [
    ("float8_e4m3fn", gfloat.formats.format_info_ocp_e4m3),
    ("float8_e5m2", gfloat.formats.format_info_ocp_e5m2),
    ("float4_e2m1fn", gfloat.formats.format_info_ocp_e2m1),
    ("float6_e2m3fn", gfloat.formats.format_info_ocp_e2m3),
    ("float6_e3m2fn", gfloat.formats.format_info_ocp_e3m2),
    ("float8_e8m0fnu", gfloat.formats.format_info_ocp_e8m0),
    ("bfloat16", gfloat.formats.format_info_bfloat16),
    ("float16", gfloat.formats.format_info_binary16),
]

# A representative set of the IEEE P3109 family (K, P, signed, extended): every precision of
# the signed extended 8-bit formats, the 8-bit finite / unsigned variants, and narrower and
# wider members of each kind.
P3109 = [
    (8, 1, True, True), (8, 2, True, True), (8, 3, True, True), (8, 4, True, True),
    (8, 5, True, True), (8, 6, True, True), (8, 7, True, True),
    (8, 3, True, False), (8, 4, True, False), (8, 1, True, False),
    (8, 3, False, True), (8, 4, False, False), (8, 1, False, False), (8, 8, False, True),
    (3, 1, True, True), (4, 2, True, False), (6, 3, True, True), (6, 2, False, False),
    (12, 5, True, True), (16, 8, True, True), (16, 11, True, False), (16, 8, False, True),
]

MODES = [
    ("nearest_even", RoundMode.TiesToEven),
    ("nearest_away", RoundMode.TiesToAway),
    ("toward_zero", RoundMode.TowardZero),
    ("toward_negative", RoundMode.TowardNegative),
    ("toward_positive", RoundMode.TowardPositive),
    ("stochastic", RoundMode.Stochastic),
    ("stochastic_odd", RoundMode.StochasticOdd),
    ("stochastic_fast", RoundMode.StochasticFast),
    ("stochastic_fastest", RoundMode.StochasticFastest),
]
STOCHASTIC = {"stochastic", "stochastic_odd", "stochastic_fast", "stochastic_fastest"}
SR_BITS = [3, 8, 13]


def p3109_name(k, p, s, e):
    return f"p3109_k{k}p{p}{'s' if s else 'u'}{'e' if e else 'f'}"


def formats():
    out = list(NAMED)
    for k, p, s, e in P3109:
        fi = format_info_p3109(
            k, p, Signedness.Signed if s else Signedness.Unsigned,
            Domain.Extended if e else Domain.Finite,
        )
        out.append((p3109_name(k, p, s, e), fi))
    return out


def save_npy(name_, arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    with open(os.path.join(OUT, name_ + ".npy.gz"), "wb") as fh:
        with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as gz:
            gz.write(buf.getvalue())


def positive_values(fi):
    """Every positive finite value of the format (a strided sample above 8 bits), ascending."""
    k = fi.bits
    codes = np.arange(1 << k, dtype=np.int64)
    if k > 8:
        # Every 61st code, and the first and last 64 positive codes of each sign.
        half = 1 << (k - 1)
        sel = np.concatenate([codes[::61], codes[:64], codes[half - 64:half + 64], codes[-64:]])
        codes = np.unique(sel)
    vals = np.array([gfloat.decode_float(fi, int(c)).fval for c in codes], dtype=np.float64)
    vals = vals[np.isfinite(vals) & (vals > 0)]
    return np.unique(vals)


def neighbours(x, dtype):
    x = x.astype(dtype)
    inf = np.array(np.inf, dtype=dtype)
    return np.concatenate([x, np.nextafter(x, inf), np.nextafter(x, -inf)])


def probes(fi, dtype, rng):
    info = np.finfo(dtype)
    v = positive_values(fi)
    mids = (v[:-1] + v[1:]) / 2
    top = float(fi.max)
    # max + half an ulp: the overflow tie.
    ulp_top = top - float(v[-2]) if len(v) > 1 else top
    if fi.precision == 1:
        ulp_top = top
    over = np.array([top + ulp_top / 2, 2 * top, top * 1.75], dtype=np.float64)
    smallest = float(v[0])
    tiny = np.array([smallest / 2, smallest / 4, smallest / 3, smallest * 0.75, smallest * 1e-3],
                    dtype=np.float64)
    lo, hi = np.log2(smallest) - 2, np.log2(top) + 1
    rand = 2.0 ** rng.uniform(lo, hi, 600)
    with np.errstate(over="ignore"):
        fin = np.concatenate([
            neighbours(v.astype(np.float64), dtype),
            neighbours(mids, dtype),
            neighbours(over, dtype),
            neighbours(tiny, dtype),
            rand.astype(dtype),
            np.array([info.max, info.tiny, info.smallest_subnormal], dtype=dtype),
        ])
    fin = fin[np.isfinite(fin)]
    fin = np.unique(fin)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], dtype=dtype)
    return np.concatenate([fin, -fin, specials]).astype(dtype)


def run(fi, x, rnd, sat, bits, nbits):
    """gfloat's codes for `x` (0 where it raised) and the mask of raised elements."""
    kw = {}
    if bits is not None:
        kw = {"srbits": bits, "srnumbits": nbits}
    try:
        with np.errstate(all="ignore"):
            r = round_ndarray(fi, x, rnd, sat, **kw)
            codes = encode_ndarray(fi, r).astype(np.int64)
        return codes, np.zeros(len(x), dtype=np.uint8)
    except (ValueError, AssertionError):
        pass
    codes = np.zeros(len(x), dtype=np.int64)
    raised = np.zeros(len(x), dtype=np.uint8)
    # The elements that can raise (NaN, beyond the largest value) one by one, the rest at once.
    risky = np.isnan(x) | (np.abs(x.astype(np.float64)) > float(fi.max))
    safe = np.flatnonzero(~risky)
    try:
        kws = {} if bits is None else {"srbits": bits[safe], "srnumbits": nbits}
        with np.errstate(all="ignore"):
            r = round_ndarray(fi, x[safe], rnd, sat, **kws)
            codes[safe] = encode_ndarray(fi, r).astype(np.int64)
        todo = np.flatnonzero(risky)
    except (ValueError, AssertionError):
        todo = range(len(x))
    for i in todo:
        one = {} if bits is None else {"srbits": bits[i:i + 1], "srnumbits": nbits}
        try:
            with np.errstate(all="ignore"):
                r = round_ndarray(fi, x[i:i + 1], rnd, sat, **one)
                codes[i] = int(encode_ndarray(fi, r)[0])
        except (ValueError, AssertionError):
            raised[i] = 1
    return codes, raised


def main():
    rng = np.random.default_rng(20261126)
    inputs = {"f32": [], "f64": []}
    bits_all, codes_all, raised_all = [], [], []
    n_bits = n_codes = 0
    n_in = {"f32": 0, "f64": 0}
    fmts = []
    runs = []
    for name_, fi in formats():
        entry = {"name": name_, "gfloat": fi.name, "inputs": {}}
        for src, dtype in (("f32", np.float32), ("f64", np.float64)):
            x = probes(fi, dtype, rng)
            raw = x.view(np.uint32 if dtype == np.float32 else np.uint64)
            inputs[src].append(raw)
            entry["inputs"][src] = [n_in[src], len(x)]
            n_in[src] += len(x)
            bit_sets = {}
            for nb in SR_BITS:
                b = rng.integers(0, 1 << nb, len(x), dtype=np.int64)
                # The extremes on the first elements of each sign's run of values.
                b[:4] = [0, 1, (1 << nb) - 1, 1 << (nb - 1)]
                bit_sets[nb] = (n_bits, b)
                bits_all.append(b.astype(np.uint32))
                n_bits += len(b)
            for mode, rnd in MODES:
                for sat in (False, True):
                    widths = SR_BITS if mode in STOCHASTIC else [None]
                    for nb in widths:
                        if nb is None:
                            codes, raised = run(fi, x, rnd, sat, None, 0)
                            boff = None
                        else:
                            boff, b = bit_sets[nb]
                            codes, raised = run(fi, x, rnd, sat, b, nb)
                        runs.append({
                            "format": name_, "source": src, "mode": mode, "sat": sat,
                            "sr_bits": nb, "bits": boff, "codes": n_codes,
                            "raised": int(raised.sum()),
                        })
                        codes_all.append(codes.astype(np.uint16))
                        raised_all.append(raised)
                        n_codes += len(codes)
        fmts.append(entry)
        print(name_, file=sys.stderr)
    save_npy("f32_inputs", np.concatenate(inputs["f32"]))
    save_npy("f64_inputs", np.concatenate(inputs["f64"]))
    save_npy("bits", np.concatenate(bits_all))
    save_npy("codes", np.concatenate(codes_all))
    save_npy("raised", np.concatenate(raised_all))
    summary = {
        "generator": "tools/gen_rounding_vectors.py",
        "versions": REQUIRED,
        "formats": fmts,
        "runs": runs,
        "counts": {
            "formats": len(fmts),
            "runs": len(runs),
            "f32_inputs": n_in["f32"],
            "f64_inputs": n_in["f64"],
            "codes": n_codes,
            "raised": int(sum(r["raised"] for r in runs)),
        },
    }
    with open(os.path.join(OUT, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=0)
    print(json.dumps(summary["counts"]), file=sys.stderr)


main()
