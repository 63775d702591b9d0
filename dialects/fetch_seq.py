"""The ``fetch_seq`` dialect: Fetch Unit register blocks, ready to serialise.

(Named ``fetch_seq`` because xDSL already ships CIRCT's ``seq``.)

* ``fetch_seq.table @sym {paired, in_type, out_type, entries}``: one lookup
  table baked into the sequencer configuration, a module-level symbol.
  ``entries`` is ``array<i32: ...>`` of the 256 u16 entries exactly as
  ``seq.bin`` stores them.  Tables are deduplicated by ``fetch-to-seq``.
* ``%s = fetch_seq.program %buf {...}``: one Fetch Unit program (one
  ``fetch.fetch`` chain); its fields are the register block of hardware.md §5
  and seqbin.md PROGRAMS.  It still yields the adapter's output stream, so the
  downstream ``rngd`` ops stay connected.

Spec: ir.md §4 (``fetch-to-seq``), seqbin.md.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TypeAttribute,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import SymbolOpInterface, SymbolTable

from fetchc import target
from fetchc.frontend.diagnostics import OpError
from fetchc.dialects.fetch import StreamType, check_linear_uses, run_checks


@irdl_op_definition
class TableOp(IRDLOperation):
    """``fetch_seq.table @name {in_type = T, out_type = U, paired, entries =
    array<i32: ...>}``: a lookup table (256 u16 entries; seqbin.md TABLES).
    The verifier checks the pair is one of hardware.md §2.1's four, that
    ``paired`` matches it, and that there are 256 entries below 2^16."""

    name = "fetch_seq.table"
    sym_name = prop_def(SymbolNameConstraint())
    in_type = prop_def(TypeAttribute)
    out_type = prop_def(TypeAttribute)
    paired = opt_prop_def(UnitAttr)
    entries = prop_def(DenseArrayBase)

    traits = traits_def(SymbolOpInterface())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sym_name attr-dict"

    def __init__(self, sym_name: str, src: target.ElementType, dst: target.ElementType):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "in_type": target.mlir_type(src),
            "out_type": target.mlir_type(dst),
            "entries": DenseArrayBase.from_list(i32, list(target.table_entries(src, dst))),
        }
        if target.LOOKUP_TABLES[(src, dst)]:
            props["paired"] = UnitAttr()
        super().__init__(properties=props)

    @property
    def pair(self) -> tuple[target.ElementType | None, target.ElementType | None]:
        return target.element_type(self.in_type), target.element_type(self.out_type)

    def entry_values(self) -> list[int]:
        return [int(x) for x in self.entries.get_values()]

    def verify_(self) -> None:
        s, d = self.pair
        if s is None or d is None or (s, d) not in target.LOOKUP_TABLES:
            raise OpError("is not one of the hardware's four lookup tables (hardware.md §2.1)")
        if target.LOOKUP_TABLES[(s, d)] != (self.paired is not None):
            raise OpError(f"the {s.name} -> {d.name} table is {'paired' if target.LOOKUP_TABLES[(s, d)] else 'non-paired'}")
        vals = self.entry_values()
        if len(vals) != target.TABLE_ENTRIES or any(not 0 <= v < 1 << 16 for v in vals):
            raise OpError("needs exactly 256 entries, each a u16")


def _ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(x) for x in attr.get_values())


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """``%s = fetch_seq.program %buf {...} : memref<...> -> !fetch.stream<...>``:
    one Fetch Unit program.

    Properties (seqbin.md PROGRAMS; units in brackets): ``program_name``
    (``function/index``), ``unit`` (0 main, 1 sub), ``base`` [bytes],
    ``packet_size`` [elements], ``fetch_size`` [bytes per read], ``limits``
    and ``strides`` (``array<i64>``, outermost first; strides in elements of
    the memref's type), ``stages`` (bit 0 lookup, 1 cast, 2 zero point),
    ``table`` (symbol of a ``fetch_seq.table``, optional),
    ``type_conversion`` (code 0-6, optional), ``zero_point`` (optional),
    ``flit_count``, ``words_per_packet``, ``cycles`` (informational:
    ``time_size × words_per_packet``).  ``in_dtype`` is the memref's element
    type and ``out_dtype`` the result stream's."""

    name = "fetch_seq.program"
    source = operand_def(MemRefType)
    result = result_def(StreamType)

    program_name = prop_def(StringAttr)
    unit = prop_def(IntegerAttr)
    base = prop_def(IntegerAttr)
    packet_size = prop_def(IntegerAttr)
    fetch_size = prop_def(IntegerAttr)
    limits = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    stages = prop_def(IntegerAttr)
    table = opt_prop_def(SymbolRefAttr)
    type_conversion = opt_prop_def(IntegerAttr)
    zero_point = opt_prop_def(IntegerAttr)
    zp_mode = prop_def(IntegerAttr)
    flit_count = prop_def(IntegerAttr)
    words_per_packet = prop_def(IntegerAttr)
    cycles = prop_def(IntegerAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, result_type: StreamType, **fields):
        props: dict[str, Attribute] = {"program_name": StringAttr(fields.pop("program_name"))}
        for k in ("limits", "strides"):
            props[k] = DenseArrayBase.from_list(i64, list(fields.pop(k)))
        table = fields.pop("table", None)
        if table is not None:
            props["table"] = SymbolRefAttr(table)
        for k in ("type_conversion", "zero_point"):
            v = fields.pop(k, None)
            if v is not None:
                props[k] = IntegerAttr(v, i32 if k == "zero_point" else i64)
        for k, v in fields.items():
            props[k] = IntegerAttr(v, i64)
        super().__init__(operands=[source], result_types=[result_type], properties=props)

    def field(self, name: str) -> int | None:
        a = getattr(self, name)
        return None if a is None else a.value.data

    @property
    def limit_values(self) -> tuple[int, ...]:
        return _ints(self.limits)

    @property
    def stride_values(self) -> tuple[int, ...]:
        return _ints(self.strides)

    def table_op(self) -> TableOp | None:
        if self.table is None:
            return None
        op = SymbolTable.lookup_symbol(self, self.table)
        return op if isinstance(op, TableOp) else None

    def verify_(self) -> None:
        def fields() -> None:
            lim, st = self.limit_values, self.stride_values
            if not 1 <= len(lim) <= target.MAX_ENTRIES or len(st) != len(lim):
                raise OpError(f"needs 1 to {target.MAX_ENTRIES} limits and as many strides")
            if any(not 1 <= n <= target.MAX_ENTRY_SIZE for n in lim):
                raise OpError(f"limits must lie in [1, {target.MAX_ENTRY_SIZE}]")
            if not 0 <= (self.field("base") or 0) < target.BASE_LIMIT:
                raise OpError(f"base {self.field('base')} is not a DM byte address below 2^32")
            if any(not -(1 << 31) <= v < (1 << 31) for v in st):
                raise OpError("strides must fit the 32-bit signed stride field")
            if self.field("unit") not in target.UNIT_CODE.values():
                raise OpError("unit must be 0 (main) or 1 (sub)")
            if self.field("fetch_size") not in target.READ_BYTES:
                raise OpError(f"fetch_size must be one of {list(target.READ_BYTES)} bytes")
            stages = self.field("stages") or 0
            if (self.table is not None) != bool(stages & target.STAGE_TABLE_LOOKUP):
                raise OpError("has a table exactly when the table-lookup stage bit is set")
            if self.table is not None and self.table_op() is None:
                raise OpError(f"table {self.table} is not a fetch_seq.table in the module")
            if (self.type_conversion is not None) != bool(stages & target.STAGE_TYPE_CONVERSION):
                raise OpError("has a type_conversion exactly when the type-conversion stage bit is set")
            if (self.zero_point is not None) != bool(stages & target.STAGE_ZERO_POINT):
                raise OpError("has a zero_point exactly when the zero-point stage bit is set")

        def chain() -> None:
            # The stage chain must turn the memref's element type into the
            # result stream's (hardware.md §2), and the per-packet fields
            # must agree with the types (seqbin.md words 30-31).
            mt, rt = self.source.type, self.result.type
            assert isinstance(mt, MemRefType) and isinstance(rt, StreamType)
            cur = target.element_type(mt.element_type)
            out = rt.elem
            if cur is None or cur.in_flight_only:
                raise OpError(f"reads a memref of {target.type_name(mt.element_type)}, which the Fetch Unit cannot read")
            if out is None:
                raise OpError(f"produces {target.type_name(rt.element_type)}, which the Fetch Adapter cannot produce")
            if self.unit.value.data != target.UNIT_CODE[rt.ctx]:
                raise OpError(f"unit {self.unit.value.data} does not match the result stream's {rt.ctx} context")
            top = self.table_op()
            if top is not None:
                ts, td = top.pair
                if ts != cur:
                    raise OpError(f"looks up {cur} keys in the {ts} -> {td} table {self.table}")
                if rt.ctx == "sub":
                    raise OpError("has a table lookup on the sub Fetch Unit, which has no table-lookup register")
                cur = td  # type: ignore[assignment]
            code = self.field("type_conversion")
            if code is not None:
                pair = next((k for k, v in target.CAST_CODES.items() if v == code), None)
                if pair is None:
                    raise OpError(f"type_conversion {code} is not a cast code (0-{len(target.CAST_CODES) - 1})")
                if pair[0] != cur:
                    raise OpError(f"type_conversion {code} casts {pair[0]} -> {pair[1]}, but its input is {cur}")
                cur = pair[1]
            zp_mode = self.field("zp_mode")
            if self.zero_point is not None:
                rule = target.ZERO_POINT.get(cur)  # type: ignore[arg-type]
                if rule is None or rule.mode != zp_mode:
                    raise OpError(f"zero-point stage on {cur} needs zp_mode {rule.mode if rule else 'none'}, not {zp_mode}")
                if not rule.lo <= self.field("zero_point") <= rule.hi:  # type: ignore[operator]
                    raise OpError(f"zero point {self.field('zero_point')} is outside [{rule.lo}, {rule.hi}]")
                cur = rule.result
            elif zp_mode != 0:
                raise OpError(f"zp_mode {zp_mode} without a zero-point stage")
            if cur != out:
                raise OpError(f"its stages turn {target.type_name(mt.element_type)} into {cur}, but its result stream holds {out}")
            packet = 1
            for d in rt.packet:
                packet *= d
            if self.field("packet_size") != packet:
                raise OpError(f"packet_size {self.field('packet_size')} differs from the result stream's packet of {packet} elements")
            in_bits = target.element_type(mt.element_type).bits  # type: ignore[union-attr]
            fetch_bytes = self.field("fetch_size") or 0
            per_read = fetch_bytes * 8 // in_bits
            wpp = self.field("words_per_packet") or 0
            if wpp * per_read != packet:
                raise OpError(
                    f"words_per_packet {wpp} x {per_read} elements per {fetch_bytes}-byte read is not the packet of {packet}"
                )
            want = target.flit_count(packet, out)
            if self.field("flit_count") != want:
                raise OpError(f"flit_count {self.field('flit_count')}: a packet of {packet} {out} occupies {want} flits")

        run_checks([lambda: check_linear_uses(self), fields, chain])


FetchSeq = Dialect("fetch_seq", [TableOp, ProgramOp], [])
