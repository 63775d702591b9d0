"""An interpreter for fetchc IR on xDSL's interpreter framework.

It gives every op of the ``fetch``, ``rngd`` and ``fetch_seq`` dialects a
value-level meaning, so a module can be run before and after each pass and the
results compared bit for bit (and, after ``fetch-to-seq``, against the
golden model :mod:`fetchc.golden.sim`).  ``func`` and ``arith`` run on xDSL's own
implementations.

Values
------

* A **memref** argument is a numpy array of the memref's logical shape holding
  canonical values: dtype ``ElementType.np_dtype`` (``ml_dtypes.float4_e2m1fn``
  / ``ml_dtypes.int4`` for the 4-bit types, one value per item;
  ``ml_dtypes.float8_*``, ``ml_dtypes.bfloat16``, ``np.float32``,
  ``np.int8/16/32``).  The layout (``strided<>``) does not matter for the
  logical array; it only matters for ``fetch_seq.program`` (below).
  ``rngd.commit`` writes into it **in place**.
* A **stream** is a numpy array of shape ``time + packet`` with the same
  canonical dtype as its element type (``i5`` → ``int8``, ``i9`` → ``int16``).
  :func:`fetchc.golden.sim.to_sim_encoding` turns it into the ``fetchc sim``
  encoding (ir.md §5) for bit-exact comparison with the simulator.
* An ``f32`` scalar is a ``np.float32`` (a Python float or an
  ``arith.constant``'s ``FloatAttr`` is rounded to f32).
* ``!rngd.trf`` / ``!rngd.vrf`` values are the stream's array.

Op semantics
------------

* ``fetch.fetch``: ``out[t..., p...] = mem[map(t..., p...)]`` (numpy advanced
  indexing with the map's :func:`~fetchc.dialects.fetch.linear_coefficients`).
  A padded fetch's padding slots (index along its padded dim outside the
  memref) read what the interpreter's DM holds where no tensor element
  lives: every byte ``dm_fill`` (:func:`interpret`, default 0; hardware.md
  §2.0: "whatever DM holds there").
* ``fetch.mask``: zeroes exactly the padding slots of its fetch, found from
  the IR (the fetch's indices along the padded dim outside the memref): the
  element type's zero.
* ``fetch.table_lookup``: **by value**, through ``ml_dtypes``
  (``values.astype(out)``), which is what the tables were built from; with
  ``fn``, from the function's definition (:func:`function_values`: numpy
  decoding and rounding, :func:`fetchc.target.functions.evaluate` for
  ``f``).  The simulator instead decodes through the stored table bytes,
  and the tests compare the two.
* ``fetch.cast``, ``fetch.zp_sub``: the shared stage functions
  :func:`fetchc.golden.sim.cast_values` (RNGD float semantics,
  hardware.md §2.2a) / :func:`fetchc.golden.sim.zp_sub_values`.
* ``fetch.convert``: the stages of :func:`fetchc.target.conversion_chain`.
* ``fetch.dequant``: hardware.md §4 with RNGD's arithmetic
  (:func:`dequant_rngd`): NVFP4 ``(E2M1[code] × f32(bscale)) × gscale``, left
  to right, ``f32(bscale)`` by the ``f8E4M3FN → f32`` cast and both products
  by the Vector Engine multiply (:func:`fetchc.target.numerics.vector_mul`:
  subnormal operands read as zero, subnormal products flush to a zero of
  their sign, NaN products are ``0x7FC00000``); MXFP4
  ``E2M1[code] × 2^(e-127)`` (``e = 0`` reads as ``+0``, ``0xFF`` gives
  ``0x7FC00000``).  The scale of element ``out[t, p]`` is
  ``bscale[i_0, ..., i_{r-2}, i_{r-1} // block]`` where
  ``(i_0, ..., i_{r-1}) = map(t, p)`` is the index the codes'
  ``fetch.fetch`` reads (one scale per block along the memref's last axis).
  A ``bf16`` result is that ``f32`` narrowed by the Cast Engine
  (:func:`fetchc.golden.rngd_ops.narrow`).
* ``rngd.switch``, ``rngd.collect`` (its flit form a row-major reshape),
  ``rngd.to_trf``, ``rngd.to_vrf``, ``rngd.transpose``, ``rngd.commit``,
  ``rngd.block_scale`` (scales from a stream or a VRF tensor),
  ``rngd.tensor_scale``, ``rngd.cast``: as
  :mod:`fetchc.golden.rngd_ops` defines them (the
  one definition ``fetchc run`` uses too); ``rngd.commit`` writes into the
  memref array in place.  ``rngd.scratch``: a new array of
  zeros of its memref's shape (the compiler's own DM buffer; a commit fills
  it before a fetch reads it).
* ``fetch_seq.program``: runs the register block with the simulator's own
  code (:func:`run_program_on_array`): the memref array is laid out in its
  layout order (:func:`flatten_in_layout`) and packed into DM bytes
  (:func:`fetchc.golden.sim.pack_elements`); the lookup goes through the
  ``fetch_seq.table``'s baked entries.  A padded program (``pad``) reads an
  image that extends the memref's with ``dm_fill`` bytes over its padded
  extent; a masked one (``mask``) runs the loop nest raw, zeroes the slots
  its configuration zeroes (:func:`fetchc.target.mask.zeroed_slots`, the
  compiler's expansion of the hardware's rule: the differential tests
  compare it with ``fetch.mask``'s IR-level zeroing), then runs the other
  stages (:func:`fetchc.golden.engine.stages_on_values`).  The program's ``base`` field is a DM
  byte address, so the interpreter must know the memref's DM address: pass
  ``memref_bases`` to :func:`interpret` (default 0, ``fetch.fetch``'s default
  ``base``, or a ``rngd.scratch``'s ``dm_base``; :func:`fetch_bases`
  collects them from the module before ``fetch-to-seq``).
* ``rngd.contract_outer`` has no implementation (its arithmetic is not
  specified).

Errors: :class:`InterpError` for bad arguments (wrong shape or dtype, an index
outside a memref, a program reading outside its memref);
:class:`fetchc.golden.sim.SimError` from the stage functions; xDSL's
``InterpretationError`` for ops without an implementation.

Spec: ir.md §1-2, §4; hardware.md §2-4 (§2.2a: RNGD float semantics).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, MemRefType, ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import BlockArgument, SSAValue
from xdsl.traits import SymbolTable

from fetchc import target
from fetchc.dialects.fetch import (
    CastOp,
    ConvertOp,
    DequantOp,
    FetchOp,
    MaskOp,
    StreamType,
    TableLookupOp,
    ZpSubOp,
)
from fetchc.dialects.fetch_seq import ProgramOp
from fetchc.dialects.rngd import (
    BlockScaleOp,
    CastEngineOp,
    CollectOp,
    CommitOp,
    ScratchOp,
    SwitchOp,
    TensorScaleOp,
    ToTrfOp,
    ToVrfOp,
    TransposeOp,
    VrfType,
)
from fetchc.golden import rngd_ops
from fetchc.golden.engine import (
    SimError,
    cast_values,
    check_read_bounds,
    plan_program,
    stages_on_values,
    unmasked,
    zp_sub_values,
)
from fetchc.golden.sim import simulate_program
from fetchc.seqbin import Program, Table
from fetchc.seqbin.emit import program_record, table_record
from fetchc.target import ElementType, functions, numerics
from fetchc.target.encoding import from_sim_encoding, pack_elements, to_sim_encoding
from fetchc.target.layout import linear_coefficients, memref_layout, nest_byte_span
from fetchc.target.mask import zeroed_slots
from fetchc.wording import count

__all__ = [
    "InterpError",
    "FetchcFunctions",
    "make_interpreter",
    "interpret",
    "fetch_bases",
    "fetch_indices",
    "padding_of",
    "fill_element",
    "lookup_values",
    "function_values",
    "e8m0_to_f32",
    "dequant_rngd",
    "flatten_in_layout",
    "program_from_op",
    "run_program_on_array",
    "to_sim_encoding",
    "from_sim_encoding",
]


class InterpError(Exception):
    """Bad interpreter input: an argument of the wrong shape or dtype, an
    index outside a memref, a ``fetch_seq.program`` reading outside its
    memref, an unknown function."""


# --------------------------------------------------------------------------
# Value helpers
# --------------------------------------------------------------------------


def _elem(t: Any, what: str) -> ElementType:
    e = target.element_type(t)
    if e is None:
        raise InterpError(f"{what}: {target.type_name(t)} is not a hardware element type")
    return e


def _check_memref(arr: Any, mt: MemRefType, what: str) -> np.ndarray:
    elem = _elem(mt.element_type, what)
    if not isinstance(arr, np.ndarray):
        raise InterpError(f"{what}: expected a numpy array for {mt}, got {type(arr).__name__}")
    shape = tuple(mt.get_shape())
    if arr.shape != shape or arr.dtype != elem.np_dtype:
        raise InterpError(
            f"{what}: expected an array of shape {shape} and dtype {elem.np_dtype} ({elem}), "
            f"got shape {arr.shape} and dtype {arr.dtype}"
        )
    return arr


def _stream(arr: np.ndarray, st: Any, what: str) -> np.ndarray:
    """Check that ``arr`` is a value of stream type ``st``."""
    assert isinstance(st, StreamType)
    elem = _elem(st.element_type, what)
    shape = st.time + st.packet
    if arr.shape != shape or arr.dtype != elem.np_dtype:
        raise InterpError(
            f"{what}: produced shape {arr.shape} / {arr.dtype}, but {st.spelled()} needs {shape} / {elem.np_dtype}"
        )
    return arr


def _f32(v: Any) -> np.float32:
    if isinstance(v, FloatAttr):
        return np.float32(v.value.data)
    if isinstance(v, np.ndarray) and v.shape == ():
        return np.float32(v[()])
    return np.float32(v)


def lookup_values(values: np.ndarray, src: ElementType, dst: ElementType) -> np.ndarray:
    """The table-lookup stage **by value** (hardware.md §2.1): canonical
    ``src`` values converted by ``ml_dtypes`` to ``dst`` (every table entry is
    exact, and is exactly this conversion, seqbin.md TABLES).  Raises
    :class:`fetchc.golden.sim.SimError` for a pair outside the four tables."""
    if (src, dst) not in target.LOOKUP_TABLES:
        raise SimError(f"the hardware has no {src} -> {dst} lookup table")
    values = np.asarray(values)
    if values.dtype != src.np_dtype:
        raise SimError(f"the {src} -> {dst} lookup got values of {values.dtype}, not {src.np_dtype}")
    return values.astype(dst.np_dtype)


def function_values(
    values: np.ndarray, src: ElementType, fn: str, scale: float = 1.0, zero_point: int = 0
) -> np.ndarray:
    """A function table's lookup **by value** (hardware.md §2.1b), computed
    here from the definitions (:func:`fetchc.target.functions.evaluate`),
    not from the baked entries: canonical ``src`` values decoded with numpy
    / ml_dtypes (a bf16 subnormal reads as a zero of its sign by RNGD's
    ``bf16 → f32`` cast, NaN keys give NaN; integer keys ``(k - zero_point)
    * scale`` in float64), ``f`` per distinct value, numpy's round to
    nearest even to ``f32``, then RNGD's ``f32 → bf16`` cast (FTZ, NaN
    ``0x7FC0``).  Returns canonical bf16 values, same shape.  Raises
    :class:`fetchc.golden.sim.SimError` for a key type of no function table
    or a wrong dtype."""
    if not functions.is_function_key(src):
        raise SimError(f"no function table is keyed by {src}")
    values = np.asarray(values)
    if values.dtype != src.np_dtype:
        raise SimError(f"the {fn} lookup got values of {values.dtype}, not {src.np_dtype}")
    x: np.ndarray
    if src == target.BF16:
        x = numerics.cast(values, target.BF16, target.F32).astype(np.float64)
    elif src.is_float:
        x = values.astype(np.float64)
    else:
        x = (values.astype(np.int64) - zero_point) * float(np.float32(scale))
    uniq, inverse = np.unique(np.ascontiguousarray(x).view(np.uint64), return_inverse=True)  # by bits: -0 is not +0
    f = np.array([functions.evaluate(fn, float(v)) for v in uniq.view(np.float64)], dtype=np.float64)
    f = f[inverse.reshape(x.shape)]
    with np.errstate(over="ignore", invalid="ignore"):
        f32 = f.astype(np.float32)
    return numerics.cast(f32, target.F32, target.BF16)


def e8m0_to_f32(values: np.ndarray) -> np.ndarray:
    """``f8E8M0FNU`` (canonical ``ml_dtypes.float8_e8m0fnu`` or raw ``uint8``
    bits, any shape) → ``float32`` ``2^(e-127)``, exact (``e = 0`` gives
    ``2^-127``, an f32 subnormal that the Vector Engine reads as ``+0``), with
    ``e = 0xFF`` → ``0x7FC00000`` (hardware.md §4;
    :func:`fetchc.target.numerics.e8m0_to_f32`)."""
    return numerics.e8m0_to_f32(values)


def dequant_rngd(codes: np.ndarray, bscale: np.ndarray, gscale: Any, fmt: str) -> np.ndarray:
    """The dequantisation of hardware.md §4 as RNGD computes it (§2.2a):
    ``E2M1[code]`` (exact), NVFP4 ``f32(bscale)`` by the ``f8E4M3FN → f32``
    cast (NaN → ``0x7FC00000``) and MXFP4 ``2^(e-127)``
    (:func:`e8m0_to_f32`), then Vector Engine multiplies
    (:func:`fetchc.target.numerics.vector_mul`): block scale first, tensor
    scale second.

    ``codes``: canonical ``f4E2M1FN`` values; ``bscale``: the block scale of
    each element (same shape; ``f8E4M3FN`` for ``"nvfp4"``, ``f8E8M0FNU`` for
    ``"mxfp4"``); ``gscale``: the f32 tensor scale (nvfp4; ignored for
    mxfp4).  Returns a new ``float32`` array, same shape.
    Raises :class:`InterpError` for an unknown format."""
    e = np.asarray(codes).astype(np.float32)  # every E2M1 value is exact in f32
    if fmt == "nvfp4":
        return numerics.tensor_scale(numerics.vector_mul(e, numerics.f8e4m3_to_f32(bscale)), _f32(gscale))
    if fmt == "mxfp4":
        return numerics.vector_mul(e, e8m0_to_f32(bscale))
    raise InterpError(f"unknown dequant format {fmt!r}")


# --------------------------------------------------------------------------
# fetch.fetch indexing
# --------------------------------------------------------------------------


def fetch_indices(op: FetchOp) -> tuple[np.ndarray, ...]:
    """The memref index arrays ``fetch.fetch`` reads: one ``int64`` array
    per memref dimension, each of the stream's shape ``time + packet``, with
    ``idx[r][t..., p...] = map(t..., p...)[r]``.  Along a padded dim
    (``pad``) the indices may run over ``[-left, size - left)``.  Raises
    :class:`InterpError` when an index falls outside the memref (or its
    padded range)."""
    st = op.stream
    shape = st.time + st.packet
    coeffs, consts = linear_coefficients(op.affine_map())
    nd = len(shape)
    grids = [np.arange(n, dtype=np.int64).reshape((1,) * d + (n,) + (1,) * (nd - d - 1)) for d, n in enumerate(shape)]
    mshape = op.memref.get_shape()
    pad = op.padding
    out = []
    for r, (row, k) in enumerate(zip(coeffs, consts, strict=False)):
        idx = np.full(shape, k, dtype=np.int64)
        for c, g in zip(row, grids, strict=False):
            if c:
                idx = idx + c * g
        lo, end = (-pad.left, pad.size - pad.left) if pad is not None and pad.dim == r else (0, mshape[r])
        if idx.size and (idx.min() < lo or idx.max() >= end):
            raise InterpError(
                f"fetch.fetch reads index {r} in [{idx.min()}, {idx.max()}], outside the memref's [{lo}, {end})"
            )
        out.append(np.broadcast_to(idx, shape))
    return tuple(out)


def padding_of(op: FetchOp) -> np.ndarray | None:
    """The padding slots of a padded ``fetch.fetch``, from the IR: ``True``
    where its index along the padded dim lies outside the memref (shape
    ``time + packet``), or ``None`` without ``pad``."""
    pad = op.padding
    if pad is None:
        return None
    idx = fetch_indices(op)[pad.dim]
    return (idx < 0) | (idx >= op.memref.get_shape()[pad.dim])


def fill_element(elem: ElementType, fill: int) -> np.ndarray:
    """The canonical value (a 0-d array of ``elem.np_dtype``) of an element
    all of whose bytes are ``fill`` (4-bit: the nibble ``fill & 0xF``): what
    a padding slot reads from the interpreter's DM."""
    if elem.is_subbyte:
        return np.array(fill & 0x0F, dtype=np.uint8).view(elem.np_dtype)
    raw = np.frombuffer(bytes([fill]) * (elem.bits // 8), dtype=np.dtype(f"<u{elem.bits // 8}"))
    return raw.view(elem.np_dtype).reshape(())


def _check_fill(fill: int) -> int:
    if not isinstance(fill, int) or not 0 <= fill <= 0xFF or (fill >> 4) != (fill & 0x0F):
        raise InterpError(
            f"dm_fill must be a byte whose two nibbles are equal (0x00, 0x11, ..., 0xff), so a 4-bit padding slot "
            f"reads the same at either nibble; not {fill!r}"
        )
    return fill


# --------------------------------------------------------------------------
# fetch_seq.program
# --------------------------------------------------------------------------


def flatten_in_layout(arr: np.ndarray, mt: MemRefType, fill: int = 0) -> np.ndarray:
    """The memref's elements in **layout order**: a 1-D array where element
    ``i`` of the memref sits at ``offset + Σ i_r·stride_r`` (the memref type's
    identity or ``strided<>`` layout; in elements).  Positions no element
    maps to hold the element of ``fill`` bytes (:func:`fill_element`;
    default zero).  Raises :class:`InterpError` for negative strides."""
    strides, offset = memref_layout(mt)
    shape = arr.shape
    if any(s < 0 for s in strides) or offset < 0:
        raise InterpError(f"cannot lay out {mt}: negative strides or offset")
    size = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=False)) + 1 if arr.size else 0
    flat = np.zeros(size, dtype=arr.dtype)
    if fill:
        flat[...] = fill_element(_elem(mt.element_type, "flatten_in_layout"), fill)
    if arr.size:
        lin = np.full(shape, offset, dtype=np.int64)
        for d, (n, s) in enumerate(zip(shape, strides, strict=False)):
            lin = lin + (np.arange(n, dtype=np.int64) * s).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
        flat[lin.reshape(-1)] = arr.reshape(-1)
    return flat


def program_from_op(op: ProgramOp) -> tuple[Program, list[Table]]:
    """The ``seq.bin`` record of a ``fetch_seq.program`` (the serialiser's
    own :func:`fetchc.seqbin.emit.program_record`) and its table list (the
    referenced ``fetch_seq.table`` as table 0, or empty).  Raises
    :class:`InterpError` for a missing table."""
    tables: list[Table] = []
    if op.table is not None:
        top = op.table_op()
        if top is None:
            raise InterpError(f"fetch_seq.program: table {op.table} is not a fetch_seq.table in the module")
        tables.append(table_record(top))
    return program_record(op, 0 if tables else None), tables


def run_program_on_array(
    flat: np.ndarray,
    prog: Program,
    tables: Sequence[Table],
    memref_base: int = 0,
    *,
    padded: bool = False,
    fill: int = 0,
) -> np.ndarray:
    """Run ``prog`` on one memref with the simulator's code.

    ``flat``: the memref's canonical values in layout order
    (:func:`flatten_in_layout`), element 0 at DM byte ``memref_base``.  It is
    packed into DM bytes (:func:`fetchc.golden.sim.pack_elements`) and
    :func:`fetchc.golden.sim.simulate_program` runs with ``base`` made relative to
    ``memref_base``; every read must stay inside the memref, or, when
    ``padded`` (a program that reads padding, hardware.md §2.0), inside the
    image extended by ``fill`` bytes over the whole loop nest.  Returns the
    ``fetchc sim`` encoding, shape ``(prod(limits) // packet_size,
    packet_size)``.  Raises :class:`InterpError` for a read outside the memref
    and :class:`fetchc.golden.sim.SimError` for an inconsistent program."""
    image = pack_elements(flat, prog.in_dtype)
    if prog.in_dtype.is_subbyte and flat.size % 2:
        image[-1] |= np.uint8(fill & 0xF0)  # the high nibble past the last element is DM's, not the tensor's
    rel = dataclasses.replace(prog, base=prog.base - memref_base)
    if padded:
        lo, end = nest_byte_span(rel.base, rel.limits, rel.strides, prog.in_dtype.bits)
        start, stop = min(0, lo), max(image.size, end)
        wide = np.full(stop - start, fill, dtype=np.uint8)
        wide[-start : -start + image.size] = image
        image, rel = wide, dataclasses.replace(rel, base=rel.base - start)
    try:
        check_read_bounds(rel, str(prog.name), image.size)
    except SimError as e:
        raise InterpError(
            f"{e} (here the DM image is the memref alone: {image.size} bytes at DM address {memref_base}; "
            f"is its memref_bases entry right?)"
        ) from None
    return simulate_program(rel, tables, image, name=prog.name, threads=1, progress=False)


# --------------------------------------------------------------------------
# Op implementations
# --------------------------------------------------------------------------

_BASES = "memref_bases"
_FILL = "dm_fill"


@register_impls
class FetchcFunctions(InterpreterFunctions):
    """Implementations of the ``fetch``, ``rngd`` and ``fetch_seq`` ops
    (module docstring)."""

    # ---- fetch ---------------------------------------------------------
    @impl(FetchOp)
    def run_fetch(self, interpreter: Interpreter, op: FetchOp, args: tuple[Any, ...]):
        mem = _check_memref(args[0], op.memref, "fetch.fetch")
        idx = fetch_indices(op)
        padding = padding_of(op)
        if padding is None:
            return (_stream(np.array(mem[idx]), op.result.type, "fetch.fetch"),)
        assert op.padding is not None  # padded: padding_of gave slots
        d = op.padding.dim
        inside = list(idx)
        inside[d] = np.clip(idx[d], 0, mem.shape[d] - 1)
        out = np.array(mem[tuple(inside)])
        fill = interpreter.get_data(FetchcFunctions, _FILL, lambda: 0)
        out[padding] = fill_element(_elem(op.memref.element_type, op.name), fill)
        return (_stream(out, op.result.type, "fetch.fetch"),)

    @impl(MaskOp)
    def run_mask(self, interpreter: Interpreter, op: MaskOp, args: tuple[Any, ...]):
        fetch = op.fetch_op()
        padding = padding_of(fetch) if fetch is not None else None
        if padding is None:
            raise InterpError("fetch.mask: its stream does not come from a padded fetch.fetch")
        out = np.array(args[0])
        out[padding] = np.zeros((), dtype=out.dtype)
        return (_stream(out, op.result.type, op.name),)

    @impl(TableLookupOp)
    def run_table_lookup(self, interpreter: Interpreter, op: TableLookupOp, args: tuple[Any, ...]):
        s, d = _elem(op.in_type.element_type, op.name), _elem(op.out_type.element_type, op.name)
        if op.function is not None:
            out = function_values(args[0], s, op.function, op.scale_value, op.zero_point_value)
            return (_stream(out, op.out_type, op.name),)
        return (_stream(lookup_values(args[0], s, d), op.out_type, op.name),)

    @impl(CastOp)
    def run_cast(self, interpreter: Interpreter, op: CastOp, args: tuple[Any, ...]):
        s, d = _elem(op.in_type.element_type, op.name), _elem(op.out_type.element_type, op.name)
        if s == d:  # the identity cast programs no stage (hardware.md §2.2)
            return (_stream(np.array(args[0]), op.out_type, op.name),)
        return (_stream(cast_values(args[0], s, d), op.out_type, op.name),)

    @impl(ZpSubOp)
    def run_zp_sub(self, interpreter: Interpreter, op: ZpSubOp, args: tuple[Any, ...]):
        st = op.input.type
        assert isinstance(st, StreamType)
        rule = target.ZERO_POINT[_elem(st.element_type, op.name)]
        return (_stream(zp_sub_values(args[0], op.zp, rule), op.result.type, op.name),)

    @impl(ConvertOp)
    def run_convert(self, interpreter: Interpreter, op: ConvertOp, args: tuple[Any, ...]):
        t = _elem(op.in_type.element_type, op.name)
        v = args[0]
        for kind, out in target.conversion_chain(t, _elem(op.out_type.element_type, op.name)):
            v = lookup_values(v, t, out) if kind == target.TABLE_LOOKUP else cast_values(v, t, out)
            t = out
        return (_stream(np.array(v), op.out_type, op.name),)

    @impl(DequantOp)
    def run_dequant(self, interpreter: Interpreter, op: DequantOp, args: tuple[Any, ...]):
        codes = args[0]
        fetch = op.input.owner
        if not isinstance(fetch, FetchOp):
            raise InterpError("fetch.dequant: its codes must come straight from fetch.fetch")
        bs_type = op.bscale.type
        assert isinstance(bs_type, MemRefType)
        bscale = _check_memref(args[1], bs_type, "fetch.dequant block scales")
        fmt = op.dequant_format.name
        block = op.dequant_format.block
        idx = fetch_indices(fetch)
        sidx = idx[:-1] + (idx[-1] // block,)
        scale_shape = bscale.shape
        for r, a in enumerate(sidx):
            if a.size and a.max() >= scale_shape[r]:
                raise InterpError(
                    f"fetch.dequant: block-scale index {r} reaches {a.max()}, but the memref has {scale_shape[r]}"
                )
        g = args[2] if len(args) > 2 else None
        out = dequant_rngd(codes, bscale[sidx], g, fmt)
        if op.result_element == target.BF16:
            out = rngd_ops.narrow(out)
        return (_stream(out, op.result.type, op.name),)

    # ---- rngd ----------------------------------------------------------
    @impl(SwitchOp)
    def run_switch(self, interpreter: Interpreter, op: SwitchOp, args: tuple[Any, ...]):
        return (args[0],)

    @impl(CollectOp)
    def run_collect(self, interpreter: Interpreter, op: CollectOp, args: tuple[Any, ...]):
        st = op.result.type
        assert isinstance(st, StreamType)
        return (_stream(rngd_ops.collect(args[0], st), st, op.name),)

    @impl(TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: TransposeOp, args: tuple[Any, ...]):
        st = op.result.type
        assert isinstance(st, StreamType)
        return (_stream(rngd_ops.transpose(args[0], st), st, op.name),)

    @impl(CommitOp)
    def run_commit(self, interpreter: Interpreter, op: CommitOp, args: tuple[Any, ...]):
        mt = op.dest.type
        assert isinstance(mt, MemRefType)
        buf = _check_memref(args[1], mt, "rngd.commit destination")
        src = np.asarray(args[0])
        if src.dtype != buf.dtype or src.size != buf.size:
            raise InterpError(f"rngd.commit: {src.size} x {src.dtype} into {buf.size} x {buf.dtype}")
        buf[...] = rngd_ops.committed(src, buf.shape)
        return ()

    @impl(ScratchOp)
    def run_scratch(self, interpreter: Interpreter, op: ScratchOp, args: tuple[Any, ...]):
        elem = _elem(op.memref.element_type, op.name)
        return (np.zeros(tuple(op.memref.get_shape()), dtype=elem.np_dtype),)

    @impl(ToTrfOp)
    def run_to_trf(self, interpreter: Interpreter, op: ToTrfOp, args: tuple[Any, ...]):
        return (args[0],)

    @impl(ToVrfOp)
    def run_to_vrf(self, interpreter: Interpreter, op: ToVrfOp, args: tuple[Any, ...]):
        return (args[0],)

    @impl(BlockScaleOp)
    def run_block_scale(self, interpreter: Interpreter, op: BlockScaleOp, args: tuple[Any, ...]):
        st = op.scale.type
        assert isinstance(st, (StreamType, VrfType))
        out = rngd_ops.block_scale(np.asarray(args[0]), np.asarray(args[1]), st, op.block.value.data)
        return (_stream(out, op.result.type, op.name),)

    @impl(CastEngineOp)
    def run_cast_engine(self, interpreter: Interpreter, op: CastEngineOp, args: tuple[Any, ...]):
        return (_stream(rngd_ops.narrow(np.asarray(args[0])), op.result.type, op.name),)

    @impl(TensorScaleOp)
    def run_tensor_scale(self, interpreter: Interpreter, op: TensorScaleOp, args: tuple[Any, ...]):
        out = rngd_ops.tensor_scale(np.asarray(args[0]), _f32(args[1]))
        return (_stream(out, op.result.type, op.name),)

    # ---- fetch_seq -----------------------------------------------------
    @impl(ProgramOp)
    def run_program(self, interpreter: Interpreter, op: ProgramOp, args: tuple[Any, ...]):
        mt = op.source.type
        assert isinstance(mt, MemRefType)
        mem = _check_memref(args[0], mt, f"fetch_seq.program {op.program_name.data}")
        prog, tables = program_from_op(op)
        bases: dict[SSAValue, int] = interpreter.get_data(FetchcFunctions, _BASES, dict)
        fill = interpreter.get_data(FetchcFunctions, _FILL, lambda: 0)
        default = op.source.owner.base_value if isinstance(op.source.owner, ScratchOp) else None
        base = bases.get(op.source, default or 0)
        flat = flatten_in_layout(mem, mt, fill)
        st = op.result.type
        assert isinstance(st, StreamType)
        padded = op.pad is not None
        if op.mask is None:
            enc = run_program_on_array(flat, prog, tables, base, padded=padded, fill=fill)
            vals = from_sim_encoding(enc, prog.out_dtype)
        else:
            vals = _masked_program(op, prog, tables, flat, base, fill)
        return (_stream(vals.reshape(st.time + st.packet), st, op.name),)


def _masked_program(
    op: ProgramOp, prog: Program, tables: Sequence[Table], flat: np.ndarray, base: int, fill: int
) -> np.ndarray:
    """A masked ``fetch_seq.program``'s canonical output values, shape
    ``(packets, packet_size)``: the loop nest read raw, the slots its
    ``mask`` zeroes set to the input type's zero (hardware.md §2.0:
    masking is the first stage), then the other stages."""
    assert op.mask is not None
    t = prog.in_dtype
    raw_prog = dataclasses.replace(
        prog, stages=0, table=None, type_conversion=None, zero_point0=0, num_zero_points=0, zp_mode=0, out_dtype=t,
        flit_count=target.flit_count(prog.packet_size, t),
    )  # fmt: skip
    raw = from_sim_encoding(run_program_on_array(flat, raw_prog, [], base, padded=True, fill=fill), t)
    raw[zeroed_slots(prog.limits, prog.packet_size, op.mask.config)] = np.zeros((), dtype=raw.dtype)
    plan = plan_program(unmasked(prog), tables, str(prog.name))
    return stages_on_values(raw, plan)


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------


def make_interpreter(module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()) -> Interpreter:
    """An xDSL ``Interpreter`` for ``module`` with ``func``, ``arith`` and
    fetchc's implementations registered; ``listeners`` observe every op."""
    interp = Interpreter(module, listeners=tuple(listeners))
    interp.register_implementations(FuncFunctions())
    interp.register_implementations(ArithFunctions())
    interp.register_implementations(FetchcFunctions())
    return interp


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    op = SymbolTable.lookup_symbol(module, name)
    if not isinstance(op, func.FuncOp):
        names = [o.sym_name.data for o in module.walk() if isinstance(o, func.FuncOp)]
        raise InterpError(f"no function @{name} in the module; it has: {', '.join('@' + n for n in names) or 'none'}")
    return op


def interpret(
    module: ModuleOp,
    function_name: str,
    args: Sequence[Any],
    *,
    memref_bases: Mapping[int | SSAValue, int] | None = None,
    listeners: Sequence[Interpreter.Listener] = (),
    dm_fill: int = 0,
) -> list[Any]:
    """Run ``@function_name`` of ``module`` on ``args`` and return its
    results as a list.

    ``args``: one value per function argument (module docstring: memrefs as
    numpy arrays of canonical values, mutated in place by ``rngd.commit``;
    ``f32`` scalars).  ``memref_bases``: DM byte address of a memref, keyed by
    argument index (or SSA value), used only by ``fetch_seq.program``
    (default 0); see :func:`fetch_bases`.  ``listeners``: xDSL
    ``Interpreter.Listener`` objects that see every op and its results (e.g.
    to capture each ``fetch_seq.program``'s stream).  ``dm_fill``: the byte
    the interpreter's DM holds where no tensor element lives, which a padded
    fetch's unmasked padding slots read (two equal nibbles; default 0, as
    ``fetchc run``'s DM image).

    Raises :class:`InterpError` (unknown function, wrong argument count,
    shape or dtype), :class:`fetchc.golden.sim.SimError`, or xDSL's
    ``InterpretationError`` (an op without implementation)."""
    fn = _function(module, function_name)
    block = fn.body.blocks.first
    params = list(block.args) if block is not None else []
    if len(args) != len(params):
        raise InterpError(f"@{function_name} takes {count(len(params), 'argument')}, got {len(args)}")
    for i, (p, a) in enumerate(zip(params, args, strict=False)):
        if isinstance(p.type, MemRefType):
            _check_memref(a, p.type, f"@{function_name} argument {i}")
    bases: dict[SSAValue, int] = {}
    for k, v in (memref_bases or {}).items():
        bases[params[k] if isinstance(k, int) else k] = int(v)
    interp = make_interpreter(module, listeners)
    interp.set_data(FetchcFunctions, _BASES, bases)
    interp.set_data(FetchcFunctions, _FILL, _check_fill(dm_fill))
    return list(interp.call_op(fn, tuple(args)))


def fetch_bases(module: ModuleOp, function_name: str) -> dict[int, int]:
    """The DM byte address of each memref argument of ``@function_name``
    that a ``fetch.fetch`` reads (its ``base``) or a ``fetch.dequant`` reads
    block scales from (its ``scale_base``), keyed by argument index.  Call it
    before ``fetch-to-seq`` (which drops those properties) and pass the
    result to :func:`interpret` for the lowered module.  Raises
    :class:`InterpError` when one memref is read at two addresses."""
    fn = _function(module, function_name)
    out: dict[int, int] = {}

    def note(v: SSAValue, base: int) -> None:
        if isinstance(v, BlockArgument) and v.block is fn.body.blocks.first:
            if out.setdefault(v.index, base) != base:
                raise InterpError(
                    f"argument {v.index} of @{function_name} is fetched at DM addresses {out[v.index]} and {base}"
                )

    for op in fn.walk():
        if isinstance(op, FetchOp):
            note(op.source, op.base_value)
        elif isinstance(op, DequantOp):
            note(op.bscale, 0 if op.scale_base is None else op.scale_base.value.data)
    return out
