#!/usr/bin/env python3
# requirements: torch, safetensors, numpy, mldtypes (this checkout) in one venv
"""Checks mldtypes.safetensors against the ``safetensors`` package and PyTorch, both ways, and
prints one line per safetensors tag.

- theirs -> ours: files written by ``safetensors.torch.save_file`` (every dtype PyTorch has a
  tag for) and by ``safetensors.numpy.save_file`` (NumPy's dtypes) load with
  ``mldtypes.safetensors.load_file`` to the same element bits (torch's float4_e2m1fn_x2 as
  float4_e2m1fn, two per byte, low nibble first);
- ours -> theirs: a file written by ``mldtypes.safetensors.save_file`` with every tag loads
  with ``safetensors.torch.load_file`` (and ``safe_open(framework="pt")``) and, for NumPy's
  dtypes, ``safetensors.numpy.load_file`` to the same bits; tags a package cannot load are
  reported with its error;
- the headers safetensors' writer and ours produce for the same tensors are byte-identical.

Exit status 1 if any bits differ. A verification script (not part of the test suite).

Usage: /path/to/venv/bin/python tools/check_safetensors_interop.py [WORK_DIR]
"""

import json
import os
import struct
import sys
import tempfile

import numpy as np
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

import mldtypes
from mldtypes import safetensors as st

TORCH = {
    "BOOL": torch.bool, "U8": torch.uint8, "I8": torch.int8, "I16": torch.int16,
    "U16": torch.uint16, "I32": torch.int32, "U32": torch.uint32, "I64": torch.int64,
    "U64": torch.uint64, "F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32,
    "F64": torch.float64, "C64": torch.complex64, "F8_E4M3": torch.float8_e4m3fn,
    "F8_E5M2": torch.float8_e5m2, "F8_E4M3FNUZ": torch.float8_e4m3fnuz,
    "F8_E5M2FNUZ": torch.float8_e5m2fnuz, "F8_E8M0": torch.float8_e8m0fnu,
    "F4": torch.float4_e2m1fn_x2,
}
OURS = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16",
    "BF16": mldtypes.bfloat16, "F32": "float32", "F64": "float64", "C64": "complex64",
    "F8_E4M3": mldtypes.float8_e4m3fn, "F8_E5M2": mldtypes.float8_e5m2,
    "F8_E4M3FNUZ": mldtypes.float8_e4m3fnuz, "F8_E5M2FNUZ": mldtypes.float8_e5m2fnuz,
    "F8_E8M0": mldtypes.float8_e8m0fnu, "F4": mldtypes.float4_e2m1fn,
    "F6_E2M3": mldtypes.float6_e2m3fn, "F6_E3M2": mldtypes.float6_e3m2fn,
}
NUMPY_TAGS = ["BOOL", "U8", "I8", "I16", "U16", "I32", "U32", "I64", "U64", "F16", "F32", "F64",
              "C64"]
WIDTH = {"F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def our_codes(a):
    """Element bits of a NumPy array as uint64 (sub-byte types: low bits)."""
    size = a.dtype.itemsize
    raw = np.ascontiguousarray(a).view(UINT[size]).astype(np.uint64).ravel()
    bits = WIDTH.get(next((t for t, d in OURS.items() if np.dtype(d) == a.dtype), ""), None)
    return raw & np.uint64((1 << bits) - 1) if bits else raw


def torch_codes(t):
    size = t.element_size()
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]
    raw = t.contiguous().view(ints).reshape(-1).numpy().view(UINT[size]).astype(np.uint64)
    if t.dtype == torch.float4_e2m1fn_x2:
        raw = np.stack([raw & np.uint64(0xF), raw >> np.uint64(4)], axis=1).reshape(-1)
    return raw


def header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return f.read(n)


def sample_ours(tag, shape=(4, 8)):
    dt = np.dtype(OURS[tag])
    n = int(np.prod(shape))
    raw = (np.arange(n, dtype=np.uint64) * np.uint64(2654435761) + np.uint64(17))
    bits = WIDTH.get(tag, 8 * dt.itemsize)
    raw &= np.uint64((1 << bits) - 1)
    if tag == "BOOL":
        raw &= np.uint64(1)
    return raw.astype(UINT[dt.itemsize]).view(dt).reshape(shape)


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="st-interop-")
    os.makedirs(work, exist_ok=True)
    print(f"torch {torch.__version__}, safetensors {safetensors.__version__}, NumPy "
          f"{np.__version__}, mldtypes {mldtypes.__version__}")
    bad = 0
    ours = {tag: sample_ours(tag) for tag in OURS}
    ours_file = os.path.join(work, "ours.safetensors")
    st.save_file(ours, ours_file, metadata={"format": "np"})

    def theirs(framework, tag):
        """Tensor `tag` of our file as safetensors' safe_open gives it, or its error text."""
        try:
            with safetensors.safe_open(ours_file, framework=framework) as fh:
                return fh.get_tensor(tag), None
        except Exception as e:  # noqa: BLE001 - reported
            return None, f"{type(e).__name__}: {str(e)[:70]}"
    rows = []
    for tag in OURS:
        row = {"tag": tag}
        # theirs -> ours (torch writer)
        if tag in TORCH:
            a = ours[tag]
            if tag == "F4":  # torch's float4_e2m1fn_x2: two per byte, low nibble first
                t = torch.from_numpy(mldtypes.pack(a)).view(torch.float4_e2m1fn_x2).reshape(4, 4)
            else:
                signed = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
                t = torch.from_numpy(np.ascontiguousarray(a).view(signed).copy()).view(
                    TORCH[tag])
            f = os.path.join(work, f"torch_{tag}.safetensors")
            safetensors.torch.save_file({"x": t}, f, metadata={"format": "pt"})
            got = st.load_file(f)["x"]
            same = np.array_equal(our_codes(got), torch_codes(t)) and got.shape == a.shape
            row["torch->ours"] = "bit-identical" if same else "DIFFERENT"
            bad += not same
            # the same tensors written by us: the same header
            g = os.path.join(work, f"ours_{tag}.safetensors")
            st.save_file({"x": a}, g, metadata={"format": "pt"})
            row["header"] = "identical" if header(f) == header(g) else \
                f"differs: {header(f)!r} vs {header(g)!r}"
            # ours -> torch
            tt, err = theirs("pt", tag)
            if tt is not None:
                same = tt.dtype == TORCH[tag] and np.array_equal(torch_codes(tt), our_codes(a))
                row["ours->torch"] = "bit-identical" if same else "DIFFERENT"
                bad += not same
            else:
                row["ours->torch"] = err
        else:
            row["torch->ours"] = "torch has no dtype"
            tt, err = theirs("pt", tag)
            row["ours->torch"] = err or f"loaded as {tt.dtype}"
        # numpy writer / reader
        if tag in NUMPY_TAGS:
            a = ours[tag]
            f = os.path.join(work, f"np_{tag}.safetensors")
            safetensors.numpy.save_file({"x": a}, f)
            got = st.load_file(f)["x"]
            same = got.dtype == a.dtype and np.array_equal(our_codes(got), our_codes(a))
            row["numpy->ours"] = "bit-identical" if same else "DIFFERENT"
            bad += not same
            back, err = theirs("np", tag)
            same = back is not None and back.dtype == a.dtype and np.array_equal(
                our_codes(back), our_codes(a))
            row["ours->numpy"] = "bit-identical" if same else f"DIFFERENT {err or ''}"
            bad += not same
        else:
            x, err = theirs("np", tag)
            if x is None:
                row["ours->numpy"] = err
            else:  # e.g. with ml_dtypes installed, its types
                same = x.dtype.itemsize == np.dtype(OURS[tag]).itemsize and np.array_equal(
                    np.ascontiguousarray(x).view(UINT[x.dtype.itemsize]).ravel(),
                    np.ascontiguousarray(ours[tag]).view(UINT[x.dtype.itemsize]).ravel())
                row["ours->numpy"] = (f"loaded as {x.dtype.type.__module__}"
                                      f".{x.dtype} ({'bit-identical' if same else 'DIFFERENT'})")
        rows.append(row)
    for r in rows:
        print(json.dumps(r))
    print("DIFFERENCES" if bad else "all bits identical", f"({bad} differing)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
