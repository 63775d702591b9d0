"""``fetchc dis`` text stays readable (issue 27, items 5 and 6; seqbin.md
"fetchc dis"): every line of the disassembly of every example, and of a
``seq.bin`` holding every kind of table, is shorter than 100 columns; a
table value is the shortest decimal that reads back as the same value of
its type (checked here with ml_dtypes, independently of
``fetchc.seqbin.disasm``); a kernel's programs are named as indices."""

from __future__ import annotations

import math
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fetchc
from fetchc.seqbin import SeqBin, Table, disassemble, format_value
from fetchc.target import BF16, F4E2M1FN, F8E4M3FN, F8E5M2, I8, I16, LOOKUP_TABLES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
WIDTH = 100


def _too_wide(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if len(ln) >= WIDTH]


@pytest.fixture(scope="module")
def example_texts() -> dict[str, str]:
    return {
        p.name: disassemble(fetchc.compile(p.read_text(), filename=f"examples/{p.name}").seq_bin) for p in EXAMPLES
    }


def test_every_example_dis_line_is_under_100_columns(example_texts):
    assert len(example_texts) == len(EXAMPLES) >= 9
    wide = {name: _too_wide(text) for name, text in example_texts.items()}
    assert not any(wide.values()), wide


def test_every_kind_of_table_is_under_100_columns():
    """The four decode tables, a function table per key type (1- and
    2-byte keys, integer keys with a scale and a zero point), and a paired
    table whose cells are too wide for 8 a line (e5m2 subnormals), which
    falls back to 4 a line."""
    tables = [Table.for_pair(src, dst) for src, dst in LOOKUP_TABLES]
    tables += [
        Table.for_function("gelu", F8E4M3FN),
        Table.for_function("exp", F8E5M2),
        Table.for_function("silu", I8, 0.1, -12),
        Table.for_function("tanh", BF16),
        Table.for_function("sigmoid", I16, 2**-10, 7),  # an f32 scale: the reader gives the same one back
    ]
    wide_cells = bytes(b for k in range(256) for b in (0x83, 0x83 ^ (k & 0x80)))  # (-4.58e-05, ±4.58e-05)
    tables.append(Table(True, F4E2M1FN, F8E5M2, wide_cells))
    text = disassemble(SeqBin(tuple(tables), ()))
    assert not _too_wide(text), _too_wide(text)
    last = text[text.index(f"table {len(tables) - 1}:") :]
    assert "  layout: 4 keys a line, key = label + column; cell = (lo,hi)" in last
    labels = re.findall(r"^  0x([0-9a-f]{2}):", last, re.M)
    assert [int(x, 16) for x in labels] == list(range(0, 256, 4))
    # 3 × 2^-16 = 4.58e-05 in e5m2, whose neighbours are 3.05e-05 and 6.1e-05: shortest "5e-05"
    assert re.search(r"^  0x00: +\(-5e-05,-5e-05\) +\(-5e-05,-5e-05\) ", last, re.M)
    assert re.search(r"^  0x80: +\(-5e-05,5e-05\) +\(-5e-05,5e-05\) ", last, re.M)


def _significant_digits(text: str) -> int:
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa) or 1


def _reads_back(text: str, bits: int, dtype) -> bool:
    """``text`` parsed as a float64 and rounded to ``dtype`` (ml_dtypes,
    round to nearest even) has the bits ``bits``."""
    store = np.uint8 if np.dtype(dtype).itemsize == 1 else np.uint16
    return int(np.array([float(text)]).astype(dtype).view(store)[0]) == bits


@pytest.mark.parametrize(
    "t, dtype, codes, most",
    [
        (F8E4M3FN, ml_dtypes.float8_e4m3fn, range(256), 3),
        (F8E5M2, ml_dtypes.float8_e5m2, range(256), 3),
        (BF16, ml_dtypes.bfloat16, [hi << 8 | lo for hi in range(256) for lo in (0, 1, 0x2B, 0x55, 0x7F, 0xA3, 0xFF)], 4),
    ],
    ids=["f8E4M3FN", "f8E5M2", "bf16"],
)
def test_values_are_the_shortest_text_that_reads_back(t, dtype, codes, most):
    store = np.uint8 if t.bits == 8 else np.uint16
    for bits in codes:
        text = format_value(bits, t)
        v = float(np.array([bits], store).view(dtype)[0])
        if math.isnan(v):
            assert text == ("-nan" if bits >> (t.bits - 1) else "nan"), (bits, text)
            continue
        assert _reads_back(text, bits, dtype), (hex(bits), text)
        assert not text.endswith(".0") and len(text) <= 10, text
        digits = _significant_digits(text)
        if math.isinf(v) or float(text) == v and len(text) <= len(f"{v:.{digits}g}"):
            continue  # the exact value, no longer than any shorter-digit text
        assert digits <= most, (hex(bits), text)
        fewer = f"{v:.{digits - 1}g}" if digits > 1 else None
        assert fewer is None or not _reads_back(fewer, bits, dtype), (hex(bits), text, fewer)


def test_exact_value_when_as_short():
    assert format_value(0x4700, BF16) == "32768"  # not 32800, which also reads back
    assert format_value(0x3A80, BF16) == "0.00098"  # 0.0009765625
    assert format_value(0x7E, F8E4M3FN) == "448" and format_value(0x80, F8E4M3FN) == "-0"


def test_manifest_programs_are_indices(example_texts):
    text = example_texts["nvfp4_dequant_f32.mlir"]
    assert "\n  program indices: 0, 1\n" in text and "\n  programs: " not in text
