"""``fetch-split-scaling``: split ``fetch.dequant`` into adapter stages plus
downstream Vector Engine work (the table is static and carries no scale).

For ``%w = fetch.dequant %codes, %bscale[, %gscale] {format}`` where
``%codes = fetch.fetch %packed {map = M, base = B}``::

    %codes = fetch.fetch %packed {map = M, base = B}           // unchanged
    %sc    = fetch.fetch %bscale {map = M', base = scale_base}  // inserted right after
    %sf    = fetch.cast %sc : ...f8E4M3FN -> ...f32             // nvfp4 only
    %d     = fetch.table_lookup %codes : f4E2M1FN -> f8E4M3FN   // paired table
    %f     = fetch.cast %d : f8E4M3FN -> f32
    %b     = rngd.block_scale %f, %sf {block = 16|32}           // E2M1 * f32(bscale)
    %w     = rngd.tensor_scale %b, %gscale                      // nvfp4 only: * gscale

so the result is ``(E2M1[code] * f32(bscale)) * gscale`` in f32, block scale
first, tensor scale second, bit for bit as hardware.md §4 defines it (MXFP4:
``E2M1[code] * 2^(e-127)``, decoded by ``rngd.block_scale`` from the raw
``f8E8M0FNU`` stream, since the adapter has no e8m0 cast).

``M'`` reads one scale per block: the codes' packets must cover whole blocks
along the input axis (the memref's last index): the innermost packet dim must
walk the input axis with coefficient 1 and a size that is a multiple of the
block, and every other coefficient and the constant on that axis must be
multiples of the block.  The scale stream keeps the time shape; its innermost
packet dim is divided by the block.  Anything else is a located error.

The scale memref's DM address is the dequant's optional ``scale_base``
property (bytes, default 0, like ``fetch.fetch``'s ``base``).  A dequant on
the ``sub`` context (no table register) is an error here that names the
automatic route, ``fetch-route-sub-decode``, which runs first in the default
pipeline and shares :func:`scale_fetch_ops` and :func:`scale_ops`.
Spec: ir.md §2 (``fetch.dequant``), §4; hardware.md §4.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from fetchc import target
from fetchc.diagnostics import OpError, PassError
from fetchc.dialects.fetch import CastOp, DequantOp, FetchOp, StreamType, TableLookupOp
from fetchc.dialects.rngd import BlockScaleOp, TensorScaleOp
from fetchc.rewriting import FetchcPass, apply_pattern
from fetchc.target.layout import linear_coefficients, shape_text
from fetchc.wording import count


def _affine(coeffs: list[int], const: int) -> AffineExpr:
    expr = AffineExpr.constant(const)
    for d, c in enumerate(coeffs):
        if c:
            expr = expr + AffineExpr.dimension(d) * c
    return expr


def scale_fetch_layout(codes: FetchOp, bscale_type: MemRefType, block: int) -> tuple[AffineMap, StreamType]:
    """The map and stream type that read one block scale per ``block`` codes
    for the codes fetch ``codes``.  Raises ``ValueError`` (message for the
    user) when the packets do not cover whole blocks along the input axis or
    the scale memref has the wrong shape."""
    st = codes.stream
    cshape = list(codes.memref.get_shape())
    sshape = list(bscale_type.get_shape())
    want = cshape[:-1] + [cshape[-1] // block]
    if cshape[-1] % block or sshape != want:
        raise ValueError(
            f"the block-scale memref must be {shape_text(want)} (rows, cols / {block}) for codes "
            f"{shape_text(cshape)}, not {shape_text(sshape)}"
            + (f"; the input axis ({cshape[-1]}) is not a whole number of blocks" if cshape[-1] % block else "")
        )
    coeffs, consts = linear_coefficients(codes.affine_map())
    nt, npk = len(st.time), len(st.packet)
    inner = nt + npk - 1
    axis = len(cshape) - 1
    p_inner = st.packet[-1]
    why = None
    if coeffs[axis][inner] != 1 or any(coeffs[r][inner] for r in range(axis)):
        why = "the innermost packet dim does not walk the input axis (the memref's last index) with step 1"
    elif p_inner % block:
        why = f"the innermost packet dim has {count(p_inner, 'element')}, not a multiple of the {block}-element block"
    elif consts[axis] % block:
        why = f"the reads start at input index {consts[axis]}, not on a block boundary"
    else:
        bad = [d for d in range(inner) if coeffs[axis][d] % block]
        if bad:
            step = coeffs[axis][bad[0]]
            why = f"dim {bad[0]} steps the input axis by {step}, not a multiple of the {block}-element block"
    if why:
        raise ValueError(f"packets do not cover whole blocks along the input axis: {why}")
    scoeffs = [list(c) for c in coeffs]
    sconsts = list(consts)
    scoeffs[axis] = [c // block for c in coeffs[axis]]
    scoeffs[axis][inner] = 1
    sconsts[axis] = consts[axis] // block
    amap = AffineMap(nt + npk, 0, tuple(_affine(scoeffs[r], sconsts[r]) for r in range(len(cshape))))
    stype = StreamType(st.ctx, st.time, st.packet[:-1] + (p_inner // block,), bscale_type.element_type)
    return amap, stype


def scale_fetch_ops(op: DequantOp, codes: FetchOp, base: int | None) -> tuple[list[Operation], SSAValue]:
    """The fetch of ``op``'s block scales for the codes fetch ``codes`` (in
    its context, one scale per block: :func:`scale_fetch_layout`), followed
    for nvfp4 by the ``f8E4M3FN -> f32`` cast; returns the new ops (not yet
    inserted) and the scale stream they produce.  ``base``: the scale
    fetch's ``base`` (bytes), or None to leave it to ``fetch-place-dm``.
    Raises :class:`PassError` at ``op`` when the packets do not cover whole
    blocks or the scale fetch breaks a sequencer limit (hardware.md §3)."""
    fmt = op.dequant_format
    bs_type = op.bscale.type
    assert isinstance(bs_type, MemRefType)
    try:
        amap, stype = scale_fetch_layout(codes, bs_type, fmt.block)
    except ValueError as e:
        raise PassError(op, str(e), [(codes, "the codes are fetched here")]) from None
    sfetch = FetchOp(op.bscale, stype, map=amap, base=base)
    sfetch.location = op.location
    # The scale fetch is a Fetch Unit program of its own: check its
    # sequencer limits here, so the error names the dequant and its
    # scale_base rather than an op the user never wrote.
    scale_cast = target.F32 if fmt.scale == target.F8E4M3FN else None
    try:
        sfetch.sequencer_config(cast_out=scale_cast, infer_cast=False)
    except OpError as e:
        where = "" if base is None else f"scale_base = {base}, "
        raise PassError(
            op,
            f"the fetch of its block scales ({where}map {amap}, "
            f"{stype.spelled()}) breaks a sequencer limit: {e.message}",
            [(codes, "the codes are fetched here")],
        ) from None
    ops: list[Operation] = [sfetch]
    scale: SSAValue = sfetch.result
    if fmt.scale == target.F8E4M3FN:
        scast = CastOp(scale, stype.with_element(target.mlir_type(target.F32)))
        scast.location = op.location
        ops.append(scast)
        scale = scast.result
    return ops, scale


def scale_ops(op: DequantOp, decoded: SSAValue, scale: SSAValue) -> tuple[list[Operation], SSAValue]:
    """The Vector Engine ops that apply ``op``'s scales to the f32 stream
    ``decoded``: ``rngd.block_scale`` with the stream ``scale``, then (nvfp4)
    ``rngd.tensor_scale`` with its tensor scale.  Returns the new ops (not
    inserted, located at ``op``) and the result stream."""
    bscale = BlockScaleOp(decoded, scale, op.dequant_format.block)
    ops: list[Operation] = [bscale]
    result = bscale.result
    if op.gscale is not None:
        tscale = TensorScaleOp(result, op.gscale)
        ops.append(tscale)
        result = tscale.result
    for o in ops:
        o.location = op.location
    return ops, result


class SplitScaling(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DequantOp, rewriter: PatternRewriter) -> None:
        codes = op.input.owner
        assert isinstance(codes, FetchOp)
        st = codes.stream
        if not target.has_table_register(st.ctx):
            raise PassError(
                op,
                "decodes through a table, which the sub Fetch Unit does not have: the automatic route "
                "(fetch-route-sub-decode, first in the default pipeline) decodes on the main context into a DM "
                "scratch buffer and stages it on the sub context; run it before fetch-split-scaling, or write "
                "the route by hand (decode on main, rngd.commit to DM, then a convert-only StoTrf on sub)",
                [(codes, "the codes are fetched on the sub context here")],
            )
        scale_base = None if op.scale_base is None else op.scale_base.value.data
        sops, scale = scale_fetch_ops(op, codes, 0 if scale_base is None else scale_base)
        point = InsertPoint.after(codes)
        for o in sops:
            rewriter.insert(o, point)
            point = InsertPoint.after(o)

        look = TableLookupOp(codes.result, st.with_element(target.mlir_type(target.F8E4M3FN)))
        cast = CastOp(look.result, st.with_element(target.mlir_type(target.F32)))
        look.location = cast.location = op.location
        vops, result = scale_ops(op, cast.result, scale)
        rewriter.replace(op, [look, cast, *vops], [result])


@dataclass(frozen=True)
class SplitScalingPass(FetchcPass):
    """``fetch-split-scaling`` (ir.md §4).  Raises
    :class:`fetchc.diagnostics.PassError` at a ``fetch.dequant`` whose packets
    do not cover whole blocks along the input axis, whose scale fetch breaks
    a sequencer limit, or whose codes are on the ``sub`` context."""

    name = "fetch-split-scaling"
    summary = (
        "fetch.dequant -> table lookup + cast of the codes, a fetch of the block scales, "
        "rngd.block_scale and rngd.tensor_scale"
    )

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        apply_pattern(SplitScaling(), op, listener, on=(DequantOp,))
