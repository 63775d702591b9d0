"""The RNGD target model: every hardware fact fetchc relies on.

``fetchc.target`` re-exports :mod:`fetchc.target.facts` (element types and
codes, adapter-stage tables, sequencer limits, lookup-table contents,
block-scaled formats, conversion chains).  The sequencer derivation is
:mod:`fetchc.target.sequencer`, the affine/layout maths
:mod:`fetchc.target.layout`; RNGD's float arithmetic and the array encodings
of the golden model are :mod:`fetchc.target.numerics` and
:mod:`fetchc.target.encoding` (those two import numpy).
"""

from fetchc.target.facts import *  # noqa: F403  (the package is facts' public API)
from fetchc.target.facts import __all__  # noqa: F401  (re-exported with it)
