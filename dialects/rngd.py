"""The ``rngd`` dialect: the engines the Fetch Adapter feeds.

Types: ``!rngd.trf<e>`` (data staged in the tensor register file),
``!rngd.vrf<[d0, d1, ...], e>`` (a tensor in the vector register file, of a
known shape: the stream ``rngd.to_vrf`` stored, time-major).

Ops: ``rngd.switch`` (pass-through) and ``rngd.collect`` (its input type or
the flit form, hardware.md §2.5), ``rngd.commit``
(stream → DM), ``rngd.to_trf``, ``rngd.to_vrf``, ``rngd.transpose``,
``rngd.contract_outer`` (the Contraction Engine), the two Vector Engine ops
and the Cast Engine op that ``fetch-split-scaling`` introduces, and
``rngd.scratch`` (a DM buffer of the compiler's own):

* ``rngd.block_scale %x, %s {block = B}``: ``out[..., j] = x[..., j] *
  decode(s[..., j / B])`` in f32.  The scales ``%s`` are either a stream in
  lockstep (the value stream's context and time shape, its packet shape with
  the innermost dim divided by ``B``) or a ``!rngd.vrf`` tensor holding one
  scale per block of ``B`` consecutive values of the value stream flattened
  time-major (hardware.md §2.6, §4a).  ``decode`` is the identity for
  ``f32`` scales and ``2^(e-127)`` (``0xFF`` → NaN) for ``f8E8M0FNU`` ones.
  One f32 multiply per element, correctly rounded.
* ``rngd.tensor_scale %x, %g``: ``out = x * g`` in f32 with a scalar ``f32``
  SSA value.
* ``rngd.cast %x``: the Cast Engine narrows an ``f32`` stream to ``bf16``
  (hardware.md §2.6; round to nearest even with §2.2a's rules, the rule of
  the adapter's cast code 6); same context and shapes.
* ``%buf = rngd.scratch : memref<...>``: a row-major DM buffer that belongs
  to the compiler, not to the kernel's caller (``fetch-route-sub-decode``
  creates one per routed decode).  ``fetch-place-dm`` gives it its
  ``dm_base`` property (bytes) after every argument of its kernel.

Rule 3 of ir.md §3 (``i5``/``i9`` only reach ``rngd.contract_outer``, through
``rngd.switch``/``rngd.collect``) is checked here, at the consumer, with a
note at the producing ``fetch.zp_sub``; rule 10 (the Contraction Engine's
operand types, hardware.md §2.6) at ``rngd.contract_outer``.  The VRF budget
(hardware.md §2.6: a kernel's VRF tensors hold at most 8 KiB per slice) spans
a function, so :func:`vrf_budget_errors` checks it for the driver.  Spec:
ir.md §2-3, hardware.md §2.3-2.6, §4, §4a.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import builtin
from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, MemRefType, NoneAttr, TypeAttribute
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from fetchc import target
from fetchc.diagnostics import OpError
from fetchc.dialects.fetch_chain import check_linear_uses, check_not_contraction_only, check_stream_operands, run_checks
from fetchc.dialects.shared import direct_accessors, i64_attr, init_op
from fetchc.dialects.stream import StreamType, parse_dim
from fetchc.target.layout import static_shape
from fetchc.wording import count

# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


class _RegFileType(ParametrizedAttribute, TypeAttribute):
    element_type: Attribute

    def __init__(self, element_type: Attribute):
        super().__init__(element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)


@irdl_attr_definition
class TrfType(_RegFileType):
    """``!rngd.trf<e>``: data staged in the tensor register file."""

    name = "rngd.trf"


@irdl_attr_definition
class VrfType(ParametrizedAttribute, TypeAttribute):
    """``!rngd.vrf<[d0, d1, ...], e>``: a tensor in the vector register file,
    of shape ``[d0, d1, ...]`` (elements, at least one dim, all positive) and
    element type ``e``.  ``rngd.to_vrf`` stores a stream's elements
    flattened time-major, so its result's shape is the stream's time dims
    then packet dims (:meth:`for_stream`; padding dropped).  Spec: ir.md §1,
    §2; hardware.md §2.6.

    The shapeless spelling ``!rngd.vrf<e>`` of earlier fetchc versions is a
    parse error that names the shaped one."""

    name = "rngd.vrf"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type)

    @classmethod
    def for_stream(cls, stream: StreamType) -> VrfType:
        """The VRF tensor ``rngd.to_vrf`` makes of ``stream``: shape
        ``[time..., packet...]``, the stream's element type."""
        return cls(stream.time + stream.packet, stream.element_type)

    @property
    def dims(self) -> tuple[int, ...]:
        """The shape, in elements."""
        return tuple(d.data for d in self.shape.data)

    @property
    def numel(self) -> int:
        return math.prod(self.dims)

    @property
    def elem(self) -> target.ElementType | None:
        return target.element_type(self.element_type)

    @property
    def nbytes(self) -> int:
        """Bytes the tensor holds in one slice's VRF (:func:`fetchc.target.vrf_bytes`;
        ``numel`` for a type the hardware lacks, which no verified ``rngd.to_vrf`` makes)."""
        e = self.elem
        return target.vrf_bytes(self.numel, e) if e is not None else self.numel

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def dim() -> IntAttr:
            return parse_dim(parser, "!rngd.vrf")

        with parser.in_angle_brackets():
            pos = parser.pos
            if parser.parse_optional_punctuation("[") is None:
                elem = parser.parse_type()
                parser.raise_error(
                    f"!rngd.vrf needs its shape: !rngd.vrf<[d0, d1, ...], {target.type_name(elem)}> (the stream "
                    "rngd.to_vrf stores, its time dims then packet dims)",
                    pos,
                    parser.pos,
                )
            dims = parser.parse_comma_separated_list(parser.Delimiter.NONE, dim)
            parser.parse_punctuation("]")
            parser.parse_punctuation(",")
            elem = parser.parse_type()
        return (ArrayAttr(dims), elem)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"[{', '.join(map(str, self.dims))}], ")
            printer.print_attribute(self.element_type)

    def verify(self) -> None:
        if not self.dims:
            raise VerifyException("a VRF tensor's shape needs at least one dimension")
        for d in self.dims:
            if d < 1:
                raise VerifyException(f"VRF tensor dimensions must be positive, got {d}")

    def spelled(self) -> str:
        """MLIR spelling, for diagnostics."""
        return f"!rngd.vrf<[{', '.join(map(str, self.dims))}], {target.type_name(self.element_type)}>"


def _same_element(op: Operation, src: Attribute, dst: Attribute, what: str) -> None:
    s = src.element_type if isinstance(src, (StreamType, _RegFileType, VrfType)) else src
    d = dst.element_type if isinstance(dst, (StreamType, _RegFileType, VrfType)) else dst
    if s != d:
        raise OpError(
            f"{what} element type {target.type_name(d)} differs from the stream's {target.type_name(s)}; "
            "this engine does not convert elements"
        )


# ---------------------------------------------------------------------------
# Ops
# ---------------------------------------------------------------------------


class _StreamPassOp(IRDLOperation):
    input = operand_def(StreamType)
    result = result_def(StreamType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute | None = None):
        init_op(self, [input], [result_type or input.type])

    def verify_(self) -> None:
        def same() -> None:
            t_in = self.input.type
            if t_in != self.result.type:
                assert isinstance(t_in, StreamType)  # operand_def(StreamType), typed Attribute by xDSL
                raise OpError(
                    f"passes a stream through unchanged, but its result type "
                    f"{self.result.type.spelled()} differs from its input {t_in.spelled()}"
                )

        run_checks([lambda: check_stream_operands(self), lambda: check_linear_uses(self), same])


@irdl_op_definition
class SwitchOp(_StreamPassOp):
    """``rngd.switch``: the Switch Engine; routes a stream unchanged.  May
    carry ``i5``/``i9``.  Rule 9 (hardware.md §2.4): the packet entering it is
    a whole number of 8-byte access words."""

    name = "rngd.switch"

    def verify_(self) -> None:
        super().verify_()
        st = self.input.type
        assert isinstance(st, StreamType)
        elem = st.elem
        if elem is None:
            return
        packet = st.numel_packet
        bits = packet * target.flit_bits(elem)
        word_bits = 8 * target.SWITCH_WORD_BYTES
        if bits % word_bits == 0:
            return
        step = word_bits // math.gcd(word_bits, target.flit_bits(elem))  # elements per whole number of words
        lower, upper = packet // step * step, (packet // step + 1) * step
        nearest = f"{lower} or {upper}" if lower else f"{upper}"
        raise OpError(
            f"its packet of {count(packet, f'{elem.name} element')} is {_bytes_text(bits)} bytes, not a whole "
            f"number of {target.SWITCH_WORD_BYTES}-byte access words: the Switch Engine takes packets of a multiple "
            f"of {step} {elem.name} elements; the nearest legal packets hold {nearest} elements"
        )


def _a(name: str) -> str:
    """The indefinite article before a type name as it is read aloud (``an
    i9``, ``an f32``, ``a bf16``)."""
    return "an" if name[:1] in tuple("aefhilmnorsx") else "a"


def _bytes_text(bits: int) -> str:
    return str(bits // 8) if bits % 8 == 0 else f"{bits / 8:g}"


@irdl_op_definition
class CollectOp(_StreamPassOp):
    """``rngd.collect``: the Collect Engine; packs the stream into 32-byte
    flits, values and their order unchanged.  May carry ``i5``/``i9``.

    Its result type is its input type, or the **flit form**
    (:meth:`flit_type`, hardware.md §2.5) when a packet is a whole number
    ``F > 1`` of 32-byte flits: time gains ``F`` as its new innermost dim
    and the packet becomes one flit of elements (``[60], [3840] f8E4M3FN``
    → ``[60, 120], [32]``).  Anything else is an error that shows the legal
    result types (or the one, and why the flit form needs padding)."""

    name = "rngd.collect"

    @staticmethod
    def flit_type(input: StreamType) -> StreamType | None:
        """The flit form of a stream of type ``input`` (same context and
        element type; :func:`fetchc.target.flit_form`), or ``None`` when it
        has none (:meth:`no_flit_form`)."""
        elem = input.elem
        shapes = target.flit_form(input.time, input.packet, elem) if elem is not None else None
        return None if shapes is None else input.with_shape(*shapes)

    @staticmethod
    def no_flit_form(input: StreamType) -> str:
        """Why a stream of type ``input`` has no flit form (a sentence for
        diagnostics; :func:`fetchc.target.flit_form_problem`)."""
        elem = input.elem
        why = target.flit_form_problem(input.packet, elem) if elem is not None else None
        return why or f"{target.type_name(input.element_type)} is not a hardware element type"

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        assert isinstance(src, StreamType) and isinstance(dst, StreamType)

        def form() -> None:
            if dst == src:
                return
            flit = self.flit_type(src)
            if flit is None:
                raise OpError(
                    f"its result type {dst.spelled()} must be its input type {src.spelled()}, the Collect Engine's "
                    f"only form here: {self.no_flit_form(src)} (hardware.md §2.5)"
                )
            if dst == flit:
                return
            elem = src.elem
            assert elem is not None  # it has a flit form
            nbytes = src.numel_packet * target.flit_bits(elem) // 8
            raise OpError(
                f"its result type {dst.spelled()} is neither of the Collect Engine's two forms for its input "
                f"(hardware.md §2.5): the input type {src.spelled()} (packets kept whole) or the flit form "
                f"{flit.spelled()} (each {nbytes}-byte packet split into {flit.time[-1]} flits of "
                f"{flit.packet[0]} {elem.name} elements, the flit count a new innermost time dim)"
            )

        run_checks([lambda: check_stream_operands(self), lambda: check_linear_uses(self), form])


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """``rngd.transpose``: the Transpose Engine; stream → stream with the same
    element type and element count."""

    name = "rngd.transpose"
    input = operand_def(StreamType)
    result = result_def(StreamType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        assert isinstance(src, StreamType) and isinstance(dst, StreamType)

        def shape() -> None:
            _same_element(self, src, dst, "result")
            if src.numel != dst.numel:
                raise OpError(
                    f"turns {count(src.numel, 'element')} into {dst.numel}; a transpose keeps the element count"
                )

        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_not_contraction_only(self, self.input, "transpose {a_t} stream"),
                lambda: check_linear_uses(self),
                shape,
            ]
        )


@irdl_op_definition
class CommitOp(IRDLOperation):
    """``rngd.commit %s, %buf``: write a stream to a DM memref (no result).
    The memref's element type equals the stream's, and it holds exactly the
    stream's elements."""

    name = "rngd.commit"
    input = operand_def(StreamType)
    dest = operand_def(MemRefType)
    assembly_format = "$input `,` $dest attr-dict `:` type($input) `,` type($dest)"

    def __init__(self, input: SSAValue, dest: SSAValue):
        init_op(self, [input, dest])

    def verify_(self) -> None:
        src, mt = self.input.type, self.dest.type
        assert isinstance(src, StreamType) and isinstance(mt, MemRefType)

        def shape() -> None:
            _same_element(self, src, mt.element_type, "the memref's")
            try:
                n = math.prod(static_shape(mt))
            except ValueError as e:
                raise OpError(str(e)) from None
            if n != src.numel:
                raise OpError(f"writes {count(src.numel, 'element')} into a memref of {n}; the sizes must match")

        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_not_contraction_only(self, self.input, "commit {a_t} stream to memory"),
                shape,
            ]
        )


class _ToRegFile(IRDLOperation):
    input = operand_def(StreamType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def _result_type(self) -> None:
        src = self.input.type
        _same_element(self, src, self.results[0].type, "result")

    def verify_(self) -> None:
        what = "store {a_t} stream to the TRF" if self.name == "rngd.to_trf" else "store {a_t} stream to the VRF"
        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_not_contraction_only(self, self.input, what),
                self._result_type,
            ]
        )


@irdl_op_definition
class ToTrfOp(_ToRegFile):
    """``rngd.to_trf``: stage a stream into the tensor register file."""

    name = "rngd.to_trf"
    result = result_def(TrfType)


@irdl_op_definition
class ToVrfOp(_ToRegFile):
    """``rngd.to_vrf %s : T -> !rngd.vrf<[time..., packet...], e>``: stage a
    stream into the vector register file.  The VRF tensor is the stream's
    elements flattened time-major, padding dropped, of the stream's element
    type (hardware.md §2.6; :meth:`VrfType.for_stream`); ``result_type``
    defaults to that.  The kernel's VRF budget is checked per function
    (:func:`vrf_budget_errors`)."""

    name = "rngd.to_vrf"
    result = result_def(VrfType)

    def __init__(self, input: SSAValue, result_type: Attribute | None = None):
        st = input.type
        if result_type is None and isinstance(st, StreamType):
            result_type = VrfType.for_stream(st)
        assert result_type is not None
        super().__init__(input, result_type)

    def _result_type(self) -> None:
        src, dst = self.input.type, self.result.type
        assert isinstance(src, StreamType) and isinstance(dst, VrfType)
        want = VrfType.for_stream(src)
        if dst != want:
            what = "element type" if dst.dims == want.dims else "shape"
            raise OpError(
                f"stores {src.spelled()} into the VRF as {want.spelled()} (the stream's elements time-major, "
                f"[time..., packet...], of its element type), but its result type {dst.spelled()} has another "
                f"{what}: write -> {want.spelled()}"
            )


def vrf_tensors(fn: Operation) -> list[tuple[ToVrfOp, VrfType]]:
    """Every ``rngd.to_vrf`` of the function ``fn`` (in walk order) with its
    VRF tensor type: what the kernel's VRF holds (hardware.md §2.6)."""
    from fetchc.rewriting import walk

    return [(op, op.result.type) for op in walk(fn) if isinstance(op, ToVrfOp) and isinstance(op.result.type, VrfType)]


def vrf_budget_errors(fn: Operation) -> list[tuple[Operation, str]]:
    """hardware.md §2.6: the VRF tensors of the kernel ``fn`` (a ``func.func``;
    every ``rngd.to_vrf`` in it, counted as live for the whole kernel) hold
    at most :data:`fetchc.target.VRF_BYTES` per slice.  Returns ``[(the
    rngd.to_vrf that crosses the budget, message)]`` (the message names every
    VRF tensor's size and the total, :func:`fetchc.target.vrf_budget_problem`),
    or ``[]``.  Called by the driver with the function-level rules
    (:func:`fetchc.dialects.fetch_chain.signature_errors`)."""
    vrfs = vrf_tensors(fn)
    total = 0
    for op, t in vrfs:
        before = total
        total += t.nbytes
        if total > target.VRF_BYTES:
            problem = target.vrf_budget_problem((vrf_label(v), vt.nbytes) for v, vt in vrfs)
            assert problem is not None
            return [
                (
                    op,
                    f"crosses the VRF budget: {problem}; the VRF tensors before it leave "
                    f"{max(0, target.VRF_BYTES - before)} bytes for its {t.nbytes} (stage fewer elements per "
                    "slice, e.g. fewer rows per slice with more rngd.slices)",
                )
            ]
    return []


def vrf_label(op: ToVrfOp) -> str:
    """How a VRF tensor is named in the budget's messages: its SSA name
    (``%v``) and type, or its type alone."""
    t = op.result.type
    spelled = t.spelled() if isinstance(t, VrfType) else str(t)
    name = op.result.name_hint
    return f"%{name} {spelled}" if name else spelled


@irdl_op_definition
class ContractOuterOp(IRDLOperation):
    """``rngd.contract_outer %s, %trf``: the Contraction Engine; pairs a
    stream with TRF-staged weights and produces an accumulator stream in the
    same context.

    Rule 10 (ir.md §3, hardware.md §2.6): the stream and TRF element types
    are a pair of :data:`fetchc.target.CONTRACTION_OPERANDS` (``i4``/``i5``
    with ``i4``/``i5`` and ``i8``/``i9`` with ``i8``/``i9`` into ``i32``;
    ``f8E4M3FN``, ``f8E5M2`` and ``bf16`` each with itself into ``f32``), and
    the accumulator's element type is that row's."""

    name = "rngd.contract_outer"
    input = operand_def(StreamType)
    weights = operand_def(TrfType)
    result = result_def(StreamType)
    assembly_format = "$input `,` $weights attr-dict `:` type($input) `,` type($weights) `->` type($result)"

    def __init__(self, input: SSAValue, weights: SSAValue, result_type: Attribute):
        super().__init__(operands=[input, weights], result_types=[result_type])

    @staticmethod
    def accumulator_element(elem: target.ElementType | None) -> target.ElementType:
        """The accumulator element type for an input stream of ``elem``: the
        operand table's (:func:`fetchc.target.contraction_operands`); for a
        stream the Contraction Engine cannot take (which rule 10 rejects),
        ``f32`` for float types and types the hardware lacks, ``i32`` for
        integer ones."""
        row = target.contraction_operands(elem)
        if row is not None:
            return row.accumulator
        return target.F32 if (elem is None or elem.is_float) else target.I32

    @classmethod
    def result_type(cls, input: StreamType) -> StreamType:
        """The accumulator stream type for an input stream of type ``input``:
        same context and shapes, element :meth:`accumulator_element`."""
        return input.with_element(target.mlir_type(cls.accumulator_element(input.elem)))

    def verify_(self) -> None:
        src, dst, trf = self.input.type, self.result.type, self.weights.type
        assert isinstance(src, StreamType) and isinstance(dst, StreamType) and isinstance(trf, TrfType)

        def context() -> None:
            if dst.ctx != src.ctx:
                raise OpError("the accumulator stream stays in its input's context")

        def operands() -> None:  # rule 10
            s = target.type_name(src.element_type)
            row = target.contraction_operands(src.elem)
            if row is None:
                raise OpError(
                    f"cannot contract {_a(s)} {s} stream: the Contraction Engine takes streams of "
                    f"{target.contractable_text()} (hardware.md §2.6)"
                )
            w = target.element_type(trf.element_type)
            if w not in row.trf:
                legal = " or ".join(t.name for t in row.trf)
                raise OpError(
                    f"contracts {_a(s)} {s} stream with a TRF of {target.type_name(trf.element_type)}, a pair the "
                    f"Contraction Engine does not have: {_a(s)} {s} stream takes a TRF of {legal} (hardware.md §2.6)"
                )
            if dst.elem != row.accumulator:
                raise OpError(f"accumulates {s} into {row.accumulator.name}, not {target.type_name(dst.element_type)}")

        run_checks([lambda: check_stream_operands(self), lambda: check_linear_uses(self), context, operands])


@irdl_op_definition
class BlockScaleOp(IRDLOperation):
    """``rngd.block_scale %x, %s {block = B}`` (Vector Engine): multiply
    each element of the f32 stream ``%x`` by its block's scale.

    ``%s`` is either a stream in lockstep (``%x``'s context and time shape,
    its packet shape with the innermost dim divided by ``B``) or a VRF
    tensor (``!rngd.vrf``, any shape) of ``numel(%x) / B`` scales, scale
    ``j`` for the ``j``-th block of ``B`` consecutive values of ``%x``
    flattened time-major (hardware.md §2.6, §4a); either way ``B`` divides
    ``%x``'s innermost packet dim, so blocks never straddle packets.  Its
    elements are ``f32`` (an NVFP4 block scale already widened by the
    adapter's cast) or ``f8E8M0FNU`` (an MXFP4 exponent, decoded as
    ``2^(e-127)``, ``0xFF`` → NaN): :data:`fetchc.target.VECTOR_SCALE_TYPES`.
    Result: f32, ``%x``'s type.  Spec: hardware.md §4 (block scale first)."""

    name = "rngd.block_scale"
    input = operand_def(StreamType)
    scale = operand_def()  # a StreamType or a VrfType: verify_ says which it must be
    result = result_def(StreamType)
    block = prop_def(IntegerAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input `,` $scale attr-dict `:` type($input) `,` type($scale) `->` type($result)"

    def __init__(self, input: SSAValue, scale: SSAValue, block: int):
        init_op(self, [input, scale], [input.type], {"block": i64_attr(block)})

    def verify_(self) -> None:
        x, s, r = self.input.type, self.scale.type, self.result.type
        assert isinstance(x, StreamType) and isinstance(r, StreamType)
        b = self.block.value.data

        def types() -> None:
            if x.elem != target.F32 or r != x:
                raise OpError("scales an f32 stream into an f32 stream of the same type")
            if not isinstance(s, (StreamType, VrfType)):
                raise OpError(
                    f"takes its block scales from a !fetch.stream in lockstep or a !rngd.vrf tensor, not "
                    f"{target.type_name(s)}"
                )
            if target.element_type(s.element_type) not in target.VECTOR_SCALE_TYPES:
                legal = " or ".join(t.name for t in target.VECTOR_SCALE_TYPES)
                raise OpError(f"block scales must be {legal}, not {target.type_name(s.element_type)}")
            if b < 1 or x.packet[-1] % b:
                raise OpError(f"block {b} does not divide the innermost packet dim {x.packet[-1]}")
            if isinstance(s, VrfType):
                want_n = x.numel // b
                if s.numel != want_n:
                    raise OpError(
                        f"its VRF block scales hold {s.numel} scales ({s.spelled()}), but {x.numel} values in "
                        f"blocks of {b} need {want_n}: one scale per block, in the values' stream order "
                        f"(e.g. !rngd.vrf<[{want_n}], {target.type_name(s.element_type)}>)"
                    )
                return
            want = x.packet[:-1] + (x.packet[-1] // b,)
            if s.ctx != x.ctx or s.time != x.time or s.packet != want:
                raise OpError(
                    f"the scale stream must have time {list(x.time)} and packet {list(want)} "
                    f"(one scale per block of {b}), not time {list(s.time)} packet {list(s.packet)}"
                )

        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_not_contraction_only(self, self.input, "scale {a_t} stream in the Vector Engine"),
                lambda: check_not_contraction_only(self, self.scale, "use {a_t} stream as block scales"),
                lambda: check_linear_uses(self),
                types,
            ]
        )


@irdl_op_definition
class TensorScaleOp(IRDLOperation):
    """``rngd.tensor_scale %x, %g`` (Vector Engine): ``out = x * g`` with one
    f32 scalar, correctly rounded.  Spec: hardware.md §4 (tensor scale
    second)."""

    name = "rngd.tensor_scale"
    input = operand_def(StreamType)
    scale = operand_def(builtin.Float32Type)
    result = result_def(StreamType)
    assembly_format = "$input `,` $scale attr-dict `:` type($input) `,` type($scale) `->` type($result)"

    def __init__(self, input: SSAValue, scale: SSAValue):
        init_op(self, [input, scale], [input.type])

    def verify_(self) -> None:
        x, r = self.input.type, self.result.type
        assert isinstance(x, StreamType)

        def types() -> None:
            if x.elem != target.F32 or r != x:
                raise OpError("scales an f32 stream into an f32 stream of the same type")

        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_not_contraction_only(self, self.input, "scale {a_t} stream in the Vector Engine"),
                lambda: check_linear_uses(self),
                types,
            ]
        )


@irdl_op_definition
class CastEngineOp(IRDLOperation):
    """``rngd.cast %x : !fetch.stream<c, [t], [p], f32> -> !fetch.stream<c,
    [t], [p], bf16>``: the Cast Engine narrows an ``f32`` stream to ``bf16``
    (hardware.md §2.6; the furiosa-opt book's ``.cast()``): round to nearest
    even, a subnormal result becomes a zero of its sign, NaN becomes
    ``0x7FC0``, overflow gives ±inf (§2.2a, the rule of the adapter's cast
    code 6).  Context, time and packet shape are unchanged (the packet is
    re-padded to one flit in flight; nothing else in the type changes).
    Narrowings: :data:`fetchc.target.CAST_ENGINE` (``f32 → bf16`` only).

    It takes any ``f32`` stream a ``fetch``/``rngd`` op produced: Vector
    Engine results, and a stream straight from the adapter too, since the
    Cast Engine sits after the Collect Engine whatever feeds it (an ``e2m1 →
    bf16`` decode needs it: the adapter's one cast stage is spent on
    ``f8E4M3FN → f32``)."""

    name = "rngd.cast"
    input = operand_def(StreamType)
    result = result_def(StreamType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute | None = None):
        st = input.type
        if result_type is None and isinstance(st, StreamType):
            result_type = st.with_element(target.mlir_type(target.BF16))
        assert result_type is not None, "rngd.cast of a value that is not a stream needs its result type"
        init_op(self, [input], [result_type])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        assert isinstance(src, StreamType) and isinstance(dst, StreamType)

        def types() -> None:
            outs = target.cast_engine_outputs(src.elem)
            if not outs:
                raise OpError(
                    f"narrows {target.type_name(src.element_type)}, but the Cast Engine takes "
                    f"{target.cast_engine_text()} only: give it an f32 stream (a Vector Engine result, or widen with "
                    "fetch.cast in the adapter)"
                )
            if dst.elem not in outs:
                raise OpError(
                    f"narrows {target.type_name(src.element_type)} to {target.type_name(dst.element_type)}, but the "
                    f"Cast Engine takes {target.cast_engine_text()} only"
                )
            if src.ctx != dst.ctx or src.time != dst.time or src.packet != dst.packet:
                raise OpError(
                    f"changes the stream from {src.spelled()} to {dst.spelled()}; the Cast Engine keeps the context "
                    f"and shapes and changes only the element type: write -> "
                    f"{src.with_element(dst.element_type).spelled()}"
                )

        run_checks(
            [
                lambda: check_stream_operands(self),
                lambda: check_not_contraction_only(self, self.input, "narrow an {t} stream in the Cast Engine"),
                lambda: check_linear_uses(self),
                types,
            ]
        )


SCRATCH_USERS = {
    "fetch.fetch": 0,
    "fetch.dequant": 1,
    "rngd.commit": 1,
    "fetch_seq.program": 0,
}
"""The ops that may use a ``rngd.scratch`` buffer, and the operand that
holds it (the memref a fetch reads, a dequant's block scales, a commit's
destination)."""


@irdl_op_definition
class ScratchOp(IRDLOperation):
    """``%buf = rngd.scratch [{dm_base = N : i64}] : memref<...>``: a DM buffer
    that the compiler owns (ir.md §2a: the kernel's tensors are its memref
    arguments; scratch buffers come after them).

    The memref is row-major (no layout attribute), has a static shape and an
    element type the Fetch Unit reads.  ``dm_base`` (bytes, optional): the DM
    byte address of its element 0, set by ``fetch-place-dm`` (which places
    every scratch buffer of a kernel after all its arguments and rejects any
    other address: explicit placement is not possible).  It sits directly in
    a ``func.func`` body (a kernel owns it) and is used only as the memref of
    ``fetch.fetch``, ``fetch.dequant`` (block scales), ``rngd.commit`` and
    ``fetch_seq.program``.  The MANIFEST lists it as a tensor with ``"arg":
    null`` and ``"scratch": true`` (seqbin.md)."""

    name = "rngd.scratch"
    result = result_def(MemRefType)
    dm_base = opt_prop_def(IntegerAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType, dm_base: int | None = None):
        props = {} if dm_base is None else {"dm_base": i64_attr(dm_base)}
        super().__init__(result_types=[result_type], properties=props)

    @property
    def memref(self) -> MemRefType:
        assert isinstance(self.result.type, MemRefType)
        return self.result.type

    @property
    def base_value(self) -> int | None:
        """``dm_base`` in bytes, or None before placement."""
        return None if self.dm_base is None else self.dm_base.value.data

    def verify_(self) -> None:
        mt = self.memref

        def placement() -> None:
            block = self.parent_block()
            parent = block.parent_op() if block is not None else None
            if block is None or parent is None or parent.name != "func.func" or block.prev_block is not None:
                where = "outside a func.func" if parent is None else f"inside '{parent.name}'"
                if parent is not None and parent.name == "func.func":
                    where = "outside the entry block of its func.func"
                raise OpError(
                    f"is {where}: a scratch buffer belongs to a kernel and sits directly in the entry block "
                    "of its func.func"
                )

        def layout() -> None:
            elem = target.element_type(mt.element_type)
            if elem is None or elem.in_flight_only:
                raise OpError(
                    f"is a memref of {target.type_name(mt.element_type)}, which has no DM layout: a scratch "
                    "buffer holds an element type the Fetch Unit reads"
                )
            if any(d < 0 for d in mt.get_shape()):
                raise OpError("has a dynamic shape: a scratch buffer has a static shape")
            if not isinstance(mt.layout, NoneAttr) or not isinstance(mt.memory_space, NoneAttr):
                raise OpError("has a layout or memory space attribute: a scratch buffer is a plain row-major memref")

        def base() -> None:
            b = self.base_value
            problem = None if b is None else target.dm_base_problem(b, "dm_base")
            if problem is not None:
                raise OpError(problem)

        def uses() -> None:
            for use in self.result.uses:
                user = use.operation
                if SCRATCH_USERS.get(user.name) != use.index:
                    raise OpError(
                        f"is used by '{user.name}': a scratch buffer is the compiler's own DM tensor, read by "
                        "fetch.fetch (or fetch.dequant's block scales) and written by rngd.commit",
                        [(user, "used here")],
                    )

        run_checks([placement, layout, base, uses])


Rngd = Dialect(
    "rngd",
    [
        SwitchOp,
        CollectOp,
        TransposeOp,
        CommitOp,
        ToTrfOp,
        ToVrfOp,
        ContractOuterOp,
        BlockScaleOp,
        TensorScaleOp,
        CastEngineOp,
        ScratchOp,
    ],
    [TrfType, VrfType],
)
direct_accessors(*Rngd.operations)
