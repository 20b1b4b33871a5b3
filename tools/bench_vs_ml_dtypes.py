#!/usr/bin/env python3
"""Compare mldtypes' conversion kernels with ml_dtypes' `astype`, in one run.

For every float32 <-> format pair of `mldtypes::cast::bench::pairs()`, times
ml_dtypes' `x.astype(dtype)` (single thread, best of several runs; the issue's
yardstick) and, for reference, the same cast loop into a preallocated array
(`np.copyto(out, x, casting="unsafe")`, no allocation or page faults), on the
same number of elements; runs mldtypes' single-threaded bench (via
`mldtypes bench --json` if the CLI reports memcpy figures, else the
`mldtypes bench`, which writes into a preallocated buffer); and prints
ns/element, the speed-up over ml_dtypes (astype and copyto) and the ratio to a
memcpy of the larger buffer, with the issue's targets marked (judged on astype).

Usage: tools/bench_vs_ml_dtypes.py [--elements N] [--repeats R] [--json OUT]
"""
# requirements: ml_dtypes==0.6.0 numpy==2.4.6

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

if ml_dtypes.__version__ != "0.6.0":
    sys.exit(f"ml_dtypes 0.6.0 required, found {ml_dtypes.__version__}")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FORMATS = [
    "bfloat16", "float16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
]


def np_dtype(name):
    return np.dtype(np.float16) if name == "float16" else np.dtype(getattr(ml_dtypes, name))


def best_of(repeats, fn):
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def time_ml_dtypes(n, repeats):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    rows = {}
    for name in FORMATS:
        dt = np_dtype(name)
        y = x.astype(dt)
        out8 = np.empty(n, dtype=dt)
        out32 = np.empty(n, dtype=np.float32)
        a_enc = best_of(repeats, lambda: x.astype(dt))
        a_dec = best_of(repeats, lambda: y.astype(np.float32))
        c_enc = best_of(repeats, lambda: np.copyto(out8, x, casting="unsafe"))
        c_dec = best_of(repeats, lambda: np.copyto(out32, y, casting="unsafe"))
        rows[("float32", name)] = (a_enc * 1e9 / n, c_enc * 1e9 / n)
        rows[(name, "float32")] = (a_dec * 1e9 / n, c_dec * 1e9 / n)
    return rows


def run_mldtypes(n, path=None):
    cmd = [
        "cargo", "run", "--release", "-q", "-p", "mldtypes-cli", "--",
        "bench", "--elements", str(n), "--json",
    ] + (["--path", path] if path else [])
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("could not run the mldtypes bench:\n" + p.stderr)
    out = json.loads(p.stdout)
    rows = [dict(r, path=out["path"]) for r in out["results"]]
    return rows, " ".join(cmd[:8])


def target(other):
    """The issue's speed-up target for float32 <-> `other` (None: no target)."""
    if other == "bfloat16":
        return 4.0
    if other == "float16":
        return None
    return 15.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=1 << 24)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", help="also write the table as JSON to this file")
    ap.add_argument("--path", help="force a kernel path (portable, avx2, avx512)")
    args = ap.parse_args()

    ref = time_ml_dtypes(args.elements, args.repeats)
    ours, how = run_mldtypes(args.elements, args.path)
    print(f"{args.elements} elements, single thread; ml_dtypes {ml_dtypes.__version__}, "
          f"numpy {np.__version__}; mldtypes via `{how}` "
          f"(path {ours[0].get('path', '?')})")
    hdr = (f"{'conversion':<34} {'astype ns':>9} {'copyto ns':>9} {'ours ns':>8} "
           f"{'vs astype':>9} {'vs copyto':>9} {'/memcpy':>8}  target")
    print(hdr)
    print("-" * len(hdr))
    table = []
    for r in ours:
        key = (r["from"], r["to"])
        if key not in ref:
            continue
        astype_ns, copyto_ns = ref[key]
        other = r["to"] if r["from"] == "float32" else r["from"]
        ns = r["ns_per_element"]
        speedup, speedup_copyto = astype_ns / ns, copyto_ns / ns
        vs_memcpy = ns / r["memcpy_ns_per_element"]
        need = target(other)
        ok = "" if need is None else (
            "ok" if speedup >= need and vs_memcpy <= 1.5
            else f"MISSED (>= {need:g}x astype, <= 1.5x memcpy)")
        print(f"{key[0] + ' -> ' + key[1]:<34} {astype_ns:>9.3f} {copyto_ns:>9.3f} {ns:>8.3f} "
              f"{speedup:>8.1f}x {speedup_copyto:>8.1f}x {vs_memcpy:>7.2f}x  {ok}")
        table.append(dict(zip(("from", "to"), key), ml_dtypes_astype_ns=astype_ns,
                          ml_dtypes_copyto_ns=copyto_ns, ns=ns, speedup=speedup,
                          speedup_copyto=speedup_copyto, vs_memcpy=vs_memcpy))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
