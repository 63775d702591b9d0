"""Function tables (hardware.md §2.1b): the functions, their keys, the legal
parameters, and the baked entries.  The one home of these definitions: the
``fetch.table_lookup`` verifier, ``fetch-to-seq`` (baking), the ``seq.bin``
record rules (reader and writer), the simulator (through the baked bytes)
and the IR interpreter (through :func:`evaluate`) all call this module.

A function table maps every key ``k`` of a key type to
``bf16(f32(f(x(k))))``:

* ``x(k)`` (:func:`key_value`): for ``f8E4M3FN``/``f8E5M2``/``bf16`` keys the
  value the key encodes (a ``bf16`` subnormal reads as a zero of its sign,
  §2.2a; NaN keys give NaN); for ``i8``/``i16`` keys ``(k − zero_point) ×
  scale`` with ``k`` the signed key, exact in float64 (a 17-bit integer
  times a 24-bit significand).
* ``f`` (:func:`evaluate`): one of :data:`FUNCTIONS`, in float64, with the
  §2.1b limits at ±inf and NaN for a NaN argument.  Each is evaluated in a
  form equal to the spec's formula but free of overflow and cancellation
  (README "Choices"): ``sigmoid(x) = e^x / (1 + e^x)`` for ``x < 0``;
  ``gelu(x) = ½·x·erfc(−x/√2)`` (``1 + erf(y) = erfc(−y)``);
  ``gelu_tanh(x) = x·sigmoid(2z)`` with ``z = √(2/π)·(x + 0.044715·x³)``
  (``1 + tanh(z) = 2·sigmoid(2z)``); ``exp`` beyond float64 is ``+inf``.  So
  the far tails (``gelu(−10) ≈ −7.7e-23``, a normal ``bf16``) are the true
  values, where the textbook formula gives ``−0``.
* ``bf16(f32(v))`` (:func:`bf16_bits`): ``v`` rounded to nearest even to
  ``f32`` (overflow → ±inf), then RNGD's ``f32 → bf16`` cast: an ``f32``
  subnormal becomes a zero of its sign, round to nearest even, a NaN is
  ``0x7FC0``.

Numpy-free (compiling bakes tables without numpy): ``math`` for the
functions, ``struct`` for the ``f32`` rounding (C's ``double → float``
conversion, round to nearest even), integers for the rest.  A 2-byte key
table (65536 entries) takes about 0.1 s and is cached per parameters.

Spec: hardware.md §2.1b, §2.2a; seqbin.md TABLES (the ``function`` codes).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from fetchc.target.facts import BF16, F8E4M3FN, F8E5M2, I8, I16, ElementType
from fetchc.target.tables_data import TABLES as _DECODE_DATA

__all__ = [
    "Function",
    "FUNCTIONS",
    "FUNCTION_BY_CODE",
    "DECODE_CODE",
    "FUNCTION_KEYS",
    "FUNCTION_OUTPUT",
    "QNAN_BF16",
    "function_names",
    "is_function_key",
    "key_bytes",
    "key_count",
    "zero_point_range",
    "scale_problem",
    "round_f32",
    "f32_bits",
    "bf16_bits",
    "key_value",
    "evaluate",
    "function_entries",
]


@dataclass(frozen=True)
class Function:
    """One function of hardware.md §2.1b: ``name`` (the ``fn`` property),
    ``code`` (seqbin.md TABLES ``function`` field), ``formula`` (as the spec
    writes it, for docs and messages), ``finite`` (the float64 evaluation of
    a finite argument) and the values at ``-inf`` / ``+inf``."""

    name: str
    code: int
    formula: str
    finite: Callable[[float], float]
    at_neg_inf: float
    at_pos_inf: float


_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)  # underflows to 0 for very negative x, never overflows
    return e / (1.0 + e)


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:  # the true value is beyond float64 (and f32): +inf
        return math.inf


def _gelu(x: float) -> float:
    return 0.5 * x * math.erfc(-(x / _SQRT2))


def _gelu_tanh(x: float) -> float:
    z = _SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))  # x * x * x: inf, never OverflowError
    return x * _sigmoid(2.0 * z)


FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        Function("identity", 1, "x", lambda x: x, -math.inf, math.inf),
        Function("relu", 2, "x if x > 0, else +0.0", lambda x: x if x > 0 else 0.0, 0.0, math.inf),
        Function("gelu", 3, "0.5·x·(1 + erf(x/√2))", _gelu, -0.0, math.inf),
        Function("gelu_tanh", 4, "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))", _gelu_tanh, -0.0, math.inf),
        Function("sigmoid", 5, "1/(1 + exp(−x))", _sigmoid, 0.0, 1.0),
        Function("silu", 6, "x·sigmoid(x)", lambda x: x * _sigmoid(x), -0.0, math.inf),
        Function("tanh", 7, "tanh(x)", math.tanh, -1.0, 1.0),
        Function("exp", 8, "exp(x)", _exp, 0.0, math.inf),
    )
}
"""hardware.md §2.1b's functions by name, in ``function`` code order."""
FUNCTION_BY_CODE: dict[int, Function] = {f.code: f for f in FUNCTIONS.values()}
"""seqbin.md TABLES ``function`` code → function (0, a decode table, is not here)."""
DECODE_CODE = 0
"""The TABLES ``function`` code of a decode table (hardware.md §2.1)."""

FUNCTION_KEYS: tuple[ElementType, ...] = (F8E4M3FN, F8E5M2, I8, BF16, I16)
"""The key types of function tables (hardware.md §2.1b), 1-byte keys first."""
FUNCTION_OUTPUT = BF16
"""The only output type of a function table."""
QNAN_BF16 = 0x7FC0
"""The entry of a NaN key or a NaN result."""


def function_names() -> str:
    """``identity, relu, gelu, ...``: the known functions, for messages."""
    return ", ".join(FUNCTIONS)


def is_function_key(t: ElementType | None) -> bool:
    """Whether a function table can be keyed by ``t`` (hardware.md §2.1b)."""
    return t in FUNCTION_KEYS


def key_bytes(t: ElementType) -> int:
    """Bytes of one key of type ``t`` (1 or 2; a 4-bit key is a packed pair
    of one byte)."""
    return max(1, t.bits // 8)


def key_count(t: ElementType) -> int:
    """Entries of a table keyed by ``t``: 256 (1-byte keys) or 65536."""
    return 1 << (8 * key_bytes(t))


def zero_point_range(t: ElementType) -> tuple[int, int]:
    """``[lo, hi]`` of a function table's ``zero_point`` for integer key
    type ``t``: the key type's range (hardware.md §2.1b)."""
    return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1


def round_f32(v: float) -> float:
    """``v`` rounded to nearest even to ``f32`` (as a float; overflow gives
    ±inf, a NaN stays NaN, IEEE gradual underflow)."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def f32_bits(v: float) -> int:
    """The ``f32`` bit pattern of ``v`` rounded to nearest even (overflow →
    ±inf)."""
    return struct.unpack("<I", struct.pack("<f", round_f32(v)))[0]


def scale_problem(scale: float) -> str | None:
    """Why ``scale`` cannot be a function table's scale, or ``None`` when it
    can: it must be a finite, non-zero, normal ``f32`` (hardware.md §2.1b).
    ``scale`` is first rounded to ``f32``."""
    s = round_f32(scale)
    if math.isnan(s) or math.isinf(s):
        return "is not finite"
    if s == 0:
        return "is zero"
    if f32_bits(s) & 0x7F800000 == 0:
        return "is an f32 subnormal (RNGD has none)"
    return None


def bf16_bits(v: float) -> int:
    """``bf16(f32(v))``: round the float64 ``v`` to nearest even to ``f32``,
    then RNGD's ``f32 → bf16`` cast (hardware.md §2.2a): an ``f32``
    subnormal gives a zero of its sign, round to nearest even (overflow →
    ±inf), any NaN gives ``0x7FC0``."""
    if math.isnan(v):
        return QNAN_BF16
    b = f32_bits(v)
    exp = b & 0x7F800000
    if exp == 0:
        return (b >> 16) & 0x8000
    if exp == 0x7F800000:
        return b >> 16  # ±inf (NaN was handled above)
    return (b + 0x7FFF + ((b >> 16) & 1)) >> 16


def _bf16_value(bits: int) -> float:
    if bits & 0x7F80 == 0:
        return -0.0 if bits & 0x8000 else 0.0  # zero or subnormal: a zero of its sign
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def key_value(t: ElementType, k: int, scale: float = 1.0, zero_point: int = 0) -> float:
    """``x(k)`` for key ``k`` (the key's unsigned bit pattern, 0 to
    ``key_count(t) - 1``) of key type ``t`` (hardware.md §2.1b): the value a
    float key encodes (NaN for a NaN key; a ``bf16`` subnormal reads as a
    zero of its sign), or ``(k − zero_point) × scale`` for an integer key,
    ``k`` read as signed.  Raises ``KeyError`` for a type that keys no
    function table."""
    if t in (F8E4M3FN, F8E5M2):
        return _bf16_value(_DECODE_DATA[(t.name, BF16.name)][k])  # the exact decode table's bf16
    if t == BF16:
        return _bf16_value(k)
    if t in (I8, I16):
        signed = k - (1 << t.bits) if k >> (t.bits - 1) else k
        return (signed - zero_point) * round_f32(scale)
    raise KeyError(t)


def evaluate(fn: str | Function, x: float) -> float:
    """``f(x)`` in float64 (module docstring): the §2.1b limits at ±inf,
    NaN for a NaN ``x``.  Raises ``KeyError`` for an unknown function."""
    f = fn if isinstance(fn, Function) else FUNCTIONS[fn]
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return f.at_pos_inf if x > 0 else f.at_neg_inf
    return f.finite(x)


@lru_cache(maxsize=64)
def function_entries(fn: str, key: ElementType, scale: float = 1.0, zero_point: int = 0) -> tuple[int, ...]:
    """The ``key_count(key)`` ``u16`` entries of the ``fn`` table keyed by
    ``key``, entry ``k`` for the key's bit pattern ``k``, exactly as
    ``seq.bin`` stores them (seqbin.md TABLES): ``bf16_bits(evaluate(fn,
    key_value(key, k, scale, zero_point)))``.  ``scale`` and
    ``zero_point`` matter for integer keys only.  Raises ``KeyError`` for an
    unknown function or a key type of no function table."""
    f = FUNCTIONS[fn]
    if key not in FUNCTION_KEYS:
        raise KeyError(key)
    out = []
    for k in range(key_count(key)):
        out.append(bf16_bits(evaluate(f, key_value(key, k, scale, zero_point))))
    return tuple(out)
