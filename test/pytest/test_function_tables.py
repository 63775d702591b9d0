"""Function tables (hardware.md §2.1b) against an independent reference.

Every entry of every function × key type, with a spread of scales and zero
points for the integer keys, is recomputed with numpy, ``math`` and
ml_dtypes and the spec's rules (``test/support/fnref.py``: key decoding,
float64 evaluation, round to nearest even to f32 then to bf16, FTZ,
canonical NaN, the ±inf limits), and compared bit for bit (NaN bits
included) with ``fetchc.target.functions.function_entries``.  Nothing of
fetchc is used to build the reference.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fnref
from fetchc.target import BF16, F8E4M3FN, F8E5M2, I8, I16, functions

C = fnref.C
LIMITS = fnref.LIMITS
CODES = fnref.CODES
ref_table = fnref.table


def ours(fn: str, key: str, scale: float = 1.0, zp: int = 0) -> np.ndarray:
    t = {"f8E4M3FN": F8E4M3FN, "f8E5M2": F8E5M2, "bf16": BF16, "i8": I8, "i16": I16}[key]
    return np.array(functions.function_entries(fn, t, scale, zp), dtype=np.uint16)


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, what
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (
        f"{what}: {bad.size} entries differ, first key 0x{bad[0]:x}: got 0x{got[bad[0]]:04x}, want 0x{want[bad[0]]:04x}"
    )


def test_codes_and_limits_are_the_spec():
    assert {f.name: f.code for f in functions.FUNCTIONS.values()} == CODES
    for name, (lo, hi) in LIMITS.items():
        f = functions.FUNCTIONS[name]
        for got, want in ((f.at_neg_inf, lo), (f.at_pos_inf, hi)):
            assert got == want and math.copysign(1, got) == math.copysign(1, want), name


@pytest.mark.parametrize("fn", list(CODES))
@pytest.mark.parametrize("key", ["f8E4M3FN", "f8E5M2", "bf16"])
def test_float_keys_every_entry(fn, key):
    assert_same(ours(fn, key), ref_table(fn, key), f"{fn} on {key}")


I8_PARAMS = [(1.0, 0), (0.0625, 3), (0.0078125, -128), (3.5, 127), (1e-30, -7), (2.0**-126, 0), (3.0e38, 1),
             (0.1, 42)]  # fmt: skip
I16_PARAMS = [(1.0, 0), (0.001, 1000), (2.0**-10, -32768), (1.0e34, 32767)]


@pytest.mark.parametrize("fn", list(CODES))
@pytest.mark.parametrize("scale,zp", I8_PARAMS)
def test_i8_every_entry(fn, scale, zp):
    assert_same(ours(fn, "i8", scale, zp), ref_table(fn, "i8", scale, zp), f"{fn} on i8, scale {scale}, zp {zp}")


@pytest.mark.parametrize("fn", list(CODES))
@pytest.mark.parametrize("scale,zp", I16_PARAMS)
def test_i16_every_entry(fn, scale, zp):
    assert_same(ours(fn, "i16", scale, zp), ref_table(fn, "i16", scale, zp), f"{fn} on i16, scale {scale}, zp {zp}")


def test_spec_cases_by_hand():
    """Hand-checked entries: the rules of §2.1b one at a time."""
    e = functions.function_entries
    assert e("identity", BF16)[0x0001] == 0x0000  # a subnormal key reads as +0
    assert e("identity", BF16)[0x8001] == 0x8000  # ... a zero of its sign
    assert e("relu", BF16)[0x8000] == 0x0000  # relu(-0) = +0
    assert e("sigmoid", BF16)[0x7F80] == 0x3F80  # sigmoid(+inf) = 1
    assert e("tanh", BF16)[0xFF80] == 0xBF80  # tanh(-inf) = -1
    assert e("gelu", BF16)[0xFF80] == 0x8000  # gelu(-inf) = -0
    assert e("exp", BF16)[0xFF80] == 0x0000  # exp(-inf) = +0
    assert e("exp", BF16)[0x42C8] == 0x7F80  # exp(100) overflows f32: +inf
    assert e("exp", BF16)[0xC2C8] == 0x0000  # exp(-100) = 3.7e-44, an f32 subnormal: +0
    assert e("sigmoid", BF16)[0xFFC1] == 0x7FC0  # a NaN key (any sign, payload) gives 0x7FC0
    assert e("identity", F8E4M3FN)[0xFF] == 0x7FC0  # e4m3fn NaN, negative: canonical, unlike the decode table
    assert e("sigmoid", BF16)[0x0000] == 0x3F00  # sigmoid(0) = 0.5
    assert e("identity", I8, 0.0625, 3)[0x05] == 0x3E00  # (5 - 3) * 0.0625 = 0.125
    assert e("identity", I8, 0.0625, 3)[0x80] == 0xC103  # (-128 - 3) * 0.0625 = -8.1875
    # gelu(-10) = -7.62e-23: a normal bf16 where the textbook formula gives -0.
    assert e("gelu", F8E5M2)[0xC9] != 0x8000 and ref_table("gelu", "f8E5M2")[0xC9] == e("gelu", F8E5M2)[0xC9]


def test_no_float64_overflow_where_the_value_is_finite():
    """sigmoid of a very negative x and gelu_tanh of large |x| stay finite
    (hardware.md §2.1b)."""
    assert functions.evaluate("sigmoid", -1000.0) == 0.0
    assert functions.evaluate("silu", -1000.0) == -0.0 and math.copysign(1, functions.evaluate("silu", -1000.0)) < 0
    assert functions.evaluate("gelu_tanh", 1e200) == 1e200
    assert functions.evaluate("gelu_tanh", -1e200) == 0.0
    assert functions.evaluate("exp", 1000.0) == math.inf
    x = -10.0  # gelu_tanh(-10) = -1.2e-37: a normal f32, not -0 (no cancellation in 1 + tanh)
    z = C * (x + 0.044715 * x**3)
    want = x * math.exp(2 * z) / (1 + math.exp(2 * z))
    assert math.isclose(functions.evaluate("gelu_tanh", x), want, rel_tol=1e-12)


@pytest.mark.parametrize(
    "scale,problem",
    [(math.inf, "is not finite"), (math.nan, "is not finite"), (0.0, "is zero"), (-0.0, "is zero"),
     (1e-40, "subnormal"), (1e-46, "is zero"), (1e39, "is not finite"), (0.0625, None), (-2.0, None)],
)  # fmt: skip
def test_scale_rules(scale, problem):
    got = functions.scale_problem(scale)
    assert (got is None) if problem is None else (got is not None and problem in got)


def test_zero_point_ranges():
    assert functions.zero_point_range(I8) == (-128, 127)
    assert functions.zero_point_range(I16) == (-32768, 32767)
