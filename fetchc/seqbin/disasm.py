"""``fetchc dis``: a ``seq.bin`` as text (:func:`disassemble`) and as JSON
(:func:`to_json`).  The only module of the package that imports numpy, and
only inside :func:`format_value` (the compile path never formats values).

Text format
-----------

One ``label: value`` per line, fixed labels, two-space indentation under each
table/program/kernel; horizontal alignment padding of the table grids may
vary (FileCheck ignores it).  Every line is shorter than 100 columns but
those that quote a name or location from the file or a sequencer of many
entries::

    seq.bin version 1.2, 1120 bytes, crc32 0x1234abcd
    sections: 4
    section TABLES: offset 96, size 536, count 1
    section PROGRAMS: offset 632, size 128, count 1
    section STRINGS: offset 760, size 9, count 1
    section MANIFEST: offset 776, size 344, count 1
    tables: 1
    table 0: f4E2M1FN -> f8E4M3FN, paired
      layout: 8 keys a line, key = label + column; cell = (lo,hi), the entry's low and high byte
       key:      +0      +1  ...      +7
      0x00:   (0,0) (0.5,0)  ...   (6,0)
      ...                           (32 lines, "0x00:" .. "0xf8:")
    programs: 1
    program 0: "decode/0"
      unit: main
      in_dtype: f4E2M1FN
      out_dtype: f32
      base: 0x60000 (393216)
      sequencer: [65536 : 1] : 16
      fetch_size: 4
      stages: table_lookup, type_conversion
      table: 0
      type_conversion: 3 (f8E4M3FN -> f32)
      zero_point: off
      flit_count: 2
      words_per_packet: 2
      kernel: decode
      tensor: w (arg 0)
      stream: time [4096] packet [16]
      loc: decode.mlir:3:8
    manifest: producer "fetchc 0.1.0"
    kernels: 1
    kernel 0: decode
      tensors: 2
      tensor 0: w (arg 0)
        dtype: f4E2M1FN
        shape: [4096, 16]
        layout: strides [16, 1], offset 0
        dm_base: 0x60000 (393216)
        bytes: 32768
        use: read
      tensor 1: out (arg 1)
        ...
        use: committed
      scalars: 0
      program indices: 0

* A table grid has 8 keys a line (4, 2 or 1 when 8 of its cells would make a
  line of 100 columns or more: only a paired table with unusual entries), each
  line labelled with its first key in hex; a ``key:`` line of column offsets
  heads it.  A non-paired table's header line ends in ``non-paired`` and its
  layout line reads ``layout: 8 keys a line, key = label + column``; each
  cell is one decoded value.
* A function table (seqbin.md 1.2): ``table N: <function>, <key> -> bf16``,
  then one ``name: value`` line per TABLES header field of
  :data:`~fetchc.seqbin.fields.TABLE_LAYOUT` (``function: gelu (3)``,
  ``entries``, ``scale``, ``zero_point``, ...), then the 256 values as a
  grid, or for a 65536-entry table five ``sample: f(x) = value`` lines (the
  five keys around zero) and ``(all entries: fetchc dis --json)``.
* Program lines follow :data:`~fetchc.seqbin.fields.PROGRAM_LAYOUT`, one per
  field in record order; ``sequencer`` stands for ``packet_size``,
  ``num_entries``, ``limits`` and ``strides``, ``zero_point`` for the three
  zero-point words.
* A table whose entries differ from ``target.lookup_table`` gets
  `` (entries differ from the reference conversion)`` at the end of its header
  line.
* Values: the shortest decimal that reads back as the same value of the
  table's output type (:func:`format_value`: at most 4 significant digits for
  ``bf16``; the exact value when that is as short), a trailing ``.0`` dropped (``1``, ``0.5``, ``-0``, ``448``,
  ``0.00098``, ``-4.97e-15``), ``inf``/``-inf``, ``nan``/``-nan`` (sign bit).
  Header fields and sample keys (``scale``, ``f(x)``) are float64 values
  printed exactly, as Python's ``repr``.
* Program name: a JSON string literal, or ``(unnamed)`` for ``0xFFFFFFFF``.
* ``stages: none``, ``table: none``, ``type_conversion: none`` when off;
  ``zero_point: off`` or ``zero_point: <zero_point0> (i8 -> i9)``.
* The sequencer line is ``hardware.md`` §3 notation:
  ``[limit_0 : stride_0, ..., limit_n-1 : stride_n-1] : packet_size``.
* MANIFEST (version 1.1): the last four lines of each program block
  (``kernel:``, ``tensor: <name> (arg N)`` or ``(scratch)``, ``stream: time
  [..] packet [..]``, ``loc:``) and the ``manifest:`` block at the end:
  per kernel its tensors (``dtype``, ``shape``, ``layout: strides [..],
  offset N`` in elements, ``dm_base`` in hex and decimal, ``bytes``, ``use:``
  ``read``, ``committed``, both comma-separated, or ``none``), its scalars
  (``scalar N: <name> (arg N)`` then ``dtype:``) and ``program indices:``
  (the indices of its ``program N`` records, comma-separated, or ``none``).  A file without a MANIFEST
  (version 1.0) has none of these lines.
* Names (kernels, tensors, scalars) are written bare when they consist of
  letters, digits and ``_ $ . -``, else as a JSON string literal; ``loc`` is
  bare when printable without leading or trailing spaces, else a JSON string.
  In these literals the characters a terminal would act on are escaped
  (:func:`fetchc.escape.printable`: C0 controls as JSON's ``\\u001b``, C1
  controls as ``\\x9b``, bidi overrides as ``\\u202e``).

JSON (:func:`to_json`): ``version``, ``file_size``, ``crc32``, ``sections``,
``tables`` (every header field by the field table, ``matches_reference``,
``entries`` as integers), ``programs`` (every record field by the field
table), then ``manifest``: the MANIFEST document as stored (keys sorted), or
``null``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import fetchc.target.functions  # noqa: F401  (target.functions)
from fetchc import target
from fetchc.escape import printable
from fetchc.seqbin.fields import PROGRAM_LAYOUT, TABLE_LAYOUT, Field
from fetchc.seqbin.format import STAGE_NAMES, UNIT_NAMES, FileInfo, Program, SeqBin, Table
from fetchc.seqbin.manifest import Kernel, Manifest, Tensor
from fetchc.seqbin.reader import read_info
from fetchc.seqbin.writer import write
from fetchc.target import CAST_BY_CODE, STAGE_ZERO_POINT, ZP_BY_MODE, ElementType

__all__ = ["disassemble", "to_json", "table_matches_reference", "format_value", "table_cells", "sequencer_text",
           "stage_names"]  # fmt: skip


def table_matches_reference(t: Table) -> bool:
    """Whether ``t``'s entries equal what its fields define: the reference
    conversion of its pair (``target.table_entries``), or the function's
    entries (``target.functions.function_entries``); ``False`` when the
    fields define no table."""
    ref = t.reference()
    return ref is not None and bytes(t.entries) == ref


def format_value(bits: int, t: ElementType) -> str:
    """Decode the encoding ``bits`` of float type ``t`` (4, 8 or 16 bits) and
    format it: the shortest decimal that reads back as the same value of
    ``t`` (at most 4 significant digits for ``bf16``, 3 for the 8-bit
    floats; the exact value when that is as short: ``32768``, not
    ``32800``), in Python's float notation without a trailing ``.0``
    (``0.00098``, ``-4.97e-15``, ``448``, ``-0``), ``inf``/``-inf``,
    ``nan``/``-nan`` (sign bit)."""
    import numpy as np  # disassembly only: the compile path never formats values

    raw = np.array([bits], dtype=np.uint8 if t.bits <= 8 else np.uint16)
    v = float(raw.view(t.np_dtype)[0])
    if math.isnan(v):
        return "-nan" if bits >> (max(8, t.bits) - 1) & 1 else "nan"
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    exact = format_float(v)
    for digits in range(1, 18):
        text = f"{v:.{digits}g}"
        if np.array([float(text)]).astype(t.np_dtype).view(raw.dtype)[0] == bits:
            break
    # the exact value if it is as short, else the digits in repr's notation or in %g's (1.148e+10), the shorter
    return min((exact, format_float(float(text)), text), key=len)


def table_cells(t: Table) -> list[str]:
    """The 256 decoded cells of a table, by key: ``"(lo,hi)"`` for a paired
    table, one value for a non-paired one."""
    vals = t.values()
    if t.paired:
        return [f"({format_value(v & 0xFF, t.out_dtype)},{format_value(v >> 8, t.out_dtype)})" for v in vals]
    return [format_value(v, t.out_dtype) for v in vals]


def sequencer_text(p: Program) -> str:
    """``[limit : stride, ...] : packet_size`` (hardware.md §3 notation)."""
    return "[" + ", ".join(f"{n} : {s}" for n, s in zip(p.limits, p.strides, strict=False)) + f"] : {p.packet_size}"


def stage_names(stages: int) -> list[str]:
    """Names of the stage bits set in ``stages`` (PROGRAMS word 24), in
    pipeline order (hardware.md §2)."""
    return [name for bit, name in STAGE_NAMES if stages & bit]


def _zp_text(p: Program) -> str:
    if not p.stages & STAGE_ZERO_POINT:
        return "off"
    r = ZP_BY_MODE.get(p.zp_mode)
    return f"{p.zero_point0} ({r.source} -> {r.result})" if r else f"{p.zero_point0} (zp_mode {p.zp_mode})"


def _cast_text(code: int | None) -> str:
    if code is None:
        return "none"
    pair = CAST_BY_CODE.get(code)
    return f"{code} ({pair[0]} -> {pair[1]})" if pair else str(code)


def _resolve(sb: SeqBin | bytes) -> tuple[SeqBin, FileInfo]:
    if isinstance(sb, SeqBin):
        return read_info(write(sb))
    return read_info(sb)


_BARE_NAME = re.compile(r"[A-Za-z0-9_$.\-]+")


def _quoted(s: str) -> str:
    """A name from the file as a double-quoted JSON string literal, with the
    characters a terminal would act on escaped (:func:`fetchc.escape.printable`)."""
    return printable(json.dumps(s, ensure_ascii=False))


def _name(s: str) -> str:
    return s if _BARE_NAME.fullmatch(s) else _quoted(s)


def _loc(s: str) -> str:
    return s if s and s.isprintable() and s == s.strip() else _quoted(s)


def _dims(d: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, d)) + "]"


def disassemble(sb: SeqBin | bytes) -> str:
    """Human-readable text of a ``seq.bin`` (format: module docstring).

    Given bytes, the header lines describe that file (its version, size, CRC,
    section layout); given a :class:`SeqBin`, they describe ``write(sb)``.
    Raises :class:`SeqBinError` for an invalid file or content."""
    sb, info = _resolve(sb)
    out = [
        f"seq.bin version {info.version_major}.{info.version_minor}, {info.file_size} bytes, crc32 0x{info.crc32:08x}",
        f"sections: {len(info.sections)}",
    ]
    out += [f"section {s.kind_name}: offset {s.offset}, size {s.size}, count {s.count}" for s in info.sections]
    out.append(f"tables: {len(sb.tables)}")
    for i, t in enumerate(sb.tables):
        out += _table_lines(i, t)
    out.append(f"programs: {len(sb.programs)}")
    for i, p in enumerate(sb.programs):
        out += _program_lines(i, p, sb.manifest)
    if sb.manifest is not None:
        out += _manifest_lines(sb.manifest)
    return "\n".join(out) + "\n"


def _table_lines(i: int, t: Table) -> list[str]:
    mark = "" if table_matches_reference(t) else " (entries differ from the reference conversion)"
    if t.function is not None:
        return _function_table_lines(i, t, mark)
    cells = table_cells(t)
    out = [f"table {i}: {t.in_dtype} -> {t.out_dtype}, {'paired' if t.paired else 'non-paired'}{mark}"]
    return out + _grid(cells, t.paired)


GRID_COLUMNS = 100
"""Every line of a table grid is shorter than this (docs/seqbin.md, ``fetchc dis``)."""


def _grid(cells: list[str], paired: bool) -> list[str]:
    """256 cells, by key, 8 keys a line (4, 2 or 1 when 8 cells would make a
    line of :data:`GRID_COLUMNS` or more): the ``layout:`` line, a ``key:``
    line of column offsets, then one line per row, labelled with its first
    key in hex (``0x08:``)."""
    for per_line in (8, 4, 2, 1):
        widths = [max(len(cells[k]) for k in range(c, len(cells), per_line)) for c in range(per_line)]
        if 7 + sum(w + 1 for w in widths) < GRID_COLUMNS:
            break
    layout = f"  layout: {per_line} keys a line, key = label + column"
    out = [layout + ("; cell = (lo,hi), the entry's low and high byte" if paired else "")]
    out.append("   key:" + "".join(f" {'+' + str(c):>{widths[c]}}" for c in range(per_line)))
    for row in range(0, len(cells), per_line):
        out.append(f"  0x{row:02x}:" + "".join(f" {cells[row + c]:>{widths[c]}}" for c in range(per_line)))
    return out


def _header_value(t: Table, name: str) -> str:
    v = getattr(t, name)
    if name == "function":
        return f"{v} ({target.functions.FUNCTIONS[v].code})"
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return format_float(v)
    return str(v)


def _function_table_lines(i: int, t: Table, mark: str) -> list[str]:
    """A function table: every header field (:data:`TABLE_LAYOUT`), then the
    256 values as a grid (1-byte keys), or for 2-byte keys only a sample
    (``--json`` lists all 65536)."""
    out = [f"table {i}: {t.function}, {t.in_dtype} -> {t.out_dtype}{mark}"]
    for f in TABLE_LAYOUT.fields:
        if f.name == "entries":
            out.append(f"  entries: {len(t.entries) // t.entry_bytes}")
        elif f.text and f.model:
            out.append(f"  {f.name}: {_header_value(t, f.model)}")
    vals = t.values()
    if len(vals) == 256:
        cells = [format_value(v, t.out_dtype) for v in vals]
        return out + _grid(cells, False)
    for x in (-2, -1, 0, 1, 2):
        k = _key_of(t, x)
        key = format_float(target.functions.key_value(t.in_dtype, k, t.scale, t.zero_point))
        out.append(f"  sample: f({key}) = {format_value(vals[k], t.out_dtype)}")
    return out + ["  (all entries: fetchc dis --json)"]


def _key_of(t: Table, step: int) -> int:
    """The 2-byte key ``step`` steps from zero: ``bf16(step)`` for a bf16 key,
    ``zero_point + step`` for an i16 key (wrapped to 16 bits)."""
    if t.in_dtype.is_float:
        return target.functions.f32_bits(float(step)) >> 16
    return (t.zero_point + step) & 0xFFFF


def format_float(v: float) -> str:
    """Shortest round-trip decimal of a float without a trailing ``.0``."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    r = repr(v)
    return r[:-2] if r.endswith(".0") else r


_PROGRAM_TEXT: dict[str, Callable[[Program, Field], str | None]] = {
    "plain": lambda p, f: f"{f.name}: {getattr(p, f.model)}",
    "unit": lambda p, f: f"unit: {UNIT_NAMES[p.unit]}",
    "address": lambda p, f: f"{f.name}: 0x{getattr(p, f.model):x} ({getattr(p, f.model)})",
    "sequencer": lambda p, f: f"sequencer: {sequencer_text(p)}",
    "stages": lambda p, f: f"stages: {', '.join(stage_names(p.stages)) or 'none'}",
    "index": lambda p, f: f"{f.model}: {'none' if getattr(p, f.model) is None else getattr(p, f.model)}",
    "cast": lambda p, f: f"{f.name}: {_cast_text(getattr(p, f.model))}",
    "zero_point": lambda p, f: f"zero_point: {_zp_text(p)}",
}
"""How ``fetchc dis`` shows a PROGRAMS field, by :attr:`Field.text`."""


def _program_lines(i: int, p: Program, m: Manifest | None) -> list[str]:
    name = "(unnamed)" if p.name is None else _quoted(p.name)
    out = [f"program {i}: {name}"]
    out += [f"  {_PROGRAM_TEXT[f.text](p, f)}" for f in PROGRAM_LAYOUT.fields if f.text]
    found = m.program(i) if m is not None else None
    if found is not None:
        k, kp = found
        out += [
            f"  kernel: {_name(k.name)}",
            f"  tensor: {_tensor_ref(k, kp.tensor)}",
            f"  stream: time {_dims(kp.time)} packet {_dims(kp.packet)}",
            f"  loc: {_loc(kp.loc)}",
        ]
    return out


def _tensor_ref(k: Kernel, i: int) -> str:
    t = k.tensors[i]
    return f"{_name(t.name)} ({'scratch' if t.arg is None else f'arg {t.arg}'})"


def _shape_text(t: Tensor, slices: int) -> str:
    """One slice's shape, and the whole tensor's beside it (ir.md §2a)."""
    text = _dims(t.shape)
    if t.slice_dim is not None:
        return f"{text} per slice; whole {_dims(t.whole_shape(slices))}, split along dim {t.slice_dim}"
    if slices > 1:
        return f"{text}, replicated on every slice"
    return text


def _manifest_lines(m: Manifest) -> list[str]:
    out = [f"manifest: producer {_quoted(m.producer)}", f"kernels: {len(m.kernels)}"]
    for ki, k in enumerate(m.kernels):
        out += [f"kernel {ki}: {_name(k.name)}", f"  slices: {k.slices}", f"  tensors: {len(k.tensors)}"]
        for ti, t in enumerate(k.tensors):
            use = [u for u, on in (("read", t.read), ("committed", t.committed)) if on]
            out += [
                f"  tensor {ti}: {_tensor_ref(k, ti)}",
                f"    dtype: {t.dtype}",
                f"    shape: {_shape_text(t, k.slices)}",
                f"    layout: strides {_dims(t.strides)}, offset {t.offset}",
                f"    dm_base: 0x{t.dm_base:x} ({t.dm_base})",
                f"    bytes: {t.bytes}",
                f"    use: {', '.join(use) if use else 'none'}",
            ]
        out.append(f"  scalars: {len(k.scalars)}")
        for si, s in enumerate(k.scalars):
            out += [f"  scalar {si}: {_name(s.name)} (arg {s.arg})", f"    dtype: {s.dtype}"]
        out.append(f"  program indices: {', '.join(str(p.index) for p in k.programs) or 'none'}")
    return out


def to_json(sb: SeqBin | bytes) -> dict[str, Any]:
    """A ``json.dumps``-able dict of a ``seq.bin`` for ``fetchc dis --json``;
    keys in a fixed order (module docstring).  Header facts as in
    :func:`disassemble`.  Raises :class:`SeqBinError` for an invalid file or
    content."""
    sb, info = _resolve(sb)
    return {
        "version": f"{info.version_major}.{info.version_minor}",
        "file_size": info.file_size,
        "crc32": info.crc32,
        "sections": [
            {"kind": s.kind_name, "offset": s.offset, "size": s.size, "count": s.count} for s in info.sections
        ],
        "tables": [_table_json(i, t) for i, t in enumerate(sb.tables)],
        "programs": [_program_json(i, p) for i, p in enumerate(sb.programs)],
        "manifest": None if sb.manifest is None else sb.manifest.to_dict(),
    }


def _json_value(f: Field, v: Any) -> Any:
    if isinstance(v, ElementType):
        return v.name
    if isinstance(v, tuple):
        return list(v)
    if f.name == "unit":
        return UNIT_NAMES[v]
    if f.name == "stages":
        return stage_names(v)
    return v


def _program_json(i: int, p: Program) -> dict[str, Any]:
    """Every PROGRAMS field by its model name (``table`` for word 25), with
    ``num_entries`` and ``sequencer`` after ``strides``."""
    out: dict[str, Any] = {"index": i, "name": p.name}
    for f in PROGRAM_LAYOUT.fields:
        if f.name == "num_entries":
            out["num_entries"] = p.num_entries
        elif f.model:
            out[f.model] = _json_value(f, getattr(p, f.model))
        if f.name == "strides":
            out["sequencer"] = sequencer_text(p)
    return out


def _table_json(i: int, t: Table) -> dict[str, Any]:
    """Every TABLES header field (``function``: its name, ``null`` for a
    decode table) and ``entries``: the entry values."""
    out: dict[str, Any] = {"index": i}
    for f in TABLE_LAYOUT.fields:
        if f.model:
            out[f.model] = _json_value(f, getattr(t, f.model))
    out["matches_reference"] = table_matches_reference(t)
    out["entries"] = t.values()
    return out
