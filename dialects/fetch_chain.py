"""The rules that span ops of a stream, and :class:`FetchChain`.

A **fetch chain** is a ``fetch.fetch`` and the ops its stream flows through,
one use each: the adapter stages (``fetch.table_lookup``, ``fetch.cast``,
``fetch.zp_sub``, and the requests ``fetch.convert`` / ``fetch.dequant`` that
the passes lower into them), then the engine ops of ``rngd``.
:class:`FetchChain` walks one chain once; the verifiers, the passes and the
interpreter ask it what they need (the stages, the cast output that decides
the read size, the first consumer) instead of walking the IR themselves.

The rules that look beyond one op live here, one function each, and every op
verifier calls them in ir.md §3 order:

* ir.md §1 (streams live inside one function): :func:`check_stream_operands`,
  :func:`check_foreign_uses`, :func:`signature_errors`;
* rule 3 (contraction-only ``i5``/``i9``): :func:`check_not_contraction_only`,
  :func:`contraction_only_error` (a note at the producing ``fetch.zp_sub``:
  :func:`zp_producer`);
* rule 5 (stage order): :func:`check_stage_order`;
* rule 6 (linear streams): :func:`check_linear_uses`;
* rule 7 (shapes kept): :func:`check_same_shape`;
* rule 8, its cast part: :meth:`FetchChain.cast_output`;
* rule 11, unmasked padding: :func:`check_padding_reach`.

Spec: ir.md §1-3, hardware.md §2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue

from fetchc import target
from fetchc.diagnostics import OpError
from fetchc.dialects.stream import StreamType, stream_type
from fetchc.target.mask import Padding
from fetchc.wording import a_or_an

STREAM_DIALECTS = ("fetch", "rngd", "fetch_seq")
"""Dialects whose ops produce and consume ``!fetch.stream`` values."""

PASS_THROUGH = ("rngd.switch", "rngd.collect")


def is_stream_op(op: Operation) -> bool:
    """Whether ``op`` belongs to a dialect that may produce or consume a
    stream (``fetch``, ``rngd``, ``fetch_seq``)."""
    return op.name.split(".", 1)[0] in STREAM_DIALECTS


def zp_producer(v: SSAValue) -> Operation | None:
    """The ``fetch.zp_sub`` that produced ``v``, looking through
    ``rngd.switch``/``rngd.collect``."""
    for _ in range(10_000):
        owner = v.owner
        if not isinstance(owner, Operation):
            return None
        if owner.name == "fetch.zp_sub":
            return owner
        if owner.name in PASS_THROUGH and owner.operands:
            v = owner.operands[0]
            continue
        return None
    return None


def contraction_only_fix(elem: str) -> str:
    """The fix for a rule-3 violation on an ``elem`` (i5/i9) stream, as a
    ``; ...`` suffix (empty for other types)."""
    widened = target.BY_NAME.get(elem)
    src = target.WIDENED_FROM[widened].name if widened in target.WIDENED_FROM else None
    if src is None:
        return ""
    return (
        f"; to use the values elsewhere, widen the {src} stream with fetch.cast ({src} -> i32) instead of "
        "fetch.zp_sub and subtract the zero point downstream"
    )


def contraction_only_error(op: Operation, v: SSAValue, what: str) -> OpError:
    """Rule 3 at a consumer ``op`` of the i5/i9 stream ``v``.  ``what`` says
    what ``op`` does, with ``{a_t}`` for the type after its article and
    ``{t}`` for the type alone (``"commit {a_t} stream to memory"``,
    :func:`fetchc.wording.a_or_an`).  The note points at the producing ``fetch.zp_sub``."""
    t = v.type
    assert isinstance(t, StreamType)
    e = target.type_name(t.element_type)
    producer = zp_producer(v)
    notes = [(producer, f"the {e} stream is produced here by zero-point subtraction")] if producer else []
    return OpError(
        f"cannot {what.format(t=e, a_t=a_or_an(e))}: {e} is the Contraction Engine's staging type, and its only "
        "consumer is rngd.contract_outer (through rngd.switch / rngd.collect); it cannot be committed to memory, "
        "stored to TRF or VRF, transposed, or fed to any other engine" + contraction_only_fix(e),
        notes,
    )


def check_not_contraction_only(op: Operation, v: SSAValue, what: str) -> None:
    """Rule 3: raise :func:`contraction_only_error` if ``v`` is an i5/i9
    stream (``op`` is not one of the ops that may consume it)."""
    t = v.type
    if isinstance(t, StreamType) and t.elem in target.CONTRACTION_ONLY:
        raise contraction_only_error(op, v, what)


def _count(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def signature_errors(module: Operation) -> list[tuple[Operation, str]]:
    """ir.md §1 for function signatures: ``(func.func op, message)`` for each
    function whose arguments or results include a stream, used or not (a
    use is also reported by the consumer's verifier), and for each bad
    ``rngd.slices`` / ``rngd.slice_dim`` (ir.md §2a,
    :func:`fetchc.kernel.slice_errors`), and ``(rngd.to_vrf, message)`` for
    a kernel whose VRF tensors exceed one slice's VRF (hardware.md §2.6,
    :func:`fetchc.dialects.rngd.vrf_budget_errors`).  Called by the driver
    after op verification, since ``func.func`` is not ours to verify and the
    VRF budget spans a function."""
    out: list[tuple[Operation, str]] = []
    from fetchc.dialects.rngd import vrf_budget_errors
    from fetchc.kernel import slice_errors
    from fetchc.rewriting import walk

    for op in walk(module):
        if not isinstance(op, FuncOp):
            continue
        out += vrf_budget_errors(op)
        bad_slices = slice_errors(op)
        if bad_slices:  # one error per op: the first
            out.append((op, bad_slices[0]))
            continue
        ftype = getattr(op, "function_type", None)
        if ftype is None:
            continue
        ins = [i for i, t in enumerate(ftype.inputs.data) if isinstance(t, StreamType)]
        outs = [i for i, t in enumerate(ftype.outputs.data) if isinstance(t, StreamType)]
        if ins or outs:
            what = f"argument #{ins[0]}" if ins else f"result #{outs[0]}"
            out.append(
                (
                    op,
                    f"has a !fetch.stream {what}, but streams live inside one function: a stream may not be a "
                    "function argument or result; pass the memref and read it with fetch.fetch where it is consumed",
                )
            )
    return out


def check_stream_operands(op: Operation) -> None:
    """ir.md §1: a stream operand must be produced in this function by a
    fetch/rngd op; a stream may not be a function argument (or any block
    argument) nor the result of a call or of an op of another dialect."""
    streams = [(i, v) for i, v in enumerate(op.operands) if isinstance(v.type, StreamType)]
    for i, v in streams:
        which = "its input stream" if len(streams) == 1 else f"its stream operand #{i}"
        owner = v.owner
        if isinstance(owner, Block):
            parent = owner.parent_op()
            if parent is not None and parent.name == "func.func" and owner.prev_block is None:
                sym = getattr(parent, "sym_name", None)
                fn = f" of @{sym.data}" if isinstance(sym, StringAttr) else ""
                raise OpError(
                    f"{which} is a function argument{fn}, but a stream may not be a function argument: streams "
                    "live inside one function; pass the memref instead and read it here with fetch.fetch"
                )
            where = f" of '{parent.name}'" if parent is not None else ""
            raise OpError(
                f"{which} is a block argument{where}, but a stream cannot cross a block or region boundary; "
                "read the memref with fetch.fetch in the block that consumes the stream"
            )
        if is_stream_op(owner):
            if owner.parent_block() is not op.parent_block():
                raise OpError(
                    f"{which} is produced outside this op's block, but a stream cannot cross a block or region "
                    "boundary (it would be consumed once per execution of the region, or not at all); read the "
                    "memref with fetch.fetch in the block that consumes the stream",
                    [(owner, "the stream is produced here")],
                )
            continue
        if owner.name == "func.call":
            callee = getattr(getattr(owner, "callee", None), "root_reference", None)
            name = f" to @{callee.data}" if isinstance(callee, StringAttr) else ""
            raise OpError(
                f"{which} is the result of a call{name}, but a stream may not be a function result: streams "
                "live inside one function; pass the memref instead and read it here with fetch.fetch",
                [(owner, "the call is here")],
            )
        raise OpError(
            f"{which} comes from '{owner.name}', which cannot produce a Fetch Unit stream; streams come from "
            "fetch.fetch, the adapter stages and the rngd engine ops",
            [(owner, "the stream is produced here")],
        )


def check_foreign_uses(op: Operation) -> None:
    """ir.md §1 and rule 3 for uses by ops of other dialects: a stream may not
    be returned from a function, passed to a call or consumed by any op
    outside fetch/rngd; an i5/i9 stream reaching one breaks rule 3.  The
    error is at ``op`` (the producer: the foreign op has no verifier of
    ours), with a note at the use."""
    for i, res in enumerate(op.results):
        t = res.type
        if not isinstance(t, StreamType):
            continue
        foreign = sorted({u.operation for u in res.uses if not is_stream_op(u.operation)}, key=_op_order_key)
        if not foreign:
            continue
        user = foreign[0]
        which = "its result stream" if len(op.results) == 1 else f"its result stream #{i}"
        notes: list[tuple[Operation, str]] = [(user, "used here")]
        if t.elem in target.CONTRACTION_ONLY:
            e = t.elem.name
            producer = zp_producer(res)
            if producer is not None and producer is not op:
                notes.append((producer, f"the {e} stream is produced here by zero-point subtraction"))
            raise OpError(
                f"{which} of {e} reaches '{user.name}', but {e} is the Contraction Engine's staging type: its only "
                "consumer is rngd.contract_outer (through rngd.switch / rngd.collect)" + contraction_only_fix(e),
                notes,
            )
        if user.name == "func.return":
            raise OpError(
                f"{which} is returned from the function, but a stream may not be a function result: streams "
                "live inside one function; consume it here (e.g. rngd.commit it to a memref argument)",
                notes,
            )
        if user.name == "func.call":
            raise OpError(
                f"{which} is passed to a call, but a stream may not be a function argument: streams live "
                "inside one function; pass the memref instead and read it in the callee with fetch.fetch",
                notes,
            )
        raise OpError(
            f"{which} is used by '{user.name}', which cannot consume a Fetch Unit stream; a stream is consumed "
            "by an adapter stage, an rngd engine op, or rngd.commit",
            notes,
        )


def check_linear_uses(op: Operation) -> None:
    """Rule 6: every stream result has exactly one use (by a fetch/rngd op:
    :func:`check_foreign_uses` runs first)."""
    check_foreign_uses(op)
    for i, res in enumerate(op.results):
        if not isinstance(res.type, StreamType):
            continue
        users: dict[Operation, int] = {}
        for u in res.uses:
            users[u.operation] = users.get(u.operation, 0) + 1
        n = sum(users.values())
        which = "its result stream" if len(op.results) == 1 else f"its result stream #{i}"
        if n == 0:
            raise OpError(
                f"{which} is never used: every stream must be consumed exactly once "
                "(by an adapter stage, an rngd engine op, or rngd.commit)"
            )
        if n > 1:
            raise OpError(
                f"{which} has {n} uses, but a stream is linear and must be consumed exactly once; "
                "fetch the tensor again for a second consumer",
                [
                    (u, "used here" if k == 1 else f"used here {_count(k)}")
                    for u, k in sorted(users.items(), key=lambda x: _op_order_key(x[0]))
                ],
            )


def _op_order_key(op: Operation) -> tuple[int, ...]:
    loc = getattr(op, "location", None)
    line = getattr(getattr(loc, "line", None), "data", 0)
    col = getattr(getattr(loc, "column", None), "data", 0)
    return (line, col)


STAGE_OPS: dict[str, target.StageKind] = {
    "fetch.mask": target.MASKING_STAGE,
    "fetch.table_lookup": target.TABLE_LOOKUP_STAGE,
    "fetch.cast": target.CAST_STAGE,
    "fetch.zp_sub": target.ZERO_POINT_STAGE,
}
"""The op of each adapter stage (hardware.md §2)."""


def is_identity_cast(op: Operation) -> bool:
    """An identity ``fetch.cast`` (a type to itself): accepted, programs no
    stage and does not count as the chain's cast (hardware.md §2.2)."""
    if op.name != "fetch.cast":
        return False
    src, dst = stream_type(op.operands[0]), stream_type(op.results[0])
    return src is not None and dst is not None and src.element_type == dst.element_type


def _stage_producer(v: SSAValue) -> Operation | None:
    """The op that produced ``v``, looking through identity casts."""
    owner = v.owner
    while isinstance(owner, Operation) and is_identity_cast(owner):
        owner = owner.operands[0].owner
    return owner if isinstance(owner, Operation) else None


STAGE_ORDER_TEXT = (
    f"the Fetch Adapter runs {target.STAGE_ORDER_TEXT}, each at most once, directly after fetch.fetch and "
    "before any rngd op"
)
"""Rule 5's reason, in every stage-order message."""


def check_stage_order(op: Operation, operand: SSAValue) -> None:
    """Rule 5: along one stream, masking → table lookup → cast → zero-point
    subtraction, each at most once, directly after fetch.fetch (masking:
    directly after it, not after a ``fetch.convert``).  An identity cast is
    no stage: it only has to sit in the adapter."""
    identity = is_identity_cast(op)
    mine = STAGE_OPS[op.name].order
    prev = operand.owner if identity and isinstance(operand.owner, Operation) else _stage_producer(operand)
    base_msg = STAGE_ORDER_TEXT
    if prev is None:
        raise OpError(f"its input is not produced by fetch.fetch: {base_msg}")
    if prev.name == "fetch.convert" and mine == target.MASKING_STAGE.order:
        raise OpError(
            f"a mask after a fetch.convert is not possible: the conversion becomes table lookup and type cast "
            f"stages, and {base_msg}; mask directly after the fetch.fetch",
            [(prev, "the conversion is here")],
        )
    if prev.name in ("fetch.fetch", "fetch.convert"):
        return
    if prev.name in STAGE_OPS:
        theirs = STAGE_OPS[prev.name].order
        if theirs < mine or identity:
            return
        me, them = STAGE_OPS[op.name].text, STAGE_OPS[prev.name].text
        what = "a second " + me if theirs == mine else f"{a_or_an(me)} after {them}"
        raise OpError(f"{what} is not possible: {base_msg}", [(prev, f"the {them} is here")])
    raise OpError(
        f"its input comes from '{prev.name}', not from the Fetch Adapter: {base_msg}; move this stage "
        f"before the '{prev.name}'",
        [(prev, "the input is produced here")],
    )


def check_same_shape(op: Operation, src: StreamType, dst: StreamType) -> None:
    """Rule 7: adapter ops keep context, time and packet shape."""
    if src.ctx != dst.ctx:
        raise OpError(f"changes the stream context from {src.ctx} to {dst.ctx}; adapter stages keep the context")
    if src.time != dst.time or src.packet != dst.packet:
        raise OpError(
            f"changes the stream shape from time {list(src.time)} packet {list(src.packet)} to "
            f"time {list(dst.time)} packet {list(dst.packet)}; adapter stages keep the shape"
        )


def run_checks(checks: Sequence[Callable[[], None]]) -> None:
    """Run rule checks in spec order; the first that raises wins."""
    for c in checks:
        c()


ADAPTER_REQUESTS = ("fetch.convert", "fetch.dequant")
"""Adapter-level requests that the passes lower into stages."""


@dataclass(frozen=True)
class FetchChain:
    """One fetch chain (module docstring): ``fetch`` then ``adapter`` (stages
    and requests, in stream order), then ``consumer``, the first op past the
    adapter (None when the stream is unused or used more than once).

    Built by :meth:`of` in one walk along single uses; linearity itself is
    rule 6's business (:func:`check_linear_uses`), so a stream with several
    uses simply ends the chain."""

    fetch: Operation
    adapter: tuple[Operation, ...]
    consumer: Operation | None

    @staticmethod
    def of(fetch: Operation) -> FetchChain:
        """The chain that starts at the ``fetch.fetch`` op ``fetch``."""
        adapter: list[Operation] = []
        cur = fetch
        while True:
            use = cur.results[0].get_unique_use() if cur.results else None
            if use is None:
                return FetchChain(fetch, tuple(adapter), None)
            user = use.operation
            if user.name in STAGE_OPS or user.name in ADAPTER_REQUESTS:
                adapter.append(user)
                cur = user
                continue
            return FetchChain(fetch, tuple(adapter), user)

    @property
    def stages(self) -> tuple[Operation, ...]:
        """The hardware stages of the adapter part (no requests)."""
        return tuple(op for op in self.adapter if op.name in STAGE_OPS)

    @property
    def mask(self) -> Operation | None:
        """The chain's ``fetch.mask``, or None."""
        return next((op for op in self.adapter if op.name == "fetch.mask"), None)

    @property
    def last(self) -> Operation:
        """The op whose result leaves the adapter."""
        return self.adapter[-1] if self.adapter else self.fetch

    def cast_output(self) -> target.ElementType | None:
        """The output type of the cast stage this chain will have once
        ``fetch.convert`` and ``fetch.dequant`` are lowered, or None: the
        cast limit of rule 8 (one read's cast output fits one 32-byte flit,
        hardware.md §2.2) depends on it.  A request that cannot be lowered
        (no conversion chain, a table lookup on ``sub``) reports its own
        error and counts as no cast here."""
        src = stream_type(self.fetch.results[0])
        for op in self.adapter:
            out = stream_type(op.results[0])
            if op.name == "fetch.cast" and out is not None and not is_identity_cast(op):
                return out.elem
            if op.name == "fetch.dequant":
                on_table = src is not None and target.has_table_register(src.ctx)
                return target.F32 if on_table else None
            if op.name == "fetch.convert" and src is not None and out is not None:
                try:
                    kinds = target.conversion_chain(src.element_type, out.element_type)
                except target.NoConversionError:
                    return None
                if not target.has_table_register(src.ctx) and any(k == target.TABLE_LOOKUP for k, _ in kinds):
                    return None
                for kind, elem in kinds:
                    if kind == target.CAST:
                        return elem
            src = out
        return None


def padding_user(fetch: Operation) -> Operation | None:
    """Rule 11 (hardware.md §2.0): the first op that computes with a padded
    fetch's padding slots unmasked, or None.  Unmasked padding may reach
    only ``rngd.commit``, through ``rngd.switch`` / ``rngd.collect``
    (identity casts aside): a copy keeps the padding slots as bytes, and the
    destination holds the same padding.  Any adapter stage or request and
    every other engine computes with them (a function table, a reduction, a
    contraction would see whatever DM holds there)."""
    if fetch.properties.get("pad") is None:
        return None
    chain = FetchChain.of(fetch)
    if chain.mask is not None:
        return None
    for op in chain.adapter:
        if not is_identity_cast(op):
            return op
    cur = chain.consumer
    while cur is not None and cur.name in PASS_THROUGH:
        use = cur.results[0].get_unique_use() if cur.results else None
        cur = None if use is None else use.operation
    if cur is None or cur.name == "rngd.commit":
        return None
    return cur


def check_padding_reach(fetch: Operation, pad: Padding | None) -> None:
    """Rule 11 at a ``fetch.fetch`` whose padded axis is ``pad`` (``None``:
    not padded): raise :class:`OpError` (with a note at the consumer) when
    its padding reaches, unmasked, an op that computes with it
    (:func:`padding_user`)."""
    if pad is None:
        return
    user = padding_user(fetch)
    if user is None:
        return
    raise OpError(
        f"reads padding ({pad.text()}) that reaches '{user.name}' unmasked, which computes with whatever DM holds "
        "in the padding slots: add fetch.mask directly after this fetch.fetch to zero them; unmasked padding "
        "may only be copied (rngd.commit, through rngd.switch / rngd.collect)",
        [(user, "the padding slots reach this op")],
    )


def stages_around(op: Operation) -> tuple[list[Operation], list[Operation]]:
    """The adapter stages directly before ``op`` on its input stream and
    directly after it on its result stream, each list in stream order
    (``fetch-legalize-convert`` checks the stage order of a legalised
    ``fetch.convert`` together with them)."""
    before: list[Operation] = []
    v = op.operands[0]
    while isinstance(v.owner, Operation) and v.owner.name in STAGE_OPS:
        before.append(v.owner)
        v = v.owner.operands[0]
    after: list[Operation] = []
    cur = op
    while cur.results and (use := cur.results[0].get_unique_use()) is not None:
        user = use.operation
        if user.name not in STAGE_OPS:
            break
        after.append(user)
        cur = user
    return before[::-1], after
