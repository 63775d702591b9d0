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
  every op it inserts to a listener (:class:`ChangeTracker`), so the driver
  verifies only the ops the pass created.
* :func:`emit_remark` — a pass's non-fatal remark at an op (MLIR's
  ``emitRemark``): the driver prints it as ``remark:`` and
  ``--verify-diagnostics`` matches it with ``expected-remark``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, RewritePattern

import fetchc.frontend.xdsl_compat  # noqa: F401  # xDSL's patches, for a pass xdsl-opt loads before parsing (%_1)

if TYPE_CHECKING:
    from fetchc.diagnostics import Diagnostic, PassError

__all__ = ["walk", "apply_pattern", "FetchcPass", "ChangeTracker", "PassListener", "emit_remark"]


def walk(root: Operation) -> Iterator[Operation]:
    """``root`` and every op nested in it, pre-order (the order of
    ``Operation.walk()``), in time linear in the number of ops whatever the
    nesting depth."""
    stack: list[Operation] = [root]
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                # reversed(): an iterator without len(), which would walk the
                # block once more (xDSL's BlockOps.__len__ counts its ops)
                stack.extend(reversed(block.ops))


def apply_pattern(
    pattern: RewritePattern,
    module: Operation,
    listener: PatternRewriterListener | None = None,
    on: tuple[type[Operation], ...] = (Operation,),
) -> None:
    """Apply ``pattern`` once to every op nested in ``module`` that is an
    instance of one of the classes ``on`` (a snapshot taken in walk order;
    ops erased on the way are skipped).  ``on`` names the ops the pattern
    matches (its ``op_type_rewrite_pattern`` type), so that no rewriter is
    made for the others: about 3 µs an op, 0.07 s a pass on 5000 distinct
    chains.  Exceptions the pattern raises propagate unchanged."""
    for op in [o for o in walk(module) if isinstance(o, on)]:
        if op.parent is None:
            continue  # the root, or erased by an earlier rewrite
        rewriter = PatternRewriter(op)
        if listener is not None:
            rewriter.extend_from_listener(listener)
        pattern.match_and_rewrite(op, rewriter)


@dataclass(eq=False)
class PassListener(PatternRewriterListener):
    """A rewriter listener that also takes a pass's remarks (:func:`emit_remark`):
    each ``(op, message)`` goes to every ``remark_handler``."""

    remark_handler: list[Callable[[Operation, str], None]] = field(default_factory=list, kw_only=True)

    def handle_remark(self, op: Operation, message: str) -> None:
        for handler in self.remark_handler:
            handler(op, message)


def emit_remark(listener: PatternRewriterListener, op: Operation, message: str) -> None:
    """Report a remark at ``op`` (MLIR's ``emitRemark``: not an error, the
    pass goes on): ``message`` is the text after ``'<op name>' op``.  The
    driver (:class:`ChangeTracker`) collects it and prints it as
    ``file:line:col: remark: ...``; under ``xdsl-opt`` (a listener that is
    not a :class:`PassListener`) it is dropped."""
    if isinstance(listener, PassListener):
        listener.handle_remark(op, message)


@dataclass
class ChangeTracker:
    """Collects the ops a pass creates (inserts) and erases, and its remarks
    (:func:`emit_remark`); :attr:`listener` is handed to the pass.  The
    driver verifies the created ops after the pass (ir.md §4: verify once;
    ``--verify-each`` verifies everything), releases the erased ones
    (:func:`~fetchc.frontend.xdsl_compat.release_erased`) and reports the
    remarks, each with the top-level op (the kernel) it was made in, in the
    order the pass made them."""

    created: set[Operation] = field(default_factory=set)
    erased: list[Operation] = field(default_factory=list)
    remarks: list[tuple[Diagnostic, Operation]] = field(default_factory=list)
    listener: PatternRewriterListener = field(init=False)

    def __post_init__(self) -> None:
        # Handlers that hold the collections, not the tracker: no reference
        # cycle (the compile runs with the cyclic collector paused).
        self.listener = PassListener(
            operation_insertion_handler=[self.created.add],
            operation_removal_handler=[self.erased.append],
            remark_handler=[_remark_into(self.remarks)],
        )


def _remark_into(remarks: list[tuple[Diagnostic, Operation]]) -> Callable[[Operation, str], None]:
    """A remark handler appending ``(diagnostic, kernel)`` to ``remarks``:
    the diagnostic is made at once, while the op is in its block (a pass may
    erase it next); ``kernel`` is the op's ancestor at the top level of the
    module (its ``func.func``; the op itself at the top level)."""

    def handle(op: Operation, message: str) -> None:
        from fetchc.frontend.locations import op_error

        d = op_error(op, message, severity="remark")
        if d.loc is not None:
            d.op = None  # located: rendering needs no op path, and the op (erased next) is freed
        kernel = op
        while (parent := kernel.parent_op()) is not None and parent.parent_op() is not None:
            kernel = parent
        remarks.append((d, kernel))

    return handle


class FetchcPass(ModulePass):
    """A fetchc pass whose rewrites go through a rewriter listener:
    :meth:`apply_tracked` reports the ops it inserts, so the driver verifies
    only those.  Subclasses implement
    :meth:`apply_tracked`; :meth:`apply` (what ``xdsl-opt`` calls) passes a
    listener that records nothing.

    ``summary`` is the one line ``fetchc --help`` shows for the pass; each
    option is a dataclass field whose ``metadata["help"]`` says what it
    means (:func:`fetchc.driver.pass_help`)."""

    summary: ClassVar[str] = ""

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        """Run the pass on ``op``, every rewrite through ``listener``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement apply_tracked")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Run the pass as ``xdsl-opt`` (or any xDSL pass pipeline) does.  A
        :class:`~fetchc.diagnostics.PassError` is reported as xDSL reports
        its own diagnostics: the same exception, its message now the located
        ``file:line:col: error: 'op' op ...`` line (the op path when the op
        has no file location) with the notes, and the module printed with
        the op marked, as a note (``Operation.emit_error``), so that
        ``xdsl-opt --verify-diagnostics`` prints it like a verifier error."""
        from fetchc.diagnostics import PassError

        try:
            self.apply_tracked(ctx, op, PatternRewriterListener())
        except PassError as err:
            _raise_as_xdsl(err)


def _raise_as_xdsl(err: PassError) -> NoReturn:
    """Re-raise ``err`` as xDSL raises a diagnostic (see
    :meth:`FetchcPass.apply`)."""
    from xdsl.utils.diagnostic import Diagnostic as XdslDiagnostic

    from fetchc.diagnostics import flatten, header
    from fetchc.frontend.locations import op_error

    diag = op_error(err.op, err.message, err.notes)
    err.args = ("\n".join(header(d) for d in flatten([diag])),)
    marks = XdslDiagnostic()
    marks.add_message(err.op, f"error: {diag.message}")
    for note_op, text in err.notes:
        marks.add_message(note_op, f"note: {text}")
    marks.raise_exception(err.op, err)

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        raise NotImplementedError
