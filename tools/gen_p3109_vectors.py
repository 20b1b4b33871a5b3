#!/usr/bin/env python3
# requirements: gfloat==0.5.2 numpy==2.4.6
"""Generate the committed IEEE P3109 test vectors under crates/mldtypes/tests/vectors/p3109/.

Reference: Graphcore's gfloat 0.5.2 (the P3109 working group's reference implementation) on
NumPy 2.4.6, in its own virtual environment (/work/venvs/gfloat):

    python3 -m venv /work/venvs/gfloat
    /work/venvs/gfloat/bin/pip install gfloat==0.5.2 numpy==2.4.6
    /work/venvs/gfloat/bin/python tools/gen_p3109_vectors.py [OUTPUT_DIR]

Only gfloat's public API is called (`format_info_p3109`, `decode_float`, `round_float` with
`RoundMode.TiesToEven` and `sat=False`, `encode_float`, the `FormatInfo` properties). Every
output is deterministic (fixed seeds, sorted probe sets, gzip streams written with mtime 0);
`README.md` next to the vectors documents every file.

Members are in mldtypes' order (`P3109::index`): by width K, signed before unsigned, by
precision P, extended before finite.
"""

import gzip
import io
import json
import math
import os
import random
import struct
import sys
from importlib.metadata import version

import numpy as np

REQUIRED = {"gfloat": "0.5.2", "numpy": "2.4.6"}
FOUND = {name: version(name) for name in REQUIRED}
if FOUND != REQUIRED:
    sys.exit(f"need {REQUIRED}, found {FOUND}")

from gfloat import decode_float, encode_float, round_float  # noqa: E402
from gfloat.formats import format_info_p3109  # noqa: E402
from gfloat.types import Domain, FloatClass, RoundMode, Signedness  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "crates", "mldtypes", "tests", "vectors", "p3109"
)
os.makedirs(OUT, exist_ok=True)

# ---------------------------------------------------------------------------------------------
# The family, in mldtypes' order.
# ---------------------------------------------------------------------------------------------


def members():
    out = []
    for k in range(2, 17):
        for signed in (True, False):
            top = k - 1 if signed else k
            for p in range(1, top + 1):
                for extended in (True, False):
                    out.append((k, p, signed, extended))
    return out


MEMBERS = members()
assert len(MEMBERS) == 510


def name(m):
    k, p, s, e = m
    return f"p3109_k{k}p{p}{'s' if s else 'u'}{'e' if e else 'f'}"


def info(m):
    k, p, s, e = m
    return format_info_p3109(
        k, p, Signedness.Signed if s else Signedness.Unsigned,
        Domain.Extended if e else Domain.Finite,
    )


def exp_bits(m):
    k, p, s, _ = m
    return k - p if s else k - p + 1


# gfloat computes with Python floats: members whose values reach beyond float64 (12 or more
# exponent bits) overflow inside gfloat; the vectors cover the others.
def gfloat_can(m):
    return exp_bits(m) <= 11


CLASS = {
    FloatClass.ZERO: 0,
    FloatClass.SUBNORMAL: 1,
    FloatClass.NORMAL: 2,
    FloatClass.INFINITE: 3,
    FloatClass.NAN: 4,
}

# ---------------------------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------------------------

written = []


def save_npy(name_, arr):
    arr = np.ascontiguousarray(arr)
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    path = os.path.join(OUT, name_ + ".npy.gz")
    with open(path, "wb") as fh:
        with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as gz:
            gz.write(buf.getvalue())
    written.append({"name": name_ + ".npy.gz", "dtype": arr.dtype.str, "shape": list(arr.shape)})


def save_json(name_, obj):
    with open(os.path.join(OUT, name_ + ".json"), "w") as fh:
        json.dump(obj, fh, indent=1)
        fh.write("\n")


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_f64_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def from_f32_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def next_f64(x, up):
    return math.nextafter(x, math.inf if up else -math.inf)


def next_f32(x, up):
    """The float32 neighbour of the float32 value x."""
    b = f32_bits(x)
    if x == 0:
        return from_f32_bits(1) if up else -from_f32_bits(1)
    if (x > 0) == up:
        b += 1
    else:
        b -= 1
    return from_f32_bits(b)


def is_f32(x):
    return math.isnan(x) or float(np.float32(x)) == x


# ---------------------------------------------------------------------------------------------
# 1. Every code point of every member with K <= 8
# ---------------------------------------------------------------------------------------------

code_members = [m for m in MEMBERS if m[0] <= 8]
values, classes, code_index = [], [], []
for m in code_members:
    fi = info(m)
    start = len(values)
    for c in range(1 << m[0]):
        v = decode_float(fi, c)
        values.append(float(v.fval))
        classes.append((CLASS[v.fclass], int(v.signbit)))
    code_index.append({"name": name(m), "offset": start, "count": 1 << m[0]})
save_npy("codes_values", np.array(values, dtype="<f8"))
save_npy("codes_class", np.array(classes, dtype="u1").T.copy())

# ---------------------------------------------------------------------------------------------
# 2. Encodings from float64 and float32
# ---------------------------------------------------------------------------------------------


def finite_values(fi, k):
    """Sorted positive finite values of a member (exact floats)."""
    vals = set()
    for c in range(1 << k):
        v = decode_float(fi, c).fval
        if math.isfinite(v) and v > 0:
            vals.add(float(v))
    return sorted(vals)


def gfloat_code(fi, x):
    """gfloat's round-to-nearest-even, non-saturating code of x, or None where it raises."""
    try:
        r = round_float(fi, x, RoundMode.TiesToEven, False)
        return int(encode_float(fi, r))
    except (ValueError, AssertionError, OverflowError):
        return None


def probes(fi, m, stride, rng):
    """float64 and float32 probes of one member (sets of values)."""
    k = m[0]
    vals = finite_values(fi, k)
    f64, f32 = set(), set()
    if not vals:
        # p3109_k2p1se: 0, ±inf and NaN only; probe around 1.
        vals = []
        f64.update([0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 1e-30, 1e30])
    ties = []
    for i, v in enumerate(vals):
        if i % stride and i > 2 and i + 3 < len(vals):
            continue
        nxt = vals[i + 1] if i + 1 < len(vals) else None
        f64.add(v)
        if nxt is not None:
            ties.append((v + nxt) / 2)  # exact: both are short binary fractions
    top = vals[-1] if vals else 1.0
    if len(vals) >= 2:
        ulp = top - vals[-2]
        # The tie above the largest value (overflow threshold of an unbounded exponent),
        # the next value, 1.5x / 2x / 4x the largest, big constants.
        ties.append(top + ulp / 2)
        f64.update(x for x in [top + ulp, top * 1.5, top * 2, top * 4] if math.isfinite(x))
    smallest = vals[0] if vals else 1.0
    ties.append(smallest / 2)
    for mult in (0.25, 0.5, 0.75, 1.0, 1.5):
        f64.add(smallest * mult)
    f64.update([1e30, 1e300, 3.0e38, 1e-30, 1e-300, 5e-324, 2.2250738585072014e-308,
                1.7976931348623157e308, 1.0, 3.0])
    for t in ties:
        f64.add(t)
        f64.add(next_f64(t, True))
        f64.add(next_f64(t, False))
    for _ in range(60):
        e = rng.randint(max(int(math.log2(smallest)) - 3, -1074), min(int(math.log2(top)) + 3, 1022))
        f64.add(math.ldexp(1.0 + rng.random(), e))
    for _ in range(30):
        x = from_f64_bits(rng.getrandbits(64))
        if math.isfinite(x):
            f64.add(abs(x))
    # float32 probes: the float64 ones that are float32 values, and the float32 neighbours of
    # every tie (the ties themselves when they are float32 values).
    for x in list(f64):
        y = float(np.float32(x)) if abs(x) < 3.4e38 else None
        if y is None or not math.isfinite(y):
            continue
        f32.add(y)
        if y in ties or x in ties:
            f32.add(next_f32(y, True))
            f32.add(next_f32(y, False))
    for t in ties:
        if abs(t) >= 3.4e38:
            continue
        y = float(np.float32(t))
        if math.isfinite(y):
            f32.update([y, next_f32(y, True), next_f32(y, False)])
    for _ in range(30):
        y = from_f32_bits(rng.getrandbits(32))
        if math.isfinite(y):
            f32.add(abs(y))
    signed64 = sorted({s * x for x in f64 for s in (1.0, -1.0)} | {0.0})
    signed32 = sorted({s * x for x in f32 for s in (1.0, -1.0)} | {0.0})
    return signed64, signed32


def specials_f64():
    return [f64_bits(v) for v in (-0.0, math.inf, -math.inf)] + [
        0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001,
    ]


def specials_f32():
    return [f32_bits(v) for v in (-0.0, math.inf, -math.inf)] + [0x7FC00000, 0xFFC00000, 0x7F800001]


# Every K <= 8 member, and a sample of the wider ones gfloat can represent: at each width
# 9..16, precision 1, the middle precision and the largest, both signednesses and domains.
enc_members = [m for m in MEMBERS if m[0] <= 8]
for k in range(9, 17):
    for s in (True, False):
        top = k - 1 if s else k
        for p in sorted({1, (top + 1) // 2, top}):
            for e in (True, False):
                m = (k, p, s, e)
                if gfloat_can(m):
                    enc_members.append(m)

rng = random.Random(3109)
in64, out64, in32, out32 = [], [], [], []
index = []
raised = {}
for m in enc_members:
    fi = info(m)
    stride = 1 if m[0] <= 8 else 61
    p64, p32 = probes(fi, m, stride, rng)
    entry = {"name": name(m), "f64": [len(in64), 0], "f32": [len(in32), 0]}
    for x in p64:
        in64.append(f64_bits(x))
    for b in specials_f64():
        in64.append(b)
    for b in in64[entry["f64"][0]:]:
        c = gfloat_code(fi, from_f64_bits(b))
        if c is None:
            raised.setdefault(name(m), 0)
            raised[name(m)] += 1
            c = 0xFFFFFFFF
        out64.append(c)
    entry["f64"][1] = len(in64) - entry["f64"][0]
    for y in p32:
        in32.append(f32_bits(y))
    for b in specials_f32():
        in32.append(b)
    for b in in32[entry["f32"][0]:]:
        c = gfloat_code(fi, float(from_f32_bits(b)))
        if c is None:
            c = 0xFFFFFFFF
        out32.append(c)
    entry["f32"][1] = len(in32) - entry["f32"][0]
    index.append(entry)

save_npy("f64_inputs", np.array(in64, dtype="<u8"))
save_npy("f64_codes", np.array(out64, dtype="<u4"))
save_npy("f32_inputs", np.array(in32, dtype="<u4"))
save_npy("f32_codes", np.array(out32, dtype="<u4"))

# ---------------------------------------------------------------------------------------------
# 3. FormatInfo of every member gfloat can describe
# ---------------------------------------------------------------------------------------------


FLOAT_FIELDS = {"max", "min", "eps", "epsneg", "smallest_normal", "smallest_subnormal"}


def field(fi, attr):
    try:
        v = getattr(fi, attr)
    except (ValueError, OverflowError, AssertionError):
        return None
    if attr in FLOAT_FIELDS:
        return repr(float(v))  # gfloat returns Python ints for some (2 ** 0)
    return v


FIELDS = ["bias", "expBits", "tSignificandBits", "max", "min", "eps", "epsneg", "emax",
          "maxexp", "smallest_normal", "smallest_subnormal", "num_nans", "code_of_nan",
          "code_of_posinf", "code_of_neginf", "code_of_max", "code_of_min", "code_of_zero",
          "has_zero", "has_nz", "num_high_nans", "is_signed"]
infos = {}
for m in MEMBERS:
    if not gfloat_can(m):
        continue
    fi = info(m)
    infos[name(m)] = {f: field(fi, f) for f in FIELDS}
save_json("format_info", infos)

save_json("summary", {
    "generator": "tools/gen_p3109_vectors.py",
    "versions": REQUIRED,
    "members": len(MEMBERS),
    "code_members": code_index,
    "codes": len(values),
    "encode_members": index,
    "f64_probes": len(in64),
    "f32_probes": len(in32),
    "gfloat_raised_f64": raised,
    "format_info_members": len(infos),
    "files": written,
})
print(f"codes {len(values)} of {len(code_members)} members; f64 probes {len(in64)}, f32 probes "
      f"{len(in32)} over {len(enc_members)} members; gfloat raised on {sum(raised.values())} "
      f"f64 inputs; format_info for {len(infos)} members")
