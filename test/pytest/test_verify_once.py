"""Verification once (docs/architecture.md): the specialised structural checks of
fetchc's ops agree with xDSL's generic IRDL verification, a compile verifies
each parsed op once and afterwards only what each pass created, and
``--verify-each`` / ``FETCHC_VERIFY_EACH`` turn full verification after every
pass back on without changing any output."""

from __future__ import annotations

import gc
import pathlib

import pytest
from xdsl.dialects.builtin import IntegerAttr, StringAttr, i1, i64
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

import fetchc
from fetchc.diagnostics import DiagnosticError
from fetchc.driver import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from fetchc.frontend import verify as verify_mod
from fetchc.frontend.context import make_context
from fetchc.frontend.parsing import parse_module, split_input_file
from fetchc.frontend.structural import compile_check
from fetchc.frontend.xdsl_compat import irdl_parts
from fetchc.process import gc_paused
from fetchc.rewriting import FetchcPass, apply_pattern, walk

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
LIT_INPUTS = sorted(p for p in (ROOT / "test" / "lit").rglob("*.mlir") if "Output" not in p.parts)


def _ours(op: Operation) -> bool:
    return type(op).__module__.startswith("fetchc.dialects.")


def _generic_ok(op: Operation) -> bool:
    """xDSL's own verdict on the op's IRDL structure (``OpDef.verify``)."""
    op_def, _ = irdl_parts(type(op))
    try:
        op_def.verify(op)
    except VerifyException:
        return False
    return True


def _check(op: Operation):
    op_def, _ = irdl_parts(type(op))
    return compile_check(op_def)


def _modules_along_the_pipeline(text: str, name: str):
    """Every chunk of ``text`` that parses, and the module after each pass of
    the default pipeline while it still verifies."""
    ctx = make_context()
    for chunk, offset in split_input_file(text):
        try:
            module = parse_module(ctx, chunk, name, offset)
        except DiagnosticError:
            continue
        yield module
        for p in parse_pipeline(",".join(DEFAULT_PIPELINE)):
            if not run_pipeline(module, ctx, [p], verify_each=True).ok:
                break
            yield module


def _all_ops():
    for path in [*EXAMPLES, *LIT_INPUTS]:
        for module in _modules_along_the_pipeline(path.read_text(), path.name):
            yield from (op for op in walk(module) if _ours(op))


def test_every_op_class_of_ours_has_a_specialised_check():
    from fetchc.frontend.context import fetchc_dialects

    classes = [op for factory in fetchc_dialects().values() for op in factory().operations]
    assert len(classes) >= 15
    uncovered = [c.name for c in classes if irdl_parts(c) is None or compile_check(irdl_parts(c)[0]) is None]
    assert uncovered == []


def test_structural_check_agrees_with_xdsl_on_every_op_we_meet():
    seen = 0
    kinds: set[str] = set()
    for op in _all_ops():
        check = _check(op)
        assert check(op) == _generic_ok(op), op.name
        seen += 1
        kinds.add(op.name)
    assert seen > 300 and len(kinds) >= 15, (seen, sorted(kinds))


def _mutations(op: Operation):
    """Copies of ``op`` broken in one structural way each: a wrong result
    type, an operand dropped, a required property removed, a property of the
    wrong class, an unknown property."""
    yield "result type", lambda o: o.results and setattr(o.results[0], "_type", i1)
    yield "operand dropped", lambda o: o.operands and setattr(o, "operands", tuple(o.operands)[1:])
    for name in list(op.properties):
        yield f"{name} removed", lambda o, n=name: o.properties.pop(n)
        yield f"{name} wrong class", lambda o, n=name: o.properties.__setitem__(n, StringAttr("x"))
    yield "unknown property", lambda o: o.properties.__setitem__("bogus", IntegerAttr(1, i64))


def test_structural_check_rejects_what_xdsl_rejects():
    """Broken ops of every example: the predicate never accepts what xDSL's
    generic check rejects (it may reject more: xDSL then gives its own
    message).  Every kind of mutation is seen rejected."""
    rejected: set[str] = set()
    for example in EXAMPLES:
        for module in _modules_along_the_pipeline(example.read_text(), example.name):
            for op in [o for o in walk(module) if _ours(o)]:
                for what, mutate in _mutations(op):
                    clone = op.clone()
                    try:
                        mutate(clone)
                    except (IndexError, ValueError, TypeError, AttributeError):
                        continue
                    if not _generic_ok(clone):
                        assert not _check(clone)(clone), (op.name, what)
                        rejected.add(what.split()[-1] if " removed" in what or " class" in what else what)
    assert {"result type", "operand dropped", "removed", "class", "unknown property"} <= rejected, rejected


def test_a_broken_op_still_gets_xdsls_message():
    module = parse_module(make_context(), (ROOT / "examples" / "int8_zero_point_contract.mlir").read_text(), "k.mlir")
    zp = next(op for op in walk(module) if op.name == "fetch.zp_sub")
    zp.properties["zero_point"] = StringAttr("three")
    op_def, _ = irdl_parts(type(zp))
    with pytest.raises(VerifyException) as generic:
        op_def.verify(zp)
    diags = verify_mod.verify_module(module)
    assert [d.message for d in diags] == [f"'fetch.zp_sub' op {generic.value.args[0]}"]


def _count_verifications(monkeypatch) -> list[Operation]:
    calls: list[Operation] = []
    real = verify_mod.verify_op_alone

    def counting(op):
        calls.append(op)
        real(op)

    monkeypatch.setattr(verify_mod, "verify_op_alone", counting)
    return calls


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_a_compile_verifies_each_op_once(example, monkeypatch):
    """Without --verify-each: every parsed op is verified once, then each op
    a pass creates once, and nothing else."""
    monkeypatch.delenv("FETCHC_VERIFY_EACH", raising=False)
    ctx = make_context()
    module = parse_module(ctx, example.read_text(), example.name)
    parsed = list(walk(module))
    calls = _count_verifications(monkeypatch)
    result = run_pipeline(module, ctx, parse_pipeline(",".join(DEFAULT_PIPELINE)))
    assert result.ok, result.diagnostics
    ids = [id(op) for op in calls]
    assert len(ids) == len(set(ids)), "an op was verified twice"
    assert set(map(id, parsed)) <= set(ids)
    created = [op for op in calls if id(op) not in set(map(id, parsed))]
    assert all(op.name.startswith(("fetch", "rngd", "fetch_seq")) for op in created)


def test_verify_each_verifies_everything_after_every_pass(monkeypatch):
    example = ROOT / "examples" / "nvfp4_dequant_f32.mlir"
    ctx = make_context()
    module = parse_module(ctx, example.read_text(), example.name)
    calls = _count_verifications(monkeypatch)
    passes = parse_pipeline(",".join(DEFAULT_PIPELINE))
    assert run_pipeline(module, ctx, passes, verify_each=True).ok
    assert len(calls) > len(passes) * 5  # the whole module after each pass


def test_verify_each_is_the_default_where_the_environment_says_so(monkeypatch):
    from fetchc.driver import verify_each_default

    monkeypatch.setenv("FETCHC_VERIFY_EACH", "1")
    assert verify_each_default()
    monkeypatch.setenv("FETCHC_VERIFY_EACH", "0")
    assert not verify_each_default()
    monkeypatch.delenv("FETCHC_VERIFY_EACH")
    assert not verify_each_default()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_verify_once_and_verify_each_give_the_same_bytes(example, monkeypatch):
    text = example.read_text()
    monkeypatch.setenv("FETCHC_VERIFY_EACH", "1")
    each = fetchc.compile(text, filename=example.name).seq_bin
    monkeypatch.setenv("FETCHC_VERIFY_EACH", "0")
    once = fetchc.compile(text, filename=example.name).seq_bin
    assert once == each


class _BreakCasts(FetchcPass):
    """A broken pass: inserts, before every fetch.cast, an identical cast
    into an illegal type (the verifier of what a pass creates must see it)."""

    name = "test-break-casts"

    def apply_tracked(self, ctx, op, listener):
        from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

        from fetchc.dialects.fetch import CastOp

        class P(RewritePattern):
            def match_and_rewrite(self, o, rewriter: PatternRewriter):
                if isinstance(o, CastOp) and o.results[0].type.elem.name == "f32":
                    rewriter.insert(CastOp(o.operands[0], o.results[0].type.with_element(i1)))

        apply_pattern(P(), op, listener)


def test_an_invalid_op_a_pass_creates_is_reported_without_verify_each():
    example = ROOT / "examples" / "nvfp4_dequant_f32.mlir"
    ctx = make_context()
    module = parse_module(ctx, example.read_text(), example.name)
    passes = parse_pipeline("fetch-route-sub-decode,fetch-place-dm,fetch-legalize-convert,fetch-split-scaling")
    result = run_pipeline(module, ctx, [*passes, _BreakCasts()], verify_each=False)
    assert not result.ok
    assert any("after pass 'test-break-casts'" in d.message and "'fetch.cast' op" in d.message for d in result.diagnostics)


def test_gc_paused_restores_the_collector():
    """(The pause's rule across threads: test_gc_pause.py.)"""
    assert gc.isenabled()
    before = gc.get_threshold()
    with gc_paused():
        assert gc.isenabled()  # the host's switch is never touched
        assert gc.get_threshold()[0] > 1 << 30  # no automatic collection starts
    assert gc.isenabled() and gc.get_threshold() == before
    with pytest.raises(RuntimeError):
        with gc_paused():
            raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
