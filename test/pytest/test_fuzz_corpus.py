"""Replay ``test/fuzz-corpus``: every input with its expected outcome.

``test/fuzz-corpus/MANIFEST.json`` maps a corpus file to what fetchc must do
with it::

    "mlir/zp_just_above_i4.mlir": {
        "tool": "compile" | "dis" | "sim",
        "exit": 0 | 1,
        "stderr_contains": "zero point 8 is outside ...",   (optional)
        "stderr_excludes": ["out of memory"],               (optional)
        "located": true,          (compile errors: a file:line:col: error:)
        "args": ["--emit=mlir"],  (optional extra arguments)
        "file": "seqbin/x.bin",   (optional: the key is then "<file>#<tool>")
        "xfail": "why",           (a known, routed bug)
        "class": "...", "origin": "...", "note": "..."   (documentation)
    }

Every entry, whatever its outcome, must also meet the general robustness
oracle of ``tools/fuzz.py``: exit 0 or 1, no traceback or ``internal
error``, an ``error:`` line on failure, a failing run leaves an existing
output file untouched and leaves no temporary file, and a successful compile
writes a ``seq.bin`` that ``fetchc.seqbin.read`` accepts, and nothing on stderr
(or in ``dis``'s text) is a character a terminal would act on.

``compile`` and ``dis`` run in-process through :func:`fetchc.cli.main` (with
an alarm as hang guard); ``sim`` runs in a subprocess under ``RLIMIT_AS``.
"""

from __future__ import annotations

import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fetchc.cli import main
from fetchc.seqbin import read

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "test" / "fuzz-corpus"
MANIFEST: dict[str, dict] = json.loads((CORPUS / "MANIFEST.json").read_text())
SENTINEL = b"an existing output file: a failing run must leave it alone\n"
TIME_LIMIT = 60  # seconds per input (the slowest takes well under a second)
SIM_MEMORY = 1 << 30


class _Timeout(BaseException):
    pass


def _run_inprocess(argv: list[str], cwd: Path) -> tuple[int, str, bytes]:
    out_buf, err_buf = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_buf, encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(err_buf, encoding="utf-8", errors="replace", write_through=True)
    saved = sys.stdout, sys.stderr, os.getcwd()

    def on_alarm(signum, frame):
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    os.chdir(cwd)
    sys.stdout, sys.stderr = out, err
    signal.alarm(TIME_LIMIT)
    try:
        rc = main(argv)
    except _Timeout:
        pytest.fail(f"fetchc {' '.join(argv)} did not finish within {TIME_LIMIT} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        sys.stdout, sys.stderr = saved[0], saved[1]
        os.chdir(saved[2])
    return rc, err_buf.getvalue().decode("utf-8", "replace"), out_buf.getvalue()


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (SIM_MEMORY, SIM_MEMORY))


def _run_sim(argv: list[str], cwd: Path) -> tuple[int, str, bytes]:
    env = dict(os.environ, FETCHC_SIM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        p = subprocess.run(
            [sys.executable, "-c", "import sys; from fetchc.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
            cwd=cwd, capture_output=True, timeout=TIME_LIMIT, env=env, preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"fetchc {' '.join(argv)} did not finish within {TIME_LIMIT} s")
    return p.returncode, p.stderr.decode("utf-8", "replace"), p.stdout


def _sim_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("fetchc.golden.sim") is not None


def _without_snippets(err: str) -> str:
    """stderr without the echoed source line + caret after each diagnostic
    (a corpus input may itself contain 'internal error')."""
    lines = err.splitlines()
    caret = re.compile(r"^\s*\^\s*$")
    header = re.compile(r"^(?:.*?: )?(?:error|warning|note|remark): ")
    keep, i = [], 0
    while i < len(lines):
        keep.append(lines[i])
        i += 3 if header.match(lines[i]) and i + 2 < len(lines) and caret.match(lines[i + 2]) else 1
    return "\n".join(keep)


def test_manifest_lists_every_corpus_file():
    files = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file() and p.name != "MANIFEST.json"}
    listed = {e.get("file", k.split("#")[0]) for k, e in MANIFEST.items()}
    assert files == listed, f"unlisted: {sorted(files - listed)}; missing: {sorted(listed - files)}"


@pytest.mark.parametrize("key", sorted(MANIFEST))
def test_corpus_entry(key: str, tmp_path: Path, request):
    e = MANIFEST[key]
    if e.get("xfail"):
        request.applymarker(pytest.mark.xfail(reason=e["xfail"], strict=False))
    src = CORPUS / e.get("file", key.split("#")[0])
    tool = e["tool"]
    data = src.read_bytes()
    args = list(e.get("args", []))
    if tool == "compile":
        (tmp_path / "in.mlir").write_bytes(data)
        (tmp_path / "out.bin").write_bytes(SENTINEL)
        rc, err, _ = _run_inprocess(["in.mlir", "-o", "out.bin", *args], tmp_path)
    elif tool == "dis":
        (tmp_path / "in.bin").write_bytes(data)
        (tmp_path / "out.bin").write_bytes(SENTINEL)
        rc, err, _ = _run_inprocess(["dis", "in.bin", "-o", "out.bin", *args], tmp_path)
    else:
        if not _sim_available():
            pytest.skip("fetchc.golden.sim is not available")
        (tmp_path / "in.bin").write_bytes(data)
        (tmp_path / "dm.bin").write_bytes(bytes(1 << 19))
        (tmp_path / "out.bin").write_bytes(SENTINEL)
        rc, err, _ = _run_sim(["sim", "in.bin", "--dm", "dm.bin", "-o", "out.bin", *args], tmp_path)

    # The general oracle.
    clean = _without_snippets(err)
    assert rc in (0, 1), f"exit {rc}:\n{err}"
    assert "Traceback (most recent call last)" not in clean, err
    assert "internal error" not in clean, err
    for bad in e.get("stderr_excludes", []):
        assert bad not in clean, err
    # Nothing a terminal would act on (ir.md §5): stderr, and dis's text.
    texts = [err] + ([(tmp_path / "out.bin").read_bytes().decode("utf-8", "replace")] if tool == "dis" and rc == 0 else [])
    for text in texts:
        unsafe = sorted({f"U+{ord(c):04X}" for c in text if not c.isprintable() and c != "\n"})
        assert not unsafe, f"unescaped {unsafe}:\n{text}"
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".") or p.suffix == ".tmp")
    assert not leftovers, f"temporary files left behind: {leftovers}"
    out = (tmp_path / "out.bin").read_bytes()
    if rc == 1:
        assert re.search(r"(?m)(^|: )error: ", err), f"exit 1 without an error: line:\n{err}"
        assert out == SENTINEL, "a failing run changed the existing output file"
    elif tool == "compile" and "--verify-diagnostics" in args:
        assert out == SENTINEL, "--verify-diagnostics wrote an output file"
    elif tool == "compile" and "--emit=mlir" not in args and "--emit=seq" not in args:
        read(out)  # the seq.bin reads back

    # This entry's expectation.
    assert rc == e["exit"], f"expected exit {e['exit']}, got {rc}:\n{err}"
    if "stderr_contains" in e:
        assert e["stderr_contains"] in err, err
    if e.get("located"):
        assert re.search(r"(?m)^in\.mlir:\d+:\d+: error: ", err), f"not a located error:\n{err}"
