"""The NVFP4 split as the best RNGD kernels write it (issue 25 items 1, 2, 7):
block scales staged once through the sub Fetch Unit into the VRF, bf16
results through the Cast Engine.

* The Gemma-style MLP decode (``examples/gemma_nvfp4_mlp_decode.mlir``, four
  rows of 3840 NVFP4 codes per slice, 256 slices) runs bit-exact against an
  independent reference written here (numpy + ml_dtypes: the E2M1 ladder by
  hand, e4m3 scales, f32 products with RNGD's flush-to-zero and NaN rules,
  round to nearest even to bf16 with FTZ and ``0x7FC0``), NaN bits compared,
  with scales that give zeros, subnormal products, NaNs and overflow.
* The hand-written lockstep and staged forms give the same bits.
* hardware.md §6 computed here from the compiled ``Program`` records: the
  automatic split costs no more than the hand-written staged form, no main
  program reads the block scales, and the kernel costs at most 0.8 × the
  lockstep split (2400 → 1920 cycles per slice).
* The pieces: VRF block scales in stream order and the Cast Engine on their
  own (interpreter and ``run`` against the reference), the fallback's remark
  and ``rngd.remarks``, :func:`repacketise`, the VRF budget at the boundary.

Cost: about 1.5 CPU-seconds (each full-size ``fetchc.run`` is ~0.1 s).
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fetchc
from fetchc.diagnostics import DiagnosticError
from fetchc.driver import parse_pipeline, run_pipeline
from fetchc.frontend.context import shared_context
from fetchc.frontend.parsing import parse_module
from fetchc.golden.interp import interpret
from fetchc.passes.split_scaling import REMARKS_ATTR, repacketise

REPO = Path(__file__).resolve().parents[2]
FORMS = {
    "auto": "gemma_nvfp4_mlp_decode",
    "lockstep": "by_hand/gemma_nvfp4_mlp_decode_lockstep",
    "staged": "by_hand/gemma_nvfp4_mlp_decode_staged",
}
ROWS, COLS, SLICES = 4, 3840, 256


def _text(form: str) -> str:
    return (REPO / "examples" / f"{FORMS[form]}.mlir").read_text()


# --------------------------------------------------------------------------
# The independent reference (hardware.md §2.2a, §4, §2.6)
# --------------------------------------------------------------------------

E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)
QNAN32 = np.uint32(0x7FC00000)


def _ftz_nan(x: np.ndarray) -> np.ndarray:
    """RNGD's f32 results: a subnormal becomes a zero of its sign, every NaN
    is 0x7FC00000."""
    u = x.view(np.uint32).copy()
    mag = u & np.uint32(0x7FFFFFFF)
    u[mag < 0x00800000] &= np.uint32(0x80000000)
    u[mag > 0x7F800000] = QNAN32
    return u.view(np.float32)


def reference_bf16_bits(codes: np.ndarray, bscale: np.ndarray, g: float) -> np.ndarray:
    """``bf16((E2M1[code] × f32(bscale)) × g)`` as uint16 bits, RNGD's way.
    ``codes``: uint8 0-15, (rows, cols); ``bscale``: uint8 e4m3 bits, (rows,
    cols / 16)."""
    mag = E2M1[codes & 7]
    e = np.where(codes & 8, -mag, mag).astype(np.float32)  # code 8 is -0.0
    s = bscale.view(ml_dtypes.float8_e4m3fn).astype(np.float32)  # exact; 0x7F / 0xFF are NaN
    s = np.repeat(s, 16, axis=1)
    g32 = np.float32(g)
    if 0 < abs(g32) < np.float32(2.0**-126):  # a subnormal operand reads as a zero of its sign
        g32 = np.float32(np.copysign(0.0, g32))
    with np.errstate(all="ignore"):
        p1 = _ftz_nan(e * s)  # exact: a 3-bit by 4-bit significand product
        p2 = _ftz_nan(p1 * g32)  # IEEE round to nearest even, then RNGD's rules
    u = p2.view(np.uint32)
    # f32 -> bf16: round to nearest even on the bits (overflow carries into inf).
    r = ((u + np.uint32(0x7FFF) + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[(u & 0x7FFFFFFF) > 0x7F800000] = 0x7FC0
    return r


def test_reference_spot_values():
    # The reference's own rules on hand-picked values (hardware.md §2.2a, §4).
    codes = np.array([[1, 9, 7, 15] + [0] * 12], dtype=np.uint8)
    want = {0x38: [0.5, -0.5, 6.0, -6.0]}  # bscale 1.0
    got = reference_bf16_bits(codes, np.array([[0x38]], np.uint8), 1.0)
    assert got[0, :4].view(ml_dtypes.bfloat16).astype(np.float32).tolist() == want[0x38]
    assert reference_bf16_bits(codes, np.array([[0x7F]], np.uint8), 1.0)[0, 0] == 0x7FC0  # NaN scale
    assert reference_bf16_bits(codes, np.array([[0x38]], np.uint8), 2.0**-127)[0, 1] == 0x8000  # subnormal g: -0
    assert reference_bf16_bits(codes, np.array([[0x38]], np.uint8), 2.0**-126)[0, 0] == 0x0000  # 0.5 * 2^-126 flushes
    assert reference_bf16_bits(codes, np.array([[0x7E]], np.uint8), 3.0e38)[0, 2] == 0x7F80  # 448 * 6 * 3e38: +inf


# --------------------------------------------------------------------------
# Inputs that exercise every rule
# --------------------------------------------------------------------------


def _inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 16, (ROWS * SLICES, COLS), dtype=np.uint8)
    bscale = rng.integers(0, 256, (ROWS * SLICES, COLS // 16), dtype=np.uint8)
    # every e4m3 code at least once: zeros 0x00/0x80, subnormals 0x01-0x07,
    # NaNs 0x7F/0xFF, the largest 0x7E/0xFE (448)
    bscale[0, :] = np.arange(COLS // 16, dtype=np.uint8)
    bscale[1, :16] = np.arange(240, 256, dtype=np.uint8)
    return codes, bscale


G_SCALES = [0.37, 2.0**-120, 3.0e35, 2.0**-127]
"""Tensor scales: ordinary; subnormal products (flushed); large products
(overflow to inf in f32, or in the bf16 rounding); a subnormal scale (reads
as zero)."""


@pytest.fixture(scope="module")
def inputs() -> tuple[np.ndarray, np.ndarray]:
    return _inputs()


@pytest.fixture(scope="module")
def compiled() -> dict[str, fetchc.CompileResult]:
    return {form: fetchc.compile(_text(form), filename=f"{FORMS[form]}.mlir") for form in FORMS}


@pytest.mark.parametrize("g", G_SCALES)
def test_gemma_decode_bit_exact(inputs, g):
    codes, bscale = inputs
    out = fetchc.run(_text("auto"), codes=codes, bscale=bscale, gscale=g)["w"]
    assert out.dtype == ml_dtypes.bfloat16 and out.shape == (ROWS * SLICES, COLS)
    want = reference_bf16_bits(codes, bscale, g)
    got = out.view(np.uint16)
    bad = np.flatnonzero(got != want)
    assert not bad.size, f"{bad.size} elements differ; first at {np.unravel_index(bad[0], got.shape)}"
    # The inputs reach every rule: NaN, zeros of both signs, infinities.
    assert (want == 0x7FC0).any() and (want == 0x8000).any() and (want == 0).any()
    if g == 3.0e35:
        assert (want == 0x7F80).any() and (want == 0xFF80).any()
    if g == 2.0**-120:
        # subnormal f32 products flushed: nonzero operands whose product is a zero
        assert ((want & 0x7FFF) == 0)[(codes & 7) > 0].any()


def test_three_forms_same_bits(inputs):
    codes, bscale = inputs
    outs = {f: fetchc.run(_text(f), codes=codes, bscale=bscale, gscale=0.37)["w"].view(np.uint16) for f in FORMS}
    assert np.array_equal(outs["auto"], outs["lockstep"]) and np.array_equal(outs["auto"], outs["staged"])


# --------------------------------------------------------------------------
# hardware.md §6, computed here from the compiled programs
# --------------------------------------------------------------------------


def _cost(result: fetchc.CompileResult) -> dict:
    """Per program: reads = Π time × words_per_packet, flits = Π time ×
    flit_count, cycles = max of the two; the kernel: max(Σ main, Σ sub)."""
    main = sub = 0
    progs = []
    for p in result.programs:
        packets = int(np.prod(p.limits)) // p.packet_size
        reads, flits = packets * p.words_per_packet, packets * p.flit_count
        cycles = max(reads, flits)
        progs.append((p.unit, reads, cycles))
        if p.unit == 0:
            main += cycles
        else:
            sub += cycles
    return {"kernel": max(main, sub), "main": main, "sub": sub, "programs": progs}


def _scale_programs(result: fetchc.CompileResult) -> list:
    (k,) = result.seqbin.manifest.kernels
    return [result.programs[kp.index] for kp in k.programs if k.tensors[kp.tensor].name == "bscale"]


def test_split_cost_targets(compiled):
    auto, lock, staged = (_cost(compiled[f]) for f in ("auto", "lockstep", "staged"))
    assert lock["kernel"] == 2400 and lock["main"] == 2400  # 1920 codes + 480 lockstep scale reads
    assert auto["kernel"] <= staged["kernel"]  # no worse than the hand-written staged form
    assert auto["kernel"] <= 0.8 * lock["kernel"]  # 2400 -> 1920
    assert {**auto, "programs": sorted(auto["programs"])} == {**staged, "programs": sorted(staged["programs"])}
    # The scales never touch the main Fetch Unit: 120 sub reads of 8 bytes.
    (scales,) = _scale_programs(compiled["auto"])
    assert scales.unit == 1 and scales.fetch_size == 8
    assert int(np.prod(scales.limits)) // scales.packet_size * scales.words_per_packet == 120
    (today,) = _scale_programs(compiled["lockstep"])
    assert today.unit == 0 and int(np.prod(today.limits)) // today.packet_size * today.words_per_packet == 480


# --------------------------------------------------------------------------
# VRF block scales and the Cast Engine, small
# --------------------------------------------------------------------------

SMALL = """
func.func @k(%x: memref<8x32xf32>, %s: memref<16xf32>, %o: memref<8x32xbf16>) {
  %a = fetch.fetch %s {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<16xf32> -> !fetch.stream<sub, [2], [8], f32>
  %v = rngd.to_vrf %a : !fetch.stream<sub, [2], [8], f32> -> !rngd.vrf<[2, 8], f32>
  %f = fetch.fetch %x : memref<8x32xf32> -> !fetch.stream<main, [8], [32], f32>
  %b = rngd.block_scale %f, %v {block = 16 : i64} : !fetch.stream<main, [8], [32], f32>, !rngd.vrf<[2, 8], f32> -> !fetch.stream<main, [8], [32], f32>
  %n = rngd.cast %b : !fetch.stream<main, [8], [32], f32> -> !fetch.stream<main, [8], [32], bf16>
  rngd.commit %n, %o : !fetch.stream<main, [8], [32], bf16>, memref<8x32xbf16>
  func.return
}
"""


def _small_reference(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """x * s[j // 16] for the j-th value of the stream (time-major), f32 with
    DAZ/FTZ/NaN, then bf16 bits."""
    xs = _ftz_nan(x.reshape(-1).copy())
    ss = _ftz_nan(s.copy())
    with np.errstate(all="ignore"):
        p = _ftz_nan(xs * np.repeat(ss, 16))
    u = p.view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[(u & 0x7FFFFFFF) > 0x7F800000] = 0x7FC0
    return r.reshape(x.shape)


def test_vrf_block_scale_and_cast_engine_run_and_interpreter():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 32)).astype(np.float32)
    x[0, :4] = [np.float32(2.0**-130), np.nan, np.float32(3.0e38), -0.0]  # subnormal operand, NaN, overflow
    s = rng.standard_normal(16).astype(np.float32)
    s[3] = np.float32(2.0**-140)  # a subnormal scale reads as zero
    want = _small_reference(x, s)
    got = fetchc.run(SMALL, x=x, s=s)["o"].view(np.uint16)
    assert np.array_equal(got, want)
    m = parse_module(shared_context(), SMALL, "small.mlir")
    o = np.zeros((8, 32), dtype=ml_dtypes.bfloat16)
    interpret(m, "k", [x, s, o])
    assert np.array_equal(o.view(np.uint16), want)


# --------------------------------------------------------------------------
# The fallback: a remark, and rngd.remarks
# --------------------------------------------------------------------------


def test_fallback_remark_and_attribute():
    # 16 rows x 4096 NVFP4 codes: 4096 f32 scales, 16 KiB, do not fit the VRF.
    text = (REPO / "examples" / "nvfp4_dequant_f32.mlir").read_text()
    m = parse_module(shared_context(), text, "nv.mlir")
    result = run_pipeline(m, shared_context(), parse_pipeline("fetch-place-dm,fetch-split-scaling"))
    assert result.ok
    (remark,) = result.diagnostics
    assert remark.severity == "remark" and remark.loc is not None and remark.loc[0] == "nv.mlir"
    assert "16384 bytes of VRF" in remark.message and "1024 reads of 4 bytes on the main Fetch Unit" in remark.message
    (fn,) = [op for op in m.walk() if op.name == "func.func"]
    texts = [a.data for a in fn.attributes[REMARKS_ATTR].data]
    assert texts == [remark.message]
    # and the lockstep form: the scales on the main unit
    r = fetchc.compile(text)
    (k,) = r.seqbin.manifest.kernels
    units = [r.programs[kp.index].unit for kp in k.programs if k.tensors[kp.tensor].name == "bscale"]
    assert units == [0]


def test_budget_is_per_kernel_and_at_most_8_kib():
    # A hand-written VRF tensor of 8192 - 2048 bytes; a dequant whose 2048
    # bytes of f32 scales exactly fill the VRF is staged; 4 bytes more are not.
    def kernel(hand: int) -> str:
        return f"""
func.func @k(%t: memref<{hand}xf32>, %w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32,
             %o: memref<64x128xf32>) -> !rngd.vrf<[{hand}], f32> {{
  %a = fetch.fetch %t : memref<{hand}xf32> -> !fetch.stream<main, [], [{hand}], f32>
  %v = rngd.to_vrf %a : !fetch.stream<main, [], [{hand}], f32> -> !rngd.vrf<[{hand}], f32>
  %c = fetch.fetch %w : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64], [128], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {{format = "nvfp4"}} : !fetch.stream<main, [64], [128], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [128], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [128], f32>, memref<64x128xf32>
  func.return %v : !rngd.vrf<[{hand}], f32>
}}"""

    units = {}
    for hand in (1536, 1537):
        m = parse_module(shared_context(), kernel(hand), "b.mlir")
        result = run_pipeline(m, shared_context(), parse_pipeline("fetch-split-scaling"))
        assert result.ok
        units[hand] = [op.result.type.ctx for op in m.walk() if op.name == "fetch.fetch" and op.operands[0].name_hint == "s"]
        assert len(result.diagnostics) == (hand == 1537)
    assert units == {1536: ["sub"], 1537: ["main"]}
    # A hand-written VRF over the budget is an error at the rngd.to_vrf that crosses it.
    with pytest.raises(DiagnosticError) as info:
        fetchc.compile(kernel(2049))
    assert "8196 bytes per slice" in str(info.value) and "'rngd.to_vrf' op crosses the VRF budget" in str(info.value)


# --------------------------------------------------------------------------
# repacketise: the same index sequence, cut into packets of q
# --------------------------------------------------------------------------


def _indices(sizes, coeffs) -> np.ndarray:
    """Every index vector a linear read visits, in order (outermost first)."""
    grids = np.meshgrid(*[np.arange(n) for n in sizes], indexing="ij") if sizes else []
    c = np.array(coeffs, dtype=np.int64).reshape(len(sizes), -1)
    flat = [g.reshape(-1) for g in grids]
    return sum((f[:, None] * c[d] for d, f in enumerate(flat)), np.zeros((1, c.shape[1]), np.int64))


@pytest.mark.parametrize(
    "sizes,coeffs,q",
    [
        ([4, 120, 2], [[1, 0], [0, 2], [0, 1]], 8),  # the Gemma example: [4, 30], [8]
        ([64, 1], [[1, 0], [0, 1]], 8),  # one scale per row: packets span 8 rows
        ([64, 2], [[1, 0], [0, 1]], 8),  # [16], [4, 2]
        ([2, 32, 1], [[0, 1], [1, 0], [0, 1]], 32),  # block-major: rows innermost
        ([16, 4, 2], [[1, 0], [0, 2], [0, 1]], 32),
        ([3, 5], [[5], [1]], 8),  # 15 elements: no packet of 8
    ],
)
def test_repacketise_keeps_the_sequence(sizes, coeffs, q):
    cut = repacketise(sizes, coeffs, q)
    total = int(np.prod(sizes))
    if total % q:
        assert cut is None
        return
    if cut is None:
        return  # allowed: no such cut (the split then falls back)
    nsizes, ncoeffs, nt = cut
    assert int(np.prod(nsizes[nt:])) == q
    assert np.array_equal(_indices(nsizes, ncoeffs), _indices(sizes, coeffs))


# --------------------------------------------------------------------------
# A bf16 dequant on the sub unit: fetch-route-sub-decode narrows it too
# --------------------------------------------------------------------------

SUB_BF16 = """
func.func @k(%w: memref<4x128xf4E2M1FN>, %s: memref<4x8xf8E4M3FN>, %g: f32, %o: memref<4x128xbf16>) {
  %c = fetch.fetch %w : memref<4x128xf4E2M1FN> -> !fetch.stream<CTX, [4], [128], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<CTX, [4], [128], f4E2M1FN>, memref<4x8xf8E4M3FN>, f32 -> !fetch.stream<CTX, [4], [128], bf16>
  rngd.commit %d, %o : !fetch.stream<CTX, [4], [128], bf16>, memref<4x128xbf16>
  func.return
}
"""


def test_bf16_dequant_on_sub_and_main_agree():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 16, (4, 128), dtype=np.uint8)  # 8 scales a packet: whole 8-byte sub reads
    bscale = rng.integers(0, 256, (4, 8), dtype=np.uint8)
    want = reference_bf16_bits(codes, bscale, 0.37)
    for ctx in ("main", "sub"):
        text = SUB_BF16.replace("CTX", ctx)
        assert "rngd.cast" in fetchc.compile(text).mlir
        got = fetchc.run(text, w=codes, s=bscale, g=0.37)["o"].view(np.uint16)
        assert np.array_equal(got, want), ctx
