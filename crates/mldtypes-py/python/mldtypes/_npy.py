"""``mldtypes.save`` / ``load`` / ``savez`` / ``savez_compressed``: NumPy's ``.npy`` and
``.npz`` files that keep the mldtypes dtypes.

NumPy writes an array's dtype into the ``.npy`` header as its type string, which cannot name a
user dtype: ``numpy.save`` of a ``float8_e5m2`` array writes ``'<f1'`` (and ``numpy.load`` then
refuses the file), ``bfloat16`` writes ``'|V2'`` (and loads back as raw bytes, the type lost).
``mldtypes.save`` writes the array as a structured dtype of one raw-bytes field named after the
type::

    {'descr': [('mldtypes.bfloat16', '|V2')], 'fortran_order': False, 'shape': (3,)}

so the file is an ordinary ``.npy`` file: ``numpy.load`` reads it without error as an array of
raw bytes (a one-field structured array whose field name says what the bytes are), never as
numbers of a wrong type, and ``mldtypes.load`` gives the array back with its dtype. The values
are stored little-endian (each part of complex32/bcomplex32 too), as every byte buffer of
mldtypes. The header and the data are written and read by NumPy's own ``numpy.lib.format``
(``write_array``, ``numpy.load``, memory mapping included).

Files written by plain ``numpy.save`` from arrays of these types lost the dtype;
``mldtypes.load(file, dtype=...)`` reads them back (the raw bytes reinterpreted as ``dtype``,
which must have the file's element size), and ``mldtypes.load`` without ``dtype`` raises a
``ValueError`` saying so.
"""

import ast
import os
import struct
import sys
from collections.abc import Mapping

import numpy as np
from numpy.lib import format as _format

from mldtypes import _core  # type: ignore[attr-defined]  # the compiled module (no stub)

_PREFIX = "mldtypes."
_NAMES = (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn",
    "float6_e3m2fn", "float4_e2m1fn", "int1", "int2", "int4", "uint1", "uint2", "uint4",
    "bcomplex32", "complex32",
)
# NumPy's message when a .npy header's descr is not a dtype (numpy.lib.format, 2.0 to 2.5)
_BAD_DESCR = "descr is not a valid dtype descriptor"


def _name_of(dtype):
    """The mldtypes type name of `dtype` (ml_dtypes' types of the same name too), or None."""
    t = dtype.type
    name = getattr(t, "__name__", None)
    if name not in _NAMES:
        return None
    if t is getattr(_core, name) or _core._qualified_name(t) == "ml_dtypes." + name:
        return name
    return None


def _same_size_names(itemsize):
    return [n for n in _NAMES if np.dtype(getattr(_core, n)).itemsize == itemsize]


def _little_endian(a):
    """`a` with its elements' bytes in little-endian order (each 16-bit part swapped for a
    big-endian or byte-swapped dtype)."""
    order = a.dtype.byteorder
    if a.dtype.itemsize == 1 or order == "<" or (order == "=" and sys.byteorder == "little"):
        return a
    return a.byteswap().view(a.dtype.newbyteorder("<"))


def _native(a):
    """A little-endian array `a` viewed with the machine's byte order where it differs."""
    if sys.byteorder == "little" or a.dtype.itemsize == 1:
        return a
    return a.view(a.dtype.newbyteorder("<"))


def _file_view(arr):
    """What ``save`` writes for `arr`: arrays of our types as the one-field raw-bytes
    structured view, anything else unchanged."""
    a = np.asanyarray(arr)
    name = _name_of(a.dtype)
    if name is None:
        return arr
    a = _little_endian(a)
    return a.view(np.dtype([(_PREFIX + name, f"V{a.dtype.itemsize}")]))


def _describe(file):
    """The file as messages name it."""
    if isinstance(file, (str, bytes, os.PathLike)):
        return repr(os.fsdecode(file))
    name = getattr(file, "name", None)
    return repr(name) if isinstance(name, str) else "the file"


def _lost_dtype_error(where, descr, itemsize, example_file):
    """The ValueError for a file whose elements' dtype numpy.save could not record."""
    # NumPy writes '<V2' and reads it back as '|V2': compare kind and size
    names = [n for n in _NAMES if np.dtype(getattr(_core, n)).str[1:] == descr.lstrip("<>|=")]
    names = names or _same_size_names(itemsize)
    common = [n for n in ("float8_e4m3fn", "bfloat16", "complex32") if n in names]
    example = (common or names or ["bfloat16"])[0]
    which = (f"mldtypes.{names[0]}" if len(names) == 1 else
             "one of " + ", ".join(f"mldtypes.{n}" for n in names) if names else
             "a type of this size")
    return ValueError(
        f"mldtypes.load: {where} holds {itemsize}-byte elements with the NumPy type string "
        f"{descr!r}, which records no dtype: numpy.save writes it for arrays of {which}, and "
        f"the file does not say which. Pass the dtype: "
        f"mldtypes.load({example_file}, dtype=mldtypes.{example}); files written by "
        f"mldtypes.save keep it")


def _descr_itemsize(descr):
    """Bytes per element of a simple NumPy type string (`'<f1'`, `'|V2'`), else None."""
    if isinstance(descr, str) and len(descr) >= 2:
        body = descr[1:] if descr[0] in "<>|=" else descr
        digits = body[1:]
        if body[:1].isalpha() and digits.isdigit():
            return int(digits)
    return None


def _restore(arr, dtype, where, example_file):
    """The array ``load`` returns for `arr`, as NumPy read it."""
    if not isinstance(arr, np.ndarray):
        return arr
    names = arr.dtype.names
    if names is not None and len(names) == 1 and names[0].startswith(_PREFIX):
        name = names[0][len(_PREFIX):]
        field = arr.dtype.fields[names[0]][0]
        if name not in _NAMES:
            raise ValueError(
                f"mldtypes.load: {where} holds {names[0]!r} values, a type this version of "
                f"mldtypes does not have")
        t = np.dtype(getattr(_core, name))
        if field.kind != "V" or field.itemsize != t.itemsize or arr.dtype.itemsize != t.itemsize:
            raise ValueError(
                f"mldtypes.load: {where} holds {names[0]!r} values of {field.itemsize} bytes; "
                f"mldtypes.{name} has {t.itemsize}")
        if dtype is not None and np.dtype(dtype) != t:
            raise ValueError(
                f"mldtypes.load: {where} holds mldtypes.{name} values, not {np.dtype(dtype)}; "
                f"load it without dtype= and convert with .astype()")
        return _native(arr.view(t))
    if dtype is None:
        if arr.dtype.kind == "V" and names is None:
            raise _lost_dtype_error(where, arr.dtype.str, arr.dtype.itemsize, example_file)
        return arr
    want = np.dtype(dtype)
    if names is None and arr.dtype.kind in "Vu":
        if arr.dtype.itemsize != want.itemsize:
            raise ValueError(
                f"mldtypes.load: {where} holds {arr.dtype.itemsize}-byte elements "
                f"({arr.dtype.str!r}); {want} has {want.itemsize} bytes")
        return _native(arr.view(want.newbyteorder("<") if want.itemsize > 1 else want))
    raise ValueError(
        f"mldtypes.load: {where} holds {arr.dtype} values; dtype= reinterprets raw bytes "
        f"(void or unsigned elements of the same size, {want.itemsize} bytes for {want}) and "
        f"does not convert: load it without dtype= and use .astype()")


def _read_header(fp):
    """The header of a ``.npy`` file whose descr NumPy refused: (descr, shape, fortran_order),
    read as ``numpy.lib.format`` reads it (``read_magic``, then the length-prefixed Python
    literal), without building the dtype. Leaves `fp` at the start of the data."""
    major, _ = _format.read_magic(fp)
    size = struct.calcsize("<H" if major == 1 else "<I")
    (length,) = struct.unpack("<H" if major == 1 else "<I", fp.read(size))
    text = fp.read(length).decode("latin1" if major < 3 else "utf8")
    d = ast.literal_eval(text)
    return d["descr"], tuple(d["shape"]), bool(d["fortran_order"])


def _recover(fp, path, dtype, mmap_mode, where, example_file):
    """Reads a ``.npy`` file NumPy refused for its descr, as `dtype`."""
    descr, shape, fortran = _read_header(fp)
    itemsize = _descr_itemsize(descr)
    if dtype is None or itemsize is None:
        if itemsize is None:
            raise ValueError(f"mldtypes.load: {where} has the type string {descr!r}, which "
                             f"neither NumPy nor mldtypes reads")
        raise _lost_dtype_error(where, descr, itemsize, example_file)
    want = np.dtype(dtype)
    if want.itemsize != itemsize:
        raise ValueError(
            f"mldtypes.load: {where} holds {itemsize}-byte elements ({descr!r}); "
            f"{want} has {want.itemsize} bytes")
    stored = want.newbyteorder("<") if want.itemsize > 1 else want
    order = "F" if fortran else "C"
    count = int(np.prod(shape, dtype=np.int64))
    if mmap_mode is not None and path is not None:
        arr = np.memmap(path, dtype=stored, mode=mmap_mode, shape=shape, order=order,
                        offset=fp.tell())
    else:
        raw = fp.read(count * itemsize)
        if len(raw) != count * itemsize:
            raise ValueError(f"mldtypes.load: {where} is truncated: {len(raw)} of "
                             f"{count * itemsize} data bytes")
        arr = np.frombuffer(bytearray(raw), dtype=stored).reshape(shape, order=order)
    return _native(arr)


def save(file, arr, allow_pickle=True):
    """Saves `arr` to a ``.npy`` file, as ``numpy.save``, keeping any mldtypes dtype.

    Arrays of the mldtypes types (and ml_dtypes' types of the same names) are written as a
    one-field structured dtype of raw bytes named after the type
    (``[('mldtypes.bfloat16', '|V2')]``), little-endian: ``mldtypes.load`` restores the dtype,
    plain ``numpy.load`` reads the file without error as raw bytes. Anything else is written
    exactly as ``numpy.save`` writes it. `file` is a path (``.npy`` is appended when missing,
    as NumPy does) or a writable binary file object.

    Raises what ``numpy.save`` raises (``OSError`` for the file, ``ValueError`` for object
    arrays with ``allow_pickle=False``).
    """
    np.save(file, _file_view(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    """``numpy.savez`` keeping mldtypes dtypes: each array is written as ``save`` writes it.

    Raises what ``numpy.savez`` raises.
    """
    np.savez(file, *[_file_view(a) for a in args],
             **{k: _file_view(v) for k, v in kwds.items()})


def savez_compressed(file, *args, **kwds):
    """``numpy.savez_compressed`` keeping mldtypes dtypes (see ``savez``).

    Raises what ``numpy.savez_compressed`` raises.
    """
    np.savez_compressed(file, *[_file_view(a) for a in args],
                        **{k: _file_view(v) for k, v in kwds.items()})


class NpzFile(Mapping):
    """A ``.npz`` archive opened by ``mldtypes.load``: ``numpy.lib.npyio.NpzFile`` whose
    members come back with their mldtypes dtypes (read lazily, on access, as NumPy's).

    ``files`` lists the member names; ``close()`` (or a ``with`` block) closes the archive.
    `dtype` (one dtype, or a dict of member name to dtype) reinterprets the members that plain
    ``numpy.savez`` wrote from arrays of our types (see ``load``).
    """

    def __init__(self, npz, dtype, where):
        self._npz = npz
        self._dtype = dtype
        self._where = where
        self.files = list(npz.files)

    def _dtype_for(self, key):
        if isinstance(self._dtype, Mapping):
            return self._dtype.get(key)
        return self._dtype

    def __getitem__(self, key):
        where = f"member {key!r} of {self._where}"
        example = f"{self._where}, dtype={{{key!r}: ...}}"
        dtype = self._dtype_for(key)
        try:
            arr = self._npz[key]
        except ValueError as e:
            if _BAD_DESCR not in str(e):
                raise
            member = key if key in self._npz.zip.namelist() else key + ".npy"
            with self._npz.zip.open(member) as fp:
                return _recover(fp, None, dtype, None, where, example)
        return _restore(arr, dtype, where, example)

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)

    def __contains__(self, key):
        return key in self._npz

    def close(self):
        """Closes the archive."""
        self._npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"mldtypes.NpzFile({self._where}, files={self.files})"


def load(file, mmap_mode=None, allow_pickle=False, *, dtype=None):
    """Loads a ``.npy`` / ``.npz`` file, as ``numpy.load``, restoring mldtypes dtypes.

    Arrays written by ``mldtypes.save`` / ``savez`` come back with their dtype (memory-mapped
    with `mmap_mode`, as NumPy maps them); ``.npz`` archives give an ``NpzFile`` (a mapping
    read lazily). Other arrays come back as ``numpy.load`` gives them.

    `dtype` recovers files written by plain ``numpy.save`` / ``savez`` from arrays of our types,
    whose dtype was lost: the raw bytes are reinterpreted as `dtype` (its element size must be
    the file's). That covers the files ``numpy.load`` refuses (float8_e5m2 writes ``'<f1'``:
    ``ValueError: descr is not a valid dtype descriptor``) and those it reads as raw bytes
    (``'|V1'``, ``'|V2'``, ``'|V4'``), and arrays of unsigned integer codes of the same size.
    For a ``.npz`` archive `dtype` may be a dict of member name to dtype.

    Raises ``ValueError`` for a file whose dtype was lost when no `dtype` is given (the message
    says which types have that element size and how to pass one), for a `dtype` of another
    size, and for a `dtype` asked of a file that records another type; otherwise what
    ``numpy.load`` raises (``OSError``, ``ValueError`` for pickled objects without
    `allow_pickle`).
    """
    path = None if hasattr(file, "read") else os.fspath(file)
    where = _describe(file)
    example = where if path is not None else "file"
    start = None if path is not None else file.tell()
    try:
        obj = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle)
    except ValueError as e:
        if _BAD_DESCR not in str(e):
            raise
        if path is not None:
            with open(path, "rb") as fp:
                return _recover(fp, path, dtype, mmap_mode, where, example)
        file.seek(start)
        return _recover(file, None, dtype, None, where, example)
    if isinstance(obj, np.lib.npyio.NpzFile):
        return NpzFile(obj, dtype, where)
    return _restore(obj, dtype, where, example)


__all__ = ["NpzFile", "load", "save", "savez", "savez_compressed"]
