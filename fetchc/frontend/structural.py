"""Specialised structural checks for fetchc's own ops.

xDSL verifies an IRDL op generically (``OpDef.verify``): for every operand,
result and property it walks the op definition's constraint objects, with
variadic-size bookkeeping, for every op, every time.  fetchc's ops use a
small subset of IRDL (single and optional operands and results of one base
type, properties of one base type, no regions, no type variables), so for
each op class :func:`structural_check` compiles that definition once into a
plain predicate: operand and result counts, ``isinstance`` of each type,
which properties are present and of which class.

The predicate only ever *accepts*: when it returns ``True`` the op satisfies
its IRDL definition (``test_structural.py`` checks the two agree on every op
of the examples, the lit inputs and mutated ops); when it returns ``False``,
or when an op class uses anything beyond that subset, the caller runs xDSL's
generic ``OpDef.verify``, which raises xDSL's own message.  Traits are not
part of the predicate: the caller verifies them with xDSL's trait objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import StringAttr, SymbolNameConstraint
from xdsl.ir import Attribute, Operation
from xdsl.irdl import (
    AnyAttr,
    BaseAttr,
    EqAttrConstraint,
    OpDef,
    OperandDef,
    OptOperandDef,
    OptPropertyDef,
    OptResultDef,
    PropertyDef,
    RangeLengthConstraint,
    RangeOf,
    ResultDef,
)

__all__ = ["structural_check"]

Check = Callable[[Operation], bool]
_Pred = Callable[[Attribute], bool]


def _attr_pred(constr: Any) -> _Pred | None:
    """A predicate equivalent to ``constr.verify`` not raising, or ``None``
    when the constraint is not one of the simple kinds."""
    if isinstance(constr, AnyAttr):
        return lambda a: True
    if isinstance(constr, BaseAttr):
        return _instance_pred(constr.attr)
    if isinstance(constr, EqAttrConstraint):
        want = constr.attr
        return lambda a: a == want
    if isinstance(constr, SymbolNameConstraint):
        return lambda a: isinstance(a, StringAttr)
    return None


def _instance_pred(cls: type) -> _Pred:
    """``isinstance(a, cls)``, remembering the types whose instances are
    instances of ``cls`` (a subclass stays one): those answer without
    ``ABCMeta.__instancecheck__``, a Python call (xDSL's attributes are
    ABCs), and only other types ask ``isinstance``."""
    known: set[type] = set()

    def pred(a: Attribute) -> bool:
        t = type(a)
        if t in known:
            return True
        if isinstance(a, cls):
            if issubclass(t, cls):
                known.add(t)
            return True
        return False

    return pred


def _range_pred(constr: Any) -> _Pred | None:
    """The element predicate of a single operand's or result's range
    constraint (``RangeLengthConstraint(RangeOf(c), 1)`` or ``RangeOf(c)``)."""
    if isinstance(constr, RangeLengthConstraint):
        constr = constr.constraint
    if isinstance(constr, RangeOf):
        return _attr_pred(constr.constr)
    return None


def _values_check(defs: list[tuple[str, Any]], single: type, optional: type) -> Callable[[Any], bool] | None:
    """A predicate over an op's operands or results: the counts and each
    value's type.  Supports single values and at most one optional one."""
    preds: list[tuple[_Pred, bool]] = []
    for _, d in defs:
        pred = _range_pred(d.constr)
        if pred is None or type(d) not in (single, optional):
            return None
        preds.append((pred, type(d) is optional))
    n_optional = sum(opt for _, opt in preds)
    if n_optional > 1:
        return None
    required = [p for p, opt in preds if not opt]
    if not n_optional:
        n = len(required)

        def exact(values: Any) -> bool:
            return len(values) == n and all(p(v.type) for p, v in zip(required, values, strict=True))

        return exact
    index = next(i for i, (_, opt) in enumerate(preds) if opt)

    def with_optional(values: Any) -> bool:
        if len(values) == len(preds):
            return all(p(v.type) for (p, _), v in zip(preds, values, strict=False))
        if len(values) == len(preds) - 1:
            rest = [p for i, (p, _) in enumerate(preds) if i != index]
            return all(p(v.type) for p, v in zip(rest, values, strict=False))
        return False

    return with_optional


def _properties_check(op_def: OpDef) -> Callable[[dict[str, Attribute]], bool] | None:
    table: dict[str, tuple[_Pred, bool]] = {}
    for name, d in op_def.properties.items():
        pred = _attr_pred(d.constr)
        if pred is None or type(d) not in (PropertyDef, OptPropertyDef):
            return None
        table[name] = (pred, isinstance(d, OptPropertyDef))
    required = [n for n, (_, opt) in table.items() if not opt]

    def check(props: dict[str, Attribute]) -> bool:
        for name, value in props.items():
            entry = table.get(name)
            if entry is None or not entry[0](value):
                return False
        return all(n in props for n in required)

    return check


def compile_check(op_def: OpDef) -> Check | None:
    """The structural predicate of ``op_def``, or ``None`` when the
    definition uses IRDL beyond the simple subset (regions, successors,
    required attributes, type variables, variadic ranges)."""
    if op_def.regions or op_def.successors or op_def.attributes:
        return None
    operands = _values_check(op_def.operands, OperandDef, OptOperandDef)
    results = _values_check(op_def.results, ResultDef, OptResultDef)
    props = _properties_check(op_def)
    if operands is None or results is None or props is None:
        return None

    def check(op: Operation) -> bool:
        return operands(op.operands) and results(op.results) and props(op.properties)

    return check


_CHECKS: dict[type, Check | None] = {}


def structural_check(op_def: OpDef, cls: type) -> Check | None:
    """The compiled predicate of op class ``cls`` (memoised per class)."""
    if cls not in _CHECKS:
        _CHECKS[cls] = compile_check(op_def)
    return _CHECKS[cls]
