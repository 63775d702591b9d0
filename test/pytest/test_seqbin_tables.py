"""seq.bin 1.2 TABLES records (seqbin.md): function tables, the 24-byte
header, 2-byte keys; the reader's checks, one message each; 1.1 and 1.0
files still read; ``dis`` and ``--json``.

Expected bytes are packed here with ``struct`` from seqbin.md's table,
never with the writer's field tables.
"""

from __future__ import annotations

import json
import re
import struct
import zlib

import pytest

from fetchc.seqbin import Program, SeqBin, SeqBinError, Table, disassemble, read, read_info, to_json, write
from fetchc.target import BF16, F8E4M3FN, I8, I16

CODE = {"i8": 2, "i16": 3, "i32": 4, "f4E2M1FN": 7, "f8E4M3FN": 8, "f8E5M2": 9, "bf16": 10, "f32": 11}
FN = {"identity": 1, "relu": 2, "gelu": 3, "gelu_tanh": 4, "sigmoid": 5, "silu": 6, "tanh": 7, "exp": 8}
NONE = 0xFFFFFFFF


def head12(key_bytes, paired, src, dst, function, entries, scale=1.0, zp=0, entry_bytes=2, reserved=0) -> bytes:
    """seqbin.md 1.2 TABLES header, field by field."""
    return struct.pack("<BBBBHHIfiI", key_bytes, paired, src, dst, entry_bytes, function, entries, scale, zp, reserved)


def lookup_program(src: str, name: str | None = "k/0") -> Program:
    """A main-unit program reading 32 ``src`` elements per packet through
    table 0 into bf16."""
    nbytes = 32 * (2 if src in ("bf16", "i16") else 1)
    return Program(
        name=name, unit=0, in_dtype={"i8": I8, "i16": I16, "bf16": BF16, "f8E4M3FN": F8E4M3FN}[src], out_dtype=BF16,
        base=0, packet_size=32, fetch_size=32, limits=(32 * 4,), strides=(1,), stages=1, table=0,
        type_conversion=None, zero_point0=0, num_zero_points=0, zp_mode=0, flit_count=2,
        words_per_packet=nbytes // 32,
    )  # fmt: skip


def fix_crc(b: bytearray) -> bytes:
    b[20:24] = bytes(4)
    b[20:24] = struct.pack("<I", zlib.crc32(bytes(b)))
    return bytes(b)


def one_table_file(record: bytes, *, count: int = 1, size: int | None = None, minor: int = 2) -> bytes:
    """A file with one TABLES section holding ``record`` (and nothing else)."""
    size = len(record) if size is None else size
    b = bytearray(b"FSEQ" + struct.pack("<HHIIIIQ", 1, minor, 0, 1, 48 + len(record), 0, 0))
    b += struct.pack("<IIII", 1, 48, size, count) + record
    return fix_crc(b)


def test_silu_i8_table_record_bytes():
    t = Table.for_function("silu", I8, 0.0625, 3)
    data = write(SeqBin((t,), (lookup_program("i8"),)))
    assert struct.unpack_from("<HH", data, 4) == (1, 2)  # a function table needs 1.2, even without a MANIFEST
    assert struct.unpack_from("<I", data, 12)[0] == 3
    kind, off, size, count = struct.unpack_from("<IIII", data, 32)
    assert (kind, off, size, count) == (1, 80, 24 + 512, 1)
    assert data[off : off + 24] == head12(1, 0, CODE["i8"], CODE["bf16"], FN["silu"], 256, 0.0625, 3)
    assert data[off + 24 : off + 536] == t.entries
    assert read(data) == SeqBin((t,), (lookup_program("i8"),))


def test_two_byte_keys_round_trip():
    tables = (Table.for_function("sigmoid", BF16), Table.for_function("identity", I16, 2.0**-10, -5))
    progs = (lookup_program("bf16"), Program(**{**lookup_program("i16", "k/1").__dict__, "table": 1}))
    data = write(SeqBin(tables, progs))
    _, off, size, count = struct.unpack_from("<IIII", data, 32)
    assert (size, count) == (2 * (24 + 131072), 2)
    assert data[off : off + 24] == head12(2, 0, CODE["bf16"], CODE["bf16"], FN["sigmoid"], 65536)
    second = off + 24 + 131072
    assert data[second : second + 24] == head12(2, 0, CODE["i16"], CODE["bf16"], FN["identity"], 65536, 2.0**-10, -5)
    sb = read(data)
    assert sb.tables == tables and sb.programs == progs
    # bf16 key 0x3F80 is 1.0: sigmoid(1) = 0.7311 -> bf16 0x3F3B
    assert struct.unpack_from("<H", data, off + 24 + 2 * 0x3F80)[0] == 0x3F3B


def test_writer_refuses_an_illegal_function_table():
    bad = Table(False, I8, BF16, bytes(512), "silu", 0.0, 0)
    with pytest.raises(SeqBinError, match=r"^refusing to write an invalid seq\.bin: table 0: scale 0\.0 is zero"):
        write(SeqBin((bad,), ()))
    short = Table(False, BF16, BF16, bytes(512), "gelu")
    with pytest.raises(SeqBinError, match=r"^table 0: entries must be 131072 bytes, got 512\.$"):
        write(SeqBin((short,), ()))
    with pytest.raises(SeqBinError, match=r"function is 'swish', not one of identity, relu, gelu"):
        write(SeqBin((Table(False, I8, BF16, bytes(512), "swish"),), ()))


GOOD_I8 = head12(1, 0, CODE["i8"], CODE["bf16"], FN["silu"], 256, 0.0625, 3) + bytes(512)
GOOD_DECODE = head12(1, 0, CODE["f8E4M3FN"], CODE["bf16"], 0, 256) + bytes(512)


@pytest.mark.parametrize(
    "record,message",
    [
        (head12(3, 0, CODE["i8"], 10, FN["silu"], 256) + bytes(512), r"key_bytes is 3; it must be 1 or 2"),
        (head12(1, 0, CODE["bf16"], 10, FN["gelu"], 256) + bytes(512), r"key_bytes is 1 but bf16 keys are 2 bytes"),
        (head12(2, 0, CODE["bf16"], 10, FN["gelu"], 256) + bytes(512), r"entries is 256; a table keyed by bf16 has 65536"),
        (head12(1, 0, CODE["i8"], 10, 9, 256) + bytes(512), r"function \(byte 6\)|function is 9, not a function code"),
        (head12(1, 0, CODE["f8E4M3FN"], 10, 0, 256, 2.0) + bytes(512), r"scale is 2\.0 but a decode table has no scale"),
        (head12(1, 0, CODE["f8E4M3FN"], 10, 0, 256, 1.0, 4) + bytes(512), r"zero_point is 4 but a decode table has no zero point"),
        (head12(1, 0, CODE["f8E4M3FN"], 10, FN["gelu"], 256, 0.5) + bytes(512), r"scale is 0\.5 but an f8E4M3FN key has no scale"),
        (head12(1, 0, CODE["f8E4M3FN"], 10, FN["gelu"], 256, 1.0, 1) + bytes(512), r"zero_point is 1 but an f8E4M3FN key has no zero point"),
        (head12(1, 0, CODE["i8"], 10, FN["silu"], 256, 0.0) + bytes(512), r"scale 0\.0 is zero; it must be a finite, non-zero, normal f32"),
        (head12(1, 0, CODE["i8"], 10, FN["silu"], 256, float("inf")) + bytes(512), r"scale inf is not finite"),
        (head12(1, 0, CODE["i8"], 10, FN["silu"], 256, 1e-40) + bytes(512), r"is an f32 subnormal"),
        (head12(1, 0, CODE["i8"], 10, FN["silu"], 256, 1.0, 200) + bytes(512), r"zero_point is 200, outside the i8 range \[-128, 127\]"),
        (head12(1, 0, CODE["i8"], CODE["f32"], FN["silu"], 256) + bytes(512), r"out_dtype is f32 but a function table produces bf16"),
        (head12(1, 1, CODE["i8"], 10, FN["silu"], 256) + bytes(512), r"paired is 1 but a function table is non-paired"),
        (head12(4, 0, CODE["i32"], 10, FN["silu"], 256) + bytes(512), r"key_bytes is 4; it must be 1 or 2"),
        (head12(1, 0, CODE["i32"], 10, FN["silu"], 256) + bytes(512), r"in_dtype is i32, which keys no function table"),
        (head12(1, 0, CODE["i8"], 10, 0, 256) + bytes(512), r"i8 -> bf16 is not a decode table the hardware supports .*needs a function"),
        (head12(1, 0, CODE["i8"], 10, FN["silu"], 256, 1.0, 0, 1) + bytes(512), r"entry_bytes is 1; it must be 2"),
        (head12(1, 0, CODE["i8"], 10, FN["silu"], 256, reserved=7) + bytes(512), r"reserved \(bytes 20-23\) is 7; it must be 0"),
    ],
)  # fmt: skip
def test_reader_rejects_each_field(record, message):
    with pytest.raises(SeqBinError) as e:
        read(one_table_file(record))
    assert str(e.value).startswith("table 0: ") and re.search(message, str(e.value)), str(e.value)


def test_reader_rejects_records_that_do_not_fit_the_section():
    rec = head12(2, 0, CODE["bf16"], 10, FN["gelu"], 65536) + bytes(512)  # 65536 entries declared, 256 present
    with pytest.raises(SeqBinError, match=r"^TABLES section: count 1 record needs|^table 0: its 65536 entries"):
        read(one_table_file(rec))
    two = GOOD_I8 + GOOD_DECODE[:100]
    with pytest.raises(SeqBinError, match=r"^TABLES section: count 2 records need at least 1072 bytes"):
        read(one_table_file(two, count=2))
    big = GOOD_I8 + head12(2, 0, CODE["bf16"], 10, FN["gelu"], 65536) + bytes(600)
    with pytest.raises(SeqBinError, match=r"^table 1: its 65536 entries \(131072 bytes from byte \d+\) run past the end"):
        read(one_table_file(big, count=2))
    with pytest.raises(SeqBinError, match=r"^TABLES section: 8 bytes follow its 1 record;"):
        read(one_table_file(GOOD_I8 + bytes(8)))
    with pytest.raises(SeqBinError, match=r"^TABLES section: count 4294967295 records need"):
        read(one_table_file(GOOD_I8, count=0xFFFFFFFF))


def test_a_good_record_reads():
    sb = read(one_table_file(GOOD_I8))
    assert sb.tables == (Table(False, I8, BF16, bytes(512), "silu", 0.0625, 3),)
    assert read(one_table_file(GOOD_DECODE)).tables[0].function is None


def test_1_1_and_1_0_files_read_with_8_byte_headers():
    rec = struct.pack("<BBBBHH", 1, 0, CODE["f8E4M3FN"], 10, 2, 256) + bytes(512)
    for minor in (0, 1):
        sb, info = read_info(one_table_file(rec, minor=minor))
        assert info.version_minor == minor and sb.tables == (Table(False, F8E4M3FN, BF16, bytes(512)),)
    # The same bytes in a 1.2 file are a short 24-byte header: rejected.
    with pytest.raises(SeqBinError):
        read(one_table_file(rec, minor=2))
    # A 1.1 record with a function-table key: no such table in 1.1.
    bad = struct.pack("<BBBBHH", 1, 0, CODE["i8"], 10, 2, 256) + bytes(512)
    with pytest.raises(SeqBinError, match=r"i8 -> bf16 is not a decode table"):
        read(one_table_file(bad, minor=1))


def test_dis_shows_function_tables_without_65536_lines():
    tables = (Table.for_function("gelu", F8E4M3FN), Table.for_function("silu", I16, 0.001, 7))
    progs = (lookup_program("f8E4M3FN"), Program(**{**lookup_program("i16", "k/1").__dict__, "table": 1}))
    text = disassemble(SeqBin(tables, progs))
    assert len(text.splitlines()) < 120
    assert "table 0: gelu, f8E4M3FN -> bf16\n" in text
    assert "  function: gelu (3)\n" in text and "  key_bytes: 1\n" in text and "  entries: 256\n" in text
    assert "table 1: silu, i16 -> bf16\n" in text
    assert "  key_bytes: 2\n" in text and "  entries: 65536\n" in text
    assert "  scale: 0.0010000000474974513\n" in text and "  zero_point: 7\n" in text  # the f32 scale, exactly
    assert "  sample: f(-0.0020000000949949026) = " in text and "(all entries: fetchc dis --json)" in text
    assert len([ln for ln in text.splitlines() if ln.startswith("  sample: f(")]) == 5
    # The grid of the 1-byte table: key 0x38 is 1.0, gelu(1) = 0.84134 -> bf16 0.83984375 (0x3F57; the
    # neighbours are 0.8359375 and 0.84375), whose shortest text is 0.84
    rows = [ln for ln in text.splitlines() if ln.startswith("  0x38:")]
    assert rows[0].split()[1] == "0.84"
    d = to_json(SeqBin(tables, progs))
    t1 = d["tables"][1]
    assert (t1["function"], t1["key_bytes"], t1["zero_point"], len(t1["entries"])) == ("silu", 2, 7, 65536)
    assert t1["matches_reference"] is True and t1["scale"] == struct.unpack("<f", struct.pack("<f", 0.001))[0]
    json.dumps(d)


def test_dis_marks_a_function_table_that_differs_from_its_definition():
    t = Table.for_function("tanh", F8E4M3FN)
    wrong = Table(False, F8E4M3FN, BF16, bytes(512), "tanh")
    assert "(entries differ" not in disassemble(SeqBin((t,), ()))
    assert "table 0: tanh, f8E4M3FN -> bf16 (entries differ from the reference conversion)" in disassemble(
        SeqBin((wrong,), ())
    )
