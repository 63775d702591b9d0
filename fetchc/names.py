"""Which names can leave fetchc: the one rule for program, kernel and tensor
names (ir.md §2a, seqbin.md STRINGS).

A program's name (``function/index``, ``m/function/index`` in a nested
module) is written into ``seq.bin`` STRINGS as a zero-terminated string,
given to ``fetchc sim --program NAME`` and used as the key of its array in
the ``.npz`` that ``fetchc sim -o`` writes; a tensor's name keys
``fetchc run -o``'s ``.npz``.  An ``.npz`` member is a zip path, which an
unzip tool would follow outside its directory (``../x``, ``/tmp/x``), so a
name is refused when it cannot be one (:func:`key_problem`): a NUL
character, a backslash, a leading ``/`` or drive letter (``C:``), an empty,
``.`` or ``..`` component between slashes.  Every other string is a name
(``a/b``, ``file``, spaces, any Unicode).

The compiler refuses a kernel or tensor name that breaks the rule
(:func:`fetchc.driver.kernel_name_errors`), so whatever compiles can be
simulated and run; the ``.npz`` writer (:func:`fetchc.npyio.npz_member_names`)
applies the same rule to the names of a ``seq.bin`` made elsewhere.  Imports
nothing: the compile path and the ``.npz`` writer share it.
"""

from __future__ import annotations

import re

__all__ = ["NAMES_THAT_WORK", "key_problem"]

_DRIVE = re.compile(r"\A[A-Za-z]:")

NAMES_THAT_WORK = (
    "a name works if it holds no NUL or backslash, does not start with '/' or a drive letter ('C:') and has no "
    "empty, '.' or '..' part between slashes"
)
"""The rule in words, for messages that say which names work."""


def key_problem(name: str) -> str | None:
    """Why ``name`` cannot be a program's or tensor's name (a ``seq.bin``
    string and an ``.npz`` key), as a clause after "it" (``"has an empty,
    '.' or '..' path component..."``), or ``None`` when it can."""
    if "\0" in name:
        return "contains a NUL character, which a .npz member name cannot hold"
    if "\\" in name:
        return "contains a backslash, a path separator for some unzip tools"
    if name.startswith("/") or _DRIVE.match(name):
        return "is an absolute path: an unzip would write outside its directory"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "has an empty, '.' or '..' path component: an unzip would write elsewhere"
    return None
