"""``seq.bin``: writer, validating reader and disassembler.

Spec: ``seqbin.md`` (the whole binary format), ``hardware.md`` §2 (adapter
stages), §3 (sequencer rules the reader enforces) and §5 (register names).
Every hardware fact (dtype codes, cast codes, lookup tables, zero-point rules,
flit size, read sizes) comes from :mod:`fetchc.target`.

Public API
----------

* :class:`Table`, :class:`Program`, :class:`SeqBin`: the file's content.
* :func:`write` ``SeqBin -> bytes``: exactly the ``seqbin.md`` layout,
  deterministic; refuses (``SeqBinError``) to emit a file :func:`read` rejects.
* :func:`read` ``bytes -> SeqBin`` and :func:`read_info` (also returns the
  header and section table as :class:`FileInfo`): validate everything and raise
  :class:`SeqBinError` with one complete sentence naming the section, table or
  program index and the field.
* :func:`disassemble` (text) and :func:`to_json` (``fetchc dis --json``).
* :func:`table_matches_reference`: stored entries == ``target.lookup_table``.

Decisions where ``seqbin.md`` leaves a choice
--------------------------------------------

* ``flags`` and ``reserved`` must be 0 (version 1.0 defines no flag; an
  unknown flag could change the meaning of the file).  Any ``version_minor``
  is accepted with major version 1.
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
  conversion is read fine and marked by :func:`disassemble`.
* Beyond field ranges the reader checks each program is a legal hardware
  configuration: the stage chain ``in_dtype -> [table] -> [cast] -> [zero
  point]`` must end at ``out_dtype`` (table in/out types, cast code, zp_mode
  and zero-point range all agree); no table in the sub unit; sub unit reads 8
  bytes; innermost entry contiguous (``hardware.md`` §3); the read size divides
  the contiguous access size; a cast's output per read fits one flit; and
  ``flit_count`` equals ``target.flit_count``.

Disassembly text format (:func:`disassemble`)
---------------------------------------------

One ``label: value`` per line, fixed labels, two-space indentation under each
table/program; horizontal alignment padding may vary (FileCheck ignores it)::

    seq.bin version 1.0, 737 bytes, crc32 0x1234abcd
    sections: 3
    section TABLES: offset 80, size 520, count 1
    section PROGRAMS: offset 600, size 128, count 1
    section STRINGS: offset 728, size 9, count 1
    tables: 1
    table 0: f4E2M1FN -> f8E4M3FN, paired
      layout: row = high nibble, column = low nibble, cell = (lo,hi)
      col:      0       1  ...      f
      row 0: (0,0) (0.5,0) ...
      ...                           (16 rows, "row 0:" .. "row f:")
    programs: 1
    program 0: "decode/0"
      unit: main
      in_dtype: f4E2M1FN
      out_dtype: f32
      base: 0x600000 (6291456)
      sequencer: [65536 : 1] : 16
      fetch_size: 4
      words_per_packet: 2
      stages: table_lookup, type_conversion
      table: 0
      type_conversion: 3 (f8E4M3FN -> f32)
      zero_point: off
      flit_count: 2

* A non-paired table's header line ends in ``non-paired`` and its layout line
  reads ``layout: key = row * 16 + column``; each cell is one decoded value.
* A table whose entries differ from ``target.lookup_table`` gets
  `` (entries differ from the reference conversion)`` at the end of its header
  line.
* Values: shortest round-trip decimal, a trailing ``.0`` dropped (``1``,
  ``0.5``, ``-0``, ``448``), ``inf``/``-inf``, ``nan``/``-nan`` (sign bit).
* Program name: a JSON string literal, or ``(unnamed)`` for ``0xFFFFFFFF``.
* ``stages: none``, ``table: none``, ``type_conversion: none`` when off;
  ``zero_point: off`` or ``zero_point: <zero_point0> (i8 -> i9)``.
* The sequencer line is ``hardware.md`` §3 notation:
  ``[limit_0 : stride_0, ..., limit_n-1 : stride_n-1] : packet_size``.
"""

from __future__ import annotations

__all__ = [
    "SeqBinError", "Table", "Program", "SeqBin", "Section", "FileInfo", "write", "read", "read_info",
    "disassemble", "to_json", "table_matches_reference", "format_value", "table_cells", "sequencer_text",
    "stage_names", "MAGIC", "VERSION_MAJOR", "VERSION_MINOR", "HEADER_SIZE", "ROW_SIZE", "TABLE_RECORD_SIZE",
    "PROGRAM_RECORD_SIZE", "PROGRAM_WORDS", "SECTION_ALIGN", "NONE_U32", "KIND_TABLES", "KIND_PROGRAMS",
    "KIND_STRINGS", "KIND_NAMES", "UNIT_NAMES", "STAGE_NAMES",
]

import json
import math
import struct
import zlib
from dataclasses import dataclass, field, replace
from typing import Any

from fetchc import target
from fetchc.target import (
    BY_CODE,
    CAST_CODES,
    FLIT_BYTES,
    LOOKUP_TABLES,
    MAX_ENTRIES,
    MAX_ENTRY_SIZE,
    READ_BYTES,
    STAGE_TABLE_LOOKUP,
    STAGE_TYPE_CONVERSION,
    STAGE_ZERO_POINT,
    SUB_READ_BYTES,
    TABLE_ENTRIES,
    TABLE_ENTRY_BYTES,
    TABLE_KEY_BYTES,
    ZERO_POINT,
    ElementType,
)

# --------------------------------------------------------------------------
# Format constants (seqbin.md "Layout")
# --------------------------------------------------------------------------

MAGIC = b"FSEQ"
VERSION_MAJOR = 1
VERSION_MINOR = 0
HEADER_SIZE = 32
ROW_SIZE = 16
TABLE_RECORD_SIZE = 8 + TABLE_ENTRIES * TABLE_ENTRY_BYTES  # 520
PROGRAM_RECORD_SIZE = 128
PROGRAM_WORDS = 32
SECTION_ALIGN = 8
NONE_U32 = 0xFFFFFFFF
"""``tables`` / ``type_conversion`` / ``name`` value meaning "none"."""

KIND_TABLES = 1
KIND_PROGRAMS = 2
KIND_STRINGS = 3
KIND_NAMES: dict[int, str] = {KIND_TABLES: "TABLES", KIND_PROGRAMS: "PROGRAMS", KIND_STRINGS: "STRINGS"}

UNIT_NAMES: tuple[str, ...] = target.CONTEXTS  # word 0: 0 main, 1 sub
STAGE_NAMES: tuple[tuple[int, str], ...] = (
    (STAGE_TABLE_LOOKUP, "table_lookup"),
    (STAGE_TYPE_CONVERSION, "type_conversion"),
    (STAGE_ZERO_POINT, "zero_point"),
)
_ALL_STAGES = STAGE_TABLE_LOOKUP | STAGE_TYPE_CONVERSION | STAGE_ZERO_POINT


class SeqBinError(Exception):
    """A ``seq.bin`` that cannot be read or written.  ``str(err)`` is one
    complete sentence naming the offending section / table / program and
    field; ``program`` is the PROGRAMS index it is about (or None) and
    ``detail`` the sentence without the ``program N:`` prefix."""

    def __init__(self, detail: str, *, program: int | None = None, text: str | None = None):
        self.detail = detail
        self.program = program
        super().__init__(text or (detail if program is None else f"program {program}: {detail}"))


# --------------------------------------------------------------------------
# Content model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """One TABLES record (seqbin.md "TABLES", hardware.md §2.1).

    ``entries`` is 512 bytes: 256 little-endian ``u16``, entry ``k`` for key
    byte ``k``."""

    paired: bool
    in_dtype: ElementType
    out_dtype: ElementType
    entries: bytes

    @staticmethod
    def for_pair(src: ElementType, dst: ElementType) -> Table:
        """The reference table for ``src -> dst`` (``target.lookup_table``).

        Raises ``ValueError`` when the pair is not one of the four of
        hardware.md §2.1."""
        if (src, dst) not in LOOKUP_TABLES:
            pairs = ", ".join(f"{i} -> {o}" for i, o in LOOKUP_TABLES)
            raise ValueError(f"there is no lookup table for {src} -> {dst}; the hardware has {pairs}.")
        entries = struct.pack(f"<{TABLE_ENTRIES}H", *target.table_entries(src, dst))
        return Table(LOOKUP_TABLES[(src, dst)], src, dst, entries)

    def values(self) -> list[int]:
        """The 256 entries as integers."""
        return list(struct.unpack(f"<{len(self.entries) // 2}H", self.entries))


@dataclass(frozen=True)
class Program:
    """One PROGRAMS record (seqbin.md "PROGRAMS", hardware.md §3, §5).

    ``name`` is ``None`` for an unnamed program (word 1 = ``0xFFFFFFFF``).
    ``unit``: 0 main, 1 sub.  ``base``: DM byte address.  ``packet_size``:
    elements.  ``fetch_size``: bytes per hardware read.  ``limits`` /
    ``strides``: the used loop-nest entries only (``num_entries`` =
    ``len(limits)``), outermost first, strides in elements of ``in_dtype``.
    ``stages``: bit set of ``target.STAGE_*``.  ``table``: TABLES index or
    ``None``.  ``type_conversion``: cast code 0-6 or ``None``."""

    name: str | None
    unit: int
    in_dtype: ElementType
    out_dtype: ElementType
    base: int
    packet_size: int
    fetch_size: int
    limits: tuple[int, ...]
    strides: tuple[int, ...]
    stages: int
    table: int | None
    type_conversion: int | None
    zero_point0: int
    num_zero_points: int
    zp_mode: int
    flit_count: int
    words_per_packet: int

    @property
    def num_entries(self) -> int:
        """PROGRAMS word 7: used loop-nest entries (1 to 8)."""
        return len(self.limits)


@dataclass(frozen=True)
class SeqBin:
    """The whole file's content: tables (TABLES order) and programs (program
    order)."""

    tables: tuple[Table, ...] = ()
    programs: tuple[Program, ...] = ()


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
    """Header facts of a file that :func:`read_info` accepted."""

    version_major: int
    version_minor: int
    file_size: int
    crc32: int
    sections: tuple[Section, ...] = field(default_factory=tuple)


# --------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------

_W_HEADER = struct.Struct("<4sHHIIIIQ")
_W_ROW = struct.Struct("<IIII")
_W_TABLE_HEAD = struct.Struct("<BBBBHH")
_W_PROGRAM = struct.Struct("<16I8i3Ii4I")  # words 0-15, 16-23 i32, 24-26, 27 i32, 28-31


def _align(n: int) -> int:
    return -(-n // SECTION_ALIGN) * SECTION_ALIGN


def _pack_table(i: int, t: Table) -> bytes:
    if not isinstance(t.entries, (bytes, bytearray)) or len(t.entries) != TABLE_ENTRIES * TABLE_ENTRY_BYTES:
        n = len(t.entries) if hasattr(t.entries, "__len__") else "?"
        raise SeqBinError(f"table {i}: entries must be {TABLE_ENTRIES * TABLE_ENTRY_BYTES} bytes, got {n}.")
    head = _W_TABLE_HEAD.pack(
        TABLE_KEY_BYTES, int(t.paired), t.in_dtype.code, t.out_dtype.code, TABLE_ENTRY_BYTES, TABLE_ENTRIES
    )
    return head + bytes(t.entries)


def _pack_program(i: int, p: Program, name_offset: int) -> bytes:
    n = len(p.limits)
    if len(p.strides) != n:
        raise SeqBinError(f"{n} limits but {len(p.strides)} strides; they must have the same length.", program=i)
    if not 1 <= n <= MAX_ENTRIES:
        raise SeqBinError(f"{n} loop-nest entries; a program has 1 to {MAX_ENTRIES}.", program=i)
    pad = (0,) * (MAX_ENTRIES - n)
    opt = lambda v: NONE_U32 if v is None else v  # noqa: E731
    try:
        return _W_PROGRAM.pack(
            p.unit, name_offset, p.in_dtype.code, p.out_dtype.code, p.base, p.packet_size, p.fetch_size, n,
            *p.limits, *pad,
            *p.strides, *pad,
            p.stages, opt(p.table), opt(p.type_conversion),
            p.zero_point0,
            p.num_zero_points, p.zp_mode, p.flit_count, p.words_per_packet,
        )  # fmt: skip
    except struct.error as e:
        raise SeqBinError(f"a field does not fit its 32-bit word ({e}).", program=i) from None


def write(sb: SeqBin) -> bytes:
    """Encode ``sb`` as ``seq.bin`` 1.0 bytes (seqbin.md "Layout").

    Header, section table rows TABLES, PROGRAMS, STRINGS, then the sections in
    that order, each at the next multiple of 8 bytes, zero gaps, no tail
    padding; CRC-32 over the whole file with the crc field zero.  The output
    depends only on ``sb``.

    Raises :class:`SeqBinError` when a value does not fit its field, a name
    contains a NUL, or the result would be rejected by :func:`read` (the
    output is read back and must equal ``sb``)."""
    tables = b"".join(_pack_table(i, t) for i, t in enumerate(sb.tables))

    strings = bytearray()
    n_strings = 0
    records = []
    for i, p in enumerate(sb.programs):
        if p.name is None:
            off = NONE_U32
        else:
            if "\0" in p.name:
                raise SeqBinError(f"name {p.name!r} contains a NUL character.", program=i)
            off = len(strings)
            strings += p.name.encode("utf-8") + b"\0"
            n_strings += 1
        records.append(_pack_program(i, p, off))
    programs = b"".join(records)

    bodies = [
        (KIND_TABLES, tables, len(sb.tables)),
        (KIND_PROGRAMS, programs, len(sb.programs)),
        (KIND_STRINGS, bytes(strings), n_strings),
    ]
    rows = []
    pos = HEADER_SIZE + ROW_SIZE * len(bodies)
    layout = []
    for kind, body, count in bodies:
        pos = _align(pos)
        rows.append(_W_ROW.pack(kind, pos, len(body), count))
        layout.append((pos, body))
        pos += len(body)
    file_size = pos
    if file_size > 0xFFFFFFFF:
        raise SeqBinError(f"the file would be {file_size} bytes, more than a u32 file_size can hold.")

    out = bytearray(file_size)
    out[HEADER_SIZE : HEADER_SIZE + ROW_SIZE * len(rows)] = b"".join(rows)
    for off, body in layout:
        out[off : off + len(body)] = body
    out[0:HEADER_SIZE] = _W_HEADER.pack(MAGIC, VERSION_MAJOR, VERSION_MINOR, 0, len(rows), file_size, 0, 0)
    crc = zlib.crc32(bytes(out)) & 0xFFFFFFFF
    out[20:24] = struct.pack("<I", crc)
    data = bytes(out)

    try:
        back = read(data)
    except SeqBinError as e:
        raise SeqBinError(e.detail, program=e.program, text=f"refusing to write an invalid seq.bin: {e}") from None
    if back != _normalised(sb):
        raise SeqBinError("internal error: the written seq.bin does not read back as the input.")
    return data


def _normalised(sb: SeqBin) -> SeqBin:
    """``sb`` with sequences as tuples and table entries as bytes, for the
    read-back comparison."""
    tabs = tuple(Table(bool(t.paired), t.in_dtype, t.out_dtype, bytes(t.entries)) for t in sb.tables)
    progs = tuple(replace(p, limits=tuple(p.limits), strides=tuple(p.strides)) for p in sb.programs)
    return SeqBin(tabs, progs)


# --------------------------------------------------------------------------
# Reader (independent of the writer: byte slicing + int.from_bytes)
# --------------------------------------------------------------------------


def _u(data: bytes, off: int, n: int) -> int:
    return int.from_bytes(data[off : off + n], "little")


def _i32(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


_CAST_BY_CODE: dict[int, tuple[ElementType, ElementType]] = {c: pair for pair, c in CAST_CODES.items()}
_ZP_BY_MODE = {r.mode: r for r in ZERO_POINT.values()}


def _dtype(code: int, where: str) -> ElementType:
    t = BY_CODE.get(code)
    if t is None:
        raise SeqBinError(f"{where} is {code}, which is not a dtype code (1 to {max(BY_CODE)}).")
    return t


def read(data: bytes) -> SeqBin:
    """Decode and validate a ``seq.bin`` (seqbin.md, hardware.md §2-3).

    Accepts any section order and any ``section_count >= 1`` that follows the
    rules.  Raises :class:`SeqBinError` for every malformed or illegal file;
    never any other exception, and never allocates in proportion to a
    declared count before checking it against the file size."""
    return read_info(data)[0]


def read_info(data: bytes) -> tuple[SeqBin, FileInfo]:
    """:func:`read`, also returning the header and section table."""
    data = bytes(data)
    n = len(data)
    if n < HEADER_SIZE:
        raise SeqBinError(f"file is {n} bytes, shorter than the {HEADER_SIZE}-byte header.")
    if data[0:4] != MAGIC:
        raise SeqBinError(f"wrong magic: expected {MAGIC!r}, got {data[0:4]!r}.")
    major, minor = _u(data, 4, 2), _u(data, 6, 2)
    if major != VERSION_MAJOR:
        raise SeqBinError(f"unsupported version {major}.{minor}: this reader supports major version {VERSION_MAJOR}.")
    file_size = _u(data, 16, 4)
    if file_size != n:
        raise SeqBinError(f"file_size says {file_size} bytes but the file has {n} bytes (truncated or padded).")
    crc = _u(data, 20, 4)
    actual = zlib.crc32(data[:20] + b"\0\0\0\0" + data[24:]) & 0xFFFFFFFF
    if crc != actual:
        raise SeqBinError(f"bad CRC: header says 0x{crc:08x}, file has 0x{actual:08x}.")
    flags = _u(data, 8, 4)
    if flags != 0:
        raise SeqBinError(f"flags is 0x{flags:08x}; version 1 defines no flags, so it must be 0.")
    reserved = _u(data, 24, 8)
    if reserved != 0:
        raise SeqBinError(f"reserved header field is 0x{reserved:x}; it must be 0.")

    count = _u(data, 12, 4)
    if count == 0:
        raise SeqBinError("section_count is 0; a file has at least one section.")
    table_end = HEADER_SIZE + ROW_SIZE * count
    if table_end > n:
        raise SeqBinError(
            f"the section table ({count} rows, ending at byte {table_end}) runs past the end of the file ({n} bytes)."
        )

    sections: dict[int, Section] = {}
    rows: list[Section] = []
    first_row: dict[int, int] = {}
    for r in range(count):
        o = HEADER_SIZE + ROW_SIZE * r
        s = Section(_u(data, o, 4), _u(data, o + 4, 4), _u(data, o + 8, 4), _u(data, o + 12, 4))
        if s.kind not in KIND_NAMES:
            raise SeqBinError(
                f"section row {r}: unknown section kind {s.kind} (known: 1 TABLES, 2 PROGRAMS, 3 STRINGS)."
            )
        if s.kind in sections:
            raise SeqBinError(f"section row {r}: duplicate {s.kind_name} section (first in row {first_row[s.kind]}).")
        if s.offset + s.size > n:
            raise SeqBinError(
                f"section row {r} ({s.kind_name}): bytes [{s.offset}, {s.offset + s.size}) run past the end "
                f"of the file ({n} bytes)."
            )
        if s.size and s.offset < table_end:
            raise SeqBinError(
                f"section row {r} ({s.kind_name}): bytes [{s.offset}, {s.offset + s.size}) overlap the header "
                f"and section table (bytes [0, {table_end}))."
            )
        sections[s.kind] = s
        first_row[s.kind] = r
        rows.append(s)

    spans = sorted((s.offset, s.offset + s.size, s.kind_name) for s in rows if s.size)
    for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:]):
        if b0 < a1:
            raise SeqBinError(f"sections {an} (bytes [{a0}, {a1})) and {bn} (bytes [{b0}, {b1})) overlap.")

    for kind, rec in ((KIND_TABLES, TABLE_RECORD_SIZE), (KIND_PROGRAMS, PROGRAM_RECORD_SIZE)):
        s = sections.get(kind)
        if s is not None and s.size != s.count * rec:
            raise SeqBinError(
                f"{s.kind_name} section: size {s.size} bytes is not count {s.count} x {rec}-byte records "
                f"({s.count * rec} bytes)."
            )
    strings = b""
    if (s := sections.get(KIND_STRINGS)) is not None:
        strings = data[s.offset : s.offset + s.size]
        if strings and strings[-1] != 0:
            raise SeqBinError(
                f"STRINGS section: the last string (at the end, byte {s.offset + s.size - 1}) is not NUL-terminated."
            )
        if strings.count(0) != s.count:
            raise SeqBinError(
                f"STRINGS section: count says {s.count} strings but the section holds {strings.count(0)}."
            )

    tables: list[Table] = []
    if (s := sections.get(KIND_TABLES)) is not None:
        for i in range(s.count):
            at = s.offset + i * TABLE_RECORD_SIZE
            tables.append(_read_table(i, data[at : at + TABLE_RECORD_SIZE]))

    programs: list[Program] = []
    if (s := sections.get(KIND_PROGRAMS)) is not None:
        for i in range(s.count):
            rec = data[s.offset + i * PROGRAM_RECORD_SIZE : s.offset + (i + 1) * PROGRAM_RECORD_SIZE]
            programs.append(_read_program(i, rec, tables, KIND_TABLES in sections, strings, KIND_STRINGS in sections))

    info = FileInfo(major, minor, n, crc, tuple(rows))
    return SeqBin(tuple(tables), tuple(programs)), info


def _read_table(i: int, rec: bytes) -> Table:
    w = f"table {i}"
    key_bytes, paired, in_code, out_code = rec[0], rec[1], rec[2], rec[3]
    entry_bytes, entries = _u(rec, 4, 2), _u(rec, 6, 2)
    if key_bytes != TABLE_KEY_BYTES:
        raise SeqBinError(f"{w}: key_bytes is {key_bytes}; it must be {TABLE_KEY_BYTES}.")
    if paired not in (0, 1):
        raise SeqBinError(f"{w}: paired is {paired}; it must be 0 or 1.")
    src = _dtype(in_code, f"{w}: in_dtype")
    dst = _dtype(out_code, f"{w}: out_dtype")
    if entry_bytes != TABLE_ENTRY_BYTES:
        raise SeqBinError(f"{w}: entry_bytes is {entry_bytes}; it must be {TABLE_ENTRY_BYTES}.")
    if entries != TABLE_ENTRIES:
        raise SeqBinError(f"{w}: entries is {entries}; it must be {TABLE_ENTRIES}.")
    if (src, dst) not in LOOKUP_TABLES:
        raise SeqBinError(f"{w}: {src} -> {dst} is not a lookup table the hardware supports (hardware.md §2.1).")
    want = LOOKUP_TABLES[(src, dst)]
    if bool(paired) != want:
        raise SeqBinError(
            f"{w}: paired is {paired} but the {src} -> {dst} table is {'paired' if want else 'non-paired'}."
        )
    return Table(bool(paired), src, dst, bytes(rec[8:]))


def _read_program(
    i: int, rec: bytes, tables: list[Table], has_tables: bool, strings: bytes, has_strings: bool
) -> Program:
    w = [_u(rec, 4 * k, 4) for k in range(PROGRAM_WORDS)]
    P = f"program {i}"

    def bad(msg: str) -> SeqBinError:
        return SeqBinError(msg, program=i)

    unit = w[0]
    if unit not in (0, 1):
        raise bad(f"unit (word 0) is {unit}; it must be 0 (main) or 1 (sub).")

    name: str | None = None
    off = w[1]
    if off != NONE_U32:
        if not has_strings:
            raise bad(f"name (word 1) is offset {off} but the file has no STRINGS section.")
        if off >= len(strings):
            raise bad(f"name (word 1) is offset {off}, outside the {len(strings)}-byte STRINGS section.")
        if off > 0 and strings[off - 1] != 0:
            raise bad(f"name (word 1) is offset {off}, which is not the start of a string in STRINGS.")
        end = strings.find(b"\0", off)
        if end < 0:
            raise bad(f"name (word 1) at STRINGS offset {off} is not NUL-terminated.")
        try:
            name = strings[off:end].decode("utf-8")
        except UnicodeDecodeError as e:
            raise bad(f"name (word 1) at STRINGS offset {off} is not valid UTF-8 ({e.reason}).") from None

    in_t = _dtype(w[2], f"{P}: in_dtype (word 2)")
    out_t = _dtype(w[3], f"{P}: out_dtype (word 3)")
    if in_t.in_flight_only:
        raise bad(f"in_dtype (word 2) is {in_t}, which never lives in memory (only the zero-point stage makes it).")
    base, packet, fetch, n = w[4], w[5], w[6], w[7]

    if not 1 <= n <= MAX_ENTRIES:
        raise bad(f"num_entries (word 7) is {n}; it must be 1 to {MAX_ENTRIES}.")
    limits = tuple(w[8 : 8 + n])
    strides = tuple(_i32(v) for v in w[16 : 16 + n])
    for k in range(MAX_ENTRIES):
        if k < n:
            if not 1 <= limits[k] <= MAX_ENTRY_SIZE:
                raise bad(f"limits[{k}] (word {8 + k}) is {limits[k]}; a used entry is 1 to {MAX_ENTRY_SIZE}.")
        else:
            if w[8 + k] != 0:
                raise bad(f"limits[{k}] (word {8 + k}) is {w[8 + k]} but only {n} entries are used; it must be 0.")
            if w[16 + k] != 0:
                raise bad(
                    f"strides[{k}] (word {16 + k}) is {_i32(w[16 + k])} but only {n} entries are used; it must be 0."
                )

    if packet < 1:
        raise bad(f"packet_size (word 5) is {packet}; it must be at least 1.")
    inner_n, inner_s = limits[-1], strides[-1]
    if packet != 1 and inner_s not in (0, 1):
        raise bad(
            f"the innermost entry [{inner_n} : {inner_s}] cannot hold packets of {packet} elements "
            f"(it needs stride 0 or 1; hardware.md §3)."
        )

    if fetch not in READ_BYTES:
        raise bad(f"fetch_size (word 6) is {fetch}; it must be one of {', '.join(map(str, READ_BYTES))}.")
    if unit == 1 and fetch != SUB_READ_BYTES:
        raise bad(f"fetch_size (word 6) is {fetch}; the sub unit reads exactly {SUB_READ_BYTES} bytes.")
    if (fetch * 8) % in_t.bits:
        raise bad(f"fetch_size (word 6) {fetch} bytes is not a whole number of {in_t} elements.")
    fetch_elems = fetch * 8 // in_t.bits
    wpp = w[31]
    if wpp * fetch_elems != packet:
        raise bad(
            f"words_per_packet (word 31) is {wpp}, but {wpp} reads of {fetch_elems} {in_t} elements "
            f"(fetch_size {fetch}) are {wpp * fetch_elems} elements, not packet_size {packet}."
        )
    # Largest access the loop nest allows (hardware.md §3: contiguous_run, max_access_size).
    run = 1
    if inner_s != 0:
        run = inner_n
        for k in range(n - 2, -1, -1):
            if strides[k] != limits[k + 1] * strides[k + 1]:
                break
            run *= limits[k]
    max_access = math.gcd(packet, run)
    if max_access % fetch_elems:
        raise bad(
            f"fetch_size (word 6) {fetch} bytes reads {fetch_elems} elements, which does not divide the "
            f"largest contiguous access of {max_access} elements (hardware.md §3)."
        )

    stages = w[24]
    if stages & ~_ALL_STAGES:
        raise bad(f"stages (word 24) is 0x{stages:x}; only bits 0-2 are defined.")

    t = in_t
    # Stage 1: table lookup.
    table: int | None = None
    if stages & STAGE_TABLE_LOOKUP:
        if w[25] == NONE_U32:
            raise bad("the table_lookup stage (stages bit 0) is on but tables (word 25) is 0xFFFFFFFF.")
        if unit == 1:
            raise bad("the table_lookup stage (stages bit 0) is on in the sub unit, which has no table register.")
        if not has_tables:
            raise bad(f"tables (word 25) is {w[25]} but the file has no TABLES section.")
        if w[25] >= len(tables):
            raise bad(f"tables (word 25) is {w[25]}, out of range for {len(tables)} tables.")
        table = w[25]
        tab = tables[table]
        if tab.in_dtype != t:
            raise bad(
                f"tables (word 25) selects table {table} ({tab.in_dtype} -> {tab.out_dtype}) but in_dtype is {t}."
            )
        t = tab.out_dtype
    elif w[25] != NONE_U32:
        raise bad(
            f"tables (word 25) is {w[25]} but the table_lookup stage (stages bit 0) is off; it must be 0xFFFFFFFF."
        )

    # Stage 2: type conversion.
    conv: int | None = None
    if stages & STAGE_TYPE_CONVERSION:
        code = w[26]
        if code == NONE_U32:
            raise bad("the type_conversion stage (stages bit 1) is on but type_conversion (word 26) is 0xFFFFFFFF.")
        if code not in _CAST_BY_CODE:
            raise bad(f"type_conversion (word 26) is {code}; cast codes are 0 to {max(_CAST_BY_CODE)}.")
        src, dst = _CAST_BY_CODE[code]
        if src != t:
            raise bad(
                f"type_conversion (word 26) is code {code} ({src} -> {dst}) but the value entering the cast is {t}."
            )
        if fetch_elems * dst.storage_bytes > FLIT_BYTES:
            raise bad(
                f"one read of {fetch_elems} elements casts to {fetch_elems * dst.storage_bytes} bytes of {dst}, "
                f"more than one {FLIT_BYTES}-byte flit (hardware.md §2.2)."
            )
        conv = code
        t = dst
    elif w[26] != NONE_U32:
        raise bad(
            f"type_conversion (word 26) is {w[26]} but the type_conversion stage (stages bit 1) is off; "
            f"it must be 0xFFFFFFFF."
        )

    # Stage 3: zero point.
    zp0, nzp, mode = _i32(w[27]), w[28], w[29]
    if stages & STAGE_ZERO_POINT:
        rule = ZERO_POINT.get(t)
        if rule is None:
            raise bad(f"the zero_point stage (stages bit 2) is on but its input is {t}, not i4 or i8.")
        if nzp != 1:
            raise bad(f"num_zero_points (word 28) is {nzp} but the zero_point stage is on; it must be 1.")
        if mode != rule.mode:
            raise bad(
                f"zp_mode (word 29) is {mode} but a {rule.source} -> {rule.result} zero point is mode {rule.mode}."
            )
        if not rule.lo <= zp0 <= rule.hi:
            raise bad(f"zero_point0 (word 27) is {zp0}, outside [{rule.lo}, {rule.hi}] for {rule.source}.")
        t = rule.result
    else:
        if nzp != 0:
            raise bad(
                f"num_zero_points (word 28) is {nzp} but the zero_point stage (stages bit 2) is off; it must be 0."
            )
        if mode != 0:
            raise bad(f"zp_mode (word 29) is {mode} but the zero_point stage (stages bit 2) is off; it must be 0.")
        if zp0 != 0:
            raise bad(f"zero_point0 (word 27) is {zp0} but the zero_point stage (stages bit 2) is off; it must be 0.")

    if t != out_t:
        raise bad(f"out_dtype (word 3) is {out_t} but the stages turn in_dtype {in_t} into {t}.")
    flits = w[30]
    want = target.flit_count(packet, out_t)
    if flits != want:
        raise bad(f"flit_count (word 30) is {flits}; a packet of {packet} {out_t} elements occupies {want} flits.")

    return Program(
        name=name, unit=unit, in_dtype=in_t, out_dtype=out_t, base=base, packet_size=packet, fetch_size=fetch,
        limits=limits, strides=strides, stages=stages, table=table, type_conversion=conv, zero_point0=zp0,
        num_zero_points=nzp, zp_mode=mode, flit_count=flits, words_per_packet=wpp,
    )  # fmt: skip


# --------------------------------------------------------------------------
# Disassembly
# --------------------------------------------------------------------------


def table_matches_reference(t: Table) -> bool:
    """Whether ``t``'s entries equal ``target.lookup_table`` for its pair
    (``False`` for a pair without a reference table)."""
    if (t.in_dtype, t.out_dtype) not in LOOKUP_TABLES:
        return False
    ref = struct.pack(f"<{TABLE_ENTRIES}H", *target.table_entries(t.in_dtype, t.out_dtype))
    return bytes(t.entries) == ref and bool(t.paired) == LOOKUP_TABLES[(t.in_dtype, t.out_dtype)]


def format_value(bits: int, t: ElementType) -> str:
    """Decode the encoding ``bits`` of float type ``t`` (8 or 16 bits) and
    format it: shortest round-trip decimal without a trailing ``.0``,
    ``inf``/``-inf``, ``nan``/``-nan`` (sign bit)."""
    import numpy as np  # disassembly only: the compile path never formats values

    raw = np.array([bits], dtype=np.uint8 if t.bits <= 8 else np.uint16)
    v = float(raw.view(t.np_dtype)[0])
    if math.isnan(v):
        return "-nan" if bits >> (max(8, t.bits) - 1) & 1 else "nan"
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    r = repr(v)
    return r[:-2] if r.endswith(".0") else r


def table_cells(t: Table) -> list[str]:
    """The 256 decoded cells of a table, by key: ``"(lo,hi)"`` for a paired
    table, one value for a non-paired one."""
    vals = t.values()
    if t.paired:
        return [f"({format_value(v & 0xFF, t.out_dtype)},{format_value(v >> 8, t.out_dtype)})" for v in vals]
    return [format_value(v, t.out_dtype) for v in vals]


def sequencer_text(p: Program) -> str:
    """``[limit : stride, ...] : packet_size`` (hardware.md §3 notation)."""
    return "[" + ", ".join(f"{n} : {s}" for n, s in zip(p.limits, p.strides)) + f"] : {p.packet_size}"


def stage_names(stages: int) -> list[str]:
    """Names of the stage bits set in ``stages`` (PROGRAMS word 24), in
    pipeline order (hardware.md §2)."""
    return [name for bit, name in STAGE_NAMES if stages & bit]


def _zp_text(p: Program) -> str:
    if not p.stages & STAGE_ZERO_POINT:
        return "off"
    r = _ZP_BY_MODE.get(p.zp_mode)
    return f"{p.zero_point0} ({r.source} -> {r.result})" if r else f"{p.zero_point0} (zp_mode {p.zp_mode})"


def _cast_text(code: int | None) -> str:
    if code is None:
        return "none"
    pair = _CAST_BY_CODE.get(code)
    return f"{code} ({pair[0]} -> {pair[1]})" if pair else str(code)


def _resolve(sb: SeqBin | bytes) -> tuple[SeqBin, FileInfo]:
    if isinstance(sb, SeqBin):
        return read_info(write(sb))
    return read_info(sb)


def disassemble(sb: SeqBin | bytes) -> str:
    """Human-readable text of a ``seq.bin`` (format: module docstring).

    Given bytes, the header lines describe that file (its version, size, CRC,
    section layout); given a :class:`SeqBin`, they describe ``write(sb)``.
    Raises :class:`SeqBinError` for an invalid file or content."""
    sb, info = _resolve(sb)
    out = [
        f"seq.bin version {info.version_major}.{info.version_minor}, {info.file_size} bytes, crc32 0x{info.crc32:08x}",
        f"sections: {len(info.sections)}",
    ]
    out += [f"section {s.kind_name}: offset {s.offset}, size {s.size}, count {s.count}" for s in info.sections]
    out.append(f"tables: {len(sb.tables)}")
    for i, t in enumerate(sb.tables):
        mark = "" if table_matches_reference(t) else " (entries differ from the reference conversion)"
        out.append(f"table {i}: {t.in_dtype} -> {t.out_dtype}, {'paired' if t.paired else 'non-paired'}{mark}")
        out.append(
            "  layout: row = high nibble, column = low nibble, cell = (lo,hi)"
            if t.paired
            else "  layout: key = row * 16 + column"
        )
        cells = table_cells(t)
        widths = [max(len(cells[16 * r + c]) for r in range(16)) for c in range(16)]
        out.append("  col:  " + " ".join(f"{c:x}".rjust(widths[c]) for c in range(16)))
        for r in range(16):
            out.append(f"  row {r:x}: " + " ".join(cells[16 * r + c].rjust(widths[c]) for c in range(16)))
    out.append(f"programs: {len(sb.programs)}")
    for i, p in enumerate(sb.programs):
        name = "(unnamed)" if p.name is None else json.dumps(p.name, ensure_ascii=False)
        stages = stage_names(p.stages)
        out += [
            f"program {i}: {name}",
            f"  unit: {UNIT_NAMES[p.unit]}",
            f"  in_dtype: {p.in_dtype}",
            f"  out_dtype: {p.out_dtype}",
            f"  base: 0x{p.base:x} ({p.base})",
            f"  sequencer: {sequencer_text(p)}",
            f"  fetch_size: {p.fetch_size}",
            f"  words_per_packet: {p.words_per_packet}",
            f"  stages: {', '.join(stages) if stages else 'none'}",
            f"  table: {'none' if p.table is None else p.table}",
            f"  type_conversion: {_cast_text(p.type_conversion)}",
            f"  zero_point: {_zp_text(p)}",
            f"  flit_count: {p.flit_count}",
        ]
    return "\n".join(out) + "\n"


def to_json(sb: SeqBin | bytes) -> dict[str, Any]:
    """A ``json.dumps``-able dict of a ``seq.bin`` for ``fetchc dis --json``;
    keys in a fixed order.  Header facts as in :func:`disassemble`.  Raises
    :class:`SeqBinError` for an invalid file or content."""
    sb, info = _resolve(sb)
    return {
        "version": f"{info.version_major}.{info.version_minor}",
        "file_size": info.file_size,
        "crc32": info.crc32,
        "sections": [
            {"kind": s.kind_name, "offset": s.offset, "size": s.size, "count": s.count} for s in info.sections
        ],
        "tables": [
            {
                "index": i,
                "in_dtype": t.in_dtype.name,
                "out_dtype": t.out_dtype.name,
                "paired": t.paired,
                "matches_reference": table_matches_reference(t),
                "entries": t.values(),
            }
            for i, t in enumerate(sb.tables)
        ],
        "programs": [
            {
                "index": i,
                "name": p.name,
                "unit": UNIT_NAMES[p.unit],
                "in_dtype": p.in_dtype.name,
                "out_dtype": p.out_dtype.name,
                "base": p.base,
                "packet_size": p.packet_size,
                "fetch_size": p.fetch_size,
                "num_entries": p.num_entries,
                "limits": list(p.limits),
                "strides": list(p.strides),
                "sequencer": sequencer_text(p),
                "stages": stage_names(p.stages),
                "table": p.table,
                "type_conversion": p.type_conversion,
                "zero_point0": p.zero_point0,
                "num_zero_points": p.num_zero_points,
                "zp_mode": p.zp_mode,
                "flit_count": p.flit_count,
                "words_per_packet": p.words_per_packet,
            }
            for i, p in enumerate(sb.programs)
        ],
    }
