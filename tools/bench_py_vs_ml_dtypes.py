#!/usr/bin/env python3
"""Speed of mldtypes' NumPy casts, ufuncs, reductions, sorting and matrix products against
ml_dtypes 0.6.0 and NumPy's float32, in one run.

Both packages are imported into the same process (see the README's Python section for what
that means for dtype names) and each operation runs on the same data through NumPy's own
``astype`` / ufunc / reduction machinery, so the ratios compare the registered cast and ufunc
loops. NumPy's ufunc loops and casts run on the calling thread.

Run it from a virtual environment outside the repository that has both packages:

    python -m venv /tmp/bench && /tmp/bench/bin/pip install ml_dtypes==0.6.0 numpy==2.4.6
    /tmp/bench/bin/pip install ./crates/mldtypes-py
    /tmp/bench/bin/python tools/bench_py_vs_ml_dtypes.py [--n 4194304] [--repeat 7] \
        [--sections casts,arith,unary,binary,reduce,sort,matmul,tables]
        [--types bfloat16,float8_e4m3fn]
        [--kernels avx2]

Sections:

- ``casts``: float32 ↔ every float format.
- ``arith``: ``+ - * /``, ``maximum``, ``minimum``, ``<``, ``==`` of bfloat16, float8_e4m3fn and
  float8_e5m2 on contiguous arrays and on every second element, with the memory bound (the same
  traffic through NumPy's integer ``add`` on the codes).
- ``unary``: every one-operand ufunc ml_dtypes registers, on ``--types`` (contiguous and every
  second element), against ml_dtypes and against NumPy's float32 loop on the same values; the
  bound is NumPy's ``invert`` of the codes as unsigned integers (same bytes read and written),
  timed alone and again right after each ml_dtypes call (the cache state ours runs in; the
  summary's "bound allows" column: the most any loop writing one code per element could show).
  ``frexp`` and ``modf`` write more: their bound writes the same bytes in two passes over the
  codes (``invert`` and the codes widened to C ``int``; ``invert`` twice).
- ``binary``: every two-operand ufunc ml_dtypes registers (and ``float_power``, which ml_dtypes
  0.6.0 runs through float64), likewise; the bound is NumPy's integer ``add`` of the codes.
- ``reduce``: ``np.sum``, ``np.prod``, ``np.max``, ``np.min``, ``np.argmax``, ``np.argmin``,
  ``np.mean`` over the whole array and along each axis of a square 2-D array, and
  ``mldtypes.sum`` / ``mldtypes.mean`` (float32 accumulation) against ml_dtypes' ``np.sum`` /
  ``np.mean``; the bound is NumPy's ``bitwise_or.reduce`` of the codes (the same bytes read).
- ``sort``: ``np.sort`` of every float format at ``--n`` elements and at ``--small`` elements
  (the small case times a loop of calls, so per-call overheads are included).
- ``matmul``: ``mldtypes.matmul`` of square bfloat16 / float8_e4m3fn matrices (``--sizes``) on
  1 and 2 threads against NumPy's ``a.astype(float32) @ b.astype(float32)`` with the same
  number of BLAS threads (each thread count in a child process, as BLAS reads its thread count
  at start-up), and against ml_dtypes' ``np.dot`` at the smallest size. The two GEMMs are
  timed in blocks of back-to-back calls (`best_in_blocks`), ml_dtypes' loop on its own.
- ``tables``: for every ufunc of the unary and binary sections whose loop for a ``--types``
  format reads a result table, the bytes the table holds and the time one build takes (built
  afresh on the calling thread, best of 5: what the first call pays).

Prints Markdown tables: for each operation the best-of-`repeat` time of ml_dtypes, of mldtypes
and of NumPy float32 (the three alternating) and the ratios (ml_dtypes time / mldtypes time and
float32 time / mldtypes time; above 1 means mldtypes is faster), then the CPU's vector extensions
and the kernel path mldtypes selected. ``--kernels avx2`` (or ``portable``) forces mldtypes'
kernels and ufunc loops to that instruction set. The unary and binary sections end with a compact
table (one row per ufunc, the ratios per format); ``--summarize FILE`` prints it again from a
saved output.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

import ml_dtypes
import mldtypes

FORMATS = [
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
]

# The ufuncs ml_dtypes 0.6.0 registers for its float types (`RegisterFloatUFuncs`), by arity.
UNARY = [
    "negative", "positive", "absolute", "fabs", "rint", "sign", "conjugate", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "cbrt", "reciprocal", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "deg2rad", "rad2deg", "floor", "ceil", "trunc", "spacing", "isfinite", "isinf",
    "isnan", "signbit", "logical_not", "modf", "frexp",
]
BINARY = [
    "add", "subtract", "multiply", "divide", "true_divide", "logaddexp", "logaddexp2",
    "floor_divide", "power", "float_power", "remainder", "mod", "fmod", "divmod", "arctan2",
    "hypot", "heaviside", "copysign", "nextafter", "maximum", "minimum", "fmax", "fmin",
    "equal", "not_equal", "less", "greater", "less_equal", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "ldexp",
]


def best(fn, repeat):
    """Best wall time of `repeat` calls, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_of(fns, repeat):
    """Best wall times of `repeat` calls of each function, the functions alternating (a shared,
    noisy machine slows all alike), in seconds; None for a function that is None."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            if fn is None:
                continue
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return [min(ts) if ts else None for ts in times]


def best_in_blocks(fns, repeat, inner=5):
    """Like `best_of`, but each function runs `inner` times back to back per round (the rounds
    still alternate the functions): the best of all calls. For calls that use several threads:
    OpenBLAS's idle workers spin for a while after each call and take a core from whatever
    runs next, and a pool whose workers went to sleep pays for waking them (about a millisecond
    on some virtual machines); back-to-back calls show each library's own steady state."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            if fn is None:
                continue
            for _ in range(inner):
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
    return [min(ts) if ts else None for ts in times]


def cpu_flags():
    """The AVX-512/AVX2 flags of this CPU (Linux), as a short string."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    wanted = ["avx2", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vbmi",
                              "avx512_bf16", "avx512_fp16"]
                    return " ".join(x for x in wanted if x in flags) or "no AVX2"
    except OSError:
        pass
    return platform.machine()


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class Table:
    """Rows of (label, ml_dtypes s, mldtypes s, float32 s or None)."""

    def __init__(self, title):
        self.title, self.rows = title, []

    def add(self, label, t_ref, t_ours, t_f32=None):
        self.rows.append((label, t_ref, t_ours, t_f32))

    def print(self):
        if not self.rows:
            return
        print(f"\n### {self.title}\n")
        with_f32 = any(r[3] is not None for r in self.rows)
        if with_f32:
            print("| operation | ml_dtypes 0.6.0 | mldtypes | NumPy float32 | ratio | "
                  "vs float32 |")
            print("|---|---:|---:|---:|---:|---:|")
        else:
            print("| operation | ml_dtypes 0.6.0 | mldtypes | ratio |")
            print("|---|---:|---:|---:|")
        for label, t_ref, t_ours, t_f32 in self.rows:
            cells = [label, fmt_t(t_ref), fmt_t(t_ours)]
            if with_f32:
                cells.append(fmt_t(t_f32))
            cells.append(fmt_r(t_ref, t_ours))
            if with_f32:
                cells.append(fmt_r(t_f32, t_ours))
            print("| " + " | ".join(cells) + " |")


def fmt_t(t):
    if t is None:
        return "–"
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    return f"{t * 1e3:.2f} ms"


def fmt_r(a, b):
    if a is None or b is None:
        return "–"
    return f"{a / b:.1f}×"


def values(n, rng):
    """`n` float32 values: standard normal × 4."""
    return (rng.standard_normal(n) * 4).astype(np.float32)


def section_casts(t, x32, repeat):
    for name in FORMATS:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        src = np.abs(x32) if name == "float8_e8m0fnu" else x32
        t.add(f"float32 → {name}", *best_of([lambda: src.astype(ref_t),
                                               lambda: src.astype(our_t)], repeat))
        ref_a, our_a = src.astype(ref_t), src.astype(our_t)
        t.add(f"{name} → float32", *best_of([lambda: ref_a.astype(np.float32),
                                               lambda: our_a.astype(np.float32)], repeat))


def section_arith(t, x32, repeat):
    binary = [("+", np.add), ("-", np.subtract), ("*", np.multiply), ("/", np.divide),
              ("maximum", np.maximum), ("minimum", np.minimum), ("<", np.less),
              ("==", np.equal)]
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        ra, rb = x32.astype(ref_t), x32[::-1].copy().astype(ref_t)
        oa, ob = x32.astype(our_t), x32[::-1].copy().astype(our_t)
        ua, ub = oa.view(f"u{oa.itemsize}"), ob.view(f"u{ob.itemsize}")
        r_out, o_out, u_out = np.empty_like(ra), np.empty_like(oa), np.empty_like(ua)
        bits = 8 * oa.itemsize
        # The memory bound: NumPy's own integer add on the same codes (the same bytes read
        # and written), shown as "mldtypes"; the ratio is the best any loop could show.
        # A fresh output costs page faults that a preallocated `out=` avoids.
        t.add(f"{name}: bound (NumPy uint{bits} a + b on the codes)",
              *best_of([lambda: ra + rb, lambda: ua + ub], repeat))
        t.add(f"{name}: bound, out= (NumPy uint{bits} a + b on the codes)",
              *best_of([lambda: np.add(ra, rb, out=r_out), lambda: np.add(ua, ub, out=u_out)],
                       repeat))
        for label, op in binary:
            t.add(f"{name} {label}", *best_of([lambda: op(ra, rb), lambda: op(oa, ob)], repeat))
        t.add(f"{name} +, out=", *best_of([lambda: np.add(ra, rb, out=r_out),
                                             lambda: np.add(oa, ob, out=o_out)], repeat))
        t.add(f"{name}: bound, strided (NumPy uint{bits} a + b on the codes)",
              *best_of([lambda: ra[::2] + rb[::2], lambda: ua[::2] + ub[::2]], repeat))
        for label, op in binary:
            t.add(f"{name} {label}, strided (every 2nd)",
                  *best_of([lambda: op(ra[::2], rb[::2]), lambda: op(oa[::2], ob[::2])], repeat))


def ufunc_rows(t, name, ufuncs, ra, oa, fa, repeat, suffix, ints=None, bound=None):
    """One row per ufunc: ml_dtypes, mldtypes, float32 on the same values; with `bound`
    (NumPy's integer loop over the same codes: the same bytes read, one code written per
    element; a dict: per ufunc name, the entry "" for the others), a second row times it right
    after ml_dtypes' call, the cache state in which ours runs: the most any loop writing those
    bytes could show there."""
    for uname in ufuncs:
        u = getattr(np, uname)
        if u.nin == 1:
            args = [(ra,), (oa,), (fa,)]
        elif uname == "ldexp":
            args = [(ra[0], ints), (oa[0], ints), (fa[0], ints)]
        else:
            args = [tuple(ra), tuple(oa), tuple(fa)]
        fns = [lambda a=a: u(*a) for a in args]
        if bound is None:
            t.add(f"{name} {uname}{suffix}", *best_of(fns, repeat))
            continue
        bf = bound.get(uname, bound[""]) if isinstance(bound, dict) else bound
        ref, ours, f32, ref2, b = best_of(fns + [fns[0], bf], repeat)
        t.add(f"{name} {uname}{suffix}", min(ref, ref2), ours, f32)
        t.add(f"{name} {uname}{suffix}: bound after ml_dtypes' call", min(ref, ref2), b, None)


def section_unary(t, x32, types, repeat):
    for name in types:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        oa = x32.astype(our_t)
        ra, fa = x32.astype(ref_t), oa.astype(np.float32)
        ua = oa.view(f"u{oa.itemsize}")
        bits = 8 * oa.itemsize
        t.add(f"{name}: bound (NumPy uint{bits} invert of the codes)",
              *best_of([lambda: np.invert(ua), lambda: np.invert(ua)], repeat))
        ufunc_rows(t, name, UNARY, ra, oa, fa, repeat, "", bound=bounds(ua))
        t.add(f"{name}: bound, strided (NumPy uint{bits} invert of the codes)",
              *best_of([lambda: np.invert(ua[::2]), lambda: np.invert(ua[::2])], repeat))
        ufunc_rows(t, name, UNARY, ra[::2], oa[::2], fa[::2], repeat, ", strided (every 2nd)",
                   bound=bounds(ua[::2]))


def bounds(codes):
    """The bound of each one-operand ufunc on `codes` (unsigned integers): NumPy's `invert`,
    which reads and writes one code per element; for `frexp` (a code and a C `int` written)
    `invert` and the codes widened to `intc`, for `modf` (two codes) `invert` twice."""
    return {"": lambda: np.invert(codes),
            "frexp": lambda: (np.invert(codes), codes.astype(np.intc)),
            "modf": lambda: (np.invert(codes), np.invert(codes))}


def section_binary(t, x32, types, repeat):
    rng = np.random.default_rng(1)
    y32 = values(len(x32), rng)
    ints = rng.integers(-4, 5, len(x32)).astype(np.intc)
    for name in types:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        oa, ob = x32.astype(our_t), y32.astype(our_t)
        ra, rb = x32.astype(ref_t), y32.astype(ref_t)
        fa, fb = oa.astype(np.float32), ob.astype(np.float32)
        ua, ub = oa.view(f"u{oa.itemsize}"), ob.view(f"u{ob.itemsize}")
        bits = 8 * oa.itemsize
        t.add(f"{name}: bound (NumPy uint{bits} a + b on the codes)",
              *best_of([lambda: ua + ub, lambda: ua + ub], repeat))
        ufunc_rows(t, name, BINARY, (ra, rb), (oa, ob), (fa, fb), repeat, "", ints,
                   bound=lambda: ua + ub)
        t.add(f"{name}: bound, strided (NumPy uint{bits} a + b on the codes)",
              *best_of([lambda: ua[::2] + ub[::2], lambda: ua[::2] + ub[::2]], repeat))
        ufunc_rows(t, name, BINARY, (ra[::2], rb[::2]), (oa[::2], ob[::2]), (fa[::2], fb[::2]),
                   repeat, ", strided (every 2nd)", ints[::2], bound=lambda: ua[::2] + ub[::2])


def section_reduce(t, x32, types, repeat):
    side = int(len(x32) ** 0.5)
    sq = x32[: side * side].reshape(side, side)
    for name in types:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        # sums of 4M standard-normal values stay finite in every format
        ra, oa = x32.astype(ref_t), x32.astype(our_t)
        fa = oa.astype(np.float32)
        r2, o2 = sq.astype(ref_t), sq.astype(our_t)
        f2 = o2.astype(np.float32)
        ua, u2 = oa.view(f"u{oa.itemsize}"), o2.view(f"u{o2.itemsize}")
        t.add(f"{name}: bound (NumPy bitwise_or.reduce of the codes)",
              *best_of([lambda: np.bitwise_or.reduce(ua), lambda: np.bitwise_or.reduce(ua)],
                       repeat))
        for fn in (np.sum, np.prod, np.max, np.min, np.argmax, np.argmin, np.mean):
            label = f"{name} np.{fn.__name__}"
            t.add(label, *best_of([lambda: fn(ra), lambda: fn(oa), lambda: fn(fa)], repeat))
            for axis in (0, 1):
                t.add(f"{label}(axis={axis}) of {side}×{side}",
                      *best_of([lambda: fn(r2, axis=axis), lambda: fn(o2, axis=axis),
                                lambda: fn(f2, axis=axis)], repeat))
        t.add(f"{name}: bound, axis=0 of {side}×{side} (NumPy bitwise_or.reduce)",
              *best_of([lambda: np.bitwise_or.reduce(u2, axis=0),
                        lambda: np.bitwise_or.reduce(u2, axis=0)], repeat))
        for fn, ours in ((np.sum, mldtypes.sum), (np.mean, mldtypes.mean)):
            label = f"{name} mldtypes.{fn.__name__} (float32 accumulation) vs np.{fn.__name__}"
            t.add(label, *best_of([lambda: fn(ra), lambda: ours(oa), lambda: fn(fa)], repeat))
            # The bound again, in the cache state our column sums see: each right after
            # ml_dtypes' reduction of the same matrix (its ratio is the most any loop shows).
            ref, our, f32, ref2, bound = best_of(
                [lambda: fn(r2, axis=0), lambda: ours(o2, axis=0), lambda: fn(f2, axis=0),
                 lambda: fn(r2, axis=0), lambda: np.bitwise_or.reduce(u2, axis=0)], repeat)
            t.add(f"{label}, axis=0 of {side}×{side}", min(ref, ref2), our, f32)
            t.add(f"{name}: bound, axis=0 of {side}×{side}, each call after ml_dtypes' "
                  f"np.{fn.__name__}(axis=0) (NumPy bitwise_or.reduce)", min(ref, ref2), bound, None)


def section_sort(t, x32, repeat, sort_repeat, small):
    loops = max(1, 100_000 // max(small, 1))
    for name in FORMATS:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        src = np.abs(x32) if name == "float8_e8m0fnu" else x32
        ra, oa = src.astype(ref_t), src.astype(our_t)
        t.add(f"np.sort {name}", best(lambda: np.sort(ra), sort_repeat),
              best(lambda: np.sort(oa), sort_repeat))
        rs, os_ = ra[:small].copy(), oa[:small].copy()

        def many(a):
            for _ in range(loops):
                np.sort(a)

        t.add(f"np.sort {name}, {small:,} elements (per call)",
              best(lambda: many(rs), repeat) / loops, best(lambda: many(os_), repeat) / loops)


def matmul_child(sizes, types, repeat, threads):
    """In a child process whose BLAS uses `threads` threads: {label: [ml, ours, f32]}."""
    rng = np.random.default_rng(2)
    out = {}
    for name in types:
        ref_t, our_t = getattr(ml_dtypes, name), getattr(mldtypes, name)
        for n in sizes:
            a32, b32 = rng.standard_normal((n, n)).astype(np.float32), \
                rng.standard_normal((n, n)).astype(np.float32)
            oa, ob = a32.astype(our_t), b32.astype(our_t)
            ra, rb = a32.astype(ref_t), b32.astype(ref_t)
            # ml_dtypes' np.dot is a scalar loop: only at the smallest size
            ref = (lambda: np.dot(ra, rb)) if n == min(sizes) else None
            # ml_dtypes' scalar loop once per round, the two GEMMs in blocks
            ref_time = best_of([ref], repeat)[0] if ref is not None else None
            _, ours, f32 = best_in_blocks(
                [None, lambda: mldtypes.matmul(oa, ob, threads=threads),
                 lambda: oa.astype(np.float32) @ ob.astype(np.float32)], repeat)
            times = [ref_time, ours, f32]
            out[f"{name} matmul {n}×{n}, {threads} thread{'s' if threads > 1 else ''}"] = times
    return out


def section_matmul(t, sizes, types, repeat):
    for threads in (1, 2):
        env = dict(os.environ)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
        cmd = [sys.executable, __file__, "--matmul-child", str(threads), "--sizes",
               ",".join(map(str, sizes)), "--types", ",".join(types), "--repeat", str(repeat)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.exit(f"matmul on {threads} thread(s) failed:\n{proc.stderr}")
        for label, times in json.loads(proc.stdout).items():
            t.add(label, *times)


def section_tables(types, repeat=5):
    """(ufunc, format, bytes, best build time in s) of every table-driven loop of the unary and
    binary ufuncs on `types`."""
    rows = []
    for name in types:
        dt = np.dtype(getattr(mldtypes, name))
        for uname in UNARY + BINARY:
            try:
                infos = [mldtypes._core._ufunc_table_info(uname, dt) for _ in range(repeat)]
            except ValueError:  # a kernel of its own, no table
                continue
            rows.append((uname, name, infos[0]["bytes"], min(i["build_seconds"] for i in infos)))
    return rows


def summary(rows, types):
    """A compact Markdown table of the unary and binary sections: one row per ufunc, the ratio
    to ml_dtypes (contiguous), the most the memory bound allows there (ml_dtypes' time over
    the bound row timed after its call), the ratio on every second element and to NumPy
    float32, for each format."""
    ratio = {}
    for label, t_ref, t_ours, t_f32 in rows:
        ratio[label] = (t_ref / t_ours if t_ref and t_ours else None,
                        t_f32 / t_ours if t_f32 and t_ours else None)

    def cell(r):
        return "–" if r is None else f"{r:.1f}×"

    head = " | ".join(f"{t} vs ml_dtypes | {t} bound allows | {t} strided | {t} vs float32"
                      for t in types)
    out = [f"| ufunc | {head} |", "|---|" + "---:|" * (4 * len(types))]
    for uname in UNARY + BINARY:
        cells = []
        for t in types:
            c = ratio.get(f"{t} {uname}")
            b = ratio.get(f"{t} {uname}: bound after ml_dtypes' call")
            st = ratio.get(f"{t} {uname}, strided (every 2nd)")
            if c is None:
                cells += ["–"] * 4
                continue
            cells += [cell(c[0]), cell(b[0] if b else None), cell(st[0] if st else None),
                      cell(c[1])]
        if any(x != "–" for x in cells):
            out.append(f"| {uname} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def parse_markdown(path):
    """The rows of tables this script printed (times back in seconds)."""
    def secs(cell):
        cell = cell.strip()
        if cell == "–":
            return None
        v, unit = cell.split()
        return float(v) * {"ms": 1e-3, "µs": 1e-6}[unit]

    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = [p.strip() for p in line.strip().strip("|").split("|")]
            if len(parts) == 6 and parts[0] not in ("operation", "---"):
                try:
                    rows.append((parts[0], secs(parts[1]), secs(parts[2]), secs(parts[3])))
                except ValueError:
                    continue
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1 << 22, help="elements per array (4M)")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per operation")
    ap.add_argument("--sort-repeat", type=int, default=2,
                    help="timed runs of each sort of --n elements (ml_dtypes' take seconds)")
    ap.add_argument("--small", type=int, default=1024, help="elements of the small sort case")
    ap.add_argument("--sections", default="unary,binary,reduce,matmul,tables",
                    help="comma-separated subset of casts,arith,unary,binary,reduce,sort,matmul")
    ap.add_argument("--types", default="bfloat16,float8_e4m3fn",
                    help="formats of the unary, binary, reduce and matmul sections")
    ap.add_argument("--ufuncs", default=None,
                    help="comma-separated subset of the unary and binary ufuncs")
    ap.add_argument("--sizes", default="512,2048", help="matrix sizes of the matmul section")
    ap.add_argument("--kernels", default=None,
                    help="force mldtypes' kernel path (portable, avx2, avx512)")
    ap.add_argument("--matmul-child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--summarize", metavar="FILE", default=None,
                    help="print the compact per-ufunc table of a saved output of this script")
    args = ap.parse_args()
    if args.summarize:
        print(summary(parse_markdown(args.summarize), args.types.split(",")))
        return
    types = args.types.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.kernels:
        mldtypes._core._set_kernel_path(args.kernels)
    if args.matmul_child is not None:
        json.dump(matmul_child(sizes, types, args.repeat, args.matmul_child), sys.stdout)
        return
    if args.ufuncs:
        keep = set(args.ufuncs.split(","))
        UNARY[:] = [u for u in UNARY if u in keep]
        BINARY[:] = [u for u in BINARY if u in keep]
    n, repeat = args.n, args.repeat
    sections = args.sections.split(",")

    x32 = values(n, np.random.default_rng(0))
    tables, tables_report = [], []
    warnings.simplefilter("ignore")
    with np.errstate(all="ignore"):
        for s in sections:
            t = Table(s)
            tables.append(t)
            if s == "casts":
                section_casts(t, x32, repeat)
            elif s == "arith":
                section_arith(t, x32, repeat)
            elif s == "unary":
                section_unary(t, x32, types, repeat)
            elif s == "binary":
                section_binary(t, x32, types, repeat)
            elif s == "reduce":
                section_reduce(t, x32, types, repeat)
            elif s == "sort":
                section_sort(t, x32, repeat, args.sort_repeat, args.small)
            elif s == "matmul":
                section_matmul(t, sizes, types, repeat)
            elif s == "tables":
                tables_report.extend(section_tables(types))
            else:
                sys.exit(f"unknown section {s!r}")

    print(f"{n:,} elements, best of {repeat}; CPU: {cpu_name()} ({cpu_flags()}); "
          f"mldtypes kernels: {mldtypes._core._kernel_path()}; NumPy {np.__version__}")
    for t in tables:
        t.print()
    if tables_report:
        print("\n### Result tables: size and build time (best of 5)\n")
        print("| ufunc | format | bytes | build |")
        print("|---|---|---:|---:|")
        for uname, name, size, secs in tables_report:
            print(f"| {uname} | {name} | {size:,} | {fmt_t(secs)} |")
        worst = max(tables_report, key=lambda r: r[3])
        print(f"\nslowest build: {worst[0]} of {worst[1]}, {fmt_t(worst[3])}; largest table: "
              f"{max(r[2] for r in tables_report):,} bytes")
    if {"unary", "binary"} & set(sections):
        print("\n### Summary: ratios (ml_dtypes / mldtypes, NumPy float32 / mldtypes)\n")
        print(summary([r for t in tables for r in t.rows], types))


if __name__ == "__main__":
    main()
