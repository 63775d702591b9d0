"""Names and text from the input never drive the terminal (ir.md §5): one escaping function, called at every place that prints.

The reference here is written independently of :mod:`fetchc.escape`: a
character is dangerous when ``unicodedata`` puts it in a control, format,
surrogate, separator or private/unassigned category, and every output of
fetchc is checked to hold none of them (but the line breaks between lines).
"""

from __future__ import annotations

import json
import subprocess
import unicodedata

import pytest

from fetchc.escape import printable
from served import FETCHC

DANGEROUS = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e\u2066\u200f\r\n\t\x85\u2028\ufeff\U000e0041"
"""An OSC title sequence, a screen clear, a C1 CSI, bidi override and
isolate, RLM, CR, LF, TAB, NEL, line separator, BOM, a tag character (no
NUL: names and command lines cannot hold one)."""


LOC_DANGEROUS = "\x1b]0;pwned\x07\x1b[2J\r\n\t\x7f"
"""The parser takes only ASCII escapes in a location's file name (a front-end matter)."""


def _bad(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or (
        unicodedata.category(c) == "Zs" and c != " "
    )


def _assert_clean(text: str, allow: str = "\n") -> None:
    bad = sorted({f"U+{ord(c):04X}" for c in text if c not in allow and _bad(c)})
    assert not bad, f"unescaped {bad} in {text!r}"


def test_printable_escapes_exactly_the_dangerous_characters():
    for n in list(range(0x3000)) + [0x202E, 0x2066, 0xD800, 0xDCFF, 0xE000, 0xFEFF, 0xFFF9, 0xE0041, 0x1F600]:
        c = chr(n)
        out = printable(c)
        if _bad(c):
            assert out == (f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"), hex(n)
        else:
            assert out == c, hex(n)
    assert printable("caf\u00e9 \u03bb \\x1b ok") == "caf\u00e9 \u03bb \\x1b ok"  # letters and backslashes stay
    assert printable("a\tb", tabs=True) == "a\tb" and printable("a\tb") == "a\\x09b"
    _assert_clean(printable(DANGEROUS + "\x00"), allow="")


def _fetchc(*args: str, cwd=None, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*FETCHC, *args], capture_output=True, cwd=cwd, input=stdin, check=False)


def _name_literal(name: str) -> str:
    """``name`` as an MLIR string literal (``@"..."``), bytes as ``\\XX``."""
    return "".join(c if c.isalnum() else "".join(f"\\{b:02X}" for b in c.encode()) for c in name)


KERNEL = """func.func @"{name}"(%a: memref<4x16xf8E4M3FN>, %o: memref<4x16xf32>) {{
  %s = fetch.fetch %a : memref<4x16xf8E4M3FN> -> !fetch.stream<main, [4], [16], f8E4M3FN>
  %c = fetch.cast %s : !fetch.stream<main, [4], [16], f8E4M3FN> -> !fetch.stream<main, [4], [16], f32>
  rngd.commit %c, %o : !fetch.stream<main, [4], [16], f32>, memref<4x16xf32>
  func.return
}}
"""


@pytest.fixture(scope="module")
def evil(tmp_path_factory):
    """A kernel whose function name holds every dangerous character, its
    seq.bin (program and kernel names from the MANIFEST) and an input."""
    d = tmp_path_factory.mktemp("evil")
    (d / "k.mlir").write_text(KERNEL.format(name=_name_literal("k" + DANGEROUS)))
    r = _fetchc("k.mlir", "-o", "k.bin", cwd=d)
    assert r.returncode == 0, r.stderr.decode()
    import numpy as np

    np.save(d / "a.npy", np.zeros((4, 16), np.uint8))
    return d


@pytest.mark.parametrize(
    "args",
    [
        ["dis", "k.bin"],
        ["sim", "k.bin", "--arg", "a=a.npy", "--program", "nope" + DANGEROUS, "-o", "o.npy"],
        ["sim", "k.bin", "--arg", "a" + DANGEROUS + "=a.npy", "-o", "o.npz"],
        ["run", "k.mlir", "--entry", "x" + DANGEROUS, "--arg", "a=a.npy", "-o", "o.npz"],
        ["run", "k.mlir", "--arg", "a=a.npy", "--arg", "b" + DANGEROUS + "=1", "-o", "o.npz"],
        ["run", "k.mlir", "--arg", "a=missing" + DANGEROUS + ".npy", "-o", "o.npz"],
        ["no-such-file" + DANGEROUS + ".mlir"],
        ["k.mlir", "--bogus" + DANGEROUS],
        ["k.mlir", "-o", "no-such-dir" + DANGEROUS + "/x.bin"],
    ],
    ids=["dis", "sim-program", "sim-arg", "run-entry", "run-unknown-arg", "run-missing-file", "compile-missing",
         "usage", "unwritable"],
)
def test_names_from_input_are_escaped_everywhere(evil, args):
    r = _fetchc(*args, cwd=evil)
    out, err = r.stdout.decode("utf-8", "surrogateescape"), r.stderr.decode("utf-8", "surrogateescape")
    _assert_clean(out)
    _assert_clean(err)
    assert ("\\x1b" in out + err) or ("\\u001b" in out + err), (out, err)  # the name is shown, escaped


def test_verifier_message_with_a_name_is_escaped(tmp_path):
    """A location can name any file: escaped in the header line."""
    bad = (
        'func.func @k(%a: memref<4x16xf8E4M3FN>, %o: memref<4x16xbf16>) {\n'
        '  %s = fetch.fetch %a : memref<4x16xf8E4M3FN> -> !fetch.stream<main, [4], [16], f8E4M3FN>\n'
        '  %c = fetch.cast %s : !fetch.stream<main, [4], [16], f8E4M3FN> -> !fetch.stream<main, [4], [16], bf16>'
        ' loc("' + _name_literal("f" + LOC_DANGEROUS) + '":3:4)\n'
        '  rngd.commit %c, %o : !fetch.stream<main, [4], [16], bf16>, memref<4x16xbf16>\n'
        '  func.return\n}\n'
    )
    (tmp_path / "k.mlir").write_text(bad)
    r = _fetchc("k.mlir", "-o", "o.bin", cwd=tmp_path)
    err = r.stderr.decode("utf-8", "surrogateescape")
    assert r.returncode == 1
    _assert_clean(err)
    assert err.startswith("f\\x1b]0;pwned\\x07"), err


def test_dis_json_is_ascii(evil):
    r = _fetchc("dis", "--json", "k.bin", cwd=evil)
    assert r.returncode == 0
    assert r.stdout.isascii()
    names = [p["name"] for p in json.loads(r.stdout)["programs"]]
    assert names == ["k" + DANGEROUS + "/0"]  # the name itself survives, as data


def test_every_diagnostic_header_is_escaped():
    """The one sink of diagnostics: ``header`` (and so ``render``, ``str``
    of a ``DiagnosticError``) escapes the file name, the message and an op
    path built from a symbol name (an op built in memory)."""
    from xdsl.dialects import func, test

    from fetchc.diagnostics import Diagnostic, DiagnosticError, header
    from fetchc.frontend.render import render

    fn = func.FuncOp("k" + DANGEROUS, ((), ()))
    op = test.TestOp()
    fn.body.block.add_op(op)
    diags = [
        Diagnostic("error", "message " + DANGEROUS, ("file" + DANGEROUS, 1, 2)),
        Diagnostic("error", "message", None, op=op),
    ]
    for d in diags:
        _assert_clean(header(d), allow="")
        _assert_clean(render(d))
    _assert_clean(str(DiagnosticError(diags)))
    assert header(diags[1]).startswith("func @k\\x1b]0;pwned\\x07")
