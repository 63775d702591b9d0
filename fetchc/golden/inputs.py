"""Turning a user's arrays into the DM image of a kernel (``fetchc run``,
``fetchc sim --arg``; ir.md §2a, §5; hardware.md §3).

A kernel's tensors are its memref arguments (ir.md §2a), each described by a
:class:`TensorSpec`: name, element type, memref shape, layout (element
strides and offset) and DM byte address.  Its ``f32`` arguments are scalars.

Accepted forms of a tensor's array (:func:`canonical_values`), always in the
memref's own shape unless said otherwise:

* the memref's own type: its canonical numpy / ``ml_dtypes`` dtype
  (``ml_dtypes.bfloat16``, ``float8_e4m3fn``, ``float8_e5m2``,
  ``float8_e8m0fnu``, ``float4_e2m1fn``, ``int4``; ``np.float32``,
  ``np.int8`` / ``int16`` / ``int32``);
* raw bits of the same width: ``uint8`` for the 8-bit types, ``uint16`` for
  ``bf16`` / ``i16``, ``uint32`` for ``f32`` / ``i32``;
* the ``|V1`` / ``|V2`` arrays that ``np.save`` makes of ``ml_dtypes`` arrays
  (``np.load`` gives them back as raw void items): read as the memref's
  type (for 4-bit types the byte must hold one code, 0-15);
* 4-bit tensors (``i4``, ``f4E2M1FN``): one code per element, ``uint8``
  0-15 (for ``i4`` also ``int8`` -8..7), **or** packed two per byte as
  checkpoints store them: ``uint8`` with the last dim halved (an even last
  dim), element ``2i`` in the low nibble;
* big-endian variants of these dtypes (e.g. ``>f4``) are byte-swapped.

Anything else is an :class:`InputError` naming the tensor, the expected
shape and type, the accepted forms and what was given.  Nothing is ever
converted by value (a ``float64`` array for an ``f32`` tensor is an error,
not a silent rounding).

Scalars (``f32`` arguments, :func:`scalar_value`): a Python ``float`` or
``int``, a numpy real scalar, a 0-d real array, or a string (``"0.5"``,
``"1e-3"``, ``"inf"``, ``"nan"``, a hex float ``"0x1.8p-3"``), rounded to
``f32`` to nearest even; a finite value beyond ``f32``'s range is an error.

Command-line specs (:func:`parse_arg_specs`): ``NAME=FILE.npy`` loads a
``.npy`` file (:func:`load_npy`: a missing, unreadable, truncated, pickled
or non-``.npy`` file is an :class:`InputError`), ``NAME=VALUE`` (anything not
ending in ``.npy``) is a scalar's value.  :func:`check_names` reports
missing, unknown and duplicated names.

Layout (:func:`place`, :func:`dm_image`): element ``(i_0, ..., i_{r-1})`` of
a tensor sits at element address ``offset + Σ i_k·stride_k`` from the
tensor's DM byte address ``dm_base`` (hardware.md §3, ir.md §2a), bytes
little-endian, 4-bit elements two per byte with element address ``2j`` in the
low nibble of byte ``dm_base + j`` (:func:`fetchc.target.encoding.pack_elements`).
Writing a 4-bit element keeps the other nibble of its byte.

This module imports numpy and ml_dtypes; the compile path never imports it.
"""

from __future__ import annotations

import ast
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fetchc.target.encoding import UINT, pack_elements
from fetchc.target.facts import F32, I4, ElementType

__all__ = [
    "InputError",
    "TensorSpec",
    "canonical_values",
    "scalar_value",
    "parse_arg_specs",
    "load_npy",
    "check_names",
    "place",
    "packed_bytes",
    "dm_image",
    "image_size",
]

PLACE_CHUNK = 1 << 20
"""Elements per pass when a strided layout is written element by element
(bounds the int64 address arrays at 8 MiB)."""


class InputError(ValueError):
    """Bad user input for a kernel: a missing, unknown or duplicated name, a
    wrong shape or dtype, an out-of-range 4-bit code, an unreadable or
    corrupt ``.npy`` file, a scalar that is not an ``f32`` number, or a
    tensor that does not fit the DM image.  The message is one or two
    sentences naming the tensor, what was expected and what was given."""


# --------------------------------------------------------------------------
# Tensors
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorSpec:
    """One kernel tensor: ``name`` (ir.md §2a: the SSA name, else ``argN``),
    element type ``elem``, memref ``shape`` (elements), layout ``strides``
    and ``offset`` (elements; identity layout: row-major strides, offset 0)
    and ``dm_base``, the DM byte address of the memref's element 0 (``None``
    when unplaced)."""

    name: str
    elem: ElementType
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    offset: int = 0
    dm_base: int | None = None

    def __post_init__(self) -> None:
        if self.strides is None:
            object.__setattr__(self, "strides", _row_major(self.shape))
        if len(self.strides) != len(self.shape):  # type: ignore[arg-type]
            raise ValueError(f"tensor {self.name!r}: {len(self.strides)} strides for a rank-{len(self.shape)} shape")  # type: ignore[arg-type]

    @classmethod
    def from_memref(cls, name: str, memref_type: Any, dm_base: int | None = None) -> TensorSpec:
        """The spec of an xDSL ``MemRefType`` (identity or ``strided<>``
        layout; :func:`fetchc.target.layout.memref_layout`).  Raises
        ``ValueError`` for a non-hardware element type or a dynamic/unsupported
        layout."""
        from fetchc.target.facts import element_type, type_name
        from fetchc.target.layout import memref_layout

        elem = element_type(memref_type.element_type)
        if elem is None or elem.in_flight_only:
            raise ValueError(f"tensor {name!r}: {type_name(memref_type.element_type)} is not a DM element type")
        strides, offset = memref_layout(memref_type)
        return cls(name, elem, tuple(int(d) for d in memref_type.get_shape()), tuple(strides), int(offset), dm_base)

    @property
    def type_str(self) -> str:
        """The shape and type as MLIR spells them, e.g. ``4096x16xf4E2M1FN``."""
        return "x".join([*(str(d) for d in self.shape), self.elem.name])

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    def address_range(self) -> tuple[int, int]:
        """``(lo, hi)``: the lowest and one past the highest element address
        (elements, relative to ``dm_base``) that the layout reaches; ``(0, 0)``
        for an empty tensor."""
        if self.size == 0:
            return 0, 0
        lo = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)  # type: ignore[arg-type]
        hi = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)  # type: ignore[arg-type]
        return lo, hi + 1

    def byte_range(self) -> tuple[int, int]:
        """``(lo, hi)``: the DM bytes the tensor occupies, relative to
        ``dm_base`` (``hi`` exclusive; 4-bit elements share bytes)."""
        lo, hi = self.address_range()
        if lo == hi:
            return 0, 0
        if self.elem.is_subbyte:
            return lo // 2, (hi - 1) // 2 + 1
        size = self.elem.bits // 8
        return lo * size, hi * size


def _row_major(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def _shape_str(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _given(a: Any) -> str:
    if isinstance(a, np.ndarray):
        return f"an array of shape {_shape_str(a.shape)} and dtype {_dtype_name(a.dtype)}"
    return f"a {type(a).__name__}"


def _dtype_name(dt: np.dtype) -> str:
    if dt.kind == "V":
        return dt.str  # '|V1'
    return str(dt) if dt.isnative else dt.str


def accepted_forms(spec: TensorSpec) -> list[str]:
    """The array forms :func:`canonical_values` accepts for ``spec``, for
    messages, e.g. ``["float8_e4m3fn", "uint8 (raw bits)", "|V1 (np.save of
    an ml_dtypes array)"]``."""
    e = spec.elem
    own = np.dtype(e.np_dtype)
    forms = [str(own)]
    if e.is_subbyte:
        forms.append("uint8 codes 0-15")
        if e == I4:
            forms.append("int8 values -8..7")
        forms.append("|V1 (np.save of an ml_dtypes array)")
        if spec.shape and spec.shape[-1] % 2 == 0:
            packed = spec.shape[:-1] + (spec.shape[-1] // 2,)
            forms.append(f"uint8 packed two per byte, shape {_shape_str(packed)} (even element in the low nibble)")
        return forms
    raw = np.dtype(UINT[own.itemsize])
    forms.append(f"{raw} (raw bits)")
    if own.kind == "V" or _is_ml_dtype(own):
        forms.append(f"|V{own.itemsize} (np.save of an ml_dtypes array)")
    return forms


def _is_ml_dtype(dt: np.dtype) -> bool:
    return dt.type.__module__.startswith("ml_dtypes")


def _who(spec: TensorSpec) -> str:
    return f"tensor {spec.name!r} (memref<{spec.type_str}>)"


def _expected(spec: TensorSpec) -> str:
    return f"shape {_shape_str(spec.shape)} of {spec.elem} as " + ", ".join(accepted_forms(spec))


def _codes(spec: TensorSpec, a: np.ndarray, lo: int, hi: int, what: str) -> None:
    """Raise when an element of ``a`` is outside ``[lo, hi]``."""
    bad = (a < lo) | (a > hi)
    if bad.any():
        i = tuple(int(j) for j in np.unravel_index(int(np.flatnonzero(bad.reshape(-1))[0]), a.shape))
        hint = ""
        if spec.shape and spec.shape[-1] % 2 == 0 and lo == 0:
            hint = f"; a packed array (two codes per byte) has shape {_shape_str(spec.shape[:-1] + (spec.shape[-1] // 2,))}"
        raise InputError(f"{_who(spec)}: {what} must lie in [{lo}, {hi}], but element {i} is {int(a[i])}{hint}")


def canonical_values(spec: TensorSpec, value: Any) -> np.ndarray:
    """The tensor's values as canonical ``spec.elem.np_dtype`` items in
    ``spec.shape`` (the forms of the module docstring).  The result may be a
    view of ``value`` (never written to).

    Raises :class:`InputError` for anything else (not an array, a wrong shape
    or dtype, a 4-bit code out of range), naming ``spec.name``, the expected
    shape and type, and what was given."""
    e = spec.elem
    own = np.dtype(e.np_dtype)
    if isinstance(value, str):  # --arg NAME=VALUE: neither a .npy name nor an existing file
        raise InputError(
            f"{_who(spec)} needs an array: expected {_expected(spec)}; got the value {value!r} "
            f"(give an .npy file: --arg {spec.name}=FILE.npy)"
        )
    if not isinstance(value, np.ndarray):
        raise InputError(f"{_who(spec)} needs an array: expected {_expected(spec)}; got {_given(value)}")
    a = value
    if a.dtype.kind in "biuf" and not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    dt = a.dtype
    shape = spec.shape

    def wrong(extra: str = "") -> InputError:
        return InputError(f"{_who(spec)}: expected {_expected(spec)}; got {_given(value)}{extra}")

    if e.is_subbyte:
        if dt == own:
            if a.shape != shape:
                raise wrong()
            return a
        if dt == np.uint8 or (dt.kind == "V" and dt.itemsize == 1):
            u = a.view(np.uint8)
            if u.shape == shape:
                _codes(spec, u, 0, 15, "4-bit codes")
                return u.view(own)
            if shape and shape[-1] % 2 == 0 and dt == np.uint8 and u.shape == shape[:-1] + (shape[-1] // 2,):
                codes = np.empty(shape, dtype=np.uint8)
                codes[..., 0::2] = u & np.uint8(0x0F)
                codes[..., 1::2] = u >> np.uint8(4)
                return codes.view(own)
            raise wrong()
        if dt == np.int8 and e == I4:
            if a.shape != shape:
                raise wrong()
            _codes(spec, a, -8, 7, "i4 values")
            return a.astype(own)
        raise wrong()
    if a.shape != shape:
        raise wrong()
    if dt == own:
        return a
    if dt == np.dtype(UINT[own.itemsize]) or (dt.kind == "V" and dt.itemsize == own.itemsize and _is_ml_dtype(own)):
        return a.view(own)
    hint = ""
    if dt.kind == "f" and own.kind == "f" and e == F32:
        hint = " (convert with .astype(numpy.float32) if rounding is intended)"
    raise wrong(hint)


# --------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------

_F32_MAX = float(np.finfo(np.float32).max)


def _number(s: str) -> float:
    """A scalar's text as a float: a decimal (``inf``, ``nan`` too) or a
    hex float (``0x1p-127``).  Raises ``ValueError`` for anything else."""
    return float.fromhex(s) if s.lower().lstrip("+-").startswith("0x") else float(s)


def scalar_value(name: str, value: Any) -> np.float32:
    """An ``f32`` argument's value (module docstring): a Python ``float`` /
    ``int``, a numpy real scalar, a 0-d real array or a number string,
    rounded to ``f32`` (nearest even).  Raises :class:`InputError` naming
    ``name`` for anything else, a non-number string, or a finite value that
    overflows ``f32``."""
    v = value
    if isinstance(v, np.ndarray):
        if v.shape != ():
            raise InputError(f"scalar {name!r} (f32) needs one number, got an array of shape {_shape_str(v.shape)}")
        v = v[()]
    if isinstance(v, (str, bytes)):
        text = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        s = text.strip()
        try:
            x = _number(s)
        except ValueError:
            raise InputError(f"scalar {name!r} (f32) must be a number, got {text!r}") from None
        if math.isinf(x) and s.lower().lstrip("+-") not in ("inf", "infinity"):
            raise InputError(f"scalar {name!r}: {s} does not fit f32 (largest finite {_F32_MAX!r})")
    elif isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise InputError(f"scalar {name!r} (f32) must be a number, got {_given(v)}")
    else:
        try:
            x = float(v)
        except OverflowError:  # a Python int beyond float64
            raise InputError(f"scalar {name!r}: {v} does not fit f32 (largest finite {_F32_MAX!r})") from None
    if math.isfinite(x) and abs(x) > _F32_MAX:
        with np.errstate(over="ignore"):
            if math.isinf(float(np.float32(x))):
                raise InputError(f"scalar {name!r}: {x!r} does not fit f32 (largest finite {_F32_MAX!r})")
    if isinstance(v, np.float32):
        return v
    return np.float32(x)


# --------------------------------------------------------------------------
# Command-line specs and .npy files
# --------------------------------------------------------------------------


def parse_arg_specs(specs: Iterable[str]) -> dict[str, np.ndarray | str]:
    """``NAME=FILE.npy`` / ``NAME=VALUE`` specs (``--arg``) → ``{name:
    loaded array or value string}``, in order.  A spec whose right-hand side
    ends in ``.npy`` (any case), or that is not a number but names an
    existing file, is loaded with :func:`load_npy`; anything else stays a
    string for :func:`scalar_value`.  Raises
    :class:`InputError` for a spec without ``=`` or with an empty name or
    value, a name given twice, or an unreadable file."""
    out: dict[str, np.ndarray | str] = {}
    for spec in specs:
        name, eq, rhs = spec.partition("=")
        name = name.strip()
        if not eq or not name:
            raise InputError(f"--arg {spec!r}: expected NAME=FILE.npy or NAME=VALUE")
        if not rhs:
            raise InputError(f"--arg {spec!r}: nothing after '=' (expected NAME=FILE.npy or NAME=VALUE)")
        if name in out:
            raise InputError(f"--arg: {name!r} is given twice")
        out[name] = load_npy(name, rhs) if _names_a_file(rhs) else rhs
    return out


def _names_a_file(rhs: str) -> bool:
    """Whether ``--arg NAME=rhs`` names a file: it ends in ``.npy`` (any
    case), or it is not a number and a file or directory of that name
    exists (then :func:`load_npy` says what is wrong with it)."""
    if rhs.lower().endswith(".npy"):
        return True
    try:
        _number(rhs.strip())
        return False
    except ValueError:
        return os.path.lexists(rhs)


def load_npy(name: str, path: str | os.PathLike[str]) -> np.ndarray:
    """Read one ``.npy`` file (format versions 1-3) for tensor ``name``,
    never unpickling.  The header is parsed here (``ast.literal_eval``, as
    numpy does) so that the descriptor ``'<f1'``, which ``np.save`` writes
    for an ``ml_dtypes.float8_e5m2`` array and numpy itself cannot load, is
    read as raw ``|V1`` bytes (the tensor's type then says what they are).

    Returns the array (C or Fortran order as stored).  Raises
    :class:`InputError` (naming ``name`` and the file) for a missing or
    unreadable file, a file that is not ``.npy`` (an ``.npz`` archive,
    another format), a corrupt header, a truncated file (its header promises
    more data than the file holds; checked before anything is allocated),
    or object arrays (pickled data)."""
    where = f"tensor {name!r}: {os.fspath(path)!r}"
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if head[:4] == b"PK\x03\x04":
                raise InputError(f"{where} is an .npz archive, not an .npy file")
            if head[:6] != b"\x93NUMPY" or len(head) < 8:
                raise InputError(f"{where} is not an .npy file (it does not start with the .npy magic string)")
            shape, fortran, dtype = _npy_header(f, head[6], where)
            count = math.prod(shape)
            need = count * dtype.itemsize
            have = os.fstat(f.fileno()).st_size - f.tell()
            if have < need:
                raise InputError(f"{where} is truncated: its header promises {need} bytes of data, the file holds {have}")
            data = np.frombuffer(f.read(need), dtype=dtype, count=count) if need else np.empty(0, dtype)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(f"{where} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{where} is a directory, not an .npy file") from None
    except OSError as err:
        raise InputError(f"{where} cannot be read: {err.strerror or err}") from None
    return data.reshape(shape, order="F" if fortran else "C").copy(order="K")


_F1 = re.compile(r"^[<>|=]f1$")


def _npy_header(f: Any, major: int, where: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """``(shape, fortran_order, dtype)`` from the ``.npy`` header that
    follows the 8-byte magic and version.  Raises :class:`InputError`."""
    if major not in (1, 2, 3):
        raise InputError(f"{where} has .npy format version {major}, which this reader does not know (1 to 3)")
    size_bytes = f.read(2 if major == 1 else 4)
    hlen = int.from_bytes(size_bytes, "little")
    raw = f.read(hlen)
    if len(size_bytes) < (2 if major == 1 else 4) or len(raw) < hlen:
        raise InputError(f"{where} has a corrupt .npy header: the file ends inside it")
    try:
        d = ast.literal_eval(raw.decode("utf-8" if major == 3 else "latin1"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError, TypeError):
        raise InputError(f"{where} has a corrupt .npy header: it is not a Python literal") from None
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise InputError(f"{where} has a corrupt .npy header: expected the keys descr, fortran_order and shape")
    shape, fortran, descr = d["shape"], d["fortran_order"], d["descr"]
    if not (isinstance(shape, tuple) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)):
        raise InputError(f"{where} has a corrupt .npy header: shape {shape!r} is not a tuple of sizes")
    if not isinstance(fortran, bool):
        raise InputError(f"{where} has a corrupt .npy header: fortran_order {fortran!r} is not a bool")
    if isinstance(descr, str) and _F1.match(descr):
        dtype = np.dtype("V1")  # np.save of ml_dtypes.float8_e5m2
    else:
        try:
            dtype = np.lib.format.descr_to_dtype(descr)
        except (ValueError, TypeError, KeyError, IndexError):
            raise InputError(f"{where} has an unknown element type {descr!r}") from None
    if dtype.hasobject:
        raise InputError(f"{where} holds Python objects (pickled data), which are never loaded; save a numeric array")
    return shape, fortran, dtype


def check_names(tensors: Mapping[str, TensorSpec], scalars: Sequence[str], given: Iterable[str]) -> None:
    """Check the given names against a kernel's tensors and ``f32`` scalars:
    every one given exactly once and nothing else.  Raises
    :class:`InputError` listing the duplicated, missing (with their expected
    shape and type) and unknown names (with the kernel's names)."""
    given = list(given)
    seen: set[str] = set()
    dup: list[str] = []
    for g in given:
        if g in seen and g not in dup:
            dup.append(g)
        seen.add(g)
    known = list(tensors) + [s for s in scalars if s not in tensors]
    unknown = [g for g in dict.fromkeys(given) if g not in known]
    missing = [k for k in known if k not in seen]
    msgs = []
    if dup:
        msgs.append("given twice: " + ", ".join(repr(d) for d in dup))
    if missing:
        parts = [f"{k!r} (memref<{tensors[k].type_str}>)" if k in tensors else f"{k!r} (f32 scalar)" for k in missing]
        msgs.append("missing: " + ", ".join(parts))
    if unknown:
        msgs.append(
            "unknown: " + ", ".join(repr(u) for u in unknown) + "; the kernel's inputs are " + (", ".join(known) or "none")
        )
    if msgs:
        raise InputError("; ".join(msgs))


# --------------------------------------------------------------------------
# DM layout
# --------------------------------------------------------------------------


def _contiguous(spec: TensorSpec) -> bool:
    return all(s == r for s, r, n in zip(spec.strides, _row_major(spec.shape), spec.shape) if n > 1)  # type: ignore[arg-type]


def _addresses(spec: TensorSpec, lo: int, hi: int) -> np.ndarray:
    """Element addresses (``int64``) of the tensor's row-major flat elements
    ``lo .. hi-1``."""
    idx = np.unravel_index(np.arange(lo, hi, dtype=np.int64), spec.shape)
    out = np.full(hi - lo, spec.offset, dtype=np.int64)
    for i, s in zip(idx, spec.strides):  # type: ignore[arg-type]
        if s:
            out += i.astype(np.int64) * np.int64(s)
    return out


def packed_bytes(spec: TensorSpec, value: Any) -> np.ndarray | None:
    """When ``value`` is a 4-bit tensor's packed form (``uint8``, the memref's
    shape with the last dim halved, element ``2i`` in the low nibble) and
    the tensor's layout is row-major and contiguous: its bytes, 1-D, as DM
    holds them (a view when possible).  Else ``None``.  Raises nothing."""
    shape = spec.shape
    if not (spec.elem.is_subbyte and isinstance(value, np.ndarray) and value.dtype == np.uint8):
        return None
    if not shape or shape[-1] % 2 or value.shape != shape[:-1] + (shape[-1] // 2,) or value.shape == shape:
        return None
    if not _contiguous(spec) or spec.address_range()[0] % 2:
        return None
    return np.ascontiguousarray(value).reshape(-1)


def place(image: np.ndarray, spec: TensorSpec, values: Any) -> None:
    """Write a tensor into the DM image in place: ``values`` in any accepted
    form (:func:`canonical_values`), laid out by ``spec``'s layout at byte
    ``spec.dm_base`` (module docstring).  ``image``: a writable 1-D ``uint8``
    array, address 0 = its first byte.

    Raises :class:`InputError` for bad values, an unplaced tensor, or bytes
    outside the image (naming the tensor, its byte range and the image
    size)."""
    if not (isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 1):
        raise TypeError("the DM image must be a 1-D uint8 array")
    raw = packed_bytes(spec, values)
    canon = canonical_values(spec, values) if raw is None else None
    if spec.dm_base is None:
        raise InputError(f"{_who(spec)} has no DM address (it was not placed)")
    base = spec.dm_base
    blo, bhi = spec.byte_range()
    if spec.size == 0:
        return
    if base + blo < 0 or base + bhi > image.size:
        raise InputError(
            f"{_who(spec)} occupies DM bytes [{base + blo}, {base + bhi}), outside the {image.size}-byte DM image"
        )
    e = spec.elem
    alo, _ = spec.address_range()
    if _contiguous(spec) and not (e.is_subbyte and (alo % 2 or spec.size % 2)):
        start = base + (alo // 2 if e.is_subbyte else alo * (e.bits // 8))
        if raw is not None:  # the checkpoint's packed bytes are already the DM bytes
            image[start : start + raw.size] = raw
        elif e.is_subbyte or sys.byteorder != "little":
            packed = pack_elements(canon, e)
            image[start : start + packed.size] = packed
        else:
            flat = np.ascontiguousarray(canon).reshape(-1).view(np.uint8)
            image[start : start + flat.size] = flat
        return
    if canon is None:
        canon = canonical_values(spec, values)
    flat = np.ascontiguousarray(canon).reshape(-1)
    for lo in range(0, flat.size, PLACE_CHUNK):
        hi = min(flat.size, lo + PLACE_CHUNK)
        addr = _addresses(spec, lo, hi)
        vals = flat[lo:hi]
        if e.is_subbyte:
            codes = vals.view(np.uint8) & np.uint8(0x0F)
            byte = base + (addr >> 1)
            odd = (addr & 1).astype(bool)
            image[byte[~odd]] = (image[byte[~odd]] & np.uint8(0xF0)) | codes[~odd]
            image[byte[odd]] = (image[byte[odd]] & np.uint8(0x0F)) | (codes[odd] << np.uint8(4))
        else:
            size = e.bits // 8
            raw = vals.view(np.uint8).reshape(-1, size)
            image[(base + addr * size)[:, None] + np.arange(size)] = raw


def dm_image(tensors: Sequence[tuple[TensorSpec, Any]], size: int | None = None) -> np.ndarray:
    """The one builder of DM images (``fetchc run``, ``fetchc sim --arg``,
    the tests): a zeroed image with every ``(spec, values)`` written at its
    placement (:func:`place`, in order: a later tensor overwrites an earlier
    one where explicit placements alias).  ``values`` ``None`` leaves the
    tensor's bytes zero (an output, a scratch buffer) but still counts for the
    size.  ``size``: the image size in bytes; default just past the last byte
    of any tensor.  Returns a new 1-D ``uint8`` array.  Raises
    :class:`InputError` as :func:`place` does."""
    if size is None:
        size = image_size(spec for spec, _ in tensors)
    image = np.zeros(size, dtype=np.uint8)
    for spec, values in tensors:
        if values is not None:
            place(image, spec, values)
    return image


def image_size(specs: Iterable[TensorSpec]) -> int:
    """Bytes from DM address 0 to one past the last byte of any of
    ``specs``.  Raises :class:`InputError` for an unplaced tensor."""
    size = 0
    for spec in specs:
        if spec.dm_base is None:
            raise InputError(f"tensor {spec.name!r} has no DM address (it was not placed)")
        size = max(size, spec.dm_base + spec.byte_range()[1])
    return size
