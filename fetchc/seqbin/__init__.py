"""``seq.bin``, the fetch-sequencer configuration file (seqbin.md).

``fetchc.seqbin`` re-exports the content model, the writer, the validating
reader and the disassembler; :mod:`fetchc.seqbin.emit` turns a module lowered
to ``fetch_seq`` into a :class:`SeqBin`.
"""

from fetchc.seqbin.format import *  # noqa: F401,F403
from fetchc.seqbin.format import __all__  # noqa: F401
