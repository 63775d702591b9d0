"""Usage: same_seqbin.py A.bin B.bin

Prints ``same`` when the two seq.bin files hold the same tables, programs
and MANIFEST apart from each program's ``loc`` (the source location, which
names the input: a file, ``<stdin>``, or the re-parsed ``--emit=seq``
output), else ``differ`` and what differs.  Both files must have a MANIFEST.
"""

import dataclasses
import sys

from fetchc.seqbin import read


def without_locs(path):
    sb = read(open(path, "rb").read())
    m = sb.manifest
    if m is None:
        sys.exit(f"{path}: no MANIFEST")
    kernels = tuple(
        dataclasses.replace(
            k,
            programs=tuple(dataclasses.replace(p, loc="") for p in k.programs),
        )
        for k in m.kernels
    )
    return dataclasses.replace(sb, manifest=dataclasses.replace(m, kernels=kernels))


args = sys.argv[1:]
a, b = (without_locs(p) for p in args)
if a == b:
    print("same")
else:
    what = [f for f in ("tables", "programs", "manifest") if getattr(a, f) != getattr(b, f)]
    print("differ:", ", ".join(what))
