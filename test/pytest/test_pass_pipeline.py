"""``--pass-pipeline='builtin.module(...)'`` as mlir-opt reads it (issue 26
item 9; ``fetchc.driver.xdsl_pipeline``).

Spaces around names, commas and option lists and inside an option list are
accepted (``{ dm-size=4096 }`` was refused); an empty element (a trailing,
leading or doubled comma, which fetchc accepted) is refused; every error's
column is in the text as written (it was the column in fetchc's rewrite).
``test/lit/mlir-opt/pass_pipeline_syntax.test`` compares the same syntax
with a real mlir-opt.
"""

from __future__ import annotations

import pytest

from fetchc.diagnostics import DiagnosticError
from fetchc.driver import parse_pipeline


def _same(a, b) -> bool:
    return [(type(p), p) for p in a] == [(type(p), p) for p in b]


@pytest.mark.parametrize(
    "spec, xdsl",
    [
        ("builtin.module(fetch-place-dm{ dm-size=4096 })", "fetch-place-dm{dm-size=4096}"),
        ("builtin.module(  fetch-place-dm {dm-size=4096}  ,  fetch-to-seq  )", "fetch-place-dm{dm-size=4096},fetch-to-seq"),
        (" builtin.module(fetch-place-dm{\tdm-size=4096\n}) ", "fetch-place-dm{dm-size=4096}"),
        ("builtin.module(fetch-place-dm{})", "fetch-place-dm"),
        ("builtin.module()", ""),
    ],
)
def test_mlir_opt_spacing_is_accepted(spec, xdsl):
    assert _same(parse_pipeline(spec), parse_pipeline(xdsl))


@pytest.mark.parametrize(
    "spec, column, at, reason",
    [
        # an empty element: a pass name was expected where the ',' or ')' is
        ("builtin.module(fetch-place-dm,)", 31, ")", "expected a pass name (an empty element: a ',' too many?)"),
        ("builtin.module(,fetch-to-seq)", 16, ",", "expected a pass name"),
        ("builtin.module(fetch-place-dm,,fetch-to-seq)", 31, ",", "expected a pass name"),
        ("builtin.module(fetch-place-dm, )", 32, ")", "expected a pass name"),
        ("builtin.module( )", 17, ")", "expected a pass name"),
        ("builtin.module(fetch-place-dm fetch-to-seq)", 16, "f", "'fetch-place-dm fetch-to-seq' is not a pass name"),
        ("builtin.module(fetch-place-dm{dm-size=4096} x)", 45, "x", "expected ',' or ')' after the options of"),
        # xDSL's own syntax errors, mapped back through the rewrite
        ("builtin.module(  fetch-place-dm{dm-size = 4096})", 41, "=", "expected argument name here"),
        ("builtin.module(fetch-to-seq,   fetch-place-dm{ dm-size=})", 56, "}", "unknown argument value"),
        ("builtin.module(fetch-place-dm,func.func(cse))", 40, "(", "'func.func(...)' nests a pipeline"),
        ("builtin.module(fetch-place-dm))", 31, ")", "unexpected text after builtin.module(...): ')'"),
    ],
)
def test_errors_give_the_column_in_the_text_as_written(spec, column, at, reason):
    with pytest.raises(DiagnosticError) as e:
        parse_pipeline(spec)
    (d,) = e.value.diagnostics
    head = f"invalid pass pipeline '{spec}': column {column}: "
    assert d.message.startswith(head) and reason in d.message[len(head) :], d.message
    assert spec[column - 1] == at


def test_the_xdsl_opt_spelling_is_xdsl_opt_s():
    """``-p a,b`` is xdsl-opt's syntax, as xdsl-opt reads it: a trailing
    comma is allowed there, spaces in an option list are not."""
    assert _same(parse_pipeline("fetch-place-dm,"), parse_pipeline("fetch-place-dm"))
    with pytest.raises(DiagnosticError, match=r"column 16: expected argument name here"):
        parse_pipeline("fetch-place-dm{ dm-size=4096 }")
