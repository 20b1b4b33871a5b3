#!/usr/bin/env python3
"""Reference conversion: what `mldtypes convert IN OUT --to DTYPE` does, with
safetensors + ml_dtypes (`astype`) + numpy. Used as the timing baseline.

Every float32 tensor of IN is converted with `ml_dtypes` `astype`; every other
tensor is copied. OUT is written with safetensors' own serializer (dtype tags from the
ml_dtypes dtype names: BF16, F8_E4M3, F8_E5M2, ...).

Usage: convert_minilm_reference.py IN.safetensors OUT.safetensors DTYPE
"""
# requirements: ml_dtypes==0.6.0 numpy==2.4.6 safetensors==0.8.0
import sys

import ml_dtypes
import numpy as np
import safetensors.numpy

assert ml_dtypes.__version__ == "0.6.0", ml_dtypes.__version__


def main(src: str, dst: str, target: str) -> None:
    dtype = np.dtype(np.float16 if target == "float16" else getattr(ml_dtypes, target))
    tensors = safetensors.numpy.load_file(src)
    out = {
        name: x.astype(dtype) if x.dtype == np.float32 else x
        for name, x in tensors.items()
    }
    safetensors.numpy.save_file(out, dst)


if __name__ == "__main__":
    main(*sys.argv[1:4])
