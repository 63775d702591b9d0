"""Tests of fetchc.diagnostics and fetchc.frontend.parsing (located parsing, split
input, rendering, --verify-diagnostics), on xDSL's builtin/test/func/arith
dialects plus a tiny local dialect whose verifiers fail on purpose."""

from __future__ import annotations

import time

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, test
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Dialect, Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition, var_operand_def, var_result_def

from fetchc.diagnostics import (
    Diagnostic,
    DiagnosticError,
    OpError,
    SourceManager,
    check_expected,
    op_error,
    op_location,
    render,
    render_all,
    verify_module,
)
from fetchc.frontend.parsing import decode_source, parse_module, split_input_file
from fetchc.frontend.located_parser import LocatedParser
from served import FETCHC

# --------------------------------------------------------------------------- #
# fixtures
# --------------------------------------------------------------------------- #


@irdl_op_definition
class NoteOp(IRDLOperation):
    """Fails with an OpError carrying a note at each operand's defining op."""

    name = "tdiag.noted"
    ins = var_operand_def()

    def verify_(self) -> None:
        notes: list[tuple[Operation, str]] = []
        for value in self.operands:
            assert isinstance(value.owner, Operation)
            notes.append((value.owner, "operand defined here"))
        raise OpError("is always wrong", notes)


@irdl_op_definition
class CrashOp(IRDLOperation):
    """Its verifier has a bug (raises ValueError)."""

    name = "tdiag.crash"

    def verify_(self) -> None:
        raise ValueError("boom")


@irdl_op_definition
class WarnOp(IRDLOperation):
    """Verifies; used to build warning/remark diagnostics by hand."""

    name = "tdiag.fine"
    outs = var_result_def()


TDiag = Dialect("tdiag", [NoteOp, CrashOp, WarnOp])


def make_ctx() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, test.Test, func.Func, arith.Arith, TDiag):
        ctx.load_dialect(dialect)
    return ctx


CTX = make_ctx()


def parse(text: str, filename: str = "in.mlir", line_offset: int = 0) -> ModuleOp:
    return parse_module(CTX, text, filename, line_offset)


def ops_of(module: ModuleOp) -> list[Operation]:
    return list(module.walk())[1:]


def parse_error(text: str, filename: str = "in.mlir", line_offset: int = 0) -> Diagnostic:
    with pytest.raises(DiagnosticError) as info:
        parse(text, filename, line_offset)
    (diag,) = info.value.diagnostics
    assert diag.severity == "error"
    return diag


def diagnostics_of(text: str, filename: str = "in.mlir", line_offset: int = 0):
    """What the CLI does for one input: parse errors, else verifier errors."""
    try:
        module = parse(text, filename, line_offset)
    except DiagnosticError as err:
        return err.diagnostics
    return verify_module(module)


def verify_diagnostics(text: str, filename: str = "in.mlir") -> list[Diagnostic]:
    """--split-input-file --verify-diagnostics over a whole file."""
    failures: list[Diagnostic] = []
    for chunk, offset in split_input_file(text):
        failures += check_expected(
            diagnostics_of(chunk, filename, offset), chunk, filename, offset
        )
    return failures


# --------------------------------------------------------------------------- #
# located parser
# --------------------------------------------------------------------------- #


def test_op_locations_are_at_the_op_name():
    text = (
        "// a comment line\n"
        '%0 = "test.op"() : () -> i32\n'
        '  "test.op"(%0) : (i32) -> ()\n'
        "\n"
        "    %a, %b = \"test.op\"() : () -> (i32, i32)\n"
        "%c = arith.addi %a, %b : i32\n"
        "func.func @f() {\n"
        "  func.return\n"
        "}\n"
    )
    ops = ops_of(parse(text, "x.mlir"))
    # At the op's name token, as mlir-opt: the quote of a generic op's name.
    assert [(op.name, op_location(op)) for op in ops] == [
        ("test.op", ("x.mlir", 2, 6)),
        ("test.op", ("x.mlir", 3, 3)),
        ("test.op", ("x.mlir", 5, 14)),
        ("arith.addi", ("x.mlir", 6, 6)),
        ("func.func", ("x.mlir", 7, 1)),
        ("func.return", ("x.mlir", 8, 3)),
    ]
    assert all(isinstance(op.location, FileLineColLoc) for op in ops)


def test_explicit_loc_is_kept():
    text = (
        '%0 = "test.op"() : () -> i32 loc("other.mlir":40:2)\n'
        '%1 = arith.constant 1 : i32 loc("y.mlir":7:9)\n'
        '"test.op"() : () -> () loc(unknown)\n'
        '"test.op"() : () -> ()\n'
    )
    a, b, c, d = ops_of(parse(text))
    assert op_location(a) == ("other.mlir", 40, 2)
    assert op_location(b) == ("y.mlir", 7, 9)
    assert isinstance(c.location, UnknownLoc) and op_location(c) is None
    assert op_location(d) == ("in.mlir", 4, 1)


def test_block_argument_locations():
    text = (
        "func.func @f(%a: i32, %b: i32 loc(\"z\":1:2)) {\n"
        '  "test.op"() [^bb1] : () -> ()\n'
        "^bb1(%q: i64):\n"
        "  func.return\n"
        "}\n"
    )
    (f, _, _) = ops_of(parse(text))
    entry, second = f.regions[0].blocks
    locs = [arg.location for arg in (*entry.args, *second.args)]
    assert locs == [
        FileLineColLoc(StringAttr("in.mlir"), IntAttr(1), IntAttr(14)),
        FileLineColLoc(StringAttr("z"), IntAttr(1), IntAttr(2)),
        FileLineColLoc(StringAttr("in.mlir"), IntAttr(3), IntAttr(6)),
    ]


def test_line_offset_shifts_lines_only():
    module = parse('\n  "test.op"() : () -> ()\n', "big.mlir", line_offset=10)
    (op,) = ops_of(module)
    assert op_location(op) == ("big.mlir", 12, 3)


def test_located_parser_directly():
    parser = LocatedParser(CTX, '"test.op"() : () -> ()', "p.mlir", line_offset=3)
    op = parser.parse_op()
    assert op_location(op) == ("p.mlir", 4, 1)


def test_implicit_and_explicit_module():
    implicit = parse('\n"test.op"() : () -> ()\n"test.op"() : () -> ()\n')
    assert isinstance(implicit, ModuleOp)
    assert len(list(implicit.body.block.ops)) == 2
    assert op_location(implicit) == ("in.mlir", 2, 1)  # its first op

    explicit = parse('builtin.module {\n  "test.op"() : () -> ()\n}\n')
    assert op_location(explicit) == ("in.mlir", 1, 1)
    assert len(list(explicit.body.block.ops)) == 1

    two = parse("builtin.module {\n}\nbuiltin.module {\n}\n")
    assert [type(op) for op in two.body.block.ops] == [ModuleOp, ModuleOp]


@pytest.mark.parametrize("text", ["", "\n\n", "// nothing here\n"])
def test_empty_input_is_an_empty_module(text: str):
    module = parse(text)
    assert list(module.body.block.ops) == []
    assert verify_module(module) == []


def test_printing_does_not_show_locations():
    module = parse('%0 = "test.op"() : () -> i32\n')
    assert "loc" not in str(module)


# --------------------------------------------------------------------------- #
# split input
# --------------------------------------------------------------------------- #


def test_split_input_file_offsets():
    text = "a\nb\n// -----\nc\n\n// -----\nd\n  // -----\ne"
    chunks = split_input_file(text)
    assert chunks == [("a\nb\n", 0), ("c\n\n", 3), ("d\n", 6), ("e", 8)]
    lines = text.split("\n")
    for chunk, offset in chunks:
        for n, line in enumerate(chunk.split("\n")):
            if line:
                assert lines[offset + n] == line


def test_split_input_file_no_marker_and_near_miss():
    assert split_input_file("x\ny\n") == [("x\ny\n", 0)]
    assert split_input_file("x\n// ------\ny\n") == [("x\n// ------\ny\n", 0)]
    assert split_input_file("// -----\n") == [("", 0), ("", 1)]


def test_parse_error_in_second_chunk_reports_original_line():
    text = (
        '"test.op"() : () -> ()\n'  # 1
        "// -----\n"  # 2
        "\n"  # 3
        '%0 = "test.op"() : () -> i32\n'  # 4
        '"test.op"(%0) : (i32) -> () )\n'  # 5: stray ')'
    )
    (_, (chunk, offset)) = split_input_file(text)
    diag = parse_error(chunk, "s.mlir", offset)
    assert diag.loc is not None
    assert diag.loc[:2] == ("s.mlir", 5)
    assert diag.loc[2] == len('"test.op"(%0) : (i32) -> () ') + 1


def test_parse_error_on_bad_token_line_3():
    text = '"test.op"() : () -> ()\n"test.op"() : () -> ()\n"test.op"() : () -> $\n'
    diag = parse_error(text)
    assert diag.loc == ("in.mlir", 3, 21)


def test_undefined_value_reported_at_use():
    text = '%a = "test.op"() : () -> i32\n"test.op"(%zz, %a) : (i32, i32) -> ()\n'
    diag = parse_error(text)
    assert diag.loc == ("in.mlir", 2, 11)
    assert "%zz" in diag.message


def test_forward_reference_does_not_hide_later_syntax_error():
    text = '"test.op"(%later) : (i32) -> ()\n"test.op"( : () -> ()\n%later = "test.op"() : () -> i32\n'
    diag = parse_error(text)
    assert diag.loc is not None and diag.loc[1] == 2
    assert "undeclared" not in diag.message


def test_unknown_op_reported_at_name():
    diag = parse_error("\n%0 = foo.bar\n")
    assert diag.loc == ("in.mlir", 2, 6)
    assert "foo.bar" in diag.message


def test_error_at_end_of_input_points_at_last_line():
    diag = parse_error('"test.op"() : () ->\n\n\n')
    assert diag.loc is not None and diag.loc[1] == 1


# --------------------------------------------------------------------------- #
# robustness: bytes, deep nesting, exceptions from xDSL
# --------------------------------------------------------------------------- #


def test_decode_source_ok():
    assert decode_source("π = 3\n".encode(), "u.mlir") == "π = 3\n"


def test_decode_source_bad_utf8():
    with pytest.raises(DiagnosticError) as info:
        decode_source(b"ok\nab\xffcd\n", "u.mlir")
    (diag,) = info.value.diagnostics
    assert diag.message == "input is not valid UTF-8 (byte 0xff at offset 5)"
    assert diag.loc == ("u.mlir", 2, 3)
    assert render(diag) == (
        "u.mlir:2:3: error: input is not valid UTF-8 (byte 0xff at offset 5)\n"
    )


def test_deep_nesting_is_a_diagnostic():
    depth = 5000
    text = '"test.op"() ({\n' * depth + '"test.op"() : () -> ()\n' + "}) : () -> ()\n" * depth
    diag = parse_error(text, "deep.mlir")
    assert "nesting too deep" in diag.message
    assert diag.loc is not None and diag.loc[0] == "deep.mlir"
    # The rendering works too (no recursion there).
    assert render(diag, {"deep.mlir": text}).startswith("deep.mlir:")


def test_moderate_nesting_parses_and_verifies():
    depth = 40
    text = '"test.op"() ({\n' * depth + '"test.op"() : () -> ()\n' + "}) : () -> ()\n" * depth
    module = parse(text)
    assert len(list(module.walk())) == depth + 2
    verify_module(module)  # must not raise


@pytest.mark.parametrize(
    "text",
    [
        "%0 = arith.constant 1 : i32\n%0 = arith.constant 2 : i32\n",
        '"test.op"() : () -> i32 loc(\n',
        "func.func @f(\n",
        "%0 = arith.constant 99999999999999999999999999 : i8\n",
        '"test.op"() {a = dense<[1, 2]> : tensor<3xi32>} : () -> ()\n',
        '"test.op"() <{a = #builtin.int<"x">}> : () -> ()\n',
        "\x00\x01\x02",
        "}}}}",
        "%",
        '"',
        "// just a comment\n)",
    ],
)
def test_bad_input_never_raises_anything_else(text: str):
    with pytest.raises(DiagnosticError) as info:
        parse(text)
    assert info.value.diagnostics and info.value.diagnostics[0].severity == "error"
    render_all(info.value.diagnostics, {"in.mlir": text})


def test_non_parse_exception_becomes_diagnostic(monkeypatch: pytest.MonkeyPatch):
    def explode(*args: object, **kwargs: object):
        raise AssertionError

    monkeypatch.setattr(test.TestOp, "create", classmethod(explode))
    diag = parse_error('\n  %0 = "test.op"() : () -> i32\n')
    assert diag.loc == ("in.mlir", 2, 8)  # the op being built: its name
    assert "AssertionError" in diag.message


# --------------------------------------------------------------------------- #
# verification
# --------------------------------------------------------------------------- #


def test_verify_module_collects_every_failing_op():
    text = (
        '%a = "test.op"() : () -> i32\n'  # 1
        '%b = "test.op"() : () -> i64\n'  # 2
        '%c = "arith.addi"(%a, %b) : (i32, i64) -> i32\n'  # 3
        '"tdiag.noted"(%a, %b) : (i32, i64) -> ()\n'  # 4
        '"tdiag.crash"() : () -> ()\n'  # 5
        '"tdiag.fine"() : () -> ()\n'  # 6
    )
    diags = verify_module(parse(text))
    assert [d.loc for d in diags] == [
        ("in.mlir", 3, 6),
        ("in.mlir", 4, 1),
        ("in.mlir", 5, 1),
    ]
    addi, noted, crash = diags
    assert addi.message.startswith("'arith.addi' op operand 'rhs'")
    assert "\n\n" not in addi.message  # xDSL's __notes__ IR dump is ignored
    assert noted.message == "'tdiag.noted' op is always wrong"
    assert [(n.severity, n.message, n.loc) for n in noted.notes] == [
        ("note", "operand defined here", ("in.mlir", 1, 6)),
        ("note", "operand defined here", ("in.mlir", 2, 6)),
    ]
    assert crash.message == "'tdiag.crash' op verifier failed with ValueError: boom"
    assert all(d.severity == "error" for d in diags)


def test_verify_module_leaves_ops_untouched_and_is_fast():
    lines: list[str] = []
    for i in range(1500):
        lines.append(f'%v{i} = "test.op"() : () -> i32')
        if i % 10 == 0:
            lines.append(f'"tdiag.noted"(%v{i}) : (i32) -> ()')
    module = parse("\n".join(lines) + "\n")
    start = time.perf_counter()
    diags = verify_module(module)
    assert len(diags) == 150
    # xDSL's per-error dump of the whole IR (quadratic) is skipped.
    assert time.perf_counter() - start < 2.0
    assert all("emit_error" not in vars(op) for op in module.walk())
    # Verifying directly still works as xDSL intends.
    noted = next(op for op in module.walk() if isinstance(op, NoteOp))
    with pytest.raises(OpError) as info:
        noted.verify()
    assert info.value.__notes__  # xDSL's IR dump is there when not via fetchc


def test_verify_module_preorder_one_error_per_op():
    text = (
        '"test.op"() ({\n'
        '  "tdiag.crash"() : () -> ()\n'
        '  "test.op"() ({\n'
        '    "tdiag.noted"() : () -> ()\n'
        "  }) : () -> ()\n"
        '}) : () -> ()\n'
        '"tdiag.crash"() : () -> ()\n'
    )
    diags = verify_module(parse(text))
    crashes = [(d.loc, d.message.split(" op ")[0]) for d in diags if "tdiag" in d.message]
    assert crashes == [
        (("in.mlir", 2, 3), "'tdiag.crash'"),
        (("in.mlir", 4, 5), "'tdiag.noted'"),
        (("in.mlir", 7, 1), "'tdiag.crash'"),
    ]
    assert len({d.loc for d in diags}) == len(diags)


def test_verify_module_unlocated_op():
    op = CrashOp()
    module = ModuleOp([op])
    (diag,) = verify_module(module)
    assert diag.loc is None and diag.op is op
    assert render(diag) == "module, op 0 'tdiag.crash': error: 'tdiag.crash' op verifier failed with ValueError: boom\n"


def test_op_error_prefix_and_notes():
    a, b = ops_of(parse('%0 = "test.op"() : () -> i32\n  "test.op"(%0) : (i32) -> ()\n'))
    diag = op_error(b, "is bad", [(a, "see this")])
    assert diag == Diagnostic(
        "error",
        "'test.op' op is bad",
        ("in.mlir", 2, 3),
        [Diagnostic("note", "see this", ("in.mlir", 1, 6), [])],
    )
    assert diag.op is b and diag.notes[0].op is a
    assert diag.location is b.location


# --------------------------------------------------------------------------- #
# rendering
# --------------------------------------------------------------------------- #

RENDER_SOURCE = (
    "func.func @f() {\n"  # 1
    '  %d = "test.op"() : () -> i32\n'  # 2
    "\n"  # 3
    '  %f = "test.op"(%d) : (i32) -> i64\n'  # 4
    "}\n"
)


def test_render_exact_format():
    diag = Diagnostic(
        "error",
        "'test.op' op message",
        ("in.mlir", 4, 3),
        [Diagnostic("note", "message", ("in.mlir", 2, 3), [])],
    )
    assert render(diag, {"in.mlir": RENDER_SOURCE}) == (
        "in.mlir:4:3: error: 'test.op' op message\n"
        '  %f = "test.op"(%d) : (i32) -> i64\n'
        "  ^\n"
        "in.mlir:2:3: note: message\n"
        '  %d = "test.op"() : () -> i32\n'
        "  ^\n"
    )


def test_render_from_parsed_and_verified_ops():
    text = '%d = "test.op"() : () -> i32\n  "tdiag.noted"(%d) : (i32) -> ()\n'
    sources = SourceManager()
    sources.add("v.mlir", text)
    (diag,) = verify_module(parse(text, "v.mlir"))
    assert render(diag, sources) == (
        "v.mlir:2:3: error: 'tdiag.noted' op is always wrong\n"
        '  "tdiag.noted"(%d) : (i32) -> ()\n'
        "  ^\n"
        "v.mlir:1:6: note: operand defined here\n"
        '%d = "test.op"() : () -> i32\n'
        "     ^\n"
    )


def test_render_unlocated_file_only_and_stdin():
    assert render(Diagnostic("error", "msg", None)) == "error: msg\n"
    assert render(Diagnostic("warning", "msg", ("in.mlir", 0, 0))) == "in.mlir: warning: msg\n"
    assert render(Diagnostic("remark", "r", ("-", 1, 2)), {"-": "abc\n"}) == (
        "<stdin>:1:2: remark: r\nabc\n ^\n"
    )
    sources = SourceManager({"<stdin>": "xyz\n"})
    assert render(Diagnostic("error", "e", ("-", 1, 3)), sources) == "<stdin>:1:3: error: e\nxyz\n  ^\n"


def test_render_without_source_or_line():
    diag = Diagnostic("error", "gone", ("missing.mlir", 3, 4))
    assert render(diag, {}) == "missing.mlir:3:4: error: gone\n"
    assert render(Diagnostic("error", "m", ("in.mlir", 99, 1)), {"in.mlir": "a\n"}) == (
        "in.mlir:99:1: error: m\n"
    )


def test_render_note_at_same_location_omits_source():
    diag = Diagnostic(
        "error", "e", ("in.mlir", 2, 3), [Diagnostic("note", "n", ("in.mlir", 2, 3))]
    )
    assert render(diag, {"in.mlir": RENDER_SOURCE}) == (
        "in.mlir:2:3: error: e\n"
        '  %d = "test.op"() : () -> i32\n'
        "  ^\n"
        "in.mlir:2:3: note: n\n"
    )


def test_render_expands_tabs():
    diag = Diagnostic("error", "t", ("in.mlir", 1, 3))
    assert render(diag, {"in.mlir": "\tx\ty\n"}) == "in.mlir:1:3: error: t\n        x       y\n         ^\n"


def test_render_crlf_source():
    diag = Diagnostic("error", "t", ("in.mlir", 1, 1))
    assert render(diag, {"in.mlir": "abc\r\ndef\r\n"}) == "in.mlir:1:1: error: t\nabc\n^\n"


def test_diagnostic_error_str_and_bad_severity():
    err = DiagnosticError(Diagnostic("error", "x", ("a", 1, 2), [Diagnostic("note", "y")]))
    assert str(err) == "a:1:2: error: x\nnote: y"
    with pytest.raises(ValueError):
        Diagnostic("fatal", "x")


# --------------------------------------------------------------------------- #
# --verify-diagnostics
# --------------------------------------------------------------------------- #


def messages(failures: list[Diagnostic]) -> list[tuple[str, int | None, str]]:
    return [(d.severity, d.loc[1] if d.loc else None, d.message) for d in failures]


def test_expected_matched_same_line():
    text = '"tdiag.crash"() : () -> () // expected-error {{verifier failed with ValueError}}\n'
    assert verify_diagnostics(text) == []


def test_expected_substring_includes_op_prefix():
    text = "// expected-error@+1 {{'tdiag.crash' op verifier}}\n\"tdiag.crash\"() : () -> ()\n"
    assert verify_diagnostics(text) == []


def test_expected_missing():
    text = '"tdiag.fine"() : () -> ()\n// expected-error@-1 {{never said}}\n'
    failures = verify_diagnostics(text)
    assert messages(failures) == [("error", 2, 'expected error "never said" was not produced')]
    assert failures[0].loc == ("in.mlir", 2, 4)


def test_unexpected_error():
    text = '"tdiag.fine"() : () -> ()\n  "tdiag.crash"() : () -> ()\n'
    failures = verify_diagnostics(text)
    assert messages(failures) == [
        ("error", 2, "unexpected error: 'tdiag.crash' op verifier failed with ValueError: boom")
    ]
    assert failures[0].loc == ("in.mlir", 2, 3)


def test_wrong_line_is_both_missing_and_unexpected():
    text = '// expected-error@+2 {{boom}}\n"tdiag.crash"() : () -> ()\n\n'
    assert messages(verify_diagnostics(text)) == [
        ("error", 2, "unexpected error: 'tdiag.crash' op verifier failed with ValueError: boom"),
        ("error", 1, 'expected error "boom" was not produced'),
    ]


def test_plus_minus_designators():
    text = (
        "// expected-error@+1 {{boom}}\n"
        '"tdiag.crash"() : () -> ()\n'
        '"tdiag.crash"() : () -> ()\n'
        "\n"
        "// expected-error@-2 {{boom}}\n"
    )
    assert verify_diagnostics(text) == []


def test_above_and_below_skip_designator_lines():
    text = (
        "// expected-note@below {{operand defined here}}\n"  # 1 -> 3
        "// expected-remark@below {{unrelated}}\n"  # 2 -> 3
        '%a = "test.op"() : () -> i32\n'  # 3
        '"tdiag.noted"(%a) : (i32) -> ()\n'  # 4
        "// expected-remark@above {{nothing}}\n"  # 5 -> 4
        "// expected-error@above {{always wrong}}\n"  # 6 -> 4
        "// expected-error@below {{boom}}\n"  # 7 -> 8
        '"tdiag.crash"() : () -> ()\n'  # 8
    )
    assert messages(verify_diagnostics(text)) == [
        ("error", 2, 'expected remark "unrelated" was not produced'),
        ("error", 5, 'expected remark "nothing" was not produced'),
    ]


def test_notes_are_checked():
    text = (
        '%a = "test.op"() : () -> i32 // expected-note {{operand defined here}}\n'
        '"tdiag.noted"(%a) : (i32) -> () // expected-error {{always wrong}}\n'
    )
    assert verify_diagnostics(text) == []

    unexpected_note = (
        '%a = "test.op"() : () -> i32\n'
        '"tdiag.noted"(%a) : (i32) -> () // expected-error {{always wrong}}\n'
    )
    assert messages(verify_diagnostics(unexpected_note)) == [
        ("error", 1, "unexpected note: operand defined here")
    ]


def test_multiple_expectations_on_one_line():
    text = (
        '%a = "test.op"() : () -> i32\n'
        '"tdiag.noted"(%a, %a) : (i32, i32) -> ()\n'
        "// expected-note@-2 {{operand defined here}}\n"
        "// expected-note@-3 {{operand defined here}}\n"
        "// expected-error@-3 {{always wrong}}\n"
    )
    assert verify_diagnostics(text) == []

    three = text + "// expected-note@-5 {{operand defined here}}\n"
    assert messages(verify_diagnostics(three)) == [
        ("error", 6, 'expected note "operand defined here" was not produced')
    ]


def test_extra_identical_diagnostic_matches_already_matched_expectation():
    # As in MLIR: one expectation accepts several identical diagnostics.
    module_diags = [
        Diagnostic("error", "dup", ("in.mlir", 1, 1)),
        Diagnostic("error", "dup", ("in.mlir", 1, 5)),
    ]
    assert check_expected(module_diags, "x // expected-error {{dup}}\n", "in.mlir") == []


def test_severity_mismatch_is_near_miss():
    diags = [Diagnostic("warning", "careful", ("in.mlir", 1, 1))]
    failures = check_expected(diags, "x // expected-error {{careful}}\n", "in.mlir")
    assert messages(failures) == [
        ("error", 1, "'warning' diagnostic emitted when expecting a 'error'"),
        ("error", 1, 'expected error "careful" was not produced'),
    ]
    ok = check_expected(diags, "x // expected-warning {{careful}}\n", "in.mlir")
    assert ok == []
    remark = [Diagnostic("remark", "fyi", ("in.mlir", 2, 1))]
    assert check_expected(remark, "\ny // expected-remark {{fyi}}", "in.mlir") == []


def test_designator_outside_the_input():
    text = '// expected-error@-3 {{boom}}\n"tdiag.crash"() : () -> ()\n'
    failures = verify_diagnostics(text)
    assert failures[-1].loc == ("in.mlir", 1, 4)
    assert failures[-1].message.startswith('expected error "boom" was not produced')
    assert "outside the input" in failures[-1].message

    dangling = "x\n// expected-error@below {{boom}}\n"
    (failure,) = check_expected([], dangling, "in.mlir")
    assert failure.message.startswith('expected error "boom" was not produced')
    assert "no line follows" in failure.message

    far = "x\n// expected-error@+5 {{boom}}\n"
    (failure,) = check_expected([], far, "in.mlir")
    assert "outside the input (lines 1-2)" in failure.message


def test_unlocated_diagnostics_are_unexpected_unless_at_unknown():
    diags = [Diagnostic("error", "nowhere", None)]
    text = "// expected-error {{nowhere}}\n"
    assert messages(check_expected(diags, text, "in.mlir")) == [
        ("error", None, "unexpected error: nowhere"),
        ("error", 1, 'expected error "nowhere" was not produced'),
    ]
    assert check_expected(diags, "// expected-error@unknown {{nowhere}}\n", "in.mlir") == []


def test_diagnostic_in_other_file_is_unexpected():
    diags = [Diagnostic("error", "elsewhere", ("other.mlir", 1, 1))]
    text = "// expected-error {{elsewhere}}\n"
    assert len(check_expected(diags, text, "in.mlir")) == 2


def test_regex_form():
    diags = [Diagnostic("error", "needs 9 sequencer entries, but the table holds 8", ("in.mlir", 1, 1))]
    good = "x // expected-error-re {{needs {{[0-9]+}} sequencer entries}}\n"
    assert check_expected(diags, good, "in.mlir") == []
    # Without -re the content is a plain substring: '{{' has no meaning.
    plain = "x // expected-error {{needs {{[0-9]+}} sequencer}}\n"
    assert len(check_expected(diags, plain, "in.mlir")) == 2
    # Literal parts of a -re pattern are escaped.
    dots = "x // expected-error-re {{but the table holds {{.}}}}\n"
    assert check_expected(diags, dots, "in.mlir") == []
    bad = "x // expected-error-re {{a {{[}}}}\n"
    failures = check_expected(diags, bad, "in.mlir")
    assert failures[0].message.startswith("invalid regex")
    unterminated = "x // expected-error-re {{a {{b}}\n"
    assert check_expected(diags, unterminated, "in.mlir")[0].message == (
        "found start of regex with no end '}}'"
    )


def test_not_an_expectation_when_text_follows():
    # MLIR's pattern requires the {{...}} to end the line.
    diags = [Diagnostic("error", "boom", ("in.mlir", 1, 1))]
    text = "x // expected-error {{boom}} trailing\n"
    assert messages(check_expected(diags, text, "in.mlir")) == [
        ("error", 1, "unexpected error: boom")
    ]


def test_split_file_verify_diagnostics_and_parse_errors():
    text = (
        '"tdiag.crash"() : () -> ()  // expected-error {{boom}}\n'  # 1
        "// -----\n"  # 2
        "// expected-error@+1 {{Operation foo.bar is not registered}}\n"  # 3
        "%0 = foo.bar\n"  # 4
        "// -----\n"  # 5
        '"tdiag.fine"() : () -> ()\n'  # 6
        "// -----\n"  # 7
        "// expected-error@+1 {{use of undeclared SSA value name %x}}\n"  # 8
        '"test.op"(%x) : (i32) -> ()\n'  # 9
    )
    assert verify_diagnostics(text, "split.mlir") == []

    broken = text.replace("// expected-error {{boom}}", "")
    failures = verify_diagnostics(broken, "split.mlir")
    assert messages(failures) == [
        ("error", 1, "unexpected error: 'tdiag.crash' op verifier failed with ValueError: boom")
    ]
    sources = {"split.mlir": broken}
    assert render_all(failures, sources) == (
        "split.mlir:1:1: error: unexpected error: 'tdiag.crash' op verifier "
        "failed with ValueError: boom\n"
        '"tdiag.crash"() : () -> ()  \n'
        "^\n"
    )


def test_expectation_failure_renders_at_comment():
    text = 'x\n    // expected-error@-1 {{nope}}\n'
    (failure,) = check_expected([], text, "in.mlir")
    assert render(failure, {"in.mlir": text}) == (
        'in.mlir:2:8: error: expected error "nope" was not produced\n'
        "    // expected-error@-1 {{nope}}\n"
        "       ^\n"
    )


def test_quoted_source_line_cannot_drive_the_terminal(tmp_path):
    """A source line quoted under a diagnostic shows terminal escapes, other
    control characters and bidi overrides escaped as Python writes them
    (``\\x1b``, ``\\u202e``; the caret stays under the op)."""
    import subprocess

    line = '  %x = "foo.bar"() : () -> i32 // \x1b]0;title\x07 \x1b[2J \u202e \x00 end'
    src = tmp_path / "esc.mlir"
    src.write_bytes(f"func.func @k() {{\n{line}\n}}\n".encode())
    r = subprocess.run([*FETCHC, str(src), "-o", str(tmp_path / "o.bin")],
                       capture_output=True)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert not any(c in err for c in "\x1b\x07\x00\u202e"), repr(err)
    quoted, caret = err.splitlines()[1:3]
    assert quoted == line.replace("\x1b", "\\x1b").replace("\x07", "\\x07").replace("\u202e", "\\u202e").replace("\x00", "\\x00")
    assert caret.index("^") == quoted.index('"foo.bar"')
    assert not (tmp_path / "o.bin").exists()


def test_regex_cannot_backtrack_for_minutes():
    """``{{(.*)*(.*)*...X}}`` would make Python's backtracking ``re`` run for
    minutes on a long message.  The pattern is matched by an
    automaton (fetchc/frontend/ere.py): the same answer as a non-backtracking
    reference, at once.  (No timed assertion: the test would hang before.)"""
    message = "a" * 3000
    diags = [Diagnostic("error", message, ("in.mlir", 1, 1))]
    text = "x // expected-error-re {{{{(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*X}}}}\n"
    failures = check_expected(diags, text, "in.mlir")
    assert [f.message for f in failures] == [
        f"unexpected error: {message}",
        'expected error "{{(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*X}}" was not produced',
    ]
    hit = "x // expected-error-re {{{{(a|aa)*$}}}}\n"
    assert check_expected(diags, hit, "in.mlir") == []


@pytest.mark.parametrize(
    "block,message,matches",
    [
        ("[[:alpha:]]+ [[:digit:]]{2} e", "needs 12 entries", True),
        ("^[[:upper:]]", "needs", False),
        ("[[:space:]][[:punct:]]", "a ;", True),
        ("[^[:alnum:]]x", "ax", False),
        ("(never|not) used", "is never used", True),
        ("a{2,3}b", "aab", True),
        ("a{4}x", "aaax", False),
        ("[]x]", "]", True),
        ("x\\.y", "x.y", True),
        ("x\\.y", "xzy", False),
    ],
)
def test_regex_is_posix_extended(block, message, matches):
    """MLIR reads the blocks as POSIX ERE (llvm::Regex): POSIX classes
    (which Python's re took for nested sets, with a FutureWarning), counted
    repetitions, bracket rules.  (A block ends at the first '}}', in MLIR
    too: a count is not written last.)"""
    import warnings

    diags = [Diagnostic("error", message, ("in.mlir", 1, 1))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning fails the test
        failures = check_expected(diags, f"x // expected-error-re {{{{{{{{{block}}}}}}}}}\n", "in.mlir")
    assert (failures == []) == matches, failures


@pytest.mark.parametrize(
    "block,reason",
    [
        ("[[:bogus:]]", "invalid character class"),
        ("(a", "parentheses not balanced"),
        ("a)", "parentheses not balanced"),
        ("*a", "repetition-operator operand invalid"),
        ("a{256}q", "invalid repetition count(s)"),
        ("a{3,2}q", "invalid repetition count(s)"),
        ("[z-a]", "invalid character range"),
        ("[a", "brackets ([ ]) not balanced"),
        ("(x{1,255}){1,255}q", "regular expression too big"),
    ],
)
def test_regex_errors_are_llvm_s(block, reason):
    diags = [Diagnostic("error", "m", ("in.mlir", 1, 1))]
    failures = check_expected(diags, f"x // expected-error-re {{{{m{{{{{block}}}}}}}}}\n", "in.mlir")
    assert failures[0].message == f"invalid regex: {reason}"


def test_cli_verify_diagnostics_regex_is_bounded_and_warning_free(tmp_path):
    """Through the command line: no FutureWarning on stderr, the answer at once."""
    import subprocess
    import sys

    src = tmp_path / "e.mlir"
    src.write_text(
        "func.func @k(%a: memref<64x16xf8E4M3FN>, %o: memref<64x16xbf16>) {\n"
        "  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>\n"
        "  // expected-error-re @+1 {{{{[[:alpha:]]+}} has no f8E4M3FN -> bf16 cast{{(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*$}}}}\n"
        "  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], bf16>\n"
        "  rngd.commit %c, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>\n"
        "  func.return\n}\n"
    )
    r = subprocess.run([sys.executable, "-W", "error::FutureWarning", "-m", "fetchc.cli", str(src),
                        "--verify-diagnostics"], capture_output=True, text=True, check=False)
    assert r.returncode == 0 and r.stderr == "", r.stderr
