"""Printing text taken from input: the one escaping function of fetchc.

Every name or text that comes from an input (a function, tensor or program
name, a file name, ``--entry``, an ``.npz`` key, a quoted source line, a
message that quotes input text) reaches the terminal through
:func:`printable` (ir.md §5: "every name or text taken from an input is
printed with control characters, bidi overrides and C1 codes escaped").  The
sinks call it: :func:`fetchc.diagnostics.header` (every diagnostic line),
the quoted source line of :func:`fetchc.frontend.render.render`, the
``error:`` / ``warning:`` lines of :mod:`fetchc.cli` (argparse's usage
errors included), the progress line of the simulator and the names in
``fetchc dis``.  ``fetchc dis --json`` escapes through ``json.dumps``
(``ensure_ascii``: every non-ASCII character as ``\\uXXXX``).

This module imports nothing of fetchc (the bottom layer, below
:mod:`fetchc.diagnostics`).
"""

from __future__ import annotations

__all__ = ["printable"]


def _escaped(c: str) -> str:
    n = ord(c)
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def printable(text: str, *, tabs: bool = False) -> str:
    """``text`` with every character that Python does not call printable
    (``str.isprintable``: C0 and C1 controls such as ESC and CSI, DEL, line
    breaks, tabs, format characters such as the bidi overrides U+202A-U+202E
    and isolates U+2066-U+2069, zero-width characters and tags, surrogates
    from undecodable bytes, private-use and unassigned code points, spaces
    other than U+0020) written as Python writes it in a string literal:
    ``\\x1b``, ``\\x9b``, ``\\u202e``, ``\\udcff``, ``\\U000e0041``.
    Everything else (letters of any script, punctuation, a backslash) is kept.
    ``tabs=True`` keeps tabs (a quoted source line, whose tabs are expanded).
    Returns ``text`` itself when nothing needs escaping.  Raises nothing."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or (tabs and c == "\t") else _escaped(c) for c in text)
