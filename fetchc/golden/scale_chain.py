"""The golden model's fused Vector Engine scale chains: ``fetchc run``
applies a stream's pending ``rngd.block_scale`` / ``rngd.tensor_scale``
multiplies in one in-place pass (:func:`scale_chain_inplace`,
:class:`ScaleChain`), skipping the flush and NaN passes where bounds on the
values (:class:`Magnitudes`) prove them unnecessary.

This is an optimisation of the golden model, not number semantics: every
result is bit for bit what applying :func:`fetchc.target.numerics.vector_mul`
step by step gives (hardware.md §2.2a, §4), which ``test_run.py`` and
``test_differential.py`` check.  The semantics live in
:mod:`fetchc.target.numerics`.

This module imports numpy.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fetchc.target.numerics import QNAN_F32, as_bits, daz_f32, scalar_f32

__all__ = ["Magnitudes", "UNKNOWN", "magnitudes_of", "ScaleChain", "scale_chain_inplace", "CHAIN_CHUNK"]

_SIGN32 = np.uint32(0x80000000)
_ABS32 = np.uint32(0x7FFFFFFF)
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
    u = np.ascontiguousarray(as_bits(values, 4, (np.float32,), "magnitudes_of")).reshape(-1)
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

    def as_f(b: int) -> float:
        return float(np.array(b, np.uint32).view(np.float32))

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
                g = daz_f32(np.asarray(scalar_f32(f), dtype=np.float32).reshape(1))
                self.steps.append((g[0], None, None))
                fb = _as_fields(magnitudes_of(g))
            else:
                fa = np.asarray(f)
                if fa.dtype != np.float32:
                    raise ValueError(f"block factors must be float32, got {fa.dtype}")
                if block < 1 or n % block or fa.size != n // block:
                    raise ValueError(f"{fa.size} factors for {n} elements in blocks of {block}")
                fa = np.ascontiguousarray(daz_f32(fa)).reshape(-1)
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
            for (f, wide, block), (sub, nan) in zip(self.steps, self.fixes, strict=False):
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
    Engine multiply of :func:`fetchc.target.numerics.vector_mul` (hardware.md §2.2a: subnormal
    operands read as zeros of their sign, IEEE round to nearest even, a
    subnormal product becomes a zero of its sign, any NaN product is
    ``0x7FC00000``), bit for bit the same as applying :func:`fetchc.target.numerics.vector_mul`
    (:func:`~fetchc.target.numerics.block_scale` / :func:`~fetchc.target.numerics.tensor_scale`) step by step.

    * ``x``: a writable C-contiguous ``float32`` array, any shape; its
      elements in C order.  Returned (the same object).
    * ``factors``: ``(f, block)`` steps in order.  ``block = None``: ``f`` is
      one f32 scalar (:func:`~fetchc.target.numerics.scalar_f32`).  ``block = B``: ``f`` is a
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
