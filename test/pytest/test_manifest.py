"""seq.bin 1.1 MANIFEST (spec: seqbin.md "MANIFEST", ir.md §2a).

Expected bytes are written here by hand (the golden JSON, the section table,
the header) or packed with struct/zlib; rejected files are built byte by
byte, never with the writer.
"""

from __future__ import annotations

import dataclasses
import json
import re
import struct
import subprocess
import zlib

import pytest

import fetchc
from fetchc.diagnostics import DiagnosticError
from fetchc.seqbin import (
    Kernel,
    KernelProgram,
    Manifest,
    Program,
    Scalar,
    SeqBin,
    SeqBinError,
    Table,
    Tensor,
    disassemble,
    read,
    read_info,
    to_json,
    write,
)
from fetchc.target import BF16, F4E2M1FN, F8E4M3FN, F32, I8
from served import FETCHC

NONE = 0xFFFFFFFF

# --------------------------------------------------------------------------
# A hand-written kernel: one NVFP4 decode program and one bf16 -> f32 program
# --------------------------------------------------------------------------


def programs() -> tuple[Program, ...]:
    decode = Program(
        name="dq/0", unit=0, in_dtype=F4E2M1FN, out_dtype=F32, base=0x40000, packet_size=32, fetch_size=4,
        limits=(4096, 32), strides=(32, 1), stages=0b011, table=0, type_conversion=3, zero_point0=0,
        num_zero_points=0, zp_mode=0, flit_count=4, words_per_packet=4,
    )  # fmt: skip
    act = Program(
        name="dq/1", unit=0, in_dtype=BF16, out_dtype=F32, base=0x2010, packet_size=16, fetch_size=16,
        limits=(4, 16), strides=(32, 1), stages=0b010, table=None, type_conversion=5, zero_point0=0,
        num_zero_points=0, zp_mode=0, flit_count=2, words_per_packet=2,
    )  # fmt: skip
    return decode, act


def manifest(**kw) -> Manifest:
    w = Tensor(arg=0, name="w", dtype=F4E2M1FN, shape=(4096, 32), strides=(32, 1), offset=0, dm_base=262144,
               bytes=65536, read=True, committed=False)  # fmt: skip
    a = Tensor(arg=1, name="a", dtype=BF16, shape=(4, 16), strides=(32, 1), offset=8, dm_base=8192, bytes=224,
               read=True, committed=False)  # fmt: skip
    tmp = Tensor(arg=None, name="tmp", dtype=I8, shape=(64,), strides=(1,), offset=0, dm_base=65536, bytes=64,
                 read=False, committed=True, scratch=True)  # fmt: skip
    k = Kernel(
        name="dq",
        tensors=(w, a, tmp),
        scalars=(Scalar(arg=2, name="g", dtype=F32),),
        programs=(
            KernelProgram(index=0, tensor=0, time=(4096,), packet=(32,), out_dtype=F32, loc="dq.mlir:12:8"),
            KernelProgram(index=1, tensor=1, time=(4,), packet=(16,), out_dtype=F32, loc="dq.mlir:15:8"),
        ),
    )
    return Manifest(kernels=(k,), producer="fetchc 0.1.0", **kw)


GOLDEN = (
    '{"kernels":[{"name":"dq",'
    '"programs":[{"index":0,"loc":"dq.mlir:12:8","out_dtype":"f32","packet":[32],"tensor":0,"time":[4096]},'
    '{"index":1,"loc":"dq.mlir:15:8","out_dtype":"f32","packet":[16],"tensor":1,"time":[4]}],'
    '"scalars":[{"arg":2,"dtype":"f32","name":"g"}],"slices":1,'
    '"tensors":[{"arg":0,"bytes":65536,"committed":false,"dm_base":262144,"dtype":"f4E2M1FN","name":"w",'
    '"offset":0,"read":true,"shape":[4096,32],"slice_dim":null,"strides":[32,1]},'
    '{"arg":1,"bytes":224,"committed":false,"dm_base":8192,"dtype":"bf16","name":"a",'
    '"offset":8,"read":true,"shape":[4,16],"slice_dim":null,"strides":[32,1]},'
    '{"arg":null,"bytes":64,"committed":true,"dm_base":65536,"dtype":"i8","name":"tmp",'
    '"offset":0,"read":false,"scratch":true,"shape":[64],"slice_dim":null,"strides":[1]}]}],'
    '"producer":"fetchc 0.1.0"}'
).encode()


def seqbin() -> SeqBin:
    return SeqBin((Table.for_pair(F4E2M1FN, F8E4M3FN),), programs(), manifest())


# --------------------------------------------------------------------------
# Canonical bytes and the 1.1 layout
# --------------------------------------------------------------------------


def test_canonical_bytes():
    assert manifest().to_bytes() == GOLDEN
    assert b", " not in GOLDEN and b": " not in GOLDEN and not GOLDEN.endswith(b"\n")
    # Equal content, equal bytes; UTF-8 is written as such, not escaped.
    assert manifest().to_bytes() == manifest().to_bytes()
    k = dataclasses.replace(manifest().kernels[0], name="dé")
    assert b'"name":"d\xc3\xa9"' in Manifest((k,), "fetchc 0.1.0").to_bytes()


def test_file_layout_1_2():
    data = write(seqbin())
    strings = b"dq/0\0dq/1\0"
    # header 32 + 4 rows; TABLES at 96 (24 + 512), PROGRAMS at 632 (256), STRINGS
    # at 888 (10), MANIFEST at the next multiple of 8 (904), file ends with it.
    rows = [(1, 96, 536, 1), (2, 632, 256, 2), (3, 888, 10, 2), (4, 904, len(GOLDEN), 1)]
    assert [struct.unpack_from("<IIII", data, 32 + 16 * i) for i in range(4)] == rows
    size = 904 + len(GOLDEN)
    assert struct.unpack_from("<4sHHIII", data, 0) == (b"FSEQ", 1, 2, 0, 4, size) and len(data) == size
    assert data[888:898] == strings and data[898:904] == bytes(6)
    assert data[904:] == GOLDEN
    assert struct.unpack_from("<I", data, 20)[0] == zlib.crc32(data[:20] + bytes(4) + data[24:])
    assert read(data) == seqbin()
    assert write(read(data)) == data


def test_without_manifest_the_file_is_1_0():
    data = write(dataclasses.replace(seqbin(), manifest=None))
    assert struct.unpack_from("<HHII", data, 4)[:3] == (1, 0, 0)
    assert struct.unpack_from("<I", data, 12)[0] == 3
    assert read(data).manifest is None


def test_hand_built_1_0_file_reads():
    # seqbin.md 1.0: header, 3 rows, TABLES / PROGRAMS / STRINGS; no MANIFEST.
    prog = struct.pack("<32I", 0, 0, 2, 2, 64, 8, 8, 1, 16, *([0] * 7), 1, *([0] * 7), 0, NONE, NONE, 0, 0, 0, 1, 1)
    body = prog + b"p\0"
    rows = struct.pack("<IIII", 1, 80, 0, 0) + struct.pack("<IIII", 2, 80, 128, 1) + struct.pack("<IIII", 3, 208, 2, 1)
    b = bytearray(b"FSEQ" + struct.pack("<HHIIIIQ", 1, 0, 0, 3, 210, 0, 0) + rows + body)
    b[20:24] = struct.pack("<I", zlib.crc32(bytes(b)))
    sb, info = read_info(bytes(b))
    assert (info.version_major, info.version_minor) == (1, 0)
    assert sb.manifest is None and sb.programs[0].name == "p" and sb.programs[0].limits == (16,)
    text = disassemble(bytes(b))
    assert "manifest" not in text and "  loc:" not in text
    assert to_json(bytes(b))["manifest"] is None


# --------------------------------------------------------------------------
# Disassembly
# --------------------------------------------------------------------------


def test_disassembly_lines():
    text = disassemble(seqbin())
    assert text.startswith("seq.bin version 1.2, ")
    assert "section MANIFEST: offset 904, size %d, count 1\n" % len(GOLDEN) in text
    assert (
        "  flit_count: 4\n  words_per_packet: 4\n  kernel: dq\n  tensor: w (arg 0)\n  stream: time [4096] packet [32]\n"
        "  loc: dq.mlir:12:8\nprogram 1:"
    ) in text
    assert text.endswith(
        'manifest: producer "fetchc 0.1.0"\n'
        "kernels: 1\n"
        "kernel 0: dq\n"
        "  slices: 1\n"
        "  tensors: 3\n"
        "  tensor 0: w (arg 0)\n"
        "    dtype: f4E2M1FN\n"
        "    shape: [4096, 32]\n"
        "    layout: strides [32, 1], offset 0\n"
        "    dm_base: 0x40000 (262144)\n"
        "    bytes: 65536\n"
        "    use: read\n"
        "  tensor 1: a (arg 1)\n"
        "    dtype: bf16\n"
        "    shape: [4, 16]\n"
        "    layout: strides [32, 1], offset 8\n"
        "    dm_base: 0x2000 (8192)\n"
        "    bytes: 224\n"
        "    use: read\n"
        "  tensor 2: tmp (scratch)\n"
        "    dtype: i8\n"
        "    shape: [64]\n"
        "    layout: strides [1], offset 0\n"
        "    dm_base: 0x10000 (65536)\n"
        "    bytes: 64\n"
        "    use: committed\n"
        "  scalars: 1\n"
        "  scalar 0: g (arg 2)\n"
        "    dtype: f32\n"
        "  program indices: 0, 1\n"
    )
    d = to_json(seqbin())
    assert list(d)[-1] == "manifest"
    assert json.dumps(d["manifest"], separators=(",", ":")).encode() == GOLDEN


def test_odd_names_are_quoted_in_the_text():
    k = manifest().kernels[0]
    odd = dataclasses.replace(k, tensors=(dataclasses.replace(k.tensors[0], name="a b\n"), *k.tensors[1:]),
                              programs=(dataclasses.replace(k.programs[0], loc=" x\n"), k.programs[1]))  # fmt: skip
    text = disassemble(dataclasses.replace(seqbin(), manifest=Manifest((odd,), "p")))
    assert '  tensor: "a b\\n" (arg 0)\n' in text and '  loc: " x\\n"\n' in text


# --------------------------------------------------------------------------
# Reader rejections (each its own message), on files built byte by byte
# --------------------------------------------------------------------------


def file_with(doc: bytes, *, count: int = 1, minor: int = 2, progs: tuple[Program, ...] | None = None) -> bytes:
    """The seqbin() file (or one with ``progs``) with its MANIFEST replaced by
    ``doc``, as version ``1.minor`` (1.2: the 24-byte TABLES headers of
    seqbin.md)."""
    sb = seqbin() if progs is None else dataclasses.replace(seqbin(), programs=progs)
    head = write(dataclasses.replace(sb, manifest=None))  # 1.0: 3 rows, 8-byte TABLES headers
    bodies = []
    for i in range(3):
        kind, off, size, cnt = struct.unpack_from("<IIII", head, 32 + 16 * i)
        body = head[off : off + size]
        if kind == 1 and minor >= 2:
            body = _tables_1_2(body, cnt)
        bodies.append((kind, body, cnt))
    bodies.append((4, doc, count))
    pos, rows, out = 32 + 16 * 4, [], b""
    for kind, body, cnt in bodies:
        start = -(-pos // 8) * 8
        out += bytes(start - pos) + body
        rows.append(struct.pack("<IIII", kind, start, len(body), cnt))
        pos = start + len(body)
    b = bytearray(b"FSEQ" + struct.pack("<HHIIIIQ", 1, minor, 0, 4, pos, 0, 0) + b"".join(rows) + out)
    b[20:24] = struct.pack("<I", zlib.crc32(bytes(b)))
    return bytes(b)


def _tables_1_2(body: bytes, count: int) -> bytes:
    """1.0 TABLES records (8-byte headers) rewritten with 1.2's 24-byte
    header: function 0, entries u32, scale 1.0, zero_point 0, reserved 0."""
    out, at = b"", 0
    for _ in range(count):
        kb, paired, i, o, eb, n = struct.unpack_from("<BBBBHH", body, at)
        out += struct.pack("<BBBBHHIfiI", kb, paired, i, o, eb, 0, n, 1.0, 0, 0) + body[at + 8 : at + 8 + 2 * n]
        at += 8 + 2 * n
    return out


def edited(edit) -> bytes:
    d = json.loads(GOLDEN)
    edit(d)
    return json.dumps(d).encode()


def rejects(data: bytes, pattern: str) -> None:
    with pytest.raises(SeqBinError) as e:
        read(data)
    msg = str(e.value)
    assert re.search(pattern, msg), msg
    assert msg.endswith(".") and e.value.program is None


def test_the_builder_is_faithful():
    assert file_with(GOLDEN) == write(seqbin())


def K(d):
    return d["kernels"][0]


def set_(path, value):
    def edit(d):
        obj = d
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value

    return edit


def delete(path):
    def edit(d):
        obj = d
        for key in path[:-1]:
            obj = obj[key]
        del obj[path[-1]]

    return edit


T0, P0 = ("kernels", 0, "tensors", 0), ("kernels", 0, "programs", 0)

SHAPE_CASES = [
    (b"\xff{}", r"^MANIFEST: is not valid UTF-8 \(invalid start byte at byte 0\)\.$"),
    (b"{", r"^MANIFEST: is not valid JSON \(Expecting property name enclosed in double quotes at line 1 column 2\)\.$"),
    (b'{"kernels":[],"producer":NaN}', r"^MANIFEST: is not valid JSON \(NaN is not a JSON number\)\.$"),
    (b'{"kernels":[],"kernels":[],"producer":""}', r"an object has the key 'kernels' twice"),
    (b"[" * 100000 + b"]" * 100000, r"^MANIFEST: is nested too deeply to be a MANIFEST\.$"),
    (b"[]", r"^MANIFEST: must be a JSON object, not a list\.$"),
    (b'{"kernels":[]}', r"^MANIFEST: has no top-level key 'producer'\.$"),
    (b'{"kernels":[],"producer":"","x":1}', r"^MANIFEST: has an unknown top-level key 'x'\.$"),
    (b'{"kernels":{},"producer":""}', r"^MANIFEST: kernels must be a list, not an object\.$"),
    (edited(set_(("producer",), 1)), r"^MANIFEST: producer must be a string, not an integer\.$"),
    (edited(delete((*T0, "bytes"))), r"^MANIFEST: kernels\[0\]\.tensors\[0\] has no key 'bytes'\.$"),
    (edited(set_((*T0, "color"), 1)), r"^MANIFEST: kernels\[0\]\.tensors\[0\] has an unknown key 'color'\.$"),
    (edited(set_((*T0, "shape"), [4096, -1])), r"tensors\[0\]\.shape\[1\] is -1; it must be at least 0\.$"),
    (edited(set_((*T0, "offset"), True)), r"tensors\[0\]\.offset must be an integer, not a boolean\.$"),
    (edited(set_((*T0, "read"), 1)), r"tensors\[0\]\.read must be true or false, not an integer\.$"),
    (edited(set_((*T0, "dtype"), "f16")), r"tensors\[0\]\.dtype is 'f16', not an element type \(i4, i8, "),
    (edited(set_((*T0, "dtype"), "i9")), r"tensors\[0\]\.dtype is i9, which never lives in memory\.$"),
    (edited(set_((*T0, "strides"), [1])), r"tensors\[0\]\.strides has 1 entry but shape has 2\.$"),
    (edited(set_((*T0, "dm_base"), 1 << 19)), r"tensors\[0\]\.dm_base is 524288; it must be at most 524287\.$"),
    (edited(set_((*T0, "arg"), None)), r"tensors\[0\]\.arg must be an integer, not null\.$"),
    (edited(set_(("kernels", 0, "tensors", 2, "arg"), 5)), r"tensors\[2\]\.arg is 5; a scratch tensor has arg null\.$"),
    (edited(set_((*T0, "arg"), 1)), r"kernels\[0\]\.tensors\[1\]\.arg is 1, not after the previous one \(1\)\.$"),
    (edited(set_(("kernels", 0, "scalars", 0, "arg"), 1)), r"scalars\[0\]\.arg is 1, which is also a tensor's argument\.$"),
    (edited(set_(("kernels", 0, "scalars", 0, "name"), "w")), r"scalars\[0\]\.name is 'w', the same name as kernels\[0\]\.tensors\[0\]\.name\.$"),
    (edited(set_((*P0, "packet"), [])), r"programs\[0\]\.packet must not be empty\.$"),
    (edited(set_((*P0, "time"), [0])), r"programs\[0\]\.time\[0\] is 0; it must be at least 1\.$"),
    (edited(set_((*P0, "loc"), None)), r"programs\[0\]\.loc must be a string, not null\.$"),
]

AGREEMENT_CASES = [
    (edited(set_((*P0, "index"), 2)), r"^MANIFEST: kernels\[0\]\.programs\[0\]\.index is 2, out of range for 2 PROGRAMS records\.$"),
    (edited(set_(("kernels", 0, "programs", 1, "index"), 0)), r"programs\[1\]\.index is 0, already listed at kernels\[0\]\.programs\[0\]\.$"),
    (edited(set_((*P0, "tensor"), 3)), r"programs\[0\]\.tensor is 3, out of range for 3 tensors\.$"),
    (edited(set_((*P0, "tensor"), 1)), r"programs\[0\]\.tensor is tensor 'a' of bf16, but PROGRAMS record 0 reads f4E2M1FN\.$"),
    (edited(set_((*P0, "out_dtype"), "bf16")), r"programs\[0\]\.out_dtype is bf16, but PROGRAMS record 0 produces f32\.$"),
    (edited(set_((*P0, "packet"), [4, 4])), r"programs\[0\]\.packet \[4, 4\] is 16 elements, but PROGRAMS record 0 has packet_size 32\.$"),
    (edited(set_((*P0, "time"), [4095])), r"programs\[0\]\.time \[4095\] x packet \[32\] is 131040 elements, but the loop nest of PROGRAMS record 0 reads 131072\.$"),
    (edited(set_((*T0, "read"), False)), r"kernels\[0\]\.tensors\[0\]\.read is false but a program reads it\.$"),
    (edited(set_(("kernels", 0, "tensors", 2, "read"), True)), r"kernels\[0\]\.tensors\[2\]\.read is true but no program reads it\.$"),
    (edited(lambda d: (K(d)["programs"].pop(), K(d)["tensors"][1].update(read=False))),
     r"^MANIFEST: lists no kernel program for PROGRAMS record 1\.$"),
]


@pytest.mark.parametrize("doc,pattern", SHAPE_CASES + AGREEMENT_CASES)
def test_reader_rejections(doc, pattern):
    rejects(file_with(doc), pattern)


def test_time_and_packet_may_be_reshaped():
    # Only the products are checked against the record (time [64, 64] x [32]).
    sb = read(file_with(edited(set_((*P0, "time"), [64, 64]))))
    assert sb.manifest.program(0)[1].shape == (64, 64, 32)


def test_manifest_section_rows():
    rejects(file_with(GOLDEN, count=2), r"^MANIFEST section: count is 2 and size \d+ bytes; it holds exactly one JSON document")
    rejects(file_with(b"", count=1), r"^MANIFEST section: count is 1 and size 0 bytes")
    rejects(file_with(GOLDEN, minor=0), r"^section row 3: a version 1\.0 file has no MANIFEST section")
    assert read(file_with(GOLDEN, minor=1)).manifest == manifest()  # a 1.1 file (8-byte TABLES headers) reads
    assert read(file_with(GOLDEN, minor=1)) == read(file_with(GOLDEN))


# --------------------------------------------------------------------------
# Writer refusals: it validates with the reader's rules, it does not read back
# --------------------------------------------------------------------------


def test_writer_refuses_what_the_reader_rejects():
    k = manifest().kernels[0]
    a = dataclasses.replace(k.tensors[1], read=False)
    bad = Manifest((dataclasses.replace(k, tensors=(k.tensors[0], a, k.tensors[2]), programs=k.programs[:1]),), "p")
    with pytest.raises(SeqBinError, match=r"^refusing to write an invalid seq.bin: MANIFEST: lists no kernel program for PROGRAMS record 1\.$"):
        write(dataclasses.replace(seqbin(), manifest=bad))
    bad = Manifest((dataclasses.replace(k, scalars=(Scalar(2, "w", F32),)),), "p")
    with pytest.raises(SeqBinError, match=r"^refusing to write an invalid seq.bin: MANIFEST: kernels\[0\]\.scalars\[0\]\.name is 'w'"):
        write(dataclasses.replace(seqbin(), manifest=bad))
    bad = Manifest((dataclasses.replace(k, name="\ud800"),), "p")
    with pytest.raises(SeqBinError, match=r"MANIFEST: holds text that is not valid Unicode"):
        write(dataclasses.replace(seqbin(), manifest=bad))


def test_writer_validates_records_without_reading_back(monkeypatch):
    import fetchc.seqbin.reader as reader

    def no_read(*a, **k):
        raise AssertionError("the writer read its output back")

    monkeypatch.setattr(reader, "read", no_read)
    monkeypatch.setattr(reader, "read_info", no_read)
    assert write(seqbin())[904:] == GOLDEN
    p = dataclasses.replace(programs()[0], flit_count=3)
    with pytest.raises(SeqBinError, match=r"^refusing to write an invalid seq.bin: program 0: flit_count \(word 30\) is 3; a packet of 32 f32 elements occupies 4 flits\.$"):
        write(SeqBin(seqbin().tables, (p,)))


# --------------------------------------------------------------------------
# From the IR (ir.md §2a)
# --------------------------------------------------------------------------

KERNEL = """\
func.func @k(%w: memref<3x10xf4E2M1FN> {rngd.dm_base = 4096 : i64}, %0: memref<4x16xbf16, strided<[32, 1], offset: 8>> {rngd.dm_base = 8192 : i64}, %g: f32, %o: memref<3x10xf8E4M3FN> {rngd.dm_base = 16384 : i64}, %o2: memref<4x16xf32> {rngd.dm_base = 20480 : i64}, %n: memref<2x3xi4, strided<[-3, 1], offset: 3>> {rngd.dm_base = 24576 : i64}) {
  %a = fetch.fetch %w {base = 4096 : i64, map = affine_map<(t, u, p) -> (t, u * 2 + p)>} : memref<3x10xf4E2M1FN> -> !fetch.stream<main, [3, 5], [2], f4E2M1FN>
  %b = fetch.convert %a : !fetch.stream<main, [3, 5], [2], f4E2M1FN> -> !fetch.stream<main, [3, 5], [2], f8E4M3FN>
  rngd.commit %b, %o : !fetch.stream<main, [3, 5], [2], f8E4M3FN>, memref<3x10xf8E4M3FN>
  %c = fetch.fetch %0 {base = 8192 : i64} : memref<4x16xbf16, strided<[32, 1], offset: 8>> -> !fetch.stream<main, [4], [16], bf16>
  %d = fetch.convert %c : !fetch.stream<main, [4], [16], bf16> -> !fetch.stream<main, [4], [16], f32>
  rngd.commit %d, %o2 : !fetch.stream<main, [4], [16], f32>, memref<4x16xf32>
  func.return
}
func.func @no_fetch(%x: memref<4xf32>) {
  func.return
}
"""


def test_manifest_from_ir():
    r = fetchc.compile(KERNEL, filename="k.mlir")
    m = r.seqbin.manifest
    assert read(r.seq_bin).manifest == m and m.producer == f"fetchc {fetchc.__version__}"
    (k,) = m.kernels  # @no_fetch is no kernel
    assert k.name == "k"
    # name, arg, dtype, shape, strides, offset, dm_base, bytes, read, committed
    got = [(t.name, t.arg, t.dtype.name, t.shape, t.strides, t.offset, t.dm_base, t.bytes, t.read, t.committed)
           for t in k.tensors]  # fmt: skip
    assert got == [
        ("w", 0, "f4E2M1FN", (3, 10), (10, 1), 0, 4096, 15, True, False),  # 30 codes, two per byte
        # unnamed %0 -> arg1; elements 8 .. 8 + 3*32 + 15 = 119: 112 bf16 = 224 bytes
        ("arg1", 1, "bf16", (4, 16), (32, 1), 8, 8192, 224, True, False),
        ("o", 3, "f8E4M3FN", (3, 10), (10, 1), 0, 16384, 30, False, True),
        ("o2", 4, "f32", (4, 16), (16, 1), 0, 20480, 256, False, True),
        # elements 3 - 3 = 0 .. 3 + 2 = 5: 6 i4 codes in bytes 0..2 = 3 bytes
        ("n", 5, "i4", (2, 3), (-3, 1), 3, 24576, 3, False, False),
    ]
    assert k.scalars == (Scalar(2, "g", F32),)
    assert [(p.index, p.tensor, p.time, p.packet, p.out_dtype.name, p.loc) for p in k.programs] == [
        (0, 0, (3, 5), (2,), "f8E4M3FN", "k.mlir:2:8"),
        (1, 1, (4,), (16,), "f32", "k.mlir:5:8"),
    ]


def program_ops(text: str):
    from fetchc.dialects.fetch_seq import ProgramOp

    r = fetchc.compile(text, filename="k.mlir")
    return [op for op in r.module.walk() if isinstance(op, ProgramOp)]


def test_missing_dm_base_is_a_located_error():
    # Without fetch-place-dm (in the default pipeline) an argument
    # without rngd.dm_base has no placement for the MANIFEST to record.
    text = KERNEL.replace(" {rngd.dm_base = 24576 : i64}", "")
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text, filename="k.mlir", pipeline="fetch-legalize-convert,fetch-split-scaling,fetch-to-seq")
    (d,) = e.value.diagnostics
    assert d.loc == ("k.mlir", 1, 1)
    assert d.message == (
        "'func.func' op argument %n has no rngd.dm_base: run fetch-place-dm (in the default pipeline) "
        "or place it with {rngd.dm_base = N : i64}"
    )


# --------------------------------------------------------------------------
# Slices (MANIFEST 1.2, ir.md §2a)
# --------------------------------------------------------------------------


def sliced() -> SeqBin:
    k = manifest().kernels[0]
    w = dataclasses.replace(k.tensors[0], slice_dim=0)
    k = dataclasses.replace(k, slices=256, tensors=(w, *k.tensors[1:]))
    return dataclasses.replace(seqbin(), manifest=Manifest((k,), "fetchc 0.1.0"))


def test_slices_round_trip_and_dis():
    data = write(sliced())
    assert b'"slices":256' in data and b'"shape":[4096,32],"slice_dim":0' in data
    back = read(data)
    assert back == sliced()
    (k,) = back.manifest.kernels  # type: ignore[union-attr]
    assert k.slices == 256 and k.tensors[0].whole_shape(256) == (1048576, 32) and k.tensors[1].whole_shape(256) == (4, 16)
    text = disassemble(data)
    assert "kernel 0: dq\n  slices: 256\n" in text
    assert "    shape: [4096, 32] per slice; whole [1048576, 32], split along dim 0\n" in text
    assert "    shape: [4, 16], replicated on every slice\n" in text


def test_a_1_1_manifest_reads_as_one_slice():
    doc = GOLDEN.replace(b'"slices":1,', b"").replace(b'"slice_dim":null,', b"")
    k = read(file_with(doc, minor=1)).manifest.kernels[0]  # type: ignore[union-attr]
    assert k.slices == 1 and all(t.slice_dim is None for t in k.tensors)


@pytest.mark.parametrize(
    "edit, message",
    [
        (set_(("kernels", 0, "slices"), 0), r"kernels\[0\]\.slices is 0; it must be at least 1\.$"),
        (set_(("kernels", 0, "slices"), 513), r"kernels\[0\]\.slices is 513; it must be at most 512\.$"),
        (set_(("kernels", 0, "slices"), "2"), r"kernels\[0\]\.slices must be an integer, not a string\.$"),
        (set_(("kernels", 0, "tensors", 0, "slice_dim"), 2), r"tensors\[0\]\.slice_dim is 2, out of range for a rank-2 shape\.$"),
        (set_(("kernels", 0, "tensors", 0, "slice_dim"), -1), r"tensors\[0\]\.slice_dim is -1; it must be at least 0\.$"),
        (set_(("kernels", 0, "tensors", 2, "slice_dim"), 0), r"tensors\[2\]\.slice_dim is 0; a scratch tensor is never split \(null\)\.$"),
    ],
)
def test_slice_fields_are_checked(edit, message):
    d = json.loads(GOLDEN)
    edit(d)
    doc = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
    with pytest.raises(SeqBinError, match=message):
        read(file_with(doc))


# --------------------------------------------------------------------------
# Placement against the programs (seqbin.md MANIFEST)
# --------------------------------------------------------------------------


def test_a_program_reading_elsewhere_than_its_tensor_is_rejected(tmp_path):
    """A valid-CRC file whose MANIFEST places tensor 'a' at 8192 while its
    program reads from base 0: ``sim --arg`` would lay 'a' out at 8192 and
    return zeros; the reader rejects it with its own message."""
    decode, act = programs()
    data = file_with(GOLDEN, progs=(decode, dataclasses.replace(act, base=0)))
    with pytest.raises(SeqBinError) as e:
        read(data)
    assert str(e.value) == (
        "MANIFEST: kernels[0].programs[1].tensor is tensor 'a', placed at DM bytes [8208, 8432) (dm_base 8192), "
        "but PROGRAMS record 1 (base 0) reads bytes [0, 224): the program and the placement disagree."
    )
    (tmp_path / "bad.bin").write_bytes(data)
    r = subprocess.run([*FETCHC, "sim", str(tmp_path / "bad.bin"), "--arg",
                        "w=0", "-o", str(tmp_path / "o.npz")], capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 1 and "the program and the placement disagree" in r.stderr
    assert not (tmp_path / "o.npz").exists()
    # one byte past the tensor's end is caught too (a loop nest one row too long)
    longer = dataclasses.replace(act, limits=(5, 16))
    with pytest.raises(SeqBinError, match=r"reads bytes \[8208, 8496\)"):
        read(file_with(GOLDEN.replace(b'"time":[4]', b'"time":[5]'), progs=(decode, longer)))


@pytest.mark.parametrize(
    "edit, message",
    [
        # a shape whose bytes no slice's DM holds: [2**62, 16] f4 spans 2**65 bytes
        (set_(("kernels", 0, "tensors", 0, "shape"), [2**62, 32]),
         r"tensors\[0\]\.bytes is 65536, but shape \[4611686018427387904, 32\], strides \[32, 1\] and offset 0 "
         r"of f4E2M1FN span 73786976294838206464 bytes\.$"),
        (set_(("kernels", 0, "tensors", 0, "bytes"), 1 << 19),
         r"tensors\[0\]\.bytes is 524288, but shape \[4096, 32\]"),
        (set_(("kernels", 0, "tensors", 1, "dm_base"), 524280),
         r"tensors\[1\]\.dm_base 524280 places tensor 'a' at DM bytes \[524296, 524520\), outside one slice's DM \[0, 524288\)\.$"),
    ],
)
def test_tensor_bytes_agree_with_their_shape_and_fit_one_slice(edit, message):
    d = json.loads(GOLDEN)
    edit(d)
    with pytest.raises(SeqBinError, match=message):
        read(file_with(json.dumps(d, sort_keys=True, separators=(",", ":")).encode()))


@pytest.mark.parametrize("rank", [64, 71])
def test_stream_ranks_past_numpy_are_refused_by_sim(tmp_path, rank):
    """A program whose MANIFEST stream has rank 64 or 71 (time dims of 1):
    ``dis`` shows it; ``sim`` reshapes only what numpy can hold (64 dims)."""
    d = json.loads(GOLDEN)
    d["kernels"][0]["programs"][1]["time"] = [1] * (rank - 2) + [4]
    data = file_with(json.dumps(d, sort_keys=True, separators=(",", ":")).encode())
    read(data)  # a valid file
    (tmp_path / "k.bin").write_bytes(data)
    (tmp_path / "dm.bin").write_bytes(bytes(1 << 19))
    r = subprocess.run([*FETCHC, "sim", str(tmp_path / "k.bin"), "--dm",
                        str(tmp_path / "dm.bin"), "--program", "dq/1", "-o", str(tmp_path / "o.npy")],
                       capture_output=True, text=True)  # fmt: skip
    if rank == 64:
        assert r.returncode == 0, r.stderr
        import numpy as np

        assert np.load(tmp_path / "o.npy").ndim == 64
    else:
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert "its stream has rank 71 (time 70 dims, packet 1), more than the 64 dimensions a numpy array" in r.stderr


def test_a_rank_70_committed_memref_under_run():
    shape = "x".join(["1"] * 69 + ["16"])
    text = f"""func.func @k(%a: memref<16xi8>, %o: memref<{shape}xi8>) {{
  %s = fetch.fetch %a : memref<16xi8> -> !fetch.stream<main, [], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [], [16], i8>, memref<{shape}xi8>
  func.return
}}"""
    from fetchc.golden.run import RunError
    import numpy as np

    with pytest.raises(RunError, match=r"^tensor 'o' of @k has rank 70: as a numpy array and a slice axis it would "
                                       r"need 71 dimensions, and numpy allows at most 64$"):  # fmt: skip
        fetchc.run(text, a=np.zeros(16, np.int8))
