"""What fetchc's dialects share to avoid repeated work: interned attributes
and per-op memos.

* **Interned attributes** (:func:`i64_attr`, :func:`i32_attr`,
  :func:`i64_array`): one object per value.  xDSL attributes are immutable
  values, equal by value, and building one runs its verifier (an
  ``IntegerAttr`` costs about 6 µs, a ``DenseArrayBase`` 7 µs); register
  blocks, placements and parsed properties repeat a small set of values.
  The caches are bounded (LRU), so memory stays bounded in a long process.
* **Per-op memos** (:func:`memo_on`): a value derived from an op's
  attributes and types, kept on the op while those are the same objects.
  Since attributes are immutable, the same objects give the same value; a
  pass that changes a property or a type installs a new object, and the
  value is derived again.

Spec: none (speed, issue 16); ``test/pytest/test_shortcuts.py`` compares
each with the computation it replaces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TypeVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i32, i64
from xdsl.ir import Attribute, Operation

__all__ = ["i32_attr", "i64_array", "i64_attr", "memo_on"]

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


def memo_on(op: Operation, slot: str, key: tuple[Attribute | object, ...], compute: Callable[[], T]) -> T:
    """``compute()``, remembered on ``op`` (in its ``__dict__`` under
    ``slot``) while every element of ``key`` (the attributes, types and
    other immutable values ``compute`` reads) is the same object as when it
    was computed.  An exception from ``compute`` is not remembered."""
    memo = op.__dict__.get(slot)
    if memo is not None and len(memo[0]) == len(key) and all(a is b for a, b in zip(memo[0], key)):
        return memo[1]
    value = compute()
    op.__dict__[slot] = (key, value)
    return value
