"""The fast front end (fetchc/frontend/fastparse.py) builds exactly what
xDSL's parser (LocatedParser) builds, or falls back to it.

Every lit input (test/lit/**/*.mlir, Inputs included), every example and
every fuzz-corpus file is parsed both ways, whole and, where it has
``// -----``, chunk by chunk with its line offset: the fast path either
declines, or builds IR that prints identically in generic form with
locations and has equal block-argument locations (test/support/parse_oracle.py),
and never accepts what xDSL's parser rejects.  Other tests pin that the fast
path is really taken, the fallback's diagnostics, and the per-parse memo.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parse_oracle import ParserMismatch, compare
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp

from fetchc.diagnostics import DiagnosticError
from fetchc.frontend.context import make_context
from fetchc.frontend.fastparse import fast_parse
from fetchc.frontend.parsing import parse_module, split_input_file

REPO = Path(__file__).resolve().parents[2]
CTX = make_context()


def _inputs() -> list[Path]:
    files = set((REPO / "test" / "lit").rglob("*.mlir"))
    files |= set((REPO / "examples").glob("*.mlir"))
    files |= set((REPO / "test" / "fuzz-corpus" / "mlir").glob("*.mlir"))
    return sorted(files)


def _texts(path: Path) -> list[tuple[str, int]]:
    """The whole text, then each ``// -----`` chunk with its line offset."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return []  # rejected before parsing, by either path
    chunks = split_input_file(text)
    return [(text, 0)] + (chunks if len(chunks) > 1 else [])


INPUTS = _inputs()
_OUTCOMES: dict[str, list[str]] = {}


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(REPO)))
def test_fast_path_agrees_with_xdsl(path):
    outcomes = []
    for text, offset in _texts(path):
        try:
            outcomes.append(compare(CTX, text, str(path), offset))
        except ParserMismatch as err:
            pytest.fail(f"{path} (line offset {offset}): {err}")
    _OUTCOMES[str(path)] = outcomes


def _hits(paths: list[Path]) -> tuple[int, int]:
    """(texts the fast path built, texts in all) over ``paths``."""
    built = total = 0
    for path in paths:
        for text, offset in _texts(path):
            total += 1
            built += fast_parse(CTX, text, str(path), offset) is not None
    return built, total


def test_fast_path_is_taken_for_every_example():
    examples = sorted((REPO / "examples").glob("*.mlir"))
    assert len(examples) >= 7
    for path in examples:
        assert fast_parse(CTX, path.read_text(), str(path)) is not None, path


def test_fast_path_is_taken_for_most_lit_inputs_of_our_dialects():
    """Lit inputs that use only builtin, func and our dialects (as far as
    a text search can tell) and that xDSL's parser accepts: the fast path
    builds nearly all of them (a regression to "always falls back" fails)."""
    ours = []
    for path in sorted((REPO / "test" / "lit").rglob("*.mlir")):
        text = path.read_text(errors="replace")
        if any(d in text for d in ("scf.", "cf.", "memref.", "test.op", "affine.for", "func.call", "arith.")):
            continue
        ours.append(path)
    built, total = _hits(ours)
    assert total >= 150
    assert built >= 0.9 * total, f"the fast path built {built} of {total} lit texts"


def test_every_input_is_compared():
    assert len(INPUTS) >= 150
    texts = sum(len(_texts(p)) for p in INPUTS)
    assert texts >= 300


ALIAS_TWICE = """#l = strided<[1], offset: {offset}>
func.func @k(%x: memref<64xbf16, #l>) {{
  func.return
}}
"""


def test_alias_spelling_is_never_shared_between_parses():
    """An alias means what its own input defines, on the fast path too: the
    per-parse memo is per parse, and spellings naming an alias are never
    memoised."""
    first = fast_parse(CTX, ALIAS_TWICE.format(offset=0), "a.mlir")
    second = fast_parse(CTX, ALIAS_TWICE.format(offset=32), "b.mlir")
    assert first is not None and second is not None
    t1 = first.body.block.first_op.args[0].type
    t2 = second.body.block.first_op.args[0].type
    assert t1.layout.offset.data == 0 and t2.layout.offset.data == 32


def test_redefined_alias_in_one_text_falls_back_to_the_error():
    text = "#l = strided<[1]>\n#l = strided<[2]>\n" + ALIAS_TWICE.format(offset=0).split("\n", 1)[1]
    assert fast_parse(CTX, text, "r.mlir") is None
    with pytest.raises(DiagnosticError, match="re-declaration of alias"):
        parse_module(CTX, text, "r.mlir")


def test_memo_shares_only_equal_alias_free_spellings():
    text = (
        "func.func @k(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32, strided<[2]>>, "
        "%d: memref<4xf32, strided<[2]>>) {\n  func.return\n}\n"
    )
    module = fast_parse(CTX, text, "m.mlir")
    assert module is not None
    a, b, c, d = module.body.block.first_op.args
    assert a.type is b.type and c.type is d.type and a.type != c.type
    assert str(c.type) == "memref<4xf32, strided<[2]>>"


def test_errors_come_from_xdsl_parser():
    """A syntax error falls back: the diagnostic is xDSL's, located."""
    text = "func.func @k(%a: memref<4xf32>) {\n  func.return %a\n}\n"
    assert fast_parse(CTX, text, "e.mlir") is None
    with pytest.raises(DiagnosticError) as err:
        parse_module(CTX, text, "e.mlir")
    with pytest.raises(DiagnosticError) as slow:
        parse_module(CTX, text, "e.mlir", parser="xdsl")
    assert err.value.diagnostics == slow.value.diagnostics
    assert err.value.diagnostics[0].loc == ("e.mlir", 3, 1)


def test_parser_choice(monkeypatch):
    text = (REPO / "examples" / "tiling_read.mlir").read_text()
    fast = parse_module(CTX, text, "t.mlir")
    slow = parse_module(CTX, text, "t.mlir", parser="xdsl")
    assert isinstance(fast, ModuleOp) and isinstance(slow, ModuleOp)
    calls = []
    monkeypatch.setattr("fetchc.frontend.parsing.fast_parse", lambda *a: calls.append(a))
    monkeypatch.setenv("FETCHC_PARSER", "xdsl")
    parse_module(CTX, text, "t.mlir")
    assert calls == []
    monkeypatch.setenv("FETCHC_PARSER", "auto")
    parse_module(CTX, text, "t.mlir")
    assert len(calls) == 1
    with pytest.raises(ValueError, match="parser must be"):
        parse_module(CTX, text, "t.mlir", parser="fast")
    monkeypatch.setenv("FETCHC_PARSER", "fast")
    with pytest.raises(DiagnosticError, match="FETCHC_PARSER must be 'auto' or 'xdsl'"):
        parse_module(CTX, text, "t.mlir")


def test_split_chunk_locations_use_the_file_lines():
    text = (REPO / "test" / "lit" / "parse" / "alias_redefined.mlir").read_text()
    (_, _), (chunk, offset) = split_input_file(text)
    module = fast_parse(CTX, chunk, "s.mlir", offset)
    assert module is not None and offset > 10
    func = module.body.block.first_op
    loc = func.location
    assert isinstance(loc, FileLineColLoc)
    line = 1 + text.splitlines().index(next(x for x in text.splitlines() if x.startswith("func.func @b")))
    assert (loc.line.data, loc.column.data) == (line, 1)
    assert func.args[0].location.line.data == line


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_modules_agree(data):
    """Random valid modules (test/support/modgen.py), printed in custom and
    generic form, with and without locations: the fast path builds them,
    identically."""
    from modgen import modules

    from fetchc.driver import print_module

    text = data.draw(modules()).text
    # modgen writes an `arith.constant` for some scalars: another dialect
    expected = "fallback" if "arith." in text else "same"
    assert compare(CTX, text, "g.mlir") == expected, text
    module = parse_module(CTX, text, "g.mlir", parser="xdsl")
    for generic in (False, True):
        for debuginfo in (False, True):
            printed = print_module(module, generic=generic, debuginfo=debuginfo)
            assert compare(CTX, printed, "p.mlir") == expected, printed


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_mutated_examples_agree(data):
    """Examples with one character deleted, duplicated or replaced: the
    fast path falls back or agrees, and never accepts what xDSL rejects."""
    paths = sorted((REPO / "examples").glob("*.mlir"))
    text = data.draw(st.sampled_from(paths)).read_text()
    i = data.draw(st.integers(0, len(text) - 1))
    kind = data.draw(st.sampled_from(["delete", "dup", "replace"]))
    c = data.draw(st.sampled_from(list("%@#!<>()[]{},:=-x0123456789 \n\"^.abfiu")))
    if kind == "delete":
        text = text[:i] + text[i + 1 :]
    elif kind == "dup":
        text = text[:i] + text[i] + text[i:]
    else:
        text = text[:i] + c + text[i + 1 :]
    try:
        compare(CTX, text, "mut.mlir")
    except ParserMismatch as err:
        pytest.fail(f"mutation {kind} at {i} ({c!r}): {err}")
