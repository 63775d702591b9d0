"""The simulator's engine: one Fetch Unit program executed on a DM image,
vectorised with numpy and spread over threads.

:mod:`fetchc.golden.sim` (``fetchc sim``) and :mod:`fetchc.golden.run`
(``fetchc run``) drive it; what a program computes is specified there
(hardware.md §2-3, seqbin.md PROGRAMS and TABLES).  This module holds how:

* the adapter stages on arrays (:func:`table_lookup_bytes`,
  :func:`cast_values`, :func:`zp_sub_values`), shared with the interpreter;
* the resolved stage chain of one record (:class:`Plan`,
  :func:`plan_program`) and that chain tabulated per key byte
  (:func:`byte_lut`);
* the loop-nest walkers (:func:`execute`: contiguous runs, rows as slices,
  strided views or index arrays, and the element-by-element path;
  :func:`normalised_entries`, :func:`contiguous`, :func:`check_read_bounds`);
* the work scheduling: :func:`default_threads`, :func:`run_chunks` (work
  items on a thread pool) and :class:`Progress` (the stderr percentage
  line), which ``fetchc run`` uses for its Vector Engine passes too.

The speed notes of :mod:`fetchc.golden.sim` describe the strategies.  Errors:
:class:`SimError`, one sentence naming the program and the numbers.

This module imports numpy.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from fetchc.escape import printable
from fetchc.seqbin import Program, Table
from fetchc.target import (
    CAST_CODES,
    STAGE_MASKING,
    TABLE_ENTRIES,
    ElementType,
    ZeroPointRule,
    functions,
    numerics,
)
from fetchc.target.encoding import UINT as _UINT
from fetchc.target.encoding import to_sim_encoding
from fetchc.target.record import RecordError, check_table, stage_chain

__all__ = [
    "SimError",
    "Plan",
    "plan_program",
    "after_lookup",
    "stages_on_values",
    "unmasked",
    "byte_lut",
    "default_threads",
    "Progress",
    "Scaled",
    "run_chunks",
    "execute",
    "contiguous",
    "normalised_entries",
    "check_read_bounds",
    "table_entries",
    "table_lookup_bytes",
    "cast_values",
    "zp_sub_values",
    "GENERAL_CHUNK",
    "UNIT_CHUNK",
    "POST_CHUNK_BYTES",
    "FAST_CHUNK",
    "PROGRESS_MIN",
]

GENERAL_CHUNK = 1 << 22
"""Elements per chunk on the element-by-element path: bounds the offset
arrays (int64) at 32 MiB per chunk and worker."""
UNIT_CHUNK = 1 << 20
"""DM units (bytes, or words for 16-/32-bit types) per work item on the row
paths."""
POST_CHUNK_BYTES = 1 << 18
"""Output bytes per work item when a ``post`` hook runs on each: small
enough that the hook finds them in cache."""
FAST_CHUNK = 1 << 15
"""Keys (or key pairs) per ``np.take`` call; also the per-thread index buffer."""
PROGRESS_MIN = 1 << 24
"""Programs with fewer elements never print progress."""


class SimError(Exception):
    """A program the simulator cannot run: a read outside the DM image, an
    inconsistent program record (stages that do not chain from ``in_dtype``
    to ``out_dtype``, a bad table index), a zero-point residual outside
    ``i5``/``i9``, or an unknown program name.  The message is one sentence
    naming the program and the numbers involved."""


# --------------------------------------------------------------------------
# Adapter stages on arrays (shared with fetchc.golden.interp)
# --------------------------------------------------------------------------


def table_entries(table: Table) -> np.ndarray:
    """The table's stored entries, ``(256,)`` or ``(65536,)`` ``uint16``
    (from its bytes)."""
    return np.frombuffer(table.entries, dtype="<u2").astype(np.uint16)


def table_lookup_bytes(keys: np.ndarray, table: Table) -> np.ndarray:
    """The table-lookup stage through the table's **stored bytes**
    (hardware.md §2.1, §2.1b; seqbin.md TABLES).

    ``keys``: the key codes, any shape: ``uint8`` bytes, or for a table keyed
    by a 16-bit type (``bf16``, ``i16``) the elements' ``uint16`` bit
    patterns.  Paired table: returns shape ``keys.shape + (2,)``, ``[..., 0]``
    the even (low-nibble) element and ``[..., 1]`` the odd one, i.e. the
    entry's low and high byte.  Non-paired: returns ``keys.shape``, the
    entry's 16 bits.  Values are canonical (``table.out_dtype.np_dtype``).
    Raises :class:`SimError` when the record breaks a TABLES rule
    (:func:`fetchc.target.record.check_table`)."""
    src, dst = table.in_dtype, table.out_dtype
    try:
        check_table(src, dst, table.paired, table.function, table.scale, table.zero_point,
                    entries=len(table.entries) // 2)  # fmt: skip
    except RecordError as e:
        raise SimError(f"table {src} -> {dst}: {e.message}") from None
    width = np.uint16 if functions.key_bytes(src) == 2 and table.function is not None else np.uint8
    found = table_entries(table)[np.asarray(keys).astype(width, copy=False)]
    if table.paired:
        pair = np.stack([found & 0xFF, found >> 8], axis=-1).astype(np.uint8)
        return pair.view(dst.np_dtype)
    return found.view(dst.np_dtype)


def cast_values(values: np.ndarray, src: ElementType, dst: ElementType) -> np.ndarray:
    """The type-cast stage (hardware.md §2.2) on canonical values of ``src``
    (``src.np_dtype``, any shape), with RNGD's float semantics (§2.2a; the
    module docstring; :func:`fetchc.target.numerics.cast`).  Returns a new
    array of canonical ``dst`` values, same shape.  Raises :class:`SimError`
    for a pair outside the seven casts or a wrong dtype."""
    if (src, dst) not in CAST_CODES:
        raise SimError(f"the hardware has no {src} -> {dst} cast")
    values = np.asarray(values)
    if values.dtype != src.np_dtype:
        raise SimError(f"the {src} -> {dst} cast got values of {values.dtype}, not {src.np_dtype}")
    return numerics.cast(values, src, dst)


def zp_sub_values(values: np.ndarray, zero_point: int, rule: ZeroPointRule) -> np.ndarray:
    """The zero-point stage (hardware.md §2.3): ``values - zero_point``
    widened to ``rule.result`` (``i5`` as ``int8``, ``i9`` as ``int16``).

    Raises :class:`SimError` when a residual falls outside the result type
    (``[-16, 15]`` / ``[-256, 255]``), which only an out-of-range zero point
    can cause, or for a wrong dtype."""
    values = np.asarray(values)
    if values.dtype != rule.source.np_dtype:
        raise SimError(f"the zero-point stage got values of {values.dtype}, not {rule.source}")
    r = values.astype(np.int32) - np.int32(zero_point)
    half = 1 << (rule.result.bits - 1)
    bad = (r < -half) | (r >= half)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        v = int(values.astype(np.int32).reshape(-1)[i])
        raise SimError(
            f"zero-point subtraction {v} - {zero_point} = {v - zero_point} does not fit {rule.result} "
            f"[{-half}, {half - 1}]: the zero point {zero_point} is outside the {rule.source} range "
            f"[{rule.lo}, {rule.hi}] (a corrupt program record)"
        )
    return r.astype(rule.result.np_dtype)


# --------------------------------------------------------------------------
# Program plan: the stage chain of one record
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    name: str
    in_t: ElementType
    out_t: ElementType
    table: Table | None
    cast: tuple[ElementType, ElementType] | None
    zp: tuple[ZeroPointRule, int] | None

    @property
    def no_stages(self) -> bool:
        return self.table is None and self.cast is None and self.zp is None


def plan_program(prog: Program, tables: Sequence[Table], name: str) -> Plan:
    """Check the record's stage chain ``in_dtype -> [table] -> [cast] ->
    [zero point] -> out_dtype`` (:func:`fetchc.target.record.stage_chain`,
    the rule the reader and the verifier apply; an out-of-range zero point
    is accepted: :func:`zp_sub_values` reports the residuals that overflow)
    and resolve it.  Raises :class:`SimError`."""
    try:
        chain = stage_chain(prog, [(t.in_dtype, t.out_dtype) for t in tables], zero_point_range=False)
    except RecordError as e:
        raise SimError(f"program {name}: {e.message}") from None
    table = None
    if chain.table is not None:
        assert prog.table is not None  # a table stage: stage_chain checked that the record names one
        table = tables[prog.table]
    zp = None if chain.zero_point is None else (chain.zero_point, int(prog.zero_point0))
    return Plan(name, prog.in_dtype, prog.out_dtype, table, chain.cast, zp)


def after_lookup(values: np.ndarray, plan: Plan) -> np.ndarray:
    if plan.cast is not None:
        values = cast_values(values, *plan.cast)
    if plan.zp is not None:
        rule, zp = plan.zp
        values = zp_sub_values(values, zp, rule)
    return values


def stages_on_values(values: np.ndarray, plan: Plan) -> np.ndarray:
    """The stages after masking (table lookup through the table's stored
    bytes, cast, zero point: hardware.md §2) on canonical ``plan.in_t``
    values of any shape whose last axis is a whole number of packets (4-bit
    keys pair elements ``2i``, ``2i + 1`` of it, as a read does).  Returns
    canonical ``plan.out_t`` values, same shape.  Used where the masking
    stage has zeroed raw values first (the interpreter's masked
    ``fetch_seq.program``).  Raises :class:`SimError`."""
    v = np.asarray(values)
    if plan.table is not None:
        if plan.in_t.is_subbyte:
            codes = v.view(np.uint8).reshape(-1) & np.uint8(0x0F)
            keys = codes[0::2] | (codes[1::2] << np.uint8(4))
            v = table_lookup_bytes(keys, plan.table).reshape(v.shape)
        else:
            v = table_lookup_bytes(v.view(_UINT[plan.in_t.bits // 8]), plan.table)
    return after_lookup(v, plan)


def unmasked(prog: Program) -> Program:
    """``prog`` with the masking stage off (``stages`` bit 3): the record
    of the other stages, for :func:`plan_program` once the caller has done
    the masking itself (hardware.md §2.0, stage order)."""
    return dataclasses.replace(prog, stages=prog.stages & ~STAGE_MASKING)


def _front(keys: np.ndarray, plan: Plan) -> np.ndarray:
    """Canonical values after the lookup stage for ``uint8`` key bytes of a
    4-/8-bit input: shape ``keys.shape + (2,)`` for 4-bit (even, odd element),
    ``keys.shape + (1,)`` for 8-bit."""
    if plan.in_t.is_subbyte:
        if plan.table is not None:
            return table_lookup_bytes(keys, plan.table)
        return np.stack([keys & np.uint8(0x0F), keys >> np.uint8(4)], axis=-1).view(plan.in_t.np_dtype)
    if plan.table is not None:
        return table_lookup_bytes(keys, plan.table)[..., None]
    return np.asarray(keys, dtype=np.uint8).view(plan.in_t.np_dtype)[..., None]


def byte_lut(plan: Plan) -> np.ndarray | None:
    """The whole stage chain evaluated for every key byte, in the sim
    encoding: ``(256, 2)`` (4-bit: even, odd element) or ``(256, 1)``.
    ``None`` when the chain raises for some key (a corrupt zero point): the
    caller then evaluates the chain on the bytes actually read, so the error
    only fires for data that really triggers it."""
    keys = np.arange(TABLE_ENTRIES, dtype=np.uint8)
    try:
        vals = after_lookup(_front(keys, plan), plan)
    except SimError:
        return None
    return np.ascontiguousarray(to_sim_encoding(vals, plan.out_t))


def _wide(words: np.ndarray, plan: Plan, lut: np.ndarray | None) -> np.ndarray:
    """The stage chain on 16-/32-bit DM words, in the sim encoding: through
    ``lut`` (:func:`word_lut16`) when there is one, else the table (a
    2-byte-key function table), cast and zero point on the words read."""
    if lut is not None:
        return lut[words]
    vals = words.view(plan.in_t.np_dtype) if plan.table is None else table_lookup_bytes(words, plan.table)
    return to_sim_encoding(vals if plan.no_stages else after_lookup(vals, plan), plan.out_t)


def word_lut16(plan: Plan) -> np.ndarray | None:
    """For a table keyed by a 16-bit type, the whole stage chain (the
    file's entries, then the cast) for every ``u16`` key, in the sim
    encoding: ``(65536,)``.  ``None`` without such a table, or when the chain
    raises for some key (evaluated on the data read instead)."""
    if plan.table is None or plan.in_t.bits != 16:
        return None
    try:
        vals = after_lookup(table_lookup_bytes(np.arange(1 << 16, dtype=np.uint16), plan.table), plan)
    except SimError:
        return None
    return np.ascontiguousarray(to_sim_encoding(vals, plan.out_t))


# --------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------


def default_threads() -> int:
    env = os.environ.get("FETCHC_SIM_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover
        n = os.cpu_count() or 1
    return max(1, min(n, 4))


class Progress:
    """A ``\\r``-updated percentage line on stderr (``<prefix>: <label>:
    NN%``), only when stderr is a TTY and the job is long (``total`` of at
    least :data:`PROGRESS_MIN` units).  Thread-safe.  ``fetchc run`` uses it
    too, with its own prefix."""

    def __init__(self, label: str, total: int, enabled: bool | None, prefix: str = "fetchc sim"):
        if enabled is None:
            enabled = total >= PROGRESS_MIN and _stderr_is_tty()
        self.enabled = enabled
        self.label = printable(f"{prefix}: {label}" if prefix else label)  # a program name from the file
        self.total, self.done, self.shown = max(total, 1), 0, -1
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        if not self.enabled:
            return
        with self.lock:
            self.done += n
            pct = 100 * self.done // self.total
            if pct != self.shown:
                self.shown = pct
                sys.stderr.write(f"\r{self.label}: {pct:3d}%")
                sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.shown >= 0:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def run_chunks(n: int, chunk: int, fn: Callable[[int, int], None], threads: int, progress: Progress | Scaled) -> None:
    """Run ``fn(lo, hi)`` over ``[0, n)`` in chunks, on ``threads`` threads
    (numpy releases the GIL in the gathers).  Exceptions propagate."""
    spans = [(lo, min(lo + chunk, n)) for lo in range(0, n, chunk)]

    def job(span: tuple[int, int]) -> None:
        fn(*span)
        progress.add(span[1] - span[0])

    if threads <= 1 or len(spans) <= 1:
        for s in spans:
            job(s)
        return
    with ThreadPoolExecutor(max_workers=threads) as ex:
        for _ in ex.map(job, spans):
            pass


def normalised_entries(limits: Sequence[int], strides: Sequence[int]) -> list[tuple[int, int]]:
    """Entries with size-1 ones dropped and mergeable neighbours merged
    (``s_o == n_i * s_i``), with no size limit: the same address sequence."""
    merged: list[tuple[int, int]] = []  # innermost first
    for n, s in reversed([(n, s) for n, s in zip(limits, strides, strict=False) if n != 1]):
        if merged and s == merged[-1][0] * merged[-1][1]:
            merged[-1] = (n * merged[-1][0], merged[-1][1])
        else:
            merged.append((n, s))
    return list(reversed(merged))


def check_read_bounds(prog: Program, name: str, dm_size: int) -> None:
    """Raise :class:`SimError` unless every byte the loop nest reads lies in
    ``[0, dm_size)``.  The extremes of ``Σ i_k·stride_k`` are reached, so
    checking them checks every read."""
    lo_e = sum(min(0, s * (n - 1)) for n, s in zip(prog.limits, prog.strides, strict=False))
    hi_e = sum(max(0, s * (n - 1)) for n, s in zip(prog.limits, prog.strides, strict=False))
    bits = prog.in_dtype.bits
    if bits == 4:
        lo, hi = prog.base + lo_e // 2, prog.base + hi_e // 2
    else:
        size = bits // 8
        lo, hi = prog.base + lo_e * size, prog.base + hi_e * size + size - 1
    if lo < 0:
        raise SimError(
            f"program {name}: reads DM byte address {lo}, below the start of the image "
            f"(the loop nest reaches bytes {lo} to {hi})"
        )
    if hi >= dm_size:
        raise SimError(
            f"program {name}: reads DM byte address {hi}, outside the {dm_size}-byte DM image "
            f"(valid addresses 0 to {dm_size - 1}; the loop nest reaches bytes {lo} to {hi})"
        )


_PAIR_CACHE: dict[tuple[bytes, int], np.ndarray] = {}
_PAIR_CACHE_LOCK = threading.Lock()


def _pair_lut(lut_w: np.ndarray, w: int) -> np.ndarray:
    """From a per-key table of ``w``-byte words (``(256,)`` ``uint{8w}``), the
    table indexed by a little-endian ``u16`` of two key bytes: ``(65536,)``
    ``uint{16w}``, first key's word in the low half.  Remembered by content
    (a handful of distinct stage chains exist), read-only."""
    key = (lut_w.tobytes(), w)
    with _PAIR_CACHE_LOCK:
        hit = _PAIR_CACHE.get(key)
    if hit is not None:
        return hit
    big = _UINT[2 * w]
    idx = np.arange(1 << 16, dtype=np.uint32)
    lo = lut_w[idx & 0xFF].astype(big)
    hi = lut_w[idx >> 8].astype(big)
    pair = lo | (hi << big(8 * w))
    pair.flags.writeable = False
    with _PAIR_CACHE_LOCK:
        if len(_PAIR_CACHE) >= 64:
            _PAIR_CACHE.clear()
        _PAIR_CACHE[key] = pair
    return pair


_TLS = threading.local()


def _index_buffer(n: int) -> np.ndarray:
    """A per-thread ``intp`` scratch buffer of at least ``n`` items (reused:
    allocating it per call would page-fault on every chunk)."""
    buf = getattr(_TLS, "buf", None)
    if buf is None or buf.size < n:
        buf = np.empty(max(n, FAST_CHUNK), dtype=np.intp)
        _TLS.buf = buf
    return buf[:n]


class _Lut:
    """The stage chain tabulated per key byte (from :func:`byte_lut`),
    applied by byte value: ``gather(keys, out_bytes)`` writes, for each key
    byte, its ``w`` output bytes (``m`` elements of the sim encoding).  Pairs of
    keys index a 65536-entry table when two keys' output fits 8 bytes (each
    ``u16`` of input then yields ``2m`` elements in one ``np.take``)."""

    def __init__(self, lut: np.ndarray):
        self.m = lut.shape[1]
        self.w = self.m * lut.dtype.itemsize
        if self.w not in _UINT:  # pragma: no cover - no hardware chain gives more than 8 bytes per key
            raise SimError(f"internal error: {self.w} output bytes per key")
        self.single = np.ascontiguousarray(lut).view(_UINT[self.w]).reshape(TABLE_ENTRIES)
        self.pair = _pair_lut(self.single, self.w) if 2 * self.w in _UINT else None

    def gather(self, keys: np.ndarray, out_bytes: np.ndarray) -> None:
        """Single-threaded; ``keys`` ``uint8`` 1-D contiguous, ``out_bytes``
        ``uint8`` 1-D contiguous of ``keys.size * w`` bytes."""
        n, w = keys.size, self.w
        pair = self.pair
        pairs = n // 2 if pair is not None else 0
        if pairs and pair is not None:
            k16 = keys[: 2 * pairs].view(np.uint16)
            dst = out_bytes[: 2 * pairs * w].view(_UINT[2 * w])
            for lo in range(0, pairs, FAST_CHUNK):
                hi = min(lo + FAST_CHUNK, pairs)
                idx = _index_buffer(hi - lo)
                idx[...] = k16[lo:hi]
                np.take(pair, idx, out=dst[lo:hi], mode="clip")
        rest = keys[2 * pairs :]
        if rest.size:
            dst1 = out_bytes[2 * pairs * w :].view(_UINT[w])
            for lo in range(0, rest.size, FAST_CHUNK):
                hi = min(lo + FAST_CHUNK, rest.size)
                idx = _index_buffer(hi - lo)
                idx[...] = rest[lo:hi]
                np.take(self.single, idx, out=dst1[lo:hi], mode="clip")


class Scaled:
    """Progress adaptor: one unit of work = ``k`` units of the target."""

    def __init__(self, target: Progress | Scaled, k: int):
        self.target, self.k = target, k

    def add(self, n: int) -> None:
        self.target.add(n * self.k)


def contiguous(prog: Program) -> bool:
    """Whether the loop nest reads one increasing run of stride 1."""
    ents = normalised_entries(prog.limits, prog.strides)
    return not ents or (len(ents) == 1 and ents[0][1] == 1)


def _nest_offsets(flat_index: np.ndarray, limits: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Element offsets ``Σ i_k·stride_k`` of the index tuples with the given
    row-major flat indices in the nest ``limits`` (``int64``)."""
    if not limits:
        return np.zeros(flat_index.shape, dtype=np.int64)
    idx = np.unravel_index(flat_index, tuple(limits))
    out = np.zeros(flat_index.shape, dtype=np.int64)
    for i, s in zip(idx, strides, strict=False):
        out += i.astype(np.int64) * np.int64(s)
    return out


def execute(
    prog: Program, plan: Plan, dm: np.ndarray, out: np.ndarray, threads: int, progress: Progress,
    post: Callable[[np.ndarray, int, int], None] | None = None,
) -> None:  # fmt: skip
    """Fill ``out`` (1-D, sim encoding) with the program's elements.

    The DM is seen as an array of *units*: bytes for 4-/8-bit types (a 4-bit
    unit holds two elements), little-endian words for 16-/32-bit ones.
    ``finish(units, dst)`` turns a contiguous run of units into the output
    elements they hold (table by byte value, stage functions, encoding).
    Programs whose innermost (merged) entry has stride 1 and, for 4-bit,
    whose every row starts on a byte, run row by row (:func:`_run_rows`);
    the rest element by element (:func:`_run_elements`)."""
    four = plan.in_t.is_subbyte
    upe = 2 if four else 1  # elements per unit
    if plan.in_t.bits <= 8:
        units, u0 = dm, prog.base
        lut = None if (plan.no_stages and not four) else byte_lut(plan)
        table = _Lut(lut) if lut is not None else None

        def finish(keys: np.ndarray, dst: np.ndarray) -> None:
            if table is not None:
                table.gather(keys, dst.view(np.uint8))
            elif plan.no_stages:
                dst.view(np.uint8)[:] = keys
            else:  # corrupt zero point: evaluate on the data really read, so the error is exact
                dst[:] = to_sim_encoding(after_lookup(_front(keys, plan).reshape(-1), plan), plan.out_t)

    else:
        size = plan.in_t.bits // 8
        r = prog.base % size
        units = dm[r : r + ((dm.size - r) // size) * size].view(_UINT[size])
        u0 = (prog.base - r) // size
        table = None
        lut = word_lut16(plan)

        def finish(keys: np.ndarray, dst: np.ndarray) -> None:  # keys: 16- or 32-bit words
            dst[:] = _wide(keys, plan, lut)

    ents = normalised_entries(prog.limits, prog.strides) or [(1, 1)]
    n_in, s_in = ents[-1]
    rows_ok = s_in == 1 and (not four or (n_in % 2 == 0 and all(s % 2 == 0 for _, s in ents[:-1])))
    done = (lambda lo, hi: post(out, lo, hi)) if post is not None else (lambda lo, hi: None)
    # With a hook, work items of about POST_CHUNK_BYTES of output, so the hook reads them from cache.
    item_elems = max(1, POST_CHUNK_BYTES // out.itemsize) if post is not None else None
    if rows_ok:
        unit_chunk = UNIT_CHUNK if item_elems is None else max(1, min(UNIT_CHUNK, item_elems // upe))
        _run_rows(ents, units, u0, upe, finish, out, threads, progress, done, unit_chunk)
    else:
        _run_elements(prog, plan, units, u0, lut, out, threads, progress, done, item_elems or GENERAL_CHUNK)


STRIDED_MIN = 1 << 14
"""Units a group of equally spaced rows must hold to be read through a
strided view (below it, per-unit index arrays are faster than the Python
loop over groups)."""


def _run_rows(
    ents: list[tuple[int, int]],
    units: np.ndarray,
    u0: int,
    upe: int,
    finish: Callable[[np.ndarray, np.ndarray], None],
    out: np.ndarray,
    threads: int,
    progress: Progress,
    done: Callable[[int, int], None],
    unit_chunk: int = UNIT_CHUNK,
) -> None:
    """Loop nests whose innermost entry ``(L : 1)`` is a contiguous row of
    ``L`` elements (``L / upe`` units).  Rows are read as slices (contiguous
    nest, long rows), as strided views (groups of rows spaced by the next
    entry's stride), or through index arrays (short irregular rows); all in
    work items of about ``unit_chunk`` units (:data:`UNIT_CHUNK`) spread over
    the threads."""
    L = ents[-1][0]
    row_units = L // upe
    outer = ents[:-1]
    if not outer:  # the whole nest is one contiguous run

        def whole(lo: int, hi: int) -> None:
            finish(units[u0 + lo : u0 + hi], out[lo * upe : hi * upe])
            done(lo * upe, hi * upe)

        run_chunks(row_units, unit_chunk, whole, threads, Scaled(progress, upe))
        return

    n1, s1 = outer[-1]
    rows = math.prod(n for n, _ in outer[:-1]) * n1
    row_start = _row_start(outer, u0, upe)
    per_item = max(1, unit_chunk // row_units)
    work: Callable[[int, int], None]
    if row_units > unit_chunk:  # long rows: one row per work item, sliced
        work, per_item = _long_rows(row_start, L, upe, unit_chunk, units, finish, out, done), 1
    elif n1 * row_units >= STRIDED_MIN:  # groups of n1 equally spaced rows: strided views
        work = _strided_rows(row_start, n1, s1, L, upe, units, finish, out, done)
    else:  # short irregular rows: one index per unit
        work = _indexed_rows(row_start, L, upe, units, finish, out, done)
    run_chunks(rows, per_item, work, threads, Scaled(progress, L))


def _row_start(outer: list[tuple[int, int]], u0: int, upe: int) -> Callable[[np.ndarray], np.ndarray]:
    """The function giving the unit index of the first unit of rows ``r``
    (numbered in hardware order) of a nest whose entries above the row are
    ``outer``."""
    n1, s1 = outer[-1]
    glim = [n for n, _ in outer[:-1]]
    gstr = [s for _, s in outer[:-1]]

    def row_start(r: np.ndarray) -> np.ndarray:
        g, j = np.divmod(r, n1)
        return u0 + (_nest_offsets(g, glim, gstr) + j * np.int64(s1)) // upe

    return row_start


def _long_rows(row_start, L, upe, unit_chunk, units, finish, out, done) -> Callable[[int, int], None]:
    """The work on rows ``[lo, hi)`` of ``L`` elements each, every row read
    as slices of at most ``unit_chunk`` units."""
    row_units = L // upe

    def work(lo: int, hi: int) -> None:
        for r in range(lo, hi):
            start = int(row_start(np.array([r]))[0])
            for c in range(0, row_units, unit_chunk):
                c2 = min(c + unit_chunk, row_units)
                finish(units[start + c : start + c2], out[r * L + c * upe : r * L + c2 * upe])
                done(r * L + c * upe, r * L + c2 * upe)

    return work


def _strided_rows(row_start, n1, s1, L, upe, units, finish, out, done) -> Callable[[int, int], None]:
    """The work on rows ``[lo, hi)`` of ``L`` elements each, read group by
    group (``n1`` rows spaced by ``s1`` elements) through strided views."""
    row_units = L // upe
    step = (s1 // upe) * units.itemsize

    def work(lo: int, hi: int) -> None:
        r = lo
        while r < hi:
            r2 = min(hi, (r // n1 + 1) * n1)  # stay inside one group
            first = int(row_start(np.array([r]))[0])
            low = first + min(0, (r2 - r - 1) * (s1 // upe))
            view = np.lib.stride_tricks.as_strided(
                units[low:], shape=(r2 - r, row_units), strides=(abs(step), units.itemsize), writeable=False
            )
            if step < 0:
                view = view[::-1]
            finish(np.ascontiguousarray(view).reshape(-1), out[r * L : r2 * L])
            done(r * L, r2 * L)
            r = r2

    return work


def _indexed_rows(row_start, L, upe, units, finish, out, done) -> Callable[[int, int], None]:
    """The work on rows ``[lo, hi)`` of ``L`` elements each, gathered through
    one index per unit."""
    col = np.arange(L // upe, dtype=np.int64)

    def work(lo: int, hi: int) -> None:
        starts = row_start(np.arange(lo, hi, dtype=np.int64))
        finish(units[(starts[:, None] + col[None, :]).reshape(-1)], out[lo * L : hi * L])
        done(lo * L, hi * L)

    return work


def _run_elements(
    prog: Program,
    plan: Plan,
    units: np.ndarray,
    u0: int,
    lut: np.ndarray | None,
    out: np.ndarray,
    threads: int,
    progress: Progress,
    done: Callable[[int, int], None],
    item_elems: int = GENERAL_CHUNK,
) -> None:
    """Any loop nest, element by element: chunks of at most
    :data:`GENERAL_CHUNK` element offsets (broadcast from the entries), the
    unit of each, and for 4-bit the nibble ``e % 2``."""
    inner, olim, ostr, ocount = _offset_chunks(prog.limits, prog.strides)
    per = inner.size
    four = plan.in_t.is_subbyte

    def work(lo: int, hi: int) -> None:
        outer = _nest_offsets(np.arange(lo, hi, dtype=np.int64), olim, ostr)
        offs = (outer[:, None] + inner[None, :]).reshape(-1)
        dst = out[lo * per : hi * per]
        if four:
            keys = units[u0 + (offs >> 1)]
            sel = (offs & 1).astype(np.intp)
        else:
            keys = units[u0 + offs]
            sel = np.zeros(offs.size, dtype=np.intp)
        if plan.in_t.bits > 8:
            dst[:] = _wide(keys, plan, lut)
        elif lut is not None:
            dst[:] = lut.reshape(-1)[keys.astype(np.intp) * lut.shape[1] + sel]
        elif plan.no_stages:
            dst[:] = keys.view(dst.dtype)
        else:  # corrupt zero point: evaluate on the data really read, so the error is exact
            vals = _front(keys, plan)[np.arange(keys.size), sel]
            dst[:] = to_sim_encoding(after_lookup(vals, plan), plan.out_t)
        done(lo * per, hi * per)

    run_chunks(ocount, max(1, item_elems // per), work, threads, Scaled(progress, per))


def _offset_chunks(limits: Sequence[int], strides: Sequence[int]):
    """``(inner_offsets, outer_limits, outer_strides, outer_count)``: the
    innermost entries whose product fits :data:`GENERAL_CHUNK` are expanded
    once; a chunk is a run of outer flat indices."""
    k = len(limits) - 1
    while k > 0 and math.prod(limits[k - 1 :]) <= GENERAL_CHUNK:
        k -= 1
    inner = np.zeros((), dtype=np.int64)
    for n, s in zip(limits[k:], strides[k:], strict=False):
        inner = inner[..., None] + np.arange(n, dtype=np.int64) * np.int64(s)
    return inner.reshape(-1), tuple(limits[:k]), tuple(strides[:k]), math.prod(limits[:k])
