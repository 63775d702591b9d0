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
  (``np.load`` gives them back as raw void items, and the file does not say
  which ``ml_dtypes`` type wrote them): raw bits, read as the memref's type
  like ``uint8`` bits (for 4-bit types the byte must hold one code, 0-15).
  An ``ml_dtypes`` array of another type in memory (``float8_e5m2``, or
  ``float8_e4m3fn`` and ``int4``, whose numpy kind is void too) or an
  ``.npy`` file of ``float8_e5m2`` (descriptor ``'<f1'``) given for a
  tensor of another type is a type error naming its dtype, never read as
  bits;
* 4-bit tensors (``i4``, ``f4E2M1FN``): one code per element, ``uint8``
  0-15 (for ``i4`` also ``int8`` -8..7), **or** packed two per byte as
  checkpoints store them: ``uint8`` with the last dim halved (an even last
  dim), element ``2i`` in the low nibble;
* big-endian variants of these dtypes (e.g. ``>f4``) are byte-swapped.

Anything else is an :class:`InputError` naming the tensor, the expected
shape and type, the accepted forms and what was given.  Nothing is ever
converted by value (a ``float64`` array for an ``f32`` tensor is an error,
not a silent rounding).

Scalars (``f32`` arguments, :func:`scalar_value`), one rule: a number is a
value, an array is data.

* A number (a Python ``float`` or ``int``, a numpy scalar such as
  ``np.float32(0.5)`` or ``np.int16(-2)``) or a number's text is taken by
  value and rounded to ``f32`` to nearest even; a finite value beyond
  ``f32``'s range is an error.  The text is ASCII (:data:`NUMBER_SYNTAX`): a
  decimal (``"0.5"``, ``"-1e-3"``), ``inf``, ``infinity``, ``nan``, or a hex
  float (``"0x1.8p-3"``); not ``1_000``, not ``١٢٣`` or other non-ASCII
  digits, which Python's ``float()`` would take.
* An array (a 0-d ``ndarray``, and every ``.npy`` file given for a scalar)
  is read as an ``f32`` tensor of shape ``()`` is: ``float32`` is the value,
  ``uint32`` or ``|V4`` the raw bits (``0x3F800000`` is 1.0); any other
  dtype is an error, never converted by value.

Command-line specs (:func:`parse_arg_specs`): ``NAME=FILE.npy`` opens a
``.npy`` file (:mod:`fetchc.npyio`: its header is read and checked, its data
is read later, by :func:`read_files`, once the shape and type are known to
fit the tensor and the size the memory budget); ``NAME=VALUE`` is a
scalar's value.  A missing, unreadable, truncated, pickled or non-``.npy``
file, a header out of bounds, an element type that is not a number, is an
:class:`InputError`.  :func:`check_names` reports missing, unknown and
duplicated names.

Layout (:func:`place`, :func:`dm_image`): element ``(i_0, ..., i_{r-1})`` of
a tensor sits at element address ``offset + Σ i_k·stride_k`` from the
tensor's DM byte address ``dm_base`` (hardware.md §3, ir.md §2a), bytes
little-endian, 4-bit elements two per byte with element address ``2j`` in the
low nibble of byte ``dm_base + j`` (:func:`fetchc.target.encoding.pack_elements`).
Writing a 4-bit element keeps the other nibble of its byte.

This module imports numpy and ml_dtypes; the compile path never imports it.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from fetchc.npyio import NpyError, NpyFile, open_npy
from fetchc.target.encoding import UINT, pack_elements
from fetchc.target.facts import F32, I4, ElementType
from fetchc.wording import a_or_an

__all__ = [
    "NUMBER_SYNTAX",
    "InputError",
    "TensorSpec",
    "canonical_values",
    "check_names",
    "check_value",
    "dm_image",
    "file_bytes",
    "image_size",
    "load_npy",
    "open_arg_file",
    "packed_bytes",
    "parse_arg_specs",
    "place",
    "place_slices",
    "read_files",
    "scalar_value",
    "shared_bytes",
    "slice_images",
    "split_slices",
    "whole_spec",
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
        strides = _strides(self)
        if len(strides) != len(self.shape):
            raise ValueError(f"tensor {self.name!r}: {len(strides)} strides for a rank-{len(self.shape)} shape")

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
        strides = _strides(self)
        lo = self.offset + sum((n - 1) * s for n, s in zip(self.shape, strides, strict=True) if s < 0)
        hi = self.offset + sum((n - 1) * s for n, s in zip(self.shape, strides, strict=True) if s > 0)
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
    return a_or_an(type(a).__name__)


def _dtype_name(dt: np.dtype) -> str:
    """A dtype as the user knows it: ``float8_e4m3fn``, ``bfloat16`` for an
    ``ml_dtypes`` type (whose ``str`` is ``<V1``), ``|V1`` for raw void
    items (``np.save`` of such an array), ``>f4`` for a foreign byte
    order, else numpy's name."""
    if _is_raw_void(dt):
        return dt.str  # '|V1'
    if dt.kind == "V" or _is_ml_dtype(dt):
        return dt.name
    return str(dt) if dt.isnative else dt.str


def _is_raw_void(dt: np.dtype) -> bool:
    """Void items whose type is lost (``np.save`` of an ``ml_dtypes`` array
    reads back as ``|V1``): raw bits.  An ``ml_dtypes`` array in memory
    (``float8_e4m3fn``: kind ``V`` too) has a type, and is not."""
    return dt.kind == "V" and dt.type is np.void


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
            packed = _shape_str(spec.shape[:-1] + (spec.shape[-1] // 2,))
            hint = f"; a packed array (two codes per byte) has shape {packed}"
        raise InputError(f"{_who(spec)}: {what} must lie in [{lo}, {hi}], but element {i} is {int(a[i])}{hint}")


def _native(dt: np.dtype) -> np.dtype:
    return dt.newbyteorder("=") if dt.kind in "biuf" and not dt.isnative else dt


def _form(spec: TensorSpec, shape: tuple[int, ...], dt: np.dtype) -> str | None:
    """Which accepted form (module docstring) an array of ``shape`` and
    ``dt`` is for ``spec``: ``"own"``, ``"bits"`` (raw bits or ``|V``
    items), ``"codes"`` (4-bit codes one per element), ``"packed"`` (two
    per byte), ``"int8"`` (``i4`` values); None when it is none of them.
    Only the shape and type are looked at, never the data."""
    e, want = spec.elem, spec.shape
    own = np.dtype(e.np_dtype)
    dt = _native(dt)
    if e.is_subbyte:
        if dt == own:
            return "own" if shape == want else None
        if dt == np.uint8 or (_is_raw_void(dt) and dt.itemsize == 1):
            if shape == want:
                return "codes"
            halved = want[:-1] + (want[-1] // 2,) if want and want[-1] % 2 == 0 else None
            return "packed" if dt == np.uint8 and shape == halved else None
        return "int8" if dt == np.int8 and e == I4 and shape == want else None
    if shape != want:
        return None
    if dt == own:
        return "own"
    if dt == np.dtype(UINT[own.itemsize]) or (_is_raw_void(dt) and dt.itemsize == own.itemsize and _is_ml_dtype(own)):
        return "bits"
    return None


def _wrong(spec: TensorSpec, given: str, dt: np.dtype) -> InputError:
    hint = ""
    if dt.kind == "f" and spec.elem == F32 and _native(dt) != np.dtype(np.float32):
        hint = " (convert with .astype(numpy.float32) if rounding is intended)"
    return InputError(f"{_who(spec)}: expected {_expected(spec)}; got {given}{hint}")


def check_file(spec: TensorSpec, f: NpyFile) -> None:
    """Check an ``.npy`` file's header against ``spec``'s accepted forms
    (shape and element type; the data is not read).  Raises
    :class:`InputError` naming the tensor and the file."""
    if _form(spec, f.shape, f.dtype) is None:
        given = f"{f.where}, an array of shape {_shape_str(f.shape)} and dtype {_dtype_name(f.dtype)}"
        raise _wrong(spec, given, f.dtype)


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
    form = _form(spec, value.shape, value.dtype)
    if form is None:
        raise _wrong(spec, _given(value), value.dtype)
    a = value.astype(_native(value.dtype)) if _native(value.dtype) != value.dtype else value
    if form == "own":
        return a
    if form == "bits":
        return a.view(own)
    if form == "int8":
        _codes(spec, a, -8, 7, "i4 values")
        return a.astype(own)
    u = a.view(np.uint8)
    if form == "codes":
        _codes(spec, u, 0, 15, "4-bit codes")
        return u.view(own)
    codes = np.empty(spec.shape, dtype=np.uint8)  # packed: element 2i in the low nibble
    codes[..., 0::2] = u & np.uint8(0x0F)
    codes[..., 1::2] = u >> np.uint8(4)
    return codes.view(own)


# --------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------

_F32_MAX = float(np.finfo(np.float32).max)

NUMBER_SYNTAX = re.compile(
    r"[+-]?(?:"
    r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"  # decimal
    r"|0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"  # hex float
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN]"
    r")",
    re.ASCII,
)
"""What a scalar's text may be (ASCII only; no ``_`` separators)."""
_ASCII_SPACE = " \t\n\r\f\v"


def _number(s: str) -> float:
    """A scalar's text as a float (:data:`NUMBER_SYNTAX`, surrounding ASCII
    white space ignored).  Raises ``ValueError`` for anything else."""
    t = s.strip(_ASCII_SPACE)
    if NUMBER_SYNTAX.fullmatch(t) is None:
        raise ValueError(t)
    return float.fromhex(t) if "x" in t.lower() else float(t)


def _scalar_array(name: str, v: np.ndarray) -> np.float32:
    """A scalar given as an array: an ``f32`` tensor of shape ``()``."""
    if v.shape != ():
        raise InputError(f"scalar {name!r} (f32) needs one number, got an array of shape {_shape_str(v.shape)}")
    dt = _native(v.dtype)
    if dt == np.dtype(np.float32):
        return np.float32(v.astype(dt)[()])
    if dt == np.dtype(np.uint32) or (_is_raw_void(dt) and dt.itemsize == 4):
        return cast(np.float32, np.array(v.astype(dt) if dt.kind != "V" else v).view(np.float32)[()])
    raise InputError(
        f"scalar {name!r} (f32) given as an array of dtype {_dtype_name(v.dtype)}: an array is read as an f32 "
        "tensor of shape () is, float32 (the value) or uint32 (its raw bits); nothing is converted by value "
        "(save numpy.float32(x), or give the number itself)"
    )


def scalar_value(name: str, value: Any) -> np.float32:
    """An ``f32`` argument's value (module docstring: a number, a number's
    text, or an array of shape ``()``), rounded to ``f32`` (nearest even)
    where it is a number.  Raises :class:`InputError` naming ``name`` for
    anything else, a text that is not :data:`NUMBER_SYNTAX`, an array of
    another shape or dtype, or a finite value that overflows ``f32``."""
    v = value
    if isinstance(v, np.ndarray):
        return _scalar_array(name, v)
    if isinstance(v, (str, bytes)):
        text = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        try:
            x = _number(text)
        except ValueError:
            raise InputError(
                f"scalar {name!r} (f32) must be a number, got {text!r} (a decimal, inf, nan or a hex float such "
                "as 0x1p-3, in ASCII digits without '_')"
            ) from None
        s = text.strip(_ASCII_SPACE)
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


def parse_arg_specs(specs: Iterable[str]) -> dict[str, NpyFile | str]:
    """``NAME=FILE.npy`` / ``NAME=VALUE`` specs (``--arg``) → ``{name:
    NpyFile or value string}``, in order.  A spec whose right-hand side ends
    in ``.npy`` (any case), or that is not a number (:data:`NUMBER_SYNTAX`)
    but names an existing file, is opened with :func:`open_arg_file` (the
    header only: :func:`read_files` reads the data); anything else stays a
    string for :func:`scalar_value`.  Raises :class:`InputError` for a spec
    without ``=`` or with an empty name or value, a name given twice, or a
    file that is not a readable ``.npy`` file of numbers."""
    out: dict[str, NpyFile | str] = {}
    for spec in specs:
        name, eq, rhs = spec.partition("=")
        name = name.strip()
        if not eq or not name:
            raise InputError(f"--arg {spec!r}: expected NAME=FILE.npy or NAME=VALUE")
        if not rhs:
            raise InputError(f"--arg {spec!r}: nothing after '=' (expected NAME=FILE.npy or NAME=VALUE)")
        if name in out:
            raise InputError(f"--arg: {name!r} is given twice")
        out[name] = open_arg_file(name, rhs) if _names_a_file(rhs) else rhs
    return out


def _names_a_file(rhs: str) -> bool:
    """Whether ``--arg NAME=rhs`` names a file: it ends in ``.npy`` (any
    case), or it is not a number and a file or directory of that name
    exists (then :func:`open_arg_file` says what is wrong with it)."""
    if rhs.lower().endswith(".npy"):
        return True
    try:
        _number(rhs)
        return False
    except ValueError:
        return os.path.lexists(rhs)


def open_arg_file(name: str, path: str | os.PathLike[str]) -> NpyFile:
    """The checked header of the ``.npy`` file for input ``name``
    (:func:`fetchc.npyio.open_npy`).  Raises :class:`InputError` naming
    ``name`` and the file: missing, unreadable, not ``.npy``, a header out
    of bounds, truncated, not numbers."""
    where = f"tensor {name!r}: {os.fspath(path)!r}"
    try:
        return open_npy(path)
    except NpyError as err:
        raise InputError(f"tensor {name!r}: {err}") from None
    except FileNotFoundError:
        raise InputError(f"{where} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{where} is a directory, not an .npy file") from None
    except OSError as err:
        raise InputError(f"{where} cannot be read: {err.strerror or err}") from None


def load_npy(name: str, path: str | os.PathLike[str], max_bytes: int | None = None) -> np.ndarray:
    """Read one whole ``.npy`` file for input ``name``
    (:mod:`fetchc.npyio`; never unpickling; ``'<f1'`` is
    ``ml_dtypes.float8_e5m2``).  Returns the array (C or Fortran order as
    stored).  Raises :class:`InputError` as :func:`open_arg_file` does, and
    when the data is more than ``max_bytes``."""
    f = open_arg_file(name, path)
    return _read(name, f, max_bytes)


def _read(name: str, f: NpyFile, max_bytes: int | None) -> np.ndarray:
    try:
        return f.read(max_bytes)
    except NpyError as err:
        raise InputError(f"tensor {name!r}: {err}") from None
    except OSError as err:
        raise InputError(f"tensor {name!r}: {f.where} cannot be read: {err.strerror or err}") from None


def file_bytes(values: Mapping[str, Any], tensors: Mapping[str, TensorSpec]) -> int:
    """Check every ``.npy`` file of ``values`` against what it is given for
    (a tensor of ``tensors``: :func:`check_file`; any other name: a scalar,
    shape ``()``), from its header alone, and return the memory reading them
    takes: each file's data, plus the canonical array of a tensor when it
    must be converted (4-bit codes unpacked, bytes swapped).  Raises
    :class:`InputError`."""
    total = 0
    for name, value in values.items():
        if not isinstance(value, NpyFile):
            continue
        spec = tensors.get(name)
        if spec is None:
            if value.shape != ():
                raise InputError(
                    f"scalar {name!r} (f32) needs one number, got {value.where}, an array of shape "
                    f"{_shape_str(value.shape)}"
                )
            total += value.nbytes
            continue
        check_file(spec, value)
        total += value.nbytes
        if _form(spec, value.shape, value.dtype) in ("packed", "int8") or not value.dtype.isnative:
            total += spec.size * np.dtype(spec.elem.np_dtype).itemsize
    return total


def read_files(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with every :class:`~fetchc.npyio.NpyFile` replaced by its
    array (call :func:`file_bytes` and check the memory budget first).
    Raises :class:`InputError` for a file that cannot be read (or changed
    since its header was read)."""
    return {k: _read(k, v, None) if isinstance(v, NpyFile) else v for k, v in values.items()}


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
            "unknown: "
            + ", ".join(repr(u) for u in unknown)
            + "; the kernel's inputs are "
            + (", ".join(known) or "none")
        )
    if msgs:
        raise InputError("; ".join(msgs))


# --------------------------------------------------------------------------
# DM layout
# --------------------------------------------------------------------------


def _strides(spec: TensorSpec) -> tuple[int, ...]:
    """``spec.strides``, which ``TensorSpec.__post_init__`` always sets."""
    assert spec.strides is not None
    return spec.strides


def _contiguous(spec: TensorSpec) -> bool:
    return all(s == r for s, r, n in zip(_strides(spec), _row_major(spec.shape), spec.shape, strict=True) if n > 1)


def _addresses(spec: TensorSpec, lo: int, hi: int) -> np.ndarray:
    """Element addresses (``int64``) of the tensor's row-major flat elements
    ``lo .. hi-1``."""
    idx = np.unravel_index(np.arange(lo, hi, dtype=np.int64), spec.shape)
    out = np.full(hi - lo, spec.offset, dtype=np.int64)
    for i, s in zip(idx, _strides(spec), strict=True):
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
            return
        assert canon is not None  # computed when there are no packed bytes
        if e.is_subbyte or sys.byteorder != "little":
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


def whole_spec(spec: TensorSpec, slices: int, slice_dim: int | None) -> TensorSpec:
    """The spec of the whole tensor of a kernel on ``slices`` slices (ir.md
    §2a): ``spec`` (one slice's part) with dimension ``slice_dim`` times
    ``slices``, row-major; ``spec`` itself when replicated (``slice_dim``
    ``None``).  What users give and ``fetchc run`` returns."""
    if slice_dim is None:
        return spec
    shape = spec.shape[:slice_dim] + (spec.shape[slice_dim] * slices,) + spec.shape[slice_dim + 1 :]
    return TensorSpec(spec.name, spec.elem, shape)


def check_value(spec: TensorSpec, value: Any) -> None:
    """Raise :class:`InputError` unless ``value`` is an accepted form of
    ``spec`` (:func:`canonical_values`, or packed 4-bit bytes), without
    converting a packed array."""
    if packed_bytes(spec, value) is None:
        canonical_values(spec, value)


def split_slices(spec: TensorSpec, value: Any, slices: int, slice_dim: int | None) -> np.ndarray:
    """A whole tensor (any form :func:`canonical_values` accepts for
    :func:`whole_spec`) as the stack of its ``slices`` parts, ``(slices,) +``
    the part's shape (ir.md §2a: slice ``s`` holds indices ``[s·n, (s+1)·n)``
    of dimension ``slice_dim``, ``n = spec.shape[slice_dim]``; a replicated
    tensor's value repeated, as a broadcast view).  A packed 4-bit array
    split along a dimension other than the last stays packed (``uint8``, the
    last dim halved); anything else comes back canonical.  Raises
    :class:`InputError` as :func:`canonical_values` does."""
    whole = whole_spec(spec, slices, slice_dim)
    raw = None
    if slice_dim is None or slice_dim < len(spec.shape) - 1:
        raw = value if packed_bytes(whole, value) is not None else None
    a = np.asarray(raw) if raw is not None else canonical_values(whole, value)
    if slice_dim is None:
        return np.broadcast_to(a, (slices,) + a.shape)
    d, n = slice_dim, spec.shape[slice_dim]
    parts = a.reshape(a.shape[:d] + (slices, n) + a.shape[d + 1 :])
    return np.moveaxis(parts, d, 0)


def place_slices(image: np.ndarray, spec: TensorSpec, stack: np.ndarray) -> None:
    """Write every slice's part of a tensor into its slice's DM image:
    ``image`` ``(slices, bytes)`` ``uint8`` (row ``s`` = slice ``s``'s DM),
    ``stack`` ``(slices,) + part`` from :func:`split_slices`.  A contiguous
    layout is written for all slices at once; a strided one slice by slice
    (:func:`place`).  Raises :class:`InputError` as :func:`place` does."""
    if not (isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 2):
        raise TypeError("the slices' DM images must be a 2-D uint8 array")
    e = spec.elem
    alo, _ = spec.address_range()
    fast = spec.size and _contiguous(spec) and not (e.is_subbyte and (alo % 2 or spec.size % 2))
    if not fast or spec.dm_base is None or stack.shape[0] == 1:
        for s in range(stack.shape[0]):
            place(image[s], spec, stack[s])
        return
    base = spec.dm_base
    blo, bhi = spec.byte_range()
    if base + blo < 0 or base + bhi > image.shape[1]:
        raise InputError(
            f"{_who(spec)} occupies DM bytes [{base + blo}, {base + bhi}), outside the {image.shape[1]}-byte DM image"
        )
    start = base + (alo // 2 if e.is_subbyte else alo * (e.bits // 8))
    slices = stack.shape[0]
    if stack.dtype == np.uint8 and e.is_subbyte and stack.shape[1:] != spec.shape:  # packed bytes
        data = stack.reshape(slices, -1)
    elif stack.dtype == np.uint8 and e.is_subbyte:  # one 4-bit code per byte (the sim encoding)
        data = pack_elements(np.ascontiguousarray(stack).view(e.np_dtype).reshape(slices, -1), e).reshape(slices, -1)
    elif e.is_subbyte or sys.byteorder != "little":
        data = pack_elements(np.ascontiguousarray(stack).reshape(slices, -1), e).reshape(slices, -1)
    else:
        data = np.ascontiguousarray(stack).reshape(slices, -1).view(np.uint8)
    image[:, start : start + data.shape[1]] = data


def dm_image(tensors: Sequence[tuple[TensorSpec, Any]], size: int | None = None) -> np.ndarray:
    """The one builder of DM images (``fetchc run``, ``fetchc sim --arg``,
    the tests): a zeroed image with every ``(spec, values)`` written at its
    placement (:func:`place`).  Explicit placements may alias (views of one
    buffer, ir.md §2a): two given tensors that share DM bits must give them
    the same values (:func:`slice_images`).  ``values`` ``None`` leaves the
    tensor's bytes zero (an output, a scratch buffer) but still counts for the
    size.  ``size``: the image size in bytes; default just past the last byte
    of any tensor.  Returns a new 1-D ``uint8`` array.  Raises
    :class:`InputError` as :func:`place` does, and for aliased tensors whose
    values disagree."""
    return slice_images(tensors, 1, size).reshape(-1)


ALIAS_CHECK_BYTES = 16 << 20
"""The most image bytes copied at a time to compare aliased tensors
(:func:`slice_images`): the slices are checked a group at a time."""


def slice_images(
    tensors: Sequence[tuple[TensorSpec, Any]], slices: int, size: int | None = None,
    slice_dims: Sequence[int | None] | None = None,
) -> np.ndarray:  # fmt: skip
    """The DM images of ``slices`` slices, ``(slices, size)`` ``uint8``:
    :func:`dm_image` for each slice, the whole tensors in ``tensors`` split
    (:func:`split_slices`, ``slice_dims[i]`` for tensor ``i``; default all
    replicated) and written at the same placement in every slice
    (:func:`place_slices`).  ``size`` defaults to just past the last byte of
    any tensor, rounded up to 8 bytes when ``slices > 1``.

    Tensors with values whose placements share DM bits (explicit
    ``rngd.dm_base`` addresses that alias; a 4-bit tensor shares a byte with
    another only where their nibbles meet) must give those bits the same
    values in every slice: otherwise :class:`InputError` names both tensors,
    the bytes they share and the first byte that differs (no tensor silently
    overwrites another).  Raises :class:`InputError` as :func:`place` does."""
    if size is None:
        size = image_size(spec for spec, _ in tensors)
        if slices > 1:
            size = -(-size // 8) * 8
    image = np.zeros((slices, size), dtype=np.uint8)
    given: list[tuple[TensorSpec, tuple[int, int] | None]] = []
    for i, (spec, values) in enumerate(tensors):
        if values is None:
            continue
        d = None if slice_dims is None else slice_dims[i]
        extent = _extent(spec)
        earlier = [
            t for t, e in given if extent is not None and e is not None and e[0] < extent[1] and extent[0] < e[1]
        ]
        if earlier:
            _place_agreeing(image, spec, split_slices(spec, values, slices, d), earlier)
        elif slices == 1 and d is None:
            place(image[0], spec, values)
        else:
            place_slices(image, spec, split_slices(spec, values, slices, d))
        given.append((spec, extent))
    return image


def _extent(spec: TensorSpec) -> tuple[int, int] | None:
    """The DM bytes ``[lo, hi)`` a placed, non-empty tensor spans, else None."""
    if spec.dm_base is None or spec.size == 0:
        return None
    lo, hi = spec.byte_range()
    return spec.dm_base + lo, spec.dm_base + hi


def _bit_mask(spec: TensorSpec, width: int) -> np.ndarray:
    """A ``width``-byte image holding, in every byte, the bits ``spec``'s
    placement writes (``0xFF`` for whole elements; ``0x0F`` / ``0xF0`` for
    one 4-bit element)."""
    mask = np.zeros(width, dtype=np.uint8)
    if spec.elem.is_subbyte:
        place(mask, spec, np.full(spec.shape, 15, dtype=np.uint8))  # 4-bit codes, all ones
    else:
        raw = np.dtype(UINT[spec.elem.bits // 8])
        place(mask, spec, np.full(spec.shape, np.iinfo(raw).max, dtype=raw))  # raw bits, all ones
    return mask


def _place_agreeing(image: np.ndarray, spec: TensorSpec, stack: np.ndarray, earlier: Sequence[TensorSpec]) -> None:
    """:func:`place_slices`, for a tensor whose bytes may alias those of the
    ``earlier`` given tensors: raise :class:`InputError` where a bit both
    place differs (the image holds the earlier tensors' values there)."""
    width = image.shape[1]
    mine = _bit_mask(spec, width)
    covered = np.zeros(width, dtype=np.uint8)
    for t in earlier:
        covered |= _bit_mask(t, width)
    shared = covered & mine
    nz = np.flatnonzero(shared)
    if nz.size == 0:  # interleaved layouts, or nibbles of the same bytes that never meet
        place_slices(image, spec, stack)
        return
    lo, hi = int(nz[0]), int(nz[-1]) + 1
    step = max(1, ALIAS_CHECK_BYTES // (hi - lo))
    for s0 in range(0, image.shape[0], step):
        s1 = min(image.shape[0], s0 + step)
        before = image[s0:s1, lo:hi].copy()
        place_slices(image[s0:s1], spec, stack[s0:s1])
        diff = (before ^ image[s0:s1, lo:hi]) & shared[lo:hi]
        if diff.any():
            s, b = (int(j) for j in np.unravel_index(int(np.flatnonzero(diff)[0]), diff.shape))
            bits = shared[lo + b]
            old, new = int(before[s, b] & bits), int(image[s0 + s, lo + b] & bits)
            raise _alias_error(spec, earlier, width, lo + b, bits, s0 + s if image.shape[0] > 1 else None, old, new)


def shared_bytes(a: TensorSpec, b: TensorSpec, within: tuple[int, int] | None = None) -> tuple[int, int, int] | None:
    """The DM bytes whose bits both placements hold (explicit placements
    that alias, ir.md §2a; a 4-bit tensor shares a byte with another only
    where their nibbles meet), within ``within`` (``[lo, hi)``) when given:
    ``(first, one past the last, how many)``, or ``None`` when they share
    none.  Addresses are one slice's (the placement of every slice)."""
    ea, eb = _extent(a), _extent(b)
    if ea is None or eb is None or not (ea[0] < eb[1] and eb[0] < ea[1]):
        return None
    width = max(ea[1], eb[1])
    both = _bit_mask(a, width) & _bit_mask(b, width)
    if within is not None:
        both[: max(0, within[0])] = 0
        both[max(0, within[1]) :] = 0
    nz = np.flatnonzero(both)
    if nz.size == 0:
        return None
    return int(nz[0]), int(nz[-1]) + 1, int(nz.size)


def _alias_error(
    spec: TensorSpec, earlier: Sequence[TensorSpec], width: int, addr: int, bits: int, slice_: int | None,
    old: int, new: int,
) -> InputError:  # fmt: skip
    """The error for aliased tensors that disagree at byte ``addr``."""
    other = next(t for t in earlier if _bit_mask(t, width)[addr] & bits)
    shared = shared_bytes(other, spec)
    assert shared is not None  # they differ at a shared byte
    where = f"DM byte {addr}" + (f" of slice {slice_}" if slice_ is not None else "")
    part = "" if bits == 0xFF else f" (the bits 0x{bits:02x} both write)"
    return InputError(
        f"tensors {other.name!r} and {spec.name!r} share DM bytes [{shared[0]}, {shared[1]}) (their "
        f"placements alias: views of one buffer), but the values given for them differ there: {where} is "
        f"0x{old:02x} in {other.name!r} and 0x{new:02x} in {spec.name!r}{part}; give values that agree on the "
        "shared bytes"
    )


def image_size(specs: Iterable[TensorSpec]) -> int:
    """Bytes from DM address 0 to one past the last byte of any of
    ``specs``.  Raises :class:`InputError` for an unplaced tensor."""
    size = 0
    for spec in specs:
        if spec.dm_base is None:
            raise InputError(f"tensor {spec.name!r} has no DM address (it was not placed)")
        size = max(size, spec.dm_base + spec.byte_range()[1])
    return size
