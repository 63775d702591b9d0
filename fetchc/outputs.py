"""Writing ``-o`` outputs: never half-written, never clobbered on error, and
streams written in place.

:func:`write_output` is what every command uses for ``-o`` (``fetchc``,
``fetchc dis``, ``fetchc sim``; ``fetchc run`` too).  Spec: ir.md §5 ("on any
error no output file is created or overwritten").

Where the bytes go depends on what ``path`` names (:func:`output_target`):

* ``-``: the process's stdout (``sys.stdout.buffer``).
* One of this process's open file descriptors: ``/dev/stdout``,
  ``/dev/stderr``, ``/dev/stdin``, ``/dev/fd/N``, ``/proc/self/fd/N``,
  ``/proc/thread-self/fd/N``, ``/proc/<own pid>/fd/N``, or a symlink to one of
  these.  The bytes are written to descriptor ``N`` itself, at its current
  offset, as a shell's ``>/dev/stdout`` does: ``fetchc k.mlir --emit=mlir -o
  /dev/stdout >> log.txt`` appends to ``log.txt``, ``| cat`` gets the bytes
  through the pipe.  Nothing is reopened, truncated or renamed.
* Anything else that is not a regular file (a FIFO, a character device such
  as ``/dev/null``, a socket), or a path under ``/proc/`` (or a symlink chain
  through it, e.g. ``/proc/1234/fd/1`` of another process):
  opened for writing in place (``O_WRONLY | O_TRUNC``, as a shell's ``>``
  does; never created, never renamed over).
* A regular file, or a path that does not exist yet: written atomically, to a
  temporary file ``.fetchc-<pid>-<random>.tmp`` in the same directory that
  then replaces the target with ``os.replace``.  Readers never see a partial
  file; a failure leaves an existing file untouched (bytes, mode, mtime) and
  no temporary file behind.  A symlink is followed (the link stays); an
  existing file keeps its mode, a new one gets ``0666 & ~umask``.

Stale temporary files: a process killed while writing (``kill -9``, power
loss) cannot remove its temporary file.  Before each atomic write,
:func:`remove_stale_temporaries` deletes, in the target's directory only, the
files named ``.fetchc-<pid>-<8 characters>.tmp`` that are regular files (not
symlinks), owned by the current user, whose ``<pid>`` is not a running process
and that were last modified more than :data:`STALE_AFTER_SECONDS` ago.  A
running writer's file is never touched (its pid is alive, and it writes
within a fraction of a second of creating it).

Streams are written as the data is produced: a callback gets a write-only,
non-seekable file object (numpy writes ``.npy`` data through it in 16 MiB
chunks, ``zipfile`` writes ``.npz`` members with data descriptors), so a pipe
or FIFO works and no copy of the output is held in memory or on disk.  Every
command computes its whole result before writing starts, so the only errors
possible while a stream is written are write errors (a closed pipe, a full
disk), reported as ``OSError``; what was written before stays written, as for
any stream.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import select
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, cast

__all__ = [
    "STALE_AFTER_SECONDS",
    "Data",
    "Identity",
    "OutputRefused",
    "check_output",
    "input_identity",
    "output_target",
    "remove_live_temporaries",
    "remove_stale_temporaries",
    "signal_cleanup",
    "temporary_name_pattern",
    "write_atomically",
    "write_now",
    "write_output",
]

Data = bytes | Callable[[BinaryIO], None]
"""What :func:`write_output` writes: ``bytes``, or a callback that writes to
the binary file object it is given (only ``write`` and ``flush`` may be
relied on; it is not seekable)."""

Identity = tuple[int, int]
"""A file's ``(st_dev, st_ino)``: what makes two spellings the same file."""


class OutputRefused(OSError):
    """``-o`` names a file the command must not write: one of its own inputs
    (compared by device and inode, as compilers refuse ``-o`` equal to an
    input), or a terminal for binary output.  ``str(e)`` is the whole
    sentence; nothing was written."""

    def __str__(self) -> str:
        return str(self.strerror)


STALE_AFTER_SECONDS = 60.0
"""A temporary file of a dead process must be this old (seconds since its
last modification) before :func:`remove_stale_temporaries` deletes it."""

_TMP_RE = re.compile(r"\A\.fetchc-([1-9][0-9]{0,9})-[a-z0-9_]{8}\.tmp\Z")

_STD_NAMES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def temporary_name_pattern() -> re.Pattern[str]:
    """The names of fetchc's temporary files: ``.fetchc-<pid>-<8 random
    characters [a-z0-9_]>.tmp`` (the name only, no directory)."""
    return _TMP_RE


def _own_fd_re() -> re.Pattern[str]:
    return re.compile(rf"\A/(?:dev/fd|proc/(?:self|thread-self|{os.getpid()})/fd)/([0-9]+)\Z")


def output_target(path: str) -> tuple[str, int | None]:
    """What ``path`` names, for :func:`write_output`:

    * ``("stdout", None)`` for ``-``;
    * ``("fd", N)`` for a path naming this process's descriptor ``N``
      (``/dev/stdout`` → 1, ``/dev/fd/N``, ``/proc/self/fd/N``, a symlink to
      one of them...; see the module docstring);
    * ``("special", None)`` for an existing non-regular file, or a path
      reached through ``/proc/``: written in place;
    * ``("file", None)`` otherwise: written atomically.

    Never raises: an unreadable link counts as the path itself."""
    if path == "-":
        return ("stdout", None)
    own = _own_fd_re()
    p = os.path.normpath(os.path.abspath(path))
    special = False
    for _ in range(40):  # the kernel's symlink limit
        if p in _STD_NAMES:
            return ("fd", _STD_NAMES[p])
        m = own.match(p)
        if m:
            return ("fd", int(m.group(1)))
        if p.startswith("/proc/"):
            special = True  # /proc/<pid>/fd/N of another process, /proc/sys/...
        try:
            link = os.readlink(p)
        except OSError:
            break
        if link.startswith(("pipe:", "socket:", "anon_inode:")):
            special = True  # a /proc magic link to an object without a path
            break
        p = os.path.normpath(os.path.join(os.path.dirname(p), link))
    if special:
        return ("special", None)
    try:
        st = os.stat(path)
    except OSError:
        return ("file", None)  # does not exist (yet), or cannot be inspected: try the atomic path
    return ("file", None) if stat.S_ISREG(st.st_mode) else ("special", None)


# --------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------


def _write_all_fd(fd: int, data: bytes | memoryview) -> None:
    """``os.write`` until all of ``data`` is written (short writes, a
    non-blocking descriptor).  Raises ``OSError``."""
    view = memoryview(data).cast("B")
    while view:
        try:
            n = os.write(fd, view[: 1 << 24])
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        if n == 0:
            raise OSError(errno.EIO, "write returned 0 bytes")
        view = view[n:]


def _write_all_file(f: BinaryIO, view: memoryview) -> None:
    """``f.write`` until all of ``view`` is written: a buffered writer on a
    full disk (or past ``ulimit -f``) returns a short count instead of
    raising, and the next call raises.  Raises ``OSError``."""
    while view:
        n = f.write(view)
        if n is None:  # a non-blocking raw stream that would block
            select.select([], [f], [])
            continue
        if n <= 0:
            raise OSError(errno.EIO, "write returned 0 bytes")
        view = view[n:]


class _StreamWriter:
    """A write-only, non-seekable binary file object over a descriptor or a
    file object; every write is complete or raises ``OSError`` (a short
    write on a full disk is never taken for success).  Deliberately not an
    ``io`` class: numpy then writes arrays in chunks instead of
    ``ndarray.tofile`` (which needs a seekable file), and ``zipfile`` writes
    data descriptors instead of seeking back."""

    def __init__(self, fd: int | None = None, fileobj: BinaryIO | None = None):
        self._fd, self._file = fd, fileobj

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        if self._fd is not None:
            _write_all_fd(self._fd, view)
        else:
            assert self._file is not None
            _write_all_file(self._file, view)
        return len(view)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


def _to_stream(writer: _StreamWriter, data: bytes | Callable[[BinaryIO], None]) -> None:
    if callable(data):
        data(cast(BinaryIO, writer))  # _StreamWriter has the BinaryIO methods writers use
    else:
        writer.write(data)
    writer.flush()


def _flush_std() -> None:
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError, AttributeError):
            pass


def _stdout_fd() -> int | None:
    """The descriptor under ``sys.stdout``, or None when it has none (an
    in-memory stream of a test harness)."""
    try:
        return sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def write_now(stream, text: str) -> None:
    """Write ``text`` to the text stream ``stream`` (``sys.stdout``,
    ``sys.stderr``) completely and at once: what Python buffered for it
    first, then ``text`` through its descriptor (encoded as the stream
    encodes, unencodable characters backslash-escaped), so that a failure
    (a full disk, a closed pipe) is raised here and nothing is left in a
    buffer to fail again at exit.  A stream without a descriptor (a test
    harness's) is written and flushed.  Raises ``OSError``."""
    stream.flush()
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        stream.write(text)
        stream.flush()
        return
    _write_all_fd(fd, text.encode(getattr(stream, "encoding", None) or "utf-8", "backslashreplace"))


def _write_fd(fd: int, data: bytes | Callable[[BinaryIO], None], before: Callable[[], None] | None = None) -> None:
    os.fstat(fd)  # EBADF before anything else for a descriptor that is not open
    _flush_std()  # what Python buffered for stdout/stderr goes first
    if before is not None:
        before()
    _to_stream(_StreamWriter(fd=fd), data)


def _write_special(
    path: str, data: Data, inputs: Iterable[Identity], binary: str | None, hint: str, before: Callable[[], None] | None
) -> None:
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)  # truncated (as a shell's '>' does) only once it is known not to be an input
    try:
        _refuse_fd(fd, path, inputs, binary, hint)
        if before is not None:
            before()
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, 0)
        _to_stream(_StreamWriter(fd=fd), data)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------
# What -o must not be: an input, or a terminal for binary data
# --------------------------------------------------------------------------


def input_identity(path: str) -> Identity | None:
    """The :data:`Identity` of input ``path`` (``-``: standard input) when
    it is a regular file, else None (a pipe, a terminal, a missing file).
    Raises nothing."""
    try:
        st = os.fstat(sys.stdin.fileno()) if path == "-" else os.stat(path)
    except (OSError, ValueError, AttributeError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _refuse_stat(st: os.stat_result, path: str, inputs: Iterable[Identity]) -> None:
    if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) in set(inputs):
        where = "standard output: it is redirected to" if path == "-" else f"'{path}': it is"
        raise OutputRefused(
            errno.EINVAL,
            f"refusing to write to {where} an input file of this command, which the output would "
            "overwrite; write the output to another file",
        )


def _refuse_fd(fd: int, path: str, inputs: Iterable[Identity], binary: str | None, hint: str) -> None:
    _refuse_stat(os.fstat(fd), path, inputs)
    if binary is not None and os.isatty(fd):
        raise OutputRefused(errno.EINVAL, f"refusing to write {binary} to a terminal: use -o FILE{hint}")


def check_output(path: str, *, inputs: Iterable[Identity] = (), binary: str | None = None, hint: str = "") -> None:
    """Refuse ``-o path`` before any work (:func:`write_output` checks again
    when it writes): raise :class:`OutputRefused` when ``path`` is one of
    ``inputs`` (:func:`input_identity`; through any spelling, symlink,
    ``/dev/stdout`` or ``/proc/self/fd/N``), or, for ``binary`` data (a
    description such as ``"seq.bin"``), a terminal (``hint`` is appended to
    the message: ``", or --emit=mlir"``).  A path that does not exist yet or
    cannot be inspected passes; an empty ``path`` is refused.  Raises nothing else."""
    if path == "":
        raise OutputRefused(errno.ENOENT, "the output file name is empty: give -o FILE (or -o - for stdout)")
    inputs = list(inputs)
    kind, fd = output_target(path)
    if kind == "stdout":
        fd = _stdout_fd()
    if fd is not None:
        try:
            _refuse_fd(fd, path, inputs, binary, hint)
        except OutputRefused:
            raise
        except OSError:
            pass
        return
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    _refuse_stat(st, path, inputs)
    if binary is not None and stat.S_ISCHR(st.st_mode):
        try:  # a terminal named by path (/dev/tty, /dev/pts/N): isatty needs a descriptor
            tfd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return
        try:
            _refuse_fd(tfd, path, (), binary, hint)
        finally:
            os.close(tfd)


# --------------------------------------------------------------------------
# Signals: no temporary file left behind
# --------------------------------------------------------------------------

_LIVE: set[str] = set()
"""Temporary files this process is writing (absolute paths)."""
_LIVE_LOCK = threading.Lock()
_DYING = False
_COMMITTED = False
"""An atomic output has replaced its target (:func:`write_atomically`): from
then on the command has succeeded, and a signal no longer ends it."""
CLEANUP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
"""The signals after which no ``.fetchc-*.tmp`` file stays (``kill -9``
cannot be caught: :func:`remove_stale_temporaries` handles those)."""


def remove_live_temporaries() -> list[str]:
    """Delete the temporary files this process is writing and refuse new
    ones (the process is about to end: a signal).  Returns the paths removed.
    Never raises."""
    global _DYING
    _DYING = True
    locked = _LIVE_LOCK.acquire(timeout=2.0)  # a writer registering its file holds it for microseconds
    try:
        names = sorted(_LIVE)
        _LIVE.clear()
    finally:
        if locked:
            _LIVE_LOCK.release()
    removed = []
    for name in names:
        try:
            os.unlink(name)
            removed.append(name)
        except OSError:
            pass
    return removed


def _start_dying() -> bool:
    """Refuse new temporary files and renames from now on, unless an output
    was committed already (then return False): one decision, under the lock
    the commit takes, so that a signal either stops the rename or comes after
    it, never both."""
    global _DYING
    locked = _LIVE_LOCK.acquire(timeout=2.0)
    try:
        if _COMMITTED:
            return False
        _DYING = True
        return True
    finally:
        if locked:
            _LIVE_LOCK.release()


def _on_signal(signum: int, frame) -> None:
    if not _start_dying():
        return  # the output is in place: the command has succeeded and ends as it would have
    remove_live_temporaries()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt  # the command reports 'error: interrupted' and exits 1
    signal.signal(signum, signal.SIG_DFL)  # end as the signal ends a process: the parent sees it
    os.kill(os.getpid(), signum)


@contextlib.contextmanager
def signal_cleanup() -> Iterator[None]:
    """A context in which SIGINT, SIGTERM and SIGHUP first remove the
    temporary files being written (:func:`remove_live_temporaries`), then
    act as they would have: SIGINT raises ``KeyboardInterrupt``, SIGTERM and
    SIGHUP end the process by that signal.  Once an atomic output has replaced
    its target (:func:`write_atomically`) they are ignored: the command has
    succeeded, and ends with its own status (a signal between the rename and
    the exit reported ``error: interrupted`` for a written file).  A signal
    the process ignores
    (``nohup``, a background job's SIGINT) stays ignored; another handler is
    left alone.  Outside the main thread this does nothing.  The handlers
    are restored on exit."""
    global _DYING, _COMMITTED
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _DYING = _COMMITTED = False  # a new command (the tests run several in one process)
    saved = {}
    for sig in CLEANUP_SIGNALS:
        old = signal.getsignal(sig)
        if old in (signal.SIG_DFL, signal.default_int_handler):
            saved[sig] = old
            signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold :data:`CLEANUP_SIGNALS` back on this thread (between creating a
    temporary file and registering it)."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    old = mask(signal.SIG_BLOCK, CLEANUP_SIGNALS)
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)


def _new_temporary(directory: str, path: str) -> tuple[int, str]:
    """Create and register a temporary file in ``directory``.  Raises
    ``OSError`` (naming ``path``), also once a signal is ending the process."""
    with _signals_blocked(), _LIVE_LOCK:
        if _DYING:
            raise OSError(errno.EINTR, "interrupted", path)
        import tempfile  # here: the start-up of every command need not import it

        try:
            tfd, tmp = tempfile.mkstemp(prefix=f".fetchc-{os.getpid()}-", suffix=".tmp", dir=directory)
        except OSError as e:
            raise OSError(e.errno, e.strerror, path) from None
        _LIVE.add(tmp)
    return tfd, tmp


# --------------------------------------------------------------------------
# Regular files
# --------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or cannot tell: keep the file
    return True


def remove_stale_temporaries(directory: str, *, now: float | None = None) -> list[str]:
    """Delete the temporary files that killed fetchc processes left in
    ``directory`` (not below it): names matching
    :func:`temporary_name_pattern`, regular files (``lstat``: a symlink is
    never followed nor removed), owned by the current user, whose pid is not
    a running process, last modified more than :data:`STALE_AFTER_SECONDS`
    ago.  Returns the names removed.  Never raises (a file that cannot be
    inspected or removed is left)."""
    removed: list[str] = []
    now = time.time() if now is None else now
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        m = _TMP_RE.match(entry.name)
        if not m:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
                continue
            if now - st.st_mtime < STALE_AFTER_SECONDS or _pid_alive(int(m.group(1))):
                continue
            os.unlink(entry.path)
            removed.append(entry.name)
        except OSError:
            continue
    return removed


def _commit(tmp: str, real: str, path: str) -> None:
    """Rename the finished temporary file over the target, unless a signal
    is ending the process (``OSError`` ``EINTR``), and mark the output
    committed (:data:`_COMMITTED`): under the lock a signal handler takes to
    decide (:func:`_start_dying`), with the signals held back on this
    thread."""
    global _COMMITTED
    with _signals_blocked(), _LIVE_LOCK:
        if _DYING:
            raise OSError(errno.EINTR, "interrupted", path)
        os.replace(tmp, real)
        _LIVE.discard(tmp)
        _COMMITTED = True


def write_atomically(
    path: str, data: Data, *, inputs: Iterable[Identity] = (), before_commit: Callable[[], None] | None = None
) -> None:
    """Write ``data`` (bytes, or a callback that writes to a binary file
    object) to the regular file ``path`` through a temporary file
    ``.fetchc-<pid>-<random>.tmp`` in its directory and ``os.replace`` (see
    the module docstring).  ``before_commit`` is called once every byte is
    written, before the rename: whatever it raises leaves ``path`` as it
    was (``fetchc run`` prints its listing there).  After the rename, the
    signals of :func:`signal_cleanup` no longer end the command.  A path
    that is not a regular file is handed to :func:`write_output`'s in-place
    writing instead.  Raises ``OSError`` (``e.filename`` is ``path``),
    :class:`OutputRefused` when ``path`` is one of ``inputs``, and what
    ``before_commit`` raises."""
    inputs = list(inputs)
    kind, _ = output_target(path)
    if kind != "file":
        write_output(path, data, inputs=inputs, before_commit=before_commit)
        return
    real = os.path.realpath(path)
    directory = os.path.dirname(real) or "."
    try:
        st = os.stat(real)
        _refuse_stat(st, path, inputs)
        mode = st.st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    remove_stale_temporaries(directory)
    tfd, tmp = _new_temporary(directory, path)
    try:
        try:
            _to_stream(_StreamWriter(fd=tfd), data)
        finally:
            os.close(tfd)
        os.chmod(tmp, mode)
        if before_commit is not None:
            before_commit()
        _commit(tmp, real, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and not isinstance(e, OutputRefused) and e.filename in (None, tmp):
            raise OSError(e.errno, e.strerror, path) from None
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(tmp)


def write_output(
    path: str,
    data: Data,
    *,
    inputs: Iterable[Identity] = (),
    binary: str | None = None,
    hint: str = "",
    before_commit: Callable[[], None] | None = None,
) -> None:
    """Write ``data`` (bytes, or a callback writing to a binary file object)
    to ``-o path``: stdout for ``-``, the descriptor itself for
    ``/dev/stdout``-like paths, in place for special files, atomically for
    regular files (module docstring).  Every write is checked: a short
    write (a full disk, a file-size limit) is an error, never a cut file.

    Refused with :class:`OutputRefused` before anything is written (as
    :func:`check_output` does): ``path`` is one of ``inputs`` (their
    :func:`input_identity`; a regular file reached through any spelling or
    descriptor), or ``binary`` (a description of binary data, such as
    ``"seq.bin"``) would go to a terminal.  ``before_commit`` is called
    just before the output becomes visible: once every byte is written to
    the temporary file and before the rename for a regular file, before the
    first byte for a stream written in place; what it raises leaves the
    output as it was.  Raises ``OSError``; ``e.filename`` is ``path`` where the error
    is about it (``stdout is closed`` when there is no stdout, ``>&-``);
    what ``before_commit`` raises."""
    inputs = list(inputs)
    kind, fd = output_target(path)
    try:
        if kind == "stdout":
            _flush_std()
            fd = _stdout_fd()
            if fd is not None:
                _refuse_fd(fd, path, inputs, binary, hint)
                _write_fd(fd, data, before_commit)
            else:
                if sys.stdout is None:  # closed by the shell (>&-): Python has no stdout at all
                    raise OSError(errno.EBADF, "stdout is closed")
                out = getattr(sys.stdout, "buffer", None)
                if out is None:
                    raise OSError(errno.EBADF, "stdout is not a binary stream")
                if before_commit is not None:
                    before_commit()
                _to_stream(_StreamWriter(fileobj=out), data)
        elif kind == "fd":
            assert fd is not None
            _refuse_fd(fd, path, inputs, binary, hint)
            _write_fd(fd, data, before_commit)
        elif kind == "special":
            _write_special(path, data, inputs, binary, hint, before_commit)
        else:
            write_atomically(path, data, inputs=inputs, before_commit=before_commit)
    except OutputRefused:
        raise
    except OSError as e:
        if e.filename is None:
            raise OSError(e.errno, e.strerror, path) from None
        raise
