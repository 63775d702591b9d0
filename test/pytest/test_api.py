"""Tests of the embedding API, ``fetchc.compile`` (fetchc/api.py): on MLIR
text, and on a module built in memory with the op constructors, which is
how a compiler embedding fetchc uses it.  ``CompileResult`` fields, and
``DiagnosticError`` for every kind of bad input (never another exception).
"""

from __future__ import annotations

import re
import struct

from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    bf16,
    f4E2M1FN,
    f8E4M3FN,
    f8E5M2,
    f8E8M0FNU,
    f32,
    i8,
    i32,
    i64,
)
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineMap

import fetchc
from fetchc import target
from fetchc.api import CompileResult
from fetchc.diagnostics import DiagnosticError, render_all
from fetchc.dialects.fetch import CastOp, ConvertOp, DequantOp, FetchOp, StreamType, TableLookupOp, ZpSubOp
from fetchc.dialects.fetch_seq import ProgramOp, TableOp
from fetchc.dialects.rngd import CommitOp, ContractOuterOp, SwitchOp, ToTrfOp, TrfType
from fetchc.seqbin import read

REPO = Path(__file__).resolve().parents[2]

DECODE = """\
func.func @decode(%w: memref<4096x16xf4E2M1FN>, %out: memref<4096x16xf32>) {
  %s = fetch.fetch %w {base = 32768 : i64} : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<main, [4096], [16], f4E2M1FN> -> !fetch.stream<main, [4096], [16], f32>
  rngd.commit %d, %out : !fetch.stream<main, [4096], [16], f32>, memref<4096x16xf32>
  func.return
}
"""


# --------------------------------------------------------------------------
# On text
# --------------------------------------------------------------------------


def test_compile_text_result_fields():
    r = fetchc.compile(DECODE)
    assert isinstance(r, CompileResult)
    assert r.seq_bin[:4] == b"FSEQ"
    assert read(r.seq_bin) == r.seqbin
    assert r.programs == r.seqbin.programs and r.tables == r.seqbin.tables
    (p,) = r.programs
    # [65536 : 1] : 16 (hardware.md §3), lookup + cast: 8 codes per read.
    assert (p.name, p.unit, p.base, p.limits, p.strides, p.packet_size) == (
        "decode/0", 0, 32768, (65536,), (1,), 16)
    assert (p.in_dtype, p.out_dtype, p.stages, p.table, p.type_conversion) == (
        target.F4E2M1FN, target.F32, 3, 0, 3)
    assert (p.fetch_size, p.words_per_packet, p.flit_count) == (4, 2, 2)
    assert r.program("decode/0") == p
    with pytest.raises(KeyError):
        r.program("decode/1")
    (t,) = r.tables
    assert (t.in_dtype, t.out_dtype, t.paired) == (target.F4E2M1FN, target.F8E4M3FN, True)
    # The residual IR: fetch_seq ops and the downstream rngd ops.
    assert isinstance(r.module, ModuleOp)
    assert "fetch_seq.table @f4E2M1FN_to_f8E4M3FN" in r.mlir
    assert 'fetch_seq.program %w {program_name = "decode/0"' in r.mlir
    assert "rngd.commit" in r.mlir
    assert "fetch.fetch" not in r.mlir and "fetch.convert" not in r.mlir
    assert any(isinstance(op, ProgramOp) for op in r.module.walk())
    assert sum(isinstance(op, TableOp) for op in r.module.walk()) == 1


def test_compile_is_repeatable_and_stateless():
    a, b = fetchc.compile(DECODE), fetchc.compile(DECODE)
    assert a.seq_bin == b.seq_bin and a.mlir == b.mlir
    assert a.module is not b.module


def _strided_kernel(offset: int) -> str:
    return f"""#l = strided<[1], offset: {offset}>
func.func @k(%x: memref<64xbf16, #l>, %o: memref<64xbf16>) {{
  %s = fetch.fetch %x {{map = affine_map<(d0, d1) -> (d0 * 64 + d1)>}} : memref<64xbf16, #l> -> !fetch.stream<main, [1], [64], bf16>
  rngd.commit %s, %o : !fetch.stream<main, [1], [64], bf16>, memref<64xbf16>
  func.return
}}
"""


def test_compile_alias_redefined_between_calls():
    """An alias means what its own input defines.  A second
    compile whose `#l` has `offset: 32` (bf16: 64 bytes) reads at base 64,
    whatever an earlier compile in the same process defined `#l` as."""
    first = fetchc.compile(_strided_kernel(0))
    second = fetchc.compile(_strided_kernel(32))
    assert [p.base for p in first.programs] == [0]
    assert [p.base for p in second.programs] == [64]
    assert "offset: 32" in second.mlir and "offset: 32" not in first.mlir


@pytest.mark.parametrize("path", sorted((REPO / "examples").glob("*.mlir")), ids=lambda p: p.stem)
def test_compile_every_example(path):
    r = fetchc.compile(path.read_text(), filename=str(path))
    assert r.programs and all(p.name.startswith(("stage_weight/", "dequant_", "decode_", "gemm_i8/", "nchw_", "tile_", "gelu/",
                                                          "silu_dequant/", "gemma_mlp_"))
                              for p in r.programs)


def test_explicit_pipeline():
    default = fetchc.compile(DECODE)
    same = fetchc.compile(DECODE, pipeline="fetch-place-dm,fetch-legalize-convert,fetch-split-scaling,fetch-to-seq")
    assert same.seq_bin == default.seq_bin
    # The MANIFEST records each tensor's placement: without fetch-place-dm
    # there is none to record (ir.md §2a), a located error at the kernel.
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(DECODE, pipeline="fetch-legalize-convert,fetch-split-scaling,fetch-to-seq")
    assert "has no rngd.dm_base: run fetch-place-dm" in e.value.diagnostics[0].message
    # A pipeline that stops short of fetch_seq cannot give a seq.bin.
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(DECODE, pipeline="fetch-legalize-convert")
    assert "is still present: --emit=bin needs the pipeline to reach fetch_seq" in e.value.diagnostics[0].message
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(DECODE, pipeline="no-such-pass")
    assert "invalid pass pipeline 'no-such-pass'" in e.value.diagnostics[0].message


# --------------------------------------------------------------------------
# Bad input: always DiagnosticError with located diagnostics
# --------------------------------------------------------------------------


def test_parse_error_is_located():
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(DECODE.replace("fetch.convert", "fetch.konvert"), filename="k.mlir")
    d = e.value.diagnostics[0]
    assert d.severity == "error" and d.loc is not None and d.loc[:2] == ("k.mlir", 3)


def test_verifier_error_is_located():
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(DECODE.replace("32768", "32772"), filename="k.mlir")
    (d,) = e.value.diagnostics
    assert d.message == "'fetch.fetch' op base 32772 is not a multiple of 8 bytes"
    assert d.loc == ("k.mlir", 2, 8)  # the op name, as mlir-opt
    text = render_all(e.value.diagnostics, {"k.mlir": DECODE.replace("32768", "32772")})
    assert text.startswith("k.mlir:2:8: error: 'fetch.fetch' op base 32772")


def test_pass_error_is_located():
    bad = DECODE.replace("[16], f32>", "[16], bf16>").replace("xf32>", "xbf16>")
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(bad, filename="k.mlir")
    (d,) = e.value.diagnostics
    assert d.message.startswith("'fetch.convert' op cannot be legalised: the Fetch Adapter cannot convert f4E2M1FN to bf16")
    assert d.loc == ("k.mlir", 3, 8)


@pytest.mark.parametrize("bad", ["", "garbage", "func.func @f() {", "\x00\xff"])
def test_junk_text(bad):
    # Empty text is an empty module: no programs, still a valid seq.bin.
    if bad == "":
        r = fetchc.compile(bad)
        assert r.programs == () and r.tables == ()
        assert read(r.seq_bin).programs == ()
        return
    with pytest.raises(DiagnosticError):
        fetchc.compile(bad)


def test_wrong_argument_type():
    with pytest.raises(TypeError, match="MLIR text"):
        fetchc.compile(b"bytes are not text")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# In memory, with the op constructors (the embedding use case)
# --------------------------------------------------------------------------


def build_module() -> ModuleOp:
    """Two functions built with constructors, equal to BUILT_TEXT below:
    @decode_and_stage: NVFP4 decode to DM on main + convert-only StoTrf on
    sub; @gemm: i8 - zero point -> contract_outer; @dequant: MXFP4 dequant.
    """
    # @decode_and_stage(%codes: memref<256x512xf4E2M1FN>, %w8: memref<256x512xf8E4M3FN>)
    codes_t = MemRefType(f4E2M1FN, [256, 512])
    w8_t = MemRefType(f8E4M3FN, [256, 512])
    blk = Block(arg_types=[codes_t, w8_t])
    rows = AffineMap.from_callable(lambda r, p, e: (r, p * 32 + e))
    s_f4 = StreamType("main", [256, 16], [32], f4E2M1FN)
    c = FetchOp(blk.args[0], s_f4, map=rows, base=0x10000)
    d = ConvertOp(c.result, s_f4.with_element(f8E4M3FN))
    commit = CommitOp(d.result, blk.args[1])
    s_sub = StreamType("sub", [256, 16], [32], f8E4M3FN)
    s = FetchOp(blk.args[1], s_sub, map=rows, base=0x20000)
    t = ToTrfOp(s.result, TrfType(f8E4M3FN))
    blk.add_ops([c, d, commit, s, t, func.ReturnOp()])
    f1 = func.FuncOp("decode_and_stage", ((codes_t, w8_t), ()), Region(blk))

    # @gemm(%x: memref<64x256xi8>, %w: !rngd.trf<i8>, %acc: memref<64x256xi32>)
    x_t, acc_t = MemRefType(i8, [64, 256]), MemRefType(i32, [64, 256])
    blk = Block(arg_types=[x_t, TrfType(i8), acc_t])
    s_i8 = StreamType("main", [64, 8], [32], i8)
    x = FetchOp(blk.args[0], s_i8, map=rows, base=0x48000)
    z = ZpSubOp(x.result, s_i8.with_element(IntegerType(9)), -3)
    sw = SwitchOp(z.result)
    y = ContractOuterOp(sw.result, blk.args[1], s_i8.with_element(i32))
    commit = CommitOp(y.result, blk.args[2])
    blk.add_ops([x, z, sw, y, commit, func.ReturnOp()])
    f2 = func.FuncOp("gemm", ((x_t, TrfType(i8), acc_t), ()), Region(blk))

    # @dequant(%q: memref<64x64xf4E2M1FN>, %e: memref<64x2xf8E8M0FNU>, %o: memref<64x64xf32>)
    q_t, e_t, o_t = MemRefType(f4E2M1FN, [64, 64]), MemRefType(f8E8M0FNU, [64, 2]), MemRefType(f32, [64, 64])
    blk = Block(arg_types=[q_t, e_t, o_t])
    s_q = StreamType("main", [64], [64], f4E2M1FN)
    q = FetchOp(blk.args[0], s_q, base=0x60000)
    dq = DequantOp(q.result, blk.args[1], None, "mxfp4", s_q.with_element(f32))
    dq.properties["scale_base"] = IntegerAttr(0x61000, i64)
    commit = CommitOp(dq.result, blk.args[2])
    blk.add_ops([q, dq, commit, func.ReturnOp()])
    f3 = func.FuncOp("dequant", ((q_t, e_t, o_t), ()), Region(blk))
    return ModuleOp([f1, f2, f3])


BUILT_TEXT = """
func.func @decode_and_stage(%codes: memref<256x512xf4E2M1FN>, %w8: memref<256x512xf8E4M3FN>) {
  %c = fetch.fetch %codes {base = 65536 : i64, map = affine_map<(r, p, e) -> (r, p * 32 + e)>} : memref<256x512xf4E2M1FN> -> !fetch.stream<main, [256, 16], [32], f4E2M1FN>
  %d = fetch.convert %c : !fetch.stream<main, [256, 16], [32], f4E2M1FN> -> !fetch.stream<main, [256, 16], [32], f8E4M3FN>
  rngd.commit %d, %w8 : !fetch.stream<main, [256, 16], [32], f8E4M3FN>, memref<256x512xf8E4M3FN>
  %s = fetch.fetch %w8 {base = 131072 : i64, map = affine_map<(r, p, e) -> (r, p * 32 + e)>} : memref<256x512xf8E4M3FN> -> !fetch.stream<sub, [256, 16], [32], f8E4M3FN>
  %t = rngd.to_trf %s : !fetch.stream<sub, [256, 16], [32], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return
}
func.func @gemm(%x: memref<64x256xi8>, %w: !rngd.trf<i8>, %acc: memref<64x256xi32>) {
  %xs = fetch.fetch %x {base = 294912 : i64, map = affine_map<(m, p, e) -> (m, p * 32 + e)>} : memref<64x256xi8> -> !fetch.stream<main, [64, 8], [32], i8>
  %xz = fetch.zp_sub %xs, -3 : !fetch.stream<main, [64, 8], [32], i8> -> !fetch.stream<main, [64, 8], [32], i9>
  %sw = rngd.switch %xz : !fetch.stream<main, [64, 8], [32], i9> -> !fetch.stream<main, [64, 8], [32], i9>
  %y = rngd.contract_outer %sw, %w : !fetch.stream<main, [64, 8], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64, 8], [32], i32>
  rngd.commit %y, %acc : !fetch.stream<main, [64, 8], [32], i32>, memref<64x256xi32>
  func.return
}
func.func @dequant(%q: memref<64x64xf4E2M1FN>, %e: memref<64x2xf8E8M0FNU>, %o: memref<64x64xf32>) {
  %c = fetch.fetch %q {base = 393216 : i64} : memref<64x64xf4E2M1FN> -> !fetch.stream<main, [64], [64], f4E2M1FN>
  %d = fetch.dequant %c, %e {format = "mxfp4", scale_base = 397312 : i64} : !fetch.stream<main, [64], [64], f4E2M1FN>, memref<64x2xf8E8M0FNU> -> !fetch.stream<main, [64], [64], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [64], f32>, memref<64x64xf32>
  func.return
}
"""


def test_compile_in_memory_module():
    module = build_module()
    r = fetchc.compile(module)
    assert r.module is module  # compiled in place
    assert [p.name for p in r.programs] == [
        "decode_and_stage/0", "decode_and_stage/1", "gemm/0", "dequant/0", "dequant/1"]
    dec, stage, gemm, codes, scales = r.programs
    assert (dec.unit, dec.stages, dec.table, dec.limits, dec.strides) == (0, 1, 0, (256, 512), (512, 1))
    assert (stage.unit, stage.stages, stage.fetch_size, stage.words_per_packet) == (1, 0, 8, 4)
    assert (gemm.stages, gemm.zero_point0, gemm.zp_mode, gemm.out_dtype) == (4, -3, 2, target.I9)
    assert (codes.stages, codes.table, codes.type_conversion) == (3, 0, 3)
    assert (scales.base, scales.in_dtype, scales.stages) == (0x61000, target.F8E8M0FNU, 0)
    # The same programs and tables as the equivalent text, byte for byte.  The
    # MANIFESTs differ in names and locations only: in-memory arguments have
    # no SSA names (tensors are arg0, arg1, ...) and in-memory ops no file
    # location (a program's loc is its op path).
    text = fetchc.compile(BUILT_TEXT)
    section = lambda data, kind: next(  # noqa: E731
        data[off : off + size]
        for k, off, size, _ in (struct.unpack_from("<IIII", data, 32 + 16 * i) for i in range(4))
        if k == kind
    )
    for kind in (1, 2, 3):  # TABLES, PROGRAMS, STRINGS
        assert section(r.seq_bin, kind) == section(text.seq_bin, kind)
    mine, theirs = r.seqbin.manifest, text.seqbin.manifest
    assert [t.name for t in mine.kernel("gemm").tensors] == ["arg0", "arg2"]
    assert [t.name for t in theirs.kernel("gemm").tensors] == ["x", "acc"]
    assert re.fullmatch(r"func @gemm, op \d+ 'fetch_seq.program'", mine.program(2)[1].loc)
    assert re.fullmatch(r"<input>:11:\d+", theirs.program(2)[1].loc)  # the fetch.fetch of @gemm


def test_in_memory_module_without_locations_gets_unlocated_errors():
    module = build_module()
    fetch = next(op for op in module.walk() if isinstance(op, FetchOp))
    fetch.properties["base"] = IntegerAttr(0x10004, i64)
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(module)
    (d,) = e.value.diagnostics
    assert d.message == "'fetch.fetch' op base 65540 is not a multiple of 8 bytes"
    assert d.loc is None and d.op is fetch
    # Shown at its op path: the function's symbol and the op's index in its block.
    assert render_all(e.value.diagnostics).startswith(
        "func @decode_and_stage, op 0 'fetch.fetch': error: 'fetch.fetch' op base 65540"
    )
    assert str(e.value).startswith("func @decode_and_stage, op 0 'fetch.fetch': error:")


def test_in_memory_module_with_locations():
    # An embedding compiler can attach its own source locations; a pass
    # error points there.
    m_t, o_t = MemRefType(f4E2M1FN, [64, 32]), MemRefType(bf16, [64, 32])
    blk = Block(arg_types=[m_t, o_t])
    st = StreamType("main", [64], [32], f4E2M1FN)
    f = FetchOp(blk.args[0], st, base=8192)
    c = ConvertOp(f.result, st.with_element(bf16))
    c.location = FileLineColLoc(StringAttr("model.py"), IntAttr(42), IntAttr(7))
    blk.add_ops([f, c, CommitOp(c.result, blk.args[1]), func.ReturnOp()])
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(ModuleOp([func.FuncOp("k", ((m_t, o_t), ()), Region(blk))]))
    (d,) = e.value.diagnostics
    assert d.loc == ("model.py", 42, 7)
    assert d.message.startswith("'fetch.convert' op cannot be legalised: the Fetch Adapter cannot convert f4E2M1FN to bf16")


def test_in_memory_pipeline_stages():
    # Build a lookup + cast chain directly (no convert) and an f8E5M2 lookup.
    m_t = MemRefType(f8E5M2, [64, 32])
    o_t = MemRefType(f32, [64, 32])
    blk = Block(arg_types=[m_t, o_t])
    st = StreamType("main", [64], [32], f8E5M2)
    f = FetchOp(blk.args[0], st, base=8192)
    c = CastOp(f.result, st.with_element(f32))
    blk.add_ops([f, c, CommitOp(c.result, blk.args[1]), func.ReturnOp()])
    r = fetchc.compile(ModuleOp([func.FuncOp("widen", ((m_t, o_t), ()), Region(blk))]))
    (p,) = r.programs
    # f8E5M2 -> f32 is cast code 4; 8 per read (8 bytes) -> 32 bytes of f32.
    assert (p.stages, p.type_conversion, p.fetch_size, p.words_per_packet, p.flit_count) == (2, 4, 8, 4, 4)
    assert r.tables == ()

    blk = Block(arg_types=[m_t, MemRefType(bf16, [64, 32])])
    f = FetchOp(blk.args[0], st, base=8192, read_size=16)
    lk = TableLookupOp(f.result, st.with_element(bf16))
    blk.add_ops([f, lk, CommitOp(lk.result, blk.args[1]), func.ReturnOp()])
    r = fetchc.compile(ModuleOp([func.FuncOp("act", ((m_t, MemRefType(bf16, [64, 32])), ()), Region(blk))]))
    (p,) = r.programs
    # Pinned read size 16 f8 = 16 bytes, 2 per packet.
    assert (p.stages, p.table, p.fetch_size, p.words_per_packet) == (1, 0, 16, 2)
    assert (r.tables[0].in_dtype, r.tables[0].out_dtype, r.tables[0].paired) == (target.F8E5M2, target.BF16, False)


def test_parsed_pipelines_are_reused_only_per_spec():
    """driver.parse_pipeline caches a pipeline of frozen passes by its text:
    the same text gives the same (stateless) passes in a fresh list, another
    text (other options) never gets them, and errors are never cached."""
    import pytest

    from fetchc.diagnostics import DiagnosticError
    from fetchc.driver import parse_pipeline

    a = parse_pipeline("fetch-place-dm{dm-size=4096},fetch-legalize-convert")
    b = parse_pipeline("fetch-place-dm{dm-size=4096},fetch-legalize-convert")
    c = parse_pipeline("fetch-place-dm,fetch-legalize-convert")
    assert a == b and a is not b
    assert a[0].dm_size == 4096 and c[0].dm_size == 2**19
    b.append(c[1])
    assert len(parse_pipeline("fetch-place-dm{dm-size=4096},fetch-legalize-convert")) == 2
    for _ in range(2):
        with pytest.raises(DiagnosticError, match="dm-size must be"):
            parse_pipeline("fetch-place-dm{dm-size=0}")


def test_pass_option_errors_speak_the_pipeline_syntax():
    """Bad pass options are reported as the user spelled them: option
    names with '-', the expected kind of value, never a Python type."""
    import pytest

    from fetchc.diagnostics import DiagnosticError
    from fetchc.driver import parse_pipeline

    cases = {
        "fetch-place-dm{bogus=1}": "unknown option bogus (options: dm-size)",
        "fetch-place-dm{dm-size=abc}": "option value 'abc' is not an integer",
        "fetch-place-dm{dm-size=1.5}": "option value 1.5 is not an integer",
        "fetch-place-dm{dm-size}": "an option has no value (expected an integer)",
        "fetch-legalize-convert{x=1}": "unknown option x (this pass takes none)",
        # xDSL's multi-line syntax error (header, position, pipeline, caret) as one line
        "fetch-place-dm{": "column 16: expected argument name here",
    }
    for spec, want in cases.items():
        with pytest.raises(DiagnosticError) as e:
            parse_pipeline(spec)
        msg = e.value.diagnostics[0].message
        assert msg == f"invalid pass pipeline '{spec}': {want}", msg


def test_an_unknown_pass_gets_the_closest_registered_name():
    import pytest

    from fetchc.diagnostics import DiagnosticError
    from fetchc.driver import parse_pipeline

    with pytest.raises(DiagnosticError) as e:
        parse_pipeline("fetch-plce-dm,canonicalze,zzzzzz")
    msg = e.value.diagnostics[0].message
    assert "\n" not in msg
    assert msg.endswith("; did you mean 'fetch-place-dm' for 'fetch-plce-dm'?; did you mean 'canonicalize' for 'canonicalze'?")
