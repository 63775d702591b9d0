"""The top-level layout of an MLIR input, read from its tokens without parsing
it: the ``func.func`` ops, the aliases they use, and a name-free fingerprint of
each function, for the kernel compile cache (:mod:`fetchc.compile_cache`).

:func:`layout` accepts only a simple, common shape of input and returns
``None`` for anything else (the caller then compiles normally, so nothing
here ever decides what an input means):

* top level: ``#alias = ...`` / ``!alias = ...`` definitions, ``func.func``
  ops in the custom form, optionally all inside one unnamed ``module { ... }``
  (or ``builtin.module``) without attributes; comments and whitespace;
* a function: ``func.func [private|public|nested] @name(args) [-> results]
  [attributes {...}] { body }``; its body may refer to no other symbol
  (``@other``: a call), carries no explicit ``loc(...)``, and its arguments
  are named ``%name`` with names xDSL keeps as they are;
* function names are unique.

For each function, :attr:`FuncText.key` is its token sequence with SSA names
replaced by their order of first appearance (``%w`` → ``%0``), its own name
blanked, whitespace and comments dropped, and the definitions of the aliases
it uses (transitively) appended: two functions with equal keys parse to the
same IR up to SSA names, the function name and locations, so they compile to
the same Fetch Unit programs, tables and MANIFEST kernel up to names and
locations (:func:`fetchc.compile_cache` re-stamps those).

Positions: :meth:`FuncText.position` gives the ``(line, column)`` of the
``k``-th token of a given text in the function (lines and columns counted as
:class:`fetchc.frontend.locations.LineIndex` counts them: ``\\n``, ``\\r\\n`` and
a lone ``\\r`` end a line, columns count characters from 1), which is where
the parser locates the op named by that token.  Stdlib only.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["FuncText", "Layout", "layout"]

_TOKEN_RE = re.compile(
    r"""[ \t\r\n\f\v]+|//[^\n\r]*|"(?:[^"\\\n\r]|\\[^\n\r])*"|%[A-Za-z0-9_$.\-]+(?:\#[0-9]+)?"""
    r"""|@[A-Za-z_$.\-][\w$.\-]*|\#[A-Za-z_$.\-][\w$.\-]*|![A-Za-z_$.\-][\w$.\-]*|\^[\w$.\-]+"""
    r"""|[0-9][0-9A-Za-z_.]*|[A-Za-z_][\w$.\-]*|->|[(){}\[\]<>,:=*+\-?]"""
)
"""One token (whitespace and comments included); no groups, so that
``findall`` is fast.  A token's kind is read off its first character."""
_KIND = {"%": "ssa", "@": "sym", "#": "hash", "!": "bang", "^": "caret", '"': "string"}
_OPEN = {"(": ")", "{": "}", "[": "]"}
_LINE_BREAK_RE = re.compile(r"\r\n?|\n")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SUFFIX_RE = re.compile(r"_\d+$")
_RNGD_NAME_RE = re.compile(r"[^\\\x00-\x1f]*")


class Token:
    """One token: its kind (a group name of the lexer), text and offset."""

    __slots__ = ("kind", "text", "offset")

    def __init__(self, kind: str, text: str, offset: int) -> None:
        self.kind, self.text, self.offset = kind, text, offset


@dataclass
class FuncText:
    """One top-level ``func.func`` of the input (see the module docstring)."""

    name: str
    tokens: list[Token]
    arg_names: tuple[str | None, ...]
    """Per argument: the tensor name the compiler gives it (``rngd.name``,
    else the SSA name as xDSL keeps it), or None (then ``arg<i>``)."""
    key: str = ""
    _by_text: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def occurrence(self, offset: int) -> tuple[str, int] | None:
        """``(token text, k)`` of the token starting at ``offset``: it is the
        ``k``-th token of that text in the function; None when no token
        starts there."""
        for t in self.tokens:
            if t.offset == offset:
                return t.text, self._offsets(t.text).index(offset)
        return None

    def offset_of(self, text: str, k: int) -> int | None:
        """The offset of the ``k``-th token ``text`` of the function."""
        offsets = self._offsets(text)
        return offsets[k] if 0 <= k < len(offsets) else None

    def _offsets(self, text: str) -> list[int]:
        if text not in self._by_text:
            self._by_text[text] = [t.offset for t in self.tokens if t.text == text]
        return self._by_text[text]


@dataclass
class Layout:
    """The input's functions in order, and a line index of its text."""

    functions: list[FuncText]
    line_starts: list[int]

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based ``(line, column)`` of a character offset."""
        i = bisect.bisect_right(self.line_starts, offset) - 1
        return i + 1, offset - self.line_starts[i] + 1


def _kind(c: str) -> str:
    """The kind of a token that starts with character ``c``."""
    if c in _KIND:
        return _KIND[c]
    if c.isspace():
        return "ws"
    if c == "/":
        return "comment"
    if c.isdigit():
        return "num"
    if c.isalpha() or c == "_":
        return "ident"
    return "punct"


def _tokens(text: str) -> list[Token] | None:
    """The tokens of ``text`` without whitespace and comments, or None when
    a character is not part of any token (then the tokens' lengths do not
    add up to the text's)."""
    out: list[Token] = []
    pos = 0
    kinds: dict[str, str] = {}
    for tok in _TOKEN_RE.findall(text):
        c = tok[0]
        kind = kinds.get(c) or kinds.setdefault(c, _kind(c))
        if kind != "ws" and kind != "comment":
            out.append(Token(kind, tok, pos))
        pos += len(tok)
    return out if pos == len(text) else None


def _matching(tokens: list[Token], i: int) -> int | None:
    """Index of the bracket closing ``tokens[i]`` (``(``, ``{`` or ``[``)."""
    stack: list[str] = []
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t in _OPEN and tokens[j].kind == "punct":
            stack.append(_OPEN[t])
        elif t in (")", "}", "]") and tokens[j].kind == "punct":
            if not stack or stack.pop() != t:
                return None
            if not stack:
                return j
    return None


def _split_top(tokens: list[Token]) -> list[tuple[str, list[Token]]] | None:
    """The top-level items: ``("alias", tokens)`` and ``("func", tokens)``."""
    if len(tokens) >= 2 and tokens[0].text in ("module", "builtin.module") and tokens[1].text == "{":
        end = _matching(tokens, 1)
        if end != len(tokens) - 1:
            return None
        tokens = tokens[2:end]
    items: list[tuple[str, list[Token]]] = []
    i = 0
    while i < len(tokens):
        if _is_alias_def(tokens, i):
            j = i + 2
            while j < len(tokens) and not (tokens[j].text == "func.func" or _is_alias_def(tokens, j)):
                if tokens[j].kind == "punct" and tokens[j].text in _OPEN:
                    close = _matching(tokens, j)
                    if close is None:
                        return None
                    j = close
                j += 1
            items.append(("alias", tokens[i:j]))
            i = j
        elif tokens[i].text == "func.func":
            body = _body_start(tokens, i)
            end = None if body is None else _matching(tokens, body)
            if end is None:
                return None
            items.append(("func", tokens[i : end + 1]))
            i = end + 1
        else:
            return None
    return items


def _is_alias_def(tokens: list[Token], j: int) -> bool:
    return tokens[j].kind in ("hash", "bang") and j + 1 < len(tokens) and tokens[j + 1].text == "="


def _body_start(tokens: list[Token], i: int) -> int | None:
    """Index of the ``{`` that opens the body of the function at ``i``: the
    first ``{`` outside parentheses and brackets (argument and result
    attribute dictionaries) that does not follow ``attributes``."""
    depth, j = 0, i + 1
    while j < len(tokens):
        t = tokens[j]
        if t.kind == "punct" and t.text in ("(", "["):
            depth += 1
        elif t.kind == "punct" and t.text in (")", "]"):
            depth -= 1
        elif t.kind == "punct" and t.text == "{" and depth == 0:
            if tokens[j - 1].text != "attributes":
                return j
            close = _matching(tokens, j)
            if close is None:
                return None
            j = close
        j += 1
    return None


def _func(tokens: list[Token], aliases: dict[str, list[Token]]) -> FuncText | None:
    i = 1
    if i < len(tokens) and tokens[i].text in ("private", "public", "nested"):
        i += 1
    if i + 1 >= len(tokens) or tokens[i].kind != "sym" or tokens[i + 1].text != "(":
        return None
    name = tokens[i].text[1:]
    args_end = _matching(tokens, i + 1)
    if args_end is None:
        return None
    arg_names = _arg_names(tokens[i + 2 : args_end])
    if arg_names is None:
        return None
    for j, t in enumerate(tokens):
        if t.kind == "sym" and j != i:
            return None  # a reference to another symbol: a call
        if t.kind == "ident" and t.text == "loc" and j + 1 < len(tokens) and tokens[j + 1].text == "(":
            return None  # explicit locations
    f = FuncText(name, tokens, arg_names)
    f.key = _key(tokens, i, aliases)
    return f


def _arg_names(tokens: list[Token]) -> tuple[str | None, ...] | None:
    """Per argument of ``(args)``: its tensor name (module docstring), or None
    for an argument without a name xDSL keeps as is.  None when an argument is
    not of the form ``%name : type [{attrs}]``."""
    names: list[str | None] = []
    depth, start = 0, 0
    pieces: list[list[Token]] = []
    for j, t in enumerate(tokens):
        if t.kind == "punct" and t.text in ("(", "[", "{", "<"):
            depth += 1
        elif t.kind == "punct" and t.text in (")", "]", "}", ">"):
            depth -= 1
        elif t.text == "," and depth == 0:
            pieces.append(tokens[start:j])
            start = j + 1
    if tokens:
        pieces.append(tokens[start:])
    for piece in pieces:
        if len(piece) < 3 or piece[0].kind != "ssa" or piece[1].text != ":":
            return None
        ssa = piece[0].text[1:]
        if not _NAME_RE.fullmatch(ssa):
            return None  # numeric or unusual names: let the parser name them
        hint = ssa[: m.start()] if (m := _SUFFIX_RE.search(ssa)) else ssa  # xDSL drops a `_<digits>` suffix
        names.append(_rngd_name(piece) or hint or None)
    return tuple(names)


def _rngd_name(piece: list[Token]) -> str | None:
    for j, t in enumerate(piece[:-2]):
        if t.text == "rngd.name" and piece[j + 1].text == "=" and piece[j + 2].kind == "string":
            value = piece[j + 2].text[1:-1]
            if not _RNGD_NAME_RE.fullmatch(value):
                raise _NotSimple
            return value
    return None


class _NotSimple(Exception):
    """An input outside what :func:`layout` reads (caught there)."""


def _alias_refs(tokens: list[Token]) -> Iterator[str]:
    for t in tokens:
        if t.kind in ("hash", "bang"):
            yield t.text


def _key(tokens: list[Token], name_index: int, aliases: dict[str, list[Token]]) -> str:
    numbering: dict[str, str] = {}
    parts: list[str] = []
    for j, t in enumerate(tokens):
        if j == name_index:
            parts.append("@")
        elif t.kind == "ssa":
            base, _, index = t.text.partition("#")
            parts.append(numbering.setdefault(base, f"%{len(numbering)}") + (f"#{index}" if index else ""))
        else:
            parts.append(t.text)
    used: list[str] = []
    todo = list(_alias_refs(tokens))
    while todo:
        a = todo.pop()
        if a in aliases and a not in used:
            used.append(a)
            todo.extend(_alias_refs(aliases[a]))
    for a in sorted(used):
        parts.append("\0" + " ".join(t.text for t in aliases[a]))
    return "\x1f".join(parts)


def layout(text: str) -> Layout | None:
    """The input's layout (module docstring), or None when the input is not
    of the simple shape :mod:`fetchc.compile_cache` handles.  Raises
    nothing."""
    tokens = _tokens(text)
    if not tokens:
        return None
    try:
        items = _split_top(tokens)
        if items is None:
            return None
        aliases = {toks[0].text: toks for kind, toks in items if kind == "alias"}
        functions: list[FuncText] = []
        for kind, toks in items:
            if kind == "func":
                f = _func(toks, aliases)
                if f is None:
                    return None
                functions.append(f)
    except _NotSimple:
        return None
    if not functions or len({f.name for f in functions}) != len(functions):
        return None
    starts = [0, *(m.end() for m in _LINE_BREAK_RE.finditer(text))]
    return Layout(functions, starts)
