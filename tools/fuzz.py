#!/usr/bin/env python3
"""Fuzz harness for fetchc: the parser, the verifiers, the passes and the
``seq.bin`` reader (GitHub issue "Robustness: fuzz the parser, verifiers,
passes and seq.bin reader; nothing crashes, nothing is lost").

Targets (``--target``):

``mlir-bytes``
    Seed MLIR files (``examples/**/*.mlir``, ``test/lit/**/*.mlir``, split on
    ``// -----``, plus generated programs) mangled at the byte and token
    level: bit flips, truncations, token swaps/duplications/deletions,
    dictionary tokens (huge numbers, odd types, deep nesting), splices.
    Run through ``fetchc IN -o OUT`` (sometimes ``-`` / stdin,
    ``--emit=mlir``, ``--split-input-file``, ``--verify-diagnostics``).
``mlir-mutate``
    Structure-aware: a valid generated program with exactly one field
    perturbed (wrong element type, zero point just outside its range, a ninth
    sequencer entry, an odd nibble offset, a stream used twice, a lookup
    moved to ``sub``, a dequant with a bad block layout, ...; see
    ``--list-mutations``).  Most mutations *must* be rejected: an exit 0 for
    those is reported as ``accepted-invalid``.
``seqbin``
    ``seq.bin`` files compiled from generated programs, then corrupted: bit
    flips, truncations, section-table edits, wrong CRC, corruptions with the
    CRC fixed up (so the deep checks run), huge counts, field edits.  Run
    through ``fetchc dis``, ``fetchc dis --json`` and, when ``fetchc.golden.sim``
    exists, ``fetchc sim``.
``pipeline``
    Valid random modules (several functions and fetch chains) through the
    whole default pipeline.  Each must compile or give a located error; a
    compiled one must read back with ``fetchc.seqbin.read`` holding one
    program per fetch (nothing lost), and the ``--emit=mlir`` and generic
    output must re-parse and compile to the byte-identical ``seq.bin``.

``passes``
    Every xDSL pass through ``-p`` (alone or around fetchc's passes) on
    generated modules, seed files and empty modules, with ``-o FILE`` or
    ``-o -``: a module and nothing else on the output, or an error naming a
    pass of the pipeline (or located).
``cli``
    fetchc run as a user runs it, in subprocesses: ``-o /dev/stdout`` (and
    ``/dev/fd/1``, ``/proc/self/fd/1``, ``/dev/stderr``) appended to a log,
    pipes and FIFOs for ``fetchc``, ``dis`` and ``sim``, stale temporary
    files of dead processes, program names that are not identifiers
    (``file``, ``allow_pickle``, ``a/b``...), address-space limits
    (``RLIMIT_AS`` 16-600 MiB: one error line or a result) and
    ``FETCHC_SIM_MAX_BYTES`` against the total output; and the output
    classes of docs/robustness.md: ``-o`` naming an input under another spelling (``out-input``),
    binary output to a pseudo-terminal (``tty``), SIGINT/SIGTERM/SIGHUP at a
    random moment of a write (``signal``: no temporary file left, the output
    absent or whole), a file-size limit that cuts writes short
    (``short-write``: an error, never a cut file reported as success).
``npy``
    ``.npy`` inputs of ``fetchc sim --arg`` and ``fetchc run``: valid arrays
    in every accepted form and corrupt ones (descriptors, shapes, 65
    dimensions, sizes of 2^63, headers of megabytes, sparse files declaring
    gigabytes, truncation, bad magic), scalars as odd text (``1_000``,
    ``١٢٣``) or 0-d arrays, under random ``FETCHC_SIM_MAX_BYTES``.

``parse``
    The fast front end against xDSL's parser, in this process
    (``test/support/parse_oracle.py``): generated modules in their four
    printed forms (custom or generic, with or without locations),
    structure-aware mutations, and byte/token mutations of these and of the
    seeds, whole and (sometimes) chunk by chunk.  Each must fall back or
    build the same IR (generic print with locations, ops, block arguments,
    operands); the fast path accepting what xDSL's parser rejects is
    ``parser-mismatch``, and so is different IR.

Line-ending and nesting cases are generated too: CR-only, CRLF and mixed line
endings (``mlir-bytes``; ``pipeline`` checks that they compile to the same
bytes or fail at the same line and column), deep ``scf.execute_region``
nesting (``mlir-bytes``), dynamic dimensions anywhere (``mlir-mutate``
``dynamic_dim``), and the ``internal-value`` oracle: no message may show
xDSL's placeholder for a dynamic dimension (-9223372036854775808 or a
multiple of it) that the input does not contain.

The untrusted-input oracles (docs/robustness.md) apply to every run: ``escape`` (no character a terminal
acts on, anything ``str.isprintable`` rejects but a line break, in stderr or
in ``dis``'s text), ``quote`` (every file opened for reading, recorded by an
audit hook: none under ``/proc``, ``/sys``, ``/dev``, ``/etc`` but
``/proc/self/statm``, no non-source file and no source file over 1 MiB that a
location named, at most 16 MiB read for quoting per run; ``mlir-bytes`` and
``mlir-mutate`` put such locations on ops), ``budget`` (for ``sim`` and
``run`` jobs under ``FETCHC_SIM_MAX_BYTES``: the peak of ``tracemalloc``,
which sees numpy's arrays, at most the budget plus 96 MiB of fixed costs).

Oracle for every input: exit 0 with a valid result, or exit 1 with an
``error:`` diagnostic (for MLIR input a located ``file:line:col: error:``),
never a traceback / ``internal error`` / disguised crash (``verifier failed
with KeyError``, ``pass 'x' failed with TypeError``, ``failed to parse the
input (IndexError ...)``), never a hang (per-input time limit), never
unbounded memory (the worker runs under ``RLIMIT_AS``), never a leftover
temporary file, and a failing compile never touches an existing ``-o`` file.

Inputs run in-process in one worker subprocess (``fetchc.cli.main`` with
captured stdio) that is restarted when it dies or hangs; the harness itself
uses one CPU core.  No third-party fuzzing engine is needed (atheris is not
used); everything is driven by ``random.Random(--seed)``.

The generated programs (and the chains ``mlir-mutate`` perturbs) come from
``test/support/modgen.py``, the random valid-module generator the property
tests use too (``modgen.generate`` on a ``RandomChooser``, with the
``FUZZ`` / ``FUZZ_SMALL`` / ``FUZZ_BIG`` size profiles); this script puts
``test/support`` on ``sys.path`` itself.

Usage::

    python tools/fuzz.py --target mlir-mutate --seconds 600 --seed 1 --corpus-out /tmp/fz
    python tools/fuzz.py --target all --seconds 60          # 60 s per target
    python tools/fuzz.py --replay test/fuzz-corpus/foo.mlir --tool compile
    python tools/fuzz.py --list-mutations

Exit status: 0 when no input failed the oracle, 1 otherwise, 2 on usage
errors.  The last line of output is the summary (one per target).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import os
import pickle
import random
import re
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The random-module generator is shared with the property tests: it lives in
# test/support/modgen.py (imported as the top-level module ``modgen``; the
# directory, not ``test``, goes on the path, as ``test`` is also a standard
# library package).  Inserted from this file's location so that
# ``python tools/fuzz.py`` works from any directory of a plain checkout.
SUPPORT = REPO / "test" / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))

from respell import STYLES as SSA_STYLES  # noqa: E402
from respell import respell_ssa_names  # noqa: E402
from modgen import (  # noqa: E402
    BITS,
    BLOCK,
    FLOATS,
    FUZZ,
    FUZZ_BIG,
    FUZZ_DRESSED,
    FUZZ_SMALL,
    LOOKUPS,
    SCALE_TYPE,
    STORABLE,
    ZERO_POINTS,
    ZP_RESULT,
    Chain,
    Contract,
    Dequant,
    GenModule,
    RandomChooser,
    generate,
)

TARGETS = ("mlir-bytes", "mlir-mutate", "seqbin", "pipeline", "passes", "cli", "npy", "parse", "cache")

# ===========================================================================
# Worker: runs fetchc.cli.main in-process, one job at a time
# ===========================================================================


class FuzzTimeout(BaseException):
    """Raised by the alarm in the worker; a BaseException so that fetchc's
    ``except Exception`` last resort does not swallow it."""


_OPENS: list[tuple[str, str]] | None = None
"""While a job runs: every file the worker opened for reading (path, how)."""
_MANAGERS: list = []
"""While a job runs: every SourceManager fetchc made (their ``bytes_read``)."""


def _audit(event: str, args: tuple) -> None:
    """``sys.addaudithook``: record files opened for reading during a job."""
    if _OPENS is None or event != "open":
        return
    path, mode, flags = args
    if isinstance(path, int):
        return
    reading = ("r" in mode) if isinstance(mode, str) else (flags is not None and flags & os.O_ACCMODE == os.O_RDONLY)
    if reading:
        _OPENS.append((os.fsdecode(path), str(mode)))


def _instrument() -> None:
    """Record what the quoting oracle needs: files opened, and the bytes each
    SourceManager read (fetchc.frontend.render)."""
    from fetchc.frontend import render  # noqa: PLC0415

    original = render.SourceManager.__init__

    def init(self, *a, **kw):
        original(self, *a, **kw)
        _MANAGERS.append(self)

    render.SourceManager.__init__ = init
    sys.addaudithook(_audit)


def _job_files(job: dict, job_dir: str, base_dir: str) -> dict[str, bytes]:
    """Write the job's files (``@BASE`` in their text is the worker's
    directory, where ``big.mlir`` and ``small.py`` live); ``sparse`` files
    are extended (without writing) to the size given."""
    before = {}
    for name, data in job.get("files", {}).items():
        data = data.replace(b"@BASE", base_dir.encode())
        with open(os.path.join(job_dir, name), "wb") as f:
            f.write(data)
        before[name] = data
    for name, size in job.get("sparse", {}).items():
        with open(os.path.join(job_dir, name), "r+b") as f:
            f.truncate(size)
        before.pop(name, None)
    return before


def _worker_run_job(job: dict, base_dir: str) -> dict:
    from fetchc.cli import main  # noqa: PLC0415

    global _OPENS
    job_dir = os.path.join(base_dir, "job")
    shutil.rmtree(job_dir, ignore_errors=True)
    os.mkdir(job_dir)
    before = _job_files(job, job_dir, base_dir)
    argv = [a.replace("@DM", os.path.join(base_dir, "dm.bin")) for a in job["argv"]]
    saved_env = {k: os.environ.get(k) for k in job.get("env", {})}
    os.environ.update(job.get("env", {}))
    measure = job.get("measure", False)
    if measure:
        import tracemalloc  # noqa: PLC0415

        tracemalloc.start()
    _MANAGERS.clear()
    _OPENS = []

    out_buf, err_buf = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_buf, encoding="utf-8", errors="replace", write_through=True)
    err = io.TextIOWrapper(err_buf, encoding="utf-8", errors="replace", write_through=True)
    stdin = io.TextIOWrapper(io.BytesIO(job.get("stdin", b"")), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    cwd = os.getcwd()
    escaped = None
    rc = None
    t0 = time.monotonic()
    os.chdir(job_dir)
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    signal.setitimer(signal.ITIMER_REAL, job.get("timeout", 10.0))
    try:
        rc = main(list(argv))
    except FuzzTimeout:
        escaped = "timeout"
    except BaseException as e:  # noqa: BLE001 - that is exactly what we look for
        import traceback  # noqa: PLC0415

        escaped = "escaped " + "".join(traceback.format_exception(type(e), e, e.__traceback__))[-4000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(cwd)
        opened, _OPENS = _OPENS, None
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        peak = None
        if measure:
            import tracemalloc  # noqa: PLC0415

            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    elapsed = time.monotonic() - t0
    quote_bytes = max((getattr(m, "bytes_read", 0) for m in _MANAGERS), default=0)
    _MANAGERS.clear()
    files = {}
    checks = {}
    listing = sorted(os.listdir(job_dir))
    for name in listing:
        path = os.path.join(job_dir, name)
        if not os.path.isfile(path):
            continue
        if os.path.getsize(path) > 256 << 20:  # a sparse input: not read back into the worker
            files[name] = ("big", os.path.getsize(path), "")
            continue
        with open(path, "rb") as f:
            data = f.read()
        if name.endswith((".npy", ".npz")) and data != before.get(name):
            checks[name] = _check_numpy(data)
        # Big outputs (simulator results) stay here: only a digest travels.
        files[name] = data if len(data) <= 4 << 20 else ("big", len(data), hashlib.sha1(data).hexdigest())
    changed = [n for n, d in before.items() if files.get(n) != d]
    return {
        "rc": rc,
        "stdout": out_buf.getvalue()[: 4 << 20],
        "stderr": err_buf.getvalue().decode("utf-8", "replace")[:20000],
        "files": files,
        "listing": listing,
        "changed": changed,
        "checks": checks,
        "elapsed": elapsed,
        "escaped": escaped,
        "opened": sorted({p for p, _ in opened or []})[:200],
        "quote_bytes": quote_bytes,
        "peak": peak,
        "budget": int(job["env"]["FETCHC_SIM_MAX_BYTES"]) if "FETCHC_SIM_MAX_BYTES" in job.get("env", {}) else None,
        "base_dir": base_dir,
        "inputs": [os.path.join(job_dir, n) for n in job.get("files", {})],
    }


def _check_numpy(data: bytes) -> str:
    """``"ok"`` when ``data`` is a loadable .npy / .npz, else why not."""
    import numpy as np  # noqa: PLC0415

    try:
        loaded = np.load(io.BytesIO(data), allow_pickle=False)
        if hasattr(loaded, "files"):
            for k in loaded.files:
                _ = loaded[k].shape
        return "ok"
    except MemoryError:
        return "ok"  # too big to load under the worker's RLIMIT_AS: unverified, not wrong
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _recv_exact(stream, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def _recv(stream):
    (n,) = struct.unpack("<Q", _recv_exact(stream, 8))
    return pickle.loads(_recv_exact(stream, n))


def worker_main(mem_mb: int, base_dir: str | None = None) -> None:
    """The worker loop: read pickled jobs on stdin, answer on stdout."""
    import resource  # noqa: PLC0415

    inp = sys.stdin.buffer
    outp = sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    # Import everything before limiting memory (the limit is for the input).
    import fetchc.cli  # noqa: F401, PLC0415
    import fetchc.driver  # noqa: F401, PLC0415
    import fetchc.seqbin  # noqa: F401, PLC0415

    try:
        import fetchc.golden.sim  # noqa: F401, PLC0415
    except Exception:  # noqa: BLE001 - absent or broken: the parent decides
        pass

    def on_alarm(signum, frame):
        raise FuzzTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    _instrument()
    base_dir = base_dir or tempfile.mkdtemp(prefix="fetchc-fuzz-worker-")
    rng = random.Random(1234)
    with open(os.path.join(base_dir, "dm.bin"), "wb") as f:
        f.write(bytes(rng.getrandbits(8) for _ in range(1 << 16)) * 8)  # one slice's 512 KiB DM image
    # Files a location may name (mlir-bytes): a source file over the 1 MiB
    # quoting limit, one under it, and a file that is no source file.
    with open(os.path.join(base_dir, "big.mlir"), "wb") as f:
        f.write(b"// big\n" * ((3 << 20) // 8))
    with open(os.path.join(base_dir, "small.py"), "wb") as f:
        f.write(b"x = 1  # quoted\n" * 1000)
    with open(os.path.join(base_dir, "secret.txt"), "wb") as f:
        f.write(b"FUZZ-SECRET-LINE\n")
    if mem_mb > 0:
        limit = mem_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _send(outp, {"ready": True})
    try:
        while True:
            try:
                job = _recv(inp)
            except EOFError:
                break
            result = _worker_run_job(job, base_dir)
            _send(outp, result)
            if result["escaped"] == "timeout":
                # fetchc runs the command on a thread of its own: the alarm
                # interrupted only the main thread, the runaway thread may
                # still be going.  Leave; the parent starts a fresh worker.
                break
    finally:
        shutil.rmtree(base_dir, ignore_errors=True)
    os._exit(0)


class Worker:
    """The parent's handle on the worker subprocess."""

    def __init__(self, mem_mb: int = 2048, hard_timeout: float = 30.0):
        self.mem_mb = mem_mb
        self.hard_timeout = hard_timeout
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self.base_dir: str | None = None

    def start(self) -> None:
        env = dict(os.environ)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "FETCHC_SIM_THREADS"):
            env[var] = "1"
        # The parent owns the worker's scratch directory: a killed worker
        # cannot clean up after itself.
        self.base_dir = tempfile.mkdtemp(prefix="fetchc-fuzz-worker-")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--mem-mb", str(self.mem_mb),
             "--worker-dir", self.base_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=str(REPO),
        )
        msg = self._read(120.0)
        if not isinstance(msg, dict) or not msg.get("ready"):
            raise RuntimeError("the fuzz worker did not start (is the project importable?)")

    def _read(self, timeout: float):
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = bytearray()
        need = 8
        header_done = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                raise TimeoutError
            chunk = os.read(fd, max(need - len(buf), 1 << 16) if header_done else need - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
            if not header_done and len(buf) >= 8:
                (n,) = struct.unpack("<Q", bytes(buf[:8]))
                del buf[:8]
                need = n
                header_done = True
            if header_done and len(buf) >= need:
                return pickle.loads(bytes(buf[:need]))

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.proc.wait()
            self.proc = None
        if self.base_dir is not None:
            shutil.rmtree(self.base_dir, ignore_errors=True)
            self.base_dir = None

    def run(self, job: dict) -> dict:
        """Run ``job``; returns the worker's result, or a result with
        ``escaped`` = ``"hang"`` / ``"worker died ..."``."""
        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            _send(self.proc.stdin, job)
            res = self._read(job.get("timeout", 10.0) + self.hard_timeout)
            if res.get("escaped") == "timeout":
                self.stop()
                self.restarts += 1
            return res
        except TimeoutError:
            self.stop()
            self.restarts += 1
            return {"rc": None, "stdout": b"", "stderr": "", "files": {}, "listing": [], "changed": [],
                    "elapsed": job.get("timeout", 10.0) + self.hard_timeout, "escaped": "hang (no answer)"}
        except (EOFError, BrokenPipeError, OSError):
            rc = self.proc.wait() if self.proc else None
            self.proc = None
            if self.base_dir is not None:
                shutil.rmtree(self.base_dir, ignore_errors=True)
                self.base_dir = None
            self.restarts += 1
            how = f"signal {-rc}" if rc is not None and rc < 0 else f"exit {rc}"
            return {"rc": None, "stdout": b"", "stderr": "", "files": {}, "listing": [], "changed": [],
                    "elapsed": 0.0, "escaped": f"worker died ({how}; out of memory or a native crash)"}


# ===========================================================================
# Oracle
# ===========================================================================

_MASKED = [
    re.compile(r"internal error"),
    re.compile(r"(?m)^Traceback \(most recent call last\)"),
    re.compile(r"verifier failed with [A-Za-z_]+"),
    re.compile(r"pass '[^']*' failed with [A-Za-z_]+"),
    re.compile(r"failed to parse the input \((?!ParseError)[A-Za-z_]+"),
]
_LOCATED = re.compile(r"^(?:[^\n:]+):\d+:\d+: error: ", re.MULTILINE)
_ANY_ERROR = re.compile(r"(?:^|: )error: ", re.MULTILINE)
SENTINEL = b"fetchc-fuzz: existing output, must survive a failing compile\n"


_CARET = re.compile(r"^\s*\^\s*$")


_HEADER = re.compile(r"^(?:.*?: )?(?:error|warning|note|remark): ")


def _without_snippets(err: str) -> str:
    """stderr without the echoed source lines (a diagnostic line, then the
    source line, then a caret line): the input may itself contain 'internal
    error' or 'Traceback', or look like a caret."""
    lines = err.splitlines()
    keep = []
    i = 0
    while i < len(lines):
        keep.append(lines[i])
        if _HEADER.match(lines[i]) and i + 2 < len(lines) and _CARET.match(lines[i + 2]):
            i += 3
        else:
            i += 1
    return "\n".join(keep) + ("\n" if keep else "")


@dataclass
class Verdict:
    ok: bool
    kind: str  # "ok", "crash", "hang", "masked", "unlocated", "no-error", "bad-output", ...
    detail: str = ""


_PLACEHOLDER = re.compile(r"-\d{19,}")
_RESOURCE_NOISE = re.compile(r"OpenBLAS|can't start new thread|failed to map segment")


def internal_value(err: str, source: bytes | None) -> str | None:
    """A number in ``err`` that is xDSL's placeholder for a dynamic dimension
    (``-9223372036854775808`` = -2^63) or a product of it (``-147573952589676412928``
    = 16 x -2^63), and not text of the input itself; else None.  MLIR prints
    a dynamic dimension as ``?``."""
    if source is not None and any(len(t) > 19 or int(t) >= 1 << 63 for t in re.findall(rb"\d{19,}", source)):
        return None  # the input wrote such a number itself (a signless i64 2^63 reads back as -2^63)
    for m in _PLACEHOLDER.finditer(err):
        n = int(m.group())
        if re.match(r",\s*\d|\s+to\s+\d", err[m.end():]):
            continue  # a range: "values in the range [-9223372036854775808, 18446744073709551616)"
        if n % (1 << 63) == 0 and (source is None or m.group().encode() not in source):
            return m.group()
    return None


_STATM = re.compile(r"\A/proc/(?:self|thread-self|\d+)/statm\Z")
_SYSTEM_FILES_OK = ("/dev/null", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr")
BUDGET_SLACK = 96 << 20
"""What a run may allocate beyond FETCHC_SIM_MAX_BYTES: what no file sizes
(the simulator's per-chunk index arrays, numpy's and xDSL's own tables)."""


def unsafe_characters(text: str) -> str | None:
    """The characters of ``text`` a terminal acts on (anything Python does
    not call printable but a line break), as ``U+XXXX``; None if none."""
    if text.isprintable():
        return None
    bad = sorted({c for c in text if not c.isprintable() and c != "\n"})
    return ", ".join(f"U+{ord(c):04X}" for c in bad[:8]) if bad else None


def untrusted_verdict(res: dict, tool: str) -> Verdict | None:
    """The untrusted-input classes: escape sequences in any output (``escape``), files
    a location named read for quoting that must not be (``quote``: /proc,
    /sys, /dev, non-source files, a source file over 1 MiB, more than 16 MiB
    in all), allocations beyond ``FETCHC_SIM_MAX_BYTES`` (``budget``)."""
    texts = [("stderr", res.get("stderr") or "")]
    if tool == "dis" or res.get("text_stdout"):
        texts.append(("stdout", (res.get("stdout") or b"").decode("utf-8", "replace")))
    for where, text in texts:
        bad = unsafe_characters(text)
        if bad:
            line = next((ln for ln in text.splitlines() if unsafe_characters(ln)), text[:200])
            return Verdict(False, "escape", f"{where} holds {bad}: {line[:200]!r}")
    for path in res.get("opened") or []:
        norm = os.path.normpath(path)
        system = norm.startswith(("/proc/", "/sys/", "/dev/", "/etc/")) and not _STATM.match(norm)
        if (system and norm not in _SYSTEM_FILES_OK) or norm.endswith(("secret.txt", "big.mlir")):
            return Verdict(False, "quote", f"read {path} (not a file a location may quote)")
    if "FUZZ-SECRET-LINE" in (res.get("stderr") or ""):
        return Verdict(False, "quote", "quoted a line of a file that is not a source file")
    if (res.get("quote_bytes") or 0) > 16 << 20:
        return Verdict(False, "quote", f"read {res['quote_bytes']} bytes for quoting, more than 16 MiB")
    budget, peak = res.get("budget"), res.get("peak")
    if budget is not None and peak is not None and peak > budget + BUDGET_SLACK:
        return Verdict(False, "budget", f"allocated {peak} bytes at the peak under FETCHC_SIM_MAX_BYTES={budget}")
    return None


def judge(res: dict, *, tool: str, out_name: str | None = None, mlir_input: bool = True,
          expect_error: bool = False, emit: str = "bin", located: bool = True,
          source: bytes | None = None) -> Verdict:
    """Apply the oracle to one worker result (``source``: the input, so that
    numbers it contains are not mistaken for internal values)."""
    esc = res.get("escaped")
    if esc:
        kind = "hang" if esc.startswith(("timeout", "hang")) else "crash"
        return Verdict(False, kind, esc)
    bad = untrusted_verdict(res, tool)
    if bad is not None:
        return bad
    rc, err = res["rc"], res["stderr"]
    err = _without_snippets(err)
    for pat in _MASKED:
        m = pat.search(err)
        if m:
            line = next((ln for ln in err.splitlines() if m.group(0) in ln), m.group(0))
            return Verdict(False, "crash" if "internal error" in m.group(0) or "Traceback" in m.group(0) else "masked",
                           line.strip())
    if rc not in (0, 1):
        return Verdict(False, "crash", f"exit code {rc}: {err[:300]}")
    m = _RESOURCE_NOISE.search(err)
    if m:
        return Verdict(False, "resource", next((ln for ln in err.splitlines() if m.group(0) in ln), m.group(0)))
    value = internal_value(err, source)
    if value is not None:
        return Verdict(False, "internal-value", next((ln.strip() for ln in err.splitlines() if value in ln), value))
    if re.search(r"error: .*out of memory|MemoryError", err):
        # the input made fetchc try to allocate more than RLIMIT_AS allows
        return Verdict(False, "oom", next((ln for ln in err.splitlines() if "memory" in ln.lower()), err[:200]))
    leftovers = [n for n in res["listing"] if n.startswith(".fetchc-") or n.endswith(".tmp")]
    if leftovers:
        return Verdict(False, "leftover", f"temporary files left behind: {leftovers}")
    if rc == 1:
        if out_name and res["files"].get(out_name) != SENTINEL:
            return Verdict(False, "clobbered", "a failing run changed the existing output file")
        if not _ANY_ERROR.search(err):
            return Verdict(False, "no-error", f"exit 1 without an error: diagnostic: {err[:300]!r}")
        if mlir_input and located and not _LOCATED.search(err):
            return Verdict(False, "unlocated", err.strip().splitlines()[0] if err.strip() else "")
        return Verdict(True, "ok")
    # rc == 0
    if expect_error:
        return Verdict(False, "accepted-invalid", "exit 0 for an input that must be rejected")
    if tool == "compile" and out_name:
        data = res["files"].get(out_name)
        if data is None or data == SENTINEL:
            return Verdict(False, "bad-output", "exit 0 but no output was written")
        if emit == "bin" and isinstance(data, bytes):
            from fetchc.seqbin import SeqBinError, read  # noqa: PLC0415

            try:
                read(data)
            except SeqBinError as e:
                return Verdict(False, "bad-output", f"the seq.bin does not read back: {e}")
    if tool == "dis" and not res["stdout"]:
        return Verdict(False, "bad-output", "fetchc dis printed nothing")
    if tool == "sim" and out_name:
        data = res["files"].get(out_name)
        if data is None or data == SENTINEL:
            return Verdict(False, "bad-output", "fetchc sim exited 0 but wrote no output")
        check = res.get("checks", {}).get(out_name, "ok")
        if check != "ok":
            return Verdict(False, "bad-output", f"fetchc sim wrote an unreadable .npy/.npz: {check}")
    return Verdict(True, "ok")


# ===========================================================================
# Program generator (valid programs: test/support/modgen.py, shared with the
# property tests), and single-field perturbations
# ===========================================================================

LOOKUP = set(LOOKUPS)
ZP = {s: (ZP_RESULT[s], lo, hi) for s, (lo, hi) in ZERO_POINTS.items()}


def gen_module(rng: random.Random, profile=FUZZ, nfuncs: int | None = None) -> GenModule:
    """A random valid module (:func:`modgen.generate` on ``rng``)."""
    return generate(RandomChooser(rng), profile, nfuncs)


def rebase(gm: GenModule, rng: random.Random) -> None:
    """Move every tensor of ``gm`` to a random address in the first 128 KiB
    (inside the simulator's 512 KiB DM image, one slice's; tensors may then overlap)."""
    for f in gm.funcs:
        for c in f.chains:
            c.base = str(8 * rng.randint(0, 1 << 14))
            if c.dequant:
                c.dequant.scale_base = 8 * rng.randint(0, 1 << 14)
            if c.refetch:
                c.refetch.base = 8 * rng.randint(0, 1 << 14)


# ---------------------------------------------------------------------------
# Structure-aware mutations: each returns "error" (must be rejected) or "any"
# ---------------------------------------------------------------------------

MUTATIONS: dict[str, Callable[[Chain, random.Random], str]] = {}


def mutation(fn):
    MUTATIONS[fn.__name__.removeprefix("m_")] = fn
    return fn


def _tail(c: Chain, consumer: str) -> None:
    """Replace the consumers of ``c`` by one of the mutations' fixed tails:
    ``commit`` (into a 1-D memref), ``to_trf`` / ``to_vrf``, ``transpose``
    (both shapes reversed, then commit), ``switch_commit`` (switch, collect,
    commit), ``contract`` (switch, collect, a contraction with a ``!rngd.trf``
    argument, commit of the accumulator) or ``none`` (the stream unused)."""
    c.engines, c.contract, c.transpose, c.refetch = [], None, None, None
    c.commit_shape = c.commit_layout = None
    c.consumer = consumer
    if consumer == "transpose":
        c.transpose, c.consumer = "reverse", "commit"
    elif consumer == "switch_commit":
        c.engines, c.consumer = ["rngd.switch", "rngd.collect"], "commit"
    elif consumer == "contract":
        c.engines, c.contract, c.consumer = ["rngd.switch", "rngd.collect"], Contract(), "commit"


def _last_elem(c: Chain) -> str:
    """The element type of the chain's stream after its stages / dequant."""
    return c.stages[-1][1] if c.stages else (c.dequant.out_elem if c.dequant else c.stream_elem or c.mem_elem)


@mutation
def m_wrong_stream_elem(c, r):
    """fetch.fetch result element type differs from the memref's."""
    c.stream_elem = r.choice([e for e in STORABLE if e != c.mem_elem])
    return "error"


@mutation
def m_unsupported_memref_elem(c, r):
    """a memref of a type the Fetch Unit cannot read (f16, i1, i5, ...)."""
    c.mem_elem = c.stream_elem = r.choice(["f16", "f64", "i1", "i2", "i64", "ui8", "si8", "i5", "i9", "index",
                                           "f8E4M3FNUZ", "tf32", "complex<f32>"])
    c.stages, c.dequant = [], None
    _tail(c, "commit")
    return "error"


@mutation
def m_bad_lookup_pair(c, r):
    """a table lookup to an output the table does not have."""
    c.mem_elem = r.choice(["f4E2M1FN", "f8E4M3FN", "f8E5M2", "i8", "bf16", "f32"])
    c.stages = [["fetch.table_lookup", r.choice(["f32", "i8", "f8E8M0FNU", "bf16", "f16", "f8E4M3FN"]), None]]
    if tuple(x for x in (c.mem_elem, c.stages[0][1])) in LOOKUP:
        c.stages[0][1] = "f32"
    c.dequant = None
    _fit_packet(c)
    return "error"


@mutation
def m_bad_cast_pair(c, r):
    """a type cast the hardware does not have (i8→i16, f32→f8, f8→bf16...)."""
    pairs = [("i8", "i16"), ("f32", "f8E4M3FN"), ("f8E4M3FN", "bf16"), ("i4", "i8"), ("bf16", "f8E5M2"),
             ("i32", "f32"), ("f8E8M0FNU", "f32"), ("i8", "i9"), ("f4E2M1FN", "f32"), ("i16", "i8")]
    s, d = r.choice(pairs)
    c.mem_elem, c.stages, c.dequant = s, [["fetch.cast", d, None]], None
    _fit_packet(c)
    return "error"


@mutation
def m_zp_out_of_range(c, r):
    """a zero point just outside (or far outside) the source range."""
    s = r.choice(["i4", "i8"])
    out, lo, hi = ZP[s]
    zp = r.choice([lo - 1, hi + 1, lo - 1, hi + 1, 1 << 31, -(1 << 31) - 1, 1 << 40, (1 << 31) - 1])
    c.mem_elem, c.stages, c.dequant = s, [["fetch.zp_sub", out, zp]], None
    _tail(c, "contract")
    _fit_packet(c)
    return "error"


@mutation
def m_zp_bad_pair(c, r):
    """zero-point subtraction with a wrong widening (i4→i9, i16→...)."""
    s, d = r.choice([("i4", "i9"), ("i8", "i5"), ("i16", "i9"), ("i8", "i16"), ("f8E4M3FN", "i9")])
    c.mem_elem, c.stages, c.dequant = s, [["fetch.zp_sub", d, 0]], None
    _tail(c, "contract")
    _fit_packet(c)
    return "error"


@mutation
def m_ninth_entry(c, r):
    """nine non-mergeable loop-nest entries (the table holds 8)."""
    n = r.choice([9, 9, 10])
    c.mem_elem, c.stages, c.dequant, c.ctx = "i8", [], None, "main"
    _tail(c, "commit")
    sizes = [2] * n
    strides, acc = [], 1
    for sz in reversed(sizes):
        strides.append(acc)
        acc *= sz * 2  # a gap after every dimension: nothing merges
    strides.reverse()
    c.mem_shape = sizes
    c.mem_layout = f"strided<[{', '.join(map(str, strides))}]>"
    c.time, c.packet, c.map = sizes[:-1], sizes[-1:], None
    return "error"


@mutation
def m_odd_nibble_offset(c, r):
    """a 4-bit read starting at an odd element offset."""
    c.mem_elem, c.ctx, c.dequant = r.choice(["f4E2M1FN", "i4"]), "main", None
    _tail(c, "commit")
    c.stages = [["fetch.table_lookup", "f8E4M3FN", None]] if c.mem_elem == "f4E2M1FN" else []
    p = r.choice([2, 4, 16])
    a = r.choice([1, 4, 16])
    k = r.choice([1, 3, 5])
    if r.random() < 0.5:
        c.mem_shape, c.time, c.packet, c.mem_layout = [a, p + 8], [a], [p], None
        c.map = f"affine_map<(d0, d1) -> (d0, d1 + {k})>"
    else:
        c.mem_shape, c.time, c.packet, c.map = [a, p], [a], [p], None
        c.mem_layout = f"strided<[{p + 8}, 1], offset: {k}>"
    return "error"


@mutation
def m_stream_used_twice(c, r):
    """the last stream of the chain gets a second consumer."""
    if c.contract is not None:
        _tail(c, "commit")
        if c.stages and c.stages[-1][0] == "fetch.zp_sub":
            c.stages = []
    c.extra_use = True
    return "error"


@mutation
def m_stream_unused(c, r):
    """the chain's last stream is never consumed."""
    _tail(c, "none")
    return "error"


@mutation
def m_lookup_on_sub(c, r):
    """a fetch.table_lookup written on the sub context (rule 2).  A
    dequant or convert on sub is not an error any more: fetch-route-sub-decode
    routes it through DM (hardware.md §2.1), so the chain becomes a plain lookup."""
    c.ctx, c.dequant = "sub", None
    s, d = r.choice(sorted(LOOKUP))
    c.mem_elem, c.stages = s, [["fetch.table_lookup", d, None]]
    _tail(c, "commit")
    _fit_packet(c)
    return "error"


@mutation
def m_dequant_bad_layout(c, r):
    """a dequant whose block scales do not fit its packets."""
    fmt = r.choice(["nvfp4", "mxfp4"])
    block = BLOCK[fmt]
    rows = r.choice([1, 4, 64])
    c.ctx, c.mem_elem, c.stages, c.mem_layout = "main", "f4E2M1FN", [], None
    _tail(c, "commit")
    c.dequant = Dequant(fmt, [rows, 4], SCALE_TYPE[fmt], gscale=fmt == "nvfp4")
    how = r.choice(["packet_not_block", "scale_shape", "axis_not_blocks", "transposed", "offset_not_block"])
    if how == "packet_not_block":  # packets of half a block
        c.mem_shape, c.time, c.packet = [rows, block * 4], [rows, 8], [block // 2]
        c.map = f"affine_map<(d0, d1, d2) -> (d0, d1 * {block // 2} + d2)>"
    elif how == "scale_shape":
        c.mem_shape, c.time, c.packet, c.map = [rows, block * 4], [rows], [block * 4], None
        c.dequant.bscale_shape = r.choice([[rows, 3], [rows + 1, 4], [rows * 4], [4, rows + 1]])
    elif how == "axis_not_blocks":
        c.mem_shape, c.time, c.packet, c.map = [rows, block + 2], [rows], [block + 2], None
        c.dequant.bscale_shape = [rows, 1]
    elif how == "transposed":  # packet walks the rows, not the input axis
        c.mem_shape, c.time, c.packet = [block * 2, block * 4], [block * 4], [block * 2]
        c.map = "affine_map<(d0, d1) -> (d1, d0)>"
        c.dequant.bscale_shape = [block * 2, 4]
    else:
        c.mem_shape, c.time, c.packet = [rows, block * 5], [rows], [block * 4]
        c.map = "affine_map<(d0, d1) -> (d0, d1 + 2)>"
        c.dequant.bscale_shape = [rows, 5]
    return "error"


@mutation
def m_dequant_bad_operands(c, r):
    """a dequant with a wrong format, scale type, tensor scale or input."""
    fmt = r.choice(["nvfp4", "mxfp4"])
    block = BLOCK[fmt]
    c.ctx, c.mem_elem, c.mem_layout, c.map = "main", "f4E2M1FN", None, None
    _tail(c, "commit")
    c.mem_shape, c.time, c.packet = [4, block * 2], [4], [block * 2]
    c.stages = []
    c.dequant = Dequant(fmt, [4, 2], SCALE_TYPE[fmt], gscale=fmt == "nvfp4")
    how = r.choice(["format", "scale_elem", "gscale", "from_stage", "out_elem", "in_elem"])
    if how == "format":
        c.dequant.format = r.choice(["fp4", "NVFP4", "", "mxfp8"])
    elif how == "scale_elem":
        c.dequant.bscale_elem = "f8E8M0FNU" if fmt == "nvfp4" else "f8E4M3FN"
    elif how == "gscale":
        c.dequant.gscale = not c.dequant.gscale
    elif how == "from_stage":
        c.stages = [["fetch.convert", "f4E2M1FN", None]]
    elif how == "out_elem":
        c.dequant.out_elem = r.choice(["bf16", "f8E4M3FN"])
    else:
        c.mem_elem = "i4"
    return "error"


@mutation
def m_base_misaligned(c, r):
    """a base that is not a multiple of 8, negative, or at/above 2^32."""
    c.base = str(r.choice([1, 4, 6291457, 7, -8, -1, 1 << 32, (1 << 32) + 8, 1 << 63, (1 << 64) + 8]))
    return "error"


@mutation
def m_out_of_bounds(c, r):
    """reads past the end of the memref."""
    c.stages, c.dequant, c.ctx = [], None, "main"
    _tail(c, "commit")
    c.mem_elem = r.choice(["i8", "bf16", "f32"])
    a, p = r.choice([1, 4, 16]), r.choice([4, 8, 16])
    c.mem_layout = None
    c.mem_shape, c.time, c.packet = [a, p], [a], [p]
    c.map = r.choice([f"affine_map<(d0, d1) -> (d0, d1 + {p})>", "affine_map<(d0, d1) -> (d0 + 1, d1)>",
                      "affine_map<(d0, d1) -> (d0 - 1, d1)>", "affine_map<(d0, d1) -> (d0 * 2, d1)>"])
    if a == 1 and "d0 * 2" in c.map:
        c.map = "affine_map<(d0, d1) -> (d0 + 1, d1)>"
    return "error"


@mutation
def m_stage_order(c, r):
    """adapter stages out of hardware order, or one stage twice."""
    c.dequant, c.ctx = None, "main"
    choice = r.choice(["cast_lookup", "double_cast", "double_lookup", "zp_cast", "lookup_after_cast"])
    if choice == "cast_lookup":
        c.mem_elem, c.stages = "f8E4M3FN", [["fetch.cast", "f32", None], ["fetch.table_lookup", "bf16", None]]
    elif choice == "double_cast":
        c.mem_elem, c.stages = "bf16", [["fetch.cast", "f32", None], ["fetch.cast", "bf16", None]]
    elif choice == "double_lookup":
        c.mem_elem, c.stages = "f4E2M1FN", [["fetch.table_lookup", "f8E4M3FN", None],
                                            ["fetch.table_lookup", "bf16", None]]
    elif choice == "zp_cast":
        c.mem_elem, c.stages = "i8", [["fetch.zp_sub", "i9", 0], ["fetch.cast", "i32", None]]
    else:
        c.mem_elem, c.stages = "f32", [["fetch.cast", "bf16", None], ["fetch.table_lookup", "f32", None]]
    _tail(c, "commit")
    _fit_packet(c)
    return "error"


@mutation
def m_i9_to_commit(c, r):
    """an i5/i9 stream committed, staged or transposed (contraction only)."""
    s = r.choice(["i4", "i8"])
    c.mem_elem, c.stages, c.dequant, c.ctx = s, [["fetch.zp_sub", ZP[s][0], 0]], None, "main"
    _tail(c, r.choice(["commit", "to_trf", "to_vrf", "transpose", "switch_commit"]))
    _fit_packet(c)
    return "error"


@mutation
def m_stage_changes_shape(c, r):
    """an adapter stage that changes the context or the shape."""
    if not c.stages:
        c.mem_elem, c.stages, c.dequant = "i8", [["fetch.cast", "i32", None]], None
        _fit_packet(c)
    how = r.choice(["ctx", "time", "packet"])
    ctx = "sub" if c.ctx == "main" else "main"
    if how == "ctx":
        c.stage_stream[0] = (ctx, c.time, c.packet)
    elif how == "time":
        c.stage_stream[0] = (c.ctx, c.time + [1], c.packet)
    else:
        c.stage_stream[0] = (c.ctx, c.time, [c.packet[0] * 2] + c.packet[1:])
    return "error"


@mutation
def m_convert_impossible(c, r):
    """a fetch.convert with no legal stage chain."""
    s, d = r.choice([("f32", "f8E4M3FN"), ("i32", "i8"), ("f4E2M1FN", "i8"), ("bf16", "f8E5M2"), ("f4E2M1FN", "bf16"),
                     ("f8E8M0FNU", "f32"), ("i8", "i9"), ("i4", "i5"), ("f32", "f16"), ("i16", "f32")])
    c.mem_elem, c.stages, c.dequant, c.ctx = s, [["fetch.convert", d, None]], None, "main"
    _tail(c, "contract" if d in ("i5", "i9") else "commit")
    _fit_packet(c)
    return "error"


@mutation
def m_nonlinear_map(c, r):
    """a map with mod / floordiv / ceildiv / a product of dims / a symbol."""
    c.dequant, c.stages = None, []
    _tail(c, "commit")
    c.mem_elem, c.ctx, c.mem_layout = "i8", "main", None
    c.mem_shape, c.time, c.packet = [16, 16], [16], [16]
    c.map = r.choice(["affine_map<(d0, d1) -> (d0 mod 16, d1)>", "affine_map<(d0, d1) -> (d0 floordiv 2, d1)>",
                      "affine_map<(d0, d1) -> (d0 ceildiv 2, d1)>", "affine_map<(d0, d1) -> (d0 * d1, d1)>",
                      "affine_map<(d0, d1)[s0] -> (d0 + s0, d1)>"])
    return "error"


@mutation
def m_map_arity(c, r):
    """a map with the wrong number of dims or results, or none when needed."""
    c.dequant, c.stages, c.mem_elem, c.ctx, c.mem_layout = None, [], "i8", "main", None
    _tail(c, "commit")
    c.mem_shape, c.time, c.packet = [16, 16], [16], [16]
    c.map = r.choice(["affine_map<(d0) -> (d0, d0)>", "affine_map<(d0, d1, d2) -> (d0, d1)>",
                      "affine_map<(d0, d1) -> (d0)>", "affine_map<(d0, d1) -> (d0, d1, 0)>"])
    if r.random() < 0.3:
        c.map, c.time = None, [4, 4]
    return "error"


@mutation
def m_entry_too_big(c, r):
    """a dimension > 65536 that cannot be split into two entries."""
    c.dequant, c.stages, c.mem_elem, c.ctx, c.mem_layout, c.map = None, [], "i8", "main", None, None
    _tail(c, "to_vrf")
    n = r.choice([65537, 65539, 2 * 65537, 131071, 65536 * 65537])
    c.mem_shape, c.time, c.packet = [n, 1], [n], [1]
    return "error"


@mutation
def m_bad_read_size(c, r):
    """a pinned read_size that is illegal (0, -1, 3, too big, over a flit)."""
    c.dequant, c.ctx, c.mem_layout, c.map = None, "main", None, None
    c.mem_elem, c.stages = "i8", [["fetch.cast", "i32", None]]
    _tail(c, "commit")
    c.mem_shape, c.time, c.packet = [16, 32], [16], [32]
    c.read_size = str(r.choice([0, -1, 3, 16, 32, 64, 1 << 40]))
    return "error"


@mutation
def m_sub_read_not_8_bytes(c, r):
    """a sub-context packet that is not a whole number of 8-byte reads."""
    c.dequant, c.ctx, c.mem_layout, c.map, c.stages = None, "sub", None, None, []
    _tail(c, "to_trf")
    c.mem_elem = r.choice(["i8", "bf16", "f32"])
    p = {"i8": r.choice([1, 4, 12]), "bf16": r.choice([1, 2, 6]), "f32": r.choice([1, 3])}[c.mem_elem]
    c.mem_shape, c.time, c.packet = [8, p], [8], [p]
    return "error"


@mutation
def m_stream_function_arg(c, r):
    """a stream passed as a function argument."""
    c.stream_arg = True
    return "error"


@mutation
def m_dynamic_memref(c, r):
    """a memref with a dynamic dimension or layout."""
    c.dequant, c.map = None, None
    if r.random() < 0.5:
        c.mem_shape = [None] + list(c.mem_shape[1:])
    else:
        c.mem_layout = "strided<[?, 1], offset: ?>"
        c.mem_shape = list(c.mem_shape[:1]) + list(c.mem_shape[1:]) if len(c.mem_shape) == 2 else [4, 4]
        c.time, c.packet = [c.mem_shape[0]], [c.mem_shape[1]]
    return "error"


@mutation
def m_zero_or_negative_dim(c, r):
    """a stream dimension of 0 or less, or an empty packet shape."""
    which = r.choice(["time0", "packet0", "packet_empty", "neg"])
    if which == "time0":
        c.time = [0] + c.time[1:]
    elif which == "packet0":
        c.packet = [0]
    elif which == "packet_empty":
        c.packet = []
    else:
        c.time = [-4] + c.time[1:]
    return "error"


@mutation
def m_unknown_context(c, r):
    """a stream context other than main / sub."""
    c.ctx = r.choice(["aux", "Main", "sub2", "tensor"])
    return "error"


@mutation
def m_commit_mismatch(c, r):
    """a commit into a memref of another size or element type."""
    if c.consumer != "commit" or c.contract is not None:
        _tail(c, "commit")
        if c.stages and c.stages[-1][0] == "fetch.zp_sub":
            c.stages = []
    c.refetch = None
    if r.random() < 0.5:
        c.commit_numel_delta = r.choice([1, -1, 7])
    else:
        c.commit_elem = r.choice([e for e in STORABLE if e != _last_elem(c)])
    return "error"


@mutation
def m_bad_accumulator(c, r):
    """a contraction accumulating into the wrong type."""
    if c.contract is None:
        _tail(c, "contract")
    assert c.contract is not None
    c.contract.acc_elem = "i32" if _last_elem(c) in FLOATS else r.choice(["f32", "i16", "bf16"])
    return "error"


@mutation
def m_huge_shapes(c, r):
    """huge memref / stream dimensions (must not hang or allocate)."""
    n = r.choice([1 << 31, 1 << 32, (1 << 32) * 65536, 1 << 62, 10 ** 30, 65536 * 65536])
    c.dequant, c.stages, c.mem_layout, c.ctx = None, [], None, "main"
    _tail(c, "to_vrf")
    c.mem_elem = "i8"
    which = r.choice(["time", "packet", "both"])
    if which == "time":
        c.mem_shape, c.time, c.packet, c.map = [n, 16], [n], [16], None
    elif which == "packet":
        c.mem_shape, c.time, c.packet, c.map = [2, n], [2], [n], None
    else:
        c.mem_shape, c.time, c.packet, c.map = [n, n], [n], [n], None
    return "any"


@mutation
def m_huge_numbers(c, r):
    """huge integers in properties and maps."""
    big = r.choice([1 << 64, -(1 << 64), 10 ** 40, (1 << 63) - 1, -(1 << 63)])
    which = r.choice(["map_const", "map_coeff", "stride", "offset", "read_size", "zp"])
    c.dequant = None
    c.time = [max(2, c.time[0] if c.time else 2)] + c.time[1:]  # a size-1 dim vanishes, whatever its stride
    if which == "map_const":
        c.map = "affine_map<(d0, d1) -> (d0, d1 + %d)>" % big
        c.time, c.packet = c.time[:1], c.packet[:1]
        c.mem_shape = [c.time[0], c.packet[0]]
    elif which == "map_coeff":
        c.map = "affine_map<(d0, d1) -> (d0 * %d, d1)>" % big
        c.time, c.packet = c.time[:1], c.packet[:1]
        c.mem_shape = [c.time[0], c.packet[0]]
    elif which == "stride":
        c.mem_layout = f"strided<[{big}, 1]>"
        c.time, c.packet, c.map = c.time[:1], c.packet[:1], None
        c.mem_shape = [c.time[0], c.packet[0]]
    elif which == "offset":
        c.mem_layout = f"strided<[{c.packet[0]}, 1], offset: {big}>"
        c.time, c.packet, c.map = c.time[:1], c.packet[:1], None
        c.mem_shape = [c.time[0], c.packet[0]]
    elif which == "read_size":
        c.read_size = str(big)
    else:
        c.mem_elem, c.stages = "i8", [["fetch.zp_sub", "i9", big]]
        _tail(c, "contract")
        c.stream_elem = None
        _fit_packet(c)
    return "error"


@mutation
def m_duplicate_line(c, r):
    """a duplicated op line (SSA redefinition or a second consumer)."""
    c.raw_prop = None
    c.__dict__["_text_mutation"] = "dup"
    return "error"


@mutation
def m_delete_line(c, r):
    """a deleted op line (undefined SSA value or an unconsumed stream)."""
    c.__dict__["_text_mutation"] = "del"
    return "any"


@mutation
def m_unknown_property(c, r):
    """an unknown or ill-typed property on fetch.fetch."""
    c.raw_prop = r.choice(["bogus = 1", "base2 = 3 : i32", 'read_size = "x"', "map = 3", 'base = "abc"',
                           "map = affine_map<(d0) -> (d0)>"])
    if c.raw_prop.startswith(("read_size", "base ", "base =", "map")):
        key = c.raw_prop.split(" ")[0]
        if key == "base":
            c.base = None
        if key == "read_size":
            c.read_size = None
        if key == "map":
            c.map = None
    return "any"


def _fit_packet(c: Chain) -> None:
    """Reshape a mutated chain to a packet its element type can be read in."""
    bits = BITS.get(c.mem_elem, 8)
    p = 16 if c.ctx == "main" else max(1, 64 // bits)
    c.mem_shape, c.time, c.packet, c.map, c.mem_layout = [8, p], [8], [p], None, None
    c.dequant = None
    # The consumers follow the new shape.
    c.commit_shape = c.commit_layout = c.refetch = None
    if c.transpose is not None:
        c.transpose = "reverse"


@mutation
def m_dynamic_dim(c, r):
    """a dynamic dimension (`memref<?x16xi8>`) in any memref of the module, in every use or in one only
    (messages must print `?`, never xDSL's placeholder -9223372036854775808)."""
    c._text_mutation = "dyn"
    return "error"


_MEMREF_RE = re.compile(r"memref<((?:\d+x)+)([A-Za-z0-9]+)((?:, [^<>]*(?:<[^<>]*>)?)?)>")


def dynamic_dim_text(text: str, rng: random.Random) -> str:
    """``text`` with one dimension of one memref type replaced by ``?``:
    everywhere that type is written (consistent) or at one place only."""
    found = sorted({m.group(0) for m in _MEMREF_RE.finditer(text)})
    if not found:
        return text
    t = rng.choice(found)
    m = _MEMREF_RE.fullmatch(t)
    assert m is not None
    dims = m.group(1)[:-1].split("x")
    dims[rng.randrange(len(dims))] = "?"
    new = f"memref<{'x'.join(dims)}x{m.group(2)}{m.group(3)}>"
    if rng.random() < 0.7:
        return text.replace(t, new)
    i = text.find(t)
    return text[:i] + new + text[i + len(t):]


def apply_text_mutation(text: str, how: str, rng: random.Random) -> str:
    if how == "dyn":
        return dynamic_dim_text(text, rng)
    lines = text.split("\n")
    idx = [i for i, ln in enumerate(lines) if ln.startswith("  ") and "func.return" not in ln]
    if not idx:
        return text
    i = rng.choice(idx)
    if how == "dup":
        lines.insert(i, lines[i])
    else:
        del lines[i]
    return "\n".join(lines)


def mutate_program(rng: random.Random) -> tuple[str, str, str]:
    """A valid generated module with one chain perturbed.  Returns
    ``(text, mutation name, expectation)``."""
    gm = gen_module(rng, FUZZ, nfuncs=rng.choice([1, 1, 2]))
    chains = gm.funcs[rng.randrange(len(gm.funcs))].chains
    name = rng.choice(sorted(MUTATIONS))
    chain = chains[rng.randrange(len(chains))]
    expect = MUTATIONS[name](chain, rng)
    text = gm.text
    how = chain.__dict__.pop("_text_mutation", None)
    if how:
        text = apply_text_mutation(text, how, rng)
    return text, name, expect


# ===========================================================================
# Byte / token level MLIR mutation
# ===========================================================================

_TOKEN_RE = re.compile(
    r"%[A-Za-z0-9_.$-]+|@[A-Za-z0-9_.$-]+|![A-Za-z0-9_.]+|#[A-Za-z0-9_.]+|\"(?:[^\"\\\n]|\\.)*\""
    r"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][A-Za-z0-9_.$]*|->|//[^\n]*|\S"
)
DICTIONARY = [
    "0", "-1", "1", "7", "8", "-8", "-9", "127", "128", "-129", "65536", "65537", "4294967295", "4294967296",
    "9223372036854775807", "18446744073709551616", "99999999999999999999999999999999", "1.5", "1e309", "-0",
    "0x10", "nan", "inf", "true", "i0", "i1", "i4", "i5", "i9", "i64", "i1000000", "f16", "f4E2M1FN", "f8E8M0FNU",
    "index", "none", "memref<?xi8>", "memref<4x?xf32>", "tensor<4xi8>", "vector<4xi8>", "!fetch.stream<main, [1], [1], i8>",
    "!fetch.stream<sub, [], [], i8>", "!fetch.stream<main, [0], [0], i8>", "!rngd.trf<i8>", "!fetch.unknown",
    "fetch.fetch", "fetch.cast", "fetch.table_lookup", "fetch.zp_sub", "fetch.convert", "fetch.dequant",
    "rngd.commit", "rngd.contract_outer", "rngd.switch", "fetch_seq.program", "fetch_seq.table", "func.func",
    "func.return", "builtin.module", "\"fetch.fetch\"", "affine_map<(d0) -> (d0 mod 2)>", "affine_map<() -> ()>",
    "strided<[1], offset: ?>", "loc(unknown)", 'loc("x":1:2)', "{", "}", "(", ")", "<", ">", "[", "]", ",", ":",
    "=", "->", "%0", "%arg0", "^bb0", "^bb1:", "// -----", "{{", "}}", "\\", "\"\\\"", "dense<1> : tensor<1000000000xi8>",
    "dense_resource<x> : tensor<4xi8>", "array<i64: 1, 2>", "#fetch.unknown", "@f", "unit", "\"nvfp4\"", "\"mxfp4\"",
    "\u00e9", "\u202e", "\x00", "\t", "\r\n", "9" * 5000, "i99999999999", "i16777216", "si16777215",
    "dense<1> : tensor<99999999999xi8>", "!a = tuple<i8, i8>", "#alias x = 1",
    # names that drive a terminal, locations naming files that must not be quoted
    '@"\\1B[2J\\1B]0;t\\07"', '@"a\\C2\\9Bb"', '@"\\E2\\80\\AEx"', '@"\\0A error: forged"', "\x1b[2J", "\x9b",
    "\u2066", "\u200f", 'loc("\\1B]0;title\\07":1:1)', 'loc("/proc/self/environ":1:1)', 'loc("/etc/passwd":1:1)',
    'loc("/dev/zero":1:1)', 'loc("/sys/kernel/uevent_seqnum":1:1)', 'loc("@BASE/secret.txt":1:1)',
    'loc("@BASE/big.mlir":2:1)', 'loc("@BASE/small.py":3:1)', 'loc("@BASE/./small.py":3:1)',
    'loc(fused["/proc/self/cmdline":1:1, "@BASE/small.py":1:1, "@BASE//small.py":2:1])',
    'loc(callsite("/proc/self/maps":1:1 at "@BASE/secret.txt":1:1))', 'loc("in.mlir":1:1)', 'loc("./in.mlir":2:1)',
    # --verify-diagnostics regexes: catastrophic backtracking, POSIX classes, bad syntax
    "// expected-error-re {{{{(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*X}}}}", "// expected-error-re {{{{[[:alpha:]]+}}}}",
    "// expected-error-re {{{{(a|aa)*b}}}}", "// expected-error-re {{{{[[:bogus:]]}}}}",
    "// expected-error-re {{{{a{1,256}}}}}", "// expected-error-re {{{{((((((((((x))))))))))}}}}",
    "// expected-error-re {{{{(x{1,255}){1,255}}}}}",
]


def _cache_variant(text: str, rng: random.Random) -> str:
    """``text`` with other SSA, function and tensor (``rngd.name``) names
    (of other lengths), extra comments and indentation, sometimes a copy of
    a function under another name whose arguments' SSA names are permuted
    (two kernels equal up to names, the names in other roles), and the
    functions in another order: kernels the cache must treat as the same up
    to names and locations."""
    funcs = re.findall(r"(?ms)^func\.func @(\w+).*?^}\n", text)
    ssa = {n: f"{rng.choice('vwxyz')}{rng.randrange(10 ** rng.randrange(1, 5))}" for n in set(re.findall(r"%([A-Za-z_]\w*)", text))}
    out = re.sub(r"%([A-Za-z_]\w*)", lambda m: "%" + ssa.get(m.group(1), m.group(1)), text)
    names = {f: f"{f}_{rng.randrange(100)}x" for f in funcs}
    out = re.sub(r"@(\w+)", lambda m: "@" + names.get(m.group(1), m.group(1)), out)
    # an rngd.name that was its argument's own SSA name (modgen.DRESSES) stays so; "n<i>" become "t<i>"
    own = {re.sub(r"_\d+$", "", k): v for k, v in ssa.items()}
    out = re.sub(r'(rngd\.name"? = ")([^"]*)"', lambda m: m.group(1) + own.get(m.group(2), re.sub(r"^n(?=\d+$)", "t", m.group(2))) + '"', out)
    blocks = re.findall(r"(?ms)^func\.func @.*?^}\n", out)
    if blocks and rng.random() < 0.6:
        copy = re.sub(r"^func\.func @(\w+)", lambda m: f"func.func @{m.group(1)}_copy", rng.choice(blocks), count=1)
        args = re.findall(r"%([\w$.-]+):", copy.split("\n", 1)[0])
        perm = args[:]
        rng.shuffle(perm)
        swap = dict(zip(args, perm, strict=True))
        blocks.append(re.sub(r"%([\w$.-]+)", lambda m: "%" + swap.get(m.group(1), m.group(1)), copy))
    if rng.random() < 0.3:
        rng.shuffle(blocks)
    head = out[: out.find("func.func")] if blocks else ""  # alias definitions (tools/fuzz.py _aliased)
    lines = []
    for line in (head + "".join(blocks)).splitlines() if blocks else out.splitlines():
        if rng.random() < 0.15:
            lines.append("// " + "x" * rng.randrange(20))
        lines.append(" " * rng.randrange(3) + line)
    return "\n".join(lines) + "\n"


def _aliased(text: str, rng: random.Random) -> str:
    """``text`` with some of its memref and stream types named by ``!tN``
    aliases defined at the top (the same module; the cache keys must carry
    the definitions)."""
    types = sorted(set(re.findall(r"memref<[^<>]*(?:<[^<>]*>[^<>]*)?>|!fetch\.stream<[^<>]*>", text)))
    chosen = [t for t in types if rng.random() < 0.5][:6]
    defs = []
    for i, t in enumerate(chosen):
        text = text.replace(t, f"!t{i}")
        defs.append(f"!t{i} = {t}\n")
    return "".join(defs) + text


_ERASURE_CHARS = "0123456789azAZ_$.-#\u00e9@\"%"


def _spelling(rng: random.Random) -> str:
    """A random name spelling: often legal, often not (``1a``, ``-.$``,
    ``\u00e9``, ``a-b``)."""
    return "".join(rng.choice(_ERASURE_CHARS) for _ in range(rng.randrange(1, 5)))


def _erasure_variant(text: str, rng: random.Random) -> tuple[str, str]:
    """``(variant, kind)``: ``text`` with one change of what the kernel
    cache's key erases (an SSA name, a function's name, an ``rngd.name``,
    a location, whitespace between two tokens, a key's quotes) or of what
    surrounds the kernels (an unused, duplicate or misplaced alias, a module
    wrapper or attributes, something between functions, line breaks), legal
    or not.  The cache must give the outcome of an uncached compile of the
    variant, whatever it is, after compiling ``text``."""
    kind = rng.choice(["ssa", "func-name", "glue", "split", "comment", "junk-alias", "unused-alias", "dup-alias",
                       "alias-after", "module", "module-attrs", "between", "cr", "rngd-name", "quote-key", "loc"])
    if kind == "rngd-name" and (found := re.findall(r'rngd\.name"? = "([^"]*)"', text)):
        old = rng.choice(found)
        return text.replace(f'= "{old}"', f'= "{rng.choice([found[0], _spelling(rng), old + "_1", ""])}"', 1), kind
    if kind == "quote-key" and "rngd.name" in text:
        return (text.replace('"rngd.name"', "rngd.name") if rng.random() < 0.5
                else text.replace("rngd.name =", '"rngd.name" =')), kind
    if kind == "loc" and (ops := [m.end() for m in re.finditer(r"(?m)^\s*%\S+ = [^\n]*$", text)]):
        at = rng.choice(ops)
        loc = rng.choice(['loc("other.mlir":7:3)', "loc(unknown)", 'loc(fused["a.mlir":1:1, "b.mlir":2:2])',
                          'loc("n"("c.mlir":4:4))', 'loc(callsite("f.mlir":1:2 at "g.mlir":3:4))'])
        return text[:at] + " " + loc + text[at:], kind
    aliases = re.findall(r"(?m)^[#!]\w+ = .*\n", text)
    if kind == "ssa" and (names := sorted(set(re.findall(r"%([A-Za-z_][\w$.-]*)", text)))):
        old, new = rng.choice(names), _spelling(rng)
        return re.sub(rf"%{re.escape(old)}(?![\w$.-])", lambda m: "%" + new, text), kind
    if kind == "func-name" and (names := re.findall(r"func\.func @(\w+)", text)):
        return re.sub(rf"@{re.escape(rng.choice(names))}\b", "@" + _spelling(rng), text, count=1), kind
    if kind in ("glue", "split", "comment"):
        spots = [m.start() for m in re.finditer(r"(?<=\S) (?=\S)" if kind == "glue" else r"(?<=\S)(?=\S)", text)]
        if spots:
            at = rng.choice(spots)
            if kind == "glue":
                return text[:at] + text[at + 1 :], kind
            return text[:at] + (" " if kind == "split" else " // c\n") + text[at:], kind
    if kind == "junk-alias":
        return rng.choice(["#junk = 1 2 3 + foo\n", "!u = !nosuch.type<1>\n", "#j = {a = 1}\n"]) + text, kind
    if kind == "unused-alias":
        return "!unused = memref<4xf32>\n" + text, kind
    if kind == "dup-alias" and aliases:
        return rng.choice(aliases) + text, kind
    if kind == "alias-after" and aliases:
        a = rng.choice(aliases)
        return text.replace(a, "", 1) + a, kind
    if kind == "module":
        return "module {\n" + text + "}\n", kind
    if kind == "module-attrs":
        body = "".join(line for line in text.splitlines(True) if not re.match(r"[#!]\w+ = ", line))
        attr = rng.choice(["1", "#nosuch.a"])
        return "".join(aliases) + "module attributes {x = " + attr + "} {\n" + body + "}\n", kind
    if kind == "between" and "\n}\n" in text:
        return text.replace("\n}\n", "\n}\n" + rng.choice(["foo\n", '"test.op"() : () -> ()\n', "!v = f32\n"]), 1), kind
    return text.replace("\n", "\r"), "cr"


def _deep(rng: random.Random) -> str:
    n = rng.choice([50, 500, 5000, 50000])
    o, cl = rng.choice([("(", ")"), ("[", "]"), ("<", ">"), ("{", "}"), ("memref<", ">"),
                        ("!fetch.stream<main, [1], [1], ", ">"), ("affine_map<(d0) -> (", "))>"),
                        ("!rngd.trf<", ">"), ("tuple<", ">"), ("(d0 + ", ")"), ('"test.op"() ({', "}) : () -> ()"),
                        ('"scf.execute_region"() ({\n', "scf.yield\n}) : () -> ()\n")])
    return o * n + (cl * n if rng.random() < 0.5 else "")


def line_endings(data: bytes, how: str, rng: random.Random) -> bytes:
    """``data`` with its ``\\n`` line breaks rewritten: ``cr`` (classic Mac:
    ``\\r`` alone), ``crlf``, or ``mixed`` (each break one of the three);
    sometimes with a leading ``// comment`` line
    (``(printf '// kernel\\r'; tr '\\n' '\\r' < k.mlir)``).  MLIR counts
    ``\\r``, ``\\n`` and ``\\r\\n`` as one line break each, and a ``//``
    comment ends at any of them."""
    data = data.replace(b"\r\n", b"\n")
    lines = data.split(b"\n")
    if how == "cr":
        out = b"\r".join(lines)
    elif how == "crlf":
        out = b"\r\n".join(lines)
    else:
        out = lines[0]
        for ln in lines[1:]:
            # after a "\r" ending an empty line, a "\n" would read as one "\r\n" break, not two
            out += rng.choice([b"\r", b"\r\n"] if out.endswith(b"\r") else [b"\r", b"\n", b"\r\n"]) + ln
    if rng.random() < 0.5:
        brk = b"\r" if how == "cr" else rng.choice([b"\r", b"\n", b"\r\n"])
        if brk == b"\r" and out.startswith(b"\n"):
            brk = b"\r\n"
        out = b"// kernel" + brk + out
    return out


def _same_but_lines(got: bytes | None, want: bytes | None, shift: int) -> bool:
    """``got`` and ``want`` are the same ``seq.bin`` but for the MANIFEST's
    source lines, which are ``shift`` more in ``got`` (a leading comment line
    added to the input)."""
    if got is None or want is None:
        return got == want
    if shift == 0:
        return got == want
    from fetchc.seqbin import read  # noqa: PLC0415

    a, b = read(got), read(want)
    if a.programs != b.programs or a.tables != b.tables:
        return False
    locs_a = re.findall(rb'"loc":\s*"[^"]*?:(\d+):(\d+)"', got)
    locs_b = re.findall(rb'"loc":\s*"[^"]*?:(\d+):(\d+)"', want)
    return [(int(l), int(c)) for l, c in locs_a] == [(int(l) + shift, int(c)) for l, c in locs_b]


def deep_regions(depth: int, rng: random.Random, body: str = "") -> bytes:
    """A function whose body is ``depth`` nested ``scf.execute_region`` ops
    (the passes once walked it in quadratic time), followed by
    ``body`` (e.g. the lines of a valid fetch chain); indented or not."""
    ind = rng.random() < 0.3
    pad = (lambda i: "  " * (i + 1)) if ind else (lambda i: "")
    lines = ["func.func @deep() {"]
    lines += [pad(i) + '"scf.execute_region"() ({' for i in range(depth)]
    lines.append(pad(depth) + "scf.yield")
    for i in range(depth - 1, 0, -1):
        lines += [pad(i) + "}) : () -> ()", pad(i) + "scf.yield"]
    lines.append(pad(0) + "}) : () -> ()")
    lines += ["  func.return", "}"]
    return ("\n".join(lines) + "\n" + body).encode()


def mutate_bytes(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    if rng.random() < 0.04:  # line endings: CR only, CRLF, mixed (ir.md §5)
        return line_endings(data, rng.choice(["cr", "cr", "crlf", "mixed"]), rng)
    text = data.decode("utf-8", "replace")
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
        op = rng.randrange(14)
        if op == 0 and text:  # bit flips
            b = bytearray(text.encode())
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
            return bytes(b)
        if op == 1:  # truncation
            text = text[: rng.randrange(len(text) + 1)]
            continue
        toks = list(_TOKEN_RE.finditer(text))
        if not toks:
            text += rng.choice(DICTIONARY)
            continue
        t = rng.choice(toks)
        if op == 2:  # swap two tokens
            u = rng.choice(toks)
            a, b = sorted([t, u], key=lambda m: m.start())
            if a.end() <= b.start():
                text = text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]
        elif op == 3:  # delete a token
            text = text[: t.start()] + text[t.end() :]
        elif op == 4:  # duplicate a token
            text = text[: t.start()] + t.group() + " " + text[t.start() :]
        elif op in (5, 6, 7):  # dictionary token
            text = text[: t.start()] + rng.choice(DICTIONARY) + text[t.end() :]
        elif op == 8:  # numeric tweak
            nums = [m for m in toks if re.fullmatch(r"-?\d{1,40}", m.group())]
            if nums:
                m = rng.choice(nums)
                v = int(m.group())
                v = rng.choice([v + 1, v - 1, -v, v * 2, v * 65536, 0, v + 8, (1 << 32) - v, v ^ 1])
                text = text[: m.start()] + str(v) + text[m.end() :]
        elif op == 9:  # copy a token elsewhere
            u = rng.choice(toks)
            text = text[: u.start()] + t.group() + text[u.start() :]
        elif op == 10:  # duplicate a line / delete a line
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(i, lines[i])
            else:
                del lines[i]
            text = "\n".join(lines)
        elif op == 11 and pool:  # splice with another seed
            other = rng.choice(pool).decode("utf-8", "replace")
            i, j = rng.randrange(len(text) + 1), rng.randrange(len(other) + 1)
            text = text[:i] + other[j:]
        elif op == 12:  # deep nesting
            i = t.start()
            text = text[:i] + _deep(rng) + text[i:]
        else:  # random bytes
            b = bytearray(text.encode())
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8)))
            return bytes(b)
    return text.encode("utf-8", "surrogatepass")


def seed_files() -> list[Path]:
    files: list[Path] = []
    for d in (REPO / "examples", REPO / "test" / "lit"):
        if d.is_dir():
            files += sorted(p for p in d.rglob("*.mlir") if "Output" not in p.parts)
    return files


def _alarm(signum, frame):
    raise FuzzTimeout()


def parse_input(rng: random.Random, pool: list[bytes], ctx) -> tuple[str, bytes]:
    """An input for the ``parse`` target: a generated module in one of its
    four printed forms (custom or generic, with or without locations), a
    structure-aware mutation, or a byte/token mutation of any of these or
    of a seed; returns ``(kind, bytes)``."""
    r = rng.random()
    if r < 0.3:
        return "printed", printed_module(rng, ctx).encode()
    if r < 0.45:
        text, name, _ = mutate_program(rng)
        return f"mutate:{name}", text.encode()
    if r < 0.6:
        return "printed+bytes", mutate_bytes(printed_module(rng, ctx).encode(), rng, pool)
    if r < 0.75:
        return "spacing", respace(rng.choice(pool).decode("utf-8", "replace"), rng).encode()
    return "bytes", mutate_bytes(rng.choice(pool), rng, pool)


def respace(text: str, rng: random.Random) -> str:
    """The same tokens spaced differently: some spaces become newlines or
    comments, some spaces around punctuation go, some punctuation gets
    spaces (the fast path reads some spellings whole, xDSL token by token)."""
    out = []
    for i, c in enumerate(text):
        r = rng.random()
        if c == " " and r < 0.1:
            out.append(rng.choice(["\n", "\t", " // c\n", "\r\n", "  "]))
        elif c == " " and r < 0.2 and i and text[i - 1] in ",:([<{=":
            continue
        elif c in ",<>[]()x:" and r < 0.05:
            out.append(rng.choice([" " + c, c + " ", " " + c + " "]))
        else:
            out.append(c)
    return "".join(out)


def printed_module(rng: random.Random, ctx) -> str:
    """A generated module as fetchc prints it: custom or generic form, with
    or without ``loc(...)`` (``#loc`` aliases are not printed by xDSL: the
    seeds from lit's mlir-opt inputs bring those)."""
    from fetchc.driver import print_module  # noqa: PLC0415
    from fetchc.frontend.parsing import parse_module  # noqa: PLC0415

    text = gen_module(rng, FUZZ_SMALL).text
    try:
        module = parse_module(ctx, text, "gen.mlir", parser="xdsl")
    except Exception:  # noqa: BLE001 - a generator slip: use the text itself
        return text
    return print_module(module, generic=rng.random() < 0.5, debuginfo=rng.random() < 0.5)


def mlir_seeds(rng: random.Random) -> list[bytes]:
    seeds: list[bytes] = []
    for p in seed_files():
        try:
            text = p.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        for chunk in re.split(r"(?m)^// -----.*$", text):
            if chunk.strip():
                seeds.append(chunk.encode())
    grng = random.Random(rng.random())
    for _ in range(40):
        seeds.append(gen_module(grng).text.encode())
    return seeds


# ===========================================================================
# seq.bin mutation
# ===========================================================================


def fix_crc(b: bytearray) -> bytearray:
    if len(b) >= 24:
        b[20:24] = b"\0\0\0\0"
        struct.pack_into("<I", b, 20, zlib.crc32(bytes(b)) & 0xFFFFFFFF)
    return b


def fix_size(b: bytearray) -> bytearray:
    if len(b) >= 20:
        struct.pack_into("<I", b, 16, len(b) & 0xFFFFFFFF)
    return b


INTERESTING_U32 = [0, 1, 2, 3, 7, 8, 9, 12, 13, 16, 31, 32, 33, 64, 127, 128, 255, 256, 512, 520, 536, 65535, 65536,
                   65537, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 0x10000000]



def _table_record_bytes(b: bytes | bytearray) -> int:
    """Bytes of one 1-byte-key TABLES record: 8 + 512 in a 1.0 / 1.1 file,
    24 + 512 in 1.2 (seqbin.md)."""
    minor = struct.unpack_from("<H", b, 6)[0] if len(b) >= 8 else 0
    return 520 if minor < 2 else 536

def mutate_seqbin(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    n = len(b)
    if n == 0:
        return bytes([rng.getrandbits(8)]), "empty"
    kind = rng.choice(["bitflip", "bitflip_fixed", "truncate", "truncate_fixed", "append", "header",
                       "section_row", "section_row", "huge_count", "word", "word", "word", "table_head",
                       "strings", "swap_rows", "section_count", "wrong_crc", "dup_record", "zero_fill",
                       "extreme_program", "extreme_program"])
    if kind in ("bitflip", "bitflip_fixed"):
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        if kind == "bitflip_fixed":
            fix_crc(b)
    elif kind in ("truncate", "truncate_fixed"):
        del b[rng.randrange(n + 1) :]
        if kind == "truncate_fixed":
            fix_crc(fix_size(b))
    elif kind == "append":
        b += bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 7, 8, 128, 520])))
        if rng.random() < 0.7:
            fix_crc(fix_size(b))
    elif kind == "header" and n >= 32:
        off = rng.choice([0, 4, 6, 8, 12, 16, 24, 28])
        if off in (4, 6):
            struct.pack_into("<H", b, off, rng.choice([0, 1, 2, 0xFFFF]))
        else:
            struct.pack_into("<I", b, off, rng.choice(INTERESTING_U32))
        fix_crc(b)
    elif kind == "section_row" and n >= 80:
        row = rng.randrange(3)
        fld = rng.randrange(4)
        struct.pack_into("<I", b, 32 + 16 * row + 4 * fld, rng.choice(INTERESTING_U32 + [rng.randrange(n + 16)]))
        fix_crc(b)
    elif kind == "huge_count" and n >= 80:
        row = rng.randrange(3)
        cnt = rng.choice([0xFFFFFFFF, 0x80000000, 1 << 24, 0x01000001])
        struct.pack_into("<I", b, 32 + 16 * row + 12, cnt)
        if rng.random() < 0.5:
            rec = {1: _table_record_bytes(b), 2: 128, 3: 1}.get(struct.unpack_from("<I", b, 32 + 16 * row)[0], 1)
            struct.pack_into("<I", b, 32 + 16 * row + 8, (cnt * rec) & 0xFFFFFFFF)
        fix_crc(b)
    elif kind == "word" and n >= 80:
        # a field of a record: find the PROGRAMS / TABLES sections
        rows = [struct.unpack_from("<IIII", b, 32 + 16 * r) for r in range(min(3, (n - 32) // 16))]
        cands = [(o, s) for k, o, s, c in rows if k in (1, 2) and s >= 4 and o + s <= n]
        if cands:
            o, s = rng.choice(cands)
            at = o + 4 * rng.randrange(s // 4)
            v = rng.choice(INTERESTING_U32 + [rng.getrandbits(32), struct.unpack_from("<I", b, at)[0] ^ 1,
                                              (struct.unpack_from("<I", b, at)[0] + rng.choice([1, -1, 8])) & 0xFFFFFFFF])
            struct.pack_into("<I", b, at, v)
        fix_crc(b)
    elif kind == "table_head" and n >= 80:
        rows = [struct.unpack_from("<IIII", b, 32 + 16 * r) for r in range(3)]
        head = _table_record_bytes(b) - 512  # 8 bytes (1.0, 1.1) or 24 (1.2)
        t = [(o, s) for k, o, s, c in rows if k == 1 and s >= head and o + head <= n]
        if t:
            o, _ = t[0]
            b[o + rng.randrange(head)] = rng.choice([0, 1, 2, 7, 8, 9, 10, 11, 12, 13, 255])
        fix_crc(b)
    elif kind == "strings" and n >= 80:
        rows = [struct.unpack_from("<IIII", b, 32 + 16 * r) for r in range(3)]
        t = [(o, s) for k, o, s, c in rows if k == 3 and s and o + s <= n]
        if t:
            o, s = t[0]
            b[o + rng.randrange(s)] = rng.choice([0, 0xFF, 0xC3, ord("/"), 0x80])
        fix_crc(b)
    elif kind == "swap_rows" and n >= 80:
        r1, r2 = rng.sample(range(3), 2)
        a, c = bytes(b[32 + 16 * r1 : 48 + 16 * r1]), bytes(b[32 + 16 * r2 : 48 + 16 * r2])
        b[32 + 16 * r1 : 48 + 16 * r1], b[32 + 16 * r2 : 48 + 16 * r2] = c, a
        fix_crc(b)
    elif kind == "section_count" and n >= 32:
        struct.pack_into("<I", b, 12, rng.choice([0, 1, 2, 4, 5, 100, 0xFFFFFFF, 0xFFFFFFFF]))
        fix_crc(b)
    elif kind == "wrong_crc" and n >= 24:
        struct.pack_into("<I", b, 20, rng.getrandbits(32))
    elif kind == "dup_record" and n >= 80:
        rows = [struct.unpack_from("<IIII", b, 32 + 16 * r) for r in range(3)]
        for r, (k, o, s, c) in enumerate(rows):
            if k in (1, 2) and s and o + s == n:  # last section: append a copy of a record
                rec = _table_record_bytes(b) if k == 1 else 128
                b += b[o : o + rec]
                struct.pack_into("<II", b, 32 + 16 * r + 8, s + rec, c + 1)
                break
        fix_crc(fix_size(b))
    elif kind == "extreme_program" and n >= 80:
        # Rewrite one PROGRAMS record as a self-consistent (reader-valid)
        # program with extreme loop nests and addresses: the simulator must
        # refuse or run it without unbounded memory or time.
        rows = [struct.unpack_from("<IIII", b, 32 + 16 * r) for r in range(3)]
        progs = [(o, c) for k, o, s, c in rows if k == 2 and c and s == 128 * c and o + s <= n]
        if progs:
            o, c = progs[0]
            at = o + 128 * rng.randrange(c)
            code, size = rng.choice([(2, 1), (3, 2), (4, 4), (8, 1), (10, 2), (11, 4), (12, 1)])
            ne = rng.randint(1, 8)
            limits = [rng.choice([1, 2, 3, 255, 4096, 65535, 65536]) for _ in range(ne)]
            strides = [rng.choice([0, 0, 1, -1, 2, 65536, -65536, 0x7FFFFFFF, -0x80000000]) for _ in range(ne)]
            base = rng.choice([0, 8, 1 << 20, 0xFFFFFFF8, 0xFFFFFFFF, rng.getrandbits(32)])
            words = [0, struct.unpack_from("<I", b, at + 4)[0], code, code, base, 1, size, ne]
            words += limits + [0] * (8 - ne)
            words += [v & 0xFFFFFFFF for v in strides] + [0] * (8 - ne)
            words += [0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0, 1, 1]
            struct.pack_into("<32I", b, at, *words)
        fix_crc(b)
    elif kind == "zero_fill":
        i = rng.randrange(n + 1)
        j = min(n, i + rng.choice([1, 4, 16, 128]))
        b[i:j] = bytes(j - i)
        if rng.random() < 0.7:
            fix_crc(b)
    return bytes(b), kind


# ===========================================================================
# Driver
# ===========================================================================


def sim_available() -> bool:
    import importlib.util  # noqa: PLC0415

    try:
        return importlib.util.find_spec("fetchc.golden.sim") is not None
    except (ImportError, ValueError):
        return False


@dataclass
class Stats:
    target: str
    inputs: int = 0
    runs: int = 0
    exits: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    max_elapsed: float = 0.0
    saved: int = 0
    mutations: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)
    tool_exits: Counter = field(default_factory=Counter)

    def summary(self, seconds: float) -> str:
        ex = " ".join(f"exit{k}={v}" for k, v in sorted(self.exits.items(), key=lambda kv: str(kv[0])))
        crashes = sum(self.failures.values())
        fails = ", ".join(f"{k}={v}" for k, v in sorted(self.failures.items())) or "none"
        return (f"fuzz target={self.target} time={seconds:.0f}s inputs={self.inputs} runs={self.runs} {ex} "
                f"crashes={crashes} ({fails}) max_run={self.max_elapsed:.2f}s")


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.worker = Worker(mem_mb=args.mem_mb)
        self.corpus_out = Path(args.corpus_out) if args.corpus_out else None
        self.seen_signatures: set[str] = set()
        self.have_sim = sim_available()

    # -- plumbing ----------------------------------------------------------

    def run(self, argv: list[str], files: dict[str, bytes], stdin: bytes = b"", env: dict | None = None) -> dict:
        job = {"argv": argv, "files": files, "stdin": stdin, "timeout": self.args.timeout}
        if env:
            job["env"] = env
        return self.worker.run(job)

    def record(self, stats: Stats, res: dict, verdict: Verdict, name: str, data: bytes, meta: dict) -> None:
        stats.runs += 1
        rc = res["rc"] if res["rc"] is not None else "none"
        stats.exits[rc] += 1
        stats.tool_exits[f"{meta.get('tool', '?')}:exit{rc}"] += 1
        stats.max_elapsed = max(stats.max_elapsed, res["elapsed"])
        if res["elapsed"] > self.args.slow:
            stats.notes["slow"] += 1
        if not verdict.ok:
            key = f"{meta.get('tool', '?')}/{verdict.kind}"
            stats.failures[key] += 1
            self.save(stats, "fail", name, data, {**meta, "verdict": verdict.kind, "detail": verdict.detail[:2000],
                                                  "stderr": res["stderr"][:2000]})
            if self.args.verbose or stats.failures[key] <= 3:
                print(f"  FAIL [{verdict.kind}] {meta.get('mutation', '')} {verdict.detail[:300]}", flush=True)
        elif self.corpus_out is not None:
            sig = self.signature(res)
            if sig not in self.seen_signatures:
                self.seen_signatures.add(sig)
                self.save(stats, "new", name, data, {**meta, "signature": sig, "exit": res["rc"],
                                                     "stderr": res["stderr"][:1000]})

    @staticmethod
    def signature(res: dict) -> str:
        err = res["stderr"]
        m = re.search(r"error: (.*)", err)
        msg = m.group(1) if m else ""
        msg = re.sub(r"'[^']*'|\"[^\"]*\"|\d+|%\w+|<[^>]*>", "_", msg)[:80]
        return f"{res['rc']}:{msg}"

    def save(self, stats: Stats, kind: str, name: str, data: bytes, meta: dict) -> None:
        if self.corpus_out is None or (kind == "new" and stats.saved >= self.args.max_saved):
            return
        d = self.corpus_out / stats.target / kind
        d.mkdir(parents=True, exist_ok=True)
        h = hashlib.sha1(data).hexdigest()[:12]
        ext = Path(name).suffix
        (d / f"{h}{ext}").write_bytes(data)
        (d / f"{h}{ext}.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
        stats.saved += 1

    def compile_job(self, text: bytes, *, extra: list[str] | None = None, stdin: bool = False, emit: str = "bin",
                    env: dict | None = None):
        extra = extra or []
        files = {"out.bin": SENTINEL}
        if stdin:
            return self.run(["-", "-o", "out.bin", f"--emit={emit}", *extra], files, stdin=text, env=env)
        files["in.mlir"] = text
        return self.run(["in.mlir", "-o", "out.bin", f"--emit={emit}", *extra], files, env=env)

    # -- targets -----------------------------------------------------------

    def t_mlir_bytes(self, stats: Stats, deadline: float) -> None:
        rng = self.rng
        pool = mlir_seeds(rng)
        stats.notes["seeds"] = len(pool)
        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            if rng.random() < 0.005:  # deep scf.execute_region nesting
                depth = rng.choice([50, 200, 1000, 2000, 3000, 4000])
                body = gen_module(rng, FUZZ_SMALL, nfuncs=1).text if rng.random() < 0.5 else ""
                data = deep_regions(depth, rng, body)
                stats.notes["deep-regions"] += 1
            else:
                data = mutate_bytes(rng.choice(pool), rng, pool)
            if len(data) > 200_000:
                data = data[:200_000]
            stats.inputs += 1
            mode = rng.random()
            extra, emit, stdin, located = [], "bin", False, True
            if mode < 0.1:
                stdin = True
            elif mode < 0.2:
                emit = "mlir"
            elif mode < 0.27:
                extra, emit = ["--split-input-file"], "mlir"
            elif mode < 0.32:
                extra, located = ["--verify-diagnostics"], False
            res = self.compile_job(data, extra=extra, stdin=stdin, emit=emit)
            out_name = None if "--verify-diagnostics" in extra else "out.bin"
            v = judge(res, tool="compile", out_name=out_name, emit=emit, located=located, source=data)
            if extra == ["--verify-diagnostics"] and v.ok and res["rc"] == 0:
                pass
            self.record(stats, res, v, "x.mlir", data, {"tool": "compile", "argv": extra + [f"--emit={emit}"],
                                                        "stdin": stdin})
            if v.ok and res["rc"] == 0 and len(pool) < 2000 and rng.random() < 0.1:
                pool.append(data)  # keep inputs that still compile: they reach deeper

    LOC_FILES = ["/proc/self/environ", "/proc/self/cmdline", "/etc/passwd", "/etc/hostname", "/dev/zero",
                 "/sys/kernel/uevent_seqnum", "@BASE/secret.txt", "@BASE/big.mlir", "@BASE/small.py",
                 "@BASE/./small.py", "@BASE//small.py", "in.mlir", "./in.mlir", "/proc/self/fd/0", "@BASE/dm.bin",
                 "\\1B]0;title\\07\\1B[2J.mlir"]

    def with_file_locations(self, text: str) -> str:
        """``text`` with a ``loc(...)`` naming a file a location must not make
        fetchc read (or one it may) after each op line (ir.md §5 quoting)."""
        rng = self.rng
        out = []
        for line in text.split("\n"):
            if line.startswith(" ") and " : " in line and not line.rstrip().endswith(("{", "}")):
                f = rng.choice(self.LOC_FILES)
                where = f'"{f}":{rng.randint(1, 3)}:1'
                if rng.random() < 0.3:
                    where = f'fused[{where}, "{rng.choice(self.LOC_FILES)}":1:1]'
                line = f"{line} loc({where})"
            out.append(line)
        return "\n".join(out)

    def t_mlir_mutate(self, stats: Stats, deadline: float) -> None:
        rng = self.rng
        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            text, name, expect = mutate_program(rng)
            if rng.random() < 0.15:
                text = self.with_file_locations(text)
                stats.notes["file-locations"] += 1
            stats.inputs += 1
            stats.mutations[name] += 1
            data = text.encode()
            res = self.compile_job(data)
            v = judge(res, tool="compile", out_name="out.bin", expect_error=(expect == "error"), source=data)
            self.record(stats, res, v, "x.mlir", data, {"tool": "compile", "mutation": name, "expect": expect})

    def t_pipeline(self, stats: Stats, deadline: float) -> None:
        rng = self.rng
        from fetchc.seqbin import read  # noqa: PLC0415

        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            gm = gen_module(rng, FUZZ_BIG if rng.random() < 0.3 else FUZZ)
            text = gm.text.encode()
            nprog = sum(f.programs() for f in gm.funcs)
            stats.inputs += 1
            res = self.compile_job(text)
            v = judge(res, tool="compile", out_name="out.bin", source=text)
            if v.ok and rng.random() < 0.3:
                self.check_line_endings(stats, text, res)
            if v.ok and rng.random() < 0.2:
                self.check_ssa_names(stats, text, res)
            if v.ok and res["rc"] == 0 and rng.random() < 0.1:
                self.check_table_symbols(stats, gm, text, res)
            if v.ok and res["rc"] == 0:
                sb = read(res["files"]["out.bin"])
                names = [p.name for p in sb.programs]
                want = [f"{f.name}/{i}" for f in gm.funcs for i in range(f.programs())]
                if len(sb.programs) != nprog or names != want:
                    v = Verdict(False, "lost", f"{len(sb.programs)} programs {names[:8]} for {nprog} fetches {want[:8]}")
                stats.notes["compiled"] += 1
            self.record(stats, res, v, "x.mlir", text, {"tool": "compile", "programs": nprog})
            if not (v.ok and res["rc"] == 0):
                stats.notes["rejected"] += 1
                continue
            binary = res["files"]["out.bin"]
            # nothing lost through the printer: custom and generic IR, printed
            # with their locations (the MANIFEST records each program's source
            # line), re-parse and compile to the same bytes.
            for generic in ([False, True] if rng.random() < 0.5 else [rng.random() < 0.5]):
                extra = ["--mlir-print-debuginfo", *(["--print-op-generic"] if generic else [])]
                r2 = self.compile_job(text, emit="mlir", extra=extra)
                v2 = judge(r2, tool="compile", out_name="out.bin", emit="mlir")
                if v2.ok and r2["rc"] != 0:
                    v2 = Verdict(False, "roundtrip", "--emit=mlir failed where --emit=bin succeeded: "
                                 + r2["stderr"][:300])
                self.record(stats, r2, v2, "x.mlir", text, {"tool": "compile", "argv": ["--emit=mlir", *extra]})
                if not v2.ok:
                    continue
                ir = r2["files"]["out.bin"]
                r3 = self.compile_job(ir)
                v3 = judge(r3, tool="compile", out_name="out.bin")
                if v3.ok and (r3["rc"] != 0 or r3["files"].get("out.bin") != binary):
                    v3 = Verdict(False, "roundtrip", "the printed IR does not compile to the same seq.bin: "
                                 + r3["stderr"][:300])
                self.record(stats, r3, v3, "x.mlir", ir, {"tool": "compile", "from": "emit-mlir"})

    def check_ssa_names(self, stats: Stats, text: bytes, res: dict) -> None:
        """The module with its SSA names (not the arguments, which name
        tensors) respelt with ``_<digits>`` suffixes (``%_1``, ``%a_3``,
        ``%x_0_2``: issue 26 item 6) must compile to the same programs,
        tables and tensor names, or fail with the same messages (the
        columns may move)."""
        from fetchc.seqbin import read  # noqa: PLC0415

        how = self.rng.choice(sorted(SSA_STYLES))
        variant = respell_ssa_names(text.decode(), SSA_STYLES[how]).encode()
        r2 = self.compile_job(variant, env={"FETCHC_NO_CACHE": "1"})  # the compiler, not a cache hit
        v = judge(r2, tool="compile", out_name="out.bin", source=variant)
        if v.ok:
            if r2["rc"] != res["rc"]:
                v = Verdict(False, "ssa-names", f"{how}: exit {r2['rc']} where the original exits {res['rc']}: "
                            + (r2["stderr"] or "(no diagnostic)")[:300])
            elif res["rc"] == 0:
                a, b = read(res["files"]["out.bin"]), read(r2["files"]["out.bin"])
                names = [[[t.name for t in k.tensors] for k in x.manifest.kernels] for x in (a, b)]
                if (a.programs, a.tables, names[0]) != (b.programs, b.tables, names[1]):
                    v = Verdict(False, "ssa-names", f"{how}: other programs, tables or tensor names")
            else:
                msgs = [[m[3] for m in self._ERR_HEAD.findall(r["stderr"])] for r in (res, r2)]
                if len(msgs[0]) != len(msgs[1]):
                    v = Verdict(False, "ssa-names", f"{how}: diagnostics {msgs[1][:2]} where the original gives "
                                f"{msgs[0][:2]}")
        stats.notes["ssa-names"] += 1
        self.record(stats, r2, v, "x.mlir", variant, {"tool": "compile", "ssa-names": how})

    TABLE_SYMBOLS = ("f4E2M1FN_to_f8E4M3FN", "f4E2M1FN_to_f8E5M2", "f8E4M3FN_to_bf16", "f8E5M2_to_bf16",
                     "gelu_f8E4M3FN", "silu_i8", "exp_bf16")  # fmt: skip

    def check_table_symbols(self, stats: Stats, gm: GenModule, text: bytes, res: dict) -> None:
        """The module with its first kernel named like a table symbol
        ``fetch-to-seq`` makes (issue 26 item 7) must compile with
        ``--verify-each`` to the same programs (but their names) and tables,
        and its ``--emit=seq`` output (with locations) must compile back,
        with no pass, to the same bytes (``table-symbols``)."""
        from fetchc.seqbin import read  # noqa: PLC0415

        first = gm.funcs[0].name
        used = [f"{t.in_dtype.name}_to_{t.out_dtype.name}" if t.function is None else f"{t.function}_{t.in_dtype.name}"
                for t in read(res["files"]["out.bin"]).tables]  # fmt: skip
        symbol = self.rng.choice(used or list(self.TABLE_SYMBOLS))  # a table the module makes: they would collide
        variant = re.sub(rf"@{first}\b", f"@{symbol}", text.decode()).encode()
        env = {"FETCHC_NO_CACHE": "1"}
        r2 = self.compile_job(variant, extra=["--verify-each"], env=env)
        v = judge(r2, tool="compile", out_name="out.bin", source=variant)
        if v.ok and r2["rc"] != 0:
            v = Verdict(False, "table-symbols", f"{symbol}: exit {r2['rc']}: {r2['stderr'][:300]}")
        elif v.ok:
            a, b = read(res["files"]["out.bin"]), read(r2["files"]["out.bin"])
            renamed = [p.name.replace(f"{symbol}/", f"{first}/", 1) for p in b.programs]
            if a.tables != b.tables or [p.name for p in a.programs] != renamed or [
                    dataclasses.replace(p, name="") for p in a.programs] != [
                    dataclasses.replace(p, name="") for p in b.programs]:  # fmt: skip
                v = Verdict(False, "table-symbols", f"{symbol}: other programs or tables")
        self.record(stats, r2, v, "x.mlir", variant, {"tool": "compile", "table-symbols": symbol})
        if not v.ok:
            return
        r3 = self.compile_job(variant, emit="seq", extra=["--mlir-print-debuginfo"], env=env)
        v3 = judge(r3, tool="compile", out_name="out.bin", emit="seq")
        if v3.ok and r3["rc"] == 0:
            r4 = self.compile_job(r3["files"]["out.bin"], extra=["-p", "", "--verify-each"], env=env)
            v3 = judge(r4, tool="compile", out_name="out.bin")
            if v3.ok and (r4["rc"] != 0 or r4["files"].get("out.bin") != r2["files"]["out.bin"]):
                v3 = Verdict(False, "table-symbols", f"{symbol}: --emit=seq does not compile back to the same "
                             "seq.bin: " + r4["stderr"][:300])
            r3 = r4
        elif v3.ok:
            v3 = Verdict(False, "table-symbols", f"{symbol}: --emit=seq failed: {r3['stderr'][:300]}")
        stats.notes["table-symbols"] += 1
        self.record(stats, r3, v3, "x.mlir", variant, {"tool": "compile", "table-symbols": symbol, "from": "emit-seq"})

    _ERR_HEAD = re.compile(r"^(?:[^\n:]*):(\d+):(\d+): (error|warning|note): (.*)$", re.MULTILINE)

    def check_line_endings(self, stats: Stats, text: bytes, res: dict) -> None:
        """The same module with ``\\r`` / ``\\r\\n`` / mixed line breaks
        must compile to the same bytes, or fail with the same located
        diagnostics (line and column counted the same way; ir.md §5).
        A leading comment line shifts the lines by one."""
        rng = self.rng
        how = rng.choice(["cr", "cr", "crlf", "mixed"])
        variant = line_endings(text, how, rng)
        shift = 1 if variant.startswith(b"// kernel") else 0
        r2 = self.compile_job(variant)
        v = judge(r2, tool="compile", out_name="out.bin", source=variant)
        if v.ok:
            if r2["rc"] != res["rc"]:
                v = Verdict(False, "line-endings", f"{how}: exit {r2['rc']} where the LF text exits {res['rc']}: "
                            + (r2["stderr"] or "(no diagnostic)")[:300])
            elif res["rc"] == 0 and not _same_but_lines(r2["files"].get("out.bin"), res["files"].get("out.bin"), shift):
                v = Verdict(False, "line-endings", f"{how}: a different seq.bin than the LF text gives")
            elif res["rc"] == 1:
                want = [(int(a) + shift, int(b), c, d) for a, b, c, d in self._ERR_HEAD.findall(res["stderr"])]
                got = [(int(a), int(b), c, d) for a, b, c, d in self._ERR_HEAD.findall(r2["stderr"])]
                if got != want:
                    v = Verdict(False, "line-endings", f"{how}: diagnostics {got[:2]} where the LF text gives {want[:2]}")
        self.record(stats, r2, v, "x.mlir", variant, {"tool": "compile", "line-endings": how})

    def seqbin_seeds(self, stats: Stats) -> list[bytes]:
        seeds = []
        rng = random.Random(self.rng.random())
        tries = 0
        while len(seeds) < 40 and tries < 400:
            tries += 1
            gm = gen_module(rng, FUZZ_SMALL, nfuncs=rng.choice([1, 2]))
            rebase(gm, rng)  # inside the simulator's 512 KiB DM image
            res = self.compile_job(gm.text.encode())
            if res["rc"] == 0 and res["files"].get("out.bin", SENTINEL) != SENTINEL:
                seeds.append(res["files"]["out.bin"])
        for p in sorted((REPO / "test").rglob("*.bin")):
            if "Output" in p.parts or p.stat().st_size > 1 << 20:
                continue
            seeds.append(p.read_bytes())
        return seeds

    def t_seqbin(self, stats: Stats, deadline: float) -> None:
        rng = self.rng
        pool = self.seqbin_seeds(stats)
        stats.notes["seeds"] = len(pool)
        if not pool:
            print("  no seq.bin seeds could be compiled; is the compiler working?", flush=True)
            return
        if not self.have_sim:
            stats.notes["sim-absent"] = 1
        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            data, kind = mutate_seqbin(rng.choice(pool), rng)
            if rng.random() < 0.2:
                data, kind2 = mutate_seqbin(data, rng)
                kind += "+" + kind2
            stats.inputs += 1
            stats.mutations[kind.split("+")[0]] += 1
            argv = ["dis", "in.bin"] if rng.random() < 0.6 else ["dis", "--json", "in.bin"]
            res = self.run(argv, {"in.bin": data})
            v = judge(res, tool="dis", mlir_input=False)
            if v.ok and "--json" in argv and res["rc"] == 0:
                try:
                    json.loads(res["stdout"])
                except ValueError as e:
                    v = Verdict(False, "bad-output", f"dis --json printed invalid JSON: {e}")
            self.record(stats, res, v, "x.bin", data, {"tool": "dis", "argv": argv[:-1], "mutation": kind})
            dis_ok = res["rc"] == 0
            if dis_ok and len(pool) < 500 and rng.random() < 0.2:
                pool.append(data)
            if self.have_sim and (dis_ok or rng.random() < 0.3):
                files = {"in.bin": data, "out.npz": SENTINEL}
                sargv = ["sim", "in.bin", "--dm", "@DM", "-o", "out.npz"]
                job = {"argv": sargv, "files": files, "timeout": self.args.timeout}
                if rng.random() < 0.3:  # the budget oracle: the peak allocation, measured
                    budget = rng.choice([1 << 20, 2 << 20, 16 << 20, 128 << 20])
                    job.update(env={"FETCHC_SIM_MAX_BYTES": str(budget)}, measure=True)
                res = self.worker.run(job)
                v = judge(res, tool="sim", out_name="out.npz", mlir_input=False)
                if v.ok and res["rc"] == 0 and not dis_ok:
                    v = Verdict(False, "inconsistent", "fetchc sim accepted a file fetchc dis rejects")
                self.record(stats, res, v, "x.bin", data, {"tool": "sim", "mutation": kind})

    # -- npy: .npy inputs of sim --arg and run (untrusted files: types, headers, budget, numbers) --

    NPY_DESCRS = ["|V0", "<U0", "<U4", "|S3", "(2,)u1", "<f1", "|O", "<c8", "<M8[s]", ">f4", ">u2", "<f8", "|b1",
                  "<V4", "|V1", "<i8", "<f2", [("a", "<f4"), ("b", "<i4")], [("", "|u1", (2,))], "zz9", 7]
    SCALAR_TEXTS = ["0.5", "-1e-3", "0x1.8p-3", "inf", "-Infinity", "nan", "1e39", "-0", " 2\t", "1_000",
                    "\u0661\u0662\u0663", "\uff11", "0x", ".", "1e", "--1", "0x1_0p0", "9" * 400, "1e-50", "NaN",
                    "\x1b[2J", "\u202e1", "0x1p128", "3.4028235e38", "3.4028236e38"]

    def _npy_kernels(self, stats: Stats) -> list[dict]:
        """Generated kernels, each compiled: text, seq.bin, MANIFEST tensors."""
        from fetchc.seqbin import read  # noqa: PLC0415

        kernels = []
        for _ in range(30):
            gm = gen_module(self.rng, FUZZ_SMALL, nfuncs=1)
            gm.funcs[0].name = "k"
            text = gm.text.encode()
            res = self.run(["k.mlir", "-o", "k.bin"], {"k.mlir": text})
            data = res["files"].get("k.bin")
            if res["rc"] != 0 or not isinstance(data, bytes):
                continue
            sb = read(data)
            if sb.manifest is None or not sb.manifest.kernels:
                continue
            k = sb.manifest.kernels[0]
            read_idx = {kp.tensor for kp in k.programs}
            tensors = [t for i, t in enumerate(k.tensors) if i in read_idx and not t.scratch]
            kernels.append({"text": text, "bin": data, "tensors": tensors, "scalars": [x.name for x in k.scalars]})
        stats.notes["kernels"] = len(kernels)
        return kernels

    def _npy_array(self, t) -> bytes:
        """A valid .npy file for MANIFEST tensor ``t``, in one of the accepted
        forms (own type, raw bits, 4-bit codes or packed bytes)."""
        import numpy as np  # noqa: PLC0415

        from fetchc.npyio import write_npy  # noqa: PLC0415

        rng = self.rng
        shape = tuple(t.shape)
        n = 1
        for d in shape:
            n *= d
        if t.dtype.bits == 4:
            codes = np.frombuffer(rng.randbytes(n), np.uint8) & np.uint8(15)
            arr = codes.reshape(shape)
            if shape and shape[-1] % 2 == 0 and rng.random() < 0.5:
                arr = (arr[..., 0::2] | (arr[..., 1::2] << np.uint8(4))).astype(np.uint8)
        else:
            size = t.dtype.bits // 8
            raw = np.frombuffer(rng.randbytes(n * size), {1: np.uint8, 2: np.uint16, 4: np.uint32}[size])
            arr = raw.reshape(shape)
            if rng.random() < 0.5:
                arr = arr.view(t.dtype.np_dtype)
        buf = io.BytesIO()
        write_npy(buf, arr)
        return buf.getvalue()

    def _npy_mutate(self, data: bytes) -> tuple[bytes, str, int | None]:
        """One header or data corruption of an .npy file; returns the file,
        the kind, and a size to extend it to sparsely (or None)."""
        import ast as ast_mod  # noqa: PLC0415

        rng = self.rng
        hlen = int.from_bytes(data[8:10], "little")
        header = ast_mod.literal_eval(data[10:10 + hlen].decode("latin1"))
        body = data[10 + hlen:]
        kind = rng.choice(["descr", "shape", "dims", "huge-header", "truncate", "sparse", "fortran", "version",
                           "magic", "keys", "big-endian"])
        sparse = None
        if kind == "descr":
            header["descr"] = rng.choice(self.NPY_DESCRS)
        elif kind == "shape":
            header["shape"] = tuple(rng.choice([0, 1, 2, 3, 2**31, 2**62, 2**63, 2**64, -1]) for _ in
                                    range(rng.randint(0, 4)))
        elif kind == "dims":
            header["shape"] = (1,) * rng.choice([31, 32, 33, 64, 65, 1000])
        elif kind == "sparse":
            header["shape"] = (rng.choice([1 << 28, 1 << 31, 1 << 33]),)
            header["descr"] = "|u1"
        elif kind == "fortran":
            header["fortran_order"] = rng.choice([True, 1, "yes"])
        elif kind == "keys":
            header[rng.choice(["extra", "descr"])] = 1
            if rng.random() < 0.5:
                header.pop("shape", None)
        elif kind == "big-endian" and isinstance(header.get("descr"), str) and header["descr"][0] == "<":
            header["descr"] = ">" + header["descr"][1:]
        text = repr(header).encode("latin1")
        if kind == "huge-header":
            text += b" " * rng.choice([70_000, 1 << 20, 10 << 20])
        version = 1 if len(text) < 65000 else 2
        if kind == "version":
            version = rng.choice([0, 2, 3, 4, 255])
        size = len(text).to_bytes(2 if version == 1 else 4, "little")
        out = b"\x93NUMPY" + bytes([version, 0]) + size + text + body
        if kind == "magic":
            out = rng.choice([b"PK\x03\x04", b"\x93NUMPX", b""]) + out[6:]
        if kind == "truncate":
            out = out[: rng.randrange(len(out))]
        if kind == "sparse":
            sparse = len(out) + header["shape"][0]
        return out, kind, sparse

    def t_npy(self, stats: Stats, deadline: float) -> None:
        """``.npy`` inputs of ``fetchc sim --arg`` and ``fetchc run``: valid
        arrays in every accepted form, and corrupt ones (header descriptors,
        shapes, dimensions, sizes, huge headers, sparse files declaring
        gigabytes, truncation), scalars as odd text or 0-d arrays, under
        random ``FETCHC_SIM_MAX_BYTES`` budgets with the peak allocation
        measured (``budget`` oracle)."""
        import numpy as np  # noqa: PLC0415

        rng = self.rng
        kernels = self._npy_kernels(stats)
        if not kernels:
            print("  no kernel could be compiled", flush=True)
            return
        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            k = rng.choice(kernels)
            stats.inputs += 1
            files, sparse, args, kinds = {"out.npz": SENTINEL}, {}, [], []
            for t in k["tensors"]:
                data = self._npy_array(t)
                if rng.random() < 0.3:
                    data, kind, size = self._npy_mutate(data)
                    kinds.append(kind)
                    if size is not None:
                        sparse[f"{t.name}.npy"] = size
                files[f"{t.name}.npy"] = data
                args += ["--arg", f"{t.name}={t.name}.npy"]
            for name in k["scalars"]:
                if rng.random() < 0.3:
                    buf = io.BytesIO()
                    dtype = rng.choice([np.float32, np.uint32, np.float64, np.int8, ">f4", ">u4"])
                    value = rng.choice([0.5, 2]) if dtype in (np.float32, np.float64, ">f4") else rng.choice(
                        [0x3F800000, 2, 0x7FC00000] if dtype != np.int8 else [2, -1])
                    np.save(buf, np.array(value, dtype))
                    files[f"{name}.npy"] = buf.getvalue()
                    args += ["--arg", f"{name}={name}.npy"]
                    kinds.append("scalar-npy")
                else:
                    args += ["--arg", f"{name}={rng.choice(self.SCALAR_TEXTS)}"]
            env = {}
            if rng.random() < 0.7:
                env["FETCHC_SIM_MAX_BYTES"] = str(rng.choice([0, 1000, 100_000, 1 << 20, 16 << 20, 256 << 20]))
            if rng.random() < 0.5:
                tool, argv = "sim", ["sim", "k.bin", *args, "-o", "out.npz"]
                files["k.bin"] = k["bin"]
            else:
                tool, argv = "run", ["run", "k.mlir", *args, "-o", "out.npz"]
                files["k.mlir"] = k["text"]
            stats.mutations["+".join(sorted(set(kinds))) or "valid"] += 1
            res = self.worker.run({"argv": argv, "files": files, "sparse": sparse, "env": env, "measure": True,
                                   "timeout": self.args.timeout})
            v = judge(res, tool="sim", out_name="out.npz", mlir_input=False)
            if v.ok and res["rc"] == 0 and set(kinds) & {"dims", "huge-header", "sparse", "magic", "keys"}:
                v = Verdict(False, "accepted-invalid", f"exit 0 with a corrupt .npy ({', '.join(kinds)})")
            self.record(stats, res, v, "x.txt", " ".join(argv).encode(),
                        {"tool": tool, "argv": argv, "kinds": kinds, "env": env, "sparse": sparse})

    def t_passes(self, stats: Stats, deadline: float) -> None:
        """Foreign passes through ``-p`` (ir.md §5): every xDSL pass,
        alone or around fetchc's, on generated modules, seed files and the
        empty module, with ``-o FILE`` or ``-o -``.  A run must give a
        module (and nothing else on the output) or a clear error that names
        a pass of the pipeline or is located; a pass's own prints must not
        reach ``-o -``."""
        rng = self.rng
        from xdsl.transforms import get_all_passes  # noqa: PLC0415

        from fetchc.driver import parse_pipeline  # noqa: PLC0415
        from fetchc.diagnostics import DiagnosticError  # noqa: PLC0415

        usable = []
        for name in sorted(get_all_passes()):
            try:
                parse_pipeline(name)
                usable.append(name)
            except DiagnosticError:
                stats.notes["passes-needing-arguments"] += 1
        ours = ["fetch-legalize-convert", "fetch-split-scaling", "fetch-to-seq"]
        seeds = [c for c in mlir_seeds(random.Random(rng.random())) if b"expected-" not in c][:200]
        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            k = rng.random()
            if k < 0.6:
                text = gen_module(rng, FUZZ_SMALL if rng.random() < 0.5 else FUZZ).text.encode()
            elif k < 0.9 and seeds:
                text = rng.choice(seeds)
            else:
                text = rng.choice([b"", b"builtin.module {\n}\n", b"func.func @f() {\n  func.return\n}\n"])
            pipe = [rng.choice(usable)]
            if rng.random() < 0.3:
                pipe.insert(rng.choice([0, 1]), rng.choice(ours + usable))
            spec = ",".join(pipe)
            to_stdout = rng.random() < 0.5
            stats.inputs += 1
            stats.mutations[pipe[-1]] += 1
            files = {"in.mlir": text, "out.bin": SENTINEL}
            argv = ["in.mlir", "-p", spec, "--emit=mlir", "-o", "-" if to_stdout else "out.bin"]
            res = self.run(argv, files)
            v = judge(res, tool="compile", out_name=None if to_stdout else "out.bin", emit="mlir", located=False,
                      source=text)
            if v.ok and res["rc"] == 1:
                err = _without_snippets(res["stderr"])
                if not (_LOCATED.search(err) or any(f"'{n}'" in err for n in pipe)):
                    v = Verdict(False, "unnamed", "an error that names no pass and has no location: "
                                + err.strip().splitlines()[0][:200])
                elif to_stdout and res["stdout"]:
                    v = Verdict(False, "dirty-output", f"a failing run wrote to stdout: {res['stdout'][:100]!r}")
            if v.ok and res["rc"] == 0:
                out = res["stdout"] if to_stdout else res["files"].get("out.bin", b"")
                if isinstance(out, tuple):
                    out = b"builtin.module"  # too big to ship back; written by the printer
                if not out.lstrip().startswith((b"builtin.module", b'"builtin.module"')):
                    v = Verdict(False, "dirty-output", f"-o {'-' if to_stdout else 'FILE'} does not hold just the "
                                f"module: {out[:120]!r}")
            self.record(stats, res, v, "x.mlir", text, {"tool": "compile", "argv": argv[1:]})

    # -- cli: fetchc as a user runs it (subprocesses) ------------------------

    CLI_CASES = ("out-fd", "out-pipe", "out-fifo", "stale-tmp", "names", "memory", "sim-total",
                 "out-input", "tty", "signal", "short-write")
    TRICKY_NAMES = ["file", "allow_pickle", "args", "kwds", "fix_imports", "compress", "a/b", "/abs", "../up", "x y",
                    "-", ".", ".npy", "x.npy", "x", "\u00e9t\u00e9", "\u202e", "k/0", "name\twith\ttabs", "a" * 300]

    def _fetchc(self, argv: list[str], cwd: str, *, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env: dict | None = None, mem_mb: int | None = None) -> dict:
        """Run ``python -m fetchc.cli argv`` as a user would; a result dict
        shaped like the worker's."""
        pre = None
        if mem_mb is not None:
            import resource  # noqa: PLC0415

            def pre():  # pragma: no cover - in the child
                resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))

        t0 = time.monotonic()
        env = dict(os.environ if env is None else env, PYTHONFAULTHANDLER="1")
        p = subprocess.Popen([sys.executable, "-m", "fetchc.cli", *argv], cwd=cwd, stdout=stdout, stderr=stderr,
                             env=env, preexec_fn=pre, stdin=subprocess.DEVNULL)
        try:
            out, err_b = p.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            try:
                _, err_b = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err_b = p.communicate()
            stacks = err_b.decode("utf-8", "replace")[-3000:] if isinstance(err_b, bytes) else ""
            return {"rc": None, "stdout": b"", "stderr": "", "files": {}, "listing": [], "changed": [],
                    "elapsed": self.args.timeout, "escaped": "hang (subprocess timeout)\n" + stacks}
        out = out if isinstance(out, bytes) else b""
        err = err_b.decode("utf-8", "replace") if isinstance(err_b, bytes) else ""
        return {"rc": p.returncode, "stdout": out, "stderr": err, "files": {}, "listing": [], "changed": [],
                "elapsed": time.monotonic() - t0, "escaped": None}

    @staticmethod
    def _i8_program(name: str, base: int, cast: bool = False, rows: int = 4):
        """``rows`` packets of 16 ``i8`` read at ``base``: copied, or
        sign-extended to ``i32`` (output = the DM bytes, computed here)."""
        from fetchc.seqbin import Program  # noqa: PLC0415
        from fetchc.target import I8, I32  # noqa: PLC0415

        return Program(name=name, unit=0, in_dtype=I8, out_dtype=I32 if cast else I8, base=base, packet_size=16,
                       fetch_size=8 if cast else 16, limits=(rows * 16,), strides=(1,), stages=2 if cast else 0,
                       table=None, type_conversion=1 if cast else None, zero_point0=0, num_zero_points=0, zp_mode=0,
                       flit_count=2 if cast else 1, words_per_packet=2 if cast else 1)

    @staticmethod
    def _expected(dm: bytes, base: int, cast: bool, rows: int = 4):
        import numpy as np  # noqa: PLC0415

        raw = np.frombuffer(dm[base: base + rows * 16], dtype=np.int8).reshape(rows, 16)
        return raw.astype(np.int32) if cast else raw

    def _cli_setup(self, d: str) -> dict:
        """A valid kernel, its seq.bin (every program reads inside the 1 MiB
        DM image) and the image, in ``d``."""
        rng = self.rng
        for _ in range(50):
            gm = gen_module(rng, FUZZ_SMALL, nfuncs=1)
            gm.funcs[0].name = "k"
            rebase(gm, rng)
            text = gm.text.encode()
            Path(d, "k.mlir").write_bytes(text)
            r = self._fetchc(["k.mlir", "-o", "k.bin"], d)
            if r["rc"] == 0:
                break
        dm = bytes(random.Random(rng.random()).getrandbits(8) for _ in range(1 << 16)) * 8  # one slice's DM
        Path(d, "dm.bin").write_bytes(dm)
        from fetchc.seqbin import read  # noqa: PLC0415

        names = [p.name or f"#{i}" for i, p in enumerate(read(Path(d, "k.bin").read_bytes()).programs)]
        return {"text": Path(d, "k.mlir").read_bytes(), "names": names, "dm": dm}

    def _cli_command(self, setup: dict, out: str) -> tuple[str, list[str]]:
        rng = self.rng
        tool = rng.choice(["compile", "compile", "dis", "sim", "sim-one"])
        if tool == "compile":
            return tool, ["k.mlir", "-o", out, f"--emit={rng.choice(['mlir', 'seq', 'bin'])}"]
        if tool == "dis":
            return tool, ["dis", "k.bin", "-o", out] + (["--json"] if rng.random() < 0.3 else [])
        if tool == "sim":
            return tool, ["sim", "k.bin", "--dm", "dm.bin", "-o", out]
        return "sim", ["sim", "k.bin", "--dm", "dm.bin", "--program", rng.choice(setup["names"]), "-o", out]

    @staticmethod
    def _same_output(tool: str, got: bytes, want: bytes) -> bool:
        if tool != "sim":
            return got == want
        import numpy as np  # noqa: PLC0415

        try:
            a, b = np.load(io.BytesIO(got), allow_pickle=False), np.load(io.BytesIO(want), allow_pickle=False)
        except Exception:  # noqa: BLE001
            return False
        if isinstance(b, np.ndarray):
            return isinstance(a, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
        return list(a.files) == list(b.files) and all(
            a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k], equal_nan=True) for k in b.files)

    def t_cli(self, stats: Stats, deadline: float) -> None:
        """fetchc run as a user runs it, in subprocesses: ``-o /dev/stdout``
        appended to a log, pipes and FIFOs, stale temporary files, program
        names that are not identifiers, address-space limits and
        ``FETCHC_SIM_MAX_BYTES`` against the total."""
        rng = self.rng
        d = tempfile.mkdtemp(prefix="fetchc-fuzz-cli-")
        try:
            setup = self._cli_setup(d)
            stats.notes["programs-in-kernel"] = len(setup["names"])
            while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
                case = rng.choice(self.CLI_CASES)
                stats.inputs += 1
                stats.mutations[case] += 1
                for name in os.listdir(d):
                    if name not in ("k.mlir", "k.bin", "dm.bin"):
                        p = Path(d, name)
                        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
                getattr(self, "_cli_" + case.replace("-", "_"))(stats, d, setup)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def _cli_reference(self, stats: Stats, d: str, tool: str, argv: list[str]) -> bytes | None:
        argv = list(argv)
        argv[argv.index("-o") + 1] = "ref.out"
        r = self._fetchc(argv, d)
        v = judge(r, tool="cli", mlir_input=False)
        if not v.ok or r["rc"] != 0:
            self.record(stats, r, v if not v.ok else Verdict(False, "bad-output", "the reference run failed: "
                                                              + r["stderr"][:200]), "x.txt", " ".join(argv).encode(),
                        {"tool": tool, "case": "reference", "argv": argv})
            return None
        return Path(d, "ref.out").read_bytes()

    def _cli_out_fd(self, stats: Stats, d: str, setup: dict) -> None:
        rng = self.rng
        path = rng.choice(["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/dev/stderr", "/dev/fd/2"])
        tool, argv = self._cli_command(setup, path)
        if tool == "compile" and "--emit=bin" in argv and path.endswith(("stderr", "/2")):
            argv[-1] = "--emit=mlir"
        want = self._cli_reference(stats, d, tool, argv)
        if want is None:
            return
        log = Path(d, "log.txt")
        prefix = b"earlier output\n" * rng.randint(0, 3)
        log.write_bytes(prefix)
        inode = os.stat(log).st_ino
        to_err = path.endswith(("stderr", "/2"))
        with open(log, "ab") as f:
            r = self._fetchc(argv, d, stdout=f if not to_err else subprocess.PIPE, stderr=f if to_err else subprocess.PIPE)
        if to_err:
            r["stderr"] = ""
        v = judge(r, tool="cli", mlir_input=False)
        if v.ok:
            got = log.read_bytes()
            if r["rc"] != 0:
                v = Verdict(False, "bad-output", f"-o {path} >> log failed: {r['stderr'][:200]}")
            elif os.stat(log).st_ino != inode:
                v = Verdict(False, "clobbered", f"-o {path} replaced the log it should append to (new inode)")
            elif not got.startswith(prefix) or not self._same_output(tool, got[len(prefix):], want):
                v = Verdict(False, "clobbered", f"-o {path} >> log: the log is not its old text + the output "
                            f"({len(got)} bytes, expected {len(prefix) + len(want)})")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(), {"tool": tool, "case": "out-fd", "argv": argv})

    def _cli_out_pipe(self, stats: Stats, d: str, setup: dict) -> None:
        rng = self.rng
        tool, argv = self._cli_command(setup, rng.choice(["/dev/stdout", "-", "/proc/self/fd/1"]))
        want = self._cli_reference(stats, d, tool, argv)
        if want is None:
            return
        r = self._fetchc(argv, d)  # stdout is a pipe: not seekable
        v = judge(r, tool="cli", mlir_input=False)
        if v.ok and (r["rc"] != 0 or not self._same_output(tool, r["stdout"], want)):
            v = Verdict(False, "bad-output", f"through a pipe: exit {r['rc']}, {len(r['stdout'])} bytes, "
                        f"expected {len(want)}: {r['stderr'][:200]}")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(), {"tool": tool, "case": "out-pipe", "argv": argv})

    def _cli_out_fifo(self, stats: Stats, d: str, setup: dict) -> None:
        import threading  # noqa: PLC0415

        fifo = os.path.join(d, "out.fifo")
        os.mkfifo(fifo)
        tool, argv = self._cli_command(setup, fifo)
        want = self._cli_reference(stats, d, tool, argv)
        if want is None:
            return
        got: list[bytes] = []

        def reader():
            try:
                fd = os.open(fifo, os.O_RDONLY)
                with os.fdopen(fd, "rb") as f:
                    got.append(f.read())
            except OSError:
                got.append(b"")

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        r = self._fetchc(argv, d)
        if t.is_alive():  # fetchc never opened the FIFO: unblock the reader
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(10)
        v = judge(r, tool="cli", mlir_input=False)
        if v.ok:
            data = got[0] if got else b""
            if r["rc"] != 0 or not self._same_output(tool, data, want):
                v = Verdict(False, "bad-output", f"through a FIFO: exit {r['rc']}, {len(data)} bytes, expected "
                            f"{len(want)}: {r['stderr'][:200]}")
            elif not stat.S_ISFIFO(os.stat(fifo).st_mode):
                v = Verdict(False, "clobbered", "the FIFO was replaced by a file")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(), {"tool": tool, "case": "out-fifo", "argv": argv})

    def _cli_stale_tmp(self, stats: Stats, d: str, setup: dict) -> None:
        rng = self.rng
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        p.wait()
        dead, old = p.pid, time.time() - 3600
        sub = os.path.join(d, "o")
        os.mkdir(sub)
        planted = {
            f".fetchc-{dead}-{rng.randrange(10**8):08d}.tmp": False,  # stale: must go
            f".fetchc-{os.getpid()}-abcdefgh.tmp": True,  # a live process: kept
            f".fetchc-{dead}-abc.tmp": True,  # not the pattern: kept
            f"fetchc-{dead}-abcdefgh.tmp": True,  # no leading dot: kept
        }
        for name in planted:
            Path(sub, name).write_bytes(b"partial")
            os.utime(os.path.join(sub, name), (old, old))
        fresh = f".fetchc-{dead}-fresh{rng.randrange(1000):03d}.tmp"
        Path(sub, fresh).write_bytes(b"partial")  # a dead writer, but modified just now: kept
        planted[fresh] = True
        tool, argv = self._cli_command(setup, os.path.join("o", "out.bin"))
        fail = rng.random() < 0.3
        if fail:
            argv[argv.index("-o") - 1 if tool == "compile" else 1] = "missing.input"
        r = self._fetchc(argv, d)
        v = judge(r, tool="cli", mlir_input=False)
        left = set(os.listdir(sub))
        if v.ok:
            wrong = [n for n, keep in planted.items() if (n in left) != keep and not (fail and not keep)]
            extra = [n for n in left if n not in planted and n != "out.bin"]
            if wrong or extra:
                v = Verdict(False, "stale-tmp", f"kept/removed wrongly: {wrong}; left behind: {extra}")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(), {"tool": tool, "case": "stale-tmp", "argv": argv})

    def _cli_names(self, stats: Stats, d: str, setup: dict) -> None:
        from fetchc.seqbin import SeqBin, write  # noqa: PLC0415

        rng = self.rng
        pool = self.TRICKY_NAMES + ["".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(160, 0x2FFF)]))
                                            for _ in range(rng.randint(1, 12))) for _ in range(5)]
        names = list(dict.fromkeys(rng.sample(pool, rng.randint(1, 6))))
        casts = [rng.random() < 0.5 for _ in names]
        bases = [64 * rng.randrange(1 << 10) for _ in names]
        sb = SeqBin((), tuple(self._i8_program(n, b, c) for n, b, c in zip(names, bases, casts)))
        data = write(sb)
        Path(d, "names.bin").write_bytes(data)
        argv = ["sim", "names.bin", "--dm", "dm.bin", "-o", "out.npz"]
        r = self._fetchc(argv, d)
        v = judge(r, tool="sim", mlir_input=False)
        clash = any(n + ".npy" in names for n in names)
        unsafe = any(self._unsafe_member(n) for n in names)
        if v.ok:
            import numpy as np  # noqa: PLC0415

            if r["rc"] == 1 and not (clash and "cannot both be keys" in r["stderr"]) and not (
                unsafe and "cannot be a .npz key" in r["stderr"]
            ):
                v = Verdict(False, "names", f"program names {names!r}: {r['stderr'][:200]}")
            elif r["rc"] == 0:
                try:
                    with np.load(os.path.join(d, "out.npz"), allow_pickle=False) as z:
                        ok = sorted(z.files) == sorted(names) and all(
                            np.array_equal(z[n], self._expected(setup["dm"], b, c))
                            for n, b, c in zip(names, bases, casts))
                except Exception as e:  # noqa: BLE001
                    ok, names = False, names + [f"{type(e).__name__}: {e}"]
                if not ok or clash or unsafe:
                    v = Verdict(False, "names", f"program names {names!r}: the .npz does not hold each by its name"
                                + (" (a member path outside the directory was written)" if unsafe else ""))
        self.record(stats, r, v, "x.bin", data, {"tool": "sim", "case": "names", "names": names})

    @staticmethod
    def _unsafe_member(name: str) -> bool:
        """Whether an unzip tool could take ``name + '.npy'`` for a path
        outside its directory (written here independently of fetchc.npyio)."""
        parts = name.split("/")
        return (name.startswith("/") or "\\" in name or "\0" in name or re.match(r"[A-Za-z]:", name) is not None
                or any(p in ("", ".", "..") for p in parts))

    def _cli_memory(self, stats: Stats, d: str, setup: dict) -> None:
        rng = self.rng
        # From 16 MiB: below it the interpreter itself cannot start (its site module), before any of fetchc.
        mem = rng.choice([16, 18, 20, 24, 28, 32, 34, 35, 36, 37, 40, 48, 64, 100, 128, 150, 200, 250, 280, 300, 350,
                          400, 500, 600])
        tool, argv = self._cli_command(setup, "out.bin")
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        r = self._fetchc(argv, d, env=env, mem_mb=mem)
        v = judge(r, tool="compile", mlir_input=False)
        if not v.ok and v.kind == "oom":
            v = Verdict(True, "ok")  # "out of memory" is the right answer under a limit
        if v.ok and r["rc"] == 1:
            first = r["stderr"].splitlines()[0] if r["stderr"].strip() else ""
            if not re.match(r"(\S+: )?error: ", first) or not re.search(r"memory|may allocate|nesting too deep", r["stderr"]):
                v = Verdict(False, "resource", f"under {mem} MiB: {first[:200]}")
            elif len(r["stderr"].splitlines()) > 2 or "Exception ignored" in r["stderr"]:
                v = Verdict(False, "resource", f"under {mem} MiB, more than the error line: {r['stderr'][:300]!r}")
            elif tool == "compile" and mem >= 100:
                v = Verdict(False, "resource", f"compiling a small valid kernel failed under {mem} MiB: {first[:200]}")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(),
                    {"tool": tool, "case": "memory", "mem_mb": mem, "argv": argv})

    def _cli_sim_total(self, stats: Stats, d: str, setup: dict) -> None:
        from fetchc.seqbin import SeqBin, write  # noqa: PLC0415

        rng = self.rng
        n = rng.randint(1, 5)
        rows = [rng.choice([1, 4, 64, 1024]) for _ in range(n)]
        casts = [rng.random() < 0.5 for _ in range(n)]
        sb = SeqBin((), tuple(self._i8_program(f"p/{i}", 64 * i, casts[i], rows[i]) for i in range(n)))
        data = write(sb)
        Path(d, "t.bin").write_bytes(data)
        sizes = [r * 16 * (4 if c else 1) for r, c in zip(rows, casts)]
        dm = len(setup["dm"])
        need = dm + sum(sizes)
        limit = rng.choice([need, need - 1, dm + max(sizes), need + rng.randint(0, 1000), dm - 1, need // 2])
        env = dict(os.environ, FETCHC_SIM_MAX_BYTES=str(max(0, limit)))
        argv = ["sim", "t.bin", "--dm", "dm.bin", "-o", "out.npz"]
        r = self._fetchc(argv, d, env=env)
        v = judge(r, tool="sim", mlir_input=False)
        if v.ok:
            if need <= limit and r["rc"] != 0:
                v = Verdict(False, "sim-total", f"{need} bytes needed, limit {limit}: refused: {r['stderr'][:200]}")
            elif need > limit and (r["rc"] != 1 or "more than the" not in r["stderr"]):
                v = Verdict(False, "sim-total", f"{need} bytes needed (outputs {sizes} + DM {dm}), limit {limit}: "
                            f"exit {r['rc']}, not refused up front: {r['stderr'][:200]}")
            elif r["rc"] == 1 and os.path.exists(os.path.join(d, "out.npz")):
                v = Verdict(False, "clobbered", "a refused run wrote its output")
        self.record(stats, r, v, "x.bin", data, {"tool": "sim", "case": "sim-total", "limit": limit, "need": need})

    def _cli_out_input(self, stats: Stats, d: str, setup: dict) -> None:
        """``-o`` naming one of the command's inputs, through any spelling (a
        symlink, ``./``, ``sub/..``, ``>>`` on stdout): refused, the input
        unchanged."""
        rng = self.rng
        os.mkdir(os.path.join(d, "sub"))
        os.symlink("k.mlir", os.path.join(d, "link.mlir"))
        import numpy as np  # noqa: PLC0415

        np.save(os.path.join(d, "a.npy"), np.zeros(4, np.uint8))
        tool, argv = rng.choice([
            ("compile", ["k.mlir", "--emit=mlir", "-o", "@k.mlir"]),
            ("compile", ["link.mlir", "-o", "@k.mlir"]),
            ("dis", ["dis", "k.bin", "-o", "@k.bin"]),
            ("sim", ["sim", "k.bin", "--dm", "dm.bin", "-o", "@dm.bin"]),
            ("sim", ["sim", "k.bin", "--dm", "dm.bin", "-o", "@k.bin"]),
            ("run", ["run", "k.mlir", "--arg", "x=a.npy", "-o", "@a.npy"]),
            ("compile", ["k.mlir", "--emit=mlir", "-o", "-", ">>k.mlir"]),
        ])
        spell = rng.choice(["{}", "./{}", "sub/../{}", os.path.join(d, "{}"), os.path.join(d, ".", "{}")])
        argv = [spell.format(a[1:]) if a.startswith("@") else a for a in argv]
        before = {n: Path(d, n).read_bytes() for n in ("k.mlir", "k.bin", "dm.bin", "a.npy")}
        if argv[-1].startswith(">>"):
            with open(os.path.join(d, argv[-1][2:]), "ab") as f:
                r = self._fetchc(argv[:-1], d, stdout=f)
        else:
            r = self._fetchc(argv, d)
        v = judge(r, tool="cli", mlir_input=False)
        after = {n: Path(d, n).read_bytes() for n in before}
        if v.ok and (r["rc"] != 1 or "an input file of this command" not in r["stderr"] or after != before):
            v = Verdict(False, "out-input", f"exit {r['rc']}, inputs {'changed' if after != before else 'kept'}: "
                        f"{r['stderr'][:200]}")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(), {"tool": tool, "case": "out-input", "argv": argv})

    def _cli_tty(self, stats: Stats, d: str, setup: dict) -> None:
        """Binary output (seq.bin, .npy, .npz) to a terminal, however it is
        named: refused, nothing written to it; text is written."""
        import pty  # noqa: PLC0415

        rng = self.rng
        master, slave = pty.openpty()
        try:
            tty_path = os.ttyname(slave)
            out = rng.choice(["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", tty_path])
            tool, argv = self._cli_command(setup, out)
            binary = tool == "sim" or "--emit=bin" in argv
            r = self._fetchc(argv, d, stdout=slave)
            os.close(slave)
            slave = -1
            seen = b""
            while select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            if slave >= 0:
                os.close(slave)
            os.close(master)
        v = judge(r, tool="cli", mlir_input=False)
        if v.ok and binary and (r["rc"] != 1 or seen or "to a terminal" not in r["stderr"]):
            v = Verdict(False, "tty", f"binary -o {out} on a terminal: exit {r['rc']}, {len(seen)} bytes shown")
        elif v.ok and not binary and (r["rc"] != 0 or not seen):
            v = Verdict(False, "tty", f"text -o {out} on a terminal: exit {r['rc']}: {r['stderr'][:200]}")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(), {"tool": tool, "case": "tty", "argv": argv})

    def _cli_signal(self, stats: Stats, d: str, setup: dict) -> None:
        """SIGINT, SIGTERM or SIGHUP at a random moment of a run writing
        ``-o FILE``: no ``.fetchc-*.tmp`` left; the output absent or whole
        (docs/robustness.md)."""
        rng = self.rng
        tool, argv = self._cli_command(setup, "out.bin")
        want = self._cli_reference(stats, d, tool, argv)
        if want is None:
            return
        os.unlink(os.path.join(d, "ref.out"))
        sig = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
        p = subprocess.Popen([sys.executable, "-m", "fetchc.cli", *argv], cwd=d, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 1.5))
        p.send_signal(sig)
        err = p.communicate(timeout=self.args.timeout)[1].decode("utf-8", "replace")
        r = {"rc": p.returncode if p.returncode >= 0 else 1, "stdout": b"", "stderr": err, "files": {},
             "listing": sorted(os.listdir(d)), "changed": [], "elapsed": 0.0, "escaped": None}
        left = [n for n in os.listdir(d) if n.startswith(".fetchc-")]
        v = untrusted_verdict(r, "cli") or Verdict(True, "ok")
        if v.ok and left:
            v = Verdict(False, "leftover", f"after {signal.Signals(sig).name}: {left}")
        elif v.ok and os.path.exists(os.path.join(d, "out.bin")):
            if not self._same_output(tool, Path(d, "out.bin").read_bytes(), want):
                v = Verdict(False, "bad-output", f"after {signal.Signals(sig).name}: a partial output file")
        elif v.ok and (p.returncode not in (0, 1, -sig) or "Traceback" in err):
            v = Verdict(False, "crash", f"after {signal.Signals(sig).name}: exit {p.returncode}: {err[:200]}")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(),
                    {"tool": tool, "case": "signal", "signal": int(sig), "argv": argv})

    def _cli_short_write(self, stats: Stats, d: str, setup: dict) -> None:
        """A full disk (``ulimit -f`` with SIGXFSZ ignored): short writes are
        errors, exit 1, never a cut file or stream reported as success."""
        import resource  # noqa: PLC0415

        rng = self.rng
        out = rng.choice(["out.bin", "-", "/dev/stdout"])
        tool, argv = self._cli_command(setup, out)
        want = self._cli_reference(stats, d, tool, argv)
        if want is None:
            return
        limit = rng.choice([0, 1, len(want) // 2, max(0, len(want) - 1), len(want), len(want) + 4096])

        def pre():  # pragma: no cover - in the child
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        with open(os.path.join(d, "stdout.out"), "wb") as f:
            p = subprocess.run([sys.executable, "-m", "fetchc.cli", *argv], cwd=d, stdout=f, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, preexec_fn=pre, timeout=self.args.timeout)
        err = p.stderr.decode("utf-8", "replace")
        r = {"rc": p.returncode, "stdout": b"", "stderr": err, "files": {}, "listing": sorted(os.listdir(d)),
             "changed": [], "elapsed": 0.0, "escaped": None}
        v = judge(r, tool="cli", mlir_input=False)
        got_path = os.path.join(d, "out.bin" if out == "out.bin" else "stdout.out")
        got = Path(got_path).read_bytes() if os.path.exists(got_path) else None
        fits = len(want) <= limit
        if v.ok and p.returncode == 0 and (got is None or not self._same_output(tool, got, want)):
            v = Verdict(False, "short-write", f"exit 0 under a {limit}-byte file limit, output "
                        f"{'missing' if got is None else f'{len(got)} of {len(want)} bytes'}")
        elif v.ok and p.returncode == 1 and fits:
            v = Verdict(False, "short-write", f"refused an output of {len(want)} bytes under a {limit}-byte limit")
        elif v.ok and p.returncode == 1 and out == "out.bin" and got is not None:
            v = Verdict(False, "clobbered", "a failed write left an output file")
        self.record(stats, r, v, "x.txt", " ".join(argv).encode(),
                    {"tool": tool, "case": "short-write", "limit": limit, "argv": argv})

    def t_parse(self, stats: Stats, deadline: float) -> None:
        """The fast front end against xDSL's parser, in this process
        (test/support/parse_oracle.py): every input either falls back or
        builds the same IR, and the fast path never accepts what xDSL's
        parser rejects."""
        from parse_oracle import ParserMismatch, compare  # noqa: PLC0415

        from fetchc.frontend.context import make_context  # noqa: PLC0415
        from fetchc.frontend.parsing import split_input_file  # noqa: PLC0415

        rng, ctx = self.rng, make_context()
        pool = mlir_seeds(rng)
        stats.notes["seeds"] = len(pool)
        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            kind, data = parse_input(rng, pool, ctx)
            stats.inputs += 1
            stats.mutations[kind] += 1
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                stats.notes["undecodable"] += 1
                continue
            texts = [(text, 0)]
            if rng.random() < 0.2:
                texts += split_input_file(text)[1:]
            for chunk, offset in texts:
                self.parse_one(stats, ctx, chunk, offset, kind, compare, ParserMismatch)

    def parse_one(self, stats: Stats, ctx, text: str, offset: int, kind: str, compare, mismatch) -> None:
        """One comparison, under the per-input time limit."""
        t0 = time.monotonic()
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, self.args.timeout)
        verdict, detail = "ok", ""
        try:
            outcome = compare(ctx, text, "in.mlir", offset)
        except mismatch as err:
            outcome, verdict, detail = "mismatch", "parser-mismatch", str(err)
        except FuzzTimeout:
            outcome, verdict, detail = "hang", "hang", f"no result in {self.args.timeout:.0f} s"
        except Exception as err:  # noqa: BLE001 - parse_module must raise DiagnosticError only
            outcome, verdict, detail = "exception", "exception", f"{type(err).__name__}: {err}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        elapsed = time.monotonic() - t0
        stats.runs += 1
        stats.exits[outcome] += 1
        stats.max_elapsed = max(stats.max_elapsed, elapsed)
        if verdict != "ok":
            stats.failures[f"parse/{verdict}"] += 1
            self.save(stats, "fail", "x.mlir", text.encode(), {"tool": "parse", "mutation": kind,
                                                               "line_offset": offset, "detail": detail[:4000]})
            if self.args.verbose or stats.failures[f"parse/{verdict}"] <= 3:
                print(f"  FAIL [{verdict}] {kind} {detail[:300]}", flush=True)

    def t_cache(self, stats: Stats, deadline: float) -> None:
        """The kernel compile cache against uncached compiles, in this
        process: generated modules (valid, or with one chain broken; some
        with their types named by aliases; arguments with bare, quoted and
        nested attribute dictionaries and SSA names ending in ``_<digits>``,
        :data:`modgen.FUZZ_DRESSED`), then the same kernels renamed,
        respaced, duplicated under other names with their arguments'
        names permuted, and reordered (:func:`_cache_variant`), then (after
        a valid one is cached) a variant changing what the key erases or
        what surrounds the kernels (:func:`_erasure_variant`), each compiled
        by ``fetchc.compile`` through one long-lived cache and without it;
        the outcome (bytes, or every diagnostic) must be the same.  One
        erasure variant in four also goes through the command, with a disk
        cache seeded by the original and with ``FETCHC_NO_CACHE=1``: same
        exit status, stderr and output."""
        import fetchc  # noqa: PLC0415
        from fetchc import api  # noqa: PLC0415
        from fetchc.api import compile_uncached  # noqa: PLC0415
        from fetchc.compile_cache import KernelCache  # noqa: PLC0415
        from fetchc.diagnostics import DiagnosticError  # noqa: PLC0415

        rng, cache = self.rng, KernelCache()
        spec = "fetch-route-sub-decode,fetch-place-dm,fetch-legalize-convert,fetch-split-scaling,fetch-to-seq"
        disk = tempfile.mkdtemp(prefix="fetchc-fuzz-cache-")

        def outcome(fn):
            try:
                return "ok", fn()
            except DiagnosticError as e:
                return "error", [(d.severity, d.message, d.loc) for d in e.diagnostics]

        def cached(source: str) -> bytes:
            api._CACHE = cache
            return fetchc.compile(source, filename="in.mlir", cache=True).seq_bin

        def check(source: str, kind: str, variant: str) -> tuple:
            stats.inputs += 1
            stats.mutations[f"{kind}/{variant}"] += 1
            want = outcome(lambda: compile_uncached(source, "in.mlir", spec)[1])
            before = cache.hits + cache.misses
            got = outcome(lambda: cached(source))
            if cache.hits + cache.misses == before:  # not an input the kernel cache takes: compiled normally
                stats.notes["not cached"] += 1
            stats.runs += 1
            stats.exits[want[0]] += 1
            if got != want:
                self._cache_failure(stats, "cache/mismatch", source, kind, variant, want, got)
            return want

        try:
            while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
                if rng.random() < 0.7:
                    text, kind = gen_module(rng, FUZZ_DRESSED, nfuncs=rng.choice([1, 2, 3])).text, "valid"
                else:
                    text, kind, _ = mutate_program(rng)
                if rng.random() < 0.5:
                    text = _aliased(text, rng)
                for variant, source in (("as generated", text), ("renamed", _cache_variant(text, rng))):
                    if check(source, kind, variant)[0] != "ok":
                        continue
                    erased, how = _erasure_variant(source, rng)
                    check(erased, kind, f"erasure {how}")
                    if rng.random() < 0.25:
                        self._cache_cli(stats, disk, source, erased, f"{kind}/erasure {how}")
        finally:
            shutil.rmtree(disk, ignore_errors=True)
        stats.notes["hits"], stats.notes["misses"] = cache.hits, cache.misses

    def _cache_cli(self, stats: Stats, disk: str, source: str, erased: str, what: str) -> None:
        """``fetchc in.mlir -o out.bin`` on ``erased`` with the disk cache
        ``disk`` (seeded by compiling ``source``) and with the cache off:
        the same exit status, stderr and output file."""
        cached_env = {"FETCHC_CACHE_DIR": disk, "FETCHC_NO_CACHE": "0"}
        argv = ["in.mlir", "-o", "out.bin"]
        seed = self.worker.run({"argv": argv, "files": {"in.mlir": source.encode()}, "env": cached_env,
                                "timeout": self.args.timeout})
        runs = []
        for env in (cached_env, {"FETCHC_CACHE_DIR": disk, "FETCHC_NO_CACHE": "1"}):
            res = self.worker.run({"argv": argv, "files": {"in.mlir": erased.encode()}, "env": env,
                                   "timeout": self.args.timeout})
            runs.append((res["rc"], res["stderr"], res["files"].get("out.bin"), res["escaped"]))
        stats.runs += 2
        stats.notes["cli checks"] += 1
        if seed["rc"] != 0 or runs[0] != runs[1]:
            want = f"seed rc {seed['rc']}; --no-cache: {runs[1][:2]}"
            self._cache_failure(stats, "cache/cli-mismatch", erased, what, "cli", want, str(runs[0][:2]))

    def _cache_failure(self, stats: Stats, key: str, source: str, kind: str, variant: str, want, got) -> None:
        stats.failures[key] += 1
        self.save(stats, "fail", "x.mlir", source.encode(), {"tool": "cache", "mutation": kind, "variant": variant,
                                                             "want": str(want)[:2000], "got": str(got)[:2000]})
        print(f"  FAIL [{key}] {kind}/{variant}", flush=True)

    # -- main --------------------------------------------------------------

    def run_target(self, target: str, seconds: float) -> Stats:
        stats = Stats(target)
        t0 = time.monotonic()
        deadline = t0 + seconds
        print(f"fuzzing {target} for {seconds:.0f}s (seed {self.args.seed})", flush=True)
        fn = getattr(self, "t_" + target.replace("-", "_"))
        while time.monotonic() < deadline and stats.inputs < self.args.max_inputs:
            try:
                fn(stats, deadline)
            except KeyboardInterrupt:
                print("  interrupted", flush=True)
                break
            except Exception:  # noqa: BLE001 - a harness bug must not end the run
                import traceback  # noqa: PLC0415

                stats.notes["harness-errors"] += 1
                print("  harness error (not a fetchc failure):\n" + traceback.format_exc(), flush=True)
                if stats.notes["harness-errors"] > 20:
                    break
        stats.notes["worker-restarts"] = self.worker.restarts
        if stats.mutations and self.args.verbose:
            print("  mutations: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.mutations.items())))
        if stats.notes:
            print("  notes: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.notes.items())), flush=True)
        if len({k.split(":")[0] for k in stats.tool_exits}) > 1:
            print("  by tool: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.tool_exits.items())), flush=True)
        print(stats.summary(time.monotonic() - t0), flush=True)
        return stats


def replay(args) -> int:
    """Run one file through the worker and print the verdict."""
    data = Path(args.replay).read_bytes()
    w = Worker(mem_mb=args.mem_mb)
    try:
        if args.tool == "compile":
            res = w.run({"argv": ["in.mlir", "-o", "out.bin", *args.extra], "files": {"in.mlir": data, "out.bin": SENTINEL},
                         "timeout": args.timeout})
            v = judge(res, tool="compile", out_name="out.bin", emit=next(
                (a.split("=", 1)[1] for a in args.extra if a.startswith("--emit=")), "bin"))
        elif args.tool == "dis":
            res = w.run({"argv": ["dis", *args.extra, "in.bin"], "files": {"in.bin": data}, "timeout": args.timeout})
            v = judge(res, tool="dis", mlir_input=False)
        else:
            res = w.run({"argv": ["sim", "in.bin", "--dm", "@DM", "-o", "out.npz", *args.extra],
                         "files": {"in.bin": data, "out.npz": SENTINEL}, "timeout": args.timeout})
            v = judge(res, tool="sim", out_name="out.npz", mlir_input=False)
    finally:
        w.stop()
    print(f"exit {res['rc']} in {res['elapsed']:.2f}s; verdict: {v.kind} {v.detail}")
    sys.stdout.write(res["stderr"])
    if res.get("escaped"):
        print(res["escaped"])
    return 0 if v.ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tools/fuzz.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", choices=TARGETS + ("all",), default="all",
                   help="what to fuzz (module docstring); 'all' runs each for --seconds")
    p.add_argument("--seconds", type=float, default=60.0, help="time budget per target (default 60)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--corpus-out", help="save failing and novel inputs under DIR/<target>/{fail,new}/")
    p.add_argument("--max-inputs", type=int, default=10**9, help="stop a target after this many inputs")
    p.add_argument("--max-saved", type=int, default=300, help="save at most this many inputs per target")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per run before it counts as a hang")
    p.add_argument("--mem-mb", type=int, default=2048, help="RLIMIT_AS of the worker in MiB (0: none)")
    p.add_argument("--slow", type=float, default=2.0, help="count runs slower than this (seconds) as 'slow'")
    p.add_argument("--verbose", "-v", action="store_true")
    p.add_argument("--list-mutations", action="store_true", help="list the mlir-mutate mutations and exit")
    p.add_argument("--replay", metavar="FILE", help="run FILE through the oracle once and print the verdict")
    p.add_argument("--tool", choices=("compile", "dis", "sim"), default="compile", help="with --replay")
    p.add_argument("--extra", action="append", default=[], help="with --replay: extra fetchc argument (repeatable)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker-dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker_main(args.mem_mb, args.worker_dir)
        return 0
    if args.list_mutations:
        for name, fn in sorted(MUTATIONS.items()):
            print(f"{name:26} {(fn.__doc__ or '').strip()}")
        return 0
    if args.replay:
        return replay(args)
    sys.path.insert(0, str(REPO))
    fz = Fuzzer(args)
    targets = TARGETS if args.target == "all" else (args.target,)
    results = []
    try:
        for t in targets:
            results.append(fz.run_target(t, args.seconds))
    finally:
        fz.worker.stop()
    if len(results) > 1:
        for s in results:
            print(s.summary(args.seconds))
    return 1 if any(s.failures for s in results) else 0


if __name__ == "__main__":
    sys.exit(main())
