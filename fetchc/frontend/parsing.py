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
import unicodedata
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
from xdsl.ir import Attribute, BlockArgument, Operation, ParametrizedAttribute, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.utils.exceptions import MultipleSpansParseError, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from fetchc.diagnostics import Diagnostic, DiagnosticError, LineIndex, Loc

__all__ = [
    "SPLIT_MARKER",
    "LocatedParser",
    "decode_source",
    "parse_module",
    "split_input_file",
]

SPLIT_MARKER = "// -----"

# xDSL 0.75's string-literal regex nests quantifiers (`(?:[^"\\...]+|...)*`),
# so an unterminated string or a bad escape late on a long line backtracks
# exponentially: the lexer hangs.  The same language without the inner `+`
# matches in linear time.  Patched on the class, because xDSL lexes the first
# token while constructing the parser.
_LINEAR_STRING_RE = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
if getattr(MLIRLexer, "_unescaped_characters_regex", None) is not None and (
    MLIRLexer._unescaped_characters_regex.pattern == r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
):
    MLIRLexer._unescaped_characters_regex = _LINEAR_STRING_RE

MAX_INT_WIDTH = 16777215
"""MLIR's ``IntegerType::kMaxWidth``: wider integer types are rejected."""
MAX_DENSE_ELEMENTS = 1 << 20
"""Largest element count of a ``dense<...>`` literal fetchc parses: fetchc's
own IR never needs one; a bound keeps a splat from allocating gigabytes."""
_INT_TYPE_RE = re.compile(r"^[su]?i(\d+)$")

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


MAX_ALIAS_EXPANSION = 1 << 20
"""Largest written-out size (attributes and types) of an alias value."""


def _attr_children(attr: object) -> Sequence[object]:
    if isinstance(attr, ParametrizedAttribute):
        return attr.parameters
    data = getattr(attr, "data", None)
    if isinstance(data, (tuple, list)):
        return [c for c in data if isinstance(c, Attribute)]
    if isinstance(data, dict):
        return [c for c in data.values() if isinstance(c, Attribute)]
    return ()


def _expanded_size(root: object, memo: dict[int, int]) -> int:
    """Number of attribute nodes of ``root`` written out as a tree (shared
    sub-attributes counted at every use), capped just above
    :data:`MAX_ALIAS_EXPANSION`; iterative, memoised by ``id``."""
    cap = MAX_ALIAS_EXPANSION + 1
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in memo:
            continue
        children = _attr_children(node)
        if done:
            memo[key] = min(cap, 1 + sum(memo.get(id(c), cap) for c in children))
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in memo)
    return memo[id(root)]


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
        # Written-out sizes of alias values (by id), see _parse_alias_def.
        self._alias_sizes: dict[int, int] = {}
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

    def _parse_optional_integer_or_float_type(self):
        """xDSL's, but an integer type wider than MLIR's limit is a parse
        error at the type (xDSL would compute ``1 << width`` for its value
        range: an ``OverflowError`` or gigabytes for ``i99999999999``)."""
        token = self._current_token
        if token.kind == MLIRTokenKind.BARE_IDENT:
            found = _INT_TYPE_RE.match(token.text)
            if found is not None and (len(found.group(1)) > 9 or int(found.group(1)) > MAX_INT_WIDTH):
                self.raise_error(f"integer bitwidth is limited to {MAX_INT_WIDTH} bits", token.span)
        return super()._parse_optional_integer_or_float_type()

    def _parse_dense_literal_type(self):
        """xDSL's, but refuse a ``dense<...>`` type with more elements than
        :data:`MAX_DENSE_ELEMENTS` before xDSL materialises a splat
        (``dense<1> : tensor<100000000000xi8>`` would allocate it all)."""
        start = self._current_token.span.start
        ty = super()._parse_dense_literal_type()
        n = 1
        for d in ty.get_shape():
            n *= max(int(d), 0)
        if n > MAX_DENSE_ELEMENTS:
            self.raise_error(
                f"dense literal of {n} elements is too large for fetchc (at most {MAX_DENSE_ELEMENTS})",
                start,
                self._current_token.span.start,
            )
        return ty

    def _parse_alias_def(self) -> None:
        """xDSL's, but refuse an alias whose value, written out, has more
        than :data:`MAX_ALIAS_EXPANSION` attributes: aliases can nest so
        that a few lines denote an exponentially large type, which the
        printer (``--emit=mlir``, which prints no aliases) would never finish."""
        start = self._current_token.span
        super()._parse_alias_def()
        value = self.attribute_aliases.get(start.text)
        if value is not None and _expanded_size(value, self._alias_sizes) > MAX_ALIAS_EXPANSION:
            self.raise_error(
                f"alias '{start.text}' expands to more than {MAX_ALIAS_EXPANSION} nested "
                "attributes and types when written out; fetchc refuses such inputs",
                start,
            )

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


_HEX = frozenset("0123456789abcdefABCDEF")


def _string_literal_problem(text: str, start: int, default: str) -> tuple[str, int | None]:
    """Why the string literal opening at ``start`` does not lex (xDSL says
    "end of file reached" for all of them): an invalid escape, or no closing
    quote on its line.  Returns ``(message, offset to point at or None)``."""
    if not 0 <= start < len(text) or text[start] != '"':
        return default, None
    i = start + 1
    while i < len(text) and text[i] not in "\n\v\f":
        c = text[i]
        if c == '"':
            return default, None
        if c == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt and nxt in '"nt\\':
                i += 2
                continue
            if len(text) >= i + 3 and text[i + 1] in _HEX and text[i + 2] in _HEX:
                i += 3
                continue
            return (
                "invalid escape sequence in string literal: the escapes are \\n, \\t, \\\\, \\\" "
                "and two hex digits",
                i,
            )
        i += 1
    if i < len(text):
        return "unterminated string literal: expected '\"' before the end of the line", start
    return "unterminated string literal: expected '\"' before the end of the input", start


def _token_loc(
    parser: LocatedParser | None, text: str, filename: str, index: LineIndex
) -> Loc | None:
    """Location of the parser's current token, or ``None``."""
    if parser is None:
        return None
    try:
        return _span_loc(parser._current_token.span, text, filename, index)
    except Exception:  # noqa: BLE001 - a broken parser state is no location
        return None


_SEMI_AFFINE = {
    "Multiplication": "at least one of the multiply operands has to be a constant",
    "Floor division": "the right operand of floordiv has to be a constant",
    "Ceil division": "the right operand of ceildiv has to be a constant",
    "Mod ": "the right operand of mod has to be a constant",
}


def _not_implemented_text(err: BaseException) -> str:
    """MLIR-like wording for what xDSL's parser does not implement."""
    text = _exception_text(err)
    if "semi-affine" in text:
        for prefix, why in _SEMI_AFFINE.items():
            if text.startswith(prefix):
                return f"non-affine expression: {why} (semi-affine maps are not supported)"
        return "non-affine expression (semi-affine maps are not supported)"
    return f"unsupported construct: {text}"


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
        msg = err.msg
        if msg.strip() in ("", "in block definition"):
            # xDSL's message when a block ends without '}' (truncated input).
            msg = "unexpected end of the block: expected an operation or '}' (is the input truncated?)"
        if msg.startswith("Unexpected character: ") and len(msg) == len("Unexpected character: ") + 1:
            ch = msg[-1]
            if not ch.isprintable() or unicodedata.category(ch) in ("Cf", "Co", "Cs", "Zl", "Zp"):
                # a NUL, a control or bidi-override character would garble the terminal
                msg = f"Unexpected character: U+{ord(ch):04X}"
        if "{first_char}" in msg:  # an xDSL message that forgot its f-string
            first = text[err.span.start : err.span.start + 1] or "the sigil"
            msg = msg.replace("{first_char}", f"'{first}'")
        if msg.startswith("End of file reached before closing string literal"):
            msg, at = _string_literal_problem(text, err.span.start, msg)
            if at is not None:
                loc = (filename, *index.line_col(at))
        raise DiagnosticError(Diagnostic("error", msg, loc, notes)) from None
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
    except ValueError as err:
        if "integer string conversion" not in str(err):
            raise _internal(err, parser, text, filename, index) from None
        # Python refuses int() of more than sys.get_int_max_str_digits()
        # (4300) digits: point at the last such digit run before the parser.
        loc = _token_loc(parser, text, filename, index) or _current_loc(parser, text, filename, index)
        try:
            end = parser._current_token.span.end if parser is not None else len(text)
        except Exception:  # noqa: BLE001
            end = len(text)
        runs = [m.start() for m in re.finditer(r"\d{4301,}", text[:end])]
        if runs:
            loc = (filename, *index.line_col(runs[-1]))
        raise DiagnosticError(
            Diagnostic("error", "integer literal is too long: more than 4300 digits", loc)
        ) from None
    except NotImplementedError as err:
        # xDSL's affine-expression builder raises this for semi-affine
        # expressions (`d0 * d1`, `d0 floordiv d1`, ...) while parsing a map;
        # the current token is just after the offending expression.
        loc = _token_loc(parser, text, filename, index) or _current_loc(parser, text, filename, index)
        raise DiagnosticError(Diagnostic("error", _not_implemented_text(err), loc)) from None
    except Exception as err:  # noqa: BLE001 - bad input is a diagnostic, never a traceback
        raise _internal(err, parser, text, filename, index) from None


def _internal(
    err: BaseException, parser: LocatedParser | None, text: str, filename: str, index: LineIndex
) -> DiagnosticError:
    """The diagnostic for an unexpected exception from xDSL's parser."""
    loc = _current_loc(parser, text, filename, index)
    return DiagnosticError(
        Diagnostic(
            "error",
            f"failed to parse the input ({type(err).__name__}: "
            f"{_exception_text(err)})",
            loc,
        )
    )
