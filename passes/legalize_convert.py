"""``fetch-legalize-convert``: every ``fetch.convert`` becomes the legal
adapter stage chain, or a located error saying what the adapter offers.

* ``f8E4M3FN``/``f8E5M2 → bf16``: non-paired ``fetch.table_lookup``;
* ``f4E2M1FN → f8E4M3FN``/``f8E5M2``: paired ``fetch.table_lookup``;
* ``f4E2M1FN → f32``: paired lookup to ``f8E4M3FN`` + ``fetch.cast``;
* the seven casts of hardware.md §2.2: ``fetch.cast``;
* identity: the convert disappears.

The chain comes from :func:`fetchc.target.conversion_chain`.  The pass also
rejects a chain that would break the stage order together with the stages
already around the convert (a second cast, a lookup after a cast) and a
lookup on the ``sub`` context (for an ``f4E2M1FN`` source, naming the
automatic route ``fetch-route-sub-decode`` that did not run before it).
Spec: ir.md §4, hardware.md §2.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, RewritePattern, op_type_rewrite_pattern

from fetchc import target
from fetchc.diagnostics import PassError
from fetchc.dialects.fetch import CastOp, ConvertOp, StreamType, TableLookupOp
from fetchc.dialects.fetch_chain import STAGE_OPS, stages_around
from fetchc.rewriting import FetchcPass, apply_pattern

_KIND_OP = {target.TABLE_LOOKUP: "fetch.table_lookup", target.CAST: "fetch.cast"}


class LegalizeConvert(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvertOp, rewriter: PatternRewriter) -> None:
        src, dst = op.in_type, op.out_type
        try:
            chain = target.conversion_chain(src.element_type, dst.element_type)
        except target.NoConversionError as e:
            raise PassError(op, f"cannot be legalised: {e}") from None

        names = [_KIND_OP[k] for k, _ in chain]
        if not target.has_table_register(src.ctx) and "fetch.table_lookup" in names:
            head = (
                f"needs a table lookup for {src.elem} -> {dst.elem}, but the stream is on the sub Fetch Unit, "
                "which has no table-lookup register"
            )
            if src.elem == target.F4E2M1FN:
                raise PassError(
                    op,
                    f"{head}; the automatic route (fetch-route-sub-decode, first in the default pipeline) decodes "
                    "on the main context into a DM scratch buffer and stages it on the sub context: run it before "
                    "fetch-legalize-convert, or write the route by hand (decode on main, rngd.commit to DM, then "
                    "a convert-only StoTrf fetch on sub)",
                )
            raise PassError(
                op,
                f"{head}; decode on the main context, commit the result to DM "
                "with rngd.commit, then stage it with a convert-only StoTrf fetch on the sub context",
            )
        if not chain:
            # Identity: the convert disappears.  Whatever the stages around
            # it do is theirs to answer for (the verifier checks their order
            # after this pass, at the offending stage).
            rewriter.replace(op, [], [op.input])
            return
        before, after = stages_around(op)
        order = (
            [STAGE_OPS[o.name].order for o in before]
            + [STAGE_OPS[n].order for n in names]
            + [STAGE_OPS[o.name].order for o in after]
        )
        if any(a >= b for a, b in pairwise(order)):
            what = " + ".join(STAGE_OPS[n].text for n in names)
            raise PassError(
                op,
                f"legalises {src.elem} -> {dst.elem} to {what}, which breaks the adapter's stage order "
                "together with the stages around it: the Fetch Adapter runs table lookup, then type cast, "
                "then zero-point subtraction, each at most once",
                [(o, f"this {STAGE_OPS[o.name].text} is on the same stream") for o in (*before, *after)],
            )

        value = op.input
        for kind, out in chain:
            t = StreamType(src.ctx, src.time, src.packet, target.mlir_type(out))
            new = (TableLookupOp if kind == target.TABLE_LOOKUP else CastOp)(value, t)
            new.location = op.location
            rewriter.insert(new)
            value = new.result
        rewriter.replace(op, [], [value])


@dataclass(frozen=True)
class LegalizeConvertPass(FetchcPass):
    """``fetch-legalize-convert`` (ir.md §4).  Raises
    :class:`fetchc.diagnostics.PassError` at the first ``fetch.convert`` with
    no legal chain."""

    name = "fetch-legalize-convert"
    summary = "fetch.convert -> the legal chain of adapter stages, or an error naming what the hardware offers"

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        apply_pattern(LegalizeConvert(), op, listener, on=(ConvertOp,))
