"""Compatibility path: ``fetchc.parsing`` is :mod:`fetchc.frontend.parsing`."""

from fetchc.frontend.parsing import parse_module, split_input_file, decode_source, SPLIT_MARKER  # noqa: F401

__all__ = ["parse_module", "split_input_file", "decode_source", "SPLIT_MARKER"]
