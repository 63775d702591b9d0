"""Layout maths: linear affine maps and memref layouts, in elements.

:func:`linear_coefficients` turns a ``fetch.fetch`` map into integer
coefficients; :func:`memref_layout` gives a memref's element strides and
offset.  :mod:`fetchc.target.sequencer` derives the loop nest from both.

Spec: ir.md §1 (identity or ``strided<>`` layouts), §2 (linear maps: no
``mod``, ``floordiv``, ``ceildiv``), hardware.md §3.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xDSL is imported where it is used: the byte spans need none (the seq.bin reader)
    from xdsl.dialects.builtin import MemRefType
    from xdsl.ir import Attribute
    from xdsl.ir.affine import AffineExpr, AffineMap

__all__ = [
    "layout_byte_span",
    "nest_byte_span",
    "NonLinearMap",
    "element_bits",
    "linear_coefficients",
    "memref_byte_span",
    "memref_layout",
    "shape_text",
    "static_shape",
]


class NonLinearMap(ValueError):
    """A map that is not linear in its dims (the message says why)."""


def _linear(expr: AffineExpr, ndims: int, affine: ModuleType) -> tuple[list[int], int]:
    """``(coefficients, constant)`` of one result; ``affine``: the module
    ``xdsl.ir.affine`` (imported once per map by the caller)."""
    if isinstance(expr, affine.AffineDimExpr):
        c = [0] * ndims
        c[expr.position] = 1
        return c, 0
    if isinstance(expr, affine.AffineConstantExpr):
        return [0] * ndims, expr.value
    if isinstance(expr, affine.AffineBinaryOpExpr):
        AffineBinaryOpKind = affine.AffineBinaryOpKind
        if expr.kind == AffineBinaryOpKind.Add:
            a, ka = _linear(expr.lhs, ndims, affine)
            b, kb = _linear(expr.rhs, ndims, affine)
            return [x + y for x, y in zip(a, b, strict=False)], ka + kb
        if expr.kind == AffineBinaryOpKind.Mul:
            a, ka = _linear(expr.lhs, ndims, affine)
            b, kb = _linear(expr.rhs, ndims, affine)
            if any(a) and any(b):
                raise NonLinearMap("a product of two dimensions is not linear")
            if any(b):
                a, ka, b, kb = b, kb, a, ka
            return [x * kb for x in a], ka * kb
        op = {
            AffineBinaryOpKind.Mod: "mod",
            AffineBinaryOpKind.FloorDiv: "floordiv",
            AffineBinaryOpKind.CeilDiv: "ceildiv",
        }.get(expr.kind, str(expr.kind))
        raise NonLinearMap(f"'{op}' is not linear")
    raise NonLinearMap("symbols are not supported")


def linear_coefficients(amap: AffineMap) -> tuple[list[list[int]], list[int]]:
    """``(coeffs, consts)`` of a linear affine map: ``coeffs[r][d]`` is the
    coefficient of dim ``d`` in result ``r``.  Raises :class:`NonLinearMap`
    for ``mod``/``floordiv``/``ceildiv``, products of dims, or symbols."""
    from xdsl.ir import affine

    if amap.num_symbols:
        raise NonLinearMap("symbols are not supported")
    coeffs, consts = [], []
    for e in amap.results:
        c, k = _linear(e, amap.num_dims, affine)
        coeffs.append(c)
        consts.append(k)
    return coeffs, consts


def static_shape(mt: MemRefType) -> tuple[int, ...]:
    """The memref's shape in elements.  Raises ``ValueError`` for a dynamic
    dimension (``?``): DM tensors have static shapes."""
    shape = tuple(mt.get_shape())
    if any(d < 0 for d in shape):
        raise ValueError(
            f"dynamic memref shapes are not supported: DM tensors have static shapes, not {shape_text(shape)}"
        )
    return shape


def shape_text(shape) -> str:
    """A shape as MLIR spells it, ``64x?x2`` (a dynamic dimension is ``?``,
    never xDSL's placeholder number)."""
    return "x".join("?" if d < 0 else str(d) for d in shape)


def memref_layout(mt: MemRefType) -> tuple[list[int], int]:
    """``(strides, offset)`` in elements of a memref with an identity or
    ``strided<>`` layout.  Raises ``ValueError`` for dynamic shapes, dynamic
    strides/offsets or other layouts."""
    from xdsl.dialects import builtin

    shape = list(static_shape(mt))
    layout = mt.layout
    if isinstance(layout, builtin.NoneAttr):
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= d
        return list(reversed(strides)), 0
    return _other_layout(mt, shape, layout)


def _other_layout(mt: MemRefType, shape: list[int], layout: Attribute) -> tuple[list[int], int]:
    """:func:`memref_layout` of a ``strided<>`` or affine-map layout."""
    from xdsl.dialects.builtin import AffineMapAttr, MemRefType, StridedLayoutAttr
    from xdsl.ir.affine import AffineMap

    if isinstance(layout, StridedLayoutAttr):
        given = layout.get_strides()
        strides = [int(s) for s in given if s is not None]
        offset = layout.get_offset()
        if len(strides) != len(given) or offset is None:
            raise ValueError("dynamic strides or offsets are not supported: DM tensors have static layouts")
        return strides, int(offset)
    if isinstance(layout, AffineMapAttr) and layout.data == AffineMap.identity(len(shape)):
        return memref_layout(MemRefType(mt.element_type, shape))
    raise ValueError("only identity and strided<[...], offset: N> memref layouts are supported")


def element_bits(elem: Attribute) -> int:
    """Storage width in bits of one DM element of type ``elem``: 4 for the
    4-bit types (two per byte), else a whole number of bytes.  Raises
    ``ValueError`` for types with no fixed width or a width that is neither 4
    nor a multiple of 8 (``i1``, ``index``...): they have no DM layout."""
    from xdsl.dialects.builtin import FixedBitwidthType

    from fetchc.target.facts import element_type

    hw = element_type(elem)
    bits = hw.bits if hw is not None else (elem.bitwidth if isinstance(elem, FixedBitwidthType) else None)
    if bits is None or (bits != 4 and bits % 8):
        raise ValueError(
            f"its elements ({elem}) have no DM layout: an element must be 4 bits (two per byte) "
            "or a whole number of bytes"
        )
    return bits


def memref_byte_span(mt: MemRefType) -> tuple[int, int]:
    """``(lo, end)``: the bytes a memref occupies in DM, relative to its base
    address (the address of its layout's element 0, ``rngd.dm_base``).  ``lo``
    is the lowest byte (negative when negative strides reach below the base),
    ``end`` one past the highest; ``end - lo`` is its size in bytes.

    The span runs from the lowest to the highest element address the
    memref's shape reaches with its layout's strides and offset (elements):
    ``offset + Σ min(0, (n_k - 1)·s_k)`` to ``offset + Σ max(0, (n_k - 1)·s_k)``.
    A ``w``-byte element ``e`` covers bytes ``e·w .. e·w + w - 1``; 4-bit
    elements are two per byte, element ``e`` in byte ``floor(e / 2)``
    (hardware.md §3), so ``n`` packed elements take ``ceil(n / 2)`` bytes.
    A memref with no element (a zero dim) gives ``(0, 0)``.

    Raises ``ValueError`` (message for the user) for dynamic shapes, strides
    or offsets, unsupported layouts and elements without a DM layout
    (:func:`element_bits`).  Spec: ir.md §2a, seqbin.md MANIFEST ``bytes``."""
    strides, offset = memref_layout(mt)
    return layout_byte_span(list(mt.get_shape()), strides, offset, element_bits(mt.element_type))


def layout_byte_span(shape: Sequence[int], strides: Sequence[int], offset: int, bits: int) -> tuple[int, int]:
    """:func:`memref_byte_span` on integers: ``(lo, end)`` in bytes relative
    to the base, for ``shape`` / ``strides`` / ``offset`` in elements of
    ``bits`` bits (4, 8, 16 or 32).  ``(0, 0)`` when a dimension is 0.  Pure
    integer arithmetic (a MANIFEST's shape may be huge: nothing is
    allocated)."""
    if any(d == 0 for d in shape):
        return 0, 0
    lo = hi = offset
    for n, s in zip(shape, strides, strict=False):
        reach = (n - 1) * s
        if reach < 0:
            lo += reach
        else:
            hi += reach
    if bits == 4:
        return lo // 2, hi // 2 + 1
    w = bits // 8
    return lo * w, (hi + 1) * w


def nest_byte_span(base: int, limits: Sequence[int], strides: Sequence[int], bits: int) -> tuple[int, int]:
    """``(lo, end)``: the DM bytes a loop nest reads (hardware.md §3), from
    the byte address ``base`` of its first element, ``limits`` / ``strides``
    in elements of ``bits`` bits; 4-bit element ``e`` lives in byte
    ``base + floor(e / 2)``.  The extremes of ``Σ i_k·stride_k`` are reached,
    so every read lies in the span."""
    lo_e = sum(min(0, s * (n - 1)) for n, s in zip(limits, strides, strict=False))
    hi_e = sum(max(0, s * (n - 1)) for n, s in zip(limits, strides, strict=False))
    if bits == 4:
        return base + lo_e // 2, base + hi_e // 2 + 1
    w = bits // 8
    return base + lo_e * w, base + hi_e * w + w
