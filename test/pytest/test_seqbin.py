"""Tests for fetchc.seqbin (spec: seqbin.md, hardware.md §2-3).

Expected bytes, CRCs and table entries are computed here independently (struct,
zlib, ml_dtypes), never by calling the writer's helpers or target.lookup_table.
"""

from __future__ import annotations

import json
import re
import struct
import tracemalloc
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchc import seqbin
from fetchc.seqbin import Program, SeqBin, SeqBinError, Table, disassemble, read, to_json, write
from fetchc.target import (
    BF16,
    F4E2M1FN,
    F8E4M3FN,
    F8E5M2,
    F8E8M0FNU,
    F32,
    I4,
    I5,
    I8,
    I9,
    I16,
    I32,
)
from served import FETCHC

# --------------------------------------------------------------------------
# Independent helpers
# --------------------------------------------------------------------------

NONE = 0xFFFFFFFF


def fix_crc(data: bytes) -> bytes:
    """Recompute the header CRC (bytes 20..24 read as zero)."""
    b = bytearray(data)
    b[20:24] = b"\0\0\0\0"
    b[20:24] = struct.pack("<I", zlib.crc32(bytes(b)) & 0xFFFFFFFF)
    return bytes(b)


def fix_size_and_crc(data: bytes) -> bytes:
    b = bytearray(data)
    if len(b) >= 20:
        b[16:20] = struct.pack("<I", len(b))
    return fix_crc(bytes(b)) if len(b) >= 24 else bytes(b)


def put_u32(data: bytes, off: int, value: int) -> bytes:
    b = bytearray(data)
    b[off : off + 4] = struct.pack("<I", value & 0xFFFFFFFF)
    return fix_crc(bytes(b))


def put_u8(data: bytes, off: int, value: int) -> bytes:
    b = bytearray(data)
    b[off] = value
    return fix_crc(bytes(b))


def put_u16(data: bytes, off: int, value: int) -> bytes:
    b = bytearray(data)
    b[off : off + 2] = struct.pack("<H", value)
    return fix_crc(bytes(b))


def ref_paired(dst_np) -> list[int]:
    out = []
    for k in range(256):
        lo = np.array([k & 0xF], np.uint8).view(ml_dtypes.float4_e2m1fn).astype(dst_np).view(np.uint8)[0]
        hi = np.array([k >> 4], np.uint8).view(ml_dtypes.float4_e2m1fn).astype(dst_np).view(np.uint8)[0]
        out.append(int(lo) | int(hi) << 8)
    return out


def ref_unpaired(src_np) -> list[int]:
    return [
        int(np.array([k], np.uint8).view(src_np).astype(ml_dtypes.bfloat16).view(np.uint16)[0]) for k in range(256)
    ]


REF_TABLES = {
    (F4E2M1FN, F8E4M3FN): (True, lambda: ref_paired(ml_dtypes.float8_e4m3fn)),
    (F4E2M1FN, F8E5M2): (True, lambda: ref_paired(ml_dtypes.float8_e5m2)),
    (F8E4M3FN, BF16): (False, lambda: ref_unpaired(ml_dtypes.float8_e4m3fn)),
    (F8E5M2, BF16): (False, lambda: ref_unpaired(ml_dtypes.float8_e5m2)),
}


def table_record(paired: int, in_code: int, out_code: int, entries: list[int]) -> bytes:
    """A TABLES record of a 1.0 / 1.1 file: the 8-byte header."""
    return struct.pack("<BBBBHH", 1, paired, in_code, out_code, 2, 256) + struct.pack("<256H", *entries)


def table_record_12(
    paired: int, in_code: int, out_code: int, entries: list[int], *, function=0, scale=1.0, zp=0, key_bytes=None,
    entry_bytes=2, count=None, reserved=0,
) -> bytes:  # fmt: skip
    """A TABLES record of a 1.2 file: the 24-byte header (seqbin.md)."""
    key_bytes = key_bytes if key_bytes is not None else (2 if len(entries) == 65536 else 1)
    count = len(entries) if count is None else count
    head = struct.pack("<BBBBHHIfiI", key_bytes, paired, in_code, out_code, entry_bytes, function, count, scale, zp,
                       reserved)  # fmt: skip
    assert len(head) == 24
    return head + struct.pack(f"<{len(entries)}H", *entries)


def program_record(
    *, unit=0, name=0, in_code, out_code, base=0, packet, fetch, limits, strides, stages=0, tables=NONE,
    conv=NONE, zp0=0, nzp=0, zp_mode=0, flits, wpp,
) -> bytes:  # fmt: skip
    n = len(limits)
    words = [unit, name, in_code, out_code, base, packet, fetch, n]
    words += list(limits) + [0] * (8 - n)
    words += [s & 0xFFFFFFFF for s in strides] + [0] * (8 - n)
    words += [stages, tables, conv, zp0 & 0xFFFFFFFF, nzp, zp_mode, flits, wpp]
    assert len(words) == 32
    return struct.pack("<32I", *words)


def raw_file(sections, *, gap: int = 0, major=1, minor=0, flags=0, reserved=0) -> bytes:
    """A file with the given ``(kind, body, count)`` sections, in that order,
    each aligned to 8 then ``gap`` more bytes (gap filled with 0xAA)."""
    rows_end = 32 + 16 * len(sections)
    pos = rows_end
    rows, placed = [], []
    for kind, body, count in sections:
        pos = -(-pos // 8) * 8 + gap
        rows.append(struct.pack("<IIII", kind, pos, len(body), count))
        placed.append((pos, body))
        pos += len(body)
    b = bytearray(b"\xaa" * pos)
    b[32:rows_end] = b"".join(rows)
    for off, body in placed:
        b[off : off + len(body)] = body
    b[0:32] = b"FSEQ" + struct.pack("<HHIIIIQ", major, minor, flags, len(sections), pos, 0, reserved)
    return fix_crc(bytes(b))


# --------------------------------------------------------------------------
# The seqbin.md example
# --------------------------------------------------------------------------


def example_program(**kw) -> Program:
    f = dict(
        name="decode/0", unit=0, in_dtype=F4E2M1FN, out_dtype=F32, base=0x60000, packet_size=16, fetch_size=4,
        limits=(65536,), strides=(1,), stages=0b011, table=0, type_conversion=3, zero_point0=0,
        num_zero_points=0, zp_mode=0, flit_count=2, words_per_packet=2,
    )  # fmt: skip
    f.update(kw)
    return Program(**f)


def example() -> SeqBin:
    return SeqBin((Table.for_pair(F4E2M1FN, F8E4M3FN),), (example_program(),))


EX = write(example())
TABLES_AT, PROGRAMS_AT, STRINGS_AT = 80, 600, 728
P0 = PROGRAMS_AT  # program 0 record
T0 = TABLES_AT  # table 0 record


def word(i: int) -> int:
    return P0 + 4 * i


def test_example_exact_bytes():
    entries = ref_paired(ml_dtypes.float8_e4m3fn)
    body = (
        b"\0" * 0  # header + rows below
        + table_record(1, 7, 8, entries)
        + program_record(
            in_code=7, out_code=11, base=0x60000, packet=16, fetch=4, limits=[65536], strides=[1],
            stages=3, tables=0, conv=3, flits=2, wpp=2,
        )  # fmt: skip
        + b"decode/0\0"
    )
    rows = (
        struct.pack("<IIII", 1, 80, 520, 1)
        + struct.pack("<IIII", 2, 600, 128, 1)
        + struct.pack("<IIII", 3, 728, 9, 1)
    )
    size = 32 + 48 + len(body)
    assert size == 737
    head = b"FSEQ" + struct.pack("<HHIIII", 1, 0, 0, 3, size, 0) + b"\0" * 8
    expected = bytearray(head + rows + body)
    crc = zlib.crc32(bytes(expected)) & 0xFFFFFFFF
    expected[20:24] = struct.pack("<I", crc)
    assert EX == bytes(expected)
    # Spot checks straight from seqbin.md.
    assert len(EX) == 737
    assert EX[0:4] == b"FSEQ"
    assert struct.unpack_from("<HHIII", EX, 4) == (1, 0, 0, 3, 737)
    assert struct.unpack_from("<I", EX, 20)[0] == crc
    assert EX[24:32] == b"\0" * 8
    assert struct.unpack_from("<H", EX, T0 + 8 + 2 * 0x21)[0] == 0x3830
    assert EX[T0 + 8 + 2 * 0x21] == 0x30 and EX[T0 + 8 + 2 * 0x21 + 1] == 0x38
    assert struct.unpack_from("<I", EX, word(24))[0] == 0b011
    assert struct.unpack_from("<I", EX, word(25))[0] == 0
    assert struct.unpack_from("<I", EX, word(26))[0] == 3
    assert EX[STRINGS_AT:] == b"decode/0\0"


def test_crc_independent():
    zeroed = EX[:20] + b"\0\0\0\0" + EX[24:]
    assert struct.unpack_from("<I", EX, 20)[0] == zlib.crc32(zeroed) & 0xFFFFFFFF


def test_layout_rules_no_tables():
    p = example_program(in_dtype=I8, out_dtype=I32, stages=0b010, table=None, type_conversion=1,
                        fetch_size=8, words_per_packet=2, packet_size=16, flit_count=2)  # fmt: skip
    data = write(SeqBin((), (p,)))
    rows = [struct.unpack_from("<IIII", data, 32 + 16 * r) for r in range(3)]
    assert rows[0] == (1, 80, 0, 0)  # empty section still listed
    assert rows[1] == (2, 80, 128, 1)
    assert rows[2] == (3, 208, 9, 1)
    assert len(data) == 208 + 9
    for _, off, _, _ in rows:
        assert off % 8 == 0


def test_empty_file():
    data = write(SeqBin())
    assert len(data) == 80
    assert read(data) == SeqBin()
    assert "tables: 0\nprograms: 0\n" in disassemble(data)


# --------------------------------------------------------------------------
# Tables against ml_dtypes
# --------------------------------------------------------------------------


@pytest.mark.parametrize("pair", list(REF_TABLES), ids=lambda p: f"{p[0]}-{p[1]}")
def test_tables_match_ml_dtypes(pair):
    paired, ref = REF_TABLES[pair]
    t = Table.for_pair(*pair)
    assert t.paired is paired
    assert len(t.entries) == 512
    assert list(struct.unpack("<256H", t.entries)) == ref()
    assert seqbin.table_matches_reference(t)


def test_table_spec_values():
    e4 = struct.unpack("<256H", Table.for_pair(F8E4M3FN, BF16).entries)
    assert e4[0x7F] == 0x7FC0 and e4[0xFF] == 0xFFC0  # NaN keys keep their sign
    e5 = struct.unpack("<256H", Table.for_pair(F8E5M2, BF16).entries)
    assert e5[0x7C] == 0x7F80 and e5[0xFC] == 0xFF80  # infinities stay
    assert e5[0x7D] == 0x7FC0 and e5[0xFE] == 0xFFC0
    assert struct.unpack("<256H", Table.for_pair(F4E2M1FN, F8E4M3FN).entries)[0x21] == 0x3830


def test_for_pair_rejects_unsupported():
    with pytest.raises(ValueError, match="no lookup table for f8E4M3FN -> f32"):
        Table.for_pair(F8E4M3FN, F32)


def test_all_tables_round_trip():
    tabs = tuple(Table.for_pair(*p) for p in REF_TABLES)
    sb = SeqBin(tabs, ())
    data = write(sb)
    assert read(data) == sb
    for i, pair in enumerate(REF_TABLES):
        off = 80 + 520 * i
        assert list(struct.unpack_from("<256H", data, off + 8)) == REF_TABLES[pair][1]()


# --------------------------------------------------------------------------
# Round trip
# --------------------------------------------------------------------------


def some_programs() -> list[Program]:
    return [
        example_program(),
        example_program(name="w/1", stages=0b001, type_conversion=None, out_dtype=F8E4M3FN, fetch_size=8,
                        words_per_packet=1, flit_count=1),  # fmt: skip
        example_program(name="sub/0", unit=1, in_dtype=I8, out_dtype=I32, stages=0b010, table=None,
                        type_conversion=1, fetch_size=8, packet_size=32, words_per_packet=4, flit_count=4,
                        limits=(4096, 32), strides=(32, 1)),  # fmt: skip
        example_program(name="zp", in_dtype=I8, out_dtype=I9, stages=0b100, table=None, type_conversion=None,
                        zero_point0=-128, num_zero_points=1, zp_mode=2, fetch_size=32, packet_size=32,
                        words_per_packet=1, flit_count=2),  # fmt: skip
        example_program(name="zp4", in_dtype=I4, out_dtype=I5, stages=0b100, table=None, type_conversion=None,
                        zero_point0=7, num_zero_points=1, zp_mode=1, fetch_size=16, packet_size=64,
                        words_per_packet=2, flit_count=2, limits=(64,)),  # fmt: skip
        example_program(name="nchw", in_dtype=BF16, out_dtype=BF16, stages=0, table=None, type_conversion=None,
                        fetch_size=2, packet_size=1, words_per_packet=1, flit_count=1,
                        limits=(8, 8, 3, 4), strides=(1, 8, 64, 192), base=0x7FFF8),  # fmt: skip
        example_program(name="neg", in_dtype=F32, out_dtype=BF16, stages=0b010, table=None, type_conversion=6,
                        fetch_size=4, packet_size=1, words_per_packet=1, flit_count=1,
                        limits=(7, 5, 1, 1, 1, 1, 1, 9), strides=(-2147483648, 2147483647, 0, 0, 0, 0, 0, -3)),
        example_program(name="é/ü", in_dtype=F8E5M2, out_dtype=F32, stages=0b011, table=1, type_conversion=5,
                        fetch_size=8, packet_size=8, words_per_packet=1, flit_count=1, limits=(16,)),
        example_program(name=None, in_dtype=F8E8M0FNU, out_dtype=F8E8M0FNU, stages=0, table=None,
                        type_conversion=None, fetch_size=32, packet_size=64, words_per_packet=2,
                        flit_count=2, limits=(128,), strides=(1,)),  # fmt: skip
    ]  # fmt: skip


def test_round_trip_programs():
    tabs = (Table.for_pair(F4E2M1FN, F8E4M3FN), Table.for_pair(F8E5M2, BF16))
    sb = SeqBin(tabs, tuple(some_programs()))
    data = write(sb)
    assert read(data) == sb
    assert write(read(data)) == data
    # Unnamed program: no string; the others in program order.
    s = struct.unpack_from("<IIII", data, 32 + 32)
    assert s[0] == 3 and s[3] == len(sb.programs) - 1
    assert data[s[1] : s[1] + s[2]] == "".join(p.name + "\0" for p in sb.programs if p.name).encode()
    rec = struct.unpack_from("<32I", data, struct.unpack_from("<I", data, 32 + 16 + 4)[0] + 128 * 8)
    assert rec[1] == NONE


def test_determinism():
    a = write(example())
    b = write(example())
    c = write(SeqBin((Table.for_pair(F4E2M1FN, F8E4M3FN),), (example_program(),)))
    assert a == b == c == EX
    # Lists instead of tuples give the same bytes.
    d = write(SeqBin([Table.for_pair(F4E2M1FN, F8E4M3FN)], [example_program(limits=[65536], strides=[1])]))
    assert d == EX


PIPES = [
    # in, table pair, cast code, zero point?, out
    (F4E2M1FN, (F4E2M1FN, F8E4M3FN), 3, False, F32),
    (F4E2M1FN, (F4E2M1FN, F8E4M3FN), None, False, F8E4M3FN),
    (F4E2M1FN, (F4E2M1FN, F8E5M2), 4, False, F32),
    (F4E2M1FN, (F4E2M1FN, F8E5M2), None, False, F8E5M2),
    (F8E4M3FN, (F8E4M3FN, BF16), None, False, BF16),
    (F8E4M3FN, (F8E4M3FN, BF16), 5, False, F32),
    (F8E5M2, (F8E5M2, BF16), None, False, BF16),
    (F8E5M2, (F8E5M2, BF16), 5, False, F32),
    (I4, None, 0, False, I32),
    (I8, None, 1, False, I32),
    (I16, None, 2, False, I32),
    (F8E4M3FN, None, 3, False, F32),
    (F8E5M2, None, 4, False, F32),
    (BF16, None, 5, False, F32),
    (F32, None, 6, False, BF16),
    (I4, None, None, True, I5),
    (I8, None, None, True, I9),
] + [(t, None, None, False, t) for t in (I4, I8, I16, I32, F4E2M1FN, F8E4M3FN, F8E5M2, BF16, F32, F8E8M0FNU)]

OUT_BITS = {I5: 8, I9: 16}  # seqbin.md word 30: i5 counts 1 byte, i9 2


@st.composite
def program_and_pair(draw):
    in_t, pair, cast, zp, out_t = draw(st.sampled_from(PIPES))
    cast_out_bytes = {0: 4, 1: 4, 2: 4, 3: 4, 4: 4, 5: 4, 6: 2}.get(cast, 0)
    choices = [f for f in (1, 2, 4, 8, 16, 32) if f * 8 % in_t.bits == 0 and f * 8 // in_t.bits * cast_out_bytes <= 32]
    unit = 0 if pair or 8 not in choices else draw(st.sampled_from([0, 1]))
    fetch = 8 if unit == 1 else draw(st.sampled_from(choices))
    fe = fetch * 8 // in_t.bits
    wpp = draw(st.integers(1, 8))
    packet = wpp * fe
    inner_stride = draw(st.sampled_from([1, 0] if fe == 1 else [1]))
    if packet == 1:
        inner_stride = draw(st.integers(-(2**31), 2**31 - 1))
    inner = packet * draw(st.integers(1, 65536 // packet))
    outer = draw(st.lists(st.tuples(st.integers(1, 65536), st.integers(-(2**31), 2**31 - 1)), max_size=7))
    limits = tuple(n for n, _ in outer) + (inner,)
    strides = tuple(s for _, s in outer) + (inner_stride,)
    bits = OUT_BITS.get(out_t, out_t.bits)
    nbytes = -(-packet * bits // 8)
    flits = -(-nbytes // 32)
    stages = (1 if pair else 0) | (2 if cast is not None else 0) | (4 if zp else 0)
    zp0 = draw(st.integers(-8, 7) if in_t == I4 else st.integers(-128, 127)) if zp else 0
    name = draw(
        st.none()
        | st.text(st.characters(exclude_characters="\0", exclude_categories=("Cs",)), max_size=20)
    )
    p = Program(
        name=name, unit=unit, in_dtype=in_t, out_dtype=out_t, base=draw(st.integers(0, 2**19 - 1)),
        packet_size=packet, fetch_size=fetch, limits=limits, strides=strides, stages=stages,
        table=None, type_conversion=cast, zero_point0=zp0, num_zero_points=int(zp),
        zp_mode=(1 if in_t == I4 else 2) if zp else 0, flit_count=flits, words_per_packet=wpp,
    )  # fmt: skip
    return p, pair


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(program_and_pair(), max_size=6))
def test_round_trip_property(items):
    pairs: list = []
    programs = []
    for p, pair in items:
        idx = None
        if pair:
            if pair not in pairs:
                pairs.append(pair)
            idx = pairs.index(pair)
        programs.append(Program(**{**p.__dict__, "table": idx}))
    sb = SeqBin(tuple(Table.for_pair(*pr) for pr in pairs), tuple(programs))
    data = write(sb)
    assert read(data) == sb
    assert write(sb) == data
    assert len(data) == struct.unpack_from("<I", data, 16)[0]
    text = disassemble(data)
    assert text.count("\nprogram ") == len(programs)
    json.dumps(to_json(data))


# --------------------------------------------------------------------------
# Reader: accepted variations
# --------------------------------------------------------------------------


def example_sections(v12: bool = False):
    entries = ref_paired(ml_dtypes.float8_e4m3fn)
    tab = (table_record_12 if v12 else table_record)(1, 7, 8, entries)
    prog = program_record(in_code=7, out_code=11, base=0x60000, packet=16, fetch=4, limits=[65536], strides=[1],
                          stages=3, tables=0, conv=3, flits=2, wpp=2)  # fmt: skip
    return [(1, tab, 1), (2, prog, 1), (3, b"decode/0\0", 1)]


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
@pytest.mark.parametrize("gap", [0, 3, 8])
def test_reader_accepts_any_order_and_gaps(order, gap):
    secs = example_sections()
    data = raw_file([secs[i] for i in order], gap=gap)
    assert read(data) == example()


def test_reader_accepts_minor_version_and_single_section():
    secs = example_sections()
    assert read(raw_file(secs, minor=1)) == example()
    assert read(raw_file(example_sections(v12=True), minor=7)) == example()  # a later minor: 1.2's TABLES
    assert read(raw_file([secs[0]])) == SeqBin((Table.for_pair(F4E2M1FN, F8E4M3FN),), ())
    # Unnamed program without tables needs only PROGRAMS.
    prog = program_record(name=NONE, in_code=2, out_code=2, packet=8, fetch=8, limits=[8], strides=[1],
                          flits=1, wpp=1)  # fmt: skip
    sb = read(raw_file([(2, prog, 1)]))
    assert sb.programs[0].name is None and sb.tables == ()


def test_disassemble_bytes_reports_file_header():
    data = raw_file(example_sections(v12=True)[::-1], minor=3)
    text = disassemble(data)
    assert text.startswith(f"seq.bin version 1.3, {len(data)} bytes, crc32 0x{zlib.crc32(data[:20] + bytes(4) + data[24:]):08x}\n")
    assert "section STRINGS: offset 80, size 9, count 1\n" in text


# --------------------------------------------------------------------------
# Reader: rejections
# --------------------------------------------------------------------------


def rejects(data: bytes, pattern: str) -> str:
    with pytest.raises(SeqBinError) as e:
        read(data)
    msg = str(e.value)
    assert re.search(pattern, msg), msg
    assert msg.endswith("."), msg
    return msg


def test_too_short():
    rejects(b"", r"file is 0 bytes, shorter than the 32-byte header")
    rejects(EX[:31], r"31 bytes, shorter than the 32-byte header")


def test_truncation_every_length():
    for n in range(len(EX)):
        with pytest.raises(SeqBinError):
            read(EX[:n])
        # Also with size and CRC patched, so the structural checks are reached.
        with pytest.raises(SeqBinError):
            read(fix_size_and_crc(EX[:n]))
    rejects(fix_size_and_crc(EX[:730]), r"section row 2 \(STRINGS\): bytes \[728, 737\) run past the end")
    rejects(fix_size_and_crc(EX[:700]), r"section row 1 \(PROGRAMS\): bytes \[600, 728\) run past the end")


def test_every_bit_flip_rejected():
    for i in range(len(EX) * 8):
        b = bytearray(EX)
        b[i // 8] ^= 1 << (i % 8)
        with pytest.raises(SeqBinError):
            read(bytes(b))


def test_every_bit_flip_with_fixed_crc_never_crashes():
    accepted = 0
    for i in range(len(EX) * 8):
        if 16 <= i // 8 < 24:
            continue  # file_size / crc themselves
        b = bytearray(EX)
        b[i // 8] ^= 1 << (i % 8)
        try:
            sb = read(fix_crc(bytes(b)))
        except SeqBinError:
            continue
        accepted += 1
        disassemble(sb)  # a readable file always disassembles
    assert accepted > 0  # e.g. flips inside table entries or the name


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=300), st.integers(0, 3))
def test_random_bodies_only_raise_seqbin_error(body, sections):
    head = b"FSEQ" + struct.pack("<HHIIIIQ", 1, 0, 0, sections, 0, 0, 0)
    try:
        read(fix_size_and_crc(head + body))
    except SeqBinError:
        pass


def test_wrong_magic():
    b = bytearray(EX)
    b[0:4] = b"FSEX"
    rejects(fix_crc(bytes(b)), r"wrong magic: expected b'FSEQ', got b'FSEX'")


def test_wrong_version():
    rejects(put_u16(EX, 4, 2), r"unsupported version 2\.0: this reader supports major version 1")
    rejects(put_u16(EX, 4, 0), r"unsupported version 0\.0")


def test_file_size_mismatch():
    rejects(EX + b"\0", r"file_size says 737 bytes but the file has 738 bytes")
    rejects(put_u32(EX, 16, 736), r"file_size says 736 bytes but the file has 737 bytes")


def test_bad_crc():
    b = bytearray(EX)
    b[20] ^= 0xFF
    good = struct.unpack_from("<I", EX, 20)[0]
    bad = struct.unpack_from("<I", bytes(b), 20)[0]
    rejects(bytes(b), rf"bad CRC: header says 0x{bad:08x}, file has 0x{good:08x}")
    b = bytearray(EX)
    b[STRINGS_AT] ^= 1
    rejects(bytes(b), r"bad CRC")


def test_flags_and_reserved():
    rejects(put_u32(EX, 8, 1), r"flags is 0x00000001; version 1 defines no flags, so it must be 0")
    rejects(put_u32(EX, 28, 1), r"reserved header field is 0x100000000; it must be 0")


def test_section_count():
    rejects(put_u32(EX, 12, 0), r"section_count is 0")
    rejects(put_u32(EX, 12, 0xFFFFFFFF), r"section table \(4294967295 rows, ending at byte 68719476752\) runs past")


def row(i: int) -> int:
    return 32 + 16 * i


def test_unknown_kind():
    rejects(put_u32(EX, row(1), 5), r"section row 1: unknown section kind 5 \(known: 1 TABLES, 2 PROGRAMS, 3 STRINGS, 4 MANIFEST\)")
    rejects(put_u32(EX, row(0), 0), r"section row 0: unknown section kind 0")
    # MANIFEST (kind 4) came with version 1.1: a 1.0 file may not hold one.
    rejects(put_u32(EX, row(1), 4), r"section row 1: a version 1.0 file has no MANIFEST section")


def test_duplicate_kind():
    rejects(put_u32(EX, row(2), 2), r"section row 2: duplicate PROGRAMS section \(first in row 1\)")


def test_out_of_bounds_sections():
    rejects(put_u32(EX, row(1) + 4, 0xFFFFFFF0), r"section row 1 \(PROGRAMS\): bytes \[4294967280, 4294967408\) run past the end of the file \(737 bytes\)")
    rejects(put_u32(EX, row(2) + 8, 10), r"section row 2 \(STRINGS\): bytes \[728, 738\) run past")
    # An empty section's offset must lie inside the file too.
    d = put_u32(put_u32(EX, row(0) + 8, 0), row(0) + 4, 738)
    rejects(d, r"section row 0 \(TABLES\): bytes \[738, 738\) run past")


def test_overlapping_sections():
    rejects(put_u32(EX, row(1) + 4, 592), r"sections TABLES \(bytes \[80, 600\)\) and PROGRAMS \(bytes \[592, 720\)\) overlap")
    rejects(put_u32(EX, row(0) + 4, 72), r"section row 0 \(TABLES\): bytes \[72, 592\) overlap the header and section table \(bytes \[0, 80\)\)")


def test_size_not_count_times_record():
    rejects(put_u32(EX, row(0) + 12, 2), r"TABLES section: size 520 bytes is not count 2 x 520-byte records \(1040 bytes\)")
    rejects(put_u32(EX, row(1) + 8, 127), r"PROGRAMS section: size 127 bytes is not count 1 x 128-byte records")


@pytest.mark.parametrize("r,field", [(0, 12), (1, 12), (2, 12), (1, 8)])
def test_huge_count_does_not_allocate(r, field):
    data = put_u32(EX, row(r) + field, 0xFFFFFFFF)
    tracemalloc.start()
    try:
        with pytest.raises(SeqBinError):
            read(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_strings_section_checks():
    rejects(put_u32(EX, row(2) + 12, 2), r"STRINGS section: count says 2 strings but the section holds 1")
    b = bytearray(EX)
    b[-1] = ord("x")
    rejects(fix_crc(bytes(b)), r"STRINGS section: the last string .* is not NUL-terminated")


def test_missing_sections():
    secs = example_sections()
    rejects(raw_file([secs[0], secs[1]]), r"program 0: name \(word 1\) is offset 0 but the file has no STRINGS section")
    rejects(raw_file([secs[1], secs[2]]), r"program 0: tables \(word 25\) is 0 but the file has no TABLES section")


# Table fields -------------------------------------------------------------


@pytest.mark.parametrize(
    "off,value,size,pattern",
    [
        (0, 2, 1, r"table 0: key_bytes is 2 but a decode table's keys are 1 byte"),
        (0, 3, 1, r"table 0: key_bytes is 3; it must be 1 or 2"),
        (1, 2, 1, r"table 0: paired is 2; it must be 0 or 1"),
        (1, 0, 1, r"table 0: paired is 0 but the f4E2M1FN -> f8E4M3FN table is paired"),
        (2, 13, 1, r"table 0: in_dtype is 13, which is not a dtype code"),
        (3, 0, 1, r"table 0: out_dtype is 0, which is not a dtype code"),
        (3, 11, 1, r"table 0: f4E2M1FN -> f32 is not a decode table the hardware supports"),
        (4, 1, 2, r"table 0: entry_bytes is 1; it must be 2"),
        (6, 255, 2, r"table 0: entries is 255; a decode table has 256"),
    ],
)
def test_table_field_rejections(off, value, size, pattern):
    data = put_u8(EX, T0 + off, value) if size == 1 else put_u16(EX, T0 + off, value)
    rejects(data, pattern)


def test_unpaired_table_marked_paired():
    tab = table_record(1, 8, 10, ref_unpaired(ml_dtypes.float8_e4m3fn))
    rejects(raw_file([(1, tab, 1)]), r"table 0: paired is 1 but the f8E4M3FN -> bf16 table is non-paired")


def test_tampered_table_is_read_as_stored_and_marked():
    b = bytearray(EX)
    b[T0 + 8 + 2 * 0x21 : T0 + 8 + 2 * 0x21 + 2] = struct.pack("<H", 0x3838)
    data = fix_crc(bytes(b))
    sb = read(data)
    assert struct.unpack_from("<H", sb.tables[0].entries, 2 * 0x21)[0] == 0x3838
    assert not seqbin.table_matches_reference(sb.tables[0])
    text = disassemble(data)
    assert "table 0: f4E2M1FN -> f8E4M3FN, paired (entries differ from the reference conversion)\n" in text
    assert to_json(data)["tables"][0]["matches_reference"] is False
    assert "differ" not in disassemble(EX)


# Program fields -----------------------------------------------------------


@pytest.mark.parametrize(
    "w,value,pattern",
    [
        (0, 2, r"program 0: unit \(word 0\) is 2; it must be 0 \(main\) or 1 \(sub\)"),
        (0, 1, r"program 0: fetch_size \(word 6\) is 4; the sub unit reads exactly 8 bytes"),
        (1, 9, r"program 0: name \(word 1\) is offset 9, outside the 9-byte STRINGS section"),
        (1, 3, r"program 0: name \(word 1\) is offset 3, which is not the start of a string"),
        (2, 0, r"program 0: in_dtype \(word 2\) is 0, which is not a dtype code"),
        (2, 13, r"program 0: in_dtype \(word 2\) is 13, which is not a dtype code"),
        (2, 6, r"program 0: in_dtype \(word 2\) is i9, which never lives in memory"),
        (3, 99, r"program 0: out_dtype \(word 3\) is 99, which is not a dtype code"),
        (3, 10, r"program 0: out_dtype \(word 3\) is bf16 but the stages turn in_dtype f4E2M1FN into f32"),
        (5, 0, r"program 0: packet_size \(word 5\) is 0; it must be at least 1"),
        # A packet may span contiguous runs (hardware.md §3): [65536 : 1] holds 24-element packets, but
        # 2 reads of 8 elements are not 24.
        (5, 24, r"program 0: words_per_packet \(word 31\) is 2, but 2 reads of 8 f4E2M1FN elements \(fetch_size 4\) are 16 elements, not packet_size 24"),
        (6, 3, r"program 0: fetch_size \(word 6\) is 3; it must be one of 1, 2, 4, 8, 16, 32"),
        (6, 8, r"program 0: words_per_packet \(word 31\) is 2, but 2 reads of 16 f4E2M1FN elements"),
        (7, 0, r"program 0: num_entries \(word 7\) is 0; it must be 1 to 8"),
        (7, 9, r"program 0: num_entries \(word 7\) is 9; it must be 1 to 8"),
        (7, 2, r"program 0: limits\[1\] \(word 9\) is 0; a used entry is 1 to 65536"),
        (8, 0, r"program 0: limits\[0\] \(word 8\) is 0; a used entry is 1 to 65536"),
        (8, 65537, r"program 0: limits\[0\] \(word 8\) is 65537; a used entry is 1 to 65536"),
        (15, 1, r"program 0: limits\[7\] \(word 15\) is 1 but only 1 entry is used; it must be 0"),
        (17, -1, r"program 0: strides\[1\] \(word 17\) is -1 but only 1 entry is used; it must be 0"),
        (16, 2, r"program 0: the innermost entry \[65536 : 2\] cannot hold packets of 16 elements"),
        (16, 0, r"program 0: fetch_size \(word 6\) 4 bytes reads 8 elements, which does not divide the largest contiguous access of 1 element"),
        (24, 16, r"program 0: stages \(word 24\) is 0x10; only bits 0-3 are defined"),
        (24, 8, r"program 0: the masking stage \(stages bit 3\) is on, but its configuration \(the program's MASKS "),
        (24, 2, r"program 0: tables \(word 25\) is 0 but the table_lookup stage \(stages bit 0\) is off; it must be 0xFFFFFFFF"),
        (24, 1, r"program 0: type_conversion \(word 26\) is 3 but the type_conversion stage \(stages bit 1\) is off"),
        (24, 7, r"program 0: the zero_point stage \(stages bit 2\) is on but its input is f32, not i4 or i8"),
        (25, 1, r"program 0: tables \(word 25\) is 1, out of range for 1 table"),
        (25, NONE, r"program 0: the table_lookup stage \(stages bit 0\) is on but tables \(word 25\) is 0xFFFFFFFF"),
        (26, 7, r"program 0: type_conversion \(word 26\) is 7; cast codes are 0 to 6"),
        (26, 4, r"program 0: type_conversion \(word 26\) is code 4 \(f8E5M2 -> f32\) but the value entering the cast is f8E4M3FN"),
        (26, NONE, r"program 0: the type_conversion stage \(stages bit 1\) is on but type_conversion \(word 26\) is 0xFFFFFFFF"),
        (27, 5, r"program 0: zero_point0 \(word 27\) is 5 but the zero_point stage \(stages bit 2\) is off; it must be 0"),
        (28, 1, r"program 0: num_zero_points \(word 28\) is 1 but the zero_point stage \(stages bit 2\) is off"),
        (29, 1, r"program 0: zp_mode \(word 29\) is 1 but the zero_point stage \(stages bit 2\) is off"),
        (30, 1, r"program 0: flit_count \(word 30\) is 1; a packet of 16 f32 elements occupies 2 flits"),
        (31, 4, r"program 0: words_per_packet \(word 31\) is 4, but 4 reads of 8 f4E2M1FN elements \(fetch_size 4\) are 32 elements, not packet_size 16"),
    ],
)
def test_program_field_rejections(w, value, pattern):
    rejects(put_u32(EX, word(w), value), pattern)


def zp_file(**kw) -> bytes:
    f = dict(name=NONE, in_code=2, out_code=6, packet=32, fetch=32, limits=[32], strides=[1], stages=4,
             zp0=-3, nzp=1, zp_mode=2, flits=2, wpp=1)  # fmt: skip
    f.update(kw)
    return raw_file([(2, program_record(**f), 1)])


def test_zero_point_rejections():
    assert read(zp_file()).programs[0].zero_point0 == -3
    rejects(zp_file(nzp=0), r"program 0: num_zero_points \(word 28\) is 0 but the zero_point stage is on; it must be 1")
    rejects(zp_file(nzp=2), r"num_zero_points \(word 28\) is 2")
    rejects(zp_file(zp_mode=1), r"program 0: zp_mode \(word 29\) is 1 but an i8 -> i9 zero point is mode 2")
    rejects(zp_file(zp0=128), r"program 0: zero_point0 \(word 27\) is 128, outside \[-128, 127\] for i8")
    rejects(zp_file(zp0=-129), r"zero_point0 \(word 27\) is -129")
    rejects(zp_file(in_code=1, out_code=5, zp0=-9, zp_mode=1, packet=64, limits=[64], flits=2),
            r"zero_point0 \(word 27\) is -9, outside \[-8, 7\] for i4")  # fmt: skip


def test_cast_output_must_fit_a_flit():
    d = put_u32(put_u32(EX, word(6), 8), word(31), 1)
    rejects(d, r"program 0: one read of 16 elements casts to 64 bytes of f32, more than one 32-byte flit")


def test_sub_unit_table_rejected():
    d = put_u32(put_u32(put_u32(EX, word(0), 1), word(6), 8), word(31), 1)
    d = put_u32(put_u32(d, word(24), 1), word(3), 8)
    d = put_u32(put_u32(d, word(26), NONE), word(30), 1)
    rejects(d, r"program 0: the table_lookup stage \(stages bit 0\) is on in the sub unit, which has no table register")


def test_table_type_must_match_program_input():
    tab = table_record(0, 8, 10, ref_unpaired(ml_dtypes.float8_e4m3fn))
    prog = program_record(name=NONE, in_code=9, out_code=10, packet=8, fetch=8, limits=[8], strides=[1],
                          stages=1, tables=0, flits=1, wpp=1)  # fmt: skip
    rejects(raw_file([(1, tab, 1), (2, prog, 1)]),
            r"program 0: tables \(word 25\) selects table 0 \(f8E4M3FN -> bf16\) but in_dtype is f8E5M2")  # fmt: skip


def test_fetch_size_not_whole_elements():
    prog = program_record(name=NONE, in_code=4, out_code=4, packet=1, fetch=2, limits=[8], strides=[1],
                          flits=1, wpp=1)  # fmt: skip
    rejects(raw_file([(2, prog, 1)]), r"program 0: fetch_size \(word 6\) 2 bytes is not a whole number of i32 elements")


def test_name_rejections():
    prog = program_record(name=0, in_code=2, out_code=2, packet=8, fetch=8, limits=[8], strides=[1], flits=1, wpp=1)
    rejects(raw_file([(2, prog, 1), (3, b"\xff\xfe\0", 1)]), r"program 0: name \(word 1\) at STRINGS offset 0 is not valid UTF-8")
    rejects(raw_file([(2, prog, 1), (3, b"", 0)]), r"program 0: name \(word 1\) is offset 0, outside the 0-byte STRINGS section")
    assert read(raw_file([(2, prog, 1), (3, "名前\0".encode(), 1)])).programs[0].name == "名前"


def test_second_program_index_in_message():
    p = example_program()
    q = example_program(name="x/1")
    data = write(SeqBin(example().tables, (p, q)))
    off = 600 + 128 + 4 * 0
    rejects(put_u32(data, off, 5), r"^program 1: unit \(word 0\) is 5")


# --------------------------------------------------------------------------
# Writer errors
# --------------------------------------------------------------------------


def test_writer_rejects_bad_content():
    with pytest.raises(SeqBinError, match=r"program 0: name 'a\\x00b' contains a NUL character"):
        write(SeqBin(example().tables, (example_program(name="a\0b"),)))
    with pytest.raises(SeqBinError, match=r"program 0: 1 limits but 2 strides"):
        write(SeqBin(example().tables, (example_program(strides=(1, 1)),)))
    with pytest.raises(SeqBinError, match=r"program 0: 9 loop-nest entries"):
        write(SeqBin(example().tables, (example_program(limits=(1,) * 9, strides=(0,) * 9),)))
    with pytest.raises(SeqBinError, match=r"program 0: a field does not fit its 32-bit word"):
        write(SeqBin(example().tables, (example_program(base=1 << 32),)))
    with pytest.raises(SeqBinError, match=r"refusing to write an invalid seq.bin: program 0: flit_count \(word 30\) is 3"):
        write(SeqBin(example().tables, (example_program(flit_count=3),)))
    with pytest.raises(SeqBinError, match=r"refusing to write an invalid seq.bin: program 0: tables \(word 25\) is 0, out of range for 0 tables"):
        write(SeqBin((), (example_program(),)))
    with pytest.raises(SeqBinError, match=r"table 0: entries must be 512 bytes, got 2"):
        write(SeqBin((Table(True, F4E2M1FN, F8E4M3FN, b"\0\0"),), ()))


# --------------------------------------------------------------------------
# Disassembly
# --------------------------------------------------------------------------

EXPECTED_PROGRAM_TEXT = """\
programs: 1
program 0: "decode/0"
  unit: main
  in_dtype: f4E2M1FN
  out_dtype: f32
  base: 0x60000 (393216)
  sequencer: [65536 : 1] : 16
  fetch_size: 4
  stages: table_lookup, type_conversion
  table: 0
  type_conversion: 3 (f8E4M3FN -> f32)
  zero_point: off
  flit_count: 2
  words_per_packet: 2
"""


def grid_rows(text: str, table: int) -> dict[int, list[str]]:
    """The 256 cells of table ``table``'s grid (8 keys a line, each line
    labelled with its first key: ``  0x08: ...``) as 16 rows of 16, by high
    and low nibble: ``rows[k >> 4][k & 15]`` is key ``k``'s cell."""
    lines = text.splitlines()
    start = lines.index(next(l for l in lines if l.startswith(f"table {table}:")))
    cells: list[str] = []
    for l in lines[start + 1 :]:
        m = re.match(r"  0x([0-9a-f]{2}): (.*)$", l)
        if m:
            assert int(m.group(1), 16) == len(cells), l
            cells += m.group(2).split()
        elif cells:
            break
    assert len(cells) == 256
    return {r: cells[16 * r : 16 * r + 16] for r in range(16)}


def test_disassemble_example():
    text = disassemble(example())
    crc = struct.unpack_from("<I", EX, 20)[0]
    assert text.startswith(f"seq.bin version 1.0, 737 bytes, crc32 0x{crc:08x}\n")
    assert "sections: 3\nsection TABLES: offset 80, size 520, count 1\n" in text
    assert "tables: 1\ntable 0: f4E2M1FN -> f8E4M3FN, paired\n" in text
    assert text.endswith(EXPECTED_PROGRAM_TEXT)
    rows = grid_rows(text, 0)
    assert rows[2][1] == "(0.5,1)"
    assert rows[0][0] == "(0,0)"
    assert rows[0xF][0xF] == "(-6,-6)"
    assert rows[1][8] == "(-0,0.5)"
    assert disassemble(EX) == text
    assert text.endswith("\n") and "\n\n" not in text


def test_disassemble_non_paired_and_other_programs():
    tabs = (Table.for_pair(F4E2M1FN, F8E4M3FN), Table.for_pair(F8E5M2, BF16))
    text = disassemble(SeqBin(tabs, tuple(some_programs())))
    assert "table 1: f8E5M2 -> bf16, non-paired\n  layout: 8 keys a line, key = label + column\n" in text
    rows = grid_rows(text, 1)
    assert rows[0x3][0xC] == "1"  # e5m2 0x3C = 1.0
    assert rows[0x7][0xC] == "inf" and rows[0xF][0xC] == "-inf"
    assert rows[0x7][0xD] == "nan" and rows[0xF][0xF] == "-nan"
    assert rows[0x0][0x1] == "1.53e-05"  # 2^-16 = 1.52587890625e-05: the shortest text that reads back as it
    assert rows[0x7][0xB] == "57344"
    assert 'program 2: "sub/0"\n  unit: sub\n' in text
    assert "  sequencer: [4096 : 32, 32 : 1] : 32\n" in text
    assert "  stages: zero_point\n  table: none\n  type_conversion: none\n  zero_point: -128 (i8 -> i9)\n" in text
    assert "  zero_point: 7 (i4 -> i5)\n" in text
    assert "  base: 0x7fff8 (524280)\n" in text
    assert "  sequencer: [8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1\n  fetch_size: 2\n" in text
    assert "  sequencer: [7 : -2147483648, 5 : 2147483647, 1 : 0, 1 : 0, 1 : 0, 1 : 0, 1 : 0, 9 : -3] : 1\n" in text
    assert "  type_conversion: 6 (f32 -> bf16)\n" in text
    assert 'program 7: "é/ü"\n' in text
    assert "program 8: (unnamed)\n" in text
    assert "  stages: none\n" in text


def test_disassemble_e4m3_nan_sign():
    text = disassemble(SeqBin((Table.for_pair(F8E4M3FN, BF16),), ()))
    rows = grid_rows(text, 0)
    assert rows[0x7][0xF] == "nan" and rows[0xF][0xF] == "-nan"
    assert rows[0x7][0xE] == "448"


def test_to_json():
    d = to_json(example())
    assert json.loads(json.dumps(d)) == d
    assert list(d) == ["version", "file_size", "crc32", "sections", "tables", "programs", "manifest"]
    assert d["manifest"] is None  # a 1.0 file has no MANIFEST
    assert d["version"] == "1.0" and d["file_size"] == 737
    assert d["crc32"] == struct.unpack_from("<I", EX, 20)[0]
    assert d["sections"][1] == {"kind": "PROGRAMS", "offset": 600, "size": 128, "count": 1}
    t = d["tables"][0]
    assert t["paired"] is True and t["entries"][0x21] == 0x3830 and len(t["entries"]) == 256
    p = d["programs"][0]
    assert list(p) == [
        "index", "name", "unit", "in_dtype", "out_dtype", "base", "packet_size", "fetch_size", "num_entries",
        "limits", "strides", "sequencer", "stages", "table", "type_conversion", "zero_point0",
        "num_zero_points", "zp_mode", "flit_count", "words_per_packet",
    ]  # fmt: skip
    assert p["name"] == "decode/0" and p["unit"] == "main" and p["stages"] == ["table_lookup", "type_conversion"]
    assert p["limits"] == [65536] and p["sequencer"] == "[65536 : 1] : 16"
    assert to_json(EX) == d
    assert json.dumps(to_json(EX)) == json.dumps(d)


def test_disassemble_rejects_invalid():
    with pytest.raises(SeqBinError):
        disassemble(EX[:-1])


# --------------------------------------------------------------------------
# Innermost contiguity (hardware.md §3): a packet may span contiguous runs
# --------------------------------------------------------------------------


def test_packets_may_span_contiguous_runs():
    # hardware.md §3's examples: [3 : 32, 4 : 96, 4 : 8, 8 : 1] : 128 (an N, C, H, W buffer with C in time) has
    # contiguous runs of 8 * 4 = 32 elements, so 32-element reads, 4 per packet; [4 : 16, 8 : 1] : 32 has runs
    # of 8, so 8-element reads.  Both are legal although neither innermost size is a multiple of the packet.
    a = program_record(name=NONE, in_code=2, out_code=2, packet=128, fetch=32, limits=[3, 4, 4, 8],
                       strides=[32, 96, 8, 1], flits=4, wpp=4)  # fmt: skip
    b = program_record(name=NONE, in_code=2, out_code=2, packet=32, fetch=8, limits=[4, 8], strides=[16, 1],
                       flits=1, wpp=4)  # fmt: skip
    data = raw_file([(2, a + b, 2)])
    sb = read(data)
    assert [(p.limits, p.strides, p.fetch_size) for p in sb.programs] == [
        ((3, 4, 4, 8), (32, 96, 8, 1), 32), ((4, 8), (16, 1), 8)]
    assert read(write(sb)) == sb
    # A read must stay inside one run: 16-element reads of 8-element runs are not.
    c = program_record(name=NONE, in_code=2, out_code=2, packet=32, fetch=16, limits=[4, 8], strides=[16, 1],
                       flits=1, wpp=2)  # fmt: skip
    rejects(raw_file([(2, c, 1)]), r"^program 0: fetch_size \(word 6\) 16 bytes reads 16 elements, which does "
            r"not divide the largest contiguous access of 8 elements \(hardware.md §3\)\.$")  # fmt: skip
    # A one-element packet may walk any stride; a larger one needs innermost stride 0 or 1.
    d = program_record(name=NONE, in_code=2, out_code=2, packet=1, fetch=1, limits=[4, 8], strides=[1, 5],
                       flits=1, wpp=1)  # fmt: skip
    assert read(raw_file([(2, d, 1)])).programs[0].strides == (1, 5)
    e = program_record(name=NONE, in_code=2, out_code=2, packet=2, fetch=1, limits=[4, 8], strides=[1, 5],
                       flits=1, wpp=2)  # fmt: skip
    rejects(raw_file([(2, e, 1)]), r"^program 0: the innermost entry \[8 : 5\] cannot hold packets of 2 elements "
            r"\(it needs stride 0 or 1, or a one-element packet; hardware.md §3\)\.$")  # fmt: skip


def test_mlir_text_given_as_seqbin_says_to_compile_it(tmp_path):
    """`fetchc dis` on an MLIR file says what the file looks like and the
    fix; other wrong magic gets no such hint."""
    import subprocess

    mlir = tmp_path / "k.mlir"
    mlir.write_text("// a kernel\nfunc.func @k() {\n  func.return\n}\n")
    other = tmp_path / "x.bin"
    other.write_bytes(b"fooo" + bytes(64))
    for path, hinted in ((mlir, True), (other, False)):
        r = subprocess.run([*FETCHC, "dis", str(path)], capture_output=True, text=True)
        assert r.returncode == 1 and "wrong magic" in r.stderr
        assert ("compile it first (fetchc in.mlir -o seq.bin)" in r.stderr) == hinted, r.stderr
