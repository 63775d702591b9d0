"""Tests for fetchc.target.sequencer (hardware.md §3, ir.md §3 rule 8).

Every expected value below is computed by hand in the comments, never by
calling the code under test.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fetchc import target
from fetchc.target.sequencer import (
    SequencerConfig,
    SequencerError,
    build_entries,
    contiguous_run,
    derive,
    split_size,
)


def row_major(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return list(reversed(strides))


def identity(rank):
    return [[1 if r == d else 0 for d in range(rank)] for r in range(rank)]


def run(
    memref_shape,
    time_shape,
    packet_shape,
    map_coeffs=None,
    map_consts=None,
    *,
    elem=target.I8,
    memref_strides=None,
    memref_offset=0,
    context="main",
    cast_out=None,
    read_size=None,
    base=0,
    placed=True,
) -> SequencerConfig:
    rank = len(memref_shape)
    if map_coeffs is None:
        map_coeffs = identity(rank)
    if map_consts is None:
        map_consts = [0] * rank
    if memref_strides is None:
        memref_strides = row_major(memref_shape)
    return derive(
        memref_shape=memref_shape,
        memref_strides=memref_strides,
        memref_offset=memref_offset,
        map_coeffs=map_coeffs,
        map_consts=map_consts,
        time_shape=time_shape,
        packet_shape=packet_shape,
        elem=elem,
        context=context,
        cast_out=cast_out,
        read_size=read_size,
        base=base,
        placed=placed,
    )


def raises(msg, **kw):
    return pytest.raises(SequencerError, match=re.escape(msg), **kw)


# --------------------------------------------------------------------------
# The four worked examples of hardware.md §3
# --------------------------------------------------------------------------


def test_example_f4_4096x16():
    # memref<4096x16xf4E2M1FN>, time [4096], packet [16], identity map.
    # dim strides t:16, p:1 -> (4096:16),(16:1); 16 == 16*1 and 65536 <= 65536
    # -> [65536 : 1] : 16.  run 65536, max access gcd(16, 65536) = 16;
    # 16 f4 = 8 bytes (legal) -> read 16, fetch 8 B, 1 word, 4096 cycles.
    c = run([4096, 16], [4096], [16], elem=target.F4E2M1FN)
    assert c == SequencerConfig(
        base=0, limits=(65536,), strides=(1,), packet_size=16, read_size=16,
        fetch_size=8, words_per_packet=1, cycles=4096, contiguous_run=65536,
        max_access_size=16,
    )


def test_example_bf16_8x512():
    # memref<8x512xbf16>, time [8, 16], packet [32], (a,b,p) -> (a, b*32 + p).
    # strides a:512, b:32, p:1 -> (8:512),(16:32),(32:1) -> (512:1) -> (4096:1).
    # max access gcd(32, 4096) = 32; 32 bf16 = 64 B illegal, 16 bf16 = 32 B.
    # words 32/16 = 2, cycles 8*16*2 = 256.
    c = run([8, 512], [8, 16], [32], [[1, 0, 0], [0, 32, 1]], elem=target.BF16)
    assert (c.limits, c.strides, c.packet_size) == ((4096,), (1,), 32)
    assert (c.contiguous_run, c.max_access_size) == (4096, 32)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (16, 32, 2, 256)


def test_example_i8_131072_merge_cap():
    # memref<131072xi8>, time [4096], packet [32], (t,p) -> (t*32 + p).
    # (4096:32),(32:1): 32 == 32*1 but 4096*32 = 131072 > 65536 -> no merge.
    # run: 32, outer stride 32 == 32*1 -> 32*4096 = 131072; max access 32.
    c = run([131072], [4096], [32], [[32, 1]])
    assert (c.limits, c.strides, c.packet_size) == ((4096, 32), (32, 1), 32)
    assert (c.contiguous_run, c.max_access_size) == (131072, 32)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (32, 32, 1, 4096)


def test_example_bf16_whcn():
    # memref<4x3x8x8xbf16> (strides 192, 64, 8, 1), time [8,8,3,4] = (w,h,c,n),
    # packet [1], (w,h,c,n,p) -> (n, c, h, w + p).
    # strides w:1, h:8, c:64, n:192, p:1 (size 1, vanishes); no merges.
    c = run(
        [4, 3, 8, 8], [8, 8, 3, 4], [1],
        [[0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0], [1, 0, 0, 0, 1]],
        elem=target.BF16,
    )
    assert (c.limits, c.strides, c.packet_size) == ((8, 8, 3, 4), (1, 8, 64, 192), 1)
    # max access gcd(1, .) = 1; one bf16 = 2 bytes; cycles 8*8*3*4 = 768.
    assert (c.max_access_size, c.read_size, c.fetch_size) == (1, 1, 2)
    assert (c.words_per_packet, c.cycles) == (1, 768)


# --------------------------------------------------------------------------
# Splitting and the entry budget
# --------------------------------------------------------------------------


def test_split_largest_divisor():
    # memref<1x200000xi8>, time [200000], packet [1], (t,p) -> (0, t + p).
    # 200000 = 2^6 * 5^5.  Divisors b <= 65536 with 200000/b <= 65536 (b >= 4):
    # 50000 = 2^4*5^5 is the largest (100000 > 65536; 62500 needs 5^6).
    # -> (4 : 50000), (50000 : 1).
    c = run([1, 200000], [200000], [1], [[0, 0], [1, 1]])
    assert (c.limits, c.strides) == ((4, 50000), (50000, 1))
    assert (c.read_size, c.fetch_size, c.cycles) == (1, 1, 200000)


def test_split_keeps_stride():
    # memref<131072x2xi8>, time [131072], packet [1], (t,p) -> (t, p): stride 2.
    # 131072 = 2^17 -> b = 65536, a = 2 -> (2 : 65536*2), (65536 : 2).
    c = run([131072, 2], [131072], [1])
    assert (c.limits, c.strides) == ((2, 65536), (131072, 2))


def test_split_size_helper():
    assert split_size(200000) == (4, 50000)
    assert split_size(65536 * 65536) == (65536, 65536)
    assert split_size(3 * 65536) == (3, 65536)
    # 3^11 = 177147: divisors <= 65536 are powers of 3; 3^10 = 59049.
    assert split_size(177147) == (3, 59049)
    assert split_size(65537) is None  # prime
    assert split_size(2 * 65537) is None


def test_split_prime_impossible():
    # 65537 is prime: no a*b with a, b <= 65536.
    with raises(
        "dimension of 65537 elements cannot be split into sequencer entries of at most 65536"
    ):
        run([65537], [65537], [1], [[1, 1]])


def nine_dims():
    # memref<2x...x2xi8> (9 dims, strides 256..1); time t_d -> memref index 8-d,
    # so t_d has stride 2^d: entries (2:1),(2:2),...,(2:256), none merge
    # (an outer stride 2^(d) never equals 2 * 2^(d+1)).
    coeffs = [[1 if d == 8 - r else 0 for d in range(9)] + [1 if r == 8 else 0]
              for r in range(9)]
    return dict(memref_shape=[2] * 9, time_shape=[2] * 9, packet_shape=[1],
                map_coeffs=coeffs)


def test_nine_entries_error():
    with raises("needs 9 sequencer entries, but the table holds 8"):
        run(**nine_dims())


def test_nine_entries_error_lists_the_nest_and_the_fix():
    # The error names the entries it derived and what would reduce them.  Memref
    # index r is stream dim 8 - r (strides 2^(8-r) ... ): the nest walks the
    # dims in reverse, 2 elements each, strides 1, 2, 4, ..., 256.
    with pytest.raises(SequencerError) as e:
        run(**nine_dims())
    msg = str(e.value)
    assert "the stream's 9 time and 1 packet dims give [2 : 1, 2 : 2, 2 : 4, 2 : 8, 2 : 16, 2 : 32, 2 : 64, 2 : 128, 2 : 256]" in msg
    assert "use fewer time dims (fold them into one)" in msg and "neighbouring dims merge" in msg


def test_eight_entries_fit():
    # Same with the outermost time dim gone: 8 entries (2:2),(2:4),...,(2:256).
    kw = nine_dims()
    coeffs = [row[1:] for row in kw["map_coeffs"]]
    # memref index 8 was t0 + p; now it is just p (const 0).
    c = run([2] * 9, [2] * 8, [1], coeffs)
    assert c.limits == (2,) * 8
    assert c.strides == (2, 4, 8, 16, 32, 64, 128, 256)


def test_split_exceeds_budget():
    # memref<2x2x2x2x2x2x2x100000xi8>: strides index r (r < 7) = 100000*2^(6-r),
    # index 7 = 1.  time [100000, 2 x7], packet [1]; t0 -> index 7,
    # t_k -> index 7-k (k = 1..7), so t_k has stride 100000 * 2^(k-1).
    # Entries (100000:1),(2:100000),(2:200000),...,(2:6400000): no merge
    # (e.g. 100000 != 2*200000), 8 entries; splitting 100000 = 2 * 50000
    # makes 9.
    coeffs = []
    for r in range(8):
        row = [0] * 9
        if r == 7:
            row[0] = 1
            row[8] = 1  # + p
        else:
            row[7 - r] = 1
        coeffs.append(row)
    with raises("needs 9 sequencer entries, but the table holds 8"):  # 12.8 MB: only unplaced (see below)
        run([2] * 7 + [100000], [100000] + [2] * 7, [1], coeffs, placed=False)


def test_build_entries_rules():
    # size-1 entries vanish, everything vanishing leaves (1 : 1)
    assert build_entries([1, 1], [5, 7]) == [(1, 1)]
    assert build_entries([], []) == [(1, 1)]
    # merge chain across three entries
    assert build_entries([2, 3, 4], [12, 4, 1]) == [(24, 1)]
    # merge stops at the cap
    assert build_entries([2, 65536], [65536, 1]) == [(2, 65536), (65536, 1)]
    # broadcast dims merge (0 == n * 0)
    assert build_entries([4, 8], [0, 0]) == [(32, 0)]
    # negative strides merge too: (2:-8),(8:-1): -8 == 8 * -1
    assert build_entries([2, 8], [-8, -1]) == [(16, -1)]


# --------------------------------------------------------------------------
# Offsets, layouts, negative strides
# --------------------------------------------------------------------------


def test_reversed_rows_negative_stride():
    # memref<16x32xi8>, time [16], packet [32], (t,p) -> (15 - t, p), base 1024.
    # t stride -32, p stride 1; offset 15*32 = 480 -> base 1024 + 480 = 1504.
    # (16:-32),(32:1): -32 != 32 -> no merge.  run 32, read 32.
    c = run([16, 32], [16], [32], [[-1, 0], [0, 1]], [15, 0], base=1024)
    assert c.base == 1504
    assert (c.limits, c.strides) == ((16, 32), (-32, 1))
    assert (c.contiguous_run, c.max_access_size, c.read_size, c.cycles) == (32, 32, 32, 16)
    offs = c.element_offsets()
    assert offs[0] == 0 and offs[31] == 31 and offs[32] == -32 and offs[-1] == -480 + 31


def test_reversed_vector_packet_one():
    # memref<64xi8>, time [64], packet [1], (t,p) -> (63 - t + p).
    # entry (64 : -1), base 0 + 63 = 63 (program base need not be aligned).
    c = run([64], [64], [1], [[-1, 1]], [63])
    assert (c.base, c.limits, c.strides, c.read_size) == (63, (64,), (-1,), 1)


def test_reversed_packet_not_contiguous():
    # (t,p) -> (15 - t, 31 - p): (16:-32),(32:-1); -32 == 32 * -1 merges them
    # into (512 : -1), a reversed read, which a 32-element packet cannot use.
    with raises(
        "innermost sequencer entry [512 : -1] is not contiguous: a packet of 32 "
        "elements needs innermost stride 0 or 1"
    ):
        run([16, 32], [16], [32], [[-1, 0], [0, -1]], [15, 31])


def test_strided_layout_offset_folding():
    # memref<4x16xi8, strided<[32, 1], offset: 8>>, base 64, identity map.
    # program base 64 + 8 = 72; (4:32),(16:1), 32 != 16 -> no merge.
    c = run([4, 16], [4], [16], memref_strides=[32, 1], memref_offset=8, base=64)
    assert c.base == 72
    assert (c.limits, c.strides) == ((4, 16), (32, 1))
    assert (c.contiguous_run, c.read_size, c.fetch_size, c.cycles) == (16, 16, 16, 4)


def test_strided_layout_with_map_constants():
    # memref<8x32xi8, strided<[64, 1], offset: 16>>, (t,p) -> (t + 2, p + 8),
    # base 256: offset 16 + 2*64 + 8 = 152 -> 408.
    c = run([8, 32], [4], [16], [[1, 0], [0, 1]], [2, 8],
            memref_strides=[64, 1], memref_offset=16, base=256)
    assert c.base == 408
    assert (c.limits, c.strides) == ((4, 16), (64, 1))


def test_bf16_offset_in_bytes():
    # memref<4x8xbf16>, (t,p) -> (t, p + 4) time [4] packet [4], base 8:
    # offset 4 elements = 8 bytes -> base 16.  (4:8),(4:1) no merge.
    c = run([4, 8], [4], [4], [[1, 0], [0, 1]], [0, 4], elem=target.BF16, base=8)
    assert c.base == 16
    assert (c.limits, c.strides, c.read_size, c.fetch_size) == ((4, 4), (8, 1), 4, 8)


def test_f4_even_offset_in_bytes():
    # memref<4x32xf4E2M1FN>, (t,p) -> (t + 1, p), time [2] packet [32], base 0:
    # offset 32 elements = 16 bytes.
    c = run([4, 32], [2], [32], [[1, 0], [0, 1]], [1, 0], elem=target.F4E2M1FN)
    assert c.base == 16
    assert (c.limits, c.strides) == ((64,), (1,))


def test_odd_4bit_offset():
    # memref<4x16xi4>, (t,p) -> (t, p + 1), packet [8]: offset 1.
    with raises(
        "odd 4-bit element offset 1 is not addressable: element 2i is the low "
        "nibble of byte i"
    ):
        run([4, 16], [4], [8], [[1, 0], [0, 1]], [0, 1], elem=target.I4)


def test_odd_4bit_layout_offset():
    # strided<[16, 1], offset: 3> for i4: offset 3 is odd.
    with raises("odd 4-bit element offset 3"):
        run([4, 16], [4], [16], memref_strides=[16, 1], memref_offset=3, elem=target.I4)


def test_odd_4bit_entry_stride():
    # memref<4x7xi4>, time [4], packet [6]: (4:7),(6:1); 7 != 6 -> stride 7
    # stays, and an access would start at element 7 (mid-byte).
    with raises("odd 4-bit entry stride 7"):
        run([4, 7], [4], [6], elem=target.I4)


# --------------------------------------------------------------------------
# Bounds
# --------------------------------------------------------------------------


def test_bounds_past_end():
    # memref<8x16xi8>, (t,p) -> (t, p + 1), p < 16: index 1 spans [1, 16].
    with raises(
        "index 1 of the memref reaches [1, 16] but the dimension has size 16: "
        "address outside the memref"
    ):
        run([8, 16], [8], [16], [[1, 0], [0, 1]], [0, 1])


def test_bounds_negative():
    # (t,p) -> (t - 1, p): index 0 spans [-1, 6].
    with raises("index 0 of the memref reaches [-1, 6] but the dimension has size 8"):
        run([8, 16], [8], [16], [[1, 0], [0, 1]], [-1, 0])


def test_bounds_exact_fit_ok():
    # (t,p) -> (7 - t, p) spans [0, 7] exactly.
    c = run([8, 16], [8], [16], [[-1, 0], [0, 1]], [7, 0])
    assert c.base == 112


@pytest.mark.parametrize(
    "memref, time, packet, msg",
    [
        ([0], [1], [1], "memref dimension 0 has size 0"),
        ([8], [0], [1], "time dimension 0 has size 0"),
        ([8], [1], [-2], "packet dimension 0 has size -2"),
    ],
)
def test_nonpositive_sizes(memref, time, packet, msg):
    with raises(msg):
        run(memref, time, packet, [[0, 0]])


def test_address_space_limit():
    # base 2^19 - 8, memref<16xi8>: the last element lands at 2^19 + 7, past one slice's DM.
    with raises("the fetch reaches DM byte addresses [524280, 524295], outside [0, 2^19 = 524288): address outside one slice's DM"):
        run([16], [1], [16], [[0, 1]], base=(1 << 19) - 8)
    run([8], [1], [8], [[0, 1]], base=(1 << 19) - 8)  # the last 8 bytes of DM


def test_unplaced_fetch_is_not_checked_against_the_end_of_dm():
    # Before fetch-place-dm a fetch has no base; the placement reports a kernel
    # that does not fit, with the slices that would make it fit (ir.md §2a).
    cfg = run([1 << 20], [1 << 15], [32], [[32, 1]], placed=False)
    assert cfg.base == 0
    with raises("outside [0, 2^19 = 524288)"):
        run([1 << 20], [1 << 15], [32], [[32, 1]])


# --------------------------------------------------------------------------
# Base
# --------------------------------------------------------------------------


def test_base_not_aligned():
    with raises("base 12 is not a multiple of 8 bytes"):
        run([16], [1], [16], [[0, 1]], base=12)


def test_base_too_large():
    with raises("base 524288 (0x80000) is not below 2^19 = 524288, the size of one slice's DM (16 banks x 4096 rows x 8 bytes)"):
        run([16], [1], [16], [[0, 1]], base=1 << 19)
    run([16], [1], [16], [[0, 1]], base=(1 << 19) - 16)


def test_base_negative():
    with raises("base -8 is negative"):
        run([16], [1], [16], [[0, 1]], base=-8)


def test_base_checked_before_bounds():
    # both the base and the bounds are wrong: the base error comes first.
    with raises("base 4 is not a multiple of 8 bytes"):
        run([8], [1], [16], [[0, 1]], base=4)


# --------------------------------------------------------------------------
# Broadcast (stride 0) and contiguity
# --------------------------------------------------------------------------


def test_broadcast_time_dim():
    # memref<16xbf16>, time [4], packet [16], (t,p) -> (p): (4:0),(16:1),
    # 0 != 16 -> no merge.  run 16; 16 bf16 = 32 B; cycles 4.
    c = run([16], [4], [16], [[0, 1]], elem=target.BF16)
    assert (c.limits, c.strides) == ((4, 16), (0, 1))
    assert (c.contiguous_run, c.read_size, c.fetch_size, c.cycles) == (16, 16, 32, 4)


def test_broadcast_packet_dim():
    # memref<4xf32>, time [4], packet [8], (t,p) -> (t): (4:1),(8:0).
    # innermost stride 0, 8 % 8 == 0: contiguous; run 1 -> read 1 f32 (4 B),
    # 8 words per packet, 32 cycles.
    c = run([4], [4], [8], [[1, 0]], elem=target.F32)
    assert (c.limits, c.strides) == ((4, 8), (1, 0))
    assert (c.contiguous_run, c.max_access_size) == (1, 1)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (1, 4, 8, 32)


def test_broadcast_everything_merges():
    # memref<1xf32>, time [4], packet [8], (t,p) -> (0): (4:0),(8:0) -> (32:0).
    c = run([1], [4], [8], [[0, 0]], elem=target.F32)
    assert (c.limits, c.strides, c.contiguous_run, c.cycles) == ((32,), (0,), 1, 32)


def test_rank0_memref_broadcast():
    # memref<f32>, time [4], packet [1], () -> (): the only entry is (4 : 0).
    c = run([], [4], [1], elem=target.F32, base=8)
    assert (c.base, c.limits, c.strides, c.read_size, c.cycles) == (8, (4,), (0,), 1, 4)


def test_single_element_entry():
    # memref<1xf32>, time [1], packet [1]: every entry vanishes -> (1 : 1).
    c = run([1], [1], [1], [[1, 1]], elem=target.F32)
    assert (c.limits, c.strides, c.read_size, c.fetch_size, c.cycles) == ((1,), (1,), 1, 4, 1)


def test_innermost_size_not_multiple_of_packet():
    # memref<4x16xi8>, packet [2, 16] with (t,a,b) -> (t, b) (a broadcast):
    # (4:16),(2:0),(16:1); 0 != 16 -> innermost (16:1), packet 32.  Legal since
    # hardware.md §3 allows a packet to span several contiguous runs: the run
    # is 16 (the broadcast entry stops it), gcd(32, 16) = 16 elements = 16
    # bytes per read, 2 reads per packet, 4 packets.
    c = run([4, 16], [4], [2, 16], [[1, 0, 0], [0, 0, 1]])
    assert (c.limits, c.strides) == ((4, 2, 16), (16, 0, 1))
    assert (c.contiguous_run, c.max_access_size, c.read_size, c.fetch_size) == (16, 16, 16, 16)
    assert (c.words_per_packet, c.cycles) == (2, 8)


def test_innermost_strided_packet():
    # memref<8x8xi8>, packet [8] read down a column: (t,p) -> (p, t): (8:1),(8:8).
    with raises("innermost sequencer entry [8 : 8] is not contiguous"):
        run([8, 8], [8], [8], [[0, 1], [1, 0]])


def test_contiguous_run_helper():
    assert contiguous_run([(4096, 32), (32, 1)]) == 131072
    assert contiguous_run([(3, 64), (4, 192)]) == 4  # literal: innermost size
    assert contiguous_run([(4, 1), (8, 0)]) == 1
    assert contiguous_run([(2, 0), (65536, 0)]) == 1  # a broadcast stays one element
    assert contiguous_run([(5, 100), (3, 32), (32, 1)]) == 96


def test_max_access_from_run():
    # memref<4x24xi8>, time [4, 3], packet [8], (t,u,p) -> (t, u*8 + p): (4:24),(3:8),(8:1)
    # -> (3:8),(8:1) merge (8 == 8) -> (24:1); then (4:24): 24 == 24 -> (96:1).
    c = run([4, 24], [4, 3], [8], [[1, 0, 0], [0, 8, 1]])
    assert (c.limits, c.strides, c.max_access_size, c.read_size) == ((96,), (1,), 8, 8)
    # time [4, 2], packet [12], (t,u,p) -> (t, u*12 + p): (4:24),(2:12),(12:1)
    # -> (96:1); max access gcd(12, 96) = 12; 12 and 6 bytes are illegal -> 4.
    c = run([4, 24], [4, 2], [12], [[1, 0, 0], [0, 12, 1]])
    assert (c.limits, c.max_access_size, c.read_size, c.fetch_size, c.words_per_packet) == (
        (96,), 12, 4, 4, 3)


# --------------------------------------------------------------------------
# Read size: main context, cast limit, pinned
# --------------------------------------------------------------------------


def i4_64(**kw):
    # memref<64xi4>, time [4], packet [16], (t,p) -> (t*16 + p): (64:1),
    # run 64, max access 16.
    return run([64], [4], [16], [[16, 1]], elem=target.I4, **kw)


def test_i4_no_cast_reads_16():
    c = i4_64()
    assert (c.max_access_size, c.read_size, c.fetch_size, c.words_per_packet) == (16, 16, 8, 1)


def test_i4_to_i32_derived_read_8():
    # 16 elements would cast to 64 B; 8 elements: 4 B read, 8 x 4 = 32 B out.
    c = i4_64(cast_out=target.I32)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (8, 4, 2, 8)


def test_i4_to_i32_pinned_8_ok():
    c = i4_64(cast_out=target.I32, read_size=8)
    assert (c.read_size, c.fetch_size) == (8, 4)


def test_i4_to_i32_pinned_16_error():
    with raises(
        "read_size 16 of i4 casts to 16 x 4 = 64 bytes of i32, more than one 32-byte flit"
    ):
        i4_64(cast_out=target.I32, read_size=16)


def test_pinned_not_dividing():
    # 32 i4 = 16 B is a legal size, but it does not divide max access 16.
    with raises("read_size 32 does not divide the max access size 16"):
        i4_64(read_size=32)


def test_pinned_bad_byte_size():
    with raises("read_size 3 of i4 is 1.5 bytes"):
        i4_64(read_size=3)
    # 12 i8 = 12 bytes: not 1/2/4/8/16/32
    with raises("read_size 12 of i8 is 12 bytes"):
        run([4, 24], [4, 2], [12], [[1, 0, 0], [0, 12, 1]], read_size=12)


def test_pinned_smaller_ok():
    c = i4_64(read_size=4)  # 2 bytes, divides 16
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (4, 2, 4, 16)


def test_i8_to_i32():
    # memref<4x32xi8> packet [32]: max access 32; cast i32: 32*4 = 128 > 32,
    # 16*4 = 64 > 32, 8*4 = 32 -> read 8 (8 B).
    c = run([4, 32], [4], [32], cast_out=target.I32)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (8, 8, 4, 16)


def test_f32_to_bf16():
    # memref<64xf32>, time [2], packet [32]: max 32; 8 f32 = 32 B read (16 is 64 B);
    # bf16 out 8 x 2 = 16 B -> read 8.
    c = run([64], [2], [32], [[32, 1]], elem=target.F32, cast_out=target.BF16)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (8, 32, 4, 8)


def test_f4_lookup_then_cast_f32_reads_8():
    # memref<8x64xf4E2M1FN>, time [8], packet [64]: (512:1), max access 64.
    # f32 cast: 64*4 = 256 B, 32*4 = 128 B, 16*4 = 64 B too big; 8 elements
    # = 4 B read -> 32 B out.
    c = run([8, 64], [8], [64], elem=target.F4E2M1FN, cast_out=target.F32)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (8, 4, 8, 64)
    # without the cast: 64 f4 = 32 B.
    c = run([8, 64], [8], [64], elem=target.F4E2M1FN)
    assert (c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (64, 32, 1, 8)


def test_no_legal_read_single_4bit():
    # one i4 element: 0.5 bytes, no legal read.
    with raises("no legal read size"):
        run([1], [1], [1], [[1, 1]], elem=target.I4)


def test_no_legal_read_4bit_broadcast():
    # memref<2xi4>, time [2], packet [2] broadcast: (t,p) -> (0): run 1.
    with raises("no legal read size"):
        run([2], [2], [2], [[0, 0]], elem=target.I4)


# --------------------------------------------------------------------------
# Sub context
# --------------------------------------------------------------------------


def test_sub_i8():
    # memref<4x16xi8>, time [4], packet [16]: (64:1); sub reads 8 i8;
    # words 2, cycles 8.
    c = run([4, 16], [4], [16], context="sub")
    assert (c.limits, c.read_size, c.fetch_size, c.words_per_packet, c.cycles) == (
        (64,), 8, 8, 2, 8)


def test_sub_bf16_and_f4():
    c = run([4, 16], [4], [16], context="sub", elem=target.BF16)
    assert (c.read_size, c.fetch_size, c.words_per_packet) == (4, 8, 4)
    c = run([4, 16], [4], [16], context="sub", elem=target.F4E2M1FN)
    assert (c.read_size, c.fetch_size, c.words_per_packet) == (16, 8, 1)


def test_sub_i8_packet_not_whole_reads():
    with raises(
        "the sub Fetch Unit reads exactly 8 bytes; a packet of 12 i8 elements "
        "(12 bytes) is not a whole number of 8-byte reads"
    ):
        run([4, 12], [4], [12], context="sub")


def test_sub_i4_packet_not_whole_reads():
    # 8 i4 = 4 bytes
    with raises("a packet of 8 i4 elements (4 bytes) is not a whole number of 8-byte reads"):
        run([4, 8], [4], [8], context="sub", elem=target.I4)


def test_sub_i4_to_i32_error():
    # 8 bytes of i4 = 16 elements -> 16 x 4 = 64 B of i32.
    with raises(
        "the sub Fetch Unit reads exactly 8 bytes = 16 i4 elements, which cast to "
        "16 x 4 = 64 bytes of i32, more than one 32-byte flit"
    ):
        run([4, 16], [4], [16], context="sub", elem=target.I4, cast_out=target.I32)


def test_sub_i8_to_i32_ok():
    # 8 i8 -> 8 x 4 = 32 B: fits.
    c = run([4, 16], [4], [16], context="sub", cast_out=target.I32)
    assert (c.read_size, c.fetch_size) == (8, 8)


def test_sub_pinned():
    assert run([4, 16], [4], [16], context="sub", read_size=8).read_size == 8
    with raises("read_size 16 is not possible on the sub Fetch Unit"):
        run([4, 16], [4], [16], context="sub", read_size=16)


def test_sub_broadcast_not_readable():
    # memref<4xi8>, packet [8] broadcast (t,p) -> (t): run 1, 8 does not divide 1.
    with raises("which does not divide the max access size 1"):
        run([4], [4], [8], [[1, 0]], context="sub")


# --------------------------------------------------------------------------
# Property: the entries enumerate exactly the stream's element offsets
# --------------------------------------------------------------------------


@st.composite
def fetches(draw):
    ntime = draw(st.integers(0, 3))
    npacket = draw(st.integers(0, 2))
    sizes = [draw(st.integers(1, 4)) for _ in range(ntime + npacket)]
    rank = draw(st.integers(1, 3))
    coeffs = [[draw(st.integers(-2, 3)) for _ in sizes] for _ in range(rank)]
    consts, shape = [], []
    for r in range(rank):
        lo = sum(min(0, c * (n - 1)) for c, n in zip(coeffs[r], sizes))
        hi = sum(max(0, c * (n - 1)) for c, n in zip(coeffs[r], sizes))
        extra = draw(st.integers(0, 2))
        consts.append(-lo + extra)
        shape.append(hi - lo + extra + 1 + draw(st.integers(0, 2)))
    elem = draw(st.sampled_from([target.I8, target.BF16, target.F32, target.I4]))
    return dict(
        memref_shape=shape, time_shape=sizes[:ntime], packet_shape=sizes[ntime:],
        map_coeffs=coeffs, map_consts=consts, elem=elem,
    )


@settings(max_examples=300, deadline=None)
@given(fetches())
def test_entries_enumerate_stream(f):
    shape = f["memref_shape"]
    strides = row_major(shape)
    try:
        c = run(**f, base=64)
    except SequencerError as e:
        # Bounds hold by construction: only contiguity, read size and 4-bit
        # addressing can fail.
        assert any(
            w in str(e) for w in ("not contiguous", "read size", "odd 4-bit")
        ), str(e)
        return
    sizes = [*f["time_shape"], *f["packet_shape"]]
    offs = []
    first = None
    for idx in itertools.product(*(range(n) for n in sizes)):
        e = sum(
            (k + sum(a * i for a, i in zip(row, idx))) * s
            for row, k, s in zip(f["map_coeffs"], f["map_consts"], strides)
        )
        first = e if first is None else first
        offs.append(e - first)
    assert c.base == 64 + first * f["elem"].bits // 8
    assert first * f["elem"].bits % 8 == 0
    assert np.array_equal(c.element_offsets(), np.array(offs, dtype=np.int64))
    assert 1 <= c.num_entries <= 8
    assert all(1 <= n <= 65536 for n in c.limits)
    assert c.packet_size == math.prod(f["packet_shape"])
    assert c.packet_size % c.read_size == 0 and c.max_access_size % c.read_size == 0
    assert c.cycles == math.prod(f["time_shape"]) * c.packet_size // c.read_size
