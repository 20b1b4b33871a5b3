#!/usr/bin/env python3
"""Compare mldtypes' conversion kernels with ml_dtypes' `astype`, in one run.

For every float32 <-> format pair of `mldtypes::cast::bench::pairs()`, times
ml_dtypes' NumPy cast -- the loop `astype` runs, called as `np.copyto(out, x,
casting="unsafe")` into a preallocated array so that allocation and page
faults are not timed (single thread, best of several runs) -- on the same
number of elements and runs mldtypes' single-threaded bench (via
`mldtypes bench --json` if the CLI has it, else the `bench_cast` example),
then prints ns/element, the speed-up over ml_dtypes and the ratio to a memcpy
of the larger buffer, with the issue's targets marked.

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
        t_enc = best_of(repeats, lambda: np.copyto(out8, x, casting="unsafe"))
        t_dec = best_of(repeats, lambda: np.copyto(out32, y, casting="unsafe"))
        rows[("float32", name)] = t_enc * 1e9 / n
        rows[(name, "float32")] = t_dec * 1e9 / n
    return rows


def run_mldtypes(n):
    cli = [
        "cargo", "run", "--release", "-q", "-p", "mldtypes-cli", "--",
        "bench", "--elements", str(n), "--json",
    ]
    example = [
        "cargo", "run", "--release", "-q", "-p", "mldtypes", "--example",
        "bench_cast", "--", str(n),
    ]
    for cmd in (cli, example):
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if p.returncode == 0:
            try:
                rows = json.loads(p.stdout)
            except json.JSONDecodeError:
                continue
            if rows and "ns_per_element" in rows[0]:
                return rows, " ".join(cmd[:7])
    sys.exit("could not run the mldtypes bench:\n" + p.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=1 << 24)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="also write the table as JSON to this file")
    args = ap.parse_args()

    ref = time_ml_dtypes(args.elements, args.repeats)
    ours, how = run_mldtypes(args.elements)
    print(f"{args.elements} elements, single thread; ml_dtypes {ml_dtypes.__version__}, "
          f"numpy {np.__version__}; mldtypes via `{how}`")
    hdr = f"{'conversion':<36} {'ml_dtypes ns':>12} {'ours ns':>8} {'speed-up':>9} {'vs memcpy':>10}  target"
    print(hdr)
    print("-" * len(hdr))
    table = []
    for r in ours:
        key = (r["from"], r["to"])
        if key not in ref:
            continue
        other = r["to"] if r["from"] == "float32" else r["from"]
        speedup = ref[key] / r["ns_per_element"]
        vs_memcpy = r["ns_per_element"] / r["memcpy_ns_per_element"]
        need = 4.0 if other == "bfloat16" else (None if other == "float16" else 15.0)
        ok = "" if need is None else (
            "ok" if speedup >= need and vs_memcpy <= 1.5 else f"MISSED (>= {need:g}x, <= 1.5x memcpy)")
        print(f"{key[0] + ' -> ' + key[1]:<36} {ref[key]:>12.3f} {r['ns_per_element']:>8.3f} "
              f"{speedup:>8.1f}x {vs_memcpy:>9.2f}x  {ok}")
        table.append(dict(zip(("from", "to"), key), ml_dtypes_ns=ref[key],
                          ns=r["ns_per_element"], speedup=speedup, vs_memcpy=vs_memcpy))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
