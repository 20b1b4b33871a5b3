#!/usr/bin/env python3
"""Speed of mldtypes' NumPy casts and arithmetic against ml_dtypes 0.6.0, measured in one run.

Both packages are imported into the same process (see the README's Python section for what
that means for dtype names) and each operation runs on the same data through NumPy's own
``astype`` / ufunc machinery, so the ratios compare the registered cast and ufunc loops.
The casts run on one thread (mldtypes converts on the calling thread inside NumPy casts).

Run it from a virtual environment outside the repository that has both packages:

    python -m venv /tmp/bench && /tmp/bench/bin/pip install ml_dtypes==0.6.0 numpy==2.4.6
    /tmp/bench/bin/pip install ./crates/mldtypes-py
    /tmp/bench/bin/python tools/bench_py_vs_ml_dtypes.py [--n 16777216] [--repeat 5]

Prints one Markdown table: for each operation the best-of-`repeat` time of ml_dtypes and of
mldtypes and the ratio (ml_dtypes time / mldtypes time; above 1 means mldtypes is faster),
then the CPU's vector extensions and the kernel path mldtypes selected.
"""

import argparse
import platform
import time

import numpy as np

import ml_dtypes
import mldtypes

FORMATS = [
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
]


def best(fn, repeat):
    """Best wall time of `repeat` calls, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def cpu_flags():
    """The AVX-512/AVX2 flags of this CPU (Linux), as a short string."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    wanted = ["avx2", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
                              "avx512_fp16"]
                    return " ".join(x for x in wanted if x in flags) or "no AVX2"
    except OSError:
        pass
    return platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="elements per array (16M)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per operation")
    args = ap.parse_args()
    n, repeat = args.n, args.repeat

    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal(n) * 4).astype(np.float32)
    rows = []

    def row(label, ref, ours):
        t_ref, t_ours = best(ref, repeat), best(ours, repeat)
        rows.append((label, t_ref, t_ours))

    for name in FORMATS:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        src = np.abs(x32) if name == "float8_e8m0fnu" else x32
        row(f"float32 → {name}", lambda: src.astype(ref_t), lambda: src.astype(our_t))
        ref_a, our_a = src.astype(ref_t), src.astype(our_t)
        row(f"{name} → float32", lambda: ref_a.astype(np.float32),
            lambda: our_a.astype(np.float32))

    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        ra, rb = x32.astype(ref_t), x32[::-1].copy().astype(ref_t)
        oa, ob = x32.astype(our_t), x32[::-1].copy().astype(our_t)
        row(f"{name} a + b", lambda: ra + rb, lambda: oa + ob)
        row(f"{name} a * b", lambda: ra * rb, lambda: oa * ob)

    print(f"{n:,} elements, best of {repeat}; CPU: {platform.processor() or platform.machine()} "
          f"({cpu_flags()}); mldtypes kernels: {mldtypes._core._kernel_path()}")
    print()
    print("| operation | ml_dtypes 0.6.0 | mldtypes | ratio |")
    print("|---|---:|---:|---:|")
    for label, t_ref, t_ours in rows:
        print(f"| {label} | {t_ref * 1e3:.1f} ms | {t_ours * 1e3:.1f} ms | "
              f"{t_ref / t_ours:.1f}× |")


if __name__ == "__main__":
    main()
