"""The top-level layout of an MLIR input, read from its tokens without parsing
it: the ``func.func`` ops, the aliases they use, and a name-free fingerprint of
each function, for the kernel compile cache (:mod:`fetchc.compile_cache`).

:func:`layout` accepts only a simple, common shape of input and returns
``None`` for anything else (the caller then compiles normally, so nothing
here ever decides what an input means):

* top level: ``#alias = ...`` / ``!alias = ...`` definitions and
  ``func.func`` ops in the custom form, or the definitions followed by one
  unnamed ``module { ... }`` (or ``builtin.module``) without attributes that
  holds only the functions (MLIR allows no alias definition inside it);
  comments and whitespace;
* an alias's value is one name, optionally with one balanced ``<...>``
  (``memref<...>``, ``affine_map<...>``, ``!fetch.stream<...>``, ``f32``,
  ``!other``); no alias is defined twice or used before its definition, and
  every alias is used by a function, directly or through another alias (an
  alias no function uses would be in no key, so a cache hit would never
  have parsed it);
* a function: ``func.func [private|public|nested] @name(args) [-> results]
  [attributes {...}] { body }``, ``name`` a bare identifier as xDSL lexes it
  (``[A-Za-z_][A-Za-z0-9_$.]*``); its body may refer to no other symbol
  (``@other``: a call), carries no explicit ``loc(...)``, its SSA names are
  ones xDSL's lexer reads whole (``%`` then digits, or
  ``[A-Za-z_$.-][A-Za-z0-9_$.-]*``, then an optional ``#N``; ``%1a`` is
  ``%1`` followed by ``a``), and its arguments are named ``%name`` with
  names xDSL keeps as they are;
* function names are unique.

For each function, :attr:`FuncText.key` is its token sequence with SSA names
replaced by their order of first appearance (``%w`` → ``%0``), its own name
blanked, whitespace and comments reduced to whether any stood between two
tokens (xDSL lexes ``1.5e-3`` as one token, ``1.5e -3`` as four; a comment
is whitespace to it), and the definitions of the aliases it uses
(transitively, written the same way) appended.  What the key erases is
checked above to be what xDSL reads the same way whatever it is, and
everything at the top level is in some function's key or fixed by the
shape above, so two functions with equal keys parse to the same IR up to
SSA names, the function name and locations, and an input whose functions
all have keys of functions compiled before is one an uncached compile
accepts; they compile to the same Fetch Unit programs, tables and MANIFEST
kernel up to names and locations (:func:`fetchc.compile_cache` re-stamps
those).

Positions: :meth:`FuncText.position` gives the ``(line, column)`` of the
``k``-th token of a given text in the function (lines and columns counted as
:class:`fetchc.frontend.locations.LineIndex` counts them: ``\\n``, ``\\r\\n`` and
a lone ``\\r`` end a line, columns count characters from 1), which is where
the parser locates the op named by that token.  Stdlib only.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass, field

__all__ = ["FuncText", "Layout", "layout"]

_TOKEN_RE = re.compile(
    r"""[ \t\r\n\f\v]+|//[^\n\r]*|"(?:[^"\\\n\r]|\\[^\n\r])*"|%[A-Za-z0-9_$.\-]+(?:\#[0-9]+)?"""
    r"""|@[A-Za-z_$.\-][\w$.\-]*|\#[A-Za-z_$.\-][\w$.\-]*|![A-Za-z_$.\-][\w$.\-]*|\^[\w$.\-]+"""
    r"""|[0-9][0-9A-Za-z_.]*|[A-Za-z_][\w$.\-]*|->|[(){}\[\]<>,:=*+\-?]"""
)
"""One token (whitespace and comments included); no groups, so that
``findall`` is fast.  What a token is follows from its text: ``%`` an SSA
name, ``@`` a symbol, ``#``/``!`` an alias or dialect attribute/type, ``"``
a string, a bracket or other punctuation as itself."""
_SKIP = frozenset(" \t\r\n\f\v")
_OPEN = {"(": ")", "{": "}", "[": "]"}
_CLOSE = frozenset(_OPEN.values())
_LINE_BREAK_RE = re.compile(r"\r\n?|\n")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE_ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
"""A symbol name as xDSL's lexer reads it after ``@`` (MLIR's bare-id; a
quoted name is not a token here)."""
_SUFFIX_RE = re.compile(r"_\d+$")
_RNGD_NAME_RE = re.compile(r"[^\\\x00-\x1f]*")


@dataclass
class FuncText:
    """One top-level ``func.func`` of the input (see the module docstring):
    its tokens (texts and character offsets, whitespace and comments left
    out)."""

    name: str
    texts: list[str]
    offsets: list[int]
    arg_names: tuple[str | None, ...]
    """Per argument: the tensor name the compiler gives it (``rngd.name``,
    else the SSA name as xDSL keeps it), or None (then ``arg<i>``)."""
    key: str = ""
    _by_text: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def start(self) -> int:
        """The offset of ``func.func``."""
        return self.offsets[0]

    @property
    def end(self) -> int:
        """The offset just after the closing ``}``."""
        return self.offsets[-1] + len(self.texts[-1])

    def occurrence(self, offset: int) -> tuple[str, int] | None:
        """``(token text, k)`` of the token starting at ``offset``: it is the
        ``k``-th token of that text in the function; None when no token
        starts there."""
        i = bisect.bisect_left(self.offsets, offset)
        if i == len(self.offsets) or self.offsets[i] != offset:
            return None
        text = self.texts[i]
        return text, self._offsets(text).index(offset)

    def offset_of(self, text: str, k: int) -> int | None:
        """The offset of the ``k``-th token ``text`` of the function."""
        offsets = self._offsets(text)
        return offsets[k] if 0 <= k < len(offsets) else None

    def _offsets(self, text: str) -> list[int]:
        found = self._by_text.get(text)
        if found is None:
            found = self._by_text[text] = [o for t, o in zip(self.texts, self.offsets, strict=False) if t == text]
        return found


@dataclass
class Layout:
    """The input's functions in order, and a line index of its text."""

    functions: list[FuncText]
    line_starts: list[int]

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based ``(line, column)`` of a character offset."""
        i = bisect.bisect_right(self.line_starts, offset) - 1
        return i + 1, offset - self.line_starts[i] + 1


def _tokens(text: str) -> tuple[list[str], list[int]] | None:
    """The tokens of ``text`` without whitespace and comments (their texts
    and offsets), or None when a character is not part of any token (then
    the tokens' lengths do not add up to the text's)."""
    all_tokens = _TOKEN_RE.findall(text)
    ends = list(itertools.accumulate(map(len, all_tokens)))
    if (ends[-1] if ends else 0) != len(text):
        return None
    keep = [i for i, t in enumerate(all_tokens) if not (t[0] in _SKIP or t.startswith("//"))]
    return [all_tokens[i] for i in keep], [ends[i] - len(all_tokens[i]) for i in keep]


def _is_ssa(t: str) -> bool:
    return t[0] == "%"


def _is_sym(t: str) -> bool:
    return t[0] == "@"


def _is_alias_ref(t: str) -> bool:
    return t[0] in "#!" and len(t) > 1


def _matching(
    texts: list[str], i: int, opening: dict[str, str] = _OPEN, closing: frozenset[str] = _CLOSE
) -> int | None:
    """Index of the bracket closing ``texts[i]`` (one of ``opening``: ``(``,
    ``{`` or ``[`` by default), or None when a bracket closes out of order or
    none does."""
    stack: list[str] = []
    for j in range(i, len(texts)):
        t = texts[j]
        if t in opening:
            stack.append(opening[t])
        elif t in closing:
            if not stack or stack.pop() != t:
                return None
            if not stack:
                return j
    return None


def _split_top(texts: list[str]) -> list[tuple[str, int, int]] | None:
    """The top-level items: ``("alias", lo, hi)`` and ``("func", lo, hi)``
    (token index ranges), in order.  Alias definitions may stand before an
    unnamed ``module {`` (MLIR allows them nowhere inside it) or, without
    one, between functions."""
    items: list[tuple[str, int, int]] = []
    i, hi = 0, len(texts)
    while i < hi and _is_alias_def(texts, i):
        j = _alias_end(texts, i)
        if j is None:
            return None
        items.append(("alias", i, j))
        i = j
    aliases_here = True
    if i < hi and texts[i] in ("module", "builtin.module"):
        if i + 1 >= hi or texts[i + 1] != "{" or _matching(texts, i + 1) != hi - 1:
            return None  # attributes, a name, or anything after the module
        i, hi, aliases_here = i + 2, hi - 1, False
    while i < hi:
        if aliases_here and _is_alias_def(texts, i):
            j = _alias_end(texts, i)
            if j is None:
                return None
            items.append(("alias", i, j))
            i = j
        elif texts[i] == "func.func":
            body = _body_start(texts, i, hi)
            end = None if body is None else _matching(texts, body)
            if end is None or end >= hi:
                return None
            items.append(("func", i, end + 1))
            i = end + 1
        else:
            return None
    return items


_ALIAS_OPEN = {"<": ">", "(": ")", "[": "]", "{": "}"}
_ALIAS_CLOSE = frozenset(_ALIAS_OPEN.values())


def _alias_end(texts: list[str], i: int) -> int | None:
    """The end (token index) of the alias definition at ``i`` when its value
    is one (possibly prefixed) name, optionally with one balanced ``<...>``
    (``memref<...>``, ``affine_map<...>``, ``!fetch.stream<...>``, ``f32``,
    ``!other``) and is followed by the next item or the end; else None."""
    j = i + 2
    if (
        j >= len(texts)
        or texts[j] in ("func.func", "module", "builtin.module")
        or not (texts[j][0] in "#!" or texts[j][0].isalpha() or texts[j][0] == "_")
    ):
        return None
    j += 1
    if j < len(texts) and texts[j] == "<":
        close = _matching(texts, j, _ALIAS_OPEN, _ALIAS_CLOSE)
        if close is None:
            return None
        j = close + 1
    if j < len(texts) and not (texts[j] in ("func.func", "module", "builtin.module", "}") or _is_alias_def(texts, j)):
        return None
    return j


def _is_alias_def(texts: list[str], j: int) -> bool:
    return _is_alias_ref(texts[j]) and j + 1 < len(texts) and texts[j + 1] == "="


def _body_start(texts: list[str], i: int, hi: int) -> int | None:
    """Index of the ``{`` that opens the body of the function at ``i``: the
    first ``{`` outside parentheses and brackets (argument and result
    attribute dictionaries) that does not follow ``attributes``."""
    depth, j = 0, i + 1
    while j < hi:
        t = texts[j]
        if t == "(" or t == "[":
            depth += 1
        elif t == ")" or t == "]":
            depth -= 1
        elif depth == 0 and t in ("=", "func.func", "module", "builtin.module"):
            return None  # a declaration without a body, then another item
        elif t == "{" and depth == 0:
            if texts[j - 1] != "attributes":
                return j
            close = _matching(texts, j)
            if close is None:
                return None
            j = close
        j += 1
    return None


def _func(texts: list[str], offsets: list[int], aliases: dict[str, str]) -> FuncText | None:
    i = 1
    if i < len(texts) and texts[i] in ("private", "public", "nested"):
        i += 1
    if i + 1 >= len(texts) or not _is_sym(texts[i]) or texts[i + 1] != "(":
        return None
    if not _BARE_ID_RE.fullmatch(texts[i], 1):
        return None  # xDSL lexes `@-.$` as an error, `@a-b` as `@a` `-` `b`
    args_end = _matching(texts, i + 1)
    if args_end is None:
        return None
    arg_names = _arg_names(texts[i + 2 : args_end])
    if arg_names is None:
        return None
    for j, t in enumerate(texts):
        if (j != i and _is_sym(t)) or (t == "loc" and j + 1 < len(texts) and texts[j + 1] == "("):
            return None  # a reference to another symbol (a call), or an explicit location
    key = _key(texts, offsets, i, aliases)
    return None if key is None else FuncText(texts[i][1:], texts, offsets, arg_names, key)


def _arg_names(texts: list[str]) -> tuple[str | None, ...] | None:
    """Per argument of ``(args)``: its tensor name (module docstring), or None
    for an argument without a name xDSL keeps as is.  None when an argument is
    not of the form ``%name : type [{attrs}]``."""
    pieces: list[list[str]] = []
    depth, start = 0, 0
    for j, t in enumerate(texts):
        if t in ("(", "[", "{", "<"):
            depth += 1
        elif t in (")", "]", "}", ">"):
            depth -= 1
        elif t == "," and depth == 0:
            pieces.append(texts[start:j])
            start = j + 1
    if texts:
        pieces.append(texts[start:])
    names: list[str | None] = []
    for piece in pieces:
        if len(piece) < 3 or not _is_ssa(piece[0]) or piece[1] != ":":
            return None
        ssa = piece[0][1:]
        if not _NAME_RE.fullmatch(ssa):
            return None  # numeric or unusual names: let the parser name them
        hint = ssa[: m.start()] if (m := _SUFFIX_RE.search(ssa)) else ssa  # xDSL drops a `_<digits>` suffix
        names.append(_rngd_name(piece) or hint or None)
    return tuple(names)


def _rngd_name(piece: list[str]) -> str | None:
    for j in range(len(piece) - 2):
        if piece[j] == "rngd.name" and piece[j + 1] == "=" and piece[j + 2][0] == '"':
            value = piece[j + 2][1:-1]
            if not _RNGD_NAME_RE.fullmatch(value):
                raise _NotSimple
            return value
    return None


class _NotSimple(Exception):
    """An input outside what :func:`layout` reads (caught there)."""


def _joined(parts: list[str], texts: list[str], offsets: list[int]) -> str:
    """``parts`` (``texts`` or their replacements) joined with one separator
    where whitespace or a comment stood between two tokens of ``texts`` and
    another where they touch: xDSL lexes ``1.5e-3`` as one float and
    ``1.5e -3`` as ``1.5`` ``e`` ``-`` ``3``, which this module's tokens do
    not tell apart."""
    out = [parts[0]]
    for j in range(1, len(parts)):
        out.append("\x1e" if offsets[j] == offsets[j - 1] + len(texts[j - 1]) else "\x1f")
        out.append(parts[j])
    return "".join(out)


def _key(texts: list[str], offsets: list[int], name_index: int, aliases: dict[str, str]) -> str | None:
    """The key (module docstring), or None when an SSA name is not one xDSL
    lexes as a whole: ``%1a`` is ``%1`` then ``a``."""
    numbering: dict[str, str] = {}
    parts = list(texts)
    parts[name_index] = "@"
    refs: list[str] = []
    for j, t in enumerate(parts):
        c = t[0]
        if c == "%":
            base, sep, index = t.partition("#")
            number = numbering.get(base)
            if number is None:
                if base[1].isdigit() and not base[1:].isdigit():
                    return None
                number = numbering[base] = f"%{len(numbering)}"
            parts[j] = number + sep + index
        elif c in "#!":
            refs.append(t)
    used = _used_aliases(refs, aliases)
    return _joined(parts, texts, offsets) + "".join("\0" + aliases[a] for a in sorted(used))


def _used_aliases(refs: list[str], aliases: dict[str, str]) -> set[str]:
    """The aliases of ``aliases`` (name → joined definition) that the
    tokens ``refs`` use, directly or through other aliases."""
    used: set[str] = set()
    while refs:
        a = refs.pop()
        if a in aliases and a not in used:
            used.add(a)
            refs.extend(_ALIAS_REF_RE.findall(aliases[a]))
    return used


_ALIAS_REF_RE = re.compile(r"[#!][^\x1e\x1f\0]+")


def layout(text: str) -> Layout | None:
    """The input's layout (module docstring), or None when the input is not
    of the simple shape :mod:`fetchc.compile_cache` handles.  Raises
    nothing."""
    found = _tokens(text)
    if not found or not found[0]:
        return None
    texts, offsets = found
    try:
        items = _split_top(texts)
        if items is None:
            return None
        aliases = _aliases(texts, offsets, items)
        if aliases is None:
            return None
        functions: list[FuncText] = []
        for kind, lo, hi in items:
            if kind == "func":
                f = _func(texts[lo:hi], offsets[lo:hi], aliases)
                if f is None:
                    return None
                functions.append(f)
    except _NotSimple:
        return None
    if not functions or len({f.name for f in functions}) != len(functions):
        return None
    if _used_aliases([t for f in functions for t in f.texts if _is_alias_ref(t)], aliases) != aliases.keys():
        return None  # an alias no function uses is in no key: it would never be parsed
    starts = [0, *(m.end() for m in _LINE_BREAK_RE.finditer(text))]
    return Layout(functions, starts)


def _aliases(texts: list[str], offsets: list[int], items: list[tuple[str, int, int]]) -> dict[str, str] | None:
    """The alias definitions of ``items`` (name → the definition's joined
    tokens), or None when an alias is defined twice or used (by a function
    or another alias) before its definition: errors an uncached compile
    reports, and which no key would show."""
    defined_at = {}
    for kind, lo, _ in items:
        if kind == "alias":
            if texts[lo] in defined_at:
                return None
            defined_at[texts[lo]] = lo
    for kind, lo, hi in items:
        for j in range(lo + (2 if kind == "alias" else 0), hi):
            if _is_alias_ref(texts[j]) and defined_at.get(texts[j], -1) >= lo:
                return None
    return {texts[lo]: _joined(texts[lo:hi], texts[lo:hi], offsets[lo:hi]) for kind, lo, hi in items if kind == "alias"}
