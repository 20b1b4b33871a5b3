#!/usr/bin/env python3
"""Speed of mldtypes' NumPy casts, arithmetic and sorting against ml_dtypes 0.6.0, in one run.

Both packages are imported into the same process (see the README's Python section for what
that means for dtype names) and each operation runs on the same data through NumPy's own
``astype`` / ufunc machinery, so the ratios compare the registered cast and ufunc loops.
The casts run on one thread (mldtypes converts on the calling thread inside NumPy casts).

Run it from a virtual environment outside the repository that has both packages:

    python -m venv /tmp/bench && /tmp/bench/bin/pip install ml_dtypes==0.6.0 numpy==2.4.6
    /tmp/bench/bin/pip install ./crates/mldtypes-py
    /tmp/bench/bin/python tools/bench_py_vs_ml_dtypes.py [--n 16777216] [--repeat 5] \
        [--small 1024] [--sections casts,arith,sort]

Sections: ``casts`` (float32 ↔ every float format), ``arith`` (binary ufuncs of bfloat16,
float8_e4m3fn and float8_e5m2 on contiguous arrays and on every second element, with the memory
bound: the same traffic through NumPy's integer ``add`` on the codes), ``sort``
(``np.sort`` of every float format at ``--n`` elements and at ``--small`` elements; the small
case times a loop of calls, so per-call overheads are included).

Prints one Markdown table: for each operation the best-of-`repeat` time of ml_dtypes and of
mldtypes (the two alternating) and the ratio (ml_dtypes time / mldtypes time; above 1 means
mldtypes is faster), then the CPU's vector extensions and the kernel path mldtypes selected.
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


def best_pair(ref, ours, repeat):
    """Best wall times of `repeat` calls of each, the two alternating (a shared, noisy machine
    slows both alike), in seconds."""
    t_ref, t_ours = [], []
    for _ in range(repeat):
        for fn, times in ((ref, t_ref), (ours, t_ours)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return min(t_ref), min(t_ours)


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
    ap.add_argument("--sort-repeat", type=int, default=2,
                    help="timed runs of each sort of --n elements (ml_dtypes' take seconds)")
    ap.add_argument("--small", type=int, default=1024, help="elements of the small sort case")
    ap.add_argument("--sections", default="casts,arith,sort",
                    help="comma-separated subset of casts,arith,sort")
    args = ap.parse_args()
    n, repeat = args.n, args.repeat
    sections = set(args.sections.split(","))

    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal(n) * 4).astype(np.float32)
    rows = []

    def row(label, ref, ours):
        rows.append((label, *best_pair(ref, ours, repeat)))

    for name in FORMATS if "casts" in sections else []:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        src = np.abs(x32) if name == "float8_e8m0fnu" else x32
        row(f"float32 → {name}", lambda: src.astype(ref_t), lambda: src.astype(our_t))
        ref_a, our_a = src.astype(ref_t), src.astype(our_t)
        row(f"{name} → float32", lambda: ref_a.astype(np.float32),
            lambda: our_a.astype(np.float32))

    binary = [("+", np.add), ("-", np.subtract), ("*", np.multiply), ("/", np.divide),
              ("maximum", np.maximum), ("minimum", np.minimum), ("<", np.less),
              ("==", np.equal)]
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2") if "arith" in sections else []:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        ra, rb = x32.astype(ref_t), x32[::-1].copy().astype(ref_t)
        oa, ob = x32.astype(our_t), x32[::-1].copy().astype(our_t)
        ua, ub = oa.view(f"u{oa.itemsize}"), ob.view(f"u{ob.itemsize}")
        r_out, o_out, u_out = np.empty_like(ra), np.empty_like(oa), np.empty_like(ua)
        bits = 8 * oa.itemsize
        with np.errstate(all="ignore"):
            # The memory bound: NumPy's own integer add on the same codes (the same bytes read
            # and written), shown as "mldtypes"; the ratio is the best any loop could show.
            # A fresh 16M-element output costs page faults that a preallocated `out=` avoids.
            row(f"{name}: bound (NumPy uint{bits} a + b on the codes)",
                lambda: ra + rb, lambda: ua + ub)
            row(f"{name}: bound, out= (NumPy uint{bits} a + b on the codes)",
                lambda: np.add(ra, rb, out=r_out), lambda: np.add(ua, ub, out=u_out))
            for label, op in binary:
                row(f"{name} {label}", lambda: op(ra, rb), lambda: op(oa, ob))
            row(f"{name} +, out=", lambda: np.add(ra, rb, out=r_out),
                lambda: np.add(oa, ob, out=o_out))
            row(f"{name}: bound, strided (NumPy uint{bits} a + b on the codes)",
                lambda: ra[::2] + rb[::2], lambda: ua[::2] + ub[::2])
            for label, op in binary:
                row(f"{name} {label}, strided (every 2nd)", lambda: op(ra[::2], rb[::2]),
                    lambda: op(oa[::2], ob[::2]))

    small, loops = args.small, max(1, 100_000 // max(args.small, 1))
    for name in FORMATS if "sort" in sections else []:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        src = np.abs(x32) if name == "float8_e8m0fnu" else x32
        ra, oa = src.astype(ref_t), src.astype(our_t)
        rows.append((f"np.sort {name}", best(lambda: np.sort(ra), args.sort_repeat),
                     best(lambda: np.sort(oa), args.sort_repeat)))
        rs, os_ = ra[:small].copy(), oa[:small].copy()

        def many(a):
            for _ in range(loops):
                np.sort(a)

        rows.append((f"np.sort {name}, {small:,} elements (per call)",
                     best(lambda: many(rs), repeat) / loops, best(lambda: many(os_), repeat) / loops))

    print(f"{n:,} elements, best of {repeat}; CPU: {platform.processor() or platform.machine()} "
          f"({cpu_flags()}); mldtypes kernels: {mldtypes._core._kernel_path()}")
    print()
    print("| operation | ml_dtypes 0.6.0 | mldtypes | ratio |")
    print("|---|---:|---:|---:|")
    for label, t_ref, t_ours in rows:
        unit, scale = ("µs", 1e6) if t_ref < 1e-3 else ("ms", 1e3)
        print(f"| {label} | {t_ref * scale:.1f} {unit} | {t_ours * scale:.1f} {unit} | "
              f"{t_ref / t_ours:.1f}× |")


if __name__ == "__main__":
    main()
