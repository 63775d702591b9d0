"""Masking, the Fetch Adapter's first stage (hardware.md §2.0): padded
fetches, the mask configuration, and how one becomes the other.

One home for every rule of masking; the ``fetch`` verifiers, ``fetch-place-dm``,
``fetch-to-seq``, the ``fetch_seq.program`` verifier and the golden model
call these functions.

The data model
--------------

* :class:`Padding` - what a ``fetch.fetch`` declares (``pad =
  #fetch.pad<dim = 1, left = 2, size = 96>``): memref index ``dim`` is read
  over ``[-left, size - left)`` instead of ``[0, n)``, ``n`` (the memref's
  size there) being the **valid count**.  A slot whose index along ``dim``
  falls outside ``[0, n)`` is a **padding slot**.
* :class:`StreamPadding` - the same padding seen from the stream, as
  ``seq.bin``'s MANIFEST gives it (``pad``): the stream dims (time then
  packet, outermost first) whose row-major composite index ``i`` walks the
  padded axis, the left pad and the valid count; slot ``i`` holds data when
  ``left <= i < left + valid``.
* :class:`FetchMaskConfig` - the hardware's configuration (seqbin.md MASKS):
  ``last_axis``, ``valid_count_dim`` (:class:`ValidCountDim`), the
  ``iterator`` entry, ``left_pad`` and ``rightmost_valid_count`` (eight
  **valid** counts).  Entry indices count the final sequencer entries
  outermost first, 0 = outermost, as ``limits`` does.

The semantics (:func:`zeroed_slots`)
------------------------------------

The mask acts per packet.  For the loop nest ``(n_k : s_k)``, ``k = 0``
outermost, and packet size ``p``, a packet is in the *last* iteration of
entry ``a`` when ``i_a = n_a - 1`` at its **last** element, in the
*second-to-last* when ``i_a = n_a - 2`` there, and in the *first* iteration
when ``i_a = 0`` at its **first** element (an entry lying wholly inside the
packet: every packet is in its last and in its first iteration).  The valid
count ``v`` of a packet is ``counts[0]`` in the last iteration of
``last_axis`` and the whole packet otherwise (``RIGHTMOST``); ``counts[0]``
in the last, ``counts[1]`` in the second-to-last iteration, else the whole
packet (``RIGHTMOST_AND_SECOND_RIGHTMOST``); ``counts[i_b]``, ``i_b`` the
iterator entry's counter at the packet's last element (``ITERATOR``).
Slots at packet offset ``>= v`` are zeroed, and, in packets in the first
iteration of ``last_axis`` (of the iterator entry for ``ITERATOR``), the
slots at offset ``< left_pad``.

Units: element counts and indices are **elements** of the DM element type;
addresses and extents **bytes** (4-bit elements two per byte).

Spec: hardware.md §2.0, §3; ir.md §2 (``fetch.mask``), §3 rules 8 and 11;
seqbin.md 1.3 (MASKS, the MANIFEST's ``pad``).  Numpy-free, but
:func:`zeroed_slots` and :func:`padding_slots` (the golden model's) import
numpy on use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from fetchc.target.facts import MASK_CELLS, ElementType, mask_count_cap

if TYPE_CHECKING:
    import numpy as np

    from fetchc.target.record import Labels

__all__ = [
    "ValidCountDim",
    "Padding",
    "StreamPadding",
    "FetchMaskConfig",
    "MaskError",
    "padded_layout",
    "pad_problem",
    "stream_padding",
    "derive_mask",
    "check_mask_config",
    "check_stream_padding",
    "zeroed_slots",
    "padding_slots",
    "slots_problem",
]

I64_MAX = (1 << 63) - 1


class ValidCountDim(IntEnum):
    """``valid_count_dim`` (seqbin.md MASKS offset 8): which counts a packet
    uses (module docstring)."""

    RIGHTMOST = 0
    RIGHTMOST_AND_SECOND_RIGHTMOST = 1
    ITERATOR = 2

    @property
    def spelling(self) -> str:
        """The IR's keyword: ``rightmost``, ``rightmost_and_second_rightmost``,
        ``iterator``."""
        return self.name.lower()


@dataclass(frozen=True)
class Padding:
    """A padded axis of a ``fetch.fetch`` (ir.md §2): memref index ``dim``
    is read over ``[-left, size - left)``; ``size`` and ``left`` in
    elements.  The valid count is the memref's size along ``dim``."""

    dim: int
    size: int
    left: int = 0

    def text(self) -> str:
        """The IR spelling, ``#fetch.pad<dim = 1, left = 2, size = 96>``."""
        left = f", left = {self.left}" if self.left else ""
        return f"#fetch.pad<dim = {self.dim}{left}, size = {self.size}>"


@dataclass(frozen=True)
class StreamPadding:
    """The padding of a stream (seqbin.md MANIFEST ``pad``): ``dims``, the
    stream dims (indices into time then packet, outermost first, each of size
    > 1) whose row-major composite index ``i`` walks the padded axis; a slot
    holds data when ``left <= i < left + valid``, else padding."""

    dims: tuple[int, ...]
    left: int
    valid: int


@dataclass(frozen=True)
class FetchMaskConfig:
    """One program's mask configuration (hardware.md §2.0, seqbin.md MASKS):
    ``last_axis`` and ``iterator`` are sequencer entries (0 = outermost;
    ``iterator`` is 0 unless ``valid_count_dim`` is ``ITERATOR``, and fetchc
    writes ``last_axis = iterator`` then), ``left_pad`` and the eight
    ``rightmost_valid_count`` are elements (valid counts; unused cells 0).
    ``RIGHTMOST_AND_SECOND_RIGHTMOST``: ``[0]`` the last cell, ``[1]`` the
    one before it."""

    last_axis: int
    valid_count_dim: ValidCountDim
    iterator: int
    left_pad: int
    rightmost_valid_count: tuple[int, ...]

    def text(self) -> str:
        """A one-line description for diagnostics and ``dis``."""
        kind = self.valid_count_dim.spelling
        if self.valid_count_dim == ValidCountDim.ITERATOR:
            kind += f" over entry {self.iterator}"
        counts = ", ".join(map(str, self.rightmost_valid_count))
        return f"last_axis {self.last_axis}, {kind}, valid [{counts}], left_pad {self.left_pad}"


class MaskError(Exception):
    """A padding that is illegal or that no mask configuration expresses;
    ``message`` is one sentence with the numbers and the fix."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------
# Where padding may be read (ir.md §3 rule 8)
# --------------------------------------------------------------------------


def padded_layout(shape: Sequence[int], strides: Sequence[int], offset: int, pad: Padding) -> tuple[list[int], int]:
    """The layout whose indices span what a padded fetch may read: ``shape``
    with ``size`` along ``pad.dim``, the offset moved back by ``left`` steps
    of that dim (elements).  :func:`fetchc.target.layout.layout_byte_span` of
    it is the tensor's **padded extent**, which ``fetch-place-dm``
    reserves."""
    padded = list(shape)
    padded[pad.dim] = pad.size
    return padded, offset - pad.left * strides[pad.dim]


def _dim_text(k: int, nt: int) -> str:
    return f"time dim {k}" if k < nt else f"packet dim {k - nt}"


def pad_problem(shape: Sequence[int], strides: Sequence[int], pad: Padding) -> str | None:
    """Why ``pad`` may not be read from a memref of ``shape`` and element
    ``strides`` (ir.md §3 rule 8), as the rest of a sentence, or ``None``:
    ``dim`` a memref dim, ``left >= 0``, ``size`` an i64 holding the valid
    count plus the left pad and more (some padding), a positive stride along
    ``dim``, and the padded row inside the layout pitch: for every other dim
    ``r`` of size > 1 whose stride is at least ``dim``'s (a pitch),
    ``(n + right) * stride <= |stride_r|`` and ``(left + n) * stride <=
    |stride_r|``, so a padded read never reaches another row's data (the
    outermost dim has no pitch: its padding lies before and after the
    tensor, in its padded extent)."""
    rank = len(shape)
    if not 0 <= pad.dim < rank:
        return f"pad dim {pad.dim} is not a dimension of the memref (rank {rank})"
    if not 0 <= pad.left <= I64_MAX or not 1 <= pad.size <= I64_MAX:
        return f"pad left {pad.left} and size {pad.size} must be i64 counts of elements (left >= 0, size >= 1)"
    n = shape[pad.dim]
    if pad.size < pad.left + n:
        return (
            f"pad size {pad.size} with left {pad.left} leaves no room for the {n} valid elements of dim {pad.dim}: "
            f"size must be at least left + {n} = {pad.left + n}"
        )
    if pad.size == n:
        return f"pad size {pad.size} equals the {n} valid elements of dim {pad.dim}: it declares no padding; drop it"
    s = strides[pad.dim]
    if s <= 0:
        return f"the padded dim {pad.dim} has stride {s}; padding is read along a positive stride"
    right = pad.size - pad.left - n
    pitches = [(abs(strides[r]), r) for r in range(rank) if r != pad.dim and shape[r] > 1 and abs(strides[r]) >= s]
    if pitches:
        pitch, r = min(pitches)
        room = pitch // s
        for side, amount in (("right", right), ("left", pad.left)):
            if (n + amount) * s > pitch:
                return (
                    f"pad size {pad.size} reads {amount} element{'s' * (amount != 1)} {side} of dim {pad.dim}'s "
                    f"{n} valid ones, past the layout pitch: dim {r}'s stride is {pitch} elements, so a row holds "
                    f"{room} elements of dim {pad.dim} (stride {s}) and the {side} pad may be at most {room - n}; "
                    f"pad less, or lay the tensor out with a wider pitch (strided<[...]>)"
                )
    return None


# --------------------------------------------------------------------------
# How the stream walks the padded axis
# --------------------------------------------------------------------------


def stream_padding(
    coeffs: Sequence[int], const: int, sizes: Sequence[int], time_rank: int, pad: Padding, valid: int
) -> StreamPadding:
    """The :class:`StreamPadding` of a padded fetch whose map sends stream
    dims of ``sizes`` (time then packet) to memref index ``pad.dim`` with
    ``coeffs`` and ``const`` (ir.md §2): the dims of size > 1 with a non-zero
    coefficient must index the padded axis as their row-major composite minus
    ``left``, covering ``[-left, size - left)`` whole, once, in order.
    Raises :class:`MaskError` otherwise (ir.md §3 rule 8)."""
    dims = [k for k, c in enumerate(coeffs) if c != 0 and sizes[k] > 1]
    names = ", ".join(_dim_text(k, time_rank) for k in dims) or "no stream dim"
    want: list[int] = []
    w = 1
    for k in reversed(dims):
        want.append(w)
        w *= sizes[k]
    want.reverse()
    got = [coeffs[k] for k in dims]
    covered = math.prod(sizes[k] for k in dims)
    how = (
        "a padded fetch walks its padded axis whole, once and in order: the stream dims that index it must be "
        "its row-major composite index minus the left pad"
    )
    if got != want:
        return _raise(
            f"{how}; {names} index dim {pad.dim} with coefficients {got}, but as a row-major composite they need {want}"
        )
    if covered != pad.size:
        return _raise(f"{how}; {names} cover {covered} indices of dim {pad.dim}, but the pad's size is {pad.size}")
    if const != -pad.left:
        return _raise(
            f"{how}; the map starts dim {pad.dim} at index {const}, but the pad's reads start at "
            f"{-pad.left} (the map's constant there must be -left = {-pad.left})"
        )
    return StreamPadding(tuple(dims), pad.left, valid)


def _raise(message: str) -> StreamPadding:
    raise MaskError(message)


def check_stream_padding(pad: StreamPadding, time: Sequence[int], packet: Sequence[int]) -> str | None:
    """Why ``pad`` is not a padding of a stream of ``time`` x ``packet``
    (seqbin.md MANIFEST ``pad``), or ``None``: dims strictly increasing,
    inside the stream, of size > 1, a left pad and valid count that are
    non-negative and fit the composite's range with some padding."""
    sizes = [*time, *packet]
    if not pad.dims or list(pad.dims) != sorted(set(pad.dims)):
        return f"pad dims {list(pad.dims)} must be distinct stream dims, outermost first"
    if pad.dims[0] < 0 or pad.dims[-1] >= len(sizes):
        return f"pad dims {list(pad.dims)} are not dims of a stream of {len(sizes)} dims"
    if any(sizes[k] < 2 for k in pad.dims):
        return f"pad dims {list(pad.dims)} include a dim of size 1"
    total = math.prod(sizes[k] for k in pad.dims)
    if pad.left < 0 or pad.valid < 1 or pad.left + pad.valid > total or pad.left + pad.valid == total == pad.valid:
        return (
            f"pad left {pad.left} and valid {pad.valid} do not fit the {total} positions its dims walk with some "
            "padding"
        )
    return None


# --------------------------------------------------------------------------
# The configuration (hardware.md §2.0)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cells:
    """The padded axis as the mask sees it: ``cells`` cells (one per value of
    the time dims that walk it, row-major) of ``z`` padded-axis positions
    each, every position ``q`` consecutive packet slots; ``need`` the zeroed
    head and the valid end of each cell, in slots (``(0, p)``: nothing to
    zero)."""

    cells: int
    z: int
    q: int
    sizes: tuple[int, ...]  # the time dims that walk the axis, outermost first
    entries: tuple[int, ...]  # their sequencer entries
    packet_entries: tuple[int, ...]  # the packet dims that walk it: their entries
    left: int
    valid: int

    @property
    def p(self) -> int:
        return self.z * self.q

    def need(self, c: int) -> tuple[int, int]:
        z = self.z
        head = min(max(self.left - c * z, 0), z)
        end = min(max(self.left + self.valid - c * z, 0), z)
        return head * self.q, end * self.q

    def counter(self, c: int, j: int) -> int:
        """Time dim ``j``'s counter in cell ``c``."""
        inner = math.prod(self.sizes[j + 1 :])
        return (c // inner) % self.sizes[j]


def _zero_set(head: int, end: int, p: int) -> tuple[int, int]:
    """A canonical form of the slots ``[0, head) + [end, p)``."""
    head, end = min(head, p), max(min(end, p), 0)
    return (0, 0) if head >= end else (head, end)


def _cells(pad: StreamPadding, time: Sequence[int], packet: Sequence[int], entries: Mapping[int, int]) -> _Cells:
    nt = len(time)
    sizes = [*time, *packet]
    pad_t = [k for k in pad.dims if k < nt]
    pad_p = [k for k in pad.dims if k >= nt]
    others = [k for k in range(nt, len(sizes)) if k not in pad.dims and sizes[k] > 1]
    if pad_p and others and min(others) < max(pad_p):
        k = min(others)
        raise MaskError(
            f"the padding slots are not a head or tail of each packet: {_dim_text(k, nt)} (size {sizes[k]}) lies "
            f"outside {', '.join(_dim_text(d, nt) for d in pad_p)}, which walk the padded axis, so each packet "
            "holds several runs of padding; make the padded axis the outermost packet dims (only dims that do not "
            "walk it may follow)"
        )
    return _Cells(
        cells=math.prod(sizes[k] for k in pad_t),
        z=math.prod(sizes[k] for k in pad_p),
        q=math.prod(sizes[k] for k in others),
        sizes=tuple(sizes[k] for k in pad_t),
        entries=tuple(entries[k] for k in pad_t),
        packet_entries=tuple(entries[k] for k in pad_p),
        left=pad.left,
        valid=pad.valid,
    )


_MAX_CELLS = 1 << 16


def _behaves(cells: _Cells, cfg: FetchMaskConfig, j: int | None, side: str = "both") -> bool:
    """Whether ``cfg`` zeroes exactly the padding of every cell; ``j`` the
    time dim (index into ``cells.sizes``) whose entry the configuration
    names, or ``None`` for an entry inside the packet.  ``side``: ``"right"``
    or ``"left"`` compares only the tails or only the heads."""
    p, counts = cells.p, cfg.rightmost_valid_count
    kind = cfg.valid_count_dim
    for c in range(cells.cells):
        t = 0 if j is None else cells.counter(c, j)
        n = 1 if j is None else cells.sizes[j]
        last, first = t == n - 1, t == 0
        if kind == ValidCountDim.ITERATOR:
            end = counts[t]
        elif last:
            end = counts[0]
        elif kind == ValidCountDim.RIGHTMOST_AND_SECOND_RIGHTMOST and t == n - 2:
            end = counts[1]
        else:
            end = p
        head = cfg.left_pad if first else 0
        need_head, need_end = cells.need(c)
        if side == "right":
            head = need_head = 0
        elif side == "left":
            end = need_end = p
        if _zero_set(head, end, p) != _zero_set(need_head, need_end, p):
            return False
    return True


def _config(kind: ValidCountDim, axis: int, left: int, counts: Sequence[int]) -> FetchMaskConfig:
    full = tuple(counts) + (0,) * (MASK_CELLS - len(counts))
    return FetchMaskConfig(axis, kind, axis if kind == ValidCountDim.ITERATOR else 0, left, full)


def _candidates(cells: _Cells):
    """``(config, j)`` in fetchc's order of preference (the book's): one
    cell carries the right pad (``RIGHTMOST``), then one count per iteration
    of a loop of at most 8 (``ITERATOR``), then the last two cells
    (``RIGHTMOST_AND_SECOND_RIGHTMOST``); time dims outermost first, then the
    packet's own entry.  A cell that is padding whole may be zeroed by a
    valid count of 0 or by the left pad: each kind is tried both ways."""
    last_cell = cells.cells - 1

    def end(c: int, whole_as_count: bool) -> int:
        head, valid_end = cells.need(c)
        return 0 if whole_as_count and head >= valid_end else valid_end

    def variants():
        for whole in (False, True):
            first_head, first_end = cells.need(0)
            lefts = [first_head] if not (whole and first_head >= first_end) else [0, first_head]
            for left in dict.fromkeys(lefts):
                yield whole, left

    for whole, left in variants():
        for j, axis in enumerate(cells.entries):
            yield _config(ValidCountDim.RIGHTMOST, axis, left, [end(last_cell, whole)]), j
        if cells.packet_entries:
            yield _config(ValidCountDim.RIGHTMOST, cells.packet_entries[-1], left, [end(0, whole)]), None
    for whole, left in variants():
        for j, axis in enumerate(cells.entries):
            n = cells.sizes[j]
            if n <= MASK_CELLS:
                inner = math.prod(cells.sizes[j + 1 :])
                yield _config(ValidCountDim.ITERATOR, axis, left, [end(i * inner, whole) for i in range(n)]), j
    for whole, left in variants():
        for j, axis in enumerate(cells.entries):
            inner = math.prod(cells.sizes[j + 1 :])
            if cells.sizes[j] >= 2:
                counts = [end(last_cell, whole), end(last_cell - inner, whole)]
                yield _config(ValidCountDim.RIGHTMOST_AND_SECOND_RIGHTMOST, axis, left, counts), j


def derive_mask(
    pad: StreamPadding,
    time: Sequence[int],
    packet: Sequence[int],
    entries: Mapping[int, int],
    elem: ElementType,
) -> FetchMaskConfig:
    """The mask configuration that zeroes exactly the padding slots of a
    stream of ``time`` x ``packet`` with padding ``pad``, read from DM as
    ``elem``.  ``entries``: the final sequencer entry (0 = outermost) of each
    stream dim in ``pad.dims`` (the sequencer keeps them unmerged:
    :func:`fetchc.target.sequencer.derive` with ``keep``).

    Tries, in order, ``RIGHTMOST`` (one cell carries the right pad),
    ``ITERATOR`` (a loop of at most 8 iterations, one count each),
    ``RIGHTMOST_AND_SECOND_RIGHTMOST`` (the last two cells), checking each
    against every cell (hardware.md §2.0, module docstring).  Raises
    :class:`MaskError` naming the reason and the numbers: padding slots that
    are not a head or tail of each packet, a count or left pad over the cap
    (:func:`fetchc.target.mask_count_cap`), more cells than a configuration
    reaches, padding walked by several time dims that no single entry
    selects."""
    cells = _cells(pad, time, packet, entries)
    nt = len(time)
    if cells.cells > _MAX_CELLS:
        raise MaskError(
            f"the padded axis is {cells.cells} packets long; fetchc masks an axis of at most {_MAX_CELLS} packets"
        )
    cap = mask_count_cap(elem)
    over: str | None = None
    for cfg, j in _candidates(cells):
        if not _behaves(cells, cfg, j):
            continue
        problem = _cap_problem(cfg, cap, elem)
        if problem is None:
            return cfg
        over = over or problem
    if over is not None:
        raise MaskError(over)
    raise MaskError(_no_config(cells, pad, nt))


def _cap_problem(cfg: FetchMaskConfig, cap: int, elem: ElementType) -> str | None:
    for i, v in enumerate(cfg.rightmost_valid_count):
        if v > cap:
            return (
                f"the mask needs a valid count of {v} (cell {i}, {cfg.valid_count_dim.spelling}), over the cap of "
                f"{cap} for {elem} (the mask reaches 128 bytes); use smaller packets, so that each packet's valid "
                f"part is at most {cap} elements"
            )
    if cfg.left_pad > cap:
        return f"the left pad of {cfg.left_pad} elements is over the mask's cap of {cap} for {elem}"
    return None


def _no_config(cells: _Cells, pad: StreamPadding, nt: int) -> str:
    dims = ", ".join(_dim_text(k, nt) for k in pad.dims)
    right = [c for c in range(cells.cells) if cells.need(c)[1] < cells.p]
    left = [c for c in range(cells.cells) if cells.need(c)[0] > 0]
    if len(cells.sizes) > 1:
        return (
            f"the padded axis is walked by {len(cells.sizes)} time dims ({dims}), and no single sequencer entry "
            f"selects its padded cells: the mask zeroes in the last (or first) iteration of one loop; walk the "
            "padded axis with one time dim and the packet"
        )
    n = cells.sizes[0] if cells.sizes else 1
    if not any(_behaves(cells, cfg, j, "right") for cfg, j in _candidates(cells)):
        return (
            f"the right padding covers {len(right)} of the {n} packets along the padded axis ({dims}; valid "
            f"{pad.valid}, {cells.z} positions a packet), more than the last two (RightmostAndSecondRightmost), "
            f"and Iterator needs a loop of at most {MASK_CELLS} iterations, not {n}; use fewer, larger packets "
            f"(at most {MASK_CELLS} along the axis) or pad less"
        )
    return (
        f"the left padding covers {len(left)} of the {n} packets along the padded axis ({dims}; left {pad.left}, "
        f"{cells.z} positions a packet), but the mask zeroes a head only in the first one; pad less on the left"
    )


# --------------------------------------------------------------------------
# The record's rules (seqbin.md MASKS)
# --------------------------------------------------------------------------


def check_mask_config(
    cfg: FetchMaskConfig, limits: Sequence[int], elem: ElementType, labels: Labels | None = None
) -> None:
    """The rules of one MASKS record against its program (seqbin.md 1.3;
    shared by the ``fetch_seq.program`` verifier and, from phase 2, the
    ``seq.bin`` reader and writer): ``last_axis`` and the iterator entry are
    entries of the loop nest ``limits``; the iterator's loop has at most 8
    iterations; eight counts, each at most the cap of ``elem``
    (:func:`fetchc.target.mask_count_cap`), the unused ones 0; ``left_pad``
    at most the cap.  ``labels``: how messages name fields (default
    :data:`fetchc.target.record.FIELDS`, bare names).  Raises
    :class:`fetchc.target.record.RecordError`."""
    from fetchc.target.record import FIELDS, RecordError  # record imports the sequencer, which imports this

    L = labels or FIELDS
    n = len(limits)
    if not 0 <= cfg.last_axis < n:
        raise RecordError(
            "last_axis", f"{L.field('last_axis')} is {cfg.last_axis}, not an entry of the {n}-entry loop nest"
        )
    try:
        kind = ValidCountDim(cfg.valid_count_dim)
    except ValueError:
        raise RecordError(
            "valid_count_dim", f"{L.field('valid_count_dim')} is {int(cfg.valid_count_dim)}; it must be 0, 1 or 2"
        ) from None
    counts = tuple(cfg.rightmost_valid_count)
    if len(counts) != MASK_CELLS:
        raise RecordError("rightmost_valid_count", f"{len(counts)} valid counts; a mask has {MASK_CELLS}")
    used = {ValidCountDim.RIGHTMOST: 1, ValidCountDim.RIGHTMOST_AND_SECOND_RIGHTMOST: 2}.get(kind, 0)
    if kind == ValidCountDim.ITERATOR:
        if not 0 <= cfg.iterator < n:
            raise RecordError(
                "iterator", f"{L.field('iterator')} is {cfg.iterator}, not an entry of the {n}-entry loop nest"
            )
        used = limits[cfg.iterator]
        if used > MASK_CELLS:
            raise RecordError(
                "iterator",
                f"{L.field('iterator')} {cfg.iterator} is a loop of {used} iterations, but Iterator has "
                f"{MASK_CELLS} counts",
            )
    elif cfg.iterator != 0:
        raise RecordError("iterator", f"{L.field('iterator')} is {cfg.iterator} without Iterator; it must be 0")
    cap = mask_count_cap(elem)
    for k, v in enumerate(counts):
        if not 0 <= v <= cap:
            raise RecordError(
                "rightmost_valid_count",
                f"{L.field('rightmost_valid_count', k)} is {v}, outside 0 to {cap}, the cap for {elem}",
            )
        if k >= used and v:
            raise RecordError(
                "rightmost_valid_count", f"{L.field('rightmost_valid_count', k)} is {v}, but the cell is unused: 0"
            )
    if not 0 <= cfg.left_pad <= cap:
        raise RecordError(
            "left_pad", f"{L.field('left_pad')} is {cfg.left_pad}, outside 0 to {cap}, the cap for {elem}"
        )


# --------------------------------------------------------------------------
# Expansion (the golden model)
# --------------------------------------------------------------------------


def zeroed_slots(limits: Sequence[int], packet_size: int, cfg: FetchMaskConfig, packets: range | None = None):
    """The slots ``cfg`` zeroes (hardware.md §2.0 as fetchc reads it, module
    docstring) in a program whose loop nest has entry sizes ``limits``
    (outermost first) and ``packet_size`` elements a packet: a ``bool``
    array ``(packets, packet_size)``, ``True`` = zeroed, for the packets in
    ``packets`` (default all: ``prod(limits) // packet_size``).  Imports
    numpy."""
    import numpy as np

    total = math.prod(limits) // packet_size
    rng = range(total) if packets is None else packets
    pk = np.arange(rng.start, rng.stop, dtype=np.int64)
    weights = [math.prod(limits[k + 1 :]) for k in range(len(limits))]

    def counter(elements: np.ndarray, k: int) -> np.ndarray:
        return (elements // weights[k]) % limits[k]

    first, last = pk * packet_size, pk * packet_size + packet_size - 1
    counts = np.array(cfg.rightmost_valid_count, dtype=np.int64)
    kind = ValidCountDim(cfg.valid_count_dim)
    if kind == ValidCountDim.ITERATOR:
        end = counts[np.minimum(counter(last, cfg.iterator), MASK_CELLS - 1)]
        head_axis = cfg.iterator
    else:
        i = counter(last, cfg.last_axis)
        n = limits[cfg.last_axis]
        end = np.where(i == n - 1, counts[0], packet_size)
        if kind == ValidCountDim.RIGHTMOST_AND_SECOND_RIGHTMOST:
            end = np.where(i == n - 2, counts[1], end)
        head_axis = cfg.last_axis
    head = np.where(counter(first, head_axis) == 0, cfg.left_pad, 0)
    offs = np.arange(packet_size, dtype=np.int64)
    return (offs[None, :] < head[:, None]) | (offs[None, :] >= end[:, None])


def padding_slots(time: Sequence[int], packet: Sequence[int], pad: StreamPadding) -> np.ndarray:
    """The padding slots of a stream of ``time`` x ``packet`` (seqbin.md
    MANIFEST ``pad``): a ``bool`` array of shape ``time + packet``, ``True``
    where the composite index of ``pad.dims`` lies outside ``[left, left +
    valid)``.  Imports numpy."""
    import numpy as np

    shape = (*time, *packet)
    comp = np.zeros((1,) * len(shape), dtype=np.int64)
    for k in pad.dims:
        grid = np.arange(shape[k], dtype=np.int64).reshape((1,) * k + (shape[k],) + (1,) * (len(shape) - k - 1))
        comp = comp * shape[k] + grid
    out = (comp < pad.left) | (comp >= pad.left + pad.valid)
    return np.broadcast_to(out, shape)


def slots_problem(
    limits: Sequence[int],
    packet_size: int,
    cfg: FetchMaskConfig,
    time: Sequence[int],
    packet: Sequence[int],
    pad: StreamPadding,
    chunk: int = 1 << 16,
) -> str | None:
    """Whether the slots ``cfg`` zeroes (:func:`zeroed_slots`) are exactly
    the padding slots of ``pad`` (:func:`padding_slots`): ``None``, or a
    sentence naming the first packet where they differ.  Work in chunks of
    ``chunk`` packets; time and memory linear in the stream.  Imports numpy.
    (Phase 2: the ``seq.bin`` reader's agreement check of MASKS against the
    MANIFEST's ``pad``.)"""
    import numpy as np

    total = math.prod(time)
    p = math.prod(packet)
    if p != packet_size or total * p != math.prod(limits):
        return f"the stream {list(time)} x {list(packet)} does not match the loop nest {list(limits)} : {packet_size}"
    nt = len(time)
    for lo in range(0, total, chunk):
        hi = min(total, lo + chunk)
        zero = zeroed_slots(limits, packet_size, cfg, range(lo, hi))
        pk = np.arange(lo, hi, dtype=np.int64)
        comp_t = np.zeros_like(pk)
        rest = pk.copy()
        counters = []
        for k in reversed(range(nt)):
            counters.append(rest % time[k])
            rest //= time[k]
        counters.reverse()
        # composite index of every slot: time pad dims (per packet) then packet pad dims (per offset)
        pd_p = [k for k in pad.dims if k >= nt]
        inner_p = math.prod(packet[k - nt] for k in pd_p)
        for k in pad.dims:
            if k < nt:
                comp_t = comp_t * time[k] + counters[k]
        offs = np.zeros(packet, dtype=np.int64)
        for k in pd_p:
            d = k - nt
            grid = np.arange(packet[d], dtype=np.int64).reshape((1,) * d + (packet[d],) + (1,) * (len(packet) - d - 1))
            offs = offs * packet[d] + grid
        comp = comp_t[:, None] * inner_p + np.broadcast_to(offs, packet).reshape(1, -1)
        padding = (comp < pad.left) | (comp >= pad.left + pad.valid)
        bad = np.flatnonzero((padding != zero).any(axis=1))
        if bad.size:
            q = int(lo + bad[0])
            return (
                f"packet {q}: the mask zeroes slots {np.flatnonzero(zero[bad[0]]).tolist()}, but the padding is slots "
                f"{np.flatnonzero(padding[bad[0]]).tolist()}"
            )
    return None
