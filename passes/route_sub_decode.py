"""``fetch-route-sub-decode``: a packed ``f4E2M1FN`` decode requested on the
``sub`` context is routed through DM, as hardware.md §2.1 describes.

The sub Fetch Unit (StoTrf) has no table register, so it cannot decode e2m1
codes.  This pass rewrites each such request into the documented route:

1. a **main**-context ``fetch.fetch`` of the same memref, with the same map,
   ``base`` (when given) and time/packet shape, and the paired
   ``fetch.table_lookup`` (``f4E2M1FN`` → the 8-bit float the route needs);
2. ``rngd.commit`` of that stream to a DM scratch buffer ``%scratch0 =
   rngd.scratch : memref<T0x...xP0x...xf8>``, row-major in the stream's time
   then packet shape (``fetch-place-dm`` places it after the arguments);
3. a convert-only **sub**-context ``fetch.fetch`` of the buffer (the
   identity map), carrying the sub stages that remain, which feeds the
   original consumers.

Two patterns, one per op it rewrites:

* :class:`RouteSubConvert`: ``fetch.convert`` from ``f4E2M1FN`` on ``sub`` to
  ``f8E4M3FN`` or ``f8E5M2`` (lookup only: the staging fetch has no stage)
  or ``f32`` (lookup to ``f8E4M3FN``, then the ``f8E4M3FN → f32`` cast on
  the staging fetch).  Identity casts/converts between the fetch and the
  convert go with the old fetch; stages after the convert stay where they
  are, on the staging stream.
* :class:`RouteSubDequant`: ``fetch.dequant`` on ``sub``: the main decode to
  ``f8E4M3FN``, then on sub the staging fetch with the ``f8E4M3FN → f32``
  cast, the fetch of the block scales (also on sub, one scale per block as
  ``fetch-split-scaling`` reads them, right after the staging fetch; nvfp4:
  with its cast to ``f32``), ``rngd.block_scale`` and (nvfp4)
  ``rngd.tensor_scale``, and for a ``bf16`` result the Cast Engine's
  ``rngd.cast``.  The values are those of the split on main:
  ``(E2M1[code] × f32(bscale)) × gscale``, since every e2m1 value is exact
  in ``f8E4M3FN``.  The block scales stay in lockstep here (on the sub unit,
  beside the staged codes): the VRF staging of ``fetch-split-scaling`` is
  for main-context decodes.

The SSA value of each scratch buffer is named after its MANIFEST tensor
(``%scratch0``, ``%scratch1``, ... in program order:
:func:`fetchc.kernel.scratch_names`).

Op order (and so program order, names ``function/index``): the scratch
buffer, the main decode fetch, its lookup and commit, and the staging fetch
(then the scale fetch) take the place of the original fetch; the stages and
Vector Engine ops that replace the request take its place.  The main fetch
and the staging fetch keep the original fetch's location; the other new ops
(scratch buffer included) the request's.  A ``read_size`` of the original
sub fetch (on sub it can only be the fixed 8 bytes) is not carried over: the
main fetch derives its own.

Other requests are left alone (``fetch-legalize-convert`` reports a
sub-context lookup of another type, e.g. ``f8E4M3FN → bf16``).  Written
``fetch.table_lookup`` ops on ``sub`` are verifier errors (ir.md §3 rule 2)
and never reach this pass.

Runs first in the default pipeline, before ``fetch-place-dm``, so that the
placement sees the scratch buffers.  Errors (:class:`PassError`, at the
request, with a note at the fetch): a routed fetch that breaks a sequencer
limit (hardware.md §3), and for dequant the errors of
:func:`fetchc.passes.split_scaling.scale_fetch_ops`.

Spec: hardware.md §2.1 (decode to DM, then StoTrf), ir.md §2a, §3 rule 2, §4;
seqbin.md MANIFEST (``"scratch": true``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fetchc import target
from fetchc.diagnostics import OpError, PassError
from fetchc.dialects.fetch import CastOp, ConvertOp, DequantOp, FetchOp, StreamType, TableLookupOp
from fetchc.dialects.fetch_chain import is_identity_cast
from fetchc.dialects.rngd import CommitOp, ScratchOp
from fetchc.kernel import scratch_names
from fetchc.passes.split_scaling import scale_fetch_ops, scale_ops
from fetchc.rewriting import FetchcPass, apply_pattern

__all__ = ["RouteSubConvert", "RouteSubDequant", "RouteSubDecodePass", "ROUTED_TARGETS"]

ROUTED_TARGETS = (target.F8E4M3FN, target.F8E5M2, target.F32)
"""The element types a sub-context ``fetch.convert`` from ``f4E2M1FN`` is
routed to."""


def _is_identity(op: Operation) -> bool:
    if is_identity_cast(op):
        return True
    if isinstance(op, ConvertOp):
        return op.in_type.element_type == op.out_type.element_type
    return False


def _codes_fetch(v: SSAValue) -> tuple[FetchOp, list[Operation]] | None:
    """The ``fetch.fetch`` whose stream reaches ``v`` through identity casts
    and converts only, and those ops (fetch side first); None otherwise."""
    between: list[Operation] = []
    owner = v.owner
    while isinstance(owner, Operation) and _is_identity(owner):
        between.append(owner)
        owner = owner.operands[0].owner
    if not isinstance(owner, FetchOp):
        return None
    return owner, between[::-1]


def _check(fetch: FetchOp, cast_out: target.ElementType | None, request: Operation, codes: FetchOp, what: str) -> None:
    """The routed ``fetch`` is a legal Fetch Unit program (hardware.md §3),
    else a :class:`PassError` at ``request``."""
    try:
        fetch.sequencer_config(cast_out=cast_out, infer_cast=False)
    except OpError as e:
        raise PassError(
            request,
            f"is routed through a DM scratch buffer (the sub Fetch Unit has no table register), but {what} "
            f"({fetch.stream.spelled()}) breaks a sequencer limit: {e.message}",
            [(codes, "the codes are fetched here")],
        ) from None


def _scratch_of(new: list[Operation]) -> ScratchOp:
    """The scratch buffer of :func:`_route`'s ops: the first."""
    scratch = new[0]
    assert isinstance(scratch, ScratchOp)
    return scratch


def _route(
    request: Operation, codes: FetchOp, decoded: target.ElementType, staged_cast: target.ElementType | None
) -> tuple[list[Operation], FetchOp]:
    """The ops that replace the sub fetch ``codes`` (in order: scratch
    buffer, main decode fetch, paired lookup to ``decoded``, commit, staging
    fetch on sub) and the staging fetch.  ``staged_cast``: the cast output
    the staging fetch's chain will have (for its sequencer check)."""
    st = codes.stream
    dtype = target.mlir_type(decoded)
    scratch = ScratchOp(MemRefType(dtype, list(st.time) + list(st.packet)))

    main = FetchOp(codes.source, StreamType("main", st.time, st.packet, st.element_type), base=None)
    for name in ("base", "map"):
        if name in codes.properties:
            main.properties[name] = codes.properties[name]
    look = TableLookupOp(main.result, main.stream.with_element(dtype))
    commit = CommitOp(look.result, scratch.result)
    staged = FetchOp(scratch.result, StreamType(st.ctx, st.time, st.packet, dtype), base=None)

    _check(main, None, request, codes, f"its main-context decode fetch of {codes.memref}")
    _check(staged, staged_cast, request, codes, f"the sub-context fetch of its scratch buffer ({scratch.memref})")

    main.result.name_hint = codes.result.name_hint
    main.location = staged.location = codes.location
    scratch.location = look.location = commit.location = request.location
    return [scratch, main, look, commit, staged], staged


def _replace_codes(rewriter: PatternRewriter, codes: FetchOp, between: list[Operation], new: list[Operation]) -> None:
    """Insert ``new`` where ``codes`` is and erase ``codes`` and the identity
    ops ``between`` (whose last use, the request, is gone already)."""
    for o in new:
        rewriter.insert(o, InsertPoint.before(codes))
    for o in reversed(between):
        rewriter.erase(o)
    rewriter.erase(codes)


class _RoutePattern(RewritePattern):
    """A pattern that appends every ``rngd.scratch`` it creates to
    ``created`` (the pass names them afterwards)."""

    def __init__(self, created: list[ScratchOp] | None = None):
        super().__init__()
        self.created = created if created is not None else []


class RouteSubConvert(_RoutePattern):
    """A ``fetch.convert`` from ``f4E2M1FN`` on ``sub`` to one of
    :data:`ROUTED_TARGETS` → main decode, commit to scratch, staging fetch on
    sub (+ the ``f8E4M3FN → f32`` cast for ``f32``).  Module docstring."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvertOp, rewriter: PatternRewriter) -> None:
        src, dst = op.in_type, op.out_type
        if target.has_table_register(src.ctx) or src.elem != target.F4E2M1FN or dst.elem not in ROUTED_TARGETS:
            return
        found = _codes_fetch(op.input)
        if found is None:
            return
        codes, between = found
        chain = target.conversion_chain(src.element_type, dst.element_type)
        (kind, decoded), rest = chain[0], chain[1:]
        assert kind == target.TABLE_LOOKUP and all(k == target.CAST for k, _ in rest)
        new, staged = _route(op, codes, decoded, rest[-1][1] if rest else None)
        self.created.append(_scratch_of(new))

        value: SSAValue = staged.result
        casts: list[Operation] = []
        for _, out in rest:
            c = CastOp(value, staged.stream.with_element(target.mlir_type(out)))
            c.location = op.location
            casts.append(c)
            value = c.result
        rewriter.replace(op, casts, [value])
        _replace_codes(rewriter, codes, between, new)


class RouteSubDequant(_RoutePattern):
    """A ``fetch.dequant`` on ``sub`` → main decode to ``f8E4M3FN``, commit
    to scratch; on sub the staging fetch + cast to f32, the block-scale fetch
    (+ cast for nvfp4), ``rngd.block_scale``, ``rngd.tensor_scale`` (nvfp4).
    Module docstring."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DequantOp, rewriter: PatternRewriter) -> None:
        codes = op.input.owner
        if not isinstance(codes, FetchOp) or target.has_table_register(codes.stream.ctx):
            return
        base = None if op.scale_base is None else op.scale_base.value.data
        sops, scale = scale_fetch_ops(op, codes, base)
        new, staged = _route(op, codes, target.F8E4M3FN, target.F32)
        self.created.append(_scratch_of(new))

        cast = CastOp(staged.result, staged.stream.with_element(target.mlir_type(target.F32)))
        cast.location = op.location
        vops, result = scale_ops(op, cast.result, scale)
        rewriter.replace(op, [cast, *vops], [result])
        _replace_codes(rewriter, codes, [], new + sops)


@dataclass(frozen=True)
class RouteSubDecodePass(FetchcPass):
    """``fetch-route-sub-decode`` (module docstring; first in the default
    pipeline, before ``fetch-place-dm``).  Raises
    :class:`fetchc.diagnostics.PassError` at a request whose routed
    fetches break a sequencer limit, or (dequant) whose block-scale fetch
    cannot be built."""

    name = "fetch-route-sub-decode"
    summary = (
        "a packed e2m1 decode asked for on the sub Fetch Unit becomes a main-context decode "
        "into a DM scratch buffer plus a convert-only sub fetch"
    )

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        created: list[ScratchOp] = []
        apply_pattern(
            GreedyRewritePatternApplier([RouteSubConvert(created), RouteSubDequant(created)]),
            op,
            listener,
            on=(ConvertOp, DequantOp),
        )
        # Print each new scratch buffer under its MANIFEST name (scratch0, ...).
        funcs = {f for s in created if isinstance(f := s.parent_op(), FuncOp)}
        for f in funcs:
            for sop, name in scratch_names(f).items():
                if sop in created:
                    sop.results[0].name_hint = name
