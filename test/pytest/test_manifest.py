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
from fetchc.seqbin.emit import build_manifest
from fetchc.target import BF16, F4E2M1FN, F8E4M3FN, F32, I8

NONE = 0xFFFFFFFF

# --------------------------------------------------------------------------
# A hand-written kernel: one NVFP4 decode program and one bf16 -> f32 program
# --------------------------------------------------------------------------


def programs() -> tuple[Program, ...]:
    decode = Program(
        name="dq/0", unit=0, in_dtype=F4E2M1FN, out_dtype=F32, base=0x1000000, packet_size=32, fetch_size=4,
        limits=(4096, 32), strides=(32, 1), stages=0b011, table=0, type_conversion=3, zero_point0=0,
        num_zero_points=0, zp_mode=0, flit_count=4, words_per_packet=4,
    )  # fmt: skip
    act = Program(
        name="dq/1", unit=0, in_dtype=BF16, out_dtype=F32, base=0x2000, packet_size=16, fetch_size=16,
        limits=(4, 16), strides=(32, 1), stages=0b010, table=None, type_conversion=5, zero_point0=0,
        num_zero_points=0, zp_mode=0, flit_count=2, words_per_packet=2,
    )  # fmt: skip
    return decode, act


def manifest(**kw) -> Manifest:
    w = Tensor(arg=0, name="w", dtype=F4E2M1FN, shape=(4096, 32), strides=(32, 1), offset=0, dm_base=16777216,
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
    '"scalars":[{"arg":2,"dtype":"f32","name":"g"}],'
    '"tensors":[{"arg":0,"bytes":65536,"committed":false,"dm_base":16777216,"dtype":"f4E2M1FN","name":"w",'
    '"offset":0,"read":true,"shape":[4096,32],"strides":[32,1]},'
    '{"arg":1,"bytes":224,"committed":false,"dm_base":8192,"dtype":"bf16","name":"a",'
    '"offset":8,"read":true,"shape":[4,16],"strides":[32,1]},'
    '{"arg":null,"bytes":64,"committed":true,"dm_base":65536,"dtype":"i8","name":"tmp",'
    '"offset":0,"read":false,"scratch":true,"shape":[64],"strides":[1]}]}],'
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


def test_file_layout_1_1():
    data = write(seqbin())
    strings = b"dq/0\0dq/1\0"
    # header 32 + 4 rows; TABLES at 96 (520), PROGRAMS at 616 (256), STRINGS at
    # 872 (10), MANIFEST at the next multiple of 8 (888), file ends with it.
    rows = [(1, 96, 520, 1), (2, 616, 256, 2), (3, 872, 10, 2), (4, 888, len(GOLDEN), 1)]
    assert [struct.unpack_from("<IIII", data, 32 + 16 * i) for i in range(4)] == rows
    size = 888 + len(GOLDEN)
    assert struct.unpack_from("<4sHHIII", data, 0) == (b"FSEQ", 1, 1, 0, 4, size) and len(data) == size
    assert data[872:882] == strings and data[882:888] == bytes(6)
    assert data[888:] == GOLDEN
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
    assert text.startswith("seq.bin version 1.1, ")
    assert "section MANIFEST: offset 888, size %d, count 1\n" % len(GOLDEN) in text
    assert (
        "  flit_count: 4\n  kernel: dq\n  tensor: w (arg 0)\n  stream: time [4096] packet [32]\n"
        "  loc: dq.mlir:12:8\nprogram 1:"
    ) in text
    assert text.endswith(
        'manifest: producer "fetchc 0.1.0"\n'
        "kernels: 1\n"
        "kernel 0: dq\n"
        "  tensors: 3\n"
        "  tensor 0: w (arg 0)\n"
        "    dtype: f4E2M1FN\n"
        "    shape: [4096, 32]\n"
        "    layout: strides [32, 1], offset 0\n"
        "    dm_base: 0x1000000 (16777216)\n"
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
        "  programs: 0, 1\n"
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


def file_with(doc: bytes, *, count: int = 1, minor: int = 1) -> bytes:
    """The seqbin() file with its MANIFEST replaced by ``doc``."""
    head = write(dataclasses.replace(seqbin(), manifest=None))  # 1.0: 3 rows, sections from 80
    # Rebuild with 4 rows: shift every section by 16 bytes, append MANIFEST.
    rows = [list(struct.unpack_from("<IIII", head, 32 + 16 * i)) for i in range(3)]
    body = head[80:]
    for r in rows:
        r[1] += 16
    end = 80 + 16 + len(body)
    moff = -(-end // 8) * 8
    rows.append([4, moff, len(doc), count])
    b = bytearray(b"FSEQ" + struct.pack("<HHIIIIQ", 1, minor, 0, 4, moff + len(doc), 0, 0))
    b += b"".join(struct.pack("<IIII", *r) for r in rows) + body + bytes(moff - end) + doc
    b[20:24] = struct.pack("<I", zlib.crc32(bytes(b)))
    return bytes(b)


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
    (edited(set_((*T0, "strides"), [1])), r"tensors\[0\]\.strides has 1 entries but shape has 2\.$"),
    (edited(set_((*T0, "dm_base"), 1 << 32)), r"tensors\[0\]\.dm_base is 4294967296; it must be at most 4294967295\.$"),
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
    assert read(file_with(GOLDEN, minor=2)).manifest == manifest()  # a later minor version reads


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
    assert write(seqbin())[888:] == GOLDEN
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
