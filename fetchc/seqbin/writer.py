"""``SeqBin -> bytes``: pack a :class:`~fetchc.seqbin.format.SeqBin` into the
seqbin.md layout.

The writer only packs and validates its input with the rules the reader
applies (:mod:`fetchc.target.record` for every table and program,
:meth:`Manifest.check_shape` / :meth:`Manifest.check` for the MANIFEST), so it
never produces a file :func:`fetchc.seqbin.read` rejects; it does not read its
output back.  Spec: seqbin.md "Layout".
"""

from __future__ import annotations

import struct
import zlib

from fetchc.seqbin.fields import PROGRAM_LAYOUT, WORDS, table_layout
from fetchc.seqbin.format import (
    HEADER_SIZE,
    KIND_MANIFEST,
    KIND_PROGRAMS,
    KIND_STRINGS,
    KIND_TABLES,
    MAGIC,
    NONE_U32,
    ROW_SIZE,
    SECTION_ALIGN,
    VERSION_MAJOR,
    VERSION_MINOR,
    Program,
    SeqBin,
    SeqBinError,
    Table,
)
from fetchc.seqbin.manifest import ManifestError
from fetchc.target import MAX_ENTRIES, TABLE_ENTRIES
from fetchc.target.functions import key_count
from fetchc.target.record import RecordError, check_program, check_table

__all__ = ["write"]

_W_HEADER = struct.Struct("<4sHHIIIIQ")
_W_ROW = struct.Struct("<IIII")
_REFUSING = "refusing to write an invalid seq.bin: "


def write(sb: SeqBin) -> bytes:
    """Encode ``sb`` as ``seq.bin`` bytes (seqbin.md "Layout").

    Header, section table rows TABLES, PROGRAMS, STRINGS (and MANIFEST when
    ``sb.manifest`` is set), then the sections in that order, each at the
    next multiple of 8 bytes, zero gaps, no tail padding;
    CRC-32 over the whole file with the crc field zero.  The output depends
    only on ``sb``.  Version 1.2 (24-byte TABLES headers), except that
    content without a MANIFEST and without function tables is written as
    version 1.0 (8-byte TABLES headers), as before 1.1.

    Raises :class:`SeqBinError`: a value that does not fit its field, a name
    with a NUL or that is not valid Unicode (``program N: ...``), or content
    the reader would reject (``refusing to write an invalid seq.bin:
    program N: <the reader's message>``)."""
    minor = VERSION_MINOR
    if sb.manifest is None and all(t.function is None for t in sb.tables):
        minor = 0
    tables = b"".join(_pack_table(i, t, minor) for i, t in enumerate(sb.tables))
    pairs = [(t.in_dtype, t.out_dtype) for t in sb.tables]
    strings = bytearray()
    n_strings = 0
    records = []
    for i, p in enumerate(sb.programs):
        off = NONE_U32
        if p.name is not None:
            off = len(strings)
            strings += _name_bytes(i, p.name)
            n_strings += 1
        records.append(_pack_program(i, p, off))
        _validate_program(i, p, pairs)
    bodies = [
        (KIND_TABLES, tables, len(sb.tables)),
        (KIND_PROGRAMS, b"".join(records), len(sb.programs)),
        (KIND_STRINGS, bytes(strings), n_strings),
    ]
    if sb.manifest is not None:
        bodies.append((KIND_MANIFEST, _manifest_bytes(sb), 1))
    return _assemble(bodies, minor)


def _assemble(bodies: list[tuple[int, bytes, int]], minor: int) -> bytes:
    """The file: header, rows, then each body at the next multiple of
    :data:`SECTION_ALIGN` after zero gaps; the CRC-32 is computed piece by
    piece (crc field zero), so the bytes are copied once, by the final join."""
    rows = []
    pieces = []
    pos = HEADER_SIZE + ROW_SIZE * len(bodies)
    for kind, body, count in bodies:
        start = -(-pos // SECTION_ALIGN) * SECTION_ALIGN
        pieces += [bytes(start - pos), body]
        rows.append(_W_ROW.pack(kind, start, len(body), count))
        pos = start + len(body)
    file_size = pos
    if file_size > 0xFFFFFFFF:
        raise SeqBinError(f"the file would be {file_size} bytes, more than a u32 file_size can hold.")
    pieces[:0] = [_W_HEADER.pack(MAGIC, VERSION_MAJOR, minor, 0, len(rows), file_size, 0, 0), *rows]
    crc = 0
    for piece in pieces:
        crc = zlib.crc32(piece, crc)
    pieces[0] = _W_HEADER.pack(MAGIC, VERSION_MAJOR, minor, 0, len(rows), file_size, crc & 0xFFFFFFFF, 0)
    return b"".join(pieces)


def _pack_table(i: int, t: Table, minor: int) -> bytes:
    """TABLES record ``i`` of a version ``1.minor`` file: the header
    (:func:`~fetchc.seqbin.fields.table_layout`) and the entries."""
    n = key_count(t.in_dtype) if t.function is not None else TABLE_ENTRIES
    if not isinstance(t.entries, (bytes, bytearray)) or len(t.entries) != n * t.entry_bytes:
        got = len(t.entries) if hasattr(t.entries, "__len__") else "?"
        raise SeqBinError(f"table {i}: entries must be {n * t.entry_bytes} bytes, got {got}.")
    try:
        check_table(t.in_dtype, t.out_dtype, t.paired, t.function, t.scale, t.zero_point)
    except RecordError as e:
        detail = f"table {i}: {e.message}."
        raise SeqBinError(detail, field=e.field, text=_REFUSING + detail) from None
    layout = table_layout(minor)
    return layout.pack(layout.encode(t, {"entries": n, "reserved": 0})) + bytes(t.entries)


def _name_bytes(i: int, name: str) -> bytes:
    if "\0" in name:
        raise SeqBinError(f"name {name!r} contains a NUL character.", program=i, field="name")
    try:
        return name.encode("utf-8") + b"\0"
    except UnicodeEncodeError as e:
        raise SeqBinError(f"name {name!r} is not valid Unicode text ({e.reason}).", program=i, field="name") from None


def _pack_program(i: int, p: Program, name_offset: int) -> bytes:
    n = len(p.limits)
    if len(p.strides) != n:
        raise SeqBinError(
            f"{n} limits but {len(p.strides)} strides; they must have the same length.", program=i, field="strides"
        )
    if not 1 <= n <= MAX_ENTRIES:
        raise SeqBinError(f"{n} loop-nest entries; a program has 1 to {MAX_ENTRIES}.", program=i, field="num_entries")
    try:
        return PROGRAM_LAYOUT.pack(PROGRAM_LAYOUT.encode(p, {"name": name_offset, "num_entries": n}))
    except (struct.error, OverflowError) as e:
        raise SeqBinError(f"a field does not fit its 32-bit word ({e}).", program=i) from None


def _validate_program(i: int, p: Program, pairs: list) -> None:
    try:
        check_program(p, pairs, WORDS)
    except RecordError as e:
        detail = f"{e.message}."
        raise SeqBinError(detail, program=i, field=e.field, text=f"{_REFUSING}program {i}: {detail}") from None


def _manifest_bytes(sb: SeqBin) -> bytes:
    m = sb.manifest
    assert m is not None
    try:
        data = m.to_bytes(check_shape=True)
        m.check(sb.programs)
        return data
    except ManifestError as e:
        detail = f"MANIFEST: {e}."
        raise SeqBinError(detail, field="manifest", text=_REFUSING + detail) from None
