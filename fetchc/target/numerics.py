"""RNGD's float arithmetic, bit for bit, on numpy arrays.

Spec: hardware.md §2.2 (the seven adapter casts), §2.2a (RNGD float
semantics), §4 (block-scaled formats: block scale first, tensor scale
second).  RNGD has no subnormal in ``f32`` or ``bf16`` and canonicalises NaN:

=====================  ==========================  ==============================  ==========================
operation              subnormal                   NaN                             otherwise
=====================  ==========================  ==============================  ==========================
``bf16 → f32``         input → zero of its sign    any NaN → ``0x7FC00000``        exact
``f32 → bf16``         input → zero of its sign    any NaN → ``0x7FC0``            round to nearest even
                                                                                   (overflow → ±inf)
``f8E4M3FN → f32``     exact (normal in f32)       ``0x7F``, ``0xFF`` →            exact
                                                   ``0x7FC00000``
``f8E5M2 → f32``       exact                       sign kept: ``0x7FC00000`` /     exact, ±inf stays ±inf
                                                   ``0xFFC00000``
Vector Engine ``f32``  operand reads as zero of    any NaN result →                IEEE round to nearest even
multiply               its sign (DAZ); result →    ``0x7FC00000``
                       zero of its sign (FTZ)
=====================  ==========================  ==============================  ==========================

"A subnormal result" is the IEEE result (gradual underflow, then rounding
to nearest even) when that result is subnormal; it becomes a zero of its
sign.  A product that IEEE rounds up to the smallest normal ``2^-126``
stays ``2^-126``.

Integer casts (``i4``/``i8``/``i16 → i32``) sign-extend.  The baked
lookup tables are not arithmetic and are not here (seqbin.md TABLES).

Every function takes and returns numpy arrays; float results never depend
on the host CPU (NaN bits are set explicitly, subnormals are handled with
integer operations, the only float operation is one IEEE ``float32``
multiply per element).  Work is vectorised: a few passes over the data, no
Python loop per element.  Inputs are never modified.

This module imports numpy and ml_dtypes; the compile path never imports it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import ml_dtypes
import numpy as np

from fetchc.target.facts import BF16, CAST_CODES, F8E4M3FN, F8E5M2, F32, I4, I8, I16, I32, ElementType

__all__ = [
    "QNAN_F32",
    "QNAN_F32_NEG",
    "QNAN_BF16",
    "cast",
    "int_to_i32",
    "bf16_to_f32",
    "f8e4m3_to_f32",
    "f8e5m2_to_f32",
    "f32_to_bf16",
    "vector_mul",
    "e8m0_to_f32",
    "decode_block_scales",
    "block_scale",
    "tensor_scale",
    "scalar_f32",
    "daz_f32",
    "as_bits",
]

QNAN_F32 = 0x7FC00000
"""The canonical f32 NaN (bits)."""
QNAN_F32_NEG = 0xFFC00000
"""The negative quiet f32 NaN (bits): only ``f8E5M2 → f32`` of a negative NaN gives it."""
QNAN_BF16 = 0x7FC0
"""The canonical bf16 NaN (bits)."""

CHUNK = 1 << 18
"""Elements per pass of the chunked loops: temporaries stay in cache."""

_SIGN32 = np.uint32(0x80000000)
_ABS32 = np.uint32(0x7FFFFFFF)
_MIN_NORMAL32 = np.uint32(0x00800000)
_INF32 = np.uint32(0x7F800000)


def _gather(lut: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``lut[keys]`` as a new array of ``keys``' shape, in chunks (no
    full-size index temporary)."""
    k = np.ascontiguousarray(keys)
    out = np.empty(k.shape, dtype=lut.dtype)
    fk, fo = k.reshape(-1), out.reshape(-1)
    step = 1 << 16
    index = np.empty(min(step, fk.size), dtype=np.intp)
    for lo in range(0, fk.size, step):
        kk = fk[lo : lo + step]
        ii = index[: kk.size]
        ii[...] = kk
        np.take(lut, ii, out=fo[lo : lo + step])
    return out


def as_bits(values: Any, width: int, names: tuple[Any, ...], what: str) -> np.ndarray:
    """``values`` viewed as unsigned integers of ``width`` bytes (no copy),
    accepting the canonical dtype(s) in ``names`` or the raw unsigned bits.
    Raises ``ValueError`` for any other dtype."""
    a = np.asarray(values)
    raw = np.dtype({1: np.uint8, 2: np.uint16, 4: np.uint32}[width])
    if a.dtype == raw:
        return a
    if a.dtype in {np.dtype(n) for n in names}:
        return a.view(raw)
    want = " or ".join([str(np.dtype(n)) for n in names] + [str(raw)])
    raise ValueError(f"{what} takes {want} values, got {a.dtype}")


# --------------------------------------------------------------------------
# The seven casts (hardware.md §2.2, §2.2a)
# --------------------------------------------------------------------------


def int_to_i32(values: Any) -> np.ndarray:
    """``i4``/``i8``/``i16 → i32``: sign extension.  ``values``: canonical
    ``ml_dtypes.int4``, ``int8`` or ``int16``, any shape.  Returns a new
    ``int32`` array of the same shape.  Raises ``ValueError`` for another
    dtype."""
    a = np.asarray(values)
    if a.dtype not in (np.dtype(ml_dtypes.int4), np.dtype(np.int8), np.dtype(np.int16)):
        raise ValueError(f"the integer casts take int4, int8 or int16 values, got {a.dtype}")
    return a.astype(np.int32)


@cache
def _bf16_lut() -> np.ndarray:
    """``(65536,)`` uint32: the f32 bits of every bf16 code under §2.2a."""
    b = np.arange(1 << 16, dtype=np.uint32)
    out = b << np.uint32(16)
    mag = b & np.uint32(0x7FFF)
    out[mag < 0x0080] &= _SIGN32  # zero or subnormal -> zero of its sign
    out[mag > 0x7F80] = QNAN_F32  # NaN
    out.flags.writeable = False
    return out


def bf16_to_f32(values: Any) -> np.ndarray:
    """Cast 5, ``bf16 → f32`` (hardware.md §2.2a): exact, except a subnormal
    gives a zero of its sign and any NaN gives ``0x7FC00000``.

    ``values``: ``ml_dtypes.bfloat16`` or raw ``uint16`` bits, any shape.
    Returns a new ``float32`` array of that shape.  Raises ``ValueError`` for
    another dtype."""
    b = as_bits(values, 2, (ml_dtypes.bfloat16,), "bf16_to_f32")
    return _gather(_bf16_lut(), b).view(np.float32)


@cache
def _f8_lut(kind: str) -> np.ndarray:
    """``(256,)`` uint32: the f32 bits of every 8-bit float code under §2.2a
    (``kind``: ``"e4m3"`` or ``"e5m2"``).  Finite values and ±inf are exact
    (ml_dtypes' value conversion); NaN bits are set here."""
    codes = np.arange(256, dtype=np.uint8)
    dt = ml_dtypes.float8_e4m3fn if kind == "e4m3" else ml_dtypes.float8_e5m2
    with np.errstate(invalid="ignore"):
        vals = codes.view(dt).astype(np.float32)
    out = vals.view(np.uint32).copy()
    nan = np.isnan(vals)
    if kind == "e4m3":
        out[nan] = QNAN_F32  # 0x7F and 0xFF: one canonical NaN, sign dropped
    else:
        out[nan] = np.where(codes[nan] & 0x80, QNAN_F32_NEG, QNAN_F32).astype(np.uint32)  # sign kept
    out.flags.writeable = False
    return out


def f8e4m3_to_f32(values: Any) -> np.ndarray:
    """Cast 3, ``f8E4M3FN → f32`` (hardware.md §2.2a): exact (e4m3
    subnormals are normal f32 values); the NaN codes ``0x7F`` and ``0xFF``
    both give ``0x7FC00000``.

    ``values``: ``ml_dtypes.float8_e4m3fn`` or raw ``uint8`` bits, any shape.
    Returns a new ``float32`` array.  Raises ``ValueError`` for another
    dtype."""
    return _gather(_f8_lut("e4m3"), as_bits(values, 1, (ml_dtypes.float8_e4m3fn,), "f8e4m3_to_f32")).view(np.float32)


def f8e5m2_to_f32(values: Any) -> np.ndarray:
    """Cast 4, ``f8E5M2 → f32`` (hardware.md §2.2a): exact, ±inf stays
    ±inf; a NaN keeps its sign: ``0x7FC00000`` or ``0xFFC00000``.

    ``values``: ``ml_dtypes.float8_e5m2`` or raw ``uint8`` bits, any shape.
    Returns a new ``float32`` array.  Raises ``ValueError`` for another
    dtype."""
    return _gather(_f8_lut("e5m2"), as_bits(values, 1, (ml_dtypes.float8_e5m2,), "f8e5m2_to_f32")).view(np.float32)


def f32_to_bf16(values: Any) -> np.ndarray:
    """Cast 6, ``f32 → bf16`` (hardware.md §2.2a): round to nearest even
    (overflow, including the largest finite f32, gives ±inf); a subnormal
    input gives a zero of its sign; any NaN gives ``0x7FC0``.

    ``values``: ``float32`` (or raw ``uint32`` bits), any shape.  Returns a
    new ``ml_dtypes.bfloat16`` array of that shape.  Raises ``ValueError``
    for another dtype."""
    u = np.ascontiguousarray(as_bits(values, 4, (np.float32,), "f32_to_bf16"))
    out = np.empty(u.shape, dtype=np.uint16)
    flat_u, flat_o = u.reshape(-1), out.reshape(-1)
    r = np.empty(min(CHUNK, flat_u.size), dtype=np.uint32)
    mask = np.empty(r.size, dtype=bool)
    for lo in range(0, flat_u.size, CHUNK):
        uu, oo = flat_u[lo : lo + CHUNK], flat_o[lo : lo + CHUNK]
        rr, mm = r[: uu.size], mask[: uu.size]
        # Round to nearest even on the bits: add 0x7FFF plus the lowest kept
        # bit, drop 16 bits (no wrap for non-NaN inputs: at most 0xFF800000 + 0x8000).
        np.right_shift(uu, np.uint32(16), out=rr)
        rr &= np.uint32(1)
        rr += uu
        rr += np.uint32(0x7FFF)
        rr >>= np.uint32(16)
        oo[...] = rr
        np.bitwise_and(uu, _ABS32, out=rr)  # rr: magnitude bits from here on
        np.less(rr, _MIN_NORMAL32, out=mm)  # zero or subnormal: the rounded bits keep the sign
        np.bitwise_and(oo, np.uint16(0x8000), out=oo, where=mm)
        np.greater(rr, _INF32, out=mm)
        np.copyto(oo, np.uint16(QNAN_BF16), where=mm)
    return out.view(ml_dtypes.bfloat16)


_CASTS = {
    (I4, I32): int_to_i32,
    (I8, I32): int_to_i32,
    (I16, I32): int_to_i32,
    (F8E4M3FN, F32): f8e4m3_to_f32,
    (F8E5M2, F32): f8e5m2_to_f32,
    (BF16, F32): bf16_to_f32,
    (F32, BF16): f32_to_bf16,
}
assert set(_CASTS) == set(CAST_CODES), "numerics must cover exactly the hardware's casts"


def cast(values: Any, src: ElementType, dst: ElementType) -> np.ndarray:
    """One of the seven adapter casts (hardware.md §2.2) with RNGD
    semantics (§2.2a).  ``values``: canonical values of ``src``
    (``src.np_dtype``; for the float casts also the raw bits), any shape.
    Returns a new array of canonical ``dst`` values (``dst.np_dtype``), same
    shape.  Raises ``ValueError`` for a pair outside the seven casts or a
    wrong dtype."""
    fn = _CASTS.get((src, dst))
    if fn is None:
        raise ValueError(f"the hardware has no {src} -> {dst} cast")
    a = np.asarray(values)
    if a.dtype != src.np_dtype and not (src.is_float and a.dtype == np.dtype(f"u{src.bits // 8}")):
        raise ValueError(f"the {src} -> {dst} cast got values of {a.dtype}, not {src.np_dtype}")
    return fn(a)


# --------------------------------------------------------------------------
# The Vector Engine (hardware.md §2.2a, §4)
# --------------------------------------------------------------------------


def _has_subnormal(u: np.ndarray) -> bool:
    """Whether the contiguous uint32 array ``u`` holds f32 subnormal bits."""
    flat = u.reshape(-1)
    buf = np.empty(min(CHUNK, flat.size), dtype=np.uint32)
    for lo in range(0, flat.size, CHUNK):
        uu = flat[lo : lo + CHUNK]
        bb = buf[: uu.size]
        np.bitwise_and(uu, _ABS32, out=bb)
        bb -= np.uint32(1)  # wraps 0 to 0xFFFFFFFF: one compare finds the subnormals, not the zeros
        if (bb < _MIN_NORMAL32 - np.uint32(1)).any():
            return True
    return False


def _ftz_nan_inplace(r: np.ndarray) -> None:
    """In place on a contiguous float32 array: subnormal → zero of its sign,
    NaN → ``0x7FC00000``."""
    flat = r.reshape(-1).view(np.uint32)
    mag = np.empty(min(CHUNK, flat.size), dtype=np.uint32)
    mask = np.empty(mag.size, dtype=bool)
    for lo in range(0, flat.size, CHUNK):
        uu = flat[lo : lo + CHUNK]
        mg, mm = mag[: uu.size], mask[: uu.size]
        np.bitwise_and(uu, _ABS32, out=mg)
        np.less(mg, _MIN_NORMAL32, out=mm)
        np.bitwise_and(uu, _SIGN32, out=uu, where=mm)
        np.greater(mg, _INF32, out=mm)
        np.copyto(uu, np.uint32(QNAN_F32), where=mm)


def daz_f32(a: np.ndarray) -> np.ndarray:
    """A Vector Engine operand as the engine reads it (hardware.md §2.2a):
    ``a`` (``float32``, any shape) with every subnormal replaced by a zero of
    its sign (and every NaN by ``0x7FC00000``); ``a`` itself (no copy) when
    it holds no subnormal."""
    if not _has_subnormal(np.ascontiguousarray(a).view(np.uint32)):
        return a
    c = np.array(a, dtype=np.float32, order="C", copy=True)
    _ftz_nan_inplace(c)  # NaN operands become 0x7FC00000 too: harmless, any NaN product is canonical
    return c


def scalar_f32(g: Any) -> np.float32:
    """An f32 operand as ``np.float32``: a Python or numpy number is rounded
    to f32 (nearest even), a 0-d ``float32`` array is taken as is.  Raises
    ``ValueError`` for anything that is not a real number."""
    if isinstance(g, np.ndarray):
        if g.shape != ():
            raise ValueError(f"an f32 scalar must be 0-d, got shape {g.shape}")
        g = g[()]
    if isinstance(g, (bool, np.bool_)) or not isinstance(g, (int, float, np.integer, np.floating)):
        raise ValueError(f"an f32 scalar must be a real number, got {type(g).__name__}")
    with np.errstate(over="ignore"):
        return np.float32(g)


def vector_mul(a: Any, b: Any) -> np.ndarray:
    """The Vector Engine's ``f32`` multiply (hardware.md §2.2a): a subnormal
    operand reads as a zero of its sign, the product is IEEE round to
    nearest even, a subnormal product becomes a zero of its sign, and any NaN
    product is ``0x7FC00000`` (so ``inf × subnormal`` is NaN).

    ``a``, ``b``: ``float32`` arrays (or ``np.float32`` scalars) of
    broadcastable shapes.  Returns a new ``float32`` array of the broadcast
    shape.  Raises ``ValueError`` for another dtype."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != np.float32 or b.dtype != np.float32:
        raise ValueError(f"vector_mul takes float32 operands, got {a.dtype} and {b.dtype}")
    with np.errstate(all="ignore"):
        r = np.multiply(daz_f32(a), daz_f32(b), dtype=np.float32)
    r = np.ascontiguousarray(r, dtype=np.float32)
    _ftz_nan_inplace(r)
    return r


@cache
def _e8m0_lut() -> np.ndarray:
    e = np.arange(256, dtype=np.uint32)
    out = e << np.uint32(23)  # 2^(e-127) has biased f32 exponent e (e >= 1)
    out[0] = 0x00400000  # 2^-127: an f32 subnormal
    out[255] = QNAN_F32
    out.flags.writeable = False
    return out


def e8m0_to_f32(values: Any) -> np.ndarray:
    """The MXFP4 block scale ``f8E8M0FNU`` as the Vector Engine's ``f32``
    operand (hardware.md §4): ``2^(e-127)``, exact; ``e = 0`` gives
    ``2^-127`` (bits ``0x00400000``, an f32 subnormal, which
    :func:`vector_mul` then reads as ``+0``); ``e = 255`` gives ``0x7FC00000``.

    ``values``: ``ml_dtypes.float8_e8m0fnu`` or raw ``uint8`` bits, any shape.
    Returns a new ``float32`` array.  Raises ``ValueError`` for another
    dtype."""
    return _gather(_e8m0_lut(), as_bits(values, 1, (ml_dtypes.float8_e8m0fnu,), "e8m0_to_f32")).view(np.float32)


def decode_block_scales(scale: Any) -> np.ndarray:
    """Block scales as ``f32`` Vector Engine operands: ``float32`` as they
    are (an NVFP4 scale already widened by the adapter's cast),
    ``ml_dtypes.float8_e8m0fnu`` through :func:`e8m0_to_f32`.  Returns
    ``float32`` (the input itself when it is already ``float32``).  Raises
    ``ValueError`` for another dtype."""
    s = np.asarray(scale)
    if s.dtype == np.float32:
        return s
    if s.dtype == np.dtype(ml_dtypes.float8_e8m0fnu):
        return e8m0_to_f32(s)
    raise ValueError(f"block scales must be float32 or float8_e8m0fnu, got {s.dtype}")


def block_scale(x: Any, scale: Any, block: int) -> np.ndarray:
    """``rngd.block_scale``: every element of ``x`` times its block's scale,
    by :func:`vector_mul` (hardware.md §4, block scale first).

    ``x``: ``float32``, shape ``(..., n)``; ``scale``: ``float32`` or
    ``float8_e8m0fnu`` (:func:`decode_block_scales`), shape
    ``(..., n // block)`` (same leading dims); element ``x[..., i]`` uses
    ``scale[..., i // block]``.  Returns a new ``float32`` array of ``x``'s
    shape.  Raises ``ValueError`` for mismatched shapes, ``block < 1``, a
    last dim not divisible by ``block``, or a wrong dtype."""
    x = np.asarray(x)
    s = decode_block_scales(scale)
    if x.dtype != np.float32:
        raise ValueError(f"block_scale scales float32 values, got {x.dtype}")
    if block < 1 or x.ndim == 0 or x.shape[-1] % block:
        raise ValueError(f"block {block} does not divide the last dim of shape {x.shape}")
    want = x.shape[:-1] + (x.shape[-1] // block,)
    if s.shape != want:
        raise ValueError(
            f"block scales of shape {s.shape} for values of shape {x.shape} and block {block}; expected {want}"
        )
    out = vector_mul(x.reshape(want + (block,)), s[..., None])
    return out.reshape(x.shape)


def tensor_scale(x: Any, g: Any) -> np.ndarray:
    """``rngd.tensor_scale``: every element of ``x`` times the one ``f32``
    tensor scale ``g``, by :func:`vector_mul` (hardware.md §4, tensor scale
    second; a subnormal ``g`` reads as zero).

    ``x``: ``float32``, any shape; ``g``: an f32 scalar (:func:`scalar_f32`:
    a Python float is rounded to f32).  Returns a new ``float32`` array of
    ``x``'s shape.  Raises ``ValueError`` for a wrong dtype or a ``g`` that is
    not a real number."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise ValueError(f"tensor_scale scales float32 values, got {x.dtype}")
    return vector_mul(x, np.asarray(scalar_f32(g)))
