"""Compatibility path: ``fetchc.sequencer`` is :mod:`fetchc.target.sequencer`."""

from fetchc.target.sequencer import *  # noqa: F401,F403
from fetchc.target.sequencer import __all__  # noqa: F401
