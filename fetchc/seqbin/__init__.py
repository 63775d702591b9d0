"""``seq.bin``, the fetch-sequencer configuration file (seqbin.md).

``fetchc.seqbin`` re-exports the content model (:mod:`.format`), the
MANIFEST model (:mod:`.manifest`), the writer (:mod:`.writer`), the
validating reader (:mod:`.reader`) and the disassembler (:mod:`.disasm`,
which imports numpy lazily); :mod:`fetchc.seqbin.emit` turns a module
lowered to ``fetch_seq`` into a :class:`SeqBin`.
"""

from fetchc.seqbin.disasm import *  # noqa: F401,F403
from fetchc.seqbin.disasm import __all__ as _disasm_all
from fetchc.seqbin.format import *  # noqa: F401,F403
from fetchc.seqbin.format import __all__ as _format_all
from fetchc.seqbin.manifest import *  # noqa: F401,F403
from fetchc.seqbin.manifest import __all__ as _manifest_all
from fetchc.seqbin.reader import *  # noqa: F401,F403
from fetchc.seqbin.reader import __all__ as _reader_all
from fetchc.seqbin.writer import *  # noqa: F401,F403
from fetchc.seqbin.writer import __all__ as _writer_all

__all__ = [*_format_all, *_manifest_all, *_writer_all, *_reader_all, *_disasm_all]
