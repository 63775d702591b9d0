"""``fetchc.run`` / ``fetchc run`` and ``fetchc sim --arg`` (ir.md §2a, §5;
hardware.md §2.2a, §4).

Every expected value comes from the reference written in this file: numpy
and ml_dtypes for the value sets of the formats, and the RNGD rules of
hardware.md §2.2a spelled out below (never fetchc's own numerics or
simulator).  Results are compared bit for bit, NaN bits included.

The reference multiply: both operands are f32 values; a subnormal operand
reads as a zero of its sign; the exact product is formed in float64 (24-bit
significands, exponents far from f64's limits after the flush, so exact) and
rounded once to f32 by numpy's IEEE conversion (nearest even, gradual
underflow, overflow to inf); a subnormal result becomes a zero of its sign;
any NaN becomes 0x7FC00000.
"""

from __future__ import annotations

import io
import math
import os
import pathlib
import subprocess

import ml_dtypes
import numpy as np
import pytest

import fetchc
import fnref
from fetchc.cli import main
from fetchc.diagnostics import DiagnosticError, DiagnosticWarning
from fetchc.golden.inputs import InputError
from fetchc.api import run_kernel
from fetchc.golden.run import RunError
from served import FETCHC

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# --------------------------------------------------------------------------
# The independent reference (hardware.md §2.2a, §4)
# --------------------------------------------------------------------------

QNAN = np.uint32(0x7FC00000)
MIN_NORMAL = 2.0**-126
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def e2m1(codes: np.ndarray) -> np.ndarray:
    """E2M1 value of each code 0-15 (bit 3 the sign), as float32."""
    return E2M1[codes.astype(np.intp)].astype(np.float32)


def e4m3_to_f32(bits: np.ndarray) -> np.ndarray:
    """hardware.md §2.2a: f8E4M3FN -> f32 exact; 0x7F / 0xFF give 0x7FC00000."""
    v = bits.astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    u = v.view(np.uint32).copy()
    u[(bits & 0x7F) == 0x7F] = QNAN
    return u.view(np.float32)


def e8m0_to_f32(bits: np.ndarray) -> np.ndarray:
    """hardware.md §4: 2^(e-127) (e = 0 is the f32 subnormal 2^-127), e = 255 NaN."""
    e = bits.astype(np.int64)
    with np.errstate(over="ignore"):
        v = np.ldexp(np.ones(e.shape), e - 127).astype(np.float32)
    return np.where(e == 255, np.float32(np.nan), v).astype(np.float32)


def flush(x: np.ndarray) -> np.ndarray:
    """Subnormal -> zero of its sign (float32 in, float32 out)."""
    x = np.array(x, dtype=np.float32)
    sub = (np.abs(x) < MIN_NORMAL) & (x != 0)
    x[sub] = np.copysign(np.float32(0), x[sub])
    return x


def rngd_mul(a, b) -> np.ndarray:
    """The Vector Engine multiply of hardware.md §2.2a (module docstring)."""
    a64 = flush(np.asarray(a, np.float32)).astype(np.float64)
    b64 = flush(np.asarray(b, np.float32)).astype(np.float64)
    with np.errstate(all="ignore"):
        r = flush((a64 * b64).astype(np.float32))
    u = r.view(np.uint32).copy()
    u[np.isnan(r)] = QNAN
    return u.view(np.float32)


def nvfp4_ref(codes: np.ndarray, bscale_bits: np.ndarray, g: float, block: int = 16) -> np.ndarray:
    """(E2M1[code] x f32(bscale)) x gscale, block scale first (hardware.md §4)."""
    s = np.repeat(e4m3_to_f32(bscale_bits), block, axis=-1)
    return rngd_mul(rngd_mul(e2m1(codes), s), np.float32(g))


def mxfp4_ref(codes: np.ndarray, e_bits: np.ndarray, block: int = 32) -> np.ndarray:
    return rngd_mul(e2m1(codes), np.repeat(e8m0_to_f32(e_bits), block, axis=-1))


def pack(codes: np.ndarray) -> np.ndarray:
    """Checkpoint packing: two codes per byte, even index in the low nibble."""
    c = codes.astype(np.uint8)
    return (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    g, w = bits(got), bits(want)
    if not np.array_equal(g, w):
        i = np.argwhere(g != w)[0]
        raise AssertionError(f"{int((g != w).sum())} elements differ; first at {tuple(i)}: "
                             f"got {int(g[tuple(i)]):#x}, want {int(w[tuple(i)]):#x}")  # fmt: skip


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------

NVFP4 = """
func.func @dq(%w: memref<{r}x{c}xf4E2M1FN>, %s: memref<{r}x{nb}xf8E4M3FN>, %g: f32, %out: memref<{r}x{c}xf32>) {{
  %c = fetch.fetch %w {{map = affine_map<(o, p, e) -> (o, p * 32 + e)>}}
      : memref<{r}x{c}xf4E2M1FN> -> !fetch.stream<main, [{r}, {np}], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {{format = "nvfp4"}}
      : !fetch.stream<main, [{r}, {np}], [32], f4E2M1FN>, memref<{r}x{nb}xf8E4M3FN>, f32
      -> !fetch.stream<main, [{r}, {np}], [32], f32>
  rngd.commit %d, %out : !fetch.stream<main, [{r}, {np}], [32], f32>, memref<{r}x{c}xf32>
  func.return
}}
"""

MXFP4 = """
func.func @mx(%w: memref<{r}x{c}xf4E2M1FN>, %e: memref<{r}x{nb}xf8E8M0FNU>, %out: memref<{r}x{c}xf32>) {{
  %c = fetch.fetch %w {{map = affine_map<(o, p, e) -> (o, p * 64 + e)>}}
      : memref<{r}x{c}xf4E2M1FN> -> !fetch.stream<main, [{r}, {np}], [64], f4E2M1FN>
  %d = fetch.dequant %c, %e {{format = "mxfp4"}}
      : !fetch.stream<main, [{r}, {np}], [64], f4E2M1FN>, memref<{r}x{nb}xf8E8M0FNU>
      -> !fetch.stream<main, [{r}, {np}], [64], f32>
  rngd.commit %d, %out : !fetch.stream<main, [{r}, {np}], [64], f32>, memref<{r}x{c}xf32>
  func.return
}}
"""


def nvfp4_kernel(r: int, c: int, slices: int = 1) -> str:
    """NVFP4 decode of ``r`` x ``c`` (per slice, split by rows over ``slices``)."""
    text = NVFP4.format(r=r, c=c, nb=c // 16, np=c // 32)
    if slices == 1:
        return text
    text = text.replace(f"%w: memref<{r}x{c}xf4E2M1FN>", f"%w: memref<{r}x{c}xf4E2M1FN> {{rngd.slice_dim = 0 : i64}}")
    text = text.replace(f"%s: memref<{r}x{c // 16}xf8E4M3FN>", f"%s: memref<{r}x{c // 16}xf8E4M3FN> {{rngd.slice_dim = 0 : i64}}")
    text = text.replace(f"%out: memref<{r}x{c}xf32>)", f"%out: memref<{r}x{c}xf32> {{rngd.slice_dim = 0 : i64}})")
    return text.replace(") {\n  %c", f") attributes {{rngd.slices = {slices} : i64}} {{\n  %c", 1)


def mxfp4_kernel(r: int, c: int) -> str:
    return MXFP4.format(r=r, c=c, nb=c // 32, np=c // 64)


def special_e4m3(rng, shape) -> np.ndarray:
    """Block scales drawn from all 256 codes with the edge classes frequent:
    zeros, subnormals (0x01-0x07), NaN (0x7F/0xFF), the largest (0x7E)."""
    b = rng.integers(0, 256, shape, dtype=np.uint8)
    pick = rng.integers(0, 6, shape)
    b[pick == 0] = rng.choice(np.array([0x00, 0x80], np.uint8), (pick == 0).sum())
    b[pick == 1] = rng.integers(1, 8, (pick == 1).sum()) | rng.choice(np.array([0, 0x80]), (pick == 1).sum())
    b[pick == 2] = rng.choice(np.array([0x7F, 0xFF, 0x7E, 0xFE], np.uint8), (pick == 2).sum())
    return b


TENSOR_SCALES = [0.5, 1.0, -3.25, 1e-38, 1.5 * 2.0**-126, 2.0**-120, 1e-40, -1e-45, 0.0, -0.0, 3e38, 2.0**100,
                 float("inf"), float("-inf"), float("nan")]  # fmt: skip


@pytest.mark.parametrize("g", TENSOR_SCALES)
def test_nvfp4_random_with_edge_scales(g):
    rng = np.random.default_rng(1)
    r, c = 32, 256
    codes = rng.integers(0, 16, (r, c), dtype=np.uint8)
    s = special_e4m3(rng, (r, c // 16))
    out = fetchc.run(nvfp4_kernel(r, c), w=pack(codes), s=s, g=g)
    assert list(out) == ["out"]
    assert_bits(out["out"], nvfp4_ref(codes, s, g))


def test_nvfp4_every_scale_code_with_every_code():
    """All 256 block-scale codes x all 16 e2m1 codes, one block per scale."""
    scales = np.arange(256, dtype=np.uint8).reshape(16, 16)
    codes = np.tile(np.repeat(np.arange(16, dtype=np.uint8), 16), (16, 1))  # each block: one code repeated
    codes = np.concatenate([codes, (codes + 5) % 16], axis=1)  # (16, 512)
    scales = np.concatenate([scales, scales[:, ::-1]], axis=1)  # (16, 32)
    for g in (1.0, 2.0**-127, 7.0):
        out = fetchc.run(nvfp4_kernel(16, 512), w=codes.view(ml_dtypes.float4_e2m1fn), s=scales, g=g)
        assert_bits(out["out"], nvfp4_ref(codes, scales, g))


@pytest.mark.parametrize("seed", [0, 1])
def test_mxfp4_random_with_edge_exponents(seed):
    rng = np.random.default_rng(seed)
    r, c = 16, 512
    codes = rng.integers(0, 16, (r, c), dtype=np.uint8)
    e = rng.integers(0, 256, (r, c // 32), dtype=np.uint8)
    e[0, :8] = [0, 1, 2, 126, 127, 253, 254, 255]  # 2^-127 (reads as +0), subnormal products, overflow, NaN
    out = fetchc.run(mxfp4_kernel(r, c), w=pack(codes), e=e.view(ml_dtypes.float8_e8m0fnu))
    assert_bits(out["out"], mxfp4_ref(codes, e))


def test_mxfp4_zero_exponent_reads_as_plus_zero():
    codes = np.tile(np.arange(16, dtype=np.uint8), (1, 4))  # (1, 64): negative codes too
    out = fetchc.run(mxfp4_kernel(1, 64), w=codes, e=np.zeros((1, 2), np.uint8))
    want = np.where(codes & 8, np.uint32(0x80000000), np.uint32(0)).astype(np.uint32)  # E2M1 x (+0): signed zeros
    assert np.array_equal(out["out"].view(np.uint32), want)


def test_nvfp4_inputs_as_saved_files_round_trip(tmp_path):
    """ml_dtypes arrays through np.save / np.load come back as |V1 arrays."""
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 16, (8, 64), dtype=np.uint8)
    s = rng.integers(0, 0x7E, (8, 4), dtype=np.uint8)
    buf = io.BytesIO()
    np.save(buf, s.view(ml_dtypes.float8_e4m3fn))
    buf.seek(0)
    s_void = np.load(buf)
    assert s_void.dtype == np.dtype("V1")
    out = fetchc.run(nvfp4_kernel(8, 64), w=pack(codes), s=s_void, g=np.float32(0.75))
    assert_bits(out["out"], nvfp4_ref(codes, s, 0.75))


# --------------------------------------------------------------------------
# Every example
# --------------------------------------------------------------------------


def example(name: str) -> str:
    return (EXAMPLES / name).read_text()


def test_example_nvfp4_dequant_f32():
    rng = np.random.default_rng(10)
    codes = rng.integers(0, 16, (4096, 4096), dtype=np.uint8)
    s = special_e4m3(rng, (4096, 256))
    out = fetchc.run(example("nvfp4_dequant_f32.mlir"), codes=pack(codes), bscale=s, gscale=0.375)
    assert list(out) == ["out"]
    assert_bits(out["out"], nvfp4_ref(codes, s, 0.375))


def test_example_mxfp4_dequant_f32():
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 16, (4096, 4096), dtype=np.uint8)
    e = rng.integers(0, 256, (4096, 128), dtype=np.uint8)
    out = fetchc.run(example("mxfp4_dequant_f32.mlir"), codes=pack(codes), escale=e)
    assert list(out) == ["out"]
    assert_bits(out["out"], mxfp4_ref(codes, e))


def e5m2_to_bf16_table_entry(bits8: np.ndarray) -> np.ndarray:
    """seqbin.md TABLES: the bf16 bits of the value; NaN keys give the quiet
    NaN with the key's sign (0x7FC0 / 0xFFC0); infinities stay infinities."""
    v = bits8.view(ml_dtypes.float8_e5m2).astype(np.float32)
    b = (v.view(np.uint32) >> 16).astype(np.uint16)  # exact: e5m2 values fit bf16
    nan = np.isnan(v)
    b[nan] = np.where(bits8[nan] & 0x80, 0xFFC0, 0x7FC0)
    return b


def test_example_f8e5m2_to_bf16_activations():
    act = np.random.default_rng(12).integers(0, 256, (128, 4096), dtype=np.uint8)
    act[0, :256] = np.arange(256)
    out = fetchc.run(example("f8e5m2_to_bf16_activations.mlir"), act=act.view(ml_dtypes.float8_e5m2))
    assert_bits(out["out"], e5m2_to_bf16_table_entry(act).view(ml_dtypes.bfloat16))


def test_example_nvfp4_weight_decode_stotrf():
    codes = np.random.default_rng(13).integers(0, 16, (256, 512), dtype=np.uint8)
    out = fetchc.run(example("nvfp4_weight_decode_stotrf.mlir"), codes=pack(codes))
    assert list(out) == ["w8"]  # the returned TRF is not a tensor; w8 is committed
    want = e2m1(codes).astype(ml_dtypes.float8_e4m3fn)  # every e2m1 value is exact in e4m3
    assert_bits(out["w8"], want)


def test_example_tiling_read_both_kernels():
    m = np.random.default_rng(14).integers(0, 1 << 16, (256, 512), dtype=np.uint16)
    text = example("tiling_read.mlir")
    tile = m[128:192, 256:384]
    out = fetchc.run(text, entry="tile_map", m=m)
    assert_bits(out["out"], tile.view(ml_dtypes.bfloat16))
    out = fetchc.run(text, entry="@tile_strided", tile=tile.view(ml_dtypes.bfloat16))
    assert_bits(out["out"], tile.view(ml_dtypes.bfloat16))


def test_example_transpose_nchw_to_whcn():
    x = np.random.default_rng(15).integers(0, 1 << 16, (4, 3, 8, 8), dtype=np.uint16)
    out = fetchc.run(example("transpose_nchw_to_whcn.mlir"), x=x)
    assert_bits(out["y"], x.transpose(3, 2, 1, 0).view(ml_dtypes.bfloat16))  # y[w, h, c, n] = x[n, c, h, w]


def test_example_int8_zero_point_contract_warns_and_returns_nothing():
    """Partial run (ir.md §5): the kernel's only committed tensor depends on
    the contraction, so nothing is returned and a located warning at its
    commit names it and the programs to run with fetchc sim."""
    w = np.zeros((128, 256), np.int8)
    x = np.zeros((64, 256), np.int8)
    with pytest.warns(DiagnosticWarning) as caught:
        out = fetchc.run(example("int8_zero_point_contract.mlir"), w=w, x=x)
    assert out == {}
    (warning,) = [c.message for c in caught if isinstance(c.message, DiagnosticWarning)]
    diag = warning.diagnostic
    assert diag.severity == "warning"
    assert "'rngd.commit' op commits tensor 'acc', whose value depends on 'rngd.contract_outer'" in diag.message
    assert "fetchc sim" in diag.message and "('gemm_i8/0', 'gemm_i8/1')" in diag.message
    assert diag.loc is not None and diag.loc[1] == 49  # the commit's line
    assert diag.notes[0].loc is not None and diag.notes[0].loc[1] == 47  # the contract_outer's line


def test_example_gelu_f8e4m3_activations():
    """Every f8E4M3FN key (NaNs included) through the GeLU table and the
    bf16 -> f32 cast, against fnref (hardware.md §2.1b) and the §2.2a cast."""
    act = np.random.default_rng(14).integers(0, 256, (64, 1024), dtype=np.uint8)
    act[0, :256] = np.arange(256)
    out = fetchc.run(example("gelu_f8e4m3_activations.mlir"), act=act.view(ml_dtypes.float8_e4m3fn))
    bf = fnref.apply("gelu", fnref.key_values(act.view(ml_dtypes.float8_e4m3fn), "f8E4M3FN"))
    want = (bf.astype(np.uint32) << 16).view(np.float32)  # bf16 -> f32 is exact (no subnormal bf16 here)
    assert_bits(out["out"], want)
    assert out["out"].view(np.uint32)[0, 0x7F] == 0x7FC00000  # a NaN key: 0x7FC0, widened


def test_example_int8_silu_dequant():
    q = np.random.default_rng(15).integers(-128, 128, (128, 256), dtype=np.int8)
    q[0] = np.arange(-128, 128)
    out = fetchc.run(example("int8_silu_dequant.mlir"), q=q)
    want = fnref.apply("silu", fnref.key_values(q, "i8", 0.03125, -12))  # bf16 bits
    assert_bits(out["out"], want.view(ml_dtypes.bfloat16))  # fetchc.run gives bf16 as ml_dtypes
    assert out["out"][0, -12 + 128] == 0  # x = 0: +0


def test_every_example_is_covered():
    tested = {"nvfp4_dequant_f32", "mxfp4_dequant_f32", "f8e5m2_to_bf16_activations", "nvfp4_weight_decode_stotrf",
              "tiling_read", "transpose_nchw_to_whcn", "int8_zero_point_contract", "gelu_f8e4m3_activations",
              "int8_silu_dequant", "gemma_nvfp4_mlp_decode"}  # test_vrf_split.py runs the Gemma decode  # fmt: skip
    assert {p.stem for p in EXAMPLES.glob("*.mlir")} == tested


# --------------------------------------------------------------------------
# What run does with each rngd op, commits read back, constants
# --------------------------------------------------------------------------

COMMIT_THEN_READ = """
func.func @k(%codes: memref<8x64xf4E2M1FN>, %mid: memref<8x64xf8E4M3FN>, %out: memref<8x64xf32>) {
  %c = fetch.fetch %codes {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<8x64xf4E2M1FN> -> !fetch.stream<main, [8, 2], [32], f4E2M1FN>
  %d = fetch.table_lookup %c : !fetch.stream<main, [8, 2], [32], f4E2M1FN> -> !fetch.stream<main, [8, 2], [32], f8E4M3FN>
  rngd.commit %d, %mid : !fetch.stream<main, [8, 2], [32], f8E4M3FN>, memref<8x64xf8E4M3FN>
  %m = fetch.fetch %mid {map = affine_map<(r, p, e) -> (r, p * 8 + e)>}
      : memref<8x64xf8E4M3FN> -> !fetch.stream<main, [8, 8], [8], f8E4M3FN>
  %f = fetch.cast %m : !fetch.stream<main, [8, 8], [8], f8E4M3FN> -> !fetch.stream<main, [8, 8], [8], f32>
  %t = rngd.transpose %f : !fetch.stream<main, [8, 8], [8], f32> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %t, %out : !fetch.stream<main, [64], [8], f32>, memref<8x64xf32>
  func.return
}
"""


def test_commit_is_written_to_dm_for_a_later_program_and_transpose_is_a_reshape():
    """``rngd.transpose`` is computed as a row-major reshape, with a
    ``DiagnosticWarning`` at the op naming the tensor committed from it
    (ir.md §2: the IR fixes no permutation); the untransposed ``mid`` gets
    none."""
    from fetchc.diagnostics import DiagnosticWarning

    codes = np.random.default_rng(20).integers(0, 16, (8, 64), dtype=np.uint8)
    with pytest.warns(DiagnosticWarning) as caught:
        out = fetchc.run(COMMIT_THEN_READ, codes=codes)
    (w,) = caught
    d = w.message.diagnostic
    assert (d.severity, d.loc[1:]) == ("warning", (10, 8)), d
    assert d.message.startswith("'rngd.transpose' op has no specified permutation: fetchc run computes it as a row-major "
                                "reshape") and "so tensor 'out' may differ" in d.message, d.message
    assert sorted(out) == ["mid", "out"]
    want8 = e2m1(codes).astype(ml_dtypes.float8_e4m3fn)
    assert_bits(out["mid"], want8)
    assert_bits(out["out"], want8.astype(np.float32))  # exact widening; transpose = row-major reshape


def test_a_value_for_an_output_is_accepted_unused_with_a_warning():
    """``mid`` is written before any program reads it: a value given for it
    (as an embedding compiler passes the whole signature) is accepted with a
    warning at the argument and does not change the result."""
    from fetchc.diagnostics import DiagnosticWarning

    codes = np.random.default_rng(23).integers(0, 16, (8, 64), dtype=np.uint8)
    with pytest.warns(DiagnosticWarning) as caught:
        out = fetchc.run(COMMIT_THEN_READ, codes=codes, mid=np.full((8, 64), 0x38, np.uint8))
    notes = [w.message.diagnostic for w in caught if "'mid'" in str(w.message)]
    (d,) = notes
    assert d.severity == "warning" and d.loc is not None and d.loc[1:] == (2, 45), d  # at %mid
    assert "tensor 'mid' is written by @k before any program reads it" in d.message and "not used" in d.message
    want8 = e2m1(codes).astype(ml_dtypes.float8_e4m3fn)
    assert_bits(out["mid"], want8)


CONSTANT_SCALE = """
func.func @k(%w: memref<4x32xf4E2M1FN>, %s: memref<4x2xf8E4M3FN>, %out: memref<4x32xf32>) {
  %g = arith.constant 0.1 : f32
  %c = fetch.fetch %w {map = affine_map<(o, e) -> (o, e)>}
      : memref<4x32xf4E2M1FN> -> !fetch.stream<main, [4], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"}
      : !fetch.stream<main, [4], [32], f4E2M1FN>, memref<4x2xf8E4M3FN>, f32 -> !fetch.stream<main, [4], [32], f32>
  %x = rngd.switch %d : !fetch.stream<main, [4], [32], f32> -> !fetch.stream<main, [4], [32], f32>
  %y = rngd.collect %x : !fetch.stream<main, [4], [32], f32> -> !fetch.stream<main, [4], [32], f32>
  rngd.commit %y, %out : !fetch.stream<main, [4], [32], f32>, memref<4x32xf32>
  func.return
}
"""


def test_arith_constant_tensor_scale_and_pass_through_ops():
    rng = np.random.default_rng(21)
    codes = rng.integers(0, 16, (4, 32), dtype=np.uint8)
    s = rng.integers(0, 0x7F, (4, 2), dtype=np.uint8)
    out = fetchc.run(CONSTANT_SCALE, w=codes, s=s)
    assert_bits(out["out"], nvfp4_ref(codes, s, float(np.float32(0.1))))


def test_module_is_not_modified():
    from fetchc.frontend.context import make_context
    from fetchc.frontend.parsing import parse_module

    module = parse_module(make_context(), CONSTANT_SCALE, "k.mlir")
    before = str(module)
    fetchc.run(module, w=np.zeros((4, 32), np.uint8), s=np.zeros((4, 2), np.uint8))
    assert str(module) == before


def test_large_nvfp4_runs_on_threads_and_single_thread_alike():
    rng = np.random.default_rng(22)
    codes = rng.integers(0, 16, (512, 1024), dtype=np.uint8)
    s = special_e4m3(rng, (512, 64))
    a = run_kernel(nvfp4_kernel(8, 1024, 64), None, {"w": pack(codes), "s": s, "g": 1e-37}, threads=1)
    b = run_kernel(nvfp4_kernel(8, 1024, 64), None, {"w": pack(codes), "s": s, "g": 1e-37}, threads=3)
    want = nvfp4_ref(codes, s, 1e-37)
    assert_bits(a["out"], want)
    assert_bits(b["out"], want)


# --------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------

GOOD = {"w": np.zeros((4, 64), np.uint8), "s": np.zeros((4, 4), np.uint8), "g": 1.0}


@pytest.mark.parametrize(
    "change, expect",
    [
        ({"w": None}, r"missing: 'w' \(memref<4x128xf4E2M1FN>\)"),
        ({"extra": np.zeros(3)}, r"unknown: 'extra'; the kernel's inputs are w, s, g"),
        ({"out": np.zeros((4, 127), np.float32)}, r"tensor 'out' \(memref<4x128xf32>\): expected shape \(4, 128\)"),
        ({"w": np.zeros((4, 63), np.uint8)}, r"tensor 'w' \(memref<4x128xf4E2M1FN>\): expected shape \(4, 128\)"),
        ({"s": np.zeros((4, 8), np.float32)}, r"tensor 's' \(memref<4x8xf8E4M3FN>\).*got an array of shape \(4, 8\) and dtype float32"),
        ({"s": np.zeros((4, 8), np.float64)}, r"dtype float64"),
        ({"g": "half"}, r"scalar 'g' \(f32\) must be a number, got 'half'"),
        ({"g": np.zeros(2, np.float32)}, r"scalar 'g' \(f32\) needs one number"),
        ({"w": np.full((4, 128), 16, np.uint8)}, r"4-bit codes must lie in \[0, 15\]"),
    ],
)  # fmt: skip
def test_bad_inputs(change, expect):
    values = {"w": np.zeros((4, 64), np.uint8), "s": np.zeros((4, 8), np.uint8), "g": 1.0}
    for k, v in change.items():
        if v is None:
            values.pop(k)
        else:
            values[k] = v
    import warnings

    from fetchc.diagnostics import DiagnosticWarning

    with pytest.raises(InputError, match=expect), warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # 'out' is accepted, unused, with a warning
        fetchc.run(nvfp4_kernel(4, 128), **values)


def test_entry_errors():
    text = example("tiling_read.mlir")
    with pytest.raises(RunError, match=r"the input holds 2 kernels \(@tile_strided, @tile_map\): choose one"):
        fetchc.run(text, m=np.zeros((256, 512), np.uint16))
    with pytest.raises(RunError, match=r"no kernel named @nope; the input's kernels are: @tile_strided, @tile_map"):
        fetchc.run(text, entry="nope")
    helper = text + "\nfunc.func @helper() {\n  func.return\n}\n"
    with pytest.raises(RunError, match=r"@helper has no fetch.fetch, so it is not a kernel"):
        fetchc.run(helper, entry="helper")
    with pytest.raises(RunError, match="no kernel"):
        fetchc.run("func.func @f() {\n  func.return\n}\n")


def test_compile_errors_are_diagnostics():
    bad = nvfp4_kernel(4, 128).replace('"nvfp4"', '"nvfp5"')
    with pytest.raises(DiagnosticError):
        fetchc.run(bad, **GOOD)


def test_not_text_or_module():
    with pytest.raises(TypeError, match="MLIR text"):
        fetchc.run(b"bytes")


# --------------------------------------------------------------------------
# fetchc run on the command line
# --------------------------------------------------------------------------


def _cli(argv, capsys):
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.err


def test_cli_run_writes_the_npz(tmp_path, capsys):
    rng = np.random.default_rng(30)
    codes = rng.integers(0, 16, (4, 128), dtype=np.uint8)
    s = special_e4m3(rng, (4, 8))
    k = tmp_path / "k.mlir"
    k.write_text(nvfp4_kernel(4, 128))
    np.save(tmp_path / "w.npy", pack(codes))
    np.save(tmp_path / "s.npy", s.view(ml_dtypes.float8_e4m3fn))  # saved as |V1
    out = tmp_path / "out.npz"
    rc, err = _cli(["run", str(k), "--arg", f"w={tmp_path / 'w.npy'}", "--arg", f"s={tmp_path / 's.npy'}",
                    "--arg", "g=0x1.8p-3", "-o", str(out)], capsys)  # fmt: skip
    assert (rc, err) == (0, "")
    with np.load(out) as z:
        assert z.files == ["out"]
        assert_bits(z["out"], nvfp4_ref(codes, s, 0.1875))


@pytest.mark.parametrize(
    "args, expect",
    [
        (["--arg", "w=W", "--arg", "s=S"], "missing: 'g' (f32 scalar)"),
        (["--arg", "w=W", "--arg", "s=S", "--arg", "g=1", "--arg", "h=2"], "unknown: 'h'"),
        (["--arg", "w=W", "--arg", "w=W", "--arg", "s=S", "--arg", "g=1"], "'w' is given twice"),
        (["--arg", "w=S", "--arg", "s=S", "--arg", "g=1"], "tensor 'w' (memref<4x128xf4E2M1FN>): expected shape"),
        (["--arg", "w=BAD", "--arg", "s=S", "--arg", "g=1"], "is not an .npy file"),
        (["--arg", "w=MISSING", "--arg", "s=S", "--arg", "g=1"], "does not exist"),
        (["--arg", "w=W", "--arg", "s=S", "--arg", "g=one"], "scalar 'g' (f32) must be a number, got 'one'"),
        (["--arg", "w=W", "--arg", "s=S", "--arg", "g=1", "--entry", "zz"], "no kernel named @zz"),
        (["--arg", "w", "--arg", "s=S", "--arg", "g=1"], "expected NAME=FILE.npy or NAME=VALUE"),
    ],
)
def test_cli_run_bad_inputs_exit_1_and_write_nothing(tmp_path, capsys, args, expect):
    k = tmp_path / "k.mlir"
    k.write_text(nvfp4_kernel(4, 128))
    files = {"W": tmp_path / "w.npy", "S": tmp_path / "s.npy", "BAD": tmp_path / "bad.npy",
             "MISSING": tmp_path / "missing.npy"}  # fmt: skip
    np.save(files["W"], np.zeros((4, 64), np.uint8))
    np.save(files["S"], np.zeros((4, 8), np.uint8))
    files["BAD"].write_bytes(b"not numpy")
    args = [a.replace("=W", f"={files['W']}").replace("=S", f"={files['S']}").replace("=BAD", f"={files['BAD']}")
            .replace("=MISSING", f"={files['MISSING']}") for a in args]  # fmt: skip
    out = tmp_path / "out.npz"
    before = sorted(os.listdir(tmp_path))
    rc, err = _cli(["run", str(k), *args, "-o", str(out)], capsys)
    assert rc == 1
    assert expect in err and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path)) == before  # no output, no temporary file


def test_cli_run_compile_error_is_located_and_contract_outer_warns(tmp_path, capsys):
    k = tmp_path / "k.mlir"
    k.write_text(nvfp4_kernel(4, 128).replace('"nvfp4"', '"nvfp5"'))
    rc, err = _cli(["run", str(k), "-o", str(tmp_path / "o.npz")], capsys)
    assert rc == 1 and f"{k}:" in err and "error:" in err
    np.save(tmp_path / "w.npy", np.zeros((128, 256), np.int8))
    np.save(tmp_path / "x.npy", np.zeros((64, 256), np.int8))
    rc, err = _cli(["run", str(EXAMPLES / "int8_zero_point_contract.mlir"), "--arg", f"w={tmp_path / 'w.npy'}",
                    "--arg", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "o.npz")], capsys)  # fmt: skip
    assert rc == 0, err
    assert "int8_zero_point_contract.mlir:49:3: warning: 'rngd.commit' op commits tensor 'acc', whose value" in err
    assert "int8_zero_point_contract.mlir:47:8: note: 'rngd.contract_outer' is here" in err
    assert "computed none of the kernel's committed tensors" in err and "error:" not in err
    with np.load(tmp_path / "o.npz") as z:
        assert z.files == []


def test_cli_run_usage(capsys, tmp_path):
    rc, err = _cli(["run", "k.mlir"], capsys)  # no -o
    assert rc == 2 and "fetchc run" in err
    assert main(["run", "--help"]) == 0


def test_cli_run_progress_line_on_a_terminal(tmp_path):
    """A large program shows the simulator's progress line when stderr is a
    terminal (here a pty)."""
    pty = pytest.importorskip("pty")
    rng = np.random.default_rng(31)
    k = tmp_path / "k.mlir"
    k.write_text(nvfp4_kernel(16, 4096, 256))  # 16 Mi elements on 256 slices: long enough for the progress line
    np.save(tmp_path / "w.npy", rng.integers(0, 256, (4096, 2048), dtype=np.uint8))
    np.save(tmp_path / "s.npy", rng.integers(0, 0x7E, (4096, 256), dtype=np.uint8))
    master, slave = pty.openpty()
    cmd = [*FETCHC, "run", str(k), "--arg", f"w={tmp_path / 'w.npy'}",
           "--arg", f"s={tmp_path / 's.npy'}", "--arg", "g=1", "-o", str(tmp_path / "o.npz")]  # fmt: skip
    proc = subprocess.run(cmd, stderr=slave, stdout=subprocess.DEVNULL, timeout=300)
    os.close(slave)
    text = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        text += chunk
    os.close(master)
    assert proc.returncode == 0
    assert b"fetchc run: dq/0: 100%" in text


# --------------------------------------------------------------------------
# fetchc sim --arg and the stream shape
# --------------------------------------------------------------------------


def test_sim_arg_and_reshape(tmp_path, capsys):
    rng = np.random.default_rng(40)
    codes = rng.integers(0, 16, (4, 128), dtype=np.uint8)
    s = rng.integers(0, 256, (4, 8), dtype=np.uint8)
    k = tmp_path / "k.mlir"
    k.write_text(nvfp4_kernel(4, 128))
    binp = tmp_path / "k.bin"
    assert main([str(k), "-o", str(binp)]) == 0
    np.save(tmp_path / "w.npy", pack(codes))
    np.save(tmp_path / "s.npy", s)
    out = tmp_path / "o.npz"
    rc, err = _cli(["sim", str(binp), "--arg", f"w={tmp_path / 'w.npy'}", "--arg", f"s={tmp_path / 's.npy'}",
                    "-o", str(out)], capsys)  # fmt: skip
    assert (rc, err) == (0, "")
    with np.load(out) as z:
        assert z.files == ["dq/0", "dq/1"]
        assert z["dq/0"].shape == (4, 4, 32)  # time [4, 4], packet [32]
        assert_bits(z["dq/0"], e2m1(codes).reshape(4, 4, 32))  # lookup + cast: E2M1 exactly, in f32
        # the block scales, staged through the sub unit into the VRF (hardware.md §4a):
        # the same sequence as one per block of the codes' stream, time [4], packet [8]
        assert z["dq/1"].shape == (4, 8)
        assert_bits(z["dq/1"], e4m3_to_f32(s).reshape(4, 8))
    one = tmp_path / "one.npy"
    rc, err = _cli(["sim", str(binp), "--arg", f"s={tmp_path / 's.npy'}", "--program", "dq/1", "-o", str(one)], capsys)
    assert (rc, err) == (0, "")  # only the tensors the chosen program reads are needed
    assert_bits(np.load(one), e4m3_to_f32(s).reshape(4, 8))
    # --dm gives the same shapes: the image laid out by hand (codes at 0, scales at the next 64 bytes)
    image = np.zeros(256 + 32, np.uint8)
    image[:256] = pack(codes).reshape(-1)
    image[256:288] = s.reshape(-1)
    (tmp_path / "dm.bin").write_bytes(image.tobytes())
    rc, err = _cli(["sim", str(binp), "--dm", str(tmp_path / "dm.bin"), "-o", str(out)], capsys)
    assert (rc, err) == (0, "")
    with np.load(out) as z:
        assert z["dq/0"].shape == (4, 4, 32) and z["dq/1"].shape == (4, 8)
        assert_bits(z["dq/1"], e4m3_to_f32(s).reshape(4, 8))


@pytest.mark.parametrize(
    "args, expect, rc",
    [
        ([], "one of --dm IMAGE or --arg NAME=FILE.npy is required", 2),
        (["--dm", "DM", "--arg", "w=W"], "not both", 2),
        (["--arg", "w=W"], "missing: 's' (memref<4x8xf8E4M3FN>)", 1),
        (["--arg", "w=W", "--arg", "s=W"], "tensor 's' (memref<4x8xf8E4M3FN>): expected shape (4, 8)", 1),
        (["--arg", "w=W", "--arg", "s=S", "--arg", "q=S"], "unknown: 'q'", 1),
        (["--arg", "w=W", "--arg", "s=S", "--arg", "g=x"], "scalar 'g' (f32) must be a number", 1),
        (["--arg", "s=S", "--program", "nope"], "no program named 'nope'", 1),
    ],
)
def test_sim_arg_errors(tmp_path, capsys, args, expect, rc):
    k = tmp_path / "k.mlir"
    k.write_text(nvfp4_kernel(4, 128))
    binp = tmp_path / "k.bin"
    assert main([str(k), "-o", str(binp)]) == 0
    np.save(tmp_path / "w.npy", np.zeros((4, 64), np.uint8))
    np.save(tmp_path / "s.npy", np.zeros((4, 8), np.uint8))
    (tmp_path / "dm.bin").write_bytes(bytes(512))
    subst = {"W": tmp_path / "w.npy", "S": tmp_path / "s.npy", "DM": tmp_path / "dm.bin"}
    args = [a if a not in subst else str(subst[a]) for a in args]
    args = [a.replace("=W", f"={subst['W']}").replace("=S", f"={subst['S']}") for a in args]
    before = sorted(os.listdir(tmp_path))
    got_rc, err = _cli(["sim", str(binp), *args, "-o", str(tmp_path / "o.npz")], capsys)
    assert got_rc == rc and expect in err and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path)) == before


def test_sim_arg_needs_a_manifest(tmp_path, capsys):
    from fetchc.seqbin import SeqBin, read, write

    k = tmp_path / "k.mlir"
    k.write_text(nvfp4_kernel(4, 128))
    binp = tmp_path / "k.bin"
    assert main([str(k), "-o", str(binp)]) == 0
    sb = read(binp.read_bytes())
    (tmp_path / "old.bin").write_bytes(write(SeqBin(sb.tables, sb.programs)))  # version 1.0, no MANIFEST
    np.save(tmp_path / "s.npy", np.zeros((4, 8), np.uint8))
    rc, err = _cli(["sim", str(tmp_path / "old.bin"), "--arg", f"s={tmp_path / 's.npy'}", "-o",
                    str(tmp_path / "o.npz")], capsys)  # fmt: skip
    assert rc == 1 and "has no MANIFEST" in err and "use --dm" in err
    (tmp_path / "dm.bin").write_bytes(bytes(512))
    rc, err = _cli(["sim", str(tmp_path / "old.bin"), "--dm", str(tmp_path / "dm.bin"), "-o",
                    str(tmp_path / "o.npz")], capsys)  # fmt: skip
    assert rc == 0
    with np.load(tmp_path / "o.npz") as z:
        assert z["dq/0"].shape == (16, 32)  # no MANIFEST: (packets, packet_size)


def test_sim_images_scratch_tensors_start_as_zeros_and_are_never_given():
    import dataclasses

    from fetchc.golden.run import sim_images
    from fetchc.seqbin import Tensor

    result = fetchc.compile(nvfp4_kernel(4, 128))
    sb = result.seqbin
    assert sb.manifest is not None
    (kernel,) = sb.manifest.kernels
    scratch = Tensor(None, "tmp", kernel.tensors[0].dtype, (4, 128), (128, 1), 0, 4096, 256, False, False, True)
    kernel = dataclasses.replace(kernel, tensors=kernel.tensors + (scratch,))
    sb = dataclasses.replace(sb, manifest=dataclasses.replace(sb.manifest, kernels=(kernel,)))
    w = np.full((4, 64), 0x21, np.uint8)
    s = np.full((4, 8), 0x38, np.uint8)
    ((_, images),) = sim_images(sb, {"w": w, "s": s})
    assert images.shape == (1, 4096 + 256)  # one slice's DM image
    image = images[0]
    assert not image[4096:].any()
    assert (image[:256] == 0x21).all()
    with pytest.raises(InputError, match="'tmp' is a scratch buffer fetchc created"):
        sim_images(sb, {"w": w, "s": s, "tmp": np.zeros((4, 128), np.uint8)})


def test_write_npz_names_are_data(tmp_path):
    from fetchc.npyio import write_npz

    arrays = {"file": np.arange(3), "allow_pickle": np.ones(2, np.float32), "a/b": np.zeros((2, 2), np.uint16)}
    with open(tmp_path / "x.npz", "wb") as f:
        write_npz(f, arrays)
    with np.load(tmp_path / "x.npz") as z:
        assert z.files == list(arrays)
        for k, v in arrays.items():
            assert np.array_equal(z[k], v) and z[k].dtype == v.dtype


def test_reference_self_check():
    """The reference's own rules on hand-picked cases (hardware.md §2.2a)."""
    one = np.float32(1.0)
    assert rngd_mul(np.float32(2.0**-130), one).view(np.uint32) == 0  # subnormal operand reads as zero
    assert rngd_mul(np.float32(-(2.0**-63)), np.float32(2.0**-64)).view(np.uint32) == 0x80000000  # product flushed
    assert rngd_mul(np.float32(2.0**-63), np.float32(2.0**-63)).view(np.uint32) == 0x00800000  # 2^-126 stays
    assert rngd_mul(np.float32(np.inf), np.float32(0.0)).view(np.uint32) == 0x7FC00000
    assert rngd_mul(np.float32(3e38), np.float32(2.0)) == np.inf
    assert e8m0_to_f32(np.array([0], np.uint8)).view(np.uint32)[0] == 0x00400000  # 2^-127, subnormal
    assert math.isnan(e4m3_to_f32(np.array([0xFF], np.uint8))[0])


def test_simulate_program_into_a_given_array():
    from fetchc.golden.sim import SimError, simulate_program
    from fetchc.seqbin import read

    codes = np.random.default_rng(50).integers(0, 16, (4, 128), dtype=np.uint8)
    sb = read(fetchc.compile(nvfp4_kernel(4, 128)).seq_bin)
    image = np.zeros(512, np.uint8)
    image[:256] = pack(codes).reshape(-1)
    buf = np.full(512, np.nan, np.float32)
    got = simulate_program(sb.programs[0], sb.tables, image, out=buf)
    assert np.shares_memory(got, buf) and got.shape == (16, 32)
    assert_bits(buf.reshape(4, 128), e2m1(codes))
    for bad in (np.zeros(511, np.float32), np.zeros(512, np.float64), np.zeros((512, 2), np.float32)[:, 0]):
        with pytest.raises(SimError, match="out= must be"):
            simulate_program(sb.programs[0], sb.tables, image, out=bad)


ROUTED = """
func.func @k(%w: memref<8x64xf4E2M1FN>, %o: memref<8x64xf32>) {
  %s = fetch.fetch %w {map = affine_map<(r, p, e) -> (r, p * 32 + e)>} : memref<8x64xf4E2M1FN> -> !fetch.stream<sub, [8, 2], [32], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<sub, [8, 2], [32], f4E2M1FN> -> !fetch.stream<sub, [8, 2], [32], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [8, 2], [32], f32>, memref<8x64xf32>
  func.return
}
"""


def test_scratch_buffer_of_a_routed_kernel():
    """fetch-route-sub-decode decodes through a compiler-owned scratch
    buffer (main decode, commit, sub fetch): it starts as zeros, is written
    into DM by the commit so the later program reads it, is not returned and
    is never an input."""
    codes = np.random.default_rng(60).integers(0, 16, (8, 64), dtype=np.uint8)
    sb = fetchc.compile(ROUTED).seqbin
    assert sb.manifest is not None and [t.name for t in sb.manifest.kernels[0].tensors if t.scratch] == ["scratch0"]
    out = fetchc.run(ROUTED, w=pack(codes))
    assert list(out) == ["o"]
    assert_bits(out["o"], e2m1(codes))  # e2m1 -> f8E4M3FN -> f32: exact
    with pytest.raises(InputError, match="'scratch0' is a scratch buffer fetchc created"):
        fetchc.run(ROUTED, w=pack(codes), scratch0=np.zeros((8, 64), np.uint8))


def test_run_without_commit_warns(tmp_path):
    """`fetchc run` on a kernel that commits nothing (it only stages a TRF)
    succeeds with an empty .npz and says so on stderr."""
    import subprocess
    import sys

    import numpy as np

    k = tmp_path / "trf.mlir"
    k.write_text(
        "func.func @stage(%w: memref<64x32xi8>) -> !rngd.trf<i8> {\n"
        "  %s = fetch.fetch %w : memref<64x32xi8> -> !fetch.stream<sub, [64], [32], i8>\n"
        "  %t = rngd.to_trf %s : !fetch.stream<sub, [64], [32], i8> -> !rngd.trf<i8>\n"
        "  func.return %t : !rngd.trf<i8>\n"
        "}\n"
    )
    np.save(tmp_path / "w.npy", np.zeros((64, 32), np.int8))
    out = tmp_path / "o.npz"
    r = subprocess.run([*FETCHC, "run", str(k), "--arg", f"w={tmp_path / 'w.npy'}",
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "warning: the kernel commits no tensor" in r.stderr
    assert list(np.load(out)) == []


def test_sim_warns_when_a_program_reads_a_scratch_buffer(tmp_path):
    """`fetchc sim --arg` on a routed kernel: the staging program reads the
    scratch buffer the decode program writes, which sim starts at zero; it
    says so, for that program only."""
    import subprocess
    import sys

    import numpy as np

    k = tmp_path / "stage.mlir"
    k.write_text(
        "func.func @stage(%codes: memref<8x64xf4E2M1FN>) -> !rngd.trf<f8E4M3FN> {\n"
        "  %c = fetch.fetch %codes : memref<8x64xf4E2M1FN> -> !fetch.stream<sub, [8], [64], f4E2M1FN>\n"
        "  %d = fetch.convert %c : !fetch.stream<sub, [8], [64], f4E2M1FN> -> !fetch.stream<sub, [8], [64], f8E4M3FN>\n"
        "  %t = rngd.to_trf %d : !fetch.stream<sub, [8], [64], f8E4M3FN> -> !rngd.trf<f8E4M3FN>\n"
        "  func.return %t : !rngd.trf<f8E4M3FN>\n"
        "}\n"
    )
    cli = list(FETCHC)
    assert subprocess.run([*cli, str(k), "-o", str(tmp_path / "s.bin")]).returncode == 0
    np.save(tmp_path / "c.npy", np.ones((8, 64), np.uint8))
    base = [*cli, "sim", str(tmp_path / "s.bin"), "--arg", f"codes={tmp_path / 'c.npy'}"]
    r = subprocess.run([*base, "-o", str(tmp_path / "all.npz")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("warning: program stage/1 reads scratch buffer scratch0") == 1, r.stderr
    r = subprocess.run([*base, "--program", "stage/0", "-o", str(tmp_path / "p0.npy")], capture_output=True, text=True)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr


# --------------------------------------------------------------------------
# The Python API: arguments that are no inputs, the mapping form, typed results
# --------------------------------------------------------------------------

PADDED = """
func.func @pad(%x: memref<4x8xbf16>, %pad: memref<64xi8>, %out: memref<4x8xbf16>, %o32: memref<4x8xf32>) {
  %s = fetch.fetch %x : memref<4x8xbf16> -> !fetch.stream<main, [4], [8], bf16>
  rngd.commit %s, %out : !fetch.stream<main, [4], [8], bf16>, memref<4x8xbf16>
  %t = fetch.fetch %x : memref<4x8xbf16> -> !fetch.stream<main, [4], [8], bf16>
  %f = fetch.cast %t : !fetch.stream<main, [4], [8], bf16> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %f, %o32 : !fetch.stream<main, [4], [8], f32>, memref<4x8xf32>
  func.return
}
"""
BF16_BITS = np.array([[0x3F80, 0xC000, 0x0001, 0x8001, 0x7F80, 0xFF80, 0x7FC1, 0xFFC0]] * 4, np.uint16)


def test_an_argument_no_program_reads_is_accepted_with_a_warning():
    """``pad`` is in the signature but no program reads it: accepted (its
    shape and type still checked), a located warning, the result unchanged."""
    from fetchc.diagnostics import DiagnosticWarning

    with pytest.warns(DiagnosticWarning, match=r"tensor 'pad' is not read by any program of @pad: the value given "
                      r"for it is not used") as caught:
        out = fetchc.run(PADDED, x=BF16_BITS, pad=np.zeros(64, np.int8))
    (d,) = [w.message.diagnostic for w in caught]
    assert d.loc is not None and d.loc[1:] == (2, 38), d  # at %pad
    assert_bits(out["out"], BF16_BITS.view(ml_dtypes.bfloat16))
    with pytest.raises(InputError, match=r"tensor 'pad' \(memref<64xi8>\): expected shape \(64,\)"), pytest.warns(
        DiagnosticWarning, match="'pad' is not read"
    ):
        fetchc.run(PADDED, x=BF16_BITS, pad=np.zeros(63, np.int8))


def test_bf16_and_8_bit_float_results_are_ml_dtypes_with_the_raw_bits_of_the_cli(tmp_path):
    """From Python, ``bf16`` (and 8-bit float) results are ``ml_dtypes``
    arrays; their bits are exactly the raw ``uint16`` the command line writes
    to ``.npz``.  f32 results stay float32 (the RNGD cast: subnormals flush,
    NaN canonical, checked here independently)."""
    out = fetchc.run(PADDED, x=BF16_BITS)
    assert out["out"].dtype == ml_dtypes.bfloat16 and out["o32"].dtype == np.float32
    src = tmp_path / "pad.mlir"
    src.write_text(PADDED)
    np.save(tmp_path / "x.npy", BF16_BITS)
    assert main(["run", str(src), "--arg", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "o.npz"), "-q"]) == 0
    raw = np.load(tmp_path / "o.npz")
    assert raw["out"].dtype == np.uint16
    assert np.array_equal(out["out"].view(np.uint16), raw["out"]) and np.array_equal(raw["out"], BF16_BITS)
    want = (BF16_BITS.astype(np.uint32) << 16)
    want[(BF16_BITS & 0x7F80) == 0] &= 0x80000000  # subnormal -> zero of its sign
    want[((BF16_BITS & 0x7F80) == 0x7F80) & ((BF16_BITS & 0x7F) != 0)] = 0x7FC00000  # NaN -> canonical
    assert np.array_equal(out["o32"].view(np.uint32), want)


def test_inputs_mapping_takes_any_name_and_entry_must_be_a_name():
    """``inputs={...}`` names a tensor ``entry`` (or ``inputs``); an array
    given as ``entry=`` is a TypeError that says so; a name given both ways
    is an error."""
    text = PADDED.replace("%x", "%entry").replace("%pad", "%inputs")
    out = fetchc.run(text, inputs={"entry": BF16_BITS})
    assert np.array_equal(out["out"].view(np.uint16), BF16_BITS)
    out2 = fetchc.run(text, "pad", {"entry": BF16_BITS})
    assert np.array_equal(out2["o32"].view(np.uint32), out["o32"].view(np.uint32))
    with pytest.raises(TypeError, match=r"entry is the kernel's function name \(a str\), not ndarray; a tensor named "
                       r"'entry' is given as inputs=\{'entry': \.\.\.\}"):
        fetchc.run(text, entry=BF16_BITS)
    with pytest.raises(TypeError, match=r"inputs is a mapping"):
        fetchc.run(text, inputs=BF16_BITS)
    with pytest.raises(InputError, match=r"given twice \(in inputs= and as a keyword argument\): 'x'"):
        fetchc.run(PADDED, inputs={"x": BF16_BITS}, x=BF16_BITS)


def test_cli_lists_each_written_tensor_unless_quiet(tmp_path, capsys):
    src = tmp_path / "pad.mlir"
    src.write_text(PADDED)
    np.save(tmp_path / "x.npy", BF16_BITS)
    argv = ["run", str(src), "--arg", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "o.npz")]
    assert main(argv) == 0
    got = capsys.readouterr()
    o = str(tmp_path / "o.npz")
    assert got.out.splitlines() == [f"{o}: out (4, 8) uint16 (bf16 bits)", f"{o}: o32 (4, 8) float32"], got
    assert got.err == ""
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().out == ""


TWO_KERNELS = """
func.func @k1(%a: memref<64x16xbf16>, %o: memref<64x16xf32>) {
  %s = fetch.fetch %a : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  %f = fetch.cast %s : !fetch.stream<main, [64], [16], bf16> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %f, %o : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  func.return
}
func.func @k2(%a: memref<64x16xi8>, %o: memref<64x16xi32>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  %f = fetch.cast %s : !fetch.stream<main, [64], [16], i8> -> !fetch.stream<main, [64], [16], i32>
  rngd.commit %f, %o : !fetch.stream<main, [64], [16], i32>, memref<64x16xi32>
  func.return
}
"""


def test_sim_arg_shared_by_two_kernels_of_different_types_is_ambiguous(tmp_path, capsys):
    """``fetchc sim --arg a=...`` where @k1's ``a`` is bf16 and @k2's is i8:
    an error saying the name is ambiguous and how to pick a kernel (not a
    dtype error against the other kernel's ``a``); with ``--program`` it
    runs (i8 -> i32 sign-extends, checked here)."""
    src = tmp_path / "two.mlir"
    src.write_text(TWO_KERNELS)
    assert main([str(src), "-o", str(tmp_path / "two.bin")]) == 0
    a = np.arange(-512, 512, dtype=np.int64).astype(np.int8).reshape(64, 16)
    np.save(tmp_path / "a.npy", a)
    argv = ["sim", str(tmp_path / "two.bin"), "--arg", f"a={tmp_path / 'a.npy'}"]
    assert main([*argv, "-o", str(tmp_path / "o.npz")]) == 1
    err = capsys.readouterr().err
    assert err == (
        "error: 'a' is ambiguous: kernels @k1 (memref<64x16xbf16>), @k2 (memref<64x16xi8>) each have an argument of "
        "that name; run the programs of one kernel, with --program k1/0 or --program k2/0 (one program at a time), so "
        "that 'a' names one tensor\n"
    ), err
    assert not (tmp_path / "o.npz").exists()
    assert main([*argv, "--program", "k2/0", "-o", str(tmp_path / "o.npy")]) == 0
    assert np.array_equal(np.load(tmp_path / "o.npy"), a.astype(np.int32))


# --------------------------------------------------------------------------
# Aliased inputs (ir.md §2a: explicit placements may be views of one buffer)
# --------------------------------------------------------------------------

ALIAS = """
func.func @k(%a: memref<64x16xbf16> {rngd.dm_base = 0 : i64}, %b: memref<64x16xbf16> {rngd.dm_base = BBASE : i64},
             %o: memref<64x16xf32>, %p: memref<64x16xf32>) {
  %s = fetch.fetch %a : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  %f = fetch.cast %s : !fetch.stream<main, [64], [16], bf16> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %f, %o : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  %s2 = fetch.fetch %b : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  %f2 = fetch.cast %s2 : !fetch.stream<main, [64], [16], bf16> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %f2, %p : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  func.return
}
"""


def _bf16(v) -> np.ndarray:
    return np.asarray(v, np.float32).astype(ml_dtypes.bfloat16)


def test_run_aliased_inputs_that_differ_are_an_error():
    """Two inputs placed at the same address, given 1.0 and 2.0: fetchc run
    returned o = p = 2.0 (the later tensor overwrote the earlier one) and
    exit 0.  Now an error naming both and the bytes they share."""
    a, b = _bf16(np.full((64, 16), 1.0)), _bf16(np.full((64, 16), 2.0))
    with pytest.raises(InputError) as e:
        fetchc.run(ALIAS.replace("BBASE", "0"), a=a, b=b)
    assert str(e.value) == (
        "tensors 'a' and 'b' share DM bytes [0, 2048) (their placements alias: views of one buffer), but the values "
        "given for them differ there: DM byte 0 is 0x80 in 'a' and 0x00 in 'b'; give values that agree on the "
        "shared bytes"
    )  # bf16 1.0 = 0x3F80, 2.0 = 0x4000, little-endian


def test_run_aliased_inputs_that_agree_run():
    """Half-overlapping views (b starts at a's row 32) given agreeing values:
    each program reads its own view, a cast bf16 -> f32 (exact)."""
    rng = np.random.default_rng(44)
    whole = _bf16(rng.standard_normal((96, 16)))  # the buffer: a is rows 0-63, b rows 32-95
    res = fetchc.run(ALIAS.replace("BBASE", str(32 * 16 * 2)), a=whole[:64], b=whole[32:])
    assert np.array_equal(res["o"].view(np.uint32), whole[:64].astype(np.float32).view(np.uint32))
    assert np.array_equal(res["p"].view(np.uint32), whole[32:].astype(np.float32).view(np.uint32))
    b = whole[32:].copy()
    b[31, 15] = _bf16(7.0)  # bytes 2046-2047 of b = DM bytes 3070-3071, inside a's rows 32-63
    with pytest.raises(InputError, match=r"tensors 'a' and 'b' share DM bytes \[1024, 2048\) .* DM byte 2046 is"):
        fetchc.run(ALIAS.replace("BBASE", str(32 * 16 * 2)), a=whole[:64], b=b)


def test_cli_run_and_sim_refuse_aliased_inputs_that_differ(tmp_path, capsys):
    k = tmp_path / "alias.mlir"
    k.write_text(ALIAS.replace("BBASE", "0"))
    np.save(tmp_path / "A.npy", _bf16(np.full((64, 16), 1.0)).view(np.uint16))
    np.save(tmp_path / "B.npy", _bf16(np.full((64, 16), 2.0)).view(np.uint16))
    args = ["--arg", f"a={tmp_path / 'A.npy'}", "--arg", f"b={tmp_path / 'B.npy'}"]
    want = "error: tensors 'a' and 'b' share DM bytes [0, 2048)"
    out = tmp_path / "al.npz"
    rc, err = _cli(["run", str(k), *args, "-o", str(out)], capsys)
    assert rc == 1 and err.startswith(want) and err.count("\n") == 1, err
    assert not out.exists()
    assert main([str(k), "-o", str(tmp_path / "al.bin")]) == 0
    rc, err = _cli(["sim", str(tmp_path / "al.bin"), *args, "-o", str(out)], capsys)
    assert rc == 1 and err.startswith(want), err
    assert not out.exists()
