"""``!fetch.stream<ctx, [time], [packet], elem>``: a packet stream in a Fetch
Unit, the value type of the ``fetch`` and ``rngd`` dialects.

Spec: ir.md §1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr, TypeAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from fetchc import target

__all__ = ["StreamType", "parse_dim", "stream_type"]


@irdl_attr_definition
class StreamType(ParametrizedAttribute, TypeAttribute):
    """``!fetch.stream<ctx, [time], [packet], elem>``: a packet stream in a
    Fetch Unit.  ``ctx`` is ``main`` or ``sub``; ``time`` and ``packet`` are
    shapes in elements (time dims outermost, packet dims innermost); ``elem``
    the element type.  Spec: ir.md §1."""

    name = "fetch.stream"

    context: StringAttr
    time_shape: ArrayAttr[IntAttr]
    packet_shape: ArrayAttr[IntAttr]
    element_type: Attribute

    def __init__(self, context: str, time_shape: Sequence[int], packet_shape: Sequence[int], element_type: Attribute):
        super().__init__(
            StringAttr(context),
            ArrayAttr([IntAttr(d) for d in time_shape]),
            ArrayAttr([IntAttr(d) for d in packet_shape]),
            element_type,
        )

    @property
    def ctx(self) -> str:
        return self.context.data

    @property
    def time(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.time_shape.data)

    @property
    def packet(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.packet_shape.data)

    @property
    def numel_packet(self) -> int:
        """Elements per packet (product of the packet shape)."""
        return math.prod(self.packet)

    @property
    def numel(self) -> int:
        """Elements of the whole stream (time and packet)."""
        return math.prod(self.time) * self.numel_packet

    @property
    def elem(self) -> target.ElementType | None:
        return target.element_type(self.element_type)

    def with_element(self, element_type: Attribute) -> StreamType:
        """The same stream of ``element_type`` (built from this type's
        verified parameters: half the cost of the constructor)."""
        return StreamType.new((self.context, self.time_shape, self.packet_shape, element_type))

    def with_shape(self, time: Sequence[int], packet: Sequence[int]) -> StreamType:
        return StreamType(self.ctx, time, packet, self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def dim() -> IntAttr:
            return parse_dim(parser, "!fetch.stream")

        def shape(what: str) -> ArrayAttr[IntAttr]:
            pos = parser.pos
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, dim)
            if what == "packet" and not dims:
                parser.raise_error("!fetch.stream needs at least one packet dimension (e.g. [1])", pos, parser.pos)
            return ArrayAttr(dims)

        with parser.in_angle_brackets():
            pos = parser.pos
            ctx = parser.parse_identifier()
            if ctx not in target.CONTEXTS:
                parser.raise_error(f"!fetch.stream context must be 'main' or 'sub', not '{ctx}'", pos, parser.pos)
            parser.parse_punctuation(",")
            time = shape("time")
            parser.parse_punctuation(",")
            packet = shape("packet")
            parser.parse_punctuation(",")
            elem = parser.parse_type()
        return (StringAttr(ctx), time, packet, elem)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(
                f"{self.ctx}, [{', '.join(map(str, self.time))}], [{', '.join(map(str, self.packet))}], "
            )
            printer.print_attribute(self.element_type)

    def verify(self) -> None:
        if self.ctx not in target.CONTEXTS:
            raise VerifyException(f"stream context must be 'main' or 'sub', not '{self.ctx}'")
        if not self.packet:
            raise VerifyException("a stream's packet shape needs at least one dimension")
        for d in self.time + self.packet:
            if d < 1:
                raise VerifyException(f"stream dimensions must be positive, got {d}")

    def spelled(self) -> str:
        """MLIR spelling, for diagnostics."""
        time, packet = ", ".join(map(str, self.time)), ", ".join(map(str, self.packet))
        return f"!fetch.stream<{self.ctx}, [{time}], [{packet}], {target.type_name(self.element_type)}>"


def parse_dim(parser: AttrParser, type_name: str) -> IntAttr:
    """One dimension of a shape list of the type ``type_name`` (``!fetch.stream``,
    ``!rngd.vrf``): a positive integer, else a parse error at it."""
    pos = parser.pos
    d = parser.parse_integer(allow_boolean=False)
    if d < 1:
        parser.raise_error(f"{type_name} dimensions must be positive, got {d}", pos, parser.pos)
    return IntAttr(d)


def stream_type(v: SSAValue) -> StreamType | None:
    t = v.type
    return t if isinstance(t, StreamType) else None
