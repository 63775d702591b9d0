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

import errno
import os
import re
import select
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, Union

__all__ = [
    "Data",
    "STALE_AFTER_SECONDS",
    "output_target",
    "remove_stale_temporaries",
    "temporary_name_pattern",
    "write_atomically",
    "write_npy",
    "write_npz",
    "write_output",
]

Data = Union[bytes, Callable[[BinaryIO], None]]
"""What :func:`write_output` writes: ``bytes``, or a callback that writes to
the binary file object it is given (only ``write`` and ``flush`` may be
relied on; it may not be seekable)."""

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


class _StreamWriter:
    """A write-only, non-seekable binary file object over a descriptor or a
    file object.  Deliberately not an ``io`` class: numpy then writes arrays
    in chunks instead of ``ndarray.tofile`` (which needs a seekable file), and
    ``zipfile`` writes data descriptors instead of seeking back."""

    def __init__(self, fd: int | None = None, fileobj: BinaryIO | None = None):
        self._fd, self._file = fd, fileobj

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        if self._fd is not None:
            _write_all_fd(self._fd, view)
        else:
            assert self._file is not None
            self._file.write(view)
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
        data(writer)  # type: ignore[arg-type]
    else:
        writer.write(data)
    writer.flush()


def _flush_std() -> None:
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError, AttributeError):
            pass


def _write_fd(fd: int, data: bytes | Callable[[BinaryIO], None]) -> None:
    os.fstat(fd)  # EBADF before anything else for a descriptor that is not open
    _flush_std()  # what Python buffered for stdout/stderr goes first
    _to_stream(_StreamWriter(fd=fd), data)


def _write_special(path: str, data: bytes | Callable[[BinaryIO], None]) -> None:
    flags = os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        _to_stream(_StreamWriter(fd=fd), data)
    finally:
        os.close(fd)


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


def write_atomically(path: str, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``data`` (bytes, or a callback that writes to a binary file
    object) to the regular file ``path`` through a temporary file
    ``.fetchc-<pid>-<random>.tmp`` in its directory and ``os.replace`` (see
    the module docstring).  A path that is not a regular file is handed to
    :func:`write_output`'s in-place writing instead.  Raises ``OSError``
    (``e.filename`` is ``path``)."""
    kind, fd = output_target(path)
    if kind != "file":
        write_output(path, data)
        return
    real = os.path.realpath(path)
    directory = os.path.dirname(real) or "."
    try:
        mode = os.stat(real).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    remove_stale_temporaries(directory)
    try:
        tfd, tmp = tempfile.mkstemp(prefix=f".fetchc-{os.getpid()}-", suffix=".tmp", dir=directory)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None
    try:
        with os.fdopen(tfd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and e.filename in (None, tmp):
            raise OSError(e.errno, e.strerror, path) from None
        raise


def write_output(path: str, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``data`` (bytes, or a callback writing to a binary file object)
    to ``-o path``: stdout for ``-``, the descriptor itself for
    ``/dev/stdout``-like paths, in place for special files, atomically for
    regular files (module docstring).  Raises ``OSError``; ``e.filename`` is
    ``path`` where the error is about it."""
    kind, fd = output_target(path)
    try:
        if kind == "stdout":
            _flush_std()
            out = getattr(sys.stdout, "buffer", None)
            if out is None:
                raise OSError(errno.EBADF, "stdout is not a binary stream")
            _to_stream(_StreamWriter(fileobj=out), data)
        elif kind == "fd":
            assert fd is not None
            _write_fd(fd, data)
        elif kind == "special":
            _write_special(path, data)
        else:
            write_atomically(path, data)
    except OSError as e:
        if e.filename is None:
            raise OSError(e.errno, e.strerror, path) from None
        raise


# --------------------------------------------------------------------------
# numpy outputs (imported lazily: the compile path never needs numpy)
# --------------------------------------------------------------------------


def write_npy(f: BinaryIO, array: Any) -> None:
    """Write ``array`` as ``.npy`` data (``numpy.lib.format``, no pickles)
    to ``f``, a real file or any object with ``write``.  Raises ``ValueError``
    for an object array."""
    import numpy as np
    from numpy.lib import format as npformat

    npformat.write_array(f, np.asanyarray(array), allow_pickle=False)


def npz_member_names(names: list[str]) -> dict[str, str]:
    """``{name: zip member}`` as ``numpy.savez`` names them (``NAME.npy``), so
    that ``numpy.load(f)[name]`` returns the array.  Raises ``ValueError``
    when two names cannot both be keys: ``np.load`` would give one's array
    for the other (``x`` and ``x.npy``), or the zip format cannot hold the
    name (a NUL character)."""
    members: dict[str, str] = {}
    given = set(names)
    for n in names:
        if "\0" in n:
            raise ValueError(f"the name {n!r} contains a NUL character, which a .npz member name cannot hold")
        if n.endswith(".npy") and n[:-4] in given:
            raise ValueError(
                f"the names {n[:-4]!r} and {n!r} cannot both be keys of one .npz: numpy.load would return "
                f"the array of {n[:-4]!r} for {n!r}"
            )
        members[n] = n + ".npy"
    return members


def write_npz(f: BinaryIO, arrays: Mapping[str, Any]) -> None:
    """Write ``arrays`` (``{name: array}``, insertion order) as an
    uncompressed ``.npz`` to ``f`` (seekable or not), as ``numpy.savez``
    would, but taking the names as data: any string is a key (``file``,
    ``allow_pickle``, ``a/b``...), never a keyword argument.  Member
    timestamps are fixed (1980-01-01) so the bytes are deterministic.
    Raises ``ValueError`` (see :func:`npz_member_names`, object arrays)."""
    import zipfile

    import numpy as np
    from numpy.lib import format as npformat

    members = npz_member_names(list(arrays))
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(members[name], date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            with zf.open(info, mode="w", force_zip64=True) as member:
                npformat.write_array(member, np.asanyarray(arr), allow_pickle=False)
