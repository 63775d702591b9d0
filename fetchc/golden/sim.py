"""The golden model: the Fetch Unit executing a ``seq.bin`` on a DM image.

Spec: ``hardware.md`` §2 (the adapter stages: table lookup → type cast →
zero-point subtraction), §3 (the sequencer loop nest, 4-bit packing),
``seqbin.md`` (the program and table records), ``ir.md`` §5 (the ``fetchc
sim`` row: output element encoding).  Every hardware fact comes from
:mod:`fetchc.target`.

What one program does (:func:`simulate_program`)
-----------------------------------------------

* **Sequencer.**  ``limits[k]`` / ``strides[k]`` (entry 0 outermost; strides
  in **elements** of ``in_dtype``, negative and 0 allowed) enumerate, in
  hardware order, every index tuple ``(i_0, ..., i_{n-1})``; the element read
  is at element offset ``e = Σ i_k · stride_k`` from ``base`` (a DM **byte**
  address).  For 8/16/32-bit types element ``e`` occupies bytes
  ``base + e·size ... base + e·size + size - 1`` (little-endian).  For the
  4-bit types (``i4``, ``f4E2M1FN``) element ``e`` lives in byte
  ``base + floor(e / 2)``, in the **low** nibble when ``e`` is even and the
  **high** nibble when odd (element ``2i`` low, ``2i+1`` high, with ``base``
  itself holding elements 0 and 1).
* **Table lookup** goes through the table **bytes stored in the file** (never
  a recomputed reference table).  Paired (4-bit input): the key is the byte
  that holds the element; entry low byte = the decoded even element, high
  byte = the decoded odd element, so element ``e`` takes byte ``e % 2`` of
  ``entries[key]``.  (A hardware-legal 4-bit program always reads whole bytes,
  so this is exactly "one lookup decodes two elements"; for a hand-made file
  that starts a packet on an odd element it is the natural generalisation.)
  Non-paired (8-bit input): key = the element's byte, entry = the ``bf16``
  bits.
* **Type cast** per code (:data:`fetchc.target.CAST_CODES`) with RNGD's
  float semantics (hardware.md §2.2a, :mod:`fetchc.target.numerics`):
  integers sign-extend to ``i32``; ``f8E4M3FN`` / ``f8E5M2`` / ``bf16``
  widen to ``f32`` exactly except that a ``bf16`` subnormal gives a zero of
  its sign and NaNs become ``0x7FC00000`` (``f8E5M2``: ``0xFFC00000`` for a
  negative NaN); ``f32 → bf16`` rounds to nearest even, a subnormal gives a
  zero of its sign, any NaN gives ``0x7FC0``.  See :func:`cast_values`.
* **Zero point**: ``out = in - zero_point`` into ``i5`` / ``i9``; a residual
  outside ``[-16, 15]`` / ``[-256, 255]`` raises :class:`SimError` (only a
  corrupt zero point can cause it).  See :func:`zp_sub_values`.

Output (``ir.md`` §5 element encoding, :func:`to_sim_encoding`): ``f32``,
``i32``, ``i8``, ``i16`` as themselves; ``bf16`` and the 8-bit floats as raw
bits in ``uint16`` / ``uint8``; ``i5`` as ``int8``; ``i9`` as ``int16``; a
4-bit stream without lookup as its 4-bit codes (0-15) in ``uint8``, for
``i4`` too (its two's-complement code: -1 is 15).

Output shape: :func:`simulate_program` returns ``(prod(limits) //
packet_size, packet_size)``, one row per packet in hardware order (a
PROGRAMS record holds no stream shape).  :func:`simulate` with
``shaped=True`` (what ``fetchc sim`` uses) reshapes each result to the
stream's time dims then packet dims from the file's MANIFEST
(:func:`stream_shape`, ir.md §5); a 1.0 file without MANIFEST keeps
``(packets, packet_size)``.

Reads outside the DM image raise :class:`SimError` naming the address; the
image is never wrapped or padded.

Speed (everything vectorised with numpy; work items spread over up to 4
threads, numpy releasing the GIL):

* 4-/8-bit inputs never decode per element in Python: the stage chain is
  tabulated once per key byte (:func:`_byte_lut`: the **file's** table entries,
  then cast / zero point, in the output encoding), and pairs of key bytes
  index a 65536-entry table derived from it, so one ``np.take`` over the
  bytes (viewed as ``u16``) yields four e2m1 decodes per index.  For a paired
  lookup with no cast that table is exactly the file's ``(256,)`` ``u16``
  entries, two keys at a time (each entry's bytes are the elements in order
  low, high).
* A contiguous program (the merged loop nest is one increasing run of stride
  1) slices the DM bytes directly.  Row-structured programs (innermost merged
  entry of stride 1) read each row as a slice or, for groups of equally
  spaced rows, through a strided view (one copy of the bytes, no index
  arrays); short irregular rows use one index per DM unit.  Anything else (inner broadcast, one-element packets with a
  stride) goes element by element in chunks of at most 4 Mi elements, offsets
  from broadcasting the entries.  Memory beyond the output stays bounded.
* The pair tables are remembered by content; each ``np.take`` handles
  :data:`FAST_CHUNK` indices so that the index buffer, the output and the
  table stay in the L2 cache.
* A ``post`` hook (``fetchc run``'s Vector Engine ops) runs on each work
  item's output right after it is written, with work items of
  :data:`POST_CHUNK_BYTES` of output, so it finds them in cache.
* Progress goes to stderr only when it is a TTY and the program is long.

Public API: :class:`SimError`, :func:`simulate_program`, :func:`simulate`,
:func:`stream_shape`, the shared stage functions
:func:`table_lookup_bytes`, :func:`cast_values`, :func:`zp_sub_values`, and
the encoding helpers :func:`sim_dtype`, :func:`to_sim_encoding`,
:func:`from_sim_encoding`, :func:`pack_elements`.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from fetchc.process import memory_budget
from fetchc.seqbin import Program, SeqBin, SeqBinError, Table, read
from fetchc.target import (
    CAST_CODES,
    LOOKUP_TABLES,
    TABLE_ENTRIES,
    ElementType,
    ZeroPointRule,
)
from fetchc.target import numerics
from fetchc.target.encoding import from_sim_encoding, pack_elements, sim_dtype, to_sim_encoding
from fetchc.target.record import RecordError, stage_chain

__all__ = [
    "SimError",
    "simulate_program",
    "simulate",
    "stream_shape",
    "program_key",
    "check_read_bounds",
    "table_lookup_bytes",
    "cast_values",
    "zp_sub_values",
    "sim_dtype",
    "to_sim_encoding",
    "from_sim_encoding",
    "pack_elements",
]

from fetchc.target.encoding import UINT as _UINT  # noqa: E402

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
# Adapter stages on arrays (shared with fetchc.interp)
# --------------------------------------------------------------------------


def table_entries(table: Table) -> np.ndarray:
    """The table's 256 stored entries, ``(256,)`` ``uint16`` (from its bytes)."""
    return np.frombuffer(table.entries, dtype="<u2").astype(np.uint16)


def table_lookup_bytes(keys: np.ndarray, table: Table) -> np.ndarray:
    """The table-lookup stage through the table's **stored bytes**
    (hardware.md §2.1, seqbin.md TABLES).

    ``keys``: ``uint8`` key bytes, any shape.  Paired table: returns shape
    ``keys.shape + (2,)``, ``[..., 0]`` the even (low-nibble) element and
    ``[..., 1]`` the odd one, i.e. the entry's low and high byte.  Non-paired:
    returns ``keys.shape``, the entry's 16 bits.  Values are canonical
    (``table.out_dtype.np_dtype``).  Raises :class:`SimError` when the table
    record is not one of the four tables."""
    src, dst = table.in_dtype, table.out_dtype
    if LOOKUP_TABLES.get((src, dst)) is None or LOOKUP_TABLES[(src, dst)] != table.paired:
        raise SimError(f"table {src} -> {dst} (paired={table.paired}) is not one of the hardware's four tables")
    if len(table.entries) != 2 * TABLE_ENTRIES:
        raise SimError(f"table {src} -> {dst} holds {len(table.entries)} bytes, not {2 * TABLE_ENTRIES}")
    e = table_entries(table)[np.asarray(keys, dtype=np.uint8)]
    if table.paired:
        pair = np.stack([e & 0xFF, e >> 8], axis=-1).astype(np.uint8)
        return pair.view(dst.np_dtype)
    return e.view(dst.np_dtype)


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
class _Plan:
    name: str
    in_t: ElementType
    out_t: ElementType
    table: Table | None
    cast: tuple[ElementType, ElementType] | None
    zp: tuple[ZeroPointRule, int] | None

    @property
    def no_stages(self) -> bool:
        return self.table is None and self.cast is None and self.zp is None


def _plan(prog: Program, tables: Sequence[Table], name: str) -> _Plan:
    """Check the record's stage chain ``in_dtype -> [table] -> [cast] ->
    [zero point] -> out_dtype`` (:func:`fetchc.target.record.stage_chain`,
    the rule the reader and the verifier apply; an out-of-range zero point
    is accepted: :func:`zp_sub_values` reports the residuals that overflow)
    and resolve it.  Raises :class:`SimError`."""
    try:
        chain = stage_chain(prog, [(t.in_dtype, t.out_dtype) for t in tables], zero_point_range=False)
    except RecordError as e:
        raise SimError(f"program {name}: {e.message}") from None
    table = None if chain.table is None else tables[prog.table]  # type: ignore[index]
    zp = None if chain.zero_point is None else (chain.zero_point, int(prog.zero_point0))
    return _Plan(name, prog.in_dtype, prog.out_dtype, table, chain.cast, zp)


def _after_lookup(values: np.ndarray, plan: _Plan) -> np.ndarray:
    if plan.cast is not None:
        values = cast_values(values, *plan.cast)
    if plan.zp is not None:
        rule, zp = plan.zp
        values = zp_sub_values(values, zp, rule)
    return values


def _front(keys: np.ndarray, plan: _Plan) -> np.ndarray:
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


def _byte_lut(plan: _Plan) -> np.ndarray | None:
    """The whole stage chain evaluated for every key byte, in the sim
    encoding: ``(256, 2)`` (4-bit: even, odd element) or ``(256, 1)``.
    ``None`` when the chain raises for some key (a corrupt zero point): the
    caller then evaluates the chain on the bytes actually read, so the error
    only fires for data that really triggers it."""
    keys = np.arange(TABLE_ENTRIES, dtype=np.uint8)
    try:
        vals = _after_lookup(_front(keys, plan), plan)
    except SimError:
        return None
    return np.ascontiguousarray(to_sim_encoding(vals, plan.out_t))


# --------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------


def _default_threads() -> int:
    env = os.environ.get("FETCHC_SIM_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover
        n = os.cpu_count() or 1
    return max(1, min(n, 4))


class _Progress:
    """A ``\\r``-updated percentage line on stderr (``<prefix>: <label>:
    NN%``), only when stderr is a TTY and the job is long (``total`` of at
    least :data:`PROGRESS_MIN` units).  Thread-safe.  ``fetchc run`` uses it
    too, with its own prefix."""

    def __init__(self, label: str, total: int, enabled: bool | None, prefix: str = "fetchc sim"):
        if enabled is None:
            enabled = total >= PROGRESS_MIN and _stderr_is_tty()
        self.enabled = enabled
        self.label = f"{prefix}: {label}" if prefix else label
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


def _run_chunks(n: int, chunk: int, fn: Callable[[int, int], None], threads: int, progress: _Progress) -> None:
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


def _normalised_entries(limits: Sequence[int], strides: Sequence[int]) -> list[tuple[int, int]]:
    """Entries with size-1 ones dropped and mergeable neighbours merged
    (``s_o == n_i * s_i``), with no size limit: the same address sequence."""
    merged: list[tuple[int, int]] = []  # innermost first
    for n, s in reversed([(n, s) for n, s in zip(limits, strides) if n != 1]):
        if merged and s == merged[-1][0] * merged[-1][1]:
            merged[-1] = (n * merged[-1][0], merged[-1][1])
        else:
            merged.append((n, s))
    return list(reversed(merged))


def check_read_bounds(prog: Program, name: str, dm_size: int) -> None:
    """Raise :class:`SimError` unless every byte the loop nest reads lies in
    ``[0, dm_size)``.  The extremes of ``Σ i_k·stride_k`` are reached, so
    checking them checks every read."""
    lo_e = sum(min(0, s * (n - 1)) for n, s in zip(prog.limits, prog.strides))
    hi_e = sum(max(0, s * (n - 1)) for n, s in zip(prog.limits, prog.strides))
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
    """The stage chain tabulated per key byte (from :func:`_byte_lut`),
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
        pairs = n // 2 if self.pair is not None else 0
        if pairs:
            k16 = keys[: 2 * pairs].view(np.uint16)
            dst = out_bytes[: 2 * pairs * w].view(_UINT[2 * w])
            for lo in range(0, pairs, FAST_CHUNK):
                hi = min(lo + FAST_CHUNK, pairs)
                idx = _index_buffer(hi - lo)
                idx[...] = k16[lo:hi]
                np.take(self.pair, idx, out=dst[lo:hi], mode="clip")
        rest = keys[2 * pairs :]
        if rest.size:
            dst1 = out_bytes[2 * pairs * w :].view(_UINT[w])
            for lo in range(0, rest.size, FAST_CHUNK):
                hi = min(lo + FAST_CHUNK, rest.size)
                idx = _index_buffer(hi - lo)
                idx[...] = rest[lo:hi]
                np.take(self.single, idx, out=dst1[lo:hi], mode="clip")


class _Scaled:
    """Progress adaptor: one unit of work = ``k`` units of the target."""

    def __init__(self, target: "_Progress | _Scaled", k: int):
        self.target, self.k = target, k

    def add(self, n: int) -> None:
        self.target.add(n * self.k)


def output_limit_bytes() -> int:
    """The most memory, in bytes, ``fetchc sim`` may allocate for the DM
    image and the outputs of the programs it runs, together (checked before
    anything is allocated: :func:`check_memory`, :func:`check_output_size`):
    the ``FETCHC_SIM_MAX_BYTES`` environment variable, else the machine's
    physical memory (``os.sysconf``, else 2^34), capped, when an
    address-space limit (``RLIMIT_AS``, ``ulimit -v``) is set, at three
    quarters of the address space the process has left under it (memory
    already allocated, such as a loaded DM image, is then not counted
    again).  Raises :class:`SimError` for a malformed
    ``FETCHC_SIM_MAX_BYTES``."""
    return _memory_budget()[0]


def _memory_budget() -> tuple[int, bool]:
    try:
        return memory_budget("FETCHC_SIM_MAX_BYTES")
    except ValueError as e:
        raise SimError(str(e)) from None


def check_output_size(elements: int, itemsize: int, label: str) -> None:
    """Raise :class:`SimError` before allocating when a program's output
    (``elements`` × ``itemsize`` bytes) exceeds :func:`output_limit_bytes`:
    a small, valid ``seq.bin`` can declare a loop nest of 2^85 elements."""
    need = elements * itemsize
    limit = output_limit_bytes()
    if need > limit:
        raise SimError(
            f"program {label}: its loop nest produces {elements} elements ({need} bytes), more than the "
            f"{limit} bytes fetchc sim may allocate (set FETCHC_SIM_MAX_BYTES to change the limit)"
        )


def check_memory(sb: SeqBin, dm_bytes: int, program: str | None = None, *, dm_loaded: bool = False) -> None:
    """Raise :class:`SimError` before anything is allocated when the DM image
    (``dm_bytes``) and the outputs of the programs :func:`simulate` would run
    (all of them, or the one named ``program``) need more than
    :func:`output_limit_bytes` together: each program may fit while all of
    them do not.  ``dm_loaded``: the image is already in memory (it then
    counts only against an explicit or physical-memory limit, not against
    the address space left, which already excludes it).  A program whose
    record is too broken to size is skipped here; running it reports the
    error."""
    limit, from_free_space = _memory_budget()
    if dm_loaded and from_free_space:
        dm_bytes = 0
    if dm_bytes > limit:
        raise SimError(
            f"the DM image is {dm_bytes} bytes, more than the {limit} bytes fetchc sim may allocate "
            f"(set FETCHC_SIM_MAX_BYTES to change the limit)"
        )
    total = elements = 0
    names: list[str] = []
    for i, prog in enumerate(sb.programs):
        key = program_key(prog, i)
        if program is not None and key != program:
            continue
        try:
            n = math.prod(prog.limits)
            size = sim_dtype(prog.out_dtype).itemsize
        except Exception:  # noqa: BLE001 - a corrupt record: its own run reports it
            continue
        elements += n
        total += n * size
        names.append(key)
    if names and dm_bytes + total > limit:
        with_dm = f", which with the {dm_bytes}-byte DM image is" if dm_bytes else ", which is"
        what = (
            f"program {names[0]}: its loop nest produces {elements} elements ({total} bytes)"
            if len(names) == 1
            else f"the {len(names)} programs produce {elements} elements ({total} bytes) together"
        )
        hint = "" if len(names) == 1 else ", or run one program at a time with --program"
        raise SimError(
            f"{what}{with_dm} more than the {limit} bytes fetchc sim may "
            f"allocate (set FETCHC_SIM_MAX_BYTES to change the limit{hint})"
        )


def simulate_program(
    prog: Program,
    tables: Sequence[Table],
    dm: np.ndarray | bytes,
    *,
    name: str | None = None,
    threads: int | None = None,
    progress: bool | None = None,
    progress_prefix: str = "fetchc sim",
    post: Callable[[np.ndarray, int, int], None] | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Execute one Fetch Unit program on a DM image, exactly as the hardware
    would (module docstring; hardware.md §2-3).

    * ``prog``: the PROGRAMS record (its ``name`` is only used in messages,
      overridden by ``name``); ``tables``: the file's TABLES, indexed by
      ``prog.table``; the lookup uses their **stored** entry bytes.
    * ``dm``: the DM image, ``uint8`` (1-D) or ``bytes``; byte address 0 is
      its first byte.
    * ``threads``: worker threads (default: up to 4 CPUs, or
      ``$FETCHC_SIM_THREADS``); ``progress``: force the stderr progress line on
      or off (default: on for long runs when stderr is a TTY), shown as
      ``<progress_prefix>: <name>: NN%``.
    * ``post``: called as ``post(out, lo, hi)`` on the worker thread right
      after the output elements ``[lo, hi)`` (flat, hardware order) are
      written, while they are in cache; the ranges cover the output once.
      ``fetchc run`` applies the downstream Vector Engine ops there.
    * ``out``: write the result into this array instead of a new one (as
      numpy's ``out=``): C-contiguous, writable, of dtype :func:`sim_dtype`
      ``(out_dtype)`` and ``prod(limits)`` elements, any shape.  A caller
      that runs programs repeatedly saves the first touch of a fresh array.

    Returns a new array of shape ``(prod(limits) // packet_size,
    packet_size)`` (one row per packet, hardware order; seq.bin does not
    store the stream's time/packet shape) and dtype :func:`sim_dtype`
    ``(out_dtype)`` (ir.md §5 encoding).

    Raises :class:`SimError`: a read outside the image (message names the
    byte address), a record whose stages do not chain ``in_dtype`` to
    ``out_dtype`` or whose table index is out of range, ``packet_size`` not
    dividing the element count, a zero-point residual outside ``i5``/``i9``,
    an ``out`` array of the wrong dtype, size or layout.
    """
    label = name if name is not None else (prog.name if prog.name is not None else "(unnamed)")
    dm = np.frombuffer(dm, dtype=np.uint8) if isinstance(dm, (bytes, bytearray, memoryview)) else np.asarray(dm)
    if dm.dtype != np.uint8:
        raise SimError(f"the DM image must be uint8 bytes, not {dm.dtype}")
    dm = dm.reshape(-1)
    plan = _plan(prog, tables, label)
    if len(prog.limits) != len(prog.strides) or not prog.limits or any(n < 1 for n in prog.limits):
        raise SimError(f"program {label}: needs 1 or more positive limits and as many strides")
    total = math.prod(prog.limits)
    psize = prog.packet_size
    if psize < 1 or total % psize:
        raise SimError(f"program {label}: packet_size {psize} does not divide the {total} elements the loop nest reads")
    check_read_bounds(prog, label, dm.size)
    want = sim_dtype(plan.out_t)
    if out is None:
        check_output_size(total, want.itemsize, label)
        result = np.empty(total, dtype=want)
    else:
        if not (isinstance(out, np.ndarray) and out.dtype == want and out.size == total and out.flags.c_contiguous
                and out.flags.writeable):  # fmt: skip
            raise SimError(f"program {label}: out= must be a writable C-contiguous {want} array of {total} elements")
        result = out.reshape(-1)
    nthreads = _default_threads() if threads is None else max(1, int(threads))
    bar = _Progress(label, total, progress, progress_prefix)
    try:
        _execute(prog, plan, dm, result, nthreads, bar, post)
    finally:
        bar.close()
    return result.reshape(total // psize, psize)


def _contiguous(prog: Program) -> bool:
    """Whether the loop nest reads one increasing run of stride 1."""
    ents = _normalised_entries(prog.limits, prog.strides)
    return not ents or (len(ents) == 1 and ents[0][1] == 1)


def _nest_offsets(flat_index: np.ndarray, limits: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Element offsets ``Σ i_k·stride_k`` of the index tuples with the given
    row-major flat indices in the nest ``limits`` (``int64``)."""
    if not limits:
        return np.zeros(flat_index.shape, dtype=np.int64)
    idx = np.unravel_index(flat_index, tuple(limits))
    out = np.zeros(flat_index.shape, dtype=np.int64)
    for i, s in zip(idx, strides):
        out += i.astype(np.int64) * np.int64(s)
    return out


def _execute(
    prog: Program, plan: _Plan, dm: np.ndarray, out: np.ndarray, threads: int, progress: _Progress,
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
        lut = None if (plan.no_stages and not four) else _byte_lut(plan)
        table = _Lut(lut) if lut is not None else None

        def finish(keys: np.ndarray, dst: np.ndarray) -> None:
            if table is not None:
                table.gather(keys, dst.view(np.uint8))
            elif plan.no_stages:
                dst.view(np.uint8)[:] = keys
            else:  # corrupt zero point: evaluate on the data really read, so the error is exact
                dst[:] = to_sim_encoding(_after_lookup(_front(keys, plan).reshape(-1), plan), plan.out_t)

    else:
        size = plan.in_t.bits // 8
        r = prog.base % size
        units = dm[r : r + ((dm.size - r) // size) * size].view(_UINT[size])
        u0 = (prog.base - r) // size
        lut = table = None

        def finish(words: np.ndarray, dst: np.ndarray) -> None:
            vals = words.view(plan.in_t.np_dtype)
            dst[:] = to_sim_encoding(vals if plan.no_stages else _after_lookup(vals, plan), plan.out_t)

    ents = _normalised_entries(prog.limits, prog.strides) or [(1, 1)]
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
    progress: _Progress,
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

        def work(lo: int, hi: int) -> None:
            finish(units[u0 + lo : u0 + hi], out[lo * upe : hi * upe])
            done(lo * upe, hi * upe)

        _run_chunks(row_units, unit_chunk, work, threads, _Scaled(progress, upe))
        return

    n1, s1 = outer[-1]
    rows = math.prod(n for n, _ in outer[:-1]) * n1
    row_start = _row_start(outer, u0, upe)
    per_item = max(1, unit_chunk // row_units)
    if row_units > unit_chunk:  # long rows: one row per work item, sliced
        work, per_item = _long_rows(row_start, L, upe, unit_chunk, units, finish, out, done), 1
    elif n1 * row_units >= STRIDED_MIN:  # groups of n1 equally spaced rows: strided views
        work = _strided_rows(row_start, n1, s1, L, upe, units, finish, out, done)
    else:  # short irregular rows: one index per unit
        work = _indexed_rows(row_start, L, upe, units, finish, out, done)
    _run_chunks(rows, per_item, work, threads, _Scaled(progress, L))


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
    plan: _Plan,
    units: np.ndarray,
    u0: int,
    lut: np.ndarray | None,
    out: np.ndarray,
    threads: int,
    progress: _Progress,
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
            vals = keys.view(plan.in_t.np_dtype)
            dst[:] = to_sim_encoding(vals if plan.no_stages else _after_lookup(vals, plan), plan.out_t)
        elif lut is not None:
            dst[:] = lut.reshape(-1)[keys.astype(np.intp) * lut.shape[1] + sel]
        elif plan.no_stages:
            dst[:] = keys.view(dst.dtype)
        else:  # corrupt zero point: evaluate on the data really read, so the error is exact
            vals = _front(keys, plan)[np.arange(keys.size), sel]
            dst[:] = to_sim_encoding(_after_lookup(vals, plan), plan.out_t)
        done(lo * per, hi * per)

    _run_chunks(ocount, max(1, item_elems // per), work, threads, _Scaled(progress, per))


def _offset_chunks(limits: Sequence[int], strides: Sequence[int]):
    """``(inner_offsets, outer_limits, outer_strides, outer_count)``: the
    innermost entries whose product fits :data:`GENERAL_CHUNK` are expanded
    once; a chunk is a run of outer flat indices."""
    k = len(limits) - 1
    while k > 0 and math.prod(limits[k - 1 :]) <= GENERAL_CHUNK:
        k -= 1
    inner = np.zeros((), dtype=np.int64)
    for n, s in zip(limits[k:], strides[k:]):
        inner = inner[..., None] + np.arange(n, dtype=np.int64) * np.int64(s)
    return inner.reshape(-1), tuple(limits[:k]), tuple(strides[:k]), math.prod(limits[:k])


# --------------------------------------------------------------------------
# Whole files
# --------------------------------------------------------------------------


def program_key(prog: Program, index: int) -> str:
    """The name a program's result is keyed by: its ``name``, or ``#<index>``
    for an unnamed one (word 1 = 0xFFFFFFFF)."""
    return prog.name if prog.name is not None else f"#{index}"


def stream_shape(sb: SeqBin, index: int) -> tuple[int, ...] | None:
    """The stream shape (time dims then packet dims, ir.md §5) of PROGRAMS
    record ``index`` from the file's MANIFEST, or ``None`` for a file
    without one (version 1.0) or a record no kernel lists."""
    if sb.manifest is None:
        return None
    found = sb.manifest.program(index)
    return None if found is None else found[1].shape


def simulate(
    sb: SeqBin, dm: bytes | np.ndarray, program: str | None = None, *, shaped: bool = False, **kw
) -> dict[str, np.ndarray]:
    """Run every program of ``sb`` (file order) on the DM image ``dm``, or
    only the one named ``program``.  Returns ``{name: array}`` as
    :func:`simulate_program` produces (keys: :func:`program_key`), or with
    ``shaped=True`` each reshaped to its stream's time then packet dims
    (:func:`stream_shape`; unchanged for a file without MANIFEST).  Programs
    are independent: each reads the same image (nothing is committed).
    Extra keyword arguments go to :func:`simulate_program`.

    Raises :class:`SimError`: unknown ``program`` (the message lists the
    names), two programs with the same name, the DM image and all outputs
    needing more memory than :func:`output_limit_bytes` (:func:`check_memory`,
    checked before any program runs), or any error of a program."""
    dm_arr = np.frombuffer(dm, dtype=np.uint8) if isinstance(dm, (bytes, bytearray, memoryview)) else np.asarray(dm)
    keys = [program_key(p, i) for i, p in enumerate(sb.programs)]
    if program is None or program in keys:
        check_memory(sb, dm_arr.nbytes, program, dm_loaded=True)
    seen: set[str] = set()
    for k in keys:
        if k in seen:
            raise SimError(f"two programs are named {k!r}; results are keyed by program name")
        seen.add(k)
    if program is not None:
        if program not in keys:
            names = ", ".join(repr(k) for k in keys) or "none"
            raise SimError(f"no program named {program!r}; the file has: {names}")
        chosen = [keys.index(program)]
    else:
        chosen = list(range(len(keys)))
    out: dict[str, np.ndarray] = {}
    for i in chosen:
        arr = simulate_program(sb.programs[i], sb.tables, dm_arr, name=keys[i], **kw)
        shape = stream_shape(sb, i) if shaped else None
        out[keys[i]] = arr if shape is None else arr.reshape(shape)
    return out
