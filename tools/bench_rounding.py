#!/usr/bin/env python3
"""Time mldtypes.cast under every rounding mode against astype and against gfloat, in one run.

On the same N float32 values (default 16M, normal with a spread of scales so that subnormals
and overflow of the 8-bit targets occur), for each target:

- ``astype``: ``x.astype(dtype)``, NumPy's cast loop with mldtypes' kernels (round to nearest
  even, no saturation);
- ``cast`` for each of the nine modes: the five deterministic ones, the four stochastic ones
  with explicit random bits (uint16 numbers, ``sr_bits=13``) and with a seed (``sr_bits=13``);
  like ``astype``, each call allocates its result;
- gfloat 0.5.2's ``round_ndarray`` + ``encode_ndarray`` on the same values for every mode
  (same random bits), run by the gfloat virtualenv's interpreter on the saved values in the
  same run (one repetition: it takes seconds).

mldtypes' timings are the best of ``--repeats`` runs, alternating astype and cast so that
both see the same load (the machines are shared). Printed: ms per call, the ratio cast/astype
(targets: ≤ 1.25 deterministic, ≤ 2 with bits, ≤ 3 with a seed) and gfloat/cast (target
≥ 100). ``--threads`` sets RAYON_NUM_THREADS (mldtypes.cast splits long inputs across
rayon's pool; astype runs on the calling thread): use 1 to compare the kernels alone.
``--kernel-path`` forces the kernels of astype and cast alike (``portable``, ``avx2``,
``avx512``; default: the best this CPU runs).

Usage: tools/bench_rounding.py [--n 16777216] [--repeats 5] [--threads 1]
           [--targets float8_e4m3fn,bfloat16] [--gfloat-python /work/venvs/gfloat/bin/python]
           [--kernel-path avx2] [--no-gfloat] [--json OUT]

Run it with the interpreter that has mldtypes installed (target/py-venv/bin/python);
gfloat is not a dependency of the project and runs in its own virtualenv
(``python3 -m venv /work/venvs/gfloat && /work/venvs/gfloat/bin/pip install gfloat==0.5.2
numpy==2.4.6``).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

MODES = ["nearest_even", "nearest_away", "toward_zero", "toward_negative", "toward_positive",
         "stochastic", "stochastic_odd", "stochastic_fast", "stochastic_fastest"]
GFLOAT = {"float8_e4m3fn": "format_info_ocp_e4m3", "float8_e5m2": "format_info_ocp_e5m2",
          "bfloat16": "format_info_bfloat16", "float16": "format_info_binary16",
          "float4_e2m1fn": "format_info_ocp_e2m1"}
GFLOAT_MODES = {"nearest_even": "TiesToEven", "nearest_away": "TiesToAway",
                "toward_zero": "TowardZero", "toward_negative": "TowardNegative",
                "toward_positive": "TowardPositive", "stochastic": "Stochastic",
                "stochastic_odd": "StochasticOdd", "stochastic_fast": "StochasticFast",
                "stochastic_fastest": "StochasticFastest"}
SR_BITS = 13

# Run by the gfloat interpreter: times round_ndarray + encode_ndarray for every mode.
GFLOAT_CHILD = r"""
import json, sys, time
import numpy as np
import gfloat.formats as F
from gfloat import round_ndarray, encode_ndarray
from gfloat.types import RoundMode
x = np.load(sys.argv[1]); bits = np.load(sys.argv[2]).astype(np.int64)
out = {}
for target, fi_name in json.loads(sys.argv[3]).items():
    fi = getattr(F, fi_name)
    for mode, gm in json.loads(sys.argv[4]).items():
        kw = {"srbits": bits, "srnumbits": int(sys.argv[5])} if mode.startswith("stochastic") else {}
        t = time.perf_counter()
        with np.errstate(all="ignore"):
            r = round_ndarray(fi, x, getattr(RoundMode, gm), False, **kw)
            encode_ndarray(fi, r)
        out[target + " " + mode] = time.perf_counter() - t
        print(target, mode, round(out[target + " " + mode], 2), file=sys.stderr, flush=True)
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--targets", default="float8_e4m3fn,bfloat16")
    ap.add_argument("--gfloat-python", default="/work/venvs/gfloat/bin/python")
    ap.add_argument("--no-gfloat", action="store_true")
    ap.add_argument("--kernel-path", default=None, choices=["portable", "avx2", "avx512"])
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if a.threads is not None:
        os.environ["RAYON_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import mldtypes
    if a.kernel_path is not None:
        mldtypes._core._set_kernel_path(a.kernel_path)

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(a.n) * np.exp2(rng.integers(-12, 10, a.n))).astype(np.float32)
    bits = rng.integers(0, 1 << SR_BITS, a.n, dtype=np.uint16)
    targets = a.targets.split(",")
    dtypes = {t: np.dtype(np.float16) if t == "float16" else np.dtype(getattr(mldtypes, t))
              for t in targets}

    rows = {}
    for t in targets:
        dt = dtypes[t]
        x.astype(dt)  # warm up
        for mode in MODES:
            variants = [("", {})]
            if mode.startswith("stochastic"):
                variants = [("bits", {"random_bits": bits, "sr_bits": SR_BITS}),
                            ("seed", {"seed": 1, "sr_bits": SR_BITS})]
            for label, kw in variants:
                def run_cast(kw=kw, mode=mode):
                    mldtypes.cast(x, dt, rounding=mode, **kw)
                run_cast()
                bc, ba = float("inf"), float("inf")
                for _ in range(a.repeats):  # alternate: both see the same load
                    ba = min(ba, _once(lambda: x.astype(dt)))
                    bc = min(bc, _once(run_cast))
                key = f"{t} {mode}" + (f" ({label})" if label else "")
                rows[key] = {"target": t, "mode": mode, "random": label or None,
                             "astype_ms": ba * 1e3, "cast_ms": bc * 1e3,
                             "cast_over_astype": bc / ba}
                print(f"{key:42s} astype {ba * 1e3:8.1f} ms  cast {bc * 1e3:8.1f} ms  "
                      f"ratio {bc / ba:5.2f}", flush=True)

    if not a.no_gfloat:
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "x.npy"), x)
            np.save(os.path.join(d, "bits.npy"), bits)
            gmap = {t: GFLOAT[t] for t in targets if t in GFLOAT}
            res = subprocess.run(
                [a.gfloat_python, "-c", GFLOAT_CHILD, os.path.join(d, "x.npy"),
                 os.path.join(d, "bits.npy"), json.dumps(gmap), json.dumps(GFLOAT_MODES),
                 str(SR_BITS)],
                check=True, capture_output=True, text=True)
            g = json.loads(res.stdout)
        for key, r in rows.items():
            gk = f"{r['target']} {r['mode']}"
            if gk in g:
                r["gfloat_ms"] = g[gk] * 1e3
                r["gfloat_over_cast"] = g[gk] * 1e3 / r["cast_ms"]

    print()
    print(f"N = {a.n} float32, best of {a.repeats}; RAYON_NUM_THREADS="
          f"{os.environ.get('RAYON_NUM_THREADS', '(default)')}; cores {os.cpu_count()}; "
          f"{platform.processor() or platform.machine()}; mldtypes {mldtypes.__version__}, "
          f"kernel path {mldtypes._core._kernel_path()}")
    print(f"{'target / mode':42s} {'astype ms':>10s} {'cast ms':>9s} {'cast/astype':>12s} "
          f"{'gfloat ms':>10s} {'gfloat/cast':>12s}")
    for key, r in rows.items():
        gm = f"{r['gfloat_ms']:.0f}" if "gfloat_ms" in r else "-"
        gr = f"{r['gfloat_over_cast']:.0f}" if "gfloat_ms" in r else "-"
        print(f"{key:42s} {r['astype_ms']:10.1f} {r['cast_ms']:9.1f} "
              f"{r['cast_over_astype']:12.2f} {gm:>10s} {gr:>12s}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"n": a.n, "threads": os.environ.get("RAYON_NUM_THREADS"),
                       "rows": rows}, fh, indent=1)


def _once(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
