"""``seq.bin``: format constants and the content model.

Spec: ``seqbin.md`` (the whole binary format, version 1.2), ``hardware.md``
§2-3 (the rules a record must satisfy: :mod:`fetchc.target.record`) and §5
(register names).  Every hardware fact comes from :mod:`fetchc.target`.

The package is split by job: this module (constants, :class:`Table`,
:class:`Program`, :class:`SeqBin`, :class:`Section`, :class:`FileInfo`,
:class:`SeqBinError`), :mod:`~fetchc.seqbin.manifest` (the MANIFEST model and
its JSON), :mod:`~fetchc.seqbin.writer` (``SeqBin -> bytes``: packs and
validates, never reads back), :mod:`~fetchc.seqbin.reader` (``bytes ->
SeqBin``, validating), :mod:`~fetchc.seqbin.disasm` (text and JSON; the only
module that imports numpy, lazily) and :mod:`~fetchc.seqbin.emit` (a module
lowered to ``fetch_seq`` -> :class:`SeqBin`).  :mod:`fetchc.seqbin` re-exports
the public names.

Decisions where ``seqbin.md`` leaves a choice
--------------------------------------------

* A :class:`SeqBin` with a manifest is written as version 1.2 with the four
  rows of seqbin.md.  One without a manifest is written as a version 1.0
  file (three section rows, 8-byte TABLES headers) when all its tables are
  decode tables, else as version 1.2 with three rows (TABLES, PROGRAMS,
  STRINGS).  Equal content still gives equal bytes.
* Versions 1.0 and 1.1 are read with their 8-byte TABLES headers, any later
  1.x with the 24-byte header of 1.2.  The record layouts are
  :mod:`fetchc.seqbin.fields`' tables.
* ``flags`` and ``reserved`` must be 0 (no flag is defined; an unknown flag
  could change the meaning of the file).  Any ``version_minor`` is accepted
  with major version 1, except that a 1.0 file may not hold a MANIFEST.
* The reader does not require sections to be 8-byte aligned or gaps to be
  zero (the CRC protects every byte; alignment is a writer rule).  A section
  may not overlap the header or the section table.  Empty sections (size 0)
  overlap nothing but their offset must still lie within the file.
* ``Program.name`` is ``None`` for word 1 = ``0xFFFFFFFF``; the writer then
  emits no string for it.  A name offset must point at the start of a
  string (offset 0 or just after a NUL).  STRINGS ``count`` must equal the
  number of NUL-terminated strings and a non-empty STRINGS must end in NUL.
  Strings no program references are accepted.
* Duplicate tables are accepted by the reader (deduplication is a writer
  concern, done by whoever builds the :class:`SeqBin`).
* Table entries are reported as stored; a table differing from the reference
  conversion (or, for a function table, from
  :func:`fetchc.target.functions.function_entries`) is read fine and marked
  by the disassembler.
* Beyond field ranges each program must be a legal hardware configuration:
  :func:`fetchc.target.record.check_program` (stage chain, contiguity, read
  size, flit count) and each table :func:`fetchc.target.record.check_table`.
* A MANIFEST section has count 1 and is checked by
  :meth:`fetchc.seqbin.manifest.Manifest.from_bytes` (its shape, with
  unknown keys rejected) and :meth:`~fetchc.seqbin.manifest.Manifest.check`
  (against the PROGRAMS records: every record in exactly one kernel).
"""

from __future__ import annotations

__all__ = [
    "SeqBinError", "Table", "Program", "SeqBin", "Section", "FileInfo", "MAGIC", "VERSION_MAJOR",
    "VERSION_MINOR", "HEADER_SIZE", "ROW_SIZE", "TABLE_RECORD_SIZE_1_1", "PROGRAM_RECORD_SIZE", "PROGRAM_WORDS",
    "SECTION_ALIGN", "NONE_U32", "KIND_TABLES", "KIND_PROGRAMS", "KIND_STRINGS", "KIND_MANIFEST", "KIND_NAMES",
    "UNIT_NAMES", "STAGE_NAMES",
]  # fmt: skip

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fetchc import target
from fetchc.target import LOOKUP_TABLES, TABLE_ENTRIES, TABLE_ENTRY_BYTES, TABLE_KEY_BYTES, ElementType, functions
from fetchc.target.record import Fields

if TYPE_CHECKING:
    from fetchc.seqbin.manifest import Manifest

# --------------------------------------------------------------------------
# Format constants (seqbin.md "Layout")
# --------------------------------------------------------------------------

MAGIC = b"FSEQ"
VERSION_MAJOR = 1
VERSION_MINOR = 2
"""The version a file is written as (one without a MANIFEST and without
function tables as 1.0)."""
HEADER_SIZE = 32
ROW_SIZE = 16
TABLE_RECORD_SIZE_1_1 = 8 + TABLE_ENTRIES * TABLE_ENTRY_BYTES  # 520: a TABLES record of a 1.0 or 1.1 file
PROGRAM_RECORD_SIZE = 128
PROGRAM_WORDS = 32
SECTION_ALIGN = 8
NONE_U32 = 0xFFFFFFFF
"""``tables`` / ``type_conversion`` / ``name`` value meaning "none"."""

KIND_TABLES = 1
KIND_PROGRAMS = 2
KIND_STRINGS = 3
KIND_MANIFEST = 4
KIND_NAMES: dict[int, str] = {
    KIND_TABLES: "TABLES", KIND_PROGRAMS: "PROGRAMS", KIND_STRINGS: "STRINGS", KIND_MANIFEST: "MANIFEST"
}  # fmt: skip

UNIT_NAMES: tuple[str, ...] = target.CONTEXTS  # word 0: 0 main, 1 sub
STAGE_NAMES: tuple[tuple[int, str], ...] = tuple((s.bit, s.name) for s in target.STAGES)
"""``(bit, name)`` of the PROGRAMS word 24 bits, in pipeline order."""


class SeqBinError(Exception):
    """A ``seq.bin`` that cannot be read or written.  ``str(err)`` is one
    complete sentence naming the offending section / table / program and
    field; ``program`` is the PROGRAMS index it is about (or None), ``field``
    the record field at fault (or None) and ``detail`` the sentence without
    the ``program N:`` prefix."""

    def __init__(self, detail: str, *, program: int | None = None, field: str | None = None, text: str | None = None):
        self.detail = detail
        self.program = program
        self.field = field
        super().__init__(text or (detail if program is None else f"program {program}: {detail}"))


# --------------------------------------------------------------------------
# Content model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """One TABLES record (seqbin.md "TABLES", hardware.md §2.1, §2.1b).

    ``function``: ``None`` for a decode table, else the function's name
    (``"gelu"``); ``scale`` and ``zero_point``: an integer-key function
    table's (1.0 and 0 otherwise).  ``entries``: the little-endian ``u16``
    entries, entry ``k`` for key ``k`` (256 for 1-byte keys, 65536 for
    2-byte keys: 512 or 131072 bytes)."""

    paired: bool
    in_dtype: ElementType
    out_dtype: ElementType
    entries: bytes
    function: str | None = None
    scale: float = 1.0
    zero_point: int = 0

    @staticmethod
    def for_pair(src: ElementType, dst: ElementType) -> Table:
        """The reference decode table for ``src -> dst``
        (``target.table_entries``).

        Raises ``ValueError`` when the pair is not one of the four of
        hardware.md §2.1."""
        if (src, dst) not in LOOKUP_TABLES:
            pairs = ", ".join(f"{i} -> {o}" for i, o in LOOKUP_TABLES)
            raise ValueError(f"there is no lookup table for {src} -> {dst}; the hardware has {pairs}.")
        entries = struct.pack(f"<{TABLE_ENTRIES}H", *target.table_entries(src, dst))
        return Table(LOOKUP_TABLES[(src, dst)], src, dst, entries)

    @staticmethod
    def for_function(fn: str, key: ElementType, scale: float = 1.0, zero_point: int = 0) -> Table:
        """The ``fn`` table keyed by ``key`` (hardware.md §2.1b,
        :func:`fetchc.target.functions.function_entries`).  Raises
        ``KeyError`` for an unknown function or key type."""
        values = functions.function_entries(fn, key, scale, zero_point)
        entries = struct.pack(f"<{len(values)}H", *values)
        return Table(False, key, functions.FUNCTION_OUTPUT, entries, fn, scale, zero_point)

    @property
    def key_bytes(self) -> int:
        """TABLES ``key_bytes``: 1, or 2 for a function table keyed by a
        16-bit type."""
        return TABLE_KEY_BYTES if self.function is None else functions.key_bytes(self.in_dtype)

    @property
    def entry_bytes(self) -> int:
        return TABLE_ENTRY_BYTES

    def values(self) -> list[int]:
        """The entries as integers."""
        return list(struct.unpack(f"<{len(self.entries) // 2}H", self.entries))

    def reference(self) -> bytes | None:
        """The entries this record should hold by its own fields (the
        reference conversion, or the function's baked entries), ``None``
        when the fields name no table."""
        try:
            if self.function is None:
                ref = Table.for_pair(self.in_dtype, self.out_dtype)
            else:
                ref = Table.for_function(self.function, self.in_dtype, self.scale, self.zero_point)
        except (KeyError, ValueError):
            return None
        return ref.entries if ref.paired == bool(self.paired) else None


@dataclass(frozen=True)
class Program(Fields):
    """One PROGRAMS record (seqbin.md "PROGRAMS", hardware.md §3, §5): the
    register fields of :class:`fetchc.target.record.Fields` and the name.

    ``name`` is ``None`` for an unnamed program (word 1 = ``0xFFFFFFFF``).
    ``unit``: 0 main, 1 sub.  ``base``: DM byte address.  ``packet_size``:
    elements.  ``fetch_size``: bytes per hardware read.  ``limits`` /
    ``strides``: the used loop-nest entries only (``num_entries`` =
    ``len(limits)``), outermost first, strides in elements of ``in_dtype``.
    ``stages``: bit set of ``target.STAGE_*``.  ``table``: TABLES index or
    ``None``.  ``type_conversion``: cast code 0-6 or ``None``.  Build it with
    keywords (the field order is the base class's, then ``name``)."""

    name: str | None

    @property
    def num_entries(self) -> int:
        """PROGRAMS word 7: used loop-nest entries (1 to 8)."""
        return len(self.limits)


@dataclass(frozen=True)
class SeqBin:
    """The whole file's content: tables (TABLES order), programs (program
    order) and the MANIFEST (``None`` for a version 1.0 file)."""

    tables: tuple[Table, ...] = ()
    programs: tuple[Program, ...] = ()
    manifest: Manifest | None = None


@dataclass(frozen=True)
class Section:
    """One section-table row as stored."""

    kind: int
    offset: int
    size: int
    count: int

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, f"kind {self.kind}")


@dataclass(frozen=True)
class FileInfo:
    """Header facts of a file that :func:`fetchc.seqbin.read_info` accepted."""

    version_major: int
    version_minor: int
    file_size: int
    crc32: int
    sections: tuple[Section, ...] = field(default_factory=tuple)
