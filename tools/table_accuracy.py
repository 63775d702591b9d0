"""How accurate the function tables are (hardware.md §2.1b), and what they
buy over a Vector-Engine-style ``f32`` evaluation.

For every function and key type, over every key of the table:

* **table**: the entry fetchc bakes (``fetchc.target.functions``), against
  the float64 value ``f(x)`` (the same float64 evaluation the table starts
  from), as the error in units in the last place of ``bf16`` at that value;
* **f32 VE**: what a kernel would get computing the activation itself in
  ``f32`` (the Vector Engine's arithmetic) and narrowing to ``bf16``: the key
  value in ``f32`` (for integer keys ``f32(k - zero_point) × f32(scale)``,
  one ``f32`` rounding), the textbook formula with every operation in
  ``f32`` (numpy ``float32`` ``exp``/``tanh``; ``erf`` taken correctly
  rounded to ``f32``, which flatters the Vector Engine), then RNGD's
  ``f32 → bf16`` cast.

Keys are left out of the error columns where the comparison means nothing:
NaN and ±inf keys (the table holds the §2.1b limits there; the textbook
formulas in ``f32`` give NaN for ``gelu``, ``gelu_tanh`` and ``silu`` of
``-inf``), values beyond ``bf16``'s range (both give ±inf), and values below ``f32``'s smallest normal
``2^-126``, which RNGD flushes to zero either way (counted as ``ftz``).
``> ½`` counts entries whose error exceeds half an ulp: for the table only
where rounding float64 to ``f32`` first moved the value across a ``bf16``
rounding boundary (the double rounding §2.1b prescribes).

Integer keys use one scale and zero point each (``--i8 0.0625,0``,
``--i16 0.0009765625,0``): ``x`` then spans ``[-8, 8)`` and ``[-32, 32)``.

Usage::

    .venv/bin/python tools/table_accuracy.py [--markdown] [--i8 SCALE,ZP] [--i16 SCALE,ZP]

The output is the table in docs/hardware.md §2.1b.
"""

from __future__ import annotations

import argparse
import math
import sys

import ml_dtypes
import numpy as np

from fetchc.target import BY_NAME, functions
from fetchc.target.numerics import f32_to_bf16

KEYS = ("f8E4M3FN", "f8E5M2", "i8", "bf16", "i16")
_erf32 = np.vectorize(lambda v: np.float32(math.erf(float(v))), otypes=[np.float32])


def key_values(key: str, scale: float, zp: int) -> tuple[np.ndarray, np.ndarray]:
    """``(float64 x, f32 x as the Vector Engine would hold it)`` for every key."""
    t = BY_NAME[key]
    x64 = np.array([functions.key_value(t, k, scale, zp) for k in range(functions.key_count(t))])
    if key.startswith("i"):
        signed = np.arange(functions.key_count(t)).astype(np.uint16 if key == "i16" else np.uint8)
        signed = signed.view(np.int16 if key == "i16" else np.int8).astype(np.int64)
        with np.errstate(over="ignore"):
            x32 = (signed - zp).astype(np.float32) * np.float32(scale)
    else:
        x32 = x64.astype(np.float32)
    return x64, x32


def ve_f32(fn: str, x: np.ndarray) -> np.ndarray:
    """The textbook formula with every operation in f32."""
    h, one = np.float32(0.5), np.float32(1)
    with np.errstate(all="ignore"):
        if fn == "identity":
            return x
        if fn == "relu":
            return np.where(x > 0, x, np.float32(0))
        if fn == "gelu":
            return h * x * (one + _erf32(x * np.float32(1 / math.sqrt(2))))
        if fn == "gelu_tanh":
            z = np.float32(math.sqrt(2 / math.pi)) * (x + np.float32(0.044715) * x * x * x)
            return h * x * (one + np.tanh(z))
        if fn == "sigmoid":
            return one / (one + np.exp(-x))
        if fn == "silu":
            return x * (one / (one + np.exp(-x)))
        if fn == "tanh":
            return np.tanh(x)
        if fn == "exp":
            return np.exp(x)
    raise ValueError(fn)


def ulp_errors(bits: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, int]:
    """Errors of bf16 ``bits`` against float64 ``ref`` in bf16 ulps at
    ``ref``, over the comparable keys; and the count of flushed keys."""
    with np.errstate(invalid="ignore"):
        got = bits.view(ml_dtypes.bfloat16).astype(np.float64)
    top = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max) * (1 + 2.0**-9)  # the round-to-inf threshold
    ok = np.isfinite(ref) & (np.abs(ref) < top)
    ftz = ok & (np.abs(ref) < 2.0**-126) & (ref != 0)
    ok &= ~ftz
    r = ref[ok]
    e = np.floor(np.log2(np.where(r == 0, 1.0, np.abs(r))))
    ulp = np.exp2(np.maximum(e, -126) - 7)
    with np.errstate(invalid="ignore"):
        err = np.abs(got[ok] - r) / ulp
    err[np.isnan(err)] = np.inf  # a NaN entry where the value is finite
    return err, int(ftz.sum())


def rows(i8: tuple[float, int], i16: tuple[float, int]) -> list[tuple]:
    out = []
    for fn in functions.FUNCTIONS:
        for key in KEYS:
            scale, zp = {"i8": i8, "i16": i16}.get(key, (1.0, 0))
            t = BY_NAME[key]
            x64, x32 = key_values(key, scale, zp)
            ref = np.array([functions.evaluate(fn, x) for x in x64])
            table = np.array(functions.function_entries(fn, t, scale, zp), dtype=np.uint16)
            ve = f32_to_bf16(ve_f32(fn, x32).astype(np.float32)).view(np.uint16)
            finite = np.isfinite(x64)  # the ±inf keys hold the §2.1b limits
            te, ftz = ulp_errors(table[finite], ref[finite])
            ve_err, _ = ulp_errors(ve[finite], ref[finite])
            out.append((fn, key, te.max(), int((te > 0.5).sum()), ve_err.max(), int((ve_err > 0.5).sum()),
                        te.size, ftz))  # fmt: skip
    return out


def _fmt(v: float) -> str:
    if math.isinf(v):
        return "inf"
    return f"{v:.3g}" if v >= 100 else f"{v:.5f}"


def table_parameters(key: str):
    """The argparse ``type`` of ``--i8`` / ``--i16``: ``"SCALE,ZP"`` as
    ``(scale, zero_point)`` of a table that can exist (hardware.md §2.1b,
    the rules of ``fetchc.target.functions``: a finite, non-zero, normal
    ``f32`` scale; a zero point in the key type's range).  Anything else is
    an ``argparse.ArgumentTypeError`` saying why (argparse: one usage line,
    exit status 2)."""
    t = BY_NAME[key]
    lo, hi = functions.zero_point_range(t)

    def parse(text: str) -> tuple[float, int]:
        parts = text.split(",")
        if len(parts) != 2:
            raise argparse.ArgumentTypeError(f"{text!r} is not SCALE,ZP (two numbers, e.g. 0.0625,0)")
        try:
            scale = float(parts[0])
        except ValueError:
            raise argparse.ArgumentTypeError(f"the scale {parts[0]!r} is not a number") from None
        try:
            zp = int(parts[1])
        except ValueError:
            raise argparse.ArgumentTypeError(f"the zero point {parts[1]!r} is not an integer") from None
        problem = functions.scale_problem(scale)
        if problem is not None:
            raise argparse.ArgumentTypeError(
                f"the scale {parts[0].strip()} {problem}: a table's scale is a finite, non-zero, normal f32 "
                "(hardware.md §2.1b)"
            )
        if not lo <= zp <= hi:
            raise argparse.ArgumentTypeError(
                f"the zero point {zp} is outside the {key} range [{lo}, {hi}]: it is a key value (hardware.md §2.1b)"
            )
        return scale, zp

    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (``--i8``, ``--i16``: :func:`table_parameters`)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--i8", type=table_parameters("i8"), default="0.0625,0", help="SCALE,ZP of the i8 tables")
    ap.add_argument("--i16", type=table_parameters("i16"), default="0.0009765625,0",
                    help="SCALE,ZP of the i16 tables")  # fmt: skip
    ap.add_argument("--markdown", action="store_true", help="a markdown table (docs/hardware.md)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    result = rows(a.i8, a.i16)
    head = ("fn", "key", "table max ulp", "table > ½", "f32 VE max ulp", "f32 VE > ½", "keys", "ftz")
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("  ".join(f"{c:>14}" for c in head))
    for fn, key, tmax, tn, vmax, vn, n, ftz in result:
        cells = (fn, key, _fmt(tmax), str(tn), _fmt(vmax), str(vn), str(n), str(ftz))
        print("| " + " | ".join(cells) + " |" if a.markdown else "  ".join(f"{c:>14}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
