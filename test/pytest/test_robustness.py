"""Robustness guarantees of fetchc (docs/robustness.md).

* Determinism: the same input gives byte-identical ``seq.bin`` and IR across
  runs and across ``PYTHONHASHSEED`` values (0, 1, 12345), in fresh
  interpreters.
* Output safety: a failing command leaves an existing ``-o`` file untouched
  and creates none; no temporary file is left behind, on success or failure.
* A short, bounded hypothesis fuzz of the ``seq.bin`` reader on compiled
  files: it raises only ``SeqBinError``; what it accepts disassembles, and
  reads back the same after a rewrite (nothing is lost).
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchc.cli import main
from fetchc.seqbin import SeqBinError, disassemble, read, to_json, write

ROOT = Path(__file__).resolve().parents[2]

# A module with one program of each kind: lookup + cast (via convert), zero
# point into a contraction, a sub-context plain fetch, a cast, and an NVFP4
# dequant (two programs), in two functions.
MIXED = textwrap.dedent(
    """\
    func.func @a(%x: memref<64x32xf4E2M1FN>, %ox: memref<2048xf32>, %y: memref<64x32xi8>, %w: !rngd.trf<i8>,
                 %oy: memref<2048xi32>, %z: memref<16x8xbf16>, %oz: memref<128xbf16>) {
      %x0 = fetch.fetch %x {base = 0 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
      %x1 = fetch.convert %x0 : !fetch.stream<main, [64], [32], f4E2M1FN> -> !fetch.stream<main, [64], [32], f32>
      rngd.commit %x1, %ox : !fetch.stream<main, [64], [32], f32>, memref<2048xf32>
      %y0 = fetch.fetch %y {base = 4096 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
      %y1 = fetch.zp_sub %y0, -3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
      %y2 = rngd.switch %y1 : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
      %y3 = rngd.collect %y2 : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
      %y4 = rngd.contract_outer %y3, %w : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
      rngd.commit %y4, %oy : !fetch.stream<main, [64], [32], i32>, memref<2048xi32>
      %z0 = fetch.fetch %z {base = 8192 : i64} : memref<16x8xbf16> -> !fetch.stream<sub, [16], [8], bf16>
      rngd.commit %z0, %oz : !fetch.stream<sub, [16], [8], bf16>, memref<128xbf16>
      func.return
    }
    func.func @b(%m: memref<4x64xf4E2M1FN>, %bs: memref<4x4xf8E4M3FN>, %g: f32, %o: memref<256xf32>,
                 %c: memref<16x16xi8>, %oc: memref<256xi32>) {
      %s0 = fetch.fetch %m {base = 0 : i64} : memref<4x64xf4E2M1FN> -> !fetch.stream<main, [4], [64], f4E2M1FN>
      %w = fetch.dequant %s0, %bs, %g {format = "nvfp4", scale_base = 4096 : i64}
          : !fetch.stream<main, [4], [64], f4E2M1FN>, memref<4x4xf8E4M3FN>, f32 -> !fetch.stream<main, [4], [64], f32>
      rngd.commit %w, %o : !fetch.stream<main, [4], [64], f32>, memref<256xf32>
      %c0 = fetch.fetch %c {base = 64 : i64, map = affine_map<(d0, d1) -> (15 - d0, d1)>}
          : memref<16x16xi8> -> !fetch.stream<main, [16], [16], i8>
      %c1 = fetch.cast %c0 : !fetch.stream<main, [16], [16], i8> -> !fetch.stream<main, [16], [16], i32>
      rngd.commit %c1, %oc : !fetch.stream<main, [16], [16], i32>, memref<256xi32>
      func.return
    }
    """
)

BAD = textwrap.dedent(
    """\
    func.func @f(%m: memref<16x16xi4>, %w: !rngd.trf<i8>, %o: memref<256xi32>) {
      %s = fetch.fetch %m {base = 0 : i64} : memref<16x16xi4> -> !fetch.stream<main, [16], [16], i4>
      %z = fetch.zp_sub %s, 8 : !fetch.stream<main, [16], [16], i4> -> !fetch.stream<main, [16], [16], i5>
      %c = rngd.contract_outer %z, %w : !fetch.stream<main, [16], [16], i5>, !rngd.trf<i8> -> !fetch.stream<main, [16], [16], i32>
      rngd.commit %c, %o : !fetch.stream<main, [16], [16], i32>, memref<256xi32>
      func.return
    }
    """
)


def _inputs(tmp_path: Path) -> list[Path]:
    """The inputs for the determinism checks: the shipped examples, the valid
    programs of the fuzz corpus and MIXED."""
    paths = sorted((ROOT / "examples").glob("*.mlir"))
    corpus = ROOT / "test" / "fuzz-corpus"
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    paths += sorted(corpus / k for k, e in manifest.items()
                    if e["tool"] == "compile" and e["exit"] == 0 and "--verify-diagnostics" not in e.get("args", []))
    mixed = tmp_path / "mixed.mlir"
    mixed.write_text(MIXED)
    return paths + [mixed]


_COMPILE_ALL = textwrap.dedent(
    """\
    import hashlib, json, os, sys, tempfile
    from fetchc.cli import main
    out = {}
    d = tempfile.mkdtemp()
    for path in sys.argv[1:]:
        for emit in ("bin", "mlir", "seq"):
            o = os.path.join(d, "out")
            rc = main([path, "-o", o, "--emit=" + emit])
            out[path + " " + emit] = [rc, open(o, "rb").read().hex() if rc == 0 else None]
            if rc == 0:
                os.unlink(o)
    print(json.dumps(out))
    """
)


def _compile_in_fresh_interpreter(paths: list[Path], hashseed: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    p = subprocess.run(
        [sys.executable, "-c", _COMPILE_ALL, *map(str, paths)],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    )
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_deterministic_across_hash_seeds(tmp_path: Path):
    paths = _inputs(tmp_path)
    runs = {seed: _compile_in_fresh_interpreter(paths, seed) for seed in ("0", "1", "12345")}
    first = runs["0"]
    assert all(rc == 0 for rc, _ in first.values()), {k: v[0] for k, v in first.items()}
    for seed, result in runs.items():
        for key in first:
            assert result[key] == first[key], f"{key} differs between PYTHONHASHSEED=0 and {seed}"


def _compile(argv: list[str], cwd: Path | None = None) -> tuple[int, str]:
    err = io.StringIO()
    saved, saved_cwd = sys.stderr, os.getcwd()
    sys.stderr = err
    try:
        if cwd is not None:
            os.chdir(cwd)
        rc = main(argv)
    finally:
        sys.stderr = saved
        os.chdir(saved_cwd)
    return rc, err.getvalue()


def test_deterministic_within_one_process(tmp_path: Path):
    src = tmp_path / "mixed.mlir"
    src.write_text(MIXED)
    outs = []
    for i in range(3):
        for emit in ("bin", "mlir", "seq"):
            rc, err = _compile([str(src), "-o", str(tmp_path / f"o{i}.{emit}"), f"--emit={emit}"])
            assert rc == 0, err
        outs.append(tuple((tmp_path / f"o{i}.{e}").read_bytes() for e in ("bin", "mlir", "seq")))
    assert outs[0] == outs[1] == outs[2]
    sb = read(outs[0][0])
    assert [p.name for p in sb.programs] == ["a/0", "a/1", "a/2", "b/0", "b/1", "b/2"]


# --------------------------------------------------------------------------
# Output safety
# --------------------------------------------------------------------------

EXISTING = b"precious bytes that a failing compile must not touch\n"


def _listing(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


@pytest.mark.parametrize(
    "argv_tail, source",
    [
        ([], BAD),  # verifier error
        ([], "func.func @f( {\n"),  # parse error
        ([], b"\xff\xfe not utf-8"),  # bad bytes
        (["-p", "fetch-legalize-convert"], MIXED),  # --emit=bin before fetch_seq
        (["-p", "no-such-pass"], MIXED),  # bad pipeline
        (["--emit=mlir"], BAD),
        (["--emit=seq"], BAD),
    ],
)
def test_failing_compile_leaves_existing_output_untouched(tmp_path: Path, argv_tail, source):
    src = tmp_path / "in.mlir"
    src.write_bytes(source if isinstance(source, bytes) else source.encode())
    out = tmp_path / "out.bin"
    out.write_bytes(EXISTING)
    os.utime(out, (1_000_000_000, 1_000_000_000))
    before = _listing(tmp_path)
    rc, err = _compile([str(src), "-o", str(out), *argv_tail])
    assert rc == 1, err
    assert "error:" in err
    assert out.read_bytes() == EXISTING
    assert out.stat().st_mtime == 1_000_000_000
    assert _listing(tmp_path) == before, "a temporary file was left behind"


def test_failing_compile_creates_no_output(tmp_path: Path):
    src = tmp_path / "in.mlir"
    src.write_text(BAD)
    rc, err = _compile([str(src), "-o", str(tmp_path / "new.bin")])
    assert rc == 1
    assert _listing(tmp_path) == ["in.mlir"]


def test_successful_compile_replaces_output_without_leftovers(tmp_path: Path):
    src = tmp_path / "in.mlir"
    src.write_text(MIXED)
    out = tmp_path / "out.bin"
    out.write_bytes(EXISTING)
    rc, err = _compile([str(src), "-o", str(out)])
    assert rc == 0, err
    read(out.read_bytes())
    assert _listing(tmp_path) == ["in.mlir", "out.bin"]


def test_unwritable_output_is_an_error(tmp_path: Path):
    src = tmp_path / "in.mlir"
    src.write_text(MIXED)
    rc, err = _compile([str(src), "-o", str(tmp_path / "no" / "such" / "dir" / "out.bin")])
    assert rc == 1
    assert "error: cannot write" in err
    assert _listing(tmp_path) == ["in.mlir"]


def test_failing_dis_leaves_existing_output_untouched(tmp_path: Path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"FSEQ" + bytes(40))
    out = tmp_path / "out.txt"
    out.write_bytes(EXISTING)
    before = _listing(tmp_path)
    rc, err = _compile(["dis", str(bad), "-o", str(out)])
    assert rc == 1 and "error:" in err
    assert out.read_bytes() == EXISTING
    assert _listing(tmp_path) == before


def test_failing_sim_leaves_existing_output_untouched(tmp_path: Path):
    pytest.importorskip("fetchc.golden.sim")
    src = tmp_path / "in.mlir"
    src.write_text(MIXED)
    binary = tmp_path / "in.bin"
    assert _compile([str(src), "-o", str(binary)])[0] == 0
    dm = tmp_path / "dm.bin"
    dm.write_bytes(bytes(16))  # far too small: every program reads outside it
    out = tmp_path / "out.npz"
    out.write_bytes(EXISTING)
    before = _listing(tmp_path)
    rc, err = _compile(["sim", str(binary), "--dm", str(dm), "-o", str(out)])
    assert rc == 1 and "error:" in err
    assert out.read_bytes() == EXISTING
    assert _listing(tmp_path) == before


# --------------------------------------------------------------------------
# Bounded hypothesis fuzz of the seq.bin reader
# --------------------------------------------------------------------------


def _fix(b: bytearray) -> bytes:
    if len(b) >= 20:
        struct.pack_into("<I", b, 16, len(b))
    if len(b) >= 24:
        b[20:24] = bytes(4)
        struct.pack_into("<I", b, 20, zlib.crc32(bytes(b)) & 0xFFFFFFFF)
    return bytes(b)


_SEEDS: list[bytes] = []


def _seeds() -> list[bytes]:
    if not _SEEDS:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "in.mlir"
            src.write_text(MIXED)
            out = Path(d) / "out.bin"
            rc, err = _compile([str(src), "-o", str(out)])
            assert rc == 0, err
            _SEEDS.append(out.read_bytes())
    return _SEEDS


_edit = st.tuples(
    st.integers(min_value=0, max_value=4000),  # offset (mod file length)
    st.sampled_from(["u8", "u32", "flip", "trunc", "insert"]),
    st.integers(min_value=0, max_value=0xFFFFFFFF),
)


def _check_reader(data: bytes) -> None:
    try:
        sb = read(data)
    except SeqBinError:
        return
    # Accepted: it must print, and survive a rewrite unchanged.
    disassemble(data)
    json.dumps(to_json(data))
    assert read(write(sb)) == sb


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(_edit, min_size=1, max_size=4), fix=st.booleans())
def test_seqbin_reader_fuzz(edits, fix):
    b = bytearray(_seeds()[0])
    for off, how, value in edits:
        if not b:
            break
        i = off % len(b)
        if how == "u8":
            b[i] = value & 0xFF
        elif how == "u32" and i + 4 <= len(b):
            struct.pack_into("<I", b, i & ~3, value)
        elif how == "flip":
            b[i] ^= 1 << (value % 8)
        elif how == "trunc":
            del b[i:]
        else:
            b[i:i] = value.to_bytes(4, "little")
    _check_reader(_fix(b) if fix else bytes(b))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(row=st.integers(min_value=0, max_value=2), field=st.sampled_from([8, 12]),
       value=st.sampled_from([0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 1 << 24, 0x10000001]))
def test_seqbin_huge_declared_sizes_do_not_allocate(row, field, value):
    b = bytearray(_seeds()[0])
    struct.pack_into("<I", b, 32 + 16 * row + field, value)
    data = _fix(b)
    tracemalloc.start()
    try:
        _check_reader(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"the reader allocated {peak} bytes for a {len(data)}-byte file"


def test_deeply_nested_type_parses():
    """A type nested N deep (fuzzer input: ``memref<memref<...>>``) parses
    to the nested type it spells, at every level (the type memo that once
    scanned such spellings quadratically is gone)."""
    from fetchc.frontend.context import make_context
    from fetchc.frontend.parsing import parse_module

    n = 60
    nested = "memref<" * n + "f32" + ">" * n
    text = f"func.func @k(%a: {nested}, %b: {nested}) {{\n  func.return\n}}\n"
    module = parse_module(make_context(), text, "nested.mlir")
    (func,) = module.body.block.ops
    t = func.args[0].type
    for _ in range(n - 1):
        t = t.element_type
    assert str(t.element_type) == "f32"
    assert func.args[0].type == func.args[1].type
