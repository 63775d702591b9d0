"""``seq.bin``, the fetch-sequencer configuration file (seqbin.md).

``fetchc.seqbin`` re-exports the content model (:mod:`.format`), the
MANIFEST model (:mod:`.manifest`), the writer (:mod:`.writer`), the
validating reader (:mod:`.reader`) and the disassembler (:mod:`.disasm`,
which imports numpy lazily); :mod:`fetchc.seqbin.emit` turns a module
lowered to ``fetch_seq`` into a :class:`SeqBin`.
"""

from fetchc.seqbin.format import *  # noqa: F403  (the package re-exports its modules' __all__)
from fetchc.seqbin.format import __all__ as _format_all
from fetchc.seqbin.manifest import *  # noqa: F403  (the package re-exports its modules' __all__)
from fetchc.seqbin.manifest import __all__ as _manifest_all
from fetchc.seqbin.reader import *  # noqa: F403  (the package re-exports its modules' __all__)
from fetchc.seqbin.reader import __all__ as _reader_all
from fetchc.seqbin.writer import *  # noqa: F403  (the package re-exports its modules' __all__)
from fetchc.seqbin.writer import __all__ as _writer_all

_DISASM = (
    "disassemble",
    "to_json",
    "table_matches_reference",
    "format_value",
    "table_cells",
    "sequencer_text",
    "stage_names",
)
"""The disassembler's names, imported on first use: compiling never needs them."""

__all__ = [*_format_all, *_manifest_all, *_writer_all, *_reader_all, *_DISASM]


def __getattr__(name: str):
    if name in _DISASM:
        from fetchc.seqbin import disasm

        return getattr(disasm, name)
    raise AttributeError(f"module 'fetchc.seqbin' has no attribute {name!r}")
