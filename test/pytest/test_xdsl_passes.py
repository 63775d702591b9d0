"""Every xDSL pass through ``-p`` (ir.md §5 ``-p``).

A foreign pass may not support fetchc's IR, but it must end in a result or a
clear error naming the pass (and the op where known), never a traceback or
an unexplained ``pass 'x' failed with AssertionError``; and a pass that
prints (``eqsat-serialize-egraph`` writes JSON to stdout) must not corrupt
the ``-o`` output.
"""

from __future__ import annotations

import re

import pytest
from xdsl.transforms import get_all_passes

from fetchc.cli import main

from samples import DECODE

INPUTS = {"decode": DECODE, "empty": ""}
PASSES = sorted(get_all_passes())
# an unexplained failure: "pass 'x' failed with AssertionError" and nothing more
UNEXPLAINED = re.compile(r"pass '[^']*' failed with [A-Za-z_]+")


def _is_module(text: bytes) -> bool:
    return text.lstrip().startswith((b"builtin.module", b'"builtin.module"'))


def _check_error(name: str, rc: int, err: str) -> None:
    assert rc in (0, 1), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert not UNEXPLAINED.search(err), err
    if rc == 1:
        first = next(ln for ln in err.splitlines() if "error: " in ln)
        named = (f"pass '{name}'" in err) or (f"invalid pass pipeline '{name}'" in first)
        assert named, f"the error does not name the pass {name!r}:\n{err}"


def test_there_are_many_xdsl_passes():
    assert len(PASSES) > 100 and "canonicalize" in PASSES and "eqsat-serialize-egraph" in PASSES


@pytest.mark.parametrize("source", list(INPUTS))
@pytest.mark.parametrize("name", PASSES)
def test_xdsl_pass_to_a_file(name, source, tmp_path, capsysbinary):
    src = tmp_path / "in.mlir"
    src.write_text(INPUTS[source])
    out = tmp_path / "out.mlir"
    rc = main([str(src), "-p", name, "--emit=mlir", "-o", str(out)])
    cap = capsysbinary.readouterr()
    err = cap.err.decode("utf-8", "replace")
    _check_error(name, rc, err)
    if rc == 0:
        assert _is_module(out.read_bytes()), out.read_bytes()[:200]
    else:
        assert not out.exists()


@pytest.mark.parametrize("source", list(INPUTS))
@pytest.mark.parametrize("name", PASSES)
def test_xdsl_pass_to_stdout_keeps_stdout_clean(name, source, tmp_path, capsysbinary):
    src = tmp_path / "in.mlir"
    src.write_text(INPUTS[source])
    rc = main([str(src), "-p", name, "--emit=mlir", "-o", "-"])
    cap = capsysbinary.readouterr()
    err = cap.err.decode("utf-8", "replace")
    _check_error(name, rc, err)
    if rc == 0:
        assert _is_module(cap.out), cap.out[:200]
    else:
        assert cap.out == b""


def test_a_printing_pass_prints_to_stderr_when_the_output_is_stdout(tmp_path, capsysbinary):
    src = tmp_path / "in.mlir"
    src.write_text(DECODE)
    assert main([str(src), "-p", "eqsat-serialize-egraph", "--emit=mlir", "-o", "-"]) == 0
    cap = capsysbinary.readouterr()
    assert _is_module(cap.out) and b'"nodes"' not in cap.out
    assert b'"nodes"' in cap.err  # the pass's JSON is not lost
    # with -o FILE the print stays on stdout: the user's choice
    out = tmp_path / "out.mlir"
    assert main([str(src), "-p", "eqsat-serialize-egraph", "--emit=mlir", "-o", str(out)]) == 0
    cap = capsysbinary.readouterr()
    assert b'"nodes"' in cap.out and _is_module(out.read_bytes()) and b'"nodes"' not in out.read_bytes()


def test_a_failing_xdsl_pass_names_the_pass_and_the_op(tmp_path, capsys):
    src = tmp_path / "in.mlir"
    src.write_text(DECODE)
    assert main([str(src), "-p", "convert-func-to-x86-func", "--emit=mlir", "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert f"{src}:1:1: error: pass 'convert-func-to-x86-func' failed: " in err
    assert "(at 'func.func')" in err
    assert main([str(src), "-p", "apply-pdl-interp", "--emit=mlir", "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "error: pass 'apply-pdl-interp' failed (xDSL AssertionError: matcher function not found): " \
           "it does not support this input" in err


def test_fetchc_pass_errors_reach_xdsl_as_xdsl_diagnostics():
    """Run through xDSL's own ``PassPipeline`` (as ``xdsl-opt`` does), a
    fetchc pass that fails raises xDSL's ``PassFailedException`` (still the
    ``PassError``, with its op), whose message is the located diagnostic and
    whose note is the module with the failing op marked."""
    from xdsl.passes import PassPipeline
    from xdsl.utils.exceptions import DiagnosticException, PassFailedException

    from fetchc.diagnostics import PassError
    from fetchc.driver import parse_pipeline
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module

    bad = DECODE.replace("f8E4M3FN>", "i8>").replace("xf8E4M3FN>", "xi8>")
    module = parse_module(shared_context(), bad, "bad.mlir")
    with pytest.raises(PassFailedException) as e:
        PassPipeline(tuple(parse_pipeline("fetch-legalize-convert"))).apply(shared_context(), module)
    err = e.value
    assert isinstance(err, PassError) and isinstance(err, DiagnosticException)
    assert err.op.name == "fetch.convert"
    assert str(err) == (
        "bad.mlir:3:8: error: 'fetch.convert' op cannot be legalised: the Fetch Adapter cannot convert f4E2M1FN to "
        "i8: from f4E2M1FN the Fetch Adapter offers f8E4M3FN (table lookup), f8E5M2 (table lookup), f32 (table lookup + "
        "type cast)"
    ), str(err)
    (note,) = err.__notes__
    marked = note.splitlines()
    i = next(k for k, ln in enumerate(marked) if '"fetch.convert"' in ln)
    assert marked[i + 1].lstrip().startswith("^^^^") and "error: 'fetch.convert' op cannot be legalised" in marked[i + 2]
