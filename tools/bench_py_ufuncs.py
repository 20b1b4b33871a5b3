#!/usr/bin/env python3
"""Benchmark: elementwise ufuncs on mldtypes arrays against ml_dtypes, in the same run.

For each float format (bfloat16 and the float8 formats by default) and each ufunc, times
`ufunc(a, b, out=o)` on arrays of N elements (16M by default, values uniform in [-4, 4) rounded
into the format) with each package, best of `--repeat` runs, single-threaded as NumPy's ufunc
loops are, and prints the times and the ratio ml_dtypes / mldtypes (above 1: mldtypes is faster).

The two packages both register dtypes named `bfloat16` etc. with NumPy, so each is measured in
its own subprocess (the same interpreter and NumPy); nothing else differs.

Requirements: NumPy >= 2.0, the `mldtypes` package installed, and `ml_dtypes==0.6.0` installed
in the same environment by whoever runs the benchmark (tests never install it).

    python tools/bench_py_ufuncs.py                     # 16M elements, add and multiply
    python tools/bench_py_ufuncs.py --n 1000000 --ufuncs add,multiply,divide,maximum,less,sqrt
    python tools/bench_py_ufuncs.py --strided           # every other element (non-contiguous)

Output: one row per (dtype, ufunc): ml_dtypes ms, mldtypes ms, ratio; the CPU's SIMD level is
printed first (the machines are shared and noisy: quote ratios, not absolute times).
"""

import argparse
import json
import subprocess
import sys

DEFAULT_TYPES = [
    "bfloat16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
]


def measure(package, types, ufuncs, n, repeat, strided):
    """Runs in a subprocess: {(dtype, ufunc): best seconds} for one package."""
    import importlib
    import time

    import numpy as np

    mod = importlib.import_module(package)
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, size=2 * n if strided else n).astype(np.float32)
    y = rng.uniform(-4, 4, size=2 * n if strided else n).astype(np.float32)
    out = {}
    for name in types:
        t = getattr(mod, name)
        a, b = x.astype(t), y.astype(t)
        if strided:
            a, b = a[::2], b[::2]
        for uname in ufuncs:
            u = getattr(np, uname)
            o = u(a[:16], b[:16]) if u.nin == 2 else u(a[:16])
            res = np.empty(a.shape, dtype=o.dtype)
            args = (a, b) if u.nin == 2 else (a,)
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                u(*args, out=res)
                best = min(best, time.perf_counter() - t0)
            out[f"{name}/{uname}"] = best
    return out


def cpu_simd():
    """The best SIMD level of this CPU, from /proc/cpuinfo (Linux), else 'unknown'."""
    try:
        flags = set()
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
        for level, need in (("AVX-512", "avx512bw"), ("AVX2", "avx2"), ("SSE4.2", "sse4_2")):
            if need in flags:
                return level
    except OSError:
        pass
    return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1 << 24, help="elements per array (default 16M)")
    p.add_argument("--repeat", type=int, default=5, help="runs per measurement; the best is kept")
    p.add_argument("--types", default=",".join(DEFAULT_TYPES), help="comma-separated dtype names")
    p.add_argument("--ufuncs", default="add,multiply", help="comma-separated NumPy ufunc names")
    p.add_argument("--strided", action="store_true", help="operate on every other element")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    types, ufuncs = args.types.split(","), args.ufuncs.split(",")
    if args.child:
        json.dump(measure(args.child, types, ufuncs, args.n, args.repeat, args.strided), sys.stdout)
        return

    results = {}
    for package in ("ml_dtypes", "mldtypes"):
        cmd = [sys.executable, __file__, "--child", package, "--n", str(args.n),
               "--repeat", str(args.repeat), "--types", args.types, "--ufuncs", args.ufuncs]
        if args.strided:
            cmd.append("--strided")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"measuring {package} failed:\n{proc.stderr}")
        results[package] = json.loads(proc.stdout)

    layout = "strided (step 2)" if args.strided else "contiguous"
    print(f"CPU SIMD: {cpu_simd()}; n = {args.n:,} elements, {layout}, best of {args.repeat}")
    print(f"{'dtype':<20} {'ufunc':<12} {'ml_dtypes ms':>13} {'mldtypes ms':>12} {'ratio':>7}")
    for key, ref in results["ml_dtypes"].items():
        ours = results["mldtypes"][key]
        name, uname = key.split("/")
        print(f"{name:<20} {uname:<12} {ref * 1e3:13.1f} {ours * 1e3:12.1f} {ref / ours:7.2f}x")


if __name__ == "__main__":
    main()
