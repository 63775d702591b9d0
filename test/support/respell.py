"""Respell the SSA names of MLIR text (issue 26 item 6).

MLIR keeps an SSA name without a trailing ``_<digits>`` (``%a_1`` is ``a``),
and ``%_1`` keeps nothing; such names must change nothing a compile
produces.  :func:`respell_ssa_names` gives every distinct SSA name that is
not a function argument (the arguments name the kernel's tensors) a new
spelling from :data:`STYLES`, keeping distinct names distinct.  Used by
``test/pytest/test_ssa_name_hints.py`` and the ``pipeline`` target of
``tools/fuzz.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

SSA = re.compile(r"%([A-Za-z_$.][\w$.-]*|\d+)")
_SIGNATURE = re.compile(r"func\.func\s+(?:private\s+)?@\S+?\((.*?)\)\s*(?:->|attributes|\{)", re.S)

STYLES: dict[str, Callable[[int], str]] = {
    "_N": lambda i: f"_{i}",  # nothing is left of the name (xDSL 0.75 kept "")
    "a_N": lambda i: f"a_{i}",  # every value is "a"
    "_ and _N": lambda i: "_" if i == 0 else f"_{i}",  # "_" itself stays
    "x_0_N": lambda i: f"x_0_{i}",  # "x_0"
    "_N_N": lambda i: f"_{i}_{i}",  # "_N"
}
"""How the i-th (from 0) distinct SSA name is respelt, by style name."""


def respell_ssa_names(text: str, style: Callable[[int], str], *, arguments: bool = False) -> str:
    """``text`` without its ``//`` comment lines, with every SSA name that is
    not a function argument (with ``arguments``, every one) respelt by
    ``style``."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    keep: set[str] = set()
    if not arguments:
        for sig in _SIGNATURE.findall(code):
            keep.update(SSA.findall(sig))
    names: dict[str, str] = {}
    for name in SSA.findall(code):
        if name not in keep and name not in names:
            names[name] = style(len(names))
    return SSA.sub(lambda m: "%" + names.get(m.group(1), m.group(1)), code) + "\n"
