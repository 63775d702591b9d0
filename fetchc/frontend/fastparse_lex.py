"""The fast front end's lexer, types, attributes and locations.

:class:`AttrLexer` reads MLIR text position by position, token by token as
xDSL's ``MLIRLexer`` splits it (the same token patterns), and builds
types, attributes and locations exactly as xDSL 0.75's ``AttrParser``
builds them.  It is the base of :class:`fetchc.frontend.fastparse.FastParser`.

It never reports an error: anything it does not handle, and anything
malformed, raises :class:`Fallback`, and the caller parses the whole input
again with xDSL's parser (:class:`~fetchc.frontend.located_parser.LocatedParser`),
which gives the diagnostic.

Handled by hand: builtin scalar types, ``memref<...>`` (identity layout, or
a layout attribute), ``!fetch.stream<...>``, ``!rngd.trf<...>``,
``!rngd.vrf<...>``, function types, type aliases; integer, string, array,
dictionary, unit and symbol-reference attributes; ``affine_map<...>`` (xDSL's
affine grammar, built with the same ``AffineExpr`` operators); every
location form of :class:`~fetchc.frontend.located_parser.LocatedParser` but
``fused<metadata>``.  Handed to a fresh ``LocatedParser`` on the spelling
alone (so built by xDSL itself), memoised per parse: other self-contained
bracketed spellings (``strided<...>``, ``array<...>``, an unusual
``affine_map<...>``, ``#dialect.attr<...>``, ``!dialect.type<...>``).  Memoisation is per parse
and only for spellings that mention no alias (an alias's meaning is the
input's own), so a memo hit builds what a fresh parse would.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    CallSiteLoc,
    DictionaryAttr,
    FileLineColLoc,
    FloatAttr,
    FunctionType,
    FusedLoc,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    MemRefLayoutAttr,
    MemRefType,
    NameLoc,
    NoneAttr,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    UnknownLoc,
    f64,
    i64,
)
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.parser import AttrParser
from xdsl.utils.mlir_lexer import MLIRTokenKind

from fetchc.dialects.shared import i64_attr
from fetchc.frontend.locations import LineIndex

__all__ = ["AttrLexer", "Fallback"]


class Fallback(Exception):
    """The fast path does not handle this input: parse it with xDSL's parser."""


_S = r"(?:[ \t\n\r\f\v]+|//[^\n\r]*)*"
# xDSL's whitespace-and-comments pattern as fetchc patches it (xdsl_compat).
_WS = re.compile(_S, re.ASCII)
_WS_FIRST = frozenset(" \t\n\r\f\v/")
"""The characters _WS can start with (the empty string, the end, is not one)."""
_NONE = NoneAttr()
"""One ``NoneAttr`` for every parsed memref's memory space and absent layout (attributes are
immutable values: sharing one is what a memo of the spelling does)."""
_BARE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_$.]*")
_SUFFIX = r"(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)"
_PERCENT = re.compile("%" + _SUFFIX)
_HASH = re.compile("#" + _SUFFIX)
_BANG = re.compile("!" + _SUFFIX)
_CARET = re.compile(r"\^" + _SUFFIX)
_AT = re.compile(r"@[a-zA-Z_][a-zA-Z0-9_$.]*")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|[0-9]+(\.[0-9]*(?:[eE][+-]?[0-9]+)?)?")
# A string literal without escapes (one with a backslash falls back).
_STRING = re.compile(r'"[^"\\\n\v\f]*"')
_INT_TYPE = re.compile(r"([su]?)i([0-9]+)")
_SIGNEDNESS = {"": Signedness.SIGNLESS, "s": Signedness.SIGNED, "u": Signedness.UNSIGNED}
_MAX_FAST_WIDTH = 1 << 16
"""Integer types wider than this fall back (LocatedParser bounds them)."""
_MAX_DIGITS = 60
"""Integer literals longer than this fall back (Python bounds ``int()``)."""
MAX_DEPTH = 48
"""Nesting (regions, types, attributes, locations) beyond this falls back."""

# `!fetch.stream<ctx, [time], [packet], scalar>` in its plain spelling.
_DIMS = r"\[[ ]*(?:[0-9]+(?:[ ]*,[ ]*[0-9]+)*)?[ ]*\]"
_STREAM = re.compile(
    r"!fetch\.stream<[ ]*(main|sub)[ ]*,[ ]*("
    + _DIMS
    + r")[ ]*,[ ]*("
    + _DIMS
    + r")[ ]*,[ ]*([a-zA-Z_][a-zA-Z0-9_$.]*)[ ]*>",
    re.ASCII,
)
# `memref<4x8xf32` (the shape and the element type; `>` or `,` follows).
_MEMREF = re.compile(r"memref<((?:(?:[0-9]+|\?)x)*)([a-zA-Z_][a-zA-Z0-9_$.]*)", re.ASCII)
_REGFILE = re.compile(r"!rngd\.(trf|vrf)<[ ]*(?:\[([0-9 ,]*)\][ ]*,[ ]*)?([a-zA-Z_][a-zA-Z0-9_$.]*)[ ]*>", re.ASCII)
# Spellings handed to xDSL's parser, memoised: their keyword or prefix.
_DELEGATED_ATTRS = ("affine_map", "strided", "array")
# An `affine_map<...>` without nested `<` (`->` is its arrow): where
# _balanced_end would end it; the sub-parse checks the spelling is whole.
_AFFINE_MAP = re.compile(r"affine_map<(?:[^<>\"{}/-]|-(?!>)|->)*>")
_CLOSE = {"<": ">", "(": ")", "[": "]", "{": "}"}
_MEMO_SPAN = 256
"""Longest spelling :meth:`AttrLexer._memo_hit` looks up (a longer one
takes the ordinary path), so a lookup never copies more than this."""
# `N : i64` on one line (a decimal integer, then the type word whole).
_INT_I64 = re.compile(r"(-?[0-9]{1,60})[ ]*:[ ]*i64(?![a-zA-Z0-9_$.])", re.ASCII)


def _unverified_ok(cls: type[Attribute]) -> bool:
    """Whether ``cls`` adds no verifier of its own to the generic IRDL
    parameter checks (then a value built from parameters of the declared
    classes is the one ``__init__`` would build and verify)."""
    from xdsl.ir import Data, ParametrizedAttribute

    base = Data if issubclass(cls, Data) else ParametrizedAttribute
    return cls.verify is base.verify and "__post_init__" not in vars(cls)


def _file_loc_checked(filename: StringAttr, line: IntAttr, col: IntAttr) -> FileLineColLoc:
    return FileLineColLoc(filename, line, col)


def _file_loc_fast(filename: StringAttr, line: IntAttr, col: IntAttr) -> FileLineColLoc:
    """``FileLineColLoc(filename, line, col)`` without its verification: the
    three parameters are a ``StringAttr`` and two ``IntAttr`` by
    construction, exactly what the generic IRDL verifier checks."""
    loc = object.__new__(FileLineColLoc)
    object.__setattr__(loc, "filename", filename)
    object.__setattr__(loc, "line", line)
    object.__setattr__(loc, "column", col)
    return loc


def _int_attr_fast(value: int) -> IntAttr:
    """``IntAttr(value)`` for a Python ``int`` without its verification
    (which checks exactly that ``data`` is an ``int``)."""
    attr = object.__new__(IntAttr)
    object.__setattr__(attr, "data", value)
    return attr


_FAST_LOCS = (
    _unverified_ok(FileLineColLoc)
    and _unverified_ok(IntAttr)
    and [f for f, _ in FileLineColLoc.get_irdl_definition().parameters] == ["filename", "line", "column"]
)
_file_loc = _file_loc_fast if _FAST_LOCS else _file_loc_checked
_int_attr = _int_attr_fast if _FAST_LOCS else IntAttr


_MEMREF_NEW = all(d.converter is None for _, d in MemRefType.get_irdl_definition().parameters) and [
    f for f, _ in MemRefType.get_irdl_definition().parameters
] == ["shape", "element_type", "layout", "memory_space"]


def _memref_type(elem: Attribute, shape: list[int], layout: MemRefLayoutAttr | NoneAttr) -> MemRefType:
    """``MemRefType(elem, shape, layout)`` as xDSL's parser builds it, through
    ``MemRefType.new`` with the parameters ``__init__`` would compute (it
    only wraps the shape; no converters): the same object, verified the
    same way, without ``__init__``'s generic ``isa`` of the shape."""
    if not _MEMREF_NEW:
        return MemRefType(elem, shape, layout)
    return MemRefType.new((ArrayAttr([IntAttr(d) for d in shape]), elem, layout, _NONE))


def _float_types() -> dict[str, Attribute]:
    return dict(AttrParser._builtin_float_types)


_AttrClass = type[Attribute]  # spelled here: inside AttrLexer, ``type`` is its method


class AttrLexer:
    """Position-based reader of types, attributes and locations (see the
    module docstring).  ``text`` is the whole input (or chunk), ``filename``
    and ``line_offset`` as :class:`~fetchc.frontend.located_parser.LocatedParser`
    takes them."""

    def __init__(self, ctx: Context, text: str, filename: str, line_offset: int) -> None:
        self.ctx = ctx
        self.text = text
        self.pos = 0
        self.filename = filename
        self.file_attr = StringAttr(filename)
        self.lines = LineIndex(text, line_offset)
        self.aliases: dict[str, Attribute] = {}
        self.memo: dict[str, Attribute] = {}
        self.floats = _float_types()
        self.ints: dict[int, IntAttr] = {}
        self.depth = 0

    # -- tokens -----------------------------------------------------------

    def skip(self) -> int:
        """Skip whitespace and comments; return the position of the next token."""
        pos = self.pos
        if self.text[pos : pos + 1] not in _WS_FIRST:  # at a token already (most calls)
            return pos
        self.pos = _WS.match(self.text, pos).end()  # type: ignore[union-attr]  # _WS matches the empty string
        return self.pos

    def peek(self) -> str:
        """The next token's first character ('' at the end)."""
        pos = self.skip()
        return self.text[pos : pos + 1]

    def accept(self, punct: str) -> bool:
        """Consume punctuation ``punct`` if it comes next (``-`` is not the
        start of ``->``, ``{`` not of ``{-#``)."""
        pos = self.skip()
        if not self.text.startswith(punct, pos):
            return False
        if punct == "-" and self.text.startswith("->", pos):
            return False
        if punct == "{" and self.text.startswith("{-#", pos):
            raise Fallback("file metadata")
        self.pos = pos + len(punct)
        return True

    def expect(self, punct: str) -> None:
        if not self.accept(punct):
            raise Fallback(f"expected {punct!r}")

    def match(self, regex: re.Pattern[str]) -> str | None:
        """Consume the match of ``regex`` at the next token, or return None."""
        found = regex.match(self.text, self.skip())
        if found is None:
            return None
        self.pos = found.end()
        return found.group(0)

    def bare(self) -> str | None:
        return self.match(_BARE)

    def keyword(self, word: str) -> bool:
        pos = self.skip()
        found = _BARE.match(self.text, pos)
        if found is None or found.group(0) != word:
            return False
        self.pos = found.end()
        return True

    def string(self) -> str | None:
        """A string literal's contents (no escapes), or None."""
        if self.peek() != '"':
            return None
        lit = self.match(_STRING)
        if lit is None:
            raise Fallback("string with escapes")
        return lit[1:-1]

    def percent(self) -> str | None:
        """``%name`` (without ``%``); a ``%name#i`` tuple use falls back."""
        name = self.match(_PERCENT)
        if name is not None and self.text.startswith("#", self.pos):
            raise Fallback("SSA tuple index")
        return None if name is None else name[1:]

    def integer(self) -> int | None:
        """An integer literal, optionally negative; a float falls back."""
        start = self.skip()
        negative = self.accept("-")
        found = _NUMBER.match(self.text, self.skip())
        if found is None:
            self.pos = start
            return None
        if found.group(1) is not None or found.end() - found.start() > _MAX_DIGITS:
            raise Fallback("float or long literal")
        self.pos = found.end()
        digits = found.group(0)
        value = int(digits, 16) if digits.startswith("0x") else int(digits)
        return -value if negative else value

    def file_loc(self, offset: int) -> FileLineColLoc:
        """``FileLineColLoc`` of a character offset, as LocatedParser gives it
        (built by :func:`built_file_loc`; the ``IntAttr`` of a number is
        shared within the parse)."""
        line, col = self.lines.line_col(offset)
        ints = self.ints
        a = ints.get(line)
        if a is None:
            a = ints[line] = _int_attr(line)
        b = ints.get(col)
        if b is None:
            b = ints[col] = _int_attr(col)
        return _file_loc(self.file_attr, a, b)

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Fallback("deep nesting")

    # -- types ------------------------------------------------------------

    def type(self) -> Attribute:
        """Parse a type (xDSL's ``parse_type``)."""
        pos = self.skip()
        c = self.text[pos : pos + 1]
        if c == "!" or c == "m":
            hit = self._memo_hit(pos)
            if hit is not None:
                return hit
        if c == "!":
            return self._bang_type(pos)
        if c == "(":
            return self._function_type()
        name = _BARE.match(self.text, pos)
        if name is None:
            raise Fallback("not a type")
        word = name.group(0)
        if word == "memref" and self.text.startswith("<", name.end()):
            return self._memref(pos)
        found = self._scalar(word)
        if found is None:
            raise Fallback(f"type {word}")
        self.pos = name.end()
        return found

    def _memo_hit(self, pos: int) -> Attribute | None:
        """The memoised type spelled from ``pos`` to the first ``>``, if any
        (then consumed).  Sound because a memo key is a whole spelling: one
        without a nested ``<`` ends at its first ``>``, and one with a
        nested ``<`` never equals text ending at its first ``>``."""
        end = self.text.find(">", pos, pos + _MEMO_SPAN)
        hit = self.memo.get(self.text[pos : end + 1]) if end > pos else None
        if hit is not None:
            self.pos = end + 1
        return hit

    def _scalar(self, word: str) -> Attribute | None:
        found = self.floats.get(word)
        if found is not None:
            return found
        hit = self.memo.get(word)
        if hit is not None:
            return hit
        m = _INT_TYPE.fullmatch(word)
        if m is not None and len(m.group(2)) < 6 and int(m.group(2)) <= _MAX_FAST_WIDTH:
            found = self.memo[word] = IntegerType(int(m.group(2)), _SIGNEDNESS[m.group(1)])
        elif word == "index":
            found = self.memo[word] = IndexType()
        return found

    def _bang_type(self, pos: int) -> Attribute:
        text = self.text
        if text.startswith("!fetch.stream<", pos):
            return self._stream(pos)
        found = _REGFILE.match(text, pos)
        if found is not None:
            return self._regfile(found)
        name = _BANG.match(text, pos)
        if name is None:
            raise Fallback("bad type")
        if "." not in name.group(0) and not text.startswith("<", name.end()):
            alias = self.aliases.get(name.group(0))
            if alias is None:
                raise Fallback("undefined type alias")
            self.pos = name.end()
            return alias
        return self.delegated(pos, is_type=True)

    def _stream(self, pos: int) -> Attribute:
        found = _STREAM.match(self.text, pos)
        if found is None:
            return self.delegated(pos, is_type=True)
        self.pos = found.end()
        key = found.group(0)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        elem = self._scalar(found.group(4))
        if elem is None:
            raise Fallback("stream element")
        from fetchc.dialects.stream import StreamType

        self._registered("fetch.stream", StreamType)
        time, packet = _dims(found.group(2)), _dims(found.group(3))
        if not packet or min(time + packet) < 1:
            raise Fallback("stream shape")
        params = (
            StringAttr(found.group(1)),
            ArrayAttr([IntAttr(d) for d in time]),
            ArrayAttr([IntAttr(d) for d in packet]),
            elem,
        )
        self.memo[key] = made = StreamType.new(params)
        return made

    def _regfile(self, found: re.Match[str]) -> Attribute:
        self.pos = found.end()
        key = found.group(0)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        elem = self._scalar(found.group(3))
        if elem is None:
            raise Fallback("register-file element")
        from fetchc.dialects.rngd import TrfType, VrfType

        cls = TrfType if found.group(1) == "trf" else VrfType
        self._registered(cls.name, cls)
        dims = found.group(2)
        if (cls is VrfType) != (dims is not None):
            raise Fallback("!rngd.trf takes no shape, !rngd.vrf needs one")  # xDSL's parser says which
        if dims is None:
            made = cls.new((elem,))
        else:
            parts = dims.split(",")
            if any(not p.strip() or p.strip().count(" ") for p in parts) or any(int(p) < 1 for p in parts):
                raise Fallback("VRF shape")
            made = cls.new((ArrayAttr([IntAttr(int(p)) for p in parts]), elem))
        self.memo[key] = made
        return made

    def _registered(self, name: str, cls: _AttrClass) -> None:
        """xDSL's parser knows ``!name`` only from the context: so must we."""
        if self.ctx.get_optional_type(name) is not cls:
            raise Fallback(f"!{name} is not registered in this context")

    def _memref(self, pos: int) -> Attribute:
        found = _MEMREF.match(self.text, pos)
        if found is None:
            raise Fallback("memref spelling")
        after = found.end()
        if self.text.startswith(">", after):
            key = self.text[pos : after + 1]
            self.pos = after + 1
            hit = self.memo.get(key)
            if hit is None:
                hit = self.memo[key] = _memref_type(self._memref_elem(found), _shape(found.group(1)), _NONE)
            return hit
        end = _balanced_end(self.text, pos)
        key = self.text[pos:end]
        shared = "#" not in key  # names no alias: the same spelling, the same type
        hit = self.memo.get(key) if shared else None
        if hit is not None:
            self.pos = end
            return hit
        self.pos = after
        self.expect(",")
        self.nest()
        layout = self.attribute()
        self.depth -= 1
        self.expect(">")
        if not isinstance(layout, MemRefLayoutAttr):
            raise Fallback("memref memory space")
        made = _memref_type(self._memref_elem(found), _shape(found.group(1)), layout)
        if shared and self.pos == end:
            self.memo[key] = made
        return made

    def _memref_elem(self, found: re.Match[str]) -> Attribute:
        elem = self._scalar(found.group(2))
        if elem is None:
            raise Fallback("memref element")
        return elem

    def _function_type(self) -> FunctionType:
        inputs = self.type_list()
        self.expect("->")
        if self.peek() == "(":
            outputs = self.type_list()
        else:
            outputs = [self.type()]
        return FunctionType.from_lists(inputs, outputs)

    def type_list(self) -> list[Attribute]:
        """``(T, T, ...)``"""
        self.expect("(")
        self.nest()
        types: list[Attribute] = []
        if not self.accept(")"):
            types.append(self.type())
            while self.accept(","):
                types.append(self.type())
            self.expect(")")
        self.depth -= 1
        return types

    # -- attributes -------------------------------------------------------

    def attribute(self) -> Attribute:
        """Parse an attribute (xDSL's ``parse_attribute``)."""
        pos = self.skip()
        c = self.text[pos : pos + 1]
        if c == '"':
            text = self.string()
            assert text is not None  # at '"': a string
            return StringAttr(text)
        if c == "#":
            return self._hash_attr(pos)
        if c == "[":
            return self._array()
        if c == "{":
            return self.dictionary()
        if c == "@":
            return self._symbol_ref()
        if c == "-" or c.isdigit():
            return self._number_attr()
        word = _BARE.match(self.text, pos)
        if word is not None:
            w = word.group(0)
            if w in ("true", "false"):
                self.pos = word.end()
                return IntegerAttr(1 if w == "true" else 0, IntegerType(1))
            if w == "unit":
                self.pos = word.end()
                return UnitAttr()
            if w == "affine_map":
                found = _AFFINE_MAP.match(self.text, pos)
                if found is not None:
                    return self._affine_map_attr(found)
            if w in _DELEGATED_ATTRS and self.text.startswith("<", word.end()):
                return self.delegated(pos, is_type=False)
            if w in ("loc", "dense", "dense_resource", "opaque", "affine_set", "none"):
                raise Fallback(f"attribute {w}")
        return self.type()

    def _hash_attr(self, pos: int) -> Attribute:
        name = _HASH.match(self.text, pos)
        if name is None:
            raise Fallback("bad attribute")
        if "." in name.group(0) or self.text.startswith("<", name.end()):
            return self.delegated(pos, is_type=False)
        alias = self.aliases.get(name.group(0))
        if alias is None:
            raise Fallback("undefined attribute alias")
        self.pos = name.end()
        return alias

    def _array(self) -> ArrayAttr:
        self.expect("[")
        self.nest()
        items: list[Attribute] = []
        if not self.accept("]"):
            items.append(self.attribute())
            while self.accept(","):
                items.append(self.attribute())
            self.expect("]")
        self.depth -= 1
        return ArrayAttr(items)

    def dict_entries(self) -> dict[str, Attribute]:
        """``{name = attr, unit_name, "quoted" = attr}`` as a dict in input
        order; a duplicate key falls back."""
        self.expect("{")
        self.nest()
        entries: dict[str, Attribute] = {}
        if not self.accept("}"):
            self._entry(entries)
            while self.accept(","):
                self._entry(entries)
            self.expect("}")
        self.depth -= 1
        return entries

    def _entry(self, entries: dict[str, Attribute]) -> None:
        key = self.bare()
        if key is None:
            key = self.string()
        if key is None or key in entries:
            raise Fallback("bad or duplicate dictionary key")
        entries[key] = self.attribute() if self.accept("=") else UnitAttr()

    def dictionary(self) -> DictionaryAttr:
        return DictionaryAttr(self.dict_entries())

    def _symbol_ref(self) -> SymbolRefAttr:
        name = self.match(_AT)
        if name is None or self.text.startswith("::", self.pos):
            raise Fallback("quoted or nested symbol")
        return SymbolRefAttr(StringAttr(name[1:]), ArrayAttr([]))

    def symbol_name(self) -> str:
        """``@name`` (a quoted symbol falls back)."""
        name = self.match(_AT)
        if name is None:
            raise Fallback("expected a symbol name")
        return name[1:]

    def _number_attr(self) -> Attribute:
        """``N``, ``N : type``, or a decimal float literal ``F`` / ``F :
        float-type`` (``FloatAttr(float(F), type)``, default ``f64``, as
        xDSL's ``parse_optional_builtin_int_or_float_attr`` builds it; a
        function table's ``scale = 0.0625 : f32``).  A hexadecimal literal of
        a float type falls back."""
        fast = _INT_I64.match(self.text, self.skip())
        if fast is not None:  # `N : i64`, the common case: the same value as below, built once per value
            self.pos = fast.end()
            return i64_attr(int(fast.group(1)))
        value: int | float | None = self._float_literal()
        hexadecimal = False
        if value is None:
            hexadecimal = self.text.startswith("0x", self.skip()) or self.text.startswith("-0x", self.skip())
            value = self.integer()
        if value is None:
            raise Fallback("expected a number")
        pos = self.skip()
        if not self.text.startswith(":", pos):
            return FloatAttr(value, f64) if isinstance(value, float) else IntegerAttr(value, i64)
        self.pos = pos + 1
        typ = self.type()
        if isinstance(typ, (IntegerType, IndexType)) and isinstance(value, int):
            return IntegerAttr(value, typ)
        if isinstance(typ, AnyFloat) and not hexadecimal:
            return FloatAttr(float(value), typ)
        raise Fallback("number literal and type that do not go together")

    def _float_literal(self) -> float | None:
        """A decimal float literal (``1.5``, ``-2.0e-3``), or None (nothing
        consumed) when the next token is not one."""
        start = self.skip()
        negative = self.accept("-")
        found = _NUMBER.match(self.text, self.skip())
        if found is None or found.group(1) is None:
            self.pos = start
            return None
        if found.end() - found.start() > _MAX_DIGITS:
            raise Fallback("long literal")
        self.pos = found.end()
        value = float(found.group(0))
        return -value if negative else value

    def delegated(self, pos: int, is_type: bool, end: int | None = None) -> Attribute:
        """A self-contained bracketed spelling at ``pos`` parsed by a fresh
        LocatedParser on the spelling alone, memoised per parse (the
        spelling names no alias: an alias is undefined in the sub-parse,
        which then fails and the whole input falls back)."""
        if end is None:
            end = _balanced_end(self.text, pos)
        key = self.text[pos:end]
        hit = self.memo.get(key)
        if hit is None:
            if "loc" in key or "dense" in key:
                raise Fallback("location or dense literal inside an attribute")
            from fetchc.frontend.located_parser import LocatedParser

            sub = LocatedParser(self.ctx, key, self.filename)
            hit = sub.parse_type() if is_type else sub.parse_attribute()
            if sub._current_token.kind != MLIRTokenKind.EOF:
                raise Fallback("spelling not consumed")
            self.memo[key] = hit
        self.pos = end
        return hit

    # -- affine maps (xDSL's AffineParser, the same AffineExpr operators) --

    def _affine_map_attr(self, found: re.Match[str]) -> AffineMapAttr:
        """``affine_map<...>`` spelled as :data:`_AFFINE_MAP` matches,
        memoised per parse (a map names no alias)."""
        key = found.group(0)
        hit = self.memo.get(key)
        if hit is None:
            self.pos = found.start() + len("affine_map<")
            dims = self._affine_ids("(", ")")
            syms = self._affine_ids("[", "]") if self.peek() == "[" else []
            self.expect("->")
            self.expect("(")
            exprs: list[AffineExpr] = []
            if not self.accept(")"):
                exprs.append(self._affine_expr(dims, syms))
                while self.accept(","):
                    exprs.append(self._affine_expr(dims, syms))
                self.expect(")")
            self.expect(">")
            if self.pos != found.end():
                raise Fallback("affine map spelling")
            hit = self.memo[key] = AffineMapAttr(AffineMap(len(dims), len(syms), tuple(exprs)))
        self.pos = found.end()
        return hit  # type: ignore[return-value]  # the memo holds an AffineMapAttr under a map's spelling

    def _affine_ids(self, open_: str, close: str) -> list[str]:
        self.expect(open_)
        ids: list[str] = []
        if not self.accept(close):
            ids.append(self._affine_id())
            while self.accept(","):
                ids.append(self._affine_id())
            self.expect(close)
        return ids

    def _affine_id(self) -> str:
        name = self.bare()
        if name is None:
            raise Fallback("affine identifier")
        return name

    def _affine_expr(self, dims: list[str], syms: list[str]) -> AffineExpr:
        return self._affine_rhs(self._affine_primary(dims, syms), 0, dims, syms)

    def _affine_op(self) -> tuple[int, str]:
        """The binary operator that comes next and its precedence, or -1."""
        pos = self.skip()
        c = self.text[pos : pos + 1]
        if c in ("+", "*") or (c == "-" and not self.text.startswith("->", pos)):
            return _AFFINE_PREC[c], c
        word = _BARE.match(self.text, pos)
        if word is not None and word.group(0) in _AFFINE_PREC:
            return _AFFINE_PREC[word.group(0)], word.group(0)
        return -1, ""

    def _affine_rhs(self, lhs: AffineExpr, prec: int, dims: list[str], syms: list[str]) -> AffineExpr:
        """xDSL's ``_parse_binop_rhs`` (precedence climbing)."""
        while True:
            tok_prec, op = self._affine_op()
            if tok_prec < prec:
                return lhs
            self.pos = self.skip() + len(op)
            rhs = self._affine_primary(dims, syms)
            if tok_prec < self._affine_op()[0]:
                rhs = self._affine_rhs(rhs, tok_prec + 1, dims, syms)
            lhs = _AFFINE_BINOPS[op](lhs, rhs)

    def _affine_primary(self, dims: list[str], syms: list[str]) -> AffineExpr:
        pos = self.skip()
        word = _BARE.match(self.text, pos)
        if word is not None:
            self.pos = word.end()
            name = word.group(0)
            if name in dims:
                return AffineExpr.dimension(dims.index(name))
            if name in syms:
                return AffineExpr.symbol(syms.index(name))
            raise Fallback("affine identifier not in space")
        self.nest()
        if self.accept("("):
            expr = self._affine_expr(dims, syms)
            self.expect(")")
        elif self.accept("-"):
            expr = -self._affine_primary(dims, syms)
        else:
            found = _NUMBER.match(self.text, pos)
            if found is None or found.group(1) is not None or len(found.group(0)) > _MAX_DIGITS:
                raise Fallback("affine primary")
            self.pos = found.end()
            digits = found.group(0)
            expr = AffineExpr.constant(int(digits, 16) if digits.startswith("0x") else int(digits))
        self.depth -= 1
        return expr

    # -- locations --------------------------------------------------------

    def optional_location(self) -> LocationAttr | None:
        """``loc(...)`` if it comes next."""
        pos = self.skip()
        if not self.text.startswith("loc", pos):
            return None
        word = _BARE.match(self.text, pos)
        if word is None or word.group(0) != "loc":
            return None
        self.pos = word.end()
        self.expect("(")
        found = self.location()
        self.expect(")")
        return found

    def location(self) -> LocationAttr:
        """One location instance, LocatedParser's grammar."""
        self.nest()
        pos = self.skip()
        c = self.text[pos : pos + 1]
        if c == "#":
            found = self.location_alias(pos)
        elif c == '"':
            found = self._string_location()
        else:
            found = self._keyword_location()
        self.depth -= 1
        return found

    def location_alias(self, pos: int) -> LocationAttr:
        raise Fallback("location alias")  # FastParser resolves them

    def _string_location(self) -> LocationAttr:
        name = self.string()
        assert name is not None
        if self.accept(":"):
            line = self._nonneg()
            if not self.accept(":"):
                return FileLineColLoc(StringAttr(name), IntAttr(line), IntAttr(0))
            col = self._nonneg()
            if self.keyword("to"):
                if self.peek().isdigit():
                    self._nonneg()
                self.expect(":")
                self._nonneg()
            return FileLineColLoc(StringAttr(name), IntAttr(line), IntAttr(col))
        if self.accept("("):
            child = self.location()
            self.expect(")")
            return NameLoc(StringAttr(name), child)
        return NameLoc(StringAttr(name), NoneAttr())

    def _nonneg(self) -> int:
        pos = self.skip()
        found = _NUMBER.match(self.text, pos)
        if found is None or found.group(1) is not None or len(found.group(0)) > _MAX_DIGITS:
            raise Fallback("location number")
        self.pos = found.end()
        digits = found.group(0)
        return int(digits, 16) if digits.startswith("0x") else int(digits)

    def _keyword_location(self) -> LocationAttr:
        word = self.bare()
        if word == "unknown":
            return UnknownLoc()
        if word == "callsite":
            self.expect("(")
            callee = self.location()
            if not self.keyword("at"):
                raise Fallback("callsite without at")
            caller = self.location()
            self.expect(")")
            return CallSiteLoc(callee, caller)
        if word == "fused" and self.peek() == "[":
            self.expect("[")
            parts = [self.location()]
            while self.accept(","):
                parts.append(self.location())
            self.expect("]")
            return FusedLoc(ArrayAttr(parts), NoneAttr())  # what FusedLoc's converter makes of a tuple
        raise Fallback("location form")


_AFFINE_PREC = {"+": 10, "-": 10, "*": 20, "ceildiv": 20, "floordiv": 20, "mod": 20}
_AFFINE_BINOPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "ceildiv": lambda a, b: a.ceil_div(b),
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
}


def _dims(text: str) -> list[int]:
    inner = text[1:-1].strip()
    return [int(d) for d in inner.split(",")] if inner else []


def _shape(text: str) -> list[int]:
    return [DYNAMIC_INDEX if d == "?" else int(d) for d in text.split("x")[:-1]]


def _balanced_end(text: str, pos: int) -> int:
    """End of the bracketed spelling starting at ``pos`` (a prefix, then
    ``<...>`` with nested brackets); ``->`` is not a bracket.  Strings,
    comments and unbalanced text fall back."""
    lt = text.find("<", pos)
    if lt < 0 or lt - pos > 200 or not _BARE_OR_PREFIXED.fullmatch(text, pos, lt):
        raise Fallback("bracketed spelling")
    stack: list[str] = []
    i, n = lt, len(text)
    while i < n:
        c = text[i]
        if c in _CLOSE:
            stack.append(_CLOSE[c])
            if len(stack) > MAX_DEPTH:
                raise Fallback("deep spelling")
        elif c in ">)]}":
            if c == ">" and text[i - 1] == "-":
                i += 1
                continue
            if not stack or stack.pop() != c:
                raise Fallback("unbalanced spelling")
            if not stack:
                return i + 1
        elif c == '"' or (c == "/" and text.startswith("//", i)):
            raise Fallback("string or comment in a spelling")
        i += 1
    raise Fallback("unterminated spelling")


_BARE_OR_PREFIXED = re.compile(r"[#!]?[a-zA-Z_$.][a-zA-Z0-9_$.]*", re.ASCII)
