"""Tests for fetchc.golden.sim, the golden model (spec: hardware.md §2-3, seqbin.md,
ir.md §5 ``fetchc sim``).

Expected results are computed here independently of the simulator: nibbles
unpacked low-first by hand, loop nests walked with Python loops, decoded
values from ``ml_dtypes`` conversions of the element values (or from bit
arithmetic), never from the simulator's helpers or ``target.lookup_table``.
"""

from __future__ import annotations

import itertools
import math
import os
import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchc.golden import engine, sim
from fetchc.target import encoding
from fetchc.seqbin import Program, SeqBin, Table, write
from fetchc.cli import main_sim
from fetchc.golden.sim import SimError, simulate, simulate_program
from fetchc.target import BF16, F4E2M1FN, F8E4M3FN, F8E5M2, F32, I4, I5, I8, I9, I16, I32

# --------------------------------------------------------------------------
# Independent helpers
# --------------------------------------------------------------------------

NP = {F4E2M1FN: ml_dtypes.float4_e2m1fn, F8E4M3FN: ml_dtypes.float8_e4m3fn, F8E5M2: ml_dtypes.float8_e5m2}


def prog(**kw) -> Program:
    """A program record; defaults: main unit, one contiguous entry of 64 i8."""
    d = dict(
        name="f/0", unit=0, in_dtype=I8, out_dtype=I8, base=0, packet_size=16, fetch_size=16,
        limits=(64,), strides=(1,), stages=0, table=None, type_conversion=None, zero_point0=0,
        num_zero_points=0, zp_mode=0, flit_count=1, words_per_packet=1,
    )  # fmt: skip
    d.update(kw)
    return Program(**d)


def ref_table(src, dst) -> Table:
    """A reference table built here from ml_dtypes values (not target)."""
    keys = np.arange(256, dtype=np.uint8)
    if src == F4E2M1FN:
        lo = (keys & 0xF).view(ml_dtypes.float4_e2m1fn).astype(NP[dst]).view(np.uint8).astype(np.uint16)
        hi = (keys >> 4).view(ml_dtypes.float4_e2m1fn).astype(NP[dst]).view(np.uint8).astype(np.uint16)
        return Table(True, src, dst, (lo | (hi << 8)).astype("<u2").tobytes())
    ent = keys.view(NP[src]).astype(ml_dtypes.bfloat16).view(np.uint16)
    return Table(False, src, dst, ent.astype("<u2").tobytes())


def nibbles(byts: np.ndarray) -> np.ndarray:
    """Element codes of packed bytes, element 2i = low nibble of byte i."""
    out = []
    for b in byts.tolist():
        out += [b & 0xF, b >> 4]
    return np.array(out, dtype=np.uint8)


def walk(limits, strides):
    """Element offsets of a loop nest, entry 0 outermost, by Python loops."""
    return [sum(i * s for i, s in zip(idx, strides)) for idx in itertools.product(*[range(n) for n in limits])]


def rng_bytes(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def bits_u32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float32).view(np.uint32)


def bf16_to_f32_rngd(words) -> np.ndarray:
    """bf16 bits -> f32 by hardware.md §2.2a, written out here: exact, a
    subnormal gives a zero of its sign, any NaN gives 0x7FC00000."""
    w = np.asarray(words, dtype=np.uint32)
    out = w << 16
    out = np.where((w & 0x7F80) == 0, out & 0x80000000, out)
    out = np.where((w & 0x7FFF) > 0x7F80, 0x7FC00000, out)
    return out.astype(np.uint32).view(np.float32)


# --------------------------------------------------------------------------
# Tables: the four of hardware.md §2.1, through the file's bytes
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dst", [F8E4M3FN, F8E5M2])
def test_paired_e2m1_lookup_all_keys(dst):
    dm = np.concatenate([np.zeros(8, np.uint8), np.arange(256, dtype=np.uint8), rng_bytes(256)])
    p = prog(in_dtype=F4E2M1FN, out_dtype=dst, base=8, limits=(1024,), packet_size=32, fetch_size=16,
             stages=1, table=0, words_per_packet=1, flit_count=1)  # fmt: skip
    got = simulate_program(p, [ref_table(F4E2M1FN, dst)], dm)
    codes = nibbles(dm[8 : 8 + 512])
    want = codes.view(ml_dtypes.float4_e2m1fn).astype(NP[dst]).view(np.uint8)
    assert got.dtype == np.uint8 and got.shape == (32, 32)
    assert np.array_equal(got.reshape(-1), want)


@pytest.mark.parametrize("src", [F8E4M3FN, F8E5M2])
def test_nonpaired_f8_to_bf16_all_keys(src):
    dm = np.concatenate([np.arange(256, dtype=np.uint8), rng_bytes(256, 1)])
    p = prog(in_dtype=src, out_dtype=BF16, limits=(512,), stages=1, table=0)
    got = simulate_program(p, [ref_table(src, BF16)], dm)
    want = dm.view(NP[src]).astype(ml_dtypes.bfloat16).view(np.uint16)
    assert got.dtype == np.uint16
    assert np.array_equal(got.reshape(-1), want)
    # NaN keys give the quiet NaN with the key's sign (seqbin.md TABLES)
    nan_key = 0x7F if src == F8E4M3FN else 0x7E
    assert got.reshape(-1)[nan_key] == 0x7FC0 and got.reshape(-1)[nan_key | 0x80] == 0xFFC0


def test_lookup_uses_the_files_table_bytes_not_a_reference():
    entries = rng_bytes(512, 7)
    tab = Table(True, F4E2M1FN, F8E4M3FN, entries.tobytes())
    dm = rng_bytes(64, 3)
    p = prog(in_dtype=F4E2M1FN, out_dtype=F8E4M3FN, limits=(16, 8), strides=(8, 1), packet_size=8,
             fetch_size=4, stages=1, table=0)  # fmt: skip
    got = simulate_program(p, [tab], dm).reshape(-1)
    u16 = entries.view("<u2")
    want = [(int(u16[dm[e // 2]]) >> (8 * (e % 2))) & 0xFF for e in walk((16, 8), (8, 1))]
    assert got.tolist() == want


def test_nibble_order_low_first():
    # byte 0x21: element 0 = code 1 (0.5), element 1 = code 2 (1.0)
    dm = np.array([0x21, 0x00, 0xF8, 0x7F] + [0] * 4, dtype=np.uint8)
    p = prog(in_dtype=F4E2M1FN, out_dtype=F8E4M3FN, limits=(8,), packet_size=8, fetch_size=4, stages=1, table=0)
    got = simulate_program(p, [ref_table(F4E2M1FN, F8E4M3FN)], dm).reshape(-1)
    assert got[:2].tolist() == [0x30, 0x38]  # 0.5, 1.0
    assert got[4:8].view(ml_dtypes.float8_e4m3fn).astype(np.float32).tolist() == [-0.0, -6.0, -6.0, 6.0]
    # i4 without lookup: the 4-bit codes in uint8, low nibble first
    p4 = prog(in_dtype=I4, out_dtype=I4, limits=(8,), packet_size=8, fetch_size=4)
    assert simulate_program(p4, [], dm).reshape(-1).tolist() == [1, 2, 0, 0, 8, 15, 15, 7]


def test_f4_without_lookup_gives_codes():
    dm = rng_bytes(32, 4)
    p = prog(in_dtype=F4E2M1FN, out_dtype=F4E2M1FN, limits=(64,), packet_size=16, fetch_size=8)
    got = simulate_program(p, [], dm)
    assert got.dtype == np.uint8 and np.array_equal(got.reshape(-1), nibbles(dm))


def test_f4_lookup_then_cast_to_f32():
    dm = rng_bytes(64, 5)
    p = prog(in_dtype=F4E2M1FN, out_dtype=F32, limits=(128,), packet_size=16, fetch_size=4, stages=3,
             table=0, type_conversion=3, flit_count=2, words_per_packet=2)  # fmt: skip
    got = simulate_program(p, [ref_table(F4E2M1FN, F8E4M3FN)], dm)
    ladder = [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    want = np.array([math.copysign(ladder[c & 7], -1.0 if c >> 3 else 1.0) for c in nibbles(dm[:64]).tolist()], dtype=np.float32)
    assert got.dtype == np.float32 and np.array_equal(bits_u32(got.reshape(-1)), bits_u32(want))


# --------------------------------------------------------------------------
# Sequencer addressing
# --------------------------------------------------------------------------


def test_negative_strides_8bit():
    dm = rng_bytes(256, 8)
    limits, strides, base = (4, 3, 8), (-32, 8, 1), 100
    p = prog(base=base, limits=limits, strides=strides, packet_size=8, fetch_size=8)
    got = simulate_program(p, [], dm).reshape(-1)
    want = [int(np.int8(dm[base + e].astype(np.int8))) for e in walk(limits, strides)]
    assert got.dtype == np.int8 and got.tolist() == want


def test_negative_strides_4bit():
    dm = rng_bytes(64, 9)
    limits, strides, base = (4, 8), (-16, 1), 40
    p = prog(in_dtype=I4, out_dtype=I4, base=base, limits=limits, strides=strides, packet_size=8, fetch_size=4)
    got = simulate_program(p, [], dm).reshape(-1)
    codes = nibbles(dm)
    want = [int(codes[2 * base + e]) for e in walk(limits, strides)]
    assert got.tolist() == want


def test_broadcast_stride_zero():
    dm = rng_bytes(64, 10)
    # outer broadcast: every packet re-reads the same 16 elements
    p = prog(limits=(4, 16), strides=(0, 1), packet_size=16, fetch_size=16)
    got = simulate_program(p, [], dm)
    assert all(np.array_equal(r, dm[:16].view(np.int8)) for r in got)
    # inner broadcast: a packet of 8 copies of one element
    p = prog(limits=(5, 8), strides=(3, 0), packet_size=8, fetch_size=1)
    got = simulate_program(p, [], dm)
    assert got.tolist() == [[int(dm[3 * i].astype(np.int8))] * 8 for i in range(5)]


def test_16_and_32_bit_words_little_endian_and_unaligned_base():
    dm = rng_bytes(128, 11)
    # bf16 identity read from an odd byte base: raw bits, little-endian
    p = prog(in_dtype=BF16, out_dtype=BF16, base=3, limits=(2, 8), strides=(16, 1), packet_size=8, fetch_size=16)
    got = simulate_program(p, [], dm).reshape(-1)
    want = [int(dm[3 + 2 * e]) | (int(dm[4 + 2 * e]) << 8) for e in walk((2, 8), (16, 1))]
    assert got.dtype == np.uint16 and [int(x) for x in got] == [int(x) for x in want]
    # f32 identity, contiguous
    p = prog(in_dtype=F32, out_dtype=F32, base=8, limits=(8,), packet_size=8, fetch_size=32)
    got = simulate_program(p, [], dm).reshape(-1)
    want = [struct.unpack_from("<I", dm.tobytes(), 8 + 4 * i)[0] for i in range(8)]
    assert bits_u32(got).tolist() == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dims=st.lists(st.tuples(st.integers(1, 5), st.integers(-7, 7)), min_size=1, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_random_loop_nests_match_python_walk(dims, seed):
    limits = tuple(n for n, _ in dims) + (4,)
    strides = tuple(s for _, s in dims) + (1,)
    offs = walk(limits, strides)
    base = -min(offs) + 3
    dm = rng_bytes(base + max(offs) + 1, seed)
    p = prog(base=base, limits=limits, strides=strides, packet_size=4, fetch_size=4)
    got = simulate_program(p, [], dm).reshape(-1)
    assert got.tolist() == [int(dm[base + e].astype(np.int8)) for e in offs]
    p4 = prog(in_dtype=I4, out_dtype=I32, base=base, limits=limits, strides=tuple(2 * s for s in strides[:-1]) + (1,),
              packet_size=4, fetch_size=1, stages=2, type_conversion=0)  # fmt: skip
    offs4 = walk(limits, p4.strides)
    b4 = -(min(offs4) // 2) + 1
    dm4 = rng_bytes(b4 + max(offs4) // 2 + 1, seed + 1)
    got4 = simulate_program(dataclass_replace(p4, base=b4), [], dm4).reshape(-1)
    codes = nibbles(dm4)
    assert got4.tolist() == [((int(codes[2 * b4 + e]) ^ 8) - 8) for e in offs4]


def dataclass_replace(p, **kw):
    import dataclasses

    return dataclasses.replace(p, **kw)


def test_general_path_chunks_and_threads_agree(monkeypatch):
    dm = rng_bytes(1 << 14, 12)
    tab = ref_table(F4E2M1FN, F8E5M2)
    contiguous = prog(in_dtype=F4E2M1FN, out_dtype=F8E5M2, limits=(4096, 8), strides=(8, 1), packet_size=8,
                      fetch_size=4, stages=1, table=0)  # fmt: skip
    want = nibbles(dm[: 4096 * 4]).view(ml_dtypes.float4_e2m1fn).astype(ml_dtypes.float8_e5m2).view(np.uint8)
    monkeypatch.setattr(engine, "FAST_CHUNK", 100)
    for threads in (1, 3):
        assert np.array_equal(simulate_program(contiguous, [tab], dm, threads=threads).reshape(-1), want)
    # the same elements walked as a non-mergeable nest: general path, many chunks
    monkeypatch.setattr(engine, "GENERAL_CHUNK", 64)
    strided = dataclass_replace(contiguous, limits=(2, 2048, 8), strides=(8 * 2048, 8, 1))
    assert not engine.contiguous(dataclass_replace(strided, strides=(8, 16, 1)))
    for threads in (1, 3):
        assert np.array_equal(simulate_program(strided, [tab], dm, threads=threads).reshape(-1), want)
    shuffled = dataclass_replace(contiguous, limits=(8, 512, 8), strides=(8, 64, 1))
    got = simulate_program(shuffled, [tab], dm, threads=2).reshape(-1)
    idx = np.array(walk((8, 512, 8), (8, 64, 1)))
    assert np.array_equal(got, want[idx])


PATHS = {
    "default": {},
    "strided-views": {"STRIDED_MIN": 1, "UNIT_CHUNK": 64},
    "index-arrays": {"STRIDED_MIN": 1 << 40, "UNIT_CHUNK": 64},
    "long-rows": {"UNIT_CHUNK": 3},
    "tiny-chunks": {"GENERAL_CHUNK": 8, "FAST_CHUNK": 3, "UNIT_CHUNK": 5},
}

NESTS = [  # (limits, strides) in elements; all rows start on a byte for 4-bit
    ((64,), (1,)),
    ((4, 16), (32, 1)),
    ((4, 16), (-32, 1)),
    ((3, 4, 16), (0, 16, 1)),
    ((2, 3, 4, 8), (-200, 64, -16, 1)),
    ((5, 8), (6, 0)),  # inner broadcast: element path
    ((4, 6), (16, 2)),  # packet of 1, stride 2: element path
]


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("nest", NESTS, ids=[str(n[0]) + str(n[1]) for n in NESTS])
@pytest.mark.parametrize("kind", ["f4-lookup", "i4-cast", "i8-zp", "bf16-cast", "f8-lookup-cast"])
def test_every_execution_path_matches_python_walk(monkeypatch, path, nest, kind):
    for k, v in PATHS[path].items():
        monkeypatch.setattr(engine, k, v)
    limits, strides = nest
    offs = walk(limits, strides)
    packet = limits[-1] if strides[-1] in (0, 1) else 1
    if kind in ("f4-lookup", "i4-cast"):
        base = -(min(offs) // 2) + 1
        dm = rng_bytes(base + max(offs) // 2 + 2, 20)
        codes = nibbles(dm)
        picked = np.array([codes[2 * base + e] for e in offs], dtype=np.uint8)
        if kind == "f4-lookup":
            p = prog(in_dtype=F4E2M1FN, out_dtype=F8E5M2, stages=1, table=0)
            tabs = [ref_table(F4E2M1FN, F8E5M2)]
            want = picked.view(ml_dtypes.float4_e2m1fn).astype(ml_dtypes.float8_e5m2).view(np.uint8)
        else:
            p = prog(in_dtype=I4, out_dtype=I32, stages=2, type_conversion=0)
            tabs = []
            want = np.array([(c ^ 8) - 8 for c in picked.tolist()], dtype=np.int32)
    elif kind in ("i8-zp", "f8-lookup-cast"):
        base = -min(offs) + 5
        dm = rng_bytes(base + max(offs) + 1, 21)
        picked = np.array([dm[base + e] for e in offs], dtype=np.uint8)
        if kind == "i8-zp":
            p = prog(in_dtype=I8, out_dtype=I9, stages=4, zero_point0=-3, num_zero_points=1, zp_mode=2)
            tabs = []
            want = picked.view(np.int8).astype(np.int16) + 3
        else:
            p = prog(in_dtype=F8E4M3FN, out_dtype=F32, stages=3, table=0, type_conversion=5)
            tabs = [ref_table(F8E4M3FN, BF16)]
            # the table keeps a NaN's sign (0xFFC0), the bf16 -> f32 cast drops it (§2.2a)
            want = bf16_to_f32_rngd(picked.view(ml_dtypes.float8_e4m3fn).astype(ml_dtypes.bfloat16).view(np.uint16))
    else:
        base = 2 * -min(offs) + 6
        dm = rng_bytes(base + 2 * max(offs) + 2, 22)
        words = [int(dm[base + 2 * e]) | (int(dm[base + 2 * e + 1]) << 8) for e in offs]
        p = prog(in_dtype=BF16, out_dtype=F32, stages=2, type_conversion=5)
        tabs = []
        want = bf16_to_f32_rngd(words)
    p = dataclass_replace(p, base=base, limits=limits, strides=strides, packet_size=packet)
    for threads in (1, 2):
        got = simulate_program(p, tabs, dm, threads=threads)
        assert got.shape == (len(offs) // packet, packet)
        assert np.array_equal(got.reshape(-1).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def test_odd_key_count_contiguous():
    dm = rng_bytes(16, 13)
    p = prog(in_dtype=F4E2M1FN, out_dtype=F8E4M3FN, limits=(6,), packet_size=2, fetch_size=1, stages=1, table=0)
    got = simulate_program(p, [ref_table(F4E2M1FN, F8E4M3FN)], dm).reshape(-1)
    want = nibbles(dm[:3]).view(ml_dtypes.float4_e2m1fn).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    assert np.array_equal(got, want)


# --------------------------------------------------------------------------
# Casts
# --------------------------------------------------------------------------


def rne_bf16(bits: int) -> int:
    """f32 bits -> bf16 bits, round to nearest even, by integer arithmetic
    (finite, non-NaN inputs); a subnormal input gives a zero of its sign
    (hardware.md §2.2a)."""
    if bits & 0x7F800000 == 0:
        return (bits >> 16) & 0x8000
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


def test_f32_to_bf16_round_to_nearest_even_on_ties():
    vals = [
        0x3F808000,  # tie between 0x3F80 and 0x3F81 -> even 0x3F80
        0x3F818000,  # tie between 0x3F81 and 0x3F82 -> even 0x3F82
        0xBF808000, 0xBF818000,  # negative ties
        0x3F808001, 0x3F807FFF,  # just above / below a tie
        0x00008000, 0x00018000, 0x80018000, 0x007FFFFF,  # subnormals: a zero of their sign
        0x7F7FFFFF,  # rounds up to +inf
        0x7F7F8000,  # tie at the top: odd 0x7F7F -> 0x7F80 (inf)
        0x7F800000, 0xFF800000, 0x00000000, 0x80000000,
    ]  # fmt: skip
    dm = np.array(vals, dtype="<u4").view(np.uint8)
    p = prog(in_dtype=F32, out_dtype=BF16, limits=(len(vals),), packet_size=1, fetch_size=4, stages=2,
             type_conversion=6)  # fmt: skip
    got = simulate_program(p, [], dm).reshape(-1)
    assert got.dtype == np.uint16
    assert [int(g) for g in got] == [rne_bf16(v) for v in vals]
    assert [int(g) for g in got[:4]] == [0x3F80, 0x3F82, 0xBF80, 0xBF82]
    assert [int(g) for g in got[6:10]] == [0x0000, 0x0000, 0x8000, 0x0000]


def test_f32_to_bf16_nan_is_canonical():
    """Any NaN, whatever its sign and payload, gives 0x7FC0 (hardware.md §2.2a)."""
    vals = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0xFFFFFFFF, 0x7FBFFFFF], dtype="<u4")
    p = prog(in_dtype=F32, out_dtype=BF16, limits=(5,), packet_size=1, fetch_size=4, stages=2, type_conversion=6)
    got = simulate_program(p, [], vals.view(np.uint8)).reshape(-1)
    assert got.tolist() == [0x7FC0] * 5


def test_integer_casts_sign_extend():
    dm = rng_bytes(64, 14)
    p = prog(in_dtype=I8, out_dtype=I32, limits=(64,), packet_size=8, fetch_size=8, stages=2, type_conversion=1)
    got = simulate_program(p, [], dm).reshape(-1)
    assert got.dtype == np.int32 and got.tolist() == [b - 256 if b > 127 else b for b in dm.tolist()]
    p = prog(in_dtype=I16, out_dtype=I32, limits=(32,), packet_size=8, fetch_size=16, stages=2, type_conversion=2)
    got = simulate_program(p, [], dm).reshape(-1)
    assert got.tolist() == [struct.unpack_from("<h", dm.tobytes(), 2 * i)[0] for i in range(32)]
    p = prog(in_dtype=I4, out_dtype=I32, limits=(16,), packet_size=8, fetch_size=4, stages=2, type_conversion=0)
    got = simulate_program(p, [], dm).reshape(-1)
    assert got.tolist() == [c - 16 if c > 7 else c for c in nibbles(dm[:8]).tolist()]


@pytest.mark.parametrize("src,code", [(F8E4M3FN, 3), (F8E5M2, 4)])
def test_f8_to_f32_exact(src, code):
    dm = np.arange(256, dtype=np.uint8)
    p = prog(in_dtype=src, out_dtype=F32, limits=(256,), packet_size=8, fetch_size=8, stages=2, type_conversion=code)
    got = simulate_program(p, [], dm).reshape(-1)
    with np.errstate(invalid="ignore"):
        want = dm.view(NP[src]).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(bits_u32(got)[~nan], bits_u32(want)[~nan])  # exact
    # NaN (hardware.md §2.2a): e4m3 0x7F / 0xFF -> 0x7FC00000; e5m2 keeps the sign
    want_nan = [0x7FC00000 if src == F8E4M3FN or c < 0x80 else 0xFFC00000 for c in np.flatnonzero(nan)]
    assert bits_u32(got)[nan].tolist() == want_nan
    assert got[0x38 if src == F8E4M3FN else 0x3C] == 1.0


def test_bf16_to_f32_every_code():
    dm = np.arange(1 << 16, dtype="<u2").view(np.uint8)
    p = prog(in_dtype=BF16, out_dtype=F32, limits=(1 << 16,), packet_size=8, fetch_size=16, stages=2, type_conversion=5)
    got = simulate_program(p, [], dm).reshape(-1)
    assert np.array_equal(bits_u32(got), bits_u32(bf16_to_f32_rngd(np.arange(1 << 16))))
    assert bits_u32(got)[[0x0001, 0x8001, 0x7F81, 0xFFC0, 0x3F80]].tolist() == [0, 0x80000000, 0x7FC00000, 0x7FC00000, 0x3F800000]


# --------------------------------------------------------------------------
# Zero point
# --------------------------------------------------------------------------


@pytest.mark.parametrize("zp", [-128, -1, 0, 5, 127])
def test_zp_sub_i8_to_i9(zp):
    dm = np.arange(256, dtype=np.uint8)
    p = prog(in_dtype=I8, out_dtype=I9, limits=(256,), packet_size=8, fetch_size=8, stages=4,
             zero_point0=zp, num_zero_points=1, zp_mode=2)  # fmt: skip
    got = simulate_program(p, [], dm).reshape(-1)
    assert got.dtype == np.int16
    assert got.tolist() == [(b - 256 if b > 127 else b) - zp for b in range(256)]


@pytest.mark.parametrize("zp", [-8, 3, 7])
def test_zp_sub_i4_to_i5(zp):
    dm = np.arange(256, dtype=np.uint8)
    p = prog(in_dtype=I4, out_dtype=I5, limits=(512,), packet_size=8, fetch_size=4, stages=4,
             zero_point0=zp, num_zero_points=1, zp_mode=1)  # fmt: skip
    got = simulate_program(p, [], dm).reshape(-1)
    assert got.dtype == np.int8
    assert got.tolist() == [(c - 16 if c > 7 else c) - zp for c in nibbles(dm).tolist()]


def test_corrupt_zero_point_raises_only_on_data_that_overflows():
    # zp 200 is outside [-128, 127]: residual v - 200 fits i9 only for v >= -56
    p = prog(in_dtype=I8, out_dtype=I9, limits=(8,), packet_size=8, fetch_size=8, stages=4,
             zero_point0=200, num_zero_points=1, zp_mode=2)  # fmt: skip
    ok = simulate_program(p, [], np.arange(8, dtype=np.uint8)).reshape(-1)
    assert ok.tolist() == [v - 200 for v in range(8)]
    bad = np.array([0, 1, 2, 0x80, 4, 5, 6, 7], dtype=np.uint8)  # -128 - 200 = -328
    with pytest.raises(SimError, match=r"-128 - 200 = -328 does not fit i9 \[-256, 255\]"):
        simulate_program(p, [], bad)
    p4 = prog(in_dtype=I4, out_dtype=I5, limits=(8,), packet_size=8, fetch_size=4, stages=4,
              zero_point0=-9, num_zero_points=1, zp_mode=1)  # fmt: skip
    with pytest.raises(SimError, match=r"7 - -9 = 16 does not fit i5 \[-16, 15\]"):
        simulate_program(p4, [], np.array([0x70, 0, 0, 0], dtype=np.uint8))
    # the same on the element-by-element path (inner broadcast)
    pb = dataclass_replace(p, limits=(4, 8), strides=(1, 0))
    ok = simulate_program(pb, [], np.arange(4, dtype=np.uint8))
    assert ok.tolist() == [[v - 200] * 8 for v in range(4)]
    with pytest.raises(SimError, match=r"-128 - 200 = -328"):
        simulate_program(pb, [], np.array([0, 0x80, 0, 0], dtype=np.uint8))


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def test_read_past_end_of_image():
    p = prog(base=32, limits=(64,))
    with pytest.raises(SimError, match=r"reads DM byte address 95, outside the 64-byte DM image"):
        simulate_program(p, [], np.zeros(64, np.uint8))
    p = prog(in_dtype=F32, out_dtype=F32, base=0, limits=(16,), packet_size=8, fetch_size=32)
    with pytest.raises(SimError, match=r"address 63, outside the 62-byte"):
        simulate_program(p, [], np.zeros(62, np.uint8))
    # exactly fitting is fine
    assert simulate_program(prog(base=0, limits=(64,)), [], np.zeros(64, np.uint8)).shape == (4, 16)


def test_read_before_start_of_image():
    p = prog(base=8, limits=(2, 16), strides=(-16, 1))
    with pytest.raises(SimError, match=r"reads DM byte address -8, below the start"):
        simulate_program(p, [], np.zeros(64, np.uint8))


def test_inconsistent_records():
    with pytest.raises(SimError, match=r"program f/0: tables is 0, out of range for 0 tables"):
        simulate_program(prog(in_dtype=F8E4M3FN, out_dtype=BF16, stages=1, table=0), [], np.zeros(64, np.uint8))
    with pytest.raises(SimError, match="out_dtype is i32"):
        simulate_program(prog(out_dtype=I32), [], np.zeros(64, np.uint8))
    with pytest.raises(SimError, match=r"type_conversion is code 3 \(f8E4M3FN -> f32\) but the value entering the cast is i8"):
        simulate_program(prog(out_dtype=F32, stages=2, type_conversion=3), [], np.zeros(64, np.uint8))


# --------------------------------------------------------------------------
# simulate() and the encoding helpers
# --------------------------------------------------------------------------


def two_program_file() -> tuple[SeqBin, np.ndarray]:
    tab = ref_table(F4E2M1FN, F8E4M3FN)
    a = prog(name="dec/0", in_dtype=F4E2M1FN, out_dtype=F32, base=0, limits=(64,), packet_size=16, fetch_size=4,
             stages=3, table=0, type_conversion=3, flit_count=2, words_per_packet=2)  # fmt: skip
    b = prog(name="q/0", base=64, limits=(4, 16), strides=(16, 1), packet_size=16, fetch_size=8,
             stages=2, out_dtype=I32, type_conversion=1, flit_count=2, words_per_packet=2)  # fmt: skip
    return SeqBin((tab,), (a, b)), rng_bytes(128, 16)


def test_simulate_all_and_by_name():
    sb, dm = two_program_file()
    res = simulate(sb, dm.tobytes())
    assert list(res) == ["dec/0", "q/0"]
    assert res["dec/0"].shape == (4, 16) and res["dec/0"].dtype == np.float32
    assert res["q/0"].tolist() == dm[64:128].view(np.int8).astype(np.int32).reshape(4, 16).tolist()
    one = simulate(sb, dm, "q/0")
    assert list(one) == ["q/0"] and np.array_equal(one["q/0"], res["q/0"])
    with pytest.raises(SimError, match=r"no program named 'nope'; the file has: 'dec/0', 'q/0'"):
        simulate(sb, dm, "nope")


def test_simulate_unnamed_and_duplicate_names():
    sb, dm = two_program_file()
    a, b = sb.programs
    res = simulate(SeqBin(sb.tables, (dataclass_replace(a, name=None), b)), dm)
    assert list(res) == ["#0", "q/0"]
    with pytest.raises(SimError, match="two programs are named 'q/0'"):
        simulate(SeqBin(sb.tables, (dataclass_replace(a, name="q/0"), b)), dm)


def test_encoding_round_trip():
    rng = np.random.default_rng(17)
    for elem in (I4, F4E2M1FN, F8E4M3FN, F8E5M2, BF16, F32, I8, I16, I32, I5, I9):
        if elem.bits == 4:
            canon = rng.integers(0, 16, 50, dtype=np.uint8).view(elem.np_dtype)
        elif elem in (I5, I9):
            canon = rng.integers(-16, 16, 50).astype(elem.np_dtype)
        else:
            canon = rng.integers(0, 256, 50 * (elem.bits // 8), dtype=np.uint8).view(elem.np_dtype)
        enc = encoding.to_sim_encoding(canon, elem)
        assert enc.dtype == encoding.sim_dtype(elem)
        back = encoding.from_sim_encoding(enc, elem)
        assert back.dtype == elem.np_dtype
        assert np.array_equal(back.view(np.uint8), canon.view(np.uint8))
    assert encoding.to_sim_encoding(np.array([-1, -8, 7], dtype=ml_dtypes.int4), I4).tolist() == [15, 8, 7]
    assert encoding.pack_elements(np.array([1, 2, 3], dtype=np.uint8).view(ml_dtypes.int4), I4).tolist() == [0x21, 0x03]


def test_no_progress_when_stderr_is_not_a_tty(capsys, monkeypatch):
    monkeypatch.setattr(engine, "PROGRESS_MIN", 1)
    simulate_program(prog(), [], np.zeros(64, np.uint8))
    assert capsys.readouterr().err == ""
    simulate_program(prog(), [], np.zeros(64, np.uint8), progress=True)
    err = capsys.readouterr().err
    assert "100%" in err and err.endswith("\n")


# --------------------------------------------------------------------------
# fetchc sim (main_sim)
# --------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    sb, dm = two_program_file()
    sp = tmp_path / "p.seq.bin"
    sp.write_bytes(write(sb))
    dp = tmp_path / "dm.bin"
    dp.write_bytes(dm.tobytes())
    return sb, dm, sp, dp, tmp_path


def test_cli_npy_for_one_program(files):
    sb, dm, sp, dp, tmp = files
    out = tmp / "out.npy"
    assert main_sim([str(sp), "--dm", str(dp), "--program", "q/0", "-o", str(out)]) == 0
    got = np.load(out)
    assert np.array_equal(got, simulate(sb, dm, "q/0")["q/0"])


def test_cli_npz_all_programs_exact_output_name(files):
    sb, dm, sp, dp, tmp = files
    out = tmp / "results.data"  # no .npz suffix: the path is used exactly
    assert main_sim([str(sp), "--dm", str(dp), "-o", str(out)]) == 0
    assert sorted(os.listdir(tmp)) == ["dm.bin", "p.seq.bin", "results.data"]
    with np.load(out) as z:
        assert sorted(z.files) == ["dec/0", "q/0"]
        want = simulate(sb, dm)
        for k in z.files:
            assert np.array_equal(z[k].view(np.uint8), want[k].view(np.uint8))
    assert (os.stat(out).st_mode & 0o777) == (0o666 & ~_umask())


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


@pytest.mark.parametrize(
    "case",
    ["bad-program", "missing-dm", "short-dm", "bad-seqbin", "missing-seqbin", "usage", "missing-out-dir"],
)
def test_cli_errors_leave_output_untouched(files, capsys, case):
    sb, dm, sp, dp, tmp = files
    out = tmp / "out.npy"
    out.write_bytes(b"precious")
    argv = [str(sp), "--dm", str(dp), "-o", str(out)]
    if case == "bad-program":
        argv += ["--program", "nope"]
    elif case == "missing-dm":
        argv[2] = str(tmp / "absent.bin")
    elif case == "short-dm":
        (tmp / "short.bin").write_bytes(dm[:100].tobytes())
        argv[2] = str(tmp / "short.bin")
    elif case == "bad-seqbin":
        data = bytearray(sp.read_bytes())
        data[40] ^= 1  # breaks the CRC
        sp.write_bytes(bytes(data))
    elif case == "missing-seqbin":
        argv[0] = str(tmp / "absent.seq.bin")
    elif case == "usage":
        argv = [str(sp), "-o", str(out)]  # no --dm
    elif case == "missing-out-dir":
        argv[-1] = str(tmp / "no" / "such" / "out.npy")
    before = sorted(os.listdir(tmp))
    assert main_sim(argv) == (2 if case == "usage" else 1)
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err
    assert out.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp)) == before  # no temporary file left behind
    if case == "bad-seqbin":
        assert f"{sp}: error: bad CRC" in err
    if case == "short-dm":
        assert "outside the 100-byte DM image" in err
    if case == "bad-program":
        assert "no program named 'nope'" in err


def test_cli_failed_write_removes_temp_file(files, capsys, monkeypatch):
    sb, dm, sp, dp, tmp = files
    out = tmp / "out.npy"
    out.write_bytes(b"precious")

    def broken_write(f, arr, *args, **kwargs):
        f.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", broken_write)
    assert main_sim([str(sp), "--dm", str(dp), "--program", "q/0", "-o", str(out)]) == 1
    assert f"error: cannot write '{out}': No space left on device" in capsys.readouterr().err
    assert out.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp)) == ["dm.bin", "out.npy", "p.seq.bin"]


def test_cli_help(capsys):
    assert main_sim(["--help"]) == 0
    assert "fetchc sim" in capsys.readouterr().out
