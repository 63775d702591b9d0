"""The ``fetchc`` command's dataclasses code cache (fetchc/startup.py): one
file per Python and subcommand, never changing a result, surviving a corrupt
file, pruning stale entries, and never touched when disabled."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "int8_zero_point_contract.mlir"
TAG = sys.implementation.cache_tag


def _fetchc(args, cache_dir, cwd):
    env = dict(os.environ, FETCHC_CACHE_DIR=str(cache_dir))
    return subprocess.run(
        [sys.executable, "-m", "fetchc.cli", *args], env=env, cwd=cwd, capture_output=True, text=True
    )


def _compile(tmp_path, cache_dir, out):
    r = _fetchc([str(EXAMPLE), "-o", str(tmp_path / out)], cache_dir, tmp_path)
    assert r.returncode == 0, r.stderr
    return (tmp_path / out).read_bytes()


def test_cache_per_command_and_same_output(tmp_path):
    cache = tmp_path / "cache"
    plain = _compile(tmp_path, "", "plain.bin")
    assert not cache.exists()
    first = _compile(tmp_path, cache, "first.bin")
    compile_file = cache / f"dataclasses-{TAG}-compile.marshal"
    assert compile_file.is_file()
    entries = marshal.loads(compile_file.read_bytes())
    assert isinstance(entries, dict) and len(entries) >= 100
    second = _compile(tmp_path, cache, "second.bin")
    assert plain == first == second
    r = _fetchc(["dis", str(tmp_path / "second.bin")], cache, tmp_path)
    assert r.returncode == 0, r.stderr
    assert (cache / f"dataclasses-{TAG}-dis.marshal").is_file()
    # dis loads its own file: the compile file is not rewritten with dis's entries
    assert marshal.loads(compile_file.read_bytes()).keys() == entries.keys()


def test_corrupt_cache_falls_back_and_is_rewritten(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    f = cache / f"dataclasses-{TAG}-compile.marshal"
    f.write_bytes(b"\x00not marshal data")
    plain = _compile(tmp_path, "", "plain.bin")
    assert _compile(tmp_path, cache, "out.bin") == plain
    assert isinstance(marshal.loads(f.read_bytes()), dict)


def test_stale_entries_are_pruned(tmp_path):
    cache = tmp_path / "cache"
    _compile(tmp_path, cache, "a.bin")
    f = cache / f"dataclasses-{TAG}-compile.marshal"
    good = marshal.loads(f.read_bytes())
    stale = {f"def stale_{i}(): return {i}\n": compile(f"def stale_{i}(): return {i}\n", "<string>", "exec")
             for i in range(3 * len(good))}
    f.write_bytes(marshal.dumps({**good, **stale}))
    _compile(tmp_path, cache, "b.bin")
    after = marshal.loads(f.read_bytes())
    assert not any(k.startswith("def stale_") for k in after)
    assert set(good) <= set(after)


def test_help_neither_prunes_nor_writes(tmp_path):
    cache = tmp_path / "cache"
    _compile(tmp_path, cache, "a.bin")
    f = cache / f"dataclasses-{TAG}-compile.marshal"
    before = f.read_bytes()
    r = _fetchc(["--help"], cache, tmp_path)
    assert r.returncode == 0
    assert f.read_bytes() == before
