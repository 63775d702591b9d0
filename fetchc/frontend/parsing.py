"""Parsing MLIR text into located IR, with MLIR-style diagnostics.

* :class:`~fetchc.frontend.located_parser.LocatedParser` is xDSL's parser that
  gives every parsed op (and block argument) a ``FileLineColLoc``.
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

import os
import re
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import MultipleSpansParseError, ParseError, VerifyException
from xdsl.utils.lexer import Span

from fetchc.diagnostics import Diagnostic, DiagnosticError, Loc
from fetchc.frontend.fastparse import fast_parse
from fetchc.frontend.located_parser import LocatedParser
from fetchc.frontend.locations import LineIndex, exception_text
from fetchc.process import memory_failure

__all__ = [
    "SPLIT_MARKER",
    "decode_source",
    "parse_module",
    "split_input_file",
]

SPLIT_MARKER = "// -----"


# A line that holds MLIR's split marker: optional indentation, `// -----`, and
# anything that does not extend the dash run (MLIR warns about `// ------`
# as a near miss and does not split there; we simply do not split).  Lines
# end at `\n`, `\r\n` or a lone `\r`; the marker line's break is part of it.
_SPLIT_LINE_RE = re.compile(r"(?:\A|(?<=[\r\n]))[ \t]*// -----(?!-)[^\r\n]*(?:\r\n?|\n)?")
_LINE_BREAK_RE = re.compile(r"\r\n?|\n")


def split_input_file(text: str) -> list[tuple[str, int]]:
    """Split ``text`` on lines holding MLIR's ``// -----`` marker.

    Returns ``[(chunk_text, line_offset), ...]`` in file order, where
    ``line_offset`` is the number of lines of ``text`` before the chunk's
    first line (0 for the first chunk): the chunk's line ``n`` is line
    ``n + line_offset`` of ``text``.  ``\\n``, ``\\r\\n`` and a lone ``\\r``
    each end a line.  Marker lines belong to no chunk.  A text without a
    marker gives ``[(text, 0)]``; chunks may be empty or hold only comments.
    Raises nothing.
    """
    chunks: list[tuple[str, int]] = []
    start, start_line = 0, 0
    for marker in _SPLIT_LINE_RE.finditer(text):
        chunks.append((text[start : marker.start()], start_line))
        start_line += sum(1 for _ in _LINE_BREAK_RE.finditer(text, start, marker.start())) + 1
        start = marker.end()
    chunks.append((text[start:], start_line))
    return chunks


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
                f"input is not valid UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start})",
                (filename, line, col),
            )
        ) from None


def _span_loc(span: Span[Any], text: str, filename: str, index: LineIndex) -> Loc | None:
    """Location of a span of the parsed text; ``None`` if it is elsewhere.
    A span at the end of the input is moved back to just after the last
    token, so "unexpected end of input" points at the last line."""
    if span.input.content is not text and span.input.content != text:
        return None
    offset = min(span.start, len(text.rstrip()))
    line, col = index.line_col(offset)
    return (filename, line, col)


def _current_loc(parser: LocatedParser | None, text: str, filename: str, index: LineIndex) -> Loc | None:
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
                'invalid escape sequence in string literal: the escapes are \\n, \\t, \\\\, \\" and two hex digits',
                i,
            )
        i += 1
    if i < len(text):
        return "unterminated string literal: expected '\"' before the end of the line", start
    return "unterminated string literal: expected '\"' before the end of the input", start


def _token_loc(parser: LocatedParser | None, text: str, filename: str, index: LineIndex) -> Loc | None:
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
    text = exception_text(err)
    if "semi-affine" in text:
        for prefix, why in _SEMI_AFFINE.items():
            if text.startswith(prefix):
                return f"non-affine expression: {why} (semi-affine maps are not supported)"
        return "non-affine expression (semi-affine maps are not supported)"
    return f"unsupported construct: {text}"


PARSER_ENV = "FETCHC_PARSER"
"""Environment variable: ``xdsl`` makes :func:`parse_module` use xDSL's
parser only (for debugging and benchmarks); unset or ``auto``, the fast
front end is tried first."""


def _parser_choice(parser: str | None) -> str:
    """``parser``, else ``$FETCHC_PARSER``, else ``auto``.  Raises
    ``ValueError`` for a bad argument, :class:`DiagnosticError` for a bad
    environment value."""
    if parser is not None:
        if parser not in ("auto", "xdsl"):
            raise ValueError(f"parser must be 'auto' or 'xdsl', not {parser!r}")
        return parser
    choice = os.environ.get(PARSER_ENV) or "auto"
    if choice not in ("auto", "xdsl"):
        raise DiagnosticError(Diagnostic("error", f"{PARSER_ENV} must be 'auto' or 'xdsl', not {choice[:40]!r}", None))
    return choice


_BASE_ATTRIBUTE = re.compile(r"(.+) should be of base attribute (\S+)", re.S)
_OP_NAME = re.compile(r'"?([A-Za-z_][\w$.]*)')


def _op_format_text(parser: LocatedParser | None, text: str, message: str) -> str:
    """A ``VerifyException`` raised while an op's custom form is parsed
    (xDSL checks the types after ``:`` against the op's definition, and says
    only ``f32 should be of base attribute memref``), named by the op being
    parsed as MLIR names an op: ``'fetch.fetch' op expects a memref where its
    type signature has f32``."""
    start = parser.op_starts[-1] if parser is not None and parser.op_starts else None
    m = _OP_NAME.match(text, start) if start is not None else None
    if m is None:
        return message
    base = _BASE_ATTRIBUTE.fullmatch(message.strip())
    if base is not None:
        got, want = " ".join(base.group(1).split()), base.group(2)
        return (
            f"'{m.group(1)}' op expects {'an' if want[0] in 'aeiou' else 'a'} {want} where its type signature has {got}"
        )
    return f"'{m.group(1)}' op {message}"


def parse_module(ctx: Context, text: str, filename: str, line_offset: int = 0, parser: str | None = None) -> ModuleOp:
    """Parse ``text`` (a whole file, or a chunk of ``filename`` starting after
    its line ``line_offset``) into a located ``builtin.module``.

    The fast front end (:func:`~fetchc.frontend.fastparse.fast_parse`) is
    tried first; for anything it does not handle, and for every error, the
    text is parsed again with xDSL's parser
    (:class:`~fetchc.frontend.located_parser.LocatedParser`), which builds
    the same IR and gives every diagnostic.  ``parser="xdsl"`` (or the
    environment variable ``FETCHC_PARSER=xdsl``) uses xDSL's parser only;
    ``parser="auto"`` (the default) both.  Another value is a ``ValueError``.

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
    if _parser_choice(parser) == "auto":
        module = fast_parse(ctx, text, filename, line_offset)
        if module is not None:
            return module
    return _slow_parse(ctx, text, filename, line_offset)


def _slow_parse(ctx: Context, text: str, filename: str, line_offset: int) -> ModuleOp:
    """:func:`parse_module` with xDSL's parser (LocatedParser) alone."""
    parser: LocatedParser | None = None
    index = LineIndex(text, line_offset)
    try:
        parser = LocatedParser(ctx, text, filename, line_offset)
        return parser.parse_module()
    except DiagnosticError:
        raise
    except ParseError as err:
        raise DiagnosticError(_parse_error(err, text, filename, index)) from None
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
        raise DiagnosticError(Diagnostic("error", _op_format_text(parser, text, exception_text(err)), loc)) from None
    except ValueError as err:
        if "integer string conversion" not in str(err):
            raise _internal(err, parser, text, filename, index) from None
        raise DiagnosticError(_long_integer(parser, text, filename, index)) from None
    except NotImplementedError as err:
        # xDSL's affine-expression builder raises this for semi-affine
        # expressions (`d0 * d1`, `d0 floordiv d1`, ...) while parsing a map;
        # the current token is just after the offending expression.
        loc = _token_loc(parser, text, filename, index) or _current_loc(parser, text, filename, index)
        raise DiagnosticError(Diagnostic("error", _not_implemented_text(err), loc)) from None
    except MemoryError:
        raise  # a resource, not the input: the command line says "out of memory"
    except Exception as err:  # noqa: BLE001 - bad input is a diagnostic, never a traceback
        if memory_failure(err):
            raise MemoryError from err
        raise _internal(err, parser, text, filename, index) from None


def _parse_error(err: ParseError, text: str, filename: str, index: LineIndex) -> Diagnostic:
    """The diagnostic for xDSL's ``ParseError``: at its span, with notes for
    the extra spans, and clearer words for the messages xDSL garbles."""
    notes = [
        Diagnostic("note", msg or "see here", _span_loc(span, text, filename, index))
        for span, msg in (err.refs if isinstance(err, MultipleSpansParseError) else [])
    ]
    loc = _span_loc(err.span, text, filename, index)
    msg = err.msg
    if msg.strip() in ("", "in block definition"):
        # xDSL's message when a block ends without '}' (truncated input).
        msg = "unexpected end of the block: expected an operation or '}' (is the input truncated?)"
    if msg.startswith("Unexpected character: ") and len(msg) == len("Unexpected character: ") + 1:
        # Imported here: only this message needs it (a few ms of a cold start).
        import unicodedata

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
    return Diagnostic("error", msg, loc, notes)


def _long_integer(parser: LocatedParser | None, text: str, filename: str, index: LineIndex) -> Diagnostic:
    """Python refuses ``int()`` of more than ``sys.get_int_max_str_digits()``
    (4300) digits: point at the last such digit run before the parser."""
    loc = _token_loc(parser, text, filename, index) or _current_loc(parser, text, filename, index)
    try:
        end = parser._current_token.span.end if parser is not None else len(text)
    except Exception:  # noqa: BLE001 - any parser state: fall back to the whole text
        end = len(text)
    runs = [m.start() for m in re.finditer(r"\d{4301,}", text[:end])]
    if runs:
        loc = (filename, *index.line_col(runs[-1]))
    return Diagnostic("error", "integer literal is too long: more than 4300 digits", loc)


def _internal(
    err: BaseException, parser: LocatedParser | None, text: str, filename: str, index: LineIndex
) -> DiagnosticError:
    """The diagnostic for an unexpected exception from xDSL's parser."""
    loc = _current_loc(parser, text, filename, index)
    return DiagnosticError(
        Diagnostic(
            "error",
            f"failed to parse the input ({type(err).__name__}: {exception_text(err)})",
            loc,
        )
    )
