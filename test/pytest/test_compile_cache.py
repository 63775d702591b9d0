"""The kernel compile cache (fetchc/compile_cache.py, fetchc/irkey.py,
fetchc/cachedir.py; docs/cli.md "The kernel compile cache").

The cache must never change a result: every cached compile (cold and warm,
in process through ``fetchc.compile`` and on disk through the command)
gives the bytes, exit status and every diagnostic line of an uncached one,
for every spelling the parser accepts (quoted and nested attribute
dictionaries, aliases, the generic form, locations and their aliases, SSA
names ending in ``_<digits>``, kernels equal up to names in one file),
every environment that changes a compile, every pipeline; its pruning
deletes only files it wrote and follows no link.  Tests run in process
(``fetchc.cli.main``), except one that counts the imports of a real
``fetchc`` process."""

from __future__ import annotations

import os
import random
import re
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import fetchc
from fetchc import api, cachedir, compile_cache
from fetchc.cli import main
from fetchc.compile_cache import Compiled, KernelCache
from fetchc.diagnostics import Diagnostic, DiagnosticError

from modgen import PROPERTY, modules
from samples import DECODE

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
CORPUS = sorted((ROOT / "test" / "fuzz-corpus" / "mlir").glob("*.mlir"))

sys.path.insert(0, str(ROOT / "tools"))
from bench_compile import model_module  # noqa: E402


# ------------------------------------------------------------------ helpers


def _outcome(fn):
    """``("ok", bytes)`` or ``("error", [(severity, message, loc), ...])``."""
    try:
        return "ok", fn()
    except DiagnosticError as e:
        return "error", [(d.severity, d.message, d.loc) for d in e.diagnostics]


def _plain(text: str, name: str = "in.mlir"):
    return _outcome(lambda: fetchc.compile(text, filename=name, cache=False).seq_bin)


@pytest.fixture
def through(monkeypatch):
    """``through(cache, text)``: the outcome of ``fetchc.compile(text,
    cache=True)`` with ``cache`` as the process's kernel cache."""

    def compile_with(cache: KernelCache, text: str, name: str = "in.mlir"):
        monkeypatch.setattr(api, "_CACHE", cache)
        return _outcome(lambda: fetchc.compile(text, filename=name, cache=True).seq_bin)

    return compile_with


class Command:
    """The ``fetchc`` command in this process (``fetchc.cli.main``), with a
    cache directory of its own: ``run(text, *args, cache=True, env={})``
    writes ``text`` to ``in.mlir`` (or ``name``) and returns ``(status,
    stdout, stderr, output bytes or None)``."""

    def __init__(self, tmp_path: Path, monkeypatch, capsys) -> None:
        self.dir, self.mp, self.capsys = tmp_path, monkeypatch, capsys
        self.cache_dir = tmp_path / "cache"

    def run(self, text: str | None, *args: str, cache: bool = True, env: dict | None = None, name: str = "in.mlir"):
        src = self.dir / name
        if text is not None:
            src.write_text(text)
        out = self.dir / "out.bin"
        out.unlink(missing_ok=True)
        with self.mp.context() as m:
            m.setenv("FETCHC_CACHE_DIR", str(self.cache_dir))
            m.setenv("FETCHC_NO_CACHE", "0" if cache else "1")
            for k, v in (env or {}).items():
                if v is None:
                    m.delenv(k, raising=False)
                else:
                    m.setenv(k, v)
            m.chdir(self.dir)
            self.capsys.readouterr()
            status = main([name, *args, "-o", "out.bin"])
            cap = self.capsys.readouterr()
        return status, cap.out, cap.err, out.read_bytes() if out.exists() else None

    def agree(self, text: str, *args: str, env: dict | None = None, name: str = "in.mlir"):
        """Run ``text`` without the cache, then twice with it (the kernel
        cache as it is, then the whole-input repeat); all three must agree
        in status, stdout, stderr and output.  Returns the outcome."""
        plain = self.run(text, *args, cache=False, env=env, name=name)
        first = self.run(text, *args, env=env, name=name)
        again = self.run(text, *args, env=env, name=name)
        assert first == plain, (text, plain[2], first[2])
        assert again == plain, (text, plain[2], again[2])
        return plain

    def entries(self) -> list[Path]:
        return sorted(p for p in self.cache_dir.rglob("*") if p.suffix in (".fsq", ".bin") and p.is_file())


@pytest.fixture
def command(tmp_path, monkeypatch, capsys):
    return Command(tmp_path, monkeypatch, capsys)


def kernel(fn="k", a="w", b="o", a_attrs="", b_attrs="", a_type="memref<64x32xbf16>", b_type="memref<64x32xf32>",
           locs=("", "", "")):  # fmt: skip
    """A one-program kernel: fetch ``%a`` (bf16), cast to f32, commit to
    ``%b``; ``locs``: text after the fetch, the cast and the commit."""
    s_in = "!fetch.stream<main, [64], [32], bf16>"
    s_out = "!fetch.stream<main, [64], [32], f32>"
    return (
        f"func.func @{fn}(%{a}: {a_type}{a_attrs}, %{b}: {b_type}{b_attrs}) {{\n"
        f"  %s = fetch.fetch %{a} : {a_type} -> {s_in}{locs[0]}\n"
        f"  %c = fetch.cast %s : {s_in} -> {s_out}{locs[1]}\n"
        f"  rngd.commit %c, %{b} : {s_out}, {b_type}{locs[2]}\n"
        "  func.return\n}\n"
    )


def dequant(fn="dq", gscale="0.5"):
    """An NVFP4 dequant kernel whose tensor scale is an ``arith.constant``."""
    st = "!fetch.stream<main, [16, 64], [64], f4E2M1FN>"
    out = st.replace("f4E2M1FN", "f32")
    return (
        f"func.func @{fn}(%w: memref<16x4096xf4E2M1FN>, %s: memref<16x256xf8E4M3FN>, %o: memref<16x4096xf32>) {{\n"
        f"  %c = fetch.fetch %w {{map = affine_map<(o, p, e) -> (o, p * 64 + e)>}} : memref<16x4096xf4E2M1FN> -> {st}\n"
        f"  %g = arith.constant {gscale} : f32\n"
        f'  %d = fetch.dequant %c, %s, %g {{format = "nvfp4"}} : {st}, memref<16x256xf8E4M3FN>, f32 -> {out}\n'
        f"  rngd.commit %d, %o : {out}, memref<16x4096xf32>\n  func.return\n}}\n"
    )


def _generic(text: str) -> str:
    from fetchc.driver import print_module
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module

    return print_module(parse_module(shared_context(), text, "g.mlir"), generic=True, debuginfo=True)


def _mapped(offset: int, alias: bool) -> str:
    m = f"affine_map<(t, e) -> (t + {offset}, e)>"
    head = f"#m = {m}\n" if alias else ""
    return head + (
        "func.func @mapped(%w: memref<128x32xbf16>, %o: memref<64x32xbf16>) {\n"
        f"  %s = fetch.fetch %w {{map = {'#m' if alias else m}}} : memref<128x32xbf16> -> "
        "!fetch.stream<main, [64], [32], bf16>\n"
        "  rngd.commit %s, %o : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>\n  func.return\n}\n"
    )


Q = ' {"rngd.name" = "a"}'
TABLE_NAMED = DECODE.replace("@decode", "@f4E2M1FN_to_f8E4M3FN")

SPELLINGS = {
    # the reported bug: a quoted key, two kernels equal up to SSA names in one file
    "quoted rngd.name, two kernels": [kernel("k", "a", a_attrs=Q) + kernel("j", "w", a_attrs=Q)],
    "nested rngd.name, two kernels": [
        kernel("k", "z", a_attrs=' {foo = {rngd.name = "z"}}') + kernel("j", "w", a_attrs=' {foo = {rngd.name = "z"}}')
    ],
    "quoted and bare keys, other names": [
        kernel(a_attrs=' {rngd.name = "a"}'),
        kernel(a_attrs=Q),
        kernel(a_attrs=' {"rngd.name" = "b"}', b_attrs=' {rngd.name = "a"}'),
        kernel(a_attrs=' {"rngd.name" = "b", "foo" = {"rngd.name" = "c"}}'),
    ],
    "arguments swapped in the second kernel": [kernel("k", "w", "o") + kernel("j", "o", "w")],
    "dictionary order": [kernel(a_attrs=' {x = 1, rngd.name = "n"}'), kernel(a_attrs=' {rngd.name = "n", x = 1}')],
    "type aliases": [
        "!in = memref<64x32xbf16>\n!out = memref<64x32xf32>\n" + kernel(a_type="!in", b_type="!out"),
        kernel(),
        "!in = memref<64x32xbf16, strided<[64, 1]>>\n!out = memref<64x32xf32>\n" + kernel(a_type="!in", b_type="!out"),
    ],
    "attribute aliases": [_mapped(0, True), _mapped(0, False), _mapped(64, True), _mapped(64, False)],
    "generic form": [kernel(), _generic(kernel()), _generic(kernel("j", "x", "y"))],
    "locations": [
        kernel(locs=(' loc("other.mlir":7:3)', "", "")),
        "#l = loc(\"aliased.mlir\":1:2)\n" + kernel(locs=(" loc(#l)", "", "")),
        kernel(locs=(" loc(unknown)", "", "")),
        kernel(locs=(' loc(fused["a.mlir":1:1, "b.mlir":2:2])', "", "")),
        kernel(locs=(' loc(fused[unknown, "b.mlir":2:2])', "", "")),
        kernel(locs=(' loc(callsite("f.mlir":3:4 at "g.mlir":5:6))', "", "")),
        kernel(locs=(' loc("named"("n.mlir":9:9))', "", "")),
        kernel(locs=(' loc("same.mlir":1:1)', ' loc("same.mlir":1:1)', "")),
        kernel(),
    ],
    "SSA names ending in _<digits>": [
        kernel(a="w_1", b="o_2"),
        kernel(a="x_1", b="x_2"),  # both named "x": an error
        kernel(a="x", b="x_3"),
        kernel(a="w_12", b="w_0x"),
    ],
    "kernel names": [kernel("k"), kernel('"a b"'), kernel('"f4E2M1FN_to_f8E4M3FN"'), kernel('"k/0"')],
    "kernel named like a table": [DECODE, TABLE_NAMED, DECODE + TABLE_NAMED.replace("%w", "%v")],
    "float constants": [dequant(gscale=g) for g in ("0.0", "-0.0", "0x7FC00000", "0x7FC00001")],
    "kernels equal up to names": [model_module(1)[0]],
}


# -------------------------------------------- item 1: one reading, one answer


@pytest.mark.parametrize("case", SPELLINGS)
def test_every_spelling_compiles_as_without_the_cache_in_process(case, through):
    warm, ok = KernelCache(), 0
    for text in SPELLINGS[case]:
        plain = _plain(text)
        assert through(KernelCache(), text) == plain, "cold"
        assert through(warm, text) == plain, "warm"
        assert through(warm, text) == plain, "repeat"
        ok += plain[0] == "ok"
    assert ok and warm.hits + warm.misses  # the cache took some of them


@pytest.mark.parametrize("case", SPELLINGS)
def test_every_spelling_compiles_as_without_the_cache_on_disk(case, command):
    """The command: cold, warm (the kernels of the texts before), and the
    whole-input repeat; status, stdout, every stderr line and the bytes."""
    for text in SPELLINGS[case]:
        command.agree(text)
    assert command.entries()


def test_the_reported_names_are_the_inputs_own(monkeypatch):
    """The MANIFEST names a cached compile stamps are the names of this
    input's tensors, read off the parsed IR (the bug: the second of two
    kernels equal up to SSA names got the first one's, so ``--arg a=`` fed
    the wrong tensor)."""
    want = {"quoted rngd.name, two kernels": [["a", "o"], ["a", "o"]],
            "nested rngd.name, two kernels": [["z", "o"], ["w", "o"]]}  # fmt: skip
    for case, names in want.items():
        cache = KernelCache()
        monkeypatch.setattr(api, "_CACHE", cache)
        result = fetchc.compile(SPELLINGS[case][0], filename="in.mlir", cache=True)
        assert (cache.hits, cache.misses) == (0, 1)  # the two kernels share one compile
        assert [[t.name for t in k.tensors] for k in result.seqbin.manifest.kernels] == names


_RANDOM_CACHE = KernelCache()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(gm=modules(max_chains=1, profile=replace(PROPERTY, dress_args=True, funcs=(1, 2, 3))))
def test_random_modules_compile_as_without_the_cache(gm):
    """Random modules (test/support/modgen.py) whose arguments carry bare,
    quoted and nested attribute dictionaries and ``_<digits>`` SSA names,
    compiled through one cache, then again with their functions renamed
    (every kernel a hit): the uncached outcome, bytes or every diagnostic."""
    saved = api._CACHE
    api._CACHE = _RANDOM_CACHE
    try:
        for text in (gm.text, gm.text.replace("@k", "@renamed_k")):
            got = _outcome(lambda t=text: fetchc.compile(t, filename="r.mlir", cache=True).seq_bin)
            assert got == _plain(text, "r.mlir")
    finally:
        api._CACHE = saved


def test_kernels_equal_up_to_names_compile_once(through):
    text, _ = model_module(2)
    cache = KernelCache()
    assert through(cache, text) == _plain(text)
    assert (cache.hits, cache.misses) == (0, 3)  # q/k/v/o, gate/up, down
    renamed = re.sub(r"\bl(\d+)_", r"layer\1x_", text).replace("%", "%v_")
    assert through(cache, renamed) == _plain(renamed)
    assert cache.misses == 3 and cache.hits == 3


def _rename(text: str, rng: random.Random) -> str:
    """The same kernels with other SSA and function names (of other lengths),
    other indentation and extra comment lines: what differs only in names
    and locations."""
    names: dict[str, str] = {}
    for n in sorted(set(re.findall(r"%(\w+)", text))):
        new = f"{rng.choice('abcxyz')}{rng.randrange(10 ** rng.randrange(1, 6))}v"
        while new in names.values():  # one new name per name: two names made one would be another kernel
            new += "x"
        names[n] = new
    names = {k: v for k, v in names.items() if not k.isdigit()}
    funcs = {f: f"{f}_{rng.randrange(1000)}" for f in re.findall(r"func\.func @(\w+)", text)}
    out = re.sub(r"%(\w+)", lambda m: "%" + names.get(m.group(1), m.group(1)), text)
    out = re.sub(r"@(\w+)", lambda m: "@" + funcs.get(m.group(1), m.group(1)), out)
    lines = []
    for line in out.splitlines():
        if rng.random() < 0.2:
            lines.append("// " + "padding " * rng.randrange(4))
        lines.append(" " * rng.randrange(3) + line if line.strip().startswith("%") else line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_renamed_examples_hit_and_get_their_own_names_and_locations(path, through):
    text = path.read_text()
    cache = KernelCache()
    assert through(cache, text, path.name) == _plain(text, path.name)
    other = _rename(text, random.Random(path.name))
    misses = cache.misses
    assert through(cache, other, "renamed.mlir") == _plain(other, "renamed.mlir")
    assert cache.misses == misses, "a renamed kernel missed"


def test_every_example_and_corpus_file_compiles_as_without_the_cache(through):
    """In process, through one cache, for every example and fuzz-corpus
    input (many are errors: the same diagnostics)."""
    cache = KernelCache()
    handled = 0
    for path in [*EXAMPLES, *CORPUS]:
        text = path.read_text(errors="surrogateescape")
        plain = _plain(text, path.name)
        assert through(cache, text, path.name) == plain, path
        handled += plain[0] == "ok"
    assert cache.misses >= len(EXAMPLES) and handled >= len(EXAMPLES)


def test_a_partial_hit_compiles_only_the_new_kernels(monkeypatch, through):
    a = (ROOT / "examples" / "int8_zero_point_contract.mlir").read_text()
    b = (ROOT / "examples" / "transpose_nchw_to_whcn.mlir").read_text()
    cache = KernelCache()
    through(cache, a)
    compiled: list[list[str]] = []
    real = api.compile_parsed

    def counting(module, *args, **kw):
        compiled.append([op.sym_name.data for op in module.ops])
        return real(module, *args, **kw)

    monkeypatch.setattr(api, "compile_parsed", counting)
    both = a + "\n" + b
    assert through(cache, both) == _plain(both)
    assert compiled[0] == ["nchw_to_whcn"]  # the first (cached) compile: only the new kernel


def test_a_compile_that_reports_anything_stores_nothing():
    """A warning (here one the caller's compile adds) is never hidden by a
    later hit: nothing is stored, and the compile's own outcome is the
    answer."""
    from fetchc.driver import DEFAULT_PIPELINE, parse_pipeline
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module

    ctx = shared_context()
    passes = parse_pipeline(",".join(DEFAULT_PIPELINE))
    warning = Diagnostic("warning", "something to say")

    def warns(module, checked):
        c = api.compile_parsed(module, ctx, passes, checked=checked)
        return Compiled([*c.diagnostics, warning], c.seqbin, c.data, c.module)

    cache = KernelCache()
    for text in (kernel(), kernel("a") + kernel("b")):
        got = cache.compile_module(
            parse_module(ctx, text, "t.mlir"), "p", passes, warns, lambda t=text: parse_module(ctx, t, "t.mlir")
        )
        assert got.diagnostics == [warning] and got.data is not None
    assert cache._memory == {}


def test_the_in_process_cache_is_bounded(monkeypatch, through):
    monkeypatch.setattr(compile_cache, "MEMORY_ENTRIES", 3)
    monkeypatch.setattr(compile_cache, "MEMORY_INPUTS", 2)
    cache = KernelCache()
    for path in EXAMPLES:
        through(cache, path.read_text(), path.name)
    assert len(cache._memory) == 3 and len(cache._inputs) == 2


def test_compile_result_module_of_a_cached_compile_is_the_real_one(monkeypatch):
    text = (ROOT / "examples" / "nvfp4_dequant_f32.mlir").read_text()
    monkeypatch.setattr(api, "_CACHE", KernelCache())
    fetchc.compile(text, filename="n.mlir", cache=True)
    hit = fetchc.compile(text.replace("@", "@x"), filename="n.mlir", cache=True)
    plain = fetchc.compile(text.replace("@", "@x"), filename="n.mlir", cache=False)
    assert hit.seq_bin == plain.seq_bin and hit.mlir == plain.mlir


def test_fetchc_no_cache_turns_it_off(monkeypatch):
    monkeypatch.setenv("FETCHC_NO_CACHE", "1")
    monkeypatch.setattr(api, "_CACHE", None)
    fetchc.compile(kernel(), filename="t.mlir")
    assert api._CACHE is None


# ------------------------------------------------------------- the key


def _key(text: str) -> bytes:
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module
    from fetchc.irkey import kernel_key

    (func,) = parse_module(shared_context(), text, "k.mlir").ops
    return kernel_key(func)[0]


def test_the_key_erases_names_and_file_positions_only():
    base = _key(kernel())
    same = [
        kernel("other", "x", "y"),  # function and SSA names
        kernel(a="w_7"),  # a `_<digits>` suffix
        "\n\n// moved\n" + kernel(),  # lines and columns
        _generic(kernel()),  # the generic form
        "!t = memref<64x32xbf16>\n" + kernel(a_type="!t"),  # a type alias
        kernel(locs=(' loc("x.mlir":1:1)', "", "")),  # a file location elsewhere
    ]
    for text in same:
        assert _key(text) == base, text
    # an argument's name is stamped, not keyed: its value is erased, quoted key or not
    assert _key(kernel(a_attrs=' {rngd.name = "t"}')) == _key(kernel("j", "v", a_attrs=' {"rngd.name" = "u"}'))
    different = [
        kernel(a_attrs=' {foo = {rngd.name = "z"}}'),  # a nested dictionary is kept whole
        kernel(a_attrs=' {foo = {rngd.name = "y"}}'),
        kernel(a_attrs=' {x = 1}'),
        kernel(a_attrs=' {x = 1 : i32}'),
        kernel(a_attrs=' {x = 1, y = 2}'),
        kernel(a_attrs=' {y = 2, x = 1}'),  # dictionaries in their order
        kernel(locs=(" loc(unknown)", "", "")),  # no file position: the MANIFEST shows an op path
        kernel(locs=(' loc(fused["a.mlir":1:1])', "", "")),
        kernel(a_type="memref<64x32xbf16, strided<[32, 1]>>"),
        kernel(a_type="memref<64x32xbf16, strided<[64, 1]>>"),
    ]
    keys = [_key(t) for t in different]
    assert len(set(keys + [base])) == len(keys) + 1
    floats = [_key(dequant(gscale=g)) for g in ("0.0", "-0.0", "0x7FC00000", "0x7FC00001", "1.0", "1.0000001")]
    assert len(set(floats)) == len(floats)  # -0.0 and each NaN payload apart


def test_a_reference_to_the_function_itself_is_erased_with_its_name():
    from xdsl.dialects.builtin import ArrayAttr, StringAttr, SymbolRefAttr

    from fetchc.irkey import Memo, _Writer

    memo = Memo()  # shared, as by the functions of one module: a self-reference is never shared
    own, other = SymbolRefAttr("k"), SymbolRefAttr("j")
    refs = ArrayAttr([own, other])
    k, j = _Writer("k", memo), _Writer("j", memo)
    assert k.attr(own) != k.attr(other)
    assert k.attr(own) == j.attr(other)  # each its own function
    assert k.attr(refs) != j.attr(refs)  # an array holding them: per function too
    assert k.attr(ArrayAttr([StringAttr("k")])) != j.attr(ArrayAttr([StringAttr("j")]))  # a string is kept


# ------------------------------------------ item 3: the environment, item 4, item 5


def test_every_environment_variable_of_the_compile_path_is_in_the_key():
    """Each variable fetchc reads is in RESULT_ENV (it can change a result
    or a diagnostic), or is known not to change a compile: where the cache
    is, whether it is on, and those of sim, run and numpy's threads."""
    from fetchc.driver import VERIFY_EACH_ENV
    from fetchc.frontend.parsing import PARSER_ENV

    assert compile_cache.RESULT_ENV == (VERIFY_EACH_ENV, PARSER_ENV)
    read = set()
    for path in (ROOT / "fetchc").rglob("*.py"):
        source = path.read_text()
        read |= set(re.findall(r"environ(?:\.get)?\(\s*[\"']([A-Z_]+)", source))
        read |= set(re.findall(r"environ\[[\"']([A-Z_]+)", source))
        read |= set(re.findall(r"^[A-Z_]+_ENV = \"([A-Z_]+)\"", source, re.M))
        read |= set(re.findall(r"memory_budget\(\"([A-Z_]+)\"", source))
    not_results = {"FETCHC_NO_CACHE", "FETCHC_CACHE_DIR", "XDG_CACHE_HOME", "FETCHC_SIM_THREADS", "FETCHC_SIM_MAX_BYTES",
                   "OPENBLAS_NUM_THREADS"}  # fmt: skip
    assert read - not_results == set(compile_cache.RESULT_ENV), read


@pytest.mark.parametrize(
    "env",
    [{"FETCHC_VERIFY_EACH": "1"}, {"FETCHC_VERIFY_EACH": None}, {"FETCHC_PARSER": "bogus"}, {"FETCHC_PARSER": "xdsl"}],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()),
)
def test_an_environment_that_changes_the_result_changes_the_answer(env, command):
    """Seeded without the variable, a compile under it gives what an
    uncached compile under it gives (FETCHC_PARSER=bogus is an error; a
    kernel named like its table compiled with and without --verify-each,
    which once disagreed)."""
    unset = {"FETCHC_VERIFY_EACH": None, "FETCHC_PARSER": None}
    for text in (DECODE, TABLE_NAMED):
        command.run(text, env=unset)
        command.run(text, env=unset)
        outcome = command.agree(text, env=env)
        if "FETCHC_PARSER" in env and text == DECODE:
            assert outcome[0] == (1 if env["FETCHC_PARSER"] == "bogus" else 0)


def test_an_environment_that_changes_the_result_changes_the_answer_in_process(monkeypatch, through):
    """A variable of RESULT_ENV is part of every key: an entry made without
    it never answers a compile under it (a miss, compiled anew), and the
    answer is the uncached one."""
    cache = KernelCache()
    monkeypatch.delenv("FETCHC_VERIFY_EACH", raising=False)
    assert through(cache, TABLE_NAMED)[0] == "ok"
    monkeypatch.setenv("FETCHC_VERIFY_EACH", "1")
    assert through(cache, TABLE_NAMED) == _plain(TABLE_NAMED)
    monkeypatch.delenv("FETCHC_VERIFY_EACH")
    # Stored without the variable, a kernel answers a renamed copy without
    # it, never with it.
    cache = KernelCache()
    assert through(cache, DECODE)[0] == "ok"
    hits, misses = cache.hits, cache.misses
    assert through(cache, DECODE.replace("@decode", "@other"))[0] == "ok"  # other text: no whole-input answer
    assert (cache.hits, cache.misses) == (hits + 1, misses)
    monkeypatch.setenv("FETCHC_VERIFY_EACH", "1")
    third = DECODE.replace("@decode", "@third")
    assert through(cache, third) == _plain(third) and (cache.hits, cache.misses) == (hits + 1, misses + 1)
    monkeypatch.setenv("FETCHC_PARSER", "bogus")
    assert through(cache, DECODE) == _plain(DECODE) and _plain(DECODE)[0] == "error"


def test_the_default_pipeline_has_no_spelling(command):
    """``-p`` with the cache's former internal name of the default pipeline
    is refused as without the cache, also after a default compile."""
    command.run(DECODE)
    for p in ("<default>", "D", ""):
        command.agree(DECODE, "-p", p)
    assert command.agree(DECODE, "-p", "<default>")[0] == 1


def test_a_pipeline_with_a_printing_pass_is_never_answered_from_a_cache(command):
    """``eqsat-serialize-egraph`` (xDSL's) prints on every compile; a repeat
    prints again."""
    from fetchc.driver import DEFAULT_PIPELINE

    pipeline = "eqsat-serialize-egraph," + ",".join(DEFAULT_PIPELINE)
    status, out, _, data = command.agree(DECODE, "-p", pipeline)
    assert status == 0 and out.strip() == '{"nodes": {}}' and data
    assert not command.entries()


def test_only_fetchc_passes_are_cacheable():
    from fetchc.driver import DEFAULT_PIPELINE, parse_pipeline

    assert compile_cache.cacheable_pipeline(parse_pipeline(",".join(DEFAULT_PIPELINE)))
    assert compile_cache.cacheable_pipeline(parse_pipeline("fetch-place-dm{dm-size=4096},fetch-to-seq"))
    for xdsl in ("canonicalize", "cse", "dce", "eqsat-serialize-egraph"):
        assert not compile_cache.cacheable_pipeline(parse_pipeline(f"{xdsl},{','.join(DEFAULT_PIPELINE)}"))


# ------------------------------------------------------ on disk


def test_the_command_cold_and_warm_gives_the_uncached_bytes(command):
    for path in EXAMPLES:
        command.agree(path.read_text(), name=path.name)
    assert any(p.suffix == ".fsq" for p in command.entries()) and any(p.suffix == ".bin" for p in command.entries())


@pytest.mark.parametrize("damage", ["truncate", "flip", "others-writable", "other-key", "garbage", "link"])
def test_a_bad_disk_entry_is_ignored(damage, command):
    text = (ROOT / "examples" / "mxfp4_dequant_f32.mlir").read_text()
    plain = command.run(text, cache=False)
    command.run(text)
    command.run(kernel(), name="other.mlir")
    entries = command.entries()
    for entry in entries:
        data = entry.read_bytes()
        if damage == "truncate":
            entry.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            entry.write_bytes(data[:-9] + bytes([data[-9] ^ 0x40]) + data[-8:])
        elif damage == "others-writable":
            os.chmod(entry, 0o666)
        elif damage == "garbage":
            entry.write_bytes(os.urandom(len(data)))
        elif damage == "link":  # each entry a link to another valid entry of its kind
            donor = next(p for p in entries if p != entry and p.suffix == entry.suffix)
            entry.unlink()
            entry.symlink_to(donor)
    if damage == "other-key":
        for entry in entries:
            donor = next(p for p in entries if p != entry and p.suffix == entry.suffix)
            entry.write_bytes(donor.read_bytes())
    assert command.run(text) == plain
    assert command.run(text) == plain


def test_a_whole_input_entry_that_is_no_seq_bin_is_a_miss(command):
    plain = command.run(DECODE, cache=False)
    command.run(DECODE)
    (entry,) = (command.cache_dir / "inputs").rglob("*.bin")
    forged = entry.stem.encode() + b"\0FSEQ this is not a seq.bin"
    assert cachedir.write_entry(str(entry), compile_cache._WHOLE_MAGIC, forged)
    assert command.run(DECODE) == plain


def test_no_cache_writes_nothing(command):
    command.run(DECODE, cache=False)
    command.run(DECODE, "--no-cache")
    assert not command.entries()


def test_every_directory_of_the_cache_is_private(command, monkeypatch):
    """The cache directory, kernels/, inputs/ and their subdirectories are
    created 0700 whatever the umask; a cache directory that exists keeps
    its mode; entries are 0600."""
    command.cache_dir = command.dir / "a" / "cache"
    old = os.umask(0o022)
    try:
        command.run(DECODE)
    finally:
        os.umask(old)
    made = [command.dir / "a", command.cache_dir, *(p for p in command.cache_dir.rglob("*") if p.is_dir())]
    assert {command.cache_dir / "kernels", command.cache_dir / "inputs"} <= set(made)
    assert {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in made} == {str(p): "0o700" for p in made}
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in command.entries()} == {"0o600"}
    command.cache_dir = command.dir / "shared"
    command.cache_dir.mkdir(mode=0o755)
    os.chmod(command.cache_dir, 0o755)
    command.run(DECODE)
    assert stat.S_IMODE(command.cache_dir.stat().st_mode) == 0o755
    assert stat.S_IMODE((command.cache_dir / "kernels").stat().st_mode) == 0o700


def test_a_known_input_is_answered_without_importing_xdsl(command):
    """A real process: an exact repeat (seeded here) is answered from
    ``inputs/`` before xDSL is imported.  (The kernel cache needs the
    parser: it reads the input as the compiler does.)"""
    tmp_path = command.dir
    src = tmp_path / "in.mlir"
    assert command.run(DECODE, env={"FETCHC_VERIFY_EACH": None})[0] == 0
    env = dict(os.environ, FETCHC_CACHE_DIR=str(command.cache_dir), FETCHC_NO_CACHE="0")
    env.pop("FETCHC_VERIFY_EACH", None)
    cmd = [sys.executable, "-X", "importtime", "-m", "fetchc.cli", "in.mlir", "-o", str(tmp_path / "a.bin")]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    imported = [line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")]
    light = {"xdsl", "xdsl.utils", "xdsl.utils.exceptions"}  # VerifyException, the base of fetchc's OpError
    assert "fetchc.compile_cache" in imported and not [m for m in imported if m.startswith("xdsl") and m not in light]
    assert (tmp_path / "a.bin").read_bytes() == fetchc.compile(src.read_text(), filename="in.mlir", cache=False).seq_bin


# ------------------- remarks: a kernel that falls back is cached, its remarks replayed


def _through_module(cache: KernelCache | None, text: str, name: str):
    """``(ok, every diagnostic rendered, bytes)`` of compiling ``text``
    with the default pipeline through ``cache.compile_module`` (None: the
    uncached compile the command and ``fetchc.compile`` make)."""
    from fetchc.api import compile_parsed
    from fetchc.driver import DEFAULT_PIPELINE, parse_pipeline
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module
    from fetchc.frontend.render import render_all

    ctx, spec = shared_context(), ",".join(DEFAULT_PIPELINE)
    passes = parse_pipeline(spec)

    def run(m, checked):
        return compile_parsed(m, ctx, passes, checked=checked)

    module = parse_module(ctx, text, name)
    if cache is None:
        compiled = run(module, False)
    else:
        compiled = cache.compile_module(module, spec, passes, run, lambda: parse_module(ctx, text, name))
    return compiled.ok, render_all(compiled.diagnostics, {name: text}), compiled.data


FALLS_BACK = dequant().replace("%w: memref<16x4096xf4E2M1FN>", '%w: memref<16x4096xf4E2M1FN> {rngd.name = "w"}')
"""An NVFP4 dequant whose 16 KiB of f32 block scales do not fit the VRF's
8 KiB: fetch-split-scaling keeps the lockstep form and remarks at the dequant."""


def _moved(text: str, seed: int, name: str = "weights") -> str:
    """``text`` renamed (function, SSA values, the ``rngd.name``) and moved
    (other lines and columns)."""
    return "// moved\n\n" + _rename(text.replace('"w"', f'"{name}"'), random.Random(seed))


def test_a_kernel_that_falls_back_is_cached_with_its_remark_in_process():
    """Each input, through one cache, gives an uncached compile's bytes and
    every diagnostic line (the remark at this input's own dequant: line,
    column, source line; a callsite location's "called from" note with its
    own positions; remarks of several kernels in kernel order), and every
    kernel seen before is a hit."""
    cache = KernelCache()
    callsite = FALLS_BACK.replace("f32>\n  rngd.commit", 'f32> loc(callsite("f.mlir":3:4 at "g.mlir":5:6))\n  rngd.commit')
    cases = [
        ("a.mlir", FALLS_BACK, 1),  # seeds the cache
        ("b.mlir", _moved(FALLS_BACK, 3), 0),
        ("c.mlir", _moved(FALLS_BACK, 4) + kernel() + _moved(FALLS_BACK, 5, "v"), 1),  # kernel() is new
        ("d.mlir", _generic(_moved(FALLS_BACK, 6)), 0),
        ("e.mlir", callsite, 1),  # another location shape: another key
        ("f.mlir", _moved(callsite.replace('"f.mlir":3:4', '"f.mlir":9:9'), 7), 0),
    ]
    for name, text, new in cases:
        misses = cache.misses
        got = _through_module(cache, text, name)
        assert got == _through_module(None, text, name), name
        assert cache.misses == misses + new, name
        lines = got[1].splitlines()
        remarks = [line for line in lines if ": remark: 'fetch.dequant' op fetches its block scales in lockstep" in line]
        assert len(remarks) == text.count("fetch.dequant"), got[1]
        assert all(line.split(":")[0] in (name, "f.mlir", "g.mlir") for line in remarks)  # g.mlir: _generic's
    assert "note: called from" in _through_module(cache, cases[-1][1], "f.mlir")[1]
    stored = [e for e in cache._memory.values() if e.remarks]
    assert len(stored) == 2 and all(len(e.remarks) == 1 for e in stored)


def test_a_kernel_that_falls_back_is_cached_with_its_remark_on_disk(command):
    """The command, cold and warm, on the kernel and on a renamed and moved
    copy (a kernel-cache hit): the bytes, the status and every line of
    stderr (the remark, at this input's line) of ``--no-cache``; an input
    whose compile prints a remark is never answered whole (``inputs/``)."""
    status, _, err, data = command.agree(FALLS_BACK)
    assert status == 0 and data and "in.mlir:4:8: remark: 'fetch.dequant' op" in err
    (entry,) = [p for p in command.entries() if p.suffix == ".fsq"]
    moved = _moved(FALLS_BACK, 3)
    status, _, err, _ = command.agree(moved, name="moved.mlir")
    line = 1 + moved.splitlines().index(next(x for x in moved.splitlines() if "fetch.dequant" in x))
    assert status == 0 and f"moved.mlir:{line}:" in err and "remark:" in err
    assert [p for p in command.entries() if p.suffix == ".fsq"] == [entry]  # the copy was a hit
    assert not [p for p in command.entries() if p.suffix == ".bin"]


def test_a_remark_that_names_a_value_keeps_its_kernel_out_of_the_cache(monkeypatch):
    """A remark whose text names something the key erases (here an SSA
    name) could not be replayed with this input's names: nothing is stored,
    and every compile is the uncached one."""
    from fetchc.passes import split_scaling

    monkeypatch.setattr(split_scaling, "_reads_text", lambda reads, size: f"%c: {reads} reads")
    cache = KernelCache()
    for name, text in (("a.mlir", FALLS_BACK), ("b.mlir", FALLS_BACK)):
        got = _through_module(cache, text, name)
        assert got == _through_module(None, text, name) and "%c: 1024 reads" in got[1]
    assert cache.misses == 2 and not cache._memory


def test_an_entry_of_another_format_is_a_miss(command):
    """A ``kernels/`` entry of the format before remarks were stored
    (``FETCHC-KERNEL-2``: no remark list), in place of the current one, is
    a miss, and the compile is the uncached one."""
    plain = command.run(FALLS_BACK, cache=False)
    command.run(FALLS_BACK)
    (entry,) = [p for p in command.entries() if p.suffix == ".fsq"]
    payload = cachedir.read_entry(str(entry), compile_cache._MAGIC)
    key = entry.stem.encode() + b"\0"
    assert payload is not None and payload.startswith(key)
    old = key + payload[len(key) : len(key) + 4] + payload[len(key) + 8 :]  # symbols (none), then the seq.bin
    assert cachedir.write_entry(str(entry), b"FETCHC-KERNEL-2\0", old)
    assert compile_cache.KernelCache(disk=True).get(entry.stem) is None
    assert command.run(FALLS_BACK) == plain


def test_renamed_equals_dataclasses_replace():
    """compile_cache.renamed (the stamping's cheap copy) gives what
    dataclasses.replace gives, on every object a cached model's stamping
    copies, for every field; a name that is no field is a TypeError in both."""
    from dataclasses import fields, replace

    from fetchc.compile_cache import renamed

    sb = fetchc.compile(model_module(1)[0], filename="m.mlir", cache=False).seqbin
    objs = [*sb.programs, *sb.manifest.kernels]
    for k in sb.manifest.kernels:
        objs += [*k.programs, *k.tensors, *k.scalars]
    assert {type(o).__name__ for o in objs} >= {"Program", "Kernel", "KernelProgram", "Tensor", "Scalar"}
    for o in objs:
        before = dict(vars(o))
        for f in fields(o):
            value = ("x",) if isinstance(getattr(o, f.name), tuple) else 7
            a, b = renamed(o, **{f.name: value}), replace(o, **{f.name: value})
            assert a == b and type(a) is type(b) and vars(a) == vars(b)
        assert vars(o) == before
        with pytest.raises(TypeError):
            renamed(o, no_such_field=1)


# ------------------------------------------------- item 2: pruning, links


def _cache_entries(root: Path, n: int) -> list[Path]:
    """``n`` kernel entries written by the cache under ``root``, oldest first."""
    out = []
    for i in range(n):
        key = f"{i:02x}" * 32
        assert cachedir.write_entry_at(str(root), ("kernels", key[:2]), key + ".fsq", compile_cache._MAGIC, b"x" * 900)
        path = root / "kernels" / key[:2] / f"{key}.fsq"
        os.utime(path, (1000 + i, 1000 + i))
        out.append(path)
    return out


def _users_files(root: Path) -> dict[Path, bytes]:
    """Files of the user's beside (and, where the cache would look, inside)
    the cache's directories, some named and filled like entries."""
    magic = compile_cache._MAGIC + b"\0" * 48
    files = {
        root / "inputs" / "weights.npy": b"\x93NUMPY weights",
        root / "kernels" / "weights.npy": b"\x93NUMPY more",
        root / "kernels" / "ab" / "weights.npy": b"\x93NUMPY nested",
        root / "kernels" / "00" / "notes.txt": b"mine",
        root / "kernels" / "00" / ("ee" * 32 + ".fsq"): magic,  # named like an entry, mode 0644
        root / "kernels" / "01" / ("ef" * 32 + ".fsq"): b"not an entry at all, but named like one",
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (1, 1))  # older than any entry
    os.chmod(root / "kernels" / "01" / ("ef" * 32 + ".fsq"), 0o600)
    return files


def test_pruning_deletes_only_the_caches_own_entries_oldest_first(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    mine = _cache_entries(root, 10)
    users = _users_files(root)
    (root / "kernels" / "ab").chmod(0o700)
    monkeypatch.setattr(compile_cache, "DISK_BYTES", 3 * (len(mine[0].read_bytes())))
    compile_cache.prune(str(root), "kernels")
    assert [p for p in mine if p.exists()] == mine[-3:]  # the newest
    assert {p: p.read_bytes() for p in users} == users
    monkeypatch.setattr(compile_cache, "DISK_BYTES", 0)
    compile_cache.prune(str(root), "kernels")
    assert not any(p.exists() for p in mine)
    assert {p: p.read_bytes() for p in users} == users


def test_a_project_folder_as_cache_directory_loses_nothing(command, monkeypatch):
    """FETCHC_CACHE_DIR pointed at a project with ``inputs/`` and
    ``kernels/`` folders of its own: the cache neither writes there nor
    deletes anything, however often it prunes."""
    project = command.dir / "project"
    command.cache_dir = project
    users = _users_files(project)
    for d in (project / "inputs", project / "kernels"):
        d.chmod(0o755)
    monkeypatch.setattr(compile_cache, "DISK_BYTES", 0)
    monkeypatch.setattr(compile_cache, "_maybe_prune", compile_cache.prune)
    for i in range(3):
        command.agree(kernel(f"k{i}"))
    assert {p: p.read_bytes() for p in users} == users
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()) == sorted(
        [str(p.relative_to(project)) for p in users] + [n.name for n in project.glob("dataclasses-*")]
    )


@pytest.mark.parametrize("where", ["inputs", "kernels", "kernels/ab", "kernels/ab/entry"])
def test_a_link_planted_in_a_shared_cache_directory_is_never_followed(where, command, monkeypatch):
    """Another user's (here: another directory's) files behind a link in
    the cache directory are never read, written or deleted."""
    victim = command.dir / "victim"
    victim.mkdir(mode=0o700)
    key = "ab" * 32
    (victim / "ab").mkdir(mode=0o700)
    precious = {
        victim / "weights.npy": b"\x93NUMPY",
        victim / f"{key}.fsq": compile_cache._MAGIC + b"\0" * 48,
        victim / f"{key}.bin": compile_cache._WHOLE_MAGIC + b"\0" * 48,
        victim / "ab" / f"{key}.fsq": compile_cache._MAGIC + b"\0" * 48,
    }
    for path, data in precious.items():
        path.write_bytes(data)
        path.chmod(0o600)
        os.utime(path, (1, 1))
    root = command.cache_dir
    link = root / (where.replace("entry", f"{key}.fsq"))
    for d in [Path("."), *(p for p in reversed(link.relative_to(root).parents) if p != Path("."))]:
        (root / d).mkdir(exist_ok=True)
        (root / d).chmod(0o700)  # the cache's own directories, but for the link
    link.symlink_to(victim / f"{key}.fsq" if where.endswith("entry") else victim)
    monkeypatch.setattr(compile_cache, "DISK_BYTES", 0)
    monkeypatch.setattr(compile_cache, "_maybe_prune", compile_cache.prune)
    for i in range(2):
        command.agree(kernel(f"k{i}"))
    for kind in ("inputs", "kernels"):
        compile_cache.prune(str(root), kind)
    assert {p: p.read_bytes() for p in precious} == precious
    assert sorted(victim.rglob("*")) == sorted([*precious, victim / "ab"])
