"""The ``seq-bin`` emitter: a module lowered to ``fetch_seq`` → :class:`SeqBin`.

xDSL's output targets write text only, so ``seq.bin`` has this writer path:
:func:`module_to_seqbin` collects the ``fetch_seq.program`` ops in program
order (functions in file order, programs within a function in order) and the
tables they use, each distinct table once, in order of first use; then
:func:`fetchc.seqbin.write` serialises it.  Spec: seqbin.md, ir.md §4.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import MemRefType, ModuleOp

from fetchc import target
from fetchc.frontend.diagnostics import Diagnostic, DiagnosticError, PassError, op_error
from fetchc.dialects.fetch import StreamType
from fetchc.dialects.fetch_seq import ProgramOp
from fetchc.seqbin import Program, SeqBin, SeqBinError, Table, write

UNLOWERED = ("fetch.fetch", "fetch.table_lookup", "fetch.cast", "fetch.zp_sub", "fetch.convert", "fetch.dequant")


def _collect(module: ModuleOp) -> tuple[SeqBin, list[ProgramOp]]:
    """The ``SeqBin`` of a lowered module and its program ops, in order.
    Raises :class:`PassError` at a ``fetch`` op still present."""
    for op in module.walk():
        if op.name in UNLOWERED:
            raise PassError(
                op,
                "is still present: --emit=bin needs the pipeline to reach fetch_seq "
                "(run fetch-legalize-convert, fetch-split-scaling, fetch-to-seq)",
            )
    table_index: dict[tuple, int] = {}
    tables: list[Table] = []
    programs: list[Program] = []
    program_ops: list[ProgramOp] = []
    for op in module.walk():
        if not isinstance(op, ProgramOp):
            continue
        program_ops.append(op)
        mt, st = op.source.type, op.result.type
        assert isinstance(mt, MemRefType) and isinstance(st, StreamType)
        src, dst = target.element_type(mt.element_type), st.elem
        assert src is not None and dst is not None
        tindex = None
        top = op.table_op()
        if top is not None:
            # Each distinct table once (by content, not by symbol: two
            # symbols holding the same table are one table), in order of
            # first use.
            ts, td = top.pair
            entries = b"".join(int(v).to_bytes(2, "little") for v in top.entry_values())
            key = (ts, td, top.paired is not None, entries)
            if key not in table_index:
                table_index[key] = len(tables)
                tables.append(Table(paired=top.paired is not None, in_dtype=ts, out_dtype=td, entries=entries))  # type: ignore[arg-type]
            tindex = table_index[key]
        zp = op.field("zero_point")
        programs.append(
            Program(
                name=op.program_name.data,
                unit=op.field("unit"),  # type: ignore[arg-type]
                in_dtype=src,
                out_dtype=dst,
                base=op.field("base"),  # type: ignore[arg-type]
                packet_size=op.field("packet_size"),  # type: ignore[arg-type]
                fetch_size=op.field("fetch_size"),  # type: ignore[arg-type]
                limits=op.limit_values,
                strides=op.stride_values,
                stages=op.field("stages"),  # type: ignore[arg-type]
                table=tindex,
                type_conversion=op.field("type_conversion"),
                zero_point0=0 if zp is None else zp,
                num_zero_points=0 if zp is None else 1,
                zp_mode=op.field("zp_mode"),  # type: ignore[arg-type]
                flit_count=op.field("flit_count"),  # type: ignore[arg-type]
                words_per_packet=op.field("words_per_packet"),  # type: ignore[arg-type]
            )
        )
    return SeqBin(tables=tuple(tables), programs=tuple(programs)), program_ops


def module_to_seqbin(module: ModuleOp) -> SeqBin:
    """The ``seq.bin`` contents of a module after ``fetch-to-seq``.

    Raises :class:`PassError` at the first op of the ``fetch`` dialect still
    present (the pipeline did not reach ``fetch_seq``).  The result is not
    yet checked by the writer: use :func:`emit_seqbin` for the bytes."""
    return _collect(module)[0]


def emit_seqbin(module: ModuleOp) -> tuple[SeqBin, bytes]:
    """The ``seq-bin`` emitter: ``(SeqBin, file bytes)`` of a module after
    ``fetch-to-seq``, serialised once.

    Raises :class:`~fetchc.diagnostics.DiagnosticError`: located at the op
    for a ``fetch`` op still present or a ``fetch_seq.program`` the writer
    rejects (the writer refuses any file its reader would reject), else
    ``cannot serialise seq.bin: ...``."""
    try:
        sb, program_ops = _collect(module)
    except PassError as e:
        raise DiagnosticError(op_error(e.op, e.message, e.notes)) from None
    try:
        return sb, write(sb)
    except SeqBinError as e:
        m = re.match(r"(?:refusing to write an invalid seq\.bin: )?program (\d+): (.*)", str(e), re.S)
        if m and int(m.group(1)) < len(program_ops):
            op = program_ops[int(m.group(1))]
            raise DiagnosticError(op_error(op, f"cannot be serialised: {m.group(2)}")) from None
        raise DiagnosticError(Diagnostic.error(f"cannot serialise seq.bin: {e}")) from None
