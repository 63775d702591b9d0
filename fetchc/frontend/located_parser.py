"""fetchc's located parser: xDSL's parser plus MLIR's locations and input bounds.

:class:`LocatedParser` gives every parsed op and block argument a source
location, parses MLIR's whole location grammar, and bounds inputs that would
make xDSL allocate without limit.  It extends
:class:`~fetchc.frontend.xdsl_compat.PatchedParser` (xDSL's parser with
fetchc's patches) by overriding these ``Parser`` methods, all private in
xDSL 0.75 (pinned; :mod:`fetchc.frontend.xdsl_compat` checks the version):

* ``parse_operation``, ``_parse_op_result_list``: an op's location is its
  name token;
* ``_register_ssa_definition``: a block argument's location is its ``%name``;
* ``parse_optional_location``, ``_parse_location``, ``_parse_alias_def``:
  MLIR's location forms, location aliases used before their definition,
  and the alias-expansion bound;
* ``resolve_operand``, ``parse_module``: an undefined SSA name is reported at
  its first use (xDSL reports it at the end of the input);
* ``_parse_optional_integer_or_float_type``, ``_parse_dense_literal_type``:
  the integer-width and dense-size bounds;
* ``_get_op_by_name``: an unregistered op is reported at its name, with the
  closest registered name ("did you mean 'fetch.convert'?").

Upstream (xDSL): a location-tracking hook in ``Parser.parse_operation``;
deferred location aliases (MLIR resolves ``loc(#loc5)`` used before
``#loc5 = loc(...)``, which ``mlir-opt --mlir-print-debuginfo`` writes at the
end of the file); ``fused<metadata>[...]`` and MLIR 20's ``FileLineColRange``
forms; the size bounds; op-name error spans.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    LocationAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, AttributeInvT, BlockArgument, Operation, ParametrizedAttribute, SSAValue
from xdsl.parser import UnresolvedOperand
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Span, Token
from xdsl.utils.mlir_lexer import MLIRTokenKind

from fetchc.diagnostics import Loc
from fetchc.frontend.context import closest_op_name
from fetchc.frontend.locations import LineIndex
from fetchc.frontend.xdsl_compat import PatchedParser

__all__ = [
    "LocatedParser",
    "MAX_ALIAS_EXPANSION",
    "MAX_DENSE_ELEMENTS",
    "MAX_INT_WIDTH",
]

MAX_INT_WIDTH = 16777215
"""MLIR's ``IntegerType::kMaxWidth``: wider integer types are rejected."""
MAX_DENSE_ELEMENTS = 1 << 20
"""Largest element count of a ``dense<...>`` literal fetchc parses: fetchc's
own IR never needs one; a bound keeps a splat from allocating gigabytes."""
_INT_TYPE_RE = re.compile(r"^[su]?i(\d+)$")


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


# A top-level location alias definition `#name = loc(` at the start of a line
# (where `mlir-opt --mlir-print-debuginfo` writes them, often after their use).
_LOC_ALIAS_DEF_RE = re.compile(r"(?:\A|(?<=[\r\n]))[ \t]*(#[A-Za-z_][\w$.-]*)[ \t]*=[ \t]*loc[ \t]*\(")
_LOCATION_TYPES = (UnknownLoc, FileLineColLoc, CallSiteLoc, NameLoc, FusedLoc)


class LocatedParser(PatchedParser):
    """xDSL's :class:`~xdsl.parser.Parser` that attaches source locations.

    Every parsed op whose location is still ``UnknownLoc`` after parsing gets
    ``FileLineColLoc(name, line, column)`` of its name token (``fetch.cast``
    in ``%c = fetch.cast ...``, the opening quote of ``"fetch.cast"`` in the
    generic form), where ``mlir-opt`` puts an op's location.  An explicit
    trailing ``loc(...)`` (even ``loc(unknown)``) wins.  Block arguments get
    the location of their ``%name`` unless one was written.

    Every location form MLIR prints parses (MLIR's grammar):
    ``"f.py":4:7``; MLIR 20's ranges ``"f.py":4``, ``"f.py":4:7 to 4:20``,
    ``"f.py":4:7 to :20`` (kept as the ``FileLineColLoc`` of their start,
    column 0 when there is none); ``"name"`` and ``"name"(loc)``;
    ``callsite(loc at loc)``; ``fused[loc, ...]`` and
    ``fused<attr>[loc, ...]``; ``unknown``; and ``#alias``.  A location
    alias may be used before its definition, as long as it is defined at
    top level by a line ``#name = loc(...)`` (as ``mlir-opt
    --mlir-print-debuginfo`` writes them at the end of the file): the text
    is scanned for such lines once (linear), and a definition is parsed when
    first needed (aliases defined in terms of later aliases work; a cycle is
    an error at the definition).  Other aliases must be defined before use,
    as in MLIR.

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
        # Top-level `#name = loc(...)` lines: alias -> offset of its `#`.
        self._loc_alias_defs: dict[str, int] = {}
        for found in _LOC_ALIAS_DEF_RE.finditer(self.lexer.input.content):
            self._loc_alias_defs.setdefault(found.group(1), found.start(1))
        # Definitions parsed ahead of their place: offset of `#` -> the
        # parser state (token, lexer position) just after the definition.
        self._parsed_ahead: dict[int, tuple[Token[MLIRTokenKind, str], int]] = {}
        self._resolving: set[str] = set()

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

    def _parse_op_result_list(self):
        """xDSL's; the token after the results (``%a, %b =``) is the op's
        name: remember it as the start of the op being parsed."""
        results = super()._parse_op_result_list()
        if self.op_starts:
            self.op_starts[-1] = self._current_token.span.start
        return results

    def _parse_location(self) -> LocationAttr:
        """Parse one location instance (what ``loc(...)`` holds), MLIR's
        grammar (see the class docstring).  Returns the location attribute;
        raises ``ParseError`` with MLIR's messages."""
        token = self._current_token
        if token.kind == MLIRTokenKind.HASH_IDENT:
            if token.text not in self.attribute_aliases and token.text in self._loc_alias_defs:
                self._parse_alias_ahead(token.text, token.span)
            attr = self.parse_attribute()
            if not isinstance(attr, _LOCATION_TYPES):
                self.raise_error(f"expected location attribute, but got {attr}", token.span)
            return attr
        if token.kind == MLIRTokenKind.STRING_LIT:
            name = self.parse_str_literal()
            if self.parse_optional_punctuation(":") is not None:
                line = self.parse_integer(False, False, " (line number in FileLineColLoc)")
                if self.parse_optional_punctuation(":") is None:
                    return FileLineColLoc(StringAttr(name), IntAttr(line), IntAttr(0))
                col = self.parse_integer(False, False, " (column number in FileLineColLoc)")
                if self._current_token.kind == MLIRTokenKind.BARE_IDENT and self._current_token.text == "to":
                    self._consume_token()
                    if self._current_token.kind == MLIRTokenKind.INTEGER_LIT:
                        self.parse_integer(False, False)
                    self.parse_punctuation(":", " after `to` in FileLineColRange")
                    self.parse_integer(False, False, " (column number in FileLineColRange)")
                return FileLineColLoc(StringAttr(name), IntAttr(line), IntAttr(col))
            if self._current_token.kind == MLIRTokenKind.L_PAREN:
                with self.in_parens():
                    child = self._parse_location()
                return NameLoc(StringAttr(name), child)
            return NameLoc(StringAttr(name), NoneAttr())
        if token.kind == MLIRTokenKind.BARE_IDENT:
            if token.text == "unknown":
                self._consume_token()
                return UnknownLoc()
            if token.text == "callsite":
                self._consume_token()
                with self.in_parens():
                    callee = self._parse_location()
                    self.parse_keyword("at", " in callsite location")
                    caller = self._parse_location()
                return CallSiteLoc(callee, caller)
            if token.text == "fused":
                self._consume_token()
                metadata: Attribute = NoneAttr()
                if self.parse_optional_punctuation("<") is not None:
                    metadata = self.parse_attribute()
                    self.parse_punctuation(">", " after fused location metadata")
                locations = self.parse_comma_separated_list(
                    self.Delimiter.SQUARE, self._parse_location, " in fused location"
                )
                return FusedLoc(ArrayAttr(locations), metadata)  # what FusedLoc's converter makes of a tuple
        self.raise_error("expected location instance")

    def _parse_alias_ahead(self, name: str, use: Span) -> None:
        """Parse the top-level definition of location alias ``name`` now
        (it is used before it is defined), then continue where we were."""
        if name in self._resolving:
            self.raise_error(f"location alias '{name}' is defined in terms of itself", use)
        offset = self._loc_alias_defs[name]
        saved = (self._parser_state.current_token, self.lexer.pos)
        self._resolving.add(name)
        self._resume_from(offset)
        self._parse_alias_def()
        self._resolving.discard(name)
        self._parsed_ahead[offset] = (self._parser_state.current_token, self.lexer.pos)
        self._parser_state.current_token, self.lexer.pos = saved

    def _register_ssa_definition(self, name: str, values: Sequence[SSAValue], span: Span) -> None:
        super()._register_ssa_definition(name, values, span)
        if self._after_explicit_loc == self._current_token.span.start:
            return  # `%arg: type loc(...)` just parsed: keep it
        for value in values:
            if isinstance(value, BlockArgument) and isinstance(value.location, UnknownLoc):
                value.location = self.file_loc_at(span.start)

    def resolve_operand(self, operand: UnresolvedOperand, type: AttributeInvT) -> SSAValue[AttributeInvT]:
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
        ahead = self._parsed_ahead.pop(start.start, None)
        if ahead is not None:  # already parsed for an earlier use: skip it
            self._parser_state.current_token, self.lexer.pos = ahead
            return
        super()._parse_alias_def()
        value = self.attribute_aliases.get(start.text)
        if value is not None and _expanded_size(value, self._alias_sizes) > MAX_ALIAS_EXPANSION:
            self.raise_error(
                f"alias '{start.text}' expands to more than {MAX_ALIAS_EXPANSION} nested "
                "attributes and types when written out; fetchc refuses such inputs",
                start,
            )

    def _get_op_by_name(self, name: str) -> type[Operation]:
        known = self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack)
        if known is None and self.op_starts:
            # Point at the op name (xDSL points after it).
            content = self.lexer.input.content
            pos = content.rfind(name, self.op_starts[-1], self._current_token.span.start)
            if pos > 0 and content[pos - 1] == '"':
                pos -= 1
            if pos >= 0:
                close = closest_op_name(self.ctx, name)
                hint = f"; did you mean '{close}'?" if close else ""
                self.raise_error(f"Operation {name} is not registered{hint}", pos)
        return super()._get_op_by_name(name)

    def parse_operation(self) -> Operation:
        """xDSL's, then give the op the location of its name token unless it
        got one (or an explicit ``loc(...)``).  Returns the op; raises what
        xDSL raises."""
        start = self._current_token.span.start
        depth = len(self.op_starts)
        self.op_starts.append(start)
        op = super().parse_operation()
        name_start = self.op_starts[depth]
        del self.op_starts[depth:]
        explicit = self._after_explicit_loc == self._current_token.span.start
        if not explicit and isinstance(op.location, UnknownLoc):
            op.location = self.file_loc_at(name_start)
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
