"""Writing output files: never half-written, never clobbered on error.

:func:`write_output` is what every command uses for ``-o``.  Spec: ir.md §5
("on any error no output file is created or overwritten").
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["write_atomically", "write_output"]


def write_atomically(path: str, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``data`` (bytes, or a callback that writes to a binary file
    object) to ``path``.

    A regular file (or a new one) is written through a temporary file in the
    same directory and ``os.replace``: readers never see a partial file, a
    failure leaves any existing file untouched and no temporary file behind.
    A symlink is followed (the link stays); an existing file keeps its mode,
    a new one gets ``0666 & ~umask`` like ``open``.  A path that exists but is
    not a regular file (``/dev/null``, ``/dev/stdout``, a FIFO) is opened and
    written directly.  Raises ``OSError``."""
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "wb") as f:
            data(f) if callable(data) else f.write(data)
        return
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".fetchc-", suffix=".tmp", dir=os.path.dirname(real))
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_output(path: str, data: bytes) -> None:
    """Write to ``path`` atomically, or to stdout for ``-``."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        write_atomically(path, data)
