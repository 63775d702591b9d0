"""Fetch Sequencer configuration: from a fetch's memref, map and shapes to the
loop nest ``[size_0 : stride_0, ...] : packet_size`` and its read size.

Pure Python (no xDSL IR): the ``fetch.fetch`` verifier (ir.md §3 rule 8) and
the ``fetch-to-seq`` lowering both call :func:`derive` and turn a
:class:`SequencerError` into a diagnostic on the op.

Spec: ``hardware.md`` §3 "The Fetch Sequencer" (entries, merge, split,
contiguity, read size, cycles, base and addressing), §2.2 (the cast output of
one read fits one 32-byte flit), §1 (main / sub context read sizes).

Units, everywhere in this module:

* sizes, strides, offsets, ``read_size``, ``packet_size``: **elements** of
  the stored type (``elem``);
* ``base``, ``fetch_size``, addresses: **bytes**.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fetchc.target import (
    BASE_LIMIT,
    FLIT_BYTES,
    MAX_ENTRIES,
    MAX_ENTRY_SIZE,
    READ_BYTES,
    SUB_READ_BYTES,
    ElementType,
    dm_base_problem,
)
from fetchc.target import facts as target
from fetchc.target.mask import MaskError, Padding, StreamPadding, pad_problem, stream_padding
from fetchc.wording import a_or_an, count

__all__ = [
    "SequencerError",
    "SequencerConfig",
    "derive",
    "build_entries",
    "split_size",
    "contiguous_run",
]


class SequencerError(Exception):
    """A fetch that the Fetch Sequencer cannot run (hardware.md §3, ir.md §3
    rule 8).

    ``message`` is one full sentence that states the numbers involved, e.g.
    ``"needs 9 sequencer entries, but the table holds 8"``; ``str(err)`` is
    the same text.
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class SequencerConfig:
    """One Fetch Unit program's sequencer fields (hardware.md §3, seqbin.md
    PROGRAMS).

    * ``base``: DM **byte** address of the first element read (the memref's
      ``base`` plus the layout offset and the map's constant terms).
    * ``limits``: entry sizes in elements, outermost first, 1 to 8 entries.
    * ``strides``: entry strides in **elements** of the stored type (negative
      or 0 allowed), same order as ``limits``.
    * ``packet_size``: elements per packet (product of the packet shape).
    * ``read_size``: elements per hardware access.
    * ``fetch_size``: bytes per hardware access (``read_size * bits / 8``).
    * ``words_per_packet``: hardware accesses per packet
      (``packet_size // read_size``).
    * ``cycles``: accesses for the whole fetch
      (``time_size * words_per_packet``).
    * ``contiguous_run``: elements the innermost entries read back to back
      (hardware.md §3).
    * ``max_access_size``: ``gcd(packet_size, contiguous_run)`` elements.
    * ``padding``: a padded fetch's :class:`~fetchc.target.mask.StreamPadding`
      (the stream dims that walk its padded axis, the left pad, the valid
      count), else ``None``.
    * ``pad_entries``: ``(stream dim, entry)`` for each dim of ``padding``
      when the entries were kept apart for a mask (``keep_padded``), else
      ``()``.
    """

    base: int
    limits: tuple[int, ...]
    strides: tuple[int, ...]
    packet_size: int
    read_size: int
    fetch_size: int
    words_per_packet: int
    cycles: int
    contiguous_run: int
    max_access_size: int
    padding: StreamPadding | None = None
    pad_entries: tuple[tuple[int, int], ...] = ()

    @property
    def num_entries(self) -> int:
        """Entries in use (``seq.bin`` word 7)."""
        return len(self.limits)

    def element_offsets(self):
        """Every element offset the loop nest reads, relative to the first
        element read (the one at :attr:`base`), in hardware order (entry 0
        outermost).  Shape ``(prod(limits),)``, dtype ``int64``.  Meant for
        tests and the simulator; it materialises the whole nest (and imports
        numpy)."""
        import numpy as np

        offs = np.zeros((), dtype=np.int64)
        for n, s in zip(self.limits, self.strides, strict=False):
            offs = offs[..., None] + np.arange(n, dtype=np.int64) * s
        return offs.reshape(-1)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def _fmt_bytes(nbits: int) -> str:
    """``nbits`` as a byte count: ``"4"``, ``"0.5"``."""
    # Imported here: only messages need it (fractions imports decimal).
    from fractions import Fraction

    b = Fraction(nbits, 8)
    return str(b.numerator) if b.denominator == 1 else str(float(b))


def _read_bytes_text() -> str:
    return ", ".join(str(b) for b in READ_BYTES[:-1]) + f" or {READ_BYTES[-1]}"


def split_size(n: int) -> tuple[int, int] | None:
    """Split a dimension of ``n`` > 65536 elements into ``(a, b)`` with
    ``a * b == n``, ``a, b <= 65536`` and ``b`` the largest such divisor
    (hardware.md §3), or ``None`` when no such pair exists."""
    lo = -(-n // MAX_ENTRY_SIZE)  # b >= ceil(n / 65536) so that a <= 65536
    for b in range(min(n, MAX_ENTRY_SIZE), lo - 1, -1):
        if n % b == 0:
            return n // b, b
    return None


def build_entries(
    sizes: Sequence[int], strides: Sequence[int], keep: frozenset[int] = frozenset()
) -> list[tuple[int, int]]:
    """The sequencer entries ``[(size, stride), ...]`` (outermost first) for
    stream dimensions of ``sizes`` with element ``strides`` (outermost first),
    hardware.md §3:

    1. size-1 entries vanish;
    2. walking from the innermost entry outward, an outer ``(n_o : s_o)``
       merges into the (possibly already merged) entry inside it
       ``(n_i : s_i)``, giving ``(n_o*n_i : s_i)``, when
       ``s_o == n_i * s_i`` and ``n_o * n_i <= 65536``;
    3. an entry of ``n > 65536`` is split into ``(a : b*s), (b : s)`` with
       ``b`` the largest divisor of ``n`` such that ``a, b <= 65536``
       (split entries are not merged again);
    4. no entry left: ``[(1, 1)]``.

    ``keep``: stream dims that merge with nothing (the loops a mask names,
    hardware.md §2.0); each of size > 1 stays one entry of its own.

    Raises :class:`SequencerError` when a dimension cannot be split (or a
    kept one would need splitting).  The entry budget (8) is *not* checked
    here; see :func:`derive`.
    """
    return _build(sizes, strides, keep)[0]


def _build(
    sizes: Sequence[int], strides: Sequence[int], keep: frozenset[int]
) -> tuple[list[tuple[int, int]], dict[int, int]]:
    """:func:`build_entries` and the entry index of each kept dim of size > 1."""
    kept = [(n, s, k) for k, (n, s) in enumerate(zip(sizes, strides, strict=False)) if n != 1]
    merged: list[tuple[int, int, int | None]] = []  # innermost first; the kept dim of an entry
    for n, s, dim in reversed(kept):
        k = dim if dim in keep else None
        if merged and k is None and merged[-1][2] is None:
            n_i, s_i, _ = merged[-1]
            if s == n_i * s_i and n * n_i <= MAX_ENTRY_SIZE:
                merged[-1] = (n * n_i, s_i, None)
                continue
        merged.append((n, s, k))
    entries: list[tuple[int, int]] = []  # outermost first
    origin: dict[int, int] = {}
    for n, s, k in reversed(merged):
        if n > MAX_ENTRY_SIZE:
            if k is not None:
                raise SequencerError(
                    f"stream dim {k} walks the padded axis in {n} steps, more than one sequencer entry holds "
                    f"({MAX_ENTRY_SIZE}), and a masked fetch keeps each dim that walks the padded axis in one entry"
                )
            ab = split_size(n)
            if ab is None:
                raise SequencerError(
                    f"dimension of {n} elements cannot be split into sequencer entries of at most {MAX_ENTRY_SIZE}"
                )
            a, b = ab
            entries += [(a, b * s), (b, s)]
        else:
            if k is not None:
                origin[k] = len(entries)
            entries.append((n, s))
    return entries or [(1, 1)], origin


def contiguous_run(entries: Sequence[tuple[int, int]]) -> int:
    """Elements read back to back by the innermost entries (hardware.md §3):
    the innermost size, or 1 when its stride is 0 (a broadcast reads one
    element per access, and the run stops there); then times each outer
    size while that outer stride equals inner size x inner stride."""
    n, s = entries[-1]
    if s == 0:
        return 1
    run = n
    for (n_o, s_o), (n_i, s_i) in zip(reversed(entries[:-1]), reversed(entries[1:]), strict=True):
        if s_o != n_i * s_i:
            break
        run *= n_o
    return run


# --------------------------------------------------------------------------
# derive
# --------------------------------------------------------------------------


def derive(
    *,
    memref_shape: Sequence[int],
    memref_strides: Sequence[int],
    memref_offset: int,
    map_coeffs: Sequence[Sequence[int]],
    map_consts: Sequence[int],
    time_shape: Sequence[int],
    packet_shape: Sequence[int],
    elem: ElementType,
    context: str,
    cast_out: ElementType | None,
    read_size: int | None,
    base: int,
    placed: bool = True,
    pad: Padding | None = None,
    keep_padded: bool = False,
) -> SequencerConfig:
    """The sequencer configuration of one fetch (hardware.md §3).

    Arguments (elements unless stated):

    * ``memref_shape``, ``memref_strides``, ``memref_offset``: the memref's
      sizes and layout (identity layout: row-major strides, offset 0).
    * ``map_coeffs[r][d]``: coefficient of stream dimension ``d`` (time dims
      then packet dims) in memref index ``r`` of the linear affine map;
      ``map_consts[r]`` its constant term.
    * ``time_shape``, ``packet_shape``: the stream's shape.
    * ``elem``: the stored element type; ``context``: ``"main"`` or
      ``"sub"``; ``cast_out``: the output type of the chain's cast stage, or
      ``None``; ``read_size``: a pinned read size, or ``None`` to derive one.
    * ``base``: DM **byte** address of the memref's element 0; ``placed``:
      whether it is known (else it is 0 until ``fetch-place-dm``, which
      reports a kernel that does not fit, so the end of DM is not checked).
    * ``pad``: the fetch's padded axis (:class:`~fetchc.target.mask.Padding`),
      whose index may then run over ``[-left, size - left)``;
      ``keep_padded``: keep the stream dims that walk it in entries of their
      own (the chain masks: hardware.md §2.0).

    Raises :class:`SequencerError`, checking in this order: malformed
    arguments (ranks, context, a non-memory element type); ``base`` negative,
    not a multiple of 8 or not below 2^19; non-positive sizes; a padding that
    may not be read (:func:`~fetchc.target.mask.pad_problem`) or that the
    stream does not walk whole (:func:`~fetchc.target.mask.stream_padding`);
    an index outside the memref (or the padded range); an address outside
    ``[0, 2^19)`` (when placed); an odd 4-bit element offset; a dimension
    that cannot be split, more than 8 entries, a stride beyond i32; an odd
    non-innermost 4-bit entry stride; a non-contiguous innermost entry; no
    legal (or an illegal pinned / sub) read size.
    """
    _check_arguments(memref_shape, memref_strides, map_coeffs, map_consts, time_shape, packet_shape, elem, context)
    _check_base(base)
    _check_sizes(memref_shape, time_shape, packet_shape)
    sizes = [*time_shape, *packet_shape]
    padding = _padding(memref_shape, memref_strides, map_coeffs, map_consts, sizes, len(time_shape), pad)
    dim_strides, offset = _walk(memref_shape, memref_strides, memref_offset, map_coeffs, map_consts, sizes, pad)
    _check_addresses(base, offset, dim_strides, sizes, elem, placed, pad)
    keep = frozenset(padding.dims) if padding is not None and keep_padded else frozenset()
    entries, origin = _entries(sizes, dim_strides, elem, len(time_shape), keep)
    packet_size = math.prod(packet_shape)
    _check_innermost(entries, packet_size)
    run = contiguous_run(entries)
    max_access = math.gcd(packet_size, run)
    choose = _main_read_size if context == "main" else _sub_read_size
    r = choose(elem, cast_out, read_size, packet_size, run, max_access)
    words = packet_size // r
    return SequencerConfig(
        base=base + offset * elem.bits // 8,
        limits=tuple(n for n, _ in entries),
        strides=tuple(s for _, s in entries),
        packet_size=packet_size,
        read_size=r,
        fetch_size=r * elem.bits // 8,
        words_per_packet=words,
        cycles=math.prod(time_shape) * words,
        contiguous_run=run,
        max_access_size=max_access,
        padding=padding,
        pad_entries=tuple(sorted(origin.items())),
    )


def _walk(
    memref_shape: Sequence[int],
    memref_strides: Sequence[int],
    memref_offset: int,
    map_coeffs: Sequence[Sequence[int]],
    map_consts: Sequence[int],
    sizes: Sequence[int],
    pad: Padding | None,
) -> tuple[list[int], int]:
    """Each stream dim's stride in the memref's elements and the element
    offset of the first element read, after checking that every index stays
    inside the memref (inside the padded range along a padded dim)."""
    _check_index_bounds(memref_shape, map_coeffs, map_consts, sizes, pad)
    rank = len(memref_shape)
    dim_strides = [sum(map_coeffs[r][d] * memref_strides[r] for r in range(rank)) for d in range(len(sizes))]
    return dim_strides, memref_offset + sum(map_consts[r] * memref_strides[r] for r in range(rank))


def _padding(
    memref_shape: Sequence[int],
    memref_strides: Sequence[int],
    map_coeffs: Sequence[Sequence[int]],
    map_consts: Sequence[int],
    sizes: Sequence[int],
    time_rank: int,
    pad: Padding | None,
) -> StreamPadding | None:
    """ir.md §3 rule 8 for a padded fetch: where its padding may be read
    (:func:`~fetchc.target.mask.pad_problem`) and how its stream walks it
    (:func:`~fetchc.target.mask.stream_padding`)."""
    if pad is None:
        return None
    problem = pad_problem(memref_shape, memref_strides, pad)
    if problem is not None:
        raise SequencerError(problem)
    try:
        return stream_padding(map_coeffs[pad.dim], map_consts[pad.dim], sizes, time_rank, pad, memref_shape[pad.dim])
    except MaskError as e:
        raise SequencerError(e.message) from None


def _check_innermost(entries: Sequence[tuple[int, int]], packet_size: int) -> None:
    """The innermost entry walks DM contiguously (stride 1) or broadcasts
    (stride 0), unless the packet is one element.  A packet may span several
    contiguous runs: the read size divides gcd(packet, run), so each hardware
    read stays inside one run (hardware.md §3, the furiosa-opt book's
    "Non-Contiguous Packets")."""
    n_in, s_in = entries[-1]
    if not target.innermost_ok(s_in, packet_size):
        raise SequencerError(
            f"innermost sequencer entry [{n_in} : {s_in}] is not contiguous: a "
            f"packet of {packet_size} elements needs innermost stride 0 or 1"
        )


def _check_arguments(
    memref_shape: Sequence[int],
    memref_strides: Sequence[int],
    map_coeffs: Sequence[Sequence[int]],
    map_consts: Sequence[int],
    time_shape: Sequence[int],
    packet_shape: Sequence[int],
    elem: ElementType,
    context: str,
) -> None:
    """Ranks agree, a known context, a type that lives in DM."""
    rank = len(memref_shape)
    ndims = len(time_shape) + len(packet_shape)
    if len(memref_strides) != rank or len(map_coeffs) != rank or len(map_consts) != rank:
        raise SequencerError(
            f"memref of rank {rank} given {len(memref_strides)} strides, "
            f"{len(map_coeffs)} map results and {len(map_consts)} map constants"
        )
    for r, row in enumerate(map_coeffs):
        if len(row) != ndims:
            raise SequencerError(
                f"map result {r} has {count(len(row), 'coefficient')}, but the stream has "
                f"{count(ndims, 'dimension')} ({len(time_shape)} time, {len(packet_shape)} packet)"
            )
    if context not in target.CONTEXTS:
        raise SequencerError(f"unknown Fetch Unit context '{context}' (expected main or sub)")
    if elem.bits not in target.MEMORY_BITS or elem.in_flight_only:
        raise SequencerError(f"{elem} elements cannot be fetched from memory")


def _check_sizes(memref_shape: Sequence[int], time_shape: Sequence[int], packet_shape: Sequence[int]) -> None:
    for what, shape in (("memref", memref_shape), ("time", time_shape), ("packet", packet_shape)):
        for i, n in enumerate(shape):
            if n <= 0:
                raise SequencerError(f"{what} dimension {i} has size {n}, but every dimension needs a positive size")


def _check_base(base: int) -> None:
    """hardware.md §3: ``base`` is a DM byte address, a multiple of 8, below 2^19."""
    problem = dm_base_problem(base)
    if problem is not None:
        raise SequencerError(problem)


def _check_index_bounds(
    memref_shape: Sequence[int],
    map_coeffs: Sequence[Sequence[int]],
    map_consts: Sequence[int],
    sizes: Sequence[int],
    pad: Padding | None = None,
) -> None:
    """Every index the map reaches lies inside the memref (along a padded
    dim: inside ``[-left, size - left)``)."""
    for r, extent in enumerate(memref_shape):
        lo = hi = map_consts[r]
        for d, n in enumerate(sizes):
            span = map_coeffs[r][d] * (n - 1)
            lo += min(0, span)
            hi += max(0, span)
        if pad is not None and r == pad.dim:
            if lo < -pad.left or hi >= pad.size - pad.left:
                raise SequencerError(
                    f"index {r} of the memref reaches [{lo}, {hi}] but its padded range is "
                    f"[{-pad.left}, {pad.size - pad.left - 1}]: address outside the memref and its padding"
                )
            continue
        if lo < 0 or hi >= extent:
            raise SequencerError(
                f"index {r} of the memref reaches [{lo}, {hi}] but the dimension "
                f"has size {extent}: address outside the memref"
            )


def _check_addresses(
    base: int,
    offset: int,
    dim_strides: Sequence[int],
    sizes: Sequence[int],
    elem: ElementType,
    placed: bool = True,
    pad: Padding | None = None,
) -> None:
    """Every byte read lies in ``[0, 2^19)`` (one slice's DM; the upper end
    only when ``placed``, and for a padded fetch the lower end too: the
    placement reserves its padded extent); a 4-bit first element is even."""
    bits = elem.bits
    lo_e = offset + sum(min(0, s * (n - 1)) for s, n in zip(dim_strides, sizes, strict=False))
    hi_e = offset + sum(max(0, s * (n - 1)) for s, n in zip(dim_strides, sizes, strict=False))
    lo_addr = base + (lo_e * bits) // 8
    hi_addr = base + (hi_e * bits) // 8 + max(1, bits // 8) - 1
    if pad is not None and lo_addr < 0 and placed:
        need = -(-(base - lo_addr) // target.BASE_ALIGN) * target.BASE_ALIGN
        raise SequencerError(
            f"its padding reads DM byte addresses from {lo_addr}, below address 0: the left pad (and layout) "
            f"reach {base - lo_addr} bytes before the tensor's base {base}; place the tensor at base {need} or "
            "higher (rngd.dm_base), or pad less on the left"
        )
    if (lo_addr < 0 and (pad is None or placed)) or (placed and hi_addr >= BASE_LIMIT):
        raise SequencerError(
            f"the fetch reaches DM byte addresses [{lo_addr}, {hi_addr}], outside "
            f"[0, 2^19 = {BASE_LIMIT}): address outside one slice's DM"
        )
    if bits == 4 and offset % 2 != 0:
        raise SequencerError(
            f"odd 4-bit element offset {offset} is not addressable: element 2i is the low nibble of byte i"
        )


def _entries(
    sizes: Sequence[int],
    dim_strides: Sequence[int],
    elem: ElementType,
    time_rank: int,
    keep: frozenset[int] = frozenset(),
) -> tuple[list[tuple[int, int]], dict[int, int]]:
    """The loop nest (:func:`build_entries`, keeping ``keep`` apart) and the
    entry of each kept dim, checked: at most 8 entries, i32 strides, even
    4-bit strides outside the innermost entry."""
    entries, origin = _build(sizes, dim_strides, keep)
    if len(entries) > MAX_ENTRIES:
        nest = ", ".join(f"{n} : {s}" for n, s in entries)
        kept = (
            f"; fetch.mask keeps the stream dims that walk the padded axis ({', '.join(map(str, sorted(keep)))}) "
            "in entries of their own"
            if keep
            else ""
        )
        raise SequencerError(
            f"needs {len(entries)} sequencer entries, but the table holds {MAX_ENTRIES}: the stream's "
            f"{time_rank} time and {len(sizes) - time_rank} packet dims give [{nest}]; an outer dim merges "
            "into the one inside it when its stride is that dim's size times its stride, so lay the "
            "tensor out so that neighbouring dims merge, use fewer time dims (fold them into one), or "
            f"split the read into several fetches{kept}"
        )
    for n, s in entries:
        if not target.stride_fits(s):
            raise SequencerError(
                f"sequencer entry [{n} : {s}] has a stride of {s} elements, which does "
                f"not fit the 32-bit signed stride field"
            )
    if elem.bits == 4:
        for k, (n, s) in enumerate(entries[:-1]):
            if s % 2 != 0:
                raise SequencerError(
                    f"odd 4-bit entry stride {s} (entry {k}, [{n} : {s}]) is not "
                    f"addressable: every access must start on a byte, and element 2i "
                    f"is the low nibble of byte i"
                )
    return entries, origin


_legal_bytes = target.read_bytes_ok
_cast_fits = target.cast_fits_flit


def _cast_text(r: int, cast_out: ElementType) -> str:
    """``"to 16 x 4 = 64 bytes of i32, more than one 32-byte flit"``."""
    return (
        f"to {r} x {_fmt_bytes(cast_out.bits)} = {_fmt_bytes(r * cast_out.bits)} "
        f"bytes of {cast_out}, more than one {FLIT_BYTES}-byte flit"
    )


def _access_text(packet_size: int, run: int, max_access: int) -> str:
    return f"the max access size {max_access} (gcd of the packet size {packet_size} and the contiguous run {run})"


def _main_read_size(
    elem: ElementType,
    cast_out: ElementType | None,
    pinned: int | None,
    packet_size: int,
    run: int,
    max_access: int,
) -> int:
    """hardware.md §3 "Read size", main context; §2.2 flit limit."""
    bits = elem.bits
    if pinned is not None:
        if pinned <= 0:
            raise SequencerError(f"read_size {pinned} is not a positive number of elements")
        if not _legal_bytes(pinned, bits):
            raise SequencerError(
                f"read_size {pinned} of {elem} is {_fmt_bytes(pinned * bits)} bytes, but a "
                f"read must be {_read_bytes_text()} bytes"
            )
        if max_access % pinned != 0:
            raise SequencerError(f"read_size {pinned} does not divide {_access_text(packet_size, run, max_access)}")
        if not _cast_fits(pinned, cast_out):
            assert cast_out is not None
            raise SequencerError(f"read_size {pinned} of {elem} casts {_cast_text(pinned, cast_out)}")
        return pinned
    for r in range(max_access, 0, -1):
        if max_access % r == 0 and _legal_bytes(r, bits) and _cast_fits(r, cast_out):
            return r
    cast_clause = f" with {a_or_an(cast_out.name)} cast output of at most {FLIT_BYTES} bytes" if cast_out else ""
    raise SequencerError(
        f"no legal read size: no divisor of {_access_text(packet_size, run, max_access)} "
        f"is {_read_bytes_text()} whole bytes of {elem}{cast_clause}"
    )


def _sub_read_size(
    elem: ElementType,
    cast_out: ElementType | None,
    pinned: int | None,
    packet_size: int,
    run: int,
    max_access: int,
) -> int:
    """hardware.md §1 and §3: the sub context reads exactly 8 bytes; §2.2
    flit limit applies to that fixed read."""
    bits = elem.bits
    r = SUB_READ_BYTES * 8 // bits
    if (packet_size * bits) % (SUB_READ_BYTES * 8) != 0:
        raise SequencerError(
            f"the sub Fetch Unit reads exactly {SUB_READ_BYTES} bytes; a packet of "
            f"{count(packet_size, f'{elem} element')} ({_fmt_bytes(packet_size * bits)} bytes) is not "
            f"a whole number of {SUB_READ_BYTES}-byte reads"
        )
    if pinned is not None and pinned != r:
        raise SequencerError(
            f"read_size {pinned} is not possible on the sub Fetch Unit: it reads exactly "
            f"{SUB_READ_BYTES} bytes = {r} {elem} elements"
        )
    if max_access % r != 0:
        raise SequencerError(
            f"the sub Fetch Unit reads exactly {SUB_READ_BYTES} bytes = {r} {elem} "
            f"elements, which does not divide {_access_text(packet_size, run, max_access)}"
        )
    if not _cast_fits(r, cast_out):
        assert cast_out is not None
        raise SequencerError(
            f"the sub Fetch Unit reads exactly {SUB_READ_BYTES} bytes = {r} {elem} "
            f"elements, which cast {_cast_text(r, cast_out)}"
        )
    return r
