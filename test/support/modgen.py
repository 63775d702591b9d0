"""Random **valid** fetchc modules: one generator for the property tests
(hypothesis) and the fuzzer (``tools/fuzz.py``).

The generator is written against a tiny chooser interface
(:class:`Chooser`: ``choice`` / ``integer`` / ``boolean``) with two
adapters: :class:`DrawChooser` wraps a hypothesis ``draw`` (the property
tests: examples shrink) and :class:`RandomChooser` a ``random.Random`` (the
fuzzer: fast, seeded).  :func:`generate` returns a :class:`GenModule`, a
structure (functions of :class:`Chain` objects) that :attr:`GenModule.text`
renders as MLIR; the fuzzer's mutations edit the chains before rendering.
:func:`modules` is the hypothesis strategy.  A :class:`Profile` sets the
sizes (:data:`PROPERTY` for the tests, :data:`FUZZ`, :data:`FUZZ_SMALL`,
:data:`FUZZ_BIG` for the fuzzer) and whether arguments are dressed with
attribute dictionaries and ``_<digits>`` SSA names (:func:`dress`,
:data:`FUZZ_DRESSED` for the kernel compile cache).

A module is one function ``@k0`` (sometimes two or more, ``@k1``...) with
one to three (profile) Fetch Unit chains each.  The generator is valid by
construction for the rules it knows (hardware.md §2-4, ir.md §3); the caller
still filters with ``fetchc.diagnostics.verify_module`` (the rare rejects are
combinations the generator does not model exactly: more than 8 sequencer
entries after merging, a pinned ``read_size`` that is not legal).

Each chain is

* a **memref** (rank 1-3, small: at most a few thousand elements) with an
  identity layout or a ``strided<[...], offset: N>`` layout (any dim order in
  memory, padding between rows, an offset), fetched at a DM ``base`` that does
  not overlap any other fetched memref (8-byte aligned, sometimes far away);
* an **access pattern** as a linear map: a sub-window of every memref dim
  (tiling), dims read forwards or reversed (negative coefficients with
  constants), dims split into an outer and an inner stream dim, the stream
  dims in any order, broadcast dims (coefficient 0, stride-0 entries) and
  size-1 dims; packets are either contiguous along the memory-innermost dim
  (one dim, or two when that dim is split), a single element, or a
  broadcast; sometimes a pinned ``read_size``; an identity map is sometimes
  left out (the default map);
* a **stage chain**: none, ``fetch.table_lookup``, ``fetch.cast``, lookup +
  cast, ``fetch.convert`` (every legal pair, identity included), a lookup or
  convert followed by a further stage, a function table (``fn``, with a
  scale and zero point on integer keys; hardware.md §2.1b) maybe widened to
  ``f32``, ``fetch.zp_sub``, or ``fetch.dequant``
  (NVFP4 / MXFP4 with a block-aligned layout, its scale memref at its own
  ``scale_base``, the tensor scale an ``f32`` argument or an
  ``arith.constant``);
* the ``main`` context, or ``sub`` when the chain has no table lookup and its
  reads fit the fixed 8-byte read;
* **consumers**: optional ``rngd.switch`` / ``rngd.collect`` (the Switch
  only for packets of whole 8-byte words, ir.md §3 rule 9), then
  ``rngd.transpose``, ``rngd.commit`` to an output memref, or
  ``rngd.to_trf`` / ``rngd.to_vrf`` returned from the function, or
  ``rngd.contract_outer`` (only of a stream type the Contraction Engine
  takes, with a TRF type it pairs with, :data:`CONTRACTION_TRF`) with TRF
  weights fetched by a chain of their own (with :attr:`Profile.trf_args`,
  sometimes a ``!rngd.trf`` argument) whose accumulator is consumed in turn;
  a ``rngd.collect`` sometimes gives the flit form (hardware.md §2.5) where
  a packet is a whole number of 32-byte flits, more than one; a committed tensor is sometimes fetched
  again later (it then has a DM address too).  An ``i5`` / ``i9`` stream
  (zero point) always goes into ``rngd.contract_outer``.

Types are written with their MLIR spellings; nothing here imports fetchc, so
the generator encodes the hardware rules independently of the compiler.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

T = TypeVar("T")

BITS = {"i4": 4, "f4E2M1FN": 4, "i8": 8, "f8E4M3FN": 8, "f8E5M2": 8, "f8E8M0FNU": 8, "i16": 16, "bf16": 16,
        "i32": 32, "f32": 32}  # fmt: skip
STORABLE = list(BITS)
FLOATS = {"f4E2M1FN", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "bf16", "f32"}
LOOKUPS = [("f4E2M1FN", "f8E4M3FN"), ("f4E2M1FN", "f8E5M2"), ("f8E4M3FN", "bf16"), ("f8E5M2", "bf16")]
CASTS = [("i4", "i32"), ("i8", "i32"), ("i16", "i32"), ("f8E4M3FN", "f32"), ("f8E5M2", "f32"), ("bf16", "f32"),
         ("f32", "bf16")]  # fmt: skip
CONVERTS = [(t, t) for t in STORABLE] + LOOKUPS + CASTS + [("f4E2M1FN", "f32")]
FUNCTION_KEYS = ["f8E4M3FN", "f8E5M2", "i8", "bf16", "i16"]
FUNCTIONS = ["identity", "relu", "gelu", "gelu_tanh", "sigmoid", "silu", "tanh", "exp"]
FUNCTION_SCALES = ["0.0625", "0.1", "3.5", "1.0e-03", "1.0e+30", "1.17549435e-38", "-2.0"]
ZERO_POINT_RANGE = {"i8": (-128, 127), "i16": (-32768, 32767)}
"""Function tables (hardware.md §2.1b): key types, functions, scales, zero-point ranges."""
ZERO_POINTS = {"i4": (-8, 7), "i8": (-128, 127)}
ZP_RESULT = {"i4": "i5", "i8": "i9"}
BLOCK = {"nvfp4": 16, "mxfp4": 32}
SCALE_TYPE = {"nvfp4": "f8E4M3FN", "mxfp4": "f8E8M0FNU"}
WIRE_BITS = {**BITS, "i5": 8, "i9": 16}
"""Bits per element entering the Switch Engine (hardware.md §2.4)."""
CONTRACTION_TRF = {"i4": ["i4", "i5"], "i5": ["i4", "i5"], "i8": ["i8", "i9"], "i9": ["i8", "i9"],
                   "f8E4M3FN": ["f8E4M3FN"], "f8E5M2": ["f8E5M2"], "bf16": ["bf16"]}  # fmt: skip
"""The Contraction Engine's operand pairs (hardware.md §2.6): stream type ->
the TRF types it takes; integer streams accumulate into i32, float ones into
f32."""


# --------------------------------------------------------------------------
# Choosers
# --------------------------------------------------------------------------


class Chooser(Protocol):
    """Where the generator's random decisions come from."""

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options`` (not empty)."""
        ...

    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]`` (both included)."""
        ...

    def boolean(self) -> bool: ...


class RandomChooser:
    """A :class:`Chooser` on a ``random.Random`` (the fuzzer)."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        return self.rng.choice(list(options))

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5


class DrawChooser:
    """A :class:`Chooser` on a hypothesis ``draw`` (the property tests; the
    examples shrink towards the first option, ``lo`` and ``False``)."""

    def __init__(self, draw):
        from hypothesis import strategies as st  # noqa: PLC0415 - the fuzzer does not need hypothesis

        self.draw = draw
        self.st = st

    def choice(self, options: Sequence[T]) -> T:
        return self.draw(self.st.sampled_from(list(options)))

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def boolean(self) -> bool:
        return self.draw(self.st.booleans())


def one_in(ch: Chooser, n: int) -> bool:
    """True with probability ``1/n``."""
    return ch.integer(0, n - 1) == 0


def permutation(ch: Chooser, items: Sequence[T]) -> list[T]:
    """``items`` in a random order (Fisher-Yates; the identity shrinks best)."""
    out = list(items)
    for i in range(len(out) - 1):
        j = ch.integer(i, len(out) - 1)
        out[i], out[j] = out[j], out[i]
    return out


@dataclass(frozen=True)
class Profile:
    """Sizes and options of the generated modules."""

    funcs: tuple[int, ...] = (1, 1, 1, 2)
    """The number of functions is one of these."""
    chains: int = 3
    """At most this many chains per function (weights chains not counted)."""
    max_elems: int = 2048
    """About the most elements of a memref (the contiguous dim is cut to fit)."""
    max_stream: int | None = 1 << 19
    """The most elements of a stream (broadcast dims shrink to fit); None: no bound."""
    rare_big: bool = True
    """Now and then a dim over 65536 elements (sequencer entry splitting)."""
    dims: tuple[int, ...] = ()
    """Further sizes for a non-contiguous memref dim (besides 1-5), a quarter of the time."""
    far_bases: bool = False
    """Now and then a base just below 2^19 (later tensors may then not fit DM);
    also lifts the DM budget (:data:`DM_BUDGET`) of a function."""
    trf_args: bool = False
    """Contraction weights are sometimes a ``!rngd.trf`` function argument."""
    dress_args: bool = False
    """Arguments sometimes carry attribute dictionaries (``rngd.name`` with a
    bare or a quoted key, a nested dictionary holding an ``rngd.name`` that
    names nothing) and SSA names ending in ``_<digits>`` (:func:`dress`).
    Off for the tests that pass inputs by SSA name."""


VRF_BUDGET = 8192
"""Bytes of VRF tensors one kernel may hold in a slice (hardware.md §2.6): a
``rngd.to_vrf`` that would cross it becomes a ``rngd.to_trf``, and a
re-fetch that would is dropped."""

DM_BUDGET = 3 << 17
"""Bytes of tensors one generated kernel may take: three quarters of one
slice's 512 KiB of DM (hardware.md §1a), leaving room for the placement's
64-byte alignment and the scratch buffers of routed sub decodes."""

PROPERTY = Profile()
"""The property tests: small tensors, every construct the reference evaluates."""
FUZZ = Profile(funcs=(1, 1, 1, 2, 3), chains=4, max_elems=1 << 20, trf_args=True,
               dims=(7, 8, 12, 16, 32, 64, 100, 128, 256, 1000, 4096))  # fmt: skip
"""The fuzzer: more functions and chains, bigger tensors."""
FUZZ_SMALL = replace(FUZZ, max_elems=2048, rare_big=False, dims=(8, 16, 32, 64))
"""The fuzzer, for inputs it simulates: small tensors."""
FUZZ_DRESSED = replace(FUZZ, dress_args=True)
"""The fuzzer's kernel-cache target: every way of naming an argument."""
FUZZ_BIG = replace(FUZZ, max_elems=1 << 40, max_stream=None, far_bases=True,
                   dims=FUZZ.dims + (65536, 65537, 131072, 1 << 20, 3 * 65536, 100000, 1 << 24))  # fmt: skip
"""The fuzzer, compile only: huge dims and addresses near the end of DM."""


# --------------------------------------------------------------------------
# The generated structure
# --------------------------------------------------------------------------


@dataclass
class Dequant:
    """The ``fetch.dequant`` that ends a chain of ``f4E2M1FN`` codes."""

    format: str  # "nvfp4" | "mxfp4"
    bscale_shape: list
    bscale_elem: str
    gscale: bool  # nvfp4: a tensor scale operand
    gscale_const: str | None = None  # the tensor scale as an f32 literal (arith.constant), else an argument
    bscale_layout: str | None = None  # layout text of the scale memref
    scale_base: int | str | None = None  # None: no scale_base property
    out_elem: str = "f32"


@dataclass
class Contract:
    """``rngd.contract_outer`` of the chain's stream and TRF weights."""

    weights: Chain | None = None  # the chain whose rngd.to_trf gives them; None: a !rngd.trf argument
    welem: str | None = None  # weights element type (None: the first the stream pairs with, CONTRACTION_TRF)
    acc_elem: str | None = None  # accumulator element type (None: f32 for float inputs, else i32)
    then: list[str] = field(default_factory=list)  # engines on the accumulator


@dataclass
class Refetch:
    """A later ``fetch.fetch`` of the committed tensor at ``base``, packets of
    ``pk`` elements of its innermost dim, to ``rngd.to_vrf`` (returned)."""

    base: int
    pk: int


@dataclass
class Chain:
    """One fetch chain: ``fetch.fetch`` → stages → [dequant] → engines →
    [contract → engines] → [transpose] → consumer.  Text fields (``base``,
    ``map``, layouts) are rendered as they are, so a mutation may put
    anything in them."""

    ctx: str = "main"
    mem_shape: list = field(default_factory=lambda: [16, 16])
    mem_elem: str = "i8"
    mem_layout: str | None = None  # e.g. "strided<[32, 1], offset: 4>"
    stream_elem: str | None = None  # override of the fetch's result element type
    time: list = field(default_factory=lambda: [16])
    packet: list = field(default_factory=lambda: [16])
    map: str | None = None  # None: the default (identity) map
    base: int | str | None = "0"  # None: no base property
    read_size: int | str | None = None
    stages: list = field(default_factory=list)  # [op, out_elem, zero point / a lookup's "{fn = ...}" / None]
    stage_stream: dict = field(default_factory=dict)  # stage index -> (ctx, time, packet) override
    dequant: Dequant | None = None
    engines: list[str] = field(default_factory=list)  # rngd.switch / rngd.collect
    flits: bool = False  # the engines' rngd.collect gives the flit form (hardware.md §2.5)
    contract: Contract | None = None
    transpose: tuple[list, list] | str | None = None  # (time, packet) after it, or "reverse": both reversed
    consumer: str = "commit"  # commit | to_trf | to_vrf | none
    commit_shape: list | None = None  # None: one dim of all the elements
    commit_layout: str | None = None
    commit_elem: str | None = None
    commit_numel_delta: int = 0  # commit into a 1-D memref this many elements too big
    refetch: Refetch | None = None
    extra_use: bool = False  # the stream before the engines is committed a second time
    stream_arg: bool = False  # the fetch's stream is a function argument instead
    raw_prop: str | None = None  # extra text inside the fetch's {...}
    summary: str = ""

    def programs(self) -> int:
        """The ``seq.bin`` programs this chain compiles to: its fetch, a
        dequant's scale fetch, a refetch."""
        return (0 if self.stream_arg else 1) + (self.dequant is not None) + (self.refetch is not None)


@dataclass
class GenFunc:
    """A generated function ``@name``: its chains in program order."""

    name: str
    chains: list[Chain] = field(default_factory=list)
    dress: int | None = None  # the seed of the arguments' dressing (:func:`dress`); None: plain

    def programs(self) -> int:
        """The number of programs it compiles to (``name/0`` ...)."""
        return sum(c.programs() for c in self.chains)

    def render(self) -> str:
        return render_function(self)


@dataclass
class GenModule:
    """A generated module: :attr:`text` renders its functions (as they are now)."""

    funcs: list[GenFunc] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(f.render() for f in self.funcs)

    @property
    def fns(self) -> list[str]:
        return [f.name for f in self.funcs]

    @property
    def summary(self) -> list[str]:
        """One line per chain."""
        return [f"@{f.name}: {c.summary}" for f in self.funcs for c in f.chains]

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        return "GenModule(\n" + "\n".join("  // " + s for s in self.summary) + "\n" + self.text + ")"


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------


def stream_t(ctx: str, time, packet, elem: str) -> str:
    return f"!fetch.stream<{ctx}, [{', '.join(map(str, time))}], [{', '.join(map(str, packet))}], {elem}>"


def vrf_t(stream: str) -> str:
    """The ``!rngd.vrf`` type ``rngd.to_vrf`` makes of the stream type
    ``stream`` (its time dims then packet dims, its element type)."""
    m = re.fullmatch(r"!fetch\.stream<\w+, \[([0-9, ]*)\], \[([0-9, ]*)\], (.+)>", stream)
    assert m is not None, stream
    dims = [d for d in (m.group(1) + ", " + m.group(2)).split(", ") if d]
    return f"!rngd.vrf<[{', '.join(dims)}], {m.group(3)}>"


def vrf_bytes(n: int, elem: str) -> int:
    """Bytes a VRF tensor of ``n`` elements of ``elem`` takes (hardware.md
    §2.6: elements × element bytes, 4-bit types half a byte)."""
    return -(-n * BITS.get(elem, 8) // 8)


def memref_t(shape, elem: str, layout: str | None = None) -> str:
    dims = "x".join("?" if d is None else str(d) for d in shape)
    return f"memref<{dims}x{elem}{', ' + layout if layout else ''}>"


def strided(strides, offset: int = 0) -> str:
    return f"strided<[{', '.join(map(str, strides))}], offset: {offset}>"


def affine(coeffs: list[list[int]], consts: list[int], ndims: int) -> str:
    def expr(row, k):
        s = str(k) if k else ""
        for d, c in enumerate(row):
            if not c:
                continue
            term = f"d{d}" if abs(c) == 1 else f"d{d} * {abs(c)}"
            if not s:
                s = term if c > 0 else f"0 - {term}"
            else:
                s += (" + " if c > 0 else " - ") + term
        return s or "0"

    dims = ", ".join(f"d{d}" for d in range(ndims))
    return f"affine_map<({dims}) -> ({', '.join(expr(r, k) for r, k in zip(coeffs, consts))})>"


class _Out:
    """The arguments, body lines and results of a function being rendered."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.body: list[str] = []
        self.results: list[tuple[str, str]] = []


def _render_fetch(c: Chain, k: int, out: _Out) -> tuple[str, str]:
    """The memref argument and its fetch; returns (stream value, type)."""
    mt = memref_t(c.mem_shape, c.mem_elem, c.mem_layout)
    out.args.append(f"%m{k}: {mt}")
    cur_t = stream_t(c.ctx, c.time, c.packet, c.stream_elem or c.mem_elem)
    props = []
    if c.base is not None:
        props.append(f"base = {c.base} : i64")
    if c.map is not None:
        props.append(f"map = {c.map}")
    if c.read_size is not None:
        props.append(f"read_size = {c.read_size} : i64")
    if c.raw_prop:
        props.append(c.raw_prop)
    prop_text = (" {" + ", ".join(props) + "}") if props else ""
    if c.stream_arg:
        out.args.append(f"%s{k}_0: {cur_t}")
    else:
        out.body.append(f"%s{k}_0 = fetch.fetch %m{k}{prop_text} : {mt} -> {cur_t}")
    return f"%s{k}_0", cur_t


def _render_dequant(d: Dequant, k: int, cur: str, cur_t: str, shape, out: _Out) -> tuple[str, str]:
    ctx, time, packet = shape
    smt = memref_t(d.bscale_shape, d.bscale_elem, d.bscale_layout)
    out.args.append(f"%bs{k}: {smt}")
    operands, types = f"{cur}, %bs{k}", f"{cur_t}, {smt}"
    if d.gscale:
        if d.gscale_const is not None:
            out.body.append(f"%gc{k} = arith.constant {d.gscale_const} : f32")
            operands += f", %gc{k}"
        else:
            out.args.append(f"%g{k}: f32")
            operands += f", %g{k}"
        types += ", f32"
    props = [f'format = "{d.format}"']
    if d.scale_base is not None:
        props.append(f"scale_base = {d.scale_base} : i64")
    out_t = stream_t(ctx, time, packet, d.out_elem)
    out.body.append(f"%w{k} = fetch.dequant {operands} {{{', '.join(props)}}} : {types} -> {out_t}")
    return f"%w{k}", out_t


def _render_engines(engines: list[str], name: str, cur: str, cur_t: str, out: _Out) -> str:
    for j, eng in enumerate(engines):
        out.body.append(f"%{name}_{j} = {eng} {cur} : {cur_t} -> {cur_t}")
        cur = f"%{name}_{j}"
    return cur


def flit_form(time, packet, elem: str) -> tuple[list, list] | None:
    """hardware.md §2.5: the Collect Engine's flit form of a stream, or None
    when a packet is not a whole number of 32-byte flits, more than one."""
    bits = math.prod(packet) * WIRE_BITS[elem]
    if bits <= 256 or bits % 256:
        return None
    return list(time) + [bits // 256], [256 // WIRE_BITS[elem]]


def _render_flit_engines(c: Chain, k: int, cur: str, ctx: str, time, packet, elem: str, out: _Out):
    """The chain's engines; with :attr:`Chain.flits`, its ``rngd.collect``
    gives the flit form.  Returns the stream and its time and packet."""
    cur_t = stream_t(ctx, time, packet, elem)
    for j, eng in enumerate(c.engines):
        new = flit_form(time, packet, elem) if eng == "rngd.collect" and c.flits else None
        if new is not None:
            time, packet = new
        nt = stream_t(ctx, time, packet, elem)
        out.body.append(f"%e{k}_{j} = {eng} {cur} : {cur_t} -> {nt}")
        cur, cur_t = f"%e{k}_{j}", nt
    return cur, time, packet


def _render_commit(c: Chain, k: int, cur: str, cur_t: str, elem: str, numel: int, out: _Out) -> None:
    shape, layout = (c.commit_shape or [numel]), c.commit_layout
    if c.commit_numel_delta:
        shape, layout = [numel + c.commit_numel_delta], None
    mt = memref_t(shape, c.commit_elem or elem, layout)
    out.args.append(f"%o{k}: {mt}")
    out.body.append(f"rngd.commit {cur}, %o{k} : {cur_t}, {mt}")
    if c.refetch is None:
        return
    # Fetch the committed tensor again (the hardware runs the programs in
    # order: this one reads what the commit wrote).
    base, pk, last = c.refetch.base, c.refetch.pk, shape[-1]
    rt = stream_t("main", shape[:-1] + [last // pk], [pk], elem)
    nd = len(shape) + 1
    coeffs = [[int(i == r) for i in range(nd)] for r in range(len(shape) - 1)]
    coeffs.append([0] * (nd - 2) + [pk, 1])
    props = f"base = {base} : i64, map = {affine(coeffs, [0] * len(shape), nd)}"
    if pk == last:  # the default identity map
        rt = stream_t("main", shape[:-1], [last], elem)
        props = f"base = {base} : i64"
    out.body.append(f"%rf{k} = fetch.fetch %o{k} {{{props}}} : {mt} -> {rt}")
    out.body.append(f"%rv{k} = rngd.to_vrf %rf{k} : {rt} -> {vrf_t(rt)}")
    out.results.append((f"%rv{k}", vrf_t(rt)))


def render_chain(c: Chain, k: int, index: dict[int, int], weights: set[int], out: _Out) -> None:
    """Append chain ``k``'s arguments, ops and results to ``out``.
    ``index``: chain id -> its number; ``weights``: the ids of chains whose
    ``rngd.to_trf`` feeds a contraction (named ``%trf<k>``, not returned)."""
    cur, cur_t = _render_fetch(c, k, out)
    elem = c.stream_elem or c.mem_elem
    ctx, time, packet = c.ctx, list(c.time), list(c.packet)
    for i, (op, dst, zp) in enumerate(c.stages):
        if i in c.stage_stream:
            ctx, time, packet = c.stage_stream[i]
        out_t = stream_t(ctx, time, packet, dst)
        extra = f", {zp}" if op == "fetch.zp_sub" else (f" {zp}" if isinstance(zp, str) else "")
        out.body.append(f"%s{k}_{i + 1} = {op} {cur}{extra} : {cur_t} -> {out_t}")
        cur, cur_t, elem = f"%s{k}_{i + 1}", out_t, dst
    if c.dequant is not None:
        cur, cur_t = _render_dequant(c.dequant, k, cur, cur_t, (ctx, time, packet), out)
        elem = c.dequant.out_elem
    numel = math.prod(time) * math.prod(packet)
    before = (cur, cur_t, elem, numel)
    cur, time, packet = _render_flit_engines(c, k, cur, ctx, time, packet, elem, out)
    cur_t = stream_t(ctx, time, packet, elem)
    if c.contract is not None:
        acc = c.contract.acc_elem or ("f32" if elem in FLOATS else "i32")
        welem = c.contract.welem or CONTRACTION_TRF.get(elem, ["i8" if acc == "i32" else "f8E4M3FN"])[0]
        if c.contract.weights is not None:
            w = f"%trf{index.get(id(c.contract.weights), -1)}"
        else:
            w = f"%tw{k}"
            out.args.append(f"{w}: !rngd.trf<{welem}>")
        at = stream_t(ctx, time, packet, acc)
        out.body.append(f"%ac{k} = rngd.contract_outer {cur}, {w} : {cur_t}, !rngd.trf<{welem}> -> {at}")
        cur, cur_t, elem = f"%ac{k}", at, acc
        cur = _render_engines(c.contract.then, f"a{k}", cur, cur_t, out)
    if c.transpose is not None:
        t2, p2 = (list(reversed(packet)), list(reversed(time)) or [1]) if c.transpose == "reverse" else c.transpose
        tt = stream_t(ctx, t2, p2, elem)
        out.body.append(f"%t{k} = rngd.transpose {cur} : {cur_t} -> {tt}")
        cur, cur_t = f"%t{k}", tt
    if c.consumer == "commit":
        _render_commit(c, k, cur, cur_t, elem, numel, out)
    elif c.consumer in ("to_trf", "to_vrf"):
        kind = c.consumer[3:]
        name = f"%trf{k}" if id(c) in weights and kind == "trf" else f"%r{k}"
        rf_t = vrf_t(cur_t) if kind == "vrf" else f"!rngd.trf<{elem}>"
        out.body.append(f"{name} = rngd.{c.consumer} {cur} : {cur_t} -> {rf_t}")
        if name == f"%r{k}":
            out.results.append((name, rf_t))
    if c.extra_use:
        cur, cur_t, elem, numel = before
        out.args.append(f"%x{k}: {memref_t([numel], elem)}")
        out.body.append(f"rngd.commit {cur}, %x{k} : {cur_t}, {memref_t([numel], elem)}")


def render_function(f: GenFunc) -> str:
    """The MLIR text of ``f`` (a ``func.func`` returning its TRF / VRF results)."""
    out = _Out()
    index = {id(c): k for k, c in enumerate(f.chains)}
    weights = {id(c.contract.weights) for c in f.chains if c.contract is not None and c.contract.weights is not None}
    for k, c in enumerate(f.chains):
        render_chain(c, k, index, weights, out)
    if f.dress is not None:
        dress(out, f.dress)
    res = " -> (" + ", ".join(t for _, t in out.results) + ")" if out.results else ""
    ret = "  func.return"
    if out.results:
        ret += " " + ", ".join(v for v, _ in out.results) + " : " + ", ".join(t for _, t in out.results)
    return (f"func.func @{f.name}(" + ", ".join(out.args) + ")" + res + " {\n"
            + "".join("  " + line + "\n" for line in out.body) + ret + "\n}\n")  # fmt: skip


DRESSES = {
    "bare": ' {{rngd.name = "n{i}"}}',
    "quoted": ' {{"rngd.name" = "n{i}"}}',
    "nested": " {{foo = {{rngd.name = \"z\"}}}}",
    "both": ' {{"foo.bar" = {{"rngd.name" = "q{i}"}}, rngd.name = "n{i}", x = {i} : i32}}',
    "quoted, its own name": ' {{"rngd.name" = "{own}"}}',
    "nested, its own name": ' {{foo = {{rngd.name = "{own}"}}}}',
    "plain": "",
}
"""Attribute dictionaries an argument ``i`` may carry: each names it
``n<i>`` (a name no SSA name of the generator takes), its own SSA name
``own`` (so that a reader that takes the wrong name is right here, and
wrong on a copy whose arguments are renamed), or not at all."""


def dress(out: _Out, seed: int) -> None:
    """Give the arguments of ``out`` attribute dictionaries (:data:`DRESSES`)
    and some of them SSA names ending in ``_<digits>`` (renamed in the body
    and the results too; MLIR reads ``%m0_7`` as ``%m0``, so every name
    stays distinct), drawn from ``seed``."""
    rng = random.Random(seed)
    renames: dict[str, str] = {}
    args = []
    choices = [*DRESSES, "quoted, its own name", "nested, its own name"]  # those two twice as often
    theme = rng.choice(choices) if rng.random() < 0.5 else None  # every argument dressed alike
    for i, arg in enumerate(out.args):
        name, typ = arg.split(": ", 1)
        if rng.random() < 0.4:
            renames[name] = f"{name}_{rng.randrange(100)}"
        style = DRESSES[theme or rng.choice(choices)]
        args.append(f"{renames.get(name, name)}: {typ}{style.format(i=i, own=name[1:])}")
    out.args = args

    def renamed(text: str) -> str:
        return re.sub(r"%[\w$.-]+", lambda m: renames.get(m.group(0), m.group(0)), text)

    out.body = [renamed(line) for line in out.body]
    out.results = [(renamed(v), t) for v, t in out.results]


# --------------------------------------------------------------------------
# Layout helpers
# --------------------------------------------------------------------------


def footprint(shape, strides, offset, bits) -> int:
    """Bytes from the memref's element 0 to its last element, inclusive."""
    last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
    return -(-((last + 1) * bits) // 8)


def row_major(shape) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` (>= 1), ascending."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


# --------------------------------------------------------------------------
# Access patterns
# --------------------------------------------------------------------------


@dataclass
class Access:
    shape: list[int]
    strides: list[int] | None  # None: identity layout
    offset: int
    map: str | None  # None: the default identity map
    time: list[int]
    packet: list[int]
    read_size: int | None
    nbytes: int


@dataclass
class _Shape:
    """A memref being drawn: rank, memory-innermost dim ``m``, packet mode,
    contiguous unit (elements) and count ``km`` of units, big or not."""

    rank: int
    m: int
    mode: str
    unit: int
    km: int
    big: bool
    shape: list[int]


class Generator:
    """The generator: one per module, drawing from ``ch`` with sizes from
    ``profile``."""

    def __init__(self, ch: Chooser, profile: Profile = PROPERTY):
        self.ch = ch
        self.p = profile
        self.next_addr = 0
        self.commit_bytes = 0
        self.vrf_used = 0  # bytes of the kernel's VRF tensors so far

    # -- DM addresses ------------------------------------------------------

    def place(self, nbytes: int) -> int:
        """A fresh 8-byte aligned DM address for ``nbytes`` bytes."""
        ch = self.ch
        if self.p.far_bases and one_in(ch, 20):
            return (1 << 19) - 8 * ch.integer(1, 64)  # near the end of one slice's DM: may not fit
        addr = self.next_addr + ch.choice([0, 0, 0, 8, 24, 256])
        self.next_addr = addr + -(-max(nbytes, 1) // 8) * 8
        return addr

    # -- access patterns ---------------------------------------------------

    def _shape(self, bits: int, ctx: str, block: int | None) -> _Shape:
        ch = self.ch
        four = bits == 4
        # The unit a contiguous packet is made of: whole bytes for 4-bit,
        # whole 8-byte reads on sub, whole blocks for dequant codes.
        unit = 2 if four else 1
        if ctx == "sub":
            unit = 64 // bits
        if block:
            unit = max(unit, block)
        modes = ["contig"] if (four or ctx == "sub" or block) else ["contig", "contig", "single", "bcast"]
        mode = ch.choice(modes)
        # Rarely a "big" memref: a dim over 65536 elements (sequencer entry
        # splitting, merges that would exceed 65536).
        big = mode == "contig" and self.p.rare_big and ch.integer(0, 24) == 0
        rank = ch.integer(1, 2 if big else 3)
        m = rank - 1 if block else ch.integer(0, rank - 1)  # memory-innermost dim
        others = [self._other_dim(big) for _ in range(rank - 1)]
        if big:
            km = ch.choice([98304, 131072, 196608, 3 * 65536 + 2 * 64]) // unit
        else:
            budget = max(1, self.p.max_elems // (unit * math.prod(others)))
            km = ch.integer(1, min(64 // unit if unit < 64 else 1, budget) or 1)
        shape = others[:m] + [unit * km if mode == "contig" else ch.integer(1, 8)] + others[m:]
        if mode != "contig":
            km = shape[m]
        return _Shape(rank, m, mode, unit, km, big, shape)

    def _other_dim(self, big: bool) -> int:
        if self.p.dims and not big and one_in(self.ch, 4):
            return self.ch.choice(self.p.dims)
        return self.ch.integer(1, 2 if big else 5)

    def _layout(self, s: _Shape, four: bool) -> tuple[list[int], int, list[int] | None]:
        """Memory order (``m`` innermost), padding, offset: (strides, offset,
        layout strides or None for the identity layout)."""
        ch = self.ch
        order = permutation(ch, [d for d in range(s.rank) if d != s.m]) + [s.m]  # outermost ... innermost
        is_strided = ch.boolean()
        strides = [0] * s.rank
        acc = 1
        for d in reversed(order):
            strides[d] = acc
            pad = ch.choice([0, 0, 1, 2, 3]) if is_strided else 0
            acc = acc * s.shape[d] + pad * (acc if d != s.m else 1)
            if four and d == s.m and acc % 2:
                acc += 1
        offset = ch.integer(0, 12) if is_strided else 0
        if four:
            offset -= offset % 2
        natural = order == list(range(s.rank)) and strides == row_major(s.shape) and offset == 0
        return strides, offset, (None if (natural and not ch.boolean()) else strides)

    def _windows(self, s: _Shape) -> list[tuple[int, int, bool]]:
        """(start, length, reversed) of the window read in each memref dim."""
        ch = self.ch
        windows = []
        for d in range(s.rank):
            n = s.shape[d]
            if d == s.m and s.mode == "contig":
                ln = s.unit * (s.km if s.big and ch.integer(0, 3) else ch.integer(1, s.km))
                start = s.unit * ch.integer(0, s.km - ln // s.unit)
                rev = False
            else:
                ln = ch.integer(1, n)
                start = ch.integer(0, n - ln)
                rev = ch.boolean()
            windows.append((start, ln, rev))
        return windows

    def _pieces(self, s: _Shape, windows) -> tuple[list, list]:
        """The stream dims as (memref dim, size, coefficient magnitude):
        time pieces and packet pieces."""
        ch = self.ch
        pieces: list[tuple[int, int, int]] = []
        packet_pieces: list[tuple[int, int, int]] = []
        splits = 0
        for d in range(s.rank):
            start, ln, rev = windows[d]
            if d == s.m and s.mode == "contig":
                q = ch.choice([x for x in divisors(ln // s.unit) if s.unit * x <= 4096])
                p = s.unit * q
                outer = ln // p
                packet_pieces.append((d, p, 1))
                if outer > 1:
                    if one_in(ch, 4) and ln <= 65536:
                        packet_pieces.insert(0, (d, outer, p))  # a two-dim packet, contiguous
                    else:
                        pieces.append((d, outer, p))
                continue
            divs = [x for x in divisors(ln) if 1 < x < ln]
            if divs and splits < 2 and one_in(ch, 3):
                a = ch.choice(divs)
                pieces += [(d, a, ln // a), (d, ln // a, 1)]
                splits += 1
            else:
                pieces.append((d, ln, 1))
        if s.mode == "single":
            packet_pieces = [(ch.integer(0, s.rank - 1), 1, ch.choice([0, 1]))]
        elif s.mode == "bcast":
            packet_pieces = [(0, ch.integer(2, 8), 0)]
        pieces = permutation(ch, pieces)
        if s.mode == "contig" and pieces and one_in(ch, 8):
            # The innermost time dim joins the packet (a packet spanning rows,
            # channels...): legal only when the whole packet stays contiguous.
            packet_pieces.insert(0, pieces.pop())
        for _ in range(ch.choice([0, 0, 0, 1, 1, 2])):  # broadcast and size-1 time dims
            pos = ch.integer(0, len(pieces))
            size = ch.choice([1, 2, 3, 3, 70000 if not s.big else 3])  # stride-0 entries, one over 65536
            pieces.insert(pos, (0, size, 0))
        # Bound the stream (the reference, interpreter and simulator
        # materialise it): shrink broadcast dims first.
        while self.p.max_stream is not None and math.prod(x for _, x, _ in pieces + packet_pieces) > self.p.max_stream:
            j = max(range(len(pieces)), key=lambda i: pieces[i][1] if pieces[i][2] == 0 else 0, default=None)
            if j is None or pieces[j][2] != 0 or pieces[j][1] == 1:
                break
            pieces[j] = (0, 1, 0)
        return pieces, packet_pieces

    def access(self, elem: str, ctx: str, block: int | None = None, cast_bytes: int | None = None) -> Access:
        """A memref and a linear map reading it.  ``block``: dequant codes
        (the last axis innermost and contiguous, packets of whole blocks,
        block-aligned steps).  ``cast_bytes``: bytes per element after the
        chain's cast stage (limits a pinned ``read_size``: one read's cast
        output fits a 32-byte flit)."""
        ch = self.ch
        bits = BITS[elem]
        s = self._shape(bits, ctx, block)
        strides, offset, layout_strides = self._layout(s, bits == 4)
        windows = self._windows(s)
        pieces, packet_pieces = self._pieces(s, windows)
        dims = pieces + packet_pieces
        nd = len(dims)
        coeffs = [[0] * nd for _ in range(s.rank)]
        consts = [start + ln - 1 if rev else start for start, ln, rev in windows]
        for j, (d, size, c) in enumerate(dims):
            if c == 0:
                continue
            rev = windows[d][2] and not (size == 1 and s.mode == "single")
            coeffs[d][j] = -c if rev else c
        time = [x for _, x, _ in pieces]
        packet = [x for _, x, _ in packet_pieces]
        amap: str | None = affine(coeffs, consts, nd)
        identity = nd == s.rank and not any(consts) and all(coeffs[d][j] == (d == j) for d in range(s.rank) for j in range(nd))
        if identity and one_in(ch, 2):
            amap = None  # the default map
        read_size = None
        max_access = math.prod(packet) if s.mode == "contig" else 1
        legal = [
            r for r in divisors(max_access)
            if (r * bits) % 8 == 0 and r * bits // 8 in (1, 2, 4, 8, 16, 32) and (cast_bytes is None or r * cast_bytes <= 32)
        ]  # fmt: skip
        if ctx == "main" and legal and one_in(ch, 8):
            read_size = ch.choice(legal)
        off = offset if layout_strides is not None else 0
        return Access(
            shape=s.shape, strides=layout_strides, offset=off, map=amap, time=time, packet=packet,
            read_size=read_size, nbytes=footprint(s.shape, strides, off, bits),
        )  # fmt: skip

    def fetch(self, elem: str, ctx: str, acc: Access) -> Chain:
        """A chain of a memref read by ``acc`` at a fresh DM address (its
        ``base`` left out now and then when it is 0)."""
        base = self.place(acc.nbytes)
        return Chain(
            ctx=ctx,
            mem_shape=acc.shape,
            mem_elem=elem,
            mem_layout=strided(acc.strides, acc.offset) if acc.strides is not None else None,
            time=acc.time,
            packet=acc.packet,
            map=acc.map,
            base=None if base == 0 and self.ch.boolean() else base,
            read_size=acc.read_size,
        )

    # -- chains ------------------------------------------------------------

    KINDS = ["plain", "lookup", "cast", "lookup_cast", "convert", "convert_then", "zp", "dequant", "function"]

    def chains(self) -> list[Chain]:
        """One chain of a random kind, after the weights chain it contracts
        with, if any."""
        kind = self.ch.choice(self.KINDS)
        if kind == "dequant":
            return self.dequant_chain()
        if kind == "zp":
            return self.zp_chain()
        return self.stage_chain(kind)

    def stage_chain(self, kind: str) -> list[Chain]:
        ch = self.ch
        stages: list[tuple[str, str, str]] = []  # (op, src, dst)
        if kind == "plain":
            src = ch.choice(STORABLE)
        elif kind == "lookup":
            src, dst = ch.choice(LOOKUPS)
            stages = [("fetch.table_lookup", src, dst)]
        elif kind == "cast":
            src, dst = ch.choice(CASTS)
            stages = [("fetch.cast", src, dst)]
        elif kind == "lookup_cast":
            src, mid = ch.choice(LOOKUPS)
            stages = [("fetch.table_lookup", src, mid), ("fetch.cast", mid, "f32")]
        elif kind == "convert":
            src, dst = ch.choice(CONVERTS)
            stages = [("fetch.convert", src, dst)]
        elif kind == "function":  # a function table (hardware.md §2.1b), then maybe widened to f32
            src = ch.choice(FUNCTION_KEYS)
            stages = [("fetch.table_lookup", src, "bf16")] + ([("fetch.cast", "bf16", "f32")] if ch.boolean() else [])
        else:  # a lookup or convert followed by a further stage, legal together
            src, mid = ch.choice(LOOKUPS)
            first = ch.choice(["fetch.table_lookup", "fetch.convert"])
            stages = [(first, src, mid), ("fetch.convert" if first == "fetch.table_lookup" else "fetch.cast", mid, "f32")]
        has_lookup = any(
            o == "fetch.table_lookup" or (o == "fetch.convert" and (s, d) in LOOKUPS + [("f4E2M1FN", "f32")])
            for o, s, d in stages
        )
        big_cast = any(s == "i4" and d == "i32" for _, s, d in stages)
        ctx = "sub" if (not has_lookup and not big_cast and one_in(ch, 4)) else "main"
        casts = [d for o, s, d in stages if o == "fetch.cast" or (o == "fetch.convert" and (s, d) not in LOOKUPS and s != d)]
        acc = self.access(src, ctx, cast_bytes=BITS[casts[0]] // 8 if casts else None)
        c = self.fetch(src, ctx, acc)
        c.stages = [[op, d, None] for op, _, d in stages]
        if kind == "function":
            c.stages[0][2] = self.function_attrs(src)
        elem = stages[-1][2] if stages else src
        c.summary = f"{kind} {src}->{elem} {ctx} time {acc.time} packet {acc.packet}"
        return self.consume(c, ctx, acc.time, acc.packet, elem)

    def function_attrs(self, key: str) -> str:
        """The ``{fn = ..., scale = ..., zero_point = ...}`` of a function
        table keyed by ``key`` (scale and zero point on integer keys only,
        sometimes at the edges of their ranges)."""
        ch = self.ch
        parts = [f'fn = "{ch.choice(FUNCTIONS)}"']
        if key in ZERO_POINT_RANGE:
            lo, hi = ZERO_POINT_RANGE[key]
            if ch.boolean():
                parts.append(f"scale = {ch.choice(FUNCTION_SCALES)} : f32")
            if ch.boolean():
                parts.append(f"zero_point = {ch.choice([0, lo, hi, ch.integer(lo, hi)])} : i32")
        return "{" + ", ".join(parts) + "}"

    def weights(self, elem: str) -> Chain:
        """TRF weights for a contraction of an ``elem`` stream: a plain fetch
        of a type the stream pairs with, to ``rngd.to_trf``."""
        welem = self.ch.choice([w for w in CONTRACTION_TRF[elem] if w in BITS])
        wctx = self.ch.choice(["main", "sub"])
        wacc = self.access(welem, wctx)
        w = self.fetch(welem, wctx, wacc)
        w.consumer = "to_trf"
        w.summary = f"weights {welem} {wctx} time {wacc.time} packet {wacc.packet}"
        return w

    def contract(self, c: Chain, elem: str) -> tuple[list[Chain], str]:
        """Give ``c`` a contraction with TRF weights (a weights chain, or
        with :attr:`Profile.trf_args` sometimes an argument); returns the
        weights chains to place before ``c`` and the accumulator type."""
        if self.p.trf_args and one_in(self.ch, 3):
            c.contract = Contract(welem=self.ch.choice(CONTRACTION_TRF[elem]))
            before = []
        else:
            w = self.weights(elem)
            c.contract = Contract(weights=w, welem=w.mem_elem)
            before = [w]
        return before, ("f32" if elem in FLOATS else "i32")

    def zp_chain(self) -> list[Chain]:
        ch = self.ch
        src = ch.choice(["i8", "i4"])
        lo, hi = ZERO_POINTS[src]
        zp = ch.choice([ch.integer(lo, hi), lo, hi, 0])
        ctx = ch.choice(["main", "main", "sub"])
        acc = self.access(src, ctx)
        c = self.fetch(src, ctx, acc)
        res = ZP_RESULT[src]
        c.stages = [["fetch.zp_sub", res, zp]]
        c.engines = [eng for eng in ("rngd.switch", "rngd.collect") if ch.boolean() and switch_ok(eng, acc.packet, res)]
        time, packet = self.flits(c, acc.time, acc.packet, res)
        before, acc_elem = self.contract(c, res)
        c.summary = f"zp {src}-{zp} {ctx} time {acc.time} packet {acc.packet}"
        return before + self.consume(c, ctx, time, packet, acc_elem, allow_transpose=False, after_contract=True)

    def dequant_chain(self) -> list[Chain]:
        ch = self.ch
        fmt = ch.choice(["nvfp4", "mxfp4"])
        block = BLOCK[fmt]
        acc = self.access("f4E2M1FN", "main", block=block, cast_bytes=4)
        c = self.fetch("f4E2M1FN", "main", acc)
        # The scale memref: (rows, cols / block); its last axis must be
        # contiguous when a packet holds more than one block (the scale
        # fetch's packet).
        sshape = acc.shape[:-1] + [acc.shape[-1] // block]
        rank = len(sshape)
        several = acc.packet[-1] // block > 1
        layout = None
        if ch.boolean():
            order = list(range(rank))
            if not several:
                order = permutation(ch, order)
            strides = [0] * rank
            a = 1
            for d in reversed(order):
                strides[d] = a
                a = a * sshape[d] + ch.choice([0, 1, 3])
            off = ch.integer(0, 9)
            layout = strided(strides, off)
            snbytes = footprint(sshape, strides, off, 8)
        else:
            snbytes = math.prod(sshape)
        sbase = self.place(snbytes)
        d = Dequant(fmt, sshape, SCALE_TYPE[fmt], gscale=fmt == "nvfp4", bscale_layout=layout,
                    scale_base=None if sbase == 0 and ch.boolean() else sbase)  # fmt: skip
        if fmt == "nvfp4" and not ch.boolean():
            d.gscale_const = ch.choice(["0.37", "-1.25", "3.0e+38", "7.1e-45", "1.0"])
        c.dequant = d
        c.summary = f"dequant {fmt} time {acc.time} packet {acc.packet}"
        return self.consume(c, "main", acc.time, acc.packet, "f32")

    # -- consumers ---------------------------------------------------------

    def flits(self, c: Chain, time, packet, elem: str):
        """Sometimes let the ``rngd.collect`` of ``c``'s engines give the flit
        form (:attr:`Chain.flits`); returns the time and packet after it."""
        new = flit_form(time, packet, elem) if "rngd.collect" in c.engines else None
        c.flits = new is not None and self.ch.boolean()
        return new if c.flits and new is not None else (time, packet)

    def engines(self, packet, elem: str) -> list[str]:
        return [e for e in ("rngd.switch", "rngd.collect") if one_in(self.ch, 4) and switch_ok(e, packet, elem)]

    def consume(self, c: Chain, ctx: str, time, packet, elem: str, allow_transpose: bool = True,
                after_contract: bool = False) -> list[Chain]:  # fmt: skip
        """Give ``c`` its consumers (``elem``: its stream's element type, the
        accumulator's after a contraction); returns ``c`` after the weights
        chains it needs."""
        ch = self.ch
        before: list[Chain] = []
        engines = self.engines(packet, elem)
        if after_contract:
            assert c.contract is not None
            c.contract.then = engines
        else:
            c.engines = engines
            time, packet = self.flits(c, time, packet, elem)
            if elem in CONTRACTION_TRF and one_in(ch, 8):
                before, elem = self.contract(c, elem)
                c.contract.then = self.engines(packet, elem)  # type: ignore[union-attr]
                allow_transpose = False
        n = math.prod(time) * math.prod(packet)
        if allow_transpose and one_in(ch, 5):
            time, packet = factorisation(ch, n)
            c.transpose = (time, packet)
        c.consumer = ch.choice(["commit", "commit", "commit", "to_trf", "to_vrf"])
        if c.consumer == "to_vrf":
            if self.vrf_used + vrf_bytes(n, elem) > VRF_BUDGET:
                c.consumer = "to_trf"
            else:
                self.vrf_used += vrf_bytes(n, elem)
        if c.consumer == "commit":
            self.commit(c, time, packet, elem, n)
        return before + [c]

    def commit(self, c: Chain, time, packet, elem: str, n: int) -> None:
        """Commit to a memref of the stream's shape or one dim, sometimes a
        padded view; sometimes fetch it again later."""
        ch = self.ch
        shape = ch.choice([list(time) + list(packet), [n]])
        strides, offset = None, 0
        if one_in(ch, 4):  # a padded view
            strides, acc = [], 1
            for d in reversed(shape):
                strides.append(acc)
                acc *= d + ch.choice([0, 1, 2])
            strides = strides[::-1]
            offset = ch.choice([0, 2, 8])
        c.commit_shape = shape
        c.commit_layout = strided(strides, offset) if strides is not None else None
        self.commit_bytes += footprint(shape, strides or row_major(shape), offset, BITS.get(elem, 8)) + 64
        if BITS.get(elem, 0) >= 8 and one_in(ch, 6) and self.vrf_used + vrf_bytes(n, elem) <= VRF_BUDGET:
            self.vrf_used += vrf_bytes(n, elem)
            base = self.place(footprint(shape, strides or row_major(shape), offset, BITS[elem]))
            c.refetch = Refetch(base, max(x for x in divisors(shape[-1]) if x <= 256))
            c.summary += f"; refetch of the committed {memref_t(shape, elem, c.commit_layout)}"

    # -- modules -----------------------------------------------------------

    def function(self, name: str) -> GenFunc:
        """One kernel of 1 to ``chains`` chains whose tensors fit one slice's
        DM (:data:`DM_BUDGET`; a chain that would not fit is drawn again, at
        most 8 times, then dropped), except under ``far_bases``."""
        f = GenFunc(name, dress=self.ch.integer(0, (1 << 31) - 1) if self.p.dress_args else None)
        self.next_addr = self.ch.choice([0, 0, 8, 64, 4096, 1 << 16])
        self.commit_bytes = self.vrf_used = 0
        for _ in range(self.ch.integer(1, self.p.chains)):
            for _attempt in range(8):
                addr, committed, vrf = self.next_addr, self.commit_bytes, self.vrf_used
                new = self.chains()
                if self.p.far_bases or self.next_addr + self.commit_bytes <= DM_BUDGET:
                    f.chains += new
                    break
                self.next_addr, self.commit_bytes, self.vrf_used = addr, committed, vrf
        return f

    def module(self, nfuncs: int | None = None) -> GenModule:
        n = nfuncs if nfuncs is not None else self.ch.choice(self.p.funcs)
        return GenModule([self.function(f"k{i}") for i in range(n)])


def factorisation(ch: Chooser, n: int) -> tuple[list[int], list[int]]:
    p = ch.choice(divisors(n))
    rest = n // p
    t = ch.choice(divisors(rest))
    time = [x for x in (rest // t, t) if x > 1] if ch.boolean() else ([rest] if rest > 1 else [])
    return time, [p]


def switch_ok(eng: str, packet, elem: str) -> bool:
    """Rule 9: a packet entering rngd.switch is a whole number of 8-byte words."""
    return eng != "rngd.switch" or (math.prod(packet) * WIRE_BITS[elem]) % 64 == 0


def generate(ch: Chooser, profile: Profile = PROPERTY, nfuncs: int | None = None) -> GenModule:
    """A random valid module (see the module docstring), drawn from ``ch``:
    ``nfuncs`` functions (default: one of ``profile.funcs``)."""
    return Generator(ch, profile).module(nfuncs)


def modules(max_chains: int = 3, profile: Profile = PROPERTY):
    """The hypothesis strategy of :func:`generate` (``max_chains`` chains
    per function at most)."""
    from hypothesis import strategies as st  # noqa: PLC0415

    prof = replace(profile, chains=max_chains)
    return st.composite(lambda draw: generate(DrawChooser(draw), prof))()
