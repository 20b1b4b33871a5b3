"""safetensors files of NumPy arrays of every dtype safetensors stores, the mldtypes ones
included: ``save_file`` / ``load_file`` and the lazy ``safe_open``, as the ``safetensors``
package's ``safetensors.numpy`` names them.

The file format is the ``safetensors`` crate's; reading and writing are the Rust library's
(``mldtypes::checkpoint::tensor_file``): this module is a thin face of it.

Dtypes, each safetensors tag to the NumPy dtype it loads as and back: ``BOOL`` bool, ``U8`` …
``U64``, ``I8`` … ``I64``, ``F16`` float16, ``F32``, ``F64``, ``C64`` complex64, ``BF16``
bfloat16, ``F8_E4M3`` float8_e4m3fn, ``F8_E5M2`` float8_e5m2, ``F8_E4M3FNUZ``
float8_e4m3fnuz, ``F8_E5M2FNUZ`` float8_e5m2fnuz, ``F8_E8M0`` float8_e8m0fnu, and the
bit-packed ``F4`` float4_e2m1fn, ``F6_E2M3`` float6_e2m3fn, ``F6_E3M2`` float6_e3m2fn
(stored packed, least-significant bits first as PyTorch's ``float4_e2m1fn_x2``; held one per
byte in NumPy). Arrays of dtypes safetensors has no tag for (float8_e3m4, float8_e4m3,
float8_e4m3b11fnuz, int1 … uint4, complex32, bcomplex32, complex128, strings, objects) raise
``TypeError`` naming the tensor and what to store instead.

Loading maps the file (privately: arrays may be written to, the file never is) and returns
views of the mapping, without copying, for tensors whose data is aligned for their dtype
(every tensor of a file written here or by the ``safetensors`` package; the others, and the
packed tags, are copied). Views keep the mapping open after ``close()``.
"""

import os
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from mldtypes import _core  # type: ignore[attr-defined]  # the compiled module (no stub)

__all__ = ["load_file", "safe_open", "save_file"]


_Path = str | bytes | os.PathLike[str] | os.PathLike[bytes]


def _little_endian(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        return a.byteswap().view(a.dtype.newbyteorder("<")) if a.dtype.itemsize > 1 else a
    return a


def save_file(tensor_dict: Mapping[str, npt.ArrayLike], filename: _Path,
              metadata: Mapping[str, str] | None = None) -> None:
    """Writes `tensor_dict` (a mapping of str to array) to the safetensors file `filename`,
    with `metadata` (a dict of str to str, or None) as ``__metadata__``.

    Arrays of any layout and byte order are accepted (written C-ordered, little-endian); 0-d
    arrays have shape ``[]``. The file appears all at once (written beside it and renamed into
    place); nothing is left behind on error or Ctrl-C. Tensors are laid out as the
    ``safetensors`` package lays them out, so every tensor's data is aligned for its dtype.

    Raises ``TypeError`` for a name or metadata entry that is not a str, a value that is not
    an array and arrays whose dtype safetensors cannot store (the message names the tensor and
    what to store instead); ``ValueError`` for packed tags whose element count does not fill
    whole bytes (float4_e2m1fn: an even count, float6: a multiple of 4); ``OSError`` for the
    file (``FileExistsError`` when `filename` is a symbolic link, directory or device, which
    is never replaced).
    """
    items = []
    for name, value in tensor_dict.items():
        a = value if isinstance(value, np.ndarray) else np.asarray(value)
        items.append((name, _little_endian(np.asarray(a, order="C"))))  # 0-d stays 0-d
    if metadata is not None and not isinstance(metadata, dict):
        metadata = dict(metadata)
    _core._safetensors_save(items, filename, metadata)


def load_file(filename: _Path) -> dict[str, npt.NDArray[Any]]:
    """The tensors of the safetensors file `filename`, as a dict of name to NumPy array (names
    in sorted order), each of the dtype its tag stores (see the module documentation).

    Raises ``OSError`` (``FileNotFoundError``, ``PermissionError``, …) when the file cannot be
    read and ``mldtypes.CheckpointError`` (a ``ValueError``) for a file that is not a valid
    safetensors file, naming the problem.
    """
    with safe_open(filename, framework="np") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


class _Slice:
    """A tensor of an open file, read when indexed (``safe_open(...).get_slice(name)``)."""

    def __init__(self, f: Any, name: str) -> None:
        self._f = f
        self._name = name

    def get_shape(self) -> list[int]:
        """The tensor's shape, a list of ints."""
        return list(self._f.info(self._name)[2])

    def get_dtype(self) -> str:
        """The tensor's safetensors tag (``"BF16"``, ``"F8_E4M3"``, …)."""
        return self._f.info(self._name)[0]

    def __getitem__(self, index: Any) -> npt.NDArray[Any]:
        return self._f.get_tensor(self._name)[index]


class safe_open:  # noqa: N801 (the safetensors package's name)
    """A safetensors file opened for lazy reading, as ``safetensors.safe_open``::

        with mldtypes.safetensors.safe_open("model.safetensors", framework="np") as f:
            w = f.get_tensor("w")          # an array viewing the mapped file
            f.keys(), f.metadata()

    ``keys()`` lists the tensor names (sorted), ``offset_keys()`` in the order of their data,
    ``metadata()`` gives ``__metadata__`` (a dict of str, or None), ``get_tensor(name)`` one
    tensor as an array (a view of the file where aligned, see the module documentation),
    ``get_slice(name)`` an object whose indexing returns part of it. Only ``framework="np"``
    (NumPy) and ``device="cpu"`` are served.

    Raises ``ValueError`` for another framework or device; what ``load_file`` raises for the
    file; ``KeyError`` from ``get_tensor`` for an unknown name; ``ValueError`` when used after
    ``close()``.
    """

    def __init__(self, filename: _Path, framework: str = "np", device: str = "cpu") -> None:
        if framework not in ("np", "numpy"):
            raise ValueError(
                f"mldtypes.safetensors loads NumPy arrays (framework='np'), not {framework!r}; "
                f"for torch tensors use safetensors.torch, or torch.from_numpy / from_dlpack "
                f"on these arrays")
        if device != "cpu":
            raise ValueError(f"mldtypes.safetensors loads into CPU memory, not {device!r}")
        self._name = os.fsdecode(os.fspath(filename))
        self._f = _core._safe_open(filename)

    def keys(self) -> list[str]:
        """The tensor names, sorted."""
        return self._f.keys()

    def offset_keys(self) -> list[str]:
        """The tensor names in the order of their data in the file."""
        return self._f.offset_keys()

    def metadata(self) -> dict[str, str] | None:
        """``__metadata__`` as a dict of str to str, or None when the file has none."""
        return self._f.metadata()

    def get_tensor(self, name: str) -> npt.NDArray[Any]:
        """Tensor `name` as a NumPy array (raises ``KeyError`` if there is none)."""
        return self._f.get_tensor(name)

    def get_slice(self, name: str) -> _Slice:
        """Tensor `name` for partial reads: ``f.get_slice("w")[:, :8]``."""
        self._f.info(name)
        return _Slice(self._f, name)

    def close(self) -> None:
        """Closes the file (arrays already returned stay valid)."""
        self._f.close()

    def __enter__(self) -> "safe_open":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._f.closed else f"{len(self._f.keys())} tensors"
        return f"mldtypes.safetensors.safe_open({self._name!r}, {state})"
