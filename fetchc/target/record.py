"""The rules of one PROGRAMS record: written once, called by the ``seq.bin``
reader and writer, the ``fetch_seq.program`` verifier and the simulator.

A Fetch Unit register block (seqbin.md PROGRAMS, hardware.md §5) is legal
when its fields describe a configuration the hardware can run:

* :func:`check_program` - every rule below, in this order: ``unit``;
  ``in_dtype`` lives in DM; the loop nest (1 to 8 entries, sizes, i32
  strides, ``base``); ``packet_size``; innermost contiguity; the read
  (``fetch_size``) and ``words_per_packet``; the stage chain; ``flit_count``.
* :func:`stage_chain` - ``in_dtype -> [table] -> [cast] -> [zero point] ->
  out_dtype`` (hardware.md §2): each stage's field present exactly when its
  ``stages`` bit is set, the table keyed by the chain's type and one of the
  four tables, no table on the sub unit, the cast code and its input, the
  cast output of one read within a flit (§2.2), the zero-point mode, count
  and range (§2.3).  Returns the resolved :class:`Chain`.
* :func:`check_table` - every rule of a TABLES record: a decode table's
  pair and pairing (§2.1), a function table's key, output, width, entries,
  scale and zero point (§2.1b).

Errors are :class:`RecordError` ``(field, message)``: ``field`` is the
record field at fault (``"flit_count"``, ``"limits"``, ...), ``message`` one
sentence without a final period.  How a message names fields is the
caller's choice (:class:`Labels`): the ``seq.bin`` reader and writer name
words (``WORDS``: ``flit_count (word 30) is 3; ...``), the IR verifier and
the simulator name fields (``FIELDS``: ``flit_count is 3; ...``).

Numpy-free; every fact comes from :mod:`fetchc.target.facts` and the
contiguous run from :func:`fetchc.target.sequencer.contiguous_run`.
Spec: hardware.md §2 (stages), §3 (sequencer: contiguity, read size), §5;
seqbin.md PROGRAMS and TABLES.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fetchc.target.facts import (
    ALL_STAGES,
    BASE_LIMIT,
    CAST_BY_CODE,
    CAST_STAGE,
    CONTEXTS,
    FLIT_BYTES,
    LOOKUP_TABLES,
    MASKING_STAGE,
    MAX_ENTRIES,
    MAX_ENTRY_SIZE,
    READ_BYTES,
    SUB_READ_BYTES,
    TABLE_ENTRIES,
    TABLE_ENTRY_BYTES,
    TABLE_KEY_BYTES,
    TABLE_LOOKUP_STAGE,
    ZERO_POINT,
    ZERO_POINT_STAGE,
    ElementType,
    StageKind,
    ZeroPointRule,
    cast_fits_flit,
    flit_count,
    has_table_register,
    innermost_ok,
    stride_fits,
)
from fetchc.target.functions import (
    FUNCTION_KEYS,
    FUNCTION_OUTPUT,
    FUNCTIONS,
    function_names,
    is_function_key,
    key_count,
    scale_problem,
    zero_point_range,
)
from fetchc.target.functions import key_bytes as fn_key_bytes
from fetchc.target.sequencer import contiguous_run
from fetchc.wording import a_or_an, count

__all__ = [
    "RecordError",
    "Labels",
    "FIELDS",
    "Fields",
    "Chain",
    "check_program",
    "check_entry_count",
    "check_unit",
    "check_in_dtype",
    "check_table",
    "stage_chain",
    "read_elements",
]


class RecordError(Exception):
    """A record field that breaks a hardware rule.  ``field``: the record
    field's name (seqbin.md PROGRAMS / TABLES); ``message``: one sentence
    without a final period, naming fields as the :class:`Labels` asked."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True, eq=False)
class Labels:
    """How messages name fields.  ``positions``: each field's position in
    its record (seqbin.md), named ``unit`` (``flit_count (word 30)``, ``the
    table_lookup stage (stages bit 0)``, ``0xFFFFFFFF`` for an absent value);
    ``None``: bare names (``flit_count``, ``the table_lookup stage``,
    ``none``).  The ``seq.bin`` reader and writer take theirs from the
    record's field table (:data:`fetchc.seqbin.fields.WORDS`)."""

    positions: Mapping[str, int] | None = None
    unit: str = "word"

    def field(self, name: str, k: int | None = None) -> str:
        """``name`` or ``name[k]``, with its position when naming them."""
        text = name if k is None else f"{name}[{k}]"
        if self.positions is None or name not in self.positions:
            return text
        return f"{text} ({self.unit} {self.positions[name] + (k or 0)})"

    def stage(self, s: StageKind) -> str:
        if self.positions is None:
            return f"the {s.name} stage"
        return f"the {s.name} stage (stages bit {s.bit.bit_length() - 1})"

    @property
    def none(self) -> str:
        return "none" if self.positions is None else "0xFFFFFFFF"


FIELDS = Labels()
"""Labels of the IR verifier and the simulator."""


@dataclass(frozen=True)
class Fields:
    """The fields of one PROGRAMS record the rules read (seqbin.md
    PROGRAMS; ``fetchc.seqbin.Program`` adds the name).  ``base`` and
    ``fetch_size`` in bytes; ``packet_size``, ``limits`` and ``strides`` in
    elements of ``in_dtype`` (the used entries only, outermost first);
    ``stages`` the word 24 bit set; ``table`` a TABLES index and
    ``type_conversion`` a cast code, each ``None`` when absent."""

    unit: int
    in_dtype: ElementType
    out_dtype: ElementType
    base: int
    packet_size: int
    fetch_size: int
    limits: tuple[int, ...]
    strides: tuple[int, ...]
    stages: int
    table: int | None
    type_conversion: int | None
    zero_point0: int
    num_zero_points: int
    zp_mode: int
    flit_count: int
    words_per_packet: int


@dataclass(frozen=True)
class Chain:
    """A record's resolved stage chain (hardware.md §2): the table's
    ``(input, output)`` pair, the cast's pair, the zero-point rule (each
    ``None`` when that stage is off) and the type leaving the adapter."""

    in_dtype: ElementType
    table: tuple[ElementType, ElementType] | None
    cast: tuple[ElementType, ElementType] | None
    zero_point: ZeroPointRule | None
    out_dtype: ElementType


TablePairs = Sequence[tuple[ElementType, ElementType]]


# --------------------------------------------------------------------------
# The whole record
# --------------------------------------------------------------------------


def check_program(
    p: Fields,
    tables: TablePairs | None,
    labels: Labels = FIELDS,
    *,
    table_ref: str | None = None,
    masked: bool | None = None,
) -> Chain:
    """Check every rule of one PROGRAMS record (module docstring order) and
    return its resolved :class:`Chain`.

    ``tables``: the ``(input, output)`` pair of each TABLES record, indexed
    by ``p.table`` (``None``: the file has no TABLES section).
    ``table_ref``: how messages name the selected table (default its index).
    ``masked``: whether the program has a masking configuration (its MASKS
    record, the ``fetch_seq.program``'s ``mask``), which the caller checks
    itself (:func:`fetchc.target.mask.check_mask_config`); ``None``: the
    caller has none to give, and the masking stage (``stages`` bit 3) is an
    error.  Raises :class:`RecordError`."""
    L = labels
    check_unit(p.unit, L)
    check_in_dtype(p.in_dtype, L)
    _check_nest(p, L)
    read = read_elements(p, L)
    chain = stage_chain(p, tables, L, table_ref=table_ref, read_elems=read, masked=masked)
    want = flit_count(p.packet_size, p.out_dtype)
    if p.flit_count != want:
        raise RecordError(
            "flit_count",
            f"{L.field('flit_count')} is {p.flit_count}; a packet of {count(p.packet_size, f'{p.out_dtype} element')} "
            f"occupies {count(want, 'flit')}",
        )
    return chain


def check_unit(unit: int, labels: Labels = FIELDS) -> str:
    """``unit`` is 0 (main) or 1 (sub); returns the context name."""
    if unit not in range(len(CONTEXTS)):
        raise RecordError("unit", f"{labels.field('unit')} is {unit}; it must be 0 (main) or 1 (sub)")
    return CONTEXTS[unit]


def check_in_dtype(t: ElementType, labels: Labels = FIELDS) -> None:
    """``in_dtype`` must be a type that lives in DM (not ``i5``/``i9``)."""
    if t.in_flight_only:
        raise RecordError(
            "in_dtype",
            f"{labels.field('in_dtype')} is {t}, which never lives in memory (only the zero-point stage makes it)",
        )


def check_entry_count(n: int, labels: Labels = FIELDS) -> None:
    """A record uses 1 to 8 loop-nest entries (``num_entries``)."""
    if not 1 <= n <= MAX_ENTRIES:
        raise RecordError("num_entries", f"{labels.field('num_entries')} is {n}; it must be 1 to {MAX_ENTRIES}")


def _check_nest(p: Fields, L: Labels) -> None:
    """Loop nest, base, packet size and innermost contiguity (hardware.md §3)."""
    limits, strides = p.limits, p.strides
    check_entry_count(len(limits), L)
    if len(strides) != len(limits):
        raise RecordError("strides", f"{len(limits)} limits but {len(strides)} strides; they must have the same length")
    for k, n in enumerate(limits):
        if not 1 <= n <= MAX_ENTRY_SIZE:
            raise RecordError("limits", f"{L.field('limits', k)} is {n}; a used entry is 1 to {MAX_ENTRY_SIZE}")
    for k, s in enumerate(strides):
        if not stride_fits(s):
            raise RecordError(
                "strides", f"{L.field('strides', k)} is {s}, which does not fit the 32-bit signed stride field"
            )
    if not 0 <= p.base < BASE_LIMIT:
        raise RecordError(
            "base", f"{L.field('base')} is {p.base}, not a DM byte address below 2^19 = {BASE_LIMIT} (one slice's DM)"
        )
    packet = p.packet_size
    if packet < 1:
        raise RecordError("packet_size", f"{L.field('packet_size')} is {packet}; it must be at least 1")
    inner_n, inner_s = limits[-1], strides[-1]
    if not innermost_ok(inner_s, packet):
        raise RecordError(
            "strides",
            f"the innermost entry [{inner_n} : {inner_s}] cannot hold packets of {packet} elements "
            f"(it needs stride 0 or 1, or a one-element packet; hardware.md §3)",
        )


def read_elements(p: Fields, labels: Labels = FIELDS) -> int:
    """Elements per hardware read (``fetch_size`` in elements of
    ``in_dtype``) after checking the read rules of hardware.md §3: a legal
    byte size, exactly 8 bytes on the sub unit, whole elements,
    ``words_per_packet`` reads make one packet, and the read divides
    ``max_access_size = gcd(packet_size, contiguous_run)`` (so each read
    stays inside one contiguous run).  Needs a checked loop nest."""
    L = labels
    fetch, t, packet = p.fetch_size, p.in_dtype, p.packet_size
    if fetch not in READ_BYTES:
        raise RecordError(
            "fetch_size", f"{L.field('fetch_size')} is {fetch}; it must be one of {', '.join(map(str, READ_BYTES))}"
        )
    if p.unit == 1 and fetch != SUB_READ_BYTES:
        raise RecordError(
            "fetch_size", f"{L.field('fetch_size')} is {fetch}; the sub unit reads exactly {SUB_READ_BYTES} bytes"
        )
    if (fetch * 8) % t.bits:
        raise RecordError(
            "fetch_size", f"{L.field('fetch_size')} {count(fetch, 'byte')} is not a whole number of {t} elements"
        )
    elems = fetch * 8 // t.bits
    wpp = p.words_per_packet
    if wpp * elems != packet:
        raise RecordError(
            "words_per_packet",
            f"{L.field('words_per_packet')} is {wpp}, but {count(wpp, 'read')} of {count(elems, f'{t} element')} "
            f"(fetch_size {fetch}) {'is' if wpp == 1 else 'are'} {count(wpp * elems, 'element')}, "
            f"not packet_size {packet}",
        )
    max_access = math.gcd(packet, contiguous_run(list(zip(p.limits, p.strides, strict=False))))
    if max_access % elems:
        raise RecordError(
            "fetch_size",
            f"{L.field('fetch_size')} {count(fetch, 'byte')} reads {count(elems, 'element')}, which does not divide "
            f"the largest contiguous access of {count(max_access, 'element')} (hardware.md §3)",
        )
    return elems


# --------------------------------------------------------------------------
# The stage chain
# --------------------------------------------------------------------------


def stage_chain(
    p: Fields,
    tables: TablePairs | None,
    labels: Labels = FIELDS,
    *,
    table_ref: str | None = None,
    read_elems: int | None = None,
    zero_point_range: bool = True,
    masked: bool | None = None,
) -> Chain:
    """Resolve ``in_dtype -> [table] -> [cast] -> [zero point] -> out_dtype``
    (hardware.md §2) and return it.

    ``tables`` and ``table_ref`` as for :func:`check_program`.
    ``read_elems``: elements per read, to check the cast output of one read
    fits a flit (§2.2); ``None`` skips that check.  ``zero_point_range=False``
    accepts a ``zero_point0`` outside the source range (the simulator runs
    such a record and reports the residuals that overflow).  ``masked`` as
    for :func:`check_program` (the masking stage changes no element type).
    Raises :class:`RecordError`."""
    L = labels
    check_unit(p.unit, L)
    check_in_dtype(p.in_dtype, L)
    if p.stages & ~ALL_STAGES:
        raise RecordError("stages", f"{L.field('stages')} is 0x{p.stages:x}; only bits 0-3 are defined")
    _masking_stage(p, L, masked)
    table = _table_stage(p, tables, L, table_ref)
    t = p.in_dtype if table is None else table[1]
    cast = _cast_stage(p, t, L, read_elems)
    t = t if cast is None else cast[1]
    rule = _zero_point_stage(p, t, L, zero_point_range)
    t = t if rule is None else rule.result
    if t != p.out_dtype:
        raise RecordError(
            "out_dtype", f"{L.field('out_dtype')} is {p.out_dtype} but the stages turn in_dtype {p.in_dtype} into {t}"
        )
    return Chain(p.in_dtype, table, cast, rule, t)


def _masking_stage(p: Fields, L: Labels, masked: bool | None) -> None:
    """The masking stage's bit against its configuration (hardware.md §2.0,
    seqbin.md MASKS): on exactly when the program has one; only on the main
    unit (the sub unit's adapter has only the cast stage)."""
    on = bool(p.stages & MASKING_STAGE.bit)
    if not on and not masked:
        return
    if on and masked is None:
        raise RecordError(
            "stages",
            f"{L.stage(MASKING_STAGE)} is on, but its configuration (the program's MASKS record, seq.bin 1.3) "
            "is not available here",
        )
    if on and not masked:
        raise RecordError("stages", f"{L.stage(MASKING_STAGE)} is on, but the program has no mask configuration")
    if not on:
        raise RecordError("stages", f"the program has a mask configuration, but {L.stage(MASKING_STAGE)} is off")
    if check_unit(p.unit, L) != "main":
        raise RecordError(
            "stages", f"{L.stage(MASKING_STAGE)} is on in the sub unit, whose adapter has only the cast stage"
        )


def _stage_on(p: Fields, stage: StageKind, field: str, value: int | None, ref: str, L: Labels) -> bool:
    """Whether ``stage``'s bit is set; its ``field`` must be present exactly
    then (``ref``: how the message names a present value)."""
    on = bool(p.stages & stage.bit)
    if on and value is None:
        raise RecordError(field, f"{L.stage(stage)} is on but {L.field(field)} is {L.none}")
    if not on and value is not None:
        raise RecordError(field, f"{L.field(field)} is {ref} but {L.stage(stage)} is off; it must be {L.none}")
    return on


def _table_stage(
    p: Fields, tables: TablePairs | None, L: Labels, table_ref: str | None
) -> tuple[ElementType, ElementType] | None:
    idx = p.table
    ref = table_ref if table_ref is not None else str(idx)
    tab = L.field("tables")
    if not _stage_on(p, TABLE_LOOKUP_STAGE, "tables", idx, ref, L):
        return None
    assert idx is not None
    if not has_table_register(check_unit(p.unit, L)):
        raise RecordError("stages", f"{L.stage(TABLE_LOOKUP_STAGE)} is on in the sub unit, which has no table register")
    if tables is None:
        raise RecordError("tables", f"{tab} is {ref} but the file has no TABLES section")
    if not 0 <= idx < len(tables):
        raise RecordError("tables", f"{tab} is {ref}, out of range for {count(len(tables), 'table')}")
    src, dst = tables[idx]
    if src != p.in_dtype:
        raise RecordError("tables", f"{tab} selects table {ref} ({src} -> {dst}) but in_dtype is {p.in_dtype}")
    if not _table_pair_ok(src, dst):
        raise RecordError(
            "tables", f"{tab} selects table {ref} ({src} -> {dst}), which is not a lookup table the hardware supports"
        )
    return src, dst


def _cast_stage(p: Fields, t: ElementType, L: Labels, read_elems: int | None) -> tuple[ElementType, ElementType] | None:
    code = p.type_conversion
    tc = L.field("type_conversion")
    if not _stage_on(p, CAST_STAGE, "type_conversion", code, str(code), L):
        return None
    assert code is not None
    if code not in CAST_BY_CODE:
        raise RecordError("type_conversion", f"{tc} is {code}; cast codes are 0 to {max(CAST_BY_CODE)}")
    src, dst = CAST_BY_CODE[code]
    if src != t:
        raise RecordError(
            "type_conversion", f"{tc} is code {code} ({src} -> {dst}) but the value entering the cast is {t}"
        )
    if read_elems is not None and not cast_fits_flit(read_elems, dst):
        raise RecordError(
            "fetch_size",
            f"one read of {count(read_elems, 'element')} casts to {read_elems * dst.storage_bytes} bytes of {dst}, "
            f"more than one {FLIT_BYTES}-byte flit (hardware.md §2.2)",
        )
    return src, dst


def _zero_point_stage(p: Fields, t: ElementType, L: Labels, check_range: bool) -> ZeroPointRule | None:
    zp0, nzp, mode = p.zero_point0, p.num_zero_points, p.zp_mode
    stage = L.stage(ZERO_POINT_STAGE)
    if not p.stages & ZERO_POINT_STAGE.bit:
        for name, value in (("num_zero_points", nzp), ("zp_mode", mode), ("zero_point0", zp0)):
            if value != 0:
                raise RecordError(name, f"{L.field(name)} is {value} but {stage} is off; it must be 0")
        return None
    rule = ZERO_POINT.get(t)
    if rule is None:
        names = " or ".join(str(s) for s in ZERO_POINT)
        raise RecordError("stages", f"{stage} is on but its input is {t}, not {names}")
    if nzp != 1:
        raise RecordError(
            "num_zero_points",
            f"{L.field('num_zero_points')} is {nzp} but the {ZERO_POINT_STAGE.name} stage is on; it must be 1",
        )
    if mode != rule.mode:
        raise RecordError(
            "zp_mode",
            f"{L.field('zp_mode')} is {mode} but {a_or_an(rule.source.name)} -> {rule.result} zero point is "
            f"mode {rule.mode}",
        )
    if check_range and not rule.lo <= zp0 <= rule.hi:
        raise RecordError(
            "zero_point0", f"{L.field('zero_point0')} is {zp0}, outside [{rule.lo}, {rule.hi}] for {rule.source}"
        )
    return rule


# --------------------------------------------------------------------------
# TABLES records
# --------------------------------------------------------------------------


def _table_pair_ok(src: ElementType, dst: ElementType) -> bool:
    """A TABLES record can map ``src`` to ``dst``: a decode pair (§2.1) or
    a function table's key into bf16 (§2.1b)."""
    return (src, dst) in LOOKUP_TABLES or (is_function_key(src) and dst == FUNCTION_OUTPUT)


def check_table(
    src: ElementType,
    dst: ElementType,
    paired: bool | int,
    function: str | None = None,
    scale: float = 1.0,
    zero_point: int = 0,
    *,
    key_bytes: int | None = None,
    entry_bytes: int | None = None,
    entries: int | None = None,
) -> None:
    """Every rule of one TABLES record (seqbin.md TABLES, hardware.md
    §2.1, §2.1b): a decode table (``function`` None) is one of the four
    pairs with its pairing, 1-byte keys, 256 entries and no scale or zero
    point; a function table is keyed by a type of §2.1b into bf16,
    non-paired, with ``key_count`` entries of the key's width, a scale and
    zero point only on integer keys and legal there.  ``key_bytes``,
    ``entry_bytes``, ``entries``: the record's stored fields (``None``:
    not stored, as in the IR).  Raises :class:`RecordError`."""
    if key_bytes is not None and key_bytes not in (1, 2):
        raise RecordError("key_bytes", f"key_bytes is {key_bytes}; it must be 1 or 2")
    if entry_bytes is not None and entry_bytes != TABLE_ENTRY_BYTES:
        raise RecordError("entry_bytes", f"entry_bytes is {entry_bytes}; it must be {TABLE_ENTRY_BYTES}")
    if function is not None and function not in FUNCTIONS:
        raise RecordError("function", f"function is {function!r}, not one of {function_names()}")
    if function is None:
        _check_decode_table(src, dst, paired, scale, zero_point, key_bytes, entries)
    else:
        _check_function_table(src, dst, paired, scale, zero_point, key_bytes, entries)


def _check_decode_table(
    src: ElementType, dst: ElementType, paired: bool | int, scale: float, zp: int, kb: int | None, n: int | None
) -> None:
    if (src, dst) not in LOOKUP_TABLES:
        hint = "; a table keyed by it is a function table and needs a function" if is_function_key(src) else ""
        raise RecordError(
            "out_dtype", f"{src} -> {dst} is not a decode table the hardware supports (hardware.md §2.1){hint}"
        )
    want = LOOKUP_TABLES[(src, dst)]
    if bool(paired) != want:
        raise RecordError(
            "paired", f"paired is {int(paired)} but the {src} -> {dst} table is {'paired' if want else 'non-paired'}"
        )
    if kb is not None and kb != TABLE_KEY_BYTES:
        raise RecordError("key_bytes", f"key_bytes is {kb} but a decode table's keys are {TABLE_KEY_BYTES} byte")
    if n is not None and n != TABLE_ENTRIES:
        raise RecordError("entries", f"entries is {n}; a decode table has {TABLE_ENTRIES}")
    if scale != 1.0:
        raise RecordError("scale", f"scale is {scale!r} but a decode table has no scale; it must be 1.0")
    if zp != 0:
        raise RecordError("zero_point", f"zero_point is {zp} but a decode table has no zero point; it must be 0")


def _check_function_table(
    src: ElementType, dst: ElementType, paired: bool | int, scale: float, zp: int, kb: int | None, n: int | None
) -> None:
    if paired:
        raise RecordError(
            "paired", "paired is 1 but a function table is non-paired (the paired f4E2M1FN decode takes no function)"
        )
    if not is_function_key(src):
        keys = ", ".join(t.name for t in FUNCTION_KEYS)
        raise RecordError("in_dtype", f"in_dtype is {src}, which keys no function table (they take {keys})")
    if dst != FUNCTION_OUTPUT:
        raise RecordError("out_dtype", f"out_dtype is {dst} but a function table produces {FUNCTION_OUTPUT}")
    width = fn_key_bytes(src)
    if kb is not None and kb != width:
        raise RecordError("key_bytes", f"key_bytes is {kb} but {src} keys are {count(width, 'byte')}")
    if n is not None and n != key_count(src):
        raise RecordError("entries", f"entries is {n}; a table keyed by {src} has {key_count(src)}")
    if src.is_float:
        if scale != 1.0:
            raise RecordError("scale", f"scale is {scale!r} but {a_or_an(src.name)} key has no scale; it must be 1.0")
        if zp != 0:
            raise RecordError(
                "zero_point", f"zero_point is {zp} but {a_or_an(src.name)} key has no zero point; it must be 0"
            )
        return
    problem = scale_problem(scale)
    if problem is not None:
        raise RecordError("scale", f"scale {scale!r} {problem}; it must be a finite, non-zero, normal f32")
    lo, hi = zero_point_range(src)
    if not lo <= zp <= hi:
        raise RecordError("zero_point", f"zero_point is {zp}, outside the {src} range [{lo}, {hi}]")
