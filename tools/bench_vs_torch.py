#!/usr/bin/env python3
"""Compare mldtypes' conversion kernels with PyTorch's CPU conversion, in one run.

For every float32 <-> format pair PyTorch has (bfloat16, float16,
float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
float8_e8m0fnu), times PyTorch's conversion into a preallocated tensor
(`out.copy_(x)`, one thread, best of several runs) and mldtypes'
single-threaded kernels (`mldtypes bench`: conversion into a
preallocated buffer on the calling thread, best of several runs) on the same
generated data (mldtypes' benchmark generator, reproduced here: float32
values spread over the target's exponent range, subnormals and overflow
included; uniformly random codes for format -> float32), at 1M elements
(cache resident) and 16M, and prints ns/element and the ratio ours/torch
(below 1: mldtypes is faster). The machines are shared: measurements
alternate between torch and mldtypes for `--rounds` rounds and keep the best
of each, so that both see the same load.

Usage: tools/bench_vs_torch.py [--sizes 1048576,16777216] [--rounds 3]
                               [--repeats 7] [--path avx512] [--json OUT]

`--path avx2` runs mldtypes' AVX2 kernels and PyTorch's AVX2 kernels
(ATEN_CPU_CAPABILITY=avx2), for the figures of a machine without AVX-512.

torch is not a dependency of the project: install it in a scratch
virtualenv outside the repository (`python3 -m venv /tmp/venv-torch &&
/tmp/venv-torch/bin/pip install torch numpy`) and run this script with that
interpreter.
"""
# requirements: torch==2.15.0 numpy

import argparse
import json
import os
import platform
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
# `--path avx2` also confines PyTorch to its AVX2 kernels (set before torch
# is imported), so that an AVX-512 machine can stand in for an AVX2 one.
if "--path" in sys.argv[1:-1]:
    _forced = sys.argv[sys.argv.index("--path") + 1]
    if _forced in ("avx2", "portable"):
        os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2" if _forced == "avx2" else "default")
import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# mldtypes format name -> (torch dtype attribute, exponent bits, mantissa
# bits, bias, has_zero), the facts the data generator needs.
FORMATS = {
    "bfloat16": ("bfloat16", 8, 7, 127, True),
    "float16": ("float16", 5, 10, 15, True),
    "float8_e4m3fn": ("float8_e4m3fn", 4, 3, 7, True),
    "float8_e5m2": ("float8_e5m2", 5, 2, 15, True),
    "float8_e4m3fnuz": ("float8_e4m3fnuz", 4, 3, 8, True),
    "float8_e5m2fnuz": ("float8_e5m2fnuz", 5, 2, 16, True),
    "float8_e8m0fnu": ("float8_e8m0fnu", 8, 0, 127, False),
}
ITEMSIZE = {name: (2 if name in ("bfloat16", "float16") else 1) for name in FORMATS}
# The largest unbiased exponent of a finite value (mldtypes' Format::max_exp).
MAX_EXP = {
    "bfloat16": 127, "float16": 15, "float8_e4m3fn": 8, "float8_e5m2": 15,
    "float8_e4m3fnuz": 7, "float8_e5m2fnuz": 15, "float8_e8m0fnu": 127,
}


def splitmix(n):
    """The first n outputs of mldtypes' SplitMix64 benchmark generator."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    seed = np.uint64(0x6D6C647479706573)
    with np.errstate(over="ignore"):
        z = seed + golden * np.arange(1, n + 1, dtype=np.uint64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def generate_f32(name, n):
    """float32 data as `mldtypes::cast::bench::generate(Float32, name, n)`."""
    _, _, man, bias, has_zero = FORMATS[name]
    min_exp = 1 - bias if has_zero else -bias
    lo, hi = min_exp - man - 2, MAX_EXP[name] + 2
    r = splitmix(n)
    e = lo + (r % np.uint64(hi - lo + 1)).astype(np.int64)
    m = 1.0 + (r >> np.uint64(32)).astype(np.float64) / 4294967296.0
    s = np.where((r & np.uint64(1 << 20)) != 0, -1.0, 1.0)
    with np.errstate(over="ignore"):
        return (s * m * np.ldexp(1.0, e)).astype(np.float32)


def generate_codes(name, n):
    """Random codes as `mldtypes::cast::bench::generate(name, Float32, n)`."""
    r = splitmix(n)
    if ITEMSIZE[name] == 2:
        return (r & np.uint64(0xFFFF)).astype(np.uint16)
    return (r & np.uint64(0xFF)).astype(np.uint8)


def best_of(repeats, fn):
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def numpy_backed(n, dt):
    """An uninitialised tensor of n elements of `dt` in memory NumPy allocated.

    NumPy asks Linux for transparent huge pages for arrays of 4 MiB and more
    (madvise), and the sources come from NumPy arrays; mldtypes' benchmark
    buffers are advised the same way. Allocating torch's outputs through
    NumPy too gives both sides the same page backing, which moves the
    memory-bound 16M figures by about 10%.
    """
    size = torch.empty(0, dtype=dt).element_size()
    raw = np.empty(n * size, dtype=np.uint8)
    return torch.from_numpy(raw).view(dt)


def time_torch(n, repeats):
    """ns/element of torch's `out.copy_(x)` for every pair, one thread."""
    rows = {}
    for name, (attr, *_rest) in FORMATS.items():
        dt = getattr(torch, attr)
        x = torch.from_numpy(generate_f32(name, n))
        out = numpy_backed(n, dt)
        rows[("float32", name)] = best_of(repeats, lambda: out.copy_(x)) * 1e9 / n
        codes = generate_codes(name, n)
        raw = torch.from_numpy(codes.view(np.int16 if codes.itemsize == 2 else np.int8))
        y = raw.view(dt)
        out32 = numpy_backed(n, torch.float32)
        rows[(name, "float32")] = best_of(repeats, lambda: out32.copy_(y)) * 1e9 / n
    return rows


def time_mldtypes(n, path):
    """ns/element of mldtypes' kernels (`mldtypes bench --json`)."""
    cmd = ["cargo", "run", "--release", "-q", "-p", "mldtypes-cli", "--", "bench",
           "--elements", str(n), "--json"] + (["--path", path] if path else [])
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("could not run the mldtypes bench:\n" + p.stderr)
    out = json.loads(p.stdout)
    return {(r["from"], r["to"]): r["ns_per_element"] for r in out["results"]}, out["path"]


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    keep = ["avx2", "f16c", "fma", "avx512f", "avx512bw", "avx512vl",
                            "avx512_bf16", "avx512vbmi", "avx512_fp16", "amx_bf16"]
                    return " ".join(k for k in keep if k in have)
    except OSError:
        pass
    return platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=f"{1 << 20},{1 << 24}",
                    help="comma-separated element counts (default 1M,16M)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--path", help="force a kernel path (portable, avx2, avx512)")
    ap.add_argument("--json", help="also write the table as JSON to this file")
    args = ap.parse_args()
    torch.set_num_threads(1)
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"torch {torch.__version__} (threads 1, out.copy_(x), "
          f"{torch.backends.cpu.get_cpu_capability()} kernels); CPU flags: {cpu_flags()}")
    table = []
    for n in sizes:
        ref, ours, path = {}, {}, "?"
        for _ in range(args.rounds):
            t = time_torch(n, args.repeats)
            o, path = time_mldtypes(n, args.path)
            for k, v in t.items():
                ref[k] = min(ref.get(k, float("inf")), v)
            for k, v in o.items():
                ours[k] = min(ours.get(k, float("inf")), v)
        print(f"\n{n} elements, best of {args.rounds} rounds x {args.repeats} runs; "
              f"mldtypes path {path}")
        hdr = f"{'conversion':<32} {'torch ns/el':>11} {'ours ns/el':>10} {'ours/torch':>10}"
        print(hdr)
        print("-" * len(hdr))
        for key, t in ref.items():
            o = ours[key]
            print(f"{key[0] + ' -> ' + key[1]:<32} {t:>11.3f} {o:>10.3f} {o / t:>10.2f}")
            table.append(dict(elements=n, path=path, **{"from": key[0], "to": key[1]},
                              torch_ns=t, ours_ns=o, ratio=o / t))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
