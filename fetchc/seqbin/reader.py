"""``bytes -> SeqBin``: decode and validate a ``seq.bin`` (seqbin.md,
hardware.md §2-3).

Independent of the writer: byte slicing and ``int.from_bytes``.  The header,
section table, STRINGS and word-level checks (codes, unused entries, name
offsets) are here; the hardware rules of every TABLES and PROGRAMS record are
:mod:`fetchc.target.record`'s and the MANIFEST's
:mod:`fetchc.seqbin.manifest`'s, their messages prefixed with the record or
section they are about.  Every error is a :class:`SeqBinError` whose message
is one sentence ending in a period.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import replace
from itertools import pairwise

from fetchc import wording
from fetchc.seqbin.fields import PROGRAM_LAYOUT, WORDS, Layout, table_layout
from fetchc.seqbin.format import (
    HEADER_SIZE,
    KIND_MANIFEST,
    KIND_NAMES,
    KIND_PROGRAMS,
    KIND_STRINGS,
    KIND_TABLES,
    MAGIC,
    NONE_U32,
    PROGRAM_RECORD_SIZE,
    ROW_SIZE,
    TABLE_RECORD_SIZE_1_1,
    VERSION_MAJOR,
    FileInfo,
    Program,
    Section,
    SeqBin,
    SeqBinError,
    Table,
)
from fetchc.seqbin.manifest import Manifest, ManifestError
from fetchc.target import BY_CODE, TABLE_ENTRIES, TABLE_ENTRY_BYTES, ElementType
from fetchc.target.record import (
    FIELDS,
    RecordError,
    check_entry_count,
    check_in_dtype,
    check_program,
    check_table,
    check_unit,
)

__all__ = ["read", "read_info"]


def _u(data: bytes, off: int, n: int) -> int:
    return int.from_bytes(data[off : off + n], "little")


def _i32(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


def _dtype(code: int, where: str) -> ElementType:
    t = BY_CODE.get(code)
    if t is None:
        raise SeqBinError(f"{where} is {code}, which is not a dtype code (1 to {max(BY_CODE)}).")
    return t


def read(data: bytes) -> SeqBin:
    """Decode and validate a ``seq.bin`` (seqbin.md, hardware.md §2-3).

    Accepts any section order and any ``section_count >= 1`` that follows the
    rules: version 1.2 (24-byte TABLES headers, function tables), 1.1 and
    1.0 (8-byte TABLES headers; 1.0 has no MANIFEST: ``SeqBin.manifest`` is
    ``None``).
    Raises :class:`SeqBinError` for every malformed or illegal file; never
    any other exception, and never allocates in proportion to a declared
    count before checking it against the file size."""
    return read_info(data)[0]


def read_info(data: bytes) -> tuple[SeqBin, FileInfo]:
    """:func:`read`, also returning the header and section table."""
    data = bytes(data)
    major, minor, crc = _check_header(data)
    sections, rows = _read_sections(data, minor)
    strings = _read_strings(data, sections.get(KIND_STRINGS))
    tables: list[Table] = []
    if (s := sections.get(KIND_TABLES)) is not None:
        tables = _read_tables(data, s, table_layout(minor))
    programs: list[Program] = []
    if (s := sections.get(KIND_PROGRAMS)) is not None:
        pairs = [(t.in_dtype, t.out_dtype) for t in tables] if KIND_TABLES in sections else None
        for i in range(s.count):
            rec = data[s.offset + i * PROGRAM_RECORD_SIZE : s.offset + (i + 1) * PROGRAM_RECORD_SIZE]
            programs.append(_read_program(i, rec, pairs, strings, KIND_STRINGS in sections))
    manifest = None
    if (s := sections.get(KIND_MANIFEST)) is not None:
        manifest = _read_manifest(data[s.offset : s.offset + s.size], programs)
    info = FileInfo(major, minor, len(data), crc, tuple(rows))
    return SeqBin(tuple(tables), tuple(programs), manifest), info


def _check_header(data: bytes) -> tuple[int, int, int]:
    n = len(data)
    if n < HEADER_SIZE:
        raise SeqBinError(f"file is {n} bytes, shorter than the {HEADER_SIZE}-byte header.")
    if data[0:4] != MAGIC:
        hint = ""
        if re.match(rb"\s*(?://|#\w|!\w|func\.func|builtin\.module|module\b|\"builtin\.module\")", data[:256]):
            hint = " This looks like MLIR text: compile it first (fetchc in.mlir -o seq.bin)."
        raise SeqBinError(f"wrong magic: expected {MAGIC!r}, got {data[0:4]!r}.{hint}")
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
    return major, minor, crc


def _read_sections(data: bytes, minor: int) -> tuple[dict[int, Section], list[Section]]:
    n = len(data)
    count = _u(data, 12, 4)
    if count == 0:
        raise SeqBinError("section_count is 0; a file has at least one section.")
    table_end = HEADER_SIZE + ROW_SIZE * count
    if table_end > n:
        raise SeqBinError(
            f"the section table ({wording.count(count, 'row')}, ending at byte {table_end}) runs past the end of "
            f"the file ({n} bytes)."
        )
    sections: dict[int, Section] = {}
    rows: list[Section] = []
    first_row: dict[int, int] = {}
    known = ", ".join(f"{k} {v}" for k, v in KIND_NAMES.items())
    for r in range(count):
        o = HEADER_SIZE + ROW_SIZE * r
        s = Section(_u(data, o, 4), _u(data, o + 4, 4), _u(data, o + 8, 4), _u(data, o + 12, 4))
        if s.kind not in KIND_NAMES:
            raise SeqBinError(f"section row {r}: unknown section kind {s.kind} (known: {known}).")
        if s.kind == KIND_MANIFEST and minor == 0:
            raise SeqBinError(f"section row {r}: a version 1.0 file has no MANIFEST section (it came with 1.1).")
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
    for (a0, a1, an), (b0, b1, bn) in pairwise(spans):
        if b0 < a1:
            raise SeqBinError(f"sections {an} (bytes [{a0}, {a1})) and {bn} (bytes [{b0}, {b1})) overlap.")
    fixed = [(KIND_PROGRAMS, PROGRAM_RECORD_SIZE)] + ([(KIND_TABLES, TABLE_RECORD_SIZE_1_1)] if minor < 2 else [])
    for kind, rec in fixed:
        sec = sections.get(kind)
        if sec is not None and sec.size != sec.count * rec:
            raise SeqBinError(
                f"{sec.kind_name} section: size {sec.size} bytes is not count {sec.count} x {rec}-byte records "
                f"({sec.count * rec} bytes)."
            )
    if (sec := sections.get(KIND_MANIFEST)) is not None and (sec.count != 1 or sec.size == 0):
        raise SeqBinError(
            f"MANIFEST section: count is {sec.count} and size {sec.size} bytes; it holds exactly one JSON document "
            f"(count 1, size above 0)."
        )
    return sections, rows


def _read_strings(data: bytes, s: Section | None) -> bytes:
    if s is None:
        return b""
    strings = data[s.offset : s.offset + s.size]
    if strings and strings[-1] != 0:
        raise SeqBinError(
            f"STRINGS section: the last string (at the end, byte {s.offset + s.size - 1}) is not NUL-terminated."
        )
    if strings.count(0) != s.count:
        raise SeqBinError(f"STRINGS section: count says {s.count} strings but the section holds {strings.count(0)}.")
    return strings


def _read_tables(data: bytes, s: Section, layout: Layout) -> list[Table]:
    """The TABLES records of section ``s``, each a ``layout`` header and its
    entries, back to back up to the section's end."""
    smallest = layout.size + TABLE_ENTRIES * TABLE_ENTRY_BYTES
    if s.count * smallest > s.size:
        raise SeqBinError(
            f"TABLES section: count {wording.count(s.count, 'record')} {'needs' if s.count == 1 else 'need'} at least "
            f"{s.count * smallest} bytes "
            f"({smallest} each), but its size is {s.size} bytes."
        )
    tables: list[Table] = []
    at, end = s.offset, s.offset + s.size
    for i in range(s.count):
        if end - at < layout.size:
            raise SeqBinError(
                f"table {i}: its {layout.size}-byte header at byte {at} runs past the end of the TABLES section "
                f"(byte {end})."
            )
        t, n = _read_table(i, data[at : at + layout.size], layout)
        body = at + layout.size
        if body + n * TABLE_ENTRY_BYTES > end:
            raise SeqBinError(
                f"table {i}: its {n} entries ({n * TABLE_ENTRY_BYTES} bytes from byte {body}) run past the end of "
                f"the TABLES section (byte {end})."
            )
        at = body + n * TABLE_ENTRY_BYTES
        tables.append(replace(t, entries=data[body:at]))
    if at != end:
        raise SeqBinError(
            f"TABLES section: {wording.count(end - at, 'byte')} {'follows' if end - at == 1 else 'follow'} its "
            f"{wording.count(s.count, 'record')}; its size must end at the last record."
        )
    return tables


def _read_table(i: int, head: bytes, layout: Layout) -> tuple[Table, int]:
    """Table ``i``'s header, checked (:func:`check_table`), as a
    :class:`Table` without entries, and its entry count."""
    stored = layout.unpack(head)
    try:
        d = layout.decode(stored, FIELDS)
        check_table(
            d["in_dtype"], d["out_dtype"], d["paired"], d.get("function"), d.get("scale", 1.0),
            d.get("zero_point", 0), key_bytes=d["key_bytes"], entry_bytes=d["entry_bytes"],
            entries=stored["entries"],
        )  # fmt: skip
    except RecordError as e:
        raise SeqBinError(f"table {i}: {e.message}.", field=e.field) from None
    if stored.get("reserved", 0) != 0:
        raise SeqBinError(f"table {i}: reserved (bytes 20-23) is {stored['reserved']}; it must be 0.", field="reserved")
    del d["key_bytes"], d["entry_bytes"]
    return Table(entries=b"", **d), stored["entries"]


def _read_name(i: int, off: int, strings: bytes, has_strings: bool) -> str | None:
    def bad(msg: str) -> SeqBinError:
        return SeqBinError(f"name (word 1) {msg}.", program=i, field="name")

    if off == NONE_U32:
        return None
    if not has_strings:
        raise bad(f"is offset {off} but the file has no STRINGS section")
    if off >= len(strings):
        raise bad(f"is offset {off}, outside the {len(strings)}-byte STRINGS section")
    if off > 0 and strings[off - 1] != 0:
        raise bad(f"is offset {off}, which is not the start of a string in STRINGS")
    end = strings.find(b"\0", off)
    if end < 0:
        raise bad(f"at STRINGS offset {off} is not NUL-terminated")
    try:
        return strings[off:end].decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad(f"at STRINGS offset {off} is not valid UTF-8 ({e.reason})") from None


def _read_program(i: int, rec: bytes, tables: list | None, strings: bytes, has_strings: bool) -> Program:
    """Decode PROGRAMS record ``i`` and check it (:func:`check_program`,
    naming words).  ``tables``: the TABLES pairs, ``None`` without a TABLES
    section."""
    stored = PROGRAM_LAYOUT.unpack(rec)
    try:
        check_unit(stored["unit"], WORDS)
        name = _read_name(i, stored["name"], strings, has_strings)
        check_entry_count(stored["num_entries"], WORDS)
        p = Program(name=name, **PROGRAM_LAYOUT.decode(stored, WORDS))
        check_in_dtype(p.in_dtype, WORDS)
        check_program(p, tables, WORDS)
    except RecordError as e:
        raise SeqBinError(f"{e.message}.", program=i, field=e.field) from None
    return p


def _read_manifest(body: bytes, programs: list[Program]) -> Manifest:
    try:
        m = Manifest.from_bytes(body)
        m.check(programs)
    except ManifestError as e:
        raise SeqBinError(f"MANIFEST: {e}.", field="manifest") from None
    return m
