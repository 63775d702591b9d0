"""RNGD float semantics (hardware.md §2.2, §2.2a, §4) in fetchc.target.numerics.

Every expected value comes from a reference written here from the spec's
rules (numpy bit manipulation, Python arithmetic and ml_dtypes' value
conversions), never from fetchc's code.  NaN results are compared as bits
(``view(uint)``), so sign and payload count.

Rules (hardware.md §2.2a):

* ``bf16 → f32``: exact; a subnormal gives a zero of its sign; any NaN
  gives ``0x7FC00000``.
* ``f32 → bf16``: round to nearest even (overflow → ±inf); a subnormal
  gives a zero of its sign; any NaN gives ``0x7FC0``.
* ``f8E4M3FN → f32``: exact; ``0x7F`` and ``0xFF`` give ``0x7FC00000``.
* ``f8E5M2 → f32``: exact, ±inf stays; NaN keeps its sign
  (``0x7FC00000`` / ``0xFFC00000``).
* Vector Engine multiply: subnormal operands read as zeros of their sign;
  IEEE RNE product; a subnormal product becomes a zero of its sign; any NaN
  product is ``0x7FC00000``.
* MXFP4 ``e8m0``: ``2^(e-127)``, ``e = 0`` → ``2^-127`` (subnormal, read as
  ``+0`` by the multiply), ``e = 255`` → NaN.
"""

from __future__ import annotations

import math
import struct

import ml_dtypes
import numpy as np
import pytest

from fetchc.target import BF16, F8E4M3FN, F8E5M2, F32, I4, I8, I16, I32
from fetchc.target import numerics as N

# --------------------------------------------------------------------------
# Independent reference
# --------------------------------------------------------------------------


def f32_of_bits(u: int) -> float:
    return struct.unpack("<f", struct.pack("<I", u & 0xFFFFFFFF))[0]


def bits_of_f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def u32(a) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32)


def u16(a) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint16)


def ref_bf16_to_f32(codes: np.ndarray) -> np.ndarray:
    """uint16 codes -> uint32 f32 bits, per the table."""
    codes = codes.astype(np.uint32)
    sign, exp, man = codes >> 15, (codes >> 7) & 0xFF, codes & 0x7F
    out = np.empty(codes.shape, np.uint32)
    for i, (s, e, m) in enumerate(zip(sign.tolist(), exp.tolist(), man.tolist())):
        if e == 0xFF and m:
            out[i] = 0x7FC00000
        elif e == 0:  # zero or subnormal: a zero of its sign
            out[i] = s << 31
        elif e == 0xFF:
            out[i] = (s << 31) | 0x7F800000
        else:  # value (-1)^s 2^(e-127) (1 + m/128), exact in f32
            out[i] = bits_of_f32((-1.0) ** s * math.ldexp(1.0 + m / 128.0, e - 127))
    return out


def ref_f32_to_bf16(u: np.ndarray) -> np.ndarray:
    """uint32 f32 bits -> uint16 bf16 bits: RNE chosen by exact distances in
    float64 between the two neighbouring bf16 values (no bit tricks)."""
    u = np.asarray(u, np.uint32)
    with np.errstate(invalid="ignore"):
        x = u.view(np.float32).astype(np.float64)
    out = np.empty(u.shape, np.uint16)
    mag = u & 0x7FFFFFFF
    nan = mag > 0x7F800000
    sub = mag < 0x00800000
    inf = mag == 0x7F800000
    out[nan] = 0x7FC0
    out[sub] = (u[sub] >> 16) & 0x8000
    out[inf] = u[inf] >> 16
    fin = ~(nan | sub | inf)
    t = (u[fin] >> 16).astype(np.uint32)  # truncation toward zero (magnitude)
    lo = (t << 16).view(np.float32).astype(np.float64)
    # the next bf16 magnitude away from zero; past the largest finite it is 2^128 (rounds to inf)
    nxt = t + 1
    hi = np.where((nxt & 0x7FFF) == 0x7F80, np.copysign(2.0**128, lo), (nxt << 16).view(np.float32).astype(np.float64))
    xf = x[fin]
    dlo, dhi = np.abs(xf - lo), np.abs(hi - xf)
    up = (dhi < dlo) | ((dhi == dlo) & (t & 1 == 1))
    out[fin] = np.where(up, nxt, t).astype(np.uint16)
    return out


def ref_f8_to_f32(kind: str) -> np.ndarray:
    """All 256 codes -> uint32 f32 bits, from the format's definition."""
    out = np.empty(256, np.uint32)
    for c in range(256):
        s = c >> 7
        if kind == "e4m3":  # bias 7, no inf, 0x7F / 0xFF NaN
            e, m = (c >> 3) & 0xF, c & 7
            if e == 0xF and m == 7:
                out[c] = 0x7FC00000
                continue
            v = math.ldexp(m / 8.0, -6) if e == 0 else math.ldexp(1 + m / 8.0, e - 7)
        else:  # e5m2: bias 15, IEEE-like
            e, m = (c >> 2) & 0x1F, c & 3
            if e == 0x1F:
                out[c] = (0xFFC00000 if s else 0x7FC00000) if m else ((s << 31) | 0x7F800000)
                continue
            v = math.ldexp(m / 4.0, -14) if e == 0 else math.ldexp(1 + m / 4.0, e - 15)
        out[c] = bits_of_f32(-v if s else v)
    return out


def ref_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """f32 bits × f32 bits -> f32 bits: DAZ, exact product in float64 rounded
    once to f32 (IEEE RNE with gradual underflow), FTZ, NaN canonical."""
    a, b = np.broadcast_arrays(np.asarray(a, np.uint32), np.asarray(b, np.uint32))

    def daz(u):
        return np.where((u & 0x7F800000) == 0, u & 0x80000000, u).astype(np.uint32)

    with np.errstate(all="ignore"):
        fa = daz(a).view(np.float32).astype(np.float64)
        fb = daz(b).view(np.float32).astype(np.float64)
        p = (fa * fb).astype(np.float32)  # the float64 product of two f32 values is exact
    r = p.view(np.uint32).copy()
    r = np.where((r & 0x7F800000) == 0, r & 0x80000000, r)
    r = np.where(np.isnan(p), np.uint32(0x7FC00000), r)
    return r.astype(np.uint32)


def ref_e8m0(e: int) -> int:
    if e == 255:
        return 0x7FC00000
    return bits_of_f32(math.ldexp(1.0, e - 127))  # 2^-127 is representable (subnormal)


# --------------------------------------------------------------------------
# Edge classes
# --------------------------------------------------------------------------

F32_EDGES = [
    0x00000000, 0x80000000,  # ±0
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000, 0x80400000, 0x00008000, 0x80018000,  # subnormals
    0x00800000, 0x80800000, 0x00800001,  # smallest normals
    0x3F800000, 0xBF800000, 0x3F7FFFFF, 0x3F7FFFFE, 0x3EBD70A4, 0x40490FDB,  # ordinary
    0x3F808000, 0x3F818000, 0xBF808000, 0xBF818000, 0x3F808001, 0x3F807FFF,  # bf16 ties and neighbours
    0x7F7F8000, 0x7F7F7FFF, 0xFF7F8000, 0x7F7EFFFF, 0x7F7F0000,  # near the bf16 overflow threshold
    0x7F7FFFFF, 0xFF7FFFFF,  # largest finite f32
    0x7F800000, 0xFF800000,  # ±inf
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FA00001, 0xFFA00001, 0x7FFFFFFF, 0xFFFFFFFF,  # NaNs
    0x1F800000, 0x1F000000, 0x20000000, 0x5F800000, 0x60000000,  # 2^-64, 2^-65, 2^-63, 2^64, 2^65
]  # fmt: skip


def edges() -> np.ndarray:
    return np.array(F32_EDGES, dtype=np.uint32)


# --------------------------------------------------------------------------
# The reference itself, against spot values written out by hand
# --------------------------------------------------------------------------


def test_reference_spot_values():
    assert ref_bf16_to_f32(np.array([0x0001, 0x8001, 0x3F80, 0x7F81, 0xFFC1, 0xFF80]))[:].tolist() == [
        0, 0x80000000, 0x3F800000, 0x7FC00000, 0x7FC00000, 0xFF800000]
    got = ref_f32_to_bf16(np.array([0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x807FFFFF, 0xFFA00001, 0x3F808001]))
    assert got.tolist() == [0x3F80, 0x3F82, 0x7F80, 0x8000, 0x7FC0, 0x3F81]
    assert ref_mul(np.array([0x3F800000]), np.array([0x00000001])).tolist() == [0]  # subnormal operand
    assert ref_mul(np.array([0x3F7FFFFF]), np.array([0x00800000])).tolist() == [0x00800000]  # tie up to min normal
    assert ref_mul(np.array([0x3F7FFFFE]), np.array([0x00800000])).tolist() == [0]  # subnormal product
    assert ref_e8m0(0) == 0x00400000 and ref_e8m0(127) == 0x3F800000 and ref_e8m0(254) == 0x7F000000


# --------------------------------------------------------------------------
# Casts
# --------------------------------------------------------------------------


def test_bf16_to_f32_every_code():
    codes = np.arange(1 << 16, dtype=np.uint16)
    want = ref_bf16_to_f32(codes)
    got = N.bf16_to_f32(codes.view(ml_dtypes.bfloat16))
    assert got.dtype == np.float32 and np.array_equal(u32(got), want)
    assert np.array_equal(u32(N.bf16_to_f32(codes)), want)  # raw bits accepted too
    assert np.array_equal(u32(N.cast(codes.view(ml_dtypes.bfloat16), BF16, F32)), want)


def test_f32_to_bf16_every_high_half_and_tie_class():
    """Every bf16 code as the high half, with low halves 0, just below the
    tie, the tie, just above and the maximum: covers every exponent,
    subnormals and NaN payloads of both signs, ties both ways, overflow."""
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    u = (hi[:, None] | np.array([0, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234], np.uint32)[None, :]).reshape(-1)
    want = ref_f32_to_bf16(u)
    got = N.f32_to_bf16(u.view(np.float32))
    assert got.dtype == ml_dtypes.bfloat16 and np.array_equal(u16(got), want)
    assert np.array_equal(u16(N.cast(u.view(np.float32), F32, BF16)), want)


def test_f32_to_bf16_edges_by_hand():
    x = np.array([0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x3F808000, 0x3F818000, 0x00000001, 0x80000001,
                  0x807FFFFF, 0x7F800001, 0xFFFFFFFF, 0xFFC00000, 0x00800000, 0x80000000], np.uint32)  # fmt: skip
    want = [0x7F80, 0xFF80, 0x7F80, 0x7F7F, 0x3F80, 0x3F82, 0x0000, 0x8000, 0x8000, 0x7FC0, 0x7FC0, 0x7FC0, 0x0080, 0x8000]
    assert u16(N.f32_to_bf16(x.view(np.float32))).tolist() == want


def test_f32_to_bf16_random_bits_and_ml_dtypes_for_normals():
    rng = np.random.default_rng(1)
    u = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    u[::7] = edges()[rng.integers(0, len(F32_EDGES), u[::7].size)]
    got = u16(N.f32_to_bf16(u.view(np.float32)))
    assert np.array_equal(got, ref_f32_to_bf16(u))
    normal = ((u & 0x7F800000) != 0) & ((u & 0x7F800000) != 0x7F800000)
    with np.errstate(over="ignore", invalid="ignore"):
        ml = u16(u.view(np.float32).astype(ml_dtypes.bfloat16))
    assert np.array_equal(got[normal], ml[normal])  # RNE agrees with ml_dtypes wherever §2.2a does not intervene


@pytest.mark.parametrize("kind,src,fn", [("e4m3", F8E4M3FN, N.f8e4m3_to_f32), ("e5m2", F8E5M2, N.f8e5m2_to_f32)])
def test_f8_to_f32_every_code(kind, src, fn):
    codes = np.arange(256, dtype=np.uint8)
    want = ref_f8_to_f32(kind)
    got = N.cast(codes.view(src.np_dtype), src, F32)
    assert got.dtype == np.float32 and np.array_equal(u32(got), want)
    assert np.array_equal(u32(fn(codes)), want)
    # ml_dtypes agrees on every non-NaN code (exact widening)
    vals = codes.view(src.np_dtype).astype(np.float32)
    ok = ~np.isnan(vals)
    assert np.array_equal(u32(got)[ok], u32(vals)[ok])


def test_f8_nan_words():
    e4 = u32(N.f8e4m3_to_f32(np.array([0x7F, 0xFF], np.uint8)))
    assert e4.tolist() == [0x7FC00000, 0x7FC00000]  # sign dropped
    e5 = u32(N.f8e5m2_to_f32(np.array([0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF, 0x7C, 0xFC], np.uint8)))
    assert e5.tolist() == [0x7FC00000] * 3 + [0xFFC00000] * 3 + [0x7F800000, 0xFF800000]  # sign kept, ±inf stays


@pytest.mark.parametrize("src", [I4, I8, I16])
def test_integer_casts_sign_extend(src):
    if src == I4:
        vals = np.arange(-8, 8, dtype=np.int8).astype(ml_dtypes.int4)
        want = list(range(-8, 8))
    else:
        info = np.iinfo(src.np_dtype)
        vals = np.arange(info.min, info.max + 1, dtype=src.np_dtype)
        want = list(range(info.min, info.max + 1))
    got = N.cast(vals, src, I32)
    assert got.dtype == np.int32 and got.tolist() == want


def test_cast_rejects_other_pairs_and_dtypes():
    with pytest.raises(ValueError, match="no f32 -> f8E4M3FN cast"):
        N.cast(np.zeros(2, np.float32), F32, F8E4M3FN)
    with pytest.raises(ValueError, match="got values of float64"):
        N.cast(np.zeros(2), F32, BF16)
    with pytest.raises(ValueError, match="takes"):
        N.bf16_to_f32(np.zeros(2, np.float32))


def test_casts_leave_input_alone_and_accept_views():
    rng = np.random.default_rng(2)
    u = rng.integers(0, 1 << 32, (64, 48), dtype=np.uint64).astype(np.uint32)
    u[0, :8] = [0x00000001, 0x80000001, 0x7F800001, 0xFFFFFFFF, 0x7F7FFFFF, 0x3F808000, 0, 0x80000000]
    x = u.view(np.float32)
    keep = u.copy()
    got = N.f32_to_bf16(x.T)  # a non-contiguous view
    assert np.array_equal(u, keep)
    assert np.array_equal(u16(got), ref_f32_to_bf16(np.ascontiguousarray(u.T).reshape(-1)).reshape(48, 64))


# --------------------------------------------------------------------------
# Vector Engine multiply
# --------------------------------------------------------------------------


def test_mul_edge_classes_all_pairs():
    e = edges()
    a, b = np.meshgrid(e, e, indexing="ij")
    got = N.vector_mul(a.view(np.float32), b.view(np.float32))
    assert got.dtype == np.float32 and np.array_equal(u32(got), ref_mul(a, b))


def test_mul_spot_values():
    def mul(x, y):
        return int(u32(N.vector_mul(np.array([x], np.uint32).view(np.float32), np.array([y], np.uint32).view(np.float32)))[0])

    assert mul(0x7F800000, 0x00000001) == 0x7FC00000  # inf × subnormal = inf × 0 = NaN
    assert mul(0xFF800000, 0x80400000) == 0x7FC00000
    assert mul(0x3F800000, 0x80000001) == 0x80000000  # the subnormal reads as -0
    assert mul(0x3F7FFFFE, 0x00800000) == 0x00000000  # (1 - 2^-23) 2^-126: a subnormal product, flushed
    assert mul(0xBF7FFFFE, 0x00800000) == 0x80000000  # ... to a zero of its sign
    assert mul(0x3F7FFFFF, 0x00800000) == 0x00800000  # 2^-126 - 2^-150: IEEE ties up to 2^-126, kept
    assert mul(0x7F7FFFFF, 0x40000000) == 0x7F800000  # overflow to inf
    assert mul(0x7FA00001, 0x3F800000) == 0x7FC00000  # NaN payload dropped
    assert mul(0xFFFFFFFF, 0xBF800000) == 0x7FC00000  # NaN sign dropped
    assert mul(0x1F800000, 0x1F800000) == 0x00000000  # 2^-64 × 2^-64 = 2^-128: subnormal, flushed
    assert mul(0x20000000, 0x1F800000) == 0x00000000  # 2^-63 × 2^-64 = 2^-127: subnormal, flushed
    assert mul(0x20000000, 0x20000000) == 0x00800000  # 2^-63 × 2^-63 = 2^-126: normal


def test_mul_random_bits_and_near_underflow():
    rng = np.random.default_rng(3)
    n = 1 << 19
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    # products near 2^-126 (exponents around -63 each) and near overflow
    m = rng.integers(0, 1 << 23, (4, n), dtype=np.uint32)
    ea = rng.integers(127 - 66, 127 - 60, n).astype(np.uint32)
    eb = rng.integers(127 - 66, 127 - 60, n).astype(np.uint32)
    s = rng.integers(0, 2, (2, n), dtype=np.uint32) << 31
    a2, b2 = s[0] | (ea << 23) | m[0], s[1] | (eb << 23) | m[1]
    a3, b3 = (np.uint32(190) << 23) | m[2], (np.uint32(190) << 23) | m[3]
    for x, y in ((a, b), (a2, b2), (a3, b3)):
        got = N.vector_mul(x.view(np.float32), y.view(np.float32))
        assert np.array_equal(u32(got), ref_mul(x, y))
    flushed = np.count_nonzero((u32(N.vector_mul(a2.view(np.float32), b2.view(np.float32))) & 0x7FFFFFFF) == 0)
    assert flushed > n // 10  # the near-underflow set really exercises FTZ


def test_mul_broadcasts_and_checks_dtypes():
    x = np.array([[1.5, -2.0], [3.0, 0.25]], np.float32)
    assert N.vector_mul(x, np.float32(2.0)).tolist() == [[3.0, -4.0], [6.0, 0.5]]
    with pytest.raises(ValueError, match="float32 operands"):
        N.vector_mul(x, np.float64(2.0))


# --------------------------------------------------------------------------
# MXFP4 block scale, block_scale, tensor_scale
# --------------------------------------------------------------------------


def test_e8m0_every_code():
    codes = np.arange(256, dtype=np.uint8)
    want = np.array([ref_e8m0(e) for e in range(256)], np.uint32)
    assert np.array_equal(u32(N.e8m0_to_f32(codes.view(ml_dtypes.float8_e8m0fnu))), want)
    assert np.array_equal(u32(N.e8m0_to_f32(codes)), want)
    # e = 0 reads as +0 in the multiply; e = 1 is the smallest normal
    one = np.ones(1, np.float32)
    assert u32(N.vector_mul(one, N.e8m0_to_f32(np.array([0], np.uint8)))).tolist() == [0]
    assert u32(N.vector_mul(-one, N.e8m0_to_f32(np.array([0], np.uint8)))).tolist() == [0x80000000]
    assert u32(N.vector_mul(one, N.e8m0_to_f32(np.array([1], np.uint8)))).tolist() == [0x00800000]


def test_block_scale_nvfp4_and_mxfp4():
    rng = np.random.default_rng(4)
    e2m1 = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    codes = rng.integers(0, 16, (3, 5, 64), dtype=np.uint8)
    x = e2m1[codes]
    # NVFP4: every e4m3 code as a block scale (widened per the cast rule)
    s8 = rng.integers(0, 256, (3, 5, 4), dtype=np.uint8)
    s8.reshape(-1)[:8] = [0x01, 0x07, 0x7E, 0x7F, 0xFF, 0x00, 0x80, 0x08]
    sf = ref_f8_to_f32("e4m3")[s8]
    got = N.block_scale(x, sf.view(np.float32), 16)
    assert np.array_equal(u32(got), ref_mul(u32(x), np.repeat(sf, 16, axis=-1)))
    # MXFP4: e8m0 straight in, every exponent class
    e = rng.integers(0, 256, (3, 5, 2), dtype=np.uint8)
    e.reshape(-1)[:6] = [0, 1, 127, 254, 255, 128]
    got = N.block_scale(x, e.view(ml_dtypes.float8_e8m0fnu), 32)
    want = ref_mul(u32(x), np.repeat(np.array([ref_e8m0(int(v)) for v in e.reshape(-1)], np.uint32).reshape(e.shape), 32, -1))
    assert np.array_equal(u32(got), want)
    assert (u32(got)[np.repeat(e == 0, 32, -1)] & 0x7FFFFFFF == 0).all()  # 2^-127 reads as +0
    assert (u32(got)[np.repeat(e == 255, 32, -1)] == 0x7FC00000).all()


def test_block_scale_shape_errors():
    x = np.zeros((2, 32), np.float32)
    with pytest.raises(ValueError, match="expected \\(2, 2\\)"):
        N.block_scale(x, np.zeros((2, 4), np.float32), 16)
    with pytest.raises(ValueError, match="does not divide"):
        N.block_scale(x, np.zeros((2, 3), np.float32), 10)
    with pytest.raises(ValueError, match="float32 or float8_e8m0fnu"):
        N.block_scale(x, np.zeros((2, 2), np.float16), 16)


@pytest.mark.parametrize("g_bits", [0x3EBD70A4, 0x00000001, 0x80400000, 0x0D000000, 0x7F7FFFFF, 0x7F800000,
                                    0xFF800000, 0x7FA00001, 0xFFC00000, 0x00800000, 0x80000000])  # fmt: skip
def test_tensor_scale(g_bits):
    rng = np.random.default_rng(g_bits & 0xFFFF)
    x = rng.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(np.uint32)
    x[:len(F32_EDGES)] = edges()
    g = np.array(g_bits, np.uint32).view(np.float32)[()]
    got = N.tensor_scale(x.view(np.float32).reshape(64, 64), g)
    assert got.shape == (64, 64)
    assert np.array_equal(u32(got).reshape(-1), ref_mul(x, np.full(x.shape, g_bits, np.uint32)))


def test_tensor_scale_python_float_is_rounded_to_f32():
    x = np.ones(3, np.float32)
    assert u32(N.tensor_scale(x, 0.1)).tolist() == [bits_of_f32(0.1)] * 3
    assert u32(N.tensor_scale(x, 1e-40)).tolist() == [0] * 3  # an f32 subnormal scale reads as 0
    with pytest.raises(ValueError, match="real number"):
        N.tensor_scale(x, "0.5")


def test_large_tensor_runs():
    """A 4096 x 4096 NVFP4-sized decode step goes through (vectorised)."""
    x = np.full((4096, 4096), 1.5, np.float32)
    s = np.full((4096, 256), 2.0**-9, np.float32)
    out = N.tensor_scale(N.block_scale(x, s, 16), np.float32(2.0**-118))
    assert out.shape == (4096, 4096) and (u32(out) == 0).all()  # 1.5 · 2^-127: subnormal, flushed
