"""The README's two set-up commands stay true: CI runs the README's test
command verbatim, and the main command names a shipped example."""

import re
from pathlib import Path

from served import FETCHC

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    head = text[: text.index("\n## ", text.index("```"))]
    return [c.strip() for c in re.findall(r"```(?:sh|bash)?\n(.*?)```", head, re.S)]


def test_readme_starts_with_two_commands():
    cmds = _readme_commands()
    assert len(cmds) == 2, cmds


def test_ci_runs_the_readme_test_command():
    test_cmd = _readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd in ci, f"{test_cmd!r} is not a line of .ci/run"


def test_main_command_uses_a_shipped_example():
    main_cmd = _readme_commands()[0]
    examples = re.findall(r"examples/[\w.-]+\.mlir", main_cmd)
    assert examples, main_cmd
    for e in examples:
        assert (ROOT / e).is_file(), e
    # the quick start runs the 256-slice NVFP4 decode on a whole weight (hardware.md §1a)
    assert "fetchc run examples/nvfp4_dequant_f32.mlir --arg codes=w.npy" in main_cmd


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


def test_run_command_example(tmp_path):
    """The README's ``fetchc run`` command lines run as written (from the
    repository root, with the venv's tools) and print what the comment says;
    the value is checked against ml_dtypes: E2M1[code] × 1.0 × 0.5."""
    import shlex
    import subprocess
    import sys

    import ml_dtypes
    import numpy as np

    text = (ROOT / "README.md").read_text()
    (block,) = [
        b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "fetchc run examples/nvfp4" in b and "pip install" not in b
    ]
    lines = [ln for ln in block.splitlines() if ln.strip()]
    assert len(lines) == 3
    printed_comment = lines[2].split("#", 1)[1].strip()
    for ln in lines:
        argv = shlex.split(ln, comments=True)
        tool = argv[0]
        assert tool in (".venv/bin/python", ".venv/bin/fetchc"), tool
        argv = [*(FETCHC if tool.endswith("fetchc") else [sys.executable]), *argv[1:]]
        argv = [str(ROOT / a) if a.startswith("examples/") else a for a in argv]
        r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == printed_comment
    codes = np.load(tmp_path / "w.npy")
    out = np.load(tmp_path / "out.npz")["out"]
    want = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32) * np.float32(0.5)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))


def test_function_table_example(tmp_path):
    """The README's function-table commands (``fetchc run`` on
    examples/gelu_f8e4m3_activations.mlir against numpy's
    ``0.5·x·(1 + erf(x/√2))``) run as written and print what the comment
    says; the output is checked here too: every element is the numpy value
    rounded to f32 then to bf16 (no input is a NaN or reaches a tail)."""
    import math
    import shlex
    import subprocess
    import sys

    import ml_dtypes
    import numpy as np

    text = (ROOT / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "gelu_f8e4m3_activations" in b]
    lines = [ln for ln in block.splitlines() if ln.strip()]
    assert len(lines) == 3
    printed_comment = lines[2].split("#", 1)[1].strip()
    for ln in lines:
        argv = shlex.split(ln, comments=True)
        assert argv[0] in (".venv/bin/python", ".venv/bin/fetchc"), argv[0]
        argv = [sys.executable, *(["-m", "fetchc.cli"] if argv[0].endswith("fetchc") else []), *argv[1:]]
        argv = [str(ROOT / a) if a.startswith("examples/") else a for a in argv]
        r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == printed_comment
    x = np.load(tmp_path / "act.npy").view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    ref = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    want = ref.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    out = np.load(tmp_path / "gelu.npz")["out"]
    assert out.dtype == np.float32 and np.array_equal(out.view(np.uint32), want.view(np.uint32))
