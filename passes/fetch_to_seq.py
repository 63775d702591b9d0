"""``fetch-to-seq``: each Fetch Unit program (a ``fetch.fetch`` and the
adapter stages on its stream) becomes one ``fetch_seq.program`` register
block; the lookup tables it uses become ``fetch_seq.table`` constants at the
top of the module, one per distinct table, in order of first use.

Programs are named ``function/index``, index counting the function's
``fetch.fetch`` ops from 0 in order.  The sequencer configuration comes from
:meth:`fetchc.dialects.fetch.FetchOp.sequencer_config` (hardware.md §3).
``fetch.convert`` and ``fetch.dequant`` must have been lowered first.
Spec: ir.md §4, hardware.md §3 and §5, seqbin.md PROGRAMS.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from fetchc import target
from fetchc.frontend.diagnostics import PassError
from fetchc.dialects.fetch import CastOp, FetchOp, StreamType, TableLookupOp, ZpSubOp
from fetchc.dialects.fetch_seq import ProgramOp, TableOp

STAGE_OPS = ("fetch.table_lookup", "fetch.cast", "fetch.zp_sub")


def table_symbol(src: target.ElementType, dst: target.ElementType) -> str:
    """The symbol name of the ``src → dst`` table, e.g. ``f4E2M1FN_to_f8E4M3FN``."""
    return f"{src.name}_to_{dst.name}"


def program_chain(fetch: FetchOp) -> list[Operation]:
    """The adapter stages on ``fetch``'s stream, in order."""
    chain: list[Operation] = []
    cur: Operation = fetch
    while len(uses := list(cur.results[0].uses)) == 1 and uses[0].operation.name in STAGE_OPS:
        cur = uses[0].operation
        chain.append(cur)
    return chain


@dataclass(frozen=True)
class FetchToSeqPass(ModulePass):
    """``fetch-to-seq`` (ir.md §4).  Raises
    :class:`fetchc.diagnostics.PassError` for a ``fetch.convert`` or
    ``fetch.dequant`` still present, a ``fetch.fetch`` outside a
    ``func.func``, or a sequencer limit (also caught by the verifier)."""

    name = "fetch-to-seq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in op.walk():
            if o.name in ("fetch.convert", "fetch.dequant"):
                p = "fetch-legalize-convert" if o.name == "fetch.convert" else "fetch-split-scaling"
                raise PassError(o, f"must be lowered before fetch-to-seq: run {p} first")

        # Tables already in the module (input that went through fetch-to-seq
        # before, or written by hand) are reused, not duplicated.
        existing: dict[tuple[target.ElementType, target.ElementType], TableOp] = {}
        for t in op.walk():
            if isinstance(t, TableOp):
                pair = t.pair
                if pair not in existing and t.entry_values() == list(target.table_entries(*pair)):  # type: ignore[arg-type]
                    existing[pair] = t  # type: ignore[index]
        taken = {t.sym_name.data for t in op.walk() if isinstance(t, TableOp)}
        tables: dict[tuple[target.ElementType, target.ElementType], TableOp] = {}

        def new_table(src: target.ElementType, dst: target.ElementType) -> TableOp:
            name, k = table_symbol(src, dst), 0
            while name in taken:
                k += 1
                name = f"{table_symbol(src, dst)}_{k}"
            taken.add(name)
            return TableOp(name, src, dst)
        counters: dict[str, int] = {}
        rewriter = Rewriter()
        for fetch in [o for o in op.walk() if isinstance(o, FetchOp)]:
            fn = fetch.parent_op()
            while fn is not None and not isinstance(fn, func.FuncOp):
                fn = fn.parent_op()
            if fn is None:
                raise PassError(fetch, "must be inside a func.func, whose name names its Fetch Unit program")
            fname = fn.sym_name.data
            index = counters.get(fname, 0)
            counters[fname] = index + 1

            chain = program_chain(fetch)
            stages = 0
            table = None
            type_conversion = None
            zero_point = None
            zp_mode = 0
            cast_out = None
            for st in chain:
                s_in = st.operands[0].type
                s_out = st.results[0].type
                assert isinstance(s_in, StreamType) and isinstance(s_out, StreamType)
                if isinstance(st, TableLookupOp):
                    stages |= target.STAGE_TABLE_LOOKUP
                    pair = (s_in.elem, s_out.elem)
                    if pair not in tables:
                        tables[pair] = existing.get(pair) or new_table(*pair)  # type: ignore[arg-type]
                    table = tables[pair].sym_name.data
                elif isinstance(st, CastOp):
                    stages |= target.STAGE_TYPE_CONVERSION
                    type_conversion = target.CAST_CODES[(s_in.elem, s_out.elem)]  # type: ignore[index]
                    cast_out = s_out.elem
                elif isinstance(st, ZpSubOp):
                    stages |= target.STAGE_ZERO_POINT
                    zero_point = st.zp
                    zp_mode = target.ZERO_POINT[s_in.elem].mode  # type: ignore[index]
            try:
                cfg = fetch.sequencer_config(cast_out=cast_out, infer_cast=False)
            except Exception as e:  # OpError from the sequencer
                raise PassError(fetch, getattr(e, "message", str(e))) from None

            last = chain[-1] if chain else fetch
            out_type = last.results[0].type
            assert isinstance(out_type, StreamType) and out_type.elem is not None
            prog = ProgramOp(
                fetch.source,
                out_type,
                program_name=f"{fname}/{index}",
                unit=target.UNIT_CODE[out_type.ctx],
                base=cfg.base,
                packet_size=cfg.packet_size,
                fetch_size=cfg.fetch_size,
                limits=cfg.limits,
                strides=cfg.strides,
                stages=stages,
                table=table,
                type_conversion=type_conversion,
                zero_point=zero_point,
                zp_mode=zp_mode,
                flit_count=target.flit_count(cfg.packet_size, out_type.elem),
                words_per_packet=cfg.words_per_packet,
                cycles=cfg.cycles,
            )
            prog.location = fetch.location
            rewriter.insert_op(prog, InsertPoint.before(fetch))
            last.results[0].replace_all_uses_with(prog.result)
            for st in reversed(chain):
                rewriter.erase_op(st)
            rewriter.erase_op(fetch)

        block = op.body.block
        for t in reversed([t for t in tables.values() if t.parent is None]):
            if block.first_op is None:
                block.add_op(t)
            else:
                block.insert_op_before(t, block.first_op)
