"""``-o`` writing (fetchc/outputs.py; ir.md §5; issue 10 items 2-4).

* Item 2: ``-o /dev/stdout`` (``/dev/fd/1``, ``/proc/self/fd/1``,
  ``/dev/stderr``) writes to the descriptor in place: ``>> log`` appends and
  the log keeps its inode; temporary files are named
  ``.fetchc-<pid>-<random>.tmp`` and stale ones of dead processes are removed.
* Item 3: ``fetchc sim -o /dev/stdout | cat`` and FIFOs get a valid
  ``.npy`` / ``.npz`` (numpy's ``tofile`` needs a seekable file).
* Item 4: ``.npz`` keys are program names taken as data (``file``,
  ``allow_pickle``, ``a/b``...), never keyword arguments of ``np.savez``.

Expected arrays come from the DM bytes directly (an ``i8 -> i8`` program with
no stages copies its bytes; an ``i8 -> i32`` cast sign-extends them), never
from the simulator.
"""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from fetchc import outputs
from fetchc.seqbin import SeqBin, write

from samples import DECODE, i8_program

FETCHC = [sys.executable, "-m", "fetchc.cli"]
HAVE_PROC_FD = os.path.isdir("/proc/self/fd") and os.path.exists("/dev/stdout")


def expected(dm: bytes, base: int, cast: bool = False) -> np.ndarray:
    raw = np.frombuffer(dm[base : base + 64], dtype=np.int8).reshape(4, 16)
    return raw.astype(np.int32) if cast else raw


@pytest.fixture
def sim_files(tmp_path: Path):
    dm = bytes((i * 37 + 11) % 256 for i in range(256))
    sb = SeqBin((), (i8_program("a/0", 0), i8_program("b/0", 64, cast=True)))
    (tmp_path / "p.bin").write_bytes(write(sb))
    (tmp_path / "dm.bin").write_bytes(dm)
    (tmp_path / "k.mlir").write_text(DECODE)
    return tmp_path, dm


def run(argv: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(FETCHC + argv, cwd=cwd, timeout=120, **kw)


def _argv(tool: str, out: str) -> list[str]:
    return {
        "compile": ["k.mlir", "--emit=mlir", "-o", out],
        "dis": ["dis", "p.bin", "-o", out],
        "sim": ["sim", "p.bin", "--dm", "dm.bin", "--program", "a/0", "-o", out],
    }[tool]


# --------------------------------------------------------------------------
# Item 2: descriptors are written in place
# --------------------------------------------------------------------------


@pytest.mark.skipif(not HAVE_PROC_FD, reason="needs /dev/stdout and /proc/self/fd")
@pytest.mark.parametrize("tool", ["compile", "dis", "sim"])
@pytest.mark.parametrize("path", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_output_to_stdout_appends_to_the_redirected_log(sim_files, tool, path):
    tmp, _ = sim_files
    ref = tmp / "ref.out"
    assert run(_argv(tool, str(ref)), tmp).returncode == 0
    log = tmp / "log.txt"
    log.write_bytes(b"earlier line\n")
    inode = os.stat(log).st_ino
    with open(log, "ab") as f:  # the shell's `>> log.txt`
        r = run(_argv(tool, path), tmp, stdout=f, stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr
    assert os.stat(log).st_ino == inode, "the log was replaced, not appended to"
    assert log.read_bytes() == b"earlier line\n" + ref.read_bytes()
    assert not [n for n in os.listdir(tmp) if n.startswith(".fetchc-")]


@pytest.mark.skipif(not HAVE_PROC_FD, reason="needs /dev/stderr")
def test_output_to_stderr_appends_to_the_redirected_error_log(sim_files):
    tmp, _ = sim_files
    ref = tmp / "ref.out"
    assert run(_argv("dis", str(ref)), tmp).returncode == 0
    log = tmp / "err.log"
    log.write_bytes(b"before\n")
    inode = os.stat(log).st_ino
    with open(log, "ab") as f:  # `2>> err.log`
        r = run(_argv("dis", "/dev/stderr"), tmp, stderr=f)
    assert r.returncode == 0
    assert os.stat(log).st_ino == inode
    assert log.read_bytes() == b"before\n" + ref.read_bytes()


@pytest.mark.skipif(not HAVE_PROC_FD, reason="needs /dev/stdout")
def test_output_to_stdout_of_a_truncating_redirect_writes_at_the_offset(sim_files):
    """`> out.txt` then `-o /dev/stdout`: the file holds exactly the output."""
    tmp, _ = sim_files
    ref = tmp / "ref.out"
    assert run(_argv("compile", str(ref)), tmp).returncode == 0
    out = tmp / "out.txt"
    out.write_bytes(b"x" * 100000)  # longer than the output: must be truncated by the shell, not by fetchc
    with open(out, "wb") as f:
        assert run(_argv("compile", "/dev/stdout"), tmp, stdout=f).returncode == 0
    assert out.read_bytes() == ref.read_bytes()


def test_output_target_classification(tmp_path):
    assert outputs.output_target("-") == ("stdout", None)
    assert outputs.output_target(str(tmp_path / "new.bin")) == ("file", None)
    (tmp_path / "old.bin").write_bytes(b"x")
    assert outputs.output_target(str(tmp_path / "old.bin")) == ("file", None)
    if HAVE_PROC_FD:
        assert outputs.output_target("/dev/stdout") == ("fd", 1)
        assert outputs.output_target("/dev/stderr") == ("fd", 2)
        assert outputs.output_target("/dev/fd/7") == ("fd", 7)
        assert outputs.output_target(f"/proc/{os.getpid()}/fd/5") == ("fd", 5)
        link = tmp_path / "to-stdout"
        link.symlink_to("/dev/stdout")
        assert outputs.output_target(str(link)) == ("fd", 1)
    if os.path.exists("/dev/null"):
        assert outputs.output_target("/dev/null") == ("special", None)
    fifo = tmp_path / "fifo"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        assert outputs.output_target(str(fifo)) == ("special", None)


def test_write_to_an_unopened_descriptor_is_an_error_naming_the_path(sim_files):
    tmp, _ = sim_files
    if not HAVE_PROC_FD:
        pytest.skip("needs /dev/fd")
    r = run(_argv("compile", "/dev/fd/9"), tmp, capture_output=True, text=True, close_fds=True)
    assert r.returncode == 1
    assert "error: cannot write '/dev/fd/9'" in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------------------------------
# Item 2: temporary files
# --------------------------------------------------------------------------


def test_temporary_file_is_named_after_the_process(tmp_path):
    seen: list[str] = []

    def writer(f):
        f.write(b"data")
        seen.extend(n for n in os.listdir(tmp_path) if n != "out.bin")

    outputs.write_output(str(tmp_path / "out.bin"), writer)
    assert (tmp_path / "out.bin").read_bytes() == b"data"
    assert len(seen) == 1
    m = outputs.temporary_name_pattern().match(seen[0])
    assert m and int(m.group(1)) == os.getpid(), seen
    assert os.listdir(tmp_path) == ["out.bin"]


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temporaries_of_dead_processes_are_removed(sim_files):
    tmp, _ = sim_files
    dead = _dead_pid()
    old = time.time() - 3600
    stale = tmp / f".fetchc-{dead}-abcd1234.tmp"
    fresh_dead = tmp / f".fetchc-{dead}-zzzz9999.tmp"  # a dead writer, but modified just now: kept
    alive = tmp / f".fetchc-{os.getpid()}-abcd1234.tmp"  # a live process: kept
    other = tmp / ".fetchc-notapid.tmp"  # not the pattern: kept
    for p in (stale, alive, other):
        p.write_bytes(b"partial")
        os.utime(p, (old, old))
    fresh_dead.write_bytes(b"partial")
    link = tmp / f".fetchc-{dead}-link0000.tmp"  # a symlink: never followed nor removed
    link.symlink_to(tmp / "k.mlir")
    os.lstat(link)
    sub = tmp / "sub"
    sub.mkdir()
    below = sub / f".fetchc-{dead}-abcd1234.tmp"  # another directory: not looked at
    below.write_bytes(b"partial")
    os.utime(below, (old, old))
    assert run(_argv("compile", "out.mlir"), tmp).returncode == 0
    names = set(os.listdir(tmp))
    assert stale.name not in names
    assert {fresh_dead.name, alive.name, other.name, link.name, "out.mlir"} <= names
    assert (tmp / "k.mlir").read_text() == DECODE
    assert below.exists()


# --------------------------------------------------------------------------
# Item 3: sim to pipes and FIFOs
# --------------------------------------------------------------------------


@pytest.mark.skipif(not HAVE_PROC_FD, reason="needs /dev/stdout")
@pytest.mark.parametrize("program", ["a/0", "b/0", None])
def test_sim_to_a_pipe(sim_files, program):
    """`fetchc sim ... -o /dev/stdout | cat`: a pipe cannot seek."""
    tmp, dm = sim_files
    argv = ["sim", "p.bin", "--dm", "dm.bin", "-o", "/dev/stdout"]
    if program:
        argv += ["--program", program]
    r = run(argv, tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr.decode()
    got = np.load(io.BytesIO(r.stdout), allow_pickle=False)
    want = {"a/0": expected(dm, 0), "b/0": expected(dm, 64, cast=True)}
    if program:
        assert got.dtype == want[program].dtype and np.array_equal(got, want[program])
    else:
        assert sorted(got.files) == ["a/0", "b/0"]
        for k in got.files:
            assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k])


@pytest.mark.skipif(not HAVE_PROC_FD, reason="needs /proc/self/fd")
def test_write_output_to_a_pipe_descriptor_in_process(sim_files):
    """The API: ``write_output('/proc/self/fd/N', callback)`` with a pipe's
    write end (not seekable) streams the ``.npy``."""
    tmp, dm = sim_files
    rfd, wfd = os.pipe()
    chunks: list[bytes] = []

    def reader():
        with os.fdopen(rfd, "rb") as f:
            chunks.append(f.read())

    t = threading.Thread(target=reader)
    t.start()
    try:
        outputs.write_output(f"/proc/self/fd/{wfd}", lambda f: outputs.write_npy(f, expected(dm, 0)))
    finally:
        os.close(wfd)
        t.join(60)
    assert np.array_equal(np.load(io.BytesIO(b"".join(chunks))), expected(dm, 0))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("program", ["b/0", None])
def test_sim_to_a_fifo(sim_files, program):
    tmp, dm = sim_files
    fifo = tmp / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader():
        with open(fifo, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    argv = ["sim", "p.bin", "--dm", "dm.bin", "-o", str(fifo)] + (["--program", program] if program else [])
    r = run(argv, tmp, capture_output=True)
    t.join(60)
    assert r.returncode == 0, r.stderr.decode()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the FIFO, not replaced by a file
    loaded = np.load(io.BytesIO(got[0]), allow_pickle=False)
    if program:
        assert np.array_equal(loaded, expected(dm, 64, cast=True))
    else:
        assert np.array_equal(loaded["a/0"], expected(dm, 0))
        assert np.array_equal(loaded["b/0"], expected(dm, 64, cast=True))


@pytest.mark.skipif(not HAVE_PROC_FD, reason="needs /dev/stdout")
def test_sim_to_a_closed_pipe_is_a_clear_error(sim_files):
    tmp, _ = sim_files
    p = subprocess.Popen(FETCHC + ["sim", "p.bin", "--dm", "dm.bin", "-o", "/dev/stdout"], cwd=tmp,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader went away (`| head -c 0`)
    err = p.stderr.read().decode()
    assert p.wait(120) == 1
    assert "error: cannot write '/dev/stdout'" in err and "Traceback" not in err


# --------------------------------------------------------------------------
# Item 4: program names are data
# --------------------------------------------------------------------------

TRICKY = ["file", "allow_pickle", "a/b", "args", "kwds", "x y", "\u00e9t\u00e9", "-", "compress", ".npy"]


def test_npz_keys_are_program_names_whatever_they_are(tmp_path):
    dm = bytes(range(256)) * 3
    sb = SeqBin((), tuple(i8_program(n, 64 * (i % 10)) for i, n in enumerate(TRICKY)))
    (tmp_path / "p.bin").write_bytes(write(sb))
    (tmp_path / "dm.bin").write_bytes(dm)
    r = run(["sim", "p.bin", "--dm", "dm.bin", "-o", "out.npz"], tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "out.npz", allow_pickle=False) as z:
        assert sorted(z.files) == sorted(TRICKY)
        for i, n in enumerate(TRICKY):
            assert np.array_equal(z[n], expected(dm, 64 * (i % 10))), n


def test_npz_with_a_program_named_file_and_allow_pickle_in_process(tmp_path):
    from fetchc.cli import main_sim

    dm = bytes(range(256))
    sb = SeqBin((), (i8_program("file", 0), i8_program("allow_pickle", 64, cast=True)))
    (tmp_path / "p.bin").write_bytes(write(sb))
    (tmp_path / "dm.bin").write_bytes(dm)
    out = tmp_path / "out.npz"
    assert main_sim([str(tmp_path / "p.bin"), "--dm", str(tmp_path / "dm.bin"), "-o", str(out)]) == 0
    with np.load(out, allow_pickle=False) as z:
        assert sorted(z.files) == ["allow_pickle", "file"]
        assert np.array_equal(z["file"], expected(dm, 0))
        assert np.array_equal(z["allow_pickle"], expected(dm, 64, cast=True))


def test_npz_names_numpy_would_confuse_are_an_error(tmp_path, capsys):
    """np.load(f)['x.npy'] returns the member 'x.npy', i.e. program 'x': a
    file holding both names cannot be written faithfully."""
    from fetchc.cli import main_sim

    dm = bytes(range(256))
    sb = SeqBin((), (i8_program("x", 0), i8_program("x.npy", 64)))
    (tmp_path / "p.bin").write_bytes(write(sb))
    (tmp_path / "dm.bin").write_bytes(dm)
    out = tmp_path / "out.npz"
    assert main_sim([str(tmp_path / "p.bin"), "--dm", str(tmp_path / "dm.bin"), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot both be keys of one .npz" in err and "'x'" in err
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["dm.bin", "p.bin"]
    # one of them alone is fine
    assert main_sim([str(tmp_path / "p.bin"), "--dm", str(tmp_path / "dm.bin"), "--program", "x.npy",
                     "-o", str(out)]) == 0
    assert np.array_equal(np.load(out), expected(dm, 64))


def test_write_npz_is_deterministic_and_loadable_from_a_stream():
    arrays = {"file": np.arange(6, dtype=np.int8).reshape(2, 3), "allow_pickle": np.ones(3, np.float32)}
    a, b = io.BytesIO(), io.BytesIO()
    outputs.write_npz(a, arrays)
    outputs.write_npz(outputs._StreamWriter(fileobj=b), arrays)  # non-seekable: data descriptors
    for buf in (a, b):
        with np.load(io.BytesIO(buf.getvalue()), allow_pickle=False) as z:
            assert list(z.files) == ["file", "allow_pickle"]
            assert np.array_equal(z["file"], arrays["file"]) and z["allow_pickle"].dtype == np.float32
    c = io.BytesIO()
    outputs.write_npz(c, arrays)
    assert c.getvalue() == a.getvalue()
