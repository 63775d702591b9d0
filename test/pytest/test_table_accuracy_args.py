"""``tools/table_accuracy.py``'s arguments (issue 26 item 15).

Bad ``--i8`` / ``--i16`` values ended in tracebacks (``IndexError`` for
``0.5``, ``ValueError`` for ``x,1``), and impossible tables (a zero or
subnormal scale, a zero point out of the key type's range) were evaluated as
if they existed.  Now argparse refuses them (one line, exit status 2) with
the reason, by the rules of ``fetchc.target.functions`` (``scale_problem``,
``zero_point_range``), which the compiler applies to ``fetch.table_lookup``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("table_accuracy", ROOT / "tools" / "table_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "argv, why",
    [
        (["--i8", "0,0"], "the scale 0 is zero: a table's scale is a finite, non-zero, normal f32"),
        (["--i8=-0.0,0"], "the scale -0.0 is zero"),
        (["--i8", "1e-40,0"], "the scale 1e-40 is an f32 subnormal (RNGD has none)"),
        (["--i16", "1e39,0"], "the scale 1e39 is not finite"),  # overflows f32
        (["--i16", "nan,0"], "the scale nan is not finite"),
        (["--i8", "0.5,128"], "the zero point 128 is outside the i8 range [-128, 127]"),
        (["--i16", "0.5,-32769"], "the zero point -32769 is outside the i16 range [-32768, 32767]"),
        (["--i8", "0.5"], "'0.5' is not SCALE,ZP (two numbers, e.g. 0.0625,0)"),
        (["--i8", "0.5,1,2"], "'0.5,1,2' is not SCALE,ZP"),
        (["--i8", "x,1"], "the scale 'x' is not a number"),
        (["--i8", "0.5,1.5"], "the zero point '1.5' is not an integer"),
    ],
)
def test_impossible_or_malformed_tables_are_usage_errors(tool, capsys, argv, why):
    with pytest.raises(SystemExit) as e:
        tool.parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {argv[0].split('=')[0]}: {why}" in err and "Traceback" not in err, err


def test_tables_that_exist_are_taken(tool):
    a = tool.parse_args(["--i8", "0.03125,-12", "--i16", "1,32767"])
    assert (a.i8, a.i16) == ((0.03125, -12), (1.0, 32767))
    assert (tool.parse_args([]).i8, tool.parse_args([]).i16) == ((0.0625, 0), (0.0009765625, 0))
