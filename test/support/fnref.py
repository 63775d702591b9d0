"""An independent reference for function tables (hardware.md §2.1b), shared
by ``test_function_tables.py`` (every entry of every table) and the
differential harness (``differential.py``: ``fetch.table_lookup`` with
``fn`` on stream values).

Written from the spec with numpy, ``math`` and ml_dtypes only; nothing of
fetchc: key values decoded by ml_dtypes (a bf16 subnormal key reads as a zero
of its sign), integer keys ``(k - zero_point) * f32(scale)`` in float64, the
functions in float64 without the textbook formulas' overflow and
cancellation (``1 + erf(y) = erfc(-y)`` and ``1 + tanh(z) = 2 / (1 +
exp(-2z))`` in the negative tails), the ±inf limits of the spec's table,
then numpy's round to nearest even to f32 and the ``f32 -> bf16`` rules of
§2.2a (round to nearest even by ml_dtypes, an f32 subnormal gives a zero of
its sign, NaN gives ``0x7FC0``).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

SQRT2 = math.sqrt(2.0)
C = math.sqrt(2.0 / math.pi)

LIMITS = {
    "identity": (-np.inf, np.inf),
    "relu": (0.0, np.inf),
    "gelu": (-0.0, np.inf),
    "gelu_tanh": (-0.0, np.inf),
    "sigmoid": (0.0, 1.0),
    "silu": (-0.0, np.inf),
    "tanh": (-1.0, 1.0),
    "exp": (0.0, np.inf),
}
"""hardware.md §2.1b: ``f(-inf)``, ``f(+inf)``."""
CODES = {"identity": 1, "relu": 2, "gelu": 3, "gelu_tanh": 4, "sigmoid": 5, "silu": 6, "tanh": 7, "exp": 8}
"""seqbin.md TABLES ``function`` codes."""

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def ref_f(fn: str, x: np.ndarray) -> np.ndarray:
    """float64 ``f(x)`` for finite ``x``."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if fn == "identity":
            return x.copy()
        if fn == "relu":
            return np.where(x > 0, x, 0.0)
        if fn == "gelu":
            y = x / SQRT2
            return np.where(x > -3, 0.5 * x * (1 + _erf(y)), 0.5 * x * _erfc(-y))
        if fn == "gelu_tanh":
            z = C * (x + 0.044715 * x**3)
            return np.where(z > -0.5, 0.5 * x * (1 + np.tanh(z)), x / (1 + np.exp(-2 * z)))
        if fn == "sigmoid":
            return 1 / (1 + np.exp(-x))
        if fn == "silu":
            return x / (1 + np.exp(-x))
        if fn == "tanh":
            return np.tanh(x)
        if fn == "exp":
            return np.exp(x)
    raise AssertionError(fn)


def ref_bf16(v: np.ndarray) -> np.ndarray:
    """``bf16(f32(v))`` with RNGD's ``f32 -> bf16`` rules, as ``uint16`` bits."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.asarray(v, dtype=np.float64).astype(np.float32)
    u = f.view(np.uint32)
    out = f.astype(ml_dtypes.bfloat16).view(np.uint16).copy()
    sub = (u & 0x7F800000) == 0
    out[sub] = ((u[sub] >> 16) & 0x8000).astype(np.uint16)  # subnormal or zero: a zero of its sign
    out[np.isnan(f)] = 0x7FC0
    return out


def key_values(keys: np.ndarray, key: str, scale: float = 1.0, zp: int = 0) -> np.ndarray:
    """float64 ``x(k)`` of canonical key values (ml_dtypes floats, numpy
    ints) of key type ``key``."""
    if key in ("f8E4M3FN", "f8E5M2"):
        with np.errstate(invalid="ignore"):
            return np.asarray(keys).astype(np.float64)
    if key == "bf16":
        with np.errstate(invalid="ignore"):
            x = np.asarray(keys).astype(np.float64)
        sub = (np.abs(x) < 2.0**-126) & (x != 0)
        x[sub] = np.copysign(0.0, x[sub])  # a subnormal key reads as a zero of its sign
        return x
    return (np.asarray(keys).astype(np.float64) - zp) * float(np.float32(scale))


def apply(fn: str, x: np.ndarray) -> np.ndarray:
    """The entries (``uint16`` bf16 bits) for float64 key values ``x``."""
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x)
    v = np.full(x.shape, np.nan)
    v[finite] = ref_f(fn, x[finite])
    lo, hi = LIMITS[fn]
    v[x == -np.inf] = lo
    v[x == np.inf] = hi
    return ref_bf16(v)


def all_keys(key: str) -> np.ndarray:
    """Every key of ``key``'s table, by key code, as canonical values."""
    if key == "f8E4M3FN":
        return np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
    if key == "f8E5M2":
        return np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m2)
    if key == "bf16":
        return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(ml_dtypes.bfloat16)
    if key == "i8":
        return np.arange(256).astype(np.uint8).view(np.int8)
    return np.arange(65536).astype(np.uint16).view(np.int16)


def table(fn: str, key: str, scale: float = 1.0, zp: int = 0) -> np.ndarray:
    """The whole table: ``uint16`` entries by key code."""
    return apply(fn, key_values(all_keys(key), key, scale, zp))
