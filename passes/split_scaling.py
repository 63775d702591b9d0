"""``fetch-split-scaling``: split ``fetch.dequant`` into adapter stages plus
downstream Vector Engine work (the table is static and carries no scale).

For ``%w = fetch.dequant %codes, %bscale[, %gscale] {format}`` where
``%codes = fetch.fetch %packed {map = M, base = B}``, the **staged** form
(hardware.md §4a, what the best hand-written RNGD kernels do)::

    %codes = fetch.fetch %packed {map = M, base = B}              // unchanged
    %sc    = fetch.fetch %bscale {map = M'', base = scale_base}    // sub context: 8-byte reads
    %sf    = fetch.cast %sc : ...f8E4M3FN -> ...f32                // nvfp4 only
    %sk    = rngd.collect %sf
    %v     = rngd.to_vrf %sk : ... -> !rngd.vrf<[...], f32>        // the scales, once, in the VRF
    %d     = fetch.table_lookup %codes : f4E2M1FN -> f8E4M3FN      // paired table
    %f     = fetch.cast %d : f8E4M3FN -> f32
    %b     = rngd.block_scale %f, %v {block = 16|32}               // E2M1 * f32(bscale)
    %t     = rngd.tensor_scale %b, %gscale                         // nvfp4 only: * gscale
    %w     = rngd.cast %t : ...f32 -> ...bf16                      // a bf16 result only

The sub fetch reads exactly the sequence of block scales that the lockstep
fetch below would read, in the same order (scale ``j`` for the ``j``-th
block of the value stream), re-packetised (:func:`repacketise`) into packets
of one flit at the sub unit's output: the lockstep stream's dims, merged
where they walk the scale memref contiguously in index space, cut into a
packet of ``q`` elements (``q`` at most one 32-byte flit after the cast:
8 ``f32``, 32 raw ``f8E8M0FNU``) and the time dims before it.  E.g. four
rows of 3840 NVFP4 codes read as ``[4, 120], [32]``: the lockstep scale
stream is ``[4, 120], [2]`` with map ``(o, p, e) -> (o, p * 2 + e)``; the
staged fetch is ``[4, 30], [8]`` with map ``(o, t, e) -> (o, t * 8 + e)``,
120 sub reads of 8 bytes instead of 480 main reads of 2 bytes.  MXFP4 stages
the raw ``f8E8M0FNU`` bytes (no adapter stage reads e8m0; 1 byte a scale),
which ``rngd.block_scale`` decodes as ``2^(e-127)``, exactly as it decodes
the lockstep stream (docs/hardware.md §2.6 says why this is the one
exception to the Vector Engine's 32-bit operands).

The **lockstep** form (the fallback) fetches the scales on the codes' Fetch
Unit beside them, one per block::

    %sc    = fetch.fetch %bscale {map = M', base = scale_base}     // inserted right after the codes' fetch
    %sf    = fetch.cast %sc : ...f8E4M3FN -> ...f32                // nvfp4 only
    ...    (lookup, cast, block_scale with the stream %sf, tensor_scale, rngd.cast as above)

It is taken, with a **remark** at the dequant that says why and what it
costs (and the same text appended to the function's ``rngd.remarks``, an
``ArrayAttr`` of ``StringAttr``), when the staged scales do not fit what the
kernel's other VRF tensors leave of one slice's 8 KiB (every ``rngd.to_vrf``
of the function counts, hand-written ones and those of earlier dequants:
:func:`fetchc.dialects.rngd.vrf_tensors`), or when no packet of the scale
sequence is a legal sub-context fetch (the sequencer says why:
:func:`fetchc.target.sequencer.derive` through ``FetchOp.sequencer_config``).

Either way the result is ``(E2M1[code] * f32(bscale)) * gscale`` in f32,
block scale first, tensor scale second, bit for bit as hardware.md §4
defines it (MXFP4: ``E2M1[code] * 2^(e-127)``), narrowed to bf16 by the Cast
Engine when the dequant's result is ``bf16``.

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
pipeline and shares :func:`scale_fetch_ops` and :func:`scale_ops` (it keeps
the lockstep form, on the sub unit).
Spec: ir.md §2 (``fetch.dequant``), §4; hardware.md §2.6, §4, §4a.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, MemRefType, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from fetchc import target
from fetchc.diagnostics import OpError, PassError
from fetchc.dialects.fetch import CastOp, DequantOp, FetchOp, StreamType, TableLookupOp
from fetchc.dialects.rngd import BlockScaleOp, CastEngineOp, CollectOp, TensorScaleOp, ToVrfOp, VrfType, vrf_tensors
from fetchc.frontend.xdsl_compat import release_erased
from fetchc.rewriting import FetchcPass, apply_pattern, emit_remark
from fetchc.target.layout import linear_coefficients, shape_text
from fetchc.wording import count

__all__ = [
    "REMARKS_ATTR",
    "SplitScaling",
    "SplitScalingPass",
    "Staged",
    "repacketise",
    "scale_fetch_layout",
    "scale_fetch_ops",
    "scale_ops",
    "staged_scale_ops",
]

REMARKS_ATTR = "rngd.remarks"
"""The function attribute (an ``ArrayAttr`` of ``StringAttr``) that collects
the text of the pass's remarks, for the ``seq.bin`` MANIFEST and ``fetchc dis``."""


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


def _discard(op: Operation) -> None:
    """Drop an op built and never inserted (a candidate fetch the sequencer
    refused, the lockstep fetch the staged form replaces): its operand uses
    go, and with its results released nothing keeps it (the compile runs with
    the cyclic collector paused)."""
    op.erase()
    release_erased([op])


def _scale_cast(op: DequantOp) -> target.ElementType | None:
    """The adapter cast of ``op``'s scale fetch: ``f8E4M3FN → f32`` for
    NVFP4 (the scales the Vector Engine reads are ``f32``), none for MXFP4."""
    fmt = op.dequant_format
    return fmt.vector_scale if fmt.vector_scale != fmt.scale else None


def _lockstep_fetch(op: DequantOp, codes: FetchOp, base: int | None) -> FetchOp:
    """The lockstep fetch of ``op``'s block scales (not inserted), its
    sequencer limits checked; :class:`PassError` at ``op`` otherwise."""
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
    try:
        sfetch.sequencer_config(cast_out=_scale_cast(op), infer_cast=False)
    except OpError as e:
        _discard(sfetch)
        where = "" if base is None else f"scale_base = {base}, "
        raise PassError(
            op,
            f"the fetch of its block scales ({where}map {amap}, "
            f"{stype.spelled()}) breaks a sequencer limit: {e.message}",
            [(codes, "the codes are fetched here")],
        ) from None
    return sfetch


def _widened(op: DequantOp, fetch: FetchOp) -> tuple[list[Operation], SSAValue]:
    """``fetch`` and, for NVFP4, its ``f8E4M3FN → f32`` cast (located at
    ``op``): the ops and the stream of scales the Vector Engine reads."""
    ops: list[Operation] = [fetch]
    scale: SSAValue = fetch.result
    cast_out = _scale_cast(op)
    if cast_out is not None:
        scast = CastOp(scale, fetch.stream.with_element(target.mlir_type(cast_out)))
        scast.location = op.location
        ops.append(scast)
        scale = scast.result
    return ops, scale


def scale_fetch_ops(op: DequantOp, codes: FetchOp, base: int | None) -> tuple[list[Operation], SSAValue]:
    """The lockstep fetch of ``op``'s block scales for the codes fetch
    ``codes`` (in its context, one scale per block: :func:`scale_fetch_layout`),
    followed for nvfp4 by the ``f8E4M3FN -> f32`` cast; returns the new ops
    (not yet inserted) and the scale stream they produce.  ``base``: the
    scale fetch's ``base`` (bytes), or None to leave it to ``fetch-place-dm``.
    Raises :class:`PassError` at ``op`` when the packets do not cover whole
    blocks or the scale fetch breaks a sequencer limit (hardware.md §3)."""
    return _widened(op, _lockstep_fetch(op, codes, base))


def repacketise(sizes: list[int], coeffs: list[list[int]], q: int) -> tuple[list[int], list[list[int]], int] | None:
    """Re-cut the index sequence of a linear read into packets of ``q``
    elements, in the same order.

    ``sizes[d]`` and ``coeffs[d]`` (one coefficient per memref index) are the
    read's dims, outermost first (time dims, then packet dims).  Size-1 dims
    are dropped; a dim merges into the one inside it when its coefficients
    are that dim's size times that dim's coefficients (the two walk the
    memref as one dim); then the innermost dims, the last of them split if
    needed, form a packet of exactly ``q`` elements.  Returns ``(sizes,
    coeffs, n_time)`` of the new dims (the first ``n_time`` are time dims,
    the rest packet dims), or None when no such cut exists (the innermost
    merged dims do not give ``q`` elements).  Pure index arithmetic: whether
    the result is a legal fetch is the sequencer's call."""
    dims = [(n, list(c)) for n, c in zip(sizes, coeffs, strict=True) if n > 1]
    merged: list[tuple[int, list[int]]] = []
    for n, c in reversed(dims):
        if merged and c == [merged[-1][0] * x for x in merged[-1][1]]:
            n_in, c_in = merged[-1]
            merged[-1] = (n * n_in, c_in)
        else:
            merged.append((n, c))
    merged.reverse()  # outermost first
    packet: list[tuple[int, list[int]]] = []
    p = 1
    j = len(merged) - 1
    while p < q and j >= 0:
        n, c = merged[j]
        if q % (p * n) == 0:
            packet.insert(0, (n, c))
            p *= n
            j -= 1
            continue
        f = q // p
        if q % p or n % f:
            return None
        packet.insert(0, (f, c))
        merged[j] = (n // f, [x * f for x in c])
        p = q
    if p != q:
        return None
    if not packet:  # q == 1: a one-element packet (a stream has at least one packet dim)
        packet = [(1, [0] * len(coeffs[0]) if coeffs else [])]
    time = [d for d in merged[: j + 1] if d[0] > 1]
    new = time + packet
    return [n for n, _ in new], [c for _, c in new], len(time)


@dataclass(frozen=True)
class Staged:
    """The staged form of one dequant's block scales (not inserted): the sub
    fetch, its cast (NVFP4), ``rngd.collect`` and ``rngd.to_vrf`` (``ops``,
    in order), the VRF tensor ``vrf`` and its bytes."""

    ops: list[Operation]
    vrf: SSAValue
    nbytes: int


def _staged_fetch(op: DequantOp, lock: FetchOp) -> FetchOp | str:
    """A sub-context fetch of the scale sequence ``lock`` reads, in packets
    of one flit at its output or a power-of-two part of one
    (:func:`repacketise`, the largest packet the sequencer accepts), or why
    there is none."""
    st = lock.stream
    sizes = list(st.time + st.packet)
    by_index, consts = linear_coefficients(lock.affine_map())
    coeffs = [[row[d] for row in by_index] for d in range(len(sizes))]
    elem = st.elem
    assert elem is not None
    cast_out = _scale_cast(op)
    per_flit = target.FLIT_BYTES // (cast_out or elem).storage_bytes
    first_error = None
    total = math.prod(sizes)
    # one flit a packet, or a power-of-two part of one: the flits stay whole
    for q in (per_flit >> k for k in range(per_flit.bit_length())):
        if total % q:
            continue
        cut = repacketise(sizes, coeffs, q)
        if cut is None:
            continue
        nsizes, ncoeffs, nt = cut
        amap = AffineMap(len(nsizes), 0, tuple(_affine([c[r] for c in ncoeffs], consts[r]) for r in range(len(consts))))
        stype = StreamType("sub", nsizes[:nt], nsizes[nt:], st.element_type)
        sub = FetchOp(op.bscale, stype, map=amap, base=lock.base_value)
        sub.location = op.location
        try:
            sub.sequencer_config(cast_out=cast_out, infer_cast=False)
            return sub
        except OpError as e:
            _discard(sub)
            if first_error is None:
                first_error = f"{stype.spelled()} breaks a sequencer limit: {e.message}"
    return first_error or f"their sequence does not split into packets of at most {per_flit}"


def staged_scale_ops(op: DequantOp, lock: FetchOp, budget: int) -> Staged | str:
    """The staged form of ``op``'s block scales (module docstring), reading
    what the lockstep fetch ``lock`` reads, or why it cannot be used: the
    scales need more than ``budget`` bytes of VRF, or no sub-context fetch
    reads them (the sequencer's reason)."""
    sub = _staged_fetch(op, lock)
    if isinstance(sub, str):
        return f"no sub-context fetch reads them in their lockstep order ({sub})"
    ops, scale = _widened(op, sub)
    st = scale.type
    assert isinstance(st, StreamType)
    vrf_type = VrfType.for_stream(st)
    cfg = sub.sequencer_config(cast_out=_scale_cast(op), infer_cast=False)
    reads = math.prod(sub.stream.time) * cfg.words_per_packet
    if vrf_type.nbytes > budget:
        for o in reversed(ops):
            _discard(o)
        room = (
            f"one slice's VRF holds {target.VRF_BYTES} bytes"
            if budget >= target.VRF_BYTES
            else f"the kernel's other VRF tensors leave {max(budget, 0)} of its {target.VRF_BYTES} bytes per slice"
        )
        return (
            f"staged ({_reads_text(reads, cfg.fetch_size)} on the sub Fetch Unit) they would take "
            f"{vrf_type.nbytes} bytes of VRF ({vrf_type.spelled()}), but {room}"
        )
    collect = CollectOp(scale)
    to_vrf = ToVrfOp(collect.result, vrf_type)
    collect.location = to_vrf.location = op.location
    return Staged([*ops, collect, to_vrf], to_vrf.result, vrf_type.nbytes)


def _reads_text(reads: int, fetch_size: int) -> str:
    """``"480 reads of 2 bytes"``."""
    return f"{reads} read{'s' * (reads != 1)} of {fetch_size} byte{'s' * (fetch_size != 1)}"


def scale_ops(op: DequantOp, decoded: SSAValue, scale: SSAValue) -> tuple[list[Operation], SSAValue]:
    """The engine ops that apply ``op``'s scales to the f32 stream
    ``decoded``: ``rngd.block_scale`` with ``scale`` (a lockstep stream or a
    VRF tensor), then (nvfp4) ``rngd.tensor_scale`` with its tensor scale,
    then (a ``bf16`` result) the Cast Engine's ``rngd.cast``.  Returns the
    new ops (not inserted, located at ``op``) and the result stream."""
    bscale = BlockScaleOp(decoded, scale, op.dequant_format.block)
    ops: list[Operation] = [bscale]
    result = bscale.result
    if op.gscale is not None:
        tscale = TensorScaleOp(result, op.gscale)
        ops.append(tscale)
        result = tscale.result
    if op.result_element == target.BF16:
        narrow = CastEngineOp(result)
        ops.append(narrow)
        result = narrow.result
    for o in ops:
        o.location = op.location
    return ops, result


class SplitScaling(RewritePattern):
    """One ``fetch.dequant`` → the staged or the lockstep form (module
    docstring).  ``listener`` takes the remarks; ``used`` counts the VRF
    bytes of each function so far (every ``rngd.to_vrf`` in it, updated as
    dequants are staged)."""

    def __init__(self, listener: PatternRewriterListener | None = None):
        super().__init__()
        self.listener = listener
        self.used: dict[Operation, int] = {}

    def _vrf_used(self, fn: Operation | None) -> int:
        if fn is None:
            return 0
        if fn not in self.used:
            self.used[fn] = sum(t.nbytes for _, t in vrf_tensors(fn))
        return self.used[fn]

    def _remark(self, op: DequantOp, fn: Operation | None, lock: FetchOp, why: str) -> None:
        cfg = lock.sequencer_config(cast_out=_scale_cast(op), infer_cast=False)
        reads = math.prod(lock.stream.time) * cfg.words_per_packet
        text = (
            f"fetches its block scales in lockstep with the codes, {_reads_text(reads, cfg.fetch_size)} on the "
            f"{lock.stream.ctx} Fetch Unit beside the codes' reads, instead of staging them once through the sub "
            f"Fetch Unit into the VRF: {why}"
        )
        if self.listener is not None:
            emit_remark(self.listener, op, text)
        if isinstance(fn, FuncOp):
            old = fn.attributes.get(REMARKS_ATTR)
            items = list(old.data) if isinstance(old, ArrayAttr) else []
            fn.attributes[REMARKS_ATTR] = ArrayAttr([*items, StringAttr(f"'{op.name}' op {text}")])

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
        lock = _lockstep_fetch(op, codes, 0 if scale_base is None else scale_base)
        fn = codes.parent_op()
        used = self._vrf_used(fn)
        staged = staged_scale_ops(op, lock, target.VRF_BYTES - used)
        if isinstance(staged, Staged):
            _discard(lock)
            sops, scale = staged.ops, staged.vrf
            if fn is not None:
                self.used[fn] = used + staged.nbytes
        else:
            self._remark(op, fn, lock, staged)
            sops, scale = _widened(op, lock)
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
    a sequencer limit, or whose codes are on the ``sub`` context; reports a
    remark at each dequant whose scales it fetches in lockstep."""

    name = "fetch-split-scaling"
    summary = (
        "fetch.dequant -> table lookup + cast of the codes, the block scales staged once through the sub "
        "Fetch Unit into the VRF (else fetched in lockstep, with a remark), rngd.block_scale, "
        "rngd.tensor_scale and (bf16) rngd.cast"
    )

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        apply_pattern(SplitScaling(listener), op, listener, on=(DequantOp,))
