"""MLIR locations and line endings (ir.md §5).

* every location form MLIR prints parses into the attribute MLIR builds;
  ``#loc`` aliases may be used before their top-level definition;
* diagnostics are shown where ``mlir-opt`` shows them (the first
  ``FileLineColLoc`` in pre-order), with ``called from`` / ``fused with this
  location`` context notes that ``--verify-diagnostics`` does not match;
* in-memory ops without a file location are shown at their op path;
* ``\\n``, ``\\r\\n`` and a lone ``\\r`` each end one line.

The expected values are written out by hand from MLIR's rules (its
``LocationParser.cpp`` grammar and ``SourceMgrDiagnosticHandler``), not
computed with fetchc's helpers.
"""

from __future__ import annotations

import os

import pytest
from xdsl.dialects import func, test
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
    i64,
)
from xdsl.ir import Block, Region
from xdsl.utils.mlir_lexer import MLIRLexer

import fetchc
from fetchc.diagnostics import (
    Diagnostic,
    DiagnosticError,
    SourceManager,
    check_expected,
    render,
    render_all,
    verify_module,
)
from fetchc.frontend import locations as diag_mod
from fetchc.frontend import render as render_mod
from fetchc.frontend.context import make_context
from fetchc.diagnostics import op_path
from fetchc.frontend.locations import LineIndex, location_notes, location_of
from fetchc.frontend.parsing import parse_module, split_input_file
from fetchc.frontend.located_parser import LocatedParser
from served import FETCHC

CTX = make_context()


def fl(name: str, line: int, col: int) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(name), IntAttr(line), IntAttr(col))


def parse(text: str, filename: str = "in.mlir") -> ModuleOp:
    return parse_module(CTX, text, filename)


def parse_error(text: str, filename: str = "in.mlir") -> Diagnostic:
    with pytest.raises(DiagnosticError) as info:
        parse(text, filename)
    (diag,) = info.value.diagnostics
    return diag


def ops(module: ModuleOp):
    return list(module.walk())[1:]


# --------------------------------------------------------------------------- #
# op locations: at the name token
# --------------------------------------------------------------------------- #


def test_op_location_is_its_name_token():
    text = (
        "func.func @f(%a: memref<64x32xi8>) {\n"  # 1
        '  %x = "fetch.fetch"(%a) : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>\n'  # 2
        "    %y   =   fetch.cast %x : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i32>\n"  # 3
        "  func.return\n"  # 4
        "}\n"
    )
    f, fetch, cast, ret = ops(parse(text))
    assert location_of(f.location) == ("in.mlir", 1, 1)
    assert location_of(fetch.location) == ("in.mlir", 2, 8)  # the quote of "fetch.fetch"
    assert location_of(cast.location) == ("in.mlir", 3, 14)
    assert location_of(ret.location) == ("in.mlir", 4, 3)


def test_op_with_several_results_is_at_its_name():
    (op,) = ops(parse('%a, %b:2 = "test.op"() : () -> (i32, i32, i32)\n'))
    assert location_of(op.location) == ("in.mlir", 1, 12)


# --------------------------------------------------------------------------- #
# every location form
# --------------------------------------------------------------------------- #

CAST = (
    "func.func @k(%a: memref<64x32xi8>) {{\n"
    "  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>\n"
    "  %c = fetch.cast %s : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i32> loc({loc})\n"
    "  func.return\n"
    "}}\n"
)


def cast_location(loc: str, before: str = "", after: str = ""):
    module = parse(before + CAST.format(loc=loc) + after)
    return ops(module)[2].location


@pytest.mark.parametrize(
    "written, expected",
    [
        ('"f.py":4:7', fl("f.py", 4, 7)),
        ("unknown", UnknownLoc()),
        ('"cast_x"', NameLoc(StringAttr("cast_x"), NoneAttr())),
        ('"cast_x"("f.py":4:7)', NameLoc(StringAttr("cast_x"), fl("f.py", 4, 7))),
        ('callsite("a.py":1:2 at "b.py":3:4)', CallSiteLoc(fl("a.py", 1, 2), fl("b.py", 3, 4))),
        ('fused["a.py":1:2, unknown]', FusedLoc((fl("a.py", 1, 2), UnknownLoc()), NoneAttr())),
        ('fused<"tag">["a.py":1:2]', FusedLoc((fl("a.py", 1, 2),), StringAttr("tag"))),
        # MLIR 20's FileLineColRange: kept as its start (column 0 without one).
        ('"f.py":4:7 to 4:20', fl("f.py", 4, 7)),
        ('"f.py":4:7 to :20', fl("f.py", 4, 7)),
        ('"f.py":4', fl("f.py", 4, 0)),
    ],
)
def test_location_forms(written: str, expected):
    assert cast_location(written) == expected


def test_alias_defined_before_and_after_use():
    assert cast_location("#l", before='#l = loc("f.py":4:7)\n') == fl("f.py", 4, 7)
    assert cast_location("#l", after='#l = loc("f.py":4:7)\n') == fl("f.py", 4, 7)


def test_alias_chain_defined_after_use_in_any_order():
    after = (
        "#loc3 = loc(callsite(#loc1 at #loc2))\n"  # refers to two later aliases
        '#loc1 = loc("helper.py":20:9)\n'
        '#loc2 = loc("kernel.py":13:5)\n'
    )
    assert cast_location("#loc3", after=after) == CallSiteLoc(fl("helper.py", 20, 9), fl("kernel.py", 13, 5))


def test_alias_used_twice_and_in_block_arguments():
    text = (
        "func.func @k(%a: memref<64x32xi8> loc(#a)) {\n"
        "  func.return loc(#a)\n"
        "}\n"
        '#a = loc("f.py":1:1)\n'
    )
    f, ret = ops(parse(text))
    assert f.body.block.args[0].location == fl("f.py", 1, 1)
    assert ret.location == fl("f.py", 1, 1)


def test_debuginfo_output_of_mlir_opt_parses():
    # What `mlir-opt --mlir-print-debuginfo --mlir-print-op-generic` writes:
    # aliases both before the module and after it.
    text = (
        '#loc2 = loc("k.mlir":3:7)\n'
        '"builtin.module"() ({\n'
        '  "func.func"() <{function_type = (memref<64x32xi8>) -> (), sym_name = "k"}> ({\n'
        "  ^bb0(%arg0: memref<64x32xi8> loc(\"k.mlir\":3:7)):\n"
        '    "func.return"() : () -> () loc(#loc4)\n'
        "  }) : () -> () loc(#loc1)\n"
        "}) : () -> () loc(#loc)\n"
        "#loc = loc(unknown)\n"
        '#loc1 = loc("k.mlir":2:1)\n'
        '#loc3 = loc("k.mlir":4:3)\n'
        '#loc4 = loc("name"(#loc3))\n'
    )
    module = parse(text)
    f, ret = ops(module)
    assert isinstance(module.location, UnknownLoc)
    assert f.location == fl("k.mlir", 2, 1)
    assert ret.location == NameLoc(StringAttr("name"), fl("k.mlir", 4, 3))


def test_alias_cycle_is_an_error_at_the_definition():
    diag = parse_error(CAST.format(loc="#a") + "#a = loc(#b)\n#b = loc(#a)\n")
    assert diag.message == "location alias '#a' is defined in terms of itself"
    assert diag.loc == ("in.mlir", 7, 10)


def test_undefined_alias_is_still_an_error():
    diag = parse_error(CAST.format(loc="#nowhere"))
    assert "undefined symbol alias '#nowhere'" in diag.message
    assert diag.loc is not None and diag.loc[1] == 3


def test_non_location_alias_in_loc_is_an_error():
    diag = parse_error(CAST.format(loc="#n") + "#n = 7 : i64\n")
    assert "undefined symbol alias '#n'" in diag.message  # only loc aliases may come later
    diag = parse_error("#n = 7 : i64\n" + CAST.format(loc="#n"))
    assert diag.message.startswith("expected location attribute, but got")
    assert diag.loc is not None and diag.loc[1] == 4


def test_a_non_location_alias_may_not_be_used_before_its_definition():
    text = (
        "func.func @k(%a: !t) {\n"
        "  func.return\n"
        "}\n"
        "!t = memref<64x32xi8>\n"
    )
    assert "undefined symbol alias '!t'" in parse_error(text).message


def test_redefined_location_alias_is_an_error():
    diag = parse_error(CAST.format(loc="#a") + '#a = loc("x":1:1)\n#a = loc("y":1:1)\n')
    assert "re-declaration of alias '#a'" in diag.message
    assert diag.loc is not None and diag.loc[1] == 7


@pytest.mark.parametrize(
    "written, message",
    [
        ("bogus", "expected location instance"),
        ('callsite("a":1:1 "b":1:1)', "Expected 'at' in callsite location"),
        ('fused<"t" ["a":1:1]', "Expected '>' after fused location metadata"),
        ('"f":x', "Expected integer literal"),
        ('"f":1:2 to 3', "Expected ':' after `to` in FileLineColRange"),
    ],
)
def test_malformed_locations(written: str, message: str):
    diag = parse_error(CAST.format(loc=written))
    assert message in diag.message
    assert diag.loc is not None and diag.loc[1] == 3


# --------------------------------------------------------------------------- #
# where a diagnostic is shown, and its context notes
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "loc, shown",
    [
        (fl("a", 1, 2), ("a", 1, 2)),
        (UnknownLoc(), None),
        (NameLoc(StringAttr("n"), NoneAttr()), None),
        (NameLoc(StringAttr("n"), fl("a", 1, 2)), ("a", 1, 2)),
        # The callee first; a callee without a file position: the caller
        # (mlir-opt's findInstanceOf<FileLineColLoc> is a pre-order walk).
        (CallSiteLoc(fl("a", 1, 2), fl("b", 3, 4)), ("a", 1, 2)),
        (CallSiteLoc(NameLoc(StringAttr("n"), NoneAttr()), fl("b", 3, 4)), ("b", 3, 4)),
        (FusedLoc((UnknownLoc(), fl("b", 3, 4), fl("c", 5, 6)), NoneAttr()), ("b", 3, 4)),
        (FusedLoc((UnknownLoc(),), StringAttr("m")), None),
    ],
)
def test_location_of_follows_mlir(loc, shown):
    assert location_of(loc) == shown


def test_call_stack_notes():
    loc = CallSiteLoc(
        NameLoc(StringAttr("inner"), fl("h.py", 30, 1)),
        CallSiteLoc(fl("h.py", 20, 9), fl("k.py", 13, 5)),
    )
    assert location_of(loc) == ("h.py", 30, 1)
    assert [(n.message, n.loc) for n in location_notes(loc)] == [
        ("called from", ("h.py", 20, 9)),
        ("called from", ("k.py", 13, 5)),
    ]


def test_call_stack_is_limited():
    loc = fl("f", 100, 1)
    for line in range(99, 0, -1):
        loc = CallSiteLoc(fl("f", line, 1), loc)
    notes = location_notes(loc)
    assert [n.loc for n in notes] == [("f", line, 1) for line in range(2, 12)]  # 10 callers


def test_fused_notes_skip_unknown_and_duplicates():
    loc = FusedLoc(
        (UnknownLoc(), fl("a", 1, 1), NameLoc(StringAttr("x"), fl("b", 2, 2)), fl("a", 1, 1), fl("c", 3, 3)),
        StringAttr("tag"),
    )
    assert [(n.message, n.loc) for n in location_notes(loc)] == [
        ("fused with this location", ("b", 2, 2)),
        ("fused with this location", ("c", 3, 3)),
    ]


def test_render_shows_context_notes_and_their_source_lines():
    text = 'func.func @k() {\n  func.return loc(callsite("in.mlir":1:1 at "in.mlir":2:3))\n}\n'
    (_, ret) = ops(parse(text))
    diag = diag_mod.op_error(ret, "is odd")
    assert render(diag, {"in.mlir": text}) == (
        "in.mlir:1:1: error: 'func.return' op is odd\n"
        "func.func @k() {\n"
        "^\n"
        "in.mlir:2:3: note: called from\n"
        '  func.return loc(callsite("in.mlir":1:1 at "in.mlir":2:3))\n'
        "  ^\n"
    )


def test_verify_diagnostics_ignores_context_notes():
    # As MLIR: `called from` is printed, not matched.
    text = (
        "func.func @k() {\n"
        '  // expected-error@+1 {{is odd}}\n'
        '  func.return loc(callsite("in.mlir":3:3 at "in.mlir":5:1))\n'
        "}\n"
        "// the caller's line\n"
    )
    (_, ret) = ops(parse(text))
    diag = diag_mod.op_error(ret, "is odd")
    assert check_expected([diag], text, "in.mlir") == []


# --------------------------------------------------------------------------- #
# in-memory modules: op paths and builder locations
# --------------------------------------------------------------------------- #


def _module_with_nested_ops():
    inner = func.ReturnOp()
    nested = func.FuncOp("inner_fn", ((), ()), Region(Block([inner])))
    two_blocks = Region([Block([func.ReturnOp()]), Block([func.ReturnOp()])])
    multi = ModuleOp(Region(Block()))
    multi_op = func.FuncOp("m", ((), ()), two_blocks)
    a, b, c = func.ReturnOp(), func.ReturnOp(), func.ReturnOp()
    k = func.FuncOp("k", ((), ()), Region(Block([a, b, c])))
    module = ModuleOp([k, multi_op, nested, multi])
    return module, k, (a, b, c), multi_op, inner


def test_op_path_format():
    module, k, (a, b, c), multi_op, inner = _module_with_nested_ops()
    assert op_path(k) == "func @k"
    assert op_path(c) == "func @k, op 2 'func.return'"
    second_block_op = list(multi_op.body.blocks[1].ops)[0]
    assert op_path(second_block_op) == "func @m, block 1, op 0 'func.return'"
    assert op_path(inner) == "func @inner_fn, op 0 'func.return'"
    assert op_path(func.ReturnOp()) == "detached op 'func.return'"


def test_op_path_without_symbols_and_with_regions():
    leaf = func.ReturnOp()
    inner = ModuleOp([leaf])
    ModuleOp([func.ReturnOp(), inner])
    assert op_path(leaf) == "module, op 1, op 0 'func.return'"
    assert op_path(inner) == "module, op 1 'builtin.module'"
    # Region and block indices appear where there is more than one.
    x, y = func.ReturnOp(), func.ReturnOp()
    two = test.TestOp(regions=[Region(Block([x])), Region([Block(), Block([func.ReturnOp(), y])])])
    ModuleOp([func.ReturnOp(), two])
    assert op_path(x) == "module, op 1, region 0, op 0 'func.return'"
    assert op_path(y) == "module, op 1, region 1, block 1, op 1 'func.return'"
    # A root that is not a module is named; a block outside any op is "block".
    z = func.ReturnOp()
    test.TestOp(regions=[Region(Block([z]))])
    assert op_path(z) == "'test.op', op 0 'func.return'"
    w = func.ReturnOp()
    Block([func.ReturnOp(), w])
    assert op_path(w) == "block, op 1 'func.return'"


def test_in_memory_error_renders_at_op_path():
    module, k, (a, b, c), _, _ = _module_with_nested_ops()
    diag = diag_mod.op_error(b, "is wrong", [(a, "see this op"), (c, "and this one")])
    assert render(diag) == (
        "func @k, op 1 'func.return': error: 'func.return' op is wrong\n"
        "func @k, op 0 'func.return': note: see this op\n"
        "func @k, op 2 'func.return': note: and this one\n"
    )
    b.location = NameLoc(StringAttr("ret"), NoneAttr())
    assert render(diag_mod.op_error(b, "x")) == "func @k, op 1 'func.return' at loc(\"ret\"): error: 'func.return' op x\n"


def test_in_memory_verifier_error_renders_at_op_path():
    from dialects.fetch import FetchOp, StreamType
    from xdsl.dialects.builtin import MemRefType, i8

    blk = Block(arg_types=[MemRefType(i8, [64, 32])])
    blk.add_ops([FetchOp(blk.args[0], StreamType("main", [64], [32], i8), base=8), func.ReturnOp()])
    module = ModuleOp([func.FuncOp("k", ((MemRefType(i8, [64, 32]),), ()), Region(blk))])
    (diag,) = verify_module(module)
    assert diag.loc is None and diag.op is list(blk.ops)[0]
    assert render_all([diag]).startswith("func @k, op 0 'fetch.fetch': error: 'fetch.fetch' op its result stream is never used")


def test_builder_file_location_shows_the_builders_source_line(tmp_path, monkeypatch):
    from dialects.fetch import FetchOp, StreamType
    from xdsl.dialects.builtin import MemRefType, i8

    (tmp_path / "model.py").write_text("import fetchc\n\ns = fetch(a)  # never used\n")
    monkeypatch.chdir(tmp_path)
    blk = Block(arg_types=[MemRefType(i8, [64, 32])])
    fetch = FetchOp(blk.args[0], StreamType("main", [64], [32], i8), base=8)
    fetch.location = fl("model.py", 3, 5)
    blk.add_ops([fetch, func.ReturnOp()])
    module = ModuleOp([func.FuncOp("k", ((MemRefType(i8, [64, 32]),), ()), Region(blk))])
    with pytest.raises(DiagnosticError) as info:
        fetchc.compile(module)
    text = render_all(info.value.diagnostics)
    assert text.startswith("model.py:3:5: error: 'fetch.fetch' op its result stream is never used")
    assert text.endswith("\ns = fetch(a)  # never used\n    ^\n")


def test_str_of_an_in_memory_diagnostic_error_has_the_path():
    module, k, (a, b, c), _, _ = _module_with_nested_ops()
    err = DiagnosticError(diag_mod.op_error(c, "bad", [(a, "here")]))
    assert str(err) == (
        "func @k, op 2 'func.return': error: 'func.return' op bad\n"
        "func @k, op 0 'func.return': note: here"
    )


# --------------------------------------------------------------------------- #
# source files read from disk
# --------------------------------------------------------------------------- #


def test_source_manager_reads_named_files(tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"one\r\ntwo\rthree\nfour \xff\n")
    sources = SourceManager()
    assert [sources.line(str(path), n) for n in (1, 2, 3, 4, 5, 6)] == ["one", "two", "three", "four \ufffd", "", None]
    assert SourceManager(load_files=False).line(str(path), 1) is None
    assert sources.line(str(tmp_path / "missing.py"), 1) is None
    assert sources.line("-", 1) is None  # stdin is never read


def test_source_manager_skips_special_and_large_files(tmp_path):
    fifo = tmp_path / "fifo.mlir"
    os.mkfifo(fifo)
    assert SourceManager().line(str(fifo), 1) is None  # not opened for reading forever
    assert SourceManager().line(str(tmp_path), 1) is None  # a directory
    big = tmp_path / "big.py"
    big.write_bytes(b"x\n" * ((1 << 19) + 1))  # 1 MiB + 2 bytes: over the per-file limit of ir.md §5
    sources = SourceManager()
    assert sources.line(str(big), 1) is None
    assert sources.bytes_read == 0  # refused from its size, not read
    big.write_bytes(b"x\n" * (1 << 19))  # exactly 1 MiB: quoted
    assert SourceManager().line(str(big), 1) == "x"


def test_quoting_reads_only_inputs_and_source_files(tmp_path):
    """A location may name any file; only the inputs and
    regular source files (ir.md §5 suffixes) are quoted, never /proc, /sys,
    /dev, nor a file of another suffix, nor a source-suffixed symlink to
    one."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-LINE\n")
    (tmp_path / "link.mlir").symlink_to(secret)
    (tmp_path / "ok.py").write_text("quoted python\n")
    inp = tmp_path / "kernel.txt"  # an input whose name has no source suffix
    inp.write_text("input line\n")
    sources = SourceManager({str(inp): "input line\n"})
    assert sources.line(str(secret), 1) is None
    assert sources.line(str(tmp_path / "link.mlir"), 1) is None
    assert sources.line("/proc/self/environ", 1) is None
    assert sources.line("/proc/self/cmdline", 1) is None
    assert sources.line("/dev/zero", 1) is None
    assert sources.line("/sys/kernel/uevent_seqnum", 1) is None
    assert sources.line(str(tmp_path / "ok.py"), 1) == "quoted python"
    assert sources.line(str(tmp_path / "." / "kernel.txt"), 1) == "input line"  # the input, another spelling
    assert sources.bytes_read == len("quoted python\n")


def test_quoting_from_the_command_line_never_shows_other_files(tmp_path):
    """The same through ``fetchc``: the error is located at the named files,
    and no line of theirs (a secret, the process environment) is printed."""
    import subprocess

    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-LINE\n")
    kernel = tmp_path / "k.mlir"
    kernel.write_text(
        'func.func @k(%a: memref<4x16xf8E4M3FN>, %o: memref<4x16xbf16>) {\n'
        '  %s = fetch.fetch %a : memref<4x16xf8E4M3FN> -> !fetch.stream<main, [4], [16], f8E4M3FN>\n'
        '  %c = fetch.cast %s : !fetch.stream<main, [4], [16], f8E4M3FN> -> !fetch.stream<main, [4], [16], bf16>'
        f' loc(fused["{secret}":1:1, "/proc/self/environ":1:1])\n'
        '  rngd.commit %c, %o : !fetch.stream<main, [4], [16], bf16>, memref<4x16xbf16>\n'
        '  func.return\n}\n'
    )
    env = dict(os.environ, FETCHC_MARKER="ENVIRONMENT-VALUE")
    r = subprocess.run([*FETCHC, str(kernel), "-o", str(tmp_path / "o.bin")],
                       capture_output=True, env=env)
    err = r.stderr.decode()
    assert r.returncode == 1
    assert err.startswith(f"{secret}:1:1: error: 'fetch.cast' op the hardware has no f8E4M3FN -> bf16 cast"), err
    assert "/proc/self/environ:1:1: note: fused with this location" in err
    assert "SECRET-LINE" not in err and "ENVIRONMENT-VALUE" not in err and "FETCHC_MARKER" not in err


def test_quoting_reads_a_file_once_and_at_most_16_mib(tmp_path):
    """One file under many spellings is read once; all
    files together at most 16 MiB (ir.md §5), the rest is not quoted."""
    d = tmp_path / "d"
    d.mkdir()
    body = b"y\n" * ((1 << 19) - 8)  # just under 1 MiB
    (d / "x.mlir").write_bytes(body)
    spellings = [str(d / "x.mlir"), str(d) + "/./x.mlir", str(d) + "/././x.mlir", str(d) + "//x.mlir",
                 str(d) + "/../d/x.mlir", str(tmp_path) + "/./d/./x.mlir"]
    sources = SourceManager()
    assert [sources.line(s, 2) for s in spellings] == ["y"] * len(spellings)
    assert sources.bytes_read == len(body)
    files = []
    for i in range(20):
        f = tmp_path / f"f{i}.mlir"
        f.write_bytes(body)
        files.append(f)
    sources = SourceManager()
    quoted = [sources.line(str(f), 1) for f in files]
    assert quoted[:16] == ["y"] * 16 and quoted[16:] == [None] * 4  # 16 files of just under 1 MiB fit
    assert sources.bytes_read == 16 * len(body) <= 16 << 20


# --------------------------------------------------------------------------- #
# line endings
# --------------------------------------------------------------------------- #


def test_lexer_patch_is_installed():
    assert "\\r" in MLIRLexer._whitespace_regex.pattern


@pytest.mark.parametrize(
    "text, offsets",
    [
        ("ab\ncd", {0: (1, 1), 2: (1, 3), 3: (2, 1), 4: (2, 2)}),
        ("ab\rcd", {2: (1, 3), 3: (2, 1), 4: (2, 2)}),
        ("ab\r\ncd", {2: (1, 3), 3: (1, 4), 4: (2, 1)}),
        ("\r\r\n\n\rx", {0: (1, 1), 1: (2, 1), 3: (3, 1), 4: (4, 1), 5: (5, 1)}),
    ],
)
def test_line_index_counts_every_line_break_once(text, offsets):
    index = LineIndex(text, line_offset=10)
    for offset, (line, col) in offsets.items():
        assert index.line_col(offset) == (line + 10, col)


def test_comment_ends_at_a_lone_cr():
    text = "// c\rfunc.func @k() {\r  // another\r  func.return\r}\r"
    f, ret = ops(parse(text))
    assert location_of(ret.location) == ("in.mlir", 4, 3)


def test_comment_at_end_of_input_without_line_break():
    assert ops(parse("func.func @k() {\n  func.return\n} // end")) != []


def test_split_input_file_with_cr_and_crlf():
    text = "a\r// -----\rb\r\n// -----\r\nc\n// -----\nd"
    assert split_input_file(text) == [("a\r", 0), ("b\r\n", 2), ("c\n", 4), ("d", 6)]


def test_located_parser_on_cr_text():
    parser = LocatedParser(CTX, 'func.func @k() {\r\r  "func.return"() : () -> ()\r}\r', "p.mlir", line_offset=2)
    module = parser.parse_module()
    (_, ret) = ops(module)
    assert location_of(ret.location) == ("p.mlir", 5, 3)


def test_a_long_line_is_quoted_as_a_window_around_the_column():
    """A line longer than render.QUOTE_LINE_CHARS is quoted as QUOTE_WINDOW
    characters each side of the column (cut ends marked ...), the caret
    under the column's character: many errors on one long line give output
    linear in the input, not quadratic."""
    w = render_mod.QUOTE_WINDOW
    line = "".join(chr(ord("a") + i % 26) for i in range(render_mod.QUOTE_LINE_CHARS * 3))
    for col in (1, 5000, len(line), len(line) + 3):
        out = render(Diagnostic("error", "boom", ("in.mlir", 1, col)), {"in.mlir": line}).splitlines()
        quoted, caret = out[1], out[2]
        assert len(quoted) <= 2 * w + 6 and len(caret) <= 2 * w + 6
        at = caret.index("^")
        if col <= len(line):
            assert quoted[at] == line[col - 1]
        assert quoted.startswith("...") == (col - 1 > w)
        assert quoted.endswith("...") == (col - 1 + w < len(line))
    short = "x" * render_mod.QUOTE_LINE_CHARS
    out = render(Diagnostic("error", "boom", ("in.mlir", 1, 4000)), {"in.mlir": short}).splitlines()
    assert out[1] == short and out[2] == " " * 3999 + "^"
