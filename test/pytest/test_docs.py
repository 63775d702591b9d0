"""The documentation stays true and self-contained.

* No tracked Markdown file links outside the repository (someone who clones
  it has nothing else), and none mentions ``../shared``.
* Every relative link between tracked Markdown files resolves: the file
  exists and, for ``page.md#anchor``, the page has a heading with that
  GitHub anchor.
* Every ```` ```console ```` example of ``docs/*.md`` prints what the page
  says it prints (``doc_examples.py``: commands run in-process, in page
  order, in a scratch directory; ``...`` lines elide output).  A program
  that is not installed here is allowed only when :data:`OPTIONAL_PROGRAMS`
  says why.
* Every command of every ```` ```sh ```` block of ``README.md``,
  ``docs/*.md`` and ``examples/README.md`` runs as shown and exits 0, or is
  listed in :data:`SH_NOT_RUN` with the reason it is not run here (it
  installs packages, is the test suite itself, runs for minutes, needs
  optional extras); every entry of that list still matches a command.  A
  command line followed by ``#> `` lines prints exactly those
  (``doc_examples.sh_lines``; ``doc_examples.py --update`` refreshes them).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import doc_examples
from served import FETCHC

ROOT = doc_examples.ROOT
DOCS = sorted((ROOT / "docs").glob("*.md"))


def _tracked_markdown() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        files = [ROOT / line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every .md outside .venv
        files = [p for p in ROOT.rglob("*.md") if ".venv" not in p.parts]
    return sorted(set(files) | set(DOCS))


_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans (links there are
    not links)."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def links(text: str) -> list[str]:
    """The targets of the inline links, images and reference definitions of
    a Markdown text."""
    prose = _prose(text)
    return _INLINE_LINK.findall(prose) + _REF_DEF.findall(prose)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: the rendered text (code spans and
    link markup stripped), lower-cased, without punctuation but ``-`` and
    ``_``, spaces turned into ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page (a repeated one also as ``-1``, ``-2``...)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for m in _HEADING.finditer(_FENCE.sub("", text)):
        a = github_anchor(m.group(2))
        n = seen.get(a, 0)
        out.add(a if n == 0 else f"{a}-{n}")
        seen[a] = n + 1
    return out


def _is_external(target: str) -> bool:
    return bool(re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target))


def test_the_link_extraction_sees_links():
    text = "See [a](x/y.md#z), ![i](img.png) and `[no](code.md)`.\n\n[r]: ../r.md\n```\n[no](f.md)\n```\n"
    assert links(text) == ["x/y.md#z", "img.png", "../r.md"]
    assert github_anchor("2a. Kernels, tensors and placement") == "2a-kernels-tensors-and-placement"
    assert github_anchor("`fetch_seq.program`") == "fetch_seqprogram"
    assert github_anchor("Rule 3: `i5`/`i9` reach only the Contraction Engine") == (
        "rule-3-i5i9-reach-only-the-contraction-engine"
    )


@pytest.mark.parametrize("page", _tracked_markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_link_leaves_the_repository(page: Path):
    bad = []
    for target in links(page.read_text()):
        if "../shared" in target:
            bad.append(target)
            continue
        if _is_external(target) or target.startswith("#"):
            continue
        resolved = (page.parent / target.split("#", 1)[0]).resolve()
        if resolved != ROOT and ROOT not in resolved.parents:
            bad.append(target)
    assert not bad, f"{page.relative_to(ROOT)} links outside the repository: {bad}"


@pytest.mark.parametrize("page", _tracked_markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_mention_of_shared(page: Path):
    """The specs under ../shared are not part of the repository: a page that
    names them sends readers to files they do not have."""
    lines = [i for i, line in enumerate(page.read_text().splitlines(), 1) if "../shared" in line]
    assert not lines, f"{page.relative_to(ROOT)} mentions ../shared on lines {lines}"


@pytest.mark.parametrize("page", _tracked_markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path):
    missing = []
    for target in links(page.read_text()):
        if _is_external(target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            missing.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            missing.append(target)
    assert not missing, f"{page.relative_to(ROOT)} has links that do not resolve: {missing}"


OPTIONAL_PROGRAMS = {
    "xdsl-opt": "installed with fetchc (xDSL is a dependency), so always there in practice",
    "xxd": "a hex dump tool from vim (Debian's xxd); the page shows what it prints",
}
"""Programs a ``console`` example may use that need not be installed, and
why it is fine to skip their commands where they are not."""


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_console_examples(page: Path):
    blocks = doc_examples.parse(page.read_text())
    if not any(isinstance(b, doc_examples.Session) for b in blocks):
        pytest.skip("no console examples")
    failures = []
    with doc_examples.workdir() as d:
        for cmd, actual in doc_examples.run_blocks(blocks, Path(d)):
            if actual is None:  # a program that is not installed here
                program = shlex.split(cmd.line)[0]
                if program not in OPTIONAL_PROGRAMS:
                    failures.append(f"$ {cmd.line}\n--- {program} is not installed, and OPTIONAL_PROGRAMS does not say why "
                                    "that is fine")
                continue
            if not doc_examples.matches(cmd.expected, actual):
                failures.append(
                    f"$ {cmd.line}\n--- the page says:\n" + "\n".join(cmd.expected)
                    + "\n--- fetchc prints:\n" + "\n".join(actual)
                )
    assert not failures, f"{page.name}: {len(failures)} example(s) differ\n\n" + "\n\n".join(failures)


SH_PAGES = [ROOT / "README.md", *DOCS, ROOT / "examples" / "README.md"]
"""The pages whose ``sh`` blocks are checked (those without any are left
out of the parametrisations below)."""

SH_NOT_RUN = {
    r"python3 -m venv \.venv": "creates the environment the tests run in; .ci/run creates it from scratch and runs "
    "the README's commands verbatim (test_readme.py)",
    r"(\.venv/bin/)?pip install .*": "installs packages (network, minutes); .ci/run installs '.[test]', the other "
    "extras are optional",
    r"\.venv/bin/lit -sv test/lit": "is the lit half of the test suite itself",
    r"\.venv/bin/python -m pytest -q -n auto": "is the pytest half of the test suite itself",
    r"\.venv/bin/ruff (check|format --check) fetchc dialects passes": "is the lint (.ci/run runs it); ruff is in the "
    "[lint] extra, which the tests do not install",
    r"\.venv/bin/mypy": "is the lint's type check (.ci/run runs it); mypy is in the [lint] extra",
    r"\.venv/bin/python tools/fuzz\.py --target all --seconds 600": "fuzzes for 10 minutes; test_fuzz_corpus.py "
    "replays what it found",
    r"(\.venv/bin/)?python tools/real_weights\.py.*": "needs the optional [weights] extras, the MiniLM weights package "
    "(or a model file); test_real_weights.py runs its pipeline on a synthetic weight, and on the real model when "
    "they are installed",
}
"""Commands of ``sh`` blocks that this test does not run, each with the
reason; the regular expression must match the whole command (one command of
an ``&&`` chain, without its trailing comment)."""


def sh_commands(text: str) -> list[tuple[int, int, str, list[str]]]:
    """The commands of the ``sh`` / ``bash`` blocks of a page: ``(block
    index, line number, command text, argv)`` for each command of each line
    (``&&`` chains split, trailing ``# ...`` comments and a final ``| head
    -n N`` dropped; :func:`doc_examples.sh_lines`)."""
    return [(ln.block, ln.line, shlex.join(a), a) for ln in doc_examples.sh_lines(text) for a in ln.commands]


SH_BLOCKS_RUN_ELSEWHERE = {
    "README.md": {
        "-o scratch/seq.bin": "test_readme.py::test_first_script_runs_as_shown runs it and checks its values",
        "gelu_f8e4m3_activations": "test_readme.py::test_function_table_example runs it and checks its values",
    },
}
"""``sh`` blocks (by page, and a text one of the block's commands holds)
that another test runs the same way, with more checks: running them here
too would only cost time."""


def _not_run(command: str) -> str | None:
    return next((why for pattern, why in SH_NOT_RUN.items() if re.fullmatch(pattern, command)), None)


def _host_argv(argv: list[str]) -> list[str]:
    """A page's command as this environment runs it: ``.venv/bin/fetchc`` /
    ``fetchc`` as ``python -m fetchc.cli``, ``.venv/bin/python`` / ``python``
    / ``python3`` as this interpreter."""
    tool = argv[0].removeprefix(".venv/bin/")
    if tool == "fetchc":
        return [*FETCHC, *argv[1:]]
    if tool in ("python", "python3"):
        return [sys.executable, *argv[1:]]
    if tool == "mkdir" and (found := shutil.which("mkdir")):  # the README's `mkdir -p scratch`
        return [found, *argv[1:]]
    raise AssertionError(f"{argv[0]}: a program this test does not know; run it here or list it in SH_NOT_RUN")


def test_sh_command_parsing():
    text = "x\n```sh\na && b 'c d' # e\n# only a comment\nf | head -n 2\n#> one\n#>\n```\n```console\n$ g\n```\n"
    assert [(c[1], c[2]) for c in sh_commands(text)] == [(3, "a"), (3, "b 'c d'"), (5, "f")]
    a, f = doc_examples.sh_lines(text)
    assert (a.head, a.expected, f.head, f.expected) == (None, None, 2, ["one", ""])
    assert text[f.span[0] : f.span[1]] == "#> one\n#>\n"
    with pytest.raises(ValueError, match="only && chains"):
        doc_examples.sh_lines("```sh\na | grep b\n```\n")


def test_every_not_run_entry_names_a_shown_command():
    shown = [c for page in SH_PAGES for _, _, c, _ in sh_commands(page.read_text())]
    stale = [p for p in SH_NOT_RUN if not any(re.fullmatch(p, c) for c in shown)]
    assert not stale, f"SH_NOT_RUN entries that match no command of the docs: {stale}"


@pytest.mark.parametrize(
    "page", [p for p in SH_PAGES if sh_commands(p.read_text())], ids=lambda p: str(p.relative_to(ROOT))
)
def test_sh_commands_run_as_shown(page: Path, tmp_path: Path):
    """Each block runs in its own scratch directory, its commands in order
    (``examples/`` and ``tools/`` link to the repository's; ``scratch/``,
    which the README's first block makes, exists), and every command exits
    0; a command line with ``#>`` lines prints them."""
    lines = doc_examples.sh_lines(page.read_text())
    ran, differ = 0, []
    elsewhere = SH_BLOCKS_RUN_ELSEWHERE.get(str(page.relative_to(ROOT)), {})
    skipped = {ln.block for ln in lines for a in ln.commands for text in elsewhere if text in shlex.join(a)}
    assert len(skipped) == len(elsewhere), "an SH_BLOCKS_RUN_ELSEWHERE entry names no block"
    for block in sorted({ln.block for ln in lines} - skipped):
        cwd = tmp_path / f"block{block}"
        (cwd / "scratch").mkdir(parents=True)
        for name in ("examples", "tools"):
            (cwd / name).symlink_to(ROOT / name)
        n, d = doc_examples.run_sh_block([ln for ln in lines if ln.block == block], cwd, _host_argv, _not_run)
        ran, differ = ran + n, differ + d
    assert not differ, "\n\n".join(differ) + f"\n(refresh: doc_examples.py --update {page.relative_to(ROOT)})"
    if not ran:
        pytest.skip("every command of the page is in SH_NOT_RUN")


_NOT_RUN = [
    (f"{page.relative_to(ROOT)}:{line}: {command}", why)
    for page in SH_PAGES
    for _, line, command, _ in sh_commands(page.read_text())
    if (why := _not_run(command)) is not None
]


@pytest.mark.parametrize("where, why", _NOT_RUN, ids=[w for w, _ in _NOT_RUN])
def test_sh_command_not_run(where: str, why: str):
    """One skipped test per command that is shown but not run here, with the
    reason (``pytest -rs`` lists them)."""
    pytest.skip(f"not run: {why}")
