"""The automatic sub-context decode route (``fetch-route-sub-decode``,
hardware.md §2.1) against the route written by hand.

* The routed kernels compile to the same ``seq.bin`` programs as their
  hand-written twins (every PROGRAMS field but the name and the base; the
  same tables), in the same order: the main decode, then the sub staging
  fetch, then (dequant) the sub block-scale fetch.  The scratch buffer is a
  MANIFEST tensor after the arguments, placed after every argument.
* Both give bit-identical values: interpreted before and after every pass
  of the default pipeline (after ``fetch-to-seq`` the programs run on the
  simulator's code), and equal to a reference written here (the E2M1
  ladder, the ``f8E4M3FN -> f32`` decode and the Vector Engine multiply of
  hardware.md §2.2a in numpy, NaNs compared by their bits).
* ``fetchc.run`` on the routed kernel gives the hand-written route's output
  bit for bit (skipped while ``fetchc.run`` is not on the branch).
"""

from __future__ import annotations

import math
import pathlib

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.traits import SymbolTable

import fetchc
from fetchc.frontend.context import all_passes, make_context
from fetchc.diagnostics import render_all, verify_module
from fetchc.driver import DEFAULT_PIPELINE
from fetchc.golden.interp import interpret
from fetchc.frontend.parsing import parse_module

REPO = pathlib.Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------
# Kernels: each routed one and its hand-written twin (same argument order,
# the hand-written one with the decoded tensor %w8 as an extra last argument)
# --------------------------------------------------------------------------

ROUTED_STAGE = """
func.func @stage_weight(%codes: memref<256x512xf4E2M1FN>) -> !rngd.trf<f8E4M3FN> {
  %c = fetch.fetch %codes {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<256x512xf4E2M1FN> -> !fetch.stream<sub, [256, 16], [32], f4E2M1FN>
  %d = fetch.convert %c
      : !fetch.stream<sub, [256, 16], [32], f4E2M1FN> -> !fetch.stream<sub, [256, 16], [32], f8E4M3FN>
  %t = rngd.to_trf %d : !fetch.stream<sub, [256, 16], [32], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}
"""

F32_ROUTED = """
func.func @k(%w: memref<32x64xf4E2M1FN>, %o: memref<32x64xf32>) {
  %s = fetch.fetch %w {map = affine_map<(r, p, e) -> (r, p * 32 + e)>} : memref<32x64xf4E2M1FN> -> !fetch.stream<sub, [32, 2], [32], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<sub, [32, 2], [32], f4E2M1FN> -> !fetch.stream<sub, [32, 2], [32], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [32, 2], [32], f32>, memref<32x64xf32>
  func.return
}
"""

F32_HAND = """
func.func @k(%w: memref<32x64xf4E2M1FN>, %o: memref<32x64xf32>, %w8: memref<32x64xf8E4M3FN>) {
  %m = fetch.fetch %w {map = affine_map<(r, p, e) -> (r, p * 32 + e)>} : memref<32x64xf4E2M1FN> -> !fetch.stream<main, [32, 2], [32], f4E2M1FN>
  %l = fetch.table_lookup %m : !fetch.stream<main, [32, 2], [32], f4E2M1FN> -> !fetch.stream<main, [32, 2], [32], f8E4M3FN>
  rngd.commit %l, %w8 : !fetch.stream<main, [32, 2], [32], f8E4M3FN>, memref<32x64xf8E4M3FN>
  %s = fetch.fetch %w8 {map = affine_map<(r, p, e) -> (r, p * 32 + e)>} : memref<32x64xf8E4M3FN> -> !fetch.stream<sub, [32, 2], [32], f8E4M3FN>
  %c = fetch.cast %s : !fetch.stream<sub, [32, 2], [32], f8E4M3FN> -> !fetch.stream<sub, [32, 2], [32], f32>
  rngd.commit %c, %o : !fetch.stream<sub, [32, 2], [32], f32>, memref<32x64xf32>
  func.return
}
"""

NVFP4_ROUTED = """
func.func @k(%w: memref<16x256xf4E2M1FN>, %bs: memref<16x16xf8E4M3FN>, %g: f32, %o: memref<16x256xf32>) {
  %s = fetch.fetch %w {map = affine_map<(r, p, e) -> (r, p * 128 + e)>} : memref<16x256xf4E2M1FN> -> !fetch.stream<sub, [16, 2], [128], f4E2M1FN>
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<sub, [16, 2], [128], f4E2M1FN>, memref<16x16xf8E4M3FN>, f32 -> !fetch.stream<sub, [16, 2], [128], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [16, 2], [128], f32>, memref<16x256xf32>
  func.return
}
"""

NVFP4_HAND = """
func.func @k(%w: memref<16x256xf4E2M1FN>, %bs: memref<16x16xf8E4M3FN>, %g: f32, %o: memref<16x256xf32>, %w8: memref<16x256xf8E4M3FN>) {
  %m = fetch.fetch %w {map = affine_map<(r, p, e) -> (r, p * 128 + e)>} : memref<16x256xf4E2M1FN> -> !fetch.stream<main, [16, 2], [128], f4E2M1FN>
  %l = fetch.table_lookup %m : !fetch.stream<main, [16, 2], [128], f4E2M1FN> -> !fetch.stream<main, [16, 2], [128], f8E4M3FN>
  rngd.commit %l, %w8 : !fetch.stream<main, [16, 2], [128], f8E4M3FN>, memref<16x256xf8E4M3FN>
  %s = fetch.fetch %w8 {map = affine_map<(r, p, e) -> (r, p * 128 + e)>} : memref<16x256xf8E4M3FN> -> !fetch.stream<sub, [16, 2], [128], f8E4M3FN>
  %b = fetch.fetch %bs {map = affine_map<(r, p, e) -> (r, p * 8 + e)>} : memref<16x16xf8E4M3FN> -> !fetch.stream<sub, [16, 2], [8], f8E4M3FN>
  %bf = fetch.cast %b : !fetch.stream<sub, [16, 2], [8], f8E4M3FN> -> !fetch.stream<sub, [16, 2], [8], f32>
  %f = fetch.cast %s : !fetch.stream<sub, [16, 2], [128], f8E4M3FN> -> !fetch.stream<sub, [16, 2], [128], f32>
  %x = rngd.block_scale %f, %bf {block = 16 : i64} : !fetch.stream<sub, [16, 2], [128], f32>, !fetch.stream<sub, [16, 2], [8], f32> -> !fetch.stream<sub, [16, 2], [128], f32>
  %y = rngd.tensor_scale %x, %g : !fetch.stream<sub, [16, 2], [128], f32>, f32 -> !fetch.stream<sub, [16, 2], [128], f32>
  rngd.commit %y, %o : !fetch.stream<sub, [16, 2], [128], f32>, memref<16x256xf32>
  func.return
}
"""

MXFP4_ROUTED = """
func.func @k(%w: memref<8x512xf4E2M1FN>, %e: memref<8x16xf8E8M0FNU>, %o: memref<8x512xf32>) {
  %s = fetch.fetch %w {map = affine_map<(r, p, q) -> (r, p * 256 + q)>} : memref<8x512xf4E2M1FN> -> !fetch.stream<sub, [8, 2], [256], f4E2M1FN>
  %d = fetch.dequant %s, %e {format = "mxfp4"} : !fetch.stream<sub, [8, 2], [256], f4E2M1FN>, memref<8x16xf8E8M0FNU> -> !fetch.stream<sub, [8, 2], [256], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [8, 2], [256], f32>, memref<8x512xf32>
  func.return
}
"""

MXFP4_HAND = """
func.func @k(%w: memref<8x512xf4E2M1FN>, %e: memref<8x16xf8E8M0FNU>, %o: memref<8x512xf32>, %w8: memref<8x512xf8E4M3FN>) {
  %m = fetch.fetch %w {map = affine_map<(r, p, q) -> (r, p * 256 + q)>} : memref<8x512xf4E2M1FN> -> !fetch.stream<main, [8, 2], [256], f4E2M1FN>
  %l = fetch.table_lookup %m : !fetch.stream<main, [8, 2], [256], f4E2M1FN> -> !fetch.stream<main, [8, 2], [256], f8E4M3FN>
  rngd.commit %l, %w8 : !fetch.stream<main, [8, 2], [256], f8E4M3FN>, memref<8x512xf8E4M3FN>
  %s = fetch.fetch %w8 {map = affine_map<(r, p, q) -> (r, p * 256 + q)>} : memref<8x512xf8E4M3FN> -> !fetch.stream<sub, [8, 2], [256], f8E4M3FN>
  %b = fetch.fetch %e {map = affine_map<(r, p, q) -> (r, p * 8 + q)>} : memref<8x16xf8E8M0FNU> -> !fetch.stream<sub, [8, 2], [8], f8E8M0FNU>
  %f = fetch.cast %s : !fetch.stream<sub, [8, 2], [256], f8E4M3FN> -> !fetch.stream<sub, [8, 2], [256], f32>
  %x = rngd.block_scale %f, %b {block = 32 : i64} : !fetch.stream<sub, [8, 2], [256], f32>, !fetch.stream<sub, [8, 2], [8], f8E8M0FNU> -> !fetch.stream<sub, [8, 2], [256], f32>
  rngd.commit %x, %o : !fetch.stream<sub, [8, 2], [256], f32>, memref<8x512xf32>
  func.return
}
"""

PAIRS = {"f32": (F32_ROUTED, F32_HAND), "nvfp4": (NVFP4_ROUTED, NVFP4_HAND), "mxfp4": (MXFP4_ROUTED, MXFP4_HAND)}

# --------------------------------------------------------------------------
# The reference, written here (hardware.md §2.1, §2.2a, §4)
# --------------------------------------------------------------------------

LADDER = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], np.float64)
QNAN = 0x7FC00000


def e2m1(codes: np.ndarray) -> np.ndarray:
    """E2M1 codes (uint8 0-15, sign in bit 3) as float64, exactly."""
    c = np.asarray(codes, np.uint8)
    return np.where(c & 8, -1.0, 1.0) * LADDER[c & 7]


def e4m3_f32_bits(b: np.ndarray) -> np.ndarray:
    """``f8E4M3FN -> f32`` (hardware.md §2.2a) as f32 bits: by hand, bias 7,
    subnormals exact in f32, 0x7F / 0xFF give 0x7FC00000."""
    b = np.asarray(b, np.uint8).astype(np.int64)
    s, e, m = b >> 7, (b >> 3) & 0xF, b & 7
    mag = np.where(e == 0, np.ldexp(m / 8.0, -6), np.ldexp(1.0 + m / 8.0, e - 7))
    v = np.where(s == 1, -mag, mag).astype(np.float32).view(np.uint32)
    return np.where((b & 0x7F) == 0x7F, np.uint32(QNAN), v).astype(np.uint32)


def daz(u: np.ndarray) -> np.ndarray:
    """f32 bits as a Vector Engine operand (float64): a subnormal reads as a
    zero of its sign."""
    u = np.asarray(u, np.uint32)
    u = np.where((u & 0x7F800000) == 0, u & 0x80000000, u).astype(np.uint32)
    return u.view(np.float32).astype(np.float64)


def vmul_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The Vector Engine's f32 multiply on f32 bits: the exact product
    rounded once to f32 (RNE), a subnormal result flushed to a zero of its
    sign, a NaN as 0x7FC00000."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = daz(a) * daz(b)
        u = np.ascontiguousarray(p.astype(np.float32)).view(np.uint32)
    u = np.where((u & 0x7F800000) == 0, u & 0x80000000, u)
    return np.where(np.isnan(p), np.uint32(QNAN), u).astype(np.uint32)


def f32_bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, np.float64).astype(np.float32)).view(np.uint32)


def reference(kind: str, codes: np.ndarray, scales: np.ndarray | None, g: np.float32 | None) -> np.ndarray:
    """The committed f32 output (bits) of each kernel pair: row r, input
    column j decodes code ``codes[r, j]``, block scale ``scales[r, j //
    block]``."""
    x = f32_bits(e2m1(codes))  # lookup + cast: E2M1 is exact in f8E4M3FN and f32
    if kind == "f32":
        return x
    if kind == "nvfp4":
        s = np.repeat(e4m3_f32_bits(scales), 16, axis=1)
        return vmul_bits(vmul_bits(x, s), np.full(x.shape, np.float32(g)).view(np.uint32))
    e = np.repeat(np.asarray(scales, np.uint8).astype(np.int64), 32, axis=1)
    with np.errstate(over="ignore"):
        s = np.ldexp(1.0, e - 127).astype(np.float32).view(np.uint32)
    s = np.where(e == 0xFF, np.uint32(QNAN), s)
    return vmul_bits(x, s)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def compile_text(text: str) -> fetchc.api.CompileResult:
    return fetchc.compile(text, filename="k.mlir")


def fields(p) -> dict:
    """A PROGRAMS record's fields but the name and the base."""
    d = dict(p.__dict__)
    del d["name"], d["base"]
    return d


def inputs(kind: str, seed: int):
    """Random codes (every code), scales (every bit pattern, NaN included;
    e8m0 0, 1 and 254, 255 forced in) and a tensor scale."""
    rng = np.random.default_rng(seed)
    if kind == "f32":
        return rng.integers(0, 16, (32, 64), dtype=np.uint8), None, None
    if kind == "nvfp4":
        codes = rng.integers(0, 16, (16, 256), dtype=np.uint8)
        s = rng.integers(0, 256, (16, 16), dtype=np.uint8)
        s[0, :6] = [0x7F, 0xFF, 0x01, 0x07, 0x80, 0x7E]  # NaN, -NaN, smallest/largest subnormal, -0, 448
        return codes, s, np.float32([0.37, 2.0**-140, 2.0**-120, 3.0e38][seed % 4])
    codes = rng.integers(0, 16, (8, 512), dtype=np.uint8)
    e = rng.integers(100, 160, (8, 16), dtype=np.uint8)
    e[0, :4] = [0, 1, 254, 255]
    return codes, e, None


def interp_args(kind: str, text: str, codes, scales, g) -> list:
    """The interpreter's arguments (canonical ml_dtypes arrays; zeros for the
    outputs and the hand-written route's %w8)."""
    ctx = make_context()
    m = parse_module(ctx, text, "k.mlir")
    fn = SymbolTable.lookup_symbol(m, "k")
    out = []
    given = [codes.view(ml_dtypes.float4_e2m1fn)]
    if kind == "nvfp4":
        given += [scales.view(ml_dtypes.float8_e4m3fn), g]
    elif kind == "mxfp4":
        given += [scales.view(ml_dtypes.float8_e8m0fnu)]
    for i, a in enumerate(fn.body.blocks.first.args):
        if i < len(given):
            out.append(given[i])
        else:
            from fetchc.target import element_type

            out.append(np.zeros(tuple(a.type.get_shape()), element_type(a.type.element_type).np_dtype))
    return out


def run_through_pipeline(text: str, args: list) -> list[np.ndarray]:
    """Interpret ``@k`` before and after every pass of the default pipeline
    (the lowered programs on the simulator's code, each memref at its placed
    DM address); assert every run gives the same ``%o`` bits; return them."""
    ctx = make_context()
    m = parse_module(ctx, text, "k.mlir")
    diags = verify_module(m)
    assert not diags, render_all(diags, {"k.mlir": text})
    passes = all_passes()
    outs = []
    o_index = next(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float32)

    def run() -> np.ndarray:
        fn = SymbolTable.lookup_symbol(m, "k")
        bases = {}
        if fn.arg_attrs is not None:
            for i, d in enumerate(fn.arg_attrs.data):
                b = d.data.get("rngd.dm_base")
                if isinstance(b, IntegerAttr):
                    bases[i] = b.value.data
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        interpret(m, "k", copies, memref_bases=bases)
        return copies[o_index].view(np.uint32)

    outs.append(run())
    for name in DEFAULT_PIPELINE:
        passes[name]()().apply(ctx, m)
        diags = verify_module(m)
        assert not diags, f"after {name}: " + render_all(diags)
        outs.append(run())
        assert np.array_equal(outs[-1], outs[0]), f"the output changes after {name}"
    assert any(o.name == "fetch_seq.program" for o in m.walk())
    return outs


# --------------------------------------------------------------------------
# seq.bin: the routed kernel's programs are the hand-written route's
# --------------------------------------------------------------------------


def test_routed_stotrf_equals_the_example():
    hand = compile_text((REPO / "examples" / "nvfp4_weight_decode_stotrf.mlir").read_text())
    routed = compile_text(ROUTED_STAGE)
    assert routed.seqbin.tables == hand.seqbin.tables
    assert [fields(p) for p in routed.seqbin.programs] == [fields(p) for p in hand.seqbin.programs]
    assert [p.name for p in routed.seqbin.programs] == ["stage_weight/0", "stage_weight/1"]
    assert [p.unit for p in routed.seqbin.programs] == [0, 1]  # main, then sub
    # The MANIFEST: the same programs (shapes, types), the scratch buffer in
    # place of the example's %w8 argument, after the arguments.
    (rk,), (hk,) = routed.seqbin.manifest.kernels, hand.seqbin.manifest.kernels
    assert [(p.index, p.time, p.packet, p.out_dtype) for p in rk.programs] == [
        (p.index, p.time, p.packet, p.out_dtype) for p in hk.programs
    ]
    codes, scratch = rk.tensors
    assert (codes.name, codes.arg, codes.scratch, codes.dm_base) == ("codes", 0, False, 0)
    assert (scratch.name, scratch.arg, scratch.scratch) == ("scratch0", None, True)
    assert (scratch.dtype, scratch.bytes, scratch.read, scratch.committed) == (
        hk.tensors[1].dtype, hk.tensors[1].bytes, True, True
    )
    assert scratch.shape == (256, 16, 32) and scratch.strides == (512, 32, 1) and scratch.offset == 0
    assert scratch.dm_base >= codes.dm_base + codes.bytes and scratch.dm_base % 64 == 0
    assert [p.tensor for p in rk.programs] == [0, 1]
    assert [p.base for p in routed.seqbin.programs] == [codes.dm_base, scratch.dm_base]


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_routed_programs_equal_hand_written(kind):
    routed_text, hand_text = PAIRS[kind]
    routed, hand = compile_text(routed_text), compile_text(hand_text)
    assert routed.seqbin.tables == hand.seqbin.tables
    assert [fields(p) for p in routed.seqbin.programs] == [fields(p) for p in hand.seqbin.programs]
    assert [p.name for p in routed.seqbin.programs] == [f"k/{i}" for i in range(len(hand.seqbin.programs))]
    (k,) = routed.seqbin.manifest.kernels
    args = [t for t in k.tensors if not t.scratch]
    (scratch,) = [t for t in k.tensors if t.scratch]
    assert k.tensors[-1] is scratch and scratch.arg is None and scratch.name == "scratch0"
    assert scratch.dm_base >= max(t.dm_base + t.bytes for t in args) and scratch.dm_base % 64 == 0
    # Program 1 (the staging fetch) reads the scratch buffer at its address.
    assert routed.seqbin.programs[1].base == scratch.dm_base and k.programs[1].tensor == len(k.tensors) - 1


# --------------------------------------------------------------------------
# Values: routed == hand-written == reference, through every pass
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_routed_values_equal_hand_written(kind, seed):
    codes, scales, g = inputs(kind, seed)
    routed_text, hand_text = PAIRS[kind]
    got = run_through_pipeline(routed_text, interp_args(kind, routed_text, codes, scales, g))
    want = run_through_pipeline(hand_text, interp_args(kind, hand_text, codes, scales, g))
    ref = reference(kind, codes, scales, g)
    assert np.array_equal(want[-1], ref), "the hand-written route differs from the reference"
    assert np.array_equal(got[-1], ref), "the routed kernel differs from the reference"


def test_reference_knows_the_edge_scales():
    # The reference itself, on values worked out by hand: e4m3 0x7F is NaN
    # (canonical), 0x01 is 2^-9, 0x7E is 448; a subnormal product flushes.
    assert list(e4m3_f32_bits(np.array([0x7F, 0xFF, 0x01, 0x7E, 0x80], np.uint8))) == [
        QNAN, QNAN, np.float32(2.0**-9).view(np.uint32), np.float32(448.0).view(np.uint32), 0x80000000
    ]
    tiny = np.float32(2.0**-100).view(np.uint32)
    assert vmul_bits(np.array([tiny]), np.array([tiny]))[0] == 0
    assert e2m1(np.array([0x7, 0xF, 0x1]))[0] == 6.0 and e2m1(np.array([0xF]))[0] == -6.0


# --------------------------------------------------------------------------
# fetchc.run: the routed kernel runs bit-identical to the hand-written route
# --------------------------------------------------------------------------


def _run_inputs(kind: str, codes, scales, g) -> dict:
    """``fetchc.run``'s named inputs, the same for both kernels of a pair
    (the tensors a program reads before anything commits to them, and the
    f32 scalar), in their memref types."""
    arrays = {"w": codes.view(ml_dtypes.float4_e2m1fn)}
    if kind == "nvfp4":
        arrays.update(bs=scales.view(ml_dtypes.float8_e4m3fn), g=float(g))
    elif kind == "mxfp4":
        arrays.update(e=scales.view(ml_dtypes.float8_e8m0fnu))
    return arrays


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_fetchc_run_routed_equals_hand_written(kind):
    if not hasattr(fetchc, "run"):
        pytest.skip("fetchc.run is not on this branch yet")
    codes, scales, g = inputs(kind, 5)
    routed_text, hand_text = PAIRS[kind]
    got = fetchc.run(routed_text, **_run_inputs(kind, codes, scales, g))
    want = fetchc.run(hand_text, **_run_inputs(kind, codes, scales, g))
    # Committed tensors come back by name: the routed kernel's scratch buffer
    # is not among them; the hand-written route's %w8 is.
    assert set(got) == {"o"} and set(want) == {"o", "w8"}
    o_got = np.ascontiguousarray(np.asarray(got["o"], np.float32)).view(np.uint32)
    o_want = np.ascontiguousarray(np.asarray(want["o"], np.float32)).view(np.uint32)
    assert o_got.shape == o_want.shape == codes.shape
    assert np.array_equal(o_got, o_want)
    assert np.array_equal(o_got, reference(kind, codes, scales, g))
