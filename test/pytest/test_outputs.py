"""``-o`` writing (fetchc/outputs.py; ir.md §5).

* Descriptors: ``-o /dev/stdout`` (``/dev/fd/1``, ``/proc/self/fd/1``,
  ``/dev/stderr``) writes to the descriptor in place: ``>> log`` appends and
  the log keeps its inode; temporary files are named
  ``.fetchc-<pid>-<random>.tmp`` and stale ones of dead processes are removed.
* Pipes: ``fetchc sim -o /dev/stdout | cat`` and FIFOs get a valid
  ``.npy`` / ``.npz`` (numpy's ``tofile`` needs a seekable file).
* Names: ``.npz`` keys are program names taken as data (``file``,
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

from fetchc import npyio, outputs
from fetchc.seqbin import SeqBin, write

from samples import DECODE, i8_program
from served import FETCHC, REAL

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
# Descriptors are written in place
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
# Temporary files
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
# sim to pipes and FIFOs
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
        outputs.write_output(f"/proc/self/fd/{wfd}", lambda f: npyio.write_npy(f, expected(dm, 0)))
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
# Program names are data
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
    npyio.write_npz(a, arrays)
    npyio.write_npz(outputs._StreamWriter(fileobj=b), arrays)  # non-seekable: data descriptors
    for buf in (a, b):
        with np.load(io.BytesIO(buf.getvalue()), allow_pickle=False) as z:
            assert list(z.files) == ["file", "allow_pickle"]
            assert np.array_equal(z["file"], arrays["file"]) and z["allow_pickle"].dtype == np.float32
    c = io.BytesIO()
    npyio.write_npz(c, arrays)
    assert c.getvalue() == a.getvalue()


# --------------------------------------------------------------------------
# Lost, clobbered or misdirected output
# --------------------------------------------------------------------------


def _big_kernel(n: int = 40) -> str:
    return "".join(DECODE.replace("@decode", f"@decode{i}") for i in range(n))


def _file_size_limited(blocks: int):
    """A preexec_fn: ``ulimit -f`` of ``blocks`` KiB with SIGXFSZ ignored, so
    a write past it is short (then EFBIG), as on a full disk."""
    import resource
    import signal

    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (blocks * 1024, blocks * 1024))

    return setup


@pytest.mark.parametrize("argv", [["big.mlir"], ["big.mlir", "--emit=seq"], ["dis", "big.bin"]],
                         ids=["bin", "seq", "dis"])
def test_short_write_to_stdout_is_an_error(tmp_path, argv):
    """``fetchc big.mlir > file`` on a full disk is an error: the stdout
    writer once took a short write for success (exit 0, the file cut at the
    disk's size)."""
    (tmp_path / "big.mlir").write_text(_big_kernel())
    assert run(["big.mlir", "-o", "big.bin"], tmp_path).returncode == 0
    with open(tmp_path / "out", "wb") as out:
        r = run(argv, tmp_path, stdout=out, stderr=subprocess.PIPE, preexec_fn=_file_size_limited(4))
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert err.startswith("error: cannot write '-': File too large"), err
    assert (tmp_path / "out").stat().st_size == 4096  # what fit before the limit


def test_short_write_to_a_file_leaves_nothing(tmp_path):
    (tmp_path / "big.mlir").write_text(_big_kernel())
    r = run(["big.mlir", "-o", "big.bin"], tmp_path, capture_output=True, preexec_fn=_file_size_limited(4))
    assert r.returncode == 1 and b"error: cannot write 'big.bin': File too large" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["big.mlir"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_device_is_an_error(sim_files):
    tmp, _ = sim_files
    for argv in (["k.mlir", "-o", "/dev/full"], ["sim", "p.bin", "--dm", "dm.bin", "-o", "/dev/full"]):
        r = run(argv, tmp, capture_output=True)
        assert r.returncode == 1 and b"No space left on device" in r.stderr, r.stderr


SLOW_WRITER = """
import os, sys, time
import fetchc.outputs as o
real = o._write_all_fd
def slow(fd, data):
    real(fd, bytes(data[:1]))
    open(os.environ["READY"], "w").close()
    time.sleep(60)
o._write_all_fd = slow
from fetchc.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_signal_while_writing_leaves_no_temporary_file(sim_files, sig):
    """A signal while ``-o FILE`` is written removes the
    ``.fetchc-<pid>-<random>.tmp`` file (once it stayed).  The writer is slowed down
    (it writes one byte, then sleeps) so the signal comes mid-write."""
    import signal as signal_mod

    tmp, _ = sim_files
    ready = tmp / "ready"
    # A test run in the background inherits SIGINT ignored (a shell's `&`), and Python then keeps it
    # ignored: the child gets the default disposition, as from an interactive shell.
    p = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, "sim", "p.bin", "--dm", "dm.bin", "-o", "out.npz"],
                         cwd=tmp, stderr=subprocess.PIPE, env=dict(os.environ, READY=str(ready)),
                         preexec_fn=lambda: signal_mod.signal(signal_mod.SIGINT, signal_mod.SIG_DFL))
    deadline = time.time() + 120
    while not ready.exists():
        assert time.time() < deadline and p.poll() is None, p.stderr.read()
        time.sleep(0.05)
    assert [n for n in os.listdir(tmp) if n.startswith(".fetchc-")]  # the temporary file is there
    p.send_signal(getattr(signal_mod, sig))
    rc = p.wait(60)
    err = p.stderr.read().decode()
    if sig == "SIGINT":
        assert rc == 1 and err == "error: interrupted\n", (rc, err)
    else:
        assert rc == -getattr(signal_mod, sig), (rc, err)  # ended by the signal, as without fetchc's handler
    assert sorted(os.listdir(tmp)) == ["dm.bin", "k.mlir", "p.bin", "ready"]


@pytest.mark.parametrize(
    "argv,out",
    [
        (["k.mlir", "-o", "k.mlir"], "k.mlir"),
        (["k.mlir", "--emit=mlir", "-o", "./sub/../k.mlir"], "k.mlir"),
        (["link.mlir", "--emit=mlir", "-o", "k.mlir"], "k.mlir"),
        (["dis", "p.bin", "-o", "p.bin"], "p.bin"),
        (["sim", "p.bin", "--dm", "dm.bin", "-o", "dm.bin"], "dm.bin"),
        (["sim", "p.bin", "--dm", "dm.bin", "-o", "p.bin"], "p.bin"),
        (["run", "k.mlir", "--arg", "w=w.npy", "-o", "w.npy"], "w.npy"),
        (["run", "k.mlir", "--arg", "w=w.npy", "-o", "k.mlir"], "k.mlir"),
    ],
)
def test_output_that_is_an_input_is_refused(sim_files, argv, out):
    """``fetchc k.mlir -o k.mlir`` is refused (once it overwrote its input,
    exit 0).  Compared by device and inode: other spellings and symlinks too."""
    tmp, _ = sim_files
    (tmp / "sub").mkdir()
    (tmp / "link.mlir").symlink_to("k.mlir")
    np.save(tmp / "w.npy", np.zeros((64, 8), np.uint8))
    before = {n: (tmp / n).read_bytes() for n in ("k.mlir", "p.bin", "dm.bin", "w.npy")}
    r = run(argv, tmp, capture_output=True, text=True)
    assert r.returncode == 1
    assert "refusing to write to" in r.stderr and "an input file of this command" in r.stderr, r.stderr
    assert {n: (tmp / n).read_bytes() for n in before} == before
    assert not [n for n in os.listdir(tmp) if n.startswith(".fetchc-")]


def test_stdout_redirected_to_the_input_is_refused(sim_files):
    tmp, _ = sim_files
    before = (tmp / "k.mlir").read_bytes()
    with open(tmp / "k.mlir", "ab") as out:
        r = run(["k.mlir", "--emit=mlir"], tmp, stdout=out, stderr=subprocess.PIPE)
    assert r.returncode == 1 and b"refusing to write to standard output" in r.stderr
    assert (tmp / "k.mlir").read_bytes() == before


def _on_a_terminal(argv: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Run fetchc with stdout on a pseudo-terminal; return the exit status,
    what reached the terminal, and stderr."""
    import pty

    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(FETCHC + argv, cwd=cwd, stdout=slave, stderr=subprocess.PIPE,
                             env=dict(os.environ, FETCHC_TTY=os.ttyname(slave)))
        os.close(slave)
        err = p.stderr.read()
        rc = p.wait(120)
        seen = b""
        while True:
            import select as select_mod

            ready, _, _ = select_mod.select([master], [], [], 0.2)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
    return rc, seen, err


@pytest.mark.parametrize(
    "argv",
    [
        ["sim", "p.bin", "--dm", "dm.bin", "-o", "/dev/stdout"],
        ["sim", "p.bin", "--dm", "dm.bin", "-o", "-"],
        ["sim", "p.bin", "--dm", "dm.bin", "--program", "a/0", "-o", "/dev/fd/1"],
        ["run", "k.mlir", "--arg", "w=w.npy", "-o", "-"],
        ["k.mlir", "-o", "/dev/stdout"],
        ["k.mlir", "-o", "/proc/self/fd/1"],
    ],
)
def test_binary_output_to_a_terminal_is_refused(sim_files, argv):
    """``sim``/``run -o /dev/stdout`` or ``-o -`` to a terminal is refused, as
    a bare ``fetchc x.mlir`` is (once they wrote binary data to it)."""
    tmp, _ = sim_files
    np.save(tmp / "w.npy", np.zeros((64, 8), np.uint8))
    rc, seen, err = _on_a_terminal(argv, tmp)
    assert rc == 1 and b"refusing to write" in err and b"to a terminal" in err, err
    assert seen == b""


def test_binary_output_to_a_terminal_named_by_path_is_refused(sim_files):
    import pty

    tmp, _ = sim_files
    master, slave = pty.openpty()
    try:
        r = run(["sim", "p.bin", "--dm", "dm.bin", "-o", os.ttyname(slave)], tmp, capture_output=True)
    finally:
        os.close(master)
        os.close(slave)
    assert r.returncode == 1 and b"refusing to write .npz data to a terminal" in r.stderr, r.stderr


def test_text_output_to_a_terminal_is_written(sim_files):
    tmp, _ = sim_files
    rc, seen, err = _on_a_terminal(["dis", "p.bin", "-o", "/dev/stdout"], tmp)
    assert rc == 0 and b"seq.bin version" in seen, err


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a/../../b", "./x", "a//b", "a\\b", "C:x"])
def test_npz_member_names_that_escape_the_directory_are_refused(tmp_path, name):
    """Program names that would make .npz member names escaping the
    directory are refused (as they were, an unzip of the output would write
    ``../../x.npy`` outside its directory)."""
    dm = bytes(range(256))
    sb = SeqBin((), (i8_program(name, 0), i8_program("ok", 64)))
    (tmp_path / "p.bin").write_bytes(write(sb))
    (tmp_path / "dm.bin").write_bytes(dm)
    r = run(["sim", "p.bin", "--dm", "dm.bin", "-o", "out.npz"], tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and "cannot be a .npz key" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["dm.bin", "p.bin"]
    with pytest.raises(ValueError, match="cannot be a .npz key"):
        npyio.npz_member_names([name])
    # run alone, the program is an .npy: its name is no file name
    r = run(["sim", "p.bin", "--dm", "dm.bin", "--program", name, "-o", "one.npy"], tmp_path, capture_output=True)
    assert r.returncode == 0 and np.array_equal(np.load(tmp_path / "one.npy"), expected(dm, 0))


def test_an_empty_output_name_is_refused_as_such(tmp_path):
    src = Path(__file__).resolve().parents[2] / "examples" / "int8_zero_point_contract.mlir"
    r = subprocess.run(FETCHC + [str(src), "-o", ""], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr == "error: the output file name is empty: give -o FILE (or -o - for stdout)\n"
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------
# fetchc run's listing, a closed stdout, and the moment of the rename
# --------------------------------------------------------------------------

CAST = """func.func @k(%a: memref<4x16xbf16>, %o: memref<4x16xf32>) {
  %s = fetch.fetch %a : memref<4x16xbf16> -> !fetch.stream<main, [4], [16], bf16>
  %f = fetch.cast %s : !fetch.stream<main, [4], [16], bf16> -> !fetch.stream<main, [4], [16], f32>
  rngd.commit %f, %o : !fetch.stream<main, [4], [16], f32>, memref<4x16xf32>
  func.return
}
"""
OLD = b"the old output\n"


@pytest.fixture
def run_files(tmp_path: Path):
    """A bf16 -> f32 cast kernel, its input (raw bf16 bits) and an existing
    y.npz; the expected output is the bf16 values widened (exact)."""
    import ml_dtypes

    a = (np.arange(64, dtype=np.float32).reshape(4, 16) - 20.5).astype(ml_dtypes.bfloat16)
    (tmp_path / "k.mlir").write_text(CAST)
    np.save(tmp_path / "a.npy", a.view(np.uint16))
    (tmp_path / "y.npz").write_bytes(OLD)
    return tmp_path, a.astype(np.float32)


RUN_ARGV = ["run", "k.mlir", "--arg", "a=a.npy", "-o", "y.npz"]


def _written(tmp: Path, want: np.ndarray) -> bool:
    with np.load(tmp / "y.npz") as z:
        return z.files == ["o"] and np.array_equal(z["o"].view(np.uint32), want.view(np.uint32))


def _no_temporaries(tmp: Path) -> bool:
    return not [n for n in os.listdir(tmp) if n.startswith(".fetchc-")]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_run_listing_that_cannot_be_printed_leaves_the_output(run_files):
    """``run ... -o y.npz > /dev/full`` printed ``error: No space left on
    device`` (exit 1) after y.npz had been replaced: the listing is printed
    before the rename, and a failure to print it leaves y.npz as it was."""
    tmp, want = run_files
    with open("/dev/full", "w") as full:
        r = run(RUN_ARGV, tmp, stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1
    assert r.stderr == (
        "error: cannot write the list of the tensors written to stdout: No space left on device; 'y.npz' is left as "
        "it was (-q leaves the list out)\n"
    )
    assert (tmp / "y.npz").read_bytes() == OLD and _no_temporaries(tmp)
    with open("/dev/full", "w") as full:
        r = run([*RUN_ARGV, "-q"], tmp, stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0 and r.stderr == "" and _written(tmp, want)


def test_run_listing_into_a_closed_pipe_leaves_the_output(run_files):
    tmp, _ = run_files
    rd, wr = os.pipe()
    os.close(rd)  # nobody will read: every write gets EPIPE
    try:
        r = run(RUN_ARGV, tmp, stdout=wr, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(wr)
    assert r.returncode == 1 and r.stderr.startswith("error: cannot write the list of the tensors written to stdout: ")
    assert (tmp / "y.npz").read_bytes() == OLD and _no_temporaries(tmp)


def _stdout_closed() -> None:
    os.close(1)


def test_run_with_stdout_closed_writes_the_output_without_listing(run_files):
    """``run ... -o y.npz >&-`` printed ``error: internal error:
    AttributeError: 'NoneType' object has no attribute 'write'`` (exit 1)
    after replacing y.npz: with no stdout there is nothing to list on."""
    tmp, want = run_files
    r = subprocess.run(REAL + RUN_ARGV, cwd=tmp, preexec_fn=_stdout_closed, stderr=subprocess.PIPE, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert _written(tmp, want) and _no_temporaries(tmp)


@pytest.mark.parametrize(
    "argv",
    [["k.mlir", "--emit=mlir", "-o", "-"], ["dis", "p.bin"], ["sim", "p.bin", "--dm", "dm.bin", "-o", "-"]],
)
def test_output_to_a_closed_stdout_says_so(sim_files, argv):
    """``dis p.bin >&-`` said ``stdout is not a binary stream``."""
    tmp, _ = sim_files
    r = subprocess.run(REAL + argv, cwd=tmp, preexec_fn=_stdout_closed, stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr == "error: cannot write '-': stdout is closed\n", r.stderr


AROUND_RENAME = """
import os, signal, sys, time
import fetchc.outputs as o
sig = getattr(signal, os.environ["SIG"])
if os.environ["WHEN"] == "after":  # the signal lands right after y.npz is renamed into place
    real = os.replace
    def replace(src, dst):
        real(src, dst)
        if dst.endswith("y.npz"):
            os.kill(os.getpid(), sig)
            time.sleep(0.5)  # the handler runs on the main thread meanwhile
    os.replace = replace
else:  # while the listing is printed, before the rename
    real = o.write_now
    def write_now(stream, text):
        os.kill(os.getpid(), sig)
        time.sleep(0.5)
        real(stream, text)
    o.write_now = write_now
from fetchc.cli import entry
sys.argv = ["fetchc"] + sys.argv[1:]
entry()
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_signal_after_the_rename_does_not_fail_the_command(run_files, sig):
    """A SIGINT between the rename and the exit reported ``error:
    interrupted`` (exit 1) with y.npz replaced (1 run in 40); SIGTERM ended
    the process by the signal.  Once the output is in place the command has
    succeeded: the signal is ignored and the exit status is 0."""
    import signal as signal_mod

    tmp, want = run_files
    r = subprocess.run([sys.executable, "-c", AROUND_RENAME, *RUN_ARGV], cwd=tmp, capture_output=True, text=True,
                       env=dict(os.environ, SIG=sig, WHEN="after"), timeout=120,
                       preexec_fn=lambda: signal_mod.signal(signal_mod.SIGINT, signal_mod.SIG_DFL))  # fmt: skip
    assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
    assert r.stdout == "y.npz: o (4, 16) float32\n"
    assert _written(tmp, want) and _no_temporaries(tmp)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_signal_before_the_rename_leaves_the_output(run_files, sig):
    import signal as signal_mod

    tmp, _ = run_files
    r = subprocess.run([sys.executable, "-c", AROUND_RENAME, *RUN_ARGV], cwd=tmp, capture_output=True, text=True,
                       env=dict(os.environ, SIG=sig, WHEN="before"), timeout=120,
                       preexec_fn=lambda: signal_mod.signal(signal_mod.SIGINT, signal_mod.SIG_DFL))  # fmt: skip
    if sig == "SIGINT":
        assert r.returncode == 1 and r.stderr == "error: interrupted\n", (r.returncode, r.stderr)
    else:
        assert r.returncode == -signal_mod.SIGTERM, (r.returncode, r.stderr)
    assert (tmp / "y.npz").read_bytes() == OLD and _no_temporaries(tmp)


def test_a_closed_stderr_discards_diagnostics_and_keeps_the_status(tmp_path):
    """``2>&-``: an error still exits 1 with no output file, a warning-only
    compile exits 0, and the seq.bin holds no diagnostic text (descriptor 2
    is /dev/null, never the output's temporary file)."""
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @k( {\n")
    empty = tmp_path / "empty.mlir"
    empty.write_text("func.func @k() {\n  func.return\n}\n")  # warns: no kernel
    cmd = [sys.executable, "-m", "fetchc.cli"]

    def run(*args):
        return subprocess.run(cmd + [str(a) for a in args], cwd=tmp_path, stdout=subprocess.PIPE,
                              preexec_fn=lambda: os.close(2), timeout=120)

    assert run(bad, "-o", tmp_path / "bad.bin").returncode == 1
    assert not (tmp_path / "bad.bin").exists()
    assert run(empty, "-o", tmp_path / "e.bin").returncode == 0
    data = (tmp_path / "e.bin").read_bytes()
    assert data[:4] == b"FSEQ" and b"warning" not in data
    assert run(empty, "-o", tmp_path / "e2.bin", "--no-cache").returncode == 0
    assert (tmp_path / "e2.bin").read_bytes() == data
