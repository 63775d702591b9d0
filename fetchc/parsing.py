"""Parsing MLIR text into located IR, with MLIR-style diagnostics.

* :class:`LocatedParser` is xDSL's parser that gives every parsed op (and
  block argument) a ``FileLineColLoc`` at its start, like ``mlir-opt``.
* :func:`split_input_file` splits an input on ``// -----`` lines
  (``--split-input-file``).
* :func:`parse_module` parses one input (or one chunk) and turns *every*
  failure into a :class:`~fetchc.diagnostics.DiagnosticError`.
* :func:`decode_source` decodes input bytes, reporting bad UTF-8 as a
  diagnostic.

Line offsets: a chunk of a larger file is parsed from its own text (so MLIR
constructs cannot leak between chunks) together with ``line_offset``, the
number of lines of the original file that precede the chunk's first line.
Every location the parser produces (op locations, parse errors) uses the
original file's line numbers: line ``n`` of the chunk is reported as line
``n + line_offset``.  Columns are unchanged (chunks start at a line start).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    LocationAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.utils.exceptions import MultipleSpansParseError, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from fetchc.diagnostics import Diagnostic, DiagnosticError, LineIndex, Loc

__all__ = [
    "SPLIT_MARKER",
    "LocatedParser",
    "decode_source",
    "parse_module",
    "split_input_file",
]

SPLIT_MARKER = "// -----"

# A line that holds MLIR's split marker: optional indentation, `// -----`, and
# anything that does not extend the dash run (MLIR warns about `// ------`
# as a near miss and does not split there; we simply do not split).
_SPLIT_LINE_RE = re.compile(r"^[ \t]*// -----(?!-)[^\n]*$", re.MULTILINE)


def split_input_file(text: str) -> list[tuple[str, int]]:
    """Split ``text`` on lines holding MLIR's ``// -----`` marker.

    Returns ``[(chunk_text, line_offset), ...]`` in file order, where
    ``line_offset`` is the number of lines of ``text`` before the chunk's
    first line (0 for the first chunk): the chunk's line ``n`` is line
    ``n + line_offset`` of ``text``.  Marker lines belong to no chunk.  A
    text without a marker gives ``[(text, 0)]``; chunks may be empty or hold
    only comments.  Raises nothing.
    """
    chunks: list[tuple[str, int]] = []
    start, start_line = 0, 0
    for marker in _SPLIT_LINE_RE.finditer(text):
        chunks.append((text[start : marker.start()], start_line))
        start_line += text.count("\n", start, marker.start()) + 1
        start = marker.end() + 1  # skip the marker line's newline
    chunks.append((text[start:], start_line))
    return chunks


class LocatedParser(Parser):
    """xDSL's :class:`~xdsl.parser.Parser` that attaches source locations.

    Every parsed op whose location is still ``UnknownLoc`` after parsing gets
    ``FileLineColLoc(name, line, column)`` of its start: its first result
    (``%x = ...``) if it binds results, else its name, like ``mlir-opt``.  An
    explicit trailing ``loc(...)`` (even ``loc(unknown)``) wins.  Block
    arguments get the location of their ``%name`` unless one was written.

    ``line_offset`` is added to every line number (see the module docstring):
    use it when ``input`` is a chunk of a larger file.

    The implicit top-level ``builtin.module`` (input that is not exactly one
    ``builtin.module``) takes the location of the first top-level op.  Empty
    input (only comments / whitespace) gives an empty module.
    """

    def __init__(
        self,
        ctx: Context,
        input: str,
        name: str = "<unknown>",
        line_offset: int = 0,
    ) -> None:
        super().__init__(ctx, input, name)
        self.filename = name
        self.line_offset = line_offset
        self.line_index = LineIndex(self.lexer.input.content, line_offset)
        # Offset of the token that followed the last `loc(...)` parsed: an op
        # whose parse ends there carried an explicit trailing location.
        self._after_explicit_loc = -1
        # Start offsets of the ops being parsed (innermost last), to locate
        # non-parse errors (a verifier running at construction, ...).
        self.op_starts: list[int] = []
        self._top_level_ops: list[Operation] = []
        # First use of every SSA name that was referenced before definition.
        self._first_forward_use: dict[str, Span] = {}

    # -- locations ---------------------------------------------------------

    def loc_at(self, offset: int) -> Loc:
        """Return ``(filename, line, column)`` of a character offset of the
        input, in original-file lines."""
        line, col = self.line_index.line_col(offset)
        return (self.filename, line, col)

    def file_loc_at(self, offset: int) -> FileLineColLoc:
        """Return the ``FileLineColLoc`` of a character offset of the input."""
        filename, line, col = self.loc_at(offset)
        return FileLineColLoc(StringAttr(filename), IntAttr(line), IntAttr(col))

    def parse_optional_location(self) -> LocationAttr | None:
        """xDSL's, also remembering where an explicit ``loc(...)`` ended."""
        location = super().parse_optional_location()
        if location is not None:
            self._after_explicit_loc = self._current_token.span.start
        return location

    def _register_ssa_definition(
        self, name: str, values: Sequence[SSAValue], span: Span
    ) -> None:
        super()._register_ssa_definition(name, values, span)
        if self._after_explicit_loc == self._current_token.span.start:
            return  # `%arg: type loc(...)` just parsed: keep it
        for value in values:
            if isinstance(value, BlockArgument) and isinstance(
                value.location, UnknownLoc
            ):
                value.location = self.file_loc_at(span.start)

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        """xDSL's, also remembering the first use of each forward reference."""
        name = operand.operand_name
        if name not in self.ssa_values:
            self._first_forward_use.setdefault(name, operand.span)
        return super().resolve_operand(operand, type)

    def _get_op_by_name(self, name: str) -> type[Operation]:
        known = self.ctx.get_optional_op(
            name, dialect_stack=self._parser_state.dialect_stack
        )
        if known is None and self.op_starts:
            # Point at the op name (xDSL points after it).
            content = self.lexer.input.content
            pos = content.rfind(name, self.op_starts[-1], self._current_token.span.start)
            if pos > 0 and content[pos - 1] == '"':
                pos -= 1
            if pos >= 0:
                self.raise_error(f"Operation {name} is not registered", pos)
        return super()._get_op_by_name(name)

    def parse_operation(self) -> Operation:
        """xDSL's, then give the op the location of its start unless it got
        one (or an explicit ``loc(...)``).  Returns the op; raises what xDSL
        raises."""
        start = self._current_token.span.start
        depth = len(self.op_starts)
        self.op_starts.append(start)
        op = super().parse_operation()
        del self.op_starts[depth:]
        explicit = self._after_explicit_loc == self._current_token.span.start
        if not explicit and isinstance(op.location, UnknownLoc):
            op.location = self.file_loc_at(start)
        if depth == 0:
            self._top_level_ops.append(op)
        return op

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """Parse the whole input into a ``builtin.module``.

        Returns the module: the input's single ``builtin.module`` op, or an
        implicit module around all top-level ops (empty for an input without
        ops).  Raises xDSL's ``ParseError`` (and whatever xDSL raises) on bad
        input; :func:`parse_module` turns those into diagnostics.
        """
        if self._current_token.kind == MLIRTokenKind.EOF:
            module = ModuleOp([])
            module.location = self.file_loc_at(0)
            return module
        try:
            module = super().parse_module(allow_implicit_module)
        except ParseError as err:
            if not err.msg.startswith("values used but not defined"):
                raise
            undefined = [
                (self._first_forward_use[name].start, name)
                for name in self.forward_ssa_references
                if name in self._first_forward_use
            ]
            if not undefined:
                raise
            # xDSL reports these at the end of the input; MLIR at the use.
            _, name = min(undefined)
            self.raise_error(
                f"use of undeclared SSA value name %{name}",
                self._first_forward_use[name],
            )
        if self._top_level_ops and module is not self._top_level_ops[0]:
            module.location = self._top_level_ops[0].location
        return module


def decode_source(data: bytes, filename: str) -> str:
    """Decode input bytes as UTF-8.

    Returns the text.  Raises :class:`DiagnosticError` with ``error: input is
    not valid UTF-8 (byte 0x.. at offset N)``, located at the line and
    column of the first bad byte (the column counts decoded characters).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        prefix = data[: err.start].decode("utf-8", errors="replace")
        line, col = LineIndex(prefix).line_col(len(prefix))
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"input is not valid UTF-8 (byte 0x{data[err.start]:02x} "
                f"at offset {err.start})",
                (filename, line, col),
            )
        ) from None


def _span_loc(span: Span, text: str, filename: str, index: LineIndex) -> Loc | None:
    """Location of a span of the parsed text; ``None`` if it is elsewhere.
    A span at the end of the input is moved back to just after the last
    token, so "unexpected end of input" points at the last line."""
    if span.input.content is not text and span.input.content != text:
        return None
    offset = min(span.start, len(text.rstrip()))
    line, col = index.line_col(offset)
    return (filename, line, col)


def _current_loc(
    parser: LocatedParser | None, text: str, filename: str, index: LineIndex
) -> Loc | None:
    """Best location for an error raised outside xDSL's ``raise_error``:
    the innermost op being parsed, else the current token."""
    if parser is None:
        return None
    try:
        if parser.op_starts:
            return parser.loc_at(parser.op_starts[-1])
        return _span_loc(parser._current_token.span, text, filename, index)
    except Exception:  # noqa: BLE001 - a broken parser state is no location
        return None


def _exception_text(err: BaseException) -> str:
    if err.args and str(err.args[0]):
        return str(err.args[0])
    return type(err).__name__


def parse_module(
    ctx: Context, text: str, filename: str, line_offset: int = 0
) -> ModuleOp:
    """Parse ``text`` (a whole file, or a chunk of ``filename`` starting after
    its line ``line_offset``) into a located ``builtin.module``.

    Top-level ops are wrapped in an implicit ``builtin.module`` unless the
    input is exactly one ``builtin.module``; an input without ops gives an
    empty module.  Ops are *not* verified here (use
    :func:`~fetchc.diagnostics.verify_module`).

    Returns the module.  Raises :class:`DiagnosticError` for any failure,
    never another exception: a ``ParseError`` becomes an ``error`` at its
    span (with ``note``s for the extra spans of a multi-span error); a
    ``VerifyException``, ``ValueError``, ``AssertionError``... raised while
    building an op becomes an ``error`` at the op being parsed; too deep
    nesting (``RecursionError``) becomes ``error: nesting too deep``.
    """
    parser: LocatedParser | None = None
    index = LineIndex(text, line_offset)
    try:
        parser = LocatedParser(ctx, text, filename, line_offset)
        return parser.parse_module()
    except DiagnosticError:
        raise
    except ParseError as err:
        notes: list[Diagnostic] = []
        if isinstance(err, MultipleSpansParseError):
            for span, msg in err.refs:
                notes.append(
                    Diagnostic(
                        "note",
                        msg or "see here",
                        _span_loc(span, text, filename, index),
                    )
                )
        loc = _span_loc(err.span, text, filename, index)
        raise DiagnosticError(Diagnostic("error", err.msg, loc, notes)) from None
    except RecursionError:
        loc = _current_loc(parser, text, filename, index)
        raise DiagnosticError(
            Diagnostic(
                "error",
                "nesting too deep: the parser ran out of Python recursion depth",
                loc,
            )
        ) from None
    except VerifyException as err:
        loc = _current_loc(parser, text, filename, index)
        raise DiagnosticError(Diagnostic("error", _exception_text(err), loc)) from None
    except Exception as err:  # noqa: BLE001 - bad input is a diagnostic, never a traceback
        loc = _current_loc(parser, text, filename, index)
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"failed to parse the input ({type(err).__name__}: "
                f"{_exception_text(err)})",
                loc,
            )
        ) from None
