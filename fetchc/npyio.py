"""numpy's ``.npy`` and ``.npz`` formats: the one module that reads and
writes them (``fetchc sim``, ``fetchc run``, the API and the tests use it).

Reading (:func:`open_npy`, :func:`load_npy`).  An ``.npy`` file is
untrusted input: its header is checked before anything is sized from it,
and the data is read only when the caller asks (:meth:`NpyFile.read`), after
the caller has checked the shape and type against what it expects and the
size against its memory budget (``max_bytes``).  Refused, each with one
sentence naming the file (:class:`NpyError`):

* not an ``.npy`` file (an ``.npz`` archive, another format), an unknown
  format version (1 to 3 exist);
* a header longer than :data:`MAX_HEADER_BYTES`, or one that is not the
  Python literal ``{'descr': ..., 'fortran_order': ..., 'shape': ...}``;
* a shape that is not a tuple of sizes, more than :data:`MAX_DIMS`
  dimensions, a dimension of 2^63 or more;
* an element type that is not a number: Python objects (pickles are never
  loaded), structured records, sub-arrays (``'(2,)u1'``), strings,
  zero-byte items (``'|V0'``, ``'<U0'``), complex numbers, dates;
* data shorter than the header promises (checked against the file size, so
  a sparse file declaring gigabytes is refused without reading it), data
  larger than ``max_bytes``.

Element types.  ``'<f1'`` is what ``np.save`` writes for an
``ml_dtypes.float8_e5m2`` array: it is read as that type.  Every other
``ml_dtypes`` type (``float8_e4m3fn``, ``float8_e8m0fnu``, ``bfloat16``...)
is saved as a raw void ``'<V1'`` / ``'<V2'``, which does not say which type
wrote it: such data is raw bits, read as whatever the tensor it is given for
is (as ``uint8`` bits are).

Writing (:func:`write_npy`, :func:`write_npz`): ``numpy.lib.format``
without pickles; an ``.npz`` is written member by member with
:mod:`zipfile`, so that any name is a key (never a keyword argument), to a
stream as well as a file.  A name that would be dangerous as a zip member
path (``../x``, ``/tmp/x``: an unzip would write outside its directory) is
refused (:func:`npz_member_names`).

This module imports numpy and ml_dtypes when first used; the compile path
never imports it.
"""

from __future__ import annotations

import ast
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from fetchc.names import key_problem
from fetchc.wording import a_or_an

__all__ = [
    "MAX_DIMS",
    "MAX_HEADER_BYTES",
    "NpyError",
    "NpyFile",
    "load_npy",
    "npz_member_names",
    "open_npy",
    "write_npy",
    "write_npz",
]

MAX_HEADER_BYTES = 1 << 16
"""Longest ``.npy`` header read (numpy's own reader stops at 10000 bytes)."""
MAX_DIMS = 32
"""Most dimensions of an array read (numpy 1's limit; numpy 2 allows 64)."""
_MAX_DIM = (1 << 63) - 1
_MAGIC = b"\x93NUMPY"
_F1 = re.compile(r"\A[<>|=]f1\Z")
_NUMBER_KINDS = "biufV"


class NpyError(ValueError):
    """A file that is not a readable ``.npy`` file of numbers (module
    docstring); the message is one sentence starting with the quoted path."""


@dataclass(frozen=True)
class NpyFile:
    """An ``.npy`` file whose header was read and checked (:func:`open_npy`):
    ``shape`` (elements per dimension), ``dtype`` (a numpy dtype, native or
    not), ``fortran`` order, ``offset`` (bytes to the data) and ``nbytes``
    (the data's size in bytes, at most the file's)."""

    path: str
    shape: tuple[int, ...]
    dtype: Any
    fortran: bool
    offset: int
    nbytes: int

    @property
    def where(self) -> str:
        return repr(self.path)

    def read(self, max_bytes: int | None = None) -> Any:
        """The array (C or Fortran order as stored; writable, one
        allocation of :attr:`nbytes`).  Raises :class:`NpyError` when the
        data is more than ``max_bytes`` or the file changed since its header
        was read (shorter now), ``OSError`` when it cannot be read."""
        import numpy as np

        if max_bytes is not None and self.nbytes > max_bytes:
            raise NpyError(f"{self.where} holds {self.nbytes} bytes of data, more than the {max_bytes} bytes allowed")
        flat = np.empty(math.prod(self.shape), dtype=self.dtype)
        if self.nbytes:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                got = f.readinto(memoryview(flat.view(np.uint8)).cast("B"))  # type: ignore[arg-type]  # numpy declares ndarray.__buffer__ for Python >= 3.12 only
            if got != self.nbytes:
                raise NpyError(f"{self.where} is truncated: it shrank while it was read")
        return flat.reshape(self.shape, order="F" if self.fortran else "C")


def open_npy(path: str | os.PathLike[str]) -> NpyFile:
    """Read and check the header of the ``.npy`` file ``path`` (module
    docstring); the data is not read.  Raises :class:`NpyError`, and
    ``OSError`` when the file cannot be opened or read."""
    name = os.fspath(path)
    where = repr(name)
    with open(name, "rb") as f:
        head = f.read(8)
        if head[:4] == b"PK\x03\x04":
            raise NpyError(f"{where} is an .npz archive, not an .npy file")
        if head[:6] != _MAGIC or len(head) < 8:
            raise NpyError(f"{where} is not an .npy file (it does not start with the .npy magic string)")
        shape, fortran, dtype = _header(f, head[6], where)
        offset = f.tell()
        size = os.fstat(f.fileno()).st_size
    nbytes = math.prod(shape) * dtype.itemsize
    have = max(0, size - offset)
    if have < nbytes:
        raise NpyError(f"{where} is truncated: its header promises {nbytes} bytes of data, the file holds {have}")
    return NpyFile(name, shape, dtype, fortran, offset, nbytes)


def load_npy(path: str | os.PathLike[str], max_bytes: int | None = None) -> Any:
    """:func:`open_npy` then :meth:`NpyFile.read`: the whole array.  Raises
    as they do."""
    return open_npy(path).read(max_bytes)


def _header(f: BinaryIO, major: int, where: str) -> tuple[tuple[int, ...], bool, Any]:
    """``(shape, fortran_order, dtype)`` from the header that follows the
    8-byte magic and version.  Raises :class:`NpyError`."""
    if major not in (1, 2, 3):
        raise NpyError(f"{where} has .npy format version {major}, which this reader does not know (1 to 3)")
    width = 2 if major == 1 else 4
    size_bytes = f.read(width)
    if len(size_bytes) < width:
        raise NpyError(f"{where} has a corrupt .npy header: the file ends inside it")
    hlen = int.from_bytes(size_bytes, "little")
    if hlen > MAX_HEADER_BYTES:
        raise NpyError(
            f"{where} has {a_or_an(f'{hlen}-byte')} .npy header, more than the {MAX_HEADER_BYTES} bytes of any real one"
        )
    raw = f.read(hlen)
    if len(raw) < hlen:
        raise NpyError(f"{where} has a corrupt .npy header: the file ends inside it")
    try:
        d = ast.literal_eval(raw.decode("utf-8" if major == 3 else "latin1"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError, TypeError):
        raise NpyError(f"{where} has a corrupt .npy header: it is not a Python literal") from None
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise NpyError(f"{where} has a corrupt .npy header: expected the keys descr, fortran_order and shape")
    shape, fortran = d["shape"], d["fortran_order"]
    if not (isinstance(shape, tuple) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)):
        raise NpyError(f"{where} has a corrupt .npy header: shape {_short(shape)} is not a tuple of sizes")
    if len(shape) > MAX_DIMS:
        raise NpyError(f"{where} has {len(shape)} dimensions, more than the {MAX_DIMS} an array may have")
    if any(n > _MAX_DIM for n in shape):
        raise NpyError(f"{where} has a corrupt .npy header: shape {_short(shape)} has a size of 2^63 or more")
    if not isinstance(fortran, bool):
        raise NpyError(f"{where} has a corrupt .npy header: fortran_order {_short(fortran)} is not a bool")
    dtype = _dtype(d["descr"], where)
    if math.prod(max(n, 1) for n in shape) * dtype.itemsize > _MAX_DIM:  # numpy's limit, even with a 0 size
        raise NpyError(f"{where} has a corrupt .npy header: shape {_short(shape)} spans 2^63 bytes or more")
    return shape, fortran, dtype


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _dtype(descr: Any, where: str) -> Any:
    """The numpy dtype of a header's ``descr``, if it holds numbers (module
    docstring).  Raises :class:`NpyError`."""
    import numpy as np

    if isinstance(descr, str) and _F1.match(descr):
        import ml_dtypes

        return np.dtype(ml_dtypes.float8_e5m2)  # what np.save writes for it: '<f1'
    try:
        dtype = np.lib.format.descr_to_dtype(descr)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, SyntaxError):
        raise NpyError(f"{where} has an unknown element type {_short(descr)}") from None
    if dtype.hasobject:
        raise NpyError(f"{where} holds Python objects (pickled data), which are never loaded; save a numeric array")
    if dtype.names is not None or dtype.subdtype is not None or dtype.kind not in _NUMBER_KINDS:
        raise NpyError(f"{where} holds {_short(descr)} elements, not numbers: save a plain numeric array")
    if dtype.itemsize == 0:
        raise NpyError(f"{where} holds {_short(descr)} elements of 0 bytes, which hold no number")
    return dtype


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def write_npy(f: BinaryIO, array: Any) -> None:
    """Write ``array`` as ``.npy`` data (``numpy.lib.format``, no pickles)
    to ``f``, a real file or any object with ``write``.  Raises ``ValueError``
    for an object array."""
    import numpy as np
    from numpy.lib import format as npformat

    npformat.write_array(f, np.asanyarray(array), allow_pickle=False)


def npz_member_names(names: list[str]) -> dict[str, str]:
    """``{name: zip member}`` as ``numpy.savez`` names them (``NAME.npy``), so
    that ``numpy.load(f)[name]`` returns the array.  Raises ``ValueError``
    when a name cannot be a member path (:func:`fetchc.names.key_problem`: a
    NUL character, a backslash, an absolute path, an empty, ``.`` or ``..``
    component: ``../../x`` would let an unzip write outside its directory;
    the compiler refuses such names already), or two names cannot both be
    keys (``np.load`` would give one's array for the other: ``x`` and
    ``x.npy``).  Names are otherwise data: ``file``, ``a/b``, any Unicode."""
    members: dict[str, str] = {}
    given = set(names)
    for n in names:
        why = key_problem(n)
        if why is not None:
            raise ValueError(f"the name {n!r} cannot be a .npz key: it {why}")
        if n.endswith(".npy") and n[:-4] in given:
            raise ValueError(
                f"the names {n[:-4]!r} and {n!r} cannot both be keys of one .npz: numpy.load would return "
                f"the array of {n[:-4]!r} for {n!r}"
            )
        members[n] = n + ".npy"
    return members


def write_npz(f: BinaryIO, arrays: Mapping[str, Any]) -> None:
    """Write ``arrays`` (``{name: array}``, insertion order) as an
    uncompressed ``.npz`` to ``f`` (seekable or not), as ``numpy.savez``
    would, but taking the names as data: any string is a key (``file``,
    ``allow_pickle``, ``a/b``...), never a keyword argument.  Member
    timestamps are fixed (1980-01-01) so the bytes are deterministic.
    Raises ``ValueError`` (see :func:`npz_member_names`, object arrays)."""
    import zipfile

    import numpy as np
    from numpy.lib import format as npformat

    members = npz_member_names(list(arrays))
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(members[name], date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            with zf.open(info, mode="w", force_zip64=True) as member:
                npformat.write_array(member, np.asanyarray(arr), allow_pickle=False)
