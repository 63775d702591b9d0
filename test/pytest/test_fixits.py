"""Every fix-it the stage verifiers can produce names a real fix.

For every illegal (input, output) pair of ``fetch.table_lookup``,
``fetch.cast`` and ``fetch.zp_sub`` over the hardware's element types (and a
non-hardware type), the op's rule-1 error is collected and checked for empty
or dangling suggestions: ``use  (``, ``use`` at the end, ``; ;``, a clause
ending in ``:``, a list of ``none``.  The identity cast is legal (it programs
no stage); the identity lookup is an error that says to drop the op.
Spec: ir.md §3 rule 1, hardware.md §2.1-2.3.
"""

from __future__ import annotations

import re

import pytest

import fetchc
from fetchc import target
from fetchc.diagnostics import DiagnosticError

TYPES = [t.name for t in target.ELEMENT_TYPES] + ["f16"]
EMPTY = [
    re.compile(r"\buse\s*\("),
    re.compile(r"\buse\s*$"),
    re.compile(r"\buse\s*;"),
    re.compile(r";\s*;"),
    re.compile(r":\s*;"),
    re.compile(r":\s*$"),
    re.compile(r"[;,]\s*$"),
    re.compile(r"\binstead,?\s*$"),
    re.compile(r":\s*none\b"),
    re.compile(r"\(\s*\)"),
]


def _memory(t: str) -> bool:
    e = target.BY_NAME.get(t)
    return e is not None and not e.in_flight_only


def _module(op: str, src: str, dst: str) -> str:
    """A kernel whose stream of ``src`` goes through ``op`` to ``dst``."""
    s = f"!fetch.stream<main, [4], [32], {src}>"
    d = f"!fetch.stream<main, [4], [32], {dst}>"
    lines = []
    if src in ("i5", "i9"):
        wide = {"i5": "i4", "i9": "i8"}[src]
        w = f"!fetch.stream<main, [4], [32], {wide}>"
        lines.append(f"%f = fetch.fetch %a {{map = affine_map<(t, p) -> (t * 32 + p)>}} : memref<128x{wide}> -> {w}")
        lines.append(f"%s = fetch.zp_sub %f, 0 : {w} -> {s}")
        arg = f"memref<128x{wide}>"
    else:
        lines.append(f"%s = fetch.fetch %a {{map = affine_map<(t, p) -> (t * 32 + p)>}} : memref<128x{src}> -> {s}")
        arg = f"memref<128x{src}>"
    stage = f"%r = fetch.{op} %s" + (", 0" if op == "zp_sub" else "") + f" : {s} -> {d}"
    lines.append(stage)
    lines.append(f"%t = rngd.to_vrf %r : {d} -> !rngd.vrf<[4, 32], {dst}>")
    body = "\n  ".join(lines)
    v = f"!rngd.vrf<[4, 32], {dst}>"
    return f"func.func @k(%a: {arg}) -> {v} {{\n  {body}\n  func.return %t : {v}\n}}\n"


def _legal(op: str, s: str, d: str) -> bool:
    S, D = target.BY_NAME.get(s), target.BY_NAME.get(d)
    if op == "table_lookup":
        return (S, D) in target.LOOKUP_TABLES
    if op == "cast":
        return (S, D) in target.CAST_CODES or s == d
    rule = target.ZERO_POINT.get(S) if S else None
    return rule is not None and rule.result == D


CASES = [
    (op, s, d)
    for op in ("table_lookup", "cast", "zp_sub")
    for s in TYPES
    for d in TYPES
    if (_memory(s) or s in ("i5", "i9")) and not _legal(op, s, d)
]


@pytest.mark.parametrize("op,src,dst", CASES, ids=[f"{o}-{s}-{d}" for o, s, d in CASES])
def test_every_rule1_fixit_names_a_real_fix(op: str, src: str, dst: str) -> None:
    with pytest.raises(DiagnosticError) as info:
        fetchc.compile(_module(op, src, dst), pipeline="")
    mine = [d.message for d in info.value.diagnostics if d.message.startswith(f"'fetch.{op}' op ")]
    assert mine, [d.message for d in info.value.diagnostics]
    (message,) = mine
    for clause in message.split("; "):
        for pattern in EMPTY:
            assert not pattern.search(clause), f"empty or dangling suggestion in: {message!r}"


def test_identity_cast_is_legal_and_programs_no_stage() -> None:
    r = fetchc.compile(_module("cast", "i8", "i8").replace("rngd.to_vrf %r", "rngd.to_vrf %r"))
    (p,) = r.programs
    assert (p.stages, p.type_conversion, p.in_dtype, p.out_dtype) == (0, None, target.I8, target.I8)


def test_identity_cast_does_not_count_as_the_cast() -> None:
    # cast i8 -> i32 after an identity cast is the chain's one cast.
    text = _module("cast", "i8", "i8")
    text = text.replace(
        "%t = rngd.to_vrf %r : !fetch.stream<main, [4], [32], i8> -> !rngd.vrf<[4, 32], i8>",
        "%w = fetch.cast %r : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], i32>\n"
        "  %t = rngd.to_vrf %w : !fetch.stream<main, [4], [32], i32> -> !rngd.vrf<[4, 32], i32>",
    ).replace("!rngd.vrf<[4, 32], i8>", "!rngd.vrf<[4, 32], i32>")
    (p,) = fetchc.compile(text).programs
    assert p.type_conversion == target.CAST_CODES[(target.I8, target.I32)]
    # 8 i8 per read: 8 x 4 = 32 bytes of i32, the flit limit (hardware.md §2.2).
    assert p.fetch_size == 8


def test_identity_lookup_says_to_drop_it() -> None:
    with pytest.raises(DiagnosticError) as info:
        fetchc.compile(_module("table_lookup", "f8E4M3FN", "f8E4M3FN"), pipeline="")
    (d,) = [d for d in info.value.diagnostics if "fetch.table_lookup" in d.message]
    assert "f8E4M3FN -> f8E4M3FN changes nothing: drop the fetch.table_lookup" in d.message


def test_identity_cast_of_i9_is_rule3() -> None:
    with pytest.raises(DiagnosticError) as info:
        fetchc.compile(_module("cast", "i9", "i9"), pipeline="")
    (d,) = [d for d in info.value.diagnostics if d.message.startswith("'fetch.cast' op")]
    assert "cannot cast an i9 stream" in d.message
