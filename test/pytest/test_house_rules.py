"""House rules of the source that a reviewer would otherwise count by hand
(issue 27, architecture leftovers; docs/architecture.md "Tests"):

* no function or method of ``fetchc/``, ``dialects/`` or ``passes/`` is
  longer than 80 lines (decorators, signature and docstring included, as
  ``ruff format`` lays it out, which the lint checks);
* a ``# type: ignore`` names its error code and says why after it, and there
  are at most :data:`MAX_TYPE_IGNORES` of them: each one left is what mypy
  cannot see (private or monkey-patched attributes, a numpy stub, memo
  lookups on hot paths); a new one needs a reason the reviewer accepts, and
  this number raised with it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_FUNCTION_LINES = 80
MAX_TYPE_IGNORES = 9  # the 9th: xdsl_compat patches IRWithName.extract_valid_name (a classmethod with overloads)


def _sources() -> list[Path]:
    """The package's sources, each once (``fetchc/dialects`` and
    ``fetchc/passes`` are symbolic links to ``dialects/`` and ``passes/``)."""
    out = [p for p in (ROOT / "fetchc").rglob("*.py") if not {"dialects", "passes"} & set(p.relative_to(ROOT).parts[1:2])]
    return sorted(out + list((ROOT / "dialects").rglob("*.py")) + list((ROOT / "passes").rglob("*.py")))


def test_the_sources_are_found():
    names = {str(p.relative_to(ROOT)) for p in _sources()}
    assert {"fetchc/cli.py", "dialects/fetch.py", "passes/place_dm.py", "fetchc/target/facts.py"} <= names
    assert not any(n.startswith(("fetchc/dialects/", "fetchc/passes/")) for n in names)


def test_no_function_is_longer_than_80_lines():
    long = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                n = node.end_lineno - first + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.name} is {n} lines")
    assert not long, "\n".join(long)


_IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
_WITH_REASON = re.compile(r"\[[a-z-]+(?:, *[a-z-]+)*\]\s+#\s*\S.{8,}")


def test_type_ignores_are_few_and_each_says_why():
    found, bare = [], []
    for path in _sources():
        for i, line in enumerate(path.read_text().splitlines(), 1):
            m = _IGNORE.search(line)
            if m is None:
                continue
            where = f"{path.relative_to(ROOT)}:{i}"
            found.append(where)
            if not _WITH_REASON.match(m.group("rest")):
                bare.append(f"{where}: {line.strip()}")
    assert not bare, "a type: ignore without an error code and a reason:\n" + "\n".join(bare)
    assert len(found) <= MAX_TYPE_IGNORES, (
        f"{len(found)} type: ignores, more than {MAX_TYPE_IGNORES}: narrow the type instead (an assert, "
        "isinstance, typing.cast) or explain the new one and raise MAX_TYPE_IGNORES:\n" + "\n".join(found)
    )
