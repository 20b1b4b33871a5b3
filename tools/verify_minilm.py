#!/usr/bin/env python3
"""Checks that a checkpoint converted by `mldtypes convert` equals, bit for bit,
ml_dtypes' `astype` of the same float32 data.

Usage: verify_minilm.py ORIGINAL.safetensors CONVERTED.safetensors DTYPE [--saturate]

For every float32 tensor of ORIGINAL, the converted tensor must carry DTYPE's
safetensors tag, the same shape, and exactly the bytes of
`x.astype(ml_dtypes.DTYPE)` (bit-packed for float4/float6, in the safetensors
order: element 2k in the low nibble / lowest bits). Non-float tensors must be
byte-identical copies. Prints one line per tensor and a summary; exits 1 on any
mismatch.
"""
# requirements: ml_dtypes==0.6.0 numpy==2.4.6 safetensors==0.8.0
import sys

import ml_dtypes
import numpy as np
import safetensors

assert ml_dtypes.__version__ == "0.6.0", ml_dtypes.__version__

TAGS = {
    "bfloat16": "BF16",
    "float16": "F16",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
    "float8_e4m3fnuz": "F8_E4M3FNUZ",
    "float8_e5m2fnuz": "F8_E5M2FNUZ",
    "float8_e8m0fnu": "F8_E8M0",
    "float6_e2m3fn": "F6_E2M3",
    "float6_e3m2fn": "F6_E3M2",
    "float4_e2m1fn": "F4",
}


def pack(codes: np.ndarray, bits: int) -> bytes:
    """Bit-packs unsigned codes little-endian: element i occupies bits
    [i*bits, (i+1)*bits) of the byte stream."""
    codes = codes.astype(np.uint64)
    if bits == 4:
        return (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8).tobytes()
    if bits == 6:
        g = codes.reshape(-1, 4)
        word = g[:, 0] | (g[:, 1] << 6) | (g[:, 2] << 12) | (g[:, 3] << 18)
        out = np.stack([word & 0xFF, (word >> 8) & 0xFF, (word >> 16) & 0xFF], axis=1)
        return out.astype(np.uint8).tobytes()
    raise ValueError(bits)


def expected_bytes(x: np.ndarray, target: str, saturate: bool) -> bytes:
    dtype = np.float16 if target == "float16" else getattr(ml_dtypes, target)
    if saturate:
        fi = ml_dtypes.finfo(dtype)
        x = np.where(np.isfinite(x), np.clip(x, float(fi.min), float(fi.max)), x).astype(np.float32)
    y = x.astype(dtype)
    bits = {"float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6}.get(target)
    if bits is None:
        return y.tobytes()
    codes = y.view(np.uint8) & ((1 << bits) - 1)
    return pack(codes, bits)


def main(argv) -> int:
    orig_path, conv_path, target = argv[:3]
    saturate = "--saturate" in argv[3:]
    with open(orig_path, "rb") as f:
        orig = dict(safetensors.deserialize(f.read()))
    with open(conv_path, "rb") as f:
        conv = dict(safetensors.deserialize(f.read()))
    bad = 0
    compared = 0
    if set(orig) != set(conv):
        print("tensor names differ:", sorted(set(orig) ^ set(conv)))
        return 1
    for name in sorted(orig):
        o, c = orig[name], conv[name]
        if o["dtype"] == "F32":
            x = np.frombuffer(o["data"], dtype="<f4")
            want = expected_bytes(x, target, saturate)
            ok = c["dtype"] == TAGS[target] and list(c["shape"]) == list(o["shape"]) and bytes(c["data"]) == want
            compared += x.size
            status = "ok" if ok else "MISMATCH"
            print(f"{status:8} {name} {o['shape']} F32 -> {c['dtype']} ({x.size} values)")
        else:
            ok = c["dtype"] == o["dtype"] and bytes(c["data"]) == bytes(o["data"])
            print(f"{'ok' if ok else 'MISMATCH':8} {name} {o['dtype']} copied")
        bad += not ok
    print(f"{target}: {len(orig)} tensors, {compared} converted values compared bit for bit, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
