"""POSIX extended regular expressions in linear time, for
``--verify-diagnostics``' ``expected-*-re`` (ir.md §5).

MLIR compiles an ``expected-error-re`` pattern with ``llvm::Regex``, which is
POSIX ERE (BSD ``regcomp`` with ``REG_EXTENDED``).  Python's ``re`` is a
different dialect (``[[:alpha:]]`` is a nested set to it, with a
``FutureWarning``) and a backtracking engine: ``(.*)*(.*)*(.*)*X`` against a
long message runs for minutes.  This module parses ERE itself and matches it
by simulating the automaton (Thompson's construction, a Pike VM): time
``O(len(text) × len(program))`` whatever the pattern, no backtracking.

The dialect (what ``llvm::Regex`` takes):

* ordinary characters; ``.`` (any character); ``^`` and ``$`` (start and end
  of the message); ``\\c`` is the character ``c`` itself;
* ``[...]`` and ``[^...]`` bracket expressions: characters, ranges ``a-z``,
  ``]`` first is literal, ``-`` first or last is literal, a backslash is
  literal, classes ``[:alpha:]`` ``[:digit:]`` ``[:alnum:]`` ``[:upper:]``
  ``[:lower:]`` ``[:space:]`` ``[:blank:]`` ``[:punct:]`` ``[:print:]``
  ``[:graph:]`` ``[:cntrl:]`` ``[:xdigit:]`` (ASCII, the C locale), ``[.c.]``
  and ``[=c=]`` for one character;
* groups ``(...)``, alternation ``|``, repetition ``*`` ``+`` ``?``
  ``{m}`` ``{m,}`` ``{m,n}`` (counts up to 255, ``RE_DUP_MAX``).

Characters are Unicode code points (``llvm::Regex`` sees UTF-8 bytes: ``.``
matches one byte there; fetchc's messages are ASCII).  Errors are
:class:`RegexError` with ``regerror``'s wording (``parentheses not
balanced``, ``invalid character class``...); a pattern whose automaton would
exceed :data:`MAX_PROGRAM` instructions (counted repetitions multiply) is
``regular expression too big``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MAX_PROGRAM", "Regex", "RegexError", "compile_ere", "compile_expected"]

MAX_PROGRAM = 100_000
"""Most instructions of a compiled pattern: bounds compile time, memory and
the matching cost per character."""
_DUP_MAX = 255
_MAX_DEPTH = 200

_CLASSES: dict[str, Callable[[str], bool]] = {
    "alpha": lambda c: c.isascii() and c.isalpha(),
    "digit": lambda c: "0" <= c <= "9",
    "alnum": lambda c: c.isascii() and c.isalnum(),
    "upper": lambda c: "A" <= c <= "Z",
    "lower": lambda c: "a" <= c <= "z",
    "space": lambda c: c in " \t\n\r\f\v",
    "blank": lambda c: c in " \t",
    "punct": lambda c: c.isascii() and 0x21 <= ord(c) <= 0x7E and not c.isalnum(),
    "print": lambda c: 0x20 <= ord(c) <= 0x7E,
    "graph": lambda c: 0x21 <= ord(c) <= 0x7E,
    "cntrl": lambda c: ord(c) < 0x20 or ord(c) == 0x7F,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}


class RegexError(ValueError):
    """A pattern ``llvm::Regex`` would reject (or one too big to match in
    bounded time); the message is ``regerror``'s."""


# --------------------------------------------------------------------------
# Parsing: pattern text -> tree
# --------------------------------------------------------------------------
# Nodes: ("set", test) one character; ("bol",); ("eol",); ("cat", [nodes]);
# ("alt", [nodes]); ("rep", node, min, max or None); ("empty",).


@dataclass
class _Parser:
    text: str
    pos: int = 0
    depth: int = 0

    def peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def take(self) -> str:
        c = self.text[self.pos]
        self.pos += 1
        return c

    def alternation(self) -> tuple:
        branches = [self.branch()]
        while self.peek() == "|":
            self.take()
            branches.append(self.branch())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def branch(self) -> tuple:
        pieces = []
        while self.peek() not in (None, "|", ")"):
            pieces.append(self.piece())
        if not pieces:
            unbalanced = self.peek() is None and self.depth > 0 or self.peek() == ")" and self.depth == 0
            raise RegexError("parentheses not balanced" if unbalanced else "empty (sub)expression")
        return pieces[0] if len(pieces) == 1 else ("cat", pieces)

    def piece(self) -> tuple:
        atom = self.atom()
        while self.peek() in ("*", "+", "?", "{"):
            c = self.peek()
            if c == "{" and not self._count_follows():
                break
            self.take()
            if c == "*":
                atom = ("rep", atom, 0, None)
            elif c == "+":
                atom = ("rep", atom, 1, None)
            elif c == "?":
                atom = ("rep", atom, 0, 1)
            else:
                lo, hi = self.counts()
                atom = ("rep", atom, lo, hi)
        return atom

    def _count_follows(self) -> bool:
        nxt = self.text[self.pos + 1 : self.pos + 2]
        return nxt.isdigit() and nxt.isascii()

    def number(self) -> int:
        start = self.pos
        while (c := self.peek()) is not None and c.isascii() and c.isdigit():
            self.take()
        if start == self.pos:
            raise RegexError("invalid repetition count(s)")
        n = int(self.text[start : self.pos][:6])
        if n > _DUP_MAX:
            raise RegexError("invalid repetition count(s)")
        return n

    def counts(self) -> tuple[int, int | None]:
        lo = self.number()
        hi: int | None = lo
        if self.peek() == ",":
            self.take()
            hi = None if self.peek() == "}" else self.number()
        if self.peek() != "}":
            raise RegexError("braces not balanced")
        self.take()
        if hi is not None and hi < lo:
            raise RegexError("invalid repetition count(s)")
        return lo, hi

    def atom(self) -> tuple:
        c = self.take()
        if c == "(":
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise RegexError("parentheses nested too deeply")
            if self.peek() == ")":
                raise RegexError("empty (sub)expression")
            inner = self.alternation()
            if self.peek() != ")":
                raise RegexError("parentheses not balanced")
            self.take()
            self.depth -= 1
            return inner
        if c in "*+?":
            raise RegexError("repetition-operator operand invalid")
        if c == "{" and self._count_at(self.pos):
            raise RegexError("repetition-operator operand invalid")
        if c == ".":
            return ("set", lambda ch: True)
        if c == "^":
            return ("bol",)
        if c == "$":
            return ("eol",)
        if c == "[":
            return ("set", self.bracket())
        if c == "\\":
            if self.peek() is None:
                raise RegexError("trailing backslash (\\)")
            c = self.take()
        return ("set", _literal(c))

    def _count_at(self, i: int) -> bool:
        nxt = self.text[i : i + 1]
        return nxt.isdigit() and nxt.isascii()

    def bracket(self) -> Callable[[str], bool]:
        negate = self.peek() == "^"
        if negate:
            self.take()
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        tests: list[Callable[[str], bool]] = []
        first = True
        while True:
            c = self.peek()
            if c is None:
                raise RegexError("brackets ([ ]) not balanced")
            if c == "]" and not first:
                self.take()
                break
            first = False
            lo = self.bracket_element(tests)
            if lo is None:
                continue
            if self.peek() == "-" and self.text[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.take()
                hi = self.bracket_element(tests)
                if hi is None or hi < lo:
                    raise RegexError("invalid character range")
                ranges.append((lo, hi))
            else:
                chars.add(lo)
        frozen, spans, classes = frozenset(chars), tuple(ranges), tuple(tests)

        def test(ch: str) -> bool:
            hit = ch in frozen or any(a <= ch <= b for a, b in spans) or any(t(ch) for t in classes)
            return hit != negate

        return test

    def bracket_element(self, tests: list[Callable[[str], bool]]) -> str | None:
        """One element of a bracket expression: its character, or None for a
        class (added to ``tests``)."""
        c = self.take()
        if c == "[" and self.peek() in (":", ".", "="):
            kind = self.take()
            end = self.text.find(kind + "]", self.pos)
            if end < 0:
                raise RegexError("brackets ([ ]) not balanced")
            name = self.text[self.pos : end]
            self.pos = end + 2
            if kind == ":":
                if name not in _CLASSES:
                    raise RegexError("invalid character class")
                tests.append(_CLASSES[name])
                return None
            if len(name) != 1:
                raise RegexError("invalid collating element")
            return name
        return c


def _literal(c: str) -> Callable[[str], bool]:
    return lambda ch: ch == c


# --------------------------------------------------------------------------
# Compiling: tree -> instructions
# --------------------------------------------------------------------------
# ("set", test) | ("split", a, b) | ("jmp", a) | ("bol",) | ("eol",) | ("match",)


class _Compiler:
    def __init__(self) -> None:
        self.prog: list[list] = []

    def emit(self, *ins) -> int:
        if len(self.prog) >= MAX_PROGRAM:
            raise RegexError("regular expression too big")
        self.prog.append(list(ins))
        return len(self.prog) - 1

    def node(self, n: tuple) -> None:
        kind = n[0]
        if kind in ("set", "bol", "eol"):
            self.emit(*n)
        elif kind == "cat":
            for part in n[1]:
                self.node(part)
        elif kind == "alt":
            self.alt(n[1])
        else:
            self.rep(n[1], n[2], n[3])

    def alt(self, branches: list[tuple]) -> None:
        jumps = []
        for i, b in enumerate(branches):
            if i < len(branches) - 1:
                split = self.emit("split", 0, 0)
                self.prog[split][1] = len(self.prog)
                self.node(b)
                jumps.append(self.emit("jmp", 0))
                self.prog[split][2] = len(self.prog)
            else:
                self.node(b)
        for j in jumps:
            self.prog[j][1] = len(self.prog)

    def rep(self, body: tuple, lo: int, hi: int | None) -> None:
        for _ in range(lo):
            self.node(body)
        if hi is None:
            split = self.emit("split", 0, 0)
            self.prog[split][1] = len(self.prog)
            self.node(body)
            self.emit("jmp", split)
            self.prog[split][2] = len(self.prog)
            return
        ends = []
        for _ in range(hi - lo):
            split = self.emit("split", 0, 0)
            self.prog[split][1] = len(self.prog)
            ends.append(split)
            self.node(body)
        for split in ends:
            self.prog[split][2] = len(self.prog)


class Regex:
    """A compiled pattern; :meth:`search` is linear in the text's length."""

    def __init__(self, tree: tuple):
        c = _Compiler()
        c.node(tree)
        c.emit("match")
        self._prog = [tuple(i) for i in c.prog]

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text`` (as
        ``llvm::Regex::match`` does, unanchored but for ``^`` / ``$``)."""
        n = len(text)
        seen = [-1] * len(self._prog)  # seen[pc] == pos: pc is in the thread list of position pos
        current: list[int] = []
        for pos in range(n + 1):
            if self._add(0, pos, n, seen, current):  # a match may start here
                return True
            if pos == n:
                return False
            ch = text[pos]
            nxt: list[int] = []
            for pc in current:
                if self._prog[pc][1](ch) and self._add(pc + 1, pos + 1, n, seen, nxt):
                    return True
            current = nxt
        return False

    def _add(self, pc: int, pos: int, n: int, seen: list[int], out: list[int]) -> bool:
        """Add the thread at ``pc`` and its epsilon closure at text position
        ``pos`` to ``out`` (``set`` instructions only); True when the
        closure reaches ``match``."""
        prog = self._prog
        stack = [pc]
        while stack:
            pc = stack.pop()
            if seen[pc] == pos:
                continue
            seen[pc] = pos
            ins = prog[pc]
            op = ins[0]
            if op == "set":
                out.append(pc)
            elif op == "match":
                return True
            elif op == "jmp":
                stack.append(ins[1])
            elif op == "split":
                stack.append(ins[2])
                stack.append(ins[1])
            elif (op == "bol" and pos == 0) or (op == "eol" and pos == n):
                stack.append(pc + 1)
        return False


def _parse(text: str) -> tuple:
    p = _Parser(text)
    tree = p.alternation()
    if p.pos < len(text):  # a ')' without its '('
        raise RegexError("parentheses not balanced")
    return tree


def compile_ere(pattern: str) -> Regex:
    """Compile a POSIX extended regular expression (module docstring).
    Raises :class:`RegexError`."""
    return Regex(_parse(pattern))


def compile_expected(text: str) -> Regex:
    """MLIR's ``-re`` form: literal text with ``{{regex}}`` blocks, each
    block an ERE (a group of its own), the literal parts matched as they
    are.  Raises :class:`RegexError`: ``found start of regex with no end
    '}}'``, or ``invalid regex: <reason>``."""
    parts: list[tuple] = []
    rest = text
    while rest:
        start = rest.find("{{")
        literal = rest if start == -1 else rest[:start]
        parts += [("set", _literal(c)) for c in literal]
        if start == -1:
            break
        rest = rest[start + 2 :]
        end = rest.find("}}")
        if end == -1:
            raise RegexError("found start of regex with no end '}}'")
        try:
            parts.append(_parse(rest[:end]))
        except RegexError as e:
            raise RegexError(f"invalid regex: {e}") from None
        rest = rest[end + 2 :]
    try:
        return Regex(("cat", parts))
    except RegexError as e:  # too big, once the blocks are put together
        raise RegexError(f"invalid regex: {e}") from None
