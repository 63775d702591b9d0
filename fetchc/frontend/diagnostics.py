"""MLIR-style diagnostics for fetchc.

Everything here is return-value based (no global handler, no global state):

* :class:`Diagnostic` is one ``error:`` / ``warning:`` / ``remark:`` / ``note:``
  message with an optional ``(filename, line, column)`` location and attached
  notes.  :class:`DiagnosticError` is the exception that carries diagnostics
  out of the parser (:mod:`fetchc.parsing`), passes and the CLI.
* :class:`OpError` is what op verifiers and passes raise: an error at the op
  being verified plus ``(op, message)`` notes.  :func:`op_error` turns an op
  and a message into a :class:`Diagnostic` (MLIR's ``'dialect.op' op ...``
  prefix).
* :func:`render` prints a diagnostic exactly like ``mlir-opt`` (location,
  severity, message, the source line, a caret), using a :class:`SourceManager`
  for the source text.
* Verification (:mod:`fetchc.frontend.verify`) and ``--verify-diagnostics``
  (:mod:`fetchc.frontend.verify_diagnostics`) build on these.

Locations are 1-based ``(filename, line, column)`` tuples; the column counts
characters (code points), not bytes, so the caret lines up on screen.  A line
``<= 0`` means "only the file is known" and renders as ``file: error: ...``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    NameLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

__all__ = [
    "SEVERITIES",
    "Diagnostic",
    "DiagnosticError",
    "Loc",
    "OpError",
    "SourceManager",
    "LineIndex",
    "flatten",
    "location_of",
    "op_error",
    "op_location",
    "render",
    "render_all",
    "exception_text",
    "display_name",
]

Loc = tuple[str, int, int]
"""``(filename, line, column)``, 1-based."""

SEVERITIES = ("error", "warning", "remark", "note")


class OpError(VerifyException):
    """A verifier error at the op being verified, with optional notes.

    ``notes`` is a list of ``(op, message)``: each becomes a ``note:`` at that
    op's location, in order, after the error.  Raised from ``verify_`` of the
    fetch/rngd/fetch_seq ops and from passes (``fetch-legalize-convert``...).
    """

    def __init__(self, message: str, notes: list[tuple[Operation, str]] | None = None):
        super().__init__(message)
        self.message = message
        self.notes = list(notes or [])


class PassError(OpError):
    """An error a pass raises at ``op`` (any op of the module, not only the
    one being rewritten), with optional ``(op, message)`` notes.  The driver
    renders it like a verifier error: ``'fetch.convert' op <message>`` at
    ``op``'s location."""

    def __init__(self, op: Operation, message: str, notes: list[tuple[Operation, str]] | None = None):
        super().__init__(message, notes)
        self.op = op


# --------------------------------------------------------------------------- #
# Diagnostic objects
# --------------------------------------------------------------------------- #


@dataclass
class Diagnostic:
    """One diagnostic: ``severity`` is ``"error"``, ``"warning"``, ``"remark"``
    or ``"note"``; ``loc`` is ``(filename, line, column)`` (1-based) or ``None``
    when unknown; ``notes`` are printed after it, in order."""

    severity: str
    message: str
    loc: Loc | None = None
    notes: list[Diagnostic] = field(default_factory=lambda: [])

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown diagnostic severity {self.severity!r}")

    @staticmethod
    def error(
        message: str, loc: Loc | None = None, notes: Iterable[Diagnostic] = ()
    ) -> Diagnostic:
        """Return an ``error`` diagnostic (convenience constructor)."""
        return Diagnostic("error", message, loc, list(notes))

    @staticmethod
    def note(message: str, loc: Loc | None = None) -> Diagnostic:
        """Return a ``note`` diagnostic (convenience constructor)."""
        return Diagnostic("note", message, loc, [])


class DiagnosticError(Exception):
    """Raised when an input cannot be processed; ``.diagnostics`` holds the
    diagnostics (at least one, normally an ``error``) that explain why.

    ``str()`` of the exception is the messages without source lines, so an
    uncaught one is still readable; the CLI renders them with :func:`render`.
    """

    def __init__(self, diagnostics: Diagnostic | Sequence[Diagnostic]):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__(
            "\n".join(_header(d) for d in flatten(self.diagnostics))
        )


def flatten(diagnostics: Iterable[Diagnostic]) -> Iterator[Diagnostic]:
    """Yield every diagnostic followed by its notes (recursively), in the
    order they are printed.  Raises nothing."""
    for diag in diagnostics:
        yield diag
        yield from flatten(diag.notes)


# --------------------------------------------------------------------------- #
# Locations
# --------------------------------------------------------------------------- #


class LineIndex:
    """Maps character offsets of a text to 1-based ``(line, column)``.

    ``line_offset`` is added to every line number: a chunk of a larger file
    that starts after line ``k`` of that file is indexed with
    ``line_offset=k`` so that it reports the original file's lines.
    """

    def __init__(self, text: str, line_offset: int = 0):
        self.text = text
        self.line_offset = line_offset
        self._starts = [0]
        pos = text.find("\n")
        while pos != -1:
            self._starts.append(pos + 1)
            pos = text.find("\n", pos + 1)

    def line_col(self, offset: int) -> tuple[int, int]:
        """Return the 1-based ``(line, column)`` of character ``offset``
        (clamped to ``[0, len(text)]``), with ``line_offset`` applied."""
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1 + self.line_offset, offset - self._starts[index] + 1


def location_of(loc: Attribute) -> Loc | None:
    """Return ``(filename, line, column)`` of a location attribute, or ``None``.

    Like MLIR's ``SourceMgrDiagnosticHandler::findLocToShow``: a
    ``FileLineColLoc`` is itself; a ``NameLoc`` shows its child, a
    ``CallSiteLoc`` its callee, a ``FusedLoc`` its first showable part;
    ``UnknownLoc`` and anything else give ``None``.  Raises nothing.
    """
    if isinstance(loc, FileLineColLoc):
        return (loc.filename.data, loc.line.data, loc.column.data)
    if isinstance(loc, NameLoc):
        return location_of(loc.location)
    if isinstance(loc, CallSiteLoc):
        return location_of(loc.callee)
    if isinstance(loc, FusedLoc):
        for child in loc.locations.data:
            if (found := location_of(child)) is not None:
                return found
    return None


def op_location(op: Operation) -> Loc | None:
    """Return the ``(filename, line, column)`` of ``op`` (from its
    ``FileLineColLoc``), or ``None`` for an ``UnknownLoc`` or any other
    location without a file position.  Raises nothing."""
    return location_of(op.location)


def op_error(
    op: Operation,
    message: str,
    notes: Iterable[tuple[Operation, str]] = (),
    severity: str = "error",
) -> Diagnostic:
    """Return an error diagnostic at ``op``, MLIR-style: the message becomes
    ``'<op name>' op <message>``; each ``(note_op, text)`` in ``notes``
    becomes a ``note`` at ``note_op``'s location (text not prefixed).

    ``severity`` may be ``"warning"``/``"remark"`` for non-error op
    diagnostics.  Raises ``ValueError`` for an unknown severity.
    """
    return Diagnostic(
        severity,
        f"'{op.name}' op {message}",
        op_location(op),
        [Diagnostic("note", text, op_location(note_op)) for note_op, text in notes],
    )


def exception_text(err: BaseException) -> str:
    """The message of an exception: its first argument, or its type name."""
    if err.args and str(err.args[0]):
        return str(err.args[0])
    return type(err).__name__


# --------------------------------------------------------------------------- #
# Rendering
# --------------------------------------------------------------------------- #

_STDIN_NAMES = ("-", "<stdin>")


class SourceManager:
    """Holds the full text of every input file, keyed by the filename used in
    locations, so that :func:`render` can print source lines.

    With ``--split-input-file`` register the whole file once (locations use
    the original file's lines).  ``"-"`` and ``"<stdin>"`` are the same file.
    """

    def __init__(self, sources: Mapping[str, str] | None = None):
        self._texts: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}
        for name, text in (sources or {}).items():
            self.add(name, text)

    def add(self, filename: str, text: str) -> None:
        """Register (or replace) the text of ``filename``.  Returns None."""
        self._texts[filename] = text
        self._lines.pop(filename, None)

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
        ``filename``, or ``None`` if the file or the line is unknown."""
        key = self._key(filename)
        if key is None:
            return None
        lines = self._lines.get(key)
        if lines is None:
            lines = self._texts[key].split("\n")
            self._lines[key] = lines
        if 1 <= line <= len(lines):
            return lines[line - 1].rstrip("\r")
        return None


def display_name(filename: str) -> str:
    return "<stdin>" if filename == "-" else filename


def _header(diag: Diagnostic) -> str:
    """``file:line:col: severity: message`` (LLVM ``SMDiagnostic`` style)."""
    prefix = ""
    if diag.loc is not None:
        filename, line, col = diag.loc
        prefix = display_name(filename)
        if line > 0:
            prefix += f":{line}"
            if col > 0:
                prefix += f":{col}"
        prefix += ": "
    return f"{prefix}{diag.severity}: {diag.message}"


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
    caret = " " * len(text[: col - 1].expandtabs(8))
    if len(text) < col - 1:  # column past the end of the line
        caret += " " * (col - 1 - len(text))
    return [text.expandtabs(8), caret + "^"]


def _as_source_manager(
    sources: SourceManager | Mapping[str, str] | None,
) -> SourceManager:
    if isinstance(sources, SourceManager):
        return sources
    return SourceManager(sources)


def render(
    diag: Diagnostic, sources: SourceManager | Mapping[str, str] | None = None
) -> str:
    """Return ``diag`` and its notes formatted exactly like ``mlir-opt``::

        in.mlir:12:3: error: 'fetch.cast' op message
          %f = fetch.cast %d : ...
          ^
        in.mlir:10:3: note: message
          %d = ...
          ^

    Each line ends with ``\\n``.  The source line (tabs expanded to 8 columns)
    and caret are shown when ``sources`` knows the file and line; a note at
    the same location as the diagnostic (or note) before it omits them, as in
    MLIR.  Unlocated: ``error: msg``; a location with line 0: ``file: error:
    msg``; filename ``-`` prints as ``<stdin>``.  ``sources`` may be a
    :class:`SourceManager` or a ``{filename: text}`` mapping.  Raises nothing.
    """
    manager = _as_source_manager(sources)
    out: list[str] = [_header(diag)]
    out += _source_snippet(diag, manager)
    previous = diag.loc
    for note in flatten(diag.notes):
        out.append(_header(note))
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
    return "".join(render(d, manager) for d in diagnostics)
