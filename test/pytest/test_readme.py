"""The README's two set-up commands stay true: CI runs the README's test
command verbatim, the first script runs as shown on a shipped example and
prints its ``#>`` lines, its values are the decode computed here, and it
leaves nothing outside ``scratch/``; every example has its upstream-MLIR
round trip (issue 27)."""

import re
import shlex
import sys
from pathlib import Path

import doc_examples
from served import FETCHC

ROOT = Path(__file__).resolve().parents[2]
SETUP = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]'"


def _readme_commands() -> list[str]:
    """The ``sh`` blocks before the README's first section."""
    text = (ROOT / "README.md").read_text()
    head = text[: text.index("\n## ")]
    return [b.strip() for b in re.findall(r"^```sh[ \t]*\n(.*?)^```[ \t]*$", head, re.S | re.M)]


def _host_argv(argv: list[str]) -> list[str]:
    """``.venv/bin/fetchc`` / ``.venv/bin/python`` / ``mkdir`` as this
    environment runs them."""
    if argv[0] == ".venv/bin/fetchc":
        return [*FETCHC, *argv[1:]]
    if argv[0] == ".venv/bin/python":
        return [sys.executable, *argv[1:]]
    assert argv[0] == "mkdir", argv
    return argv


def test_readme_starts_with_two_commands():
    """The first block sets up a fresh machine and runs the main job, a few
    steps each with a ``#`` note; the second sets up and runs the tests."""
    main, tests = _readme_commands()
    lines = main.splitlines()
    assert lines[1].startswith(SETUP), lines[:2]
    assert tests.startswith(SETUP) and "\n" not in tests
    steps = [ln for ln in lines if ln and not ln.startswith("#")]
    assert 4 <= len(steps) <= 8
    assert all(lines[lines.index(st) - 1].startswith("# ") for st in steps), "every step has a note above it"
    assert all(len(st) < 250 for st in steps), "no 475-character chain"


def test_ci_runs_the_readme_test_command():
    test_cmd = _readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd in ci, f"{test_cmd!r} is not a line of .ci/run"
    # .ci/run says so before it deletes .venv
    rm = ci.index("rm -rf .venv")
    assert ci[rm - 1].startswith("echo ") and "deleting .venv" in ci[rm - 1]
    assert ci.index(test_cmd) == rm + 1


def test_main_command_uses_a_shipped_example():
    main_cmd = _readme_commands()[0]
    examples = re.findall(r"examples/[\w.-]+\.mlir", main_cmd)
    assert examples, main_cmd
    for e in examples:
        assert (ROOT / e).is_file(), e
    # the quick start runs the 256-slice NVFP4 decode on a whole weight (hardware.md §1a)
    assert "fetchc run examples/nvfp4_dequant_f32.mlir --arg codes=scratch/w.npy" in main_cmd


def test_first_script_runs_as_shown(tmp_path):
    """Every step but the set-up runs (from a directory with ``examples/``)
    and prints its ``#>`` lines; ``out`` is ``E2M1[code] × 1.0 × 0.5``,
    computed here with ml_dtypes, bit for bit; every file it writes is in
    ``scratch/`` (which ``mkdir -p`` makes)."""
    import ml_dtypes
    import numpy as np

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    lines = [ln for ln in doc_examples.sh_lines((ROOT / "README.md").read_text()) if ln.block == 0]
    ran, differ = doc_examples.run_sh_block(lines, tmp_path, _host_argv, doc_examples.SH_SKIPPED.fullmatch)
    assert ran == 6 and not differ, "\n\n".join(differ)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "scratch"]
    assert sorted(p.name for p in (tmp_path / "scratch").iterdir()) == ["out.npz", "s.npy", "seq.bin", "w.npy"]
    codes = np.load(tmp_path / "scratch" / "w.npy")
    out = np.load(tmp_path / "scratch" / "out.npz")["out"]
    want = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32) * np.float32(0.5)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))


def test_every_example_has_an_mlir_opt_round_trip():
    """The README says the mlir-opt tests round-trip every example: one
    ``test/lit/mlir-opt/example_NAME.test`` per ``examples/NAME.mlir``,
    compiling that example, marked ``REQUIRES: mlir-opt`` and, when the
    example uses an FP4 type (MLIR 20 or later), ``mlir-opt-f4``."""
    examples = sorted(p.stem for p in (ROOT / "examples").glob("*.mlir"))
    tests = sorted(p.stem.removeprefix("example_") for p in (ROOT / "test/lit/mlir-opt").glob("example_*.test"))
    assert tests == examples
    for name in examples:
        test = (ROOT / f"test/lit/mlir-opt/example_{name}.test").read_text()
        fp4 = re.search(r"\b(f4E2M1FN|f8E8M0FNU)\b", (ROOT / f"examples/{name}.mlir").read_text())
        (requires,) = re.findall(r"^# REQUIRES: (.*)$", test, re.M)
        assert requires == ("mlir-opt, mlir-opt-f4" if fp4 else "mlir-opt"), name
        assert f"%examples/{name}.mlir --emit=mlir -p ''" in test, name


def test_embedding_example_runs(tmp_path, monkeypatch, capsys):
    """The README's Python example runs as written, from the repository root."""
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "seq.bin").read_bytes().startswith(b"FSEQ")
    assert "fetch_seq.program" in capsys.readouterr().out


def test_builder_example_runs(capsys):
    """The README's builder example (fetchc.builder) runs as written and
    gives the programs and tables of examples/nvfp4_dequant_f32.mlir."""
    import fetchc

    text = (ROOT / "README.md").read_text()
    (code,) = [c for c in re.findall(r"```python\n(.*?)```", text, re.S) if "fetchc.builder" in c]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    built = scope["result"].seqbin
    want = fetchc.compile((ROOT / "examples" / "nvfp4_dequant_f32.mlir").read_text()).seqbin
    assert built.programs == want.programs and built.tables == want.tables
    assert capsys.readouterr().out.splitlines() == [
        f"{p.name} {p.limits} {p.strides} {p.fetch_size}" for p in want.programs
    ]


def test_run_example_runs():
    """The README's ``fetchc.run`` example runs as written and gives the
    MXFP4 decode: ``E2M1[code] × 2^(e − 127)`` per 32-code block, computed
    here with ml_dtypes (no scale in 120..134 makes a subnormal or a NaN)."""
    import ml_dtypes
    import numpy as np

    text = (ROOT / "README.md").read_text()
    (code,) = [c for c in re.findall(r"```python\n(.*?)```", text, re.S) if "fetchc.run(" in c]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    out, codes, escale = scope["out"], scope["codes"], scope["escale"]
    e2m1 = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    scale = np.ldexp(np.float32(1), escale.astype(np.int32) - 127).astype(np.float32)
    want = e2m1 * np.repeat(scale, 32, axis=1)
    assert out.dtype == np.float32 and out.shape == (4096, 4096)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))


def test_function_table_example(tmp_path):
    """The README's function-table commands (``fetchc run`` on
    examples/gelu_f8e4m3_activations.mlir against numpy's
    ``0.5·x·(1 + erf(x/√2))``) run as written and print their ``#>`` lines;
    the output is checked here too: every element is the numpy value rounded
    to f32 then to bf16 (no input is a NaN or reaches a tail)."""
    import math

    import ml_dtypes
    import numpy as np

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "scratch").mkdir()  # the first script makes it
    lines = doc_examples.sh_lines((ROOT / "README.md").read_text())
    (block,) = {ln.block for ln in lines for c in ln.commands if "gelu_f8e4m3_activations" in shlex.join(c)}
    ran, differ = doc_examples.run_sh_block([ln for ln in lines if ln.block == block], tmp_path, _host_argv, lambda c: False)
    assert ran == 3 and not differ, "\n\n".join(differ)
    x = np.load(tmp_path / "scratch/act.npy").view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    ref = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    want = ref.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    out = np.load(tmp_path / "scratch/gelu.npz")["out"]
    assert out.dtype == np.float32 and np.array_equal(out.view(np.uint32), want.view(np.uint32))
