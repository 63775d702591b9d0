"""One description of each ``seq.bin`` record: the field tables that the
writer, the reader, the disassembler and ``fetchc dis --json`` all walk.

A :class:`Layout` is a record's fixed part, a tuple of :class:`Field` in
record order: name (seqbin.md's), byte offset, ``struct`` format (width and
signedness), array length, whether all-ones means "absent", which attribute
of the content model (:class:`~fetchc.seqbin.format.Program`,
:class:`~fetchc.seqbin.format.Table`) holds it, and how ``fetchc dis`` shows
it.  Adding a field to a record is one line here plus its attribute in the
content model (README of this package: docs/architecture.md "To add X").

* :data:`PROGRAM_LAYOUT`: PROGRAMS, 128 bytes, positions named by word
  (``flit_count (word 30)``).
* :data:`TABLE_LAYOUT`: the TABLES record header of version 1.2, 24 bytes,
  followed by ``entries × entry_bytes`` bytes of entries.
* :data:`TABLE_LAYOUT_1_1`: the 8-byte TABLES header of versions 1.0 and
  1.1 (``entries`` a ``u16``; always 256 entries of a decode table).

Field kinds (:attr:`Field.kind`) say how a stored integer becomes a model
value and back: ``int`` (itself), ``dtype`` (a dtype code ↔
:class:`~fetchc.target.ElementType`), ``optional`` (``0xFFFFFFFF`` ↔
``None``), ``bool``, ``function`` (the TABLES ``function`` code ↔ a
function name, ``None`` for a decode table), ``float`` (an ``f32``), and
``derived`` (written from other fields: ``num_entries`` from ``limits``,
``name`` from STRINGS, ``entries`` from the entry bytes; ``reserved`` is 0).

Spec: seqbin.md "TABLES" and "PROGRAMS".
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fetchc.target import BY_CODE, MAX_ENTRIES
from fetchc.target.functions import DECODE_CODE, FUNCTION_BY_CODE, FUNCTIONS
from fetchc.target.record import Labels, RecordError
from fetchc.wording import count

__all__ = [
    "Field",
    "Layout",
    "PROGRAM_LAYOUT",
    "TABLE_LAYOUT",
    "TABLE_LAYOUT_1_1",
    "WORDS",
    "table_layout",
]


@dataclass(frozen=True)
class Field:
    """One field of a record.  ``fmt``: its ``struct`` code (``B`` u8, ``H``
    u16, ``I`` u32, ``i`` i32, ``f`` f32); ``count``: array length (the used
    elements are the first ``model[length]``, the rest must be 0);
    ``attr``: the content model's attribute (default ``name``; ``""`` for
    none); ``text``: how ``fetchc dis`` shows it (``"plain"``: ``name:
    value``; ``""``: shown by another field's line; other names:
    :mod:`~fetchc.seqbin.disasm`'s renderers)."""

    name: str
    offset: int
    fmt: str = "I"
    kind: str = "int"
    count: int = 1
    length: str | None = None
    attr: str | None = None
    text: str = "plain"

    @property
    def width(self) -> int:
        return struct.calcsize("<" + self.fmt)

    @property
    def model(self) -> str:
        """The content model's attribute holding the value (``""``: none)."""
        return self.name if self.attr is None else self.attr

    def decode(self, raw: Any, labels: Labels) -> Any:
        """The model value of stored ``raw`` (an array: a tuple, unused
        elements included).  Raises :class:`RecordError` for a code that
        means nothing."""
        if self.kind == "dtype":
            t = BY_CODE.get(raw)
            if t is None:
                raise RecordError(
                    self.name, f"{labels.field(self.name)} is {raw}, which is not a dtype code (1 to {max(BY_CODE)})"
                )
            return t
        if self.kind == "optional":
            return None if raw == (1 << 8 * self.width) - 1 else raw
        if self.kind == "bool":
            if raw not in (0, 1):
                raise RecordError(self.name, f"{labels.field(self.name)} is {raw}; it must be 0 or 1")
            return bool(raw)
        if self.kind == "function":
            if raw == DECODE_CODE:
                return None
            f = FUNCTION_BY_CODE.get(raw)
            if f is None:
                codes = ", ".join(f"{f.code} {f.name}" for f in FUNCTIONS.values())
                raise RecordError(
                    self.name, f"{labels.field(self.name)} is {raw}, not a function code (0 decode table, {codes})"
                )
            return f.name
        return raw

    def encode(self, value: Any) -> Any:
        """The stored integer (or float) of model ``value``."""
        if self.kind == "dtype":
            return value.code
        if self.kind == "optional":
            return (1 << 8 * self.width) - 1 if value is None else value
        if self.kind == "bool":
            return int(value)
        if self.kind == "function":
            return DECODE_CODE if value is None else FUNCTIONS[value].code
        return value


@dataclass(frozen=True)
class Layout:
    """The fixed part of one record: ``size`` bytes, ``fields`` in record
    order, positions named in ``unit``-byte steps (4: words, 1: bytes)."""

    record: str
    size: int
    unit: int
    fields: tuple[Field, ...]

    def __post_init__(self) -> None:
        end = 0
        for f in self.fields:
            assert f.offset == end, f"{self.record}.{f.name} at {f.offset}, expected {end}: fields must tile the record"
            end = f.offset + f.width * f.count
        assert end == self.size, f"{self.record}: fields end at {end}, not {self.size}"

    @property
    def struct(self) -> struct.Struct:
        return struct.Struct("<" + "".join(f"{f.count}{f.fmt}" if f.count > 1 else f.fmt for f in self.fields))

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def positions(self) -> dict[str, int]:
        """Field name → position (word or byte) of its first element."""
        return {f.name: f.offset // self.unit for f in self.fields}

    def labels(self) -> Labels:
        """Messages naming this record's positions (``flit_count (word 30)``)."""
        return Labels(self.positions(), "word" if self.unit == 4 else "byte")

    def unpack(self, rec: bytes) -> dict[str, Any]:
        """Field name → stored value (arrays as tuples), from the first
        :attr:`size` bytes of ``rec``."""
        flat = self.struct.unpack_from(rec)
        out: dict[str, Any] = {}
        i = 0
        for f in self.fields:
            out[f.name] = flat[i] if f.count == 1 else tuple(flat[i : i + f.count])
            i += f.count
        return out

    def pack(self, stored: Mapping[str, Any]) -> bytes:
        """The record's bytes from field name → stored value (arrays may be
        shorter than ``count``: zero-padded).  Raises ``struct.error`` or
        ``OverflowError`` for a value that does not fit its field."""
        flat: list[Any] = []
        for f in self.fields:
            v = stored[f.name]
            if f.count == 1:
                flat.append(v)
            else:
                flat += list(v) + [0] * (f.count - len(v))
        return self.struct.pack(*flat)

    def decode(self, stored: Mapping[str, Any], labels: Labels | None = None) -> dict[str, Any]:
        """Model attribute → value for every field with one (arrays cut to
        their used length, after checking the unused elements are 0).
        Raises :class:`RecordError`."""
        labels = labels or self.labels()
        out: dict[str, Any] = {}
        for f in self.fields:
            value = stored[f.name]
            if f.count > 1:
                n = stored[f.length] if f.length else f.count
                for k in range(n, f.count):
                    if value[k] != 0:
                        raise RecordError(
                            f.name,
                            f"{labels.field(f.name, k)} is {value[k]} but only {count(n, 'entry', 'entries')} "
                            f"{'is' if n == 1 else 'are'} used; it must be 0",
                        )
                value = tuple(value[:n])
            if f.model:
                out[f.model] = f.decode(value, labels)
        return out

    def encode(self, model: Any, derived: Mapping[str, Any]) -> dict[str, Any]:
        """Field name → stored value from a content-model object (its
        attributes) and the ``derived`` fields' stored values."""
        return {
            f.name: derived[f.name] if f.kind == "derived" else f.encode(getattr(model, f.model)) for f in self.fields
        }


# --------------------------------------------------------------------------
# The records (seqbin.md)
# --------------------------------------------------------------------------


def _words(*spec: tuple) -> tuple[Field, ...]:
    """PROGRAMS fields from ``(name, word, **options)``: offsets in words."""
    return tuple(Field(name, 4 * word, **opts) for name, word, opts in spec)


PROGRAM_LAYOUT = Layout("PROGRAMS", 128, 4, _words(
    ("unit", 0, dict(text="unit")),
    ("name", 1, dict(kind="derived", attr="", text="")),
    ("in_dtype", 2, dict(kind="dtype")),
    ("out_dtype", 3, dict(kind="dtype")),
    ("base", 4, dict(text="address")),
    ("packet_size", 5, dict(text="sequencer")),
    ("fetch_size", 6, dict()),
    ("num_entries", 7, dict(kind="derived", attr="", text="")),
    ("limits", 8, dict(count=MAX_ENTRIES, length="num_entries", text="")),
    ("strides", 16, dict(fmt="i", count=MAX_ENTRIES, length="num_entries", text="")),
    ("stages", 24, dict(text="stages")),
    ("tables", 25, dict(kind="optional", attr="table", text="index")),
    ("type_conversion", 26, dict(kind="optional", text="cast")),
    ("zero_point0", 27, dict(fmt="i", text="zero_point")),
    ("num_zero_points", 28, dict(text="")),
    ("zp_mode", 29, dict(text="")),
    ("flit_count", 30, dict()),
    ("words_per_packet", 31, dict()),
))  # fmt: skip
"""seqbin.md PROGRAMS: 32 words."""

TABLE_LAYOUT = Layout("TABLES", 24, 1, (
    Field("key_bytes", 0, "B"),
    Field("paired", 1, "B", kind="bool"),
    Field("in_dtype", 2, "B", kind="dtype"),
    Field("out_dtype", 3, "B", kind="dtype"),
    Field("entry_bytes", 4, "H"),
    Field("function", 6, "H", kind="function"),
    Field("entries", 8, "I", kind="derived", attr=""),
    Field("scale", 12, "f", kind="float"),
    Field("zero_point", 16, "i"),
    Field("reserved", 20, "I", kind="derived", attr="", text=""),
))  # fmt: skip
"""seqbin.md TABLES, version 1.2: the 24-byte header of a record."""

TABLE_LAYOUT_1_1 = Layout("TABLES", 8, 1, (
    Field("key_bytes", 0, "B"),
    Field("paired", 1, "B", kind="bool"),
    Field("in_dtype", 2, "B", kind="dtype"),
    Field("out_dtype", 3, "B", kind="dtype"),
    Field("entry_bytes", 4, "H"),
    Field("entries", 6, "H", kind="derived", attr=""),
))  # fmt: skip
"""seqbin.md TABLES of a 1.0 or 1.1 file: the 8-byte header."""

WORDS = PROGRAM_LAYOUT.labels()
"""Labels of the ``seq.bin`` reader and writer for PROGRAMS messages."""


def table_layout(minor: int) -> Layout:
    """The TABLES header of a version ``1.minor`` file."""
    return TABLE_LAYOUT if minor >= 2 else TABLE_LAYOUT_1_1
