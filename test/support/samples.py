"""Small inputs several test files share.

* :data:`DECODE`: a one-function kernel, ``@decode``, that fetches a
  ``64x16xf4E2M1FN`` memref at DM address 4096 in the main context and
  decodes it to ``f8E4M3FN`` (``fetch.convert``: a table lookup) into a
  committed ``64x16`` memref.  It compiles to one program.
* :func:`i8_program`: a hand-built ``seq.bin`` program (seqbin.md PROGRAMS)
  that reads 64 ``i8`` at a DM address as 4 packets of 16, copied or
  sign-extended to ``i32``.
"""

from __future__ import annotations

from fetchc.seqbin import Program
from fetchc.target import I8, I32

DECODE = """\
func.func @decode(%w: memref<64x16xf4E2M1FN>, %out: memref<64x16xf8E4M3FN>) {
  %s = fetch.fetch %w {base = 4096 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  rngd.commit %d, %out : !fetch.stream<main, [64], [16], f8E4M3FN>, memref<64x16xf8E4M3FN>
  func.return
}
"""


def i8_program(name: str, base: int, cast: bool = False) -> Program:
    """A program named ``name`` reading 64 ``i8`` at DM byte address
    ``base`` as 4 packets of 16 (main context, no table): copied (64 bytes
    out, ``i8``) or, with ``cast``, sign-extended to ``i32`` (cast code 1,
    256 bytes out)."""
    return Program(
        name=name, unit=0, in_dtype=I8, out_dtype=I32 if cast else I8, base=base, packet_size=16,
        fetch_size=8 if cast else 16, limits=(64,), strides=(1,), stages=2 if cast else 0, table=None,
        type_conversion=1 if cast else None, zero_point0=0, num_zero_points=0, zp_mode=0,
        flit_count=2 if cast else 1, words_per_packet=2 if cast else 1,
    )  # fmt: skip
