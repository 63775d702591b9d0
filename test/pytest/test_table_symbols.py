"""Table symbols never collide with the module's own symbols (issue 26 item 7).

``fetch-to-seq`` names a table ``@f4E2M1FN_to_f8E4M3FN`` or
``@gelu_f8E4M3FN``; a kernel named so gave a module with two symbols of one
name (``--verify-each`` failed, ``--emit=seq`` did not read back).  A new
table now avoids every symbol of its symbol table (``..._1``), and the
tables of a kernel in a nested ``builtin.module`` go into that module, the
symbol table its program's ``table = @...`` is resolved in (they were put at
the top, where the program could not find them).  Every case: compiled with
``--verify-each`` (on in the tests), the programs and tables are those of
the same kernel named ``@k``, and ``--emit=seq`` reads back to the same
``seq.bin`` byte for byte.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from samples import DECODE

import fetchc
from fetchc.cli import main
from fetchc.seqbin import read

ROOT = Path(__file__).resolve().parents[2]
GELU = (ROOT / "examples" / "gelu_f8e4m3_activations.mlir").read_text().replace("@gelu(", "@k(")
DECODE_K = DECODE.replace("@decode", "@k")


def _nested(*names: str, body: str = DECODE_K) -> str:
    inner = "".join(f"  builtin.module @{n} {{\n{body}  }}\n" for n in names)
    return f"builtin.module {{\n{inner}}}\n"


CASES = {
    "decode kernel named like its table": (DECODE_K.replace("@k", "@f4E2M1FN_to_f8E4M3FN"), ["_1"]),
    "function kernel named like its table": (GELU.replace("@k(", "@gelu_f8E4M3FN("), ["_1"]),
    "the next name taken too": (
        DECODE_K.replace("@k", "@f4E2M1FN_to_f8E4M3FN")
        + "func.func private @f4E2M1FN_to_f8E4M3FN_1()\n",
        ["_2"],
    ),
    "kernels in nested modules": (_nested("left", "right"), ["", ""]),
    "a nested kernel named like its table": (
        _nested("m", body=DECODE_K.replace("@k", "@f4E2M1FN_to_f8E4M3FN")),
        ["_1"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_table_symbols_are_unique_and_emit_seq_reads_back(case, tmp_path):
    text, suffixes = CASES[case]
    src = tmp_path / "k.mlir"
    src.write_text(text)
    direct, seq = tmp_path / "direct.bin", tmp_path / "k.seq.mlir"
    assert main([str(src), "-o", str(direct)]) == 0
    assert main([str(src), "--emit=seq", "--mlir-print-debuginfo", "-o", str(seq)]) == 0
    emitted = seq.read_text()
    # each table symbol is defined once, with the suffix that avoids the kernel's name
    defined = [line.split()[1] for line in emitted.splitlines() if line.lstrip().startswith("fetch_seq.table @")]
    base = "@gelu_f8E4M3FN" if "gelu" in text else "@f4E2M1FN_to_f8E4M3FN"
    assert defined == [base + s for s in suffixes], defined
    for symbol in defined:
        assert f"table = {symbol}," in emitted
    back = tmp_path / "back.bin"
    assert main([str(seq), "-o", str(back), "-p", ""]) == 0
    assert back.read_bytes() == direct.read_bytes()
    # the same programs and the one table of the same kernel named @k
    reference = fetchc.compile(GELU if "gelu" in text else DECODE_K, cache=False)
    got = read(direct.read_bytes())
    assert got.tables == reference.tables
    assert [p.name.rsplit("/", 1)[1] for p in got.programs] == ["0"] * len(got.programs)
    assert {replace(p, name="k/0") for p in got.programs} == set(reference.programs)
