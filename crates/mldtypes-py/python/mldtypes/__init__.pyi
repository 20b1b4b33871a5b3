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
import types
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import IO, Any, Literal, Self, SupportsFloat, SupportsIndex, final, overload

from typing_extensions import disjoint_base

import numpy as np
import numpy.typing as npt

__version__: str
__all__ = [
    "__version__",
    "dot",
    "mean",
    "pack",
    "sum",
    "unpack",
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
    "finfo",
    "iinfo",
    "imag",
    "int1",
    "int2",
    "int4",
    "real",
    "uint1",
    "uint2",
    "uint4",
    "Config",
    "TypePromotionError",
    "config",
    "enable_x64",
    "get_numpy_promotion",
    "numpy_dtype_promotion",
    "numpy_promotion",
    "promote_types",
    "result_type",
    "set_numpy_promotion",
    "weak",
    "p3109",
    "p3109_k8p1se",
    "p3109_k8p1sf",
    "p3109_k8p2se",
    "p3109_k8p2sf",
    "p3109_k8p3se",
    "p3109_k8p3sf",
    "p3109_k8p4se",
    "p3109_k8p4sf",
    "p3109_k8p5se",
    "p3109_k8p5sf",
    "p3109_k8p6se",
    "p3109_k8p6sf",
    "p3109_k8p7se",
    "p3109_k8p7sf",
    "p3109_k8p1ue",
    "p3109_k8p1uf",
    "p3109_k8p2ue",
    "p3109_k8p2uf",
    "p3109_k8p3ue",
    "p3109_k8p3uf",
    "p3109_k8p4ue",
    "p3109_k8p4uf",
    "p3109_k8p5ue",
    "p3109_k8p5uf",
    "p3109_k8p6ue",
    "p3109_k8p6uf",
    "p3109_k8p7ue",
    "p3109_k8p7uf",
    "p3109_k8p8ue",
    "p3109_k8p8uf",
    "CheckpointError",
    "convert_checkpoint",
    "inspect_checkpoint",
    "from_dlpack",
    "to_dlpack",
    "install_as_ml_dtypes",
    "MlDtypesAlreadyImportedError",
    "NpzFile",
    "load",
    "save",
    "savez",
    "savez_compressed",
    "safetensors",
]

# Typing-only bases (not runtime classes): what every scalar type of a kind supports.
# Arithmetic with the same type or a Python number keeps the type; with anything else
# NumPy's promotion decides (typed as Any).

_ScalarInput = SupportsFloat | SupportsIndex | str | bytes | np.generic

class _MLScalar(np.generic):
    def __new__(cls, value: _ScalarInput = ..., /) -> Self: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def __float__(self) -> float: ...
    def __int__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __hash__(self) -> int: ...
    def __lt__(self, other: Any, /) -> np.bool_: ...
    def __le__(self, other: Any, /) -> np.bool_: ...
    def __gt__(self, other: Any, /) -> np.bool_: ...
    def __ge__(self, other: Any, /) -> np.bool_: ...

class _MLFloat(_MLScalar):
    @overload
    def __add__(self, other: Self | int | float, /) -> Self: ...
    @overload
    def __add__(self, other: Any, /) -> Any: ...
    @overload
    def __radd__(self, other: int | float, /) -> Self: ...
    @overload
    def __radd__(self, other: Any, /) -> Any: ...
    @overload
    def __sub__(self, other: Self | int | float, /) -> Self: ...
    @overload
    def __sub__(self, other: Any, /) -> Any: ...
    @overload
    def __rsub__(self, other: int | float, /) -> Self: ...
    @overload
    def __rsub__(self, other: Any, /) -> Any: ...
    @overload
    def __mul__(self, other: Self | int | float, /) -> Self: ...
    @overload
    def __mul__(self, other: Any, /) -> Any: ...
    @overload
    def __rmul__(self, other: int | float, /) -> Self: ...
    @overload
    def __rmul__(self, other: Any, /) -> Any: ...
    @overload
    def __truediv__(self, other: Self | int | float, /) -> Self: ...
    @overload
    def __truediv__(self, other: Any, /) -> Any: ...
    @overload
    def __rtruediv__(self, other: int | float, /) -> Self: ...
    @overload
    def __rtruediv__(self, other: Any, /) -> Any: ...
    @overload
    def __pow__(self, other: Self | int | float, /) -> Self: ...
    @overload
    def __pow__(self, other: Any, /) -> Any: ...
    def __neg__(self) -> Self: ...
    def __pos__(self) -> Self: ...
    def __abs__(self) -> Self: ...

class _MLInt(_MLScalar):
    def __index__(self) -> int: ...
    @overload
    def __add__(self, other: Self | int, /) -> Self: ...
    @overload
    def __add__(self, other: Any, /) -> Any: ...
    @overload
    def __radd__(self, other: int, /) -> Self: ...
    @overload
    def __radd__(self, other: Any, /) -> Any: ...
    @overload
    def __sub__(self, other: Self | int, /) -> Self: ...
    @overload
    def __sub__(self, other: Any, /) -> Any: ...
    @overload
    def __rsub__(self, other: int, /) -> Self: ...
    @overload
    def __rsub__(self, other: Any, /) -> Any: ...
    @overload
    def __mul__(self, other: Self | int, /) -> Self: ...
    @overload
    def __mul__(self, other: Any, /) -> Any: ...
    @overload
    def __rmul__(self, other: int, /) -> Self: ...
    @overload
    def __rmul__(self, other: Any, /) -> Any: ...
    @overload
    def __floordiv__(self, other: Self | int, /) -> Self: ...
    @overload
    def __floordiv__(self, other: Any, /) -> Any: ...
    @overload
    def __mod__(self, other: Self | int, /) -> Self: ...
    @overload
    def __mod__(self, other: Any, /) -> Any: ...
    def __truediv__(self, other: Any, /) -> Any: ...
    def __and__(self, other: Self | int, /) -> Self: ...
    def __or__(self, other: Self | int, /) -> Self: ...
    def __xor__(self, other: Self | int, /) -> Self: ...
    def __neg__(self) -> Self: ...
    def __pos__(self) -> Self: ...
    def __abs__(self) -> Self: ...
    def __invert__(self) -> Self: ...

@disjoint_base
class bfloat16(_MLFloat):
    """bfloat16: 1 sign, 8 exponent, 7 mantissa bits (bias 127), IEEE inf/NaN."""
@disjoint_base
class float8_e3m4(_MLFloat):
    """float8_e3m4: 1/3/4 bits, bias 3, IEEE inf/NaN."""
@disjoint_base
class float8_e4m3(_MLFloat):
    """float8_e4m3: 1/4/3 bits, bias 7, IEEE inf/NaN."""
@disjoint_base
class float8_e4m3fn(_MLFloat):
    """float8_e4m3fn: 1/4/3 bits, bias 7, finite only but NaN (OCP FP8 E4M3)."""
@disjoint_base
class float8_e4m3fnuz(_MLFloat):
    """float8_e4m3fnuz: 1/4/3 bits, bias 8, no inf, no -0, NaN = 0x80."""
@disjoint_base
class float8_e4m3b11fnuz(_MLFloat):
    """float8_e4m3b11fnuz: 1/4/3 bits, bias 11, no inf, no -0, NaN = 0x80."""
@disjoint_base
class float8_e5m2(_MLFloat):
    """float8_e5m2: 1/5/2 bits, bias 15, IEEE inf/NaN (OCP FP8 E5M2)."""
@disjoint_base
class float8_e5m2fnuz(_MLFloat):
    """float8_e5m2fnuz: 1/5/2 bits, bias 16, no inf, no -0, NaN = 0x80."""
@disjoint_base
class float8_e8m0fnu(_MLFloat):
    """float8_e8m0fnu: 8 exponent bits, bias 127, unsigned powers of two, NaN = 0xff."""
@disjoint_base
class float6_e2m3fn(_MLFloat):
    """float6_e2m3fn: 1/2/3 bits, bias 1, finite only (OCP MX FP6), low 6 bits of a byte."""
@disjoint_base
class float6_e3m2fn(_MLFloat):
    """float6_e3m2fn: 1/3/2 bits, bias 3, finite only (OCP MX FP6), low 6 bits of a byte."""
@disjoint_base
class float4_e2m1fn(_MLFloat):
    """float4_e2m1fn: 1/2/1 bits, bias 1, finite only (OCP MX FP4), low 4 bits of a byte."""
@disjoint_base
class int1(_MLInt):
    """int1: 1-bit two's complement, -1 … 0."""
@disjoint_base
class int2(_MLInt):
    """int2: 2-bit two's complement, -2 … 1."""
@disjoint_base
class int4(_MLInt):
    """int4: 4-bit two's complement, -8 … 7."""
@disjoint_base
class uint1(_MLInt):
    """uint1: 0 … 1."""
@disjoint_base
class uint2(_MLInt):
    """uint2: 0 … 3."""
@disjoint_base
class uint4(_MLInt):
    """uint4: 0 … 15."""
@disjoint_base
class complex32(_MLScalar):
    """complex32: two IEEE float16, real part first."""
    def __new__(cls, value: _ScalarInput | complex = ..., /) -> Self: ...
    def __complex__(self) -> complex: ...
    @property
    def real(self) -> np.float16: ...
    @property
    def imag(self) -> np.float16: ...
@disjoint_base
class bcomplex32(_MLScalar):
    """bcomplex32: two bfloat16, real part first."""
    def __new__(cls, value: _ScalarInput | complex = ..., /) -> Self: ...
    def __complex__(self) -> complex: ...
    @property
    def real(self) -> bfloat16: ...
    @property
    def imag(self) -> bfloat16: ...

@disjoint_base
class p3109_k8p1se(_MLFloat):
    """p3109_k8p1se (IEEE P3109): 1 sign, 7 exponent, 0 mantissa bits, bias 64, ±inf = 0x7f/0xff, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p1sf(_MLFloat):
    """p3109_k8p1sf (IEEE P3109): 1 sign, 7 exponent, 0 mantissa bits, bias 64, no inf, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p2se(_MLFloat):
    """p3109_k8p2se (IEEE P3109): 1 sign, 6 exponent, 1 mantissa bits, bias 32, ±inf = 0x7f/0xff, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p2sf(_MLFloat):
    """p3109_k8p2sf (IEEE P3109): 1 sign, 6 exponent, 1 mantissa bits, bias 32, no inf, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p3se(_MLFloat):
    """p3109_k8p3se (IEEE P3109): 1 sign, 5 exponent, 2 mantissa bits, bias 16, ±inf = 0x7f/0xff, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p3sf(_MLFloat):
    """p3109_k8p3sf (IEEE P3109): 1 sign, 5 exponent, 2 mantissa bits, bias 16, no inf, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p4se(_MLFloat):
    """p3109_k8p4se (IEEE P3109): 1 sign, 4 exponent, 3 mantissa bits, bias 8, ±inf = 0x7f/0xff, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p4sf(_MLFloat):
    """p3109_k8p4sf (IEEE P3109): 1 sign, 4 exponent, 3 mantissa bits, bias 8, no inf, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p5se(_MLFloat):
    """p3109_k8p5se (IEEE P3109): 1 sign, 3 exponent, 4 mantissa bits, bias 4, ±inf = 0x7f/0xff, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p5sf(_MLFloat):
    """p3109_k8p5sf (IEEE P3109): 1 sign, 3 exponent, 4 mantissa bits, bias 4, no inf, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p6se(_MLFloat):
    """p3109_k8p6se (IEEE P3109): 1 sign, 2 exponent, 5 mantissa bits, bias 2, ±inf = 0x7f/0xff, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p6sf(_MLFloat):
    """p3109_k8p6sf (IEEE P3109): 1 sign, 2 exponent, 5 mantissa bits, bias 2, no inf, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p7se(_MLFloat):
    """p3109_k8p7se (IEEE P3109): 1 sign, 1 exponent, 6 mantissa bits, bias 1, ±inf = 0x7f/0xff, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p7sf(_MLFloat):
    """p3109_k8p7sf (IEEE P3109): 1 sign, 1 exponent, 6 mantissa bits, bias 1, no inf, NaN = 0x80 (no -0)."""
@disjoint_base
class p3109_k8p1ue(_MLFloat):
    """p3109_k8p1ue (IEEE P3109): unsigned, 8 exponent, 0 mantissa bits, bias 128, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p1uf(_MLFloat):
    """p3109_k8p1uf (IEEE P3109): unsigned, 8 exponent, 0 mantissa bits, bias 128, no inf, NaN = 0xff."""
@disjoint_base
class p3109_k8p2ue(_MLFloat):
    """p3109_k8p2ue (IEEE P3109): unsigned, 7 exponent, 1 mantissa bits, bias 64, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p2uf(_MLFloat):
    """p3109_k8p2uf (IEEE P3109): unsigned, 7 exponent, 1 mantissa bits, bias 64, no inf, NaN = 0xff."""
@disjoint_base
class p3109_k8p3ue(_MLFloat):
    """p3109_k8p3ue (IEEE P3109): unsigned, 6 exponent, 2 mantissa bits, bias 32, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p3uf(_MLFloat):
    """p3109_k8p3uf (IEEE P3109): unsigned, 6 exponent, 2 mantissa bits, bias 32, no inf, NaN = 0xff."""
@disjoint_base
class p3109_k8p4ue(_MLFloat):
    """p3109_k8p4ue (IEEE P3109): unsigned, 5 exponent, 3 mantissa bits, bias 16, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p4uf(_MLFloat):
    """p3109_k8p4uf (IEEE P3109): unsigned, 5 exponent, 3 mantissa bits, bias 16, no inf, NaN = 0xff."""
@disjoint_base
class p3109_k8p5ue(_MLFloat):
    """p3109_k8p5ue (IEEE P3109): unsigned, 4 exponent, 4 mantissa bits, bias 8, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p5uf(_MLFloat):
    """p3109_k8p5uf (IEEE P3109): unsigned, 4 exponent, 4 mantissa bits, bias 8, no inf, NaN = 0xff."""
@disjoint_base
class p3109_k8p6ue(_MLFloat):
    """p3109_k8p6ue (IEEE P3109): unsigned, 3 exponent, 5 mantissa bits, bias 4, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p6uf(_MLFloat):
    """p3109_k8p6uf (IEEE P3109): unsigned, 3 exponent, 5 mantissa bits, bias 4, no inf, NaN = 0xff."""
@disjoint_base
class p3109_k8p7ue(_MLFloat):
    """p3109_k8p7ue (IEEE P3109): unsigned, 2 exponent, 6 mantissa bits, bias 2, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p7uf(_MLFloat):
    """p3109_k8p7uf (IEEE P3109): unsigned, 2 exponent, 6 mantissa bits, bias 2, no inf, NaN = 0xff."""
@disjoint_base
class p3109_k8p8ue(_MLFloat):
    """p3109_k8p8ue (IEEE P3109): unsigned, 1 exponent, 7 mantissa bits, bias 1, +inf = 0xfe, NaN = 0xff."""
@disjoint_base
class p3109_k8p8uf(_MLFloat):
    """p3109_k8p8uf (IEEE P3109): unsigned, 1 exponent, 7 mantissa bits, bias 1, no inf, NaN = 0xff."""

P3109_K8: tuple[str, ...]

def p3109(k: int, p: int, *, signed: bool = True,
          domain: Literal["extended", "finite"] = "extended") -> type[np.generic]:
    """The IEEE P3109 format of width k and precision p as a scalar type (registered on first use)."""

from mldtypes._info import finfo as finfo, iinfo as iinfo

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
def dot(x: npt.ArrayLike, y: npt.ArrayLike, *, dtype: npt.DTypeLike | None = None,
        threads: int | None = None) -> Any:
    """1-D/2-D dot product accumulated in float32, rounded once (ValueError, TypeError)."""
def cast(x: npt.ArrayLike, dtype: npt.DTypeLike, *,
         rounding: Literal["nearest_even", "nearest_away", "toward_zero", "toward_negative",
                           "toward_positive", "stochastic", "stochastic_odd", "stochastic_fast",
                           "stochastic_fastest"] = "nearest_even",
         saturate: bool = False, random_bits: npt.ArrayLike | None = None,
         sr_bits: SupportsIndex | None = None, seed: SupportsIndex | None = None,
         out: npt.NDArray[Any] | None = None) -> Any:
    """x converted into a float format under a gfloat rounding mode, saturating or not, with
    explicit random bits or a Philox4x32-10 seed for the stochastic modes (ValueError, TypeError)."""
def matmul(a: npt.ArrayLike, b: npt.ArrayLike, *, dtype: npt.DTypeLike | None = None,
           threads: int | None = None) -> Any:
    """Matrix product (``@`` semantics, batched) accumulated in float32 by a GEMM, rounded once
    (ValueError, TypeError)."""
def pack(array: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """Sub-byte values packed LSB-first (safetensors F4/F6 layout) (TypeError)."""
def unpack(buffer: Any, dtype: npt.DTypeLike, shape: SupportsIndex | tuple[SupportsIndex, ...]
           ) -> npt.NDArray[Any]:
    """The inverse of pack (ValueError for a wrong length, TypeError)."""
class CheckpointError(ValueError):
    """A corrupt or mismatched safetensors checkpoint; the message names the file."""
_Path = str | bytes | os.PathLike[str] | os.PathLike[bytes]
_CheckpointFormat = Literal["modelopt", "compressed-tensors", "fp8"]

def convert_checkpoint(src: _Path, dst: _Path, to: npt.DTypeLike, *, only: str | None = None,
                       exclude: str | None = None, format: _CheckpointFormat | None = None,
                       fuse_scale_2: bool = True, saturate: bool = False,
                       mx_scale: Literal["floor", "ceil", "even", "rceil"] = "floor",
                       rounding: str = "nearest_even", seed: int | None = None,
                       sr_bits: int | None = None,
                       rest: npt.DTypeLike | None = None, threads: int | None = None,
                       overwrite: bool = False, fsync: bool = False) -> dict[str, Any]:
    """Converts a safetensors checkpoint (file, directory or index) to a dtype, or quantizes it
    with a recipe (``"mxfp4"`` and the other OCP MX v1.0 formats, ``"nvfp4"`` = ModelOpt
    W4A16_NVFP4, ``"fp8"`` / ``"fp8_channel"`` / ``"fp8_block"``) in the layout and with the
    configuration a serving stack loads, atomically; returns the summary of
    ``mldtypes convert --json`` (ValueError, TypeError, CheckpointError, OSError)."""
def inspect_checkpoint(path: _Path) -> list[dict[str, Any]]:
    """Per-tensor file, name, dtype tag, shape, min/max/mean/nan_count of a safetensors
    checkpoint, as ``mldtypes inspect --json`` (CheckpointError, OSError)."""
def checkpoint_shards(src: _Path) -> list[str]:
    """The shard file names of a sharded checkpoint, in conversion order: the work list of a
    distributed conversion (CheckpointError, OSError)."""
def convert_checkpoint_shard(src: _Path, dst_dir: _Path, shard: str, to: npt.DTypeLike, *,
                             only: str | None = None, exclude: str | None = None,
                             format: _CheckpointFormat | None = None, fuse_scale_2: bool = True,
                             saturate: bool = False,
                             mx_scale: Literal["floor", "ceil", "even", "rceil"] = "floor",
                             rounding: str = "nearest_even", seed: int | None = None,
                             sr_bits: int | None = None,
                             rest: npt.DTypeLike | None = None, threads: int | None = None,
                             overwrite: bool = False, fsync: bool = False) -> dict[str, Any]:
    """Converts ONE shard into ``dst_dir/shard``, byte-identical to convert_checkpoint's file
    (fused tensor scales read across shards); refuses an existing shard file unless
    ``overwrite``; returns its summary (ValueError, TypeError, CheckpointError, OSError,
    KeyboardInterrupt)."""
def finish_checkpoint_shards(src: _Path, dst_dir: _Path, to: npt.DTypeLike, *,
                             only: str | None = None, exclude: str | None = None,
                             format: _CheckpointFormat | None = None, fuse_scale_2: bool = True,
                             saturate: bool = False,
                             mx_scale: Literal["floor", "ceil", "even", "rceil"] = "floor",
                             rounding: str = "nearest_even", seed: int | None = None,
                             sr_bits: int | None = None,
                             rest: npt.DTypeLike | None = None,
                             overwrite: bool = False) -> dict[str, Any]:
    """Checks the shards written by convert_checkpoint_shard (CheckpointError naming every
    missing one), removes this conversion's leftover temporaries, then writes the index (last),
    config.json, the recipe's files and the other files (CheckpointError, ValueError,
    OSError)."""

# ---------------------------------------------------------------------------
# .npy / .npz files that keep the mldtypes dtypes; safetensors files.

from mldtypes import safetensors as safetensors

_File = str | bytes | os.PathLike[str] | os.PathLike[bytes] | IO[bytes]

def save(file: _File, arr: npt.ArrayLike, allow_pickle: bool = True) -> None:
    """``numpy.save`` keeping mldtypes dtypes: written as ``[('mldtypes.NAME', '|Vn')]``
    (raw bytes, little-endian), which ``numpy.load`` reads as raw bytes and ``load``
    restores. Raises what ``numpy.save`` raises."""
def savez(file: _File, *args: npt.ArrayLike, **kwds: npt.ArrayLike) -> None:
    """``numpy.savez`` keeping mldtypes dtypes (each array as ``save`` writes it)."""
def savez_compressed(file: _File, *args: npt.ArrayLike, **kwds: npt.ArrayLike) -> None:
    """``numpy.savez_compressed`` keeping mldtypes dtypes."""
class NpzFile(Mapping[str, Any]):
    """A ``.npz`` archive opened by ``load``: members come back with their mldtypes dtypes,
    read on access."""
    files: list[str]
    def __init__(self, npz: Any, dtype: Any, where: str) -> None: ...
    def __getitem__(self, key: str) -> Any: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def close(self) -> None:
        """Closes the archive."""
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...
def load(file: _File, mmap_mode: Literal["r+", "r", "w+", "c"] | None = None,
         allow_pickle: bool = False, *,
         dtype: npt.DTypeLike | Mapping[str, npt.DTypeLike] | None = None) -> Any:
    """``numpy.load`` restoring mldtypes dtypes; ``dtype=`` recovers files written by plain
    ``numpy.save`` from arrays of our types (raw bytes reinterpreted, same element size).
    ValueError: the file's dtype was lost and no ``dtype`` given (the message says how),
    a ``dtype`` of another size or contradicting the file; else what ``numpy.load``
    raises."""

# ---------------------------------------------------------------------------
# DLPack (CPU, DLPack 0.8 and 1.x capsules) and the ml_dtypes twin casts.

@final
class DLPackExport:
    """An array exported through DLPack (``to_dlpack``'s result), with the array-API
    protocol; holds the array until the consumer's view is gone."""
    def __dlpack__(self, *, stream: None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """A ``"dltensor"`` (max_version None) or ``"dltensor_versioned"`` capsule
        (BufferError: read-only or padded sub-byte data in an unversioned capsule, a
        device other than the CPU; ValueError: a stream)."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """``(1, 0)``: kDLCPU."""
def from_dlpack(obj: Any, /, *, copy: bool | None = None, packed: bool = False
                ) -> npt.NDArray[Any]:
    """A NumPy array viewing a DLPack producer's CPU tensor with the mldtypes (or NumPy)
    dtype of its DLPack 1.1 type code; packed sub-byte tensors are unpacked into a copy
    unless ``packed=True`` (a ``uint8`` view of the packed bytes). BufferError: device
    other than the CPU, copy=False for what cannot be viewed; TypeError: type code
    without a dtype."""
def to_dlpack(array: npt.NDArray[Any], /, *, packed: bool = False, lanes: int = 1
              ) -> DLPackExport:
    """Exports an array for ``torch.from_dlpack`` / ``jax.numpy.from_dlpack`` / NumPy with
    the DLPack 1.1 type code of its dtype; ``packed=True``: a packed copy of a 2-, 4- or
    6-bit type (``lanes=2``: two 4-bit values per element, PyTorch's float4_e2m1fn_x2).
    TypeError: bcomplex32 (no DLPack code), not an array; ValueError: bad packed/lanes."""

# ---------------------------------------------------------------------------
# JAX's type promotion (jax 0.10.2): the lattice, weak types, strict mode, x64.

_DTypeSpec = npt.DTypeLike | type[int] | type[float] | type[complex]

class TypePromotionError(ValueError):
    """No implicit promotion path between the input dtypes (jax 0.10.2's
    ``jax.errors.TypePromotionError``, a ``ValueError``); the message is JAX's text."""

@final
class weak:
    """A weakly typed value of the given dtype (JAX's ``weak_type=True``), for ``result_type``.

    It joins the lattice as the weak type of its kind (``i*``, ``f*`` or ``c*``; a weak bool
    is a bool), as a JAX array created from a Python scalar does:
    ``result_type(weak("int32"), "int8")`` is int8. ``dtype`` is anything ``numpy.dtype``
    accepts. Raises TypeError for a dtype JAX arrays cannot have (strings, objects,
    float128, ...). Instances compare equal and hash alike when their dtypes are equal.
    """
    def __new__(cls, dtype: npt.DTypeLike) -> weak: ...
    @property
    def dtype(self) -> np.dtype[Any]:
        """The value's dtype (a ``numpy.dtype``)."""
    @property
    def weak_type(self) -> Literal[True]:
        """Always True: the value is weakly typed."""

class _PromotionSetting:
    """A context manager setting JAX's promotion mode or x64 flag for the current thread
    until the ``with`` block ends (returned by ``numpy_dtype_promotion`` and ``enable_x64``).
    Blocks nest; other threads and the process-wide default (``config.update``) are
    unaffected."""
    def __enter__(self) -> _PromotionSetting: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> None: ...

@final
class Config:
    """The process-wide promotion settings, as ``jax.config``.

    ``config.update("jax_numpy_dtype_promotion", "standard" | "strict")`` and
    ``config.update("jax_enable_x64", bool)`` set the defaults; the attributes of the same
    names give the values in effect on the calling thread (context managers included). The
    defaults are JAX's: standard promotion, x64 disabled.
    """
    def update(self, name: Literal["jax_numpy_dtype_promotion", "jax_enable_x64"],
               value: str | bool) -> None:
        """Sets a process-wide default: ``"jax_numpy_dtype_promotion"`` to ``"standard"`` or
        ``"strict"``, or ``"jax_enable_x64"`` to a bool. Threads inside a
        ``numpy_dtype_promotion`` / ``enable_x64`` block keep that block's setting.
        Raises ValueError for an unknown name or value."""
    @property
    def jax_numpy_dtype_promotion(self) -> Literal["standard", "strict"]:
        """The promotion mode in effect on this thread."""
    @property
    def jax_enable_x64(self) -> bool:
        """Whether 64-bit types are enabled on this thread."""

config: Config
"""The process-wide promotion settings (see ``Config``)."""

def promote_types(a: _DTypeSpec, b: _DTypeSpec) -> np.dtype[Any]:
    """The dtype a binary operation on ``a`` and ``b`` promotes to under JAX's type promotion
    (``jax.numpy.promote_types``, jax 0.10.2): the join of ``a`` and ``b`` on JAX's lattice
    for the current ``numpy_dtype_promotion`` mode and x64 setting.

    ``a`` and ``b`` are dtype specifiers (``numpy.dtype``s, names such as ``"bfloat16"`` or
    ``"f4"``, scalar types such as ``numpy.int8`` or ``mldtypes.bfloat16``); the Python types
    ``int``, ``float`` and ``complex`` are the weak types ``i*``, ``f*``, ``c*``. Inputs are
    not canonicalized for x64, and a weak result is returned as int64 / float64 / complex128,
    as JAX does. Returns a ``numpy.dtype``.

    Raises ``TypePromotionError`` (a ValueError, with JAX's message) when the lattice has no
    join (e.g. two float8 formats, or different types in strict mode); ValueError for a dtype
    outside the lattice (complex32, float128, strings, ...); NumPy's TypeError for something
    that is not a dtype.
    """

@overload
def result_type(*args: Any, return_weak_type_flag: Literal[False] = ...) -> np.dtype[Any]: ...
@overload
def result_type(*args: Any, return_weak_type_flag: Literal[True]) -> tuple[np.dtype[Any], bool]: ...
@overload
def result_type(*args: Any, return_weak_type_flag: bool
                ) -> np.dtype[Any] | tuple[np.dtype[Any], bool]:
    """The dtype JAX gives an operation on ``args`` (``jax.dtypes.result_type``, jax 0.10.2),
    under the current ``numpy_dtype_promotion`` mode and x64 setting.

    Each argument is a ``numpy.dtype``, a dtype name or alias, a scalar type (``numpy.int8``,
    ``mldtypes.bfloat16``), a NumPy array or scalar (all strongly typed), a Python ``bool``
    (strong), a Python ``int`` / ``float`` / ``complex`` value or one of those types (weakly
    typed), ``None`` (the default float), or ``weak(dtype)``. With x64 disabled (JAX's
    default), 64-bit inputs count as 32-bit and results are canonicalized as JAX does (a weak
    float result is float32, and so on). Returns a ``numpy.dtype``, or
    ``(numpy.dtype, weak_type)`` when ``return_weak_type_flag`` is true.

    Raises ``TypePromotionError`` (a ValueError, with JAX's message) when the inputs have no
    promotion path; TypeError for an argument whose dtype JAX arrays cannot have (complex32,
    strings, objects, ...) or whose dtype cannot be determined; ValueError when called with no
    arguments. Deviation: where jax 0.10.2 raises ``KeyError: 'V'`` (a weak sub-byte integer
    result) the default int / uint is returned, as the Rust library does.
    """

def numpy_dtype_promotion(mode: Literal["standard", "strict"]) -> _PromotionSetting:
    """A context manager selecting JAX's type promotion mode for the current thread inside a
    ``with`` block, as ``jax.numpy_dtype_promotion``: ``"standard"`` (JAX's default lattice)
    or ``"strict"`` (only weakly typed values promote implicitly; anything else raises
    ``TypePromotionError``). Blocks nest and are thread-local; the process-wide default is set
    with ``config.update("jax_numpy_dtype_promotion", mode)``. Raises ValueError for any
    other mode."""

def enable_x64(new_val: bool = True) -> _PromotionSetting:
    """A context manager enabling (or disabling) 64-bit types for the current thread inside a
    ``with`` block, as ``jax.enable_x64``. With x64 disabled (JAX's default), strongly typed
    64-bit inputs count as their 32-bit counterparts (int64 -> int32, uint64 -> uint32,
    float64 -> float32, complex128 -> complex64) and weak results take 32-bit defaults.
    Blocks nest and are thread-local; the process-wide default is set with
    ``config.update("jax_enable_x64", flag)``."""

# ---------------------------------------------------------------------------
# Opt-in: NumPy's own promotion between mldtypes' dtypes and NumPy's.

class _NumpyPromotion:
    """A context manager for ``set_numpy_promotion(mode)`` within a ``with`` block; the
    previous mode is restored on exit. Process-wide (NumPy's dtype slots and ufunc dispatch
    caches are shared by all threads), not thread-local."""
    def __enter__(self) -> _NumpyPromotion: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> None: ...

def set_numpy_promotion(mode: Literal["numpy", "jax"]) -> None:
    """Chooses how NumPy itself promotes between mldtypes' dtypes and NumPy's, process-wide.

    ``"numpy"`` (the default) promotes exactly as ml_dtypes 0.6.0; ``"jax"`` makes
    ``np.result_type``, ``np.promote_types``, ``np.concatenate`` and binary ufuncs
    (arithmetic, comparisons, logical, maximum/minimum, ...) follow JAX's standard type
    promotion lattice with 64-bit types enabled: bfloat16 with float16 gives float32,
    ``bf16_array + 1.0`` and ``bf16_array + int32_array`` stay bfloat16, and two different
    float8 formats raise ``TypePromotionError`` (also a
    ``numpy.exceptions.DTypePromotionError``) with JAX's text. Promotions among NumPy's own
    dtypes, and with complex32 / bcomplex32, are unchanged. Switching back to ``"numpy"``
    restores NumPy's defaults exactly.

    Raises ValueError for another mode; RuntimeError if this NumPy's internals do not have the
    layout the switch needs (nothing is changed).
    """

def get_numpy_promotion() -> Literal["numpy", "jax"]:
    """The current NumPy promotion mode: ``"numpy"`` (the default) or ``"jax"``."""

def numpy_promotion(mode: Literal["numpy", "jax"] = "jax") -> _NumpyPromotion:
    """A context manager: ``with mldtypes.numpy_promotion("jax"): ...`` switches NumPy's own
    promotion to JAX's for the block (see ``set_numpy_promotion``) and restores the previous
    mode afterwards. The switch is process-wide, not thread-local. Raises ValueError for a
    mode other than ``"jax"`` / ``"numpy"``."""

class MlDtypesAlreadyImportedError(ImportError):
    """Raised by ``install_as_ml_dtypes()`` when the real ml_dtypes is already imported (its
    types are registered with NumPy; two registrations of ``bfloat16`` cannot be merged)."""

def install_as_ml_dtypes() -> types.ModuleType:
    """Makes ``import ml_dtypes`` anywhere in the process return a module with ml_dtypes
    0.6.0's public API backed by mldtypes (``__version__ == "0.6.0"``, the ml_dtypes API
    version; ``mldtypes.__version__`` is unchanged). Returns that module; calling it again is
    harmless. ``MLDTYPES_AS_ML_DTYPES=1`` does the same at interpreter start-up. Raises
    ``ImportError`` (``MlDtypesAlreadyImportedError``) if the real ml_dtypes is already
    imported."""
