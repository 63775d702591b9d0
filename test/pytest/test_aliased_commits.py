"""A committed output that aliases an input read later (issue 26, "Also").

Explicit placements may alias (views of one buffer, ir.md §2a).  When a
committed tensor shares DM bytes with a given input that a later program
reads, the commit overwrites them first: the values given there were used
nowhere, without a word.  ``fetchc run`` / ``fetchc.run`` now warn at the
program (a note at the commit), ``fetchc sim --arg`` (which runs programs,
not commits) at the program's MANIFEST location, naming both tensors and
the shared bytes.  The values themselves are checked against numpy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fetchc
from fetchc.cli import main
from fetchc.diagnostics import DiagnosticWarning
from fetchc.golden.inputs import TensorSpec, shared_bytes
from fetchc.target import I4, I8

ALIAS = """\
func.func @k(%a: memref<4x16xi8> {rngd.dm_base = 0 : i64}, %o: memref<4x16xi8> {rngd.dm_base = 1024 : i64},
             %x: memref<4x16xi8> {rngd.dm_base = X : i64}, %y: memref<4x16xi8> {rngd.dm_base = 2048 : i64}) {
  %s = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  %t = fetch.fetch %x : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %t, %y : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  func.return
}
"""
A = np.arange(64, dtype=np.int8).reshape(4, 16)
X = (100 + np.arange(64)).astype(np.int8).reshape(4, 16)


def _run(text: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fetchc.run(text, a=A, x=X)
    return out, [w.message.diagnostic for w in caught if isinstance(w.message, DiagnosticWarning)]


def test_run_warns_and_reads_what_the_commit_wrote():
    out, diags = _run(ALIAS.replace("X : i64", "1056 : i64"))
    # the reference: o's bytes [1024, 1088) hold a; x's [1056, 1120) start with o's last 32
    want = np.concatenate([A.reshape(-1)[32:], X.reshape(-1)[32:]]).reshape(4, 16)
    assert np.array_equal(out["y"], want) and np.array_equal(out["o"], A)
    (d,) = diags
    assert d.loc[1:] == (5, 8) and d.message == (
        "'func.func' op tensor 'x' shares DM bytes [1056, 1088) (32 bytes) with tensor 'o', which is committed "
        "before program k/1 reads 'x': the values given for 'x' there are not used (the program reads what the "
        "commit wrote; placements that alias are views of one buffer)"
    )
    (note,) = d.notes
    assert note.loc[1:] == (4, 3) and note.message == "tensor 'o' is committed here"


@pytest.mark.parametrize("case", ["apart", "read first"])
def test_no_warning_when_nothing_given_is_overwritten(case):
    text = ALIAS.replace("X : i64", "1088 : i64" if case == "apart" else "1056 : i64")
    if case == "read first":  # x read before o is committed: its given bytes are used
        lines = text.splitlines()
        lines[2:6] = [lines[4], lines[5], lines[2], lines[3]]
        text = "\n".join(lines) + "\n"
    out, diags = _run(text)
    assert diags == []
    assert np.array_equal(out["y"], X)


def test_sim_arg_warns_at_the_program(tmp_path, capsys):
    src, binary = tmp_path / "k.mlir", tmp_path / "k.bin"
    src.write_text(ALIAS.replace("X : i64", "1056 : i64"))
    assert main([str(src), "-o", str(binary)]) == 0
    np.save(tmp_path / "a.npy", A)
    np.save(tmp_path / "x.npy", X)
    capsys.readouterr()
    argv = ["sim", str(binary), "--arg", f"a={tmp_path / 'a.npy'}", "--arg", f"x={tmp_path / 'x.npy'}"]
    assert main([*argv, "-o", str(tmp_path / "s.npz")]) == 0
    err = capsys.readouterr().err
    assert err.startswith(
        f"{src}:5:8: warning: tensor 'x' shares DM bytes [1056, 1088) (32 bytes) with tensor 'o', which @k "
        "commits: once that commit has come, program k/1 reads what it wrote there, not the values given for 'x'; "
        "fetchc sim runs the programs only, on the values given (fetchc run runs the commits too)\n"
    ), err
    with np.load(tmp_path / "s.npz") as z:  # sim reads the values given
        assert np.array_equal(z["k/1"], X)
    assert main([*argv, "--program", "k/0", "-o", str(tmp_path / "p.npy")]) == 0
    assert "warning" not in capsys.readouterr().err  # k/0 reads a, which nothing aliases


def test_shared_bytes_are_the_bytes_both_placements_hold():
    a = TensorSpec("a", I8, (32,), (2,), 0, 1024)  # even bytes of [1024, 1087)
    b = TensorSpec("b", I8, (32,), (2,), 0, 1025)  # odd bytes: interleaved, nothing shared
    c = TensorSpec("c", I8, (8,), None, 0, 1040)
    assert shared_bytes(a, b) is None
    assert shared_bytes(a, c) == (1040, 1047, 4)
    assert shared_bytes(a, c, (1044, 2000)) == (1044, 1047, 2)
    lo = TensorSpec("lo", I4, (8,), (2,), 0, 0)  # the low nibbles of bytes 0..7
    hi = TensorSpec("hi", I4, (8,), (2,), 1, 0)  # the high nibbles: the same bytes, other bits
    assert shared_bytes(lo, hi) is None
    assert shared_bytes(lo, TensorSpec("all", I4, (16,), None, 0, 0)) == (0, 8, 8)
