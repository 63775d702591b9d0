"""The compile path's speed shortcuts give what the plain paths give:
each memo, shared computation or cheaper check is compared here
with the computation it replaces, on the examples and on random distinct
chains (tools/bench_compile.py's workload)."""

from __future__ import annotations

import gc
import json
import sys
import weakref
from pathlib import Path

import pytest

import fetchc
from fetchc.driver import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from fetchc.frontend.context import make_context
from fetchc.frontend.parsing import parse_module
from fetchc.process import gc_paused
from fetchc.rewriting import walk
from fetchc.seqbin import Manifest
from fetchc.seqbin.manifest import ManifestError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from bench_compile import distinct_module  # noqa: E402

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.mlir"))


def _inputs() -> list[tuple[str, str]]:
    return [(p.name, p.read_text()) for p in EXAMPLES] + [(f"distinct-{s}", distinct_module(40, seed=s)[0]) for s in (3, 4)]


INPUTS = _inputs()


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_manifest_bytes_are_the_whole_document_encoded_at_once(name, text):
    manifest = fetchc.compile(text, filename=name, cache=False).seqbin.manifest
    whole = json.dumps(manifest.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert manifest.to_bytes() == whole
    assert manifest.to_bytes(check_shape=True) == whole


def _broken(manifest: Manifest, **tensor_fields) -> Manifest:
    import dataclasses

    k = manifest.kernels[-1]
    t = dataclasses.replace(k.tensors[-1], **tensor_fields)
    k = dataclasses.replace(k, tensors=k.tensors[:-1] + (t,))
    return dataclasses.replace(manifest, kernels=manifest.kernels[:-1] + (k,))


@pytest.mark.parametrize("fields", [{"shape": (4, -1)}, {"strides": (1, True)}, {"name": 7}, {"dm_base": 1 << 19}])
def test_the_writers_shape_check_is_from_dicts(fields):
    """Checked kernel by kernel, the MANIFEST fails as the whole document
    fails in ``from_dict``, with the same path and message."""
    manifest = fetchc.compile(EXAMPLES[0].read_text(), filename="x.mlir", cache=False).seqbin.manifest
    bad = _broken(manifest, **fields)
    with pytest.raises(ManifestError) as whole:
        Manifest.from_dict(bad.to_dict())
    with pytest.raises(ManifestError) as streamed:
        bad.to_bytes(check_shape=True)
    assert str(streamed.value) == str(whole.value)
    bad.to_bytes()  # without the check it encodes


def test_the_ops_a_pass_erases_are_freed_without_the_collector():
    """The driver releases what fetchc's passes erase (xdsl_compat.release_erased):
    with the collector paused, the erased fetch ops are gone after the
    pipeline."""
    from fetchc.process import gc_is_paused

    text = distinct_module(12, seed=5)[0]
    ctx = make_context()
    collections: list[str] = []

    def seen(phase: str, info: dict) -> None:
        collections.append(phase)

    gc.callbacks.append(seen)
    try:
        with gc_paused():
            module = parse_module(ctx, text, "x.mlir")
            fetches = [weakref.ref(op) for op in walk(module) if op.name == "fetch.fetch"]
            result = run_pipeline(module, ctx, parse_pipeline(",".join(DEFAULT_PIPELINE)))
            assert result.ok
            assert gc_is_paused() and collections == []  # no collection ran (the pause: test_gc_pause.py)
            assert fetches and all(ref() is None for ref in fetches)
    finally:
        gc.callbacks.remove(seen)


def _lowered(text: str):
    ctx = make_context()
    module = parse_module(ctx, text, "x.mlir")
    assert run_pipeline(module, ctx, parse_pipeline(",".join(DEFAULT_PIPELINE))).ok
    return module


@pytest.mark.parametrize("value", [0, 1, -5, 64, 1 << 19, (1 << 63) - 1])
def test_interned_attributes_equal_the_constructed_ones(value):
    from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i32, i64

    from fetchc.dialects.shared import i32_attr, i64_array, i64_attr

    assert i64_attr(value) == IntegerAttr(value, i64) and i64_attr(value) is i64_attr(value)
    assert i64_array([value, 3]) == DenseArrayBase.from_list(i64, [value, 3])
    assert i64_array((value, 3)) is i64_array([value, 3])
    if -(1 << 31) <= value < 1 << 31:
        assert i32_attr(value) == IntegerAttr(value, i32)
    else:
        with pytest.raises(Exception) as interned:
            i32_attr(value)
        with pytest.raises(Exception) as built:
            IntegerAttr(value, i32)
        assert str(interned.value) == str(built.value)


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_program_fields_are_read_from_the_properties(name, text):
    """ProgramOp.fields() (memoised, shared by the verifier and the emitter)
    equals a fresh read of the properties, and follows a changed property."""
    from fetchc.dialects.fetch_seq import ProgramOp
    from fetchc.dialects.shared import i64_attr

    programs = [op for op in walk(_lowered(text)) if isinstance(op, ProgramOp)]
    assert programs
    for op in programs:
        assert op.fields() == op._read_fields()
        assert op.fields() is op.fields()
    op = programs[0]
    op.properties["base"] = i64_attr(op.fields().base + 64)
    assert op.fields().base == op._read_fields().base == op.properties["base"].value.data


def test_the_sequencer_memo_follows_a_changed_base():
    from fetchc.dialects.fetch import FetchOp
    from fetchc.dialects.shared import i64_attr

    ctx = make_context()
    module = parse_module(ctx, distinct_module(8, seed=7)[0], "x.mlir")
    fetch = next(op for op in walk(module) if isinstance(op, FetchOp))
    before = fetch.sequencer_config()
    fetch.properties["base"] = i64_attr(fetch.base_value + 4096)
    assert fetch.sequencer_config().base == before.base + 4096


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_tensor_names_of_a_function_are_each_arguments(name, text):
    from fetchc.kernel import kernels, tensor_name, tensor_names

    module = _lowered(text)
    for func in kernels(module):
        assert tensor_names(func) == [tensor_name(a) for a in func.body.block.args]


def test_the_fast_parsers_spelling_memo_and_integer_path_build_what_xdsl_builds():
    """Types looked up by their spelling up to the first '>' (a nested
    layout, an alias, a prefix of another spelling) and `N : i64`
    properties, parsed both ways."""
    from parse_oracle import compare

    text = (
        "!s = !fetch.stream<main, [4, 2], [32], i8>\n"
        "func.func @k(%x: memref<4x64xi8>, %y: memref<4x64xi8, strided<[64, 1]>>, %o: memref<4x64xi8>,\n"
        "             %p: memref<4x64xi8, strided<[64, 1], offset: 0>>) {\n"
        "  %a = fetch.fetch %x {base = 64 : i64, map = affine_map<(a, t, e) -> (a, t * 32 + e)>}"
        " : memref<4x64xi8> -> !fetch.stream<main, [4, 2], [32], i8>\n"
        "  rngd.commit %a, %o : !s, memref<4x64xi8>\n"
        "  %b = fetch.fetch %y {base = -0 : i64, map = affine_map<(a, t, e) -> (a, t * 32 + e)>}"
        " : memref<4x64xi8, strided<[64, 1]>> -> !s\n"
        "  rngd.commit %b, %p : !fetch.stream<main, [4, 2], [32], i8>, memref<4x64xi8, strided<[64, 1], offset: 0>>\n"
        "  func.return\n}\n"
    )
    assert compare(make_context(), text) == "same"


def test_identity_cache_keys_on_identity_and_values_and_stays_bounded():
    from xdsl.dialects.builtin import MemRefType, f32

    from fetchc.dialects.shared import IdentityCache, memref_byte_span_of, memref_layout_of
    from fetchc.target.layout import memref_byte_span, memref_layout

    cache, calls = IdentityCache(2), []
    a, b = MemRefType(f32, [4, 8]), MemRefType(f32, [4, 8])  # equal, not identical

    def compute(tag):
        calls.append(tag)
        return tag

    assert cache.get((a,), (1,), lambda: compute("a1")) == "a1"
    assert cache.get((a,), (1,), lambda: compute("again")) == "a1"
    assert cache.get((b,), (1,), lambda: compute("b1")) == "b1"  # another object: its own entry
    assert cache.get((a,), (2,), lambda: compute("a2")) == "a2"  # another value
    assert len(cache._entries) == 2 and calls == ["a1", "b1", "a2"]
    for mt in (a, MemRefType(f32, [3, 5, 7])):
        strides, offset = memref_layout(mt)
        assert memref_layout_of(mt) == (tuple(strides), offset)
        assert memref_byte_span_of(mt) == memref_byte_span(mt)


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_cached_sequencer_configurations_equal_fresh_derivations(name, text):
    from fetchc.dialects.fetch import FetchOp, _sequencer_inputs
    from fetchc.dialects.fetch_chain import FetchChain
    from fetchc.target.layout import linear_coefficients, memref_layout
    from fetchc.target.sequencer import derive

    module = parse_module(make_context(), text, "x.mlir")
    for op in walk(module):
        if isinstance(op, FetchOp):
            cast = FetchChain.of(op).cast_output()
            inputs = _sequencer_inputs(op.memref, op.stream, op.map, op._base_or_none(), op._read_size())
            coeffs, consts = linear_coefficients(op.affine_map())
            strides, offset = memref_layout(op.memref)
            fresh = dict(inputs, map_coeffs=coeffs, map_consts=consts, memref_strides=strides, memref_offset=offset)
            assert op.sequencer_config() == derive(cast_out=cast, **fresh)


def test_direct_verification_gives_xdsls_terminator_message():
    """An op of ours that ends a function body: verify_op_alone's direct
    path (xdsl_compat._verify_placement) raises what xDSL's Operation.verify
    raises."""
    from xdsl.utils.exceptions import VerifyException

    from fetchc.frontend.xdsl_compat import verify_op_alone

    text = (
        "func.func @k(%x: memref<4x64xi8>, %o: memref<4x64xi8>) {\n"
        "  %a = fetch.fetch %x {base = 64 : i64} : memref<4x64xi8> -> !fetch.stream<main, [4], [64], i8>\n"
        "  rngd.commit %a, %o : !fetch.stream<main, [4], [64], i8>, memref<4x64xi8>\n}\n"
    )
    module = parse_module(make_context(), text, "x.mlir")
    commit = next(op for op in walk(module) if op.name == "rngd.commit")
    with pytest.raises(VerifyException) as direct:
        verify_op_alone(commit)
    with pytest.raises(Exception) as xdsl:
        commit.verify(verify_nested_ops=False)
    assert str(direct.value) == str(xdsl.value).splitlines()[0] == (
        "Operation rngd.commit terminates block in single-block region but is not a terminator"
    )


def _init_op_classes():
    from xdsl.irdl import IRDLOperation

    from fetchc.dialects import fetch, fetch_seq, rngd

    return tuple(
        cls
        for mod in (fetch, fetch_seq, rngd)
        for cls in vars(mod).values()
        if isinstance(cls, type) and issubclass(cls, IRDLOperation) and "init_op(" in _source(cls.__init__)
    )


def _source(fn) -> str:
    import inspect

    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_init_op_builds_what_irdl_op_init_builds(name, text):
    """shared.init_op (the constructors' cheap path) and IRDL's own
    irdl_op_init, given the same operands, result types and properties, build
    ops with the same operands, results, properties, attributes, regions and
    successors, for every op of the classes that use it in a parsed and a
    lowered module."""
    from xdsl.irdl import IRDLOperation

    from fetchc.dialects.shared import init_op

    classes = _init_op_classes()
    assert len(classes) >= 6, classes
    ctx = make_context()
    ops = [op for m in (parse_module(ctx, text, "x.mlir"), _lowered(text)) for op in walk(m) if isinstance(op, classes)]
    assert ops
    for op in ops:
        cls = type(op)
        operands, types, props = list(op.operands), [r.type for r in op.results], dict(op.properties)
        cheap, irdl = cls.__new__(cls), cls.__new__(cls)
        init_op(cheap, operands, types, props)
        IRDLOperation.__init__(irdl, operands=operands, result_types=types, properties=props)
        for built in (cheap, irdl):
            assert [o for o in built.operands] == operands
            assert [r.type for r in built.results] == types
        assert cheap.properties == irdl.properties
        assert cheap.attributes == irdl.attributes
        assert len(cheap.regions) == len(irdl.regions) == 0
        assert len(cheap.successors) == len(irdl.successors) == 0
        for built in (cheap, irdl):
            built.drop_all_references()


def _fetchc_op_classes() -> list[type]:
    from fetchc.dialects.fetch import Fetch
    from fetchc.dialects.fetch_seq import FetchSeq
    from fetchc.dialects.rngd import Rngd

    return [cls for d in (Fetch, Rngd, FetchSeq) for cls in d.operations]


def _plain_single_accessors(cls) -> dict:
    """xDSL's own descriptors for the class, built afresh from its op
    definition: the single operands, results and regions before any
    variadic one."""
    from xdsl.irdl.operations import BeforeVariadicSingleAccessor, get_accessors_from_op_def

    made = get_accessors_from_op_def(cls.get_irdl_definition(), None)
    return {k: v for k, v in made.items() if type(v) is BeforeVariadicSingleAccessor}


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_direct_accessors_read_what_xdsls_accessors_read(name, text):
    """shared.direct_accessors: every single operand, result and region
    accessor of fetchc's ops is replaced, and on every op of a parsed and a
    lowered module it gives the very object xDSL's descriptor gives."""
    classes = _fetchc_op_classes()
    plain = {cls: _plain_single_accessors(cls) for cls in classes}
    for cls, accessors in plain.items():
        for attr in accessors:
            assert type(vars(cls)[attr]).__name__.startswith("_Direct"), (cls, attr)
    ctx = make_context()
    read = 0
    for module in (parse_module(ctx, text, "x.mlir"), _lowered(text)):
        for op in walk(module):
            for attr, acc in plain.get(type(op), {}).items():
                assert getattr(op, attr) is acc.__get__(op)
                read += 1
    assert read


def test_direct_accessors_fail_as_xdsls_do():
    """An op built without its operands and results: each direct accessor
    raises IndexError where xDSL's does, and writing one raises xDSL's
    NotImplementedError."""
    from xdsl.ir import Operation

    checked = 0
    for cls in _fetchc_op_classes():
        op = cls.__new__(cls)
        Operation.__init__(op)
        for attr, acc in _plain_single_accessors(cls).items():
            with pytest.raises(IndexError):
                acc.__get__(op)
            with pytest.raises(IndexError):
                getattr(op, attr)
            with pytest.raises(NotImplementedError):
                setattr(op, attr, None)
            checked += 1
    assert checked > 20


def _exit_script(plain: bool, args: list[str]) -> str:
    """The fetchc command as its console script runs it (``entry`` from
    fetchc.command: fetchc owns the process, so a success ends with
    cli._leave) with an atexit handler and a non-daemon thread that both
    print; ``plain``: leaving through the interpreter's own exit instead of
    cli._leave."""
    return (
        "import atexit, sys, threading, time\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread joined'))).start()\n"
        f"sys.argv = ['fetchc', *{args!r}]\n"
        "from fetchc import cli\n"
        "from fetchc.command import entry\n"
        + ("cli._leave = lambda: sys.exit(0)\n" if plain else "")
        + "sys.exit(entry())\n"
    )


@pytest.mark.parametrize("emit", ["bin", "mlir"])
def test_a_successful_command_leaves_as_the_interpreters_exit_does(tmp_path, emit):
    """cli._leave (os._exit after threads, atexit and flushing, skipping
    the interpreter's finalisation) and the interpreter's own exit give the
    same status, stdout, stderr and output bytes; with stdout a pipe nobody
    reads, both report the failed flush the same way (status 120)."""
    import os
    import re
    import subprocess

    example = str(EXAMPLES[0])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout stays buffered until exit
    env.update(FETCHC_NO_CACHE="1", FETCHC_CACHE_DIR=str(tmp_path / "cache"))
    seen = []
    for plain in (False, True):
        out = tmp_path / f"out-{plain}"
        r = subprocess.run([sys.executable, "-c", _exit_script(plain, [f"--emit={emit}", example, "-o", str(out)])],
                           capture_output=True, env=env, timeout=300)
        read, write = os.pipe()
        os.close(read)
        try:
            broken = subprocess.run([sys.executable, "-c", _exit_script(plain, [example, "-o", str(out) + ".2"])],
                                    stdout=write, stderr=subprocess.PIPE, env=env, timeout=300)
        finally:
            os.close(write)
        report = re.sub(rb" at 0x[0-9a-f]+", b"", broken.stderr)
        seen.append((r.returncode, r.stdout, r.stderr, out.read_bytes(), broken.returncode, report))
    assert seen[0] == seen[1]
    assert seen[0][:3] == (0, b"thread joined\natexit ran\n", b"")
    assert seen[0][4] == 120 and b"BrokenPipeError" in seen[0][5], seen[0][5]


def test_stage_codes_are_the_sum_of_their_bits():
    """fetch_seq._stages_code (one entry per set of stages) is the plain sum
    of the stages' PROGRAMS word-24 bits, for every one of the 16 sets."""
    from itertools import combinations

    from fetchc import target
    from fetchc.dialects.fetch_seq import Stage, StagesAttr, _stages_code

    sets = [frozenset(c) for n in range(5) for c in combinations(list(Stage), n)]
    assert len(sets) == 16
    for flags in sets:
        plain = sum(s.bit for s in target.STAGES if Stage(s.name) in flags)
        assert _stages_code(flags) == StagesAttr(list(flags)).code == plain


@pytest.mark.parametrize("name", ["t0", "table_f4E2M1FN_to_bf16", "with space", "a.b"])
def test_table_references_print_as_xdsl_prints_them(name):
    """fetch_seq._symbol_ref and _ref_text (check_program's name for a
    table, once per attribute object) equal SymbolRefAttr(name) and
    str(SymbolRefAttr(name)), also for a name that needs quotes and a nested
    reference."""
    from xdsl.dialects.builtin import SymbolRefAttr

    from fetchc.dialects.fetch_seq import _ref_text, _symbol_ref

    ref = _symbol_ref(name)
    assert ref == SymbolRefAttr(name) and _symbol_ref(name) is ref
    assert _ref_text(ref) == _ref_text(ref) == str(SymbolRefAttr(name))
    nested = SymbolRefAttr(name, ["inner"])
    assert _ref_text(nested) == str(nested)


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_structural_instance_predicates_are_isinstance(name, text):
    """structural._instance_pred (which remembers the types found to be
    instances) answers isinstance for every property value and operand or
    result type of a parsed and a lowered module, against every attribute
    class an op definition of ours names, asked twice."""
    from xdsl.irdl import BaseAttr

    from fetchc.frontend.structural import _instance_pred

    classes = {
        d.constr.attr
        for cls in _fetchc_op_classes()
        for _, d in cls.get_irdl_definition().properties.items()
        if isinstance(d.constr, BaseAttr)
    }
    assert len(classes) >= 5, classes
    preds = {cls: _instance_pred(cls) for cls in classes}
    ctx = make_context()
    values = [
        v
        for module in (parse_module(ctx, text, "x.mlir"), _lowered(text))
        for op in walk(module)
        for v in (*op.properties.values(), *(x.type for x in (*op.operands, *op.results)))
    ]
    assert values
    for _ in range(2):
        for v in values:
            for cls, pred in preds.items():
                assert pred(v) == isinstance(v, cls), (v, cls)


def test_an_erased_operand_is_still_reported_as_xdsl_reports_it():
    """_verify_placement skips the ABC check for OpResult and BlockArgument
    operands only: an op using an erased value fails as xDSL's verify does."""
    from xdsl.ir import ErasedSSAValue

    from fetchc.frontend.xdsl_compat import verify_op_alone

    module = parse_module(make_context(), EXAMPLES[0].read_text(), "x.mlir")
    op = next(o for o in walk(module) if o.name == "rngd.commit")
    first = op.operands[0]
    op.operands = [ErasedSSAValue(first.type, first), *op.operands[1:]]
    with pytest.raises(ValueError) as xdsl:
        op.verify(verify_nested_ops=False)
    with pytest.raises(ValueError) as ours:
        verify_op_alone(op)
    assert str(ours.value) == str(xdsl.value).splitlines()[0] == "Erased SSA value is used by the operation"
