"""MLIR-style diagnostics for fetchc.

Everything here is return-value based (no global handler, no global state):

* :class:`Diagnostic` is one ``error:`` / ``warning:`` / ``remark:`` / ``note:``
  message with an optional ``(filename, line, column)`` location and attached
  notes.  :class:`DiagnosticError` is the exception that carries diagnostics
  out of the parser (:mod:`fetchc.parsing`), passes and the CLI.
* :class:`OpError` is what op verifiers and passes raise: an error at the op
  being verified plus ``(op, message)`` notes.  :func:`op_error` turns an op
  and a message into a :class:`Diagnostic` (MLIR's ``'dialect.op' op ...``
  prefix), :func:`verify_module` verifies a whole module and returns every
  op's error.
* :func:`render` prints a diagnostic exactly like ``mlir-opt`` (location,
  severity, message, the source line, a caret), using a :class:`SourceManager`
  for the source text.
* :func:`check_expected` implements ``--verify-diagnostics`` with MLIR's
  semantics (``SourceMgrDiagnosticVerifierHandler``): it compares the
  diagnostics of one input against the ``// expected-*`` comments of its text
  and returns the failures ``mlir-opt`` would print (empty list = success).

Locations are 1-based ``(filename, line, column)`` tuples; the column counts
characters (code points), not bytes, so the caret lines up on screen.  A line
``<= 0`` means "only the file is known" and renders as ``file: error: ...``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

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
    "check_expected",
    "flatten",
    "location_of",
    "op_error",
    "op_location",
    "render",
    "render_all",
    "verify_module",
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


def _exception_text(err: BaseException) -> str:
    """The message of an exception: its first argument, or its type name."""
    if err.args and str(err.args[0]):
        return str(err.args[0])
    return type(err).__name__


def _walk_preorder(root: Operation) -> Iterator[Operation]:
    """Pre-order walk (same order as ``Operation.walk()``), iterative so that
    deeply nested IR cannot exhaust Python's recursion limit."""
    stack: list[Operation] = [root]
    while stack:
        op = stack.pop()
        yield op
        children: list[Operation] = []
        for region in op.regions:
            for block in region.blocks:
                children.extend(block.ops)
        stack.extend(reversed(children))


def _raise_underlying(message: str, underlying_error: Exception) -> NoReturn:
    raise underlying_error


def _verify_single(op: Operation) -> None:
    """``op.verify(verify_nested_ops=False)`` without xDSL's error decoration.

    On a verifier failure xDSL's ``Operation.emit_error`` prints the whole
    enclosing IR into the exception's ``__notes__`` before re-raising it;
    with many failing ops that is quadratic (seconds on a few thousand ops)
    and we ignore those notes anyway.  So, for the duration of the call, the
    op's ``emit_error`` is shadowed by an instance attribute that just
    re-raises the original exception (ops without ``__dict__`` keep xDSL's).
    """
    try:
        op.emit_error = _raise_underlying  # type: ignore[method-assign]
        shadowed = True
    except (AttributeError, TypeError):
        shadowed = False
    try:
        op.verify(verify_nested_ops=False)
    finally:
        if shadowed:
            try:
                del op.emit_error
            except AttributeError:
                pass


def verify_module(module: Operation) -> list[Diagnostic]:
    """Verify ``module`` and every op nested in it; return all errors.

    Each op is verified on its own (``op.verify(verify_nested_ops=False)``,
    minus xDSL's IR dump, see ``_verify_single``), in pre-order (the order of ``module.walk()``).  An op gives at most one
    error: an :class:`OpError` becomes its message plus notes, any other
    ``VerifyException`` its first argument (xDSL's ``__notes__``, a dump of
    the whole IR, are ignored), and any other exception raised by a verifier
    becomes ``verifier failed with <Type>: <message>``.  Every message gets
    MLIR's ``'<op name>' op`` prefix and the op's location.

    Unlike ``mlir-opt``, which stops at the first op that fails, this reports
    every failing op, so one run shows every problem of a file.

    Returns the errors in walk order (empty list = the module verifies).
    Raises nothing: verifier exceptions never propagate.
    """
    diagnostics: list[Diagnostic] = []
    for op in _walk_preorder(module):
        try:
            _verify_single(op)
        except OpError as err:
            diagnostics.append(op_error(op, err.message, err.notes))
        except VerifyException as err:
            diagnostics.append(op_error(op, _exception_text(err)))
        except Exception as err:  # noqa: BLE001 - a broken verifier is a diagnostic
            diagnostics.append(
                op_error(
                    op,
                    f"verifier failed with {type(err).__name__}: "
                    f"{_exception_text(err)}",
                )
            )
    return diagnostics


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


def _display_name(filename: str) -> str:
    return "<stdin>" if filename == "-" else filename


def _header(diag: Diagnostic) -> str:
    """``file:line:col: severity: message`` (LLVM ``SMDiagnostic`` style)."""
    prefix = ""
    if diag.loc is not None:
        filename, line, col = diag.loc
        prefix = _display_name(filename)
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


# --------------------------------------------------------------------------- #
# --verify-diagnostics
# --------------------------------------------------------------------------- #

# Same pattern as MLIR's SourceMgrDiagnosticVerifierHandlerImpl::expected.
_EXPECTED_RE = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *"
    r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$"
)


@dataclass
class _Expected:
    severity: str
    line: int  # target line (original-file numbering); 0 = @unknown
    loc: Loc  # where the expected-* comment is
    text: str  # the {{...}} content as written
    designator: str  # "" or "@+1", "@above", ...
    regex: re.Pattern[str] | None = None
    unknown: bool = False
    dangling: bool = False
    matched: bool = False

    def match(self, message: str) -> bool:
        if self.regex is not None:
            return self.regex.search(message) is not None
        return self.text in message


def _compile_expected_regex(text: str) -> re.Pattern[str]:
    """MLIR's ``-re`` form: literal text with ``{{regex}}`` blocks.  Raises
    ``ValueError`` (unterminated block) or ``re.error`` (bad regex)."""
    parts: list[str] = []
    rest = text
    while rest:
        start = rest.find("{{")
        if start == -1:
            parts.append(re.escape(rest))
            break
        parts.append(re.escape(rest[:start]))
        rest = rest[start + 2 :]
        end = rest.find("}}")
        if end == -1:
            raise ValueError("found start of regex with no end '}}'")
        block = rest[:end]
        re.compile(block)
        parts.append(f"({block})")
        rest = rest[end + 2 :]
    return re.compile("".join(parts))


def _parse_expectations(
    text: str, filename: str, line_offset: int
) -> tuple[list[_Expected], list[Diagnostic]]:
    """Scan ``text`` for ``expected-*`` designators (MLIR's
    ``computeExpectedDiags``); return them and errors for malformed ones."""
    expectations: list[_Expected] = []
    errors: list[Diagnostic] = []
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the text ends with a newline: no line after it
    last_non_designator = 0  # 0-based index of the last ordinary line
    pending_below: list[_Expected] = []
    for index, raw in enumerate(lines):
        found = _EXPECTED_RE.search(raw.rstrip())
        if found is None:
            for exp in pending_below:
                exp.line = index + 1 + line_offset
                exp.dangling = False
            pending_below.clear()
            last_non_designator = index
            continue
        severity, is_re, designator, where, content = found.groups()
        loc = (filename, index + 1 + line_offset, found.start() + 1)
        exp = _Expected(severity, index + 1 + line_offset, loc, content, designator or "")
        if is_re:
            try:
                exp.regex = _compile_expected_regex(content)
            except ValueError as err:
                errors.append(Diagnostic("error", str(err), loc))
                continue
            except re.error as err:
                errors.append(Diagnostic("error", f"invalid regex: {err}", loc))
                continue
        if where is None:
            pass
        elif where[0] in "+-":
            delta = int(where[1:])
            exp.line += delta if where[0] == "+" else -delta
        elif where == "unknown":
            exp.unknown = True
            exp.line = 0
        elif where == "above":
            exp.line = last_non_designator + 1 + line_offset
        else:  # below: the next line that is not itself a designator
            exp.dangling = True
            exp.line = -1  # matches nothing until that line is found
            pending_below.append(exp)
        expectations.append(exp)
    return expectations, errors


def check_expected(
    diagnostics: Sequence[Diagnostic],
    text: str,
    filename: str,
    line_offset: int = 0,
) -> list[Diagnostic]:
    """Check ``diagnostics`` against the ``expected-*`` comments of ``text``
    (``--verify-diagnostics``, MLIR semantics); return the failures.

    ``text`` is one input (a whole file, or one ``--split-input-file`` chunk
    whose first line is line ``line_offset + 1`` of ``filename``);
    ``diagnostics`` are all diagnostics produced for it (parser, verifier,
    passes).  Every diagnostic and every note (flattened, recursively) is
    matched against the expectations:

    * ``// expected-error {{text}}`` (also ``-note``, ``-warning``,
      ``-remark``) expects a diagnostic of that severity on the same line
      whose message *contains* ``text``; ``expected-error-re {{a{{[0-9]+}}b}}``
      matches literal text with ``{{regex}}`` blocks (``re.search``).
    * ``@+N`` / ``@-N``: N lines below / above; ``@above``: the closest line
      above that holds no ``expected-*``; ``@below``: the next such line
      below; ``@unknown``: a diagnostic without location.
    * Several expectations on one line each match one diagnostic; a further
      diagnostic matching an already matched expectation is accepted (as in
      MLIR).  Diagnostics without a location only match ``@unknown``.

    Failures, as ``mlir-opt`` prints them: ``unexpected <severity>: <msg>``
    at each unmatched diagnostic; ``'<sev>' diagnostic emitted when expecting
    a '<sev>'`` at the expectation when only the severity differs; then, at
    each unmatched expectation's comment, ``expected <severity> "<text>" was
    not produced`` (with the reason appended when its designator points
    outside ``text``); malformed ``-re`` patterns give ``invalid regex: ...``.

    Returns the failure diagnostics (all ``error``); empty list = success.
    Raises nothing.
    """
    expectations, failures = _parse_expectations(text, filename, line_offset)
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    first, last = line_offset + 1, line_offset + max(n_lines, 1)

    unexpected: list[Diagnostic] = []
    for diag in flatten(diagnostics):
        located = diag.loc is not None and diag.loc[1] > 0
        if located:
            assert diag.loc is not None
            same_file = _display_name(diag.loc[0]) == _display_name(filename)
            candidates = [
                e
                for e in expectations
                if same_file and not e.unknown and e.line == diag.loc[1]
            ]
        else:
            candidates = [e for e in expectations if e.unknown]
        hit = next(
            (
                e
                for e in sorted(candidates, key=lambda e: e.matched)
                if e.severity == diag.severity and e.match(diag.message)
            ),
            None,
        )
        if hit is not None:
            hit.matched = True
            continue
        near = next((e for e in candidates if e.match(diag.message)), None)
        if near is not None:
            unexpected.append(
                Diagnostic(
                    "error",
                    f"'{diag.severity}' diagnostic emitted when expecting a "
                    f"'{near.severity}'",
                    near.loc,
                )
            )
        else:
            unexpected.append(
                Diagnostic(
                    "error",
                    f"unexpected {diag.severity}: {diag.message}",
                    diag.loc if located else None,
                )
            )

    missing: list[Diagnostic] = []
    for exp in expectations:
        if exp.matched:
            continue
        message = f'expected {exp.severity} "{exp.text}" was not produced'
        if exp.dangling:
            message += f": no line follows its '{exp.designator}' designator"
        elif not exp.unknown and not first <= exp.line <= last:
            message += (
                f": its designator '{exp.designator}' points at line {exp.line},"
                f" outside the input (lines {first}-{last})"
            )
        missing.append(Diagnostic("error", message, exp.loc))

    return failures + unexpected + missing
