"""Pass infrastructure shared by fetchc's passes: a walk that stays linear in
the nesting depth, one-visit pattern application, and change tracking for
re-verifying only what a pass touched.

* :func:`walk` — pre-order like ``Operation.walk()``, but iterative: xDSL's
  walk is a recursive generator (``yield from`` per level), so one walk of D
  nested regions costs O(D²) generator resumptions.
* :func:`apply_pattern` — run one :class:`RewritePattern` once on every op of
  a module that exists when the pass starts, in walk order.  fetchc's
  patterns are one-shot lowerings (no fixpoint), so xDSL's worklist driver,
  which also prints the whole module into any error a pattern raises, is not
  needed.
* :class:`FetchcPass` — a pass made of patterns; ``apply_tracked`` reports
  every op it inserts, modifies or removes to a listener, so the driver
  re-verifies only those ops and the stream chains around them
  (:func:`affected_ops`).

Spec: ir.md §4 (the pipeline verifies after every pass, like ``mlir-opt``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, RewritePattern

__all__ = ["walk", "apply_pattern", "FetchcPass", "ChangeTracker", "affected_ops"]


def walk(root: Operation) -> Iterator[Operation]:
    """``root`` and every op nested in it, pre-order (the order of
    ``Operation.walk()``), in time linear in the number of ops whatever the
    nesting depth."""
    stack: list[Operation] = [root]
    while stack:
        op = stack.pop()
        yield op
        if op.regions:
            children: list[Operation] = []
            for region in op.regions:
                for block in region.blocks:
                    children.extend(block.ops)
            stack.extend(reversed(children))


def apply_pattern(pattern: RewritePattern, module: Operation, listener: PatternRewriterListener | None = None) -> None:
    """Apply ``pattern`` once to every op nested in ``module`` (a snapshot
    taken in walk order; ops erased on the way are skipped).  Exceptions the
    pattern raises propagate unchanged."""
    for op in list(walk(module)):
        if op.parent is None:
            continue  # the root, or erased by an earlier rewrite
        rewriter = PatternRewriter(op)
        if listener is not None:
            rewriter.extend_from_listener(listener)
        pattern.match_and_rewrite(op, rewriter)


@dataclass
class ChangeTracker:
    """Collects the ops a pass inserts, modifies or replaces, and the
    neighbours of the ops it removes; :attr:`listener` is handed to the
    pass."""

    changed: set[Operation] = field(default_factory=set)
    listener: PatternRewriterListener = field(init=False)

    def __post_init__(self) -> None:
        self.listener = PatternRewriterListener(
            operation_insertion_handler=[self.changed.add],
            operation_modification_handler=[self.changed.add],
            operation_replacement_handler=[self._replaced],
            operation_removal_handler=[self._removed],
        )

    def _replaced(self, op: Operation, new_results: Iterable[SSAValue | None]) -> None:
        for v in new_results:
            if v is not None and isinstance(v.owner, Operation):
                self.changed.add(v.owner)

    def _removed(self, op: Operation) -> None:
        for v in op.operands:
            if isinstance(v.owner, Operation):
                self.changed.add(v.owner)
        for r in op.results:
            self.changed.update(u.operation for u in r.uses)


def affected_ops(changed: Iterable[Operation]) -> set[Operation]:
    """The ops to re-verify after a pass of fetchc's: the ``changed`` ops
    and their stream neighbours (the producers of their ``!fetch.stream``
    operands and the users of their stream results).

    Sound for fetchc's passes, which run on a module that verified and
    rewrite whole chains at once: an op whose own operands, results and
    properties are untouched and that is no neighbour of a touched op sees
    the same IR within the reach of every rule that inspects neighbours
    (:mod:`fetchc.dialects.fetch_chain`: stage order and stream origin look
    one op back, linearity at the op's own uses; the chain-wide views — the
    cast a fetch's chain will have, the ``fetch.zp_sub`` behind an ``i9``
    stream — are preserved by every lowering, which is what the passes are
    for).  Any other pass gets a full verification."""
    from fetchc.dialects.stream import StreamType

    seen: set[Operation] = set()
    for op in changed:
        seen.add(op)
        for v in op.operands:
            if isinstance(v.type, StreamType) and isinstance(v.owner, Operation):
                seen.add(v.owner)
        for r in op.results:
            if isinstance(r.type, StreamType):
                seen.update(u.operation for u in r.uses)
    return seen


class FetchcPass(ModulePass):
    """A fetchc pass whose rewrites go through a rewriter listener:
    :meth:`apply_tracked` reports them, so the driver re-verifies only the
    affected ops (:func:`affected_ops`).  Subclasses implement
    :meth:`apply_tracked`; :meth:`apply` (what ``xdsl-opt`` calls) passes a
    listener that records nothing."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_tracked(ctx, op, PatternRewriterListener())

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        raise NotImplementedError
