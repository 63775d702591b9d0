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
  bits.  A function table keyed by a 16-bit type (``bf16``, ``i16``;
  hardware.md §2.1b): key = the element's ``u16`` bit pattern, 65536
  entries.
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

The engine (how programs execute, threads, progress) is
:mod:`fetchc.golden.engine`; this module is the file-level API.

Public API: :class:`SimError`, :func:`simulate_program`, :func:`simulate`,
:func:`stream_shape`, :func:`program_key`, :func:`check_memory`,
:func:`check_output_size`, :func:`output_limit_bytes`, the shared stage
functions :func:`table_lookup_bytes`, :func:`cast_values`,
:func:`zp_sub_values` (from the engine), and the encoding helpers
:func:`sim_dtype`, :func:`to_sim_encoding`, :func:`from_sim_encoding`,
:func:`pack_elements`.
"""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from fetchc.golden.engine import (
    Progress,
    SimError,
    cast_values,
    check_read_bounds,
    default_threads,
    execute,
    plan_program,
    table_lookup_bytes,
    zp_sub_values,
)
from fetchc.process import memory_budget
from fetchc.seqbin import Program, SeqBin, Table
from fetchc.target import SLICE_DM_BYTES
from fetchc.target.encoding import from_sim_encoding, pack_elements, sim_dtype, to_sim_encoding
from fetchc.wording import a_or_an

__all__ = [
    "SimError",
    "simulate_program",
    "simulate",
    "simulate_slices",
    "slice_program",
    "stream_shape",
    "program_key",
    "check_program_name",
    "read_dm_image",
    "check_memory",
    "check_output_size",
    "output_limit_bytes",
    "check_read_bounds",
    "table_lookup_bytes",
    "cast_values",
    "zp_sub_values",
    "sim_dtype",
    "to_sim_encoding",
    "from_sim_encoding",
    "pack_elements",
]


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


def check_memory(
    sb: SeqBin,
    dm_bytes: int,
    program: str | None = None,
    *,
    dm_loaded: bool = False,
    indices: Iterable[int] | None = None,
    input_bytes: int = 0,
    command: str = "fetchc sim",
    slices: int = 1,
) -> None:
    """Raise :class:`SimError` before anything is allocated when the DM image
    (``dm_bytes``), the input arrays still to be read (``input_bytes``) and
    the outputs of the programs that will run (all of them, the one named
    ``program``, or the PROGRAMS records ``indices``) need more than
    :func:`output_limit_bytes` together: each may fit while all of them do
    not.  ``dm_loaded``: the image is already in memory (it then counts only
    against an explicit or physical-memory limit, not against the address
    space left, which already excludes it).  A program whose record is too
    broken to size is skipped here; running it reports the error.
    ``command`` names the command in the message (``fetchc run``);
    ``slices``: every program runs on that many slices (its output is that
    many times larger; ``dm_bytes`` counts every slice's image)."""
    limit, from_free_space = _memory_budget()
    if dm_loaded and from_free_space:
        dm_bytes = 0
    hint = "set FETCHC_SIM_MAX_BYTES to change the limit"
    if dm_bytes > limit:
        raise SimError(f"the DM image is {dm_bytes} bytes, more than the {limit} bytes {command} may allocate ({hint})")
    chosen = None if indices is None else set(indices)
    total = elements = 0
    names: list[str] = []
    for i, prog in enumerate(sb.programs):
        key = program_key(prog, i)
        if (program is not None and key != program) or (chosen is not None and i not in chosen):
            continue
        try:
            n = math.prod(prog.limits)
            size = sim_dtype(prog.out_dtype).itemsize
        except Exception:  # noqa: BLE001 - a corrupt record: its own run reports it
            continue
        elements += n * slices
        total += n * size * slices
        names.append(key)
    if dm_bytes + input_bytes + total <= limit:
        return
    parts = [f"the {dm_bytes}-byte DM image"] if dm_bytes else []
    if input_bytes:
        parts.append(f"{input_bytes} bytes of input arrays")
    if not names:
        raise SimError(f"{' and '.join(parts)} need more than the {limit} bytes {command} may allocate ({hint})")
    with_rest = f", which with {' and '.join(parts)} is" if parts else ", which is"
    what = (
        f"program {names[0]}: its loop nest produces {elements} elements ({total} bytes)"
        if len(names) == 1
        else f"the {len(names)} programs produce {elements} elements ({total} bytes) together"
    )
    if len(names) > 1 and command == "fetchc sim":
        hint += ", or run one program at a time with --program"
    raise SimError(f"{what}{with_rest} more than the {limit} bytes {command} may allocate ({hint})")


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
    plan = plan_program(prog, tables, label)
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
    nthreads = default_threads() if threads is None else max(1, int(threads))
    bar = Progress(label, total, progress, progress_prefix)
    try:
        execute(prog, plan, dm, result, nthreads, bar, post)
    finally:
        bar.close()
    return result.reshape(total // psize, psize)


# --------------------------------------------------------------------------
# Whole files
# --------------------------------------------------------------------------


MAX_DIMS = 64
"""numpy's limit on an array's dimensions (``NPY_MAXDIMS``): a stream or a
tensor of higher rank cannot be returned."""


def slice_program(prog: Program, slices: int, slice_bytes: int) -> Program:
    """``prog`` as one program over ``slices`` DM images laid end to end,
    ``slice_bytes`` each (hardware.md §1a: every slice runs the same register
    block on its own DM): one more, outermost loop entry ``(slices :
    slice_bytes in elements of in_dtype)``.  ``prog`` itself for one slice.
    Raises :class:`SimError` when ``slice_bytes`` is not a whole number of
    elements."""
    if slices == 1:
        return prog
    bits = prog.in_dtype.bits
    if (slice_bytes * 8) % bits:
        raise SimError(
            f"{a_or_an(f'{slice_bytes}-byte')} slice image is not a whole number of {prog.in_dtype} elements"
        )
    return dataclasses.replace(prog, limits=(slices, *prog.limits), strides=(slice_bytes * 8 // bits, *prog.strides))


def simulate_slices(
    prog: Program, tables: Sequence[Table], images: np.ndarray, *, name: str | None = None, **kw
) -> np.ndarray:
    """Run ``prog`` on every slice's DM image at once (ir.md §2a, §5):
    ``images`` is ``(slices, bytes)`` ``uint8``, row ``s`` slice ``s``'s DM;
    the slices run as **one** batched simulation (:func:`slice_program`), not
    a loop.  Every read is checked against one slice's image first, so no
    program reads into the next slice.  Returns ``(slices, packets,
    packet_size)`` in the sim encoding.  Keyword arguments go to
    :func:`simulate_program` (a ``post`` hook sees the flat output of all
    slices, slice-major; ``out`` must hold every slice's elements).  Raises
    :class:`SimError`."""
    if not (isinstance(images, np.ndarray) and images.dtype == np.uint8 and images.ndim == 2):
        raise SimError("the slices' DM images must be a 2-D uint8 array")
    slices, size = images.shape
    label = name if name is not None else (prog.name if prog.name is not None else "(unnamed)")
    if not prog.limits or len(prog.limits) != len(prog.strides):
        raise SimError(f"program {label}: needs 1 or more positive limits and as many strides")
    check_read_bounds(prog, label, size)
    batched = slice_program(prog, slices, size)
    arr = simulate_program(batched, tables, np.ascontiguousarray(images).reshape(-1), name=label, **kw)
    return arr.reshape(slices, -1, prog.packet_size)


def program_key(prog: Program, index: int) -> str:
    """The name a program's result is keyed by: its ``name``, or ``#<index>``
    for an unnamed one (word 1 = 0xFFFFFFFF)."""
    return prog.name if prog.name is not None else f"#{index}"


def check_program_name(sb: SeqBin, program: str | None) -> None:
    """Raise :class:`SimError` when ``program`` is given and names no program
    of ``sb`` (:func:`program_key`); the message lists the names.  Checked
    before anything is read or sized for that program."""
    if program is None:
        return
    keys = [program_key(p, i) for i, p in enumerate(sb.programs)]
    if program not in keys:
        names = ", ".join(repr(k) for k in keys) or "none"
        raise SimError(f"no program named {program!r}; the file has: {names}")


def read_dm_image(f: io.RawIOBase | io.BufferedIOBase, size: int | None, limit: int) -> np.ndarray:
    """One slice's DM image from the binary file object ``f`` (``fetchc sim
    --dm``), as a 1-D ``uint8`` array, read into one allocation of at most
    ``min(SLICE_DM_BYTES, limit) + 1`` bytes, however long ``f`` is (a pipe,
    ``/dev/zero``).  ``size``: the file's size when it is a regular file
    (refused before anything is read when it is too large), else None.
    ``limit``: the memory budget (:func:`output_limit_bytes`).

    Raises :class:`SimError`: an image larger than one slice's DM
    (:data:`fetchc.target.SLICE_DM_BYTES`, 2^19 bytes, hardware.md §1a: no
    address beyond it exists, so no byte beyond it can be read), or larger
    than ``limit``; ``OSError`` from reading."""
    bound = SLICE_DM_BYTES
    what = f"more than the {bound} bytes of one slice's DM (hardware.md §1a): --dm takes one slice's image"
    if size is not None and size > bound:
        raise SimError(f"the DM image is {size} bytes, {what}")
    cap = min(bound, limit)
    buf = np.empty(cap + 1, dtype=np.uint8)
    view, n = buf.data, 0
    while n <= cap:
        got = f.readinto(view[n:])
        if not got:
            break
        n += got
    if n > cap:
        if cap == bound:
            raise SimError(f"the DM image is {what}")
        raise SimError(
            f"the DM image is more than the {limit} bytes fetchc sim may allocate "
            "(set FETCHC_SIM_MAX_BYTES to change the limit)"
        )
    return buf[:n]


def stream_shape(sb: SeqBin, index: int) -> tuple[int, ...] | None:
    """The stream shape (time dims then packet dims, ir.md §5) of PROGRAMS
    record ``index`` from the file's MANIFEST, or ``None`` for a file
    without one (version 1.0) or a record no kernel lists."""
    if sb.manifest is None:
        return None
    found = sb.manifest.program(index)
    if found is None:
        return None
    kp = found[1]
    if len(kp.shape) > MAX_DIMS:
        raise SimError(
            f"program {index}: its stream has rank {len(kp.shape)} (time {len(kp.time)} dims, packet "
            f"{len(kp.packet)}), more than the {MAX_DIMS} dimensions a numpy array (the output) can have"
        )
    return kp.shape


def simulate(
    sb: SeqBin, dm: bytes | np.ndarray, program: str | None = None, *, shaped: bool = False, **kw
) -> dict[str, np.ndarray]:
    """Run every program of ``sb`` (file order) on the DM image ``dm``, or
    only the one named ``program``.  Returns ``{name: array}`` as
    :func:`simulate_program` produces (keys: :func:`program_key`), or with
    ``shaped=True`` each reshaped to its stream's time then packet dims
    (:func:`stream_shape`; unchanged for a file without MANIFEST; a stream
    of more than :data:`MAX_DIMS` dims is a :class:`SimError`).  Programs
    are independent: each reads the same image (nothing is committed).
    Extra keyword arguments go to :func:`simulate_program`.

    Raises :class:`SimError`: unknown ``program`` (the message lists the
    names), two programs with the same name, the DM image and all outputs
    needing more memory than :func:`output_limit_bytes` (:func:`check_memory`,
    checked before any program runs), or any error of a program."""
    dm_arr = np.frombuffer(dm, dtype=np.uint8) if isinstance(dm, (bytes, bytearray, memoryview)) else np.asarray(dm)
    keys = [program_key(p, i) for i, p in enumerate(sb.programs)]
    check_program_name(sb, program)
    check_memory(sb, dm_arr.nbytes, program, dm_loaded=True)
    seen: set[str] = set()
    for k in keys:
        if k in seen:
            raise SimError(f"two programs are named {k!r}; results are keyed by program name")
        seen.add(k)
    if program is not None:
        chosen = [keys.index(program)]
    else:
        chosen = list(range(len(keys)))
    shapes = {i: stream_shape(sb, i) if shaped else None for i in chosen}  # checked before any work
    out: dict[str, np.ndarray] = {}
    for i in chosen:
        arr = simulate_program(sb.programs[i], sb.tables, dm_arr, name=keys[i], **kw)
        out[keys[i]] = arr if shapes[i] is None else arr.reshape(shapes[i])
    return out
