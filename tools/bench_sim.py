#!/usr/bin/env python3
"""Benchmark the golden model (fetchc.golden.sim) on a large packed-e2m1 decode.

Builds a DM image of random bytes (default 256 MiB = 512 Mi packed
``f4E2M1FN`` codes) and a ``seq.bin`` (written and read back with
:mod:`fetchc.seqbin`) holding one contiguous main-context program:
``f4E2M1FN -> f8E4M3FN`` through the paired table, loop nest
``[N/65536 : 65536, 65536 : 1] : 64`` (32-byte reads).  Times
:func:`fetchc.golden.sim.simulate` and prints the input rate in GB/s (10^9 bytes of
DM image per second; the output is twice as many bytes), the best of
``--repeat`` runs, and checks a sample of the output against ``ml_dtypes``.

Usage::

    python tools/bench_sim.py [--mib 256] [--repeat 3] [--threads N] [--cast] [--strided]
                              [--files DIR]

``--cast`` adds the ``f8E4M3FN -> f32`` cast (4x the output bytes);
``--strided`` uses a non-mergeable loop nest over the same bytes, which
exercises the general (offset-array) path; ``--files DIR`` also writes
``bench.seq.bin`` and ``dm.bin`` there and prints the equivalent
``fetchc sim`` command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import ml_dtypes
import numpy as np

from fetchc import seqbin
from fetchc.golden import sim
from fetchc.seqbin import Program, SeqBin, Table
from fetchc.target import F4E2M1FN, F8E4M3FN, F32, flit_count


def build(mib: int, cast: bool, strided: bool) -> tuple[SeqBin, np.ndarray]:
    nbytes = mib << 20
    dm = np.frombuffer(np.random.default_rng(0).bytes(nbytes), dtype=np.uint8)
    elems = 2 * nbytes
    inner = 65536
    if elems % inner:
        raise SystemExit(f"--mib {mib}: the image must hold a multiple of {inner} elements")
    limits: tuple[int, ...] = (elems // inner, inner)
    strides: tuple[int, ...] = (inner, 1)
    if strided:  # same bytes, visited as two interleaved halves: not mergeable
        limits, strides = (2, elems // inner // 2, inner), (inner, 2 * inner, 1)
    out = F32 if cast else F8E4M3FN
    packet = 64 if not cast else 8  # a cast's output per read must fit one 32-byte flit
    read_elems = packet
    prog = Program(
        name="bench/0", unit=0, in_dtype=F4E2M1FN, out_dtype=out, base=0, packet_size=packet,
        fetch_size=read_elems // 2, limits=limits, strides=strides, stages=3 if cast else 1, table=0,
        type_conversion=3 if cast else None, zero_point0=0, num_zero_points=0, zp_mode=0,
        flit_count=flit_count(packet, out), words_per_packet=1,
    )  # fmt: skip
    sb = seqbin.read(seqbin.write(SeqBin((Table.for_pair(F4E2M1FN, F8E4M3FN),), (prog,))))
    return sb, dm


def check(sb: SeqBin, dm: np.ndarray, out: np.ndarray, strided: bool) -> None:
    """Compare a few thousand elements with ml_dtypes (nibbles low-first)."""
    p = sb.programs[0]
    flat = out.reshape(-1)
    rng = np.random.default_rng(1)
    pos = rng.integers(0, flat.size, 4096)
    if strided:
        n_mid, inner = p.limits[1], p.limits[2]
        half, rest = np.divmod(pos, n_mid * inner)
        mid, lo = np.divmod(rest, inner)
        elem = half * inner + mid * 2 * inner + lo
    else:
        elem = pos
    byte = dm[elem // 2]
    codes = np.where(elem % 2 == 0, byte & 0xF, byte >> 4).astype(np.uint8)
    want = codes.view(ml_dtypes.float4_e2m1fn).astype(ml_dtypes.float8_e4m3fn)
    if p.out_dtype == F32:
        ok = np.array_equal(flat[pos].view(np.uint32), want.astype(np.float32).view(np.uint32))
    else:
        ok = np.array_equal(flat[pos], want.view(np.uint8))
    if not ok:
        raise SystemExit("bench_sim: output does not match the ml_dtypes reference")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_sim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256, help="DM image size in MiB (default 256)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (default 3)")
    ap.add_argument("--threads", type=int, default=None, help="worker threads (default: fetchc.golden.sim's choice)")
    ap.add_argument("--cast", action="store_true", help="decode to f32 (lookup + cast)")
    ap.add_argument("--strided", action="store_true", help="non-mergeable loop nest (general path)")
    ap.add_argument("--files", metavar="DIR", help="also write bench.seq.bin and dm.bin into DIR")
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    sb, dm = build(a.mib, a.cast, a.strided)
    p = sb.programs[0]
    print(f"built {a.mib} MiB DM image + seq.bin in {time.perf_counter() - t0:.2f}s")
    print(f"program: {p.in_dtype} -> {p.out_dtype}, sequencer {seqbin.sequencer_text(p)}, "
          f"threads {a.threads or sim._default_threads()}")  # fmt: skip
    times = []
    out = None
    for _ in range(a.repeat):
        out = None  # free the previous result first
        t = time.perf_counter()
        out = sim.simulate(sb, dm, threads=a.threads, progress=False)["bench/0"]
        times.append(time.perf_counter() - t)
    assert out is not None
    check(sb, dm, out, a.strided)
    gb_in = dm.nbytes / 1e9
    best, med = min(times), statistics.median(times)
    print(f"simulate(): best {best:.3f}s, median {med:.3f}s over {a.repeat} runs")
    print(f"input {gb_in / best:.2f} GB/s (best), {gb_in / med:.2f} GB/s (median); "
          f"output {out.nbytes / 1e9 / best:.2f} GB/s; {out.size / best / 1e9:.2f} G elements/s")  # fmt: skip
    cmd = "python tools/bench_sim.py " + " ".join(argv)
    print(f"command: {cmd.strip()}")
    if a.files:
        os.makedirs(a.files, exist_ok=True)
        sp, dp = os.path.join(a.files, "bench.seq.bin"), os.path.join(a.files, "dm.bin")
        with open(sp, "wb") as f:
            f.write(seqbin.write(sb))
        dm.tofile(dp)
        print(f"equivalent CLI: fetchc sim {sp} --dm {dp} --program bench/0 -o {os.path.join(a.files, 'out.npy')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
