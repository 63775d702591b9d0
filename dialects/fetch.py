"""The ``fetch`` dialect: the Fetch Unit and the Fetch Adapter.

Types: ``!fetch.stream<ctx, [time], [packet], elem>``.
Attributes: ``#fetch.pad<dim = D, left = L, size = S>`` (a padded axis).
Ops: ``fetch.fetch`` (a sequencer read of a DM memref, optionally padded),
the four adapter stages ``fetch.mask``, ``fetch.table_lookup``,
``fetch.cast``, ``fetch.zp_sub``, and the two target-independent requests
``fetch.convert`` and ``fetch.dequant`` that the passes lower.

Every verifier rule of ``ir.md`` §3 is an op verifier here or in
:mod:`fetchc.dialects.rngd` (rule 3 is checked at the consumers).  Each op
checks its rules in the spec's order and reports only the first one it
breaks; the rules that look beyond one op (stream origin, rules 3, 5, 6, 7
and the cast part of rule 8) live in :mod:`fetchc.dialects.fetch_chain`.
Before the rules, every consumer checks that its stream operands were
produced legally (ir.md §1: streams live inside one function, so no stream
function arguments, call results, block arguments or other dialects' ops); a
use by an op outside fetch/rngd (``func.return``, a call, ...) is reported at
the producer, since that op has no verifier of ours.

Spec: ir.md §1-3, hardware.md §2-3.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i32,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from fetchc import target
from fetchc.diagnostics import OpError
from fetchc.dialects.fetch_chain import (
    FetchChain,
    check_foreign_uses,
    check_linear_uses,
    check_not_contraction_only,
    check_padding_reach,
    check_same_shape,
    check_stage_order,
    check_stream_operands,
    is_identity_cast,
    run_checks,
)
from fetchc.dialects.shared import (
    IdentityCache,
    direct_accessors,
    i32_attr,
    i64_attr,
    init_op,
    memo_on,
    memref_layout_of,
)
from fetchc.dialects.stream import StreamType, stream_type
from fetchc.target import functions
from fetchc.target.layout import NonLinearMap, linear_coefficients, shape_text, static_shape
from fetchc.target.mask import I64_MAX, FetchMaskConfig, MaskError, Padding, derive_mask
from fetchc.wording import a_or_an, count

__all__ = [
    "StreamType",
    "stream_type",
    "PadAttr",
    "FetchOp",
    "MaskOp",
    "TableLookupOp",
    "CastOp",
    "ZpSubOp",
    "ConvertOp",
    "DequantOp",
    "Fetch",
]


def _tname(attr: Attribute) -> str:
    return target.type_name(attr)


# ---------------------------------------------------------------------------
# #fetch.pad
# ---------------------------------------------------------------------------


@irdl_attr_definition
class PadAttr(ParametrizedAttribute):
    """``#fetch.pad<dim = D, left = L, size = S>`` (``left = 0`` is not
    written): a ``fetch.fetch``'s padded axis (ir.md §2, hardware.md §2.0).
    Memref index ``dim`` is read over ``[-left, size - left)`` instead of
    ``[0, n)``; ``n``, the memref's size along ``dim``, is the valid count.
    All three are non-negative i64 counts of elements (a parse error
    otherwise); what the fetch may read is rule 8's business
    (:func:`fetchc.target.mask.pad_problem`)."""

    name = "fetch.pad"

    dim: IntAttr
    left: IntAttr
    size: IntAttr

    def __init__(self, dim: int, size: int, left: int = 0):
        super().__init__(IntAttr(dim), IntAttr(left), IntAttr(size))

    @staticmethod
    def of(pad: Padding) -> PadAttr:
        return PadAttr(pad.dim, pad.size, pad.left)

    @property
    def padding(self) -> Padding:
        """The :class:`fetchc.target.mask.Padding` it spells."""
        return Padding(self.dim.data, self.size.data, self.left.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, IntAttr, IntAttr]:
        def value(key: str) -> IntAttr:
            parser.parse_keyword(key, " in #fetch.pad<dim = D, left = L, size = S> (left optional)")
            parser.parse_punctuation("=")
            pos = parser.pos
            v = parser.parse_integer(allow_boolean=False)
            if not 0 <= v <= I64_MAX:
                parser.raise_error(
                    f"#fetch.pad {key} {v} is not a count of elements from 0 to 2^63 - 1 (an i64)", pos, parser.pos
                )
            return IntAttr(v)

        with parser.in_angle_brackets():
            dim = value("dim")
            parser.parse_punctuation(",")
            left = IntAttr(0)
            if parser.parse_optional_keyword("left") is not None:
                parser.parse_punctuation("=")
                pos = parser.pos
                v = parser.parse_integer(allow_boolean=False)
                if not 0 <= v <= I64_MAX:
                    parser.raise_error(
                        f"#fetch.pad left {v} is not a count of elements from 0 to 2^63 - 1 (an i64)", pos, parser.pos
                    )
                left = IntAttr(v)
                parser.parse_punctuation(",")
            size = value("size")
        return dim, left, size

    def print_parameters(self, printer: Printer) -> None:
        left = f", left = {self.left.data}" if self.left.data else ""
        printer.print_string(f"<dim = {self.dim.data}{left}, size = {self.size.data}>")


# ---------------------------------------------------------------------------
# fetch.fetch
# ---------------------------------------------------------------------------


def _affine_map(mt: MemRefType, st: StreamType, amap: AffineMapAttr | None) -> AffineMap:
    ndims = len(st.time) + len(st.packet)
    if amap is not None:
        return amap.data
    rank = len(mt.get_shape())
    if ndims != rank:
        raise OpError(
            f"needs a 'map' property: the stream has {count(ndims, 'dim')} (time then packet) but the "
            f"memref has rank {rank}, so the default identity map does not apply"
        )
    return AffineMap.identity(rank)


def _sequencer_inputs(
    mt: MemRefType,
    st: StreamType,
    map_attr: AffineMapAttr | None,
    base: int | None,
    read_size: int | None,
    pad: PadAttr | None = None,
) -> dict:
    amap = _affine_map(mt, st, map_attr)
    ndims = len(st.time) + len(st.packet)
    rank = len(mt.get_shape())
    if amap.num_dims != ndims:
        raise OpError(
            f"'map' has {count(amap.num_dims, 'dim')} but the stream has {ndims} "
            f"(time {list(st.time)} then packet {list(st.packet)})"
        )
    if len(amap.results) != rank:
        raise OpError(f"'map' has {count(len(amap.results), 'result')} but the memref has rank {rank}")
    try:
        coeffs, consts = _LINEAR.get((amap,), (), lambda: _frozen_coefficients(amap))
    except NonLinearMap as e:
        raise OpError(f"'map' must be linear (no mod, floordiv, ceildiv): {e}") from None
    try:
        strides, offset = memref_layout_of(mt)
    except ValueError as e:
        raise OpError(str(e)) from None
    elem = target.element_type(mt.element_type)
    assert elem is not None
    return dict(
        memref_shape=list(mt.get_shape()),
        memref_strides=strides,
        memref_offset=offset,
        map_coeffs=coeffs,
        map_consts=consts,
        time_shape=list(st.time),
        packet_shape=list(st.packet),
        elem=elem,
        context=st.ctx,
        read_size=read_size,
        base=0 if base is None else base,
        placed=base is not None,
        pad=None if pad is None else pad.padding,
    )


_LINEAR = IdentityCache(1024)  # affine map -> its coefficients
_DERIVED = IdentityCache(4096)  # a fetch's types, map and properties -> its configuration
_MASKS = IdentityCache(1024)  # a masked fetch's configuration -> its mask configuration


def _frozen_coefficients(amap: AffineMap) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    coeffs, consts = linear_coefficients(amap)
    return tuple(map(tuple, coeffs)), tuple(consts)


def _derive(
    mt: MemRefType,
    st: StreamType,
    map_attr: AffineMapAttr | None,
    base: int | None,
    read_size: int | None,
    cast_out: target.ElementType | None,
    pad: PadAttr | None = None,
    masked: bool = False,
):
    """:func:`~fetchc.target.sequencer.derive` for one fetch, memoised on its
    types, map, properties, cast and whether its chain masks
    (:class:`IdentityCache`: identical fetches derive once): the
    configuration, or the :class:`OpError` that states why there is none
    (returned, not raised, so that it is cached too)."""
    from fetchc.target.sequencer import SequencerError, derive

    def compute():
        try:
            inputs = _sequencer_inputs(mt, st, map_attr, base, read_size, pad)
            return derive(cast_out=cast_out, keep_padded=masked, **inputs)
        except SequencerError as e:
            return OpError(str(e))
        except OpError as e:
            return e

    return _DERIVED.get((mt, st, map_attr, cast_out, pad), (base, read_size, masked), compute)


@irdl_op_definition
class FetchOp(IRDLOperation):
    """``fetch.fetch``: read a DM memref into a packet stream through the Fetch
    Sequencer.

    Properties: ``map`` (linear affine map from the stream's time then packet
    dims to the memref's indices; default identity when the ranks agree),
    ``base`` (DM byte address of the memref's element 0; the constructor's
    default is 0, ``base=None`` leaves it out so that the memref's placement
    decides, ir.md §2a), ``read_size`` (optional, elements per hardware
    access), ``pad`` (optional :class:`PadAttr`: one axis read padded,
    hardware.md §2.0).
    Verifies rules 6-8 and 11 of ir.md §3; rule 8 (sequencer limits, and
    where padding may be read) derives the configuration with
    :func:`fetchc.target.sequencer.derive` and reports its error; rule 11
    (:func:`~fetchc.dialects.fetch_chain.check_padding_reach`): unmasked
    padding reaches only ``rngd.commit``.
    """

    name = "fetch.fetch"

    source = operand_def(MemRefType)
    result = result_def(StreamType)
    map = opt_prop_def(AffineMapAttr)
    base = opt_prop_def(IntegerAttr)
    read_size = opt_prop_def(IntegerAttr)
    pad = opt_prop_def(PadAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(
        self,
        source: SSAValue,
        result_type: StreamType,
        map: AffineMap | None = None,
        base: int | None = 0,
        read_size: int | None = None,
        pad: Padding | None = None,
    ):
        props: dict[str, Attribute] = {} if base is None else {"base": i64_attr(base)}
        if map is not None:
            props["map"] = AffineMapAttr(map)
        if read_size is not None:
            props["read_size"] = i64_attr(read_size)
        if pad is not None:
            props["pad"] = PadAttr.of(pad)
        init_op(self, [source], [result_type], props)

    @property
    def stream(self) -> StreamType:
        assert isinstance(self.result.type, StreamType)
        return self.result.type

    @property
    def memref(self) -> MemRefType:
        assert isinstance(self.source.type, MemRefType)
        return self.source.type

    @property
    def base_value(self) -> int:
        return 0 if self.base is None else self.base.value.data

    def affine_map(self) -> AffineMap:
        """The map, or the identity default.  Raises OpError when there is no
        map and the ranks differ."""
        return _affine_map(self.memref, self.stream, self.map)

    @property
    def padding(self) -> Padding | None:
        """The padded axis (``pad``), or ``None``."""
        return None if self.pad is None else self.pad.padding

    def sequencer_inputs(self) -> dict:
        """Keyword arguments for :func:`fetchc.target.sequencer.derive`
        (without ``cast_out`` and ``keep_padded``).  Raises OpError on a
        malformed map or layout."""
        return _sequencer_inputs(self.memref, self.stream, self.map, self._base_or_none(), self._read_size(), self.pad)

    def _base_or_none(self) -> int | None:
        """The ``base`` property, or None before placement gives one."""
        return None if self.base is None else self.base.value.data

    def _read_size(self) -> int | None:
        return None if self.read_size is None else self.read_size.value.data

    def sequencer_config(
        self, cast_out: target.ElementType | None = None, infer_cast: bool = True, masked: bool | None = None
    ):
        """The derived sequencer configuration (hardware.md §3), with the cast
        limit of ``cast_out`` (by default the cast this fetch's chain will
        have: :meth:`FetchChain.cast_output`) and, when ``masked`` (by
        default: whether its chain has a ``fetch.mask``), the loops that walk
        the padded axis kept apart (hardware.md §2.0).  Derived once per
        distinct fetch (memoised on the types and properties).  Raises
        OpError stating the numbers when a limit is exceeded."""
        if (infer_cast and cast_out is None) or masked is None:
            chain = FetchChain.of(self)
            if infer_cast and cast_out is None:
                cast_out = chain.cast_output()
            if masked is None:
                masked = chain.mask is not None
        masked = masked and self.pad is not None
        key = (self.source.type, self.result.type, self.map, self.base, self.read_size, self.pad, cast_out, masked)
        found = memo_on(
            self, "_sequencer_memo", key,
            lambda: _derive(self.memref, self.stream, self.map, self._base_or_none(), self._read_size(), cast_out,
                            self.pad, masked),
        )  # fmt: skip
        if isinstance(found, OpError):
            raise OpError(found.message, found.notes)
        return found

    def mask_config(self, config=None) -> FetchMaskConfig:
        """The mask configuration (hardware.md §2.0) that zeroes exactly this
        padded fetch's padding slots, derived from ``config`` (default
        :meth:`sequencer_config` with ``masked=True``): see
        :func:`fetchc.target.mask.derive_mask`.  Memoised per
        configuration.  Raises OpError when the fetch has no ``pad``, its
        sequencer configuration fails (rule 8), or no configuration expresses
        the padding (rule 11: the message names the reason and numbers)."""
        if config is None:
            config = self.sequencer_config(masked=True)
        if config.padding is None:
            raise OpError("declares no padding (no 'pad' property): there is nothing to mask")
        elem = target.element_type(self.memref.element_type)
        assert elem is not None

        def compute():
            try:
                return derive_mask(config.padding, self.stream.time, self.stream.packet, dict(config.pad_entries), elem)
            except MaskError as e:
                return OpError(e.message)

        found = _MASKS.get((config, self.result.type), (), compute)
        if isinstance(found, OpError):
            raise OpError(found.message, found.notes)
        return found

    def _placement_error(self) -> None:
        """ir.md §2a: a Fetch Unit program is a static register block, so a
        fetch sits directly in the entry block of a ``func.func``."""
        block = self.parent_block()
        parent = block.parent_op() if block is not None else None
        if block is None or parent is None:
            raise OpError("is not inside a func.func: a Fetch Unit program belongs to a kernel function")
        if parent.name != "func.func":
            raise OpError(
                f"is inside '{parent.name}', but a Fetch Unit program is a static register block that runs "
                f"exactly once: every fetch.fetch must sit directly in a func.func body; unroll the "
                f"'{parent.name}' or hoist the fetch out of it"
            )
        if block.prev_block is not None:
            raise OpError(
                "is not in the entry block of its func.func, so whether it runs depends on control flow, but a "
                "Fetch Unit program is a static register block that runs exactly once; move it to the entry block"
            )

    def verify_(self) -> None:
        mt, st = self.memref, self.stream
        src = target.element_type(mt.element_type)

        def elem_types() -> None:
            if src is None:
                raise OpError(
                    f"cannot read a memref of {_tname(mt.element_type)}: the Fetch Unit reads "
                    + ", ".join(t.name for t in target.ELEMENT_TYPES if not t.in_flight_only)
                )
            if src.in_flight_only:
                raise OpError(
                    f"cannot read a memref of {src.name}: {src.name} exists only in flight, "
                    "produced by fetch.zp_sub for rngd.contract_outer"
                )

        def types_agree() -> None:
            if st.element_type != mt.element_type:
                raise OpError(
                    f"result element type {_tname(st.element_type)} differs from the memref's "
                    f"{_tname(mt.element_type)}; fetch.fetch reads elements unchanged, convert them with adapter stages"
                )

        def props() -> None:
            if self.read_size is not None and self.read_size.value.data < 1:
                raise OpError(f"'read_size' must be a positive number of elements, got {self.read_size.value.data}")

        run_checks(
            [
                self._placement_error,
                elem_types,
                lambda: check_linear_uses(self),
                types_agree,
                props,
                lambda: self.sequencer_config(),
                lambda: check_padding_reach(self, self.padding),
            ]
        )


# ---------------------------------------------------------------------------
# Adapter stages
# ---------------------------------------------------------------------------


class _StreamToStream(IRDLOperation):
    input = operand_def(StreamType)
    result = result_def(StreamType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute, properties: dict[str, Attribute] | None = None):
        init_op(self, [input], [result_type], properties)

    @property
    def in_type(self) -> StreamType:
        assert isinstance(self.input.type, StreamType)
        return self.input.type

    @property
    def out_type(self) -> StreamType:
        assert isinstance(self.result.type, StreamType)
        return self.result.type


def _chain_text(chain: list[tuple[str, target.ElementType]]) -> str:
    """``fetch.table_lookup to f8E4M3FN, then fetch.cast to f32``."""
    return ", then ".join(f"fetch.{kind} to {out.name}" for kind, out in chain)


def _in_flight_text(s: target.ElementType) -> str:
    return (
        f"; {s.name} comes out of fetch.zp_sub, the adapter's last stage, and its only consumer is rngd.contract_outer"
    )


def _legal_list(outs: list[target.ElementType]) -> str:
    return ", ".join(o.name for o in outs) if outs else "none"


def _instead(s: target.ElementType, d: target.ElementType, op_name: str) -> str:
    """The "use this instead" tail of a stage's rule-1 error: the legal chain
    for ``s -> d``, the route through later engines, or (``s == d``) that no
    stage is needed.  Never an empty suggestion."""
    try:
        chain = target.conversion_chain(s, d)
    except target.NoConversionError:
        route = target.ROUTES.get((s.name, d.name))
        return f"; instead, {route}" if route else ""
    if not chain:
        return f"; {s.name} -> {d.name} changes nothing: drop the {op_name} (the stream already holds {s.name})"
    return f"; for {s.name} -> {d.name} use {_chain_text(chain)} (or fetch.convert, which legalises to that)"


def _decode_table_error(s: target.ElementType | None, d: target.ElementType | None, sn: str, dn: str) -> str:
    """Rule 1 for a lookup without ``fn``: not one of the four decode pairs."""
    outs = target.lookup_outputs(s) if s else []
    msg = f"has no {sn} -> {dn} table; "
    if outs:
        msg += f"the {sn} table decodes to: {_legal_list(outs)}"
    else:
        msg += f"there is no decode table keyed by {sn} (tables exist for {target.table_pairs_text()})"
    if functions.is_function_key(s) and d == functions.FUNCTION_OUTPUT:
        msg += (
            f"; a table keyed by {sn} is a function table: add fn (one of {functions.function_names()}), "
            f'e.g. {{fn = "identity", scale = 0.0625 : f32, zero_point = 0 : i32}} to dequantise'
        )
    elif s is not None and d is not None and (s, d) in target.CAST_CODES:
        msg += f"; {sn} -> {dn} is a type cast: use fetch.cast"
    elif s is not None and s.in_flight_only:
        msg += _in_flight_text(s)
    elif s is not None and d is not None:
        msg += _instead(s, d, "fetch.table_lookup")
    return msg


def _function_table_error(op: TableLookupOp, s: target.ElementType | None, d: target.ElementType | None) -> str | None:
    """Rule 1 for a lookup with ``fn`` (hardware.md §2.1b), in this order:
    the properties' types, a known function, no function on the paired f4
    decode, a function key, a bf16 output, ``scale``/``zero_point`` only on
    integer keys, a legal scale, a zero point in the key's range."""
    sn, dn = _tname(op.in_type.element_type), _tname(op.out_type.element_type)
    fn = op.fn
    if not isinstance(fn, StringAttr):
        return (
            "'fn' must be a string naming a function (fn = \"gelu\"); "
            f"the function tables are {functions.function_names()}"
        )
    if fn.data not in functions.FUNCTIONS:
        return f"has no function '{fn.data}'; the function tables are {functions.function_names()}"
    if s == target.F4E2M1FN:
        return (
            f"the paired {sn} decode takes no function (a 4-bit key is only ever a packed pair); decode to "
            f"f8E4M3FN with a plain fetch.table_lookup, commit it to DM with rngd.commit, and fetch that through "
            f"the {fn.data} table"
        )
    if s is None or not functions.is_function_key(s):
        keys = ", ".join(t.name for t in functions.FUNCTION_KEYS)
        return f"has no function table keyed by {sn}; function tables are keyed by {keys} (hardware.md §2.1b)"
    if d != functions.FUNCTION_OUTPUT:
        widen = (
            f": make the result bf16 and widen it with fetch.cast afterwards (bf16 -> {dn})"
            if d == target.F32
            else (": make the result bf16")
        )
        return f"produces {dn}, but a function table produces bf16 only{widen}"
    return _function_params_error(op, s, sn)


def _function_params_error(op: TableLookupOp, s: target.ElementType, sn: str) -> str | None:
    scale, zp = op.scale, op.zero_point
    if s.is_float and (scale is not None or zp is not None):
        names = [f"'{n}'" for n, a in (("scale", scale), ("zero_point", zp)) if a is not None]
        verb, pronoun = ("apply", "them") if len(names) > 1 else ("applies", "it")
        return (
            f"{' and '.join(names)} {verb} only to integer keys (i8, i16); {a_or_an(sn)} key's value is the number "
            f"it encodes: drop {pronoun}"
        )
    if scale is not None:
        if not isinstance(scale, FloatAttr) or not isinstance(scale.type, Float32Type):
            return "'scale' must be an f32 float (scale = 0.0625 : f32)"
        problem = functions.scale_problem(scale.value.data)
        if problem is not None:
            return (
                f"'scale' {scale.value.data!r} {problem}; it must be a finite, non-zero, normal f32 (hardware.md §2.1b)"
            )
    if zp is not None:
        if not isinstance(zp, IntegerAttr) or zp.type != i32:
            return "'zero_point' must be an i32 integer (zero_point = 3 : i32)"
        lo, hi = functions.zero_point_range(s)
        if not lo <= zp.value.data <= hi:
            return f"'zero_point' {zp.value.data} is outside the {sn} range [{lo}, {hi}]: it is a key value"
    return None


@irdl_op_definition
class TableLookupOp(_StreamToStream):
    """``fetch.table_lookup``: the adapter's table-lookup stage (main context
    only).  Without ``fn``, a decode table: hardware.md §2.1
    (``f4E2M1FN → f8E4M3FN|f8E5M2`` paired, ``f8E4M3FN|f8E5M2 → bf16``
    non-paired).  With ``fn`` (a function of hardware.md §2.1b), a function
    table keyed by ``f8E4M3FN``, ``f8E5M2``, ``i8``, ``bf16`` or ``i16`` into
    ``bf16``; on an integer key optional ``scale : f32`` and ``zero_point :
    i32`` (``x = (k - zero_point) * scale``).  Rules 1, 2, 5, 6, 7."""

    name = "fetch.table_lookup"

    fn = opt_prop_def(Attribute)
    scale = opt_prop_def(Attribute)
    zero_point = opt_prop_def(Attribute)

    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        input: SSAValue,
        result_type: Attribute,
        fn: str | None = None,
        scale: float | None = None,
        zero_point: int | None = None,
    ):
        """A lookup of ``input`` into ``result_type``; ``fn`` makes it a
        function table (``scale``/``zero_point``: an integer key's)."""
        props: dict[str, Attribute] = {}
        if fn is not None:
            props["fn"] = StringAttr(fn)
        if scale is not None:
            props["scale"] = FloatAttr(scale, builtin.f32)
        if zero_point is not None:
            props["zero_point"] = i32_attr(zero_point)
        super().__init__(input, result_type, props)

    @property
    def function(self) -> str | None:
        """The function's name, ``None`` for a decode table."""
        return self.fn.data if isinstance(self.fn, StringAttr) else None

    @property
    def scale_value(self) -> float:
        """The scale rounded to f32 (1.0 when absent)."""
        a = self.scale
        return functions.round_f32(a.value.data) if isinstance(a, FloatAttr) else 1.0

    @property
    def zero_point_value(self) -> int:
        a = self.zero_point
        return a.value.data if isinstance(a, IntegerAttr) else 0

    def verify_(self) -> None:
        src, dst = self.in_type, self.out_type

        def table() -> None:
            s, d = src.elem, dst.elem
            if self.fn is not None:
                msg = _function_table_error(self, s, d)
                if msg is not None:
                    raise OpError(msg)
                return
            if self.scale is not None or self.zero_point is not None:
                raise OpError(
                    "'scale' and 'zero_point' belong to function tables (hardware.md §2.1b): add fn, e.g. "
                    '{fn = "identity"} to dequantise an integer key, or drop them'
                )
            if s is not None and d is not None and (s, d) in target.LOOKUP_TABLES:
                return
            raise OpError(_decode_table_error(s, d, _tname(src.element_type), _tname(dst.element_type)))

        def main_only() -> None:
            if not target.has_table_register(src.ctx):
                auto = (
                    "; or write fetch.convert instead, which fetchc routes this way automatically "
                    "(fetch-route-sub-decode, in the default pipeline)"
                    if src.elem == target.F4E2M1FN and self.fn is None
                    else ""
                )
                raise OpError(
                    "runs on the sub Fetch Unit, which has no table-lookup register (only the main "
                    "context's mode_indirect_table can point at a table); decode on the main context, "
                    "commit the decoded stream to DM with rngd.commit, then stage it with a plain "
                    "convert-only StoTrf fetch on the sub context" + auto
                )

        run_checks(
            [
                lambda: check_stream_operands(self),
                table,
                main_only,
                lambda: check_stage_order(self, self.input),
                lambda: check_linear_uses(self),
                lambda: check_same_shape(self, src, dst),
            ]
        )


@irdl_op_definition
class CastOp(_StreamToStream):
    """``fetch.cast``: the adapter's type-cast stage.  Legal pairs:
    hardware.md §2.2 (codes 0-6), plus the identity (a type to itself), which
    programs no stage and does not count as the chain's cast.  Rules 1, 5, 6,
    7."""

    name = "fetch.cast"

    def verify_(self) -> None:
        src, dst = self.in_type, self.out_type

        def table() -> None:
            s, d = src.elem, dst.elem
            if s is not None and d is not None and (s, d) in target.CAST_CODES:
                return
            if src.element_type == dst.element_type:
                # hardware.md §2.2: the identity cast programs no stage.
                check_not_contraction_only(self, self.input, "cast {a_t} stream")
                return
            sn, dn = _tname(src.element_type), _tname(dst.element_type)
            outs = target.cast_outputs(s) if s else []
            msg = f"the hardware has no {sn} -> {dn} cast; "
            if outs:
                msg += f"casts from {sn}: {_legal_list(outs)}"
            else:
                msg += "the cast stage reads " + ", ".join(
                    sorted(
                        {i.name for i, _ in target.CAST_CODES},
                        key=lambda n: [t.name for t in target.ELEMENT_TYPES].index(n),
                    )
                )
            if s is not None and d is not None and (s, d) in target.LOOKUP_TABLES:
                paired = "paired" if target.LOOKUP_TABLES[(s, d)] else "non-paired"
                msg += (
                    f"; {sn} -> {dn} is done by the {paired} fetch.table_lookup "
                    "(or fetch.convert, which legalises to it)"
                )
            elif s is not None and d is not None and d.in_flight_only:
                msg += f"; {dn} is produced only by fetch.zp_sub"
            elif s is not None and s.in_flight_only:
                msg += _in_flight_text(s)
            elif s is not None and d is not None:
                msg += _instead(s, d, self.name)
            raise OpError(msg)

        run_checks(
            [
                lambda: check_stream_operands(self),
                table,
                lambda: check_stage_order(self, self.input),
                lambda: check_linear_uses(self),
                lambda: check_same_shape(self, src, dst),
            ]
        )


@irdl_op_definition
class MaskOp(_StreamToStream):
    """``fetch.mask %s : T -> T``: the adapter's masking stage (hardware.md
    §2.0): zeroes exactly the padding slots of its padded ``fetch.fetch``
    (the element type's zero; later stages see it as any value).  First
    stage, main context only; the configuration is derived by
    :meth:`FetchOp.mask_config`, never written.  Rules 5, 6, 7, 11."""

    name = "fetch.mask"

    def fetch_op(self) -> FetchOp | None:
        """The ``fetch.fetch`` whose stream it masks (through identity
        casts), or ``None``."""
        owner = self.input.owner
        while isinstance(owner, CastOp) and is_identity_cast(owner):
            owner = owner.input.owner
        return owner if isinstance(owner, FetchOp) else None

    def verify_(self) -> None:
        src, dst = self.in_type, self.out_type

        def same_type() -> None:
            check_same_shape(self, src, dst)
            if src.element_type != dst.element_type:
                raise OpError(
                    f"changes the element type from {_tname(src.element_type)} to {_tname(dst.element_type)}; "
                    "fetch.mask zeroes the padding slots and keeps the element type"
                )

        def masking() -> None:
            if not target.has_table_register(src.ctx):
                raise OpError(
                    "runs on the sub Fetch Unit, whose adapter has only the cast stage: masking is main-context "
                    "only; fetch the padded tensor on the main context (rngd.commit it to DM and stage that on "
                    "sub), or read only its valid part on sub"
                )
            fetch = self.fetch_op()
            assert fetch is not None  # rule 5 checked it
            if fetch.pad is None:
                raise OpError(
                    "masks a stream whose fetch.fetch declares no padding: there is nothing to mask; drop the "
                    "fetch.mask, or declare the padded axis on the fetch (pad = #fetch.pad<dim = D, size = S>)",
                    [(fetch, "the fetch is here")],
                )
            try:
                config = fetch.sequencer_config(masked=True)
            except OpError:
                return  # rule 8 at the fetch
            try:
                fetch.mask_config(config)
            except OpError as e:
                raise OpError(
                    f"cannot mask the padding of {fetch.pad.padding.text()}: {e.message}",
                    [(fetch, "the padded fetch is here")],
                ) from None

        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_stage_order(self, self.input),
                lambda: check_linear_uses(self),
                same_type,
                masking,
            ]
        )


@irdl_op_definition
class ZpSubOp(IRDLOperation):
    """``fetch.zp_sub %s, ZP``: the adapter's zero-point subtraction stage,
    ``out = in - zero_point``, widening ``i4 → i5`` or ``i8 → i9``
    (hardware.md §2.3).  ``zero_point`` must lie in ``[-8, 7]`` (i4) or
    ``[-128, 127]`` (i8).  Rules 1, 4, 5, 6, 7."""

    name = "fetch.zp_sub"

    input = operand_def(StreamType)
    result = result_def(StreamType)
    zero_point = prop_def(IntegerAttr)

    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, input: SSAValue, result_type: Attribute, zero_point: int):
        super().__init__(operands=[input], result_types=[result_type], properties={"zero_point": i32_attr(zero_point)})

    @classmethod
    def parse(cls, parser):
        inp = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        pos = parser.pos
        zp = parser.parse_integer(allow_boolean=False)
        if not -(2**31) <= zp < 2**31:
            parser.raise_error(
                f"zero point {zp} does not fit the i32 'zero_point' property (it must lie in [-8, 7] for i4, "
                "[-128, 127] for i8)",
                pos,
                parser.pos,
            )
        pos = parser.pos
        attrs = parser.parse_optional_attr_dict()
        if "zero_point" in attrs:
            parser.raise_error(
                "'zero_point' is given after the operand (fetch.zp_sub %s, ZP), not in the attribute dictionary",
                pos,
                parser.pos,
            )
        parser.parse_punctuation(":")
        in_t = parser.parse_type()
        parser.parse_punctuation("->")
        out_t = parser.parse_type()
        (operand,) = parser.resolve_operands([inp], [in_t], parser.pos)
        op = cls.create(
            operands=[operand], result_types=[out_t], properties={"zero_point": i32_attr(zp)}, attributes=attrs
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f", {self.zero_point.value.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @property
    def zp(self) -> int:
        return self.zero_point.value.data

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        assert isinstance(src, StreamType) and isinstance(dst, StreamType)
        s, d = src.elem, dst.elem

        def table() -> None:
            rule = target.ZERO_POINT.get(s) if s else None
            if rule is not None and d == rule.result:
                return
            sn, dn = _tname(src.element_type), _tname(dst.element_type)
            if rule is None:
                raise OpError(f"has no {sn} -> {dn} form: zero-point subtraction widens only i4 -> i5 and i8 -> i9")
            raise OpError(f"has no {sn} -> {dn} form: zero-point subtraction widens {sn} to {rule.result.name}")

        def zp_range() -> None:
            rule = target.ZERO_POINT.get(s) if s else None
            assert rule is not None  # runs after table(), which rejects a type without one
            if not rule.lo <= self.zp <= rule.hi:
                raise OpError(
                    f"zero point {self.zp} is outside the {rule.source.name} range [{rule.lo}, {rule.hi}]; "
                    f"an in-range zero point keeps every residual within {rule.result.name}"
                )

        run_checks(
            [
                lambda: check_stream_operands(self),
                table,
                lambda: check_foreign_uses(self),  # rule 3 for a non-rngd consumer, before rule 4
                zp_range,
                lambda: check_stage_order(self, self.input),
                lambda: check_linear_uses(self),
                lambda: check_same_shape(self, src, dst),
            ]
        )


ADAPTER_CHAIN_OPS = (
    "fetch.fetch",
    "fetch.mask",
    "fetch.table_lookup",
    "fetch.cast",
    "fetch.zp_sub",
    "fetch.convert",
)


@irdl_op_definition
class ConvertOp(_StreamToStream):
    """``fetch.convert``: a target-independent element conversion request.
    ``fetch-legalize-convert`` turns it into adapter stages or reports why it
    cannot (ir.md §4).  Its input must come from the Fetch Adapter chain
    (``fetch.fetch`` or a stage).  Rules 3 (no i5/i9 input), 5, 6, 7."""

    name = "fetch.convert"

    def verify_(self) -> None:
        src, dst = self.in_type, self.out_type

        def order() -> None:
            prev = self.input.owner
            if isinstance(prev, Operation) and prev.name in ADAPTER_CHAIN_OPS:
                return
            where = f"'{prev.name}'" if isinstance(prev, Operation) else "a block argument"
            raise OpError(
                f"its input comes from {where}: a conversion runs in the Fetch Adapter, directly after "
                "fetch.fetch or another adapter stage and before any rngd op",
                [(prev, "the input is produced here")] if isinstance(prev, Operation) else [],
            )

        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_not_contraction_only(self, self.input, "convert {a_t} stream"),
                order,
                lambda: check_linear_uses(self),
                lambda: check_same_shape(self, src, dst),
            ]
        )


@irdl_op_definition
class DequantOp(IRDLOperation):
    """``fetch.dequant %codes, %bscale[, %gscale] {format = "nvfp4"|"mxfp4"}``:
    a block-scaled 4-bit decode to ``f32`` or ``bf16`` (hardware.md §4, §2.6).

    ``%codes``: an ``f4E2M1FN`` stream straight from ``fetch.fetch``;
    ``%bscale``: memref ``(rows, cols / block)`` of ``f8E4M3FN`` (nvfp4,
    block 16) or ``f8E8M0FNU`` (mxfp4, block 32); ``%gscale``: ``f32``
    tensor scale (nvfp4 only).  Result: a stream of the same shape, of
    ``f32`` or ``bf16`` (:data:`fetchc.target.DEQUANT_RESULTS`; bf16: the
    same f32 products, narrowed by the Cast Engine).
    ``scale_base`` (optional, bytes, default 0): DM address of the block-scale
    memref's element 0, used by the scale fetch that the split inserts.
    ``fetch-split-scaling`` lowers it on the ``main`` context; on ``sub``
    (no table register) ``fetch-route-sub-decode`` routes the decode through
    a DM scratch buffer first, and ``fetch-split-scaling`` reports it when
    that pass did not run."""

    name = "fetch.dequant"

    RESULT_ELEMENT: ClassVar[target.ElementType] = target.F32
    """The default element type of the decoded stream (ir.md §2: a decode to
    f32; ``bf16`` may be asked for, :data:`fetchc.target.DEQUANT_RESULTS`);
    :meth:`result_type` gives the whole result type."""

    input = operand_def(StreamType)
    bscale = operand_def(MemRefType)
    gscale = opt_operand_def()  # any type: verify_ says what the tensor scale must be
    result = result_def(StreamType)
    format = opt_prop_def(StringAttr)  # required: verify_ lists the formats when it is missing
    scale_base = opt_prop_def(IntegerAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$input `,` $bscale (`,` $gscale^)? attr-dict `:` type($input) `,` type($bscale) "
        "(`,` type($gscale)^)? `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        bscale: SSAValue,
        gscale: SSAValue | None,
        fmt: str,
        result_type: Attribute,
        scale_base: int | None = None,
    ):
        props: dict[str, Attribute] = {"format": StringAttr(fmt)}
        if scale_base is not None:
            props["scale_base"] = i64_attr(scale_base)
        super().__init__(
            operands=[input, bscale, [gscale] if gscale is not None else []],
            result_types=[result_type],
            properties=props,
        )

    @classmethod
    def result_type(cls, codes: StreamType, element: target.ElementType | None = None) -> StreamType:
        """The result type for a codes stream of type ``codes``: its context
        and shapes, element ``element`` (default :data:`RESULT_ELEMENT`,
        ``f32``; ``bf16`` for a narrowed result)."""
        return codes.with_element(target.mlir_type(element or cls.RESULT_ELEMENT))

    @property
    def result_element(self) -> target.ElementType | None:
        """The element type of the result (``f32`` or ``bf16`` once verified)."""
        t = self.result.type
        return t.elem if isinstance(t, StreamType) else None

    @property
    def dequant_format(self) -> target.DequantFormat:
        """The op's format (``target.DEQUANT_FORMATS``), of an op that
        verified (its ``format`` is present and known)."""
        assert self.format is not None
        return target.DEQUANT_FORMATS[self.format.data]

    def _missing_format(self, scale: Attribute) -> str:
        """The error for a ``fetch.dequant`` without ``format``: the formats
        to choose from, and the one its block-scale type implies."""
        choices = " or ".join(
            f'{{format = "{f.name}"}} (one {f.scale.name} block scale per {f.block} codes'
            + (", an f32 tensor scale)" if f.tensor_scale else ", no tensor scale)")
            for f in target.DEQUANT_FORMATS.values()
        )
        implied = target.dequant_format_for_scale(target.element_type(scale))
        so = f'; its block scales are {implied.scale.name}, so {{format = "{implied.name}"}}' if implied else ""
        return f"needs its 'format' property: {choices}{so}"

    def _tensor_scale_kind(self, fmt: str) -> None:
        """An nvfp4 tensor scale is one f32 value (ir.md §2): raise
        :class:`OpError` for an operand of any other type."""
        if self.gscale is None or isinstance(self.gscale.type, builtin.Float32Type):
            return
        what = "a memref" if isinstance(self.gscale.type, MemRefType) else _tname(self.gscale.type)
        raise OpError(
            f"its tensor scale (the third operand) is {_tname(self.gscale.type)}, but the {fmt} tensor scale is one "
            f"f32 value: pass it as an f32 scalar argument of the function (%g: f32) or an arith.constant, not {what}"
        )

    def verify_(self) -> None:
        src = self.input.type
        dst = self.result.type
        bs = self.bscale.type
        assert isinstance(src, StreamType) and isinstance(dst, StreamType) and isinstance(bs, MemRefType)
        fmt = self.format.data if self.format is not None else None

        def formats() -> None:
            if fmt is None:
                raise OpError(self._missing_format(bs.element_type))
            if fmt not in target.DEQUANT_FORMATS:
                raise OpError(f'unknown format "{fmt}": fetch.dequant decodes "nvfp4" or "mxfp4"')
            spec = target.DEQUANT_FORMATS[fmt]
            if src.elem != target.F4E2M1FN:
                raise OpError(f"decodes f4E2M1FN codes, but its input stream holds {_tname(src.element_type)}")
            if dst.elem not in target.DEQUANT_RESULTS:
                raise OpError(
                    f"produces {' or '.join(t.name for t in target.DEQUANT_RESULTS)} (bf16: the f32 result narrowed "
                    f"by the Cast Engine), not {_tname(dst.element_type)}"
                )
            if target.element_type(bs.element_type) != spec.scale:
                raise OpError(
                    f"{fmt} block scales are {spec.scale.name}, but the scale memref holds {_tname(bs.element_type)}"
                )
            if spec.tensor_scale and self.gscale is None:
                raise OpError("nvfp4 needs the f32 tensor scale as its third operand")
            self._tensor_scale_kind(fmt)
            if not spec.tensor_scale and self.gscale is not None:
                raise OpError("mxfp4 has no tensor scale: drop the third operand")
            if self.scale_base is not None:
                sb = self.scale_base.value.data
                problem = target.dm_base_problem(sb, "scale_base")
                if problem is not None:
                    raise OpError(f"{problem} (it is the base of the block-scale fetch)")

        def order() -> None:
            prev = self.input.owner
            if isinstance(prev, Operation) and prev.name == "fetch.fetch":
                return
            raise OpError(
                "its codes must come straight from fetch.fetch (the decode owns all adapter stages)",
                [(prev, "the codes are produced here")] if isinstance(prev, Operation) else [],
            )

        def scale_shape() -> None:
            codes = self.input.owner
            assert isinstance(codes, FetchOp)
            block = self.dequant_format.block
            try:
                cshape, sshape = list(static_shape(codes.memref)), list(static_shape(bs))
            except ValueError as e:
                raise OpError(str(e)) from None
            want = cshape[:-1] + [cshape[-1] // block] if cshape else []
            if not cshape or cshape[-1] % block or sshape != want:
                shown = shape_text(want) if cshape and not cshape[-1] % block else "(rows, cols / block)"
                raise OpError(
                    f"{fmt} has one block scale per {block} codes along the input axis (the memref's last "
                    f"index): for codes memref<{shape_text(cshape)}> the scale memref must be "
                    f"{shown}, not {shape_text(sshape)}"
                    + (
                        f"; {cshape[-1]} inputs are not a whole number of blocks"
                        if cshape and cshape[-1] % block
                        else ""
                    ),
                    [(codes, "the codes are fetched here")],
                )

        run_checks(
            [
                lambda: check_stream_operands(self),
                formats,
                order,
                scale_shape,
                lambda: check_linear_uses(self),
                lambda: check_same_shape(self, src, dst),
            ]
        )


Fetch = Dialect(
    "fetch",
    [FetchOp, MaskOp, TableLookupOp, CastOp, ZpSubOp, ConvertOp, DequantOp],
    [StreamType, PadAttr],
)
direct_accessors(*Fetch.operations)
