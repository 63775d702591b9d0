"""Usage: same_seqbin.py [--ignore-names] [--keep-locs] A.bin B.bin

Prints ``same`` when the two seq.bin files hold the same tables, programs
and MANIFEST apart from each program's ``loc`` (the source location, which
names the input: a file, ``<stdin>``, or the re-parsed ``--emit=seq``
output), else ``differ`` and what differs.  Both files must have a MANIFEST.
``--ignore-names`` also ignores tensor and scalar names (upstream
``mlir-opt`` renumbers SSA names: ``%w`` comes back as ``%arg0``);
``--keep-locs`` compares the locs too.
"""

import dataclasses
import sys

from fetchc.seqbin import read


def without_locs(path, ignore_names, keep_locs):
    sb = read(open(path, "rb").read())
    m = sb.manifest
    if m is None:
        sys.exit(f"{path}: no MANIFEST")
    kernels = tuple(
        dataclasses.replace(
            k,
            programs=k.programs if keep_locs else tuple(dataclasses.replace(p, loc="") for p in k.programs),
            tensors=tuple(dataclasses.replace(t, name="") for t in k.tensors) if ignore_names else k.tensors,
            scalars=tuple(dataclasses.replace(s, name="") for s in k.scalars) if ignore_names else k.scalars,
        )
        for k in m.kernels
    )
    return dataclasses.replace(sb, manifest=dataclasses.replace(m, kernels=kernels))


args = sys.argv[1:]
ignore_names = "--ignore-names" in args
keep_locs = "--keep-locs" in args
paths = [a for a in args if not a.startswith("--")]
a, b = (without_locs(p, ignore_names, keep_locs) for p in paths)
if a == b:
    print("same")
else:
    what = [f for f in ("tables", "programs", "manifest") if getattr(a, f) != getattr(b, f)]
    print("differ:", ", ".join(what))
