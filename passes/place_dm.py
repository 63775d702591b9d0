"""``fetch-place-dm``: give every tensor of every kernel a DM byte address.

A **kernel** is a ``func.func`` with at least one ``fetch.fetch``; its
**tensors** are its memref arguments, in argument order, named by their SSA
names (``%w`` → ``w``; an unnamed argument ``i`` is ``arg<i>``, ``i`` counting
every argument of the function).  Each tensor gets its DM byte address
(its ``base``: the address of its layout's element 0), in this order:

1. its argument attribute ``rngd.dm_base = N : i64`` (explicit placement);
2. else the ``base`` of the ``fetch.fetch`` ops that read it and the
   ``scale_base`` of the ``fetch.dequant`` ops whose block scales it holds
   (inferred placement); they must all agree;
3. else the pass places it: in argument order, each at the next multiple of
   :data:`PLACE_ALIGN` (64) bytes after the highest byte already taken by the
   explicit and inferred placements and the arguments placed before it.

A tensor's bytes run from its lowest to its highest address
(:func:`fetchc.target.layout.memref_byte_span`: strided layouts count their
offset and strides, 4-bit elements are two per byte).  A tensor that a
padded ``fetch.fetch`` reads (``pad``, hardware.md §2.0) also has a
**padded extent**: the bytes its padded layout reaches
(:func:`fetchc.target.mask.padded_layout`), before and after its own.  The
pass places (and fits into ``dm-size``) the padded extent, so no tensor it
places is read as another's padding; an explicit or inferred placement whose
padding bytes (the padded extent outside the tensor's own bytes) overlap
another tensor's bytes is an error at the padded fetch naming both.  A placed tensor whose
layout reaches below its base (negative strides) gets a base high enough that
its lowest byte is still past every byte taken, so the pass never places a
tensor over another's bytes.  Explicit and inferred placements may overlap
each other (views of one buffer); no error.

**Scratch buffers** (``rngd.scratch``, the compiler's own tensors, made by
``fetch-route-sub-decode``) are placed after every argument: each at the next
multiple of :data:`PLACE_ALIGN` bytes after the highest byte that any
argument of the kernel takes, in program order, bounded by ``dm-size``.
Explicit placement is not possible for them: a ``dm_base`` on the
``rngd.scratch`` or a ``base`` on a fetch of it that disagrees with that
address is an error (the same address, as a second run of the pass finds
it, is accepted).  Their names are :func:`fetchc.kernel.scratch_names`.

After the pass every memref argument of a kernel carries ``rngd.dm_base``
(``i64``), every ``rngd.scratch`` its ``dm_base`` property, every
``fetch.fetch`` its ``base`` and every ``fetch.dequant`` its ``scale_base``,
equal to its tensor's address.  Functions without a
``fetch.fetch`` are left alone.

Option ``dm-size`` (bytes, default 524288 = 2^19, one slice's DM, at most
that): every tensor must lie in ``[0, dm-size)``.  Placement and addresses
are per slice: the memref types of a kernel on ``rngd.slices`` slices are
one slice's part (ir.md §2a).

Errors (:class:`~fetchc.diagnostics.PassError`, located):

* a ``fetch.fetch`` / ``fetch.dequant`` / ``rngd.commit`` whose memref is
  neither an argument of its function nor a ``rngd.scratch`` of it
  (``memref.alloc``, ``memref.subview``, a block argument of a nested
  region): at that op, saying to pass it in as a function argument;
* two reads of one tensor at different addresses: at the later op, with a
  note at the first;
* a ``base`` / ``scale_base`` that disagrees with the tensor's
  ``rngd.dm_base``: at the fetch or dequant, with a note at the function;
* an ``rngd.dm_base`` that is not a non-negative integer multiple of 8
  (hardware.md §3), or that sits on an argument that is not a memref: at the
  function;
* a tensor that does not fit ``dm-size`` (or whose bytes would start below
  address 0): naming the tensor, its size and the bytes of DM it needs, at
  the function (placed or explicit) or at the op whose address it took; a
  scratch buffer that does not fit: at its ``rngd.scratch``.  When the
  kernel's tensors do not fit one slice's DM, the message says how many
  bytes one slice needs and suggests the ``rngd.slices`` and
  ``rngd.slice_dim`` that would make it fit (:func:`slices_hint`);
* a scratch buffer's ``dm_base``, or the ``base`` of a fetch of it, that is
  not where the pass places it: at that op;
* a memref argument with no DM layout (dynamic shape, ``i1`` elements, an
  affine-map layout other than the identity): at the function;
* padding bytes of a tensor (its padded extent outside its own bytes) that
  overlap another tensor: at the padded fetch, naming both tensors and the
  bytes.

Spec: ir.md §2a, §4; hardware.md §3 (base alignment); seqbin.md MANIFEST.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, MemRefType, ModuleOp, NoneAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriterListener

from fetchc import target
from fetchc.diagnostics import PassError
from fetchc.dialects.fetch import DequantOp, FetchOp
from fetchc.dialects.rngd import CommitOp, ScratchOp
from fetchc.dialects.shared import i64_attr, memref_byte_span_of, memref_layout_of
from fetchc.kernel import DM_BASE_ATTR, int_value, scratch_names, tensor_name
from fetchc.kernel import spelled as _spelled
from fetchc.rewriting import FetchcPass, walk
from fetchc.target.layout import element_bits, layout_byte_span, memref_byte_span
from fetchc.target.mask import pad_problem, padded_layout

__all__ = [
    "DM_BASE_ATTR",
    "DEFAULT_DM_SIZE",
    "PLACE_ALIGN",
    "PlaceDmPass",
    "align_up",
    "memref_byte_span",
    "place_after",
    "place_function",
    "place_scratch",
    "slices_hint",
    "tensor_name",
]

"""The argument attribute holding a tensor's DM byte address (ir.md §2a)."""

DEFAULT_DM_SIZE = target.SLICE_DM_BYTES
"""Default and largest ``dm-size``: one slice's DM, 524288 bytes
(hardware.md §1a)."""

PLACE_ALIGN = 64
"""Placed tensors start at multiples of this many bytes (ir.md §2a)."""


def align_up(x: int, align: int) -> int:
    """The smallest multiple of ``align`` (> 0) that is ``>= x``."""
    return -(-x // align) * align


def place_after(free: int, lo: int, align: int = PLACE_ALIGN) -> int:
    """The base (bytes) of a tensor placed at the first free position: the
    smallest multiple of ``align`` that is ``>= free`` and puts the tensor's
    lowest byte (``base + lo``, ``lo`` from :func:`memref_byte_span`, negative
    when its strides reach below the base) at or after ``free``."""
    return align_up(free + max(0, -lo), align)


def _hex(n: int) -> str:
    return f"0x{n:x}" if n >= 0 else f"-0x{-n:x}"


def _size(n: int) -> str:
    return f"{n} byte" if n == 1 else f"{n} bytes"


# What each memref-using op does with its memref, and the property holding
# the memref's address.
def _memref_use(op: Operation) -> tuple[SSAValue, str | None, str] | None:
    if isinstance(op, FetchOp):
        return op.source, "base", "reads"
    if isinstance(op, DequantOp):
        return op.bscale, "scale_base", "reads its block scales from"
    if isinstance(op, CommitOp):
        return op.dest, None, "commits to"
    return None


def _origin(v: SSAValue) -> tuple[str, Operation | None]:
    """Where a non-argument memref comes from, for the error message."""
    if isinstance(v, OpResult):
        return f"the result of '{v.op.name}'", v.op
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        where = f"'{parent.name}'" if parent is not None else "a detached region"
        return f"an argument of a block inside {where}", parent
    return "not a function argument", None


@dataclass
class _Use:
    op: Operation
    prop: str | None  # "base", "scale_base" or None (commit)
    addr: int | None  # the address the op names, if any


@dataclass
class _Tensor:
    arg: BlockArgument
    lo: int
    end: int
    uses: list[_Use] = field(default_factory=list)
    base: int | None = None
    source: Operation | None = None  # the op whose address was taken (inferred)
    plo: int = 0  # the padded extent (bytes relative to base): what its padded fetches may read
    pend: int = 0
    padder: Operation | None = None  # a padded fetch that reads it (the widest extent)

    def __post_init__(self) -> None:
        self.plo, self.pend = self.lo, self.end

    def add_padding(self, op: Operation) -> None:
        """Widen the padded extent by what the padded fetch ``op`` may read
        (:func:`fetchc.target.mask.padded_layout`; an illegal pad is the
        verifier's to report, and adds nothing)."""
        pad = op.padding if isinstance(op, FetchOp) else None
        mt = self.arg.type
        if pad is None or not isinstance(mt, MemRefType) or self.end == self.lo:
            return
        try:
            strides, offset = memref_layout_of(mt)
            shape = list(mt.get_shape())
            if pad_problem(shape, strides, pad) is not None:
                return
            padded_shape, padded_offset = padded_layout(shape, strides, offset, pad)
            lo, end = layout_byte_span(padded_shape, strides, padded_offset, element_bits(mt.element_type))
        except ValueError:
            return
        if lo < self.plo or end > self.pend:
            self.padder = op
        self.plo, self.pend = min(self.plo, lo), max(self.pend, end)


def _first_prop(t: _Tensor) -> str:
    prop = next(u.prop for u in t.uses if u.op is t.source)
    assert prop is not None  # the source named a property
    return prop


def _prop_text(use: _Use) -> str:
    return f"{use.prop} {use.addr} ({_hex(use.addr)})" if use.addr is not None else ""


def _check_fit(t: _Tensor, dm_size: int, at: Operation, why: str = "", fix: str | None = None) -> None:
    """``t`` (with its base) lies in ``[0, dm_size)``; else a PassError at
    ``at``.  ``why`` says where the address came from (``" (its
    rngd.dm_base)"``); ``fix`` what to do when it does not fit (default:
    raise dm-size, or lower an address the input gave)."""
    assert t.base is not None
    size = t.end - t.lo
    padded = (t.plo, t.pend) != (t.lo, t.end)
    with_pad = f", {_size(t.pend - t.plo)} with the padding its fetches read" if padded else ""
    head = f"placing {_spelled(t.arg)} ({_size(size)}{with_pad}) at {_hex(t.base)}{why}"
    if t.end == t.lo:
        if t.base >= dm_size:
            raise PassError(at, f"{head} is past the end of DM: dm-size is {dm_size}")
        return
    if t.base + t.plo < 0:
        what = "its layout and padding reach" if padded else "its layout reaches"
        fix = (
            f": place it at {align_up(-t.plo, target.BASE_ALIGN)} or higher, or pad less on the left"
            if padded and t.plo < t.lo
            else ""
        )
        raise PassError(
            at,
            f"{head} puts its lowest byte at {_hex(t.base + t.plo)}, below DM address 0 ({what} "
            f"{_size(-t.plo)} below its base){fix}",
        )
    if t.base + t.pend > dm_size:
        if fix is None:
            fix = "lower its address" if why else ""
            if dm_size < DEFAULT_DM_SIZE:
                fix = " or ".join(x for x in ("raise dm-size", fix) if x)
        hint = slices_hint(_func_of(t.arg), dm_size)
        fix = "; ".join(x for x in (fix, hint) if x)
        whole = " (one slice's DM)" if dm_size == DEFAULT_DM_SIZE else ""
        need = t.base + t.pend
        raise PassError(
            at, f"{head} needs {need} bytes of DM, but dm-size is {dm_size}{whole}" + (f": {fix}" if fix else "")
        )


def _func_of(arg: BlockArgument) -> FuncOp | None:
    parent = arg.block.parent_op()
    return parent if isinstance(parent, FuncOp) else None


def _kernel_bytes(func: FuncOp, shapes: dict[int, tuple[int, ...]] | None = None) -> int:
    """Bytes of DM the memref arguments of ``func`` take when placed one
    after the other (:func:`place_after`), with ``shapes`` replacing some
    arguments' shapes.  A memref without a DM layout counts 0."""
    free = 0
    for arg in func.args:
        t = arg.type
        if not isinstance(t, MemRefType):
            continue
        if shapes and arg.index in shapes:
            t = MemRefType(t.element_type, shapes[arg.index], t.layout, t.memory_space)
        try:
            lo, end = memref_byte_span(t)
        except ValueError:
            continue
        if end > lo:
            free = place_after(free, lo) + end
    return free


def slices_hint(func: FuncOp | None, dm_size: int) -> str:
    """The advice of a "does not fit" error (ir.md §2a), or ``""``: how many bytes one slice needs for ``func``'s
    tensors, and the smallest power-of-two factor ``k`` by which splitting
    them over ``k`` times as many slices (``rngd.slices``, at most 512),
    each identity-layout tensor along its ``rngd.slice_dim`` (else dim 0)
    when that dimension divides by ``k``, makes them fit ``dm_size``."""
    from fetchc.kernel import kernel_slices, slice_dim

    if func is None or not func.body.blocks:
        return ""
    need = _kernel_bytes(func)
    if need <= dm_size:
        return ""
    s0 = kernel_slices(func)
    head = f"one slice needs {need} bytes for the tensors of @{func.sym_name.data}"
    k = 2
    while s0 * k <= target.MAX_SLICES:
        shapes: dict[int, tuple[int, ...]] = {}
        dims: dict[int, int] = {}
        for arg in func.args:
            t = arg.type
            if not isinstance(t, MemRefType) or not t.get_shape() or not isinstance(t.layout, NoneAttr):
                continue
            d = slice_dim(func, arg)
            d = 0 if d is None else d
            shape = tuple(t.get_shape())
            if shape[d] % k == 0 and shape[d] > 0:
                shapes[arg.index] = shape[:d] + (shape[d] // k,) + shape[d + 1 :]
                dims[arg.index] = d
        split = _kernel_bytes(func, shapes)
        if split <= dm_size and dims:
            args = func.args
            groups: dict[int, list[str]] = {}
            for i, d in dims.items():
                groups.setdefault(d, []).append(_spelled(args[i]))
            attrs = "; ".join(f"{{rngd.slice_dim = {d} : i64}} on {', '.join(names)}" for d, names in groups.items())
            return (
                f"{head}: split them over slices with {{rngd.slices = {s0 * k} : i64}} on the function and {attrs}, "
                f"each memref's split dimension divided by {k}: one slice then needs {split} bytes (ir.md §2a)"
            )
        k *= 2
    return f"{head}, more than {target.MAX_SLICES} slices hold when each tensor is split along one dimension"


def _set_prop(op: Operation, name: str, value: Attribute) -> None:
    """Set a property, keeping the printed order that the op's builder gives
    (``fetch.fetch``: ``base`` first; ``fetch.dequant``: after ``format``)."""
    if name == "base" and "base" not in op.properties:
        rest = dict(op.properties)
        op.properties.clear()
        op.properties.update({"base": value, **rest})
    else:
        op.properties[name] = value


@dataclass
class _Walk:
    """What one walk over a function body finds: the uses of its memref
    arguments (argument index, use) in op order, the first use of a foreign
    memref, its ``rngd.scratch`` ops (program order) with their uses, and
    whether it has a ``fetch.fetch``."""

    arg_uses: list[tuple[int, _Use]] = field(default_factory=list)
    foreign: tuple[Operation, SSAValue, str] | None = None
    scratches: dict[ScratchOp, list[_Use]] = field(default_factory=dict)
    has_fetch: bool = False


def _collect_uses(func: FuncOp, entry: Block) -> _Walk:
    """Walk ``func`` once, sorting every memref use (:func:`_memref_use`) by
    the memref it names: an argument of ``entry``, a ``rngd.scratch`` of
    ``entry``, or anything else (foreign: only the first is kept)."""
    found = _Walk()
    for op in walk(func):
        if isinstance(op, ScratchOp) and op.parent_block() is entry:
            found.scratches[op] = []
            continue
        use = _memref_use(op)
        if use is None:
            continue
        value, prop, verb = use
        found.has_fetch = found.has_fetch or isinstance(op, FetchOp)
        addr = None
        if prop is not None:
            attr = op.properties.get(prop)
            addr = attr.value.data if isinstance(attr, IntegerAttr) else None
        if isinstance(value, BlockArgument) and value.block is entry:
            found.arg_uses.append((value.index, _Use(op, prop, addr)))
        elif isinstance(value, OpResult) and isinstance(value.op, ScratchOp) and value.op in found.scratches:
            found.scratches[value.op].append(_Use(op, prop, addr))
        elif found.foreign is None:
            found.foreign = (op, value, verb)
    return found


def _reject_foreign(func: FuncOp, foreign: tuple[Operation, SSAValue, str] | None) -> None:
    """A PassError at the first op whose memref is neither an argument of
    ``func`` nor one of its scratch buffers (with a note where the memref is
    defined), if there is one."""
    if foreign is None:
        return
    op, value, verb = foreign
    what, origin = _origin(value)
    raise PassError(
        op,
        f"{verb} a memref that is not an argument of @{func.sym_name.data} (it is {what}); only "
        "function arguments are placed in DM: pass it in as a function argument",
        [(origin, "the memref is defined here")] if origin is not None and origin is not func else [],
    )


def _explicit_base(func: FuncOp, arg: BlockArgument, explicit: Attribute) -> int:
    """The DM byte address an ``rngd.dm_base`` argument attribute gives:
    a non-negative integer multiple of ``BASE_ALIGN`` (hardware.md §3), else
    a PassError at ``func``."""
    b = int_value(explicit)
    if b is None:  # a boolean (i1) too: shown as written, never as xDSL's -1
        raise PassError(
            func,
            f"{DM_BASE_ATTR} of {_spelled(arg)} must be an integer DM byte address "
            f"(e.g. {{{DM_BASE_ATTR} = 4096 : i64}}), not {explicit}",
        )
    if b < 0 or b % target.BASE_ALIGN:
        raise PassError(
            func,
            f"{DM_BASE_ATTR} = {b} of {_spelled(arg)} is not a DM byte address that is a multiple of "
            f"{target.BASE_ALIGN} (a fetch's base is {target.BASE_ALIGN}-byte aligned, hardware.md §3)",
        )
    return b


def _arg_tensors(
    func: FuncOp, args: list[BlockArgument], old_attrs: list[DictionaryAttr], arg_uses: list[tuple[int, _Use]]
) -> dict[int, _Tensor]:
    """The tensors of ``func`` by argument index: every memref argument with
    its byte span, its explicit base (``rngd.dm_base``, if any) and its uses.
    Raises PassError at ``func`` for an ``rngd.dm_base`` on a non-memref
    argument, a bad ``rngd.dm_base`` or a memref with no DM layout."""
    tensors: dict[int, _Tensor] = {}
    for i, arg in enumerate(args):
        attrs = old_attrs[i].data if i < len(old_attrs) else {}
        explicit = attrs.get(DM_BASE_ATTR)
        if not isinstance(arg.type, MemRefType):
            if explicit is not None:
                raise PassError(
                    func,
                    f"{DM_BASE_ATTR} on {_spelled(arg)}, which is {arg.type}, not a memref: only memref "
                    "arguments live in DM",
                )
            continue
        try:
            lo, end = memref_byte_span_of(arg.type)
        except ValueError as e:
            raise PassError(func, f"cannot place {_spelled(arg)} ({arg.type}) in DM: {e}") from None
        t = _Tensor(arg, lo, end)
        if explicit is not None:
            t.base = _explicit_base(func, arg, explicit)
        tensors[i] = t
    for i, use in arg_uses:
        tensors[i].uses.append(use)
        tensors[i].add_padding(use.op)
    return tensors


def _check_explicit(func: FuncOp, t: _Tensor, dm_size: int) -> None:
    """An explicitly placed ``t`` agrees with every address its ops name
    (else a PassError at the op, with a note at ``func``) and fits DM."""
    assert t.base is not None
    for u in t.uses:
        if u.addr is not None and u.addr != t.base:
            raise PassError(
                u.op,
                f"{_prop_text(u)} disagrees with {_spelled(t.arg)}'s {DM_BASE_ATTR} = {t.base} "
                f"({_hex(t.base)}): a tensor has one DM address; drop the {u.prop} or make them agree",
                [(func, f"{_spelled(t.arg)} is placed at {_hex(t.base)} by its {DM_BASE_ATTR} attribute")],
            )
    _check_fit(t, dm_size, func, f" (its {DM_BASE_ATTR})")


def _infer_base(t: _Tensor, dm_size: int) -> None:
    """Give ``t`` (not explicitly placed) the first address its ops name,
    if any (setting ``t.base`` and ``t.source``); every later address must
    agree (else a PassError at the later op, with a note at the first) and
    the tensor must fit DM."""
    for u in t.uses:
        if u.addr is None:
            continue
        if t.source is None:
            t.base, t.source = u.addr, u.op
        elif u.addr != t.base:
            first = next(f for f in t.uses if f.op is t.source)
            assert t.base is not None  # set together with t.source
            raise PassError(
                u.op,
                f"{_prop_text(u)} disagrees with the first address given for {_spelled(t.arg)}, "
                f"{_prop_text(first)} on '{first.op.name}': a tensor has one DM address; use the same "
                f"address everywhere, or drop it and let fetch-place-dm place the tensor",
                [(first.op, f"{_spelled(t.arg)} is first read at {_hex(t.base)} here")],
            )
    if t.source is not None:
        _check_fit(t, dm_size, t.source, f" (the {_first_prop(t)} of this op)")


def _check_addresses(func: FuncOp, tensors: dict[int, _Tensor], dm_size: int) -> None:
    """Explicit placements agree with every address an op names; otherwise
    the ops' addresses agree with each other (the first one wins)."""
    for t in tensors.values():
        if t.base is not None:
            _check_explicit(func, t, dm_size)
        else:
            _infer_base(t, dm_size)


def _place_rest(func: FuncOp, tensors: dict[int, _Tensor], dm_size: int) -> None:
    """Place the tensors without an address after the highest byte taken,
    in argument order (:func:`place_after`); a PassError at ``func`` for one
    that does not fit ``dm_size``."""
    taken = [t.base + t.pend for t in tensors.values() if t.base is not None and t.end > t.lo]
    free = max(taken, default=0)
    for t in tensors.values():
        if t.base is not None:
            continue
        t.base = place_after(free, t.plo)
        fix = (
            f"fetch-place-dm places tensors after the highest byte that the kernel's own addresses take, "
            f"{_hex(max(taken) - 1)}; give {_spelled(t.arg)} an explicit {DM_BASE_ATTR}"
            + (" or raise dm-size" if dm_size < DEFAULT_DM_SIZE else "")
            if taken
            else None
        )
        _check_fit(t, dm_size, func, fix=fix)
        if t.end > t.lo:
            free = t.base + t.pend


def _check_padding_overlaps(tensors: dict[int, _Tensor]) -> None:
    """No tensor's padding bytes (its padded extent outside its own bytes)
    overlap another tensor's bytes: a padded fetch would read that tensor as
    padding.  A PassError at the padded fetch, naming both."""
    placed = [t for t in tensors.values() if t.base is not None and t.end > t.lo]
    for t in placed:
        if t.padder is None:
            continue
        assert t.base is not None
        sides = [(t.base + t.plo, t.base + t.lo, "before"), (t.base + t.end, t.base + t.pend, "after")]
        for u in placed:
            if u is t:
                continue
            assert u.base is not None
            for lo, end, side in sides:
                a, b = max(lo, u.base + u.lo), min(end, u.base + u.end)
                if a < b:
                    fn = _func_of(t.arg)
                    raise PassError(
                        t.padder,
                        f"reads padding {side} {_spelled(t.arg)}, DM bytes {_hex(lo)} to {_hex(end - 1)}, which "
                        f"overlap {_spelled(u.arg)} (bytes {_hex(u.base + u.lo)} to {_hex(u.base + u.end - 1)}): a "
                        f"padded fetch would read that tensor as padding; place {_spelled(u.arg)} outside "
                        f"{_spelled(t.arg)}'s padded extent ({_hex(t.base + t.plo)} to {_hex(t.base + t.pend - 1)}), "
                        "or let fetch-place-dm place it",
                        [(fn, f"{_spelled(t.arg)} and {_spelled(u.arg)} are arguments of this kernel")]
                        if fn is not None
                        else [],
                    )


def _set_addresses(uses: list[_Use], base: int, listener: PatternRewriterListener | None) -> None:
    """Set the address property of every op in ``uses`` that has one to
    ``base``, telling ``listener`` of each op that changes."""
    for u in uses:
        if u.prop is not None and u.op.properties.get(u.prop) != i64_attr(base):
            _set_prop(u.op, u.prop, i64_attr(base))
            if listener is not None:
                listener.handle_operation_modification(u.op)


def _write_back(
    func: FuncOp,
    old_attrs: list[DictionaryAttr],
    tensors: dict[int, _Tensor],
    bases: dict[int, int],
    scratches: dict[ScratchOp, list[_Use]],
    scratch_bases: dict[ScratchOp, int],
    listener: PatternRewriterListener | None,
) -> None:
    """Write the placement into the IR (``bases``: each tensor's, by argument
    index): ``rngd.dm_base`` on every memref
    argument of ``func`` (whose other argument attributes are kept), the
    address on every op that names one, ``dm_base`` on every scratch buffer;
    ``listener`` is told of ``func`` and of every op that changes."""
    new_attrs = []
    for i in range(len(func.args)):
        attrs: dict[str, Attribute] = dict(old_attrs[i].data) if i < len(old_attrs) else {}
        if i in tensors:
            attrs[DM_BASE_ATTR] = i64_attr(bases[i])
        new_attrs.append(DictionaryAttr(attrs))
    func.arg_attrs = ArrayAttr(new_attrs)
    if listener is not None:
        listener.handle_operation_modification(func)
    for i, t in tensors.items():
        _set_addresses(t.uses, bases[i], listener)
    for sop, base in scratch_bases.items():
        if sop.properties.get("dm_base") != i64_attr(base):
            sop.properties["dm_base"] = i64_attr(base)
            if listener is not None:
                listener.handle_operation_modification(sop)
        _set_addresses(scratches[sop], base, listener)


def place_function(
    func: FuncOp, dm_size: int = DEFAULT_DM_SIZE, listener: PatternRewriterListener | None = None
) -> dict[int, int] | None:
    """Place the tensors of ``func`` if it is a kernel (ir.md §2a) and write
    the addresses into the IR: ``rngd.dm_base`` on every memref argument,
    ``base`` on every ``fetch.fetch``, ``scale_base`` on every
    ``fetch.dequant``.  Returns ``{argument index: base in bytes}``, or
    ``None`` (IR untouched) when ``func`` has no ``fetch.fetch``.  One walk
    over the function body.  Raises :class:`PassError` as the module
    docstring lists, before changing the IR.  ``listener`` is told of every
    op whose properties change (and of ``func``)."""
    entry = func.body.blocks.first
    if entry is None:
        return None
    found = _collect_uses(func, entry)
    if not found.has_fetch:
        return None
    _reject_foreign(func, found.foreign)
    old_attrs = list(func.arg_attrs.data) if func.arg_attrs is not None else []
    tensors = _arg_tensors(func, list(entry.args), old_attrs, found.arg_uses)
    _check_addresses(func, tensors, dm_size)
    _place_rest(func, tensors, dm_size)
    _check_padding_overlaps(tensors)
    bases = {i: t.base for i, t in tensors.items() if t.base is not None}
    assert len(bases) == len(tensors)  # _place_rest placed every tensor
    # Scratch buffers after every argument (and its padded extent), in
    # program order; check them all before touching the IR.
    free = max((bases[i] + t.pend for i, t in tensors.items() if t.end > t.lo), default=0)
    scratch_bases = place_scratch(func, found.scratches, free, dm_size)
    _write_back(func, old_attrs, tensors, bases, found.scratches, scratch_bases, listener)
    return bases


def place_scratch(
    func: FuncOp, scratches: dict[ScratchOp, list[_Use]], free: int, dm_size: int = DEFAULT_DM_SIZE
) -> dict[ScratchOp, int]:
    """The DM byte address of each scratch buffer of ``func`` (``scratches``:
    its ``rngd.scratch`` ops in program order, each with the ops that name an
    address for it): in order, each at the next multiple of
    :data:`PLACE_ALIGN` at or after ``free`` (bytes: one past the highest
    byte any argument takes) and after the previous one.  Does not change the
    IR.  Raises :class:`PassError` at the ``rngd.scratch`` for a buffer that
    does not fit ``dm_size`` or whose ``dm_base`` disagrees, and at a fetch
    whose ``base`` disagrees (scratch buffers cannot be placed
    explicitly)."""
    names = scratch_names(func)
    out: dict[ScratchOp, int] = {}
    after_args = free
    for sop, uses in scratches.items():
        name = names.get(sop, "scratch")
        try:
            lo, end = memref_byte_span_of(sop.memref)
        except ValueError as e:
            raise PassError(sop, f"cannot place scratch buffer {name} ({sop.memref}) in DM: {e}") from None
        base = place_after(free, lo)
        head = f"placing scratch buffer {name} ({_size(end - lo)}) at {_hex(base)}"
        why = (
            f" (scratch buffers go after every argument of @{func.sym_name.data}"
            + (f", whose highest byte is {_hex(after_args - 1)}" if after_args else "")
            + "; raise dm-size)"
        )
        if end > lo and base + end > dm_size:
            raise PassError(sop, f"{head} needs {base + end} bytes of DM, but dm-size is {dm_size}{why}")
        if end == lo and base >= dm_size:
            raise PassError(sop, f"{head} is past the end of DM: dm-size is {dm_size}{why}")
        fixed = (
            "scratch buffers are the compiler's own tensors, placed by fetch-place-dm after every argument of "
            "the kernel; explicit placement is not possible for them"
        )
        if sop.base_value is not None and sop.base_value != base:
            raise PassError(
                sop,
                f"dm_base = {sop.base_value} ({_hex(sop.base_value)}) of scratch buffer {name} is not where "
                f"fetch-place-dm places it, {_hex(base)}: {fixed}; drop the dm_base",
            )
        for u in uses:
            if u.addr is not None and u.addr != base:
                raise PassError(
                    u.op,
                    f"{_prop_text(u)} names an address for scratch buffer {name}, which fetch-place-dm places at "
                    f"{_hex(base)}: {fixed}; drop the {u.prop}",
                    [(sop, f"scratch buffer {name} is defined here")],
                )
        out[sop] = base
        if end > lo:
            free = base + end
    return out


@dataclass(frozen=True)
class PlaceDmPass(FetchcPass):
    """``fetch-place-dm{dm-size=N}`` (ir.md §2a, §4): place every kernel's
    tensors in DM (see the module docstring).  ``dm_size``: bytes of DM,
    ``1 <= dm_size <= 2^19`` (``ValueError`` otherwise, reported as an
    invalid pipeline).  Raises :class:`PassError` for placement errors."""

    name = "fetch-place-dm"
    summary = "give every kernel tensor (and scratch buffer) its DM byte address and check the explicit ones"

    dm_size: int = field(
        default=DEFAULT_DM_SIZE, metadata={"help": "bytes of one slice's DM, which each kernel's tensors must fit in"}
    )

    def __post_init__(self) -> None:
        if (
            isinstance(self.dm_size, bool)
            or not isinstance(self.dm_size, int)
            or not 1 <= self.dm_size <= DEFAULT_DM_SIZE
        ):
            raise ValueError(
                f"dm-size must be a number of bytes from 1 to 2^19 = {DEFAULT_DM_SIZE} (one slice's DM), not "
                f"{self.dm_size}"
            )

    def apply_tracked(self, ctx: Context, op: ModuleOp, listener: PatternRewriterListener) -> None:
        funcs = [o for o in walk(op) if isinstance(o, FuncOp)]
        for f in funcs:
            place_function(f, self.dm_size, listener)
