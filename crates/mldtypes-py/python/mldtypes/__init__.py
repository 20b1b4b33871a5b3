"""mldtypes: machine-learning number formats as NumPy dtypes, implemented in Rust.

A drop-in replacement for ml_dtypes 0.6.0 (``import mldtypes as ml_dtypes``):
importing the package registers every format below with NumPy, so
``numpy.dtype("bfloat16")`` and ``array.astype(mldtypes.float8_e4m3fn)`` work.

Floating-point formats (bit layout sign/exponent/mantissa, as in the
ml_dtypes README and the OCP 8-bit and MX specifications): ``bfloat16``,
``float8_e3m4``, ``float8_e4m3``, ``float8_e4m3fn``, ``float8_e4m3fnuz``,
``float8_e4m3b11fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz``,
``float8_e8m0fnu``, ``float6_e2m3fn``, ``float6_e3m2fn``, ``float4_e2m1fn``.
Integers: ``int1``, ``int2``, ``int4``, ``uint1``, ``uint2``, ``uint4`` (one
value per byte, in the low bits). Complex: ``complex32`` (two float16),
``bcomplex32`` (two bfloat16).

Beyond ml_dtypes: ``sum``, ``mean`` and ``dot`` accumulate in float32 and
round once; ``pack``/``unpack`` store sub-byte values packed in the bit
layout of safetensors' F4/F6 tags.
"""

from mldtypes import _core
from mldtypes._core import (
    bcomplex32,
    bfloat16,
    complex32,
    float4_e2m1fn,
    float6_e2m3fn,
    float6_e3m2fn,
    float8_e3m4,
    float8_e4m3,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    int1,
    int2,
    int4,
    uint1,
    uint2,
    uint4,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "bcomplex32",
    "bfloat16",
    "complex32",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "int1",
    "int2",
    "int4",
    "uint1",
    "uint2",
    "uint4",
]
