#!/usr/bin/env python3
"""Compares the float ufunc results and floating-point flags of two builds of mldtypes, input for
input: a differential check of a change to the ufunc loops (for example result tables replacing
computed loops) against the build before it.

Each build is run in its own interpreter (both packages are called `mldtypes`):

    OLD/bin/python tools/compare_ufunc_builds.py dump old.npz
    NEW/bin/python tools/compare_ufunc_builds.py dump new.npz
    python tools/compare_ufunc_builds.py compare old.npz new.npz

`dump` runs, for every float format of the package, every one-operand ufunc on every code and
every two-operand ufunc on every pair of codes of the one-byte formats (and on a sample of 4,096
pairs of bfloat16 codes), one element per call under `numpy.errstate(all="call")`, and records
each output's bits and the set of floating-point errors NumPy reported for that element
(divide, overflow, underflow, invalid). `compare` prints every difference and exits with status
1 if there is one. `float_power` is skipped (the two builds may differ on purpose).
"""

import argparse
import sys

import numpy as np

UNARY = [
    "negative", "positive", "absolute", "fabs", "rint", "sign", "conjugate", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "cbrt", "reciprocal", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "deg2rad", "rad2deg", "floor", "ceil", "trunc", "spacing", "isfinite", "isinf",
    "isnan", "signbit", "logical_not", "modf", "frexp",
]
BINARY = [
    "add", "subtract", "multiply", "divide", "true_divide", "logaddexp", "logaddexp2",
    "floor_divide", "power", "remainder", "mod", "fmod", "divmod", "arctan2", "hypot",
    "heaviside", "copysign", "nextafter", "maximum", "minimum", "fmax", "fmin", "equal",
    "not_equal", "less", "greater", "less_equal", "greater_equal", "logical_and", "logical_or",
    "logical_xor",
]
FORMATS = [
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float6_e2m3fn", "float6_e3m2fn",
    "float4_e2m1fn", "float8_e8m0fnu",
]
ERRS = {"divide by zero": 1, "overflow": 2, "underflow": 4, "invalid value": 8}


def bits(r):
    """The bits of an output array as uint64."""
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[r.dtype.itemsize]
    return np.ascontiguousarray(r).view(u).astype(np.uint64)


def run(u, args):
    """Outputs and per-element error sets of `u` on 1-element slices of `args`."""
    n = len(args[0])
    flags = np.zeros(n, np.uint8)
    seen = []

    def call(err, _flag):
        for text, bit in ERRS.items():
            if text in err:
                seen.append(bit)

    outs = None
    old = np.seterrcall(call)
    try:
        with np.errstate(all="call"):
            for i in range(n):
                seen.clear()
                r = u(*(a[i:i + 1] for a in args))
                r = r if isinstance(r, tuple) else (r,)
                if outs is None:
                    outs = [np.empty(n, x.dtype) for x in r]
                for o, x in zip(outs, r):
                    o[i] = x[0]
                flags[i] = sum(set(seen))
    finally:
        np.seterrcall(old)
    return [bits(o) for o in outs], flags


def dump(path):
    import mldtypes
    data = {}
    for name in FORMATS:
        t = getattr(mldtypes, name)
        size = np.dtype(t).itemsize
        codes = np.arange(1 << (8 * size), dtype=np.uint8 if size == 1 else np.uint16)
        x = codes.view(t)
        for uname in UNARY:
            outs, flags = run(getattr(np, uname), [x])
            for k, o in enumerate(outs):
                data[f"{name}/{uname}/{k}"] = o
            data[f"{name}/{uname}/flags"] = flags
        if size == 1:
            a, b = np.repeat(codes, 256), np.tile(codes, 256)
        else:
            rng = np.random.default_rng(0)
            a = rng.integers(0, 1 << 16, 4096).astype(np.uint16)
            b = rng.integers(0, 1 << 16, 4096).astype(np.uint16)
        xa, xb = a.view(t), b.view(t)
        for uname in BINARY:
            outs, flags = run(getattr(np, uname), [xa, xb])
            for k, o in enumerate(outs):
                data[f"{name}/{uname}/{k}"] = o
            data[f"{name}/{uname}/flags"] = flags
        print(name, file=sys.stderr)
    np.savez_compressed(path, **data)


def compare(old_path, new_path):
    old, new = np.load(old_path), np.load(new_path)
    bad = 0
    for key in sorted(old.files):
        if key not in new.files:
            print(f"{key}: missing from the new build")
            bad += 1
            continue
        o, n = old[key], new[key]
        if o.shape != n.shape or not np.array_equal(o, n):
            idx = np.nonzero(o != n)[0] if o.shape == n.shape else []
            print(f"{key}: {len(idx)} elements differ, e.g. "
                  + ", ".join(f"#{i}: {int(o[i]):#x} -> {int(n[i]):#x}" for i in idx[:4]))
            bad += 1
    print(f"{len(old.files)} arrays compared, {bad} differ")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    c = sub.add_parser("compare")
    c.add_argument("old")
    c.add_argument("new")
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.out)
        return 0
    return compare(args.old, args.new)


if __name__ == "__main__":
    sys.exit(main())
