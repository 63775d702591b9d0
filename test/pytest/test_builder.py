"""The Python builder API, fetchc/builder.py.

* Every example of ``examples/*.mlir`` is built in Python (:data:`EXAMPLES`)
  and compiles to the same ``seq.bin``, byte for byte, as its text.  The
  one legitimate difference is the MANIFEST's ``loc`` of each program (the
  source line of its ``fetch.fetch``): built ops are located at this file's
  Python lines.  :func:`test_example_seq_bin_is_byte_identical` therefore
  gives the built ops the locations the parser gives the text's ops (one to
  one, in walk order, after checking that the op names agree) and then
  compares the whole files; :func:`test_example_differs_only_in_manifest_locs`
  compiles the built module as built and checks that the TABLES, PROGRAMS
  and STRINGS sections are still byte-identical, that the MANIFESTs agree
  except for ``loc``, and that each ``loc`` is a line of this file.
* Illegal requests raise ``DiagnosticError`` with exactly the diagnostics
  (messages and notes) that compiling the same IR as text gives, at the
  Python line of the request, and leave the kernel as it was.
* Stream types are inferred (expected types written out by hand from
  hardware.md §2 and ir.md §2); ambiguous or impossible inference is a
  located error naming what to pass.
* Locations point at this file's lines (and at the method name of a chained
  call); ``locations=False`` gives op paths; ``loc=`` overrides.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import struct
from pathlib import Path

import pytest
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    MemRefType,
    NameLoc,
    StridedLayoutAttr,
    StringAttr,
    UnknownLoc,
    bf16,
    f4E2M1FN,
    f8E5M2,
    f32,
    i8,
    i32,
    IntegerType,
)

import fetchc
from fetchc.builder import Arg, ModuleBuilder, as_type, memref, rows_map
from fetchc.diagnostics import DiagnosticError, render_all
from fetchc.dialects.fetch import StreamType
from fetchc.dialects.rngd import TrfType, VrfType
from fetchc.frontend.context import make_context
from fetchc.frontend.parsing import parse_module
from fetchc.kernel import tensor_name

REPO = Path(__file__).resolve().parents[2]
HERE = __file__


def here(offset: int = 1) -> int:
    """The line ``offset`` lines below the caller's line."""
    return inspect.currentframe().f_back.f_lineno + offset  # type: ignore[union-attr]


def col_of(line: int, needle: str) -> int:
    """1-based column of ``needle`` in line ``line`` of this file."""
    text = Path(HERE).read_text().splitlines()[line - 1]
    assert needle in text, (line, needle, text)
    return text.index(needle) + 1


def at(line: int, needle: str) -> tuple[str, int, int]:
    return (HERE, line, col_of(line, needle))


# --------------------------------------------------------------------------
# Every example, built in Python
# --------------------------------------------------------------------------


def build_f8e5m2_to_bf16_activations():
    mb = ModuleBuilder()
    k = mb.kernel(
        "decode_activations", slices=4,
        act=Arg(memref([32, 4096], "f8E5M2"), slice_dim=0), out=Arg(memref([32, 4096], "bf16"), slice_dim=0),
    )  # fmt: skip
    act, out = k.args
    k.fetch_rows(act, packet=32).convert("bf16").switch().collect().commit(out)
    return mb.finish()


def build_int8_zero_point_contract():
    mb = ModuleBuilder()
    k = mb.kernel("gemm_i8", w=memref([128, 256], "i8"), x=memref([64, 256], "i8"), acc=memref([64, 256], "i32"))
    w, x, acc = k.args
    wt = k.fetch_rows(w, packet=32, context="sub").to_trf()
    k.fetch_rows(x, packet=32).zp_sub(-3).switch().collect().contract_outer(wt).commit(acc)
    return mb.finish()


def build_mxfp4_dequant_f32():
    mb = ModuleBuilder()
    k = mb.kernel(
        "dequant_mxfp4",
        slices=256,
        codes=Arg(memref([16, 4096], "f4E2M1FN"), slice_dim=0),
        escale=Arg(memref([16, 128], "f8E8M0FNU"), slice_dim=0),
        out=Arg(memref([16, 4096], "f32"), slice_dim=0),
    )
    codes, escale, out = k.args
    k.fetch_rows(codes, packet=64).dequant(escale).commit(out)
    return mb.finish()


def build_nvfp4_dequant_f32():
    mb = ModuleBuilder()
    k = mb.kernel(
        "dequant_nvfp4",
        slices=256,
        codes=Arg(memref([16, 4096], "f4E2M1FN"), slice_dim=0),
        bscale=Arg(memref([16, 256], "f8E4M3FN"), slice_dim=0),
        gscale="f32",
        out=Arg(memref([16, 4096], "f32"), slice_dim=0),
    )
    codes, bscale, gscale, out = k.args
    k.fetch_rows(codes, packet=64).dequant(bscale, gscale).commit(out)
    return mb.finish()


def _gemma_kernel(mb: ModuleBuilder, name: str):
    return mb.kernel(
        name,
        slices=256,
        codes=Arg(memref([4, 3840], "f4E2M1FN"), slice_dim=0),
        bscale=Arg(memref([4, 240], "f8E4M3FN"), slice_dim=0),
        gscale="f32",
        w=Arg(memref([4, 3840], "bf16"), slice_dim=0),
    )


def build_gemma_nvfp4_mlp_decode():
    mb = ModuleBuilder()
    k = _gemma_kernel(mb, "gemma_mlp_decode")
    codes, bscale, gscale, w = k.args
    k.fetch_rows(codes, packet=32).dequant(bscale, gscale, to="bf16").commit(w)
    return mb.finish()


def build_gemma_nvfp4_mlp_decode_lockstep():
    mb = ModuleBuilder()
    k = _gemma_kernel(mb, "gemma_mlp_lockstep")
    codes, bscale, gscale, w = k.args
    c = k.fetch_rows(codes, packet=32)
    s = k.fetch(bscale, [4, 120], [2], map="(o, p, e) -> (o, p * 2 + e)").cast("f32")
    c.lookup(to="f8E4M3FN").cast("f32").block_scale(s).tensor_scale(gscale).narrow().commit(w)
    return mb.finish()


def build_gemma_nvfp4_mlp_decode_staged():
    mb = ModuleBuilder()
    k = _gemma_kernel(mb, "gemma_mlp_staged")
    codes, bscale, gscale, w = k.args
    v = k.fetch(bscale, [4, 30], [8], map="(o, t, e) -> (o, t * 8 + e)", context="sub").cast("f32").collect().to_vrf()
    k.fetch_rows(codes, packet=32).lookup(to="f8E4M3FN").cast("f32").block_scale(v).tensor_scale(gscale).narrow().commit(w)
    return mb.finish()


def build_nvfp4_weight_decode_stotrf():
    mb = ModuleBuilder()
    k = mb.kernel("stage_weight", codes=memref([256, 512], "f4E2M1FN"), w8=memref([256, 512], "f8E4M3FN"))
    codes, w8 = k.args
    k.fetch_rows(codes, packet=32).convert("f8E4M3FN").commit(w8)
    k.ret(k.fetch_rows(w8, packet=32, context="sub").to_trf())
    return mb.finish()


def build_tiling_read():
    mb = ModuleBuilder()
    view = memref([64, 128], "bf16", strides=[512, 1], offset=65792)
    k = mb.kernel(
        "tile_strided",
        tile=Arg(view, dm_base=0x10000),
        out=Arg(memref([64, 128], "bf16"), dm_base=0x50000),
    )
    tile, out = k.args
    k.fetch_rows(tile, packet=32).commit(out)
    k = mb.kernel("tile_map", m=Arg(memref([256, 512], "bf16"), dm_base=0x10000), out=memref([64, 128], "bf16"))
    m, out = k.args
    k.fetch_rows(m, packet=32, shape=[64, 128], offset=[128, 256]).commit(out)
    return mb.finish()


def build_transpose_nchw_to_whcn():
    mb = ModuleBuilder()
    k = mb.kernel("nchw_to_whcn", x=memref([4, 3, 8, 8], "bf16"), y=memref([8, 8, 3, 4], "bf16"))
    x, y = k.args
    k.fetch(x, [8, 8, 3, 4], [1], map="(w, h, c, n, e) -> (n, c, h, w + e)").commit(y)
    return mb.finish()


def build_gelu_f8e4m3_activations():
    mb = ModuleBuilder()
    k = mb.kernel("gelu", act=memref([64, 1024], "f8E4M3FN"), out=memref([64, 1024], "f32"))
    act, out = k.args
    k.fetch_rows(act, packet=32).lookup(fn="gelu").cast("f32").commit(out)
    return mb.finish()


def build_int8_silu_dequant():
    mb = ModuleBuilder()
    k = mb.kernel("silu_dequant", q=memref([128, 256], "i8"), out=memref([128, 256], "bf16"))
    q, out = k.args
    k.fetch_rows(q, packet=64).lookup(fn="silu", scale=0.03125, zero_point=-12).commit(out)
    return mb.finish()


EXAMPLES = {
    "f8e5m2_to_bf16_activations": build_f8e5m2_to_bf16_activations,
    "gemma_nvfp4_mlp_decode": build_gemma_nvfp4_mlp_decode,
    "gelu_f8e4m3_activations": build_gelu_f8e4m3_activations,
    "int8_silu_dequant": build_int8_silu_dequant,
    "int8_zero_point_contract": build_int8_zero_point_contract,
    "mxfp4_dequant_f32": build_mxfp4_dequant_f32,
    "nvfp4_dequant_f32": build_nvfp4_dequant_f32,
    "nvfp4_weight_decode_stotrf": build_nvfp4_weight_decode_stotrf,
    "tiling_read": build_tiling_read,
    "transpose_nchw_to_whcn": build_transpose_nchw_to_whcn,
}


BY_HAND = {
    "by_hand/gemma_nvfp4_mlp_decode_lockstep": build_gemma_nvfp4_mlp_decode_lockstep,
    "by_hand/gemma_nvfp4_mlp_decode_staged": build_gemma_nvfp4_mlp_decode_staged,
}
"""The hand-written forms of examples/by_hand/ (the VRF, block scale and Cast
Engine methods), held to the same byte-for-byte standard."""
ALL = {**EXAMPLES, **BY_HAND}


def test_every_example_has_a_builder():
    assert sorted(EXAMPLES) == sorted(p.stem for p in (REPO / "examples").glob("*.mlir"))
    assert sorted(BY_HAND) == sorted(f"by_hand/{p.stem}" for p in (REPO / "examples" / "by_hand").glob("*.mlir"))


def _text(name: str) -> tuple[str, str]:
    path = REPO / "examples" / f"{name}.mlir"
    return str(path), path.read_text()


@pytest.mark.parametrize("name", sorted(ALL))
def test_example_seq_bin_is_byte_identical(name):
    filename, text = _text(name)
    built = ALL[name]()
    parsed = parse_module(make_context(), text, filename)
    ops, theirs = list(built.walk()), list(parsed.walk())
    assert [op.name for op in ops] == [op.name for op in theirs]
    for mine, their in zip(ops, theirs):
        mine.location = their.location
    assert fetchc.compile(built).seq_bin == fetchc.compile(text, filename=filename).seq_bin


def _section(data: bytes, kind: int) -> bytes:
    """The bytes of section ``kind`` (seqbin.md: header of 32 bytes, then
    16-byte section entries kind, offset, size, count)."""
    for i in range(8):
        k, off, size, _ = struct.unpack_from("<IIII", data, 32 + 16 * i)
        if k == kind:
            return data[off : off + size]
    raise AssertionError(f"no section {kind}")


def _without_locs(manifest):
    return dataclasses.replace(
        manifest,
        kernels=tuple(
            dataclasses.replace(k, programs=tuple(dataclasses.replace(p, loc="") for p in k.programs))
            for k in manifest.kernels
        ),
    )


@pytest.mark.parametrize("name", sorted(ALL))
def test_example_differs_only_in_manifest_locs(name):
    filename, text = _text(name)
    mine, theirs = fetchc.compile(ALL[name]()), fetchc.compile(text, filename=filename)
    for kind in (1, 2, 3):  # TABLES, PROGRAMS, STRINGS
        assert _section(mine.seq_bin, kind) == _section(theirs.seq_bin, kind)
    assert mine.seqbin.tables == theirs.seqbin.tables and mine.seqbin.programs == theirs.seqbin.programs
    assert _without_locs(mine.seqbin.manifest) == _without_locs(theirs.seqbin.manifest)
    # Each program's loc is the Python line of its fetch, in the builder function.
    lines, first = inspect.getsourcelines(ALL[name])
    for k in mine.seqbin.manifest.kernels:
        for p in k.programs:
            file, line, col = p.loc.rsplit(":", 2)
            assert file == HERE and first <= int(line) < first + len(lines), p.loc
            # at the fetch, or for a scale fetch that the split inserts, at the dequant
            assert re.match(r"\.(fetch|fetch_rows|dequant)\(", lines[int(line) - first][int(col) - 2 :]), p.loc
    # The text's locs are its fetch.fetch lines.
    for k in theirs.seqbin.manifest.kernels:
        for p in k.programs:
            file, line, col = p.loc.rsplit(":", 2)
            assert file == filename and text.splitlines()[int(line) - 1][int(col) - 1 :].startswith("fetch.")


# --------------------------------------------------------------------------
# Illegal requests: the verifier's diagnostics, at the Python line
# --------------------------------------------------------------------------


def messages(diagnostics) -> list[tuple[str, list[str]]]:
    return [(d.message, [n.message for n in d.notes]) for d in diagnostics]


def text_diagnostics(text: str):
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text)
    return e.value.diagnostics


F8_CAST_BF16 = """
func.func @k(%x: memref<64x32xf8E4M3FN>, %o: memref<64x32xbf16>) {
  %s = fetch.fetch %x {map = affine_map<(t, p, e) -> (t, p * 32 + e)>} : memref<64x32xf8E4M3FN> -> !fetch.stream<main, [64, 1], [32], f8E4M3FN>
  %c = fetch.cast %s : !fetch.stream<main, [64, 1], [32], f8E4M3FN> -> !fetch.stream<main, [64, 1], [32], bf16>
  rngd.commit %c, %o : !fetch.stream<main, [64, 1], [32], bf16>, memref<64x32xbf16>
  func.return
}
"""


def test_illegal_cast_pair():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "f8E4M3FN"), o=memref([64, 32], "bf16"))
    x, o = k.args
    s = k.fetch_rows(x, packet=32)
    with pytest.raises(DiagnosticError) as e:
        line = here()
        s.cast(bf16)
    (d,) = e.value.diagnostics
    assert messages([d]) == messages(text_diagnostics(F8_CAST_BF16))
    assert d.message.startswith("'fetch.cast' op the hardware has no f8E4M3FN -> bf16 cast; casts from f8E4M3FN: f32")
    assert d.loc == at(line, "cast(")
    # The failed op is not in the kernel: the stream is still free, and the
    # legal route compiles.
    assert [op.name for op in k.func.body.block.ops] == ["fetch.fetch", "func.return"]
    s.lookup().commit(o)
    r = fetchc.compile(mb.finish())
    assert [p.stages for p in r.programs] == [1]  # table lookup only


LOOKUP_ON_SUB = """
func.func @k(%x: memref<64x32xf8E4M3FN>, %o: memref<64x32xbf16>) {
  %s = fetch.fetch %x {map = affine_map<(t, p, e) -> (t, p * 32 + e)>} : memref<64x32xf8E4M3FN> -> !fetch.stream<sub, [64, 1], [32], f8E4M3FN>
  %c = fetch.table_lookup %s : !fetch.stream<sub, [64, 1], [32], f8E4M3FN> -> !fetch.stream<sub, [64, 1], [32], bf16>
  rngd.commit %c, %o : !fetch.stream<sub, [64, 1], [32], bf16>, memref<64x32xbf16>
  func.return
}
"""


def test_lookup_on_sub():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "f8E4M3FN"), o=memref([64, 32], "bf16"))
    s = k.fetch_rows(k["x"], packet=32, context="sub")
    with pytest.raises(DiagnosticError) as e:
        line = here()
        s.lookup()  # infers bf16, the one f8E4M3FN table
    (d,) = e.value.diagnostics
    assert messages([d]) == messages(text_diagnostics(LOOKUP_ON_SUB))
    assert "runs on the sub Fetch Unit, which has no table-lookup register" in d.message
    assert d.loc == at(line, "lookup(")


ZP_OUT_OF_RANGE = """
func.func @k(%w: memref<16x256xi8>, %x: memref<64x256xi8>, %acc: memref<64x256xi32>) {
  %ws = fetch.fetch %w {map = affine_map<(n, p, e) -> (n, p * 32 + e)>} : memref<16x256xi8> -> !fetch.stream<sub, [16, 8], [32], i8>
  %wt = rngd.to_trf %ws : !fetch.stream<sub, [16, 8], [32], i8> -> !rngd.trf<i8>
  %xs = fetch.fetch %x {map = affine_map<(m, p, e) -> (m, p * 32 + e)>} : memref<64x256xi8> -> !fetch.stream<main, [64, 8], [32], i8>
  %xz = fetch.zp_sub %xs, 200 : !fetch.stream<main, [64, 8], [32], i8> -> !fetch.stream<main, [64, 8], [32], i9>
  %y = rngd.contract_outer %xz, %wt : !fetch.stream<main, [64, 8], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64, 8], [32], i32>
  rngd.commit %y, %acc : !fetch.stream<main, [64, 8], [32], i32>, memref<64x256xi32>
  func.return
}
"""


def test_zero_point_out_of_range():
    mb = ModuleBuilder()
    k = mb.kernel("k", w=memref([16, 256], "i8"), x=memref([64, 256], "i8"), acc=memref([64, 256], "i32"))
    w, x, acc = k.args
    wt = k.fetch_rows(w, packet=32, context="sub").to_trf()
    s = k.fetch_rows(x, packet=32)
    with pytest.raises(DiagnosticError) as e:
        line = here()
        s.zp_sub(200)
    (d,) = e.value.diagnostics
    assert messages([d]) == messages(text_diagnostics(ZP_OUT_OF_RANGE))
    assert d.message == (
        "'fetch.zp_sub' op zero point 200 is outside the i8 range [-128, 127]; an in-range zero point keeps "
        "every residual within i9"
    )
    assert d.loc == at(line, "zp_sub(")
    s.zp_sub(127).contract_outer(wt).commit(acc)  # the boundary is legal
    assert fetchc.compile(mb.finish()).programs[1].zero_point0 == 127


SWITCH_PACKET = """
func.func @k(%x: memref<64x2xbf16>, %o: memref<64x2xbf16>) {
  %s = fetch.fetch %x : memref<64x2xbf16> -> !fetch.stream<main, [64], [2], bf16>
  %w = rngd.switch %s : !fetch.stream<main, [64], [2], bf16> -> !fetch.stream<main, [64], [2], bf16>
  rngd.commit %w, %o : !fetch.stream<main, [64], [2], bf16>, memref<64x2xbf16>
  func.return
}
"""


def test_switch_packet_rule():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 2], "bf16"), o=memref([64, 2], "bf16"))
    s = k.fetch(k["x"], [64], [2])
    with pytest.raises(DiagnosticError) as e:
        line = here()
        s.switch()
    (d,) = e.value.diagnostics
    assert messages([d]) == messages(text_diagnostics(SWITCH_PACKET))
    # 2 bf16 = 4 bytes, not a whole number of 8-byte words (hardware.md §2.4).
    assert d.message.startswith("'rngd.switch' op its packet of 2 bf16 elements is 4 bytes, not a whole number of 8-byte")
    assert d.loc == at(line, "switch(")


COMMIT_I9 = """
func.func @k(%x: memref<64x32xi8>, %o: memref<64x32xi8>) {
  %s = fetch.fetch %x {map = affine_map<(t, p, e) -> (t, p * 32 + e)>} : memref<64x32xi8> -> !fetch.stream<main, [64, 1], [32], i8>
  %z = fetch.zp_sub %s, 3 : !fetch.stream<main, [64, 1], [32], i8> -> !fetch.stream<main, [64, 1], [32], i9>
  rngd.commit %z, %o : !fetch.stream<main, [64, 1], [32], i9>, memref<64x32xi8>
  func.return
}
"""


def test_contraction_only_note_at_the_zp_sub():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "i8"), o=memref([64, 32], "i8"))
    zline = here()
    z = k.fetch_rows(k["x"], packet=32).zp_sub(3)
    with pytest.raises(DiagnosticError) as e:
        line = here()
        z.commit(k["o"])
    (d,) = e.value.diagnostics
    assert messages([d]) == messages(text_diagnostics(COMMIT_I9))
    assert d.message.startswith("'rngd.commit' op cannot commit an i9 stream to memory")
    assert d.loc == at(line, "commit(")
    assert [n.loc for n in d.notes] == [at(zline, "zp_sub(")]


def test_rule8_read_size_rechecked_when_the_cast_is_added():
    # A pinned read of 16 e2m1 codes is legal through the lookup alone; cast
    # to f32 it would be 64 bytes, more than one 32-byte flit (rule 8),
    # reported at the fetch two ops up the chain.
    text = """
func.func @k(%x: memref<64x32xf4E2M1FN>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %x {read_size = 16 : i64, map = affine_map<(t, p, e) -> (t, p * 32 + e)>} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64, 1], [32], f4E2M1FN>
  %l = fetch.table_lookup %s : !fetch.stream<main, [64, 1], [32], f4E2M1FN> -> !fetch.stream<main, [64, 1], [32], f8E4M3FN>
  %c = fetch.cast %l : !fetch.stream<main, [64, 1], [32], f8E4M3FN> -> !fetch.stream<main, [64, 1], [32], f32>
  rngd.commit %c, %o : !fetch.stream<main, [64, 1], [32], f32>, memref<64x32xf32>
  func.return
}
"""
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "f4E2M1FN"), o=memref([64, 32], "f32"))
    fline = here()
    s = k.fetch_rows(k["x"], packet=32, read_size=16).lookup("f8E4M3FN")
    with pytest.raises(DiagnosticError) as e:
        s.cast()
    (d,) = e.value.diagnostics
    assert messages([d]) == messages(text_diagnostics(text))
    assert d.message.startswith("'fetch.fetch' op ")
    assert d.loc == at(fline, "fetch_rows(")


def test_misaligned_base():
    mb = ModuleBuilder()
    k = mb.kernel("k", w=memref([4096, 16], "f4E2M1FN"))
    with pytest.raises(DiagnosticError) as e:
        line = here()
        k.fetch(k["w"], [4096], [16], base=393220)
    (d,) = e.value.diagnostics
    assert d.message == "'fetch.fetch' op base 393220 is not a multiple of 8 bytes"  # as test_api's text case
    assert d.loc == at(line, "fetch(")


def test_stream_used_twice():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "bf16"), o=memref([64, 32], "bf16"), p=memref([64, 32], "bf16"))
    sline = here()
    s = k.fetch_rows(k["x"], packet=32)
    cline = here()
    s.commit(k["o"])
    with pytest.raises(DiagnosticError) as e:
        line = here()
        s.commit(k["p"])
    (d,) = e.value.diagnostics
    assert d.message == (
        "'fetch.fetch' op its result stream has 2 uses, but a stream is linear and must be consumed exactly once; "
        "fetch the tensor again for a second consumer"
    )
    assert d.loc == at(sline, "fetch_rows(")
    assert [(n.message, n.loc) for n in d.notes] == [
        ("used here", at(cline, "commit(")), ("used here", at(line, "commit("))]
    assert fetchc.compile(mb.finish()).programs  # the second commit was taken out again


def test_unused_stream_is_reported_by_finish():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "bf16"))
    line = here()
    k.fetch_rows(k["x"], packet=32).switch()
    with pytest.raises(DiagnosticError) as e:
        mb.finish()
    (d,) = e.value.diagnostics
    assert d.message.startswith("'rngd.switch' op its result stream is never used")
    assert d.loc == at(line, "switch(")
    with pytest.raises(RuntimeError, match="finished"):
        k.fetch_rows(k["x"], packet=32)


def test_dequant_scale_shape_is_the_verifiers():
    text = """
func.func @k(%c: memref<64x64xf4E2M1FN>, %b: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x64xf32>) {
  %s = fetch.fetch %c {map = affine_map<(t, p, e) -> (t, p * 64 + e)>} : memref<64x64xf4E2M1FN> -> !fetch.stream<main, [64, 1], [64], f4E2M1FN>
  %w = fetch.dequant %s, %b, %g {format = "nvfp4"} : !fetch.stream<main, [64, 1], [64], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 1], [64], f32>
  rngd.commit %w, %o : !fetch.stream<main, [64, 1], [64], f32>, memref<64x64xf32>
  func.return
}
"""
    mb = ModuleBuilder()
    k = mb.kernel("k", c=memref([64, 64], "f4E2M1FN"), b=memref([64, 2], "f8E4M3FN"), g=f32, o=memref([64, 64], "f32"))
    c, b, g, o = k.args
    s = k.fetch_rows(c, packet=64)
    with pytest.raises(DiagnosticError) as e:
        s.dequant(b, g)
    assert messages(e.value.diagnostics) == messages(text_diagnostics(text))
    assert "the scale memref must be 64x4, not 64x2" in e.value.diagnostics[0].message
    with pytest.raises(DiagnosticError) as e:
        s.dequant(b)  # nvfp4 without its tensor scale
    assert e.value.diagnostics[0].message == "'fetch.dequant' op nvfp4 needs the f32 tensor scale as its third operand"


def test_returning_a_stream_is_the_verifiers_error():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "bf16"), o=memref([64, 32], "bf16"))
    s = k.fetch_rows(k["x"], packet=32)
    with pytest.raises(DiagnosticError) as e:
        k.ret(s)
    assert e.value.diagnostics[0].message.startswith(
        "'fetch.fetch' op its result stream is returned from the function, but a stream may not be a function result")
    # Rolled back: no result type, the old terminator in place, s still free.
    assert not k.closed and k.func.function_type.outputs.data == ()
    assert [op.name for op in k.func.body.block.ops] == ["fetch.fetch", "func.return"]
    s.commit(k["o"])
    k.ret()
    assert k.closed
    with pytest.raises(RuntimeError, match="closed"):
        k.fetch_rows(k["x"], packet=32)
    assert fetchc.compile(mb.finish()).programs


# --------------------------------------------------------------------------
# Type inference
# --------------------------------------------------------------------------


def _kernel(**args):
    mb = ModuleBuilder()
    return mb, mb.kernel("k", **args)


def test_inferred_adapter_types():
    _, k = _kernel(a=memref([4096, 4096], "f4E2M1FN"), b=memref([64, 32], "f8E5M2"), c=memref([64, 32], "f8E4M3FN"),
                   d=memref([64, 32], "bf16"), e=memref([64, 32], "i8"), f=memref([64, 32], "i4"), g=memref([64, 32], "f32"))
    a, b, c, d, e, f, g = k.args
    s = k.fetch_rows(a, packet=64)
    assert s.type == StreamType("main", [4096, 64], [64], f4E2M1FN)
    s = s.lookup(to="f8E5M2")
    assert s.type == StreamType("main", [4096, 64], [64], f8E5M2)
    assert s.cast().type == StreamType("main", [4096, 64], [64], f32)  # f8E5M2 -> f32, code 4
    assert k.fetch_rows(b, packet=32).lookup().type == StreamType("main", [64, 1], [32], bf16)
    assert k.fetch_rows(c, packet=16).cast().type == StreamType("main", [64, 2], [16], f32)
    assert k.fetch_rows(d, packet=32).cast().type == StreamType("main", [64, 1], [32], f32)
    assert k.fetch_rows(g, packet=32).cast().type == StreamType("main", [64, 1], [32], bf16)
    assert k.fetch_rows(e, packet=32).zp_sub(-3).type == StreamType("main", [64, 1], [32], IntegerType(9))
    assert k.fetch_rows(f, packet=32).zp_sub(7).type == StreamType("main", [64, 1], [32], IntegerType(5))
    assert k.fetch(e, [64], [32], context="sub").convert("i32").type == StreamType("sub", [64], [32], i32)


def test_inference_errors():
    _, k = _kernel(a=memref([64, 64], "f4E2M1FN"), g=memref([64, 32], "f32"), i=memref([64, 32], "i32"),
                   b=memref([64, 4], "bf16"))
    a, g, i, b = k.args
    s = k.fetch_rows(a, packet=64)
    with pytest.raises(DiagnosticError) as e:
        line = here()
        s.lookup()
    (d,) = e.value.diagnostics
    assert d.message == (
        "'fetch.table_lookup' op cannot infer the output type: the f4E2M1FN tables decode to f8E4M3FN and "
        "f8E5M2; choose one with to=")
    assert d.loc == at(line, "lookup(")
    with pytest.raises(DiagnosticError, match="there is no table keyed by f32"):
        k.fetch_rows(g, packet=32).lookup()
    with pytest.raises(DiagnosticError, match="the cast stage has no cast from i32"):
        k.fetch_rows(i, packet=32).cast()
    with pytest.raises(DiagnosticError, match="zero-point subtraction reads i4 and i8, not f4E2M1FN"):
        s.zp_sub(1)
    with pytest.raises(DiagnosticError, match=r"cannot infer the format from block scales of type memref<64x4xbf16>"):
        s.dequant(b)
    # Nothing was added by the failed requests; s is still unused.
    assert [op.name for op in k.func.body.block.ops] == ["fetch.fetch"] * 3 + ["func.return"]


def test_inferred_dequant_and_engine_types():
    _, k = _kernel(c=memref([64, 64], "f4E2M1FN"), e=memref([64, 2], "f8E8M0FNU"), x=memref([64, 256], "i8"),
                   w=memref([16, 256], "i8"), h=memref([64, 32], "f8E4M3FN"), v=memref([64, 32], "bf16"),
                   g=memref([16, 32], "f8E4M3FN"))
    c, e, x, w, h, v, g = k.args
    d = k.fetch_rows(c, packet=64).dequant(e)
    assert d.type == StreamType("main", [64, 1], [64], f32)
    assert d.op.format.data == "mxfp4"
    wt = k.fetch_rows(w, packet=32, context="sub").to_trf()
    assert wt.type == TrfType(i8)
    acc = k.fetch_rows(x, packet=32).zp_sub(0).switch().collect().contract_outer(wt)
    assert acc.type == StreamType("main", [64, 8], [32], i32)
    gt = k.fetch_rows(g, packet=32, context="sub").to_trf()
    assert k.fetch_rows(h, packet=32).contract_outer(gt).type == StreamType("main", [64, 1], [32], f32)
    t = k.fetch_rows(v, packet=32).transpose([32], [64])
    assert t.type == StreamType("main", [32], [64], bf16)
    assert t.to_vrf().type == VrfType([32, 64], bf16)


def test_block_and_tensor_scale():
    _, k = _kernel(c=memref([64, 64], "f8E4M3FN"), s=memref([64, 4], "f8E4M3FN"), g=f32, o=memref([64, 64], "f32"))
    c, s, g, o = k.args
    x = k.fetch_rows(c, packet=64).cast()
    sc = k.fetch_rows(s, packet=4).cast()
    y = x.block_scale(sc)
    assert y.op.block.value.data == 16 and y.type == StreamType("main", [64, 1], [64], f32)
    z = y.tensor_scale(g)
    assert z.type == y.type
    z.commit(o)


def test_vrf_block_scale_narrow_and_bf16_dequant():
    # to_vrf infers the VRF tensor's shape (time then packet dims), block_scale
    # infers the block from a VRF tensor (values / scales), narrow gives bf16.
    mb, k = _kernel(x=memref([64, 64], "f32"), s=memref([256], "f8E4M3FN"), o=memref([64, 64], "bf16"),
                    c=memref([4, 64], "f4E2M1FN"), b=memref([4, 4], "f8E4M3FN"), g=f32, w=memref([4, 64], "bf16"))
    x, s, o, c, b, g, w = k.args
    v = k.fetch(s, [32], [8], map="(t, e) -> (t * 8 + e)", context="sub").cast("f32").collect().to_vrf()
    assert v.type == VrfType([32, 8], f32)
    y = k.fetch_rows(x, packet=64).block_scale(v)
    assert y.op.block.value.data == 16 and y.type == StreamType("main", [64, 1], [64], f32)
    n = y.narrow()
    assert n.type == StreamType("main", [64, 1], [64], bf16) and n.op.name == "rngd.cast"
    n.commit(o)
    d = k.fetch_rows(c, packet=64).dequant(b, g, to="bf16")
    assert d.type == StreamType("main", [4, 1], [64], bf16)
    d.commit(w)
    r = fetchc.compile(mb.finish())
    # the dequant's scales (16 f32, 64 bytes) are staged on the sub unit too
    assert [p.unit for p in r.programs] == [1, 0, 0, 1]


NARROW_I32 = """
func.func @k(%x: memref<64x32xi8>, %o: memref<64x32xbf16>) {
  %s = fetch.fetch %x {map = affine_map<(t, p, e) -> (t, p * 32 + e)>} : memref<64x32xi8> -> !fetch.stream<main, [64, 1], [32], i8>
  %c = fetch.cast %s : !fetch.stream<main, [64, 1], [32], i8> -> !fetch.stream<main, [64, 1], [32], i32>
  %n = rngd.cast %c : !fetch.stream<main, [64, 1], [32], i32> -> !fetch.stream<main, [64, 1], [32], bf16>
  rngd.commit %n, %o : !fetch.stream<main, [64, 1], [32], bf16>, memref<64x32xbf16>
  func.return
}
"""


def test_narrow_and_vrf_errors_are_the_verifiers():
    _, k = _kernel(x=memref([64, 32], "i8"), o=memref([64, 32], "bf16"), y=memref([64, 32], "f32"),
                   s=memref([64], "f32"))
    x, o, y, s = k.args
    i32 = k.fetch_rows(x, packet=32).cast()
    with pytest.raises(DiagnosticError) as e:
        line = here()
        i32.narrow()
    (d,) = e.value.diagnostics
    assert messages([d]) == messages(text_diagnostics(NARROW_I32))
    assert "the Cast Engine takes f32 -> bf16 only" in d.message and d.loc == at(line, "narrow(")
    # 64 scales for 2048 values in blocks of 16 (128 needed): the verifier says how many
    v = k.fetch(s, [8], [8], map="(t, e) -> (t * 8 + e)", context="sub").to_vrf()
    f = k.fetch_rows(y, packet=32)
    with pytest.raises(DiagnosticError) as e:
        f.block_scale(v, 16)
    assert "its VRF block scales hold 64 scales (!rngd.vrf<[8, 8], f32>), but 2048 values in blocks of 16 need 128" in (
        e.value.diagnostics[0].message
    )
    # a dequant result other than f32 / bf16
    _, k2 = _kernel(c=memref([4, 64], "f4E2M1FN"), b=memref([4, 4], "f8E4M3FN"), g=f32)
    c, b, g = k2.args
    with pytest.raises(DiagnosticError) as e:
        k2.fetch_rows(c, packet=64).dequant(b, g, to="f8E4M3FN")
    assert "'fetch.dequant' op produces f32 or bf16 (bf16: the f32 result narrowed by the Cast Engine), not f8E4M3FN" in (
        e.value.diagnostics[0].message
    )


def test_fetch_rows_maps_and_shapes():
    assert str(rows_map(2, 32)) == "(d0, d1, d2) -> (d0, ((d1 * 32) + d2))"
    assert str(rows_map(2, 32, [256, 384])) == "(d0, d1, d2) -> ((d0 + 256), (((d1 * 32) + d2) + 384))"
    assert str(rows_map(1, 8)) == "(d0, d1) -> (((d0 * 8) + d1))"
    _, k = _kernel(m=memref([1024, 1024], "bf16"), v=memref([2, 3, 64], "i8"))
    m, v = k.args
    s = k.fetch_rows(m, packet=32, shape=[64, 128], offset=[256, 384])
    assert s.type == StreamType("main", [64, 4], [32], bf16)
    assert s.op.map.data == rows_map(2, 32, [256, 384])
    assert k.fetch_rows(v, packet=16).type == StreamType("main", [2, 3, 4], [16], i8)
    with pytest.raises(DiagnosticError, match="fetch_rows: a row of 64 elements is not a whole number of packets of 48"):
        k.fetch_rows(v, packet=48)
    with pytest.raises(DiagnosticError, match="one entry per memref dim"):
        k.fetch_rows(m, packet=32, shape=[64])


def test_types_and_arguments():
    assert as_type("f4E2M1FN") == f4E2M1FN and as_type("memref<4x8xi8>") == MemRefType(i8, [4, 8])
    assert memref([64, 128], "bf16", strides=[1024, 1], offset=262528) == MemRefType(
        bf16, [64, 128], StridedLayoutAttr([1024, 1], 262528))
    with pytest.raises(ValueError, match="is not an MLIR type"):
        as_type("f4e2m1")
    # a type followed by more text is the same ValueError, saying so
    with pytest.raises(ValueError, match=r"'i32 foo' is not an MLIR type: +unexpected text after the type$"):
        as_type("i32 foo")
    with pytest.raises(ValueError, match="offset needs strides"):
        memref([4], "i8", offset=4)
    mb = ModuleBuilder()
    k = mb.kernel("k", w=Arg(memref([64, 32], "i8"), dm_base=4096), g="f32")
    assert [a.name_hint for a in k.args] == ["w", "g"] and k["g"].type == f32
    assert k.func.arg_attrs.data[0].data["rngd.dm_base"].value.data == 4096
    assert k.func.arg_attrs.data[0].data["rngd.name"] == StringAttr("w")
    assert k.func.arg_attrs.data[1].data == {"rngd.name": StringAttr("g")}
    with pytest.raises(KeyError):
        k["nope"]
    k2 = mb.kernel("k2", [("loc", memref([4], "i8")), ("w.0", "f32")], x=memref([4], "i8"))
    assert [a.name_hint for a in k2.args] == ["loc", "w.0", "x"]
    # A name that is no SSA name xDSL keeps still names a tensor or scalar
    # (rngd.name, ir.md §2a); on any other argument it is an error.
    k3 = mb.kernel("k3", [("1w", "f32"), ("w_1", memref([4], "i8")), ("a b", "f32")])
    assert [a.name_hint for a in k3.args] == [None, None, None]
    assert [tensor_name(a) for a in k3.args] == ["1w", "w_1", "a b"] and k3["w_1"] is k3.args[1]
    for bad, why in [("1w", "not a valid SSA name"), ("w_1", "would become 'w'")]:
        with pytest.raises(ValueError, match=why):
            mb.kernel("k4", [(bad, "!rngd.trf<i8>")])
    for bad in ("", 3):
        with pytest.raises(ValueError, match="must be a non-empty string"):
            mb.kernel("k4", [(bad, "f32")])
    with pytest.raises(ValueError, match="same name"):
        mb.kernel("k4", [("x", "f32")], x="f32")
    with pytest.raises(DiagnosticError, match="stream context must be 'main' or 'sub', not 'side'"):
        k.fetch(k["w"], [64], [32], context="side")


# --------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------


def test_locations_point_at_this_file():
    mb = ModuleBuilder()
    kline = here()
    k = mb.kernel("k", w=memref([64, 64], "f4E2M1FN"), o=memref([64, 64], "f32"))
    line = here()
    s = k.fetch_rows(k["w"], packet=64).lookup("f8E4M3FN")
    cline = here(2)
    c = (s
         .cast())
    c.commit(k["o"])
    fl = lambda where: FileLineColLoc(StringAttr(where[0]), IntAttr(where[1]), IntAttr(where[2]))  # noqa: E731
    fetch = s.op.operands[0].owner
    assert k.func.location == fl(at(kline, "kernel("))
    assert fetch.location == fl(at(line, "fetch_rows("))
    assert s.op.location == fl(at(line, "lookup("))  # its own name in a one-line chain
    assert c.op.location == fl(at(cline, "cast("))
    # The MANIFEST's loc of the program is the fetch's Python line.
    r = fetchc.compile(mb.finish())
    assert r.seqbin.manifest.kernels[0].programs[0].loc == "%s:%d:%d" % at(line, "fetch_rows(")


def test_rendered_diagnostic_shows_the_python_line():
    mb = ModuleBuilder()
    k = mb.kernel("k", x=memref([64, 32], "f8E4M3FN"))
    s = k.fetch_rows(k["x"], packet=32)
    with pytest.raises(DiagnosticError) as e:
        line = here()
        s.cast("bf16")
    text = render_all(e.value.diagnostics)  # reads this file to show the line
    _, _, col = at(line, "cast(")
    assert text.splitlines()[:3] == [
        f"{HERE}:{line}:{col}: error: " + e.value.diagnostics[0].message,
        Path(HERE).read_text().splitlines()[line - 1],
        " " * (col - 1) + "^",
    ]
    assert str(e.value).startswith(f"{HERE}:{line}:{col}: error: 'fetch.cast' op")


def test_without_locations_diagnostics_name_the_op_path():
    mb = ModuleBuilder(locations=False)
    k = mb.kernel("k", x=memref([64, 32], "f8E4M3FN"))
    s = k.fetch_rows(k["x"], packet=32)
    assert isinstance(s.op.location, UnknownLoc) and isinstance(k.func.location, UnknownLoc)
    with pytest.raises(DiagnosticError) as e:
        s.cast("bf16")
    (d,) = e.value.diagnostics
    assert d.loc is None
    assert str(e.value).startswith("func @k, op 1 'fetch.cast': error: 'fetch.cast' op the hardware has no")


def test_explicit_locations():
    mb = ModuleBuilder(locations=False)
    k = mb.kernel("k", x=memref([64, 32], "f8E4M3FN"), o=memref([64, 32], "f32"), loc=("model.py", 1, 1))
    s = k.fetch_rows(k["x"], packet=32, loc=("model.py", 10, 5))
    named = NameLoc(StringAttr("decode"), FileLineColLoc(StringAttr("model.py"), IntAttr(11), IntAttr(9)))
    with pytest.raises(DiagnosticError) as e:
        s.cast("bf16", loc=named)
    assert e.value.diagnostics[0].loc == ("model.py", 11, 9)
    s.cast(loc=named).commit(k["o"])
    r = fetchc.compile(mb.finish())
    assert r.seqbin.manifest.kernels[0].programs[0].loc == "model.py:10:5"


def test_builder_ops_inside_an_implicit_builder():
    # A caller's own xDSL ImplicitBuilder does not capture the builder's ops.
    from xdsl.builder import ImplicitBuilder
    from xdsl.ir import Block

    outside = Block()
    with ImplicitBuilder(outside):
        mb = ModuleBuilder()
        k = mb.kernel("k", x=memref([64, 32], "bf16"), o=memref([64, 32], "bf16"))
        k.fetch_rows(k["x"], packet=32).commit(k["o"])
    assert not list(outside.ops)
    assert fetchc.compile(mb.finish()).programs


def test_context_manager_insert_and_body():
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import FloatAttr

    from fetchc.dialects.fetch import CastOp

    with ModuleBuilder() as mb:
        k = mb.kernel("k", x=memref([64, 64], "f8E4M3FN"), s=memref([64, 4], "f8E4M3FN"), o=memref([64, 64], "f32"))
        x, s, o = k.args
        # Ops the builder does not cover: an xDSL ImplicitBuilder on the body.
        with k.body():
            g = arith.ConstantOp(FloatAttr(0.5, f32)).result
        y = k.fetch_rows(x, packet=64)
        # A hand-built op is verified like the builder's own.
        line = here(2)
        with pytest.raises(DiagnosticError) as e:
            k.insert(CastOp(y.value, y.type.with_element(bf16)))
        assert e.value.diagnostics[0].message.startswith("'fetch.cast' op the hardware has no f8E4M3FN -> bf16 cast")
        assert e.value.diagnostics[0].loc == at(line, "insert(")
        c = k.insert(CastOp(y.value, y.type.with_element(f32)))
        from fetchc.builder import Stream

        Stream(k, c.results[0]).block_scale(k.fetch_rows(s, packet=4).cast()).tensor_scale(g).commit(o)
    names = [op.name for op in mb.module.walk()][2:]
    assert names == ["arith.constant", "fetch.fetch", "fetch.cast", "fetch.fetch", "fetch.cast", "rngd.block_scale",
                     "rngd.tensor_scale", "rngd.commit", "func.return"]
    assert [p.type_conversion for p in fetchc.compile(mb.module).programs] == [3, 3]


def test_memref_sizes_are_static():
    """builder.memref refuses a negative or non-integer size up front (it
    would otherwise read as a dynamic ``?`` dimension later)."""
    from fetchc.builder import memref

    for shape in ([-4, 16], [4, 2.0], [True, 4]):
        with pytest.raises(ValueError, match="non-negative integers"):
            memref(shape, "i8")
    assert str(memref([0, 4], "i8")) == "memref<0x4xi8>"


def test_slices_and_slice_dim_are_written_and_checked():
    mb = ModuleBuilder()
    k = mb.kernel("k", slices=2, w=Arg(memref([64, 32], "i8"), slice_dim=1), o=memref([64, 32], "i8"))
    assert k.func.attributes["rngd.slices"].value.data == 2
    assert k.func.arg_attrs.data[0].data["rngd.slice_dim"].value.data == 1
    assert "rngd.slice_dim" not in k.func.arg_attrs.data[1].data
    k.fetch_rows(k["w"], packet=32).commit(k["o"])
    mb.finish()
    mb = ModuleBuilder()
    k = mb.kernel("k", w=Arg(memref([64, 32], "i8"), slice_dim=2), o=memref([64, 32], "i8"))
    k.fetch_rows(k["w"], packet=32).commit(k["o"])
    with pytest.raises(DiagnosticError) as e:
        mb.finish()
    (d,) = e.value.diagnostics
    assert "rngd.slice_dim on %w, but @k has no rngd.slices" in d.message
