#!/usr/bin/env python3
# requirements: torchao==0.18.0 torch==2.15.0 numpy==2.4.6
"""Generate the committed torchao MX scale-rule vectors (crates/mldtypes/tests/vectors/torchao_mx/).

Reference: torchao 0.18.0's `to_mx` (torchao/prototype/mx_formats/mx_tensor.py) on CPU, eager
mode (the pure-PyTorch paths of every `ScaleCalculationMode`: FLOOR, CEIL, EVEN, RCEIL), with
torch 2.15.0, installed next to torch in the clients environment:

    /work/venvs/clients/bin/pip install --no-deps torchao==0.18.0
    /work/venvs/clients/bin/python tools/gen_torchao_mx_vectors.py [OUTPUT_DIR]

Only torchao's public `to_mx(data, elem_dtype, block_size=32, scaling_mode)` is called, on a
float32 tensor of shape (blocks, 32), for each of the five element formats torchao supports
(float8_e4m3fn, float8_e5m2, fp6_e2m3, fp6_e3m2, float4_e2m1fn_x2; torchao has no MXINT8).

Inputs (per format, shared by the four modes), each a block of 32 float32:
- blocks of +0 and of -0;
- subnormal amax (2^-149, 2^-140, 1.5·2^-127, the largest subnormal) and amax at 2^-126;
- EVEN's ties: amax = 2^e·(2 − 2^−(m+1)) for the format's mantissa width m, and the float32
  numbers next to it, for several e;
- RCEIL's boundaries: amax = max_elem·2^k and its float32 neighbours, for several k, and
  amax = 2^k·(1 + 2^-23)·max_elem (float32 log2 rounding);
- element ties (midpoints between neighbouring element values times the block scale);
- max-magnitude blocks (the largest float32, 2^127, max_elem·2^120);
- NaN and +inf blocks;
- 64 random blocks (log-uniform magnitudes over 2^-30 … 2^30, random signs).
In every special block the remaining elements are amax times uniform(−1, 1).

Output: torchao_mx.json.gz (gzip written with mtime 0; deterministic seeds): per format the
float32 inputs (hex of little-endian bytes) and per mode the E8M0 scale codes (one per block)
and the element codes (one per element, unpacked: FP4 low nibble first as torchao packs).
"""

import gzip
import json
import os
import sys
from importlib.metadata import version

import numpy as np
import torch
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.mx_tensor import to_mx

FORMATS = [
    # our name, torchao elem dtype, mantissa bits, max element
    ("mxfp8_e4m3", torch.float8_e4m3fn, 3, 448.0),
    ("mxfp8_e5m2", torch.float8_e5m2, 2, 57344.0),
    ("mxfp6_e2m3", "fp6_e2m3", 3, 7.5),
    ("mxfp6_e3m2", "fp6_e3m2", 2, 28.0),
    ("mxfp4", torch.float4_e2m1fn_x2, 1, 6.0),
]
MODES = {
    "floor": ScaleCalculationMode.FLOOR,
    "ceil": ScaleCalculationMode.CEIL,
    "even": ScaleCalculationMode.EVEN,
    "rceil": ScaleCalculationMode.RCEIL,
}


def f32(x):
    return np.float32(x)


def neighbours(a):
    a = f32(a)
    return [np.nextafter(a, f32(0)), a, np.nextafter(a, f32(np.inf))]


def block(rng, amax, sign=1.0):
    amax = f32(amax)
    b = (rng.uniform(-1, 1, 32) * np.float64(amax)).astype(np.float32)
    if not np.isfinite(amax):
        b = rng.uniform(-1, 1, 32).astype(np.float32)
    b = np.clip(b, -np.abs(amax), np.abs(amax)) if np.isfinite(amax) else b
    b[rng.integers(32)] = f32(sign) * amax
    return b


def inputs(rng, m, max_elem):
    blocks = [np.zeros(32, np.float32), np.full(32, -0.0, np.float32)]
    for a in [2.0**-149, 2.0**-140, 1.5 * 2.0**-127,
              np.float32(2.0**-126) - np.float32(2.0**-149), 2.0**-126]:
        blocks.append(block(rng, a))
    for e in [-126, -100, -20, -1, 0, 1, 3, 10, 40, 120, 127]:
        for a in neighbours(2.0**e * (2 - 2.0 ** -(m + 1))):
            blocks.append(block(rng, a, -1.0 if e % 2 else 1.0))
    for k in [-133, -127, -126, -60, -9, -1, 0, 1, 5, 30, 100, 118]:
        for a in neighbours(max_elem * 2.0**k) + [f32(max_elem * 2.0**k * (1 + 2.0**-23))]:
            if np.isfinite(a) and a > 0:
                blocks.append(block(rng, a))
    # element ties: midpoints (1 + (j + 1/2)·2^-m)·2^e of the element grid, with max_elem in
    # the block so that the scale is 2^0 (times s) under floor, ceil and even.
    emax = int(np.floor(np.log2(max_elem)))
    mids = np.array([(1 + (j + 0.5) * 2.0**-m) * 2.0**e
                     for e in range(emax - 8, emax + 1) for j in range(2**m)])
    mids = mids[mids < max_elem]
    for s in [1.0, 2.0**-40, 2.0**50]:
        v = rng.choice(mids, 32) * s
        v[0] = max_elem * s
        sign = np.where(rng.integers(0, 2, 32) == 1, -1.0, 1.0)
        blocks.append((v * sign).astype(np.float32))
    for a in [np.finfo(np.float32).max, 2.0**127, max_elem * 2.0**120]:
        blocks.append(block(rng, a))
    nan = block(rng, 1.0)
    nan[5] = np.nan
    inf = block(rng, 1.0)
    inf[7] = np.inf
    blocks += [nan, inf]
    for _ in range(64):
        mag = np.exp2(rng.uniform(-30, 30)) * np.exp2(rng.uniform(-12, 0, 32))
        blocks.append((mag * np.where(rng.integers(0, 2, 32) == 1, -1, 1)).astype(np.float32))
    return np.stack(blocks).astype(np.float32)



def codes_of(name, q):
    q = q.contiguous().view(torch.uint8).numpy().reshape(-1)
    if name == "mxfp4":
        out = np.empty(q.size * 2, np.uint8)
        out[0::2] = q & 0xF
        out[1::2] = q >> 4
        return out
    return q


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "crates", "mldtypes", "tests", "vectors", "torchao_mx")
    os.makedirs(out_dir, exist_ok=True)
    doc = {"torchao": version("torchao"), "torch": torch.__version__.split("+")[0],
           "block": 32, "formats": {}}
    for i, (name, dt, m, max_elem) in enumerate(FORMATS):
        rng = np.random.default_rng(2600 + i)
        x = inputs(rng, m, max_elem)
        entry = {"inputs": x.astype("<f4").tobytes().hex(), "blocks": int(x.shape[0]),
                 "modes": {}}
        for mode, sm in MODES.items():
            scale, q = to_mx(torch.from_numpy(x.copy()), dt, 32, scaling_mode=sm)
            entry["modes"][mode] = {
                "scales": scale.view(torch.uint8).numpy().reshape(-1).tobytes().hex(),
                "codes": codes_of(name, q).tobytes().hex(),
            }
        doc["formats"][name] = entry
    raw = json.dumps(doc, sort_keys=True).encode()
    path = os.path.join(out_dir, "torchao_mx.json.gz")
    with open(path, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as g:
            g.write(raw)
    n = sum(e["blocks"] for e in doc["formats"].values())
    print(f"{path}: {len(FORMATS)} formats x {len(MODES)} modes, {n} blocks per mode "
          f"({n * 32} elements)")


if __name__ == "__main__":
    main()
