"""The ``seq-bin`` serialiser: a module lowered to ``fetch_seq`` → ``seq.bin``.

As mlir-aie's ``AIETargetNPU`` does for its register ops, this walks the
typed ``fetch_seq`` ops and packs their fields; it decides nothing.
``fetch-to-seq`` and the ``fetch_seq`` verifiers guarantee what it relies on:
every program's fields are a legal record, each distinct table is one
``fetch_seq.table`` of its module (kernels in nested modules have their
own, and a table two modules hold is written once).  Programs are taken in walk order (functions in file
order, programs within a function in order) and tables in order of first use.

The MANIFEST (seqbin.md, ir.md §2a) is read off the IR as well
(:func:`build_manifest`): a kernel per ``func.func`` holding programs, its
memref arguments as tensors (placement from their ``rngd.dm_base`` argument
attribute, which ``fetch-place-dm`` sets), then its ``rngd.scratch`` buffers
as tensors with ``"arg": null`` and ``"scratch": true``, named ``scratch0``,
... in program order (placement from their ``dm_base`` property), its
``f32`` arguments as scalars,
and per program its tensor, its result stream's time and packet shape and
its location.  Spec: seqbin.md, ir.md §2a, §4.
"""

from __future__ import annotations

import struct

from xdsl.dialects.builtin import Float32Type, MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from fetchc.diagnostics import Diagnostic, DiagnosticError
from fetchc.dialects.fetch_seq import ProgramOp, TableOp
from fetchc.dialects.rngd import CommitOp, ScratchOp
from fetchc.dialects.shared import memref_layout_of
from fetchc.frontend.locations import loc_text, op_error
from fetchc.kernel import (
    DM_BASE_ATTR,
    arg_attribute,
    int_value,
    kernel_slices,
    kernels,
    scratch_names,
    slice_dim,
    tensor_names,
)
from fetchc.kernel import spelled as _spelled
from fetchc.rewriting import walk
from fetchc.seqbin.format import Program, SeqBin, SeqBinError, Table
from fetchc.seqbin.manifest import Kernel, KernelProgram, Manifest, Scalar, Tensor
from fetchc.seqbin.writer import write
from fetchc.target import F32, element_type
from fetchc.target.layout import layout_byte_span, memref_byte_span, memref_layout

__all__ = [
    "UNLOWERED",
    "DM_BASE_ATTR",
    "build_manifest",
    "emit_seqbin",
    "module_to_seqbin",
    "program_record",
    "table_record",
]

UNLOWERED = ("fetch.fetch", "fetch.table_lookup", "fetch.cast", "fetch.zp_sub", "fetch.convert", "fetch.dequant")
"""Ops that must be gone before ``--emit=bin``."""


def table_record(op: TableOp) -> Table:
    """The TABLES record of a ``fetch_seq.table``."""
    src, dst = op.pair
    assert src is not None and dst is not None
    values = op.entry_values()
    entries = struct.pack(f"<{len(values)}H", *values)
    return Table(paired=op.paired is not None, in_dtype=src, out_dtype=dst, entries=entries,
                 function=op.function_name, scale=op.scale_value, zero_point=op.zero_point_value)  # fmt: skip


def program_record(op: ProgramOp, table_index: int | None) -> Program:
    """The PROGRAMS record of a ``fetch_seq.program`` whose table is TABLES
    record ``table_index`` (None without a table): its fields as its
    verifier read them (:meth:`ProgramOp.fields`)."""
    f = op.fields()
    return Program(
        name=op.program_name.data, unit=f.unit, in_dtype=f.in_dtype, out_dtype=f.out_dtype, base=f.base,
        packet_size=f.packet_size, fetch_size=f.fetch_size, limits=f.limits, strides=f.strides, stages=f.stages,
        table=table_index, type_conversion=f.type_conversion, zero_point0=f.zero_point0,
        num_zero_points=f.num_zero_points, zp_mode=f.zp_mode, flit_count=f.flit_count,
        words_per_packet=f.words_per_packet,
    )  # fmt: skip


_LOWERED_BY = (("fetch.convert", "fetch-legalize-convert"), ("fetch.dequant", "fetch-split-scaling"))


def _lowering_hint(module: ModuleOp) -> str:
    """What lowers the ops still in ``module`` to ``fetch_seq``, named from
    the IR (so never a pass that already ran: each of these passes lowers
    every op it handles): ``fetch-legalize-convert`` while a ``fetch.convert``
    is left, ``fetch-split-scaling`` while a ``fetch.dequant`` is, then
    ``fetch-to-seq``; ``fetch-place-dm`` first while a kernel's tensor has
    no address."""
    left = {op.name for op in walk(module)}
    unplaced = any(
        isinstance(a.type, MemRefType) and arg_attribute(f, a, DM_BASE_ATTR) is None
        for f in kernels(module)
        for a in f.body.block.args
    )
    passes = ["fetch-place-dm"] * unplaced + [p for name, p in _LOWERED_BY if name in left] + ["fetch-to-seq"]
    return f"run {', then '.join(passes)}; without -p the default pipeline runs every pass"


def _collect(module: ModuleOp) -> tuple[SeqBin, list[ProgramOp]]:
    tables: list[Table] = []
    table_index: dict[Operation, int] = {}
    by_record: dict[Table, int] = {}
    programs: list[Program] = []
    program_ops: list[ProgramOp] = []
    for op in walk(module):
        if op.name in UNLOWERED:
            raise DiagnosticError(
                op_error(
                    op,
                    f"is still present: --emit=bin needs the pipeline to reach fetch_seq ({_lowering_hint(module)}); "
                    "to write the IR instead, use --emit=mlir (or -o FILE.mlir)",
                )
            )
        if not isinstance(op, ProgramOp):
            continue
        index = None
        table = op.table_op()
        if table is not None:
            if table not in table_index:  # each distinct table once (kernels of nested modules have their own ops)
                record = table_record(table)
                if record not in by_record:
                    by_record[record] = len(tables)
                    tables.append(record)
                table_index[table] = by_record[record]
            index = table_index[table]
        programs.append(program_record(op, index))
        program_ops.append(op)
    return SeqBin(tables=tuple(tables), programs=tuple(programs)), program_ops


def module_to_seqbin(module: ModuleOp) -> SeqBin:
    """The ``seq.bin`` content of a module after ``fetch-to-seq``, MANIFEST
    included.  Raises :class:`DiagnosticError` as :func:`emit_seqbin`."""
    return emit_seqbin(module)[0]


def emit_seqbin(module: ModuleOp) -> tuple[SeqBin, bytes]:
    """``(SeqBin, file bytes)`` of a module after ``fetch-to-seq``.

    Raises :class:`~fetchc.diagnostics.DiagnosticError`: at the op
    for a ``fetch`` op still present, at the ``fetch_seq.program`` whose
    record the writer refuses, at the function or program the MANIFEST
    cannot describe (:func:`build_manifest`), else ``cannot serialise
    seq.bin: ...``."""
    sb, program_ops = _collect(module)
    sb = SeqBin(sb.tables, sb.programs, build_manifest(program_ops))
    try:
        return sb, write(sb)
    except SeqBinError as e:
        if e.program is not None and e.program < len(program_ops):
            raise DiagnosticError(op_error(program_ops[e.program], f"cannot be serialised: {e.detail}")) from None
        raise DiagnosticError(Diagnostic.error(f"cannot serialise seq.bin: {e}")) from None


# --------------------------------------------------------------------------
# MANIFEST
# --------------------------------------------------------------------------


def build_manifest(program_ops: list[ProgramOp]) -> Manifest:
    """The MANIFEST of the programs ``program_ops`` (PROGRAMS order): one
    kernel per ``func.func`` holding any of them, in file order (ir.md §2a).

    Raises :class:`DiagnosticError`: at a program not inside a ``func.func``
    or reading a memref that is neither an argument nor a scratch buffer of
    its function; at the function for a memref argument without a DM layout
    (element type, layout) or without ``rngd.dm_base`` (run
    ``fetch-place-dm``); at a ``rngd.scratch`` without ``dm_base``."""
    groups: dict[FuncOp, list[int]] = {}
    for i, op in enumerate(program_ops):
        groups.setdefault(_kernel_of(op), []).append(i)
    kernels = [_kernel(f, [(i, program_ops[i]) for i in idx]) for f, idx in groups.items()]
    return Manifest(tuple(kernels))


def _kernel_of(op: ProgramOp) -> FuncOp:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    if parent is None:
        raise DiagnosticError(op_error(op, "is not inside a func.func: every program belongs to a kernel (ir.md §2a)"))
    return parent


def _kernel(f: FuncOp, programs: list[tuple[int, ProgramOp]]) -> Kernel:
    args = f.body.block.args
    names = tensor_names(f)
    committed = {op.dest for op in walk(f) if isinstance(op, CommitOp)}
    read = {op.source for _, op in programs}
    tensor_of: dict[SSAValue, int] = {}
    tensors: list[Tensor] = []
    scalars: list[Scalar] = []
    for arg in args:
        if isinstance(arg.type, MemRefType):
            tensor_of[arg] = len(tensors)
            tensors.append(_tensor(f, arg, names[arg.index], arg in read, arg in committed))
        elif isinstance(arg.type, Float32Type):
            scalars.append(Scalar(arg.index, names[arg.index], F32))
    for sop, name in scratch_names(f, names).items():
        assert isinstance(sop, ScratchOp)
        tensor_of[sop.result] = len(tensors)
        tensors.append(_scratch(sop, name, sop.result in read, sop.result in committed))
    entries = []
    for index, op in programs:
        src = op.source
        if src not in tensor_of:
            raise DiagnosticError(
                op_error(op, f"reads a memref that is not an argument of func @{f.sym_name.data}: "
                         "pass it in as a function argument (ir.md §2a)")
            )  # fmt: skip
        st = op.out_type
        assert st.elem is not None  # the fetch_seq.program verifier
        entries.append(KernelProgram(index, tensor_of[src], st.time, st.packet, st.elem, loc_text(op)))
    return Kernel(f.sym_name.data, tuple(tensors), tuple(scalars), tuple(entries), kernel_slices(f))


def _tensor(f: FuncOp, arg: BlockArgument, name: str, read: bool, committed: bool) -> Tensor:
    mt = arg.type
    assert isinstance(mt, MemRefType)
    t = element_type(mt.element_type)
    if t is None or t.in_flight_only:
        raise DiagnosticError(
            op_error(f, f"argument {_spelled(arg)} is a memref of {mt.element_type}, which has no DM layout")
        )
    try:
        strides, offset = memref_layout_of(mt)
    except ValueError as e:
        raise DiagnosticError(op_error(f, f"argument {_spelled(arg)}: {e}")) from None
    shape = tuple(mt.get_shape())
    lo, end = layout_byte_span(shape, strides, offset, t.bits)  # memref_byte_span of a fetchable type
    return Tensor(
        arg=arg.index, name=name, dtype=t, shape=shape, strides=tuple(strides), offset=offset,
        dm_base=_dm_base(f, arg), bytes=end - lo, read=read, committed=committed, slice_dim=slice_dim(f, arg),
    )  # fmt: skip


def _scratch(op: ScratchOp, name: str, read: bool, committed: bool) -> Tensor:
    mt = op.memref
    t = element_type(mt.element_type)
    assert t is not None  # the rngd.scratch verifier
    lo, end = memref_byte_span(mt)
    if op.base_value is None:
        raise DiagnosticError(
            op_error(op, f"scratch buffer {name} has no dm_base: run fetch-place-dm after fetch-route-sub-decode "
                     "(the default pipeline does)")
        )  # fmt: skip
    strides, offset = memref_layout(mt)
    return Tensor(
        arg=None, name=name, dtype=t, shape=tuple(mt.get_shape()), strides=tuple(strides), offset=offset,
        dm_base=op.base_value, bytes=end - lo, read=read, committed=committed, scratch=True,
    )  # fmt: skip


def _dm_base(f: FuncOp, arg: BlockArgument) -> int:
    value = arg_attribute(f, arg, DM_BASE_ATTR)
    if value is None:
        raise DiagnosticError(
            op_error(f, f"argument {_spelled(arg)} has no {DM_BASE_ATTR}: run fetch-place-dm (in the "
                     "default pipeline) or place it with {rngd.dm_base = N : i64}")
        )  # fmt: skip
    base = int_value(value)
    if base is None:
        raise DiagnosticError(op_error(f, f"argument {_spelled(arg)}: {DM_BASE_ATTR} must be an integer, not {value}"))
    return base
