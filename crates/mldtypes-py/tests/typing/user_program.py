"""A user program written against ml_dtypes' API; it must type-check with `mypy --strict`
and pyright against mldtypes' stubs (checked by tests/test_typing.py)."""

import os
import tempfile
from typing import Any

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


def save_and_load(directory: str) -> int:
    """Arrays of our types through .npy, .npz and safetensors files."""
    path = os.path.join(directory, "a.npy")
    ml_dtypes.save(path, as_bf16)
    back: npt.NDArray[Any] = ml_dtypes.load(path)
    ml_dtypes.savez(os.path.join(directory, "a.npz"), w=as_bf16)
    with ml_dtypes.load(os.path.join(directory, "a.npz")) as npz:
        names: list[str] = npz.files
    st_path = os.path.join(directory, "a.safetensors")
    ml_dtypes.safetensors.save_file({"w": as_bf16}, st_path, metadata={"k": "v"})
    loaded: dict[str, npt.NDArray[Any]] = ml_dtypes.safetensors.load_file(st_path)
    with ml_dtypes.safetensors.safe_open(st_path, framework="np") as fh:
        keys: list[str] = fh.keys()
        meta: dict[str, str] | None = fh.metadata()
    return len(back) + len(names) + len(loaded) + len(keys) + len(meta or {})


with tempfile.TemporaryDirectory() as tmp:
    saved = save_and_load(tmp)

print(y, z, w, n, q, r, f, i, b, eps, bits, dtype, res_dtype, weak, total, packed,
      after_with(), mode(), saved)
