#!/usr/bin/env python3
"""Compile-speed benchmark for fetchc, optionally against a baseline.

Generates the workloads into a work directory, runs each with the current
fetchc and (with ``--baseline``) the baseline, alternating current, baseline,
current, baseline ... for ``--runs`` rounds, and prints a table: median
time per side, ratio current/baseline (the median of the per-round ratios),
peak RSS (the largest process, from ``os.wait4``), then the command line that
reproduces each row.  No timing is asserted; the exit status is 0.

Workloads (``--only`` picks families; lit only with ``--lit``):

* ``chains``: one module of N fetch chains (``--chains``) rotating an NVFP4
  decode (fetch + dequant + commit), an f8E5M2 -> bf16 convert + switch +
  collect + commit, an int8 zp_sub -> switch -> collect -> contract_outer fed
  by a sub-context weight fetch -> to_trf, and a tiled bf16 read + commit;
  four chains (one of each) per ``func.func`` (``--chains-per-func``).  Every
  fetched memref has an explicit, 64-byte-aligned, non-overlapping ``base`` /
  ``scale_base`` (``--no-bases`` drops them: only for a fetchc that places
  memrefs itself).
* ``distinct``: N distinct chains (``--distinct``): random shapes, element
  types, stage chains (NVFP4/MXFP4 decodes, converts, casts, table lookups,
  zero-point chains into ``contract_outer``, tiled reads), zero points and DM
  addresses from a seeded generator, no two alike, so no cache or memo can
  shortcut them; four per ``func.func``, each function's tensors within one
  slice's 512 KiB.
* ``model``: a model-like module as an embedding compiler sends it
  (``--layers`` x 7 NVFP4 projection decodes, one kernel per function, on 256
  slices): kernels of one shape differ only in their names.  Rows: the
  command with no cache, an empty cache directory, a filled one (the same
  file; a copy with every name changed), and ``fetchc.compile`` in one warm
  process (this script's ``--inproc-model`` mode) with no cache, an empty
  in-process cache, and a filled one given the renamed copy.
* ``nest``: a one-fetch kernel plus a second function of D nested
  ``scf.execute_region`` holding no fetch (``--nest``).
* ``cold``: ``fetchc EXAMPLE -o x.bin`` as a fresh process (``--cold``).
* ``inproc``: ``fetchc.compile(text)`` of each shipped example: the median of
  ``--iters`` calls in one process (this script's ``--inproc`` mode).
* ``tools``: the current environment's ``xdsl-opt`` (which knows fetchc's
  dialects through its ``xdsl.universe`` entry point) parsing, verifying and
  printing the same files (for nesting on a deep stack, as fetchc's CLI does:
  plain xdsl-opt hits Python's recursion limit), and ``mlir-opt`` /
  ``mlir-opt-NN`` (if on PATH) parsing and printing their generic form with
  ``--allow-unregistered-dialect`` (element types older mlir-opt lacks become
  same-width ints; the row says so).  Current side only.
* ``lit``: ``lit -q test/lit`` of each side's checkout.

Usage::

    .venv/bin/python tools/bench_compile.py --quick          # smoke test: ~35 s CPU
    .venv/bin/python tools/bench_compile.py --baseline /work/baseline
    .venv/bin/python tools/bench_compile.py --baseline ../old/.venv/bin/fetchc \\
        --only chains nest --chains 1000 5000 --nest 1000 2000 --runs 3

A side (``--current``, default the interpreter running this script;
``--baseline``) is a checkout with ``.venv``, a venv, its python, or a
``fetchc`` script.  Files go to ``--workdir`` (default a new temporary
directory) and are kept, so every printed command can be re-run.  Standard
library only; any python with fetchc installed can run it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SELF = str(Path(__file__).resolve())
RUN_CWD = "/"  # commands never run in a checkout: its fetchc/ would shadow the installed one

# ---------------------------------------------------------------- workloads
_MAP = "map = affine_map<(a, p, e) -> (a, p * {n} + e)>"


def _s(ctx: str, t0: int, t1: int, p: int, ty: str) -> str:
    return f"!fetch.stream<{ctx}, [{t0}, {t1}], [{p}], {ty}>"


_FP4, _F32 = _s("main", 64, 2, 64, "f4E2M1FN"), _s("main", 64, 2, 64, "f32")
_F8, _BF = _s("main", 32, 8, 32, "f8E5M2"), _s("main", 32, 8, 32, "bf16")
_WS, _I8 = _s("sub", 32, 8, 32, "i8"), _s("main", 16, 8, 32, "i8")
_I9, _I32, _TB = _s("main", 16, 8, 32, "i9"), _s("main", 16, 8, 32, "i32"), _s("main", 64, 4, 32, "bf16")
# (ops, arguments, body, bytes of each fetched memref); {i}: chain index, {B0}/{B1}: base properties.
CHAIN_KINDS = [
    (3, ["c{i}: memref<64x128xf4E2M1FN>", "s{i}: memref<64x8xf8E4M3FN>", "g{i}: f32", "o{i}: memref<64x128xf32>"],
     "  %a{i} = fetch.fetch %c{i} {{{B0}" + _MAP.format(n=64) + "}} : memref<64x128xf4E2M1FN> -> " + _FP4 + "\n"
     "  %w{i} = fetch.dequant %a{i}, %s{i}, %g{i} {{format = \"nvfp4\"{B1}}}\n"
     "      : " + _FP4 + ", memref<64x8xf8E4M3FN>, f32 -> " + _F32 + "\n"
     "  rngd.commit %w{i}, %o{i} : " + _F32 + ", memref<64x128xf32>\n", [64 * 128 // 2, 64 * 8]),
    (5, ["x{i}: memref<32x256xf8E5M2>", "o{i}: memref<32x256xbf16>"],
     "  %a{i} = fetch.fetch %x{i} {{{B0}" + _MAP.format(n=32) + "}} : memref<32x256xf8E5M2> -> " + _F8 + "\n"
     "  %b{i} = fetch.convert %a{i} : " + _F8 + " -> " + _BF + "\n"
     "  %sw{i} = rngd.switch %b{i} : " + _BF + " -> " + _BF + "\n"
     "  %co{i} = rngd.collect %sw{i} : " + _BF + " -> " + _BF + "\n"
     "  rngd.commit %co{i}, %o{i} : " + _BF + ", memref<32x256xbf16>\n", [32 * 256]),
    (8, ["w{i}: memref<32x256xi8>", "x{i}: memref<16x256xi8>", "o{i}: memref<16x256xi32>"],
     "  %ws{i} = fetch.fetch %w{i} {{{B0}" + _MAP.format(n=32) + "}} : memref<32x256xi8> -> " + _WS + "\n"
     "  %wt{i} = rngd.to_trf %ws{i} : " + _WS + " -> !rngd.trf<i8>\n"
     "  %xs{i} = fetch.fetch %x{i} {{{B1}" + _MAP.format(n=32) + "}} : memref<16x256xi8> -> " + _I8 + "\n"
     "  %xz{i} = fetch.zp_sub %xs{i}, -3 : " + _I8 + " -> " + _I9 + "\n"
     "  %sw{i} = rngd.switch %xz{i} : " + _I9 + " -> " + _I9 + "\n"
     "  %co{i} = rngd.collect %sw{i} : " + _I9 + " -> " + _I9 + "\n"
     "  %y{i} = rngd.contract_outer %co{i}, %wt{i} : " + _I9 + ", !rngd.trf<i8> -> " + _I32 + "\n"
     "  rngd.commit %y{i}, %o{i} : " + _I32 + ", memref<16x256xi32>\n", [32 * 256, 16 * 256]),
    (2, ["m{i}: memref<128x256xbf16>", "o{i}: memref<64x128xbf16>"],
     "  %a{i} = fetch.fetch %m{i} {{{B0}map = affine_map<(r, p, e) -> (r + 64, p * 32 + e + 128)>}}\n"
     "      : memref<128x256xbf16> -> " + _TB + "\n"
     "  rngd.commit %a{i}, %o{i} : " + _TB + ", memref<64x128xbf16>\n", [128 * 256 * 2]),
]


def chains_module(n: int, per_func: int = 4, bases: bool = True) -> tuple[str, int]:
    """MLIR text of ``n`` fetch chains, ``per_func`` per ``func.func`` (each
    function a kernel with its own DM), and its op count (module excluded).
    In each function the fetched memrefs are laid out upwards from DM byte
    0x10000, each at the next multiple of 64 bytes (within one slice's 512
    KiB)."""
    funcs, ops = [], 0
    for f in range(0, n, per_func):
        args, body, nxt = [], [], 0x10000
        for i in range(f, min(n, f + per_func)):
            k_ops, k_args, k_body, sizes = CHAIN_KINDS[i % len(CHAIN_KINDS)]
            addr = []
            for size in sizes:
                addr.append(nxt)
                nxt = (nxt + size + 63) // 64 * 64
            b0 = f"base = {addr[0]} : i64, " if bases else ""
            b1 = "" if not bases else f", scale_base = {addr[1]} : i64" if "dequant" in k_body else f"base = {addr[-1]} : i64, "
            args += ["%" + x.format(i=i) for x in k_args]
            body.append(k_body.format(i=i, B0=b0, B1=b1))
            ops += k_ops
        funcs.append(f"func.func @k{f // per_func}({', '.join(args)}) {{\n{''.join(body)}  func.return\n}}\n")
        ops += 2
    return "".join(funcs), ops


# ------------------------------------------------------- distinct chains
_DM = 1 << 19  # one slice's DM (bytes)
_BYTES = {"f4E2M1FN": 0.5, "i8": 1, "f8E4M3FN": 1, "f8E5M2": 1, "f8E8M0FNU": 1, "i16": 2, "bf16": 2, "f32": 4, "i32": 4}


def _stream(ctx: str, time: tuple[int, ...], packet: int, ty: str) -> str:
    return f"!fetch.stream<{ctx}, [{', '.join(map(str, time))}], [{packet}], {ty}>"


def _fetch(name: str, src: str, rows: int, cols: int, ty: str, t1: int, p: int, base: int | None,
           ctx: str = "main", extra: str = "") -> tuple[str, str]:
    """A fetch of ``memref<rows x cols x ty>`` as time [rows, t1], packet [p]
    (``cols == t1 * p``); returns (line, stream type)."""
    st = _stream(ctx, (rows, t1), p, ty)
    b = "" if base is None else f"base = {base} : i64, "
    return (f"  %{name} = fetch.fetch %{src} {{{b}{extra}map = affine_map<(a, t, e) -> (a, t * {p} + e)>}}"
            f" : memref<{rows}x{cols}x{ty}> -> {st}\n", st)


def _distinct_chain(r, i: int, base_of) -> tuple[list[str], str, int, tuple]:
    """One random valid chain: (arguments, body, op count, signature).
    ``base_of(bytes)`` gives the DM address of a fetched memref (or None)."""
    kind = r.choice(["nvfp4", "mxfp4", "convert", "cast", "zp", "tile", "lookup"])
    rows, t1 = r.choice([1, 2, 3, 4, 6, 8, 12, 16, 24, 32]), r.choice([1, 2, 3, 4, 5, 8])
    if kind in ("nvfp4", "mxfp4"):
        block, sty, p = (16, "f8E4M3FN", r.choice([16, 32, 64, 128])) if kind == "nvfp4" else (32, "f8E8M0FNU", r.choice([32, 64, 128]))
        cols = t1 * p
        cb, sb = base_of(rows * cols // 2), base_of(rows * cols // block)
        line, st = _fetch(f"a{i}", f"c{i}", rows, cols, "f4E2M1FN", t1, p, cb)
        out = st.replace("f4E2M1FN", "f32")
        g = f", %g{i}" if kind == "nvfp4" else ""
        sbase = "" if sb is None else f", scale_base = {sb} : i64"
        body = (line + f"  %w{i} = fetch.dequant %a{i}, %s{i}{g} {{format = \"{kind}\"{sbase}}}\n"
                f"      : {st}, memref<{rows}x{cols // block}x{sty}>{', f32' if g else ''} -> {out}\n"
                f"  rngd.commit %w{i}, %o{i} : {out}, memref<{rows}x{cols}xf32>\n")
        args = [f"%c{i}: memref<{rows}x{cols}xf4E2M1FN>", f"%s{i}: memref<{rows}x{cols // block}x{sty}>"]
        args += ([f"%g{i}: f32"] if g else []) + [f"%o{i}: memref<{rows}x{cols}xf32>"]
        return args, body, 3, (kind, rows, t1, p, cb, sb)
    if kind in ("convert", "cast", "lookup"):
        src, dst = {"convert": r.choice([("f8E5M2", "bf16"), ("f8E4M3FN", "bf16"), ("f8E4M3FN", "f32"), ("i8", "i32")]),
                    "cast": r.choice([("i8", "i32"), ("i16", "i32"), ("bf16", "f32"), ("f8E5M2", "f32")]),
                    "lookup": r.choice([("f4E2M1FN", "f8E4M3FN"), ("f4E2M1FN", "f8E5M2"), ("f8E5M2", "bf16")])}[kind]
        p = r.choice([32, 64]) if src != "i16" else 32
        cols = t1 * p
        base = base_of(int(rows * cols * _BYTES[src]))
        line, st = _fetch(f"a{i}", f"x{i}", rows, cols, src, t1, p, base)
        out = st.replace(src + ">", dst + ">")
        op = {"convert": "fetch.convert", "cast": "fetch.cast", "lookup": "fetch.table_lookup"}[kind]
        body = line + f"  %b{i} = {op} %a{i} : {st} -> {out}\n"
        last, n = f"b{i}", 3
        if r.random() < 0.5:
            body += (f"  %sw{i} = rngd.switch %b{i} : {out} -> {out}\n  %co{i} = rngd.collect %sw{i} : {out} -> {out}\n")
            last, n = f"co{i}", 5
        body += f"  rngd.commit %{last}, %o{i} : {out}, memref<{rows}x{cols}x{dst}>\n"
        return [f"%x{i}: memref<{rows}x{cols}x{src}>", f"%o{i}: memref<{rows}x{cols}x{dst}>"], body, n, (kind, src, dst, rows, t1, p, base, n)
    if kind == "zp":
        p, zp = 32, r.randint(-128, 127)
        cols = t1 * p
        wb, xb = base_of(32 * 256), base_of(rows * cols)
        wline, wst = _fetch(f"ws{i}", f"w{i}", 32, 256, "i8", 8, 32, wb, ctx="sub")
        xline, xst = _fetch(f"xs{i}", f"x{i}", rows, cols, "i8", t1, p, xb)
        z, y = xst.replace("i8>", "i9>"), xst.replace("i8>", "i32>")
        body = (wline + f"  %wt{i} = rngd.to_trf %ws{i} : {wst} -> !rngd.trf<i8>\n" + xline
                + f"  %xz{i} = fetch.zp_sub %xs{i}, {zp} : {xst} -> {z}\n"
                f"  %sw{i} = rngd.switch %xz{i} : {z} -> {z}\n  %co{i} = rngd.collect %sw{i} : {z} -> {z}\n"
                f"  %y{i} = rngd.contract_outer %co{i}, %wt{i} : {z}, !rngd.trf<i8> -> {y}\n"
                f"  rngd.commit %y{i}, %o{i} : {y}, memref<{rows}x{cols}xi32>\n")
        args = [f"%w{i}: memref<32x256xi8>", f"%x{i}: memref<{rows}x{cols}xi8>", f"%o{i}: memref<{rows}x{cols}xi32>"]
        return args, body, 8, (kind, rows, t1, zp, wb, xb)
    ty, p = r.choice(["bf16", "f32", "i8", "f8E5M2"]), r.choice([8, 16, 32])
    dr, dc = r.randint(0, 7), r.randint(0, 3) * p
    rows_m, cols_m = rows + dr, t1 * p + dc
    base = base_of(int(rows_m * cols_m * _BYTES[ty]))
    st = _stream("main", (rows, t1), p, ty)
    b = "" if base is None else f"base = {base} : i64, "
    body = (f"  %a{i} = fetch.fetch %m{i} {{{b}map = affine_map<(a, t, e) -> (a + {dr}, t * {p} + e + {dc})>}}\n"
            f"      : memref<{rows_m}x{cols_m}x{ty}> -> {st}\n"
            f"  rngd.commit %a{i}, %o{i} : {st}, memref<{rows}x{t1 * p}x{ty}>\n")
    return [f"%m{i}: memref<{rows_m}x{cols_m}x{ty}>", f"%o{i}: memref<{rows}x{t1 * p}x{ty}>"], body, 2, (kind, ty, rows, t1, p, dr, dc, base)


def _memref_bytes(arg: str) -> int:
    """Bytes of a ``%x: memref<AxBxT>`` argument."""
    dims = arg.split("memref<")[1].rstrip(">").split("x")
    n = 1
    for d in dims[:-1]:
        n *= int(d)
    return int(n * _BYTES[dims[-1]] + 0.5)


def distinct_module(n: int, per_func: int = 4, bases: bool = True, seed: int = 0) -> tuple[str, int]:
    """MLIR text of ``n`` distinct fetch chains (random shapes, element types,
    stage chains, zero points and DM addresses; no two chains alike, so no
    cache or memo can shortcut them), ``per_func`` per ``func.func``, and its
    op count.  Each function's tensors fit one slice's DM."""
    import random

    r, seen, funcs, ops, i = random.Random(seed), set(), [], 0, 0
    while i < n:
        args, body, used = [], [], [0x40]

        def base_of(size: int) -> int | None:
            at = (used[0] + r.randrange(0, 8) * 64 + 63) // 64 * 64
            used[0] = at + size
            return at if bases else None

        for _ in range(per_func):
            if i >= n:
                break
            mark = used[0]
            a, b, k, sig = _distinct_chain(r, i, base_of)
            total = used[0] + sum(_memref_bytes(x) + 64 for x in a if x.startswith("%o"))
            if sig in seen or total > _DM - (1 << 16):  # a repeat, or the outputs would not fit one slice's DM
                used[0] = mark
                continue
            used[0] = total
            seen.add(sig)
            args += a
            body.append(b)
            ops, i = ops + k, i + 1
        if body:
            funcs.append(f"func.func @k{len(funcs)}({', '.join(args)}) {{\n{''.join(body)}  func.return\n}}\n")
            ops += 2
    return "".join(funcs), ops


def model_module(layers: int = 32) -> tuple[str, int]:
    """A model-like module as an embedding compiler sends it: ``layers``
    transformer layers x 7 NVFP4 projection decodes (q, k, v, o, gate, up,
    down; hidden 4096, intermediate 11008), one kernel per function, each on
    256 slices holding a few rows of the weight (ir.md §2a); kernels of one
    shape differ only in their names.  Returns the text and its op count."""
    shapes = {"q": (16, 4096), "k": (16, 4096), "v": (16, 4096), "o": (16, 4096),
              "gate": (12, 4096), "up": (12, 4096), "down": (8, 11008)}  # rows per slice: <= 512 KiB of DM
    funcs, ops = [], 0
    for layer in range(layers):
        for proj, (rows, cols) in shapes.items():
            n = f"l{layer}_{proj}"
            st = _stream("main", (rows, cols // 64), 64, "f4E2M1FN")
            out = st.replace("f4E2M1FN", "f32")
            sd = " {rngd.slice_dim = 0 : i64}"
            funcs.append(
                f"func.func @{n}(%{n}_w: memref<{rows}x{cols}xf4E2M1FN>{sd}, %{n}_s: memref<{rows}x{cols // 16}xf8E4M3FN>{sd},\n"
                f"    %{n}_g: f32, %{n}_out: memref<{rows}x{cols}xf32>{sd}) attributes {{rngd.slices = 256 : i64}} {{\n"
                f"  %{n}_c = fetch.fetch %{n}_w {{map = affine_map<(o, p, e) -> (o, p * 64 + e)>}} : memref<{rows}x{cols}xf4E2M1FN> -> {st}\n"
                f"  %{n}_d = fetch.dequant %{n}_c, %{n}_s, %{n}_g {{format = \"nvfp4\"}}\n"
                f"      : {st}, memref<{rows}x{cols // 16}xf8E4M3FN>, f32 -> {out}\n"
                f"  rngd.commit %{n}_d, %{n}_out : {out}, memref<{rows}x{cols}xf32>\n  func.return\n}}\n")
            ops += 5
    return "".join(funcs), ops


def nest_module(depth: int, bases: bool = True) -> tuple[str, int]:
    """A one-fetch kernel (the tiled read) and ``depth`` nested
    ``scf.execute_region`` in a second function; and the op count."""
    _, k_args, k_body, _ = CHAIN_KINDS[3]
    kernel = (f"func.func @kernel({', '.join('%' + x.format(i=0) for x in k_args)}) {{\n"
              + k_body.format(i=0, B0="base = 65536 : i64, " if bases else "", B1="") + "  func.return\n}\n")
    nest = "func.func @nest() {\n" + "scf.execute_region {\n" * depth + "scf.yield\n}\n" * depth + "func.return\n}\n"
    return kernel + nest, 6 + 2 * depth


# ------------------------------------------------------------------ sides
class Side:
    """One fetchc installation: its python, fetchc command, checkout, versions."""

    def __init__(self, label: str, spec: str | None):
        self.label = label
        p = Path(spec).expanduser().absolute() if spec else Path(sys.executable).absolute()
        if p.is_dir():
            found = [c / "fetchc" for c in (p / ".venv" / "bin", p / "bin") if (c / "fetchc").exists()]
            if not found:
                sys.exit(f"bench_compile: no .venv/bin/fetchc or bin/fetchc under {p}")
            p = found[0]
        if p.name.startswith("python"):
            self.python = str(p)
            self.fetchc = [str(p.parent / "fetchc")] if (p.parent / "fetchc").exists() else [str(p), "-m", "fetchc.cli"]
        else:  # a fetchc script: its sibling python, else its shebang's
            self.fetchc = [str(p)]
            py = p.parent / "python"
            self.python = str(py) if py.exists() else p.read_bytes()[:300].split(b"\n")[0][2:].decode().split()[0]
        self.bindir = Path(self.python).parent
        probe = ("import importlib.metadata as m, os, fetchc\n"
                 "print(os.path.dirname(os.path.dirname(os.path.abspath(fetchc.__file__))))\n"
                 "def v(d):\n    try: return m.version(d)\n    except Exception: return '-'\n"
                 "print(' '.join(d + ' ' + v(d) for d in ('fetchc', 'xdsl', 'ml_dtypes', 'numpy')))")
        r = subprocess.run([self.python, "-c", probe], capture_output=True, text=True, cwd="/")
        if r.returncode:
            sys.exit(f"bench_compile: {self.python} cannot import fetchc (run this script with a python that "
                     f"has fetchc installed, or pass --current / --baseline):\n{r.stderr}")
        root, self.versions = r.stdout.splitlines()[:2]
        self.root = Path(root) if (Path(root) / "test" / "lit").is_dir() else None
        git = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True) \
            if self.root and shutil.which("git") else None
        self.commit = git.stdout.strip() if git and git.returncode == 0 else "-"

    def tool(self, name: str) -> str | None:
        return str(self.bindir / name) if (self.bindir / name).exists() else None

    def describe(self) -> str:
        return f"{self.label}: {shlex.join(self.fetchc)}  [checkout {self.root or '-'} @ {self.commit}; {self.versions}]"


# ---------------------------------------------------------------- running
NO_CACHE = {"FETCHC_NO_CACHE": "1"}
"""The environment of every row that measures the compiler itself (a fetchc
without a kernel compile cache ignores it)."""


def run(cmd: list[str], cwd: str | None = None, timeout: float = 3600,
        env: dict[str, str | None] | None = None) -> tuple[float, float, int, int, str]:
    """Run ``cmd`` (with ``env`` added to the environment; default
    :data:`NO_CACHE`; a None value removes the variable); return (wall seconds, CPU seconds (user + system),
    exit code, peak RSS in KiB, the tail of its stdout+stderr).  CPU and RSS
    are ``os.wait4``'s for this child (with its waited-for descendants; RSS
    is the largest process's)."""
    added: dict[str, str | None] = {**(NO_CACHE if env is None else env)}
    full = {k: v for k, v in {**os.environ, **added}.items() if v is not None}
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd or RUN_CWD, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=full)
        killer = threading.Timer(timeout, p.kill)
        killer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        killer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(max(0, out.seek(0, 2) - 4000))
        return wall, ru.ru_utime + ru.ru_stime, p.returncode, ru.ru_maxrss, out.read().decode(errors="replace")


def fail_line(rc: int, text: str) -> str:
    """The most telling line of a failed command's output."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errs = [ln for ln in lines if re.search(r"error:|Error\b", ln)] or lines
    return f"exit {rc}: " + (errs[-1][:160] if errs else "")


class Row:
    """One table row: times, peak RSS, command and failure per side."""

    def __init__(self, name: str, group: str, size: int = 0, note: str = ""):
        self.name, self.group, self.size, self.note = name, group, size, note
        self.t: dict[str, list[float]] = {"cur": [], "base": []}
        self.c: dict[str, list[float]] = {"cur": [], "base": []}
        self.rss = {"cur": 0, "base": 0}
        self.cmd: dict[str, str] = {}
        self.fail: dict[str, str] = {}

    def add(self, side: str, cmd: list[str], wall: float, cpu: float, rc: int, rss: int, text: str,
            cwd: str | None = None) -> None:
        self.cmd[side] = (f"cd {shlex.quote(cwd)} && " if cwd else "") + shlex.join(cmd)
        self.rss[side] = max(self.rss[side], rss)
        if rc:
            self.fail.setdefault(side, fail_line(rc, text))
        self.t[side].append(wall)
        self.c[side].append(cpu)

    def med(self, side: str, cpu: bool = False) -> float | None:
        xs = (self.c if cpu else self.t)[side]
        return statistics.median(xs) if xs else None

    def ratio(self, cpu: bool = False) -> float | None:
        xs = self.c if cpu else self.t
        pairs = [c / b for c, b in zip(xs["cur"], xs["base"]) if b > 0]
        return statistics.median(pairs) if pairs else None


def fmt_t(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s * 1e6:.0f} us" if s < 1e-3 else f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def inproc_main(files: list[str], iters: int) -> None:
    """``--inproc FILE...``: print {file: [median wall, median CPU seconds]
    of one fetchc.compile} as JSON."""
    import fetchc

    res = {}
    for f in files:
        text = Path(f).read_text()
        try:
            for _ in range(2):
                fetchc.compile(text, filename=f)
        except Exception as e:  # noqa: BLE001 - an example this fetchc does not know: no figure for it
            print(f"{f}: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
            continue
        ts, cs = [], []
        for _ in range(iters):
            t0, c0 = time.perf_counter(), time.process_time()
            fetchc.compile(text, filename=f)
            ts.append(time.perf_counter() - t0)
            cs.append(time.process_time() - c0)
        res[f] = [statistics.median(ts), statistics.median(cs)]
    print(json.dumps(res))


def inproc_model_main(path: str, renamed: str, iters: int) -> None:
    """``--inproc-model FILE RENAMED``: the model-like module compiled by
    ``fetchc.compile`` in one process whose imports are warm: print {row:
    [median wall, median CPU seconds]} as JSON.  Rows: ``no cache``
    (``cache=False``); ``cold cache`` (an empty in-process kernel cache
    before each call: each distinct kernel compiled once); ``warm cache
    (kernels renamed)`` (the cache filled from FILE, RENAMED compiled: every
    kernel a hit, no whole-input hit).  A fetchc without a kernel cache (the
    baseline) compiles plainly in every row."""
    import fetchc

    try:
        from fetchc import api, compile_cache
    except ImportError:
        api = compile_cache = None
    text, other = Path(path).read_text(), Path(renamed).read_text()
    fetchc.compile(text, filename="warm.mlir")

    def plain(t: str, name: str) -> None:
        if compile_cache is None:
            fetchc.compile(t, filename=name)
        else:
            fetchc.compile(t, filename=name, cache=False)

    def cold() -> None:
        if compile_cache is None:
            return plain(text, "m.mlir")
        api._CACHE = compile_cache.KernelCache()
        fetchc.compile(text, filename="m.mlir", cache=True)

    def warm_kernels() -> None:
        if compile_cache is None:
            return plain(other, "r.mlir")
        api._CACHE = compile_cache.KernelCache()
        fetchc.compile(text, filename="m.mlir", cache=True)
        c0 = time.process_time(), time.perf_counter()
        fetchc.compile(other, filename="r.mlir", cache=True)
        return time.perf_counter() - c0[1], time.process_time() - c0[0]

    res = {}
    for row, f in (("no cache", lambda: plain(text, "m.mlir")), ("cold cache", cold),
                   ("warm cache (kernels renamed)", warm_kernels)):
        ts, cs = [], []
        for _ in range(iters):
            t0, c0 = time.perf_counter(), time.process_time()
            got = f()
            w, c = (time.perf_counter() - t0, time.process_time() - c0) if got is None else got
            ts.append(w)
            cs.append(c)
        res[row] = [statistics.median(ts), statistics.median(cs)]
    print(json.dumps(res))


def parse_main(chains: list[int], runs: int, per_func: int, bases: bool) -> None:
    """Parse time of each chain and distinct-chain module, xDSL's parser (``parser="xdsl"``)
    against the fast front end (``"auto"``), in this process: CPU seconds,
    paired by round (xdsl then fast), the median of the per-round ratios."""
    import gc
    import statistics

    from fetchc.frontend.context import make_context
    from fetchc.frontend.parsing import parse_module

    ctx = make_context()
    print(f"# parse only, in process, {runs} paired rounds; command: {' '.join(sys.argv)}")
    parse_module(ctx, chains_module(4, per_func, bases)[0], "warm.mlir")  # load the dialects
    for kind, n in [(k, n) for k in ("chains", "distinct") for n in chains]:
        make = chains_module if kind == "chains" else distinct_module
        text, ops = make(n, per_func, bases)
        pairs = []
        for _ in range(runs):
            times = []
            for parser in ("xdsl", "auto"):
                gc.collect()
                t = time.process_time()
                module = parse_module(ctx, text, f"{kind}-{n}.mlir", parser=parser)
                times.append(time.process_time() - t)
                del module
            pairs.append(times)
        slow = statistics.median(p[0] for p in pairs)
        fast = statistics.median(p[1] for p in pairs)
        ratio = statistics.median(p[0] / p[1] for p in pairs)
        print(f"parse {kind} {n} ({ops} ops, {len(text) // 1024} KB): xdsl {slow:.3f} s  fast {fast:.3f} s  "
              f"speed-up {ratio:.2f}x (paired median)", flush=True)


def phases_main(path: str) -> None:
    """``--phases FILE``: compile FILE once in this process as ``fetchc FILE
    -o x.bin`` does (GC paused if this fetchc pauses it, no cache) and print
    {phase: CPU seconds} as JSON: start-up (importing fetchc's compile path),
    parse, verify (after parsing), the checks after it, each pass, the
    verification after each pass, emit (its parts where this fetchc has
    them: names, records, MANIFEST, writer).  Timing wraps module
    functions and pass classes of this process (a measuring tool: the
    compiler itself is unchanged)."""
    import contextlib
    import importlib

    t0 = time.process_time()
    from fetchc import driver
    from fetchc.seqbin import emit
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module

    out: dict[str, float] = {"start-up": time.process_time() - t0}
    label = ["verify"]

    def timed(name, fn, phase=None):
        def wrapper(*args, **kwargs):
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                key = phase() if phase else name
                out[key] = out.get(key, 0.0) + time.process_time() - t
        return wrapper

    driver.verify_module = timed("", driver.verify_module, lambda: label[0])
    if hasattr(driver, "release_garbage"):
        driver.release_garbage = timed("pipeline: gc.collect", driver.release_garbage)
    for name in ("_collect", "build_manifest", "write"):
        if hasattr(emit, name):
            setattr(emit, name, timed(f"emit: {name.strip('_')}", getattr(emit, name)))
    passes = driver.parse_pipeline(",".join(driver.DEFAULT_PIPELINE))
    for p in passes:
        for meth in ("apply", "apply_tracked"):
            fn = getattr(type(p), meth, None)
            if fn is not None and not hasattr(fn, "_phases"):
                def enter(*args, _fn=fn, _name=p.name, **kwargs):
                    label[0] = f"  verify after {_name}"
                    return timed(_name, _fn)(*args, **kwargs)
                enter._phases = True
                setattr(type(p), meth, enter)
    try:
        paused = importlib.import_module("fetchc.process").gc_paused
    except (ImportError, AttributeError):
        paused = contextlib.nullcontext
    text = Path(path).read_text()
    with paused():
        t = time.process_time()
        ctx = shared_context()
        module = parse_module(ctx, text, path)
        out["parse"] = time.process_time() - t
        t = time.process_time()
        result = driver.run_pipeline(module, ctx, passes)
        if not result.ok:
            sys.exit(f"{path}: {result.diagnostics[0].message}")
        inner = sum(v for k, v in out.items() if k not in ("start-up", "parse"))
        out["pipeline: other"] = time.process_time() - t - inner
        t = time.process_time()
        kernel = importlib.import_module("fetchc.kernel")
        if hasattr(kernel, "write_names"):
            timed("emit: write_names", kernel.write_names)(module)
        emit.emit_seqbin(module)
        out["emit"] = time.process_time() - t
    out["total"] = sum(v for k, v in out.items() if not k.startswith("emit:"))
    print(json.dumps(out))


def phases_report(name: str, cmds: list, runs: int, timeout: float) -> None:
    """Run each side's ``--phases`` command ``runs`` times, alternating
    sides, and print each phase's median CPU time per side and the median of
    the per-round ratios (current / baseline)."""
    got: list[list[dict[str, float]]] = [[] for _ in cmds]
    for _ in range(runs):
        for i, (_, cmd) in enumerate(cmds):
            _, _, rc, _, text = run(cmd, None, timeout)
            try:
                got[i].append(json.loads(text.strip().splitlines()[-1]))
            except (ValueError, IndexError):
                print(f"  {name}: {fail_line(rc or 1, text)}", file=sys.stderr)
    names = list(dict.fromkeys(k for side in got for r in side for k in r))
    print(f"\nphases of {name}: CPU seconds, median of {runs} in-process compiles per side"
          + ("; ratio = median of the rounds' current/baseline" if len(cmds) > 1 else ""))
    print(f"  {'phase':<42}" + "".join(f"{s.label:>10}" for s, _ in cmds) + ("   ratio" if len(cmds) > 1 else ""))
    for k in names:
        meds = [statistics.median(r[k] for r in side if k in r) if any(k in r for r in side) else None for side in got]
        line = f"  {k:<42}" + "".join(f"{m:>10.3f}" if m is not None else f"{'-':>10}" for m in meds)
        pairs = [c[k] / b[k] for c, b in zip(*got[:2]) if k in c and b.get(k)] if len(cmds) > 1 else []
        print(line + (f"  {statistics.median(pairs):6.3f}" if pairs else ""))
    for s, cmd in cmds:
        print(f"  {s.label}: {shlex.join(cmd)}")


def xdsl_opt_deep(argv: list[str]) -> int:
    """``--xdsl-opt-deep ARGS``: xdsl-opt on a 512 MiB-stack thread with a
    high recursion limit (as fetchc's CLI runs), so deep nesting parses."""
    from xdsl.tools.xdsl_opt import main as xdsl_opt_main

    sys.setrecursionlimit(1_000_000)
    threading.stack_size(512 << 20)
    sys.argv, rc = ["xdsl-opt", *argv], [1]

    def body() -> None:
        try:
            xdsl_opt_main()
            rc[0] = 0
        except SystemExit as e:
            rc[0] = e.code if isinstance(e.code, int) else int(e.code is not None)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    return rc[0]


# ------------------------------------------------------------------- main
def main() -> int:
    if sys.argv[1:2] == ["--xdsl-opt-deep"]:
        return xdsl_opt_deep(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="checkout with .venv, venv, python or fetchc script")
    ap.add_argument("--current", help="the same for the current side (default: this python)")
    ap.add_argument("--runs", type=int, help="rounds (default 5; 1 with --quick)")
    ap.add_argument("--chains", type=int, nargs="*", help="chain counts (default 1000 5000 15000)")
    ap.add_argument("--chains-per-func", type=int, default=4, help="chains per func.func (default 4)")
    ap.add_argument("--distinct", type=int, nargs="*", help="distinct-chain counts (default 1000 5000 15000)")
    ap.add_argument("--layers", type=int, default=32, help="layers of the model-like module (default 32)")
    ap.add_argument("--nest", type=int, nargs="*", help="nesting depths (default 1000 2000 4000 7000)")
    ap.add_argument("--no-bases", action="store_true", help="omit base/scale_base (needs automatic DM placement)")
    ap.add_argument("--cold", nargs="*", help="examples for cold start (default int8_zero_point_contract.mlir)")
    ap.add_argument("--examples", default=str(REPO / "examples"), help="directory of the examples")
    ap.add_argument("--iters", type=int, help="fetchc.compile calls per example per round (default 30)")
    ap.add_argument("--only", nargs="*", choices=["chains", "distinct", "model", "nest", "cold", "inproc", "tools", "lit", "parse", "phases"],
                    help="'parse': parse time only, xDSL's parser against the fast front end, in this process; "
                         "'phases': the CPU time of each phase of compiling the distinct chains, per side")
    ap.add_argument("--lit", action="store_true", help="also time each checkout's lit suite (slow)")
    ap.add_argument("--quick", action="store_true", help="small sizes, one round: a smoke test")
    ap.add_argument("--workdir", help="directory for the generated files (kept)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per command (default 3600)")
    ap.add_argument("--inproc", nargs="+", metavar="FILE", help=argparse.SUPPRESS)
    ap.add_argument("--inproc-model", nargs=2, metavar=("FILE", "RENAMED"), help=argparse.SUPPRESS)
    ap.add_argument("--phases", metavar="FILE", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.inproc_model:
        inproc_model_main(*a.inproc_model, a.iters or 3)
        return
    if a.inproc:
        inproc_main(a.inproc, a.iters or 30)
        return 0
    if a.phases:
        phases_main(a.phases)
        return 0

    q = a.quick
    runs, iters = a.runs or (1 if q else 5), a.iters or (5 if q else 30)
    chains = a.chains if a.chains is not None else ([100, 200] if q else [1000, 5000, 15000])
    nests = a.nest if a.nest is not None else ([100, 200] if q else [1000, 2000, 4000, 7000])
    distinct = a.distinct if a.distinct is not None else ([100, 200] if q else [1000, 5000, 15000])
    fams = set(a.only or ["chains", "distinct", "model", "nest", "cold", "inproc", "tools"]) | ({"lit"} if a.lit else set())
    if "parse" in fams:
        parse_main(chains, runs, a.chains_per_func, not a.no_bases)
        fams.discard("parse")
        if not fams:
            return 0
    examples = sorted(Path(a.examples).absolute().glob("*.mlir"))[: 2 if q else None]
    cold = [Path(a.examples).absolute() / c for c in (a.cold or ["int8_zero_point_contract.mlir"])]
    sides = [Side("current", a.current)] + ([Side("baseline", a.baseline)] if a.baseline else [])
    keys = ("cur", "base")
    work = Path(a.workdir or tempfile.mkdtemp(prefix="bench_compile-")).absolute()
    work.mkdir(parents=True, exist_ok=True)
    global RUN_CWD
    RUN_CWD = str(work)

    def load() -> str:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())

    print(f"# bench_compile {time.strftime('%Y-%m-%d %H:%M:%S')}  runs={runs}  cpus={os.cpu_count()}  "
          f"load={load()}  python {sys.version.split()[0]}")
    for s in sides:
        print("# " + s.describe())
    print(f"# workloads in {work}", flush=True)

    gen = []  # (name, group, size, path)
    for group, sizes, make in (("chains", chains, lambda n: chains_module(n, a.chains_per_func, not a.no_bases)),
                               ("distinct", distinct, lambda n: distinct_module(n, a.chains_per_func, not a.no_bases)),
                               ("model", [a.layers], lambda n: model_module(n)),
                               ("nest", nests, lambda d: nest_module(d, not a.no_bases))):
        if group in fams or "tools" in fams or (group == "distinct" and "phases" in fams):
            for n in sizes:
                text, ops = make(n)
                path = work / f"{group}-{n}.mlir"
                path.write_text(text)
                gen.append((f"{group} {n} ({ops} ops, {len(text) // 1024} KB)", group, n, path))

    def side_env(s: Side) -> dict[str, str | None]:
        """Each side's own cache directory: the two sides' start-up caches
        (one file name, different formats) must not overwrite each other
        between the paired runs."""
        return {"XDG_CACHE_HOME": str(work / f"xdg-{s.label}"), "FETCHC_CACHE_DIR": None}

    if not q and cold:  # one untimed run per side writes any missing .pyc files (even under PYTHONDONTWRITEBYTECODE)
        for s in sides:  # and fills the side's start-up cache
            run(s.fetchc + [str(cold[0]), "-o", str(work / f"warm-{s.label}.bin")],
                env={**NO_CACHE, **side_env(s), "PYTHONDONTWRITEBYTECODE": None})

    rows: list[Row] = []

    def paired(row: Row, cmd_for, env_for=None) -> None:  # cmd_for(side) -> (cmd, cwd); env_for(side) -> env
        for _ in range(runs):
            for s, key in zip(sides, keys):
                cmd, cwd = cmd_for(s)
                if cmd:
                    env = env_for(s) if env_for else None
                    row.add(key, cmd, *run(cmd, cwd, a.timeout, {**side_env(s), **(NO_CACHE if env is None else env)}),
                            cwd=cwd)
                    if env:
                        row.note = " ".join(f"{k}={v}" for k, v in env.items() if k != "FETCHC_CACHE_DIR") or row.note
        rows.append(row)
        print(f"  {row.name}: {fmt_t(row.med('cur'))} / {fmt_t(row.med('base'))}", file=sys.stderr, flush=True)

    def compile_cmd(path: Path):
        return lambda s: (s.fetchc + [str(path), "-o", str(work / f"x-{s.label}.bin")], None)

    def model_rows(name: str, path: Path) -> None:
        """The model-like module: uncached; with an empty cache directory
        (each distinct kernel compiled once); again with the directory
        filled (the same file: a whole-input hit); and a copy with every
        name changed against the filled directory (every kernel a hit)."""
        renamed = path.with_name(path.stem + "-renamed.mlir")
        renamed.write_text(re.sub(r"([%@])l(\d+)_", r"\1layer\2_", path.read_text()))
        fresh = iter(range(10**6))
        paired(Row(f"{name}, no cache", "model", note="FETCHC_NO_CACHE=1"), compile_cmd(path))
        paired(Row(f"{name}, cold cache", "model-cold"), compile_cmd(path),
               lambda s: {"FETCHC_CACHE_DIR": str(work / f"cache-model-{next(fresh)}")})
        filled = {"FETCHC_CACHE_DIR": str(work / "cache-model-filled")}
        run(sides[0].fetchc + [str(path), "-o", str(work / "x-fill.bin")], None, a.timeout, filled)
        paired(Row(f"{name}, warm cache (same file)", "model-warm"), compile_cmd(path), lambda s: filled)

        def kernels_only(s: Side) -> dict[str, str]:  # every run finds the kernels, never the whole input
            shutil.rmtree(work / "cache-model-filled" / "inputs", ignore_errors=True)
            return filled

        paired(Row(f"{name}, warm cache (kernels renamed)", "model-warm-kernels"), compile_cmd(renamed), kernels_only)
        inrows = {r: Row(f"{name}, fetchc.compile in process, {r}", "model-inproc")
                  for r in ("no cache", "cold cache", "warm cache (kernels renamed)")}
        for _ in range(runs):
            for s, key in zip(sides, keys):
                cmd = [s.python, SELF, "--inproc-model", str(path), str(renamed), "--iters", "3"]
                _, _, rc, rss, text = run(cmd, None, a.timeout, {})
                try:
                    res = json.loads(text.strip().splitlines()[-1])
                except (ValueError, IndexError):
                    res = {}
                for r, row in inrows.items():
                    if r in res:
                        row.add(key, cmd, *res[r], 0, rss, "")
                    else:
                        row.cmd[key] = shlex.join(cmd)
                        row.fail.setdefault(key, fail_line(rc or 1, text))
        rows.extend(inrows.values())

    if "cold" in fams:
        for ex in cold:
            paired(Row(f"cold {ex.name}", "cold", note="FETCHC_NO_CACHE=1"), compile_cmd(ex))
            hit = {"FETCHC_CACHE_DIR": str(work / "cache-cold")}
            run(sides[0].fetchc + [str(ex), "-o", str(work / "x-fill.bin")], None, a.timeout, hit)
            paired(Row(f"cold {ex.name}, repeat (cache hit)", "cold-hit", note="cache filled"), compile_cmd(ex),
                   lambda s: hit)
    if "phases" in fams:
        for name, group, size, path in gen:
            if group == "distinct":
                phases_report(name, [(s, [s.python, SELF, "--phases", str(path)]) for s in sides], runs, a.timeout)
    if "inproc" in fams and examples:
        for label, env in (("miss", NO_CACHE), ("hit", {})):
            inrows = {str(ex): Row(f"compile() {ex.name} ({label})", f"inproc-{label}",
                                   note="FETCHC_NO_CACHE=1" if env else "the same text again")
                      for ex in examples}
            for _ in range(runs):
                for s, key in zip(sides, keys):
                    cmd = [s.python, SELF, "--inproc", *inrows, "--iters", str(iters)]
                    _, _, rc, rss, text = run(cmd, None, a.timeout, env)
                    try:
                        res = json.loads(text.strip().splitlines()[-1])
                    except (ValueError, IndexError):
                        res = {}
                    for f, row in inrows.items():
                        one = [s.python, SELF, "--inproc", f, "--iters", str(iters)]
                        if f in res:
                            row.add(key, one, *res[f], 0, rss, "")
                        else:
                            row.cmd[key] = shlex.join(one)
                            row.fail.setdefault(key, fail_line(rc or 1, text))
            rows += inrows.values()
    for name, group, size, path in gen:
        if group in fams and group != "model":
            paired(Row(name, group, size, note="FETCHC_NO_CACHE=1"), compile_cmd(path))
        elif group in fams:
            model_rows(name, path)

    if "tools" in fams and gen:
        xo = sides[0].tool("xdsl-opt")
        mo = shutil.which("mlir-opt") or next(
            (shutil.which(f"mlir-opt-{v}") for v in range(30, 13, -1) if shutil.which(f"mlir-opt-{v}")), None)
        deep = [sides[0].python, SELF, "--xdsl-opt-deep"]
        for name, group, size, path in gen:
            if not xo or (q and size != max(g[2] for g in gen if g[1] == group)):  # --quick: largest only
                continue
            xcmd = (deep if group == "nest" else [xo]) + [str(path), "-o", os.devnull]
            r = Row(f"xdsl-opt {name}", f"xdsl-opt {group}", size, "deep stack" if group == "nest" else "")
            for _ in range(runs):
                r.add("cur", xcmd, *run(xcmd, None, a.timeout))
            rows.append(r)
            if mo:
                generic = path.with_suffix(".generic.mlir")
                run(deep + ["--print-op-generic", str(path), "-o", str(generic)], None, a.timeout)
                mcmd = [mo, "--allow-unregistered-dialect", str(generic), "-o", os.devnull]
                r = Row(f"{Path(mo).name} {name}", f"mlir-opt {group}", size, "generic form")
                if run(mcmd)[2] != 0:  # mlir-opt < 20 has no f4E2M1FN, f8E8M0FNU
                    ints = path.with_suffix(".generic-ints.mlir")
                    ints.write_text(generic.read_text().replace("f4E2M1FN", "i4").replace("f8E8M0FNU", "i8"))
                    mcmd[2], r.note = str(ints), "generic form, f4E2M1FN->i4, f8E8M0FNU->i8"
                for _ in range(runs):
                    r.add("cur", mcmd, *run(mcmd, None, a.timeout))
                rows.append(r)
        print("# xdsl-opt: " + (xo or f"none next to {sides[0].python}") + "; mlir-opt: " + (mo or "not on PATH"))

    if "lit" in fams:
        paired(Row("lit -q test/lit", "lit"), lambda s: (
            ([s.tool("lit"), "-q", str(s.root / "test" / "lit")], str(s.root)) if s.root and s.tool("lit") else (None, None)))

    print("\nmedian wall time per side, ratio = median of the rounds' current/baseline; the same for CPU "
          "(user+system; steadier on a busy machine); peak RSS")
    print(f"{'#':>2}  {'workload':<44} {'current':>10} {'baseline':>10} {'ratio':>6} "
          f"{'CPU cur':>10} {'CPU base':>10} {'ratio':>6} {'RSS cur':>7} {'RSS base':>8}")

    def fr(x: float | None) -> str:
        return f"{x:.3f}" if x else "-"

    for i, r in enumerate(rows, 1):
        rss = [f"{r.rss[k] / 1024:.0f} MB" if r.rss[k] else "-" for k in keys]
        print(f"{i:>2}  {r.name:<44} {fmt_t(r.med('cur')):>10} {fmt_t(r.med('base')):>10} {fr(r.ratio()):>6} "
              f"{fmt_t(r.med('cur', True)):>10} {fmt_t(r.med('base', True)):>10} {fr(r.ratio(True)):>6} "
              f"{rss[0]:>7} {rss[1]:>8}" + ("  FAIL" if r.fail else ""))
    pairs = [sorted((r for r in rows if r.group == g), key=lambda r: r.size)[-2:]
             for g in dict.fromkeys(r.group for r in rows if r.size)]
    if any(len(p) == 2 for p in pairs):
        print("\nlinearity: time(largest) / time(next smaller); linear growth = the size ratio")
    for rs in pairs:
        if len(rs) == 2:
            lo, hi, grp = rs[0], rs[1], rs[0].group
            parts = [f"{lab} {hi.med(k) / lo.med(k):.2f} (CPU {hi.med(k, True) / lo.med(k, True):.2f})"
                     for k, lab in zip(keys, ("current", "baseline")) if hi.med(k) and lo.med(k)]
            print(f"  {grp:<16} {hi.size}/{lo.size} (size ratio {hi.size / lo.size:.2f}): {', '.join(parts)}")
    print("\ncommands (row side: command)")
    for i, r in enumerate(rows, 1):
        for k, lab in zip(keys, ("current", "baseline")):
            if k in r.cmd:
                print(f"{i:>2} {lab}: {r.cmd[k]}" + (f"   [{r.note}]" if r.note else ""))
            if k in r.fail:
                print(f"{i:>2} {lab} FAILED: {r.fail[k]}")
    print(f"\n# done {time.strftime('%H:%M:%S')}  load={load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
