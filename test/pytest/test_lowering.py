"""Tests of the back half of the pipeline: fetch-legalize-convert,
fetch-split-scaling, fetch-to-seq and the seq.bin emitter, through
``fetchc.compile`` and the ``fetchc`` command line.

* Sequencer derivation through the IR (hardware.md §3): every expected
  configuration is computed by hand in the comments, never by calling the
  code under test.
* The four lookup tables in a compiled seq.bin, parsed here with ``struct``
  per seqbin.md, against ``ml_dtypes`` conversions computed here (not with
  ``fetchc.target``).
* Determinism (seqbin.md: equal input gives byte-identical output), across
  runs and ``PYTHONHASHSEED``.
* Output safety of ``-o`` (ir.md §5: on any error no output file is created
  or overwritten).
* Regressions for the pass fixes (table reuse, dedup by content, identity
  converts, the inserted scale fetch's limits).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fetchc
from fetchc.diagnostics import DiagnosticError
from served import FETCHC

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.mlir"))


def compile_text(text: str) -> fetchc.CompileResult:
    return fetchc.compile(text, filename="test.mlir")


def one_fetch(memref: str, stream: str, *, map: str | None = None, base: int = 4096, extra: str = "",
              chain: str = "", out_stream: str | None = None, out_memref: str | None = None) -> str:
    """A function with one fetch (optionally followed by ``chain``, text
    using ``%s`` as input and defining ``%r``) committed to a memref."""
    props = [f"base = {base} : i64"]
    if map:
        props.append(f"map = affine_map<{map}>")
    if extra:
        props.append(extra)
    out_stream = out_stream or stream
    if out_memref is None:
        out_memref = memref.split(",")[0].rstrip(">") + ">" if "strided" in memref else memref
    value = "%r" if chain else "%s"
    return f"""
func.func @k(%in: {memref}, %out: {out_memref}) {{
  %s = fetch.fetch %in {{{", ".join(props)}}} : {memref} -> {stream}
  {chain}
  rngd.commit {value}, %out : {out_stream}, {out_memref}
  func.return
}}
"""


# --------------------------------------------------------------------------
# Sequencer derivation through the IR (hardware.md §3)
# --------------------------------------------------------------------------


def test_book_transpose_nchw_to_whcn():
    # memref<4x3x8x8xbf16> (N, C, H, W) has row-major strides (192, 64, 8, 1).
    # Read W, H, C, N (W outermost) with a one-element packet:
    #   (8 : 1), (8 : 8), (3 : 64), (4 : 192); no outer stride equals
    #   inner size * inner stride (8 != 8*8, 64 != 3*... etc.), so nothing
    #   merges: [8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1.  One bf16 per read: 2 bytes.
    r = compile_text(one_fetch(
        "memref<4x3x8x8xbf16>", "!fetch.stream<main, [8, 8, 3, 4], [1], bf16>",
        map="(w, h, c, n, e) -> (n, c, h, w + e)", base=65536, out_memref="memref<8x8x3x4xbf16>"))
    (p,) = r.programs
    assert (p.limits, p.strides, p.packet_size) == ((8, 8, 3, 4), (1, 8, 64, 192), 1)
    assert (p.base, p.fetch_size, p.words_per_packet, p.flit_count) == (65536, 2, 1, 1)
    assert p.name == "k/0" and p.unit == 0 and p.stages == 0 and p.table is None


def test_merge_f4_rows_into_one_entry():
    # memref<4096x16xf4E2M1FN>, time [4096], packet [16] (identity map):
    # (4096 : 16), (16 : 1) -> 16 == 16*1 and 4096*16 = 65536 <= 65536 ->
    # [65536 : 1] : 16.  16 codes = 8 bytes per read, 1 read per packet;
    # output 16 x 0.5 byte = 8 bytes = 1 flit.  base 0x8000 unchanged.
    r = compile_text(one_fetch("memref<4096x16xf4E2M1FN>", "!fetch.stream<main, [4096], [16], f4E2M1FN>",
                               base=32768))
    (p,) = r.programs
    assert (p.limits, p.strides, p.packet_size) == ((65536,), (1,), 16)
    assert (p.base, p.fetch_size, p.words_per_packet, p.flit_count) == (32768, 8, 1, 1)


def test_merge_bf16_row_pieces():
    # memref<8x512xbf16> read as time [8, 16], packet [32] with
    # (a, b, p) -> (a, b*32 + p): dims (8 : 512), (16 : 32), (32 : 1).
    # (16 : 32) merges into (32 : 1) -> (512 : 1); (8 : 512) merges -> (4096 : 1).
    # [4096 : 1] : 32.  32 bf16 = 64 bytes: largest legal read 32 bytes = 16
    # elements -> fetch_size 32, 2 words per packet, 64 bytes = 2 flits.
    r = compile_text(one_fetch("memref<8x512xbf16>", "!fetch.stream<main, [8, 16], [32], bf16>",
                               map="(a, b, p) -> (a, b * 32 + p)"))
    (p,) = r.programs
    assert (p.limits, p.strides, p.packet_size) == ((4096,), (1,), 32)
    assert (p.fetch_size, p.words_per_packet, p.flit_count) == (32, 2, 2)


def test_merge_stops_at_65536():
    # memref<131072xi8>, time [4096], packet [32], (t, p) -> (t*32 + p):
    # (4096 : 32) would merge into (32 : 1) but 4096*32 = 131072 > 65536, so
    # [4096 : 32, 32 : 1] : 32.  32 i8 = 32 bytes: one read.
    r = compile_text(one_fetch("memref<131072xi8>", "!fetch.stream<main, [4096], [32], i8>",
                               map="(t, p) -> (t * 32 + p)"))
    (p,) = r.programs
    assert (p.limits, p.strides, p.packet_size) == ((4096, 32), (32, 1), 32)
    assert (p.fetch_size, p.words_per_packet, p.flit_count) == (32, 1, 1)


def test_split_large_dimension():
    # memref<100000xi8> read one element per packet, time [100000]:
    # (100000 : 1) > 65536 splits into (a : b), (b : 1), b the largest divisor
    # of 100000 <= 65536 with a <= 65536: 100000 = 2^5 * 5^5; 50000 divides
    # and 62500 = 2^2*5^6 does not (5^6 > 5^5); between 50000 and 65536 the
    # divisors of 100000 are none (100000/2 = 50000, 100000/1 = 100000).
    # -> [2 : 50000, 50000 : 1] : 1.
    r = compile_text(one_fetch("memref<100000xi8>", "!fetch.stream<main, [100000], [1], i8>",
                               map="(t, p) -> (t + p)"))
    (p,) = r.programs
    assert (p.limits, p.strides, p.packet_size, p.fetch_size) == ((2, 50000), (50000, 1), 1, 1)


def test_tile_base_folding_strided_and_map():
    # A 64x128 tile at rows 128.., cols 256.. of a 256x512 bf16 matrix at
    # 0x10000.  Element offset 128*512 + 256 = 65792 -> bytes 131584 ->
    # base 65536 + 131584 = 197120.  Entries: (64 : 512), (4 : 32),
    # (32 : 1) -> (4 : 32) merges -> (128 : 1); 512 != 128 -> stays.
    stream = "!fetch.stream<main, [64, 4], [32], bf16>"
    strided = compile_text(one_fetch(
        "memref<64x128xbf16, strided<[512, 1], offset: 65792>>", stream,
        map="(r, p, e) -> (r, p * 32 + e)", base=65536, out_memref="memref<64x128xbf16>"))
    mapped = compile_text(one_fetch(
        "memref<256x512xbf16>", stream, map="(r, p, e) -> (r + 128, p * 32 + e + 256)",
        base=65536, out_memref="memref<64x128xbf16>"))
    for r in (strided, mapped):
        (p,) = r.programs
        assert (p.base, p.limits, p.strides, p.packet_size) == (197120, (64, 128), (512, 1), 32)
        assert (p.fetch_size, p.words_per_packet) == (32, 2)
    # The same PROGRAMS and STRINGS bytes (the MANIFESTs differ: the memref types do).
    for kind in (2, 3):
        (a, n, _), (b, m, _) = (_sections(r.seq_bin)[kind] for r in (strided, mapped))
        assert strided.seq_bin[a : a + n] == mapped.seq_bin[b : b + m]


def test_negative_stride_and_broadcast():
    # Rows read bottom-up: (t, p) -> (15 - t, p) on memref<16x32xi8>: first
    # element at row 15 -> base 4096 + 15*32 = 4576; entries (16 : -32),
    # (32 : 1); -32 != 32 -> [16 : -32, 32 : 1] : 32.
    r = compile_text(one_fetch("memref<16x32xi8>", "!fetch.stream<main, [16], [32], i8>",
                               map="(t, p) -> (15 - t, p)"))
    (p,) = r.programs
    assert (p.base, p.limits, p.strides) == (4576, (16, 32), (-32, 1))
    # One row broadcast 8 times: (t, p) -> (p): (8 : 0), (32 : 1) ->
    # [8 : 0, 32 : 1] : 32, reads of 32 bytes.
    r = compile_text(one_fetch("memref<32xi8>", "!fetch.stream<main, [8], [32], i8>", map="(t, p) -> (p)",
                               out_memref="memref<256xi8>"))
    (p,) = r.programs
    assert (p.limits, p.strides, p.fetch_size) == ((8, 32), (0, 1), 32)


@pytest.mark.parametrize(
    "src, dst, packet, want_fetch, want_words, want_flits",
    [
        # e2m1 -> f32 (lookup + cast): cast output <= 32 bytes -> 8 codes per
        # read (4 bytes); packet 64 -> 8 words; 64 x 4 = 256 bytes = 8 flits.
        ("f4E2M1FN", "f32", 64, 4, 8, 8),
        # i4 -> i32: 8 elements per read (4 bytes) -> 32 bytes of i32.
        ("i4", "i32", 32, 4, 4, 4),
        # i8 -> i32: 8 per read (8 bytes).
        ("i8", "i32", 32, 8, 4, 4),
        # i16 -> i32: 8 per read (16 bytes).
        ("i16", "i32", 32, 16, 4, 4),
        # bf16 -> f32: 8 per read (16 bytes).
        ("bf16", "f32", 32, 16, 4, 4),
        # f32 -> bf16: narrowing, 8 f32 per read = 32 bytes (the read cap).
        ("f32", "bf16", 32, 32, 4, 2),
        # f8 -> bf16 is a lookup, not a cast: no cast cap, 32 bytes per read.
        ("f8E4M3FN", "bf16", 32, 32, 1, 2),
    ],
)
def test_read_size_respects_cast_output(src, dst, packet, want_fetch, want_words, want_flits):
    stream = lambda t: f"!fetch.stream<main, [4], [{packet}], {t}>"  # noqa: E731
    n = 4 * packet
    r = compile_text(one_fetch(
        f"memref<{n}x{src}>", stream(src), map=f"(t, p) -> (t * {packet} + p)",
        chain=f"%r = fetch.convert %s : {stream(src)} -> {stream(dst)}",
        out_stream=stream(dst), out_memref=f"memref<{n}x{dst}>"))
    (p,) = r.programs
    assert (p.fetch_size, p.words_per_packet, p.flit_count) == (want_fetch, want_words, want_flits)


@pytest.mark.parametrize(
    "elem, out, zp, packet, flits",
    [
        ("i4", "i5", 3, 64, 2),     # i5 counts 1 byte: 64 bytes = 2 flits
        ("i4", "i5", 3, 32, 1),     # 32 bytes = 1 flit
        ("i8", "i9", -100, 16, 1),  # i9 counts 2 bytes: 32 bytes = 1 flit
        ("i8", "i9", -100, 32, 2),  # 64 bytes = 2 flits
    ],
)
def test_flit_count_zero_point(elem, out, zp, packet, flits):
    s_in = f"!fetch.stream<main, [4], [{packet}], {elem}>"
    s_out = f"!fetch.stream<main, [4], [{packet}], {out}>"
    text = f"""
func.func @k(%in: memref<{4 * packet}x{elem}>, %t: !rngd.trf<{elem}>, %out: memref<{4 * packet}xi32>) {{
  %s = fetch.fetch %in {{base = 4096 : i64, map = affine_map<(t, p) -> (t * {packet} + p)>}} : memref<{4 * packet}x{elem}> -> {s_in}
  %z = fetch.zp_sub %s, {zp} : {s_in} -> {s_out}
  %y = rngd.contract_outer %z, %t : {s_out}, !rngd.trf<{elem}> -> !fetch.stream<main, [4], [{packet}], i32>
  rngd.commit %y, %out : !fetch.stream<main, [4], [{packet}], i32>, memref<{4 * packet}xi32>
  func.return
}}
"""
    (p,) = compile_text(text).programs
    assert (p.flit_count, p.zero_point0, p.num_zero_points, p.stages) == (flits, zp, 1, 4)
    assert p.zp_mode == (1 if elem == "i4" else 2)


@pytest.mark.parametrize("packet, flits", [(64, 1), (96, 2), (2, 1)])
def test_flit_count_4bit_without_stages(packet, flits):
    # A 4-bit stream leaves the adapter at half a byte per element, rounded up
    # to whole flits: 64 -> 32 bytes -> 1; 96 -> 48 -> 2; 2 -> 1 byte -> 1.
    s = f"!fetch.stream<main, [4], [{packet}], f4E2M1FN>"
    (p,) = compile_text(one_fetch(f"memref<{4 * packet}xf4E2M1FN>", s, map=f"(t, p) -> (t * {packet} + p)")).programs
    assert p.flit_count == flits and p.stages == 0


# --------------------------------------------------------------------------
# Program naming, order, table dedup (ir.md §4, seqbin.md)
# --------------------------------------------------------------------------

TWO_FUNCS = """
func.func @b_first(%x: memref<64x32xf8E5M2>, %xo: memref<64x32xbf16>,
                   %w: memref<64x32xf4E2M1FN>, %wo: memref<64x32xf32>) {
  %0 = fetch.fetch %x {base = 8192 : i64} : memref<64x32xf8E5M2> -> !fetch.stream<main, [64], [32], f8E5M2>
  %1 = fetch.convert %0 : !fetch.stream<main, [64], [32], f8E5M2> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %1, %xo : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  %2 = fetch.fetch %w {base = 16384 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %3 = fetch.convert %2 : !fetch.stream<main, [64], [32], f4E2M1FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %3, %wo : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}
func.func @a_second(%w: memref<64x32xf4E2M1FN>, %wo: memref<64x32xf8E4M3FN>,
                    %y: memref<64x32xf8E4M3FN>, %yo: memref<64x32xbf16>,
                    %q: memref<64x16xf4E2M1FN>, %s: memref<64x1xf8E4M3FN>, %g: f32, %qo: memref<64x16xf32>) {
  %0 = fetch.fetch %w {base = 16384 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %1 = fetch.table_lookup %0 : !fetch.stream<main, [64], [32], f4E2M1FN> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  rngd.commit %1, %wo : !fetch.stream<main, [64], [32], f8E4M3FN>, memref<64x32xf8E4M3FN>
  %2 = fetch.fetch %y {base = 24576 : i64} : memref<64x32xf8E4M3FN> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  %3 = fetch.convert %2 : !fetch.stream<main, [64], [32], f8E4M3FN> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %3, %yo : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  %4 = fetch.fetch %q {base = 32768 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %5 = fetch.dequant %4, %s, %g {format = "nvfp4", scale_base = 40960 : i64} : !fetch.stream<main, [64], [16], f4E2M1FN>, memref<64x1xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %5, %qo : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  func.return
}
"""


def test_program_names_order_and_tables():
    r = compile_text(TWO_FUNCS)
    # Functions in file order (not alphabetical), fetches in order; the
    # dequant's scale fetch is inserted right after the codes' fetch, so it
    # is a_second/3 and the codes a_second/2.
    assert [p.name for p in r.programs] == [
        "b_first/0", "b_first/1", "a_second/0", "a_second/1", "a_second/2", "a_second/3"]
    # Tables in order of first use: f8E5M2->bf16 (b_first/0), e2m1->e4m3
    # (b_first/1), f8E4M3FN->bf16 (a_second/1); the e2m1 table once for
    # b_first/1, a_second/0 and the dequant a_second/2.
    pairs = [(t.in_dtype.name, t.out_dtype.name) for t in r.tables]
    assert pairs == [("f8E5M2", "bf16"), ("f4E2M1FN", "f8E4M3FN"), ("f8E4M3FN", "bf16")]
    assert [p.table for p in r.programs] == [0, 1, 1, 2, 1, None]
    assert [p.type_conversion for p in r.programs] == [None, 3, None, None, 3, 3]
    # One fetch_seq.table op per distinct table in the residual IR.
    assert r.mlir.count("fetch_seq.table @") == 3
    assert r.mlir.count("fetch_seq.program ") == 6


def test_table_indices_in_the_file_match_first_use():
    # Parse the PROGRAMS section by hand: word 25 is the table index.
    data = compile_text(TWO_FUNCS).seq_bin
    sections = _sections(data)
    off, size, count = sections[2]
    words = [struct.unpack_from("<32I", data, off + 128 * i) for i in range(count)]
    assert [w[25] for w in words] == [0, 1, 1, 2, 1, 0xFFFFFFFF]
    assert sections[1][2] == 3  # three TABLES records


def test_fetch_to_seq_reuses_tables_already_in_the_module():
    # Lower one function to fetch_seq, then add a second function with more
    # fetches and run fetch-to-seq again: the existing table is reused, not
    # duplicated, and a new one is added.
    first = fetchc.compile(TWO_FUNCS.split("func.func @a_second")[0]).mlir
    more = TWO_FUNCS[TWO_FUNCS.index("func.func @a_second"):]
    text = first.rstrip().rstrip("}") + more + "}\n"
    r = fetchc.compile(text)
    assert r.mlir.count("fetch_seq.table @f4E2M1FN_to_f8E4M3FN ") == 1
    assert r.mlir.count("fetch_seq.table @") == 3
    # The same TABLES, PROGRAMS and STRINGS bytes (the MANIFEST locations differ:
    # the second input is printed IR).
    ref = compile_text(TWO_FUNCS).seq_bin
    for kind in (1, 2, 3):
        (a, n, _), (b, m, _) = _sections(r.seq_bin)[kind], _sections(ref)[kind]
        assert r.seq_bin[a : a + n] == ref[b : b + m]


def test_two_symbols_for_one_table_are_rejected():
    # Each distinct table appears once (seqbin.md TABLES): the fetch_seq.table
    # verifier refuses a second symbol holding the same table, so the
    # serialiser never has to de-duplicate (the emitter stays free of logic).
    r = fetchc.compile(TWO_FUNCS.split("func.func @a_second")[0])
    text = r.mlir.replace("@f4E2M1FN_to_f8E4M3FN", "@e2m1_a", 1)
    table_line = next(line for line in text.splitlines() if "fetch_seq.table @e2m1_a" in line)
    text = text.replace(table_line, table_line + "\n" + table_line.replace("@e2m1_a", "@e2m1_b"))
    text = text.replace("table = @f4E2M1FN_to_f8E4M3FN", "table = @e2m1_b")
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text, pipeline="")
    (d,) = e.value.diagnostics
    assert "'fetch_seq.table' op holds the same table as @e2m1_a" in d.message


def test_fetch_without_stages():
    r = compile_text(one_fetch("memref<64x32xi8>", "!fetch.stream<sub, [64], [32], i8>"))
    (p,) = r.programs
    assert (p.unit, p.stages, p.table, p.type_conversion, p.zero_point0, p.num_zero_points, p.zp_mode) == (
        1, 0, None, None, 0, 0, 0)
    assert (p.fetch_size, p.words_per_packet) == (8, 4)  # sub: 8-byte reads
    assert p.in_dtype == p.out_dtype
    assert r.tables == ()


def test_identity_convert_disappears():
    s = "!fetch.stream<main, [4], [32], bf16>"
    r = compile_text(one_fetch("memref<128xbf16>", s, map="(t, p) -> (t * 32 + p)",
                               chain=f"%r = fetch.convert %s : {s} -> {s}"))
    assert "fetch.convert" not in r.mlir
    (p,) = r.programs
    assert p.stages == 0


def test_identity_convert_between_two_casts_is_the_casts_error():
    # fetch -> cast -> convert(identity) -> cast: the identity convert goes
    # away and the verifier reports the second cast at its own location.
    s8 = "!fetch.stream<main, [4], [8], f8E4M3FN>"
    s32 = "!fetch.stream<main, [4], [8], f32>"
    s16 = "!fetch.stream<main, [4], [8], bf16>"
    chain = (f"%a = fetch.cast %s : {s8} -> {s32}\n"
             f"  %b = fetch.convert %a : {s32} -> {s32}\n"
             f"  %r = fetch.cast %b : {s32} -> {s16}")
    text = one_fetch("memref<32xf8E4M3FN>", s8, map="(t, p) -> (t * 8 + p)", chain=chain,
                     out_stream=s16, out_memref="memref<32xbf16>")
    with pytest.raises(DiagnosticError) as e:
        compile_text(text)
    (d,) = e.value.diagnostics
    assert "'fetch.cast' op a second type cast is not possible" in d.message
    assert d.loc is not None and d.loc[1] == 6  # the second fetch.cast


def test_scale_base_checked_by_the_dequant_verifier():
    """A misaligned scale_base is a verifier error at the fetch.dequant,
    before any pass (ir.md §3: rules are op verifiers)."""
    text = TWO_FUNCS.replace("scale_base = 40960", "scale_base = 40963")
    with pytest.raises(DiagnosticError) as e:
        compile_text(text)
    (d,) = e.value.diagnostics
    assert d.message.startswith("'fetch.dequant' op scale_base 40963 is not a multiple of 8 bytes (it is the base of the block-scale fetch)")
    assert "after pass" not in d.message


def test_split_scaling_scale_map_walks_blocks():
    # NVFP4 codes read block-major: time (b, r) with b stepping the input
    # axis by 32 (2 blocks), packet 32.  The scale fetch reads scales
    # (r + 2, 2b + e + 1) for const col 16 -> block 1, packet [2].
    text = """
func.func @k(%w: memref<16x128xf4E2M1FN>, %s: memref<16x8xf8E4M3FN>, %g: f32, %o: memref<3x8x32xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(b, r, e) -> (r + 2, b * 32 + e + 16)>} : memref<16x128xf4E2M1FN> -> !fetch.stream<main, [3, 8], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 8192 : i64} : !fetch.stream<main, [3, 8], [32], f4E2M1FN>, memref<16x8xf8E4M3FN>, f32 -> !fetch.stream<main, [3, 8], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [3, 8], [32], f32>, memref<3x8x32xf32>
  func.return
}
"""
    r = compile_text(text)
    codes, scales = r.programs
    # Codes: first element (2, 16) -> 2*128 + 16 = 272 codes = 136 bytes ->
    # base 4232; entries (3 : 32), (8 : 128), (32 : 1), nothing merges.
    assert (codes.base, codes.limits, codes.strides) == (4232, (3, 8, 32), (32, 128, 1))
    # Scales: first element (2, 1) -> 2*8 + 1 = 17 -> base 8209; entries
    # (3 : 2), (8 : 8), (2 : 1), nothing merges; packet 2 f8 -> cast f32.
    assert (scales.base, scales.limits, scales.strides, scales.packet_size) == (8209, (3, 8, 2), (2, 8, 1), 2)
    assert (scales.in_dtype.name, scales.out_dtype.name, scales.type_conversion) == ("f8E4M3FN", "f32", 3)


# --------------------------------------------------------------------------
# The four tables, entry by entry, against ml_dtypes
# --------------------------------------------------------------------------

ALL_TABLES = """
func.func @tables(%a: memref<64xf4E2M1FN>, %ao: memref<64xf8E4M3FN>,
                  %b: memref<64xf4E2M1FN>, %bo: memref<64xf8E5M2>,
                  %c: memref<64xf8E4M3FN>, %co: memref<64xbf16>,
                  %d: memref<64xf8E5M2>, %do: memref<64xbf16>) {
  %0 = fetch.fetch %a {base = 0 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf4E2M1FN> -> !fetch.stream<main, [2], [32], f4E2M1FN>
  %1 = fetch.convert %0 : !fetch.stream<main, [2], [32], f4E2M1FN> -> !fetch.stream<main, [2], [32], f8E4M3FN>
  rngd.commit %1, %ao : !fetch.stream<main, [2], [32], f8E4M3FN>, memref<64xf8E4M3FN>
  %2 = fetch.fetch %b {base = 64 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf4E2M1FN> -> !fetch.stream<main, [2], [32], f4E2M1FN>
  %3 = fetch.convert %2 : !fetch.stream<main, [2], [32], f4E2M1FN> -> !fetch.stream<main, [2], [32], f8E5M2>
  rngd.commit %3, %bo : !fetch.stream<main, [2], [32], f8E5M2>, memref<64xf8E5M2>
  %4 = fetch.fetch %c {base = 128 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf8E4M3FN> -> !fetch.stream<main, [2], [32], f8E4M3FN>
  %5 = fetch.convert %4 : !fetch.stream<main, [2], [32], f8E4M3FN> -> !fetch.stream<main, [2], [32], bf16>
  rngd.commit %5, %co : !fetch.stream<main, [2], [32], bf16>, memref<64xbf16>
  %6 = fetch.fetch %d {base = 192 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf8E5M2> -> !fetch.stream<main, [2], [32], f8E5M2>
  %7 = fetch.convert %6 : !fetch.stream<main, [2], [32], f8E5M2> -> !fetch.stream<main, [2], [32], bf16>
  rngd.commit %7, %do : !fetch.stream<main, [2], [32], bf16>, memref<64xbf16>
  func.return
}
"""


def _sections(data: bytes) -> dict[int, tuple[int, int, int]]:
    """kind -> (offset, size, count), read per seqbin.md."""
    magic, vmaj, vmin, flags, nsec, fsize, crc, _ = struct.unpack_from("<4sHHIIIIQ", data, 0)
    assert (magic, vmaj, vmin, flags, fsize) == (b"FSEQ", 1, 2, 0, len(data))
    assert crc == zlib.crc32(data[:20] + b"\0\0\0\0" + data[24:])
    out = {}
    for i in range(nsec):
        kind, off, size, count = struct.unpack_from("<IIII", data, 32 + 16 * i)
        out[kind] = (off, size, count)
    return out


def _e2m1_values() -> np.ndarray:
    # hardware.md §4: magnitudes by 3-bit index, bit 3 the sign.
    ladder = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    return np.array([(-1.0 if c & 8 else 1.0) * ladder[c & 7] for c in range(16)], dtype=np.float32)


def _expected_tables() -> list[tuple[int, int, int, int, list[int]]]:
    """(paired, in code, out code, entries) for the file's four tables, in
    first-use order, computed with ml_dtypes from first principles."""
    e2m1 = _e2m1_values()
    # -0.0 must stay -0.0 (code 8): np.float32(-1.0 * 0.0) is -0.0.
    assert np.signbit(e2m1[8])
    out = []
    for dt, code in ((ml_dtypes.float8_e4m3fn, 8), (ml_dtypes.float8_e5m2, 9)):
        enc = e2m1.astype(dt).view(np.uint8).astype(int)
        out.append((1, 7, code, [int(enc[k & 0xF] | (enc[k >> 4] << 8)) for k in range(256)]))
    for dt, code in ((ml_dtypes.float8_e4m3fn, 8), (ml_dtypes.float8_e5m2, 9)):
        vals = np.arange(256, dtype=np.uint8).view(dt)
        bf = vals.astype(ml_dtypes.bfloat16).view(np.uint16).astype(int)
        # Through f32 gives the same bits (every f8 value is exact in both).
        via32 = vals.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16).astype(int)
        assert list(bf) == list(via32)
        out.append((0, code, 10, [int(x) for x in bf]))
    return out


def test_all_256_keys_of_the_four_tables():
    data = compile_text(ALL_TABLES).seq_bin
    off, size, count = _sections(data)[1]
    assert (size, count) == (4 * 536, 4)  # seqbin.md 1.2: 24-byte header + 256 u16 entries
    expected = _expected_tables()
    for i, (paired, in_code, out_code, entries) in enumerate(expected):
        rec = data[off + 536 * i: off + 536 * (i + 1)]
        head = struct.unpack_from("<BBBBHHIfiI", rec, 0)
        assert head == (1, paired, in_code, out_code, 2, 0, 256, 1.0, 0, 0)  # function 0: a decode table
        got = list(struct.unpack_from("<256H", rec, 24))
        bad = [k for k in range(256) if got[k] != entries[k]]
        assert not bad, f"table {i}: keys {bad[:8]} differ"


def test_table_spot_values():
    # seqbin.md example: paired e4m3 key 0x21 -> 0x3830 (0.5 low, 1.0 high).
    data = compile_text(ALL_TABLES).seq_bin
    off = _sections(data)[1][0]
    entry = lambda t, k: struct.unpack_from("<H", data, off + 536 * t + 24 + 2 * k)[0]  # noqa: E731
    assert entry(0, 0x21) == 0x3830
    assert entry(0, 0x88) == 0x8080  # -0.0 twice
    assert entry(0, 0xF7) == 0xCC4C  # 6.0 low (0x4C), -6.0 high (0xCC)
    # e5m2: 6.0 = 0x46, 0.5 = 0x38.
    assert entry(1, 0x17) == 0x3846
    # f8E4M3FN -> bf16: 0x7F and 0xFF are NaN -> quiet NaN with sign.
    assert (entry(2, 0x7F), entry(2, 0xFF)) == (0x7FC0, 0xFFC0)
    assert entry(2, 0x38) == 0x3F80  # 1.0
    assert entry(2, 0x7E) == 0x43E0  # 448, the largest e4m3 value
    # f8E5M2 -> bf16: infinities stay, NaNs are quiet with sign.
    assert (entry(3, 0x7C), entry(3, 0xFC)) == (0x7F80, 0xFF80)
    assert [entry(3, k) for k in (0x7D, 0x7E, 0x7F)] == [0x7FC0] * 3
    assert [entry(3, k) for k in (0xFD, 0xFE, 0xFF)] == [0xFFC0] * 3
    assert entry(3, 0x01) == 0x3780  # 2^-16, the smallest subnormal


# --------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_deterministic_in_process(path):
    text = path.read_text()
    a, b = fetchc.compile(text), fetchc.compile(text)
    assert a.seq_bin == b.seq_bin
    assert a.mlir == b.mlir


def _run(args, env_extra=None, **kw):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run(FETCHC + list(args), capture_output=True, env=env, cwd=REPO, **kw)


_CHILD = r"""
import hashlib, sys
from fetchc.cli import main
out_dir, paths = sys.argv[1], sys.argv[2:]
h = hashlib.sha256()
for i, path in enumerate(paths):
    for emit in ("bin", "mlir", "seq"):
        out = f"{out_dir}/{i}.{emit}"
        assert main([path, f"--emit={emit}", "-o", out]) == 0, (path, emit)
        h.update(open(out, "rb").read())
print(h.hexdigest())
"""


def test_deterministic_across_hash_seeds(tmp_path):
    # One child process per seed compiles every example (and the multi-
    # function fetch-to-seq test) through the command line, three ways; the
    # digests of all outputs must agree.
    paths = [str(p) for p in EXAMPLES + [REPO / "test/lit/passes/fetch-to-seq.mlir"]]
    digests = {}
    for seed in ("0", "1", "4242", "random"):
        out = tmp_path / seed
        out.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", _CHILD, str(out), *paths], capture_output=True, env=env, cwd=REPO)
        assert r.returncode == 0, r.stderr.decode()
        digests[seed] = r.stdout.strip()
    assert len(set(digests.values())) == 1, digests


def test_examples_match_the_api():
    # The command line and fetchc.compile give the same bytes.
    for path in EXAMPLES:
        r = _run([str(path), "-o", "-"])
        assert r.returncode == 0, r.stderr.decode()
        assert r.stdout == fetchc.compile(path.read_text(), filename=str(path)).seq_bin


# --------------------------------------------------------------------------
# Output safety of -o
# --------------------------------------------------------------------------

BAD = """
func.func @k(%b: memref<64xi8>, %o: memref<64xi8>) {
  %s = fetch.fetch %b {base = 4100 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i8>, memref<64xi8>
  func.return
}
"""


PASS_ERROR = """
func.func @k(%b: memref<64xf32>, %o: memref<64xf8E4M3FN>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 8 + p)>} : memref<64xf32> -> !fetch.stream<main, [8], [8], f32>
  %c = fetch.convert %s : !fetch.stream<main, [8], [8], f32> -> !fetch.stream<main, [8], [8], f8E4M3FN>
  rngd.commit %c, %o : !fetch.stream<main, [8], [8], f8E4M3FN>, memref<64xf8E4M3FN>
  func.return
}
"""


@pytest.mark.parametrize("emit", ["bin", "mlir", "seq"])
def test_failing_compile_leaves_existing_output_untouched(tmp_path, emit):
    src = tmp_path / "bad.mlir"
    src.write_text(BAD)
    out = tmp_path / "out.bin"
    out.write_bytes(b"previous contents")
    before = out.stat()
    r = _run([str(src), f"--emit={emit}", "-o", str(out)])
    assert r.returncode == 1
    assert b"error: 'fetch.fetch' op base 4100 is not a multiple of 8 bytes" in r.stderr
    assert b"Traceback" not in r.stderr
    assert out.read_bytes() == b"previous contents"
    assert out.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir", "out.bin"]  # no temp file left


def test_failing_compile_creates_no_output(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(BAD)
    out = tmp_path / "out.bin"
    assert _run([str(src), "-o", str(out)]).returncode == 1
    assert not out.exists()
    # A parse error and a pass error behave the same.
    src.write_text(BAD.replace("func.return", "func.retur"))
    assert _run([str(src), "-o", str(out)]).returncode == 1
    assert not out.exists()
    src.write_text(PASS_ERROR)
    r = _run([str(src), "-o", str(out)])
    assert r.returncode == 1 and b"'fetch.convert' op cannot be legalised" in r.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir"]


def test_successful_compile_replaces_output_atomically(tmp_path):
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    path = REPO / "examples" / "tiling_read.mlir"
    r = _run([str(path), "-o", str(out)])
    assert r.returncode == 0, r.stderr.decode()
    assert out.read_bytes() == fetchc.compile(path.read_text(), filename=str(path)).seq_bin
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_unwritable_output_is_an_error(tmp_path):
    path = REPO / "examples" / "tiling_read.mlir"
    r = _run([str(path), "-o", str(tmp_path / "no" / "such" / "dir" / "out.bin")])
    assert r.returncode == 1
    assert r.stderr.startswith(b"error: cannot write")
    assert b"Traceback" not in r.stderr
