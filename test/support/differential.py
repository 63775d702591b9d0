"""The differential harness: the whole compiler checked against the golden
model and an independent reference (the "Golden model" issue).  The tests
are in ``test/pytest/test_differential.py``; this module holds the
machinery they share.

:func:`check_function` runs steps 1-3 (and 4, through
:func:`simulate_compiled`) for one function of a module's text on given
arguments (:func:`make_args`: seeded random inputs, random bit patterns:
NaN, ±inf, subnormals wherever the type has them):

1. **Independent reference.**  :func:`reference_run` evaluates the *input*
   module from a DM image that this module builds itself (:func:`build_dm`:
   every fetched memref at its DM address (:func:`own_bases`: the placement
   rule of ir.md §2a, computed here), laid out by its
   ``strided<>`` layout, 4-bit values packed low nibble first).  It shares no
   code with ``fetchc.golden.interp`` / ``fetchc.golden.sim`` /
   ``fetchc.target.numerics``: addresses from the memref layout and the map
   (coefficients obtained by evaluating the map on unit vectors), nibbles
   unpacked low-first, table lookups as ``ml_dtypes`` value conversions (NaN
   keys give the quiet NaN of their sign, seqbin.md TABLES), function tables
   by :mod:`fnref` (hardware.md §2.1b), casts by the
   rules of hardware.md §2.2a written out here (:func:`rngd_cast`: ``bf16``
   subnormals flush to a zero of their sign, NaNs become ``0x7FC00000`` /
   ``0x7FC0``, ``f8E5M2`` NaNs keep their sign, ``f32 -> bf16`` by integer
   round-to-nearest-even), NVFP4 as ``E2M1 * f32(bscale) * gscale`` and MXFP4
   as ``E2M1 * 2^(e-127)`` (``0xFF`` -> NaN) computed exactly in float64,
   rounded once to f32 and then put through the Vector Engine's rules
   (:func:`vector_round`, :func:`daz64`: subnormal operands read as zero,
   subnormal results flush to a zero of their sign, NaN results are
   ``0x7FC00000``).  The interpreter's results on the input module must equal
   it bit for bit, NaN sign and payload included.
2. **Pass by pass.**  The module is interpreted (``fetchc.golden.interp``) before any
   pass and after each of ``fetch-place-dm`` (whose addresses must equal
   :func:`own_bases`), ``fetch-legalize-convert``, ``fetch-split-scaling``
   and ``fetch-to-seq``; the module must verify after each pass, and every
   memref written by ``rngd.commit``, every returned value and every stream
   fed to ``rngd.contract_outer`` must be identical **bit for bit** (raw
   bits, NaN payloads included).
3. **Golden model.**  ``fetchc.compile`` compiles the source text; the
   ``seq.bin`` bytes are read back and ``fetchc.golden.sim.simulate`` runs every
   program on the DM image.  Each program's output must equal, bit for bit,
   the stream the interpreter's ``fetch_seq.program`` produced for it (after
   ``fetch-to-seq``), in the ``ir.md`` §5 encoding, and also (bit for bit) the
   reference's adapter output for that program (programs numbered
   ``function/index`` in ``fetch.fetch`` order, a dequant's scale fetch right
   after its codes' fetch).  The hardware runs the programs in order, so a
   program that fetches a memref an earlier ``rngd.commit`` wrote runs on the
   image *after* that commit (the reference keeps one DM snapshot per
   program; without such a commit all programs share the one image).
4. **Register blocks.**  Every compiled program's fields (base, limits,
   strides, packet and fetch size, words per packet, stages, table pair, cast
   code, zero point, flit count, unit, dtypes) must equal the ones derived
   here from the input module by the literal rules of hardware.md §3 and
   seqbin.md (:func:`expected_programs`), and stay within the hardware's
   limits (the simulator would run an over-long entry without complaint).

``rngd.contract_outer`` has no arithmetic in the IR contract, so the
interpreter cannot execute it.  Here every interpreter run registers a stub
implementation (:class:`_ContractStub`, by wrapping
``fetchc.golden.interp.make_interpreter``) that records its two operands (the
adapter stream, e.g. ``i9`` residuals, and the TRF weights) and returns an
all-zero accumulator stream.  The recorded operands are compared across passes
and against the reference; the zeros committed downstream are trivially
equal.  Whatever feeds the Contraction Engine is thus checked up to its input,
and the programs that produce it are checked against the simulator like any
other.

Examples.  The tests run every function of every ``examples/*.mlir``
through steps 1-4 and, for the decodes they commit (dequant, convert,
plain reads) and the zero-point residuals they feed to the Contraction
Engine, a second check against formulas written out per format from the raw
DM bytes (:func:`check_decodes`: nibbles low-first, E2M1 via ml_dtypes
``float4_e2m1fn`` checked against the ladder, ``f32(bscale)`` then
``gscale`` by the Vector Engine's rules; ``2^(e-127)`` with ``0xFF`` NaN;
``f8E5M2 -> bf16`` via ml_dtypes; ``x - zp``).  NVFP4 functions run with
the tensor scales :data:`G_SCALES` (:func:`args_with_scales`: 0.37, 2^-140
(a subnormal scale: reads as zero), 2^-120 (subnormal products: flushed) and
3e38 (overflow to inf)); random block scales include the e4m3 subnormals and
NaNs, random e8m0 exponents 2^-127 (reads as zero), 2^-126 (subnormal
products) and 2^127 (overflow).  Functions with more than :data:`BIG`
elements in their memrefs (the 4096 x 4096 weights) run steps 1-4 on a copy
whose leading dimension is shrunk to :data:`SHRUNK_ROWS` rows
(:func:`shrink`), and at their real size the golden model alone
(:func:`golden_full_size`: steps 3 and 4 against the reference, and the
whole decode recomputed from the simulator's programs).

Nothing here imports ``fetchc.target.numerics`` or the simulator's and the
interpreter's own decoders for the reference side: the reference, the DM
image, the placement rule and the register-block rules are written out here
from the specs.
"""


from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import pathlib
import re
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, Float32Type, MemRefType, StridedLayoutAttr
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.ir.affine import AffineMap

import fetchc
import fetchc.golden.interp
import fnref
from fetchc import seqbin
from fetchc.frontend.context import all_passes, make_context
from fetchc.diagnostics import render_all, verify_module
from fetchc.dialects.fetch import StreamType
from fetchc.dialects.rngd import ContractOuterOp
from fetchc.golden.interp import fetch_bases, interpret
from fetchc.golden.sim import simulate
from fetchc.frontend.parsing import parse_module
from fetchc.target.encoding import to_sim_encoding

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PIPELINE = ["fetch-place-dm", "fetch-legalize-convert", "fetch-split-scaling", "fetch-to-seq"]

# --------------------------------------------------------------------------
# Element types, independently of fetchc.target
# --------------------------------------------------------------------------

NP_DTYPE: dict[str, Any] = {
    "i4": ml_dtypes.int4,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i5": np.int8,
    "i9": np.int16,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
}
BITS = {"i4": 4, "f4E2M1FN": 4, "i8": 8, "f8E4M3FN": 8, "f8E5M2": 8, "f8E8M0FNU": 8, "i16": 16, "bf16": 16,
        "i32": 32, "f32": 32, "i5": 5, "i9": 9}  # fmt: skip
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def ename(t) -> str:
    """MLIR spelling of an element type (``f4E2M1FN``, ``i8``, ...)."""
    from io import StringIO

    from xdsl.printer import Printer

    out = StringIO()
    Printer(stream=out).print_attribute(t)
    return out.getvalue()


def bits(a: np.ndarray) -> np.ndarray:
    """Raw bits (4-bit types as their codes)."""
    a = np.ascontiguousarray(a)
    if a.dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.float4_e2m1fn)):
        return a.view(np.uint8) & 0x0F
    return a.view(UINT[a.dtype.itemsize])


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal shape, dtype and raw bits (NaN sign and payload included)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    return bool(np.array_equal(bits(x), bits(y)))


def first_difference(x: np.ndarray, y: np.ndarray) -> str:
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        return f"shape/dtype {x.shape}/{x.dtype} vs {y.shape}/{y.dtype}"
    bx, by = bits(x).reshape(-1), bits(y).reshape(-1)
    bad = np.flatnonzero(bx != by)
    i = int(bad[0])
    return (
        f"{bad.size} of {bx.size} elements differ; first at flat index {i} "
        f"(index {tuple(int(j) for j in np.unravel_index(i, x.shape))}): {x.reshape(-1)[i]!r} (bits {int(bx[i]):#x}) vs "
        f"{y.reshape(-1)[i]!r} (bits {int(by[i]):#x})"
    )


def assert_same(x, y, what: str) -> None:
    assert same_bits(x, y), f"{what}: {first_difference(x, y)}"


def encode(arr: np.ndarray, elem: str) -> np.ndarray:
    """The ``ir.md`` §5 ``fetchc sim`` encoding, written independently:
    4-bit codes and 8-bit float bits as ``uint8``, bf16 bits as ``uint16``,
    the rest (f32, i32, i8, i16, i5 as int8, i9 as int16) as themselves."""
    arr = np.ascontiguousarray(arr)
    assert arr.dtype == np.dtype(NP_DTYPE[elem]), (arr.dtype, elem)
    if BITS[elem] == 4:
        return arr.view(np.uint8) & np.uint8(0x0F)
    if elem in ("f8E4M3FN", "f8E5M2", "f8E8M0FNU", "bf16"):
        return arr.view(UINT[BITS[elem] // 8]).copy()
    return arr.copy()


# --------------------------------------------------------------------------
# Random inputs
# --------------------------------------------------------------------------

SPECIAL_F32 = [
    0.0, -0.0, 1.0, -1.0, 0.37, -1.25, math.inf, -math.inf, math.nan, 2.0**-149, 2.0**-140, -(2.0**-130),
    2.0**-126, 3.0e38, -3.4028234663852886e38, 7.5e-3,
]  # fmt: skip


# Bit patterns random bits rarely hit: signalling / low-payload NaNs, ±inf,
# the smallest and largest subnormals, the largest finite values, and f32
# values exactly halfway between two bf16 values (round-to-nearest-even ties,
# both parities, and a tie just below the overflow threshold).
SPECIAL_BITS = {
    "f32": [0x7F800001, 0xFF800001, 0x7F80FFFF, 0x7FC00000, 0xFFFFFFFF, 0x7F800000, 0xFF800000, 0x00000001,
            0x807FFFFF, 0x7F7FFFFF, 0x3F808000, 0x3F818000, 0xBF808000, 0x7F7F8000, 0x7F7F7FFF, 0x00008000,
            0x00018000, 0x80000000],
    "bf16": [0x7F81, 0xFFC1, 0x7F80, 0xFF80, 0x0001, 0x807F, 0x7F7F, 0x8000],
    "f8E4M3FN": [0x7F, 0xFF, 0x01, 0x07, 0x08, 0x7E, 0x80],
    "f8E5M2": [0x7D, 0x7E, 0x7F, 0xFD, 0x7C, 0xFC, 0x01, 0x03, 0x7B, 0x80],
    "f8E8M0FNU": [0x00, 0x01, 0x7F, 0xFE, 0xFF],
}  # fmt: skip


def rand_values(shape, elem: str, rng: np.random.Generator) -> np.ndarray:
    """Random bit patterns of ``elem`` (every code, NaN/inf/subnormal
    included), about one in eight replaced by a :data:`SPECIAL_BITS` one."""
    dt = np.dtype(NP_DTYPE[elem])
    if BITS[elem] == 4:
        codes = rng.integers(0, 16, shape, dtype=np.uint8)
        if elem == "i4":  # canonical int4 holds the sign-extended value
            return (((codes.astype(np.int8) ^ 8) - 8).astype(np.int8)).astype(dt)
        return codes.view(dt)
    n = int(np.prod(shape, dtype=np.int64))
    raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(UINT[dt.itemsize])
    if elem in SPECIAL_BITS and n:
        pick = rng.random(n) < 0.125
        special = np.array(SPECIAL_BITS[elem], dtype=UINT[dt.itemsize])
        raw[pick] = special[rng.integers(0, special.size, int(pick.sum()))]
    return raw.view(dt).reshape(shape)


def rand_f32(rng: np.random.Generator) -> np.float32:
    """A random f32 scalar: half the time a special value, else random bits."""
    if rng.random() < 0.5:
        return np.float32(SPECIAL_F32[int(rng.integers(len(SPECIAL_F32)))])
    return rng.integers(0, 2**32, dtype=np.uint64).astype(np.uint32).view(np.float32)


def func_op(module, name: str) -> func.FuncOp:
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(name)


def make_args(module, fn: str, rng: np.random.Generator, scalars=None) -> list:
    """Random arguments: memrefs of random bits, f32 scalars from
    ``scalars`` (in order) or :func:`rand_f32`."""
    sc = list(scalars or [])
    out = []
    for a in func_op(module, fn).body.blocks.first.args:
        if isinstance(a.type, MemRefType):
            out.append(rand_values(tuple(a.type.get_shape()), ename(a.type.element_type), rng))
        elif isinstance(a.type, Float32Type):
            out.append(np.float32(sc.pop(0)) if sc else rand_f32(rng))
        else:
            raise AssertionError(f"unexpected argument type {a.type}")
    return out


# --------------------------------------------------------------------------
# DM image and layouts (independent of fetchc.golden.interp / fetchc.golden.sim)
# --------------------------------------------------------------------------


def layout(mt: MemRefType) -> tuple[tuple[int, ...], list[int], int]:
    """(shape, strides, offset) in elements, from the type itself."""
    shape = tuple(mt.get_shape())
    lay = mt.layout
    if isinstance(lay, StridedLayoutAttr):
        return shape, [int(s) for s in lay.get_strides()], int(lay.get_offset())
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return shape, strides[::-1], 0


def element_addresses(mt: MemRefType) -> np.ndarray:
    """Element address (relative to the memref's DM base, in elements) of
    every logical element, row-major, 1-D."""
    shape, strides, offset = layout(mt)
    n = math.prod(shape)
    _, natural, _ = layout(MemRefType(mt.element_type, shape))
    if list(strides) == list(natural):
        return np.arange(offset, offset + n, dtype=np.int64)
    addr = np.full(shape, offset, dtype=np.int64)
    for d, (k, s) in enumerate(zip(shape, strides)):
        addr = addr + (np.arange(k, dtype=np.int64) * s).reshape((1,) * d + (k,) + (1,) * (len(shape) - d - 1))
    return addr.reshape(-1)


def footprint_bytes(mt: MemRefType) -> int:
    shape, strides, offset = layout(mt)
    if not all(shape):
        return 0
    last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
    return ((last + 1) * BITS[ename(mt.element_type)] + 7) // 8


def write_dm(dm: np.ndarray, base: int, mt: MemRefType, values: np.ndarray) -> None:
    """Store ``values`` (canonical, the memref's logical shape) at DM byte
    ``base`` in the memref's layout: little-endian, 4-bit values two per
    byte, even element address in the low nibble."""
    elem = ename(mt.element_type)
    vals = np.ascontiguousarray(values).reshape(-1)
    shape, strides, offset = layout(mt)
    if BITS[elem] == 4 and strides == layout(MemRefType(mt.element_type, shape))[1] and offset % 2 == 0 and vals.size % 2 == 0:
        codes = vals.view(np.uint8) & np.uint8(0x0F)  # contiguous: pack pairs, even element low
        dm[base + offset // 2 : base + (offset + vals.size) // 2] = codes[0::2] | (codes[1::2] << 4)
        return
    a = element_addresses(mt)
    if BITS[elem] == 4:
        codes = vals.view(np.uint8) & np.uint8(0x0F)
        byte = base + a // 2
        odd = (a % 2).astype(bool)
        dm[byte[~odd]] = (dm[byte[~odd]] & 0xF0) | codes[~odd]
        dm[byte[odd]] = (dm[byte[odd]] & 0x0F) | (codes[odd] << 4)
    else:
        nb = BITS[elem] // 8
        if nb == 1:
            dm[base + a] = vals.view(np.uint8)
        else:
            dm[(base + a * nb)[:, None] + np.arange(nb)] = vals.view(np.uint8).reshape(-1, nb)


def build_dm(module, fn: str, args: list, bases: dict[int, int]) -> np.ndarray:
    """A DM image holding memref argument ``i`` at byte ``bases[i]``
    (:func:`write_dm`).  Asserts the memrefs' byte ranges do not overlap."""
    params = func_op(module, fn).body.blocks.first.args
    spans = sorted((b, b + footprint_bytes(params[i].type), i) for i, b in bases.items())
    for (b0, e0, i0), (b1, e1, i1) in zip(spans, spans[1:]):
        assert e0 <= b1, f"arguments {i0} and {i1} overlap in DM ([{b0}, {e0}) and [{b1}, {e1}))"
    dm = np.zeros(max((e for _, e, _ in spans), default=0) + 8, np.uint8)
    for i, b in bases.items():
        write_dm(dm, b, params[i].type, args[i])
    return dm


def map_coefficients(amap: AffineMap, ndims: int) -> tuple[np.ndarray, np.ndarray]:
    """(coeffs[r][d], consts[r]) of a linear map, by evaluating it at 0 and
    at the unit vectors (xDSL's AffineMap.eval)."""
    zero = np.array(amap.eval([0] * ndims, []), dtype=np.int64)
    coeffs = np.zeros((len(zero), ndims), dtype=np.int64)
    for d in range(ndims):
        e = [0] * ndims
        e[d] = 1
        coeffs[:, d] = np.array(amap.eval(e, []), dtype=np.int64) - zero
    return coeffs, zero


def fetch_index_arrays(op) -> list[np.ndarray]:
    """Per memref dim, the index the fetch reads at each stream position
    (broadcastable arrays of the stream's shape).  Checks bounds."""
    st: StreamType = op.result.type
    shape = st.time + st.packet
    nd = len(shape)
    mt = op.operands[0].type
    rank = len(mt.get_shape())
    amap = op.map.data if op.map is not None else AffineMap.identity(rank)
    coeffs, consts = map_coefficients(amap, nd)
    out = []
    for r in range(rank):
        idx = np.full((1,) * nd, consts[r], dtype=np.int64)
        lo = hi = int(consts[r])
        for d, n in enumerate(shape):
            c = int(coeffs[r, d])
            if c:
                idx = idx + (np.arange(n, dtype=np.int64) * c).reshape((1,) * d + (n,) + (1,) * (nd - d - 1))
                lo, hi = lo + min(0, c * (n - 1)), hi + max(0, c * (n - 1))
        assert 0 <= lo and hi < mt.get_shape()[r], f"{op.name} reads index {r} in [{lo}, {hi}] of {mt}"
        out.append(idx)
    return out


def read_dm(dm: np.ndarray, base: int, mt: MemRefType, idx: list[np.ndarray], shape) -> np.ndarray:
    """Canonical values of memref ``mt`` (at DM byte ``base``) at the index
    arrays ``idx``, read from the DM bytes."""
    _, strides, offset = layout(mt)
    addr = np.full((1,) * len(shape), offset, dtype=np.int64)
    for i, s in zip(idx, strides):
        addr = addr + i * s
    addr = np.broadcast_to(addr, shape)
    elem = ename(mt.element_type)
    dt = np.dtype(NP_DTYPE[elem])
    if BITS[elem] == 4:  # unpack the memref's bytes low nibble first, then gather
        lo, hi = int(addr.min()), int(addr.max())
        region = dm[base + lo // 2 : base + hi // 2 + 1]
        nib = np.empty(2 * region.size, np.uint8)
        nib[0::2], nib[1::2] = region & 0x0F, region >> 4
        code = nib[addr - (lo - lo % 2)]
        if elem == "i4":
            return (((code.astype(np.int8) ^ 8) - 8).astype(np.int8)).astype(dt)
        return code.view(dt)
    nb = BITS[elem] // 8
    raw = dm[(base + addr * nb)[..., None] + np.arange(nb)]
    return np.ascontiguousarray(raw).view(dt).reshape(shape)


# --------------------------------------------------------------------------
# The independent reference evaluator
# --------------------------------------------------------------------------

QNAN32 = 0x7FC00000
"""The canonical f32 NaN of hardware.md §2.2a."""


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """hardware.md §2.2a ``f32 -> bf16``: round to nearest even by integer
    arithmetic (overflow -> inf); a subnormal gives a zero of its sign; any
    NaN gives ``0x7FC0``."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r = np.where((u & 0x7F800000) == 0, ((u >> 16) & 0x8000).astype(np.uint16), r)
    r = np.where((u & 0x7FFFFFFF) > 0x7F800000, np.uint16(0x7FC0), r).astype(np.uint16)
    return r.view(ml_dtypes.bfloat16)


def rngd_cast(v: np.ndarray, src: str, dst: str) -> np.ndarray:
    """One of the seven adapter casts with hardware.md §2.2a's rules: integers
    sign-extend; ``f8E4M3FN`` / ``f8E5M2`` / ``bf16 -> f32`` widen the value
    exactly (ml_dtypes), then a ``bf16`` subnormal becomes a zero of its
    sign and a NaN becomes ``0x7FC00000`` (``f8E5M2``: ``0xFFC00000`` when
    the NaN's sign bit is set); ``f32 -> bf16`` by :func:`f32_to_bf16`."""
    assert (src, dst) in CAST_CODE, (src, dst)
    if dst == "i32":
        return v.astype(np.int32)
    if dst == "bf16":
        return f32_to_bf16(v)
    src_bits = bits(v).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        wide = np.ascontiguousarray(v.astype(np.float32))
    u = wide.view(np.uint32).copy()
    if src == "bf16":
        u = np.where((src_bits & 0x7F80) == 0, u & 0x80000000, u)
    negative = (src_bits >> (BITS[src] - 1)) == 1
    qnan = np.where(negative, 0xFFC00000, QNAN32) if src == "f8E5M2" else QNAN32
    u = np.where(np.isnan(wide), qnan, u).astype(np.uint32)
    return u.view(np.float32)


def table_lookup(v: np.ndarray, src: str, dst: str) -> np.ndarray:
    """One of the four lookups (hardware.md §2.1): every entry is the exact
    value conversion (ml_dtypes); NaN keys give the quiet NaN of the key's
    sign, ``0x7FC0`` / ``0xFFC0`` (seqbin.md TABLES)."""
    assert (src, dst) in LOOKUP_PAIRS, (src, dst)
    with np.errstate(invalid="ignore"):
        out = np.ascontiguousarray(v.astype(np.float32).astype(NP_DTYPE[dst]))
    if dst == "bf16":
        key = bits(v).astype(np.uint16)
        with np.errstate(invalid="ignore"):
            nan = np.isnan(v.astype(np.float32))
        out = np.where(nan, np.uint16(0x7FC0) | ((key & 0x80) << 8), out.view(np.uint16)).astype(np.uint16)
        out = out.view(ml_dtypes.bfloat16)
    return out


def convert_values(v: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Any adapter conversion: a table lookup, a cast, or a lookup then a
    cast (``f4E2M1FN -> f32`` through ``f8E4M3FN``; every e2m1 value is
    exact in both 8-bit floats, so the intermediate type does not matter)."""
    if src == dst:
        return v
    if (src, dst) in LOOKUP_PAIRS:
        return table_lookup(v, src, dst)
    if (src, dst) in CAST_CODE:
        return rngd_cast(v, src, dst)
    for mid in ("f8E4M3FN", "f8E5M2", "bf16"):
        if (src, mid) in LOOKUP_PAIRS and (mid, dst) in CAST_CODE:
            return rngd_cast(table_lookup(v, src, mid), mid, dst)
    raise AssertionError(f"no adapter conversion {src} -> {dst}")


def daz64(a) -> np.ndarray:
    """f32 values as Vector Engine operands, in float64: a subnormal reads as
    a zero of its sign (hardware.md §2.2a)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32)
    u = np.where((u & 0x7F800000) == 0, u & 0x80000000, u).astype(np.uint32)
    return u.view(np.float32).astype(np.float64)


def vector_round(p: np.ndarray) -> np.ndarray:
    """An exact product (float64) as the Vector Engine returns it: rounded
    once to f32 (IEEE round to nearest even), a subnormal result flushed to a
    zero of its sign, a NaN as ``0x7FC00000`` (hardware.md §2.2a)."""
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.ascontiguousarray(p.astype(np.float32))
    u = r.view(np.uint32)
    u = np.where((u & 0x7F800000) == 0, u & 0x80000000, u)
    u = np.where(np.isnan(p), QNAN32, u).astype(np.uint32)
    return u.view(np.float32)


def vmul(a, b) -> np.ndarray:
    """The Vector Engine's f32 multiply (the product of two f32 values is
    exact in float64, so rounding it once is IEEE's f32 product)."""
    with np.errstate(invalid="ignore"):
        return vector_round(daz64(a) * daz64(b))


def e8m0_f32(e: np.ndarray) -> np.ndarray:
    """``2^(e-127)`` in f32 (``e = 0``: the subnormal ``2^-127``), ``e =
    255`` -> NaN (hardware.md §4)."""
    e = np.asarray(e).astype(np.int32)
    with np.errstate(over="ignore"):
        s = np.ldexp(np.float32(1.0), e - 127).astype(np.float32)
    s[e == 0xFF] = np.float32(np.nan)
    return s


def e2m1_f64(codes: np.ndarray) -> np.ndarray:
    """E2M1 through ml_dtypes: float4_e2m1fn -> f32 -> f64 (exact)."""
    return np.asarray(codes).astype(np.float32).astype(np.float64)


@dataclasses.dataclass
class Outcome:
    """What a run produced: every memref argument after the call (in
    argument order), the function results, the operands of each
    ``rngd.contract_outer`` (in order), and the programs' adapter output
    streams by name (canonical values).  The reference, and an interpreter
    run given the DM image, also give the image each program starts from
    (``dm_for``: earlier commits to fetched memrefs included)."""

    memrefs: list
    results: list
    contract: list
    programs: dict
    dm_for: dict = dataclasses.field(default_factory=dict)


def reference_run(module, fn: str, args: list, bases: dict[int, int], dm: np.ndarray, programs_only: bool = False) -> Outcome:
    """Evaluate the (input, pre-pass) function from the DM image ``dm``
    (not modified).  ``rngd.commit`` to a memref that has a DM address also
    stores into (a copy of) the image, so a later fetch reads what was
    committed.  ``programs_only``: skip the downstream arithmetic (dequant
    products, commits) and only compute the programs' streams."""
    return _Reference(module, fn, args, bases, dm, programs_only).run()


def program_numbers(f) -> dict:
    """Program numbering of ``f``: ``fetch.fetch`` ops in order, a
    dequant's scale fetch right after its codes.  Returns {fetch op: index}."""
    progs: dict = {}
    k = 0
    for op in f.walk():
        if op.name == "fetch.fetch":
            progs[op] = k
            users = [u.operation for u in op.results[0].uses]
            k += 2 if users and users[0].name == "fetch.dequant" else 1
    return progs


class _Reference:
    """The state of one :func:`reference_run`: SSA values (``env``), the
    program whose output each stream is (``prog_val``), the programs'
    streams and DM images, the contraction operands; one method per op."""

    def __init__(self, module, fn: str, args: list, bases: dict[int, int], dm: np.ndarray, programs_only: bool):
        self.f = func_op(module, fn)
        self.fn, self.bases, self.dm, self.programs_only = fn, bases, dm, programs_only
        self.params = list(self.f.body.blocks.first.args)
        self.mem = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        self.env: dict = dict(zip(self.params, self.mem))
        self.progs = program_numbers(self.f)
        self.prog_val: dict = {}  # SSA value -> program index whose current output it is
        self.programs: dict = {}
        self.dm_for: dict = {}
        self.contract: list = []
        self.results: list = []

    def run(self) -> Outcome:
        handlers = {
            "fetch.fetch": self.fetch, "fetch.table_lookup": self.convert, "fetch.cast": self.convert,
            "fetch.convert": self.convert, "fetch.zp_sub": self.zp_sub, "fetch.dequant": self.dequant,
            "rngd.switch": self.same, "rngd.collect": self.collect, "rngd.to_trf": self.same, "rngd.to_vrf": self.same,
            "rngd.transpose": self.transpose, "rngd.commit": self.commit, "rngd.contract_outer": self.contract_outer,
            "rngd.block_scale": self.block_scale, "rngd.tensor_scale": self.tensor_scale, "rngd.cast": self.narrow,
            "arith.constant": self.constant, "func.return": self.ret,
        }  # fmt: skip
        for op in self.f.body.blocks.first.ops:
            handler = handlers.get(op.name)
            if handler is None:
                raise AssertionError(f"the reference does not know {op.name}; extend reference_run")
            handler(op, [self.env.get(v) for v in op.operands])
        memrefs = [a for a in self.mem if isinstance(a, np.ndarray)]
        return Outcome(memrefs, self.results, self.contract, self.programs, self.dm_for)

    def arg_index(self, v) -> int:
        assert v in self.params, "a fetch reads a memref that is not a function argument"
        return self.params.index(v)

    def set_program(self, v, val) -> None:
        """``v`` (a stage's result) is now the output of its operand's program."""
        self.prog_val[v] = self.prog_val[v.owner.operands[0]]
        self.programs[f"{self.fn}/{self.prog_val[v]}"] = val

    def fetch(self, op, ins) -> None:
        st: StreamType = op.result.type
        shape = st.time + st.packet
        i = self.arg_index(op.operands[0])
        idx = fetch_index_arrays(op)
        val = read_dm(self.dm, self.bases[i], op.operands[0].type, idx, shape)
        self.env[op.result] = val
        self.env[("idx", op.result)] = idx
        k = self.progs[op]
        self.prog_val[op.result] = k
        self.programs[f"{self.fn}/{k}"] = val
        self.dm_for[f"{self.fn}/{k}"] = self.dm

    def convert(self, op, ins) -> None:
        s = ename(op.operands[0].type.element_type)
        d = ename(op.results[0].type.element_type)
        if "fn" in op.properties:  # a function table: hardware.md §2.1b, by fnref
            props = op.properties
            scale = props["scale"].value.data if "scale" in props else 1.0
            zp = props["zero_point"].value.data if "zero_point" in props else 0
            x = fnref.key_values(ins[0], s, scale, zp)
            val = fnref.apply(props["fn"].data, x).view(ml_dtypes.bfloat16)
        else:
            val = convert_values(ins[0], s, d)
        self.env[op.results[0]] = val
        if op.operands[0] in self.prog_val:
            self.set_program(op.results[0], val)

    def zp_sub(self, op, ins) -> None:
        s = ename(op.operands[0].type.element_type)
        zp = op.properties["zero_point"].value.data
        lo, hi = {"i4": (-8, 7), "i8": (-128, 127)}[s]
        assert lo <= zp <= hi
        r = ins[0].astype(np.int32) - np.int32(zp)
        self.env[op.results[0]] = val = r.astype(np.int8 if s == "i4" else np.int16)
        if op.operands[0] in self.prog_val:
            self.set_program(op.results[0], val)

    def dequant(self, op, ins) -> None:
        fn, programs = self.fn, self.programs
        fmt = op.properties["format"].data
        block = {"nvfp4": 16, "mxfp4": 32}[fmt]
        codes_v = op.operands[0]
        st = codes_v.type
        shape = st.time + st.packet
        idx = self.env[("idx", codes_v)]
        sidx = idx[:-1] + [idx[-1] // block]  # the block scale of every code
        sbase = self.bases[self.arg_index(op.operands[1])]  # the placement (own_bases)
        assert "scale_base" not in op.properties or op.properties["scale_base"].value.data == sbase
        # the scale stream: one scale per block, read at the block's first code
        sl = (slice(None),) * (len(shape) - 1) + (slice(None, None, block),)
        sshape = st.time + st.packet[:-1] + (st.packet[-1] // block,)
        scale1 = read_dm(self.dm, sbase, op.operands[1].type, [np.broadcast_to(i, shape)[sl] for i in sidx], sshape)
        x = e2m1_f64(ins[0]).astype(np.float32)  # lookup + cast: E2M1 -> f32, exact
        pk = self.prog_val[codes_v]
        programs[f"{fn}/{pk}"] = x
        programs[f"{fn}/{pk + 1}"] = rngd_cast(scale1, "f8E4M3FN", "f32") if fmt == "nvfp4" else scale1
        self.dm_for[f"{fn}/{pk + 1}"] = self.dm
        if self.programs_only:
            self.env[op.results[0]] = None
            return
        scale = np.repeat(programs[f"{fn}/{pk + 1}"], block, axis=-1)
        if fmt == "nvfp4":  # Vector Engine: block scale first, tensor scale second
            val = vmul(vmul(x, scale), np.float32(ins[2]))
        else:
            val = vmul(x, e8m0_f32(scale.view(np.uint8)))
        if ename(op.results[0].type.element_type) == "bf16":  # then the Cast Engine (hardware.md §2.6)
            val = f32_to_bf16(val)
        self.env[op.results[0]] = val

    def block_scale(self, op, ins) -> None:
        """x times its block's scale: scale j for the j-th block of ``block``
        consecutive values of x flattened time-major, whether the scales are a
        lockstep stream or a VRF tensor (hardware.md §2.6, §4a); e8m0 decoded
        as 2^(e-127)."""
        x, sc = ins
        if x is None or sc is None:
            self.env[op.results[0]] = None
            return
        block = op.properties["block"].value.data
        s = np.ascontiguousarray(sc).reshape(-1)
        if s.dtype == np.dtype(ml_dtypes.float8_e8m0fnu):
            s = e8m0_f32(s.view(np.uint8))
        xs = np.ascontiguousarray(x)
        assert xs.size == s.size * block, (xs.shape, s.shape, block)
        self.env[op.results[0]] = vmul(xs.reshape(-1, block), s[:, None]).reshape(xs.shape)

    def tensor_scale(self, op, ins) -> None:
        self.env[op.results[0]] = None if ins[0] is None else vmul(ins[0], np.float32(ins[1]))

    def narrow(self, op, ins) -> None:
        """rngd.cast, the Cast Engine's f32 -> bf16 (hardware.md §2.6)."""
        self.env[op.results[0]] = None if ins[0] is None else f32_to_bf16(ins[0])

    def same(self, op, ins) -> None:
        """rngd.switch / collect / to_trf / to_vrf: the values unchanged."""
        self.env[op.results[0]] = ins[0]

    def collect(self, op, ins) -> None:
        """rngd.collect: the same elements in the same order (hardware.md
        §2.5), in the result's shape (the flit form splits each packet into
        its flits, which become the innermost time dim)."""
        rt = op.results[0].type
        self.env[op.results[0]] = None if ins[0] is None else np.ascontiguousarray(ins[0]).reshape(rt.time + rt.packet)

    def transpose(self, op, ins) -> None:
        rt = op.results[0].type
        self.env[op.results[0]] = None if ins[0] is None else np.ascontiguousarray(ins[0]).reshape(rt.time + rt.packet)

    def commit(self, op, ins) -> None:
        if self.programs_only:
            return
        out = ins[1]
        out[...] = np.ascontiguousarray(ins[0]).reshape(out.shape)
        i = self.arg_index(op.operands[1])
        if i in self.bases:  # the committed tensor is fetched again later: update (a copy of) DM
            self.dm = self.dm.copy()
            write_dm(self.dm, self.bases[i], op.operands[1].type, out)

    def contract_outer(self, op, ins) -> None:
        self.contract.append((ins[0], ins[1]))
        rt = op.results[0].type
        self.env[op.results[0]] = np.zeros(rt.time + rt.packet, NP_DTYPE[ename(rt.element_type)])

    def constant(self, op, ins) -> None:
        v = op.properties["value"] if "value" in op.properties else op.attributes["value"]
        assert isinstance(v, FloatAttr)
        self.env[op.results[0]] = np.float32(v.value.data)

    def ret(self, op, ins) -> None:
        self.results = ins


# --------------------------------------------------------------------------
# The register blocks hardware.md §3 / seqbin.md prescribe, derived here
# --------------------------------------------------------------------------

MAX_ENTRY = 65536
READ_BYTES = (1, 2, 4, 8, 16, 32)
LOOKUP_PAIRS = {("f4E2M1FN", "f8E4M3FN"), ("f4E2M1FN", "f8E5M2"), ("f8E4M3FN", "bf16"), ("f8E5M2", "bf16")}
CAST_CODE = {("i4", "i32"): 0, ("i8", "i32"): 1, ("i16", "i32"): 2, ("f8E4M3FN", "f32"): 3, ("f8E5M2", "f32"): 4,
             ("bf16", "f32"): 5, ("f32", "bf16"): 6}  # fmt: skip
FLIT_BITS = {"i5": 8, "i9": 16}


class SpecViolation(Exception):
    """The fetch breaks a rule of hardware.md §3 (by this file's derivation)."""


def sequencer_entries(dims: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """hardware.md §3, literally: drop size-1 entries; from the innermost
    outward merge ``(n_o : s_o)`` into ``(n_i : s_i)`` when ``s_o == n_i·s_i``
    and ``n_o·n_i <= 65536``; split an entry over 65536 into
    ``(a : b·s), (b : s)``, ``b`` the largest divisor <= 65536.  Raises
    :class:`SpecViolation` when an entry cannot be split or more than 8
    remain."""
    merged: list[tuple[int, int]] = []  # innermost first
    for n, s in reversed([(n, s) for n, s in dims if n != 1]):
        if merged and s == merged[-1][0] * merged[-1][1] and n * merged[-1][0] <= MAX_ENTRY:
            merged[-1] = (n * merged[-1][0], merged[-1][1])
        else:
            merged.append((n, s))
    out: list[tuple[int, int]] = []
    for n, s in reversed(merged):
        if n > MAX_ENTRY:
            b = next(d for d in range(MAX_ENTRY, 0, -1) if n % d == 0)
            if n // b > MAX_ENTRY:
                raise SpecViolation(f"an entry of {n} cannot be split")
            out += [(n // b, b * s), (b, s)]
        else:
            out.append((n, s))
    if len(out) > 8:
        raise SpecViolation(f"{len(out)} entries")
    return out or [(1, 1)]


def contiguous_run(ents: list[tuple[int, int]]) -> int:
    n, s = ents[-1]
    if s == 0:
        return 1
    run = n
    for k in range(len(ents) - 2, -1, -1):
        if ents[k][1] != ents[k + 1][0] * ents[k + 1][1]:
            break
        run *= ents[k][0]
    return run


def register_block(*, ctx, elem, out, base, shape, strides, offset, coeffs, consts, time, packet, stages,
                   pinned=None) -> dict:
    """The PROGRAMS fields of one fetch.  ``stages``: ``[(kind, src, dst, zp)]``
    in hardware order (kind ``lookup`` / ``cast`` / ``zp``; for ``lookup``
    the last item is the function's name, ``None`` for a decode table).  Raises
    :class:`SpecViolation` for a fetch the sequencer cannot run."""
    bits = BITS[elem]
    dims = list(time) + list(packet)
    st = [int(sum(strides[r] * coeffs[r][d] for r in range(len(shape)))) for d in range(len(dims))]
    first = offset + sum(s_ * k for s_, k in zip(strides, consts))
    ents = sequencer_entries(list(zip(dims, st)))
    P = math.prod(packet)
    n_in, s_in = ents[-1]
    if not (P == 1 or s_in in (0, 1)):  # hardware.md §3: a packet may span several runs
        raise SpecViolation(f"innermost entry ({n_in} : {s_in}) is not contiguous for packets of {P}")
    if bits == 4 and first % 2:
        raise SpecViolation("odd 4-bit element offset")
    cast = next(((a, b) for k, a, b, _ in stages if k == "cast"), None)
    mx = math.gcd(P, contiguous_run(ents))

    def legal(d: int) -> bool:
        return mx % d == 0 and (d * bits) % 8 == 0 and d * bits // 8 in READ_BYTES and (
            cast is None or d * BITS[cast[1]] // 8 <= 32
        )

    if ctx == "sub":
        r = 64 // bits
        if P % r or not legal(r) or (pinned is not None and pinned != r):
            raise SpecViolation(f"sub context: 8-byte reads of {r} elements do not fit (packet {P}, run {mx})")
    elif pinned is not None:
        r = pinned
        if not legal(r):
            raise SpecViolation(f"pinned read size {r} is illegal (max access {mx})")
    else:
        cands = [d for d in range(1, mx + 1) if legal(d)]
        if not cands:
            raise SpecViolation(f"no legal read size (max access {mx})")
        r = max(cands)
    zp = next((z for k, _, _, z in stages if k == "zp"), None)
    return dict(
        unit=1 if ctx == "sub" else 0,
        in_dtype=elem,
        out_dtype=out,
        base=base + first * bits // 8,
        packet_size=P,
        fetch_size=r * bits // 8,
        limits=tuple(n for n, _ in ents),
        strides=tuple(s_ for _, s_ in ents),
        stages=sum({"lookup": 1, "cast": 2, "zp": 4}[k] for k, *_ in stages),
        table=next(((a, b) for k, a, b, _ in stages if k == "lookup"), None),
        table_function=next((f for k, _, _, f in stages if k == "lookup"), None),
        type_conversion=None if cast is None else CAST_CODE[cast],
        zero_point0=zp or 0,
        num_zero_points=0 if zp is None else 1,
        zp_mode=0 if zp is None else (1 if elem == "i4" else 2),
        flit_count=-(-P * FLIT_BITS.get(out, BITS[out]) // 256),
        words_per_packet=P // r,
    )


def conversion_stages(s: str, d: str) -> list:
    if s == d:
        return []
    if (s, d) in LOOKUP_PAIRS:
        return [("lookup", s, d, None)]
    if (s, d) in CAST_CODE:
        return [("cast", s, d, None)]
    assert (s, d) == ("f4E2M1FN", "f32"), f"no adapter chain {s} -> {d}"
    return [("lookup", s, "f8E4M3FN", None), ("cast", "f8E4M3FN", "f32", None)]


def _named(name: str, **kw) -> dict:
    try:
        return register_block(**kw)
    except SpecViolation as e:
        raise SpecViolation(f"program {name}: {e}") from None


def expected_programs(module, fn: str, bases: dict[int, int]) -> dict[str, dict]:
    """Program name -> the fields seqbin.md / hardware.md §3 prescribe, from
    the input function (before any pass).  Raises :class:`SpecViolation`
    (message naming the program) when a fetch, or a dequant's scale fetch,
    breaks a sequencer rule."""
    f = func_op(module, fn)
    params = list(f.body.blocks.first.args)
    out: dict[str, dict] = {}
    k = 0
    for op in f.walk():
        if op.name != "fetch.fetch":
            continue
        mt = op.operands[0].type
        st: StreamType = op.result.type
        shape, strides, offset = layout(mt)
        nd = len(st.time) + len(st.packet)
        amap = op.map.data if op.map is not None else AffineMap.identity(len(shape))
        coeffs, consts = map_coefficients(amap, nd)
        elem = ename(mt.element_type)
        pinned = op.properties["read_size"].value.data if "read_size" in op.properties else None
        common = dict(ctx=st.ctx, time=st.time, packet=st.packet, pinned=pinned)
        stages, v, t = [], op.results[0], elem
        users = [u.operation for u in v.uses]
        if users and users[0].name == "fetch.dequant":
            dq = users[0]
            fmt = dq.properties["format"].data
            block = {"nvfp4": 16, "mxfp4": 32}[fmt]
            stages = conversion_stages("f4E2M1FN", "f32")
            out[f"{fn}/{k}"] = _named(f"{fn}/{k}", elem=elem, out="f32", base=bases[params.index(op.operands[0])], shape=shape,
                                              strides=strides, offset=offset, coeffs=coeffs, consts=consts, stages=stages, **common)
            smt = dq.operands[1].type
            sshape, sstrides, soffset = layout(smt)
            scoeffs = coeffs.copy()
            scoeffs[-1] = coeffs[-1] // block
            scoeffs[-1][nd - 1] = 1
            sconsts = consts.copy()
            sconsts[-1] = consts[-1] // block
            selem = ename(smt.element_type)
            sst = [("cast", selem, "f32", None)] if fmt == "nvfp4" else []
            lock = _named(f"{fn}/{k + 1} (block scales)",
                ctx="main", elem=selem, out="f32" if fmt == "nvfp4" else selem, base=bases[params.index(dq.operands[1])],
                shape=sshape, strides=sstrides, offset=soffset, coeffs=scoeffs, consts=sconsts, time=st.time,
                packet=st.packet[:-1] + (st.packet[-1] // block,), stages=sst,
            )
            out[f"{fn}/{k + 1}"] = {**lock, STAGED: True}
            k += 2
            continue
        while len(users) == 1 and users[0].name in ("fetch.table_lookup", "fetch.cast", "fetch.convert", "fetch.zp_sub"):
            u = users[0]
            d = ename(u.results[0].type.element_type)
            if u.name == "fetch.zp_sub":
                stages.append(("zp", t, d, u.properties["zero_point"].value.data))
            elif u.name == "fetch.table_lookup" and "fn" in u.properties:  # a function table (§2.1b)
                stages.append(("lookup", t, d, u.properties["fn"].data))
            else:
                stages += conversion_stages(t, d)
            v, t = u.results[0], d
            users = [x.operation for x in v.uses]
        out[f"{fn}/{k}"] = _named(f"{fn}/{k}", elem=elem, out=t, base=bases[params.index(op.operands[0])], shape=shape,
                                          strides=strides, offset=offset, coeffs=coeffs, consts=consts, stages=stages, **common)
        k += 1
    return out


STAGED = "staged scales allowed"
"""Marks the expected fields of a dequant's block-scale program: the lockstep
main-context fetch (hardware.md §4), which the compiled program must equal,
unless it is the staged form of §4a (:func:`check_staged_scales`)."""


def nest_addresses(base: int, limits, strides, bits: int) -> np.ndarray:
    """The DM byte address of every element a loop nest reads, in hardware
    order (hardware.md §3: ``base + Σ i_k · stride_k`` elements, entry 0
    outermost); 4-bit element ``e`` at byte ``e / 2`` (times 2 stays exact)."""
    offs = np.zeros((), dtype=np.int64)
    for n, st in zip(limits, strides):
        offs = offs[..., None] + np.arange(n, dtype=np.int64) * st
    return base * 8 + offs.reshape(-1) * bits


def check_staged_scales(p, want: dict) -> None:
    """hardware.md §4a: the block scales staged once through the sub Fetch
    Unit: a ``sub`` program with the lockstep fetch's element types and
    stages, 8-byte reads (the packet a whole number of them), its flit count
    from its packet, reading exactly the DM addresses the lockstep fetch
    ``want`` reads, in the same order."""
    bits = BITS[want["in_dtype"]]
    assert p.unit == 1, f"program {p.name}: block scales on unit {p.unit}"
    for f in ("in_dtype", "out_dtype"):
        assert getattr(p, f).name == want[f], f"program {p.name}: {f} {getattr(p, f)} vs {want[f]}"
    for f in ("stages", "type_conversion", "zero_point0", "num_zero_points", "zp_mode"):
        assert getattr(p, f) == want[f], f"program {p.name}: {f} {getattr(p, f)} vs {want[f]}"
    assert p.table is None, f"program {p.name}: a table on the sub unit"
    assert p.fetch_size == 8 and (p.packet_size * bits) % 64 == 0, f"program {p.name}: sub reads {p.fetch_size}, packet {p.packet_size}"
    assert p.words_per_packet == p.packet_size * bits // 64, f"program {p.name}: words_per_packet {p.words_per_packet}"
    out_bits = BITS[want["out_dtype"]]
    assert p.flit_count == -(-p.packet_size * out_bits // 256), f"program {p.name}: flit_count {p.flit_count}"
    assert len(p.limits) <= 8 and all(1 <= n <= MAX_ENTRY for n in p.limits), p
    got = nest_addresses(p.base, p.limits, p.strides, bits)
    lock = nest_addresses(want["base"], want["limits"], want["strides"], bits)
    assert got.shape == lock.shape and (got == lock).all(), (
        f"program {p.name}: the staged scales are not the lockstep sequence (hardware.md §4a)"
    )


def check_register_blocks(sb: seqbin.SeqBin, mine, expected: dict[str, dict]) -> None:
    """Every compiled program's fields equal the ones derived here, and stay
    within the hardware's limits (a dequant's block scales: the lockstep
    fetch, or the same sequence staged on the sub unit)."""
    for p in mine:
        want = dict(expected[p.name])
        if want.pop(STAGED, False) and p.unit == 1:
            check_staged_scales(p, want)
            continue
        got = {f: getattr(p, f, None) for f in want}
        got["in_dtype"], got["out_dtype"] = p.in_dtype.name, p.out_dtype.name
        got["table_function"] = None if p.table is None else sb.tables[p.table].function
        got["limits"], got["strides"] = tuple(p.limits), tuple(p.strides)
        got["table"] = None if p.table is None else (sb.tables[p.table].in_dtype.name, sb.tables[p.table].out_dtype.name)
        diff = {f: (got[f], want[f]) for f in want if got[f] != want[f]}
        assert not diff, f"program {p.name}: fields differ from hardware.md §3 / seqbin.md (got, expected): {diff}"
        assert len(p.limits) <= 8 and all(1 <= n <= MAX_ENTRY for n in p.limits), p


# --------------------------------------------------------------------------
# Running the interpreter (with a contract_outer stub)
# --------------------------------------------------------------------------


@register_impls
class _ContractStub(InterpreterFunctions):
    """``rngd.contract_outer`` for the tests: records its operands, returns
    an all-zero accumulator (the IR gives the engine no arithmetic)."""

    def __init__(self, sink: list):
        self.sink = sink

    @impl(ContractOuterOp)
    def run_contract(self, interpreter, op, args):
        self.sink.append(tuple(args))
        rt = op.result.type
        return (np.zeros(rt.time + rt.packet, NP_DTYPE[ename(rt.element_type)]),)


@contextlib.contextmanager
def contract_stub(sink: list):
    orig = fetchc.golden.interp.make_interpreter

    def make(module, listeners=()):
        it = orig(module, listeners)
        it.register_implementations(_ContractStub(sink))
        return it

    fetchc.golden.interp.make_interpreter = make
    try:
        yield
    finally:
        fetchc.golden.interp.make_interpreter = orig


class _Programs:
    """Listener keeping each ``fetch_seq.program``'s output stream and,
    given the initial DM image and the memref addresses, the DM image each
    program starts from: an ``rngd.commit`` to a memref with a DM address
    stores the committed values (bit for bit as the interpreter holds them)
    into a fresh copy of the image."""

    def __init__(self, dm: np.ndarray | None = None, bases: dict[int, int] | None = None):
        self.streams: dict[str, np.ndarray] = {}
        self.dm, self.bases = dm, bases or {}
        self.dm_for: dict[str, np.ndarray] = {}

    def will_interpret_op(self, op, args):
        if self.dm is None:
            return
        if op.name == "fetch_seq.program":
            self.dm_for[op.program_name.data] = self.dm
        elif op.name == "rngd.commit":
            dest = op.operands[1]
            i = getattr(dest, "index", None)
            if i in self.bases:
                self.dm = self.dm.copy()
                write_dm(self.dm, self.bases[i], dest.type, np.ascontiguousarray(args[0]).reshape(args[1].shape))

    def did_interpret_op(self, op, results):
        if op.name == "fetch_seq.program":
            name = op.program_name.data
            assert name not in self.streams, f"program {name} ran twice"
            self.streams[name] = results[0]


def run_interp(module, fn: str, args: list, bases=None, dm=None) -> Outcome:
    """Interpret ``@fn`` on copies of ``args``; ``dm``: the initial DM image,
    to get the image each program starts from (``Outcome.dm_for``)."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    sink: list = []
    cap = _Programs(dm, bases)
    with contract_stub(sink):
        res = interpret(module, fn, copies, memref_bases=bases, listeners=[cap])
    return Outcome([a for a in copies if isinstance(a, np.ndarray)], list(res), sink, cap.streams, cap.dm_for)


def compare(a: Outcome, b: Outcome, what: str) -> None:
    assert len(a.memrefs) == len(b.memrefs) and len(a.results) == len(b.results), what
    for i, (x, y) in enumerate(zip(a.memrefs, b.memrefs)):
        assert_same(x, y, f"{what}: memref argument #{i}")
    for i, (x, y) in enumerate(zip(a.results, b.results)):
        assert_same(np.asarray(x), np.asarray(y), f"{what}: result #{i}")
    assert len(a.contract) == len(b.contract), f"{what}: rngd.contract_outer ran {len(a.contract)} vs {len(b.contract)} times"
    for i, (x, y) in enumerate(zip(a.contract, b.contract)):
        for j in range(2):
            assert_same(np.asarray(x[j]), np.asarray(y[j]), f"{what}: operand {j} of rngd.contract_outer #{i}")


# --------------------------------------------------------------------------
# The whole check
# --------------------------------------------------------------------------


def parse(text: str, name: str = "t.mlir"):
    ctx = make_context()
    return ctx, parse_module(ctx, text, name)


def span_bytes(mt: MemRefType) -> tuple[int, int]:
    """(lowest byte, one past the highest byte) of a memref relative to its
    DM base: from the lowest to the highest element address its shape and
    layout reach; 4-bit element ``e`` in byte ``floor(e / 2)``."""
    shape, strides, offset = layout(mt)
    if not all(shape):
        return 0, 0
    lo = offset + sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = offset + sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
    b = BITS[ename(mt.element_type)]
    if b == 4:
        return lo // 2, hi // 2 + 1
    return lo * (b // 8), (hi + 1) * (b // 8)


def own_bases(module, fn: str) -> dict[int, int]:
    """Argument index -> DM byte address of every memref argument a
    ``fetch.fetch`` or ``fetch.dequant`` (block scales) reads, by the
    placement rule of ir.md §2a written out here: the argument's
    ``rngd.dm_base``; else the ``base`` / ``scale_base`` the ops give it
    (asserted to agree); else, in argument order over every memref argument,
    the first multiple of 64 at or after one past the highest byte taken
    whose tensor starts there or later."""
    f = func_op(module, fn)
    params = list(f.body.blocks.first.args)
    given: dict[int, int] = {}
    read: set[int] = set()
    for op in f.walk():
        if op.name == "fetch.fetch":
            v, prop = op.operands[0], "base"
        elif op.name == "fetch.dequant":
            v, prop = op.operands[1], "scale_base"
        else:
            continue
        i = params.index(v)
        read.add(i)
        if prop in op.properties:
            b = op.properties[prop].value.data
            assert given.setdefault(i, b) == b, f"argument {i} read at two addresses"
    arg_attrs = [d.data for d in f.arg_attrs.data] if f.arg_attrs is not None else [{}] * len(params)
    bases: dict[int, int] = {}
    for i, p in enumerate(params):
        if isinstance(p.type, MemRefType):
            if "rngd.dm_base" in arg_attrs[i]:
                bases[i] = arg_attrs[i]["rngd.dm_base"].value.data
            elif i in given:
                bases[i] = given[i]
    spans = {i: span_bytes(p.type) for i, p in enumerate(params) if isinstance(p.type, MemRefType)}
    top = max((bases[i] + spans[i][1] for i in bases if spans[i][1] > spans[i][0]), default=0)
    for i, (lo, end) in spans.items():
        if i in bases:
            continue
        b = (max(top, top - lo) + 63) // 64 * 64  # b >= top and b + lo >= top
        bases[i] = b
        if end > lo:
            top = b + end
    return {i: bases[i] for i in sorted(read)}


def function_names(module) -> list[str]:
    return [op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp)]


def simulate_compiled(text: str, fn: str, label: str, dm_for: dict) -> tuple[list, dict]:
    """``fetchc.compile`` the text, read the ``seq.bin`` bytes back and run
    ``@fn``'s programs on the simulator, each on the DM image it starts from
    (``dm_for``).  Returns (programs, {name: sim output})."""
    result = fetchc.compile(text, filename=label)
    sb = seqbin.read(result.seq_bin)
    module = parse(text, label)[1]
    check_file_order(sb, module)
    mine = [p for p in sb.programs if p.name is not None and p.name.startswith(fn + "/")]
    assert sorted(p.name for p in mine) == sorted(dm_for), (
        f"compiled programs {[p.name for p in mine]} vs {sorted(dm_for)}"
    )
    check_register_blocks(sb, mine, expected_programs(module, fn, own_bases(module, fn)))
    got: dict = {}
    for image in {id(d): d for d in dm_for.values()}.values():
        group = tuple(p for p in mine if dm_for[p.name] is image)
        got.update(simulate(seqbin.SeqBin(sb.tables, group), image))
    return mine, got


def as_values(enc: np.ndarray, elem: str) -> np.ndarray:
    """An ``ir.md`` §5 encoded array viewed as values where that makes NaNs
    visible (8-/16-bit float bits as their ml_dtypes type)."""
    if elem in ("f8E4M3FN", "f8E5M2", "f8E8M0FNU", "bf16"):
        return np.ascontiguousarray(enc).view(NP_DTYPE[elem])
    return enc


def check_file_order(sb: seqbin.SeqBin, module) -> None:
    """seqbin.md: programs in file order (functions in order, each
    ``function/0, /1, ...``); each distinct table once, in order of first
    use."""
    names = [p.name for p in sb.programs]
    want = []
    for fn in function_names(module):
        n = sum(1 for p in names if p.rsplit("/", 1)[0] == fn)
        want += [f"{fn}/{i}" for i in range(n)]
    assert names == want, f"program order {names}, expected {want}"
    used = []
    for p in sb.programs:
        if p.table is not None and p.table not in used:
            used.append(p.table)
    assert used == list(range(len(sb.tables))), f"tables used in the order {used}"
    # Equal tables are stored once: the same pair, function, scale and zero point (hardware.md §2.1b).
    keys = [(t.in_dtype.name, t.out_dtype.name, t.function, t.scale, t.zero_point) for t in sb.tables]
    assert len(set(keys)) == len(keys), f"duplicate tables {keys}"


def check_programs_against_reference(mine, got, ref: Outcome) -> None:
    for p in mine:
        e = p.out_dtype.name
        r_enc = encode(ref.programs[p.name], e).reshape(-1, p.packet_size)
        assert_same(as_values(got[p.name], e), as_values(r_enc, e), f"program {p.name}: simulator vs independent reference")


def check_function(
    text: str, fn: str, args: list, *, label: str = "t.mlir", extra_args=(), module=None
) -> tuple[Outcome, list]:
    """Steps 1-3 of the module docstring for ``@fn`` of ``text`` on
    ``args``.  ``extra_args``: more argument lists, checked against the
    reference on the input module and on the fully lowered one.  ``module``:
    the parsed text, if the caller has it (it is not modified).  Returns the
    interpreter's outcome after the pipeline and those of ``extra_args``."""
    ctx, m = parse(text, label) if module is None else (make_context(), module.clone())
    diags = verify_module(m)
    assert not diags, render_all(diags, {label: text})
    bases = own_bases(m, fn)
    dm = build_dm(m, fn, args, bases)

    ref = reference_run(m, fn, args, bases, dm)
    before = run_interp(m, fn, args)
    compare(ref, before, f"@{fn}: interpreter (input module) vs independent reference")
    extra = []
    for ea in extra_args:
        r = reference_run(m, fn, ea, bases, build_dm(m, fn, ea, bases))
        compare(r, run_interp(m, fn, ea), f"@{fn} (extra arguments): interpreter vs independent reference")
        extra.append((ea, r))

    passes = all_passes()
    after = before
    for name in PIPELINE:
        passes[name]()().apply(ctx, m)
        diags = verify_module(m)
        assert not diags, f"after {name}:\n" + render_all(diags)
        if name == "fetch-place-dm":
            assert fetch_bases(m, fn) == bases, "fetch-place-dm's addresses differ from ir.md §2a's rule"
        after = run_interp(m, fn, args, bases, dm if name == PIPELINE[-1] else None)
        compare(before, after, f"@{fn}: interpreter after {name} vs before any pass")
    assert not any(o.name.startswith("fetch.") for o in m.walk()), "fetch-to-seq left fetch ops"
    extra_out = []
    for ea, r in extra:
        out = run_interp(m, fn, ea, bases)
        compare(r, out, f"@{fn} (extra arguments): interpreter after the pipeline vs reference")
        extra_out.append(out)

    # The golden model on a real seq.bin, each program on the DM image the
    # interpreter had when it ran that program.
    assert sorted(after.dm_for) == sorted(ref.dm_for), f"programs {sorted(after.dm_for)} vs the reference's {sorted(ref.dm_for)}"
    mine, got = simulate_compiled(text, fn, label, after.dm_for)
    assert [p.name for p in mine] == list(after.programs), (
        f"compiled programs {[p.name for p in mine]} vs interpreted {list(after.programs)}"
    )
    for p in mine:
        want = to_sim_encoding(after.programs[p.name], p.out_dtype, p.packet_size)
        assert_same(got[p.name], want, f"program {p.name}: simulator vs interpreter's fetch_seq.program stream")
    check_programs_against_reference(mine, got, ref)
    return after, extra_out


# --------------------------------------------------------------------------
# Examples
# --------------------------------------------------------------------------

BIG = 2_000_000
"""Functions whose memref arguments hold more elements than this run the
interpreter differential on a copy shrunk along the leading dimension
(:func:`shrink`), and the golden-model check at full size.  Set
``FETCHC_FULL_EXAMPLES=1`` to run everything at full size (slow)."""
SHRUNK_ROWS = 64


def arg_elements(module, fn: str) -> int:
    return sum(
        math.prod(a.type.get_shape()) for a in func_op(module, fn).body.blocks.first.args if isinstance(a.type, MemRefType)
    )


def shrink(text: str, module, fn: str) -> str | None:
    """The text with the most common leading dimension ``L`` of ``@fn``'s
    memref arguments replaced by :data:`SHRUNK_ROWS` in every memref type
    (``memref<Lx``) and every stream time shape (``[L, ``), or None when the
    result does not verify or is not smaller."""
    lead = collections.Counter(
        a.type.get_shape()[0]
        for a in func_op(module, fn).body.blocks.first.args
        if isinstance(a.type, MemRefType) and len(a.type.get_shape()) >= 2
    )
    if not lead:
        return None
    L = lead.most_common(1)[0][0]
    if L <= SHRUNK_ROWS:
        return None
    t = re.sub(rf"memref<{L}x", f"memref<{SHRUNK_ROWS}x", text)
    t = re.sub(rf"(!fetch\.stream<\w+, \[){L}([,\]])", rf"\g<1>{SHRUNK_ROWS}\2", t)
    try:
        _, m = parse(t)
    except Exception:  # noqa: BLE001
        return None
    if verify_module(m) or fn not in function_names(m) or arg_elements(m, fn) >= arg_elements(module, fn):
        return None
    return t


# Tensor scales for the examples' f32 arguments: the main run gets the first
# value; the others (subnormal results, overflow to inf) run as extra arguments.
G_SCALES = [0.37, 2.0**-140, 2.0**-120, 3.0e38]


def args_with_scales(module, fn: str, seed: int) -> tuple[list, list]:
    args = make_args(module, fn, np.random.default_rng(seed), [G_SCALES[0]] * 8)
    if all(isinstance(a, np.ndarray) for a in args):
        return args, []
    return args, [[np.float32(g) if not isinstance(a, np.ndarray) else a for a in args] for g in G_SCALES[1:]]


def golden_full_size(text: str, module, fn: str, label: str, seed: int) -> None:
    """The golden model at the example's real size: every program of the
    compiled ``seq.bin`` on the simulator vs the independent reference's
    streams, and the decodes recomputed from the simulator's programs (the
    Vector Engine's block and tensor scale applied here in numpy) vs the
    hand-written formulas."""
    args = make_args(module, fn, np.random.default_rng(seed), [G_SCALES[0]] * 8)
    bases = own_bases(module, fn)
    dm = build_dm(module, fn, args, bases)
    ref = reference_run(module, fn, args, bases, dm, programs_only=True)
    mine, got = simulate_compiled(text, fn, label, ref.dm_for)
    check_programs_against_reference(mine, got, ref)
    del ref
    f = func_op(module, fn)
    params = list(f.body.blocks.first.args)
    index = program_numbers(f)
    for op in index:
        users = [u.operation for u in op.results[0].uses]
        if not users or users[0].name != "fetch.dequant" or not _natural_order(op):
            continue
        dq = users[0]
        fmt = dq.properties["format"].data
        block = {"nvfp4": 16, "mxfp4": 32}[fmt]
        st = op.result.type
        codes = got[f"{fn}/{index[op]}"].reshape(st.time + st.packet)
        senc = got[f"{fn}/{index[op] + 1}"].reshape(st.time + st.packet[:-1] + (st.packet[-1] // block,))
        if fmt == "nvfp4":
            sc = senc  # f32, widened by the adapter's cast
        else:  # raw f8E8M0FNU: the Vector Engine decodes 2^(e-127)
            sc = e8m0_f32(senc)
        mt = op.operands[0].type
        raw = _raw_dm_bytes(dm, bases[params.index(op.operands[0])], mt)
        smt = dq.operands[1].type
        sraw = _raw_dm_bytes(dm, bases[params.index(dq.operands[1])], smt)
        blocked = vmul(codes.reshape(sc.shape + (block,)), sc[..., None]).reshape(-1)  # the Vector Engine's block scale
        want_blocked = fp4_decode(raw, sraw, fmt, None, tuple(mt.get_shape())).reshape(-1)
        assert_same(blocked, want_blocked, f"@{fn} full size: {fmt} block-scaled decode from the simulator's programs")
        for g in G_SCALES if fmt == "nvfp4" else []:
            out = vmul(blocked, np.float32(g))  # then the tensor scale
            want = fp4_decode(raw, sraw, fmt, np.float32(g), tuple(mt.get_shape())).reshape(-1)
            assert_same(out, want, f"@{fn} full size: {fmt} decode (g = {g}) from the simulator's programs")


# ---- decodes of the examples against hand-written formulas ----------------


PASS_THROUGH = ("rngd.switch", "rngd.collect", "rngd.transpose", "fetch.table_lookup", "fetch.cast", "fetch.convert",
                "fetch.zp_sub", "fetch.dequant")


def check_decodes(module, fn: str, args: list, out: Outcome) -> int:
    """Every committed decode (dequant / convert / lookup / cast / plain
    read) and every zero-point residual stream fed to the Contraction Engine,
    checked once more against a formula written out for the format, from the
    raw DM bytes of the input.  Only chains that read a whole identity-layout
    memref in row-major order, as the examples do, and whose memref no
    commit writes; everything else is covered by :func:`reference_run`."""
    f = func_op(module, fn)
    params = list(f.body.blocks.first.args)
    bases = own_bases(module, fn)
    dm = build_dm(module, fn, args, bases)
    mem_of = {p: i for i, p in enumerate(params)}
    after = {}
    j = 0
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            after[i] = out.memrefs[j]
            j += 1
    committed = {mem_of[op.operands[1]] for op in f.walk() if op.name == "rngd.commit"}
    checked = 0
    for op in f.walk():
        if op.name != "rngd.commit":
            continue
        got = after[mem_of[op.operands[1]]]
        v, chain = op.operands[0], []
        while v.owner.name in PASS_THROUGH:
            chain.append(v.owner)
            v = v.owner.operands[0]
        fetch = v.owner
        if fetch.name != "fetch.fetch" or any(o.name == "rngd.transpose" for o in chain):
            continue  # e.g. an accumulator of rngd.contract_outer
        src = mem_of[fetch.operands[0]]
        if src in committed or not _natural_order(fetch):
            continue
        mt = params[src].type
        stages = [o for o in reversed(chain) if o.name.startswith("fetch.")]
        raw = _raw_dm_bytes(dm, bases[src], mt)
        if len(stages) == 1 and stages[0].name == "fetch.dequant":
            dq = stages[0]
            fmt = dq.properties["format"].data
            smt = params[mem_of[dq.operands[1]]].type
            sraw = _raw_dm_bytes(dm, bases[mem_of[dq.operands[1]]], smt)
            g = None
            if fmt == "nvfp4":
                gv = dq.operands[2]
                g = args[mem_of[gv]] if gv in mem_of else np.float32(gv.owner.properties["value"].value.data)
            want = fp4_decode(raw, sraw, fmt, g, tuple(mt.get_shape()))
            if ename(dq.results[0].type.element_type) == "bf16":  # narrowed by the Cast Engine (hardware.md §2.6)
                want = f32_to_bf16(want)
            assert_same(got, want.reshape(got.shape), f"@{fn}: {fmt} decode (g = {g}) vs the hand-written formula")
        elif stages and "fn" in stages[0].properties and len(stages) <= 2:  # a function table, maybe widened
            s = ename(mt.element_type)
            props = stages[0].properties
            vals = raw.view(NP_DTYPE[s]).reshape(tuple(mt.get_shape()))
            x = fnref.key_values(vals, s, props["scale"].value.data if "scale" in props else 1.0,
                                 props["zero_point"].value.data if "zero_point" in props else 0)  # fmt: skip
            want = fnref.apply(props["fn"].data, x).view(ml_dtypes.bfloat16)
            if len(stages) == 2:
                want = rngd_cast(want, "bf16", ename(stages[1].results[0].type.element_type))
            assert_same(got, want.reshape(got.shape), f"@{fn}: {props['fn'].data} on {s} vs fnref on the DM bytes")
        elif len(stages) <= 1:
            s = ename(mt.element_type)
            d = ename(stages[0].results[0].type.element_type) if stages else s
            want = _convert_from_bytes(raw, s, d, tuple(mt.get_shape()))
            assert_same(got, want.reshape(got.shape), f"@{fn}: {s} -> {d} vs ml_dtypes on the DM bytes")
        else:
            continue
        checked += 1
    contracts = [o for o in f.walk() if o.name == "rngd.contract_outer"]
    for k, op in enumerate(contracts):  # zero-point residuals feeding the Contraction Engine
        v = op.operands[0]
        while v.owner.name in ("rngd.switch", "rngd.collect"):
            v = v.owner.operands[0]
        zp_op = v.owner
        if zp_op.name != "fetch.zp_sub" or not _natural_order(zp_op.operands[0].owner):
            continue
        src = mem_of[zp_op.operands[0].owner.operands[0]]
        mt = params[src].type
        raw = _raw_dm_bytes(dm, bases[src], mt)
        zp = zp_op.properties["zero_point"].value.data
        if ename(mt.element_type) == "i8":
            want = raw.view(np.int8).astype(np.int16) - np.int16(zp)
        else:
            nib = np.stack([raw & 0x0F, raw >> 4], -1).reshape(-1)[: math.prod(mt.get_shape())].astype(np.int16)
            want = (((nib ^ 8) - 8) - zp).astype(np.int8)
        got = np.asarray(out.contract[k][0]).reshape(-1)
        assert_same(got, want.reshape(-1), f"@{fn}: zero-point residuals vs x - zp on the DM bytes")
        checked += 1
    return checked


def _natural_order(fetch) -> bool:
    """The fetch reads its whole identity-layout memref in row-major order."""
    mt = fetch.operands[0].type
    if isinstance(mt.layout, StridedLayoutAttr):
        return False
    st = fetch.result.type
    shape = st.time + st.packet
    if math.prod(shape) != math.prod(mt.get_shape()):
        return False
    coeffs, consts = map_coefficients(fetch.map.data if fetch.map is not None else AffineMap.identity(len(shape)), len(shape))
    _, strides, _ = layout(mt)
    lin = np.array(strides, dtype=np.int64) @ coeffs  # element step of each stream dim
    want = np.array([math.prod(shape[d + 1 :]) for d in range(len(shape))], dtype=np.int64)
    return int(np.dot(strides, consts)) == 0 and all(l == w or n == 1 for l, w, n in zip(lin, want, shape))


def _raw_dm_bytes(dm, base, mt) -> np.ndarray:
    n = math.prod(mt.get_shape())
    nbytes = (n * BITS[ename(mt.element_type)] + 7) // 8
    return dm[base : base + nbytes]


E2M1_LADDER = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1_table() -> np.ndarray:
    """The 16 E2M1 values via ml_dtypes (float4_e2m1fn -> f32), checked
    against the ladder 0, 0.5, 1, 1.5, 2, 3, 4, 6 with bit 3 the sign."""
    codes = np.arange(16, dtype=np.uint8)
    t = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    ladder = np.where(codes & 8, -1.0, 1.0) * E2M1_LADDER[codes & 7]
    assert np.array_equal(t, ladder.astype(np.float32)) and np.array_equal(np.signbit(t), (codes & 8) > 0)
    return t


def fp4_decode(raw: np.ndarray, sraw: np.ndarray, fmt: str, g, shape) -> np.ndarray:
    """NVFP4 / MXFP4 from the packed bytes: nibbles low-first, E2M1 via
    ml_dtypes (:func:`e2m1_table`), block scale per 16 / 32 codes along the
    last axis (NVFP4 ``f8E4M3FN`` by the §2.2a cast; MXFP4 ``2^(e-127)``,
    ``0xFF`` NaN), Vector Engine products (:func:`vmul`) left to right: block
    scale, then the tensor scale ``g`` (None: no tensor scale)."""
    n = math.prod(shape)
    nib = np.empty(2 * raw.size, np.uint8)
    nib[0::2], nib[1::2] = raw & 0x0F, raw >> 4
    e = e2m1_table()[nib[:n]].reshape(shape)
    block = 16 if fmt == "nvfp4" else 32
    sshape = tuple(shape[:-1]) + (shape[-1] // block,)
    if fmt == "nvfp4":
        s = rngd_cast(sraw.view(ml_dtypes.float8_e4m3fn).reshape(sshape), "f8E4M3FN", "f32")
    else:
        s = e8m0_f32(sraw.reshape(sshape))  # 2^-127 is an f32 subnormal: reads as +0
    out = vmul(e.reshape(sshape + (block,)), s[..., None]).reshape(shape)
    return out if g is None else vmul(out, np.float32(g))


def _convert_from_bytes(raw: np.ndarray, s: str, d: str, shape) -> np.ndarray:
    n = math.prod(shape)
    if BITS[s] == 4:
        nib = np.stack([raw & 0x0F, raw >> 4], -1).reshape(-1)[:n]
        vals = nib.view(NP_DTYPE[s]) if s != "i4" else ((nib.astype(np.int8) ^ 8) - 8).astype(ml_dtypes.int4)
    else:
        vals = raw.view(NP_DTYPE[s])
    return convert_values(vals.reshape(shape), s, d)


# ---- test data helpers ----------------------------------------------------


def pack_nibbles(codes: np.ndarray) -> np.ndarray:
    """4-bit codes (``uint8``, an even count) packed two a byte, low nibble
    first (hardware.md §3): the DM bytes of a 4-bit memref."""
    c = codes.reshape(-1)
    return (c[0::2] | (c[1::2] << 4)).astype(np.uint8)
