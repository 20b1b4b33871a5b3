#!/usr/bin/env python3
"""How close the error statistics `mldtypes convert` reports for the block
targets are to the exact values, on all-MiniLM-L6-v2.

For each target: converts the model (`mldtypes convert --json`), dequantizes
the result to float64 (exact for every MX format and NVFP4), recomputes each
quantized tensor's relative RMS error sqrt(sum (y - x)^2 / sum x^2) in NumPy's
extended precision (x86 long double: 64-bit significands, pairwise sums) and
prints the largest relative difference from the reported value.

Usage: tools/minilm_stats_accuracy.py [TARGET ...]   (default: every MX format and nvfp4)
Needs: numpy; scripts/fetch-example-model.sh run first; a release build
(cargo build --release -p mldtypes-cli). Pure file parsing, no safetensors package.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "examples-data", "all-MiniLM-L6-v2.safetensors")
BIN = os.path.join(ROOT, "target", "release", "mldtypes")
TARGETS = ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4", "mxint8", "nvfp4"]


def load(path):
    """The float32 / float64 tensors of a safetensors file, by name."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    out = {}
    for name, t in header.items():
        dt = {"F32": np.float32, "F64": np.float64}.get(t.get("dtype") if isinstance(t, dict) else None)
        if name != "__metadata__" and dt is not None:
            a, b = t["data_offsets"]
            out[name] = np.frombuffer(data[a:b], dtype=dt)
    return out


def main():
    targets = sys.argv[1:] or TARGETS
    x = load(MODEL)
    with tempfile.TemporaryDirectory() as tmp:
        q, dq = os.path.join(tmp, "q.safetensors"), os.path.join(tmp, "dq.safetensors")
        for target in targets:
            rep = json.loads(
                subprocess.run([BIN, "convert", MODEL, q, "--to", target, "--json"],
                               check=True, capture_output=True, text=True).stdout
            )
            subprocess.run([BIN, "convert", q, dq, "--to", "float64", "--overwrite"],
                           check=True, capture_output=True)
            y = load(dq)
            worst, count = 0.0, 0
            for r in rep["tensors"]:
                if r["action"] != "quantize" or r["rel_rms_error"] is None:
                    continue
                xv = x[r["name"]].astype(np.longdouble)
                yv = y[r["name"]].astype(np.longdouble)
                ok = np.isfinite(xv) & np.isfinite(yv)
                e = (yv - xv)[ok]
                exact = np.sqrt(np.sum(e * e) / np.sum(xv[ok] * xv[ok]))
                worst = max(worst, float(abs(np.longdouble(r["rel_rms_error"]) - exact) / exact))
                count += 1
            print(f"{target:12s} {count} tensors: reported relative RMS error within {worst:.2e} "
                  "(relative) of the extended-precision value")


if __name__ == "__main__":
    main()
