"""Differential checks of the whole compiler against the golden model
(docs/architecture.md); the machinery (independent reference, DM image,
register-block rules, interpreter and simulator runs) is
:mod:`differential` (``test/support/differential.py``, see its docstring
for steps 1-4).

* :func:`test_example`: every function of every ``examples/*.mlir`` (listed
  at collection time): steps 1-4 (big functions shrunk, and the golden model
  at full size; ``FETCHC_FULL_EXAMPLES=1`` runs steps 1-4 at full size too,
  minutes) and the decodes against hand-written formulas.
* :func:`test_nvfp4_edge_scales`, :func:`test_mxfp4_edge_scales`: small
  hand-written NVFP4 / MXFP4 cases pin the edge scales (e4m3 smallest and
  largest subnormal, 448, NaN, ±0; e8m0 0, 1, 254, 255).
* :func:`test_corner_case`: :data:`CORNERS`, layouts the generator does not
  produce.
* :func:`test_long_rows`: long row-structured reads (the simulator's
  strided-view path).
* :func:`test_generated_modules`: random valid modules from
  :func:`modgen.modules` (hypothesis); keeps those ``verify_module`` accepts
  (by construction nearly all) and runs steps 1-4 on every function.
"""

from __future__ import annotations

import math
import os
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import fetchc
from fetchc.diagnostics import DiagnosticError, render_all, verify_module

from differential import (
    BIG,
    EXAMPLES,
    QNAN32,
    SHRUNK_ROWS,
    SpecViolation,
    arg_elements,
    args_with_scales,
    assert_same,
    check_decodes,
    check_function,
    e2m1_table,
    expected_programs,
    fp4_decode,
    function_names,
    golden_full_size,
    make_args,
    own_bases,
    pack_nibbles,
    parse,
    shrink,
)
from modgen import GenModule, modules

# ---- the examples ----------------------------------------------------------


def _example_cases() -> list:
    cases = []
    for path in sorted(EXAMPLES.glob("*.mlir")):
        _, m = parse(path.read_text(), path.name)
        for fn in function_names(m):
            cases.append(pytest.param(path.name, fn, id=f"{path.stem}-{fn}"))
    return cases


@pytest.mark.parametrize("fname,fn", _example_cases())
def test_example(fname, fn):
    """Steps 1-3 on the example (shrunk when big) and the decodes against
    hand-written formulas; big examples also run the golden model at full
    size (:func:`golden_full_size`)."""
    text = (EXAMPLES / fname).read_text()
    _, m = parse(text, fname)
    seed = sum(map(ord, fname + fn))
    full = os.environ.get("FETCHC_FULL_EXAMPLES") == "1"
    label = fname
    if arg_elements(m, fn) > BIG and not full:
        golden_full_size(text, m, fn, fname, seed)
        small = shrink(text, m, fn)
        if small is None:  # correct but slow: tell whoever wonders why
            warnings.warn(f"@{fn} of {fname} cannot be shrunk; steps 1-4 run at full size")
        else:
            text, label = small, f"{fname} (leading dim shrunk to {SHRUNK_ROWS})"
            _, m = parse(text, label)
    args, extra = args_with_scales(m, fn, seed)
    after, extra_out = check_function(text, fn, args, label=label, extra_args=extra, module=m)
    assert after.programs, f"@{fn} compiles to no program"
    check_decodes(m, fn, args, after)
    for ea, out in zip(extra, extra_out):
        check_decodes(m, fn, ea, out)


# ---- scales at the edges, small -------------------------------------------

EDGE = """
func.func @nv(%w: memref<4x32xf4E2M1FN>, %bs: memref<4x2xf8E4M3FN>, %g: f32, %out: memref<4x32xf32>) {
  %s = fetch.fetch %w {base = 0 : i64, map = affine_map<(t, p) -> (t, p)>} : memref<4x32xf4E2M1FN> -> !fetch.stream<main, [4], [32], f4E2M1FN>
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4", scale_base = 64 : i64} : !fetch.stream<main, [4], [32], f4E2M1FN>, memref<4x2xf8E4M3FN>, f32 -> !fetch.stream<main, [4], [32], f32>
  rngd.commit %d, %out : !fetch.stream<main, [4], [32], f32>, memref<4x32xf32>
  func.return
}
func.func @mx(%w: memref<4x64xf4E2M1FN>, %bs: memref<4x2xf8E8M0FNU>, %out: memref<4x64xf32>) {
  %s = fetch.fetch %w {base = 0 : i64, map = affine_map<(t, p) -> (t, p)>} : memref<4x64xf4E2M1FN> -> !fetch.stream<main, [4], [64], f4E2M1FN>
  %d = fetch.dequant %s, %bs {format = "mxfp4", scale_base = 128 : i64} : !fetch.stream<main, [4], [64], f4E2M1FN>, memref<4x2xf8E8M0FNU> -> !fetch.stream<main, [4], [64], f32>
  rngd.commit %d, %out : !fetch.stream<main, [4], [64], f32>, memref<4x64xf32>
  func.return
}
"""


@pytest.mark.parametrize("g", [1.0, 2.0**-140, 2.0**-149, 2.0**-120, 3.0e38, -math.inf, math.nan])
def test_nvfp4_edge_scales(g):
    _, m = parse(EDGE)
    codes = np.tile(np.arange(16, dtype=np.uint8), 8).reshape(4, 32)  # every code, both blocks
    bs = np.array([[0x01, 0x07], [0x08, 0x7E], [0x7F, 0x00], [0x80, 0xFE]], np.uint8)  # subnormals, 448, NaN, ±0
    args = [codes.view(ml_dtypes.float4_e2m1fn), bs.view(ml_dtypes.float8_e4m3fn), np.float32(g), np.zeros((4, 32), np.float32)]
    out = check_function(EDGE, "nv", args, label="edge.mlir")[0].memrefs[2]
    want = fp4_decode(pack_nibbles(codes), bs.reshape(-1), "nvfp4", np.float32(g), (4, 32))
    assert_same(out, want, "nvfp4 edge scales")
    ob = out.view(np.uint32)
    assert (ob[2, :16] == QNAN32).all()  # the NaN block scale: the canonical NaN, whatever the code's sign
    assert not (((ob & 0x7F800000) == 0) & ((ob & 0x7FFFFF) != 0)).any()  # never a subnormal
    if g == 3.0e38:
        assert np.isinf(out).any()
    if g in (2.0**-140, 2.0**-149):  # a subnormal tensor scale reads as zero
        assert ((ob[~np.isnan(out)] & 0x7FFFFFFF) == 0).all()
    if g == 2.0**-120:  # IEEE gives subnormals here; RNGD flushes them
        ieee = e2m1_table()[codes].astype(np.float64) * np.repeat(
            bs.view(ml_dtypes.float8_e4m3fn).astype(np.float64), 16, axis=1) * g
        assert ((out == 0) & (ieee != 0) & (np.abs(ieee) < 2.0**-126)).any()


def test_mxfp4_edge_scales():
    _, m = parse(EDGE)
    codes = np.tile(np.arange(16, dtype=np.uint8), 16).reshape(4, 64)
    e = np.array([[0, 1], [126, 127], [253, 254], [255, 128]], np.uint8)  # 2^-127 .. 2^127, NaN
    args = [codes.view(ml_dtypes.float4_e2m1fn), e.view(ml_dtypes.float8_e8m0fnu), np.zeros((4, 64), np.float32)]
    out = check_function(EDGE, "mx", args, label="edge.mlir")[0].memrefs[2]
    want = fp4_decode(pack_nibbles(codes), e.reshape(-1), "mxfp4", None, (4, 64))
    assert_same(out, want, "mxfp4 edge scales")
    assert np.isinf(out[2, 32:]).any() and (out[3, :32].view(np.uint32) == QNAN32).all()
    assert (out[0, :32].view(np.uint32) & 0x7FFFFFFF == 0).all()  # e = 0: 2^-127 reads as +0
    c = codes[0, 32:]
    assert (out[0, 32:][(c & 7) == 1].view(np.uint32) & 0x7FFFFFFF == 0).all()  # ±0.5 × 2^-126: subnormal, flushed
    assert (np.abs(out[0, 32:][(c & 7) == 2]) == 2.0**-126).all()  # ±1 × 2^-126: normal, kept


# ---- hand-written corner cases -------------------------------------------


def _s(e: str, ctx: str = "main", time="[4]", packet="[16]") -> str:
    return f"!fetch.stream<{ctx}, {time}, {packet}, {e}>"


CORNERS = {
    # a 4-bit strided view with an odd layout offset, read from an even element
    "odd_offset_f4": """
func.func @f(%a: memref<4x9xf4E2M1FN, strided<[10, 1], offset: 1>>, %o: memref<4x8xf32>) {
  %s = fetch.fetch %a {base = 16 : i64, map = affine_map<(t, p) -> (t, p + 1)>} : memref<4x9xf4E2M1FN, strided<[10, 1], offset: 1>> -> !fetch.stream<main, [4], [8], f4E2M1FN>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %c, %o : !fetch.stream<main, [4], [8], f32>, memref<4x8xf32>
  func.return
}""",
    # i4 residuals on the sub context into the Contraction Engine
    "i4_zp_sub_context": """
func.func @f(%w: memref<32xi4>, %a: memref<4x32xi4>, %o: memref<4x32xi32>) {
  %ws = fetch.fetch %w {base = 0 : i64} : memref<32xi4> -> !fetch.stream<sub, [], [32], i4>
  %t = rngd.to_trf %ws : !fetch.stream<sub, [], [32], i4> -> !rngd.trf<i4>
  %s = fetch.fetch %a {base = 64 : i64} : memref<4x32xi4> -> !fetch.stream<sub, [4], [32], i4>
  %z = fetch.zp_sub %s, -8 : !fetch.stream<sub, [4], [32], i4> -> !fetch.stream<sub, [4], [32], i5>
  %y = rngd.contract_outer %z, %t : !fetch.stream<sub, [4], [32], i5>, !rngd.trf<i4> -> !fetch.stream<sub, [4], [32], i32>
  rngd.commit %y, %o : !fetch.stream<sub, [4], [32], i32>, memref<4x32xi32>
  func.return
}""",
    # both dims reversed, one-element packets: entries of stride -1 and -8
    "reversed_packet_1": """
func.func @f(%a: memref<8x8xbf16>, %o: memref<64xbf16>) {
  %s = fetch.fetch %a {base = 8 : i64, map = affine_map<(t0, t1, p) -> (7 - t1, 7 - t0 + p)>} : memref<8x8xbf16> -> !fetch.stream<main, [8, 8], [1], bf16>
  rngd.commit %s, %o : !fetch.stream<main, [8, 8], [1], bf16>, memref<64xbf16>
  func.return
}""",
    # two broadcast dims: stride-0 entries merging past 65536 elements
    "broadcast_merge": """
func.func @f(%a: memref<4xi8>, %o: memref<300000xi8>) {
  %s = fetch.fetch %a {base = 0 : i64, map = affine_map<(t0, t1, p) -> (p)>} : memref<4xi8> -> !fetch.stream<main, [300, 250], [4], i8>
  rngd.commit %s, %o : !fetch.stream<main, [300, 250], [4], i8>, memref<300000xi8>
  func.return
}""",
    # a broadcast packet (innermost stride 0: one-element reads) with a cast
    "broadcast_packet_cast": """
func.func @f(%a: memref<4xi16>, %o: memref<4x32xi32>) {
  %s = fetch.fetch %a {base = 0 : i64, map = affine_map<(t0, p) -> (t0)>} : memref<4xi16> -> !fetch.stream<main, [4], [32], i16>
  %c = fetch.cast %s : !fetch.stream<main, [4], [32], i16> -> !fetch.stream<main, [4], [32], i32>
  rngd.commit %c, %o : !fetch.stream<main, [4], [32], i32>, memref<4x32xi32>
  func.return
}""",
    # one time dim over 65536 (split), non-paired lookup
    "big_broadcast_time_dim": """
func.func @f(%a: memref<2xf8E4M3FN>, %o: memref<70000x2xbf16>) {
  %s = fetch.fetch %a {base = 0 : i64, map = affine_map<(t, p) -> (p)>} : memref<2xf8E4M3FN> -> !fetch.stream<main, [70000], [2], f8E4M3FN>
  %c = fetch.convert %s : !fetch.stream<main, [70000], [2], f8E4M3FN> -> !fetch.stream<main, [70000], [2], bf16>
  rngd.commit %c, %o : !fetch.stream<main, [70000], [2], bf16>, memref<70000x2xbf16>
  func.return
}""",
    "identity_convert_then_zp": f"""
func.func @f(%w: memref<16xi8>, %a: memref<4x16xi8>, %o: memref<4x16xi32>) {{
  %ws = fetch.fetch %w {{base = 128 : i64}} : memref<16xi8> -> !fetch.stream<main, [], [16], i8>
  %t = rngd.to_trf %ws : !fetch.stream<main, [], [16], i8> -> !rngd.trf<i8>
  %s = fetch.fetch %a : memref<4x16xi8> -> {_s('i8')}
  %c = fetch.convert %s : {_s('i8')} -> {_s('i8')}
  %z = fetch.zp_sub %c, 5 : {_s('i8')} -> {_s('i9')}
  %y = rngd.contract_outer %z, %t : {_s('i9')}, !rngd.trf<i8> -> {_s('i32')}
  rngd.commit %y, %o : {_s('i32')}, memref<4x16xi32>
  func.return
}}""",
    "two_converts": f"""
func.func @f(%a: memref<4x16xf4E2M1FN>, %o: memref<4x16xf32>) {{
  %s = fetch.fetch %a : memref<4x16xf4E2M1FN> -> {_s('f4E2M1FN')}
  %c = fetch.convert %s : {_s('f4E2M1FN')} -> {_s('f8E5M2')}
  %d = fetch.convert %c : {_s('f8E5M2')} -> {_s('f32')}
  rngd.commit %d, %o : {_s('f32')}, memref<4x16xf32>
  func.return
}}""",
    "sub_pinned_read_size_cast": f"""
func.func @f(%a: memref<4x16xbf16>, %o: memref<4x16xf32>) {{
  %s = fetch.fetch %a {{read_size = 4 : i64}} : memref<4x16xbf16> -> {_s('bf16', 'sub')}
  %d = fetch.cast %s : {_s('bf16', 'sub')} -> {_s('f32', 'sub')}
  rngd.commit %d, %o : {_s('f32', 'sub')}, memref<4x16xf32>
  func.return
}}""",
    # an NVFP4 packet spanning two rows: the scale stream's packet is [2, 2]
    "nvfp4_packet_spans_rows": """
func.func @f(%w: memref<4x32xf4E2M1FN>, %bs: memref<4x2xf8E4M3FN, strided<[2, 1], offset: 0>>, %g: f32, %o: memref<2x2x32xf32>) {
  %s = fetch.fetch %w {base = 0 : i64, map = affine_map<(t, r, p) -> (t * 2 + r, p)>} : memref<4x32xf4E2M1FN> -> !fetch.stream<main, [2], [2, 32], f4E2M1FN>
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4", scale_base = 64 : i64} : !fetch.stream<main, [2], [2, 32], f4E2M1FN>, memref<4x2xf8E4M3FN, strided<[2, 1], offset: 0>>, f32 -> !fetch.stream<main, [2], [2, 32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [2], [2, 32], f32>, memref<2x2x32xf32>
  func.return
}""",
    "mxfp4_placed_scale_base_reversed_rows": """
func.func @f(%w: memref<4x32xf4E2M1FN>, %bs: memref<4x1xf8E8M0FNU>, %o: memref<4x32xf32>) {
  %s = fetch.fetch %w {base = 64 : i64, map = affine_map<(t, p) -> (3 - t, p)>} : memref<4x32xf4E2M1FN> -> !fetch.stream<main, [4], [32], f4E2M1FN>
  %d = fetch.dequant %s, %bs {format = "mxfp4"} : !fetch.stream<main, [4], [32], f4E2M1FN>, memref<4x1xf8E8M0FNU> -> !fetch.stream<main, [4], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [4], [32], f32>, memref<4x32xf32>
  func.return
}""",
    # function tables (hardware.md §2.1b): every key type, 2-byte keys on the row and the element paths
    "gelu_f8e4m3_widened": f"""
func.func @f(%a: memref<4x16xf8E4M3FN>, %o: memref<4x16xf32>) {{
  %s = fetch.fetch %a : memref<4x16xf8E4M3FN> -> {_s('f8E4M3FN')}
  %g = fetch.table_lookup %s {{fn = "gelu"}} : {_s('f8E4M3FN')} -> {_s('bf16')}
  %c = fetch.cast %g : {_s('bf16')} -> {_s('f32')}
  rngd.commit %c, %o : {_s('f32')}, memref<4x16xf32>
  func.return
}}""",
    "silu_i8_zero_point": f"""
func.func @f(%a: memref<4x16xi8>, %o: memref<4x16xbf16>) {{
  %s = fetch.fetch %a : memref<4x16xi8> -> {_s('i8')}
  %g = fetch.table_lookup %s {{fn = "silu", scale = 0.0625 : f32, zero_point = -3 : i32}} : {_s('i8')} -> {_s('bf16')}
  rngd.commit %g, %o : {_s('bf16')}, memref<4x16xbf16>
  func.return
}}""",
    "gelu_tanh_f8e5m2": f"""
func.func @f(%a: memref<4x16xf8E5M2>, %o: memref<4x16xbf16>) {{
  %s = fetch.fetch %a : memref<4x16xf8E5M2> -> {_s('f8E5M2')}
  %g = fetch.table_lookup %s {{fn = "gelu_tanh"}} : {_s('f8E5M2')} -> {_s('bf16')}
  rngd.commit %g, %o : {_s('bf16')}, memref<4x16xbf16>
  func.return
}}""",
    "sigmoid_bf16_rows": f"""
func.func @f(%a: memref<4x16xbf16>, %o: memref<4x16xf32>) {{
  %s = fetch.fetch %a : memref<4x16xbf16> -> {_s('bf16')}
  %g = fetch.table_lookup %s {{fn = "sigmoid"}} : {_s('bf16')} -> {_s('bf16')}
  %c = fetch.cast %g : {_s('bf16')} -> {_s('f32')}
  rngd.commit %c, %o : {_s('f32')}, memref<4x16xf32>
  func.return
}}""",
    "tanh_bf16_reversed_elements": """
func.func @f(%a: memref<8x8xbf16>, %o: memref<64xbf16>) {
  %s = fetch.fetch %a {base = 8 : i64, map = affine_map<(t0, t1, p) -> (7 - t1, 7 - t0 + p)>} : memref<8x8xbf16> -> !fetch.stream<main, [8, 8], [1], bf16>
  %g = fetch.table_lookup %s {fn = "tanh"} : !fetch.stream<main, [8, 8], [1], bf16> -> !fetch.stream<main, [8, 8], [1], bf16>
  rngd.commit %g, %o : !fetch.stream<main, [8, 8], [1], bf16>, memref<64xbf16>
  func.return
}""",
    "exp_i16_scaled_widened": f"""
func.func @f(%a: memref<4x16xi16>, %o: memref<4x16xf32>) {{
  %s = fetch.fetch %a : memref<4x16xi16> -> {_s('i16')}
  %g = fetch.table_lookup %s {{fn = "exp", scale = 1.0e-03 : f32, zero_point = 100 : i32}} : {_s('i16')} -> {_s('bf16')}
  %c = fetch.cast %g : {_s('bf16')} -> {_s('f32')}
  rngd.commit %c, %o : {_s('f32')}, memref<4x16xf32>
  func.return
}}""",
    "relu_and_identity_i16_two_tables": f"""
func.func @f(%a: memref<4x16xi16>, %b: memref<4x16xi16>, %o: memref<4x16xbf16>, %p: memref<4x16xbf16>) {{
  %s = fetch.fetch %a : memref<4x16xi16> -> {_s('i16')}
  %g = fetch.table_lookup %s {{fn = "relu", scale = 3.5 : f32}} : {_s('i16')} -> {_s('bf16')}
  rngd.commit %g, %o : {_s('bf16')}, memref<4x16xbf16>
  %t = fetch.fetch %b : memref<4x16xi16> -> {_s('i16')}
  %h = fetch.table_lookup %t {{fn = "identity", scale = 1.0e+30 : f32, zero_point = -32768 : i32}} : {_s('i16')} -> {_s('bf16')}
  rngd.commit %h, %p : {_s('bf16')}, memref<4x16xbf16>
  func.return
}}""",
}


@pytest.mark.parametrize("name", sorted(CORNERS))
def test_corner_case(name):
    text = CORNERS[name]
    _, m = parse(text, f"{name}.mlir")
    check_function(text, "f", make_args(m, "f", np.random.default_rng(len(name))), label=f"{name}.mlir", module=m)


# ---- long row-structured reads ---------------------------------------------
# Rows of thousands of elements, reversed and padded: the simulator's
# strided-view path (groups of equally spaced rows), which small random
# modules rarely reach.

ROWS = [  # element type, rows, columns, row padding, rows reversed, stage
    ("i8", 8, 4096, 0, True, None),
    ("i8", 8, 4096, 8, True, None),
    ("i8", 6, 4096, 16, False, ("fetch.cast", "i32")),
    ("f4E2M1FN", 4, 8192, 2, True, ("fetch.table_lookup", "f8E4M3FN")),
    ("f4E2M1FN", 4, 8192, 0, True, ("fetch.convert", "f32")),
    ("i4", 6, 8192, 6, True, ("fetch.cast", "i32")),
    ("bf16", 8, 4096, 4, True, ("fetch.cast", "f32")),
    ("f32", 8, 4096, 4, True, None),
    ("f8E5M2", 40, 512, 8, True, ("fetch.convert", "bf16")),
]


@pytest.mark.parametrize("elem,rows,cols,pad,rev,stage", ROWS, ids=[f"{r[0]}-{r[2]}-pad{r[3]}" for r in ROWS])
def test_long_rows(elem, rows, cols, pad, rev, stage):
    P = 64
    mt = f"memref<{rows}x{cols}x{elem}, strided<[{cols + pad}, 1], offset: {2 * pad}>>"
    row = f"{rows - 1} - t" if rev else "t"

    def st_(e):
        return f"!fetch.stream<main, [{rows}, {cols // P}], [{P}], {e}>"

    lines = [f"  %s = fetch.fetch %a {{base = 8 : i64, map = affine_map<(t, q, p) -> ({row}, q * {P} + p)>}} : {mt} -> {st_(elem)}"]
    v, e = "%s", elem
    if stage:
        lines.append(f"  %c = {stage[0]} %s : {st_(elem)} -> {st_(stage[1])}")
        v, e = "%c", stage[1]
    lines.append(f"  rngd.commit {v}, %o : {st_(e)}, memref<{rows * cols}x{e}>")
    text = f"func.func @f(%a: {mt}, %o: memref<{rows * cols}x{e}>) {{\n" + "\n".join(lines) + "\n  func.return\n}\n"
    _, m = parse(text)
    check_function(text, "f", make_args(m, "f", np.random.default_rng(rows * cols + pad)), module=m)


# --------------------------------------------------------------------------
# Random valid modules
# --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(gm=modules(), seed=st.integers(0, 2**31 - 1))
def test_generated_modules(gm: GenModule, seed: int):
    _, m = parse(gm.text, "gen.mlir")
    diags = verify_module(m)
    # The generator only takes risks with the sequencer rules (hardware.md
    # §3); what the verifier, the split pass and this file's derivation of
    # those rules say must agree before a module is set aside.
    violation = None
    try:
        for fn in gm.fns:
            expected_programs(m, fn, own_bases(m, fn))
    except SpecViolation as e:
        violation = str(e)
    if diags:
        assert violation is not None, "the verifier rejects a module hardware.md §3 allows:\n" + render_all(
            diags, {"gen.mlir": gm.text}
        )
        reject()
    if violation is not None:
        assert "(block scales)" in violation, f"the verifier accepts a fetch hardware.md §3 forbids: {violation}"
        with pytest.raises(DiagnosticError, match="block scales"):
            fetchc.compile(gm.text)
        reject()
    assert fetchc.compile(gm.text).seq_bin == fetchc.compile(gm.text).seq_bin, "seq.bin is not deterministic"
    for k, fn in enumerate(gm.fns):
        args = make_args(m, fn, np.random.default_rng(seed + k))
        check_function(gm.text, fn, args, label="gen.mlir", module=m)
