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

Used by ``test/pytest/test_docs.py``.  To refresh the outputs of a page
after a deliberate change of fetchc's messages (and then read the diff!)::

    .venv/bin/python test/pytest/doc_examples.py --update docs/ir.md
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


def update(path: Path) -> int:
    """Rewrite every session of ``path`` with its actual outputs, keeping
    the ``...`` elisions that still match.  Returns how many commands
    changed."""
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
