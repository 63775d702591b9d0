"""Tests of ``fetch-place-dm`` (ir.md §2a): the byte-span and alignment
maths, and placement through the pass, with every expected number worked
out by hand in the comments (never by calling the code under test).

The lit tests in ``test/lit/place/`` cover the command line: placed
addresses in ``fetchc dis``, each located error, the ``--emit=mlir`` round
trip.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float4E2M1FNType,
    IntegerType,
    MemRefType,
    StridedLayoutAttr,
)
from xdsl.dialects.func import FuncOp

import fetchc
from fetchc.frontend.context import make_context
from fetchc.diagnostics import DiagnosticError, PassError
from fetchc.frontend.parsing import parse_module
from fetchc.passes.place_dm import PlaceDmPass, align_up, place_after, place_function, tensor_name
from fetchc.target.layout import memref_byte_span

I8 = IntegerType(8)
F4 = Float4E2M1FNType()


def strided(elem, shape, strides, offset=0) -> MemRefType:
    return MemRefType(elem, shape, StridedLayoutAttr(strides, offset))


# ---------------------------------------------------------------------------
# Byte spans: (lowest byte, one past the highest), relative to the base.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mt, expected",
    [
        # 4 x 16 i8, row-major: elements 0 .. 63, one byte each.
        (MemRefType(I8, [4, 16]), (0, 64)),
        # 16 x 16 bf16: 256 elements x 2 bytes.
        (MemRefType(BFloat16Type(), [16, 16]), (0, 512)),
        # 1000 i8: not a multiple of anything in particular.
        (MemRefType(I8, [1000]), (0, 1000)),
        # rank 0 f32: one element, 4 bytes.
        (MemRefType(Float32Type(), []), (0, 4)),
        # 4096 x 4096 f4E2M1FN: 2^24 codes, two per byte = 8 MiB.
        (MemRefType(F4, [4096, 4096]), (0, 8 * 1024 * 1024)),
        # 3 f4 codes: elements 0, 1 in byte 0, element 2 in byte 1 -> 2 bytes.
        (MemRefType(F4, [3]), (0, 2)),
        # 4 f4 codes from element offset 3: elements 3 .. 6 live in bytes
        # 1 (high nibble), 2, 3 (low nibble) -> bytes 1 .. 3.
        (strided(F4, [4], [1], 3), (1, 4)),
        # Rows in reverse: strides [-16, 1], offset 16 -> elements
        # 16 + 1*(-16) + 0 = 0 .. 16 + 15 = 31.
        (strided(I8, [2, 16], [-16, 1], 16), (0, 32)),
        # Same strides, offset 0: elements -16 .. 15, 16 bytes below the base.
        (strided(I8, [2, 16], [-16, 1], 0), (-16, 16)),
        # f32 reversed: 4 elements, stride -1, offset 3 -> elements 0 .. 3,
        # bytes 0 .. 15.
        (strided(Float32Type(), [4], [-1], 3), (0, 16)),
        # The tile of examples/tiling_read.mlir: 64 x 128 bf16 with row
        # stride 1024 from element 262528 (row 256, column 384).  Lowest
        # element 262528 -> byte 525056; highest 262528 + 63*1024 + 127 =
        # 327167 -> its last byte 654335, so end 654336.
        (strided(BFloat16Type(), [64, 128], [1024, 1], 262528), (525056, 654336)),
        # A broadcast row (stride 0): 4 rows of the same 4 bytes.
        (strided(I8, [4, 4], [0, 1], 0), (0, 4)),
        # Column-major 3 x 5 i8 (strides [1, 3]): elements 0 .. 2 + 12 = 14.
        (strided(I8, [3, 5], [1, 3], 0), (0, 15)),
        # Odd 4-bit span with a negative stride: 3 codes, stride -1, offset
        # 1 -> elements -1 .. 1 -> bytes floor(-1/2) = -1 .. floor(1/2) = 0.
        (strided(F4, [3], [-1], 1), (-1, 1)),
        # f16 is not a hardware type but has a fixed 2-byte layout.
        (MemRefType(Float16Type(), [8]), (0, 16)),
        # A zero dim: no element, no byte.
        (MemRefType(I8, [0, 16]), (0, 0)),
    ],
)
def test_memref_byte_span(mt, expected):
    assert memref_byte_span(mt) == expected


@pytest.mark.parametrize(
    "mt, words",
    [
        (MemRefType(IntegerType(1), [8]), "no DM layout"),
        (MemRefType(IntegerType(12), [8]), "no DM layout"),
        (MemRefType(I8, [-1, 4]), "dynamic memref shapes"),
    ],
)
def test_memref_byte_span_rejects(mt, words):
    with pytest.raises(ValueError, match=words):
        memref_byte_span(mt)


# ---------------------------------------------------------------------------
# Alignment: the next multiple of 64 whose tensor starts at or after `free`.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, align, expected",
    [(0, 64, 0), (1, 64, 64), (63, 64, 64), (64, 64, 64), (65, 64, 128), (1000, 64, 1024), (7, 8, 8), (-5, 64, 0)],
)
def test_align_up(x, align, expected):
    assert align_up(x, align) == expected


@pytest.mark.parametrize(
    "free, lo, expected",
    [
        (0, 0, 0),  # empty DM: the first tensor at 0
        (32, 0, 64),  # after a 32-byte tensor at 0
        (64, 0, 64),  # already on a boundary
        (1000, 0, 1024),
        (1025, 0, 1088),  # 17 * 64
        (96, -16, 128),  # lowest byte must be >= 96: base >= 112 -> 128
        (0, -16, 64),  # even in empty DM the bytes may not go below 0
        (64, -64, 128),  # exactly one boundary below
        (64, -65, 192),  # just over one boundary below
        (100, 48, 128),  # a positive offset does not pull the base down
    ],
)
def test_place_after(free, lo, expected):
    assert place_after(free, lo) == expected


# ---------------------------------------------------------------------------
# The pass on whole functions.
# ---------------------------------------------------------------------------


def _funcs(text: str) -> dict[str, FuncOp]:
    module = parse_module(make_context(), text, "t.mlir")
    return {f.sym_name.data: f for f in module.walk() if isinstance(f, FuncOp)}


def _dm_bases(f: FuncOp) -> list[int | None]:
    out = []
    for d in f.arg_attrs.data:
        a = d.data.get("rngd.dm_base")
        out.append(None if a is None else a.value.data)
    return out


KERNEL = """
func.func @k(%codes: memref<64x64xf4E2M1FN>, %s: memref<64x4xf8E4M3FN>, %g: f32,
             %out: memref<64x64xf32>, %spare: memref<3xbf16>, %last: memref<1xi8>) {
  %c = fetch.fetch %codes : memref<64x64xf4E2M1FN> -> !fetch.stream<main, [64], [64], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [64], [64], f4E2M1FN>, memref<64x4xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [64], f32>
  rngd.commit %d, %out : !fetch.stream<main, [64], [64], f32>, memref<64x64xf32>
  func.return
}
"""


def test_place_function_in_argument_order():
    f = _funcs(KERNEL)["k"]
    got = place_function(f)
    # codes: 64*64 f4 = 2048 bytes at 0.  s: 256 bytes at 2048.  out:
    # 64*64*4 = 16384 bytes at 2304 (= 36 * 64).  spare: 6 bytes at
    # 2304 + 16384 = 18688 (= 292 * 64).  last: 1 byte at the next
    # boundary after 18693, 18752.  %g (argument 2) is not a tensor.
    assert got == {0: 0, 1: 2048, 3: 2304, 4: 18688, 5: 18752}
    assert _dm_bases(f) == [0, 2048, None, 2304, 18688, 18752]
    fetch, dequant = [o for o in f.walk() if o.name in ("fetch.fetch", "fetch.dequant")]
    assert fetch.properties["base"].value.data == 0
    assert dequant.properties["scale_base"].value.data == 2048


def test_place_function_is_idempotent():
    f = _funcs(KERNEL)["k"]
    first = place_function(f)
    assert place_function(f) == first


def test_dm_size_fits_exactly_and_not_one_byte_less():
    # The kernel above ends at 18752 + 1 = 18753 bytes.
    assert place_function(_funcs(KERNEL)["k"], dm_size=18753)[5] == 18752
    with pytest.raises(PassError, match=r"placing %last \(1 byte\) at 0x4940 needs 18753 bytes of DM, but dm-size is 18752"):
        place_function(_funcs(KERNEL)["k"], dm_size=18752)


def test_explicit_and_inferred_then_placed():
    text = """
func.func @k(%a: memref<16xi8> {rngd.dm_base = 8192 : i64}, %b: memref<100xi8>, %c: memref<16xi8>) {
  %s = fetch.fetch %a : memref<16xi8> -> !fetch.stream<main, [1], [16], i8>
  %t = fetch.fetch %b {base = 16384 : i64, map = affine_map<(t, p) -> (t * 4 + p)>} : memref<100xi8> -> !fetch.stream<main, [25], [4], i8>
  %u = rngd.to_trf %s : !fetch.stream<main, [1], [16], i8> -> !rngd.trf<i8>
  %v = rngd.to_trf %t : !fetch.stream<main, [25], [4], i8> -> !rngd.trf<i8>
  func.return
}
"""
    # a: explicit 8192 .. 8207; b: inferred 16384 .. 16483; the highest byte
    # taken is 16483, so c goes to the next boundary, 16512 (= 258 * 64).
    assert place_function(_funcs(text)["k"]) == {0: 8192, 1: 16384, 2: 16512}


def test_negative_stride_argument_never_overlaps():
    text = """
func.func @k(%w: memref<2x16xi8>, %n: memref<2x16xi8, strided<[-16, 1]>>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %n : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8, strided<[-16, 1]>>
  func.return
}
"""
    # w: bytes 0 .. 31.  n reaches 16 bytes below its base: base 64 would put
    # its lowest byte at 48 (free), so base 64 is the answer: 48 .. 79.
    assert place_function(_funcs(text)["k"]) == {0: 0, 1: 64}


def test_not_a_kernel_is_untouched():
    f = _funcs("func.func @f(%x: memref<4xi8>) {\n  func.return\n}\n")["f"]
    assert place_function(f) is None
    assert f.arg_attrs is None


def test_tensor_names():
    f = _funcs(KERNEL)["k"]
    args = list(f.body.blocks.first.args)
    assert [tensor_name(a) for a in args] == ["codes", "s", "g", "out", "spare", "last"]
    # An argument without a name is arg<index>, counting every argument.
    args[4].name_hint = None
    assert tensor_name(args[4]) == "arg4"


def test_memref_block_argument_of_a_nested_region():
    # A fetch inside a region reading the region's own block argument (the
    # straight-line rule rejects the fetch itself in the verifier; the pass
    # must still say what is wrong, not crash).  Parsed without verifying.
    text = """
func.func @k(%x: memref<2x16xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%m = %x) -> (memref<2x16xi8>) {
    %s = fetch.fetch %m : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
    %t = rngd.to_trf %s : !fetch.stream<main, [2], [16], i8> -> !rngd.trf<i8>
    scf.yield %m : memref<2x16xi8>
  }
  func.return
}
"""
    with pytest.raises(PassError) as e:
        place_function(_funcs(text)["k"])
    assert e.value.op.name == "fetch.fetch"
    assert "an argument of a block inside 'scf.for'" in e.value.message
    assert "pass it in as a function argument" in e.value.message
    assert [(n.name, msg) for n, msg in e.value.notes] == [("scf.for", "the memref is defined here")]


def test_explicit_base_below_a_negative_stride_layout():
    text = """
func.func @k(%w: memref<2x16xi8>, %n: memref<2x16xi8, strided<[-16, 1]>> {rngd.dm_base = 8 : i64}) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %n : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8, strided<[-16, 1]>>
  func.return
}
"""
    # %n reaches element -16, i.e. byte 8 - 16 = -8: below DM address 0.
    with pytest.raises(PassError, match=r"placing %n \(32 bytes\) at 0x8 \(its rngd.dm_base\) puts its lowest byte at -0x8, below DM address 0 \(its layout reaches 16 bytes below its base\)"):
        place_function(_funcs(text)["k"])


def test_empty_tensor_takes_no_bytes():
    text = """
func.func @k(%w: memref<2x16xi8>, %e: memref<0x16xi8>, %x: memref<2x16xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}
"""
    # w: bytes 0 .. 31; e (no element) gets the next boundary, 64, but takes
    # nothing, so x goes to 64 too.
    assert place_function(_funcs(text)["k"]) == {0: 0, 1: 64, 2: 64}


@pytest.mark.parametrize("bad", [0, -1, (1 << 19) + 1, 1 << 32, True])
def test_dm_size_option_range(bad):
    with pytest.raises(ValueError, match=r"dm-size must be a number of bytes from 1 to 2\^19 = 524288 \(one slice's DM\)"):
        PlaceDmPass(dm_size=bad)
    assert PlaceDmPass().dm_size == 524288 == PlaceDmPass(dm_size=1 << 19).dm_size


def test_a_kernel_that_does_not_fit_one_slice_names_the_slices_that_fit():
    # 4096 x 4096 NVFP4 (8 MiB codes, 1 MiB scales, 64 MiB f32): 76546048 bytes;
    # split by rows over 256 slices, one slice needs 32768 + 4096 + 262144 bytes
    # (each at the next 64-byte boundary): 299008.  128 slices would need 598016.
    text = """
func.func @dq(%w: memref<4096x4096xf4E2M1FN>, %bs: memref<4096x256xf8E4M3FN>, %g: f32, %o: memref<4096x4096xf32>) {
  %s = fetch.fetch %w {map = affine_map<(o, p, e) -> (o, p * 64 + e)>} : memref<4096x4096xf4E2M1FN> -> !fetch.stream<main, [4096, 64], [64], f4E2M1FN>
  %x = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [4096, 64], [64], f4E2M1FN>, memref<4096x256xf8E4M3FN>, f32 -> !fetch.stream<main, [4096, 64], [64], f32>
  rngd.commit %x, %o : !fetch.stream<main, [4096, 64], [64], f32>, memref<4096x4096xf32>
  func.return
}"""
    with pytest.raises(PassError) as e:
        place_function(_funcs(text)["dq"])
    msg = e.value.message
    assert "placing %w (8388608 bytes) at 0x0 needs 8388608 bytes of DM, but dm-size is 524288 (one slice's DM)" in msg
    assert "one slice needs 76546048 bytes for the tensors of @dq" in msg
    assert "{rngd.slices = 256 : i64} on the function and {rngd.slice_dim = 0 : i64} on %w, %bs, %o" in msg
    assert "one slice then needs 299008 bytes" in msg
    assert "raise dm-size" not in msg  # it is one slice's DM already


def test_default_pipeline_places_first():
    from fetchc.driver import DEFAULT_PIPELINE, MLIR_PIPELINE

    # fetch-route-sub-decode first (it creates scratch buffers), then the
    # placement, before any other pass.
    assert DEFAULT_PIPELINE[:2] == ("fetch-route-sub-decode", "fetch-place-dm")
    assert MLIR_PIPELINE == DEFAULT_PIPELINE[:-1]
    # Through the API: the scale fetch reads from the placed scale memref.
    result = fetchc.compile(KERNEL)
    assert [p.base for p in result.programs] == [0, 2048]


def test_api_reports_placement_errors():
    text = KERNEL.replace("%s: memref<64x4xf8E4M3FN>,", "%s: memref<64x4xf8E4M3FN> {rngd.dm_base = 4 : i64},")
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text)
    (d,) = e.value.diagnostics
    assert d.message.startswith("'func.func' op rngd.dm_base = 4 of %s is not a DM byte address that is a multiple of 8")
    assert d.loc is not None and d.loc[1] == 2
