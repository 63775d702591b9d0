"""Printing diagnostics exactly like ``mlir-opt``: location, severity,
message, the quoted source line and a caret, then the notes.

A :class:`SourceManager` holds the text of the inputs; a file that a
location names but that was not registered is read from disk when shown
(see :class:`SourceManager`), as ``mlir-opt`` does.  Spec: ir.md §5.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

from fetchc.diagnostics import Diagnostic, PathCache, flatten, header
from fetchc.escape import printable
from fetchc.frontend.locations import LINE_BREAK_RE, location_notes

__all__ = [
    "MAX_QUOTED_FILE_BYTES",
    "MAX_QUOTED_TOTAL_BYTES",
    "QUOTED_SUFFIXES",
    "SourceManager",
    "render",
    "render_all",
]

MAX_QUOTED_FILE_BYTES = 1 << 20
"""Largest file that :class:`SourceManager` reads from disk to quote a line
of it (ir.md §5: at most 1 MiB per file)."""
MAX_QUOTED_TOTAL_BYTES = 16 << 20
"""Most bytes one :class:`SourceManager` (one invocation) reads from disk
for quoting, all files together (ir.md §5: at most 16 MiB)."""
QUOTED_SUFFIXES = (".mlir", ".py", ".td", ".c", ".cc", ".cpp", ".h", ".hpp")
"""The file names a location may make fetchc read to quote a line: source
files (ir.md §5)."""
_SYSTEM_TREES = ("/proc", "/sys", "/dev")
"""Never read for quoting, whatever a location names (the process
environment, kernel state, devices)."""

_STDIN_NAMES = ("-", "<stdin>")


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _system_devices() -> set[int]:
    devices = set()
    for tree in _SYSTEM_TREES:
        try:
            devices.add(os.stat(tree).st_dev)
        except OSError:
            pass
    return devices


class SourceManager:
    """Holds the full text of every input file, keyed by the filename used in
    locations, so that :func:`render` can print source lines.

    With ``--split-input-file`` register the whole file once (locations use
    the original file's lines).  ``"-"`` and ``"<stdin>"`` are the same file.

    A file that locations name but that was not registered (an input that
    went through ``mlir-opt --mlir-print-debuginfo`` names the original
    file; a Python compiler names its own ``.py`` files) is read from disk
    the first time a line of it is needed, as ``mlir-opt`` does, but only
    when it is (ir.md §5; anything else is shown without a quoted line):

    * a registered input under another spelling (the same device and inode:
      ``./k.mlir`` for ``k.mlir``), whatever its name; or
    * a regular file whose real path (symlinks resolved) ends in one of
      :data:`QUOTED_SUFFIXES`, is not under ``/proc``, ``/sys`` or ``/dev``
      (nor on their file systems), and holds at most
      :data:`MAX_QUOTED_FILE_BYTES`, while this manager has read less than
      :data:`MAX_QUOTED_TOTAL_BYTES` in all.

    A file is read once however many spellings name it (keyed by device and
    inode).  Bytes that are not UTF-8 show as U+FFFD.  ``load_files=False``
    turns reading off.  :attr:`bytes_read` counts the bytes read from disk.
    """

    def __init__(self, sources: Mapping[str, str] | None = None, load_files: bool = True):
        self._texts: dict[object, str] = {}  # key: a registered name, or a file identity (dev, ino)
        self._keys: dict[str, object] = {}  # a name locations use -> its key in _texts
        self._lines: dict[object, list[str]] = {}
        self._inputs: dict[tuple[int, int], str] = {}  # identity of a registered file -> its name
        self._unreadable: set[str] = set()
        self.load_files = load_files
        self.bytes_read = 0
        """Bytes read from disk so far (at most :data:`MAX_QUOTED_TOTAL_BYTES`)."""
        for name, text in (sources or {}).items():
            self.add(name, text)

    def add(self, filename: str, text: str) -> None:
        """Register (or replace) the text of ``filename``, an input.  Returns
        None."""
        self._texts[filename] = text
        self._keys[filename] = filename
        self._lines.pop(filename, None)
        if self.load_files and filename not in _STDIN_NAMES and filename and "\0" not in filename:
            try:
                st = os.stat(filename)
            except (OSError, ValueError):
                return
            if stat.S_ISREG(st.st_mode):
                self._inputs[_identity(st)] = filename

    def _load(self, filename: str) -> object | None:
        """The key of ``filename``'s text, read from disk when the rules of
        the class docstring allow it; ``None`` otherwise.  Nothing is opened
        before the rules are checked (opening a device can act on it)."""
        if not self.load_files or filename in self._unreadable or not filename or "\0" in filename:
            return None
        key = self._read_allowed(filename)
        if key is None:
            self._unreadable.add(filename)
        else:
            self._keys[filename] = key
        return key

    def _read_allowed(self, filename: str) -> object | None:
        try:
            real = os.path.realpath(filename)
            info = os.stat(real)
        except (OSError, ValueError):
            return None
        ident = _identity(info)
        if ident in self._inputs:
            return self._inputs[ident]
        if ident in self._texts:
            return ident  # read already, under another spelling
        if (
            not stat.S_ISREG(info.st_mode)
            or not real.endswith(QUOTED_SUFFIXES)
            or any(real == t or real.startswith(t + "/") for t in _SYSTEM_TREES)
            or info.st_dev in _system_devices()
        ):
            return None
        allowed = min(MAX_QUOTED_FILE_BYTES, MAX_QUOTED_TOTAL_BYTES - self.bytes_read)
        if info.st_size > allowed:
            return None
        try:
            # O_NONBLOCK: a file swapped for a FIFO must not block; O_NOFOLLOW: nor for a symlink.
            flags = (
                os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NOFOLLOW", 0)
            )
            with open(os.open(real, flags), "rb") as f:
                if _identity(os.fstat(f.fileno())) != ident:
                    return None  # replaced since it was checked
                data = f.read(allowed + 1)
        except (OSError, ValueError):
            return None
        self.bytes_read += len(data)
        if len(data) > allowed:  # it grew since it was checked
            return None
        self._texts[ident] = data.decode("utf-8", errors="replace")
        return ident

    def _key(self, filename: str) -> object | None:
        if filename in self._keys:
            return self._keys[filename]
        if filename in _STDIN_NAMES:
            return next((a for a in _STDIN_NAMES if a in self._texts), None)
        return None

    def text(self, filename: str) -> str | None:
        """Return the registered text of ``filename``, or ``None``."""
        key = self._key(filename)
        return None if key is None else self._texts[key]

    def line(self, filename: str, line: int) -> str | None:
        """Return line ``line`` (1-based, without its line terminator) of
        ``filename``, or ``None`` if the file or the line is unknown.  Lines
        end at ``\\n``, ``\\r\\n`` or a lone ``\\r``."""
        key = self._key(filename)
        if key is None:
            if filename in _STDIN_NAMES:
                return None
            key = self._load(filename)
            if key is None:
                return None
        lines = self._lines.get(key)
        if lines is None:
            lines = LINE_BREAK_RE.split(self._texts[key])
            self._lines[key] = lines
        if 1 <= line <= len(lines):
            return lines[line - 1]
        return None


QUOTE_LINE_CHARS = 4096
"""A source line longer than this (characters) is quoted as a window of
:data:`QUOTE_WINDOW` characters each side of the column, cut ends marked
``...``: a file of many errors on one long line would otherwise print the
whole line for each (output quadratic in the input)."""
QUOTE_WINDOW = 80


def _source_snippet(diag: Diagnostic, sources: SourceManager) -> list[str]:
    """The source line (a window of it when longer than
    :data:`QUOTE_LINE_CHARS`) and the caret line, tabs expanded like LLVM does;
    every character a terminal would act on (an escape sequence, a bidi
    override, NUL...) escaped by :func:`fetchc.escape.printable`, with the
    caret under the escaped column."""
    if diag.loc is None:
        return []
    filename, line, col = diag.loc
    if line <= 0 or col <= 0:
        return []
    raw = sources.line(filename, line)
    if raw is None:
        return []
    lead, tail = "", ""
    if len(raw) > QUOTE_LINE_CHARS:  # a window around the column, so output stays linear in the input
        at = min(col - 1, len(raw))
        lo, hi = max(0, at - QUOTE_WINDOW), min(len(raw), at + QUOTE_WINDOW)
        lead, tail = ("..." if lo else ""), ("..." if hi < len(raw) else "")
        col -= lo
        raw = raw[lo:hi]
    text = lead + printable(raw, tabs=True).expandtabs(8) + tail
    caret = " " * (len(lead) + len(printable(raw[: col - 1], tabs=True).expandtabs(8)))
    if len(raw) < col - 1:  # column past the end of the line
        caret += " " * (col - 1 - len(raw))
    return [text, caret + "^"]


def _as_source_manager(
    sources: SourceManager | Mapping[str, str] | None,
) -> SourceManager:
    if isinstance(sources, SourceManager):
        return sources
    return SourceManager(sources)


def render(
    diag: Diagnostic,
    sources: SourceManager | Mapping[str, str] | None = None,
    _paths: PathCache | None = None,
) -> str:
    """Return ``diag`` and its notes formatted exactly like ``mlir-opt``::

        in.mlir:12:8: error: 'fetch.cast' op message
          %f = fetch.cast %d : ...
               ^
        in.mlir:10:8: note: message
          %d = ...
               ^

    Each line ends with ``\\n``.  The source line (tabs expanded to 8 columns)
    and caret are shown when ``sources`` knows the file and line (or can
    read the file, see :class:`SourceManager`); a note at the same location
    as the diagnostic (or note) before it omits them, as in MLIR.  The
    context notes of ``diag.location`` (:func:`location_notes`: ``called
    from``, ``fused with this location``) follow the diagnostic, before its
    own notes.  Unlocated: ``error: msg``, or ``<op path>: error: msg`` for a
    diagnostic about an op (:func:`op_path`); a location with line 0:
    ``file: error: msg``; filename ``-`` prints as ``<stdin>``.  ``sources``
    may be a :class:`SourceManager` or a ``{filename: text}`` mapping.
    Raises nothing.
    """
    manager = _as_source_manager(sources)
    paths = _paths or PathCache()
    out: list[str] = [header(diag, paths)]
    out += _source_snippet(diag, manager)
    previous = diag.loc
    for note in [*location_notes(diag.location), *flatten(diag.notes)]:
        out.append(header(note, paths))
        if note.loc != previous:
            out += _source_snippet(note, manager)
        previous = note.loc
    return "".join(line + "\n" for line in out)


def render_all(
    diagnostics: Iterable[Diagnostic],
    sources: SourceManager | Mapping[str, str] | None = None,
) -> str:
    """Return the concatenated :func:`render` of every diagnostic."""
    manager = _as_source_manager(sources)
    paths = PathCache()
    return "".join(render(d, manager, paths) for d in diagnostics)
