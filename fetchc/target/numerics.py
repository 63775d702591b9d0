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

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    "flush_f32",
    "vector_mul",
    "e8m0_to_f32",
    "decode_block_scales",
    "block_scale",
    "tensor_scale",
    "scalar_f32",
    "Magnitudes",
    "magnitudes_of",
    "scale_chain_inplace",
    "ScaleChain",
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


def _bits(values: Any, width: int, names: tuple[Any, ...], what: str) -> np.ndarray:
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
    b = _bits(values, 2, (ml_dtypes.bfloat16,), "bf16_to_f32")
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
    return _gather(_f8_lut("e4m3"), _bits(values, 1, (ml_dtypes.float8_e4m3fn,), "f8e4m3_to_f32")).view(np.float32)


def f8e5m2_to_f32(values: Any) -> np.ndarray:
    """Cast 4, ``f8E5M2 → f32`` (hardware.md §2.2a): exact, ±inf stays
    ±inf; a NaN keeps its sign: ``0x7FC00000`` or ``0xFFC00000``.

    ``values``: ``ml_dtypes.float8_e5m2`` or raw ``uint8`` bits, any shape.
    Returns a new ``float32`` array.  Raises ``ValueError`` for another
    dtype."""
    return _gather(_f8_lut("e5m2"), _bits(values, 1, (ml_dtypes.float8_e5m2,), "f8e5m2_to_f32")).view(np.float32)


def f32_to_bf16(values: Any) -> np.ndarray:
    """Cast 6, ``f32 → bf16`` (hardware.md §2.2a): round to nearest even
    (overflow, including the largest finite f32, gives ±inf); a subnormal
    input gives a zero of its sign; any NaN gives ``0x7FC0``.

    ``values``: ``float32`` (or raw ``uint32`` bits), any shape.  Returns a
    new ``ml_dtypes.bfloat16`` array of that shape.  Raises ``ValueError``
    for another dtype."""
    u = np.ascontiguousarray(_bits(values, 4, (np.float32,), "f32_to_bf16"))
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


def _daz(a: np.ndarray) -> np.ndarray:
    """``a`` (float32) with every subnormal replaced by a zero of its sign;
    ``a`` itself (no copy) when it holds no subnormal."""
    if not _has_subnormal(np.ascontiguousarray(a).view(np.uint32)):
        return a
    c = np.array(a, dtype=np.float32, order="C", copy=True)
    _ftz_nan_inplace(c)  # NaN operands become 0x7FC00000 too: harmless, any NaN product is canonical
    return c


def flush_f32(values: Any) -> np.ndarray:
    """RNGD's view of f32 values: every subnormal becomes a zero of its sign
    and every NaN becomes ``0x7FC00000`` (hardware.md §2.2a).  ``values``:
    ``float32``, any shape.  Returns a new ``float32`` array.  Raises
    ``ValueError`` for another dtype."""
    a = np.asarray(values)
    if a.dtype != np.float32:
        raise ValueError(f"flush_f32 takes float32 values, got {a.dtype}")
    out = np.array(a, dtype=np.float32, order="C", copy=True)
    _ftz_nan_inplace(out)
    return out


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
        r = np.multiply(_daz(a), _daz(b), dtype=np.float32)
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
    return _gather(_e8m0_lut(), _bits(values, 1, (ml_dtypes.float8_e8m0fnu,), "e8m0_to_f32")).view(np.float32)


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
        raise ValueError(f"block scales of shape {s.shape} for values of shape {x.shape} and block {block}; expected {want}")
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


# --------------------------------------------------------------------------
# In-place scale chains (what ``fetchc run`` applies to large streams)
# --------------------------------------------------------------------------

_MIN_NORMAL = 2.0**-126
_F32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Magnitudes:
    """A sound over-approximation of what an ``f32`` array may hold, used to
    skip the flush / NaN passes where they cannot change anything.

    ``lo`` / ``hi``: bounds on the magnitudes of its nonzero finite
    elements (``lo = inf``, ``hi = 0`` when it has none); ``zero``, ``inf``,
    ``nan``: whether it may hold zeros, infinities, NaNs.  Subnormals are
    possible exactly when ``lo < 2^-126``."""

    lo: float = 0.0
    hi: float = _F32_MAX
    zero: bool = True
    inf: bool = True
    nan: bool = True

    @property
    def subnormal(self) -> bool:
        return self.lo < _MIN_NORMAL

    def flushed(self) -> Magnitudes:
        """After the Vector Engine's flush (§2.2a): subnormals become zeros."""
        if not self.subnormal:
            return self
        has_normal = self.hi >= _MIN_NORMAL
        return Magnitudes(
            _MIN_NORMAL if has_normal else math.inf, self.hi if has_normal else 0.0, True, self.inf, self.nan
        )

    def times(self, other: Magnitudes) -> Magnitudes:
        """Bounds of the exact products of (flushed) operands, before the
        result's flush; NaN from NaN operands and from ``inf × 0``."""
        a, b = self.flushed(), other.flushed()
        finite = a.hi > 0 and b.hi > 0
        lo = a.lo * b.lo if finite else math.inf
        hi = a.hi * b.hi if finite else 0.0
        overflow = hi > _F32_MAX
        return Magnitudes(
            lo,
            min(hi, _F32_MAX),
            a.zero or b.zero or lo < 2.0**-149,
            a.inf or b.inf or overflow,
            a.nan or b.nan or (a.inf and b.zero) or (a.zero and b.inf),
        )

    @property
    def needs_fix(self) -> bool:
        """Whether a product with these bounds may need the flush or the NaN
        canonicalisation."""
        return self.subnormal or self.nan


UNKNOWN = Magnitudes()
"""Anything may occur."""


def magnitudes_of(values: Any, scratch: np.ndarray | None = None) -> Magnitudes:
    """The exact :class:`Magnitudes` of a ``float32`` array (or raw ``uint32``
    bits): a few reductions.  ``scratch``: an optional ``uint32`` buffer of at
    least ``values.size`` items."""
    u = np.ascontiguousarray(_bits(values, 4, (np.float32,), "magnitudes_of")).reshape(-1)
    if u.size == 0:
        return Magnitudes(math.inf, 0.0, False, False, False)
    mag = np.empty(u.size, np.uint32) if scratch is None else scratch[: u.size]
    np.bitwise_and(u, _ABS32, out=mag)
    top = int(mag.max())
    zero = int(mag.min()) == 0
    mag -= np.uint32(1)  # zero wraps to the largest value: the minimum is then the smallest nonzero
    low = (int(mag.min()) + 1) & 0xFFFFFFFF
    nan = top > 0x7F800000
    inf = (mag == np.uint32(0x7F7FFFFF)).any() if nan else top == 0x7F800000
    finite_top = top if top < 0x7F800000 else None
    if finite_top is None:  # the largest finite magnitude needs another pass
        finite = mag[mag < np.uint32(0x7F7FFFFF)]
        finite_top = int(finite.max()) + 1 if finite.size else 0
    as_f = lambda b: float(np.array(b, np.uint32).view(np.float32))  # noqa: E731
    if low == 0 or low >= 0x7F800000:
        lo = math.inf
    else:
        lo = as_f(low)
    hi = as_f(finite_top) if finite_top else 0.0
    if lo == math.inf:
        hi = 0.0
    return Magnitudes(lo, hi, zero, bool(inf), nan)


CHAIN_CHUNK = 1 << 16
"""Elements per work item of :func:`scale_chain_inplace` (256 KiB of f32)."""

_CHAIN_TLS = threading.local()


def _chain_buffers(n: int) -> tuple[np.ndarray, np.ndarray]:
    bufs = getattr(_CHAIN_TLS, "bufs", None)
    if bufs is None or bufs[0].size < n:
        bufs = (np.empty(max(n, CHAIN_CHUNK), np.uint32), np.empty(max(n, CHAIN_CHUNK), bool))
        _CHAIN_TLS.bufs = bufs
    return bufs[0][:n], bufs[1][:n]


def _flush_subnormals(u: np.ndarray, mag: np.ndarray, mask: np.ndarray) -> None:
    """Subnormals → a zero of their sign, in place on contiguous ``uint32``
    bits (``mag``, ``mask``: scratch of the same size)."""
    np.bitwise_and(u, _ABS32, out=mag)
    np.less(mag.view(np.int32), np.int32(0x00800000), out=mask)
    np.bitwise_and(u, _SIGN32, out=u, where=mask)


def _canonical_nans(u: np.ndarray, mask: np.ndarray) -> None:
    """Every NaN → ``0x7FC00000``, in place on contiguous ``uint32`` bits."""
    np.isnan(u.view(np.float32), out=mask)
    np.copyto(u, np.uint32(QNAN_F32), where=mask)


def _chunk_magnitudes(f: np.ndarray, per: int) -> dict[str, np.ndarray]:
    """:class:`Magnitudes` fields of each run of ``per`` elements of the
    ``float32`` array ``f`` (the last run may be shorter), as arrays (one
    entry per run), from a few reductions over the whole array; conservative
    where cheap (a run holding a NaN is also taken to hold infinities and
    values up to the largest finite one)."""
    u = np.ascontiguousarray(f).reshape(-1).view(np.uint32)
    k = -(-u.size // per)
    mag = np.zeros(k * per, np.uint32)
    np.bitwise_and(u, _ABS32, out=mag[: u.size])
    pad = k * per > u.size
    m = mag.reshape(k, per)
    top = m.max(axis=1)
    zero = m.min(axis=1) == 0
    m -= np.uint32(1)  # zeros wrap to the largest value, so the minimum is the smallest nonzero
    low = m.min(axis=1) + np.uint32(1)
    none = (low == 0) | (low >= 0x7F800000)  # no nonzero finite value in the run
    lo = np.where(none, np.uint32(0x7F800000), low).view(np.float32).astype(np.float64)
    hi = np.where(none, np.uint32(0), np.where(top >= 0x7F800000, np.uint32(0x7F7FFFFF), top)).view(np.float32)
    zero[-1] |= pad
    return {"lo": lo, "hi": hi.astype(np.float64), "zero": zero, "inf": top >= 0x7F800000, "nan": top > 0x7F800000}


def _as_fields(m: Magnitudes) -> dict[str, Any]:
    return {"lo": m.lo, "hi": m.hi, "zero": m.zero, "inf": m.inf, "nan": m.nan}


def _flushed_fields(b: dict[str, Any]) -> dict[str, Any]:
    """:meth:`Magnitudes.flushed`, elementwise on field arrays."""
    sub = np.asarray(b["lo"]) < _MIN_NORMAL
    normal = np.asarray(b["hi"]) >= _MIN_NORMAL
    return {
        "lo": np.where(sub, np.where(normal, _MIN_NORMAL, math.inf), b["lo"]),
        "hi": np.where(sub & ~normal, 0.0, b["hi"]),
        "zero": b["zero"] | sub,
        "inf": b["inf"],
        "nan": b["nan"],
    }


def _times_fields(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """:meth:`Magnitudes.times`, elementwise on field arrays."""
    a, b = _flushed_fields(a), _flushed_fields(b)
    finite = (a["hi"] > 0) & (b["hi"] > 0)
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np.where(finite, a["lo"] * b["lo"], math.inf)
        hi = np.where(finite, a["hi"] * b["hi"], 0.0)
    return {
        "lo": lo,
        "hi": np.minimum(hi, _F32_MAX),
        "zero": a["zero"] | b["zero"] | (lo < 2.0**-149),
        "inf": a["inf"] | b["inf"] | (hi > _F32_MAX),
        "nan": a["nan"] | b["nan"] | (a["inf"] & b["zero"]) | (a["zero"] & b["inf"]),
    }


class ScaleChain:
    """A chain of Vector Engine multiplies to apply in place to element
    ranges of one flat ``float32`` stream of ``n`` elements (what
    :func:`scale_chain_inplace` runs; ``fetchc run`` also calls
    :meth:`apply` on each range the simulator has just written, while it is
    in cache).  ``factors`` and ``bounds`` as for :func:`scale_chain_inplace`.

    Which flush and NaN passes each chunk of :attr:`chunk` elements needs is
    decided up front from the bounds (vectorised over the chunks).  Raises
    ``ValueError`` for a wrong dtype or a block that does not divide ``n``."""

    def __init__(self, n: int, factors: Sequence[tuple[Any, int | None]], bounds: Magnitudes = UNKNOWN):
        self.n = n
        align = 1
        for _, block in factors:
            if block is not None:
                align = math.lcm(align, block)
        self.chunk = max(align, CHAIN_CHUNK // align * align)
        chunks = max(1, -(-n // self.chunk))
        self.steps: list[tuple[Any, Any, int | None]] = []
        self.daz = bounds.subnormal  # the operand's subnormals read as zeros (vector_mul's _daz)
        b = _flushed_fields(_as_fields(bounds))
        b = {k: np.broadcast_to(np.asarray(v), (chunks,)) for k, v in b.items()}
        fixes: list[tuple[list[bool], list[bool]]] = []
        for f, block in factors:
            if block is None:
                g = _daz(np.asarray(scalar_f32(f), dtype=np.float32).reshape(1))
                self.steps.append((g[0], None, None))
                fb = _as_fields(magnitudes_of(g))
            else:
                fa = np.asarray(f)
                if fa.dtype != np.float32:
                    raise ValueError(f"block factors must be float32, got {fa.dtype}")
                if block < 1 or n % block or fa.size != n // block:
                    raise ValueError(f"{fa.size} factors for {n} elements in blocks of {block}")
                fa = np.ascontiguousarray(_daz(fa)).reshape(-1)
                # an explicit stride-0 view: faster in numpy than broadcasting fa[:, None]
                wide = np.lib.stride_tricks.as_strided(fa, (fa.size, block), (fa.strides[0], 0), writeable=False)
                self.steps.append((fa, wide, block))
                fb = _chunk_magnitudes(fa, self.chunk // block)
            p = _times_fields(b, fb)
            p = {k: np.broadcast_to(np.asarray(v), (chunks,)) for k, v in p.items()}
            fixes.append((np.asarray(p["lo"] < _MIN_NORMAL).tolist(), np.asarray(p["nan"]).tolist()))
            b = _flushed_fields(p)
        self.fixes = fixes

    def apply(self, flat: np.ndarray, lo: int, hi: int) -> None:
        """Apply the chain in place to ``flat[lo:hi]`` (``flat``: the whole
        stream, 1-D contiguous ``float32``).  Thread-safe for disjoint
        ranges."""
        a = lo
        while a < hi:
            b = min(hi, (a // self.chunk + 1) * self.chunk)
            self._piece(flat, a, b)
            a = b

    def _piece(self, flat: np.ndarray, lo: int, hi: int) -> None:
        """``[lo, hi)`` inside one chunk of :attr:`chunk` elements."""
        xc = flat[lo:hi]
        u = xc.view(np.uint32)
        mag, mask = _chain_buffers(hi - lo)
        c = lo // self.chunk
        with np.errstate(all="ignore"):
            if self.daz:
                _flush_subnormals(u, mag, mask)
            for (f, wide, block), (sub, nan) in zip(self.steps, self.fixes):
                if block is None:
                    np.multiply(xc, f, out=xc)
                elif lo % block == 0 and hi % block == 0:
                    x2 = xc.reshape(-1, block)
                    np.multiply(x2, wide[lo // block : hi // block], out=x2)
                else:  # a range that splits a block: one factor per element
                    np.multiply(xc, f[np.arange(lo, hi) // block], out=xc)
                if sub[c]:
                    _flush_subnormals(u, mag, mask)
                if nan[c]:
                    _canonical_nans(u, mask)


def scale_chain_inplace(
    x: np.ndarray,
    factors: Sequence[tuple[Any, int | None]],
    *,
    bounds: Magnitudes = UNKNOWN,
    run_chunks: Callable[[int, int, Callable[[int, int], None]], None] | None = None,
) -> np.ndarray:
    """``x ← (…((x × f₁) × f₂)…)`` **in place**, each ``×`` the Vector
    Engine multiply of :func:`vector_mul` (hardware.md §2.2a: subnormal
    operands read as zeros of their sign, IEEE round to nearest even, a
    subnormal product becomes a zero of its sign, any NaN product is
    ``0x7FC00000``), bit for bit the same as applying :func:`vector_mul`
    (:func:`block_scale` / :func:`tensor_scale`) step by step.

    * ``x``: a writable C-contiguous ``float32`` array, any shape; its
      elements in C order.  Returned (the same object).
    * ``factors``: ``(f, block)`` steps in order.  ``block = None``: ``f`` is
      one f32 scalar (:func:`scalar_f32`).  ``block = B``: ``f`` is a
      ``float32`` array of ``x.size // B`` elements, one per run of ``B``
      consecutive elements of ``x`` (``rngd.block_scale`` when the runs are
      the innermost packet dim's blocks).
    * ``bounds``: what ``x`` may hold (:class:`Magnitudes`; default: anything).
      Where the bounds of ``x`` and of a factor's values (per chunk of
      :data:`CHAIN_CHUNK` elements) prove that no product is subnormal, the
      flush pass is skipped, and the NaN pass where none is NaN: an
      optimisation that never changes a bit.
    * ``run_chunks``: ``run_chunks(n, chunk, work)`` runs ``work(lo, hi)``
      over ``[0, n)`` in chunks (e.g. on threads); default: in order here.

    Raises ``ValueError`` for a wrong dtype, a non-contiguous ``x`` or a
    block that does not divide ``x.size``."""
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or not x.flags.c_contiguous or not x.flags.writeable:
        raise ValueError("scale_chain_inplace needs a writable C-contiguous float32 array")
    flat = x.reshape(-1)
    chain = ScaleChain(flat.size, factors, bounds)

    def work(lo: int, hi: int) -> None:
        chain.apply(flat, lo, hi)

    if run_chunks is None:
        work(0, flat.size)
    else:
        run_chunks(flat.size, chain.chunk, work)
    return x
