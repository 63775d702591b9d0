#!/usr/bin/env python3
"""Compare the cost of the NVFP4 split in its three forms (issue 25, item 7).

Compiles the Gemma-style NVFP4 MLP weight decode (four rows of 3840 codes per
slice, 256 slices) as

* ``auto``: ``examples/gemma_nvfp4_mlp_decode.mlir``, a ``fetch.dequant``
  that ``fetch-split-scaling`` lowers (block scales staged through the sub
  Fetch Unit into the VRF, hardware.md §4a);
* ``lockstep``: ``examples/by_hand/gemma_nvfp4_mlp_decode_lockstep.mlir``, the split
  written by hand with the block scales fetched on the main Fetch Unit in
  lockstep with the codes (what the pass produced before);
* ``staged``: ``examples/by_hand/gemma_nvfp4_mlp_decode_staged.mlir``, the staged
  form written by hand;

and prints, per form, each program's unit, reads, flits and cycles and the
kernel's cycles (main and sub sums), program count and table loads, **as the
MANIFEST of the compiled seq.bin states them** (seqbin.md 1.3, "Cost":
``reads``, ``flits``, ``cycles`` per program; ``cost`` per kernel with
``cycles``, ``main_cycles``, ``sub_cycles``, ``programs``, ``table_loads``,
``table_bytes``; hardware.md §6).  It reads the MANIFEST's JSON from the
seq.bin bytes itself (seqbin.md: the section table after the 32-byte header,
MANIFEST is kind 4), so it needs nothing of fetchc's MANIFEST model beyond
the spec's field names, and stops with a clear error when a field is absent
(a fetchc that writes seq.bin 1.2 has no cost fields).

``test/pytest/test_vrf_split.py`` computes the same estimate itself from the
program records and asserts the issue's targets: ``auto`` costs no more than
``staged``, no main program reads the block scales, and ``auto`` costs at most
0.8 × ``lockstep`` (1920 against 2400 cycles per slice).

Usage::

    python tools/bench_split.py [--json]
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FORMS = {
    "auto": "gemma_nvfp4_mlp_decode",
    "lockstep": "by_hand/gemma_nvfp4_mlp_decode_lockstep",
    "staged": "by_hand/gemma_nvfp4_mlp_decode_staged",
}
PROGRAM_FIELDS = ("reads", "flits", "cycles")
KERNEL_FIELDS = ("cycles", "main_cycles", "sub_cycles", "programs", "table_loads", "table_bytes")
MANIFEST_KIND = 4


class CostMissing(Exception):
    """The MANIFEST lacks a field of seqbin.md 1.3's cost estimate."""


def manifest_json(data: bytes) -> dict:
    """The MANIFEST section of a seq.bin, parsed (seqbin.md "Layout": a
    32-byte header whose word at offset 12 is the section count, then
    16-byte rows kind, offset, size, count)."""
    (count,) = struct.unpack_from("<I", data, 12)
    for i in range(count):
        kind, offset, size, _ = struct.unpack_from("<IIII", data, 32 + 16 * i)
        if kind == MANIFEST_KIND:
            return json.loads(data[offset : offset + size].decode("utf-8"))
    raise CostMissing("the seq.bin has no MANIFEST section (a version 1.0 file)")


def _field(d: dict, name: str, where: str):
    if name not in d:
        raise CostMissing(
            f"{where} has no '{name}': this fetchc does not write the cost estimate of seqbin.md 1.3 "
            f"(MANIFEST 'reads', 'flits', 'cycles' per program and 'cost' per kernel; hardware.md §6)"
        )
    return d[name]


def form_cost(form: str) -> dict:
    """Compile one form and collect its cost from the MANIFEST."""
    import fetchc

    path = REPO / "examples" / f"{FORMS[form]}.mlir"
    result = fetchc.compile(path.read_text(), filename=str(path.relative_to(REPO)))
    man = manifest_json(result.seq_bin)
    (kernel,) = man["kernels"]
    cost = _field(kernel, "cost", f"kernel '{kernel.get('name')}' of the MANIFEST")
    programs = []
    for kp in kernel["programs"]:
        rec = result.programs[kp["index"]]
        where = f"program {kp['index']} of the MANIFEST"
        tensor = kernel["tensors"][kp["tensor"]]["name"]
        programs.append(
            {"name": rec.name, "unit": "sub" if rec.unit else "main", "tensor": tensor,
             **{f: _field(kp, f, where) for f in PROGRAM_FIELDS}}
        )  # fmt: skip
    return {"form": form, "kernel": kernel["name"], "per_program": programs,
            **{f: _field(cost, f, f"the 'cost' of kernel '{kernel['name']}'") for f in KERNEL_FIELDS}}  # fmt: skip


def render(rows: list[dict]) -> str:
    out = []
    for r in rows:
        out.append(f"{r['form']}: @{r['kernel']}")
        for p in r["per_program"]:
            out.append(
                f"  {p['name']:<24} {p['unit']:<4} {p['tensor']:<7} reads {p['reads']:>6}  flits {p['flits']:>6}"
                f"  cycles {p['cycles']:>6}"
            )
        out.append(
            f"  kernel: {r['cycles']} cycles (main {r['main_cycles']}, sub {r['sub_cycles']}), {r['programs']} "
            f"programs, {r['table_loads']} table loads ({r['table_bytes']} bytes)"
        )
    base = {r["form"]: r["cycles"] for r in rows}
    if "auto" in base and "lockstep" in base and base["lockstep"]:
        out.append(f"auto / lockstep: {base['auto'] / base['lockstep']:.2f} (target <= 0.80)")
    if "auto" in base and "staged" in base:
        out.append(f"auto - staged: {base['auto'] - base['staged']:+d} cycles (target <= 0)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print the collected figures as JSON")
    args = ap.parse_args(argv)
    try:
        rows = [form_cost(f) for f in FORMS]
    except CostMissing as e:
        print(f"bench_split: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(rows, indent=1) if args.json else render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
