"""The oracle that the fast front end agrees with xDSL's parser.

:func:`compare` parses one text both ways, the fast path alone
(:func:`fetchc.frontend.fastparse.fast_parse`) and xDSL's parser alone
(:func:`fetchc.frontend.parsing.parse_module` with ``parser="xdsl"``), and
returns ``"fallback"`` (the fast path declined: the slow path decides, as in
production), ``"same"`` (both built the same IR), or raises
:class:`ParserMismatch`: the fast path accepted what xDSL's parser rejects,
or built IR that differs.  "The same IR": the generic form with locations
prints identically (``print_module(m, generic=True, debuginfo=True)``), and
a walk of both modules in parallel finds equal op names, classes,
properties, attributes, result types, locations and SSA name hints, equal
block-argument types, locations and name hints, and equal block name hints.

Used by ``test/pytest/test_fastparse.py`` and ``tools/fuzz.py``.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.ir import Block, Operation

from fetchc.diagnostics import DiagnosticError
from fetchc.driver import print_module
from fetchc.frontend.fastparse import fast_parse
from fetchc.frontend.parsing import parse_module


class ParserMismatch(AssertionError):
    """The fast path and xDSL's parser disagree on an input."""


def compare(ctx: Context, text: str, filename: str = "in.mlir", line_offset: int = 0) -> str:
    """``"fallback"`` or ``"same"``; raises :class:`ParserMismatch`."""
    fast = fast_parse(ctx, text, filename, line_offset)
    if fast is None:
        return "fallback"
    try:
        slow = parse_module(ctx, text, filename, line_offset, parser="xdsl")
    except DiagnosticError as err:
        raise ParserMismatch(f"the fast path accepted what xDSL's parser rejects: {err}") from None
    a = print_module(slow, generic=True, debuginfo=True)
    b = print_module(fast, generic=True, debuginfo=True)
    if a != b:
        raise ParserMismatch(f"generic prints differ:\n--- xdsl\n{a}\n--- fast\n{b}")
    _same_op(slow, fast)
    return "same"


def _same_op(a: Operation, b: Operation) -> None:
    facts_a, facts_b = _op_facts(a), _op_facts(b)
    if facts_a != facts_b:
        raise ParserMismatch(f"op {a.name} differs:\n  xdsl {facts_a}\n  fast {facts_b}")
    for ra, rb in zip(a.regions, b.regions, strict=True):
        for ba, bb in zip(ra.blocks, rb.blocks, strict=True):
            _same_block(ba, bb)


def _op_facts(op: Operation) -> tuple:
    return (
        type(op), op.name, op.location, dict(op.properties), dict(op.attributes),
        [r.type for r in op.results], [r.name_hint for r in op.results],
        [o.type for o in op.operands], len(op.regions), [len(r.blocks) for r in op.regions],
    )


def _same_block(a: Block, b: Block) -> None:
    facts_a = [(x.type, x.location, x.name_hint) for x in a.args], a.name_hint
    facts_b = [(x.type, x.location, x.name_hint) for x in b.args], b.name_hint
    if facts_a != facts_b:
        raise ParserMismatch(f"block arguments differ:\n  xdsl {facts_a}\n  fast {facts_b}")
    ops_a, ops_b = list(a.ops), list(b.ops)
    if len(ops_a) != len(ops_b):
        raise ParserMismatch(f"blocks hold {len(ops_a)} and {len(ops_b)} ops")
    for x, y in zip(ops_a, ops_b):
        _same_op(x, y)
    # operands refer to the same positions: compare by index of definition
    _same_uses(ops_a, ops_b)


def _same_uses(ops_a: list[Operation], ops_b: list[Operation]) -> None:
    """Each operand is the same value on both sides (the same op result or
    block argument, by position)."""
    for x, y in zip(ops_a, ops_b):
        for u, v in zip(x.operands, y.operands, strict=True):
            if _value_key(u) != _value_key(v):
                raise ParserMismatch(f"operand of {x.name} differs: {_value_key(u)} vs {_value_key(v)}")


def _value_key(value) -> tuple:
    owner = value.owner
    if isinstance(owner, Operation):
        block = owner.parent_block()
        index = list(block.ops).index(owner) if block is not None else -1
        return ("result", owner.name, index, value.index)
    return ("arg", value.index)
