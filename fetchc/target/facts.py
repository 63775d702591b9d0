"""The RNGD Fetch Unit / Fetch Sequencer / Fetch Adapter target model.

Every hardware fact fetchc relies on lives here, and every other module imports
it from here: element types and their ``seq.bin`` codes, the conversion tables
of the adapter's three stages, zero-point ranges, sequencer limits, and the
lookup-table contents (generated from ``ml_dtypes`` into
:mod:`fetchc.target.tables_data` by ``tools/gen_tables.py``, never
hand-written), the block-scaled formats, and the conversion routes.

This module imports neither numpy nor ml_dtypes: compiling never needs them.
:attr:`ElementType.np_dtype` imports them on first use (the golden model).

Spec: ``hardware.md`` §1-4, ``seqbin.md`` ("dtype codes", "TABLES").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fetchc.target.tables_data import TABLES as _TABLE_DATA

if TYPE_CHECKING:
    from xdsl.ir import Attribute

__all__ = [
    "ElementType",
    "I4",
    "I8",
    "I16",
    "I32",
    "I5",
    "I9",
    "F4E2M1FN",
    "F8E4M3FN",
    "F8E5M2",
    "BF16",
    "F32",
    "F8E8M0FNU",
    "ELEMENT_TYPES",
    "BY_NAME",
    "BY_CODE",
    "element_type",
    "mlir_type",
    "type_name",
    "CONTEXTS",
    "UNIT_CODE",
    "has_table_register",
    "STAGE_TABLE_LOOKUP",
    "STAGE_TYPE_CONVERSION",
    "STAGE_ZERO_POINT",
    "STAGE_MASKING",
    "ALL_STAGES",
    "StageKind",
    "MASKING_STAGE",
    "TABLE_LOOKUP_STAGE",
    "CAST_STAGE",
    "ZERO_POINT_STAGE",
    "STAGES",
    "STAGE_ORDER_TEXT",
    "MASK_REACH_BYTES",
    "MASK_CELLS",
    "mask_count_cap",
    "LOOKUP_TABLES",
    "CAST_CODES",
    "ZeroPointRule",
    "ZERO_POINT",
    "CONTRACTION_ONLY",
    "WIDENED_FROM",
    "ZP_BY_MODE",
    "CAST_BY_CODE",
    "lookup_outputs",
    "cast_outputs",
    "MAX_ENTRIES",
    "MAX_ENTRY_SIZE",
    "FLIT_BYTES",
    "READ_BYTES",
    "SUB_READ_BYTES",
    "BASE_ALIGN",
    "BASE_LIMIT",
    "STRIDE_MIN",
    "STRIDE_MAX",
    "MEMORY_BITS",
    "DequantFormat",
    "DEQUANT_FORMATS",
    "DEQUANT_RESULTS",
    "dequant_format_for_scale",
    "VRF_BYTES",
    "VECTOR_SCALE_TYPES",
    "CAST_ENGINE",
    "cast_engine_outputs",
    "cast_engine_text",
    "vrf_bytes",
    "vrf_budget_problem",
    "TABLE_ENTRIES",
    "TABLE_ENTRY_BYTES",
    "TABLE_KEY_BYTES",
    "table_entries",
    "lookup_table",
    "table_pairs_text",
    "flit_count",
    "flit_bits",
    "flit_elements",
    "flit_form",
    "flit_form_problem",
    "ContractionOperands",
    "CONTRACTION_OPERANDS",
    "contraction_operands",
    "contractable_text",
    "is_dm_base",
    "dm_base_problem",
    "SLICE_DM_BYTES",
    "DM_BANKS",
    "DM_BANK_ROWS",
    "DM_ROW_BYTES",
    "SLICES_PER_CLUSTER",
    "MAX_SLICES",
    "stride_fits",
    "innermost_ok",
    "read_bytes_ok",
    "cast_fits_flit",
    "SWITCH_WORD_BYTES",
    "TABLE_LOOKUP",
    "CAST",
    "NoConversionError",
    "ROUTES",
    "offers",
    "conversion_chain",
]

# --------------------------------------------------------------------------
# Element types (hardware.md §1, seqbin.md "dtype codes")
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ElementType:
    """One of the hardware's element types.

    ``name`` is the MLIR builtin spelling (``f4E2M1FN``), ``bits`` the storage
    width, ``code`` the ``seq.bin`` dtype code, ``in_flight_only`` marks
    ``i5``/``i9``, which never live in memory.  :attr:`np_dtype` is the numpy
    / ``ml_dtypes`` dtype that holds one value (4-bit types: one value per
    byte; imported on first use).
    """

    name: str
    bits: int
    code: int
    is_float: bool
    in_flight_only: bool = False

    @property
    def np_dtype(self):
        """The numpy dtype of one canonical value (``numpy.dtype``); imports
        numpy and ml_dtypes on first use."""
        from fetchc.target.encoding import numpy_dtype

        return numpy_dtype(self)

    @property
    def storage_bytes(self) -> int:
        """Bytes one element occupies at the adapter output (``seqbin.md``
        ``flit_count``: i5 counts 1 byte, i9 2, 4-bit types ½ → use
        :attr:`bits` for those)."""
        return max(1, (self.bits + 7) // 8)

    @property
    def is_subbyte(self) -> bool:
        return self.bits == 4

    def __str__(self) -> str:
        return self.name


I4 = ElementType("i4", 4, 1, False)
I8 = ElementType("i8", 8, 2, False)
I16 = ElementType("i16", 16, 3, False)
I32 = ElementType("i32", 32, 4, False)
I5 = ElementType("i5", 5, 5, False, True)
I9 = ElementType("i9", 9, 6, False, True)
F4E2M1FN = ElementType("f4E2M1FN", 4, 7, True)
F8E4M3FN = ElementType("f8E4M3FN", 8, 8, True)
F8E5M2 = ElementType("f8E5M2", 8, 9, True)
BF16 = ElementType("bf16", 16, 10, True)
F32 = ElementType("f32", 32, 11, True)
F8E8M0FNU = ElementType("f8E8M0FNU", 8, 12, True)

ELEMENT_TYPES: tuple[ElementType, ...] = (
    I4,
    I8,
    I16,
    I32,
    I5,
    I9,
    F4E2M1FN,
    F8E4M3FN,
    F8E5M2,
    BF16,
    F32,
    F8E8M0FNU,
)
BY_NAME: dict[str, ElementType] = {t.name: t for t in ELEMENT_TYPES}
BY_CODE: dict[int, ElementType] = {t.code: t for t in ELEMENT_TYPES}

_INT_WIDTHS: dict[int, ElementType] = {4: I4, 8: I8, 16: I16, 32: I32, 5: I5, 9: I9}
_XDSL_FLOATS: dict[type, ElementType] = {}
"""xDSL's float type classes → element types, filled on first use: the
facts are importable without xDSL (the ``seq.bin`` reader and writer, and
the kernel compile cache's hits, never need it)."""


def _xdsl_floats() -> dict[type, ElementType]:
    if not _XDSL_FLOATS:
        from xdsl.dialects import builtin

        _XDSL_FLOATS.update(
            {
                builtin.Float4E2M1FNType: F4E2M1FN,
                builtin.Float8E4M3FNType: F8E4M3FN,
                builtin.Float8E5M2Type: F8E5M2,
                builtin.Float8E8M0FNUType: F8E8M0FNU,
                builtin.BFloat16Type: BF16,
                builtin.Float32Type: F32,
            }
        )
    return _XDSL_FLOATS


def element_type(attr: Attribute) -> ElementType | None:
    """The hardware element type an MLIR type denotes, or ``None`` when the
    hardware has no such type (``f16``, ``i1``, unsigned integers...).

    Integers must be signless (hardware.md: "Integers are signless and read
    as signed")."""
    found = (_XDSL_FLOATS or _xdsl_floats()).get(type(attr))
    if found is not None:
        return found
    from xdsl.dialects.builtin import IntegerType, Signedness

    if isinstance(attr, IntegerType):
        if attr.signedness.data != Signedness.SIGNLESS:
            return None
        return _INT_WIDTHS.get(attr.width.data)
    return None


def mlir_type(t: ElementType) -> Attribute:
    """The MLIR builtin type for a hardware element type."""
    from xdsl.dialects import builtin

    if not t.is_float:
        return builtin.IntegerType(t.bits)
    return {
        "f4E2M1FN": builtin.f4E2M1FN,
        "f8E4M3FN": builtin.f8E4M3FN,
        "f8E5M2": builtin.f8E5M2,
        "f8E8M0FNU": builtin.f8E8M0FNU,
        "bf16": builtin.bf16,
        "f32": builtin.f32,
    }[t.name]


def type_name(attr: Attribute) -> str:
    """MLIR spelling of any type, for diagnostics."""
    t = element_type(attr)
    if t is not None:
        return t.name
    from io import StringIO

    from xdsl.printer import Printer

    s = StringIO()
    Printer(stream=s).print_attribute(attr)
    return s.getvalue()


# --------------------------------------------------------------------------
# Fetch Unit contexts (hardware.md §1)
# --------------------------------------------------------------------------

CONTEXTS: tuple[str, ...] = ("main", "sub")
UNIT_CODE: dict[str, int] = {"main": 0, "sub": 1}
"""``seq.bin`` PROGRAMS word 0."""


def has_table_register(context: str) -> bool:
    """Whether a Fetch Unit context can run the table-lookup stage
    (hardware.md §1: only ``main``; the ``sub`` unit has no table register)."""
    return context == "main"


# --------------------------------------------------------------------------
# Adapter stages (hardware.md §2)
# --------------------------------------------------------------------------

STAGE_TABLE_LOOKUP = 1 << 0
STAGE_TYPE_CONVERSION = 1 << 1
STAGE_ZERO_POINT = 1 << 2
STAGE_MASKING = 1 << 3
"""``seq.bin`` PROGRAMS word 24 bits (bit 3, masking: version 1.3, its
configuration in the program's MASKS record)."""
ALL_STAGES = STAGE_TABLE_LOOKUP | STAGE_TYPE_CONVERSION | STAGE_ZERO_POINT | STAGE_MASKING


@dataclass(frozen=True)
class StageKind:
    """One adapter stage (hardware.md §2): ``name`` (``seq.bin`` label),
    ``text`` (for diagnostics), ``order`` in the pipeline (0 masking, 1
    table lookup, 2 cast, 3 zero point), and its ``bit`` in PROGRAMS word
    24."""

    name: str
    text: str
    order: int
    bit: int


MASKING_STAGE = StageKind("masking", "mask", 0, STAGE_MASKING)
TABLE_LOOKUP_STAGE = StageKind("table_lookup", "table lookup", 1, STAGE_TABLE_LOOKUP)
CAST_STAGE = StageKind("type_conversion", "type cast", 2, STAGE_TYPE_CONVERSION)
ZERO_POINT_STAGE = StageKind("zero_point", "zero-point subtraction", 3, STAGE_ZERO_POINT)
STAGES: tuple[StageKind, ...] = (MASKING_STAGE, TABLE_LOOKUP_STAGE, CAST_STAGE, ZERO_POINT_STAGE)
"""The adapter stages in hardware order: each at most once, in this order."""
STAGE_ORDER_TEXT = "masking, then table lookup, then type cast, then zero-point subtraction"
"""The stage order of :data:`STAGES`, for diagnostics (ir.md §3 rule 5)."""

MASK_REACH_BYTES = 128
"""The mask's reach (hardware.md §2.0): a valid count (and a left pad) is at
most ``128 bytes / element bytes - 1`` elements of the DM element type
(:func:`mask_count_cap`)."""
MASK_CELLS = 8
"""Cells of ``rightmost_valid_count`` (seqbin.md MASKS)."""


def mask_count_cap(elem: ElementType) -> int:
    """The largest valid count (and left pad) of a mask on ``elem`` read
    from DM (hardware.md §2.0): ``128 bytes / element bytes - 1``, i.e. 255
    for 4-bit types, 127 for 8-bit, 63 for 16-bit, 31 for 32-bit.  The book
    gives 255 (4-bit) and 31 (``f32``); fetchc takes the same 128-byte reach
    for the other widths."""
    return MASK_REACH_BYTES * 8 // elem.bits - 1


LOOKUP_TABLES: dict[tuple[ElementType, ElementType], bool] = {
    (F4E2M1FN, F8E4M3FN): True,
    (F4E2M1FN, F8E5M2): True,
    (F8E4M3FN, BF16): False,
    (F8E5M2, BF16): False,
}
"""hardware.md §2.1: (input, output) → paired?  Exactly these four."""

CAST_CODES: dict[tuple[ElementType, ElementType], int] = {
    (I4, I32): 0,
    (I8, I32): 1,
    (I16, I32): 2,
    (F8E4M3FN, F32): 3,
    (F8E5M2, F32): 4,
    (BF16, F32): 5,
    (F32, BF16): 6,
}
"""hardware.md §2.2: (input, output) → ``type_conversion`` code.  No others."""


@dataclass(frozen=True)
class ZeroPointRule:
    """hardware.md §2.3: ``out = in - zero_point`` widening ``source`` to
    ``result``; ``zero_point`` must lie in ``[lo, hi]``; ``mode`` is the
    ``seq.bin`` ``zp_mode`` word."""

    source: ElementType
    result: ElementType
    lo: int
    hi: int
    mode: int


ZERO_POINT: dict[ElementType, ZeroPointRule] = {
    I4: ZeroPointRule(I4, I5, -8, 7, 1),
    I8: ZeroPointRule(I8, I9, -128, 127, 2),
}
CONTRACTION_ONLY: frozenset[ElementType] = frozenset({I5, I9})
"""Types only ``rngd.contract_outer`` may consume (hardware.md §2.3)."""
WIDENED_FROM: dict[ElementType, ElementType] = {r.result: r.source for r in ZERO_POINT.values()}
"""``i5 -> i4``, ``i9 -> i8``: the type each zero-point result widens."""
ZP_BY_MODE: dict[int, ZeroPointRule] = {r.mode: r for r in ZERO_POINT.values()}
"""``seq.bin`` ``zp_mode`` word → its rule."""
CAST_BY_CODE: dict[int, tuple[ElementType, ElementType]] = {c: pair for pair, c in CAST_CODES.items()}
"""``seq.bin`` ``type_conversion`` code → ``(input, output)``."""


def lookup_outputs(src: ElementType) -> list[ElementType]:
    return [o for (i, o) in LOOKUP_TABLES if i == src]


def cast_outputs(src: ElementType) -> list[ElementType]:
    return [o for (i, o) in CAST_CODES if i == src]


# --------------------------------------------------------------------------
# Fetch Sequencer limits (hardware.md §3)
# --------------------------------------------------------------------------

MAX_ENTRIES = 8
"""Sequencer loop-nest entries per program."""
MAX_ENTRY_SIZE = 65536
"""Largest ``limits[k]`` value."""
FLIT_BYTES = 32
"""Bytes in one flit; also the cap on one read's cast output."""
READ_BYTES: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
"""Legal ``fetch_size`` values (bytes per hardware access), main context."""
SUB_READ_BYTES = 8
"""The sub context's fixed ``fetch_size``."""
BASE_ALIGN = 8
"""``base`` must be a multiple of this many bytes."""
DM_BANKS, DM_BANK_ROWS, DM_ROW_BYTES = 16, 4096, 8
"""One slice's DM: 16 banks of 4096 rows of 8 bytes (hardware.md §1a)."""
SLICE_DM_BYTES = DM_BANKS * DM_BANK_ROWS * DM_ROW_BYTES
"""Bytes of DM in one slice: 524288 = 2^19 (hardware.md §1a)."""
BASE_LIMIT = SLICE_DM_BYTES
"""``base`` (and every address a program reaches) must be below this: DM
addresses are per slice, 0 ... 2^19 - 1 (hardware.md §1a, §3)."""
SLICES_PER_CLUSTER = 256
"""Slices in one cluster (2 clusters per chip; hardware.md §1a)."""
MAX_SLICES = 512
"""The most slices a kernel may run on (``rngd.slices``, ir.md §2a): one chip."""


def is_dm_base(address: int) -> bool:
    """hardware.md §3: a tensor's ``base`` is a DM byte address that is a
    multiple of 8 and below 2^19."""
    return dm_base_problem(address) is None


def dm_base_problem(address: int, what: str = "base") -> str | None:
    """Why ``address`` is not a legal ``base`` (hardware.md §3, ir.md §3
    rule 8), as the rest of a sentence naming ``what`` and the numbers, or
    ``None`` when it is one: a non-negative multiple of :data:`BASE_ALIGN`
    below :data:`BASE_LIMIT` (one slice's DM)."""
    if address < 0:
        return f"{what} {address} is negative; it must be a DM byte address"
    if address % BASE_ALIGN:
        return f"{what} {address} is not a multiple of {BASE_ALIGN} bytes"
    if address >= BASE_LIMIT:
        return (
            f"{what} {address} (0x{address:x}) is not below 2^19 = {BASE_LIMIT}, the size of one slice's DM "
            f"({DM_BANKS} banks x {DM_BANK_ROWS} rows x {DM_ROW_BYTES} bytes); place the tensor lower, or split "
            "it over slices (rngd.slices, rngd.slice_dim)"
        )
    return None


def stride_fits(stride: int) -> bool:
    """An entry stride fits the i32 stride field (seqbin.md words 16-23)."""
    return STRIDE_MIN <= stride <= STRIDE_MAX


def innermost_ok(stride: int, packet_size: int) -> bool:
    """hardware.md §3: the innermost entry walks DM contiguously (stride 1)
    or broadcasts (stride 0), unless the packet is one element; a packet may
    span several contiguous runs."""
    return packet_size == 1 or stride in (0, 1)


def read_bytes_ok(elems: int, bits: int) -> bool:
    """hardware.md §3: a read of ``elems`` elements of ``bits`` bits is a
    whole 1, 2, 4, 8, 16 or 32 bytes."""
    return (elems * bits) % 8 == 0 and (elems * bits) // 8 in READ_BYTES


def cast_fits_flit(read_elems: int, cast_out: ElementType | None) -> bool:
    """hardware.md §2.2: the cast output of one read fits one 32-byte flit
    (``read_elems × out_bytes ≤ 32``); always true without a cast."""
    return cast_out is None or read_elems * cast_out.storage_bytes <= FLIT_BYTES


STRIDE_MIN = -(1 << 31)
STRIDE_MAX = (1 << 31) - 1
"""Entry strides are stored as i32 (seqbin.md PROGRAMS words 16-23)."""
MEMORY_BITS = (4, 8, 16, 32)
"""Element widths that live in DM (i5/i9 exist only in flight)."""

# --------------------------------------------------------------------------
# Block-scaled 4-bit formats (hardware.md §4)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class DequantFormat:
    """A block-scaled 4-bit format: e2m1 codes, one ``scale`` per ``block``
    codes along the input axis (elements), and whether one ``f32`` tensor
    scale multiplies (``tensor_scale``).  ``vector_scale``: the element type
    of the scales the Vector Engine reads (hardware.md §4, §4a): ``f32`` for
    NVFP4 (the adapter's ``f8E4M3FN → f32`` cast widens them), the raw
    ``f8E8M0FNU`` for MXFP4 (no adapter stage reads e8m0; the Vector Engine
    decodes ``2^(e-127)``)."""

    name: str
    block: int
    scale: ElementType
    tensor_scale: bool
    vector_scale: ElementType


DEQUANT_FORMATS: dict[str, DequantFormat] = {
    "nvfp4": DequantFormat("nvfp4", 16, F8E4M3FN, True, F32),
    "mxfp4": DequantFormat("mxfp4", 32, F8E8M0FNU, False, F8E8M0FNU),
}
"""hardware.md §4: the formats ``fetch.dequant`` decodes, by name."""

DEQUANT_RESULTS: tuple[ElementType, ...] = (F32, BF16)
"""The element types a ``fetch.dequant`` result may have (ir.md §2): the
``f32`` of the Vector Engine's products, or ``bf16`` after the Cast Engine
narrows them (hardware.md §2.6)."""


def dequant_format_for_scale(scale: ElementType | None) -> DequantFormat | None:
    """The block-scaled format whose block scales are of type ``scale``
    (``f8E4M3FN`` → nvfp4, ``f8E8M0FNU`` → mxfp4), or None when no format,
    or more than one, has that scale type."""
    found = [f for f in DEQUANT_FORMATS.values() if f.scale == scale]
    return found[0] if len(found) == 1 else None


# --------------------------------------------------------------------------
# Register files, the Vector Engine and the Cast Engine (hardware.md §2.6)
# --------------------------------------------------------------------------

VRF_BYTES = 8192
"""Bytes of vector register file per slice (hardware.md §2.6: 8 KiB; the
furiosa-opt book's ``Element::SIZE × size_of::<D>() ≤ 8KB``).  The VRF
tensors of one kernel hold at most this many bytes in a slice."""

VECTOR_SCALE_TYPES: tuple[ElementType, ...] = (F32, F8E8M0FNU)
"""The block-scale element types ``rngd.block_scale`` reads (hardware.md §4,
§2.6): ``f32`` (an NVFP4 scale widened by the adapter) and the raw MXFP4
exponent ``f8E8M0FNU``, which the Vector Engine decodes as ``2^(e-127)``
(the one operand that is not 32-bit)."""

CAST_ENGINE: dict[ElementType, tuple[ElementType, ...]] = {F32: (BF16,)}
"""The Cast Engine's narrowings (hardware.md §2.6): input element type →
the outputs it can produce.  ``f32 → bf16`` only (round to nearest even
with §2.2a's rules: the adapter's cast code 6)."""


def cast_engine_outputs(src: ElementType | None) -> tuple[ElementType, ...]:
    """What the Cast Engine narrows ``src`` to (:data:`CAST_ENGINE`); ``()``
    for a type it does not take."""
    return CAST_ENGINE.get(src, ()) if src is not None else ()


def cast_engine_text() -> str:
    """The Cast Engine's narrowings, for diagnostics: ``"f32 -> bf16"``."""
    return ", ".join(f"{s.name} -> {_slash_names(outs)}" for s, outs in CAST_ENGINE.items())


def vrf_bytes(count: int, elem: ElementType) -> int:
    """Bytes a VRF tensor of ``count`` elements of ``elem`` holds in one
    slice (hardware.md §2.6: elements × element bytes, 4-bit types half a
    byte, rounded up; the flits' padding is dropped)."""
    return -(-count * flit_bits(elem) // 8)


def vrf_budget_problem(sizes: Iterable[tuple[str, int]]) -> str | None:
    """Why VRF tensors of ``sizes`` (``(name, bytes)`` each, in kernel order)
    do not fit one slice's VRF, as the rest of a sentence naming every
    tensor's size and the total; ``None`` when their sum is at most
    :data:`VRF_BYTES` (hardware.md §2.6: all of a kernel's VRF tensors are
    counted as live for the whole kernel)."""
    sizes = list(sizes)
    total = sum(b for _, b in sizes)
    if total <= VRF_BYTES:
        return None
    listing = ", ".join(f"{name} {b} bytes" for name, b in sizes)
    return (
        f"the kernel's VRF tensors hold {total} bytes per slice ({listing}), more than the {VRF_BYTES} bytes "
        "of one slice's VRF"
    )


# --------------------------------------------------------------------------
# Lookup tables (hardware.md §2.1, seqbin.md "TABLES")
# --------------------------------------------------------------------------

TABLE_ENTRIES = 256
TABLE_ENTRY_BYTES = 2
TABLE_KEY_BYTES = 1


def table_entries(src: ElementType, dst: ElementType) -> tuple[int, ...]:
    """The 256 ``u16`` entries of the ``src -> dst`` table, exactly as
    ``seq.bin`` stores them (entry ``k`` for key byte ``k``).

    Raises ``KeyError`` for a pair outside :data:`LOOKUP_TABLES`.
    Spec: seqbin.md "TABLES"; every entry is ``ml_dtypes``' conversion
    (checked by ``test/pytest/test_tables_data.py``)."""
    if (src, dst) not in LOOKUP_TABLES:
        raise KeyError((src, dst))
    return _TABLE_DATA[(src.name, dst.name)]


def lookup_table(src: ElementType, dst: ElementType):
    """:func:`table_entries` as a numpy array (shape ``(256,)``, dtype
    ``uint16``), for the golden model and tests.  Raises ``KeyError`` for a
    pair outside :data:`LOOKUP_TABLES`."""
    import numpy as np

    return np.array(table_entries(src, dst), dtype=np.uint16)


def _slash_names(ts: Iterable[ElementType]) -> str:
    return "/".join(dict.fromkeys(t.name for t in ts))


def table_pairs_text() -> str:
    """The tables the hardware has, for diagnostics: ``"f4E2M1FN ->
    f8E4M3FN/f8E5M2, paired, and f8E4M3FN/f8E5M2 -> bf16"``."""
    groups: list[str] = []
    for paired in (True, False):
        ins = [i for (i, o), p in LOOKUP_TABLES.items() if p is paired]
        outs = [o for (i, o), p in LOOKUP_TABLES.items() if p is paired]
        groups.append(f"{_slash_names(ins)} -> {_slash_names(outs)}" + (", paired" if paired else ""))
    return ", and ".join(groups)


def flit_bits(elem: ElementType) -> int:
    """Bits one element of ``elem`` occupies at the adapter output: 4-bit
    types half a byte, ``i5`` one byte, ``i9`` two (seqbin.md word 30,
    hardware.md §2.4)."""
    return 4 if elem.is_subbyte else 8 * elem.storage_bytes


def flit_count(packet_size: int, out: ElementType) -> int:
    """32-byte flits one packet of ``packet_size`` elements of ``out``
    occupies at the adapter output, rounded up (seqbin.md word 30)."""
    nbytes = -(-packet_size * flit_bits(out) // 8)
    return -(-nbytes // FLIT_BYTES)


SWITCH_WORD_BYTES = 8
"""hardware.md §2.4: the packet entering the Switch Engine is a whole number
of 8-byte access words (furiosa-opt ``assert_packet_aligned_by_access_width``)."""


# --------------------------------------------------------------------------
# The Collect Engine (hardware.md §2.5)
# --------------------------------------------------------------------------


def flit_elements(elem: ElementType) -> int:
    """Elements of ``elem`` in one 32-byte flit, counted at the adapter
    output width (:func:`flit_bits`): 64 for 4-bit types, 32 for 8-bit types
    and ``i5``, 16 for ``bf16``, ``i16`` and ``i9``, 8 for ``f32``/``i32``."""
    return FLIT_BYTES * 8 // flit_bits(elem)


def _packet_bytes_text(packet_size: int, elem: ElementType) -> str:
    bits = packet_size * flit_bits(elem)
    return str(bits // 8) if bits % 8 == 0 else f"{bits / 8:g}"


def flit_form(
    time: tuple[int, ...], packet: tuple[int, ...], elem: ElementType
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The Collect Engine's **flit form** of a stream of ``time`` x ``packet``
    elements of ``elem`` (hardware.md §2.5): when one packet is a whole
    number ``F > 1`` of 32-byte flits (at the adapter output width,
    :func:`flit_bits`), ``(time + (F,), (flit_elements(elem),))``: the flit
    count becomes the new innermost time dim and the packet, flattened
    row-major, one flit of elements.  ``None`` when the packet is exactly
    one flit, under one, or over one but not a whole number of flits (the
    flit form would need padding; :func:`flit_form_problem` says which).
    Examples: ``[60], [3840] f8E4M3FN`` → ``[60, 120], [32]``; ``[64, 8],
    [32] i9`` → ``[64, 8, 2], [16]``; ``[t], [8, 64] bf16`` → ``[t, 32],
    [16]``."""
    bits = math.prod(packet) * flit_bits(elem)
    flit = FLIT_BYTES * 8
    if bits <= flit or bits % flit:
        return None
    return tuple(time) + (bits // flit,), (flit_elements(elem),)


def flit_form_problem(packet: tuple[int, ...], elem: ElementType) -> str | None:
    """Why a stream whose packets are ``packet`` elements of ``elem`` has no
    flit form (:func:`flit_form`), as a sentence for diagnostics (without
    the op name), or ``None`` when it has one.  The three cases of
    hardware.md §2.5: exactly one flit (the flit form would be the input
    type itself), under one flit and over one but not a multiple (both
    need padding, which ``!fetch.stream`` cannot spell)."""
    n = math.prod(packet)
    bits = n * flit_bits(elem)
    flit = FLIT_BYTES * 8
    size = f"the packet of {n} {elem.name} elements is {_packet_bytes_text(n, elem)} bytes"
    if bits == flit:
        return f"{size}, exactly one {FLIT_BYTES}-byte flit, so its flit form is the input type itself"
    if bits < flit:
        return (
            f"{size}, under one {FLIT_BYTES}-byte flit, so the Collect Engine pads it to one flit, which a stream "
            "type cannot spell"
        )
    if bits % flit:
        flits = -(-bits // flit)
        pad = (flits * flit - bits) / 8
        return (
            f"{size}, not a whole number of {FLIT_BYTES}-byte flits, so the Collect Engine pads it to {flits} flits "
            f"({pad:g} bytes of padding in the last), which a stream type cannot spell"
        )
    return None


# --------------------------------------------------------------------------
# The Contraction Engine's operand types (hardware.md §2.6, ir.md §3 rule 10)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ContractionOperands:
    """One row of the Contraction Engine's operand table (hardware.md
    §2.6): a stream of any of ``streams`` pairs with a TRF of any of
    ``trf`` and accumulates into ``accumulator``."""

    streams: tuple[ElementType, ...]
    trf: tuple[ElementType, ...]
    accumulator: ElementType


CONTRACTION_OPERANDS: tuple[ContractionOperands, ...] = (
    ContractionOperands((I4, I5), (I4, I5), I32),
    ContractionOperands((I8, I9), (I8, I9), I32),
    ContractionOperands((F8E4M3FN,), (F8E4M3FN,), F32),
    ContractionOperands((F8E5M2,), (F8E5M2,), F32),
    ContractionOperands((BF16,), (BF16,), F32),
)
"""hardware.md §2.6 (furiosa-opt book, ``contraction-engine/outer.md``,
"Operand types"): exactly these pairs.  No pair crosses integer families
(``i4`` with ``i8``) or kinds (integer with float); a float pair matches
exactly."""


def contraction_operands(stream: ElementType | None) -> ContractionOperands | None:
    """The row of :data:`CONTRACTION_OPERANDS` for a stream of ``stream``,
    or ``None`` when the Contraction Engine cannot take such a stream
    (``f32``, ``i16``, ``i32``, ``f4E2M1FN``, ``f8E8M0FNU``, a type the
    hardware lacks)."""
    for row in CONTRACTION_OPERANDS:
        if stream in row.streams:
            return row
    return None


def contractable_text() -> str:
    """The stream types the Contraction Engine takes, for diagnostics:
    ``"i4/i5, i8/i9, f8E4M3FN, f8E5M2 or bf16"``."""
    groups = ["/".join(t.name for t in row.streams) for row in CONTRACTION_OPERANDS]
    return ", ".join(groups[:-1]) + " or " + groups[-1]


# --------------------------------------------------------------------------
# Conversion requests (ir.md §4 fetch-legalize-convert)
# --------------------------------------------------------------------------

TABLE_LOOKUP = "table_lookup"
CAST = "cast"


class NoConversionError(ValueError):
    """No adapter stage chain converts ``src`` to ``dst``; the message says
    what the adapter offers from ``src`` and, where one exists, the route
    through later engines."""


def _chain(src: ElementType, dst: ElementType) -> list[tuple[str, ElementType]] | None:
    if src == dst:
        return []
    if (src, dst) in LOOKUP_TABLES:
        return [(TABLE_LOOKUP, dst)]
    if (src, dst) in CAST_CODES:
        return [(CAST, dst)]
    # One lookup followed by one cast (hardware stage order).
    for i, mid in LOOKUP_TABLES:
        if i == src and (mid, dst) in CAST_CODES:
            return [(TABLE_LOOKUP, mid), (CAST, dst)]
    return None


ROUTES: dict[tuple[str, str], str] = {
    ("f32", "f8E4M3FN"): "narrow f32 to an 8-bit float later, in the Cast Engine",
    ("f32", "f8E5M2"): "narrow f32 to an 8-bit float later, in the Cast Engine",
    ("bf16", "f8E4M3FN"): "narrow to an 8-bit float later, in the Cast Engine",
    ("bf16", "f8E5M2"): "narrow to an 8-bit float later, in the Cast Engine",
    ("f4E2M1FN", "bf16"): (
        "convert to f32 here and narrow to bf16 in the Cast Engine, or decode to "
        "f8E4M3FN, commit it to DM and fetch it again through the non-paired table"
    ),
    ("f8E8M0FNU", "f32"): (
        "fetch the raw f8E8M0FNU codes and decode 2^(e-127) in the Vector Engine "
        "(what fetch-split-scaling does for MXFP4 block scales)"
    ),
}


def offers(src: ElementType) -> str:
    """What the adapter converts ``src`` to, for diagnostics: e.g. ``"from
    f32 the Fetch Adapter offers bf16 (type cast)"``."""
    outs = []
    for t in ELEMENT_TYPES:
        chain = _chain(src, t) if t != src and not t.in_flight_only else None
        if chain:
            outs.append(f"{t.name} ({' + '.join('type cast' if k == CAST else 'table lookup' for k, _ in chain)})")
    if not outs:
        return f"the Fetch Adapter has no stage that reads {src.name}"
    return f"from {src.name} the Fetch Adapter offers " + ", ".join(outs)


def conversion_chain(src: Attribute | ElementType, dst: Attribute | ElementType) -> list[tuple[str, ElementType]]:
    """The adapter stages that convert ``src`` to ``dst``, in hardware order:
    a list of ``(TABLE_LOOKUP | CAST, output type)``; ``[]`` for identity.

    Raises :class:`NoConversionError` when the adapter has no such chain; its
    message says what the adapter offers from ``src`` (:func:`offers`) and,
    where one exists, the route through later engines.
    Spec: ir.md §4 (``fetch-legalize-convert``), hardware.md §2.1-2.2."""
    s = src if isinstance(src, ElementType) else element_type(src)
    d = dst if isinstance(dst, ElementType) else element_type(dst)
    sname = src.name if isinstance(src, ElementType) else type_name(src)
    dname = dst.name if isinstance(dst, ElementType) else type_name(dst)
    hw = ", ".join(t.name for t in ELEMENT_TYPES if not t.in_flight_only)
    if s is None or s.in_flight_only:
        raise NoConversionError(f"{sname} is not a type the Fetch Adapter reads; it reads {hw}")
    if d is None:
        raise NoConversionError(f"{dname} is not a Fetch Adapter type; {offers(s)}")
    if d.in_flight_only:
        raise NoConversionError(
            f"fetch.convert never produces {dname}: the zero-point stage is the only way, use fetch.zp_sub"
        )
    chain = _chain(s, d)
    if chain is not None:
        return chain
    msg = f"the Fetch Adapter cannot convert {sname} to {dname}: {offers(s)}"
    route = ROUTES.get((sname, dname))
    if route:
        msg += f"; instead, {route}"
    raise NoConversionError(msg)
