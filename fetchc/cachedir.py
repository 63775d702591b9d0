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
* **Below the cache directory, only the cache's own directories.**
  :func:`read_entry_at` and :func:`write_entry_at` reach an entry in a
  subdirectory (``kernels/ab/``) one directory at a time, relative to a
  descriptor of the one above (``dir_fd``), opening each with
  ``O_NOFOLLOW``: a subdirectory is used only if it is a real directory
  (never a symbolic link) owned by the effective user with mode exactly
  ``0700``, as the cache creates them.  A user's own ``inputs/`` folder
  (``0755``) or a link planted in a shared cache directory is never read,
  written or followed.
* **Pruning deletes only the cache's own entries** (:func:`prune`): in
  such directories, files named like an entry, regular (``lstat``), owned
  by the user, mode ``0600`` (the mode entries are written with), with one
  link, starting with the cache's magic; the oldest first.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
import time
from collections.abc import Sequence

__all__ = [
    "MAX_ENTRY_BYTES",
    "cache_dir",
    "prune",
    "read_entry",
    "read_entry_at",
    "write_entry",
    "write_entry_at",
    "xdg_dir",
]

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
    return _read_open(fd, magic)


def _read_open(fd: int, magic: bytes) -> bytes | None:
    """:func:`read_entry` of the open file ``fd`` (closed here)."""
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


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_PRIVATE_DIR = 0o700
_ENTRY_MODE = 0o600
_STALE_TEMPORARY = 3600.0
"""Seconds after which :func:`prune` removes a temporary file a killed
writer left behind."""


def _supported() -> bool:
    """Whether this platform reaches files relative to directory
    descriptors without following links (Linux, the BSDs, macOS)."""
    return bool(_NOFOLLOW and _DIRECTORY) and {os.open, os.mkdir, os.stat, os.unlink, os.rename} <= os.supports_dir_fd


def _own_dir(fd: int) -> bool:
    info = os.fstat(fd)
    geteuid = getattr(os, "geteuid", None)
    return (
        stat.S_ISDIR(info.st_mode)
        and (geteuid is None or info.st_uid == geteuid())
        and stat.S_IMODE(info.st_mode) == _PRIVATE_DIR
    )


def _open_subdir(parent: int, name: str, create: bool) -> int | None:
    """A descriptor of the directory ``name`` in ``parent``, if it is the
    cache's own (a real directory, not a link, the user's, mode ``0700``);
    created so when missing and ``create``.  None otherwise.  Raises
    nothing."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        try:
            fd = os.open(name, flags, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(name, _PRIVATE_DIR, dir_fd=parent)
                fd = os.open(name, flags, dir_fd=parent)
                os.fchmod(fd, _PRIVATE_DIR)  # whatever the umask took away
            except FileExistsError:  # made meanwhile by another fetchc
                fd = os.open(name, flags, dir_fd=parent)
    except (OSError, ValueError):
        return None  # a link (ELOOP), not a directory, not ours to read
    try:
        if _own_dir(fd):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _open_dirs(root: str, subdirs: Sequence[str], create: bool) -> int | None:
    """A descriptor of ``root/subdirs...``: ``root`` as the user named it
    (created ``0700`` with its missing parents when ``create``), then each
    of ``subdirs`` through :func:`_open_subdir`.  None when one is missing
    (and not ``create``) or not the cache's own, or on any error."""
    if not _supported():
        return None
    try:
        if create:
            _make_dirs(root)
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except (OSError, ValueError):
        return None
    for name in subdirs:
        sub = _open_subdir(fd, name, create)
        os.close(fd)
        if sub is None:
            return None
        fd = sub
    return fd


def read_entry_at(root: str, subdirs: Sequence[str], name: str, magic: bytes) -> bytes | None:
    """:func:`read_entry` of the file ``name`` in ``root/subdirs...``, each
    subdirectory the cache's own (module docstring), the file itself opened
    with ``O_NOFOLLOW``.  Raises nothing."""
    fd = _open_dirs(root, subdirs, create=False)
    if fd is None:
        return None
    try:
        entry = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC, dir_fd=fd)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return _read_open(entry, magic)


def write_entry_at(root: str, subdirs: Sequence[str], name: str, magic: bytes, payload: bytes) -> bool:
    """:func:`write_entry` of the file ``name`` in ``root/subdirs...``,
    creating what is missing (each subdirectory ``0700``); written only
    where every subdirectory is the cache's own (module docstring), with
    mode exactly ``0600``.  Returns whether it was written; raises nothing,
    and leaves no temporary file behind."""
    if len(payload) > MAX_ENTRY_BYTES:
        return False
    fd = _open_dirs(root, subdirs, create=True)
    if fd is None:
        return False
    tmp = None
    try:
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, _ENTRY_MODE, dir_fd=fd)
        with open(out, "wb") as f:
            os.fchmod(f.fileno(), _ENTRY_MODE)  # exactly the mode prune() recognises, whatever the umask
            f.write(magic + _HEADER.pack(_DIGEST(payload).digest(), len(payload)) + payload)
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)  # replaces an existing entry (POSIX rename)
        return True
    except (OSError, ValueError, MemoryError):
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
        return False
    finally:
        os.close(fd)


_SHARD = re.compile(r"[0-9a-f]{2}")
_TEMPORARY = re.compile(r"\.(.+)\.\d+\.[0-9a-f]{8}\.tmp")
"""The name :func:`write_entry_at` gives the temporary file of entry ``\\1``."""


def prune(root: str, kind: str, entry_name: re.Pattern[str], magic_prefix: bytes, limit: int) -> None:
    """Delete the oldest entries under ``root/kind`` until their sizes add
    up to at most ``limit`` bytes.  Only files the cache wrote are counted
    or deleted: in the cache's own directories ``root/kind/XX`` (``XX`` two
    hex digits; module docstring), a file whose name matches ``entry_name``
    (or is a temporary file of one, older than an hour), that ``lstat``
    shows is a regular file owned by the user with mode ``0600`` and one
    link, and that starts with ``magic_prefix``.  Nothing is followed:
    every name is resolved relative to a descriptor of its directory.
    Raises nothing."""
    top = _open_dirs(root, (kind,), create=False)
    if top is None:
        return
    shards: list[int] = []
    found: list[tuple[float, int, int, str]] = []
    try:
        for shard in sorted(os.listdir(top)):
            if not _SHARD.fullmatch(shard):
                continue
            fd = _open_subdir(top, shard, create=False)
            if fd is None:
                continue
            shards.append(fd)
            for name in os.listdir(fd):
                info = _owned_entry(fd, name, entry_name, magic_prefix)
                if info is not None:
                    found.append((info.st_mtime, info.st_size, fd, name))
        total = sum(size for _, size, _, _ in found)
        for _, size, fd, name in sorted(found):
            if total <= limit:
                break
            try:
                os.unlink(name, dir_fd=fd)
                total -= size
            except OSError:
                pass
    except OSError:
        pass
    finally:
        for fd in shards:
            os.close(fd)
        os.close(top)


def _owned_entry(fd: int, name: str, entry_name: re.Pattern[str], magic_prefix: bytes) -> os.stat_result | None:
    """The ``lstat`` of ``name`` in the directory ``fd`` when it is an entry
    the cache wrote (:func:`prune`), else None."""
    temp = _TEMPORARY.fullmatch(name)
    temporary = temp is not None
    if not entry_name.fullmatch(temp.group(1) if temp is not None else name):
        return None
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None
    geteuid = getattr(os, "geteuid", None)
    if not (
        stat.S_ISREG(info.st_mode)
        and (geteuid is None or info.st_uid == geteuid())
        and stat.S_IMODE(info.st_mode) == _ENTRY_MODE
        and info.st_nlink == 1
    ):
        return None
    if temporary and time.time() - info.st_mtime < _STALE_TEMPORARY:
        return None  # being written
    try:
        entry = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    try:
        head = os.read(entry, len(magic_prefix))
        again = os.fstat(entry)
    except OSError:
        return None
    finally:
        os.close(entry)
    if head != magic_prefix or (again.st_dev, again.st_ino) != (info.st_dev, info.st_ino):
        return None
    return info
