"""Check every function-table entry fetchc bakes against hardware.md §2.1b's
definition, computed independently in high precision: ``bf16(f32(f64(f(x))))``
with ``f64(f(x))`` the exact ``f(x)`` **correctly rounded** to float64 (here:
evaluated with ``mpmath`` at 80 significant digits, then rounded to float64
by ``mpmath``'s conversion, which rounds to nearest).

fetchc evaluates each function in float64 in cancellation-free forms
(``fetchc/target/functions.py``), within a few float64 ulps of the true
value; this tool shows that no entry of the tables checked differs from the
correctly rounded definition.  The high-precision forms below are the
spec's formulas, rewritten only where the rewrite is an identity
(``1 + erf(y) = erfc(−y)``, ``1 + tanh(z) = 2/(1 + e^(−2z))``), so that 80
digits suffice in the far tails too.

Usage (needs ``pip install mpmath``; several minutes for the 2-byte keys)::

    .venv/bin/python tools/check_tables_exact.py [--quick]

``--quick``: the 1-byte keys only (seconds).  Exit status 1 if an entry
differs, with the first three per table printed.
"""

from __future__ import annotations

import argparse
import math
import sys

import mpmath
from mpmath import mpf

from fetchc.target import functions as F

mpmath.mp.dps = 80
_SIGN_OF_ZERO = {"identity", "gelu", "gelu_tanh", "silu", "tanh"}  # odd near 0: f(-0) = -0


def reference(fn: str, x: float) -> float:
    """``f64(f(x))``: the exact value correctly rounded to float64 (the
    §2.1b limits at ±inf, NaN for NaN)."""
    if math.isnan(x):
        return math.nan
    f = F.FUNCTIONS[fn]
    if math.isinf(x):
        return f.at_pos_inf if x > 0 else f.at_neg_inf
    X = mpf(x)
    if fn == "identity":
        v = X
    elif fn == "relu":
        v = X if x > 0 else mpf(0)
    elif fn == "gelu":
        v = X * mpmath.erfc(-X / mpmath.sqrt(2)) / 2
    elif fn == "gelu_tanh":
        v = X / (1 + mpmath.exp(-2 * mpmath.sqrt(2 / mpmath.pi) * (X + mpf("0.044715") * X**3)))
    elif fn == "sigmoid":
        v = 1 / (1 + mpmath.exp(-X))
    elif fn == "silu":
        v = X / (1 + mpmath.exp(-X))
    elif fn == "tanh":
        v = mpmath.tanh(X)
    elif fn == "exp":
        v = mpmath.exp(X)
    else:
        raise KeyError(fn)
    if v == 0:
        return math.copysign(0.0, x) if fn in _SIGN_OF_ZERO else 0.0
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


CASES = [
    (F.F8E4M3FN, 1.0, 0),
    (F.F8E5M2, 1.0, 0),
    (F.I8, 0.0625, 0),
    (F.I8, 0.1, -12),
    (F.BF16, 1.0, 0),
    (F.I16, 2.0**-10, 0),
    (F.I16, 0.001, 7),
]
"""Key types with the scales and zero points checked (integer keys: one
scale that spans a few units, one that is not a power of two)."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1-byte keys only")
    args = ap.parse_args()
    differ = 0
    for key, scale, zp in CASES:
        if args.quick and F.key_bytes(key) != 1:
            continue
        for fn in F.FUNCTIONS:
            got = F.function_entries(fn, key, scale, zp)
            bad = [
                (k, got[k], want)
                for k in range(F.key_count(key))
                if got[k] != (want := F.bf16_bits(reference(fn, F.key_value(key, k, scale, zp))))
            ]
            differ += len(bad)
            print(f"{fn:9} {key.name:8} scale {scale!r:<22} zero point {zp:3}: {len(bad)} entries differ", flush=True)
            for k, g, w in bad[:3]:
                print(f"  key 0x{k:04x}: fetchc 0x{g:04x}, correctly rounded 0x{w:04x}")
    print(f"{differ} entries differ in all")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
