"""Printing diagnostics exactly like ``mlir-opt``: location, severity,
message, the quoted source line and a caret, then the notes.

A :class:`SourceManager` holds the text of the inputs; a file that a
location names but that was not registered is read from disk when shown
(see :class:`SourceManager`), as ``mlir-opt`` does.  Spec: ir.md §5.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping

from fetchc.diagnostics import Diagnostic, PathCache, display_name, flatten, header
from fetchc.frontend.locations import LINE_BREAK_RE, location_notes

__all__ = ["MAX_SOURCE_BYTES", "SourceManager", "render", "render_all"]

MAX_SOURCE_BYTES = 64 << 20
"""Largest file that :class:`SourceManager` reads from disk to show a line."""

_STDIN_NAMES = ("-", "<stdin>")


class SourceManager:
    """Holds the full text of every input file, keyed by the filename used in
    locations, so that :func:`render` can print source lines.

    With ``--split-input-file`` register the whole file once (locations use
    the original file's lines).  ``"-"`` and ``"<stdin>"`` are the same file.
    A file that locations name but that was not registered (an input that
    went through ``mlir-opt --mlir-print-debuginfo`` names the original
    file; a Python compiler names its own ``.py`` files) is read from disk
    the first time a line of it is needed, as ``mlir-opt`` does, if it is a
    regular file of at most :data:`MAX_SOURCE_BYTES` bytes (``load_files=False``
    turns this off); bytes that are not UTF-8 show as U+FFFD.
    """

    def __init__(self, sources: Mapping[str, str] | None = None, load_files: bool = True):
        self._texts: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}
        self._unreadable: set[str] = set()
        self.load_files = load_files
        for name, text in (sources or {}).items():
            self.add(name, text)

    def add(self, filename: str, text: str) -> None:
        """Register (or replace) the text of ``filename``.  Returns None."""
        self._texts[filename] = text
        self._lines.pop(filename, None)

    def _load(self, filename: str) -> bool:
        """Read ``filename`` from disk into the manager; ``False`` if it is
        not a readable regular file of at most MAX_SOURCE_BYTES."""
        if not self.load_files or filename in self._unreadable or not filename or "\0" in filename:
            return False
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer.
            fd = os.open(filename, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with open(fd, "rb") as f:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
                    raise OSError("not a small regular file")
                data = f.read(MAX_SOURCE_BYTES + 1)
        except (OSError, ValueError):
            self._unreadable.add(filename)
            return False
        if len(data) > MAX_SOURCE_BYTES:
            self._unreadable.add(filename)
            return False
        self.add(filename, data.decode("utf-8", errors="replace"))
        return True

    def _key(self, filename: str) -> str | None:
        if filename in self._texts:
            return filename
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
            if filename in _STDIN_NAMES or not self._load(filename):
                return None
            key = filename
        lines = self._lines.get(key)
        if lines is None:
            lines = LINE_BREAK_RE.split(self._texts[key])
            self._lines[key] = lines
        if 1 <= line <= len(lines):
            return lines[line - 1]
        return None


def _source_snippet(diag: Diagnostic, sources: SourceManager) -> list[str]:
    """The source line and the caret line, tabs expanded like LLVM does."""
    if diag.loc is None:
        return []
    filename, line, col = diag.loc
    if line <= 0 or col <= 0:
        return []
    text = sources.line(filename, line)
    if text is None:
        return []
    text = _printable(text)
    caret = " " * len(text[: col - 1].expandtabs(8))
    if len(text) < col - 1:  # column past the end of the line
        caret += " " * (col - 1 - len(text))
    return [text.expandtabs(8), caret + "^"]


# Characters a terminal would act on rather than show: C0 controls but tab,
# DEL, C1 controls, and the bidirectional overrides and isolates.
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _printable(line: str) -> str:
    """``line`` with every character a terminal would act on (an escape
    sequence, a bidi override, NUL...) shown as U+FFFD, one column each, so
    a quoted source line can neither drive the terminal nor move the caret."""
    return _UNPRINTABLE.sub("\ufffd", line)


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
