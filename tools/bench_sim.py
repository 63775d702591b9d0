#!/usr/bin/env python3
"""Benchmark the golden model against this machine's memory bandwidth.

1. **Decode vs copy.**  A DM image of random bytes (default 256 MiB = 512 Mi
   packed ``f4E2M1FN`` codes) and a ``seq.bin`` (written and read back with
   :mod:`fetchc.seqbin`) holding one contiguous main-context program,
   ``f4E2M1FN -> f8E4M3FN`` through the paired table (``--cast``: on to
   ``f32``).  Each round times ``np.copyto`` of as many bytes as the output
   holds into an array written before (the machine's copy bandwidth), then
   :func:`fetchc.golden.sim.simulate` (a fresh output array, as a user gets
   it: its first touch included), then
   :func:`fetchc.golden.sim.simulate_program` into an output array written
   before (``out=``: the decode alone, like the copy).  Reported: output
   bytes per second of each decode as a fraction of the copy's, the median
   of the per-round ratios (paired: all see the same machine load).
   Target: >= 0.50.
2. **run vs decode** (``--run-size N``, default 4096; 0 skips it): the
   ``examples/nvfp4_dequant_f32.mlir`` kernel, resized to an N x N NVFP4
   weight (random packed codes and finite block scales, tensor scale 0.5).
   Each round times :func:`fetchc.run` in process (compile, DM layout, both
   programs from the seq.bin bytes, block and tensor scale, commit) and,
   right before it, the decode alone: :func:`fetchc.golden.sim.simulate_program`
   of the codes' program (``dequant_nvfp4/0``: paired lookup + cast to f32)
   on the same DM image.  Reported: the median of the per-round ratios
   run / decode.  Target: <= 2.  ``--cli`` also times the two as commands
   (``fetchc run ... -o out.npz`` vs ``fetchc sim ... --program
   dequant_nvfp4/0 -o out.npy``, process start and file writing included)
   and prints them.

3. **slices vs one DM** (``--baseline PYTHON``): ``fetchc run`` of
   ``examples/nvfp4_dequant_f32.mlir`` (256 slices, 16 rows each) on a whole
   4096 x 4096 weight, against the same command run by a checkout from before
   slices (its example one 73 MiB DM), alternating; the median of the paired
   CPU-time ratios (:func:`slices_vs_single_dm`).  Target: <= 1.5.

Every output is checked against ``ml_dtypes`` on a sample.  The machine may
be shared and noisy: rounds are paired and medians reported, with the spread.

Usage::

    python tools/bench_sim.py [--mib 256] [--repeat 5] [--threads N] [--cast] [--strided]
                              [--run-size 4096] [--cli] [--files DIR] [--baseline PYTHON]

``--strided`` uses a non-mergeable loop nest over the same bytes (the
general, offset-array path); ``--files DIR`` also writes ``bench.seq.bin``
and ``dm.bin`` there and prints the equivalent ``fetchc sim`` command.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np

from fetchc import seqbin
from fetchc.golden import engine, sim
from fetchc.seqbin import Program, SeqBin, Table
from fetchc.target import F4E2M1FN, F8E4M3FN, F32, flit_count

ROOT = pathlib.Path(__file__).resolve().parents[1]


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


def _timed(fn):
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


def _spread(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.3f} (min {min(xs):.3f}, max {max(xs):.3f})"


def decode_vs_copy(a: argparse.Namespace) -> float:
    t0 = time.perf_counter()
    sb, dm = build(a.mib, a.cast, a.strided)
    p = sb.programs[0]
    out_bytes = sim.sim_dtype(p.out_dtype).itemsize * int(np.prod(p.limits))
    src = np.frombuffer(np.random.default_rng(2).bytes(out_bytes), dtype=np.uint8)
    dst = np.empty_like(src)
    dst[:] = 0  # written before: the copy measures bandwidth, not page faults
    print(f"built {a.mib} MiB DM image + seq.bin in {time.perf_counter() - t0:.2f}s")
    print(f"program: {p.in_dtype} -> {p.out_dtype}, sequencer {seqbin.sequencer_text(p)}, "
          f"threads {a.threads or engine.default_threads()}, output {out_bytes >> 20} MiB")  # fmt: skip
    reuse = np.empty(out_bytes // sim.sim_dtype(p.out_dtype).itemsize, sim.sim_dtype(p.out_dtype))
    reuse.view(np.uint8)[:] = 0
    t_copy, t_fresh, t_sim, t_warm, ratios, warm_ratios, fresh_ratios = [], [], [], [], [], [], []
    out = None
    for _ in range(a.repeat):
        tc, _ = _timed(lambda: np.copyto(dst, src))
        tf, fresh = _timed(lambda: src.copy())  # a copy into a new array: its first touch included
        del fresh
        out = None  # free the previous result first: every decode writes a fresh array
        ts, res = _timed(lambda: sim.simulate(sb, dm, threads=a.threads, progress=False))
        out = res["bench/0"]
        tw, _ = _timed(lambda: sim.simulate_program(p, sb.tables, dm, threads=a.threads, progress=False, out=reuse))
        t_copy.append(tc)
        t_fresh.append(tf)
        t_sim.append(ts)
        t_warm.append(tw)
        ratios.append(tc / ts)
        warm_ratios.append(tc / tw)
        fresh_ratios.append(tf / ts)
    assert out is not None
    check(sb, dm, out, a.strided)
    check(sb, dm, reuse, a.strided)
    gb = out_bytes / 1e9
    print(f"np.copyto ({out_bytes >> 20} MiB into a written array): {_spread(t_copy)} s, "
          f"{gb / statistics.median(t_copy):.2f} GB/s")  # fmt: skip
    print(f"src.copy() (the same bytes into a new array): {_spread(t_fresh)} s, "
          f"{gb / statistics.median(t_fresh):.2f} GB/s")  # fmt: skip
    print(f"simulate(), fresh output: {_spread(t_sim)} s, output {gb / statistics.median(t_sim):.2f} GB/s, "
          f"input {a.mib * 1.048576e-3 / statistics.median(t_sim):.2f} GB/s")  # fmt: skip
    print(f"simulate_program(out=written array): {_spread(t_warm)} s, output {gb / statistics.median(t_warm):.2f} GB/s")
    r = statistics.median(ratios)
    rw = statistics.median(warm_ratios)
    print(f"decode / copy bandwidth, fresh output (paired, median of {a.repeat}): {r:.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f}; target >= 0.50)")  # fmt: skip
    print(f"decode / copy bandwidth, written output (paired, median of {a.repeat}): {rw:.2f} "
          f"(min {min(warm_ratios):.2f}, max {max(warm_ratios):.2f})")  # fmt: skip
    rf = statistics.median(fresh_ratios)
    print(f"decode, fresh output / copy into a new array (paired, median of {a.repeat}): {rf:.2f} "
          f"(min {min(fresh_ratios):.2f}, max {max(fresh_ratios):.2f})")  # fmt: skip
    if a.files:
        os.makedirs(a.files, exist_ok=True)
        sp, dp = os.path.join(a.files, "bench.seq.bin"), os.path.join(a.files, "dm.bin")
        with open(sp, "wb") as f:
            f.write(seqbin.write(sb))
        dm.tofile(dp)
        print(f"equivalent CLI: fetchc sim {sp} --dm {dp} --program bench/0 -o {os.path.join(a.files, 'out.npy')}")
    return r


def nvfp4_text(n: int) -> str:
    """``examples/nvfp4_dequant_f32.mlir`` for an ``n`` x ``n`` weight: 16
    rows per slice on ``n / 16`` slices (``n`` a multiple of 64, at most 8192)."""
    text = (ROOT / "examples" / "nvfp4_dequant_f32.mlir").read_text()
    return (
        text.replace("16x4096", f"16x{n}").replace("16x256", f"16x{n // 16}")
        .replace("[16, 64]", f"[16, {n // 64}]").replace("rngd.slices = 256", f"rngd.slices = {n // 16}")
    )  # fmt: skip


def run_vs_decode(a: argparse.Namespace) -> float:
    import fetchc
    from fetchc.golden.run import kernel_image

    n = a.run_size
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 256, (n, n // 2), dtype=np.uint8)
    bscale = rng.integers(0, 0x7F, (n, n // 16), dtype=np.uint8)  # finite scales, as a checkpoint holds
    text = nvfp4_text(n)
    result = fetchc.compile(text)
    sb = seqbin.read(result.seq_bin)
    (kernel,) = sb.manifest.kernels  # type: ignore[union-attr]
    image = kernel_image(kernel, {"codes": codes, "bscale": bscale})
    prog = sb.programs[0]
    t_dec, t_run, ratios = [], [], []
    out = None
    for _ in range(a.repeat):
        out = None
        td, dec = _timed(lambda: sim.simulate_slices(prog, sb.tables, image, threads=a.threads, progress=False))
        del dec
        tr, out = _timed(lambda: fetchc.run(text, codes=codes, bscale=bscale, gscale=0.5))
        t_dec.append(td)
        t_run.append(tr)
        ratios.append(tr / td)
    assert out is not None
    # sample check: (E2M1 x f32(bscale)) x 0.5, exact here (short significands, normal results)
    pos = rng.integers(0, n * n, 4096)
    row, col = np.divmod(pos, n)
    byte = codes[row, col // 2]
    code = np.where(col % 2 == 0, byte & 0xF, byte >> 4).astype(np.uint8)
    val = code.view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    s = bscale[row, col // 16].view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    want = (val * s * 0.5).astype(np.float32)
    if not np.array_equal(out["out"].reshape(-1)[pos].view(np.uint32), want.view(np.uint32)):
        raise SystemExit("bench_sim: fetchc.run output does not match the reference sample")
    r = statistics.median(ratios)
    print(f"NVFP4 {n}x{n} on {n // 16} slices: decode alone (simulate_slices of dequant_nvfp4/0): {_spread(t_dec)} s")
    print(f"NVFP4 {n}x{n}: fetchc.run (compile + layout + 2 programs + scales + commit): {_spread(t_run)} s")
    print(f"run / decode (paired, median of {a.repeat}): {r:.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}; "
          f"target <= 2)")  # fmt: skip
    if a.cli:
        cli_run_vs_sim(a, text, codes, bscale, result.seq_bin)
    return r


def cli_run_vs_sim(a: argparse.Namespace, text: str, codes: np.ndarray, bscale: np.ndarray, seq: bytes) -> None:
    exe = str(pathlib.Path(sys.executable).with_name("fetchc"))
    with tempfile.TemporaryDirectory() as d:
        dp = pathlib.Path(d)
        (dp / "k.mlir").write_text(text)
        (dp / "k.bin").write_bytes(seq)
        np.save(dp / "codes.npy", codes)
        np.save(dp / "bscale.npy", bscale)
        args = ["--arg", f"codes={dp / 'codes.npy'}", "--arg", f"bscale={dp / 'bscale.npy'}"]
        run_cmd = [exe, "run", str(dp / "k.mlir"), *args, "--arg", "gscale=0.5", "-o", str(dp / "out.npz")]
        sim_cmd = [exe, "sim", str(dp / "k.bin"), *args, "--program", "dequant_nvfp4/0", "-o", str(dp / "dec.npy")]
        t_sim, t_run, ratios = [], [], []
        for _ in range(a.repeat):
            ts, _ = _timed(lambda: subprocess.run(sim_cmd, check=True))
            tr, _ = _timed(lambda: subprocess.run(run_cmd, check=True))
            t_sim.append(ts)
            t_run.append(tr)
            ratios.append(tr / ts)
        print(f"CLI decode alone: {_spread(t_sim)} s: {shlex.join(sim_cmd)}")
        print(f"CLI fetchc run:   {_spread(t_run)} s: {shlex.join(run_cmd)}")
        print(f"CLI run / decode (paired, median of {a.repeat}): {statistics.median(ratios):.2f} "
              f"(process start and the .npz/.npy writing included)")  # fmt: skip


def slices_vs_single_dm(a: argparse.Namespace) -> float:
    """Part 3 (``--baseline PYTHON``): ``fetchc run`` of the 4096 x 4096
    NVFP4 example on 256 slices (this checkout) against the same command in
    a checkout from before slices existed, whose example is one 73 MiB DM
    (``PYTHON``: that checkout's venv python, e.g. ``../old/.venv/bin/python``),
    on the same whole-weight ``.npy`` files; alternating, ``--repeat`` rounds.
    Reported: wall and CPU (user + system of the child) per side, and the
    median of the per-round CPU ratios slices / single DM (target <= 1.5).
    Both outputs are compared bit for bit."""
    import resource

    with tempfile.TemporaryDirectory() as d:
        dp = pathlib.Path(d)
        rng = np.random.default_rng(3)
        np.save(dp / "w.npy", rng.integers(0, 256, (4096, 2048), dtype=np.uint8))
        np.save(dp / "s.npy", rng.integers(0, 0x7F, (4096, 256), dtype=np.uint8))
        base_root = pathlib.Path(subprocess.run(
            [a.baseline, "-c", "import fetchc, pathlib; print(pathlib.Path(fetchc.__file__).resolve().parents[1])"],
            check=True, capture_output=True, text=True, cwd=dp).stdout.strip())  # fmt: skip
        args = ["--arg", f"codes={dp / 'w.npy'}", "--arg", f"bscale={dp / 's.npy'}", "--arg", "gscale=0.5"]
        sides = {
            "slices": [sys.executable, "-m", "fetchc.cli", "run", str(ROOT / "examples/nvfp4_dequant_f32.mlir"), *args,
                       "-o", str(dp / "slices.npz")],
            "single": [a.baseline, "-m", "fetchc.cli", "run", str(base_root / "examples/nvfp4_dequant_f32.mlir"),
                       *args, "-o", str(dp / "single.npz")],
        }  # fmt: skip
        wall: dict[str, list[float]] = {k: [] for k in sides}
        cpu: dict[str, list[float]] = {k: [] for k in sides}
        for _ in range(a.repeat):
            for k, cmd in sides.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t, _ = _timed(lambda: subprocess.run(cmd, check=True, cwd=dp))  # cwd: never import this checkout
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                wall[k].append(t)
                cpu[k].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        with np.load(dp / "slices.npz") as x, np.load(dp / "single.npz") as y:
            if not np.array_equal(x["out"].view(np.uint32), y["out"].view(np.uint32)):
                raise SystemExit("bench_sim: the 256-slice and the single-DM outputs differ")
    ratios = [c / b for c, b in zip(cpu["slices"], cpu["single"])]
    wratios = [c / b for c, b in zip(wall["slices"], wall["single"])]
    for k in sides:
        print(f"{k:>6}: wall {_spread(wall[k])} s, cpu {_spread(cpu[k])} s: {shlex.join(sides[k])}")
    r = statistics.median(ratios)
    print(f"fetchc run, 256 slices / single DM (paired, median of {a.repeat}): cpu {r:.2f} (min {min(ratios):.2f}, "
          f"max {max(ratios):.2f}), wall {statistics.median(wratios):.2f}; target <= 1.5")  # fmt: skip
    return r


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_sim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256, help="DM image size in MiB (default 256); 0 skips part 1")
    ap.add_argument("--repeat", type=int, default=5, help="paired rounds (default 5)")
    ap.add_argument("--threads", type=int, default=None, help="worker threads (default: fetchc.golden.sim's choice)")
    ap.add_argument("--cast", action="store_true", help="decode to f32 (lookup + cast)")
    ap.add_argument("--strided", action="store_true", help="non-mergeable loop nest (general path)")
    ap.add_argument("--run-size", type=int, default=4096, help="N of the N x N NVFP4 run benchmark; 0 skips it")
    ap.add_argument("--cli", action="store_true", help="also time fetchc run / fetchc sim as commands")
    ap.add_argument("--files", metavar="DIR", help="also write bench.seq.bin and dm.bin into DIR")
    ap.add_argument("--baseline", metavar="PYTHON",
                    help="part 3: the python of a checkout from before slices; compare fetchc run of the NVFP4 example")
    a = ap.parse_args(argv)
    print(f"command: python tools/bench_sim.py {shlex.join(argv)}".rstrip())
    if a.mib:
        decode_vs_copy(a)
    if a.run_size:
        run_vs_decode(a)
    if a.baseline:
        slices_vs_single_dm(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
