"""Where a diagnostic points: MLIR locations, op locations, line indices.

MLIR locations (spec: ir.md §5).  An op's ``location`` attribute may be any
of MLIR's forms; a diagnostic is shown where ``mlir-opt`` shows it
(``SourceMgrDiagnosticHandler``): at the first ``FileLineColLoc`` found
walking the location in pre-order (a ``NameLoc``'s child, a
``CallSiteLoc``'s callee before its caller, a ``FusedLoc``'s parts in
order; ``UnknownLoc`` has none).  When rendered, the error is followed by
context notes (:func:`location_notes`), which ``--verify-diagnostics`` does
not match (as in MLIR): ``note: called from`` at each caller of the first
call site (at most :data:`CALL_STACK_LIMIT`), then ``note: fused with this
location`` at each other file location of a ``FusedLoc``.

Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (each one line break).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import cast

from xdsl.dialects.builtin import ArrayAttr, CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
from xdsl.ir import Attribute, Operation

from fetchc.diagnostics import Diagnostic, Loc, op_path

__all__ = [
    "CALL_STACK_LIMIT",
    "MAX_FUSED_NOTES",
    "LINE_BREAK_RE",
    "LineIndex",
    "exception_text",
    "file_line_col",
    "loc_text",
    "location_notes",
    "location_of",
    "op_error",
    "op_location",
]

CALL_STACK_LIMIT = 10
"""Most ``called from`` notes shown for one diagnostic (MLIR's default)."""
MAX_FUSED_NOTES = 10
"""Most ``fused with this location`` notes shown for one diagnostic."""

LINE_BREAK_RE = re.compile(r"\r\n?|\n")
"""A line break: ``\\r\\n``, a lone ``\\r`` or ``\\n`` (MLIR's lexer ends a
``//`` comment at either character)."""


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
        self._starts.extend(m.end() for m in LINE_BREAK_RE.finditer(text))

    def line_col(self, offset: int) -> tuple[int, int]:
        """Return the 1-based ``(line, column)`` of character ``offset``
        (clamped to ``[0, len(text)]``), with ``line_offset`` applied."""
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1 + self.line_offset, offset - self._starts[index] + 1


def _children(loc: FusedLoc) -> tuple[Attribute, ...]:
    """The locations a ``FusedLoc`` fuses (an ``ArrayAttr``, which xDSL's
    parameter type leaves as ``Attribute``)."""
    return cast(ArrayAttr[Attribute], loc.locations).data


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
            stack.extend(reversed(_children(node)))
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
            for child in _children(loc):
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
        for child in _children(fused):
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


def loc_text(op: Operation) -> str:
    """Where ``op`` is, as text: ``file:line:col`` of its location (see
    :func:`location_of`, :func:`file_line_col`), else its op path
    (:func:`fetchc.diagnostics.op_path`).  The MANIFEST's ``loc`` of a
    program and ``fetchc run``'s messages use it."""
    loc = op_location(op)
    return file_line_col(loc) if loc is not None else op_path(op)


def file_line_col(loc: Loc) -> str:
    """A file location as text: ``file:line:col`` (what :func:`loc_text`
    writes)."""
    return f"{loc[0]}:{loc[1]}:{loc[2]}"


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
