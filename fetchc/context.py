"""Compatibility path: ``fetchc.context`` is :mod:`fetchc.frontend.context`."""

from fetchc.frontend.context import make_context, all_passes, fetchc_dialects, fetchc_passes  # noqa: F401

__all__ = ["make_context", "all_passes", "fetchc_dialects", "fetchc_passes"]
