"""Function tables through the compiler (hardware.md §2.1b, ir.md §2, §4):
equal tables stored once, the builder's ``lookup(fn=...)``, and the baked
entries of a compiled file against the independent reference
(``test/support/fnref.py``)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import fetchc
import fnref
from fetchc.builder import ModuleBuilder, memref
from fetchc.diagnostics import DiagnosticError

S = "!fetch.stream<main, [4], [32], {}>"


def lookup(arg: str, key: str, attrs: str, out: str) -> str:
    src, dst = S.format(key), S.format("bf16")
    return (
        f"  %s{arg} = fetch.fetch %{arg} : memref<4x32x{key}> -> {src}\n"
        f"  %l{arg} = fetch.table_lookup %s{arg} {attrs} : {src} -> {dst}\n"
        f"  rngd.commit %l{arg}, %{out} : {dst}, memref<4x32xbf16>\n"
    )


def kernel(chains: list[tuple[str, str]]) -> str:
    """One kernel: chain ``i`` reads ``a<i>`` (key type) through ``attrs``."""
    args = [f"%a{i}: memref<4x32x{k}>" for i, (k, _) in enumerate(chains)]
    args += [f"%o{i}: memref<4x32xbf16>" for i in range(len(chains))]
    body = "".join(lookup(f"a{i}", k, a, f"o{i}") for i, (k, a) in enumerate(chains))
    return f"func.func @k({', '.join(args)}) {{\n{body}  func.return\n}}\n"


def tables(data: bytes) -> list[tuple]:
    """(key_bytes, in code, function, entries, scale, zero point) of every
    TABLES record, read per seqbin.md 1.2."""
    n = struct.unpack_from("<I", data, 12)[0]
    for r in range(n):
        kind, off, size, count = struct.unpack_from("<IIII", data, 32 + 16 * r)
        if kind == 1:
            out, at = [], off
            for _ in range(count):
                kb, _p, src, _d, _eb, fn, entries, scale, zp, _r = struct.unpack_from("<BBBBHHIfiI", data, at)
                out.append((kb, src, fn, entries, scale, zp, data[at + 24 : at + 24 + 2 * entries]))
                at += 24 + 2 * entries
            return out
    raise AssertionError("no TABLES section")


def test_equal_tables_are_stored_once():
    text = kernel([
        ("f8E4M3FN", '{fn = "gelu"}'),
        ("i8", '{fn = "silu", scale = 0.0625 : f32, zero_point = 3 : i32}'),
        ("f8E4M3FN", '{fn = "gelu"}'),
        ("f8E4M3FN", '{fn = "sigmoid"}'),
        ("i8", '{fn = "silu", scale = 0.0625 : f32, zero_point = 3 : i32}'),
        ("i8", '{fn = "silu", scale = 0.0625 : f32, zero_point = 4 : i32}'),
        ("i8", '{fn = "silu", zero_point = 3 : i32}'),
        ("bf16", '{fn = "gelu"}'),
        ("bf16", '{fn = "gelu"}'),
    ])  # fmt: skip
    r = fetchc.compile(text)
    got = [(kb, src, fn, n, scale, zp) for kb, src, fn, n, scale, zp, _ in tables(r.seq_bin)]
    assert got == [
        (1, 8, 3, 256, 1.0, 0),  # gelu f8E4M3FN, first use: program 0
        (1, 2, 6, 256, 0.0625, 3),
        (1, 8, 5, 256, 1.0, 0),
        (1, 2, 6, 256, 0.0625, 4),  # another zero point: another table
        (1, 2, 6, 256, 1.0, 3),  # another scale: another table
        (2, 10, 3, 65536, 1.0, 0),  # bf16 keys: 65536 entries, once
    ]
    assert [p.table for p in r.programs] == [0, 1, 0, 2, 1, 3, 4, 5, 5]
    assert r.mlir.count("fetch_seq.table @") == 6
    assert "@gelu_f8E4M3FN" in r.mlir and "@silu_i8_1" in r.mlir and "@gelu_bf16" in r.mlir


@pytest.mark.parametrize(
    "key,attrs,fn,scale,zp",
    [("f8E5M2", '{fn = "tanh"}', "tanh", 1.0, 0), ("i16", '{fn = "exp", scale = 0.001 : f32, zero_point = -7 : i32}',
      "exp", 0.001, -7), ("bf16", '{fn = "gelu_tanh"}', "gelu_tanh", 1.0, 0)],
)  # fmt: skip
def test_compiled_entries_equal_the_reference(key, attrs, fn, scale, zp):
    (rec,) = tables(fetchc.compile(kernel([(key, attrs)])).seq_bin)
    got = np.frombuffer(rec[-1], dtype="<u2")
    assert np.array_equal(got, fnref.table(fn, key, scale, zp))


def test_builder_lookup_fn_gives_the_verifier_diagnostic():
    mb = ModuleBuilder(locations=False)
    k = mb.kernel("k", q=memref([4, 32], "i8"), o=memref([4, 32], "bf16"))
    q, o = k.args
    s = k.fetch_rows(q, packet=32)
    with pytest.raises(DiagnosticError, match=r"'zero_point' 300 is outside the i8 range \[-128, 127\]"):
        s.lookup(fn="silu", zero_point=300)
    with pytest.raises(DiagnosticError, match=r"has no function 'swish'; the function tables are identity, relu"):
        s.lookup(fn="swish")
    with pytest.raises(DiagnosticError, match=r"a table keyed by i8 is a function table: pass fn="):
        s.lookup()
    s.lookup(fn="silu", scale=0.0625, zero_point=3).commit(o)
    r = fetchc.compile(mb.finish())
    assert r.seqbin.tables[0].function == "silu" and r.seqbin.tables[0].zero_point == 3


def test_compiling_a_function_table_needs_no_numpy():
    """Baking is pure Python (test_tables_data.py checks the examples; this
    a 2-byte key table)."""
    import subprocess
    import sys

    text = kernel([("bf16", '{fn = "silu"}'), ("i16", '{fn = "gelu", scale = 0.01 : f32}')])
    code = (
        "import sys, fetchc\n"
        f"r = fetchc.compile({text!r})\n"
        "assert len(r.seqbin.tables) == 2\n"
        "sys.exit(1 if 'numpy' in sys.modules or 'ml_dtypes' in sys.modules else 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
