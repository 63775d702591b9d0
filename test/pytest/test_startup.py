"""The ``fetchc`` command's dataclasses code cache (fetchc/startup.py): one
file per Python and subcommand, never changing a result, surviving a corrupt
file (never handed to marshal), ignoring a file that is not the user's own,
pruning stale entries, and never touched when disabled."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fetchc import cachedir, startup

from served import REAL  # a fresh process each time: the start-up cache is the subject

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "int8_zero_point_contract.mlir"
TAG = sys.implementation.cache_tag


def _entries(path: Path) -> dict:
    payload = cachedir.read_entry(str(path), startup._MAGIC)
    assert payload is not None, f"{path} is not a valid cache entry"
    return marshal.loads(payload)


def _write_entries(path: Path, entries: dict) -> None:
    assert cachedir.write_entry(str(path), startup._MAGIC, marshal.dumps(entries))


def _fetchc(args, cache_dir, cwd):
    env = dict(os.environ, FETCHC_CACHE_DIR=str(cache_dir))
    return subprocess.run(
        [*REAL, *args], env=env, cwd=cwd, capture_output=True, text=True
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
    entries = _entries(compile_file)
    assert isinstance(entries, dict) and len(entries) >= 100
    second = _compile(tmp_path, cache, "second.bin")
    assert plain == first == second
    r = _fetchc(["dis", str(tmp_path / "second.bin")], cache, tmp_path)
    assert r.returncode == 0, r.stderr
    assert (cache / f"dataclasses-{TAG}-dis.marshal").is_file()
    # dis loads its own file: the compile file is not rewritten with dis's entries
    assert _entries(compile_file).keys() == entries.keys()


def test_corrupt_cache_falls_back_and_is_rewritten(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    f = cache / f"dataclasses-{TAG}-compile.marshal"
    f.write_bytes(b"\x00not marshal data")
    plain = _compile(tmp_path, "", "plain.bin")
    assert _compile(tmp_path, cache, "out.bin") == plain
    assert isinstance(_entries(f), dict)


def test_stale_entries_are_pruned(tmp_path):
    cache = tmp_path / "cache"
    _compile(tmp_path, cache, "a.bin")
    f = cache / f"dataclasses-{TAG}-compile.marshal"
    good = _entries(f)
    stale = {f"def stale_{i}(): return {i}\n": compile(f"def stale_{i}(): return {i}\n", "<string>", "exec")
             for i in range(3 * len(good))}
    _write_entries(f, {**good, **stale})
    _compile(tmp_path, cache, "b.bin")
    after = _entries(f)
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


def test_flipped_bytes_never_reach_marshal(tmp_path):
    """A cache file with bytes flipped (a bad disk, a crash mid-write by
    another tool) is refused by its checksum: ``fetchc --version`` and a
    compile still work and give the same bytes (xDSL's marshal.load of bad
    code once crashed the interpreter)."""
    import random

    cache = tmp_path / "cache"
    plain = _compile(tmp_path, "", "plain.bin")
    _compile(tmp_path, cache, "first.bin")
    f = cache / f"dataclasses-{TAG}-compile.marshal"
    good = f.read_bytes()
    rng = random.Random(7)
    for trial in range(12):
        data = bytearray(good)
        for _ in range(3):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        f.write_bytes(bytes(data))
        os.chmod(f, 0o600)
        assert cachedir.read_entry(str(f), startup._MAGIC) is None
        r = _fetchc(["--version"], cache, tmp_path)
        assert r.returncode == 0 and "fetchc" in r.stdout, (trial, r.returncode, r.stderr)
    f.write_bytes(bytes(data))
    assert _compile(tmp_path, cache, "again.bin") == plain


def _planted_entry(tmp_path: Path, cache: Path) -> tuple[Path, Path]:
    """A well-formed cache entry whose code for every source text the
    compile uses writes a marker file: what an attacker would plant."""
    _compile(tmp_path, cache, "seed.bin")
    f = cache / f"dataclasses-{TAG}-compile.marshal"
    marker = tmp_path / "pwned"
    evil = compile(f"open({str(marker)!r}, 'w').close()", "<string>", "exec")
    _write_entries(f, {k: evil for k in _entries(f)})
    return f, marker


def test_a_file_others_can_write_is_never_loaded(tmp_path):
    cache = tmp_path / "cache"
    f, marker = _planted_entry(tmp_path, cache)
    _fetchc(["--version"], cache, tmp_path)  # the user's own file is trusted (the planted code runs) ...
    assert marker.exists()
    marker.unlink()
    cache = tmp_path / "cache2"
    f, marker = _planted_entry(tmp_path, cache)
    os.chmod(f, 0o666)  # ... one that others can write is not
    out = _compile(tmp_path, cache, "out.bin")
    assert not marker.exists()
    assert out == _compile(tmp_path, "", "plain.bin")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_a_file_another_user_owns_is_never_loaded(tmp_path):
    cache = tmp_path / "cache"
    f, marker = _planted_entry(tmp_path, cache)
    os.chown(f, 12345, 12345)
    _compile(tmp_path, cache, "out.bin")
    assert not marker.exists()


def test_cached_code_is_compiled_without_this_modules_future_flags():
    """``from __future__ import annotations`` in startup.py must not leak
    into the dataclass methods it compiles (dont_inherit=True)."""
    import __future__

    startup._cache.clear()
    startup._exec("def f(x: int) -> int: return x\n", {})
    (code,) = startup._cache.values()
    assert not code.co_flags & __future__.annotations.compiler_flag
