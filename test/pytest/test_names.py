"""Tensor names that survive MLIR tools (ir.md §2a).

A kernel argument's name is its argument attribute ``rngd.name`` first, else
its SSA name, else ``arg<i>``; two tensors (or scalars) of one kernel with
the same name are an error at the second; ``--emit=mlir`` / ``--emit=seq``
write ``rngd.name`` on every tensor and scalar, so that a tool that renames
every SSA value (``mlir-opt`` prints ``%arg0``, ``%0``...) keeps every name
and the ``seq.bin`` stays the same byte for byte.  The lit tests under
``test/lit/mlir-opt`` do the round trip through a real ``mlir-opt``; here
the renaming is done by printing with every SSA name dropped, so the check
runs everywhere.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import fetchc
from fetchc.cli import main
from fetchc.diagnostics import DiagnosticError, render_all
from fetchc.driver import print_module
from fetchc.frontend.context import shared_context
from fetchc.frontend.parsing import parse_module
from fetchc.rewriting import walk
from fetchc.seqbin import read

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]

KERNEL = """\
func.func @k(%w: memref<64x16xbf16>, %arg0: memref<64x16xf32> {rngd.name = "out"}, %1: memref<64x16xbf16>, %g: f32) {
  %s = fetch.fetch %w : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  %f = fetch.cast %s : !fetch.stream<main, [64], [16], bf16> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %f, %arg0 : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  func.return
}
"""


def _manifest_names(data: bytes) -> list[list[str]]:
    m = read(data).manifest
    assert m is not None
    return [[t.name for t in k.tensors] + [s.name for s in k.scalars] for k in m.kernels]


def test_a_name_is_rngd_name_then_the_ssa_name_then_arg_i():
    result = fetchc.compile(KERNEL, filename="k.mlir")
    assert _manifest_names(result.seq_bin) == [["w", "out", "arg2", "g"]]


def _without_ssa_names(text: str, filename: str) -> str:
    """``text`` printed as ``mlir-opt --mlir-print-op-generic
    --mlir-print-debuginfo`` prints it: generic form, locations, and no SSA
    name of the input kept (every value becomes ``%0``, ``%arg0``...)."""
    module = parse_module(shared_context(), text, filename)
    for op in walk(module):
        for r in op.results:
            r.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    a.name_hint = None
    out = print_module(module, generic=True, debuginfo=True)
    assert not re.search(r"%[a-z_]", out.replace("%arg", "%0")), out  # really renamed
    return out


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.mlir")))
@pytest.mark.parametrize("emit", ["mlir", "seq"])
def test_emitted_ir_keeps_every_name_when_ssa_names_are_lost(example, emit, tmp_path, capsysbinary):
    """``--emit=mlir`` / ``--emit=seq`` write ``rngd.name`` on every tensor
    and scalar: with every SSA name renamed the output compiles to the same
    seq.bin bytes as the example itself (the MANIFEST's names and locs
    included)."""
    src = ROOT / "examples" / example
    direct = tmp_path / "direct.bin"
    assert main([str(src), "-o", str(direct)]) == 0
    emitted = tmp_path / f"emitted.{emit}.mlir"
    argv = [str(src), f"--emit={emit}", "--mlir-print-op-generic", "--mlir-print-debuginfo", "-o", str(emitted)]
    if emit == "mlir":
        argv += ["-p", ""]  # the input as written, names added: the default pipeline runs on the way back
    assert main(argv) == 0
    text = emitted.read_text()
    assert 'rngd.name = "' in text
    renamed = tmp_path / "renamed.mlir"
    renamed.write_text(_without_ssa_names(text, str(emitted)))
    back = tmp_path / "back.bin"
    assert main([str(renamed), "-o", str(back), *(["-p", ""] if emit == "seq" else [])]) == 0, capsysbinary.readouterr()
    assert back.read_bytes() == direct.read_bytes()
    names = _manifest_names(direct.read_bytes())
    assert all(not re.fullmatch(r"arg\d+", n) for k in names for n in k), names  # the examples name everything


def test_every_tensor_and_scalar_gets_rngd_name_sorted_with_the_other_attributes(capsysbinary, tmp_path):
    src = tmp_path / "k.mlir"
    src.write_text(KERNEL)
    assert main([str(src), "--emit=mlir"]) == 0
    out = capsysbinary.readouterr().out.decode()
    head = out.splitlines()[1].strip()
    assert head == (
        'func.func @k(%w: memref<64x16xbf16> {rngd.dm_base = 0 : i64, rngd.name = "w"}, '
        '%arg0: memref<64x16xf32> {rngd.dm_base = 2048 : i64, rngd.name = "out"}, '
        '%0: memref<64x16xbf16> {rngd.dm_base = 6144 : i64, rngd.name = "arg2"}, %g: f32 {rngd.name = "g"}) {'
    ), head


def test_run_takes_inputs_by_rngd_name():
    """After a tool renamed the SSA values, ``fetchc.run`` still takes the
    arrays and returns the outputs by the tensors' names; the values are the
    bf16 → f32 cast (exact), checked with numpy."""
    renamed = KERNEL.replace("%w", "%arg9").replace("%g", "%arg8").replace(
        "%arg9: memref<64x16xbf16>", '%arg9: memref<64x16xbf16> {rngd.name = "w"}').replace(
        "%arg8: f32", '%arg8: f32 {rngd.name = "g"}')
    bits = np.arange(64 * 16, dtype=np.uint16).reshape(64, 16) + np.uint16(0x3F00)
    out = fetchc.run(renamed, w=bits, g=1.0)
    want = (bits.astype(np.uint32) << 16).view(np.float32)
    assert list(out) == ["out"]
    assert np.array_equal(out["out"].view(np.uint32), want.view(np.uint32))


def _the_error(text: str):
    """The one diagnostic compiling ``text`` (as ``n.mlir``) raises."""
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text, filename="n.mlir")
    (d,) = e.value.diagnostics
    return d


@pytest.mark.parametrize(
    "args, line_col, message, note",
    [
        ('%a: memref<64x16xbf16>, %b: memref<64x16xbf16> {rngd.name = "a"}', (1, 38),
         '%b is named "a" by its rngd.name, like %a: the tensors and scalars of a kernel need different names; '
         "rename one (its rngd.name or its SSA name)", (1, 14)),
        ('%a: memref<64x16xbf16> {rngd.name = "x"}, %b: memref<64x16xbf16>, %x: f32', (1, 80),
         '%x is named "x" by its SSA name, like %a ("x"): the tensors and scalars of a kernel need different names; '
         "rename one (its rngd.name or its SSA name)", (1, 14)),
        ("%a: memref<64x16xbf16>, %b: memref<64x16xbf16> {rngd.name = 7 : i64}", (1, 38),
         'rngd.name of %b is 7 : i64, not a string: a tensor\'s name is a non-empty string (rngd.name = "w"); '
         "drop the attribute to name it by its SSA name", None),
        ('%a: memref<64x16xbf16>, %b: memref<64x16xbf16> {rngd.name = ""}', (1, 38),
         "rngd.name of %b is empty: a tensor's name is a non-empty string (rngd.name = \"w\"); "
         "drop the attribute to name it by its SSA name", None),
    ],
)
def test_name_errors_are_located_at_the_argument(args, line_col, message, note):
    text = (
        f"func.func @k({args}) {{\n"
        "  %s = fetch.fetch %a : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>\n"
        "  rngd.commit %s, %b : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>\n"
        "  func.return\n}\n"
    )
    d = _the_error(text)
    assert (d.loc, d.message) == (("n.mlir", *line_col), f"'func.func' op {message}"), render_all([d], {"n.mlir": text})
    assert [n.loc for n in d.notes] == ([("n.mlir", *note)] if note else [])


def test_a_function_without_fetches_is_no_kernel_and_is_not_checked():
    text = """\
func.func @helper(%a: memref<4xi8>, %b: memref<4xi8> {rngd.name = "a"}) {
  func.return
}
"""
    fetchc.compile(text + KERNEL)


def test_ssa_names_equal_but_for_a_digit_suffix_are_explained():
    """%w_1 and %w_2 are both %w once parsed (MLIR drops a `_<digits>`
    suffix): the message names the argument by position and says why."""
    text = (
        "func.func @k(%w_1: memref<64x16xbf16>, %w_2: memref<64x16xbf16>) {\n"
        "  %s = fetch.fetch %w_1 : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>\n"
        "  rngd.commit %s, %w_2 : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>\n"
        "  func.return\n}\n"
    )
    d = _the_error(text)
    assert d.loc == ("n.mlir", 1, 40)
    assert d.message == (
        "'func.func' op argument 1 (%w_<digits>) is named \"w\" by its SSA name (a \"_<digits>\" suffix is not part "
        "of an SSA name), like %w: the tensors and scalars of a kernel need different names; rename one (its "
        "rngd.name or its SSA name)"
    )
