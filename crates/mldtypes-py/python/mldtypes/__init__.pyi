"""Type stubs of mldtypes: ML number formats as NumPy dtypes (a drop-in for ml_dtypes 0.6.0).

Every scalar type below subclasses ``numpy.generic``; ``numpy.dtype(t)`` and
``numpy.dtype("<name>")`` give its registered dtype. Bit layouts (sign, exponent, mantissa
from the most significant bit; sub-byte values in the low bits of one byte):

- ``bfloat16``: 1/8/7, bias 127, IEEE inf/NaN.
- ``float8_e3m4`` 1/3/4 bias 3, ``float8_e4m3`` 1/4/3 bias 7, ``float8_e5m2`` 1/5/2 bias 15:
  IEEE inf/NaN.
- ``float8_e4m3fn`` 1/4/3 bias 7: no inf, NaN = S.1111.111 (OCP FP8 E4M3).
- ``float8_e4m3fnuz`` (bias 8), ``float8_e4m3b11fnuz`` (bias 11), ``float8_e5m2fnuz``
  (1/5/2, bias 16): no inf, no -0, NaN = 0x80.
- ``float8_e8m0fnu``: 8 exponent bits, bias 127, unsigned, no zero, NaN = 0xff (OCP MX scale).
- ``float6_e2m3fn`` 1/2/3 bias 1, ``float6_e3m2fn`` 1/3/2 bias 3, ``float4_e2m1fn`` 1/2/1
  bias 1: no inf, no NaN (OCP MX); out-of-range values saturate.
- ``int1``/``int2``/``int4`` (two's complement), ``uint1``/``uint2``/``uint4``.
- ``complex32``: two IEEE float16 (real first); ``bcomplex32``: two bfloat16.
"""

import os
from typing import Any, Literal, SupportsIndex

import numpy as np
import numpy.typing as npt

__version__: str
__all__: list[str]

class bfloat16(np.generic):
    """bfloat16: 1 sign, 8 exponent, 7 mantissa bits (bias 127), IEEE inf/NaN."""
class float8_e3m4(np.generic):
    """float8_e3m4: 1/3/4 bits, bias 3, IEEE inf/NaN."""
class float8_e4m3(np.generic):
    """float8_e4m3: 1/4/3 bits, bias 7, IEEE inf/NaN."""
class float8_e4m3fn(np.generic):
    """float8_e4m3fn: 1/4/3 bits, bias 7, finite only but NaN (OCP FP8 E4M3)."""
class float8_e4m3fnuz(np.generic):
    """float8_e4m3fnuz: 1/4/3 bits, bias 8, no inf, no -0, NaN = 0x80."""
class float8_e4m3b11fnuz(np.generic):
    """float8_e4m3b11fnuz: 1/4/3 bits, bias 11, no inf, no -0, NaN = 0x80."""
class float8_e5m2(np.generic):
    """float8_e5m2: 1/5/2 bits, bias 15, IEEE inf/NaN (OCP FP8 E5M2)."""
class float8_e5m2fnuz(np.generic):
    """float8_e5m2fnuz: 1/5/2 bits, bias 16, no inf, no -0, NaN = 0x80."""
class float8_e8m0fnu(np.generic):
    """float8_e8m0fnu: 8 exponent bits, bias 127, unsigned powers of two, NaN = 0xff."""
class float6_e2m3fn(np.generic):
    """float6_e2m3fn: 1/2/3 bits, bias 1, finite only (OCP MX FP6), low 6 bits of a byte."""
class float6_e3m2fn(np.generic):
    """float6_e3m2fn: 1/3/2 bits, bias 3, finite only (OCP MX FP6), low 6 bits of a byte."""
class float4_e2m1fn(np.generic):
    """float4_e2m1fn: 1/2/1 bits, bias 1, finite only (OCP MX FP4), low 4 bits of a byte."""
class int1(np.generic):
    """int1: 1-bit two's complement, -1 … 0."""
class int2(np.generic):
    """int2: 2-bit two's complement, -2 … 1."""
class int4(np.generic):
    """int4: 4-bit two's complement, -8 … 7."""
class uint1(np.generic):
    """uint1: 0 … 1."""
class uint2(np.generic):
    """uint2: 0 … 3."""
class uint4(np.generic):
    """uint4: 0 … 15."""
class complex32(np.generic):
    """complex32: two IEEE float16, real part first."""
    @property
    def real(self) -> np.float16: ...
    @property
    def imag(self) -> np.float16: ...
class bcomplex32(np.generic):
    """bcomplex32: two bfloat16, real part first."""
    @property
    def real(self) -> bfloat16: ...
    @property
    def imag(self) -> bfloat16: ...

class finfo(np.finfo[Any]):
    """Machine limits of a float format (ml_dtypes' values); NumPy's for other types."""
    def __new__(cls, dtype: Any) -> finfo: ...

class iinfo(np.iinfo[Any]):
    """Machine limits of a sub-byte integer; NumPy's for other types."""
    def __new__(cls, int_type: Any) -> iinfo: ...

def real(x: Any) -> Any:
    """The real part; a bfloat16/float16 view for bcomplex32/complex32 arrays."""
def imag(x: Any) -> Any:
    """The imaginary part; a bfloat16/float16 view for bcomplex32/complex32 arrays."""
def sum(a: npt.ArrayLike, axis: None | SupportsIndex | tuple[SupportsIndex, ...] = None,
        dtype: npt.DTypeLike | None = None) -> Any:
    """Sum accumulated in float32, rounded once (AxisError, TypeError)."""
def mean(a: npt.ArrayLike, axis: None | SupportsIndex | tuple[SupportsIndex, ...] = None,
         dtype: npt.DTypeLike | None = None) -> Any:
    """Mean accumulated in float32, rounded once (AxisError, TypeError)."""
def dot(x: npt.ArrayLike, y: npt.ArrayLike) -> Any:
    """1-D/2-D dot product accumulated in float32, rounded once (ValueError, TypeError)."""
def pack(array: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """Sub-byte values packed LSB-first (safetensors F4/F6 layout) (TypeError)."""
def unpack(buffer: Any, dtype: npt.DTypeLike, shape: SupportsIndex | tuple[SupportsIndex, ...]
           ) -> npt.NDArray[Any]:
    """The inverse of pack (ValueError for a wrong length, TypeError)."""
class CheckpointError(ValueError):
    """A corrupt or mismatched safetensors checkpoint; the message names the file."""
def convert_checkpoint(src: str | os.PathLike[str], dst: str | os.PathLike[str],
                       to: npt.DTypeLike, *, only: str | None = None, saturate: bool = False,
                       mx_scale: Literal["floor", "ceil"] = "floor",
                       rest: npt.DTypeLike | None = None, threads: int | None = None,
                       overwrite: bool = False, fsync: bool = False) -> dict[str, Any]:
    """Converts a safetensors checkpoint (file, directory or index) to a dtype, an OCP MX v1.0
    format or nvfp4, atomically; returns the summary of ``mldtypes convert --json``
    (ValueError, TypeError, CheckpointError, OSError)."""
def inspect_checkpoint(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Per-tensor file, name, dtype tag, shape, min/max/mean/nan_count of a safetensors
    checkpoint, as ``mldtypes inspect --json`` (CheckpointError, OSError)."""
