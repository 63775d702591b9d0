"""Compatibility path: ``fetchc.emit`` is :mod:`fetchc.seqbin.emit`."""

from fetchc.seqbin.emit import emit_seqbin, module_to_seqbin  # noqa: F401

__all__ = ["emit_seqbin", "module_to_seqbin"]
