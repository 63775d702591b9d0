"""The ``seq-bin`` serialiser: a module lowered to ``fetch_seq`` → ``seq.bin``.

As mlir-aie's ``AIETargetNPU`` does for its register ops, this walks the
typed ``fetch_seq`` ops and packs their fields; it decides nothing.
``fetch-to-seq`` and the ``fetch_seq`` verifiers guarantee what it relies on:
every program's fields are a legal record, each distinct table is one
``fetch_seq.table``.  Programs are taken in walk order (functions in file
order, programs within a function in order) and tables in order of first use.
Spec: seqbin.md, ir.md §4.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from fetchc.dialects.fetch_seq import ProgramOp, TableOp
from fetchc.frontend.diagnostics import Diagnostic, DiagnosticError, op_error
from fetchc.seqbin.format import Program, SeqBin, SeqBinError, Table
from fetchc.seqbin.writer import write

__all__ = ["UNLOWERED", "emit_seqbin", "module_to_seqbin", "program_record", "table_record"]

UNLOWERED = ("fetch.fetch", "fetch.table_lookup", "fetch.cast", "fetch.zp_sub", "fetch.convert", "fetch.dequant")
"""Ops that must be gone before ``--emit=bin``."""


def table_record(op: TableOp) -> Table:
    """The TABLES record of a ``fetch_seq.table``."""
    src, dst = op.pair
    assert src is not None and dst is not None
    entries = b"".join(v.to_bytes(2, "little") for v in op.entry_values())
    return Table(paired=op.paired is not None, in_dtype=src, out_dtype=dst, entries=entries)


def program_record(op: ProgramOp, table_index: int | None) -> Program:
    """The PROGRAMS record of a ``fetch_seq.program`` whose table is TABLES
    record ``table_index`` (None without a table)."""
    zp = op.field("zero_point")
    assert op.in_dtype is not None and op.out_type.elem is not None
    return Program(
        name=op.program_name.data,
        unit=op.unit.code,
        in_dtype=op.in_dtype,
        out_dtype=op.out_type.elem,
        base=op.base.value.data,
        packet_size=op.packet_size.value.data,
        fetch_size=op.fetch_size.value.data,
        limits=op.limit_values,
        strides=op.stride_values,
        stages=op.stages.code,
        table=table_index,
        type_conversion=None if op.type_conversion is None else op.type_conversion.code,
        zero_point0=0 if zp is None else zp,
        num_zero_points=0 if zp is None else 1,
        zp_mode=op.zp_mode.code,
        flit_count=op.flit_count.value.data,
        words_per_packet=op.words_per_packet.value.data,
    )


def _collect(module: ModuleOp) -> tuple[SeqBin, list[ProgramOp]]:
    tables: list[Table] = []
    table_index: dict[Operation, int] = {}
    programs: list[Program] = []
    program_ops: list[ProgramOp] = []
    for op in module.walk():
        if op.name in UNLOWERED:
            raise DiagnosticError(
                op_error(
                    op,
                    "is still present: --emit=bin needs the pipeline to reach fetch_seq "
                    "(run fetch-legalize-convert, fetch-split-scaling, fetch-to-seq)",
                )
            )
        if not isinstance(op, ProgramOp):
            continue
        index = None
        table = op.table_op()
        if table is not None:
            if table not in table_index:
                table_index[table] = len(tables)
                tables.append(table_record(table))
            index = table_index[table]
        programs.append(program_record(op, index))
        program_ops.append(op)
    return SeqBin(tables=tuple(tables), programs=tuple(programs)), program_ops


def module_to_seqbin(module: ModuleOp) -> SeqBin:
    """The ``seq.bin`` content of a module after ``fetch-to-seq``.  Raises
    :class:`DiagnosticError` at the first ``fetch`` op still present (the
    pipeline did not reach ``fetch_seq``)."""
    return _collect(module)[0]


def emit_seqbin(module: ModuleOp) -> tuple[SeqBin, bytes]:
    """``(SeqBin, file bytes)`` of a module after ``fetch-to-seq``.

    Raises :class:`~fetchc.frontend.diagnostics.DiagnosticError`: at the op
    for a ``fetch`` op still present, at the ``fetch_seq.program`` whose
    record the writer refuses (a field that does not fit its word), else
    ``cannot serialise seq.bin: ...``."""
    sb, program_ops = _collect(module)
    try:
        return sb, write(sb)
    except SeqBinError as e:
        if e.program is not None and e.program < len(program_ops):
            raise DiagnosticError(op_error(program_ops[e.program], f"cannot be serialised: {e.detail}")) from None
        raise DiagnosticError(Diagnostic.error(f"cannot serialise seq.bin: {e}")) from None
