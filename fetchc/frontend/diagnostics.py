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
Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (each one line break).

MLIR locations (spec: ir.md §5).  An op's ``location`` attribute may be any
of MLIR's forms; a diagnostic is shown where ``mlir-opt`` shows it
(``SourceMgrDiagnosticHandler``): at the first ``FileLineColLoc`` found
walking the location in pre-order (a ``NameLoc``'s child, a
``CallSiteLoc``'s callee before its caller, a ``FusedLoc``'s parts in
order; ``UnknownLoc`` has none).  When rendered, the error is followed by
context notes, which ``--verify-diagnostics`` does not match (as in MLIR):
``note: called from`` at each caller of the first call site (at most
:data:`CALL_STACK_LIMIT`), then ``note: fused with this location`` at each
other file location of a ``FusedLoc``.  A file named by a location but not
registered with the :class:`SourceManager` is read from disk when shown (a
regular file of at most :data:`MAX_SOURCE_BYTES`), as ``mlir-opt`` does.

Op paths.  A diagnostic about an op (``Diagnostic.op``) that has no file
location (an op built in memory) is shown at its *op path* instead::

    func @k, op 3 'fetch.cast': error: 'fetch.cast' op ...

The path starts at the nearest enclosing symbol op (``func @k``; another
symbol op as ``<op name> @sym``), else at ``module`` (a ``builtin.module``
root), the root op's quoted name, or ``block`` (a block in no region), then
gives, for each nesting level
below it, ``op N``: the 0-based index of the op in its block
(``list(block.ops)[N]``), preceded by ``region R, `` when the parent op has
more than one region and ``block B, `` when the region has more than one
block; it ends with the op's quoted name.  An op nested in a region of op 2
of ``@k`` is ``func @k, op 2, op 0 'fetch.cast'``; a function itself is
``func @k``; an op in no block at all is ``detached op 'fetch.cast'``.  A
location without a file position that is not ``UnknownLoc`` (a bare
``NameLoc``) is appended: ``func @k, op 3 'fetch.cast' at loc("w")``.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    ModuleOp,
    NameLoc,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

__all__ = [
    "CALL_STACK_LIMIT",
    "MAX_FUSED_NOTES",
    "MAX_SOURCE_BYTES",
    "SEVERITIES",
    "Diagnostic",
    "DiagnosticError",
    "Loc",
    "OpError",
    "SourceManager",
    "LineIndex",
    "flatten",
    "location_notes",
    "location_of",
    "op_error",
    "op_location",
    "op_path",
    "render",
    "render_all",
    "exception_text",
    "display_name",
]

Loc = tuple[str, int, int]
"""``(filename, line, column)``, 1-based."""

SEVERITIES = ("error", "warning", "remark", "note")

CALL_STACK_LIMIT = 10
"""Most ``called from`` notes shown for one diagnostic (MLIR's default)."""
MAX_FUSED_NOTES = 10
"""Most ``fused with this location`` notes shown for one diagnostic."""
MAX_SOURCE_BYTES = 64 << 20
"""Largest file that :class:`SourceManager` reads from disk to show a line."""

_LINE_BREAK_RE = re.compile(r"\r\n?|\n")
"""A line break: ``\\r\\n``, a lone ``\\r`` or ``\\n`` (MLIR's lexer ends a
``//`` comment at either character)."""


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
    when unknown; ``notes`` are printed after it, in order.

    ``op`` is the op the diagnostic is about (``None`` for parse errors and
    other diagnostics not about one op); ``location`` is the op's MLIR
    location attribute as it was when the diagnostic was made (``loc`` is
    its first file location, see :func:`location_of`).  Both are set by
    :func:`op_error`, for the diagnostic and each of its notes; rendering
    uses them for the op path of an unlocated op and for the ``called
    from`` / ``fused with this location`` context notes.  They take no part
    in ``==`` or ``repr``."""

    severity: str
    message: str
    loc: Loc | None = None
    notes: list[Diagnostic] = field(default_factory=lambda: [])
    op: Operation | None = field(default=None, compare=False, repr=False)
    location: Attribute | None = field(default=None, compare=False, repr=False)

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
        paths = _PathCache()
        super().__init__(
            "\n".join(_header(d, paths) for d in flatten(self.diagnostics))
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

    ``\\n``, ``\\r\\n`` and a lone ``\\r`` each end a line.

    ``line_offset`` is added to every line number: a chunk of a larger file
    that starts after line ``k`` of that file is indexed with
    ``line_offset=k`` so that it reports the original file's lines.
    """

    def __init__(self, text: str, line_offset: int = 0):
        self.text = text
        self.line_offset = line_offset
        self._starts = [0]
        self._starts.extend(m.end() for m in _LINE_BREAK_RE.finditer(text))

    def line_col(self, offset: int) -> tuple[int, int]:
        """Return the 1-based ``(line, column)`` of character ``offset``
        (clamped to ``[0, len(text)]``), with ``line_offset`` applied."""
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1 + self.line_offset, offset - self._starts[index] + 1


def _first_file_loc(loc: Attribute) -> FileLineColLoc | None:
    """The first ``FileLineColLoc`` of ``loc`` in pre-order (MLIR's
    ``Location::findInstanceOf<FileLineColLoc>``), or ``None``."""
    stack = [loc]
    while stack:
        node = stack.pop()
        if isinstance(node, FileLineColLoc):
            return node
        if isinstance(node, NameLoc):
            stack.append(node.location)
        elif isinstance(node, CallSiteLoc):
            stack.extend((node.caller, node.callee))
        elif isinstance(node, FusedLoc):
            stack.extend(reversed(node.locations.data))
    return None


def _as_loc(file_loc: FileLineColLoc) -> Loc:
    return (file_loc.filename.data, file_loc.line.data, file_loc.column.data)


def location_of(loc: Attribute | None) -> Loc | None:
    """Return ``(filename, line, column)`` of a location attribute, or ``None``.

    Like ``mlir-opt`` (``SourceMgrDiagnosticHandler``, which shows
    ``findInstanceOf<FileLineColLoc>``): the first ``FileLineColLoc`` found
    walking the location in pre-order, i.e. a ``FileLineColLoc`` is itself, a
    ``NameLoc`` shows its child, a ``CallSiteLoc`` its callee (else its
    caller), a ``FusedLoc`` its first part that has one; ``UnknownLoc``, a
    bare ``NameLoc``, ``None`` and anything else give ``None``.  Raises
    nothing.
    """
    if loc is None:
        return None
    found = _first_file_loc(loc)
    return None if found is None else _as_loc(found)


def _call_site(loc: Attribute) -> CallSiteLoc | None:
    """MLIR's ``getCallSiteLoc``: the call site a location stands for."""
    while True:
        if isinstance(loc, CallSiteLoc):
            return loc
        if isinstance(loc, NameLoc):
            loc = loc.location
            continue
        if isinstance(loc, FusedLoc):
            for child in loc.locations.data:
                if (found := _call_site(child)) is not None:
                    return found
        return None


def location_notes(loc: Attribute | None) -> list[Diagnostic]:
    """The context notes ``render`` prints after a diagnostic at ``loc``.

    Returns, in order: ``note: called from`` at the first file location of
    each caller of the first call site of ``loc`` (``callsite(A at
    callsite(B at C))`` gives B then C; at most :data:`CALL_STACK_LIMIT`),
    then ``note: fused with this location`` at the first file location of
    each other part of a ``FusedLoc`` (looking through ``NameLoc``; at most
    :data:`MAX_FUSED_NOTES`).  Parts without a file location and locations
    equal to the diagnostic's own are skipped.  ``--verify-diagnostics``
    does not match these notes (MLIR adds them only when printing).  Raises
    nothing.
    """
    if loc is None:
        return []
    shown = location_of(loc)
    notes: list[Diagnostic] = []
    call = _call_site(loc)
    depth = 0
    while call is not None and depth < CALL_STACK_LIMIT:
        caller = location_of(call.caller)
        if caller is not None and caller != shown:
            notes.append(Diagnostic("note", "called from", caller))
        depth += 1
        call = _call_site(call.caller)
    fused = loc
    while isinstance(fused, NameLoc):
        fused = fused.location
    if isinstance(fused, FusedLoc):
        seen = {shown}
        for child in fused.locations.data:
            where = location_of(child)
            if where is None or where in seen:
                continue
            seen.add(where)
            if len(seen) > MAX_FUSED_NOTES + 1:
                break
            notes.append(Diagnostic("note", "fused with this location", where))
    return notes


def op_location(op: Operation) -> Loc | None:
    """Return the ``(filename, line, column)`` of ``op``'s location (see
    :func:`location_of`), or ``None`` for an ``UnknownLoc`` or any other
    location without a file position.  Raises nothing."""
    return location_of(op.location)


class _PathCache:
    """Index of each op in its block, computed once per block, so that the
    paths of many ops of one block cost linear time."""

    def __init__(self) -> None:
        self._index: dict[int, dict[int, int]] = {}
        self._blocks: dict[int, dict[int, int]] = {}

    def op_index(self, block: object, op: Operation) -> int:
        table = self._index.get(id(block))
        if table is None:
            table = {id(o): i for i, o in enumerate(block.ops)}  # type: ignore[attr-defined]
            self._index[id(block)] = table
        return table.get(id(op), -1)

    def block_index(self, region: object, block: object) -> int:
        table = self._blocks.get(id(region))
        if table is None:
            table = {id(b): i for i, b in enumerate(region.blocks)}  # type: ignore[attr-defined]
            self._blocks[id(region)] = table
        return table.get(id(block), -1)


def _symbol_of(op: Operation) -> str | None:
    try:
        sym = op.get_attr_or_prop("sym_name")
    except Exception:  # noqa: BLE001 - an op without properties has no symbol
        return None
    return sym.data if isinstance(sym, StringAttr) else None


def _anchor_text(op: Operation, sym: str) -> str:
    return f"func @{sym}" if op.name == "func.func" else f"{op.name} @{sym}"


def op_path(op: Operation, cache: _PathCache | None = None) -> str:
    """Return the op path of ``op`` (format in the module docstring), e.g.
    ``func @k, op 3 'fetch.cast'``.  ``cache`` (internal) shares block
    indices between calls.  Raises nothing."""
    cache = cache or _PathCache()
    steps: list[str] = []
    current = op
    anchor: str | None = None
    while True:
        sym = _symbol_of(current)
        if sym is not None:
            anchor = _anchor_text(current, sym)
            break
        block = current.parent_block()
        if block is None:
            if current is op:
                return f"detached op '{op.name}'"
            anchor = "module" if isinstance(current, ModuleOp) else f"'{current.name}'"
            break
        region = block.parent_region()
        parent = region.parent_op() if region is not None else None
        step = f"op {cache.op_index(block, current)}"
        if region is not None and len(region.blocks) > 1:
            step = f"block {cache.block_index(region, block)}, {step}"
        if parent is not None and len(parent.regions) > 1:
            index = next(i for i, r in enumerate(parent.regions) if r is region)
            step = f"region {index}, {step}"
        steps.append(step)
        if parent is None:
            anchor = "block"
            break
        current = parent
    if not steps:
        return anchor
    return ", ".join([anchor, *reversed(steps)]) + f" '{op.name}'"


def op_error(
    op: Operation,
    message: str,
    notes: Iterable[tuple[Operation, str]] = (),
    severity: str = "error",
) -> Diagnostic:
    """Return an error diagnostic at ``op``, MLIR-style: the message becomes
    ``'<op name>' op <message>``; each ``(note_op, text)`` in ``notes``
    becomes a ``note`` at ``note_op``'s location (text not prefixed).

    The diagnostic and each note carry their op (``Diagnostic.op``) and its
    location attribute (``Diagnostic.location``); ``loc`` is the location's
    first file position (:func:`location_of`), or ``None``, in which case
    :func:`render` shows the op path.  ``severity`` may be
    ``"warning"``/``"remark"`` for non-error op diagnostics.  Raises
    ``ValueError`` for an unknown severity.
    """
    return Diagnostic(
        severity,
        f"'{op.name}' op {message}",
        op_location(op),
        [
            Diagnostic("note", text, op_location(note_op), op=note_op, location=note_op.location)
            for note_op, text in notes
        ],
        op=op,
        location=op.location,
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
            lines = _LINE_BREAK_RE.split(self._texts[key])
            self._lines[key] = lines
        if 1 <= line <= len(lines):
            return lines[line - 1]
        return None


def display_name(filename: str) -> str:
    return "<stdin>" if filename == "-" else filename


def _header(diag: Diagnostic, paths: _PathCache | None = None) -> str:
    """``file:line:col: severity: message`` (LLVM ``SMDiagnostic`` style);
    an unlocated diagnostic about an op starts with the op path instead."""
    prefix = ""
    if diag.loc is not None:
        filename, line, col = diag.loc
        prefix = display_name(filename)
        if line > 0:
            prefix += f":{line}"
            if col > 0:
                prefix += f":{col}"
        prefix += ": "
    elif diag.op is not None:
        prefix = op_path(diag.op, paths)
        if diag.location is not None and not isinstance(diag.location, UnknownLoc):
            prefix += f" at {diag.location}"
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
    _paths: _PathCache | None = None,
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
    paths = _paths or _PathCache()
    out: list[str] = [_header(diag, paths)]
    out += _source_snippet(diag, manager)
    previous = diag.loc
    for note in [*location_notes(diag.location), *flatten(diag.notes)]:
        out.append(_header(note, paths))
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
    paths = _PathCache()
    return "".join(render(d, manager, paths) for d in diagnostics)
