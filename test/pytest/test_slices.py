"""Kernels on several slices (ir.md §2a, hardware.md §1a): the
golden model takes whole tensors, splits them by ``rngd.slice_dim``, runs
every slice's programs from the emitted bytes and assembles the committed
tensors; ``fetchc sim --arg`` returns each program's output with a leading
slice axis.

Every result is compared, bit for bit (NaNs by their bits), with an
independent reference written here that decodes the **whole** tensor at once
with numpy + ml_dtypes and the spec's rules (hardware.md §2.2a: the Vector
Engine reads a subnormal operand as a zero of its sign, flushes a subnormal
product to a zero of its sign and gives 0x7FC00000 for any NaN; §4: block
scale first, tensor scale second; MXFP4 scales are 2^(e-127), e = 0xFF NaN).
"""

from __future__ import annotations

import subprocess

import ml_dtypes
import numpy as np
import pytest

import fetchc
from fetchc.diagnostics import DiagnosticError
from fetchc.golden.inputs import InputError
from fetchc.golden.run import simulate_with_args
from fetchc.seqbin import read
from served import FETCHC

SLICES = [1, 2, 256]

# --------------------------------------------------------------------------
# The independent reference
# --------------------------------------------------------------------------


def e2m1(codes: np.ndarray) -> np.ndarray:
    return codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)


def rngd(x: np.ndarray) -> np.ndarray:
    """RNGD's view of IEEE f32 results: subnormal -> zero of its sign, NaN -> 0x7FC00000."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).copy()
    mag = u & 0x7FFFFFFF
    u[mag < 0x00800000] &= 0x80000000
    u[mag > 0x7F800000] = 0x7FC00000
    return u.view(np.float32)


def mul(a: np.ndarray, b) -> np.ndarray:
    """The Vector Engine multiply: DAZ operands, IEEE f32 product, FTZ, canonical NaN."""
    with np.errstate(all="ignore"):
        return rngd(rngd(np.asarray(a, np.float32)) * rngd(np.asarray(b, np.float32)))


def nvfp4_whole(codes, bscale_bits, g) -> np.ndarray:
    s = bscale_bits.view(ml_dtypes.float8_e4m3fn).astype(np.float32)  # exact; NaN -> any NaN
    s = np.repeat(s, 16, axis=-1)
    return mul(mul(e2m1(codes), s), np.float32(g))


def mxfp4_whole(codes, e_bits) -> np.ndarray:
    e = e_bits.astype(np.int32)
    with np.errstate(all="ignore"):
        s = np.ldexp(np.float32(1), e - 127).astype(np.float32)
    s[e == 255] = np.float32("nan")
    return mul(e2m1(codes), np.repeat(s, 32, axis=-1))


def bf16_to_f32_whole(bits: np.ndarray) -> np.ndarray:
    return rngd(bits.view(ml_dtypes.bfloat16).astype(np.float32))


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}"))


def pack(codes: np.ndarray) -> np.ndarray:
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


def nvfp4(rows: int, cols: int, slices: int) -> str:
    """A NVFP4 decode of ``rows`` x ``cols`` per slice, split by rows."""
    nb = cols // 16
    st = f"!fetch.stream<main, [{rows}, {cols // 64}], [64]"
    return f"""
func.func @dq(%w: memref<{rows}x{cols}xf4E2M1FN> {{rngd.slice_dim = 0 : i64}},
              %s: memref<{rows}x{nb}xf8E4M3FN> {{rngd.slice_dim = 0 : i64}}, %g: f32,
              %o: memref<{rows}x{cols}xf32> {{rngd.slice_dim = 0 : i64}}) attributes {{rngd.slices = {slices} : i64}} {{
  %c = fetch.fetch %w {{map = affine_map<(r, p, e) -> (r, p * 64 + e)>}} : memref<{rows}x{cols}xf4E2M1FN> -> {st}, f4E2M1FN>
  %x = fetch.dequant %c, %s, %g {{format = "nvfp4"}} : {st}, f4E2M1FN>, memref<{rows}x{nb}xf8E4M3FN>, f32 -> {st}, f32>
  rngd.commit %x, %o : {st}, f32>, memref<{rows}x{cols}xf32>
  func.return
}}"""


def mxfp4(rows: int, cols: int, slices: int, dim: int = 0) -> str:
    """A MXFP4 decode of ``rows`` x ``cols`` per slice, split along ``dim``."""
    nb = cols // 32
    st = f"!fetch.stream<main, [{rows}, {cols // 64}], [64]"
    return f"""
func.func @dq(%w: memref<{rows}x{cols}xf4E2M1FN> {{rngd.slice_dim = {dim} : i64}},
              %e: memref<{rows}x{nb}xf8E8M0FNU> {{rngd.slice_dim = {dim} : i64}},
              %o: memref<{rows}x{cols}xf32> {{rngd.slice_dim = {dim} : i64}}) attributes {{rngd.slices = {slices} : i64}} {{
  %c = fetch.fetch %w {{map = affine_map<(r, p, e) -> (r, p * 64 + e)>}} : memref<{rows}x{cols}xf4E2M1FN> -> {st}, f4E2M1FN>
  %x = fetch.dequant %c, %e {{format = "mxfp4"}} : {st}, f4E2M1FN>, memref<{rows}x{nb}xf8E8M0FNU> -> {st}, f32>
  rngd.commit %x, %o : {st}, f32>, memref<{rows}x{cols}xf32>
  func.return
}}"""


def cast(rows: int, cols: int, slices: int, in_dim: int | None, out_dim: int | None) -> str:
    """bf16 -> f32 through the adapter's cast; ``None``: replicated."""

    def attr(d):
        return "" if d is None else f" {{rngd.slice_dim = {d} : i64}}"

    st = f"!fetch.stream<main, [{rows}], [{cols}]"
    return f"""
func.func @cv(%a: memref<{rows}x{cols}xbf16>{attr(in_dim)}, %o: memref<{rows}x{cols}xf32>{attr(out_dim)})
    attributes {{rngd.slices = {slices} : i64}} {{
  %s = fetch.fetch %a : memref<{rows}x{cols}xbf16> -> {st}, bf16>
  %c = fetch.cast %s : {st}, bf16> -> {st}, f32>
  rngd.commit %c, %o : {st}, f32>, memref<{rows}x{cols}xf32>
  func.return
}}"""


def zero_point(rows: int, cols: int, slices: int) -> str:
    """i8 -> i9 (zero point -3) into the Contraction Engine, weights replicated."""
    st = f"!fetch.stream<main, [{rows}], [{cols}]"
    return f"""
func.func @zp(%w: memref<{cols}xi8>, %x: memref<{rows}x{cols}xi8> {{rngd.slice_dim = 0 : i64}},
              %acc: memref<{rows}x{cols}xi32> {{rngd.slice_dim = 0 : i64}}) attributes {{rngd.slices = {slices} : i64}} {{
  %ws = fetch.fetch %w : memref<{cols}xi8> -> !fetch.stream<sub, [], [{cols}], i8>
  %t = rngd.to_trf %ws : !fetch.stream<sub, [], [{cols}], i8> -> !rngd.trf<i8>
  %xs = fetch.fetch %x : memref<{rows}x{cols}xi8> -> {st}, i8>
  %z = fetch.zp_sub %xs, -3 : {st}, i8> -> {st}, i9>
  %y = rngd.contract_outer %z, %t : {st}, i9>, !rngd.trf<i8> -> {st}, i32>
  rngd.commit %y, %acc : {st}, i32>, memref<{rows}x{cols}xi32>
  func.return
}}"""


def special_e4m3(rng, shape) -> np.ndarray:
    s = rng.integers(0, 256, shape, dtype=np.uint8)
    flat = s.reshape(-1)
    flat[: min(4, flat.size)] = [0x7F, 0xFF, 0x00, 0x01][: min(4, flat.size)]  # NaN, -NaN, zero, subnormal
    return s


# --------------------------------------------------------------------------
# fetchc run on whole tensors
# --------------------------------------------------------------------------


@pytest.mark.parametrize("slices", SLICES)
def test_nvfp4_whole_weight(slices):
    rng = np.random.default_rng(slices)
    rows = 4 if slices < 256 else 1
    codes = rng.integers(0, 16, (rows * slices, 128), dtype=np.uint8)
    s = special_e4m3(rng, (rows * slices, 8))
    for g, given in ((0.375, pack(codes)), (1e-37, codes)):  # packed and one code per byte; tiny g flushes
        out = fetchc.run(nvfp4(rows, 128, slices), w=given, s=s, g=g)
        assert list(out) == ["o"]
        assert_bits(out["o"], nvfp4_whole(codes, s, g))


@pytest.mark.parametrize("slices", SLICES)
def test_mxfp4_whole_weight(slices):
    rng = np.random.default_rng(100 + slices)
    rows = 2 if slices < 256 else 1
    codes = rng.integers(0, 16, (rows * slices, 64), dtype=np.uint8)
    e = rng.integers(0, 256, (rows * slices, 2), dtype=np.uint8)
    e.reshape(-1)[:2] = [0, 255]  # 2^-127 reads as zero; 0xFF is NaN
    out = fetchc.run(mxfp4(rows, 64, slices), w=pack(codes), e=e)
    assert_bits(out["o"], mxfp4_whole(codes, e))


@pytest.mark.parametrize("slices", [2, 4])
def test_mxfp4_split_along_the_last_dim(slices):
    # slice s holds columns [64 s, 64 s + 64) of the codes and [2 s, 2 s + 2) of the exponents
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 16, (2, 64 * slices), dtype=np.uint8)
    e = rng.integers(100, 150, (2, 2 * slices), dtype=np.uint8)
    out = fetchc.run(mxfp4(2, 64, slices, dim=1), w=codes, e=e)
    assert_bits(out["o"], mxfp4_whole(codes, e))


@pytest.mark.parametrize("slices", SLICES)
def test_cast_whole_tensor(slices):
    rng = np.random.default_rng(200 + slices)
    a = rng.integers(0, 1 << 16, (2 * slices, 16), dtype=np.uint16)
    a.reshape(-1)[:4] = [0x0001, 0x8001, 0x7FC1, 0xFF81]  # subnormals and NaNs
    out = fetchc.run(cast(2, 16, slices, 0, 0), a=a)
    assert_bits(out["o"], bf16_to_f32_whole(a))
    # split along the columns: slice s holds columns [16 s, 16 s + 16)
    b = rng.integers(0, 1 << 16, (2, 16 * slices), dtype=np.uint16)
    out = fetchc.run(cast(2, 16, slices, 1, 1), a=b.view(ml_dtypes.bfloat16))
    assert_bits(out["o"], bf16_to_f32_whole(b))


def test_replicated_input_and_output():
    a = np.random.default_rng(3).integers(0, 1 << 16, (2, 16), dtype=np.uint16)
    out = fetchc.run(cast(2, 16, 4, None, None), a=a)  # every slice reads and writes the same
    assert_bits(out["o"], bf16_to_f32_whole(a))
    out = fetchc.run(cast(2, 16, 4, None, 0), a=a)  # the same part on each slice, assembled
    assert_bits(out["o"], np.tile(bf16_to_f32_whole(a), (4, 1)))


def test_replicated_output_written_differently_is_an_error_naming_it():
    a = np.zeros((8, 16), np.uint16)
    a[5, 3] = 0x3F80  # 1.0 on slice 2 (rows 4..5), row 1, element 3
    with pytest.raises(DiagnosticError) as e:
        fetchc.run(cast(2, 16, 4, 0, None), a=a)
    (d,) = e.value.diagnostics
    assert d.message.startswith("'rngd.commit' op commits tensor 'o', which has no rngd.slice_dim")
    assert "slice 2 writes element (1, 3) differently from slice 0 (of 4 slices)" in d.message
    assert "give it an rngd.slice_dim" in d.message
    fetchc.run(cast(2, 16, 4, 0, None), a=np.tile(a[:2], (4, 1)))  # equal parts: no error


def test_whole_shapes_are_checked_and_named():
    with pytest.raises(InputError, match=r"tensor 'a' \(memref<8x16xbf16>\): expected shape \(8, 16\)"):
        fetchc.run(cast(2, 16, 4, 0, 0), a=np.zeros((2, 16), np.uint16))  # one slice's part is not enough
    with pytest.raises(InputError, match=r"missing: 'a' \(memref<2x64xbf16>\)"):
        fetchc.run(cast(2, 16, 4, 1, 1))


@pytest.mark.parametrize("slices", SLICES)
def test_zero_point_chain_through_sim(slices):
    """``fetchc run`` cannot commit a contraction; the zero-point chain's
    programs run under ``fetchc sim --arg``: whole tensors in, each output
    with a leading slice axis (when the kernel has more than one slice)."""
    rng = np.random.default_rng(300 + slices)
    w = rng.integers(-128, 128, 32, dtype=np.int8)
    x = rng.integers(-128, 125, (2 * slices, 32), dtype=np.int8)
    sb = read(fetchc.compile(zero_point(2, 32, slices)).seq_bin)
    out = simulate_with_args(sb, {"w": w, "x": x})
    lead = (slices,) if slices > 1 else ()
    want_x = (x.astype(np.int16) + 3).reshape(lead + (2, 32))  # i9 residual as int16
    want_w = np.broadcast_to(w, lead + (32,))  # replicated weights: every slice reads the same
    assert_bits(out["zp/1"], want_x)
    assert_bits(np.ascontiguousarray(out["zp/0"]), np.ascontiguousarray(want_w))


def test_sim_cli_adds_the_slice_axis(tmp_path):
    text = nvfp4(1, 64, 256)
    (tmp_path / "k.mlir").write_text(text)
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 16, (256, 64), dtype=np.uint8)
    s = rng.integers(0, 0x7E, (256, 4), dtype=np.uint8)
    np.save(tmp_path / "w.npy", pack(codes))
    np.save(tmp_path / "s.npy", s)
    fc = list(FETCHC)
    subprocess.run([*fc, str(tmp_path / "k.mlir"), "-o", str(tmp_path / "k.bin")], check=True)
    r = subprocess.run(
        [*fc, "sim", str(tmp_path / "k.bin"), "--arg", f"w={tmp_path / 'w.npy'}", "--arg", f"s={tmp_path / 's.npy'}",
         "-o", str(tmp_path / "o.npz")], capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    o = np.load(tmp_path / "o.npz")
    assert o["dq/0"].shape == (256, 1, 1, 64) and o["dq/1"].shape == (256, 1, 1, 4)
    want = e2m1(codes).reshape(256, 1, 1, 64)  # the codes' program: lookup + cast, no scale
    assert_bits(o["dq/0"], want)
    r = subprocess.run(
        [*fc, "run", str(tmp_path / "k.mlir"), "--arg", f"w={tmp_path / 'w.npy'}", "--arg",
         f"s={tmp_path / 's.npy'}", "--arg", "g=2", "-o", str(tmp_path / "r.npz")], capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert_bits(np.load(tmp_path / "r.npz")["o"], nvfp4_whole(codes, s, 2.0))


# --------------------------------------------------------------------------
# Verification, placement
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attrs, message",
    [
        ("attributes {rngd.slices = 0 : i64}", "rngd.slices = 0 is not a number of slices from 1 to 512"),
        ("attributes {rngd.slices = 513 : i64}", "rngd.slices = 513 is not a number of slices from 1 to 512"),
        ("", "rngd.slice_dim on %a, but @cv has no rngd.slices"),
    ],
)
def test_slice_attributes_are_checked_at_the_function(attrs, message):
    text = cast(2, 16, 2, 0, None).replace("attributes {rngd.slices = 2 : i64}", attrs)
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text, filename="k.mlir")
    (d,) = e.value.diagnostics
    assert d.message.startswith("'func.func' op " + message) and d.loc == ("k.mlir", 2, 1)


def test_slice_dim_out_of_range():
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(cast(2, 16, 2, 2, None), filename="k.mlir")
    (d,) = e.value.diagnostics
    assert d.message == (
        "'func.func' op rngd.slice_dim = 2 of %a is out of range for memref<2x16xbf16> (rank 2: dimensions 0 to 1)"
    )


def test_manifest_and_dis_show_slices():
    result = fetchc.compile(nvfp4(16, 4096, 256))
    (k,) = result.seqbin.manifest.kernels  # type: ignore[union-attr]
    assert k.slices == 256 and [t.slice_dim for t in k.tensors] == [0, 0, 0]
    assert [t.whole_shape(256) for t in k.tensors] == [(4096, 4096), (4096, 256), (4096, 4096)]
    assert sum(t.bytes for t in k.tensors) == (32 + 4 + 256) * 1024  # 292 KiB of one slice's DM
    text = fetchc.seqbin.disassemble(result.seq_bin)
    assert "  slices: 256\n" in text
    assert "    shape: [16, 4096] per slice; whole [4096, 4096], split along dim 0\n" in text
