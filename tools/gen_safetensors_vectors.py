#!/usr/bin/env python3
# requirements: torch==2.15.0 safetensors==0.8.0 numpy
"""Writes crates/mldtypes-py/tests/vectors/safetensors/: a safetensors file written by
safetensors' ``torch.save_file`` from PyTorch tensors of every dtype PyTorch and safetensors
share (``torch.safetensors``), and ``torch.json``: for each tensor the NumPy dtype mldtypes
should load it as, its shape, and the element codes PyTorch holds (unsigned integers of the
element size; ``float4_e2m1fn_x2`` as its 4-bit elements, low nibble first, as PyTorch packs
them). ``tests/test_safetensors.py`` loads the file with ``mldtypes.safetensors`` and compares.

Deterministic: fixed codes (an affine sequence per dtype), fixed metadata.

Usage: /path/to/python tools/gen_safetensors_vectors.py [OUTPUT_DIR]
"""

import json
import os
import sys

import numpy as np
import safetensors
import torch
from safetensors.torch import save_file

REQUIRED = {"torch": "2.15.0", "safetensors": "0.8.0"}
if torch.__version__.split("+")[0] != REQUIRED["torch"] or \
        safetensors.__version__ != REQUIRED["safetensors"]:
    sys.exit(f"need torch=={REQUIRED['torch']} and safetensors=={REQUIRED['safetensors']}, found "
             f"torch=={torch.__version__}, safetensors=={safetensors.__version__}")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "crates", "mldtypes-py", "tests", "vectors", "safetensors")

# torch dtype -> the NumPy dtype name mldtypes loads its safetensors tag as
DTYPES = [
    (torch.bool, "bool"), (torch.uint8, "uint8"), (torch.int8, "int8"),
    (torch.int16, "int16"), (torch.uint16, "uint16"), (torch.int32, "int32"),
    (torch.uint32, "uint32"), (torch.int64, "int64"), (torch.uint64, "uint64"),
    (torch.float16, "float16"), (torch.bfloat16, "bfloat16"), (torch.float32, "float32"),
    (torch.float64, "float64"), (torch.complex64, "complex64"),
    (torch.float8_e4m3fn, "float8_e4m3fn"), (torch.float8_e5m2, "float8_e5m2"),
    (torch.float8_e4m3fnuz, "float8_e4m3fnuz"), (torch.float8_e5m2fnuz, "float8_e5m2fnuz"),
    (torch.float8_e8m0fnu, "float8_e8m0fnu"), (torch.float4_e2m1fn_x2, "float4_e2m1fn"),
]
UINT = {1: torch.uint8, 2: torch.uint16, 4: torch.uint32, 8: torch.uint64}
NP_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def tensor_of(dtype, shape, seed):
    size = torch.empty((), dtype=dtype).element_size()
    n = int(np.prod(shape))
    raw = (np.arange(n, dtype=np.uint64) * np.uint64(2654435761 + 2 * seed) +
           np.uint64(seed)) & np.uint64((1 << (8 * size)) - 1)
    if dtype == torch.bool:
        raw = raw & np.uint64(1)
    t = torch.from_numpy(raw.astype(NP_UINT[size])).view(dtype).reshape(shape)
    return t, size


def codes_of(t, size):
    raw = t.contiguous().view(UINT[size]).reshape(-1).numpy().astype(np.uint64)
    if t.dtype == torch.float4_e2m1fn_x2:
        raw = np.stack([raw & np.uint64(0xF), raw >> np.uint64(4)], axis=1).reshape(-1)
    return [int(c) for c in raw]


def main():
    os.makedirs(OUT, exist_ok=True)
    tensors, want = {}, {}
    for i, (dtype, name) in enumerate(DTYPES):
        for label, shape in (("v", (6,)), ("m", (2, 3))):
            t, size = tensor_of(dtype, shape, i)
            key = f"{name}_{label}"
            tensors[key] = t
            np_shape = list(shape)
            if dtype == torch.float4_e2m1fn_x2:
                np_shape[-1] *= 2
            want[key] = {"dtype": name, "shape": np_shape, "codes": codes_of(t, size)}
    save_file(tensors, os.path.join(OUT, "torch.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(OUT, "torch.json"), "w") as fh:  # one tensor per line
        fh.write("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                                     for k, v in sorted(want.items())) + "\n}\n")
    print("wrote", len(tensors), "tensors to", OUT)


if __name__ == "__main__":
    main()
