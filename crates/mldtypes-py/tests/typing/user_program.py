"""A user program written against ml_dtypes' API; it must type-check with `mypy --strict`
and pyright against mldtypes' stubs (checked by tests/test_typing.py)."""

import numpy as np
import numpy.typing as npt

import mldtypes as ml_dtypes
from mldtypes import bfloat16, float8_e4m3fn, int4

x: bfloat16 = bfloat16(1.5)
y: bfloat16 = x + x
z: bfloat16 = x * 2 - 1.0
w: bfloat16 = 2.0 / x
n: bfloat16 = -abs(x)
q: int4 = int4(3) + int4(2)
r: int4 = int4(3) & 1
f: float = float(float8_e4m3fn(448))
i: int = int(int4(-8))
b: np.bool_ = x < y

arr: npt.NDArray[np.float32] = np.arange(4, dtype=np.float32)
as_bf16 = arr.astype(bfloat16)
info = ml_dtypes.finfo(bfloat16)
eps = info.eps
bits: int = ml_dtypes.iinfo(int4).bits
dtype: np.dtype = ml_dtypes.promote_types(bfloat16, np.float16)
res = ml_dtypes.result_type(np.float16, 2.5, return_weak_type_flag=True)
res_dtype: np.dtype = res[0]
weak: bool = res[1]


def after_with() -> int:
    # __exit__ returns None: the code after the block is reachable for the checker.
    with ml_dtypes.enable_x64():
        return 1


def mode() -> str:
    with ml_dtypes.numpy_promotion("jax"):
        return ml_dtypes.get_numpy_promotion()


total = ml_dtypes.sum(as_bf16)
packed: npt.NDArray[np.uint8] = ml_dtypes.pack(as_bf16.astype(ml_dtypes.float4_e2m1fn))
print(y, z, w, n, q, r, f, i, b, eps, bits, dtype, res_dtype, weak, total, packed,
      after_with(), mode())
