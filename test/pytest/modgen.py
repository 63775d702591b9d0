"""Hypothesis strategies for random **valid** fetchc modules.

:func:`modules` draws a :class:`GenModule`: the MLIR text of one function
``@k0`` (sometimes two, ``@k0`` and ``@k1``) with one to three Fetch Unit
chains each.  The generator is valid by
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
  broadcast; sometimes a pinned ``read_size``;
* a **stage chain**: none, ``fetch.table_lookup``, ``fetch.cast``, lookup +
  cast, ``fetch.convert`` (every legal pair, identity included), a lookup or
  convert followed by a further stage, ``fetch.zp_sub``, or ``fetch.dequant``
  (NVFP4 / MXFP4 with a block-aligned layout, its scale memref at its own
  ``scale_base``, the tensor scale an ``f32`` argument or an
  ``arith.constant``);
* the ``main`` context, or ``sub`` when the chain has no table lookup and its
  reads fit the fixed 8-byte read;
* **consumers**: optional ``rngd.switch`` / ``rngd.collect`` /
  ``rngd.transpose`` then ``rngd.commit`` to an output memref, or
  ``rngd.to_trf`` / ``rngd.to_vrf`` returned from the function; a committed
  tensor is sometimes fetched again later (it then has a DM address too).  An ``i5`` /
  ``i9`` stream (zero point) goes through optional switch / collect into
  ``rngd.contract_outer`` with TRF weights fetched by another chain, and the
  ``i32`` accumulator is committed.

Types are written with their MLIR spellings; nothing here imports fetchc, so
the generator encodes the hardware rules independently of the compiler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

BITS = {"i4": 4, "f4E2M1FN": 4, "i8": 8, "f8E4M3FN": 8, "f8E5M2": 8, "f8E8M0FNU": 8, "i16": 16, "bf16": 16,
        "i32": 32, "f32": 32}  # fmt: skip
STORABLE = list(BITS)
LOOKUPS = [("f4E2M1FN", "f8E4M3FN"), ("f4E2M1FN", "f8E5M2"), ("f8E4M3FN", "bf16"), ("f8E5M2", "bf16")]
CASTS = [("i4", "i32"), ("i8", "i32"), ("i16", "i32"), ("f8E4M3FN", "f32"), ("f8E5M2", "f32"), ("bf16", "f32"),
         ("f32", "bf16")]  # fmt: skip
CONVERTS = [(t, t) for t in STORABLE] + LOOKUPS + CASTS + [("f4E2M1FN", "f32")]
ZERO_POINTS = {"i4": (-8, 7), "i8": (-128, 127)}
BLOCK = {"nvfp4": 16, "mxfp4": 32}
SCALE_TYPE = {"nvfp4": "f8E4M3FN", "mxfp4": "f8E8M0FNU"}
MAX_ELEMS = 2048
MAX_STREAM = 1 << 19


@dataclass
class GenModule:
    """A generated module: ``text`` (MLIR), its function names ``fns``, and
    a one-line ``summary`` per chain."""

    text: str
    fns: list[str] = field(default_factory=lambda: ["k0"])
    summary: list[str] = field(default_factory=list)

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        return "GenModule(\n" + "\n".join("  // " + s for s in self.summary) + "\n" + self.text + ")"


# --------------------------------------------------------------------------
# Types and text helpers
# --------------------------------------------------------------------------


def stream(ctx: str, time, packet, elem: str) -> str:
    return f"!fetch.stream<{ctx}, [{', '.join(map(str, time))}], [{', '.join(map(str, packet))}], {elem}>"


def memref(shape, elem: str, strides=None, offset=0) -> str:
    dims = "x".join(map(str, shape))
    if strides is None:
        return f"memref<{dims}x{elem}>"
    return f"memref<{dims}x{elem}, strided<[{', '.join(map(str, strides))}], offset: {offset}>>"


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


# --------------------------------------------------------------------------
# Module builder
# --------------------------------------------------------------------------


class Builder:
    def __init__(self, draw, name: str):
        self.draw = draw
        self.name = name
        self.args: list[str] = []
        self.body: list[str] = []
        self.results: list[tuple[str, str]] = []
        self.n = 0
        self.next_addr = draw(st.sampled_from([0, 0, 8, 64, 4096, 1 << 16]))
        self.summary: list[str] = []

    def val(self, stem: str = "v") -> str:
        self.n += 1
        return f"%{stem}{self.n}"

    def arg(self, stem: str, ty: str) -> str:
        name = f"%{stem}{len(self.args)}"
        self.args.append(f"{name}: {ty}")
        return name

    def place(self, nbytes: int) -> int:
        """A fresh 8-byte aligned DM address for ``nbytes`` bytes."""
        gap = self.draw(st.sampled_from([0, 0, 0, 8, 24, 256]))
        addr = self.next_addr + gap
        self.next_addr = addr + -(-max(nbytes, 1) // 8) * 8
        return addr

    def emit(self, line: str) -> None:
        self.body.append("  " + line)

    def text(self) -> str:
        res = ""
        if self.results:
            res = " -> (" + ", ".join(t for _, t in self.results) + ")"
        ret = "  func.return"
        if self.results:
            ret += " " + ", ".join(v for v, _ in self.results) + " : " + ", ".join(t for _, t in self.results)
        return f"func.func @{self.name}(" + ", ".join(self.args) + ")" + res + " {\n" + "\n".join(self.body) + "\n" + ret + "\n}\n"


# --------------------------------------------------------------------------
# Access patterns
# --------------------------------------------------------------------------


@dataclass
class Access:
    shape: list[int]
    strides: list[int] | None  # None: identity layout
    offset: int
    map: str
    time: list[int]
    packet: list[int]
    read_size: int | None
    nbytes: int
    coeffs: list[list[int]]
    consts: list[int]


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def access(draw, elem: str, ctx: str, block: int | None = None, cast_bytes: int | None = None):
    """A memref and a linear map reading it.  ``block``: dequant codes (the
    last axis innermost and contiguous, packets of whole blocks, block-aligned
    steps).  ``cast_bytes``: bytes per element after the chain's cast stage
    (limits a pinned ``read_size``: one read's cast output fits a 32-byte
    flit)."""
    bits = BITS[elem]
    four = bits == 4
    ebytes = max(1, bits // 8)
    # The unit a contiguous packet is made of: whole bytes for 4-bit, whole
    # 8-byte reads on sub, whole blocks for dequant codes.
    unit = 2 if four else 1
    if ctx == "sub":
        unit = 64 // bits
    if block:
        unit = max(unit, block)
    modes = ["contig"] if (four or ctx == "sub" or block) else ["contig", "contig", "single", "bcast"]
    mode = draw(st.sampled_from(modes))

    # Rarely a "big" memref: a dim over 65536 elements (sequencer entry
    # splitting, merges that would exceed 65536).
    big = mode == "contig" and draw(st.integers(0, 24)) == 0
    rank = draw(st.integers(1, 2 if big else 3))
    m = rank - 1 if block else draw(st.integers(0, rank - 1))  # memory-innermost dim
    others = [draw(st.integers(1, 2 if big else 5)) for _ in range(rank - 1)]
    if big:
        km = draw(st.sampled_from([98304, 131072, 196608, 3 * 65536 + 2 * 64])) // unit
    else:
        budget = max(1, MAX_ELEMS // (unit * math.prod(others)))
        km = draw(st.integers(1, min(64 // unit if unit < 64 else 1, budget) or 1))
    shape = others[:m] + [unit * km if mode == "contig" else draw(st.integers(1, 8))] + others[m:]
    if mode != "contig":
        km = shape[m]

    # Layout: memory order (m innermost), padding, offset.
    order = [d for d in range(rank) if d != m]
    order = list(draw(st.permutations(order))) + [m]  # outermost ... innermost
    strided = draw(st.booleans())
    strides = [0] * rank
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        pad = draw(st.sampled_from([0, 0, 1, 2, 3])) if strided else 0
        acc = acc * shape[d] + pad * (acc if d != m else 1)
        if four and d == m and acc % 2:
            acc += 1
    offset = draw(st.integers(0, 12)) if strided else 0
    if four:
        offset -= offset % 2
    natural = order == list(range(rank)) and strides == row_major(shape) and offset == 0
    layout_strides = None if (natural and not draw(st.booleans())) else strides

    # Windows and directions.
    windows = []
    for d in range(rank):
        n = shape[d]
        if d == m and mode == "contig":
            ln = unit * (km if big and draw(st.integers(0, 3)) else draw(st.integers(1, km)))
            start = unit * draw(st.integers(0, km - ln // unit))
            rev = False
        else:
            ln = draw(st.integers(1, n))
            start = draw(st.integers(0, n - ln))
            rev = draw(st.booleans())
        windows.append((start, ln, rev))

    # Pieces: (memref dim, size, coefficient magnitude); split dims.
    pieces: list[tuple[int, int, int]] = []
    packet_pieces: list[tuple[int, int, int]] = []
    splits = 0
    for d in range(rank):
        start, ln, rev = windows[d]
        if d == m and mode == "contig":
            q = draw(st.sampled_from([x for x in divisors(ln // unit) if unit * x <= 4096]))
            p = unit * q
            outer = ln // p
            packet_pieces.append((d, p, 1))
            if outer > 1:
                if draw(st.integers(0, 3)) == 0 and ln <= 65536:
                    packet_pieces.insert(0, (d, outer, p))  # a two-dim packet, contiguous
                else:
                    pieces.append((d, outer, p))
            continue
        divs = [x for x in divisors(ln) if 1 < x < ln]
        if divs and splits < 2 and draw(st.integers(0, 2)) == 0:
            a = draw(st.sampled_from(divs))
            pieces += [(d, a, ln // a), (d, ln // a, 1)]
            splits += 1
        else:
            pieces.append((d, ln, 1))
    if mode == "single":
        packet_pieces = [(draw(st.integers(0, rank - 1)), 1, draw(st.sampled_from([0, 1])))]
    elif mode == "bcast":
        packet_pieces = [(0, draw(st.integers(2, 8)), 0)]

    pieces = list(draw(st.permutations(pieces)))
    if mode == "contig" and pieces and draw(st.integers(0, 7)) == 0:
        # The innermost time dim joins the packet (a packet spanning rows,
        # channels...): legal only when the whole packet stays contiguous.
        packet_pieces.insert(0, pieces.pop())
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):  # broadcast and size-1 time dims
        pos = draw(st.integers(0, len(pieces)))
        size = draw(st.sampled_from([1, 2, 3, 3, 70000 if not big else 3]))  # stride-0 entries, one over 65536
        pieces.insert(pos, (0, size, 0))

    # Bound the stream (the reference, interpreter and simulator materialise
    # it): shrink broadcast dims first.
    while math.prod(s for _, s, _ in pieces + packet_pieces) > MAX_STREAM:
        j = max(range(len(pieces)), key=lambda i: pieces[i][1] if pieces[i][2] == 0 else 0, default=None)
        if j is None or pieces[j][2] != 0 or pieces[j][1] == 1:
            break
        pieces[j] = (0, 1, 0)
    dims = pieces + packet_pieces
    nd = len(dims)
    coeffs = [[0] * nd for _ in range(rank)]
    consts = []
    for d in range(rank):
        start, ln, rev = windows[d]
        consts.append(start + ln - 1 if rev else start)
    for j, (d, size, c) in enumerate(dims):
        if c == 0:
            continue
        rev = windows[d][2] and not (size == 1 and mode == "single")
        coeffs[d][j] = -c if rev else c
    time = [s for _, s, _ in pieces]
    packet = [s for _, s, _ in packet_pieces]

    read_size = None
    max_access = math.prod(packet) if mode == "contig" else 1
    legal = [
        r for r in divisors(max_access)
        if (r * bits) % 8 == 0 and r * bits // 8 in (1, 2, 4, 8, 16, 32) and (cast_bytes is None or r * cast_bytes <= 32)
    ]
    if ctx == "main" and legal and draw(st.integers(0, 7)) == 0:
        read_size = draw(st.sampled_from(legal))
    return Access(
        shape=shape,
        strides=layout_strides,
        offset=offset if layout_strides is not None else 0,
        map=affine(coeffs, consts, nd),
        time=time,
        packet=packet,
        read_size=read_size,
        nbytes=footprint(shape, strides, offset if layout_strides is not None else 0, bits),
        coeffs=coeffs,
        consts=consts,
    )


def fetch_line(b: Builder, elem: str, ctx: str, acc: Access, stem: str = "a") -> tuple[str, str]:
    """Emit a memref argument and its fetch; return (stream value, stream type)."""
    mt = memref(acc.shape, elem, acc.strides, acc.offset)
    src = b.arg(stem, mt)
    base = b.place(acc.nbytes)
    st_t = stream(ctx, acc.time, acc.packet, elem)
    props = f"base = {base} : i64, map = {acc.map}"
    if base == 0 and b.draw(st.booleans()):
        props = f"map = {acc.map}"  # base defaults to 0
    if acc.read_size is not None:
        props += f", read_size = {acc.read_size} : i64"
    v = b.val("s")
    b.emit(f"{v} = fetch.fetch {src} {{{props}}} : {mt} -> {st_t}")
    return v, st_t


def stage(b: Builder, op: str, v: str, ctx, time, packet, src: str, dst: str, extra: str = "") -> tuple[str, str]:
    out_t = stream(ctx, time, packet, dst)
    w = b.val("s")
    b.emit(f"{w} = {op} {v}{extra} : {stream(ctx, time, packet, src)} -> {out_t}")
    return w, out_t


# --------------------------------------------------------------------------
# Chains
# --------------------------------------------------------------------------

KINDS = ["plain", "lookup", "cast", "lookup_cast", "convert", "convert_then", "zp", "dequant"]


@st.composite
def chain(draw, b: Builder) -> None:
    kind = draw(st.sampled_from(KINDS))
    if kind == "dequant":
        return dequant_chain(draw, b)
    if kind == "zp":
        return zp_chain(draw, b)
    stages: list[tuple[str, str, str]] = []  # (op, src, dst)
    if kind == "plain":
        src = draw(st.sampled_from(STORABLE))
    elif kind == "lookup":
        src, dst = draw(st.sampled_from(LOOKUPS))
        stages = [("fetch.table_lookup", src, dst)]
    elif kind == "cast":
        src, dst = draw(st.sampled_from(CASTS))
        stages = [("fetch.cast", src, dst)]
    elif kind == "lookup_cast":
        src, mid = draw(st.sampled_from(LOOKUPS))
        stages = [("fetch.table_lookup", src, mid), ("fetch.cast", mid, "f32")]
    elif kind == "convert":
        src, dst = draw(st.sampled_from(CONVERTS))
        stages = [("fetch.convert", src, dst)]
    else:  # a lookup or convert followed by a further stage, legal together
        src, mid = draw(st.sampled_from(LOOKUPS))
        first = draw(st.sampled_from(["fetch.table_lookup", "fetch.convert"]))
        stages = [(first, src, mid), ("fetch.convert" if first == "fetch.table_lookup" else "fetch.cast", mid, "f32")]
    has_lookup = any(
        o == "fetch.table_lookup" or (o == "fetch.convert" and (s, d) in LOOKUPS + [("f4E2M1FN", "f32")])
        for o, s, d in stages
    )
    big_cast = any(s == "i4" and d == "i32" for _, s, d in stages)
    ctx = "sub" if (not has_lookup and not big_cast and draw(st.integers(0, 3)) == 0) else "main"
    casts = [d for o, s, d in stages if o == "fetch.cast" or (o == "fetch.convert" and (s, d) not in LOOKUPS and s != d)]
    acc = draw(access(src, ctx, cast_bytes=BITS[casts[0]] // 8 if casts else None))
    v, t = fetch_line(b, src, ctx, acc)
    elem = src
    for op, s, d in stages:
        v, t = stage(b, op, v, ctx, acc.time, acc.packet, s, d)
        elem = d
    b.summary.append(f"{kind} {src}->{elem} {ctx} time {acc.time} packet {acc.packet}")
    consume(draw, b, v, ctx, acc.time, acc.packet, elem)


def zp_chain(draw, b: Builder) -> None:
    # TRF weights first: any plain fetch, then the residual stream.
    welem = draw(st.sampled_from(["i8", "i4", "i16", "bf16"]))
    wctx = draw(st.sampled_from(["main", "sub"]))
    wacc = draw(access(welem, wctx))
    wv, wt = fetch_line(b, welem, wctx, wacc, "w")
    trf = b.val("trf")
    b.emit(f"{trf} = rngd.to_trf {wv} : {wt} -> !rngd.trf<{welem}>")

    src = draw(st.sampled_from(["i8", "i4"]))
    lo, hi = ZERO_POINTS[src]
    zp = draw(st.integers(lo, hi))
    ctx = draw(st.sampled_from(["main", "main", "sub"]))
    acc = draw(access(src, ctx))
    v, t = fetch_line(b, src, ctx, acc, "x")
    res = "i5" if src == "i4" else "i9"
    v, t = stage(b, "fetch.zp_sub", v, ctx, acc.time, acc.packet, src, res, extra=f", {zp}")
    for eng in ("rngd.switch", "rngd.collect"):
        if draw(st.booleans()) and switch_ok(eng, acc.packet, res):
            w = b.val("s")
            b.emit(f"{w} = {eng} {v} : {t} -> {t}")
            v = w
    y = b.val("acc")
    yt = stream(ctx, acc.time, acc.packet, "i32")
    b.emit(f"{y} = rngd.contract_outer {v}, {trf} : {t}, !rngd.trf<{welem}> -> {yt}")
    b.summary.append(f"zp {src}-{zp} {ctx} time {acc.time} packet {acc.packet}; weights {welem} {wctx}")
    consume(draw, b, y, ctx, acc.time, acc.packet, "i32", allow_transpose=False)


def dequant_chain(draw, b: Builder) -> None:
    fmt = draw(st.sampled_from(["nvfp4", "mxfp4"]))
    block = BLOCK[fmt]
    acc = draw(access("f4E2M1FN", "main", block=block, cast_bytes=4))
    v, t = fetch_line(b, "f4E2M1FN", "main", acc, "c")
    # The scale memref: (rows, cols / block); its last axis must be contiguous
    # when a packet holds more than one block (the scale fetch's packet).
    sshape = acc.shape[:-1] + [acc.shape[-1] // block]
    selem = SCALE_TYPE[fmt]
    rank = len(sshape)
    several = acc.packet[-1] // block > 1
    if draw(st.booleans()):
        order = list(range(rank))
        if not several:
            order = list(draw(st.permutations(order)))
        strides = [0] * rank
        a = 1
        for d in reversed(order):
            strides[d] = a
            a = a * sshape[d] + draw(st.sampled_from([0, 1, 3]))
        off = draw(st.integers(0, 9))
        smt = memref(sshape, selem, strides, off)
        snbytes = footprint(sshape, strides, off, 8)
    else:
        smt = memref(sshape, selem)
        snbytes = math.prod(sshape)
    bs = b.arg("bs", smt)
    sbase = b.place(snbytes)
    sprop = "" if sbase == 0 and draw(st.booleans()) else f", scale_base = {sbase} : i64"
    if fmt == "nvfp4":
        if draw(st.booleans()):
            g = b.arg("g", "f32")
        else:
            g = b.val("gc")  # not "g": the arguments are %g<N> too
            x = draw(st.sampled_from(["0.37", "-1.25", "3.0e+38", "7.1e-45", "1.0"]))
            b.emit(f"{g} = arith.constant {x} : f32")
        w = b.val("dq")
        b.emit(
            f'{w} = fetch.dequant {v}, {bs}, {g} {{format = "nvfp4"{sprop}}} '
            f": {t}, {smt}, f32 -> {stream('main', acc.time, acc.packet, 'f32')}"
        )
    else:
        w = b.val("dq")
        b.emit(
            f'{w} = fetch.dequant {v}, {bs} {{format = "mxfp4"{sprop}}} '
            f": {t}, {smt} -> {stream('main', acc.time, acc.packet, 'f32')}"
        )
    b.summary.append(f"dequant {fmt} time {acc.time} packet {acc.packet}")
    consume(draw, b, w, "main", acc.time, acc.packet, "f32")


def factorisation(draw, n: int) -> tuple[list[int], list[int]]:
    p = draw(st.sampled_from(divisors(n)))
    rest = n // p
    t = draw(st.sampled_from(divisors(rest)))
    time = [x for x in (rest // t, t) if x > 1] if draw(st.booleans()) else ([rest] if rest > 1 else [])
    return time, [p]


WIRE_BITS = {**BITS, "i5": 8, "i9": 16}
"""Bits per element entering the Switch Engine (hardware.md §2.4)."""


def switch_ok(eng: str, packet, elem: str) -> bool:
    """Rule 9: a packet entering rngd.switch is a whole number of 8-byte words."""
    return eng != "rngd.switch" or (math.prod(packet) * WIRE_BITS[elem]) % 64 == 0


def consume(draw, b: Builder, v: str, ctx: str, time, packet, elem: str, allow_transpose: bool = True) -> None:
    t = stream(ctx, time, packet, elem)
    for eng in ("rngd.switch", "rngd.collect"):
        if draw(st.integers(0, 3)) == 0 and switch_ok(eng, packet, elem):
            w = b.val("s")
            b.emit(f"{w} = {eng} {v} : {t} -> {t}")
            v = w
    n = math.prod(time) * math.prod(packet)
    if allow_transpose and draw(st.integers(0, 4)) == 0:
        time, packet = factorisation(draw, n)
        t2 = stream(ctx, time, packet, elem)
        w = b.val("s")
        b.emit(f"{w} = rngd.transpose {v} : {t} -> {t2}")
        v, t = w, t2
    how = draw(st.sampled_from(["commit", "commit", "commit", "trf", "vrf"]))
    if how == "commit":
        shape = draw(st.sampled_from([list(time) + list(packet), [n]]))
        strides, offset = None, 0
        if draw(st.integers(0, 3)) == 0:  # a padded view
            strides, acc = [], 1
            for d in reversed(shape):
                strides.append(acc)
                acc *= d + draw(st.sampled_from([0, 1, 2]))
            strides = strides[::-1]
            offset = draw(st.sampled_from([0, 2, 8]))
        mt = memref(shape, elem, strides, offset)
        out = b.arg("o", mt)
        b.emit(f"rngd.commit {v}, {out} : {t}, {mt}")
        if BITS.get(elem, 0) >= 8 and draw(st.integers(0, 5)) == 0:
            # Fetch the committed tensor again (the hardware runs the programs
            # in order: this one reads what the commit wrote).
            base = b.place(footprint(shape, strides or row_major(shape), offset, BITS[elem]))
            last = shape[-1]
            pk = max(x for x in divisors(last) if x <= 256)
            rt = stream("main", shape[:-1] + [last // pk], [pk], elem)
            nd = len(shape) + 1
            coeffs = [[int(i == r) for i in range(nd)] for r in range(len(shape) - 1)]
            coeffs.append([0] * (nd - 2) + [pk, 1])
            amap = affine(coeffs, [0] * len(shape), nd)
            props = f"base = {base} : i64, map = {amap}"
            if pk == last:  # the default identity map
                rt = stream("main", shape[:-1], [last], elem)
                props = f"base = {base} : i64"
            w = b.val("s")
            b.emit(f"{w} = fetch.fetch {out} {{{props}}} : {mt} -> {rt}")
            r = b.val("vrf")
            b.emit(f"{r} = rngd.to_vrf {w} : {rt} -> !rngd.vrf<{elem}>")
            b.results.append((r, f"!rngd.vrf<{elem}>"))
            b.summary.append(f"refetch of the committed {mt}")
    else:
        rt = f"!rngd.{how}<{elem}>"
        w = b.val(how)
        b.emit(f"{w} = rngd.to_{how} {v} : {t} -> {rt}")
        b.results.append((w, rt))


@st.composite
def modules(draw, max_chains: int = 3) -> GenModule:
    """A random valid module (see the module docstring): usually one
    function, sometimes two (program names and tables are per module)."""
    texts, fns, summary = [], [], []
    for i in range(draw(st.sampled_from([1, 1, 1, 2]))):
        b = Builder(draw, f"k{i}")
        for _ in range(draw(st.integers(1, max_chains))):
            draw(chain(b))
        texts.append(b.text())
        fns.append(b.name)
        summary += [f"@{b.name}: {x}" for x in b.summary]
    return GenModule("\n".join(texts), fns, summary)
