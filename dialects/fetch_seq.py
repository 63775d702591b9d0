"""The ``fetch_seq`` dialect: Fetch Unit register blocks, ready to serialise.

(Named ``fetch_seq`` because xDSL already ships CIRCT's ``seq``.)

This is the typed register level, as mlir-aie's NPU ops are: each op holds
exactly one ``seq.bin`` record and the serialiser (:mod:`fetchc.seqbin.emit`)
only walks and packs.

* ``fetch_seq.table @sym {in_type, out_type, entries, paired}``: one lookup
  table baked into the sequencer configuration, a module-level symbol;
  ``entries`` is ``array<i32: ...>`` of the u16 entries exactly as
  ``seq.bin`` stores them (seqbin.md TABLES: 256, or 65536 for a function
  table keyed by a 16-bit type).  A function table (hardware.md §2.1b) also
  carries ``function``, and on an integer key ``scale`` and ``zero_point``.
  No two tables of a module hold the same table.
* ``%s = fetch_seq.program %buf {...}``: one Fetch Unit program (one
  ``fetch.fetch`` chain), the register block of hardware.md §5 / seqbin.md
  PROGRAMS.  Its enumerated fields are typed attributes:
  ``unit = #fetch_seq.unit<main>``,
  ``stages = #fetch_seq.stages<table_lookup,type_conversion>``,
  ``type_conversion = #fetch_seq.cast<f8E4M3FN_to_f32>``,
  ``zp_mode = #fetch_seq.zp_mode<i8_to_i9>``; a masked program's
  configuration ``mask = #fetch_seq.mask<...>`` (seqbin.md MASKS) and a
  padded program's padding ``pad = #fetch_seq.pad<...>`` (the MANIFEST's
  ``pad``).  It still yields the adapter's output stream, so the downstream
  ``rngd`` ops stay connected.

Spec: ir.md §4 (``fetch-to-seq``), seqbin.md, hardware.md §2-3, §5.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TypeAttribute,
    UnitAttr,
    f32,
    i32,
)
from xdsl.dialects.utils.bit_enum_attribute import BitEnumAttribute
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.str_enum import StrEnum

from fetchc import target
from fetchc.diagnostics import OpError
from fetchc.dialects.fetch import StreamType
from fetchc.dialects.fetch_chain import check_linear_uses
from fetchc.dialects.shared import IdentityCache, direct_accessors, i32_attr, i64_array, i64_attr, init_op, memo_on
from fetchc.target import functions
from fetchc.target.mask import (
    MASK_CELLS,
    FetchMaskConfig,
    StreamPadding,
    ValidCountDim,
    check_mask_config,
    check_stream_padding,
)
from fetchc.target.record import FIELDS, Fields, RecordError, check_program
from fetchc.wording import count

# ---------------------------------------------------------------------------
# Enumerated register fields (seqbin.md PROGRAMS words 0, 24, 26, 29)
# ---------------------------------------------------------------------------

# The members come from fetchc.target's tables (one home per fact), so the
# enums are built with the functional API, whose computed members a type
# checker cannot see: to it, each is a plain StrEnum.
if TYPE_CHECKING:
    Unit = StrEnum
    Stage = StrEnum
    Cast = StrEnum
    ZpMode = StrEnum
else:
    Unit = StrEnum("Unit", {c.upper(): c for c in target.CONTEXTS})
    """PROGRAMS word 0: the Fetch Unit (``main`` = 0, ``sub`` = 1)."""
    Stage = StrEnum("Stage", {s.name.upper(): s.name for s in target.STAGES})
    """PROGRAMS word 24 bits: ``masking``, ``table_lookup``, ``type_conversion``, ``zero_point``."""
    Cast = StrEnum("Cast", {f"{s.name}_to_{d.name}".upper(): f"{s.name}_to_{d.name}" for (s, d) in target.CAST_CODES})
    """PROGRAMS word 26: the seven casts of hardware.md §2.2, ``f8E4M3FN_to_f32``..."""
    ZpMode = StrEnum(
        "ZpMode",
        {
            "NONE": "none",
            **{
                f"{r.source.name}_to_{r.result.name}".upper(): f"{r.source.name}_to_{r.result.name}"
                for r in target.ZERO_POINT.values()
            },
        },
    )
    """PROGRAMS word 29: ``none``, ``i4_to_i5``, ``i8_to_i9``."""


class _AngleEnum:
    """Print and parse an enum attribute as ``#fetch_seq.name<value>``."""

    enum_type: ClassVar[type[StrEnum]]
    data: StrEnum

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_identifier_or_string_literal(self.data.value)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StrEnum:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(cls.enum_type)


@irdl_attr_definition
class FetchUnitAttr(_AngleEnum, EnumAttribute[Unit]):
    """``#fetch_seq.unit<main|sub>``: PROGRAMS word 0."""

    name = "fetch_seq.unit"

    @property
    def code(self) -> int:
        return target.UNIT_CODE[self.data.value]


@irdl_attr_definition
class StagesAttr(BitEnumAttribute[Stage]):
    """``#fetch_seq.stages<masking,table_lookup,type_conversion,zero_point>``
    (any subset) or ``#fetch_seq.stages<none>``: PROGRAMS word 24."""

    name = "fetch_seq.stages"
    none_value = "none"

    def __init__(self, flags: Sequence[Stage] | str | None):
        super().__init__(flags)

    @property
    def code(self) -> int:
        return _stages_code(self.data)

    @staticmethod
    def from_code(code: int) -> StagesAttr:
        return StagesAttr([Stage(s.name) for s in target.STAGES if code & s.bit])


@irdl_attr_definition
class CastAttr(_AngleEnum, EnumAttribute[Cast]):
    """``#fetch_seq.cast<f8E4M3FN_to_f32>``: PROGRAMS word 26, one of the seven
    casts of hardware.md §2.2."""

    name = "fetch_seq.cast"

    @property
    def pair(self) -> tuple[target.ElementType, target.ElementType]:
        src, dst = self.data.value.split("_to_")
        return target.BY_NAME[src], target.BY_NAME[dst]

    @property
    def code(self) -> int:
        return target.CAST_CODES[self.pair]

    @staticmethod
    def of(src: target.ElementType, dst: target.ElementType) -> CastAttr:
        return CastAttr(Cast(f"{src.name}_to_{dst.name}"))


@irdl_attr_definition
class ZpModeAttr(_AngleEnum, EnumAttribute[ZpMode]):
    """``#fetch_seq.zp_mode<none|i4_to_i5|i8_to_i9>``: PROGRAMS word 29."""

    name = "fetch_seq.zp_mode"

    @property
    def rule(self) -> target.ZeroPointRule | None:
        if self.data.value == "none":
            return None
        return target.ZERO_POINT[target.BY_NAME[self.data.value.split("_to_")[0]]]

    @property
    def code(self) -> int:
        rule = self.rule
        return 0 if rule is None else rule.mode

    @staticmethod
    def of(rule: target.ZeroPointRule | None) -> ZpModeAttr:
        if rule is None:
            return ZpModeAttr(ZpMode("none"))
        return ZpModeAttr(ZpMode(f"{rule.source.name}_to_{rule.result.name}"))


def _parse_count(parser: AttrParser, what: str) -> int:
    pos = parser.pos
    v = parser.parse_integer(allow_boolean=False)
    if not 0 <= v < 1 << 32:
        parser.raise_error(f"{what} {v} is not a u32 count", pos, parser.pos)
    return v


def _keyword_value(parser: AttrParser, key: str, what: str) -> int:
    parser.parse_keyword(key)
    parser.parse_punctuation("=")
    return _parse_count(parser, what)


def _int_list(parser: AttrParser, what: str) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _parse_count(parser, what))


@irdl_attr_definition
class MaskAttr(ParametrizedAttribute):
    """``#fetch_seq.mask<last_axis = A, valid_count_dim = rightmost |
    rightmost_and_second_rightmost | iterator<B>, rightmost_valid_count =
    [c0, ..., c7], left_pad = L>``: one program's mask configuration
    (hardware.md §2.0, seqbin.md MASKS; :class:`FetchMaskConfig`), entries
    counted outermost first, counts valid elements.  Made by
    ``fetch-to-seq``; the program's verifier checks it
    (:func:`fetchc.target.mask.check_mask_config`)."""

    name = "fetch_seq.mask"

    last_axis: IntAttr
    valid_count_dim: IntAttr
    iterator: IntAttr
    left_pad: IntAttr
    counts: ArrayAttr[IntAttr]

    def __init__(self, cfg: FetchMaskConfig):
        super().__init__(
            IntAttr(cfg.last_axis),
            IntAttr(int(cfg.valid_count_dim)),
            IntAttr(cfg.iterator),
            IntAttr(cfg.left_pad),
            ArrayAttr([IntAttr(c) for c in cfg.rightmost_valid_count]),
        )

    @property
    def config(self) -> FetchMaskConfig:
        return FetchMaskConfig(
            self.last_axis.data,
            ValidCountDim(self.valid_count_dim.data),
            self.iterator.data,
            self.left_pad.data,
            tuple(c.data for c in self.counts.data),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, ...]:
        with parser.in_angle_brackets():
            axis = _keyword_value(parser, "last_axis", "last_axis")
            parser.parse_punctuation(",")
            parser.parse_keyword("valid_count_dim")
            parser.parse_punctuation("=")
            kind = ValidCountDim[parser.parse_keyword_in([k.spelling for k in ValidCountDim]).upper()]
            iterator = 0
            if kind == ValidCountDim.ITERATOR:
                with parser.in_angle_brackets():
                    iterator = _parse_count(parser, "iterator")
            parser.parse_punctuation(",")
            parser.parse_keyword("rightmost_valid_count")
            parser.parse_punctuation("=")
            pos = parser.pos
            counts = _int_list(parser, "a valid count")
            if len(counts) != MASK_CELLS:
                parser.raise_error(f"rightmost_valid_count has {MASK_CELLS} counts, not {len(counts)}", pos, parser.pos)
            parser.parse_punctuation(",")
            left = _keyword_value(parser, "left_pad", "left_pad")
        return (
            IntAttr(axis),
            IntAttr(int(kind)),
            IntAttr(iterator),
            IntAttr(left),
            ArrayAttr([IntAttr(c) for c in counts]),
        )

    def print_parameters(self, printer: Printer) -> None:
        cfg = self.config
        kind = cfg.valid_count_dim.spelling + (
            f"<{cfg.iterator}>" if cfg.valid_count_dim == ValidCountDim.ITERATOR else ""
        )
        counts = ", ".join(map(str, cfg.rightmost_valid_count))
        printer.print_string(
            f"<last_axis = {cfg.last_axis}, valid_count_dim = {kind}, rightmost_valid_count = [{counts}], "
            f"left_pad = {cfg.left_pad}>"
        )


@irdl_attr_definition
class PadAttr(ParametrizedAttribute):
    """``#fetch_seq.pad<dims = [d, ...], left = L, valid = V>``: a padded
    program's padding as the MANIFEST gives it (seqbin.md 1.3 ``pad``;
    :class:`StreamPadding`): the stream dims (time then packet, outermost
    first) whose row-major composite index walks the padded axis; composite
    ``i`` holds data when ``L <= i < L + V``.  Made by ``fetch-to-seq``."""

    name = "fetch_seq.pad"

    dims: ArrayAttr[IntAttr]
    left: IntAttr
    valid: IntAttr

    def __init__(self, pad: StreamPadding):
        super().__init__(ArrayAttr([IntAttr(d) for d in pad.dims]), IntAttr(pad.left), IntAttr(pad.valid))

    @property
    def padding(self) -> StreamPadding:
        return StreamPadding(tuple(d.data for d in self.dims.data), self.left.data, self.valid.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, ...]:
        with parser.in_angle_brackets():
            parser.parse_keyword("dims")
            parser.parse_punctuation("=")
            dims = _int_list(parser, "a stream dim")
            parser.parse_punctuation(",")
            left = _keyword_value(parser, "left", "left")
            parser.parse_punctuation(",")
            valid = _keyword_value(parser, "valid", "valid")
        return ArrayAttr([IntAttr(d) for d in dims]), IntAttr(left), IntAttr(valid)

    def print_parameters(self, printer: Printer) -> None:
        pad = self.padding
        printer.print_string(f"<dims = [{', '.join(map(str, pad.dims))}], left = {pad.left}, valid = {pad.valid}>")


# ---------------------------------------------------------------------------
# fetch_seq.table
# ---------------------------------------------------------------------------


@irdl_op_definition
class TableOp(IRDLOperation):
    """``fetch_seq.table @name {in_type = T, out_type = U, entries =
    array<i32: ...>, paired}``: a lookup table (seqbin.md TABLES); a function
    table (hardware.md §2.1b) also has ``function = "gelu"`` and, on an
    integer key, ``scale : f32`` and ``zero_point : i32``.  ``entries``: the
    256 (1-byte keys) or 65536 (2-byte keys) u16 entries.  The verifier
    checks the record rules (:func:`fetchc.target.record.check_table`: the
    pair, pairing, function, key width, entry count, scale and zero point),
    that every entry is a u16, and that no earlier table of the module holds
    the same table."""

    name = "fetch_seq.table"
    sym_name = prop_def(SymbolNameConstraint())
    in_type = prop_def(TypeAttribute)
    out_type = prop_def(TypeAttribute)
    paired = opt_prop_def(UnitAttr)
    function = opt_prop_def(StringAttr)
    scale = opt_prop_def(FloatAttr)
    zero_point = opt_prop_def(IntegerAttr)
    entries = prop_def(DenseArrayBase)

    traits = traits_def(SymbolOpInterface())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sym_name attr-dict"

    def __init__(
        self,
        sym_name: str,
        src: target.ElementType,
        dst: target.ElementType,
        function: str | None = None,
        scale: float = 1.0,
        zero_point: int = 0,
    ):
        """The reference ``src -> dst`` decode table
        (``target.table_entries``), or with ``function`` the function table
        keyed by ``src`` (``functions.function_entries``; ``scale`` and
        ``zero_point`` for an integer key), as symbol ``sym_name``.  Raises
        ``KeyError`` for a pair or function that is no table."""
        if function is None:
            values = target.table_entries(src, dst)
        else:
            values = functions.function_entries(function, src, scale, zero_point)
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "in_type": target.mlir_type(src),
            "out_type": target.mlir_type(dst),
            "entries": DenseArrayBase.from_list(i32, list(values)),
        }
        if function is not None:
            props["function"] = StringAttr(function)
            if not src.is_float:
                props["scale"] = FloatAttr(scale, f32)
                props["zero_point"] = i32_attr(zero_point)
        elif target.LOOKUP_TABLES[(src, dst)]:
            props["paired"] = UnitAttr()
        super().__init__(properties=props)

    @property
    def pair(self) -> tuple[target.ElementType | None, target.ElementType | None]:
        return target.element_type(self.in_type), target.element_type(self.out_type)

    @property
    def function_name(self) -> str | None:
        return None if self.function is None else self.function.data

    @property
    def scale_value(self) -> float:
        return 1.0 if self.scale is None else functions.round_f32(self.scale.value.data)

    @property
    def zero_point_value(self) -> int:
        return 0 if self.zero_point is None else self.zero_point.value.data

    def key(self) -> tuple:
        """What names the table: ``(input, output, function, scale, zero
        point)`` (hardware.md §2.1b: equal tables are stored once)."""
        s, d = self.pair
        return (s, d, self.function_name, self.scale_value, self.zero_point_value)

    def entry_values(self) -> list[int]:
        """The entries as integers."""
        return [int(x) for x in self.entries.get_values()]

    def content(self) -> tuple:
        """What makes two tables the same table: pair, pairing, function,
        scale, zero point and entries."""
        return (*self.key(), self.paired is not None, self.entries)

    def verify_(self) -> None:
        from fetchc.target.record import RecordError, check_table

        s, d = self.pair
        if s is None or d is None:
            raise OpError("is not a lookup table of the hardware (hardware.md §2.1, §2.1b)")
        vals = self.entry_values()
        try:
            check_table(s, d, self.paired is not None, self.function_name, self.scale_value,
                        self.zero_point_value, entries=len(vals))  # fmt: skip
        except RecordError as e:
            raise OpError(e.message) from None
        if any(not 0 <= v < 1 << 16 for v in vals):
            raise OpError("has an entry that is not a u16")
        block = self.parent_block()
        if block is not None:
            for other in block.ops:
                if other is self:
                    break
                if isinstance(other, TableOp) and other.content() == self.content():
                    raise OpError(
                        f"holds the same table as @{other.sym_name.data}: each distinct table appears once "
                        "(seqbin.md TABLES)",
                        [(other, "the same table is here")],
                    )


# ---------------------------------------------------------------------------
# fetch_seq.program
# ---------------------------------------------------------------------------


def _ints(attr: DenseArrayBase[IntegerType]) -> tuple[int, ...]:
    values = attr.get_values()  # a tuple of ints for an integer element type
    return values if all(type(x) is int for x in values) else tuple(int(x) for x in values)


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """``%s = fetch_seq.program %buf {...} : memref<...> -> !fetch.stream<...>``:
    one Fetch Unit program, holding exactly its ``seq.bin`` record.

    Properties (seqbin.md PROGRAMS; units in brackets): ``program_name``
    (``function/index``), ``unit`` (:class:`FetchUnitAttr`), ``base`` [bytes],
    ``packet_size`` [elements], ``fetch_size`` [bytes per read], ``limits`` and
    ``strides`` (``array<i64>``, outermost first; strides in elements of the
    memref's type), ``stages`` (:class:`StagesAttr`), ``table`` (symbol of a
    ``fetch_seq.table``, optional), ``type_conversion`` (:class:`CastAttr`,
    optional), ``zero_point`` (i32, optional), ``zp_mode``
    (:class:`ZpModeAttr`), ``flit_count``, ``words_per_packet`` and the
    informational ``cycles`` (``time_size × words_per_packet``); a masked
    program's ``mask`` (:class:`MaskAttr`, with the ``masking`` stage), a
    padded program's ``pad`` (:class:`PadAttr`: every masked program has
    one).
    ``in_dtype`` is the memref's element type and ``out_dtype`` the result
    stream's; the stream's time and packet shape are the MANIFEST's."""

    name = "fetch_seq.program"
    source = operand_def(MemRefType)
    result = result_def(StreamType)

    program_name = prop_def(StringAttr)
    unit = prop_def(FetchUnitAttr)
    base = prop_def(IntegerAttr)
    packet_size = prop_def(IntegerAttr)
    fetch_size = prop_def(IntegerAttr)
    limits = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    stages = prop_def(StagesAttr)
    table = opt_prop_def(SymbolRefAttr)
    type_conversion = opt_prop_def(CastAttr)
    zero_point = opt_prop_def(IntegerAttr)
    zp_mode = prop_def(ZpModeAttr)
    flit_count = prop_def(IntegerAttr)
    words_per_packet = prop_def(IntegerAttr)
    cycles = prop_def(IntegerAttr)
    mask = opt_prop_def(MaskAttr)
    pad = opt_prop_def(PadAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(
        self,
        source: SSAValue,
        result_type: StreamType,
        *,
        program_name: str,
        base: int,
        packet_size: int,
        fetch_size: int,
        limits: Sequence[int],
        strides: Sequence[int],
        table: str | None,
        cast: tuple[target.ElementType, target.ElementType] | None,
        zero_point: tuple[target.ZeroPointRule, int] | None,
        flit_count: int,
        words_per_packet: int,
        cycles: int,
        mask: FetchMaskConfig | None = None,
        pad: StreamPadding | None = None,
    ):
        """One register block.  ``table``: the symbol of its
        ``fetch_seq.table`` or None; ``cast``: the cast stage's ``(input,
        output)`` or None; ``zero_point``: ``(rule, value)`` or None;
        ``mask``: the masking stage's configuration or None; ``pad``: the
        program's padding (the MANIFEST's) or None.  The unit comes from the
        result stream's context and ``stages`` from which of the four are
        present."""
        stages = tuple(
            Stage(s.name)
            for s, on in zip(target.STAGES, (mask, table, cast, zero_point), strict=True)
            if on is not None
        )
        props: dict[str, Attribute] = {
            "program_name": StringAttr(program_name),
            "unit": _unit_attr(result_type.ctx),
            "base": i64_attr(base),
            "packet_size": i64_attr(packet_size),
            "fetch_size": i64_attr(fetch_size),
            "limits": i64_array(limits),
            "strides": i64_array(strides),
            "stages": _stages_attr(stages),
        }
        if table is not None:
            props["table"] = _symbol_ref(table)
        if cast is not None:
            props["type_conversion"] = CastAttr.of(*cast)
        if zero_point is not None:
            props["zero_point"] = i32_attr(zero_point[1])
        props["zp_mode"] = ZpModeAttr.of(zero_point[0] if zero_point else None)
        props["flit_count"] = i64_attr(flit_count)
        props["words_per_packet"] = i64_attr(words_per_packet)
        props["cycles"] = i64_attr(cycles)
        if mask is not None:
            props["mask"] = MaskAttr(mask)
        if pad is not None:
            props["pad"] = PadAttr(pad)
        init_op(self, [source], [result_type], props)

    def field(self, name: str) -> int | None:
        """An integer field's value (None when an optional one is absent)."""
        a = getattr(self, name)
        return None if a is None else a.value.data

    @property
    def limit_values(self) -> tuple[int, ...]:
        return _ints(self.limits)

    @property
    def stride_values(self) -> tuple[int, ...]:
        return _ints(self.strides)

    @property
    def in_dtype(self) -> target.ElementType | None:
        mt = self.source.type
        return target.element_type(mt.element_type) if isinstance(mt, MemRefType) else None

    @property
    def out_type(self) -> StreamType:
        assert isinstance(self.result.type, StreamType)
        return self.result.type

    def table_op(self) -> TableOp | None:
        """The ``fetch_seq.table`` its ``table`` symbol names, or None."""
        if self.table is None:
            return None
        op = SymbolTable.lookup_symbol(self, self.table)
        return op if isinstance(op, TableOp) else None

    def fields(self) -> Fields:
        """The record's fields as the rules read them
        (:class:`fetchc.target.record.Fields`; ``table`` is 0 when the
        program has one, else None), read from the properties and types once
        while they stay the same objects (:func:`~fetchc.dialects.shared.memo_on`:
        the verifier reads them, the emitter reuses them).  Assumes what
        :meth:`verify_` checks before it: the element types are the Fetch
        Unit's."""
        p = self.properties
        key = (*p.values(), *p.keys(), self.source.type, self.result.type)
        return memo_on(self, "_fields_memo", key, self._read_fields)

    def _read_fields(self) -> Fields:
        p: dict[str, Any] = self.properties  # each of the type its definition declares (IRDL verified it)
        zp, tc = p.get("zero_point"), p.get("type_conversion")
        in_dtype, out_dtype = self.in_dtype, self.out_type.elem
        assert in_dtype is not None and out_dtype is not None  # Fetch Unit types: verify_ checks them first
        return Fields(
            unit=p["unit"].code, in_dtype=in_dtype, out_dtype=out_dtype,
            base=p["base"].value.data, packet_size=p["packet_size"].value.data,
            fetch_size=p["fetch_size"].value.data, limits=_ints(p["limits"]), strides=_ints(p["strides"]),
            stages=p["stages"].code, table=None if p.get("table") is None else 0,
            type_conversion=None if tc is None else tc.code,
            zero_point0=0 if zp is None else zp.value.data, num_zero_points=0 if zp is None else 1,
            zp_mode=p["zp_mode"].code, flit_count=p["flit_count"].value.data,
            words_per_packet=p["words_per_packet"].value.data,
        )  # fmt: skip

    def verify_(self) -> None:
        check_linear_uses(self)
        top = self.table_op()
        self._verify_fields(top)
        self._verify_chain(top)

    def _verify_fields(self, top: TableOp | None) -> None:
        # What only the IR can get wrong: the memref and stream types, the
        # unit against the stream's context, the table symbol, the packet.
        mt, rt = self.source.type, self.out_type
        assert isinstance(mt, MemRefType)
        in_dtype = self.in_dtype
        if in_dtype is None or in_dtype.in_flight_only:
            raise OpError(f"reads a memref of {target.type_name(mt.element_type)}, which the Fetch Unit cannot read")
        if rt.elem is None:
            raise OpError(f"produces {target.type_name(rt.element_type)}, which the Fetch Adapter cannot produce")
        if self.unit.data.value != rt.ctx:
            raise OpError(f"unit {self.unit.data.value} does not match the result stream's {rt.ctx} context")
        if self.table is not None and top is None:
            raise OpError(f"table {self.table} is not a fetch_seq.table in the module")
        if top is not None and not all(p in top.properties for p in ("in_type", "out_type", "entries")):
            raise OpError(
                f"table {self.table} is not a valid fetch_seq.table (it lacks a property: see the error there)"
            )
        packet = 1
        for d in rt.packet:
            packet *= d
        if self.field("packet_size") != packet:
            raise OpError(
                f"packet_size {self.field('packet_size')} differs from the result stream's packet of "
                f"{count(packet, 'element')}"
            )

    def _verify_chain(self, top: TableOp | None) -> None:
        # Every rule of the record (hardware.md §2-3, seqbin.md PROGRAMS):
        # one implementation, fetchc.target.record, shared with the seq.bin
        # reader and writer and the simulator.
        pairs: list[tuple[target.ElementType, target.ElementType]] = []
        if top is not None:
            src, dst = top.pair
            assert src is not None and dst is not None  # a valid table's pair (_verify_fields)
            pairs.append((src, dst))
        fields = self.fields()
        try:
            check_program(fields, pairs, FIELDS, table_ref=_ref_text(self.table), masked=self.mask is not None)
            if self.mask is not None:
                check_mask_config(self.mask.config, fields.limits, fields.in_dtype)
        except RecordError as e:
            raise OpError(e.message) from None
        self._verify_pad()

    def _verify_pad(self) -> None:
        """The padding (the MANIFEST's ``pad``) fits the stream, and a masked
        program has one (seqbin.md 1.3)."""
        rt = self.out_type
        if self.pad is not None:
            problem = check_stream_padding(self.pad.padding, rt.time, rt.packet)
            if problem is not None:
                raise OpError(f"{problem} (time {list(rt.time)}, packet {list(rt.packet)})")
        elif self.mask is not None:
            raise OpError("has a mask but no pad: a masked program says which stream dims walk its padded axis")


@lru_cache(maxsize=16)
def _stages_code(flags: frozenset[Stage]) -> int:
    """PROGRAMS word 24 of a set of stages (one entry per set: at most 8)."""
    return sum(s.bit for s in target.STAGES if Stage(s.name) in flags)


@lru_cache(maxsize=1024)
def _symbol_ref(name: str) -> SymbolRefAttr:
    """``SymbolRefAttr(name)``, one object per name (the few tables)."""
    return SymbolRefAttr(name)


_REF_TEXTS = IdentityCache(1024)


def _ref_text(ref: SymbolRefAttr | None) -> str:
    """``str(ref)`` (``@name``, as xDSL prints it: it builds a printer,
    about 40 µs), once per attribute object: the messages of
    ``check_program`` name the table by it."""
    return _REF_TEXTS.get((ref,), (), lambda: str(ref))


@cache
def _unit_attr(ctx: str) -> FetchUnitAttr:
    return FetchUnitAttr(Unit(ctx))


@cache
def _stages_attr(stages: tuple[Stage, ...]) -> StagesAttr:
    return StagesAttr(list(stages))


FetchSeq = Dialect(
    "fetch_seq", [TableOp, ProgramOp], [FetchUnitAttr, StagesAttr, CastAttr, ZpModeAttr, MaskAttr, PadAttr]
)
direct_accessors(*FetchSeq.operations)
