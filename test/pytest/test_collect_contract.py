"""The Collect Engine's flit form (hardware.md §2.5), the Contraction
Engine's operand types (hardware.md §2.6, ir.md §3 rule 10) and the partial
``fetchc run`` (ir.md §5).

Every expectation is written here from the spec: the flit arithmetic from
the element widths after the adapter (4-bit half a byte, ``i5`` one byte,
``i9`` two), the operand table row by row, and the numbers with numpy and
ml_dtypes (the f8E4M3FN decode, the E2M1 ladder, f32 products, RNGD's
canonical NaN).  NaNs are compared by their bits.
"""

from __future__ import annotations

import math
import pathlib
import re
import warnings

import ml_dtypes
import numpy as np
import pytest
from differential import assert_same

import fetchc
from fetchc import target
from fetchc.builder import ModuleBuilder, memref
from fetchc.diagnostics import DiagnosticError, DiagnosticWarning
from fetchc.dialects.rngd import ContractOuterOp
from fetchc.dialects.stream import StreamType
from fetchc.frontend.context import shared_context
from fetchc.frontend.parsing import parse_module
from fetchc.frontend.verify import verify_module
from fetchc.golden.interp import interpret

ROOT = pathlib.Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------
# The spec's facts, written out here
# --------------------------------------------------------------------------

WIRE_BITS = {"i4": 4, "f4E2M1FN": 4, "i5": 8, "i8": 8, "f8E4M3FN": 8, "f8E5M2": 8, "f8E8M0FNU": 8, "i9": 16,
             "i16": 16, "bf16": 16, "i32": 32, "f32": 32}  # fmt: skip
"""hardware.md §2.4/§2.5: bits per element after the adapter."""

TRF_FOR = {"i4": {"i4", "i5"}, "i5": {"i4", "i5"}, "i8": {"i8", "i9"}, "i9": {"i8", "i9"},
           "f8E4M3FN": {"f8E4M3FN"}, "f8E5M2": {"f8E5M2"}, "bf16": {"bf16"}}  # fmt: skip
ACCUMULATOR = {"i4": "i32", "i5": "i32", "i8": "i32", "i9": "i32", "f8E4M3FN": "f32", "f8E5M2": "f32", "bf16": "f32"}
"""hardware.md §2.6, the Contraction Engine's operand table."""

QNAN = 0x7FC00000


def flit_form_ref(time: tuple, packet: tuple, elem: str):
    """hardware.md §2.5: the flit form, or None where it would need padding
    (or is the input type itself)."""
    nbytes = math.prod(packet) * WIRE_BITS[elem] / 8
    if nbytes <= 32 or nbytes % 32:
        return None
    return tuple(time) + (int(nbytes // 32),), (32 * 8 // WIRE_BITS[elem],)


def canonical_f32(x: np.ndarray) -> np.ndarray:
    """RNGD's f32 results: every NaN is 0x7FC00000 (hardware.md §2.2a)."""
    x = np.array(x, dtype=np.float32)
    x.view(np.uint32)[np.isnan(x)] = QNAN
    return x


def e4m3_to_f32(codes: np.ndarray) -> np.ndarray:
    """The f8E4M3FN -> f32 cast: exact, 0x7F/0xFF -> 0x7FC00000."""
    return canonical_f32(codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32))


def parse(text: str):
    return parse_module(shared_context(), text, "t.mlir")


def messages(text: str) -> dict[int, str]:
    """Line -> the one error verification reports there."""
    out: dict[int, str] = {}
    for d in verify_module(parse(text)):
        assert d.loc is not None and d.loc[1] not in out, d
        out[d.loc[1]] = d.message
    return out


# --------------------------------------------------------------------------
# The flit form
# --------------------------------------------------------------------------


def test_flit_form_spec_examples():
    F8, I9, BF16, I8, F32 = target.F8E4M3FN, target.I9, target.BF16, target.I8, target.F32
    assert target.flit_form((60,), (3840,), F8) == ((60, 120), (32,))
    assert target.flit_form((64, 8), (32,), I9) == ((64, 8, 2), (16,))
    assert target.flit_form((7,), (8, 64), BF16) == ((7, 32), (16,))
    assert target.flit_form((8,), (32,), I8) is None  # exactly one flit
    assert target.flit_form((250,), (4,), F32) is None  # under one flit
    assert target.flit_form((8,), (56,), I8) is None  # two flits, the second padded
    assert "exactly one 32-byte flit" in target.flit_form_problem((32,), I8)
    assert "16 bytes, under one 32-byte flit" in target.flit_form_problem((4,), F32)
    assert "pads it to 2 flits (8 bytes of padding in the last)" in target.flit_form_problem((56,), I8)
    assert target.flit_form_problem((3840,), F8) is None


def test_flit_form_against_the_byte_count():
    """Every element type, packets of 1 to 130 elements in one or two dims."""
    for t in target.ELEMENT_TYPES:
        for n in range(1, 131):
            for packet in ((n,), (2, n)):
                want = flit_form_ref((3,), packet, t.name)
                assert target.flit_form((3,), packet, t) == want, (t.name, packet)
                assert (target.flit_form_problem(packet, t) is None) == (want is not None), (t.name, packet)


# --------------------------------------------------------------------------
# Rule 10
# --------------------------------------------------------------------------

STREAMS = ["i4", "i5", "i8", "i9", "i16", "i32", "f4E2M1FN", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "bf16", "f32"]
TRFS = STREAMS + ["f16"]


def _pair_function(k: int, s: str, w: str, acc: str) -> tuple[str, int]:
    """A function contracting an ``s`` stream with a ``w`` TRF into ``acc``;
    returns its text and the line (within it, 0-based) of the contraction."""
    src = {"i5": "i4", "i9": "i8"}.get(s, s)
    st = lambda e: f"!fetch.stream<main, [4], [64], {e}>"  # noqa: E731
    lines = [f"func.func @k{k}(%a: memref<4x64x{src}>, %t: !rngd.trf<{w}>, %o: memref<4x64x{acc}>) {{",
             f"  %s = fetch.fetch %a : memref<4x64x{src}> -> {st(src)}"]  # fmt: skip
    cur = "%s"
    if s != src:
        lines.append(f"  %z = fetch.zp_sub %s, 1 : {st(src)} -> {st(s)}")
        cur = "%z"
    at = len(lines)
    lines.append(f"  %y = rngd.contract_outer {cur}, %t : {st(s)}, !rngd.trf<{w}> -> {st(acc)}")
    lines += [f"  rngd.commit %y, %o : {st(acc)}, memref<4x64x{acc}>", "  func.return", "}"]
    return "\n".join(lines), at


def test_rule10_every_pair():
    """Every stream type against every TRF type (one module, one verify):
    legal exactly where hardware.md §2.6's table says, with its accumulator;
    otherwise one error at the contraction naming what the stream takes."""
    chunks, where, line = [], {}, 1
    for k, (s, w) in enumerate((s, w) for s in STREAMS for w in TRFS):
        acc = ACCUMULATOR.get(s, "f32" if s[0] in "fb" else "i32")
        text, at = _pair_function(k, s, w, acc)
        chunks.append(text)
        where[line + at] = (s, w)
        line += text.count("\n") + 1
    got = messages("\n".join(chunks))
    assert set(got) <= set(where), got
    for ln, (s, w) in where.items():
        msg = got.get(ln)
        if s in TRF_FOR and w in TRF_FOR[s]:
            assert msg is None, (s, w, msg)
        elif s not in TRF_FOR:
            assert msg is not None and f"cannot contract {'a' if s == 'bf16' else 'an'} {s} stream" in msg, (s, msg)
            assert "i4/i5, i8/i9, f8E4M3FN, f8E5M2 or bf16" in msg
        else:
            legal = " or ".join(sorted(TRF_FOR[s], key=STREAMS.index))
            assert msg is not None and f"stream with a TRF of {w}, a pair the Contraction Engine does not have" in msg
            assert msg.endswith(f"stream takes a TRF of {legal} (hardware.md §2.6)"), msg


def test_rule10_accumulator():
    """The accumulator is the table's: the builder infers it, and any other
    element type is an error naming it."""
    for s, acc in ACCUMULATOR.items():
        assert ContractOuterOp.accumulator_element(target.BY_NAME[s]).name == acc
        wrong = "f32" if acc == "i32" else "i32"
        text, at = _pair_function(0, s, sorted(TRF_FOR[s])[0], wrong)
        assert messages(text) == {at + 1: f"'rngd.contract_outer' op accumulates {s} into {acc}, not {wrong}"}


def test_the_table_is_written_once():
    """facts.CONTRACTION_OPERANDS is the spec's table, and docs/hardware.md
    and docs/ir.md restate it."""
    got = {s.name: ({w.name for w in row.trf}, row.accumulator.name) for row in target.CONTRACTION_OPERANDS
           for s in row.streams}  # fmt: skip
    assert got == {s: (TRF_FOR[s], ACCUMULATOR[s]) for s in TRF_FOR}
    for page in ("hardware.md", "ir.md"):
        text = (ROOT / "docs" / page).read_text()
        rows = re.findall(r"^\| `(\w+)`(?: or `(\w+)`)? \| `(\w+)`(?: or `(\w+)`)? \| `(\w+)` \|$", text, re.M)
        table = {s: ({w for w in (w1, w2) if w}, acc) for s1, s2, w1, w2, acc in rows for s in (s1, s2) if s}
        assert table == {s: (TRF_FOR[s], ACCUMULATOR[s]) for s in TRF_FOR}, page


# --------------------------------------------------------------------------
# The flit form through the builder, the interpreter and run
# --------------------------------------------------------------------------

FLIT_KERNEL = """
func.func @k(%a: memref<4x128xf8E4M3FN>, %s: memref<4x16xf32>, %o: memref<4x128xf32>) {
  %x = fetch.fetch %a : memref<4x128xf8E4M3FN> -> !fetch.stream<main, [4], [128], f8E4M3FN>
  %f = fetch.cast %x : !fetch.stream<main, [4], [128], f8E4M3FN> -> !fetch.stream<main, [4], [128], f32>
  %c = rngd.collect %f : !fetch.stream<main, [4], [128], f32> -> !fetch.stream<main, [4, 16], [8], f32>
  %sc = fetch.fetch %s {map = affine_map<(t, f, p) -> (t, f + p)>} : memref<4x16xf32> -> !fetch.stream<main, [4, 16], [1], f32>
  %y = rngd.block_scale %c, %sc {block = 8} : !fetch.stream<main, [4, 16], [8], f32>, !fetch.stream<main, [4, 16], [1], f32> -> !fetch.stream<main, [4, 16], [8], f32>
  rngd.commit %y, %o : !fetch.stream<main, [4, 16], [8], f32>, memref<4x128xf32>
  func.return
}
"""


@pytest.fixture(scope="module")
def flit_inputs():
    rng = np.random.default_rng(25)
    codes = rng.integers(0, 256, (4, 128), dtype=np.uint8)
    codes[0, :4] = [0x7F, 0xFF, 0x80, 0x01]  # both NaNs, -0, the smallest subnormal
    scales = rng.uniform(0.25, 4.0, (4, 16)).astype(np.float32)
    # Each flit of 8 values times its own scale: the flit index is the new time dim.
    want = canonical_f32(e4m3_to_f32(codes) * np.repeat(scales, 8, axis=1))
    return codes, scales, want


def test_flit_form_feeds_a_block_scale_and_a_commit(flit_inputs):
    codes, scales, want = flit_inputs
    out = fetchc.run(FLIT_KERNEL, a=codes, s=scales)
    assert_same(out["o"], want, "fetchc run")
    o = np.zeros((4, 128), np.float32)
    interpret(parse(FLIT_KERNEL), "k", [codes.view(ml_dtypes.float8_e4m3fn), scales, o])
    assert_same(o, want, "the interpreter")


def test_builder_flit_form(flit_inputs):
    codes, scales, want = flit_inputs
    mb = ModuleBuilder()
    k = mb.kernel("k", a=memref([4, 128], "f8E4M3FN"), s=memref([4, 16], "f32"), o=memref([4, 128], "f32"))
    a, s, o = k.args
    c = k.fetch_rows(a, packet=128).cast().collect(flits=True)
    assert c.type == StreamType("main", [4, 1, 16], [8], target.mlir_type(target.F32))
    sc = k.fetch(s, [4, 1, 16], [1], map="(t, u, f, p) -> (t, f + p)")
    c.block_scale(sc, 8).commit(o)
    out = fetchc.run(mb.finish(), a=codes, s=scales)
    assert_same(out["o"], want, "fetchc run of the built kernel")


def test_builder_collect_keeps_the_type_or_refuses_padding():
    mb = ModuleBuilder()
    k = mb.kernel("k", a=memref([8, 56], "i8"), b=memref([64, 32], "i8"), o=memref([8, 56], "i8"),
                  t=memref([8, 32], "i8"), acc=memref([64, 32], "i32"))  # fmt: skip
    a, b, o, t, acc = k.args
    s = k.fetch_rows(a, packet=56)
    with pytest.raises(DiagnosticError) as e:
        s.collect(flits=True)
    (d,) = e.value.diagnostics
    reason = target.flit_form_problem((56,), target.I8)
    assert d.message == (
        f"'rngd.collect' op has no flit form for !fetch.stream<main, [8, 1], [56], i8>: {reason} (hardware.md "
        "§2.5); keep the input type (collect() without flits=True)"
    )
    assert d.loc is not None and d.loc[0] == __file__
    kept = s.collect()
    assert kept.type == s.type
    kept.commit(o)
    # The book's i9 example: the residuals in flits, the accumulator in their shape.
    wt = k.fetch_rows(t, packet=32, context="sub").to_trf()
    z = k.fetch(b, [64, 1], [32], map="(m, u, e) -> (m, u * 32 + e)").zp_sub(-3).collect(flits=True)
    assert (z.type.time, z.type.packet) == ((64, 1, 2), (16,))
    y = z.contract_outer(wt)
    assert y.type == StreamType("main", [64, 1, 2], [16], target.mlir_type(target.I32))
    y.commit(acc)
    mb.finish()


# --------------------------------------------------------------------------
# Partial run
# --------------------------------------------------------------------------

MIXED = """
func.func @mixed(%w: memref<4x64xf4E2M1FN>, %s: memref<4x4xf8E4M3FN>, %g: f32, %wd: memref<4x64xf32>,
                 %q: memref<8x32xi8>, %x: memref<4x32xi8>, %acc: memref<4x32xi32>) {
  %c = fetch.fetch %w : memref<4x64xf4E2M1FN> -> !fetch.stream<main, [4], [64], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"}
      : !fetch.stream<main, [4], [64], f4E2M1FN>, memref<4x4xf8E4M3FN>, f32 -> !fetch.stream<main, [4], [64], f32>
  rngd.commit %d, %wd : !fetch.stream<main, [4], [64], f32>, memref<4x64xf32>
  %qs = fetch.fetch %q : memref<8x32xi8> -> !fetch.stream<sub, [8], [32], i8>
  %qt = rngd.to_trf %qs : !fetch.stream<sub, [8], [32], i8> -> !rngd.trf<i8>
  %xs = fetch.fetch %x : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  %xz = fetch.zp_sub %xs, -3 : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], i9>
  %xc = rngd.collect %xz : !fetch.stream<main, [4], [32], i9> -> !fetch.stream<main, [4, 2], [16], i9>
  %y = rngd.contract_outer %xc, %qt : !fetch.stream<main, [4, 2], [16], i9>, !rngd.trf<i8> -> !fetch.stream<main, [4, 2], [16], i32>
  rngd.commit %y, %acc : !fetch.stream<main, [4, 2], [16], i32>, memref<4x32xi32>
  func.return
}
"""

E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def _programs_reading(text: str, *tensors: str) -> list[str]:
    """The names of the programs that read ``tensors``, from the MANIFEST."""
    sb = fetchc.compile(text).seqbin
    (kernel,) = sb.manifest.kernels
    return [sb.programs[p.index].name for p in kernel.programs if kernel.tensors[p.tensor].name in tensors]


def _run(text: str, **arrays):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fetchc.run(text, **arrays)
    return out, [w.message.diagnostic for w in caught if isinstance(w.message, DiagnosticWarning)]


def test_partial_run_computes_the_weight_and_names_the_contraction():
    rng = np.random.default_rng(6)
    codes = rng.integers(0, 16, (4, 64), dtype=np.uint8)
    scales = rng.integers(0x28, 0x58, (4, 4), dtype=np.uint8)  # normal f8E4M3FN scales
    g = 0.75
    out, diags = _run(MIXED, w=codes, s=scales, g=g, q=np.ones((8, 32), np.int8), x=np.ones((4, 32), np.int8))
    # hardware.md §4: (E2M1[code] x f32(bscale)) x gscale, left to right, in f32.
    bs = np.repeat(scales.view(ml_dtypes.float8_e4m3fn).astype(np.float32), 16, axis=1)
    want = (E2M1[codes].astype(np.float32) * bs) * np.float32(g)
    assert list(out) == ["wd"]
    assert_same(out["wd"], want.astype(np.float32), "the decoded weight")
    (d,) = diags
    progs = ", ".join(repr(p) for p in _programs_reading(MIXED, "q", "x"))
    assert d.severity == "warning" and d.loc is not None and d.loc[1] == 14  # the commit of %y
    assert d.message == (
        "'rngd.commit' op commits tensor 'acc', whose value depends on 'rngd.contract_outer': fetchc run leaves it "
        "out of its results, since the Contraction Engine's arithmetic (accumulation order, rounding) is outside "
        f"the golden model; run the Fetch Unit programs that feed it ({progs}) with `fetchc sim` and apply the "
        "contraction yourself"
    )
    (note,) = d.notes
    assert note.message == "'rngd.contract_outer' is here" and note.loc is not None and note.loc[1] == 13


def test_partial_run_follows_the_dm_bytes():
    """A tensor committed from a contraction and read back by a later
    program: what that program feeds is left out too, named with the tensor
    it went through; a tensor computed first and overwritten by a
    contraction's commit is left out."""
    text = """
func.func @back(%q: memref<8x32xi8>, %x: memref<4x32xi8>, %acc: memref<4x32xi32>, %again: memref<128xi32>,
                %b: memref<4x32xi8>, %bo: memref<4x32xi8>, %c: memref<4x32xi8>, %co: memref<4x32xi8>) {
  %qs = fetch.fetch %q : memref<8x32xi8> -> !fetch.stream<sub, [8], [32], i8>
  %qt = rngd.to_trf %qs : !fetch.stream<sub, [8], [32], i8> -> !rngd.trf<i8>
  %xs = fetch.fetch %x : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  %y = rngd.contract_outer %xs, %qt : !fetch.stream<main, [4], [32], i8>, !rngd.trf<i8> -> !fetch.stream<main, [4], [32], i32>
  rngd.commit %y, %acc : !fetch.stream<main, [4], [32], i32>, memref<4x32xi32>
  %r = fetch.fetch %acc : memref<4x32xi32> -> !fetch.stream<main, [4], [32], i32>
  rngd.commit %r, %again : !fetch.stream<main, [4], [32], i32>, memref<128xi32>
  %bs = fetch.fetch %b : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  rngd.commit %bs, %bo : !fetch.stream<main, [4], [32], i8>, memref<4x32xi8>
  %cs = fetch.fetch %c : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  rngd.commit %cs, %co : !fetch.stream<main, [4], [32], i8>, memref<4x32xi8>
  %xs2 = fetch.fetch %x : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  %xz = fetch.zp_sub %xs2, 1 : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], i9>
  %y2 = rngd.contract_outer %xz, %qt : !fetch.stream<main, [4], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [4], [32], i32>
  %n = rngd.transpose %y2 : !fetch.stream<main, [4], [32], i32> -> !fetch.stream<main, [8], [16], i32>
  rngd.commit %n, %acc : !fetch.stream<main, [8], [16], i32>, memref<4x32xi32>
  func.return
}
"""
    rng = np.random.default_rng(3)
    b = rng.integers(-128, 128, (4, 32), dtype=np.int8)
    c = rng.integers(-128, 128, (4, 32), dtype=np.int8)
    out, diags = _run(text, q=np.ones((8, 32), np.int8), x=np.ones((4, 32), np.int8), b=b, c=c)
    assert sorted(out) == ["bo", "co"]
    assert_same(out["bo"], b, "bo")
    assert_same(out["co"], c, "co")
    names = re.compile(r"commits tensor '(\w+)'")
    assert [names.search(d.message).group(1) for d in diags] == ["acc", "again", "acc"]
    reread = _programs_reading(text, "acc")[0]
    assert f"depends on 'rngd.contract_outer' through tensor 'acc' (read back by program '{reread}')" in (
        diags[1].message
    )
    assert f"'{reread}'" in diags[1].message.split("feed it (")[1]


def test_cli_run_tensor_listing_leaves_the_contraction_out(tmp_path, capsys):
    """The command writes only the computable tensor (one process, in
    process: main())."""
    from fetchc.cli import main

    k = tmp_path / "k.mlir"
    k.write_text(MIXED)
    for name, arr in {"w": np.zeros((4, 64), np.uint8), "s": np.full((4, 4), 0x38, np.uint8),
                      "q": np.ones((8, 32), np.int8), "x": np.ones((4, 32), np.int8)}.items():  # fmt: skip
        np.save(tmp_path / f"{name}.npy", arr)
    args = [f"--arg={n}={tmp_path / n}.npy" for n in "wsqx"]
    rc = main(["run", str(k), *args, "--arg", "g=1", "-o", str(tmp_path / "o.npz")])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "o.npz: wd (4, 64) float32" in captured.out and "acc" not in captured.out
    assert f"{k}:14:3: warning: 'rngd.commit' op commits tensor 'acc'" in captured.err
    with np.load(tmp_path / "o.npz") as z:
        assert z.files == ["wd"]
