"""Resource limits (ir.md §5: every failure is an
``error:`` line and exit 1, never a traceback).

* Address space: under ``ulimit -v`` (``RLIMIT_AS``) of a few hundred MiB, the
  256 MiB worker stack cannot be reserved and numpy / OpenBLAS cannot map
  their libraries and buffers.  fetchc sizes its stack from the limit, falls
  back to smaller stacks and then to the main thread, limits OpenBLAS to one
  thread, probes the address space before importing numpy, and says what ran
  out.
* Memory budget: ``fetchc sim`` checks the DM image plus the outputs of all the
  programs it runs against its memory budget before allocating anything.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from fetchc import cli, process
from fetchc.cli import main, main_sim
from fetchc.seqbin import SeqBin, write

from samples import i8_program
from served import FETCHC

resource = pytest.importorskip("resource")

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "nvfp4_dequant_f32.mlir"
QUIET_KERNEL = ROOT / "examples" / "mxfp4_dequant_f32.mlir"
"""Compiles without a word on stderr (nvfp4_dequant_f32's compile remarks
that its block scales do not fit the VRF)."""


def _limited(mib: int):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))

    return set_limit


def _can_limit() -> bool:
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError, AttributeError):
        return False
    return hard == resource.RLIM_INFINITY or hard >= 400 << 20


needs_rlimit = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not _can_limit(), reason="needs a settable RLIMIT_AS (Linux)"
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("res")
    assert main([str(KERNEL), "-o", str(d / "k.bin")]) == 0
    (d / "dm.bin").write_bytes(bytes(range(256)) * (1 << 11))  # one slice's 512 KiB: both programs read inside it
    return d


COMMANDS = {
    "compile": lambda d: [str(KERNEL), "-o", str(d / "out.bin")],
    "dis": lambda d: ["dis", str(d / "k.bin"), "-o", str(d / "out.txt")],
    "sim": lambda d: ["sim", str(d / "k.bin"), "--dm", str(d / "dm.bin"), "--program", "dequant_nvfp4/1",
                      "-o", str(d / "out.npy")],
    "sim-all": lambda d: ["sim", str(d / "k.bin"), "--dm", str(d / "dm.bin"), "-o", str(d / "out.npz")],
}


@needs_rlimit
@pytest.mark.parametrize("mib", [150, 250, 300, 350, 400])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_memory_limit_gives_a_result_or_a_clear_error(workdir, command, mib):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    r = subprocess.run(FETCHC + COMMANDS[command](workdir), preexec_fn=_limited(mib), env=env,
                       capture_output=True, text=True, timeout=300)
    err = r.stderr
    assert r.returncode in (0, 1), err
    assert "Traceback" not in err and "internal error" not in err and "OpenBLAS" not in err, err
    lines = err.splitlines()
    if r.returncode == 1:
        assert lines and re.match(r"(\S+: )?error: ", lines[0]), err  # error: ... or FILE: error: ...
        assert "memory" in err or "may allocate" in err, err
    if command == "compile":
        assert r.returncode == 0, err  # compiling needs neither numpy nor a 256 MiB stack


def test_stack_plan_follows_the_address_space_limit(monkeypatch):
    monkeypatch.setattr(process, "address_space_limit", lambda: None)
    assert process.stack_plan()[0] == process.DEEP_STACK_BYTES
    monkeypatch.setattr(process, "address_space_limit", lambda: 256 << 20)
    plan = process.stack_plan()
    assert plan[0] == 32 << 20 and plan == sorted(plan, reverse=True) and plan[-1] >= process.MIN_STACK_BYTES
    assert process.recursion_limit_for(process.DEEP_STACK_BYTES) == process.DEEP_RECURSION_LIMIT
    assert process.recursion_limit_for(32 << 20) == process.DEEP_RECURSION_LIMIT // 8
    assert process.recursion_limit_for(1 << 20) == 1000


def _refuse_threads(monkeypatch):
    started: list[str] = []

    def start(self):
        started.append(self.name)
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", start)
    return started


def test_no_thread_falls_back_to_the_main_thread(tmp_path, monkeypatch, capsys):
    tried = _refuse_threads(monkeypatch)
    limit = sys.getrecursionlimit()
    out = tmp_path / "k.bin"
    assert main([str(KERNEL), "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"FSEQ"
    assert len(tried) >= 2  # smaller stacks were tried first
    assert process.STACK_IN_USE == (0, limit) and sys.getrecursionlimit() == limit


def test_no_thread_and_deep_nesting_is_nesting_too_deep(tmp_path, monkeypatch, capsys):
    _refuse_threads(monkeypatch)
    src = tmp_path / "deep.mlir"
    src.write_text('"test.op"() {a = ' + "[" * 3000 + "]" * 3000 + "} : () -> ()\n")
    assert main([str(src), "--emit=mlir", "-o", str(tmp_path / "out.mlir")]) == 1
    err = capsys.readouterr().err
    assert "nesting too deep" in err and "Traceback" not in err
    assert not (tmp_path / "out.mlir").exists()


def test_memory_error_is_reported_as_out_of_memory(monkeypatch, capsys, tmp_path):
    def boom(argv):
        raise MemoryError()

    monkeypatch.setattr(cli, "_dispatch", boom)
    assert main(["x.mlir"]) == 1
    assert capsys.readouterr().err.startswith("error: out of memory")


def test_numpy_that_cannot_be_mapped_is_not_enough_memory(monkeypatch, capsys, tmp_path):
    """numpy's ImportError under a memory limit ('failed to map segment')."""
    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    monkeypatch.setattr(process, "address_space_limit", lambda: None)
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "numpy":
            raise ImportError("Original error was: libscipy_openblas64_.so: failed to map segment from shared object")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    (tmp_path / "k.bin").write_bytes(b"")
    assert main(["dis", str(tmp_path / "k.bin")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: not enough memory to load numpy"), err


# --------------------------------------------------------------------------
# The memory budget: the total, up front
# --------------------------------------------------------------------------


@pytest.fixture
def three_programs(tmp_path):
    """Three programs of 256 output bytes each (i8 -> i32) on a 256-byte
    image: each needs 512 bytes with the image, all three 1024."""
    sb = SeqBin((), (i8_program("p/0", 0, True), i8_program("p/1", 64, True), i8_program("p/2", 128, True)))
    (tmp_path / "p.bin").write_bytes(write(sb))
    (tmp_path / "dm.bin").write_bytes(bytes(range(256)))
    return tmp_path


def test_sim_checks_the_total_output_before_running(three_programs, monkeypatch, capsys):
    d = three_programs
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", "600")
    argv = [str(d / "p.bin"), "--dm", str(d / "dm.bin")]
    for name in ("p/0", "p/1", "p/2"):  # each fits
        assert main_sim(argv + ["--program", name, "-o", str(d / "one.npy")]) == 0
        base = 64 * int(name[-1])
        want = np.arange(base, base + 64, dtype=np.uint8).view(np.int8).astype(np.int32).reshape(4, 16)
        assert np.array_equal(np.load(d / "one.npy"), want)
    capsys.readouterr()
    out = d / "all.npz"
    assert main_sim(argv + ["-o", str(out)]) == 1  # all three do not
    err = capsys.readouterr().err
    assert re.match(r"\S+\.bin: error: ", err) and "Traceback" not in err
    assert "the 3 programs produce 192 elements (768 bytes) together" in err
    assert "256-byte DM image" in err and "more than the 600 bytes" in err and "FETCHC_SIM_MAX_BYTES" in err
    assert not out.exists()
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", "1024")
    assert main_sim(argv + ["-o", str(out)]) == 0


def test_sim_checks_the_dm_image_before_reading_it(three_programs, monkeypatch, capsys):
    d = three_programs
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", "100")
    assert main_sim([str(d / "p.bin"), "--dm", str(d / "dm.bin"), "-o", str(d / "all.npz")]) == 1
    err = capsys.readouterr().err
    assert "the DM image is 256 bytes, more than the 100 bytes fetchc sim may allocate" in err


def test_simulate_api_checks_the_total(three_programs, monkeypatch):
    from fetchc.golden.sim import SimError, simulate
    from fetchc.seqbin import read

    sb = read((three_programs / "p.bin").read_bytes())
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", "1000")
    with pytest.raises(SimError, match=r"the 3 programs produce .* more than the 1000 bytes"):
        simulate(sb, bytes(range(256)))
    assert list(simulate(sb, bytes(range(256)), "p/1")) == ["p/1"]


# --------------------------------------------------------------------------
# A tight ulimit -v while fetchc itself loads
# --------------------------------------------------------------------------

CONSOLE_SCRIPT = Path(sys.executable).parent / "fetchc"


@needs_rlimit
@pytest.mark.parametrize("how", ["script", "module"])
def test_tight_limits_give_one_error_line(tmp_path, how):
    """From 16 to 60 MiB of address space (below about 14 MiB Python itself
    cannot start): one ``error:`` line or a result, never a traceback
    (``ulimit -v 20000`` gave a MemoryError traceback at import), nor
    ``Exception ignored in atexit``, nor ``internal error: SystemError``.
    ``FETCHC_CACHE_DIR`` is fresh, so the start-up cache is written at exit."""
    if how == "script" and not CONSOLE_SCRIPT.exists():
        pytest.skip("the fetchc console script is not installed next to this Python")
    cmd = [str(CONSOLE_SCRIPT)] if how == "script" else FETCHC
    seen = set()
    for mib in range(16, 62, 3):
        env = dict(os.environ, FETCHC_CACHE_DIR=str(tmp_path / f"cache{mib}"))
        r = subprocess.run(cmd + [str(QUIET_KERNEL), "-o", str(tmp_path / "out.bin")], preexec_fn=_limited(mib),
                           env=env, capture_output=True, text=True, timeout=300)
        lines = r.stderr.splitlines()
        assert r.returncode in (0, 1), (mib, r.stderr)
        assert len(lines) == (r.returncode == 1), (mib, r.stderr)
        if lines:
            assert re.fullmatch(r"error: (out of memory|not enough memory)[^\n]*", lines[0]), (mib, r.stderr)
            assert "internal error" not in lines[0]
        seen.add(r.returncode)
        leftovers = [n for n in os.listdir(tmp_path / f"cache{mib}")] if (tmp_path / f"cache{mib}").exists() else []
        assert not [n for n in leftovers if n.endswith(".tmp")], (mib, leftovers)
    assert seen == {0, 1}  # the range covers both outcomes


def test_memory_error_in_an_atexit_handler_is_not_printed(tmp_path):
    """An atexit handler that runs out of memory (the start-up cache written
    at exit, under ulimit -v) printed ``Exception ignored in atexit
    callback ... MemoryError`` after a successful run."""
    script = (
        "import atexit, sys\n"
        "def handler():\n"
        "    raise MemoryError\n"
        "atexit.register(handler)\n"
        "sys.argv = ['fetchc', '--version']\n"
        "from fetchc.command import entry\n"  # the console script's form: fetchc owns the process
        "entry()\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("fetchc ") and r.stderr == "", r.stderr


def test_memory_failure_classification(monkeypatch):
    """What counts as running out of memory: MemoryError, ENOMEM, and under
    an address-space limit CPython's 'error return without exception set'."""
    import errno

    assert process.memory_failure(MemoryError())
    assert process.memory_failure(OSError(errno.ENOMEM, "Cannot allocate memory"))
    assert not process.memory_failure(OSError(errno.ENOENT, "No such file"))
    monkeypatch.setattr(process, "address_space_limit", lambda: 40 << 20)
    assert process.memory_failure(SystemError("error return without exception set"))
    monkeypatch.setattr(process, "address_space_limit", lambda: None)
    assert not process.memory_failure(SystemError("error return without exception set"))
    assert not process.memory_failure(ValueError("x"))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("argv", [["/dev/zero", "-o", "out.bin"], ["dis", "/dev/zero"],
                                  ["run", "/dev/zero", "-o", "out.npz"]])
def test_endless_input_is_refused(tmp_path, monkeypatch, capsys, argv):
    """An input that never ends (/dev/zero) was read until memory ran out
    (the OOM killer ended ``fetchc dis /dev/zero``): reading stops past the
    input limit (1 GiB, lowered here) with an error."""
    monkeypatch.setattr(cli, "MAX_INPUT_BYTES", 1 << 20)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err == f"error: cannot read '/dev/zero': it holds more than {1 << 20} bytes, the most fetchc reads from one input\n"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_sim_inputs_count_against_the_budget(tmp_path, monkeypatch, capsys):
    """``fetchc sim``: a --dm stream is read within FETCHC_SIM_MAX_BYTES (a
    --dm /dev/zero was read without end)."""
    sb = SeqBin((), (i8_program("p/0", 0),))
    (tmp_path / "p.bin").write_bytes(write(sb))
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", "100000")
    assert main_sim([str(tmp_path / "p.bin"), "--dm", "/dev/zero", "-o", str(tmp_path / "o.npz")]) == 1
    assert capsys.readouterr().err == (
        "/dev/zero: error: the DM image is more than the 100000 bytes fetchc sim may allocate "
        "(set FETCHC_SIM_MAX_BYTES to change the limit)\n"
    )
    assert not (tmp_path / "o.npz").exists()


# --------------------------------------------------------------------------
# A --dm image is one slice's DM: never read more of it than 2^19 bytes
# --------------------------------------------------------------------------

SLICE = 1 << 19  # hardware.md §1a: one slice's DM, byte addresses 0 ... 2^19 - 1


@pytest.fixture
def one_program(tmp_path):
    (tmp_path / "p.bin").write_bytes(write(SeqBin((), (i8_program("p/0", 0),))))
    return tmp_path


def _slice_refusal(path: str, size: int | None) -> str:
    what = f"more than the {SLICE} bytes of one slice's DM (hardware.md §1a): --dm takes one slice's image"
    return f"{path}: error: the DM image is {f'{size} bytes, ' if size is not None else ''}{what}\n"


@pytest.mark.parametrize("size", [SLICE + 1, 1 << 40])
def test_sim_refuses_a_dm_file_larger_than_one_slice_from_its_size(one_program, capsys, size):
    """A regular --dm file larger than one slice's DM was read whole (a 1 GB
    image for a 512 KiB DM; beyond physical memory, refused only by the
    budget).  It is refused from its size, before any of it is read: a sparse
    1 TiB file costs nothing."""
    d = one_program
    dm = d / "dm.bin"
    with open(dm, "wb") as f:
        f.truncate(size)
    for extra in ([], ["--program", "p/0"]):
        out = d / "o.npz"
        assert main_sim([str(d / "p.bin"), "--dm", str(dm), *extra, "-o", str(out)]) == 1
        assert capsys.readouterr().err == _slice_refusal(str(dm), size)
        assert not out.exists()


def test_sim_takes_a_dm_file_of_exactly_one_slice(one_program, capsys):
    d = one_program
    image = np.random.default_rng(3).integers(0, 256, SLICE, dtype=np.uint8)
    image.tofile(d / "dm.bin")
    assert main_sim([str(d / "p.bin"), "--dm", str(d / "dm.bin"), "--program", "p/0", "-o", str(d / "o.npy")]) == 0
    assert np.array_equal(np.load(d / "o.npy").reshape(-1), image[:64].view(np.int8))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_sim_reads_a_dm_stream_up_to_one_slice(one_program, monkeypatch, capsys):
    """``--dm /dev/zero`` under the default budget (all physical memory) was
    read to 23.8 GB and OOM-killed: a stream is read to one slice's DM and
    one byte more, then refused (the budget, here 64 MiB, is not reached)."""
    d = one_program
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", str(64 << 20))
    assert main_sim([str(d / "p.bin"), "--dm", "/dev/zero", "-o", str(d / "o.npz")]) == 1
    assert capsys.readouterr().err == _slice_refusal("/dev/zero", None)
    assert not (d / "o.npz").exists()


class _Endless(io.RawIOBase):
    """A stream of zeros without end that counts the bytes it gives."""

    given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), 4096)  # short reads, as a pipe gives
        b[:n] = bytes(n)
        self.given += n
        return n


def test_dm_stream_is_read_into_one_buffer_of_one_slice_and_one_byte():
    """The reader asks a stream for at most one slice's DM plus one byte
    (the byte that proves it is too large), and a stream that fits is read
    into one buffer: no joined chunks and no copy (the image's own bytes,
    about 512 KiB, are the peak)."""
    import tracemalloc

    from fetchc.golden.sim import SimError, read_dm_image

    f = _Endless()
    with pytest.raises(SimError, match="more than the 524288 bytes of one slice's DM"):
        read_dm_image(f, None, 1 << 40)
    assert f.given == SLICE + 1
    f = _Endless()
    with pytest.raises(SimError, match="more than the 1000 bytes fetchc sim may allocate"):
        read_dm_image(f, None, 1000)
    assert f.given == 1001
    data = np.random.default_rng(4).integers(0, 256, SLICE, dtype=np.uint8)
    src = io.BufferedReader(io.BytesIO(data.tobytes()), buffer_size=4096)
    tracemalloc.start()
    try:
        got = read_dm_image(src, None, 1 << 40)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(got, data) and got.dtype == np.uint8
    assert peak < SLICE + (64 << 10), peak


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_sim_checks_the_program_name_before_reading_the_dm_image(one_program, monkeypatch, capsys):
    """``--program NAME`` that names no program skipped the memory check and
    read the whole image before saying so: the name is checked first."""
    d = one_program
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", "1000")
    big = d / "big.bin"
    with open(big, "wb") as f:
        f.truncate(1 << 31)
    for dm in ("/dev/zero", str(big)):
        assert main_sim([str(d / "p.bin"), "--dm", dm, "--program", "nosuch", "-o", str(d / "o.npy")]) == 1
        assert capsys.readouterr().err == f"{d / 'p.bin'}: error: no program named 'nosuch'; the file has: 'p/0'\n"
    assert not (d / "o.npy").exists()


def test_sim_checks_the_budget_whatever_program_is_named(one_program, monkeypatch, capsys):
    """With ``--program``, a regular image over the budget is refused before
    it is read, as without."""
    d = one_program
    (d / "dm.bin").write_bytes(bytes(4096))
    monkeypatch.setenv("FETCHC_SIM_MAX_BYTES", "1000")
    for extra in ([], ["--program", "p/0"]):
        assert main_sim([str(d / "p.bin"), "--dm", str(d / "dm.bin"), *extra, "-o", str(d / "o.npy")]) == 1
        assert "the DM image is 4096 bytes, more than the 1000 bytes fetchc sim may allocate" in capsys.readouterr().err

COMPILE_MIB = 48
"""The address space a compile needs (README "Robustness", robustness.md):
no numpy, no ml_dtypes on the compile path."""


@needs_rlimit
@pytest.mark.parametrize("example", ["nvfp4_dequant_f32.mlir", "int8_zero_point_contract.mlir"])
def test_compiling_works_in_the_documented_address_space(tmp_path, example):
    """Under ``ulimit -v`` of COMPILE_MIB MiB an uncached compile succeeds and
    gives the bytes an unlimited compile gives."""
    src = ROOT / "examples" / example
    env = dict(os.environ, FETCHC_CACHE_DIR="", FETCHC_NO_CACHE="1")
    free = subprocess.run(FETCHC + [str(src), "-o", str(tmp_path / "free.bin")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert free.returncode == 0, free.stderr
    tight = subprocess.run(FETCHC + [str(src), "-o", str(tmp_path / "tight.bin")], env=env,
                           preexec_fn=_limited(COMPILE_MIB), capture_output=True, text=True, timeout=300)
    assert tight.returncode == 0, tight.stderr
    assert (tmp_path / "tight.bin").read_bytes() == (tmp_path / "free.bin").read_bytes()
