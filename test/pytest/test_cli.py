"""In-process tests of the ``fetchc`` command line (fetchc.cli.main, ir.md §5):
exit codes, the no-output-on-error guarantee, stdin input, --help, and that
no Python traceback ever reaches the user."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from fetchc.cli import main
from fetchc.seqbin import read

from samples import DECODE


# Each breaks a different stage of the compile.
UNUSED = """\
func.func @unused(%a: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  func.return
}
"""
PARSE_ERROR = DECODE.replace("fetch.convert", "fetch.convertt")
PASS_ERROR = """\
func.func @no_chain(%a: memref<64x16xf8E4M3FN>, %o: memref<64x16xf8E5M2>) {
  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  %c = fetch.convert %s : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], f8E5M2>
  rngd.commit %c, %o : !fetch.stream<main, [64], [16], f8E5M2>, memref<64x16xf8E5M2>
  func.return
}
"""
SEQUENCER_ERROR = DECODE.replace("base = 4096", "base = 4097")
FAILING = {
    "verifier": UNUSED,
    "parse": PARSE_ERROR,
    "pass": PASS_ERROR,
    "sequencer": SEQUENCER_ERROR,
    "not utf-8": b"func.func @f() {\n  func.return // \xff\n}\n",
    "binary": bytes(range(256)) * 4,
    "empty pipeline then bin": None,  # DECODE with -p '' (never reaches fetch_seq)
}


def _write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def _failing_args(tmp_path: Path, name: str) -> list[str]:
    content = FAILING[name]
    if content is None:
        return [str(_write(tmp_path / "in.mlir", DECODE)), "-p", ""]
    return [str(_write(tmp_path / "in.mlir", content))]


def test_failing_inputs_really_fail_for_the_reason_named(tmp_path, capsys):
    expected = {
        "verifier": "'fetch.fetch' op its result stream is never used",
        "parse": "Operation fetch.convertt is not registered",
        "pass": "'fetch.convert' op cannot be legalised",
        "sequencer": "'fetch.fetch' op",
        "not utf-8": "input is not valid UTF-8",
        "binary": "input is not valid UTF-8",
        "empty pipeline then bin": "--emit=bin needs the pipeline to reach fetch_seq",
    }
    for name in FAILING:
        rc = main(_failing_args(tmp_path, name) + ["-o", str(tmp_path / "out.bin")])
        err = capsys.readouterr().err
        assert rc == 1, name
        assert expected[name] in err, (name, err)


# --------------------------------------------------------------------------- #
# exit codes
# --------------------------------------------------------------------------- #


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: fetchc")
    assert "--emit" in out and "--verify-diagnostics" in out


def test_version_exits_0(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("fetchc ")


@pytest.mark.parametrize("argv", [["--emit=elf", "x.mlir"], ["--no-such-flag"], ["a.mlir", "b.mlir"]])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "usage: fetchc" in capsys.readouterr().err


def test_compile_exits_0_and_writes_a_seq_bin(tmp_path, capsys):
    src = _write(tmp_path / "decode.mlir", DECODE)
    out = tmp_path / "decode.bin"
    assert main([str(src), "-o", str(out)]) == 0
    cap = capsys.readouterr()
    assert cap.err == "" and cap.out == ""
    assert len(read(out.read_bytes()).programs) == 1


def test_emit_mlir_to_stdout(tmp_path, capsysbinary):
    src = _write(tmp_path / "decode.mlir", DECODE)
    assert main([str(src), "--emit=mlir"]) == 0
    out = capsysbinary.readouterr().out.decode()
    assert "fetch.table_lookup" in out and "fetch.convert" not in out


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failing_compile_exits_1_with_a_located_error_and_no_traceback(name, tmp_path, capsys):
    rc = main(_failing_args(tmp_path, name) + ["-o", str(tmp_path / "out.bin")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "error: " in err
    assert "Traceback" not in err and "internal error" not in err
    if name != "empty pipeline then bin":
        assert err.startswith(str(tmp_path / "in.mlir") + ":"), err


def test_missing_input_file_exits_1(tmp_path, capsys):
    assert main([str(tmp_path / "nope.mlir"), "-o", str(tmp_path / "out.bin")]) == 1
    assert "error: cannot read" in capsys.readouterr().err
    assert not (tmp_path / "out.bin").exists()


def test_verify_diagnostics_exit_codes(tmp_path, capsys):
    ok = _write(tmp_path / "ok.mlir", UNUSED.replace("  %s =", "  // expected-error @+1 {{never used}}\n  %s ="))
    missing = _write(tmp_path / "missing.mlir", DECODE.replace("  %s =", "  // expected-error @+1 {{nope}}\n  %s ="))
    unexpected = _write(tmp_path / "unexpected.mlir", UNUSED)
    assert main(["--verify-diagnostics", "-p", "", str(ok)]) == 0
    assert main(["--verify-diagnostics", str(missing)]) == 1
    assert 'expected error "nope" was not produced' in capsys.readouterr().err
    assert main(["--verify-diagnostics", str(unexpected)]) == 1
    assert "unexpected error: 'fetch.fetch' op its result stream is never used" in capsys.readouterr().err


def test_verify_diagnostics_writes_no_output(tmp_path):
    ok = _write(tmp_path / "ok.mlir", DECODE)
    out = tmp_path / "out.bin"
    assert main(["--verify-diagnostics", str(ok), "-o", str(out)]) == 0
    assert not out.exists()
    _write(out, b"old")
    assert main(["--verify-diagnostics", str(ok), "-o", str(out)]) == 0
    assert out.read_bytes() == b"old"


# --------------------------------------------------------------------------- #
# no output file on error
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", sorted(FAILING))
@pytest.mark.parametrize("emit", ["bin", "mlir", "seq"])
def test_failing_compile_creates_no_output_file(name, emit, tmp_path):
    out = tmp_path / "out"
    assert main(_failing_args(tmp_path, name) + [f"--emit={emit}", "-o", str(out)]) in (0, 1)
    if name == "empty pipeline then bin" and emit != "bin":
        return  # -p '' with --emit=mlir/seq is a fine compile
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir"], "no temporary file is left behind"


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failing_compile_leaves_an_existing_output_byte_identical(name, tmp_path):
    out = tmp_path / "out.bin"
    old = bytes(range(256)) + b"previous seq.bin"
    out.write_bytes(old)
    before = out.stat()
    assert main(_failing_args(tmp_path, name) + ["-o", str(out)]) == 1
    assert out.read_bytes() == old
    assert out.stat().st_mtime_ns == before.st_mtime_ns and out.stat().st_ino == before.st_ino


def test_successful_compile_replaces_an_existing_output(tmp_path):
    src = _write(tmp_path / "decode.mlir", DECODE)
    out = _write(tmp_path / "out.bin", b"old")
    assert main([str(src), "-o", str(out)]) == 0
    assert out.read_bytes() != b"old"
    read(out.read_bytes())


def test_split_input_file_with_one_failing_chunk_writes_nothing(tmp_path):
    src = _write(tmp_path / "in.mlir", DECODE + "// -----\n" + UNUSED)
    out = tmp_path / "out.mlir"
    assert main([str(src), "--split-input-file", "--emit=mlir", "-o", str(out)]) == 1
    assert not out.exists()


def test_emit_follows_an_mlir_output_name(tmp_path, capsys):
    """Without ``--emit``, ``-o X.mlir`` means ``--emit=mlir`` (also with
    ``--split-input-file``); an explicit ``--emit`` wins; any other ``-o``
    is ``--emit=bin``, whose error names ``--emit=mlir`` (issue 27, item 4)."""
    from fetchc.cli import emit_kind

    assert [emit_kind(None, "t.mlir"), emit_kind(None, "t.bin"), emit_kind(None, "-"), emit_kind("bin", "t.mlir"),
            emit_kind("seq", "t.mlir"), emit_kind(None, "mlir")] == ["mlir", "bin", "bin", "bin", "seq", "bin"]  # fmt: skip
    src = _write(tmp_path / "in.mlir", DECODE)
    two = _write(tmp_path / "two.mlir", DECODE + "// -----\n" + DECODE)
    runs = {
        "parsed": [str(src), "-p", "", "--mlir-print-op-generic", "-o", str(tmp_path / "parsed.mlir")],
        "target": [str(src), "-o", str(tmp_path / "target.mlir")],
        "split": [str(two), "--split-input-file", "-p", "", "-o", str(tmp_path / "split.mlir")],
        "explicit": [str(src), "--emit=bin", "-o", str(tmp_path / "explicit.mlir")],
        "bin": [str(src), "-p", "", "-o", str(tmp_path / "parsed.bin")],
        "split bin": [str(two), "--split-input-file", "-o", str(tmp_path / "split.bin")],
    }
    status = {name: main(argv) for name, argv in runs.items()}
    err = capsys.readouterr().err
    assert status == {"parsed": 0, "target": 0, "split": 0, "explicit": 0, "bin": 1, "split bin": 1}
    assert (tmp_path / "parsed.mlir").read_text().startswith('"builtin.module"() ({')
    target = (tmp_path / "target.mlir").read_text()
    assert "rngd.dm_base" in target and "fetch.fetch" in target and "fetch_seq.program" not in target
    assert (tmp_path / "split.mlir").read_text().count("// -----\n") == 1
    assert (tmp_path / "explicit.mlir").read_bytes().startswith(b"FSEQ")
    assert not (tmp_path / "parsed.bin").exists() and not (tmp_path / "split.bin").exists()
    assert (
        "--emit=bin needs the pipeline to reach fetch_seq (run fetch-place-dm, then fetch-legalize-convert, then "
        "fetch-to-seq; without -p the default pipeline runs every pass); to write the IR instead, use --emit=mlir "
        "(or -o FILE.mlir)"
    ) in err
    assert "with --split-input-file use --emit=mlir or --emit=seq (or -o FILE.mlir)" in err


# --------------------------------------------------------------------------- #
# stdin
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("argv", [["-"], []])
def test_stdin_input(argv, tmp_path, monkeypatch):
    ref = tmp_path / "ref.bin"
    assert main([str(_write(tmp_path / "decode.mlir", DECODE)), "-o", str(ref)]) == 0
    _stdin(monkeypatch, DECODE.encode())
    out = tmp_path / "stdin.bin"
    assert main(argv + ["-o", str(out)]) == 0
    # The same file but for the MANIFEST's source locations, which name the input.
    a, b = read(out.read_bytes()), read(ref.read_bytes())
    assert (a.tables, a.programs) == (b.tables, b.programs)
    ((ka, pa),), ((kb, pb),) = ([(k, p) for k in m.kernels for p in k.programs] for m in (a.manifest, b.manifest))
    assert (ka.name, ka.tensors, ka.scalars) == (kb.name, kb.tensors, kb.scalars) and pa.loc == "<stdin>:2:8" and pb.loc.endswith("decode.mlir:2:8")
    assert (pa.index, pa.tensor, pa.time, pa.packet) == (pb.index, pb.tensor, pb.time, pb.packet)


def test_stdin_errors_are_located_at_stdin(monkeypatch, capsys, tmp_path):
    _stdin(monkeypatch, UNUSED.encode())
    assert main(["-", "-o", str(tmp_path / "out.bin")]) == 1
    assert capsys.readouterr().err.startswith("<stdin>:2:8: error: 'fetch.fetch' op its result stream is never used")
    assert not (tmp_path / "out.bin").exists()


def test_stdin_emit_mlir_to_stdout(monkeypatch, capsysbinary):
    _stdin(monkeypatch, DECODE.encode())
    assert main(["--emit=mlir", "-p", ""]) == 0
    assert b"fetch.convert %s" in capsysbinary.readouterr().out


# --------------------------------------------------------------------------- #
# robustness
# --------------------------------------------------------------------------- #


def test_deep_nesting_parses_and_restores_the_recursion_limit(tmp_path, capsysbinary):
    limit = sys.getrecursionlimit()
    src = _write(tmp_path / "deep.mlir", "builtin.module {" * 500 + "}" * 500)
    assert main([str(src), "--emit=mlir"]) == 0
    assert capsysbinary.readouterr().out.count(b"builtin.module {") == 500
    assert sys.getrecursionlimit() == limit


def test_too_deep_nesting_is_an_error_not_a_crash(tmp_path, capsys):
    src = _write(tmp_path / "deep.mlir", '"test.op"() ({' * 20000 + "}) : () -> ()" * 20000)
    assert main([str(src), "-o", str(tmp_path / "out.bin")]) == 1
    err = capsys.readouterr().err
    assert "error: nesting too deep" in err and "Traceback" not in err
    assert not (tmp_path / "out.bin").exists()


def test_dis_of_a_corrupt_file_exits_1(tmp_path, capsys):
    bad = _write(tmp_path / "bad.bin", b"not a seq.bin at all")
    assert main(["dis", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}: error: ") and "Traceback" not in err


def test_dis_of_a_compiled_file_exits_0(tmp_path, capsys):
    out = tmp_path / "decode.bin"
    assert main([str(_write(tmp_path / "decode.mlir", DECODE)), "-o", str(out)]) == 0
    assert main(["dis", str(out)]) == 0
    assert 'program 0: "decode/0"' in capsys.readouterr().out


def test_output_to_a_special_file_is_written_not_replaced(tmp_path):
    """-o /dev/null must not replace the device node (nor need a writable /dev)."""
    src = _write(tmp_path / "decode.mlir", DECODE)
    st = os.stat("/dev/null")
    assert main([str(src), "-o", "/dev/null"]) == 0
    after = os.stat("/dev/null")
    assert (after.st_mode, after.st_rdev) == (st.st_mode, st.st_rdev)


def test_output_keeps_the_mode_of_an_existing_file_and_follows_symlinks(tmp_path):
    src = _write(tmp_path / "decode.mlir", DECODE)
    target = tmp_path / "real.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o644)
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    assert main([str(src), "-o", str(link)]) == 0
    assert link.is_symlink()
    assert target.read_bytes().startswith(b"FSEQ")
    assert os.stat(target).st_mode & 0o777 == 0o644


def test_help_lists_the_passes_from_the_pass_classes(monkeypatch, capsys):
    """``fetchc --help`` derives its pass list from the registry and the pass
    classes: a pass added to the registry appears with its summary and each
    option (name, type, help, default); the shipped passes appear in
    pipeline order with their options."""
    from dataclasses import dataclass, field

    from fetchc import driver
    from fetchc.rewriting import FetchcPass

    @dataclass(frozen=True)
    class ProbePass(FetchcPass):
        name = "fetch-probe"
        summary = "a pass that only this test registers"
        max_rows: int = field(default=7, metadata={"help": "rows to probe"})
        tag: str = field(default="x", metadata={"help": "a label"})

    real = driver.fetchc_passes
    monkeypatch.setattr(driver, "fetchc_passes", lambda: {**real(), "fetch-probe": lambda: ProbePass})
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    tail = out[out.index("passes (-p / --pass-pipeline"):]
    names = [ln.split()[0] for ln in tail.splitlines()[1:] if ln.startswith("  ") and not ln.startswith("   ")]
    assert names[:6] == [*driver.DEFAULT_PIPELINE, "fetch-probe"], names
    assert "a pass that only this test registers" in tail
    assert "max-rows=<int>" in tail and "rows to probe (default 7)" in tail
    assert "tag=<str>" in tail and "a label (default x)" in tail
    from fetchc.passes.place_dm import DEFAULT_DM_SIZE

    assert "dm-size=<int>" in tail and f"(default {DEFAULT_DM_SIZE})" in tail


def test_run_pipeline_hooks_and_verify_each(monkeypatch):
    """``before_pass`` / ``after_pass`` see every pass in order (the
    ``--mlir-print-ir-*-all`` dumps); ``verify_each`` verifies the whole
    module after each of fetchc's passes, where by default only the ops it
    touched are verified again."""
    from fetchc import driver
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module

    seen: list[object] = []
    real = driver.verify_module
    monkeypatch.setattr(driver, "verify_module", lambda m, ops=None: (seen.append(ops), real(m, ops))[1])
    for each in (False, True):
        seen.clear()
        ctx = shared_context()
        module = parse_module(ctx, DECODE, "d.mlir")
        calls: list[str] = []
        passes = driver.parse_pipeline("fetch-place-dm,fetch-legalize-convert")
        result = driver.run_pipeline(
            module, ctx, passes, lambda p, m: calls.append(f"after {p.name}"),
            before_pass=lambda p, m: calls.append(f"before {p.name}"), verify_each=each,
        )
        assert result.ok, result.diagnostics
        assert calls == ["before fetch-place-dm", "after fetch-place-dm",
                         "before fetch-legalize-convert", "after fetch-legalize-convert"]
        assert seen[0] is None  # after parsing: everything
        if each:
            assert seen[1:] == [None, None]
        else:
            assert all(isinstance(s, set) for s in seen[1:]) and len(seen) == 3
