"""The English of fetchc's messages (issue 27, item 7): ``fetchc.wording``
chooses ``a``/``an`` as the interpolated word is read (a type name letter by
letter, a number as a number) and agrees a count with its noun, and no
message hard-codes an article before an interpolated word."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fetchc.wording import a_or_an, article, count

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "word, want",
    [
        # type names, read letter by letter: ef, eye, ee, es take "an"; bee, you take "a"
        ("f8E4M3FN", "an"), ("f4E2M1FN", "an"), ("f8E5M2", "an"), ("f32", "an"), ("i8", "an"), ("i16", "an"),
        ("i5", "an"), ("e8m0", "an"), ("si8", "an"), ("bf16", "a"), ("ui8", "a"),
        # acronyms and single letters
        ("DM", "a"), ("TRF", "a"), ("VRF", "a"), ("NPU", "an"), ("MLIR", "an"), ("x", "an"), ("k", "a"),
        # numbers, as said: eight, eleven, eighteen, eighty, eight hundred, eleven thousand
        ("8-byte", "an"), ("11-byte", "an"), ("18", "an"), ("80", "an"), ("800", "an"), ("11000", "an"),
        ("8 MiB", "an"), ("1-byte", "a"), ("16-byte", "a"), ("110", "a"), ("100", "a"), ("2", "a"),
        # words
        ("int", "an"), ("float32", "a"), ("int64", "an"), ("str", "a"), ("NoneType", "a"), ("index", "an"),
        ("unsigned", "an"), ("unit", "a"), ("table lookup", "a"), ("zero-point subtraction", "a"),
        ("'error'", "an"), ("'note'", "a"), ("", "a"),
    ],
)  # fmt: skip
def test_article(word, want):
    assert article(word) == want
    assert a_or_an(word) == f"{want} {word}"


def test_count():
    assert [count(n, "byte") for n in (0, 1, 2)] == ["0 bytes", "1 byte", "2 bytes"]
    assert count(1, "entry", "entries") == "1 entry" and count(7, "entry", "entries") == "7 entries"


_HARD_CODED = re.compile(r"(?:^|[\s(])an? $")
"""An f-string part ending in a bare article, right before an interpolation."""

MLIR_VERBATIM = {("fetchc/frontend/verify_diagnostics.py", "' diagnostic emitted when expecting a '")}
"""Messages copied from MLIR word for word (``--verify-diagnostics`` output
is compared with mlir-opt's), bad grammar included."""


def test_no_message_hard_codes_an_article_before_an_interpolation():
    """Every ``f"... a {x} ..."`` is ``f"... {a_or_an(x)} ..."``: an article
    written before a value it cannot see is wrong for half the values."""
    found = []
    for top in ("fetchc", "dialects", "passes"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.JoinedStr):
                    continue
                parts = node.values
                for part, nxt in zip(parts, parts[1:]):
                    if (
                        isinstance(part, ast.Constant)
                        and isinstance(nxt, ast.FormattedValue)
                        and _HARD_CODED.search(part.value.replace("'", "") if part.value.endswith("'") else part.value)
                        and not any(rel == f and w in part.value for f, w in MLIR_VERBATIM)
                    ):
                        found.append(f"{rel}:{node.lineno}: {part.value!r}")
    assert not found, "use fetchc.wording.a_or_an:\n" + "\n".join(found)
