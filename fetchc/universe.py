"""The ``xdsl.universe`` entry point: lets a plain ``xdsl-opt`` load the
``fetch``, ``rngd`` and ``fetch_seq`` dialects and run fetchc's passes."""

from xdsl.universe import Universe

from fetchc.frontend.context import fetchc_dialects, fetchc_passes

FETCHC_UNIVERSE = Universe(all_dialects=fetchc_dialects(), all_passes=fetchc_passes())
