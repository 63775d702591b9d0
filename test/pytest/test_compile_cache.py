"""The kernel compile cache (fetchc/compile_cache.py, docs/cli.md): every
cached compile gives exactly the bytes of an uncached one, cold and warm, in
process and on disk; kernels identical apart from names compile once; names
and locations are those of the input being compiled; bad, foreign or stale
entries are ignored; the cache is bounded and can be turned off."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fetchc
from fetchc import api, compile_cache
from fetchc.compile_cache import KernelCache
from fetchc.diagnostics import DiagnosticError
from fetchc.textlayout import layout

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
CORPUS = sorted((ROOT / "test" / "fuzz-corpus" / "mlir").glob("*.mlir"))
LIT = sorted(p for p in (ROOT / "test" / "lit").rglob("*.mlir") if "Output" not in p.parts)
SPEC = "fetch-route-sub-decode,fetch-place-dm,fetch-legalize-convert,fetch-split-scaling,fetch-to-seq"

sys.path.insert(0, str(ROOT / "tools"))
from bench_compile import distinct_module, model_module  # noqa: E402


def _uncached(text: str, name: str):
    return api.compile_uncached(text, name, SPEC)[:3]


def _outcome(fn):
    """``("ok", bytes)`` or ``("error", [messages with locations])``."""
    try:
        return "ok", fn()
    except DiagnosticError as e:
        return "error", [(d.severity, d.message, d.loc) for d in e.diagnostics]


def _cached(cache: KernelCache, text: str, name: str) -> bytes | None:
    got = cache.compile(text, name, SPEC, lambda t: _uncached(t, name))
    return None if got is None else got[1]


@pytest.mark.parametrize("path", [*EXAMPLES, *CORPUS, *LIT], ids=lambda p: str(p.relative_to(ROOT)))
def test_cached_bytes_equal_uncached_cold_and_warm(path):
    text = path.read_text(errors="surrogateescape")
    plain = _outcome(lambda: fetchc.compile(text, filename=path.name, cache=False).seq_bin)
    cache = KernelCache()
    for _round in ("cold", "warm"):
        cache._inputs.clear()  # not the whole-input memo: the kernel fragments
        got = _outcome(lambda: _cached(cache, text, path.name))
        if got == ("ok", None):  # not an input the cache handles: fetchc.compile compiles it normally
            assert layout(text) is None or plain[0] == "error"
            continue
        assert got == plain
    via_api = _outcome(lambda: fetchc.compile(text, filename=path.name, cache=True).seq_bin)
    assert via_api == plain


def test_the_examples_go_through_the_cache():
    """Most examples are inputs the cache handles (a regression to 'never
    cached' would make the test above vacuous)."""
    handled = [p.name for p in EXAMPLES if layout(p.read_text()) is not None]
    assert len(handled) == len(EXAMPLES), handled


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


@pytest.mark.parametrize("seed", range(6))
def test_renamed_kernels_hit_and_get_their_own_names_and_locations(seed):
    rng = random.Random(seed)
    cache = KernelCache()
    for path in EXAMPLES:
        text = path.read_text()
        _cached(cache, text, path.name)
        other = _rename(text, rng)
        misses = cache.misses
        got = _cached(cache, other, "renamed.mlir")
        assert cache.misses == misses, f"{path.name}: a renamed kernel missed"
        assert got == fetchc.compile(other, filename="renamed.mlir", cache=False).seq_bin, path.name


def test_identical_kernels_in_one_module_compile_once():
    text, _ = model_module(32)
    cache = KernelCache()
    got = _cached(cache, text, "model.mlir")
    assert (cache.hits, cache.misses) == (0, 3)  # q/k/v/o, gate/up, down
    assert got == fetchc.compile(text, filename="model.mlir", cache=False).seq_bin


def test_distinct_kernels_all_miss_and_still_agree():
    text, _ = distinct_module(60, seed=3)
    cache = KernelCache()
    got = _cached(cache, text, "d.mlir")
    assert cache.misses == len(layout(text).functions) and cache.hits == 0
    assert got == fetchc.compile(text, filename="d.mlir", cache=False).seq_bin


def test_a_partial_hit_compiles_only_the_new_kernel(monkeypatch):
    a = (ROOT / "examples" / "int8_zero_point_contract.mlir").read_text()
    b = (ROOT / "examples" / "transpose_nchw_to_whcn.mlir").read_text()
    cache = KernelCache()
    _cached(cache, a, "a.mlir")
    compiled: list[str] = []
    both = a + "\n" + b

    def counting(text, name):
        compiled.append(text)
        return _uncached(text, name)

    got = cache.compile(both, "ab.mlir", SPEC, lambda t: counting(t, "ab.mlir"))[1]
    assert got == fetchc.compile(both, filename="ab.mlir", cache=False).seq_bin
    assert len(compiled) == 1 and "func.func @gemm_i8" not in compiled[0] and "func.func @nchw_to_whcn" in compiled[0]
    assert len(compiled[0]) == len(both)  # blanked, not cut: same lines and columns


def test_an_error_is_the_uncached_compiles_error():
    good = (ROOT / "examples" / "int8_zero_point_contract.mlir").read_text()
    bad = good.replace("fetch.zp_sub %xs, -3", "fetch.zp_sub %xs, 300")
    assert bad != good
    cache = KernelCache()
    _cached(cache, good, "k.mlir")
    assert _outcome(lambda: fetchc.compile(bad, filename="k.mlir", cache=True).seq_bin) == _outcome(
        lambda: fetchc.compile(bad, filename="k.mlir", cache=False).seq_bin
    )
    assert _outcome(lambda: _cached(cache, bad, "k.mlir")) == ("ok", None)


def test_warnings_are_never_cached(monkeypatch):
    from fetchc.diagnostics import Diagnostic

    text = (ROOT / "examples" / "tiling_read.mlir").read_text()
    cache = KernelCache()

    def warns(t):
        sb, data, _ = _uncached(t, "t.mlir")
        return sb, data, [Diagnostic("warning", "something to say")]

    assert cache.compile(text, "t.mlir", SPEC, warns) is None
    assert cache._memory == {} and cache._inputs == {}


def test_the_in_process_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(compile_cache, "MEMORY_ENTRIES", 3)
    monkeypatch.setattr(compile_cache, "MEMORY_INPUTS", 2)
    cache = KernelCache()
    for path in EXAMPLES:
        _cached(cache, path.read_text(), path.name)
    assert len(cache._memory) == 3 and len(cache._inputs) == 2


def test_compile_result_module_of_a_cached_compile_is_the_real_one():
    text = (ROOT / "examples" / "nvfp4_dequant_f32.mlir").read_text()
    fetchc.compile(text, filename="n.mlir", cache=True)
    hit = fetchc.compile(text, filename="n.mlir", cache=True)
    plain = fetchc.compile(text, filename="n.mlir", cache=False)
    assert hit.mlir == plain.mlir and hit.seq_bin == plain.seq_bin


def test_fetchc_no_cache_turns_it_off(monkeypatch):
    monkeypatch.setenv("FETCHC_NO_CACHE", "1")
    api._CACHE = None
    fetchc.compile((ROOT / "examples" / "tiling_read.mlir").read_text(), filename="t.mlir")
    assert api._CACHE is None


# ---------------------------------------------------------------- on disk


def _fetchc(args, cache_dir, *, no_cache=False):
    env = dict(os.environ, FETCHC_CACHE_DIR=str(cache_dir))
    env.pop("FETCHC_NO_CACHE", None)
    if no_cache:
        env["FETCHC_NO_CACHE"] = "1"
    return subprocess.run([sys.executable, "-m", "fetchc.cli", *args], env=env, capture_output=True)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_command_cold_and_warm_gives_the_uncached_bytes(path, tmp_path):
    cache = tmp_path / "cache"
    outs, errs = [], []
    for run in ("plain", "cold", "warm"):
        out = tmp_path / f"{run}.bin"
        r = _fetchc([str(path), "-o", str(out)], cache, no_cache=run == "plain")
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
        errs.append(r.stderr)
        if run == "plain":
            assert not cache.exists() or not any(cache.rglob("*.fsq"))
    assert outs[0] == outs[1] == outs[2]
    assert errs[0] == errs[1] == errs[2]  # a pass's remarks (nvfp4_dequant_f32's lockstep scales) replayed
    # an exact repeat is answered whole only when the compile says nothing
    assert any(cache.rglob("*.fsq")) and any((cache / "inputs").rglob("*.bin")) == (errs[0] == b"")


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file() and p.suffix in (".fsq", ".bin"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "others-writable", "other-key", "garbage"])
def test_a_bad_disk_entry_is_ignored(damage, tmp_path):
    path = ROOT / "examples" / "mxfp4_dequant_f32.mlir"
    cache = tmp_path / "cache"
    plain = tmp_path / "plain.bin"
    assert _fetchc([str(path), "-o", str(plain)], cache, no_cache=True).returncode == 0
    assert _fetchc([str(path), "-o", str(tmp_path / "seed.bin")], cache).returncode == 0
    other = ROOT / "examples" / "tiling_read.mlir"
    assert _fetchc([str(other), "-o", str(tmp_path / "other.bin")], cache).returncode == 0
    mine = [p for p in _entries(cache) if p.read_bytes().find(b"dequant_mxfp4") >= 0 or p.suffix == ".fsq"]
    for entry in _entries(cache):
        data = entry.read_bytes()
        if damage == "truncate":
            entry.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            entry.write_bytes(data[:-9] + bytes([data[-9] ^ 0x40]) + data[-8:])
        elif damage == "others-writable":
            os.chmod(entry, 0o666)
        elif damage == "garbage":
            entry.write_bytes(os.urandom(len(data)))
    if damage == "other-key":  # every entry replaced by another valid entry of the same kind
        for entry in mine:
            donor = next(p for p in _entries(cache) if p != entry and p.suffix == entry.suffix)
            entry.write_bytes(donor.read_bytes())
    out = tmp_path / "out.bin"
    r = _fetchc([str(path), "-o", str(out)], cache)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == plain.read_bytes()


def test_the_disk_cache_is_bounded(tmp_path, monkeypatch):
    root = tmp_path / "kernels"
    for i in range(10):
        d = root / f"{i:02d}"
        d.mkdir(parents=True)
        (d / f"{i}.fsq").write_bytes(b"x" * 1000)
        os.utime(d / f"{i}.fsq", (1000 + i, 1000 + i))
    monkeypatch.setattr(compile_cache, "DISK_BYTES", 3500)
    compile_cache._prune(str(root), always=True)
    left = sorted(p.name for p in root.rglob("*.fsq"))
    assert left == ["7.fsq", "8.fsq", "9.fsq"]  # the newest


def test_no_cache_flag_writes_nothing(tmp_path):
    cache = tmp_path / "cache"
    path = ROOT / "examples" / "tiling_read.mlir"
    assert _fetchc([str(path), "--no-cache", "-o", str(tmp_path / "a.bin")], cache).returncode == 0
    assert not _entries(cache)


@pytest.mark.parametrize("repeat", ["same file", "renamed kernels"])
def test_a_known_input_is_answered_without_importing_xdsl(repeat, tmp_path):
    """The command answers from the cache before importing xDSL: an exact
    repeat (whole input) and an input whose kernels are all known (and whose
    compile remarks nothing: printing a remark loads the renderer)."""
    path = ROOT / "examples" / "mxfp4_dequant_f32.mlir"
    cache = tmp_path / "cache"
    assert _fetchc([str(path), "-o", str(tmp_path / "a.bin")], cache).returncode == 0
    again = path if repeat == "same file" else tmp_path / "renamed.mlir"
    if repeat != "same file":
        again.write_text(_rename(path.read_text(), random.Random(1)))
    env = dict(os.environ, FETCHC_CACHE_DIR=str(cache))
    env.pop("FETCHC_NO_CACHE", None)
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "fetchc.cli", str(again), "-o", str(tmp_path / "b.bin")],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    imported = [line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")]
    light = {"xdsl", "xdsl.utils", "xdsl.utils.exceptions"}  # VerifyException, the base of fetchc's OpError
    assert "fetchc.compile_cache" in imported and not [m for m in imported if m.startswith("xdsl") and m not in light]
    plain = fetchc.compile(again.read_text(), filename=str(again), cache=False).seq_bin
    assert (tmp_path / "b.bin").read_bytes() == plain


def test_remarks_are_replayed_at_the_input_s_own_lines(tmp_path):
    """A kernel whose compile remarks (fetch-split-scaling: block scales in
    lockstep) is cached with its remark, which a hit prints at the location
    of the input being compiled: a renamed copy with other lines gets its
    own line and column."""
    path = ROOT / "examples" / "nvfp4_dequant_f32.mlir"
    cache = KernelCache()
    first = cache.compile(path.read_text(), "a.mlir", SPEC, lambda t: _uncached(t, "a.mlir"))
    other = "// one more line\n" + _rename(path.read_text(), random.Random(7))
    misses = cache.misses
    got = cache.compile(other, "b.mlir", SPEC, lambda t: _uncached(t, "b.mlir"))
    assert cache.misses == misses and first is not None and got is not None
    plain = api.compile_uncached(other, "b.mlir", SPEC)
    assert got[1] == plain[1]
    assert [(d.severity, d.message, d.loc) for d in got[2]] == [(d.severity, d.message, d.loc) for d in plain[2]]
    (remark,) = got[2]
    assert remark.severity == "remark" and remark.loc[0] == "b.mlir" and remark.loc[1:] != first[2][0].loc[1:]


def test_renamed_equals_dataclasses_replace():
    """compile_cache.renamed (the stamping's cheap copy) gives what
    dataclasses.replace gives, on every object a cached model's stamping
    copies, for every field; a name that is no field is a TypeError in both."""
    from dataclasses import fields, replace

    from fetchc.compile_cache import renamed

    sb = fetchc.compile(model_module(2)[0], filename="m.mlir", cache=False).seqbin
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
            assert getattr(a, f.name) == value
        assert vars(o) == before  # the original is unchanged
        with pytest.raises(TypeError):
            replace(o, no_such_field=1)
        with pytest.raises(TypeError):
            renamed(o, no_such_field=1)


# ------------------------------------------- what the key erases or leaves out
#
# A hit parses nothing: everything the key erases (SSA names, the function's
# own name, whitespace and comments) must be well formed by the layout's own
# checks, and everything outside every key (aliases no function uses, a
# duplicate alias, the top-level structure) must make the input one the cache
# does not handle.  Each variant below is rejected by an uncached compile and
# must be rejected, with the same diagnostics, through a cache that holds
# DECODE's kernel.

DECODE = """\
!t = memref<64x32xf32>
func.func @decode(%w: memref<64x32xbf16>, %o: !t) {
  %s = fetch.fetch %w : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  %c = fetch.cast %s : !fetch.stream<main, [64], [32], bf16> -> !fetch.stream<main, [64], [32], f32>
  %k = arith.constant 1.5e-3 : f32
  rngd.commit %c, %o : !fetch.stream<main, [64], [32], f32>, !t
  func.return
}
"""

INVALID_VARIANTS = {
    "junk alias": "#junk = 1 2 3 + foo\n" + DECODE,
    "unregistered alias": "!u = !nosuch.type<1>\n" + DECODE,
    "alias defined twice": "!t = memref<64x32xf32>\n" + DECODE,
    "unused alias defined twice": "!u = memref<64x32xf32>\n!u = memref<64x32xf32>\n" + DECODE,
    "alias after its use": DECODE.replace("!t = memref<64x32xf32>\n", "") + "!t = memref<64x32xf32>\n",
    "alias inside module": "module {\n" + DECODE + "}\n",
    "function named -.$": DECODE.replace("@decode", "@-.$"),
    "function named $": DECODE.replace("@decode", "@$"),
    "function named 1a": DECODE.replace("@decode", "@1a"),
    "function named a-b": DECODE.replace("@decode", "@a-b"),
    "SSA name 1a": DECODE.replace("%c", "%1a"),
    "SSA name 0x": DECODE.replace("%s", "%0x"),
    "float split by a space": DECODE.replace("1.5e-3", "1.5e -3"),
    "float split by a comment": DECODE.replace("1.5e-3", "1.5e//\n-3"),
    "module attributes": "!t = memref<64x32xf32>\nmodule attributes {x = #nosuch.a} {\n"
    + DECODE.split("\n", 1)[1]
    + "}\n",
    "junk between functions": DECODE + "foo\n" + DECODE.replace("@decode", "@decode2").split("\n", 1)[1],
}


def test_the_valid_decode_kernel_is_cached():
    """DECODE is an input the cache handles and hits (else the variants
    below would say nothing)."""
    cache = KernelCache()
    assert _cached(cache, DECODE, "decode.mlir") == fetchc.compile(DECODE, filename="decode.mlir", cache=False).seq_bin
    again = DECODE.replace("%c", "%x_1").replace("@decode", "@other").replace("  ", "    ")
    misses = cache.misses
    assert _cached(cache, again, "decode.mlir") == fetchc.compile(again, filename="decode.mlir", cache=False).seq_bin
    assert cache.misses == misses


@pytest.mark.parametrize("name", INVALID_VARIANTS)
def test_a_variant_the_key_does_not_see_is_rejected_in_process(name, monkeypatch):
    text = INVALID_VARIANTS[name]
    cache = KernelCache()
    assert _cached(cache, DECODE, "decode.mlir") is not None
    plain = _outcome(lambda: fetchc.compile(text, filename="decode.mlir", cache=False).seq_bin)
    assert plain[0] == "error", plain
    assert _outcome(lambda: _cached(cache, text, "decode.mlir")) in (plain, ("ok", None))
    monkeypatch.setattr(api, "_CACHE", cache)  # fetchc.compile through the same (warm) cache
    assert _outcome(lambda: fetchc.compile(text, filename="decode.mlir", cache=True).seq_bin) == plain


@pytest.mark.parametrize("name", ["junk alias", "alias defined twice", "function named -.$", "SSA name 1a",
                                  "float split by a space"])
def test_a_variant_the_key_does_not_see_is_rejected_by_the_command(name, tmp_path):
    cache = tmp_path / "cache"
    (tmp_path / "decode.mlir").write_text(DECODE)
    r = _fetchc([str(tmp_path / "decode.mlir"), "-o", str(tmp_path / "a.bin")], cache)
    assert r.returncode == 0, r.stderr
    bad = tmp_path / "bad.mlir"
    bad.write_text(INVALID_VARIANTS[name])
    plain = _fetchc([str(bad), "-o", str(tmp_path / "plain.bin")], cache, no_cache=True)
    cached = _fetchc([str(bad), "-o", str(tmp_path / "seq.bin")], cache)
    assert plain.returncode == 1 and plain.stderr
    assert (cached.returncode, cached.stderr) == (plain.returncode, plain.stderr)
    assert not (tmp_path / "seq.bin").exists()


def test_valid_spellings_the_key_erases_still_hit():
    """The checks are no stricter than they need be for the common
    spellings: SSA names of every legal form, function names with '$' and
    '.', the aliases printed before a `module {`, comments and line breaks
    between tokens."""
    cache = KernelCache()
    _cached(cache, DECODE, "decode.mlir")
    body = DECODE.split("\n", 1)[1]
    variants = [
        DECODE.replace("%c", "%17").replace("%s", "%-s.$_"),
        DECODE.replace("@decode", "@de$c.o_de9"),
        "!t = memref<64x32xf32>\nmodule {\n" + body + "}\n",
        DECODE.replace("fetch.fetch %w :", "fetch.fetch %w // a comment\n   :"),
    ]
    for text in variants:
        misses = cache.misses
        assert _cached(cache, text, "v.mlir") == fetchc.compile(text, filename="v.mlir", cache=False).seq_bin, text
        assert cache.misses == misses, text


def test_a_declaration_does_not_swallow_the_aliases_after_it():
    """A function declaration (no body) followed by alias definitions: the
    layout once took everything up to the next ``{`` for the declaration's
    body, so ``#m``, the kernel's fetch map, was in no key and a kernel with
    another map got the first one's programs."""
    def text(offset):
        return (f"func.func private @ext(%a: i32)\n#m = affine_map<(t, e) -> (t + {offset}, e)>\n#n = {{a = 1}}\n"
                "func.func @decode(%w: memref<128x32xbf16>, %o: memref<64x32xbf16>) {\n"
                "  %s = fetch.fetch %w {map = #m} : memref<128x32xbf16> -> !fetch.stream<main, [64], [32], bf16>\n"
                "  rngd.commit %s, %o : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>\n"
                "  func.return\n}\n")
    cache = KernelCache()
    plain = [fetchc.compile(text(off), filename="m.mlir", cache=False).seq_bin for off in (0, 64)]
    assert plain[0] != plain[1]
    for off, want in zip((0, 64), plain, strict=True):
        assert _cached(cache, text(off), "m.mlir") in (want, None)


def test_a_whole_input_entry_that_is_no_seq_bin_is_a_miss(tmp_path):
    """An ``inputs/`` entry with a valid checksum and key whose payload is
    not a seq.bin the validating reader accepts is ignored: the command
    compiles and writes the real bytes."""
    from fetchc import cachedir

    path = ROOT / "examples" / "tiling_read.mlir"
    cache = tmp_path / "cache"
    plain = tmp_path / "plain.bin"
    assert _fetchc([str(path), "-o", str(plain)], cache, no_cache=True).returncode == 0
    assert _fetchc([str(path), "-o", str(tmp_path / "seed.bin")], cache).returncode == 0
    (entry,) = (cache / "inputs").rglob("*.bin")
    key = entry.stem
    forged = key.encode() + b"\0FSEQ this is not a seq.bin"
    assert cachedir.write_entry(str(entry), compile_cache._WHOLE_MAGIC, forged)
    assert cachedir.read_entry(str(entry), compile_cache._WHOLE_MAGIC) == forged
    out = tmp_path / "pl.bin"
    r = _fetchc([str(path), "-o", str(out)], cache)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == plain.read_bytes()


def test_every_directory_of_the_cache_is_private(tmp_path):
    """The cache directory, kernels/, inputs/ and their subdirectories are
    created 0700; a directory that exists keeps its mode."""
    import stat

    path = ROOT / "examples" / "tiling_read.mlir"
    cache = tmp_path / "a" / "cache"
    old = os.umask(0o022)
    try:
        assert _fetchc([str(path), "-o", str(tmp_path / "x.bin")], cache).returncode == 0
    finally:
        os.umask(old)
    made = [tmp_path / "a", cache, *(p for p in cache.rglob("*") if p.is_dir())]
    assert {cache / "kernels", cache / "inputs"} <= set(made)
    assert {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in made} == {
        str(p.relative_to(tmp_path)): "0o700" for p in made
    }
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    assert _fetchc([str(path), "-o", str(tmp_path / "y.bin")], shared).returncode == 0
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert stat.S_IMODE((shared / "kernels").stat().st_mode) == 0o700
