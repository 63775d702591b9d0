"""What fetchc's dialects share to avoid repeated work: interned attributes
and per-op memos.

* **Interned attributes** (:func:`i64_attr`, :func:`i32_attr`,
  :func:`i64_array`): one object per value.  xDSL attributes are immutable
  values, equal by value, and building one runs its verifier (an
  ``IntegerAttr`` costs about 6 µs, a ``DenseArrayBase`` 7 µs); register
  blocks, placements and parsed properties repeat a small set of values.
  The caches are bounded (LRU), so memory stays bounded in a long process.
* **Identity caches** (:class:`IdentityCache`): values derived from
  immutable objects, looked up by the objects' identity (no hashing).
* **Direct accessors** (:func:`direct_accessors`): an op's single
  operand, result or region before any variadic one is its ``idx``-th
  entry; xDSL's descriptor finds it through five more Python calls (about
  2 µs a read, and the verifiers and passes read them hundreds of thousands
  of times in a large module).
* **Per-op memos** (:func:`memo_on`): a value derived from an op's
  attributes and types, kept on the op while those are the same objects.
  Since attributes are immutable, the same objects give the same value; a
  pass that changes a property or a type installs a new object, and the
  value is derived again.

Spec: none (speed only); ``test/pytest/test_shortcuts.py`` compares
each with the computation it replaces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TypeVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, MemRefType, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl.operations import BeforeVariadicSingleAccessor, VarIRConstruct

from fetchc.target.layout import memref_byte_span, memref_layout

__all__ = [
    "IdentityCache",
    "direct_accessors",
    "i32_attr",
    "init_op",
    "i64_array",
    "i64_attr",
    "memo_on",
    "memref_byte_span_of",
    "memref_layout_of",
]

T = TypeVar("T")


@lru_cache(maxsize=8192)
def i64_attr(value: int) -> IntegerAttr:
    """``IntegerAttr(value, i64)``, one object per value.  Raises what the
    constructor raises (a value out of range), uncached."""
    return IntegerAttr(value, i64)


@lru_cache(maxsize=1024)
def i32_attr(value: int) -> IntegerAttr:
    """``IntegerAttr(value, i32)``, one object per value."""
    return IntegerAttr(value, i32)


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    """``DenseArrayBase.from_list(i64, values)`` (``array<i64: ...>``), one
    object per sequence of values."""
    return _i64_array(tuple(values))


@lru_cache(maxsize=4096)
def _i64_array(values: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


class IdentityCache:
    """A bounded cache of values computed from immutable objects (attributes,
    types, element types), keyed by those objects' identity plus plain
    values: no hashing of xDSL attributes (a ``MemRefType`` hashes its
    parameters recursively, about 3 µs), and the parser shares one object per
    spelling, so equal spellings hit.  An entry keeps its objects alive, so
    their identities cannot be reused while it is cached.  The oldest entry
    goes first when ``maxsize`` is reached."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._entries: dict[tuple, tuple[tuple, object]] = {}

    def get(self, objects: tuple[object, ...], values: tuple[object, ...], compute: Callable[[], T]) -> T:
        """``compute()`` for these ``objects`` (by identity) and ``values``
        (by equality), computed once while cached.  An exception from
        ``compute`` is not cached."""
        key = (*map(id, objects), *values)
        entry = self._entries.get(key)
        if entry is not None and all(a is b for a, b in zip(entry[0], objects, strict=False)):
            return entry[1]  # type: ignore[return-value]  # what compute() returned for this key
        value = compute()
        if len(self._entries) >= self.maxsize:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (objects, value)
        return value


def init_op(
    op: Operation,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute] = (),
    properties: dict[str, Attribute] | None = None,
) -> None:
    """Initialise one of fetchc's ops as ``Operation.create`` (and xDSL's
    parser) does: exactly these operands (SSA values), result types and
    properties.  For constructors whose arguments are single values, where
    IRDL's ``irdl_op_init`` would only flatten them (about 7 µs an op); the
    op's verifier checks the result, as for every op a pass creates."""
    Operation.__init__(op, operands=operands, result_types=result_types, properties=properties or {})


_item = tuple.__getitem__


class _DirectOperand(BeforeVariadicSingleAccessor):
    def __get__(self, obj: Operation, objtype: object = None) -> SSAValue:
        return _item(obj._operands, self.idx)  # what OpOperands[idx] reads


class _DirectResult(BeforeVariadicSingleAccessor):
    def __get__(self, obj: Operation, objtype: object = None) -> SSAValue:
        return _item(obj.results, self.idx)


class _DirectRegion(BeforeVariadicSingleAccessor):
    def __get__(self, obj: Operation, objtype: object = None) -> object:
        return obj.regions[self.idx]


_DIRECT: dict[VarIRConstruct, type[BeforeVariadicSingleAccessor]] = {
    VarIRConstruct.OPERAND: _DirectOperand,
    VarIRConstruct.RESULT: _DirectResult,
    VarIRConstruct.REGION: _DirectRegion,
}


def direct_accessors(*op_classes: type[Operation]) -> None:
    """Give each class's single operands, results and regions that come
    before any variadic one (xDSL's ``BeforeVariadicSingleAccessor``,
    which reads ``op.operands[idx]``) a descriptor that reads the ``idx``-th
    entry directly: the same value, the same ``IndexError`` when it is
    missing, still read-only.  Other accessors are left as xDSL made them."""
    for cls in op_classes:
        for name, acc in list(vars(cls).items()):
            if type(acc) is BeforeVariadicSingleAccessor and acc.construct in _DIRECT:
                setattr(cls, name, _DIRECT[acc.construct](acc.construct, acc.idx))


def memo_on(op: Operation, slot: str, key: tuple[Attribute | object, ...], compute: Callable[[], T]) -> T:
    """``compute()``, remembered on ``op`` (in its ``__dict__`` under
    ``slot``) while every element of ``key`` (the attributes, types and
    other immutable values ``compute`` reads) is the same object as when it
    was computed.  An exception from ``compute`` is not remembered."""
    memo = op.__dict__.get(slot)
    if memo is not None and len(memo[0]) == len(key) and all(a is b for a, b in zip(memo[0], key, strict=True)):
        return memo[1]
    value = compute()
    op.__dict__[slot] = (key, value)
    return value


_LAYOUTS = IdentityCache(4096)


def memref_layout_of(mt: MemRefType) -> tuple[tuple[int, ...], int]:
    """:func:`fetchc.target.layout.memref_layout` of ``mt`` (strides as a
    tuple), computed once per type object while cached.  Raises its
    ``ValueError``."""

    def compute() -> tuple[tuple[int, ...], int]:
        strides, offset = memref_layout(mt)
        return tuple(strides), offset

    return _LAYOUTS.get((mt,), (), compute)


_SPANS = IdentityCache(4096)


def memref_byte_span_of(mt: MemRefType) -> tuple[int, int]:
    """:func:`fetchc.target.layout.memref_byte_span` of ``mt``, computed once
    per type object while cached.  Raises its ``ValueError``."""
    return _SPANS.get((mt,), (), lambda: memref_byte_span(mt))
