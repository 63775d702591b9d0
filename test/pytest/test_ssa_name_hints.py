"""SSA names that end in ``_<digits>`` (issue 26 item 6).

xDSL keeps an SSA name as a *name hint* without a trailing ``_<digits>``
(``%a_1`` is ``a``, ``%x_0_1`` is ``x_0``); ``%_1`` and ``%_`` are legal
MLIR.  ``%_1`` once left the empty hint ``""``, which xDSL's own setter
refuses, so every pass that replaces an op and copies its result's hint
(``fetch-to-seq``, ``fetch-legalize-convert``...) failed with ``ValueError:
Invalid OpResult name format``, unlocated.  Here every example is compiled
with each SSA value renamed to such names (every pass of the default
pipeline runs on one example or another, and ``--verify-each`` is on in the
tests), and must give the same programs and tables as the example itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fetchc
from fetchc.diagnostics import DiagnosticError

from respell import STYLES, respell_ssa_names

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))


@pytest.fixture(scope="module")
def reference():
    return {p.name: fetchc.compile(p.read_text(), filename=p.name, cache=False) for p in EXAMPLES}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_pass_takes_ssa_names_with_digit_suffixes(style, reference):
    for path in EXAMPLES:
        text = respell_ssa_names(path.read_text(), STYLES[style])
        assert text.count("%" + STYLES[style](0)) >= 2, text  # really respelt (defined and used)
        got = fetchc.compile(text, filename=path.name, cache=False)
        ref = reference[path.name]
        assert got.programs == ref.programs, path.name
        assert got.tables == ref.tables, path.name
        names = [[t.name for t in k.tensors] for k in got.seqbin.manifest.kernels]
        assert names == [[t.name for t in k.tensors] for k in ref.seqbin.manifest.kernels]


def test_arguments_named_with_digit_suffixes_are_named_as_documented():
    """ir.md §2a: a tensor is named by its SSA name, which MLIR keeps without
    a ``_<digits>`` suffix; ``%_1`` has no name left, so it is ``arg<i>``."""
    text = (ROOT / "examples" / "int8_silu_dequant.mlir").read_text()
    for q, out, names in [("_1", "_2", ["arg0", "arg1"]), ("a_1", "x_0_1", ["a", "x_0"]), ("_", "__7", ["_", "_"])]:
        spelt = text.replace("%q", f"%{q}").replace("%out", f"%{out}").replace("%s ", "%_3 ").replace("%s,", "%_3,")
        if names[0] == names[1]:  # %_ and %__7 are both "_": the documented error
            with pytest.raises(DiagnosticError, match=r'argument 1 \(%__<digits>\) is named "_"'):
                fetchc.compile(spelt, filename="k.mlir", cache=False)
            continue
        got = fetchc.compile(spelt, filename="k.mlir", cache=False)
        assert [t.name for t in got.seqbin.manifest.kernels[0].tensors] == names


def test_a_name_starting_with_a_digit_and_letters_is_a_located_parse_error():
    """``%1_2`` is not an MLIR SSA name (digits only, or a letter first): a
    located syntax error, as mlir-opt gives."""
    text = (ROOT / "examples" / "int8_silu_dequant.mlir").read_text().replace("%q", "%1_2")
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text, filename="k.mlir", cache=False)
    (d,) = e.value.diagnostics
    assert d.loc == ("k.mlir", 22, 27), d  # after "%1", where the name ends
