"""A kernel's IR written down exactly, up to its names and locations: the
kernel compile cache's key (:mod:`fetchc.compile_cache`).

:func:`kernel_key` walks a parsed (and verified) ``func.func`` and writes a
byte string from which the function can be rebuilt, except for what the
cache re-stamps from the input being compiled:

* **erased**: the function's own name (its ``sym_name``; a
  ``SymbolRefAttr`` to it inside the function is written as "this
  function"), every SSA name hint (values and blocks are numbered in order
  of first appearance instead), each argument's ``rngd.name`` when it is a
  non-empty string (a top-level key of that argument's attribute
  dictionary only: ``{foo = {rngd.name = "z"}}`` keeps its ``"z"``), and the
  file names, lines and columns of locations;
* **kept**: everything else, as the objects the parser built, whatever
  spelling the text used (quoted or bare keys, aliases, the generic form,
  ``loc(...)`` or ``#loc`` aliases all give the same objects): every op's
  class and name, operand and successor numbering, result and block
  argument types, properties and attributes (dictionaries in their order),
  regions and blocks, and the *shape* of every location (which of
  ``FileLineColLoc``, ``UnknownLoc``, ``NameLoc``, ``CallSiteLoc``,
  ``FusedLoc`` it is, nested how: that decides whether a location has a
  ``file:line:col`` and which one, :func:`fetchc.frontend.locations.location_of`).

**Injective by construction.**  Every item is written with a one-byte tag
and a length or terminator (a prefix-free code), attributes recursively
as their class (module, qualified name, IRDL name) and their parameters or
data, Python values by type (``int``, ``bool``, ``str``, ``bytes``,
``float`` as its 8 IEEE bytes, so ``-0.0`` differs from ``0.0`` and each NaN
payload from the others; tuples, mappings in their order, sets sorted by
their writing, enums, dataclasses such as ``AffineMap`` field by field; a
subclass with its class).  A value of any other type raises
:class:`Unkeyable` rather than being written ambiguously.  So two functions
with the same key are equal as IR except for what is erased: a compile
cannot tell them apart except through their names and locations.

Nothing here knows fetchc's dialects; xDSL's ``builtin`` location and
symbol attributes only.
"""

from __future__ import annotations

import dataclasses
import enum
import struct
from collections.abc import Callable, Mapping
from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    DictionaryAttr,
    FileLineColLoc,
    FusedLoc,
    NameLoc,
    StringAttr,
    SymbolRefAttr,
    UnknownLoc,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Data, Operation, ParametrizedAttribute, SSAValue

__all__ = ["Memo", "Unkeyable", "kernel_key"]

_NAME_ATTR = "rngd.name"  # fetchc.kernel.NAME_ATTR (this module imports nothing of fetchc)
_DOUBLE = struct.Struct("<d")


class Unkeyable(Exception):
    """The function holds something :func:`kernel_key` cannot write down
    exactly (a Python value of an unknown type inside an attribute, a value
    used but not defined in the function): the cache compiles it normally."""


class Memo:
    """Attributes already written, by identity (equal attributes such as
    ``0.0`` and ``-0.0`` must not share an encoding), shared by the keys of
    one module's functions (the parser shares attribute objects between
    them); it holds the attributes, so an identity stays theirs.  Only
    writings that do not depend on the function's name are shared."""

    def __init__(self) -> None:
        self.written: dict[int, bytes] = {}
        self.keep: list[Attribute] = []


def kernel_key(func: FuncOp, memo: Memo | None = None) -> tuple[bytes, list[Operation]]:
    """``(key, ops)``: the key of ``func`` (module docstring) and its ops in
    the order the key writes them (``func`` first, then pre-order: each op
    before its regions, blocks in order).  The kernel compile cache records
    a program's location as an index into ``ops``.  ``memo``: shared by the
    functions of one module (only while their attributes live).  Raises
    :class:`Unkeyable`."""
    writer = _Writer(func.sym_name.data, memo or Memo())
    return writer.function(func), writer.ops


class _Writer:
    """One key being written: the chunks, the value and block numbers, the
    attributes already written (:class:`Memo`; those whose writing names
    the function only here), the ops in order."""

    def __init__(self, own_name: str, memo: Memo) -> None:
        self.own_name = own_name
        self.out: list[bytes] = []
        self.values: dict[SSAValue, int] = {}
        self.defined: set[int] = set()
        self.blocks: dict[Block, int] = {}
        self.memo = memo
        self.local: dict[int, bytes] = {}
        self.symbol_refs = 0  # SymbolRefAttrs written so far: their writing depends on own_name
        self.ops: list[Operation] = []

    # -- the IR ------------------------------------------------------------

    def function(self, func: FuncOp) -> bytes:
        self.op(func, top=True)
        if not self.defined.issuperset(self.values.values()):
            raise Unkeyable("a value used in the function is not defined in it")
        return b"".join(self.out)

    def value(self, v: SSAValue, define: bool) -> None:
        n = self.values.setdefault(v, len(self.values))
        if define:
            self.defined.add(n)
        self.out.append(b"v%d;" % n)

    def block_ref(self, b: Block) -> None:
        self.out.append(b"b%d;" % self.blocks.setdefault(b, len(self.blocks)))

    def op(self, op: Operation, top: bool = False) -> None:
        out = self.out
        self.ops.append(op)
        out.append(b"O")
        out.append(self.cls(type(op)))
        out.append(_str(op.name))
        out.append(self.loc(op.location))
        out.append(b"o%d;" % len(op.operands))
        for v in op.operands:
            self.value(v, False)
        out.append(b"r%d;" % len(op.results))
        for r in op.results:
            self.value(r, True)
            out.append(self.attr(r.type))
        for tag, attrs in ((b"P", op.properties), (b"A", op.attributes)):
            out.append(tag + b"%d;" % len(attrs))
            for name, value in attrs.items():
                out.append(_str(name))
                if top and name == "sym_name":
                    out.append(b"S")  # the function's own name: erased
                elif top and name == "arg_attrs" and isinstance(value, ArrayAttr):
                    self.arg_attrs(value)
                else:
                    out.append(self.attr(value))
        out.append(b"s%d;" % len(op.successors))
        for b in op.successors:
            self.block_ref(b)
        out.append(b"g%d;" % len(op.regions))
        for region in op.regions:
            blocks = list(region.blocks)
            out.append(b"k%d;" % len(blocks))
            for block in blocks:
                self.block_ref(block)
                out.append(b"a%d;" % len(block.args))
                for a in block.args:
                    self.value(a, True)
                    out.append(self.attr(a.type))
                    out.append(self.loc(a.location))
                ops = list(block.ops)
                out.append(b"n%d;" % len(ops))
                for inner in ops:
                    self.op(inner)

    def arg_attrs(self, value: ArrayAttr) -> None:
        """The function's argument attribute dictionaries, each argument's
        ``rngd.name`` string erased."""
        out = self.out
        out.append(b"X%d;" % len(value.data))
        for d in value.data:
            if not isinstance(d, DictionaryAttr):
                out.append(self.attr(d))
                continue
            out.append(b"D%d;" % len(d.data))
            for k, v in d.data.items():
                out.append(_str(k))
                out.append(b"R" if k == _NAME_ATTR and isinstance(v, StringAttr) and v.data else self.attr(v))

    def loc(self, loc: Attribute) -> bytes:
        """A location's shape: its kinds and nesting, without file names,
        lines, columns or ``NameLoc`` names; a location of another kind is
        written whole."""
        if isinstance(loc, FileLineColLoc):
            return b"lF"
        if isinstance(loc, UnknownLoc):
            return b"lU"
        if isinstance(loc, NameLoc):
            return b"lN" + self.loc(loc.location)
        if isinstance(loc, CallSiteLoc):
            return b"lC" + self.loc(loc.callee) + self.loc(loc.caller)
        if isinstance(loc, FusedLoc) and isinstance(loc.locations, ArrayAttr):
            parts = loc.locations.data
            return b"lX%d;" % len(parts) + b"".join(self.loc(p) for p in parts) + self.attr(loc.metadata)
        return b"l?" + self.attr(loc)

    # -- attributes and Python values --------------------------------------

    def attr(self, a: Attribute) -> bytes:
        found = self.memo.written.get(id(a))
        if found is not None:
            return found
        found = self.local.get(id(a))
        if found is not None:
            self.symbol_refs += 1  # what holds it depends on the function too
            return found
        refs = self.symbol_refs
        if isinstance(a, SymbolRefAttr):
            self.symbol_refs += 1
        if isinstance(a, SymbolRefAttr) and a.root_reference.data == self.own_name:
            text = b"Z" + self.py(a.nested_references)  # a reference to this function: its name is erased
        elif isinstance(a, Data):
            text = b"d" + self.cls(type(a)) + self.py(a.data)
        elif isinstance(a, ParametrizedAttribute):
            params = a.parameters
            text = b"p" + self.cls(type(a)) + b"%d;" % len(params) + b"".join(self.py(p) for p in params)
        else:
            raise Unkeyable(f"an attribute of class {type(a).__qualname__}")
        if self.symbol_refs == refs:
            self.memo.written[id(a)] = text
            self.memo.keep.append(a)
        else:
            self.local[id(a)] = text  # holds a symbol reference: for this function only
        return text

    def cls(self, c: type) -> bytes:
        found = _CLASSES.get(c)
        if found is None:
            found = _CLASSES[c] = _str(f"{c.__module__}.{c.__qualname__}") + _str(str(getattr(c, "name", "")))
        return found

    def py(self, x: object) -> bytes:
        writer = _PY.get(type(x))
        if writer is not None:
            return writer(self, x)
        if isinstance(x, Attribute):
            return self.attr(x)
        if isinstance(x, enum.Enum):
            return b"e" + self.cls(type(x)) + self.py(x.value)
        if isinstance(x, Mapping):  # xDSL's immutabledict (DictionaryAttr): in its order
            return b"M" + self.cls(type(x)) + _dict(self, x)
        if isinstance(x, (tuple, list)):
            return b"Q" + self.cls(type(x)) + _seq(b"(")(self, x)
        if isinstance(x, (set, frozenset)):
            items = sorted(self.py(item) for item in x)
            return b"W" + self.cls(type(x)) + b"%d;" % len(items) + b"".join(items)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            fs = dataclasses.fields(x)
            return b"c" + self.cls(type(x)) + b"%d;" % len(fs) + b"".join(self.py(getattr(x, f.name)) for f in fs)
        raise Unkeyable(f"a value of type {type(x).__qualname__}")


_CLASSES: dict[type, bytes] = {}
"""The writing of each class (module, qualified name, IRDL name)."""


def _str(s: str) -> bytes:
    data = s.encode("utf-8", "surrogatepass")
    return b"t%d:" % len(data) + data


def _seq(tag: bytes) -> Callable[[_Writer, Any], bytes]:
    def write(w: _Writer, x) -> bytes:
        return tag + b"%d;" % len(x) + b"".join(w.py(item) for item in x)

    return write


def _dict(w: _Writer, x) -> bytes:
    return b"{%d;" % len(x) + b"".join(w.py(k) + w.py(v) for k, v in x.items())


def _bytes(w: _Writer, x) -> bytes:
    return b"y%d:" % len(x) + bytes(x)


_PY: dict[type, Callable[[_Writer, Any], bytes]] = {
    type(None): lambda w, x: b"N",
    bool: lambda w, x: b"T" if x else b"F",
    int: lambda w, x: b"i%d;" % x,
    float: lambda w, x: b"f" + _DOUBLE.pack(x),
    str: lambda w, x: _str(x),
    bytes: _bytes,
    tuple: _seq(b"("),
    list: _seq(b"["),
    dict: _dict,
}
"""Writers of exact Python types (a subclass such as an ``IntEnum`` is
written by :meth:`_Writer.py`'s own rules, with its class)."""
