"""The runnable examples of ``docs/*.md``: parse them, run them, compare.

A page's examples are two kinds of fenced blocks, taken in page order:

* an input file: a block whose info string names it, ```` ```mlir
  file=bad_cast.mlir ````; its text is written to that file;
* a session: a ```` ```console ```` block of ``$ COMMAND`` lines, each
  followed by the output it prints (stdout, then stderr).  A non-zero exit
  status shows as a last line ``[exit N]``.  A line ``...`` in the expected
  output stands for any number of lines (the page leaves them out).

Commands run in a fresh directory per page (``examples/`` links to the
repository's examples), in the order they appear, so a later command sees
the files an earlier one wrote.  ``fetchc ARGS`` runs in-process
(:func:`fetchc.cli.main`); ``python ARGS`` runs ``sys.executable``; any
other program (``xdsl-opt``, ``xxd``) is looked up next to
``sys.executable``, then on ``PATH``, and raises :class:`Unavailable` when
it is not installed.  There is no shell: no pipes, ``&&`` or redirections
(a page that needs them writes a ```` ```sh ```` block, which is not run).

A ```` ```sh ```` block (the README's) is a script a reader copies: ``#``
comment lines are notes, and lines starting ``#> `` right below a command
line are what that line prints (stdout, then stderr; ``...`` elides, as
above).  A command line may end in ``| head -n N`` (only its last command's
stdout is cut to N lines).  :func:`sh_lines` parses them; ``test_docs.py``
runs them and compares the ``#>`` lines.

Used by ``test/pytest/test_docs.py``.  To refresh the outputs of a page
(``console`` sessions and ``#>`` lines) after a deliberate change of
fetchc's messages (and then read the diff!)::

    .venv/bin/python test/pytest/doc_examples.py --update docs/ir.md README.md
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
_FILE = re.compile(r"\bfile=(\S+)")
ELLIPSIS = "..."


@dataclass
class FileBlock:
    name: str
    text: str


@dataclass
class Command:
    line: str
    expected: list[str]


@dataclass
class Session:
    commands: list[Command]
    start: int  # offset of the block's body in the page
    end: int


def parse(page: str) -> list[FileBlock | Session]:
    """The input files and console sessions of a page, in order."""
    out: list[FileBlock | Session] = []
    for m in _FENCE.finditer(page):
        info, body = m.group(1).strip(), m.group(2)
        if info == "console":
            cmds: list[Command] = []
            for line in body.splitlines():
                if line.startswith("$ "):
                    cmds.append(Command(line[2:], []))
                elif cmds:
                    cmds[-1].expected.append(line)
            out.append(Session(cmds, m.start(2), m.end(2)))
        elif (f := _FILE.search(info)) is not None:
            out.append(FileBlock(f.group(1), body))
    return out


class Unavailable(Exception):
    """A command whose program is not installed here."""


class _Stdout(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


def run_command(line: str, cwd: Path) -> list[str]:
    """Run one command line in ``cwd``; its output lines (stdout, then
    stderr, then ``[exit N]`` when N is not 0), right-stripped."""
    argv = shlex.split(line)
    if argv[0] == "fetchc":
        from fetchc.cli import main

        out, err = _Stdout(io.BytesIO(), encoding="utf-8"), io.StringIO()
        old = (sys.stdout, sys.stderr, os.getcwd())
        sys.stdout, sys.stderr = out, err
        os.chdir(cwd)
        try:
            code = main(argv[1:])
            out.flush()
        finally:
            sys.stdout, sys.stderr = old[0], old[1]
            os.chdir(old[2])
        text = out.buffer.getvalue().decode("utf-8", "replace") + err.getvalue()
    else:
        if argv[0] == "python":
            exe = sys.executable
        else:
            here = Path(sys.executable).parent / argv[0]
            exe = str(here) if here.exists() else shutil.which(argv[0])
            if exe is None:
                raise Unavailable(argv[0])
        p = subprocess.run([exe, *argv[1:]], cwd=cwd, capture_output=True, text=True)
        code, text = p.returncode, p.stdout + p.stderr
    lines = [x.rstrip() for x in text.splitlines()]
    if code:
        lines.append(f"[exit {code}]")
    return lines


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` equals ``expected``, where an expected line ``...``
    matches any run of lines (also none); trailing spaces never count."""
    exp = [x.rstrip() for x in expected]
    while exp and not exp[-1]:
        exp.pop()
    act = list(actual)
    while act and not act[-1]:
        act.pop()
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if x == ELLIPSIS else re.escape(x) + r"\n" for x in exp
    )
    return re.fullmatch(pattern, "".join(a + "\n" for a in act)) is not None


def workdir() -> tempfile.TemporaryDirectory:
    d = tempfile.TemporaryDirectory(prefix="fetchc-docs-")
    (Path(d.name) / "examples").symlink_to(ROOT / "examples")
    return d


def run_blocks(blocks: list[FileBlock | Session], cwd: Path):
    """Yield ``(command, actual lines)`` for every command of ``blocks``
    (:func:`parse`), run in ``cwd``."""
    for block in blocks:
        if isinstance(block, FileBlock):
            (cwd / block.name).write_text(block.text)
            continue
        for cmd in block.commands:
            try:
                yield cmd, run_command(cmd.line, cwd)
            except Unavailable:
                yield cmd, None


SH_OUTPUT = "#> "
"""The prefix of a line of an ``sh`` block that shows what the command line
above it prints."""

_SH_BLOCK = re.compile(r"^```(?:sh|bash)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_HEAD = ["|", "head", "-n"]


@dataclass
class ShLine:
    """One command line of an ``sh`` block: its ``&&`` chain, the ``head -n``
    its last command's stdout goes through, and the ``#>`` lines below it
    (``None``: the page shows no output) with their span in the page."""

    block: int
    line: int  # 1-based line number in the page
    commands: list[list[str]]
    head: int | None
    expected: list[str] | None
    span: tuple[int, int]  # the #> lines' [start, end) in the page (empty at the line's end when none)


def sh_lines(page: str) -> list[ShLine]:
    """Every command line of the ``sh`` / ``bash`` blocks of a page, in order.
    Only ``&&`` chains and a final ``| head -n N`` are understood: any other
    pipe, ``;``, ``||`` or redirection raises ``ValueError``."""
    out: list[ShLine] = []
    for b, m in enumerate(_SH_BLOCK.finditer(page)):
        pos, first = m.start(1), page[: m.start(1)].count("\n") + 1
        lines = m.group(1).splitlines(keepends=True)
        for i, text in enumerate(lines):
            pos += len(text)
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            lex = shlex.shlex(text, posix=True, punctuation_chars="&|;<>")
            lex.whitespace_split, lex.commenters = True, "#"
            tokens = list(lex)
            head = None
            if tokens[-4:-1] == _HEAD and tokens[-1].isdigit():
                tokens, head = tokens[:-4], int(tokens[-1])
            if set(tokens) & {"|", ";", "<", ">", "||", "&"}:
                raise ValueError(f"line {first + i}: only && chains and a final '| head -n N' are supported")
            commands: list[list[str]] = [[]]
            for tok in tokens:
                if tok == "&&":
                    commands.append([])
                else:
                    commands[-1].append(tok)
            shown = lines[i + 1 :]
            n = next((k for k, t in enumerate(shown) if not t.startswith(SH_OUTPUT.rstrip())), len(shown))
            expected = [t.rstrip("\n")[len(SH_OUTPUT) :] for t in shown[:n]] if n else None
            end = pos + sum(len(t) for t in shown[:n])
            out.append(ShLine(b, first + i, [c for c in commands if c], head, expected, (pos, end)))
    return out


def sh_output(stdout: str, stderr: str, head: int | None) -> list[str]:
    """What a command line prints, as ``#>`` lines compare it: its stdout
    (cut to ``head`` lines), then its stderr, right-stripped."""
    out = stdout.splitlines()
    if head is not None:
        out = out[:head]
    return [x.rstrip() for x in out + stderr.splitlines()]


def run_sh_block(lines: list[ShLine], cwd: Path, host_argv, skip) -> tuple[int, list[str]]:
    """Run the command lines ``lines`` (one block's, in order) in ``cwd``:
    each command through ``host_argv(argv)`` as a subprocess, but those for
    which ``skip(command)`` is true.  Raises ``AssertionError`` for a command
    that exits non-zero.  Returns how many ran, and a text per line whose
    ``#>`` lines differ from what it printed."""
    ran, differ = 0, []
    for ln in lines:
        printed: list[str] = []
        for argv in ln.commands:
            command = shlex.join(argv)
            if skip(command):
                continue
            r = subprocess.run(host_argv(argv), cwd=cwd, capture_output=True, text=True)
            assert r.returncode == 0, f"line {ln.line}: {command}\nexit {r.returncode}\n{r.stderr}"
            printed += sh_output(r.stdout, r.stderr, ln.head if argv is ln.commands[-1] else None)
            ran += 1
        if ln.expected is not None and not matches(ln.expected, printed):
            differ.append(f"line {ln.line}: the page says\n" + "\n".join(ln.expected) + "\n--- it prints\n"
                          + "\n".join(printed))  # fmt: skip
    return ran, differ


SH_SKIPPED = re.compile(r"python3 -m venv .*|(\.venv/bin/)?pip install .*")
"""Commands :func:`update` does not run (they make the environment it runs in)."""


def _run_sh_line(ln: ShLine, cwd: Path) -> list[str]:
    """Run a command line in ``cwd`` as :func:`run_command` runs a session's
    commands (``.venv/bin/fetchc`` in-process, ``.venv/bin/python`` as this
    interpreter); its output lines (:func:`sh_output`)."""
    out: list[str] = []
    for argv in ln.commands:
        if SH_SKIPPED.fullmatch(shlex.join(argv)):
            continue
        tool = argv[0].removeprefix(".venv/bin/")
        line = shlex.join(["python" if tool in ("python", "python3") else tool, *argv[1:]])
        lines = run_command(line, cwd)
        if lines and lines[-1].startswith("[exit "):
            raise RuntimeError(f"line {ln.line}: {shlex.join(argv)} failed:\n" + "\n".join(lines))
        out += lines[: ln.head] if argv is ln.commands[-1] and ln.head is not None else lines
    return out


def _update_sh(page: str) -> tuple[str, int]:
    """``page`` with every ``#>`` output of its ``sh`` blocks replaced by
    what the command line prints now (each block run in order in a fresh
    directory; ``...`` elisions that still match are kept), and how many
    changed.  A command with no ``#>`` lines keeps none."""
    lines = sh_lines(page)
    actual: dict[int, list[str]] = {}
    for block in sorted({ln.block for ln in lines}):
        todo = [ln for ln in lines if ln.block == block]
        if not any(ln.expected is not None for ln in todo):
            continue
        with workdir() as d:
            (Path(d) / "tools").symlink_to(ROOT / "tools")
            (Path(d) / "scratch").mkdir()
            for ln in todo:
                actual[ln.line] = _run_sh_line(ln, Path(d))
    pieces, pos, changed = [], 0, 0
    for ln in lines:
        if ln.expected is None or matches(ln.expected, actual[ln.line]):
            continue
        changed += 1
        pieces += [page[pos : ln.span[0]], "".join(f"{SH_OUTPUT}{x}".rstrip() + "\n" for x in actual[ln.line])]
        pos = ln.span[1]
    return "".join([*pieces, page[pos:]]), changed


def update(path: Path) -> int:
    """Rewrite every session of ``path`` with its actual outputs, keeping
    the ``...`` elisions that still match, and the ``#>`` outputs of its
    ``sh`` blocks (:func:`sh_lines`).  Returns how many commands changed."""
    text, changed_sh = _update_sh(path.read_text())
    path.write_text(text)
    return changed_sh + _update_sessions(path)


def _update_sessions(path: Path) -> int:
    page = path.read_text()
    blocks = parse(page)
    changed = 0
    with workdir() as d:
        actual = {id(c): a for c, a in run_blocks(blocks, Path(d))}
    pieces, pos = [], 0
    for block in blocks:
        if not isinstance(block, Session):
            continue
        body = []
        for c in block.commands:
            a = actual[id(c)]
            keep = a is None or matches(c.expected, a)
            changed += not keep
            body.append("$ " + c.line)
            body += c.expected if keep else a
        pieces += [page[pos : block.start], "\n".join(body) + "\n"]
        pos = block.end
    pieces.append(page[pos:])
    path.write_text("".join(pieces))
    return changed


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--update":
        sys.exit("usage: doc_examples.py --update docs/PAGE.md ...")
    for p in sys.argv[2:]:
        print(f"{p}: {update(Path(p))} command outputs updated")
