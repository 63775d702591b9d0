"""The ``seq.bin`` MANIFEST (seqbin.md "MANIFEST", version 1.2): what each
kernel's programs read, where the tensors live in DM, and in which shape.

The content model (frozen dataclasses, tuples, so equal content compares
equal)::

    Manifest(kernels=(Kernel, ...), producer="fetchc 0.1.0")
    Kernel(name, tensors=(Tensor, ...), scalars=(Scalar, ...), programs=(KernelProgram, ...), slices=1)
    Tensor(arg, name, dtype, shape, strides, offset, dm_base, bytes, read, committed, scratch=False,
           slice_dim=None)
    Scalar(arg, name, dtype)
    KernelProgram(index, tensor, time, packet, out_dtype, loc)

Units: ``shape``, ``strides``, ``offset``, ``time``, ``packet`` in elements;
``dm_base`` (the DM byte address of the tensor's layout element 0, ir.md
§2a) and ``bytes`` (from its lowest to its highest byte; 4-bit types two per
byte, rounded up) in bytes.  ``Tensor.arg`` is the kernel argument index, or
``None`` for a compiler-owned ``scratch`` tensor; ``KernelProgram.index``
indexes PROGRAMS, ``.tensor`` the kernel's ``tensors``.  ``Kernel.slices``
(1.2) is the kernel's ``rngd.slices`` (1 to 512); ``Tensor.slice_dim`` (1.2)
its ``rngd.slice_dim`` or ``None`` when replicated; ``shape``, ``strides``,
``dm_base`` and ``bytes`` are one slice's (:meth:`Tensor.whole_shape` gives the
whole tensor's).  Both are always written; a 1.1 document without them reads
as one slice, every tensor replicated.

* :meth:`Manifest.to_bytes`: the canonical JSON (keys sorted, separators
  ``,`` and ``:``, no spaces, no trailing newline, UTF-8 text not escaped);
  ``scratch`` is written only when true.
* :meth:`Manifest.from_bytes`: parse and check the document's shape (valid
  UTF-8 JSON, exactly these keys, value types, element type names, tensor
  and scalar arguments in increasing order, names unique in a kernel).
* :meth:`Manifest.check_shape`: the same checks on a model built in memory.
* :meth:`Manifest.check`: indices in range and programs agreeing with their
  PROGRAMS records (element types, packet size, element count
  ``prod(time) * prod(packet) == prod(limits)``, each record in exactly one
  kernel, a tensor's ``read`` flag equal to whether a program reads it),
  each tensor's ``bytes`` equal to the span of its shape and layout and
  lying in one slice's DM, and each record's base and extent inside its
  tensor's bytes at its placement (a file whose program reads elsewhere
  than the MANIFEST says would make ``sim --arg`` read the wrong bytes).

Errors are :class:`ManifestError` ``(where, message)``: ``where`` is the
path in the document (``kernels[0].programs[1].tensor``, or ``""``), the
``seq.bin`` reader and writer report ``MANIFEST: <where> <message>.``.
Numpy-free.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

from fetchc import __version__
from fetchc.target import BASE_LIMIT, BY_NAME, MAX_SLICES, ElementType
from fetchc.target.layout import layout_byte_span, nest_byte_span
from fetchc.wording import count

__all__ = [
    "PRODUCER",
    "ManifestError",
    "Manifest",
    "Kernel",
    "Tensor",
    "Scalar",
    "KernelProgram",
]

PRODUCER = f"fetchc {__version__}"
"""The ``producer`` fetchc writes."""

_MAX_DEPTH_ERRORS = (RecursionError, MemoryError)


class ManifestError(ValueError):
    """A MANIFEST that is not of the seqbin.md shape or disagrees with the
    PROGRAMS records.  ``where``: path in the document (``""`` for the whole
    document); ``message``: the rest of the sentence, no final period."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where} {message}" if where else message)


@dataclass(frozen=True)
class Tensor:
    """One memref argument of a kernel (or a scratch buffer): see the module
    docstring for units."""

    arg: int | None
    name: str
    dtype: ElementType
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    dm_base: int
    bytes: int
    read: bool
    committed: bool
    scratch: bool = False
    slice_dim: int | None = None

    @property
    def elements(self) -> int:
        """Elements in the tensor's shape (one slice's part)."""
        return math.prod(self.shape)

    def whole_shape(self, slices: int) -> tuple[int, ...]:
        """The whole tensor's shape on ``slices`` slices: :attr:`shape` with
        dimension :attr:`slice_dim` times ``slices`` (ir.md §2a); the shape
        itself when replicated."""
        d = self.slice_dim
        if d is None:
            return self.shape
        return self.shape[:d] + (self.shape[d] * slices,) + self.shape[d + 1 :]


@dataclass(frozen=True)
class Scalar:
    """One scalar (``f32``) argument of a kernel."""

    arg: int
    name: str
    dtype: ElementType


@dataclass(frozen=True)
class KernelProgram:
    """One program of a kernel: PROGRAMS record ``index`` reads tensor
    ``tensor`` as a stream of shape ``time`` then ``packet`` (what ``sim``
    reshapes its output to) of ``out_dtype``; ``loc`` is the ``fetch.fetch``'s
    ``file:line:col`` or its op path."""

    index: int
    tensor: int
    time: tuple[int, ...]
    packet: tuple[int, ...]
    out_dtype: ElementType
    loc: str

    @property
    def packet_size(self) -> int:
        return math.prod(self.packet)

    @property
    def elements(self) -> int:
        """``prod(time) * prod(packet)``."""
        return math.prod(self.time) * self.packet_size

    @property
    def shape(self) -> tuple[int, ...]:
        """The output shape: time dims then packet dims."""
        return self.time + self.packet


@dataclass(frozen=True)
class Kernel:
    """One ``func.func`` with at least one program (ir.md §2a)."""

    name: str
    tensors: tuple[Tensor, ...] = ()
    scalars: tuple[Scalar, ...] = ()
    programs: tuple[KernelProgram, ...] = ()
    slices: int = 1

    def tensor(self, name: str) -> Tensor:
        """The tensor named ``name``; raises ``KeyError``."""
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)


class _Record(Protocol):
    """What the MANIFEST checks read of a PROGRAMS record (read-only)."""

    @property
    def in_dtype(self) -> ElementType: ...
    @property
    def out_dtype(self) -> ElementType: ...
    @property
    def packet_size(self) -> int: ...
    @property
    def base(self) -> int: ...
    @property
    def limits(self) -> Sequence[int]: ...
    @property
    def strides(self) -> Sequence[int]: ...


@dataclass(frozen=True)
class Manifest:
    """The whole MANIFEST document (module docstring)."""

    kernels: tuple[Kernel, ...] = ()
    producer: str = PRODUCER

    # ---- lookups -----------------------------------------------------------

    def kernel(self, name: str) -> Kernel:
        """The kernel named ``name``; raises ``KeyError``."""
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)

    def program(self, index: int) -> tuple[Kernel, KernelProgram] | None:
        """The kernel and entry of PROGRAMS record ``index``, or ``None``."""
        for k in self.kernels:
            for p in k.programs:
                if p.index == index:
                    return k, p
        return None

    # ---- JSON --------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON document as Python objects, keys in sorted order."""
        return {"kernels": [_kernel_dict(k) for k in self.kernels], "producer": self.producer}

    def to_bytes(self, check_shape: bool = False) -> bytes:
        """The canonical UTF-8 JSON bytes (module docstring); with
        ``check_shape``, the shape rules of :meth:`from_dict` on the same
        document first (what the writer does).  The document is built, checked
        and encoded one kernel at a time (JSON is compositional: the bytes
        are those of :meth:`to_dict` encoded whole), so only one kernel's
        objects are in memory at once.  Raises :class:`ManifestError` for a
        shape rule broken, or for a text that is not valid Unicode (a lone
        surrogate)."""
        parts = [b'{"kernels":[']
        for i, k in enumerate(self.kernels):
            doc = _kernel_dict(k)
            if check_shape:
                _kernel(doc, f"kernels[{i}]")
            parts.append(_utf8(_json(doc)) if not i else b"," + _utf8(_json(doc)))
        if check_shape:
            _str(self.producer, "producer")
        parts.append(b'],"producer":' + _utf8(_json(self.producer)) + b"}")
        return b"".join(parts)

    @staticmethod
    def from_bytes(data: bytes) -> Manifest:
        """Parse a MANIFEST section and check its shape (module docstring).
        Raises :class:`ManifestError`, never another exception."""
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ManifestError("", f"is not valid UTF-8 ({e.reason} at byte {e.start})") from None
        try:
            obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except json.JSONDecodeError as e:
            raise ManifestError("", f"is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
        except _DuplicateKey as e:
            raise ManifestError(
                "", f"is not valid JSON for fetchc: an object has the key {e.args[0]!r} twice"
            ) from None
        except ValueError as e:
            raise ManifestError("", f"is not valid JSON ({e})") from None
        except _MAX_DEPTH_ERRORS:
            raise ManifestError("", "is nested too deeply to be a MANIFEST") from None
        return Manifest.from_dict(obj)

    @staticmethod
    def from_dict(obj: Any) -> Manifest:
        """Build from parsed JSON, checking its shape.  Raises
        :class:`ManifestError`."""
        top = _object(obj, "", ("kernels", "producer"))
        kernels = tuple(_kernel(k, f"kernels[{i}]") for i, k in enumerate(_list(top["kernels"], "kernels")))
        return Manifest(kernels, _str(top["producer"], "producer"))

    # ---- agreement with PROGRAMS -------------------------------------------

    def check_shape(self) -> None:
        """Check the shape rules of :meth:`from_dict` on this model (what the
        writer must do before writing it).  Raises :class:`ManifestError`."""
        Manifest.from_dict(self.to_dict())

    def check(self, programs: Sequence[_Record]) -> None:
        """Check the indices and the agreement with ``programs`` (the
        PROGRAMS records, in order; module docstring).  Raises
        :class:`ManifestError`."""
        where_of: dict[int, str] = {}
        for ki, k in enumerate(self.kernels):
            for ti, t in enumerate(k.tensors):
                _check_placement(t, f"kernels[{ki}].tensors[{ti}]")
            read = set()
            for pi, kp in enumerate(k.programs):
                at = f"kernels[{ki}].programs[{pi}]"
                _check_program(kp, at, k, programs, where_of)
                read.add(kp.tensor)
            for ti, t in enumerate(k.tensors):
                if t.read != (ti in read):
                    said = "true but no program reads it" if t.read else "false but a program reads it"
                    raise ManifestError(f"kernels[{ki}].tensors[{ti}].read", f"is {said}")
        for i in range(len(programs)):
            if i not in where_of:
                raise ManifestError("", f"lists no kernel program for PROGRAMS record {i}")


def _check_placement(t: Tensor, at: str) -> None:
    """A tensor's ``bytes`` is what its shape, layout and element type span,
    and that span lies in one slice's DM (hardware.md §1a, ir.md §2a)."""
    lo, end = layout_byte_span(t.shape, t.strides, t.offset, t.dtype.bits)
    if t.bytes != end - lo:
        raise ManifestError(
            f"{at}.bytes",
            f"is {t.bytes}, but shape {list(t.shape)}, strides {list(t.strides)} and offset {t.offset} "
            f"of {t.dtype} span {end - lo} bytes",
        )
    if end > lo and (t.dm_base + lo < 0 or t.dm_base + end > BASE_LIMIT):
        raise ManifestError(
            f"{at}.dm_base",
            f"{t.dm_base} places tensor {t.name!r} at DM bytes [{t.dm_base + lo}, {t.dm_base + end}), "
            f"outside one slice's DM [0, {BASE_LIMIT})",
        )


def _check_extent(kp: KernelProgram, at: str, t: Tensor, rec: _Record) -> None:
    """The bytes PROGRAMS record ``kp.index`` reads (base and loop nest) lie
    inside the bytes its tensor occupies at its placement."""
    lo, end = layout_byte_span(t.shape, t.strides, t.offset, t.dtype.bits)
    rlo, rend = nest_byte_span(rec.base, rec.limits, rec.strides, rec.in_dtype.bits)
    tlo, tend = t.dm_base + lo, t.dm_base + end
    if not (tlo <= rlo and rend <= tend):
        raise ManifestError(
            f"{at}.tensor",
            f"is tensor {t.name!r}, placed at DM bytes [{tlo}, {tend}) (dm_base {t.dm_base}), but PROGRAMS record "
            f"{kp.index} (base {rec.base}) reads bytes [{rlo}, {rend}): the program and the placement disagree",
        )


def _check_program(
    kp: KernelProgram, at: str, k: Kernel, programs: Sequence[_Record], where_of: dict[int, str]
) -> None:
    if not 0 <= kp.index < len(programs):
        raise ManifestError(f"{at}.index", f"is {kp.index}, out of range for {len(programs)} PROGRAMS records")
    if kp.index in where_of:
        raise ManifestError(f"{at}.index", f"is {kp.index}, already listed at {where_of[kp.index]}")
    where_of[kp.index] = at
    if not 0 <= kp.tensor < len(k.tensors):
        raise ManifestError(f"{at}.tensor", f"is {kp.tensor}, out of range for {count(len(k.tensors), 'tensor')}")
    rec, t = programs[kp.index], k.tensors[kp.tensor]
    n = kp.index
    if t.dtype != rec.in_dtype:
        raise ManifestError(
            f"{at}.tensor", f"is tensor {t.name!r} of {t.dtype}, but PROGRAMS record {n} reads {rec.in_dtype}"
        )
    if kp.out_dtype != rec.out_dtype:
        raise ManifestError(f"{at}.out_dtype", f"is {kp.out_dtype}, but PROGRAMS record {n} produces {rec.out_dtype}")
    if kp.packet_size != rec.packet_size:
        raise ManifestError(
            f"{at}.packet",
            f"{list(kp.packet)} is {count(kp.packet_size, 'element')}, "
            f"but PROGRAMS record {n} has packet_size {rec.packet_size}",
        )
    total = math.prod(rec.limits)
    if kp.elements != total:
        raise ManifestError(
            f"{at}.time",
            f"{list(kp.time)} x packet {list(kp.packet)} is {count(kp.elements, 'element')}, but the loop nest of "
            f"PROGRAMS record {n} reads {total}",
        )
    _check_extent(kp, at, t, rec)


# --------------------------------------------------------------------------
# Model -> JSON objects (keys in sorted order)
# --------------------------------------------------------------------------


def _json(value: Any) -> str:
    """The canonical JSON text of one value (module docstring)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ManifestError("", f"holds text that is not valid Unicode ({e.reason})") from None


def _kernel_dict(k: Kernel) -> dict[str, Any]:
    return {
        "name": k.name,
        "programs": [
            {
                "index": p.index, "loc": p.loc, "out_dtype": p.out_dtype.name, "packet": list(p.packet),
                "tensor": p.tensor, "time": list(p.time),
            }
            for p in k.programs
        ],
        "scalars": [{"arg": s.arg, "dtype": s.dtype.name, "name": s.name} for s in k.scalars],
        "slices": k.slices,
        "tensors": [_tensor_dict(t) for t in k.tensors],
    }  # fmt: skip


def _tensor_dict(t: Tensor) -> dict[str, Any]:
    d: dict[str, Any] = {
        "arg": t.arg, "bytes": t.bytes, "committed": t.committed, "dm_base": t.dm_base, "dtype": t.dtype.name,
        "name": t.name, "offset": t.offset, "read": t.read,
    }  # fmt: skip
    if t.scratch:
        d["scratch"] = True
    d["shape"] = list(t.shape)
    d["slice_dim"] = t.slice_dim
    d["strides"] = list(t.strides)
    return d


# --------------------------------------------------------------------------
# JSON objects -> model, checking the shape
# --------------------------------------------------------------------------


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    return "an object"


def _object(v: Any, at: str, keys: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ManifestError(
            at, f"must be an object, not {_kind(v)}" if at else f"must be a JSON object, not {_kind(v)}"
        )
    top = "" if at else "top-level "
    for key in keys:
        if key not in v:
            raise ManifestError(at, f"has no {top}key {key!r}")
    for key in v:
        if key not in keys and key not in optional:
            raise ManifestError(at, f"has an unknown {top}key {key!r}")
    return v


def _list(v: Any, at: str) -> list[Any]:
    if not isinstance(v, list):
        raise ManifestError(at, f"must be a list, not {_kind(v)}")
    return v


def _str(v: Any, at: str) -> str:
    if not isinstance(v, str):
        raise ManifestError(at, f"must be a string, not {_kind(v)}")
    return v


def _bool(v: Any, at: str) -> bool:
    if not isinstance(v, bool):
        raise ManifestError(at, f"must be true or false, not {_kind(v)}")
    return v


def _int(v: Any, at: str, lo: int | None = None, hi: int | None = None) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ManifestError(at, f"must be an integer, not {_kind(v)}")
    if lo is not None and v < lo:
        raise ManifestError(at, f"is {v}; it must be at least {lo}")
    if hi is not None and v > hi:
        raise ManifestError(at, f"is {v}; it must be at most {hi}")
    return v


def _ints(v: Any, at: str, lo: int | None = None, nonempty: bool = False) -> tuple[int, ...]:
    items = _list(v, at)
    if nonempty and not items:
        raise ManifestError(at, "must not be empty")
    for i, x in enumerate(items):
        if type(x) is not int or (lo is not None and x < lo):  # the common case passes without a path text
            _int(x, f"{at}[{i}]", lo)
    return tuple(items)


def _dtype(v: Any, at: str, memory: bool = False) -> ElementType:
    name = _str(v, at)
    t = BY_NAME.get(name)
    if t is None:
        raise ManifestError(at, f"is {name!r}, not an element type ({', '.join(BY_NAME)})")
    if memory and t.in_flight_only:
        raise ManifestError(at, f"is {name}, which never lives in memory")
    return t


def _each(v: Any, at: str, build: Callable[[Any, str], Any]) -> tuple[Any, ...]:
    return tuple(build(x, f"{at}[{i}]") for i, x in enumerate(_list(v, at)))


_TENSOR_KEYS = ("arg", "bytes", "committed", "dm_base", "dtype", "name", "offset", "read", "shape", "strides")
_PROGRAM_KEYS = ("index", "loc", "out_dtype", "packet", "tensor", "time")


def _tensor(v: Any, at: str) -> Tensor:
    d = _object(v, at, _TENSOR_KEYS, ("scratch", "slice_dim"))
    scratch = _bool(d["scratch"], f"{at}.scratch") if "scratch" in d else False
    if scratch:
        if d["arg"] is not None:
            raise ManifestError(f"{at}.arg", f"is {d['arg']!r}; a scratch tensor has arg null")
        arg = None
    else:
        arg = _int(d["arg"], f"{at}.arg", 0)
    shape = _ints(d["shape"], f"{at}.shape", 0)
    strides = _ints(d["strides"], f"{at}.strides")
    if len(strides) != len(shape):
        raise ManifestError(
            f"{at}.strides", f"has {count(len(strides), 'entry', 'entries')} but shape has {len(shape)}"
        )
    slice_dim = d.get("slice_dim")
    if slice_dim is not None:
        slice_dim = _int(slice_dim, f"{at}.slice_dim", 0)
        if slice_dim >= len(shape):
            raise ManifestError(f"{at}.slice_dim", f"is {slice_dim}, out of range for a rank-{len(shape)} shape")
        if scratch:
            raise ManifestError(f"{at}.slice_dim", f"is {slice_dim}; a scratch tensor is never split (null)")
    return Tensor(
        arg=arg, name=_str(d["name"], f"{at}.name"), dtype=_dtype(d["dtype"], f"{at}.dtype", memory=True),
        shape=shape, strides=strides, offset=_int(d["offset"], f"{at}.offset"),
        dm_base=_int(d["dm_base"], f"{at}.dm_base", 0, BASE_LIMIT - 1), bytes=_int(d["bytes"], f"{at}.bytes", 0),
        read=_bool(d["read"], f"{at}.read"), committed=_bool(d["committed"], f"{at}.committed"), scratch=scratch,
        slice_dim=slice_dim,
    )  # fmt: skip


def _scalar(v: Any, at: str) -> Scalar:
    d = _object(v, at, ("arg", "dtype", "name"))
    return Scalar(_int(d["arg"], f"{at}.arg", 0), _str(d["name"], f"{at}.name"), _dtype(d["dtype"], f"{at}.dtype"))


def _program(v: Any, at: str) -> KernelProgram:
    d = _object(v, at, _PROGRAM_KEYS)
    return KernelProgram(
        index=_int(d["index"], f"{at}.index", 0), tensor=_int(d["tensor"], f"{at}.tensor", 0),
        time=_ints(d["time"], f"{at}.time", 1), packet=_ints(d["packet"], f"{at}.packet", 1, nonempty=True),
        out_dtype=_dtype(d["out_dtype"], f"{at}.out_dtype"), loc=_str(d["loc"], f"{at}.loc"),
    )  # fmt: skip


def _kernel(v: Any, at: str) -> Kernel:
    d = _object(v, at, ("name", "programs", "scalars", "tensors"), ("slices",))
    k = Kernel(
        name=_str(d["name"], f"{at}.name"),
        tensors=_each(d["tensors"], f"{at}.tensors", _tensor),
        scalars=_each(d["scalars"], f"{at}.scalars", _scalar),
        programs=_each(d["programs"], f"{at}.programs", _program),
        slices=_int(d["slices"], f"{at}.slices", 1, MAX_SLICES) if "slices" in d else 1,
    )
    _check_arguments(k, at)
    return k


def _check_arguments(k: Kernel, at: str) -> None:
    """Arguments in increasing order, no argument both a tensor and a
    scalar, names unique in the kernel."""
    tensors: list[tuple[object, int]] = [(t, t.arg) for t in k.tensors if t.arg is not None]
    scalars: list[tuple[object, int]] = [(s, s.arg) for s in k.scalars]
    for field, items in (("tensors", tensors), ("scalars", scalars)):
        for (_, a_arg), (b, b_arg) in pairwise(items):
            if b_arg <= a_arg:
                i = list(getattr(k, field)).index(b)
                raise ManifestError(f"{at}.{field}[{i}].arg", f"is {b_arg}, not after the previous one ({a_arg})")
    tensor_args = {t.arg for t in k.tensors if t.arg is not None}
    for i, s in enumerate(k.scalars):
        if s.arg in tensor_args:
            raise ManifestError(f"{at}.scalars[{i}].arg", f"is {s.arg}, which is also a tensor's argument")
    seen: dict[str, str] = {}
    for where, name in _names(k, at):
        if name in seen:
            raise ManifestError(where, f"is {name!r}, the same name as {seen[name]}")
        seen[name] = where


def _names(k: Kernel, at: str) -> Iterator[tuple[str, str]]:
    for i, t in enumerate(k.tensors):
        yield f"{at}.tensors[{i}].name", t.name
    for i, s in enumerate(k.scalars):
        yield f"{at}.scalars[{i}].name", s.name
