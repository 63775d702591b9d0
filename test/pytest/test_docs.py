"""The documentation stays true and self-contained.

* No tracked Markdown file links outside the repository (someone who clones
  it has nothing else), and none mentions ``../shared``.
* Every relative link between tracked Markdown files resolves: the file
  exists and, for ``page.md#anchor``, the page has a heading with that
  GitHub anchor.
* Every ```` ```console ```` example of ``docs/*.md`` prints what the page
  says it prints (``doc_examples.py``: commands run in-process, in page
  order, in a scratch directory; ``...`` lines elide output).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import doc_examples

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


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_console_examples(page: Path):
    blocks = doc_examples.parse(page.read_text())
    if not any(isinstance(b, doc_examples.Session) for b in blocks):
        pytest.skip("no console examples")
    failures = []
    with doc_examples.workdir() as d:
        for cmd, actual in doc_examples.run_blocks(blocks, Path(d)):
            if actual is None:  # a program that is not installed here (xxd)
                continue
            if not doc_examples.matches(cmd.expected, actual):
                failures.append(
                    f"$ {cmd.line}\n--- the page says:\n" + "\n".join(cmd.expected)
                    + "\n--- fetchc prints:\n" + "\n".join(actual)
                )
    assert not failures, f"{page.name}: {len(failures)} example(s) differ\n\n" + "\n\n".join(failures)
