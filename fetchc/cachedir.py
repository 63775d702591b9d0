"""fetchc's cache directory: safe, size-bounded, checksummed entry files.

Two caches of the ``fetchc`` command keep files here: the start-up code cache
(:mod:`fetchc.startup`) and the kernel compile cache (:mod:`fetchc.compile_cache`).
Both go through :func:`read_entry` and :func:`write_entry`, which treat the
directory as untrusted:

* **Where.** ``$FETCHC_CACHE_DIR``, else ``$XDG_CACHE_HOME/fetchc`` when
  that is an absolute path (a relative one is ignored, as the XDG
  specification says: :func:`xdg_dir`), else ``~/.cache/fetchc``; an empty
  ``FETCHC_CACHE_DIR`` disables every cache (:func:`cache_dir` returns
  ``None``), and so does the lack of an absolute home directory.  Every directory fetchc creates
  there (the cache directory itself, ``kernels/``, ``inputs/`` and their
  subdirectories) is created with mode ``0700``; one that exists keeps its
  mode (the checks below apply to every entry whatever its directory).
* **Whose.** An entry is read only if it is a regular file owned by the
  effective user and writable by nobody else (``fstat`` of the opened file,
  so the file checked is the file read): a file someone else placed or can
  change is ignored, never loaded.
* **Whole.** An entry is ``magic`` (which names the kind and its format
  version), the SHA-256 of the payload, the payload's length, then the
  payload.  A truncated, corrupt, foreign or over-long entry is ignored, as a
  miss: reading never raises.
* **Bounded.** At most :data:`MAX_ENTRY_BYTES` are read for one entry.
* **Atomic.** An entry is written to a private temporary file in the same
  directory (``O_EXCL``, mode ``0600``) and renamed into place; on any
  failure (a full disk, ``ulimit -v``) the temporary file is removed and
  nothing is left behind.  Writing never raises.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct

__all__ = ["MAX_ENTRY_BYTES", "cache_dir", "read_entry", "write_entry", "xdg_dir"]

MAX_ENTRY_BYTES = 64 << 20
"""The largest entry read or written (bytes of payload)."""

_DIGEST = hashlib.sha256
_HEADER = struct.Struct("<32sQ")  # sha256 of the payload, payload length


def xdg_dir(variable: str, default: str) -> str | None:
    """An XDG base directory (the XDG Base Directory specification): the
    environment variable ``variable`` (``XDG_CACHE_HOME``) when it is an
    absolute path, else ``default`` (``.cache``) in the home directory.  A
    relative value is invalid and ignored, as the specification says (it
    would put the directory wherever the user stands); ``None`` when there
    is no absolute home directory either.  The one place fetchc reads an
    XDG variable."""
    value = os.environ.get(variable, "")
    if os.path.isabs(value):
        return value
    home = os.path.expanduser("~")
    return os.path.join(home, default) if os.path.isabs(home) else None


def cache_dir() -> str | None:
    """The cache directory (not created): ``FETCHC_CACHE_DIR``, else
    ``fetchc`` in the XDG cache directory (:func:`xdg_dir`); ``None`` when
    caching is off (``FETCHC_CACHE_DIR`` set to the empty string, or no
    absolute cache directory)."""
    root = os.environ.get("FETCHC_CACHE_DIR")
    if root is None:
        base = xdg_dir("XDG_CACHE_HOME", ".cache")
        root = os.path.join(base, "fetchc") if base is not None else ""
    return root or None


def _trusted(info: os.stat_result) -> bool:
    geteuid = getattr(os, "geteuid", None)
    owner_ok = geteuid is None or info.st_uid == geteuid()
    return stat.S_ISREG(info.st_mode) and owner_ok and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_entry(path: str, magic: bytes) -> bytes | None:
    """The payload of the entry at ``path`` written with ``magic``, or
    ``None`` when there is none, or it is not the user's own, not writable
    by the user alone, truncated, corrupt, of another kind or too large.
    Raises nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        with open(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not _trusted(info) or info.st_size > len(magic) + _HEADER.size + MAX_ENTRY_BYTES:
                return None
            head = f.read(len(magic) + _HEADER.size)
            if len(head) != len(magic) + _HEADER.size or head[: len(magic)] != magic:
                return None
            digest, size = _HEADER.unpack(head[len(magic) :])
            if size > MAX_ENTRY_BYTES:
                return None
            payload = f.read(size + 1)
    except (OSError, ValueError, MemoryError):
        return None
    if len(payload) != size or _DIGEST(payload).digest() != digest:
        return None
    return payload


def _make_dirs(directory: str) -> None:
    """Create ``directory`` and every missing parent, each with mode
    ``0700`` (``os.makedirs`` gives the parents it creates the default mode,
    ``0755`` under the usual umask).  Directories that exist keep their mode.
    Raises ``OSError``."""
    missing = []
    while directory and not os.path.isdir(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass  # made meanwhile by another fetchc


def write_entry(path: str, magic: bytes, payload: bytes) -> bool:
    """Write ``payload`` as the entry at ``path`` (see the module
    docstring), creating the directory and its missing parents (each mode
    ``0700``).  Returns whether it
    was written; raises nothing, and leaves no temporary file behind."""
    if len(payload) > MAX_ENTRY_BYTES:
        return False
    directory = os.path.dirname(path) or "."
    tmp = None
    try:
        _make_dirs(directory)
        tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with open(fd, "wb") as f:
            f.write(magic + _HEADER.pack(_DIGEST(payload).digest(), len(payload)) + payload)
        os.replace(tmp, path)
        return True
    except (OSError, ValueError, MemoryError):
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
