"""``fetch-to-seq``: each Fetch Unit program (a ``fetch.fetch`` and the
adapter stages on its stream) becomes one ``fetch_seq.program`` register
block; the lookup tables it uses become ``fetch_seq.table`` constants at the
top of the module, one per distinct table (decode tables by pair, function
tables by key type, function, scale and zero point; hardware.md §2.1b), in
order of first use.  A function table is baked here
(:func:`fetchc.target.functions.function_entries`).  A table's symbol is
unique in its symbol table: a kernel named like one (``@gelu_f8E4M3FN``)
makes it ``@gelu_f8E4M3FN_1``; the tables of a kernel in a nested
``builtin.module`` go into that module, the symbol table its program's
``table = @...`` is looked up in.

One pattern (:class:`FetchToProgram`, one ``fetch.fetch`` chain to one
register block) and a pass that wires it with the two pieces of module-level
state it needs: the :class:`TableRegistry` and the program names.

Programs are named ``function/index``, index counting the function's
``fetch.fetch`` ops from 0 in order; a function inside a named nested
``builtin.module @m`` is ``m/function/index``, and two kernels whose names
still collide (unnamed nested modules) are an error.  The sequencer
configuration comes from :meth:`fetchc.dialects.fetch.FetchOp.sequencer_config`
(hardware.md §3); a masked chain's configuration from
:meth:`~fetchc.dialects.fetch.FetchOp.mask_config` (hardware.md §2.0: the
loops that walk the padded axis are kept apart, and the base moves back by
the left pad), written on the program as ``mask``, with the fetch's padding
as ``pad`` (the MANIFEST's, seqbin.md 1.3).  ``fetch.convert`` and
``fetch.dequant`` must have been lowered first.  Spec: ir.md §4,
hardware.md §2.0, §3 and §5, seqbin.md PROGRAMS and MASKS.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import SymbolOpInterface, SymbolTable

from fetchc import target
from fetchc.diagnostics import OpError, PassError
from fetchc.dialects.fetch import FetchOp, StreamType, TableLookupOp, ZpSubOp
from fetchc.dialects.fetch_chain import ADAPTER_REQUESTS, FetchChain
from fetchc.dialects.fetch_seq import ProgramOp, TableOp
from fetchc.kernel import program_name, program_path
from fetchc.rewriting import FetchcPass, apply_pattern, walk
from fetchc.target import functions

_LOWERED_BY = {"fetch.convert": "fetch-legalize-convert", "fetch.dequant": "fetch-split-scaling"}


TableKey = tuple  # (input, output, function or None, scale, zero point)


def table_symbol(src: target.ElementType, dst: target.ElementType, function: str | None = None) -> str:
    """The symbol name of a table: ``f4E2M1FN_to_f8E4M3FN`` for a decode
    table, ``gelu_f8E4M3FN`` for a function table."""
    return f"{src.name}_to_{dst.name}" if function is None else f"{function}_{src.name}"


class TableRegistry:
    """The ``fetch_seq.table`` symbols of one symbol table (a module): one
    per distinct table (same pair, function, scale and zero point:
    hardware.md §2.1b), created on first use and placed at the top of the
    module in order of first use (:meth:`materialise`).  A reference table
    already in the module (input that went through ``fetch-to-seq`` before,
    or written by hand) is reused, never duplicated; a new symbol avoids
    every symbol name the module already defines (a function named
    ``gelu_f8E4M3FN`` too: the table is then ``@gelu_f8E4M3FN_1``)."""

    def __init__(self, module: Operation):
        self._block = module.regions[0].block
        self._existing: dict[TableKey, TableOp] = {}
        self._taken: set[str] = set()
        for op in self._block.ops:
            if (symbol := _symbol_name(op)) is not None:
                self._taken.add(symbol)
            if isinstance(op, TableOp):
                key = op.key()
                if key not in self._existing and _is_reference(op, key):
                    self._existing[key] = op
        self._used: dict[TableKey, TableOp] = {}

    def symbol(
        self, src: target.ElementType, dst: target.ElementType, function: str | None = None, scale: float = 1.0,
        zero_point: int = 0,
    ) -> str:  # fmt: skip
        """The symbol of the ``src -> dst`` table (with ``function``: that
        function table), creating it on first use."""
        key = (src, dst, function, scale, zero_point)
        table = self._used.get(key)
        if table is None:
            table = self._existing.get(key) or self._new(key)
            self._used[key] = table
        return table.sym_name.data

    def _new(self, key: TableKey) -> TableOp:
        src, dst, function, scale, zero_point = key
        base = table_symbol(src, dst, function)
        name, k = base, 0
        while name in self._taken:
            k += 1
            name = f"{base}_{k}"
        self._taken.add(name)
        return TableOp(name, src, dst, function, scale, zero_point)

    def materialise(self, listener: PatternRewriterListener | None = None) -> None:
        """Insert the tables created by :meth:`symbol` at the top of the
        module, in order of first use, telling ``listener``."""
        block = self._block
        anchor = block.first_op
        for table in self._used.values():
            if table.parent is not None:
                continue
            if anchor is None:
                block.add_op(table)
            else:
                block.insert_op_before(table, anchor)
            if listener is not None:
                listener.handle_operation_insertion(table)


class TableRegistries:
    """A :class:`TableRegistry` for each symbol table that holds a kernel:
    the nearest enclosing op with the ``SymbolTable`` trait (a
    ``builtin.module``), where ``SymbolTable.lookup_symbol`` resolves a
    program's ``table = @...``."""

    def __init__(self) -> None:
        self._registries: dict[Operation, TableRegistry] = {}

    def of(self, op: Operation) -> TableRegistry:
        """The registry of the symbol table ``op`` is in.  Raises
        :class:`PassError` for an op in no symbol table."""
        anchor = op.parent_op()
        while anchor is not None and not anchor.has_trait(SymbolTable):
            anchor = anchor.parent_op()
        if anchor is None:
            raise PassError(op, "is in no symbol table (builtin.module) to hold its lookup table")
        registry = self._registries.get(anchor)
        if registry is None:
            registry = self._registries[anchor] = TableRegistry(anchor)
        return registry

    def materialise(self, listener: PatternRewriterListener | None = None) -> None:
        """:meth:`TableRegistry.materialise` for each registry."""
        for registry in self._registries.values():
            registry.materialise(listener)


def _symbol_name(op: Operation) -> str | None:
    """The symbol ``op`` defines in its symbol table, if any."""
    interface = op.get_trait(SymbolOpInterface)
    if interface is None:
        return None
    name = interface.get_sym_attr_name(op)
    return None if name is None else name.data


def _is_reference(op: TableOp, key: TableKey) -> bool:
    """Whether ``op`` holds exactly the entries its key defines."""
    src, dst, function, scale, zero_point = key
    if src is None or dst is None:
        return False
    try:
        want = (
            target.table_entries(src, dst)
            if function is None
            else functions.function_entries(function, src, scale, zero_point)
        )
    except KeyError:
        return False
    return op.entry_values() == list(want)


class FetchToProgram(RewritePattern):
    """One ``fetch.fetch`` and the adapter stages on its stream → one
    ``fetch_seq.program`` named by ``names``, with its table from
    ``tables``.  Raises :class:`PassError` for a sequencer limit (the
    verifier reports those first) or a request still present."""

    def __init__(self, tables: TableRegistries, names: dict[Operation, str]):
        super().__init__()
        self.tables = tables
        self.names = names

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FetchOp, rewriter: PatternRewriter) -> None:
        chain = FetchChain.of(op)
        request = next((o for o in chain.adapter if o.name in ADAPTER_REQUESTS), None)
        if request is not None:
            raise PassError(request, f"must be lowered before fetch-to-seq: run {_LOWERED_BY[request.name]} first")
        table = cast = zero_point = None
        masked = False
        for stage in chain.stages:
            s_in, s_out = stage.operands[0].type, stage.results[0].type
            assert isinstance(s_in, StreamType) and isinstance(s_out, StreamType)
            src, dst = s_in.elem, s_out.elem
            assert src is not None and dst is not None
            if stage.name == "fetch.mask":
                masked = True
            elif isinstance(stage, TableLookupOp):
                table = self.tables.of(op).symbol(src, dst, stage.function, stage.scale_value, stage.zero_point_value)
            elif stage.name == "fetch.cast" and src != dst:
                cast = (src, dst)
            elif isinstance(stage, ZpSubOp):
                zero_point = (target.ZERO_POINT[src], stage.zp)
        try:
            cfg = op.sequencer_config(cast_out=cast[1] if cast else None, infer_cast=False, masked=masked)
            mask = op.mask_config(cfg) if masked else None
        except OpError as e:
            raise PassError(op, e.message) from None
        out_type = chain.last.results[0].type
        assert isinstance(out_type, StreamType) and out_type.elem is not None
        prog = ProgramOp(
            op.source,
            out_type,
            program_name=self.names[op],
            base=cfg.base,
            packet_size=cfg.packet_size,
            fetch_size=cfg.fetch_size,
            limits=cfg.limits,
            strides=cfg.strides,
            table=table,
            cast=cast,
            zero_point=zero_point,
            flit_count=target.flit_count(cfg.packet_size, out_type.elem),
            words_per_packet=cfg.words_per_packet,
            cycles=cfg.cycles,
            mask=mask,
            pad=cfg.padding,
        )
        prog.location = op.location
        rewriter.insert(prog)
        rewriter.replace_all_uses_with(chain.last.results[0], prog.result)
        for stage in reversed(chain.stages):
            rewriter.erase(stage)
        rewriter.erase(op)


def program_names(module: ModuleOp) -> dict[Operation, str]:
    """``function/index`` for every ``fetch.fetch`` of ``module`` (prefixed
    by the symbols of enclosing nested modules).  Raises :class:`PassError`
    for a fetch outside a ``func.func`` or two kernels with the same name."""
    names: dict[Operation, str] = {}
    owner_of: dict[str, Operation] = {}
    fetches = 0
    for fn in walk(module):
        fetches += isinstance(fn, FetchOp)
        if not isinstance(fn, func.FuncOp):
            continue
        kernel = program_path(fn, module)
        index = 0
        for op in walk(fn):
            if isinstance(op, FetchOp):
                names[op] = program_name(kernel, index)
                index += 1
        if index and kernel in owner_of:
            raise PassError(
                fn,
                f"is a second kernel named '{kernel}': its programs would be named like the other's; give the "
                "enclosing builtin.module a symbol name (builtin.module @name) or rename the function",
                [(owner_of[kernel], "the other kernel is here")],
            )
        if index:
            owner_of[kernel] = fn
    if fetches > len(names):  # a fetch outside every func.func
        for op in walk(module):
            if isinstance(op, FetchOp) and op not in names:
                raise PassError(op, "must be inside a func.func, whose name names its Fetch Unit program")
    return names


@dataclass(frozen=True)
class FetchToSeqPass(FetchcPass):
    """``fetch-to-seq`` (ir.md §4).  Raises
    :class:`fetchc.diagnostics.PassError` for a ``fetch.convert`` or
    ``fetch.dequant`` still present, a ``fetch.fetch`` outside a
    ``func.func``, colliding kernel names, or a sequencer limit (also caught
    by the verifier)."""

    name = "fetch-to-seq"
    summary = "each fetch and its adapter stages -> one fetch_seq.program register block; tables -> fetch_seq.table"

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        tables = TableRegistries()
        apply_pattern(FetchToProgram(tables, program_names(op)), op, listener, on=(FetchOp,))
        tables.materialise(listener)
