#!/usr/bin/env python3
"""Reference conversion: what `mldtypes convert IN OUT --to DTYPE` does, with
safetensors + ml_dtypes (`astype`) + numpy. Used as the timing baseline.

Every float32 tensor of IN is converted with `ml_dtypes` `astype`; every other
tensor is copied. OUT is written with safetensors' own serializer.

Usage: convert_minilm_reference.py IN.safetensors OUT.safetensors DTYPE
"""
# requirements: ml_dtypes==0.6.0 numpy==2.4.6 safetensors==0.8.0
import sys

import ml_dtypes
import numpy as np
import safetensors

assert ml_dtypes.__version__ == "0.6.0", ml_dtypes.__version__

# safetensors dtype tags of the targets this script supports.
TAGS = {
    "bfloat16": "BF16",
    "float16": "F16",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
    "float8_e4m3fnuz": "F8_E4M3FNUZ",
    "float8_e5m2fnuz": "F8_E5M2FNUZ",
    "float8_e8m0fnu": "F8_E8M0",
}


def main(src: str, dst: str, target: str) -> None:
    dtype = np.float16 if target == "float16" else getattr(ml_dtypes, target)
    with open(src, "rb") as f:
        tensors = safetensors.deserialize(f.read())
    out = {}
    for name, t in tensors:
        if t["dtype"] == "F32":
            x = np.frombuffer(t["data"], dtype="<f4")
            y = x.astype(dtype)
            out[name] = {"dtype": TAGS[target], "shape": t["shape"], "data": y.tobytes()}
        else:
            out[name] = {"dtype": t["dtype"], "shape": t["shape"], "data": bytes(t["data"])}
    safetensors.serialize_file(out, dst)


if __name__ == "__main__":
    main(*sys.argv[1:4])
