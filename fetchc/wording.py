"""The English of fetchc's messages: the indefinite article before an
interpolated word, and a count with its noun.  Every message that puts a
type name, a number or a Python type before ``a``/``an``, or a count that
can be 1 before a noun, goes through these two (docs/architecture.md, one
home per rule).  Imports nothing, so every module may use it (the
``fetchc.target`` modules included).

>>> a_or_an("f8E4M3FN"), a_or_an("bf16"), a_or_an("i8"), a_or_an("8-byte"), a_or_an("int")
('an f8E4M3FN', 'a bf16', 'an i8', 'an 8-byte', 'an int')
>>> count(1, "element"), count(3, "entry", "entries")
('1 element', '3 entries')
"""

from __future__ import annotations

import re

__all__ = ["a_or_an", "article", "count"]

_SPELLED = re.compile(r"[A-Za-z]{1,2}\d|[A-Z]{2,}\b|[A-Za-z]\b")
"""A word read letter by letter: a type name (``f32``, ``bf16``, ``i8``,
``f8E4M3FN``, ``e8m0``, ``ui8``), an acronym (``DM``, ``TRF``, ``NPU``) or a
single letter."""

_VOWEL_SOUND_LETTERS = frozenset("aefhilmnorsx")
"""Letters whose name starts with a vowel sound: a, e, ef, aitch, i, el, em,
en, o, ar, es, ex."""


def article(word: str) -> str:
    """``"an"`` or ``"a"``, as ``word`` is pronounced: a type name or an
    acronym letter by letter (``an f32``, ``a bf16``, ``an i8``, ``a TRF``),
    a number as a number (``an 8``, ``an 11``, ``an 18-byte``, ``an 800``,
    ``a 16``), any other word by its first letter (``an int``, ``a
    float32``, ``an unsigned``, ``a unit``).  Leading quotes and brackets
    are skipped."""
    w = word.lstrip("'\"`([{<")
    if not w:
        return "a"
    if w[0].isdigit():
        digits = w[: len(w) - len(w.lstrip("0123456789"))]
        lead = digits[: len(digits) % 3 or 3]  # the group before the first thousands separator
        return "an" if lead.startswith("8") or lead in ("11", "18") else "a"
    if _SPELLED.match(w):
        return "an" if w[0].lower() in _VOWEL_SOUND_LETTERS else "a"
    first = w[0].lower()
    if first == "u":
        return "an" if w.lower().startswith("un") and not w.lower().startswith("uni") else "a"
    return "an" if first in "aeio" else "a"


def a_or_an(word: str) -> str:
    """``word`` after its indefinite article (:func:`article`):
    ``a_or_an("f8E4M3FN")`` is ``"an f8E4M3FN"``."""
    return f"{article(word)} {word}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in agreement: ``count(1, "byte")`` is ``"1 byte"``,
    ``count(2, "byte")`` ``"2 bytes"``; ``plural`` when it is not ``noun``
    + ``s`` (``count(2, "entry", "entries")``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
